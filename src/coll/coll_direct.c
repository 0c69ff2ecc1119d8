/* Single-copy collectives: broadcast, all-to-all, all-gather, reduce and all-reduce where every
 * member reads what it needs straight out of the other members' buffers (process_vm_readv, the
 * transport's get), instead of having it sent by messages.
 *
 * Why: a binomial broadcast makes one full copy per level, in sequence (four
 * at 16 ranks); a pipeline or a message all-to-all pays a rendezvous (RTS,
 * match, FIN) per block. Here the data moves once, by the member that needs
 * it, all members at once; messages carry only addresses and "done".
 *
 *  - bcast "direct": the root's address goes down a binomial tree (each member
 *    forwards it before it reads), every member reads the whole message from
 *    the root, then tells the root so (one small message each); the root
 *    leaves when all have.
 *  - bcast "split": the same address tree; reader k (the k-th member after
 *    the root) reads share k of the n-1 page-aligned shares from the root; an
 *    all-gather of the readers' buffer addresses (which also says that every
 *    share is in place) follows; then each reader reads every other share from
 *    the reader that holds it, starting with the next one, so that the load is
 *    spread over all members' pages instead of the root's; an all-reduce of
 *    the readers' failures ends it (no member leaves, and may change its
 *    buffer, while another may still read it).
 *  - alltoall "direct": an all-gather of send-buffer addresses, then in step i
 *    (1..n-1) member me reads its block from member me-i (pairwise order: in
 *    each step every member is read by exactly one other), then an all-reduce
 *    of the failures. Each read is one system call, so each member has exactly
 *    one transfer in flight: the throttle is built in.
 *  - allgather "direct": the same, from the receive buffers (each member's
 *    own block is in its place there before its address is sent): in step i
 *    member me reads member me-i's own block. Chosen with more ranks than
 *    cores from 32 KiB a block (coll.c). The allgatherv's (coll_v.c) sends
 *    the address of its own block, since each member lays out its receive
 *    buffer as it likes (displacements are its own), and reads each block's
 *    own length.
 *  - allreduce "direct": an all-gather of input addresses, then member i
 *    reads share i of every member's input and combines it as the message
 *    algorithms combine each element (so the result is theirs, bit for bit),
 *    512 KiB at a time;
 *    an all-reduce of the failures (no input is read any more: in place, the
 *    receive buffers may change), every member reads the other shares out of
 *    their owners' results, and a last all-reduce of the failures (no member
 *    frees its share while another may read it). Chosen with more ranks than
 *    cores from 256 KiB (coll_reduce.c): members read at their own pace.
 *  - reduce "direct": the all-reduce's shares, each combined in the binomial
 *    tree's order (members from the tree's root, joined as a binary counter:
 *    cr_build_reduce's bits, which MPI_Ireduce runs), then only the root
 *    reads them; the last all-reduce of the failures keeps every share until
 *    the root has read it (a refusal there: the shares go to the root by
 *    messages). Chosen as the all-reduce's.
 *
 * Where they apply (cr_coll_direct_ok): every member is on this host and its
 * transport offers single copy. That is decided from job-wide facts (the host
 * of each rank, the transport table), so every member decides the same. A
 * read can still be refused at run time (COURIER_NO_CMA on one rank, a kernel
 * that denies process_vm_readv): then the member that could not read gets the
 * data another way, decided the same on every member: in "direct" bcast the
 * root sends it to whoever said so in its "done"; in "split" and the
 * all-to-all and all-gather everyone learns of any failure from the final all-reduce (or,
 * before anything moved, from the all-gather) and everyone redoes the
 * operation by messages (binomial, pairwise, the ring), while every buffer is still
 * intact; in the all-reduce a refusal among the inputs is learnt at the first
 * agreement (every input intact: the caller runs the message algorithm), one
 * among the shares at the last (every share still held: an all-gather of the
 * shares by messages). Every read is the engine's single copy (src/core/single_copy.h),
 * which holds the rule: a refusal turns single copy off for that peer, any
 * other error of the read ends the job with the call, the rank and the
 * reason.
 *
 * Not schedules (sched.c), unlike the message collectives: their messages
 * could be rounds (the address tree is cr_build_bcast of 8 bytes, the
 * agreements cr_build_allgather and cr_build_allreduce) and their reads call
 * steps (cr_sched_call, each read's address in a temporary an earlier round
 * filled), but what comes after depends on the data: in split and the
 * all-to-all every member redoes the operation by messages when any read was
 * refused, as the final all-reduce says, and in direct bcast the root sends
 * to whoever said so. A schedule's rounds are fixed when it is built: sched.c
 * has no conditional step, and while a builder run as built (blocking) could
 * branch, the same schedule stored, which is what makes it one (what
 * MPI_Ibcast and MPI_Bcast_init start), could not. A conditional step (skip
 * these rounds unless a flag every member computes alike) would change the
 * runner every collective takes, for paths only the blocking selector picks
 * (the nonblocking broadcasts and all-to-alls are message schedules). Speed is
 * not what stops it: run as built, the schedule would add its builder's few
 * steps to a copy of at least 1 MiB (coll.c's BCAST_SPLIT_MIN) by default;
 * only its two agreements would become message rounds where today a group
 * with a collective area (forced split on a whole-job group) takes the
 * area's.
 *
 * Invariants: no member leaves before every read of its buffer is done (the
 * root waits for every "done"; split, alltoall and allreduce end in an
 * all-reduce that every member enters only after its last read); messages use
 * the group's context and tags of this collective's sequence number (steps
 * 0-3), and the internal all-gather and all-reduce take sequence numbers of
 * their own, the same on every member because every member takes the same
 * path. */
#include <stdlib.h>
#include <string.h>

#include "../core/single_copy.h"
#include "coll.h"

bool cr_coll_direct_ok(const cr_job *job, const cr_group *g)
{
    int here = job->host_of[job->rank];
    for (int i = 0; i < g->size; i++) {
        int r = cr_group_rank(g, i);
        if (job->host_of[r] != here || !cr_sc_offered(job, r)) return false;
    }
    return true;
}

/* Read len bytes at addr of member m into dst (the engine's single copy).
 * False when single copy is refused (now or before): the caller takes the
 * data another way. Any other failure ends the job. */
static bool read_from(cr_job *job, cr_group *g, const char *op, int m, void *dst, uint64_t addr,
                      size_t len)
{
    return cr_sc_read(job, op, cr_group_rank(g, m), dst, addr, len);
}

/* Can this member read every other member's memory (as far as it knows)? */
static bool reads_all(const cr_job *job, const cr_group *g)
{
    for (int i = 0; i < g->size; i++)
        if (i != g->me && !cr_sc_on(job, cr_group_rank(g, i), CR_SC_READ)) return false;
    return true;
}

/* An all-or-nothing agreement: did any member fail? */
static bool any_failed(cr_job *job, cr_group *g, const char *op, long failed)
{
    long any = 0;
    cr_redop o = CR_OP_PREDEF(cr_op_bor_long, long);
    cr_coll_allreduce(job, g, op, &failed, &any, 1, &o);
    return any != 0;
}

/* What each member tells the others before the all-to-all and the all-reduce:
 * its buffers' addresses, and whether it can read every other member. */
typedef struct card {
    uint64_t a, b;
    uint64_t ok;
} card;

/* Every member's card (to free), or NULL on every member alike when one of
 * them cannot read every other: then nothing has moved. */
static card *cards_of(cr_job *job, cr_group *g, const char *op, uint64_t a, uint64_t b)
{
    card mine = {a, b, reads_all(job, g)};
    card *all = cr_coll_alloc(job, op, (size_t)g->size * sizeof *all);
    cr_coll_allgather_msgs(job, g, op, &mine, all, sizeof mine);
    for (int i = 0; i < g->size; i++)
        if (!all[i].ok) {
            free(all);
            return NULL;
        }
    return all;
}

/* The root's address down the binomial tree rooted at root: received from
 * the parent (except at the root) and forwarded to the children. */
static void address_down(cr_job *job, cr_group *g, const char *op, int root, uint64_t *addr,
                         int32_t tag)
{
    int n = g->size, rel = (g->me - root + n) % n, mask = 1;
    while (mask < n) {
        if (rel & mask) {
            cr_coll_recv(job, g, op, (rel - mask + root) % n, tag, addr, sizeof *addr);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            cr_coll_send(job, g, op, (rel + mask + root) % n, tag, addr, sizeof *addr);
}

/* ---- broadcast ----------------------------------------------------------- */

void cr_coll_bcast_direct(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root,
                          uint32_t seq)
{
    cr_trace_how(job, "direct");
    int n = g->size;
    uint64_t addr = (uintptr_t)buf;
    address_down(job, g, op, root, &addr, CR_COLL_TAG(seq, 0));
    if (g->me != root) {
        uint8_t ok = read_from(job, g, op, root, buf, addr, len);
        cr_coll_send(job, g, op, root, CR_COLL_TAG(seq, 1), &ok, 1);
        if (!ok) cr_coll_recv(job, g, op, root, CR_COLL_TAG(seq, 2), buf, len);
        return;
    }
    cr_req **r = cr_coll_alloc(job, op, (size_t)n * sizeof *r);
    int nr = 0;
    for (int i = 0; i < n; i++) {
        if (i == root) continue;
        uint8_t ok;
        cr_coll_recv(job, g, op, i, CR_COLL_TAG(seq, 1), &ok, 1);
        if (!ok)
            r[nr++] = cr_isend(job, op, cr_group_rank(g, i), g->ctx, CR_COLL_TAG(seq, 2), buf, len);
    }
    for (int i = 0; i < nr; i++) cr_coll_wait(job, r[i]);
    free(r);
}

/* Share k (1..n-1) of len bytes over n-1 readers: page-aligned when every
 * reader gets at least a page, so that no page is pinned by two readers. */
static void share_of(size_t len, int n, int k, size_t *off, size_t *l)
{
    size_t parts = (size_t)n - 1, q = len / parts + (len % parts != 0);
    if (len >= parts * 4096) q = (q + 4095) & ~(size_t)4095;
    size_t lo = q * (size_t)(k - 1), hi = lo + q;
    lo = lo < len ? lo : len;
    hi = hi < len ? hi : len;
    *off = lo;
    *l = hi - lo;
}

typedef struct held {
    uint64_t addr; /* the member's buffer */
    uint64_t ok;   /* it holds its share (the root: always) */
} held;

void cr_coll_bcast_split(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root,
                         uint32_t seq)
{
    cr_trace_how(job, "split");
    int n = g->size, rel = (g->me - root + n) % n;
    uint64_t raddr = (uintptr_t)buf;
    address_down(job, g, op, root, &raddr, CR_COLL_TAG(seq, 0));
    held mine = {(uintptr_t)buf, 1};
    if (rel) {
        size_t off, l;
        share_of(len, n, rel, &off, &l);
        mine.ok = read_from(job, g, op, root, (char *)buf + off, raddr + off, l);
    }
    held *all = cr_coll_alloc(job, op, (size_t)n * sizeof *all);
    cr_coll_allgather_msgs(job, g, op, &mine, all, sizeof mine);
    long failed = 0;
    for (int i = 0; i < n; i++) failed |= !all[i].ok;
    if (!failed && rel) {
        for (int s = 1; s < n - 1 && !failed; s++) {
            int k = (rel - 1 + s) % (n - 1) + 1; /* the next shares first */
            int m = (k + root) % n;
            size_t off, l;
            share_of(len, n, k, &off, &l);
            failed = !read_from(job, g, op, m, (char *)buf + off, all[m].addr + off, l);
        }
    }
    free(all);
    if (any_failed(job, g, op, failed)) cr_coll_bcast_tree(job, g, op, buf, len, root, seq, 3);
}

/* ---- all-to-all and all-gather ------------------------------------------ */

/* In step i (1..n-1) this member reads member me-i's block (every member is
 * read by exactly one other per step; one read in flight each: the throttle
 * is built in) into its place in rbuf, out of that member's buffer at addr
 * (its card): the block for this member (an all-to-all's send buffer) or, own,
 * that member's own block (an all-gather's receive buffer); then the
 * agreement. */
static bool read_blocks(cr_job *job, cr_group *g, const char *op, uint64_t addr, char *rbuf,
                        size_t blk, bool own)
{
    int n = g->size, me = g->me;
    card *all = cards_of(job, g, op, addr, 0);
    if (!all) return false;
    long failed = 0;
    for (int i = 1; i < n && !failed; i++) {
        int from = (me - i + n) % n;
        uint64_t at = all[from].a + (uint64_t)(own ? from : me) * blk;
        failed = !read_from(job, g, op, from, rbuf + (size_t)from * blk, at, blk);
    }
    free(all);
    return !any_failed(job, g, op, failed);
}

bool cr_coll_alltoall_direct(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                             size_t blk)
{
    cr_trace_how(job, "direct");
    size_t me = (size_t)g->me * blk;
    memmove((char *)rbuf + me, (const char *)sbuf + me, blk);
    return read_blocks(job, g, op, (uintptr_t)sbuf, rbuf, blk, false);
}

bool cr_coll_allgather_direct(cr_job *job, cr_group *g, const char *op, void *rbuf, size_t blk)
{
    cr_trace_how(job, "direct");
    return read_blocks(job, g, op, (uintptr_t)rbuf, rbuf, blk, true);
}

bool cr_coll_allgatherv_direct(cr_job *job, cr_group *g, const char *op, void *rbuf,
                               const size_t *rlens, const size_t *rdispls)
{
    cr_trace_how(job, "direct");
    int n = g->size, me = g->me;
    char *r = rbuf;
    card *all = cards_of(job, g, op, (uintptr_t)(r + rdispls[me]), 0);
    if (!all) return false;
    long failed = 0;
    for (int i = 1; i < n && !failed; i++) {
        int from = (me - i + n) % n;
        if (rlens[from])
            failed = !read_from(job, g, op, from, r + rdispls[from], all[from].a, rlens[from]);
    }
    free(all);
    return !any_failed(job, g, op, failed);
}

/* ---- all-reduce ---------------------------------------------------------- */

/* A share is combined this many bytes (whole elements) at a time: the pieces
 * read stay in the cache while they are combined, and the scratch is bounded.
 * Smaller chunks cost a read (a system call) more per member and chunk: at 4
 * ranks on 2 cores, 16 KiB chunks took 1.5x the time of whole shares from
 * 256 KiB to 4 MiB; 512 KiB was the best at 2-4 MiB (bench/results/osu_coll2.md). */
#define ALLREDUCE_DIRECT_CHUNK (512u << 10)

/* The first element of member i's share of count elements over n members. */
static size_t share_start(size_t count, int n, int i)
{
    return (size_t)((unsigned __int128)count * (unsigned)i / (unsigned)n);
}

/* Member m's piece (len bytes at off) of this member's share: its own input
 * when m is this member, else read into buf; *failed once a read is refused
 * (no more reads then). */
static const char *piece(cr_job *job, cr_group *g, const char *op, const card *all, int m,
                         const char *own, char *buf, uint64_t off, size_t len, long *failed)
{
    if (m == g->me) return own;
    if (!*failed) *failed = !read_from(job, g, op, m, buf, all[m].a + off, len);
    return buf;
}

/* Every other member's share of the result (count elements of e bytes, read
 * from all[i].b) into its place in out, and this member's own from share
 * when that is apart (own). False when a read was refused. */
static bool read_shares(cr_job *job, cr_group *g, const char *op, const card *all, char *out,
                        size_t count, size_t e, const char *share, bool own)
{
    int n = g->size, me = g->me;
    bool ok = true;
    for (int s = 0; s < n && ok; s++) {
        int i = (me + s) % n;
        size_t ilo = share_start(count, n, i), ik = share_start(count, n, i + 1) - ilo;
        if (i != me)
            ok = read_from(job, g, op, i, out + ilo * e, all[i].b, ik * e);
        else if (own)
            memcpy(out + ilo * e, share, ik * e);
    }
    return ok;
}

/* The shares' lengths and displacements in bytes (lens[0..n), then displs):
 * for the messages that take over when a read of a share was refused. */
static size_t *share_layout(cr_job *job, const char *op, size_t count, int n, size_t e)
{
    size_t *lens = cr_coll_alloc(job, op, 2 * (size_t)n * sizeof *lens), *displs = lens + n;
    for (int i = 0; i < n; i++) {
        displs[i] = share_start(count, n, i) * e;
        lens[i] = share_start(count, n, i + 1) * e - displs[i];
    }
    return lens;
}

/* The order in which a share's runs of members are combined: run v is members
 * 2v and 2v+1 for v < extra (a pair that folds first), else member v + extra,
 * every member rotated by first; linear: each run is joined at once (a fold in
 * member order), else while the two runs on top of the stack have one height
 * (a binary counter), what is left joined from the top down at the end. */
typedef struct order {
    int runs, extra, first;
} order;

/* This member's share (k elements from element lo, into share) of the
 * combination of every member's input (all[m].a), a chunk of ck elements at a
 * time so that the pieces read stay in the cache while they are combined (the
 * order of each element's combines is the same); mem: depth + 3 chunks of
 * scratch (depth: the stack's height past its bottom, in share). A refused
 * read sets *failed and stops it. */
static void combine_share(cr_job *job, cr_group *g, const char *op, const card *all,
                          const char *own, char *share, size_t lo, size_t k, size_t ck,
                          const cr_redop *o, const order *ord, char *mem, int depth, long *failed)
{
    size_t e = o->elem, cb = ck * e;
    char *x = mem + (size_t)depth * cb, *y = x + cb, *tmp = y + cb, *slot[33];
    int height[33], n = g->size;
    for (int t = 1; t <= depth; t++) slot[t] = mem + (size_t)(t - 1) * cb;
    for (size_t c0 = 0; c0 < k && !*failed; c0 += ck) {
        size_t cn = k - c0 < ck ? k - c0 : ck, cnb = cn * e;
        uint64_t off = (lo + c0) * e;
        const char *in = own + off;
        int top = 0;
        slot[0] = share + c0 * e;
        for (int v = 0; v < ord->runs && !*failed; v++) {
            int m = ((v < ord->extra ? 2 * v : v + ord->extra) + ord->first) % n;
            char *s = slot[top];
            bool pair = v < ord->extra;
            const char *pa = piece(job, g, op, all, m, in, pair ? x : s, off, cnb, failed);
            const char *pb =
                pair ? piece(job, g, op, all, (m + 1) % n, in, y, off, cnb, failed) : NULL;
            if (*failed) break;
            if (pb)
                cr_coll_combine(job, o, pa, pb, s, cn, tmp);
            else if (pa != s)
                memcpy(s, pa, cnb);
            height[top++] = 0;
            for (; top >= 2 && height[top - 1] == height[top - 2]; top--) {
                cr_coll_combine(job, o, slot[top - 2], slot[top - 1], slot[top - 2], cn, tmp);
                height[top - 2]++;
            }
        }
        for (; top >= 2 && !*failed; top--)
            cr_coll_combine(job, o, slot[top - 2], slot[top - 1], slot[top - 2], cn, tmp);
    }
}

bool cr_coll_allreduce_direct(cr_job *job, cr_group *g, const char *op, const void *sbuf,
                              void *rbuf, size_t count, const cr_redop *o)
{
    cr_trace_how(job, "direct");
    int n = g->size, me = g->me;
    size_t e = o->elem, lo = share_start(count, n, me), k = share_start(count, n, me + 1) - lo;
    size_t kb = k * e;
    int pof2 = 1, depth = 0;
    while (pof2 * 2 <= n) pof2 *= 2, depth++;
    size_t ck = ALLREDUCE_DIRECT_CHUNK / e;
    if (ck > k) ck = k;
    if (!ck) ck = 1;
    size_t cb = ck * e;
    /* This member's share of the result: in its place in rbuf when rbuf is not
     * the input (nobody reads it before the first agreement), else apart until
     * then. Then chunk-sized: the stack's other depth partial results, two
     * pieces read, scratch. */
    bool in_place = sbuf == rbuf;
    size_t memlen = (size_t)(depth + 3) * cb + (in_place ? kb : 0);
    char *mem = cr_coll_keep_get(job, op, memlen);
    char *share = in_place ? mem + (size_t)(depth + 3) * cb : (char *)rbuf + lo * e;
    card *all = cards_of(job, g, op, (uintptr_t)sbuf, (uintptr_t)share); /* input, share */
    if (!all) {
        cr_coll_keep_put(job, mem, memlen);
        return false;
    }
    long failed = 0;
    /* This member's share of the result, out of every member's input, combined
     * as the message algorithms combine each element (coll_reduce.c), so that
     * the result is the same bit for bit whichever runs (MPI_Iallreduce's and a
     * persistent allreduce's schedules run those): the linear form's tree
     * over the members in order, or the balanced tree over the power of two
     * of runs that recursive doubling and Rabenseifner's halving join. */
    bool linear = cr_coll_linear(job, g, count * e);
    order ord = {linear ? n : pof2, linear ? 0 : n - pof2, 0};
    combine_share(job, g, op, all, sbuf, share, lo, k, ck, o, &ord, mem, depth, &failed);
    /* Every share is complete, and no member reads an input any more: the
     * receive buffers may change (in place they are the inputs). A read refused
     * here leaves every input as it was: the caller does it by messages. */
    if (any_failed(job, g, op, failed)) {
        free(all);
        cr_coll_keep_put(job, mem, memlen);
        return false;
    }
    failed = !read_shares(job, g, op, all, rbuf, count, e, share, in_place);
    /* No member frees its share while another may still read it. A refusal
     * now: every share is still held, so every member takes them all again by
     * messages. */
    if (any_failed(job, g, op, failed)) {
        size_t *lens = share_layout(job, op, count, n, e);
        cr_coll_allgatherv(job, g, op, in_place ? share : NULL, kb, rbuf, lens, lens + n);
        free(lens);
    }
    free(all);
    cr_coll_keep_put(job, mem, memlen);
    return true;
}

/* ---- reduce -------------------------------------------------------------- */

bool cr_coll_reduce_direct(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                           size_t count, const cr_redop *o, int root)
{
    cr_trace_how(job, "direct");
    int n = g->size, me = g->me;
    size_t e = o->elem, lo = share_start(count, n, me), k = share_start(count, n, me + 1) - lo;
    size_t kb = k * e;
    int depth = 0;
    while (2 << depth <= n) depth++;
    size_t ck = ALLREDUCE_DIRECT_CHUNK / e;
    if (ck > k) ck = k;
    if (!ck) ck = 1;
    size_t cb = ck * e;
    /* This member's share: at the root in its place in rbuf unless rbuf is the
     * input (in place), else apart; then the chunks as the all-reduce's. */
    bool apart = me != root || sbuf == rbuf;
    size_t memlen = (size_t)(depth + 3) * cb + (apart ? kb : 0);
    char *mem = cr_coll_keep_get(job, op, memlen);
    char *share = apart ? mem + (size_t)(depth + 3) * cb : (char *)rbuf + lo * e;
    card *all = cards_of(job, g, op, (uintptr_t)sbuf, (uintptr_t)share); /* input, share */
    if (!all) {
        cr_coll_keep_put(job, mem, memlen);
        return false;
    }
    long failed = 0;
    /* Combined as the binomial tree does (cr_build_reduce): the members in
     * order from the tree's root (member 0 for an operation that does not
     * commute), joined as a binary counter, the rest from the top down: the
     * same bits as MPI_Ireduce's schedule. */
    order ord = {n, 0, o->commute ? root : 0};
    combine_share(job, g, op, all, sbuf, share, lo, k, ck, o, &ord, mem, depth, &failed);
    /* Every share is complete and no input is read any more (in place, the
     * root's receive buffer may change); a refusal so far: by messages. */
    if (any_failed(job, g, op, failed)) {
        free(all);
        cr_coll_keep_put(job, mem, memlen);
        return false;
    }
    if (me == root) failed = !read_shares(job, g, op, all, rbuf, count, e, share, apart);
    /* No member frees its share before the root has read it. A refusal now:
     * every share is still held, and goes to the root by messages. */
    if (any_failed(job, g, op, failed)) {
        size_t *lens = share_layout(job, op, count, n, e);
        cr_coll_gatherv(job, g, op, me == root && !apart ? NULL : share, kb, rbuf, lens, lens + n,
                        root);
        free(lens);
    }
    free(all);
    cr_coll_keep_put(job, mem, memlen);
    return true;
}
