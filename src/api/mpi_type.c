/* MPI datatypes: the predefined types, the table, and packing of typed
 * buffers into the byte streams the engine moves. The derived-type
 * constructors (with the envelopes MPI_Type_get_contents returns), commit,
 * free and the queries are in mpi_type_new.c; names, contents, external32, the
 * _x forms and datatype attributes in mpi_type_more.c. The invariants below
 * are the three files'.
 *
 * A type is kept as its type map for one instance, compressed, plus its size,
 * element count and bounds. The map is a list of entries (mpi_blk), each a
 * run of bytes holding basic elements of one size, either plain or repeated
 * at up to two strides (mpi_rep: n[0] times s[0] apart, all that n[1] times
 * s[1] apart; kept in a side table, so that a plain entry stays 24 bytes:
 * packing reads the whole map for every instance, and irregular maps of
 * plain runs pack as fast as when maps were flat); the list, one "period",
 * is itself repeated reps times rstride apart. So a vector of vectors of
 * vectors of a simple type, or an array of a struct, is one entry or one
 * short period whatever its counts: making, committing, querying and freeing
 * it costs time and memory independent of the counts, and packing streams
 * over the entries, never unrolling them. Repetition sits in each entry, not
 * only in the period (MPICH-like "period x count"), so that a huge regular
 * piece beside other data (a struct holding a huge vector) stays one entry;
 * the period adds a third level and keeps arrays of multi-run types small.
 * What fits neither is unrolled, at most MAP_MAX entries: a type that would
 * need more is refused (MPI_ERR_INTERN). Data of a contiguous type goes
 * to the engine as it is; any other type is packed into a staging buffer
 * (send) or unpacked from one (receive). Messages carry bytes only, so sender
 * and receiver must agree on the type signature, as MPI requires.
 *
 * Invariants:
 *  - entries are in type-map order, and the runs they stand for too (entry
 *    by entry, j outer, i inner; period by period); a run appended after a
 *    plain run that it continues (back to back with the same element size)
 *    is merged into it, and a repetition that continues the stride of an
 *    entry or of the period folds into it, so a contiguous type is exactly
 *    one plain entry at 0 with reps 1 ('contig');
 *  - an entry is repeated (rep > 0, its own mpi_rep) only if n[0] > 1, and
 *    n[1] > 1 only if n[0] > 1; reps > 1 only if the period's entries could
 *    not take the repetition themselves;
 *  - size, nelem and the bounds are of the whole instance, summed by the
 *    builder as it goes, never by walking a map: queries take constant time,
 *    and counting elements of a part of an instance walks one period at most;
 *  - 'base' is the predefined type all elements of a type share (-1: mixed);
 *    'raw' says count instances are count*extent bytes of 'base' elements laid
 *    back to back, which reductions may combine in place;
 *  - a derived type keeps the maps it was built from copied, so freeing an old
 *    type never changes a new one; predefined types cannot be freed;
 *  - every derived type records its envelope (mpi_env: combiner and copies of
 *    the constructor's arguments) and is built from it: mpi_type_enum lists
 *    the runs of old-type instances an envelope describes, in type-map order,
 *    and the constructors, MPI_Type_get_contents' copies and the external32
 *    walk all use it, so they cannot disagree; the envelope holds a reference
 *    (refs) on each derived type it names, so a type freed by the program
 *    lives on, unreachable by its handle, while a type made from it does;
 *  - subarray and darray types have lb 0 and the extent of the whole array
 *    (MPI-3.1 4.1.3, 4.1.4); darray's process grid is row-major whatever the
 *    order, and the indices a process holds in each dimension are blocks of
 *    k every step (grid_at);
 *  - the Fortran and C++ predefined types of 0x27..0x3e are twins of C
 *    types: their map, reductions ('base') and external32 form are the twin's;
 *    those of 0x3f..0x43 (MPI_2REAL, MPI_INTEGER16, MPI_REAL16, ...) have no
 *    C counterpart and are basic types of their own, as the C ones; 0x44
 *    (MPI_LOGICAL16, MPI-5.0) is MPI_INTEGER16's twin;
 *  - the table holds pointers, and a type's storage never moves or is freed
 *    while the job runs (a freed slot is cleared and reused): a predefined
 *    type's map lives inside it, and callers keep mpi_type pointers across
 *    calls that create types (MPICH's lots_of_types once read freed memory
 *    after the table grew). */
#include <limits.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define NPREDEF MPI_NPREDEF /* twins[i] != 0: a Fortran or C++ twin of a C type */

typedef struct {
    const char *name;
    size_t size, align;
    size_t vsize, ioff, isize; /* pair types: value size, offset and size of the index */
} predef_info;

#define PAIR(name, T, I)                                                                           \
    {                                                                                              \
        name, sizeof(struct {                                                                      \
            T v;                                                                                   \
            I i;                                                                                   \
        }),                                                                                        \
            alignof(struct {                                                                       \
                T v;                                                                               \
                I i;                                                                               \
            }),                                                                                    \
            sizeof(T),                                                                             \
            offsetof(                                                                              \
                struct {                                                                           \
                    T v;                                                                           \
                    I i;                                                                           \
                },                                                                                 \
                i),                                                                                \
            sizeof(I)                                                                              \
    }
#define BASIC(name, T)                                                                             \
    {                                                                                              \
        name, sizeof(T), alignof(T), 0, 0, 0                                                       \
    }

/* Bytes of each predefined type in "external32" (MPI-3.1 13.5.2, Table 13.2). */
static const unsigned char xsizes[NPREDEF] = {
    [0x01] = 1,  [0x02] = 1,  [0x03] = 1,  [0x04] = 1, [0x05] = 2,  [0x06] = 2,  [0x07] = 4,
    [0x08] = 4,  [0x09] = 4,  [0x0a] = 4,  [0x0b] = 8, [0x0c] = 8,  [0x0d] = 4,  [0x0e] = 8,
    [0x0f] = 16, [0x10] = 2,  [0x11] = 1,  [0x12] = 1, [0x13] = 2,  [0x14] = 4,  [0x15] = 8,
    [0x16] = 1,  [0x17] = 2,  [0x18] = 4,  [0x19] = 8, [0x1a] = 8,  [0x1b] = 8,  [0x1c] = 8,
    [0x1d] = 8,  [0x1e] = 16, [0x1f] = 32, [0x20] = 1, [0x21] = 8,  [0x22] = 12, [0x23] = 8,
    [0x24] = 8,  [0x25] = 6,  [0x26] = 20, [0x3f] = 8, [0x40] = 16, [0x41] = 16, [0x42] = 16,
    [0x43] = 32,
};

/* The Fortran and C++ types C programs can name (MPI-3.1 17.2.4), each laid out
 * like a C type (its twin): it has the twin's map, external32 size and
 * reductions ('base' is the twin), and its own name. */
static const unsigned char twins[NPREDEF] = {
    [0x27] = 0x01, /* MPI_CHARACTER */
    [0x28] = 0x07, /* MPI_LOGICAL */
    [0x29] = 0x07, /* MPI_INTEGER */
    [0x2a] = 0x0d, /* MPI_REAL */
    [0x2b] = 0x0e, /* MPI_DOUBLE_PRECISION */
    [0x2c] = 0x1d, /* MPI_COMPLEX */
    [0x2d] = 0x1e, /* MPI_DOUBLE_COMPLEX */
    [0x2e] = 0x24, /* MPI_2INTEGER */
    [0x2f] = 0x12, /* MPI_INTEGER1 */
    [0x30] = 0x13, /* MPI_INTEGER2 */
    [0x31] = 0x14, /* MPI_INTEGER4 */
    [0x32] = 0x15, /* MPI_INTEGER8 */
    [0x33] = 0x0d, /* MPI_REAL4 */
    [0x34] = 0x0e, /* MPI_REAL8 */
    [0x35] = 0x1d, /* MPI_COMPLEX8 */
    [0x36] = 0x1e, /* MPI_COMPLEX16 */
    [0x37] = 0x11, /* MPI_CXX_BOOL */
    [0x38] = 0x1d, /* MPI_CXX_FLOAT_COMPLEX */
    [0x39] = 0x1e, /* MPI_CXX_DOUBLE_COMPLEX */
    [0x3a] = 0x1f, /* MPI_CXX_LONG_DOUBLE_COMPLEX */
    [0x3b] = 0x12, /* MPI_LOGICAL1 */
    [0x3c] = 0x13, /* MPI_LOGICAL2 */
    [0x3d] = 0x14, /* MPI_LOGICAL4 */
    [0x3e] = 0x15, /* MPI_LOGICAL8 */
    [0x44] = 0x41, /* MPI_LOGICAL16 */
};
static const char *const twin_names[NPREDEF] = {
    [0x27] = "MPI_CHARACTER",
    [0x28] = "MPI_LOGICAL",
    [0x29] = "MPI_INTEGER",
    [0x2a] = "MPI_REAL",
    [0x2b] = "MPI_DOUBLE_PRECISION",
    [0x2c] = "MPI_COMPLEX",
    [0x2d] = "MPI_DOUBLE_COMPLEX",
    [0x2e] = "MPI_2INTEGER",
    [0x2f] = "MPI_INTEGER1",
    [0x30] = "MPI_INTEGER2",
    [0x31] = "MPI_INTEGER4",
    [0x32] = "MPI_INTEGER8",
    [0x33] = "MPI_REAL4",
    [0x34] = "MPI_REAL8",
    [0x35] = "MPI_COMPLEX8",
    [0x36] = "MPI_COMPLEX16",
    [0x37] = "MPI_CXX_BOOL",
    [0x38] = "MPI_CXX_FLOAT_COMPLEX",
    [0x39] = "MPI_CXX_DOUBLE_COMPLEX",
    [0x3a] = "MPI_CXX_LONG_DOUBLE_COMPLEX",
    [0x3b] = "MPI_LOGICAL1",
    [0x3c] = "MPI_LOGICAL2",
    [0x3d] = "MPI_LOGICAL4",
    [0x3e] = "MPI_LOGICAL8",
    [0x44] = "MPI_LOGICAL16",
};

static const predef_info predefs[NPREDEF] = {
    [0x01] = BASIC("MPI_CHAR", char),
    [0x02] = BASIC("MPI_SIGNED_CHAR", signed char),
    [0x03] = BASIC("MPI_UNSIGNED_CHAR", unsigned char),
    [0x04] = BASIC("MPI_BYTE", unsigned char),
    [0x05] = BASIC("MPI_SHORT", short),
    [0x06] = BASIC("MPI_UNSIGNED_SHORT", unsigned short),
    [0x07] = BASIC("MPI_INT", int),
    [0x08] = BASIC("MPI_UNSIGNED", unsigned),
    [0x09] = BASIC("MPI_LONG", long),
    [0x0a] = BASIC("MPI_UNSIGNED_LONG", unsigned long),
    [0x0b] = BASIC("MPI_LONG_LONG_INT", long long),
    [0x0c] = BASIC("MPI_UNSIGNED_LONG_LONG", unsigned long long),
    [0x0d] = BASIC("MPI_FLOAT", float),
    [0x0e] = BASIC("MPI_DOUBLE", double),
    [0x0f] = BASIC("MPI_LONG_DOUBLE", long double),
    [0x10] = BASIC("MPI_WCHAR", wchar_t),
    [0x11] = BASIC("MPI_C_BOOL", _Bool),
    [0x12] = BASIC("MPI_INT8_T", int8_t),
    [0x13] = BASIC("MPI_INT16_T", int16_t),
    [0x14] = BASIC("MPI_INT32_T", int32_t),
    [0x15] = BASIC("MPI_INT64_T", int64_t),
    [0x16] = BASIC("MPI_UINT8_T", uint8_t),
    [0x17] = BASIC("MPI_UINT16_T", uint16_t),
    [0x18] = BASIC("MPI_UINT32_T", uint32_t),
    [0x19] = BASIC("MPI_UINT64_T", uint64_t),
    [0x1a] = BASIC("MPI_AINT", MPI_Aint),
    [0x1b] = BASIC("MPI_OFFSET", MPI_Offset),
    [0x1c] = BASIC("MPI_COUNT", MPI_Count),
    [0x1d] = BASIC("MPI_C_COMPLEX", float _Complex), /* MPI_C_FLOAT_COMPLEX is the same */
    [0x1e] = BASIC("MPI_C_DOUBLE_COMPLEX", double _Complex),
    [0x1f] = BASIC("MPI_C_LONG_DOUBLE_COMPLEX", long double _Complex),
    [0x20] = BASIC("MPI_PACKED", unsigned char),
    [0x21] = PAIR("MPI_FLOAT_INT", float, int),
    [0x22] = PAIR("MPI_DOUBLE_INT", double, int),
    [0x23] = PAIR("MPI_LONG_INT", long, int),
    [0x24] = PAIR("MPI_2INT", int, int),
    [0x25] = PAIR("MPI_SHORT_INT", short, int),
    [0x26] = PAIR("MPI_LONG_DOUBLE_INT", long double, int),
    [0x3f] = PAIR("MPI_2REAL", float, float),
    [0x40] = PAIR("MPI_2DOUBLE_PRECISION", double, double),
    [0x41] = BASIC("MPI_INTEGER16", mpi_i128),
    [0x42] = BASIC("MPI_REAL16", mpi_quad),
    [0x43] = BASIC("MPI_COMPLEX32", mpi_cquad),
};

mpi_type *mpi_type_at(int idx)
{
    return mpi_st()->types[idx];
}

mpi_type *mpi_type_slot(cr_job *job, const char *call, int i)
{
    mpi_type **t = &job->mpi->types[i];
    if (!*t && !(*t = calloc(1, sizeof **t))) cr_fatal(job, call, "out of memory for datatypes");
    (*t)->idx = i;
    return *t;
}

/* A plain run: len bytes at off, elements of esz bytes, no repetition. */
static mpi_blk run_at(ptrdiff_t off, size_t len, size_t esz)
{
    return (mpi_blk){off, len, (uint32_t)esz, 0};
}

void mpi_types_init(cr_job *job)
{
    job->mpi->ntypes = NPREDEF;
    job->mpi->types = calloc((NPREDEF + 63) / 64 * 64, sizeof *job->mpi->types);
    if (!job->mpi->types) cr_fatal(job, "MPI_Init", "out of memory for datatypes");
    for (int i = 1; i < NPREDEF; i++) {
        int c = twins[i] ? twins[i] : i;
        const predef_info *p = &predefs[c];
        mpi_type *t = mpi_type_slot(job, "MPI_Init", i);
        *t = (mpi_type){.idx = i,
                        .used = true,
                        .predef = true,
                        .committed = true,
                        .refs = 1,
                        .lb = 0,
                        .ub = (ptrdiff_t)p->size,
                        .true_lb = 0,
                        .align = p->align,
                        .blk = t->one,
                        .reps = 1,
                        .base = c,
                        .raw = true,
                        .xsize = xsizes[c]};
        snprintf(t->name, sizeof t->name, "%s", twins[i] ? twin_names[i] : p->name);
        if (p->vsize) {
            t->size = p->vsize + p->isize;
            t->nblk = 2;
            t->nelem = 2;
            t->unit = mpi_gcd(p->vsize, p->isize);
            t->one[0] = run_at(0, p->vsize, p->vsize);
            t->one[1] = run_at((ptrdiff_t)p->ioff, p->isize, p->isize);
            t->true_ub = (ptrdiff_t)(p->ioff + p->isize);
        } else {
            t->size = p->size;
            t->nblk = 1;
            t->nelem = 1;
            t->unit = p->size;
            t->one[0] = run_at(0, p->size, p->size);
            t->true_ub = (ptrdiff_t)p->size;
            t->contig = true;
        }
    }
}

int mpi_type_check(cr_job *job, MPI_Comm comm, const char *call, MPI_Datatype dt, mpi_type **out)
{
    mpi_type *t = mpi_type_get(dt);
    if (!t)
        return mpi_fail(job, comm, call, MPI_ERR_TYPE,
                        dt == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
                        : mpi_type_freed(dt)    ? "datatype %#x was freed (MPI_Type_free): use one "
                                                  "that is still allocated"
                                                : "datatype %#x is not a valid datatype",
                        (unsigned)dt);
    if (!t->committed)
        return mpi_fail(job, comm, call, MPI_ERR_TYPE,
                        "datatype %#x is not committed: call MPI_Type_commit first", (unsigned)dt);
    *out = t;
    return 0;
}

int mpi_type_check_n(cr_job *job, MPI_Comm comm, const char *call, MPI_Datatype dt, MPI_Count count,
                     mpi_type **out)
{
    if (dt == MPI_DATATYPE_NULL && count == 0) {
        *out = mpi_type_get(MPI_BYTE);
        return 0;
    }
    return mpi_type_check(job, comm, call, dt, out);
}

/* n copies of len bytes from src to dst, the source advancing sstep bytes and
 * the destination dstep bytes each time (with a constant size where common). */
static void copy_runs(char *dst, ptrdiff_t dstep, const char *src, ptrdiff_t sstep, size_t n,
                      size_t len)
{
    if (len == 4)
        for (size_t i = 0; i < n; i++, dst += dstep, src += sstep) memcpy(dst, src, 4);
    else if (len == 8)
        for (size_t i = 0; i < n; i++, dst += dstep, src += sstep) memcpy(dst, src, 8);
    else if (len == 16)
        for (size_t i = 0; i < n; i++, dst += dstep, src += sstep) memcpy(dst, src, 16);
    else
        for (size_t i = 0; i < n; i++, dst += dstep, src += sstep) memcpy(dst, src, len);
}

/* Move the runs of entry e (repeated as rp says) of the instance at base to
 * (pack) or from the byte stream at *s, in type-map order, at most *left bytes
 * (a short end moves a prefix of a run). */
static void blk_move(const mpi_rep *rp, const mpi_blk *e, char *base, char **s, size_t *left,
                     bool pack)
{
    size_t len = e->len, n = rp->n[0];
    ptrdiff_t step = rp->s[0];
    for (size_t j = 0; j < rp->n[1] && *left; j++) {
        char *p = base + e->off + (ptrdiff_t)j * rp->s[1];
        size_t whole = *left / len < n ? *left / len : n;
        if (pack)
            copy_runs(*s, (ptrdiff_t)len, p, step, whole, len);
        else
            copy_runs(p, step, *s, (ptrdiff_t)len, whole, len);
        *s += whole * len;
        *left -= whole * len;
        if (whole < n) { /* *left < len: a prefix of the next run ends the stream */
            p += (ptrdiff_t)whole * step;
            if (pack)
                memcpy(*s, p, *left);
            else
                memcpy(p, *s, *left);
            *s += *left;
            *left = 0;
        }
    }
}

/* len bytes from src to dst, with a constant size where common. */
static inline void copy_run(char *dst, const char *src, size_t len)
{
    if (len == 8)
        memcpy(dst, src, 8);
    else if (len == 4)
        memcpy(dst, src, 4);
    else
        memcpy(dst, src, len);
}

/* The same for count instances of t from base: the whole map, period by
 * period (plain runs copied here, the rest by blk_move). */
static void map_move(const mpi_type *t, char *base, size_t count, char **s, size_t *left, bool pack)
{
    ptrdiff_t ext = type_extent(t), rstride = t->rstride; /* locals: memcpy may alias t */
    size_t reps = t->reps;
    const mpi_blk *blk = t->blk, *end = blk + t->nblk;
    char *sp = *s;
    size_t lf = *left;
    if (t->contig) { /* count instances are one run: one copy, not one per instance */
        size_t n = count * t->size < lf ? count * t->size : lf;
        if (pack)
            memcpy(sp, base, n);
        else
            memcpy(base, sp, n);
        *s = sp + n;
        *left = lf - n;
        return;
    }
    for (size_t i = 0; i < count && lf; i++)
        for (size_t r = 0; r < reps && lf; r++) {
            char *b = base + (ptrdiff_t)i * ext + (ptrdiff_t)r * rstride;
            for (const mpi_blk *e = blk; e < end && lf; e++) {
                if (!e->rep && e->len <= lf) { /* a whole plain run */
                    if (pack)
                        copy_run(sp, b + e->off, e->len);
                    else
                        copy_run(b + e->off, sp, e->len);
                    sp += e->len;
                    lf -= e->len;
                } else {
                    blk_move(mpi_rep_of(t, e), e, b, &sp, &lf, pack);
                }
            }
        }
    *s = sp;
    *left = lf;
}

void mpi_pack_data(const mpi_type *t, const void *in, size_t count, char *out)
{
    size_t left = SIZE_MAX;
    map_move(t, (char *)in, count, &out, &left, true);
}

void mpi_unpack_data(const mpi_type *t, const char *in, size_t n, void *out, size_t count)
{
    char *s = (char *)in;
    map_move(t, out, count, &s, &n, false);
}

void mpi_type_runs(const mpi_type *t, size_t count,
                   void (*cb)(void *ctx, ptrdiff_t off, size_t len), void *ctx)
{
    ptrdiff_t ext = type_extent(t), at = 0;
    size_t have = 0; /* the run being gathered: have bytes at 'at' */
    if (t->contig) { /* one run, whatever the count */
        if (t->size && count) cb(ctx, 0, t->size * count);
        return;
    }
    for (size_t i = 0; i < count; i++)
        for (size_t r = 0; r < t->reps; r++) {
            ptrdiff_t b = (ptrdiff_t)i * ext + (ptrdiff_t)r * t->rstride;
            for (const mpi_blk *e = t->blk; e < t->blk + t->nblk; e++) {
                const mpi_rep *rp = mpi_rep_of(t, e);
                for (size_t j = 0; j < rp->n[1]; j++)
                    for (size_t k = 0; k < rp->n[0]; k++) {
                        ptrdiff_t off =
                            b + e->off + (ptrdiff_t)j * rp->s[1] + (ptrdiff_t)k * rp->s[0];
                        if (!e->len) continue;
                        if (have && off == at + (ptrdiff_t)have) {
                            have += e->len;
                            continue;
                        }
                        if (have) cb(ctx, at, have);
                        at = off;
                        have = e->len;
                    }
            }
        }
    if (have) cb(ctx, at, have);
}

size_t mpi_elements(const mpi_type *t, size_t bytes)
{
    if (!t->size) return 0;
    size_t psize = t->size / t->reps, rem = bytes % psize; /* whole periods, then a part */
    size_t n = bytes / psize * (t->nelem / t->reps);
    for (int k = 0; k < t->nblk && rem; k++) {
        const mpi_blk *e = &t->blk[k];
        const mpi_rep *rp = mpi_rep_of(t, e);
        size_t runs = rp->n[0] * rp->n[1], whole = rem / e->len < runs ? rem / e->len : runs;
        n += whole * (e->len / e->esz);
        rem -= whole * e->len;
        if (whole < runs) {                             /* ends in this entry, rem < len */
            if (rem % e->esz) return MPI_ELEMENTS_PART; /* inside a basic element */
            n += rem / e->esz;
            break;
        }
    }
    return n;
}

/* ---- pack and unpack --------------------------------------------------------- */

/* The checks MPI_Pack and MPI_Unpack share: count elements of dt to or from a
 * packed buffer of size bytes at *position. Sets *t and *n (bytes moved). */
static int pack_check(cr_job *job, const char *call, MPI_Comm comm, MPI_Datatype dt, int count,
                      const void *packed, int size, const int *position, mpi_type **t, size_t *n)
{
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = mpi_type_check(job, comm, call, dt, t);
    if (rc) return rc;
    if (count < 0 || size < 0)
        return mpi_fail(job, comm, call, MPI_ERR_COUNT, "%s %d is negative",
                        count < 0 ? "count" : "buffer size", count < 0 ? count : size);
    if (!position || *position < 0 || (!packed && size))
        return mpi_fail(job, comm, call, MPI_ERR_ARG,
                        "position is NULL or negative, or the packed buffer is NULL");
    *n = (size_t)count * (*t)->size;
    if ((size_t)*position + *n > (size_t)size)
        return mpi_fail(job, comm, call, MPI_ERR_TRUNCATE,
                        "%zu bytes at position %d do not fit the %d-byte packed buffer", *n,
                        *position, size);
    return MPI_SUCCESS;
}

PMPI_WEAK(Pack);
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    cr_job *job = mpi_enter("MPI_Pack");
    mpi_type *t = NULL;
    size_t n = 0;
    int rc = pack_check(job, "MPI_Pack", comm, dt, incount, outbuf, outsize, position, &t, &n);
    if (rc) return mpi_leave(job, rc);
    mpi_pack_data(t, inbuf, (size_t)incount, (char *)outbuf + *position);
    *position += (int)n;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Unpack);
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype dt, MPI_Comm comm)
{
    cr_job *job = mpi_enter("MPI_Unpack");
    mpi_type *t = NULL;
    size_t n = 0;
    int rc = pack_check(job, "MPI_Unpack", comm, dt, outcount, inbuf, insize, position, &t, &n);
    if (rc) return mpi_leave(job, rc);
    mpi_unpack_data(t, (const char *)inbuf + *position, n, outbuf, (size_t)outcount);
    *position += (int)n;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Pack_size);
int PMPI_Pack_size(int incount, MPI_Datatype dt, MPI_Comm comm, int *size)
{
    const char *call = "MPI_Pack_size";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *t = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = mpi_type_check(job, comm, call, dt, &t);
    if (!rc && incount < 0)
        rc = mpi_fail(job, comm, call, MPI_ERR_COUNT, "incount %d is negative", incount);
    if (!rc && !size) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "size is NULL");
    if (rc) return mpi_leave(job, rc);
    size_t n = (size_t)incount * t->size; /* past an int: MPI_UNDEFINED, as MPI_Type_size */
    *size = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return mpi_leave(job, MPI_SUCCESS);
}
