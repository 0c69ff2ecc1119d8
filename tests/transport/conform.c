/* The transport conformance battery (issue 38, item 7): one MPI program run
 * over each transport in turn (tests/transport/CMakeLists.txt forces self,
 * shm, tcp, ucx or the simulated mode), checking what every transport must
 * give the engine, with byte-by-byte patterns and a guard after every receive
 * buffer:
 *   sizes    every protocol boundary (0, 1, the eager limit -1/0/+1, rendezvous
 *            up to 4 MiB), each pre-posted and unexpected, both directions;
 *   order    many messages in flight between a pair, of mixed protocols,
 *            arrive in the order sent (non-overtaking);
 *   anysrc   MPI_ANY_SOURCE / MPI_ANY_TAG: status right, each source in order;
 *   tags     many outstanding receives posted in the reverse tag order;
 *   flood    both sides send many before receiving any: no deadlock;
 *   trunc    a message longer than its receive is MPI_ERR_TRUNCATE (with
 *            MPI_ERRORS_RETURN), nothing written past the buffer, and the pair
 *            goes on working;
 *   exit     MPI_Finalize returns MPI_SUCCESS.
 * Every rank pairs with rank^1 (when there is one) and with itself (self-sends);
 * with one rank only self-sends run. Argument "small": fewer and smaller
 * messages (the simulated mode runs every copy through its clock).
 * Invariant: the pattern of a message depends only on (seed, offset), so the
 * receiver checks every byte without being told anything but the seed. */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64
#define GUARD_BYTE 0xEE

static int me, np;

static void fail(const char *check, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(const char *check, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "transport_conform: rank %d: %s: ", me, check);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static unsigned char pat(uint32_t seed, size_t i)
{
    uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u + (uint32_t)(i >> 8) * 17u;
    return (unsigned char)(x ^ (x >> 13));
}

static void fill(unsigned char *b, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) b[i] = pat(seed, i);
}

/* A receive buffer of n bytes plus a guard. */
static unsigned char *rbuf(size_t n)
{
    unsigned char *b = malloc(n + GUARD);
    if (!b) fail("malloc", "%zu bytes", n + GUARD);
    memset(b, GUARD_BYTE, n + GUARD);
    return b;
}

/* Checks n bytes of pattern seed, then the guard after cap bytes (NOGUARD:
 * none, the buffer is part of a larger one). */
#define NOGUARD ((size_t)-1)
static void verify(const char *check, const unsigned char *b, size_t n, size_t cap, uint32_t seed,
                   int from)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(seed, i))
            fail(check, "%zu-byte message from rank %d: byte %zu is 0x%02x, expected 0x%02x", n,
                 from, i, b[i], pat(seed, i));
    for (size_t i = cap; cap != NOGUARD && i < cap + GUARD; i++)
        if (b[i] != GUARD_BYTE)
            fail(check, "%zu-byte message from rank %d: byte %zu past the %zu-byte buffer written",
                 n, from, i - cap, cap);
}

static void ok(const char *check, int rc)
{
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, s, &len);
        fail(check, "call returned %d (%s)", rc, s);
    }
}

static void expect_status(const char *check, const MPI_Status *st, int src, int tag, size_t n)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || count != (int)n)
        fail(check, "status says source %d tag %d count %d, expected %d %d %zu", st->MPI_SOURCE,
             st->MPI_TAG, count, src, tag, n);
}

/* sizes: to and from peer (peer == me: self), each size pre-posted and then
 * unexpected. Tags: 10 data, 11 "go" (the receive is posted), 12 "sent"
 * (the data went before this one, so it waits unmatched at the receiver). */
static void sizes(int peer, const size_t *sz, int nsz)
{
    for (int k = 0; k < nsz; k++) {
        size_t n = sz[k];
        unsigned char *s = malloc(n ? n : 1);
        for (int dir = 0; dir < 2; dir++) {
            int sender = dir == 0 ? (me < peer ? me : peer) : (me < peer ? peer : me);
            int receiver = sender == me ? peer : me;
            for (int unexpected = 0; unexpected < 2; unexpected++) {
                uint32_t seed = (uint32_t)(k * 4 + dir * 2 + unexpected + 1);
                const char *what = unexpected ? "sizes (unexpected)" : "sizes (pre-posted)";
                MPI_Request sr = MPI_REQUEST_NULL, rr = MPI_REQUEST_NULL;
                MPI_Status st;
                unsigned char *r = NULL;
                if (me == receiver) {
                    r = rbuf(n);
                    if (!unexpected) {
                        ok(what, MPI_Irecv(r, (int)n, MPI_BYTE, sender, 10, MPI_COMM_WORLD, &rr));
                        ok(what, MPI_Send(NULL, 0, MPI_BYTE, sender, 11, MPI_COMM_WORLD));
                    }
                }
                if (me == sender) {
                    fill(s, n, seed);
                    if (!unexpected)
                        ok(what, MPI_Recv(NULL, 0, MPI_BYTE, receiver, 11, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE));
                    ok(what, MPI_Isend(s, (int)n, MPI_BYTE, receiver, 10, MPI_COMM_WORLD, &sr));
                    if (unexpected)
                        ok(what, MPI_Send(NULL, 0, MPI_BYTE, receiver, 12, MPI_COMM_WORLD));
                }
                if (me == receiver) {
                    if (unexpected) {
                        ok(what, MPI_Recv(NULL, 0, MPI_BYTE, sender, 12, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE));
                        ok(what, MPI_Irecv(r, (int)n, MPI_BYTE, sender, 10, MPI_COMM_WORLD, &rr));
                    }
                    ok(what, MPI_Wait(&rr, &st));
                    expect_status(what, &st, sender, 10, n);
                    verify(what, r, n, n, seed, sender);
                    free(r);
                }
                if (me == sender) ok(what, MPI_Wait(&sr, MPI_STATUS_IGNORE));
            }
        }
        free(s);
    }
}

/* order: the lower rank sends cnt messages of mixed sizes to the higher (or
 * itself), same tag; the receiver has the first half pre-posted and takes the
 * rest as they come (unexpected). */
static void order(int peer, int cnt, const size_t *mix, int nmix)
{
    const char *what = "order";
    unsigned char **sb = calloc((size_t)cnt, sizeof *sb), **rb = calloc((size_t)cnt, sizeof *rb);
    MPI_Request *sq = malloc((size_t)cnt * sizeof *sq), *rq = malloc((size_t)cnt * sizeof *rq);
    int sender = me < peer ? me : peer, receiver = me < peer ? peer : me;
    for (int i = 0; i < cnt; i++) {
        size_t n = mix[i % nmix];
        if (me == sender) {
            sb[i] = malloc(n ? n : 1);
            fill(sb[i], n, 1000u + (uint32_t)i);
        }
        if (me == receiver) rb[i] = rbuf(n);
        sq[i] = rq[i] = MPI_REQUEST_NULL;
    }
    if (me == receiver)
        for (int i = 0; i < cnt / 2; i++)
            ok(what,
               MPI_Irecv(rb[i], (int)mix[i % nmix], MPI_BYTE, sender, 20, MPI_COMM_WORLD, &rq[i]));
    if (me == sender)
        for (int i = 0; i < cnt; i++)
            ok(what, MPI_Isend(sb[i], (int)mix[i % nmix], MPI_BYTE, receiver, 20, MPI_COMM_WORLD,
                               &sq[i]));
    if (me == receiver)
        for (int i = cnt / 2; i < cnt; i++)
            ok(what,
               MPI_Irecv(rb[i], (int)mix[i % nmix], MPI_BYTE, sender, 20, MPI_COMM_WORLD, &rq[i]));
    for (int i = 0; i < cnt && me == receiver; i++) {
        MPI_Status st;
        size_t n = mix[i % nmix];
        ok(what, MPI_Wait(&rq[i], &st));
        expect_status(what, &st, sender, 20, n);
        verify(what, rb[i], n, n, 1000u + (uint32_t)i, sender);
    }
    ok(what, MPI_Waitall(cnt, sq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < cnt; i++) {
        free(sb[i]);
        free(rb[i]);
    }
    free(sb);
    free(rb);
    free(sq);
    free(rq);
}

/* anysrc: every rank (root too: a self-send) sends cnt messages to root, tag
 * = the sequence number, size and seed from (source, seq); root receives them
 * all with MPI_ANY_SOURCE / MPI_ANY_TAG into buffers of the largest size, and
 * each source's must come in order. */
static void anysrc(int root, int cnt, size_t big)
{
    const char *what = "any-source/any-tag";
    MPI_Request *sr = malloc((size_t)cnt * sizeof *sr);
    unsigned char **sb = malloc((size_t)cnt * sizeof *sb);
    for (int i = 0; i < cnt; i++) {
        size_t n = (size_t)((me * 7 + i * 13) % 5 == 0 ? big : (size_t)(me * 31 + i * 3) % 200);
        sb[i] = malloc(n ? n : 1);
        fill(sb[i], n, (uint32_t)(me * 100000 + i));
        ok(what, MPI_Isend(sb[i], (int)n, MPI_BYTE, root, i, MPI_COMM_WORLD, &sr[i]));
    }
    if (me == root) {
        int *next = calloc((size_t)np, sizeof *next);
        unsigned char *r = rbuf(big);
        for (int k = 0; k < np * cnt; k++) {
            MPI_Status st;
            memset(r, GUARD_BYTE, big + GUARD);
            ok(what,
               MPI_Recv(r, (int)big, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE, i = st.MPI_TAG;
            if (src < 0 || src >= np || i != next[src])
                fail(what, "message %d from source %d tag %d, expected tag %d (order broken)", k,
                     src, i, src >= 0 && src < np ? next[src] : -1);
            next[src]++;
            size_t n =
                (size_t)((src * 7 + i * 13) % 5 == 0 ? big : (size_t)(src * 31 + i * 3) % 200);
            expect_status(what, &st, src, i, n);
            verify(what, r, n, big, (uint32_t)(src * 100000 + i), src);
        }
        free(r);
        free(next);
    }
    ok(what, MPI_Waitall(cnt, sr, MPI_STATUSES_IGNORE));
    for (int i = 0; i < cnt; i++) free(sb[i]);
    free(sb);
    free(sr);
}

/* tags: cnt outstanding receives and sends at once both ways between the
 * pair; the receives posted in the reverse tag order, so each send matches
 * by its tag, not by arrival. */
static void tags(int peer, int cnt, size_t n)
{
    const char *what = "outstanding (tag matching)";
    MPI_Request *rq = malloc(2 * (size_t)cnt * sizeof *rq);
    unsigned char *s = malloc((size_t)cnt * n), *r = rbuf((size_t)cnt * n);
    for (int t = 0; t < cnt; t++) {
        int i = cnt - 1 - t;
        ok(what,
           MPI_Irecv(r + (size_t)i * n, (int)n, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD, &rq[t]));
    }
    for (int i = 0; i < cnt; i++) {
        fill(s + (size_t)i * n, n, (uint32_t)(me * 7777 + i));
        ok(what, MPI_Isend(s + (size_t)i * n, (int)n, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD,
                           &rq[cnt + i]));
    }
    MPI_Status *st = malloc(2 * (size_t)cnt * sizeof *st);
    ok(what, MPI_Waitall(2 * cnt, rq, st));
    for (int t = 0; t < cnt; t++) {
        int i = cnt - 1 - t;
        expect_status(what, &st[t], peer, 100 + i, n);
        verify(what, r + (size_t)i * n, n, NOGUARD, (uint32_t)(peer * 7777 + i), peer);
    }
    verify(what, r, 0, (size_t)cnt * n, 0, peer);
    free(st);
    free(s);
    free(r);
    free(rq);
}

/* flood: both sides start cnt sends (mostly eager, every eighth rendezvous)
 * before receiving any, then receive them all. Must not deadlock. */
static void flood(int peer, int cnt, size_t small, size_t large)
{
    const char *what = "bidirectional flood";
    MPI_Request *rq = malloc((size_t)cnt * sizeof *rq);
    unsigned char **sb = malloc((size_t)cnt * sizeof *sb);
    for (int i = 0; i < cnt; i++) {
        size_t n = i % 8 == 7 ? large : small;
        sb[i] = malloc(n);
        fill(sb[i], n, (uint32_t)(me * 50000 + i));
        ok(what, MPI_Isend(sb[i], (int)n, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &rq[i]));
    }
    unsigned char *r = rbuf(large);
    for (int i = 0; i < cnt; i++) {
        size_t n = i % 8 == 7 ? large : small;
        MPI_Status st;
        ok(what, MPI_Recv(r, (int)large, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &st));
        expect_status(what, &st, peer, 30, n);
        verify(what, r, n, large, (uint32_t)(peer * 50000 + i), peer);
    }
    ok(what, MPI_Waitall(cnt, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < cnt; i++) free(sb[i]);
    free(sb);
    free(r);
    free(rq);
}

/* trunc: the lower rank sends n bytes, the higher receives into n-1 (first
 * blocking, then with Irecv + Wait): MPI_ERR_TRUNCATE, no byte past the
 * buffer; then one good message of the same size still arrives whole. */
static void trunc_check(int peer, size_t n)
{
    const char *what = "truncation";
    int sender = me < peer ? me : peer, receiver = me < peer ? peer : me;
    unsigned char *s = malloc(n);
    MPI_Request sr[3];
    if (me == sender) {
        fill(s, n, 0); /* the three share s */
        for (int j = 0; j < 3; j++) {
            ok(what, MPI_Isend(s, (int)n, MPI_BYTE, receiver, 40 + j, MPI_COMM_WORLD, &sr[j]));
        }
    }
    if (me == receiver) {
        for (int j = 0; j < 2; j++) {
            unsigned char *r = rbuf(n - 1);
            MPI_Status st;
            int rc;
            if (j == 0) {
                rc = MPI_Recv(r, (int)n - 1, MPI_BYTE, sender, 40, MPI_COMM_WORLD, &st);
            } else {
                MPI_Request rr;
                ok(what, MPI_Irecv(r, (int)n - 1, MPI_BYTE, sender, 41, MPI_COMM_WORLD, &rr));
                rc = MPI_Wait(&rr, &st);
            }
            int cls = -1;
            MPI_Error_class(rc, &cls);
            if (cls != MPI_ERR_TRUNCATE)
                fail(what, "%zu bytes into %zu (%s): returned class %d, expected MPI_ERR_TRUNCATE",
                     n, n - 1, j ? "MPI_Irecv + MPI_Wait" : "MPI_Recv", cls);
            verify(what, r, 0, n - 1, 0, sender); /* only the guard */
            free(r);
        }
        unsigned char *r = rbuf(n);
        MPI_Status st;
        ok(what, MPI_Recv(r, (int)n, MPI_BYTE, sender, 42, MPI_COMM_WORLD, &st));
        expect_status(what, &st, sender, 42, n);
        verify(what, r, n, n, 0, sender);
        free(r);
    }
    if (me == sender) {
        MPI_Status st[3];
        /* The sender's side may report the truncation too; only the third must succeed. */
        MPI_Wait(&sr[0], &st[0]);
        MPI_Wait(&sr[1], &st[1]);
        ok(what, MPI_Wait(&sr[2], &st[2]));
    }
    free(s);
}

/* Self truncation: the same, sender and receiver this rank. */
static void trunc_self(size_t n)
{
    const char *what = "truncation (self)";
    unsigned char *s = malloc(n), *r = rbuf(n - 1);
    fill(s, n, 5);
    MPI_Request sr;
    MPI_Status st;
    ok(what, MPI_Isend(s, (int)n, MPI_BYTE, me, 50, MPI_COMM_WORLD, &sr));
    int rc = MPI_Recv(r, (int)n - 1, MPI_BYTE, me, 50, MPI_COMM_WORLD, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_TRUNCATE)
        fail(what, "%zu bytes into %zu: returned class %d, expected MPI_ERR_TRUNCATE", n, n - 1,
             cls);
    verify(what, r, 0, n - 1, 0, me);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    ok("MPI_Init", MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int small = argc > 1 && strcmp(argv[1], "small") == 0;
    const char *e = getenv("COURIER_EAGER_LIMIT");
    size_t E = e && *e ? (size_t)strtoul(e, NULL, 10) : 16384;
    if (E < 2) E = 2;

    size_t sz[] = {0,
                   1,
                   2,
                   7,
                   8,
                   63,
                   64,
                   255,
                   256,
                   1023,
                   4096,
                   E - 1,
                   E,
                   E + 1,
                   2 * E - 1,
                   2 * E + 1,
                   65535,
                   65536,
                   65537,
                   262143,
                   1 << 20,
                   (1 << 20) + 1,
                   (3 << 20) + 7,
                   4 << 20};
    int nsz = (int)(sizeof sz / sizeof sz[0]);
    if (small)
        while (nsz > 0 && sz[nsz - 1] > (1u << 20) + 1) nsz--;
    size_t mix[] = {0, 1, E - 1, E, E + 1, 100, 3 * E, 8};
    int nmix = (int)(sizeof mix / sizeof mix[0]);
    int peer = (me ^ 1) < np ? me ^ 1 : -1;
    int order_n = small ? 64 : 400, any_n = small ? 16 : 100, tag_n = small ? 64 : 256;
    int flood_n = small ? 64 : 800;
    size_t any_big = 2 * E > 256 ? 2 * E : 256; /* the other sizes are under 200 */

    /* Self first (every rank, alone), then the pair. */
    sizes(me, sz, nsz);
    order(me, order_n / 4, mix, nmix);
    tags(me, tag_n / 4, 100);
    trunc_self(100);
    trunc_self(3 * E);
    if (peer >= 0) {
        sizes(peer, sz, nsz);
        order(peer, order_n, mix, nmix);
        tags(peer, tag_n, 100);
        tags(peer, small ? 8 : 32, E + 1);
        flood(peer, flood_n, E < 1024 ? E : 1024, 3 * E);
        trunc_check(peer, 100);
        trunc_check(peer, 3 * E);
    }
    anysrc(0, any_n, any_big);
    if (np > 1) anysrc(np - 1, any_n, any_big);
    ok("MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        const char *tp = getenv("COURIER_TRANSPORTS");
        printf("transport conformance ok: %d ranks, transports %s, eager limit %zu%s\n", np,
               tp && *tp ? tp : "(all)", E, small ? ", small" : "");
        fflush(stdout);
    }
    ok("MPI_Finalize", MPI_Finalize());
    return 0;
}
