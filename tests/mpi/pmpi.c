/* The program a profiling library (tests/mpi/pmpi_tool.c) wraps: a known
 * number of calls on each rank. Rank 0 sends three messages to every other
 * rank, which receives them; then one MPI_Allreduce, checked. The tool prints
 * the counts at MPI_Finalize: MPI_Init 1 and MPI_Init_thread 0 (courier's
 * MPI_Init must not reach the program's MPI_Init_thread), Comm_rank 1, and no
 * MPI_Bcast (courier's allreduce must not call the program's MPI_ names). */
#include "mcheck.h"

int main(int argc, char **argv)
{
    int rank, size, v, sum;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(PMPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int i = 0; i < 3; i++) {
        if (rank == 0) {
            for (int d = 1; d < size; d++) OK(MPI_Send(&i, 1, MPI_INT, d, i, MPI_COMM_WORLD));
        } else {
            OK(MPI_Recv(&v, 1, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == i, "got %d, expected %d", v, i);
        }
    }
    v = rank + 1;
    OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size + 1) / 2, "sum %d", sum);
    return MPI_Finalize();
}
