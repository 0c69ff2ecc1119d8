/* courier run --check=buffers stages every receive in a buffer the rank
 * keeps for the next ones (mpi_check_stage): rounds of pending receives whose
 * sizes grow and shrink, more of them at once than it keeps (64) and more
 * bytes than it keeps (64 MiB), each message shorter than its receive (the
 * bytes after it must stay as they were), and a vector datatype's, all land
 * whole and in place. Two ranks; rank 0 sends, rank 1 receives and checks
 * every int; prints "check buffers stage ok". */
#include <stdlib.h>
#include <string.h>

#include "../mpi/mcheck.h"

enum { MAXQ = 66 };

static int val(int round, int k, size_t i)
{
    return (int)(round * 1000003 + k * 7919 + (int)(i % 100000));
}

int main(int argc, char **argv)
{
    /* per round: receives pending at once, ints sent, ints each receive has room for */
    static const struct {
        int n;
        size_t sent, room;
    } rounds[] = {
        {MAXQ, 262144, 262144}, /* 66 MiB: more than kept, in number and bytes */
        {MAXQ, 2, 3},           /* small ones into the big kept buffers */
        {4, 786432, 786432},    /* 3 MiB each: none kept fits */
        {MAXQ, 1000, 4096},     /* shorter than the receive */
        {8, 262144, 262144},
    };
    int me;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    size_t most = 0;
    for (size_t r = 0; r < sizeof rounds / sizeof rounds[0]; r++)
        if (rounds[r].n * rounds[r].room > most) most = rounds[r].n * rounds[r].room;
    int *x = malloc(most * sizeof *x);
    CHECK(x, "out of memory");
    MPI_Request q[MAXQ];
    for (int r = 0; r < (int)(sizeof rounds / sizeof rounds[0]); r++) {
        int n = rounds[r].n;
        size_t sent = rounds[r].sent, room = rounds[r].room;
        if (me == 0) {
            for (int k = 0; k < n; k++) {
                for (size_t i = 0; i < sent; i++) x[i] = val(r, k, i);
                OK(MPI_Send(x, (int)sent, MPI_INT, 1, r, MPI_COMM_WORLD));
            }
        } else if (me == 1) {
            for (size_t i = 0; i < n * room; i++) x[i] = -1;
            for (int k = 0; k < n; k++)
                OK(MPI_Irecv(x + k * room, (int)room, MPI_INT, 0, r, MPI_COMM_WORLD, &q[k]));
            OK(MPI_Waitall(n, q, MPI_STATUSES_IGNORE));
            for (int k = 0; k < n; k++)
                for (size_t i = 0; i < room; i++)
                    CHECK(x[k * room + i] == (i < sent ? val(r, k, i) : -1),
                          "round %d receive %d int %zu: %d", r, k, i, x[k * room + i]);
        }
    }
    /* a vector datatype: every other int of 2 x 1000 */
    MPI_Datatype v;
    OK(MPI_Type_vector(1000, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    if (me == 0) {
        for (int i = 0; i < 1000; i++) x[i] = 5 * i;
        OK(MPI_Send(x, 1000, MPI_INT, 1, 99, MPI_COMM_WORLD));
    } else if (me == 1) {
        for (int i = 0; i < 2000; i++) x[i] = -1;
        OK(MPI_Irecv(x, 1, v, 0, 99, MPI_COMM_WORLD, &q[0]));
        OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        for (int i = 0; i < 2000; i++)
            CHECK(x[i] == (i % 2 ? -1 : 5 * (i / 2)), "vector int %d: %d", i, x[i]);
    }
    OK(MPI_Type_free(&v));
    free(x);
    if (me == 1) printf("check buffers stage ok\n");
    MPI_Finalize();
    return 0;
}
