/* A program over shlib_lib.c's library: an all-reduce of its value, then every
 * rank ends through the library's exit (cc_shared.sh). */
#include <mpi.h>
#include <stdio.h>

int shlib_val(void);
void shlib_exit(int code);

int main(int argc, char **argv)
{
    int r, v, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    v = shlib_val();
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    printf("shlib rank %d sum %d\n", r, sum);
    fflush(stdout);
    shlib_exit(0);
}
