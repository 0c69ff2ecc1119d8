/* MPI_THREAD_MULTIPLE: several threads of every rank call MPI at once. Any
 * number of ranks >= 2.
 *
 *   thread_multiple            the stress test below
 *   thread_multiple deadlock   every thread of every rank blocks for good in
 *                              MPI_Recv: the hang watchdog must say deadlock
 *
 * The stress test: MPI_Init_thread provides MPI_THREAD_MULTIPLE (and
 * MPI_Query_thread says so in every thread; MPI_Is_thread_main is true in the
 * main thread only). Each rank runs NT threads at once; thread t of rank r
 *  - exchanges ITERS messages with thread t of its neighbours (to r + 1, from
 *    r - 1) on MPI_COMM_WORLD with a tag of its own, round by round mixing
 *    Isend + blocking Recv, Irecv + Isend + Waitall, Isend + Probe (the count
 *    checked) + Recv, Irecv from MPI_ANY_SOURCE (the source checked) + Issend,
 *    and Irecv + Isend completed by polling MPI_Testall; short messages and
 *    long ones (rendezvous), every payload checked;
 *  - on a communicator of its own (a dup of MPI_COMM_WORLD, one per thread)
 *    runs Allreduce, Bcast (long and short, every root) and Barrier, while the
 *    other threads do the same on theirs; makes and frees communicators
 *    (MPI_Comm_dup, MPI_Comm_split of its own, used at once) while the other
 *    threads do too, so that several context agreements overlap; makes,
 *    commits, uses (a strided send) and frees vector datatypes; and ends with
 *    an MPI_Iallreduce (which starts the progress thread under MULTIPLE).
 * Then the self-send across threads: the main thread of every rank blocks in
 * MPI_Recv, then in MPI_Probe, for messages from itself that a thread which
 * has not called MPI before sends only after sleeping longer than the hang
 * timeout the test runs with (--hang-timeout 1): every rank is blocked in MPI
 * meanwhile, but not every thread, so the watchdog must not call it a
 * deadlock. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcheck.h"

#define NT 4
#define ITERS 400
#define CITERS 60
#define BIG (40000 / (int)sizeof(int)) /* ints: above the eager limit */
#define SELF_TAG 5000

static int me, np;
static MPI_Comm tcomm[NT];

static int val(int src, int t, int it, int i)
{
    return src * 1000003 + t * 100019 + it * 131 + i;
}

static void fill(int *b, int n, int src, int t, int it)
{
    for (int i = 0; i < n; i++) b[i] = val(src, t, it, i);
}

static void expect(const int *b, int n, int src, int t, int it, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(b[i] == val(src, t, it, i), "thread %d round %d %s: element %d is %d, expected %d", t,
              it, what, i, b[i], val(src, t, it, i));
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts)) {
    }
}

/* ---- point-to-point on MPI_COMM_WORLD, a tag per thread ------------------------ */

static void p2p_rounds(int t, int *sb, int *rb)
{
    int to = (me + 1) % np, from = (me + np - 1) % np, tag = 100 + t;
    for (int it = 0; it < ITERS; it++) {
        int n = it % 9 == 4 ? BIG : 1 + (it * 7) % 60;
        fill(sb, n, me, t, it);
        memset(rb, 0xff, (size_t)n * sizeof *rb);
        MPI_Request rq[2];
        MPI_Status st, sts[2];
        int cnt = -1, done = 0;
        switch (it % 5) {
        case 0: /* Isend, blocking Recv */
            OK(MPI_Isend(sb, n, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]));
            OK(MPI_Recv(rb, n, MPI_INT, from, tag, MPI_COMM_WORLD, &st));
            OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
            CHECK(st.MPI_SOURCE == from && st.MPI_TAG == tag, "Recv status %d/%d", st.MPI_SOURCE,
                  st.MPI_TAG);
            break;
        case 1: /* Irecv, Isend, Waitall */
            OK(MPI_Irecv(rb, n, MPI_INT, from, tag, MPI_COMM_WORLD, &rq[0]));
            OK(MPI_Isend(sb, n, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[1]));
            OK(MPI_Waitall(2, rq, sts));
            break;
        case 2: /* Isend, Probe, Recv */
            OK(MPI_Isend(sb, n, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]));
            OK(MPI_Probe(from, tag, MPI_COMM_WORLD, &st));
            OK(MPI_Get_count(&st, MPI_INT, &cnt));
            CHECK(cnt == n && st.MPI_SOURCE == from, "thread %d: probed %d ints from %d", t, cnt,
                  st.MPI_SOURCE);
            OK(MPI_Recv(rb, n, MPI_INT, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
            break;
        case 3: /* Irecv from any source with this thread's tag, Issend */
            OK(MPI_Irecv(rb, n, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &rq[0]));
            OK(MPI_Issend(sb, n, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[1]));
            OK(MPI_Waitall(2, rq, sts));
            CHECK(sts[0].MPI_SOURCE == from, "ANY_SOURCE: from %d", sts[0].MPI_SOURCE);
            break;
        default: /* Irecv, Isend, polled with Testall */
            OK(MPI_Irecv(rb, n, MPI_INT, from, tag, MPI_COMM_WORLD, &rq[0]));
            OK(MPI_Isend(sb, n, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[1]));
            while (!done) OK(MPI_Testall(2, rq, &done, sts));
            break;
        }
        expect(rb, n, from, t, it, "p2p");
    }
}

/* ---- collectives, communicators and datatypes on the thread's own communicator */

static void coll_rounds(int t, int *sb, int *rb)
{
    MPI_Comm c = tcomm[t];
    int to = (me + 1) % np, from = (me + np - 1) % np;
    for (int it = 0; it < CITERS; it++) {
        long x = me * 100 + t + it, sum = -1;
        OK(MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, c));
        long want = 100L * np * (np - 1) / 2 + (long)np * (t + it);
        CHECK(sum == want, "thread %d: Allreduce %ld, expected %ld", t, sum, want);

        int root = it % np, n = it % 4 == 1 ? BIG : 1 + it;
        if (me == root)
            fill(sb, n, root, t, it);
        else
            memset(sb, 0, (size_t)n * sizeof *sb);
        OK(MPI_Bcast(sb, n, MPI_INT, root, c));
        expect(sb, n, root, t, it, "Bcast");
        if (it % 5 == 0) OK(MPI_Barrier(c));

        if (it % 3 == 0) { /* a communicator made and freed while other threads do too */
            MPI_Comm d;
            OK(MPI_Comm_dup(c, &d));
            int r = -1;
            long v = (t + 1) * 100000L + it * 10L + me, vs = -1; /* another thread's: wrong */
            OK(MPI_Comm_rank(d, &r));
            OK(MPI_Allreduce(&v, &vs, 1, MPI_LONG, MPI_SUM, d));
            long vw = np * ((t + 1) * 100000L + it * 10L) + (long)np * (np - 1) / 2;
            CHECK(r == me && vs == vw, "thread %d: dup rank %d sum %ld, expected %ld", t, r, vs,
                  vw);
            OK(MPI_Comm_free(&d));
        }
        if (it % 4 == 2) {
            MPI_Comm s;
            OK(MPI_Comm_split(c, me % 2, -me, &s));
            int sz = -1;
            long one = (t + 1) * 1000L + it, cnt = -1;
            OK(MPI_Comm_size(s, &sz));
            OK(MPI_Allreduce(&one, &cnt, 1, MPI_LONG, MPI_SUM, s));
            CHECK(sz == (np + 1 - me % 2) / 2 && cnt == sz * one,
                  "thread %d: split size %d sum %ld", t, sz, cnt);
            OK(MPI_Comm_free(&s));
        }
        if (it % 2 == 1) { /* a datatype made, used and freed */
            MPI_Datatype v;
            OK(MPI_Type_vector(8, 2, 3, MPI_INT, &v));
            OK(MPI_Type_commit(&v));
            int strided[24], got[16];
            for (int i = 0; i < 24; i++)
                strided[i] = i % 3 < 2 ? val(me, t, it, i / 3 * 2 + i % 3) : -1;
            MPI_Request r;
            OK(MPI_Isend(strided, 1, v, to, 7, c, &r));
            OK(MPI_Recv(got, 16, MPI_INT, from, 7, c, MPI_STATUS_IGNORE));
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            OK(MPI_Type_free(&v));
            expect(got, 16, from, t, it, "vector");
        }
    }
    MPI_Request r;
    long x = t + 1, sum = 0;
    OK(MPI_Iallreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, c, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(sum == (long)np * (t + 1), "thread %d: Iallreduce %ld", t, sum);
    (void)rb;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg, flag = -1, level = -1;
    OK(MPI_Is_thread_main(&flag));
    CHECK(!flag, "MPI_Is_thread_main is true in thread %d", t);
    OK(MPI_Query_thread(&level));
    CHECK(level == MPI_THREAD_MULTIPLE, "Query_thread %d in thread %d", level, t);
    int *sb = malloc(BIG * sizeof *sb), *rb = malloc(BIG * sizeof *rb);
    CHECK(sb && rb, "out of memory");
    p2p_rounds(t, sb, rb);
    coll_rounds(t, sb, rb);
    free(sb);
    free(rb);
    return NULL;
}

/* ---- the self-send across threads --------------------------------------------- */

static void *late_sender(void *arg)
{
    (void)arg;
    sleep_ms(1500); /* longer than the hang timeout: the main thread waits meanwhile */
    int a = val(me, 9, 1, 0);
    OK(MPI_Send(&a, 1, MPI_INT, me, SELF_TAG, MPI_COMM_WORLD));
    sleep_ms(1200);
    int *big = malloc(BIG * sizeof *big);
    CHECK(big != NULL, "out of memory");
    fill(big, BIG, me, 9, 2);
    OK(MPI_Send(big, BIG, MPI_INT, me, SELF_TAG + 1, MPI_COMM_WORLD));
    free(big);
    return NULL;
}

static void self_across_threads(void)
{
    pthread_t th;
    CHECK(pthread_create(&th, NULL, late_sender, NULL) == 0, "pthread_create");
    int a = -1, cnt = -1;
    MPI_Status st;
    OK(MPI_Recv(&a, 1, MPI_INT, me, SELF_TAG, MPI_COMM_WORLD, &st));
    CHECK(a == val(me, 9, 1, 0) && st.MPI_SOURCE == me, "self message %d from %d", a,
          st.MPI_SOURCE);
    OK(MPI_Probe(MPI_ANY_SOURCE, SELF_TAG + 1, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == BIG && st.MPI_SOURCE == me, "probed %d ints from %d", cnt, st.MPI_SOURCE);
    int *big = malloc(BIG * sizeof *big);
    CHECK(big != NULL, "out of memory");
    OK(MPI_Recv(big, BIG, MPI_INT, me, SELF_TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    expect(big, BIG, me, 9, 2, "self");
    free(big);
    CHECK(pthread_join(th, NULL) == 0, "pthread_join");
}

/* ---- a real deadlock: every thread blocked for good ------------------------------- */

static void *stuck(void *arg)
{
    int x;
    OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 998, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    (void)arg;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, flag = -1;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d, asked MPI_THREAD_MULTIPLE", provided);
    OK(MPI_Query_thread(&flag));
    CHECK(flag == MPI_THREAD_MULTIPLE, "Query_thread %d", flag);
    OK(MPI_Is_thread_main(&flag));
    CHECK(flag, "MPI_Is_thread_main is false in the main thread");
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(np >= 2, "needs 2 ranks");

    if (argc > 1 && !strcmp(argv[1], "deadlock")) {
        pthread_t th;
        CHECK(pthread_create(&th, NULL, stuck, NULL) == 0, "pthread_create");
        int x;
        OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(0, "a message came that nobody sent");
    }

    for (int t = 0; t < NT; t++) OK(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NT; t++) CHECK(pthread_join(th[t], NULL) == 0, "pthread_join");
    for (int t = 0; t < NT; t++) OK(MPI_Comm_free(&tcomm[t]));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    self_across_threads();

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("thread_multiple: %d ranks x %d threads OK\n", np, NT);
    OK(MPI_Finalize());
    return 0;
}
