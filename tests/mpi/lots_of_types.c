/* Many live datatypes at once (after MPICH's datatype/lots_of_types): 1,000
 * derived types built from predefined types and from each other (vector,
 * contiguous, struct, hindexed, resized, dup), all committed and alive
 * together, each used to move data whose every byte is checked; then half are
 * freed and the types built from them must still work (a type keeps copies of
 * the maps it was built from), then the rest. Predefined types must keep
 * working after the type table has grown many times. Regression: the table
 * moved when it grew, and every type built from a predefined type read that
 * type's map from freed memory (wrong data, then absurd sizes). Needs 2 ranks. */
#include <string.h>

#include "mcheck.h"

#define NTYPES 1000
#define N 8 /* the data of each type lies in an array of 2*N ints */

/* Type k selects ints of a 2*N array: kind 0 a vector of MPI_INT (the even
 * ints), kind 1 a contiguous type of type k-1, kind 2 a struct of an MPI_INT
 * (int 1) and type k-1, kind 3 an hindexed type of one instance of type k-1
 * resized to the whole array, kind 4 a dup of type k-1. */
static int kind(int k)
{
    return k % 5;
}

/* Does type k select int i? */
static int selects(int k, int i)
{
    return i % 2 == 0 || (kind(k) >= 2 && i == 1);
}

static void make(MPI_Datatype *t, int k)
{
    switch (kind(k)) {
    case 0:
        OK(MPI_Type_vector(N, 1, 2, MPI_INT, &t[k]));
        break;
    case 1:
        OK(MPI_Type_contiguous(1, t[k - 1], &t[k]));
        break;
    case 2: {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {sizeof(int), 0};
        MPI_Datatype ts[2] = {MPI_INT, t[k - 1]};
        OK(MPI_Type_create_struct(2, bl, d, ts, &t[k]));
        break;
    }
    case 3: {
        MPI_Datatype h;
        int bl = 1;
        MPI_Aint d = 0;
        OK(MPI_Type_create_hindexed(1, &bl, &d, t[k - 1], &h));
        OK(MPI_Type_create_resized(h, 0, 2 * N * (MPI_Aint)sizeof(int), &t[k]));
        OK(MPI_Type_free(&h));
        break;
    }
    default:
        OK(MPI_Type_dup(t[k - 1], &t[k]));
    }
    OK(MPI_Type_commit(&t[k]));
}

/* Send one instance of type k from rank 0 to rank 1 and check every int. */
static void use(MPI_Datatype *t, int k, int me, int round)
{
    int src[2 * N], dst[2 * N];
    for (int i = 0; i < 2 * N; i++) src[i] = round * 1000000 + k * 100 + i;
    if (me == 0) {
        OK(MPI_Send(src, 1, t[k], 1, k, MPI_COMM_WORLD));
    } else {
        for (int i = 0; i < 2 * N; i++) dst[i] = -1;
        MPI_Status st;
        OK(MPI_Recv(dst, 1, t[k], 0, k, MPI_COMM_WORLD, &st));
        for (int i = 0; i < 2 * N; i++)
            CHECK(dst[i] == (selects(k, i) ? src[i] : -1), "type %d (kind %d): int %d is %d", k,
                  kind(k), i, dst[i]);
        int elems;
        OK(MPI_Get_elements(&st, MPI_INT, &elems));
        CHECK(elems == N + (kind(k) >= 2), "type %d: %d elements", k, elems);
    }
    int size;
    OK(MPI_Type_size(t[k], &size));
    CHECK(size == (N + (kind(k) >= 2)) * (int)sizeof(int), "type %d has size %d", k, size);
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np == 2, "needs 2 ranks, has %d", np);
    static MPI_Datatype t[NTYPES];
    for (int k = 0; k < NTYPES; k++) make(t, k);
    for (int k = 0; k < NTYPES; k++) use(t, k, me, 0);
    /* Predefined types after the table grew: a double and an int round trip. */
    double d = me ? 0.0 : 3.25;
    OK(MPI_Bcast(&d, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    CHECK(d == 3.25, "bcast of a double after %d types gave %g", NTYPES, d);
    int sum = 0, one = me + 1;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == 3, "allreduce of ints gave %d", sum);
    /* Free every type some other type was built from; those others still work. */
    for (int k = 0; k < NTYPES; k++)
        if (kind(k) != 4) OK(MPI_Type_free(&t[k]));
    for (int k = 0; k < NTYPES; k++)
        if (kind(k) == 4) use(t, k, me, 1);
    for (int k = 0; k < NTYPES; k++)
        if (kind(k) == 4) OK(MPI_Type_free(&t[k]));
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
