/* MPI derived datatypes (mpi_type.c holds the representation and its
 * invariants): the map builder that compresses a type map as it is made, the
 * envelopes that record how each derived type was made (mpi_type_enum walks
 * them, mpi_type_groups gives their groups in any extents), the constructor
 * calls (contiguous, vector, indexed, struct,
 * subarray, darray, resized, dup, and MPI_Type_create_f90_*, and the
 * bodies their large-count _c forms share), commit, free, and the size and
 * extent queries.
 *
 * Invariants (besides mpi_type.c's):
 *  - an MPI_Type_create_f90_* type is made once per (combiner, p, r) in the
 *    job (job->mpi->f90) and lives as long as the job: MPI_Type_free refuses
 *    it as it refuses a predefined type;
 *  - a constructor either makes a new committed-or-not type from copies of
 *    its arguments, or changes nothing and reports why (a bad argument, or a
 *    map of more than MAP_MAX entries: MPI_ERR_INTERN);
 *  - what a type spans and holds is checked before each old type is appended
 *    (add_old: within a quarter of PTRDIFF_MAX), so its size and bounds,
 *    summed as the builder goes, cannot overflow;
 *  - a type the program frees lives on while the envelope of another type or
 *    a pending operation holds a reference to it (mpi_type_unref);
 *  - an envelope is the int form's when every value of the call fits an int,
 *    else the large-count one of MPI-4.1 §5.1.13, whichever form was called;
 *    what reads one reads its values by their place in the int form's
 *    (mpi_env_at), so the two cannot describe a type differently;
 *  - mpi_type_groups gives the same groups in memory's extents and in a file
 *    representation's (mpi_units): build() and mpi_type_file_layout
 *    (mpi_type_more.c) cannot lay a constructor out two different ways. */
#include <limits.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* ---- constructors ------------------------------------------------------------- */

/* Most entries a type map may have (one period): a type whose map would need
 * more, once its old types' maps are unrolled where they do not repeat
 * regularly, is refused with MPI_ERR_INTERN. */
#define MAP_MAX (1 << 24)

/* An entry of a map under construction: an mpi_blk and its mpi_rep in one
 * (plain: n[0] == n[1] == 1; n[1] > 1 only if n[0] > 1). Types keep the
 * compact form, whose plain entries are as small as they ever were: packing
 * reads the whole map for every instance. */
typedef struct entry {
    ptrdiff_t off;
    size_t len, esz;
    size_t n[2];
    ptrdiff_t s[2];
} entry;

/* Entry k of t's map. */
static entry entry_of(const mpi_type *t, int k)
{
    const mpi_blk *e = &t->blk[k];
    const mpi_rep *r = mpi_rep_of(t, e);
    return (entry){e->off, e->len, e->esz, {r->n[0], r->n[1]}, {r->s[0], r->s[1]}};
}

/* A type under construction: its map (entries, repeated reps times rstride
 * apart) and, kept apart from it, the size and bounds of all its data. */
typedef struct builder {
    entry *ent;
    int nblk, cap;
    size_t reps;
    ptrdiff_t rstride;
    size_t size, nelem, align, xsize;
    size_t unit; /* the gcd of the old types' units (0: no data yet) */
    ptrdiff_t lb, ub, tlb, tub;
    bool any;        /* bounds set */
    int base;        /* -2: none yet */
    int err;         /* MPI_SUCCESS, or why the type cannot be made */
    const char *why; /* ... in words */
} builder;

static void refuse(builder *b, int err, const char *why)
{
    if (!b->err) {
        b->err = err;
        b->why = why;
    }
}

/* Make entry e stand for itself repeated c times, x bytes apart: false (e
 * unusable) when that needs a third level of repetition. */
static bool repeat(entry *e, size_t c, ptrdiff_t x)
{
    if (c == 1) return true;
    if (e->n[0] == 1) { /* a plain run (n[1] > 1 only with n[0] > 1) */
        if (x == (ptrdiff_t)e->len) {
            e->len *= c; /* back to back: one longer run */
        } else {
            e->n[0] = c;
            e->s[0] = x;
        }
    } else if (e->n[1] == 1) {
        if (x == (ptrdiff_t)e->n[0] * e->s[0]) {
            e->n[0] *= c; /* continues level 0 */
        } else {
            e->n[1] = c;
            e->s[1] = x;
        }
    } else if (x == (ptrdiff_t)e->n[1] * e->s[1]) {
        e->n[1] *= c;
    } else {
        return false;
    }
    return true;
}

/* Make l, followed in the map by e, stand for both if one entry can: plain
 * runs of one element size back to back become one run; equal runs, or equal
 * repeated runs, one repetition; a repetition that e goes on grows. */
static bool merge(entry *l, const entry *e)
{
    bool lp = l->n[0] == 1, ep = e->n[0] == 1; /* plain runs */
    if (l->esz != e->esz || e->n[1] > 1) return false;
    if (lp && ep && e->off == l->off + (ptrdiff_t)l->len) {
        l->len += e->len;
        return true;
    }
    if (l->len != e->len) return false;
    if (lp) {
        if (!ep) return false;
        l->n[0] = 2;
        l->s[0] = e->off - l->off;
        return true;
    }
    bool same = !ep && e->n[0] == l->n[0] && e->s[0] == l->s[0];
    if (l->n[1] == 1) {
        if ((ep || e->s[0] == l->s[0]) && e->off == l->off + (ptrdiff_t)l->n[0] * l->s[0]) {
            l->n[0] += e->n[0];
            return true;
        }
        if (!same) return false;
        l->n[1] = 2;
        l->s[1] = e->off - l->off;
        return true;
    }
    if (!same || e->off != l->off + (ptrdiff_t)l->n[1] * l->s[1]) return false;
    l->n[1]++;
    return true;
}

static void expand(builder *b);

/* Append entry e to the period, merged into the last entry if it can be. A
 * builder with a repeated period is unrolled first. */
static void add_entry(builder *b, entry e)
{
    if (!e.len || !e.n[0] || !e.n[1] || b->err) return;
    if (b->reps > 1) expand(b);
    if (b->nblk && !b->err && merge(&b->ent[b->nblk - 1], &e)) return;
    if (b->err) return;
    if (b->nblk == MAP_MAX) {
        refuse(b, MPI_ERR_INTERN, "the type map would exceed courier's limit of 2^24 entries");
        return;
    }
    if (b->nblk == b->cap) {
        int cap = b->cap ? 2 * b->cap : 8;
        entry *n = realloc(b->ent, (size_t)cap * sizeof *n);
        if (!n) {
            refuse(b, MPI_ERR_NO_MEM, "out of memory for the type map");
            return;
        }
        b->ent = n;
        b->cap = cap;
    }
    b->ent[b->nblk++] = e;
}

/* Unroll a repeated period into plain entries (something else follows it),
 * from a copy of the period: appending may merge into its last entry. */
static void expand(builder *b)
{
    size_t reps = b->reps;
    int m = b->nblk;
    b->reps = 1;
    if ((double)reps * m > MAP_MAX) {
        refuse(b, MPI_ERR_INTERN, "the type map would exceed courier's limit of 2^24 entries");
        return;
    }
    entry *period = malloc((size_t)m * sizeof *period);
    if (!period) {
        refuse(b, MPI_ERR_NO_MEM, "out of memory for the type map");
        return;
    }
    memcpy(period, b->ent, (size_t)m * sizeof *period);
    for (size_t r = 1; r < reps && !b->err; r++)
        for (int k = 0; k < m; k++) {
            entry e = period[k];
            e.off += (ptrdiff_t)r * b->rstride;
            add_entry(b, e);
        }
    free(period);
}

/* A map being described: t's entries (or, folded, the single entry 'one'),
 * repeated reps times stride apart. */
typedef struct map {
    const mpi_type *t;
    int nblk;
    size_t reps;
    ptrdiff_t stride;
    bool folded;
    entry one;
} map;

static entry map_entry(const map *m, int k)
{
    return m->folded ? m->one : entry_of(m->t, k);
}

/* Make m stand for itself repeated c times, x bytes apart: a single entry
 * takes the repetition in itself if it can, a period that is not repeated
 * yet, or whose repetition x goes on, takes it as its own; false otherwise. */
static bool map_repeat(map *m, size_t c, ptrdiff_t x)
{
    if (c == 1) return true;
    if (m->nblk == 1 && m->reps == 1) {
        entry e = map_entry(m, 0);
        if (repeat(&e, c, x)) {
            m->one = e;
            m->folded = true;
            return true;
        }
    }
    if (m->reps == 1) {
        m->reps = c;
        m->stride = x;
    } else if (x == (ptrdiff_t)m->reps * m->stride) {
        m->reps *= c;
    } else {
        return false;
    }
    return true;
}

/* Append map m at displacement disp: a repeated m becomes the builder's own
 * period when the builder is empty (folded into its single entry if it can
 * be), and is unrolled otherwise. */
static void add_map(builder *b, const map *m, ptrdiff_t disp)
{
    if (m->reps > 1 && (b->nblk || b->reps > 1)) {
        if ((double)m->reps * m->nblk > MAP_MAX - b->nblk) {
            refuse(b, MPI_ERR_INTERN, "the type map would exceed courier's limit of 2^24 entries");
            return;
        }
        for (size_t r = 0; r < m->reps && !b->err; r++)
            for (int k = 0; k < m->nblk; k++) {
                entry e = map_entry(m, k);
                e.off += disp + (ptrdiff_t)r * m->stride;
                add_entry(b, e);
            }
        return;
    }
    for (int k = 0; k < m->nblk; k++) {
        entry e = map_entry(m, k);
        e.off += disp;
        add_entry(b, e);
    }
    if (m->reps > 1 && !b->err) {
        if (b->nblk == 1 && repeat(&b->ent[0], m->reps, m->stride)) return;
        b->reps = m->reps;
        b->rstride = m->stride;
    }
}

static double mag(double v)
{
    return v < 0 ? -v : v;
}

/* Append reps groups of n consecutive instances of t, group r at
 * disp + r*stride: in time and memory independent of n and reps when t's map
 * and the repetitions fit the map's three levels (two in an entry, one of the
 * period), else unrolled as far as needed. */
static void add_old(builder *b, const mpi_type *t, ptrdiff_t disp, size_t n, size_t reps,
                    ptrdiff_t stride)
{
    if (!n || !reps || b->err) return;
    ptrdiff_t ext = type_extent(t);
    double far = mag(disp) + mag(t->lb) + mag(t->ub) + mag((double)(n - 1) * (double)ext) +
                 mag((double)(reps - 1) * (double)stride);
    double most = (double)(PTRDIFF_MAX / 4 + 1);
    if (far > most || (double)n * (double)reps * (double)t->size > most) {
        refuse(b, MPI_ERR_ARG, "the type spans or holds more bytes than courier can address");
        return;
    }
    ptrdiff_t last = (ptrdiff_t)(n - 1) * ext, rlast = (ptrdiff_t)(reps - 1) * stride;
    ptrdiff_t lo = (last < 0 ? last : 0) + (rlast < 0 ? rlast : 0); /* extents may be negative */
    ptrdiff_t hi = (last > 0 ? last : 0) + (rlast > 0 ? rlast : 0);
    if (!b->any || disp + t->lb + lo < b->lb) b->lb = disp + t->lb + lo;
    if (!b->any || disp + t->ub + hi > b->ub) b->ub = disp + t->ub + hi;
    b->any = true;
    if (t->size) {
        if (!b->size || disp + t->true_lb + lo < b->tlb) b->tlb = disp + t->true_lb + lo;
        if (!b->size || disp + t->true_ub + hi > b->tub) b->tub = disp + t->true_ub + hi;
    }
    b->size += n * reps * t->size;
    b->nelem += n * reps * t->nelem;
    if (t->size) b->unit = mpi_gcd(b->unit, t->unit);
    if (b->base == -2)
        b->base = t->base;
    else if (b->base != t->base)
        b->base = -1;
    if (t->align > b->align) b->align = t->align;
    b->xsize += n * reps * t->xsize;
    if (!t->nblk) return;
    map g = {t, t->nblk, t->reps, t->rstride, false, {0}};
    bool group = map_repeat(&g, n, ext); /* g: one group of n instances */
    map all = g;
    if (group && map_repeat(&all, reps, stride)) {
        add_map(b, &all, disp);
        return;
    }
    /* unrolled: each group, or each instance */
    map one = {t, t->nblk, t->reps, t->rstride, false, {0}};
    double need = (double)reps * (group ? (double)g.nblk * (double)g.reps
                                        : (double)n * (double)t->nblk * (double)t->reps);
    if (need > MAP_MAX - b->nblk) {
        refuse(b, MPI_ERR_INTERN, "the type map would exceed courier's limit of 2^24 entries");
        return;
    }
    for (size_t r = 0; r < reps && !b->err; r++)
        for (size_t i = 0; i < (group ? 1 : n) && !b->err; i++)
            add_map(b, group ? &g : &one, disp + (ptrdiff_t)r * stride + (ptrdiff_t)i * ext);
}

static void add_old_cb(void *ctx, const mpi_type *t, ptrdiff_t disp, size_t n, size_t reps,
                       ptrdiff_t stride)
{
    add_old(ctx, t, disp, n, reps, stride);
}

static int type_new(cr_job *job, const char *call, builder *b, MPI_Datatype *out, bool pad,
                    bool raw)
{
    /* the map in its compact form: plain entries, and the repetitions apart */
    size_t nrep = 0, nb = b->nblk > 0 ? (size_t)b->nblk : 1;
    for (int k = 0; k < b->nblk; k++) nrep += b->ent[k].n[0] > 1;
    mpi_blk *blk = b->err ? NULL : malloc(nb * sizeof *blk);
    mpi_rep *rep = b->err || !nrep ? NULL : malloc(nrep * sizeof *rep);
    if (!b->err && (!blk || (nrep && !rep)))
        refuse(b, MPI_ERR_NO_MEM, "out of memory for the type map");
    if (b->err) {
        free(b->ent);
        free(blk);
        free(rep);
        return mpi_fail(job, MPI_COMM_WORLD, call, b->err, "%s", b->why);
    }
    nrep = 0;
    for (int k = 0; k < b->nblk; k++) {
        const entry *e = &b->ent[k];
        blk[k] = (mpi_blk){e->off, e->len, (uint32_t)e->esz, 0};
        if (e->n[0] > 1) {
            rep[nrep] = (mpi_rep){{e->n[0], e->n[1]}, {e->s[0], e->s[1]}};
            blk[k].rep = (uint32_t)++nrep;
        }
    }
    free(b->ent);
    /* the lowest free slot: none below type_free_from (so making n live types
     * is not n^2/2 steps: HDF5 makes one per chunk) */
    int i = job->mpi->type_free_from > 1 ? job->mpi->type_free_from : 1;
    while (i < job->mpi->ntypes && job->mpi->types[i] && job->mpi->types[i]->used) i++;
    job->mpi->type_free_from = i + 1;
    if (i == job->mpi->ntypes) {
        if (job->mpi->ntypes % 64 == 0) {
            mpi_type **n = realloc(job->mpi->types, (size_t)(job->mpi->ntypes + 64) * sizeof *n);
            if (!n) cr_fatal(job, call, "out of memory for datatypes");
            memset(n + job->mpi->ntypes, 0, 64 * sizeof *n);
            job->mpi->types = n;
        }
        job->mpi->ntypes++;
    }
    mpi_type *t = mpi_type_slot(job, call, i);
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
                    .blk = blk,
                    .rep = rep,
                    .reps = b->reps,
                    .rstride = b->rstride,
                    .nelem = b->nelem,
                    .unit = b->unit,
                    .base = b->base < 0 ? -1 : b->base,
                    .xsize = b->xsize};
    if (!b->any) t->lb = t->ub = 0;
    if (!b->size) t->true_lb = t->true_ub = 0;
    if (pad) { /* struct: round the extent up to the strictest alignment */
        ptrdiff_t ext = t->ub - t->lb, a = (ptrdiff_t)t->align;
        if (ext % a) t->ub += a - ext % a;
    }
    t->contig = t->nblk == 1 && t->reps == 1 && !t->blk[0].rep && t->blk[0].off == 0 &&
                t->lb == 0 && (ptrdiff_t)t->size == type_extent(t);
    t->raw = t->base >= 0 && (raw || (t->contig && job->mpi->types[t->base]->contig));
    *out = (MPI_Datatype)(K_TYPE | (unsigned)i);
    return MPI_SUCCESS;
}

/* ---- envelopes: how each derived type was made ------------------------------- */

/* An envelope with room for its arguments (one allocation), nc large counts
 * among them. */
static mpi_env *env_new_c(int combiner, int ni, int na, int nc, int nd)
{
    mpi_env *e = malloc(sizeof *e + (size_t)na * sizeof(MPI_Aint) + (size_t)nc * sizeof(MPI_Count) +
                        (size_t)(ni + nd) * sizeof(int));
    if (!e) return NULL;
    *e = (mpi_env){.combiner = combiner, .ni = ni, .na = na, .nd = nd, .nc = nc};
    e->aints = (MPI_Aint *)(e + 1);
    e->counts = (MPI_Count *)(e->aints + na);
    e->ints = (int *)(e->counts + nc);
    e->types = e->ints + ni;
    return e;
}

static mpi_env *env_new(int combiner, int ni, int na, int nd)
{
    return env_new_c(combiner, ni, na, 0, nd);
}

/* Where a large-count envelope keeps the constructor's values: taken as
 * one sequence, the int form's integers then addresses, [lo, lo + nc) of it
 * are the large counts and the rest, in order, the integers (MPI-4.1
 * §5.1.13: subarray's sizes, subsizes and starts; darray's gsizes; all of the
 * others'). This is lo. */
static int large_from(const mpi_env *e)
{
    return e->combiner == MPI_COMBINER_SUBARRAY ? 1 : e->combiner == MPI_COMBINER_DARRAY ? 3 : 0;
}

/* Value k of that sequence, in either envelope: where the int form's
 * envelope has ints[k] (or aints[k - ni]), whichever form recorded it. */
MPI_Count mpi_env_at(const mpi_env *e, MPI_Count k)
{
    if (!e->nc) return k < e->ni ? e->ints[k] : e->aints[k - e->ni];
    int lo = large_from(e);
    if (k < lo) return e->ints[k];
    if (k < lo + e->nc) return e->counts[k - lo];
    return e->ints[k - e->nc];
}

/* Give back the references e holds on the types it was made from. */
static void env_free(mpi_env *e)
{
    for (int k = 0; k < e->nd; k++)
        if (!mpi_st()->types[e->types[k]]->predef) mpi_type_unref(e->types[k]);
    free(e);
}

void mpi_type_unref(int idx)
{
    mpi_type *t = mpi_st()->types[idx];
    if (--t->refs == 0 && t->dead) {
        mpi_env *e = t->env;
        free(t->blk);
        free(t->rep);
        mpi_attrs_forget(&t->attrs, MPI_OBJ_TYPE);
        *t = (mpi_type){.idx = idx};
        if (idx < mpi_st()->type_free_from) mpi_st()->type_free_from = idx;
        if (e) env_free(e); /* may release the types it was made from in turn */
    }
}

/* One dimension of a subarray or darray, in elements of the old type: the
 * indices this process holds are those in [lo, hi) whose offset from lo,
 * modulo step, is below k (blocks of k every step); stride is the distance
 * between neighbouring indices of the dimension in the full array. */
typedef struct grid_dim {
    ptrdiff_t lo, hi, k, step, stride;
} grid_dim;

static grid_dim grid_at(const mpi_env *e, int d)
{
    bool sub = e->combiner == MPI_COMBINER_SUBARRAY;
    int nd = (int)mpi_env_at(e, sub ? 0 : 2), at = sub ? 1 : 3; /* the sizes */
    int order = (int)mpi_env_at(e, sub ? 1 + 3 * nd : 3 + 4 * nd);
    grid_dim g = {0, 0, 1, 1, 1};
    if (order == MPI_ORDER_C)
        for (int i = d + 1; i < nd; i++) g.stride *= mpi_env_at(e, at + i);
    else
        for (int i = 0; i < d; i++) g.stride *= mpi_env_at(e, at + i);
    if (sub) {
        g.lo = mpi_env_at(e, 1 + 2 * nd + d);
        g.hi = g.lo + mpi_env_at(e, 1 + nd + d);
        g.k = g.step = g.hi > g.lo ? g.hi - g.lo : 1;
        return g;
    }
    /* darray: processes in a row-major grid whatever the order (MPI-3.1 4.1.4) */
    ptrdiff_t n = mpi_env_at(e, 3 + d);
    int rank = (int)mpi_env_at(e, 1), dist = (int)mpi_env_at(e, 3 + nd + d);
    int darg = (int)mpi_env_at(e, 3 + 2 * nd + d);
    int r = rank;
    for (int i = nd - 1; i > d; i--) r /= (int)mpi_env_at(e, 3 + 3 * nd + i);
    ptrdiff_t p = mpi_env_at(e, 3 + 3 * nd + d), c = r % p;
    if (dist == MPI_DISTRIBUTE_NONE) {
        g.lo = 0;
        g.hi = g.k = g.step = n;
    } else if (dist == MPI_DISTRIBUTE_BLOCK) {
        ptrdiff_t b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (n + p - 1) / p : darg;
        g.lo = c * b < n ? c * b : n;
        g.hi = g.lo + b < n ? g.lo + b : n;
        g.k = g.step = b > 0 ? b : 1;
    } else { /* cyclic(k) */
        g.k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        g.lo = c * g.k;
        g.hi = n;
        g.step = p * g.k;
    }
    return g;
}

typedef void enum_fn(void *ctx, const mpi_type *old, ptrdiff_t disp, size_t n);

static ptrdiff_t ext_in(mpi_units *u, const mpi_type *t)
{
    return u ? u->ext(u, t) : type_extent(t);
}

/* Dimension 'level' of the grid (0: the slowest varying), then the faster ones.
 * The fastest gives runs of consecutive elements, its blocks of k every step
 * as one group (a short last block apart); when the fastest holds a single
 * block, the dimension above gives its consecutive indices as one group. */
static void grid_level(const mpi_env *e, int nd, bool c_order, int level, ptrdiff_t disp,
                       const mpi_type *old, mpi_units *u, mpi_group_fn *cb, void *ctx)
{
    grid_dim g = grid_at(e, c_order ? level : nd - 1 - level);
    ptrdiff_t ext = ext_in(u, old), st = g.stride * ext;
    if (g.lo >= g.hi) return;
    if (level == nd - 1) {
        ptrdiff_t blocks = (g.hi - g.lo + g.step - 1) / g.step, jl = g.lo + (blocks - 1) * g.step;
        ptrdiff_t kl = g.hi - jl < g.k ? g.hi - jl : g.k; /* the last block */
        if (kl < g.k) {
            if (blocks > 1)
                cb(ctx, old, disp + g.lo * st, (size_t)g.k, (size_t)blocks - 1, g.step * st);
            cb(ctx, old, disp + jl * st, (size_t)kl, 1, 0);
        } else {
            cb(ctx, old, disp + g.lo * st, (size_t)g.k, (size_t)blocks, g.step * st);
        }
        return;
    }
    if (level == nd - 2) {
        grid_dim h = grid_at(e, c_order ? level + 1 : nd - 2 - level);
        if (h.lo >= h.hi) return;    /* nothing at all */
        if (h.lo + h.step >= h.hi) { /* one block: one run per index of this level */
            ptrdiff_t hk = h.hi - h.lo < h.k ? h.hi - h.lo : h.k, at = h.lo * h.stride * ext;
            for (ptrdiff_t j = g.lo; j < g.hi; j += g.step) {
                ptrdiff_t end = j + g.k < g.hi ? j + g.k : g.hi;
                cb(ctx, old, disp + j * st + at, (size_t)hk, (size_t)(end - j), st);
            }
            return;
        }
    }
    for (ptrdiff_t j = g.lo; j < g.hi; j += g.step) {
        ptrdiff_t end = j + g.k < g.hi ? j + g.k : g.hi;
        for (ptrdiff_t i = j; i < end; i++)
            grid_level(e, nd, c_order, level + 1, disp + i * st, old, u, cb, ctx);
    }
}

/* One group for contiguous, vector and hvector whatever their count. The
 * values are read by their place in the int form's envelope (mpi_env_at). */
void mpi_type_groups(const mpi_env *e, mpi_units *u, mpi_group_fn *cb, void *ctx)
{
    mpi_state *m = mpi_st();
    const mpi_type *old = e->nd ? m->types[e->types[0]] : NULL;
    ptrdiff_t ext = old ? ext_in(u, old) : 0;
    MPI_Count n = e->ni || e->nc ? mpi_env_at(e, 0) : 0; /* count, where there is one */
    switch (e->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
    case MPI_COMBINER_F90_INTEGER:
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
        cb(ctx, old, 0, 1, 1, 0);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        cb(ctx, old, 0, (size_t)n, 1, 0);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        if (n > 0)
            cb(ctx, old, 0, (size_t)mpi_env_at(e, 1), (size_t)n,
               (ptrdiff_t)mpi_env_at(e, 2) * (e->combiner == MPI_COMBINER_VECTOR ? ext : 1));
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT: {
        ptrdiff_t unit = e->combiner == MPI_COMBINER_INDEXED ? ext : 1;
        for (MPI_Count i = 0; i < n; i++)
            cb(ctx, e->combiner == MPI_COMBINER_STRUCT ? m->types[e->types[i]] : old,
               (ptrdiff_t)mpi_env_at(e, 1 + n + i) * unit, (size_t)mpi_env_at(e, 1 + i), 1, 0);
        break;
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        ptrdiff_t unit = e->combiner == MPI_COMBINER_INDEXED_BLOCK ? ext : 1;
        for (MPI_Count i = 0; i < n; i++)
            cb(ctx, old, (ptrdiff_t)mpi_env_at(e, 2 + i) * unit, (size_t)mpi_env_at(e, 1), 1, 0);
        break;
    }
    case MPI_COMBINER_SUBARRAY:
        grid_level(e, (int)n, mpi_env_at(e, 1 + 3 * n) == MPI_ORDER_C, 0, 0, old, u, cb, ctx);
        break;
    case MPI_COMBINER_DARRAY: {
        int nd = (int)mpi_env_at(e, 2);
        grid_level(e, nd, mpi_env_at(e, 3 + 4 * nd) == MPI_ORDER_C, 0, 0, old, u, cb, ctx);
        break;
    }
    default:
        break;
    }
}

typedef struct each_ctx {
    enum_fn *cb;
    void *ctx;
} each_ctx;

static void each_group(void *ctx, const mpi_type *old, ptrdiff_t disp, size_t n, size_t reps,
                       ptrdiff_t stride)
{
    each_ctx *c = ctx;
    for (size_t r = 0; r < reps; r++) c->cb(c->ctx, old, disp + (ptrdiff_t)r * stride, n);
}

void mpi_type_enum(const mpi_env *e, enum_fn *cb, void *ctx)
{
    each_ctx c = {cb, ctx};
    mpi_type_groups(e, NULL, each_group, &c);
}

/* Make the type e describes: its map from the groups mpi_type_groups gives, then
 * the bounds its combiner sets. Takes e (freed on error); on success the new
 * type holds a reference on each derived type e names. */
static int build(cr_job *job, const char *call, mpi_env *e, bool raw, MPI_Datatype *out)
{
    if (!e)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_NO_MEM, "out of memory for the type");
    builder b = {.reps = 1, .base = -2};
    mpi_type_groups(e, NULL, add_old_cb, &b);
    if (e->combiner == MPI_COMBINER_RESIZED) {
        b.lb = e->aints[0];
        b.ub = e->aints[0] + e->aints[1];
        b.any = true;
    } else if (e->combiner == MPI_COMBINER_SUBARRAY || e->combiner == MPI_COMBINER_DARRAY) {
        /* the extent of the whole array (MPI-3.1 4.1.3, 4.1.4) */
        bool sub = e->combiner == MPI_COMBINER_SUBARRAY;
        int nd = (int)mpi_env_at(e, sub ? 0 : 2);
        ptrdiff_t all = type_extent(job->mpi->types[e->types[0]]);
        for (int d = 0; d < nd; d++) all *= mpi_env_at(e, (sub ? 1 : 3) + d);
        b.lb = 0;
        b.ub = all;
        b.any = true;
    }
    int rc = type_new(job, call, &b, out, e->combiner == MPI_COMBINER_STRUCT, raw);
    if (rc) {
        free(e);
        return rc;
    }
    job->mpi->types[h_idx(*out)]->env = e;
    for (int k = 0; k < e->nd; k++)
        if (!job->mpi->types[e->types[k]]->predef) job->mpi->types[e->types[k]]->refs++;
    return MPI_SUCCESS;
}

int mpi_type_clone(cr_job *job, const char *call, int idx, MPI_Datatype *out)
{
    const mpi_type *t = job->mpi->types[idx];
    const mpi_env *o = t->env;
    mpi_env *e = env_new_c(o->combiner, o->ni, o->na, o->nc, o->nd);
    if (e) {
        memcpy(e->counts, o->counts, (size_t)o->nc * sizeof *e->counts);
        memcpy(e->ints, o->ints, (size_t)o->ni * sizeof *e->ints);
        memcpy(e->aints, o->aints, (size_t)o->na * sizeof *e->aints);
        memcpy(e->types, o->types, (size_t)o->nd * sizeof *e->types);
    }
    int rc = build(job, call, e, t->raw, out);
    if (!rc) job->mpi->types[h_idx(*out)]->committed = job->mpi->types[idx]->committed;
    return rc;
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

static int count_check(cr_job *job, const char *call, MPI_Count count, const char *what)
{
    if (count < 0)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COUNT, "%s %lld is negative", what,
                        (long long)count);
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
    mpi_env *e = env_new(MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
    if (e) {
        e->ints[0] = count;
        e->types[0] = t->idx;
    }
    return mpi_leave(job, build(job, call, e, t->raw && t->lb == 0, newtype));
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
    ptrdiff_t step = bytes ? stride : stride * type_extent(t);
    bool raw = t->raw && t->lb == 0 && step == (ptrdiff_t)bl * type_extent(t);
    mpi_env *e = env_new(bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, bytes ? 2 : 3,
                         bytes ? 1 : 0, 1);
    if (e) {
        e->ints[0] = count;
        e->ints[1] = bl;
        if (bytes)
            e->aints[0] = stride;
        else
            e->ints[2] = (int)stride;
        e->types[0] = t->idx;
    }
    return mpi_leave(job, build(job, call, e, raw, newtype));
}

int mpi_type_vector_c(const char *call, int combiner, MPI_Count count, MPI_Count bl,
                      MPI_Count stride, MPI_Datatype old, MPI_Datatype *newtype)
{
    cr_job *job = mpi_enter(call);
    bool contig = combiner == MPI_COMBINER_CONTIGUOUS;
    mpi_type *t = NULL;
    int rc = 0;
    if (count < 0 || (!contig && bl < 0))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COUNT, "%s %lld is negative",
                      count < 0 ? "count" : "blocklength", (long long)(count < 0 ? count : bl));
    if (!rc) rc = old_check(job, call, old, &t);
    if (!rc) rc = out_check(job, call, newtype);
    if (rc) return mpi_leave(job, rc);
    ptrdiff_t step =
        combiner == MPI_COMBINER_HVECTOR ? (ptrdiff_t)stride : (ptrdiff_t)stride * type_extent(t);
    bool raw = t->raw && t->lb == 0 && (contig || step == (ptrdiff_t)bl * type_extent(t));
    mpi_env *e = env_new_c(combiner, 0, 0, contig ? 1 : 3, 1);
    if (e) {
        e->counts[0] = count;
        if (!contig) e->counts[1] = bl, e->counts[2] = stride;
        e->types[0] = t->idx;
    }
    return mpi_leave(job, build(job, call, e, raw, newtype));
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

/* Element i of an array argument, whichever form passed it. */
static MPI_Count arr_at(mpi_arr a, MPI_Count i)
{
    switch (a.kind) {
    case MPI_ARR_INT:
        return ((const int *)a.p)[i];
    case MPI_ARR_AINT:
        return ((const MPI_Aint *)a.p)[i];
    default:
        return ((const MPI_Count *)a.p)[i];
    }
}

static mpi_arr ints_arr(const int *p)
{
    return (mpi_arr){p, MPI_ARR_INT};
}

static bool fits_int(MPI_Count v)
{
    return v >= INT_MIN && v <= INT_MAX;
}

/* Value k of e's sequence (mpi_env_at) set to v. */
static void env_put(mpi_env *e, MPI_Count k, MPI_Count v)
{
    int lo = large_from(e);
    if (!e->nc && k < e->ni)
        e->ints[k] = (int)v;
    else if (!e->nc)
        e->aints[k - e->ni] = (MPI_Aint)v;
    else if (k < lo)
        e->ints[k] = (int)v;
    else if (k < lo + e->nc)
        e->counts[k - lo] = v;
    else
        e->ints[k - e->nc] = (int)v;
}

/* The envelope of a constructor of nv values, na of them addresses in the int
 * form's envelope, nd datatypes: the int form's when fits, else the large
 * one, whose [lo, lo + nl) values are counts (large_from); NULL when out of
 * memory (build reports it) or, reported in *rc, when nv is more values than
 * an envelope holds. */
static mpi_env *env_for(cr_job *job, const char *call, int combiner, bool fits, MPI_Count nv,
                        MPI_Count na, MPI_Count nl, MPI_Count nd, int *rc)
{
    *rc = 0;
    if (nv > INT_MAX || nd > INT_MAX) {
        *rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COUNT,
                       "the call passes %lld values, more than courier keeps for a datatype (%d)",
                       (long long)nv, INT_MAX);
        return NULL;
    }
    if (fits) return env_new(combiner, (int)(nv - na), (int)na, (int)nd);
    return env_new_c(combiner, (int)(nv - nl), 0, (int)nl, (int)nd);
}

int mpi_type_indexed(const char *call, int combiner, MPI_Count count, mpi_arr bls, MPI_Count bl1,
                     mpi_arr d, const MPI_Datatype *types, MPI_Datatype old, MPI_Datatype *newtype)
{
    cr_job *job = mpi_enter(call);
    bool st = combiner == MPI_COMBINER_STRUCT;
    bool block = combiner == MPI_COMBINER_INDEXED_BLOCK || combiner == MPI_COMBINER_HINDEXED_BLOCK;
    bool bytes = combiner != MPI_COMBINER_INDEXED && combiner != MPI_COMBINER_INDEXED_BLOCK;
    mpi_type *t = NULL;
    int rc = count_check(job, call, count, "count");
    if (!rc && block) rc = count_check(job, call, bl1, "blocklength");
    if (!rc && !st) rc = old_check(job, call, old, &t);
    if (!rc) rc = out_check(job, call, newtype);
    if (!rc && count && ((!block && !bls.p) || !d.p || (st && !types)))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "an array argument is NULL");
    bool fits = count <= INT_MAX && bl1 <= INT_MAX;
    for (MPI_Count i = 0; !rc && i < count; i++) {
        if (!block) rc = count_check(job, call, arr_at(bls, i), "block length");
        if (!rc && st) rc = old_check(job, call, types[i], &t);
        fits = fits && (block || arr_at(bls, i) <= INT_MAX) && (bytes || fits_int(arr_at(d, i)));
    }
    if (rc) return mpi_leave(job, rc);
    /* MPI-4.1 §5.1.13: count, the block length(s), the displacements */
    MPI_Count nb = block ? 1 : count;
    mpi_env *e = env_for(job, call, combiner, fits, 1 + nb + count, bytes ? count : 0,
                         1 + nb + count, st ? count : 1, &rc);
    if (rc) return mpi_leave(job, rc);
    if (e) {
        env_put(e, 0, count);
        for (MPI_Count i = 0; i < nb; i++) env_put(e, 1 + i, block ? bl1 : arr_at(bls, i));
        for (MPI_Count i = 0; i < count; i++) env_put(e, 1 + nb + i, arr_at(d, i));
        for (MPI_Count i = 0; i < (st ? count : 1); i++)
            e->types[i] = st ? h_idx(types[i]) : t->idx;
    }
    return mpi_leave(job, build(job, call, e, false, newtype));
}

PMPI_WEAK(Type_indexed);
int PMPI_Type_indexed(int count, const int bls[], const int displs[], MPI_Datatype old,
                      MPI_Datatype *newtype)
{
    return mpi_type_indexed("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, ints_arr(bls), 0,
                            ints_arr(displs), NULL, old, newtype);
}

PMPI_WEAK(Type_create_hindexed);
int PMPI_Type_create_hindexed(int count, const int bls[], const MPI_Aint displs[], MPI_Datatype old,
                              MPI_Datatype *newtype)
{
    return mpi_type_indexed("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count, ints_arr(bls),
                            0, (mpi_arr){displs, MPI_ARR_AINT}, NULL, old, newtype);
}

PMPI_WEAK(Type_create_indexed_block);
int PMPI_Type_create_indexed_block(int count, int bl, const int displs[], MPI_Datatype old,
                                   MPI_Datatype *newtype)
{
    return mpi_type_indexed("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count,
                            ints_arr(NULL), bl, ints_arr(displs), NULL, old, newtype);
}

PMPI_WEAK(Type_create_hindexed_block);
int PMPI_Type_create_hindexed_block(int count, int bl, const MPI_Aint displs[], MPI_Datatype old,
                                    MPI_Datatype *newtype)
{
    return mpi_type_indexed("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count,
                            ints_arr(NULL), bl, (mpi_arr){displs, MPI_ARR_AINT}, NULL, old,
                            newtype);
}

PMPI_WEAK(Type_create_struct);
int PMPI_Type_create_struct(int count, const int bls[], const MPI_Aint displs[],
                            const MPI_Datatype types[], MPI_Datatype *newtype)
{
    return mpi_type_indexed("MPI_Type_create_struct", MPI_COMBINER_STRUCT, count, ints_arr(bls), 0,
                            (mpi_arr){displs, MPI_ARR_AINT}, types, MPI_DATATYPE_NULL, newtype);
}

int mpi_type_subarray(const char *call, int nd, mpi_arr sizes, mpi_arr subs, mpi_arr starts,
                      int order, MPI_Datatype old, MPI_Datatype *newtype)
{
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = old_check(job, call, old, &t);
    if (!rc) rc = out_check(job, call, newtype);
    if (!rc && nd <= 0)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "ndims %d is not positive", nd);
    if (!rc && (!sizes.p || !subs.p || !starts.p))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "an array argument is NULL");
    if (!rc && order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    double all = rc ? 0 : (double)type_extent(t);
    bool fits = true;
    for (int d = 0; !rc && d < nd; d++) {
        MPI_Count n = arr_at(sizes, d), k = arr_at(subs, d), s = arr_at(starts, d);
        if (n <= 0 || k < 0 || k > n || s < 0 || s > n - k)
            rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                          "dimension %d: size %lld, subsize %lld, start %lld: need size > 0 and "
                          "0 <= start <= start + subsize <= size",
                          d, (long long)n, (long long)k, (long long)s);
        all *= (double)n;
        fits = fits && n <= INT_MAX; /* and so are the subsize and start */
    }
    if (!rc && (all > (double)PTRDIFF_MAX / 2 || -all > (double)PTRDIFF_MAX / 2))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "the array is too large");
    if (rc) return mpi_leave(job, rc);
    /* MPI-4.1 §5.1.13: ndims, sizes, subsizes, starts, order */
    mpi_env *e = env_for(job, call, MPI_COMBINER_SUBARRAY, fits, 3 * (MPI_Count)nd + 2, 0,
                         3 * (MPI_Count)nd, 1, &rc);
    if (rc) return mpi_leave(job, rc);
    if (e) {
        env_put(e, 0, nd);
        for (int d = 0; d < nd; d++) {
            env_put(e, 1 + d, arr_at(sizes, d));
            env_put(e, 1 + nd + d, arr_at(subs, d));
            env_put(e, 1 + 2 * nd + d, arr_at(starts, d));
        }
        env_put(e, 1 + 3 * (MPI_Count)nd, order);
        e->types[0] = t->idx;
    }
    return mpi_leave(job, build(job, call, e, false, newtype));
}

PMPI_WEAK(Type_create_subarray);
int PMPI_Type_create_subarray(int nd, const int sizes[], const int subs[], const int starts[],
                              int order, MPI_Datatype old, MPI_Datatype *newtype)
{
    return mpi_type_subarray("MPI_Type_create_subarray", nd, ints_arr(sizes), ints_arr(subs),
                             ints_arr(starts), order, old, newtype);
}

/* The argument checks of MPI_Type_create_darray(_c); 0 or the error reported. */
static int darray_check(cr_job *job, const char *call, int size, int rank, int nd, mpi_arr gsizes,
                        const int *dists, const int *dargs, const int *psizes, int order,
                        const mpi_type *t)
{
    if (size <= 0 || rank < 0 || rank >= size)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                        "size %d, rank %d: need 0 <= rank < size", size, rank);
    if (nd <= 0)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "ndims %d is not positive", nd);
    if (!gsizes.p || !dists || !dargs || !psizes)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "an array argument is NULL");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                        "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    double procs = 1, all = (double)type_extent(t);
    for (int d = 0; d < nd; d++) {
        MPI_Count n = arr_at(gsizes, d);
        int p = psizes[d], g = dargs[d];
        if (n <= 0 || p <= 0)
            return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                            "dimension %d: gsize %lld and psize %d must be positive", d,
                            (long long)n, p);
        procs *= p;
        all *= (double)n;
        switch (dists[d]) {
        case MPI_DISTRIBUTE_NONE:
            if (p != 1)
                return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                                "dimension %d is MPI_DISTRIBUTE_NONE over %d processes (must be 1)",
                                d, p);
            break;
        case MPI_DISTRIBUTE_BLOCK:
            if (g != MPI_DISTRIBUTE_DFLT_DARG && (g <= 0 || (double)g * p < (double)n))
                return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                                "dimension %d: block of %d over %d processes does not cover %lld "
                                "elements",
                                d, g, p, (long long)n);
            break;
        case MPI_DISTRIBUTE_CYCLIC:
            if (g != MPI_DISTRIBUTE_DFLT_DARG && g <= 0)
                return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                                "dimension %d: cyclic block %d is not positive", d, g);
            break;
        default:
            return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                            "dimension %d: distribution %d is not MPI_DISTRIBUTE_BLOCK, CYCLIC or "
                            "NONE",
                            d, dists[d]);
        }
    }
    if (procs != size)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                        "the process grid has %.0f processes, size is %d", procs, size);
    if (all > (double)PTRDIFF_MAX / 2 || -all > (double)PTRDIFF_MAX / 2)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "the array is too large");
    return 0;
}

int mpi_type_darray(const char *call, int size, int rank, int nd, mpi_arr gsizes, const int *dists,
                    const int *dargs, const int *psizes, int order, MPI_Datatype old,
                    MPI_Datatype *newtype)
{
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = old_check(job, call, old, &t);
    if (!rc) rc = out_check(job, call, newtype);
    if (!rc) rc = darray_check(job, call, size, rank, nd, gsizes, dists, dargs, psizes, order, t);
    if (rc) return mpi_leave(job, rc);
    bool fits = true;
    for (int d = 0; d < nd; d++) fits = fits && arr_at(gsizes, d) <= INT_MAX;
    /* MPI-4.1 §5.1.13: size, rank, ndims, gsizes, distribs, dargs, psizes, order */
    mpi_env *e =
        env_for(job, call, MPI_COMBINER_DARRAY, fits, 4 * (MPI_Count)nd + 4, 0, nd, 1, &rc);
    if (rc) return mpi_leave(job, rc);
    if (e) {
        env_put(e, 0, size);
        env_put(e, 1, rank);
        env_put(e, 2, nd);
        for (int d = 0; d < nd; d++) {
            env_put(e, 3 + d, arr_at(gsizes, d));
            env_put(e, 3 + nd + d, dists[d]);
            env_put(e, 3 + 2 * nd + d, dargs[d]);
            env_put(e, 3 + 3 * nd + d, psizes[d]);
        }
        env_put(e, 3 + 4 * (MPI_Count)nd, order);
        e->types[0] = t->idx;
    }
    return mpi_leave(job, build(job, call, e, false, newtype));
}

PMPI_WEAK(Type_create_darray);
int PMPI_Type_create_darray(int size, int rank, int nd, const int gsizes[], const int dists[],
                            const int dargs[], const int psizes[], int order, MPI_Datatype old,
                            MPI_Datatype *newtype)
{
    return mpi_type_darray("MPI_Type_create_darray", size, rank, nd, ints_arr(gsizes), dists, dargs,
                           psizes, order, old, newtype);
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
    mpi_env *e = env_new(MPI_COMBINER_RESIZED, 0, 2, 1);
    if (e) {
        e->aints[0] = lb;
        e->aints[1] = extent;
        e->types[0] = t->idx;
    }
    bool raw = t->raw && lb == 0 && extent == type_extent(t);
    return mpi_leave(job, build(job, call, e, raw, newtype));
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
    mpi_env *e = env_new(MPI_COMBINER_DUP, 0, 0, 1);
    if (e) e->types[0] = t->idx;
    MPI_Datatype nt;
    rc = build(job, call, e, t->raw, &nt);
    if (rc) return mpi_leave(job, rc);
    job->mpi->types[h_idx(nt)]->committed = t->committed;
    int kv = 0;
    rc = mpi_attrs_copy(job, MPI_OBJ_TYPE, old, nt, &kv);
    if (rc != MPI_SUCCESS) { /* nothing changed: the copy goes */
        int ignored;
        mpi_attrs_delete(job, MPI_OBJ_TYPE, nt, &ignored);
        mpi_type *n = job->mpi->types[h_idx(nt)];
        n->dead = true;
        mpi_type_unref(n->idx);
        return mpi_leave(job,
                         mpi_fail(job, MPI_COMM_WORLD, call, mpi_attr_cb_class(rc),
                                  "the copy callback of keyval %#x returned %d", (unsigned)kv, rc));
    }
    *newtype = nt;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Type_commit);
int PMPI_Type_commit(MPI_Datatype *dt)
{
    const char *call = "MPI_Type_commit";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    if (!dt)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                          "the datatype argument is NULL: pass the address of a datatype handle"));
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
    if (!dt)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                          "the datatype argument is NULL: pass the address of a datatype handle"));
    int rc = old_check(job, call, *dt, &t);
    if (rc) return mpi_leave(job, rc);
    if (t->predef || mpi_type_is_f90(t))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_TYPE,
                                       "%s is predefined and cannot be freed", t->name));
    int kv = 0;
    rc = mpi_attrs_delete(job, MPI_OBJ_TYPE, *dt, &kv);
    if (rc != MPI_SUCCESS)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, mpi_attr_cb_class(rc),
                                       "the delete callback of keyval %#x returned %d: the type "
                                       "stays",
                                       (unsigned)kv, rc));
    /* Receives still in flight keep the map until they have unpacked, and the
     * types made from this one keep it for MPI_Type_get_contents. */
    t = job->mpi->types[h_idx(*dt)];
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

/* ---- MPI_Type_create_f90_integer / real / complex ------------------------------ */

/* The type for (p, r): made once per job (the standard wants the same handle
 * for the same arguments), a twin of the named type that holds the range and
 * precision, committed, with its own combiner; its envelope keeps the named
 * type as its one datatype, which MPI_Type_get_envelope and _get_contents do
 * not show (MPI-3.1 17.1.9: none is returned). */
static int f90_type(const char *call, int combiner, int p, int r, MPI_Datatype named,
                    MPI_Datatype *newtype)
{
    cr_job *job = mpi_enter(call);
    if (!newtype)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "newtype is NULL"));
    if (named == MPI_DATATYPE_NULL)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                                       "no type has precision %d and range %d (courier's largest: "
                                       "INTEGER(%d), REAL(%d), COMPLEX(%d))",
                                       p, r, MPI_HAVE_I128 ? 16 : 8, MPI_HAVE_QUAD ? 16 : 8,
                                       MPI_HAVE_QUAD ? 16 : 8));
    struct mpi_f90_cache *c = &job->mpi->f90;
    for (int i = 0; i < c->n; i++)
        if (c->v[i].combiner == combiner && c->v[i].p == p && c->v[i].r == r) {
            *newtype = (MPI_Datatype)(K_TYPE | (unsigned)c->v[i].idx);
            return mpi_leave(job, MPI_SUCCESS);
        }
    struct mpi_f90_type *v = realloc(c->v, (size_t)(c->n + 1) * sizeof *v);
    if (!v) cr_fatal(job, call, "out of memory for datatypes");
    c->v = v;
    bool real = combiner != MPI_COMBINER_F90_INTEGER;
    mpi_type *t = mpi_type_get(named);
    mpi_env *e = env_new(combiner, real ? 2 : 1, 0, 1);
    if (e) {
        e->ints[0] = real ? p : r;
        if (real) e->ints[1] = r;
        e->types[0] = t->idx;
    }
    int rc = build(job, call, e, true, newtype);
    if (rc) return mpi_leave(job, rc);
    mpi_type *n = job->mpi->types[h_idx(*newtype)];
    n->committed = true;
    snprintf(n->name, sizeof n->name, "%s", t->name);
    c->v[c->n++] = (struct mpi_f90_type){combiner, p, r, n->idx};
    return mpi_leave(job, MPI_SUCCESS);
}

bool mpi_type_is_f90(const mpi_type *t)
{
    return t->env && (t->env->combiner == MPI_COMBINER_F90_INTEGER ||
                      t->env->combiner == MPI_COMBINER_F90_REAL ||
                      t->env->combiner == MPI_COMBINER_F90_COMPLEX);
}

/* As gfortran's SELECTED_INT_KIND and SELECTED_REAL_KIND pick them. */
PMPI_WEAK(Type_create_f90_integer);
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    MPI_Datatype t = r == MPI_UNDEFINED || r <= 2 ? MPI_INTEGER1
                     : r <= 4                     ? MPI_INTEGER2
                     : r <= 9                     ? MPI_INTEGER4
                     : r <= 18                    ? MPI_INTEGER8
                     : r <= 38 && MPI_HAVE_I128   ? MPI_INTEGER16
                                                  : MPI_DATATYPE_NULL;
    return f90_type("MPI_Type_create_f90_integer", MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, t,
                    newtype);
}

/* 4, 8 or 16: the bytes of the REAL kind that holds p and r; 0: none. */
static int f90_real_bytes(int p, int r)
{
    bool up = p == MPI_UNDEFINED, ur = r == MPI_UNDEFINED;
    if ((up || p <= 6) && (ur || r <= 37)) return 4;
    if ((up || p <= 15) && (ur || r <= 307)) return 8;
    if (MPI_HAVE_QUAD && (up || p <= 33) && (ur || r <= 4931)) return 16;
    return 0;
}

PMPI_WEAK(Type_create_f90_real);
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    int b = f90_real_bytes(p, r);
    MPI_Datatype t = b == 4 ? MPI_REAL4 : b == 8 ? MPI_REAL8 : b ? MPI_REAL16 : MPI_DATATYPE_NULL;
    return f90_type("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r, t, newtype);
}

PMPI_WEAK(Type_create_f90_complex);
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    int b = f90_real_bytes(p, r);
    MPI_Datatype t = b == 4   ? MPI_COMPLEX8
                     : b == 8 ? MPI_COMPLEX16
                     : b      ? MPI_COMPLEX32
                              : MPI_DATATYPE_NULL;
    return f90_type("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p, r, t, newtype);
}
