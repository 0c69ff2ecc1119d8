/* MPI-5.0's additions as courier's own library answers them: handles as
 * ints (MPI_Comm_toint, MPI_Type_fromint, ... for the eleven handle kinds)
 * and the standard ABI's inquiries (MPI_Abi_get_version, MPI_Abi_get_info,
 * MPI_Abi_get_fortran_info, MPI_Abi_set_fortran_info and the Fortran
 * booleans). libmpi_abi.so (src/abi/) wraps them for the ABI's handles, and
 * answers MPI_Abi_get_version and the int conversions there itself.
 *
 * Invariants:
 *  - handles are ints (mpi.h), so toint and fromint are the handle's own value
 *    either way, the same as its Fortran handle (MPI_Comm_c2f): they never
 *    fail, and an int that is no live handle gives a handle the call it is
 *    passed to reports as invalid;
 *  - the Fortran types are gfortran's, fixed when courier is built (mpi.h,
 *    mpi_type.c): the "set" calls change nothing, they check that what a
 *    Fortran layer says agrees with them and refuse what does not with
 *    MPI_ERR_ABI, naming what differs;
 *  - every call here works before MPI_Init and after MPI_Finalize, as the info
 *    calls do: an error outside Init..Finalize ends the process with the
 *    message (MPI's initial error handler), inside it goes to MPI_COMM_WORLD's
 *    handler. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define HANDLE_INT(Kind, CType)                                                                    \
    PMPI_WEAK(Kind##_toint);                                                                       \
    int PMPI_##Kind##_toint(CType h)                                                               \
    {                                                                                              \
        return (int)h;                                                                             \
    }                                                                                              \
    PMPI_WEAK(Kind##_fromint);                                                                     \
    CType PMPI_##Kind##_fromint(int h)                                                             \
    {                                                                                              \
        return (CType)h;                                                                           \
    }

HANDLE_INT(Comm, MPI_Comm)
HANDLE_INT(Errhandler, MPI_Errhandler)
HANDLE_INT(File, MPI_File)
HANDLE_INT(Group, MPI_Group)
HANDLE_INT(Info, MPI_Info)
HANDLE_INT(Message, MPI_Message)
HANDLE_INT(Op, MPI_Op)
HANDLE_INT(Request, MPI_Request)
HANDLE_INT(Session, MPI_Session)
HANDLE_INT(Type, MPI_Datatype)
HANDLE_INT(Win, MPI_Win)

/* Report code for call (the lock taken here) and release the lock. */
#define abi_fail(call, code, ...) abi_done(mpi_enter_any(), call, code, __VA_ARGS__)
static int abi_done(cr_job *job, const char *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int abi_done(cr_job *job, const char *call, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mpi_vfail_any(job, call, code, fmt, ap);
    va_end(ap);
    cr_unlock(job);
    return rc;
}

PMPI_WEAK(Abi_get_version);
int PMPI_Abi_get_version(int *abi_major, int *abi_minor)
{
    if (!abi_major || !abi_minor)
        return abi_fail("MPI_Abi_get_version", MPI_ERR_ARG, "%s is NULL",
                        abi_major ? "abi_minor" : "abi_major");
    *abi_major = *abi_minor = -1; /* courier's own mpi.h is not the standard ABI */
    return MPI_SUCCESS;
}

/* A new info object holding the n pairs kv[i] = {key, value}. */
static int info_of(const char *call, MPI_Info *info, const char *const (*kv)[2], int n)
{
    if (!info) return abi_fail(call, MPI_ERR_ARG, "info is NULL");
    int rc = PMPI_Info_create(info);
    for (int i = 0; !rc && i < n; i++) rc = PMPI_Info_set(*info, kv[i][0], kv[i][1]);
    return rc;
}

PMPI_WEAK(Abi_get_info);
int PMPI_Abi_get_info(MPI_Info *info)
{
    static const char *const kv[][2] = {
        {"mpi_aint_size", "8"}, {"mpi_count_size", "8"}, {"mpi_offset_size", "8"}};
    _Static_assert(sizeof(MPI_Aint) == 8 && sizeof(MPI_Count) == 8 && sizeof(MPI_Offset) == 8,
                   "the sizes MPI_Abi_get_info gives");
    return info_of("MPI_Abi_get_info", info, kv, 3);
}

/* The Fortran types (gfortran's): default LOGICAL, INTEGER, REAL and DOUBLE
 * PRECISION in bytes, then the optional kinds and whether courier has each. */
static const char *const fortran_kv[][2] = {{"mpi_logical_size", "4"},
                                            {"mpi_integer_size", "4"},
                                            {"mpi_real_size", "4"},
                                            {"mpi_double_precision_size", "8"},
                                            {"mpi_logical1_supported", "true"},
                                            {"mpi_logical2_supported", "true"},
                                            {"mpi_logical4_supported", "true"},
                                            {"mpi_logical8_supported", "true"},
                                            {"mpi_logical16_supported", "true"},
                                            {"mpi_integer1_supported", "true"},
                                            {"mpi_integer2_supported", "true"},
                                            {"mpi_integer4_supported", "true"},
                                            {"mpi_integer8_supported", "true"},
                                            {"mpi_integer16_supported", "true"},
                                            {"mpi_real2_supported", "false"},
                                            {"mpi_real4_supported", "true"},
                                            {"mpi_real8_supported", "true"},
                                            {"mpi_real16_supported", "true"},
                                            {"mpi_complex4_supported", "false"},
                                            {"mpi_complex8_supported", "true"},
                                            {"mpi_complex16_supported", "true"},
                                            {"mpi_complex32_supported", "true"},
                                            {"mpi_double_complex_supported", "true"}};
#define N_FORTRAN_SIZES 4
#define N_FORTRAN_KV ((int)(sizeof fortran_kv / sizeof *fortran_kv))

PMPI_WEAK(Abi_get_fortran_info);
int PMPI_Abi_get_fortran_info(MPI_Info *info)
{
    return info_of("MPI_Abi_get_fortran_info", info, fortran_kv, N_FORTRAN_KV);
}

/* A Fortran binding layer tells what its compiler's types are: each default
 * type's size must be courier's (every one must be given); a kind said to be
 * supported must be one courier has. */
PMPI_WEAK(Abi_set_fortran_info);
int PMPI_Abi_set_fortran_info(MPI_Info info)
{
    const char *call = "MPI_Abi_set_fortran_info";
    cr_job *job = mpi_enter_any();
    if (!mpi_info_live(info))
        return abi_done(job, call, MPI_ERR_INFO, "info %#x is not a valid info object",
                        (unsigned)info);
    for (int i = 0; i < N_FORTRAN_KV; i++) {
        const char *key = fortran_kv[i][0], *ours = fortran_kv[i][1];
        const char *v = mpi_info_lookup(info, key);
        if (!v && i < N_FORTRAN_SIZES)
            return abi_done(job, call, MPI_ERR_ABI,
                            "the info does not say \"%s\"; give the size in bytes", key);
        bool differs = v && (i < N_FORTRAN_SIZES ? atoi(v) != atoi(ours)
                                                 : !strcmp(v, "true") && strcmp(ours, "true"));
        if (differs)
            return abi_done(job, call, MPI_ERR_ABI,
                            "\"%s\" is %s, courier's Fortran types are gfortran's (%s); build "
                            "the Fortran code with gfortran's default kinds",
                            key, v, ours);
    }
    cr_unlock(job);
    return MPI_SUCCESS;
}

/* gfortran's .TRUE. and .FALSE. in a LOGICAL of size bytes (1, 2, 4, 8 or
 * 16), least significant byte first. */
static bool logical_size_ok(int size)
{
    return size == 1 || size == 2 || size == 4 || size == 8 || size == 16;
}
static void logical_value(void *p, int size, bool v)
{
    unsigned char b[16] = {0};
    b[0] = v;
    memcpy(p, b, (size_t)size); /* little-endian (x86-64, AArch64) */
}
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "a LOGICAL's value is its first byte");

PMPI_WEAK(Abi_get_fortran_booleans);
int PMPI_Abi_get_fortran_booleans(int logical_size, void *logical_true, void *logical_false,
                                  int *is_set)
{
    const char *call = "MPI_Abi_get_fortran_booleans";
    if (!logical_size_ok(logical_size))
        return abi_fail(call, MPI_ERR_ABI,
                        "logical_size %d is no LOGICAL kind courier has (1, 2, 4, 8 or 16 bytes)",
                        logical_size);
    if (!logical_true || !logical_false || !is_set)
        return abi_fail(call, MPI_ERR_ARG, "%s is NULL",
                        !logical_true    ? "logical_true"
                        : !logical_false ? "logical_false"
                                         : "is_set");
    logical_value(logical_true, logical_size, true);
    logical_value(logical_false, logical_size, false);
    *is_set = 1; /* known since courier was built */
    return MPI_SUCCESS;
}

PMPI_WEAK(Abi_set_fortran_booleans);
int PMPI_Abi_set_fortran_booleans(int logical_size, void *logical_true, void *logical_false)
{
    const char *call = "MPI_Abi_set_fortran_booleans";
    if (!logical_size_ok(logical_size))
        return abi_fail(call, MPI_ERR_ABI,
                        "logical_size %d is no LOGICAL kind courier has (1, 2, 4, 8 or 16 bytes)",
                        logical_size);
    unsigned char t[16], f[16];
    logical_value(t, logical_size, true);
    logical_value(f, logical_size, false);
    if (!logical_true || !logical_false)
        return abi_fail(call, MPI_ERR_ARG, "%s is NULL",
                        !logical_true ? "logical_true" : "logical_false");
    if (memcmp(logical_true, t, (size_t)logical_size) ||
        memcmp(logical_false, f, (size_t)logical_size))
        return abi_fail(call, MPI_ERR_ABI,
                        "the values differ from courier's (gfortran's: .TRUE. is 1, .FALSE. 0); "
                        "build the Fortran code with gfortran");
    return MPI_SUCCESS;
}
