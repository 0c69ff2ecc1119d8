/* The "echo" benchmark of the Direct-Connect paper (seed 000) and a token ring,
 * written once and built against courier's NX/2 or, with -DUSE_MPI, against any
 * MPI (Open MPI, MPICH) so that the same source measures all of them.
 *
 *   pingpong echo [--max BYTES] [--quick]   two ranks send a message back and forth;
 *                                           prints one-way latency and bandwidth
 *   pingpong ring [--iters N]               a 1-byte token goes round all ranks;
 *                                           prints the time per hop
 *   pingpong hello                          start and stop only (launch time)
 * Output lines are "key value..." so that bench/compare.sh can merge runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static void send_to(int node, char *buf, long len)
{
    MPI_Send(buf, (int)len, MPI_BYTE, node, 1, MPI_COMM_WORLD);
}
static void recv_any(char *buf, long len)
{
    MPI_Recv(buf, (int)len, MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
static void barrier(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
}
static double now(void)
{
    return MPI_Wtime();
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
static void send_to(int node, char *buf, long len)
{
    csend(1, buf, len, node, 0);
}
static void recv_any(char *buf, long len)
{
    crecv(1, buf, len);
}
static void barrier(void)
{
    gsync();
}
/* The interface's own timer, as NX/2 programs time themselves: virtual time
 * when the program runs simulated (courier run --sim). */
static double now(void)
{
    return dclock();
}
#endif

static long iters_for(long size, int quick)
{
    long it = size <= 4096 ? 200000 : size <= 65536 ? 20000 : size <= (1 << 20) ? 2000 : 100;
    if (size >= (16 << 20)) it = 20;
    return quick ? it / 10 + 1 : it;
}

static void echo(long max, int quick)
{
    char *buf = malloc((size_t)(max ? max : 1));
    memset(buf, 7, (size_t)(max ? max : 1));
    if (me == 0) printf("# size_bytes one_way_us bandwidth_MBps\n");
    for (long size = 0; size <= max; size = size ? size * 2 : 1) {
        long iters = iters_for(size, quick), warm = iters / 10 + 1;
        double t0 = 0;
        barrier();
        for (long i = 0; i < warm + iters; i++) {
            if (i == warm) t0 = now();
            if (me == 0) {
                send_to(1, buf, size);
                recv_any(buf, size);
            } else if (me == 1) {
                recv_any(buf, size);
                send_to(0, buf, size);
            }
        }
        double us = (now() - t0) / (double)iters / 2 * 1e6;
        if (me == 0) printf("echo %ld %.3f %.1f\n", size, us, size ? (double)size / us : 0.0);
        fflush(stdout);
    }
    free(buf);
}

static void ring(long iters)
{
    char c = 1;
    int next = (me + 1) % np;
    barrier();
    double t0 = 0;
    long warm = iters / 10 + 1;
    for (long i = 0; i < warm + iters; i++) {
        if (i == warm) t0 = now();
        if (me == 0) {
            send_to(next, &c, 1);
            recv_any(&c, 1);
        } else {
            recv_any(&c, 1);
            send_to(next, &c, 1);
        }
    }
    double per_hop = (now() - t0) / (double)iters / np * 1e6;
    if (me == 0) printf("ring %d %.3f\n", np, per_hop);
}

int main(int argc, char **argv)
{
    start(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "echo";
    long max = 64L << 20, iters = 20000;
    int quick = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max = atol(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
    }
    if (!strcmp(mode, "echo") && np >= 2)
        echo(max, quick);
    else if (!strcmp(mode, "ring"))
        ring(iters);
    else if (!strcmp(mode, "hello"))
        ;
    else if (me == 0)
        fprintf(stderr, "usage: pingpong echo [--max BYTES] [--quick] | ring [--iters N] | hello "
                        "(echo needs 2 ranks)\n");
    stop();
    return 0;
}
