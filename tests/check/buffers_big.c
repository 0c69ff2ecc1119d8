/* courier run --check=buffers on buffers longer than the checksum's block of
 * eight words: one int changed anywhere in a pending nonblocking send's or
 * receive's buffer of 1027 ints (4108 bytes: 64 blocks of 64 bytes, one word,
 * 4 bytes) is reported, whichever lane of the checksum it falls in. Two
 * ranks; argv[1] says which:
 *   send I  rank 0 MPI_Isend's the buffer to rank 1, changes int I, waits;
 *   recv I  rank 1 MPI_Irecv's into the buffer, changes int I, waits;
 *   ok      both, each buffer changed only after its wait; prints "check
 *           buffers big ok". */
#include <stdlib.h>
#include <string.h>

#include "../mpi/mcheck.h"

enum { N = 1027 };

int main(int argc, char **argv)
{
    static int x[N];
    int me;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *mode = argc > 1 ? argv[1] : "ok";
    int at = argc > 2 ? atoi(argv[2]) : 0;
    int send = !strcmp(mode, "send"), recv = !strcmp(mode, "recv");
    for (int i = 0; i < N; i++) x[i] = i;
    MPI_Request r;
    if (me == 0) {
        OK(MPI_Isend(x, N, MPI_INT, 1, 1, MPI_COMM_WORLD, &r));
        if (send) x[at] = -1; /* erroneous: the send is pending */
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        x[at] = -2; /* allowed: complete */
        OK(MPI_Send(x, N, MPI_INT, 1, 2, MPI_COMM_WORLD));
    } else if (me == 1) {
        OK(MPI_Recv(x, N, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Irecv(x, N, MPI_INT, 0, 2, MPI_COMM_WORLD, &r));
        if (recv) x[at] = -1; /* erroneous: the receive is pending */
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (x[1] != 1 || x[N - 1] != N - 1) printf("check buffers big: wrong data\n");
        x[at] = -3; /* allowed: complete */
    }
    if (me == 0)
        printf(send || recv ? "check buffers big: %s ran without a report\n"
                            : "check buffers big ok\n",
               mode);
    MPI_Finalize();
    return 0;
}
