/* Datatypes whose type map is huge but regular (src/api/mpi_type.c keeps such
 * maps as a few repeated runs): a vector of INT_MAX/2 blocks and a resized
 * copy, queried as MPICH's large_count does (size, extents, true extents,
 * elements and count through MPI_Status_set_elements(_x), envelope and
 * contents), in a time that must not grow with the count; a vector of 10
 * million one-int blocks sent between the first and the last rank over an
 * 80 MB buffer, both ways against contiguous ints; nested vectors (two and
 * three levels), a contiguous array of a struct and a partial receive, each
 * checked against a hand-packed reference (MPI_Pack, MPI_Pack_external, a
 * transfer); a reduction over a strided type; and a map too irregular to keep
 * refused with MPI_ERR_INTERN. 1 or more ranks (1: to itself). */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "mcheck.h"

static int me, np;

/* Send 'scount' of st from sbuf on rank 0 to rank np-1, into 'rcount' of rt at
 * rbuf there (rank 0 to itself with one rank); the status on the receiver. */
static void transfer(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                     MPI_Datatype rt, MPI_Status *status)
{
    int last = np - 1;
    if (np == 1)
        OK(MPI_Sendrecv(sbuf, scount, st, 0, 7, rbuf, rcount, rt, 0, 7, MPI_COMM_WORLD, status));
    else if (me == 0)
        OK(MPI_Send(sbuf, scount, st, last, 7, MPI_COMM_WORLD));
    else if (me == last)
        OK(MPI_Recv(rbuf, rcount, rt, 0, 7, MPI_COMM_WORLD, status));
}

static int receiver(void)
{
    return me == np - 1;
}

/* ---- a vector of INT_MAX/2 blocks, queried -------------------------------- */

static void check_elements(MPI_Datatype t, MPI_Count expect)
{
    MPI_Status st;
    MPI_Count ex;
    int e, c;
    OK(MPI_Status_set_elements_x(&st, t, expect));
    OK(MPI_Get_elements_x(&st, t, &ex));
    OK(MPI_Get_elements(&st, t, &e));
    OK(MPI_Get_count(&st, t, &c));
    CHECK(ex == expect, "elements_x %lld, want %lld", (long long)ex, (long long)expect);
    CHECK(e == (expect > INT_MAX ? MPI_UNDEFINED : (int)expect), "elements %d", e);
    CHECK(c == 1, "count %d, want 1", c);
    /* one element less: a part of the instance */
    OK(MPI_Status_set_elements_x(&st, t, expect - 1));
    OK(MPI_Get_elements_x(&st, t, &ex));
    OK(MPI_Get_count(&st, t, &c));
    CHECK(ex == expect - 1, "elements_x %lld, want %lld", (long long)ex, (long long)expect - 1);
    CHECK(c == MPI_UNDEFINED, "count %d of a partial instance", c);
}

static void test_query(void)
{
    double t0 = MPI_Wtime();
    MPI_Datatype four, big, rsz, dup;
    OK(MPI_Type_contiguous(4, MPI_INT, &four));
    OK(MPI_Type_commit(&four));
    OK(MPI_Type_vector(INT_MAX / 2, 1, 3, four, &big));
    OK(MPI_Type_commit(&big));
    OK(MPI_Type_create_resized(big, INT_MAX, -1024, &rsz));
    OK(MPI_Type_commit(&rsz));
    OK(MPI_Type_dup(big, &dup));
    MPI_Count blocks = INT_MAX / 2, size = blocks * 16, ext = 48 * (blocks - 1) + 16;
    MPI_Count sx, lbx, exx;
    int s;
    MPI_Aint lb, ex;
    MPI_Datatype all[] = {big, rsz, dup};
    for (int i = 0; i < 3; i++) {
        MPI_Datatype t = all[i];
        OK(MPI_Type_size(t, &s));
        CHECK(s == MPI_UNDEFINED, "size %d of a type over INT_MAX bytes", s);
        OK(MPI_Type_size_x(t, &sx));
        CHECK(sx == size, "size_x %lld, want %lld", (long long)sx, (long long)size);
        OK(MPI_Type_get_true_extent_x(t, &lbx, &exx));
        CHECK(lbx == 0 && exx == ext, "true extent_x %lld/%lld", (long long)lbx, (long long)exx);
        OK(MPI_Type_get_true_extent(t, &lb, &ex));
        CHECK(lb == 0 && ex == ext, "true extent %ld/%ld", (long)lb, (long)ex);
        OK(MPI_Type_get_extent_x(t, &lbx, &exx));
        if (t == rsz)
            CHECK(lbx == INT_MAX && exx == -1024, "resized extent_x %lld/%lld", (long long)lbx,
                  (long long)exx);
        else
            CHECK(lbx == 0 && exx == ext, "extent_x %lld/%lld", (long long)lbx, (long long)exx);
        check_elements(t, 4 * blocks);
    }
    int ni, na, nd, comb, ints[3];
    MPI_Aint aint;
    MPI_Datatype old;
    OK(MPI_Type_get_envelope(big, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1, "envelope %d %d %d %d",
          comb, ni, na, nd);
    OK(MPI_Type_get_contents(big, 3, 0, 1, ints, &aint, &old));
    CHECK(ints[0] == INT_MAX / 2 && ints[1] == 1 && ints[2] == 3, "contents %d %d %d", ints[0],
          ints[1], ints[2]);
    OK(MPI_Type_size_x(old, &sx));
    CHECK(sx == 16, "contents' old type has %lld bytes", (long long)sx);
    OK(MPI_Type_free(&old));
    /* a vector of the huge vector (the whole repeated: the period's level) */
    MPI_Datatype twice;
    OK(MPI_Type_contiguous(3, rsz, &twice));
    OK(MPI_Type_commit(&twice));
    OK(MPI_Type_size_x(twice, &sx));
    CHECK(sx == 3 * size, "size_x %lld", (long long)sx);
    check_elements(twice, 12 * blocks);
    OK(MPI_Type_free(&twice));
    OK(MPI_Type_free(&dup));
    OK(MPI_Type_free(&rsz));
    OK(MPI_Type_free(&big));
    OK(MPI_Type_free(&four));
    double dt = MPI_Wtime() - t0;
    CHECK(dt < 5, "making and querying the huge types took %.1f s", dt); /* was minutes */
}

/* ---- a real transfer with a regular huge-count type ------------------------ */

static void test_transfer(void)
{
    enum { N = 10 * 1000 * 1000 };
    int *buf = malloc(2 * (size_t)N * sizeof *buf), *flat = malloc((size_t)N * sizeof *flat);
    CHECK(buf && flat, "out of memory");
    MPI_Datatype vec;
    OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    MPI_Status st;
    /* strided out, contiguous in */
    for (size_t i = 0; i < 2 * (size_t)N; i++) buf[i] = (int)(i * 2654435761u);
    memset(flat, 0, (size_t)N * sizeof *flat);
    transfer(buf, 1, vec, flat, N, MPI_INT, &st);
    if (receiver()) {
        int c;
        OK(MPI_Get_count(&st, MPI_INT, &c));
        CHECK(c == N, "received %d ints", c);
        for (size_t i = 0; i < N; i++)
            CHECK(flat[i] == (int)(2 * i * 2654435761u), "int %zu: %d", i, flat[i]);
    }
    /* contiguous out, strided in: the gaps stay as they were */
    for (size_t i = 0; i < N; i++) flat[i] = (int)(i ^ 0x5a5a5a5a);
    for (size_t i = 0; i < 2 * (size_t)N; i++) buf[i] = -1;
    transfer(flat, N, MPI_INT, buf, 1, vec, &st);
    if (receiver()) {
        int c;
        OK(MPI_Get_count(&st, vec, &c));
        CHECK(c == 1, "received %d vectors", c);
        for (size_t i = 0; i < N; i++) {
            CHECK(buf[2 * i] == (int)(i ^ 0x5a5a5a5a), "block %zu: %d", i, buf[2 * i]);
            CHECK(buf[2 * i + 1] == -1, "gap %zu written: %d", i, buf[2 * i + 1]);
        }
    }
    OK(MPI_Type_free(&vec));
    free(buf);
    free(flat);
}

/* ---- nested types against a hand-packed reference -------------------------- */

/* Pack count of t from src, compare with want (n ints); unpack into a cleared
 * copy and compare with src where t has data (mask) and 0 elsewhere; then the
 * external32 form against want in big-endian order; then a transfer. */
static void check_packed(MPI_Datatype t, int count, const int *src, size_t srcn, const int *want,
                         int n, const char *what)
{
    int size;
    OK(MPI_Pack_size(count, t, MPI_COMM_SELF, &size));
    CHECK(size == n * 4, "%s: pack size %d, want %d", what, size, n * 4);
    int *packed = malloc((size_t)size + 4), pos = 0;
    OK(MPI_Pack(src, count, t, packed, size, &pos, MPI_COMM_SELF));
    CHECK(pos == size, "%s: packed %d bytes", what, pos);
    for (int i = 0; i < n; i++)
        CHECK(packed[i] == want[i], "%s: packed int %d is %d, want %d", what, i, packed[i],
              want[i]);
    int *back = calloc(srcn, sizeof *back);
    pos = 0;
    OK(MPI_Unpack(packed, size, &pos, back, count, t, MPI_COMM_SELF));
    int *again = malloc((size_t)size + 4);
    pos = 0;
    OK(MPI_Pack(back, count, t, again, size, &pos, MPI_COMM_SELF));
    CHECK(!memcmp(again, packed, (size_t)size), "%s: unpack then pack differs", what);
    size_t nonzero = 0;
    for (size_t i = 0; i < srcn; i++) {
        CHECK(!back[i] || back[i] == src[i], "%s: unpacked int %zu is %d", what, i, back[i]);
        nonzero += back[i] != 0;
    }
    CHECK(nonzero == (size_t)n, "%s: unpacked %zu ints, want %d", what, nonzero, n);
    MPI_Aint xs, xpos = 0;
    OK(MPI_Pack_external_size("external32", count, t, &xs));
    CHECK(xs == (MPI_Aint)n * 4, "%s: external32 size %ld", what, (long)xs);
    unsigned char *x = malloc((size_t)xs + 1);
    OK(MPI_Pack_external("external32", src, count, t, x, xs, &xpos));
    for (int i = 0; i < n; i++) {
        uint32_t v = (uint32_t)x[4 * i] << 24 | (uint32_t)x[4 * i + 1] << 16 |
                     (uint32_t)x[4 * i + 2] << 8 | x[4 * i + 3];
        CHECK((int)v == want[i], "%s: external32 int %d is %d", what, i, (int)v);
    }
    /* sent with t, received as ints, and back */
    int *flat = calloc((size_t)n + 1, sizeof *flat);
    MPI_Status st;
    transfer(src, count, t, flat, n, MPI_INT, &st);
    if (receiver()) CHECK(!memcmp(flat, want, (size_t)n * 4), "%s: received ints differ", what);
    memset(back, 0, srcn * sizeof *back);
    transfer(want, n, MPI_INT, back, count, t, &st);
    if (receiver()) {
        pos = 0;
        OK(MPI_Pack(back, count, t, again, size, &pos, MPI_COMM_SELF));
        CHECK(!memcmp(again, want, (size_t)size), "%s: received instances differ", what);
    }
    free(flat);
    free(x);
    free(again);
    free(back);
    free(packed);
}

static void test_nested(void)
{
    enum { A = 37, B = 23, C = 5, SRC = 1 << 16 };
    int *src = malloc(SRC * sizeof *src), *want = malloc(SRC * sizeof *want);
    for (int i = 0; i < SRC; i++) src[i] = i + 1; /* never 0: 0 is "not written" */
    /* inner: A blocks of 2 ints, stride 5; outer: B of them, 200 ints apart */
    MPI_Datatype inner, outer, third;
    OK(MPI_Type_vector(A, 2, 5, MPI_INT, &inner));
    OK(MPI_Type_create_hvector(B, 1, 200 * sizeof(int), inner, &outer));
    OK(MPI_Type_commit(&outer));
    int n = 0;
    for (int j = 0; j < B; j++)
        for (int i = 0; i < A; i++)
            for (int k = 0; k < 2; k++) want[n++] = src[200 * j + 5 * i + k];
    check_packed(outer, 1, src, SRC, want, n, "vector of vector");
    /* count 2 of it: the second instance one extent on */
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(outer, &lb, &ext));
    int e = (int)(ext / 4);
    n = 0;
    for (int c = 0; c < 2; c++)
        for (int j = 0; j < B; j++)
            for (int i = 0; i < A; i++)
                for (int k = 0; k < 2; k++) want[n++] = src[c * e + 200 * j + 5 * i + k];
    check_packed(outer, 2, src, SRC, want, n, "2 vectors of vectors");
    /* three levels: C of the outer ones, 5000 ints apart */
    OK(MPI_Type_create_hvector(C, 1, 5000 * sizeof(int), outer, &third));
    OK(MPI_Type_commit(&third));
    n = 0;
    for (int l = 0; l < C; l++)
        for (int j = 0; j < B; j++)
            for (int i = 0; i < A; i++)
                for (int k = 0; k < 2; k++) want[n++] = src[5000 * l + 200 * j + 5 * i + k];
    check_packed(third, 1, src, SRC, want, n, "vector of vector of vector");
    /* partial receive: 100 ints into one 'third' fill its first 100 places */
    if (np == 1 || me == 0 || receiver()) {
        int *back = calloc(SRC, sizeof *back);
        MPI_Status st;
        transfer(want, 100, MPI_INT, back, 1, third, &st);
        if (receiver()) {
            MPI_Count el;
            int c;
            OK(MPI_Get_elements_x(&st, third, &el));
            OK(MPI_Get_count(&st, third, &c));
            CHECK(el == 100 && c == MPI_UNDEFINED, "partial: %lld elements, count %d",
                  (long long)el, c);
            int got = 0;
            for (int i = 0; i < SRC; i++)
                if (back[i]) {
                    CHECK(back[i] == src[i], "partial: int %d is %d", i, back[i]);
                    got++;
                }
            CHECK(got == 100, "partial: %d ints written", got);
        }
        free(back);
    }
    /* a struct of three runs with gaps (one repeated period), 1000 of them */
    MPI_Datatype st3, arr;
    int bl[3] = {1, 2, 1};
    MPI_Aint disp[3] = {0, 8, 20};
    MPI_Datatype ty[3] = {MPI_INT, MPI_INT, MPI_INT};
    OK(MPI_Type_create_struct(3, bl, disp, ty, &st3));
    OK(MPI_Type_contiguous(1000, st3, &arr));
    OK(MPI_Type_commit(&arr));
    n = 0;
    for (int c = 0; c < 1000; c++) { /* extent 24 bytes: 6 ints */
        want[n++] = src[6 * c];
        want[n++] = src[6 * c + 2];
        want[n++] = src[6 * c + 3];
        want[n++] = src[6 * c + 5];
    }
    check_packed(arr, 1, src, SRC, want, n, "array of structs");
    /* a reduction over a strided type: sum of the blocks */
    MPI_Datatype vec;
    OK(MPI_Type_vector(1000, 1, 3, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    int *in = malloc(3000 * sizeof *in), *out = malloc(3000 * sizeof *out);
    for (int i = 0; i < 3000; i++) in[i] = out[i] = i;
    OK(MPI_Allreduce(in, out, 1, vec, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 3000; i++)
        CHECK(out[i] == (i % 3 ? i : np * i), "allreduce: int %d is %d", i, out[i]);
    OK(MPI_Type_free(&vec));
    free(in);
    free(out);
    OK(MPI_Type_free(&arr));
    OK(MPI_Type_free(&st3));
    OK(MPI_Type_free(&third));
    OK(MPI_Type_free(&outer));
    OK(MPI_Type_free(&inner));
    free(src);
    free(want);
}

/* ---- refused: a huge map with no regular structure ------------------------- */

static void test_refused(void)
{
    /* 2^25 DOUBLE_INT pairs (a repeated period of two runs), then an int after
     * them: the period would have to be unrolled into 2^26 entries */
    MPI_Datatype pairs, mixed;
    OK(MPI_Type_contiguous(1 << 25, MPI_DOUBLE_INT, &pairs));
    MPI_Count sx;
    OK(MPI_Type_size_x(pairs, &sx));
    CHECK(sx == (MPI_Count)(1 << 25) * 12, "pairs: size %lld", (long long)sx);
    int bl[2] = {1, 1};
    MPI_Aint ext, lb, disp[2] = {0, 0};
    OK(MPI_Type_get_extent(pairs, &lb, &ext));
    disp[1] = ext;
    MPI_Datatype ty[2] = {pairs, MPI_INT};
    int rc = MPI_Type_create_struct(2, bl, disp, ty, &mixed);
    int cls = -1;
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_INTERN, "a 2^26-entry map: error class %d", cls);
    OK(MPI_Type_free(&pairs));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_query();
    test_transfer();
    test_nested();
    test_refused();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("types_huge: all checks passed on %d ranks\n", np);
    OK(MPI_Finalize());
    return 0;
}
