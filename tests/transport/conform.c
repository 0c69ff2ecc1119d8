/* Transport conformance: one battery that every transport (self, shm, tcp, ucx,
 * sim) must pass, run through `courier run` with the transport forced
 * (COURIER_TRANSPORTS, or --sim; tests/transport/CMakeLists.txt). It goes
 * through the MPI interface, which reaches every protocol the engine builds on
 * a transport's contract (src/transport/transport.h): eager messages, the
 * rendezvous with single copy (get) or a push (CTS/DATA chunks of max_payload),
 * lanes (one-sided traffic), refusal and credits (floods), cancellation (CANCEL).
 *
 * Any number of ranks >= 1: rank r sends to r+1 and receives from r-1 (with one
 * rank both are itself, which is all the self transport serves). Every byte of
 * every message is checked against a pattern made of (source, tag, index,
 * offset); a mismatch names the check, the message and the first wrong byte.
 * Nothing depends on timing: unexpected messages are made so with a barrier,
 * never with a sleep. Prints "conform: N ranks ok" at the end (rank 0). */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static void fail(const char *check, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(const char *check, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "conform: rank %d of %d: %s: %s\n", rank, nranks, check, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static unsigned char pat(int src, int tag, int idx, size_t off)
{
    uint32_t x = (uint32_t)src * 2654435761u ^ (uint32_t)tag * 40503u ^ (uint32_t)idx * 97u;
    x += (uint32_t)off * 131u + (uint32_t)(off >> 8) * 7u;
    return (unsigned char)(x ^ (x >> 11));
}

static void fill(unsigned char *b, size_t n, int src, int tag, int idx)
{
    for (size_t i = 0; i < n; i++) b[i] = pat(src, tag, idx, i);
}

static void check(const char *what, const unsigned char *b, size_t n, int src, int tag, int idx)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(src, tag, idx, i))
            fail(what,
                 "message %d (tag %d, from rank %d, %zu bytes): byte %zu is 0x%02x, expected "
                 "0x%02x",
                 idx, tag, src, n, i, b[i], pat(src, tag, idx, i));
}

static void check_status(const char *what, const MPI_Status *st, int src, int tag, size_t n)
{
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || (size_t)count != n)
        fail(what, "status says source %d tag %d count %d, expected %d %d %zu", st->MPI_SOURCE,
             st->MPI_TAG, count, src, tag, n);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) fail("malloc", "out of memory for %zu bytes", n);
    return p;
}

/* Every protocol boundary: empty, one byte, the eager limit -1/+0/+1, the
 * largest payloads of shm (32 KiB) and tcp (256 KiB) chunks -1/+0/+1, and
 * rendezvous sizes up to several MiB (odd, so that no chunk ends aligned). */
static size_t sizes[32];
static int nsizes;

static void make_sizes(void)
{
    const char *e = getenv("COURIER_EAGER_LIMIT");
    size_t eager = e ? (size_t)atol(e) : 16384;
    size_t s[] = {0,
                  1,
                  eager ? eager - 1 : 2,
                  eager,
                  eager + 1,
                  32767,
                  32768,
                  32769,
                  (256u << 10) - 1,
                  256u << 10,
                  (256u << 10) + 1,
                  (1u << 20) + 3,
                  (4u << 20) - 1,
                  (4u << 20) + 1,
                  (6u << 20) + 5};
    nsizes = (int)(sizeof s / sizeof s[0]);
    memcpy(sizes, s, sizeof s);
}

static int next(void)
{
    return (rank + 1) % nranks;
}
static int prev(void)
{
    return (rank + nranks - 1) % nranks;
}

/* 1. Each size to the next rank, receive posted first (expected) and sent
 * before the receive exists (unexpected), in standard and synchronous mode;
 * then to oneself. */
static void sizes_pairwise(void)
{
    for (int k = 0; k < nsizes; k++) {
        size_t n = sizes[k];
        unsigned char *s = xmalloc(n), *r = xmalloc(n);
        for (int mode = 0; mode < 4; mode++) {
            int tag = 100 + mode;
            MPI_Request rq, sq;
            MPI_Status st;
            fill(s, n, rank, tag, k);
            memset(r, 0xEE, n);
            if (mode == 0 || mode == 2) { /* expected: receive posted, then a barrier */
                MPI_Irecv(r, (int)n, MPI_BYTE, prev(), tag, MPI_COMM_WORLD, &rq);
                MPI_Barrier(MPI_COMM_WORLD);
                if (mode == 0)
                    MPI_Isend(s, (int)n, MPI_BYTE, next(), tag, MPI_COMM_WORLD, &sq);
                else
                    MPI_Issend(s, (int)n, MPI_BYTE, next(), tag, MPI_COMM_WORLD, &sq);
                MPI_Wait(&rq, &st);
                MPI_Wait(&sq, MPI_STATUS_IGNORE);
            } else { /* unexpected: sent before the receive is posted */
                if (mode == 1)
                    MPI_Isend(s, (int)n, MPI_BYTE, next(), tag, MPI_COMM_WORLD, &sq);
                else
                    MPI_Issend(s, (int)n, MPI_BYTE, next(), tag, MPI_COMM_WORLD, &sq);
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Recv(r, (int)n, MPI_BYTE, prev(), tag, MPI_COMM_WORLD, &st);
                MPI_Wait(&sq, MPI_STATUS_IGNORE);
            }
            check_status("sizes", &st, prev(), tag, n);
            check("sizes", r, n, prev(), tag, k);
            /* to oneself, receive after the send (unexpected) */
            fill(s, n, rank, tag + 10, k);
            MPI_Isend(s, (int)n, MPI_BYTE, rank, tag + 10, MPI_COMM_WORLD, &sq);
            MPI_Recv(r, (int)n, MPI_BYTE, rank, tag + 10, MPI_COMM_WORLD, &st);
            MPI_Wait(&sq, MPI_STATUS_IGNORE);
            check_status("self", &st, rank, tag + 10, n);
            check("self", r, n, rank, tag + 10, k);
        }
        free(s);
        free(r);
    }
}

/* 2. Non-overtaking: many messages of one tag in flight at once, sizes mixed
 * across the eager limit and the chunk sizes, received in order: half through
 * receives posted in advance, half as they come (unexpected). */
#define NORDER 300
static void ordering(void)
{
    static const size_t mix[] = {0, 8, 16385, 3, 70001, 1, 16384, 300001};
    const int nmix = (int)(sizeof mix / sizeof mix[0]);
    unsigned char **s = xmalloc(NORDER * sizeof *s), **r = xmalloc(NORDER * sizeof *r);
    MPI_Request *sq = xmalloc(NORDER * sizeof *sq), *rq = xmalloc(NORDER * sizeof *rq);
    for (int i = 0; i < NORDER; i++) {
        size_t n = mix[i % nmix];
        s[i] = xmalloc(n);
        r[i] = xmalloc(n);
        fill(s[i], n, rank, 7, i);
    }
    for (int i = 0; i < NORDER / 2; i++)
        MPI_Irecv(r[i], (int)mix[i % nmix], MPI_BYTE, prev(), 7, MPI_COMM_WORLD, &rq[i]);
    for (int i = 0; i < NORDER; i++)
        MPI_Isend(s[i], (int)mix[i % nmix], MPI_BYTE, next(), 7, MPI_COMM_WORLD, &sq[i]);
    for (int i = NORDER / 2; i < NORDER; i++) {
        /* each receive is big enough for any message: a message taken out of
         * order shows as a wrong size or content */
        MPI_Status st;
        unsigned char *big = xmalloc(300001);
        if (i == NORDER / 2) MPI_Waitall(NORDER / 2, rq, MPI_STATUSES_IGNORE);
        MPI_Recv(big, 300001, MPI_BYTE, prev(), 7, MPI_COMM_WORLD, &st);
        check_status("order", &st, prev(), 7, mix[i % nmix]);
        check("order", big, mix[i % nmix], prev(), 7, i);
        free(big);
    }
    for (int i = 0; i < NORDER / 2; i++) check("order", r[i], mix[i % nmix], prev(), 7, i);
    MPI_Waitall(NORDER, sq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < NORDER; i++) {
        free(s[i]);
        free(r[i]);
    }
    free(s);
    free(r);
    free(sq);
    free(rq);
}

/* 3. Any source and any tag: every rank (rank 0 too) sends rank 0 NANY
 * messages of varied tags and sizes; rank 0 takes them with wildcards and
 * checks that each source's messages come in the order sent. */
#define NANY 40
static void any_source(void)
{
    static const size_t mix[] = {5, 0, 20000, 1, 16384, 100003};
    const int nmix = (int)(sizeof mix / sizeof mix[0]);
    unsigned char *s = xmalloc(100003 * NANY);
    MPI_Request sq[NANY];
    for (int i = 0; i < NANY; i++) {
        fill(s + (size_t)i * 100003, mix[i % nmix], rank, 1000 + i, i);
        MPI_Isend(s + (size_t)i * 100003, (int)mix[i % nmix], MPI_BYTE, 0, 1000 + i, MPI_COMM_WORLD,
                  &sq[i]);
    }
    if (rank == 0) {
        int *seen = calloc((unsigned)nranks, sizeof *seen);
        unsigned char *r = xmalloc(100003);
        for (int k = 0; k < NANY * nranks; k++) {
            MPI_Status st;
            MPI_Recv(r, 100003, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int src = st.MPI_SOURCE;
            if (src < 0 || src >= nranks) fail("any", "status names source %d", src);
            int i = seen[src]++;
            check_status("any", &st, src, 1000 + i, mix[i % nmix]);
            check("any", r, mix[i % nmix], src, 1000 + i, i);
        }
        free(seen);
        free(r);
    }
    MPI_Waitall(NANY, sq, MPI_STATUSES_IGNORE);
    free(s);
}

/* 4. Truncation: a message longer than the receive buffer is reported
 * (MPI_ERR_TRUNCATE) whatever its protocol, the first bytes delivered, and the
 * pair goes on working. */
static void truncation(void)
{
    static const size_t big[] = {9, 16385, 300000, (2u << 20) + 1};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < 4; k++) {
        size_t n = big[k], m = n / 2;
        unsigned char *s = xmalloc(n), *r = xmalloc(n);
        MPI_Request sq;
        MPI_Status st;
        fill(s, n, rank, 50, k);
        memset(r, 0xEE, n);
        MPI_Isend(s, (int)n, MPI_BYTE, next(), 50, MPI_COMM_WORLD, &sq);
        int rc = MPI_Recv(r, (int)m, MPI_BYTE, prev(), 50, MPI_COMM_WORLD, &st);
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE)
            fail("truncate", "%zu bytes into %zu: MPI_Recv returned class %d, not MPI_ERR_TRUNCATE",
                 n, m, cls);
        check("truncate", r, m, prev(), 50, k);
        for (size_t i = m; i < n; i++)
            if (r[i] != 0xEE) fail("truncate", "byte %zu beyond the buffer was written", i);
        if (MPI_Wait(&sq, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            fail("truncate", "the send of %zu bytes did not complete cleanly", n);
        /* the pair still works */
        fill(s, 3, rank, 51, k);
        MPI_Sendrecv(s, 3, MPI_BYTE, next(), 51, r, 3, MPI_BYTE, prev(), 51, MPI_COMM_WORLD, &st);
        check("after truncate", r, 3, prev(), 51, k);
        free(s);
        free(r);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* 5. Cancellation: a receive nothing matches is cancelled; a send is cancelled
 * or not (the transport and protocol decide), and the receiver gets exactly the
 * messages that were not, intact. */
static void cancellation(void)
{
    unsigned char buf[4];
    MPI_Request rq;
    MPI_Status st;
    int flag;
    MPI_Irecv(buf, 4, MPI_BYTE, prev(), 60, MPI_COMM_WORLD, &rq);
    MPI_Cancel(&rq);
    MPI_Wait(&rq, &st);
    MPI_Test_cancelled(&st, &flag);
    if (!flag) fail("cancel", "an unmatched receive was not cancelled");

    static const size_t n[] = {0, 100, 16385, 1u << 20};
    for (int k = 0; k < 4; k++) {
        unsigned char *s = xmalloc(n[k]), *r = xmalloc(n[k]);
        MPI_Request sq;
        fill(s, n[k], rank, 61, k);
        MPI_Isend(s, (int)n[k], MPI_BYTE, next(), 61, MPI_COMM_WORLD, &sq);
        MPI_Cancel(&sq);
        MPI_Wait(&sq, &st);
        MPI_Test_cancelled(&st, &flag);
        int theirs;
        MPI_Sendrecv(&flag, 1, MPI_INT, next(), 62, &theirs, 1, MPI_INT, prev(), 62, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (!theirs) {
            MPI_Recv(r, (int)n[k], MPI_BYTE, prev(), 61, MPI_COMM_WORLD, &st);
            check_status("cancel", &st, prev(), 61, n[k]);
            check("cancel", r, n[k], prev(), 61, k);
        }
        /* nothing else of tag 61 is left: a marker comes next */
        MPI_Sendrecv(&k, 1, MPI_INT, next(), 63, &theirs, 1, MPI_INT, prev(), 63, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Iprobe(prev(), 61, MPI_COMM_WORLD, &flag, &st);
        if (flag) fail("cancel", "a cancelled send of %zu bytes arrived after all", n[k]);
        MPI_Barrier(MPI_COMM_WORLD);
        free(s);
        free(r);
    }
}

/* 6. Many outstanding nonblocking operations with every peer, completed in
 * an order different from posting (Waitany / Testsome). */
#define NOUT 64
static void outstanding(void)
{
    int np = nranks, total = NOUT * np;
    size_t n = 777;
    unsigned char *s = xmalloc(n * (size_t)total), *r = xmalloc(n * (size_t)total);
    MPI_Request *q = xmalloc(2 * (size_t)total * sizeof *q);
    for (int p = 0; p < np; p++)
        for (int i = 0; i < NOUT; i++)
            MPI_Irecv(r + n * (size_t)(p * NOUT + i), (int)n, MPI_BYTE, p, 70 + i, MPI_COMM_WORLD,
                      &q[p * NOUT + i]);
    for (int i = NOUT - 1; i >= 0; i--)
        for (int p = 0; p < np; p++) {
            unsigned char *b = s + n * (size_t)(p * NOUT + i);
            fill(b, n, rank, 70 + i, p);
            MPI_Isend(b, (int)n, MPI_BYTE, p, 70 + i, MPI_COMM_WORLD, &q[total + p * NOUT + i]);
        }
    for (int left = 2 * total; left > 0; left--) {
        int idx;
        MPI_Waitany(2 * total, q, &idx, MPI_STATUS_IGNORE);
        if (idx == MPI_UNDEFINED) fail("outstanding", "Waitany found nothing with %d left", left);
    }
    for (int p = 0; p < np; p++)
        for (int i = 0; i < NOUT; i++)
            check("outstanding", r + n * (size_t)(p * NOUT + i), n, p, 70 + i, rank);
    free(s);
    free(r);
    free(q);
}

/* 7. Floods: every rank sends every other (and itself) many messages before
 * receiving any, both ways at once; eager ones fill the receivers' rings and
 * unexpected queues (refusal, credits), long ones the rendezvous. Must end,
 * every message intact. */
#define NFLOOD 400
static void flood(void)
{
    static const size_t mix[] = {1, 4000, 16384, 64, 40000, 0, 9000};
    const int nmix = (int)(sizeof mix / sizeof mix[0]);
    size_t maxn = 40000;
    int np = nranks, total = NFLOOD * np;
    unsigned char *s = xmalloc(maxn * (size_t)NFLOOD), *r = xmalloc(maxn);
    MPI_Request *sq = xmalloc((size_t)total * sizeof *sq);
    for (int i = 0; i < NFLOOD; i++) fill(s + maxn * (size_t)i, mix[i % nmix], rank, 90, i);
    for (int i = 0; i < NFLOOD; i++)
        for (int k = 0; k < np; k++) {
            int p = (rank + k) % np;
            MPI_Isend(s + maxn * (size_t)i, (int)mix[i % nmix], MPI_BYTE, p, 90, MPI_COMM_WORLD,
                      &sq[i * np + k]);
        }
    int *seen = calloc((unsigned)np, sizeof *seen);
    for (int k = 0; k < total; k++) {
        MPI_Status st;
        MPI_Recv(r, (int)maxn, MPI_BYTE, MPI_ANY_SOURCE, 90, MPI_COMM_WORLD, &st);
        int src = st.MPI_SOURCE, i = seen[src]++;
        check_status("flood", &st, src, 90, mix[i % nmix]);
        check("flood", r, mix[i % nmix], src, 90, i);
    }
    MPI_Waitall(total, sq, MPI_STATUSES_IGNORE);
    free(seen);
    free(s);
    free(r);
    free(sq);
}

/* 8. One-sided: puts and gets of every size into a window at the next rank
 * (single copy where the transport offers it, the target's service where it
 * is refused: run with COURIER_NO_CMA=1), checked at the target and back. */
static void onesided(void)
{
    size_t max = (4u << 20) + 1;
    unsigned char *win_mem, *src = xmalloc(max), *got = xmalloc(max);
    MPI_Win win;
    MPI_Alloc_mem((MPI_Aint)max, MPI_INFO_NULL, &win_mem);
    MPI_Win_create(win_mem, (MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    static const size_t n[] = {1, 16383, 16385, 32769, (256u << 10) + 1, (4u << 20) + 1};
    for (int k = 0; k < 6; k++) {
        memset(win_mem, 0xEE, max);
        fill(src, n[k], rank, 110, k);
        MPI_Win_fence(0, win);
        MPI_Put(src, (int)n[k], MPI_BYTE, next(), 0, (int)n[k], MPI_BYTE, win);
        MPI_Win_fence(0, win);
        check("put", win_mem, n[k], prev(), 110, k);
        if (n[k] < max && win_mem[n[k]] != 0xEE) fail("put", "%zu bytes: one byte too many", n[k]);
        memset(got, 0, n[k]);
        MPI_Get(got, (int)n[k], MPI_BYTE, next(), 0, (int)n[k], MPI_BYTE, win);
        MPI_Win_fence(0, win);
        check("get", got, n[k], rank, 110, k);
    }
    MPI_Win_free(&win);
    MPI_Free_mem(win_mem);
    free(src);
    free(got);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    make_sizes();
    static const struct {
        const char *name;
        void (*run)(void);
    } battery[] = {
        {"sizes", sizes_pairwise},  {"ordering", ordering},         {"any source", any_source},
        {"truncation", truncation}, {"cancellation", cancellation}, {"outstanding", outstanding},
        {"flood", flood},           {"one-sided", onesided}};
    for (size_t i = 0; i < sizeof battery / sizeof battery[0]; i++) {
        battery[i].run();
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) printf("conform: %s ok\n", battery[i].name);
    }
    MPI_Finalize();
    if (rank == 0) printf("conform: %d ranks ok\n", nranks);
    return 0;
}
