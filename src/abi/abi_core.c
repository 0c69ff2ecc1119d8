/* The MPI-5 ABI's translation, the part written against courier's mpi.h:
 * the checks that abi.h's copies of courier's values are courier's, the error
 * codes the program added (above either MPI_ERR_LASTCODE), the weights
 * sentinels, what the wrappers ask of a communicator, and the constants
 * inside arrays and attribute values (spawn's error codes, a darray's or
 * subarray's integers, the predefined attributes). The tables of named
 * constants are generated beside it (abi_consts.c, tools/abi_gen.awk).
 *
 * Invariants: it calls courier only through courier_PMPI_ names (courier's own
 * calls, renamed inside libmpi_abi.so: src/abi/CMakeLists.txt), never an
 * MPI_ or PMPI_ name, which are the ABI's there. */
#include <stddef.h>

#include "abi.h"
#include "courier/mpi.h"

_Static_assert(ABI_CR_ANY_SOURCE == MPI_ANY_SOURCE && ABI_CR_PROC_NULL == MPI_PROC_NULL &&
                   ABI_CR_ROOT == MPI_ROOT && ABI_CR_ANY_TAG == MPI_ANY_TAG,
               "abi.h's copies of courier's rank and tag sentinels");
_Static_assert(MPI_UNDEFINED == -32766, "MPI_UNDEFINED is the ABI's value");
_Static_assert(MPI_T_CB_REQUIRE_NONE == 0 && MPI_T_CB_REQUIRE_MPI_RESTRICTED == 0x03 &&
                   MPI_T_CB_REQUIRE_THREAD_SAFE == 0x0F &&
                   MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE == 0x3F && MPI_T_SOURCE_ORDERED == 1 &&
                   MPI_T_SOURCE_UNORDERED == 2,
               "the callback safety levels and source orders are the ABI's values (abi_special.c "
               "checks the ABI header's): abi_gen.awk passes them as they are");
/* (courier's MPI_IN_PLACE and MPI_BUFFER_AUTOMATIC are pointers, which no
 * constant expression compares: tests/abi's MPI_IN_PLACE all-reduce checks the
 * first) */
_Static_assert(sizeof(struct abi_cr_status) == sizeof(MPI_Status) &&
                   offsetof(struct abi_cr_status, error) == offsetof(MPI_Status, MPI_ERROR) &&
                   offsetof(struct abi_cr_status, bytes) == offsetof(MPI_Status, cr_bytes) &&
                   sizeof(MPI_Status) <= 32,
               "abi.h's copy of courier's MPI_Status, which fits in the ABI's");
_Static_assert(sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8 && sizeof(MPI_Aint) == 8,
               "courier's MPI_Offset, MPI_Count and MPI_Aint are the ABI's sizes");
_Static_assert(MPI_MAX_ERROR_STRING <= 512 && MPI_MAX_OBJECT_NAME <= 128 &&
                   MPI_MAX_PROCESSOR_NAME <= 256 && MPI_MAX_INFO_KEY <= 256 &&
                   MPI_MAX_INFO_VAL <= 1024 && MPI_MAX_LIBRARY_VERSION_STRING <= 8192 &&
                   MPI_MAX_DATAREP_STRING <= 128,
               "courier writes no more into a string than the ABI's buffers hold");

#define ABI_LASTCODE 0x3fff

int abi_err_in_known(int v);
int abi_err_out_known(int v);

int abi_err_out_slow(int code)
{
    if (code > MPI_ERR_LASTCODE) return ABI_LASTCODE + (code - MPI_ERR_LASTCODE);
    int v = abi_err_out_known(code);
    return v >= 0 ? v : code;
}

int abi_err_in(int code)
{
    if (code == 0) return 0;
    if (code > ABI_LASTCODE) return MPI_ERR_LASTCODE + (code - ABI_LASTCODE);
    int v = abi_err_in_known(code);
    return v >= 0 ? v : MPI_ERR_UNKNOWN;
}

int *abi_weights_in(const int *w)
{
    return w == ABI_UNWEIGHTED      ? MPI_UNWEIGHTED
           : w == ABI_WEIGHTS_EMPTY ? MPI_WEIGHTS_EMPTY
                                    : (int *)w;
}

abi_fn abi_cr_dup_fn(int which)
{
    return which == ABI_DUP_COMM   ? (abi_fn)MPI_COMM_DUP_FN
           : which == ABI_DUP_TYPE ? (abi_fn)MPI_TYPE_DUP_FN
           : which == ABI_DUP_WIN  ? (abi_fn)MPI_WIN_DUP_FN
                                   : (abi_fn)MPI_DUP_FN;
}

int courier_PMPI_Comm_test_inter(MPI_Comm comm, int *flag);
int courier_PMPI_Comm_size(MPI_Comm comm, int *size);
int courier_PMPI_Comm_remote_size(MPI_Comm comm, int *size);

int courier_PMPI_Topo_test(MPI_Comm comm, int *status);
int courier_PMPI_Cartdim_get(MPI_Comm comm, int *ndims);
int courier_PMPI_Comm_rank(MPI_Comm comm, int *rank);
int courier_PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
int courier_PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                            int *weighted);

int abi_nbrs(int c, int out)
{
    int topo = MPI_UNDEFINED, n = 0, in = 0, outd = 0, w, me = 0;
    if (courier_PMPI_Topo_test(c, &topo) != MPI_SUCCESS) return 0;
    if (topo == MPI_CART && courier_PMPI_Cartdim_get(c, &n) == MPI_SUCCESS) return 2 * n;
    if (topo == MPI_GRAPH && courier_PMPI_Comm_rank(c, &me) == MPI_SUCCESS &&
        courier_PMPI_Graph_neighbors_count(c, me, &n) == MPI_SUCCESS)
        return n;
    if (topo == MPI_DIST_GRAPH &&
        courier_PMPI_Dist_graph_neighbors_count(c, &in, &outd, &w) == MPI_SUCCESS)
        return out ? outd : in;
    return 0;
}

int abi_peers(int c)
{
    int inter = 0, n = 0;
    if (courier_PMPI_Comm_test_inter(c, &inter) != MPI_SUCCESS) return 0;
    if (inter)
        courier_PMPI_Comm_remote_size(c, &n);
    else
        courier_PMPI_Comm_size(c, &n);
    return n;
}

int abi_distrib_out(int v), abi_order_out(int v);

int abi_darg_in(int v)
{
    return v == ABI_DISTRIBUTE_DFLT_DARG ? MPI_DISTRIBUTE_DFLT_DARG : v;
}

static int abi_darg_out(int v)
{
    return v == MPI_DISTRIBUTE_DFLT_DARG ? ABI_DISTRIBUTE_DFLT_DARG : v;
}

void abi_errcodes_out(int c, int root, int *codes, const int *np, int n)
{
    int me = -1;
    if (!codes || !np || courier_PMPI_Comm_rank(c, &me) != MPI_SUCCESS || me != root) return;
    int total = 0;
    for (int i = 0; i < n; i++) total += np[i] > 0 ? np[i] : 0;
    for (int i = 0; i < total; i++) codes[i] = abi_err_out(codes[i]);
}

/* The ABI's values a predefined attribute may point to: MPI_PROC_NULL,
 * MPI_ANY_SOURCE, the four window flavors (courier's are 1-4), and the
 * window models (courier's MPI_WIN_SEPARATE 1, MPI_WIN_UNIFIED 2). */
static const int abi_attr_vals[] = {ABI_PROC_NULL,
                                    ABI_ANY_SOURCE,
                                    ABI_WIN_FLAVOR_CREATE,
                                    ABI_WIN_FLAVOR_CREATE + 1,
                                    ABI_WIN_FLAVOR_CREATE + 2,
                                    ABI_WIN_FLAVOR_CREATE + 3,
                                    ABI_WIN_SEPARATE,
                                    ABI_WIN_UNIFIED};
_Static_assert(MPI_WIN_FLAVOR_CREATE == 1 && MPI_WIN_FLAVOR_ALLOCATE == 2 &&
                   MPI_WIN_FLAVOR_DYNAMIC == 3 && MPI_WIN_FLAVOR_SHARED == 4 &&
                   MPI_WIN_SEPARATE == 1 && MPI_WIN_UNIFIED == 2,
               "abi_attr_vals' order is courier's values");

void abi_attr_out(int kv, void *val)
{
    int **p = val;
    /* the program's own attributes hold what it put there, often no address */
    if (kv != MPI_HOST && kv != MPI_IO && kv != MPI_WIN_CREATE_FLAVOR && kv != MPI_WIN_MODEL &&
        kv != MPI_LASTUSEDCODE)
        return;
    if (!*p) return;
    int v = **p, i = -1;
    if (kv == MPI_HOST || kv == MPI_IO)
        i = v == MPI_PROC_NULL ? 0 : v == MPI_ANY_SOURCE ? 1 : -1;
    else if (kv == MPI_WIN_CREATE_FLAVOR && v >= 1 && v <= 4)
        i = 1 + v;
    else if (kv == MPI_WIN_MODEL && v >= 1 && v <= 2)
        i = 5 + v;
    if (i >= 0) *p = (int *)&abi_attr_vals[i];
    if (kv == MPI_LASTUSEDCODE) {
        int *cell = abi_last_code_cell();
        if (cell) {
            *cell = abi_err_out(v);
            *p = cell;
        }
    }
}

int courier_PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                                     MPI_Count *num_addresses, MPI_Count *num_large_counts,
                                     MPI_Count *num_datatypes, int *combiner);

/* (the _c envelope: the int one refuses a type holding large counts) */
void abi_contents_out(int dt, long long max, int *ints)
{
    MPI_Count ni = 0, na, nc, nd;
    int comb = 0;
    if (!ints || courier_PMPI_Type_get_envelope_c(dt, &ni, &na, &nc, &nd, &comb) != MPI_SUCCESS ||
        ni > max)
        return;
    /* a large-count envelope (nc > 0) keeps the sizes (subarray) or gsizes
     * (darray) among its counts, not its integers (MPI-4.1 §5.1.13) */
    if (comb == MPI_COMBINER_SUBARRAY && ni >= 2) { /* ndims, sizes, subsizes, starts, order */
        int n = ints[0], at = nc ? 1 : 1 + 3 * n;
        if (n >= 0 && at < ni) ints[at] = abi_order_out(ints[at]);
    } else if (comb == MPI_COMBINER_DARRAY && ni >= 4) {
        /* size, rank, ndims, gsizes, distribs, dargs, psizes, order */
        int n = ints[2], at = nc ? 3 : 3 + n; /* the distributions */
        if (n < 0 || at + 3 * n >= ni) return;
        for (int d = 0; d < n; d++) {
            ints[at + d] = abi_distrib_out(ints[at + d]);
            ints[at + n + d] = abi_darg_out(ints[at + n + d]);
        }
        ints[at + 3 * n] = abi_order_out(ints[at + 3 * n]);
    }
}
