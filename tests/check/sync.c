/* courier run --check=sync: a program that works only because standard sends
 * are buffered, and the correct twin. Two ranks; argv[1] says which:
 *   bad  both ranks MPI_Send to each other first, then receive (an "unsafe"
 *        exchange, MPI-4.1 section 3.5): under --check=sync every standard
 *        send waits for its receive, so the watchdog reports the cycle and
 *        says it would deadlock without buffering; unchecked it runs to its
 *        end and says so;
 *   ok   the same exchange ordered (rank 0 sends first, rank 1 receives
 *        first), then with MPI_Isend, MPI_Sendrecv; prints "check sync ok". */
#include <string.h>

#include "../mpi/mcheck.h"

int main(int argc, char **argv)
{
    int me, x[4] = {1, 2, 3, 4}, y[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int peer = 1 - me;
    if (argc > 1 && !strcmp(argv[1], "bad")) {
        OK(MPI_Send(x, 4, MPI_INT, peer, 3, MPI_COMM_WORLD));
        OK(MPI_Recv(y, 4, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (me == 0) printf("check sync: bad ran without a report\n");
    } else {
        if (me == 0) {
            OK(MPI_Send(x, 4, MPI_INT, peer, 3, MPI_COMM_WORLD));
            OK(MPI_Recv(y, 4, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Recv(y, 4, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Send(x, 4, MPI_INT, peer, 3, MPI_COMM_WORLD));
        }
        MPI_Request r;
        OK(MPI_Isend(x, 4, MPI_INT, peer, 4, MPI_COMM_WORLD, &r));
        OK(MPI_Recv(y, 4, MPI_INT, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Sendrecv(x, 4, MPI_INT, peer, 5, y, 4, MPI_INT, peer, 5, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        if (me == 0) printf("check sync ok\n");
    }
    MPI_Finalize();
    return 0;
}
