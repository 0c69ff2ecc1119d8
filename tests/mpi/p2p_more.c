/* Persistent requests, matched probe, generalized requests and error classes
 * (MPI-3.1 §3.9, §3.8.2-3, §12.2, §8.5). Any number of ranks >= 2.
 *
 *  - persistent: each rank sends to its right neighbour and receives from its
 *    left with MPI_Send_init/Bsend_init/Ssend_init/Rsend_init and
 *    MPI_Recv_init, short (eager) and long (rendezvous), contiguous and
 *    strided, started many times (MPI_Start, MPI_Startall) and completed by
 *    every wait/test form; values, sources, tags and counts are checked each
 *    round. Inactive requests: Wait/Test/Request_get_status give the empty
 *    status at once, Waitany/Testany give MPI_UNDEFINED, Waitsome's outcount is
 *    MPI_UNDEFINED, Testall says done. Starting an active or a non-persistent
 *    request and cancelling an inactive one are errors (MPI_ERR_REQUEST); an
 *    active persistent receive is cancelled and then started again; a freed
 *    active one still receives;
 *  - matched probe: every other rank sends rank 0 messages of many tags and
 *    sizes; rank 0 takes them with MPI_Mprobe/MPI_Improbe (MPI_ANY_SOURCE),
 *    posts a receive for MPI_ANY_SOURCE/MPI_ANY_TAG before it receives the
 *    probed message, and checks that this receive got another message and the
 *    matched one arrives intact with MPI_Mrecv/MPI_Imrecv; every message
 *    exactly once, in order per sender. MPI_PROC_NULL gives
 *    MPI_MESSAGE_NO_PROC; MPI_MESSAGE_NULL is an error; truncation is reported;
 *    a received message's handle is an error 255 messages later too, while
 *    another message is held (ids: docs/engine.md);
 *  - generalized requests: query/free/cancel callbacks run as the standard
 *    says (query and free once, at completion; free alone after
 *    MPI_Request_free; cancel with the completion flag), completed later in
 *    this thread or from another thread (concurrently with MPI_Wait when
 *    MPI_THREAD_MULTIPLE is provided, else before it), mixed with
 *    point-to-point requests in Waitall/Waitany; a query error comes back;
 *  - error classes: added classes and codes, their strings and classes,
 *    MPI_LASTUSEDCODE, and mistakes reported. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "mcheck.h"

static int rank, size, provided;

/* Expect an error of class cls from a call under MPI_ERRORS_RETURN. */
#define EXPECT_ERR(call, cls)                                                                      \
    do {                                                                                           \
        int rc_ = (call), c_ = -1;                                                                 \
        CHECK(rc_ != MPI_SUCCESS, "%s succeeded, expected class %d", #call, cls);                  \
        MPI_Error_class(rc_, &c_);                                                                 \
        CHECK(c_ == (cls), "%s: class %d, expected %d", #call, c_, cls);                           \
    } while (0)

static void check_empty(const MPI_Status *s, const char *what)
{
    int n = -1;
    CHECK(s->MPI_SOURCE == MPI_ANY_SOURCE && s->MPI_TAG == MPI_ANY_TAG,
          "%s: status not empty (source %d tag %d)", what, s->MPI_SOURCE, s->MPI_TAG);
    MPI_Get_count(s, MPI_INT, &n);
    CHECK(n == 0, "%s: count %d in an empty status", what, n);
}

/* ---- persistent requests ---------------------------------------------------- */

static int val(int src, int round, int i)
{
    return src * 1000003 + round * 7919 + i;
}

enum { P_STD, P_BUF, P_SYNC, P_READY, P_MODES };

static int init_send(int mode, const void *buf, int n, MPI_Datatype t, int dest, int tag,
                     MPI_Request *r)
{
    switch (mode) {
    case P_STD:
        return MPI_Send_init(buf, n, t, dest, tag, MPI_COMM_WORLD, r);
    case P_BUF:
        return MPI_Bsend_init(buf, n, t, dest, tag, MPI_COMM_WORLD, r);
    case P_SYNC:
        return MPI_Ssend_init(buf, n, t, dest, tag, MPI_COMM_WORLD, r);
    default:
        return MPI_Rsend_init(buf, n, t, dest, tag, MPI_COMM_WORLD, r);
    }
}

/* n ints, contiguous or every other int of a buffer twice as long (strided). */
static void persistent_case(int mode, int n, bool strided)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int tag = 10 + mode * 4 + (strided ? 2 : 0) + (n > 1000);
    int span = strided ? 2 * n : n;
    int *sbuf = calloc((size_t)span, sizeof(int)), *rbuf = calloc((size_t)span, sizeof(int));
    CHECK(sbuf && rbuf, "out of memory");
    MPI_Datatype t = MPI_INT;
    int cnt = n;
    if (strided) {
        OK(MPI_Type_vector(n, 1, 2, MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        cnt = 1;
    }
    MPI_Request rq[2];
    OK(MPI_Recv_init(rbuf, cnt, t, left, tag, MPI_COMM_WORLD, &rq[0]));
    OK(init_send(mode, sbuf, cnt, t, right, tag, &rq[1]));
    if (strided) OK(MPI_Type_free(&t)); /* the requests keep it */
    int step = strided ? 2 : 1;
    for (int round = 0; round < 12; round++) {
        for (int i = 0; i < n; i++) sbuf[i * step] = val(rank, round, i);
        for (int i = 0; i < span; i++) rbuf[i] = -1;
        MPI_Status st[2], one, two[2];
        if (mode == P_READY) { /* the receive must be posted before the ready send */
            OK(MPI_Start(&rq[0]));
            OK(MPI_Barrier(MPI_COMM_WORLD));
            OK(MPI_Start(&rq[1]));
        } else {
            OK(MPI_Startall(2, rq));
        }
        int flag = 0, idx, out, ids[2];
        switch (round % 6) {
        case 0:
            OK(MPI_Waitall(2, rq, st));
            break;
        case 1:
            OK(MPI_Wait(&rq[1], &st[1]));
            OK(MPI_Wait(&rq[0], &st[0]));
            break;
        case 2:
            while (!flag) OK(MPI_Testall(2, rq, &flag, st));
            break;
        case 3:
            for (int k = 0; k < 2; k++) {
                OK(MPI_Waitany(2, rq, &idx, &one));
                CHECK(idx == 0 || idx == 1, "Waitany index %d", idx);
                st[idx] = one;
            }
            /* Both now inactive: one more Waitany says MPI_UNDEFINED. */
            OK(MPI_Waitany(2, rq, &idx, &one));
            CHECK(idx == MPI_UNDEFINED, "Waitany over inactive requests gave %d", idx);
            break;
        case 4:
            for (int got = 0; got < 2; got += out) {
                OK(MPI_Waitsome(2, rq, &out, ids, two));
                CHECK(out >= 1 && out <= 2, "Waitsome outcount %d", out);
                for (int k = 0; k < out; k++) st[ids[k]] = two[k];
            }
            OK(MPI_Waitsome(2, rq, &out, ids, two));
            CHECK(out == MPI_UNDEFINED, "Waitsome over inactive requests: outcount %d", out);
            break;
        default:
            for (int k = 0; k < 2;) {
                OK(MPI_Testany(2, rq, &idx, &flag, &one));
                if (flag) {
                    CHECK(idx == 0 || idx == 1, "Testany: index %d while requests are active", idx);
                    st[idx] = one;
                    k++;
                }
            }
            OK(MPI_Testany(2, rq, &idx, &flag, &one));
            CHECK(flag && idx == MPI_UNDEFINED, "Testany over inactive: flag %d index %d", flag,
                  idx);
        }
        CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == tag,
              "mode %d round %d: status source %d tag %d", mode, round, st[0].MPI_SOURCE,
              st[0].MPI_TAG);
        int c = -1;
        OK(MPI_Get_count(&st[0], MPI_INT, &c));
        CHECK(c == n, "mode %d round %d: count %d, expected %d", mode, round, c, n);
        for (int i = 0; i < n; i++)
            CHECK(rbuf[i * step] == val(left, round, i), "mode %d n %d round %d: [%d] = %d", mode,
                  n, round, i, rbuf[i * step]);
        if (strided)
            for (int i = 1; i < span; i += 2)
                CHECK(rbuf[i] == -1, "strided receive wrote a gap at %d", i);
        /* Inactive again: every form sees an inactive request as null. */
        MPI_Status s = {.MPI_SOURCE = 5, .MPI_TAG = 5};
        flag = 0;
        OK(MPI_Test(&rq[0], &flag, &s));
        CHECK(flag, "Test of an inactive request: flag 0");
        check_empty(&s, "Test of an inactive request");
        s.MPI_SOURCE = s.MPI_TAG = 5;
        OK(MPI_Wait(&rq[1], &s));
        check_empty(&s, "Wait of an inactive request");
        CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL,
              "a persistent request became MPI_REQUEST_NULL");
        flag = 0;
        OK(MPI_Request_get_status(rq[0], &flag, &s));
        CHECK(flag, "Request_get_status of an inactive request: flag 0");
    }
    OK(MPI_Request_free(&rq[0]));
    OK(MPI_Request_free(&rq[1]));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Request_free left a handle");
    free(sbuf);
    free(rbuf);
}

static void persistent_errors(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int x = 0, y = 0;
    MPI_Request r, nb;
    MPI_Status s;
    /* An active persistent receive that nothing matches: Start again is an
     * error, Cancel works, and it can be started again afterwards. */
    OK(MPI_Recv_init(&x, 1, MPI_INT, left, 900, MPI_COMM_WORLD, &r));
    EXPECT_ERR(MPI_Cancel(&r), MPI_ERR_REQUEST); /* inactive */
    OK(MPI_Start(&r));
    EXPECT_ERR(MPI_Start(&r), MPI_ERR_REQUEST);
    OK(MPI_Cancel(&r));
    OK(MPI_Wait(&r, &s));
    int cancelled = 0;
    OK(MPI_Test_cancelled(&s, &cancelled));
    CHECK(cancelled, "cancelled persistent receive: Test_cancelled false");
    CHECK(r != MPI_REQUEST_NULL, "cancelled persistent request lost its handle");
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* every rank cancelled before any sends tag 900 */
    /* Started again, it receives. */
    OK(MPI_Start(&r));
    OK(MPI_Send(&rank, 1, MPI_INT, right, 900, MPI_COMM_WORLD));
    OK(MPI_Wait(&r, &s));
    CHECK(x == left && s.MPI_SOURCE == left, "restarted receive got %d from %d", x, s.MPI_SOURCE);
    OK(MPI_Request_free(&r));
    /* A nonblocking request is not persistent. */
    OK(MPI_Irecv(&x, 1, MPI_INT, left, 901, MPI_COMM_WORLD, &nb));
    EXPECT_ERR(MPI_Start(&nb), MPI_ERR_REQUEST);
    EXPECT_ERR(MPI_Startall(1, &nb), MPI_ERR_REQUEST);
    OK(MPI_Send(&rank, 1, MPI_INT, right, 901, MPI_COMM_WORLD));
    OK(MPI_Wait(&nb, MPI_STATUS_IGNORE));
    /* A freed active persistent receive still receives (eager: on arrival,
     * before the later message it is checked after). */
    y = -1;
    OK(MPI_Recv_init(&y, 1, MPI_INT, left, 902, MPI_COMM_WORLD, &r));
    OK(MPI_Start(&r));
    OK(MPI_Request_free(&r));
    OK(MPI_Send(&rank, 1, MPI_INT, right, 902, MPI_COMM_WORLD));
    OK(MPI_Send(&rank, 1, MPI_INT, right, 903, MPI_COMM_WORLD));
    OK(MPI_Recv(&x, 1, MPI_INT, left, 903, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(y == left, "freed persistent receive: got %d, expected %d", y, left);
    /* MPI_PROC_NULL partners complete at once with the PROC_NULL status. */
    OK(MPI_Recv_init(&x, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &r));
    OK(MPI_Start(&r));
    OK(MPI_Wait(&r, &s));
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL persistent receive: source %d", s.MPI_SOURCE);
    OK(MPI_Request_free(&r));
    OK(MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &r));
    for (int i = 0; i < 3; i++) {
        OK(MPI_Start(&r));
        OK(MPI_Wait(&r, &s));
    }
    OK(MPI_Request_free(&r));
    /* Nothing moves to or from MPI_PROC_NULL: a null datatype is accepted. */
    OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, &s));
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL, "Irecv from PROC_NULL: source %d", s.MPI_SOURCE);
    EXPECT_ERR(MPI_Send(&x, 1, MPI_DATATYPE_NULL, right, 5, MPI_COMM_WORLD), MPI_ERR_TYPE);
    /* ... and for no elements (as MPICH accepts; codes such as PIO pass it):
     * the empty message is matched and received, and a count of one still
     * fails. */
    OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, left, 6, MPI_COMM_WORLD, &r));
    OK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, right, 6, MPI_COMM_WORLD));
    OK(MPI_Wait(&r, &s));
    CHECK(s.MPI_SOURCE == left && s.MPI_TAG == 6, "empty null-typed message: source %d tag %d",
          s.MPI_SOURCE, s.MPI_TAG);
    OK(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, right, 7, NULL, 0, MPI_DATATYPE_NULL, left, 7,
                    MPI_COMM_WORLD, &s));
    CHECK(s.MPI_SOURCE == left, "null-typed sendrecv: source %d", s.MPI_SOURCE);
    OK(MPI_Bcast(NULL, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Allgather(NULL, 0, MPI_DATATYPE_NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_COMM_WORLD));
    /* empty collectives on NULL buffers (UBSan sees any copy from NULL) */
    OK(MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
    OK(MPI_Scatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
    OK(MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Reduce(NULL, NULL, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    OK(MPI_Scan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Reduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_Request zq[6];
    OK(MPI_Iallgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD, &zq[0]));
    OK(MPI_Igather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD, &zq[1]));
    OK(MPI_Ialltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD, &zq[2]));
    OK(MPI_Ireduce(NULL, NULL, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &zq[3]));
    OK(MPI_Iallreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &zq[4]));
    OK(MPI_Ireduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &zq[5]));
    OK(MPI_Waitall(6, zq, MPI_STATUSES_IGNORE));
    OK(MPI_Iscan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &zq[0]));
    OK(MPI_Wait(&zq[0], MPI_STATUS_IGNORE));
    EXPECT_ERR(MPI_Bcast(&x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    /* Bad arguments are caught at init. */
    EXPECT_ERR(MPI_Send_init(&x, 1, MPI_INT, size, 5, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Recv_init(&x, -1, MPI_INT, 0, 5, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    EXPECT_ERR(MPI_Ssend_init(&x, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void persistent(void)
{
    static char bsbuf[1 << 21];
    OK(MPI_Buffer_attach(bsbuf, sizeof bsbuf));
    for (int mode = 0; mode < P_MODES; mode++) {
        persistent_case(mode, 10, false);
        persistent_case(mode, 40000, false); /* 160 KB: rendezvous */
        persistent_case(mode, 300, true);
        persistent_case(mode, 30000, true);
    }
    void *b;
    int bs;
    OK(MPI_Buffer_detach(&b, &bs));
    persistent_errors();
}

/* ---- matched probe ---------------------------------------------------------- */

#define NMSG 60
#define BIGN 50000 /* ints: 200 KB, rendezvous */

static int msg_len(int k)
{
    return k % 10 == 9 ? BIGN : 1 + k % 7;
}

/* Message k from rank src: msg_len(k) ints, [0] = src, [1] = k, then values. */
static void fill_msg(int *b, int src, int k)
{
    int n = msg_len(k);
    b[0] = src;
    if (n > 1) b[1] = k;
    for (int i = 2; i < n; i++) b[i] = val(src, k, i);
}

static void check_msg(const int *b, int n, int src, int tag)
{
    int k = tag - 200;
    CHECK(k >= 0 && k < NMSG && n == msg_len(k), "message tag %d has %d ints", tag, n);
    CHECK(b[0] == src, "message tag %d: [0] = %d, from %d", tag, b[0], src);
    if (n > 1) CHECK(b[1] == k, "message from %d tag %d: [1] = %d", src, tag, b[1]);
    for (int i = 2; i < n; i++)
        CHECK(b[i] == val(src, k, i), "message from %d tag %d: [%d] wrong", src, tag, i);
}

static void mprobe_test(void)
{
    int *b = malloc(BIGN * sizeof(int)), *b2 = malloc(BIGN * sizeof(int));
    CHECK(b && b2, "out of memory");
    MPI_Status s;
    MPI_Message m;
    int flag;
    /* MPI_PROC_NULL */
    OK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &s));
    CHECK(m == MPI_MESSAGE_NO_PROC && s.MPI_SOURCE == MPI_PROC_NULL,
          "Mprobe(PROC_NULL): message %#x source %d", (unsigned)m, s.MPI_SOURCE);
    s.MPI_TAG = 77;
    OK(MPI_Mrecv(b, 4, MPI_INT, &m, &s));
    int n = -1;
    MPI_Get_count(&s, MPI_INT, &n);
    CHECK(m == MPI_MESSAGE_NULL && s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_TAG == MPI_ANY_TAG &&
              n == 0,
          "Mrecv(NO_PROC): message %#x source %d tag %d count %d", (unsigned)m, s.MPI_SOURCE,
          s.MPI_TAG, n);
    flag = 0;
    OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &s));
    CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL): flag %d", flag);
    MPI_Request r;
    OK(MPI_Imrecv(b, 4, MPI_INT, &m, &r));
    OK(MPI_Wait(&r, &s));
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL && m == MPI_MESSAGE_NULL, "Imrecv(NO_PROC): source %d",
          s.MPI_SOURCE);
    /* Mistakes. */
    m = MPI_MESSAGE_NULL;
    EXPECT_ERR(MPI_Mrecv(b, 4, MPI_INT, &m, &s), MPI_ERR_REQUEST);
    EXPECT_ERR(MPI_Imrecv(b, 4, MPI_INT, &m, &r), MPI_ERR_REQUEST);
    flag = 1;
    OK(MPI_Improbe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, &m, &s));
    CHECK(!flag, "Improbe found a message nobody sent");
    /* A received message's handle stays stale while its slot is reused: 255
     * messages later (a generation of 8 bits, its slot reused at once, came
     * round then) another message is matched and held, and the old handle
     * must not name it. */
    MPI_Message old;
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int k = 0; k <= 255; k++) {
        b[0] = k;
        OK(MPI_Send(b, 1, MPI_INT, me, 12346, MPI_COMM_WORLD)); /* to itself: buffered */
        OK(MPI_Mprobe(me, 12346, MPI_COMM_WORLD, &m, &s));
        if (k == 0) old = m;
        if (k == 255) break;
        OK(MPI_Mrecv(b2, 1, MPI_INT, &m, &s));
        CHECK(b2[0] == k, "Mrecv got %d, sent %d", b2[0], k);
    }
    MPI_Message held = m;
    EXPECT_ERR(MPI_Mrecv(b2, 1, MPI_INT, &old, &s), MPI_ERR_REQUEST);
    OK(MPI_Mrecv(b2, 1, MPI_INT, &held, &s));
    CHECK(b2[0] == 255, "the held message: got %d, sent 255", b2[0]);
    OK(MPI_Barrier(MPI_COMM_WORLD));

    if (rank != 0) {
        for (int k = 0; k < NMSG; k++) {
            fill_msg(b, rank, k);
            OK(MPI_Send(b, msg_len(k), MPI_INT, 0, 200 + k, MPI_COMM_WORLD));
        }
        /* the truncation case, once rank 0 has taken the rest (it probes any tag) */
        OK(MPI_Recv(NULL, 0, MPI_INT, 0, 198, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(b, 8, MPI_INT, 0, 199, MPI_COMM_WORLD));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        free(b);
        free(b2);
        return;
    }
    int next[64] = {0}; /* per sender: the next k expected */
    int total = (size - 1) * NMSG, got = 0;
    MPI_Datatype strided;
    OK(MPI_Type_vector(BIGN, 1, 2, MPI_INT, &strided));
    OK(MPI_Type_commit(&strided));
    int *sb = malloc(2 * BIGN * sizeof(int));
    CHECK(sb, "out of memory");
    while (got < total) {
        int k = got;
        if (k % 2) {
            OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &s));
        } else {
            flag = 0;
            while (!flag)
                OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &s));
        }
        int src = s.MPI_SOURCE, tag = s.MPI_TAG, cnt = -1;
        OK(MPI_Get_count(&s, MPI_INT, &cnt));
        CHECK(src >= 1 && src < size && tag == 200 + next[src],
              "probed source %d tag %d, expected tag %d", src, tag, 200 + next[src]);
        CHECK(cnt == msg_len(tag - 200), "probed count %d for tag %d", cnt, tag);
        /* A receive for anything, posted before the matched message is received,
         * must not take it. */
        MPI_Request thief = MPI_REQUEST_NULL;
        bool steal = got + 1 < total && k % 3 != 2;
        if (steal)
            OK(MPI_Irecv(b2, BIGN, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &thief));
        MPI_Status rs;
        bool big = cnt == BIGN;
        void *dst = big && k % 2 ? (void *)sb : (void *)b;
        if (k % 4 < 2) {
            if (dst == sb)
                OK(MPI_Mrecv(sb, 1, strided, &m, &rs));
            else
                OK(MPI_Mrecv(b, BIGN, MPI_INT, &m, &rs));
        } else {
            if (dst == sb)
                OK(MPI_Imrecv(sb, 1, strided, &m, &r));
            else
                OK(MPI_Imrecv(b, BIGN, MPI_INT, &m, &r));
            CHECK(m == MPI_MESSAGE_NULL, "Imrecv left the message handle");
            OK(MPI_Wait(&r, &rs));
        }
        CHECK(m == MPI_MESSAGE_NULL, "Mrecv left the message handle");
        CHECK(rs.MPI_SOURCE == src && rs.MPI_TAG == tag, "Mrecv status %d/%d, probed %d/%d",
              rs.MPI_SOURCE, rs.MPI_TAG, src, tag);
        if (dst == sb)
            for (int i = 0; i < BIGN; i++) b[i] = sb[2 * i];
        check_msg(b, cnt, src, tag);
        next[src]++;
        got++;
        if (steal) {
            OK(MPI_Wait(&thief, &rs));
            int tc = -1;
            OK(MPI_Get_count(&rs, MPI_INT, &tc));
            CHECK(rs.MPI_SOURCE >= 1 && rs.MPI_SOURCE < size &&
                      rs.MPI_TAG == 200 + next[rs.MPI_SOURCE],
                  "the other receive got source %d tag %d: expected tag %d", rs.MPI_SOURCE,
                  rs.MPI_TAG, 200 + next[rs.MPI_SOURCE]);
            check_msg(b2, tc, rs.MPI_SOURCE, rs.MPI_TAG);
            next[rs.MPI_SOURCE]++;
            got++;
        }
    }
    /* Truncation through a matched receive. */
    for (int src = 1; src < size; src++) OK(MPI_Send(NULL, 0, MPI_INT, src, 198, MPI_COMM_WORLD));
    for (int src = 1; src < size; src++) {
        OK(MPI_Mprobe(src, 199, MPI_COMM_WORLD, &m, &s));
        EXPECT_ERR(MPI_Mrecv(b, 4, MPI_INT, &m, &s), MPI_ERR_TRUNCATE);
        CHECK(m == MPI_MESSAGE_NULL, "truncated Mrecv left the message");
    }
    OK(MPI_Type_free(&strided));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    free(sb);
    free(b);
    free(b2);
}

/* ---- generalized requests ----------------------------------------------------- */

typedef struct greq_state {
    int queries, frees, cancels, last_complete_flag;
    int query_rc;
    bool cancelled;
    MPI_Request req;
} greq_state;

static int q_fn(void *extra, MPI_Status *st)
{
    greq_state *g = extra;
    g->queries++;
    st->MPI_SOURCE = 4321;
    st->MPI_TAG = 1234;
    MPI_Status_set_cancelled(st, g->cancelled);
    return g->query_rc;
}

static int f_fn(void *extra)
{
    ((greq_state *)extra)->frees++;
    return MPI_SUCCESS;
}

static int c_fn(void *extra, int complete)
{
    greq_state *g = extra;
    g->cancels++;
    g->last_complete_flag = complete;
    if (!complete) g->cancelled = true;
    return MPI_SUCCESS;
}

static void *completer(void *arg)
{
    greq_state *g = arg;
    usleep(20000);
    CHECK(MPI_Grequest_complete(g->req) == MPI_SUCCESS, "Grequest_complete from a thread");
    return NULL;
}

static void greq_test(int user_class)
{
    greq_state g = {0};
    MPI_Request r;
    MPI_Status s;
    int flag = 1;
    /* Completed later in this thread. */
    OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &g, &r));
    OK(MPI_Test(&r, &flag, &s));
    CHECK(!flag && g.queries == 0 && g.frees == 0, "incomplete greq: flag %d queries %d", flag,
          g.queries);
    OK(MPI_Grequest_complete(r));
    EXPECT_ERR(MPI_Grequest_complete(r), MPI_ERR_REQUEST);
    OK(MPI_Request_get_status(r, &flag, &s));
    CHECK(flag && s.MPI_SOURCE == 4321, "Request_get_status on a complete greq");
    OK(MPI_Wait(&r, &s));
    CHECK(r == MPI_REQUEST_NULL && s.MPI_SOURCE == 4321 && s.MPI_TAG == 1234, "greq status %d/%d",
          s.MPI_SOURCE, s.MPI_TAG);
    CHECK(g.frees == 1 && g.queries == 2, "greq: %d frees, %d queries", g.frees, g.queries);

    /* Freed first: the free function runs at completion, the query never. */
    g = (greq_state){0};
    OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &g, &r));
    MPI_Request keep = r;
    OK(MPI_Request_free(&r));
    CHECK(g.frees == 0, "greq freed before completion: free function ran early");
    OK(MPI_Grequest_complete(keep));
    CHECK(g.frees == 1 && g.queries == 0, "freed greq: %d frees, %d queries", g.frees, g.queries);

    /* Cancelled before completion. */
    g = (greq_state){0};
    OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &g, &r));
    OK(MPI_Cancel(&r));
    CHECK(g.cancels == 1 && g.last_complete_flag == 0, "greq cancel: %d calls, complete %d",
          g.cancels, g.last_complete_flag);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Wait(&r, &s));
    OK(MPI_Test_cancelled(&s, &flag));
    CHECK(flag, "cancelled greq: Test_cancelled false");

    /* A query error comes back as the wait's error (MPI_ERRORS_RETURN). */
    g = (greq_state){.query_rc = user_class};
    OK(MPI_Grequest_start(q_fn, f_fn, NULL, &g, &r));
    OK(MPI_Grequest_complete(r));
    int rc = MPI_Wait(&r, &s);
    CHECK(rc == user_class && g.frees == 1, "greq query error: Wait returned %d", rc);

    /* Mixed with point-to-point in Waitall and Waitany, completed from another
     * thread: while this one waits when MPI_THREAD_MULTIPLE is provided. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, x = -1;
    g = (greq_state){0};
    MPI_Request rs[3];
    OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &g, &rs[0]));
    g.req = rs[0];
    OK(MPI_Irecv(&x, 1, MPI_INT, left, 950, MPI_COMM_WORLD, &rs[1]));
    OK(MPI_Isend(&rank, 1, MPI_INT, right, 950, MPI_COMM_WORLD, &rs[2]));
    pthread_t th;
    CHECK(pthread_create(&th, NULL, completer, &g) == 0, "pthread_create");
    if (provided < MPI_THREAD_MULTIPLE) pthread_join(th, NULL);
    MPI_Status sts[3];
    OK(MPI_Waitall(3, rs, sts));
    if (provided == MPI_THREAD_MULTIPLE) pthread_join(th, NULL);
    CHECK(x == left && sts[0].MPI_SOURCE == 4321 && g.frees == 1, "greq in Waitall: x %d", x);

    g = (greq_state){0};
    OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &g, &rs[0]));
    g.req = rs[0];
    rs[1] = MPI_REQUEST_NULL;
    CHECK(pthread_create(&th, NULL, completer, &g) == 0, "pthread_create");
    if (provided < MPI_THREAD_MULTIPLE) pthread_join(th, NULL);
    int idx = -1;
    OK(MPI_Waitany(2, rs, &idx, &s));
    if (provided == MPI_THREAD_MULTIPLE) pthread_join(th, NULL);
    CHECK(idx == 0 && s.MPI_TAG == 1234 && g.frees == 1, "greq in Waitany: index %d", idx);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ---- error classes ------------------------------------------------------------- */

static int handler_code = -1;
static void on_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_code = *code;
}

static int errclass_test(void)
{
    int cls, code, code2, c, len, flag, *last;
    char str[MPI_MAX_ERROR_STRING];
    OK(MPI_Add_error_class(&cls));
    CHECK(cls > MPI_ERR_LASTCODE, "added class %d is not above MPI_ERR_LASTCODE", cls);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last == cls, "MPI_LASTUSEDCODE %d after adding class %d", *last, cls);
    OK(MPI_Error_class(cls, &c));
    CHECK(c == cls, "class of added class %d is %d", cls, c);
    OK(MPI_Error_string(cls, str, &len));
    CHECK(len == 0 && str[0] == 0, "string of a class with none set: '%s'", str);
    OK(MPI_Add_error_code(cls, &code));
    OK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
    CHECK(code > cls && code2 > code, "codes %d %d after class %d", code, code2, cls);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(*last == code2, "MPI_LASTUSEDCODE %d, last code added %d", *last, code2);
    OK(MPI_Error_class(code, &c));
    CHECK(c == cls, "class of code %d is %d, expected %d", code, c, cls);
    OK(MPI_Error_class(code2, &c));
    CHECK(c == MPI_ERR_ARG, "class of code %d is %d, expected MPI_ERR_ARG", code2, c);
    OK(MPI_Add_error_string(cls, "courier test class"));
    OK(MPI_Add_error_string(code, "courier test code"));
    OK(MPI_Add_error_string(code, "courier test code, renamed"));
    OK(MPI_Error_string(cls, str, &len));
    CHECK(!strcmp(str, "courier test class") && len == (int)strlen(str), "class string '%s'", str);
    OK(MPI_Error_string(code, str, &len));
    CHECK(!strcmp(str, "courier test code, renamed"), "code string '%s'", str);
    /* Mistakes. */
    int junk;
    EXPECT_ERR(MPI_Add_error_string(MPI_ERR_ARG, "mine"), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Add_error_code(code, &junk), MPI_ERR_ARG); /* a code, not a class */
    EXPECT_ERR(MPI_Add_error_code(cls + 1000, &junk), MPI_ERR_ARG);
    static char longs[MPI_MAX_ERROR_STRING + 8];
    memset(longs, 'x', sizeof longs - 1);
    EXPECT_ERR(MPI_Add_error_string(code, longs), MPI_ERR_ARG);
    CHECK(MPI_Error_class(code2 + 1, &c) != MPI_SUCCESS, "class of a code never added");
    /* A user handler sees the code; the MPI-1 names of the handler calls. */
    MPI_Errhandler eh, old;
    OK(MPI_Errhandler_create(on_error, &eh));
    OK(MPI_Errhandler_get(MPI_COMM_WORLD, &old));
    OK(MPI_Errhandler_set(MPI_COMM_WORLD, eh));
    MPI_Errhandler now;
    OK(MPI_Errhandler_get(MPI_COMM_WORLD, &now));
    CHECK(now == eh, "Errhandler_get after Errhandler_set");
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    CHECK(handler_code == code, "handler got %d, expected %d", handler_code, code);
    OK(MPI_Errhandler_set(MPI_COMM_WORLD, old));
    OK(MPI_Errhandler_free(&eh));
    return cls;
}

int main(int argc, char **argv)
{
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2 && size <= 64, "run with 2..64 ranks");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int cls = errclass_test();
    persistent();
    mprobe_test();
    greq_test(cls);
    OK(MPI_Finalize());
    if (rank == 0) printf("p2p_more: ok (%d ranks, thread level %d)\n", size, provided);
    return 0;
}
