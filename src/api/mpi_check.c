/* courier run --check (docs/check.md): the switch, point-to-point type
 * signatures and the report of what a program leaves at MPI_Finalize. The
 * collectives' agreement check is in mpi_check_coll.c.
 *
 * A type signature is a polynomial hash, modulo 2^64, of the sequence of basic
 * types a buffer holds in type-map order: h(x1..xn) = sum xi * B^(n-i). Two
 * sequences concatenate as h(a)*B^|b| + h(b), so a datatype keeps its
 * instance's (hash, B^length) and the signature of count instances, or of the
 * first bytes of a receive, costs O(log count) multiplications; a derived
 * type's is made once, from its envelope (mpi_type_enum), and cached in it.
 * Equal sequences hash equal whatever the types that spell them: contiguous(2,
 * MPI_INT) sends what 2 x MPI_INT receives, as MPI's type matching says.
 *
 * Invariants:
 *  - a message's check value (the engine carries it opaque: cr_status.sig) is
 *    the top 52 bits of its hash, the send call (bits 8..11) and the sender's
 *    basic type (bits 0..7: a predefined type's index, 0 for a mixed one), so
 *    it is never 0; 0 means "nothing to check": a send of MPI_BYTE/MPI_PACKED;
 *  - a receive compares the message with the prefix of its own type map the
 *    message fills (a receive longer than the message is allowed); a partial
 *    instance of a mixed type, a truncated message and MPI_BYTE/MPI_PACKED
 *    receives are not compared (docs/check.md: what it cannot see);
 *  - a check error ends the rank with MPI_CHECK_EXIT after one report. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"
#include "mpi_p2p.h"

/* ---- the switch ------------------------------------------------------------------ */

static const struct {
    const char *word;
    unsigned bit;
} words[] = {
    {"types", MPI_CHK_TYPES},
    {"coll", MPI_CHK_COLL},
    {"leaks", MPI_CHK_LEAKS},
    {"sync", MPI_CHK_SYNC},
};

void mpi_check_init(cr_job *job)
{
    const char *v = getenv("COURIER_CHECK");
    if (!v || !*v || !strcmp(v, "0")) return;
    unsigned on = 0;
    if (!strcmp(v, "1")) { /* --check: every check that keeps the protocol */
        on = MPI_CHK_TYPES | MPI_CHK_COLL | MPI_CHK_LEAKS;
    } else if (!strcmp(v, "all")) { /* and sync, which makes every standard send wait */
        on = MPI_CHK_TYPES | MPI_CHK_COLL | MPI_CHK_LEAKS | MPI_CHK_SYNC;
    } else {
        for (const char *p = v; *p;) {
            size_t n = strcspn(p, ","), k = 0;
            while (k < sizeof words / sizeof words[0] &&
                   (strlen(words[k].word) != n || strncmp(words[k].word, p, n)))
                k++;
            if (k == sizeof words / sizeof words[0])
                cr_fatal(job, "MPI_Init",
                         "COURIER_CHECK=%s: give 1, all, or a comma list of types, coll, leaks, "
                         "sync (docs/check.md)",
                         v);
            on |= words[k].bit;
            p += n + (p[n] == ',');
        }
    }
    mpi_chk *k = calloc(1, sizeof *k);
    if (!k) cr_fatal(job, "MPI_Init", "out of memory for the checks' state");
    k->on = on;
    job->mpi->chk = k;
}

/* ---- signatures -------------------------------------------------------------------- */

#define SIG_B 0x9e3779b97f4a7c15ull /* the base: odd, so B^n never vanishes mod 2^64 */
#define SIG_LOW MPI_CHK_SIG_LOW

typedef struct seq {
    uint64_t h, p; /* hash, B^length */
} seq;

static seq cat(seq a, seq b)
{
    return (seq){a.h * b.p + b.h, a.p * b.p};
}

/* a repeated k times (the copies are equal, so the order of the halves is free). */
static seq rep(seq a, size_t k)
{
    seq r = {0, 1};
    for (; k; k >>= 1, a = cat(a, a))
        if (k & 1) r = cat(r, a);
    return r;
}

/* One basic element of predefined type b (its C twin for the Fortran ones). */
static seq unit(int b)
{
    return (seq){((uint64_t)b + 1) * 0xff51afd7ed558ccdull, SIG_B};
}

/* MPI_BYTE and MPI_PACKED match anything (MPI-4.1 §3.3.1, §5.2). */
static bool wild(const mpi_type *t)
{
    return t->base == 0x04 || t->base == 0x20;
}

static seq type_seq(const mpi_type *t);

static void enum_cb(void *ctx, const mpi_type *old, ptrdiff_t disp, size_t n)
{
    (void)disp;
    seq *acc = ctx;
    *acc = cat(*acc, rep(type_seq(old), n));
}

/* One instance's signature, cached in the type: the cache is the type's own,
 * written under the engine lock like the rest of it. */
static seq type_seq(const mpi_type *t)
{
    if (t->chk_set) return (seq){t->chk_h, t->chk_p};
    seq s = {0, 1};
    if (t->predef)
        s = unit(t->base);
    else if (t->base >= 0)
        s = rep(unit(t->base), t->size / mpi_type_at(t->base)->size);
    else if (t->env)
        mpi_type_enum(t->env, enum_cb, &s);
    mpi_type *w = (mpi_type *)t;
    w->chk_h = s.h;
    w->chk_p = s.p;
    w->chk_set = true;
    return s;
}

/* The send calls a check value names (bits 8..11). */
static const char *const send_calls[] = {
    "a send",       "MPI_Send",  "MPI_Isend",  "MPI_Ssend",    "MPI_Issend",           "MPI_Rsend",
    "MPI_Irsend",   "MPI_Bsend", "MPI_Ibsend", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Start",
    "MPI_Startall",
};

static uint64_t call_code(const char *call)
{
    for (uint64_t i = 1; i < sizeof send_calls / sizeof send_calls[0]; i++)
        if (!strcmp(send_calls[i], call)) return i;
    return 0;
}

/* The predefined type a check value names (0: none, a mixed type). */
static int type_code(const mpi_type *t)
{
    return t->predef ? t->idx : t->base >= 0 ? t->base : 0;
}

uint64_t mpi_check_sig(cr_job *job, const mpi_type *t, size_t count, const char *call)
{
    (void)job;
    if (wild(t)) return 0;
    seq s = rep(type_seq(t), count);
    return (s.h & ~SIG_LOW) | call_code(call) << 8 | (uint64_t)(type_code(t) & 0xff);
}

/* ---- reports ------------------------------------------------------------------------ */

void mpi_check_comm_words(MPI_Comm comm, char *buf, size_t len)
{
    const mpi_comm *c = mpi_comm_get(comm);
    if (c && c->name[0])
        snprintf(buf, len, "%s", c->name);
    else
        snprintf(buf, len, "communicator #%d", c ? c->idx : -1);
}

void mpi_check_data_words(uint64_t sig, size_t bytes, char *buf, size_t len)
{
    int code = (int)(sig & 0xff);
    const mpi_type *b = code > 0 && code < mpi_st()->ntypes ? mpi_type_at(code) : NULL;
    if (b && b->size)
        snprintf(buf, len, "%zu x %s (%zu bytes)", bytes / b->size, b->name, bytes);
    else
        snprintf(buf, len, "%zu bytes of a derived datatype of several basic types", bytes);
}

/* A type as the reports name it: its name, or what it is made of. */
static void type_words(const mpi_type *t, char *buf, size_t len)
{
    if (t->name[0])
        snprintf(buf, len, "%s", t->name);
    else if (t->base >= 0)
        snprintf(buf, len, "a derived datatype of %s", mpi_type_at(t->base)->name);
    else
        snprintf(buf, len, "a derived datatype of several basic types");
}

_Noreturn void mpi_check_end(void)
{
    fflush(stderr);
    _exit(MPI_CHECK_EXIT);
}

void mpi_check_recv(cr_job *job, const char *call, MPI_Comm comm, const mpi_type *t, size_t count,
                    const cr_status *st)
{
    if (!st->sig || wild(t) || st->size > st->count) return;
    size_t size = st->size;
    seq want;
    bool ok;
    if (!t->size) {
        ok = size == 0;
        want = (seq){0, 1};
    } else if (size % t->size == 0) {
        want = rep(type_seq(t), size / t->size);
        ok = ((want.h ^ st->sig) & ~SIG_LOW) == 0;
    } else if (t->base >= 0) {
        size_t u = mpi_type_at(t->base)->size;
        want = rep(unit(t->base), size / u);
        ok = size % u == 0 && ((want.h ^ st->sig) & ~SIG_LOW) == 0;
    } else {
        return; /* a part of one instance of a mixed type: not compared */
    }
    if (ok) return;
    mpi_comm *c = mpi_comm_get(comm);
    int me = c ? c->me : job->rank, from = c ? mpi_comm_job_to_peer(c, st->src) : st->src;
    char cw[MPI_MAX_OBJECT_NAME + 24], sent[200], tw[MPI_MAX_OBJECT_NAME + 48];
    mpi_check_comm_words(comm, cw, sizeof cw);
    mpi_check_data_words(st->sig, size, sent, sizeof sent);
    type_words(t, tw, sizeof tw);
    unsigned sc = (unsigned)(st->sig >> 8 & 0xf);
    const char *scall = sc < sizeof send_calls / sizeof send_calls[0] ? send_calls[sc] : "a send";
    fflush(stdout);
    fprintf(stderr,
            "courier: check: type mismatch: rank %d's %s receives what rank %d's %s sent (tag "
            "%d, on %s)\n"
            "  rank %d (job rank %d) sent %s with %s\n"
            "  rank %d (job rank %d) receives count %zu of %s with %s\n"
            "  the type signatures of a send and its receive must match (MPI-4.1 section 3.3.1): "
            "receive with the sender's basic type, or send the receiver's (MPI_BYTE on "
            "both sides moves raw bytes)\n",
            me, call, from, scall, st->tag, cw, from, st->src, sent, scall, me, job->rank, count,
            tw, call);
    mpi_check_end();
}
