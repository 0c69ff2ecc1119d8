/* The mpi_f08 routines that tools/fortran_gen.awk does not generate:
 * MPI_Init and MPI_Init_thread (no argc/argv in Fortran), with ierror
 * OPTIONAL (NULL when left out), as every mpi_f08 routine has it. */
#include "fortran08.h"

CR_FEXPORT void courier_f08_init(MPI_Fint *ierr)
{
    int rc = MPI_Init(NULL, NULL);
    if (ierr) *ierr = rc;
}

CR_FEXPORT void courier_f08_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int rc = MPI_Init_thread(NULL, NULL, *required, provided);
    if (ierr) *ierr = rc;
}
