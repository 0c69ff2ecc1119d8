/* Nonblocking collectives (mpi_nbc.c): every call against its blocking form,
 * over MPI_COMM_WORLD and a split communicator, with several counts and
 * datatypes (int, double, a vector type with gaps, a non-commutative user
 * operation on a 4-int type), completed by Wait and by Test polling; several
 * outstanding at once mixed with blocking collectives and point-to-point and
 * completed by Waitall in reverse order; a rank that computes without calling
 * MPI while the others wait; MPI_Request_free on an active one; MPI_Comm_idup;
 * a nonblocking one started before blocking ones on one rank and after them
 * on the others; argument errors; the progress thread is a batch thread.
 * Correctness only: nothing here depends on timing.
 *   nbc hang: a deadlock the hang watchdog must report, ranks 1.. in the
 *   MPI_Wait of an MPI_Ibarrier that rank 0, waiting for a message from rank
 *   1, never joins. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../threads.h"

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
    int sz = 0; /* an operation may call MPI (MPICH's tests do): no deadlock */
    MPI_Type_size(*dt, &sz);
    if (sz != 4 * (int)sizeof(int)) failures++;
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

#define MAXBUF (8 << 20)
static char *S, *R[3]; /* send data; receive buffers of the blocking form, Wait, Test */

static void fill(char *buf, int t, size_t bytes, int seed)
{
    if (t == T_DBL) {
        double *d = (double *)buf;
        for (size_t i = 0; i < bytes / sizeof *d; i++) d[i] = (double)((seed * 31 + (int)i) % 97);
    } else {
        int *v = (int *)buf;
        for (size_t i = 0; i < bytes / sizeof *v; i++) v[i] = (seed * 7 + (int)i * 3) % 13 + 1;
    }
}

static void complete(MPI_Request *rq, int mode)
{
    if (mode == 1) {
        MPI_Status st;
        CHECK(MPI_Wait(rq, &st) == MPI_SUCCESS, "wait");
        CHECK(*rq == MPI_REQUEST_NULL, "request not reset");
        return;
    }
    int flag = 0;
    long polls = 0;
    while (!flag) {
        CHECK(MPI_Test(rq, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS, "test");
        polls++;
    }
    CHECK(*rq == MPI_REQUEST_NULL, "request not reset after %ld polls", polls);
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
static const char *cname[NC] = {"barrier",
                                "bcast",
                                "reduce",
                                "allreduce",
                                "allreduce_inplace",
                                "rs_block",
                                "reduce_scatter",
                                "scan",
                                "exscan",
                                "exscan_inplace",
                                "gather",
                                "gather_inplace",
                                "gatherv",
                                "scatter",
                                "scatterv",
                                "allgather",
                                "allgather_inplace",
                                "allgatherv",
                                "alltoall",
                                "alltoall_inplace",
                                "alltoallv",
                                "alltoallw"};

/* Run collective c in mode 0 (blocking), 1 (nonblocking + Wait), 2 (+ Test). */
static void run(int c, MPI_Comm comm, int t, int count, int mode)
{
    int np, me;
    MPI_Comm_size(comm, &np);
    MPI_Comm_rank(comm, &me);
    MPI_Datatype dt = types[t];
    MPI_Op op = ops[t];
    size_t ext = (size_t)text[t];
    char *s = S, *r = R[mode];
    int *cnts = malloc(sizeof(int) * (size_t)np * 2), *disp = cnts + np;
    for (int i = 0; i < np; i++) {
        cnts[i] = (count + i) % 5 + (i & 1) * count;
        disp[i] = i ? disp[i - 1] + cnts[i - 1] + 1 : 2;
    }
    /* alltoallv: what i sends to me must equal what I receive from i */
    int *sc = malloc(sizeof(int) * (size_t)np * 4), *sd = sc + np, *rc = sd + np, *rd = rc + np;
    for (int i = 0; i < np; i++) {
        sc[i] = (me * 3 + i * 5 + count) % 4 + count / 3;
        rc[i] = (i * 3 + me * 5 + count) % 4 + count / 3;
        sd[i] = i ? sd[i - 1] + sc[i - 1] + 1 : 1;
        rd[i] = i ? rd[i - 1] + rc[i - 1] + 2 : 0;
    }
    MPI_Request rq = MPI_REQUEST_NULL;
    int rcnt_me = cnts[me];
    int root = count % np;
    int nb = mode != 0;
    int e = MPI_SUCCESS;
    switch (c) {
    case C_BARRIER:
        e = nb ? MPI_Ibarrier(comm, &rq) : MPI_Barrier(comm);
        break;
    case C_BCAST:
        if (me == root) memcpy(r, s, (size_t)count * ext);
        e = nb ? MPI_Ibcast(r, count, dt, root, comm, &rq) : MPI_Bcast(r, count, dt, root, comm);
        break;
    case C_REDUCE:
        e = nb ? MPI_Ireduce(s, r, count, dt, op, np - 1, comm, &rq)
               : MPI_Reduce(s, r, count, dt, op, np - 1, comm);
        break;
    case C_ALLREDUCE:
        e = nb ? MPI_Iallreduce(s, r, count, dt, op, comm, &rq)
               : MPI_Allreduce(s, r, count, dt, op, comm);
        break;
    case C_ALLREDUCE_IP:
        memcpy(r, s, (size_t)count * ext);
        e = nb ? MPI_Iallreduce(MPI_IN_PLACE, r, count, dt, op, comm, &rq)
               : MPI_Allreduce(MPI_IN_PLACE, r, count, dt, op, comm);
        break;
    case C_RS_BLOCK:
        e = nb ? MPI_Ireduce_scatter_block(s, r, count, dt, op, comm, &rq)
               : MPI_Reduce_scatter_block(s, r, count, dt, op, comm);
        break;
    case C_RS:
        e = nb ? MPI_Ireduce_scatter(s, r, cnts, dt, op, comm, &rq)
               : MPI_Reduce_scatter(s, r, cnts, dt, op, comm);
        break;
    case C_SCAN:
        e = nb ? MPI_Iscan(s, r, count, dt, op, comm, &rq) : MPI_Scan(s, r, count, dt, op, comm);
        break;
    case C_EXSCAN:
        e = nb ? MPI_Iexscan(s, r, count, dt, op, comm, &rq)
               : MPI_Exscan(s, r, count, dt, op, comm);
        break;
    case C_EXSCAN_IP:
        memcpy(r, s, (size_t)count * ext);
        e = nb ? MPI_Iexscan(MPI_IN_PLACE, r, count, dt, op, comm, &rq)
               : MPI_Exscan(MPI_IN_PLACE, r, count, dt, op, comm);
        break;
    case C_GATHER:
        e = nb ? MPI_Igather(s, count, dt, r, count, dt, root, comm, &rq)
               : MPI_Gather(s, count, dt, r, count, dt, root, comm);
        break;
    case C_GATHER_IP: {
        const void *sb = me == root ? MPI_IN_PLACE : s;
        if (me == root) memcpy(r + (size_t)root * count * ext, s, (size_t)count * ext);
        e = nb ? MPI_Igather(sb, count, dt, r, count, dt, root, comm, &rq)
               : MPI_Gather(sb, count, dt, r, count, dt, root, comm);
        break;
    }
    case C_GATHERV:
        e = nb ? MPI_Igatherv(s, rcnt_me, dt, r, cnts, disp, dt, root, comm, &rq)
               : MPI_Gatherv(s, rcnt_me, dt, r, cnts, disp, dt, root, comm);
        break;
    case C_SCATTER:
        e = nb ? MPI_Iscatter(s, count, dt, r, count, dt, root, comm, &rq)
               : MPI_Scatter(s, count, dt, r, count, dt, root, comm);
        break;
    case C_SCATTERV:
        e = nb ? MPI_Iscatterv(s, cnts, disp, dt, r, rcnt_me, dt, root, comm, &rq)
               : MPI_Scatterv(s, cnts, disp, dt, r, rcnt_me, dt, root, comm);
        break;
    case C_ALLGATHER:
        e = nb ? MPI_Iallgather(s, count, dt, r, count, dt, comm, &rq)
               : MPI_Allgather(s, count, dt, r, count, dt, comm);
        break;
    case C_ALLGATHER_IP:
        memcpy(r + (size_t)me * count * ext, s, (size_t)count * ext);
        e = nb ? MPI_Iallgather(MPI_IN_PLACE, count, dt, r, count, dt, comm, &rq)
               : MPI_Allgather(MPI_IN_PLACE, count, dt, r, count, dt, comm);
        break;
    case C_ALLGATHERV:
        e = nb ? MPI_Iallgatherv(s, rcnt_me, dt, r, cnts, disp, dt, comm, &rq)
               : MPI_Allgatherv(s, rcnt_me, dt, r, cnts, disp, dt, comm);
        break;
    case C_ALLTOALL:
        e = nb ? MPI_Ialltoall(s, count, dt, r, count, dt, comm, &rq)
               : MPI_Alltoall(s, count, dt, r, count, dt, comm);
        break;
    case C_ALLTOALL_IP:
        memcpy(r, s, (size_t)np * count * ext);
        e = nb ? MPI_Ialltoall(MPI_IN_PLACE, count, dt, r, count, dt, comm, &rq)
               : MPI_Alltoall(MPI_IN_PLACE, count, dt, r, count, dt, comm);
        break;
    case C_ALLTOALLW: {
        /* byte displacements; the block to/from an odd rank as MPI_BYTE */
        int *sb = malloc(sizeof(int) * (size_t)np * 4), *sbd = sb + np, *rb = sbd + np,
            *rbd = rb + np;
        MPI_Datatype *sty = malloc(sizeof(MPI_Datatype) * (size_t)np * 2), *rty = sty + np;
        for (int i = 0; i < np; i++) {
            int sz;
            MPI_Type_size(dt, &sz);
            sty[i] = (i & 1) && t != T_VEC ? MPI_BYTE : dt;
            rty[i] = (me & 1) && t != T_VEC ? MPI_BYTE : dt;
            sb[i] = sty[i] == MPI_BYTE ? sc[i] * sz : sc[i];
            rb[i] = rty[i] == MPI_BYTE ? rc[i] * sz : rc[i];
            sbd[i] = sd[i] * (int)ext;
            rbd[i] = rd[i] * (int)ext;
        }
        e = nb ? MPI_Ialltoallw(s, sb, sbd, sty, r, rb, rbd, rty, comm, &rq)
               : MPI_Alltoallw(s, sb, sbd, sty, r, rb, rbd, rty, comm);
        if (nb) complete(&rq, mode);
        nb = 0;
        free(sb);
        free(sty);
        break;
    }
    case C_ALLTOALLV:
        e = nb ? MPI_Ialltoallv(s, sc, sd, dt, r, rc, rd, dt, comm, &rq)
               : MPI_Alltoallv(s, sc, sd, dt, r, rc, rd, dt, comm);
        break;
    }
    CHECK(e == MPI_SUCCESS, "%s returned %d", cname[c], e);
    if (nb) complete(&rq, mode);
    free(cnts);
    free(sc);
}

static int is_reduction(int c)
{
    return c == C_REDUCE || c == C_ALLREDUCE || c == C_ALLREDUCE_IP || c == C_RS_BLOCK ||
           c == C_RS || c == C_SCAN || c == C_EXSCAN || c == C_EXSCAN_IP;
}

static void compare_all(MPI_Comm comm, const char *cn)
{
    static const int counts[] = {0, 1, 7, 300, 5000};
    int me;
    MPI_Comm_rank(comm, &me);
    for (int t = 0; t < NT; t++)
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
            int count = counts[k];
            if (t == T_VEC && count > 1000) count = 1000;
            for (int c = 0; c < NC; c++) {
                if (t == T_MAT && !is_reduction(c) && c != C_BCAST) continue;
                fill(S, t, MAXBUF / 4, wrank + (int)k);
                for (int m = 0; m < 3; m++) memset(R[m], 0x5a, MAXBUF / 4);
                /* modes: blocking, Wait, Test, Wait again (another sequence number) */
                for (int m = 0; m < 3; m++) run(c, comm, t, count, m);
                for (int m = 1; m < 3; m++)
                    CHECK(!memcmp(R[0], R[m], MAXBUF / 4),
                          "%s on %s, %s x %d: nonblocking (%s) differs from blocking", cname[c], cn,
                          tname[t], count, m == 1 ? "Wait" : "Test");
            }
        }
}

/* Several outstanding at once, mixed with blocking collectives and
 * point-to-point, completed by Waitall in reverse order. */
static void outstanding(void)
{
    enum { N = 3000 };
    int *a = malloc(N * sizeof(int)), *ra = malloc(N * sizeof(int)), *bc = malloc(N * sizeof(int));
    int *g = malloc((size_t)wsize * N * sizeof(int)), *at = malloc((size_t)wsize * sizeof(int));
    int *atr = malloc((size_t)wsize * sizeof(int));
    for (int i = 0; i < N; i++) {
        a[i] = wrank + i;
        bc[i] = wrank == 0 ? 3 * i : -1;
    }
    for (int i = 0; i < wsize; i++) at[i] = wrank * 100 + i;
    MPI_Request rq[7];
    int n = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[n++]);
    MPI_Iallreduce(a, ra, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[n++]);
    MPI_Ibcast(bc, N, MPI_INT, 0, MPI_COMM_WORLD, &rq[n++]);
    /* a blocking collective and point-to-point in between */
    int x = wrank, sx = 0;
    MPI_Allreduce(&x, &sx, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sx == wsize * (wsize - 1) / 2, "blocking allreduce among nonblocking ones: %d", sx);
    int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize, got = -1;
    MPI_Irecv(&got, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &rq[n++]);
    MPI_Allgather(a, N, MPI_INT, g, N, MPI_INT, MPI_COMM_WORLD); /* blocking, into g */
    MPI_Ialltoall(at, 1, MPI_INT, atr, 1, MPI_INT, MPI_COMM_WORLD, &rq[n++]);
    MPI_Isend(&wrank, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[n++]);
    MPI_Request rev[7];
    for (int i = 0; i < n; i++) rev[i] = rq[n - 1 - i];
    CHECK(MPI_Waitall(n, rev, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
    for (int i = 0; i < N; i++) {
        CHECK(ra[i] == wsize * i + wsize * (wsize - 1) / 2, "iallreduce[%d] = %d", i, ra[i]);
        CHECK(bc[i] == 3 * i, "ibcast[%d] = %d", i, bc[i]);
        if (failures) break;
    }
    for (int i = 0; i < wsize; i++) CHECK(atr[i] == i * 100 + wrank, "ialltoall[%d]", i);
    for (int r = 0; r < wsize; r++) CHECK(g[r * N + 1] == r + 1, "allgather among them");
    CHECK(got == left, "p2p among nonblocking collectives: got %d", got);
    free(a), free(ra), free(bc), free(g), free(at), free(atr);
}

/* Rank 0 starts, then computes without calling MPI while the others wait: the
 * collectives still complete everywhere. */
static void compute_while_waiting(void)
{
    enum { N = 100000 };
    double *a = malloc(N * sizeof(double)), *r = malloc(N * sizeof(double));
    double *b = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        a[i] = wrank + 1;
        b[i] = wrank == wsize - 1 ? i : 0;
    }
    MPI_Request rq[2];
    MPI_Iallreduce(a, r, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
    MPI_Ibcast(b, N, MPI_DOUBLE, wsize - 1, MPI_COMM_WORLD, &rq[1]);
    if (wrank == 0) {
        volatile double acc = 0;
        for (long i = 0; i < 30000000; i++) acc += (double)i * 1e-9;
        (void)acc;
    }
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    double want = wsize * (wsize + 1) / 2.0;
    for (int i = 0; i < N; i += 997) {
        CHECK(r[i] == want, "iallreduce while computing: %g, want %g", r[i], want);
        CHECK(b[i] == i, "ibcast while computing: %g", b[i]);
    }
    free(a), free(r), free(b);
}

static void request_free_and_idup(void)
{
    /* MPI_Request_free on an active one: it completes in the background */
    int v = wrank, s = 0;
    MPI_Request rq;
    MPI_Ibarrier(MPI_COMM_WORLD, &rq);
    CHECK(MPI_Request_free(&rq) == MPI_SUCCESS && rq == MPI_REQUEST_NULL, "request_free");
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(s == wsize * (wsize - 1) / 2, "allreduce after a freed ibarrier");

    /* two idups outstanding on one communicator, then used */
    MPI_Comm d1 = MPI_COMM_NULL, d2 = MPI_COMM_NULL;
    MPI_Request r2[2];
    CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d1, &r2[0]) == MPI_SUCCESS, "idup");
    CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d2, &r2[1]) == MPI_SUCCESS, "idup");
    MPI_Waitall(2, r2, MPI_STATUSES_IGNORE);
    CHECK(d1 != MPI_COMM_NULL && d2 != MPI_COMM_NULL && d1 != d2, "idup handles");
    int res;
    MPI_Comm_compare(d1, MPI_COMM_WORLD, &res);
    CHECK(res == MPI_CONGRUENT, "idup is congruent: %d", res);
    int s1 = 0, s2 = 0;
    MPI_Request q[2];
    MPI_Iallreduce(&v, &s1, 1, MPI_INT, MPI_SUM, d1, &q[0]);
    MPI_Iallreduce(&v, &s2, 1, MPI_INT, MPI_MAX, d2, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    CHECK(s1 == wsize * (wsize - 1) / 2 && s2 == wsize - 1, "collectives on idup'ed comms");
    MPI_Comm_free(&d1);
    MPI_Comm_free(&d2);
}

static void errors(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int x = 0, y;
    MPI_Request rq = MPI_REQUEST_NULL;
    CHECK(MPI_Ibcast(&x, 1, MPI_INT, wsize, c, &rq) == MPI_ERR_ROOT, "bad root");
    CHECK(MPI_Iallreduce(&x, &y, -1, MPI_INT, MPI_SUM, c, &rq) == MPI_ERR_COUNT, "bad count");
    CHECK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, c, &rq) == MPI_ERR_OP, "bad op");
    CHECK(MPI_Ibarrier(c, NULL) != MPI_SUCCESS, "NULL request");
    CHECK(MPI_Iallreduce(&x, &x, 1, MPI_INT, MPI_SUM, c, &rq) == MPI_ERR_BUFFER, "aliased");
    CHECK(rq == MPI_REQUEST_NULL, "a failed call made a request");
    /* the failures took no sequence number: the communicator still works */
    x = 1;
    CHECK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, c, &rq) == MPI_SUCCESS, "after errors");
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(y == wsize, "allreduce after errors: %d", y);
    MPI_Comm_free(&c);
}

/* A nonblocking collective started before a barrier, a broadcast and an
 * allreduce on one rank and after them on the others (mpi4py's emulated
 * MPI_Comm_iagree test does this): MPI asks for one order of all collectives,
 * but Open MPI and MPICH count the two kinds apart, and so does courier
 * (mpi_nbc.c); it hung, both sides in the nonblocking one's wait. */
static void kinds_apart(MPI_Comm comm, const char *name)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    for (int root = 0; root < np; root++) {
        int mine = 1 << me, all = -1, b = me == root ? 77 + root : -1, sum = -1;
        MPI_Request q;
        if (me == root) MPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_BOR, comm, &q);
        MPI_Barrier(comm);
        MPI_Bcast(&b, 1, MPI_INT, root, comm);
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm);
        if (me != root) MPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_BOR, comm, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        CHECK(all == (1 << np) - 1, "%s root %d: iallreduce gave %d", name, root, all);
        CHECK(b == 77 + root, "%s root %d: bcast gave %d", name, root, b);
        CHECK(sum == np * (np - 1) / 2, "%s root %d: allreduce gave %d", name, root, sum);
    }
}

/* The CPUs the job has on this machine, as the engine counts them
 * (src/core/job.c, pmi.c): the launcher's COURIER_CPUS; under srun or mpirun
 * the CPUs the ranks of this machine may use together (each bound to a CPU of
 * its own: as many as they are). here: this machine's ranks. Collective. */
static int job_cpus(MPI_Comm here)
{
    const char *c = getenv("COURIER_CPUS");
    if (c && atoi(c) > 0) return atoi(c);
    cpu_set_t set, all;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) CPU_SET(0, &set);
    MPI_Allreduce(&set, &all, (int)sizeof set, MPI_UNSIGNED_CHAR, MPI_BOR, here);
    return CPU_COUNT(&all);
}

/* The job's ranks on this machine: this host's count in the launcher's
 * COURIER_HOST_LAYOUT ("3,1": ranks 0-2 on the first host) across hosts, all
 * of them under courier run on one machine (pretend hosts share it), else
 * (srun, mpirun) the ranks that share memory with this one. */
static int ranks_here(MPI_Comm here)
{
    const char *l = getenv("COURIER_HOST_LAYOUT");
    int first = 0, n;
    for (char *end; l && *l; l = *end ? end + 1 : end) {
        n = (int)strtol(l, &end, 10);
        if (wrank < first + n) return n;
        first += n;
    }
    if (getenv("COURIER_CPUS")) return wsize;
    MPI_Comm_size(here, &n);
    return n;
}

/* The progress thread that moved the collectives above while the program
 * computed is a batch thread: woken by a collective's start it must not take
 * its program thread's core at once (src/core/progress.c). Without it
 * (COURIER_NBC_THREAD=0, or by default with more ranks on a machine than its CPUs, where it
 * would only take cores from ranks) there is none; COURIER_NBC_THREAD=1 asks
 * for it there too. */
static void progress_is_batch(void)
{
    const char *e = getenv("COURIER_NBC_THREAD");
    MPI_Comm here;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &here);
    int nhere = ranks_here(here), cpus = job_cpus(here);
    MPI_Comm_free(&here);
    bool want = e ? strcmp(e, "0") != 0 : nhere <= cpus;
    int batch = test_threads_with_policy(SCHED_BATCH);
    if (!want)
        CHECK(batch == 0,
              "no progress thread wanted (%d ranks here, %d CPUs, COURIER_NBC_THREAD=%s), "
              "but %d batch threads",
              nhere, cpus, e ? e : "unset", batch);
    else
        CHECK(batch == 1, "%d threads of this rank are SCHED_BATCH, not the progress thread alone",
              batch);
    /* MPI_T reads the same choice */
    int prov, idx, count, val = -1;
    MPI_T_cvar_handle h;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &prov);
    if (MPI_T_cvar_get_index("COURIER_NBC_THREAD", &idx) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS) {
        MPI_T_cvar_read(h, &val);
        CHECK(val == want, "MPI_T reads COURIER_NBC_THREAD as %d, the thread is %s", val,
              want ? "wanted" : "not wanted");
        MPI_T_cvar_handle_free(&h);
    }
    MPI_T_finalize();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (argc > 1 && !strcmp(argv[1], "hang")) {
        int x = 0;
        MPI_Request q;
        if (wrank == 0) MPI_Recv(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Ibarrier(MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Finalize();
        return 0;
    }
    S = malloc(MAXBUF);
    for (int m = 0; m < 3; m++) R[m] = malloc(MAXBUF);
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
    kinds_apart(MPI_COMM_WORLD, "world");
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &half); /* reversed order */
    compare_all(half, "split");
    kinds_apart(half, "split");
    MPI_Comm_free(&half);
    outstanding();
    compute_while_waiting();
    if (wsize > 1) progress_is_batch();
    request_free_and_idup();
    errors();
    MPI_Type_free(&types[T_VEC]);
    MPI_Type_free(&types[T_MAT]);
    MPI_Op_free(&ops[T_MAT]);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf(all ? "nbc: %d FAILURES\n" : "nbc: all passed\n", all);
    MPI_Finalize();
    return all != 0;
}
