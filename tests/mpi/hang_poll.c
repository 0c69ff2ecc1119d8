/* Ranks that wait by polling (MPI_Test and its kin, MPI_Iprobe in a loop) for
 * what never comes: the watchdog must report them as it reports ranks blocked in
 * a call (tests/mpi/CMakeLists.txt checks the lines), and must not take for a
 * hang a rank whose loop computes between its polls, or whose other threads
 * compute while it polls.
 *   hang_poll test|testany|testall|testsome|iprobe|ibarrier|blocked|wintest|parrived
 *                                                                     (deadlocks)
 *   hang_poll work|thread                                             (finish)
 * (test, testany, testall, testsome: each rank polls a receive the other never
 * sends; iprobe: rank 0 probes for any message, rank 1 polls MPI_Test;
 * ibarrier: rank 1 polls a barrier rank 0 never enters, rank 0 polls MPI_Iprobe;
 * blocked: rank 0 polls, rank 1 waits in MPI_Recv; wintest: rank 0 polls
 * MPI_Win_test for an access epoch rank 1 never opens, rank 1 waits in
 * MPI_Recv; parrived: rank 0 polls MPI_Parrived for a partition rank 1 never
 * sends, rank 1 waits in MPI_Recv; work: rank 0 computes for 3 s
 * in steps of 0.2 ms with a poll between each, then sends, while rank 1 polls;
 * thread: rank 0's second thread computes for 3 s while its main thread polls,
 * then it sends, while rank 1 polls.) */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "mcheck.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Compute (not sleep) for s seconds of the clock. */
static void compute(double s)
{
    volatile double x = 1;
    for (double end = now_s() + s; now_s() < end;)
        for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 1e-9;
}

static atomic_int computed;

static void *computer(void *arg)
{
    (void)arg;
    compute(3);
    atomic_store(&computed, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    int provided;
    MPI_Init_thread(&argc, &argv, !strcmp(m, "thread") ? MPI_THREAD_FUNNELED : MPI_THREAD_SINGLE,
                    &provided);
    int me, x = 0, flag = 0, idx, n, any[2];
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int peer = 1 - me;
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (!strcmp(m, "test") || !strcmp(m, "testany") || !strcmp(m, "testall") ||
        !strcmp(m, "testsome")) {
        OK(MPI_Irecv(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r[1]));
        while (!flag) {
            if (m[4] == '\0')
                OK(MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE));
            else if (m[4] == 'a' && m[5] == 'n')
                OK(MPI_Testany(2, r, &idx, &flag, MPI_STATUS_IGNORE));
            else if (m[4] == 'a')
                OK(MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE));
            else {
                OK(MPI_Testsome(2, r, &n, any, MPI_STATUSES_IGNORE));
                flag = n > 0;
            }
        }
    } else if (!strcmp(m, "iprobe")) {
        if (me == 0) {
            while (!flag)
                OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                              MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Irecv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &r[0]));
            while (!flag) OK(MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE));
        }
    } else if (!strcmp(m, "ibarrier")) {
        if (me == 1) {
            OK(MPI_Ibarrier(MPI_COMM_WORLD, &r[0]));
            while (!flag) OK(MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE));
        } else {
            while (!flag) OK(MPI_Iprobe(1, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        }
    } else if (!strcmp(m, "blocked")) {
        OK(MPI_Irecv(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r[0]));
        if (me == 0)
            while (!flag) OK(MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE));
        else
            OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    } else if (!strcmp(m, "wintest")) {
        MPI_Win w;
        MPI_Group wg, pg;
        OK(MPI_Win_create(&x, sizeof x, sizeof x, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
        OK(MPI_Win_get_group(w, &wg));
        OK(MPI_Group_incl(wg, 1, &peer, &pg));
        if (me == 0) {
            OK(MPI_Win_post(pg, 0, w));
            while (!flag) OK(MPI_Win_test(w, &flag));
        } else {
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    } else if (!strcmp(m, "parrived")) {
        if (me == 0) {
            OK(MPI_Precv_init(&x, 1, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
            OK(MPI_Start(&r[0]));
            while (!flag) OK(MPI_Parrived(r[0], 0, &flag));
        } else {
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    } else if (!strcmp(m, "work") || !strcmp(m, "thread")) {
        if (me == 0) {
            pthread_t t;
            if (m[0] == 'w') {
                for (double end = now_s() + 3; now_s() < end;) {
                    compute(0.0002);
                    OK(MPI_Iprobe(1, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                }
            } else {
                CHECK(provided >= MPI_THREAD_FUNNELED, "thread level %d", provided);
                CHECK(!pthread_create(&t, NULL, computer, NULL), "pthread_create");
                while (!atomic_load(&computed))
                    OK(MPI_Iprobe(1, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                pthread_join(t, NULL);
            }
            x = 42;
            OK(MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        } else {
            OK(MPI_Irecv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &r[0]));
            while (!flag) OK(MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE));
            CHECK(x == 42, "received %d", x);
            printf("%s: a rank polling for 3 s while its peer computes is no hang\n", m);
        }
    } else {
        CHECK(0, "unknown case '%s'", m);
    }
    MPI_Finalize();
    return 0;
}
