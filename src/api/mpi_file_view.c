/* MPI-IO views and data representations (MPI-3.1 §13.3, §13.5), and the
 * independent path of every access: the view's file pieces of a stretch of
 * its data stream, the program's buffer to and from that stream (packing a
 * non-contiguous datatype, converting to "external32" or a registered
 * representation), and pread/pwrite of the pieces with data sieving, the
 * stream being one buffer or the runs of the program's memory (mf_mem:
 * preadv/pwritev in place); scratch buffers kept with the file.
 *
 * Invariants:
 *  - a view's runs (f->roff, f->rlen) are one filetype instance's, offsets
 *    nonnegative and nondecreasing (runs may overlap), adjacent runs joined; instance k starts at
 *    disp + k * fext; the stream is the runs in order, instance after
 *    instance (set_view refuses a filetype that breaks this);
 *  - "native" and "internal" store memory's bytes; "external32" stores each
 *    basic element big-endian (MPI_Pack_external's conversion), a
 *    registered representation what its conversions make; under those two
 *    the views' runs, extents and etype sizes are the types' layout in the
 *    representation's sizes (mpi_type_file_layout: a long takes 4 bytes in
 *    external32, counts of extents are scaled, byte displacements kept), and
 *    the data stream holds each element in those sizes (mf_fsize);
 *  - a registered representation's extent function is called only for
 *    predefined types the program uses under it, once each, without the
 *    lock (mf_rep_sizes, before a view or an access is laid out);
 *  - a read never returns bytes past the end of the file: the count in its
 *    status is the stream bytes read before the end (a read past the end is
 *    a count of 0, not an error);
 *  - data sieving reads (or, for a write, reads, patches and writes back)
 *    one window of the file covering several pieces; a write's window never
 *    extends past its last piece, and is under an fcntl write lock (taken at
 *    the access's first sieved window, up to the access's end, and held to
 *    the end of the access), so no other writer's bytes in the holes are lost;
 *  - a scratch buffer is in one of the file's slots (f->spare) or in the
 *    hands of one access, never both: slots change by atomic exchange. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mpi_file.h"

/* ---- runs of the filetype ------------------------------------------------------ */

typedef struct runs {
    mf_vec v;
    bool bad;     /* an offset negative, or before the previous run's */
    bool overlap; /* a run starting inside the previous one */
} runs;

static void run_cb(void *ctx, ptrdiff_t off, size_t len)
{
    runs *r = ctx;
    if (off < 0 || (r->v.n && off < r->v.off[r->v.n - 1])) r->bad = true;
    if (r->v.n && off < r->v.off[r->v.n - 1] + (MPI_Offset)r->v.len[r->v.n - 1]) r->overlap = true;
    mf_vec_add(&r->v, off, len);
}

static void view_set_runs(mpi_file *f, mf_vec *v, size_t fsize, MPI_Offset fext)
{
    free(f->roff);
    free(f->rlen);
    free(f->rcum);
    f->nrun = (int)v->n;
    f->roff = v->off;
    f->rlen = v->len;
    f->rcum = malloc((v->n + 1) * sizeof *f->rcum);
    if (!f->rcum) cr_fatal(cr_job_get(), "MPI_File_set_view", "out of memory");
    size_t c = 0;
    for (size_t i = 0; i < v->n; i++) {
        f->rcum[i] = c;
        c += v->len[i];
    }
    f->rcum[v->n] = c;
    f->fsize = fsize;
    f->fext = fext;
}

void mf_view_default(mpi_file *f)
{
    mf_vec v = {0};
    mf_vec_add(&v, 0, 1);
    view_set_runs(f, &v, 1, 1);
    f->disp = 0;
    f->etype = f->ftype = MPI_BYTE;
    f->esize = 1;
    f->rep = MF_NATIVE;
    strcpy(f->datarep, "native");
}

static void type_release(MPI_Datatype *t)
{
    mpi_type *x = mpi_type_get(*t);
    if (x && !x->predef) PMPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

void mf_view_release(mpi_file *f)
{
    type_release(&f->etype);
    type_release(&f->ftype);
    free(f->roff);
    free(f->rlen);
    free(f->rcum);
    f->roff = NULL;
    f->rlen = f->rcum = NULL;
}

void mf_view_pieces(const mpi_file *f, MPI_Offset s, size_t n, mf_vec *v)
{
    if (!n || !f->fsize) return; /* (an empty filetype: nothing to reach) */
    if (f->nrun == 1 && f->roff[0] == 0 && (MPI_Offset)f->rlen[0] == f->fext) {
        mf_vec_add(v, f->disp + s, n); /* a contiguous view */
        return;
    }
    MPI_Offset k = s / (MPI_Offset)f->fsize;
    size_t r = (size_t)(s % (MPI_Offset)f->fsize);
    int lo = 0, hi = f->nrun - 1; /* the run holding stream byte r of the instance */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (f->rcum[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    int j = lo;
    while (n) {
        size_t in = r - f->rcum[j], take = f->rlen[j] - in;
        if (take > n) take = n;
        mf_vec_add(v, f->disp + k * f->fext + f->roff[j] + (MPI_Offset)in, take);
        n -= take;
        r += take;
        if (++j == f->nrun) {
            j = 0;
            k++;
            r = 0;
        }
    }
}

MPI_Offset mf_view_stream_before(const mpi_file *f, MPI_Offset at)
{
    if (at <= f->disp || !f->fsize || !f->fext) return 0;
    MPI_Offset k = (at - f->disp) / f->fext, rem = (at - f->disp) % f->fext;
    MPI_Offset s = k * (MPI_Offset)f->fsize;
    for (int j = 0; j < f->nrun; j++) {
        MPI_Offset d = rem - f->roff[j];
        if (d <= 0) break;
        s += d < (MPI_Offset)f->rlen[j] ? d : (MPI_Offset)f->rlen[j];
    }
    return s;
}

/* ---- data representations -------------------------------------------------------- */

/* MF_NATIVE, MF_EXTERNAL32, MF_USER + i, or -1: unknown. */
static int rep_find(const char *name)
{
    if (!strcmp(name, "native") || !strcmp(name, "internal")) return MF_NATIVE;
    if (!strcmp(name, "external32")) return MF_EXTERNAL32;
    mpi_file_tab *t = mf_tab();
    for (int i = 0; i < t->nreps; i++)
        if (!strcmp(t->reps[i].name, name)) return MF_USER + i;
    return -1;
}

/* MPI_Register_datarep and its _c form: one of the two pairs of conversions. */
static int rep_register(const char *call, const char *datarep, mf_datarep fns)
{
    cr_job *job = mpi_enter(call);
    int rc = 0;
    /* reported on MPI_FILE_NULL's handler, as open's errors */
    if (!datarep || !*datarep || strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        rc = mf_fail(job, MPI_FILE_NULL, call, MPI_ERR_ARG,
                     "datarep is NULL, empty or longer than MPI_MAX_DATAREP_STRING - 1");
    else if (rep_find(datarep) >= 0)
        rc = mf_fail(job, MPI_FILE_NULL, call, MPI_ERR_DUP_DATAREP,
                     "data representation '%s' is already defined", datarep);
    else if (!fns.ext)
        rc = mf_fail(job, MPI_FILE_NULL, call, MPI_ERR_ARG, "dtype_file_extent_fn is NULL");
    if (rc) return mpi_leave(job, rc);
    mpi_file_tab *t = mf_tab();
    mf_datarep *r = realloc(t->reps, (size_t)(t->nreps + 1) * sizeof *r);
    if (!r) cr_fatal(job, call, "out of memory");
    t->reps = r;
    mf_datarep *d = &r[t->nreps++];
    *d = fns;
    if (!(d->psz = calloc(MPI_NPREDEF, sizeof *d->psz))) cr_fatal(job, call, "out of memory");
    snprintf(d->name, sizeof d->name, "%s", datarep);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Register_datarep);
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    mf_datarep fns = {.rd = read_conversion_fn,
                      .wr = write_conversion_fn,
                      .ext = dtype_file_extent_fn,
                      .extra = extra_state};
    return rep_register("MPI_Register_datarep", datarep, fns);
}

PMPI_WEAK(Register_datarep_c);
int PMPI_Register_datarep_c(const char *datarep,
                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    mf_datarep fns = {.rd_c = read_conversion_fn,
                      .wr_c = write_conversion_fn,
                      .ext = dtype_file_extent_fn,
                      .extra = extra_state};
    return rep_register("MPI_Register_datarep_c", datarep, fns);
}

/* ---- set_view, get_view, get_type_extent ------------------------------------------ */

static MPI_Datatype type_hold(MPI_Datatype h)
{
    mpi_type *t = mpi_type_get(h);
    if (t && t->predef) return h;
    MPI_Datatype d = MPI_DATATYPE_NULL;
    PMPI_Type_dup(h, &d);
    return d;
}

static int view_type_check(cr_job *job, MPI_File fh, const char *call, MPI_Datatype h,
                           const char *what, mpi_type **out)
{
    mpi_type *t = mpi_type_get(h);
    *out = t;
    if (!t)
        return mf_fail(job, fh, call, MPI_ERR_TYPE, "the %s %#x is not a live datatype", what,
                       (unsigned)h);
    if (!t->committed)
        return mf_fail(job, fh, call, MPI_ERR_TYPE, "the %s is not committed: call MPI_Type_commit",
                       what);
    return 0;
}

PMPI_WEAK(File_set_view);
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    const char *call = "MPI_File_set_view";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    mpi_type *et = NULL, *ft = NULL;
    int rc = mf_check(job, call, fh, &f), rep = -1;
    if (rc) return mpi_leave(job, rc); /* no file: no communicator to agree over */
    rc = view_type_check(job, fh, call, etype, "etype", &et);
    if (!rc) rc = view_type_check(job, fh, call, filetype, "filetype", &ft);
    if (!rc && !datarep) rc = mf_fail(job, fh, call, MPI_ERR_ARG, "datarep is NULL");
    if (!rc && (rep = rep_find(datarep)) < 0)
        rc = mf_fail(job, fh, call, MPI_ERR_UNSUPPORTED_DATAREP,
                     "data representation '%s' is unknown: \"native\", \"internal\", "
                     "\"external32\" or one made by MPI_Register_datarep",
                     datarep);
    if (!rc && disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL))
        rc = mf_fail(job, fh, call, MPI_ERR_ARG,
                     "MPI_DISPLACEMENT_CURRENT needs a file open MPI_MODE_SEQUENTIAL");
    if (!rc && disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        rc = mf_fail(job, fh, call, MPI_ERR_ARG, "disp %lld is negative", (long long)disp);
    /* in the file's representation: external32 and registered ones lay the
     * types out with their own sizes (mpi_type_file_layout), native with
     * memory's */
    bool x = rep >= MF_EXTERNAL32;
    const MPI_Aint *psz = rep >= MF_USER ? mf_tab()->reps[rep - MF_USER].psz : NULL;
    mf_err ue;
    if (!rc && (mf_rep_sizes(job, rep, et, &ue) || mf_rep_sizes(job, rep, ft, &ue)))
        rc = mf_fail(job, fh, call, ue.code, "%s", ue.msg);
    if (!rc) rc = mpi_info_arg(job, MPI_COMM_WORLD, call, info, true);
    /* the typemaps (MPI-3.1 §13.3): the etype's and the filetype's
     * displacements nonnegative and nondecreasing, and without overlaps
     * unless the file is read only (only writing through them is
     * erroneous); MPI_ERR_IO, as ROMIO's (MPICH's io/tst_fileview); their
     * runs' bytes are the etype's and the filetype's sizes in the file */
    runs r = {0}, re = {0};
    ptrdiff_t lb = 0, ub = 0, elb, eub;
    size_t esize = 0, fsize = 0;
    if (!rc) {
        lb = ft->lb, ub = ft->ub;
        if (x) {
            if (mpi_type_file_layout(et, psz, run_cb, &re, &elb, &eub, NULL) ||
                mpi_type_file_layout(ft, psz, run_cb, &r, &lb, &ub, NULL))
                cr_fatal(job, call, "out of memory for the view's layout");
        } else {
            mpi_type_runs(et, 1, run_cb, &re);
            mpi_type_runs(ft, 1, run_cb, &r);
        }
        esize = re.v.bytes, fsize = r.v.bytes;
        mf_vec_free(&re.v);
    }
    const char *in_rep = x ? " in the file's data representation" : "";
    bool wr = !(f->amode & MPI_MODE_RDONLY);
    if (rc)
        ;
    else if (!esize || fsize % esize)
        rc = mf_fail(job, fh, call, MPI_ERR_TYPE,
                     "the filetype (%zu bytes) must be made of whole etypes (%zu bytes each)%s",
                     fsize, esize, in_rep);
    else if (ub - lb < 0 || (ub - lb == 0 && fsize)) /* an empty one: this rank accesses nothing */
        rc = mf_fail(job, fh, call, MPI_ERR_TYPE, "the filetype's extent %ld must be positive%s",
                     (long)(ub - lb), in_rep);
    else if (r.bad || re.bad || (wr && (r.overlap || re.overlap)))
        rc = mf_fail(job, fh, call, MPI_ERR_IO,
                     "the %s's displacements must be nonnegative and nondecreasing%s "
                     "(MPI-3.1 §13.3)",
                     re.bad || (wr && re.overlap) ? "etype" : "filetype",
                     wr ? ", without overlaps in a file that can be written" : "");
    cr_unlock(job);
    mf_async_drain(f);
    /* collective: every rank's accesses under the old view are done, and a
     * rank whose arguments were wrong makes every rank fail (none waits for
     * it, none keeps the old view while the others take the new one) */
    int worst = rc;
    PMPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, f->comm);
    if (worst) {
        mf_vec_free(&r.v);
        cr_lock(job);
        if (!rc)
            rc = mf_fail(job, fh, call, worst,
                         "another rank's arguments were wrong (see its report): no rank's view "
                         "changed");
        return mpi_leave(job, rc);
    }
    if (disp == MPI_DISPLACEMENT_CURRENT) { /* rank 0 reads it for all: it resets it below */
        mf_err e;
        long long at = 0;
        if (f->rank == 0) {
            MPI_Offset cur = 0;
            mf_shared_add(f, 0, &cur, &e);
            at = cur;
        }
        PMPI_Bcast(&at, 1, MPI_LONG_LONG, 0, f->comm);
        disp = f->disp + at * (MPI_Offset)f->esize;
    }
    type_release(&f->etype);
    type_release(&f->ftype);
    f->etype = type_hold(etype);
    f->ftype = type_hold(filetype);
    view_set_runs(f, &r.v, fsize, ub - lb);
    f->disp = disp;
    f->esize = esize;
    f->rep = rep;
    snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    f->pos = 0;
    if (f->rank == 0) {
        mf_err e;
        mf_shared_set(f, 0, &e);
    }
    PMPI_Barrier(f->comm);
    return mpi_leave_unlocked(job, MPI_SUCCESS);
}

PMPI_WEAK(File_get_view);
int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep)
{
    const char *call = "MPI_File_get_view";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    if (!rc && (!disp || !etype || !filetype || !datarep))
        rc = mf_fail(job, fh, call, MPI_ERR_ARG, "an output argument is NULL");
    if (rc) return mpi_leave(job, rc);
    MPI_Datatype e = f->etype, t = f->ftype;
    *disp = f->disp;
    strcpy(datarep, f->datarep);
    cr_unlock(job);
    *etype = type_hold(e); /* derived ones: a new handle the program frees */
    *filetype = type_hold(t);
    return mpi_leave_unlocked(job, MPI_SUCCESS);
}

PMPI_WEAK(File_get_type_extent);
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    const char *call = "MPI_File_get_type_extent";
    cr_job *job = mpi_enter(call);
    mpi_file *f;
    int rc = mf_check(job, call, fh, &f);
    mpi_type *t = NULL;
    if (!rc && !(t = mpi_type_get(datatype)))
        rc = mf_fail(job, fh, call, MPI_ERR_TYPE, "%#x is not a live datatype", (unsigned)datatype);
    if (!rc && !extent) rc = mf_fail(job, fh, call, MPI_ERR_ARG, "extent is NULL");
    if (rc) return mpi_leave(job, rc);
    MPI_Aint x = type_extent(t);
    mf_err ue;
    if (t->env && mf_rep_sizes(job, f->rep, t, &ue))
        return mpi_leave(job, mf_fail(job, fh, call, ue.code, "%s", ue.msg));
    if (f->rep == MF_EXTERNAL32 || (f->rep >= MF_USER && t->env)) { /* derived: laid out */
        ptrdiff_t lb, ub;
        const MPI_Aint *psz = f->rep >= MF_USER ? mf_tab()->reps[f->rep - MF_USER].psz : NULL;
        if (mpi_type_file_layout(t, psz, NULL, NULL, &lb, &ub, NULL))
            cr_fatal(job, call, "out of memory for the type's layout");
        x = ub - lb;
    } else if (f->rep >= MF_USER) { /* predefined: as the extent function says */
        mf_datarep d = mf_tab()->reps[f->rep - MF_USER];
        cr_unlock(job);
        rc = d.ext(datatype, &x, d.extra);
        cr_lock(job);
        if (rc)
            return mpi_leave(job, mf_fail(job, fh, call, MPI_ERR_CONVERSION,
                                          "the extent function of '%s' returned %d", d.name, rc));
        /* MPI-4.1 §15.5.3: an extent the function cannot express is
         * MPI_UNDEFINED, which the library raises as this class */
        if (x == MPI_UNDEFINED)
            return mpi_leave(job, mf_fail(job, fh, call, MPI_ERR_VALUE_TOO_LARGE,
                                          "the extent function of '%s' says the file extent of "
                                          "the datatype is too large to express (MPI_UNDEFINED)",
                                          d.name));
    }
    *extent = x;
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- the program's buffer and the stream ------------------------------------------- */

int mf_rep_sizes(cr_job *job, int rep, const mpi_type *t, mf_err *e)
{
    if (rep < MF_USER || !t) return 0;
    unsigned char seen[MPI_NPREDEF] = {0};
    mpi_type_bases(t, seen);
    for (int i = 1; i < MPI_NPREDEF; i++) {
        if (!seen[i] || mf_tab()->reps[rep - MF_USER].psz[i]) continue;
        mf_datarep d = mf_tab()->reps[rep - MF_USER];
        MPI_Aint x = 0;
        cr_unlock(job);
        int rc = d.ext((MPI_Datatype)(K_TYPE | (unsigned)i), &x, d.extra);
        cr_lock(job);
        if (!rc && x == MPI_UNDEFINED)
            return mf_set_err(e, MPI_ERR_VALUE_TOO_LARGE,
                              "the extent function of '%s' says the file extent of %s is too "
                              "large to express (MPI_UNDEFINED)",
                              d.name, mpi_type_at(i)->name);
        if (rc || x <= 0)
            return mf_set_err(e, MPI_ERR_CONVERSION,
                              "the extent function of '%s' returned %d and an extent of %ld for %s",
                              d.name, rc, (long)x, mpi_type_at(i)->name);
        mf_tab()->reps[rep - MF_USER].psz[i] = x;
    }
    return 0;
}

size_t mf_fsize(const mpi_file *f, const mpi_type *t)
{
    if (f->rep == MF_NATIVE) return t->size;
    if (f->rep == MF_EXTERNAL32) return t->xsize;
    size_t n = 0;
    if (mpi_type_file_layout(t, mf_tab()->reps[f->rep - MF_USER].psz, NULL, NULL, NULL, NULL, &n))
        cr_fatal(cr_job_get(), "MPI-IO", "out of memory for a type's layout");
    return n;
}

/* A registered representation without the conversion this access needs
 * copies memory's bytes: only right where the file's sizes are memory's. */
static int rep_copies(const mpi_file *f, const mpi_type *t, size_t n, int count, mf_err *e)
{
    if (n == t->size * (size_t)count) return 0;
    return mf_set_err(e, MPI_ERR_CONVERSION,
                      "data representation '%s' has no conversion function for this access, and "
                      "its extent function gives the data %zu bytes in the file against %zu in "
                      "memory: register conversion functions",
                      mf_tab()->reps[f->rep - MF_USER].name, n, t->size * (size_t)count);
}

int mf_to_stream(mpi_file *f, mpi_file *keep, const void *buf, int count, MPI_Datatype dt,
                 char **out, size_t *n, char **tmp, mf_err *e)
{
    mpi_type *t = mpi_type_get(dt);
    *tmp = NULL;
    *n = mf_fsize(f, t) * (size_t)count;
    if (f->rep == MF_EXTERNAL32) {
        if (!(*tmp = mf_scratch_get(keep, *n)))
            return mf_set_err(e, MPI_ERR_NO_MEM, "out of memory");
        MPI_Aint pos = 0;
        int rc = PMPI_Pack_external("external32", buf, count, dt, *tmp, (MPI_Aint)*n, &pos);
        if (rc) return mf_set_err(e, MPI_ERR_CONVERSION, "external32 conversion failed (%d)", rc);
    } else if (f->rep >= MF_USER &&
               (mf_tab()->reps[f->rep - MF_USER].wr || mf_tab()->reps[f->rep - MF_USER].wr_c)) {
        mf_datarep d = mf_tab()->reps[f->rep - MF_USER];
        if (!(*tmp = mf_scratch_get(keep, *n)))
            return mf_set_err(e, MPI_ERR_NO_MEM, "out of memory");
        int rc = d.wr ? d.wr((void *)buf, dt, count, *tmp, 0, d.extra)
                      : d.wr_c((void *)buf, dt, count, *tmp, 0, d.extra);
        if (rc)
            return mf_set_err(e, MPI_ERR_CONVERSION,
                              "the write conversion of data representation '%s' returned %d",
                              d.name, rc);
    } else if (f->rep >= MF_USER && rep_copies(f, t, *n, count, e)) {
        return e->code;
    } else if (!t->contig) {
        if (!(*tmp = mf_scratch_get(keep, *n)))
            return mf_set_err(e, MPI_ERR_NO_MEM, "out of memory");
        mpi_pack_data(t, buf, (size_t)count, *tmp);
    }
    *out = *tmp ? *tmp : (char *)buf;
    return 0;
}

int mf_stream_buf(mpi_file *f, mpi_file *keep, void *buf, int count, MPI_Datatype dt, char **out,
                  size_t *n, char **tmp, mf_err *e)
{
    mpi_type *t = mpi_type_get(dt);
    *tmp = NULL;
    *n = mf_fsize(f, t) * (size_t)count;
    bool direct =
        f->rep == MF_NATIVE || (f->rep >= MF_USER && !mf_tab()->reps[f->rep - MF_USER].rd &&
                                !mf_tab()->reps[f->rep - MF_USER].rd_c);
    if (direct && f->rep >= MF_USER && rep_copies(f, t, *n, count, e)) return e->code;
    if (!direct || !t->contig) {
        if (!(*tmp = mf_scratch_get(keep, *n)))
            return mf_set_err(e, MPI_ERR_NO_MEM, "out of memory");
    }
    *out = *tmp ? *tmp : (char *)buf;
    return 0;
}

int mf_from_stream(mpi_file *f, void *buf, int count, MPI_Datatype dt, const char *in, size_t got,
                   mf_err *e)
{
    mpi_type *t = mpi_type_get(dt);
    if (in == buf || !got) return 0;
    if (f->rep == MF_EXTERNAL32) {
        int whole = t->xsize ? (int)(got / t->xsize) : 0;
        MPI_Aint pos = 0;
        if (whole > count) whole = count;
        int rc =
            whole ? PMPI_Unpack_external("external32", in, (MPI_Aint)got, &pos, buf, whole, dt) : 0;
        if (rc) return mf_set_err(e, MPI_ERR_CONVERSION, "external32 conversion failed (%d)", rc);
        return 0;
    }
    if (f->rep >= MF_USER &&
        (mf_tab()->reps[f->rep - MF_USER].rd || mf_tab()->reps[f->rep - MF_USER].rd_c)) {
        mf_datarep d = mf_tab()->reps[f->rep - MF_USER];
        size_t one = mf_fsize(f, t);
        int whole = one ? (int)(got / one) : 0;
        if (whole > count) whole = count;
        int rc = d.rd ? d.rd(buf, dt, whole, (void *)in, 0, d.extra)
                      : d.rd_c(buf, dt, whole, (void *)in, 0, d.extra);
        if (rc)
            return mf_set_err(e, MPI_ERR_CONVERSION,
                              "the read conversion of data representation '%s' returned %d", d.name,
                              rc);
        return 0;
    }
    mpi_unpack_data(t, in, got, buf, (size_t)count);
    return 0;
}

void mf_status(mpi_file *f, MPI_Datatype dt, size_t got, MPI_Status *st)
{
    if (!st) return;
    mpi_type *t = mpi_type_get(dt);
    long long mem = (long long)got;
    size_t one = t && f->rep != MF_NATIVE ? mf_fsize(f, t) : 0;
    if (one && one != t->size) mem = (long long)(got / one * t->size);
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->cr_cancelled = 0;
    st->cr_bytes = mem;
}

/* ---- scratch buffers ----------------------------------------------------------------- */

/* A scratch buffer: its capacity, then the bytes mf_scratch_get hands out. */
typedef struct mf_scratch {
    union {
        size_t cap;
        max_align_t align;
    } h;
    char data[];
} mf_scratch;

static mf_scratch *scratch_of(char *p)
{
    return (mf_scratch *)(p - offsetof(mf_scratch, data));
}

char *mf_scratch_get(mpi_file *f, size_t n)
{
    if (!n) n = 1;
    mf_scratch *small = NULL;
    for (int i = 0; f && i < MF_SPARES; i++) {
        mf_scratch *s = atomic_exchange(&f->spare[i], NULL);
        if (!s) continue;
        if (s->h.cap >= n) {
            if (small) mf_scratch_put(f, small->data);
            return s->data;
        }
        if (small) free(small); /* two too small: one is grown below */
        small = s;
    }
    free(small); /* grown: a fresh one (its bytes need not be copied) */
    mf_scratch *s = malloc(sizeof *s + n);
    if (!s) return NULL;
    s->h.cap = n;
    return s->data;
}

void mf_scratch_put(mpi_file *f, char *p)
{
    if (!p) return;
    mf_scratch *s = scratch_of(p);
    for (int i = 0; f && s->h.cap <= MF_SCRATCH_KEEP && i < MF_SPARES; i++) {
        mf_scratch *none = NULL;
        if (atomic_compare_exchange_strong(&f->spare[i], &none, s)) return;
    }
    free(s);
}

void mf_scratch_free(mpi_file *f)
{
    for (int i = 0; i < MF_SPARES; i++) free(atomic_exchange(&f->spare[i], NULL));
}

/* ---- pread / pwrite of pieces ------------------------------------------------------- */

/* Bytes read before the end of the file, or -1 (errno). */
ssize_t mf_pread(int fd, char *p, size_t len, MPI_Offset off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, p + got, len - got, off + (MPI_Offset)got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int mf_pwrite(int fd, const char *p, size_t len, MPI_Offset off)
{
    size_t put = 0;
    while (put < len) {
        ssize_t r = pwrite(fd, p + put, len - put, off + (MPI_Offset)put);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return errno;
        if (r == 0) return ENOSPC;
        put += (size_t)r;
    }
    return 0;
}

static int io_err(mf_err *e, int err, bool write, size_t len, MPI_Offset off)
{
    return mf_set_err(e, mf_errno_class(err), "%s of %zu bytes at offset %lld failed: %s",
                      write ? "write" : "read", len, (long long)off, strerror(err));
}

/* The end of pieces i..j-1: the last one's, unless they overlap (a
 * read-only file's view may). */
static MPI_Offset vec_end(const mf_vec *v, size_t i, size_t j)
{
    MPI_Offset hi = 0;
    for (size_t k = i; k < j; k++)
        if (v->off[k] + (MPI_Offset)v->len[k] > hi) hi = v->off[k] + (MPI_Offset)v->len[k];
    return hi;
}

/* Automatic data sieving takes a window whose pieces start, on average, at
 * most this many bytes apart (twice that for a write): there, reading
 * through the holes costs less than one more system call a piece, a pwrite
 * costing about three preads (HDF5's point selections of 16 bytes every 128,
 * testpar/t_bigio, took one call each). Sparser pieces go one call each:
 * quiet, 4 KiB pieces every 16 KiB (4 ranks' strided blocks) were read at
 * 3.2 GB/s sieved, 5.8-6.8 one by one (Open MPI 5.6-6.7); every 8 KiB (2
 * ranks), IOR's strided-view read 480-680 MB/s sieved, 880-1190 one by
 * one, while the 2-rank write was 1.8-1.9x Open MPI's sieved and 0.6x one
 * by one (that one beside a running CI). */
#define MF_DS_GAP 4096

/* ---- the program's memory as runs (mf_mem) ---------------------------------------- */

/* Up to max iovecs for the next len bytes at m's cursor (not moved). */
static int mem_iov(const mf_mem *m, size_t len, struct iovec *out, int max)
{
    int k = 0;
    for (size_t i = m->i, in = m->in; len && i < m->n && k < max; i++, in = 0) {
        size_t take = m->iov[i].iov_len - in;
        if (take > len) take = len;
        out[k++] = (struct iovec){(char *)m->iov[i].iov_base + in, take};
        len -= take;
    }
    return k;
}

static void mem_skip(mf_mem *m, size_t len)
{
    while (len && m->i < m->n) {
        size_t take = m->iov[m->i].iov_len - m->in;
        if (take > len) take = len;
        len -= take;
        if ((m->in += take) == m->iov[m->i].iov_len) m->i++, m->in = 0;
    }
}

/* len bytes between w and the cursor (to_mem: into the program's memory). */
static void mem_copy(mf_mem *m, char *w, size_t len, bool to_mem)
{
    while (len && m->i < m->n) {
        char *p = (char *)m->iov[m->i].iov_base + m->in;
        size_t take = m->iov[m->i].iov_len - m->in;
        if (take > len) take = len;
        memcpy(to_mem ? p : w, to_mem ? w : p, take);
        w += take;
        len -= take;
        if ((m->in += take) == m->iov[m->i].iov_len) m->i++, m->in = 0;
    }
}

#define MF_IOV 64
/* preadv of len bytes at off into the cursor's memory, over short reads
 * and EINTR; the cursor moves by len. Bytes read before the end of the
 * file, or -1 (errno). */
static ssize_t mem_pread(int fd, mf_mem *m, size_t len, MPI_Offset off)
{
    size_t got = 0;
    while (got < len) {
        struct iovec iov[MF_IOV];
        int k = mem_iov(m, len - got, iov, MF_IOV);
        ssize_t r = preadv(fd, iov, k, off + (MPI_Offset)got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        mem_skip(m, (size_t)r);
        got += (size_t)r;
    }
    mem_skip(m, len - got);
    return (ssize_t)got;
}

/* pwritev of len bytes of the cursor's memory at off: 0 or an errno. */
static int mem_pwrite(int fd, mf_mem *m, size_t len, MPI_Offset off)
{
    size_t put = 0;
    while (put < len) {
        struct iovec iov[MF_IOV];
        int k = mem_iov(m, len - put, iov, MF_IOV);
        ssize_t r = pwritev(fd, iov, k, off + (MPI_Offset)put);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return errno;
        if (r == 0) return ENOSPC;
        mem_skip(m, (size_t)r);
        put += (size_t)r;
    }
    return 0;
}

/* Pieces i..j-1 one by one, written from the cursor (a window that could not be sieved). */
static int pieces_write(mpi_file *f, const mf_vec *v, size_t i, size_t j, mf_mem *m, size_t *done,
                        mf_err *e)
{
    for (size_t k = i; k < j; k++) {
        int err = mem_pwrite(f->fd, m, v->len[k], v->off[k]);
        if (err) return io_err(e, err, true, v->len[k], v->off[k]);
        *done += v->len[k];
    }
    return 0;
}

/* Pieces i..j-1 as one window (data sieving); *stop: the end of the file was
 * reached inside it. A write's window is locked by the caller (mf_pio_mem). */
static int sieve(mpi_file *f, const mf_vec *v, size_t i, size_t j, mf_mem *m, bool write,
                 size_t *done, bool *stop, mf_err *e)
{
    MPI_Offset lo = v->off[i], hi = vec_end(v, i, j);
    size_t wl = (size_t)(hi - lo);
    char *w = mf_scratch_get(f, wl);
    if (!w) return mf_set_err(e, MPI_ERR_NO_MEM, "out of memory for a %zu-byte window", wl);
    ssize_t got = mf_pread(f->fd, w, wl, lo);
    int rc = 0;
    if (got < 0) {
        if (!write || errno != EBADF)
            rc = io_err(e, errno, false, wl, lo);
        else /* write-only file: no holes can be read; write the pieces alone */
            rc = pieces_write(f, v, i, j, m, done, e);
        mf_scratch_put(f, w);
        return rc;
    }
    if (write) {
        if ((size_t)got < wl) memset(w + got, 0, wl - (size_t)got);
        for (size_t k = i; k < j; k++) mem_copy(m, w + (v->off[k] - lo), v->len[k], false);
        int err = mf_pwrite(f->fd, w, wl, lo);
        if (err)
            rc = io_err(e, err, true, wl, lo);
        else
            for (size_t k = i; k < j; k++) *done += v->len[k];
    } else {
        for (size_t k = i; k < j; k++) {
            MPI_Offset at = v->off[k] - lo;
            size_t have = at >= got ? 0 : (size_t)(got - at);
            size_t n = have < v->len[k] ? have : v->len[k];
            mem_copy(m, w + at, n, true);
            mem_skip(m, v->len[k] - n);
            *done += n;
            if (n < v->len[k]) {
                *stop = true;
                break;
            }
        }
    }
    mf_scratch_put(f, w);
    return rc;
}

int mf_pio(mpi_file *f, const mf_vec *v, char *data, bool write, size_t *done, mf_err *e)
{
    struct iovec one = {data, v->bytes};
    mf_mem m = {&one, 1, 0, 0};
    return mf_pio_mem(f, v, &m, write, done, e);
}

int mf_pio_mem(mpi_file *f, const mf_vec *v, mf_mem *m, bool write, size_t *done, mf_err *e)
{
    *done = 0;
    if (!v->n) return 0;
    MPI_Offset lo = v->off[0], hi = vec_end(v, 0, v->n);
    if (f->atomic) {
        int err = mf_lock(f, f->fd, write, lo, hi);
        if (err) return mf_set_err(e, MPI_ERR_IO, "cannot lock for atomic mode: %s", strerror(err));
    }
    int ds = write ? f->h.ds_write : f->h.ds_read;
    size_t wmax = (size_t)(write ? f->h.ind_wr_buffer_size : f->h.ind_rd_buffer_size);
    int rc = 0;
    bool stop = false;
    /* With offsets nondecreasing (every view's stream), the window that
     * starts at piece i + 1 reaches at least as far as i's: the window
     * [i, j) carries over from one piece to the next, so
     * pieces too sparse to sieve cost O(n), not O(n * pieces per window). */
    bool sorted = true;
    for (size_t k = 1; k < v->n && sorted; k++) sorted = v->off[k] >= v->off[k - 1];
    size_t j = 0;
    /* A sieved write locks from its first window to the access's end and
     * holds that to the end of the access (ROMIO's way): ranks whose
     * sieved writes interleave take turns once each, not once a window
     * (a wait and a wake-up each: 64 a rank for IOR's 2-rank strided
     * view, 0.3x ROMIO's bandwidth under load). held: its start; nolock:
     * the file system has no locks (windows go piece by piece). */
    MPI_Offset held = -1;
    bool nolock = false;
    for (size_t i = 0; i < v->n && !rc && !stop;) {
        if (!sorted || j <= i) j = i + 1;
        while (ds && j < v->n && (size_t)(v->off[j] + (MPI_Offset)v->len[j] - v->off[i]) <= wmax) {
            j++;
        }
        MPI_Offset span = v->off[j - 1] + (MPI_Offset)v->len[j - 1] - v->off[i];
        /* automatic: sieve a window whose pieces start on average within
         * MF_DS_GAP bytes of each other (a write: twice that) */
        if (j - i > 1 && (ds == 1 || span <= (MPI_Offset)(j - i) * MF_DS_GAP * (write ? 2 : 1))) {
            if (write && !f->atomic && held < 0 && !nolock) {
                nolock = mf_lock(f, f->fd, true, v->off[i], hi) != 0;
                if (!nolock) held = v->off[i];
            }
            rc = write && nolock ? pieces_write(f, v, i, j, m, done, e)
                                 : sieve(f, v, i, j, m, write, done, &stop, e);
            i = j;
            continue;
        }
        if (write) {
            int err = mem_pwrite(f->fd, m, v->len[i], v->off[i]);
            if (err)
                rc = io_err(e, err, true, v->len[i], v->off[i]);
            else
                *done += v->len[i];
        } else {
            ssize_t got = mem_pread(f->fd, m, v->len[i], v->off[i]);
            if (got < 0)
                rc = io_err(e, errno, false, v->len[i], v->off[i]);
            else {
                *done += (size_t)got;
                stop = (size_t)got < v->len[i];
            }
        }
        i++;
    }
    if (held >= 0) mf_unlock(f, f->fd, held, hi);
    if (f->atomic) mf_unlock(f, f->fd, lo, hi);
    return rc;
}
