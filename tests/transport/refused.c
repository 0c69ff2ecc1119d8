/* Single copy refused in the middle of a job: after some traffic by single copy,
 * chosen ranks have the kernel refuse their process_vm_readv/writev from then on
 * (a seccomp filter on all their threads, as a hardened runtime or a sandbox
 * would; EPERM), and the job must go on by messages with every byte right
 * (src/core/single_copy.c: a refusal turns single copy off for that peer, and
 * the caller moves the data another way). The mode says which path meets the
 * refusal first:
 *   pull       a receive whose read of a rendezvous message is refused (2 ranks)
 *   coop_recv  the cooperative copy, the receiver's read refused (2 ranks)
 *   coop_send  the cooperative copy, the sender's write refused (2 ranks)
 *   unexp      an unexpected long message taken while idle (2 ranks)
 *   bcast      a single-copy broadcast (3 ranks, COURIER_COLL_ALG=direct or split)
 *   alltoall   the single-copy all-to-all (3 ranks, COURIER_COLL_ALG=direct)
 *   allgather  the single-copy all-gather, in place (3 ranks,
 *              COURIER_COLL_ALG=direct): rank 1's reads refused, every
 *              member's own block intact for the messages that take over
 *   allgatherv the single-copy all-gather of blocks of each member's length,
 *              each member laying out its receive buffer its own way (3 ranks,
 *              COURIER_COLL_ALG=direct), rank 1's reads refused
 *   reduce     the single-copy reduce (3 ranks, COURIER_COLL_ALG=direct), rank
 *              1's reads refused: as a member (its share of the inputs) and
 *              as the root (the others' shares)
 *   allreduce  the single-copy all-reduce (3 ranks, COURIER_COLL_ALG=direct):
 *              rank 1's reads of the others' inputs refused, every input
 *              intact for the messages that take over
 *   rma        one-sided: an MPI window and a native region made after rank 3's
 *              refusal (its probes are refused: the others serve), then rank
 *              1's put into the region and vector get from the window refused
 *              (4 ranks, COURIER_RMA_NO_MAP=1)
 *   rma_live   one-sided on a window made while single copy worked for every
 *              member (so no member started its service), then rank 0 is
 *              refused: its put and get must go through a service that starts
 *              late (2 ranks; MPI_Win_create's memory is the program's, reached
 *              by single copy, and the window's control block is mapped)
 * Then every pair exchanges eager, rendezvous and 1 MiB messages both ways,
 * expected and unexpected, blocking and not, and a broadcast, an all-to-all, an
 * all-gather and an all-reduce follow. The program checks that the refusal is real (a denied rank's
 * own process_vm_readv of a peer fails with EPERM, a permitted one's worked before) and prints
 * "refused MODE: N ranks ok" at the end (rank 0). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <courier/courier.h>

#include "../deny_cma.h"
#include "../mpi/mcheck.h"

#define BIG (1u << 20)
static int rank, n;
static const char *mode;
static volatile uint64_t marker = 0x5eedf00d; /* what the probes read */
static struct {
    int64_t pid;
    uint64_t addr;
} * peers;

static unsigned char pat(int src, int dst, int round, size_t i)
{
    uint32_t x = (uint32_t)src * 2654435761u ^ (uint32_t)dst * 40503u ^ (uint32_t)round * 97u;
    x += (uint32_t)i * 131u + (uint32_t)(i >> 8) * 7u;
    return (unsigned char)(x ^ (x >> 11));
}
static void fill(unsigned char *b, size_t len, int src, int dst, int round)
{
    for (size_t i = 0; i < len; i++) b[i] = pat(src, dst, round, i);
}
static void check(const char *what, const unsigned char *b, size_t len, int src, int dst, int round)
{
    for (size_t i = 0; i < len; i++)
        CHECK(b[i] == pat(src, dst, round, i),
              "%s: %zu bytes from rank %d to %d (round %d): byte %zu is 0x%02x, expected 0x%02x",
              what, len, src, dst, round, i, b[i], pat(src, dst, round, i));
}
static unsigned char *xmalloc(size_t len)
{
    unsigned char *p = malloc(len ? len : 1);
    CHECK(p, "out of memory for %zu bytes", len);
    return p;
}

/* This rank's own single-copy read of peer p: 0 or errno. */
static int probe(int p)
{
    uint64_t v = 0;
    struct iovec l = {&v, sizeof v}, r = {(void *)(uintptr_t)peers[p].addr, sizeof v};
    ssize_t got = process_vm_readv((pid_t)peers[p].pid, &l, 1, &r, 1, 0);
    if (got < 0) return errno;
    CHECK(got == sizeof v && v == 0x5eedf00d, "read %zd bytes of rank %d's marker: %#llx", got, p,
          (unsigned long long)v);
    return 0;
}

/* From now on the kernel refuses this process's process_vm_readv/writev with
 * EPERM, in every thread (the progress thread too). */
static void deny(void)
{
    const char *failed = deny_cma();
    CHECK(!failed, "%s: %s", failed, strerror(errno));
    for (int p = 0; p < n; p++)
        if (p != rank) CHECK(probe(p) == EPERM, "rank %d can still read rank %d", rank, p);
}

/* Rank r denies (all ranks meet before and after, so that the refusal is in
 * place before the next transfer). */
static void deny_at(int r)
{
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == r) deny();
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* One message of len bytes from src to dst, the receive posted first or not,
 * the send blocking or not. */
static void one(int src, int dst, size_t len, int round, bool expected, bool blocking)
{
    if (rank != src && rank != dst) return;
    unsigned char *b = xmalloc(len);
    MPI_Request r;
    if (rank == dst) {
        if (expected) OK(MPI_Irecv(b, (int)len, MPI_BYTE, src, round, MPI_COMM_WORLD, &r));
        OK(MPI_Send(NULL, 0, MPI_BYTE, src, 1000 + round, MPI_COMM_WORLD)); /* ready */
        if (!expected) OK(MPI_Recv(b, (int)len, MPI_BYTE, src, round, MPI_COMM_WORLD, NULL));
        if (expected) OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check("message", b, len, src, dst, round);
    } else {
        fill(b, len, src, dst, round);
        if (!expected) { /* unexpected: sent before the receive (the ready note is after) */
            OK(MPI_Isend(b, (int)len, MPI_BYTE, dst, round, MPI_COMM_WORLD, &r));
            OK(MPI_Recv(NULL, 0, MPI_BYTE, dst, 1000 + round, MPI_COMM_WORLD, NULL));
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Recv(NULL, 0, MPI_BYTE, dst, 1000 + round, MPI_COMM_WORLD, NULL));
            if (blocking) {
                OK(MPI_Send(b, (int)len, MPI_BYTE, dst, round, MPI_COMM_WORLD));
            } else {
                OK(MPI_Isend(b, (int)len, MPI_BYTE, dst, round, MPI_COMM_WORLD, &r));
                OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            }
        }
    }
    free(b);
}

/* An unexpected rendezvous message that the receiver takes while it idles
 * (NX/2 buffering: cr_engine_buffer_rts), then receives. */
static void unexpected_taken(int src, int dst, size_t len, int round)
{
    if (rank != src && rank != dst) return;
    unsigned char *b = xmalloc(len);
    if (rank == src) {
        MPI_Request r;
        fill(b, len, src, dst, round);
        OK(MPI_Isend(b, (int)len, MPI_BYTE, dst, round, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE)); /* done only once dst took it */
        OK(MPI_Send(NULL, 0, MPI_BYTE, dst, 1000 + round, MPI_COMM_WORLD));
    } else {
        OK(MPI_Probe(src, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        /* idles until the message above was taken in */
        OK(MPI_Recv(NULL, 0, MPI_BYTE, src, 1000 + round, MPI_COMM_WORLD, NULL));
        OK(MPI_Recv(b, (int)len, MPI_BYTE, src, round, MPI_COMM_WORLD, NULL));
        check("taken while idle", b, len, src, dst, round);
    }
    free(b);
}

static void bcast(size_t len, int root, int round)
{
    unsigned char *b = xmalloc(len);
    if (rank == root)
        fill(b, len, root, 0, round);
    else
        memset(b, 0xa5, len);
    OK(MPI_Bcast(b, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
    check("broadcast", b, len, root, 0, round);
    free(b);
}

static void alltoall(size_t blk, int round)
{
    unsigned char *s = xmalloc(blk * (size_t)n), *r = xmalloc(blk * (size_t)n);
    for (int p = 0; p < n; p++) fill(s + (size_t)p * blk, blk, rank, p, round);
    memset(r, 0xa5, blk * (size_t)n);
    OK(MPI_Alltoall(s, (int)blk, MPI_BYTE, r, (int)blk, MPI_BYTE, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++) check("all-to-all", r + (size_t)p * blk, blk, p, rank, round);
    free(s);
    free(r);
}

/* In place: each member's block is in its place in the receive buffer. */
static void allgather(size_t blk, int round)
{
    unsigned char *r = xmalloc(blk * (size_t)n);
    memset(r, 0xa5, blk * (size_t)n);
    fill(r + (size_t)rank * blk, blk, rank, 0, round);
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, (int)blk, MPI_BYTE, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++) check("all-gather", r + (size_t)p * blk, blk, p, 0, round);
    free(r);
}

/* Member p's block is blk + 37 p bytes; this member puts block p at slot
 * (p + rank) % n of a receive buffer whose slots are the longest block plus a
 * gap apart: displacements are each member's own. In place on odd rounds. */
static void allgatherv(size_t blk, int round)
{
    size_t slot = blk + 37 * (size_t)n + 64;
    int *counts = (int *)(void *)xmalloc((size_t)n * sizeof *counts);
    int *displs = (int *)(void *)xmalloc((size_t)n * sizeof *displs);
    for (int p = 0; p < n; p++) {
        counts[p] = (int)(blk + 37 * (size_t)p);
        displs[p] = (int)(slot * (size_t)((p + rank) % n));
    }
    unsigned char *r = xmalloc(slot * (size_t)n), *s = xmalloc(blk + 37 * (size_t)n);
    memset(r, 0xa5, slot * (size_t)n);
    bool in_place = round % 2;
    fill(in_place ? r + displs[rank] : s, (size_t)counts[rank], rank, 0, round);
    OK(MPI_Allgatherv(in_place ? MPI_IN_PLACE : s, counts[rank], MPI_BYTE, r, counts, displs,
                      MPI_BYTE, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++) {
        check("all-gatherv", r + displs[p], (size_t)counts[p], p, 0, round);
        CHECK(r[displs[p] + counts[p]] == 0xa5, "all-gatherv, round %d: block %d overran", round,
              p);
    }
    free(s);
    free(r);
    free(counts);
    free(displs);
}

/* MPI_SUM of count longs: member p's element i is (p + 1) * (i + round) */
static void allreduce(size_t count, int round)
{
    long *s = (long *)xmalloc(count * sizeof *s), *r = (long *)xmalloc(count * sizeof *r);
    for (size_t i = 0; i < count; i++) s[i] = (long)(rank + 1) * (long)(i + (size_t)round);
    memset(r, 0xa5, count * sizeof *r);
    OK(MPI_Allreduce(s, r, (int)count, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    long members = (long)n * (n + 1) / 2;
    for (size_t i = 0; i < count; i++)
        CHECK(r[i] == members * (long)(i + (size_t)round),
              "all-reduce of %zu longs, round %d: element %zu is %ld, not %ld", count, round, i,
              r[i], members * (long)(i + (size_t)round));
    free(s);
    free(r);
}

/* MPI_SUM of count longs to root, as the all-reduce's (in place at the root on
 * odd rounds) */
static void reduce(size_t count, int root, int round)
{
    long *s = (long *)xmalloc(count * sizeof *s), *r = (long *)xmalloc(count * sizeof *r);
    for (size_t i = 0; i < count; i++) s[i] = (long)(rank + 1) * (long)(i + (size_t)round);
    bool in_place = round % 2 && rank == root;
    if (in_place) memcpy(r, s, count * sizeof *r);
    OK(MPI_Reduce(in_place ? MPI_IN_PLACE : s, r, (int)count, MPI_LONG, MPI_SUM, root,
                  MPI_COMM_WORLD));
    long members = (long)n * (n + 1) / 2;
    for (size_t i = 0; rank == root && i < count; i++)
        CHECK(r[i] == members * (long)(i + (size_t)round),
              "reduce of %zu longs to %d, round %d: element %zu is %ld, not %ld", count, root,
              round, i, r[i], members * (long)(i + (size_t)round));
    free(s);
    free(r);
}

/* Every pair, both ways: what the job must still do once single copy is off. */
static void afterwards(int round)
{
    static const size_t sizes[] = {0, 100, 20000, BIG + 7};
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (a == b) continue;
            for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
                one(a, b, sizes[i], round++, true, true);
                one(a, b, sizes[i], round++, true, false);
                one(a, b, sizes[i], round++, false, false);
            }
        }
    bcast(BIG + 3, 0, round++);
    bcast(300000, n - 1, round++);
    alltoall(65536 + 1, round++);
    allgather(65536 + 7, round++);
    allgatherv(65536 + 9, round++);
    allreduce(65536 + 1, round++);
    reduce(65536 + 3, n - 1, round++);
}

/* rma: rank 3 is refused before the window and the region are made, rank 1
 * once they are (the native put first, then MPI's vector get).
 * The window: W bytes that the predecessor puts, then W * STRIDE bytes of which
 * the successor gets 64 of every 64 * STRIDE (a vector: one transfer of many
 * pieces). */
static void rma(void)
{
    CHECK(n == 4, "mode rma needs 4 ranks");
    enum { W = 65536, STRIDE = 3, SIZE = W + W * STRIDE };
    deny_at(3);
    unsigned char *mem = xmalloc(SIZE), *put = xmalloc(W), *got = xmalloc(W);
    unsigned char *want = xmalloc(W * STRIDE), *region = xmalloc(W);
    memset(mem, 0, SIZE);
    memset(region, 0, W);
    MPI_Win win;
    OK(MPI_Win_create(mem, SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_fence(0, win));
    int key = cr_region_register(region, W);
    deny_at(1);
    int to = (rank + 1) % n, from = (rank + n - 1) % n;
    fill(put, W, rank, to, 3);
    cr_handle_wait(cr_put(to, key, 0, put, W, CR_NO_EVENT)); /* rank 1: refused, served */
    cr_sync();
    check("native put", region, W, from, rank, 3);
    MPI_Datatype vec;
    OK(MPI_Type_vector(W / 64, 64, 64 * STRIDE, MPI_BYTE, &vec));
    OK(MPI_Type_commit(&vec));
    /* every rank puts to its successor and gets from its predecessor (rank 1:
     * a put to 2 and a vector get from 0, both refused now, and served) */
    fill(put, W, rank, to, 1);
    fill(mem + W, W * STRIDE, rank, rank, 2);
    OK(MPI_Win_fence(0, win));
    OK(MPI_Put(put, W, MPI_BYTE, to, 0, W, MPI_BYTE, win));
    OK(MPI_Get(got, W, MPI_BYTE, from, W, 1, vec, win));
    OK(MPI_Win_fence(0, win));
    check("one-sided put", mem, W, from, rank, 1);
    fill(want, W * STRIDE, from, from, 2);
    for (size_t i = 0; i < W / 64; i++)
        CHECK(!memcmp(got + i * 64, want + i * 64 * STRIDE, 64),
              "one-sided vector get from rank %d: piece %zu wrong", from, i);
    OK(MPI_Win_free(&win));
    OK(MPI_Type_free(&vec));
    cr_region_free(key);
    free(region);
    free(mem);
    free(put);
    free(got);
    free(want);
}

/* rma_live: a window every member reaches by single copy when it is made;
 * then rank 0 is refused, and each rank puts to its successor and gets from its
 * predecessor, twice (fence and passive target). */
static void rma_live(void)
{
    enum { W = 65536 };
    unsigned char *mem = xmalloc(2 * W), *put = xmalloc(W), *got = xmalloc(W);
    memset(mem, 0, 2 * W);
    MPI_Win win;
    OK(MPI_Win_create(mem, 2 * W, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    deny_at(0);
    int to = (rank + 1) % n, from = (rank + n - 1) % n;
    for (int round = 1; round <= 2; round++) {
        fill(put, W, rank, to, round);
        fill(mem + W, W, rank, rank, 10 + round);
        OK(MPI_Win_fence(0, win));
        if (round == 1) {
            OK(MPI_Put(put, W, MPI_BYTE, to, 0, W, MPI_BYTE, win));
            OK(MPI_Get(got, W, MPI_BYTE, from, W, W, MPI_BYTE, win));
        } else {
            OK(MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win));
            OK(MPI_Put(put, W, MPI_BYTE, to, 0, W, MPI_BYTE, win));
            OK(MPI_Win_unlock(to, win));
            OK(MPI_Win_lock(MPI_LOCK_SHARED, from, 0, win));
            OK(MPI_Get(got, W, MPI_BYTE, from, W, W, MPI_BYTE, win));
            OK(MPI_Win_unlock(from, win));
        }
        OK(MPI_Win_fence(0, win));
        check("one-sided put", mem, W, from, rank, round);
        check("one-sided get", got, W, from, from, 10 + round);
    }
    OK(MPI_Win_free(&win));
    free(mem);
    free(put);
    free(got);
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &n));
    CHECK(argc > 1,
          "usage: refused pull|coop_recv|coop_send|unexp|bcast|alltoall|allgather|allgatherv|"
          "reduce|allreduce|rma|"
          "rma_live");
    mode = argv[1];
    peers = calloc((size_t)n, sizeof *peers);
    CHECK(peers, "out of memory");
    typeof(*peers) me = {getpid(), (uintptr_t)&marker};
    OK(MPI_Allgather(&me, sizeof me, MPI_BYTE, peers, sizeof *peers, MPI_BYTE, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++)
        if (p != rank)
            CHECK(probe(p) == 0, "single copy does not work here at all (reading rank %d: %s)", p,
                  strerror(probe(p)));
    /* single copy works: a rendezvous message each way by it first */
    one(0, 1, BIG, 1, true, false);
    one(1, 0, BIG, 2, true, false);
    if (!strcmp(mode, "pull")) {
        deny_at(1);
        one(0, 1, BIG, 3, true, false);
    } else if (!strcmp(mode, "coop_recv")) {
        deny_at(1);
        one(0, 1, BIG, 3, true, true);
    } else if (!strcmp(mode, "coop_send")) {
        deny_at(0);
        one(0, 1, BIG, 3, true, true);
    } else if (!strcmp(mode, "unexp")) {
        deny_at(1);
        unexpected_taken(0, 1, 200000, 3);
    } else if (!strcmp(mode, "bcast")) {
        bcast(BIG / 2 + 3, 0, 3); /* by single copy */
        deny_at(1);
        bcast(BIG / 2 + 5, 0, 4);
    } else if (!strcmp(mode, "alltoall")) {
        alltoall(65536 + 3, 3);
        deny_at(1);
        alltoall(65536 + 5, 4);
    } else if (!strcmp(mode, "allgather")) {
        allgather(65536 + 3, 3);
        deny_at(1);
        allgather(65536 + 5, 4);
    } else if (!strcmp(mode, "allgatherv")) {
        allgatherv(65536 + 3, 3);
        allgatherv(65536 + 3, 4);
        deny_at(1);
        allgatherv(65536 + 5, 5);
        allgatherv(65536 + 5, 6);
    } else if (!strcmp(mode, "reduce")) {
        reduce(65536 + 3, 1, 3);
        reduce(65536 + 3, 0, 4);
        deny_at(1);
        reduce(65536 + 5, 0, 5); /* rank 1 reads its share of the inputs */
        reduce(65536 + 5, 1, 6); /* ... and, as the root, the shares */
    } else if (!strcmp(mode, "allreduce")) {
        allreduce(65536 + 3, 3);
        deny_at(1);
        allreduce(65536 + 5, 4);
    } else if (!strcmp(mode, "rma")) {
        rma();
    } else if (!strcmp(mode, "rma_live")) {
        rma_live();
    } else {
        CHECK(0, "unknown mode %s", mode);
    }
    afterwards(100);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("refused %s: %d ranks ok\n", mode, n);
    free(peers);
    OK(MPI_Finalize());
    return 0;
}
