/* Error handling: with MPI_ERRORS_RETURN every kind of bad argument returns
 * its code and changes nothing; a user handler is called with the code;
 * Error_string/Error_class describe every code. With an argument, the program
 * makes one mistake under the default MPI_ERRORS_ARE_FATAL (tests/expect.sh
 * checks the one-line message and the exit status). */
#include <string.h>

#include "mcheck.h"

static int handled;
static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handled = *code;
}

#define EXPECT(code, call)                                                                         \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECK(rc_ == (code), "%s returned %d, want %s", #call, rc_, #code);                        \
    } while (0)

static void fatal(const char *what, int me, int np)
{
    int x[4] = {0}, y[4];
    if (!strcmp(what, "rank")) MPI_Send(x, 1, MPI_INT, np + 3, 0, MPI_COMM_WORLD);
    if (!strcmp(what, "tag")) MPI_Send(x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    if (!strcmp(what, "count")) MPI_Send(x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    if (!strcmp(what, "collcount")) MPI_Alltoall(x, -1, MPI_INT, x, 1, MPI_INT, MPI_COMM_WORLD);
    if (!strcmp(what, "freedtype")) { /* a copy of the handle outlives the datatype */
        MPI_Datatype t, kept;
        MPI_Type_contiguous(2, MPI_INT, &t);
        MPI_Type_commit(&t);
        kept = t;
        MPI_Type_free(&t);
        MPI_Send(x, 1, kept, 0, 0, MPI_COMM_WORLD);
    }
    if (!strcmp(what, "freedcomm")) {
        MPI_Comm c, kept;
        MPI_Comm_dup(MPI_COMM_SELF, &c);
        kept = c;
        MPI_Comm_free(&c);
        MPI_Barrier(kept);
    }
    if (!strcmp(what, "type")) MPI_Send(x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    if (!strcmp(what, "comm")) MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    if (!strcmp(what, "root")) MPI_Bcast(x, 1, MPI_INT, np, MPI_COMM_WORLD);
    if (!strcmp(what, "alias")) MPI_Allreduce(x, x, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!strcmp(what, "op")) MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD);
    if (!strcmp(what, "colltruncate")) MPI_Bcast(x, me == 1 ? 4 : 2, MPI_INT, 1, MPI_COMM_WORLD);
    if (!strcmp(what, "truncate")) {
        if (me == 1) MPI_Send(x, 4, MPI_INT, 0, 0, MPI_COMM_WORLD);
        if (me == 0) MPI_Recv(y, 2, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (!strcmp(what, "uncommitted")) {
        MPI_Datatype t;
        MPI_Type_contiguous(2, MPI_INT, &t);
        MPI_Send(x, 1, t, 0, 0, MPI_COMM_WORLD);
    }
    if (!strcmp(what, "noinit")) MPI_Finalize();
    if (!strcmp(what, "hang")) { /* rank 0 only; the others wait in MPI_Barrier */
        MPI_Request r;
        MPI_Issend(x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    if (!strcmp(what, "lockhang")) { /* 1 holds 0's lock into a barrier 0 never reaches */
        MPI_Win w;
        MPI_Win_create(x, sizeof x, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
        if (me == 1) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
    }
    if (!strcmp(what, "win")) {
        MPI_Win w;
        MPI_Win_create(x, sizeof x, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
        MPI_Put(x, 1, MPI_INT, 1, 0, 1, MPI_INT, w); /* no epoch open */
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "noinit")) {
        int x = 0;
        MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    int me, np;
    OK(MPI_Init(&argc, &argv));
    if (argc > 1 && !strcmp(argv[1], "afterfin")) {
        OK(MPI_Finalize());
        MPI_Barrier(MPI_COMM_WORLD); /* no MPI call is allowed now */
        return 0;
    }
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    if (argc > 1 && strncmp(argv[1], "courier-test-", 13)) {
        if (me == 0 || !strcmp(argv[1], "root") || !strcmp(argv[1], "alias") ||
            !strcmp(argv[1], "op") || !strcmp(argv[1], "truncate") || !strcmp(argv[1], "win") ||
            !strcmp(argv[1], "colltruncate") || !strcmp(argv[1], "lockhang"))
            fatal(argv[1], me, np);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
    MPI_Request rq;
    MPI_Status st;
    EXPECT(MPI_ERR_RANK, MPI_Send(x, 1, MPI_INT, np, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_RANK, MPI_Send(x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_RANK, MPI_Recv(y, 1, MPI_INT, np + 1, 0, MPI_COMM_WORLD, &st));
    EXPECT(MPI_ERR_TAG, MPI_Send(x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TAG, MPI_Irecv(y, 1, MPI_INT, 0, -3, MPI_COMM_WORLD, &rq));
    EXPECT(MPI_ERR_COUNT, MPI_Send(x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_COUNT, MPI_Bcast(x, -2, MPI_INT, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Send(x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Send(x, 1, (MPI_Datatype)12345, 0, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Send(x, 1, MPI_COMM_WORLD, 0, 0, MPI_COMM_WORLD));
    MPI_Datatype unc;
    OK(MPI_Type_contiguous(2, MPI_INT, &unc));
    EXPECT(MPI_ERR_TYPE, MPI_Send(x, 1, unc, 0, 0, MPI_COMM_WORLD));
    OK(MPI_Type_free(&unc));
    EXPECT(MPI_ERR_TYPE, MPI_Type_free(&unc));
    EXPECT(MPI_ERR_TYPE, MPI_Type_size(MPI_DATATYPE_NULL, y));
    EXPECT(MPI_ERR_COMM, MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Send(x, 1, MPI_INT, 0, 0, MPI_INT));
    EXPECT(MPI_ERR_COMM, MPI_Barrier(MPI_COMM_NULL));
    MPI_Comm c = MPI_COMM_WORLD;
    EXPECT(MPI_ERR_COMM, MPI_Comm_free(&c));
    EXPECT(MPI_ERR_ROOT, MPI_Bcast(x, 1, MPI_INT, np, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_ROOT, MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_ROOT, MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, np, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_BUFFER, MPI_Allreduce(x, x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_BUFFER,
           MPI_Sendrecv(x, 4, MPI_INT, 0, 0, x + 2, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &st));
    EXPECT(MPI_ERR_BUFFER, MPI_Allgather(x, 1, MPI_INT, x, 1, MPI_INT, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_BUFFER, MPI_Send(NULL, 3, MPI_INT, 0, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_BUFFER, MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_BUFFER, MPI_Bsend(x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD)); /* no buffer */
    char small[MPI_BSEND_OVERHEAD + 4];
    void *bp;
    int bs;
    OK(MPI_Buffer_attach(small, sizeof small));
    EXPECT(MPI_ERR_BUFFER, MPI_Bsend(x, 8, MPI_INT, 0, 0, MPI_COMM_WORLD)); /* too big */
    OK(MPI_Bsend(x, 1, MPI_INT, me, 77, MPI_COMM_WORLD));
    OK(MPI_Recv(y, 1, MPI_INT, me, 77, MPI_COMM_WORLD, &st));
    OK(MPI_Buffer_detach(&bp, &bs));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_WCHAR, MPI_SUM, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD));
    MPI_Op sum = MPI_SUM;
    EXPECT(MPI_ERR_OP, MPI_Op_free(&sum));
    rq = 0x4abcdef1;
    EXPECT(MPI_ERR_REQUEST, MPI_Wait(&rq, &st));
    OK(MPI_Isend(x, 1, MPI_INT, me, 5, MPI_COMM_WORLD, &rq));
    MPI_Request copy = rq;
    OK(MPI_Wait(&rq, &st));
    EXPECT(MPI_ERR_REQUEST, MPI_Wait(&copy, &st)); /* already completed */
    OK(MPI_Recv(y, 1, MPI_INT, me, 5, MPI_COMM_WORLD, &st));
    OK(MPI_Isend(x, 1, MPI_INT, me, 6, MPI_COMM_WORLD, &rq));
    OK(MPI_Cancel(&rq)); /* an eager send to oneself, already delivered: not cancelled */
    OK(MPI_Wait(&rq, &st));
    int cancelled = -1;
    OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled == 0, "a send said cancelled");
    /* truncation: the message is longer than the buffer */
    OK(MPI_Recv(y, 1, MPI_INT, me, 6, MPI_COMM_WORLD, &st));
    OK(MPI_Send(x, 4, MPI_INT, me, 60, MPI_COMM_WORLD));
    memset(y, 0, sizeof y);
    EXPECT(MPI_ERR_TRUNCATE, MPI_Recv(y, 2, MPI_INT, me, 60, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_ERROR == MPI_ERR_TRUNCATE && y[0] == 1 && y[1] == 2 && y[2] == 0, "truncated");
    /* Waitall reports per request */
    MPI_Request two[2];
    MPI_Status sts[2];
    OK(MPI_Send(x, 4, MPI_INT, me, 8, MPI_COMM_WORLD));
    OK(MPI_Send(x, 1, MPI_INT, me, 9, MPI_COMM_WORLD));
    OK(MPI_Irecv(y, 1, MPI_INT, me, 8, MPI_COMM_WORLD, &two[0]));
    OK(MPI_Irecv(y + 4, 1, MPI_INT, me, 9, MPI_COMM_WORLD, &two[1]));
    EXPECT(MPI_ERR_IN_STATUS, MPI_Waitall(2, two, sts));
    CHECK(sts[0].MPI_ERROR == MPI_ERR_TRUNCATE && sts[1].MPI_ERROR == MPI_SUCCESS, "in status");
    /* collectives whose ranks disagree on the amount of data: the receiving
     * side returns MPI_ERR_TRUNCATE through the handler, and the job goes on */
    if (np > 1) {
        int big = me == 0 ? 2 : 1; /* the root sends 2 ints, the others take 1 */
        EXPECT(me ? MPI_ERR_TRUNCATE : MPI_SUCCESS, MPI_Bcast(x, big, MPI_INT, 0, MPI_COMM_WORLD));
        int many = me == 0 ? 1 : 2; /* the others send 2 ints, the root takes 1 each */
        EXPECT(me ? MPI_SUCCESS : MPI_ERR_TRUNCATE,
               MPI_Gather(x, many, MPI_INT, y, 1, MPI_INT, 0, MPI_COMM_WORLD));
        OK(MPI_Igather(x, many, MPI_INT, y, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq));
        EXPECT(me ? MPI_SUCCESS : MPI_ERR_TRUNCATE, MPI_Wait(&rq, &st));
        int want = me == 0 ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
        OK(MPI_Ibcast(x, big, MPI_INT, 0, MPI_COMM_WORLD, &rq));
        EXPECT(want, MPI_Wait(&rq, MPI_STATUS_IGNORE));
        OK(MPI_Barrier(MPI_COMM_WORLD)); /* still in step */
        int one = 1, sum = 0;
        OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(sum == np, "allreduce after the truncations: %d", sum);
    }
    /* groups, comm creation, types */
    MPI_Group g;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
    MPI_Group ng;
    int bad[2] = {0, 0};
    EXPECT(np > 1 ? MPI_ERR_RANK : MPI_ERR_ARG, MPI_Group_incl(g, 2, bad, &ng));
    int out[1] = {np};
    EXPECT(MPI_ERR_RANK, MPI_Group_incl(g, 1, out, &ng));
    EXPECT(MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, y));
    OK(MPI_Group_free(&g));
    EXPECT(MPI_ERR_GROUP, MPI_Group_free(&g));
    MPI_Comm nc;
    EXPECT(MPI_ERR_ARG, MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &nc));
    EXPECT(MPI_ERR_COUNT, MPI_Type_contiguous(-1, MPI_INT, &unc));
    EXPECT(MPI_ERR_TYPE, MPI_Type_free(&(MPI_Datatype){MPI_INT}));
    int kv = 0x1234;
    EXPECT(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, kv, NULL));
    int pos = 0;
    char pk[4];
    EXPECT(MPI_ERR_TRUNCATE, MPI_Pack(x, 2, MPI_INT, pk, 4, &pos, MPI_COMM_WORLD));
    CHECK(pos == 0, "failed pack moved nothing");
    /* a user handler sees the code */
    MPI_Errhandler mine;
    OK(MPI_Comm_create_errhandler(handler, &mine));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine));
    EXPECT(MPI_ERR_TAG, MPI_Send(x, 1, MPI_INT, 0, -9, MPI_COMM_WORLD));
    CHECK(handled == MPI_ERR_TAG, "handler got %d", handled);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&mine));
    /* dup inherits the handler */
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    EXPECT(MPI_ERR_RANK, MPI_Send(x, 1, MPI_INT, np, 0, d));
    OK(MPI_Comm_free(&d));
    /* every code has a string and is its own class */
    for (int code = MPI_SUCCESS; code <= MPI_ERR_UNSUPPORTED_OPERATION; code++) {
        char s[MPI_MAX_ERROR_STRING];
        int len, cls;
        OK(MPI_Error_string(code, s, &len));
        CHECK(len > 0 && (int)strlen(s) == len, "string of %d", code);
        OK(MPI_Error_class(code, &cls));
        CHECK(cls == code, "class");
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Finalize());
    if (me == 0) printf("mpi errors: ok\n");
    return 0;
}
