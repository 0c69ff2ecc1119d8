/* The C side of the Fortran binding (src/api/mpi_f2c.c): every handle kind
 * converts to MPI_Fint and back to the same handle (and the converted handle
 * still works); a status received by MPI_Recv survives C -> Fortran -> C and
 * C -> f08 -> C with its source, tag, error and count; the Fortran ignore
 * sentinels are distinct addresses; converting an ignore value is MPI_ERR_ARG
 * under MPI_ERRORS_RETURN; MPI_Type_create_f90_* give types of their own
 * combiner with p and r in their contents, one handle per (p, r), of the size
 * asked, not freed, and MPI_ERR_ARG beyond REAL(16); MPI_2REAL and
 * MPI_2DOUBLE_PRECISION reduce with MAXLOC/MINLOC. Two or more ranks. */
#include <string.h>

#include "../mpi/mcheck.h"

int main(int argc, char **argv)
{
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs 2 ranks, have %d", size);

    /* Handles, predefined and made by the program. */
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Fint fc = MPI_Comm_c2f(dup);
    CHECK(MPI_Comm_f2c(fc) == dup, "comm round trip");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "world round trip");
    CHECK(MPI_Comm_c2f(MPI_COMM_NULL) != MPI_Comm_c2f(MPI_COMM_WORLD), "null differs");
    int r2 = -1;
    OK(MPI_Comm_rank(MPI_Comm_f2c(fc), &r2));
    CHECK(r2 == rank, "the converted communicator works: rank %d, not %d", r2, rank);
    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    CHECK(MPI_Type_f2c(MPI_Type_c2f(vec)) == vec, "type round trip");
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "predefined type round trip");
    MPI_Group g;
    OK(MPI_Comm_group(dup, &g));
    CHECK(MPI_Group_f2c(MPI_Group_c2f(g)) == g, "group round trip");
    int gs = 0;
    OK(MPI_Group_size(MPI_Group_f2c(MPI_Group_c2f(g)), &gs));
    CHECK(gs == size, "group size %d", gs);
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "op round trip");
    MPI_Info info;
    OK(MPI_Info_create(&info));
    CHECK(MPI_Info_f2c(MPI_Info_c2f(info)) == info, "info round trip");
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN,
          "errhandler round trip");
    MPI_Win win;
    int wbuf[4] = {0};
    OK(MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, dup, &win));
    CHECK(MPI_Win_f2c(MPI_Win_c2f(win)) == win, "win round trip");
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL, "message");

    /* A request through Fortran and back, then a status through both forms. */
    int data[3] = {rank, rank * 10, rank * 100}, got[3];
    if (rank == 1) {
        MPI_Request rq;
        OK(MPI_Isend(data, 3, MPI_INT, 0, 42, dup, &rq));
        MPI_Request back = MPI_Request_f2c(MPI_Request_c2f(rq));
        CHECK(back == rq, "request round trip");
        OK(MPI_Wait(&back, MPI_STATUS_IGNORE));
        CHECK(back == MPI_REQUEST_NULL, "the converted request completed");
    } else if (rank == 0) {
        MPI_Status st, c, c8;
        MPI_Fint f[MPI_STATUS_SIZE];
        MPI_F08_status f08;
        OK(MPI_Recv(got, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st));
        OK(MPI_Status_c2f(&st, f));
        CHECK(f[0] == 1 && f[1] == 42, "Fortran status: source %d tag %d", f[0], f[1]);
        CHECK(MPI_F_STATUS_SIZE == MPI_STATUS_SIZE && f[MPI_F_SOURCE] == 1 && f[MPI_F_TAG] == 42 &&
                  f[MPI_F_ERROR] == st.MPI_ERROR,
              "MPI-4's MPI_F_SOURCE, MPI_F_TAG, MPI_F_ERROR");
        OK(MPI_Status_f2c(f, &c));
        OK(MPI_Status_c2f08(&st, &f08));
        CHECK(f08.MPI_SOURCE == 1 && f08.MPI_TAG == 42 && f08.MPI_ERROR == st.MPI_ERROR,
              "f08 status: source %d tag %d", f08.MPI_SOURCE, f08.MPI_TAG);
        OK(MPI_Status_f082c(&f08, &c8));
        int n1 = -1, n2 = -1;
        OK(MPI_Get_count(&c, MPI_INT, &n1));
        OK(MPI_Get_count(&c8, MPI_INT, &n2));
        CHECK(n1 == 3 && n2 == 3, "counts after the round trips: %d %d", n1, n2);
        CHECK(c.MPI_SOURCE == 1 && c8.MPI_TAG == 42, "C status back");
        MPI_F08_status f08b;
        MPI_Fint fb[MPI_STATUS_SIZE];
        OK(MPI_Status_f2f08(f, &f08b));
        OK(MPI_Status_f082f(&f08b, fb));
        CHECK(memcmp(f, fb, sizeof f) == 0, "Fortran -> f08 -> Fortran");
        CHECK(got[0] == 1 && got[1] == 10 && got[2] == 100, "data %d %d %d", got[0], got[1],
              got[2]);
    }

    /* The sentinels: distinct, not NULL; converting one is an error. */
    CHECK(MPI_F_STATUS_IGNORE != NULL && MPI_F08_STATUS_IGNORE != NULL, "sentinels not NULL");
    CHECK(MPI_F_STATUS_IGNORE != MPI_F_STATUSES_IGNORE, "distinct sentinels");
    CHECK((void *)MPI_F_STATUS_IGNORE != (void *)MPI_F08_STATUS_IGNORE, "distinct sentinels");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Status st;
    int rc = MPI_Status_f2c(MPI_F_STATUS_IGNORE, &st), cls = -1;
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG, "MPI_Status_f2c(MPI_F_STATUS_IGNORE): class %d", cls);
    rc = MPI_Status_c2f08(MPI_STATUS_IGNORE, (MPI_F08_status *)MPI_F08_STATUS_IGNORE);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG, "MPI_Status_c2f08(MPI_STATUS_IGNORE): class %d", cls);

    /* The Fortran 90 parameterized types: the named type of that size. */
    /* MPI_Type_create_f90_*: types of their own combiner, p and r given back,
     * one handle per (p, r), the size of the kind that holds them. */
    MPI_Datatype f90, f90b;
    int ni, na, nd, comb, ints[2] = {0, 0}, tsz;
    OK(MPI_Type_create_f90_integer(9, &f90));
    OK(MPI_Type_create_f90_integer(9, &f90b));
    OK(MPI_Type_get_envelope(f90, &ni, &na, &nd, &comb));
    OK(MPI_Type_get_contents(f90, 2, 0, 1, ints, NULL, NULL));
    OK(MPI_Type_size(f90, &tsz));
    CHECK(f90 == f90b && comb == MPI_COMBINER_F90_INTEGER && ni == 1 && na == 0 && nd == 0 &&
              ints[0] == 9 && tsz == 4,
          "f90_integer(9): combiner %d, %d ints (%d), %d types, %d bytes", comb, ni, ints[0], nd,
          tsz);
    OK(MPI_Type_create_f90_integer(10, &f90));
    OK(MPI_Type_size(f90, &tsz));
    CHECK(tsz == 8 && f90 != f90b, "f90_integer(10): %d bytes", tsz);
    OK(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &f90));
    OK(MPI_Type_get_envelope(f90, &ni, &na, &nd, &comb));
    OK(MPI_Type_get_contents(f90, 2, 0, 0, ints, NULL, NULL));
    OK(MPI_Type_size(f90, &tsz));
    CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2 && ints[0] == 15 && ints[1] == MPI_UNDEFINED &&
              tsz == 8,
          "f90_real(15): combiner %d, (%d, %d), %d bytes", comb, ints[0], ints[1], tsz);
    OK(MPI_Type_create_f90_complex(6, 37, &f90));
    OK(MPI_Type_get_envelope(f90, &ni, &na, &nd, &comb));
    OK(MPI_Type_size(f90, &tsz));
    CHECK(comb == MPI_COMBINER_F90_COMPLEX && tsz == 8, "f90_complex(6, 37)");
    rc = MPI_Type_free(&f90);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_TYPE, "MPI_Type_free of an f90 type: class %d", cls);
    rc = MPI_Type_create_f90_real(40, 5000, &f90);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG, "MPI_Type_create_f90_real(40, 5000): class %d", cls);

    /* The Fortran pair types reduce from C too; INTEGER(16) has its name. */
    float fp[2] = {(float)(rank % 2), (float)rank};
    OK(MPI_Allreduce(MPI_IN_PLACE, fp, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(fp[0] == 1.0f && fp[1] == 1.0f, "MPI_2REAL MAXLOC: (%g, %g)", fp[0], fp[1]);
    double dp[2] = {(double)rank, 2.0 * rank};
    OK(MPI_Allreduce(MPI_IN_PLACE, dp, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(dp[0] == 0.0 && dp[1] == 0.0, "MPI_2DOUBLE_PRECISION MINLOC: (%g, %g)", dp[0], dp[1]);
    char tname[MPI_MAX_OBJECT_NAME];
    OK(MPI_Type_get_name(MPI_INTEGER16, tname, &tsz));
    CHECK(!strcmp(tname, "MPI_INTEGER16"), "MPI_INTEGER16's name: %s", tname);

    OK(MPI_Win_free(&win));
    OK(MPI_Info_free(&info));
    OK(MPI_Group_free(&g));
    OK(MPI_Type_free(&vec));
    OK(MPI_Comm_free(&dup));
    if (rank == 0) printf("fortran handles: every kind round trips on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}
