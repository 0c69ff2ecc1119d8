/* A trace's call sizes add up what the calls received (tests/tools/trace): rank
 * 1 sends 4 messages of 256 bytes a round for 10 rounds; rank 0 posts them with
 * MPI_Irecv and completes them with MPI_Waitall, so each message is matched in
 * one call or the other, and the MPI_Irecv and MPI_Waitall records of rank 0
 * together must carry 10 KiB (a call once took only its first message's
 * size: an MPI_Waitall completing four receives counted one). */
#include <courier/mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    static char b[4][256];
    MPI_Request r[4];
    for (int round = 0; round < 10; round++) {
        if (me == 0) {
            for (int i = 0; i < 4; i++) MPI_Irecv(b[i], 256, MPI_CHAR, 1, i, MPI_COMM_WORLD, &r[i]);
            MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
        } else if (me == 1) {
            for (int i = 0; i < 4; i++) MPI_Send(b[i], 256, MPI_CHAR, 0, i, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
