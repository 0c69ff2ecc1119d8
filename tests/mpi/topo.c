/* Process topologies and neighbourhood collectives (MPI-3.1 chapter 7):
 *  - MPI_Dims_create: balanced answers (MPICH's table: 72 in 2-D is 9 x 8),
 *    non-increasing order, preset dimensions kept, and its errors;
 *  - 2-D and 3-D Cartesian communicators, periodic and not: MPI_Cart_coords
 *    and MPI_Cart_rank round trips for every rank, MPI_Cart_get, MPI_Cart_shift
 *    against coordinates computed here (MPI_PROC_NULL at open edges), wrapping
 *    of periodic coordinates in MPI_Cart_rank, MPI_Cart_sub (every choice of
 *    dimensions kept, checked by an all-reduce over the sub-grid), a grid
 *    smaller than the communicator (MPI_COMM_NULL beyond it), zero dimensions,
 *    MPI_Cart_map;
 *  - graph and distributed graph communicators (both constructors), their
 *    queries, MPI_Topo_test, MPI_Comm_dup keeping the topology;
 *  - every blocking neighbourhood collective on each kind of topology, every
 *    value checked: which neighbour a block came from and which block of the
 *    sender it was (a Cartesian neighbour met twice, as in a periodic dimension
 *    of size 1 or 2, must still get each block in its place), blocks of
 *    MPI_PROC_NULL neighbours left untouched, a derived receive type, and a
 *    pending MPI_ANY_TAG receive of the program that must not take any of the
 *    collective's messages;
 *  - errors under MPI_ERRORS_RETURN (MPI_ERR_TOPOLOGY, MPI_ERR_DIMS,
 *    MPI_ERR_ARG, MPI_ERR_RANK).
 * Any number of ranks (tested with 1, 4, 6 and 8).
 *   topo              the blocking neighbourhood collectives
 *   topo nonblocking  every neighbourhood collective through its I-form and
 *                     MPI_Wait (the same checks; the errors from the I-form),
 *                     and the five outstanding at once, completed by
 *                     MPI_Waitall
 *   topo interleave   on each topology, blocking neighbourhood collectives
 *                     (contiguous, and into a derived type) called while an
 *                     MPI_Ineighbor_allgather is outstanding and a started
 *                     MPI_Neighbor_alltoall_init runs, over three starts with
 *                     new data, short and long blocks: every value of all four
 *                     checked (the blocking, nonblocking and persistent forms
 *                     are one schedule; their messages must never meet)
 *   topo hang         a deadlock in a blocking neighbourhood collective on a
 *                     periodic ring (rank 0 waits in MPI_Recv instead), for
 *                     the watchdog's words */
#include <stdbool.h>
#include <string.h>

#include "mcheck.h"

/* Every neighbourhood collective goes through COLL: the blocking call, or with
 * "nonblocking" its I-form and MPI_Wait (a failing I-form makes no request). */
static bool nonblocking;
static MPI_Request q_;
static int wait_(int rc)
{
    return rc == MPI_SUCCESS ? MPI_Wait(&q_, MPI_STATUS_IGNORE) : rc;
}
#define COLL(blocking, ib, ...) (nonblocking ? wait_(ib(__VA_ARGS__, &q_)) : blocking(__VA_ARGS__))

static int me, np;

static void expect_err(int rc, int code, const char *what)
{
    CHECK(rc == code, "%s returned %d, expected %d", what, rc, code);
}

/* ---- MPI_Dims_create ------------------------------------------------------------ */

static void dims_case(int n, int nd, const int *preset, const int *want)
{
    int d[8];
    for (int i = 0; i < nd; i++) d[i] = preset ? preset[i] : 0;
    OK(MPI_Dims_create(n, nd, d));
    for (int i = 0; i < nd; i++)
        CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, want %d", n, nd, i, d[i],
              want[i]);
}

static void test_dims(void)
{
    dims_case(6, 2, NULL, (int[]){3, 2});
    dims_case(8, 3, NULL, (int[]){2, 2, 2});
    dims_case(7, 2, NULL, (int[]){7, 1});
    dims_case(1, 3, NULL, (int[]){1, 1, 1});
    dims_case(72, 2, NULL, (int[]){9, 8});
    dims_case(432, 3, NULL, (int[]){9, 8, 6});
    dims_case(1000000000, 3, NULL, (int[]){1000, 1000, 1000});
    dims_case(16, 4, NULL, (int[]){2, 2, 2, 2});
    dims_case(24, 3, (int[]){0, 3, 0}, (int[]){4, 3, 2});
    dims_case(12, 2, (int[]){2, 0}, (int[]){2, 6});
    dims_case(12, 2, (int[]){2, 6}, (int[]){2, 6});
    OK(MPI_Dims_create(1, 0, NULL));
    /* non-increasing for many sizes */
    for (int n = 1; n <= 300; n++) {
        int d[4] = {0, 0, 0, 0}, p = 1;
        OK(MPI_Dims_create(n, 4, d));
        for (int i = 0; i < 4; i++) p *= d[i];
        CHECK(p == n && d[0] >= d[1] && d[1] >= d[2] && d[2] >= d[3],
              "Dims_create(%d, 4) gave %d x %d x %d x %d", n, d[0], d[1], d[2], d[3]);
    }
    int d[3] = {5, 0, 0};
    expect_err(MPI_Dims_create(12, 2, d), MPI_ERR_DIMS, "Dims_create(12) with dims[0] = 5");
    CHECK(d[1] == 0, "failed Dims_create changed dims");
    d[0] = -1;
    expect_err(MPI_Dims_create(4, 2, d), MPI_ERR_DIMS, "Dims_create with a negative entry");
    d[0] = 2;
    d[1] = 3;
    expect_err(MPI_Dims_create(12, 2, d), MPI_ERR_DIMS, "Dims_create, all given, product 6");
    expect_err(MPI_Dims_create(4, -1, d), MPI_ERR_DIMS, "Dims_create with ndims -1");
}

/* ---- Cartesian ----------------------------------------------------------------- */

static void coords_of(int r, int nd, const int *dims, int *c)
{
    for (int i = nd - 1; i >= 0; i--) {
        c[i] = r % dims[i];
        r /= dims[i];
    }
}

static int rank_of(int nd, const int *dims, const int *c)
{
    int r = 0;
    for (int i = 0; i < nd; i++) r = r * dims[i] + c[i];
    return r;
}

static int shifted(int r, int nd, const int *dims, const int *per, int dim, int disp)
{
    int c[8];
    coords_of(r, nd, dims, c);
    int x = c[dim] + disp;
    if (x < 0 || x >= dims[dim]) {
        if (!per[dim]) return MPI_PROC_NULL;
        x = ((x % dims[dim]) + dims[dim]) % dims[dim];
    }
    c[dim] = x;
    return rank_of(nd, dims, c);
}

static void check_cart(MPI_Comm cart, int nd, const int *dims, const int *per)
{
    int t = -1, n = -1, size, r;
    OK(MPI_Topo_test(cart, &t));
    CHECK(t == MPI_CART, "Topo_test %d", t);
    OK(MPI_Cartdim_get(cart, &n));
    CHECK(n == nd, "Cartdim_get %d, want %d", n, nd);
    MPI_Comm_size(cart, &size);
    MPI_Comm_rank(cart, &r);
    int gd[8], gp[8], gc[8], c[8];
    OK(MPI_Cart_get(cart, nd, gd, gp, gc));
    coords_of(r, nd, dims, c);
    for (int i = 0; i < nd; i++)
        CHECK(gd[i] == dims[i] && gp[i] == !!per[i] && gc[i] == c[i],
              "Cart_get dim %d: %d %d %d, want %d %d %d", i, gd[i], gp[i], gc[i], dims[i], !!per[i],
              c[i]);
    for (int q = 0; q < size; q++) {
        int cc[8], back = -1;
        OK(MPI_Cart_coords(cart, q, nd, cc));
        coords_of(q, nd, dims, c);
        for (int i = 0; i < nd; i++)
            CHECK(cc[i] == c[i], "coords of %d, dim %d: %d want %d", q, i, cc[i], c[i]);
        OK(MPI_Cart_rank(cart, cc, &back));
        CHECK(back == q, "Cart_rank(Cart_coords(%d)) = %d", q, back);
    }
    for (int dim = 0; dim < nd; dim++)
        for (int disp = -3; disp <= 3; disp++) {
            int src = -5, dst = -5;
            OK(MPI_Cart_shift(cart, dim, disp, &src, &dst));
            CHECK(src == shifted(r, nd, dims, per, dim, -disp) &&
                      dst == shifted(r, nd, dims, per, dim, disp),
                  "Cart_shift(dim %d, disp %d) at %d: %d %d", dim, disp, r, src, dst);
        }
    /* periodic coordinates wrap in Cart_rank; others are an error */
    coords_of(r, nd, dims, c);
    for (int i = 0; i < nd; i++) {
        int w[8], got = -1;
        memcpy(w, c, sizeof w);
        w[i] += dims[i];
        if (per[i]) {
            OK(MPI_Cart_rank(cart, w, &got));
            CHECK(got == r, "Cart_rank with wrapped coordinate %d: %d", i, got);
            w[i] = c[i] - 2 * dims[i];
            OK(MPI_Cart_rank(cart, w, &got));
            CHECK(got == r, "Cart_rank with coordinate -2 dims: %d", got);
        } else {
            expect_err(MPI_Cart_rank(cart, w, &got), MPI_ERR_ARG, "Cart_rank off the grid");
        }
    }
    expect_err(MPI_Cart_shift(cart, nd, 1, &n, &t), MPI_ERR_ARG, "Cart_shift, bad direction");
    expect_err(MPI_Cart_coords(cart, size, nd, c), MPI_ERR_RANK, "Cart_coords, bad rank");
    expect_err(MPI_Graphdims_get(cart, &n, &t), MPI_ERR_TOPOLOGY, "Graphdims_get on a cart");

    /* every sub-grid */
    for (int mask = 0; mask < (1 << nd); mask++) {
        int remain[8], kept = 0, sz = 1;
        for (int i = 0; i < nd; i++) {
            remain[i] = (mask >> i) & 1;
            if (remain[i]) {
                kept++;
                sz *= dims[i];
            }
        }
        MPI_Comm sub;
        OK(MPI_Cart_sub(cart, remain, &sub));
        int ssize = -1, srank = -1, sd = -1;
        MPI_Comm_size(sub, &ssize);
        MPI_Comm_rank(sub, &srank);
        OK(MPI_Cartdim_get(sub, &sd));
        CHECK(ssize == sz && sd == kept, "Cart_sub mask %d: size %d dims %d", mask, ssize, sd);
        /* the sub-rank is the row-major rank of the kept coordinates */
        int sdims[8], sc[8], k = 0;
        for (int i = 0; i < nd; i++)
            if (remain[i]) {
                sdims[k] = dims[i];
                sc[k++] = c[i];
            }
        CHECK(srank == rank_of(kept, sdims, sc), "Cart_sub mask %d: rank %d", mask, srank);
        /* the members share the dropped coordinates: their sum of ranks */
        int sum = 0, want = 0;
        OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, sub));
        for (int q = 0; q < size; q++) {
            int qc[8], same = 1;
            coords_of(q, nd, dims, qc);
            for (int i = 0; i < nd; i++)
                if (!remain[i] && qc[i] != c[i]) same = 0;
            if (same) want += q;
        }
        CHECK(sum == want, "Cart_sub mask %d: members' ranks sum %d, want %d", mask, sum, want);
        OK(MPI_Comm_free(&sub));
    }
}

static MPI_Comm make_cart(int nd, const int *per, int *dims)
{
    for (int i = 0; i < nd; i++) dims[i] = 0;
    OK(MPI_Dims_create(np, nd, dims));
    MPI_Comm cart;
    OK(MPI_Cart_create(MPI_COMM_WORLD, nd, dims, per, 1, &cart));
    CHECK(cart != MPI_COMM_NULL, "Cart_create over every rank gave MPI_COMM_NULL");
    return cart;
}

static void test_cart(void)
{
    int dims[3];
    MPI_Comm cart;
    cart = make_cart(2, (int[]){0, 0}, dims);
    check_cart(cart, 2, dims, (int[]){0, 0});
    OK(MPI_Comm_free(&cart));
    cart = make_cart(2, (int[]){1, 1}, dims);
    check_cart(cart, 2, dims, (int[]){1, 1});
    MPI_Comm dup;
    OK(MPI_Comm_dup(cart, &dup)); /* keeps the topology */
    OK(MPI_Comm_free(&cart));
    check_cart(dup, 2, dims, (int[]){1, 1});
    OK(MPI_Comm_free(&dup));
    cart = make_cart(3, (int[]){1, 0, 1}, dims);
    check_cart(cart, 3, dims, (int[]){1, 0, 1});
    OK(MPI_Comm_free(&cart));

    /* a grid smaller than the communicator */
    if (np > 1) {
        int d1[1] = {np - 1}, p1[1] = {0}, nr = -2;
        OK(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &cart));
        CHECK((me == np - 1) == (cart == MPI_COMM_NULL), "Cart_create of %d: rank %d got %#x",
              np - 1, me, (unsigned)cart);
        if (cart != MPI_COMM_NULL) {
            check_cart(cart, 1, d1, p1);
            OK(MPI_Comm_free(&cart));
        }
        OK(MPI_Cart_map(MPI_COMM_WORLD, 1, d1, p1, &nr));
        CHECK(nr == (me < np - 1 ? me : MPI_UNDEFINED), "Cart_map gave %d", nr);
    }
    /* zero dimensions: one process */
    OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &cart));
    CHECK((me == 0) == (cart != MPI_COMM_NULL), "zero-dimensional Cart_create at %d", me);
    if (cart != MPI_COMM_NULL) {
        int n = -1, r = -1;
        OK(MPI_Cartdim_get(cart, &n));
        OK(MPI_Cart_rank(cart, NULL, &r));
        CHECK(n == 0 && r == 0, "zero-dimensional: ndims %d rank %d", n, r);
        OK(MPI_Comm_free(&cart));
    }
    /* errors */
    int big[2] = {np + 1, 1}, per[2] = {0, 0}, bad[2] = {0, 1};
    cart = 5;
    expect_err(MPI_Cart_create(MPI_COMM_WORLD, 2, big, per, 0, &cart), MPI_ERR_TOPOLOGY,
               "Cart_create bigger than the communicator");
    expect_err(MPI_Cart_create(MPI_COMM_WORLD, 2, bad, per, 0, &cart), MPI_ERR_DIMS,
               "Cart_create with a zero dimension");
    expect_err(MPI_Cart_create(MPI_COMM_WORLD, -1, bad, per, 0, &cart), MPI_ERR_DIMS,
               "Cart_create with ndims -1");
    int s, d;
    expect_err(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &s, &d), MPI_ERR_TOPOLOGY,
               "Cart_shift without a topology");
    int t = 0;
    OK(MPI_Topo_test(MPI_COMM_WORLD, &t));
    CHECK(t == MPI_UNDEFINED, "Topo_test of MPI_COMM_WORLD: %d", t);
}

/* ---- graphs --------------------------------------------------------------------- */

/* A ring in both directions plus, with 4 or more nodes, a chord 0 <-> 2 given
 * twice (a repeated edge) and a self loop at node 1. */
static int graph_adj(int n, int node, int *out)
{
    int k = 0;
    if (n > 1) {
        out[k++] = (node + n - 1) % n;
        out[k++] = (node + 1) % n;
    }
    if (n >= 4 && (node == 0 || node == 2)) {
        out[k++] = 2 - node;
        out[k++] = 2 - node;
    }
    if (n >= 4 && node == 1) out[k++] = 1;
    return k;
}

static MPI_Comm make_graph(void)
{
    int *index = malloc(sizeof(int) * (size_t)np), *edges = malloc(sizeof(int) * 8 * (size_t)np);
    int ne = 0;
    for (int i = 0; i < np; i++) {
        ne += graph_adj(np, i, edges + ne);
        index[i] = ne;
    }
    MPI_Comm g;
    OK(MPI_Graph_create(MPI_COMM_WORLD, np, index, edges, 0, &g));
    int t = -1, nn = -1, nedges = -1;
    OK(MPI_Topo_test(g, &t));
    OK(MPI_Graphdims_get(g, &nn, &nedges));
    CHECK(t == MPI_GRAPH && nn == np && nedges == ne, "graph: topo %d nnodes %d nedges %d", t, nn,
          nedges);
    int *gi = malloc(sizeof(int) * (size_t)np), *ge = malloc(sizeof(int) * 8 * (size_t)np);
    OK(MPI_Graph_get(g, np, ne, gi, ge));
    CHECK(!memcmp(gi, index, sizeof(int) * (size_t)np) &&
              !memcmp(ge, edges, sizeof(int) * (size_t)ne),
          "Graph_get differs");
    for (int i = 0; i < np; i++) {
        int want[8], wn = graph_adj(np, i, want), cnt = -1, nb[8];
        OK(MPI_Graph_neighbors_count(g, i, &cnt));
        OK(MPI_Graph_neighbors(g, i, 8, nb));
        CHECK(cnt == wn && !memcmp(nb, want, sizeof(int) * (size_t)wn),
              "Graph_neighbors of %d: %d of them", i, cnt);
    }
    int nr = -1;
    OK(MPI_Graph_map(MPI_COMM_WORLD, np, index, edges, &nr));
    CHECK(nr == me, "Graph_map gave %d", nr);
    expect_err(MPI_Graph_neighbors_count(g, np, &nr), MPI_ERR_RANK, "Graph_neighbors_count(np)");
    expect_err(MPI_Cartdim_get(g, &nr), MPI_ERR_TOPOLOGY, "Cartdim_get on a graph");
    MPI_Comm x;
    if (ne > 0) {
        edges[0] = np;
        expect_err(MPI_Graph_create(MPI_COMM_WORLD, np, index, edges, 0, &x), MPI_ERR_ARG,
                   "Graph_create with an edge to node np");
    }
    free(index);
    free(edges);
    free(gi);
    free(ge);
    /* no nodes: MPI_COMM_NULL everywhere */
    OK(MPI_Graph_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &x));
    CHECK(x == MPI_COMM_NULL, "empty graph gave a communicator");
    return g;
}

/* Distributed graph: rank i sends to i+1 and i+3 (mod np), weights 100*i + d. */
static int dist_out(int node, int *out, int *w)
{
    int k = 0;
    out[k] = (node + 1) % np;
    w[k++] = 100 * node + out[0];
    out[k] = (node + 3) % np;
    w[k++] = 100 * node + out[1];
    return k;
}

static int dist_in(int node, int *in, int *w)
{
    int k = 0;
    for (int s = 0; s < np; s++) {
        int o[2], ow[2];
        dist_out(s, o, ow);
        for (int j = 0; j < 2; j++)
            if (o[j] == node) {
                in[k] = s;
                w[k++] = ow[j];
            }
    }
    return k;
}

static void check_dist(MPI_Comm g, bool weighted, bool exact_order)
{
    int t = -1, indeg = -1, outdeg = -1, wt = -1;
    OK(MPI_Topo_test(g, &t));
    CHECK(t == MPI_DIST_GRAPH, "Topo_test %d", t);
    OK(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &wt));
    int in[16], inw[16], out[2], outw[2];
    int ni = dist_in(me, in, inw), no = dist_out(me, out, outw);
    CHECK(indeg == ni && outdeg == no && wt == weighted, "dist counts %d %d %d", indeg, outdeg, wt);
    int gi[16], giw[16], go[2], gow[2];
    OK(MPI_Dist_graph_neighbors(g, 16, gi, weighted ? giw : MPI_UNWEIGHTED, 2, go,
                                weighted ? gow : MPI_UNWEIGHTED));
    /* as sets unless the order is the one given */
    for (int i = 0; i < ni; i++) {
        int j = 0;
        if (exact_order)
            j = i;
        else
            while (j < ni && !(gi[j] == in[i] && (!weighted || giw[j] == inw[i]))) j++;
        CHECK(j < ni && gi[j] == in[i] && (!weighted || giw[j] == inw[i]),
              "in-edge from %d (weight %d) missing", in[i], inw[i]);
        if (!exact_order) gi[j] = -1;
    }
    for (int i = 0; i < no; i++)
        CHECK(go[i] == out[i] && (!weighted || gow[i] == outw[i]), "out-edge %d: %d", i, go[i]);
}

static MPI_Comm make_dist_adjacent(bool weighted)
{
    int in[16], inw[16], out[2], outw[2];
    int ni = dist_in(me, in, inw), no = dist_out(me, out, outw);
    MPI_Comm g;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ni, in, weighted ? inw : MPI_UNWEIGHTED, no,
                                      out, weighted ? outw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    check_dist(g, weighted, true);
    return g;
}

static void test_dist_create(void)
{
    /* each rank gives its own out-edges */
    int out[2], outw[2], src = me, deg = dist_out(me, out, outw);
    MPI_Comm g, d;
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, out, outw, MPI_INFO_NULL, 1, &g));
    check_dist(g, true, false);
    OK(MPI_Comm_dup(g, &d));
    check_dist(d, true, false);
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free(&g));
    /* rank 0 gives the whole graph, unweighted */
    int *s = malloc(sizeof(int) * (size_t)np), *dg = malloc(sizeof(int) * (size_t)np);
    int *dst = malloc(sizeof(int) * 2 * (size_t)np), w[2];
    for (int i = 0; i < np; i++) {
        s[i] = i;
        dg[i] = dist_out(i, dst + 2 * i, w);
    }
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, me == 0 ? np : 0, s, dg, dst, MPI_UNWEIGHTED,
                             MPI_INFO_NULL, 0, &g));
    check_dist(g, false, false);
    OK(MPI_Comm_free(&g));
    /* errors */
    dst[0] = np;
    expect_err(
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, s, dg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
        MPI_ERR_RANK, "Dist_graph_create with destination np");
    int neg = -1;
    expect_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, neg, s, MPI_UNWEIGHTED, 0, dst,
                                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
               MPI_ERR_ARG, "Dist_graph_create_adjacent with indegree -1");
    free(s);
    free(dg);
    free(dst);
}

/* ---- neighbourhood collectives -------------------------------------------------- */

typedef struct nb {
    int kind, nin, nout;
    int in[32], out[32];
    int *outs;  /* every rank's out list, maxout each (graph kinds) */
    int *nouts; /* every rank's out-degree */
    int maxout;
} nb;

static void nb_get(MPI_Comm c, nb *n)
{
    memset(n, 0, sizeof *n);
    OK(MPI_Topo_test(c, &n->kind));
    int r;
    MPI_Comm_rank(c, &r);
    if (n->kind == MPI_CART) {
        int nd;
        OK(MPI_Cartdim_get(c, &nd));
        for (int d = 0; d < nd; d++) {
            OK(MPI_Cart_shift(c, d, 1, &n->in[2 * d], &n->in[2 * d + 1]));
            n->out[2 * d] = n->in[2 * d];
            n->out[2 * d + 1] = n->in[2 * d + 1];
        }
        n->nin = n->nout = 2 * nd;
        return;
    }
    if (n->kind == MPI_GRAPH) {
        OK(MPI_Graph_neighbors_count(c, r, &n->nin));
        OK(MPI_Graph_neighbors(c, r, 32, n->in));
        n->nout = n->nin;
        memcpy(n->out, n->in, sizeof n->in);
    } else {
        int w;
        OK(MPI_Dist_graph_neighbors_count(c, &n->nin, &n->nout, &w));
        int iw[32], ow[32];
        OK(MPI_Dist_graph_neighbors(c, 32, n->in, w ? iw : MPI_UNWEIGHTED, 32, n->out,
                                    w ? ow : MPI_UNWEIGHTED));
    }
    /* everyone's out lists, to know which block of its sender a block is */
    n->maxout = 32;
    n->outs = malloc(sizeof(int) * 32 * (size_t)np);
    n->nouts = malloc(sizeof(int) * (size_t)np);
    OK(MPI_Allgather(n->out, 32, MPI_INT, n->outs, 32, MPI_INT, c));
    OK(MPI_Allgather(&n->nout, 1, MPI_INT, n->nouts, 1, MPI_INT, c));
}

/* Index, in its sender's out list, of the block this rank receives as in[i]. */
static int sender_index(const nb *n, int i)
{
    if (n->kind == MPI_CART) return i ^ 1; /* sent towards +1 arrives from -1 */
    int s = n->in[i], k = 0;
    for (int j = 0; j < i; j++) k += n->in[j] == s; /* k-th edge from s */
    for (int j = 0; j < n->nouts[s]; j++)
        if (n->outs[s * 32 + j] == me && k-- == 0) return j;
    CHECK(0, "rank %d is not an out-neighbour of %d", me, s);
    return -1;
}

#define V(src, blk, e) ((src)*10000 + (blk)*100 + (e))

static void nb_free(nb *n)
{
    free(n->outs);
    free(n->nouts);
}

static void test_neighbors(MPI_Comm c, const char *what)
{
    nb n;
    nb_get(c, &n);
    int r;
    MPI_Comm_rank(c, &r);
    CHECK(r == me, "%s: rank %d in the topology, %d in the world", what, r, me);
    /* a program's receive that no collective message may match */
    int user = -1;
    MPI_Request ureq;
    OK(MPI_Irecv(&user, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &ureq));

    enum { C = 3 };
    int *sbuf = malloc(sizeof(int) * C * 32), *rbuf = malloc(sizeof(int) * 4 * C * 32);

    /* allgather: C ints from each in-neighbour */
    for (int e = 0; e < C; e++) sbuf[e] = V(me, 0, e);
    for (int i = 0; i < 4 * C * 32; i++) rbuf[i] = -1;
    OK(COLL(MPI_Neighbor_allgather, MPI_Ineighbor_allgather, sbuf, C, MPI_INT, rbuf, C, MPI_INT,
            c));
    for (int i = 0; i < n.nin; i++)
        for (int e = 0; e < C; e++) {
            int want = n.in[i] == MPI_PROC_NULL ? -1 : V(n.in[i], 0, e);
            CHECK(rbuf[i * C + e] == want, "%s allgather block %d[%d]: %d want %d", what, i, e,
                  rbuf[i * C + e], want);
        }

    /* allgatherv: the sender's rank says how many; blocks placed with gaps */
    int cnt[32], dsp[32], off = 0;
    for (int e = 0; e < 1 + me % 3; e++) sbuf[e] = V(me, 0, e);
    for (int i = 0; i < n.nin; i++) {
        cnt[i] = n.in[i] == MPI_PROC_NULL ? 0 : 1 + n.in[i] % 3;
        dsp[i] = off + 1;
        off += cnt[i] + 1;
    }
    for (int i = 0; i < 4 * C * 32; i++) rbuf[i] = -1;
    OK(COLL(MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv, sbuf, 1 + me % 3, MPI_INT, rbuf, cnt,
            dsp, MPI_INT, c));
    for (int i = 0; i < n.nin; i++) {
        CHECK(rbuf[dsp[i] - 1] == -1, "%s allgatherv wrote into a gap", what);
        for (int e = 0; e < cnt[i]; e++)
            CHECK(rbuf[dsp[i] + e] == V(n.in[i], 0, e), "%s allgatherv block %d[%d]: %d", what, i,
                  e, rbuf[dsp[i] + e]);
    }

    /* alltoall: block j to out[j] */
    for (int j = 0; j < n.nout; j++)
        for (int e = 0; e < C; e++) sbuf[j * C + e] = V(me, j, e);
    for (int i = 0; i < 4 * C * 32; i++) rbuf[i] = -1;
    OK(COLL(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, sbuf, C, MPI_INT, rbuf, C, MPI_INT, c));
    for (int i = 0; i < n.nin; i++)
        for (int e = 0; e < C; e++) {
            int want = n.in[i] == MPI_PROC_NULL ? -1 : V(n.in[i], sender_index(&n, i), e);
            CHECK(rbuf[i * C + e] == want, "%s alltoall block %d[%d] (from %d): %d want %d", what,
                  i, e, n.in[i], rbuf[i * C + e], want);
        }

    /* nonblocking: an all-gather and an all-to-all outstanding at once */
    if (nonblocking) {
        int *r2 = malloc(sizeof(int) * C * 32), s2[C];
        MPI_Request q[2];
        for (int e = 0; e < C; e++) s2[e] = V(me, 0, e); /* the all-gather's block */
        for (int i = 0; i < 4 * C * 32; i++) rbuf[i] = -1;
        for (int i = 0; i < C * 32; i++) r2[i] = -1;
        OK(MPI_Ineighbor_alltoall(sbuf, C, MPI_INT, rbuf, C, MPI_INT, c, &q[0]));
        OK(MPI_Ineighbor_allgather(s2, C, MPI_INT, r2, C, MPI_INT, c, &q[1]));
        OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n.nin; i++)
            for (int e = 0; e < C; e++) {
                int a2a = n.in[i] == MPI_PROC_NULL ? -1 : V(n.in[i], sender_index(&n, i), e);
                int ag = n.in[i] == MPI_PROC_NULL ? -1 : V(n.in[i], 0, e);
                CHECK(rbuf[i * C + e] == a2a && r2[i * C + e] == ag,
                      "%s outstanding at once, block %d[%d]: %d %d want %d %d", what, i, e,
                      rbuf[i * C + e], r2[i * C + e], a2a, ag);
            }
        free(r2);
    }

    /* the same into a derived type: C ints at stride 2 */
    MPI_Datatype vec;
    OK(MPI_Type_vector(C, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    for (int i = 0; i < 4 * C * 32; i++) rbuf[i] = -1;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(vec, &lb, &ext);
    OK(COLL(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, sbuf, C, MPI_INT, rbuf, 1, vec, c));
    for (int i = 0; i < n.nin; i++)
        for (int e = 0; e < C; e++) {
            int at = (int)(i * ext / (MPI_Aint)sizeof(int)) + 2 * e;
            int want = n.in[i] == MPI_PROC_NULL ? -1 : V(n.in[i], sender_index(&n, i), e);
            CHECK(rbuf[at] == want, "%s alltoall into a vector, block %d[%d]: %d want %d", what, i,
                  e, rbuf[at], want);
        }

    /* alltoallv: count (sender + receiver) % 3 + 1 */
    int sc[32], sd[32], rc[32], rd[32];
    off = 0;
    for (int j = 0; j < n.nout; j++) {
        sc[j] = n.out[j] == MPI_PROC_NULL ? 0 : (me + n.out[j]) % 3 + 1;
        sd[j] = off;
        for (int e = 0; e < sc[j]; e++) sbuf[off + e] = V(me, j, e);
        off += sc[j];
    }
    off = 0;
    for (int i = 0; i < n.nin; i++) {
        rc[i] = n.in[i] == MPI_PROC_NULL ? 0 : (me + n.in[i]) % 3 + 1;
        rd[i] = off + 2;
        off += rc[i] + 2;
    }
    for (int i = 0; i < 4 * C * 32; i++) rbuf[i] = -1;
    OK(COLL(MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv, sbuf, sc, sd, MPI_INT, rbuf, rc, rd,
            MPI_INT, c));
    for (int i = 0; i < n.nin; i++)
        for (int e = 0; e < rc[i]; e++)
            CHECK(rbuf[rd[i] + e] == V(n.in[i], sender_index(&n, i), e),
                  "%s alltoallv block %d[%d]: %d", what, i, e, rbuf[rd[i] + e]);

    /* alltoallw: ints out, the vector type in, byte displacements */
    MPI_Aint swd[32], rwd[32];
    MPI_Datatype st[32], rt[32];
    int swc[32], rwc[32];
    for (int j = 0; j < n.nout; j++) {
        swc[j] = C;
        swd[j] = (MPI_Aint)(j * C * sizeof(int));
        st[j] = MPI_INT;
        for (int e = 0; e < C; e++) sbuf[j * C + e] = V(me, j, e) + 7;
    }
    for (int i = 0; i < n.nin; i++) {
        rwc[i] = 1;
        rwd[i] = (MPI_Aint)(i * 2 * C * sizeof(int));
        rt[i] = vec;
    }
    for (int i = 0; i < 4 * C * 32; i++) rbuf[i] = -1;
    OK(COLL(MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, sbuf, swc, swd, st, rbuf, rwc, rwd, rt,
            c));
    for (int i = 0; i < n.nin; i++)
        for (int e = 0; e < C; e++) {
            int want = n.in[i] == MPI_PROC_NULL ? -1 : V(n.in[i], sender_index(&n, i), e) + 7;
            CHECK(rbuf[i * 2 * C + 2 * e] == want, "%s alltoallw block %d[%d]: %d want %d", what, i,
                  e, rbuf[i * 2 * C + 2 * e], want);
        }
    /* every rank's first outgoing block empty, and the blocks that come of
     * them, their types null (as MPICH accepts): the others still arrive */
    if (n.nout) swc[0] = 0, st[0] = MPI_DATATYPE_NULL;
    for (int i = 0; i < n.nin; i++)
        if (n.in[i] != MPI_PROC_NULL && sender_index(&n, i) == 0)
            rwc[i] = 0, rt[i] = MPI_DATATYPE_NULL;
    for (int i = 0; i < 4 * C * 32; i++) rbuf[i] = -1;
    OK(COLL(MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, sbuf, swc, swd, st, rbuf, rwc, rwd, rt,
            c));
    for (int i = 0; i < n.nin; i++)
        for (int e = 0; e < C; e++) {
            bool none = n.in[i] == MPI_PROC_NULL || sender_index(&n, i) == 0;
            int want = none ? -1 : V(n.in[i], sender_index(&n, i), e) + 7;
            CHECK(rbuf[i * 2 * C + 2 * e] == want,
                  "%s null-typed alltoallw block %d[%d]: %d want %d", what, i, e,
                  rbuf[i * 2 * C + 2 * e], want);
        }
    OK(MPI_Type_free(&vec));

    /* errors */
    int dummy = 0;
    expect_err(COLL(MPI_Neighbor_allgather, MPI_Ineighbor_allgather, sbuf, -1, MPI_INT, rbuf, 1,
                    MPI_INT, c),
               MPI_ERR_COUNT, "Neighbor_allgather with count -1");
    expect_err(COLL(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, MPI_IN_PLACE, 1, MPI_INT, rbuf,
                    1, MPI_INT, c),
               MPI_ERR_BUFFER, "Neighbor_alltoall with MPI_IN_PLACE");
    expect_err(COLL(MPI_Neighbor_allgather, MPI_Ineighbor_allgather, &dummy, 1, MPI_INT, rbuf, 1,
                    MPI_INT, MPI_COMM_WORLD),
               MPI_ERR_TOPOLOGY, "Neighbor_allgather without a topology");

    /* the program's receive still waits for the program's message */
    int flag = 1;
    OK(MPI_Test(&ureq, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "%s: a neighbourhood collective's message matched the program's receive", what);
    int mine = 4242;
    OK(MPI_Send(&mine, 1, MPI_INT, r, 77, c));
    MPI_Status st1;
    OK(MPI_Wait(&ureq, &st1));
    CHECK(user == 4242 && st1.MPI_TAG == 77 && st1.MPI_SOURCE == r, "%s: user receive got %d", what,
          user);
    free(sbuf);
    free(rbuf);
    nb_free(&n);
}

/* ---- blocking calls while a nonblocking and a persistent one run ---------------- */

/* Element e of block blk that src sends in call k (0 persistent alltoall, 1
 * nonblocking allgather, 2 blocking alltoall, 3 blocking allgather) at start
 * rep; e < 4096. */
static int W(int k, int rep, int src, int blk, int e)
{
    return (((k * 4 + rep) * 64 + src) * 64 + blk) * 4096 + e;
}

static void test_interleave(MPI_Comm c, const char *what, int L)
{
    nb n;
    nb_get(c, &n);
    size_t words = (size_t)L * 2 * 32; /* 32 blocks of L, or of the vector's extent */
    int *ps = malloc(words * sizeof(int)), *pr = malloc(words * sizeof(int));
    int *is = malloc(words * sizeof(int)), *ir = malloc(words * sizeof(int));
    int *bs = malloc(words * sizeof(int)), *br = malloc(words * sizeof(int));
    int *gs = malloc(words * sizeof(int)), *gr = malloc(words * sizeof(int));
    MPI_Datatype vec; /* L ints at stride 2: the blocking allgather's receive, staged */
    OK(MPI_Type_vector(L, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(vec, &lb, &ext));
    int vext = (int)(ext / (MPI_Aint)sizeof(int));
    MPI_Request p, q, both[2];
    OK(MPI_Neighbor_alltoall_init(ps, L, MPI_INT, pr, L, MPI_INT, c, MPI_INFO_NULL, &p));
    for (int rep = 0; rep < 3; rep++) {
        for (size_t i = 0; i < words; i++) pr[i] = ir[i] = br[i] = gr[i] = -1;
        for (int j = 0; j < n.nout; j++)
            for (int e = 0; e < L; e++) {
                ps[j * L + e] = W(0, rep, me, j, e);
                bs[j * L + e] = W(2, rep, me, j, e);
            }
        for (int e = 0; e < L; e++) {
            is[e] = W(1, rep, me, 0, e);
            gs[e] = W(3, rep, me, 0, e);
        }
        OK(MPI_Start(&p));
        OK(MPI_Ineighbor_allgather(is, L, MPI_INT, ir, L, MPI_INT, c, &q));
        OK(MPI_Neighbor_alltoall(bs, L, MPI_INT, br, L, MPI_INT, c));
        OK(MPI_Neighbor_allgather(gs, L, MPI_INT, gr, 1, vec, c));
        /* the blocking ones are done: check them before the others complete */
        for (int i = 0; i < n.nin; i++)
            for (int e = 0; e < L; e++) {
                bool none = n.in[i] == MPI_PROC_NULL;
                int a2a = none ? -1 : W(2, rep, n.in[i], sender_index(&n, i), e);
                int ag = none ? -1 : W(3, rep, n.in[i], 0, e);
                CHECK(br[i * L + e] == a2a,
                      "%s L %d start %d: blocking alltoall block %d[%d]: %d want %d", what, L, rep,
                      i, e, br[i * L + e], a2a);
                CHECK(
                    gr[i * vext + 2 * e] == ag,
                    "%s L %d start %d: blocking allgather into a vector, block %d[%d]: %d want %d",
                    what, L, rep, i, e, gr[i * vext + 2 * e], ag);
            }
        if (rep == 1) { /* the nonblocking one first, then the persistent one */
            OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
            OK(MPI_Wait(&p, MPI_STATUS_IGNORE));
        } else {
            both[0] = p;
            both[1] = q;
            OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
            p = both[0]; /* a persistent request stays */
        }
        for (int i = 0; i < n.nin; i++)
            for (int e = 0; e < L; e++) {
                bool none = n.in[i] == MPI_PROC_NULL;
                int a2a = none ? -1 : W(0, rep, n.in[i], sender_index(&n, i), e);
                int ag = none ? -1 : W(1, rep, n.in[i], 0, e);
                CHECK(pr[i * L + e] == a2a,
                      "%s L %d start %d: persistent alltoall block %d[%d]: %d want %d", what, L,
                      rep, i, e, pr[i * L + e], a2a);
                CHECK(ir[i * L + e] == ag,
                      "%s L %d start %d: nonblocking allgather block %d[%d]: %d want %d", what, L,
                      rep, i, e, ir[i * L + e], ag);
            }
    }
    OK(MPI_Request_free(&p));
    OK(MPI_Type_free(&vec));
    free(ps), free(pr), free(is), free(ir), free(bs), free(br), free(gs), free(gr);
    nb_free(&n);
}

/* Each topology of main's, for 'interleave'. */
static void interleave_all(void)
{
    int dims[3];
    MPI_Comm c[5] = {make_cart(2, (int[]){0, 0}, dims), make_cart(2, (int[]){1, 1}, dims),
                     make_cart(3, (int[]){1, 0, 1}, dims), make_graph(), make_dist_adjacent(true)};
    const char *what[5] = {"2-D cart", "periodic 2-D cart", "3-D cart", "graph", "dist graph"};
    for (int t = 0; t < 5; t++) {
        test_interleave(c[t], what[t], 3);
        test_interleave(c[t], what[t], 3000);
        OK(MPI_Comm_free(&c[t]));
    }
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    nonblocking = argc > 1 && !strcmp(argv[1], "nonblocking");
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc > 1 && !strcmp(argv[1], "hang")) {
        int dims[1] = {np}, per[1] = {1}, x = 0, r[2];
        MPI_Comm ring;
        OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &ring));
        if (me == 0)
            MPI_Recv(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Neighbor_allgather(&me, 1, MPI_INT, r, 1, MPI_INT, ring);
        CHECK(0, "the deadlock did not end the job");
    }
    if (argc > 1 && !strcmp(argv[1], "interleave")) {
        interleave_all();
        OK(MPI_Finalize());
        if (me == 0) printf("topo (interleave): ok\n");
        return 0;
    }

    test_dims();
    test_cart();

    int dims[3];
    MPI_Comm c = make_cart(2, (int[]){0, 0}, dims);
    test_neighbors(c, "2-D cart");
    OK(MPI_Comm_free(&c));
    c = make_cart(2, (int[]){1, 1}, dims); /* size 1 or 2 dimensions: neighbours met twice */
    test_neighbors(c, "periodic 2-D cart");
    OK(MPI_Comm_free(&c));
    c = make_cart(3, (int[]){1, 0, 1}, dims);
    test_neighbors(c, "3-D cart");
    OK(MPI_Comm_free(&c));

    c = make_graph();
    test_neighbors(c, "graph");
    OK(MPI_Comm_free(&c));

    c = make_dist_adjacent(true);
    test_neighbors(c, "weighted dist graph");
    OK(MPI_Comm_free(&c));
    c = make_dist_adjacent(false);
    test_neighbors(c, "unweighted dist graph");
    OK(MPI_Comm_free(&c));
    test_dist_create();

    OK(MPI_Finalize());
    if (me == 0) printf("topo%s: ok\n", nonblocking ? " (nonblocking)" : "");
    return 0;
}
