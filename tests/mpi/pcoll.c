/* Persistent collectives (MPI-4.0 §6.13, src/api/mpi_pcoll.c): every
 * MPI_*_init against its blocking form, started again and again (MPI_Start,
 * MPI_Startall; completed by MPI_Wait and by MPI_Test polling) with new data in
 * the buffers before each start: over MPI_COMM_WORLD and a split communicator
 * with int, double, a vector type with gaps and a non-commutative user
 * operation on a 4-int type, several counts, in place where MPI allows it; the
 * values of the definition for the int sums; on an intercommunicator; the
 * neighbourhood forms on a ring; several started at once (in another order on
 * odd ranks) among nonblocking and blocking collectives; what MPI says of an
 * inactive persistent request (MPI_Wait, MPI_Test, MPI_Request_get_status,
 * MPI_Request_free, MPI_Start of an active one); argument errors. Nothing here
 * depends on timing. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, wsize, failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", wrank, __FILE__, __LINE__);                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            if (++failures > 10) MPI_Abort(MPI_COMM_WORLD, 1);                                     \
        }                                                                                          \
    } while (0)

/* 2x2 integer matrices mod 1000, multiplied: associative, not commutative. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int r[4] = {(a[0] * b[0] + a[1] * b[2]) % 1000, (a[0] * b[1] + a[1] * b[3]) % 1000,
                    (a[2] * b[0] + a[3] * b[2]) % 1000, (a[2] * b[1] + a[3] * b[3]) % 1000};
        memcpy(b, r, sizeof r);
    }
}

enum { T_INT, T_DBL, T_VEC, T_MAT, NT };
static MPI_Datatype types[NT];
static MPI_Op ops[NT];
static const char *tname[NT] = {"int", "double", "vector", "matrix"};
static MPI_Aint text[NT];

#define MAXBUF (4 << 20)
static char *S, *R[2]; /* send data; receive buffers of the blocking and the persistent form */

static int ival(int seed, size_t i)
{
    return (seed * 7 + (int)i * 3) % 13 + 1;
}

static void fill(char *buf, int t, size_t bytes, int seed)
{
    if (t == T_DBL) {
        double *d = (double *)buf;
        for (size_t i = 0; i < bytes / sizeof *d; i++) d[i] = (double)((seed * 31 + (int)i) % 97);
    } else {
        int *v = (int *)buf;
        for (size_t i = 0; i < bytes / sizeof *v; i++) v[i] = ival(seed, i);
    }
}

enum {
    C_BARRIER,
    C_BCAST,
    C_REDUCE,
    C_ALLREDUCE,
    C_ALLREDUCE_IP,
    C_RS_BLOCK,
    C_RS,
    C_SCAN,
    C_EXSCAN,
    C_EXSCAN_IP,
    C_GATHER,
    C_GATHER_IP,
    C_GATHERV,
    C_SCATTER,
    C_SCATTERV,
    C_ALLGATHER,
    C_ALLGATHER_IP,
    C_ALLGATHERV,
    C_ALLTOALL,
    C_ALLTOALL_IP,
    C_ALLTOALLV,
    C_ALLTOALLW,
    NC
};
static const char *cname[NC] = {
    "barrier",   "bcast",          "reduce",     "allreduce", "allreduce_inplace",
    "rs_block",  "reduce_scatter", "scan",       "exscan",    "exscan_inplace",
    "gather",    "gather_inplace", "gatherv",    "scatter",   "scatterv",
    "allgather", "allgather_ip",   "allgatherv", "alltoall",  "alltoall_inplace",
    "alltoallv", "alltoallw"};

/* The counts and displacements of one collective: they must stay as they are
 * while its persistent request lives. */
typedef struct lay {
    int *cnts, *disp, *sc, *sd, *rc, *rd, *sb, *sbd, *rb, *rbd;
    MPI_Datatype *sty, *rty;
} lay;

static void lay_make(lay *x, MPI_Comm comm, int t, int count)
{
    int np, me, sz;
    MPI_Comm_size(comm, &np);
    MPI_Comm_rank(comm, &me);
    MPI_Type_size(types[t], &sz);
    int *a = malloc(sizeof(int) * (size_t)np * 10);
    x->cnts = a, x->disp = a + np, x->sc = a + 2 * np, x->sd = a + 3 * np, x->rc = a + 4 * np;
    x->rd = a + 5 * np, x->sb = a + 6 * np, x->sbd = a + 7 * np, x->rb = a + 8 * np;
    x->rbd = a + 9 * np;
    x->sty = malloc(sizeof(MPI_Datatype) * (size_t)np * 2);
    x->rty = x->sty + np;
    for (int i = 0; i < np; i++) {
        x->cnts[i] = (count + i) % 5 + (i & 1) * count;
        x->disp[i] = i ? x->disp[i - 1] + x->cnts[i - 1] + 1 : 2;
        /* what i sends to me is what I receive from i */
        x->sc[i] = (me * 3 + i * 5 + count) % 4 + count / 3;
        x->rc[i] = (i * 3 + me * 5 + count) % 4 + count / 3;
        x->sd[i] = i ? x->sd[i - 1] + x->sc[i - 1] + 1 : 1;
        x->rd[i] = i ? x->rd[i - 1] + x->rc[i - 1] + 2 : 0;
        /* alltoallw: byte displacements; the block to/from an odd rank as MPI_BYTE */
        x->sty[i] = (i & 1) && t != T_VEC ? MPI_BYTE : types[t];
        x->rty[i] = (me & 1) && t != T_VEC ? MPI_BYTE : types[t];
        x->sb[i] = x->sty[i] == MPI_BYTE ? x->sc[i] * sz : x->sc[i];
        x->rb[i] = x->rty[i] == MPI_BYTE ? x->rc[i] * sz : x->rc[i];
        x->sbd[i] = x->sd[i] * (int)text[t];
        x->rbd[i] = x->rd[i] * (int)text[t];
    }
}

static void lay_free(lay *x)
{
    free(x->cnts);
    free(x->sty);
}

/* What the program does before each call or start: the in-place forms' data
 * into the receive buffer. */
static void prep(int c, MPI_Comm comm, int t, int count, const char *s, char *r)
{
    int np, me;
    MPI_Comm_size(comm, &np);
    MPI_Comm_rank(comm, &me);
    size_t ext = (size_t)text[t], root = (size_t)(count % np);
    if (c == C_BCAST && (size_t)me == root) memcpy(r, s, (size_t)count * ext);
    if (c == C_ALLREDUCE_IP || c == C_EXSCAN_IP) memcpy(r, s, (size_t)count * ext);
    if (c == C_GATHER_IP && (size_t)me == root)
        memcpy(r + root * (size_t)count * ext, s, (size_t)count * ext);
    if (c == C_ALLGATHER_IP) memcpy(r + (size_t)me * count * ext, s, (size_t)count * ext);
    if (c == C_ALLTOALL_IP) memcpy(r, s, (size_t)np * count * ext);
}

/* Collective c: blocking (rq NULL), or its persistent request made in *rq. */
static int call(int c, MPI_Comm comm, int t, int count, const char *s, char *r, const lay *x,
                MPI_Request *rq)
{
    int np, me;
    MPI_Comm_size(comm, &np);
    MPI_Comm_rank(comm, &me);
    MPI_Datatype dt = types[t];
    MPI_Op op = ops[t];
    MPI_Info in = MPI_INFO_NULL;
    int root = count % np, mine = x->cnts[me];
    const void *ip = MPI_IN_PLACE;
    switch (c) {
    case C_BARRIER:
        return rq ? MPI_Barrier_init(comm, in, rq) : MPI_Barrier(comm);
    case C_BCAST:
        return rq ? MPI_Bcast_init(r, count, dt, root, comm, in, rq)
                  : MPI_Bcast(r, count, dt, root, comm);
    case C_REDUCE:
        return rq ? MPI_Reduce_init(s, r, count, dt, op, np - 1, comm, in, rq)
                  : MPI_Reduce(s, r, count, dt, op, np - 1, comm);
    case C_ALLREDUCE:
        return rq ? MPI_Allreduce_init(s, r, count, dt, op, comm, in, rq)
                  : MPI_Allreduce(s, r, count, dt, op, comm);
    case C_ALLREDUCE_IP:
        return rq ? MPI_Allreduce_init(ip, r, count, dt, op, comm, in, rq)
                  : MPI_Allreduce(ip, r, count, dt, op, comm);
    case C_RS_BLOCK:
        return rq ? MPI_Reduce_scatter_block_init(s, r, count, dt, op, comm, in, rq)
                  : MPI_Reduce_scatter_block(s, r, count, dt, op, comm);
    case C_RS:
        return rq ? MPI_Reduce_scatter_init(s, r, x->cnts, dt, op, comm, in, rq)
                  : MPI_Reduce_scatter(s, r, x->cnts, dt, op, comm);
    case C_SCAN:
        return rq ? MPI_Scan_init(s, r, count, dt, op, comm, in, rq)
                  : MPI_Scan(s, r, count, dt, op, comm);
    case C_EXSCAN:
        return rq ? MPI_Exscan_init(s, r, count, dt, op, comm, in, rq)
                  : MPI_Exscan(s, r, count, dt, op, comm);
    case C_EXSCAN_IP:
        return rq ? MPI_Exscan_init(ip, r, count, dt, op, comm, in, rq)
                  : MPI_Exscan(ip, r, count, dt, op, comm);
    case C_GATHER:
        return rq ? MPI_Gather_init(s, count, dt, r, count, dt, root, comm, in, rq)
                  : MPI_Gather(s, count, dt, r, count, dt, root, comm);
    case C_GATHER_IP: {
        const void *sb = me == root ? ip : s;
        return rq ? MPI_Gather_init(sb, count, dt, r, count, dt, root, comm, in, rq)
                  : MPI_Gather(sb, count, dt, r, count, dt, root, comm);
    }
    case C_GATHERV:
        return rq ? MPI_Gatherv_init(s, mine, dt, r, x->cnts, x->disp, dt, root, comm, in, rq)
                  : MPI_Gatherv(s, mine, dt, r, x->cnts, x->disp, dt, root, comm);
    case C_SCATTER:
        return rq ? MPI_Scatter_init(s, count, dt, r, count, dt, root, comm, in, rq)
                  : MPI_Scatter(s, count, dt, r, count, dt, root, comm);
    case C_SCATTERV:
        return rq ? MPI_Scatterv_init(s, x->cnts, x->disp, dt, r, mine, dt, root, comm, in, rq)
                  : MPI_Scatterv(s, x->cnts, x->disp, dt, r, mine, dt, root, comm);
    case C_ALLGATHER:
        return rq ? MPI_Allgather_init(s, count, dt, r, count, dt, comm, in, rq)
                  : MPI_Allgather(s, count, dt, r, count, dt, comm);
    case C_ALLGATHER_IP:
        return rq ? MPI_Allgather_init(ip, count, dt, r, count, dt, comm, in, rq)
                  : MPI_Allgather(ip, count, dt, r, count, dt, comm);
    case C_ALLGATHERV:
        return rq ? MPI_Allgatherv_init(s, mine, dt, r, x->cnts, x->disp, dt, comm, in, rq)
                  : MPI_Allgatherv(s, mine, dt, r, x->cnts, x->disp, dt, comm);
    case C_ALLTOALL:
        return rq ? MPI_Alltoall_init(s, count, dt, r, count, dt, comm, in, rq)
                  : MPI_Alltoall(s, count, dt, r, count, dt, comm);
    case C_ALLTOALL_IP:
        return rq ? MPI_Alltoall_init(ip, count, dt, r, count, dt, comm, in, rq)
                  : MPI_Alltoall(ip, count, dt, r, count, dt, comm);
    case C_ALLTOALLV:
        return rq ? MPI_Alltoallv_init(s, x->sc, x->sd, dt, r, x->rc, x->rd, dt, comm, in, rq)
                  : MPI_Alltoallv(s, x->sc, x->sd, dt, r, x->rc, x->rd, dt, comm);
    default:
        return rq ? MPI_Alltoallw_init(s, x->sb, x->sbd, x->sty, r, x->rb, x->rbd, x->rty, comm, in,
                                       rq)
                  : MPI_Alltoallw(s, x->sb, x->sbd, x->sty, r, x->rb, x->rbd, x->rty, comm);
    }
}

/* Complete started request rq: by MPI_Wait, or by MPI_Test polling; it stays
 * (inactive), as persistent requests do. */
static void complete(MPI_Request *rq, int by_test)
{
    MPI_Request was = *rq;
    if (!by_test) {
        CHECK(MPI_Wait(rq, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait");
    } else {
        int flag = 0;
        while (!flag) CHECK(MPI_Test(rq, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS, "test");
    }
    CHECK(*rq == was, "a persistent request's handle changed at completion");
}

/* The int sums the definition gives (seed(r): member r's fill seed), for the
 * reductions and data movements whose result is simple to state. */
static void definition(int c, MPI_Comm comm, int count, const int *r, int rep)
{
    int np, me, wr;
    MPI_Comm_size(comm, &np);
    MPI_Comm_rank(comm, &me);
    int *seed = malloc(sizeof(int) * (size_t)np);
    wr = wrank * 5 + rep * 11;
    MPI_Allgather(&wr, 1, MPI_INT, seed, 1, MPI_INT, comm);
    int root = count % np, bad = -1;
    for (int i = 0; i < count && bad < 0; i++) {
        long want = 0;
        switch (c) {
        case C_ALLREDUCE:
        case C_SCAN:
        case C_EXSCAN:
            for (int k = 0; k < (c == C_ALLREDUCE ? np : c == C_SCAN ? me + 1 : me); k++)
                want += ival(seed[k], (size_t)i);
            if (c == C_EXSCAN && me == 0) continue; /* undefined there */
            break;
        case C_RS_BLOCK:
            for (int k = 0; k < np; k++) want += ival(seed[k], (size_t)(me * count + i));
            break;
        case C_BCAST:
            want = ival(seed[root], (size_t)i);
            break;
        case C_ALLGATHER:
            for (int k = 0; k < np && bad < 0; k++)
                if (r[k * count + i] != ival(seed[k], (size_t)i)) bad = k * count + i;
            continue;
        case C_ALLTOALL:
            for (int k = 0; k < np && bad < 0; k++)
                if (r[k * count + i] != ival(seed[k], (size_t)(me * count + i)))
                    bad = k * count + i;
            continue;
        default:
            continue;
        }
        if (r[i] != want) bad = i;
    }
    CHECK(bad < 0, "%s of %d ints, start %d: element %d is not what the definition gives", cname[c],
          count, rep, bad);
    free(seed);
}

static void compare_all(MPI_Comm comm, const char *cn)
{
    static const int counts[] = {0, 1, 7, 300, 5000};
    int np;
    MPI_Comm_size(comm, &np);
    for (int t = 0; t < NT; t++)
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
            int count = counts[k];
            if (t == T_VEC && count > 1000) count = 1000;
            /* every buffer the collectives touch lies in the first lim bytes */
            size_t lim = ((size_t)count * 2 + 16) * (size_t)(np + 1) * (size_t)text[t] * 2;
            if (lim > MAXBUF) lim = MAXBUF;
            for (int c = 0; c < NC; c++) {
                if (t == T_MAT && c != C_BCAST && c != C_REDUCE && c != C_ALLREDUCE &&
                    c != C_SCAN && c != C_EXSCAN && c != C_RS_BLOCK && c != C_RS)
                    continue;
                lay x;
                lay_make(&x, comm, t, count);
                MPI_Request rq = MPI_REQUEST_NULL;
                CHECK(call(c, comm, t, count, S, R[1], &x, &rq) == MPI_SUCCESS, "%s_init",
                      cname[c]);
                for (int rep = 0; rep < 3; rep++) {
                    fill(S, t, lim, wrank * 5 + rep * 11);
                    memset(R[0], 0x5a, lim);
                    memset(R[1], 0x5a, lim);
                    prep(c, comm, t, count, S, R[0]);
                    CHECK(call(c, comm, t, count, S, R[0], &x, NULL) == MPI_SUCCESS, "%s",
                          cname[c]);
                    prep(c, comm, t, count, S, R[1]);
                    CHECK((rep == 2 ? MPI_Startall(1, &rq) : MPI_Start(&rq)) == MPI_SUCCESS,
                          "start");
                    complete(&rq, rep == 1);
                    CHECK(!memcmp(R[0], R[1], lim),
                          "%s on %s, %s x %d, start %d: persistent differs from blocking", cname[c],
                          cn, tname[t], count, rep);
                    if (t == T_INT && count == 7) definition(c, comm, count, (int *)R[1], rep);
                }
                CHECK(MPI_Request_free(&rq) == MPI_SUCCESS && rq == MPI_REQUEST_NULL, "free");
                lay_free(&x);
            }
        }
}

/* ---- an intercommunicator: the two halves of the world -------------------- */

enum {
    X_BARRIER,
    X_BCAST,
    X_REDUCE,
    X_ALLREDUCE,
    X_GATHER,
    X_SCATTER,
    X_ALLGATHER,
    X_ALLTOALL,
    X_RS_BLOCK,
    X_GATHERV,
    X_ALLGATHERV,
    X_ALLTOALLV,
    NX
};

static int xcall(int c, MPI_Comm ic, int lo, int count, const int *s, int *r, const int *cnts,
                 const int *disp, MPI_Request *rq)
{
    int me;
    MPI_Comm_rank(ic, &me);
    /* roots in the low group's member 0 */
    int root = lo ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Info in = MPI_INFO_NULL;
    MPI_Datatype I = MPI_INT;
    switch (c) {
    case X_BARRIER:
        return rq ? MPI_Barrier_init(ic, in, rq) : MPI_Barrier(ic);
    case X_BCAST:
        return rq ? MPI_Bcast_init(r, count, I, root, ic, in, rq)
                  : MPI_Bcast(r, count, I, root, ic);
    case X_REDUCE:
        return rq ? MPI_Reduce_init(s, r, count, I, MPI_SUM, root, ic, in, rq)
                  : MPI_Reduce(s, r, count, I, MPI_SUM, root, ic);
    case X_ALLREDUCE:
        return rq ? MPI_Allreduce_init(s, r, count, I, MPI_SUM, ic, in, rq)
                  : MPI_Allreduce(s, r, count, I, MPI_SUM, ic);
    case X_GATHER:
        return rq ? MPI_Gather_init(s, count, I, r, count, I, root, ic, in, rq)
                  : MPI_Gather(s, count, I, r, count, I, root, ic);
    case X_SCATTER:
        return rq ? MPI_Scatter_init(s, count, I, r, count, I, root, ic, in, rq)
                  : MPI_Scatter(s, count, I, r, count, I, root, ic);
    case X_ALLGATHER:
        return rq ? MPI_Allgather_init(s, count, I, r, count, I, ic, in, rq)
                  : MPI_Allgather(s, count, I, r, count, I, ic);
    case X_ALLTOALL:
        return rq ? MPI_Alltoall_init(s, count, I, r, count, I, ic, in, rq)
                  : MPI_Alltoall(s, count, I, r, count, I, ic);
    case X_RS_BLOCK:
        return rq ? MPI_Reduce_scatter_block_init(s, r, count, I, MPI_SUM, ic, in, rq)
                  : MPI_Reduce_scatter_block(s, r, count, I, MPI_SUM, ic);
    case X_GATHERV:
        return rq ? MPI_Gatherv_init(s, count, I, r, cnts, disp, I, root, ic, in, rq)
                  : MPI_Gatherv(s, count, I, r, cnts, disp, I, root, ic);
    case X_ALLGATHERV:
        return rq ? MPI_Allgatherv_init(s, count, I, r, cnts, disp, I, ic, in, rq)
                  : MPI_Allgatherv(s, count, I, r, cnts, disp, I, ic);
    default: /* every block 'count' both ways, at disp */
        return rq ? MPI_Alltoallv_init(s, cnts, disp, I, r, cnts, disp, I, ic, in, rq)
                  : MPI_Alltoallv(s, cnts, disp, I, r, cnts, disp, I, ic);
    }
}

static void inter(void)
{
    if (wsize < 2) return;
    int lo = wrank < wsize / 2;
    MPI_Comm half, ic;
    MPI_Comm_split(MPI_COMM_WORLD, lo, wrank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lo ? wsize / 2 : 0, 7, &ic);
    int count = 257;
    size_t n = (size_t)count * (size_t)(wsize + 1) * 2;
    int *s = malloc(n * sizeof(int)), *r0 = malloc(n * sizeof(int)), *r1 = malloc(n * sizeof(int));
    int *cnts = malloc(sizeof(int) * (size_t)wsize * 2), *disp = cnts + wsize;
    for (int c = 0; c < NX; c++) {
        if (c == X_RS_BLOCK && wsize % 2) continue; /* needs groups of one size */
        int cnt = count;
        for (int i = 0; i < wsize; i++) {
            cnts[i] = cnt;
            disp[i] = c == X_ALLTOALLV ? i * cnt : i * (cnt + 3);
        }
        MPI_Request rq = MPI_REQUEST_NULL;
        CHECK(xcall(c, ic, lo, cnt, s, r1, cnts, disp, &rq) == MPI_SUCCESS, "inter init %d", c);
        for (int rep = 0; rep < 3; rep++) {
            for (size_t i = 0; i < n; i++) s[i] = (int)(wrank * 1000 + rep * 77 + (int)i % 301);
            memset(r0, 0x5a, n * sizeof(int));
            memset(r1, 0x5a, n * sizeof(int));
            if (c == X_BCAST && lo && wrank == 0) {
                memcpy(r0, s, (size_t)cnt * sizeof(int));
                memcpy(r1, s, (size_t)cnt * sizeof(int));
            }
            CHECK(xcall(c, ic, lo, cnt, s, r0, cnts, disp, NULL) == MPI_SUCCESS, "inter %d", c);
            CHECK(MPI_Start(&rq) == MPI_SUCCESS, "inter start");
            complete(&rq, rep & 1);
            CHECK(!memcmp(r0, r1, n * sizeof(int)),
                  "intercommunicator collective %d, start %d: persistent differs from blocking", c,
                  rep);
        }
        MPI_Request_free(&rq);
    }
    /* scans are not defined on an intercommunicator */
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    MPI_Request rq = MPI_REQUEST_NULL;
    CHECK(MPI_Scan_init(s, r0, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &rq) == MPI_ERR_COMM,
          "MPI_Scan_init on an intercommunicator");
    CHECK(rq == MPI_REQUEST_NULL, "a failed init made a request");
    free(s), free(r0), free(r1), free(cnts);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
}

/* ---- neighbourhood forms on a periodic ring ----------------------------- */

static void neighbours(void)
{
    MPI_Comm ring;
    int dims[1] = {wsize}, per[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &ring);
    enum { N = 33 };
    int s[2 * N + 8], r0[2 * N + 8], r1[2 * N + 8];
    int cnt[2] = {N, N - 5}, dsp[2] = {0, N + 2}, scnt[2] = {N - 5, N}, sdsp[2] = {N + 1, 0};
    int vc[2] = {N - 5, N - 5}; /* allgatherv: every neighbour sends N - 5 */
    MPI_Aint bsd[2] = {(MPI_Aint)sizeof(int) * (N + 1), 0};
    MPI_Aint brd[2] = {0, (MPI_Aint)sizeof(int) * (N + 2)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    MPI_Info in = MPI_INFO_NULL;
    for (int c = 0; c < 5; c++) {
        MPI_Request rq = MPI_REQUEST_NULL;
        int *r = r1;
        int e = c == 0   ? MPI_Neighbor_allgather_init(s, N, MPI_INT, r, N, MPI_INT, ring, in, &rq)
                : c == 1 ? MPI_Neighbor_allgatherv_init(s, N - 5, MPI_INT, r, vc, dsp, MPI_INT,
                                                        ring, in, &rq)
                : c == 2 ? MPI_Neighbor_alltoall_init(s, N, MPI_INT, r, N, MPI_INT, ring, in, &rq)
                : c == 3
                    ? MPI_Neighbor_alltoallv_init(s, scnt, sdsp, MPI_INT, r, cnt, dsp, MPI_INT,
                                                  ring, in, &rq)
                    : MPI_Neighbor_alltoallw_init(s, scnt, bsd, ty, r, cnt, brd, ty, ring, in, &rq);
        CHECK(e == MPI_SUCCESS, "neighbour init %d", c);
        for (int rep = 0; rep < 3; rep++) {
            for (int i = 0; i < 2 * N + 8; i++) s[i] = wrank * 100 + rep * 7 + i;
            memset(r0, 0x5a, sizeof r0);
            memset(r1, 0x5a, sizeof r1);
            r = r0;
            e = c == 0   ? MPI_Neighbor_allgather(s, N, MPI_INT, r, N, MPI_INT, ring)
                : c == 1 ? MPI_Neighbor_allgatherv(s, N - 5, MPI_INT, r, vc, dsp, MPI_INT, ring)
                : c == 2 ? MPI_Neighbor_alltoall(s, N, MPI_INT, r, N, MPI_INT, ring)
                : c == 3
                    ? MPI_Neighbor_alltoallv(s, scnt, sdsp, MPI_INT, r, cnt, dsp, MPI_INT, ring)
                    : MPI_Neighbor_alltoallw(s, scnt, bsd, ty, r, cnt, brd, ty, ring);
            CHECK(e == MPI_SUCCESS, "neighbour %d", c);
            CHECK(MPI_Start(&rq) == MPI_SUCCESS, "neighbour start");
            complete(&rq, rep & 1);
            CHECK(!memcmp(r0, r1, sizeof r0), "neighbourhood collective %d, start %d: differs", c,
                  rep);
        }
        MPI_Request_free(&rq);
    }
    MPI_Comm_free(&ring);
}

/* ---- several at once; the inactive request's rules; errors ---------------- */

static void several(void)
{
    enum { N = 1000 };
    /* zeroed: the _init calls take them before the loop fills them (GCC's
     * maybe-uninitialized, in the sanitizers' build) */
    int *a = calloc(N, sizeof(int)), *ra = calloc(N, sizeof(int)), *bc = calloc(N, sizeof(int));
    int *at = calloc((size_t)wsize, sizeof(int)), *atr = calloc((size_t)wsize, sizeof(int));
    MPI_Request p[3], q[3];
    MPI_Allreduce_init(a, ra, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &p[0]);
    MPI_Bcast_init(bc, N, MPI_INT, wsize - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &p[1]);
    MPI_Alltoall_init(at, 1, MPI_INT, atr, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &p[2]);
    for (int rep = 0; rep < 5; rep++) {
        for (int i = 0; i < N; i++) {
            a[i] = wrank + i + rep;
            bc[i] = wrank == wsize - 1 ? 3 * i + rep : -1;
        }
        for (int i = 0; i < wsize; i++) at[i] = wrank * 100 + i + rep;
        /* odd ranks start them in another order: their tags were fixed at init */
        for (int i = 0; i < 3; i++) q[i] = p[wrank & 1 ? 2 - i : i];
        CHECK(MPI_Startall(3, q) == MPI_SUCCESS, "startall");
        /* a nonblocking and a blocking collective while they run */
        int x = wrank, sx = 0, ix = 0;
        MPI_Request nb;
        MPI_Iallreduce(&x, &ix, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &nb);
        MPI_Allreduce(&x, &sx, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Wait(&nb, MPI_STATUS_IGNORE);
        CHECK(sx == wsize * (wsize - 1) / 2 && ix == wsize - 1, "collectives among started ones");
        MPI_Request rev[3] = {p[2], p[1], p[0]};
        CHECK(MPI_Waitall(3, rev, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
        CHECK(rev[0] == p[2] && rev[2] == p[0], "waitall set persistent requests to null");
        for (int i = 0; i < N && !failures; i++) {
            CHECK(ra[i] == wsize * (i + rep) + wsize * (wsize - 1) / 2, "allreduce[%d] = %d", i,
                  ra[i]);
            CHECK(bc[i] == 3 * i + rep, "bcast[%d] = %d", i, bc[i]);
        }
        for (int i = 0; i < wsize; i++)
            CHECK(atr[i] == i * 100 + wrank + rep, "alltoall[%d] = %d", i, atr[i]);
    }
    /* inactive: Wait and Test complete at once with an empty status, the
     * handle stays; MPI_Request_get_status says complete */
    MPI_Status st;
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    CHECK(MPI_Wait(&p[0], &st) == MPI_SUCCESS && p[0] != MPI_REQUEST_NULL, "wait on inactive");
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "wait on inactive: status not empty (%d, %d)", st.MPI_SOURCE, st.MPI_TAG);
    int flag = 0;
    CHECK(MPI_Test(&p[1], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag, "test on inactive");
    flag = 0;
    CHECK(MPI_Request_get_status(p[2], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag,
          "get_status on inactive");
    int idx = -2;
    CHECK(MPI_Waitany(3, p, &idx, MPI_STATUS_IGNORE) == MPI_SUCCESS && idx == MPI_UNDEFINED,
          "waitany over inactive ones: %d", idx);
    for (int i = 0; i < 3; i++)
        CHECK(MPI_Request_free(&p[i]) == MPI_SUCCESS && p[i] == MPI_REQUEST_NULL, "free");
    free(a), free(ra), free(bc), free(at), free(atr);
}

static void errors(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int x = 0, y;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Info in = MPI_INFO_NULL;
    CHECK(MPI_Bcast_init(&x, 1, MPI_INT, wsize, c, in, &rq) == MPI_ERR_ROOT, "bad root");
    CHECK(MPI_Allreduce_init(&x, &y, -1, MPI_INT, MPI_SUM, c, in, &rq) == MPI_ERR_COUNT,
          "bad count");
    CHECK(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, c, in, &rq) == MPI_ERR_OP, "bad op");
    CHECK(MPI_Allreduce_init(&x, &y, 1, MPI_DATATYPE_NULL, MPI_SUM, c, in, &rq) == MPI_ERR_TYPE,
          "bad type");
    CHECK(MPI_Barrier_init(c, in, NULL) != MPI_SUCCESS, "NULL request");
    CHECK(MPI_Allreduce_init(&x, &x, 1, MPI_INT, MPI_SUM, c, in, &rq) == MPI_ERR_BUFFER, "aliased");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* where a null one reports */
    CHECK(MPI_Barrier_init(MPI_COMM_NULL, in, &rq) == MPI_ERR_COMM, "null communicator");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK(rq == MPI_REQUEST_NULL, "a failed call made a request");
    /* the failures took no sequence number: the communicator still works */
    x = 1;
    CHECK(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, c, in, &rq) == MPI_SUCCESS, "init");
    CHECK(MPI_Start(&rq) == MPI_SUCCESS, "start");
    CHECK(MPI_Start(&rq) == MPI_ERR_REQUEST, "MPI_Start of an active request");
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(y == wsize, "allreduce after errors: %d", y);
    MPI_Request_free(&rq);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    S = malloc(MAXBUF);
    for (int m = 0; m < 2; m++) R[m] = malloc(MAXBUF);
    types[T_INT] = MPI_INT, ops[T_INT] = MPI_SUM;
    types[T_DBL] = MPI_DOUBLE, ops[T_DBL] = MPI_MAX;
    MPI_Type_vector(2, 1, 2, MPI_INT, &types[T_VEC]);
    MPI_Type_commit(&types[T_VEC]);
    ops[T_VEC] = MPI_SUM;
    MPI_Type_contiguous(4, MPI_INT, &types[T_MAT]);
    MPI_Type_commit(&types[T_MAT]);
    MPI_Op_create(matmul, 0, &ops[T_MAT]);
    for (int t = 0; t < NT; t++) {
        MPI_Aint lb;
        MPI_Type_get_extent(types[t], &lb, &text[t]);
    }
    compare_all(MPI_COMM_WORLD, "world");
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &half); /* reversed order */
    compare_all(half, "split");
    MPI_Comm_free(&half);
    inter();
    neighbours();
    several();
    errors();
    MPI_Type_free(&types[T_VEC]);
    MPI_Type_free(&types[T_MAT]);
    MPI_Op_free(&ops[T_MAT]);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf(all ? "pcoll: %d FAILURES\n" : "pcoll: all passed\n", all);
    MPI_Finalize();
    return all != 0;
}
