/* MPI nonblocking collectives (MPI-3.1 §5.12), their persistent forms (MPI-4.0
 * §6.13: built here once, started again at each MPI_Start; entry points in
 * mpi_pcoll.c) and MPI_Comm_idup: schedules that progress without the caller.
 *
 * A call checks its arguments as its blocking form does (mpi_coll.c), then
 * builds a schedule (src/coll/sched.c: rounds of send, receive, combine and
 * copy steps; a round starts once every transfer of the round before has
 * completed). Every collective on an intracommunicator is src/coll's builder
 * (cr_build_*), the very schedule its blocking form runs where neither the
 * collective area nor single copy serves, chosen by the same selector:
 * barrier, broadcast (binomial, pipeline, linear), reduce, allreduce
 * (recursive doubling or Rabenseifner), scan, gather(v), scatter(v),
 * all-gather (recursive doubling, ring), all-gather v (ring), all-to-all
 * (Bruck, pairwise, all at once, window) and all-to-all v; so results are
 * bit-identical to the blocking ones by construction. Exscan (the inclusive
 * prefix passed one member up) is src/coll's too; reduce-scatter is an
 * allreduce of which each member keeps its block, as MPI_Reduce_scatter.
 * MPI_Comm_idup is an all-reduce (AND) of the members' free context pairs
 * whose completion makes the communicator. On an intercommunicator every
 * collective is src/coll/coll_inter.c's builder (cr_build_inter_*), the
 * schedule its blocking form runs (mpi_nbc_inter.c); the neighbourhood
 * collectives are src/coll/coll_neighbor.c's exchange (cr_build_neighbor), as
 * their blocking forms (mpi_topo.c).
 *
 * Progress: the first round starts in the call. After that every cr_progress
 * advances the active schedules (the engine's background hook, nbc_bg): any MPI
 * call that polls, any wait, and the progress thread, which the first
 * nonblocking collective starts (COURIER_NBC_THREAD=0: none; by default none
 * when the ranks outnumber the CPUs), so a collective moves on while the
 * program computes and calls nothing. The request lives in
 * mpi_p2p.c's table (mpi_request_ext), so every wait and test form takes it;
 * its test advances the schedule too.
 *
 * Matching: the traffic goes in the communicator's collective context (ctx + 1)
 * like the blocking collectives', with tags that have bit 31 set (negative as
 * int32), which the blocking ones (CR_COLL_TAG) never have:
 * NBC_TAG(seq, step) = 1 << 31 | (seq mod 2^19) << 12 | step. seq is the
 * communicator's count of nonblocking and persistent collectives
 * (cr_group.nbseq), which such a collective takes at its start: it is the same
 * on every member, so collectives outstanding at once never share a tag; step
 * tells the transfers of one collective apart as the blocking algorithms' step
 * does (and per pair of members, transfers with one tag are posted in the same
 * order on both sides). The blocking collectives count apart (cr_group.seq),
 * as Open MPI's and MPICH's tags do: MPI requires blocking and nonblocking
 * collectives in the same order on every member, but programs that start a
 * nonblocking one before a barrier on one rank and after it on another (mpi4py's
 * emulated MPI_Comm_iagree test) work there, and so here. Under --check=coll
 * both take cr_group.seq, so that the agreement (mpi_check_coll.c) sees such an
 * order and reports it. On an intercommunicator the counts are ig's (both
 * groups'), and the tags are CR_INTER_NB_TAGBITS's (coll.h: bits 31 and 30
 * set), which its blocking collectives' never have.
 *
 * Invariants:
 *  - what a schedule reads from the user's buffers into its own (data of a
 *    non-contiguous datatype packed, a reduction's input copied) is read at
 *    each start (the pre list: in the call for a nonblocking one, at every
 *    MPI_Start for a persistent one), and unpacked when it completes (the fin
 *    list); a datatype packed, unpacked into, or given to a user operation, is
 *    held (reference) until then; every temporary is the schedule's
 *    (cr_sched_alloc) and freed at completion; a persistent schedule keeps
 *    all of it (and its tags, fixed at the _init call) until its request is
 *    freed; under --check=buffers a contiguous receive side is written into
 *    a copy (mpi_chk_nbc_rbuf) that reaches the program's buffer only when
 *    a wait or test returns the completion (nbc_test);
 *  - peers are job ranks resolved in the call: freeing the communicator while a
 *    schedule runs does not disturb it;
 *  - a schedule completes exactly once a start (nbc_finish), on whichever thread
 *    advances it, under the engine lock; the request's free releases it
 *    (MPI_Request_free on an active one: it completes in the background, then
 *    mpi_p2p.c frees it);
 *  - a call that fails has taken no sequence number and sent nothing. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "mpi_nbc_impl.h"

#define NBC_TAG(seq, step)                                                                         \
    ((int32_t)(0x80000000u | ((uint32_t)(seq)&0x7ffffu) << 12 | ((unsigned)(step)&0xfffu)))
/* The schedules started and not yet complete, oldest first, and the
 * progress hook's state: mpi_g.nbc (mpi_impl.h). Released schedules are kept
 * for the next calls, at most NBC_SPARE: a schedule is 2.6 KB, whose calloc
 * and free were a sixth of a small MPI_Ibcast's instructions at its root. */
#define NBC_SPARE 4
#define N (mpi_g.nbc)

/* ---- the request hooks ------------------------------------------------------------------- */

static bool nbc_test(cr_job *job, void *obj, MPI_Status *st);
static void nbc_free(cr_job *job, void *obj);

/* Each kind: its nonblocking call and its persistent form (MPI-4.0 §6.13; MPI_Comm_idup has
 * none); I_NEIGHBOR + which: the five neighbourhood ones (mpi_nbc_neighbor). */
#define NBC_KINDS(X)                                                                               \
    X(BARRIER, "MPI_Ibarrier", "MPI_Barrier_init")                                                 \
    X(BCAST, "MPI_Ibcast", "MPI_Bcast_init")                                                       \
    X(REDUCE, "MPI_Ireduce", "MPI_Reduce_init")                                                    \
    X(ALLREDUCE, "MPI_Iallreduce", "MPI_Allreduce_init")                                           \
    X(GATHER, "MPI_Igather", "MPI_Gather_init")                                                    \
    X(GATHERV, "MPI_Igatherv", "MPI_Gatherv_init")                                                 \
    X(SCATTER, "MPI_Iscatter", "MPI_Scatter_init")                                                 \
    X(SCATTERV, "MPI_Iscatterv", "MPI_Scatterv_init")                                              \
    X(ALLGATHER, "MPI_Iallgather", "MPI_Allgather_init")                                           \
    X(ALLGATHERV, "MPI_Iallgatherv", "MPI_Allgatherv_init")                                        \
    X(ALLTOALL, "MPI_Ialltoall", "MPI_Alltoall_init")                                              \
    X(ALLTOALLV, "MPI_Ialltoallv", "MPI_Alltoallv_init")                                           \
    X(REDUCE_SCATTER, "MPI_Ireduce_scatter", "MPI_Reduce_scatter_init")                            \
    X(REDUCE_SCATTER_BLOCK, "MPI_Ireduce_scatter_block", "MPI_Reduce_scatter_block_init")          \
    X(SCAN, "MPI_Iscan", "MPI_Scan_init")                                                          \
    X(EXSCAN, "MPI_Iexscan", "MPI_Exscan_init")                                                    \
    X(COMM_IDUP, "MPI_Comm_idup", "MPI_Comm_idup")                                                 \
    X(ALLTOALLW, "MPI_Ialltoallw", "MPI_Alltoallw_init")                                           \
    X(NEIGHBOR, "MPI_Ineighbor_allgather", "MPI_Neighbor_allgather_init")                          \
    X(NEIGHBOR_AGV, "MPI_Ineighbor_allgatherv", "MPI_Neighbor_allgatherv_init")                    \
    X(NEIGHBOR_A2A, "MPI_Ineighbor_alltoall", "MPI_Neighbor_alltoall_init")                        \
    X(NEIGHBOR_A2AV, "MPI_Ineighbor_alltoallv", "MPI_Neighbor_alltoallv_init")                     \
    X(NEIGHBOR_A2AW, "MPI_Ineighbor_alltoallw", "MPI_Neighbor_alltoallw_init")
#define KIND_ENUM(k, i, p) I_##k,
enum { NBC_KINDS(KIND_ENUM) };
#define KIND_IOPS(k, i, p) {.what = i, .test = nbc_test, .free = nbc_free},
#define KIND_POPS(k, i, p) {.what = p, .test = nbc_test, .free = nbc_free},
static const mpi_ext_ops nbc_ops[] = {NBC_KINDS(KIND_IOPS)};
static const mpi_ext_ops pcoll_ops[] = {NBC_KINDS(KIND_POPS)};

/* ---- running a schedule ------------------------------------------------------------------ */

static void *xmalloc(cr_job *job, const char *call, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) cr_fatal(job, call, "out of memory for %zu bytes", n);
    return p;
}

static void idup_make(cr_job *job, nbc *s);
static void idup_unreserve(nbc *s, uint64_t keep);

/* Every round is done: unpack, make what the call makes, free the temporaries.
 */
static void nbc_finish(cr_job *job, nbc *s)
{
    for (int i = 0; i < s->nfin; i++) {
        nfin *f = &s->fin[i];
        if (f->type >= 0)
            mpi_unpack_data(mpi_type_at(f->type), f->from, f->bytes, f->to, f->count);
        else if (f->bytes && f->to != f->from)
            memmove(f->to, f->from, f->bytes);
        if (f->type >= 0 && !s->persist) mpi_type_unref(f->type);
    }
    s->done = true;
    if (s->persist) return; /* kept for the next start */
    free(s->fin);
    s->fin = NULL;
    s->nfin = 0;
    if (s->u.type >= 0) mpi_type_unref(s->u.type);
    s->u.type = -1;
    if (s->kind == I_COMM_IDUP) idup_make(job, s);
    cr_sched_free(job, &s->s);
}

/* Move s on as far as its transfers allow; how many rounds ended. */
static int nbc_advance(cr_job *job, nbc *s)
{
    if (s->done) return 0;
    int made = cr_sched_advance(job, &s->s);
    if (s->s.done) nbc_finish(job, s);
    return made;
}

/* Tell the engine that schedules are under way (its progress thread moves
 * them only then; the hook's *pending says when they are over). */
static void nbc_pending(cr_job *job)
{
    if (N.active) job->bg_pending = true;
}

/* The engine's background hook: advance every active schedule. */
static int nbc_bg(cr_job *job, bool *pending)
{
    int made = 0;
    for (nbc **pp = &N.active; *pp;) {
        nbc *s = *pp;
        made += nbc_advance(job, s);
        if (s->done) {
            *pp = s->next;
            s->active = false;
        } else {
            pp = &s->next;
        }
    }
    *pending |= N.active != NULL;
    return made;
}

static bool nbc_test(cr_job *job, void *obj, MPI_Status *st)
{
    nbc *s = obj;
    if (!s->done) nbc_advance(job, s);
    if (!s->done) return false;
    mpi_chk_nbc_end(job, s); /* --check=buffers: unchanged since the start? then the results */
    if (st && st != MPI_STATUS_IGNORE)
        *st = (MPI_Status){.MPI_SOURCE = MPI_ANY_SOURCE,
                           .MPI_TAG = MPI_ANY_TAG,
                           .MPI_ERROR = s->trunc.set ? MPI_ERR_TRUNCATE : MPI_SUCCESS};
    return true;
}

static void nbc_release(cr_job *job, nbc *s)
{
    mpi_chk_nbc_drop(job, s);               /* --check=buffers */
    if (s->ireserved) idup_unreserve(s, 0); /* an idup that never started */
    for (int i = 0; i < s->nfin; i++)
        if (s->fin[i].type >= 0) mpi_type_unref(s->fin[i].type);
    for (int i = 0; i < s->npre; i++)
        if (s->pre[i].type >= 0) mpi_type_unref(s->pre[i].type);
    free(s->fin);
    free(s->pre);
    if (s->u.type >= 0) mpi_type_unref(s->u.type);
    cr_sched_free(job, &s->s);
    free(s->iranks);
    free(s->irranks);
    free(s->imap);
    if (N.nspare < NBC_SPARE) {
        s->next = N.spare;
        N.spare = s;
        N.nspare++;
    } else {
        free(s);
    }
}

static void nbc_free(cr_job *job, void *obj)
{
    nbc *s = obj;
    if (s->active) { /* not complete (mpi_p2p.c frees complete ones only) */
        for (nbc **pp = &N.active; *pp; pp = &(*pp)->next)
            if (*pp == s) {
                *pp = s->next;
                break;
            }
        nbc_pending(job);
    }
    nbc_release(job, s);
}

/* ---- building a schedule ----------------------------------------------------------------- */

/* The call's schedule, empty, in b->s (with --check=coll's record of the call,
 * mpi_check.h). */
static void make(nb *b, int kind, bool persist)
{
    nbc *s = N.spare;
    if (s) {
        N.spare = s->next;
        N.nspare--;
    } else if (!(s = malloc(sizeof *s))) {
        cr_fatal(b->job, b->call, "out of memory");
    }
    /* every field zero but the schedule's, which cr_sched_init sets */
    memset(s, 0, offsetof(nbc, s));
    memset((char *)s + offsetof(nbc, u), 0, sizeof *s - offsetof(nbc, u));
    s->kind = kind;
    s->persist = persist;
    if (b->c->inter) /* on its ig.seq, bit 30 set (coll.h's cr_inter) */
        cr_sched_init(&s->s, b->call, b->c->g.ctx, CR_INTER_NB_TAGBITS, CR_INTER_SEQMASK, 0);
    else /* NBC_TAG's */
        cr_sched_init(&s->s, b->call, b->c->g.ctx, 0x80000000u, 0x7ffffu, 0);
    s->s.trunc = &s->trunc;
    s->u.type = -1;
    b->s = s;
    mpi_chk_nbc_begin(b, &s->s);
}

static int begin(nb *b, int kind, MPI_Comm comm, MPI_Request *req)
{
    bool persist = kind & MPI_NBC_PERSIST;
    kind &= ~MPI_NBC_PERSIST;
    b->call = (persist ? pcoll_ops : nbc_ops)[kind].what;
    b->comm = comm;
    b->s = NULL;
    b->chk = NULL;
    b->seq_taken = false;
    b->job = mpi_enter(b->call);
    int rc = mpi_comm_check(b->job, b->call, comm, &b->c);
    if (!rc && b->c->inter && (kind == I_SCAN || kind == I_EXSCAN))
        rc = mpi_cfail(b, MPI_ERR_COMM, "scans are not defined on intercommunicators");
    if (!rc && !req) rc = mpi_cfail(b, MPI_ERR_REQUEST, "request is NULL");
    if (rc) return rc;
    make(b, kind, persist);
    return 0;
}

int mpi_nb_done(nb *b, int rc)
{
    if (rc && b->s) {
        nbc_release(b->job, b->s);
        b->s = NULL;
    }
    return mpi_leave(b->job, rc);
}

void *mpi_nb_alloc(nb *b, size_t len)
{
    return cr_sched_alloc(b->job, &b->s->s, len);
}

uint32_t *mpi_nb_counter(const nb *b)
{
    cr_group *g = b->c->inter ? &b->c->ig : &b->c->g;
    return mpi_chk_on(b->job, MPI_CHK_COLL) ? &g->seq : &g->nbseq;
}

/* The collective's sequence number, taken at the first use from
 * mpi_nb_counter's count. */
uint32_t mpi_nb_seq(nb *b)
{
    if (!b->seq_taken) {
        b->seq = (*mpi_nb_counter(b))++;
        b->seq_taken = true;
        b->s->s.seq = b->seq;
        if (b->chk) mpi_check_coll_round(b->job, &b->s->s, &b->c->g, b->chk); /* comes first */
    }
    return b->seq;
}

/* The peers of the v and w forms: the remote group on an intercommunicator. */
static int nb_peers(const nb *b)
{
    return b->c->inter ? b->c->rsize : b->c->size;
}

/* A transfer with member r of the remote group. */
static void nb_xsend(nb *b, int r, int step, const void *buf, size_t len)
{
    mpi_nb_seq(b);
    cr_sched_send(b->job, &b->s->s, b->c->rranks[r], step, buf, len);
}

static void nb_xrecv(nb *b, int r, int step, void *buf, size_t len)
{
    mpi_nb_seq(b);
    cr_sched_recv(b->job, &b->s->s, b->c->rranks[r], step, buf, len);
}

static void nb_combine(nb *b, const void *lo, const void *hi, void *out, size_t count)
{
    cr_sched_combine(b->job, &b->s->s, lo, hi, out, count);
}

/* End the round under construction (an empty one is dropped). */
static void nb_round(nb *b)
{
    cr_sched_round(b->job, &b->s->s);
}

/* At completion, bytes at 'from' go to 'to': unpacked as count instances of t
 * when t is given, else copied. */
static void fin_add(nb *b, nfin **list, int *n, int *cap, mpi_type *t, const void *from,
                    size_t bytes, void *to, size_t count)
{
    if (!t && (!bytes || from == to)) return;
    if (*n == *cap) {
        int ncap = *cap ? 2 * *cap : 4;
        nfin *l = realloc(*list, (size_t)ncap * sizeof *l);
        if (!l) cr_fatal(b->job, b->call, "out of memory");
        *list = l;
        *cap = ncap;
    }
    if (t) t->refs++;
    (*list)[(*n)++] = (nfin){t ? t->idx : -1, from, bytes, to, count};
}

void mpi_nb_fin(nb *b, mpi_type *t, const void *from, size_t bytes, void *to, size_t count)
{
    fin_add(b, &b->s->fin, &b->s->nfin, &b->s->fincap, t, from, bytes, to, count);
}

/* At each start, before the first round: count instances of t at 'from' (the
 * user's buffer) packed to 'to', or (t NULL) its 'bytes' copied; so a
 * persistent collective takes the data the buffer holds at each MPI_Start. */
void mpi_nb_pre(nb *b, mpi_type *t, const void *from, size_t count, void *to, size_t bytes)
{
    fin_add(b, &b->s->pre, &b->s->npre, &b->s->precap, t, from, bytes, to, count);
}

/* The progress thread: started by the first nonblocking collective (the lock,
 * a no-op until now, is taken once it exists, so the caller holds it as
 * mpi_enter's callers do; under MPI_THREAD_MULTIPLE the caller holds it
 * already). Not when the ranks outnumber the CPUs, unless COURIER_NBC_THREAD=1
 * asks for it: there is no idle core for it there, and each time it woke (a
 * start, an arrival while it slept beside the program's wait) it took the core
 * from a rank: 4 ranks on 2 cores, osu_ibcast 8 B 3.18 us with it, 0.66
 * without; 9.4 context switches a call against 4.3. */
bool mpi_nbc_thread_wanted(const cr_job *job)
{
    const char *v = getenv("COURIER_NBC_THREAD");
    return v ? strcmp(v, "0") != 0 : !job->oversub;
}

static void nb_thread(cr_job *job)
{
    if (!N.env_read) {
        N.no_thread = !mpi_nbc_thread_wanted(job);
        N.env_read = true;
    }
    if (!N.hooked) {
        cr_bg_add(job, nbc_bg);
        N.hooked = true;
    }
    if (job->progress_on || N.no_thread) return;
    bool held = job->threaded;
    cr_progress_start(job);
    if (!held) cr_lock(job);
}

/* The schedule is built: make its request and start its first round; an MPI
 * code (a failure is reported and the schedule released). */
static int nbc_go(cr_job *job, void *obj);
static int launch_in(nb *b, MPI_Request *req)
{
    nbc *s = b->s;
    mpi_nb_seq(b);
    nb_round(b);
    int rc = s->persist
                 ? mpi_request_ext_persistent(b->job, b->comm, &pcoll_ops[s->kind], nbc_go, s, req)
                 : mpi_request_ext(b->job, b->comm, &nbc_ops[s->kind], s, req);
    if (rc) {
        if (b->seq_taken) (*mpi_nb_counter(b))--;
        nbc_release(b->job, b->s);
        b->s = NULL;
        return rc;
    }
    b->s = NULL;
    return s->persist ? MPI_SUCCESS : nbc_go(b->job, s); /* persistent: at each MPI_Start */
}

/* Start s (a persistent one again, once done): take the inputs, start the
 * first round and move on as far as it goes; unless complete at once, on the
 * active list (where a persistent one done but not yet taken off may still
 * be). */
static int nbc_go(cr_job *job, void *obj)
{
    nbc *s = obj;
    nb_thread(job);
    s->done = false;
    s->trunc = (cr_trunc){0};
    mpi_chk_nbc_start(job, s); /* --check=buffers: the buffers' checksums */
    for (int i = 0; i < s->npre; i++) {
        const nfin *f = &s->pre[i];
        if (f->type >= 0)
            mpi_pack_data(mpi_type_at(f->type), f->from, f->count, f->to);
        else
            memmove(f->to, f->from, f->bytes);
    }
    cr_sched_start(job, &s->s);
    nbc_advance(job, s);
    if (s->done) return MPI_SUCCESS;
    if (!s->active) {
        nbc **pp = &N.active;
        while (*pp) pp = &(*pp)->next;
        *pp = s;
        s->next = NULL; /* a persistent one may hold its old link */
        s->active = true;
    }
    job->bg_pending = true; /* the progress thread moves it while the program computes */
    cr_bg_kick(job);
    return MPI_SUCCESS;
}

/* ... and leave the call. */
int mpi_nb_launch(nb *b, MPI_Request *req)
{
    return mpi_leave(b->job, launch_in(b, req));
}

/* ---- packing (the argument checks are mpi_collchk.c's, shared with mpi_coll.c) ----------- */

/* Bytes of count instances of t at buf, packed now when t is not contiguous. */
const char *mpi_nb_bytes_in(nb *b, const mpi_type *t, const void *buf, size_t count)
{
    if (t->contig) return buf;
    char *p = mpi_nb_alloc(b, count * t->size);
    mpi_nb_pre(b, (mpi_type *)t, buf, count, p, 0);
    return p;
}

/* Where count instances of t are to arrive: buf (under --check=buffers a
 * copy, mpi_chk_nbc_rbuf), or staging unpacked at completion. */
char *mpi_nb_bytes_out(nb *b, mpi_type *t, void *buf, size_t count)
{
    if (t->contig) return mpi_chk_nbc_rbuf(b, buf, count * t->size);
    char *p = mpi_nb_alloc(b, count * t->size);
    mpi_nb_fin(b, t, p, count * t->size, buf, count);
    return p;
}

/* ---- barrier and broadcast --------------------------------------------------------------- */

int mpi_nbc_barrier(int p, MPI_Comm comm, MPI_Request *req)
{
    nb b;
    int rc = begin(&b, I_BARRIER | p, comm, req);
    if (!rc && b.c->inter) return mpi_nbx_barrier(&b, req);
    if (rc) return mpi_nb_done(&b, rc);
    mpi_nb_seq(&b);
    cr_build_barrier(b.job, &b.s->s, &b.c->g);
    return mpi_nb_launch(&b, req);
}

/* Binomial tree from root (src/coll's). */
static void sched_bcast(nb *b, char *data, size_t len, int root, int step)
{
    mpi_nb_seq(b);
    cr_build_bcast(b->job, &b->s->s, &b->c->g, data, len, root, step);
}

int mpi_nbc_bcast(int p, void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                  MPI_Request *req)
{
    nb b;
    mpi_type *t = NULL;
    int rc = begin(&b, I_BCAST | p, comm, req);
    if (!rc && b.c->inter) return mpi_nbx_bcast(&b, buf, count, dt, root, req);
    if (!rc) rc = mpi_chk_bcast(&b, buf, count, dt, root, &t);
    if (rc) return mpi_nb_done(&b, rc);
    size_t cnt = (size_t)count;
    char *data = b.c->me == root ? (char *)mpi_nb_bytes_in(&b, t, buf, cnt)
                                 : mpi_nb_bytes_out(&b, t, buf, cnt);
    mpi_nb_seq(&b);
    cr_build_bcast_msg(b.job, &b.s->s, &b.c->g, data, cnt * t->size, root, CR_ALG_AUTO);
    return mpi_nb_launch(&b, req);
}

/* ---- reductions -------------------------------------------------------------------------- */

/* The layer's out = lo op hi from MPI's inoutvec = invec op inoutvec (as
 * mpi_coll.c's op_user, with the extent kept here: the datatype may be freed
 * while the schedule runs). */
static void op_user(const void *lo, const void *hi, void *out, size_t n, const void *arg)
{
    const nuser *u = arg;
    memcpy(out, hi, n * u->ext); /* out never aliases lo or hi (alias_ok is false) */
    MPI_Datatype dt = u->x.dt;
    if (u->x.userc) { /* MPI_Op_create_c's */
        MPI_Count clen = (MPI_Count)n;
        u->x.userc((void *)lo, out, &clen, &dt);
        return;
    }
    int len = (int)n;
    u->x.user((void *)lo, out, &len, &dt);
}

/* The reduction of (op, t): as mpi_redop, the wrapper of a user operation
 * living in the schedule. */
int mpi_nb_redop(nb *b, MPI_Op op, mpi_type *t, size_t count, bool *packed, size_t *n)
{
    nbc *s = b->s;
    int rc = mpi_redop(b->job, b->comm, b->call, op, t, count, &s->s.o, &s->u.x, packed, n);
    if (rc) return rc;
    if (s->s.o.arg == &s->u.x) {
        s->u.ext = s->s.o.elem;
        s->s.o.fn = op_user;
        s->s.o.arg = &s->u;
        s->u.type = t->idx;
        t->refs++;
    }
    cr_redop o = s->s.o;
    cr_sched_redop(b->job, &s->s, &o, *n);
    return 0;
}

/* src/coll's algorithms: the blocking collectives' schedules. */
static void sched_reduce(nb *b, char *acc, size_t count, int root, char *res)
{
    mpi_nb_seq(b);
    cr_build_reduce(b->job, &b->s->s, &b->c->g, NULL, acc, count, root, res);
}

static void sched_allreduce(nb *b, const char *in, char *acc, size_t count)
{
    mpi_nb_seq(b);
    cr_build_allreduce(b->job, &b->s->s, &b->c->g, in, acc, count);
}

static void sched_scan(nb *b, char *acc, size_t count)
{
    mpi_nb_seq(b);
    cr_build_scan(b->job, &b->s->s, &b->c->g, acc, count);
}

int mpi_nbc_reduce(int p, int form, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                   MPI_Op op, int root, MPI_Comm comm, MPI_Request *req)
{
    static const int kind[] = {I_REDUCE, I_ALLREDUCE, I_SCAN, I_EXSCAN}; /* by form */
    nb b;
    mpi_type *t = NULL;
    int rc = begin(&b, kind[form] | p, comm, req);
    if (!rc && b.c->inter)
        return mpi_nbx_reduce(&b, sbuf, rbuf, count, dt, op,
                              form == R_ALLREDUCE ? MPI_NBX_ALL : root, req);
    if (!rc) rc = mpi_chk_reduce(&b, form == R_REDUCE, sbuf, rbuf, count, dt, root, &t);
    bool recv_here = !rc && (form != R_REDUCE || b.c->me == root);
    bool inplace = sbuf == MPI_IN_PLACE;
    bool packed = false;
    size_t n = 0;
    if (!rc) rc = mpi_nb_redop(&b, op, t, (size_t)count, &packed, &n);
    if (rc) return mpi_nb_done(&b, rc);
    mpi_chk_nbc(&b, form == R_REDUCE ? root : -1, op, count, t, count, t);
    size_t len = n * b.s->s.o.elem, cnt = (size_t)count;
    const void *src = inplace ? rbuf : sbuf;
    /* acc: this member's data, then the result (packed when the type needs it);
     * the receive buffer itself where the result ends there as it is (MPI lets
     * the operation use it until completion); res: where a contiguous result
     * lands (under --check=buffers a copy of rbuf, mpi_chk_nbc_rbuf) */
    bool in_rbuf = !packed && (form == R_ALLREDUCE || form == R_SCAN);
    bool lands = recv_here && !packed && (form != R_EXSCAN || b.c->me > 0);
    char *res = lands ? mpi_chk_nbc_rbuf(&b, rbuf, len) : NULL;
    char *acc = in_rbuf ? res : mpi_nb_alloc(&b, len);
    /* an allreduce's first step reads a contiguous input where it is */
    bool reads_src = form == R_ALLREDUCE && !packed;
    if (!reads_src) mpi_nb_pre(&b, packed ? t : NULL, src, cnt, acc, len);
    mpi_nb_seq(&b);
    switch (form) {
    case R_REDUCE:
        sched_reduce(&b, acc, n, root, res ? res : acc);
        if (recv_here && packed) mpi_nb_fin(&b, t, acc, len, rbuf, cnt);
        break;
    case R_ALLREDUCE:
        sched_allreduce(&b, reads_src ? src : NULL, acc, n);
        if (!in_rbuf) mpi_nb_fin(&b, packed ? t : NULL, acc, len, rbuf, cnt);
        break;
    case R_SCAN:
        sched_scan(&b, acc, n);
        if (!in_rbuf) mpi_nb_fin(&b, packed ? t : NULL, acc, len, rbuf, cnt);
        break;
    default: { /* exscan: src/coll's, the inclusive prefix passed one member up */
        char *in = b.c->me > 0 ? (packed ? mpi_nb_alloc(&b, len) : res) : NULL;
        cr_build_exscan(b.job, &b.s->s, &b.c->g, acc, n, in);
        if (in && packed) mpi_nb_fin(&b, t, in, len, rbuf, cnt);
        break;
    }
    }
    return mpi_nb_launch(&b, req);
}

/* Member i keeps counts[i] instances of the reduction of sum(counts), as
 * MPI_Reduce_scatter makes them: recursive halving (src/coll's
 * cr_build_reduce_scatter). */
int mpi_nbc_reduce_scatter(int p, const void *sbuf, void *rbuf, const int *counts, bool is_block,
                           int block, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    nb b;
    mpi_type *t = NULL;
    int rc = begin(&b, (is_block ? I_REDUCE_SCATTER_BLOCK : I_REDUCE_SCATTER) | p, comm, req);
    if (!rc && b.c->inter)
        return mpi_nbx_reduce_scatter(&b, sbuf, rbuf, counts, is_block, block, dt, op, req);
    size_t total = 0, off = 0;
    if (!rc)
        rc = mpi_chk_reduce_scatter(&b, sbuf, rbuf, counts, is_block, block, dt, &t, &total, &off);
    if (rc) return mpi_nb_done(&b, rc);
    size_t mine = (size_t)(is_block ? block : counts[b.c->me]);
    bool inplace = sbuf == MPI_IN_PLACE;
    bool packed = false;
    size_t n = 0;
    if (!rc) rc = mpi_nb_redop(&b, op, t, total, &packed, &n);
    if (rc) return mpi_nb_done(&b, rc);
    mpi_chk_nbc(&b, -1, op, 0, NULL, 0, NULL);
    size_t len = n * b.s->s.o.elem, per = total ? len / total : 0; /* bytes per instance */
    const char *src = inplace ? rbuf : sbuf;
    int np = b.c->size;
    size_t *bo = mpi_nb_alloc(&b, (size_t)(np + 1) * sizeof *bo);
    mpi_reduce_scatter_blocks(bo, np, counts, is_block, block, total ? n / total : 0);
    const char *in = src;
    if (packed) {
        char *pk = mpi_nb_alloc(&b, len);
        mpi_nb_pre(&b, t, src, total, pk, len);
        in = pk;
    }
    char *dst = packed ? rbuf : mpi_chk_nbc_rbuf(&b, rbuf, mine * per);
    char *out = packed || inplace ? mpi_nb_alloc(&b, mine * per) : dst; /* in place: rbuf is read */
    mpi_nb_seq(&b);
    cr_build_reduce_scatter(b.job, &b.s->s, &b.c->g, in, out, bo);
    if (out != dst) mpi_nb_fin(&b, packed ? t : NULL, out, mine * per, dst, mine);
    return mpi_nb_launch(&b, req);
}

/* ---- gather, scatter, allgather, alltoall ------------------------------------------------ */

int mpi_nbc_gather(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    nb b;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = begin(&b, I_GATHER | p, comm, req);
    if (!rc && b.c->inter)
        return mpi_nbx_gather(&b, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, root, req);
    if (!rc) rc = mpi_chk_gather(&b, sbuf, scount, stype, rbuf, rcount, rtype, root, &ts, &tr);
    if (rc) return mpi_nb_done(&b, rc);
    bool isroot = b.c->me == root, inplace = sbuf == MPI_IN_PLACE;
    mpi_nb_seq(&b);
    if (!isroot) {
        const char *s = mpi_nb_bytes_in(&b, ts, sbuf, (size_t)scount);
        cr_build_gather(b.job, &b.s->s, &b.c->g, s, NULL, (size_t)scount * ts->size, root);
        return mpi_nb_launch(&b, req);
    }
    size_t cnt = (size_t)rcount, blk = cnt * tr->size;
    char *r = mpi_nb_bytes_out(&b, tr, rbuf, cnt * (size_t)b.c->size),
         *own = r + (size_t)root * blk;
    if (inplace && r != rbuf)
        mpi_nb_pre(&b, tr, (char *)rbuf + root * cnt * (size_t)type_extent(tr), cnt, own, 0);
    const char *s = inplace ? NULL : mpi_nb_bytes_in(&b, ts, sbuf, (size_t)scount);
    cr_build_gather(b.job, &b.s->s, &b.c->g, s, r, blk, root);
    return mpi_nb_launch(&b, req);
}

int mpi_nbc_scatter(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    nb b;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = begin(&b, I_SCATTER | p, comm, req);
    if (!rc && b.c->inter)
        return mpi_nbx_scatter(&b, sbuf, scount, NULL, NULL, stype, rbuf, rcount, rtype, root, req);
    if (!rc) rc = mpi_chk_scatter(&b, sbuf, scount, stype, rbuf, rcount, rtype, root, &ts, &tr);
    if (rc) return mpi_nb_done(&b, rc);
    bool isroot = b.c->me == root, inplace = rbuf == MPI_IN_PLACE;
    mpi_nb_seq(&b);
    if (!isroot) {
        char *r = mpi_nb_bytes_out(&b, tr, rbuf, (size_t)rcount);
        cr_build_scatter(b.job, &b.s->s, &b.c->g, NULL, r, (size_t)rcount * tr->size, root);
        return mpi_nb_launch(&b, req);
    }
    size_t blk = (size_t)scount * ts->size;
    const char *s = mpi_nb_bytes_in(&b, ts, sbuf, (size_t)scount * (size_t)b.c->size);
    char *r = inplace ? NULL : mpi_nb_bytes_out(&b, tr, rbuf, (size_t)rcount);
    cr_build_scatter(b.job, &b.s->s, &b.c->g, s, r, blk, root);
    return mpi_nb_launch(&b, req);
}

int mpi_nbc_allgather(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    nb b;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = begin(&b, I_ALLGATHER | p, comm, req);
    if (!rc && b.c->inter)
        return mpi_nbx_allgather(&b, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, req);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (!rc) rc = mpi_chk_blocks(&b, sbuf, scount, stype, rbuf, rcount, rtype, &ts, &tr);
    if (rc) return mpi_nb_done(&b, rc);
    int me = b.c->me;
    size_t cnt = (size_t)rcount, blk = cnt * tr->size;
    char *r = mpi_nb_bytes_out(&b, tr, rbuf, cnt * (size_t)b.c->size), *own = r + (size_t)me * blk;
    if (inplace && r != rbuf)
        mpi_nb_pre(&b, tr, (char *)rbuf + me * cnt * (size_t)type_extent(tr), cnt, own, 0);
    const char *s = inplace ? NULL : mpi_nb_bytes_in(&b, ts, sbuf, (size_t)scount);
    mpi_nb_seq(&b);
    cr_build_allgather(b.job, &b.s->s, &b.c->g, s, r, blk, CR_ALG_AUTO);
    return mpi_nb_launch(&b, req);
}

int mpi_nbc_alltoall(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    nb b;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = begin(&b, I_ALLTOALL | p, comm, req);
    if (!rc && b.c->inter)
        return mpi_nbx_alltoall(&b, sbuf, scount, NULL, NULL, stype, rbuf, rcount, NULL, NULL,
                                rtype, req);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (!rc) rc = mpi_chk_blocks(&b, sbuf, scount, stype, rbuf, rcount, rtype, &ts, &tr);
    if (rc) return mpi_nb_done(&b, rc);
    int np = b.c->size;
    size_t blk = (size_t)rcount * tr->size, all = (size_t)np * (size_t)rcount;
    const char *s;
    if (inplace) { /* send from a copy of the receive buffer */
        char *c = mpi_nb_alloc(&b, (size_t)np * blk);
        mpi_nb_pre(&b, tr, rbuf, all, c, 0);
        s = c;
    } else {
        s = mpi_nb_bytes_in(&b, ts, sbuf, (size_t)np * (size_t)scount);
    }
    char *r = mpi_nb_bytes_out(&b, tr, rbuf, all);
    mpi_nb_seq(&b);
    cr_build_alltoall(b.job, &b.s->s, &b.c->g, s, r, blk, CR_ALG_AUTO);
    return mpi_nb_launch(&b, req);
}

/* ---- the v forms ------------------------------------------------------------------------- */

int mpi_nb_vlay_make(nb *b, vlay *v, const mpi_type *t, const int *counts, const int *displs,
                     const char *what)
{
    int rc = mpi_chk_counts(b, counts, displs, what), np = nb_peers(b);
    if (rc) return rc;
    v->len = mpi_nb_alloc(b, 2 * (size_t)np * sizeof(size_t));
    mpi_vlay_fill(v, t, counts, displs, np);
    return 0;
}

/* The blocks packed to out at each start. */
void mpi_nb_vlay_pack(nb *b, const vlay *v, mpi_type *t, const void *buf, const int *counts,
                      const int *displs, char *out, int np)
{
    for (int i = 0; i < np; i++)
        if (counts[i])
            mpi_nb_pre(b, t, (const char *)buf + (ptrdiff_t)displs[i] * type_extent(t),
                       (size_t)counts[i], out + v->off[i], 0);
}

/* Where the blocks arrive: the user buffer (under --check=buffers a copy), or
 * staging unpacked block by block at completion. */
char *mpi_nb_vlay_out(nb *b, const vlay *v, mpi_type *t, void *buf, const int *counts,
                      const int *displs, int np)
{
    if (!v->staged) return mpi_chk_nbc_rbufv(b, buf, np, v->len, v->off);
    char *r = mpi_nb_alloc(b, v->total);
    for (int i = 0; i < np; i++)
        if (counts[i])
            mpi_nb_fin(b, t, r + v->off[i], v->len[i],
                       (char *)buf + (ptrdiff_t)displs[i] * type_extent(t), (size_t)counts[i]);
    return r;
}

int mpi_nbc_gatherv(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                    MPI_Comm comm, MPI_Request *req)
{
    nb b;
    mpi_type *ts = NULL, *tr = NULL;
    vlay v = {0};
    int rc = begin(&b, I_GATHERV | p, comm, req);
    if (!rc && b.c->inter)
        return mpi_nbx_gather(&b, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root, req);
    if (!rc) rc = mpi_chk_root(&b, root);
    bool isroot = !rc && b.c->me == root, inplace = sbuf == MPI_IN_PLACE;
    if (!rc && inplace && !isroot)
        rc = mpi_cfail(&b, MPI_ERR_BUFFER, "MPI_IN_PLACE is for the root only");
    if (!rc && !inplace) rc = mpi_chk_triple(&b, sbuf, scount, stype, &ts, "send");
    if (!rc && isroot) rc = mpi_chk_type(&b, rtype, &tr);
    if (!rc && isroot) rc = mpi_nb_vlay_make(&b, &v, tr, rcounts, displs, "recv");
    if (!rc && isroot && !inplace && (size_t)scount * ts->size != v.len[root])
        rc = mpi_chk_match(&b, (size_t)scount * ts->size, v.len[root]);
    if (!rc && isroot && !inplace)
        rc = mpi_chk_own_block(&b, sbuf, rbuf, (ptrdiff_t)displs[root] * type_extent(tr),
                               v.len[root]);
    if (rc) return mpi_nb_done(&b, rc);
    mpi_chk_nbc_v(&b, MPI_CHKV_GATHER, root, MPI_CHK1(scount, ts), MPI_CHKNR(rcounts, displs, tr));
    mpi_nb_seq(&b);
    const char *s = inplace ? NULL : mpi_nb_bytes_in(&b, ts, sbuf, (size_t)scount);
    if (!isroot) {
        cr_build_gatherv(b.job, &b.s->s, &b.c->g, s, (size_t)scount * ts->size, NULL, NULL, NULL,
                         root);
        return mpi_nb_launch(&b, req);
    }
    char *r = mpi_nb_vlay_out(&b, &v, tr, rbuf, rcounts, displs, b.c->size);
    if (inplace && v.staged)
        mpi_nb_pre(&b, tr, (char *)rbuf + (ptrdiff_t)displs[root] * type_extent(tr),
                   (size_t)rcounts[root], r + v.off[root], 0);
    cr_build_gatherv(b.job, &b.s->s, &b.c->g, s, v.len[root], r, v.len, v.off, root);
    return mpi_nb_launch(&b, req);
}

int mpi_nbc_scatterv(int p, const void *sbuf, const int scounts[], const int displs[],
                     MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                     MPI_Comm comm, MPI_Request *req)
{
    nb b;
    mpi_type *ts = NULL, *tr = NULL;
    vlay v = {0};
    int rc = begin(&b, I_SCATTERV | p, comm, req);
    if (!rc && b.c->inter)
        return mpi_nbx_scatter(&b, sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root, req);
    if (!rc) rc = mpi_chk_root(&b, root);
    bool isroot = !rc && b.c->me == root, inplace = rbuf == MPI_IN_PLACE;
    if (!rc && inplace && !isroot)
        rc = mpi_cfail(&b, MPI_ERR_BUFFER, "MPI_IN_PLACE is for the root only");
    if (!rc && isroot) rc = mpi_chk_type(&b, stype, &ts);
    if (!rc && isroot) rc = mpi_nb_vlay_make(&b, &v, ts, scounts, displs, "send");
    if (!rc && !inplace) rc = mpi_chk_triple(&b, rbuf, rcount, rtype, &tr, "receive");
    if (!rc && isroot && !inplace) rc = mpi_chk_match(&b, v.len[root], (size_t)rcount * tr->size);
    if (!rc && isroot && !inplace)
        rc = mpi_chk_own_block(&b, rbuf, sbuf, (ptrdiff_t)displs[root] * type_extent(ts),
                               v.len[root]);
    if (rc) return mpi_nb_done(&b, rc);
    mpi_chk_nbc_v(&b, MPI_CHKV_SCATTER, root, MPI_CHKN(scounts, ts), MPI_CHK1(rcount, tr));
    mpi_nb_seq(&b);
    char *r = inplace ? NULL : mpi_nb_bytes_out(&b, tr, rbuf, (size_t)rcount);
    size_t rlen = inplace ? 0 : (size_t)rcount * tr->size;
    if (!isroot) {
        cr_build_scatterv(b.job, &b.s->s, &b.c->g, NULL, NULL, NULL, r, rlen, root);
        return mpi_nb_launch(&b, req);
    }
    const char *s = sbuf;
    if (v.staged) {
        char *p = mpi_nb_alloc(&b, v.total);
        mpi_nb_vlay_pack(&b, &v, ts, sbuf, scounts, displs, p, b.c->size);
        s = p;
    }
    cr_build_scatterv(b.job, &b.s->s, &b.c->g, s, v.len, v.off, r, rlen, root);
    return mpi_nb_launch(&b, req);
}

int mpi_nbc_allgatherv(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                       MPI_Request *req)
{
    nb b;
    mpi_type *ts = NULL, *tr = NULL;
    vlay v = {0};
    int rc = begin(&b, I_ALLGATHERV | p, comm, req);
    if (!rc && b.c->inter)
        return mpi_nbx_allgather(&b, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, req);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (!rc && !inplace) rc = mpi_chk_triple(&b, sbuf, scount, stype, &ts, "send");
    if (!rc) rc = mpi_chk_type(&b, rtype, &tr);
    if (!rc) rc = mpi_nb_vlay_make(&b, &v, tr, rcounts, displs, "recv");
    if (!rc && !inplace) rc = mpi_chk_match(&b, (size_t)scount * ts->size, v.len[b.c->me]);
    if (!rc && !inplace)
        rc = mpi_chk_own_block(&b, sbuf, rbuf, (ptrdiff_t)displs[b.c->me] * type_extent(tr),
                               v.len[b.c->me]);
    if (rc) return mpi_nb_done(&b, rc);
    mpi_chk_nbc_v(&b, MPI_CHKV_ALLGATHER, -1, MPI_CHK1(scount, ts), MPI_CHKNR(rcounts, displs, tr));
    int me = b.c->me;
    char *r = mpi_nb_vlay_out(&b, &v, tr, rbuf, rcounts, displs, b.c->size);
    if (inplace && v.staged)
        mpi_nb_pre(&b, tr, (char *)rbuf + (ptrdiff_t)displs[me] * type_extent(tr),
                   (size_t)rcounts[me], r + v.off[me], 0);
    const char *s = inplace ? NULL : mpi_nb_bytes_in(&b, ts, sbuf, (size_t)scount);
    mpi_nb_seq(&b);
    cr_build_allgatherv(b.job, &b.s->s, &b.c->g, s, v.len[me], r, v.len, v.off);
    return mpi_nb_launch(&b, req);
}

int mpi_nbc_alltoallv(int p, const void *sbuf, const int scounts[], const int sdispls[],
                      MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                      MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    nb b;
    mpi_type *ts = NULL, *tr = NULL;
    vlay vs = {0}, vr = {0};
    int rc = begin(&b, I_ALLTOALLV | p, comm, req);
    if (!rc && b.c->inter)
        return mpi_nbx_alltoall(&b, sbuf, 0, scounts, sdispls, stype, rbuf, 0, rcounts, rdispls,
                                rtype, req);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (!rc) rc = mpi_chk_type(&b, rtype, &tr);
    if (!rc) rc = mpi_nb_vlay_make(&b, &vr, tr, rcounts, rdispls, "recv");
    if (!rc && !inplace) rc = mpi_chk_type(&b, stype, &ts);
    if (!rc && !inplace) rc = mpi_nb_vlay_make(&b, &vs, ts, scounts, sdispls, "send");
    if (!rc && !inplace && sbuf == rbuf && vr.total) rc = mpi_chk_alias(&b, sbuf, rbuf, 1);
    if (!rc && !inplace && vs.len[b.c->me] != vr.len[b.c->me])
        rc = mpi_chk_match(&b, vs.len[b.c->me], vr.len[b.c->me]);
    if (rc) return mpi_nb_done(&b, rc);
    mpi_chk_nbc_v(&b, MPI_CHKV_ALLTOALL, -1, MPI_CHKN(scounts, ts),
                  MPI_CHKNR(rcounts, rdispls, tr));
    int np = b.c->size;
    const char *s;
    if (inplace) { /* send from a packed copy of the receive buffer */
        vs.len = mpi_nb_alloc(&b, 2 * (size_t)np * sizeof(size_t));
        vs.off = vs.len + np;
        size_t off = 0;
        for (int i = 0; i < np; i++) {
            vs.len[i] = vr.len[i];
            vs.off[i] = off;
            off += vr.len[i];
        }
        char *p = mpi_nb_alloc(&b, off);
        vs.staged = true;
        mpi_nb_vlay_pack(&b, &vs, tr, rbuf, rcounts, rdispls, p, np);
        s = p;
    } else if (vs.staged) {
        char *p = mpi_nb_alloc(&b, vs.total);
        mpi_nb_vlay_pack(&b, &vs, ts, sbuf, scounts, sdispls, p, np);
        s = p;
    } else {
        s = sbuf;
    }
    char *r = mpi_nb_vlay_out(&b, &vr, tr, rbuf, rcounts, rdispls, np);
    mpi_nb_seq(&b);
    cr_build_alltoallv(b.job, &b.s->s, &b.c->g, s, vs.len, vs.off, r, vr.len, vr.off);
    return mpi_nb_launch(&b, req);
}

/* mpi_wside_pack's blocks, packed at each start. */
static void wside_pack(nb *b, const mpi_wside *w, const size_t *off, const void *buf,
                       const int *counts, const int *displs, char *out, int np)
{
    for (int i = 0; i < np; i++)
        if (w->len[i])
            mpi_nb_pre(b, w->t[i], (const char *)buf + displs[i], (size_t)counts[i], out + off[i],
                       0);
}

/* Alltoallw (both kinds of communicator): the blocks through staging where a
 * side needs it, as MPI_Alltoallw; the all-to-all v schedule (on an
 * intercommunicator every member with every remote one, in one round). */
int mpi_nbc_alltoallw(int p, const void *sbuf, const int scounts[], const int sdispls[],
                      const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                      const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                      MPI_Request *req)
{
    nb b;
    int rc = begin(&b, I_ALLTOALLW | p, comm, req);
    if (rc) return mpi_nb_done(&b, rc);
    int np = nb_peers(&b);
    bool inplace = sbuf == MPI_IN_PLACE;
    size_t *lens = mpi_nb_alloc(&b, 4 * (size_t)np * sizeof *lens);
    size_t *soff = lens + 2 * np, *roff = lens + 3 * np;
    mpi_type **types = mpi_nb_alloc(&b, 2 * (size_t)np * sizeof *types);
    mpi_wside ws = {types, lens, 0, false}, wr = {types + np, lens + np, 0, false};
    rc = mpi_chk_alltoallw(&b, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, &ws,
                           &wr);
    if (rc) return mpi_nb_done(&b, rc);
    mpi_chk_nbc_v(&b, MPI_CHKV_ALLTOALL, -1, MPI_CHKW(scounts, inplace ? NULL : ws.t),
                  MPI_CHKWR(rcounts, rdispls, wr.t));
    mpi_wside_offsets(&wr, rdispls, roff, np);
    const char *s = sbuf;
    if (inplace) { /* send from a packed copy of the receive buffer: the same blocks */
        memcpy(ws.len, wr.len, (size_t)np * sizeof *ws.len);
        ws.staged = true;
        mpi_wside_offsets(&ws, NULL, soff, np);
        char *p = mpi_nb_alloc(&b, wr.total);
        wside_pack(&b, &wr, soff, rbuf, rcounts, rdispls, p, np);
        s = p;
    } else {
        mpi_wside_offsets(&ws, sdispls, soff, np);
        if (ws.staged) {
            char *p = mpi_nb_alloc(&b, ws.total);
            wside_pack(&b, &ws, soff, sbuf, scounts, sdispls, p, np);
            s = p;
        }
    }
    char *r =
        wr.staged ? mpi_nb_alloc(&b, wr.total) : mpi_chk_nbc_rbufv(&b, rbuf, np, wr.len, roff);
    for (int i = 0; wr.staged && i < np; i++)
        if (wr.len[i])
            mpi_nb_fin(&b, wr.t[i], r + roff[i], wr.len[i], (char *)rbuf + rdispls[i],
                       (size_t)rcounts[i]);
    mpi_nb_seq(&b);
    if (b.c->inter) {
        cr_inter x = mpi_nbx_of(&b);
        cr_build_inter_alltoallv(b.job, &b.s->s, &x, s, ws.len, soff, r, wr.len, roff);
    } else {
        cr_build_alltoallv(b.job, &b.s->s, &b.c->g, s, ws.len, soff, r, wr.len, roff);
    }
    return mpi_nb_launch(&b, req);
}

/* ---- neighbourhood collectives ----------------------------------------------------------
 * MPI_Ineighbor_* and MPI_Neighbor_*_init: mpi_topo.c enters the call, checks
 * it and finds the neighbours and blocks, as for the blocking forms; here the
 * blocks of non-contiguous types are staged and src/coll's exchange built
 * (cr_build_neighbor: the schedule the blocking form runs). */
int mpi_nbc_neighbor(cr_job *job, int which, MPI_Comm comm, mpi_comm *c, const cr_nbrs *n,
                     const mpi_nblk *rb, const mpi_nblk *sb, MPI_Request *req)
{
    int kind = I_NEIGHBOR + (which & ~MPI_NBC_PERSIST);
    bool persist = which & MPI_NBC_PERSIST;
    nb b = {.job = job, .call = (persist ? pcoll_ops : nbc_ops)[kind].what, .comm = comm, .c = c};
    make(&b, kind, persist);
    mpi_nb_seq(&b);
    cr_nbuf *r = xmalloc(job, b.call, ((size_t)n->nin + (size_t)n->nout) * sizeof *r),
            *o = r + n->nin;
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] >= 0)
            r[i] = (cr_nbuf){mpi_nb_bytes_out(&b, (mpi_type *)rb[i].t, rb[i].buf, rb[i].count),
                             rb[i].count * rb[i].t->size};
    for (int i = 0; i < n->nout; i++)
        if (n->out[i] >= 0)
            o[i] = (cr_nbuf){(char *)mpi_nb_bytes_in(&b, sb[i].t, sb[i].buf, sb[i].count),
                             sb[i].count * sb[i].t->size};
    cr_build_neighbor(job, &b.s->s, &c->g, n, r, o);
    free(r);
    return launch_in(&b, req);
}

/* ---- MPI_Comm_idup ----------------------------------------------------------------------- */

/* mpi_comm.c's context-pair map and communicator table. */
long mpi_ctx_free_word(long w);
MPI_Comm mpi_comm_add(cr_job *job, const char *call, int size, int me, int *ranks, int ctx,
                      MPI_Errhandler errh);

/* The context pair: at the call, the lowest IDUP_RESERVE pairs free here in
 * one word of the map, and not offered by a creating call under way in
 * another thread (mpi_ctx_spare_word), are reserved (marked used, so no other
 * creating call takes one while the idup is pending) and the members AND
 * these sets; at completion the lowest pair of the result is taken and the
 * other reserved ones given back. The word is the parent's context / 2 plus the idup's
 * sequence number (mod the map's size): the same on every member, and another
 * one for each of several idups pending at once, on one parent or on several
 * (whose members may start them in different orders), so that their
 * reservations do not meet. Two pending idups whose words coincide, started in
 * different orders on two members, can find no common pair: the job then ends
 * with a message. */
#define IDUP_RESERVE 8
static void idup_unreserve(nbc *s, uint64_t keep)
{
    mpi_g.ctx_used[s->iword] &= ~(s->ireserved & ~keep);
    s->ireserved = 0;
}

static void idup_make(cr_job *job, nbc *s)
{
    const char *call = "MPI_Comm_idup";
    uint64_t common = (uint64_t)s->imap[0] & s->ireserved;
    if (!common)
        cr_fatal(job, call,
                 "none of the context pairs reserved in word %d of the context map is free on "
                 "every member (several idups pending at once, started in different orders on "
                 "different ranks?); MPI_Comm_dup looks further",
                 s->iword);
    int bit = __builtin_ctzll((unsigned long long)common);
    idup_unreserve(s, UINT64_C(1) << bit);
    int pair = s->iword * 64 + bit;
    MPI_Comm nh = s->irranks ? mpi_inter_add(job, call, s->isize, s->ime, s->iranks, s->irsize,
                                             s->irranks, pair, s->ierrh)
                             : mpi_comm_add(job, call, s->isize, s->ime, s->iranks,
                                            MPI_CTX_FIRST_FREE + 2 * pair, s->ierrh);
    s->iranks = s->irranks = NULL; /* the communicator's now */
    if (mpi_comm_get(s->iparent)) {
        int kv = 0, rc = mpi_attrs_copy(job, MPI_OBJ_COMM, s->iparent, nh, &kv);
        if (rc != MPI_SUCCESS)
            mpi_fail(job, s->iparent, call, MPI_ERR_OTHER,
                     "the copy callback of keyval %#x returned %d", (unsigned)kv, rc);
    }
    *s->inew = nh;
}

PMPI_WEAK(Comm_idup);
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req)
{
    nb b;
    int rc = begin(&b, I_COMM_IDUP, comm, req);
    if (!rc && !newcomm) rc = mpi_cfail(&b, MPI_ERR_ARG, "newcomm is NULL");
    if (rc) return mpi_nb_done(&b, rc);
    nbc *s = b.s;
    s->iword = (int)(((uint32_t)b.c->ctx / 2 + mpi_nb_seq(&b)) % MPI_CTX_WORDS);
    uint64_t fr = (uint64_t)mpi_ctx_spare_word(s->iword);
    for (int k = 0; k < IDUP_RESERVE && fr; k++) { /* the lowest free ones */
        s->ireserved |= fr & -fr;
        fr &= fr - 1;
    }
    mpi_g.ctx_used[s->iword] |= s->ireserved;
    if (s->iword + 1 > mpi_g.ctx_words) mpi_g.ctx_words = s->iword + 1;
    s->imap = xmalloc(b.job, b.call, sizeof *s->imap);
    s->imap[0] = (long)s->ireserved;
    s->isize = b.c->size;
    s->ime = b.c->me;
    s->iranks = xmalloc(b.job, b.call, (size_t)b.c->size * sizeof *s->iranks);
    for (int i = 0; i < b.c->size; i++) s->iranks[i] = comm_rank_to_job(b.c, i);
    s->inew = newcomm;
    s->iparent = comm;
    s->ierrh = b.c->errh;
    cr_sched_redop(b.job, &s->s, &CR_OP_PREDEF(cr_op_band_long, long), 1);
    mpi_nb_seq(&b);
    if (!b.c->inter) {
        sched_allreduce(&b, NULL, (char *)s->imap, 1);
        return mpi_nb_launch(&b, req);
    }
    /* both groups: each ANDs to its leader, the leaders swap and AND, each
     * broadcasts in its group (the word is the same on both: same context,
     * same ig.seq) */
    s->irsize = b.c->rsize;
    s->irranks = xmalloc(b.job, b.call, (size_t)b.c->rsize * sizeof *s->irranks);
    memcpy(s->irranks, b.c->rranks, (size_t)b.c->rsize * sizeof *s->irranks);
    char *map = (char *)s->imap;
    sched_reduce(&b, map, 1, 0, map);
    if (b.c->me == 0) {
        long *other = mpi_nb_alloc(&b, sizeof *other);
        nb_xrecv(&b, 0, 3, other, sizeof *other);
        nb_xsend(&b, 0, 3, map, sizeof(long));
        nb_round(&b);
        nb_combine(&b, map, other, map, 1);
    }
    if (b.c->size > 1) sched_bcast(&b, map, sizeof(long), 0, 4);
    return mpi_nb_launch(&b, req);
}
