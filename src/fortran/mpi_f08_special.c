/* The mpi_f08 routines that tools/fortran_gen.awk does not generate:
 * MPI_Init and MPI_Init_thread (no argc/argv in Fortran), with ierror
 * OPTIONAL (NULL when left out), as every mpi_f08 routine has it; and the C
 * side of MPI_Op_create and MPI_Comm/Win_create_errhandler, whose module
 * procedures pass the program's procedure as C_FUNLOC gives it: MPI calls it
 * as C's, which is what mpi_f08's abstract interfaces declare. */
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

CR_FEXPORT void courier_f08_op_create(MPI_User_function *fn, MPI_Fint *commute, MPI_Fint *op,
                                      MPI_Fint *ierr)
{
    *ierr = MPI_Op_create(fn, *commute, op);
}

/* win: 0 for a communicator's handler, 1 for a window's. */
CR_FEXPORT void courier_f08_errh_create(void (*fn)(void), MPI_Fint *win, MPI_Fint *errhandler,
                                        MPI_Fint *ierr)
{
    if (*win)
        *ierr = MPI_Win_create_errhandler((MPI_Win_errhandler_function *)fn, errhandler);
    else
        *ierr = MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)fn, errhandler);
}
