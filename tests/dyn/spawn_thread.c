/* MPI_Comm_spawn from a thread that ends before the spawned job does (as
 * mpi4py.futures' pools spawn from their manager thread): each of 2 ranks
 * spawns one worker from a thread of its own and joins the thread; the
 * worker waits 1 s, so that it outlives the thread, then sends 42 + its
 * parent's rank and disconnects. The new job ended with the thread before
 * (the launcher's death signal followed the thread), and its SIGTERM took the
 * parent rank too. Rank 0 prints "spawn thread ok". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct spawn_arg {
    char *prog;
    MPI_Comm inter;
    int rc;
};

static void *spawner(void *p)
{
    struct spawn_arg *a = p;
    char *wargv[] = {"worker", NULL};
    a->rc = MPI_Comm_spawn(a->prog, wargv, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &a->inter,
                           MPI_ERRCODES_IGNORE);
    return NULL; /* the thread ends here; the worker must not */
}

int main(int argc, char **argv)
{
    int provided, me;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        int from = -1;
        MPI_Recv(&from, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
        sleep(1);
        int x = 42 + from;
        MPI_Send(&x, 1, MPI_INT, 0, 2, parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "FAIL: thread level %d\n", provided);
        return 1;
    }
    struct spawn_arg a = {argv[0], MPI_COMM_NULL, -1};
    pthread_t t;
    if (pthread_create(&t, NULL, spawner, &a) || pthread_join(t, NULL) || a.rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL rank %d: spawn from a thread: %d\n", me, a.rc);
        return 1;
    }
    int x = -1;
    MPI_Send(&me, 1, MPI_INT, 0, 1, a.inter);
    MPI_Recv(&x, 1, MPI_INT, 0, 2, a.inter, MPI_STATUS_IGNORE);
    if (x != 42 + me) {
        fprintf(stderr, "FAIL rank %d: the worker sent %d\n", me, x);
        return 1;
    }
    MPI_Comm_disconnect(&a.inter);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("spawn thread ok\n");
    MPI_Finalize();
    return 0;
}
