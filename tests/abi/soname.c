/* A program built against the MPI-5 ABI's header and linked with a stand-in
 * libmpi_abi.so.1 or .so.0 (stub.c), by soname: under courier run it must run with
 * courier's library (the ranks' library path, src/run/start.c) and give the
 * right sum. Rank 0 prints one line. */
#include <mpi.h> /* include/abi/mpi.h */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np, sum = 0, one;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    one = me + 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl) *nl = '\0';
    int ok = sum == np * (np + 1) / 2;
    if (me == 0)
        printf("abi soname: %d ranks, sum %d %s, library: %.40s\n", np, sum, ok ? "ok" : "WRONG",
               lib);
    MPI_Finalize();
    return ok ? 0 : 1;
}
