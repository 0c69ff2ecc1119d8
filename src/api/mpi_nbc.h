/* The nonblocking and persistent collectives' schedules (mpi_nbc.c), whose
 * entry points (MPI_I* and MPI_*_init) are mpi_pcoll.c's: one builder per
 * collective, called with p = 0 (nonblocking: started in the call) or
 * MPI_NBC_PERSIST (persistent: an inactive request whose every MPI_Start
 * starts the schedule built here again). Each enters and leaves the call and
 * returns an MPI code, already reported. */
#ifndef COURIER_MPI_NBC_H
#define COURIER_MPI_NBC_H

#include "mpi_impl.h"

#define MPI_NBC_PERSIST 0x100 /* or'ed into p (and mpi_nbc_neighbor's which) */

/* Whether the first nonblocking collective starts the progress thread:
 * COURIER_NBC_THREAD when given, else only where the ranks do not outnumber
 * the CPUs (what MPI_T reads for that variable too). */
bool mpi_nbc_thread_wanted(const cr_job *job);

int mpi_nbc_barrier(int p, MPI_Comm comm, MPI_Request *req);
int mpi_nbc_bcast(int p, void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                  MPI_Request *req);
/* form: R_REDUCE (root used), R_ALLREDUCE, R_SCAN or R_EXSCAN */
enum { R_REDUCE, R_ALLREDUCE, R_SCAN, R_EXSCAN };
int mpi_nbc_reduce(int p, int form, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                   MPI_Op op, int root, MPI_Comm comm, MPI_Request *req);
/* is_block: MPI_Reduce_scatter_block's, block each (counts unused) */
int mpi_nbc_reduce_scatter(int p, const void *sbuf, void *rbuf, const int *counts, bool is_block,
                           int block, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req);
int mpi_nbc_gather(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req);
int mpi_nbc_scatter(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req);
int mpi_nbc_allgather(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req);
int mpi_nbc_alltoall(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req);
int mpi_nbc_gatherv(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                    MPI_Comm comm, MPI_Request *req);
int mpi_nbc_scatterv(int p, const void *sbuf, const int scounts[], const int displs[],
                     MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                     MPI_Comm comm, MPI_Request *req);
int mpi_nbc_allgatherv(int p, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                       MPI_Request *req);
int mpi_nbc_alltoallv(int p, const void *sbuf, const int scounts[], const int sdispls[],
                      MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                      MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req);
int mpi_nbc_alltoallw(int p, const void *sbuf, const int scounts[], const int sdispls[],
                      const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                      const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                      MPI_Request *req);

/* ---- neighbourhood collectives (entry points: mpi_topo.c) ---------------- */

/* One block to move: count instances of t at buf. */
typedef struct mpi_nblk {
    char *buf;
    size_t count;
    const mpi_type *t;
} mpi_nblk;
/* MPI_Ineighbor_* and MPI_Neighbor_*_init: src/coll's neighbourhood exchange
 * (cr_build_neighbor, the schedule the blocking forms run) of blocks rb (from
 * each in-neighbour of n) and sb (to each out-neighbour), for a call that has
 * entered and checked everything (which: 0 allgather, 1 allgatherv, 2
 * alltoall, 3 alltoallv, 4 alltoallw, or'ed with MPI_NBC_PERSIST for the
 * persistent form). Returns an MPI code, already reported; does not leave the
 * call. */
int mpi_nbc_neighbor(cr_job *job, int which, MPI_Comm comm, mpi_comm *c, const cr_nbrs *n,
                     const mpi_nblk *rb, const mpi_nblk *sb, MPI_Request *req);

#endif
