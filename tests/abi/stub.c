/* A stand-in libmpi_abi.so.1 or .so.0 (tests/abi/CMakeLists.txt builds each
 * in a directory of its own): it exports the calls soname.c makes, and each
 * says it is the stub and ends the process with status 3. A program linked
 * with it must find courier's library of that name instead under courier run, which
 * puts courier's library directory on the ranks' library path
 * (src/run/start.c). */
#include <mpi.h> /* include/abi/mpi.h */
#include <stdio.h>
#include <stdlib.h>

static int stub(const char *call)
{
    fprintf(stderr, "stub libmpi_abi.so: %s called: the program did not find courier's library\n",
            call);
    exit(3);
}

int MPI_Init(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return stub("MPI_Init");
}
int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    (void)comm, (void)rank;
    return stub("MPI_Comm_rank");
}
int MPI_Comm_size(MPI_Comm comm, int *size)
{
    (void)comm, (void)size;
    return stub("MPI_Comm_size");
}
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    (void)sendbuf, (void)recvbuf, (void)count, (void)datatype, (void)op, (void)comm;
    return stub("MPI_Allreduce");
}
int MPI_Get_library_version(char *version, int *resultlen)
{
    (void)version, (void)resultlen;
    return stub("MPI_Get_library_version");
}
int MPI_Finalize(void)
{
    return stub("MPI_Finalize");
}
