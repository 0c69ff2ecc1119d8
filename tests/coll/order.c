/* The order an allreduce combines in: MPI_Allreduce (the shared area or
 * messages), MPI_Iallreduce and a persistent MPI_Allreduce_init give the same
 * bits, on every rank, for floats whose sum depends on the order; and with a
 * power of two of ranks, equal floats sum to the count times one exactly (a
 * balanced tree: a running sum rounds at 16 ranks, which OpenCoarrays'
 * co_sum test issue-503 caught). Any number of ranks; prints "coll order: N
 * ranks ok" (rank 0). */
#include <stdio.h>
#include <string.h>

#include "../mpi/mcheck.h"

#define N 64

int main(int argc, char **argv)
{
    int me, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    float in[N], a[N], b[N], c[N];
    for (int i = 0; i < N; i++) /* a big one on rank 0, small ones elsewhere */
        in[i] = me == 0 ? 3e7f + (float)i : 1.0f + (float)(me % 7) * 1.1e-7f * (float)(i % 5);
    OK(MPI_Allreduce(in, a, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    MPI_Request q;
    OK(MPI_Iallreduce(in, b, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    OK(MPI_Allreduce_init(in, c, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
    OK(MPI_Start(&q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    OK(MPI_Request_free(&q));
    CHECK(!memcmp(a, b, sizeof a), "MPI_Allreduce and MPI_Iallreduce differ: %.9g %.9g", a[1],
          b[1]);
    CHECK(!memcmp(a, c, sizeof a), "MPI_Allreduce and MPI_Allreduce_init differ: %.9g %.9g", a[1],
          c[1]);
    float r0[N];
    if (me == 0) memcpy(r0, a, sizeof a);
    OK(MPI_Bcast(r0, N, MPI_FLOAT, 0, MPI_COMM_WORLD));
    CHECK(!memcmp(a, r0, sizeof a), "rank %d's result differs from rank 0's", me);

    float one = 47242096.0f, sum;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    if (!(np & (np - 1)))
        CHECK(sum == (float)np * one, "%d equal floats sum to %.1f, not %.1f", np, sum,
              (float)np * one);
    MPI_Finalize();
    if (me == 0) printf("coll order: %d ranks ok\n", np);
    return 0;
}
