/* The builders of the nonblocking and persistent collectives, shared by
 * mpi_nbc.c (the schedules, their requests, the intracommunicator forms) and
 * mpi_nbc_inter.c (the intercommunicator forms): the schedule object and the
 * steps a builder takes (mpi_nbc.c's, described there).
 *
 * Invariants: only these two files include it; a builder (mpi_cargs, "nb")
 * has entered the call (begin) and leaves it through mpi_nb_launch or
 * mpi_nb_done exactly once. */
#ifndef COURIER_MPI_NBC_IMPL_H
#define COURIER_MPI_NBC_IMPL_H

#include <limits.h>

#include "mpi_nbc.h"

typedef mpi_cargs nb;  /* s: the schedule under construction; seq once taken */
typedef mpi_vlay vlay; /* mpi_collchk.c */

/* At completion: 'bytes' at 'from' go to 'to', unpacked as 'count' instances of
 * datatype 'type' (an index holding a reference), or copied when type < 0. */
typedef struct nfin {
    int type;
    const char *from;
    size_t bytes;
    void *to;
    size_t count;
} nfin;

/* A user operation: the wrapper's context (mpi_redop fills x). */
typedef struct nuser {
    mpi_opctx x;
    size_t ext;
    int type; /* index holding a reference, or -1 */
} nuser;

typedef struct nbc {
    struct nbc *next; /* in N.active */
    int kind;         /* index in nbc_ops */
    cr_sched s;       /* the collective (src/coll); its o and trunc are ours */
    nuser u;          /* a reduction by a user operation */
    nfin *fin;        /* at completion */
    int nfin, fincap;
    nfin *pre; /* at each start: from the user's buffer 'from' packed (or copied) to 'to' */
    int npre, precap;
    /* MPI_Comm_idup: the parent's members, the map reduced, and where the new
     * handle goes (made at completion) */
    int *iranks, isize, ime, iword;
    int *irranks, irsize; /* an intercommunicator's remote group */
    long *imap;
    uint64_t ireserved; /* pairs of word iword reserved here until completion */
    MPI_Comm *inew, iparent;
    MPI_Errhandler ierrh;
    cr_trunc trunc; /* a message longer than its receive: MPI_ERR_TRUNCATE at completion */
    bool done, active;
    bool persist; /* MPI_*_init's: started again and again, kept until its request is freed */
} nbc;

/* ---- the builders' steps (mpi_nbc.c) ------------------------------------ */

/* Release a failed call's schedule (rc not 0) and leave the call: rc. */
int mpi_nb_done(nb *b, int rc);
/* Memory of the schedule (freed with it). */
void *mpi_nb_alloc(nb *b, size_t len);
/* The count a nonblocking or persistent collective on b's communicator takes
 * its sequence number from: the group's nbseq (ig's on an intercommunicator),
 * or under --check=coll its seq, shared with the blocking ones (mpi_nbc.c). */
uint32_t *mpi_nb_counter(const nb *b);
/* The collective's sequence number, taken at the first use. */
uint32_t mpi_nb_seq(nb *b);
/* At completion / at each start: see their definitions. */
void mpi_nb_fin(nb *b, mpi_type *t, const void *from, size_t bytes, void *to, size_t count);
void mpi_nb_pre(nb *b, mpi_type *t, const void *from, size_t count, void *to, size_t bytes);
/* The schedule is built: make its request, start it, leave the call. */
int mpi_nb_launch(nb *b, MPI_Request *req);
/* A side's bytes: packed at each start (in), or unpacked at completion (out). */
const char *mpi_nb_bytes_in(nb *b, const mpi_type *t, const void *buf, size_t count);
char *mpi_nb_bytes_out(nb *b, mpi_type *t, void *buf, size_t count);
/* The reduction of (op, t) in the schedule. */
int mpi_nb_redop(nb *b, MPI_Op op, mpi_type *t, size_t count, bool *packed, size_t *n);
/* The v forms' layouts: checked and made, packed at each start, where blocks arrive. */
int mpi_nb_vlay_make(nb *b, vlay *v, const mpi_type *t, const int *counts, const int *displs,
                     const char *what);
void mpi_nb_vlay_pack(nb *b, const vlay *v, mpi_type *t, const void *buf, const int *counts,
                      const int *displs, char *out, int np);
char *mpi_nb_vlay_out(nb *b, const vlay *v, mpi_type *t, void *buf, const int *counts,
                      const int *displs, int np);

/* ---- the intercommunicator forms (mpi_nbc_inter.c) ----------------------- */

/* Each is called by its mpi_nbc_* entry point once begin() has entered the
 * call on an intercommunicator, and leaves it. */
cr_inter mpi_nbx_of(const nb *b); /* the layer's view of the intercommunicator */
int mpi_nbx_barrier(nb *b, MPI_Request *req);
int mpi_nbx_bcast(nb *b, void *buf, int count, MPI_Datatype dt, int root, MPI_Request *req);
/* gather (rcounts NULL: rcount each) and gatherv */
int mpi_nbx_gather(nb *b, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                   MPI_Request *req);
/* scatter (scounts NULL: scount each) and scatterv */
int mpi_nbx_scatter(nb *b, const void *sbuf, int scount, const int *scounts, const int *displs,
                    MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                    MPI_Request *req);
/* allgather (rcounts NULL: rcount each) and allgatherv */
int mpi_nbx_allgather(nb *b, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype,
                      MPI_Request *req);
/* alltoall (counts NULL: scount/rcount each) and alltoallv */
int mpi_nbx_alltoall(nb *b, const void *sbuf, int scount, const int *scounts, const int *sdispls,
                     MPI_Datatype stype, void *rbuf, int rcount, const int *rcounts,
                     const int *rdispls, MPI_Datatype rtype, MPI_Request *req);
/* reduce (root given), allreduce (root MPI_NBX_ALL) */
#define MPI_NBX_ALL INT_MIN /* no rank, MPI_ROOT or MPI_PROC_NULL */
int mpi_nbx_reduce(nb *b, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   int root, MPI_Request *req);
/* reduce_scatter (counts: one per local member) and _block (counts NULL) */
int mpi_nbx_reduce_scatter(nb *b, const void *sbuf, void *rbuf, const int *counts, bool is_block,
                           int block, MPI_Datatype dt, MPI_Op op, MPI_Request *req);

#endif
