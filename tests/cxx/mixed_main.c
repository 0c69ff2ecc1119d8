/* The C half of a mixed program: a build system compiles this with courier-cc
 * and the C++ object with courier-c++, then links with courier-cc, which must
 * add the C++ runtime itself. Each rank sums its values in C++, then the sums
 * are reduced with MPI and checked. */
#include <mpi.h>
#include <stdio.h>

double cxx_sum(const double *x, int n);

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double x[4] = {rank, rank, 1, 2}, mine = cxx_sum(x, 4), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double want = (double)size * (size - 1) + 3.0 * size;
    if (all != want) {
        fprintf(stderr, "FAIL rank %d: sum %g, expected %g\n", rank, all, want);
        return 1;
    }
    if (rank == 0) printf("mixed C/C++: sum %g\n", all);
    MPI_Finalize();
    return 0;
}
