/* MPI_Cancel of sends and receives (docs/mpi.md: a send is cancelled only while
 * nothing of it has reached a receive). For every send mode (Isend, Issend,
 * Irsend, Ibsend) and size (empty, small, 4 KiB, 256 KiB: eager and above the
 * eager limit; the registered variants add COURIER_EAGER_LIMIT=16) the sender
 * cancels and completes the send (Wait, Test, Waitany, Waitall in turn), and
 * MPI_Test_cancelled must agree with what the receiver gets: exactly the
 * messages not cancelled, intact and in order, and nothing else.
 *
 * Nothing depends on timing. While the sender cancels, the receiver posts no
 * receive (it waits in a barrier), so every outcome the rule fixes is asserted:
 * a synchronous send is always cancelled (to a peer and to oneself); an eager
 * send already gone and a buffered send never are. With argument "strict" (run
 * with COURIER_UNEXPECTED_LIMIT=65536: the receiver neither takes a 256 KiB
 * message in advance nor holds more than 64 KiB of unexpected data) a long send
 * is always cancelled, and so is a send still queued for credits. After each
 * phase the receiver takes messages with MPI_ANY_TAG, in arrival order, until a
 * sentinel the sender sends after the barrier, which carries what was cancelled.
 * A receive that nothing has matched is cancelled, and the next message goes to
 * the next receive. Regression: cancelling a send ended the job; then a
 * cancelled synchronous send whose receiver waited for word from the sender
 * deadlocked (MPICH's pt2pt/scancel). Needs 2 ranks. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mcheck.h"

#define BIG (256 * 1024)
#define NS 4
#define NCASE (NS * NMODES)
#define T_END 30000    /* sentinel of phase A: int cancelled[NCASE] */
#define T_END_B 30001  /* sentinel of phase B: the number of fillers */
#define T_IB 30002     /* phase B: a buffered send queued behind the fillers */
#define T_FREED NCASE  /* a cancelled Issend whose request is freed: may arrive */
#define T_FILLER 10000 /* phase B: filler k has tag T_FILLER + k */

enum { ISEND, ISSEND, IRSEND, IBSEND, NMODES };
static const char *const mname[NMODES] = {"MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend"};
static const int sizes[NS] = {0, 8, 4096, BIG};

static void fill(char *b, int n, int seed)
{
    for (int i = 0; i < n; i++) b[i] = (char)(seed * 31 + i * 7);
}

static void post(int mode, const char *buf, int n, int dest, int tag, MPI_Request *r)
{
    if (mode == ISEND) OK(MPI_Isend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, r));
    if (mode == ISSEND) OK(MPI_Issend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, r));
    if (mode == IRSEND) OK(MPI_Irsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, r));
    if (mode == IBSEND) OK(MPI_Ibsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, r));
}

/* Complete request *r (a different call for each 'how'); MPI_Test_cancelled. */
static int finish(MPI_Request *r, int how)
{
    MPI_Status st[1];
    int flag = -1, done = 0, idx;
    switch (how % 4) {
    case 0:
        OK(MPI_Wait(r, st));
        break;
    case 1:
        while (!done) OK(MPI_Test(r, &done, st));
        break;
    case 2:
        OK(MPI_Waitany(1, r, &idx, st));
        CHECK(idx == 0, "MPI_Waitany gave index %d", idx);
        break;
    default:
        OK(MPI_Waitall(1, r, st));
    }
    CHECK(*r == MPI_REQUEST_NULL, "the request was not freed on completion");
    OK(MPI_Test_cancelled(st, &flag));
    CHECK(flag == 0 || flag == 1, "MPI_Test_cancelled gave %d", flag);
    return flag;
}

static int case_size(int tag)
{
    return tag == T_FREED ? 8 : sizes[tag / NMODES];
}

/* Phase A: every mode and size, cancelled while the receiver posts nothing. */
static void phase_a(int me, bool strict, char *buf)
{
    const char *el = getenv("COURIER_EAGER_LIMIT");
    bool eager8 = !el || atol(el) >= 8; /* 0 and 8 bytes go eagerly */
    if (me == 0) {
        int cancelled[NCASE];
        for (int c = 0; c < NCASE; c++) {
            int mode = c % NMODES, n = sizes[c / NMODES];
            fill(buf, n, c);
            MPI_Request r;
            post(mode, buf, n, 1, c, &r);
            OK(MPI_Cancel(&r));
            OK(MPI_Cancel(&r)); /* twice: the same as once */
            int f = cancelled[c] = finish(&r, c);
            if (mode == ISSEND)
                CHECK(f, "%s of %d bytes, no receive posted: not cancelled", mname[mode], n);
            if (mode == IBSEND)
                CHECK(!f, "%s of %d bytes: a buffered send was cancelled", mname[mode], n);
            if ((mode == ISEND || mode == IRSEND) && n <= 8 && eager8)
                CHECK(!f, "%s of %d bytes: an eager send already gone was cancelled", mname[mode],
                      n);
            if ((mode == ISEND || mode == IRSEND) && n == BIG && strict)
                CHECK(f, "%s of %d bytes, no receive posted: not cancelled", mname[mode], n);
        }
        /* Cancelled, then freed: it may or may not arrive, but only once, intact. */
        MPI_Request r;
        fill(buf, 8, T_FREED);
        post(ISSEND, buf, 8, 1, T_FREED, &r);
        OK(MPI_Cancel(&r));
        OK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Send(cancelled, (int)sizeof cancelled, MPI_BYTE, 1, T_END, MPI_COMM_WORLD));
    } else {
        OK(MPI_Barrier(MPI_COMM_WORLD)); /* the sender cancels meanwhile */
        int want[NCASE], cancelled[NCASE], m;
        /* The list of what must come is in the sentinel, which comes last: read
         * all, then check the order against it. */
        MPI_Status st;
        char *got = malloc((size_t)(NCASE + 1) * BIG);
        int tags[NCASE + 2], counts[NCASE + 2], k = 0;
        CHECK(got != NULL, "out of memory");
        for (;;) {
            CHECK(k < NCASE + 2, "more messages than were sent");
            OK(MPI_Recv(got + (size_t)k * BIG, BIG, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            tags[k] = st.MPI_TAG;
            OK(MPI_Get_count(&st, MPI_BYTE, &counts[k]));
            if (tags[k++] == T_END) break;
        }
        CHECK(counts[k - 1] == (int)sizeof cancelled, "sentinel of %d bytes", counts[k - 1]);
        memcpy(cancelled, got + (size_t)(k - 1) * BIG, sizeof cancelled);
        m = 0;
        for (int c = 0; c < NCASE; c++)
            if (!cancelled[c]) want[m++] = c;
        /* Exactly the cases not cancelled, in order, each intact. */
        int w = 0, freed_seen = 0;
        char *ref = malloc(BIG);
        CHECK(ref != NULL, "out of memory");
        for (int i = 0; i < k - 1; i++) {
            if (tags[i] == T_FREED && !freed_seen) {
                freed_seen = 1;
            } else {
                CHECK(w < m, "tag %d came, but every message not cancelled already had", tags[i]);
                CHECK(tags[i] == want[w], "tag %d came where tag %d (%s of %d bytes) was due",
                      tags[i], want[w], mname[want[w] % NMODES], case_size(want[w]));
                w++;
            }
            CHECK(counts[i] == case_size(tags[i]), "tag %d: %d bytes, want %d", tags[i], counts[i],
                  case_size(tags[i]));
            fill(ref, counts[i], tags[i]);
            CHECK(!memcmp(got + (size_t)i * BIG, ref, (size_t)counts[i]), "tag %d: data differ",
                  tags[i]);
        }
        CHECK(w == m, "%d messages not cancelled, %d came (next due: tag %d)", m, w,
              w < m ? want[w] : -1);
        free(ref);
        free(got);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Phase B (strict): the receiver holds at most 64 KiB of unexpected messages
 * and then leaves the rest in the channel, so the sender's sends end up queued
 * for credits; those are cancelled at once, whatever their mode and size,
 * except a buffered send. (A CANCEL on the wire would wait behind the refused
 * messages like any other: the test only cancels sends that are queued.) */
static void phase_b(int me, char *buf)
{
    if (me == 0) {
        int k = 0;
        MPI_Request r;
        for (;; k++) {
            CHECK(k < 1000000, "no send was ever queued for credits");
            fill(buf, 8, T_FILLER + k);
            OK(MPI_Isend(buf, 8, MPI_BYTE, 1, T_FILLER + k, MPI_COMM_WORLD, &r));
            int done = 0;
            OK(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
            if (!done) break; /* queued: the receiver refuses what lies ahead of it */
        }
        /* r is queued and nothing has progressed since: what is posted now
         * queues behind it (a buffered send too, but that one is complete once
         * copied and goes out later). Cancel all, then complete all. */
        MPI_Request q[5] = {r};
        char sbuf[8], ibuf[8];
        fill(sbuf, 8, T_FILLER + k + 1);
        fill(ibuf, 8, T_IB);
        post(ISSEND, sbuf, 8, 1, T_FILLER + k + 1, &q[1]);
        post(ISEND, buf, BIG, 1, T_FILLER + k + 2, &q[2]);
        post(IBSEND, ibuf, 8, 1, T_IB, &q[3]);
        post(IRSEND, buf, BIG, 1, T_FILLER + k + 3, &q[4]);
        for (int i = 4; i >= 0; i--) OK(MPI_Cancel(&q[i]));
        static const char *const what[5] = {"MPI_Isend of 8 bytes", "MPI_Issend of 8 bytes",
                                            "MPI_Isend of 256 KiB", "MPI_Ibsend of 8 bytes",
                                            "MPI_Irsend of 256 KiB"};
        for (int i = 0; i < 5; i++) {
            int f = finish(&q[i], i);
            CHECK(f == (i != 3), "%s queued for credits: MPI_Test_cancelled says %d", what[i], f);
        }
        OK(MPI_Barrier(MPI_COMM_WORLD)); /* not a message: the channel is full */
        OK(MPI_Send(&k, 1, MPI_INT, 1, T_END_B, MPI_COMM_WORLD));
        printf("cancel: %d messages filled the channel; the queued sends were cancelled\n", k);
    } else {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        /* The fillers come in order, then the sentinel; a cancelled send never. */
        char *rbuf = malloc(BIG);
        CHECK(rbuf != NULL, "out of memory");
        int n = 0, k = -1, ib_at = -1;
        for (;;) {
            MPI_Status st;
            OK(MPI_Recv(rbuf, BIG, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int count;
            OK(MPI_Get_count(&st, MPI_BYTE, &count));
            if (st.MPI_TAG == T_END_B) {
                CHECK(count == (int)sizeof k, "sentinel of %d bytes", count);
                memcpy(&k, rbuf, sizeof k);
                break;
            }
            if (st.MPI_TAG == T_IB) {
                CHECK(ib_at < 0, "the buffered send came twice");
                ib_at = n;
                CHECK(count == 8, "the buffered send has %d bytes", count);
                fill(buf, 8, T_IB);
                CHECK(!memcmp(rbuf, buf, 8), "the buffered send: data differ");
                continue;
            }
            CHECK(ib_at < 0, "filler %d came after the buffered send queued behind it", n);
            CHECK(st.MPI_TAG == T_FILLER + n, "got tag %d where filler %d was due", st.MPI_TAG, n);
            CHECK(count == 8, "filler %d has %d bytes", n, count);
            fill(buf, 8, T_FILLER + n);
            CHECK(!memcmp(rbuf, buf, 8), "filler %d: data differ", n);
            n++;
        }
        CHECK(n == k, "%d fillers came, %d were sent (a cancelled send came through?)", n, k);
        CHECK(ib_at == k, "the buffered send queued behind the fillers came at %d", ib_at);
        free(rbuf);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np == 2, "needs 2 ranks, has %d", np);
    bool strict = argc > 1 && !strcmp(argv[1], "strict");
    char *buf = malloc(BIG);
    CHECK(buf != NULL, "out of memory");
    static char bsend_space[2 * BIG + 8 * MPI_BSEND_OVERHEAD];
    OK(MPI_Buffer_attach(bsend_space, sizeof bsend_space));

    phase_a(me, strict, buf);
    if (strict) phase_b(me, buf);

    /* To oneself: a synchronous send nothing matches is cancelled; an eager
     * one has been delivered and is received. */
    MPI_Request r;
    long v = 7, w = 0;
    OK(MPI_Issend(&v, 1, MPI_LONG, me, 300, MPI_COMM_WORLD, &r));
    OK(MPI_Cancel(&r));
    CHECK(finish(&r, 0), "MPI_Issend to oneself was not cancelled");
    OK(MPI_Isend(&v, 1, MPI_LONG, me, 301, MPI_COMM_WORLD, &r));
    OK(MPI_Cancel(&r));
    CHECK(!finish(&r, 1), "MPI_Isend of 8 bytes to oneself (delivered) was cancelled");
    int flag = 1;
    OK(MPI_Iprobe(me, 300, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "the cancelled synchronous send to oneself can still be received");
    OK(MPI_Recv(&w, 1, MPI_LONG, me, 301, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(w == 7, "message to oneself: %ld", w);

    /* A receive cancelled before any message: the peer sends only after the
     * barrier, and its message goes to the next receive. */
    int peer = 1 - me;
    OK(MPI_Irecv(&w, 1, MPI_LONG, peer, 200, MPI_COMM_WORLD, &r));
    OK(MPI_Cancel(&r));
    MPI_Status st;
    OK(MPI_Wait(&r, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "an unmatched receive was not cancelled");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    v = 4242 + me;
    OK(MPI_Sendrecv(&v, 1, MPI_LONG, peer, 200, &w, 1, MPI_LONG, peer, 200, MPI_COMM_WORLD, &st));
    CHECK(w == 4242 + peer, "the message after a cancelled receive is %ld", w);

    void *b;
    int bs;
    OK(MPI_Buffer_detach(&b, &bs));
    if (me == 0)
        printf("cancel: outcomes match what the receiver got%s\n", strict ? " (strict)" : "");
    free(buf);
    OK(MPI_Finalize());
    return 0;
}
