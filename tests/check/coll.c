/* courier run --check=coll: collectives whose ranks disagree, and the correct
 * twin. Any number of ranks (>= 2); argv[1] says which:
 *   bad_root  MPI_Bcast with each rank naming itself the root;
 *   bad_root_sub  the same on the odd ranks' half of MPI_Comm_split (the report
 *             names each member's job rank too);
 *   bad_op    MPI_Allreduce, MPI_SUM on every rank but the last (MPI_MAX);
 *   bad_userop the same with a user operation instead of MPI_SUM;
 *   bad_kind  MPI_Bcast on rank 0, MPI_Barrier on the others;
 *   bad_type  MPI_Bcast of 4 x MPI_INT, 4 x MPI_FLOAT on the last rank (same
 *             size: nothing else would notice);
 *   ok        each checked collective called correctly, the same data
 *             spelled by different types where MPI allows it, MPI_IN_PLACE
 *             and MPI_BYTE, one user operation whose handle differs
 *             between the ranks (each rank's own); prints "check coll ok".
 * Unchecked, "bad_type" runs to its end and says so. */
#include <string.h>

#include "../mpi/mcheck.h"

static int me, np;

static void int_max(void *in, void *inout, int *n, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *n; i++)
        if (((int *)in)[i] > ((int *)inout)[i]) ((int *)inout)[i] = ((int *)in)[i];
}

static void ok(void)
{
    int a[64], b[64];
    for (int i = 0; i < 64; i++) a[i] = me * 100 + i;
    MPI_Datatype pair;
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* the root sends 2 pairs, the others receive 4 ints */
    if (me == 0)
        OK(MPI_Bcast(a, 2, pair, 0, MPI_COMM_WORLD));
    else
        OK(MPI_Bcast(a, 4, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(a[3] == 3, "bcast");
    OK(MPI_Bcast(a, 16, MPI_BYTE, np - 1, MPI_COMM_WORLD));
    OK(MPI_Allreduce(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Reduce(me == 1 ? MPI_IN_PLACE : a, b, 4, MPI_INT, MPI_MAX, 1, MPI_COMM_WORLD));
    OK(MPI_Gather(me == 0 ? MPI_IN_PLACE : a, 2, MPI_INT, b, 1, pair, 0, MPI_COMM_WORLD));
    OK(MPI_Scatter(a, 2, MPI_INT, me == np - 1 ? MPI_IN_PLACE : b, 2, MPI_INT, np - 1,
                   MPI_COMM_WORLD));
    OK(MPI_Allgather(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Alltoall(a, 1, pair, b, 2, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Scan(a, b, 3, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
    /* one user operation, whose handle differs between the ranks: all but
     * rank 0 made another one first */
    MPI_Op extra = MPI_OP_NULL, mine;
    if (me != 0) OK(MPI_Op_create(int_max, 1, &extra));
    OK(MPI_Op_create(int_max, 1, &mine));
    int v[4] = {me * 100, 1, 2, 3}, w[4];
    OK(MPI_Allreduce(v, w, 4, MPI_INT, mine, MPI_COMM_WORLD));
    CHECK(w[0] == (np - 1) * 100, "allreduce with a user operation: %d", w[0]);
    OK(MPI_Op_free(&mine));
    if (extra != MPI_OP_NULL) OK(MPI_Op_free(&extra));
    MPI_Comm half;
    OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    OK(MPI_Bcast(a, 1, MPI_INT, 0, half));
    OK(MPI_Comm_free(&half));
    OK(MPI_Type_free(&pair));
    if (me == 0) printf("check coll ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *c = argc > 1 ? argv[1] : "ok";
    int x[4] = {1, 2, 3, 4}, y[4];
    if (!strcmp(c, "bad_root")) {
        OK(MPI_Bcast(x, 4, MPI_INT, me, MPI_COMM_WORLD));
    } else if (!strcmp(c, "bad_root_sub")) {
        MPI_Comm half;
        int hm;
        OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
        OK(MPI_Comm_rank(half, &hm));
        OK(MPI_Bcast(x, 4, MPI_INT, me % 2 ? hm : 0, half));
    } else if (!strcmp(c, "bad_op")) {
        OK(MPI_Allreduce(x, y, 4, MPI_INT, me == np - 1 ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD));
    } else if (!strcmp(c, "bad_userop")) {
        MPI_Op mine;
        OK(MPI_Op_create(int_max, 1, &mine));
        OK(MPI_Allreduce(x, y, 4, MPI_INT, me == np - 1 ? MPI_MAX : mine, MPI_COMM_WORLD));
    } else if (!strcmp(c, "bad_kind")) {
        if (me == 0)
            OK(MPI_Bcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD));
        else
            OK(MPI_Barrier(MPI_COMM_WORLD));
    } else if (!strcmp(c, "bad_type")) {
        OK(MPI_Bcast(x, 4, me == np - 1 ? MPI_FLOAT : MPI_INT, 0, MPI_COMM_WORLD));
        if (me == 0) printf("check coll: bad_type ran without a report\n");
    } else {
        ok();
    }
    MPI_Finalize();
    return 0;
}
