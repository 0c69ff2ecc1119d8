/* Blocking collectives: every one, on MPI_COMM_WORLD and on a split
 * communicator, with MPI_IN_PLACE where MPI allows it, every predefined
 * operation on every basic type it applies to, MAXLOC/MINLOC on the pair
 * types, user operations (commutative and not), and derived datatypes. */
#include <complex.h>
#include <stdbool.h>
#include <string.h>

#include "mcheck.h"

static int me, np;

/* Every predefined operation on every type it applies to: rank r contributes
 * (r % 3) + 1 (for logical/bitwise ops: r % 2 and bit r % 7). */
#define OPS_INT(T, DT)                                                                             \
    do {                                                                                           \
        T x = (T)(me % 3 + 1), r;                                                                  \
        long sum = 0, prod = 1, mx = 0, mn = 9;                                                    \
        for (int i = 0; i < np; i++) {                                                             \
            long v = i % 3 + 1;                                                                    \
            sum += v, prod *= v, mx = v > mx ? v : mx, mn = v < mn ? v : mn;                       \
        }                                                                                          \
        OK(MPI_Allreduce(&x, &r, 1, DT, MPI_SUM, MPI_COMM_WORLD));                                 \
        CHECK(r == (T)sum, "SUM " #DT);                                                            \
        OK(MPI_Allreduce(&x, &r, 1, DT, MPI_PROD, MPI_COMM_WORLD));                                \
        CHECK(r == (T)prod, "PROD " #DT);                                                          \
        OK(MPI_Allreduce(&x, &r, 1, DT, MPI_MAX, MPI_COMM_WORLD));                                 \
        CHECK(r == (T)mx, "MAX " #DT);                                                             \
        OK(MPI_Allreduce(&x, &r, 1, DT, MPI_MIN, MPI_COMM_WORLD));                                 \
        CHECK(r == (T)mn, "MIN " #DT);                                                             \
        T b = (T)(me % 2), bits = (T)(1u << (me % 7));                                             \
        OK(MPI_Allreduce(&b, &r, 1, DT, MPI_LAND, MPI_COMM_WORLD));                                \
        CHECK(r == 0, "LAND " #DT);                                                                \
        OK(MPI_Allreduce(&b, &r, 1, DT, MPI_LOR, MPI_COMM_WORLD));                                 \
        CHECK(r == (np > 1), "LOR " #DT);                                                          \
        OK(MPI_Allreduce(&b, &r, 1, DT, MPI_LXOR, MPI_COMM_WORLD));                                \
        CHECK(r == (T)((np / 2) % 2), "LXOR " #DT);                                                \
        unsigned long ob = 0, xb = 0, ab = ~0ul;                                                   \
        for (int i = 0; i < np; i++)                                                               \
            ob |= 1u << (i % 7), xb ^= 1u << (i % 7), ab &= 1u << (i % 7);                         \
        OK(MPI_Allreduce(&bits, &r, 1, DT, MPI_BOR, MPI_COMM_WORLD));                              \
        CHECK(r == (T)ob, "BOR " #DT);                                                             \
        OK(MPI_Allreduce(&bits, &r, 1, DT, MPI_BXOR, MPI_COMM_WORLD));                             \
        CHECK(r == (T)xb, "BXOR " #DT);                                                            \
        OK(MPI_Allreduce(&bits, &r, 1, DT, MPI_BAND, MPI_COMM_WORLD));                             \
        CHECK(r == (T)ab, "BAND " #DT);                                                            \
    } while (0)

#define OPS_FLT(T, DT)                                                                             \
    do {                                                                                           \
        T x = (T)(me % 3 + 1), r;                                                                  \
        double sum = 0, prod = 1, mx = 0, mn = 9;                                                  \
        for (int i = 0; i < np; i++) {                                                             \
            double v = i % 3 + 1;                                                                  \
            sum += v, prod *= v, mx = v > mx ? v : mx, mn = v < mn ? v : mn;                       \
        }                                                                                          \
        OK(MPI_Allreduce(&x, &r, 1, DT, MPI_SUM, MPI_COMM_WORLD));                                 \
        CHECK(r == (T)sum, "SUM " #DT);                                                            \
        OK(MPI_Allreduce(&x, &r, 1, DT, MPI_PROD, MPI_COMM_WORLD));                                \
        CHECK(r == (T)prod, "PROD " #DT);                                                          \
        OK(MPI_Allreduce(&x, &r, 1, DT, MPI_MAX, MPI_COMM_WORLD));                                 \
        CHECK(r == (T)mx, "MAX " #DT);                                                             \
        OK(MPI_Allreduce(&x, &r, 1, DT, MPI_MIN, MPI_COMM_WORLD));                                 \
        CHECK(r == (T)mn, "MIN " #DT);                                                             \
    } while (0)

static void predefined_ops(void)
{
    OPS_INT(char, MPI_CHAR); /* an extension, as in MPICH and Open MPI */
    OPS_INT(signed char, MPI_SIGNED_CHAR);
    OPS_INT(unsigned char, MPI_UNSIGNED_CHAR);
    OPS_INT(short, MPI_SHORT);
    OPS_INT(unsigned short, MPI_UNSIGNED_SHORT);
    OPS_INT(int, MPI_INT);
    OPS_INT(unsigned, MPI_UNSIGNED);
    OPS_INT(long, MPI_LONG);
    OPS_INT(unsigned long, MPI_UNSIGNED_LONG);
    OPS_INT(long long, MPI_LONG_LONG);
    OPS_INT(unsigned long long, MPI_UNSIGNED_LONG_LONG);
    OPS_INT(int8_t, MPI_INT8_T);
    OPS_INT(int16_t, MPI_INT16_T);
    OPS_INT(int32_t, MPI_INT32_T);
    OPS_INT(int64_t, MPI_INT64_T);
    OPS_INT(uint8_t, MPI_UINT8_T);
    OPS_INT(uint16_t, MPI_UINT16_T);
    OPS_INT(uint32_t, MPI_UINT32_T);
    OPS_INT(uint64_t, MPI_UINT64_T);
    OPS_INT(MPI_Aint, MPI_AINT);
    OPS_INT(MPI_Offset, MPI_OFFSET);
    OPS_INT(MPI_Count, MPI_COUNT);
    OPS_FLT(float, MPI_FLOAT);
    OPS_FLT(double, MPI_DOUBLE);
    OPS_FLT(long double, MPI_LONG_DOUBLE);
    /* bytes: bitwise only; bool: logical only; complex: sum and product */
    unsigned char by = (unsigned char)(1u << (me % 7)), rb;
    OK(MPI_Allreduce(&by, &rb, 1, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD));
    CHECK(rb == (np >= 7 ? 0x7f : (1u << np) - 1), "BOR BYTE %x", rb);
    _Bool t = me == 0, rbo;
    OK(MPI_Allreduce(&t, &rbo, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD));
    CHECK(rbo, "LOR bool");
    OK(MPI_Allreduce(&t, &rbo, 1, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD));
    CHECK(!rbo || np == 1, "LAND bool");
    double complex z = me + 1.0 * I, rz;
    OK(MPI_Allreduce(&z, &rz, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(creal(rz) == np * (np - 1) / 2 && cimag(rz) == np, "complex sum");
    float complex fz = 1.0f * I, rfz;
    OK(MPI_Allreduce(&fz, &rfz, 1, MPI_C_FLOAT_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
    float complex want = 1;
    for (int i = 0; i < np; i++) want *= I;
    CHECK(rfz == want, "complex prod");
    /* pair types */
    struct {
        double v;
        int i;
    } dv = {me % 2 ? 5.0 : 1.0, me}, dr;
    OK(MPI_Allreduce(&dv, &dr, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(dr.v == (np > 1 ? 5.0 : 1.0) && dr.i == (np > 1 ? 1 : 0), "MAXLOC %g %d", dr.v, dr.i);
    OK(MPI_Allreduce(&dv, &dr, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(dr.v == 1.0 && dr.i == 0, "MINLOC");
    struct {
        int v, i;
    } iv = {np - me, me}, ir;
    OK(MPI_Allreduce(&iv, &ir, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(ir.v == 1 && ir.i == np - 1, "2INT MINLOC");
    struct {
        float v;
        int i;
    } fv = {1, me}, fr;
    OK(MPI_Allreduce(&fv, &fr, 1, MPI_FLOAT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(fr.i == 0, "FLOAT_INT ties: lowest index");
    struct {
        long v;
        int i;
    } lv = {me, me}, lr;
    OK(MPI_Allreduce(&lv, &lr, 1, MPI_LONG_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(lr.i == np - 1, "LONG_INT");
    struct {
        short v;
        int i;
    } sv = {(short)me, me}, sr;
    OK(MPI_Allreduce(&sv, &sr, 1, MPI_SHORT_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(sr.i == 0, "SHORT_INT");
    struct {
        long double v;
        int i;
    } ldv = {me, me}, ldr;
    OK(MPI_Allreduce(&ldv, &ldr, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(ldr.i == np - 1, "LONG_DOUBLE_INT");
}

/* 2x2 matrix product: associative, not commutative. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

static void user_ops(MPI_Comm comm)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    MPI_Op op;
    MPI_Datatype m4;
    OK(MPI_Op_create(matmul, 0, &op));
    int comm_flag;
    OK(MPI_Op_commutative(op, &comm_flag));
    CHECK(!comm_flag, "not commutative");
    OK(MPI_Type_contiguous(4, MPI_INT, &m4));
    OK(MPI_Type_commit(&m4));
    /* member i holds [[1, i], [0, 1]]; the product is [[1, sum i], [0, 1]] in any order,
     * so also use [[1,1],[1,0]]^... no: use upper-triangular with i on the diagonal */
    int x[2][4] = {{1, r, 0, 1}, {r + 1, 1, 0, 1}}, y[2][4];
    int want[2][4] = {{1, 0, 0, 1}, {1, 0, 0, 1}};
    for (int i = 0; i < n; i++) {
        int a[2][4] = {{1, i, 0, 1}, {i + 1, 1, 0, 1}};
        matmul(want, a, (int[]){2}, &m4);
        memcpy(want, a, sizeof a);
    }
    OK(MPI_Allreduce(x, y, 2, m4, op, comm));
    CHECK(!memcmp(y, want, sizeof y), "non-commutative allreduce in rank order");
    memset(y, 0, sizeof y);
    OK(MPI_Reduce(x, y, 2, m4, op, n - 1, comm));
    if (r == n - 1) CHECK(!memcmp(y, want, sizeof y), "non-commutative reduce to last");
    OK(MPI_Scan(x, y, 2, m4, op, comm));
    int pre[2][4] = {{1, 0, 0, 1}, {1, 0, 0, 1}};
    for (int i = 0; i <= r; i++) {
        int a[2][4] = {{1, i, 0, 1}, {i + 1, 1, 0, 1}};
        matmul(pre, a, (int[]){2}, &m4);
        memcpy(pre, a, sizeof a);
    }
    CHECK(!memcmp(y, pre, sizeof y), "scan rank order");
    /* reduce_scatter in rank order, blocks of i % 3 elements (member 0's
     * empty), element j of member i [[i + 1 + j % 2, 1], [0, 1]]: its own
     * and in place; then blocks of 40 times that, past what the host's
     * collective area takes */
    for (int scale = 1; scale <= 40; scale += 39) {
        int rcounts[64], tot = 0, first = 0;
        for (int i = 0; i < n; i++) {
            if (i < r) first += i % 3 * scale;
            tot += rcounts[i] = i % 3 * scale;
        }
        int(*v)[4] = malloc((size_t)(tot + 1) * sizeof *v),
        (*got)[4] = malloc((size_t)(tot + 1) * sizeof *got);
        for (int k = 0; k < 2; k++) {
            for (int j = 0; j < tot; j++) memcpy(v[j], (int[]){r + 1 + j % 2, 1, 0, 1}, sizeof *v);
            if (k == 0)
                OK(MPI_Reduce_scatter(v, got, rcounts, m4, op, comm));
            else
                OK(MPI_Reduce_scatter(MPI_IN_PLACE, v, rcounts, m4, op, comm));
            for (int j = 0; j < rcounts[r]; j++) {
                int w[4] = {1, 0, 0, 1};
                for (int i = 0; i < n; i++) {
                    int a[4] = {i + 1 + (first + j) % 2, 1, 0, 1};
                    matmul(w, a, (int[]){1}, &m4);
                    memcpy(w, a, sizeof a);
                }
                CHECK(!memcmp(k ? v[j] : got[j], w, sizeof w),
                      "non-commutative reduce_scatter%s: element %d not in rank order",
                      k ? " in place" : "", j);
            }
        }
        free(v);
        free(got);
    }
    OK(MPI_Op_free(&op));
    OK(MPI_Type_free(&m4));
}

static void reductions(MPI_Comm comm)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    enum { C = 1000 };
    static double s[C * 8], d[C * 8];
    for (int i = 0; i < C; i++) s[i] = r + i;
    double tri = n * (n - 1) / 2.0;
    for (int root = 0; root<n; root += n> 2 ? n - 1 : 1) {
        memset(d, 0, sizeof d);
        OK(MPI_Reduce(s, d, C, MPI_DOUBLE, MPI_SUM, root, comm));
        if (r == root)
            for (int i = 0; i < C; i++) CHECK(d[i] == tri + (double)n * i, "reduce %d", i);
        /* in place at the root */
        for (int i = 0; i < C; i++) d[i] = r + i;
        OK(MPI_Reduce(r == root ? MPI_IN_PLACE : d, r == root ? d : NULL, C, MPI_DOUBLE, MPI_SUM,
                      root, comm));
        if (r == root)
            for (int i = 0; i < C; i++) CHECK(d[i] == tri + (double)n * i, "reduce in place");
    }
    OK(MPI_Allreduce(s, d, C, MPI_DOUBLE, MPI_SUM, comm));
    for (int i = 0; i < C; i++) CHECK(d[i] == tri + (double)n * i, "allreduce");
    for (int i = 0; i < C; i++) d[i] = r + i;
    OK(MPI_Allreduce(MPI_IN_PLACE, d, C, MPI_DOUBLE, MPI_MAX, comm));
    for (int i = 0; i < C; i++) CHECK(d[i] == n - 1 + i, "allreduce in place");
    int v = r + 1, sc, ex = -7;
    OK(MPI_Scan(&v, &sc, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sc == (r + 1) * (r + 2) / 2, "scan");
    OK(MPI_Exscan(&v, &ex, 1, MPI_INT, MPI_SUM, comm));
    if (r > 0) CHECK(ex == r * (r + 1) / 2, "exscan %d", ex);
    sc = v;
    OK(MPI_Scan(MPI_IN_PLACE, &sc, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sc == (r + 1) * (r + 2) / 2, "scan in place");
    ex = v;
    OK(MPI_Exscan(MPI_IN_PLACE, &ex, 1, MPI_INT, MPI_SUM, comm));
    if (r > 0) CHECK(ex == r * (r + 1) / 2, "exscan in place");
    /* reduce_scatter: member i gets i+1 elements */
    int counts[64], total = 0;
    for (int i = 0; i < n; i++) total += counts[i] = i + 1;
    int *in = malloc((size_t)total * sizeof *in), out[64];
    for (int i = 0; i < total; i++) in[i] = i * (r + 1);
    OK(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm));
    int off = r * (r + 1) / 2;
    for (int i = 0; i < counts[r]; i++) CHECK(out[i] == (off + i) * n * (n + 1) / 2, "rs %d", i);
    OK(MPI_Reduce_scatter(MPI_IN_PLACE, in, counts, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < counts[r]; i++) CHECK(in[i] == (off + i) * n * (n + 1) / 2, "rs in place");
    free(in);
    int blk[128], bo[2];
    for (int i = 0; i < 2 * n; i++) blk[i] = i;
    OK(MPI_Reduce_scatter_block(blk, bo, 2, MPI_INT, MPI_SUM, comm));
    CHECK(bo[0] == 2 * r * n && bo[1] == (2 * r + 1) * n, "rs block");
}

static void movement(MPI_Comm comm)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    enum { B = 3 };
    int *all = malloc((size_t)n * n * B * sizeof(int)),
        *got = malloc((size_t)n * n * B * sizeof(int));
    int mine[B * 64];
    for (int root = 0; root<n; root += n> 2 ? n - 1 : 1) {
        int b[300];
        for (int i = 0; i < 300; i++) b[i] = r == root ? i * 7 : -1;
        OK(MPI_Bcast(b, 300, MPI_INT, root, comm));
        for (int i = 0; i < 300; i++) CHECK(b[i] == i * 7, "bcast");
        for (int k = 0; k < B; k++) mine[k] = r * 10 + k;
        OK(MPI_Gather(mine, B, MPI_INT, got, B, MPI_INT, root, comm));
        if (r == root)
            for (int i = 0; i < n; i++)
                for (int k = 0; k < B; k++) CHECK(got[i * B + k] == i * 10 + k, "gather");
        if (r == root) { /* in place: own block already in the receive buffer */
            for (int i = 0; i < n * B; i++) got[i] = -1;
            for (int k = 0; k < B; k++) got[r * B + k] = r * 10 + k;
            OK(MPI_Gather(MPI_IN_PLACE, B, MPI_INT, got, B, MPI_INT, root, comm));
            for (int i = 0; i < n * B; i++) CHECK(got[i] == i / B * 10 + i % B, "gather in place");
        } else {
            OK(MPI_Gather(mine, B, MPI_INT, NULL, 0, MPI_INT, root, comm));
        }
        for (int i = 0; i < n * B; i++) all[i] = i;
        int part[B];
        OK(MPI_Scatter(all, B, MPI_INT, part, B, MPI_INT, root, comm));
        for (int k = 0; k < B; k++) CHECK(part[k] == r * B + k, "scatter");
        OK(MPI_Scatter(all, B, MPI_INT, r == root ? MPI_IN_PLACE : part, B, MPI_INT, root, comm));
        if (r != root)
            for (int k = 0; k < B; k++) CHECK(part[k] == r * B + k, "scatter (root in place)");
        /* v forms: member i has i+1 elements */
        int rc[64], dp[64], tot = 0;
        for (int i = 0; i < n; i++) rc[i] = i + 1, dp[i] = tot, tot += i + 2; /* one-element gaps */
        int sv[64];
        for (int k = 0; k <= r; k++) sv[k] = r * 100 + k;
        for (int i = 0; i < tot; i++) got[i] = -1;
        OK(MPI_Gatherv(sv, r + 1, MPI_INT, got, rc, dp, MPI_INT, root, comm));
        if (r == root)
            for (int i = 0; i < n; i++) {
                for (int k = 0; k <= i; k++) CHECK(got[dp[i] + k] == i * 100 + k, "gatherv");
                CHECK(got[dp[i] + i + 1] == -1, "gatherv leaves gaps");
            }
        for (int i = 0; i < n; i++)
            for (int k = 0; k <= i; k++) all[dp[i] + k] = i * 100 + k;
        OK(MPI_Scatterv(all, rc, dp, MPI_INT, sv, r + 1, MPI_INT, root, comm));
        for (int k = 0; k <= r; k++) CHECK(sv[k] == r * 100 + k, "scatterv");
    }
    for (int k = 0; k < B; k++) mine[k] = r * 10 + k;
    OK(MPI_Allgather(mine, B, MPI_INT, got, B, MPI_INT, comm));
    for (int i = 0; i < n * B; i++) CHECK(got[i] == i / B * 10 + i % B, "allgather");
    for (int i = 0; i < n * B; i++) got[i] = i / B == r ? r * 10 + i % B : -1;
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, B, MPI_INT, comm));
    for (int i = 0; i < n * B; i++) CHECK(got[i] == i / B * 10 + i % B, "allgather in place");
    int rc[64], dp[64], tot = 0, sv[64];
    for (int i = 0; i < n; i++) rc[i] = i + 1, dp[i] = tot, tot += i + 1;
    for (int k = 0; k <= r; k++) sv[k] = r * 100 + k;
    OK(MPI_Allgatherv(sv, r + 1, MPI_INT, got, rc, dp, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        for (int k = 0; k <= i; k++) CHECK(got[dp[i] + k] == i * 100 + k, "allgatherv");
    OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_INT, got, rc, dp, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        for (int k = 0; k <= i; k++) CHECK(got[dp[i] + k] == i * 100 + k, "allgatherv in place");
    /* alltoall: block i of member r is r*1000 + i */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < B; k++) all[i * B + k] = r * 1000 + i * 10 + k;
    OK(MPI_Alltoall(all, B, MPI_INT, got, B, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < B; k++) CHECK(got[i * B + k] == i * 1000 + r * 10 + k, "alltoall");
    OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, all, B, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < B; k++)
            CHECK(all[i * B + k] == i * 1000 + r * 10 + k, "alltoall in place");
    /* alltoallv: member r sends j+1 elements to member j */
    int sc[64], sd[64], rcn[64], rd[64], st = 0, rt = 0;
    for (int j = 0; j < n; j++) {
        sc[j] = j + 1, sd[j] = st, st += j + 1;
        rcn[j] = r + 1, rd[j] = rt, rt += r + 1;
        for (int k = 0; k <= j; k++) all[sd[j] + k] = r * 1000 + j * 10 + k;
    }
    OK(MPI_Alltoallv(all, sc, sd, MPI_INT, got, rcn, rd, MPI_INT, comm));
    for (int j = 0; j < n; j++)
        for (int k = 0; k <= r; k++) CHECK(got[rd[j] + k] == j * 1000 + r * 10 + k, "alltoallv");
    OK(MPI_Barrier(comm));
    free(all);
    free(got);
}

static void derived(void)
{
    /* bcast and gather of a vector type: the gaps stay untouched */
    MPI_Datatype v;
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    int b[5] = {-1, -1, -1, -1, -1};
    if (me == 0) b[0] = 10, b[2] = 20, b[4] = 30;
    OK(MPI_Bcast(b, 1, v, 0, MPI_COMM_WORLD));
    CHECK(b[0] == 10 && b[2] == 20 && b[4] == 30, "bcast vector");
    CHECK(me == 0 || (b[1] == -1 && b[3] == -1), "vector gaps untouched");
    int s[5] = {me, -9, me, -9, me}, r[5];
    OK(MPI_Allreduce(s, r, 1, v, MPI_SUM, MPI_COMM_WORLD));
    CHECK(r[0] == np * (np - 1) / 2 && r[4] == r[0], "allreduce on a vector type");
    int *g = malloc((size_t)np * 3 * sizeof *g);
    OK(MPI_Allgather(s, 1, v, g, 3, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < np * 3; i++) CHECK(g[i] == i / 3, "allgather from a vector");
    free(g);
    OK(MPI_Type_free(&v));
    double loc[4] = {me, me, me, me}, res[4];
    OK(MPI_Reduce_local(loc, res, 0, MPI_DOUBLE, MPI_SUM));
    res[0] = 1;
    OK(MPI_Reduce_local(loc, res, 1, MPI_DOUBLE, MPI_SUM));
    CHECK(res[0] == 1 + me, "reduce_local");
    /* in place on the elements (a contiguous type) and through a packed copy
     * (a vector type, whose gaps stay as they were) */
    enum { L = 1000 };
    int li[L], lo[L];
    for (int i = 0; i < L; i++) li[i] = 2 * i, lo[i] = i - me;
    MPI_Datatype c4, v2;
    OK(MPI_Type_contiguous(4, MPI_INT, &c4));
    OK(MPI_Type_commit(&c4));
    OK(MPI_Reduce_local(li, lo, L / 4, c4, MPI_SUM));
    for (int i = 0; i < L; i++) CHECK(lo[i] == 3 * i - me, "reduce_local sum [%d]: %d", i, lo[i]);
    OK(MPI_Reduce_local(li, lo, L, MPI_INT, MPI_MAX));
    for (int i = 0; i < L; i++)
        CHECK(lo[i] == (3 * i - me > 2 * i ? 3 * i - me : 2 * i), "reduce_local max [%d]", i);
    OK(MPI_Type_vector(L / 2, 1, 2, MPI_INT, &v2));
    OK(MPI_Type_commit(&v2));
    for (int i = 0; i < L; i++) lo[i] = -1;
    OK(MPI_Reduce_local(li, lo, 1, v2, MPI_PROD));
    for (int i = 0; i < L; i++)
        CHECK(lo[i] == (i % 2 ? -1 : -2 * i), "reduce_local on a vector [%d]: %d", i, lo[i]);
    OK(MPI_Type_free(&c4));
    OK(MPI_Type_free(&v2));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    predefined_ops();
    reductions(MPI_COMM_WORLD);
    movement(MPI_COMM_WORLD);
    user_ops(MPI_COMM_WORLD);
    derived();
    MPI_Comm half;
    OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, np - me, &half));
    reductions(half);
    movement(half);
    user_ops(half);
    OK(MPI_Comm_free(&half));
    OK(MPI_Finalize());
    if (me == 0) printf("mpi coll: ok on %d ranks\n", np);
    return 0;
}
