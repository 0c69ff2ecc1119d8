/* Blocking collectives on an intercommunicator (MPI-3.1 §5.2.2): the world
 * (2..8 ranks) is split into a low group of (size-1)/2 ranks and a high group
 * of the rest (unequal sizes), joined by MPI_Intercomm_create. Every
 * collective runs in both directions, with every root (MPI_ROOT at the root,
 * MPI_PROC_NULL at the others of its group, the root's rank in the other
 * group), with values that say who sent them; contiguous and strided
 * datatypes; Scan/Exscan must fail with MPI_ERR_COMM.
 *
 *   coll_inter              the blocking collectives
 *   coll_inter nonblocking  the same checks through the nonblocking forms
 *                           (each MPI_Ixxx then MPI_Wait), then several of
 *                           them outstanding at once with MPI_Comm_idup of
 *                           the intercommunicator, completed by MPI_Waitall,
 *                           and blocking collectives on it while a
 *                           nonblocking and a persistent one are
 *                           outstanding there (neither may take the
 *                           other's messages) */
#include <stdbool.h>
#include <string.h>

#include "mcheck.h"

static int wrank, wsize, k; /* k: size of the low group */
static int color, lrank, lsize, rsize;
static MPI_Comm ic, local;
static MPI_Datatype strided; /* an int every 8 bytes */

/* Every collective on ic goes through COLL: the blocking call, or with
 * "nonblocking" its I-form and MPI_Wait (a failing I-form makes no request). */
static bool nb;
static MPI_Request q_;
static int wait_(int rc)
{
    return rc == MPI_SUCCESS ? MPI_Wait(&q_, MPI_STATUS_IGNORE) : rc;
}
#define COLL(blocking, nonblocking, ...)                                                           \
    (nb ? wait_(nonblocking(__VA_ARGS__, &q_)) : blocking(__VA_ARGS__))

/* World rank of local / remote rank i. */
static int lw(int i)
{
    return color ? k + i : i;
}
static int rw(int i)
{
    return color ? i : k + i;
}
static int val(int w, int i)
{
    return 1000 * w + i;
}

/* "first": associative, not commutative: the lowest rank's value wins. */
static void first_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}

static void barrier_test(void)
{
    for (int i = 0; i < 3; i++) OK(COLL(MPI_Barrier, MPI_Ibarrier, ic));
}

static void bcast_test(void)
{
    for (int g = 0; g < 2; g++) {
        int gs = g ? wsize - k : k;
        for (int root = 0; root < gs; root++) {
            int n = 5 + root, buf[16], sent = g * 100 + root;
            for (int i = 0; i < 16; i++) buf[i] = -1;
            if (color == g) {
                if (lrank == root) {
                    for (int i = 0; i < n; i++) buf[i] = val(sent, i);
                    OK(COLL(MPI_Bcast, MPI_Ibcast, buf, n, MPI_INT, MPI_ROOT, ic));
                } else {
                    OK(COLL(MPI_Bcast, MPI_Ibcast, buf, n, MPI_INT, MPI_PROC_NULL, ic));
                    for (int i = 0; i < 16; i++) CHECK(buf[i] == -1, "bcast: PROC_NULL buffer");
                }
            } else {
                OK(COLL(MPI_Bcast, MPI_Ibcast, buf, n, MPI_INT, root, ic));
                for (int i = 0; i < n; i++)
                    CHECK(buf[i] == val(sent, i), "bcast g%d root %d: [%d] = %d", g, root, i,
                          buf[i]);
                CHECK(buf[n] == -1, "bcast: past the end");
            }
        }
    }
    /* A long one with a strided type at the receivers. */
    int n = 20000;
    int *b = malloc((size_t)n * 2 * sizeof(int));
    for (int g = 0; g < 2; g++) {
        if (color == g) {
            for (int i = 0; i < n; i++) b[i] = val(g, i);
            OK(COLL(MPI_Bcast, MPI_Ibcast, b, n, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL,
                    ic));
        } else {
            for (int i = 0; i < 2 * n; i++) b[i] = -1;
            OK(COLL(MPI_Bcast, MPI_Ibcast, b, n, strided, 0, ic));
            for (int i = 0; i < n; i++)
                CHECK(b[2 * i] == val(g, i) && b[2 * i + 1] == -1, "long bcast [%d]", i);
        }
    }
    free(b);
}

static void reduce_test(MPI_Op first)
{
    for (int g = 0; g < 2; g++) {
        int gs = g ? wsize - k : k;
        for (int root = 0; root < gs; root++) {
            int sb[4], rb[4] = {-1, -1, -1, -1}, rb2[4] = {-1, -1, -1, -1};
            for (int i = 0; i < 4; i++) sb[i] = val(wrank, i);
            int r = color == g ? (lrank == root ? MPI_ROOT : MPI_PROC_NULL) : root;
            OK(COLL(MPI_Reduce, MPI_Ireduce, sb, rb, 4, MPI_INT, MPI_SUM, r, ic));
            OK(COLL(MPI_Reduce, MPI_Ireduce, sb, rb2, 4, MPI_INT, first, r, ic));
            if (r == MPI_ROOT) {
                for (int i = 0; i < 4; i++) {
                    int want = 0;
                    for (int j = 0; j < rsize; j++) want += val(rw(j), i);
                    CHECK(rb[i] == want, "reduce g%d root %d: [%d] = %d, want %d", g, root, i,
                          rb[i], want);
                    CHECK(rb2[i] == val(rw(0), i), "reduce(first) [%d] = %d", i, rb2[i]);
                }
            } else {
                CHECK(rb[0] == -1 && rb2[0] == -1, "reduce: non-root buffer changed");
            }
        }
    }
}

static void allreduce_test(MPI_Op first)
{
    int n = 1000, *sb = malloc((size_t)n * sizeof(int)), *rb = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) sb[i] = val(wrank, i);
    OK(COLL(MPI_Allreduce, MPI_Iallreduce, sb, rb, n, MPI_INT, MPI_SUM, ic));
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int j = 0; j < rsize; j++) want += val(rw(j), i);
        CHECK(rb[i] == want, "allreduce [%d] = %d, want %d", i, rb[i], want);
    }
    OK(COLL(MPI_Allreduce, MPI_Iallreduce, sb, rb, 3, MPI_INT, first, ic));
    for (int i = 0; i < 3; i++) CHECK(rb[i] == val(rw(0), i), "allreduce(first) %d", rb[i]);
    double d = wrank + 0.5, dr = 0;
    OK(COLL(MPI_Allreduce, MPI_Iallreduce, &d, &dr, 1, MPI_DOUBLE, MPI_MAX, ic));
    CHECK(dr == rw(rsize - 1) + 0.5, "allreduce max %g", dr);
    free(sb);
    free(rb);
}

static void gather_scatter_test(void)
{
    for (int g = 0; g < 2; g++) {
        int gs = g ? wsize - k : k;
        for (int root = 0; root < gs; root++) {
            int r = color == g ? (lrank == root ? MPI_ROOT : MPI_PROC_NULL) : root;
            int sb[8], rb[64], rc[16], dis[16];
            for (int i = 0; i < 64; i++) rb[i] = -1;
            for (int i = 0; i < 8; i++) sb[i] = val(wrank, i);
            /* gather: 3 ints from each remote member */
            OK(COLL(MPI_Gather, MPI_Igather, sb, 3, MPI_INT, rb, 3, MPI_INT, r, ic));
            if (r == MPI_ROOT)
                for (int j = 0; j < rsize; j++)
                    for (int i = 0; i < 3; i++)
                        CHECK(rb[3 * j + i] == val(rw(j), i), "gather g%d root %d [%d][%d]=%d", g,
                              root, j, i, rb[3 * j + i]);
            /* gatherv: j+1 ints from remote j, at displacement 4*j (reverse) */
            for (int i = 0; i < 64; i++) rb[i] = -1;
            for (int j = 0; j < rsize; j++) rc[j] = j + 1, dis[j] = 8 * (rsize - 1 - j);
            OK(COLL(MPI_Gatherv, MPI_Igatherv, sb, lrank + 1, MPI_INT, rb, rc, dis, MPI_INT, r,
                    ic));
            if (r == MPI_ROOT)
                for (int j = 0; j < rsize; j++)
                    for (int i = 0; i < 8; i++)
                        CHECK(rb[dis[j] + i] == (i <= j ? val(rw(j), i) : -1),
                              "gatherv [%d][%d] = %d", j, i, rb[dis[j] + i]);
            /* scatter: 2 ints to each remote member */
            int sc[64], got[4] = {-1, -1, -1, -1};
            for (int j = 0; j < 32; j++) sc[2 * j] = val(wrank, 2 * j), sc[2 * j + 1] = j;
            OK(COLL(MPI_Scatter, MPI_Iscatter, sc, 2, MPI_INT, got, 2, MPI_INT, r, ic));
            if (color != g)
                CHECK(got[0] == val(rw(root), 2 * lrank) && got[1] == lrank && got[2] == -1,
                      "scatter g%d root %d: %d %d", g, root, got[0], got[1]);
            else
                CHECK(got[0] == -1, "scatter: root group buffer changed");
            /* scatterv: j+1 ints to remote j from displacement 3*j, strided at receivers */
            for (int j = 0; j < rsize; j++) rc[j] = j + 1, dis[j] = 3 * j;
            for (int i = 0; i < 64; i++) sc[i] = val(wrank, i);
            int gv[16];
            for (int i = 0; i < 16; i++) gv[i] = -1;
            OK(COLL(MPI_Scatterv, MPI_Iscatterv, sc, rc, dis, MPI_INT, gv, lrank + 1, strided, r,
                    ic));
            if (color != g)
                for (int i = 0; i <= lrank; i++)
                    CHECK(gv[2 * i] == val(rw(root), 3 * lrank + i) && gv[2 * i + 1] == -1,
                          "scatterv [%d] = %d", i, gv[2 * i]);
        }
    }
}

static void allgather_test(void)
{
    int sb[8], rb[64], rc[16], dis[16];
    for (int i = 0; i < 8; i++) sb[i] = val(wrank, i);
    for (int i = 0; i < 64; i++) rb[i] = -1;
    OK(COLL(MPI_Allgather, MPI_Iallgather, sb, 2, MPI_INT, rb, 2, MPI_INT, ic));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++)
            CHECK(rb[2 * j + i] == val(rw(j), i), "allgather [%d][%d] = %d", j, i, rb[2 * j + i]);
    CHECK(rb[2 * rsize] == -1, "allgather: past the end");
    /* allgatherv: (remote lrank)+1 ints each, reverse order with gaps */
    for (int i = 0; i < 64; i++) rb[i] = -1;
    for (int j = 0; j < rsize; j++) rc[j] = j + 1, dis[j] = 5 * (rsize - 1 - j) + 1;
    OK(COLL(MPI_Allgatherv, MPI_Iallgatherv, sb, lrank + 1, MPI_INT, rb, rc, dis, MPI_INT, ic));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i <= j; i++)
            CHECK(rb[dis[j] + i] == val(rw(j), i), "allgatherv [%d][%d] = %d", j, i,
                  rb[dis[j] + i]);
    CHECK(rb[0] == -1, "allgatherv: gap changed");
    /* strided receive type */
    for (int i = 0; i < 64; i++) rb[i] = -1;
    OK(COLL(MPI_Allgather, MPI_Iallgather, sb, 1, MPI_INT, rb, 1, strided, ic));
    for (int j = 0; j < rsize; j++)
        CHECK(rb[2 * j] == val(rw(j), 0) && rb[2 * j + 1] == -1, "allgather strided %d", j);
}

static void alltoall_test(void)
{
    int sb[64], rb[64], sc[16], sd[16], rc[16], rd[16];
    /* alltoall: 2 ints to each remote member: (me, j) */
    for (int j = 0; j < rsize; j++) sb[2 * j] = val(wrank, j), sb[2 * j + 1] = rw(j);
    for (int i = 0; i < 64; i++) rb[i] = -1;
    OK(COLL(MPI_Alltoall, MPI_Ialltoall, sb, 2, MPI_INT, rb, 2, MPI_INT, ic));
    for (int j = 0; j < rsize; j++)
        CHECK(rb[2 * j] == val(rw(j), lrank) && rb[2 * j + 1] == wrank, "alltoall from %d: %d %d",
              j, rb[2 * j], rb[2 * j + 1]);
    /* alltoallv: to remote j, (wrank + rw(j)) % 3 ints */
    int at = 0;
    for (int j = 0; j < rsize; j++) {
        sc[j] = (wrank + rw(j)) % 3;
        sd[j] = at;
        for (int i = 0; i < sc[j]; i++) sb[at + i] = val(wrank, 10 * rw(j) + i);
        at += sc[j];
    }
    at = 0;
    for (int j = rsize - 1; j >= 0; j--) {
        rc[j] = (wrank + rw(j)) % 3;
        rd[j] = at + 1;
        at += rc[j] + 1;
    }
    for (int i = 0; i < 64; i++) rb[i] = -1;
    OK(COLL(MPI_Alltoallv, MPI_Ialltoallv, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < rc[j]; i++)
            CHECK(rb[rd[j] + i] == val(rw(j), 10 * wrank + i), "alltoallv from %d [%d] = %d", j, i,
                  rb[rd[j] + i]);
    /* alltoallw: byte displacements, strided receive type for odd remote ranks */
    MPI_Datatype st[16], rt[16];
    for (int j = 0; j < rsize; j++) {
        st[j] = MPI_INT;
        sd[j] *= 4;
        rt[j] = j % 2 ? strided : MPI_INT;
    }
    at = 0;
    for (int j = 0; j < rsize; j++) {
        rd[j] = at * 4;
        at += (j % 2 ? 2 : 1) * rc[j];
    }
    for (int i = 0; i < 64; i++) rb[i] = -1;
    OK(COLL(MPI_Alltoallw, MPI_Ialltoallw, sb, sc, sd, st, rb, rc, rd, rt, ic));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < rc[j]; i++) {
            int v = rb[rd[j] / 4 + (j % 2 ? 2 * i : i)];
            CHECK(v == val(rw(j), 10 * wrank + i), "alltoallw from %d [%d] = %d", j, i, v);
        }
}

static void reduce_scatter_test(void)
{
    /* Each group's vector has T elements; this group's counts split the
     * other group's sum among its members. */
    int T = 13, counts[16], off = 0, mine = 0;
    for (int i = 0; i < lsize; i++) {
        counts[i] = T / lsize + (i < T % lsize);
        if (i < lrank) off += counts[i];
    }
    mine = counts[lrank];
    int sb[16], rb[16];
    for (int i = 0; i < T; i++) sb[i] = val(wrank, i);
    for (int i = 0; i < 16; i++) rb[i] = -1;
    OK(COLL(MPI_Reduce_scatter, MPI_Ireduce_scatter, sb, rb, counts, MPI_INT, MPI_SUM, ic));
    for (int i = 0; i < mine; i++) {
        int want = 0;
        for (int j = 0; j < rsize; j++) want += val(rw(j), off + i);
        CHECK(rb[i] == want, "reduce_scatter [%d] = %d, want %d", i, rb[i], want);
    }
    CHECK(rb[mine] == -1, "reduce_scatter: past the end");
    /* block: the low group (k members) gets rsize each, the high group k each */
    int rc = rsize;
    for (int i = 0; i < lsize * rc; i++) sb[i] = val(wrank, i);
    for (int i = 0; i < 16; i++) rb[i] = -1;
    OK(COLL(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, sb, rb, rc, MPI_INT, MPI_SUM, ic));
    for (int i = 0; i < rc; i++) {
        int want = 0;
        for (int j = 0; j < rsize; j++) want += val(rw(j), lrank * rc + i);
        CHECK(rb[i] == want, "reduce_scatter_block [%d] = %d, want %d", i, rb[i], want);
    }
    CHECK(rb[rc] == -1, "reduce_scatter_block: past the end");
}

/* Long messages (past any eager limit): all-gather, all-to-all, allreduce,
 * gather to each root of the low group. */
static void large_test(void)
{
    int n = 60000, *sb = malloc((size_t)n * (size_t)rsize * sizeof(int));
    int *rb = malloc((size_t)n * (size_t)rsize * sizeof(int));
    for (int i = 0; i < n; i++) sb[i] = val(wrank, i);
    OK(COLL(MPI_Allgather, MPI_Iallgather, sb, n, MPI_INT, rb, n, MPI_INT, ic));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < n; i += 997)
            CHECK(rb[j * n + i] == val(rw(j), i), "large allgather [%d][%d]", j, i);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < n; i++) sb[j * n + i] = val(wrank, i) + rw(j);
    OK(COLL(MPI_Alltoall, MPI_Ialltoall, sb, n, MPI_INT, rb, n, MPI_INT, ic));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < n; i += 991)
            CHECK(rb[j * n + i] == val(rw(j), i) + wrank, "large alltoall [%d][%d]", j, i);
    OK(COLL(MPI_Allreduce, MPI_Iallreduce, sb, rb, n, MPI_INT, MPI_MAX, ic));
    for (int i = 0; i < n; i += 983) {
        int want = val(rw(rsize - 1), i) + lw(0); /* their block 0 went to my rank 0 */
        CHECK(rb[i] == want, "large allreduce [%d] = %d, want %d", i, rb[i], want);
    }
    for (int root = 0; root < k; root++) {
        int r = color ? root : lrank == root ? MPI_ROOT : MPI_PROC_NULL;
        OK(COLL(MPI_Gather, MPI_Igather, sb, n, MPI_INT, rb, n, MPI_INT, r, ic));
        if (r == MPI_ROOT)
            for (int j = 0; j < rsize; j++)
                CHECK(rb[j * n + 5] == val(rw(j), 5) + lw(0), "large gather from %d", j);
    }
    free(sb);
    free(rb);
}

static void errors_test(void)
{
    int cls, x = 1, y = 0, rc;
    OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    rc = COLL(MPI_Scan, MPI_Iscan, &x, &y, 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "scan on an intercommunicator: class %d", cls);
    rc = COLL(MPI_Exscan, MPI_Iexscan, &x, &y, 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "exscan on an intercommunicator: class %d", cls);
    rc = COLL(MPI_Bcast, MPI_Ibcast, &x, 1, MPI_INT, rsize, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "bcast root out of the remote group: class %d", cls);
    rc = COLL(MPI_Reduce, MPI_Ireduce, &x, &y, 1, MPI_INT, MPI_SUM, -7, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "reduce root -7: class %d", cls);
    rc = COLL(MPI_Allreduce, MPI_Iallreduce, MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "allreduce MPI_IN_PLACE: class %d", cls);
    rc = COLL(MPI_Allgather, MPI_Iallgather, MPI_IN_PLACE, 1, MPI_INT, &y, 1, MPI_INT, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "allgather MPI_IN_PLACE: class %d", cls);
    OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL));
    OK(COLL(MPI_Barrier, MPI_Ibarrier, ic)); /* the failed calls sent nothing */
}

/* Nonblocking only: several collectives outstanding at once on ic with an
 * MPI_Comm_idup of it, completed together; the duplicate is an
 * intercommunicator of the same groups that carries traffic. */
static void overlap_test(void)
{
    MPI_Request q[5];
    int sb[2] = {wrank, 2 * wrank}, rb[2] = {-1, -1}, bc = !color && lrank == 0 ? 77 : -1, ag[8];
    int root = color ? 0 : lrank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    MPI_Comm dup = MPI_COMM_NULL;
    OK(MPI_Iallreduce(sb, rb, 2, MPI_INT, MPI_SUM, ic, &q[0]));
    OK(MPI_Ibarrier(ic, &q[1]));
    OK(MPI_Ibcast(&bc, 1, MPI_INT, root, ic, &q[2]));
    OK(MPI_Comm_idup(ic, &dup, &q[3]));
    OK(MPI_Iallgather(&wrank, 1, MPI_INT, ag, 1, MPI_INT, ic, &q[4]));
    OK(MPI_Waitall(5, q, MPI_STATUSES_IGNORE));
    int want = 0;
    for (int i = 0; i < rsize; i++) want += rw(i);
    CHECK(rb[0] == want && rb[1] == 2 * want, "iallreduce: %d %d, want %d", rb[0], rb[1], want);
    CHECK(color ? bc == 77 : bc == (lrank == 0 ? 77 : -1), "ibcast: %d", bc);
    for (int i = 0; i < rsize; i++) CHECK(ag[i] == rw(i), "iallgather[%d] = %d", i, ag[i]);
    int flag = 0, rs = 0, ls = 0, cmp = -1;
    OK(MPI_Comm_test_inter(dup, &flag));
    OK(MPI_Comm_remote_size(dup, &rs));
    OK(MPI_Comm_size(dup, &ls));
    CHECK(flag && rs == rsize && ls == lsize, "idup: inter %d, %d local, %d remote", flag, ls, rs);
    OK(MPI_Comm_compare(ic, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "idup compares %d", cmp);
    int one = 1, tot = 0;
    OK(MPI_Allreduce(&one, &tot, 1, MPI_INT, MPI_SUM, dup));
    CHECK(tot == rsize, "allreduce on the duplicate: %d", tot);
    OK(MPI_Comm_free(&dup));
}

/* Nonblocking only: blocking collectives on ic while an MPI_Ibcast and a
 * persistent MPI_Allreduce_init are outstanding on it, with messages of the
 * same size between the same members (the blocking broadcast goes the way
 * the nonblocking one does): each must get its own data. */
static void mixed_test(void)
{
    int root = color ? 0 : lrank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    int x = wrank + 1, x10 = 10 * x, psum = -1, want = 0;
    for (int i = 0; i < rsize; i++) want += rw(i) + 1;
    MPI_Request q[2];
    OK(MPI_Allreduce_init(&x, &psum, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &q[1]));
    for (int rep = 0; rep < 3; rep++) {
        int nbv = root == MPI_ROOT ? 500 + rep : -1, bv = root == MPI_ROOT ? 600 + rep : -1;
        int bsum = -1, ag[8];
        psum = -1;
        OK(MPI_Ibcast(&nbv, 1, MPI_INT, root, ic, &q[0]));
        OK(MPI_Start(&q[1]));
        OK(MPI_Bcast(&bv, 1, MPI_INT, root, ic));
        OK(MPI_Allreduce(&x10, &bsum, 1, MPI_INT, MPI_SUM, ic));
        OK(MPI_Allgather(&wrank, 1, MPI_INT, ag, 1, MPI_INT, ic));
        OK(MPI_Barrier(ic));
        CHECK(bsum == 10 * want, "mixed: blocking allreduce %d, want %d", bsum, 10 * want);
        for (int i = 0; i < rsize; i++)
            CHECK(ag[i] == rw(i), "mixed: allgather[%d] = %d", i, ag[i]);
        if (color) CHECK(bv == 600 + rep, "mixed: blocking bcast %d, want %d", bv, 600 + rep);
        OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        if (color) CHECK(nbv == 500 + rep, "mixed: ibcast %d, want %d", nbv, 500 + rep);
        CHECK(psum == want, "mixed: persistent allreduce %d, want %d", psum, want);
    }
    OK(MPI_Request_free(&q[1]));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    nb = argc > 1 && !strcmp(argv[1], "nonblocking");
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize >= 2 && wsize <= 8, "needs 2..8 ranks");
    k = (wsize - 1) / 2 > 0 ? (wsize - 1) / 2 : 1; /* 4 ranks: 1 + 3, 5 ranks: 2 + 3 */
    color = wrank >= k;
    OK(MPI_Type_create_resized(MPI_INT, 0, 8, &strided));
    OK(MPI_Type_commit(&strided));
    OK(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : k, 7, &ic));
    int flag = 0;
    OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "not an intercommunicator");
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    OK(MPI_Comm_remote_size(ic, &rsize));
    CHECK(lsize == (color ? wsize - k : k) && rsize == wsize - lsize && lw(lrank) == wrank,
          "intercommunicator shape: %d local, %d remote", lsize, rsize);
    MPI_Op first;
    OK(MPI_Op_create(first_fn, 0, &first));
    for (int rep = 0; rep < 2; rep++) {
        barrier_test();
        bcast_test();
        reduce_test(first);
        OK(MPI_Barrier(local)); /* collectives of the local group in between */
        allreduce_test(first);
        gather_scatter_test();
        allgather_test();
        int x = wrank, s = 0;
        OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, local));
        alltoall_test();
        reduce_scatter_test();
        large_test();
    }
    errors_test();
    if (nb) overlap_test();
    if (nb) mixed_test();
    OK(MPI_Op_free(&first));
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&local));
    OK(MPI_Type_free(&strided));
    OK(MPI_Finalize());
    if (wrank == 0) printf("coll_inter%s: %d ranks OK\n", nb ? " (nonblocking)" : "", wsize);
    return 0;
}
