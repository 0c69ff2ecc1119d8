/* The mpi_f08 routines that tools/fortran_gen.awk does not generate:
 * MPI_Init and MPI_Init_thread (no argc/argv in Fortran), with ierror
 * OPTIONAL (NULL when left out), as every mpi_f08 routine has it, and their
 * PMPI_ names; the C
 * side of MPI_Op_create and MPI_Comm/Win/File/Session_create_errhandler, whose
 * module procedures pass the program's procedure as C_FUNLOC gives it: MPI
 * calls it as C's, which is what mpi_f08's abstract interfaces declare; and
 * MPI_Pack_external/MPI_Unpack_external, which have both a string and choice
 * buffers (TS 29113 descriptors, as the generated routines take them). The
 * keyval calls and MPI_Grequest_start go through mpif.h's entry points
 * (mpi_fspecial.c): their procedures take every argument by reference in
 * both forms. */
#include "fortran08.h"

/* MPI_Init or PMPI_Init (init), MPI_Init_thread or PMPI_Init_thread (init_thread);
 * ierr may be NULL (left out) */
static void f08_init(int (*init)(int *, char ***), MPI_Fint *ierr)
{
    int rc = init(NULL, NULL);
    if (ierr) *ierr = rc;
}

static void f08_init_thread(int (*init_thread)(int *, char ***, int, int *), MPI_Fint *required,
                            MPI_Fint *provided, MPI_Fint *ierr)
{
    int rc = init_thread(NULL, NULL, *required, provided);
    if (ierr) *ierr = rc;
}

CR_FEXPORT void courier_f08_init(MPI_Fint *ierr)
{
    f08_init(MPI_Init, ierr);
}

CR_FEXPORT void courier_f08_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    f08_init_thread(MPI_Init_thread, required, provided, ierr);
}

/* their PMPI_ names (a tool's MPI_Init calls PMPI_Init) */
CR_FEXPORT void courier_f08_pmpi_init(MPI_Fint *ierr)
{
    f08_init(PMPI_Init, ierr);
}

CR_FEXPORT void courier_f08_pmpi_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    f08_init_thread(PMPI_Init_thread, required, provided, ierr);
}

CR_FEXPORT void courier_f08_op_create(MPI_User_function *fn, MPI_Fint *commute, MPI_Fint *op,
                                      MPI_Fint *ierr)
{
    *ierr = MPI_Op_create(fn, *commute, op);
}

/* what: 0 for a communicator's handler, 1 a window's, 2 a file's, 3 a session's. */
CR_FEXPORT void courier_f08_errh_create(void (*fn)(void), MPI_Fint *what, MPI_Fint *errhandler,
                                        MPI_Fint *ierr)
{
    switch (*what) {
    case 1:
        *ierr = MPI_Win_create_errhandler((MPI_Win_errhandler_function *)fn, errhandler);
        break;
    case 2:
        *ierr = MPI_File_create_errhandler((MPI_File_errhandler_function *)fn, errhandler);
        break;
    case 3:
        *ierr = MPI_Session_create_errhandler((MPI_Session_errhandler_function *)fn, errhandler);
        break;
    default:
        *ierr = MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)fn, errhandler);
    }
}

CR_FEXPORT void courier_f08_pack_external(const char *datarep, CFI_cdesc_t *inbuf,
                                          MPI_Fint *incount, MPI_Fint *datatype,
                                          CFI_cdesc_t *outbuf, MPI_Aint *outsize,
                                          MPI_Aint *position, MPI_Fint *ierr, size_t datarep_len)
{
    void *in, *out;
    if (cr_f08buf(inbuf, &in, CR_F08_AT("MPI_Pack_external"), ierr) ||
        cr_f08buf(outbuf, &out, CR_F08_AT("MPI_Pack_external"), ierr))
        return;
    char *rep = cr_fstr_in(datarep, datarep_len);
    if (!rep) {
        if (ierr) *ierr = MPI_ERR_NO_MEM;
        return;
    }
    int rc = MPI_Pack_external(rep, in, *incount, *datatype, out, *outsize, position);
    free(rep);
    if (ierr) *ierr = rc;
}

CR_FEXPORT void courier_f08_unpack_external(const char *datarep, CFI_cdesc_t *inbuf,
                                            MPI_Aint *insize, MPI_Aint *position,
                                            CFI_cdesc_t *outbuf, MPI_Fint *outcount,
                                            MPI_Fint *datatype, MPI_Fint *ierr, size_t datarep_len)
{
    void *in, *out;
    if (cr_f08buf(inbuf, &in, CR_F08_AT("MPI_Unpack_external"), ierr) ||
        cr_f08buf(outbuf, &out, CR_F08_AT("MPI_Unpack_external"), ierr))
        return;
    char *rep = cr_fstr_in(datarep, datarep_len);
    if (!rep) {
        if (ierr) *ierr = MPI_ERR_NO_MEM;
        return;
    }
    int rc = MPI_Unpack_external(rep, in, *insize, position, out, *outcount, *datatype);
    free(rep);
    if (ierr) *ierr = rc;
}
