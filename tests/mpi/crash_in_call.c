/* A rank that faults inside an MPI call says so before it dies (src/core/crash.c):
 * rank 1 sends 1000 ints from address 16; tests/mpi/CMakeLists.txt checks the line
 * naming the rank, the signal, the address and the call. */
#include "mcheck.h"

int main(int argc, char **argv)
{
    int me = 0, buf[1000];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 1) MPI_Send((void *)16, 1000, MPI_INT, 0, 1, MPI_COMM_WORLD);
    if (me == 0) MPI_Recv(buf, 1000, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
