/* courier run --check=coll: the v and w forms' blocks compared pair by pair
 * (blocking, nonblocking, persistent), and a blocking collective met by a
 * nonblocking or persistent one. Three ranks or more; argv[1] says which:
 *   bad_a2av   MPI_Alltoallv: rank 0 receives MPI_FLOAT, the others send
 *              MPI_INT (rank 0 sends itself nothing);
 *   bad_a2aw   MPI_Alltoallw: the last rank sends rank 0 an MPI_FLOAT where
 *              rank 0 receives an MPI_INT, every other block MPI_INT;
 *   bad_igatherv   MPI_Igatherv: the last rank sends 1 x MPI_FLOAT, the
 *              root's counts say 1 x MPI_INT from each rank;
 *   bad_iscatterv  MPI_Iscatterv: the root sends MPI_INT, the last rank
 *              receives 1 x MPI_FLOAT;
 *   bad_iallgatherv  MPI_Iallgatherv: each rank sends 1 x MPI_INT, rank 0's
 *              counts say 2 from rank 1;
 *   bad_ia2av, bad_ia2aw  as bad_a2av, bad_a2aw with MPI_Ialltoallv/w;
 *   bad_pa2av  as bad_a2av with MPI_Alltoallv_init, started;
 *   bad_bnb    MPI_Bcast on rank 0, MPI_Ibcast on the others;
 *   bad_nbb    MPI_Ibcast on rank 0, MPI_Bcast on the others;
 *   bad_pb     MPI_Bcast on rank 0, MPI_Bcast_init started on the others;
 *   ok         each of them called correctly (different counts per pair,
 *              types that spell the same signature, MPI_IN_PLACE, a blocking
 *              and a nonblocking broadcast one after the other); prints
 *              "check coll_pair ok". */
#include <stdbool.h>
#include <string.h>

#include "../mpi/mcheck.h"

#define MAXP 16

static int me, np;
static MPI_Datatype two_int; /* 2 x MPI_INT: what 2 MPI_INTs receive */

static void wait(MPI_Request *r)
{
    OK(MPI_Wait(r, MPI_STATUS_IGNORE));
}

/* Alltoallv/w with one block of 1 element each way; rank 0 nothing to itself
 * (form: 0 blocking, 1 nonblocking, 2 persistent; w: the w form). In bad: rank
 * 0 receives MPI_FLOAT (v), or the last rank sends rank 0 an MPI_FLOAT (w). */
static void a2a(int form, bool w, bool bad)
{
    int a[MAXP], b[MAXP], sc[MAXP], rc[MAXP], d[MAXP];
    MPI_Datatype st[MAXP], rt[MAXP];
    for (int i = 0; i < np; i++) {
        a[i] = me * 100 + i;
        sc[i] = rc[i] = me == 0 && i == 0 ? 0 : 1;
        d[i] = i;
        st[i] = rt[i] = MPI_INT;
    }
    MPI_Datatype rtype = bad && !w && me == 0 ? MPI_FLOAT : MPI_INT;
    if (bad && w && me == np - 1) st[0] = MPI_FLOAT;
    int dw[MAXP];
    for (int i = 0; i < np; i++) dw[i] = i * (int)sizeof(int);
    MPI_Request r;
    if (!w && form == 0) OK(MPI_Alltoallv(a, sc, d, MPI_INT, b, rc, d, rtype, MPI_COMM_WORLD));
    if (!w && form == 1) OK(MPI_Ialltoallv(a, sc, d, MPI_INT, b, rc, d, rtype, MPI_COMM_WORLD, &r));
    if (!w && form == 2)
        OK(MPI_Alltoallv_init(a, sc, d, MPI_INT, b, rc, d, rtype, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &r));
    if (w && form == 0) OK(MPI_Alltoallw(a, sc, dw, st, b, rc, dw, rt, MPI_COMM_WORLD));
    if (w && form == 1) OK(MPI_Ialltoallw(a, sc, dw, st, b, rc, dw, rt, MPI_COMM_WORLD, &r));
    if (form == 2) OK(MPI_Start(&r));
    if (form) wait(&r);
    if (form == 2) OK(MPI_Request_free(&r));
    for (int i = 0; i < np && !bad; i++)
        if (rc[i]) CHECK(b[i] == i * 100 + me, "alltoall block %d is %d", i, b[i]);
}

static void ok(void)
{
    int a[4 * MAXP], b[4 * MAXP], cnt[MAXP], dsp[MAXP], sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP];
    MPI_Datatype st[MAXP], rt[MAXP];
    MPI_Request r;
    for (int i = 0; i < 4 * MAXP; i++) a[i] = me * 1000 + i;
    for (int form = 0; form < 3; form++) a2a(form, false, false);
    a2a(0, true, false);
    a2a(1, true, false);
    /* different counts per pair: rank i sends rank j (i + j) % 3 ints */
    for (int j = 0, s = 0, t = 0; j < np; j++) {
        sc[j] = (me + j) % 3, sd[j] = s, s += sc[j];
        rc[j] = (j + me) % 3, rd[j] = t, t += rc[j];
    }
    OK(MPI_Alltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Ialltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, MPI_COMM_WORLD, &r));
    wait(&r);
    /* the same signature spelled two ways: 1 x two_int sent, 2 x MPI_INT received */
    for (int j = 0; j < np; j++) {
        sc[j] = 1, sd[j] = 2 * j * (int)sizeof(int), st[j] = two_int;
        rc[j] = 2, rd[j] = 2 * j * (int)sizeof(int), rt[j] = MPI_INT;
    }
    OK(MPI_Alltoallw(a, sc, sd, st, b, rc, rd, rt, MPI_COMM_WORLD));
    OK(MPI_Ialltoallw(a, sc, sd, st, b, rc, rd, rt, MPI_COMM_WORLD, &r));
    wait(&r);
    /* in place */
    for (int j = 0; j < np; j++) cnt[j] = 1 + j % 2, dsp[j] = 2 * j;
    OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Iallgatherv(a, cnt[me], MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &r));
    wait(&r);
    for (int j = 0; j < np; j++) rc[j] = 2, rd[j] = 2 * j; /* in place: the same both ways */
    OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, b, rc, rd, MPI_INT,
                     MPI_COMM_WORLD));
    /* rooted v forms, each root in turn; MPI_BYTE matches anything */
    OK(MPI_Igatherv(a, cnt[me], MPI_INT, b, cnt, dsp, MPI_INT, 1, MPI_COMM_WORLD, &r));
    wait(&r);
    OK(MPI_Iscatterv(a, cnt, dsp, MPI_INT, b, cnt[me], MPI_INT, 2, MPI_COMM_WORLD, &r));
    wait(&r);
    OK(MPI_Gatherv(a, cnt[me] * (int)sizeof(int), MPI_BYTE, b, cnt, dsp, MPI_INT, 0,
                   MPI_COMM_WORLD));
    OK(MPI_Scatterv_init(a, cnt, dsp, MPI_INT, b, cnt[me], MPI_INT, 0, MPI_COMM_WORLD,
                         MPI_INFO_NULL, &r));
    for (int k = 0; k < 2; k++) {
        OK(MPI_Start(&r));
        wait(&r);
    }
    OK(MPI_Request_free(&r));
    /* a blocking and a nonblocking broadcast, one after the other */
    OK(MPI_Bcast(a, 4, MPI_INT, 0, MPI_COMM_WORLD));
    OK(MPI_Ibcast(a, 4, MPI_INT, 1, MPI_COMM_WORLD, &r));
    wait(&r);
    if (me == 2) a[3] = 2003;
    OK(MPI_Bcast(a, 4, MPI_INT, 2, MPI_COMM_WORLD));
    CHECK(a[3] == 2003, "the last broadcast gave %d", a[3]);
    if (me == 0) printf("check coll_pair ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np >= 3 && np <= MAXP, "run with 3..%d ranks, not %d", MAXP, np);
    OK(MPI_Type_contiguous(2, MPI_INT, &two_int));
    OK(MPI_Type_commit(&two_int));
    const char *c = argc > 1 ? argv[1] : "ok";
    int x[MAXP], y[2 * MAXP], cnt[MAXP], dsp[MAXP];
    for (int i = 0; i < np; i++) x[i] = i, cnt[i] = 1, dsp[i] = i;
    MPI_Request r;
    bool last = me == np - 1;
    if (!strcmp(c, "bad_a2av")) {
        a2a(0, false, true);
    } else if (!strcmp(c, "bad_a2aw")) {
        a2a(0, true, true);
    } else if (!strcmp(c, "bad_ia2av")) {
        a2a(1, false, true);
    } else if (!strcmp(c, "bad_ia2aw")) {
        a2a(1, true, true);
    } else if (!strcmp(c, "bad_pa2av")) {
        a2a(2, false, true);
    } else if (!strcmp(c, "bad_igatherv")) {
        OK(MPI_Igatherv(x, 1, last ? MPI_FLOAT : MPI_INT, y, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD,
                        &r));
        wait(&r);
    } else if (!strcmp(c, "bad_iscatterv")) {
        OK(MPI_Iscatterv(x, cnt, dsp, MPI_INT, y, 1, last ? MPI_FLOAT : MPI_INT, 0, MPI_COMM_WORLD,
                         &r));
        wait(&r);
    } else if (!strcmp(c, "bad_iallgatherv")) {
        if (me == 0) cnt[1] = 2, dsp[2] = 3; /* (the others' displacements follow on) */
        for (int i = 3; me == 0 && i < np; i++) dsp[i] = i + 1;
        OK(MPI_Iallgatherv(x, 1, MPI_INT, y, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &r));
        wait(&r);
    } else if (!strcmp(c, "bad_bnb") || !strcmp(c, "bad_nbb")) {
        bool blocking = (me == 0) == !strcmp(c, "bad_bnb");
        if (blocking) {
            OK(MPI_Bcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD));
        } else {
            OK(MPI_Ibcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD, &r));
            wait(&r);
        }
    } else if (!strcmp(c, "bad_pb")) {
        if (me == 0) {
            OK(MPI_Bcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD));
        } else {
            OK(MPI_Bcast_init(x, 4, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
            OK(MPI_Start(&r));
            wait(&r);
            OK(MPI_Request_free(&r));
        }
    } else {
        ok();
    }
    if (strcmp(c, "ok") && me == 0) printf("check coll_pair: %s ran without a report\n", c);
    OK(MPI_Type_free(&two_int));
    MPI_Finalize();
    return 0;
}
