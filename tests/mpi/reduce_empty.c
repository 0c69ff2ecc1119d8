/* Reductions with a user operation over a datatype with no data
 * (MPI_Type_vector(0, ...), MPI_Type_contiguous(0, ...)): every form succeeds
 * and leaves the buffers as they were, as with a count of 0 (courier refused
 * them as "data outside [0, extent)"; MPICH's cxx suite's ureducelocal). */
#include "mcheck.h"

static int calls;

static void uop(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)dt;
    calls += *len;
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    MPI_Op op;
    MPI_Datatype v, c;
    MPI_Request rq;
    OK(MPI_Op_create(uop, 1, &op));
    OK(MPI_Type_vector(0, 1, 2, MPI_DOUBLE, &v));
    OK(MPI_Type_commit(&v));
    OK(MPI_Type_contiguous(0, MPI_DOUBLE, &c));
    OK(MPI_Type_commit(&c));
    OK(MPI_Reduce_local(a, b, 1, v, op));
    OK(MPI_Reduce_local(a, b, 3, c, op));
    OK(MPI_Allreduce(a, b, 1, v, op, MPI_COMM_WORLD));
    OK(MPI_Reduce(a, b, 3, c, op, 0, MPI_COMM_WORLD));
    OK(MPI_Iallreduce(a, b, 2, v, op, MPI_COMM_WORLD, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    OK(MPI_Reduce_scatter_block(a, b, 1, c, op, MPI_COMM_WORLD));
    OK(MPI_Scan(a, b, 1, v, op, MPI_COMM_WORLD));
    OK(MPI_Exscan(a, b, 1, v, op, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++) CHECK(a[i] == i + 1 && b[i] == i + 5, "buffer %d changed", i);
    CHECK(calls == 0, "the operation combined %d elements of no data", calls);
    OK(MPI_Type_free(&v));
    OK(MPI_Type_free(&c));
    OK(MPI_Op_free(&op));
    int me;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    if (me == 0) printf("reduce empty: ok\n");
    OK(MPI_Finalize());
    return 0;
}
