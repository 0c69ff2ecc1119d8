/* The MPI-1 datatype calls MPI-3.0 removed (MPI_Address, MPI_Type_extent,
 * _lb, _ub, _hvector, _hindexed, _struct) and the MPI_LB/MPI_UB markers, for
 * old programs. mpi.h declares them only under OMPI_ENABLE_MPI1_COMPAT (Open
 * MPI's switch); the library always defines them, so a program built with the
 * switch links.
 *
 * Invariants:
 *  - each call is its MPI-2 replacement (MPI_Get_address, MPI_Type_get_extent,
 *    MPI_Type_create_hvector, ...), called through PMPI_ so a tool sees only
 *    the program's call; errors are the replacement's;
 *  - MPI_LB and MPI_UB are never datatypes: MPI_Type_struct drops the entries
 *    that name them and resizes the struct of the others to the lowest MPI_LB
 *    and highest MPI_UB displacement given (the MPI-1 rule); MPI_Type_get_name
 *    names them (MPI-1's implementations did, and old Fortran tests ask);
 *    anywhere else they are an invalid datatype (MPI_ERR_TYPE). */
#define OMPI_ENABLE_MPI1_COMPAT 1
#include <stdlib.h>

#include "mpi_impl.h"

const char *mpi_legacy_marker_name(MPI_Datatype dt)
{
    return dt == MPI_LB ? "MPI_LB" : dt == MPI_UB ? "MPI_UB" : NULL;
}

PMPI_WEAK(Address);
int PMPI_Address(void *location, MPI_Aint *address)
{
    return PMPI_Get_address(location, address);
}

PMPI_WEAK(Type_extent);
int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;
    return PMPI_Type_get_extent(datatype, &lb, extent);
}

PMPI_WEAK(Type_lb);
int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint extent;
    return PMPI_Type_get_extent(datatype, displacement, &extent);
}

PMPI_WEAK(Type_ub);
int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb, extent;
    int rc = PMPI_Type_get_extent(datatype, &lb, &extent);
    if (!rc && displacement) *displacement = lb + extent;
    return rc;
}

PMPI_WEAK(Type_hvector);
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

PMPI_WEAK(Type_hindexed);
int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                                     newtype);
}

PMPI_WEAK(Type_struct);
int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    int n = 0;
    bool has_lb = false, has_ub = false;
    MPI_Aint lb = 0, ub = 0;
    for (int i = 0; count > 0 && array_of_types && array_of_displacements && i < count; i++) {
        MPI_Aint d = array_of_displacements[i];
        if (array_of_types[i] == MPI_LB) {
            lb = has_lb && lb < d ? lb : d;
            has_lb = true;
        } else if (array_of_types[i] == MPI_UB) {
            ub = has_ub && ub > d ? ub : d;
            has_ub = true;
        } else {
            n++;
        }
    }
    if (!has_lb && !has_ub)
        return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                       array_of_types, newtype);
    /* the entries that are data, then the markers' bounds */
    int *bl = malloc((size_t)(n ? n : 1) * sizeof *bl);
    MPI_Aint *disp = malloc((size_t)(n ? n : 1) * sizeof *disp);
    MPI_Datatype *ty = malloc((size_t)(n ? n : 1) * sizeof *ty);
    int rc = MPI_ERR_NO_MEM;
    if (bl && disp && ty) {
        int k = 0;
        for (int i = 0; i < count; i++)
            if (array_of_types[i] != MPI_LB && array_of_types[i] != MPI_UB) {
                bl[k] = array_of_blocklengths ? array_of_blocklengths[i] : 0;
                disp[k] = array_of_displacements[i];
                ty[k++] = array_of_types[i];
            }
        MPI_Datatype inner;
        rc = PMPI_Type_create_struct(n, bl, disp, ty, &inner);
        if (!rc) {
            MPI_Aint ilb, iext;
            rc = PMPI_Type_get_extent(inner, &ilb, &iext);
            if (!rc) {
                MPI_Aint l = has_lb ? lb : ilb, u = has_ub ? ub : ilb + iext;
                rc = PMPI_Type_create_resized(inner, l, u - l, newtype);
            }
            PMPI_Type_free(&inner);
        }
    }
    free(bl);
    free(disp);
    free(ty);
    return rc;
}
