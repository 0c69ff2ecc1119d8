/* Datatypes: sizes and extents of the basic and pair types; round trips of
 * contiguous, vector, hvector, indexed, indexed_block, hindexed, struct and
 * resized types through send/recv (blocking and not), Pack/Unpack/Pack_size,
 * Get_count/Get_elements on derived types. Needs 2 ranks. */
#include <stddef.h>
#include <string.h>

#include "mcheck.h"

static int me;

static void roundtrip(MPI_Datatype t, const void *src, void *dst, size_t bytes, int count,
                      const char *what)
{
    if (me == 0) {
        OK(MPI_Send(src, count, t, 1, 1, MPI_COMM_WORLD));
        MPI_Request r;
        OK(MPI_Isend(src, count, t, 1, 2, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else if (me == 1) {
        char *want = malloc(bytes);
        memcpy(want, dst, bytes); /* dst holds the expected image on rank 1 */
        for (int k = 1; k <= 2; k++) {
            memset(dst, 0x5a, bytes);
            MPI_Status st;
            if (k == 1) {
                OK(MPI_Recv(dst, count, t, 0, k, MPI_COMM_WORLD, &st));
            } else {
                MPI_Request r;
                OK(MPI_Irecv(dst, count, t, 0, k, MPI_COMM_WORLD, &r));
                OK(MPI_Wait(&r, &st));
            }
            int c;
            OK(MPI_Get_count(&st, t, &c));
            CHECK(c == count, "%s: count %d", what, c);
            CHECK(!memcmp(dst, want, bytes), "%s: round trip differs (pass %d)", what, k);
        }
        free(want);
    }
}

int main(int argc, char **argv)
{
    int np, sz;
    MPI_Aint lb, ext;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(np >= 2, "needs 2 ranks");
    struct {
        MPI_Datatype t;
        int size;
    } basic[] = {{MPI_CHAR, 1},
                 {MPI_SHORT, sizeof(short)},
                 {MPI_INT, sizeof(int)},
                 {MPI_LONG, sizeof(long)},
                 {MPI_LONG_LONG, 8},
                 {MPI_FLOAT, 4},
                 {MPI_DOUBLE, 8},
                 {MPI_LONG_DOUBLE, sizeof(long double)},
                 {MPI_BYTE, 1},
                 {MPI_PACKED, 1},
                 {MPI_C_BOOL, sizeof(_Bool)},
                 {MPI_INT8_T, 1},
                 {MPI_UINT64_T, 8},
                 {MPI_C_DOUBLE_COMPLEX, 16},
                 {MPI_UNSIGNED, 4},
                 {MPI_WCHAR, sizeof(wchar_t)},
                 {MPI_AINT, sizeof(MPI_Aint)}};
    for (size_t i = 0; i < sizeof basic / sizeof *basic; i++) {
        OK(MPI_Type_size(basic[i].t, &sz));
        OK(MPI_Type_get_extent(basic[i].t, &lb, &ext));
        CHECK(sz == basic[i].size && lb == 0 && ext == sz, "basic type %zu", i);
    }
    struct di {
        double d;
        int i;
    };
    OK(MPI_Type_size(MPI_DOUBLE_INT, &sz));
    OK(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext));
    CHECK(sz == 12 && ext == sizeof(struct di), "DOUBLE_INT size %d extent %ld", sz, (long)ext);
    OK(MPI_Type_size(MPI_2INT, &sz));
    CHECK(sz == 8, "2INT");

    /* vector: every other element of a 4x6 matrix column block */
    double m[24], got[24];
    for (int i = 0; i < 24; i++) m[i] = i + 0.5;
    MPI_Datatype vec, col;
    OK(MPI_Type_vector(4, 2, 6, MPI_DOUBLE, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Type_size(vec, &sz));
    OK(MPI_Type_get_extent(vec, &lb, &ext));
    CHECK(sz == 64 && ext == (3 * 6 + 2) * 8, "vector size %d extent %ld", sz, (long)ext);
    memset(got, 0x5a, sizeof got);
    for (int r = 0; r < 4; r++) memcpy(&got[r * 6], &m[r * 6], 16);
    roundtrip(vec, m, me == 1 ? got : m, sizeof got, 1, "vector");
    MPI_Datatype col0;
    OK(MPI_Type_create_hvector(4, 1, 6 * sizeof(double), MPI_DOUBLE, &col0));
    OK(MPI_Type_create_resized(col0, 0, sizeof(double), &col));
    OK(MPI_Type_free(&col0));
    OK(MPI_Type_commit(&col));
    /* a vector on one side, contiguous on the other: signatures match */
    if (me == 0) OK(MPI_Send(m, 6, col, 1, 3, MPI_COMM_WORLD));
    if (me == 1) {
        double c[24];
        OK(MPI_Recv(c, 24, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < 6; k++) /* column k of the 4x6 matrix */
            for (int j = 0; j < 4; j++) CHECK(c[k * 4 + j] == m[j * 6 + k], "hvector column");
    }

    /* indexed and indexed_block */
    int a[20], ag[20];
    for (int i = 0; i < 20; i++) a[i] = 100 + i;
    int bl[3] = {2, 1, 3}, dp[3] = {0, 5, 12};
    MPI_Datatype idx, blk;
    OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &idx));
    OK(MPI_Type_commit(&idx));
    memset(ag, 0x5a, sizeof ag);
    for (int k = 0; k < 3; k++) memcpy(&ag[dp[k]], &a[dp[k]], (size_t)bl[k] * sizeof(int));
    roundtrip(idx, a, me == 1 ? ag : a, sizeof ag, 1, "indexed");
    int dp2[3] = {1, 7, 15};
    OK(MPI_Type_create_indexed_block(3, 2, dp2, MPI_INT, &blk));
    OK(MPI_Type_commit(&blk));
    memset(ag, 0x5a, sizeof ag);
    for (int k = 0; k < 3; k++) memcpy(&ag[dp2[k]], &a[dp2[k]], 2 * sizeof(int));
    roundtrip(blk, a, me == 1 ? ag : a, sizeof ag, 1, "indexed_block");

    /* struct with padding, two instances */
    struct rec {
        char c;
        double d;
        int i[2];
    } s[2] = {{'x', 1.5, {1, 2}}, {'y', 2.5, {3, 4}}}, sg[2];
    int sbl[3] = {1, 1, 2};
    MPI_Aint sdp[3] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i)};
    MPI_Datatype sty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, st;
    OK(MPI_Type_create_struct(3, sbl, sdp, sty, &st));
    OK(MPI_Type_commit(&st));
    OK(MPI_Type_get_extent(st, &lb, &ext));
    CHECK(ext == sizeof(struct rec), "struct extent %ld want %zu", (long)ext, sizeof(struct rec));
    OK(MPI_Type_size(st, &sz));
    CHECK(sz == 1 + 8 + 8, "struct size %d", sz);
    memset(sg, 0x5a, sizeof sg);
    for (int k = 0; k < 2; k++) {
        sg[k].c = s[k].c;
        sg[k].d = s[k].d;
        sg[k].i[0] = s[k].i[0];
        sg[k].i[1] = s[k].i[1];
    }
    roundtrip(st, s, me == 1 ? (void *)sg : (void *)s, sizeof sg, 2, "struct");
    if (me == 0) OK(MPI_Send(s, 2, st, 1, 4, MPI_COMM_WORLD));
    if (me == 1) { /* elements: 4 basic elements per record; receive 1.5 records */
        MPI_Status stt;
        char raw[64];
        OK(MPI_Recv(raw, 64, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &stt));
        int e, c;
        OK(MPI_Get_elements(&stt, st, &e));
        OK(MPI_Get_count(&stt, st, &c));
        CHECK(e == 8 && c == 2, "elements %d count %d", e, c);
        stt.cr_bytes = 17 + 9; /* one record and char + double */
        OK(MPI_Get_elements(&stt, st, &e));
        OK(MPI_Get_count(&stt, st, &c));
        CHECK(e == 6 && c == MPI_UNDEFINED, "partial elements %d count %d", e, c);
    }

    /* resized and contiguous-of-derived */
    MPI_Datatype rs, cont;
    OK(MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &rs));
    OK(MPI_Type_commit(&rs));
    OK(MPI_Type_contiguous(4, rs, &cont));
    OK(MPI_Type_commit(&cont));
    OK(MPI_Type_size(cont, &sz));
    OK(MPI_Type_get_extent(cont, &lb, &ext));
    CHECK(sz == 16 && ext == 48, "contiguous of resized: %d %ld", sz, (long)ext);
    memset(ag, 0x5a, sizeof ag);
    for (int k = 0; k < 4; k++) ag[3 * k] = a[3 * k];
    roundtrip(cont, a, me == 1 ? ag : a, 12 * sizeof(int), 1, "resized");
    MPI_Aint tlb, text;
    OK(MPI_Type_get_true_extent(cont, &tlb, &text));
    CHECK(tlb == 0 && text == 10 * (MPI_Aint)sizeof(int), "true extent %ld", (long)text);

    /* Pack / Unpack */
    char pbuf[256];
    int pos = 0, psz;
    OK(MPI_Pack_size(1, vec, MPI_COMM_WORLD, &psz));
    CHECK(psz >= 64, "pack size");
    OK(MPI_Pack(m, 1, vec, pbuf, sizeof pbuf, &pos, MPI_COMM_WORLD));
    OK(MPI_Pack(a, 1, idx, pbuf, sizeof pbuf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 64 + 24, "pack position %d", pos);
    if (me == 0) OK(MPI_Send(pbuf, pos, MPI_PACKED, 1, 5, MPI_COMM_WORLD));
    if (me == 1) {
        char in[256];
        double mm[24];
        int aa[20];
        MPI_Status stt;
        OK(MPI_Recv(in, 256, MPI_PACKED, 0, 5, MPI_COMM_WORLD, &stt));
        int n, p = 0;
        OK(MPI_Get_count(&stt, MPI_PACKED, &n));
        memset(mm, 0, sizeof mm);
        memset(aa, 0, sizeof aa);
        OK(MPI_Unpack(in, n, &p, mm, 1, vec, MPI_COMM_WORLD));
        OK(MPI_Unpack(in, n, &p, aa, 1, idx, MPI_COMM_WORLD));
        CHECK(mm[0] == m[0] && mm[19] == m[19] && mm[2] == 0, "unpack vector");
        CHECK(aa[12] == a[12] && aa[14] == a[14] && aa[2] == 0, "unpack indexed");
    }
    MPI_Datatype dupt;
    OK(MPI_Type_dup(vec, &dupt));
    OK(MPI_Type_size(dupt, &sz));
    CHECK(sz == 64, "dup");
    MPI_Datatype all[] = {vec, col, idx, blk, st, rs, cont, dupt};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) OK(MPI_Type_free(&all[i]));
    CHECK(all[0] == MPI_DATATYPE_NULL, "freed");
    OK(MPI_Finalize());
    if (me == 0) printf("mpi types: ok\n");
    return 0;
}
