/* bench/launch/empty.c: the empty MPI job launch.sh times: MPI_Init and
 * MPI_Finalize, nothing between, so that what is measured is the launch (agents
 * or daemons, rank start, wire-up, the finish) and not the program. */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
