/* courier run --check=buffers: a nonblocking send's buffer written before the
 * send completed, and the correct twin. Two ranks; argv[1] says which:
 *   bad  rank 0 MPI_Isend's 4 ints to rank 1, changes one, then waits
 *        (unchecked it runs to its end and says so; what rank 1 gets depends
 *        on when the data left);
 *   bad_igather  rank 1 changes its send buffer while its MPI_Igather
 *        (root 0) is pending;
 *   bad_ibcast  the root changes the buffer of its pending MPI_Ibcast;
 *   bad_pcoll  rank 0 changes the send buffer of its MPI_Allreduce_init's
 *        second start before its wait;
 *   bad_irecv  rank 1 writes the buffer of its pending MPI_Irecv (before
 *        or after the message arrived: the report is the same);
 *   bad_precv  the same with MPI_Recv_init and MPI_Start;
 *   ok   the buffer changed only after MPI_Wait, also through a persistent
 *        send started twice, a receive's buffer written after its wait, two
 *        pending receives into one buffer (the first one's message lands in
 *        the second's buffer: courier's write, not the program's), and the
 *        same for the collectives (a persistent
 *        one's send buffer changed between its starts); prints "check
 *        buffers ok". */
#include <stdbool.h>
#include <string.h>

#include "../mpi/mcheck.h"

int main(int argc, char **argv)
{
    int me, x[4] = {1, 2, 3, 4}, y[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int bad = argc > 1 && !strcmp(argv[1], "bad");
    const char *mode = argc > 1 ? argv[1] : "ok";
    MPI_Request r;
    int v = me, g[2] = {0, 0};
    OK(MPI_Igather(&v, 1, MPI_INT, g, 1, MPI_INT, 0, MPI_COMM_WORLD, &r));
    if (!strcmp(mode, "bad_igather") && me == 1) v = 7; /* erroneous: pending */
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    v = 5; /* allowed: complete */
    OK(MPI_Ibcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD, &r));
    if (!strcmp(mode, "bad_ibcast") && me == 0) x[1] = 22; /* erroneous: pending */
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    x[1] = 2;
    OK(MPI_Allreduce_init(&v, g, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    for (int k = 0; k < 2; k++) {
        v = k; /* allowed: between the starts */
        OK(MPI_Start(&r));
        if (!strcmp(mode, "bad_pcoll") && me == 0 && k == 1) v = 9; /* erroneous */
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    OK(MPI_Request_free(&r));
    bool pr = !strcmp(mode, "bad_precv");
    if (me == 1) {
        if (pr) {
            OK(MPI_Recv_init(y, 4, MPI_INT, 0, 4, MPI_COMM_WORLD, &r));
            OK(MPI_Start(&r));
        } else {
            OK(MPI_Irecv(y, 4, MPI_INT, 0, 4, MPI_COMM_WORLD, &r));
        }
        if (pr || !strcmp(mode, "bad_irecv")) y[3] = 44; /* erroneous: pending */
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (y[0] != 1 || y[3] != 4) printf("check buffers: wrong data %d %d\n", y[0], y[3]);
        y[3] = 0; /* allowed: complete */
        if (pr) OK(MPI_Request_free(&r));
        MPI_Request w[2]; /* osu_bw's window: pending receives into one buffer */
        for (int k = 0; k < 2; k++) OK(MPI_Irecv(y, 4, MPI_INT, 0, 8, MPI_COMM_WORLD, &w[k]));
        OK(MPI_Waitall(2, w, MPI_STATUSES_IGNORE));
    } else if (me == 0) {
        OK(MPI_Send(x, 4, MPI_INT, 1, 4, MPI_COMM_WORLD));
        for (int k = 0; k < 2; k++) OK(MPI_Send(x, 4, MPI_INT, 1, 8, MPI_COMM_WORLD));
    }
    if (strcmp(mode, "ok") && strcmp(mode, "bad")) {
        if (me == 0) printf("check buffers: %s ran without a report\n", mode);
        MPI_Finalize();
        return 0;
    }
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
