/* Erroneous calls that must come back as errors (MPI_ERRORS_RETURN), not a
 * crash, a hang or a success, found by the MPICH suite's errors directory:
 *  - MPI_Reduce_local with MPI_IN_PLACE on either side, or the same buffer
 *    twice: MPI_ERR_BUFFER (it crashed);
 *  - a collective whose send buffer is the calling rank's own block of the
 *    receive buffer (allgather(v), gather(v) and scatter(v) at the root, and
 *    their nonblocking forms): MPI_ERR_BUFFER on every rank, before anything
 *    is sent (only the same address was caught, so ranks other than 0 went
 *    on into the collective and the job deadlocked);
 *  - MPI_Get_elements / MPI_Get_count of a message that ends inside a basic
 *    element of the type asked about: MPI_UNDEFINED;
 *  - MPI_Comm_dup whose attribute copy callback fails: the callback's code
 *    comes back (it was MPI_ERR_OTHER);
 *  - MPI_Group_range_incl/excl, _incl/_excl, _union, _difference,
 *    _intersection with a NULL newgroup: MPI_ERR_ARG;
 *  - sessions: an invalid "thread_level" value, a NULL pset_name with a
 *    non-zero length, a NULL newcomm for MPI_Comm_create_from_group (whose
 *    error handler argument is called);
 *  - MPI_T_init_thread(MPI_THREAD_MULTIPLE) before MPI_Init provides it;
 *  - a receive whose message is not a whole number of the receive datatype's
 *    basic elements (3 chars into ints: the MPICH suite's truncmsg2), through
 *    every receive path (MPI_Recv of a contiguous and of a derived type,
 *    MPI_Irecv + MPI_Wait / MPI_Waitall, MPI_Sendrecv, a persistent receive,
 *    MPI_Mrecv): MPI_ERR_TYPE, the bytes still delivered; a length that is a
 *    whole number of elements but not of the type (20 bytes as MPI_DOUBLE_INT
 *    pairs, 5 bytes as a struct of a char and an int) is no error.
 * Run at 1-4 ranks; rank 0 prints "errors_detect ok". */
#include <string.h>

#include "mcheck.h"

static int cls(int code)
{
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

#define FAILS(call, want)                                                                          \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECK(rc_ != MPI_SUCCESS && cls(rc_) == (want), "%s gave class %d, want %s", #call,        \
              rc_ == MPI_SUCCESS ? 0 : cls(rc_), #want);                                           \
    } while (0)

static int copy_err, copy_calls;
static int copy_fails(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)key, (void)extra, (void)in, (void)out;
    *flag = 1;
    copy_calls++;
    return copy_err;
}

static int eh_calls;
static void eh(MPI_Comm *c, int *err, ...)
{
    (void)c, (void)err;
    eh_calls++;
}

static void collectives(int me, int np)
{
    int *b = calloc((size_t)np * 2, sizeof *b), *counts = malloc((size_t)np * sizeof *counts),
        *displs = malloc((size_t)np * sizeof *displs);
    for (int i = 0; i < np; i++) counts[i] = 2, displs[i] = 2 * i;
    int *own = b + 2 * me; /* this rank's block of the receive buffer */
    MPI_Request r = MPI_REQUEST_NULL;
    FAILS(MPI_Allgather(own, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    FAILS(MPI_Allgatherv(own, 2, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD),
          MPI_ERR_BUFFER);
    FAILS(MPI_Iallgather(own, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
    FAILS(MPI_Iallgatherv(own, 2, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD, &r),
          MPI_ERR_BUFFER);
    if (me == 0) { /* rooted: only the root has a receive (send) buffer to alias */
        FAILS(MPI_Gather(own, 2, MPI_INT, b, 2, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        FAILS(MPI_Gatherv(own, 2, MPI_INT, b, counts, displs, MPI_INT, 0, MPI_COMM_WORLD),
              MPI_ERR_BUFFER);
        FAILS(MPI_Scatter(b, 2, MPI_INT, own, 2, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        FAILS(MPI_Scatterv(b, counts, displs, MPI_INT, own, 2, MPI_INT, 0, MPI_COMM_WORLD),
              MPI_ERR_BUFFER);
        FAILS(MPI_Igather(own, 2, MPI_INT, b, 2, MPI_INT, 0, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
        FAILS(MPI_Iscatterv(b, counts, displs, MPI_INT, own, 2, MPI_INT, 0, MPI_COMM_WORLD, &r),
              MPI_ERR_BUFFER);
    }
    CHECK(r == MPI_REQUEST_NULL, "a refused nonblocking collective made a request");
    /* what is allowed still works: MPI_IN_PLACE, and a block elsewhere */
    for (int i = 0; i < 2 * np; i++) b[i] = i / 2 == me ? me + 1 : -1;
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 2, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < 2 * np; i++)
        CHECK(b[i] == i / 2 + 1, "allgather in place: b[%d]=%d", i, b[i]);
    free(b), free(counts), free(displs);
}

static void local_reduce(int np)
{
    int in[4] = {1, 2, 3, 4}, io[4] = {10, 20, 30, 40};
    OK(MPI_Reduce_local(in, io, 4, MPI_INT, MPI_SUM));
    CHECK(io[3] == 44, "reduce_local: %d", io[3]);
    FAILS(MPI_Reduce_local(MPI_IN_PLACE, io, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    FAILS(MPI_Reduce_local(in, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    FAILS(MPI_Reduce_local(io, io, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    CHECK(io[3] == 44, "a refused reduce_local changed its buffer: %d", io[3]);
    (void)np;
}

static void counts(void)
{
    /* 33 chars, asked about as 4 x MPI_DOUBLE_INT: 2 pairs and a double, then
     * one byte of an int */
    char out[64] = {0}, in[64];
    MPI_Datatype t;
    OK(MPI_Type_contiguous(4, MPI_DOUBLE_INT, &t));
    OK(MPI_Type_commit(&t));
    MPI_Status st;
    OK(MPI_Sendrecv(out, 33, MPI_CHAR, 0, 5, in, 33, MPI_CHAR, 0, 5, MPI_COMM_SELF, &st));
    int n = 0;
    OK(MPI_Get_elements(&st, t, &n));
    CHECK(n == MPI_UNDEFINED, "Get_elements of 33 bytes as DOUBLE_INT pairs: %d", n);
    OK(MPI_Get_count(&st, t, &n));
    CHECK(n == MPI_UNDEFINED, "Get_count: %d", n);
    OK(MPI_Get_elements(&st, MPI_CHAR, &n));
    CHECK(n == 33, "Get_elements as chars: %d", n);
    OK(MPI_Type_free(&t));
    /* 32 bytes as 4 x DOUBLE_INT: 2 pairs (24 bytes), then a double: 5 */
    OK(MPI_Sendrecv(out, 32, MPI_CHAR, 0, 5, in, 32, MPI_CHAR, 0, 5, MPI_COMM_SELF, &st));
    OK(MPI_Type_contiguous(4, MPI_DOUBLE_INT, &t));
    OK(MPI_Type_commit(&t));
    OK(MPI_Get_elements(&st, t, &n));
    CHECK(n == 5, "Get_elements of 32 bytes as DOUBLE_INT pairs: %d", n);
    OK(MPI_Type_free(&t));
}

/* Messages to this rank itself (MPI_COMM_SELF) that end inside a basic element
 * of the receive type. */
static void partial_elements(void)
{
    MPI_Comm self = MPI_COMM_SELF;
    const char out[32] = "abcdefghijklmnopqrstuvwxyz";
    int in[4];
    MPI_Status st;
    MPI_Request rq[2];
    int n = -1;
    /* MPI_Recv, a contiguous type (the engine's blocking receive) */
    OK(MPI_Isend(out, 6, MPI_CHAR, 0, 1, self, &rq[0]));
    memset(in, 0, sizeof in);
    FAILS(MPI_Recv(in, 4, MPI_INT, 0, 1, self, &st), MPI_ERR_TYPE);
    CHECK(cls(st.MPI_ERROR) == MPI_ERR_TYPE, "MPI_Recv's status error %d", st.MPI_ERROR);
    OK(MPI_Get_count(&st, MPI_CHAR, &n));
    CHECK(n == 6 && !memcmp(in, out, 6), "6 bytes delivered: %d", n);
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    /* a derived type (the MPICH suite's truncmsg2: 3 chars into indexed ints) */
    MPI_Datatype ix;
    int bl[3] = {1, 2, 1}, at[3] = {0, 1, 3};
    OK(MPI_Type_indexed(3, bl, at, MPI_INT, &ix));
    OK(MPI_Type_commit(&ix));
    OK(MPI_Isend(out, 3, MPI_CHAR, 0, 2, self, &rq[0]));
    FAILS(MPI_Recv(in, 1, ix, 0, 2, self, &st), MPI_ERR_TYPE);
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    /* MPI_Irecv + MPI_Wait, and MPI_Waitall (MPI_ERR_IN_STATUS) */
    OK(MPI_Irecv(in, 4, MPI_INT, 0, 3, self, &rq[0]));
    OK(MPI_Send(out, 7, MPI_CHAR, 0, 3, self));
    FAILS(MPI_Wait(&rq[0], &st), MPI_ERR_TYPE);
    MPI_Status sts[2];
    OK(MPI_Irecv(in, 4, MPI_INT, 0, 4, self, &rq[0]));
    OK(MPI_Irecv(in + 2, 2, MPI_INT, 0, 5, self, &rq[1]));
    OK(MPI_Send(out, 8, MPI_CHAR, 0, 4, self));
    OK(MPI_Send(out, 5, MPI_CHAR, 0, 5, self));
    FAILS(MPI_Waitall(2, rq, sts), MPI_ERR_IN_STATUS);
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && cls(sts[1].MPI_ERROR) == MPI_ERR_TYPE,
          "Waitall's statuses: %d %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);
    /* MPI_Sendrecv */
    FAILS(MPI_Sendrecv(out, 2, MPI_CHAR, 0, 6, in, 1, MPI_INT, 0, 6, self, &st), MPI_ERR_TYPE);
    /* a persistent receive, started twice: the short message, then a whole one */
    OK(MPI_Recv_init(in, 2, MPI_INT, 0, 7, self, &rq[0]));
    OK(MPI_Start(&rq[0]));
    OK(MPI_Send(out, 1, MPI_CHAR, 0, 7, self));
    FAILS(MPI_Wait(&rq[0], &st), MPI_ERR_TYPE);
    OK(MPI_Start(&rq[0]));
    OK(MPI_Send(out, 8, MPI_CHAR, 0, 7, self));
    OK(MPI_Wait(&rq[0], &st));
    OK(MPI_Request_free(&rq[0]));
    /* MPI_Mrecv */
    MPI_Message m;
    OK(MPI_Isend(out, 10, MPI_CHAR, 0, 8, self, &rq[0]));
    OK(MPI_Mprobe(0, 8, self, &m, &st));
    FAILS(MPI_Mrecv(in, 4, MPI_INT, &m, &st), MPI_ERR_TYPE);
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    /* whole elements but not a whole type: no error */
    double di[4];
    OK(MPI_Sendrecv(out, 20, MPI_CHAR, 0, 9, di, 2, MPI_DOUBLE_INT, 0, 9, self, &st));
    OK(MPI_Get_count(&st, MPI_DOUBLE_INT, &n));
    CHECK(n == MPI_UNDEFINED, "Get_count of 20 bytes as MPI_DOUBLE_INT: %d", n);
    MPI_Datatype ci;
    int one[2] = {1, 1};
    MPI_Aint disp[2] = {0, 4};
    MPI_Datatype two[2] = {MPI_CHAR, MPI_INT};
    OK(MPI_Type_create_struct(2, one, disp, two, &ci));
    OK(MPI_Type_commit(&ci));
    OK(MPI_Sendrecv(out, 5, MPI_CHAR, 0, 10, in, 1, ci, 0, 10, self, &st));
    OK(MPI_Type_free(&ci));
    OK(MPI_Type_free(&ix));
}

static void dup_copy_error(void)
{
    int my_class, my_code, key, v = 1;
    OK(MPI_Add_error_class(&my_class));
    OK(MPI_Add_error_code(my_class, &my_code));
    MPI_Comm c, d = MPI_COMM_NULL;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    OK(MPI_Comm_create_keyval(copy_fails, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    OK(MPI_Comm_set_attr(c, key, &v));
    copy_err = my_class;
    int rc = MPI_Comm_dup(c, &d);
    CHECK(rc == my_class, "Comm_dup gave %d, want the callback's class %d", rc, my_class);
    CHECK(d == MPI_COMM_NULL, "a failed dup made a communicator");
    copy_err = my_code;
    rc = MPI_Comm_dup(c, &d);
    CHECK(rc == my_code && cls(rc) == my_class, "Comm_dup gave %d, want the callback's code %d", rc,
          my_code);
    CHECK(copy_calls == 2, "copy callback called %d times", copy_calls);
    OK(MPI_Comm_free(&c));
    OK(MPI_Comm_free_keyval(&key));
}

static void groups(int np)
{
    MPI_Group w, g2;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    int range[1][3] = {{0, np - 1, 1}}, ranks[1] = {0};
    FAILS(MPI_Group_range_incl(w, 1, range, NULL), MPI_ERR_ARG);
    FAILS(MPI_Group_range_excl(w, 1, range, NULL), MPI_ERR_ARG);
    int beyond[1][3] = {{0, np, 1}}; /* computes rank np */
    FAILS(MPI_Group_range_incl(w, 1, beyond, &g2), MPI_ERR_RANK);
    FAILS(MPI_Group_incl(w, 1, ranks, NULL), MPI_ERR_ARG);
    FAILS(MPI_Group_excl(w, 1, ranks, NULL), MPI_ERR_ARG);
    FAILS(MPI_Group_union(w, w, NULL), MPI_ERR_ARG);
    FAILS(MPI_Group_intersection(w, w, NULL), MPI_ERR_ARG);
    FAILS(MPI_Group_difference(w, w, NULL), MPI_ERR_ARG);
    OK(MPI_Group_range_incl(w, 1, range, &g2));
    OK(MPI_Group_free(&g2));
    OK(MPI_Group_free(&w));
}

static void sessions(void)
{
    MPI_Info info;
    MPI_Session s = MPI_SESSION_NULL;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "thread_level", "THIS_IS_NOT_VALID"));
    FAILS(MPI_Session_init(info, MPI_ERRORS_RETURN, &s), MPI_ERR_ARG);
    CHECK(s == MPI_SESSION_NULL, "a refused session was made");
    OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_SINGLE"));
    OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    OK(MPI_Info_free(&info));
    int len = 0;
    OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL)); /* asks the length */
    CHECK(len > 0, "pset name length %d", len);
    FAILS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL), MPI_ERR_ARG);
    MPI_Group g;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_Errhandler h;
    OK(MPI_Comm_create_errhandler(eh, &h));
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_create_from_group(g, "org.courier.errors_detect", MPI_INFO_NULL, h, NULL);
    CHECK(eh_calls == 1, "the call's error handler was called %d times (rc %d)", eh_calls, rc);
    OK(MPI_Comm_create_from_group(g, "org.courier.errors_detect", MPI_INFO_NULL, h, &c));
    OK(MPI_Comm_free(&c));
    OK(MPI_Errhandler_free(&h));
    OK(MPI_Group_free(&g));
    OK(MPI_Session_finalize(&s));
}

int main(int argc, char **argv)
{
    int provided = -1;
    OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_T provided %d", provided);
    OK(MPI_Init(&argc, &argv));
    int me, np;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    local_reduce(np);
    collectives(me, np);
    counts();
    partial_elements();
    dup_copy_error();
    groups(np);
    sessions();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (!me) printf("errors_detect ok\n");
    OK(MPI_T_finalize());
    OK(MPI_Finalize());
    return 0;
}
