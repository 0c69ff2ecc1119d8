/* Collective data movement over point-to-point: barrier, broadcast, gather,
 * scatter, all-gather, all-to-all and shift (reductions are in coll_reduce.c).
 * Every message algorithm is a schedule builder (cr_build_*, sched.c; those
 * over any block layout in coll_v.c): the blocking form builds it and runs it
 * as built, MPI's nonblocking form (mpi_nbc.c) starts the same schedule. The
 * collective area (coll_shm.c) and single copy (coll_direct.c) serve the
 * blocking forms only, chosen first here.
 *
 * Algorithms, chosen by message and group size (COURIER_COLL_ALG forces one):
 *  - barrier: dissemination, ceil(log2 n) rounds of zero-byte messages; with
 *    more ranks than cores, linear (all to member 0, one a round, and back);
 *  - bcast: whole-job groups of more than 2 from 16 KiB, where no rank shares
 *    a core: in chunks through the collective area (coll_shm.c; between 2,
 *    one single-copy message is one copy, the area two: 1 MiB took 57 us by
 *    message, 125 through the area on 16 cores); otherwise binomial tree;
 *    long messages (>= 256 KiB, more than 2 members) go
 *    down a chain in segments so that every link works at once (pipeline: in
 *    round k a member receives segment k and forwards segment k-1); with more
 *    ranks than cores, the root sends to all at once (linear), at every size;
 *    where every member is on this host with single copy (more than 2
 *    members, no more ranks than cores), from 1 MiB each member reads a share
 *    from the root and the rest from the others (split, coll_direct.c; every
 *    member reading the whole root's buffer, direct, is forced only);
 *  - gather/scatter: the root posts every transfer at once (linear, nonblocking);
 *  - allgather: through the collective area (coll_shm.c) for whole-job groups
 *    (blocks longer than a slot only where no rank shares a core); recursive
 *    doubling when the group size is a power of two and the total is small, a
 *    ring otherwise;
 *  - alltoall: Bruck (log2 n rounds of packed blocks) for small blocks, the
 *    pairwise exchange (n-1 rounds, one partner each) for middle ones, and from
 *    4 KiB every transfer posted at once (scatter: receives first, sends in the
 *    order me+1, me+2, ...) unless there are more ranks than cores (then
 *    pairwise: a rank that waits gives its core to the one it waits for). At 16
 *    ranks on 16 cores, scatter took 0.62-0.88 of pairwise's time from 4 KiB to
 *    1 MiB, but 1.3x at 2 KiB (bench/results/osu_coll16.md). From 8 KiB, where
 *    every member is on this host with single copy (same conditions as bcast),
 *    each member reads its blocks out of the others' send buffers in pairwise
 *    order (direct, coll_direct.c; from 256 KiB with more ranks than cores);
 *    forced only: pairwise in rounds of
 *    COURIER_COLL_WINDOW exchanges (window).
 * Invariants: every member calls the same collectives in the same order, so the
 * group's sequence number (part of every tag) is the same everywhere and the
 * messages of two successive collectives never match each other; all traffic
 * stays in the group's context, so it never matches point-to-point traffic;
 * a member never blocks in a send whose receiver waits for it in turn (when both
 * sides of an exchange may be long, the receive is posted before the send). */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

#define BCAST_PIPE_MIN (256u << 10)
#define BCAST_SEG_MIN (64u << 10)
#define ALLGATHER_RD_MAX (64u << 10)
#define BRUCK_BLK_MAX 256
#define SCATTER_BLK_MIN 4096
/* Single copy (coll_direct.c), where every member is on this host, more than
 * 2 members and no more ranks than cores. Set from COURIER_COLL_ALG sweeps on
 * 16 cores (bench/results/scale16.md): split beat the pipeline from 1 MiB
 * (0.61x Open MPI's time at 8 ranks, 0.98x at 16; 4 MiB 0.49x, 0.74x) and
 * lost below; direct all-to-all took 0.47-0.61x from 8 KiB. The direct
 * broadcast (every member reading the root's pages at once) lost everywhere,
 * 1.2-5x Open MPI's time: readers contend in the kernel on the root's pages;
 * it is left to be forced only. */
#define BCAST_SPLIT_MIN (1u << 20)
/* Through the collective area (coll_shm.c): on 16 cores 16 KiB-4 MiB took
 * 0.21-0.55x Open MPI's time at 16 ranks (binomial, pipeline and split
 * 0.5-2.4x); shorter ones stay with the binomial tree, whose root waits for
 * nobody (bench/results/scale16.md). */
#define BCAST_AREA_MIN (16u << 10)
#define ALLTOALL_DIRECT_MIN 8192
/* With more ranks than cores, direct from 256 KiB: its members read at their own
 * pace between two short collectives, where each pairwise step needs both
 * partners on a core at once. 4 ranks on 2 cores: 1-4 MiB 0.43-0.95x
 * pairwise's time (Open MPI's 0.73-1.28x direct's), 8 ranks 128 KiB-4 MiB
 * 0.32-0.83x; below 256 KiB the two were within their noise at 4 ranks
 * (bench/results/osu_coll2.md). */
#define ALLTOALL_DIRECT_OVERSUB_MIN (256u << 10)
/* With more ranks than cores, the all-gather reads its blocks directly from
 * 32 KiB a block (every round of the ring or of recursive doubling needs both
 * partners on a core: at 4 ranks on 2 cores 32 KiB 67 us against 132 by
 * messages, 1 MiB 1.0-1.2 ms against 1.1-1.6; at 8 ranks 291 against 722 us
 * and 5.5 ms against 8.9-12.4; Open MPI 329 us and 6.4 ms). */
#define ALLGATHER_DIRECT_OVERSUB_MIN (32u << 10)
#define WINDOW_DEFAULT 4

int cr_coll_forced(cr_job *job)
{
    if (job->coll_forced) return job->coll_forced - 1;
    static const char *const names[] = {"auto",   "binomial", "pipeline", "recdbl", "rabenseifner",
                                        "ring",   "bruck",    "pairwise", "linear", "scatter",
                                        "direct", "split",    "window",   "area"};
    const char *v = getenv("COURIER_COLL_ALG");
    int f = 0;
    for (int i = 0; v && i < (int)(sizeof names / sizeof *names); i++)
        if (!strcmp(v, names[i])) f = i;
    job->coll_forced = f + 1;
    return f;
}

/* ---- point-to-point helpers ---------------------------------------------- */

void cr_coll_send(cr_job *job, cr_group *g, const char *op, int to, int32_t tag, const void *buf,
                  size_t len)
{
    cr_send(job, op, cr_group_rank(g, to), g->ctx, tag, buf, len);
}

cr_req *cr_coll_irecv(cr_job *job, cr_group *g, const char *op, int from, int32_t tag, void *buf,
                      size_t len)
{
    cr_sel sel = {
        .src = cr_group_rank(g, from), .ctx = g->ctx, .tag_mode = CR_TAG_EXACT, .tag = tag};
    return cr_irecv_note(job, op, &sel, buf, len, g->trunc);
}

void cr_coll_wait(cr_job *job, cr_req *r)
{
    cr_req_wait(job, r);
    cr_req_release(job, r);
}

void cr_coll_recv(cr_job *job, cr_group *g, const char *op, int from, int32_t tag, void *buf,
                  size_t len)
{
    cr_sel sel = {
        .src = cr_group_rank(g, from), .ctx = g->ctx, .tag_mode = CR_TAG_EXACT, .tag = tag};
    cr_status st;
    cr_recv_note(job, op, &sel, buf, len, g->trunc, &st); /* the engine's blocking receive */
}

void *cr_coll_alloc(cr_job *job, const char *op, size_t len)
{
    void *p = malloc(len ? len : 1);
    if (!p) cr_fatal(job, op, "out of memory for %zu bytes of collective scratch space", len);
    return p;
}

/* ---- barrier ------------------------------------------------------------- */

#define LINEAR_MAX 4096

bool cr_coll_linear(cr_job *job, const cr_group *g, size_t len)
{
    int f = cr_coll_forced(job);
    if (f == CR_ALG_LINEAR) return g->size > 2;
    return f == CR_ALG_AUTO && cr_group_oversub(job, g) && g->size > 2 && len <= LINEAR_MAX;
}

/* i mod n for 0 <= i < 2n, without a division (on every blocking call's path). */
static inline int wrap(int i, int n)
{
    return i >= n ? i - n : i;
}

void cr_build_barrier(cr_job *job, cr_sched *s, const cr_group *g)
{
    int n = g->size, me = g->me, step = 0;
    if (cr_coll_linear(job, g, 0)) { /* all to member 0 (one a round, in order), and back */
        cr_trace_how(job, "linear");
        int zero = cr_group_rank(g, 0);
        if (me) {
            cr_sched_send(job, s, zero, 0, NULL, 0);
            cr_sched_round(job, s);
            cr_sched_recv(job, s, zero, 1, NULL, 0);
            cr_sched_round(job, s);
            return;
        }
        for (int i = 1; i < n; i++) {
            cr_sched_recv(job, s, cr_group_rank(g, i), 0, NULL, 0);
            cr_sched_round(job, s);
        }
        for (int i = 1; i < n; i++) cr_sched_send(job, s, cr_group_rank(g, i), 1, NULL, 0);
        cr_sched_round(job, s);
        return;
    }
    cr_trace_how(job, "dissemination");
    for (int k = 1; k < n; k <<= 1, step++) {
        cr_sched_recv(job, s, cr_group_rank(g, wrap(me - k + n, n)), step, NULL, 0);
        cr_sched_send(job, s, cr_group_rank(g, wrap(me + k, n)), step, NULL, 0);
        cr_sched_round(job, s);
    }
}

void cr_coll_barrier(cr_job *job, cr_group *g, const char *op)
{
    if (cr_coll_shm_barrier(job, g, op)) return;
    uint32_t seq = g->seq++;
    cr_sched s;
    cr_sched_blocking(&s, g, op, seq);
    cr_build_barrier(job, &s, g);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* ---- broadcast ----------------------------------------------------------- */

void cr_build_bcast(cr_job *job, cr_sched *s, const cr_group *g, void *buf, size_t len, int root,
                    int step)
{
    int n = g->size, rel = wrap(g->me - root + n, n), mask = 1;
    while (mask < n) {
        if (rel & mask) {
            cr_sched_recv(job, s, cr_group_rank(g, wrap(rel - mask + root, n)), step, buf, len);
            cr_sched_round(job, s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            cr_sched_send(job, s, cr_group_rank(g, wrap(rel + mask + root, n)), step, buf, len);
    cr_sched_round(job, s);
}

void cr_coll_bcast_tree(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root,
                        uint32_t seq, int step)
{
    cr_trace_how(job, "binomial");
    cr_sched s;
    cr_sched_blocking(&s, g, op, seq);
    cr_build_bcast(job, &s, g, buf, len, root, step);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* Chain root -> root+1 -> ... in segments: in round k member i receives
 * segment k and forwards segment k-1 (the root sends segment k). */
static void build_bcast_pipeline(cr_job *job, cr_sched *s, const cr_group *g, char *buf, size_t len,
                                 int root)
{
    cr_trace_how(job, "pipeline");
    int n = g->size, rel = wrap(g->me - root + n, n);
    size_t seg = len / 64 > BCAST_SEG_MIN ? len / 64 : BCAST_SEG_MIN;
    size_t nseg = (len + seg - 1) / seg;
    int prev = cr_group_rank(g, wrap(g->me - 1 + n, n)),
        next = cr_group_rank(g, wrap(g->me + 1, n));
#define SEG_LEN(k) ((k) + 1 < nseg ? seg : len - (k)*seg)
    for (size_t k = 0; k <= nseg; k++) {
        if (rel && k < nseg) cr_sched_recv(job, s, prev, 0, buf + k * seg, SEG_LEN(k));
        size_t f = rel ? k - 1 : k; /* the segment forwarded in this round */
        if (rel < n - 1 && (rel ? k >= 1 : k < nseg))
            cr_sched_send(job, s, next, 0, buf + f * seg, SEG_LEN(f));
        cr_sched_round(job, s);
    }
#undef SEG_LEN
}

/* The root sends to every member at once. With more ranks than cores and long
 * messages this beats the tree: each member needs the CPU once to pull its copy,
 * none waits for a parent to be scheduled first (8 ranks on 2 cores: 64 KiB 44-45
 * -> 34-35 us, 1 MiB 390-470 -> 325-340). */
static void build_bcast_linear(cr_job *job, cr_sched *s, const cr_group *g, void *buf, size_t len,
                               int root)
{
    cr_trace_how(job, "linear");
    if (g->me != root)
        cr_sched_recv(job, s, cr_group_rank(g, root), 0, buf, len);
    else
        for (int i = 0; i < g->size; i++)
            if (i != root) cr_sched_send(job, s, cr_group_rank(g, i), 0, buf, len);
    cr_sched_round(job, s);
}

/* The selector's message algorithm (f: COURIER_COLL_ALG's where it applies). */
static int bcast_pick(const cr_job *job, const cr_group *g, size_t len, int f)
{
    if (f == CR_ALG_DIRECT || f == CR_ALG_SPLIT) f = CR_ALG_AUTO; /* these are not messages */
    /* With more ranks than cores, linear at every size: a tree's inner members
     * forward only once the scheduler gives them a core, one level after the
     * other, while the root alone sends to all and no member waits for another
     * (from 16 KiB since the start; below it too since member 0 leaves the
     * oversubscribed barrier first, coll_shm.c: osu_bcast 8-128 B, 4 ranks on
     * 2 cores, quiet, 5 runs interleaved: binomial 0.20-0.37 us, linear
     * 0.11-0.16, Open MPI 0.28-0.40; 1 KiB 0.40-0.82 -> 0.28-0.49; beside one
     * CPU-bound process 8-128 B 0.17-2.73 -> 0.09-0.14, Open MPI 0.12-1.36) */
    if (f == CR_ALG_LINEAR || (f == CR_ALG_AUTO && cr_group_oversub(job, g))) return CR_ALG_LINEAR;
    bool pipe = f == CR_ALG_PIPELINE || (f != CR_ALG_BINOMIAL && len >= BCAST_PIPE_MIN &&
                                         g->size > 2 && !cr_group_oversub(job, g));
    return pipe && len > 0 ? CR_ALG_PIPELINE : CR_ALG_BINOMIAL;
}

/* alg picked (inline in the blocking broadcast's path). */
static inline void bcast_msg(cr_job *job, cr_sched *s, const cr_group *g, void *buf, size_t len,
                             int root, int alg)
{
    if (alg == CR_ALG_LINEAR) {
        build_bcast_linear(job, s, g, buf, len, root);
    } else if (alg == CR_ALG_PIPELINE && len > 0) {
        build_bcast_pipeline(job, s, g, buf, len, root);
    } else {
        cr_trace_how(job, "binomial");
        cr_build_bcast(job, s, g, buf, len, root, 0);
    }
}

void cr_build_bcast_msg(cr_job *job, cr_sched *s, const cr_group *g, void *buf, size_t len,
                        int root, int alg)
{
    if (g->size == 1) return;
    bcast_msg(job, s, g, buf, len, root,
              alg == CR_ALG_AUTO ? bcast_pick(job, g, len, cr_coll_forced(job)) : alg);
}

void cr_coll_bcast(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root)
{
    uint32_t seq = g->seq++;
    if (g->size == 1) return;
    int f = cr_coll_forced(job);
    if ((f == CR_ALG_AREA ||
         (f == CR_ALG_AUTO && !cr_group_oversub(job, g) && g->size > 2 && len >= BCAST_AREA_MIN)) &&
        cr_coll_shm_bcast(job, g, op, buf, len, root))
        return;
    if ((f == CR_ALG_DIRECT || f == CR_ALG_SPLIT ||
         (f == CR_ALG_AUTO && !cr_group_oversub(job, g) && g->size > 2 &&
          len >= BCAST_SPLIT_MIN)) &&
        len > 0 && cr_coll_direct_ok(job, g)) {
        if (f == CR_ALG_DIRECT)
            cr_coll_bcast_direct(job, g, op, buf, len, root, seq);
        else
            cr_coll_bcast_split(job, g, op, buf, len, root, seq);
        return;
    }
    cr_sched s;
    cr_sched_blocking(&s, g, op, seq);
    bcast_msg(job, &s, g, buf, len, root, bcast_pick(job, g, len, f));
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* ---- gather and scatter: coll_v.c (blocks of any layout) ------------------ */

void cr_coll_gather(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                    size_t blk, int root)
{
    cr_sched s;
    cr_sched_blocking(&s, g, op, g->seq++);
    cr_build_gather(job, &s, g, sbuf, rbuf, blk, root);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

void cr_coll_scatter(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                     size_t blk, int root)
{
    cr_sched s;
    cr_sched_blocking(&s, g, op, g->seq++);
    cr_build_scatter(job, &s, g, sbuf, rbuf, blk, root);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* ---- all-gather ---------------------------------------------------------- */

/* Recursive doubling: in step k member me swaps the 2^k blocks it holds with
 * me ^ 2^k (a power-of-two group). */
static void allgather_recdbl(cr_job *job, cr_sched *s, const cr_group *g, char *rbuf, size_t blk)
{
    cr_trace_how(job, "recursive doubling");
    int me = g->me, step = 0;
    for (int mask = 1; mask < g->size; mask <<= 1, step++) {
        int peer = me ^ mask, rank = cr_group_rank(g, peer);
        int mine = me & ~(mask - 1), theirs = peer & ~(mask - 1);
        cr_sched_recv(job, s, rank, step, rbuf + theirs * blk, mask * blk);
        cr_sched_send(job, s, rank, step, rbuf + mine * blk, mask * blk);
        cr_sched_round(job, s);
    }
}

void cr_build_allgather(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, void *rbuf,
                        size_t blk, int alg)
{
    char *r = rbuf;
    if (sbuf) cr_sched_copy(job, s, r + g->me * blk, sbuf, blk);
    int n = g->size, f = alg == CR_ALG_AUTO ? cr_coll_forced(job) : alg;
    bool pof2 = (n & (n - 1)) == 0;
    if (n == 1) return;
    if (cr_sched_polled(job, s, g, alg)) {
        cr_build_allgather_once(job, s, g, r, NULL, NULL, blk);
        return;
    }
    if (pof2 && (f == CR_ALG_RECDBL || (f != CR_ALG_RING && blk * n <= ALLGATHER_RD_MAX)))
        allgather_recdbl(job, s, g, r, blk);
    else
        cr_build_allgather_ring(job, s, g, r, NULL, NULL, blk);
}

void cr_coll_allgather_msgs(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                            size_t blk)
{
    char *own = (char *)rbuf + g->me * blk;
    if (own != sbuf) memmove(own, sbuf, blk);
    if (cr_coll_shm_allgather(job, g, op, rbuf, blk)) return;
    cr_sched s;
    cr_sched_blocking(&s, g, op, g->seq++);
    cr_build_allgather(job, &s, g, NULL, rbuf, blk, CR_ALG_AUTO);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* With more ranks than cores from ALLGATHER_DIRECT_OVERSUB_MIN each member
 * reads the others' blocks (direct); else the host's collective area where
 * the blocks fit, recursive doubling or the ring. Direct never passes over the
 * area: its slot (16 KiB at most) is shorter than that, and a forced algorithm
 * turns the area off (coll_shm.c). */
bool cr_coll_allgather_reads(cr_job *job, const cr_group *g, size_t blk)
{
    int f = cr_coll_forced(job);
    return g->size > 1 && blk > 0 &&
           (f == CR_ALG_DIRECT || (f == CR_ALG_AUTO && g->size > 2 && cr_group_oversub(job, g) &&
                                   blk >= ALLGATHER_DIRECT_OVERSUB_MIN)) &&
           cr_coll_direct_ok(job, g);
}

void cr_coll_allgather(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                       size_t blk)
{
    if (cr_coll_allgather_reads(job, g, blk)) {
        char *own = (char *)rbuf + g->me * blk;
        if (own != sbuf) memmove(own, sbuf, blk);
        sbuf = own; /* others read it there */
        if (cr_coll_allgather_direct(job, g, op, rbuf, blk)) return;
    }
    cr_coll_allgather_msgs(job, g, op, sbuf, rbuf, blk);
}

/* ---- all-to-all ---------------------------------------------------------- */

/* Bruck: rotate so that block i is for member me+i; in round k every block whose
 * index has bit k set moves k members on; at the end block i came from me-i. */
static void alltoall_bruck(cr_job *job, cr_sched *s, const cr_group *g, const char *sbuf,
                           char *rbuf, size_t blk)
{
    cr_trace_how(job, "bruck");
    int n = g->size, me = g->me;
    char *tmp = cr_sched_alloc(job, s, 3 * (size_t)n * blk);
    char *pack = tmp + (size_t)n * blk, *unpack = pack + (size_t)n * blk;
    for (int i = 0; i < n; i++)
        cr_sched_copy(job, s, tmp + i * blk, sbuf + wrap(me + i, n) * blk, blk);
    int step = 0;
    for (int k = 1; k < n; k <<= 1, step++) {
        size_t m = 0;
        for (int i = 0; i < n; i++)
            if (i & k) cr_sched_copy(job, s, pack + (m++) * blk, tmp + i * blk, blk);
        cr_sched_recv(job, s, cr_group_rank(g, wrap(me - k + n, n)), step, unpack, m * blk);
        cr_sched_send(job, s, cr_group_rank(g, wrap(me + k, n)), step, pack, m * blk);
        cr_sched_round(job, s);
        m = 0;
        for (int i = 0; i < n; i++)
            if (i & k) cr_sched_copy(job, s, tmp + i * blk, unpack + (m++) * blk, blk);
    }
    for (int i = 0; i < n; i++)
        cr_sched_copy(job, s, rbuf + wrap(me - i + n, n) * blk, tmp + i * blk, blk);
    cr_sched_round(job, s);
}

/* Exchanges in flight for the window all-to-all: COURIER_COLL_WINDOW (read
 * per call: no state kept), else WINDOW_DEFAULT. */
static int window_of(void)
{
    const char *v = getenv("COURIER_COLL_WINDOW");
    long w = v ? strtol(v, NULL, 10) : WINDOW_DEFAULT;
    return w < 1 ? 1 : w > 4096 ? 4096 : (int)w;
}

void cr_build_alltoall(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, void *rbuf,
                       size_t blk, int alg)
{
    int f = alg == CR_ALG_AUTO ? cr_coll_forced(job) : alg;
    if (f == CR_ALG_DIRECT || f == CR_ALG_SPLIT) f = CR_ALG_AUTO; /* does not apply here */
    if (cr_sched_polled(job, s, g, alg) && g->size > 2) f = CR_ALG_SCATTER;
    if (f == CR_ALG_WINDOW && g->size > 1)
        cr_build_alltoall_pairs(job, s, g, sbuf, NULL, NULL, rbuf, NULL, NULL, blk, window_of());
    else if (g->size > 2 && (f == CR_ALG_BRUCK || (f == CR_ALG_AUTO && blk <= BRUCK_BLK_MAX)))
        alltoall_bruck(job, s, g, sbuf, rbuf, blk);
    else if (g->size > 2 &&
             (f == CR_ALG_SCATTER ||
              (f == CR_ALG_AUTO && !cr_group_oversub(job, g) && blk >= SCATTER_BLK_MIN)))
        cr_build_alltoall_pairs(job, s, g, sbuf, NULL, NULL, rbuf, NULL, NULL, blk, CR_ALL_AT_ONCE);
    else
        cr_build_alltoall_pairs(job, s, g, sbuf, NULL, NULL, rbuf, NULL, NULL, blk, 1);
}

void cr_coll_alltoall(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                      size_t blk)
{
    if (cr_coll_shm_alltoall(job, g, op, sbuf, rbuf, blk)) return;
    cr_sched s;
    cr_sched_blocking(&s, g, op, g->seq++); /* (nothing to free if the direct path serves) */
    int f = cr_coll_forced(job);
    size_t direct_min =
        cr_group_oversub(job, g) ? ALLTOALL_DIRECT_OVERSUB_MIN : ALLTOALL_DIRECT_MIN;
    if ((f == CR_ALG_DIRECT || (f == CR_ALG_AUTO && g->size > 2 && blk >= direct_min)) && blk > 0 &&
        g->size > 1 && cr_coll_direct_ok(job, g)) {
        if (cr_coll_alltoall_direct(job, g, op, sbuf, rbuf, blk)) return;
        /* a read was refused: by messages */
        cr_build_alltoall_pairs(job, &s, g, sbuf, NULL, NULL, rbuf, NULL, NULL, blk, 1);
    } else {
        cr_build_alltoall(job, &s, g, sbuf, rbuf, blk, CR_ALG_AUTO);
    }
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* ---- shift --------------------------------------------------------------- */

void cr_coll_shift(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                   size_t len, int step, bool circular)
{
    cr_trace_how(job, "shift");
    int32_t tag = CR_COLL_TAG(g->seq++, 0);
    int n = g->size;
    long to = (long)g->me + step, from = (long)g->me - step;
    if (circular) {
        to = ((to % n) + n) % n;
        from = ((from % n) + n) % n;
    }
    bool has_to = to >= 0 && to < n, has_from = from >= 0 && from < n;
    cr_req *r = has_from ? cr_coll_irecv(job, g, op, (int)from, tag, rbuf, len) : NULL;
    if (has_to) cr_coll_send(job, g, op, (int)to, tag, sbuf, len);
    if (r) cr_coll_wait(job, r);
}
