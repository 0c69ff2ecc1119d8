/* The large-count (_c) forms of MPI-4.0's collectives: blocking, nonblocking,
 * persistent and neighbourhood (the rest of the _c forms, and how a count
 * past INT_MAX travels, are mpi_large.c's). A data movement's count past
 * INT_MAX goes as one instance of a made type (mpi_big_arg), which a block
 * layout keeps (its extent is count extents). The blocking reductions
 * (MPI_Reduce_c, _Allreduce_c, _Scan_c, _Exscan_c, _Reduce_local_c) go in
 * pieces of 2^30 elements, each the int form: element-wise, so any
 * operation, user ones included; the nonblocking and persistent ones and the
 * reduce-scatters go as one made type, which only the predefined operations
 * take (mpi_big_op). The v forms' arrays go as int arrays when every value
 * fits (else MPI_ERR_COUNT), their length the communicator's (remote) size or
 * its topology's in- and out-degree.
 *
 * Invariants: those of mpi_large.c; a collective's members convert alike (the
 * same count gives the same pieces and the same made type everywhere). */
#include <limits.h>
#include <stdlib.h>

#include "mpi_large.h"

#define CHUNK (1 << 30) /* elements in a piece of a blocking reduction */

/* The length of a v form's arrays: the group's size, the remote one on an
 * intercommunicator (0 for a bad communicator: the int form reports it). */
static int peers(MPI_Comm comm)
{
    int inter = 0, n = 0;
    if (PMPI_Comm_test_inter(comm, &inter)) return 0;
    if (inter)
        PMPI_Comm_remote_size(comm, &n);
    else
        PMPI_Comm_size(comm, &n);
    return n;
}

/* Is this member the root of a rooted v form (its arrays are significant
 * there only)? */
static bool root_here(MPI_Comm comm, int root)
{
    int inter = 0, me = -1;
    if (PMPI_Comm_test_inter(comm, &inter)) return false;
    if (inter) return root == MPI_ROOT;
    PMPI_Comm_rank(comm, &me);
    return me == root;
}

/* The in- and out-degree of comm's topology (0: none; the int form reports it). */
static void nbrs(MPI_Comm comm, int *nin, int *nout)
{
    int st = MPI_UNDEFINED, w = 0;
    *nin = *nout = 0;
    if (PMPI_Topo_test(comm, &st)) return;
    if (st == MPI_CART) {
        int nd = 0;
        PMPI_Cartdim_get(comm, &nd);
        *nin = *nout = 2 * nd;
    } else if (st == MPI_GRAPH) {
        int me = 0;
        PMPI_Comm_rank(comm, &me);
        PMPI_Graph_neighbors_count(comm, me, nin);
        *nout = *nin;
    } else if (st == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, nin, nout, &w);
    }
}

/* A blocking reduction of count elements of dt: a negative count or a bad
 * type of a large count reported; *ext: dt's extent (a piece's stride). */
static int chunked(const char *call, MPI_Comm comm, MPI_Count count, MPI_Datatype dt, MPI_Aint *ext)
{
    *ext = 0;
    if (count >= 0 && count <= INT_MAX) return MPI_SUCCESS;
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = count < 0 ? mpi_fail(job, comm, call, MPI_ERR_COUNT, "count %lld is negative",
                                  (long long)count)
                       : mpi_type_check(job, comm, call, dt, &t);
    if (!rc) *ext = type_extent(t);
    return mpi_leave(job, rc);
}

/* Element i of a buffer (MPI_IN_PLACE and NULL stay). */
static void *at(const void *p, MPI_Count i, MPI_Aint ext)
{
    return p && p != MPI_IN_PLACE ? (char *)p + i * ext : (void *)p;
}

PMPI_WEAK(Bcast_c);
int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    const char *call = "MPI_Bcast_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Bcast(buffer, a.n, a.t, root, comm);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Ibcast_c);
int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    const char *call = "MPI_Ibcast_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Ibcast(buffer, a.n, a.t, root, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Bcast_init_c);
int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Bcast_init_c";
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Bcast_init(buffer, a.n, a.t, root, comm, info, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Gather_c);
int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    const char *call = "MPI_Gather_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Gather(sendbuf, a.n, a.t, recvbuf, b.n, b.t, root, comm);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Igather_c);
int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    const char *call = "MPI_Igather_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Igather(sendbuf, a.n, a.t, recvbuf, b.n, b.t, root, comm, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Gather_init_c);
int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Gather_init_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Gather_init(sendbuf, a.n, a.t, recvbuf, b.n, b.t, root, comm, info, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Scatter_c);
int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    const char *call = "MPI_Scatter_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Scatter(sendbuf, a.n, a.t, recvbuf, b.n, b.t, root, comm);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Iscatter_c);
int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request *request)
{
    const char *call = "MPI_Iscatter_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Iscatter(sendbuf, a.n, a.t, recvbuf, b.n, b.t, root, comm, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Scatter_init_c);
int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Scatter_init_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc)
        rc = PMPI_Scatter_init(sendbuf, a.n, a.t, recvbuf, b.n, b.t, root, comm, info, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Allgather_c);
int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const char *call = "MPI_Allgather_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Allgather(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Iallgather_c);
int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    const char *call = "MPI_Iallgather_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Iallgather(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Allgather_init_c);
int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Allgather_init_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Allgather_init(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm, info, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Alltoall_c);
int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const char *call = "MPI_Alltoall_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Alltoall(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Ialltoall_c);
int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    const char *call = "MPI_Ialltoall_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Ialltoall(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Alltoall_init_c);
int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Alltoall_init_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Alltoall_init(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm, info, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Neighbor_allgather_c);
int PMPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm)
{
    const char *call = "MPI_Neighbor_allgather_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Neighbor_allgather(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Ineighbor_allgather_c);
int PMPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Ineighbor_allgather_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Ineighbor_allgather(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Neighbor_allgather_init_c);
int PMPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Neighbor_allgather_init_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc)
        rc =
            PMPI_Neighbor_allgather_init(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm, info, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Neighbor_alltoall_c);
int PMPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm)
{
    const char *call = "MPI_Neighbor_alltoall_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Neighbor_alltoall(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Ineighbor_alltoall_c);
int PMPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Ineighbor_alltoall_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc) rc = PMPI_Ineighbor_alltoall(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Neighbor_alltoall_init_c);
int PMPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Neighbor_alltoall_init_c";
    mpi_big a = {0}, b = {0};
    int rc = 0;
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &b);
    if (!rc)
        rc = PMPI_Neighbor_alltoall_init(sendbuf, a.n, a.t, recvbuf, b.n, b.t, comm, info, request);
    mpi_big_done(&a);
    mpi_big_done(&b);
    return rc;
}

PMPI_WEAK(Ireduce_c);
int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Ireduce_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, count, op);
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Ireduce(sendbuf, recvbuf, a.n, a.t, op, root, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Reduce_init_c);
int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Reduce_init_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, count, op);
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Reduce_init(sendbuf, recvbuf, a.n, a.t, op, root, comm, info, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Iallreduce_c);
int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Iallreduce_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, count, op);
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Iallreduce(sendbuf, recvbuf, a.n, a.t, op, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Allreduce_init_c);
int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    const char *call = "MPI_Allreduce_init_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, count, op);
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Allreduce_init(sendbuf, recvbuf, a.n, a.t, op, comm, info, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Iscan_c);
int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Iscan_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, count, op);
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Iscan(sendbuf, recvbuf, a.n, a.t, op, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Scan_init_c);
int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Scan_init_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, count, op);
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Scan_init(sendbuf, recvbuf, a.n, a.t, op, comm, info, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Iexscan_c);
int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Iexscan_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, count, op);
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Iexscan(sendbuf, recvbuf, a.n, a.t, op, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Exscan_init_c);
int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Exscan_init_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, count, op);
    if (!rc) rc = mpi_big_arg(call, comm, count, datatype, &a);
    if (!rc) rc = PMPI_Exscan_init(sendbuf, recvbuf, a.n, a.t, op, comm, info, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Reduce_scatter_block_c);
int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const char *call = "MPI_Reduce_scatter_block_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, recvcount, op);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, datatype, &a);
    if (!rc) rc = PMPI_Reduce_scatter_block(sendbuf, recvbuf, a.n, a.t, op, comm);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Ireduce_scatter_block_c);
int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 MPI_Request *request)
{
    const char *call = "MPI_Ireduce_scatter_block_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, recvcount, op);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, datatype, &a);
    if (!rc) rc = PMPI_Ireduce_scatter_block(sendbuf, recvbuf, a.n, a.t, op, comm, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Reduce_scatter_block_init_c);
int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
    const char *call = "MPI_Reduce_scatter_block_init_c";
    mpi_big a = {0};
    int rc = mpi_big_op(call, comm, recvcount, op);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, datatype, &a);
    if (!rc)
        rc = PMPI_Reduce_scatter_block_init(sendbuf, recvbuf, a.n, a.t, op, comm, info, request);
    mpi_big_done(&a);
    return rc;
}

PMPI_WEAK(Gatherv_c);
int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm)
{
    const char *call = "MPI_Gatherv_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v0);
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = PMPI_Gatherv(sendbuf, a.n, a.t, recvbuf, v0, v1, recvtype, root, comm);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Igatherv_c);
int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                    int root, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Igatherv_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v0);
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = PMPI_Igatherv(sendbuf, a.n, a.t, recvbuf, v0, v1, recvtype, root, comm, request);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Gatherv_init_c);
int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    const char *call = "MPI_Gatherv_init_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v0);
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc)
        rc = PMPI_Gatherv_init(sendbuf, a.n, a.t, recvbuf, v0, v1, recvtype, root, comm, info,
                               request);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Scatterv_c);
int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    const char *call = "MPI_Scatterv_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, sendcounts, false, &v0);
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &a);
    if (!rc) rc = PMPI_Scatterv(sendbuf, v0, v1, sendtype, recvbuf, a.n, a.t, root, comm);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Iscatterv_c);
int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Iscatterv_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, sendcounts, false, &v0);
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &a);
    if (!rc) rc = PMPI_Iscatterv(sendbuf, v0, v1, sendtype, recvbuf, a.n, a.t, root, comm, request);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Scatterv_init_c);
int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    const char *call = "MPI_Scatterv_init_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, sendcounts, false, &v0);
    if (!rc && root_here(comm, root)) rc = mpi_large_ints(call, comm, np, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, recvcount, recvtype, &a);
    if (!rc)
        rc = PMPI_Scatterv_init(sendbuf, v0, v1, sendtype, recvbuf, a.n, a.t, root, comm, info,
                                request);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Allgatherv_c);
int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm)
{
    const char *call = "MPI_Allgatherv_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, np, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = PMPI_Allgatherv(sendbuf, a.n, a.t, recvbuf, v0, v1, recvtype, comm);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Iallgatherv_c);
int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Iallgatherv_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, np, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = PMPI_Iallgatherv(sendbuf, a.n, a.t, recvbuf, v0, v1, recvtype, comm, request);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Allgatherv_init_c);
int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                           MPI_Request *request)
{
    const char *call = "MPI_Allgatherv_init_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, np, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc)
        rc =
            PMPI_Allgatherv_init(sendbuf, a.n, a.t, recvbuf, v0, v1, recvtype, comm, info, request);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Alltoallv_c);
int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    const char *call = "MPI_Alltoallv_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL, *v2 = NULL, *v3 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, np, sdispls, true, &v1);
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v2);
    if (!rc) rc = mpi_large_ints(call, comm, np, rdispls, true, &v3);
    if (!rc) rc = PMPI_Alltoallv(sendbuf, v0, v1, sendtype, recvbuf, v2, v3, recvtype, comm);
    free(v0), free(v1), free(v2), free(v3);
    return rc;
}

PMPI_WEAK(Ialltoallv_c);
int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    const char *call = "MPI_Ialltoallv_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL, *v2 = NULL, *v3 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, np, sdispls, true, &v1);
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v2);
    if (!rc) rc = mpi_large_ints(call, comm, np, rdispls, true, &v3);
    if (!rc)
        rc = PMPI_Ialltoallv(sendbuf, v0, v1, sendtype, recvbuf, v2, v3, recvtype, comm, request);
    free(v0), free(v1), free(v2), free(v3);
    return rc;
}

PMPI_WEAK(Alltoallv_init_c);
int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Alltoallv_init_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL, *v2 = NULL, *v3 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, np, sdispls, true, &v1);
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v2);
    if (!rc) rc = mpi_large_ints(call, comm, np, rdispls, true, &v3);
    if (!rc)
        rc = PMPI_Alltoallv_init(sendbuf, v0, v1, sendtype, recvbuf, v2, v3, recvtype, comm, info,
                                 request);
    free(v0), free(v1), free(v2), free(v3);
    return rc;
}

PMPI_WEAK(Alltoallw_c);
int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    const char *call = "MPI_Alltoallw_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL, *v2 = NULL, *v3 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, np, sdispls, true, &v1);
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v2);
    if (!rc) rc = mpi_large_ints(call, comm, np, rdispls, true, &v3);
    if (!rc) rc = PMPI_Alltoallw(sendbuf, v0, v1, sendtypes, recvbuf, v2, v3, recvtypes, comm);
    free(v0), free(v1), free(v2), free(v3);
    return rc;
}

PMPI_WEAK(Ialltoallw_c);
int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                      MPI_Request *request)
{
    const char *call = "MPI_Ialltoallw_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL, *v2 = NULL, *v3 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, np, sdispls, true, &v1);
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v2);
    if (!rc) rc = mpi_large_ints(call, comm, np, rdispls, true, &v3);
    if (!rc)
        rc = PMPI_Ialltoallw(sendbuf, v0, v1, sendtypes, recvbuf, v2, v3, recvtypes, comm, request);
    free(v0), free(v1), free(v2), free(v3);
    return rc;
}

PMPI_WEAK(Alltoallw_init_c);
int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    const char *call = "MPI_Alltoallw_init_c";
    int np = peers(comm);
    int *v0 = NULL, *v1 = NULL, *v2 = NULL, *v3 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, np, sdispls, true, &v1);
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v2);
    if (!rc) rc = mpi_large_ints(call, comm, np, rdispls, true, &v3);
    if (!rc)
        rc = PMPI_Alltoallw_init(sendbuf, v0, v1, sendtypes, recvbuf, v2, v3, recvtypes, comm, info,
                                 request);
    free(v0), free(v1), free(v2), free(v3);
    return rc;
}

PMPI_WEAK(Reduce_scatter_c);
int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const char *call = "MPI_Reduce_scatter_c";
    int np = peers(comm);
    int *v0 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v0);
    if (!rc) rc = PMPI_Reduce_scatter(sendbuf, recvbuf, v0, datatype, op, comm);
    free(v0);
    return rc;
}

PMPI_WEAK(Ireduce_scatter_c);
int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Ireduce_scatter_c";
    int np = peers(comm);
    int *v0 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v0);
    if (!rc) rc = PMPI_Ireduce_scatter(sendbuf, recvbuf, v0, datatype, op, comm, request);
    free(v0);
    return rc;
}

PMPI_WEAK(Reduce_scatter_init_c);
int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    const char *call = "MPI_Reduce_scatter_init_c";
    int np = peers(comm);
    int *v0 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, np, recvcounts, false, &v0);
    if (!rc) rc = PMPI_Reduce_scatter_init(sendbuf, recvbuf, v0, datatype, op, comm, info, request);
    free(v0);
    return rc;
}

PMPI_WEAK(Neighbor_allgatherv_c);
int PMPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, MPI_Comm comm)
{
    const char *call = "MPI_Neighbor_allgatherv_c";
    int nin, nout;
    nbrs(comm, &nin, &nout);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, nin, recvcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, nin, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc) rc = PMPI_Neighbor_allgatherv(sendbuf, a.n, a.t, recvbuf, v0, v1, recvtype, comm);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Ineighbor_allgatherv_c);
int PMPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request)
{
    const char *call = "MPI_Ineighbor_allgatherv_c";
    int nin, nout;
    nbrs(comm, &nin, &nout);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, nin, recvcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, nin, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc)
        rc = PMPI_Ineighbor_allgatherv(sendbuf, a.n, a.t, recvbuf, v0, v1, recvtype, comm, request);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Neighbor_allgatherv_init_c);
int PMPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const MPI_Count recvcounts[],
                                    const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Neighbor_allgatherv_init_c";
    int nin, nout;
    nbrs(comm, &nin, &nout);
    int *v0 = NULL, *v1 = NULL;
    mpi_big a = {0};
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, nin, recvcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, nin, displs, true, &v1);
    if (!rc) rc = mpi_big_arg(call, comm, sendcount, sendtype, &a);
    if (!rc)
        rc = PMPI_Neighbor_allgatherv_init(sendbuf, a.n, a.t, recvbuf, v0, v1, recvtype, comm, info,
                                           request);
    mpi_big_done(&a);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Neighbor_alltoallv_c);
int PMPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm)
{
    const char *call = "MPI_Neighbor_alltoallv_c";
    int nin, nout;
    nbrs(comm, &nin, &nout);
    int *v0 = NULL, *v1 = NULL, *v2 = NULL, *v3 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, nout, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, nout, sdispls, true, &v1);
    if (!rc) rc = mpi_large_ints(call, comm, nin, recvcounts, false, &v2);
    if (!rc) rc = mpi_large_ints(call, comm, nin, rdispls, true, &v3);
    if (!rc)
        rc = PMPI_Neighbor_alltoallv(sendbuf, v0, v1, sendtype, recvbuf, v2, v3, recvtype, comm);
    free(v0), free(v1), free(v2), free(v3);
    return rc;
}

PMPI_WEAK(Ineighbor_alltoallv_c);
int PMPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Ineighbor_alltoallv_c";
    int nin, nout;
    nbrs(comm, &nin, &nout);
    int *v0 = NULL, *v1 = NULL, *v2 = NULL, *v3 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, nout, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, nout, sdispls, true, &v1);
    if (!rc) rc = mpi_large_ints(call, comm, nin, recvcounts, false, &v2);
    if (!rc) rc = mpi_large_ints(call, comm, nin, rdispls, true, &v3);
    if (!rc)
        rc = PMPI_Ineighbor_alltoallv(sendbuf, v0, v1, sendtype, recvbuf, v2, v3, recvtype, comm,
                                      request);
    free(v0), free(v1), free(v2), free(v3);
    return rc;
}

PMPI_WEAK(Neighbor_alltoallv_init_c);
int PMPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    const char *call = "MPI_Neighbor_alltoallv_init_c";
    int nin, nout;
    nbrs(comm, &nin, &nout);
    int *v0 = NULL, *v1 = NULL, *v2 = NULL, *v3 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, nout, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, nout, sdispls, true, &v1);
    if (!rc) rc = mpi_large_ints(call, comm, nin, recvcounts, false, &v2);
    if (!rc) rc = mpi_large_ints(call, comm, nin, rdispls, true, &v3);
    if (!rc)
        rc = PMPI_Neighbor_alltoallv_init(sendbuf, v0, v1, sendtype, recvbuf, v2, v3, recvtype,
                                          comm, info, request);
    free(v0), free(v1), free(v2), free(v3);
    return rc;
}

PMPI_WEAK(Neighbor_alltoallw_c);
int PMPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                              void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    const char *call = "MPI_Neighbor_alltoallw_c";
    int nin, nout;
    nbrs(comm, &nin, &nout);
    int *v0 = NULL, *v1 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, nout, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, nin, recvcounts, false, &v1);
    if (!rc)
        rc = PMPI_Neighbor_alltoallw(sendbuf, v0, sdispls, sendtypes, recvbuf, v1, rdispls,
                                     recvtypes, comm);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Ineighbor_alltoallw_c);
int PMPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                               MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Ineighbor_alltoallw_c";
    int nin, nout;
    nbrs(comm, &nin, &nout);
    int *v0 = NULL, *v1 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, nout, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, nin, recvcounts, false, &v1);
    if (!rc)
        rc = PMPI_Ineighbor_alltoallw(sendbuf, v0, sdispls, sendtypes, recvbuf, v1, rdispls,
                                      recvtypes, comm, request);
    free(v0), free(v1);
    return rc;
}

PMPI_WEAK(Neighbor_alltoallw_init_c);
int PMPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *call = "MPI_Neighbor_alltoallw_init_c";
    int nin, nout;
    nbrs(comm, &nin, &nout);
    int *v0 = NULL, *v1 = NULL;
    int rc = 0;
    if (!rc) rc = mpi_large_ints(call, comm, nout, sendcounts, false, &v0);
    if (!rc) rc = mpi_large_ints(call, comm, nin, recvcounts, false, &v1);
    if (!rc)
        rc = PMPI_Neighbor_alltoallw_init(sendbuf, v0, sdispls, sendtypes, recvbuf, v1, rdispls,
                                          recvtypes, comm, info, request);
    free(v0), free(v1);
    return rc;
}

/* The body of a reduction's _c form: the plain call once per piece of at
 * most CHUNK elements (the operations act element by element), once at least
 * (a collective even when empty). CALL names the piece's buffers s and r and
 * its count n. */
#define IN_PIECES(NAME, COMM, SBUF, RBUF, CALL)                                                    \
    MPI_Aint ext = 0;                                                                              \
    int rc = chunked(NAME, COMM, count, datatype, &ext);                                           \
    MPI_Count step = count <= INT_MAX ? INT_MAX : CHUNK, i = 0;                                    \
    while (!rc) {                                                                                  \
        int n = (int)(count - i < step ? count - i : step);                                        \
        const void *s = at(SBUF, i, ext);                                                          \
        void *r = at(RBUF, i, ext);                                                                \
        rc = CALL;                                                                                 \
        if ((i += step) >= count) break;                                                           \
    }                                                                                              \
    return rc

PMPI_WEAK(Reduce_c);
int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm)
{
    IN_PIECES("MPI_Reduce_c", comm, sendbuf, recvbuf,
              PMPI_Reduce(s, r, n, datatype, op, root, comm));
}

PMPI_WEAK(Allreduce_c);
int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm)
{
    IN_PIECES("MPI_Allreduce_c", comm, sendbuf, recvbuf,
              PMPI_Allreduce(s, r, n, datatype, op, comm));
}

PMPI_WEAK(Scan_c);
int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm)
{
    IN_PIECES("MPI_Scan_c", comm, sendbuf, recvbuf, PMPI_Scan(s, r, n, datatype, op, comm));
}

PMPI_WEAK(Exscan_c);
int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    IN_PIECES("MPI_Exscan_c", comm, sendbuf, recvbuf, PMPI_Exscan(s, r, n, datatype, op, comm));
}

PMPI_WEAK(Reduce_local_c);
int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op)
{
    IN_PIECES("MPI_Reduce_local_c", MPI_COMM_WORLD, inbuf, inoutbuf,
              PMPI_Reduce_local(s, r, n, datatype, op));
}
