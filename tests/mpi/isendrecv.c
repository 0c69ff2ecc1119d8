/* MPI-4.0 MPI_Isendrecv, MPI_Isendrecv_replace (contiguous and strided data,
 * MPI_PROC_NULL), MPI_Comm_idup_with_info and the communicator assertions:
 * the keys are reported by MPI_Comm_get_info, and a wildcard receive or probe
 * that an assertion rules out fails with MPI_ERR_ARG. Any number of ranks >= 2;
 * rank 0 prints "isendrecv ok". */
#include <string.h>

#include "mcheck.h"

#define N 64

static void ring(int me, int np)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int sbuf[N], rbuf[N];
    for (int i = 0; i < N; i++) sbuf[i] = me * 1000 + i, rbuf[i] = -1;
    MPI_Request rq;
    MPI_Status st;
    OK(MPI_Isendrecv(sbuf, N, MPI_INT, right, 7, rbuf, N, MPI_INT, left, 7, MPI_COMM_WORLD, &rq));
    int flag = 0;
    while (!flag) OK(MPI_Test(&rq, &flag, &st));
    CHECK(rq == MPI_REQUEST_NULL, "request not freed");
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    int n = -1;
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == N, "count %d", n);
    for (int i = 0; i < N; i++) CHECK(rbuf[i] == left * 1000 + i, "rbuf[%d] = %d", i, rbuf[i]);

    /* strided: every other int, in place, twice in flight at once */
    MPI_Datatype every2;
    OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every2));
    OK(MPI_Type_commit(&every2));
    int a[N], b[N];
    for (int i = 0; i < N; i++) a[i] = me * 1000 + i, b[i] = -me * 1000 - i;
    MPI_Request two[2];
    OK(MPI_Isendrecv_replace(a, 1, every2, right, 8, left, 8, MPI_COMM_WORLD, &two[0]));
    OK(MPI_Isendrecv_replace(b, N, MPI_INT, left, 9, right, 9, MPI_COMM_WORLD, &two[1]));
    MPI_Status sts[2];
    OK(MPI_Waitall(2, two, sts));
    for (int i = 0; i < N; i++) {
        int want = i % 2 ? me * 1000 + i : left * 1000 + i; /* odd ones stay */
        CHECK(a[i] == want, "replace strided a[%d] = %d, want %d", i, a[i], want);
        CHECK(b[i] == -right * 1000 - i, "replace b[%d] = %d", i, b[i]);
    }
    CHECK(sts[0].MPI_SOURCE == left && sts[1].MPI_SOURCE == right, "sources %d %d",
          sts[0].MPI_SOURCE, sts[1].MPI_SOURCE);
    OK(MPI_Type_free(&every2));

    /* MPI_PROC_NULL both ways: completes with an empty status, nothing moves */
    for (int i = 0; i < N; i++) rbuf[i] = -5;
    OK(MPI_Isendrecv(sbuf, N, MPI_INT, MPI_PROC_NULL, 1, rbuf, N, MPI_INT, MPI_PROC_NULL, 1,
                     MPI_COMM_WORLD, &rq));
    OK(MPI_Wait(&rq, &st));
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && n == 0, "proc null: source %d count %d", st.MPI_SOURCE,
          n);
    CHECK(rbuf[0] == -5 && rbuf[N - 1] == -5, "proc null receive wrote the buffer");
    OK(MPI_Isendrecv_replace(rbuf, N, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD,
                             &rq));
    OK(MPI_Wait(&rq, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && rbuf[3] == -5, "proc null replace");
    /* one side to MPI_PROC_NULL: a shift with open ends */
    int v = me, got = -1;
    OK(MPI_Isendrecv(&v, 1, MPI_INT, me + 1 < np ? me + 1 : MPI_PROC_NULL, 3, &got, 1, MPI_INT,
                     me ? me - 1 : MPI_PROC_NULL, 3, MPI_COMM_WORLD, &rq));
    OK(MPI_Wait(&rq, &st));
    CHECK(got == (me ? me - 1 : -1), "shift got %d", got);
}

static int has(MPI_Comm c, const char *key, const char *val)
{
    MPI_Info used;
    char v[64];
    int flag = 0;
    OK(MPI_Comm_get_info(c, &used));
    OK(MPI_Info_get(used, key, sizeof v - 1, v, &flag));
    OK(MPI_Info_free(&used));
    return flag && !strcmp(v, val);
}

static void asserts(int me, int np)
{
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    OK(MPI_Info_set(info, "mpi_assert_exact_length", "true"));
    OK(MPI_Info_set(info, "mpi_assert_allow_overtaking", "false"));
    MPI_Comm c1, c2;
    MPI_Request rq;
    OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &c1, &rq));
    OK(MPI_Info_free(&info)); /* the call keeps its own copy */
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(c1 != MPI_COMM_NULL, "idup_with_info made no communicator");
    CHECK(has(c1, "mpi_assert_no_any_source", "true"), "no_any_source not reported");
    CHECK(has(c1, "mpi_assert_exact_length", "true"), "exact_length not reported");
    CHECK(has(c1, "mpi_assert_allow_overtaking", "false"), "allow_overtaking not reported");
    CHECK(!has(MPI_COMM_WORLD, "mpi_assert_no_any_source", "true"), "world got the hint");
    int sum = 0;
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c1));
    CHECK(sum == np * (np - 1) / 2, "allreduce on the new communicator: %d", sum);

    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c2));
    OK(MPI_Info_free(&info));
    CHECK(has(c2, "mpi_assert_no_any_tag", "true"), "no_any_tag not reported");

    OK(MPI_Comm_set_errhandler(c1, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN));
    int x = 0, flag = 0, cls = 0;
    int rc = MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, c1, &rq);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG, "MPI_ANY_SOURCE under no_any_source: class %d", cls);
    rc = MPI_Iprobe(MPI_ANY_SOURCE, 0, c1, &flag, MPI_STATUS_IGNORE);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG, "probe of MPI_ANY_SOURCE under no_any_source: class %d", cls);
    rc = MPI_Recv(&x, 1, MPI_INT, 0, MPI_ANY_TAG, c2, MPI_STATUS_IGNORE);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG, "MPI_ANY_TAG under no_any_tag: class %d", cls);

    /* what is not ruled out works: a named source on c1, any source on c2 */
    int right = (me + 1) % np, left = (me + np - 1) % np, y = -1;
    OK(MPI_Sendrecv(&me, 1, MPI_INT, right, 4, &y, 1, MPI_INT, left, 4, c1, MPI_STATUS_IGNORE));
    CHECK(y == left, "c1 exchange got %d", y);
    y = -1;
    OK(MPI_Sendrecv(&me, 1, MPI_INT, right, 4, &y, 1, MPI_INT, MPI_ANY_SOURCE, 4, c2,
                    MPI_STATUS_IGNORE));
    CHECK(y == left, "c2 exchange got %d", y);
    /* MPI_Comm_set_info adds the assertion to a communicator */
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    OK(MPI_Comm_set_info(c2, info));
    OK(MPI_Info_free(&info));
    rc = MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, c2, &rq);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG, "set_info's no_any_source: class %d", cls);
    OK(MPI_Comm_free(&c1));
    OK(MPI_Comm_free(&c2));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(np >= 2, "needs 2 ranks");
    ring(me, np);
    asserts(me, np);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (!me) printf("isendrecv ok\n");
    OK(MPI_Finalize());
    return 0;
}
