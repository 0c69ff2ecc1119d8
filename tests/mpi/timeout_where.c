/* A job that only --timeout ends must say where its ranks are (tests/mpi/CMakeLists.txt
 * checks the lines): rank 0 waits in MPI_Recv for rank 1, which sleeps outside MPI.
 *   timeout_where recv|thread
 * (thread: rank 0's MPI_Recv is in a thread of its own while its main thread sleeps,
 * so the rank runs: the hang watchdog must not call it blocked, and the report names
 * the thread's wait) */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "mcheck.h"

static void *waiter(void *arg)
{
    int x = 0;
    MPI_Recv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return arg;
}

int main(int argc, char **argv)
{
    int provided = 0, me = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *m = argc > 1 ? argv[1] : "";
    if (me == 0 && !strcmp(m, "thread")) {
        pthread_t t;
        CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
        CHECK(!pthread_create(&t, NULL, waiter, NULL), "pthread_create");
        for (;;) sleep(1); /* until --timeout ends the job */
    } else if (me == 0) {
        waiter(NULL);
    } else {
        for (;;) sleep(1);
    }
    MPI_Finalize();
    return 0;
}
