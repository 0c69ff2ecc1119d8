/* Several threads of a rank blocked at once sleep (MPI_THREAD_MULTIPLE). Each
 * round, NT threads of the waiting rank block in MPI_Recv, each for its own
 * tag, while the other rank computes (sleeps 300 ms) and then sends the NT
 * messages 150 ms apart: each message ends one thread's wait, the others sleep
 * on. Ranks take turns. Two regressions:
 *  - a thread's completion of another's receive wakes the threads' poll(2)
 *    through the rank's eventfd, which only the last thread to leave poll(2)
 *    reads; the threads went back into poll(2) before the others had left, so
 *    it stayed set and every poll returned at once: over tcp the waiting rank
 *    used 1.2-1.5 s of CPU over 2.7 s of waits (asleep: ~0);
 *  - a thread that read the hot TCP connection directly took it out of the
 *    epoll set (quiet) while another thread slept on that set, which then
 *    missed its message until its nap ended: with COURIER_NAP_MS an hour, as
 *    here, the job hung until --timeout.
 * Checked over the waiting rank's rounds (getrusage, all its threads): CPU time
 * under a third of the wall time, a ratio that load beside the job does not
 * raise. Invariant: every message carries its round and thread, checked. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "waitcost.h"

#define NT 8
#define ROUNDS 4

static int bad;
static pthread_mutex_t bad_lock = PTHREAD_MUTEX_INITIALIZER;
static int peer, round_now;

static void *waiter(void *arg)
{
    int t = (int)(long)arg;
    int v[2] = {-1, -1};
    MPI_Recv(v, 2, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (v[0] != round_now || v[1] != t) {
        pthread_mutex_lock(&bad_lock);
        bad++;
        pthread_mutex_unlock(&bad_lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr,
                    "threads_asleep: run with 2 ranks (-n 2), not %d, under "
                    "MPI_THREAD_MULTIPLE\n",
                    size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer = 1 - rank;
    double wall = 0, used = 0; /* over this rank's waiting rounds */
    for (int r = 0; r < ROUNDS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == r % 2) {
            round_now = r;
            pthread_t th[NT];
            double t0 = now(), c0 = usage(NULL);
            for (long t = 0; t < NT; t++) pthread_create(&th[t], NULL, waiter, (void *)t);
            for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
            wall += now() - t0;
            used += usage(NULL) - c0;
        } else {
            usleep(300000);
            for (int t = 0; t < NT; t++) {
                int v[2] = {r, t};
                MPI_Send(v, 2, MPI_INT, peer, t, MPI_COMM_WORLD);
                usleep(150000);
            }
        }
    }
    if (used > wall / 3) {
        printf("threads_asleep: rank %d used %.2f s of CPU while %d threads waited %.2f s in "
               "MPI_Recv (asleep: ~0)\n",
               rank, used, NT, wall);
        bad++;
    }
    return waitcost_end("threads_asleep", bad);
}
