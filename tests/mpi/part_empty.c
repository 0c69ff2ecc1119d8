/* MPI-4.0 partitioned communication of partitions that hold nothing (count 0,
 * as mpi4py's test_p2p_buf_part sends at size 0): a partition of the receive
 * arrives only once the sender has marked the partitions it overlaps ready,
 * bytes or not. With 1, 2 and 3 partitions a side, started 3 times: to the
 * rank itself on MPI_COMM_SELF (started receive: MPI_Parrived false for
 * every partition; after MPI_Pready(i), false for the partitions after i;
 * true once all are marked), then between ranks 0 and 1 (3 receive partitions
 * against 2 sent: nothing arrived before the sender starts, then all).
 * MPI_Parrived said true for every partition of nothing before. Rank 0 prints
 * "part empty ok". */
#include "mcheck.h"

static int arrived(MPI_Request r, int i)
{
    int flag = -1;
    OK(MPI_Parrived(r, i, &flag));
    return flag;
}

static void self(void)
{
    int sbuf[1], rbuf[1];
    for (int p = 1; p <= 3; p++) {
        MPI_Request s, r;
        OK(MPI_Psend_init(sbuf, p, 0, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_INFO_NULL, &s));
        OK(MPI_Precv_init(rbuf, p, 0, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_INFO_NULL, &r));
        for (int round = 0; round < 3; round++) {
            OK(MPI_Start(&r));
            for (int i = 0; i < p; i++)
                CHECK(!arrived(r, i), "partition %d of %d arrived before the send started", i, p);
            OK(MPI_Start(&s));
            for (int i = 0; i < p; i++) {
                OK(MPI_Pready(i, s));
                for (int j = i + 1; j < p; j++)
                    CHECK(!arrived(r, j), "partition %d of %d arrived, only 0..%d are ready", j, p,
                          i);
            }
            for (int i = 0; i < p; i++)
                while (!arrived(r, i)) {
                }
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        }
        OK(MPI_Request_free(&r));
        OK(MPI_Request_free(&s));
    }
}

static void pair(int me)
{
    int buf[1] = {0}, token = 0;
    MPI_Request q;
    if (me == 0) {
        OK(MPI_Psend_init(buf, 2, 0, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        for (int round = 0; round < 3; round++) {
            OK(MPI_Recv(&token, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Start(&q));
            OK(MPI_Pready(1, q));
            OK(MPI_Pready(0, q));
            OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
    } else {
        OK(MPI_Precv_init(buf, 3, 0, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        for (int round = 0; round < 3; round++) {
            OK(MPI_Start(&q));
            for (int i = 0; i < 3; i++)
                CHECK(!arrived(q, i), "partition %d arrived before the sender started", i);
            OK(MPI_Send(&token, 1, MPI_INT, 0, 4, MPI_COMM_WORLD));
            for (int i = 0; i < 3; i++)
                while (!arrived(q, i)) {
                }
            OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
    }
    OK(MPI_Request_free(&q));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    self();
    if (np >= 2 && me < 2) pair(me);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("part empty ok\n");
    OK(MPI_Finalize());
    return 0;
}
