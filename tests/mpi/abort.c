/* MPI_Abort(MPI_COMM_WORLD, CODE) from rank 1 while the others wait in a
 * barrier that can never complete: the whole job ends at once, with CODE's
 * low byte as its status (0 for 0: OpenCoarrays ends a program's STOP this
 * way; 1 where the low byte is 0 but CODE is not), as Open MPI and MPICH do. */
#include <stdio.h>
#include <stdlib.h>

#include "mpi.h"

int main(int argc, char **argv)
{
    int rank, code = argc > 1 ? atoi(argv[1]) : 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) MPI_Abort(MPI_COMM_WORLD, code);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("abort: rank %d passed the barrier: the job did not end\n", rank);
    MPI_Finalize();
    return 2;
}
