/* MPI-IO files (MPI-3.1 §13.2, §13.6.7, §13.7): open, close, delete, size,
 * hints, groups, atomicity, sync, error handlers, c2f/f2c, and the shared
 * file pointer's store.
 *
 * Invariants:
 *  - a file handle is K_FILE | index into mpi_st()->files->f; each mpi_file is
 *    allocated once and never moves, so a call keeps its pointer while the
 *    lock is released for the I/O; a closed slot is cleared and reused;
 *  - open and close are collective over the file's private duplicate of the
 *    communicator: every rank opens with the same result (a rank that fails
 *    makes every rank fail, and none keeps a descriptor); rank 0 alone creates
 *    the file (MPI_MODE_CREATE, _EXCL) before the others open it, and each of
 *    them checks its amode, and the file its name opened (on the same kernel),
 *    against rank 0's (MPI_ERR_NOT_SAME on every rank otherwise); a file
 *    opened MPI_MODE_WRONLY is opened for reading too where its permissions
 *    allow (open_file), the amode alone refusing the program's reads;
 *  - errors go through the file's handler, those of open and delete through
 *    MPI_FILE_NULL's; a file opened gets the handler MPI_FILE_NULL has then
 *    (MPI_ERRORS_RETURN unless the program set another: the default file
 *    handler, as MPI says);
 *    each message names the call, the file and the rank;
 *  - the shared file pointer is 8 bytes in a side file next to the file
 *    (".NAME.shfp.XXXXXX", /tmp when the directory is not writable): an
 *    atomic in the file's page, mapped by every rank, when all of them reach
 *    it through one kernel; else read and updated under an fcntl write lock,
 *    so it is right across hosts that share the directory; every rank uses
 *    the same one of the two; rank 0 removes its name once every rank has
 *    it open. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi_file.h"

/* ---- table, errors ------------------------------------------------------------ */

mpi_file_tab *mf_tab(void)
{
    if (!mpi_st()->files) {
        mpi_st()->files = calloc(1, sizeof *mpi_st()->files);
        if (!mpi_st()->files) cr_fatal(cr_job_get(), "MPI_File_open", "out of memory");
        mpi_st()->files->null_errh = MPI_ERRORS_RETURN;
    }
    return mpi_st()->files;
}

mpi_file *mf_get(MPI_File h)
{
    if (!h_is(h, K_FILE) || !mpi_st()->files) return NULL;
    int i = h_idx(h);
    mpi_file_tab *t = mpi_st()->files;
    return i < t->n && t->f[i] && t->f[i]->used ? t->f[i] : NULL;
}

int mf_set_err(mf_err *e, int code, const char *fmt, ...)
{
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

int mf_errno_class(int err)
{
    switch (err) {
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
        return MPI_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY:
        return MPI_ERR_FILE_IN_USE;
    default:
        return MPI_ERR_IO;
    }
}

static int mf_vfail(cr_job *job, MPI_File h, const char *call, int code, const char *fmt,
                    va_list ap)
{
    char what[400], msg[600];
    vsnprintf(what, sizeof what, fmt, ap);
    mpi_file *f = mf_get(h);
    MPI_Errhandler eh = f ? f->errh : mf_tab()->null_errh;
    char rank[32] = ""; /* the fatal report names the rank itself */
    if (eh != MPI_ERRORS_ARE_FATAL) snprintf(rank, sizeof rank, "rank %d: ", job->rank);
    if (f)
        snprintf(msg, sizeof msg, "%sfile '%.150s': %s", rank, f->name, what);
    else
        snprintf(msg, sizeof msg, "%s%s", rank, what);
    if (!f) h = MPI_FILE_NULL;
    return mpi_fail_with(job, eh, &h, call, code, msg);
}

int mf_fail(cr_job *job, MPI_File h, const char *call, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mf_vfail(job, h, call, code, fmt, ap);
    va_end(ap);
    return rc;
}

int mf_check(cr_job *job, const char *call, MPI_File h, mpi_file **out)
{
    *out = mf_get(h);
    if (*out) return MPI_SUCCESS;
    return mf_fail(job, MPI_FILE_NULL, call, MPI_ERR_FILE,
                   h == MPI_FILE_NULL
                       ? "the file is MPI_FILE_NULL"
                       : "%#x is not an open file (closed, or another kind of handle)",
                   (unsigned)h);
}

void mf_vec_add(mf_vec *v, MPI_Offset off, size_t len)
{
    if (!len) return;
    v->bytes += len;
    if (v->n && v->off[v->n - 1] + (MPI_Offset)v->len[v->n - 1] == off) {
        v->len[v->n - 1] += len;
        return;
    }
    if (v->n == v->cap) {
        size_t c = v->cap ? 2 * v->cap : 16;
        MPI_Offset *o = realloc(v->off, c * sizeof *o);
        size_t *l = o ? realloc(v->len, c * sizeof *l) : NULL;
        if (!o || !l) cr_fatal(cr_job_get(), "MPI-IO", "out of memory for %zu file pieces", c);
        v->off = o;
        v->len = l;
        v->cap = c;
    }
    v->off[v->n] = off;
    v->len[v->n++] = len;
}

void mf_vec_free(mf_vec *v)
{
    free(v->off);
    free(v->len);
    *v = (mf_vec){0};
}

/* ---- locks -------------------------------------------------------------------- */

/* The fcntl lock of a range, and the file's mutex for that descriptor: an
 * fcntl lock never keeps out another thread of the same process (the I/O
 * thread beside the program's), the mutex does. */
static pthread_mutex_t *lock_mutex(mpi_file *f, int fd)
{
    return fd == f->shfd ? &f->shmu : &f->lkmu;
}

int mf_lock(mpi_file *f, int fd, bool write, MPI_Offset lo, MPI_Offset hi)
{
    pthread_mutex_lock(lock_mutex(f, fd));
    struct flock l = {
        .l_type = write ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET, .l_start = lo, .l_len = hi - lo};
    while (fcntl(fd, F_SETLKW, &l) != 0)
        if (errno != EINTR) {
            int err = errno;
            pthread_mutex_unlock(lock_mutex(f, fd));
            return err;
        }
    return 0;
}

void mf_unlock(mpi_file *f, int fd, MPI_Offset lo, MPI_Offset hi)
{
    struct flock l = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = lo, .l_len = hi - lo};
    (void)fcntl(fd, F_SETLK, &l);
    pthread_mutex_unlock(lock_mutex(f, fd));
}

/* ---- the shared file pointer -------------------------------------------------- */

int mf_shared_add(mpi_file *f, MPI_Offset delta, MPI_Offset *old, mf_err *e)
{
    if (f->shmap) { /* every rank on this kernel: one atomic add */
        *old = delta ? atomic_fetch_add(f->shmap, delta) : atomic_load(f->shmap);
        return 0;
    }
    int err = mf_lock(f, f->shfd, true, 0, 8);
    if (err)
        return mf_set_err(e, MPI_ERR_IO, "cannot lock the shared file pointer: %s", strerror(err));
    long long v = 0;
    ssize_t r = pread(f->shfd, &v, 8, 0);
    if (r != 8) v = 0;
    long long nv = v + delta;
    if (delta && pwrite(f->shfd, &nv, 8, 0) != 8) err = errno ? errno : EIO;
    mf_unlock(f, f->shfd, 0, 8);
    if (err)
        return mf_set_err(e, mf_errno_class(err), "cannot update the shared file pointer: %s",
                          strerror(err));
    *old = v;
    return 0;
}

int mf_shared_set(mpi_file *f, MPI_Offset v, mf_err *e)
{
    if (f->shmap) {
        atomic_store(f->shmap, v);
        return 0;
    }
    int err = mf_lock(f, f->shfd, true, 0, 8);
    long long nv = v;
    if (!err && pwrite(f->shfd, &nv, 8, 0) != 8) err = errno ? errno : EIO;
    mf_unlock(f, f->shfd, 0, 8);
    if (err)
        return mf_set_err(e, mf_errno_class(err), "cannot set the shared file pointer: %s",
                          strerror(err));
    return 0;
}

/* This kernel's boot (two ranks that read the same one see the same files
 * through the same paths, name spaces aside); "" when it cannot be read. */
static void boot_id(char id[40])
{
    id[0] = '\0';
    FILE *b = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!b) return;
    if (!fgets(id, 40, b)) id[0] = '\0';
    fclose(b);
}

/* The side file as rank 0 made it: its name, and the kernel and inode that
 * tell another rank whether its descriptor reaches the same page cache. */
typedef struct shfp0 {
    int64_t err, dev, ino;
    char boot[40];
    char path[PATH_MAX + 64];
} shfp0;

/* Rank 0 makes the side file (8 bytes, zero); every rank opens it; then rank
 * 0 removes its name, so that nothing is left behind however the job ends
 * (MPI_Abort, a crash): the ranks' descriptors keep it, and its fcntl locks,
 * until they close. When every rank reaches that one inode through the same
 * kernel (one host), each maps it and the pointer is an atomic in the shared
 * page (f->shmap): an fcntl lock, a read and a write for each access cost
 * 16-65x Open MPI's time for MPI_File_read_shared at 4 ranks on 2 cores.
 * Otherwise (hosts sharing the directory), or with COURIER_IO_SHFP_LOCKS=1,
 * the fcntl path. 0 or an errno. */
static int shfp_open(mpi_file *f)
{
    shfp0 *o = calloc(1, sizeof *o);
    if (!o) return ENOMEM;
    int err = 0;
    if (f->rank == 0) {
        const char *slash = strrchr(f->name, '/');
        const char *base = slash ? slash + 1 : f->name;
        int dl = slash ? (int)(slash - f->name) + 1 : 0;
        snprintf(o->path, sizeof o->path, "%.*s.%s.shfp.XXXXXX", dl, f->name, base);
        int fd = mkstemp(o->path);
        if (fd < 0) {
            snprintf(o->path, sizeof o->path, "/tmp/courier-shfp-XXXXXX");
            fd = mkstemp(o->path);
        }
        struct stat sb;
        if (fd < 0)
            err = errno;
        else if (ftruncate(fd, 8) != 0 || fstat(fd, &sb) != 0)
            err = errno;
        else {
            o->dev = (int64_t)sb.st_dev;
            o->ino = (int64_t)sb.st_ino;
        }
        if (fd >= 0) f->shfd = fd;
        o->err = err;
        boot_id(o->boot);
    }
    PMPI_Bcast(o, (int)sizeof *o, MPI_BYTE, 0, f->comm);
    o->boot[sizeof o->boot - 1] = o->path[sizeof o->path - 1] = '\0';
    if (o->err) {
        err = (int)o->err;
        free(o);
        return err;
    }
    bool same = f->rank == 0;
    if (f->rank != 0) {
        f->shfd = open(o->path, O_RDWR | O_CLOEXEC);
        char here[40];
        boot_id(here);
        struct stat sb;
        if (f->shfd < 0)
            err = errno;
        else
            same = here[0] && !strcmp(here, o->boot) && fstat(f->shfd, &sb) == 0 &&
                   (int64_t)sb.st_dev == o->dev && (int64_t)sb.st_ino == o->ino;
    }
    void *map = MAP_FAILED;
    const char *locks = getenv("COURIER_IO_SHFP_LOCKS"); /* the fcntl path, forced (tests) */
    if (!err && same && !(locks && *locks == '1'))
        map = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, f->shfd, 0);
    int mine[2] = {err, map == MAP_FAILED}, any[2];
    PMPI_Allreduce(mine, any, 2, MPI_INT, MPI_MAX, f->comm);
    if (f->rank == 0) unlink(o->path);
    free(o);
    if (map != MAP_FAILED && (any[0] || any[1]))
        munmap(map, 8);
    else if (map != MAP_FAILED)
        f->shmap = map;
    return any[0];
}

/* ---- hints -------------------------------------------------------------------- */

static void hints_default(mf_hints *h)
{
    *h = (mf_hints){.cb_buffer_size = 16 << 20,
                    .cb_nodes = 0,
                    .cb_read = 2,
                    .cb_write = 2,
                    .ds_read = 2,
                    .ds_write = 2,
                    .ind_rd_buffer_size = 4 << 20,
                    .ind_wr_buffer_size = 512 << 10};
}

static int tri(const char *v, int old)
{
    if (!strcmp(v, "enable") || !strcmp(v, "true")) return 1;
    if (!strcmp(v, "disable") || !strcmp(v, "false")) return 0;
    if (!strcmp(v, "automatic")) return 2;
    return old;
}

/* Take the hints of info (unknown keys and bad values are ignored, as MPI
 * asks). Called without the lock. */
static void hints_apply(mf_hints *h, MPI_Info info)
{
    if (info == MPI_INFO_NULL) return;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
#define GETH(key) (PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
    if (GETH("cb_buffer_size") && atoll(v) > 0) h->cb_buffer_size = atoll(v);
    if (GETH("cb_nodes") && atoi(v) > 0) h->cb_nodes = atoi(v);
    if (GETH("romio_cb_read")) h->cb_read = tri(v, h->cb_read);
    if (GETH("romio_cb_write")) h->cb_write = tri(v, h->cb_write);
    if (GETH("romio_ds_read")) h->ds_read = tri(v, h->ds_read);
    if (GETH("romio_ds_write")) h->ds_write = tri(v, h->ds_write);
    if (GETH("ind_rd_buffer_size") && atoll(v) > 0) h->ind_rd_buffer_size = atoll(v);
    if (GETH("ind_wr_buffer_size") && atoll(v) > 0) h->ind_wr_buffer_size = atoll(v);
    if (GETH("striping_factor") && atoi(v) > 0) h->striping_factor = atoi(v);
    if (GETH("striping_unit") && atoll(v) > 0) h->striping_unit = atoll(v);
#undef GETH
}

static void naggs_set(mpi_file *f)
{
    int n = f->h.cb_nodes > 0 ? f->h.cb_nodes : f->nhosts;
    f->naggs = n < 1 ? 1 : n > f->size ? f->size : n;
}

/* The ranks in the order they become aggregators: rank 0 of each host (hosts
 * in the order of their lowest rank), then the second of each, and so on. */
static void mf_aggs(mpi_file *f)
{
    MPI_Comm node;
    PMPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &node);
    int nr, leader = f->rank;
    PMPI_Comm_rank(node, &nr);
    PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
    PMPI_Comm_free(&node);
    int mine[2] = {leader, nr}, *all = malloc(sizeof(int) * 2 * (size_t)f->size);
    int *host = malloc(sizeof(int) * (size_t)f->size);
    f->aggs = malloc(sizeof(int) * (size_t)f->size);
    if (!all || !host || !f->aggs) cr_fatal(cr_job_get(), "MPI_File_open", "out of memory");
    PMPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, f->comm);
    int nh = 0, maxnr = 0;
    for (int r = 0; r < f->size; r++) { /* host index: order of the leaders' ranks */
        if (all[2 * r] == r) host[r] = nh++;
        if (all[2 * r + 1] > maxnr) maxnr = all[2 * r + 1];
    }
    for (int r = 0; r < f->size; r++) host[r] = host[all[2 * r]];
    int k = 0;
    for (int level = 0; level <= maxnr; level++)
        for (int hi = 0; hi < nh; hi++)
            for (int r = 0; r < f->size; r++)
                if (host[r] == hi && all[2 * r + 1] == level) f->aggs[k++] = r;
    f->nhosts = nh;
    free(all);
    free(host);
    naggs_set(f);
}

/* ---- open, close, delete ------------------------------------------------------ */

static const char *strip_prefix(const char *name)
{
    static const char *const pre[] = {
        "ufs:", "nfs:", "lustre:", "gpfs:", "pvfs2:", "xfs:", "testfs:", "panfs:", "daos:"};
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
        if (!strncmp(name, pre[i], strlen(pre[i]))) return name + strlen(pre[i]);
    return name;
}

static const char *amode_problem(int amode)
{
    int rw = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_WRONLY) + !!(amode & MPI_MODE_RDWR);
    if (amode & ~511) return "it has bits no MPI_MODE_* names";
    if (rw != 1) return "exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR is needed";
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return "MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or MPI_MODE_EXCL";
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return "MPI_MODE_SEQUENTIAL cannot go with MPI_MODE_RDWR";
    return NULL;
}

static int open_flags(int amode)
{
    return (amode & MPI_MODE_RDONLY   ? O_RDONLY
            : amode & MPI_MODE_WRONLY ? O_WRONLY
                                      : O_RDWR) |
           O_CLOEXEC;
}

static void file_release(mpi_file *f)
{
    mf_async_free(f);
    pthread_mutex_destroy(&f->lkmu);
    pthread_mutex_destroy(&f->shmu);
    if (f->fd >= 0) close(f->fd);
    if (f->shmap) munmap((void *)f->shmap, 8);
    if (f->shfd >= 0) close(f->shfd);
    mf_view_release(f);
    mf_coll_free(f);
    mf_scratch_free(f);
    free(f->name);
    free(f->aggs);
    if (f->comm != MPI_COMM_NULL) PMPI_Comm_free(&f->comm);
}

/* open(2) of a file the program opens MPI_MODE_WRONLY: read and write where
 * the file's permissions allow (as ROMIO does), so that data sieving and
 * collective buffering can read the holes around the pieces they write
 * (MPI_MODE_WRONLY still refuses the program's reads: acc_check). Write
 * only, they wrote each piece with a system call of its own: IOR opens its
 * files so, and its 2-rank strided-view write, 4 KiB every 8 KiB, took
 * 4096 pwritev a rank against ROMIO's 64 of 512 KiB. */
static int open_file(const char *name, int flags, int amode)
{
    if (amode & MPI_MODE_WRONLY) {
        int fd = open(name, (flags & ~O_ACCMODE) | O_RDWR, 0666);
        if (fd >= 0 || (errno != EACCES && errno != EPERM)) return fd;
    }
    return open(name, flags, 0666);
}

/* amode in words: "MPI_MODE_RDWR|MPI_MODE_CREATE". */
static const char *amode_words(int amode, char *buf, size_t len)
{
    static const struct {
        int bit;
        const char *name;
    } modes[] = {{MPI_MODE_RDONLY, "RDONLY"},
                 {MPI_MODE_RDWR, "RDWR"},
                 {MPI_MODE_WRONLY, "WRONLY"},
                 {MPI_MODE_CREATE, "CREATE"},
                 {MPI_MODE_EXCL, "EXCL"},
                 {MPI_MODE_DELETE_ON_CLOSE, "DELETE_ON_CLOSE"},
                 {MPI_MODE_UNIQUE_OPEN, "UNIQUE_OPEN"},
                 {MPI_MODE_SEQUENTIAL, "SEQUENTIAL"},
                 {MPI_MODE_APPEND, "APPEND"}};
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if ((amode & modes[i].bit) && at < len)
            at +=
                (size_t)snprintf(buf + at, len - at, "%sMPI_MODE_%s", at ? "|" : "", modes[i].name);
    return buf;
}

/* What rank 0 opened, for the others to check theirs against: MPI says every
 * rank passes the same amode, and a name of the same file (an erroneous
 * program otherwise, which each rank is told of, not left to go on with two
 * files, or with reads refused on some ranks only). */
typedef struct open0 {
    int64_t err, amode, dev, ino;
    char boot[40];
    char name[256];
} open0;

/* Every rank opens; e: this rank's error. The collective part of open. */
static int open_all(mpi_file *f, mf_err *e)
{
    int flags = open_flags(f->amode), err = 0;
    open0 o = {0};
    struct stat sb;
    if (f->rank == 0) {
        int cf = flags | (f->amode & MPI_MODE_CREATE ? O_CREAT : 0) |
                 (f->amode & MPI_MODE_EXCL ? O_EXCL : 0);
        f->fd = open_file(f->name, cf, f->amode);
        if (f->fd < 0) err = errno;
        o = (open0){.err = err, .amode = f->amode, .dev = -1, .ino = -1};
        if (f->fd >= 0 && fstat(f->fd, &sb) == 0) {
            o.dev = (int64_t)sb.st_dev;
            o.ino = (int64_t)sb.st_ino;
        }
        boot_id(o.boot);
        snprintf(o.name, sizeof o.name, "%s", f->name);
    }
    PMPI_Bcast(&o, (int)sizeof o, MPI_BYTE, 0, f->comm);
    o.boot[sizeof o.boot - 1] = o.name[sizeof o.name - 1] = '\0';
    if (o.err)
        return mf_set_err(e, mf_errno_class((int)o.err), "cannot open '%s'%s: %s", o.name,
                          f->rank ? " (on rank 0)" : "", strerror((int)o.err));
    int cls = 0;
    if (f->rank != 0 && o.amode != f->amode) {
        char mine[200], theirs[200];
        cls = mf_set_err(e, MPI_ERR_NOT_SAME,
                         "file '%s': amode %s, but rank 0 passed %s: every rank of the "
                         "communicator passes the same amode",
                         f->name, amode_words(f->amode, mine, sizeof mine),
                         amode_words((int)o.amode, theirs, sizeof theirs));
    } else if (f->rank != 0) {
        f->fd = open_file(f->name, flags, f->amode);
        char here[40];
        boot_id(here);
        if (f->fd < 0) {
            err = errno;
            cls = mf_set_err(e, mf_errno_class(err), "cannot open '%s'%s%s%s: %s", f->name,
                             strcmp(f->name, o.name) ? " (rank 0 opened '" : "",
                             strcmp(f->name, o.name) ? o.name : "",
                             strcmp(f->name, o.name) ? "')" : "", strerror(err));
        } else if (here[0] && !strcmp(here, o.boot) && o.ino >= 0 && fstat(f->fd, &sb) == 0 &&
                   ((int64_t)sb.st_dev != o.dev || (int64_t)sb.st_ino != o.ino)) {
            cls = mf_set_err(e, MPI_ERR_NOT_SAME,
                             "'%s' is not the file rank 0 opened ('%s'): every rank of the "
                             "communicator names the same file",
                             f->name, o.name);
        }
    }
    int worst = cls;
    PMPI_Allreduce(&cls, &worst, 1, MPI_INT, MPI_MAX, f->comm);
    if (cls) return cls;
    if (worst == MPI_ERR_NOT_SAME)
        return mf_set_err(e, worst,
                          "file '%s': another rank passed another amode or named another file "
                          "(see its report): every rank passes the same",
                          f->name);
    if (worst)
        return mf_set_err(e, worst, "another rank could not open '%s' (%s)", f->name,
                          "see its report");
    err = shfp_open(f);
    if (err)
        return mf_set_err(e, MPI_ERR_IO, "cannot make the shared file pointer of '%s': %s", f->name,
                          strerror(err));
    mf_aggs(f);
    if (f->amode & MPI_MODE_APPEND) { /* both pointers start at the end */
        struct stat sb;
        f->pos = fstat(f->fd, &sb) == 0 ? sb.st_size : 0;
        if (f->rank == 0) {
            mf_err e2;
            mf_shared_set(f, f->pos, &e2);
        }
        PMPI_Barrier(f->comm);
    }
    return 0;
}

PMPI_WEAK(File_open);
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    const char *call = "MPI_File_open";
    cr_job *job = mpi_enter(call);
    mpi_comm *c;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (rc) return mpi_leave(job, rc);
    const char *why = amode_problem(amode);
    if (c->inter)
        rc = mf_fail(job, MPI_FILE_NULL, call, MPI_ERR_COMM,
                     "files open on intracommunicators only");
    else if (!filename || !fh)
        rc = mf_fail(job, MPI_FILE_NULL, call, MPI_ERR_ARG, "%s is NULL",
                     filename ? "fh" : "filename");
    else if (why)
        rc = mf_fail(job, MPI_FILE_NULL, call, MPI_ERR_AMODE, "file '%s': amode %#x: %s", filename,
                     (unsigned)amode, why);
    else
        rc = mpi_info_arg(job, comm, call, info, true);
    if (rc) return mpi_leave(job, rc);
    mpi_file *f = calloc(1, sizeof *f);
    if (!f) cr_fatal(job, call, "out of memory");
    *f = (mpi_file){
        .fd = -1, .shfd = -1, .amode = amode, .comm = MPI_COMM_NULL, .errh = mf_tab()->null_errh};
    pthread_mutex_init(&f->lkmu, NULL);
    pthread_mutex_init(&f->shmu, NULL);
    f->name = strdup(strip_prefix(filename));
    hints_default(&f->h);
    cr_unlock(job);
    hints_apply(&f->h, info);
    PMPI_Comm_dup(comm, &f->comm);
    /* errors of the file's own traffic are the file's: reported on its handler */
    PMPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(f->comm, &f->rank);
    PMPI_Comm_size(f->comm, &f->size);
    mf_view_default(f);
    mf_err e = {0};
    open_all(f, &e);
    if (e.code) {
        file_release(f);
        free(f);
        cr_lock(job);
        return mpi_leave(job, mf_fail(job, MPI_FILE_NULL, call, e.code, "%s", e.msg));
    }
    cr_lock(job);
    mpi_file_tab *t = mf_tab();
    int i = 1;
    while (i < t->n && t->f[i]) i++;
    if (i >= t->n) {
        mpi_file **nf = realloc(t->f, (size_t)(i + 1) * sizeof *nf);
        if (!nf) cr_fatal(job, call, "out of memory");
        t->f = nf;
        for (int k = t->n; k <= i; k++) t->f[k] = NULL;
        t->n = i + 1;
    }
    f->used = true;
    f->idx = i;
    t->f[i] = f;
    *fh = (MPI_File)(K_FILE | (unsigned)i);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_close);
int PMPI_File_close(MPI_File *fh)
{
    const char *call = "MPI_File_close";
    cr_job *job = mpi_enter(call);
    mpi_file *f = NULL;
    int rc = fh ? mf_check(job, call, *fh, &f)
                : mf_fail(job, MPI_FILE_NULL, call, MPI_ERR_ARG, "fh is NULL");
    if (rc) return mpi_leave(job, rc);
    mpi_st()->files->f[f->idx] = NULL; /* the handle is gone from here on */
    f->used = false;
    cr_unlock(job);
    mf_async_free(f);      /* accesses the program did not wait for run to their end */
    PMPI_Barrier(f->comm); /* every rank's writes are done before the file goes */
    if (f->rank == 0) {
        if (f->amode & MPI_MODE_DELETE_ON_CLOSE) unlink(f->name);
    }
    if (f->amode & MPI_MODE_DELETE_ON_CLOSE)
        PMPI_Barrier(f->comm); /* gone on every rank's return */
    file_release(f);
    free(f);
    *fh = MPI_FILE_NULL;
    return mpi_leave_unlocked(job, MPI_SUCCESS);
}

PMPI_WEAK(File_delete);
int PMPI_File_delete(const char *filename, MPI_Info info)
{
    const char *call = "MPI_File_delete";
    cr_job *job = mpi_enter(call);
    int rc = filename ? mpi_info_arg(job, MPI_COMM_WORLD, call, info, true)
                      : mf_fail(job, MPI_FILE_NULL, call, MPI_ERR_ARG, "filename is NULL");
    if (rc) return mpi_leave(job, rc);
    const char *p = strip_prefix(filename);
    if (unlink(p) != 0) {
        int err = errno;
        return mpi_leave(job, mf_fail(job, MPI_FILE_NULL, call, mf_errno_class(err),
                                      "file '%s': cannot delete it: %s", p, strerror(err)));
    }
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- size, info, group, amode, sync, atomicity -------------------------------- */

/* Rank 0 changes the file's size (grow only: preallocate), every rank learns
 * its result; no rank returns before every rank has called (so a size asked
 * for after the call sees the change). A size the file has already is left
 * alone: ftruncate to the same size is no change to the data, but ext4 takes
 * any truncate to 0 as the replace-by-truncate idiom and writes the whole
 * file back at the next close (auto_da_alloc); IOR's MPI_File_set_size(fh, 0)
 * of the file it has just created cost its 64 MiB strided write 12-65 ms in
 * MPI_File_close, in the critical path. */
static int size_op(const char *call, MPI_File fh, MPI_Offset size, bool prealloc)
{
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && size < 0)
        rc = mf_fail(job, fh, call, MPI_ERR_ARG, "size %lld is negative", (long long)size);
    if (!rc && (f->amode & MPI_MODE_RDONLY))
        rc = mf_fail(job, fh, call, MPI_ERR_READ_ONLY, "the file is open MPI_MODE_RDONLY");
    if (!rc && (f->amode & MPI_MODE_SEQUENTIAL))
        rc = mf_fail(job, fh, call, MPI_ERR_UNSUPPORTED_OPERATION,
                     "the file is open MPI_MODE_SEQUENTIAL");
    if (rc) return mpi_leave(job, rc);
    cr_unlock(job);
    mf_async_drain(f);
    int err = 0;
    PMPI_Barrier(f->comm); /* every rank's earlier calls (a get_size) see the old size */
    if (f->rank == 0) {
        struct stat sb;
        if (fstat(f->fd, &sb) != 0)
            err = errno;
        else if (prealloc) {
            if (size > sb.st_size) err = posix_fallocate(f->fd, 0, size);
        } else if (size != sb.st_size && ftruncate(f->fd, size) != 0)
            err = errno;
    }
    int any = err; /* an all-reduce, not a broadcast: no rank leaves before all came */
    PMPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, f->comm);
    err = any;
    cr_lock(job);
    if (err)
        return mpi_leave(job,
                         mf_fail(job, fh, call, mf_errno_class(err),
                                 "cannot make it %lld bytes: %s", (long long)size, strerror(err)));
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_set_size);
int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return size_op("MPI_File_set_size", fh, size, false);
}

PMPI_WEAK(File_preallocate);
int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return size_op("MPI_File_preallocate", fh, size, true);
}

PMPI_WEAK(File_get_size);
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    const char *call = "MPI_File_get_size";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && !size) rc = mf_fail(job, fh, call, MPI_ERR_ARG, "size is NULL");
    if (rc) return mpi_leave(job, rc);
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return mpi_leave(job, mf_fail(job, fh, call, MPI_ERR_IO, "fstat: %s", strerror(errno)));
    *size = sb.st_size;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_get_group);
int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    const char *call = "MPI_File_get_group";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && !group) rc = mf_fail(job, fh, call, MPI_ERR_ARG, "group is NULL");
    if (rc) return mpi_leave(job, rc);
    MPI_Comm comm = f->comm;
    cr_unlock(job);
    return mpi_leave_unlocked(job, PMPI_Comm_group(comm, group));
}

PMPI_WEAK(File_get_amode);
int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    const char *call = "MPI_File_get_amode";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && !amode) rc = mf_fail(job, fh, call, MPI_ERR_ARG, "amode is NULL");
    if (rc) return mpi_leave(job, rc);
    *amode = f->amode;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_set_info);
int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    const char *call = "MPI_File_set_info";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc) rc = mpi_info_arg(job, MPI_COMM_WORLD, call, info, true);
    if (rc) return mpi_leave(job, rc);
    cr_unlock(job);
    hints_apply(&f->h, info);
    naggs_set(f);
    return mpi_leave_unlocked(job, MPI_SUCCESS);
}

PMPI_WEAK(File_get_info);
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    const char *call = "MPI_File_get_info";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && !info_used) rc = mf_fail(job, fh, call, MPI_ERR_ARG, "info_used is NULL");
    if (rc) return mpi_leave(job, rc);
    mf_hints h = f->h;
    int naggs = f->naggs;
    cr_unlock(job);
    static const char *const t3[] = {"disable", "enable", "automatic"};
    char v[64];
    MPI_Info in;
    PMPI_Info_create(&in);
#define SETN(key, fmt, x) (snprintf(v, sizeof v, fmt, x), PMPI_Info_set(in, key, v))
    SETN("cb_buffer_size", "%lld", h.cb_buffer_size);
    SETN("cb_nodes", "%d", naggs);
    PMPI_Info_set(in, "romio_cb_read", t3[h.cb_read]);
    PMPI_Info_set(in, "romio_cb_write", t3[h.cb_write]);
    PMPI_Info_set(in, "romio_ds_read", t3[h.ds_read]);
    PMPI_Info_set(in, "romio_ds_write", t3[h.ds_write]);
    SETN("ind_rd_buffer_size", "%lld", h.ind_rd_buffer_size);
    SETN("ind_wr_buffer_size", "%lld", h.ind_wr_buffer_size);
    if (h.striping_factor) SETN("striping_factor", "%d", h.striping_factor);
    if (h.striping_unit) SETN("striping_unit", "%lld", h.striping_unit);
#undef SETN
    *info_used = in;
    return mpi_leave_unlocked(job, MPI_SUCCESS);
}

PMPI_WEAK(File_sync);
int PMPI_File_sync(MPI_File fh)
{
    const char *call = "MPI_File_sync";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (rc) return mpi_leave(job, rc);
    cr_unlock(job);
    mf_async_drain(f); /* what was written by an access not waited for yet */
    int err = fsync(f->fd) != 0 ? errno : 0;
    if (err == EINVAL || err == EROFS) err = 0; /* a file that cannot be synced has nothing to */
    PMPI_Barrier(f->comm);
    cr_lock(job);
    if (err)
        return mpi_leave(job,
                         mf_fail(job, fh, call, mf_errno_class(err), "fsync: %s", strerror(err)));
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_set_atomicity);
int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    const char *call = "MPI_File_set_atomicity";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (rc) return mpi_leave(job, rc);
    cr_unlock(job);
    mf_async_drain(f);
    PMPI_Barrier(f->comm); /* collective: the mode changes between accesses */
    f->atomic = flag != 0;
    return mpi_leave_unlocked(job, MPI_SUCCESS);
}

PMPI_WEAK(File_get_atomicity);
int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    const char *call = "MPI_File_get_atomicity";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && !flag) rc = mf_fail(job, fh, call, MPI_ERR_ARG, "flag is NULL");
    if (rc) return mpi_leave(job, rc);
    *flag = f->atomic;
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- error handlers, Fortran handles ------------------------------------------ */

PMPI_WEAK(File_create_errhandler);
int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    /* one table of handlers for every kind of object (all handles are ints) */
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))fn,
                                       errhandler);
}

PMPI_WEAK(File_set_errhandler);
int PMPI_File_set_errhandler(MPI_File fh, MPI_Errhandler h)
{
    const char *call = "MPI_File_set_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_file *f = NULL;
    int rc = fh == MPI_FILE_NULL ? 0 : mf_check(job, call, fh, &f);
    if (!rc && !mpi_errh_valid(h))
        rc = mf_fail(job, fh, call, MPI_ERR_ERRHANDLER, "error handler %#x is not valid",
                     (unsigned)h);
    if (rc) return mpi_leave(job, rc);
    if (f)
        f->errh = h;
    else
        mf_tab()->null_errh = h;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_get_errhandler);
int PMPI_File_get_errhandler(MPI_File fh, MPI_Errhandler *h)
{
    const char *call = "MPI_File_get_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_file *f = NULL;
    int rc = fh == MPI_FILE_NULL ? 0 : mf_check(job, call, fh, &f);
    if (!rc && !h) rc = mf_fail(job, fh, call, MPI_ERR_ARG, "errhandler is NULL");
    if (rc) return mpi_leave(job, rc);
    *h = f ? f->errh : mf_tab()->null_errh;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(File_call_errhandler);
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    const char *call = "MPI_File_call_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_file *f = NULL;
    int rc = fh == MPI_FILE_NULL ? 0 : mf_check(job, call, fh, &f);
    if (!rc) mf_fail(job, fh, call, errorcode, "error %d raised by the program", errorcode);
    return mpi_leave(job, rc);
}

PMPI_WEAK(File_c2f);
MPI_Fint PMPI_File_c2f(MPI_File fh)
{
    return (MPI_Fint)fh; /* handles are ints in both languages */
}

PMPI_WEAK(File_f2c);
MPI_File PMPI_File_f2c(MPI_Fint fh)
{
    return (MPI_File)fh;
}
