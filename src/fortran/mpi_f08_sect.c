/* mpi_f08's non-contiguous array sections in nonblocking calls: the section
 * (a(1:n:2), b(2:5, 1:9:3), ...) is described by a derived datatype over the
 * program's own memory, so the call reads or writes the section itself when
 * the operation runs, with no copy to keep until MPI_Wait or MPI_Test.
 *
 * Invariants:
 *  - the message is count items of the program's datatype laid over the
 *    section's elements one after another (MPI-3.1 17.1.12: as if the section
 *    were contiguous); the type made has the same signature (count items of
 *    that datatype, or of its basic type), so the other side matches it with
 *    any count and type that match count items of the program's;
 *  - handled: a datatype without gaps (size == extent, lb 0, true lb 0) whose
 *    extent divides the section's element size, or a contiguous type of a
 *    named type whose extent does; anything else is refused as before
 *    (cr_f08buf: MPI_ERR_BUFFER);
 *  - a collective's buffer of per-rank blocks (gather's receive buffer,
 *    scatter's send buffer, alltoall's) is described one block at a time: a
 *    strided type of count items, resized to the block's span, so that the
 *    collective's i-th block (i extents on) is the section's; this needs the
 *    section's elements evenly spaced (one stride over all its dimensions)
 *    and whole elements per block;
 *  - a reduction's two buffers share (count, datatype): one type describes
 *    both only when the other is MPI_IN_PLACE or laid out the same;
 *  - the type is made with MPI_Type_create_hindexed (one block per element,
 *    which courier's type maps fold into strided runs; a block type with
 *    MPI_Type_create_hvector) and freed by the caller right after the call:
 *    a pending operation holds its own reference. */
#include <limits.h>
#include <stdlib.h>

#include "fortran08.h"

/* The datatype whose items fill an element of elem bytes exactly: dt itself
 * (*per items an element), or the named type a contiguous dt is made of (the
 * count scaled in *count); MPI_DATATYPE_NULL when neither fits. */
static MPI_Datatype item_type(MPI_Datatype dt, size_t elem, MPI_Count *count, MPI_Aint *per)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Count size;
    if (PMPI_Type_get_extent(dt, &lb, &ext) || PMPI_Type_get_true_extent(dt, &tlb, &text) ||
        PMPI_Type_size_x(dt, &size) || lb != 0 || tlb != 0 || ext <= 0 || size != ext)
        return MPI_DATATYPE_NULL;
    if (elem % (size_t)ext == 0) {
        *per = (MPI_Aint)elem / ext;
        return dt;
    }
    /* the _c envelope: the int one refuses a type that holds large counts
     * (a contiguous type of more than INT_MAX elements) */
    MPI_Count ni, na, nc, nd, n;
    int comb;
    MPI_Datatype old;
    if (PMPI_Type_get_envelope_c(dt, &ni, &na, &nc, &nd, &comb) || comb != MPI_COMBINER_CONTIGUOUS)
        return MPI_DATATYPE_NULL;
    int small = 0;
    if (nc ? PMPI_Type_get_contents_c(dt, 0, 0, 1, 1, NULL, NULL, &n, &old)
           : PMPI_Type_get_contents_c(dt, 1, 0, 0, 1, &small, NULL, NULL, &old))
        return MPI_DATATYPE_NULL;
    if (!nc) n = small;
    if (PMPI_Type_get_envelope_c(old, &ni, &na, &nc, &nd, &comb) || comb != MPI_COMBINER_NAMED ||
        PMPI_Type_get_extent(old, &lb, &ext) || ext <= 0 || elem % (size_t)ext)
        return MPI_DATATYPE_NULL;
    *count *= n;
    *per = (MPI_Aint)elem / ext;
    return old;
}

int cr_f08buf_nb(CFI_cdesc_t *d, void **out, int *count, MPI_Datatype *dt, MPI_Datatype *made,
                 cr_f08at at, MPI_Fint *ierr)
{
    *made = MPI_DATATYPE_NULL;
    if (!d->base_addr || CFI_is_contiguous(d)) return cr_f08buf(d, out, at, ierr);
    if (*count <= 0) { /* nothing moves (a negative count: the call says so) */
        *out = d->base_addr;
        return 0;
    }
    MPI_Count n = *count;
    MPI_Aint per = 0;
    MPI_Datatype item = item_type(*dt, d->elem_len, &n, &per);
    size_t nel = 1;
    for (int r = 0; r < d->rank; r++) nel *= (size_t)d->dim[r].extent;
    size_t nb = (size_t)((n + per - 1) / per); /* elements the message touches */
    if (item == MPI_DATATYPE_NULL || nb > nel || nb > (size_t)INT_MAX)
        return cr_f08buf(d, out, at, ierr); /* refused, saying why */
    int *bls = malloc(nb * sizeof *bls);
    MPI_Aint *disps = malloc(nb * sizeof *disps);
    int rc = MPI_ERR_NO_MEM;
    if (bls && disps) {
        CFI_index_t idx[CFI_MAX_RANK] = {0};
        for (size_t k = 0; k < nb; k++) {
            MPI_Aint off = 0;
            for (int r = 0; r < d->rank; r++) off += (MPI_Aint)(idx[r] * d->dim[r].sm);
            disps[k] = off;
            bls[k] = (int)per;
            for (int r = 0; r < d->rank && ++idx[r] == d->dim[r].extent; r++) idx[r] = 0;
        }
        bls[nb - 1] = (int)(n - (MPI_Count)(nb - 1) * per);
        rc = PMPI_Type_create_hindexed((int)nb, bls, disps, item, made);
        if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(made);
    }
    free(bls);
    free(disps);
    if (rc != MPI_SUCCESS) {
        if (*made != MPI_DATATYPE_NULL) PMPI_Type_free(made);
        if (ierr) *ierr = rc;
        return 1;
    }
    *out = d->base_addr;
    *count = 1;
    *dt = *made;
    return 0;
}

int cr_f08buf_nbblk(CFI_cdesc_t *d, void **out, int *count, MPI_Datatype *dt, MPI_Datatype *made,
                    cr_f08at at, MPI_Fint *ierr)
{
    *made = MPI_DATATYPE_NULL;
    if (!d->base_addr || CFI_is_contiguous(d)) return cr_f08buf(d, out, at, ierr);
    if (*count <= 0) {
        *out = d->base_addr;
        return 0;
    }
    /* one stride: each dimension's step is the previous one's span */
    MPI_Aint stride = (MPI_Aint)d->dim[0].sm;
    bool even = stride > 0;
    for (int r = 1; r < d->rank && even; r++)
        even = d->dim[r].extent == 1 || d->dim[r].sm == d->dim[r - 1].sm * d->dim[r - 1].extent;
    MPI_Count n = *count;
    MPI_Aint per = 0;
    MPI_Datatype item = even ? item_type(*dt, d->elem_len, &n, &per) : MPI_DATATYPE_NULL;
    if (item == MPI_DATATYPE_NULL || n % per || n / per > INT_MAX)
        return cr_f08buf(d, out, at, ierr); /* refused, saying why */
    MPI_Count m = n / per;                  /* elements a block covers */
    MPI_Datatype v = MPI_DATATYPE_NULL;
    int rc = PMPI_Type_create_hvector((int)m, (int)per, stride, item, &v);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_create_resized(v, 0, (MPI_Aint)m * stride, made);
    if (v != MPI_DATATYPE_NULL) PMPI_Type_free(&v);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(made);
    if (rc != MPI_SUCCESS) {
        if (*made != MPI_DATATYPE_NULL) PMPI_Type_free(made);
        if (ierr) *ierr = rc;
        return 1;
    }
    *out = d->base_addr;
    *count = 1;
    *dt = *made;
    return 0;
}

/* Whether sections a and b have the same shape and strides. */
static bool same_layout(const CFI_cdesc_t *a, const CFI_cdesc_t *b)
{
    if (a->rank != b->rank || a->elem_len != b->elem_len) return false;
    for (int r = 0; r < a->rank; r++)
        if (a->dim[r].extent != b->dim[r].extent || a->dim[r].sm != b->dim[r].sm) return false;
    return true;
}

int cr_f08buf_nb2(CFI_cdesc_t *s, CFI_cdesc_t *r, void **sout, void **rout, int *count,
                  MPI_Datatype *dt, MPI_Datatype *made, cr_f08at at, MPI_Fint *ierr)
{
    *made = MPI_DATATYPE_NULL;
    bool ssect = s->base_addr && !CFI_is_contiguous(s);
    bool rsect = r->base_addr && !CFI_is_contiguous(r);
    if (!ssect && !rsect) return cr_f08buf(s, sout, at, ierr) || cr_f08buf(r, rout, at, ierr);
    if (ssect && rsect && same_layout(s, r)) {
        if (cr_f08buf_nb(s, sout, count, dt, made, at, ierr)) return 1;
        *rout = r->base_addr;
        return 0;
    }
    if (rsect && !ssect && cr_fbuf(s->base_addr) == MPI_IN_PLACE) {
        *sout = MPI_IN_PLACE;
        return cr_f08buf_nb(r, rout, count, dt, made, at, ierr);
    }
    return cr_f08buf(s, sout, at, ierr) || cr_f08buf(r, rout, at, ierr); /* refused */
}
