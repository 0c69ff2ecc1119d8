/* Point-to-point conformance: every send mode, receives, probes, every
 * wait/test form, cancel, statuses, PROC_NULL, ANY_SOURCE ordering, Ssend
 * completion semantics. Needs at least 2 ranks. */
#include <string.h>

#include "mcheck.h"

static int me, np;

static void fill(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++) b[i] = seed * 1000003 + i;
}
static void expect(const int *b, int n, int seed)
{
    for (int i = 0; i < n; i++) CHECK(b[i] == seed * 1000003 + i, "element %d of %d", i, seed);
}

static void modes(void)
{
    static int buf[70000];
    int sizes[] = {0, 1, 100, 4096, 70000};
    for (int k = 0; k < 5; k++) {
        int n = sizes[k];
        if (me == 0) {
            fill(buf, n, k);
            OK(MPI_Send(buf, n, MPI_INT, 1, 10 + k, MPI_COMM_WORLD));
            OK(MPI_Ssend(buf, n, MPI_INT, 1, 20 + k, MPI_COMM_WORLD));
            OK(MPI_Rsend(buf, n, MPI_INT, 1, 30 + k, MPI_COMM_WORLD));
            int bsize = n * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
            void *bb = malloc((size_t)bsize), *back;
            OK(MPI_Buffer_attach(bb, bsize));
            OK(MPI_Bsend(buf, n, MPI_INT, 1, 40 + k, MPI_COMM_WORLD));
            OK(MPI_Buffer_detach(&back, &bsize));
            CHECK(back == bb, "detach returns the attached buffer");
            free(bb);
        } else if (me == 1) {
            for (int m = 1; m <= 4; m++) {
                MPI_Status st;
                memset(buf, 0, sizeof buf);
                OK(MPI_Recv(buf, 70000, MPI_INT, 0, m * 10 + k, MPI_COMM_WORLD, &st));
                int cnt;
                OK(MPI_Get_count(&st, MPI_INT, &cnt));
                CHECK(cnt == n && st.MPI_SOURCE == 0 && st.MPI_TAG == m * 10 + k,
                      "count %d source %d tag %d", cnt, st.MPI_SOURCE, st.MPI_TAG);
                expect(buf, n, k);
            }
        }
    }
}

/* Ssend completes only once the receive matched: rank 1 posts it late. */
static void ssend_semantics(void)
{
    int x = 7, go = 1;
    if (me == 0) {
        for (int size = 1; size <= 100000; size *= 1000) {
            char *b = calloc((size_t)size, 1);
            MPI_Request r;
            int flag = 0;
            OK(MPI_Issend(b, size, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &r));
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < 0.05) {
                OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "Issend of %d bytes completed before the receive was posted", size);
            }
            OK(MPI_Send(&go, 1, MPI_INT, 1, 6, MPI_COMM_WORLD));
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(r == MPI_REQUEST_NULL, "Wait sets the request to MPI_REQUEST_NULL");
            free(b);
        }
        /* A standard short send completes without the receiver (eager). */
        OK(MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
    } else if (me == 1) {
        for (int size = 1; size <= 100000; size *= 1000) {
            char *b = malloc((size_t)size);
            OK(MPI_Recv(&go, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Recv(b, size, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            free(b);
        }
        OK(MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

/* ANY_SOURCE / ANY_TAG: messages from one source arrive in order. Everyone
 * leaves through a barrier: a sender done early must not send the next
 * part's messages while rank 0 still receives from any source (it would take
 * them: that was the test's race, seen across hosts). */
static void any_source_order(void)
{
    const int n = 50;
    if (me != 0) {
        for (int i = 0; i < n; i++) OK(MPI_Send(&i, 1, MPI_INT, 0, i % 3, MPI_COMM_WORLD));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        return;
    }
    int *next = calloc((size_t)np, sizeof *next);
    for (int k = 0; k < n * (np - 1); k++) {
        int v;
        MPI_Status st;
        OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE >= 1 && st.MPI_SOURCE < np, "source %d", st.MPI_SOURCE);
        CHECK(v == next[st.MPI_SOURCE], "from %d got %d, expected %d (order)", st.MPI_SOURCE, v,
              next[st.MPI_SOURCE]);
        CHECK(st.MPI_TAG == v % 3, "tag %d for %d", st.MPI_TAG, v);
        next[st.MPI_SOURCE]++;
    }
    free(next);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void nonblocking(void)
{
    enum { N = 8 };
    int peer = me ^ 1;
    if (peer >= np) {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        return;
    }
    static int sb[N][1000], rb[N][1000];
    MPI_Request rq[2 * N];
    MPI_Status st[2 * N];
    for (int i = 0; i < N; i++) {
        fill(sb[i], 1000, me * 100 + i);
        OK(MPI_Irecv(rb[i], 1000, MPI_INT, peer, i, MPI_COMM_WORLD, &rq[i]));
    }
    for (int i = 0; i < N; i++)
        OK(MPI_Isend(sb[N - 1 - i], 1000, MPI_INT, peer, N - 1 - i, MPI_COMM_WORLD, &rq[N + i]));
    OK(MPI_Waitall(2 * N, rq, st));
    for (int i = 0; i < N; i++) {
        expect(rb[i], 1000, peer * 100 + i);
        CHECK(st[i].MPI_SOURCE == peer && st[i].MPI_TAG == i, "status %d", i);
        CHECK(rq[i] == MPI_REQUEST_NULL, "request cleared");
    }
    /* Waitany / Waitsome / Testany / Testall / Testsome. */
    for (int i = 0; i < N; i++)
        OK(MPI_Irecv(rb[i], 1000, MPI_INT, peer, 50 + i, MPI_COMM_WORLD, &rq[i]));
    for (int i = 0; i < N; i++) OK(MPI_Send(sb[i], 1000, MPI_INT, peer, 50 + i, MPI_COMM_WORLD));
    int seen = 0, idx, out, ids[N];
    OK(MPI_Waitany(N, rq, &idx, &st[0]));
    CHECK(idx >= 0 && idx < N && st[0].MPI_TAG == 50 + idx, "waitany index %d", idx);
    seen++;
    while (seen < N) {
        OK(MPI_Waitsome(N, rq, &out, ids, st));
        CHECK(out >= 1, "waitsome outcount %d", out);
        for (int k = 0; k < out; k++) CHECK(st[k].MPI_TAG == 50 + ids[k], "waitsome tag");
        seen += out;
    }
    OK(MPI_Waitany(N, rq, &idx, MPI_STATUS_IGNORE));
    CHECK(idx == MPI_UNDEFINED, "waitany on no active requests gives MPI_UNDEFINED");
    OK(MPI_Waitsome(N, rq, &out, ids, MPI_STATUSES_IGNORE));
    CHECK(out == MPI_UNDEFINED, "waitsome on no active requests");
    int flag = 0;
    OK(MPI_Irecv(rb[0], 1000, MPI_INT, peer, 70, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Irecv(rb[1], 1000, MPI_INT, peer, 71, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "testall before any send");
    int tok = 0, tok2;
    OK(MPI_Sendrecv(&tok, 1, MPI_INT, peer, 69, &tok2, 1, MPI_INT, peer, 69, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    OK(MPI_Send(sb[0], 1000, MPI_INT, peer, 70, MPI_COMM_WORLD));
    OK(MPI_Send(sb[1], 1000, MPI_INT, peer, 71, MPI_COMM_WORLD));
    int got = 0;
    while (got < 2) {
        OK(MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE));
        if (flag && idx != MPI_UNDEFINED) got++;
        if (flag && idx == MPI_UNDEFINED) break;
    }
    CHECK(got == 2, "testany completed %d", got);
    OK(MPI_Testsome(2, rq, &out, ids, MPI_STATUSES_IGNORE));
    CHECK(out == MPI_UNDEFINED, "testsome with none active");
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void probes_cancel_null(void)
{
    MPI_Status st;
    int flag, n;
    if (me == 0) {
        double d[3] = {1, 2, 3};
        OK(MPI_Send(d, 3, MPI_DOUBLE, 1, 99, MPI_COMM_WORLD));
    } else if (me == 1) {
        OK(MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_TAG == 99 && st.MPI_SOURCE == 0, "probe status");
        OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
        CHECK(n == 3, "probe count %d", n);
        OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 6, "count in ints %d", n);
        OK(MPI_Get_elements(&st, MPI_DOUBLE, &n));
        CHECK(n == 3, "elements %d", n);
        OK(MPI_Iprobe(0, 99, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag, "iprobe sees it");
        double d[3];
        OK(MPI_Recv(d, 3, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, &st));
        CHECK(d[2] == 3, "data");
        OK(MPI_Iprobe(0, 99, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "nothing more");
    }
    /* Cancel a receive nothing matches. */
    MPI_Request r;
    int v;
    OK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &r));
    OK(MPI_Cancel(&r));
    OK(MPI_Wait(&r, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "receive was cancelled");
    /* PROC_NULL: completes at once, status says so. */
    OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    OK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "proc null status");
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 0, "proc null count");
    OK(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    /* Request_free on an active send: the message still arrives. */
    if (me < 2) {
        int w = 42, z = 0;
        if (me == 0) {
            OK(MPI_Isend(&w, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &r));
            OK(MPI_Request_free(&r));
            CHECK(r == MPI_REQUEST_NULL, "freed");
        } else {
            OK(MPI_Recv(&z, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(z == 42, "freed send arrived");
        }
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void sendrecv(void)
{
    int right = (me + 1) % np, left = (me - 1 + np) % np;
    int s[4] = {me, me, me, me}, r[4] = {-1};
    MPI_Status st;
    OK(MPI_Sendrecv(s, 4, MPI_INT, right, 8, r, 4, MPI_INT, left, 8, MPI_COMM_WORLD, &st));
    CHECK(r[3] == left && st.MPI_SOURCE == left, "sendrecv");
    OK(MPI_Sendrecv_replace(s, 4, MPI_INT, right, 9, left, 9, MPI_COMM_WORLD, &st));
    CHECK(s[0] == left && s[3] == left, "sendrecv_replace");
    /* Self messages. */
    int a = 5, b = 0;
    OK(MPI_Sendrecv(&a, 1, MPI_INT, me, 1, &b, 1, MPI_INT, me, 1, MPI_COMM_WORLD, &st));
    CHECK(b == 5, "self sendrecv");
    OK(MPI_Sendrecv(&a, 1, MPI_INT, 0, 1, &b, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &st));
    /* Every blocking mode to this rank itself with the receive posted first
     * (a synchronous send's reply comes back inside its own send). */
    static int out[70000], in[70000];
    int sizes[] = {0, 1, 100, 70000};
    for (int k = 0; k < 4; k++)
        for (int mode = 0; mode < 3; mode++) {
            int n = sizes[k];
            MPI_Request q;
            fill(out, n, 10 * k + mode);
            memset(in, 0, sizeof in);
            OK(MPI_Irecv(in, n, MPI_INT, me, 50 + mode, MPI_COMM_WORLD, &q));
            if (mode == 0) OK(MPI_Send(out, n, MPI_INT, me, 50, MPI_COMM_WORLD));
            if (mode == 1) OK(MPI_Ssend(out, n, MPI_INT, me, 51, MPI_COMM_WORLD));
            if (mode == 2) OK(MPI_Rsend(out, n, MPI_INT, me, 52, MPI_COMM_WORLD));
            OK(MPI_Wait(&q, &st));
            CHECK(st.MPI_SOURCE == me && st.MPI_TAG == 50 + mode, "self mode %d", mode);
            expect(in, n, 10 * k + mode);
        }
}

int main(int argc, char **argv)
{
    int provided, flag;
    OK(MPI_Initialized(&flag));
    CHECK(!flag, "not initialized yet");
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    /* courier gives MULTIPLE; under courier run --sim (its segment's descriptor
     * in the environment) FUNNELED, a simulated rank being one sequence of calls */
    int want = getenv("COURIER_SIM_FD") ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE;
    CHECK(provided == want, "provided %d: courier gives %d", provided, want);
    OK(MPI_Query_thread(&flag));
    CHECK(flag == provided, "query_thread");
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(np >= 2, "needs 2 ranks");
    char name[MPI_MAX_PROCESSOR_NAME];
    int len, v, sv;
    OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && (int)strlen(name) == len, "processor name");
    OK(MPI_Get_version(&v, &sv));
    CHECK(v == 5 && sv == 0, "version");
    CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 0.01, "wtick");
    double t0 = MPI_Wtime();
    modes();
    ssend_semantics();
    any_source_order();
    nonblocking();
    probes_cancel_null();
    sendrecv();
    CHECK(MPI_Wtime() >= t0, "wtime");
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag));
    CHECK(flag, "finalized");
    if (me == 0) printf("mpi p2p: ok on %d ranks\n", np);
    return 0;
}
