/* Helpers of the Fortran binding's C wrappers (src/fortran): what a wrapper
 * translates between a Fortran argument and the C call it makes. Only
 * translation lives here: argument checks and error handlers are the C
 * calls' own.
 *
 * Invariants:
 *  - a Fortran sentinel (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE,
 *    MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY) is recognised by its address alone
 *    (the common blocks of src/api/mpi_f2c.c) and becomes the C one;
 *  - a Fortran status is six default INTEGERs, only int-aligned: it is copied
 *    to and from a C MPI_Status, never read as one in place;
 *  - Fortran strings have a hidden length and no terminating null: an input
 *    is copied without its leading and trailing blanks (as MPICH and Open MPI
 *    do: MPI_INFO_SET(INFO, ' key ', ...) sets "key"), an output is
 *    blank-padded. */
#ifndef COURIER_FORTRAN_H
#define COURIER_FORTRAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OMPI_ENABLE_MPI1_COMPAT 1 /* the MPI-1 calls' prototypes (mpi_flegacy.c) */
#include "courier/mpi.h"

#define CR_FEXPORT __attribute__((visibility("default")))
#define CR_FSTR_MAX MPI_MAX_INFO_VAL /* the longest string a C call gives back */
#define CR_FNOMEM ((MPI_Status *)(uintptr_t)1)

extern MPI_Fint mpi_fortran_bottom_[], mpi_fortran_in_place_[], mpi_fortran_errcodes_ignore_[];
extern MPI_Fint mpi_fortran_unweighted_[], mpi_fortran_weights_empty_[];

static inline void *cr_fbuf(const void *b)
{
    if (b == mpi_fortran_bottom_) return MPI_BOTTOM;
    if (b == mpi_fortran_in_place_) return MPI_IN_PLACE;
    return (void *)b;
}

static inline const int *cr_fweights(const int *w)
{
    if (w == mpi_fortran_unweighted_) return MPI_UNWEIGHTED;
    if (w == mpi_fortran_weights_empty_) return MPI_WEIGHTS_EMPTY;
    return w;
}

static inline int cr_fignored(const MPI_Fint *f)
{
    return f == NULL || f == mpi_fortran_status_ignore_ || f == mpi_fortran_statuses_ignore_;
}

static inline MPI_Status *cr_fstatus_in(const MPI_Fint *f, MPI_Status *c)
{
    if (cr_fignored(f)) return MPI_STATUS_IGNORE;
    memcpy(c, f, sizeof *c);
    return c;
}

static inline void cr_fstatus_out(MPI_Fint *f, const MPI_Status *c)
{
    if (c != MPI_STATUS_IGNORE) memcpy(f, c, sizeof *c);
}

static inline MPI_Status *cr_fstatuses_in(const MPI_Fint *f, int n)
{
    if (cr_fignored(f)) return MPI_STATUSES_IGNORE;
    MPI_Status *c = calloc(n > 0 ? (size_t)n : 1, sizeof *c);
    if (!c) return CR_FNOMEM;
    if (n > 0) memcpy(c, f, (size_t)n * sizeof *c);
    return c;
}

static inline void cr_fstatuses_out(MPI_Fint *f, MPI_Status *c, int n)
{
    if (c == MPI_STATUSES_IGNORE) return;
    if (n > 0) memcpy(f, c, (size_t)n * sizeof *c);
    free(c);
}

/* A Fortran string as a C one (malloc'd; NULL when out of memory). */
static inline char *cr_fstr_in(const char *f, size_t len)
{
    while (len > 0 && f[len - 1] == ' ') len--;
    while (len > 0 && *f == ' ') f++, len--;
    char *c = malloc(len + 1);
    if (!c) return NULL;
    memcpy(c, f, len);
    c[len] = '\0';
    return c;
}

static inline void cr_fstr_out(char *f, size_t len, const char *c)
{
    size_t n = strlen(c);
    if (n > len) n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}

#endif
