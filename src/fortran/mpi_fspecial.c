/* The mpif.h / `use mpi` entry points that tools/fortran_gen.awk does not
 * generate, because their Fortran form is not the C one's by reference:
 * MPI_INIT and MPI_INIT_THREAD (no argc/argv), MPI_PCONTROL (no varargs), and
 * the attribute calls, whose Fortran values are INTEGER(KIND=MPI_ADDRESS_KIND)
 * (MPI-1's MPI_ATTR_GET/PUT: default INTEGER) where C stores a pointer.
 *
 * Invariants:
 *  - a Fortran attribute value is stored as the C pointer of the same bits,
 *    so C and Fortran see the same attribute (MPI-3.1 §17.2.7);
 *  - the predefined attributes, which C gives as a pointer to their value,
 *    reach Fortran as the value itself (MPI_WIN_BASE: the base address);
 *  - the calls are the C ones: their checks and error handlers apply. */
#include "fortran.h"

CR_FEXPORT void mpi_init_(MPI_Fint *ierr)
{
    *ierr = MPI_Init(NULL, NULL);
}

CR_FEXPORT void pmpi_init_(MPI_Fint *ierr)
{
    *ierr = PMPI_Init(NULL, NULL);
}

CR_FEXPORT void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    *ierr = MPI_Init_thread(NULL, NULL, *required, provided);
}

CR_FEXPORT void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    *ierr = PMPI_Init_thread(NULL, NULL, *required, provided);
}

CR_FEXPORT void mpi_pcontrol_(MPI_Fint *level, MPI_Fint *ierr)
{
    *ierr = MPI_Pcontrol(*level);
}

CR_FEXPORT void pmpi_pcontrol_(MPI_Fint *level, MPI_Fint *ierr)
{
    *ierr = PMPI_Pcontrol(*level);
}

/* A communicator's predefined attribute: C gives a pointer to an int. */
static int comm_predefined(int keyval)
{
    return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

/* A window's predefined attribute, as Fortran sees it. */
static MPI_Aint win_value(int keyval, void *v)
{
    switch (keyval) {
    case MPI_WIN_BASE:
        return (MPI_Aint)v;
    case MPI_WIN_SIZE:
        return *(MPI_Aint *)v;
    case MPI_WIN_DISP_UNIT:
    case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL:
        return *(int *)v;
    default:
        return (MPI_Aint)v;
    }
}

#define ATTR_PAIR(pfx, PFX)                                                                        \
    CR_FEXPORT void pfx##mpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val,       \
                                            MPI_Fint *ierr)                                        \
    {                                                                                              \
        *ierr = PFX##MPI_Comm_set_attr(*comm, *keyval, (void *)*val);                              \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val,       \
                                            MPI_Fint *flag, MPI_Fint *ierr)                        \
    {                                                                                              \
        void *v = NULL;                                                                            \
        *ierr = PFX##MPI_Comm_get_attr(*comm, *keyval, &v, flag);                                  \
        if (*ierr == MPI_SUCCESS && *flag)                                                         \
            *val = comm_predefined(*keyval) ? *(int *)v : (MPI_Aint)v;                             \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val,            \
                                       MPI_Fint *ierr)                                             \
    {                                                                                              \
        *ierr = PFX##MPI_Attr_put(*comm, *keyval, (void *)(MPI_Aint)*val);                         \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val,            \
                                       MPI_Fint *flag, MPI_Fint *ierr)                             \
    {                                                                                              \
        void *v = NULL;                                                                            \
        *ierr = PFX##MPI_Attr_get(*comm, *keyval, &v, flag);                                       \
        if (*ierr == MPI_SUCCESS && *flag)                                                         \
            *val = comm_predefined(*keyval) ? *(int *)v : (MPI_Fint)(MPI_Aint)v;                   \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_win_set_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val,         \
                                           MPI_Fint *ierr)                                         \
    {                                                                                              \
        *ierr = PFX##MPI_Win_set_attr(*win, *keyval, (void *)*val);                                \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val,         \
                                           MPI_Fint *flag, MPI_Fint *ierr)                         \
    {                                                                                              \
        void *v = NULL;                                                                            \
        *ierr = PFX##MPI_Win_get_attr(*win, *keyval, &v, flag);                                    \
        if (*ierr == MPI_SUCCESS && *flag) *val = win_value(*keyval, v);                           \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_type_set_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val,       \
                                            MPI_Fint *ierr)                                        \
    {                                                                                              \
        *ierr = PFX##MPI_Type_set_attr(*type, *keyval, (void *)*val);                              \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val,       \
                                            MPI_Fint *flag, MPI_Fint *ierr)                        \
    {                                                                                              \
        void *v = NULL;                                                                            \
        *ierr = PFX##MPI_Type_get_attr(*type, *keyval, &v, flag);                                  \
        if (*ierr == MPI_SUCCESS && *flag) *val = (MPI_Aint)v;                                     \
    }

ATTR_PAIR(, )
ATTR_PAIR(p, P)
