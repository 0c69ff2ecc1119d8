/* MPI-5.0's additions, one program for both headers (built against courier's
 * mpi.h and against the ABI's, as basics.c): the version, the ABI inquiries,
 * handles as ints and back (used after the round trip), MPI_LOGICAL16 in a
 * reduction, the large-count partitioned forms, and MPI_ERR_ABI from the Fortran "set" calls under
 * MPI_ERRORS_RETURN. Every line it prints is the same for both builds; what
 * must differ (MPI_Abi_get_version: -1 for courier's own header, the
 * header's MPI_ABI_VERSION for the ABI's) is checked and printed as "ok". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef MPI_ABI_VERSION
/* The values the final MPI-5.0 ABI gives (the MPI Forum's mpi-abi-stubs 1.0.0
 * and MPICH's mpi_abi.h agree) where its 2025 draft, which courier's header
 * first followed, had others: a program built against the final header passes
 * these. */
_Static_assert(MPI_THREAD_SINGLE == 0 && MPI_THREAD_FUNNELED == 1024 &&
                   MPI_THREAD_SERIALIZED == 2048 && MPI_THREAD_MULTIPLE == 4096,
               "thread levels");
_Static_assert(MPI_SEEK_CUR == 401 && MPI_SEEK_END == 402 && MPI_SEEK_SET == 403, "seek");
_Static_assert(MPI_APPNUM == 505 && MPI_LASTUSEDCODE == 506 && MPI_UNIVERSE_SIZE == 507,
               "predefined attribute keys");
_Static_assert(MPI_COMBINER_F90_REAL == 113 && MPI_COMBINER_F90_COMPLEX == 114 &&
                   MPI_COMBINER_F90_INTEGER == 115,
               "f90 combiners");
_Static_assert(MPI_T_CB_REQUIRE_MPI_RESTRICTED == 0x03 && MPI_T_CB_REQUIRE_THREAD_SAFE == 0x0F &&
                   MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE == 0x3F,
               "callback safety");
_Static_assert(MPI_ERR_ABI == 62 && MPI_VERSION == 5 && MPI_SUBVERSION == 0, "MPI-5.0");
#endif

static int me, np, failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "rank %d: FAIL: %s\n", me, what);
        failures++;
    }
}

/* The value of key in info, or "-" (in one of 8 buffers taken in turn, for
 * one printf). */
static const char *value(MPI_Info info, const char *key)
{
    static char v[8][64];
    static int next;
    char *b = v[next++ % 8];
    int len = sizeof v[0], flag = 0;
    MPI_Info_get_string(info, key, &len, b, &flag);
    return flag ? b : "-";
}

int main(int argc, char **argv)
{
    /* before MPI_Init: the version and the ABI's own inquiry */
    int version, subversion, major = 0, minor = 0;
    MPI_Get_version(&version, &subversion);
    MPI_Abi_get_version(&major, &minor);
#ifdef MPI_ABI_VERSION
    int abi_ok = major == MPI_ABI_VERSION && minor == MPI_ABI_SUBVERSION && major >= 1;
#else
    int abi_ok = major == -1 && minor == -1;
#endif
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    check(version == MPI_VERSION && subversion == MPI_SUBVERSION, "MPI_Get_version");
#ifdef MPI_ABI_VERSION /* handles the 2025 draft numbered otherwise (above) */
    check((uintptr_t)MPI_ERRORS_ABORT == 0x142 && (uintptr_t)MPI_ERRORS_RETURN == 0x143 &&
              (uintptr_t)MPI_CHARACTER == 0x21e,
          "the ABI's MPI_ERRORS_ABORT, MPI_ERRORS_RETURN, MPI_CHARACTER");
#endif
    check(abi_ok, "MPI_Abi_get_version");
    if (me == 0)
        printf("version %d.%d, abi version %s\n", version, subversion, abi_ok ? "ok" : "wrong");

    MPI_Info info;
    MPI_Abi_get_info(&info);
    if (me == 0)
        printf("abi info: aint %s count %s offset %s\n", value(info, "mpi_aint_size"),
               value(info, "mpi_count_size"), value(info, "mpi_offset_size"));
    check((int)sizeof(MPI_Aint) == 8 && !strcmp(value(info, "mpi_aint_size"), "8"),
          "mpi_aint_size");
    MPI_Info_free(&info);
    MPI_Abi_get_fortran_info(&info);
    if (me == 0)
        printf("fortran info: logical %s integer %s real %s double precision %s, logical16 %s, "
               "real2 %s\n",
               value(info, "mpi_logical_size"), value(info, "mpi_integer_size"),
               value(info, "mpi_real_size"), value(info, "mpi_double_precision_size"),
               value(info, "mpi_logical16_supported"), value(info, "mpi_real2_supported"));

    /* the same info given back is accepted; a different INTEGER size, or
     * a missing size, is MPI_ERR_ABI */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Abi_set_fortran_info(info), cls = -1;
    check(rc == MPI_SUCCESS, "MPI_Abi_set_fortran_info of its own info");
    MPI_Info_set(info, "mpi_integer_size", "8");
    rc = MPI_Abi_set_fortran_info(info);
    MPI_Error_class(rc, &cls);
    check(cls == MPI_ERR_ABI, "MPI_Abi_set_fortran_info with INTEGER of 8 bytes");
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    rc = MPI_Abi_set_fortran_info(info);
    int cls2 = -1;
    MPI_Error_class(rc, &cls2);
    check(cls2 == MPI_ERR_ABI, "MPI_Abi_set_fortran_info of an empty info");
    MPI_Info_free(&info);
    char name[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(MPI_ERR_ABI, name, &len);
    if (me == 0) printf("set fortran info: own ok, other sizes class %s\n", name);

    /* the booleans: gfortran's, at every LOGICAL kind; others refused */
    int is_set = 0, t4 = -5, f4 = -5;
    long long t8 = -5, f8 = -5;
    MPI_Abi_get_fortran_booleans(4, &t4, &f4, &is_set);
    MPI_Abi_get_fortran_booleans(8, &t8, &f8, &is_set);
    int minus1 = -1, zero = 0, one = 1;
    int same = MPI_Abi_set_fortran_booleans(4, &one, &zero);
    rc = MPI_Abi_set_fortran_booleans(4, &minus1, &zero);
    MPI_Error_class(rc, &cls);
    int rc3 = MPI_Abi_get_fortran_booleans(3, &t4, &f4, &is_set), cls3 = -1;
    MPI_Error_class(rc3, &cls3);
    check(same == MPI_SUCCESS && cls == MPI_ERR_ABI && cls3 == MPI_ERR_ABI, "the booleans");
    if (me == 0)
        printf("booleans: set %d, true %d/%lld, false %d/%lld, -1 refused %s, size 3 refused %s\n",
               is_set, t4, t8, f4, f8, cls == MPI_ERR_ABI ? "yes" : "no",
               cls3 == MPI_ERR_ABI ? "yes" : "no");

    /* handles as ints: the round trip gives the handle back, and it works */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm back = MPI_Comm_fromint(MPI_Comm_toint(dup));
    int size = 0, result = -1;
    MPI_Comm_size(back, &size);
    MPI_Comm_compare(back, dup, &result);
    check(back == dup && result == MPI_IDENT && size == np, "MPI_Comm_toint/fromint");
    check(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_WORLD)) == MPI_COMM_WORLD &&
              MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_NULL)) == MPI_COMM_NULL,
          "predefined communicators as ints");
    check(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE &&
              MPI_Op_fromint(MPI_Op_toint(MPI_SUM)) == MPI_SUM &&
              MPI_Group_fromint(MPI_Group_toint(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY &&
              MPI_Info_fromint(MPI_Info_toint(MPI_INFO_ENV)) == MPI_INFO_ENV &&
              MPI_Errhandler_fromint(MPI_Errhandler_toint(MPI_ERRORS_RETURN)) ==
                  MPI_ERRORS_RETURN &&
              MPI_Request_fromint(MPI_Request_toint(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL &&
              MPI_Win_fromint(MPI_Win_toint(MPI_WIN_NULL)) == MPI_WIN_NULL &&
              MPI_File_fromint(MPI_File_toint(MPI_FILE_NULL)) == MPI_FILE_NULL &&
              MPI_Session_fromint(MPI_Session_toint(MPI_SESSION_NULL)) == MPI_SESSION_NULL &&
              MPI_Message_fromint(MPI_Message_toint(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC,
          "predefined handles as ints");
    MPI_Datatype vec, vec2;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    vec2 = MPI_Type_fromint(MPI_Type_toint(vec));
    int tsize = 0;
    MPI_Type_size(vec2, &tsize);
    MPI_Request req;
    int x = me, y = -1;
    MPI_Irecv(&y, 1, MPI_INT, (me + np - 1) % np, 3, back, &req);
    MPI_Request req2 = MPI_Request_fromint(MPI_Request_toint(req));
    MPI_Send(&x, 1, MPI_INT, (me + 1) % np, 3, dup);
    MPI_Wait(&req2, MPI_STATUS_IGNORE);
    check(tsize == 2 * (int)sizeof(int) && y == (me + np - 1) % np, "a type and a request as ints");
    MPI_Type_free(&vec2);
    MPI_Comm_free(&dup);
    if (me == 0)
        printf("handles as ints: communicator size %d compare %s, vector size %d, received %d\n",
               size, result == MPI_IDENT ? "ident" : "other", tsize, y);

    /* MPI_LOGICAL16 (gfortran's LOGICAL(16)): 16 bytes, .TRUE. 1, reduced */
    unsigned char l16[2][16] = {{0}}, r16[2][16];
    l16[0][0] = me == 0; /* true on rank 0 only */
    l16[1][0] = 1;       /* true everywhere */
    int l16size = 0;
    MPI_Type_size(MPI_LOGICAL16, &l16size);
    MPI_Allreduce(l16, r16, 2, MPI_LOGICAL16, MPI_LAND, MPI_COMM_WORLD);
    int land0 = r16[0][0], land1 = r16[1][0];
    MPI_Allreduce(l16, r16, 2, MPI_LOGICAL16, MPI_LOR, MPI_COMM_WORLD);
    char tname[MPI_MAX_OBJECT_NAME];
    MPI_Type_get_name(MPI_LOGICAL16, tname, &len);
    check(l16size == 16 && land0 == (np == 1) && land1 == 1 && r16[0][0] == 1 && r16[1][0] == 1,
          "MPI_LOGICAL16");
    if (me == 0)
        printf("%s: size %d, land %d %d, lor %d %d\n", tname, l16size, land0, land1, r16[0][0],
               r16[1][0]);

    /* the large-count partitioned forms (MPI_Psend_init_c, MPI_Precv_init_c):
     * rank 0 sends 2 partitions of 3 ints to rank 1 */
    int part[6] = {0}, parts_ok = 1;
    if (me < 2 && np >= 2) {
        MPI_Request preq;
        if (me == 0) {
            for (int i = 0; i < 6; i++) part[i] = 10 + i;
            MPI_Psend_init_c(part, 2, (MPI_Count)3, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &preq);
        } else {
            MPI_Precv_init_c(part, 2, (MPI_Count)3, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &preq);
        }
        MPI_Start(&preq);
        if (me == 0) MPI_Pready_range(0, 1, preq);
        MPI_Wait(&preq, MPI_STATUS_IGNORE);
        MPI_Request_free(&preq);
        for (int i = 0; i < 6; i++) parts_ok &= part[i] == 10 + i;
        check(parts_ok, "MPI_Psend_init_c / MPI_Precv_init_c");
    }
    if (me == 0) printf("partitioned _c forms: %s\n", parts_ok ? "6 ints ok" : "wrong");

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) printf("mpi5: %s\n", all ? "FAILED" : "ok");
    MPI_Finalize();
    return all != 0;
}
