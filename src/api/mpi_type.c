/* MPI datatypes: the predefined types, the derived-type constructors, and
 * packing of typed buffers into the byte streams the engine moves.
 *
 * A type is kept as its flattened type map for one instance (runs of bytes at
 * offsets, each run holding basic elements of one size), plus its bounds. Data
 * of a contiguous type goes to the engine as it is; any other type is packed
 * into a staging buffer (send) or unpacked from one (receive). Messages carry
 * bytes only, so sender and receiver must agree on the type signature, as MPI
 * requires.
 *
 * Invariants:
 *  - runs in a map are in type-map order, and adjacent runs with the same
 *    element size are merged, so a contiguous type has exactly one run;
 *  - 'base' is the predefined type all elements of a type share (-1: mixed);
 *    'raw' says count instances are count*extent bytes of 'base' elements laid
 *    back to back, which reductions may combine in place;
 *  - a derived type keeps the maps it was built from copied, so freeing an old
 *    type never changes a new one; predefined types cannot be freed;
 *  - the table holds pointers, and a type's storage never moves or is freed
 *    while the job runs (a freed slot is cleared and reused): a predefined
 *    type's map lives inside it, and callers keep mpi_type pointers across
 *    calls that create types (MPICH's lots_of_types once read freed memory
 *    after the table grew). */
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define NPREDEF 0x27 /* indices 1..0x26 */

typedef struct {
    const char *name;
    size_t size, align;
    size_t vsize, ioff; /* pair types: value size and offset of the int */
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
                i)                                                                                 \
    }
#define BASIC(name, T)                                                                             \
    {                                                                                              \
        name, sizeof(T), alignof(T), 0, 0                                                          \
    }

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
    [0x1d] = BASIC("MPI_C_FLOAT_COMPLEX", float _Complex),
    [0x1e] = BASIC("MPI_C_DOUBLE_COMPLEX", double _Complex),
    [0x1f] = BASIC("MPI_C_LONG_DOUBLE_COMPLEX", long double _Complex),
    [0x20] = BASIC("MPI_PACKED", unsigned char),
    [0x21] = PAIR("MPI_FLOAT_INT", float, int),
    [0x22] = PAIR("MPI_DOUBLE_INT", double, int),
    [0x23] = PAIR("MPI_LONG_INT", long, int),
    [0x24] = PAIR("MPI_2INT", int, int),
    [0x25] = PAIR("MPI_SHORT_INT", short, int),
    [0x26] = PAIR("MPI_LONG_DOUBLE_INT", long double, int),
};

mpi_type *mpi_type_get(int h)
{
    if (!h_is(h, K_TYPE)) return NULL;
    int i = h_idx(h);
    if (i <= 0 || i >= mpi_g.ntypes || !mpi_g.types[i] || !mpi_g.types[i]->used ||
        mpi_g.types[i]->dead)
        return NULL;
    return mpi_g.types[i];
}

mpi_type *mpi_type_at(int idx)
{
    return mpi_g.types[idx];
}

void mpi_type_unref(int idx)
{
    mpi_type *t = mpi_g.types[idx];
    if (--t->refs == 0 && t->dead) {
        free(t->blk);
        *t = (mpi_type){.idx = idx};
    }
}

/* Slot i of the table, its storage made on first use. */
static mpi_type *slot(cr_job *job, const char *call, int i)
{
    if (!mpi_g.types[i] && !(mpi_g.types[i] = calloc(1, sizeof *mpi_g.types[i])))
        cr_fatal(job, call, "out of memory for datatypes");
    mpi_g.types[i]->idx = i;
    return mpi_g.types[i];
}

void mpi_types_init(cr_job *job)
{
    mpi_g.ntypes = NPREDEF;
    mpi_g.types = calloc(64, sizeof *mpi_g.types);
    if (!mpi_g.types) cr_fatal(job, "MPI_Init", "out of memory for datatypes");
    for (int i = 1; i < NPREDEF; i++) {
        const predef_info *p = &predefs[i];
        mpi_type *t = slot(job, "MPI_Init", i);
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
                        .base = i,
                        .raw = true};
        snprintf(t->name, sizeof t->name, "%s", p->name);
        if (p->vsize) {
            t->size = p->vsize + sizeof(int);
            t->nblk = 2;
            t->one[0] = (mpi_blk){0, p->vsize, p->vsize};
            t->one[1] = (mpi_blk){(ptrdiff_t)p->ioff, sizeof(int), sizeof(int)};
            t->true_ub = (ptrdiff_t)(p->ioff + sizeof(int));
        } else {
            t->size = p->size;
            t->nblk = 1;
            t->one[0] = (mpi_blk){0, p->size, p->size};
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
                                                : "datatype %#x is not a valid datatype",
                        (unsigned)dt);
    if (!t->committed)
        return mpi_fail(job, comm, call, MPI_ERR_TYPE,
                        "datatype %#x is not committed: call MPI_Type_commit first", (unsigned)dt);
    *out = t;
    return 0;
}

void mpi_pack_data(const mpi_type *t, const void *in, size_t count, char *out)
{
    ptrdiff_t ext = type_extent(t);
    for (size_t i = 0; i < count; i++) {
        const char *b = (const char *)in + (ptrdiff_t)i * ext;
        for (int k = 0; k < t->nblk; k++) {
            memcpy(out, b + t->blk[k].off, t->blk[k].len);
            out += t->blk[k].len;
        }
    }
}

void mpi_unpack_data(const mpi_type *t, const char *in, size_t n, void *out, size_t count)
{
    ptrdiff_t ext = type_extent(t);
    for (size_t i = 0; i < count && n; i++) {
        char *b = (char *)out + (ptrdiff_t)i * ext;
        for (int k = 0; k < t->nblk && n; k++) {
            size_t l = t->blk[k].len < n ? t->blk[k].len : n;
            memcpy(b + t->blk[k].off, in, l);
            in += l;
            n -= l;
        }
    }
}

size_t mpi_elements(const mpi_type *t, size_t bytes)
{
    if (!t->size) return 0;
    size_t per = 0;
    for (int k = 0; k < t->nblk; k++) per += t->blk[k].len / t->blk[k].esz;
    size_t full = bytes / t->size, rem = bytes % t->size, n = full * per;
    for (int k = 0; k < t->nblk && rem; k++) {
        size_t l = t->blk[k].len < rem ? t->blk[k].len : rem;
        n += l / t->blk[k].esz;
        rem -= l;
    }
    return n;
}

/* ---- constructors ------------------------------------------------------------- */

/* A type under construction. */
typedef struct builder {
    mpi_blk *blk;
    int nblk, cap;
    size_t size, align;
    ptrdiff_t lb, ub, tlb, tub;
    bool any;  /* bounds set */
    int base;  /* -2: none yet */
    bool fail; /* out of memory */
} builder;

static void add_run(builder *b, ptrdiff_t off, size_t len, size_t esz)
{
    if (!len) return;
    if (b->nblk) {
        mpi_blk *l = &b->blk[b->nblk - 1];
        if (l->esz == esz && l->off + (ptrdiff_t)l->len == off) {
            l->len += len;
            goto bounds;
        }
    }
    if (b->nblk == b->cap) {
        int cap = b->cap ? 2 * b->cap : 8;
        mpi_blk *n = realloc(b->blk, (size_t)cap * sizeof *n);
        if (!n) {
            b->fail = true;
            return;
        }
        b->blk = n;
        b->cap = cap;
    }
    b->blk[b->nblk++] = (mpi_blk){off, len, esz};
bounds:
    b->size += len;
    if (b->size == len || off < b->tlb) b->tlb = off;
    if (b->size == len || off + (ptrdiff_t)len > b->tub) b->tub = off + (ptrdiff_t)len;
}

/* Append 'n' instances of t starting at displacement 'disp'. */
static void add_old(builder *b, const mpi_type *t, ptrdiff_t disp, size_t n)
{
    ptrdiff_t ext = type_extent(t);
    if (n) {
        ptrdiff_t last = (ptrdiff_t)(n - 1) * ext; /* extent may be negative */
        ptrdiff_t lo = disp + t->lb + (last < 0 ? last : 0);
        ptrdiff_t hi = disp + t->ub + (last > 0 ? last : 0);
        if (!b->any || lo < b->lb) b->lb = lo;
        if (!b->any || hi > b->ub) b->ub = hi;
        b->any = true;
        if (b->base == -2)
            b->base = t->base;
        else if (b->base != t->base)
            b->base = -1;
        if (t->align > b->align) b->align = t->align;
    }
    for (size_t i = 0; i < n && !b->fail; i++)
        for (int k = 0; k < t->nblk; k++)
            add_run(b, disp + (ptrdiff_t)i * ext + t->blk[k].off, t->blk[k].len, t->blk[k].esz);
}

static int type_new(cr_job *job, const char *call, builder *b, MPI_Datatype *out, bool pad,
                    bool raw)
{
    if (b->fail) {
        free(b->blk);
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_NO_MEM,
                        "out of memory for the type map");
    }
    int i = 1;
    while (i < mpi_g.ntypes && mpi_g.types[i] && mpi_g.types[i]->used) i++;
    if (i == mpi_g.ntypes) {
        if (mpi_g.ntypes % 64 == 0) {
            mpi_type **n = realloc(mpi_g.types, (size_t)(mpi_g.ntypes + 64) * sizeof *n);
            if (!n) cr_fatal(job, call, "out of memory for datatypes");
            memset(n + mpi_g.ntypes, 0, 64 * sizeof *n);
            mpi_g.types = n;
        }
        mpi_g.ntypes++;
    }
    mpi_type *t = slot(job, call, i);
    *t = (mpi_type){.idx = i,
                    .used = true,
                    .refs = 1,
                    .size = b->size,
                    .lb = b->lb,
                    .ub = b->ub,
                    .true_lb = b->tlb,
                    .true_ub = b->tub,
                    .align = b->align ? b->align : 1,
                    .nblk = b->nblk,
                    .blk = b->blk,
                    .base = b->base < 0 ? -1 : b->base};
    if (!b->any) t->lb = t->ub = 0;
    if (!b->size) t->true_lb = t->true_ub = 0;
    if (pad) { /* struct: round the extent up to the strictest alignment */
        ptrdiff_t ext = t->ub - t->lb, a = (ptrdiff_t)t->align;
        if (ext % a) t->ub += a - ext % a;
    }
    t->contig =
        t->nblk == 1 && t->blk[0].off == 0 && t->lb == 0 && (ptrdiff_t)t->size == type_extent(t);
    t->raw = t->base >= 0 && (raw || (t->contig && mpi_g.types[t->base]->contig));
    *out = (MPI_Datatype)(K_TYPE | (unsigned)i);
    return MPI_SUCCESS;
}

static int old_check(cr_job *job, const char *call, MPI_Datatype dt, mpi_type **out)
{
    mpi_type *t = mpi_type_get(dt);
    if (!t)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_TYPE,
                        "old datatype %#x is not a valid datatype", (unsigned)dt);
    *out = t;
    return 0;
}

static int count_check(cr_job *job, const char *call, int count, const char *what)
{
    if (count < 0)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COUNT, "%s %d is negative", what, count);
    return 0;
}

static int out_check(cr_job *job, const char *call, const void *p)
{
    if (!p) return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "newtype is NULL");
    return 0;
}

PMPI_WEAK(Type_contiguous);
int PMPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype)
{
    const char *call = "MPI_Type_contiguous";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = count_check(job, call, count, "count");
    if (!rc) rc = old_check(job, call, old, &t);
    if (!rc) rc = out_check(job, call, newtype);
    if (rc) return mpi_leave(job, rc);
    builder b = {.base = -2};
    add_old(&b, t, 0, (size_t)count);
    return mpi_leave(job, type_new(job, call, &b, newtype, false, t->raw && t->lb == 0));
}

static int hvector(const char *call, int count, int bl, ptrdiff_t stride, bool bytes,
                   MPI_Datatype old, MPI_Datatype *newtype)
{
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = count_check(job, call, count, "count");
    if (!rc) rc = count_check(job, call, bl, "blocklength");
    if (!rc) rc = old_check(job, call, old, &t);
    if (!rc) rc = out_check(job, call, newtype);
    if (rc) return mpi_leave(job, rc);
    builder b = {.base = -2};
    ptrdiff_t step = bytes ? stride : stride * type_extent(t);
    for (int i = 0; i < count; i++) add_old(&b, t, (ptrdiff_t)i * step, (size_t)bl);
    bool raw = t->raw && t->lb == 0 && step == (ptrdiff_t)bl * type_extent(t);
    return mpi_leave(job, type_new(job, call, &b, newtype, false, raw));
}

PMPI_WEAK(Type_vector);
int PMPI_Type_vector(int count, int bl, int stride, MPI_Datatype old, MPI_Datatype *newtype)
{
    return hvector("MPI_Type_vector", count, bl, stride, false, old, newtype);
}

PMPI_WEAK(Type_create_hvector);
int PMPI_Type_create_hvector(int count, int bl, MPI_Aint stride, MPI_Datatype old,
                             MPI_Datatype *newtype)
{
    return hvector("MPI_Type_create_hvector", count, bl, stride, true, old, newtype);
}

static int hindexed(const char *call, int count, const int *bls, int bl1, const int *idisp,
                    const MPI_Aint *adisp, MPI_Datatype old, MPI_Datatype *newtype)
{
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = count_check(job, call, count, "count");
    if (!rc) rc = old_check(job, call, old, &t);
    if (!rc) rc = out_check(job, call, newtype);
    if (!rc && count && ((!bls && bl1 < 0) || (!idisp && !adisp)))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "an array argument is NULL");
    for (int i = 0; !rc && i < count; i++)
        rc = count_check(job, call, bls ? bls[i] : bl1, "block length");
    if (rc) return mpi_leave(job, rc);
    builder b = {.base = -2};
    for (int i = 0; i < count; i++) {
        ptrdiff_t d = adisp ? adisp[i] : (ptrdiff_t)idisp[i] * type_extent(t);
        add_old(&b, t, d, (size_t)(bls ? bls[i] : bl1));
    }
    return mpi_leave(job, type_new(job, call, &b, newtype, false, false));
}

PMPI_WEAK(Type_indexed);
int PMPI_Type_indexed(int count, const int bls[], const int displs[], MPI_Datatype old,
                      MPI_Datatype *newtype)
{
    return hindexed("MPI_Type_indexed", count, bls, -1, displs, NULL, old, newtype);
}

PMPI_WEAK(Type_create_hindexed);
int PMPI_Type_create_hindexed(int count, const int bls[], const MPI_Aint displs[], MPI_Datatype old,
                              MPI_Datatype *newtype)
{
    return hindexed("MPI_Type_create_hindexed", count, bls, -1, NULL, displs, old, newtype);
}

PMPI_WEAK(Type_create_indexed_block);
int PMPI_Type_create_indexed_block(int count, int bl, const int displs[], MPI_Datatype old,
                                   MPI_Datatype *newtype)
{
    if (bl < 0) {
        cr_job *job = mpi_enter("MPI_Type_create_indexed_block");
        return mpi_leave(job, count_check(job, "MPI_Type_create_indexed_block", bl, "blocklength"));
    }
    return hindexed("MPI_Type_create_indexed_block", count, NULL, bl, displs, NULL, old, newtype);
}

PMPI_WEAK(Type_create_struct);
int PMPI_Type_create_struct(int count, const int bls[], const MPI_Aint displs[],
                            const MPI_Datatype types[], MPI_Datatype *newtype)
{
    const char *call = "MPI_Type_create_struct";
    cr_job *job = mpi_enter(call);
    int rc = count_check(job, call, count, "count");
    if (!rc) rc = out_check(job, call, newtype);
    if (!rc && count && (!bls || !displs || !types))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "an array argument is NULL");
    builder b = {.base = -2};
    for (int i = 0; !rc && i < count; i++) {
        mpi_type *t = NULL;
        rc = count_check(job, call, bls[i], "block length");
        if (!rc) rc = old_check(job, call, types[i], &t);
        if (!rc) add_old(&b, t, displs[i], (size_t)bls[i]);
    }
    if (rc) {
        free(b.blk);
        return mpi_leave(job, rc);
    }
    return mpi_leave(job, type_new(job, call, &b, newtype, true, false));
}

PMPI_WEAK(Type_create_resized);
int PMPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    const char *call = "MPI_Type_create_resized";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = old_check(job, call, old, &t);
    if (!rc) rc = out_check(job, call, newtype);
    if (rc) return mpi_leave(job, rc);
    builder b = {.base = -2};
    add_old(&b, t, 0, 1);
    b.lb = lb;
    b.ub = lb + extent;
    b.any = true;
    bool raw = t->raw && lb == 0 && extent == type_extent(t);
    return mpi_leave(job, type_new(job, call, &b, newtype, false, raw));
}

PMPI_WEAK(Type_dup);
int PMPI_Type_dup(MPI_Datatype old, MPI_Datatype *newtype)
{
    const char *call = "MPI_Type_dup";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = old_check(job, call, old, &t);
    if (!rc) rc = out_check(job, call, newtype);
    if (rc) return mpi_leave(job, rc);
    builder b = {.base = -2};
    add_old(&b, t, 0, 1);
    b.lb = t->lb;
    b.ub = t->ub;
    rc = type_new(job, call, &b, newtype, false, t->raw);
    if (!rc) mpi_g.types[h_idx(*newtype)]->committed = true;
    return mpi_leave(job, rc);
}

PMPI_WEAK(Type_commit);
int PMPI_Type_commit(MPI_Datatype *dt)
{
    const char *call = "MPI_Type_commit";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    if (!dt) return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "NULL"));
    int rc = old_check(job, call, *dt, &t);
    if (rc) return mpi_leave(job, rc);
    t->committed = true;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_free);
int PMPI_Type_free(MPI_Datatype *dt)
{
    const char *call = "MPI_Type_free";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    if (!dt) return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "NULL"));
    int rc = old_check(job, call, *dt, &t);
    if (rc) return mpi_leave(job, rc);
    if (t->predef)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_TYPE,
                                       "%s is predefined and cannot be freed", t->name));
    /* Receives still in flight keep the map until they have unpacked. */
    t->dead = true;
    mpi_type_unref(h_idx(*dt));
    *dt = MPI_DATATYPE_NULL;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_size);
int PMPI_Type_size(MPI_Datatype dt, int *size)
{
    const char *call = "MPI_Type_size";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = old_check(job, call, dt, &t);
    if (!rc && !size) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "size is NULL");
    if (rc) return mpi_leave(job, rc);
    *size = t->size > INT32_MAX ? MPI_UNDEFINED : (int)t->size;
    return mpi_leave(job, MPI_SUCCESS);
}

/* MPI_Type_get_extent (with lb/ub markers) and MPI_Type_get_true_extent (data only). */
static int get_extent(const char *call, MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent, bool true_)
{
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = old_check(job, call, dt, &t);
    if (!rc && (!lb || !extent))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "lb or extent is NULL");
    if (rc) return mpi_leave(job, rc);
    *lb = true_ ? t->true_lb : t->lb;
    *extent = true_ ? t->true_ub - t->true_lb : type_extent(t);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_get_extent);
int PMPI_Type_get_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
    return get_extent("MPI_Type_get_extent", dt, lb, extent, false);
}

PMPI_WEAK(Type_get_true_extent);
int PMPI_Type_get_true_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
    return get_extent("MPI_Type_get_true_extent", dt, lb, extent, true);
}

PMPI_WEAK(Get_address);
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    if (!address) return MPI_ERR_ARG;
    *address = (MPI_Aint)location;
    return MPI_SUCCESS;
}

PMPI_WEAK(Aint_add);
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return base + disp;
}

PMPI_WEAK(Aint_diff);
MPI_Aint PMPI_Aint_diff(MPI_Aint a, MPI_Aint b)
{
    return a - b;
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
    *size = (int)((size_t)incount * t->size);
    return mpi_leave(job, MPI_SUCCESS);
}
