/* The calls of the MPI-5 ABI that mean something else here than in courier's
 * own mpi.h: MPI_Abi_get_version (MPI-5.0 "Application Binary Interface") and
 * the handle-to-int conversions (MPI_Comm_toint, ...); the checks that
 * abi.h's copies of the ABI's values are the ABI header's; the status
 * conversions and the status field calls, which work on the ABI's status in
 * place. Written against include/abi/mpi.h, as the
 * generated wrappers are (abi_wrap.c).
 *
 * Invariants: like every wrapper, it reaches courier only through
 * courier_PMPI_ names, with courier's handles (ints) and error codes. */
#include <mpi.h> /* include/abi/mpi.h */
#include <string.h>

#include "abi.h"

_Static_assert(ABI_ANY_SOURCE == MPI_ANY_SOURCE && ABI_ANY_TAG == MPI_ANY_TAG &&
                   ABI_PROC_NULL == MPI_PROC_NULL && ABI_ROOT == MPI_ROOT &&
                   ABI_DISTRIBUTE_DFLT_DARG == MPI_DISTRIBUTE_DFLT_DARG &&
                   ABI_WIN_FLAVOR_CREATE == MPI_WIN_FLAVOR_CREATE &&
                   ABI_WIN_FLAVOR_CREATE + 1 == MPI_WIN_FLAVOR_ALLOCATE &&
                   ABI_WIN_FLAVOR_CREATE + 2 == MPI_WIN_FLAVOR_DYNAMIC &&
                   ABI_WIN_FLAVOR_CREATE + 3 == MPI_WIN_FLAVOR_SHARED &&
                   ABI_WIN_UNIFIED == MPI_WIN_UNIFIED && ABI_WIN_SEPARATE == MPI_WIN_SEPARATE,
               "abi.h's copies of the ABI's values");
_Static_assert(MPI_T_CB_REQUIRE_NONE == 0 && MPI_T_CB_REQUIRE_MPI_RESTRICTED == 0x03 &&
                   MPI_T_CB_REQUIRE_THREAD_SAFE == 0x0F &&
                   MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE == 0x3F && MPI_T_SOURCE_ORDERED == 1 &&
                   MPI_T_SOURCE_UNORDERED == 2,
               "the ABI's callback safety levels and source orders, courier's too (abi_core.c)");

int courier_PMPI_Abi_get_version(int *abi_major, int *abi_minor);

/* The ABI's version here; courier's own MPI_Abi_get_version says -1, -1. */
int PMPI_Abi_get_version(int *abi_major, int *abi_minor)
{
    int rc = courier_PMPI_Abi_get_version(abi_major, abi_minor); /* reports NULL arguments */
    if (rc) return abi_err_out(rc);
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return MPI_SUCCESS;
}
extern __typeof__(PMPI_Abi_get_version) MPI_Abi_get_version
    __attribute__((weak, alias("PMPI_Abi_get_version"), visibility("default")));

/* A handle as an int and back: the ABI handle's own value either way. A
 * predefined handle's int is its ABI constant (below ABI_PREDEF), any other
 * is courier's handle (bit 30 set), which fits an int, so the int names the
 * same handle in every library built for the ABI's Fortran. */
#define HANDLE_INT(Kind, CType)                                                                    \
    int PMPI_##Kind##_toint(CType h)                                                               \
    {                                                                                              \
        return (int)(uintptr_t)h;                                                                  \
    }                                                                                              \
    CType PMPI_##Kind##_fromint(int h)                                                             \
    {                                                                                              \
        return (CType)(uintptr_t)(unsigned)h;                                                      \
    }                                                                                              \
    extern __typeof__(PMPI_##Kind##_toint) MPI_##Kind##_toint                                      \
        __attribute__((weak, alias("PMPI_" #Kind "_toint"), visibility("default")));               \
    extern __typeof__(PMPI_##Kind##_fromint) MPI_##Kind##_fromint                                  \
        __attribute__((weak, alias("PMPI_" #Kind "_fromint"), visibility("default")));
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

/* ---- the Fortran status conversions ---- */
_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint) &&
                   sizeof(MPI_F08_status) == sizeof(MPI_Status) && MPI_F_SOURCE == 0 &&
                   MPI_F_TAG == 1 && MPI_F_ERROR == 2,
               "the ABI's Fortran statuses are its C status's ints");

/* The sentinels' storage: only their addresses mean something. */
static const MPI_Fint f_ignore[4][MPI_F_STATUS_SIZE];
#define ABI_EXPORT_DATA __attribute__((visibility("default")))
ABI_EXPORT_DATA MPI_Fint *const MPI_F_STATUS_IGNORE = (MPI_Fint *)f_ignore[0];
ABI_EXPORT_DATA MPI_Fint *const MPI_F_STATUSES_IGNORE = (MPI_Fint *)f_ignore[1];
ABI_EXPORT_DATA MPI_F08_status *const MPI_F08_STATUS_IGNORE = (MPI_F08_status *)f_ignore[2];
ABI_EXPORT_DATA MPI_F08_status *const MPI_F08_STATUSES_IGNORE = (MPI_F08_status *)f_ignore[3];

static int ignored(const void *p)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)f_ignore;
    return !p || (a >= lo && a < lo + sizeof f_ignore);
}

/* courier's conversion of the same name, called only to report a NULL or
 * ignore argument (its checks name the call and the argument, on
 * MPI_COMM_WORLD's error handler): it gets NULL for the bad one. */
typedef int (*cr_status_conv)(const void *from, void *to);
static int status_conv(cr_status_conv cr, const void *from, void *to)
{
    if (ignored(from) || ignored(to)) {
        long long scratch[4] = {0}; /* holds courier's status (24 bytes) */
        return abi_err_out(cr(ignored(from) ? NULL : scratch, ignored(to) ? NULL : scratch));
    }
    memcpy(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

#define STATUS_CONV(name, From, To)                                                                \
    int courier_PMPI_Status_##name(const void *from, void *to);                                    \
    int PMPI_Status_##name(const From *from, To *to)                                               \
    {                                                                                              \
        return status_conv(courier_PMPI_Status_##name, from, to);                                  \
    }                                                                                              \
    extern __typeof__(PMPI_Status_##name) MPI_Status_##name                                        \
        __attribute__((weak, alias("PMPI_Status_" #name), visibility("default")));
STATUS_CONV(c2f, MPI_Status, MPI_Fint)
STATUS_CONV(f2c, MPI_Fint, MPI_Status)
STATUS_CONV(c2f08, MPI_Status, MPI_F08_status)
STATUS_CONV(f082c, MPI_F08_status, MPI_Status)
STATUS_CONV(f2f08, MPI_Fint, MPI_F08_status)
STATUS_CONV(f082f, MPI_F08_status, MPI_Fint)

/* A status's public fields, read and written where they are: they hold the
 * ABI's values already, and what a program put there comes back as it was
 * (through courier's calls an error field holding no error code came back as
 * MPI_ERR_UNKNOWN). courier's call of the same name is called only to report
 * a NULL argument. */
#define STATUS_FIELD(name, field)                                                                  \
    int courier_PMPI_Status_get_##name(void *status, int *v);                                      \
    int courier_PMPI_Status_set_##name(void *status, int v);                                       \
    int PMPI_Status_get_##name(MPI_Status *status, int *v)                                         \
    {                                                                                              \
        long long scratch[4] = {0};                                                                \
        if (!status || !v)                                                                         \
            return abi_err_out(courier_PMPI_Status_get_##name(status ? scratch : NULL, v));        \
        *v = status->field;                                                                        \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    int PMPI_Status_set_##name(MPI_Status *status, int v)                                          \
    {                                                                                              \
        if (!status) return abi_err_out(courier_PMPI_Status_set_##name(NULL, 0));                  \
        status->field = v;                                                                         \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    extern __typeof__(PMPI_Status_get_##name) MPI_Status_get_##name                                \
        __attribute__((weak, alias("PMPI_Status_get_" #name), visibility("default")));             \
    extern __typeof__(PMPI_Status_set_##name) MPI_Status_set_##name                                \
        __attribute__((weak, alias("PMPI_Status_set_" #name), visibility("default")));
STATUS_FIELD(source, MPI_SOURCE)
STATUS_FIELD(tag, MPI_TAG)
STATUS_FIELD(error, MPI_ERROR)
