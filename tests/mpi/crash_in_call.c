/* A rank that faults inside an MPI call says so before it dies (src/core/crash.c):
 * rank 1 sends 1000 ints from address 16; tests/mpi/CMakeLists.txt checks the line
 * naming the rank, the signal, the address and the call. With "overflow", rank 1
 * recurses with 1 MiB of locals a frame until its stack overflows: reported too (the
 * handler has a stack of its own), as an overflow. */
#include <string.h>

#include "mcheck.h"

static int deep(int n)
{
    volatile char a[1 << 20];
    memset((char *)a, n, sizeof a);
    return n ? deep(n - 1) + a[n] : a[1];
}

int main(int argc, char **argv)
{
    int me = 0, buf[1000];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc > 1 && !strcmp(argv[1], "overflow")) {
        int r = me == 1 ? deep(1 << 20) : 0;
        MPI_Finalize();
        return r == 12345;
    }
    if (me == 1) MPI_Send((void *)16, 1000, MPI_INT, 0, 1, MPI_COMM_WORLD);
    if (me == 0) MPI_Recv(buf, 1000, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
