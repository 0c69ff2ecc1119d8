/* MPI datatypes, the calls around the constructors (mpi_type_new.c): names,
 * envelopes and contents, the "external32" representation and the layout of a
 * type in a file's data representation (MPI-IO views), the _x forms and
 * status helpers, MPI_Type_match_size, and datatype attributes.
 *
 * Invariants:
 *  - MPI_Type_get_contents returns predefined types as they are and, for each
 *    derived one, a new handle rebuilt from the recorded envelope (the
 *    original may have been freed: a type keeps the types it was made from
 *    alive through a reference), which the caller frees;
 *  - external32 data is walked element by element in type-map order through
 *    the envelopes (mpi_type_enum), since the compressed map no longer knows
 *    which basic type each run holds; sizes differ from the native ones
 *    (MPI_LONG: 4 bytes, MPI_WCHAR: 2, MPI_LONG_DOUBLE: IEEE binary128),
 *    integers are truncated on the way out and sign- or zero-extended back;
 *  - a type's layout in a file's representation (mpi_type_file_layout, for
 *    MPI-IO's views) comes from the same groups as its memory layout
 *    (mpi_type_groups), in the representation's extents;
 *  - datatype keyvals have their own table (handles K_KEYVAL with bit 24 set,
 *    so a communicator keyval is never taken for one, nor the reverse); a
 *    freed keyval stays in the table so that values set with it can still be
 *    copied and deleted. */
#include <float.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

static int type_arg(cr_job *job, const char *call, MPI_Datatype dt, mpi_type **out)
{
    mpi_type *t = mpi_type_get(dt);
    if (!t)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_TYPE,
                        dt == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
                        : mpi_type_freed(dt)    ? "datatype %#x was freed (MPI_Type_free): use one "
                                                  "that is still allocated"
                                                : "datatype %#x is not a valid datatype",
                        (unsigned)dt);
    *out = t;
    return 0;
}

static int null_arg(cr_job *job, const char *call, const void *p, const char *what)
{
    if (!p) return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "%s is NULL", what);
    return 0;
}

/* ---- names ------------------------------------------------------------------- */

PMPI_WEAK(Type_set_name);
int PMPI_Type_set_name(MPI_Datatype dt, const char *name)
{
    const char *call = "MPI_Type_set_name";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, dt, &t);
    if (!rc) rc = null_arg(job, call, name, "type_name");
    if (rc) return mpi_leave(job, rc);
    snprintf(t->name, sizeof t->name, "%s", name); /* longer names are cut */
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_get_name);
int PMPI_Type_get_name(MPI_Datatype dt, char *name, int *resultlen)
{
    const char *call = "MPI_Type_get_name";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    const char *marker = mpi_legacy_marker_name(dt);           /* MPI_LB, MPI_UB: names, no types */
    if (dt == MPI_DATATYPE_NULL) marker = "MPI_DATATYPE_NULL"; /* MPI-4.1: named too */
    int rc = marker ? MPI_SUCCESS : type_arg(job, call, dt, &t);
    if (!rc) rc = null_arg(job, call, name, "type_name");
    if (!rc) rc = null_arg(job, call, resultlen, "resultlen");
    if (rc) return mpi_leave(job, rc);
    *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", marker ? marker : t->name);
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- envelopes and contents ----------------------------------------------------- */

/* What MPI_Type_get_envelope(_c) says of t: *n = integers, addresses, large
 * counts, datatypes. */
static void envelope_of(const mpi_type *t, MPI_Count n[4], int *combiner)
{
    const mpi_env *e = t->env;
    n[0] = e ? e->ni : 0;
    n[1] = e ? e->na : 0;
    n[2] = e ? e->nc : 0;
    n[3] = !e || mpi_type_is_f90(t) ? 0 : e->nd; /* the named type it holds is not shown */
    *combiner = e ? e->combiner : MPI_COMBINER_NAMED;
}

/* A type whose envelope holds large counts cannot be described by the int
 * forms: MPI_ERR_TYPE (MPI-4.1 §6.1.13; MPI-4.0's errata made it that class,
 * not MPI_ERR_VALUE_TOO_LARGE). */
static int large_refused(cr_job *job, const char *call, const mpi_type *t)
{
    if (!t->env || !t->env->nc) return 0;
    return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_TYPE,
                    "the datatype was made by a large-count constructor with a value past "
                    "INT_MAX, which an int cannot hold: use %s_c",
                    call);
}

PMPI_WEAK(Type_get_envelope);
int PMPI_Type_get_envelope(MPI_Datatype dt, int *ni, int *na, int *nd, int *combiner)
{
    const char *call = "MPI_Type_get_envelope";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, dt, &t);
    if (!rc && (!ni || !na || !nd || !combiner))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "an output argument is NULL");
    if (!rc) rc = large_refused(job, call, t);
    if (rc) return mpi_leave(job, rc);
    MPI_Count n[4];
    envelope_of(t, n, combiner);
    *ni = (int)n[0], *na = (int)n[1], *nd = (int)n[3];
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_get_envelope_c);
int PMPI_Type_get_envelope_c(MPI_Datatype dt, MPI_Count *ni, MPI_Count *na, MPI_Count *nc,
                             MPI_Count *nd, int *combiner)
{
    const char *call = "MPI_Type_get_envelope_c";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, dt, &t);
    if (!rc && (!ni || !na || !nc || !nd || !combiner))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "an output argument is NULL");
    if (rc) return mpi_leave(job, rc);
    MPI_Count n[4];
    envelope_of(t, n, combiner);
    *ni = n[0], *na = n[1], *nc = n[2], *nd = n[3];
    return mpi_leave(job, MPI_SUCCESS);
}

/* MPI-4.1 MPI_Type_get_value_index: the predefined pair type of a value type
 * and an index type (for MPI_MINLOC/MPI_MAXLOC), MPI_DATATYPE_NULL where none
 * is predefined. The pairs are named types: MPI_Type_get_envelope says
 * MPI_COMBINER_NAMED for them, as MPICH does. */
PMPI_WEAK(Type_get_value_index);
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype *pair_type)
{
    static const MPI_Datatype pairs[][3] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    const char *call = "MPI_Type_get_value_index";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, value_type, &t);
    if (!rc) rc = type_arg(job, call, index_type, &t);
    if (!rc) rc = null_arg(job, call, pair_type, "pair_type");
    if (rc) return mpi_leave(job, rc);
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (pairs[i][0] == value_type && pairs[i][1] == index_type) *pair_type = pairs[i][2];
    return mpi_leave(job, MPI_SUCCESS);
}

/* MPI_Type_get_contents(_c): counts and max_counts only for the _c form
 * (large: true). */
static int contents(const char *call, bool large, MPI_Datatype dt, MPI_Count max_ints,
                    MPI_Count max_aints, MPI_Count max_counts, MPI_Count max_types, int ints[],
                    MPI_Aint aints[], MPI_Count counts[], MPI_Datatype types[])
{
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, dt, &t);
    if (!rc && !t->env)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_TYPE,
                      "%s is predefined (MPI_COMBINER_NAMED): it has no contents", t->name);
    if (!rc && !large) rc = large_refused(job, call, t);
    if (rc) return mpi_leave(job, rc);
    const mpi_env *e = t->env;
    int nd = mpi_type_is_f90(t) ? 0 : e->nd; /* as MPI_Type_get_envelope says */
    if (max_ints < e->ni || max_aints < e->na || max_counts < e->nc || max_types < nd)
        return mpi_leave(job,
                         mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                                  "the arrays hold %lld/%lld/%lld/%lld, the type has %d "
                                  "integers, %d addresses, %d large counts and %d datatypes",
                                  (long long)max_ints, (long long)max_aints, (long long)max_counts,
                                  (long long)max_types, e->ni, e->na, e->nc, nd));
    if ((e->ni && !ints) || (e->na && !aints) || (e->nc && !counts) || (nd && !types))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "an array is NULL"));
    int idx = t->idx;
    for (int k = 0; k < nd; k++) {
        mpi_type *c = mpi_type_at(e->types[k]);
        if (c->predef) {
            types[k] = (MPI_Datatype)(K_TYPE | (unsigned)c->idx);
            continue;
        }
        rc = mpi_type_clone(job, call, c->idx, &types[k]);
        if (rc) { /* free what was made so far: nothing changes */
            while (k-- > 0) {
                mpi_type *n = mpi_type_get(types[k]);
                if (n && !n->predef) {
                    n->dead = true;
                    mpi_type_unref(n->idx);
                }
            }
            return mpi_leave(job, rc);
        }
        e = mpi_type_at(idx)->env;
    }
    if (e->ni) memcpy(ints, e->ints, (size_t)e->ni * sizeof *ints);
    if (e->na) memcpy(aints, e->aints, (size_t)e->na * sizeof *aints);
    if (e->nc) memcpy(counts, e->counts, (size_t)e->nc * sizeof *counts);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_get_contents);
int PMPI_Type_get_contents(MPI_Datatype dt, int max_ints, int max_aints, int max_types, int ints[],
                           MPI_Aint aints[], MPI_Datatype types[])
{
    return contents("MPI_Type_get_contents", false, dt, max_ints, max_aints, 0, max_types, ints,
                    aints, NULL, types);
}

PMPI_WEAK(Type_get_contents_c);
int PMPI_Type_get_contents_c(MPI_Datatype dt, MPI_Count max_ints, MPI_Count max_aints,
                             MPI_Count max_counts, MPI_Count max_types, int ints[],
                             MPI_Aint aints[], MPI_Count counts[], MPI_Datatype types[])
{
    return contents("MPI_Type_get_contents_c", true, dt, max_ints, max_aints, max_counts, max_types,
                    ints, aints, counts, types);
}

/* ---- external32 ------------------------------------------------------------------- */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BE 1
#else
#define HOST_BE 0
#endif

/* The n-byte native integer at p as an unsigned value (sign-extended when
 * 'sign' and negative). */
static uint64_t native_get(const unsigned char *p, size_t n, bool sign)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)p[HOST_BE ? i : n - 1 - i] << (8 * (n - 1 - i));
    if (sign && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~(uint64_t)0 << (8 * n);
    return v;
}

static void native_put(unsigned char *p, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++) p[HOST_BE ? n - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

static uint64_t be_get(const unsigned char *p, size_t n, bool sign)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v = v << 8 | p[i];
    if (sign && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~(uint64_t)0 << (8 * n);
    return v;
}

static void be_put(unsigned char *p, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++) p[n - 1 - i] = (unsigned char)(v >> (8 * i));
}

/* long double <-> IEEE binary128, big-endian (16 bytes at x). */
static void ld_to_x(const unsigned char *p, unsigned char *x)
{
#if LDBL_MANT_DIG == 64 /* x87 extended: 64-bit significand with explicit integer bit */
    uint64_t m = native_get(p, 8, false);
    uint64_t se = native_get(p + 8, 2, false);
    uint64_t f = m & ~((uint64_t)1 << 63); /* 63 fraction bits */
    be_put(x, 8, se << 48 | f >> 15);
    be_put(x + 8, 8, (f & 0x7fff) << 49);
#elif LDBL_MANT_DIG == 113
    for (int i = 0; i < 16; i++) x[i] = p[HOST_BE ? i : 15 - i];
#else /* long double is double */
    double d;
    memcpy(&d, p, sizeof d);
    uint64_t b;
    memcpy(&b, &d, 8);
    uint64_t s = b >> 63, e = (b >> 52) & 0x7ff, f = b & (((uint64_t)1 << 52) - 1);
    if (e == 0x7ff)
        e = 0x7fff;
    else if (e || f) {
        if (!e) { /* subnormal double: normalize */
            e = 1;
            while (!(f & ((uint64_t)1 << 52))) {
                f <<= 1;
                e--;
            }
            f &= ((uint64_t)1 << 52) - 1;
            e = e + 15360;
        } else
            e += 15360;
    }
    be_put(x, 8, s << 63 | e << 48 | f >> 4);
    be_put(x + 8, 8, (f & 0xf) << 60);
#endif
}

static void x_to_ld(const unsigned char *x, unsigned char *p)
{
#if LDBL_MANT_DIG == 64
    uint64_t hi = be_get(x, 8, false), lo = be_get(x + 8, 8, false);
    uint64_t se = hi >> 48, e = se & 0x7fff;
    uint64_t f = (hi & (((uint64_t)1 << 48) - 1)) << 15 | lo >> 49;
    memset(p, 0, sizeof(long double));
    native_put(p, 8, f | (uint64_t)(e != 0) << 63);
    native_put(p + 8, 2, se);
#elif LDBL_MANT_DIG == 113
    for (int i = 0; i < 16; i++) p[HOST_BE ? i : 15 - i] = x[i];
#else
    uint64_t hi = be_get(x, 8, false), lo = be_get(x + 8, 8, false);
    uint64_t s = hi >> 63, e = (hi >> 48) & 0x7fff,
             f = (hi & (((uint64_t)1 << 48) - 1)) << 4 | lo >> 60;
    double d;
    if (e == 0x7fff) {
        uint64_t b = s << 63 | (uint64_t)0x7ff << 52 | f;
        memcpy(&d, &b, 8);
    } else if (!e && !f) {
        d = s ? -0.0 : 0.0;
    } else { /* normal numbers; out of double's range: infinity or zero */
        long de = (long)e - 15360;
        uint64_t b = s << 63;
        if (de >= 0x7ff)
            b |= (uint64_t)0x7ff << 52;
        else if (de > 0)
            b |= (uint64_t)de << 52 | f;
        memcpy(&d, &b, 8);
    }
    memcpy(p, &d, sizeof d);
#endif
}

/* How each predefined type is written in external32: 'u' unsigned integer or
 * raw bits, 's' signed integer, 'L' long double, 'c' a complex (two of
 * 'part'), 'p' a pair (value of type 'part', then an int), 'P' a pair of two
 * 'part' (MPI_2REAL), 'q' 16 bytes in big-endian order (INTEGER(16), REAL(16)). */
typedef struct xinfo {
    char kind;
    unsigned char part;
} xinfo;

static xinfo x_kind(int base)
{
    switch (base) {
    case 0x02: /* MPI_SIGNED_CHAR */
    case 0x05: /* MPI_SHORT */
    case 0x07: /* MPI_INT */
    case 0x09: /* MPI_LONG */
    case 0x0b: /* MPI_LONG_LONG_INT */
    case 0x12:
    case 0x13:
    case 0x14:
    case 0x15: /* MPI_INTn_T */
    case 0x1a: /* MPI_AINT */
    case 0x1b: /* MPI_OFFSET */
    case 0x1c: /* MPI_COUNT */
        return (xinfo){'s', 0};
    case 0x0f:
        return (xinfo){'L', 0};
    case 0x1d:
        return (xinfo){'c', 0x0d};
    case 0x1e:
        return (xinfo){'c', 0x0e};
    case 0x1f:
        return (xinfo){'c', 0x0f};
    case 0x21:
        return (xinfo){'p', 0x0d};
    case 0x22:
        return (xinfo){'p', 0x0e};
    case 0x23:
        return (xinfo){'p', 0x09};
    case 0x24:
        return (xinfo){'p', 0x07};
    case 0x25:
        return (xinfo){'p', 0x05};
    case 0x26:
        return (xinfo){'p', 0x0f};
    case 0x3f:
        return (xinfo){'P', 0x0d};
    case 0x40:
        return (xinfo){'P', 0x0e};
    case 0x41:
    case 0x42:
        return (xinfo){'q', 0};
    case 0x43:
        return (xinfo){'c', 0x42};
    default:
        return (xinfo){'u', 0};
    }
}

typedef struct xwalk {
    unsigned char *x; /* the external32 side, advanced element by element */
    bool pack;
} xwalk;

/* One element of predefined type 'base' at native address p. */
static void x_elem(xwalk *w, int base, unsigned char *p)
{
    const mpi_type *t = mpi_type_at(base);
    xinfo k = x_kind(base);
    size_t ns = type_extent(t), xs = t->xsize;
    switch (k.kind) {
    case 'c': {
        size_t half = ns / 2;
        x_elem(w, k.part, p);
        x_elem(w, k.part, p + half);
        return;
    }
    case 'p':
    case 'P':
        x_elem(w, k.part, p);
        x_elem(w, k.kind == 'p' ? 0x07 : k.part, p + t->blk[1].off);
        return;
    case 'q':
        for (int i = 0; i < 16; i++)
            if (w->pack)
                w->x[i] = p[HOST_BE ? i : 15 - i];
            else
                p[HOST_BE ? i : 15 - i] = w->x[i];
        w->x += 16;
        return;
    case 'L':
        if (w->pack)
            ld_to_x(p, w->x);
        else
            x_to_ld(w->x, p);
        w->x += 16;
        return;
    default:
        ns = t->size;
        if (w->pack)
            be_put(w->x, xs, native_get(p, ns, k.kind == 's'));
        else
            native_put(p, ns, be_get(w->x, xs, k.kind == 's'));
        w->x += xs;
    }
}

static void x_type(xwalk *w, const mpi_type *t, unsigned char *p);

typedef struct xctx {
    xwalk *w;
    unsigned char *p;
} xctx;

static void x_run(void *ctx, const mpi_type *old, ptrdiff_t disp, size_t n)
{
    xctx *c = ctx;
    ptrdiff_t ext = type_extent(old);
    for (size_t i = 0; i < n; i++) x_type(c->w, old, c->p + disp + (ptrdiff_t)i * ext);
}

static void x_type(xwalk *w, const mpi_type *t, unsigned char *p)
{
    if (!t->env) { /* predefined: as its C twin (MPI_INTEGER as MPI_INT, ...) */
        x_elem(w, t->base, p);
        return;
    }
    xctx c = {w, p};
    mpi_type_enum(t->env, x_run, &c);
}

/* ---- a type's layout in a file representation (MPI-3.1 13.5.2) ---------------------- */

/* The walk of mpi_type_file_layout: the file bytes of each predefined type,
 * the file bounds of each type met, found once (indexed by table index), and
 * where the runs go. */
typedef struct flmap {
    mpi_units u;         /* first: the file extents, for mpi_type_groups */
    const MPI_Aint *psz; /* NULL: external32's */
    ptrdiff_t *lb, *ub;
    unsigned char *known;
    void (*run)(void *ctx, ptrdiff_t off, size_t len);
    void *ctx;
    size_t size; /* bytes of the runs given so far */
} flmap;

static size_t fl_psize(const flmap *x, const mpi_type *t)
{
    return x->psz ? (size_t)x->psz[t->idx] : t->xsize;
}

static void fl_run(flmap *x, ptrdiff_t off, size_t len)
{
    x->size += len;
    if (x->run) x->run(x->ctx, off, len);
}

typedef struct flgroup {
    flmap *x;
    ptrdiff_t disp; /* of the instance being walked */
    bool any;       /* bounds: one group seen */
    ptrdiff_t lb, ub;
} flgroup;

static void fl_bounds(flmap *x, const mpi_type *t, ptrdiff_t *lb, ptrdiff_t *ub);

static ptrdiff_t fl_ext(mpi_units *u, const mpi_type *t)
{
    ptrdiff_t lb, ub;
    fl_bounds((flmap *)u, t, &lb, &ub);
    return ub - lb;
}

/* Bounds of a group, as add_old takes them in memory. */
static void fl_bounds_group(void *ctx, const mpi_type *old, ptrdiff_t disp, size_t n, size_t reps,
                            ptrdiff_t stride)
{
    flgroup *g = ctx;
    if (!n || !reps) return;
    ptrdiff_t olb, oub;
    fl_bounds(g->x, old, &olb, &oub);
    ptrdiff_t last = (ptrdiff_t)(n - 1) * (oub - olb), rlast = (ptrdiff_t)(reps - 1) * stride;
    ptrdiff_t lo = (last < 0 ? last : 0) + (rlast < 0 ? rlast : 0);
    ptrdiff_t hi = (last > 0 ? last : 0) + (rlast > 0 ? rlast : 0);
    if (!g->any || disp + olb + lo < g->lb) g->lb = disp + olb + lo;
    if (!g->any || disp + oub + hi > g->ub) g->ub = disp + oub + hi;
    g->any = true;
}

/* The bounds the combiner sets, as build() does in memory: a basic type is
 * its bytes in the file; a struct's extent is rounded up to the alignment of
 * its elements in memory, so that a type whose elements have the same size
 * in both has the same layout in both. */
static void fl_bounds(flmap *x, const mpi_type *t, ptrdiff_t *lb, ptrdiff_t *ub)
{
    if (x->known[t->idx]) {
        *lb = x->lb[t->idx];
        *ub = x->ub[t->idx];
        return;
    }
    const mpi_env *e = t->env;
    flgroup g = {x, 0, false, 0, 0};
    if (!e) {
        g.ub = (ptrdiff_t)fl_psize(x, t);
    } else if (e->combiner == MPI_COMBINER_RESIZED) {
        g.lb = e->aints[0];
        g.ub = e->aints[0] + e->aints[1];
    } else if (e->combiner == MPI_COMBINER_SUBARRAY || e->combiner == MPI_COMBINER_DARRAY) {
        bool sub = e->combiner == MPI_COMBINER_SUBARRAY;
        int nd = (int)mpi_env_at(e, sub ? 0 : 2);
        g.ub = fl_ext(&x->u, mpi_st()->types[e->types[0]]);
        for (int d = 0; d < nd; d++) g.ub *= mpi_env_at(e, (sub ? 1 : 3) + d);
    } else {
        mpi_type_groups(e, &x->u, fl_bounds_group, &g);
        ptrdiff_t ext = g.ub - g.lb, a = (ptrdiff_t)t->align;
        if (e->combiner == MPI_COMBINER_STRUCT && a > 1 && ext % a) g.ub += a - ext % a;
    }
    x->lb[t->idx] = *lb = g.lb;
    x->ub[t->idx] = *ub = g.ub;
    x->known[t->idx] = 1;
}

static void fl_walk(flmap *x, const mpi_type *t, ptrdiff_t disp);

static void fl_walk_group(void *ctx, const mpi_type *old, ptrdiff_t disp, size_t n, size_t reps,
                          ptrdiff_t stride)
{
    flgroup *g = ctx;
    ptrdiff_t ext = fl_ext(&g->x->u, old);
    for (size_t r = 0; r < reps; r++) {
        ptrdiff_t at = g->disp + disp + (ptrdiff_t)r * stride;
        if (!old->env) { /* n basic elements side by side */
            fl_run(g->x, at, n * fl_psize(g->x, old));
            continue;
        }
        for (size_t i = 0; i < n; i++) fl_walk(g->x, old, at + (ptrdiff_t)i * ext);
    }
}

static void fl_walk(flmap *x, const mpi_type *t, ptrdiff_t disp)
{
    if (!t->env) {
        fl_run(x, disp, fl_psize(x, t));
        return;
    }
    flgroup g = {x, disp, false, 0, 0};
    mpi_type_groups(t->env, &x->u, fl_walk_group, &g);
}

int mpi_type_file_layout(const mpi_type *t, const MPI_Aint *psz,
                         void (*run)(void *ctx, ptrdiff_t off, size_t len), void *ctx,
                         ptrdiff_t *lb, ptrdiff_t *ub, size_t *size)
{
    size_t n = (size_t)mpi_st()->ntypes;
    flmap x = {.u = {fl_ext},
               .psz = psz,
               .lb = malloc(n * sizeof *x.lb),
               .ub = malloc(n * sizeof *x.ub),
               .known = calloc(n, 1),
               .run = run,
               .ctx = ctx};
    int rc = MPI_ERR_NO_MEM;
    if (x.lb && x.ub && x.known) {
        ptrdiff_t l, u;
        fl_bounds(&x, t, lb ? lb : &l, ub ? ub : &u);
        if (run || (size && psz)) fl_walk(&x, t, 0);
        if (size) *size = psz ? x.size : t->xsize;
        rc = MPI_SUCCESS;
    }
    free(x.lb);
    free(x.ub);
    free(x.known);
    return rc;
}

static void bases_group(void *ctx, const mpi_type *old, ptrdiff_t disp, size_t n, size_t reps,
                        ptrdiff_t stride)
{
    (void)disp, (void)stride;
    if (n && reps) mpi_type_bases(old, ctx);
}

void mpi_type_bases(const mpi_type *t, unsigned char *seen)
{
    if (!t->env) {
        seen[t->idx] = 1;
        return;
    }
    mpi_type_groups(t->env, NULL, bases_group, seen);
}

/* The checks the external32 calls share. */
static int x_check(cr_job *job, const char *call, const char *datarep, MPI_Datatype dt, int count,
                   mpi_type **t)
{
    if (!datarep || strcmp(datarep, "external32"))
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                        "data representation \"%s\" is not \"external32\"",
                        datarep ? datarep : "(NULL)");
    int rc = mpi_type_check(job, MPI_COMM_WORLD, call, dt, t);
    if (rc) return rc;
    if (count < 0)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COUNT, "count %d is negative", count);
    return MPI_SUCCESS;
}

static int x_move(const char *call, const char *datarep, void *native, int count, MPI_Datatype dt,
                  void *xbuf, MPI_Aint xsize, MPI_Aint *position, bool pack)
{
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = x_check(job, call, datarep, dt, count, &t);
    if (!rc && (!position || *position < 0 || xsize < 0))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "position is NULL or negative, or the buffer size is negative");
    if (rc) return mpi_leave(job, rc);
    size_t n = (size_t)count * t->xsize;
    if ((size_t)*position + n > (size_t)xsize)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_TRUNCATE,
                                       "%zu bytes at position %ld do not fit the %ld-byte buffer",
                                       n, (long)*position, (long)xsize));
    if (n && !xbuf)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "the packed buffer is NULL"));
    xwalk w = {(unsigned char *)xbuf + *position, pack};
    ptrdiff_t ext = type_extent(t);
    for (int i = 0; i < count; i++) x_type(&w, t, (unsigned char *)native + (ptrdiff_t)i * ext);
    *position += (MPI_Aint)n;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Pack_external);
int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype dt,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    return x_move("MPI_Pack_external", datarep, (void *)inbuf, incount, dt, outbuf, outsize,
                  position, true);
}

PMPI_WEAK(Unpack_external);
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype dt)
{
    return x_move("MPI_Unpack_external", datarep, outbuf, outcount, dt, (void *)inbuf, insize,
                  position, false);
}

PMPI_WEAK(Pack_external_size);
int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype dt, MPI_Aint *size)
{
    const char *call = "MPI_Pack_external_size";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = x_check(job, call, datarep, dt, incount, &t);
    if (!rc) rc = null_arg(job, call, size, "size");
    if (rc) return mpi_leave(job, rc);
    *size = (MPI_Aint)((size_t)incount * t->xsize);
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- the _x forms and status helpers ----------------------------------------------- */

PMPI_WEAK(Type_size_x);
int PMPI_Type_size_x(MPI_Datatype dt, MPI_Count *size)
{
    const char *call = "MPI_Type_size_x";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, dt, &t);
    if (!rc) rc = null_arg(job, call, size, "size");
    if (rc) return mpi_leave(job, rc);
    *size = (MPI_Count)t->size;
    return mpi_leave(job, MPI_SUCCESS);
}

static int extent_x(const char *call, MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent, bool tru)
{
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, dt, &t);
    if (!rc && (!lb || !extent))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "lb or extent is NULL");
    if (rc) return mpi_leave(job, rc);
    *lb = tru ? t->true_lb : t->lb;
    *extent = tru ? t->true_ub - t->true_lb : type_extent(t);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_get_extent_x);
int PMPI_Type_get_extent_x(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent)
{
    return extent_x("MPI_Type_get_extent_x", dt, lb, extent, false);
}

PMPI_WEAK(Type_get_true_extent_x);
int PMPI_Type_get_true_extent_x(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent)
{
    return extent_x("MPI_Type_get_true_extent_x", dt, lb, extent, true);
}

PMPI_WEAK(Get_elements_x);
int PMPI_Get_elements_x(const MPI_Status *st, MPI_Datatype dt, MPI_Count *count)
{
    const char *call = "MPI_Get_elements_x";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = mpi_type_check(job, MPI_COMM_WORLD, call, dt, &t);
    if (!rc && (!st || !count))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "status or count is NULL/ignored");
    if (rc) return mpi_leave(job, rc);
    size_t n = mpi_elements(t, (size_t)st->cr_bytes);
    *count = n == MPI_ELEMENTS_PART ? MPI_UNDEFINED : (MPI_Count)n;
    return mpi_leave(job, MPI_SUCCESS);
}

/* Set st so that MPI_Get_elements(st, dt) gives count: the bytes of count
 * basic elements of dt, whole instances first. */
static int set_elements(const char *call, MPI_Status *st, MPI_Datatype dt, MPI_Count count)
{
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, dt, &t);
    if (!rc) rc = null_arg(job, call, st, "status");
    if (!rc && count < 0)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COUNT, "count %lld is negative",
                      (long long)count);
    if (!rc && !t->nelem && count)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "the datatype has no elements, count %lld is not 0", (long long)count);
    if (rc) return mpi_leave(job, rc);
    size_t bytes = 0;
    if (t->nelem) { /* whole periods of the map, then a part of one */
        size_t per = t->nelem / t->reps, rem = (size_t)count % per;
        bytes = (size_t)count / per * (t->size / t->reps);
        for (int k = 0; k < t->nblk && rem; k++) {
            const mpi_blk *e = &t->blk[k];
            const mpi_rep *rp = e->rep ? &t->rep[e->rep - 1] : NULL;
            size_t each = e->len / e->esz, runs = rp ? rp->n[0] * rp->n[1] : 1;
            size_t whole = rem / each < runs ? rem / each : runs;
            bytes += whole * e->len;
            rem -= whole * each;
            if (whole < runs) { /* ends in this entry, rem < each */
                bytes += rem * e->esz;
                break;
            }
        }
    }
    st->cr_bytes = (long long)bytes;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Status_set_elements);
int PMPI_Status_set_elements(MPI_Status *st, MPI_Datatype dt, int count)
{
    return set_elements("MPI_Status_set_elements", st, dt, count);
}

PMPI_WEAK(Status_set_elements_x);
int PMPI_Status_set_elements_x(MPI_Status *st, MPI_Datatype dt, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_x", st, dt, count);
}

PMPI_WEAK(Type_match_size);
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *dt)
{
    /* the C types first, then the sizes only Fortran's have (16-byte
     * integers, 32-byte complex): a size with a type gives one */
    static const MPI_Datatype reals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_REAL16, 0};
    static const MPI_Datatype ints[] = {MPI_SIGNED_CHAR, MPI_SHORT,     MPI_INT, MPI_LONG,
                                        MPI_LONG_LONG,   MPI_INTEGER16, 0};
    static const MPI_Datatype cplx[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                        MPI_C_LONG_DOUBLE_COMPLEX, MPI_COMPLEX32, 0};
    const char *call = "MPI_Type_match_size";
    cr_job *job = mpi_enter(call);
    int rc = null_arg(job, call, dt, "datatype");
    const MPI_Datatype *l = typeclass == MPI_TYPECLASS_REAL      ? reals
                            : typeclass == MPI_TYPECLASS_INTEGER ? ints
                            : typeclass == MPI_TYPECLASS_COMPLEX ? cplx
                                                                 : NULL;
    if (!rc && !l)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "typeclass %d is not MPI_TYPECLASS_REAL, INTEGER or COMPLEX", typeclass);
    if (rc) return mpi_leave(job, rc);
    for (; *l; l++)
        if ((int)mpi_type_get(*l)->size == size) {
            *dt = *l;
            return mpi_leave(job, MPI_SUCCESS);
        }
    return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                                   "no predefined type of this class has %d bytes", size));
}

/* ---- attributes ------------------------------------------------------------------ */

/* The keyvals and the lists are mpi_attr.c's, shared with communicators and
 * windows; here are the calls and their checks. */

int MPI_TYPE_DUP_FN(MPI_Datatype oldtype, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldtype;
    (void)keyval;
    (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

PMPI_WEAK(Type_create_keyval);
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy, MPI_Type_delete_attr_function *del,
                            int *keyval, void *extra)
{
    const char *call = "MPI_Type_create_keyval";
    cr_job *job = mpi_enter(call);
    int rc = null_arg(job, call, keyval, "type_keyval");
    if (rc) return mpi_leave(job, rc);
    *keyval = mpi_keyval_create(job, call, MPI_OBJ_TYPE, copy, del, extra);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_free_keyval);
int PMPI_Type_free_keyval(int *kv)
{
    const char *call = "MPI_Type_free_keyval";
    cr_job *job = mpi_enter(call);
    if (!mpi_keyval_free(kv, MPI_OBJ_TYPE))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_KEYVAL,
                                       "not a keyval from MPI_Type_create_keyval, or one freed "
                                       "already"));
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_set_attr);
int PMPI_Type_set_attr(MPI_Datatype dt, int kv, void *val)
{
    const char *call = "MPI_Type_set_attr";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, dt, &t);
    if (!rc && !mpi_keyval_live(kv, MPI_OBJ_TYPE))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_KEYVAL,
                      "keyval %#x is not from MPI_Type_create_keyval", (unsigned)kv);
    if (rc) return mpi_leave(job, rc);
    rc = mpi_attr_set(job, MPI_OBJ_TYPE, dt, kv, val);
    if (rc != MPI_SUCCESS)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, mpi_attr_cb_class(rc),
                      "the delete callback of keyval %#x returned %d: the old value stays",
                      (unsigned)kv, rc);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Type_get_attr);
int PMPI_Type_get_attr(MPI_Datatype dt, int kv, void *val, int *flag)
{
    const char *call = "MPI_Type_get_attr";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, dt, &t);
    if (!rc && (!val || !flag))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "attribute_val or flag is NULL");
    mpi_attr *a = rc ? NULL : mpi_attr_find(MPI_OBJ_TYPE, dt, kv);
    if (!rc && !a && !mpi_keyval_live(kv, MPI_OBJ_TYPE))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_KEYVAL,
                      "keyval %#x is not a datatype keyval", (unsigned)kv);
    if (rc) return mpi_leave(job, rc);
    *flag = a != NULL;
    if (a) *(void **)val = a->val;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_delete_attr);
int PMPI_Type_delete_attr(MPI_Datatype dt, int kv)
{
    const char *call = "MPI_Type_delete_attr";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = type_arg(job, call, dt, &t);
    if (!rc && !mpi_attr_find(MPI_OBJ_TYPE, dt, kv))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_KEYVAL, "keyval %#x has no value here",
                      (unsigned)kv);
    if (rc) return mpi_leave(job, rc);
    rc = mpi_attr_delete(job, MPI_OBJ_TYPE, dt, kv);
    if (rc != MPI_SUCCESS)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, mpi_attr_cb_class(rc),
                      "the delete callback of keyval %#x returned %d: the attribute stays",
                      (unsigned)kv, rc);
    return mpi_leave(job, rc);
}
