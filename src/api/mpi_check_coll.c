/* courier run --check=coll (docs/check.md): before a collective moves data,
 * its members agree that they call the same collective with the same root,
 * operator and type signature; the v and w forms also compare each pair's
 * block.
 *
 * How: each member sends a fixed-size record of its call (name, root,
 * operator, counts, the check values of one block it sends and receives:
 * mpi_check.c's signatures) to member 0 of the communicator's collective group
 * (on an intercommunicator: of its local group), which judges them; a
 * disagreement is reported by member 0, in one block naming each rank's call
 * and arguments, which ends its rank and so the job. The records travel with
 * a nonblocking collective's tags under the collective's own sequence number
 * (mpi_nbc.c's), whichever form the call is: a nonblocking or persistent
 * collective sends its record in the first round of its own schedule and
 * goes on (nothing blocks in the call); a blocking one runs the same rounds
 * at once, and member 0 of a blocking call also sends its record to every
 * other member, which compares its own with it before any of its data moves
 * (one that differs leaves the report to member 0 and moves nothing). So a
 * blocking call that meets a nonblocking or persistent one (which MPI
 * forbids) is judged like any other disagreement. The v and w forms then send
 * each member they send data to the check value of that block, and each
 * receiver compares it with its own counts and datatype for the sender
 * (mismatch: the receiver reports, naming both ranks' calls and types).
 *
 * Invariants: the check sends nothing but the records (member 0's to the
 * others in a blocking call) and the v forms' pair values, and takes no sequence
 * number of its own; a record's signatures are 0 where a side carries nothing
 * to compare (no data there, MPI_BYTE/MPI_PACKED); the block signatures that
 * are not 0 must all be equal across the members, which is MPI's rule for
 * every rooted and all-to-all collective whose blocks have one size; a v
 * form's record (vform) carries none of its blocks (they are compared per
 * pair). The same agreement, on the call, root and length, serves the
 * interfaces without datatypes (MPL: cr_check_group_agree). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "mpi_check.h"
#include "mpi_check_mpl.h"

typedef struct coll_rec {
    char call[32];
    int32_t root;
    int32_t op;
    int64_t scount, rcount;
    uint64_t ssig, rsig;  /* one block's check value (0: none, or MPI_BYTE) */
    uint8_t sside, rside; /* the rank has that side */
    uint8_t vform;        /* the v forms: the sides are this rank's whole data, not one block */
    uint8_t pad[5];
} coll_rec;

static const char *const op_names[] = {
    "MPI_OP_NULL", "MPI_MAX",    "MPI_MIN",    "MPI_SUM",     "MPI_PROD",
    "MPI_LAND",    "MPI_BAND",   "MPI_LOR",    "MPI_BOR",     "MPI_LXOR",
    "MPI_BXOR",    "MPI_MAXLOC", "MPI_MINLOC", "MPI_REPLACE", "MPI_NO_OP",
};
_Static_assert(((unsigned)MPI_REPLACE & 0xffffu) == 13 && ((unsigned)MPI_NO_OP & 0xffffu) == 14,
               "op_names follows the predefined operations' handles");

/* What a collective's record keeps of its operation: a predefined one's
 * handle; for any user operation one mark, since its handle is this rank's
 * own (a rank that made other operations first holds another number for the
 * same operation, which MPI allows). */
#define USER_OP_MARK ((int32_t)(K_OP | 0xffffu))
static int32_t op_of_record(MPI_Op op)
{
    unsigned i = (unsigned)op & 0xffffu;
    bool user = ((unsigned)op & H_KIND_MASK) == K_OP && i >= sizeof op_names / sizeof op_names[0];
    return user ? USER_OP_MARK : (int32_t)op;
}

void mpi_check_op_words(int32_t op, char *buf, size_t len)
{
    unsigned i = (unsigned)op & 0xffffu;
    if (op == MPI_OP_NULL ||
        (((unsigned)op & H_KIND_MASK) == K_OP && i > 0 && i < sizeof op_names / sizeof op_names[0]))
        snprintf(buf, len, "%s", op_names[op == MPI_OP_NULL ? 0 : i]);
    else if (op == USER_OP_MARK)
        snprintf(buf, len, "a user operation");
    else
        snprintf(buf, len, "a user operation (%#x)", (unsigned)op);
}

/* One side of a record: "send count 4 of MPI_INT" (what: "send count"). */
static const char *type_words(uint64_t sig)
{
    return !sig                ? "MPI_BYTE/MPI_PACKED"
           : (sig & 0xff) == 0 ? "a derived datatype of several basic types"
                               : mpi_type_at((int)(sig & 0xff))->name;
}

static void side_words(char *buf, size_t len, const char *what, uint64_t sig, int64_t count)
{
    snprintf(buf, len, "%s %lld of %s", what, (long long)count, type_words(sig));
}

/* A record as the report shows it: "MPI_Bcast(root 1, send count 4 of MPI_INT, ...)". */
static void rec_words(const coll_rec *r, char *buf, size_t len)
{
    char parts[4][160];
    int n = 0;
    if (r->root >= 0) snprintf(parts[n++], sizeof parts[0], "root %d", r->root);
    if (r->root == MPI_ROOT) snprintf(parts[n++], sizeof parts[0], "root MPI_ROOT");
    if (r->op != MPI_OP_NULL) {
        char ow[48];
        mpi_check_op_words(r->op, ow, sizeof ow);
        snprintf(parts[n++], sizeof parts[0], "op %s", ow);
    }
    if (r->sside && r->rside && r->ssig == r->rsig && r->scount == r->rcount) /* one buffer */
        side_words(parts[n++], sizeof parts[0], "count", r->ssig, r->scount);
    else if (r->sside)
        side_words(parts[n++], sizeof parts[0], "send count", r->ssig, r->scount);
    if (r->rside && n < 4 && !(r->sside && r->ssig == r->rsig && r->scount == r->rcount))
        side_words(parts[n++], sizeof parts[0], "receive count", r->rsig, r->rcount);
    size_t at = (size_t)snprintf(buf, len, "%s(", r->call);
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", parts[i]);
    if (at < len) snprintf(buf + at, len - at, ")");
}

/* A member that leaves the report to another: it keeps its transports
 * moving (the reporter may still need what this rank sent, held in a
 * transport's queue: tcp's) until the launcher ends the job, which the
 * reporter's exit does. */
_Noreturn void mpi_check_wait_end(cr_job *job)
{
    for (;;) {
        cr_progress(job);
        usleep(1000);
    }
}

static bool sig_eq(uint64_t a, uint64_t b)
{
    return !a || !b || ((a ^ b) & ~MPI_CHK_SIG_LOW) == 0;
}

static void rec_make(cr_job *job, coll_rec *r, const char *call, int root, MPI_Op op, int scount,
                     const mpi_type *ts, int rcount, const mpi_type *tr)
{
    *r = (coll_rec){.root = root,
                    .op = op_of_record(op),
                    .scount = scount,
                    .rcount = rcount,
                    .ssig = ts ? mpi_check_sig(job, ts, (size_t)scount, "") : 0,
                    .rsig = tr ? mpi_check_sig(job, tr, (size_t)rcount, "") : 0,
                    .sside = ts != NULL,
                    .rside = tr != NULL};
    snprintf(r->call, sizeof r->call, "%s", call);
}

/* What the members' records disagree on (NULL: nothing), judged the same way
 * on every member. On an intercommunicator (a group's records: inter) the
 * root is MPI_ROOT at one member and MPI_PROC_NULL at the others of the root's
 * group, the same rank of the other group at every member of that one. */
static const char *judge(const coll_rec *all, int np, bool inter)
{
    uint64_t ref = 0;
    int roots = 0, nulls = 0; /* MPI_ROOT, MPI_PROC_NULL */
    for (int i = 0; i < np; i++) {
        const coll_rec *r = &all[i];
        if (strcmp(r->call, all[0].call)) return "which collective they call";
        if (r->op != all[0].op) return "the operator";
        if (inter) {
            roots += r->root == MPI_ROOT;
            nulls += r->root == MPI_PROC_NULL;
            continue; /* the sides' signatures are the other group's to match */
        }
        if (r->root != all[0].root) return "the root";
        if (r->vform) continue; /* compared per pair (mpi_check_coll_v) */
        uint64_t sg[2] = {r->sside ? r->ssig : 0, r->rside ? r->rsig : 0};
        for (int k = 0; k < 2; k++) {
            if (!sg[k]) continue;
            if (!ref) ref = sg[k];
            if (!sig_eq(ref, sg[k]))
                return "the type signature of the data (basic types and counts)";
        }
    }
    /* (MPI_PROC_NULL is also what the calls without a root pass: -1) */
    if (inter && roots && (roots != 1 || roots + nulls != np)) return "the root";
    if (inter && !roots)
        for (int i = 1; i < np; i++)
            if (all[i].root != all[0].root) return "the root";
    return NULL;
}

/* Member 0's report of what the records disagree on; the rank ends. */
_Noreturn static void report(cr_job *job, MPI_Comm comm, bool inter, const char *what,
                             const coll_rec *all, int np)
{
    char cw[MPI_MAX_OBJECT_NAME + 24];
    mpi_check_comm_words(comm, cw, sizeof cw);
    fflush(stdout);
    fprintf(stderr, "courier: check: collective mismatch on %s%s: the ranks disagree on %s\n", cw,
            inter ? " (this group of the intercommunicator)" : "", what);
    const mpi_comm *c = mpi_comm_get(comm);
    for (int i = 0; i < np; i++) {
        if (i == 16 && np > 17) {
            fprintf(stderr, "  ... (%d ranks more)\n", np - 16);
            break;
        }
        char rw[400], jw[32] = ""; /* the job's rank too where the communicator's differs */
        rec_words(&all[i], rw, sizeof rw);
        int jr = c && i < c->g.size ? cr_group_rank(&c->g, i) : i;
        if (jr != i) snprintf(jw, sizeof jw, " (job rank %d)", jr);
        fprintf(stderr, "  rank %d%s: %s\n", i, jw, rw);
    }
    fprintf(stderr, "  every rank of a communicator must make the same collective calls in the "
                    "same order, with the same root and operator and matching type signatures "
                    "(MPI-4.1, chapter 6): make the ranks' calls agree\n");
    mpi_check_trace(job, "check: collective mismatch");
    mpi_check_end();
}

/* ---- the agreement's rounds ------------------------------------------------------------ */

/* The steps of the agreement's transfers in a schedule's tags (src/coll's
 * algorithms stay far below them): the records to member 0, member 0's to the
 * others (blocking), the pairs' signatures. */
#define CHECK_STEP 0xffd
#define ZERO_STEP 0xffc
#define PAIR_STEP 0xffe

bool mpi_check_coll_left(const cr_unexp *u, char *call, size_t len)
{
    coll_rec r;
    if ((u->tag & 0xfff) != CHECK_STEP || u->size != sizeof r || u->op != CR_OP_EAGER || !u->data)
        return false;
    memcpy(&r, u->data, sizeof r);
    if (!memchr(r.call, '\0', sizeof r.call) || strncmp(r.call, "MPI_", 4)) return false;
    if (call && r.root >= 0)
        snprintf(call, len, "%s (root %d)", r.call, (int)r.root);
    else if (call)
        snprintf(call, len, "%s", r.call);
    return true;
}

/* A v or w form's block between two members: its check value and count
 * (count < 0: no block between them). */
typedef struct pair_rec {
    uint64_t sig;
    int64_t count;
} pair_rec;

struct mpi_chknbc {
    coll_rec *all; /* member 0: every member's; the others: their own (all[0]) */
    int np, me;
    bool inter;
    bool blocking; /* member 0 sends its record to the others, which wait for it */
    coll_rec zero; /* member 0's record, at the others (blocking) */
    MPI_Comm comm;
    cr_sched *s;
    /* the v and w forms (NULL: none): per member what this rank sends it and
     * receives from it, and what that member says it sends here */
    pair_rec *out, *in, *got;
    int form;
};

/* A collective's operation and form from its name: 0 blocking, 1 nonblocking
 * ("MPI_Ibcast"), 2 persistent ("MPI_Bcast_init"); *op and *n: the name
 * without them ("Bcast", "bcast": compared without case). */
static int form_of(const char *call, const char **op, size_t *n)
{
    size_t len = strlen(call);
    bool init = len > 9 && !strcmp(call + len - 5, "_init"), nb = !strncmp(call, "MPI_I", 5);
    *op = call + 4 + (nb && !init);
    *n = len - 4 - (nb && !init) - (init ? 5 : 0);
    return init ? 2 : nb ? 1 : 0;
}

/* The same operation in two forms (blocking, nonblocking, persistent). */
static bool forms_differ(const char *a, const char *b)
{
    const char *oa, *ob;
    size_t na, nb;
    int fa = form_of(a, &oa, &na), fb = form_of(b, &ob, &nb);
    return fa != fb && na == nb && !strncasecmp(oa, ob, na);
}

static void judge_step(cr_job *job, void *arg)
{
    const mpi_chknbc *k = arg;
    const char *what = judge(k->all, k->np, k->inter);
    for (int i = 1; what && i < k->np; i++)
        if (forms_differ(k->all[0].call, k->all[i].call))
            what = "which collective they call: a blocking collective never matches a "
                   "nonblocking or persistent one, nor a nonblocking one a persistent one, even "
                   "of the same operation (MPI-4.1 sections 6.12 and 6.13)";
    if (what) report(job, k->comm, k->inter, what, k->all, k->np);
}

static void pairs_judge(cr_job *job, void *arg);

/* A blocking member other than 0: its record against member 0's. A
 * difference is member 0's to report (it judges every record); this member
 * moves no data and waits for the end. So the members that go on agree with
 * member 0, and so with each other. */
static void zero_step(cr_job *job, void *arg)
{
    const mpi_chknbc *k = arg;
    coll_rec two[2] = {k->zero, k->all[0]};
    if (judge(two, 2, k->inter)) mpi_check_wait_end(job);
}

/* The agreement's rounds over g: the records to member 0 (a blocking member
 * 0 sends its own to the others at the same time), the judgements, then the
 * pairs' signatures. */
static void rounds(cr_job *job, cr_sched *s, const cr_group *g, mpi_chknbc *k)
{
    if (k->me) {
        cr_sched_send(job, s, cr_group_rank(g, 0), CHECK_STEP, &k->all[0], sizeof(coll_rec));
        if (k->blocking)
            cr_sched_recv(job, s, cr_group_rank(g, 0), ZERO_STEP, &k->zero, sizeof(coll_rec));
        cr_sched_round_end(job, s);
        if (k->blocking) cr_sched_call(job, s, zero_step, k);
    } else {
        for (int i = 1; k->blocking && i < k->np; i++)
            cr_sched_send(job, s, cr_group_rank(g, i), ZERO_STEP, &k->all[0], sizeof(coll_rec));
        for (int i = 1; i < k->np; i++)
            cr_sched_recv(job, s, cr_group_rank(g, i), CHECK_STEP, &k->all[i], sizeof(coll_rec));
        cr_sched_round_end(job, s);
        cr_sched_call(job, s, judge_step, k);
    }
    cr_sched_round_end(job, s);
    if (!k->out) return;
    for (int i = 0; i < k->np; i++) {
        if (i != k->me && k->out[i].count >= 0)
            cr_sched_send(job, s, cr_group_rank(g, i), PAIR_STEP, &k->out[i], sizeof(pair_rec));
        if (i != k->me && k->in[i].count >= 0)
            cr_sched_recv(job, s, cr_group_rank(g, i), PAIR_STEP, &k->got[i], sizeof(pair_rec));
    }
    cr_sched_round_end(job, s);
    cr_sched_call(job, s, pairs_judge, k);
    cr_sched_round_end(job, s);
}

/* The tags of a nonblocking collective on c (mpi_nbc.c's): its sequence
 * number is the one this blocking call is about to take. */
#define NBC_TAGBITS 0x80000000u
#define NBC_SEQMASK 0x7ffffu

/* Run the agreement of a blocking call whose record is mine. */
static void agree_now(const mpi_cargs *a, const coll_rec *mine, mpi_chknbc *k)
{
    cr_job *job = a->job;
    mpi_comm *c = a->c;
    cr_sched s;
    if (c->inter)
        cr_sched_base(&s, a->call, c->g.ctx, CR_INTER_NB_TAGBITS, CR_INTER_SEQMASK, c->ig.seq,
                      c->g.trunc);
    else
        cr_sched_base(&s, a->call, c->g.ctx, NBC_TAGBITS, NBC_SEQMASK, c->g.seq, c->g.trunc);
    cr_sched_now(&s);
    k->np = c->size; /* on an intercommunicator: the local group */
    k->me = c->me;
    k->inter = c->inter;
    k->blocking = true;
    k->comm = a->comm;
    k->s = &s;
    k->all = calloc((size_t)(k->me ? 1 : k->np), sizeof *k->all);
    if (!k->all) cr_fatal(job, a->call, "out of memory for --check's collective records");
    k->all[0] = *mine;
    rounds(job, &s, &c->g, k);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
    free(k->all);
}

void mpi_check_coll(const mpi_cargs *a, int root, MPI_Op op, int scount, const mpi_type *ts,
                    int rcount, const mpi_type *tr)
{
    coll_rec mine;
    rec_make(a->job, &mine, a->call, root, op, scount, ts, rcount, tr);
    mpi_chknbc k = {0};
    agree_now(a, &mine, &k);
}

/* ---- the v and w forms' pairs ----------------------------------------------------------- */

/* Side d's block for member i: false where the side is absent. */
static bool side_at(const mpi_chkside *d, int i, int *count, const mpi_type **t)
{
    if (!d->t && !d->types) return false;
    *count = d->counts ? d->counts[i] : d->count;
    *t = d->types ? d->types[i] : d->t;
    return true;
}

static pair_rec pair_of(cr_job *job, int count, const mpi_type *t)
{
    return (pair_rec){t ? mpi_check_sig(job, t, (size_t)count, "") : 0, count};
}

/* k's pairs from v (arrays from alloc: the schedule's memory, or the heap). */
static void pairs_make(cr_job *job, mpi_chknbc *k, const mpi_chkv *v, pair_rec *mem)
{
    int np = k->np, me = k->me;
    k->out = mem;
    k->in = mem + np;
    k->got = mem + 2 * np;
    k->form = v->form;
    mpi_chkside snd = v->s;
    bool all = v->form == MPI_CHKV_ALLGATHER || v->form == MPI_CHKV_ALLTOALL;
    if (!snd.t && !snd.types && all) { /* MPI_IN_PLACE: sends what it receives */
        snd = v->r;
        if (v->form == MPI_CHKV_ALLGATHER && snd.counts) snd.count = snd.counts[me];
        if (v->form == MPI_CHKV_ALLGATHER) snd.counts = NULL;
    }
    for (int i = 0; i < np; i++) {
        int n;
        const mpi_type *t;
        bool to = all || (v->form == MPI_CHKV_GATHER ? i == v->root : me == v->root);
        bool from = all || (v->form == MPI_CHKV_GATHER ? me == v->root : i == v->root);
        k->out[i] = to && side_at(&snd, i, &n, &t) ? pair_of(job, n, t) : (pair_rec){0, -1};
        k->in[i] = from && side_at(&v->r, i, &n, &t) ? pair_of(job, n, t) : (pair_rec){0, -1};
        k->got[i] = (pair_rec){0, -1};
    }
    k->got[me] = k->out[me]; /* this rank's block to itself */
}

/* Each block this rank receives against what its sender says it sends. */
static void pairs_judge(cr_job *job, void *arg)
{
    const mpi_chknbc *k = arg;
    for (int i = 0; i < k->np; i++) {
        const pair_rec *g = &k->got[i], *w = &k->in[i];
        if (g->count < 0 || w->count < 0 || !g->sig || !w->sig) continue;
        if (sig_eq(g->sig, w->sig)) continue;
        const char *call = k->all[0].call;
        char cw[MPI_MAX_OBJECT_NAME + 24], gw[160], ww[160];
        mpi_check_comm_words(k->comm, cw, sizeof cw);
        side_words(gw, sizeof gw, "send count", g->sig, g->count);
        side_words(ww, sizeof ww, "receive count", w->sig, w->count);
        fflush(stdout);
        fprintf(stderr,
                "courier: check: type mismatch in %s on %s: rank %d sends count %lld of %s, "
                "rank %d receives count %lld of %s from it\n"
                "  rank %d: %s(%s to rank %d)\n"
                "  rank %d: %s(%s from rank %d)\n"
                "  the type signature a rank sends must match what the receiving rank's counts "
                "and datatype for it say (MPI-4.1, chapter 6): make rank %d's %s for rank %d "
                "and rank %d's receive counts and datatype for rank %d describe the same basic "
                "types and counts\n",
                call, cw, i, (long long)g->count, type_words(g->sig), k->me, (long long)w->count,
                type_words(w->sig), i, call, gw, k->me, k->me, call, ww, i, i,
                k->form == MPI_CHKV_SCATTER || k->form == MPI_CHKV_ALLTOALL
                    ? "send counts and datatype"
                    : "send count and datatype",
                k->me, k->me, i);
        mpi_check_trace(job, "check: collective type mismatch");
        mpi_check_end();
    }
}

/* The record of a v or w form: its root, and the sides that are one block. */
static void vrec_make(cr_job *job, coll_rec *r, const char *call, const mpi_chkv *v)
{
    bool s1 = v->s.t && !v->s.counts, r1 = v->r.t && !v->r.counts;
    rec_make(job, r, call, v->form == MPI_CHKV_GATHER || v->form == MPI_CHKV_SCATTER ? v->root : -1,
             MPI_OP_NULL, v->s.count, s1 ? v->s.t : NULL, v->r.count, r1 ? v->r.t : NULL);
    r->vform = 1;
}

/* One receive block of a v or w form: bytes [lo, hi) from the buffer, rank i's. */
typedef struct vblock {
    long long lo, hi;
    int i;
} vblock;

static int by_vlo(const void *x, const void *y)
{
    const vblock *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* A v or w form's receive blocks (intracommunicator) must not share a byte:
 * no location of a collective's receive buffer is written twice. Blocks of
 * types with holes are left out (two may interleave without sharing one). */
static void vblocks_check(const mpi_cargs *a, const mpi_chkside *r)
{
    if (!r->counts || !r->displs || (!r->t && !r->types)) return;
    int np = a->c->size, n = 0;
    vblock *b = malloc((size_t)np * sizeof *b);
    if (!b) cr_fatal(a->job, a->call, "out of memory for --check=coll");
    for (int i = 0; i < np; i++) {
        const mpi_type *t = r->types ? r->types[i] : r->t;
        if (r->counts[i] <= 0 || !t || !t->contig || !t->size) continue;
        long long off = r->types ? r->displs[i] : (long long)r->displs[i] * type_extent(t);
        b[n++] = (vblock){off, off + (long long)r->counts[i] * (long long)t->size, i};
    }
    qsort(b, (size_t)n, sizeof *b, by_vlo);
    int far = 0; /* the block reaching furthest so far */
    for (int k = 1; k < n; k++) {
        if (b[k].lo < b[far].hi) {
            const vblock *x = &b[far], *y = &b[k];
            if (x->i > y->i) { /* the lower rank first */
                const vblock *t = x;
                x = y;
                y = t;
            }
            char cw[MPI_MAX_OBJECT_NAME + 24];
            mpi_check_comm_words(a->comm, cw, sizeof cw);
            fflush(stdout);
            fprintf(stderr,
                    "courier: check: rank %d: %s on %s: its receive blocks from ranks %d and %d "
                    "overlap (bytes %lld..%lld and %lld..%lld of the receive buffer)\n"
                    "  a collective must not write any location of its receive buffer twice "
                    "(MPI-4.1, chapter 6): give each rank's block bytes of its own%s\n",
                    a->c->me, a->call, cw, x->i, y->i, x->lo, x->hi - 1, y->lo, y->hi - 1,
                    r->types ? " (this call's displacements are in bytes, not elements)" : "");
            mpi_check_trace(a->job, "check: receive blocks overlap");
            mpi_check_end();
        }
        if (b[k].hi > b[far].hi) far = k;
    }
    free(b);
}

void mpi_check_coll_v(const mpi_cargs *a, const mpi_chkv *v)
{
    if (!a->c->inter) vblocks_check(a, &v->r);
    coll_rec mine;
    vrec_make(a->job, &mine, a->call, v);
    mpi_chknbc k = {0};
    pair_rec *mem = NULL;
    if (!a->c->inter) {
        k.np = a->c->size;
        k.me = a->c->me;
        mem = calloc(3 * (size_t)k.np, sizeof *mem);
        if (!mem) cr_fatal(a->job, a->call, "out of memory for --check's collective records");
        pairs_make(a->job, &k, v, mem);
    }
    agree_now(a, &mine, &k);
    free(mem);
}

/* ---- nonblocking and persistent collectives ------------------------------------------- */

mpi_chknbc *mpi_check_coll_rec(cr_job *job, cr_sched *s, const mpi_comm *c, MPI_Comm comm,
                               const char *call, int root, MPI_Op op, int scount,
                               const mpi_type *ts, int rcount, const mpi_type *tr)
{
    mpi_chknbc *k = cr_sched_alloc(job, s, sizeof *k);
    *k = (mpi_chknbc){.np = c->size, .me = c->me, .inter = c->inter, .comm = comm, .s = s};
    k->all = cr_sched_alloc(job, s, (size_t)(k->me ? 1 : k->np) * sizeof(coll_rec));
    rec_make(job, &k->all[0], call, root, op, scount, ts, rcount, tr);
    return k;
}

void mpi_check_coll_set(cr_job *job, mpi_chknbc *k, const char *call, int root, MPI_Op op,
                        int scount, const mpi_type *ts, int rcount, const mpi_type *tr)
{
    rec_make(job, &k->all[0], call, root, op, scount, ts, rcount, tr);
}

void mpi_check_coll_pairs(const mpi_cargs *a, const mpi_chkv *v)
{
    mpi_chknbc *k = a->chk;
    if (!a->c->inter) vblocks_check(a, &v->r);
    vrec_make(a->job, &k->all[0], a->call, v);
    if (k->inter) return;
    pairs_make(a->job, k, v, cr_sched_alloc(a->job, k->s, 3 * (size_t)k->np * sizeof(pair_rec)));
}

void mpi_check_coll_round(cr_job *job, cr_sched *s, const cr_group *g, mpi_chknbc *k)
{
    rounds(job, s, g, k);
}

/* ---- interfaces without datatypes (MPL) ---------------------------------------------- */

typedef struct grp_rec {
    char call[32];
    int64_t root, len;
} grp_rec;

void cr_check_group_agree(cr_job *job, cr_group *g, const char *call, int root, long len,
                          const char *who, const char *group)
{
    grp_rec mine = {.root = root, .len = len};
    snprintf(mine.call, sizeof mine.call, "%s", call);
    grp_rec *all = calloc((size_t)g->size, sizeof *all);
    if (!all) cr_fatal(job, call, "out of memory for --check's collective records");
    cr_coll_allgather(job, g, call, &mine, all, sizeof mine);
    const char *what = NULL;
    for (int i = 1; i < g->size && !what; i++)
        what = strcmp(all[i].call, all[0].call) ? "which collective they call"
               : all[i].root != all[0].root     ? "the root"
               : all[i].len != all[0].len       ? "the length"
                                                : NULL;
    if (!what) {
        free(all);
        return;
    }
    if (g->me != 0) {
        free(all);
        mpi_check_wait_end(job);
    }
    fflush(stdout);
    fprintf(stderr, "courier: check: collective mismatch in %s: the %ss disagree on %s\n", group,
            who, what);
    for (int i = 0; i < g->size && i < 16; i++) {
        char args[64] = "";
        if (all[i].root >= 0) snprintf(args, sizeof args, "root %lld", (long long)all[i].root);
        if (all[i].len >= 0)
            snprintf(args + strlen(args), sizeof args - strlen(args), "%s%lld bytes",
                     args[0] ? ", " : "", (long long)all[i].len);
        fprintf(stderr, "  %s %d: %s(%s)\n", who, i, all[i].call, args);
    }
    if (g->size > 16) fprintf(stderr, "  ... (%d %ss more)\n", g->size - 16, who);
    fprintf(stderr,
            "  every %s of a group must make the same collective calls in the same order, "
            "with the same root and length: make the %ss' calls agree\n",
            who, who);
    free(all);
    mpi_check_trace(job, "check: collective mismatch");
    mpi_check_end();
}
