/* The large-count _c forms (src/api/mpi_large.c, mpi_large_coll.c).
 * Small counts: each family's _c form gives what its int form gives
 * (point-to-point with MPI_Get_count_c, collectives blocking, nonblocking,
 * persistent, v forms and neighbourhood, one-sided, packing, datatype
 * constructors and queries, user operations (MPI_Op_create_c's too), files). Counts past INT_MAX,
 * for real: 2^31 + 8 bytes sent with MPI_Send_c into MPI_Irecv_c and broadcast with MPI_Bcast_c,
 * MPI_Get_count_c saying 2^31 + 8 (MPI_Get_count: MPI_UNDEFINED), the data checked; MPI_Pack_c of
 * as many; the size of MPI_Type_contiguous_c of as many. The big buffers cost 1 MiB of memory each:
 * one memfd page set mapped 2,049 times back to back (the data is the same 1 MiB pattern over and
 * over, which is what is checked, and what a receive writes through the aliases is that pattern
 * again). Runs on 2 ranks (1: the local parts only). */
#define _GNU_SOURCE
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

#define PAGE (1u << 20)
#define BIG (((MPI_Count)1 << 31) + 8)

static unsigned char pat(size_t i)
{
    return (unsigned char)(i * 131 + (i >> 9) * 7 + 3);
}

/* A buffer of BIG bytes made of one 1 MiB memfd mapped again and again; the page
 * tables filled in as it is mapped (MAP_POPULATE), not by 2^19 page faults per
 * buffer later (which made the test three times slower). */
static unsigned char *aliased(int fill)
{
    int fd = memfd_create("large", 0);
    if (fd < 0 || ftruncate(fd, PAGE)) return NULL;
    size_t n = (size_t)(BIG + PAGE - 1) / PAGE;
    unsigned char *base = mmap(NULL, n * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    for (size_t k = 0; k < n; k++)
        if (mmap(base + k * PAGE, PAGE, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) == MAP_FAILED)
            return NULL;
    close(fd);
    for (size_t i = 0; i < PAGE; i++) base[i] = fill ? pat(i) : 0;
    return base;
}

static void unalias(unsigned char *p)
{
    munmap(p, ((size_t)(BIG + PAGE - 1) / PAGE) * PAGE);
}

/* The pattern at every place of a received big buffer: its one page, and
 * the bytes past 2^31 seen through the last alias. */
static void check_big(const unsigned char *b, const char *what)
{
    size_t bad = PAGE;
    for (size_t i = 0; i < PAGE && bad == PAGE; i++)
        if (b[i] != pat(i)) bad = i;
    CHECK(bad == PAGE, "%s: byte %zu is %d, not %d", what, bad, b[bad % PAGE], pat(bad % PAGE));
    for (MPI_Count i = BIG - 16; i < BIG; i++)
        CHECK(b[i] == pat((size_t)i % PAGE), "%s: byte %lld wrong", what, (long long)i);
}

static void big_counts(void)
{
    MPI_Datatype t;
    MPI_Count sz = 0, lb = -1, ext = 0;
    int isz = 0;
    CHECK(MPI_Type_contiguous_c(BIG, MPI_BYTE, &t) == MPI_SUCCESS, "Type_contiguous_c");
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_extent_c(t, &lb, &ext);
    MPI_Type_size(t, &isz);
    CHECK(sz == BIG && lb == 0 && ext == BIG,
          "contiguous_c of 2^31+8 bytes: size %lld, extent %lld", (long long)sz, (long long)ext);
    CHECK(isz == MPI_UNDEFINED, "MPI_Type_size of 2^31+8 bytes: %d", isz);
    MPI_Type_free(&t);
    /* a block past INT_MAX in an hindexed type, a short one after it */
    MPI_Count bl[2] = {BIG, 3}, di[2] = {16, BIG + 64};
    CHECK(MPI_Type_create_hindexed_c(2, bl, di, MPI_BYTE, &t) == MPI_SUCCESS, "hindexed_c");
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_extent_c(t, &lb, &ext);
    CHECK(sz == BIG + 3 && lb == 16 && ext == BIG + 64 + 3 - 16,
          "hindexed_c with a block of 2^31+8: size %lld, lb %lld, extent %lld", (long long)sz,
          (long long)lb, (long long)ext);
    MPI_Type_free(&t);
    MPI_Count ps = 0;
    MPI_Pack_size_c(BIG, MPI_BYTE, MPI_COMM_WORLD, &ps);
    CHECK(ps == BIG, "Pack_size_c %lld", (long long)ps);

    unsigned char *s = aliased(1), *r = aliased(0);
    CHECK(s && r, "mapping the big buffers");
    if (!s || !r) return;
    /* MPI_Pack_c of 2^31 + 8 bytes: position past INT_MAX */
    MPI_Count pos = 0;
    CHECK(MPI_Pack_c(s, BIG, MPI_BYTE, r, BIG, &pos, MPI_COMM_WORLD) == MPI_SUCCESS, "Pack_c");
    CHECK(pos == BIG, "Pack_c position %lld", (long long)pos);
    check_big(r, "MPI_Pack_c");
    memset(r, 0, PAGE);
    if (wsize >= 2 && wrank < 2) {
        MPI_Status st;
        if (wrank == 0) {
            CHECK(MPI_Send_c(s, BIG, MPI_BYTE, 1, 5, MPI_COMM_WORLD) == MPI_SUCCESS, "Send_c");
        } else {
            MPI_Request rq;
            CHECK(MPI_Irecv_c(r, BIG, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &rq) == MPI_SUCCESS,
                  "Irecv_c");
            MPI_Wait(&rq, &st);
            MPI_Count n = 0;
            int in = 0;
            MPI_Get_count_c(&st, MPI_BYTE, &n);
            MPI_Get_count(&st, MPI_BYTE, &in);
            CHECK(n == BIG, "Get_count_c after 2^31+8 bytes: %lld", (long long)n);
            CHECK(in == MPI_UNDEFINED, "Get_count after 2^31+8 bytes: %d", in);
            MPI_Get_elements_c(&st, MPI_BYTE, &n);
            CHECK(n == BIG, "Get_elements_c: %lld", (long long)n);
            check_big(r, "MPI_Send_c -> MPI_Irecv_c");
        }
    }
    memset(r, 0, PAGE);
    unsigned char *b = wrank == 0 ? s : r;
    CHECK(MPI_Bcast_c(b, BIG, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "Bcast_c");
    check_big(b, "MPI_Bcast_c");
    unalias(s);
    unalias(r);
}

/* ---- small counts: the _c form against the int form ------------------------ */

static void sum3(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)io)[i] = 3 * ((int *)io)[i] + ((int *)in)[i];
}

static void sum3_c(void *in, void *io, MPI_Count *len, MPI_Datatype *dt)
{
    (void)dt;
    for (MPI_Count i = 0; i < *len; i++) ((int *)io)[i] = 3 * ((int *)io)[i] + ((int *)in)[i];
}

static void small_counts(void)
{
    enum { N = 37 };
    int np = wsize, me = wrank;
    int *s = malloc(sizeof(int) * N * (size_t)np), *r0 = malloc(sizeof(int) * N * (size_t)np),
        *r1 = malloc(sizeof(int) * N * (size_t)np);
    for (int i = 0; i < N * np; i++) s[i] = me * 1000 + i;
#define SAME(what) CHECK(!memcmp(r0, r1, sizeof(int) * N * (size_t)np), "%s: _c differs", what)
#define CLEAR()                                                                                    \
    (memset(r0, 0x5a, sizeof(int) * N * (size_t)np), memset(r1, 0x5a, sizeof(int) * N * (size_t)np))
    /* point-to-point round a ring, with the status */
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Status st;
    CLEAR();
    MPI_Sendrecv(s, N, MPI_INT, right, 1, r0, N, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
    CHECK(MPI_Sendrecv_c(s, N, MPI_INT, right, 1, r1, N, MPI_INT, left, 1, MPI_COMM_WORLD, &st) ==
              MPI_SUCCESS,
          "Sendrecv_c");
    MPI_Count n = 0;
    MPI_Get_count_c(&st, MPI_INT, &n);
    CHECK(n == N, "Get_count_c %lld", (long long)n);
    SAME("Sendrecv");
    MPI_Request q[2];
    CLEAR();
    MPI_Irecv_c(r1, N, MPI_INT, left, 2, MPI_COMM_WORLD, &q[0]);
    MPI_Isend_c(s, N, MPI_INT, right, 2, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Sendrecv(s, N, MPI_INT, right, 1, r0, N, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
    SAME("Isend_c/Irecv_c");
    /* persistent point-to-point */
    CLEAR();
    MPI_Recv_init_c(r1, N, MPI_INT, left, 3, MPI_COMM_WORLD, &q[0]);
    MPI_Send_init_c(s, N, MPI_INT, right, 3, MPI_COMM_WORLD, &q[1]);
    MPI_Startall(2, q);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    MPI_Sendrecv(s, N, MPI_INT, right, 1, r0, N, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
    SAME("Send_init_c/Recv_init_c");
    /* collectives */
    CLEAR();
    MPI_Allreduce(s, r0, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce_c(s, r1, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    SAME("Allreduce");
    MPI_Op op;
    MPI_Op_create(sum3, 0, &op);
    CLEAR();
    MPI_Scan(s, r0, N, MPI_INT, op, MPI_COMM_WORLD);
    MPI_Scan_c(s, r1, N, MPI_INT, op, MPI_COMM_WORLD);
    SAME("Scan, user operation");
    MPI_Op opc;
    MPI_Op_create_c(sum3_c, 0, &opc);
    CLEAR();
    MPI_Exscan(s, r0, N, MPI_INT, op, MPI_COMM_WORLD);
    MPI_Exscan_c(s, r1, N, MPI_INT, opc, MPI_COMM_WORLD);
    if (me) SAME("Exscan_c, MPI_Op_create_c's operation");
    CLEAR();
    MPI_Reduce_init_c(s, r1, N, MPI_INT, opc, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
    MPI_Start(&q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Request_free(&q[0]);
    MPI_Reduce(s, r0, N, MPI_INT, op, 0, MPI_COMM_WORLD);
    SAME("Reduce_init_c, MPI_Op_create_c's operation");
    MPI_Op_free(&opc);
    CLEAR();
    MPI_Iallreduce_c(s, r1, N, MPI_INT, op, MPI_COMM_WORLD, &q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Allreduce(s, r0, N, MPI_INT, op, MPI_COMM_WORLD);
    SAME("Iallreduce_c, user operation");
    CLEAR();
    MPI_Allreduce_init_c(s, r1, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
    for (int k = 0; k < 2; k++) {
        MPI_Start(&q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&q[0]);
    MPI_Allreduce(s, r0, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    SAME("Allreduce_init_c");
    CLEAR();
    MPI_Allgather(s, N, MPI_INT, r0, N, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgather_c(s, N, MPI_INT, r1, N, MPI_INT, MPI_COMM_WORLD);
    SAME("Allgather");
    CLEAR();
    MPI_Reduce_scatter_block(s, r0, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block_c(s, r1, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    SAME("Reduce_scatter_block");
    int *c = malloc(sizeof(int) * (size_t)np * 2), *d = c + np;
    MPI_Count *cc = malloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *dd = malloc(sizeof(MPI_Aint) * (size_t)np);
    for (int i = 0; i < np; i++) {
        c[i] = cc[i] = (i % 3) + 2;
        d[i] = (int)(dd[i] = i * 6 + 1);
    }
    CLEAR();
    MPI_Gatherv(s, c[me], MPI_INT, r0, c, d, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv_c(s, c[me], MPI_INT, r1, cc, dd, MPI_INT, 0, MPI_COMM_WORLD);
    SAME("Gatherv");
    /* to rank i c[i]; from each rank c[me] */
    int *rc = malloc(sizeof(int) * (size_t)np);
    MPI_Count *rcc = malloc(sizeof(MPI_Count) * (size_t)np);
    for (int i = 0; i < np; i++) rc[i] = (int)(rcc[i] = c[me]);
    CLEAR();
    MPI_Ialltoallv_c(s, cc, dd, MPI_INT, r1, rcc, dd, MPI_INT, MPI_COMM_WORLD, &q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Alltoallv(s, c, d, MPI_INT, r0, rc, d, MPI_INT, MPI_COMM_WORLD);
    free(rc), free(rcc);
    SAME("Ialltoallv_c");
    /* neighbourhood on a ring */
    MPI_Comm ring;
    int dims[1] = {np}, per[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &ring);
    MPI_Aint nd[2] = {0, 9};
    int nci[2] = {5, 7}, ndi[2] = {0, 9};
    {
        /* each neighbour receives what the other side sends it: the left one
         * gets block 0 (5), the right one block 1 (7); so I receive 7 from
         * the left and 5 from the right */
        int rci[2] = {7, 5};
        MPI_Count rc2[2] = {7, 5}, sc2[2] = {5, 7};
        CLEAR();
        MPI_Neighbor_alltoallv(s, nci, ndi, MPI_INT, r0, rci, ndi, MPI_INT, ring);
        MPI_Neighbor_alltoallv_c(s, sc2, nd, MPI_INT, r1, rc2, nd, MPI_INT, ring);
        SAME("Neighbor_alltoallv_c");
    }
    CLEAR();
    MPI_Neighbor_allgather(s, N / 2, MPI_INT, r0, N / 2, MPI_INT, ring);
    MPI_Neighbor_allgather_c(s, N / 2, MPI_INT, r1, N / 2, MPI_INT, ring);
    SAME("Neighbor_allgather_c");
    MPI_Comm_free(&ring);
    /* one-sided: a put to the right, a get from the left */
    MPI_Win w;
    int *wb;
    MPI_Win_allocate_c((MPI_Aint)(sizeof(int) * N), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wb,
                       &w);
    for (int i = 0; i < N; i++) wb[i] = -1;
    MPI_Win_fence(0, w);
    MPI_Put_c(s, N, MPI_INT, right, 0, N, MPI_INT, w);
    MPI_Win_fence(0, w);
    for (int i = 0; i < N; i++) CHECK(wb[i] == left * 1000 + i, "Put_c: [%d] = %d", i, wb[i]);
    CLEAR();
    MPI_Get_c(r1, N, MPI_INT, left, 0, N, MPI_INT, w);
    MPI_Win_fence(0, w);
    for (int i = 0; i < N; i++)
        CHECK(r1[i] == ((left + np - 1) % np) * 1000 + i, "Get_c: [%d] = %d", i, r1[i]);
    MPI_Win_free(&w);
    /* packing, datatypes */
    MPI_Datatype v0, v1;
    MPI_Type_vector(3, 2, 5, MPI_INT, &v0);
    MPI_Type_vector_c(3, 2, 5, MPI_INT, &v1);
    MPI_Count sz0 = 0, sz1 = 0;
    MPI_Type_size_x(v0, &sz0);
    MPI_Type_size_c(v1, &sz1);
    CHECK(sz0 == sz1 && sz1 == 24, "Type_vector_c size %lld", (long long)sz1);
    MPI_Type_commit(&v1);
    char pk[64];
    MPI_Count pos = 0;
    MPI_Pack_c(s, 1, v1, pk, sizeof pk, &pos, MPI_COMM_WORLD);
    CHECK(pos == 24, "Pack_c position %lld", (long long)pos);
    int un[15];
    memset(un, 0, sizeof un);
    pos = 0;
    MPI_Unpack_c(pk, sizeof pk, &pos, un, 1, v1, MPI_COMM_WORLD);
    CHECK(un[0] == s[0] && un[1] == s[1] && un[5] == s[5] && un[11] == s[11] && un[2] == 0,
          "Unpack_c");
    MPI_Type_free(&v0);
    MPI_Type_free(&v1);
    /* files: each rank writes its ints with _c calls and reads them back */
    char path[96];
    snprintf(path, sizeof path, "/tmp/courier_large_%d_%d", (int)getpid(), me);
    MPI_File fh;
    MPI_Status fst;
    CHECK(MPI_File_open(MPI_COMM_SELF, path,
                        MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                        &fh) == MPI_SUCCESS,
          "File_open");
    CHECK(MPI_File_write_at_c(fh, 0, s, N, MPI_INT, &fst) == MPI_SUCCESS, "File_write_at_c");
    MPI_Get_count_c(&fst, MPI_INT, &n);
    CHECK(n == N, "File_write_at_c wrote %lld", (long long)n);
    CLEAR();
    CHECK(MPI_File_read_at_c(fh, 0, r1, N, MPI_INT, &fst) == MPI_SUCCESS, "File_read_at_c");
    CHECK(!memcmp(s, r1, sizeof(int) * N), "File_read_at_c: the data differs");
    MPI_Count fext = 0;
    MPI_File_get_type_extent_c(fh, MPI_INT, &fext);
    CHECK(fext == sizeof(int), "File_get_type_extent_c %lld", (long long)fext);
    CHECK(MPI_File_read_at_c(fh, 0, r1, -1, MPI_INT, &fst) == MPI_ERR_COUNT,
          "a negative count, on the file's handler (errors return)");
    MPI_File_close(&fh);
    /* errors: a negative count, a user operation on more than INT_MAX elements */
    MPI_Comm e;
    MPI_Comm_dup(MPI_COMM_WORLD, &e);
    MPI_Comm_set_errhandler(e, MPI_ERRORS_RETURN);
    CHECK(MPI_Send_c(s, -1, MPI_INT, right, 0, e) == MPI_ERR_COUNT, "negative count");
    CHECK(MPI_Iallreduce_c(s, r1, BIG, MPI_INT, op, e, &q[0]) == MPI_ERR_COUNT,
          "user operation on 2^31+8 elements");
    MPI_Comm_free(&e);
    MPI_Op_free(&op);
    free(s), free(r0), free(r1), free(c), free(cc), free(dd);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    small_counts();
    big_counts();
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf(all ? "large: %d FAILURES\n" : "large: all passed\n", all);
    MPI_Finalize();
    return all != 0;
}
