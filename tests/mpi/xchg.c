/* Which way an exchange moves a long message (engine.c: cr_irecv_push,
 * start_pull, XCHG_PUSH_BELOW): two ranks, each sending to and receiving from
 * the other in the same step of MPI_Allgather and MPI_Iallgather (blocks of
 * 32 KiB: pushed), MPI_Allgather of 256 KiB blocks and MPI_Allreduce (1 MiB:
 * halves of 512 KiB; both read by single copy), every byte checked; a
 * point-to-point exchange beside them keeps the single copy, each receiver
 * reading the whole message (the sender has its own to read, so no
 * cooperative copy): an MPI_Sendrecv of 300,000 bytes and an MPI_Isend +
 * MPI_Irecv + MPI_Waitall of 270,000. A one-way MPI_Send of 290,000 bytes
 * from rank 0 is copied cooperatively. tests/mpi/xchg.sh reads the job's
 * trace for how each message went. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK (32 * 1024 / (int)sizeof(int))
#define BIGBLK (256 * 1024 / (int)sizeof(int))
#define VEC (1024 * 1024 / (int)sizeof(int))
#define SR 300000
#define NB 270000
#define ONEWAY 290000

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
    MPI_Request q2[2];
    /* the send first: whenever the receive matches, this rank's send is going */
    MPI_Isend(a, NB, MPI_CHAR, peer, 6, MPI_COMM_WORLD, &q2[1]);
    MPI_Irecv(b, NB, MPI_CHAR, from, 6, MPI_COMM_WORLD, &q2[0]);
    MPI_Waitall(2, q2, MPI_STATUSES_IGNORE);
    for (int i = 0; i < NB; i++) check(b[i] == (char)(from * 7 + i), "MPI_Isend exchange");
    if (r == 0) MPI_Send(a, ONEWAY, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
    if (r == 1) {
        MPI_Recv(b, ONEWAY, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < ONEWAY; i++) check(b[i] == (char)i, "MPI_Send one way");
    }
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
    for (int i = 0; i < BIGBLK; i++) s[i] = r * BIGBLK + i;
    MPI_Allgather(s, BIGBLK, MPI_INT, d, BIGBLK, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n * BIGBLK; i++) check(d[i] == i, "MPI_Allgather, 256 KiB blocks");
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
