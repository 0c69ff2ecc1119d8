/* courier run --check=coll on the collectives beyond the blocking
 * intracommunicator ones: nonblocking (MPI_I*), persistent (MPI_*_init), the
 * v and w forms, neighbourhood and intercommunicator collectives. Four ranks;
 * argv[1] says which:
 *   bad_ikind  MPI_Ibcast on rank 0, MPI_Ireduce on the others;
 *   bad_iop    MPI_Iallreduce, MPI_MAX on the last rank, MPI_SUM elsewhere;
 *   bad_itype  MPI_Ibcast of 4 x MPI_INT, 4 x MPI_FLOAT on the last rank;
 *   bad_pinit  MPI_Bcast_init with each rank naming itself the root, started;
 *   bad_vroot  MPI_Gatherv with the last rank naming another root;
 *   bad_vtype  MPI_Gatherv where the last rank sends 1 x MPI_FLOAT and the
 *              root's counts say 1 x MPI_INT from each rank;
 *   bad_voverlap MPI_Alltoallv receiving 2 ints from each rank at
 *              displacements 0, 1, 2, 3 (elements): the blocks overlap;
 *   bad_woverlap MPI_Ialltoallw with displacements 0, 2, 4, 6 meant as
 *              elements (MPI-CorrBench's coll/nonblocking): 2-byte steps
 *              under 8-byte blocks;
 *   bad_neigh  on a ring: MPI_Neighbor_allgather on rank 0,
 *              MPI_Neighbor_alltoall on the others;
 *   bad_inter  an intercommunicator MPI_Bcast where both members of the
 *              root's group pass MPI_ROOT;
 *   ok         each of them called correctly, a nonblocking collective
 *              started on either side of a message the other rank waits
 *              for first (a blocking agreement would deadlock it); prints
 *              "check coll_more ok". */
#include <string.h>

#include "../mpi/mcheck.h"

static int me, np;

static MPI_Comm ring(void)
{
    MPI_Comm r;
    int dims[1] = {np}, periods[1] = {1};
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &r));
    return r;
}

/* Ranks 0 and 2 (group 0), 1 and 3 (group 1). */
static MPI_Comm inter(void)
{
    MPI_Comm half, x;
    OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 5, &x));
    OK(MPI_Comm_free(&half));
    return x;
}

static void ok(void)
{
    int a[16] = {0}, b[16 * 4], cnt[4], dsp[4];
    MPI_Request r;
    for (int i = 0; i < 16; i++) a[i] = me + i;
    for (int i = 0; i < np; i++) cnt[i] = 2, dsp[i] = 2 * i;
    /* a nonblocking collective and a message: rank 1 waits for the message
     * before it starts the collective */
    if (me == 0) {
        OK(MPI_Ibcast(a, 4, MPI_INT, 0, MPI_COMM_WORLD, &r));
        OK(MPI_Send(a, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
    } else {
        if (me == 1) OK(MPI_Recv(b, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Ibcast(a, 4, MPI_INT, 0, MPI_COMM_WORLD, &r));
    }
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(a[3] == 3, "ibcast gave %d", a[3]);
    OK(MPI_Iallreduce(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Igather(a, 2, MPI_INT, b, 2, MPI_INT, np - 1, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Ialltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Iallgatherv(a, 2, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    /* persistent, started twice */
    OK(MPI_Reduce_init(a, b, 2, MPI_INT, MPI_MAX, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    for (int k = 0; k < 2; k++) {
        OK(MPI_Start(&r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    OK(MPI_Request_free(&r));
    /* v and w forms, blocking */
    OK(MPI_Gatherv(a, 2, MPI_INT, b, cnt, dsp, MPI_INT, 1, MPI_COMM_WORLD));
    OK(MPI_Scatterv(a, cnt, dsp, MPI_INT, b, 2, MPI_INT, 2, MPI_COMM_WORLD));
    OK(MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
    /* neighbourhood */
    MPI_Comm rg = ring();
    OK(MPI_Neighbor_allgather(a, 1, MPI_INT, b, 1, MPI_INT, rg));
    OK(MPI_Ineighbor_alltoall(a, 1, MPI_INT, b, 1, MPI_INT, rg, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Comm_free(&rg));
    /* intercommunicator: group 0's rank 0 is the root */
    MPI_Comm x = inter();
    int root = me % 2 ? 0 : me == 0 ? MPI_ROOT : MPI_PROC_NULL;
    OK(MPI_Bcast(a, 2, MPI_INT, root, x));
    OK(MPI_Ibcast(a, 2, MPI_INT, root, x, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Allreduce(a, b, 2, MPI_INT, MPI_SUM, x));
    OK(MPI_Barrier(x));
    OK(MPI_Comm_free(&x));
    if (me == 0) printf("check coll_more ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *c = argc > 1 ? argv[1] : "ok";
    int x[4] = {1, 2, 3, 4}, y[16], cnt[4] = {1, 1, 1, 1}, dsp[4] = {0, 1, 2, 3};
    MPI_Request r;
    if (!strcmp(c, "bad_ikind")) {
        if (me == 0)
            OK(MPI_Ibcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD, &r));
        else
            OK(MPI_Ireduce(x, y, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else if (!strcmp(c, "bad_iop")) {
        OK(MPI_Iallreduce(x, y, 4, MPI_INT, me == np - 1 ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else if (!strcmp(c, "bad_itype")) {
        OK(MPI_Ibcast(x, 4, me == np - 1 ? MPI_FLOAT : MPI_INT, 0, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else if (!strcmp(c, "bad_pinit")) {
        OK(MPI_Bcast_init(x, 4, MPI_INT, me, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
        OK(MPI_Start(&r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Request_free(&r));
    } else if (!strcmp(c, "bad_vroot")) {
        OK(MPI_Gatherv(x, 1, MPI_INT, y, cnt, dsp, MPI_INT, me == np - 1 ? 1 : 0, MPI_COMM_WORLD));
    } else if (!strcmp(c, "bad_vtype")) {
        OK(MPI_Gatherv(x, 1, me == np - 1 ? MPI_FLOAT : MPI_INT, y, cnt, dsp, MPI_INT, 0,
                       MPI_COMM_WORLD));
        if (me == 0) printf("check coll_more: bad_vtype ran without a report\n");
    } else if (!strcmp(c, "bad_voverlap")) {
        int two[4] = {2, 2, 2, 2};
        OK(MPI_Alltoallv(y, two, dsp, MPI_INT, y + 8, two, dsp, MPI_INT, MPI_COMM_WORLD));
    } else if (!strcmp(c, "bad_woverlap")) {
        int two[4] = {2, 2, 2, 2}, el[4] = {0, 2, 4, 6};
        MPI_Datatype ti[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
        OK(MPI_Ialltoallw(y, two, el, ti, y + 8, two, el, ti, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else if (!strcmp(c, "bad_neigh")) {
        MPI_Comm rg = ring();
        if (me == 0)
            OK(MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, rg));
        else
            OK(MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, rg));
        OK(MPI_Comm_free(&rg));
    } else if (!strcmp(c, "bad_inter")) {
        MPI_Comm xc = inter();
        OK(MPI_Bcast(x, 2, MPI_INT, me % 2 ? 0 : MPI_ROOT, xc));
        OK(MPI_Comm_free(&xc));
    } else {
        ok();
    }
    MPI_Finalize();
    return 0;
}
