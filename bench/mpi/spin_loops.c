/* Ping-pong between pairs of ranks (0-1, 2-3, ...) where the waiting side
 * polls in a loop instead of blocking (a benchmark, not a test: its figures
 * depend on the machine and its load). Each mode is a loop real programs write:
 *   getstatus  MPI_Request_get_status on an MPI_Irecv
 *   parrived   MPI_Parrived on a partitioned receive (MPI 4; skipped before)
 *   iprobe     MPI_Iprobe, then MPI_Recv
 *   wintest    MPI_Win_test on a post/start/complete/wait epoch
 *   shmflag    a flag in an MPI_Win_allocate_shared window read after MPI_Win_sync
 *   getflush   MPI_Get + MPI_Win_flush of a flag in a lock_all epoch
 *   lockget    MPI_Win_lock, MPI_Get, MPI_Win_unlock of a flag
 * With more ranks than cores the polling rank must give its core to the one
 * it waits for (courier: wait.c's poll_yield and cr_poll_spun; Open MPI yields
 * when idle). Rank 0 prints the time per round trip and its polls.
 * Plain MPI: builds with courier-cc, Open MPI's and MPICH's mpicc alike.
 *   courier-cc -O2 bench/mpi/spin_loops.c -o spin_loops
 *   courier run -n 4 ./spin_loops MODE [iterations] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if MPI_VERSION < 4 /* no partitioned communication: parrived is refused */
#define MPI_Precv_init(...) MPI_Abort(MPI_COMM_WORLD, 3)
#define MPI_Psend_init(...) MPI_Abort(MPI_COMM_WORLD, 3)
#define MPI_Pready(...) 0
#define MPI_Parrived(...) 0
#endif
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *mode = argc > 1 ? argv[1] : "getstatus";
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    if (n % 2) {
        if (me == 0) fprintf(stderr, "spin_loops: run an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = me ^ 1;
    long polls = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (!strcmp(mode, "getstatus") || !strcmp(mode, "parrived")) {
        for (int i = 0; i < iters; i++) {
            int x = i, y;
            MPI_Request r;
            int part = !strcmp(mode, "parrived");
            if (part)
                MPI_Precv_init(&y, 1, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
            else
                MPI_Irecv(&y, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r);
            if (part) MPI_Start(&r);
            MPI_Request s;
            if (part) {
                MPI_Psend_init(&x, 1, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
                MPI_Start(&s);
                MPI_Pready(0, s);
            } else
                MPI_Isend(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &s);
            int f = 0;
            while (!f) {
                if (part)
                    MPI_Parrived(r, 0, &f);
                else
                    MPI_Request_get_status(r, &f, MPI_STATUS_IGNORE);
                polls++;
            }
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Wait(&s, MPI_STATUS_IGNORE);
            if (part) {
                MPI_Request_free(&r);
                MPI_Request_free(&s);
            }
            if (y != i) {
                printf("bad\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    } else if (!strcmp(mode, "wintest")) {
        int buf = 0;
        MPI_Win w;
        MPI_Win_create(&buf, sizeof buf, sizeof buf, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
        MPI_Group wg, pg;
        MPI_Win_get_group(w, &wg);
        MPI_Group_incl(wg, 1, &peer, &pg);
        for (int i = 0; i < iters; i++) {
            /* even rank exposes, odd accesses, then swap */
            int expose = (i + me) % 2 == 0;
            if (expose) {
                MPI_Win_post(pg, 0, w);
                int f = 0;
                while (!f) {
                    MPI_Win_test(w, &f);
                    polls++;
                }
            } else {
                MPI_Win_start(pg, 0, w);
                int v = i;
                MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, w);
                MPI_Win_complete(w);
            }
        }
        MPI_Win_free(&w);
    } else if (!strcmp(mode, "shmflag") || !strcmp(mode, "getflush")) {
        int sh = !strcmp(mode, "shmflag");
        volatile int *base;
        MPI_Win w;
        if (sh) {
            MPI_Comm node;
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
            MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, (void *)&base,
                                    &w);
        } else
            MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, (void *)&base,
                             &w);
        *base = -1;
        MPI_Win_lock_all(0, w);
        MPI_Barrier(MPI_COMM_WORLD);
        int mypeer = peer;
        volatile int *pb = NULL;
        if (sh) {
            MPI_Aint sz;
            int du; /* world ranks are the node's on one host */
            MPI_Win_shared_query(w, mypeer, &sz, &du, (void *)&pb);
        }
        for (int i = 0; i < iters; i++) {
            int turn = (i % 2) == (me % 2);
            if (turn) {
                int v = i;
                if (sh) {
                    pb[0] = v;
                    MPI_Win_sync(w);
                } else {
                    MPI_Put(&v, 1, MPI_INT, mypeer, 0, 1, MPI_INT, w);
                    MPI_Win_flush(mypeer, w);
                }
            } else {
                for (;;) {
                    int v;
                    if (sh) {
                        MPI_Win_sync(w);
                        v = *base;
                    } else {
                        MPI_Get(&v, 1, MPI_INT, me, 0, 1, MPI_INT, w);
                        MPI_Win_flush(me, w);
                    }
                    polls++;
                    if (v == i) break;
                }
            }
        }
        MPI_Win_unlock_all(w);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_free(&w);
    } else if (!strcmp(mode, "lockget")) {
        int *base;
        MPI_Win w;
        MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, w);
        *base = -1;
        MPI_Win_unlock(me, w);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters; i++) {
            int turn = (i % 2) == (me % 2);
            if (turn) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, w);
                MPI_Put(&i, 1, MPI_INT, peer, 0, 1, MPI_INT, w);
                MPI_Win_unlock(peer, w);
            } else {
                for (;;) {
                    int v;
                    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w);
                    MPI_Get(&v, 1, MPI_INT, me, 0, 1, MPI_INT, w);
                    MPI_Win_unlock(me, w);
                    polls++;
                    if (v == i) break;
                }
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_free(&w);
    } else if (!strcmp(mode, "iprobe")) {
        for (int i = 0; i < iters; i++) {
            int turn = (i % 2) == (me % 2), x = i, f = 0;
            if (turn)
                MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
            else {
                while (!f) {
                    MPI_Iprobe(peer, 0, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
                    polls++;
                }
                MPI_Recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    } else {
        if (me == 0) fprintf(stderr, "spin_loops: unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double t = MPI_Wtime() - t0;
    double tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s: %d iters, %.1f us/iter, rank0 polls %ld\n", mode, iters, tmax / iters * 1e6,
               polls);
    MPI_Finalize();
    return 0;
}
