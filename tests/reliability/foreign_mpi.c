/* A program linked with another MPI library (the stand-in libmpi.so.40 of
 * fake_mpi.c) and not with courier: courier run must refuse it, saying why,
 * rather than start N jobs of one rank that each end with status 0. */
#include <stdio.h>

int MPI_Init(int *argc, char ***argv);
int MPI_Comm_size_world(void);

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    printf("foreign: a job of %d rank\n", MPI_Comm_size_world());
    return 0;
}
