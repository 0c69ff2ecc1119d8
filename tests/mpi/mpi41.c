/* MPI-4.1 accessors and queries: MPI_Status_get/set_source/_tag/_error on a
 * received message's status and on one the program fills itself, NULL
 * statuses refused with MPI_ERR_ARG; MPI_Type_get_value_index's predefined
 * pairs (named types), MPI_DATATYPE_NULL where none, MPI_MINLOC through one,
 * bad handles refused; MPI_ERR_VALUE_TOO_LARGE's and MPI_ERR_ERRHANDLER's
 * classes and strings, MPI_ERRORS_ABORT set, read back and freed;
 * MPI_Request_get_status_all/_any/_some answer as MPI_Testall/any/some but
 * leave every request as it was (asked twice, the same answer; the handles
 * still live until MPI_Waitall), report a truncation as MPI_ERR_IN_STATUS or
 * MPI_ERR_TRUNCATE and refuse bad arguments. Rank 0
 * prints "mpi41 ok". With the argument "abort", rank 1 then sends to a rank
 * that does not exist under MPI_ERRORS_ABORT: the job ends with status
 * MPI_ERR_RANK (6) and one line. */
#include <string.h>

#include "mcheck.h"

static void statuses(int me, int np)
{
    int x = me, y = -1;
    MPI_Status st;
    OK(MPI_Sendrecv(&x, 1, MPI_INT, (me + 1) % np, 40 + me, &y, 1, MPI_INT, MPI_ANY_SOURCE,
                    MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    int src = -1, tag = -1, err = -1;
    OK(MPI_Status_get_source(&st, &src));
    OK(MPI_Status_get_tag(&st, &tag));
    OK(MPI_Status_get_error(&st, &err));
    int from = (me + np - 1) % np;
    CHECK(src == from && tag == 40 + from && src == st.MPI_SOURCE && tag == st.MPI_TAG,
          "source %d tag %d, expected %d and %d", src, tag, from, 40 + from);
    CHECK(err == st.MPI_ERROR, "error %d, the field says %d", err, st.MPI_ERROR);

    /* A status the program makes (a generalized request's query function). */
    MPI_Status mine;
    OK(MPI_Status_set_source(&mine, 7));
    OK(MPI_Status_set_tag(&mine, 1234));
    OK(MPI_Status_set_error(&mine, MPI_ERR_TRUNCATE));
    OK(MPI_Status_set_elements(&mine, MPI_INT, 3));
    CHECK(mine.MPI_SOURCE == 7 && mine.MPI_TAG == 1234 && mine.MPI_ERROR == MPI_ERR_TRUNCATE,
          "set fields: %d %d %d", mine.MPI_SOURCE, mine.MPI_TAG, mine.MPI_ERROR);
    OK(MPI_Status_set_source(&mine, MPI_PROC_NULL));
    OK(MPI_Status_set_tag(&mine, MPI_ANY_TAG));
    OK(MPI_Status_get_source(&mine, &src));
    OK(MPI_Status_get_tag(&mine, &tag));
    OK(MPI_Status_get_error(&mine, &err));
    CHECK(src == MPI_PROC_NULL && tag == MPI_ANY_TAG && err == MPI_ERR_TRUNCATE,
          "read back %d %d %d", src, tag, err);
    int n = -1;
    OK(MPI_Get_count(&mine, MPI_INT, &n));
    CHECK(n == 3, "count %d after the setters", n);

    /* Refused: no status, no result. */
    CHECK(MPI_Status_get_source(NULL, &src) == MPI_ERR_ARG, "get_source(NULL)");
    CHECK(MPI_Status_get_tag(MPI_STATUS_IGNORE, &tag) == MPI_ERR_ARG, "get_tag(IGNORE)");
    CHECK(MPI_Status_get_error(&mine, NULL) == MPI_ERR_ARG, "get_error(, NULL)");
    CHECK(MPI_Status_set_source(NULL, 1) == MPI_ERR_ARG, "set_source(NULL)");
    CHECK(MPI_Status_set_tag(NULL, 1) == MPI_ERR_ARG, "set_tag(NULL)");
    CHECK(MPI_Status_set_error(NULL, 1) == MPI_ERR_ARG, "set_error(NULL)");
    CHECK(src == MPI_PROC_NULL && tag == MPI_ANY_TAG, "a refused call wrote its result");
}

static void value_index(int me, int np)
{
    const MPI_Datatype want[][3] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        MPI_Datatype p = MPI_DATATYPE_NULL;
        OK(MPI_Type_get_value_index(want[i][0], want[i][1], &p));
        CHECK(p == want[i][2], "pair %zu: %#x, expected %#x", i, (unsigned)p, (unsigned)want[i][2]);
        int ni, na, nd, comb;
        OK(MPI_Type_get_envelope(p, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_NAMED && !ni && !na && !nd, "pair %zu: combiner %d", i, comb);
    }
    CHECK(MPI_COMBINER_VALUE_INDEX != MPI_COMBINER_NAMED &&
              MPI_COMBINER_VALUE_INDEX != MPI_COMBINER_HINDEXED_BLOCK,
          "MPI_COMBINER_VALUE_INDEX is %d", MPI_COMBINER_VALUE_INDEX);
    /* No predefined pair: MPI_DATATYPE_NULL, no error. */
    const MPI_Datatype none[][2] = {
        {MPI_CHAR, MPI_INT}, {MPI_INT, MPI_LONG}, {MPI_FLOAT, MPI_FLOAT}, {MPI_REAL, MPI_INT}};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
        MPI_Datatype p = MPI_INT;
        OK(MPI_Type_get_value_index(none[i][0], none[i][1], &p));
        CHECK(p == MPI_DATATYPE_NULL, "no pair %zu gave %#x", i, (unsigned)p);
    }
    /* The pair it gives works with MPI_MINLOC. */
    MPI_Datatype p;
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &p));
    struct {
        double v;
        int i;
    } in = {(double)((me + 1) % np), me}, out;
    OK(MPI_Allreduce(&in, &out, 1, p, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(out.v == 0.0 && out.i == np - 1, "MINLOC gave %g at %d", out.v, out.i);
    /* Refused: a bad handle, no result. */
    CHECK(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &p) == MPI_ERR_TYPE, "NULL value");
    CHECK(MPI_Type_get_value_index(MPI_INT, MPI_DATATYPE_NULL, &p) == MPI_ERR_TYPE, "NULL index");
    CHECK(MPI_Type_get_value_index(MPI_INT, MPI_INT, NULL) == MPI_ERR_ARG, "NULL pair_type");
}

static void errors(void)
{
    const int cls[] = {MPI_ERR_VALUE_TOO_LARGE, MPI_ERR_ERRHANDLER};
    const char *const names[] = {"MPI_ERR_VALUE_TOO_LARGE", "MPI_ERR_ERRHANDLER"};
    const char *const words[] = {"too large", "error handler"};
    for (int i = 0; i < 2; i++) {
        int c = -1, len = 0;
        char s[MPI_MAX_ERROR_STRING];
        OK(MPI_Error_class(cls[i], &c));
        CHECK(c == cls[i], "%s's class is %d", names[i], c);
        OK(MPI_Error_string(cls[i], s, &len));
        CHECK(strstr(s, names[i]) && strstr(s, words[i]) && len == (int)strlen(s),
              "%s's string: %s", names[i], s);
        CHECK(cls[i] > MPI_ERR_SESSION && cls[i] <= MPI_ERR_LASTCODE, "%s is %d", names[i], cls[i]);
    }
    CHECK(MPI_MAX_PSET_NAME_LEN >= 256 && MPI_MAX_STRINGTAG_LEN >= 256, "lengths %d %d",
          MPI_MAX_PSET_NAME_LEN, MPI_MAX_STRINGTAG_LEN);
    /* A pset name fits MPI_MAX_PSET_NAME_LEN. */
    MPI_Session ss;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ss));
    char pset[MPI_MAX_PSET_NAME_LEN];
    int plen = MPI_MAX_PSET_NAME_LEN;
    OK(MPI_Session_get_nth_pset(ss, MPI_INFO_NULL, 0, &plen, pset));
    CHECK(plen <= MPI_MAX_PSET_NAME_LEN && !strncmp(pset, "mpi://", 6), "pset %s", pset);
    OK(MPI_Session_finalize(&ss));

    MPI_Comm c;
    MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_ABORT));
    OK(MPI_Comm_get_errhandler(c, &h));
    CHECK(h == MPI_ERRORS_ABORT, "got %#x back", (unsigned)h);
    OK(MPI_Errhandler_free(&h));
    CHECK(h == MPI_ERRHANDLER_NULL, "freed handle %#x", (unsigned)h);
    OK(MPI_Comm_get_errhandler(c, &h)); /* a predefined one stays usable */
    CHECK(h == MPI_ERRORS_ABORT, "got %#x after a free", (unsigned)h);
    OK(MPI_Comm_free(&c));
}

static void get_status(void)
{
    int me = 0; /* on MPI_COMM_SELF */
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int a = -1, b = -1, x = 11, y = 22, flag = -1, index = -2, outcount = -2, idx[2];
    MPI_Request r[2];
    MPI_Status sts[2], st;
    OK(MPI_Irecv(&a, 1, MPI_INT, me, 1, MPI_COMM_SELF, &r[0]));
    OK(MPI_Irecv(&b, 1, MPI_INT, me, 2, MPI_COMM_SELF, &r[1]));
    MPI_Request keep[2] = {r[0], r[1]};
    OK(MPI_Request_get_status_all(2, r, &flag, sts));
    CHECK(flag == 0, "all: flag %d with nothing sent", flag);
    OK(MPI_Request_get_status_any(2, r, &index, &flag, &st));
    CHECK(flag == 0 && index == MPI_UNDEFINED, "any: flag %d index %d", flag, index);
    OK(MPI_Request_get_status_some(2, r, &outcount, idx, sts));
    CHECK(outcount == 0, "some: %d with nothing sent", outcount);

    OK(MPI_Send(&y, 1, MPI_INT, me, 2, MPI_COMM_SELF));
    do OK(MPI_Request_get_status_any(2, r, &index, &flag, &st));
    while (!flag);
    for (int again = 0; again < 2; again++) { /* the same answer twice: nothing was freed */
        OK(MPI_Request_get_status_any(2, r, &index, &flag, &st));
        CHECK(flag && index == 1 && st.MPI_SOURCE == me && st.MPI_TAG == 2, "any: %d %d %d %d",
              flag, index, st.MPI_SOURCE, st.MPI_TAG);
        OK(MPI_Request_get_status_some(2, r, &outcount, idx, sts));
        CHECK(outcount == 1 && idx[0] == 1 && sts[0].MPI_TAG == 2 &&
                  sts[0].MPI_ERROR == MPI_SUCCESS,
              "some: %d %d tag %d", outcount, idx[0], sts[0].MPI_TAG);
        OK(MPI_Request_get_status_all(2, r, &flag, sts));
        CHECK(flag == 0, "all: flag %d with one pending", flag);
        CHECK(r[0] == keep[0] && r[1] == keep[1], "a handle changed");
    }
    OK(MPI_Send(&x, 1, MPI_INT, me, 1, MPI_COMM_SELF));
    do OK(MPI_Request_get_status_all(2, r, &flag, sts));
    while (!flag);
    OK(MPI_Request_get_status_all(2, r, &flag, sts));
    CHECK(flag && sts[0].MPI_TAG == 1 && sts[1].MPI_TAG == 2 && sts[0].MPI_ERROR == MPI_SUCCESS &&
              sts[1].MPI_ERROR == MPI_SUCCESS && r[0] == keep[0] && r[1] == keep[1],
          "all: flag %d tags %d %d", flag, sts[0].MPI_TAG, sts[1].MPI_TAG);
    OK(MPI_Request_get_status_all(2, r, &flag, MPI_STATUSES_IGNORE));
    OK(MPI_Waitall(2, r, sts)); /* still live: MPI_Waitall completes and frees them */
    CHECK(a == 11 && b == 22 && r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL,
          "received %d %d", a, b);

    /* Only null or inactive requests: as the test forms. */
    MPI_Request pr[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    OK(MPI_Recv_init(&a, 1, MPI_INT, me, 3, MPI_COMM_SELF, &pr[1]));
    OK(MPI_Request_get_status_all(2, pr, &flag, sts));
    CHECK(flag && sts[0].MPI_SOURCE == MPI_ANY_SOURCE && sts[1].MPI_TAG == MPI_ANY_TAG,
          "all over null/inactive: flag %d source %d", flag, sts[0].MPI_SOURCE);
    OK(MPI_Request_get_status_any(2, pr, &index, &flag, &st));
    CHECK(flag && index == MPI_UNDEFINED, "any over null/inactive: %d %d", flag, index);
    OK(MPI_Request_get_status_some(2, pr, &outcount, idx, sts));
    CHECK(outcount == MPI_UNDEFINED, "some over null/inactive: %d", outcount);
    OK(MPI_Request_free(&pr[1]));

    /* A truncated receive: an error in its status, the request still live. */
    int big[2] = {1, 2};
    OK(MPI_Irecv(&a, 1, MPI_INT, me, 4, MPI_COMM_SELF, &r[0]));
    OK(MPI_Send(big, 2, MPI_INT, me, 4, MPI_COMM_SELF));
    int rc;
    do rc = MPI_Request_get_status_all(1, r, &flag, sts);
    while (rc == MPI_SUCCESS && !flag);
    CHECK(rc == MPI_ERR_IN_STATUS && sts[0].MPI_ERROR == MPI_ERR_TRUNCATE, "all: rc %d error %d",
          rc, sts[0].MPI_ERROR);
    CHECK(MPI_Request_get_status_any(1, r, &index, &flag, &st) == MPI_ERR_TRUNCATE && index == 0,
          "any on a truncated receive");
    CHECK(MPI_Request_get_status_some(1, r, &outcount, idx, sts) == MPI_ERR_IN_STATUS &&
              outcount == 1 && sts[0].MPI_ERROR == MPI_ERR_TRUNCATE,
          "some on a truncated receive");
    CHECK(MPI_Wait(&r[0], &st) == MPI_ERR_TRUNCATE && r[0] == MPI_REQUEST_NULL, "the wait after");

    /* Refused. */
    CHECK(MPI_Request_get_status_all(1, r, NULL, sts) == MPI_ERR_ARG, "all: NULL flag");
    CHECK(MPI_Request_get_status_any(1, r, NULL, &flag, &st) == MPI_ERR_ARG, "any: NULL index");
    CHECK(MPI_Request_get_status_some(1, r, NULL, idx, sts) == MPI_ERR_ARG, "some: NULL count");
    CHECK(MPI_Request_get_status_all(-1, r, &flag, sts) == MPI_ERR_COUNT, "all: count -1");
    MPI_Request bad = keep[0]; /* freed by the MPI_Waitall above */
    CHECK(MPI_Request_get_status_any(1, &bad, &index, &flag, &st) == MPI_ERR_REQUEST,
          "any: a freed request");
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    statuses(me, np);
    value_index(me, np);
    errors();
    get_status();
    if (!me) printf("mpi41 ok\n");
    if (argc > 1 && !strcmp(argv[1], "abort")) {
        fflush(stdout);
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT));
        if (me == 1) MPI_Send(&me, 1, MPI_INT, np + 3, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD); /* never ends: rank 1 aborts the job */
        CHECK(0, "rank %d: still here after MPI_ERRORS_ABORT", me);
    }
    OK(MPI_Finalize());
    return 0;
}
