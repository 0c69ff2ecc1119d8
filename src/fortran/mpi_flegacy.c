/* The MPI-1 calls MPI-3 removed, for mpif.h and `use mpi` programs (old
 * Fortran codes call them): MPI_ADDRESS, MPI_TYPE_EXTENT, MPI_TYPE_LB,
 * MPI_TYPE_UB, MPI_TYPE_HVECTOR, MPI_TYPE_HINDEXED, MPI_TYPE_STRUCT, and the
 * markers MPI_LB, MPI_UB in mpif.h. libcourier has them (src/api/mpi_legacy.c;
 * C programs opt into their prototypes with OMPI_ENABLE_MPI1_COMPAT); mpi_f08
 * never had them.
 *
 * Invariants:
 *  - as MPI-1 defined them for Fortran, their addresses, extents, bounds,
 *    strides and displacements are default INTEGERs, not
 *    INTEGER(KIND=MPI_ADDRESS_KIND): each is converted to and from MPI_Aint
 *    here (tools/fortran_gen.awk would pass them as MPI_Aint, 8 bytes);
 *  - a value that does not fit a default INTEGER (an address above 2 GiB) is
 *    MPI_ERR_ARG through MPI_COMM_WORLD's error handler, as MPICH reports it,
 *    never a truncated value; the other checks are the C calls'. */
#include <limits.h>
#include <stdio.h>

#include "fortran.h"

/* *f = v, or MPI_ERR_ARG (through the error handler) when v is no INTEGER;
 * when that handler ends the job, a line first says which call and what to
 * use instead. */
static int int_out(const char *call, MPI_Fint *f, MPI_Aint v, int rc)
{
    if (rc != MPI_SUCCESS) return rc;
    if (v < INT_MIN || v > INT_MAX) {
        int rank = -1;
        MPI_Errhandler h = MPI_ERRHANDLER_NULL;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &h);
        if (h != MPI_ERRORS_ARE_FATAL && h != MPI_ERRORS_RETURN) PMPI_Errhandler_free(&h);
        if (h == MPI_ERRORS_ARE_FATAL)
            fprintf(stderr,
                    "courier: rank %d: %s: %lld does not fit a default INTEGER: use the MPI-2 "
                    "form, whose argument is INTEGER(KIND=MPI_ADDRESS_KIND) (MPI_ERR_ARG)\n",
                    rank, call, (long long)v);
        int e = PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_ARG);
        return e == MPI_SUCCESS ? MPI_ERR_ARG : e;
    }
    *f = (MPI_Fint)v;
    return MPI_SUCCESS;
}

/* n INTEGERs as MPI_Aints (NULL: out of memory, or n < 0: the call says so). */
static MPI_Aint *aints_in(const MPI_Fint *f, MPI_Fint n)
{
    MPI_Aint *a = malloc((n > 0 ? (size_t)n : 0) * sizeof *a + 1);
    for (MPI_Fint i = 0; a && i < n; i++) a[i] = f[i];
    return a;
}

#define LEGACY(pfx, PFX)                                                                           \
    CR_FEXPORT void pfx##mpi_address_(void *location, MPI_Fint *address, MPI_Fint *ierr)           \
    {                                                                                              \
        MPI_Aint a = 0;                                                                            \
        *ierr = int_out("MPI_ADDRESS", address, a, PFX##MPI_Address(cr_fbuf(location), &a));       \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_type_extent_(MPI_Fint *dt, MPI_Fint *extent, MPI_Fint *ierr)          \
    {                                                                                              \
        MPI_Aint a = 0;                                                                            \
        *ierr = int_out("MPI_TYPE_EXTENT", extent, a, PFX##MPI_Type_extent(*dt, &a));              \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_type_lb_(MPI_Fint *dt, MPI_Fint *lb, MPI_Fint *ierr)                  \
    {                                                                                              \
        MPI_Aint a = 0;                                                                            \
        *ierr = int_out("MPI_TYPE_LB", lb, a, PFX##MPI_Type_lb(*dt, &a));                          \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_type_ub_(MPI_Fint *dt, MPI_Fint *ub, MPI_Fint *ierr)                  \
    {                                                                                              \
        MPI_Aint a = 0;                                                                            \
        *ierr = int_out("MPI_TYPE_UB", ub, a, PFX##MPI_Type_ub(*dt, &a));                          \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_type_hvector_(MPI_Fint *count, MPI_Fint *bl, MPI_Fint *stride,        \
                                           MPI_Fint *old, MPI_Fint *newtype, MPI_Fint *ierr)       \
    {                                                                                              \
        *ierr = PFX##MPI_Type_hvector(*count, *bl, *stride, *old, newtype);                        \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_type_hindexed_(MPI_Fint *count, MPI_Fint *bls, MPI_Fint *displs,      \
                                            MPI_Fint *old, MPI_Fint *newtype, MPI_Fint *ierr)      \
    {                                                                                              \
        MPI_Aint *d = aints_in(displs, *count);                                                    \
        *ierr = d ? PFX##MPI_Type_hindexed(*count, bls, d, *old, newtype) : MPI_ERR_NO_MEM;        \
        free(d);                                                                                   \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_type_struct_(MPI_Fint *count, MPI_Fint *bls, MPI_Fint *displs,        \
                                          MPI_Fint *types, MPI_Fint *newtype, MPI_Fint *ierr)      \
    {                                                                                              \
        MPI_Aint *d = aints_in(displs, *count);                                                    \
        *ierr = d ? PFX##MPI_Type_struct(*count, bls, d, types, newtype) : MPI_ERR_NO_MEM;         \
        free(d);                                                                                   \
    }
LEGACY(, )
LEGACY(p, P)
