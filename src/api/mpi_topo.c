/* MPI process topologies (MPI-3.1 chapter 7): Cartesian, graph and
 * distributed graph communicators, their queries, and the neighbourhood
 * collectives: every form checks its arguments and finds the neighbours and
 * blocks here; the exchange is src/coll's one schedule (coll_neighbor.c),
 * which the blocking forms run here (cr_coll_neighbor) and the nonblocking and
 * persistent forms start and keep in mpi_nbc.c (mpi_nbc_neighbor).
 *
 * A topology is kept with its communicator (mpi_comm.topo, one allocation
 * holding every array): MPI_Comm_dup copies it and freeing the communicator
 * frees it (mpi_topo_dup / mpi_topo_free, which also copy and free the
 * communicator's info hints). The constructors make the communicator with
 * MPI_Comm_split over the old one (members in the old order: reorder is
 * allowed to keep it, and courier does), so ranks beyond the topology's size
 * get MPI_COMM_NULL. Cartesian ranks are row-major: the last coordinate varies
 * fastest.
 *
 * Neighbourhood collectives move their data on the communicator's collective
 * context (ctx + 1, where no point-to-point message of the program can be) with
 * the tag of a collective of the communicator's group (CR_COLL_TAG(seq, step),
 * seq taken once per call on every member; the nonblocking forms take the same
 * seq and the nonblocking collectives' tags), so they never match a message of
 * the program nor of another collective. Neighbour order (MPI-3.1 §7.6): on a
 * Cartesian communicator, for each dimension the neighbour at -1 then the one
 * at +1, MPI_PROC_NULL at non-periodic edges (nothing sent, the receive block
 * left untouched); on a graph, MPI_Graph_neighbors' order; on a distributed
 * graph, sources in and destinations out. The step of the tag tells which
 * Cartesian direction a block travels (what a member sends towards +1 in
 * dimension d is what its +1 neighbour receives from -1), so a neighbour met
 * twice (a periodic dimension of size 1 or 2) still gets each block in its
 * place; on graphs, repeated edges between two members pair up in order.
 *
 * Invariants: every argument is checked before anything moves or is made (a
 * failed call changes nothing); a topology is never shared between two
 * communicators. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "mpi_nbc.h"

typedef struct mpi_topo {
    int kind;                   /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int ndims;                  /* Cartesian */
    int *dims, *periods;        /* [ndims] */
    int nnodes, nedges;         /* graph */
    int *index, *edges;         /* [nnodes], [nedges] */
    int indeg, outdeg;          /* distributed graph */
    int *srcs, *sw, *dsts, *dw; /* [indeg] x2, [outdeg] x2 (weights 1 when unweighted) */
    bool weighted;
    size_t nints;
    int mem[]; /* every array above */
} mpi_topo;

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are the addresses of these: markers,
 * never read nor written. */
int courier_mpi_weights[2];

/* ---- the topology object ---------------------------------------------------------- */

static mpi_topo *topo_new(cr_job *job, const char *call, int kind, size_t nints)
{
    mpi_topo *t = calloc(1, sizeof *t + (nints ? nints : 1) * sizeof(int));
    if (!t) cr_fatal(job, call, "out of memory for a topology");
    t->kind = kind;
    t->nints = nints;
    return t;
}

static int *rebase(const mpi_topo *from, mpi_topo *to, int *p)
{
    return p ? to->mem + (p - from->mem) : NULL;
}

void mpi_topo_dup(MPI_Comm oldh, MPI_Comm newh)
{
    mpi_comm *o = mpi_comm_get(oldh), *n = mpi_comm_get(newh);
    if (!o || !n) return;
    MPI_Info hints = o->info;
    if (hints != MPI_INFO_NULL) {
        MPI_Info copy = mpi_info_copy(hints); /* may move no communicator */
        n->info = copy;
    }
    if (!o->topo) return;
    size_t bytes = sizeof *o->topo + (o->topo->nints ? o->topo->nints : 1) * sizeof(int);
    mpi_topo *t = malloc(bytes);
    if (!t) cr_fatal(cr_job_get(), "MPI_Comm_dup", "out of memory for a topology");
    memcpy(t, o->topo, bytes);
    const mpi_topo *f = o->topo;
    t->dims = rebase(f, t, f->dims);
    t->periods = rebase(f, t, f->periods);
    t->index = rebase(f, t, f->index);
    t->edges = rebase(f, t, f->edges);
    t->srcs = rebase(f, t, f->srcs);
    t->sw = rebase(f, t, f->sw);
    t->dsts = rebase(f, t, f->dsts);
    t->dw = rebase(f, t, f->dw);
    n->topo = t;
}

void mpi_topo_free(mpi_comm *c)
{
    free(c->topo);
    c->topo = NULL;
    if (c->info != MPI_INFO_NULL) mpi_info_drop(c->info);
    c->info = MPI_INFO_NULL;
}

/* ---- arguments and errors ------------------------------------------------------- */

typedef struct targs {
    cr_job *job;
    const char *call;
    MPI_Comm comm;
    mpi_comm *c;
    /* neighbourhood collectives: the request of a nonblocking one (NULL:
     * blocking; &noreq: the program passed NULL) and which one (mpi_nbc_neighbor) */
    MPI_Request *req;
    int which;
    int *nmem; /* nbrs_get's arrays */
} targs;

/* The request a nonblocking neighbourhood collective got as NULL (a sentinel:
 * the call fails before anything is written to it). */
static const MPI_Request noreq;
#define NOREQ ((MPI_Request *)&noreq)

static int fail(targs *a, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(targs *a, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mpi_vfail(a->job, a->comm, a->call, code, fmt, ap);
    va_end(ap);
    return rc;
}

static int done(targs *a, int rc)
{
    return mpi_leave(a->job, rc);
}

/* Enter a call on an intracommunicator. */
static int begin(targs *a, const char *call, MPI_Comm comm)
{
    a->call = call;
    a->comm = comm;
    a->c = NULL;
    a->job = mpi_enter(call);
    int rc = mpi_comm_check(a->job, call, comm, &a->c);
    if (!rc && a->c->inter)
        rc = fail(a, MPI_ERR_COMM, "an intercommunicator cannot have a topology");
    return rc;
}

/* Enter a call on a communicator that must have a topology of 'kind' (0: any). */
static int begin_topo(targs *a, const char *call, MPI_Comm comm, int kind)
{
    int rc = begin(a, call, comm);
    if (rc) return rc;
    static const char *const names[] = {[0] = "",
                                        [MPI_CART] = "a Cartesian",
                                        [MPI_GRAPH] = "a graph",
                                        [MPI_DIST_GRAPH] = "a distributed graph"};
    if (!a->c->topo)
        return fail(a, MPI_ERR_TOPOLOGY, "the communicator has no topology%s%s",
                    kind ? ": it needs " : "", kind ? names[kind] : "");
    if (kind && a->c->topo->kind != kind)
        return fail(a, MPI_ERR_TOPOLOGY, "the communicator has %s topology, not %s",
                    names[a->c->topo->kind], names[kind]);
    return 0;
}

static int nullarg(targs *a, const void *p, const char *what)
{
    return p ? 0 : fail(a, MPI_ERR_ARG, "%s is NULL", what);
}

/* Make the new communicator of a constructor: the first n members of the old
 * one, in order, with topology t (taken; freed when the call fails or this rank
 * is not in it). Entered with the lock held; returns with it released. */
static int topo_comm(targs *a, int n, mpi_topo *t, MPI_Comm *out)
{
    int me = a->c->me;
    mpi_leave(a->job, 0);
    MPI_Comm nc = MPI_COMM_NULL;
    int rc = PMPI_Comm_split(a->comm, me < n ? 0 : MPI_UNDEFINED, me, &nc);
    if (rc || nc == MPI_COMM_NULL) {
        free(t);
        *out = MPI_COMM_NULL;
        return rc;
    }
    cr_lock(a->job);
    mpi_comm_get(nc)->topo = t;
    *out = nc;
    return mpi_leave(a->job, MPI_SUCCESS);
}

/* ---- MPI_Dims_create ----------------------------------------------------------- */

/* The balanced factorization of n into k factors: the smallest spread (largest
 * minus smallest), ties going to the one whose factors, compared from the
 * smallest up, are larger (as MPICH chooses). Factors are tried in
 * non-increasing order, with pruning on the spread. */
typedef struct dsearch {
    int k;
    long long *cur, *best;
    long long spread;
    bool found;
    const long long *div; /* the divisors of the number split, ascending */
    int ndiv;
} dsearch;

static bool dims_better(const dsearch *s)
{
    long long sp = s->cur[0] - s->cur[s->k - 1];
    if (!s->found || sp < s->spread) return true;
    if (sp > s->spread) return false;
    for (int i = s->k - 1; i >= 0; i--)
        if (s->cur[i] != s->best[i]) return s->cur[i] > s->best[i];
    return false;
}

/* Factors i.. of the split: n left to split, none above maxf. */
static void dims_search(dsearch *s, int i, long long n, long long maxf)
{
    int left = s->k - i;
    if (left == 1) {
        if (n > maxf) return;
        s->cur[i] = n;
        if (dims_better(s)) {
            memcpy(s->best, s->cur, (size_t)s->k * sizeof *s->cur);
            s->spread = s->cur[0] - s->cur[s->k - 1];
            s->found = true;
        }
        return;
    }
    for (int d = s->ndiv - 1; d >= 0; d--) {
        long long f = s->div[d];
        if (f > maxf || f > n) continue;
        /* the remaining factors are all <= f: f^left must reach n */
        long long p = 1;
        for (int j = 0; j < left && p < n; j++) p *= f;
        if (p < n) break;
        if (s->found && i > 0 && s->cur[0] - f > s->spread) break; /* the spread only grows */
        if (n % f) continue;
        s->cur[i] = f;
        dims_search(s, i + 1, n / f, f);
    }
}

static void dims_balanced(cr_job *job, int n, int k, int *out)
{
    int ndiv = 0;
    long long *div = malloc(2 * 1600 * sizeof *div); /* an int has at most 1536 divisors */
    long long *cb = malloc(2 * (size_t)k * sizeof *cb);
    if (!div || !cb) cr_fatal(job, "MPI_Dims_create", "out of memory");
    long long *hi = div + 1600;
    int nhi = 0;
    for (long long f = 1; f * f <= n; f++)
        if (n % f == 0) {
            div[ndiv++] = f;
            if (f * f != n) hi[nhi++] = n / f;
        }
    while (nhi) div[ndiv++] = hi[--nhi];
    dsearch s = {k, cb, cb + k, 0, false, div, ndiv};
    dims_search(&s, 0, n, n);
    for (int i = 0; i < k; i++) out[i] = (int)s.best[i];
    free(cb);
    free(div);
}

PMPI_WEAK(Dims_create);
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    targs a = {.call = "MPI_Dims_create", .comm = MPI_COMM_WORLD};
    a.job = mpi_enter(a.call);
    if (ndims < 0) return done(&a, fail(&a, MPI_ERR_DIMS, "ndims %d is negative", ndims));
    if (nnodes <= 0) return done(&a, fail(&a, MPI_ERR_ARG, "nnodes %d is not positive", nnodes));
    if (ndims > 0 && !dims) return done(&a, fail(&a, MPI_ERR_ARG, "dims is NULL"));
    long long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return done(&a, fail(&a, MPI_ERR_DIMS, "dims[%d] is %d: entries are >= 0", i, dims[i]));
        if (dims[i] == 0)
            nfree++;
        else if ((fixed *= dims[i]) > nnodes)
            break;
    }
    if (nnodes % fixed || (!nfree && fixed != nnodes))
        return done(&a, fail(&a, MPI_ERR_DIMS,
                             "nnodes %d is not a multiple of the product of the dimensions given "
                             "(the nonzero entries of dims)%s",
                             nnodes, nfree ? "" : ", nor equal to it"));
    if (!nfree) return done(&a, MPI_SUCCESS);
    int *f = malloc((size_t)nfree * sizeof *f);
    if (!f) cr_fatal(a.job, a.call, "out of memory");
    dims_balanced(a.job, (int)(nnodes / fixed), nfree, f);
    for (int i = 0, j = 0; i < ndims; i++)
        if (!dims[i]) dims[i] = f[j++];
    free(f);
    return done(&a, MPI_SUCCESS);
}

/* ---- Cartesian topologies ------------------------------------------------------- */

/* Coordinates of rank r (row-major). */
static void cart_coords(const mpi_topo *t, int r, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = r % t->dims[i];
        r /= t->dims[i];
    }
}

/* Rank of 'coords' (each already inside its dimension). */
static int cart_rank(const mpi_topo *t, const int *coords)
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++) r = r * t->dims[i] + coords[i];
    return r;
}

/* Neighbour of rank r at displacement disp in dimension d, or MPI_PROC_NULL. */
static int cart_step(const mpi_topo *t, int r, int d, int disp)
{
    int stride = 1;
    for (int i = t->ndims - 1; i > d; i--) stride *= t->dims[i];
    int n = t->dims[d], c = (r / stride) % n;
    long long x = (long long)c + disp;
    if (x < 0 || x >= n) {
        if (!t->periods[d]) return MPI_PROC_NULL;
        x %= n;
        if (x < 0) x += n;
    }
    return r + (int)(x - c) * stride;
}

static int cart_args(targs *a, int ndims, const int dims[], const int periods[], long long *prod)
{
    if (ndims < 0) return fail(a, MPI_ERR_DIMS, "ndims %d is negative", ndims);
    if (ndims > 0 && (!dims || !periods))
        return fail(a, MPI_ERR_ARG, "%s is NULL", dims ? "periods" : "dims");
    long long p = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return fail(a, MPI_ERR_DIMS, "dims[%d] is %d: dimensions are positive", i, dims[i]);
        p *= dims[i];
        if (p > a->c->size)
            return fail(a, MPI_ERR_TOPOLOGY,
                        "the grid has more than %d processes: the communicator has only %d",
                        a->c->size, a->c->size);
    }
    *prod = p;
    return 0;
}

static mpi_topo *cart_make(cr_job *job, const char *call, int ndims, const int *dims,
                           const int *periods)
{
    mpi_topo *t = topo_new(job, call, MPI_CART, 2 * (size_t)ndims);
    t->ndims = ndims;
    t->dims = t->mem;
    t->periods = t->mem + ndims;
    for (int i = 0; i < ndims; i++) {
        t->dims[i] = dims[i];
        t->periods[i] = periods[i] != 0;
    }
    return t;
}

PMPI_WEAK(Cart_create);
int PMPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *comm_cart)
{
    (void)reorder; /* the old order is as good as any: kept */
    targs a;
    long long n = 0;
    int rc = begin(&a, "MPI_Cart_create", comm);
    if (!rc) rc = nullarg(&a, comm_cart, "comm_cart");
    if (!rc) rc = cart_args(&a, ndims, dims, periods, &n);
    if (rc) return done(&a, rc);
    return topo_comm(&a, (int)n, cart_make(a.job, a.call, ndims, dims, periods), comm_cart);
}

PMPI_WEAK(Cartdim_get);
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    targs a;
    int rc = begin_topo(&a, "MPI_Cartdim_get", comm, MPI_CART);
    if (!rc) rc = nullarg(&a, ndims, "ndims");
    if (!rc) *ndims = a.c->topo->ndims;
    return done(&a, rc);
}

PMPI_WEAK(Cart_get);
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    targs a;
    int rc = begin_topo(&a, "MPI_Cart_get", comm, MPI_CART);
    const mpi_topo *t = rc ? NULL : a.c->topo;
    if (!rc && maxdims < 0) rc = fail(&a, MPI_ERR_ARG, "maxdims %d is negative", maxdims);
    int n = t && maxdims < t->ndims ? maxdims : t ? t->ndims : 0;
    if (!rc && n > 0 && (!dims || !periods || !coords))
        rc = fail(&a, MPI_ERR_ARG, "%s is NULL", !dims ? "dims" : !periods ? "periods" : "coords");
    if (rc) return done(&a, rc);
    int *c = malloc(((size_t)t->ndims + 1) * sizeof *c);
    if (!c) cr_fatal(a.job, a.call, "out of memory");
    cart_coords(t, a.c->me, c);
    for (int i = 0; i < n; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = c[i];
    }
    free(c);
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Cart_rank);
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    targs a;
    int rc = begin_topo(&a, "MPI_Cart_rank", comm, MPI_CART);
    if (!rc) rc = nullarg(&a, rank, "rank");
    const mpi_topo *t = rc ? NULL : a.c->topo;
    if (!rc && t->ndims > 0) rc = nullarg(&a, coords, "coords");
    int *c = NULL;
    if (!rc) {
        c = malloc(((size_t)t->ndims + 1) * sizeof *c);
        if (!c) cr_fatal(a.job, a.call, "out of memory");
    }
    for (int i = 0; !rc && i < t->ndims; i++) {
        int n = t->dims[i], x = coords[i];
        if (t->periods[i]) {
            x %= n;
            if (x < 0) x += n;
        } else if (x < 0 || x >= n) {
            rc = fail(&a, MPI_ERR_ARG,
                      "coords[%d] is %d: dimension %d is not periodic and has coordinates 0..%d", i,
                      x, i, n - 1);
        }
        c[i] = x;
    }
    if (!rc) *rank = cart_rank(t, c);
    free(c);
    return done(&a, rc);
}

PMPI_WEAK(Cart_coords);
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    targs a;
    int rc = begin_topo(&a, "MPI_Cart_coords", comm, MPI_CART);
    const mpi_topo *t = rc ? NULL : a.c->topo;
    if (!rc && (rank < 0 || rank >= a.c->size))
        rc = fail(&a, MPI_ERR_RANK, "rank %d is invalid: ranks in this communicator are 0..%d",
                  rank, a.c->size - 1);
    if (!rc && maxdims < 0) rc = fail(&a, MPI_ERR_ARG, "maxdims %d is negative", maxdims);
    if (!rc && maxdims < t->ndims)
        rc = fail(&a, MPI_ERR_ARG, "maxdims %d is less than the %d dimensions", maxdims, t->ndims);
    if (!rc && t->ndims > 0) rc = nullarg(&a, coords, "coords");
    if (!rc) cart_coords(t, rank, coords);
    return done(&a, rc);
}

PMPI_WEAK(Cart_shift);
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    targs a;
    int rc = begin_topo(&a, "MPI_Cart_shift", comm, MPI_CART);
    const mpi_topo *t = rc ? NULL : a.c->topo;
    if (!rc && (direction < 0 || direction >= t->ndims))
        rc = fail(&a, MPI_ERR_ARG, "direction %d is invalid: the grid has dimensions 0..%d",
                  direction, t->ndims - 1);
    if (!rc && (!rank_source || !rank_dest))
        rc = fail(&a, MPI_ERR_ARG, "%s is NULL", rank_source ? "rank_dest" : "rank_source");
    if (rc) return done(&a, rc);
    *rank_source = cart_step(t, a.c->me, direction, -disp);
    *rank_dest = cart_step(t, a.c->me, direction, disp);
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Cart_sub);
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    targs a;
    int rc = begin_topo(&a, "MPI_Cart_sub", comm, MPI_CART);
    if (!rc) rc = nullarg(&a, newcomm, "newcomm");
    const mpi_topo *t = rc ? NULL : a.c->topo;
    if (!rc && t->ndims > 0) rc = nullarg(&a, remain_dims, "remain_dims");
    if (rc) return done(&a, rc);
    /* color: the coordinates dropped (row-major); key: the rank, whose order is
     * the kept coordinates' row-major order within one color */
    int nd = t->ndims, kept = 0, *c = malloc(((size_t)nd + 1) * sizeof *c);
    int *nd_dims = malloc(((size_t)nd + 1) * 2 * sizeof *nd_dims);
    if (!c || !nd_dims) cr_fatal(a.job, a.call, "out of memory");
    cart_coords(t, a.c->me, c);
    int color = 0;
    for (int i = 0; i < nd; i++) {
        if (remain_dims[i]) {
            nd_dims[kept] = t->dims[i];
            nd_dims[nd + kept] = t->periods[i];
            kept++;
        } else {
            color = color * t->dims[i] + c[i];
        }
    }
    mpi_topo *sub = cart_make(a.job, a.call, kept, nd_dims, nd_dims + nd);
    free(nd_dims);
    free(c);
    int me = a.c->me;
    mpi_leave(a.job, 0);
    MPI_Comm nc = MPI_COMM_NULL;
    rc = PMPI_Comm_split(comm, color, me, &nc);
    if (rc) {
        free(sub);
        return rc;
    }
    cr_lock(a.job);
    mpi_comm_get(nc)->topo = sub;
    *newcomm = nc;
    return mpi_leave(a.job, MPI_SUCCESS);
}

PMPI_WEAK(Cart_map);
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    targs a;
    long long n = 0;
    int rc = begin(&a, "MPI_Cart_map", comm);
    if (!rc) rc = nullarg(&a, newrank, "newrank");
    if (!rc) rc = cart_args(&a, ndims, dims, periods, &n);
    if (!rc) *newrank = a.c->me < n ? a.c->me : MPI_UNDEFINED;
    return done(&a, rc);
}

/* ---- graph topologies --------------------------------------------------------------- */

static int graph_args(targs *a, int nnodes, const int index[], const int edges[])
{
    if (nnodes < 0) return fail(a, MPI_ERR_ARG, "nnodes %d is negative", nnodes);
    if (nnodes > a->c->size)
        return fail(a, MPI_ERR_TOPOLOGY,
                    "nnodes %d is more than the %d processes of the communicator", nnodes,
                    a->c->size);
    if (nnodes == 0) return 0;
    if (!index) return fail(a, MPI_ERR_ARG, "index is NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return fail(a, MPI_ERR_ARG,
                        "index[%d] is %d: index must not decrease (nor start "
                        "below 0)",
                        i, index[i]);
    if (index[nnodes - 1] > 0 && !edges) return fail(a, MPI_ERR_ARG, "edges is NULL");
    for (int i = 0; i < index[nnodes - 1]; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return fail(a, MPI_ERR_ARG, "edges[%d] is %d: nodes are 0..%d", i, edges[i],
                        nnodes - 1);
    return 0;
}

PMPI_WEAK(Graph_create);
int PMPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm *comm_graph)
{
    (void)reorder;
    targs a;
    int rc = begin(&a, "MPI_Graph_create", comm);
    if (!rc) rc = nullarg(&a, comm_graph, "comm_graph");
    if (!rc) rc = graph_args(&a, nnodes, index, edges);
    if (rc) return done(&a, rc);
    int ne = nnodes ? index[nnodes - 1] : 0;
    mpi_topo *t = topo_new(a.job, a.call, MPI_GRAPH, (size_t)nnodes + (size_t)ne);
    t->nnodes = nnodes;
    t->nedges = ne;
    t->index = t->mem;
    t->edges = t->mem + nnodes;
    if (nnodes) memcpy(t->index, index, (size_t)nnodes * sizeof(int));
    if (ne) memcpy(t->edges, edges, (size_t)ne * sizeof(int));
    return topo_comm(&a, nnodes, t, comm_graph);
}

PMPI_WEAK(Graphdims_get);
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    targs a;
    int rc = begin_topo(&a, "MPI_Graphdims_get", comm, MPI_GRAPH);
    if (!rc && (!nnodes || !nedges))
        rc = fail(&a, MPI_ERR_ARG, "%s is NULL", nnodes ? "nedges" : "nnodes");
    if (!rc) {
        *nnodes = a.c->topo->nnodes;
        *nedges = a.c->topo->nedges;
    }
    return done(&a, rc);
}

PMPI_WEAK(Graph_get);
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    targs a;
    int rc = begin_topo(&a, "MPI_Graph_get", comm, MPI_GRAPH);
    if (!rc && (maxindex < 0 || maxedges < 0))
        rc = fail(&a, MPI_ERR_ARG, "maxindex %d / maxedges %d is negative", maxindex, maxedges);
    if (rc) return done(&a, rc);
    const mpi_topo *t = a.c->topo;
    int ni = maxindex < t->nnodes ? maxindex : t->nnodes;
    int ne = maxedges < t->nedges ? maxedges : t->nedges;
    if ((ni && !index) || (ne && !edges))
        return done(&a, fail(&a, MPI_ERR_ARG, "%s is NULL", ni && !index ? "index" : "edges"));
    if (ni) memcpy(index, t->index, (size_t)ni * sizeof(int));
    if (ne) memcpy(edges, t->edges, (size_t)ne * sizeof(int));
    return done(&a, MPI_SUCCESS);
}

static int graph_rank(targs *a, int rank)
{
    if (rank < 0 || rank >= a->c->topo->nnodes)
        return fail(a, MPI_ERR_RANK, "rank %d is invalid: the graph's nodes are 0..%d", rank,
                    a->c->topo->nnodes - 1);
    return 0;
}

PMPI_WEAK(Graph_neighbors_count);
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    targs a;
    int rc = begin_topo(&a, "MPI_Graph_neighbors_count", comm, MPI_GRAPH);
    if (!rc) rc = graph_rank(&a, rank);
    if (!rc) rc = nullarg(&a, nneighbors, "nneighbors");
    if (!rc) {
        const mpi_topo *t = a.c->topo;
        *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    }
    return done(&a, rc);
}

PMPI_WEAK(Graph_neighbors);
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    targs a;
    int rc = begin_topo(&a, "MPI_Graph_neighbors", comm, MPI_GRAPH);
    if (!rc) rc = graph_rank(&a, rank);
    if (!rc && maxneighbors < 0)
        rc = fail(&a, MPI_ERR_ARG, "maxneighbors %d is negative", maxneighbors);
    if (rc) return done(&a, rc);
    const mpi_topo *t = a.c->topo;
    int lo = rank ? t->index[rank - 1] : 0, n = t->index[rank] - lo;
    if (n > maxneighbors) n = maxneighbors;
    if (n && !neighbors) return done(&a, fail(&a, MPI_ERR_ARG, "neighbors is NULL"));
    if (n) memcpy(neighbors, t->edges + lo, (size_t)n * sizeof(int));
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Graph_map);
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    targs a;
    int rc = begin(&a, "MPI_Graph_map", comm);
    if (!rc) rc = nullarg(&a, newrank, "newrank");
    if (!rc) rc = graph_args(&a, nnodes, index, edges);
    if (!rc && nnodes == 0) rc = fail(&a, MPI_ERR_ARG, "nnodes is 0");
    if (!rc) *newrank = a.c->me < nnodes ? a.c->me : MPI_UNDEFINED;
    return done(&a, rc);
}

/* ---- distributed graph topologies ---------------------------------------------------- */

static mpi_topo *dist_make(cr_job *job, const char *call, int indeg, int outdeg, bool weighted)
{
    mpi_topo *t = topo_new(job, call, MPI_DIST_GRAPH, 2 * ((size_t)indeg + (size_t)outdeg));
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->srcs = t->mem;
    t->sw = t->srcs + indeg;
    t->dsts = t->sw + indeg;
    t->dw = t->dsts + outdeg;
    t->weighted = weighted;
    return t;
}

static int rank_list(targs *a, int n, const int *r, const char *what)
{
    if (n > 0 && !r) return fail(a, MPI_ERR_ARG, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= a->c->size)
            return fail(a, MPI_ERR_RANK, "%s[%d] is %d: ranks in this communicator are 0..%d", what,
                        i, r[i], a->c->size - 1);
    return 0;
}

static int weight_list(targs *a, int n, const int *w, const char *what)
{
    if (w == MPI_UNWEIGHTED || n == 0) return 0;
    if (!w || w == MPI_WEIGHTS_EMPTY)
        return fail(a, MPI_ERR_ARG, "%s is %s but there are %d edges", what,
                    w ? "MPI_WEIGHTS_EMPTY" : "NULL", n);
    for (int i = 0; i < n; i++)
        if (w[i] < 0) return fail(a, MPI_ERR_ARG, "%s[%d] is %d: weights are >= 0", what, i, w[i]);
    return 0;
}

static int info_arg(targs *a, MPI_Info info)
{
    if (info == MPI_INFO_NULL) return 0;
    int n;
    mpi_leave(a->job, 0); /* MPI_Info_get_nkeys takes the lock itself */
    int rc = PMPI_Info_get_nkeys(info, &n);
    cr_lock(a->job);
    return rc;
}

PMPI_WEAK(Dist_graph_create_adjacent);
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    (void)reorder;
    targs a;
    int rc = begin(&a, "MPI_Dist_graph_create_adjacent", comm);
    if (!rc) rc = nullarg(&a, comm_dist_graph, "comm_dist_graph");
    if (!rc && (indegree < 0 || outdegree < 0))
        rc = fail(&a, MPI_ERR_ARG, "%s %d is negative", indegree < 0 ? "indegree" : "outdegree",
                  indegree < 0 ? indegree : outdegree);
    if (!rc) rc = rank_list(&a, indegree, sources, "sources");
    if (!rc) rc = rank_list(&a, outdegree, destinations, "destinations");
    if (!rc) rc = weight_list(&a, indegree, sourceweights, "sourceweights");
    if (!rc) rc = weight_list(&a, outdegree, destweights, "destweights");
    if (!rc && (sourceweights == MPI_UNWEIGHTED) != (destweights == MPI_UNWEIGHTED))
        rc = fail(&a, MPI_ERR_ARG,
                  "sourceweights and destweights must both be MPI_UNWEIGHTED or neither");
    if (!rc) rc = info_arg(&a, info);
    if (rc) return done(&a, rc);
    bool weighted = sourceweights != MPI_UNWEIGHTED;
    mpi_topo *t = dist_make(a.job, a.call, indegree, outdegree, weighted);
    for (int i = 0; i < indegree; i++) {
        t->srcs[i] = sources[i];
        t->sw[i] = weighted ? sourceweights[i] : 1;
    }
    for (int i = 0; i < outdegree; i++) {
        t->dsts[i] = destinations[i];
        t->dw[i] = weighted ? destweights[i] : 1;
    }
    return topo_comm(&a, a.c->size, t, comm_dist_graph);
}

typedef struct dedge {
    int src, dst, w;
} dedge;

PMPI_WEAK(Dist_graph_create);
int PMPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    (void)reorder;
    targs a;
    int rc = begin(&a, "MPI_Dist_graph_create", comm);
    if (!rc) rc = nullarg(&a, comm_dist_graph, "comm_dist_graph");
    if (!rc && n < 0) rc = fail(&a, MPI_ERR_ARG, "n %d is negative", n);
    if (!rc) rc = rank_list(&a, n, sources, "sources");
    if (!rc && n > 0) rc = nullarg(&a, degrees, "degrees");
    long long ne = 0;
    for (int i = 0; !rc && i < n; i++) {
        if (degrees[i] < 0)
            rc = fail(&a, MPI_ERR_ARG, "degrees[%d] is %d: degrees are >= 0", i, degrees[i]);
        ne += degrees[i];
        if (!rc && ne > 0x7fffffff) rc = fail(&a, MPI_ERR_ARG, "more than 2^31 edges");
    }
    if (!rc) rc = rank_list(&a, (int)ne, destinations, "destinations");
    if (!rc) rc = weight_list(&a, (int)ne, weights, "weights");
    if (!rc) rc = info_arg(&a, info);
    if (rc) return done(&a, rc);
    bool weighted = weights != MPI_UNWEIGHTED;
    /* every member learns every edge: gather the counts, then the edges */
    int np = a.c->size;
    dedge *mine = malloc(((size_t)ne + 1) * sizeof *mine);
    size_t *lens = malloc(2 * (size_t)np * sizeof *lens);
    long long *cnt = malloc((size_t)np * sizeof *cnt);
    if (!mine || !lens || !cnt) cr_fatal(a.job, a.call, "out of memory");
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++)
            mine[k] = (dedge){sources[i], destinations[k], weighted ? weights[k] : 1};
    long long my = ne;
    cr_coll_allgather(a.job, &a.c->g, a.call, &my, cnt, sizeof my);
    size_t total = 0;
    for (int i = 0; i < np; i++) {
        lens[i] = (size_t)cnt[i] * sizeof(dedge);
        lens[np + i] = total;
        total += lens[i];
    }
    dedge *all = malloc(total + sizeof(dedge));
    if (!all) cr_fatal(a.job, a.call, "out of memory");
    cr_coll_allgatherv(a.job, &a.c->g, a.call, mine, lens[a.c->me], all, lens, lens + np);
    size_t nall = total / sizeof(dedge);
    int me = a.c->me, indeg = 0, outdeg = 0;
    for (size_t i = 0; i < nall; i++) {
        indeg += all[i].dst == me;
        outdeg += all[i].src == me;
    }
    mpi_topo *t = dist_make(a.job, a.call, indeg, outdeg, weighted);
    int ki = 0, ko = 0;
    for (size_t i = 0; i < nall; i++) {
        if (all[i].dst == me) {
            t->srcs[ki] = all[i].src;
            t->sw[ki++] = all[i].w;
        }
        if (all[i].src == me) {
            t->dsts[ko] = all[i].dst;
            t->dw[ko++] = all[i].w;
        }
    }
    free(all);
    free(mine);
    free(lens);
    free(cnt);
    return topo_comm(&a, np, t, comm_dist_graph);
}

PMPI_WEAK(Dist_graph_neighbors_count);
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    targs a;
    int rc = begin_topo(&a, "MPI_Dist_graph_neighbors_count", comm, MPI_DIST_GRAPH);
    if (!rc && (!indegree || !outdegree || !weighted))
        rc = fail(&a, MPI_ERR_ARG, "%s is NULL",
                  !indegree    ? "indegree"
                  : !outdegree ? "outdegree"
                               : "weighted");
    if (!rc) {
        *indegree = a.c->topo->indeg;
        *outdegree = a.c->topo->outdeg;
        *weighted = a.c->topo->weighted;
    }
    return done(&a, rc);
}

PMPI_WEAK(Dist_graph_neighbors);
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    targs a;
    int rc = begin_topo(&a, "MPI_Dist_graph_neighbors", comm, MPI_DIST_GRAPH);
    if (rc) return done(&a, rc);
    const mpi_topo *t = a.c->topo;
    if (maxindegree < 0 || maxoutdegree < 0)
        return done(&a, fail(&a, MPI_ERR_ARG, "maxindegree %d / maxoutdegree %d is negative",
                             maxindegree, maxoutdegree));
    int ni = maxindegree < t->indeg ? maxindegree : t->indeg;
    int no = maxoutdegree < t->outdeg ? maxoutdegree : t->outdeg;
    bool w = t->weighted;
    if ((ni && !sources) || (no && !destinations))
        return done(
            &a, fail(&a, MPI_ERR_ARG, "%s is NULL", ni && !sources ? "sources" : "destinations"));
    if (w && ((ni && (!sourceweights || sourceweights == MPI_UNWEIGHTED)) ||
              (no && (!destweights || destweights == MPI_UNWEIGHTED))))
        return done(&a, fail(&a, MPI_ERR_ARG,
                             "the graph is weighted: sourceweights and destweights must be "
                             "arrays"));
    for (int i = 0; i < ni; i++) {
        sources[i] = t->srcs[i];
        if (w) sourceweights[i] = t->sw[i];
    }
    for (int i = 0; i < no; i++) {
        destinations[i] = t->dsts[i];
        if (w) destweights[i] = t->dw[i];
    }
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Topo_test);
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    targs a = {.call = "MPI_Topo_test", .comm = comm};
    a.job = mpi_enter(a.call);
    int rc = mpi_comm_check(a.job, a.call, comm, &a.c);
    if (!rc) rc = nullarg(&a, status, "status");
    if (!rc) *status = a.c->topo ? a.c->topo->kind : MPI_UNDEFINED;
    return done(&a, rc);
}

/* ---- neighbourhood collectives ------------------------------------------------------- */

/* The neighbours of this member: in[i] sends block i to it, it sends block i
 * to out[i] (MPI_PROC_NULL: none); the steps (Cartesian only, else NULL): the
 * tag step of block i, sending and receiving. Arrays to free in a->nmem. */
static void nbrs_get(targs *a, cr_nbrs *n)
{
    const mpi_comm *c = a->c;
    const mpi_topo *t = c->topo;
    *n = (cr_nbrs){0};
    if (t->kind == MPI_CART) {
        int k = 2 * t->ndims;
        int *l = a->nmem = malloc(((size_t)k + 1) * 3 * sizeof(int));
        if (!l) cr_fatal(a->job, a->call, "out of memory");
        int *sstep = l + k, *rstep = l + 2 * k;
        for (int d = 0; d < t->ndims; d++) {
            l[2 * d] = cart_step(t, c->me, d, -1);
            l[2 * d + 1] = cart_step(t, c->me, d, 1);
            /* a block sent towards -1 arrives from +1 at the other end */
            sstep[2 * d] = (2 * d) & 0xfff;
            sstep[2 * d + 1] = (2 * d + 1) & 0xfff;
            rstep[2 * d] = (2 * d + 1) & 0xfff;
            rstep[2 * d + 1] = (2 * d) & 0xfff;
        }
        n->nin = n->nout = k;
        n->in = n->out = l;
        n->sstep = sstep;
        n->rstep = rstep;
    } else if (t->kind == MPI_GRAPH) {
        int lo = c->me ? t->index[c->me - 1] : 0;
        n->nin = n->nout = c->me < t->nnodes ? t->index[c->me] - lo : 0;
        n->in = n->out = t->edges + lo;
    } else {
        n->nin = t->indeg;
        n->nout = t->outdeg;
        n->in = t->srcs;
        n->out = t->dsts;
    }
}

/* Block i of an exchange (the receives, then the sends) and whether it moves
 * (its neighbour is not MPI_PROC_NULL). */
static const mpi_nblk *nblk(const cr_nbrs *n, const mpi_nblk *rb, const mpi_nblk *sb, int i,
                            bool *moves)
{
    *moves = (i < n->nin ? n->in[i] : n->out[i - n->nin]) >= 0;
    return i < n->nin ? &rb[i] : &sb[i - n->nin];
}

/* The blocking form: src/coll's exchange (cr_coll_neighbor) run here, the
 * blocks of non-contiguous types that move packed into one staging buffer
 * before it and unpacked after. */
static void nb_exchange(targs *a, const cr_nbrs *n, const mpi_nblk *rb, const mpi_nblk *sb)
{
    int k = n->nin + n->nout;
    cr_nbuf io_in[16], *io = k <= 16 ? io_in : malloc((size_t)k * sizeof *io);
    if (!io) cr_fatal(a->job, a->call, "out of memory");
    size_t staged = 0;
    bool moves;
    for (int i = 0; i < k; i++) {
        const mpi_nblk *p = nblk(n, rb, sb, i, &moves);
        io[i] = (cr_nbuf){p->buf, p->count * p->t->size};
        if (moves && !p->t->contig) staged += io[i].len;
    }
    char *tmp = NULL, *at;
    if (staged && !(tmp = malloc(staged)))
        cr_fatal(a->job, a->call, "out of memory for %zu bytes", staged);
    at = tmp;
    for (int i = 0; staged && i < k; i++) {
        const mpi_nblk *p = nblk(n, rb, sb, i, &moves);
        if (!moves || p->t->contig) continue;
        io[i].buf = at;
        at += io[i].len;
        if (i >= n->nin) mpi_pack_data(p->t, p->buf, p->count, io[i].buf);
    }
    cr_coll_neighbor(a->job, &a->c->g, a->call, n, io, io + n->nin);
    for (int i = 0; staged && i < n->nin; i++) {
        const mpi_nblk *p = nblk(n, rb, sb, i, &moves);
        if (moves && !p->t->contig) mpi_unpack_data(p->t, io[i].buf, io[i].len, p->buf, p->count);
    }
    free(tmp);
    if (io != io_in) free(io);
}

static int chk_count(targs *a, int count, const char *what, int i)
{
    if (count >= 0) return 0;
    return i < 0 ? fail(a, MPI_ERR_COUNT, "%s %d is negative", what, count)
                 : fail(a, MPI_ERR_COUNT, "%s[%d] is %d: counts are >= 0", what, i, count);
}

static int chk_buf(targs *a, const void *buf, const char *what)
{
    if (buf == MPI_IN_PLACE)
        return fail(a, MPI_ERR_BUFFER, "%s cannot be MPI_IN_PLACE in a neighbourhood collective",
                    what);
    return 0;
}

static int chk_arr(targs *a, int n, const void *p, const char *what)
{
    return n > 0 && !p ? fail(a, MPI_ERR_ARG, "%s is NULL", what) : 0;
}

/* Start a neighbourhood collective, blocking (req NULL) or not: topology,
 * neighbours, buffers. */
static int nb_begin(targs *a, const char *call, MPI_Comm comm, MPI_Request *req, int which,
                    cr_nbrs *n, mpi_nblk **rb, mpi_nblk **sb)
{
    static const char *const icall[] = {"MPI_Ineighbor_allgather", "MPI_Ineighbor_allgatherv",
                                        "MPI_Ineighbor_alltoall", "MPI_Ineighbor_alltoallv",
                                        "MPI_Ineighbor_alltoallw"};
    static const char *const pcall[] = {
        "MPI_Neighbor_allgather_init", "MPI_Neighbor_allgatherv_init", "MPI_Neighbor_alltoall_init",
        "MPI_Neighbor_alltoallv_init", "MPI_Neighbor_alltoallw_init"};
    *rb = *sb = NULL;
    *n = (cr_nbrs){0};
    a->req = req;
    a->nmem = NULL;
    a->which = which;
    const char *const *named = which & MPI_NBC_PERSIST ? pcall : icall;
    int rc = begin_topo(a, req ? named[which & ~MPI_NBC_PERSIST] : call, comm, 0);
    if (!rc && req == NOREQ) rc = fail(a, MPI_ERR_REQUEST, "request is NULL");
    if (rc) return rc;
    nbrs_get(a, n);
    *rb = calloc((size_t)n->nin + 1, sizeof **rb);
    *sb = calloc((size_t)n->nout + 1, sizeof **sb);
    if (!*rb || !*sb) cr_fatal(a->job, a->call, "out of memory");
    return 0;
}

/* Exchange the blocks: at once, or as a schedule (a->req). */
static int nb_end(targs *a, int rc, const cr_nbrs *n, mpi_nblk *rb, mpi_nblk *sb)
{
    if (!rc && a->req)
        rc = mpi_nbc_neighbor(a->job, a->which, a->comm, a->c, n, rb, sb, a->req);
    else if (!rc) {
        mpi_cargs ca = {.job = a->job, .call = a->call, .comm = a->comm, .c = a->c};
        mpi_chk_coll(&ca, -1, MPI_OP_NULL, 0, NULL, 0, NULL); /* --check (mpi_check.h) */
        nb_exchange(a, n, rb, sb);
    }
    free(a->nmem);
    free(rb);
    free(sb);
    return done(a, rc);
}

/* MPI_Neighbor_allgather, and MPI_Ineighbor_allgather with req */
static int neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *req, int p)
{
    targs a;
    cr_nbrs n;
    mpi_nblk *rb, *sb;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = nb_begin(&a, "MPI_Neighbor_allgather", comm, req, 0 | p, &n, &rb, &sb);
    if (!rc) rc = chk_buf(&a, sendbuf, "sendbuf");
    if (!rc) rc = chk_count(&a, sendcount, "sendcount", -1);
    if (!rc) rc = chk_count(&a, recvcount, "recvcount", -1);
    if (!rc) rc = mpi_type_check(a.job, comm, a.call, sendtype, &ts);
    if (!rc) rc = mpi_type_check(a.job, comm, a.call, recvtype, &tr);
    for (int i = 0; !rc && i < n.nout; i++)
        sb[i] = (mpi_nblk){(char *)sendbuf, (size_t)sendcount, ts};
    for (int i = 0; !rc && i < n.nin; i++)
        rb[i] = (mpi_nblk){(char *)recvbuf + (ptrdiff_t)i * recvcount * type_extent(tr),
                           (size_t)recvcount, tr};
    return nb_end(&a, rc, &n, rb, sb);
}

PMPI_WEAK(Neighbor_allgather);
int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              NULL, 0);
}

PMPI_WEAK(Ineighbor_allgather);
int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    return neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request ? request : NOREQ, 0);
}

/* MPI_Neighbor_allgatherv, and MPI_Ineighbor_allgatherv with req */
static int neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req, int p)
{
    targs a;
    cr_nbrs n;
    mpi_nblk *rb, *sb;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = nb_begin(&a, "MPI_Neighbor_allgatherv", comm, req, 1 | p, &n, &rb, &sb);
    if (!rc) rc = chk_buf(&a, sendbuf, "sendbuf");
    if (!rc) rc = chk_count(&a, sendcount, "sendcount", -1);
    if (!rc) rc = mpi_type_check(a.job, comm, a.call, sendtype, &ts);
    if (!rc) rc = mpi_type_check(a.job, comm, a.call, recvtype, &tr);
    if (!rc) rc = chk_arr(&a, n.nin, recvcounts, "recvcounts");
    if (!rc) rc = chk_arr(&a, n.nin, displs, "displs");
    for (int i = 0; !rc && i < n.nin; i++) rc = chk_count(&a, recvcounts[i], "recvcounts", i);
    for (int i = 0; !rc && i < n.nout; i++)
        sb[i] = (mpi_nblk){(char *)sendbuf, (size_t)sendcount, ts};
    for (int i = 0; !rc && i < n.nin; i++)
        rb[i] = (mpi_nblk){(char *)recvbuf + (ptrdiff_t)displs[i] * type_extent(tr),
                           (size_t)recvcounts[i], tr};
    return nb_end(&a, rc, &n, rb, sb);
}

PMPI_WEAK(Neighbor_allgatherv);
int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, NULL, 0);
}

PMPI_WEAK(Ineighbor_allgatherv);
int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, request ? request : NOREQ, 0);
}

/* MPI_Neighbor_alltoall, and MPI_Ineighbor_alltoall with req */
static int neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *req, int p)
{
    targs a;
    cr_nbrs n;
    mpi_nblk *rb, *sb;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = nb_begin(&a, "MPI_Neighbor_alltoall", comm, req, 2 | p, &n, &rb, &sb);
    if (!rc) rc = chk_buf(&a, sendbuf, "sendbuf");
    if (!rc) rc = chk_count(&a, sendcount, "sendcount", -1);
    if (!rc) rc = chk_count(&a, recvcount, "recvcount", -1);
    if (!rc) rc = mpi_type_check(a.job, comm, a.call, sendtype, &ts);
    if (!rc) rc = mpi_type_check(a.job, comm, a.call, recvtype, &tr);
    for (int i = 0; !rc && i < n.nout; i++)
        sb[i] = (mpi_nblk){(char *)sendbuf + (ptrdiff_t)i * sendcount * type_extent(ts),
                           (size_t)sendcount, ts};
    for (int i = 0; !rc && i < n.nin; i++)
        rb[i] = (mpi_nblk){(char *)recvbuf + (ptrdiff_t)i * recvcount * type_extent(tr),
                           (size_t)recvcount, tr};
    return nb_end(&a, rc, &n, rb, sb);
}

PMPI_WEAK(Neighbor_alltoall);
int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                             0);
}

PMPI_WEAK(Ineighbor_alltoall);
int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    return neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request ? request : NOREQ, 0);
}

/* MPI_Neighbor_alltoallv, and MPI_Ineighbor_alltoallv with req */
static int neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *req, int p)
{
    targs a;
    cr_nbrs n;
    mpi_nblk *rb, *sb;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = nb_begin(&a, "MPI_Neighbor_alltoallv", comm, req, 3 | p, &n, &rb, &sb);
    if (!rc) rc = chk_buf(&a, sendbuf, "sendbuf");
    if (!rc) rc = mpi_type_check(a.job, comm, a.call, sendtype, &ts);
    if (!rc) rc = mpi_type_check(a.job, comm, a.call, recvtype, &tr);
    if (!rc) rc = chk_arr(&a, n.nout, sendcounts, "sendcounts");
    if (!rc) rc = chk_arr(&a, n.nout, sdispls, "sdispls");
    if (!rc) rc = chk_arr(&a, n.nin, recvcounts, "recvcounts");
    if (!rc) rc = chk_arr(&a, n.nin, rdispls, "rdispls");
    for (int i = 0; !rc && i < n.nout; i++) rc = chk_count(&a, sendcounts[i], "sendcounts", i);
    for (int i = 0; !rc && i < n.nin; i++) rc = chk_count(&a, recvcounts[i], "recvcounts", i);
    for (int i = 0; !rc && i < n.nout; i++)
        sb[i] = (mpi_nblk){(char *)sendbuf + (ptrdiff_t)sdispls[i] * type_extent(ts),
                           (size_t)sendcounts[i], ts};
    for (int i = 0; !rc && i < n.nin; i++)
        rb[i] = (mpi_nblk){(char *)recvbuf + (ptrdiff_t)rdispls[i] * type_extent(tr),
                           (size_t)recvcounts[i], tr};
    return nb_end(&a, rc, &n, rb, sb);
}

PMPI_WEAK(Neighbor_alltoallv);
int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, NULL, 0);
}

PMPI_WEAK(Ineighbor_alltoallv);
int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    return neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, request ? request : NOREQ, 0);
}

/* MPI_Neighbor_alltoallw, and MPI_Ineighbor_alltoallw with req */
static int neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                              MPI_Comm comm, MPI_Request *req, int p)
{
    targs a;
    cr_nbrs n;
    mpi_nblk *rb, *sb;
    int rc = nb_begin(&a, "MPI_Neighbor_alltoallw", comm, req, 4 | p, &n, &rb, &sb);
    if (!rc) rc = chk_buf(&a, sendbuf, "sendbuf");
    if (!rc) rc = chk_arr(&a, n.nout, sendcounts, "sendcounts");
    if (!rc) rc = chk_arr(&a, n.nout, sdispls, "sdispls");
    if (!rc) rc = chk_arr(&a, n.nout, sendtypes, "sendtypes");
    if (!rc) rc = chk_arr(&a, n.nin, recvcounts, "recvcounts");
    if (!rc) rc = chk_arr(&a, n.nin, rdispls, "rdispls");
    if (!rc) rc = chk_arr(&a, n.nin, recvtypes, "recvtypes");
    for (int i = 0; !rc && i < n.nout; i++) {
        mpi_type *t = NULL;
        rc = chk_count(&a, sendcounts[i], "sendcounts", i);
        if (!rc) rc = mpi_type_check_n(a.job, comm, a.call, sendtypes[i], sendcounts[i], &t);
        if (!rc) sb[i] = (mpi_nblk){(char *)sendbuf + sdispls[i], (size_t)sendcounts[i], t};
    }
    for (int i = 0; !rc && i < n.nin; i++) {
        mpi_type *t = NULL;
        rc = chk_count(&a, recvcounts[i], "recvcounts", i);
        if (!rc) rc = mpi_type_check_n(a.job, comm, a.call, recvtypes[i], recvcounts[i], &t);
        if (!rc) rb[i] = (mpi_nblk){(char *)recvbuf + rdispls[i], (size_t)recvcounts[i], t};
    }
    return nb_end(&a, rc, &n, rb, sb);
}

PMPI_WEAK(Neighbor_alltoallw);
int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, NULL, 0);
}

PMPI_WEAK(Ineighbor_alltoallw);
int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request *request)
{
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, request ? request : NOREQ, 0);
}

/* The persistent forms (MPI-4.0 §6.13; the info argument holds hints, none used). */

PMPI_WEAK(Neighbor_allgather_init);
int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    (void)info;
    return neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request ? request : NOREQ, MPI_NBC_PERSIST);
}

PMPI_WEAK(Neighbor_allgatherv_init);
int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    (void)info;
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, request ? request : NOREQ, MPI_NBC_PERSIST);
}

PMPI_WEAK(Neighbor_alltoall_init);
int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    (void)info;
    return neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request ? request : NOREQ, MPI_NBC_PERSIST);
}

PMPI_WEAK(Neighbor_alltoallv_init);
int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    (void)info;
    return neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, request ? request : NOREQ, MPI_NBC_PERSIST);
}

PMPI_WEAK(Neighbor_alltoallw_init);
int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    (void)info;
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, request ? request : NOREQ, MPI_NBC_PERSIST);
}
