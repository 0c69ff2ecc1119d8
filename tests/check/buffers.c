/* courier run --check=buffers: a nonblocking send's buffer written before the
 * send completed, and the correct twin. Two ranks; argv[1] says which:
 *   bad  rank 0 MPI_Isend's 4 ints to rank 1, changes one, then waits
 *        (unchecked it runs to its end and says so; what rank 1 gets depends
 *        on when the data left);
 *   ok   the buffer changed only after MPI_Wait, also through a persistent
 *        send started twice; prints "check buffers ok". */
#include <string.h>

#include "../mpi/mcheck.h"

int main(int argc, char **argv)
{
    int me, x[4] = {1, 2, 3, 4}, y[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int bad = argc > 1 && !strcmp(argv[1], "bad");
    MPI_Request r;
    if (me == 0) {
        OK(MPI_Isend(x, 4, MPI_INT, 1, 2, MPI_COMM_WORLD, &r));
        if (bad) x[2] = 33; /* erroneous: the send is still pending */
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        x[2] = 3;
        OK(MPI_Send_init(x, 4, MPI_INT, 1, 3, MPI_COMM_WORLD, &r));
        for (int k = 0; k < 2; k++) {
            OK(MPI_Start(&r));
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            x[0] = k; /* allowed: the send completed */
        }
        OK(MPI_Request_free(&r));
    } else if (me == 1) {
        OK(MPI_Recv(y, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < 2; k++)
            OK(MPI_Recv(y, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    if (me == 0) printf(bad ? "check buffers: bad ran without a report\n" : "check buffers ok\n");
    MPI_Finalize();
    return 0;
}
