/* The collective layer: algorithms over the engine's point-to-point calls,
 * shared by every interface (NX/2 global operations, MPL, later MPI).
 *
 * A call names a group (its members, this rank's index, and a context of its
 * own) and works in bytes; reductions also take a cr_redop, which says how big an
 * element is and whether the operation commutes. Every member of a group calls
 * the same collectives in the same order with matching arguments. Roots are
 * member indices (0..size-1), not job ranks. */
#ifndef COURIER_COLL_H
#define COURIER_COLL_H

#include "../core/engine.h"
#include "../core/rma.h"

/* A set of ranks that take part in collectives, with its own context. */
typedef struct cr_group {
    int size, me;      /* members, and this rank's index among them */
    const int *ranks;  /* job rank of each member; NULL: member i is rank i */
    uint16_t ctx;      /* context of its traffic: no other group or interface uses it */
    uint32_t seq;      /* collectives started so far (same on every member) */
    uint32_t nbseq;    /* nonblocking and persistent ones, counted apart (mpi_nbc.c) */
    uint8_t area;      /* k+1: this whole-job group owns collective area k (coll_shm.c); 0: none */
    uint32_t area_seq; /* collectives done through the area so far (same on every member) */
    bool area_loose;   /* the last of them was a broadcast (coll_shm.c's invariants) */
    cr_trunc *trunc;   /* a message longer than the receive is noted here; NULL: ends the job */
    /* Members of another job among them (peers job->size.., src/core/xpeers.h):
     * an algorithm chosen by this job's own state (oversubscription) could
     * differ from the other job's choice, so such choices are off. */
    bool spans;
} cr_group;

/* Ranks outnumber cores, and every member sees it so (one launcher's count of
 * CPUs: job.c; no member of another job: cr_group.spans). */
static inline bool cr_group_oversub(const struct cr_job *job, const cr_group *g)
{
    return job->oversub_coll && !g->spans;
}

/* The owners of the collective areas: one whole-job group per interface. */
enum { CR_AREA_NX = 1, CR_AREA_MPL = 2, CR_AREA_MPI = 3, CR_AREA_MPI_MORE = 4 };
#define CR_AREA_MPI_MORE_N 4 /* areas CR_AREA_MPI_MORE.. for MPI's other whole-job groups */
_Static_assert(CR_AREA_MPI_MORE + CR_AREA_MPI_MORE_N - 1 <= CR_COLL_AREAS,
               "the host segment has an area for each");

static inline int cr_group_rank(const cr_group *g, int i)
{
    return g->ranks ? g->ranks[i] : i;
}

/* out[i] = lo[i] op hi[i] for 'count' elements, where lo holds the data of the
 * lower members; 'arg' is cr_redop.arg. */
typedef void (*cr_op_fn)(const void *lo, const void *hi, void *out, size_t count, const void *arg);

typedef struct cr_redop {
    cr_op_fn fn;
    const void *arg;
    size_t elem;   /* bytes per element; data is split only at element boundaries */
    bool commute;  /* lo op hi == hi op lo: any combining order will do */
    bool alias_ok; /* out may be the same memory as lo or hi */
} cr_redop;

/* Predefined element-wise operations (commutative, alias-safe). */
void cr_op_sum_double(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_max_double(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_min_double(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_sum_long(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_max_long(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_min_long(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_prod_double(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_sum_float(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_max_float(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_min_float(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_prod_float(const void *lo, const void *hi, void *out, size_t n, const void *arg);
/* Integer products wrap around (two's complement) instead of overflowing. */
void cr_op_prod_long(const void *lo, const void *hi, void *out, size_t n, const void *arg);
/* Bitwise and, or, exclusive or. */
void cr_op_band_long(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_bor_long(const void *lo, const void *hi, void *out, size_t n, const void *arg);
void cr_op_bxor_long(const void *lo, const void *hi, void *out, size_t n, const void *arg);
/* A predefined operation on elements of type T. */
#define CR_OP_PREDEF(fn, T) ((cr_redop){(fn), NULL, sizeof(T), true, true})

/* Synchronization: no member leaves before every member has entered. */
void cr_coll_barrier(cr_job *job, cr_group *g, const char *op);

/* Data movement (len / blk in bytes). Buffers of different members may differ
 * in address but not in length. In gather/scatter/allgather/alltoall the block
 * of member i is at offset i*blk. */
void cr_coll_bcast(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root);
void cr_coll_gather(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                    size_t blk, int root);
void cr_coll_scatter(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                     size_t blk, int root);
void cr_coll_allgather(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                       size_t blk);
/* The all-gather by messages (or the host's collective area) only: how the
 * single-copy collectives exchange their buffers' addresses. */
void cr_coll_allgather_msgs(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                            size_t blk);
void cr_coll_alltoall(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                      size_t blk);
/* Member i sends sbuf to member i+step and receives rbuf from member i-step;
 * circular wraps around the group, otherwise members off the end do not send /
 * leave rbuf untouched. */
void cr_coll_shift(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                   size_t len, int step, bool circular);

/* Reductions of count elements of o->elem bytes. sbuf and rbuf may be the same
 * buffer. The result combines the members' data in member order (x0 op x1 op
 * ...), so non-commutative operations give the rank-order result. */
void cr_coll_reduce(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                    size_t count, const cr_redop *o, int root);
void cr_coll_allreduce(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                       size_t count, const cr_redop *o);
/* Reduce-scatter: member i gets elements off[i]..off[i+1]-1 of the reduction
 * of every member's sbuf (off: n+1 offsets in elements, off[n] the count)
 * into rbuf, which must not overlap sbuf (cr_build_reduce_scatter); false,
 * nothing done, where the whole vector fits the collective area's allreduce
 * (0.22 us against 1.4 for 1 KiB at 2 ranks): the caller takes the allreduce
 * and its part. */
bool cr_coll_reduce_scatter(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                            const size_t *off, const cr_redop *o);
/* Inclusive prefix: member i ends with x0 op ... op xi. */
void cr_coll_scan(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                  size_t count, const cr_redop *o);
/* Exclusive prefix: member i > 0 gets x0 op ... op x(i-1); member 0's rbuf is
 * left as it was (sbuf may be rbuf). */
void cr_coll_exscan(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                    size_t count, const cr_redop *o);

/* Algorithm choice, exported for tests and benchmarks: 0 automatic (by size and
 * group size), or force one. */
enum cr_coll_alg {
    CR_ALG_AUTO = 0,
    CR_ALG_BINOMIAL,     /* bcast */
    CR_ALG_PIPELINE,     /* bcast: segmented chain */
    CR_ALG_RECDBL,       /* allreduce, allgather */
    CR_ALG_RABENSEIFNER, /* allreduce: reduce-scatter + all-gather */
    CR_ALG_RING,         /* allgather */
    CR_ALG_BRUCK,        /* alltoall */
    CR_ALG_PAIRWISE,     /* alltoall */
    CR_ALG_LINEAR,       /* barrier, allreduce: all to member 0 and back (oversubscribed) */
    CR_ALG_SCATTER,      /* alltoall: every transfer posted at once */
    CR_ALG_DIRECT,       /* bcast, alltoall: single copy from the others' buffers (one host) */
    CR_ALG_SPLIT,        /* bcast: single copy, a share from the root, the rest from the others */
    CR_ALG_WINDOW,       /* alltoall: pairwise, COURIER_COLL_WINDOW exchanges in flight */
    CR_ALG_AREA          /* bcast: through the collective area (coll_shm.c) at any size */
};
/* Read once from COURIER_COLL_ALG (a name above, lower case: "ring", ...); the
 * forced algorithm is used wherever it applies (direct and split only where
 * cr_coll_direct_ok; elsewhere the automatic choice among the others). */
int cr_coll_forced(cr_job *job);

/* One-sided memory of a group (coll_rma.c): each member's memory as the
 * others see it. Publishing is collective over the group: every member passes
 * its own (len 0 allowed), sh describing it when it is shared memory
 * (cr_shared_alloc) or NULL; the members on this host map each other's shared
 * memory where the kernel lets them. */
typedef struct cr_pub {
    uint64_t addr, len;
    cr_shared sh;
} cr_pub;
typedef struct cr_rtable {
    int n, me;
    cr_pub *pub; /* per member */
    char **map;  /* per member: its memory mapped here (this member: its own), or NULL */
} cr_rtable;
enum {
    CR_PUB_ATOMICS = 1, /* the others make atomics on this memory (the service does them
                           where it is not mapped) */
    CR_PUB_ATTACH = 2   /* private memory comes later (MPI_Win_attach), reached by single
                           copy or the service */
};
void cr_coll_publish(cr_job *job, cr_group *g, const char *op, void *base, size_t len,
                     const cr_shared *sh, int flags, cr_rtable *out);
/* Unmap the others' memory and stop serving this member's (not collective: the
 * caller makes sure no member still uses it, e.g. with a barrier). */
void cr_coll_unpublish(cr_job *job, cr_rtable *t);
/* Byte off of member m's memory, as a target of the one-sided operations. */
static inline cr_rtarget cr_rtable_at(const cr_group *g, const cr_rtable *t, int m, uint64_t off)
{
    cr_rtarget r = {cr_group_rank(g, m), t->pub[m].addr + off, t->map[m] ? t->map[m] + off : NULL};
    return r;
}

/* Internal helpers shared by the coll files. */
#define CR_COLL_TAG(seq, step) ((int32_t)(((seq)&0x7ffffu) << 12 | ((unsigned)(step)&0xfffu)))
void cr_coll_send(cr_job *job, cr_group *g, const char *op, int to, int32_t tag, const void *buf,
                  size_t len);
void cr_coll_recv(cr_job *job, cr_group *g, const char *op, int from, int32_t tag, void *buf,
                  size_t len);
cr_req *cr_coll_irecv(cr_job *job, cr_group *g, const char *op, int from, int32_t tag, void *buf,
                      size_t len);
void cr_coll_wait(cr_job *job, cr_req *r);
/* out = lo op hi for count elements; scratch (count * o->elem bytes) is used when
 * the operation may not write over its inputs. */
void cr_coll_combine(cr_job *job, const cr_redop *o, const void *lo, const void *hi, void *out,
                     size_t count, void *scratch);
/* Collectives through the group's collective area (coll_shm.c; allreduce:
 * sbuf holds this member's data, rbuf gets the result, either may be the
 * other); false, having done nothing, when the group has no area or the data
 * does not fit. */
bool cr_coll_shm_barrier(cr_job *job, cr_group *g, const char *op);
bool cr_coll_shm_allreduce(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                           size_t count, const cr_redop *o);
/* Would cr_coll_shm_allreduce take len bytes? */
bool cr_coll_shm_reduces(cr_job *job, const cr_group *g, size_t len);
/* rbuf holds this member's block already, at its offset. */
bool cr_coll_shm_allgather(cr_job *job, cr_group *g, const char *op, void *rbuf, size_t blk);
bool cr_coll_shm_alltoall(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                          size_t blk);
/* Broadcast in chunks through the area: any length; the caller has counted the
 * collective in g->seq already. */
bool cr_coll_shm_bcast(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root);
void *cr_coll_alloc(cr_job *job, const char *op, size_t len);
/* Scratch of len bytes from the job's kept temporaries (sched.c: fresh pages
 * cost as much as a collective of a megabyte), given back with its length. */
void *cr_coll_keep_get(cr_job *job, const char *op, size_t len);
void cr_coll_keep_put(cr_job *job, void *p, size_t len);
/* Binomial-tree broadcast with tag CR_COLL_TAG(seq, step) (coll.c). */
void cr_coll_bcast_tree(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root,
                        uint32_t seq, int step);
/* Single-copy collectives (coll_direct.c). They apply when every member is on
 * this host and reached by a transport with single copy (the same answer on
 * every member). seq: the collective's sequence number (steps 0-3 of it are
 * theirs). A read refused at run time is made up for inside bcast; the
 * all-to-all returns false instead, on every member, having moved nothing
 * that counts: the caller then does it by messages. */
bool cr_coll_direct_ok(const cr_job *job, const cr_group *g);
void cr_coll_bcast_direct(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root,
                          uint32_t seq);
void cr_coll_bcast_split(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root,
                         uint32_t seq);
bool cr_coll_alltoall_direct(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                             size_t blk);
/* Each member reads the others' blocks out of their receive buffers (each
 * member's own block already in its place): false as the all-to-all's. */
bool cr_coll_allgather_direct(cr_job *job, cr_group *g, const char *op, void *rbuf, size_t blk);
/* The same with each member's own lengths and displacements (bytes). */
bool cr_coll_allgatherv_direct(cr_job *job, cr_group *g, const char *op, void *rbuf,
                               const size_t *rlens, const size_t *rdispls);
/* Whether an all-gather of blk bytes a member (the mean of an allgatherv's)
 * reads its blocks directly (the same on every member). */
bool cr_coll_allgather_reads(cr_job *job, const cr_group *g, size_t blk);
/* Each member reduces its share of count elements (count >= group size) read
 * out of every member's input, then reads the others' shares: false as the
 * all-to-all's (nothing moved); sbuf may be rbuf (in place). */
bool cr_coll_allreduce_direct(cr_job *job, cr_group *g, const char *op, const void *sbuf,
                              void *rbuf, size_t count, const cr_redop *o);
/* The same shares, combined in the binomial reduce's order (the same bits as
 * cr_build_reduce's), read by the root alone; rbuf matters at the root only
 * (sbuf == rbuf there: in place). */
bool cr_coll_reduce_direct(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                           size_t count, const cr_redop *o, int root);
/* Use the linear (fan-in, fan-out) form of barrier / small allreduce: with more
 * ranks than cores every round costs a trip through the scheduler, and the linear
 * form has two rounds whatever the group size. */
bool cr_coll_linear(cr_job *job, const cr_group *g, size_t len);

/* ---- added for MPI: blocks that differ in size per member (coll_v.c) ------ */

/* Block i is lens[i] bytes at offset displs[i] of its buffer. A NULL own send
 * buffer (sbuf; scatterv: rbuf) means the own block is already in place. */
void cr_coll_gatherv(cr_job *job, cr_group *g, const char *op, const void *sbuf, size_t slen,
                     void *rbuf, const size_t *rlens, const size_t *rdispls, int root);
void cr_coll_scatterv(cr_job *job, cr_group *g, const char *op, const void *sbuf,
                      const size_t *slens, const size_t *sdispls, void *rbuf, size_t rlen,
                      int root);
void cr_coll_allgatherv(cr_job *job, cr_group *g, const char *op, const void *sbuf, size_t slen,
                        void *rbuf, const size_t *rlens, const size_t *rdispls);
void cr_coll_alltoallv(cr_job *job, cr_group *g, const char *op, const void *sbuf,
                       const size_t *slens, const size_t *sdispls, void *rbuf, const size_t *rlens,
                       const size_t *rdispls);

/* ---- schedules (sched.c): a collective written once ----------------------

 * A schedule is a collective's steps, built by an algorithm below (cr_build_*)
 * or by an interface, in rounds: a round starts once every transfer of the
 * round before has completed; its steps then run in order (local steps at
 * once, transfers posted). The blocking form runs it to completion
 * (cr_sched_run), the nonblocking one starts it (cr_sched_start) and moves it on
 * (cr_sched_advance) from whatever polls; a schedule that is done can be
 * started again as it was built (the persistent form), its temporaries kept.
 * Peers are job ranks resolved while building, so a schedule does not depend
 * on its group once built. A schedule lives where it was initialized (it points
 * into itself): on the caller's stack for a blocking call, which then costs no
 * malloc up to CR_SCHED_STEPS steps and CR_SCHED_ARENA bytes of temporaries. */
enum { CR_S_SEND, CR_S_RECV, CR_S_COMBINE, CR_S_COPY, CR_S_CALL };

typedef struct cr_sstep {
    uint8_t kind;
    int peer; /* job rank */
    int32_t tag;
    char *buf;         /* send: data; receive: where; copy, combine: out; call: arg */
    const char *a, *b; /* copy: source; combine: lo, hi */
    size_t len;        /* bytes; combine: elements */
    void (*fn)(cr_job *job, void *arg); /* call */
} cr_sstep;

#define CR_SCHED_STEPS 24
#define CR_SCHED_ROUNDS 16
#define CR_SCHED_REQS 8
#define CR_SCHED_ARENA 768

typedef struct cr_stmp {
    void *p;
    size_t len;
} cr_stmp;

typedef struct cr_sched {
    const char *op;   /* the interface call, for errors and traces */
    uint16_t ctx;     /* context of every transfer */
    uint32_t tagbits; /* tag = tagbits | (seq & seqmask) << 12 | step */
    uint32_t seqmask;
    uint32_t seq;
    cr_redop o;      /* combine steps (cr_sched_redop) */
    char *scratch;   /* for an o that may not write over its inputs */
    cr_trunc *trunc; /* a message longer than its receive is noted here; NULL: fatal */
    cr_sstep *st;
    int nst, stcap;
    int *rend; /* round r is steps rend[r-1] (0 for r = 0) .. rend[r]-1 */
    int nr, rcap;
    int cur;         /* round under way */
    cr_req **reqs;   /* its transfers that have a request */
    int nreq, nwait; /* how many; the first not yet seen complete */
    int reqcap;
    int xfer, most; /* transfers in the round under construction; in the largest */
    cr_stmp *tmp;   /* temporaries beyond the arena (NULL: none; first in tmp_in) */
    int ntmp, tmpcap;
    size_t arena_used;
    bool done;
    bool now; /* blocking, run as built (cr_sched_now) */
    cr_sstep st_in[CR_SCHED_STEPS];
    int rend_in[CR_SCHED_ROUNDS];
    cr_req *req_in[CR_SCHED_REQS];
    cr_stmp tmp_in[4];
    _Alignas(16) char arena[CR_SCHED_ARENA];
} cr_sched;

/* An empty schedule on ctx whose tags are CR_COLL_TAG(seq, step) with tagbits
 * (and seqmask) as given: 0 (0x7ffff) for the blocking collectives. */
void cr_sched_init(cr_sched *s, const char *op, uint16_t ctx, uint32_t tagbits, uint32_t seqmask,
                   uint32_t seq);
static inline int32_t cr_sched_tag(const cr_sched *s, int step)
{
    return (int32_t)(s->tagbits | (s->seq & s->seqmask) << 12 | ((unsigned)step & 0xfffu));
}
/* Temporary memory living as long as the schedule (arena, else the heap; large
 * blocks of freed schedules are kept for the next ones). */
void *cr_sched_alloc(cr_job *job, cr_sched *s, size_t len);
/* The reduction of the combine steps, with scratch for count elements when it
 * may not write over its inputs. */
void cr_sched_redop(cr_job *job, cr_sched *s, const cr_redop *o, size_t count);
/* A new step (the arrays grown out of line: the common case is inline, as the
 * blocking collectives build on every call). */
void cr_sched_grow(cr_job *job, cr_sched *s);
static inline cr_sstep *cr_sched_step(cr_job *job, cr_sched *s, int kind)
{
    if (__builtin_expect(s->nst == s->stcap, 0)) cr_sched_grow(job, s);
    cr_sstep *p = &s->st[s->nst++];
    p->kind = (uint8_t)kind;
    return p;
}
/* Run as built: post the receives added to the round so far now, so that its
 * sends after them find them posted (a stored round posts them in order
 * anyway); one alone still waits for the round's end and the blocking
 * receive. Nothing otherwise. */
void cr_sched_post(cr_job *job, cr_sched *s);
/* Exchanges up to this size send first and then receive (the send is eager). */
#define CR_SCHED_SMALL 1024
void cr_sched_xfer_now(cr_job *job, cr_sched *s, int kind, int peer, int step, const void *buf,
                       size_t len);
static inline void cr_sched_xfer(cr_job *job, cr_sched *s, int kind, int peer, int step,
                                 const void *buf, size_t len)
{
    if (s->now) { /* a short eager send goes out here (the blocking collectives' latency path) */
        if (kind == CR_S_SEND && len <= CR_SCHED_SMALL && len <= cr_eager(job, peer))
            cr_send(job, s->op, peer, s->ctx, cr_sched_tag(s, step), buf, len);
        else
            cr_sched_xfer_now(job, s, kind, peer, step, buf, len);
        return;
    }
    cr_sstep *p = cr_sched_step(job, s, kind);
    p->peer = peer;
    p->tag = cr_sched_tag(s, step);
    p->buf = (char *)buf;
    p->len = len;
    s->xfer++;
}
static inline void cr_sched_send(cr_job *job, cr_sched *s, int peer, int step, const void *buf,
                                 size_t len)
{
    cr_sched_xfer(job, s, CR_S_SEND, peer, step, buf, len);
}
static inline void cr_sched_recv(cr_job *job, cr_sched *s, int peer, int step, void *buf,
                                 size_t len)
{
    cr_sched_xfer(job, s, CR_S_RECV, peer, step, buf, len);
}
void cr_sched_combine(cr_job *job, cr_sched *s, const void *lo, const void *hi, void *out,
                      size_t count);
void cr_sched_copy(cr_job *job, cr_sched *s, void *dst, const void *src, size_t len);
void cr_sched_call(cr_job *job, cr_sched *s, void (*fn)(cr_job *job, void *arg), void *arg);
/* End the round under construction (an empty one is dropped; running or
 * starting a schedule ends it too). */
void cr_sched_round_end(cr_job *job, cr_sched *s);
static inline void cr_sched_round(cr_job *job, cr_sched *s)
{
    if (s->now && !s->nst && !s->nreq) return; /* run as built: nothing outstanding */
    cr_sched_round_end(job, s);
}
/* Blocking: run every round; the small exchanges of a round take the engine's
 * blocking receive (its latency path), as a blocking collective always did. */
void cr_sched_run_stored(cr_job *job, cr_sched *s);
static inline void cr_sched_run(cr_job *job, cr_sched *s)
{
    if (s->now && !s->nst && !s->nreq) {
        s->done = true;
        return;
    }
    cr_sched_run_stored(job, s);
}
/* Blocking, run while it is built (the blocking collectives: no step is
 * stored, a round's transfers go out as they are added and the round ends at
 * cr_sched_round): call right after cr_sched_init, before any step; then
 * cr_sched_run ends the last round. The order and the data of every transfer
 * and combine are those of the same schedule stored and run. */
static inline void cr_sched_now(cr_sched *s)
{
    s->now = true;
}
/* The fields every schedule starts with (cr_sched_init and cr_sched_blocking):
 * its call, context and tags, no step, round, transfer or temporary yet. */
static inline void cr_sched_base(cr_sched *s, const char *op, uint16_t ctx, uint32_t tagbits,
                                 uint32_t seqmask, uint32_t seq, cr_trunc *trunc)
{
    s->op = op;
    s->ctx = ctx;
    s->tagbits = tagbits;
    s->seqmask = seqmask;
    s->seq = seq;
    s->scratch = NULL;
    s->trunc = trunc;
    s->st = s->st_in;
    s->nst = 0;
    s->stcap = CR_SCHED_STEPS;
    s->rend = s->rend_in;
    s->nr = 0;
    s->rcap = CR_SCHED_ROUNDS;
    s->reqs = s->req_in;
    s->nreq = 0;
    s->reqcap = CR_SCHED_REQS;
    s->tmp = NULL;
    s->ntmp = s->tmpcap = 0;
    s->arena_used = 0;
    s->done = false;
}
/* A blocking collective's schedule over g, run as built, its tags
 * CR_COLL_TAG(seq, step): cr_sched_init and cr_sched_now with only the fields
 * a schedule run as built uses (every blocking collective's path). */
static inline void cr_sched_blocking(cr_sched *s, const cr_group *g, const char *op, uint32_t seq)
{
    cr_sched_base(s, op, g->ctx, 0, 0x7ffffu, seq, g->trunc);
    s->now = true;
}
/* Nonblocking: start the first round (again, once done: the persistent form),
 * then move on as far as the transfers allow (rounds ended; s->done at the end). */
void cr_sched_start(cr_job *job, cr_sched *s);
int cr_sched_advance(cr_job *job, cr_sched *s);
/* Release the transfers of an unfinished schedule (which will not be moved on
 * again) and every temporary; cr_sched_init before it is built again. */
void cr_sched_release(cr_job *job, cr_sched *s);
static inline void cr_sched_free(cr_job *job, cr_sched *s)
{
    if (s->done && !s->tmp && s->st == s->st_in && s->rend == s->rend_in && s->reqs == s->req_in)
        return; /* nothing on the heap (a blocking collective's) */
    cr_sched_release(job, s);
}

/* The algorithms as schedules over group g (member indices), steps from
 * 'step' where they take one; the reductions combine with s->o. */
void cr_build_barrier(cr_job *job, cr_sched *s, const cr_group *g);
/* Binomial tree from root. */
void cr_build_bcast(cr_job *job, cr_sched *s, const cr_group *g, void *buf, size_t len, int root,
                    int step);
/* Binomial reduce of this member's count elements into res at root: the
 * input is in, or acc itself (in NULL); acc is where partial results are
 * combined (it may be res, or in: in place). */
void cr_build_reduce(cr_job *job, cr_sched *s, const cr_group *g, const char *in, char *acc,
                     size_t count, int root, char *res);
/* Allreduce into acc: recursive doubling or Rabenseifner (steps 0-1 fold a
 * group that is not a power of two). The input is in, or acc itself (in NULL
 * or acc): the first step reads in where it would read acc, so no copy of in
 * into acc is needed. */
void cr_build_allreduce(cr_job *job, cr_sched *s, const cr_group *g, const char *in, char *acc,
                        size_t count);
/* Reduce-scatter of in (every member's whole vector) into out (this member's
 * elements off[me]..off[me+1]-1): recursive halving as Rabenseifner's first
 * half (partners at distance 1, 2, 4, ...: the runs joined stay adjacent),
 * which leaves member nr the block of member bitreverse(nr), and a last
 * exchange that swaps the blocks of members whose index is not its own bit
 * reverse; outside a power of two pairs fold first, or a commutative
 * operation goes round a ring; linear with more ranks than cores up to 4 KiB
 * (coll_reduce.c says when each). */
void cr_build_reduce_scatter(cr_job *job, cr_sched *s, const cr_group *g, const char *in, char *out,
                             const size_t *off);
/* Inclusive prefix of acc in place, recursive doubling. */
void cr_build_scan(cr_job *job, cr_sched *s, const cr_group *g, char *acc, size_t count);
/* Exclusive prefix of acc (written over) into out, as cr_coll_exscan. */
void cr_build_exscan(cr_job *job, cr_sched *s, const cr_group *g, char *acc, size_t count,
                     void *out);
/* Broadcast by messages: alg CR_ALG_LINEAR, _PIPELINE or _BINOMIAL, or
 * CR_ALG_AUTO: the one the selector takes where neither the collective area
 * nor single copy serves (as cr_coll_bcast). */
void cr_build_bcast_msg(cr_job *job, cr_sched *s, const cr_group *g, void *buf, size_t len,
                        int root, int alg);
/* The blocks' collectives, with the arguments of the cr_coll_* forms above
 * (in place where those say; the own block copied as a step of the
 * schedule, so a restart takes it again). allgather (CR_ALG_RECDBL, _RING)
 * and alltoall (CR_ALG_BRUCK, _PAIRWISE, _SCATTER, _WINDOW) run alg where it
 * applies; CR_ALG_AUTO: the message algorithm the blocking forms choose where
 * the area and single copy do not serve. */
void cr_build_gather(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, void *rbuf,
                     size_t blk, int root);
void cr_build_scatter(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, void *rbuf,
                      size_t blk, int root);
void cr_build_allgather(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, void *rbuf,
                        size_t blk, int alg);
void cr_build_alltoall(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, void *rbuf,
                       size_t blk, int alg);
void cr_build_gatherv(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, size_t slen,
                      void *rbuf, const size_t *rlens, const size_t *rdispls, int root);
void cr_build_scatterv(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf,
                       const size_t *slens, const size_t *sdispls, void *rbuf, size_t rlen,
                       int root);
void cr_build_allgatherv(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, size_t slen,
                         void *rbuf, const size_t *rlens, const size_t *rdispls);
void cr_build_alltoallv(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf,
                        const size_t *slens, const size_t *sdispls, void *rbuf, const size_t *rlens,
                        const size_t *rdispls);
/* coll_v.c's algorithms over a layout (lens/displs NULL: blocks of blk bytes
 * at i*blk): the all-gather ring (rbuf holds the own block), and the
 * all-to-all exchanges with w pairs a round (1: pairwise, CR_ALL_AT_ONCE:
 * every receive then every send in one round). */
void cr_build_allgather_ring(cr_job *job, cr_sched *s, const cr_group *g, char *rbuf,
                             const size_t *rlens, const size_t *rdispls, size_t blk);
/* All-gather in one round: every member sends its block to every other (the
 * all-at-once exchange). */
void cr_build_allgather_once(cr_job *job, cr_sched *s, const cr_group *g, char *rbuf,
                             const size_t *rlens, const size_t *rdispls, size_t blk);
/* A schedule moved on by polling (nonblocking) with more ranks than cores and
 * the algorithm left to the selector: each round then waits until every peer
 * of it has been given a core, so the data collectives take their one-round
 * forms (all at once; in 7 ranks on 2 cores the multi-round ones made the
 * nonblocking test take ~1.5x as long). A blocking run waits in the engine,
 * which gives the core away, and keeps the selector's choice. Never in a group
 * of two jobs (cr_group_oversub): one job may have more ranks than cores and
 * the other not, and the two forms do not meet. */
static inline bool cr_sched_polled(cr_job *job, const cr_sched *s, const cr_group *g, int alg)
{
    return !s->now && cr_group_oversub(job, g) && alg == CR_ALG_AUTO &&
           cr_coll_forced(job) == CR_ALG_AUTO;
}
#define CR_ALL_AT_ONCE 0x7fffffff
void cr_build_alltoall_pairs(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf,
                             const size_t *slens, const size_t *sdispls, void *rbuf,
                             const size_t *rlens, const size_t *rdispls, size_t blk, int w);

/* ---- added for MPI: collectives between two groups (coll_inter.c) ---------- */

/* An intercommunicator as the layer sees it: this rank's group 'local' (an
 * ordinary group: the local phases run over it) and the job ranks of the other
 * group. Every transfer of a call, in a group and across, travels on 'ctx'
 * (the local group's context too) with tags whose bit 31 is set, numbered by
 * *seq, which every member of both groups advances once per call: a blocking
 * call's are CR_INTER_TAG's (bit 30 clear), a nonblocking or persistent one's
 * (the interface's schedule) have CR_INTER_NB_TAGBITS (bit 30 set), so
 * blocking and nonblocking calls outstanding on one intercommunicator never
 * take each other's messages. Lengths are bytes, as everywhere; arrays named
 * r... or s... below are indexed by REMOTE member unless said otherwise. */
typedef struct cr_inter {
    cr_group *local;
    int rsize;
    const int *rranks; /* job rank of each remote member */
    uint16_t ctx;
    uint32_t *seq;
} cr_inter;

#define CR_INTER_TAGBITS 0x80000000u
#define CR_INTER_NB_TAGBITS 0xc0000000u
#define CR_INTER_SEQMASK 0x3ffffu
#define CR_INTER_TAG(seq, step)                                                                    \
    ((int32_t)(CR_INTER_TAGBITS | ((seq)&CR_INTER_SEQMASK) << 12 | ((unsigned)(step)&0xfffu)))

/* Roots of the rooted calls: a remote member index (this group sends to / gets
 * from that root), or one of these (this group holds the root). */
enum { CR_INTER_ROOT = -3, CR_INTER_NONE = -1 }; /* the root itself; its group's others */

/* The algorithms as schedules (schedule s on x->ctx, its tags and sequence
 * number set by the caller; reductions combine with s->o):
 *  - barrier: every member of both groups has entered before any leaves;
 *  - bcast: the root's len bytes reach every member of the other group;
 *  - gatherv: root: block i (rlens[i] bytes at rdispls[i] of rbuf) from remote
 *    member i; the other group: slen bytes of sbuf to the root; scatterv the
 *    other way;
 *  - allgatherv: everyone's slen bytes go to every member of the other group,
 *    where block i (from remote member i) is rlens[i] bytes at rdispls[i];
 *  - alltoallv: block i of sbuf to remote member i, block i of rbuf from it;
 *  - reduce: the root gets (into rbuf) x0 op ... op x(m-1) of the other
 *    group's m members, whose data acc holds (count elements, a temporary the
 *    reduction writes over; unused at the root and its group);
 *  - allreduce: each group gets into rbuf the reduction of the other group's
 *    data (acc as for reduce, count elements in both);
 *  - reduce_scatter: the reduction of the other group's count elements,
 *    scattered over this group: LOCAL member i gets llens[i] bytes of it from
 *    byte loffs[i] into rbuf. */
void cr_build_inter_barrier(cr_job *job, cr_sched *s, const cr_inter *x);
void cr_build_inter_bcast(cr_job *job, cr_sched *s, const cr_inter *x, void *buf, size_t len,
                          int root);
void cr_build_inter_gatherv(cr_job *job, cr_sched *s, const cr_inter *x, const void *sbuf,
                            size_t slen, void *rbuf, const size_t *rlens, const size_t *rdispls,
                            int root);
void cr_build_inter_scatterv(cr_job *job, cr_sched *s, const cr_inter *x, const void *sbuf,
                             const size_t *slens, const size_t *sdispls, void *rbuf, size_t rlen,
                             int root);
void cr_build_inter_allgatherv(cr_job *job, cr_sched *s, const cr_inter *x, const void *sbuf,
                               size_t slen, void *rbuf, const size_t *rlens, const size_t *rdispls);
void cr_build_inter_alltoallv(cr_job *job, cr_sched *s, const cr_inter *x, const void *sbuf,
                              const size_t *slens, const size_t *sdispls, void *rbuf,
                              const size_t *rlens, const size_t *rdispls);
void cr_build_inter_reduce(cr_job *job, cr_sched *s, const cr_inter *x, char *acc, void *rbuf,
                           size_t count, int root);
void cr_build_inter_allreduce(cr_job *job, cr_sched *s, const cr_inter *x, char *acc, void *rbuf,
                              size_t count);
void cr_build_inter_reduce_scatter(cr_job *job, cr_sched *s, const cr_inter *x, char *acc,
                                   void *rbuf, size_t count, const size_t *llens,
                                   const size_t *loffs);

/* The blocking forms: the schedule above built and run as built, with the
 * arguments of its builder (reductions: sbuf, this member's data, and the
 * operation o in place of acc; unused where the builder does not use acc). */
void cr_inter_barrier(cr_job *job, cr_inter *x, const char *op);
void cr_inter_bcast(cr_job *job, cr_inter *x, const char *op, void *buf, size_t len, int root);
void cr_inter_gatherv(cr_job *job, cr_inter *x, const char *op, const void *sbuf, size_t slen,
                      void *rbuf, const size_t *rlens, const size_t *rdispls, int root);
void cr_inter_scatterv(cr_job *job, cr_inter *x, const char *op, const void *sbuf,
                       const size_t *slens, const size_t *sdispls, void *rbuf, size_t rlen,
                       int root);
void cr_inter_allgatherv(cr_job *job, cr_inter *x, const char *op, const void *sbuf, size_t slen,
                         void *rbuf, const size_t *rlens, const size_t *rdispls);
void cr_inter_alltoallv(cr_job *job, cr_inter *x, const char *op, const void *sbuf,
                        const size_t *slens, const size_t *sdispls, void *rbuf, const size_t *rlens,
                        const size_t *rdispls);
void cr_inter_reduce(cr_job *job, cr_inter *x, const char *op, const void *sbuf, void *rbuf,
                     size_t count, const cr_redop *o, int root);
void cr_inter_allreduce(cr_job *job, cr_inter *x, const char *op, const void *sbuf, void *rbuf,
                        size_t count, const cr_redop *o);
void cr_inter_reduce_scatter(cr_job *job, cr_inter *x, const char *op, const void *sbuf, void *rbuf,
                             size_t count, const cr_redop *o, const size_t *llens,
                             const size_t *loffs);

/* ---- added for MPI: neighbourhood exchanges (coll_neighbor.c) ------------- */

/* A member's neighbours in a process topology: it receives block i from member
 * in[i] and sends block i to member out[i] (a negative member: none there,
 * nothing moves and the receive block is left alone); rstep[i] / sstep[i] the
 * step of block i's tag (NULL: 0), which tells two blocks between the same
 * pair of members apart. */
typedef struct cr_nbrs {
    int nin, nout;
    const int *in, *out;
    const int *rstep, *sstep;
} cr_nbrs;
/* A block: len bytes at buf. */
typedef struct cr_nbuf {
    char *buf;
    size_t len;
} cr_nbuf;
/* One round: every receive of rb (from in[i]), then every send of sb (to
 * out[i]). The schedule's tags and sequence number are the caller's. */
void cr_build_neighbor(cr_job *job, cr_sched *s, const cr_group *g, const cr_nbrs *n,
                       const cr_nbuf *rb, const cr_nbuf *sb);
/* The blocking form: the group's next sequence number, the schedule run as
 * built. */
void cr_coll_neighbor(cr_job *job, cr_group *g, const char *op, const cr_nbrs *n, const cr_nbuf *rb,
                      const cr_nbuf *sb);

#endif
