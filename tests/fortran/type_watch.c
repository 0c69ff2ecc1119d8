/* A profiling library (MPI_ names, as mpiP's) that counts the datatype calls
 * a program makes. Preloaded into tests/fortran/sections_f08.f90, which
 * makes none: the types that mpi_f08 builds for a non-contiguous section
 * (src/fortran/mpi_f08_sect.c) and frees after the call are the binding's
 * own, made through the PMPI_ names, and a tool must not count them as the
 * program's. Prints "type watch rank R: N datatype calls" at MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>

static int calls;

int MPI_Type_create_hindexed(int n, const int bl[], const MPI_Aint d[], MPI_Datatype old,
                             MPI_Datatype *t)
{
    calls++;
    return PMPI_Type_create_hindexed(n, bl, d, old, t);
}

int MPI_Type_create_hvector(int n, int bl, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *t)
{
    calls++;
    return PMPI_Type_create_hvector(n, bl, stride, old, t);
}

int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint ext, MPI_Datatype *t)
{
    calls++;
    return PMPI_Type_create_resized(old, lb, ext, t);
}

int MPI_Type_commit(MPI_Datatype *t)
{
    calls++;
    return PMPI_Type_commit(t);
}

int MPI_Type_free(MPI_Datatype *t)
{
    calls++;
    return PMPI_Type_free(t);
}

int MPI_Type_get_extent(MPI_Datatype t, MPI_Aint *lb, MPI_Aint *ext)
{
    calls++;
    return PMPI_Type_get_extent(t, lb, ext);
}

int MPI_Finalize(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("type watch rank %d: %d datatype calls\n", rank, calls);
    fflush(stdout);
    return PMPI_Finalize();
}
