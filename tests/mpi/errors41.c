/* MPI's version and MPI-4.1's two newest error classes in use: MPI_VERSION,
 * MPI_SUBVERSION, MPI_Get_version and MPI_Get_library_version say 5.0; the
 * null communicator, datatype and window have names (their own); an
 * invalid error handler handle given to every call that takes one
 * (MPI_Comm_set_errhandler, MPI_Win_set_errhandler, MPI_File_set_errhandler,
 * MPI_Session_init, MPI_Session_set_errhandler, MPI_Comm_create_from_group,
 * MPI_Errhandler_free) is MPI_ERR_ERRHANDLER, not MPI_ERR_ARG; a NULL pointer
 * is still MPI_ERR_ARG. A size that does not fit the int of MPI_Pack_size,
 * MPI_Type_size, MPI_Get_count or MPI_Get_elements is MPI_UNDEFINED, as MPI
 * asks of each; their _c forms give the value. Rank 0 prints "errors41 ok". */
#include <string.h>

#include "mcheck.h"

static void version(void)
{
    CHECK(MPI_VERSION == 5 && MPI_SUBVERSION == 0, "mpi.h says %d.%d", MPI_VERSION, MPI_SUBVERSION);
    int v = 0, s = -1, len = 0;
    OK(MPI_Get_version(&v, &s));
    CHECK(v == 5 && s == 0, "MPI_Get_version says %d.%d", v, s);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    OK(MPI_Get_library_version(lib, &len));
    CHECK(strstr(lib, "MPI 5.0") && len == (int)strlen(lib), "library version: %s", lib);
}

/* MPI-4.1: the null handles have names, their own (mpi4py 4 asks them of a
 * library that says 4.1, and emulates them below that) */
static void null_names(void)
{
    char n[MPI_MAX_OBJECT_NAME];
    int len = -1;
    OK(MPI_Comm_get_name(MPI_COMM_NULL, n, &len));
    CHECK(!strcmp(n, "MPI_COMM_NULL") && len == 13, "MPI_COMM_NULL's name: %s (%d)", n, len);
    OK(MPI_Type_get_name(MPI_DATATYPE_NULL, n, &len));
    CHECK(!strcmp(n, "MPI_DATATYPE_NULL") && len == 17, "MPI_DATATYPE_NULL's name: %s", n);
    OK(MPI_Win_get_name(MPI_WIN_NULL, n, &len));
    CHECK(!strcmp(n, "MPI_WIN_NULL") && len == 12, "MPI_WIN_NULL's name: %s", n);
    CHECK(MPI_Comm_set_name(MPI_COMM_NULL, "x") == MPI_ERR_COMM, "MPI_Comm_set_name(NULL)");
}

static void errhandlers(void)
{
    /* not an error handler: a communicator's handle, and one never made */
    const MPI_Errhandler bad[] = {(MPI_Errhandler)MPI_COMM_WORLD, MPI_ERRHANDLER_NULL};
    MPI_Comm c;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    MPI_Win w;
    int mem = 0;
    OK(MPI_Win_create(&mem, sizeof mem, 1, MPI_INFO_NULL, c, &w));
    OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    MPI_Session ss;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ss));
    MPI_Group self;
    OK(MPI_Comm_group(MPI_COMM_SELF, &self));
    for (int i = 0; i < 2; i++) {
        MPI_Errhandler h = bad[i];
        int rc = MPI_Comm_set_errhandler(c, h);
        CHECK(rc == MPI_ERR_ERRHANDLER, "MPI_Comm_set_errhandler(%#x) gave %d", (unsigned)h, rc);
        rc = MPI_Win_set_errhandler(w, h);
        CHECK(rc == MPI_ERR_ERRHANDLER, "MPI_Win_set_errhandler(%#x) gave %d", (unsigned)h, rc);
        rc = MPI_File_set_errhandler(MPI_FILE_NULL, h);
        CHECK(rc == MPI_ERR_ERRHANDLER, "MPI_File_set_errhandler(%#x) gave %d", (unsigned)h, rc);
        MPI_Session s2 = MPI_SESSION_NULL;
        rc = MPI_Session_init(MPI_INFO_NULL, h, &s2);
        CHECK(rc == MPI_ERR_ERRHANDLER && s2 == MPI_SESSION_NULL, "MPI_Session_init(%#x) gave %d",
              (unsigned)h, rc);
        rc = MPI_Session_set_errhandler(ss, h);
        CHECK(rc == MPI_ERR_ERRHANDLER, "MPI_Session_set_errhandler(%#x) gave %d", (unsigned)h, rc);
        MPI_Comm nc = MPI_COMM_NULL;
        rc = MPI_Comm_create_from_group(self, "errors41", MPI_INFO_NULL, h, &nc);
        CHECK(rc == MPI_ERR_ERRHANDLER && nc == MPI_COMM_NULL,
              "MPI_Comm_create_from_group(%#x) gave %d", (unsigned)h, rc);
        rc = MPI_Errhandler_free(&h);
        CHECK(rc == MPI_ERR_ERRHANDLER, "MPI_Errhandler_free(%#x) gave %d", (unsigned)bad[i], rc);
    }
    CHECK(MPI_Errhandler_free(NULL) == MPI_ERR_ARG, "MPI_Errhandler_free(NULL)");
    CHECK(MPI_Comm_get_errhandler(c, NULL) == MPI_ERR_ARG, "MPI_Comm_get_errhandler(NULL)");
    /* a valid one still goes in */
    OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    OK(MPI_Group_free(&self));
    OK(MPI_Session_finalize(&ss));
    OK(MPI_Win_free(&w));
    OK(MPI_Comm_free(&c));
}

static void too_large(void)
{
    /* 1 MiB a type, 4096 of them: 4 GiB, past an int (no memory needed) */
    MPI_Datatype mib;
    OK(MPI_Type_contiguous(1 << 20, MPI_BYTE, &mib));
    OK(MPI_Type_commit(&mib));
    int n = 0;
    OK(MPI_Pack_size(4096, mib, MPI_COMM_WORLD, &n));
    CHECK(n == MPI_UNDEFINED, "MPI_Pack_size of 4 GiB gave %d", n);
    OK(MPI_Pack_size(2047, mib, MPI_COMM_WORLD, &n));
    CHECK(n >= 2047 << 20, "MPI_Pack_size of 2047 MiB gave %d", n);
    MPI_Count nc = 0;
    OK(MPI_Pack_size_c(4096, mib, MPI_COMM_WORLD, &nc));
    CHECK(nc >= (MPI_Count)4096 << 20, "MPI_Pack_size_c gave %lld", (long long)nc);
    MPI_Datatype big;
    OK(MPI_Type_contiguous(4096, mib, &big));
    OK(MPI_Type_commit(&big));
    OK(MPI_Type_size(big, &n));
    CHECK(n == MPI_UNDEFINED, "MPI_Type_size of 4 GiB gave %d", n);
    /* a status the program sets: 3 Gi bytes */
    MPI_Status st;
    OK(MPI_Status_set_elements_c(&st, MPI_BYTE, (MPI_Count)3 << 30));
    OK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == MPI_UNDEFINED, "MPI_Get_count of 3 Gi bytes gave %d", n);
    OK(MPI_Get_elements(&st, MPI_BYTE, &n));
    CHECK(n == MPI_UNDEFINED, "MPI_Get_elements of 3 Gi bytes gave %d", n);
    OK(MPI_Get_count_c(&st, MPI_BYTE, &nc));
    CHECK(nc == (MPI_Count)3 << 30, "MPI_Get_count_c gave %lld", (long long)nc);
    OK(MPI_Type_free(&big));
    OK(MPI_Type_free(&mib));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    version();
    null_names();
    errhandlers();
    too_large();
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("errors41 ok\n");
    MPI_Finalize();
    return 0;
}
