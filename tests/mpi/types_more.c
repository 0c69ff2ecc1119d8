/* Datatypes, the MPI-3.1 calls around the constructors: names; envelope and
 * contents of every combiner, each type rebuilt from its contents and
 * compared with the original by packing; subarray and darray type maps and
 * extents against a hand computation (C and Fortran order, block, cyclic,
 * none), sent between ranks; external32 bytes against known big-endian
 * encodings; the _x forms, MPI_Status_set_elements(_x), MPI_Type_match_size;
 * datatype attributes with copy and delete callbacks. 1 or more ranks. */
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "mcheck.h"

static int me, np;

/* ---- helpers ---------------------------------------------------------------- */

/* Pack 'count' instances of t from a patterned buffer; the bytes in *out. */
static int pack_image(MPI_Datatype t, int count, char **out)
{
    static char src[1 << 16];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (char)(i * 7 + i / 251);
    int size;
    OK(MPI_Pack_size(count, t, MPI_COMM_SELF, &size));
    *out = malloc((size_t)size + 1);
    int pos = 0;
    OK(MPI_Pack(src + 4096, count, t, *out, size, &pos, MPI_COMM_SELF));
    CHECK(pos == size, "packed %d of %d", pos, size);
    return size;
}

/* t and u have the same type map (as far as packing from one buffer shows)
 * and the same size and extents. */
static void same_map(MPI_Datatype t, MPI_Datatype u, const char *what)
{
    int s1, s2;
    MPI_Aint lb1, lb2, e1, e2;
    OK(MPI_Type_size(t, &s1));
    OK(MPI_Type_size(u, &s2));
    CHECK(s1 == s2, "%s: size %d vs %d", what, s1, s2);
    OK(MPI_Type_get_extent(t, &lb1, &e1));
    OK(MPI_Type_get_extent(u, &lb2, &e2));
    CHECK(lb1 == lb2 && e1 == e2, "%s: lb/extent %ld/%ld vs %ld/%ld", what, (long)lb1, (long)e1,
          (long)lb2, (long)e2);
    OK(MPI_Type_get_true_extent(t, &lb1, &e1));
    OK(MPI_Type_get_true_extent(u, &lb2, &e2));
    CHECK(lb1 == lb2 && e1 == e2, "%s: true lb/extent differ", what);
    char *a, *b;
    int n1 = pack_image(t, 2, &a), n2 = pack_image(u, 2, &b);
    CHECK(n1 == n2 && !memcmp(a, b, (size_t)n1), "%s: packed images differ", what);
    free(a);
    free(b);
}

/* Rebuild a type from its envelope and contents (recursively: the datatypes
 * returned are rebuilt in turn when derived, then freed). */
static MPI_Datatype rebuild(MPI_Datatype t)
{
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    if (comb == MPI_COMBINER_NAMED) return t;
    int *iv = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *av = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *tv = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    OK(MPI_Type_get_contents(t, ni, na, nd, iv, av, tv));
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    for (int k = 0; k < nd; k++) rt[k] = rebuild(tv[k]);
    MPI_Datatype n = MPI_DATATYPE_NULL;
    switch (comb) {
    case MPI_COMBINER_DUP:
        OK(MPI_Type_dup(rt[0], &n));
        break;
    case MPI_COMBINER_CONTIGUOUS:
        CHECK(ni == 1 && na == 0 && nd == 1, "contiguous envelope");
        OK(MPI_Type_contiguous(iv[0], rt[0], &n));
        break;
    case MPI_COMBINER_VECTOR:
        CHECK(ni == 3 && na == 0 && nd == 1, "vector envelope");
        OK(MPI_Type_vector(iv[0], iv[1], iv[2], rt[0], &n));
        break;
    case MPI_COMBINER_HVECTOR:
        CHECK(ni == 2 && na == 1 && nd == 1, "hvector envelope");
        OK(MPI_Type_create_hvector(iv[0], iv[1], av[0], rt[0], &n));
        break;
    case MPI_COMBINER_INDEXED:
        CHECK(ni == 2 * iv[0] + 1 && na == 0 && nd == 1, "indexed envelope");
        OK(MPI_Type_indexed(iv[0], iv + 1, iv + 1 + iv[0], rt[0], &n));
        break;
    case MPI_COMBINER_HINDEXED:
        CHECK(ni == iv[0] + 1 && na == iv[0] && nd == 1, "hindexed envelope");
        OK(MPI_Type_create_hindexed(iv[0], iv + 1, av, rt[0], &n));
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        CHECK(ni == iv[0] + 2 && na == 0 && nd == 1, "indexed_block envelope");
        OK(MPI_Type_create_indexed_block(iv[0], iv[1], iv + 2, rt[0], &n));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        CHECK(ni == 2 && na == iv[0] && nd == 1, "hindexed_block envelope");
        OK(MPI_Type_create_hindexed_block(iv[0], iv[1], av, rt[0], &n));
        break;
    case MPI_COMBINER_STRUCT:
        CHECK(ni == iv[0] + 1 && na == iv[0] && nd == iv[0], "struct envelope");
        OK(MPI_Type_create_struct(iv[0], iv + 1, av, rt, &n));
        break;
    case MPI_COMBINER_SUBARRAY: {
        int d = iv[0];
        CHECK(ni == 3 * d + 2 && na == 0 && nd == 1, "subarray envelope");
        OK(MPI_Type_create_subarray(d, iv + 1, iv + 1 + d, iv + 1 + 2 * d, iv[1 + 3 * d], rt[0],
                                    &n));
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int d = iv[2];
        CHECK(ni == 4 * d + 4 && na == 0 && nd == 1, "darray envelope");
        OK(MPI_Type_create_darray(iv[0], iv[1], d, iv + 3, iv + 3 + d, iv + 3 + 2 * d,
                                  iv + 3 + 3 * d, iv[3 + 4 * d], rt[0], &n));
        break;
    }
    case MPI_COMBINER_RESIZED:
        CHECK(ni == 0 && na == 2 && nd == 1, "resized envelope");
        OK(MPI_Type_create_resized(rt[0], av[0], av[1], &n));
        break;
    default:
        CHECK(0, "unexpected combiner %d", comb);
    }
    for (int k = 0; k < nd; k++) {
        int a, b, c, cb;
        OK(MPI_Type_get_envelope(tv[k], &a, &b, &c, &cb));
        if (cb != MPI_COMBINER_NAMED) {
            OK(MPI_Type_free(&tv[k]));
            OK(MPI_Type_free(&rt[k]));
        }
    }
    free(iv);
    free(av);
    free(tv);
    free(rt);
    OK(MPI_Type_commit(&n));
    return n;
}

static void check_roundtrip(MPI_Datatype t, int combiner, const char *what)
{
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == combiner, "%s: combiner %d, expected %d", what, comb, combiner);
    OK(MPI_Type_commit(&t));
    MPI_Datatype r = rebuild(t);
    same_map(t, r, what);
    OK(MPI_Type_free(&r));
}

/* ---- names -------------------------------------------------------------------- */

static void test_names(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    struct {
        MPI_Datatype t;
        const char *n;
    } pre[] = {{MPI_INT, "MPI_INT"},         {MPI_DOUBLE, "MPI_DOUBLE"},
               {MPI_CHAR, "MPI_CHAR"},       {MPI_2INT, "MPI_2INT"},
               {MPI_INT64_T, "MPI_INT64_T"}, {MPI_C_BOOL, "MPI_C_BOOL"},
               {MPI_COUNT, "MPI_COUNT"},     {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"}};
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++) {
        OK(MPI_Type_get_name(pre[i].t, name, &len));
        CHECK(!strcmp(name, pre[i].n) && len == (int)strlen(pre[i].n), "name %s, expected %s", name,
              pre[i].n);
    }
    /* the Fortran and C++ types C programs can name: their own names, the
     * layout of their C counterparts, reductions as those */
    struct {
        MPI_Datatype t;
        const char *n;
        int size;
    } twin[] = {
        {MPI_INTEGER, "MPI_INTEGER", sizeof(int)},
        {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8},
        {MPI_COMPLEX, "MPI_COMPLEX", 8},
        {MPI_2INTEGER, "MPI_2INTEGER", 2 * sizeof(int)},
        {MPI_INTEGER8, "MPI_INTEGER8", 8},
        {MPI_CHARACTER, "MPI_CHARACTER", 1},
        {MPI_LOGICAL, "MPI_LOGICAL", sizeof(int)},
        {MPI_CXX_BOOL, "MPI_CXX_BOOL", 1},
        {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double)}};
    for (size_t i = 0; i < sizeof twin / sizeof *twin; i++) {
        int sz;
        OK(MPI_Type_get_name(twin[i].t, name, &len));
        CHECK(!strcmp(name, twin[i].n), "name %s, expected %s", name, twin[i].n);
        OK(MPI_Type_size(twin[i].t, &sz));
        CHECK(sz == twin[i].size, "%s: size %d", twin[i].n, sz);
    }
    int in[2] = {me + 1, 10 * (me + 1)}, sum[2];
    OK(MPI_Allreduce(in, sum, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum[0] == np * (np + 1) / 2 && sum[1] == 10 * sum[0], "MPI_INTEGER sum %d", sum[0]);
    int lt = 1, land;
    OK(MPI_Allreduce(&lt, &land, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
    CHECK(land == 1, "MPI_LOGICAL land");
    double dp = 0.5, dsum;
    OK(MPI_Allreduce(&dp, &dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD));
    CHECK(dsum == 0.5 * np, "MPI_DOUBLE_PRECISION sum %g", dsum);

    MPI_Datatype v;
    OK(MPI_Type_vector(2, 1, 3, MPI_INT, &v));
    OK(MPI_Type_get_name(v, name, &len));
    CHECK(len == 0 && name[0] == 0, "a new type has the empty name, not %s", name);
    OK(MPI_Type_set_name(v, "my vector"));
    OK(MPI_Type_get_name(v, name, &len));
    CHECK(!strcmp(name, "my vector") && len == 9, "name %s", name);
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    OK(MPI_Type_set_name(v, longname));
    OK(MPI_Type_get_name(v, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len, "long name cut to %d", len);
    OK(MPI_Type_set_name(MPI_INT, "int"));
    OK(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(!strcmp(name, "int"), "renamed MPI_INT: %s", name);
    OK(MPI_Type_set_name(MPI_INT, "MPI_INT"));
    OK(MPI_Type_free(&v));
    CHECK(MPI_Type_set_name(MPI_DATATYPE_NULL, "x") == MPI_ERR_TYPE, "NULL type");
    CHECK(MPI_Type_set_name(MPI_INT, NULL) == MPI_ERR_ARG, "NULL name");
}

/* ---- envelopes and contents ----------------------------------------------------------- */

static void test_contents(void)
{
    MPI_Datatype t, v, s;
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED && !ni && !na && !nd, "MPI_DOUBLE envelope");
    int iv[1];
    MPI_Aint av[1];
    MPI_Datatype tv[1];
    CHECK(MPI_Type_get_contents(MPI_INT, 1, 1, 1, iv, av, tv) == MPI_ERR_TYPE,
          "contents of a named type");

    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    check_roundtrip(t, MPI_COMBINER_CONTIGUOUS, "contiguous");
    CHECK(MPI_Type_get_contents(t, 0, 0, 1, iv, av, tv) == MPI_ERR_ARG, "short arrays");
    OK(MPI_Type_get_contents(t, 1, 0, 1, iv, av, tv));
    CHECK(iv[0] == 3 && tv[0] == MPI_INT, "contiguous contents %d %#x", iv[0], (unsigned)tv[0]);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
    check_roundtrip(v, MPI_COMBINER_VECTOR, "vector");
    OK(MPI_Type_create_hvector(2, 3, 40, MPI_DOUBLE, &t));
    check_roundtrip(t, MPI_COMBINER_HVECTOR, "hvector");
    OK(MPI_Type_free(&t));
    int bl[3] = {2, 0, 3}, di[3] = {5, 1, 0};
    OK(MPI_Type_indexed(3, bl, di, v, &t));
    check_roundtrip(t, MPI_COMBINER_INDEXED, "indexed of vector");
    OK(MPI_Type_free(&t));
    MPI_Aint ad[3] = {64, 0, 200};
    OK(MPI_Type_create_hindexed(3, bl, ad, MPI_SHORT, &t));
    check_roundtrip(t, MPI_COMBINER_HINDEXED, "hindexed");
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_indexed_block(3, 2, di, MPI_FLOAT, &t));
    check_roundtrip(t, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_hindexed_block(3, 2, ad, v, &t));
    check_roundtrip(t, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block of vector");
    OK(MPI_Type_free(&t));
    int sbl[3] = {1, 2, 1};
    MPI_Aint sd[3] = {0, 8, 64};
    MPI_Datatype st[3] = {MPI_CHAR, MPI_DOUBLE, v};
    OK(MPI_Type_create_struct(3, sbl, sd, st, &s));
    check_roundtrip(s, MPI_COMBINER_STRUCT, "struct");
    int sizes[3] = {4, 5, 6}, subs[3] = {2, 3, 2}, starts[3] = {1, 0, 3};
    OK(MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
    check_roundtrip(t, MPI_COMBINER_SUBARRAY, "subarray C");
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, s, &t));
    check_roundtrip(t, MPI_COMBINER_SUBARRAY, "subarray Fortran of struct");
    OK(MPI_Type_free(&t));
    int gs[2] = {7, 9}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 3};
    OK(MPI_Type_create_darray(6, 4, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_DOUBLE, &t));
    check_roundtrip(t, MPI_COMBINER_DARRAY, "darray");
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_resized(v, -8, 100, &t));
    check_roundtrip(t, MPI_COMBINER_RESIZED, "resized");
    OK(MPI_Type_free(&t));
    OK(MPI_Type_dup(s, &t));
    check_roundtrip(t, MPI_COMBINER_DUP, "dup");
    OK(MPI_Type_free(&t));
    OK(MPI_Type_dup(MPI_INT, &t));
    OK(MPI_Type_get_contents(t, 0, 0, 1, iv, av, tv));
    CHECK(tv[0] == MPI_INT, "dup of MPI_INT returns MPI_INT itself");
    OK(MPI_Type_free(&t));

    /* the types a type was made from may be freed: contents still returns
     * equivalent ones, new handles to free */
    OK(MPI_Type_dup(v, &t));
    OK(MPI_Type_free(&v));
    OK(MPI_Type_free(&s));
    OK(MPI_Type_get_contents(t, 0, 0, 1, iv, av, tv));
    MPI_Datatype again;
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &again));
    OK(MPI_Type_commit(&again));
    OK(MPI_Type_commit(&tv[0]));
    same_map(tv[0], again, "contents of a dup whose old type was freed");
    OK(MPI_Type_get_envelope(tv[0], &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3, "returned vector's envelope");
    OK(MPI_Type_free(&tv[0]));
    OK(MPI_Type_free(&again));
    OK(MPI_Type_free(&t));
}

/* ---- subarray and darray ------------------------------------------------------------- */

/* Expected global indices (C or Fortran linearization) of a darray piece. */
static int owner(int i, int n, int p, int dist, int darg)
{
    if (dist == MPI_DISTRIBUTE_NONE) return 0;
    if (dist == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (n + p - 1) / p : darg;
        return i / b;
    }
    int k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (i / k) % p;
}

static int darray_expect(int rank, const int gs[2], const int dist[2], const int dargs[2],
                         const int ps[2], int order, int *out)
{
    int c0 = rank / ps[1], c1 = rank % ps[1], n = 0; /* row-major process grid */
    if (order == MPI_ORDER_C) {
        for (int i = 0; i < gs[0]; i++)
            for (int j = 0; j < gs[1]; j++)
                if (owner(i, gs[0], ps[0], dist[0], dargs[0]) == c0 &&
                    owner(j, gs[1], ps[1], dist[1], dargs[1]) == c1)
                    out[n++] = i * gs[1] + j;
    } else {
        for (int j = 0; j < gs[1]; j++)
            for (int i = 0; i < gs[0]; i++)
                if (owner(i, gs[0], ps[0], dist[0], dargs[0]) == c0 &&
                    owner(j, gs[1], ps[1], dist[1], dargs[1]) == c1)
                    out[n++] = i + j * gs[0];
    }
    return n;
}

/* The ints t selects from a[k] = k (packing count 1), in order. */
static int selected(MPI_Datatype t, int *out, int max)
{
    static int a[4096];
    for (int k = 0; k < 4096; k++) a[k] = k;
    int size, pos = 0;
    OK(MPI_Pack_size(1, t, MPI_COMM_SELF, &size));
    CHECK(size <= max * (int)sizeof(int), "too big");
    OK(MPI_Pack(a, 1, t, out, max * (int)sizeof(int), &pos, MPI_COMM_SELF));
    return size / (int)sizeof(int);
}

/* Send the piece t selects of a[k] = k + 1000 * me to the next rank, receive
 * the previous rank's as plain ints and compare with its expected list. */
static void exchange(MPI_Datatype mine, const int *want_prev, int nprev, const char *what)
{
    static int a[4096], got[4096];
    for (int k = 0; k < 4096; k++) a[k] = k + 1000 * me;
    int next = (me + 1) % np, prev = (me + np - 1) % np;
    MPI_Status st;
    OK(MPI_Sendrecv(a, 1, mine, next, 7, got, 4096, MPI_INT, prev, 7, MPI_COMM_WORLD, &st));
    int n;
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == nprev, "%s: received %d ints, expected %d", what, n, nprev);
    for (int k = 0; k < n; k++)
        CHECK(got[k] == want_prev[k] + 1000 * prev, "%s: element %d is %d, expected %d", what, k,
              got[k], want_prev[k] + 1000 * prev);
}

static void test_subarray(void)
{
    int out[4096];
    /* 6 x 5 ints, the 3 x 2 block at (1, 2) */
    int sizes[2] = {6, 5}, subs[2] = {3, 2}, starts[2] = {1, 2};
    MPI_Datatype t;
    MPI_Aint lb, ext;
    for (int ord = 0; ord < 2; ord++) {
        int order = ord ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        OK(MPI_Type_create_subarray(2, sizes, subs, starts, order, MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        OK(MPI_Type_get_extent(t, &lb, &ext));
        CHECK(lb == 0 && ext == 30 * (MPI_Aint)sizeof(int), "subarray extent %ld", (long)ext);
        int sz;
        OK(MPI_Type_size(t, &sz));
        CHECK(sz == 6 * (int)sizeof(int), "subarray size %d", sz);
        int want[6], n = 0;
        if (order == MPI_ORDER_C) { /* dim 0 rows of 5 */
            for (int i = 1; i < 4; i++)
                for (int j = 2; j < 4; j++) want[n++] = i * 5 + j;
        } else { /* dim 0 fastest: column j holds elements i + 6 j */
            for (int j = 2; j < 4; j++)
                for (int i = 1; i < 4; i++) want[n++] = i + j * 6;
        }
        int got = selected(t, out, 4096);
        CHECK(got == 6, "subarray selects %d", got);
        for (int k = 0; k < 6; k++)
            CHECK(out[k] == want[k], "subarray %s element %d: %d, expected %d",
                  ord ? "Fortran" : "C", k, out[k], want[k]);
        exchange(t, want, 6, ord ? "subarray Fortran" : "subarray C");
        /* and plain ints received into the subarray's places */
        int vals[6] = {11, 22, 33, 44, 55, 66}, arr[30];
        for (int k = 0; k < 30; k++) arr[k] = -1;
        int next = (me + 1) % np, prev = (me + np - 1) % np;
        OK(MPI_Sendrecv(vals, 6, MPI_INT, next, 9, arr, 1, t, prev, 9, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        for (int k = 0, w = 0; k < 30; k++) {
            int expect = w < 6 && want[w] == k ? vals[w++] : -1;
            CHECK(arr[k] == expect, "received into subarray: arr[%d] = %d, expected %d", k, arr[k],
                  expect);
        }
        OK(MPI_Type_free(&t));
    }
    /* 3-D, C order, of a resized pair type: extent of the whole array */
    int s3[3] = {3, 4, 5}, u3[3] = {2, 2, 3}, o3[3] = {1, 1, 2};
    OK(MPI_Type_create_subarray(3, s3, u3, o3, MPI_ORDER_C, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    int n = selected(t, out, 4096), k = 0;
    CHECK(n == 12, "3-D subarray selects %d", n);
    for (int i = 1; i < 3; i++)
        for (int j = 1; j < 3; j++)
            for (int l = 2; l < 5; l++, k++)
                CHECK(out[k] == (i * 4 + j) * 5 + l, "3-D element %d: %d", k, out[k]);
    OK(MPI_Type_free(&t));
    /* errors */
    int bad[2] = {3, 2}, bst[2] = {4, 4};
    CHECK(MPI_Type_create_subarray(2, sizes, bad, bst, MPI_ORDER_C, MPI_INT, &t) == MPI_ERR_ARG,
          "start + subsize > size");
    CHECK(MPI_Type_create_subarray(2, sizes, subs, starts, 99, MPI_INT, &t) == MPI_ERR_ARG,
          "bad order");
    CHECK(MPI_Type_create_subarray(0, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t) == MPI_ERR_ARG,
          "ndims 0");
}

static void test_darray(void)
{
    static int out[4096], want[4096];
    struct {
        int gs[2], dist[2], dargs[2], ps[2];
    } cases[] = {
        {{7, 9},
         {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
         {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG},
         {2, 2}},
        {{7, 9},
         {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC},
         {MPI_DISTRIBUTE_DFLT_DARG, 2},
         {2, 3}},
        {{10, 4},
         {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE},
         {4, MPI_DISTRIBUTE_DFLT_DARG},
         {3, 1}},
        {{11, 6}, {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, {3, 2}, {2, 3}},
        {{5, 3},
         {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
         {MPI_DISTRIBUTE_DFLT_DARG, 1},
         {4, 1}}, /* the last process of dimension 0 holds nothing */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int ord = 0; ord < 2; ord++) {
            int order = ord ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
            int size = cases[c].ps[0] * cases[c].ps[1];
            for (int r = 0; r < size; r++) {
                MPI_Datatype t;
                OK(MPI_Type_create_darray(size, r, 2, cases[c].gs, cases[c].dist, cases[c].dargs,
                                          cases[c].ps, order, MPI_INT, &t));
                OK(MPI_Type_commit(&t));
                MPI_Aint lb, ext;
                OK(MPI_Type_get_extent(t, &lb, &ext));
                CHECK(lb == 0 && ext == (MPI_Aint)sizeof(int) * cases[c].gs[0] * cases[c].gs[1],
                      "darray case %zu extent %ld", c, (long)ext);
                int nw = darray_expect(r, cases[c].gs, cases[c].dist, cases[c].dargs, cases[c].ps,
                                       order, want);
                int ng = selected(t, out, 4096);
                CHECK(ng == nw, "darray case %zu order %d rank %d: %d elements, expected %d", c,
                      ord, r, ng, nw);
                for (int k = 0; k < nw; k++)
                    CHECK(out[k] == want[k],
                          "darray case %zu order %d rank %d element %d: %d, "
                          "expected %d",
                          c, ord, r, k, out[k], want[k]);
                OK(MPI_Type_free(&t));
            }
        }
    /* the job's own ranks: each sends its piece (cyclic(2) x block over np x 1) */
    int gs[2] = {9, 5}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
        dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {np, 1};
    for (int ord = 0; ord < 2; ord++) {
        int order = ord ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        MPI_Datatype t;
        OK(MPI_Type_create_darray(np, me, 2, gs, dist, dargs, ps, order, MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        int prev = (me + np - 1) % np;
        int nw = darray_expect(prev, gs, dist, dargs, ps, order, want);
        exchange(t, want, nw, ord ? "darray Fortran" : "darray C");
        OK(MPI_Type_free(&t));
    }
    MPI_Datatype t;
    int bd[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_NONE}, bp[2] = {2, 1};
    CHECK(MPI_Type_create_darray(2, 0, 2, gs, bd, dargs, bp, MPI_ORDER_C, MPI_INT, &t) ==
              MPI_ERR_ARG,
          "DISTRIBUTE_NONE over 2 processes");
    int small[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, dp[2] = {2, 1},
        db[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    CHECK(MPI_Type_create_darray(2, 0, 2, gs, db, small, dp, MPI_ORDER_C, MPI_INT, &t) ==
              MPI_ERR_ARG,
          "blocks that do not cover the dimension");
    CHECK(MPI_Type_create_darray(3, 0, 2, gs, db, dargs, dp, MPI_ORDER_C, MPI_INT, &t) ==
              MPI_ERR_ARG,
          "grid of 2 for size 3");
}

/* ---- external32 ---------------------------------------------------------------- */

static void xbytes(MPI_Datatype t, const void *v, int count, const unsigned char *want, int n,
                   const char *what)
{
    unsigned char buf[256];
    MPI_Aint size, pos = 0;
    OK(MPI_Pack_external_size("external32", count, t, &size));
    CHECK(size == n, "%s: external32 size %ld, expected %d", what, (long)size, n);
    memset(buf, 0xee, sizeof buf);
    OK(MPI_Pack_external("external32", v, count, t, buf, (MPI_Aint)sizeof buf, &pos));
    CHECK(pos == n, "%s: position %ld", what, (long)pos);
    for (int i = 0; i < n; i++)
        CHECK(buf[i] == want[i], "%s: byte %d is %02x, expected %02x", what, i, buf[i], want[i]);
    unsigned char back[256];
    memset(back, 0, sizeof back);
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, n, &pos, back, count, t));
    CHECK(pos == n, "%s: unpacked position %ld", what, (long)pos);
}

static void test_external32(void)
{
    int i = 0x01020304;
    xbytes(MPI_INT, &i, 1, (const unsigned char[]){1, 2, 3, 4}, 4, "int");
    short s = -2;
    xbytes(MPI_SHORT, &s, 1, (const unsigned char[]){0xff, 0xfe}, 2, "short");
    long l[2] = {-5, 0x12345678};
    xbytes(MPI_LONG, l, 2, (const unsigned char[]){0xff, 0xff, 0xff, 0xfb, 0x12, 0x34, 0x56, 0x78},
           8, "long (4 bytes)");
    double d = 1.0;
    xbytes(MPI_DOUBLE, &d, 1, (const unsigned char[]){0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, 8, "double");
    float f = 1.5f;
    xbytes(MPI_FLOAT, &f, 1, (const unsigned char[]){0x3f, 0xc0, 0, 0}, 4, "float");
    long long ll = -2;
    xbytes(MPI_LONG_LONG, &ll, 1,
           (const unsigned char[]){0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, 8, "long long");
    long double ld[2] = {1.0L, -2.5L};
    xbytes(MPI_LONG_DOUBLE, ld, 2,
           (const unsigned char[]){0x3f, 0xff, 0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                   0xc0, 0x00, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
           32, "long double (binary128)");
    wchar_t w = L'A';
    xbytes(MPI_WCHAR, &w, 1, (const unsigned char[]){0, 0x41}, 2, "wchar");
    int two[2] = {1, -1};
    xbytes(MPI_2INT, two, 1, (const unsigned char[]){0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}, 8,
           "2int");
    struct {
        double v;
        int i;
    } di = {-1.0, 7};
    xbytes(MPI_DOUBLE_INT, &di, 1,
           (const unsigned char[]){0xbf, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}, 12, "double_int");
    struct {
        short v;
        int i;
    } si = {3, 4};
    xbytes(MPI_SHORT_INT, &si, 1, (const unsigned char[]){0, 3, 0, 0, 0, 4}, 6, "short_int");
    float fc[2] = {1.0f, -1.0f}; /* float _Complex */
    xbytes(MPI_C_FLOAT_COMPLEX, fc, 1, (const unsigned char[]){0x3f, 0x80, 0, 0, 0xbf, 0x80, 0, 0},
           8, "float complex");
    int fi[2] = {-3, 5};
    xbytes(MPI_INTEGER, fi, 2, (const unsigned char[]){0xff, 0xff, 0xff, 0xfd, 0, 0, 0, 5}, 8,
           "MPI_INTEGER");
    double dc[2] = {2.0, 0.0};
    xbytes(MPI_DOUBLE_COMPLEX, dc, 1,
           (const unsigned char[]){0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 16,
           "MPI_DOUBLE_COMPLEX");
    /* derived: every other int of 4, then a struct of char and long */
    int iv[4] = {0x0a0b0c0d, 99, 0x11223344, 98};
    MPI_Datatype v;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    xbytes(v, iv, 1, (const unsigned char[]){0xa, 0xb, 0xc, 0xd, 0x11, 0x22, 0x33, 0x44}, 8,
           "vector of int");
    struct {
        char c;
        long l;
    } cl[2] = {{'a', -1}, {'b', 258}};
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, offsetof(__typeof__(cl[0]), l)};
    MPI_Datatype ty[2] = {MPI_CHAR, MPI_LONG}, sl;
    OK(MPI_Type_create_struct(2, bl, disp, ty, &sl));
    OK(MPI_Type_commit(&sl));
    xbytes(sl, cl, 2, (const unsigned char[]){'a', 0xff, 0xff, 0xff, 0xff, 'b', 0, 0, 1, 2}, 10,
           "struct of char and long, 2 instances");
    /* round trips */
    long lb[2] = {0, 0};
    unsigned char buf[64];
    MPI_Aint pos = 0;
    OK(MPI_Pack_external("external32", l, 2, MPI_LONG, buf, 64, &pos));
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 64, &pos, lb, 2, MPI_LONG));
    CHECK(lb[0] == -5 && lb[1] == 0x12345678, "long back: %ld %ld", lb[0], lb[1]);
    unsigned long ul = 0xfffffffbUL, ub = 0;
    pos = 0;
    OK(MPI_Pack_external("external32", &ul, 1, MPI_UNSIGNED_LONG, buf, 64, &pos));
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 64, &pos, &ub, 1, MPI_UNSIGNED_LONG));
    CHECK(ub == 0xfffffffbUL, "unsigned long back: %lx", ub);
    long double lx[3] = {3.141592653589793238L, -1e-300L, 1e300L}, ly[3];
    pos = 0;
    OK(MPI_Pack_external("external32", lx, 3, MPI_LONG_DOUBLE, buf, 64, &pos));
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 64, &pos, ly, 3, MPI_LONG_DOUBLE));
    for (int k = 0; k < 3; k++) CHECK(lx[k] == ly[k], "long double %d back", k);
    int iw[4] = {0, 0, 0, 0};
    pos = 0;
    OK(MPI_Pack_external("external32", iv, 1, v, buf, 64, &pos));
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 8, &pos, iw, 1, v));
    CHECK(iw[0] == iv[0] && iw[2] == iv[2] && iw[1] == 0 && iw[3] == 0, "vector back");
    /* errors */
    pos = 0;
    CHECK(MPI_Pack_external("native", &i, 1, MPI_INT, buf, 64, &pos) == MPI_ERR_ARG,
          "datarep native");
    MPI_Aint xs;
    CHECK(MPI_Pack_external_size("internal", 1, MPI_INT, &xs) == MPI_ERR_ARG, "datarep internal");
    pos = 62;
    CHECK(MPI_Pack_external("external32", &i, 1, MPI_INT, buf, 64, &pos) == MPI_ERR_TRUNCATE &&
              pos == 62,
          "no room");
    OK(MPI_Type_free(&v));
    OK(MPI_Type_free(&sl));
}

/* ---- _x forms, status, match_size ------------------------------------------------ */

static void test_x(void)
{
    MPI_Datatype v, c3;
    OK(MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &v));
    OK(MPI_Type_commit(&v));
    MPI_Count sz, lb, ext;
    OK(MPI_Type_size_x(v, &sz));
    CHECK(sz == 48, "size_x %lld", sz);
    OK(MPI_Type_get_extent_x(v, &lb, &ext));
    CHECK(lb == 0 && ext == 12 * 8, "extent_x %lld %lld", lb, ext);
    MPI_Datatype r;
    OK(MPI_Type_create_resized(v, -16, 200, &r));
    OK(MPI_Type_get_extent_x(r, &lb, &ext));
    CHECK(lb == -16 && ext == 200, "resized extent_x %lld %lld", lb, ext);
    OK(MPI_Type_get_true_extent_x(r, &lb, &ext));
    CHECK(lb == 0 && ext == 12 * 8, "true_extent_x %lld %lld", lb, ext);
    OK(MPI_Type_free(&r));

    MPI_Status st;
    MPI_Count cx;
    int c;
    OK(MPI_Status_set_elements(&st, MPI_INT, 5));
    OK(MPI_Get_elements(&st, MPI_INT, &c));
    CHECK(c == 5, "elements %d", c);
    OK(MPI_Get_count(&st, MPI_INT, &c));
    CHECK(c == 5, "count %d", c);
    OK(MPI_Get_elements_x(&st, MPI_INT, &cx));
    CHECK(cx == 5, "elements_x %lld", cx);
    OK(MPI_Type_contiguous(3, MPI_INT, &c3));
    OK(MPI_Type_commit(&c3));
    OK(MPI_Status_set_elements(&st, c3, 4));
    OK(MPI_Get_elements(&st, c3, &c));
    CHECK(c == 4, "elements of contiguous(3) %d", c);
    OK(MPI_Get_count(&st, c3, &c));
    CHECK(c == MPI_UNDEFINED, "count of 4 ints in contiguous(3): %d", c);
    OK(MPI_Status_set_elements_x(&st, c3, 6));
    OK(MPI_Get_count(&st, c3, &c));
    CHECK(c == 2, "count %d", c);
    OK(MPI_Get_elements_x(&st, MPI_INT, &cx));
    CHECK(cx == 6, "elements_x %lld", cx);
    CHECK(MPI_Status_set_elements(&st, MPI_INT, -1) == MPI_ERR_COUNT, "negative count");
    /* a real receive */
    int next = (me + 1) % np, prev = (me + np - 1) % np;
    double dv[60] = {0}, dr[60];
    OK(MPI_Sendrecv(dv, 2, v, next, 3, dr, 60, MPI_DOUBLE, prev, 3, MPI_COMM_WORLD, &st));
    OK(MPI_Get_elements_x(&st, MPI_DOUBLE, &cx));
    CHECK(cx == 12, "received elements_x %lld", cx);
    OK(MPI_Get_elements_x(&st, v, &cx));
    CHECK(cx == 12, "received elements_x of the vector %lld", cx);
    OK(MPI_Type_free(&c3));
    OK(MPI_Type_free(&v));

    MPI_Datatype m;
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    CHECK(m == MPI_DOUBLE, "real 8");
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &m));
    CHECK(m == MPI_FLOAT, "real 4");
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m));
    CHECK(m == MPI_INT, "integer 4");
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 1, &m));
    CHECK(m == MPI_SIGNED_CHAR, "integer 1");
    OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m));
    CHECK(m == MPI_C_DOUBLE_COMPLEX, "complex 16");
    /* sizes only a Fortran type has: that type (mpi4py's testMatchSize) */
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &m));
    CHECK(m == MPI_INTEGER16, "integer 16");
    int bytes = 0;
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 16, &m));
    OK(MPI_Type_size(m, &bytes));
    CHECK(bytes == 16, "real 16: %d bytes", bytes);
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m) == MPI_ERR_ARG, "real 3");
    CHECK(MPI_Type_match_size(42, 4, &m) == MPI_ERR_ARG, "class 42");
}

/* ---- attributes ----------------------------------------------------------------- */

static int ncopy, ndelete, last_deleted;

static int copy_fn(MPI_Datatype old, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)kv;
    CHECK(extra == &ncopy, "extra state");
    ncopy++;
    *(void **)out = (char *)in + 1; /* the copy's value differs */
    *flag = 1;
    return MPI_SUCCESS;
}

static int nocopy_fn(MPI_Datatype old, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)kv, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype t, int kv, void *val, void *extra)
{
    (void)t;
    (void)kv;
    (void)extra;
    ndelete++;
    last_deleted = (int)(intptr_t)val;
    return MPI_SUCCESS;
}

static int failing_delete(MPI_Datatype t, int kv, void *val, void *extra)
{
    (void)t, (void)kv, (void)val, (void)extra;
    return MPI_ERR_OTHER;
}

/* frees its keyval: MPICH's keyval_double_free_type does, four times over */
static int freeing_delete(MPI_Datatype t, int kv, void *val, void *extra)
{
    (void)t, (void)val, (void)extra;
    return MPI_Type_free_keyval(&kv);
}

static void test_attrs(void)
{
    int k1, k2, k3, k4, flag;
    void *val;
    OK(MPI_Type_create_keyval(copy_fn, delete_fn, &k1, &ncopy));
    OK(MPI_Type_create_keyval(nocopy_fn, delete_fn, &k2, NULL));
    OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &k3, NULL));
    OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, failing_delete, &k4, NULL));
    MPI_Datatype t, d;
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_get_attr(t, k1, &val, &flag));
    CHECK(!flag, "no value yet");
    OK(MPI_Type_set_attr(t, k1, (void *)(intptr_t)100));
    OK(MPI_Type_set_attr(t, k2, (void *)(intptr_t)200));
    OK(MPI_Type_set_attr(t, k3, (void *)(intptr_t)300));
    OK(MPI_Type_get_attr(t, k1, &val, &flag));
    CHECK(flag && (intptr_t)val == 100, "k1 value");
    OK(MPI_Type_dup(t, &d));
    CHECK(ncopy == 1, "copy callback ran %d times", ncopy);
    OK(MPI_Type_get_attr(d, k1, &val, &flag));
    CHECK(flag && (intptr_t)val == 101, "copied value %ld", (long)(intptr_t)val);
    OK(MPI_Type_get_attr(d, k2, &val, &flag));
    CHECK(!flag, "k2 not copied (flag 0)");
    OK(MPI_Type_get_attr(d, k3, &val, &flag));
    CHECK(!flag, "k3 not copied (null copy function)");
    OK(MPI_Type_free(&d));
    CHECK(ndelete == 1 && last_deleted == 101, "free of the dup deleted %d (%d)", ndelete,
          last_deleted);
    OK(MPI_Type_set_attr(t, k1, (void *)(intptr_t)110)); /* replaces: deletes 100 */
    CHECK(ndelete == 2 && last_deleted == 100, "replacing deleted %d", last_deleted);
    OK(MPI_Type_delete_attr(t, k2));
    CHECK(ndelete == 3 && last_deleted == 200, "delete_attr");
    CHECK(MPI_Type_delete_attr(t, k2) == MPI_ERR_KEYVAL, "nothing to delete");
    /* attributes on a predefined type */
    OK(MPI_Type_set_attr(MPI_DOUBLE, k3, (void *)(intptr_t)5));
    OK(MPI_Type_get_attr(MPI_DOUBLE, k3, &val, &flag));
    CHECK(flag && (intptr_t)val == 5, "predefined type attribute");
    OK(MPI_Type_delete_attr(MPI_DOUBLE, k3));
    /* a failing delete callback keeps the type */
    OK(MPI_Type_set_attr(t, k4, NULL));
    MPI_Datatype keep = t;
    CHECK(MPI_Type_free(&t) == MPI_ERR_OTHER && t == keep, "failing delete keeps the type");
    int size;
    OK(MPI_Type_size(t, &size));
    CHECK(size == 2 * (int)sizeof(int), "type still usable");
    OK(MPI_Type_free_keyval(&k4)); /* the value set stays until the type is freed */
    CHECK(k4 == MPI_KEYVAL_INVALID, "keyval reset");
    /* k4's callback still fails: replace it first isn't possible (keyval freed), so
     * delete through the values: the type keeps failing to free; leave it */
    int before = ndelete;
    OK(MPI_Type_free_keyval(&k1));
    MPI_Datatype t2;
    OK(MPI_Type_contiguous(1, MPI_INT, &t2));
    CHECK(MPI_Type_set_attr(t2, k1, NULL) == MPI_ERR_KEYVAL, "freed keyval");
    int ck;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL));
    CHECK(MPI_Type_set_attr(t2, ck, NULL) == MPI_ERR_KEYVAL, "a communicator keyval");
    CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, k2, NULL) == MPI_ERR_KEYVAL, "a datatype keyval");
    OK(MPI_Comm_free_keyval(&ck));
    OK(MPI_Type_free(&t2));
    (void)before;
    OK(MPI_Type_free_keyval(&k2));
    OK(MPI_Type_free_keyval(&k3));

    /* a keyval freed while attributes hold it may be freed again until the
     * last of them is deleted; after that it is gone */
    int k5, k5a, k5b;
    MPI_Datatype a, b;
    OK(MPI_Type_dup(MPI_INT, &a));
    OK(MPI_Type_dup(MPI_INT, &b));
    OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, freeing_delete, &k5, NULL));
    k5a = k5b = k5;
    OK(MPI_Type_set_attr(a, k5, &k5));
    OK(MPI_Type_set_attr(b, k5, &k5b));
    OK(MPI_Type_free(&a));          /* its delete callback frees k5: first */
    OK(MPI_Type_free_keyval(&k5));  /* second */
    OK(MPI_Type_free_keyval(&k5a)); /* third */
    CHECK(k5 == MPI_KEYVAL_INVALID && k5a == MPI_KEYVAL_INVALID, "freed handles reset");
    flag = 0;
    OK(MPI_Type_get_attr(b, k5b, &val, &flag)); /* still held by b's attribute */
    CHECK(flag && val == &k5b, "the attribute of a freed keyval: flag %d", flag);
    OK(MPI_Type_free(&b)); /* fourth, from b's callback; the last holder is gone */
    CHECK(MPI_Type_free_keyval(&k5b) == MPI_ERR_KEYVAL, "a keyval gone: MPI_ERR_KEYVAL");
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_names();
    test_contents();
    test_subarray();
    test_darray();
    test_external32();
    test_x();
    test_attrs();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("types_more: all checks passed on %d ranks\n", np);
    OK(MPI_Finalize());
    return 0;
}
