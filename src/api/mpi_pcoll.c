/* MPI's nonblocking collectives (MPI_Ibcast, ...) and their persistent forms
 * (MPI-4.0 §6.13: MPI_Bcast_init, ...): the entry points of mpi_nbc.c's
 * builders (mpi_nbc.h). A persistent collective is built once, at its _init
 * call, which is collective and takes the communicator's collective sequence
 * number as a nonblocking one does (so the members' _init calls must come in
 * the same order as their other collectives); its tags are fixed then, so its
 * MPI_Starts need no order among themselves. Each MPI_Start/MPI_Startall takes
 * the data the buffers hold then and runs the schedule again; MPI_Wait/Test*
 * complete it (an inactive one is taken as MPI_REQUEST_NULL), MPI_Request_free
 * of an inactive one releases the schedule (of an active one: once it has
 * completed). The info argument holds hints; none is used.
 *
 * Invariants: the wrappers add nothing but the form (p): the checks, errors
 * and schedules are the builders', so the three forms of a collective check
 * and compute alike. */
#include "mpi_nbc.h"

PMPI_WEAK(Ibarrier);
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_barrier(0, comm, request);
}

PMPI_WEAK(Barrier_init);
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return mpi_nbc_barrier(MPI_NBC_PERSIST, comm, request);
}

PMPI_WEAK(Ibcast);
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    return mpi_nbc_bcast(0, buffer, count, datatype, root, comm, request);
}

PMPI_WEAK(Bcast_init);
int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    (void)info;
    return mpi_nbc_bcast(MPI_NBC_PERSIST, buffer, count, datatype, root, comm, request);
}

PMPI_WEAK(Ireduce);
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_reduce(0, R_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

PMPI_WEAK(Reduce_init);
int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return mpi_nbc_reduce(MPI_NBC_PERSIST, R_REDUCE, sendbuf, recvbuf, count, datatype, op, root,
                          comm, request);
}

PMPI_WEAK(Iallreduce);
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_reduce(0, R_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0, comm, request);
}

PMPI_WEAK(Allreduce_init);
int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return mpi_nbc_reduce(MPI_NBC_PERSIST, R_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0,
                          comm, request);
}

PMPI_WEAK(Ireduce_scatter);
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_reduce_scatter(0, sendbuf, recvbuf, recvcounts, false, 0, datatype, op, comm,
                                  request);
}

PMPI_WEAK(Reduce_scatter_init);
int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    (void)info;
    return mpi_nbc_reduce_scatter(MPI_NBC_PERSIST, sendbuf, recvbuf, recvcounts, false, 0, datatype,
                                  op, comm, request);
}

PMPI_WEAK(Ireduce_scatter_block);
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request)
{
    return mpi_nbc_reduce_scatter(0, sendbuf, recvbuf, NULL, true, recvcount, datatype, op, comm,
                                  request);
}

PMPI_WEAK(Reduce_scatter_block_init);
int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    (void)info;
    return mpi_nbc_reduce_scatter(MPI_NBC_PERSIST, sendbuf, recvbuf, NULL, true, recvcount,
                                  datatype, op, comm, request);
}

PMPI_WEAK(Iscan);
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_reduce(0, R_SCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, request);
}

PMPI_WEAK(Scan_init);
int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return mpi_nbc_reduce(MPI_NBC_PERSIST, R_SCAN, sendbuf, recvbuf, count, datatype, op, 0, comm,
                          request);
}

PMPI_WEAK(Iexscan);
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_reduce(0, R_EXSCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, request);
}

PMPI_WEAK(Exscan_init);
int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return mpi_nbc_reduce(MPI_NBC_PERSIST, R_EXSCAN, sendbuf, recvbuf, count, datatype, op, 0, comm,
                          request);
}

PMPI_WEAK(Igather);
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    return mpi_nbc_gather(0, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                          request);
}

PMPI_WEAK(Gather_init);
int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    (void)info;
    return mpi_nbc_gather(MPI_NBC_PERSIST, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, root, comm, request);
}

PMPI_WEAK(Igatherv);
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_gatherv(0, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           root, comm, request);
}

PMPI_WEAK(Gatherv_init);
int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return mpi_nbc_gatherv(MPI_NBC_PERSIST, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                           displs, recvtype, root, comm, request);
}

PMPI_WEAK(Iscatter);
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    return mpi_nbc_scatter(0, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm, request);
}

PMPI_WEAK(Scatter_init);
int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    (void)info;
    return mpi_nbc_scatter(MPI_NBC_PERSIST, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           recvtype, root, comm, request);
}

PMPI_WEAK(Iscatterv);
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_scatterv(0, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                            root, comm, request);
}

PMPI_WEAK(Scatterv_init);
int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return mpi_nbc_scatterv(MPI_NBC_PERSIST, sendbuf, sendcounts, displs, sendtype, recvbuf,
                            recvcount, recvtype, root, comm, request);
}

PMPI_WEAK(Iallgather);
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_allgather(0, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request);
}

PMPI_WEAK(Allgather_init);
int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    (void)info;
    return mpi_nbc_allgather(MPI_NBC_PERSIST, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                             recvtype, comm, request);
}

PMPI_WEAK(Iallgatherv);
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_allgatherv(0, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, comm, request);
}

PMPI_WEAK(Allgatherv_init);
int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return mpi_nbc_allgatherv(MPI_NBC_PERSIST, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                              displs, recvtype, comm, request);
}

PMPI_WEAK(Ialltoall);
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_alltoall(0, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            request);
}

PMPI_WEAK(Alltoall_init);
int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    (void)info;
    return mpi_nbc_alltoall(MPI_NBC_PERSIST, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, comm, request);
}

PMPI_WEAK(Ialltoallv);
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return mpi_nbc_alltoallv(0, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm, request);
}

PMPI_WEAK(Alltoallv_init);
int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    (void)info;
    return mpi_nbc_alltoallv(MPI_NBC_PERSIST, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                             recvcounts, rdispls, recvtype, comm, request);
}

PMPI_WEAK(Ialltoallw);
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    return mpi_nbc_alltoallw(0, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                             rdispls, recvtypes, comm, request);
}

PMPI_WEAK(Alltoallw_init);
int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    (void)info;
    return mpi_nbc_alltoallw(MPI_NBC_PERSIST, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                             recvcounts, rdispls, recvtypes, comm, request);
}
