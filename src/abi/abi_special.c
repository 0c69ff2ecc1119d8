/* The calls of the MPI-5 ABI that courier's own mpi.h has no form of:
 * MPI_Abi_get_version and MPI_Abi_get_info (MPI-5.0 "Application Binary
 * Interface"), and the checks that abi.h's copies of the ABI's values are the
 * ABI header's. Written against include/abi/mpi.h, as the generated wrappers
 * are (abi_wrap.c).
 *
 * Invariants: like every wrapper, it reaches courier only through
 * courier_PMPI_ names, with courier's handles (ints) and error codes. */
#include <mpi.h> /* include/abi/mpi.h */

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

int courier_PMPI_Info_create(int *info);
int courier_PMPI_Info_set(int info, const char *key, const char *value);

int PMPI_Abi_get_version(int *abi_major, int *abi_minor)
{
    if (!abi_major || !abi_minor) return MPI_ERR_ARG;
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return MPI_SUCCESS;
}
extern __typeof__(PMPI_Abi_get_version) MPI_Abi_get_version
    __attribute__((weak, alias("PMPI_Abi_get_version"), visibility("default")));

/* A new info object (the caller frees it) with the sizes of the ABI's integer
 * types in this library, in bytes. */
int PMPI_Abi_get_info(MPI_Info *info)
{
    if (!info) return MPI_ERR_ARG;
    int c = 0;
    int rc = courier_PMPI_Info_create(&c);
    if (!rc) rc = courier_PMPI_Info_set(c, "mpi_aint_size", "8");
    if (!rc) rc = courier_PMPI_Info_set(c, "mpi_count_size", "8");
    if (!rc) rc = courier_PMPI_Info_set(c, "mpi_offset_size", "8");
    if (!rc) *info = (MPI_Info)abi_hout_Info(c);
    return abi_err_out(rc);
}
extern __typeof__(PMPI_Abi_get_info) MPI_Abi_get_info
    __attribute__((weak, alias("PMPI_Abi_get_info"), visibility("default")));
