/* The calls of the MPI-5 ABI that courier's own mpi.h has no form of:
 * MPI_Abi_get_version and MPI_Abi_get_info (MPI-5.0 "Application Binary
 * Interface"). Written against include/abi/mpi.h, as the generated wrappers
 * are (abi_wrap.c).
 *
 * Invariants: like every wrapper, it reaches courier only through
 * courier_PMPI_ names, with courier's handles (ints) and error codes. */
#include <mpi.h> /* include/abi/mpi.h */

#include "abi.h"

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
