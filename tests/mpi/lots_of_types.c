/* Many live datatypes at once (after MPICH's datatype/lots_of_types): 1,000
 * derived types built from predefined types and from each other, all committed
 * and alive together, each used to move data whose every byte is checked, then
 * freed; predefined types must keep working after the type table has grown
 * many times. Regression: the table once moved on growth and predefined types
 * read their maps from freed memory. Needs 2 ranks. */
#include <string.h>

#include "mcheck.h"

#define NTYPES 1000
#define N 8 /* ints of data per type */

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np == 2, "needs 2 ranks, has %d", np);
    static MPI_Datatype t[NTYPES];
    /* Type k: every other int of 2*N ints (a vector of MPI_INT), or for odd k a
     * contiguous type of one instance of type k-1 (built from a derived type). */
    for (int k = 0; k < NTYPES; k++) {
        if (k % 2 == 0)
            OK(MPI_Type_vector(N, 1, 2, MPI_INT, &t[k]));
        else
            OK(MPI_Type_contiguous(1, t[k - 1], &t[k]));
        OK(MPI_Type_commit(&t[k]));
    }
    int src[2 * N], dst[2 * N];
    for (int k = 0; k < NTYPES; k++) {
        for (int i = 0; i < 2 * N; i++) src[i] = k * 1000 + i;
        if (me == 0) {
            OK(MPI_Send(src, 1, t[k], 1, k, MPI_COMM_WORLD));
        } else {
            for (int i = 0; i < 2 * N; i++) dst[i] = -1;
            OK(MPI_Recv(dst, 1, t[k], 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < 2 * N; i++)
                CHECK(dst[i] == (i % 2 ? -1 : src[i]), "type %d: int %d is %d", k, i, dst[i]);
        }
        int size;
        OK(MPI_Type_size(t[k], &size));
        CHECK(size == N * (int)sizeof(int), "type %d has size %d", k, size);
    }
    /* Predefined types after the table grew: a double and an int round trip. */
    double d = me ? 0.0 : 3.25;
    OK(MPI_Bcast(&d, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    CHECK(d == 3.25, "bcast of a double after %d types gave %g", NTYPES, d);
    int sum = 0, one = me + 1;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == 3, "allreduce of ints gave %d", sum);
    for (int k = NTYPES - 1; k >= 0; k--) OK(MPI_Type_free(&t[k]));
    /* And the freed slots are reused. */
    MPI_Datatype again;
    OK(MPI_Type_contiguous(3, MPI_INT, &again));
    OK(MPI_Type_commit(&again));
    int v3[3] = {7, 8, 9}, r3[3] = {0, 0, 0};
    OK(MPI_Sendrecv(v3, 1, again, 1 - me, 5, r3, 1, again, 1 - me, 5, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(r3[0] == 7 && r3[1] == 8 && r3[2] == 9, "reused slot moved %d %d %d", r3[0], r3[1],
          r3[2]);
    OK(MPI_Type_free(&again));
    if (me == 0) printf("lots_of_types: %d live derived types ok\n", NTYPES);
    OK(MPI_Finalize());
    return 0;
}
