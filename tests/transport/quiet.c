/* A rank that sleeps while its hot TCP connection is quiet (out of epoll's
 * EPOLLIN: src/transport/tcp.c, quiet_set) is woken by the next message on it.
 * Two ranks ping-pong until the connection is quiet, then in turn one computes
 * (sleeps 700 ms, past its peer's spin and yield) and sends while the other
 * waits in MPI_Recv, asleep in poll(2) on the transport's epoll set. Run with
 * COURIER_TRANSPORTS=tcp and COURIER_NAP_MS high: then only the message can
 * wake the waiting rank, and a wake-up lost to a quiet connection hangs the
 * job (the launcher's --timeout ends it) instead of costing a nap.
 * The waiting rank must also sleep, not spin: its CPU time over its waits
 * (getrusage) stays under a third of their wall time (a writable socket whose
 * EPOLLOUT was re-reported by every re-arm before a sleep woke the epoll set
 * at once: 1.84 s of CPU over 2.10 s of waits; asleep, 0.003 s).
 * Invariant: every message carries the round it belongs to and is checked. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#include "waitcost.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "quiet: run with 2 ranks (-n 2), not %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank, bad = 0;
    long v = 0;
    double wall = 0, used = 0;        /* over this rank's waits in MPI_Recv */
    for (long i = 0; i < 2000; i++) { /* the connection turns quiet */
        if (rank == 0) {
            MPI_Send(&i, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&v, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&v, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD);
        }
        bad += v != i;
    }
    for (long i = 0; i < 6; i++) { /* even rounds rank 0 sleeps in MPI_Recv, odd ones rank 1 */
        if (rank == (int)(i & 1)) {
            double t0 = now(), c0 = usage(NULL);
            MPI_Recv(&v, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            wall += now() - t0;
            used += usage(NULL) - c0;
            bad += v != i;
        } else {
            usleep(700000);
            MPI_Send(&i, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD);
        }
    }
    if (used > wall / 3) {
        printf("quiet: rank %d used %.2f s of CPU while waiting %.2f s in MPI_Recv (asleep: ~0)\n",
               rank, used, wall);
        bad++;
    }
    return waitcost_end("quiet", bad);
}
