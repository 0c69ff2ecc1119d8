/* The program of tests/mpi/pmpi_both_tool.c: its calls, and only these, are
 * what the tool must count. Two ranks; each opens a file of its own
 * directory (argv[1]), writes 100 bytes with MPI_File_write_at_c and closes
 * it; rank 0 sends one int to rank 1 with MPI_Send_c (MPI_Recv_c); both call
 * MPI_Allreduce_c once and MPI_Bcast once. Prints "pmpi both ok" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, x = 7, sum = 0;
    char b[100], path[4096];
    memset(b, 'x', sizeof b);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(path, sizeof path, "%s/pmpi_both.dat", argc > 1 ? argv[1] : ".");
    MPI_File fh;
    if (PMPI_File_open(MPI_COMM_WORLD, path,
                       MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                       &fh) != MPI_SUCCESS) {
        printf("FAIL rank %d: cannot open %s\n", rank, path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_write_at_c(fh, rank * 100, b, 100, MPI_BYTE, MPI_STATUS_IGNORE);
    PMPI_File_close(&fh);
    if (rank == 0) MPI_Send_c(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv_c(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce_c(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(&sum, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (sum != 14) printf("FAIL rank %d: sum %d\n", rank, sum);
    if (rank == 0) printf("pmpi both ok\n");
    MPI_Finalize();
    return 0;
}
