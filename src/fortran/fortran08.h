/* Helpers of the mpi_f08 module's C side (the courier_f08_* functions that
 * tools/fortran_gen.awk generates, and mpi_f08_special.c): as fortran.h, for
 * TYPE(*), DIMENSION(..) buffers (TS 29113 descriptors) and TYPE(MPI_Status).
 *
 * Invariants:
 *  - a buffer is the descriptor's base address, MPI_BOTTOM and MPI_IN_PLACE
 *    recognised by address as for mpif.h; a non-contiguous array section
 *    goes to a blocking call (done with its buffers when it returns) as a
 *    contiguous copy of its elements, copied back after the call for an
 *    output buffer (cr_f08buf_copy, cr_f08buf_back); to a nonblocking
 *    point-to-point, one-sided or collective call, as a derived datatype
 *    describing it (cr_f08buf_nb, cr_f08buf_nbblk, cr_f08buf_nb2: see
 *    mpi_f08_sect.c for the sections each can describe); where no type
 *    can, it is refused (MPI_SUBARRAYS_SUPPORTED is .FALSE.: MPI_ERR_BUFFER through
 *    the error handler of the call's file, window or communicator, else
 *    MPI_COMM_WORLD's: cr_f08at; when that ends the job, one line first
 *    says what to pass; MPI_ERRORS_RETURN, as in C, prints nothing);
 *  - TYPE(MPI_Status) is C's MPI_F08_status, only int-aligned: copied;
 *  - ierror is optional: NULL when the program left it out. */
#ifndef COURIER_FORTRAN08_H
#define COURIER_FORTRAN08_H

#include <ISO_Fortran_binding.h>
#include <stdio.h>

#include "fortran.h"

static inline int cr_f08ignored(const MPI_F08_status *f)
{
    return f == NULL || (const void *)f == (const void *)mpi_fortran_f08_status_ignore_ ||
           (const void *)f == (const void *)mpi_fortran_f08_statuses_ignore_;
}

/* The call a buffer goes to, and the object whose error handler hears of a
 * buffer refused: its file, its window, else its communicator (MPI_COMM_WORLD
 * when it has none, or gives a null one). */
typedef struct cr_f08at {
    const char *call;
    MPI_Comm comm;
    MPI_File file;
    MPI_Win win;
} cr_f08at;
#define CR_F08_AT(c) ((cr_f08at){(c), MPI_COMM_WORLD, MPI_FILE_NULL, MPI_WIN_NULL})
#define CR_F08_COMM(c, h) ((cr_f08at){(c), (h), MPI_FILE_NULL, MPI_WIN_NULL})
#define CR_F08_FILE(c, h) ((cr_f08at){(c), MPI_COMM_NULL, (h), MPI_WIN_NULL})
#define CR_F08_WIN(c, h) ((cr_f08at){(c), MPI_COMM_NULL, MPI_FILE_NULL, (h)})

/* Report code for at's call through its object's error handler; *ierr set. */
static inline void cr_f08fail(cr_f08at at, int code, const char *say, MPI_Fint *ierr)
{
    int rank = -1, rc;
    MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bool file = at.file != MPI_FILE_NULL, win = !file && at.win != MPI_WIN_NULL;
    if (!file && !win && at.comm == MPI_COMM_NULL) at.comm = MPI_COMM_WORLD;
    if (file)
        PMPI_File_get_errhandler(at.file, &h);
    else if (win)
        PMPI_Win_get_errhandler(at.win, &h);
    else
        PMPI_Comm_get_errhandler(at.comm, &h);
    if (h != MPI_ERRORS_ARE_FATAL && h != MPI_ERRORS_RETURN && h != MPI_ERRHANDLER_NULL)
        PMPI_Errhandler_free(&h);
    if (h == MPI_ERRORS_ARE_FATAL) /* the line the job ends with: C's say nothing else */
        fprintf(stderr, "courier: rank %d: %s (mpi_f08): %s\n", rank, at.call, say);
    if (file)
        rc = PMPI_File_call_errhandler(at.file, code);
    else if (win)
        rc = PMPI_Win_call_errhandler(at.win, code);
    else
        rc = PMPI_Comm_call_errhandler(at.comm, code);
    if (ierr) *ierr = rc == MPI_SUCCESS ? code : rc;
}

/* The buffer's address in *out; nonzero (the error reported, *ierr set)
 * when it is a non-contiguous section. */
static inline int cr_f08buf(CFI_cdesc_t *d, void **out, cr_f08at at, MPI_Fint *ierr)
{
    if (d->base_addr && !CFI_is_contiguous(d)) {
        cr_f08fail(at, MPI_ERR_BUFFER,
                   "the buffer is a non-contiguous array section, and MPI_SUBARRAYS_SUPPORTED is "
                   ".false.: pass a contiguous array, or describe the layout with a derived "
                   "datatype (MPI_ERR_BUFFER)",
                   ierr);
        return 1;
    }
    *out = cr_fbuf(d->base_addr);
    return 0;
}

/* As cr_f08buf, for a nonblocking call's (buffer, count, datatype): a
 * non-contiguous section is described by a new datatype (*made, committed,
 * for the caller to free after the call), given in *out, *count (1) and *dt
 * (mpi_f08_sect.c); a section that type cannot describe is refused as
 * cr_f08buf does. Nonzero: refused or failed (reported, *ierr set). */
int cr_f08buf_nb(CFI_cdesc_t *d, void **out, int *count, MPI_Datatype *dt, MPI_Datatype *made,
                 cr_f08at at, MPI_Fint *ierr);
/* As cr_f08buf_nb, for a collective's buffer of per-rank blocks of count
 * items each (gather's receive buffer, scatter's send buffer, alltoall's):
 * the new type describes one block, its extent the block's span, so block i
 * starts i extents on. Only sections whose elements are evenly spaced, and
 * blocks of whole elements, fit; others are refused as cr_f08buf does. */
int cr_f08buf_nbblk(CFI_cdesc_t *d, void **out, int *count, MPI_Datatype *dt, MPI_Datatype *made,
                    cr_f08at at, MPI_Fint *ierr);
/* As cr_f08buf_nb, for a reduction's send and receive buffers, which share
 * (count, datatype): a section is described by the new type when the other
 * buffer is MPI_IN_PLACE or a section laid out the same (the same shape and
 * strides); others are refused as cr_f08buf does. */
int cr_f08buf_nb2(CFI_cdesc_t *s, CFI_cdesc_t *r, void **sout, void **rout, int *count,
                  MPI_Datatype *dt, MPI_Datatype *made, cr_f08at at, MPI_Fint *ierr);

/* Copy the elements of section d to or from the contiguous tmp, in array
 * element order (the first subscript fastest). */
static inline void cr_f08sect(const CFI_cdesc_t *d, char *tmp, bool to_section)
{
    size_t n = 1;
    for (int r = 0; r < d->rank; r++) n *= (size_t)d->dim[r].extent;
    CFI_index_t idx[CFI_MAX_RANK] = {0};
    for (size_t k = 0; k < n; k++) {
        char *p = d->base_addr;
        for (int r = 0; r < d->rank; r++) p += idx[r] * d->dim[r].sm;
        if (to_section)
            memcpy(p, tmp + k * d->elem_len, d->elem_len);
        else
            memcpy(tmp + k * d->elem_len, p, d->elem_len);
        for (int r = 0; r < d->rank && ++idx[r] == d->dim[r].extent; r++) idx[r] = 0;
    }
}

/* As cr_f08buf, for a blocking call: a non-contiguous section is copied into
 * a new contiguous buffer (*tmp, given back by cr_f08buf_back), whose address
 * goes in *out. Nonzero: out of memory (reported, *ierr set). */
static inline int cr_f08buf_copy(CFI_cdesc_t *d, void **out, void **tmp, cr_f08at at,
                                 MPI_Fint *ierr)
{
    *tmp = NULL;
    if (!d->base_addr || CFI_is_contiguous(d)) {
        *out = cr_fbuf(d->base_addr);
        return 0;
    }
    size_t n = d->elem_len;
    for (int r = 0; r < d->rank; r++) n *= (size_t)d->dim[r].extent;
    if (!(*tmp = malloc(n ? n : 1))) {
        cr_f08fail(at, MPI_ERR_NO_MEM, "no memory for a copy of the array section (MPI_ERR_NO_MEM)",
                   ierr);
        return 1;
    }
    cr_f08sect(d, *tmp, false);
    *out = *tmp;
    return 0;
}

/* After the call: back into the section when it was an output (back), and
 * the copy freed. */
static inline void cr_f08buf_back(CFI_cdesc_t *d, void *tmp, bool back)
{
    if (!tmp) return;
    if (back) cr_f08sect(d, tmp, true);
    free(tmp);
}

static inline MPI_Status *cr_f08status_in(const MPI_F08_status *f, MPI_Status *c)
{
    if (cr_f08ignored(f)) return MPI_STATUS_IGNORE;
    memcpy(c, f, sizeof *c);
    return c;
}

static inline void cr_f08status_out(MPI_F08_status *f, const MPI_Status *c)
{
    if (c != MPI_STATUS_IGNORE) memcpy(f, c, sizeof *c);
}

static inline MPI_Status *cr_f08statuses_in(const MPI_F08_status *f, int n)
{
    if (cr_f08ignored(f)) return MPI_STATUSES_IGNORE;
    return cr_fstatuses_in((const MPI_Fint *)(const void *)f, n);
}

static inline void cr_f08statuses_out(MPI_F08_status *f, MPI_Status *c, int n)
{
    cr_fstatuses_out((MPI_Fint *)(void *)f, c, n);
}

#endif
