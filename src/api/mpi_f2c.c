/* The C side of the Fortran binding (MPI-3.1 §17.2.4-5): handle conversions
 * (MPI_Comm_c2f, MPI_Type_f2c, ... for every handle kind), status conversions
 * between C's MPI_Status, the mpif.h / `use mpi` status (INTEGER(MPI_STATUS_SIZE))
 * and the mpi_f08 status (TYPE(MPI_Status), C's MPI_F08_status), and the
 * Fortran sentinels' storage (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, ...
 * as Fortran sees them: common blocks, whose addresses the Fortran wrappers of
 * src/fortran compare against).
 *
 * Invariants:
 *  - handles are ints in both languages (mpi.h: kind in bits 26..30), so a
 *    conversion is a cast either way and never fails: f2c of a value that is no
 *    live handle gives an invalid handle, which the call it is passed to reports
 *    (MPI_ERR_COMM, MPI_ERR_TYPE, ...) as for C; MPI_Message_c2f/f2c are in
 *    mpi_p2p.c; MPI_File_c2f/f2c belong to MPI-IO, when courier has it;
 *  - the three status forms hold the same six ints in the same order
 *    (MPI_SOURCE, MPI_TAG, MPI_ERROR, cancelled, the byte count's two halves),
 *    so the conversions are copies; the Fortran forms are only int-aligned, so
 *    they are copied with memcpy, never read as a C MPI_Status in place;
 *  - the sentinels are markers: their addresses mean something, their contents
 *    are never read nor written by courier (no state lives in them);
 *  - a keyval the Fortran binding made (courier_f_keyval_lang) has Fortran
 *    callbacks: they are called here, every argument by reference and the
 *    code from their last argument; the values and extra state are the C
 *    pointers' bits (INTEGER(KIND=MPI_ADDRESS_KIND); MPI-1's keyvals: a
 *    default INTEGER, sign-extended), so C and Fortran see the same attribute.
 * (MPI_Type_create_f90_integer/real/complex are constructors: mpi_type_new.c.) */
#include <string.h>

#include "mpi_impl.h"

_Static_assert(sizeof(MPI_Status) == MPI_STATUS_SIZE * sizeof(MPI_Fint),
               "the Fortran status is the C one's ints");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "the f08 status is the C one's ints");

/* The common blocks of mpif.h (gfortran's names: lower case, one underscore).
 * Sized as mpif.h declares them, so that the linker takes these definitions. */
MPI_Fint mpi_fortran_bottom_[1] __attribute__((visibility("default")));
MPI_Fint mpi_fortran_in_place_[1] __attribute__((visibility("default")));
MPI_Fint mpi_fortran_status_ignore_[MPI_STATUS_SIZE] __attribute__((visibility("default")));
MPI_Fint mpi_fortran_statuses_ignore_[MPI_STATUS_SIZE] __attribute__((visibility("default")));
MPI_Fint mpi_fortran_errcodes_ignore_[1] __attribute__((visibility("default")));
MPI_Fint mpi_fortran_unweighted_[1] __attribute__((visibility("default")));
MPI_Fint mpi_fortran_weights_empty_[1] __attribute__((visibility("default")));
MPI_Fint mpi_fortran_f08_status_ignore_[MPI_STATUS_SIZE] __attribute__((visibility("default")));
MPI_Fint mpi_fortran_f08_statuses_ignore_[MPI_STATUS_SIZE] __attribute__((visibility("default")));

#define HANDLE_CONV(Kind, CType)                                                                   \
    PMPI_WEAK(Kind##_c2f);                                                                         \
    MPI_Fint PMPI_##Kind##_c2f(CType h)                                                            \
    {                                                                                              \
        return (MPI_Fint)h;                                                                        \
    }                                                                                              \
    PMPI_WEAK(Kind##_f2c);                                                                         \
    CType PMPI_##Kind##_f2c(MPI_Fint h)                                                            \
    {                                                                                              \
        return (CType)h;                                                                           \
    }

HANDLE_CONV(Comm, MPI_Comm)
HANDLE_CONV(Type, MPI_Datatype)
HANDLE_CONV(Group, MPI_Group)
HANDLE_CONV(Op, MPI_Op)
HANDLE_CONV(Request, MPI_Request)
HANDLE_CONV(Info, MPI_Info)
HANDLE_CONV(Win, MPI_Win)
HANDLE_CONV(Errhandler, MPI_Errhandler)

/* A status conversion of a NULL or ignore pointer: MPI_ERR_ARG on
 * MPI_COMM_WORLD (its error handler applies), naming the call and argument. */
static int status_bad(const char *call, const char *what)
{
    cr_job *job = mpi_enter(call);
    return mpi_leave(job,
                     mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                              "%s is NULL or an ignore value: pass a status to convert", what));
}

static bool f_ignored(const MPI_Fint *f)
{
    return f == NULL || f == mpi_fortran_status_ignore_ || f == mpi_fortran_statuses_ignore_;
}

static bool f08_ignored(const MPI_F08_status *f)
{
    return f == NULL || (const void *)f == (const void *)mpi_fortran_f08_status_ignore_ ||
           (const void *)f == (const void *)mpi_fortran_f08_statuses_ignore_;
}

PMPI_WEAK(Status_c2f);
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (c_status == MPI_STATUS_IGNORE) return status_bad("MPI_Status_c2f", "c_status");
    if (f_ignored(f_status)) return status_bad("MPI_Status_c2f", "f_status");
    memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}

PMPI_WEAK(Status_f2c);
int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (f_ignored(f_status)) return status_bad("MPI_Status_f2c", "f_status");
    if (c_status == MPI_STATUS_IGNORE) return status_bad("MPI_Status_f2c", "c_status");
    memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}

PMPI_WEAK(Status_c2f08);
int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    if (c_status == MPI_STATUS_IGNORE) return status_bad("MPI_Status_c2f08", "c_status");
    if (f08_ignored(f08_status)) return status_bad("MPI_Status_c2f08", "f08_status");
    memcpy(f08_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}

PMPI_WEAK(Status_f082c);
int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    if (f08_ignored(f08_status)) return status_bad("MPI_Status_f082c", "f08_status");
    if (c_status == MPI_STATUS_IGNORE) return status_bad("MPI_Status_f082c", "c_status");
    memcpy(c_status, f08_status, sizeof *c_status);
    return MPI_SUCCESS;
}

PMPI_WEAK(Status_f2f08);
int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    if (f_ignored(f_status)) return status_bad("MPI_Status_f2f08", "f_status");
    if (f08_ignored(f08_status)) return status_bad("MPI_Status_f2f08", "f08_status");
    memcpy(f08_status, f_status, sizeof *f08_status);
    return MPI_SUCCESS;
}

PMPI_WEAK(Status_f082f);
int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    if (f08_ignored(f08_status)) return status_bad("MPI_Status_f082f", "f08_status");
    if (f_ignored(f_status)) return status_bad("MPI_Status_f082f", "f_status");
    memcpy(f_status, f08_status, sizeof *f08_status);
    return MPI_SUCCESS;
}

/* ---- keyvals with Fortran callbacks ---------------------------------------- */

typedef void f_copy_fn(MPI_Fint *h, MPI_Fint *kv, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,
                       MPI_Fint *flag, MPI_Fint *ierr);
typedef void f_copy_int_fn(MPI_Fint *h, MPI_Fint *kv, MPI_Fint *extra, MPI_Fint *in, MPI_Fint *out,
                           MPI_Fint *flag, MPI_Fint *ierr);
typedef void f_del_fn(MPI_Fint *h, MPI_Fint *kv, MPI_Aint *val, MPI_Aint *extra, MPI_Fint *ierr);
typedef void f_del_int_fn(MPI_Fint *h, MPI_Fint *kv, MPI_Fint *val, MPI_Fint *extra,
                          MPI_Fint *ierr);

int mpi_attr_call_copy(mpi_attr_lang lang, mpi_attr_copy_fn *fn, int h, int kv, void *extra,
                       void *in, void **out, int *flag)
{
    MPI_Fint fh = h, fkv = kv, fflag = 0, ierr = MPI_SUCCESS;
    if (lang == MPI_ATTR_F_INT) {
        MPI_Fint e = (MPI_Fint)(MPI_Aint)extra, i = (MPI_Fint)(MPI_Aint)in, o = 0;
        ((f_copy_int_fn *)(void (*)(void))fn)(&fh, &fkv, &e, &i, &o, &fflag, &ierr);
        *out = (void *)(MPI_Aint)o;
    } else {
        MPI_Aint e = (MPI_Aint)extra, i = (MPI_Aint)in, o = 0;
        ((f_copy_fn *)(void (*)(void))fn)(&fh, &fkv, &e, &i, &o, &fflag, &ierr);
        *out = (void *)o;
    }
    *flag = fflag != 0;
    return ierr;
}

int mpi_attr_call_del(mpi_attr_lang lang, mpi_attr_del_fn *fn, int h, int kv, void *val,
                      void *extra)
{
    MPI_Fint fh = h, fkv = kv, ierr = MPI_SUCCESS;
    if (lang == MPI_ATTR_F_INT) {
        MPI_Fint v = (MPI_Fint)(MPI_Aint)val, e = (MPI_Fint)(MPI_Aint)extra;
        ((f_del_int_fn *)(void (*)(void))fn)(&fh, &fkv, &v, &e, &ierr);
    } else {
        MPI_Aint v = (MPI_Aint)val, e = (MPI_Aint)extra;
        ((f_del_fn *)(void (*)(void))fn)(&fh, &fkv, &v, &e, &ierr);
    }
    return ierr;
}

/* Called by the Fortran binding (src/fortran) right after it made keyval kv
 * through the C call: its callbacks are Fortran procedures (mpi1: MPI-1's
 * INTEGER attributes). Not part of mpi.h: no program calls it. */
__attribute__((visibility("default"))) void courier_f_keyval_lang(int kv, int mpi1)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    mpi_keyval_set_lang(kv, mpi1 ? MPI_ATTR_F_INT : MPI_ATTR_F);
    cr_unlock(job);
}

/* Called by the Fortran binding right after a Fortran program set the
 * attribute kv on object h (kind: 0 a communicator, 1 a datatype, 2 a
 * window): the value is boxed, so that C reads a pointer to it (MPI-3.1
 * 17.2.7); and whether the value there is so boxed, for Fortran's reads. */
__attribute__((visibility("default"))) void courier_f_attr_box(int kind, int h, int kv)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    mpi_attr_box(job, (mpi_obj_kind)kind, h, kv);
    cr_unlock(job);
}

__attribute__((visibility("default"))) int courier_f_attr_boxed(int kind, int h, int kv)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    bool b = mpi_attr_boxed((mpi_obj_kind)kind, h, kv);
    cr_unlock(job);
    return b;
}
