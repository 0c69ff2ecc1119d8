/* MPI-IO data access (MPI-3.1 §13.4): explicit offsets, individual and
 * shared file pointers, ordered access, blocking, nonblocking and split
 * collective forms, seeks and positions.
 *
 * Every access goes through access_do(): the arguments checked under the
 * lock, then without it: the program's buffer as the view's stream and
 * where it starts (acc_begin), the stream's file pieces and the I/O,
 * independent (mf_pio), or collective (mf_coll_io) unless the hints and the
 * hosts make it independent on every rank (mf_coll_indep) (acc_io).
 *
 * Invariants:
 *  - a blocking access moves the individual pointer by the etypes it
 *    transferred (a read that meets the end of the file: by what it read); the
 *    shared pointer moves by the etypes asked for, taken before the access
 *    under its lock (so concurrent _shared accesses never overlap);
 *    _ordered places the ranks' data in rank order, the shared pointer moved
 *    once by their sum;
 *  - a nonblocking access and a split collective's _begin do the checks,
 *    the memory side and the place in the call (the individual pointer
 *    moves then, by what is asked), and queue the rest to the file's I/O
 *    thread (struct mf_async), which runs the queue in program order; the
 *    request completes, or _end returns, once the thread has run it (in the
 *    simulated mode, or a view not "native", it runs in the call). Blocking
 *    collective calls on the file wait for the queue first, so the file's
 *    collectives keep program order on every rank;
 *  - a failing access changes no pointer, and reports through the file's
 *    handler with the call's name, the file and the rank. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mpi_check.h"
#include "mpi_file.h"

enum { AT, INDIV, SHARED, ORDERED };

typedef struct acc {
    const char *call;
    MPI_File fh;
    MPI_Offset offset;
    void *buf;
    int count;
    MPI_Datatype dt;
    bool write, coll;
    int where;
} acc;

static int acc_check(cr_job *job, const acc *a, mpi_file **fp)
{
    mpi_file *f;
    int rc = mf_check(job, a->call, a->fh, &f);
    if (rc) return rc;
    *fp = f;
    mpi_type *t = mpi_type_get(a->dt);
    if (a->count < 0)
        return mf_fail(job, a->fh, a->call, MPI_ERR_COUNT, "count %d is negative", a->count);
    if (!t)
        return mf_fail(job, a->fh, a->call, MPI_ERR_TYPE, "%#x is not a live datatype",
                       (unsigned)a->dt);
    if (!t->committed)
        return mf_fail(job, a->fh, a->call, MPI_ERR_TYPE,
                       "the datatype is not committed: call MPI_Type_commit");
    if (!a->buf && a->count && t->size)
        return mf_fail(job, a->fh, a->call, MPI_ERR_BUFFER, "buf is NULL");
    if (a->write && (f->amode & MPI_MODE_RDONLY))
        return mf_fail(job, a->fh, a->call, MPI_ERR_READ_ONLY,
                       "the file is open MPI_MODE_RDONLY: it cannot be written");
    if (!a->write && (f->amode & MPI_MODE_WRONLY))
        return mf_fail(job, a->fh, a->call, MPI_ERR_ACCESS,
                       "the file is open MPI_MODE_WRONLY: it cannot be read");
    if ((f->amode & MPI_MODE_SEQUENTIAL) && (a->where == AT || a->where == INDIV))
        return mf_fail(job, a->fh, a->call, MPI_ERR_UNSUPPORTED_OPERATION,
                       "the file is open MPI_MODE_SEQUENTIAL: only shared file pointer "
                       "accesses are allowed");
    if (a->where == AT && a->offset < 0)
        return mf_fail(job, a->fh, a->call, MPI_ERR_ARG, "offset %lld is negative",
                       (long long)a->offset);
    mf_err ue; /* a registered representation's sizes, asked before the stream is made */
    if (mf_rep_sizes(job, f->rep, t, &ue))
        return mf_fail(job, a->fh, a->call, ue.code, "%s", ue.msg);
    size_t bytes = mf_fsize(f, t) * (size_t)a->count;
    if (bytes && !f->fsize)
        return mf_fail(job, a->fh, a->call, MPI_ERR_ARG,
                       "the view's filetype holds no data, so this rank can access nothing "
                       "through it, but the call moves %zu bytes: give count 0 here, or set a "
                       "view whose filetype has data",
                       bytes);
    if (bytes % f->esize)
        return mf_fail(job, a->fh, a->call, MPI_ERR_TYPE,
                       "%d of this datatype is %zu bytes: not whole etypes of the view (%zu "
                       "bytes each)",
                       a->count, bytes, f->esize);
    return 0;
}

/* An access under way: what the call found (the stream, its place) and, once
 * it has run, its result. A nonblocking access or a split collective's begin
 * is queued to the file's I/O thread (struct mf_async); a blocking one runs
 * in the call. */
typedef struct mf_op {
    acc a;
    char *data, *tmp; /* the stream: the program's buffer, or tmp */
    mpi_file *keep;   /* tmp is a scratch buffer of this file (NULL: of none) */
    mf_mem m;         /* or the program's memory as runs (m.iov set): no staging */
    size_t n, got;    /* its bytes; those transferred */
    MPI_Offset s;     /* where it starts, in etypes (_ordered: found when it runs) */
    mpi_type *t;      /* the memory type: held (refs) by a queued access */
    int rc;
    mf_err e;
    MPI_Status st;
    atomic_bool done; /* set, under the engine lock, when it has run */
    bool reported;    /* its error went through the file's handler */
    struct mf_op *next;
} mf_op;

/* The file's I/O thread and its queue, in program order. The thread exists
 * while the queue holds work and MF_LINGER_MS after (so an idle rank has no
 * extra thread for long, which the watchdog would count as one that may
 * still send); the next access after it ended joins it. */
struct mf_async {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* an access ended, or the thread did */
    mf_op *head, *tail;
    bool busy;     /* the thread runs an access taken off the queue */
    bool running;  /* the thread is alive and will look at the queue again */
    bool joinable; /* a thread was started and not joined yet */
    bool closing;  /* the file closes: the thread ends once the queue is empty */
    pthread_t th;
};

/* Runs of the program's memory, for mem_runs. */
static void mem_run_cb(void *ctx, ptrdiff_t off, size_t len)
{
    mf_op *o = ctx;
    o->m.iov[o->m.n++] = (struct iovec){(char *)o->a.buf + off, len};
}

/* An access of "native" data through a non-contiguous memory type whose
 * runs are long (MF_MEM_RUN bytes and more on average) reads and writes the
 * program's memory in place (mf_pio_mem: preadv/pwritev, or copies to and
 * from a sieving window), instead of packing it to a staging buffer of the
 * whole access first: IOR's strided-view rows (16 MiB of 4 KiB runs a
 * call) faulted a fresh 16 MiB in and copied it. A collective one hands
 * the runs to mf_coll_io, which packs them only if collective buffering
 * takes the access. Shorter runs are packed (a copy each beats an iovec
 * each). true: o->m is set. */
#define MF_MEM_RUN 512
static void run_count_cb(void *ctx, ptrdiff_t off, size_t len)
{
    (void)off, (void)len;
    ++*(size_t *)ctx;
}

static bool mem_runs(mpi_file *f, mf_op *o)
{
    const acc *a = &o->a;
    mpi_type *t = mpi_type_get(a->dt);
    if (f->rep != MF_NATIVE || t->contig || !a->count || !t->size) return false;
    size_t one = 0; /* runs of one instance (count instances: at most count times as many) */
    mpi_type_runs(t, 1, run_count_cb, &one);
    if (t->size < MF_MEM_RUN * one) return false;
    o->m.iov = malloc(one * (size_t)a->count * sizeof *o->m.iov);
    if (!o->m.iov) return false;
    mpi_type_runs(t, (size_t)a->count, mem_run_cb, o);
    o->n = t->size * (size_t)a->count;
    o->data = a->buf; /* nothing to unpack after a read */
    return true;
}

/* The memory side, and the place in the stream but for _ordered (whose place
 * needs every rank: found when it runs). An error stops an independent
 * access here; a collective one still takes its part, empty. */
static int acc_begin(mpi_file *f, mf_op *o, bool queued)
{
    const acc *a = &o->a;
    int rc =
        mem_runs(f, o) ? 0
        : a->write
            ? mf_to_stream(f, o->keep, a->buf, a->count, a->dt, &o->data, &o->n, &o->tmp, &o->e)
            : mf_stream_buf(f, o->keep, a->buf, a->count, a->dt, &o->data, &o->n, &o->tmp, &o->e);
    if (rc && !a->coll) return rc;
    if (rc) o->n = 0;
    MPI_Offset ne = (MPI_Offset)(o->n / f->esize);
    switch (a->where) {
    case AT:
        o->s = a->offset;
        break;
    case INDIV: /* a queued access moves the pointer now, by what it asks for */
        o->s = f->pos;
        if (queued && !rc) f->pos += ne;
        break;
    case SHARED:
        if (!rc) rc = mf_shared_add(f, ne, &o->s, &o->e);
        break;
    }
    return rc;
}

/* The access itself, without the lock: o->rc and o->got. */
static void acc_io(mpi_file *f, mf_op *o, bool queued)
{
    const acc *a = &o->a;
    int rc = o->rc;
    if (a->where == ORDERED) {
        long long mine = (long long)(o->n / f->esize), *all = malloc((size_t)f->size * sizeof *all);
        long long base = 0, tot = 0;
        if (!all) cr_fatal(cr_job_get(), a->call, "out of memory");
        PMPI_Allgather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, f->comm);
        for (int r = 0; r < f->size; r++) tot += all[r];
        if (f->rank == 0) {
            MPI_Offset old = 0;
            mf_err e0;
            base = mf_shared_add(f, tot, &old, &e0) ? -1 : old;
        }
        PMPI_Bcast(&base, 1, MPI_LONG_LONG, 0, f->comm);
        if (base < 0 && !rc)
            rc = mf_set_err(&o->e, MPI_ERR_IO, "rank 0 could not update the shared file pointer");
        o->s = base;
        for (int r = 0; r < f->rank; r++) o->s += all[r];
        free(all);
    }
    mf_vec v = {0};
    o->got = 0;
    if (!rc) mf_view_pieces(f, o->s * (MPI_Offset)f->esize, o->n, &v);
    bool indep = !a->coll || mf_coll_indep(f, a->write);
    /* a collective access that goes independent still starts together, as
     * collective buffering's all-gather would have it: programs (and
     * ROMIO, whose collective reads always exchange their offsets first)
     * take an _all call as a point every rank has reached */
    if (a->coll && indep) PMPI_Barrier(f->comm);
    if (!indep) {
        mf_err e2 = {0};
        int r2 = mf_coll_io(f, &v, rc ? NULL : o->data, rc || !o->m.iov ? NULL : &o->m, a->write,
                            &o->got, &e2);
        if (!rc && r2) {
            o->e = e2;
            rc = r2;
        }
    } else if (!rc && o->m.iov)
        rc = mf_pio_mem(f, &v, &o->m, a->write, &o->got, &o->e);
    else if (!rc)
        rc = mf_pio(f, &v, o->data, a->write, &o->got, &o->e);
    mf_vec_free(&v);
    if (!rc && !a->write) {
        if (queued) { /* native (see can_queue): the held type, not the handle */
            if (o->data != a->buf && o->got)
                mpi_unpack_data(o->t, o->data, o->got, a->buf, (size_t)a->count);
        } else
            rc = mf_from_stream(f, a->buf, a->count, a->dt, o->data, o->got, &o->e);
    }
    o->rc = rc;
    if (queued) { /* native: the status without looking up the handle */
        o->st = (MPI_Status){.MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG};
        o->st.cr_bytes = (long long)o->got;
    } else
        mf_status(f, a->dt, o->got, &o->st);
}

/* Run the queue; then, on the file's thread (linger), wait up to
 * MF_LINGER_MS for more before ending (a program that starts an access every
 * step does not pay a thread's start each time). */
#define MF_LINGER_MS 100
static void io_run(mpi_file *f, bool linger)
{
    struct mf_async *q = f->aq;
    cr_job *job = cr_job_get();
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->head) {
            mf_op *o = q->head;
            q->head = o->next;
            if (!q->head) q->tail = NULL;
            q->busy = true;
            pthread_mutex_unlock(&q->mu);
            acc_io(f, o, true);
            cr_lock(job); /* a waiter looks at done under the lock: no wake-up lost */
            atomic_store(&o->done, true);
            cr_unlock(job);
            cr_wake_self(job); /* o may be freed from here on */
            pthread_mutex_lock(&q->mu);
            q->busy = false;
            pthread_cond_broadcast(&q->cv);
        }
        if (!linger || q->closing) break;
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += MF_LINGER_MS * 1000000L;
        dl.tv_sec += dl.tv_nsec / 1000000000L;
        dl.tv_nsec %= 1000000000L;
        if (pthread_cond_timedwait(&q->cv, &q->mu, &dl) == ETIMEDOUT && !q->head) break;
    }
    q->running = false;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static void *io_thread(void *arg)
{
    /* courier's own thread, which calls MPI for queued collective accesses */
    mpi_check_own_thread(cr_job_get());
    sigset_t all; /* signals are the program's threads' */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    io_run(arg, true);
    return NULL;
}

/* Queue o to the file's I/O thread (started when none runs). */
static void enqueue(mpi_file *f, mf_op *o)
{
    if (!f->aq) {
        if (!(f->aq = calloc(1, sizeof *f->aq))) cr_fatal(cr_job_get(), o->a.call, "out of memory");
        pthread_mutex_init(&f->aq->mu, NULL);
        pthread_cond_init(&f->aq->cv, NULL);
    }
    struct mf_async *q = f->aq;
    pthread_mutex_lock(&q->mu);
    if (q->tail)
        q->tail->next = o;
    else
        q->head = o;
    q->tail = o;
    bool inline_run = false;
    if (q->running)
        pthread_cond_broadcast(&q->cv); /* a lingering thread takes it */
    else {
        if (q->joinable) pthread_join(q->th, NULL);
        q->running = true;
        q->joinable = pthread_create(&q->th, NULL, io_thread, f) == 0;
        inline_run = !q->joinable; /* no thread to be had: run it here */
    }
    pthread_mutex_unlock(&q->mu);
    if (inline_run) io_run(f, false);
}

void mf_async_drain(mpi_file *f)
{
    struct mf_async *q = f->aq;
    if (!q) return;
    pthread_mutex_lock(&q->mu);
    while (q->head || q->busy) pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

void mf_async_free(mpi_file *f)
{
    struct mf_async *q = f->aq;
    if (!q) return;
    mf_async_drain(f);
    pthread_mutex_lock(&q->mu);
    q->closing = true;
    pthread_cond_broadcast(&q->cv);
    while (q->running) pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
    if (q->joinable) pthread_join(q->th, NULL);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q);
    f->aq = NULL;
}

/* A queued access's end, with the lock: its error through the file's handler
 * (once), its status; release with op_free. */
static int op_result(cr_job *job, mf_op *o, MPI_Status *st)
{
    if (o->rc && !o->reported) {
        o->reported = true;
        o->rc = mf_fail(job, o->a.fh, o->a.call, o->rc, "%s", o->e.msg);
    }
    *st = o->st;
    st->MPI_ERROR = o->rc;
    return o->rc;
}

static void op_free(mf_op *o)
{
    if (o->t) mpi_type_unref(o->t->idx);
    mf_scratch_put(o->keep, o->tmp);
    free(o->m.iov);
    free(o);
}

/* The request of a queued access: complete once the I/O thread has run it. */
static bool req_test(cr_job *job, void *obj, MPI_Status *st)
{
    mf_op *o = obj;
    if (!atomic_load(&o->done)) return false;
    op_result(job, o, st);
    return true;
}
static void req_free(cr_job *job, void *obj)
{
    (void)job;
    op_free(obj);
}
static const mpi_ext_ops mf_req_ops = {
    .what = "MPI_File_i*", .test = req_test, .free = req_free, .local = true};

/* Whether an access may be queued to the I/O thread: not in the simulated
 * mode (its clock is the rank's own thread), and the "native" representation
 * (a conversion would need the datatype's handle, which the program may free
 * once the call has returned). Otherwise it runs in the call, complete. */
static bool can_queue(cr_job *job, const mpi_file *f)
{
    return !job->vt.base && f->rep == MF_NATIVE;
}

/* An access: blocking (st), nonblocking (req), or a split collective's begin
 * (split). */
static int access_do(acc a, MPI_Status *st, MPI_Request *req, bool split)
{
    cr_job *job = mpi_enter(a.call);
    mpi_file *f = NULL;
    int rc = acc_check(job, &a, &f);
    if (!rc && req == NULL && split && f->split)
        rc = mf_fail(job, a.fh, a.call, MPI_ERR_OTHER,
                     "a split collective is already under way on this file: end it first");
    if (rc) return mpi_leave(job, rc);
    bool queued = (req || split) && can_queue(job, f);
    mf_op *o = calloc(1, sizeof *o);
    if (!o) cr_fatal(job, a.call, "out of memory");
    o->a = a;
    /* a blocking access ends before the call returns, with the file still
     * open: its staging buffer may be the file's, kept for the next call */
    if (!req && !split) o->keep = f;
    if (queued) {
        if (!job->multi) cr_multi_begin(job); /* the I/O thread calls MPI too */
        o->t = mpi_type_get(a.dt);
        o->t->refs++;
    }
    cr_unlock(job);
    /* a collective one, or one that is not queued, waits for the queue
     * (collectives on the file's communicator go in program order) */
    if (!queued && (a.coll || a.where == ORDERED)) mf_async_drain(f);
    rc = o->rc = acc_begin(f, o, queued);
    if (queued && !(rc && !a.coll)) {
        if (!split) { /* an error found already is the request's, as the I/O's would be */
            cr_lock(job);
            rc = mpi_request_ext(job, f->comm, &mf_req_ops, o, req);
            cr_unlock(job);
            if (rc) { /* not queued: no request to complete it */
                mf_async_drain(f);
                cr_lock(job);
                op_free(o);
                return mpi_leave(job, rc);
            }
        }
        if (split) {
            f->split = true;
            f->split_op = o;
        }
        enqueue(f, o);
        cr_lock(job);
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (!rc || a.coll) acc_io(f, o, false);
    if (a.where == INDIV && !o->rc) f->pos += (MPI_Offset)(o->got / f->esize);
    cr_lock(job);
    MPI_Status mine;
    rc = op_result(job, o, &mine);
    mine.MPI_ERROR = MPI_SUCCESS;
    if (split) {
        f->split = true;
        f->split_op = o; /* done already */
        atomic_store(&o->done, true);
        return mpi_leave(job, rc);
    }
    if (st) {
        int keep = st->MPI_ERROR;
        *st = mine;
        st->MPI_ERROR = keep;
    }
    if (req && !rc) { /* run in the call: a request complete from the start */
        atomic_store(&o->done, true);
        rc = mpi_request_ext(job, f->comm, &mf_req_ops, o, req);
        if (!rc) return mpi_leave(job, rc);
    }
    op_free(o);
    return mpi_leave(job, rc);
}

static int split_end(const char *call, MPI_File fh, MPI_Status *st)
{
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && !f->split)
        rc = mf_fail(job, fh, call, MPI_ERR_OTHER,
                     "no split collective is under way on this file: call the _begin form first");
    if (rc) return mpi_leave(job, rc);
    mf_op *o = f->split_op;
    f->split = false;
    f->split_op = NULL;
    if (!atomic_load(&o->done)) {
        cr_unlock(job);
        mf_async_drain(f);
        cr_lock(job);
    }
    MPI_Status mine;
    rc = op_result(job, o, &mine);
    if (st) {
        int keep = st->MPI_ERROR;
        *st = mine;
        st->MPI_ERROR = keep;
    }
    op_free(o);
    return mpi_leave(job, rc);
}

#define ACC(name, where, write, coll, off)                                                         \
    (acc)                                                                                          \
    {                                                                                              \
        "MPI_File_" name, fh, off, (void *)buf, count, datatype, write, coll, where                \
    }

/* ---- explicit offsets ---------------------------------------------------------------- */

PMPI_WEAK(File_read_at);
int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return access_do(ACC("read_at", AT, false, false, offset), status, NULL, false);
}

PMPI_WEAK(File_read_at_all);
int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return access_do(ACC("read_at_all", AT, false, true, offset), status, NULL, false);
}

PMPI_WEAK(File_write_at);
int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype datatype, MPI_Status *status)
{
    return access_do(ACC("write_at", AT, true, false, offset), status, NULL, false);
}

PMPI_WEAK(File_write_at_all);
int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                           MPI_Datatype datatype, MPI_Status *status)
{
    return access_do(ACC("write_at_all", AT, true, true, offset), status, NULL, false);
}

PMPI_WEAK(File_iread_at);
int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                       MPI_Request *request)
{
    return access_do(ACC("iread_at", AT, false, false, offset), NULL, request, false);
}

PMPI_WEAK(File_iwrite_at);
int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                        MPI_Datatype datatype, MPI_Request *request)
{
    return access_do(ACC("iwrite_at", AT, true, false, offset), NULL, request, false);
}

PMPI_WEAK(File_iread_at_all);
int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                           MPI_Datatype datatype, MPI_Request *request)
{
    return access_do(ACC("iread_at_all", AT, false, true, offset), NULL, request, false);
}

PMPI_WEAK(File_iwrite_at_all);
int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                            MPI_Datatype datatype, MPI_Request *request)
{
    return access_do(ACC("iwrite_at_all", AT, true, true, offset), NULL, request, false);
}

/* ---- individual file pointers ---------------------------------------------------------- */

PMPI_WEAK(File_read);
int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_do(ACC("read", INDIV, false, false, 0), status, NULL, false);
}

PMPI_WEAK(File_read_all);
int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_do(ACC("read_all", INDIV, false, true, 0), status, NULL, false);
}

PMPI_WEAK(File_write);
int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                    MPI_Status *status)
{
    return access_do(ACC("write", INDIV, true, false, 0), status, NULL, false);
}

PMPI_WEAK(File_write_all);
int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Status *status)
{
    return access_do(ACC("write_all", INDIV, true, true, 0), status, NULL, false);
}

PMPI_WEAK(File_iread);
int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return access_do(ACC("iread", INDIV, false, false, 0), NULL, request, false);
}

PMPI_WEAK(File_iwrite);
int PMPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                     MPI_Request *request)
{
    return access_do(ACC("iwrite", INDIV, true, false, 0), NULL, request, false);
}

PMPI_WEAK(File_iread_all);
int PMPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return access_do(ACC("iread_all", INDIV, false, true, 0), NULL, request, false);
}

PMPI_WEAK(File_iwrite_all);
int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                         MPI_Request *request)
{
    return access_do(ACC("iwrite_all", INDIV, true, true, 0), NULL, request, false);
}

/* ---- shared file pointers ---------------------------------------------------------------- */

PMPI_WEAK(File_read_shared);
int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return access_do(ACC("read_shared", SHARED, false, false, 0), status, NULL, false);
}

PMPI_WEAK(File_write_shared);
int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return access_do(ACC("write_shared", SHARED, true, false, 0), status, NULL, false);
}

PMPI_WEAK(File_iread_shared);
int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                           MPI_Request *request)
{
    return access_do(ACC("iread_shared", SHARED, false, false, 0), NULL, request, false);
}

PMPI_WEAK(File_iwrite_shared);
int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    return access_do(ACC("iwrite_shared", SHARED, true, false, 0), NULL, request, false);
}

PMPI_WEAK(File_read_ordered);
int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return access_do(ACC("read_ordered", ORDERED, false, true, 0), status, NULL, false);
}

PMPI_WEAK(File_write_ordered);
int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return access_do(ACC("write_ordered", ORDERED, true, true, 0), status, NULL, false);
}

/* ---- split collectives ---------------------------------------------------------------------- */

PMPI_WEAK(File_read_at_all_begin);
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                MPI_Datatype datatype)
{
    return access_do(ACC("read_at_all_begin", AT, false, true, offset), NULL, NULL, true);
}

PMPI_WEAK(File_read_at_all_end);
int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_read_at_all_end", fh, status);
}

PMPI_WEAK(File_write_at_all_begin);
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                 MPI_Datatype datatype)
{
    return access_do(ACC("write_at_all_begin", AT, true, true, offset), NULL, NULL, true);
}

PMPI_WEAK(File_write_at_all_end);
int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_write_at_all_end", fh, status);
}

PMPI_WEAK(File_read_all_begin);
int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return access_do(ACC("read_all_begin", INDIV, false, true, 0), NULL, NULL, true);
}

PMPI_WEAK(File_read_all_end);
int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_read_all_end", fh, status);
}

PMPI_WEAK(File_write_all_begin);
int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    return access_do(ACC("write_all_begin", INDIV, true, true, 0), NULL, NULL, true);
}

PMPI_WEAK(File_write_all_end);
int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_write_all_end", fh, status);
}

PMPI_WEAK(File_read_ordered_begin);
int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return access_do(ACC("read_ordered_begin", ORDERED, false, true, 0), NULL, NULL, true);
}

PMPI_WEAK(File_read_ordered_end);
int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_read_ordered_end", fh, status);
}

PMPI_WEAK(File_write_ordered_begin);
int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    return access_do(ACC("write_ordered_begin", ORDERED, true, true, 0), NULL, NULL, true);
}

PMPI_WEAK(File_write_ordered_end);
int PMPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_write_ordered_end", fh, status);
}

/* ---- seeks and positions ----------------------------------------------------------------------
 */

/* The new position (etypes) of a seek from 'cur', or -1. */
static MPI_Offset seek_to(mpi_file *f, MPI_Offset cur, MPI_Offset offset, int whence)
{
    MPI_Offset base = whence == MPI_SEEK_SET ? 0 : cur;
    if (whence == MPI_SEEK_END) {
        struct stat sb;
        MPI_Offset size = fstat(f->fd, &sb) == 0 ? sb.st_size : 0;
        MPI_Offset s = mf_view_stream_before(f, size);
        base = (s + (MPI_Offset)f->esize - 1) / (MPI_Offset)f->esize;
    }
    MPI_Offset to = base + offset;
    return to < 0 ? -1 : to;
}

static int seek_check(cr_job *job, const char *call, MPI_File fh, int whence, mpi_file **f)
{
    int rc = mf_check(job, call, fh, f);
    if (!rc && whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        rc = mf_fail(job, fh, call, MPI_ERR_ARG,
                     "whence %d is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", whence);
    return rc;
}

PMPI_WEAK(File_seek);
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *call = "MPI_File_seek";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = seek_check(job, call, fh, whence, &f);
    if (!rc && (f->amode & MPI_MODE_SEQUENTIAL))
        rc = mf_fail(job, fh, call, MPI_ERR_UNSUPPORTED_OPERATION,
                     "the file is open MPI_MODE_SEQUENTIAL");
    if (rc) return mpi_leave(job, rc);
    MPI_Offset to = seek_to(f, f->pos, offset, whence);
    if (to < 0)
        return mpi_leave(job, mf_fail(job, fh, call, MPI_ERR_ARG,
                                      "the seek ends before the view's start (offset %lld)",
                                      (long long)offset));
    f->pos = to;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_get_position);
int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    const char *call = "MPI_File_get_position";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && !offset) rc = mf_fail(job, fh, call, MPI_ERR_ARG, "offset is NULL");
    if (rc) return mpi_leave(job, rc);
    *offset = f->pos;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_get_byte_offset);
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    const char *call = "MPI_File_get_byte_offset";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && (!disp || offset < 0))
        rc = mf_fail(job, fh, call, MPI_ERR_ARG, disp ? "offset %lld is negative" : "disp is NULL",
                     (long long)offset);
    if (rc) return mpi_leave(job, rc);
    mf_vec v = {0};
    mf_view_pieces(f, offset * (MPI_Offset)f->esize, 1, &v);
    *disp = v.n ? v.off[0] : f->disp; /* (an empty filetype reaches no byte) */
    mf_vec_free(&v);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_seek_shared);
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *call = "MPI_File_seek_shared";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = seek_check(job, call, fh, whence, &f);
    if (rc) return mpi_leave(job, rc);
    cr_unlock(job);
    mf_async_drain(f);
    mf_err e = {0};
    long long to = 0;
    PMPI_Barrier(f->comm); /* every access through the old position is done */
    if (f->rank == 0) {
        MPI_Offset cur = 0;
        rc = mf_shared_add(f, 0, &cur, &e);
        to = rc ? -2 : seek_to(f, cur, offset, whence);
        if (to >= 0) rc = mf_shared_set(f, to, &e);
    }
    PMPI_Bcast(&to, 1, MPI_LONG_LONG, 0, f->comm);
    cr_lock(job);
    if (to == -1)
        return mpi_leave(job, mf_fail(job, fh, call, MPI_ERR_ARG,
                                      "the seek ends before the view's start (offset %lld)",
                                      (long long)offset));
    if (to == -2 || rc)
        return mpi_leave(job, mf_fail(job, fh, call, e.code ? e.code : MPI_ERR_IO, "%s",
                                      e.code ? e.msg : "rank 0 could not move the pointer"));
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_get_position_shared);
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    const char *call = "MPI_File_get_position_shared";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && !offset) rc = mf_fail(job, fh, call, MPI_ERR_ARG, "offset is NULL");
    if (rc) return mpi_leave(job, rc);
    mf_err e = {0};
    if (mf_shared_add(f, 0, offset, &e))
        return mpi_leave(job, mf_fail(job, fh, call, e.code, "%s", e.msg));
    return mpi_leave(job, MPI_SUCCESS);
}
