/* courier run --check (docs/check.md): the switch, point-to-point type
 * signatures, the report of what a program leaves at MPI_Finalize (info
 * objects at the rank's end: MPI-4 lets them outlive MPI_Finalize), with the
 * place an object was made resolved through dladdr and addr2line, and the
 * mark a report leaves in the trace, and --check=buffers' checksums (the
 * sends', the staged receives', and the nonblocking collectives' buffers,
 * watched in job->mpi->chk keyed by their schedule; a collective's receive
 * buffer staged as a receive's, its copy given to the program only after
 * the comparison at the completion a wait or test returns) and the staging
 * buffers it keeps there for the receives (at most MPI_CHK_STAGE_KEEP, each
 * lent to one receive or collective at a time). The collectives'
 * agreement check is in mpi_check_coll.c, the one-sided one in
 * mpi_check_rma.c.
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
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"
#include "mpi_check_mpl.h"
#include "mpi_file.h"
#include "mpi_p2p.h"
#include "mpi_win.h"

/* ---- the switch ------------------------------------------------------------------ */

static const struct {
    const char *word;
    unsigned bit;
} words[] = {
    {"types", MPI_CHK_TYPES},     {"coll", MPI_CHK_COLL},       {"leaks", MPI_CHK_LEAKS},
    {"sync", MPI_CHK_SYNC},       {"buffers", MPI_CHK_BUFFERS}, {"rma", MPI_CHK_RMA},
    {"threads", MPI_CHK_THREADS},
};

/* COURIER_CHECK's checks (0: none); an unknown word ends the rank. */
static unsigned check_bits(cr_job *job)
{
    const char *v = getenv("COURIER_CHECK");
    if (!v || !*v || !strcmp(v, "0")) return 0;
    unsigned on = 0;
    if (!strcmp(v, "1")) { /* --check: every check that keeps the protocol */
        on = MPI_CHK_TYPES | MPI_CHK_COLL | MPI_CHK_LEAKS | MPI_CHK_RMA | MPI_CHK_THREADS;
    } else if (!strcmp(v, "all")) { /* and sync, which makes every standard send wait */
        on = MPI_CHK_TYPES | MPI_CHK_COLL | MPI_CHK_LEAKS | MPI_CHK_RMA | MPI_CHK_THREADS |
             MPI_CHK_SYNC | MPI_CHK_BUFFERS;
    } else {
        for (const char *p = v; *p;) {
            size_t n = strcspn(p, ","), k = 0;
            while (k < sizeof words / sizeof words[0] &&
                   (strlen(words[k].word) != n || strncmp(words[k].word, p, n)))
                k++;
            if (k == sizeof words / sizeof words[0])
                cr_fatal(job, "init",
                         "COURIER_CHECK=%s: give 1, all, or a comma list of types, coll, leaks, "
                         "rma, threads, sync, buffers (docs/check.md)",
                         v);
            on |= words[k].bit;
            p += n + (p[n] == ',');
        }
    }
    return on;
}

bool cr_check_coll_wanted(void)
{
    return check_bits(cr_job_get()) & MPI_CHK_COLL;
}

void mpi_check_init(cr_job *job)
{
    unsigned on = check_bits(job);
    if (!on) return;
    mpi_chk *k = calloc(1, sizeof *k);
    if (!k) cr_fatal(job, "MPI_Init", "out of memory for the checks' state");
    k->on = on;
    job->mpi->chk = k;
    if ((on & MPI_CHK_THREADS) && pthread_key_create(&k->own_key, NULL))
        cr_fatal(job, "MPI_Init", "no thread-specific key left for --check=threads");
    job->mpi->chk_threads = on & MPI_CHK_THREADS;
}

void mpi_check_own_thread(cr_job *job)
{
    const mpi_state *m = job->mpi;
    if (m && m->chk_threads) pthread_setspecific(m->chk->own_key, (void *)1);
}

/* ---- thread levels ------------------------------------------------------------------ */

static const char *level_name(int level)
{
    return level == MPI_THREAD_SINGLE     ? "MPI_THREAD_SINGLE"
           : level == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED"
                                          : "MPI_THREAD_SERIALIZED";
}

/* Below MPI_THREAD_MULTIPLE no two threads may be in calls at once (MPI-4.1
 * section 11.6.1), and below SERIALIZED only the main thread (the one that
 * called MPI_Init) may call at all. courier then takes no lock, so such a call
 * would corrupt its state without a word: with the check it is an error. A
 * file's I/O thread, which calls for a queued collective access, is courier's
 * own (the lock is on for it). */
void mpi_check_thread_enter(cr_job *job, const char *call)
{
    mpi_state *m = job->mpi;
    mpi_chk *k = m->chk;
    if (m->thread_level == MPI_THREAD_MULTIPLE || pthread_getspecific(k->own_key)) return;
    unsigned long me = (unsigned long)pthread_self();
    unsigned long owner = atomic_load(&k->thr_owner);
    bool funneled = m->thread_level < MPI_THREAD_SERIALIZED;
    char who[160] = "";
    if (funneled && !pthread_equal(pthread_self(), m->main_thread))
        snprintf(who, sizeof who, "a thread that is not the main thread");
    else if (owner && owner != me)
        snprintf(who, sizeof who, "one thread while another is inside %s",
                 k->thr_call ? k->thr_call : "a call");
    if (who[0]) {
        if (atomic_exchange(&k->thr_said, true))
            for (;;) pause(); /* the first report ends the rank */
        const char *lv = level_name(m->thread_level);
        fflush(stdout);
        fprintf(stderr,
                "courier: check: rank %d: %s called from %s, and the thread level is %s\n"
                "  with %s %s (MPI-4.1 section 11.6.1): %s, or ask MPI_Init_thread for %s and "
                "use the level it provides\n",
                job->rank, call, who, lv, lv,
                funneled ? "only the main thread (the one that called MPI_Init) may call MPI"
                         : "two threads must never be in MPI calls at once",
                funneled ? "make every call from the main thread"
                         : "order the threads' calls (a lock around them)",
                funneled ? "MPI_THREAD_SERIALIZED or higher" : "MPI_THREAD_MULTIPLE");
        mpi_check_trace(job, "check: thread level");
        mpi_check_end();
    }
    if (!k->thr_depth++) {
        k->thr_call = call;
        atomic_store(&k->thr_owner, me);
    }
}

void mpi_check_thread_leave(cr_job *job)
{
    mpi_state *m = job->mpi;
    mpi_chk *k = m->chk;
    if (m->thread_level == MPI_THREAD_MULTIPLE || !k->thr_depth ||
        atomic_load(&k->thr_owner) != (unsigned long)pthread_self())
        return;
    if (!--k->thr_depth) atomic_store(&k->thr_owner, 0);
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

/* c as the reports name it (a freed one, still draining its messages, too). */
static void comm_words(const mpi_comm *c, char *buf, size_t len)
{
    if (c->name[0])
        snprintf(buf, len, "%s%s", c->name, c->draining ? " (freed)" : "");
    else
        snprintf(buf, len, "communicator #%d%s", c->idx, c->draining ? " (freed)" : "");
}

void mpi_check_comm_words(MPI_Comm comm, char *buf, size_t len)
{
    const mpi_comm *c = mpi_comm_get(comm);
    if (c)
        comm_words(c, buf, len);
    else
        snprintf(buf, len, "an invalid communicator (%#x)", (unsigned)comm);
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

void mpi_check_trace(cr_job *job, const char *what)
{
    if (!job->trace) return;
    /* end the call the report is in (the mark is recorded only outside every
     * call), the mark, then the trace's file: the rank ends with _exit */
    cr_trace_leave_on(job);
    cr_trace_enter_on(job, what);
    cr_trace_leave_on(job);
    cr_trace_close(job);
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
    mpi_check_trace(job, "check: type mismatch");
    mpi_check_end();
}

/* ---- buffers of pending sends -------------------------------------------------- */

/* One step of the checksum: bijective in w for a given h (the product by an
 * odd constant and the xorshift both are), so a lane that differs in one word
 * ends different. */
static inline uint64_t sum_mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    return h ^ h >> 29;
}

static inline uint64_t sum_word(const unsigned char *b)
{
    uint64_t w;
    memcpy(&w, b, 8);
    return w;
}

/* Eight independent lanes (word i goes to lane i % 8), folded into one at the
 * end: the multiplications of one lane wait for each other, those of
 * different lanes do not, so this runs near memcpy's speed (9 GB/s on the
 * test machine against 1.7 GB/s for one lane: --check=buffers sums every
 * nonblocking transfer's buffer twice). The fold is bijective in each lane,
 * so a change of one word always changes the sum. */
uint64_t mpi_check_sum(const void *p, size_t len)
{
    const unsigned char *b = p;
    uint64_t h0 = 0x9e3779b97f4a7c15ull ^ len, h1 = h0 + 1, h2 = h0 + 2, h3 = h0 + 3, h4 = h0 + 4,
             h5 = h0 + 5, h6 = h0 + 6, h7 = h0 + 7;
    size_t i = 0;
    for (; i + 64 <= len; i += 64) {
        h0 = sum_mix(h0, sum_word(b + i));
        h1 = sum_mix(h1, sum_word(b + i + 8));
        h2 = sum_mix(h2, sum_word(b + i + 16));
        h3 = sum_mix(h3, sum_word(b + i + 24));
        h4 = sum_mix(h4, sum_word(b + i + 32));
        h5 = sum_mix(h5, sum_word(b + i + 40));
        h6 = sum_mix(h6, sum_word(b + i + 48));
        h7 = sum_mix(h7, sum_word(b + i + 56));
    }
    for (; i + 8 <= len; i += 8) h0 = sum_mix(h0, sum_word(b + i));
    for (; i < len; i++) h0 = (h0 ^ b[i]) * 0x100000001b3ull;
    h0 = sum_mix(sum_mix(sum_mix(h0, h1), h2), h3);
    return sum_mix(sum_mix(sum_mix(sum_mix(h0, h4), h5), h6), h7);
}

void mpi_check_buf_changed(cr_job *job, const char *call, MPI_Comm comm, int peer, int tag,
                           size_t len, bool recv)
{
    char cw[MPI_MAX_OBJECT_NAME + 24], pw[40], tw[40];
    mpi_check_comm_words(comm, cw, sizeof cw);
    const mpi_comm *c = mpi_comm_get(comm);
    fflush(stdout);
    if (!recv) {
        fprintf(stderr,
                "courier: check: rank %d changed the buffer of its %s (tag %d to rank %d, %zu "
                "bytes, on %s) before the send completed\n"
                "  a nonblocking send's buffer must not be written until a wait or test "
                "completes it (MPI-4.1 section 3.7.2): wait first, or send from a copy\n",
                c ? c->me : job->rank, call ? call : "send", tag, peer, len, cw);
        mpi_check_trace(job, "check: send buffer changed");
        mpi_check_end();
    }
    snprintf(pw, sizeof pw, peer == MPI_ANY_SOURCE ? "any rank" : "rank %d", peer);
    snprintf(tw, sizeof tw, tag == MPI_ANY_TAG ? "any tag" : "tag %d", tag);
    fprintf(stderr,
            "courier: check: rank %d changed the buffer of its %s (%s from %s, %zu bytes, on %s) "
            "before the receive completed\n"
            "  a pending receive's buffer must not be written or read until a wait or test "
            "completes it (MPI-4.1 section 3.7.2): the message may land there at any time; "
            "wait first, or use another buffer\n",
            c ? c->me : job->rank, call ? call : "receive", tw, pw, len, cw);
    mpi_check_trace(job, "check: receive buffer changed");
    mpi_check_end();
}

void mpi_check_landed(cr_job *job, const void *buf, size_t len)
{
    mpi_state *m = job->mpi;
    const char *lo = buf, *hi = lo + len;
    for (uint32_t i = 0; len && i < m->p2p.reqs.n; i++) {
        mreq *q = cr_idt_at(&m->p2p.reqs, i);
        if (!cr_idt_live(q) || q->kind != RQ_RECV || !q->cbuf) continue;
        const char *b = q->cbuf;
        if (b < hi && lo < b + q->clen) q->cbuf = NULL; /* courier wrote it: not compared */
    }
}

/* A staging buffer's header: its capacity, before the bytes lent (16 bytes,
 * so that the buffer keeps malloc's alignment). */
#define MPI_CHK_STAGE_HDR 16

/* Free kept staging buffer i (the last one takes its place). */
static void stage_drop(mpi_chk *k, int i)
{
    k->stage_bytes -= k->stage[i].cap;
    free(k->stage[i].p);
    k->stage[i] = k->stage[--k->nstage];
}

void *mpi_check_stage(cr_job *job, const char *call, size_t len)
{
    mpi_chk *k = job->mpi->chk;
    int best = -1;
    for (int i = 0; i < k->nstage; i++)
        if (k->stage[i].cap >= len && (best < 0 || k->stage[i].cap < k->stage[best].cap)) best = i;
    char *p;
    if (best >= 0) {
        p = k->stage[best].p;
        k->stage_bytes -= k->stage[best].cap;
        k->stage[best] = k->stage[--k->nstage];
    } else {
        p = malloc(MPI_CHK_STAGE_HDR + (len ? len : 1));
        if (!p)
            cr_fatal(job, call, "out of memory for %zu bytes of staging (--check=buffers)", len);
        *(size_t *)p = len ? len : 1;
    }
    return p + MPI_CHK_STAGE_HDR;
}

void mpi_check_unstage(cr_job *job, void *buf)
{
    if (!buf) return;
    mpi_chk *k = job->mpi->chk;
    char *p = (char *)buf - MPI_CHK_STAGE_HDR;
    size_t cap = *(size_t *)p;
    /* room for it: the smallest kept ones go first, while smaller than it */
    while (k->nstage &&
           (k->nstage == MPI_CHK_STAGE_KEEP || k->stage_bytes + cap > MPI_CHK_STAGE_BYTES)) {
        int small = 0;
        for (int i = 1; i < k->nstage; i++)
            if (k->stage[i].cap < k->stage[small].cap) small = i;
        if (k->stage[small].cap >= cap) break;
        stage_drop(k, small);
    }
    if (k->nstage == MPI_CHK_STAGE_KEEP || k->stage_bytes + cap > MPI_CHK_STAGE_BYTES) {
        free(p);
        return;
    }
    k->stage[k->nstage++] = (mpi_chkstage){p, cap};
    k->stage_bytes += cap;
}

/* One more watch of a->s. */
static void watch_add(const mpi_cargs *a, void *buf, size_t len, const char *what, char *stage,
                      char *mem)
{
    mpi_chk *k = a->job->mpi->chk;
    if (k->nw == k->wcap) {
        int cap = k->wcap ? 2 * k->wcap : 16;
        mpi_chkwatch *w = realloc(k->w, (size_t)cap * sizeof *w);
        if (!w) cr_fatal(a->job, a->call, "out of memory for --check=buffers");
        k->w = w;
        k->wcap = cap;
    }
    k->w[k->nw++] = (mpi_chkwatch){a->s, buf, len, 0, a->call, what, a->comm, false, stage, mem};
}

void mpi_check_nbc_watch(const mpi_cargs *a, const void *buf, size_t len, const char *what)
{
    watch_add(a, (void *)buf, len, what, NULL, NULL);
}

char *mpi_check_nbc_stage(const mpi_cargs *a, void *buf, int n, const size_t *len,
                          const size_t *off)
{
    ptrdiff_t lo = 0, hi = 0; /* the span staged: from buf's start or the lowest block */
    for (int i = 0; i < n; i++)
        if (len[i]) {
            ptrdiff_t o = off ? (ptrdiff_t)off[i] : 0;
            if (o < lo) lo = o;
            if (o + (ptrdiff_t)len[i] > hi) hi = o + (ptrdiff_t)len[i];
        }
    if (hi == lo) return buf;
    char *mem = mpi_check_stage(a->job, a->call, (size_t)(hi - lo)), *base = mem - lo;
    for (int i = 0; i < n;) {
        if (!len[i]) {
            i++;
            continue;
        }
        ptrdiff_t o = off ? (ptrdiff_t)off[i] : 0;
        size_t l = len[i];
        int j = i + 1; /* the blocks that go on where this one ends: one watch */
        for (; j < n && (!len[j] || (ptrdiff_t)off[j] == o + (ptrdiff_t)l); j++) l += len[j];
        watch_add(a, (char *)buf + o, l, "receive buffer", base + o, mem);
        mem = NULL; /* held by the first one */
        i = j;
    }
    return base;
}

void mpi_check_nbc_start(cr_job *job, const void *key)
{
    mpi_chk *k = job->mpi->chk;
    for (int i = 0; i < k->nw; i++)
        if (k->w[i].key == key) {
            mpi_chkwatch *w = &k->w[i];
            w->sum = mpi_check_sum(w->buf, w->len);
            if (w->stage) memcpy(w->stage, w->buf, w->len); /* what MPI_IN_PLACE reads */
            w->armed = true;
        }
}

void mpi_check_nbc_end(cr_job *job, const void *key)
{
    mpi_chk *k = job->mpi->chk;
    for (int i = 0; i < k->nw; i++) {
        mpi_chkwatch *w = &k->w[i];
        if (w->key != key || !w->armed) continue;
        w->armed = false;
        if (mpi_check_sum(w->buf, w->len) == w->sum) {
            if (w->stage) memcpy(w->buf, w->stage, w->len); /* the result, now the program's */
            continue;
        }
        char cw[MPI_MAX_OBJECT_NAME + 24];
        mpi_check_comm_words(w->comm, cw, sizeof cw);
        const mpi_comm *c = mpi_comm_get(w->comm);
        fflush(stdout);
        char jw[32] = ""; /* the job's rank too where the communicator's differs */
        if (c && c->me != job->rank) snprintf(jw, sizeof jw, " (job rank %d)", job->rank);
        fprintf(stderr,
                "courier: check: rank %d%s changed the %s of its %s (%zu bytes, on %s) before the "
                "collective completed\n",
                c ? c->me : job->rank, jw, w->what, w->call, w->len, cw);
        if (w->stage)
            fprintf(stderr,
                    "  a nonblocking or persistent collective's receive buffer must not be "
                    "written or read until a wait or test completes it (MPI-4.1 sections 6.12 "
                    "and 6.13): the result may land there at any time; wait first, or use "
                    "another buffer\n");
        else
            fprintf(stderr, "  the buffers of a nonblocking or persistent collective must not be "
                            "written until a wait or test completes it (MPI-4.1 sections 6.12 and "
                            "6.13): wait first, or write a copy\n");
        mpi_check_trace(job, "check: collective buffer changed");
        mpi_check_end();
    }
}

void mpi_check_nbc_drop(cr_job *job, const void *key)
{
    mpi_chk *k = job->mpi->chk;
    int j = 0;
    for (int i = 0; i < k->nw; i++)
        if (k->w[i].key != key)
            k->w[j++] = k->w[i];
        else if (k->w[i].mem)
            mpi_check_unstage(job, k->w[i].mem);
    k->nw = j;
}

/* ---- leaks at MPI_Finalize -------------------------------------------------------- */

static const char *const combiners[] = {
    [MPI_COMBINER_DUP] = "MPI_Type_dup",
    [MPI_COMBINER_CONTIGUOUS] = "MPI_Type_contiguous",
    [MPI_COMBINER_VECTOR] = "MPI_Type_vector",
    [MPI_COMBINER_HVECTOR_INTEGER] = "MPI_Type_hvector",
    [MPI_COMBINER_HVECTOR] = "MPI_Type_create_hvector",
    [MPI_COMBINER_INDEXED] = "MPI_Type_indexed",
    [MPI_COMBINER_HINDEXED_INTEGER] = "MPI_Type_hindexed",
    [MPI_COMBINER_HINDEXED] = "MPI_Type_create_hindexed",
    [MPI_COMBINER_INDEXED_BLOCK] = "MPI_Type_create_indexed_block",
    [MPI_COMBINER_STRUCT_INTEGER] = "MPI_Type_struct",
    [MPI_COMBINER_STRUCT] = "MPI_Type_create_struct",
    [MPI_COMBINER_SUBARRAY] = "MPI_Type_create_subarray",
    [MPI_COMBINER_DARRAY] = "MPI_Type_create_darray",
    [MPI_COMBINER_F90_REAL] = "MPI_Type_create_f90_real",
    [MPI_COMBINER_F90_COMPLEX] = "MPI_Type_create_f90_complex",
    [MPI_COMBINER_F90_INTEGER] = "MPI_Type_create_f90_integer",
    [MPI_COMBINER_RESIZED] = "MPI_Type_create_resized",
    [MPI_COMBINER_HINDEXED_BLOCK] = "MPI_Type_create_hindexed_block",
};

/* The lines of a rank's report so far: all of them, and those that are errors
 * (communication never completed, a file never closed: MPI-4.1 sections 11.2.2
 * and 14.2.2); the others, objects never freed, are leaks MPI allows, said as
 * a warning that leaves the job's status as it is. */
typedef struct {
    int all, err;
} leak_count;

/* One line of the report, into the rank's block (its header comes at the end,
 * when the block knows whether it holds an error). */
static void leak_line(FILE *out, leak_count *n, bool err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void leak_line(FILE *out, leak_count *n, bool err, const char *fmt, ...)
{
    n->all++;
    n->err += err;
    va_list ap;
    va_start(ap, fmt);
    fputs("  ", out);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    va_end(ap);
}

/* " at prog.c:42 (main)": where the call at return address 'at' was made,
 * from the program's debug info through addr2line (run now, once per object
 * reported); " from 0x... (prog+0x1234)" without it. (A call courier makes
 * itself, MPI_Win_get_info's MPI_Info_dup, names courier's source.) */
void mpi_where(const void *at, char *buf, size_t len)
{
    Dl_info di;
    buf[0] = '\0';
    if (!at) return;
    if (!dladdr(at, &di) || !di.dli_fname || !di.dli_fbase) {
        snprintf(buf, len, " from %p", at);
        return;
    }
    /* a shared object or a position-independent program: addresses from its base */
    const ElfW(Ehdr) *eh = di.dli_fbase;
    uintptr_t pc = (uintptr_t)at - 1; /* inside the call, not after it */
    uintptr_t addr = eh->e_type == ET_DYN ? pc - (uintptr_t)di.dli_fbase : pc;
    const char *base = strrchr(di.dli_fname, '/');
    base = base ? base + 1 : di.dli_fname;
    snprintf(buf, len, " from %p (%s+%#lx)", at, base, (unsigned long)addr);
    if (strchr(di.dli_fname, '\'')) return;
    char cmd[PATH_MAX + 80], fn[256] = "", fl[PATH_MAX] = "";
    snprintf(cmd, sizeof cmd, "addr2line -f -C -e '%s' %#lx 2>/dev/null", di.dli_fname,
             (unsigned long)addr);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    bool got = fgets(fn, sizeof fn, p) && fgets(fl, sizeof fl, p);
    pclose(p);
    fn[strcspn(fn, "\n")] = fl[strcspn(fl, " \n")] = '\0'; /* no " (discriminator 2)" */
    if (got && fl[0] != '?')
        snprintf(buf, len, " at %s (%s)", fl, fn[0] && fn[0] != '?' ? fn : "?");
}

typedef struct leak_ctx {
    FILE *out;
    leak_count *n;
} leak_ctx;

static void info_leak(void *ctx, int idx, int nkeys, const char *call, const void *at)
{
    leak_ctx *l = ctx;
    char w[PATH_MAX + 300];
    mpi_where(at, w, sizeof w);
    leak_line(l->out, l->n, false, "info #%d (%d keys) made by %s%s, never freed (MPI_Info_free)",
              idx, nkeys, call, w);
}

/* At the rank's end (atexit, from MPI_Finalize): the info objects the program
 * made and never freed. Not at MPI_Finalize: MPI-4 lets a program use and
 * free them after it (and make them before MPI_Init). */
static void infos_at_exit(void)
{
    cr_job *job = cr_job_get();
    leak_count n = {0, 0};
    char *text = NULL;
    size_t tlen = 0;
    FILE *out = open_memstream(&text, &tlen);
    if (!out) return;
    mpi_info_leaks(info_leak, &(leak_ctx){out, &n});
    fclose(out);
    if (n.all) {
        fflush(NULL);
        fprintf(stderr,
                "courier: check: rank %d ended with info objects it did not free (a warning: "
                "MPI allows it, and the job's status stays as it is):\n%s"
                "  free each when done with it (MPI_Info_free; after MPI_Finalize too, as MPI-4 "
                "allows)\n",
                job->rank, text);
    }
    free(text);
}

static bool is_file_comm(const mpi_state *m, MPI_Comm h)
{
    for (int i = 0; m->files && i < m->files->n; i++)
        if (m->files->f[i] && m->files->f[i]->comm == h) return true;
    for (int i = 0; i < m->wins.n; i++)
        if (m->wins.w[i] && m->wins.w[i]->comm == h) return true;
    return false;
}

/* Every message another rank sent here before its MPI_Finalize has arrived:
 * each rank sends an empty message to every other, on the ordinary channel
 * behind all it sent before, and takes one from each. (A barrier is not
 * enough: the shared-memory area's can end while a message over tcp is still
 * on its way, and the message was then missed: check_leaks_bad_msg_tcp, 1 run
 * in ~20 under load.) */
static void flush_peers(cr_job *job)
{
    int n = job->size, k = 0;
    cr_req **r = malloc(2 * (size_t)n * sizeof *r);
    if (!r) cr_fatal(job, "MPI_Finalize", "out of memory for --check's flush");
    for (int p = 0; p < n; p++)
        if (p != job->rank) {
            cr_sel s = {.src = p, .ctx = CR_CTX_MPI_CHECK, .tag_mode = CR_TAG_EXACT, .tag = 0};
            r[k++] = cr_irecv(job, "MPI_Finalize", &s, NULL, 0);
        }
    for (int p = 0; p < n; p++)
        if (p != job->rank) r[k++] = cr_isend(job, "MPI_Finalize", p, CR_CTX_MPI_CHECK, 0, NULL, 0);
    for (int i = 0; i < k; i++) {
        cr_req_wait(job, r[i]);
        cr_req_release(job, r[i]);
    }
    free(r);
}

/* A message left on a collective's context: a nonblocking collective's
 * agreement record names the call that this rank never made; its data, when
 * no record of the same collective (sender, sequence number) came with it,
 * is named by its size. */
static void unexp_coll(cr_job *job, FILE *out, leak_count *n, const cr_unexp *u, const char *cw,
                       int from, int me)
{
    char call[80];
    if (mpi_check_coll_left(u, call, sizeof call)) {
        leak_line(out, n, true,
                  "a message from rank %d, which started %s on %s, a collective rank %d never "
                  "called (the call's agreement record, which no collective here took)",
                  from, call, cw, me);
        return;
    }
    for (const cr_unexp *r = job->unexp; r; r = r->next)
        if (r != u && r->src == u->src && r->ctx == u->ctx &&
            ((uint32_t)(r->tag ^ u->tag) & ~0xfffu) == 0 && mpi_check_coll_left(r, NULL, 0))
            return; /* its collective's record is reported */
    leak_line(
        out, n, true,
        "a message of a collective from rank %d (%zu bytes, tag %#x, on %s) that no collective "
        "call here took: a collective this rank never called, or called on another "
        "communicator or in another order",
        from, u->size, (unsigned)u->tag, cw);
}

void mpi_check_finalize(cr_job *job)
{
    mpi_state *m = job->mpi;
    flush_peers(job);
    leak_count n = {0, 0};
    char *text = NULL;
    size_t tlen = 0;
    FILE *out = open_memstream(&text, &tlen); /* one write: ranks' blocks do not mix */
    if (!out) cr_fatal(job, "MPI_Finalize", "out of memory for --check's report");
    for (uint32_t i = 0; i < m->p2p.reqs.n; i++) {
        const mreq *q = cr_idt_at(&m->p2p.reqs, i);
        if (!cr_idt_live(q) || q->kind == RQ_FREE) continue;
        const char *call = q->call ? q->call : "a call";
        /* freed while active, its operation since complete (retired at the
         * next request; under sync a send completes after its free) */
        if (q->freed && (q->kind == RQ_DONE ||
                         ((q->kind == RQ_SEND || q->kind == RQ_RECV) && q->r && q->r->done)))
            continue;
        if (q->kind == RQ_IDLE)
            leak_line(out, &n, false,
                      "a persistent request made by %s, never freed (MPI_Request_free)", call);
        else if (q->freed)
            leak_line(out, &n, true,
                      "a request of %s, freed by MPI_Request_free but never completed", call);
        else
            leak_line(out, &n, true,
                      "a request of %s (%#x), never completed by a wait or test (MPI_Wait, "
                      "MPI_Test, ...) or freed",
                      call, (unsigned)(0x40000000u | cr_idt_id(q)));
    }
    for (int i = 2; i < m->ncomms; i++) {
        const mpi_comm *c = m->comms[i];
        if (!c || !c->used || c->draining) continue;
        MPI_Comm h = (MPI_Comm)(K_COMM | (unsigned)i);
        if (is_file_comm(m, h)) continue; /* a window's or file's own: reported as that */
        char cw[MPI_MAX_OBJECT_NAME + 24];
        mpi_check_comm_words(h, cw, sizeof cw);
        leak_line(out, &n, false, "%s (%d rank%s%s), never freed (MPI_Comm_free)", cw, c->size,
                  c->size == 1 ? "" : "s", c->inter ? ", an intercommunicator" : "");
    }
    for (int i = 1; i < m->ngroups; i++)
        if (m->groups[i] && m->groups[i]->used)
            leak_line(out, &n, false, "group #%d (%d rank%s), never freed (MPI_Group_free)", i,
                      m->groups[i]->size, m->groups[i]->size == 1 ? "" : "s");
    for (int i = 1; i < m->ntypes; i++) {
        const mpi_type *t = m->types[i];
        if (!t || !t->used || t->predef || t->dead) continue;
        int comb = t->env ? t->env->combiner : 0;
        const char *by =
            comb > 0 && comb < (int)(sizeof combiners / sizeof combiners[0]) && combiners[comb]
                ? combiners[comb]
                : "a datatype constructor";
        leak_line(out, &n, false, "datatype #%d%s%s%s made by %s, never freed (MPI_Type_free)", i,
                  t->name[0] ? " (" : "", t->name, t->name[0] ? ")" : "", by);
    }
    for (int i = 0; i < m->wins.n; i++)
        if (m->wins.w[i])
            leak_line(out, &n, false, "window #%d (%lld bytes here), never freed (MPI_Win_free)", i,
                      (long long)m->wins.w[i]->wsize);
    for (int i = 0; m->files && i < m->files->n; i++)
        if (m->files->f[i])
            leak_line(out, &n, true, "file '%s', never closed (MPI_File_close)",
                      m->files->f[i]->name ? m->files->f[i]->name : "?");
    atexit(infos_at_exit); /* the program may still free them after MPI_Finalize */
    for (int i = 0; i < m->errh.n; i++)
        if (!m->errh.freed[i]) {
            char w[PATH_MAX + 300];
            mpi_where(m->errh.at[i], w, sizeof w);
            leak_line(out, &n, false,
                      "error handler #%d made by MPI_Comm_create_errhandler (or the window's, "
                      "file's or session's)%s, never freed (MPI_Errhandler_free)",
                      i + 2, w);
        }
    static const char *const kv_of[] = {"MPI_Comm", "MPI_Type", "MPI_Win"};
    for (int i = 0; i < m->nkeys; i++)
        if (m->keys[i].used) {
            const char *o = kv_of[m->keys[i].kind % 3];
            leak_line(out, &n, false,
                      "attribute key #%d made by %s_create_keyval, never freed (%s_free_keyval)", i,
                      o, o);
        }
    for (int i = 0; i < m->uops.n; i++)
        if (m->uops.ops[i].used)
            leak_line(out, &n, false,
                      "an operation made by %s (user operation #%d), never freed (MPI_Op_free)",
                      m->uops.ops[i].fn ? "MPI_Op_create" : "MPI_Op_create_c", i);
    for (const cr_unexp *u = job->unexp; u; u = u->next) {
        if (u->ctx < MPI_CTX_BASE) continue;
        bool coll = (u->ctx - MPI_CTX_BASE) % 2; /* a collective's context: ctx + 1 */
        mpi_comm *c = NULL;
        for (int i = 0; i < m->ncomms && !c; i++)
            if (m->comms[i] && m->comms[i]->used && m->comms[i]->ctx + coll == u->ctx)
                c = m->comms[i];
        char cw[MPI_MAX_OBJECT_NAME + 24] = "a freed communicator", sent[200] = "";
        if (c) comm_words(c, cw, sizeof cw);
        int from = c ? mpi_comm_job_to_peer(c, u->src) : u->src;
        if (coll) {
            unexp_coll(job, out, &n, u, cw, from, c ? c->me : job->rank);
            continue;
        }
        if (u->sig) {
            unsigned sc = (unsigned)(u->sig >> 8 & 0xf);
            char d[160];
            mpi_check_data_words(u->sig, u->size, d, sizeof d);
            snprintf(sent, sizeof sent, ": %s, sent with %s", d,
                     sc < sizeof send_calls / sizeof send_calls[0] ? send_calls[sc] : "a send");
        }
        leak_line(out, &n, true,
                  "a message from rank %d (tag %d, %zu bytes, on %s%s) that no receive took", from,
                  (int)u->tag, u->size, cw, sent);
    }
    fclose(out);
    if (n.all) {
        fflush(stdout);
        fprintf(
            stderr,
            "courier: check: rank %d: MPI_Finalize with objects the program did not %s:\n%s  %s\n",
            job->rank,
            n.err ? "free or complete"
                  : "free (a warning: MPI allows it, and the job's status stays as it is)",
            text,
            n.err ? "complete each communication and close each file before MPI_Finalize "
                    "(MPI-4.1 sections 11.2.2 and 14.2.2); objects left allocated are leaks"
                  : "free each when done with it, so that memory stays bounded however long "
                    "the program runs (--check=types,coll,rma leaves this report out)");
    }
    free(text);
    /* every rank has written its block before any ends (the launcher ends
     * the job at the first status 98: check_leaks_bad_msg_tcp lost rank 1's
     * block 1 run in ~20) */
    flush_peers(job);
    if (n.err) {
        mpi_check_trace(job, "check: leaks at MPI_Finalize");
        mpi_check_end();
    }
}
