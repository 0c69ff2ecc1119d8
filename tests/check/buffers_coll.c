/* courier run --check=buffers: the receive buffer of a pending nonblocking or
 * persistent collective written by the program before its wait (MPI-4.1
 * sections 6.12, 6.13), and the correct twin. Three ranks; argv[1] says
 * which collective goes wrong and where (as the MPI Bugs Initiative's
 * CollLocalConcurrency programs do: "buf[0]++" after the call):
 *   bad_ibcast      rank 1 (not the root) writes its MPI_Ibcast buffer;
 *   bad_iallreduce  rank 1 its MPI_Iallreduce result;
 *   bad_inplace     rank 2 its MPI_Iallreduce's MPI_IN_PLACE buffer;
 *   bad_ireduce     the root (0) its MPI_Ireduce result;
 *   bad_igather     the root its MPI_Igather receive buffer;
 *   bad_iexscan     rank 1 its MPI_Iexscan result;
 *   bad_iredscat    rank 1 its MPI_Ireduce_scatter_block result;
 *   bad_ialltoall, bad_ialltoallv, bad_iallgatherv  rank 1 its receive buffer;
 *   bad_pcoll       rank 1 the result of its MPI_Allreduce_init's second start;
 *   bad_inter       rank 2 its MPI_Ibcast buffer on an intercommunicator;
 *   bad_neighbor    rank 1 its MPI_Ineighbor_allgather receive buffer;
 *   ok   every one of them with the buffers written only after the wait (the
 *        results checked: they land at completion), a v form's gap between
 *        blocks written while pending (not the collective's), a persistent
 *        one's in-place buffer changed between its starts, and a vector
 *        datatype's receive; prints "check buffers coll ok". */
#include <stdbool.h>
#include <string.h>

#include "../mpi/mcheck.h"

static const char *mode = "ok";
static int me, np;

/* This rank makes the erroneous write of 'what'. */
static bool bad(const char *what, int rank)
{
    return !strcmp(mode, what) && me == rank;
}

static void wait1(MPI_Request *r)
{
    OK(MPI_Wait(r, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc > 1) mode = argv[1];
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request r;
    int b[4], s[8], v[8], x;

    for (int i = 0; i < 4; i++) b[i] = me == 0 ? 10 + i : -1;
    OK(MPI_Ibcast(b, 4, MPI_INT, 0, w, &r));
    if (bad("bad_ibcast", 1)) b[0]++; /* erroneous: pending */
    wait1(&r);
    CHECK(b[0] == 10 && b[3] == 13, "ibcast got %d %d", b[0], b[3]);
    b[0] = 0; /* allowed: complete */

    x = me + 1;
    int sum = -5;
    OK(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, w, &r));
    if (bad("bad_iallreduce", 1)) sum++;
    wait1(&r);
    CHECK(sum == np * (np + 1) / 2, "iallreduce got %d", sum);

    int io = me + 1;
    OK(MPI_Iallreduce(MPI_IN_PLACE, &io, 1, MPI_INT, MPI_SUM, w, &r));
    if (bad("bad_inplace", 2)) io = 0;
    wait1(&r);
    CHECK(io == np * (np + 1) / 2, "in-place iallreduce got %d", io);

    sum = -5;
    OK(MPI_Ireduce(&x, &sum, 1, MPI_INT, MPI_MAX, 0, w, &r));
    if (bad("bad_ireduce", 0)) sum++;
    wait1(&r);
    CHECK(me != 0 || sum == np, "ireduce got %d", sum);

    memset(v, 0xff, sizeof v);
    OK(MPI_Igather(&x, 1, MPI_INT, v, 1, MPI_INT, 0, w, &r));
    if (bad("bad_igather", 0)) v[1]++;
    wait1(&r);
    for (int i = 0; me == 0 && i < np; i++) CHECK(v[i] == i + 1, "igather got v[%d] %d", i, v[i]);

    int ex = -7;
    OK(MPI_Iexscan(&x, &ex, 1, MPI_INT, MPI_SUM, w, &r));
    if (bad("bad_iexscan", 1)) ex++;
    wait1(&r);
    CHECK(me == 0 || ex == me * (me + 1) / 2, "iexscan got %d", ex);

    for (int i = 0; i < np; i++) s[i] = i + me;
    int rs = -1;
    OK(MPI_Ireduce_scatter_block(s, &rs, 1, MPI_INT, MPI_SUM, w, &r));
    if (bad("bad_iredscat", 1)) rs++;
    wait1(&r);
    CHECK(rs == np * me + np * (np - 1) / 2, "ireduce_scatter_block got %d", rs);

    for (int i = 0; i < np; i++) s[i] = 100 * me + i;
    memset(v, 0xff, sizeof v);
    OK(MPI_Ialltoall(s, 1, MPI_INT, v, 1, MPI_INT, w, &r));
    if (bad("bad_ialltoall", 1)) v[0]++;
    wait1(&r);
    for (int i = 0; i < np; i++) CHECK(v[i] == 100 * i + me, "ialltoall got v[%d] %d", i, v[i]);

    /* the v forms: block i at 2 * i, a gap after each, written while pending */
    int cnt[8], dsp[8], sd[8];
    for (int i = 0; i < np; i++) {
        cnt[i] = 1;
        dsp[i] = 2 * i;
        sd[i] = i;
    }
    memset(v, 0xff, sizeof v);
    OK(MPI_Ialltoallv(s, cnt, sd, MPI_INT, v, cnt, dsp, MPI_INT, w, &r));
    v[1] = 77; /* allowed: a gap, not part of the receive buffer */
    if (bad("bad_ialltoallv", 1)) v[0]++;
    wait1(&r);
    for (int i = 0; i < np; i++)
        CHECK(v[2 * i] == 100 * i + me, "ialltoallv got v[%d] %d", 2 * i, v[2 * i]);
    CHECK(v[1] == 77, "ialltoallv wrote the gap: %d", v[1]);

    memset(v, 0xff, sizeof v);
    OK(MPI_Iallgatherv(&x, 1, MPI_INT, v, cnt, dsp, MPI_INT, w, &r));
    v[3] = 78;
    if (bad("bad_iallgatherv", 1)) v[0]++;
    wait1(&r);
    for (int i = 0; i < np; i++) CHECK(v[2 * i] == i + 1, "iallgatherv got v[%d]", 2 * i);
    CHECK(v[3] == 78, "iallgatherv wrote the gap: %d", v[3]);

    /* a persistent one, in place: the buffer written between the starts */
    OK(MPI_Allreduce_init(MPI_IN_PLACE, &io, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &r));
    for (int k = 0; k < 2; k++) {
        io = k + me; /* allowed: inactive */
        OK(MPI_Start(&r));
        if (bad("bad_pcoll", 1) && k == 1) io = 3;
        int flag = 0;
        while (!flag) OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        CHECK(io == np * k + np * (np - 1) / 2, "allreduce_init start %d got %d", k, io);
    }
    OK(MPI_Request_free(&r));

    /* a vector's receive (staged by the collective itself) */
    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    memset(v, 0, sizeof v);
    if (me == 0) v[0] = 5, v[2] = 6;
    OK(MPI_Ibcast(v, 1, vec, 0, w, &r));
    wait1(&r);
    CHECK(v[0] == 5 && v[2] == 6 && v[1] == 0, "vector ibcast got %d %d %d", v[0], v[1], v[2]);
    OK(MPI_Type_free(&vec));

    /* an intercommunicator: rank 0 against ranks 1 and 2 */
    MPI_Comm half, inter;
    OK(MPI_Comm_split(w, me == 0, me, &half));
    OK(MPI_Intercomm_create(half, 0, w, me == 0 ? 1 : 0, 9, &inter));
    b[0] = me == 0 ? 42 : -1;
    int root = me == 0 ? MPI_ROOT : 0;
    OK(MPI_Ibcast(b, 1, MPI_INT, root, inter, &r));
    if (bad("bad_inter", 2)) b[0]++;
    wait1(&r);
    CHECK(b[0] == 42, "intercommunicator ibcast got %d", b[0]);
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&half));

    /* a neighbourhood collective on a ring */
    MPI_Comm ring;
    int dims = np, per = 1;
    OK(MPI_Cart_create(w, 1, &dims, &per, 0, &ring));
    int nb[2] = {-1, -1};
    OK(MPI_Ineighbor_allgather(&x, 1, MPI_INT, nb, 1, MPI_INT, ring, &r));
    if (bad("bad_neighbor", 1)) nb[1]++;
    wait1(&r);
    CHECK(nb[0] == (me + np - 1) % np + 1 && nb[1] == (me + 1) % np + 1, "ineighbor got %d %d",
          nb[0], nb[1]);
    OK(MPI_Comm_free(&ring));

    if (me == 0 && strcmp(mode, "ok"))
        printf("check buffers coll: %s ran without a report\n", mode);
    else if (me == 0)
        printf("check buffers coll ok\n");
    MPI_Finalize();
    return 0;
}
