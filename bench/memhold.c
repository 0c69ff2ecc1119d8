/* A token ring that holds still so that its memory can be measured
 * (bench/scale-run.sh, with bench/memsample): examples/ring's ring written once
 * and built against courier's NX/2 or, with -DUSE_MPI, any MPI.
 *
 *   memhold READY RELEASE [MAX_SECONDS]
 * Every rank starts, the token goes once around the ring (every rank has sent
 * to its neighbour and received from the other one), a barrier; then rank 0
 * creates the file READY and every rank sleeps, looking every 50 ms for the
 * file RELEASE (at most MAX_SECONDS, default 60): while the ranks hold, none
 * uses a CPU, so a sampler can read every rank's /proc at leisure. Then a
 * second barrier and the end. Exit status 0 when the token came back right. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef USE_MPI
#include <mpi.h>
static int me, np;
static void start(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
}
static void stop(void)
{
    MPI_Finalize();
}
static void send_to(int to, long *v)
{
    MPI_Send(v, 1, MPI_LONG, to, 1, MPI_COMM_WORLD);
}
static void recv_from(int from, long *v)
{
    MPI_Recv(v, 1, MPI_LONG, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
static void barrier(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
}
#else
#include <courier/nx.h>
static int me, np;
static void start(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    me = (int)mynode();
    np = (int)numnodes();
}
static void stop(void) {}
static void send_to(int to, long *v)
{
    csend(1, (char *)v, sizeof *v, to, 0);
}
static void recv_from(int from, long *v)
{
    (void)from;
    crecv(1, (char *)v, sizeof *v);
}
static void barrier(void)
{
    gsync();
}
#endif

int main(int argc, char **argv)
{
    start(&argc, &argv);
    if (argc < 3) {
        if (me == 0) fprintf(stderr, "usage: memhold READY RELEASE [MAX_SECONDS]\n");
        stop();
        return 2;
    }
    double max = argc > 3 ? atof(argv[3]) : 60;
    long token = 0;
    if (np > 1) {
        if (me == 0) {
            send_to(1, &token);
            recv_from(np - 1, &token);
        } else {
            recv_from(me - 1, &token);
            token += me;
            send_to((me + 1) % np, &token);
        }
    }
    barrier();
    if (me == 0) {
        FILE *f = fopen(argv[1], "w");
        if (f) fclose(f);
    }
    struct timespec nap = {0, 50 * 1000 * 1000};
    for (double t = 0; t < max && access(argv[2], F_OK) != 0; t += 0.05) nanosleep(&nap, NULL);
    barrier();
    int ok = me != 0 || token == (long)np * (np - 1) / 2;
    if (me == 0) printf("memhold %d ranks: token %s\n", np, ok ? "ok" : "wrong");
    stop();
    return ok ? 0 : 1;
}
