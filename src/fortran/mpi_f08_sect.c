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
 *  - the type is made with MPI_Type_create_hindexed (one block per element,
 *    which courier's type maps fold into strided runs) and freed by the caller
 *    right after the call: a pending operation holds its own reference. */
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
    if (MPI_Type_get_extent(dt, &lb, &ext) || MPI_Type_get_true_extent(dt, &tlb, &text) ||
        MPI_Type_size_x(dt, &size) || lb != 0 || tlb != 0 || ext <= 0 || size != ext)
        return MPI_DATATYPE_NULL;
    if (elem % (size_t)ext == 0) {
        *per = (MPI_Aint)elem / ext;
        return dt;
    }
    int ni, na, nd, comb, n;
    MPI_Datatype old;
    if (MPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) || comb != MPI_COMBINER_CONTIGUOUS ||
        MPI_Type_get_contents(dt, 1, 0, 1, &n, NULL, &old))
        return MPI_DATATYPE_NULL;
    if (MPI_Type_get_envelope(old, &ni, &na, &nd, &comb) || comb != MPI_COMBINER_NAMED ||
        MPI_Type_get_extent(old, &lb, &ext) || ext <= 0 || elem % (size_t)ext)
        return MPI_DATATYPE_NULL;
    *count *= n;
    *per = (MPI_Aint)elem / ext;
    return old;
}

int cr_f08buf_nb(CFI_cdesc_t *d, void **out, int *count, MPI_Datatype *dt, MPI_Datatype *made,
                 const char *call, MPI_Fint *ierr)
{
    *made = MPI_DATATYPE_NULL;
    if (!d->base_addr || CFI_is_contiguous(d)) return cr_f08buf(d, out, call, ierr);
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
        return cr_f08buf(d, out, call, ierr); /* refused, saying why */
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
        rc = MPI_Type_create_hindexed((int)nb, bls, disps, item, made);
        if (rc == MPI_SUCCESS) rc = MPI_Type_commit(made);
    }
    free(bls);
    free(disps);
    if (rc != MPI_SUCCESS) {
        if (*made != MPI_DATATYPE_NULL) MPI_Type_free(made);
        if (ierr) *ierr = rc;
        return 1;
    }
    *out = d->base_addr;
    *count = 1;
    *dt = *made;
    return 0;
}
