/* Broadcast, all-to-all, all-gather and all-reduce around the thresholds of the
 * single-copy algorithms (src/coll/coll_direct.c) and of the broadcast through
 * the collective area (src/coll/coll_shm.c; run with COURIER_COLL_ALG=direct,
 * split, window, area or none): on MPI_COMM_WORLD, on the halves of MPI_Comm_split (members that
 * are not ranks 0..n-1, groups of other sizes), on the world in reverse key
 * order, with every root a group has (up to three of them), sizes from 0 and 1
 * byte over 16 KiB+1 to 4 MiB+3, and each call twice with different data, so
 * that data left from the call before cannot pass. Every received byte is
 * checked; the first wrong one fails the test with the call, size, root,
 * group and position. Each broadcast is followed by an all-reduce of its
 * verdict: on the world, an area collective that writes data right after an
 * area broadcast whose readers may still be copying. Argument "quick": sizes
 * up to 1 MiB+1 only; "world": on the world and the world in reverse order
 * only (groups of one size, for tests that read the trace's bytes). All-gather:
 * blocks up to 256 KiB+1 (past the slot of the area, whose longer blocks go
 * in pieces), in place in every second call. All-reduce: counts from 1 over the group's size (each
 * member's share of the direct algorithm from none to several pages) to 256 Ki+3 elements, with a
 * commutative operation (MPI_SUM of unsigned ints) and one that does not
 * commute (a user operation whose result says the order of the members), in
 * place and not, every element checked against the value computed here. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../mpi/mcheck.h"

/* The data: a period of P (prime, so that a block shifted by any page or
 * block size no longer matches) of pseudo-random bytes, started at an offset
 * that depends on the sender, the receiver and the round. Filled and compared
 * with memcpy/memcmp: quick even under AddressSanitizer. */
#define P 4093
static uint8_t period[2 * P];

static void fill(uint8_t *b, size_t len, int src, int dst, int round)
{
    size_t off = ((size_t)src * 1031 + (size_t)dst * 337 + (size_t)round * 2053) % P;
    for (size_t i = 0; i < len;) {
        size_t k = len - i < P ? len - i : P;
        memcpy(b + i, period + (off + i) % P, k);
        i += k;
    }
}

/* The first byte where got differs from what src sent dst, or len. */
static size_t first_wrong(const uint8_t *got, size_t len, int src, int dst, int round,
                          uint8_t *want)
{
    fill(want, len, src, dst, round);
    if (!memcmp(got, want, len)) return len;
    size_t i = 0;
    while (got[i] == want[i]) i++;
    return i;
}

static void check_bcast(MPI_Comm comm, const char *name, size_t len, int root, int round)
{
    int me, n;
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &n));
    uint8_t *b = malloc(len + 1), *w = malloc(len + 1);
    CHECK(b && w, "out of memory");
    if (me == root)
        fill(b, len, root, 0, round);
    else
        memset(b, 0xa5, len);
    b[len] = 0x5a; /* past the end: must stay */
    OK(MPI_Bcast(b, (int)len, MPI_BYTE, root, comm));
    size_t i = first_wrong(b, len, root, 0, round, w);
    CHECK(i == len, "bcast on %s of %zu bytes from root %d, round %d: byte %zu is %d, not %d", name,
          len, root, round, i, b[i], w[i]);
    CHECK(b[len] == 0x5a, "bcast on %s of %zu bytes wrote past the end", name, len);
    int ok = (int)len + root, all_ok = -1;
    OK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm));
    CHECK(all_ok == ok, "the all-reduce after bcast on %s of %zu bytes gave %d, not %d", name, len,
          all_ok, ok);
    free(b);
    free(w);
}

static void check_alltoall(MPI_Comm comm, const char *name, size_t blk, int round)
{
    int me, n;
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &n));
    size_t all = blk * (size_t)n;
    uint8_t *s = malloc(all + 1), *r = malloc(all + 1), *w = malloc(blk + 1);
    CHECK(s && r && w, "out of memory");
    for (int d = 0; d < n; d++) fill(s + (size_t)d * blk, blk, me, d, round);
    memset(r, 0xa5, all);
    s[all] = r[all] = 0x5a;
    OK(MPI_Alltoall(s, (int)blk, MPI_BYTE, r, (int)blk, MPI_BYTE, comm));
    for (int f = 0; f < n; f++) {
        size_t i = first_wrong(r + (size_t)f * blk, blk, f, me, round, w);
        CHECK(i == blk,
              "alltoall on %s of %zu-byte blocks, round %d: byte %zu from member %d is %d, not %d",
              name, blk, round, i, f, r[(size_t)f * blk + i], w[i]);
    }
    for (int d = 0; d < n; d++)
        CHECK(first_wrong(s + (size_t)d * blk, blk, me, d, round, w) == blk,
              "alltoall on %s changed the send buffer", name);
    CHECK(r[all] == 0x5a, "alltoall on %s of %zu-byte blocks wrote past the end", name, blk);
    free(s);
    free(r);
    free(w);
}

/* in place: this member's block is put in its place in the receive buffer */
static void check_allgather(MPI_Comm comm, const char *name, size_t blk, int round, int in_place)
{
    int me, n;
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &n));
    size_t all = blk * (size_t)n;
    uint8_t *s = malloc(blk + 1), *r = malloc(all + 1), *w = malloc(blk + 1);
    CHECK(s && r && w, "out of memory");
    fill(s, blk, me, 0, round);
    memset(r, 0xa5, all);
    r[all] = 0x5a;
    if (in_place) {
        memcpy(r + (size_t)me * blk, s, blk);
        OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, (int)blk, MPI_BYTE, comm));
    } else
        OK(MPI_Allgather(s, (int)blk, MPI_BYTE, r, (int)blk, MPI_BYTE, comm));
    for (int f = 0; f < n; f++) {
        size_t i = first_wrong(r + (size_t)f * blk, blk, f, 0, round, w);
        CHECK(i == blk,
              "allgather%s on %s of %zu-byte blocks, round %d: byte %zu from member %d is %d, "
              "not %d",
              in_place ? " in place" : "", name, blk, round, i, f, r[(size_t)f * blk + i], w[i]);
    }
    CHECK(r[all] == 0x5a, "allgather on %s of %zu-byte blocks wrote past the end", name, blk);
    free(s);
    free(r);
    free(w);
}

/* Elements of two unsigned ints (m, c), the map x -> m x + c (mod 2^32); a op b
 * is a then b: (m_a m_b, m_b c_a + c_b), associative but not commutative, so
 * a wrong order of the members shows in the result. */
static void then_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++, a += 2, b += 2) {
        unsigned m = a[0] * b[0], c = b[0] * a[1] + b[1];
        b[0] = m;
        b[1] = c;
    }
}

static unsigned input(int member, size_t i, int round)
{
    return (unsigned)(member + 1) * 2654435761u + (unsigned)i * 40503u + (unsigned)round;
}

/* count elements: unsigned ints summed (commute), or maps composed */
static void check_allreduce(MPI_Comm comm, const char *name, size_t count, int commute, int inplace,
                            int round)
{
    int me, n;
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &n));
    MPI_Op op = MPI_SUM;
    MPI_Datatype dt = MPI_UNSIGNED;
    size_t w = commute ? 1 : 2; /* unsigned ints an element */
    if (!commute) {
        OK(MPI_Op_create(then_op, 0, &op));
        OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &dt));
        OK(MPI_Type_commit(&dt));
    }
    size_t words = count * w;
    unsigned *s = malloc((words + 1) * sizeof *s), *r = malloc((words + 1) * sizeof *r);
    CHECK(s && r, "out of memory");
    for (size_t i = 0; i < words; i++) (inplace ? r : s)[i] = input(me, i, round);
    if (!inplace) memset(r, 0xa5, words * sizeof *r);
    r[words] = 0x5a5a5a5au;
    OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, (int)count, dt, op, comm));
    for (size_t i = 0; i < count; i++) {
        unsigned want[2] = {input(0, i * w, round), commute ? 0 : input(0, i * w + 1, round)};
        for (int m = 1; m < n; m++) {
            unsigned x = input(m, i * w, round);
            if (commute) {
                want[0] += x;
            } else {
                unsigned y = input(m, i * w + 1, round);
                want[1] = x * want[1] + y;
                want[0] *= x;
            }
        }
        for (size_t j = 0; j < w; j++)
            CHECK(r[i * w + j] == want[j],
                  "allreduce on %s of %zu elements (%s%s), round %d: element %zu is %u, not %u",
                  name, count, commute ? "MPI_SUM" : "an operation that does not commute",
                  inplace ? ", in place" : "", round, i, r[i * w + j], want[j]);
    }
    CHECK(r[words] == 0x5a5a5a5au, "allreduce on %s of %zu elements wrote past the end", name,
          count);
    if (!commute) {
        OK(MPI_Op_free(&op));
        OK(MPI_Type_free(&dt));
    }
    free(s);
    free(r);
}

static void run(MPI_Comm comm, const char *name, int quick)
{
    static const size_t bsizes[] = {
        0,      1,      4095,          16383,     16384,         16385,        65543,
        262143, 262144, (1 << 20) - 1, (1 << 20), (1 << 20) + 1, (4 << 20) + 3};
    static const size_t ablks[] = {0,    1,    257,   4096,  8191,
                                   8192, 8193, 16385, 65539, (256 << 10) + 1};
    int n;
    OK(MPI_Comm_size(comm, &n));
    int roots[3] = {0, n - 1, n / 2}, nroots = n < 3 ? n : 3;
    for (size_t k = 0; k < sizeof bsizes / sizeof *bsizes; k++) {
        if (quick && bsizes[k] > (1 << 20) + 1) continue;
        for (int r = 0; r < nroots; r++)
            for (int round = 0; round < 2; round++)
                check_bcast(comm, name, bsizes[k], roots[r], round);
    }
    for (size_t k = 0; k < sizeof ablks / sizeof *ablks; k++) {
        if (quick && ablks[k] > 65539) continue;
        for (int round = 0; round < 2; round++) {
            check_alltoall(comm, name, ablks[k], round);
            check_allgather(comm, name, ablks[k], round, round);
        }
    }
    size_t counts[] = {1,         (size_t)n - 1,          (size_t)n, (size_t)n + 1, 16383,
                       16384 + 3, (size_t)(256 << 10) + 3};
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
        if (!counts[k] || (quick && counts[k] > 16387)) continue;
        for (int round = 0; round < 2; round++)
            check_allreduce(comm, name, counts[k], round, round, round);
        check_allreduce(comm, name, counts[k], 1, 1, 2);
        check_allreduce(comm, name, counts[k], 0, 0, 3);
    }
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < P; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        period[i] = period[i + P] = (uint8_t)(x >> 29);
    }
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    int world = argc > 1 && !strcmp(argv[1], "world");
    int me, n;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &n));
    run(MPI_COMM_WORLD, "MPI_COMM_WORLD", quick);
    MPI_Comm half, rev;
    /* halves: the first ceil(n/2) ranks, the rest (ranks n/2.. are not members 0..) */
    OK(MPI_Comm_split(MPI_COMM_WORLD, me < (n + 1) / 2, me, &half));
    if (!world) run(half, me < (n + 1) / 2 ? "the first half" : "the second half", quick);
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &rev));
    run(rev, "the world in reverse order", quick);
    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_free(&rev));
    OK(MPI_Finalize());
    return 0;
}
