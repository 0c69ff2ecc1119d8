/* The large-count (_c) forms of MPI-4.0 for point-to-point, one-sided
 * communication, datatypes, packing, statuses, buffers, windows and files
 * (the collectives' are mpi_large_coll.c's).
 *
 * A count that fits an int goes to the int form unchanged (one more call, no
 * other cost). A larger one goes as one instance of a datatype made for the
 * call: count = q * 2^30 + r instances of dt as contiguous(q, contiguous(2^30,
 * dt)) followed by contiguous(r, dt), resized to count times dt's extent (so
 * block i of a gather still lies at i * count extents). The engine's sizes
 * are size_t from there on: the bytes travel the int form's own paths (eager,
 * rendezvous, single copy, the collectives' schedules), and a status records
 * them as a long long, so MPI_Get_count_c and MPI_Get_elements_c give counts
 * past INT_MAX. Packing, MPI_Get_count_c and the size queries work on size_t
 * directly. Arrays of counts and displacements of the v forms go as int
 * arrays where every value fits, else MPI_ERR_COUNT. The datatype
 * constructors with a value past INT_MAX make the type the call asks for,
 * whose envelope keeps the large counts: contiguous and (h)vector through
 * mpi_type_vector_c, the indexed family, struct, subarray and darray through
 * the int forms' own bodies, which take the arrays as passed (mpi_arr) and
 * name the _c call in their errors. The buffers for buffered sends have their
 * _c forms beside the int ones (mpi_p2p.c, mpi_buf.c, mpi_session.c).
 *
 * Invariants: a made type is freed when the call returns (an operation still
 * under way holds its own reference, as for any datatype the program frees);
 * a _c call that fails has made nothing; errors of the conversion name the _c
 * call and go to the communicator's handler (MPI_COMM_WORLD's where the call
 * names no communicator), those of the int form name the int form. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_large.h"

#define CHUNK (1 << 30) /* instances in one block of a made type */

static bool fits(MPI_Count c)
{
    return c >= 0 && c <= INT_MAX;
}

/* count instances of dt (count > INT_MAX, dt checked): *out committed. */
static void big_type(MPI_Count count, MPI_Datatype dt, MPI_Datatype *out)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(dt, &lb, &ext);
    MPI_Count q = count / CHUNK, r = count % CHUNK;
    MPI_Datatype chunk, body, whole;
    PMPI_Type_contiguous(CHUNK, dt, &chunk);
    PMPI_Type_contiguous((int)q, chunk, &body);
    PMPI_Type_free(&chunk);
    if (r) {
        MPI_Datatype tail, parts[2];
        PMPI_Type_contiguous((int)r, dt, &tail);
        parts[0] = body;
        parts[1] = tail;
        int bl[2] = {1, 1};
        MPI_Aint at[2] = {0, (MPI_Aint)(q * CHUNK) * ext};
        PMPI_Type_create_struct(2, bl, at, parts, &whole);
        PMPI_Type_free(&tail);
        PMPI_Type_free(&body);
    } else {
        whole = body;
    }
    PMPI_Type_create_resized(whole, lb, (MPI_Aint)count * ext, out);
    PMPI_Type_free(&whole);
    PMPI_Type_commit(out);
}

int mpi_big_arg(const char *call, MPI_Comm comm, MPI_Count count, MPI_Datatype dt, mpi_big *b)
{
    *b = (mpi_big){(int)count, dt, false};
    if (fits(count)) return MPI_SUCCESS;
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = count < 0 ? mpi_fail(job, comm, call, MPI_ERR_COUNT, "count %lld is negative",
                                  (long long)count)
                       : mpi_type_check(job, comm, call, dt, &t);
    if (!rc && count / CHUNK > INT_MAX)
        rc = mpi_fail(job, comm, call, MPI_ERR_COUNT,
                      "count %lld is more than courier takes (2^61 instances)", (long long)count);
    mpi_leave(job, rc);
    if (rc) return rc;
    big_type(count, dt, &b->t);
    b->n = 1;
    b->made = true;
    return MPI_SUCCESS;
}

void mpi_big_done(mpi_big *b)
{
    if (b->made) PMPI_Type_free(&b->t);
    b->made = false;
}

int mpi_big_op(const char *call, MPI_Comm comm, MPI_Count count, MPI_Op op)
{
    /* the predefined operations are MPI_MAX .. MPI_NO_OP (mpi.h) */
    if (fits(count) || count < 0 ||
        ((unsigned)op >= (unsigned)MPI_MAX && (unsigned)op <= (unsigned)MPI_NO_OP))
        return MPI_SUCCESS;
    cr_job *job = mpi_enter(call);
    return mpi_leave(job, mpi_fail(job, comm, call, MPI_ERR_COUNT,
                                   "count %lld with a user operation: courier reduces more than "
                                   "INT_MAX elements with the predefined operations only (the "
                                   "blocking reductions take any operation)",
                                   (long long)count));
}

int mpi_large_ints(const char *call, MPI_Comm comm, int n, const void *v, bool aint, int **out)
{
    *out = NULL;
    if (!v || n <= 0) return MPI_SUCCESS;
    int *a = malloc((size_t)n * sizeof *a);
    if (!a) cr_fatal(cr_job_get(), call, "out of memory");
    for (int i = 0; i < n; i++) {
        long long x =
            aint ? (long long)((const MPI_Aint *)v)[i] : (long long)((const MPI_Count *)v)[i];
        if (x > INT_MAX || x < INT_MIN) {
            free(a);
            cr_job *job = mpi_enter(call);
            return mpi_leave(job, mpi_fail(job, comm, call, MPI_ERR_COUNT,
                                           "entry %d of an array of counts or displacements is "
                                           "%lld: courier takes arrays of values that fit an int",
                                           i, x));
        }
        a[i] = (int)x;
    }
    *out = a;
    return MPI_SUCCESS;
}

/* One MPI_Count in, an int out: *o = c, or MPI_ERR_COUNT reported. */
static int one(const char *call, MPI_Comm comm, MPI_Count c, int *o)
{
    *o = (int)c;
    if (c <= INT_MAX && c >= INT_MIN) return MPI_SUCCESS;
    cr_job *job = mpi_enter(call);
    return mpi_leave(job, mpi_fail(job, comm, call, MPI_ERR_COUNT,
                                   "%lld does not fit an int: courier takes it only where the "
                                   "count of a transfer is meant",
                                   (long long)c));
}

/* ---- statuses, sizes, extents ------------------------------------------------------- */

PMPI_WEAK(Get_count_c);
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    const char *call = "MPI_Get_count_c";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = mpi_type_check(job, MPI_COMM_WORLD, call, datatype, &t);
    if (!rc && (!status || status == MPI_STATUS_IGNORE || !count))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "status or count is NULL/ignored");
    if (rc) return mpi_leave(job, rc);
    size_t bytes = (size_t)status->cr_bytes;
    *count = !t->size ? 0 : bytes % t->size ? MPI_UNDEFINED : (MPI_Count)(bytes / t->size);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Get_elements_c);
int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return PMPI_Get_elements_x(status, datatype, count);
}

PMPI_WEAK(Status_set_elements_c);
int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return PMPI_Status_set_elements_x(status, datatype, count);
}

PMPI_WEAK(Type_size_c);
int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    return PMPI_Type_size_x(datatype, size);
}

PMPI_WEAK(Type_get_extent_c);
int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return PMPI_Type_get_extent_x(datatype, lb, extent);
}

PMPI_WEAK(Type_get_true_extent_c);
int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return PMPI_Type_get_true_extent_x(datatype, true_lb, true_extent);
}

/* ---- packing: size_t all the way ---------------------------------------------------- */

static int pack_args(cr_job *job, const char *call, MPI_Comm comm, MPI_Datatype dt, MPI_Count count,
                     const void *packed, MPI_Count size, const MPI_Count *position, mpi_type **t,
                     size_t *n)
{
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = mpi_type_check(job, comm, call, dt, t);
    if (rc) return rc;
    if (count < 0 || size < 0)
        return mpi_fail(job, comm, call, MPI_ERR_COUNT, "%s %lld is negative",
                        count < 0 ? "count" : "buffer size", (long long)(count < 0 ? count : size));
    if (!position || *position < 0 || (!packed && size))
        return mpi_fail(job, comm, call, MPI_ERR_ARG,
                        "position is NULL or negative, or the packed buffer is NULL");
    *n = (size_t)count * (*t)->size;
    if ((size_t)*position + *n > (size_t)size)
        return mpi_fail(job, comm, call, MPI_ERR_TRUNCATE,
                        "%zu bytes at position %lld do not fit the %lld-byte packed buffer", *n,
                        (long long)*position, (long long)size);
    return MPI_SUCCESS;
}

PMPI_WEAK(Pack_c);
int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    const char *call = "MPI_Pack_c";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    size_t n = 0;
    int rc = pack_args(job, call, comm, datatype, incount, outbuf, outsize, position, &t, &n);
    if (rc) return mpi_leave(job, rc);
    if (t->contig) /* one run (mpi_pack_data walks it instance by instance) */
        memcpy((char *)outbuf + *position, inbuf, n);
    else
        mpi_pack_data(t, inbuf, (size_t)incount, (char *)outbuf + *position);
    *position += (MPI_Count)n;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Unpack_c);
int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    const char *call = "MPI_Unpack_c";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    size_t n = 0;
    int rc = pack_args(job, call, comm, datatype, outcount, inbuf, insize, position, &t, &n);
    if (rc) return mpi_leave(job, rc);
    if (t->contig)
        memcpy(outbuf, (const char *)inbuf + *position, n);
    else
        mpi_unpack_data(t, (const char *)inbuf + *position, n, outbuf, (size_t)outcount);
    *position += (MPI_Count)n;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Pack_size_c);
int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    const char *call = "MPI_Pack_size_c";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *t = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = mpi_type_check(job, comm, call, datatype, &t);
    if (!rc && incount < 0)
        rc = mpi_fail(job, comm, call, MPI_ERR_COUNT, "incount %lld is negative",
                      (long long)incount);
    if (!rc && !size) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "size is NULL");
    if (rc) return mpi_leave(job, rc);
    *size = (MPI_Count)((size_t)incount * t->size);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Pack_external_c);
int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position)
{
    int n;
    int rc = one("MPI_Pack_external_c", MPI_COMM_WORLD, incount, &n);
    MPI_Aint pos = position ? (MPI_Aint)*position : 0;
    if (!rc)
        rc = PMPI_Pack_external(datarep, inbuf, n, datatype, outbuf, (MPI_Aint)outsize,
                                position ? &pos : NULL);
    if (!rc) *position = (MPI_Count)pos;
    return rc;
}

PMPI_WEAK(Unpack_external_c);
int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype)
{
    int n;
    int rc = one("MPI_Unpack_external_c", MPI_COMM_WORLD, outcount, &n);
    MPI_Aint pos = position ? (MPI_Aint)*position : 0;
    if (!rc)
        rc = PMPI_Unpack_external(datarep, inbuf, (MPI_Aint)insize, position ? &pos : NULL, outbuf,
                                  n, datatype);
    if (!rc) *position = (MPI_Count)pos;
    return rc;
}

PMPI_WEAK(Pack_external_size_c);
int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count *size)
{
    int n;
    MPI_Aint s = 0;
    int rc = one("MPI_Pack_external_size_c", MPI_COMM_WORLD, incount, &n);
    if (!rc) rc = PMPI_Pack_external_size(datarep, n, datatype, size ? &s : NULL);
    if (!rc) *size = (MPI_Count)s;
    return rc;
}

/* ---- datatype constructors ------------------------------------------------------------ */

/* A contiguous or (h)vector type with a value past INT_MAX is made as the
 * call says, its envelope holding the large counts (MPI_Type_get_envelope_c). */
PMPI_WEAK(Type_contiguous_c);
int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (fits(count)) return PMPI_Type_contiguous((int)count, oldtype, newtype);
    return mpi_type_vector_c("MPI_Type_contiguous_c", MPI_COMBINER_CONTIGUOUS, count, 0, 0, oldtype,
                             newtype);
}

PMPI_WEAK(Type_vector_c);
int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (fits(count) && fits(blocklength) && stride >= INT_MIN && stride <= INT_MAX)
        return PMPI_Type_vector((int)count, (int)blocklength, (int)stride, oldtype, newtype);
    return mpi_type_vector_c("MPI_Type_vector_c", MPI_COMBINER_VECTOR, count, blocklength, stride,
                             oldtype, newtype);
}

PMPI_WEAK(Type_create_hvector_c);
int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                               MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (fits(count) && fits(blocklength))
        return PMPI_Type_create_hvector((int)count, (int)blocklength, (MPI_Aint)stride, oldtype,
                                        newtype);
    return mpi_type_vector_c("MPI_Type_create_hvector_c", MPI_COMBINER_HVECTOR, count, blocklength,
                             stride, oldtype, newtype);
}

/* The indexed, struct, subarray and darray forms: the int forms' bodies
 * (mpi_type_new.c) take the arrays as they are and record the large counts
 * in the envelope where a value does not fit an int. */
static mpi_arr counts_arr(const MPI_Count *p)
{
    return (mpi_arr){p, MPI_ARR_COUNT};
}

PMPI_WEAK(Type_indexed_c);
int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                        MPI_Datatype *newtype)
{
    return mpi_type_indexed("MPI_Type_indexed_c", MPI_COMBINER_INDEXED, count,
                            counts_arr(array_of_blocklengths), 0,
                            counts_arr(array_of_displacements), NULL, oldtype, newtype);
}

PMPI_WEAK(Type_create_hindexed_c);
int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    return mpi_type_indexed("MPI_Type_create_hindexed_c", MPI_COMBINER_HINDEXED, count,
                            counts_arr(array_of_blocklengths), 0,
                            counts_arr(array_of_displacements), NULL, oldtype, newtype);
}

PMPI_WEAK(Type_create_indexed_block_c);
int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    return mpi_type_indexed("MPI_Type_create_indexed_block_c", MPI_COMBINER_INDEXED_BLOCK, count,
                            counts_arr(NULL), blocklength, counts_arr(array_of_displacements), NULL,
                            oldtype, newtype);
}

PMPI_WEAK(Type_create_hindexed_block_c);
int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return mpi_type_indexed("MPI_Type_create_hindexed_block_c", MPI_COMBINER_HINDEXED_BLOCK, count,
                            counts_arr(NULL), blocklength, counts_arr(array_of_displacements), NULL,
                            oldtype, newtype);
}

PMPI_WEAK(Type_create_struct_c);
int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return mpi_type_indexed(
        "MPI_Type_create_struct_c", MPI_COMBINER_STRUCT, count, counts_arr(array_of_blocklengths),
        0, counts_arr(array_of_displacements), array_of_types, MPI_DATATYPE_NULL, newtype);
}

PMPI_WEAK(Type_create_subarray_c);
int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    return mpi_type_subarray("MPI_Type_create_subarray_c", ndims, counts_arr(array_of_sizes),
                             counts_arr(array_of_subsizes), counts_arr(array_of_starts), order,
                             oldtype, newtype);
}

PMPI_WEAK(Type_create_darray_c);
int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    return mpi_type_darray("MPI_Type_create_darray_c", size, rank, ndims,
                           counts_arr(array_of_gsizes), array_of_distribs, array_of_dargs,
                           array_of_psizes, order, oldtype, newtype);
}

PMPI_WEAK(Type_create_resized_c);
int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype *newtype)
{
    return PMPI_Type_create_resized(oldtype, (MPI_Aint)lb, (MPI_Aint)extent, newtype);
}

/* ---- windows ---------------------------------------------------------------------------- */

PMPI_WEAK(Win_create_c);
int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win *win)
{
    int du;
    int rc = one("MPI_Win_create_c", comm, disp_unit, &du);
    return rc ? rc : PMPI_Win_create(base, size, du, info, comm, win);
}

PMPI_WEAK(Win_allocate_c);
int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win)
{
    int du;
    int rc = one("MPI_Win_allocate_c", comm, disp_unit, &du);
    return rc ? rc : PMPI_Win_allocate(size, du, info, comm, baseptr, win);
}

PMPI_WEAK(Win_allocate_shared_c);
int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win)
{
    int du;
    int rc = one("MPI_Win_allocate_shared_c", comm, disp_unit, &du);
    return rc ? rc : PMPI_Win_allocate_shared(size, du, info, comm, baseptr, win);
}

PMPI_WEAK(Win_shared_query_c);
int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                            void *baseptr)
{
    int du = 0;
    int rc = PMPI_Win_shared_query(win, rank, size, disp_unit ? &du : NULL, baseptr);
    if (!rc && disp_unit) *disp_unit = du;
    return rc;
}

/* ---- point-to-point and one-sided: one (count, datatype) per buffer ---------------------- */

PMPI_WEAK(Send_c);
int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm)
{
    const char *call = "MPI_Send_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Send(buf, a.n, a.t, dest, tag, comm);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Bsend_c);
int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    const char *call = "MPI_Bsend_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Bsend(buf, a.n, a.t, dest, tag, comm);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Ssend_c);
int PMPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    const char *call = "MPI_Ssend_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Ssend(buf, a.n, a.t, dest, tag, comm);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Rsend_c);
int PMPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    const char *call = "MPI_Rsend_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Rsend(buf, a.n, a.t, dest, tag, comm);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Recv_c);
int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Status *status)
{
    const char *call = "MPI_Recv_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Recv(buf, a.n, a.t, source, tag, comm, status);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Isend_c);
int PMPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Isend_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Isend(buf, a.n, a.t, dest, tag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Ibsend_c);
int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Ibsend_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Ibsend(buf, a.n, a.t, dest, tag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Issend_c);
int PMPI_Issend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Issend_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Issend(buf, a.n, a.t, dest, tag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Irsend_c);
int PMPI_Irsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Irsend_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Irsend(buf, a.n, a.t, dest, tag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Irecv_c);
int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Irecv_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Irecv(buf, a.n, a.t, source, tag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Send_init_c);
int PMPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Send_init_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Send_init(buf, a.n, a.t, dest, tag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Bsend_init_c);
int PMPI_Bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Bsend_init_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Bsend_init(buf, a.n, a.t, dest, tag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Ssend_init_c);
int PMPI_Ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Ssend_init_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Ssend_init(buf, a.n, a.t, dest, tag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Rsend_init_c);
int PMPI_Rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Rsend_init_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Rsend_init(buf, a.n, a.t, dest, tag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Recv_init_c);
int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Recv_init_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Recv_init(buf, a.n, a.t, source, tag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Sendrecv_c);
int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    const char *call = "MPI_Sendrecv_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc)
        rc = PMPI_Sendrecv(sendbuf, a.n, a.t, dest, sendtag, recvbuf, b.n, b.t, source, recvtag,
                           comm, status);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Sendrecv_replace_c);
int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    const char *call = "MPI_Sendrecv_replace_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc)
        rc = PMPI_Sendrecv_replace(buf, a.n, a.t, dest, sendtag, source, recvtag, comm, status);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Isendrecv_c);
int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Isendrecv_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc)
        rc = PMPI_Isendrecv(sendbuf, a.n, a.t, dest, sendtag, recvbuf, b.n, b.t, source, recvtag,
                            comm, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Isendrecv_replace_c);
int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    const char *call = "MPI_Isendrecv_replace_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc)
        rc = PMPI_Isendrecv_replace(buf, a.n, a.t, dest, sendtag, source, recvtag, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Mrecv_c);
int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                 MPI_Status *status)
{
    const char *call = "MPI_Mrecv_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, count, datatype, &a);
    if (!rc) rc = PMPI_Mrecv(buf, a.n, a.t, message, status);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Imrecv_c);
int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                  MPI_Request *request)
{
    const char *call = "MPI_Imrecv_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, count, datatype, &a);
    if (!rc) rc = PMPI_Imrecv(buf, a.n, a.t, message, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Put_c);
int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    const char *call = "MPI_Put_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, origin_count, origin_datatype, &a);
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, target_count, target_datatype, &b);
    if (!rc) rc = PMPI_Put(origin_addr, a.n, a.t, target_rank, target_disp, b.n, b.t, win);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Get_c);
int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    const char *call = "MPI_Get_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, origin_count, origin_datatype, &a);
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, target_count, target_datatype, &b);
    if (!rc) rc = PMPI_Get(origin_addr, a.n, a.t, target_rank, target_disp, b.n, b.t, win);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Accumulate_c);
int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    const char *call = "MPI_Accumulate_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, origin_count, origin_datatype, &a);
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, target_count, target_datatype, &b);
    if (!rc)
        rc = PMPI_Accumulate(origin_addr, a.n, a.t, target_rank, target_disp, b.n, b.t, op, win);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Get_accumulate_c);
int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win)
{
    const char *call = "MPI_Get_accumulate_c";
    mpi_big a = {0}, b = {0}, c = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, origin_count, origin_datatype, &a);
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, result_count, result_datatype, &b);
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, target_count, target_datatype, &c);
    if (!rc)
        rc = PMPI_Get_accumulate(origin_addr, a.n, a.t, result_addr, b.n, b.t, target_rank,
                                 target_disp, c.n, c.t, op, win);
    mpi_big_done(&a);
    mpi_big_done(&b);
    mpi_big_done(&c);
    return rc;
}

PMPI_WEAK(Rput_c);
int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    const char *call = "MPI_Rput_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, origin_count, origin_datatype, &a);
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, target_count, target_datatype, &b);
    if (!rc)
        rc = PMPI_Rput(origin_addr, a.n, a.t, target_rank, target_disp, b.n, b.t, win, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Rget_c);
int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    const char *call = "MPI_Rget_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, origin_count, origin_datatype, &a);
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, target_count, target_datatype, &b);
    if (!rc)
        rc = PMPI_Rget(origin_addr, a.n, a.t, target_rank, target_disp, b.n, b.t, win, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Raccumulate_c);
int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                       MPI_Request *request)
{
    const char *call = "MPI_Raccumulate_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, origin_count, origin_datatype, &a);
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, target_count, target_datatype, &b);
    if (!rc)
        rc = PMPI_Raccumulate(origin_addr, a.n, a.t, target_rank, target_disp, b.n, b.t, op, win,
                              request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Rget_accumulate_c);
int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                           MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request *request)
{
    const char *call = "MPI_Rget_accumulate_c";
    mpi_big a = {0}, b = {0}, c = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, origin_count, origin_datatype, &a);
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, result_count, result_datatype, &b);
    if (!rc) rc = mpi_big_arg(call, MPI_COMM_WORLD, target_count, target_datatype, &c);
    if (!rc)
        rc = PMPI_Rget_accumulate(origin_addr, a.n, a.t, result_addr, b.n, b.t, target_rank,
                                  target_disp, c.n, c.t, op, win, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    mpi_big_done(&c);
    return rc;
}

/* ---- files: one (count, datatype) per call; a negative count goes to the int
 * form, which reports it on the file's handler (MPI_ERRORS_RETURN by default) */

static int file_arg(const char *call, MPI_Count count, MPI_Datatype dt, mpi_big *b)
{
    if (count >= 0) return mpi_big_arg(call, MPI_COMM_WORLD, count, dt, b);
    *b = (mpi_big){-1, dt, false};
    return MPI_SUCCESS;
}

/* The _c form of a file access: (count, datatype) become an int count of a
 * type made for the call (file_arg), then the int form runs. CONST: const for
 * the writes; LAST_T LAST: the status or request argument. */
#define FILE_C(X, CONST, LAST_T, LAST)                                                             \
    PMPI_WEAK(File_##X##_c);                                                                       \
    int PMPI_File_##X##_c(MPI_File fh, CONST void *buf, MPI_Count count, MPI_Datatype datatype,    \
                          LAST_T *LAST)                                                            \
    {                                                                                              \
        mpi_big b;                                                                                 \
        int rc = file_arg("MPI_File_" #X "_c", count, datatype, &b);                               \
        if (!rc) rc = PMPI_File_##X(fh, buf, b.n, b.t, LAST);                                      \
        mpi_big_done(&b);                                                                          \
        return rc;                                                                                 \
    }
/* The same at an explicit offset. */
#define FILE_AT_C(X, CONST, LAST_T, LAST)                                                          \
    PMPI_WEAK(File_##X##_c);                                                                       \
    int PMPI_File_##X##_c(MPI_File fh, MPI_Offset offset, CONST void *buf, MPI_Count count,        \
                          MPI_Datatype datatype, LAST_T *LAST)                                     \
    {                                                                                              \
        mpi_big b;                                                                                 \
        int rc = file_arg("MPI_File_" #X "_c", count, datatype, &b);                               \
        if (!rc) rc = PMPI_File_##X(fh, offset, buf, b.n, b.t, LAST);                              \
        mpi_big_done(&b);                                                                          \
        return rc;                                                                                 \
    }

PMPI_WEAK(File_get_type_extent_c);
int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    MPI_Aint e = 0;
    int rc = PMPI_File_get_type_extent(fh, datatype, extent ? &e : NULL);
    if (!rc && extent) *extent = (MPI_Count)e;
    return rc;
}

FILE_AT_C(read_at, , MPI_Status, status)

FILE_AT_C(read_at_all, , MPI_Status, status)

FILE_AT_C(write_at, const, MPI_Status, status)

FILE_AT_C(write_at_all, const, MPI_Status, status)

FILE_AT_C(iread_at, , MPI_Request, request)

FILE_AT_C(iwrite_at, const, MPI_Request, request)

FILE_AT_C(iread_at_all, , MPI_Request, request)

FILE_AT_C(iwrite_at_all, const, MPI_Request, request)

FILE_C(read, , MPI_Status, status)

FILE_C(read_all, , MPI_Status, status)

FILE_C(write, const, MPI_Status, status)

FILE_C(write_all, const, MPI_Status, status)

FILE_C(iread, , MPI_Request, request)

FILE_C(iwrite, const, MPI_Request, request)

FILE_C(iread_all, , MPI_Request, request)

FILE_C(iwrite_all, const, MPI_Request, request)

FILE_C(read_shared, , MPI_Status, status)

FILE_C(write_shared, const, MPI_Status, status)

FILE_C(iread_shared, , MPI_Request, request)

FILE_C(iwrite_shared, const, MPI_Request, request)

FILE_C(read_ordered, , MPI_Status, status)

FILE_C(write_ordered, const, MPI_Status, status)

PMPI_WEAK(File_read_at_all_begin_c);
int PMPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                  MPI_Datatype datatype)
{
    mpi_big b;
    int rc = file_arg("MPI_File_read_at_all_begin_c", count, datatype, &b);
    if (!rc) rc = PMPI_File_read_at_all_begin(fh, offset, buf, b.n, b.t);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(File_write_at_all_begin_c);
int PMPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                   MPI_Datatype datatype)
{
    mpi_big b;
    int rc = file_arg("MPI_File_write_at_all_begin_c", count, datatype, &b);
    if (!rc) rc = PMPI_File_write_at_all_begin(fh, offset, buf, b.n, b.t);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(File_read_all_begin_c);
int PMPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    mpi_big b;
    int rc = file_arg("MPI_File_read_all_begin_c", count, datatype, &b);
    if (!rc) rc = PMPI_File_read_all_begin(fh, buf, b.n, b.t);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(File_write_all_begin_c);
int PMPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                MPI_Datatype datatype)
{
    mpi_big b;
    int rc = file_arg("MPI_File_write_all_begin_c", count, datatype, &b);
    if (!rc) rc = PMPI_File_write_all_begin(fh, buf, b.n, b.t);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(File_read_ordered_begin_c);
int PMPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    mpi_big b;
    int rc = file_arg("MPI_File_read_ordered_begin_c", count, datatype, &b);
    if (!rc) rc = PMPI_File_read_ordered_begin(fh, buf, b.n, b.t);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(File_write_ordered_begin_c);
int PMPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                    MPI_Datatype datatype)
{
    mpi_big b;
    int rc = file_arg("MPI_File_write_ordered_begin_c", count, datatype, &b);
    if (!rc) rc = PMPI_File_write_ordered_begin(fh, buf, b.n, b.t);
    mpi_big_done(&b);
    return rc;
}
