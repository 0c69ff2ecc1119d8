/* MPI-IO data access (MPI-3.1 §13.4): explicit offsets, individual and
 * shared file pointers, ordered access, blocking, nonblocking and split
 * collective forms, seeks and positions.
 *
 * Every access goes through access(): the arguments checked under the lock,
 * then without it: where the access starts in the view's stream, the
 * program's buffer as that stream, the stream's file pieces, and the I/O,
 * independent (mf_pio) or collective (mf_coll_io).
 *
 * Invariants:
 *  - the individual pointer moves by the etypes the access transferred (a
 *    read that meets the end of the file moves it by what it read); the
 *    shared pointer moves by the etypes asked for, taken before the access
 *    under its lock (so concurrent _shared accesses never overlap);
 *    _ordered places the ranks' data in rank order, the shared pointer moved
 *    once by their sum;
 *  - nonblocking accesses are done in the call itself: the request they
 *    return is already complete, and MPI_Wait/MPI_Test give its status (a
 *    collective one, _all, still needs every rank to call it, as any
 *    collective does); a split collective does its work in _begin, and _end
 *    returns its status;
 *  - a failing access changes no pointer, and reports through the file's
 *    handler with the call's name, the file and the rank. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    size_t bytes = (f->rep == MF_EXTERNAL32 ? t->xsize : t->size) * (size_t)a->count;
    if (bytes % f->esize)
        return mf_fail(job, a->fh, a->call, MPI_ERR_TYPE,
                       "%d of this datatype is %zu bytes: not whole etypes of the view (%zu "
                       "bytes each)",
                       a->count, bytes, f->esize);
    return 0;
}

/* The access, without the lock. *got: stream bytes transferred. A rank that
 * fails before its I/O still takes its part, empty, in a collective one. */
static int acc_run(mpi_file *f, const acc *a, size_t *got, mf_err *e)
{
    char *data = NULL, *tmp = NULL;
    size_t n = 0;
    *got = 0;
    int rc = a->write ? mf_to_stream(f, a->buf, a->count, a->dt, &data, &n, &tmp, e)
                      : mf_stream_buf(f, a->buf, a->count, a->dt, &data, &n, &tmp, e);
    if (rc && !a->coll) {
        free(tmp);
        return rc;
    }
    if (rc) n = 0;
    MPI_Offset ne = (MPI_Offset)(n / f->esize), s = 0;
    switch (a->where) {
    case AT:
        s = a->offset;
        break;
    case INDIV:
        s = f->pos;
        break;
    case SHARED:
        rc = mf_shared_add(f, ne, &s, e);
        break;
    case ORDERED: {
        long long mine = ne, *all = malloc((size_t)f->size * sizeof *all), base = 0, tot = 0;
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
            rc = mf_set_err(e, MPI_ERR_IO, "rank 0 could not update the shared file pointer");
        s = base;
        for (int r = 0; r < f->rank; r++) s += all[r];
        free(all);
        break;
    }
    }
    mf_vec v = {0};
    if (!rc) mf_view_pieces(f, s * (MPI_Offset)f->esize, n, &v);
    if (a->coll) {
        mf_err e2 = {0};
        int r2 = mf_coll_io(f, &v, rc ? NULL : data, a->write, got, &e2);
        if (!rc && r2) {
            *e = e2;
            rc = r2;
        }
    } else if (!rc)
        rc = mf_pio(f, &v, data, a->write, got, e);
    mf_vec_free(&v);
    if (!rc && !a->write) rc = mf_from_stream(f, a->buf, a->count, a->dt, data, *got, e);
    free(tmp);
    if (!rc && a->where == INDIV) f->pos += (MPI_Offset)(*got / f->esize);
    return rc;
}

/* The request of a nonblocking access: complete from the start. */
static bool req_test(cr_job *job, void *obj, MPI_Status *st)
{
    (void)job;
    *st = *(MPI_Status *)obj;
    return true;
}
static void req_free(cr_job *job, void *obj)
{
    (void)job;
    free(obj);
}
const mpi_ext_ops mf_req_ops = {.what = "MPI_File_i*", .test = req_test, .free = req_free};

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
    cr_unlock(job);
    mf_err e = {0};
    size_t got = 0;
    rc = acc_run(f, &a, &got, &e);
    MPI_Status mine;
    mf_status(f, a.dt, got, &mine);
    cr_lock(job);
    if (rc) rc = mf_fail(job, a.fh, a.call, rc, "%s", e.msg);
    if (split) {
        f->split = true;
        f->split_rc = rc;
        f->split_st = mine;
        return mpi_leave(job, rc);
    }
    if (st) {
        int keep = st->MPI_ERROR;
        *st = mine;
        st->MPI_ERROR = keep;
    }
    if (req && !rc) {
        MPI_Status *obj = malloc(sizeof *obj);
        if (!obj) cr_fatal(job, a.call, "out of memory");
        *obj = mine;
        obj->MPI_ERROR = MPI_SUCCESS;
        rc = mpi_request_ext(job, f->comm, &mf_req_ops, obj, req);
        if (rc) free(obj);
    }
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
    f->split = false;
    if (st) {
        int keep = st->MPI_ERROR;
        *st = f->split_st;
        st->MPI_ERROR = keep;
    }
    return mpi_leave(job, f->split_rc);
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
    *disp = v.off[0];
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
