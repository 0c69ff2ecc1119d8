/* MPI-IO inside courier (mpi_file.c, mpi_file_view.c, mpi_file_io.c,
 * mpi_file_coll.c): the file object and what those files share.
 *
 * A file is a POSIX file descriptor per rank on a private duplicate of the
 * communicator it was opened on (all collective traffic of the file runs on
 * that duplicate, never on the program's communicator). Its view is the
 * filetype flattened once, at MPI_File_set_view, into the runs of one
 * instance (offsets from the instance's start, increasing, adjacent runs
 * joined); the data stream of the view is those runs tiled every extent
 * bytes from disp. Positions (individual and shared pointers, explicit
 * offsets) count etypes of that stream.
 *
 * The work of a call (the I/O itself, collectives on the duplicate, PMPI
 * calls) runs without the engine lock; only the handle table and error
 * reports are touched under it. */
#ifndef COURIER_MPI_FILE_H
#define COURIER_MPI_FILE_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "mpi_impl.h"

#define K_FILE 0x70000000u
#define MF_SPARES 2 /* scratch buffers a file keeps: a staging buffer and a window */

/* Hints in use (MPI_File_get_info gives them back). Tri-state ones: 0
 * disable, 1 enable, 2 automatic. */
typedef struct mf_hints {
    long long cb_buffer_size; /* bytes an aggregator handles per round */
    int cb_nodes;             /* aggregators; 0: one per host */
    int cb_read, cb_write;    /* romio_cb_read / romio_cb_write */
    int ds_read, ds_write;    /* romio_ds_read / romio_ds_write (data sieving) */
    long long ind_rd_buffer_size, ind_wr_buffer_size;
    int striping_factor;     /* accepted, reported back; 0: not given */
    long long striping_unit; /* aligns the aggregators' file domains when given */
} mf_hints;

typedef struct mpi_file {
    bool used;
    int idx;
    int fd;
    char *name; /* the path opened (any "ufs:"-style prefix taken off) */
    int amode;
    MPI_Comm comm; /* private duplicate of the communicator opened on */
    int rank, size;
    MPI_Errhandler errh;
    mf_hints h;
    /* aggregators for collective buffering: comm ranks, naggs of them */
    int *aggs, naggs, nhosts; /* aggs: every rank, one per host first (see mf_aggs) */
    /* the view */
    MPI_Offset disp;
    MPI_Datatype etype, ftype; /* held: predefined handles, or duplicates */
    size_t esize;              /* bytes of one etype in the file */
    int nrun;                  /* runs of one filetype instance */
    MPI_Offset *roff;          /* run offsets from the instance's start */
    size_t *rlen, *rcum;       /* lengths; stream bytes before each run */
    size_t fsize;              /* data bytes of one instance */
    MPI_Offset fext;           /* its extent: instance k starts at disp + k * fext */
    char datarep[MPI_MAX_DATAREP_STRING];
    int rep;        /* MF_NATIVE, MF_EXTERNAL32, or MF_USER + index of a registered one */
    MPI_Offset pos; /* individual file pointer, in etypes */
    bool atomic;
    int shfd; /* the shared file pointer: 8 bytes in this side file, under fcntl locks ... */
    _Atomic long long *shmap; /* ... or mapped, when every rank is on this kernel (else NULL) */
    struct mf_cbufs *cb;      /* collective buffering's buffers, kept from call to call */
    /* scratch buffers kept from call to call (mf_scratch_get): each slot
     * holds one or is NULL, taken and given back by atomic exchange, so the
     * I/O thread and the program's thread never share one */
    _Atomic(struct mf_scratch *) spare[MF_SPARES];
    /* a split collective under way (begin called, end not yet): its access */
    bool split;
    struct mf_op *split_op;
    struct mf_async *aq;        /* the I/O thread of nonblocking accesses (mpi_file_io.c) */
    pthread_mutex_t lkmu, shmu; /* held with an fcntl lock of fd, of shfd (mf_lock) */
} mpi_file;

enum { MF_NATIVE = 0, MF_EXTERNAL32 = 1, MF_USER = 2 };

/* A registered data representation (MPI_Register_datarep; MPI_Register_datarep_c
 * sets rd_c/wr_c instead: at most one of rd and rd_c, of wr and wr_c, is set). */
typedef struct mf_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function *rd, *wr;
    MPI_Datarep_conversion_function_c *rd_c, *wr_c;
    MPI_Datarep_extent_function *ext;
    void *extra;
    MPI_Aint *psz; /* file bytes of each predefined type, as ext said (0: not asked yet) */
} mf_datarep;

/* What lives in mpi_st()->files: the handle table and the registered reps. */
typedef struct mpi_file_tab {
    mpi_file **f;
    int n;
    MPI_Errhandler null_errh; /* MPI_FILE_NULL's handler: for open and delete */
    mf_datarep *reps;
    int nreps;
} mpi_file_tab;

/* An error found while the lock was released: the class and what to say. */
typedef struct mf_err {
    int code;
    char msg[400];
} mf_err;
int mf_set_err(mf_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int mf_errno_class(int err); /* errno -> MPI_ERR_* */

/* A list of file pieces (absolute offset, length), in stream order. */
typedef struct mf_vec {
    MPI_Offset *off;
    size_t *len;
    size_t n, cap;
    size_t bytes; /* sum of len */
} mf_vec;
void mf_vec_add(mf_vec *v, MPI_Offset off, size_t len);
void mf_vec_free(mf_vec *v);

mpi_file_tab *mf_tab(void);
mpi_file *mf_get(MPI_File h); /* NULL: not a live file */
/* Report code on file h (MPI_FILE_NULL: the default handler) with the lock
 * held; the message names the call's file and rank. Returns code. */
int mf_fail(cr_job *job, MPI_File h, const char *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int mf_check(cr_job *job, const char *call, MPI_File h, mpi_file **out);
/* pread/pwrite of the whole range (mpi_file_view.c), over short transfers and EINTR:
 * bytes read, or -1 (errno); 0 or the errno of a write (ENOSPC for a write
 * of nothing). */
ssize_t mf_pread(int fd, char *p, size_t len, MPI_Offset off);
int mf_pwrite(int fd, const char *p, size_t len, MPI_Offset off);

/* Scratch buffers (mpi_file_view.c): the staging buffer of a packed or
 * converted stream, a data sieving window. mf_scratch_get gives n bytes (NULL:
 * out of memory), taken from the buffers f keeps when one is free and big
 * enough (f NULL: a fresh one, never kept); mf_scratch_put gives one back to
 * f (or frees it: f NULL, no free slot, or more than MF_SCRATCH_KEEP bytes);
 * NULL is ignored. Safe from the file's I/O thread and the program's at once.
 * mf_scratch_free frees those kept (at close). */
#define MF_SCRATCH_KEEP ((size_t)64 << 20)
char *mf_scratch_get(mpi_file *f, size_t n);
void mf_scratch_put(mpi_file *f, char *p);
void mf_scratch_free(mpi_file *f);

/* Views (mpi_file_view.c). */
void mf_view_default(mpi_file *f); /* byte stream from 0, "native" */
void mf_view_release(mpi_file *f);
/* The pieces of stream bytes [s, s + n) of f's view, appended to v. */
void mf_view_pieces(const mpi_file *f, MPI_Offset s, size_t n, mf_vec *v);
/* Stream bytes of the view that lie before file byte 'at'. */
MPI_Offset mf_view_stream_before(const mpi_file *f, MPI_Offset at);
/* Memory <-> stream for count instances of dt: bytes of the stream, and a
 * buffer holding them (write: filled from buf; *tmp set when it is not buf:
 * a scratch buffer of keep, given back with mf_scratch_put(keep, *tmp);
 * keep is f, or NULL where the access may outlive the file). */
int mf_to_stream(mpi_file *f, mpi_file *keep, const void *buf, int count, MPI_Datatype dt,
                 char **out, size_t *n, char **tmp, mf_err *e);
/* read: the buffer to read the stream into (buf itself, or *tmp, as above),
 * then mf_from_stream with the bytes actually read. */
int mf_stream_buf(mpi_file *f, mpi_file *keep, void *buf, int count, MPI_Datatype dt, char **out,
                  size_t *n, char **tmp, mf_err *e);
int mf_from_stream(mpi_file *f, void *buf, int count, MPI_Datatype dt, const char *in, size_t got,
                   mf_err *e);
/* Under representation rep (f->rep), if registered, ask its extent function (once each,
 * without the lock: it may call MPI) the file bytes of every predefined type
 * t is made of; MPI_ERR_CONVERSION when it fails. 0 for the others. */
int mf_rep_sizes(cr_job *job, int rep, const mpi_type *t, mf_err *e);
/* Bytes of one instance of t in the file's stream: its size ("native"), its
 * external32 size, or its size in a registered representation (after
 * mf_rep_sizes). */
size_t mf_fsize(const mpi_file *f, const mpi_type *t);
/* The status of an access of 'got' stream bytes of count dt. */
void mf_status(mpi_file *f, MPI_Datatype dt, size_t got, MPI_Status *st);
/* The program's memory as the stream, without a staging buffer: its runs in
 * stream order (iov[0..n)), and a cursor (run i, in bytes into it). */
typedef struct mf_mem {
    struct iovec *iov;
    size_t n, i, in;
} mf_mem;
/* Independent I/O of the pieces (data sieving where it pays); *done: stream
 * bytes transferred (a read stops at the end of the file). The stream is
 * data (v->bytes of it), or m's runs from its cursor (mf_pio_mem). */
int mf_pio(mpi_file *f, const mf_vec *v, char *data, bool write, size_t *done, mf_err *e);
int mf_pio_mem(mpi_file *f, const mf_vec *v, mf_mem *m, bool write, size_t *done, mf_err *e);

/* Locks of atomic mode, data sieving and the shared pointer: fcntl
 * byte-range locks on fd (f->fd or f->shfd), under the file's mutex for it
 * (which keeps out the other threads of this process). 0 or an errno; on an
 * error nothing is held. */
int mf_lock(mpi_file *f, int fd, bool write, MPI_Offset lo, MPI_Offset hi);
void mf_unlock(mpi_file *f, int fd, MPI_Offset lo, MPI_Offset hi);

/* Collective buffering (mpi_file_coll.c): every rank of the file calls it with
 * its pieces and its stream: data, or (m set) the runs of the program's
 * memory from the start (data then NULL for a rank without a stream: an
 * error in its part); *done as for mf_pio. */
int mf_coll_io(mpi_file *f, const mf_vec *v, char *data, mf_mem *m, bool write, size_t *done,
               mf_err *e);
void mf_coll_free(mpi_file *f); /* at close: the buffers kept */
/* Whether an _all access goes without collective buffering on every rank,
 * whatever its pieces (the hints, the ranks, the hosts say so): then each
 * rank does its part with mf_pio, as mf_coll_io would. */
bool mf_coll_indep(const mpi_file *f, bool write);

/* Nonblocking accesses (mpi_file_io.c): wait until the file's queued
 * accesses have run (without the engine lock: the I/O thread takes it);
 * mf_async_free also ends the thread (at close). */
void mf_async_drain(mpi_file *f);
void mf_async_free(mpi_file *f);

/* The shared file pointer (mpi_file.c): fetch it and add delta (in etypes). */
int mf_shared_add(mpi_file *f, MPI_Offset delta, MPI_Offset *old, mf_err *e);
int mf_shared_set(mpi_file *f, MPI_Offset v, mf_err *e);

#endif
