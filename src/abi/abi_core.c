/* The MPI-5 ABI's translation, the part written against courier's mpi.h:
 * the checks that abi.h's copies of courier's values are courier's, the error
 * codes the program added (above either MPI_ERR_LASTCODE), the weights
 * sentinels, and what the wrappers ask of a communicator. The tables of named
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
