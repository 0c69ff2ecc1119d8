/* A reply queued behind a message the receiver refused (2 ranks, run with
 * COURIER_UNEXPECTED_LIMIT=1).
 *
 * Rank 1 sends rank 0 two small messages it does not receive yet: the first
 * fills rank 0's unexpected budget, so rank 0's engine refuses the second and
 * its transport holds it (and the rest of rank 1's ordinary messages behind
 * it). Rank 0 then sends rank 1 a long message: rank 1's reply to it (the
 * rendezvous' CTS or FIN) comes behind the refused one. Once a reply from rank
 * 1 is owed, the refused message must be taken (the engine's owe()); before,
 * it stayed refused and both ranks waited for each other (seen over tcp). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define BIG (1 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    static char big[BIG];
    int a = 11, b = 22;
    if (np != 2) {
        if (me == 0) fprintf(stderr, "refused_reply: run it on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (me == 1) {
        MPI_Send(&a, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Send(&b, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        MPI_Recv(big, BIG, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < BIG; i++)
            if (big[i] != (char)(i * 7)) {
                fprintf(stderr, "refused_reply: byte %d of the long message is wrong\n", i);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    } else {
        for (int i = 0; i < BIG; i++) big[i] = (char)(i * 7);
        /* the first is here, so the second is right behind it: give it time to
         * arrive and be refused */
        int flag = 0;
        while (!flag) MPI_Iprobe(1, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        for (double t = MPI_Wtime(); MPI_Wtime() - t < 0.05;)
            MPI_Iprobe(1, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Send(big, BIG, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
        int x = 0, y = 0;
        MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&y, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (x != 11 || y != 22) {
            fprintf(stderr, "refused_reply: got %d and %d, wanted 11 and 22\n", x, y);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("refused reply ok\n");
    }
    MPI_Finalize();
    return 0;
}
