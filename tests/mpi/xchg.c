/* Which way a collective's exchange moves a long message (engine.c:
 * cr_irecv_push): two ranks, each sending to and receiving from the other in
 * the same step of MPI_Allgather and MPI_Iallgather (blocks of 256 KiB) and
 * MPI_Allreduce (1 MiB), every byte checked; an MPI_Sendrecv of 300,000 bytes
 * beside them is point-to-point and keeps the single copy. tests/mpi/xchg.sh
 * reads the job's trace for how each message went. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK (256 * 1024 / (int)sizeof(int))
#define VEC (1024 * 1024 / (int)sizeof(int))
#define SR 300000

static void check(int ok, const char *what)
{
    if (ok) return;
    printf("xchg: %s: wrong data\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int *s = malloc(VEC * sizeof *s), *d = malloc((size_t)n * VEC * sizeof *d);
    char *a = malloc(SR), *b = malloc(SR);
    for (int i = 0; i < SR; i++) a[i] = (char)(r * 7 + i);
    int peer = (r + 1) % n, from = (r + n - 1) % n;
    MPI_Sendrecv(a, SR, MPI_CHAR, peer, 5, b, SR, MPI_CHAR, from, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < SR; i++) check(b[i] == (char)(from * 7 + i), "MPI_Sendrecv");
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < BLOCK; i++) s[i] = r * BLOCK + i + k;
        if (k == 0) {
            MPI_Allgather(s, BLOCK, MPI_INT, d, BLOCK, MPI_INT, MPI_COMM_WORLD);
        } else {
            MPI_Request q;
            MPI_Iallgather(s, BLOCK, MPI_INT, d, BLOCK, MPI_INT, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < n * BLOCK; i++)
            check(d[i] == i + k, k ? "MPI_Iallgather" : "MPI_Allgather");
    }
    for (int i = 0; i < VEC; i++) s[i] = r + i;
    MPI_Allreduce(s, d, VEC, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < VEC; i++) check(d[i] == n * (n - 1) / 2 + n * i, "MPI_Allreduce");
    printf("xchg ok\n");
    free(s);
    free(d);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
