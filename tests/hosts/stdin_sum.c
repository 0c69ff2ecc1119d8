/* Rank 0 reads its standard input to the end (numbers, one per line) and says
 * how many and their sum; the others only take part in the barrier. Across
 * hosts the launcher forwards its input to rank 0 (tests/hosts). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        long long n = 0, sum = 0, x;
        while (scanf("%lld", &x) == 1) {
            n++;
            sum += x;
        }
        printf("read %lld numbers, sum %lld\n", n, sum);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
