/* MPI-IO conformance (src/api/mpi_file*.c): io PART DIR runs one part with
 * its files in DIR (made and removed here); each part checks the file's
 * bytes against what a plain sequential computation says they must be.
 *   files    open/close/delete, amodes, sizes (a set_size to the size the
 *            file has leaves it untouched), hints, groups, errhandlers
 *   strided  a vector filetype view, _all writes (collective buffering) and
 *            reads back by every rank, byte for byte; independent too
 *   types    subarray and darray views, struct/resized filetypes
 *   ext32    "external32" on disk is big-endian; round trip; a user datarep
 *   ext32x   "external32" views of longs (4 bytes in the file, 8 in memory):
 *            plain, a resized filetype interleaving ranks, a struct
 *   userrep  a registered representation storing ints in 8 bytes: views
 *            laid out in its sizes, its conversions given 8 bytes an int
 *   shared   _shared accesses never overlap; _ordered gives rank order
 *   nonblock iread/iwrite[_at][_all][_shared] through MPI_Wait/Test
 *   split    split collectives; seek, positions, byte offsets; atomic mode
 *   wronly   a collective write with holes into a write-only file keeps them;
 *            the file is opened for reading too underneath (its descriptor
 *            says O_RDWR), the program's reads still refused
 *   pending  nonblocking accesses run in the background: a request stays
 *            pending while its I/O is held up (atomic mode, a byte-range
 *            lock another rank holds) and completes once it is let go;
 *            program order of queued accesses; split collectives likewise
 *   seqview  MPI_DISPLACEMENT_CURRENT in a file open MPI_MODE_SEQUENTIAL:
 *            every rank's view starts where the shared pointer was
 *   pieces   collective buffering with more pieces in a window than one
 *            pwritev takes, holes kept, a read past the end, a read whose
 *            window has a gap of megabytes
 *   errors   missing file, amode conflicts, amodes or files that differ between
 *            ranks, read past the end, read-only,
 *            permission (as root: under another uid), handlers, a view whose
 *            arguments are wrong on one rank only (every rank fails) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../mpi/mcheck.h"

static int me, np;
static char dir[512];

static char *path(const char *name)
{
    static char p[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* the whole file, read with POSIX calls */
static unsigned char *slurp(const char *p, long *len)
{
    FILE *fp = fopen(p, "rb");
    CHECK(fp, "cannot open %s", p);
    fseek(fp, 0, SEEK_END);
    *len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)*len + 1);
    CHECK(fread(b, 1, (size_t)*len, fp) == (size_t)*len, "short read of %s", p);
    fclose(fp);
    return b;
}

/* The whole file once every rank's writes through fh are in it. */
static unsigned char *sync_slurp(MPI_File fh, const char *p, long *len)
{
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    return slurp(p, len);
}

static int count_of(MPI_Status *st, MPI_Datatype t)
{
    int c = -1;
    OK(MPI_Get_count(st, t, &c));
    return c;
}

static void part_files(void)
{
    MPI_File fh;
    char *p = path("files.dat");
    /* create, excl */
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                     MPI_INFO_NULL, &fh));
    int amode;
    OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR), "amode %#x", amode);
    MPI_Errhandler eh;
    OK(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "files default to MPI_ERRORS_RETURN");
    OK(MPI_File_set_size(fh, 1000));
    MPI_Offset sz;
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 1000, "size %lld", (long long)sz);
    OK(MPI_File_preallocate(fh, 500)); /* never shrinks */
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 1000, "size after preallocate(500) %lld", (long long)sz);
    OK(MPI_File_preallocate(fh, 4096));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 4096, "size after preallocate(4096) %lld", (long long)sz);
    /* a size the file has already changes nothing, not even its times (an
     * ftruncate would: ext4 also takes one to 0 as replace-by-truncate and
     * writes the whole file back at close) */
    struct stat sb;
    if (me == 0) {
        struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
        CHECK(utimensat(AT_FDCWD, p, old, 0) == 0, "utimensat %s: %s", p, strerror(errno));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_set_size(fh, 4096));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 4096, "size after set_size(4096) %lld", (long long)sz);
    CHECK(stat(p, &sb) == 0 && sb.st_mtime == 1000000000,
          "rank %d: MPI_File_set_size to the size the file has touched it (mtime %lld)", me,
          (long long)sb.st_mtime);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group g, wg;
    int cmp;
    OK(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "group");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    /* hints */
    MPI_Info in, used;
    MPI_Info_create(&in);
    MPI_Info_set(in, "cb_buffer_size", "65536");
    MPI_Info_set(in, "cb_nodes", "2");
    MPI_Info_set(in, "romio_cb_write", "enable");
    MPI_Info_set(in, "striping_factor", "4");
    MPI_Info_set(in, "striping_unit", "1048576");
    MPI_Info_set(in, "no_such_hint", "x");
    OK(MPI_File_set_info(fh, in));
    OK(MPI_File_get_info(fh, &used));
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && !strcmp(v, "65536"), "cb_buffer_size %s", v);
    MPI_Info_get(used, "cb_nodes", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && atoi(v) == (np < 2 ? np : 2), "cb_nodes %s", v);
    MPI_Info_get(used, "romio_cb_write", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && !strcmp(v, "enable"), "romio_cb_write %s", v);
    MPI_Info_get(used, "striping_unit", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && !strcmp(v, "1048576"), "striping_unit %s", v);
    MPI_Info_free(&used);
    MPI_Info_free(&in);
    OK(MPI_File_sync(fh));
    MPI_Fint fi = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(fi) == fh, "c2f/f2c");
    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close sets MPI_FILE_NULL");
    /* excl on an existing file */
    int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_FILE_EXISTS, "EXCL of an existing file: class %d", cls);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) OK(MPI_File_delete(p, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(p, F_OK) != 0, "deleted");
    /* delete on close */
    OK(MPI_File_open(MPI_COMM_WORLD, p,
                     MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                     &fh));
    OK(MPI_File_close(&fh));
    CHECK(access(p, F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE");
    /* on MPI_COMM_SELF, each its own file */
    char own[64];
    snprintf(own, sizeof own, "self.%d", me);
    OK(MPI_File_open(MPI_COMM_SELF, path(own), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                     &fh));
    OK(MPI_File_write(fh, own, (int)strlen(own), MPI_CHAR, MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));
    long n;
    unsigned char *b = slurp(path(own), &n);
    CHECK(n == (long)strlen(own) && !memcmp(b, own, (size_t)n), "self file");
    free(b);
    unlink(path(own));
}

/* Every rank owns blocks of B ints every np blocks: a vector filetype. */
static void part_strided(const char *hint)
{
    const int B = 3, N = 1000; /* blocks per rank */
    char *p = path("strided.dat");
    MPI_File fh;
    MPI_Info in;
    MPI_Info_create(&in);
    if (hint) MPI_Info_set(in, "romio_cb_write", hint), MPI_Info_set(in, "romio_cb_read", hint);
    MPI_Info_set(in, "cb_buffer_size", "4096"); /* many rounds */
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, in, &fh));
    MPI_Info_free(&in);
    MPI_Datatype ft;
    MPI_Type_vector(N, B, B * np, MPI_INT, &ft);
    MPI_Datatype ftr;
    MPI_Type_create_resized(ft, 0, (MPI_Aint)sizeof(int) * B * np * N, &ftr);
    MPI_Type_commit(&ftr);
    OK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * B * me, MPI_INT, ftr, "native",
                         MPI_INFO_NULL));
    int *w = malloc(sizeof(int) * B * N), *r = malloc(sizeof(int) * B * N);
    for (int i = 0; i < B * N; i++) w[i] = me * 1000000 + i;
    MPI_Status st;
    OK(MPI_File_write_all(fh, w, B * N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == B * N, "write_all count");
    MPI_Offset pos;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == B * N, "position %lld", (long long)pos);
    OK(MPI_File_sync(fh));
    /* the bytes, as a sequential program would lay them */
    long n;
    unsigned char *b = slurp(p, &n);
    CHECK(n == (long)sizeof(int) * B * N * np, "file size %ld", n);
    for (int blk = 0; blk < N * np; blk++)
        for (int j = 0; j < B; j++) {
            int owner = blk % np, i = (blk / np) * B + j, got;
            memcpy(&got, b + sizeof(int) * ((size_t)blk * B + (size_t)j), sizeof got);
            CHECK(got == owner * 1000000 + i, "int at block %d+%d: %d", blk, j, got);
        }
    free(b);
    /* read back collectively, then each rank reads another rank's part */
    OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(r, 0, sizeof(int) * B * N);
    OK(MPI_File_read_all(fh, r, B * N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == B * N, "read_all count");
    CHECK(!memcmp(r, w, sizeof(int) * B * N), "read_all data");
    int other = (me + 1) % np;
    OK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * B * other, MPI_INT, ftr, "native",
                         MPI_INFO_NULL));
    memset(r, 0, sizeof(int) * B * N);
    OK(MPI_File_read_at(fh, 0, r, B * N, MPI_INT, &st)); /* independent: data sieving */
    for (int i = 0; i < B * N; i++) CHECK(r[i] == other * 1000000 + i, "read_at %d: %d", i, r[i]);
    /* independent strided writes (sieving under a lock), then check */
    OK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * B * me, MPI_INT, ftr, "native",
                         MPI_INFO_NULL));
    for (int i = 0; i < B * N; i++) w[i] = -(me * 1000000 + i);
    OK(MPI_File_write_at(fh, 0, w, B * N, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    b = slurp(p, &n);
    for (int blk = 0; blk < N * np; blk++)
        for (int j = 0; j < B; j++) {
            int owner = blk % np, i = (blk / np) * B + j, got;
            memcpy(&got, b + sizeof(int) * ((size_t)blk * B + (size_t)j), sizeof got);
            CHECK(got == -(owner * 1000000 + i), "independent int at block %d+%d: %d", blk, j, got);
        }
    free(b);
    MPI_Type_free(&ft);
    MPI_Type_free(&ftr);
    free(w);
    free(r);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

/* A 2-D array of doubles, G x G, in row-major order in the file; each rank
 * writes its block through a subarray (then a darray) view with a
 * non-contiguous memory type (a halo around the block). */
static void part_types(void)
{
    const int G = 24;
    char *p = path("types.dat");
    int dims[2] = {0, 0};
    MPI_Dims_create(np, 2, dims);
    int px = me / dims[1], py = me % dims[1];
    int lx = G / dims[0], ly = G / dims[1];
    int gs[2] = {G, G}, ls[2] = {lx, ly}, st0[2] = {px * lx, py * ly};
    MPI_Datatype sub, mem;
    MPI_Type_create_subarray(2, gs, ls, st0, MPI_ORDER_C, MPI_DOUBLE, &sub);
    MPI_Type_commit(&sub);
    int ms[2] = {lx + 2, ly + 2}, mst[2] = {1, 1};
    MPI_Type_create_subarray(2, ms, ls, mst, MPI_ORDER_C, MPI_DOUBLE, &mem);
    MPI_Type_commit(&mem);
    double *a = calloc((size_t)(lx + 2) * (size_t)(ly + 2), sizeof *a);
    for (int i = 0; i < lx; i++)
        for (int j = 0; j < ly; j++)
            a[(i + 1) * (ly + 2) + j + 1] = (st0[0] + i) * 1000.0 + (st0[1] + j);
    for (int round = 0; round < 2; round++) {
        MPI_Datatype view = sub;
        if (round == 1) { /* the same blocks as a darray */
            int distrib[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
            int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
            MPI_Type_create_darray(np, me, 2, gs, distrib, dargs, dims, MPI_ORDER_C, MPI_DOUBLE,
                                   &view);
            MPI_Type_commit(&view);
        }
        MPI_File fh;
        OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
        OK(MPI_File_set_view(fh, 0, MPI_DOUBLE, view, "native", MPI_INFO_NULL));
        MPI_Datatype e2, f2;
        MPI_Offset d2;
        char rep[MPI_MAX_DATAREP_STRING];
        OK(MPI_File_get_view(fh, &d2, &e2, &f2, rep));
        CHECK(d2 == 0 && e2 == MPI_DOUBLE && !strcmp(rep, "native"), "get_view");
        int comb, ni, na, nd;
        MPI_Type_get_envelope(f2, &ni, &na, &nd, &comb);
        CHECK(comb == MPI_COMBINER_DUP, "get_view's filetype is a new handle (combiner %d)", comb);
        MPI_Type_free(&f2);
        OK(MPI_File_write_all(fh, a, 1, mem, MPI_STATUS_IGNORE));
        OK(MPI_File_close(&fh));
        if (me == 0) {
            long n;
            unsigned char *b = slurp(p, &n);
            CHECK(n == (long)sizeof(double) * G * G, "size %ld", n);
            for (int i = 0; i < G; i++)
                for (int j = 0; j < G; j++) {
                    double x;
                    memcpy(&x, b + sizeof(double) * (size_t)(i * G + j), sizeof x);
                    CHECK(x == i * 1000.0 + j, "element %d,%d: %g (round %d)", i, j, x, round);
                }
            free(b);
            unlink(p);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (round == 1) MPI_Type_free(&view);
    }
    /* a struct filetype with a gap, resized: int + skip 4 + double, per rank */
    MPI_Datatype st, ft;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, disp, ty, &st);
    MPI_Type_create_resized(st, 0, 16 * np, &ft);
    MPI_Type_commit(&ft);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 16 * me, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    struct {
        int i;
        double d;
    } rec[5];
    MPI_Datatype rt;
    MPI_Aint rd[2] = {offsetof(__typeof__(rec[0]), i), offsetof(__typeof__(rec[0]), d)};
    MPI_Type_create_struct(2, bl, rd, ty, &st);
    MPI_Type_create_resized(st, 0, sizeof rec[0], &rt);
    MPI_Type_commit(&rt);
    for (int k = 0; k < 5; k++) rec[k].i = me * 10 + k, rec[k].d = me + k / 10.0;
    OK(MPI_File_write_all(fh, rec, 5, rt, MPI_STATUS_IGNORE));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    long n;
    unsigned char *b = slurp(p, &n);
    for (int k = 0; k < 5; k++)
        for (int r = 0; r < np; r++) {
            int iv;
            double dv;
            memcpy(&iv, b + (size_t)(16 * np * k + 16 * r), 4);
            memcpy(&dv, b + (size_t)(16 * np * k + 16 * r + 8), 8);
            CHECK(iv == r * 10 + k && dv == r + k / 10.0, "struct record %d of rank %d", k, r);
        }
    free(b);
    OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    MPI_Type_free(&rt);
    MPI_Type_free(&sub);
    MPI_Type_free(&mem);
    free(a);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

/* A user data representation: stores ints with every bit inverted. */
static int inv_rd(void *user, MPI_Datatype t, int count, void *file, MPI_Offset pos, void *x)
{
    (void)t, (void)pos, (void)x;
    for (int i = 0; i < count; i++) ((int *)user)[i] = ~((int *)file)[i];
    return MPI_SUCCESS;
}
static int inv_wr(void *user, MPI_Datatype t, int count, void *file, MPI_Offset pos, void *x)
{
    (void)t, (void)pos, (void)x;
    for (int i = 0; i < count; i++) ((int *)file)[i] = ~((int *)user)[i];
    return MPI_SUCCESS;
}
static int inv_ext(MPI_Datatype t, MPI_Aint *ext, void *x)
{
    (void)x;
    MPI_Aint lb;
    return MPI_Type_get_extent(t, &lb, ext);
}

static void part_ext32(void)
{
    char *p = path("ext32.dat");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int v[4] = {0x01020304 + me, -2, 7, me};
    OK(MPI_File_write_at_all(fh, 4 * me, v, 4, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_sync(fh));
    MPI_Aint ext;
    OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK(ext == 4, "external32 int extent %ld", (long)ext);
    long n;
    unsigned char *b = slurp(p, &n);
    CHECK(n == 16 * np, "size");
    for (int r = 0; r < np; r++) {
        const unsigned char *q = b + 16 * r;
        uint32_t x = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
        CHECK(x == (uint32_t)(0x01020304 + r), "big-endian int of rank %d: %#x", r, x);
        CHECK(q[4] == 0xff && q[7] == 0xfe, "big-endian -2");
    }
    free(b);
    int back[4] = {0};
    OK(MPI_File_read_at_all(fh, 4 * me, back, 4, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(!memcmp(back, v, sizeof v), "external32 round trip");
    /* doubles too */
    double d[2] = {1.5 + me, -0.25}, dd[2];
    OK(MPI_File_set_view(fh, 4096, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL));
    OK(MPI_File_write_at(fh, 2 * me, d, 2, MPI_DOUBLE, MPI_STATUS_IGNORE));
    OK(MPI_File_read_at(fh, 2 * me, dd, 2, MPI_DOUBLE, MPI_STATUS_IGNORE));
    CHECK(dd[0] == d[0] && dd[1] == d[1], "external32 doubles");
    MPI_Barrier(MPI_COMM_WORLD);
    b = slurp(p, &n);
    CHECK(b[4096 + 16 * me] == 0x3f || b[4096 + 16 * me] == 0x40, "big-endian double's sign+exp");
    free(b);
    /* a representation of the program's own */
    OK(MPI_Register_datarep("inverted", inv_rd, inv_wr, inv_ext, NULL));
    int rc = MPI_Register_datarep("inverted", inv_rd, inv_wr, inv_ext, NULL), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_DUP_DATAREP, "twice: class %d", cls);
    OK(MPI_File_set_view(fh, 8192, MPI_INT, MPI_INT, "inverted", MPI_INFO_NULL));
    OK(MPI_File_write_at(fh, 4 * me, v, 4, MPI_INT, MPI_STATUS_IGNORE));
    memset(back, 0, sizeof back);
    OK(MPI_File_read_at(fh, 4 * me, back, 4, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(!memcmp(back, v, sizeof v), "user datarep round trip");
    MPI_Barrier(MPI_COMM_WORLD);
    b = slurp(p, &n);
    int raw;
    memcpy(&raw, b + 8192 + 16 * me + 4, 4);
    CHECK(raw == ~-2, "user datarep on disk: %d", raw);
    free(b);
    rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_UNSUPPORTED_DATAREP, "unknown datarep: class %d", cls);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

/* Every rank writes count of t at its offset 'at' (collective), the status
 * counts them all; then the whole file, of 'want' bytes. */
static unsigned char *write_all_slurp(MPI_File fh, const char *p, MPI_Offset at, const void *buf,
                                      int count, MPI_Datatype t, long want)
{
    MPI_Status st;
    OK(MPI_File_write_at_all(fh, at, buf, count, t, &st));
    CHECK(count_of(&st, t) == count, "write count %d, expected %d", count_of(&st, t), count);
    long n;
    unsigned char *b = sync_slurp(fh, p, &n);
    CHECK(n == want, "%s: file of %ld bytes, expected %ld", p, n, want);
    return b;
}

/* A big-endian n-byte integer of the file. */
static uint64_t be_at(const unsigned char *q, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | q[i];
    return v;
}

/* "external32" views of types whose elements are smaller in the file than in
 * memory (MPI_LONG: 8 bytes here, 4 in external32): the file holds 4-byte
 * elements, counts of extents are scaled to the file's (a vector), byte
 * displacements are kept (a struct), and MPI_File_get_type_extent says so. */
static void part_ext32x(void)
{
    char *p = path("ext32x.dat");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    MPI_Aint lext, ext;
    OK(MPI_File_get_type_extent(fh, MPI_LONG, &lext));
    CHECK(lext == 4, "external32 long extent %ld", (long)lext);
    /* a vector counts in extents of MPI_LONG: scaled to 4 bytes */
    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, np, MPI_LONG, &vec));
    OK(MPI_File_get_type_extent(fh, vec, &ext));
    CHECK(ext == (np + 1) * 4, "external32 vector extent %ld, expected %d", (long)ext,
          (np + 1) * 4);
    /* 1. etype and filetype MPI_LONG: 4 longs a rank, side by side */
    long v[4] = {100000 * me + 1, -(long)me - 2, 0x01020304L, 7};
    MPI_Status st;
    unsigned char *b = write_all_slurp(fh, p, 4 * me, v, 4, MPI_LONG, 16L * np);
    long n;
    for (int r = 0; r < np; r++) {
        const unsigned char *q = b + 16 * r;
        CHECK(be_at(q, 4) == (uint32_t)(100000 * r + 1) && be_at(q + 4, 4) == (uint32_t)(-r - 2) &&
                  be_at(q + 8, 4) == 0x01020304u && be_at(q + 12, 4) == 7,
              "rank %d's longs in the file: %#llx %#llx %#llx %#llx", r,
              (unsigned long long)be_at(q, 4), (unsigned long long)be_at(q + 4, 4),
              (unsigned long long)be_at(q + 8, 4), (unsigned long long)be_at(q + 12, 4));
    }
    free(b);
    long back[4] = {0};
    OK(MPI_File_read_at_all(fh, 4 * me, back, 4, MPI_LONG, &st));
    CHECK(!memcmp(back, v, sizeof v) && count_of(&st, MPI_LONG) == 4,
          "external32 longs round trip: %ld %ld %ld %ld", back[0], back[1], back[2], back[3]);
    MPI_Barrier(MPI_COMM_WORLD);
    /* 2. a filetype of 2 longs, resized to the file's extent of np of them
     * (bytes: kept as given), each rank's instance 8 file bytes further on:
     * 4 instances, 8 longs a rank, interleaved by pairs */
    MPI_Datatype two, ft;
    OK(MPI_Type_contiguous(2, MPI_LONG, &two));
    OK(MPI_Type_create_resized(two, 0, 2 * lext * np, &ft));
    OK(MPI_Type_commit(&ft));
    OK(MPI_File_set_view(fh, 4096 + 2 * lext * me, MPI_LONG, ft, "external32", MPI_INFO_NULL));
    OK(MPI_File_get_type_extent(fh, two, &ext));
    CHECK(ext == 8, "external32 contiguous(2, long) extent %ld", (long)ext);
    long w[8];
    for (int i = 0; i < 8; i++) w[i] = 1000 * me + i;
    OK(MPI_File_write_all(fh, w, 8, MPI_LONG, MPI_STATUS_IGNORE));
    MPI_Offset pos, byte;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 8, "position %lld etypes after 8 longs", (long long)pos);
    OK(MPI_File_get_byte_offset(fh, 3, &byte));
    CHECK(byte == 4096 + 8 * me + 8 * np + 4, "byte offset of etype 3: %lld", (long long)byte);
    b = sync_slurp(fh, p, &n);
    CHECK(n == 4096 + 32 * np, "interleaved longs: file of %ld bytes", n);
    for (int k = 0; k < 4; k++)
        for (int r = 0; r < np; r++)
            for (int j = 0; j < 2; j++) {
                long at = 4096 + 8L * np * k + 8L * r + 4L * j;
                CHECK(be_at(b + at, 4) == (uint64_t)(1000 * r + 2 * k + j),
                      "long %d of rank %d at %ld: %llu", 2 * k + j, r, at,
                      (unsigned long long)be_at(b + at, 4));
            }
    free(b);
    long wb[8] = {0};
    OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_read_all(fh, wb, 8, MPI_LONG, &st));
    CHECK(!memcmp(wb, w, sizeof w) && count_of(&st, MPI_LONG) == 8, "interleaved longs read back");
    /* independent too, from the middle: longs 3-5 */
    memset(wb, 0, sizeof wb);
    OK(MPI_File_read_at(fh, 3, wb, 3, MPI_LONG, &st));
    CHECK(wb[0] == w[3] && wb[1] == w[4] && wb[2] == w[5] && count_of(&st, MPI_LONG) == 3,
          "independent read of longs 3-5: %ld %ld %ld", wb[0], wb[1], wb[2]);
    MPI_Barrier(MPI_COMM_WORLD);
    /* 3. a struct: its byte displacements are the file's (the long at 0
     * takes 4 bytes, the double stays at 8); extent 16, the memory's
     * alignment */
    struct ld {
        long l;
        double d;
    } in = {-123456 - me, 0.5 + me}, out = {0, 0};
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(struct ld, l), offsetof(struct ld, d)};
    MPI_Datatype tys[2] = {MPI_LONG, MPI_DOUBLE}, sty;
    OK(MPI_Type_create_struct(2, bl, disp, tys, &sty));
    OK(MPI_Type_commit(&sty));
    OK(MPI_File_set_view(fh, 8192, MPI_BYTE, sty, "external32", MPI_INFO_NULL));
    OK(MPI_File_get_type_extent(fh, sty, &ext));
    CHECK(ext == 16, "external32 struct {long; double} extent %ld", (long)ext);
    OK(MPI_File_write_at_all(fh, 12 * me, &in, 1, sty, &st)); /* offsets in etypes: bytes of data */
    b = sync_slurp(fh, p, &n);
    CHECK(n == 8192 + 16 * np, "structs: file of %ld bytes", n);
    for (int r = 0; r < np; r++) {
        const unsigned char *q = b + 8192 + 16 * r;
        double d = 0.5 + r;
        uint64_t bits;
        memcpy(&bits, &d, 8);
        CHECK(be_at(q, 4) == (uint32_t)(-123456 - r) && be_at(q + 4, 4) == 0 &&
                  be_at(q + 8, 8) == bits,
              "rank %d's struct in the file: long %#llx, gap %#llx, double %#llx", r,
              (unsigned long long)be_at(q, 4), (unsigned long long)be_at(q + 4, 4),
              (unsigned long long)be_at(q + 8, 8));
    }
    free(b);
    OK(MPI_File_read_at_all(fh, 12 * me, &out, 1, sty, &st));
    CHECK(out.l == in.l && out.d == in.d, "struct read back: %ld %g", out.l, out.d);
    /* a filetype that is not whole etypes in external32 (2 bytes of 4) */
    int rc = MPI_File_set_view(fh, 0, MPI_LONG, MPI_SHORT, "external32", MPI_INFO_NULL), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "short filetype of long etypes: class %d", cls);
    MPI_Type_free(&vec);
    MPI_Type_free(&two);
    MPI_Type_free(&ft);
    MPI_Type_free(&sty);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

/* "wide": a representation of the test's own that stores each int as 8
 * big-endian bytes; its extent function is asked only about MPI_INT. */
static int wide_asked_other;
static int wide_wr(void *user, MPI_Datatype t, int count, void *file, MPI_Offset pos, void *x)
{
    (void)t, (void)pos, (void)x;
    for (int i = 0; i < count; i++) {
        uint64_t v = (uint64_t)(int64_t)((int *)user)[i];
        for (int k = 0; k < 8; k++)
            ((unsigned char *)file)[8 * i + k] = (unsigned char)(v >> (56 - 8 * k));
    }
    return MPI_SUCCESS;
}
static int wide_rd(void *user, MPI_Datatype t, int count, void *file, MPI_Offset pos, void *x)
{
    (void)t, (void)pos, (void)x;
    for (int i = 0; i < count; i++)
        ((int *)user)[i] = (int)(int64_t)be_at((unsigned char *)file + 8 * i, 8);
    return MPI_SUCCESS;
}
static int wide_ext(MPI_Datatype t, MPI_Aint *ext, void *x)
{
    (void)x;
    if (t != MPI_INT) {
        wide_asked_other = 1;
        return MPI_ERR_TYPE;
    }
    *ext = 8;
    return MPI_SUCCESS;
}

/* A registered representation whose extent function gives ints 8 bytes: the
 * view is laid out in its sizes (as "external32" in its own), the stream the
 * conversion functions see is 8 bytes an int. */
static void part_userrep(void)
{
    char *p = path("userrep.dat");
    MPI_File fh;
    OK(MPI_Register_datarep("wide", wide_rd, wide_wr, wide_ext, NULL));
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wide", MPI_INFO_NULL));
    MPI_Aint ext;
    OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK(ext == 8, "wide int extent %ld", (long)ext);
    MPI_Datatype vec, ft;
    OK(MPI_Type_vector(3, 1, np, MPI_INT, &vec));
    OK(MPI_File_get_type_extent(fh, vec, &ext));
    CHECK(ext == (2 * np + 1) * 8, "wide vector extent %ld, expected %d", (long)ext,
          (2 * np + 1) * 8);
    int v[3] = {-1 - me, 0x7fffffff - me, 42 + me}, back[3] = {0};
    MPI_Status st;
    unsigned char *b = write_all_slurp(fh, p, 3 * me, v, 3, MPI_INT, 24L * np);
    long n;
    for (int r = 0; r < np; r++)
        CHECK(be_at(b + 24 * r, 8) == (uint64_t)(int64_t)(-1 - r) &&
                  be_at(b + 24 * r + 8, 8) == (uint64_t)(0x7fffffff - r) &&
                  be_at(b + 24 * r + 16, 8) == (uint64_t)(42 + r),
              "rank %d's wide ints in the file", r);
    free(b);
    OK(MPI_File_read_at_all(fh, 3 * me, back, 3, MPI_INT, &st));
    CHECK(!memcmp(back, v, sizeof v) && count_of(&st, MPI_INT) == 3, "wide ints round trip");
    MPI_Barrier(MPI_COMM_WORLD);
    /* the vector, resized to np of its rows (bytes, as the file has them):
     * each rank's column of 3, two instances */
    OK(MPI_Type_create_resized(vec, 0, 3 * np * 8, &ft));
    OK(MPI_Type_commit(&ft));
    OK(MPI_File_set_view(fh, 4096 + 8 * me, MPI_INT, ft, "wide", MPI_INFO_NULL));
    int w[6], wb[6] = {0};
    for (int i = 0; i < 6; i++) w[i] = 100 * me + i;
    OK(MPI_File_write_all(fh, w, 6, MPI_INT, MPI_STATUS_IGNORE));
    b = sync_slurp(fh, p, &n);
    CHECK(n == 4096 + 48 * np, "wide columns: file of %ld bytes", n);
    for (int i = 0; i < 6; i++)
        for (int r = 0; r < np; r++)
            CHECK(be_at(b + 4096 + 8L * (np * i + r), 8) == (uint64_t)(100 * r + i),
                  "wide int %d of rank %d", i, r);
    free(b);
    OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_read_all(fh, wb, 6, MPI_INT, &st));
    CHECK(!memcmp(wb, w, sizeof w) && count_of(&st, MPI_INT) == 6, "wide columns read back");
    CHECK(!wide_asked_other, "the extent function was asked about a type the program never used");
    /* a type the extent function does not know: its class, through the handler */
    int rc = MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "wide", MPI_INFO_NULL), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_CONVERSION, "a double under \"wide\": class %d", cls);
    CHECK(wide_asked_other == 1, "the extent function was not asked about MPI_DOUBLE");
    MPI_Type_free(&vec);
    MPI_Type_free(&ft);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

static void part_shared(void)
{
    char *p = path("shared.dat");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* the shared file pointer's side file has no name once the file is open:
     * a job that ends by MPI_Abort or a crash leaves nothing beside the file */
    DIR *dd = opendir(dir);
    CHECK(dd, "cannot list %s", dir);
    for (struct dirent *e; (e = readdir(dd));)
        CHECK(!strstr(e->d_name, ".shfp."), "side file %s/%s left with a name", dir, e->d_name);
    closedir(dd);
    /* write_shared: each rank 50 records of 8 ints; no two overlap */
    enum { R = 50, L = 8 };
    int rec[L];
    for (int k = 0; k < R; k++) {
        for (int j = 0; j < L; j++) rec[j] = me * 1000 + k;
        OK(MPI_File_write_shared(fh, rec, L, MPI_INT, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset sp;
    OK(MPI_File_get_position_shared(fh, &sp));
    CHECK(sp == (MPI_Offset)R * L * np * 4, "shared position %lld", (long long)sp);
    long n;
    unsigned char *b = slurp(p, &n);
    CHECK(n == (long)R * L * np * 4, "size %ld", n);
    int *seen = calloc((size_t)np * R, sizeof *seen);
    for (long i = 0; i < n / 4 / L; i++) {
        int x[L];
        memcpy(x, b + i * L * 4, sizeof x);
        for (int j = 1; j < L; j++) CHECK(x[j] == x[0], "record %ld torn", i);
        CHECK(x[0] / 1000 < np && x[0] % 1000 < R, "record %ld: %d", i, x[0]);
        seen[x[0] / 1000 * R + x[0] % 1000]++;
    }
    for (int i = 0; i < np * R; i++) CHECK(seen[i] == 1, "record %d written %d times", i, seen[i]);
    free(seen);
    free(b);
    /* ordered: rank order, rank r writing r + 1 ints */
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_set_size(fh, 0));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL)); /* positions in ints */
    int *w = malloc(sizeof(int) * (size_t)(me + 1));
    for (int i = 0; i <= me; i++) w[i] = me;
    OK(MPI_File_write_ordered(fh, w, me + 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_write_ordered(fh, w, me + 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    b = slurp(p, &n);
    int tri = np * (np + 1) / 2;
    CHECK(n == 2L * tri * 4, "ordered size %ld", n);
    int at = 0;
    for (int t = 0; t < 2; t++)
        for (int r = 0; r < np; r++)
            for (int i = 0; i <= r; i++, at++) {
                int x;
                memcpy(&x, b + 4 * at, 4);
                CHECK(x == r, "ordered int %d: %d, want %d", at, x, r);
            }
    free(b);
    /* read_ordered back: each rank its own ints */
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int *r2 = calloc((size_t)me + 1, sizeof *r2);
    MPI_Status st;
    OK(MPI_File_read_ordered(fh, r2, me + 1, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == me + 1, "read_ordered count");
    for (int i = 0; i <= me; i++) CHECK(r2[i] == me, "read_ordered %d", r2[i]);
    /* read_shared after a seek_shared to the second half: np reads of varying length */
    OK(MPI_File_seek_shared(fh, tri, MPI_SEEK_SET));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_read_shared(fh, r2, me + 1, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == me + 1, "read_shared count");
    OK(MPI_File_get_position_shared(fh, &sp));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_get_position_shared(fh, &sp));
    CHECK(sp == 2 * tri, "shared position after reads %lld", (long long)sp);
    free(r2);
    free(w);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

static void part_nonblock(void)
{
    char *p = path("nb.dat");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    enum { N = 256 };
    int w[N], r[N];
    for (int i = 0; i < N; i++) w[i] = me * N + i;
    MPI_Request q[4];
    MPI_Status st[4];
    OK(MPI_File_iwrite_at(fh, (MPI_Offset)4 * N * me, w, N / 2, MPI_INT, &q[0]));
    OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)4 * N * me + 2 * N, w + N / 2, N / 2, MPI_INT,
                              &q[1]));
    OK(MPI_Waitall(2, q, st));
    CHECK(count_of(&st[0], MPI_INT) == N / 2 && count_of(&st[1], MPI_INT) == N / 2, "counts");
    OK(MPI_File_sync(fh));
    OK(MPI_File_iread_at(fh, (MPI_Offset)4 * N * ((me + 1) % np), r, N, MPI_INT, &q[0]));
    int done = 0;
    while (!done) OK(MPI_Test(&q[0], &done, &st[0]));
    CHECK(count_of(&st[0], MPI_INT) == N, "iread_at count");
    for (int i = 0; i < N; i++) CHECK(r[i] == (me + 1) % np * N + i, "iread_at %d", i);
    /* individual pointer forms */
    OK(MPI_File_seek(fh, (MPI_Offset)4 * N * me, MPI_SEEK_SET));
    OK(MPI_File_iread(fh, r, N / 2, MPI_INT, &q[0]));
    OK(MPI_File_iread_all(fh, r + N / 2, N / 2, MPI_INT, &q[1]));
    OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    CHECK(!memcmp(r, w, sizeof w), "iread + iread_all");
    MPI_Offset pos;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)4 * N * (me + 1), "position after ireads %lld", (long long)pos);
    OK(MPI_File_iwrite(fh, w, 4, MPI_INT, &q[0]));
    OK(MPI_File_iwrite_all(fh, w, 4, MPI_INT, &q[1]));
    OK(MPI_File_iwrite_shared(fh, w, 1, MPI_INT, &q[2]));
    OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    MPIO_Request mq; /* ROMIO's names for the same */
    OK(MPI_File_iread_shared(fh, r, 1, MPI_INT, &mq));
    OK(MPIO_Wait(&mq, &st[0]));
    CHECK(count_of(&st[0], MPI_INT) == 1, "iread_shared count");
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

static void part_split(void)
{
    char *p = path("split.dat");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    double w[10], r[10];
    for (int i = 0; i < 10; i++) w[i] = me + i * 0.5;
    MPI_Status st;
    OK(MPI_File_write_at_all_begin(fh, 80 * me, w, 10, MPI_DOUBLE)); /* bytes: the default view */
    int rc = MPI_File_write_at_all_begin(fh, 0, w, 1, MPI_DOUBLE), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "a second begin: class %d", cls);
    OK(MPI_File_write_at_all_end(fh, w, &st));
    CHECK(count_of(&st, MPI_DOUBLE) == 10, "split write count");
    OK(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL));
    OK(MPI_File_seek(fh, 10 * me, MPI_SEEK_SET));
    OK(MPI_File_read_all_begin(fh, r, 10, MPI_DOUBLE));
    OK(MPI_File_read_all_end(fh, r, &st));
    CHECK(!memcmp(r, w, sizeof w), "split read");
    OK(MPI_File_write_ordered_begin(fh, w, 1, MPI_DOUBLE));
    OK(MPI_File_write_ordered_end(fh, w, &st));
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_read_ordered_begin(fh, r, 1, MPI_DOUBLE));
    OK(MPI_File_read_ordered_end(fh, r, &st));
    CHECK(r[0] == w[0], "ordered split: the first doubles are the ordered write's");
    OK(MPI_File_write_all_begin(fh, w, 1, MPI_DOUBLE));
    OK(MPI_File_write_all_end(fh, w, &st));
    OK(MPI_File_read_at_all_begin(fh, 10 * me, r, 10, MPI_DOUBLE));
    OK(MPI_File_read_at_all_end(fh, r, &st));
    rc = MPI_File_read_at_all_end(fh, r, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "end without begin: class %d", cls);
    /* seeks, positions, byte offsets under a view with a displacement and holes */
    MPI_Datatype ft;
    MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &ft); /* x . . x : extent 4 doubles */
    MPI_Datatype ftr;
    MPI_Type_create_resized(ft, 0, 32, &ftr);
    MPI_Type_commit(&ftr);
    OK(MPI_File_set_view(fh, 100, MPI_DOUBLE, ftr, "native", MPI_INFO_NULL));
    MPI_Offset b;
    OK(MPI_File_get_byte_offset(fh, 0, &b));
    CHECK(b == 100, "byte offset 0: %lld", (long long)b);
    OK(MPI_File_get_byte_offset(fh, 1, &b));
    CHECK(b == 124, "byte offset 1: %lld", (long long)b);
    OK(MPI_File_get_byte_offset(fh, 5, &b));
    CHECK(b == 100 + 64 + 24, "byte offset 5: %lld", (long long)b);
    OK(MPI_File_seek(fh, 3, MPI_SEEK_SET));
    OK(MPI_File_seek(fh, 2, MPI_SEEK_CUR));
    MPI_Offset pos;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 5, "position %lld", (long long)pos);
    rc = MPI_File_seek(fh, -10, MPI_SEEK_CUR);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "seek before the start: class %d", cls);
    /* atomic mode: every rank writes the same 4 KiB region whole; the file then
     * holds one rank's block, never a mix */
    int flag;
    OK(MPI_File_set_atomicity(fh, 1));
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity");
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    char blk[4096];
    memset(blk, 'a' + me, sizeof blk);
    for (int k = 0; k < 20; k++) OK(MPI_File_write_at(fh, 0, blk, sizeof blk, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_read_at(fh, 0, blk, sizeof blk, MPI_BYTE, &st));
    for (size_t i = 1; i < sizeof blk; i++) CHECK(blk[i] == blk[0], "atomic block mixed at %zu", i);
    OK(MPI_File_set_atomicity(fh, 0));
    MPI_Type_free(&ft);
    MPI_Type_free(&ftr);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

/* The access mode of this process's descriptor of p (its /proc/self/fdinfo
 * flags): O_RDONLY, O_WRONLY or O_RDWR; -1: none open. */
static int fd_accmode(const char *p)
{
    char real[PATH_MAX], link[300], target[PATH_MAX], line[128];
    CHECK(realpath(p, real), "realpath %s", p);
    DIR *d = opendir("/proc/self/fd");
    CHECK(d, "cannot list /proc/self/fd");
    int mode = -1;
    for (struct dirent *de; mode < 0 && (de = readdir(d));) {
        snprintf(link, sizeof link, "/proc/self/fd/%s", de->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n < 0) continue;
        target[n] = 0;
        if (strcmp(target, real)) continue;
        snprintf(link, sizeof link, "/proc/self/fdinfo/%s", de->d_name);
        FILE *fp = fopen(link, "r");
        unsigned flags;
        while (fp && fgets(line, sizeof line, fp))
            if (sscanf(line, "flags: %o", &flags) == 1) mode = (int)(flags & O_ACCMODE);
        if (fp) fclose(fp);
    }
    closedir(d);
    return mode;
}

/* A collective write with holes into a file open MPI_MODE_WRONLY must not
 * write over them: where the file can be read (as here) courier opens it
 * O_RDWR underneath, so that collective buffering and data sieving read the
 * holes (they wrote each piece alone otherwise: IOR opens its files so),
 * and the program's reads are still refused; where it cannot, the
 * aggregator writes around the holes (it wrote zeros there once). Blocks of
 * 64 bytes, every rank one block in each group of 2 * np: half the file is
 * holes holding 0x55. */
static void part_wronly(void)
{
    const int B = 64, N = 200, G = 2 * np;
    char *p = path("wronly.dat");
    long size = (long)B * G * N;
    if (me == 0) {
        FILE *fp = fopen(p, "wb");
        for (long i = 0; i < size; i++) fputc(0x55, fp);
        fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, "romio_cb_write", "enable");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY, in, &fh));
    MPI_Info_free(&in);
    int acc = fd_accmode(p);
    CHECK(acc == O_RDWR,
          "rank %d: the file open MPI_MODE_WRONLY has a descriptor of access mode "
          "%d, not O_RDWR (%d): its holes cannot be read",
          me, acc, O_RDWR);
    char one;
    int rc = MPI_File_read_at(fh, 0, &one, 1, MPI_BYTE, MPI_STATUS_IGNORE), cls = 0;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ACCESS,
          "rank %d: a read of a file open MPI_MODE_WRONLY: class %d, not "
          "MPI_ERR_ACCESS",
          me, cls);
    MPI_Datatype ft, ftr;
    MPI_Type_vector(N, B, B * G, MPI_BYTE, &ft);
    MPI_Type_create_resized(ft, 0, (MPI_Aint)B * G * N, &ftr);
    MPI_Type_commit(&ftr);
    OK(MPI_File_set_view(fh, (MPI_Offset)B * me, MPI_BYTE, ftr, "native", MPI_INFO_NULL));
    char *w = malloc((size_t)B * N);
    memset(w, 'a' + me, (size_t)B * N);
    OK(MPI_File_write_all(fh, w, B * N, MPI_BYTE, MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));
    long n;
    unsigned char *b = slurp(p, &n);
    CHECK(n == size, "size %ld", n);
    for (long i = 0; i < n; i++) {
        int blk = (int)(i / B % G);
        int want = blk < np ? 'a' + blk : 0x55;
        CHECK(b[i] == want, "byte %ld: %#x, want %#x", i, b[i], want);
    }
    free(b);
    free(w);
    MPI_Type_free(&ft);
    MPI_Type_free(&ftr);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

/* Rank 1 holds an fcntl lock (its own descriptor) over the file: an access
 * in atomic mode waits for it. Nonblocking accesses started meanwhile must
 * return at once and stay pending, as seen by MPI_Test, until rank 1 lets go
 * (before, they ran in the call: rank 0 hung in MPI_File_iwrite_at, never
 * sending rank 1 the message that releases the lock). */
static void hold_lock(const char *p, int *fd, bool on)
{
    if (on) {
        *fd = open(p, O_RDWR);
        CHECK(*fd >= 0, "open %s", p);
    }
    struct flock l = {.l_type = on ? F_WRLCK : F_UNLCK, .l_whence = SEEK_SET, .l_len = 0};
    CHECK(fcntl(*fd, F_SETLK, &l) == 0, "fcntl lock %d: %s", on, strerror(errno));
    if (!on) close(*fd);
}

static void part_pending(void)
{
    char *p = path("pending.dat");
    MPI_File fh;
    MPI_Info in; /* collective buffering: every rank's _all waits for rank 0, an aggregator */
    MPI_Info_create(&in);
    MPI_Info_set(in, "romio_cb_write", "enable");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, in, &fh));
    MPI_Info_free(&in);
    OK(MPI_File_set_atomicity(fh, 1));
    enum { N = 1 << 16 };
    int *w = malloc(sizeof(int) * N), *r = malloc(sizeof(int) * N), fd = -1, flag = 1;
    for (int i = 0; i < N; i++) w[i] = me * N + i;
    MPI_Request q[4];
    MPI_Status st[4];
    /* independent: rank 0 writes under rank 1's lock */
    if (me == 1) hold_lock(p, &fd, true);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        OK(MPI_File_iwrite_at(fh, 0, w, N, MPI_INT, &q[0]));
        for (int i = 0; i < 100; i++) OK(MPI_Test(&q[0], &flag, &st[0]));
        CHECK(!flag, "iwrite_at completed under another rank's lock");
        MPI_Send(&flag, 1, MPI_INT, 1, 5, MPI_COMM_WORLD); /* let go */
        OK(MPI_Wait(&q[0], &st[0]));
        CHECK(count_of(&st[0], MPI_INT) == N, "iwrite_at count %d", count_of(&st[0], MPI_INT));
    } else if (me == 1) {
        MPI_Recv(&flag, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        hold_lock(p, &fd, false);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* collective: every rank's request waits for the aggregators, held up */
    if (me == 1) hold_lock(p, &fd, true);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)sizeof(int) * N * me, w, N, MPI_INT, &q[0]));
    for (int i = 0; i < 100; i++) OK(MPI_Test(&q[0], &flag, &st[0]));
    CHECK(!flag, "iwrite_at_all completed under another rank's lock");
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1) hold_lock(p, &fd, false);
    OK(MPI_Wait(&q[0], &st[0]));
    CHECK(count_of(&st[0], MPI_INT) == N, "iwrite_at_all count");
    /* a split collective: _begin returns while the write is held up */
    if (me == 1) hold_lock(p, &fd, true);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) w[i] = -(me * N + i);
    OK(MPI_File_write_at_all_begin(fh, (MPI_Offset)sizeof(int) * N * me, w, N, MPI_INT));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1) hold_lock(p, &fd, false);
    OK(MPI_File_write_at_all_end(fh, w, &st[0]));
    CHECK(count_of(&st[0], MPI_INT) == N, "write_at_all_end count");
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    OK(MPI_File_read_at(fh, (MPI_Offset)sizeof(int) * N * ((me + 1) % np), r, N, MPI_INT, &st[0]));
    for (int i = 0; i < N; i++)
        CHECK(r[i] == -(((me + 1) % np) * N + i), "split write, int %d: %d", i, r[i]);
    MPI_Barrier(MPI_COMM_WORLD); /* read before the others write again */
    /* program order: three writes of the same ints, then a read, all queued */
    MPI_Offset at = (MPI_Offset)sizeof(int) * N * me;
    int a[3][4], got[4];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 4; i++) a[k][i] = 100 * k + i + me;
    for (int k = 0; k < 3; k++) OK(MPI_File_iwrite_at(fh, at, a[k], 4, MPI_INT, &q[k]));
    OK(MPI_File_iread_at(fh, at, got, 4, MPI_INT, &q[3]));
    OK(MPI_Waitall(4, q, st));
    CHECK(!memcmp(got, a[2], sizeof got), "queued read after writes: %d, want %d", got[0], a[2][0]);
    /* the individual pointer moves when an access starts */
    OK(MPI_File_seek(fh, at, MPI_SEEK_SET)); /* the view's etype is a byte */
    OK(MPI_File_iwrite(fh, a[0], 4, MPI_INT, &q[0]));
    MPI_Offset pos;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == at + 16, "position after iwrite started: %lld", (long long)pos);
    OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));
    free(w);
    free(r);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

/* A header int, then one int per rank in rank order; reopened
 * MPI_MODE_SEQUENTIAL, rank 0 reads the header through the shared pointer,
 * then a view at MPI_DISPLACEMENT_CURRENT must start after it on every rank
 * (rank 0 reset the shared pointer, as set_view does, before the others had
 * read it: their views started at 0). As MPICH's io/setviewcur. */
static void part_seqview(void)
{
    char *p = path("seq.dat");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    int v = np;
    if (me == 0) OK(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_seek_shared(fh, sizeof(int), MPI_SEEK_SET));
    v = me;
    OK(MPI_File_write_ordered(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
    if (me == 0) {
        OK(MPI_File_read_shared(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
        CHECK(v == np, "header %d", v);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == sizeof(int), "view displacement %lld, want %zu", (long long)disp, sizeof(int));
    v = -1;
    OK(MPI_File_read_ordered(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(v == me, "read_ordered after the header: %d", v);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

/* Collective buffering's vectored I/O: 8-byte blocks, each rank one in every
 * group of np + 1 (the last block of a group a hole holding 0x55), 3000 per
 * rank: one window holds np * 3000 pieces, more than one pwritev takes
 * (IOV_MAX). Then a read_all past the end of the file, and a write_all and
 * read_all of two 4 KiB blocks per rank 6 MiB apart (a window with a gap of
 * megabytes: read as two runs). */
static unsigned char piece_byte(int owner, long i)
{
    return (unsigned char)(owner * 7 + i % 241);
}

static void part_pieces(void)
{
    const int B = 8, N = 3000, G = np + 1;
    char *p = path("pieces.dat");
    long size = (long)B * G * N;
    if (me == 0) {
        FILE *fp = fopen(p, "wb");
        for (long i = 0; i < size; i++) fputc(0x55, fp);
        fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, "romio_cb_write", "enable");
    MPI_Info_set(in, "romio_cb_read", "enable");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, in, &fh));
    MPI_Info_free(&in);
    MPI_Datatype ft, ftr;
    MPI_Type_vector(N, B, B * G, MPI_BYTE, &ft);
    MPI_Type_create_resized(ft, 0, (MPI_Aint)B * G * N, &ftr);
    MPI_Type_commit(&ftr);
    OK(MPI_File_set_view(fh, (MPI_Offset)B * me, MPI_BYTE, ftr, "native", MPI_INFO_NULL));
    size_t n1 = (size_t)B * N;
    unsigned char *w = malloc(n1 + 4096), *r = malloc(n1 + 4096);
    for (size_t i = 0; i < n1; i++) w[i] = piece_byte(me, (long)i);
    MPI_Status st;
    OK(MPI_File_write_all(fh, w, (int)n1, MPI_BYTE, &st));
    CHECK(count_of(&st, MPI_BYTE) == (int)n1, "write_all count %d", count_of(&st, MPI_BYTE));
    OK(MPI_File_sync(fh));
    long n;
    unsigned char *b = slurp(p, &n);
    CHECK(n == size, "size %ld", n);
    for (long i = 0; i < n; i++) {
        int blk = (int)(i / B % G);
        int want = blk < np ? piece_byte(blk, i / (B * G) * B + i % B) : 0x55;
        CHECK(b[i] == want, "byte %ld: %#x, want %#x", i, b[i], want);
    }
    free(b);
    /* past the end: the second instance of the view lies beyond the file */
    memset(r, 0, n1 + 4096);
    OK(MPI_File_read_at_all(fh, 0, r, (int)n1 + 4096, MPI_BYTE, &st));
    CHECK(count_of(&st, MPI_BYTE) == (int)n1, "read_at_all past the end: count %d, want %zu",
          count_of(&st, MPI_BYTE), n1);
    CHECK(!memcmp(r, w, n1), "read_at_all data");
    /* two blocks per rank, 6 MiB apart */
    const int K = 4096;
    const MPI_Offset gap = 6 << 20;
    MPI_Datatype two;
    int lens[2] = {K, K};
    MPI_Aint disps[2] = {0, (MPI_Aint)gap};
    MPI_Type_create_hindexed(2, lens, disps, MPI_BYTE, &two);
    MPI_Type_commit(&two);
    OK(MPI_File_set_view(fh, (MPI_Offset)K * me, MPI_BYTE, two, "native", MPI_INFO_NULL));
    for (int i = 0; i < 2 * K; i++) w[i] = piece_byte(me + 1, i);
    OK(MPI_File_write_at_all(fh, 0, w, 2 * K, MPI_BYTE, &st));
    memset(r, 0, 2 * K);
    OK(MPI_File_read_at_all(fh, 0, r, 2 * K, MPI_BYTE, &st));
    CHECK(count_of(&st, MPI_BYTE) == 2 * K, "read_at_all across the gap: count %d",
          count_of(&st, MPI_BYTE));
    for (int i = 0; i < 2 * K; i++)
        CHECK(r[i] == piece_byte(me + 1, i), "across the gap, byte %d: %#x", i, r[i]);
    OK(MPI_File_close(&fh));
    free(w);
    free(r);
    MPI_Type_free(&ft);
    MPI_Type_free(&ftr);
    MPI_Type_free(&two);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

static int handler_calls, handler_code;
static void on_file_error(MPI_File *f, int *code, ...)
{
    (void)f;
    handler_calls++;
    handler_code = *code;
}

static int cls_of(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static void part_errors(void)
{
    MPI_File fh;
    char *missing = path("no-such-file.dat");
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(cls_of(rc) == MPI_ERR_NO_SUCH_FILE, "missing file: class %d", cls_of(rc));
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, s, &len);
    CHECK(strstr(s, "MPI_ERR_NO_SUCH_FILE"), "error string: %s", s);
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                       &fh);
    CHECK(cls_of(rc) == MPI_ERR_AMODE, "RDONLY|CREATE: class %d", cls_of(rc));
    { /* a filetype whose displacements decrease: MPI_ERR_IO, as ROMIO's (MPICH's tst_fileview) */
        int bl[2] = {1, 1}, dp[2] = {3, 0};
        MPI_Datatype bad;
        MPI_Type_indexed(2, bl, dp, MPI_INT, &bad);
        MPI_Type_commit(&bad);
        MPI_File f2;
        OK(MPI_File_open(MPI_COMM_WORLD, path("badview.dat"), MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &f2));
        rc = MPI_File_set_view(f2, 0, MPI_INT, bad, "native", MPI_INFO_NULL);
        CHECK(cls_of(rc) == MPI_ERR_IO, "decreasing filetype: class %d", cls_of(rc));
        /* overlapping runs: refused in a file that can be written, read in a
         * read-only one (ints 0 1 2 1 of each instance of 3) */
        int ol[2] = {3, 1}, od[2] = {0, 1}, ints[12], got[8];
        MPI_Datatype over;
        MPI_Type_indexed(2, ol, od, MPI_INT, &over);
        MPI_Type_commit(&over);
        rc = MPI_File_set_view(f2, 0, MPI_INT, over, "native", MPI_INFO_NULL);
        CHECK(cls_of(rc) == MPI_ERR_IO, "overlapping filetype, RDWR: class %d", cls_of(rc));
        /* only the last rank's arguments wrong: every rank fails, none waits */
        rc = MPI_File_set_view(f2, 0, MPI_INT, MPI_INT, me == np - 1 ? "no-such-rep" : "native",
                               MPI_INFO_NULL);
        CHECK(cls_of(rc) == MPI_ERR_UNSUPPORTED_DATAREP,
              "one rank's unknown datarep: class %d on rank %d", cls_of(rc), me);
        for (int i = 0; i < 12; i++) ints[i] = i;
        if (me == 0) OK(MPI_File_write_at(f2, 0, ints, 12, MPI_INT, MPI_STATUS_IGNORE));
        OK(MPI_File_close(&f2));
        OK(MPI_File_open(MPI_COMM_WORLD, path("badview.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &f2));
        OK(MPI_File_set_view(f2, 0, MPI_INT, over, "native", MPI_INFO_NULL));
        static const int want[8] = {0, 1, 2, 1, 3, 4, 5, 4};
        memset(got, 0, sizeof got);
        OK(MPI_File_read_at(f2, 0, got, 8, MPI_INT, MPI_STATUS_IGNORE));
        CHECK(!memcmp(got, want, sizeof got), "overlapping view, read_at: %d %d %d %d", got[0],
              got[1], got[2], got[3]);
        memset(got, 0, sizeof got);
        OK(MPI_File_read_at_all(f2, 0, got, 8, MPI_INT, MPI_STATUS_IGNORE));
        CHECK(!memcmp(got, want, sizeof got), "overlapping view, read_at_all: %d %d %d %d", got[0],
              got[1], got[2], got[3]);
        OK(MPI_File_close(&f2));
        MPI_Type_free(&over);
        MPI_Type_free(&bad);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) unlink(path("badview.dat"));
    }
    rc =
        MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CHECK(cls_of(rc) == MPI_ERR_AMODE, "RDWR|WRONLY: class %d", cls_of(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                       &fh);
    CHECK(cls_of(rc) == MPI_ERR_AMODE, "RDWR|SEQUENTIAL: class %d", cls_of(rc));
    rc = MPI_File_delete(missing, MPI_INFO_NULL);
    CHECK(cls_of(rc) == MPI_ERR_NO_SUCH_FILE, "delete missing: class %d", cls_of(rc));
    /* MPI_FILE_NULL's handler is the one open uses */
    MPI_Errhandler eh;
    OK(MPI_File_create_errhandler(on_file_error, &eh));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(handler_calls == 1 && cls_of(handler_code) == MPI_ERR_NO_SUCH_FILE, "handler called %d",
          handler_calls);
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    /* read past the end: count 0, no error */
    char *p = path("errors.dat");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    char buf[100];
    memset(buf, 'x', sizeof buf);
    if (me == 0) OK(MPI_File_write_at(fh, 0, buf, 10, MPI_CHAR, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Status st;
    OK(MPI_File_read_at(fh, 1000, buf, 100, MPI_CHAR, &st));
    CHECK(count_of(&st, MPI_CHAR) == 0, "read past the end: count %d", count_of(&st, MPI_CHAR));
    OK(MPI_File_read_at(fh, 4, buf, 100, MPI_CHAR, &st));
    CHECK(count_of(&st, MPI_CHAR) == 6, "read across the end: count %d", count_of(&st, MPI_CHAR));
    OK(MPI_File_read_at_all(fh, 8, buf, 100, MPI_CHAR, &st));
    CHECK(count_of(&st, MPI_CHAR) == 2, "read_all across the end: %d", count_of(&st, MPI_CHAR));
    /* the file's own handler */
    OK(MPI_File_set_errhandler(fh, eh));
    handler_calls = 0;
    rc = MPI_File_seek(fh, 0, 12345);
    CHECK(handler_calls == 1 && cls_of(rc) == MPI_ERR_ARG, "bad whence through the handler");
    OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    OK(MPI_File_call_errhandler(fh, MPI_ERR_IO)); /* returns: MPI_ERRORS_RETURN */
    rc = MPI_File_write_at(fh, 0, buf, -1, MPI_CHAR, &st);
    CHECK(cls_of(rc) == MPI_ERR_COUNT, "negative count: class %d", cls_of(rc));
    OK(MPI_File_close(&fh));
    rc = MPI_File_close(&fh);
    CHECK(cls_of(rc) == MPI_ERR_FILE, "close of MPI_FILE_NULL: class %d", cls_of(rc));
    if (np > 1) { /* every rank passes the same amode and names the same file */
        rc = MPI_File_open(MPI_COMM_WORLD, p, me ? MPI_MODE_RDONLY : MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh);
        CHECK(cls_of(rc) == MPI_ERR_NOT_SAME && fh == MPI_FILE_NULL, "amodes differ: class %d",
              cls_of(rc));
        char *other = path("errors-other.dat"), *link = path("errors-link.dat");
        if (me == 0) {
            FILE *o = fopen(other, "w");
            CHECK(o && fclose(o) == 0, "cannot make %s", other);
            unlink(link);
            CHECK(symlink("errors.dat", link) == 0, "symlink %s: %s", link, strerror(errno));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        rc = MPI_File_open(MPI_COMM_WORLD, me ? other : p, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        CHECK(cls_of(rc) == MPI_ERR_NOT_SAME && fh == MPI_FILE_NULL, "files differ: class %d",
              cls_of(rc));
        /* another name of the same file is the same file */
        OK(MPI_File_open(MPI_COMM_WORLD, me ? link : p, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
        OK(MPI_File_close(&fh));
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            unlink(other);
            unlink(link);
        }
    }
    /* a file opened gets the handler MPI_FILE_NULL has then: the default file
     * handler (MPI-4.1 9.3) */
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Errhandler got;
    OK(MPI_File_get_errhandler(fh, &got));
    CHECK(got == eh, "a file opened has handler %#x, not MPI_FILE_NULL's %#x", (unsigned)got,
          (unsigned)eh);
    handler_calls = 0;
    rc = MPI_File_read_at(fh, -1, buf, 1, MPI_CHAR, &st);
    CHECK(handler_calls == 1 && cls_of(rc) != MPI_SUCCESS, "bad offset: handler called %d",
          handler_calls);
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    OK(MPI_File_close(&fh));
    /* a file open read-only cannot be written, write-only cannot be read */
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    rc = MPI_File_write_at(fh, 0, buf, 1, MPI_CHAR, &st);
    CHECK(cls_of(rc) == MPI_ERR_READ_ONLY, "write to RDONLY: class %d", cls_of(rc));
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    rc = MPI_File_read_at(fh, 0, buf, 1, MPI_CHAR, &st);
    CHECK(cls_of(rc) == MPI_ERR_ACCESS, "read of WRONLY: class %d", cls_of(rc));
    OK(MPI_File_close(&fh));
    /* sequential: no explicit offsets */
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
    rc = MPI_File_write_at(fh, 0, buf, 1, MPI_CHAR, &st);
    CHECK(cls_of(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "SEQUENTIAL write_at: class %d", cls_of(rc));
    OK(MPI_File_close(&fh));
    /* permission: a file of mode 0400 opened for writing (as root, under
     * another uid: root reads and writes anything) */
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) chmod(p, 0400);
    MPI_Barrier(MPI_COMM_WORLD);
    int root = geteuid() == 0;
    if (root) CHECK(seteuid(65534) == 0, "seteuid: %s", strerror(errno));
    rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (root) CHECK(seteuid(0) == 0, "seteuid back: %s", strerror(errno));
    CHECK(cls_of(rc) == MPI_ERR_ACCESS, "permission: class %d", cls_of(rc));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(argc >= 3, "usage: io PART DIR");
    /* a directory of this run's own (the _tcp and _hosts variants of a test
     * may run at once): rank 0's pid after the name given */
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "%s.%ld", argv[2], pid);
    if (me == 0) { /* a fresh directory: what a failed run left goes first */
        DIR *d = opendir(dir);
        for (struct dirent *de; d && (de = readdir(d));)
            if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")))
                unlink(path(de->d_name));
        if (d) closedir(d);
        mkdir(dir, 0755);
        chmod(dir, 0755); /* searchable by the other uid of part errors */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const char *part = argv[1];
    if (!strcmp(part, "files"))
        part_files();
    else if (!strcmp(part, "strided"))
        part_strided(NULL);
    else if (!strcmp(part, "strided_cb"))
        part_strided("enable");
    else if (!strcmp(part, "strided_nocb"))
        part_strided("disable");
    else if (!strcmp(part, "types"))
        part_types();
    else if (!strcmp(part, "ext32"))
        part_ext32();
    else if (!strcmp(part, "ext32x"))
        part_ext32x();
    else if (!strcmp(part, "userrep"))
        part_userrep();
    else if (!strcmp(part, "shared"))
        part_shared();
    else if (!strcmp(part, "nonblock"))
        part_nonblock();
    else if (!strcmp(part, "split"))
        part_split();
    else if (!strcmp(part, "errors"))
        part_errors();
    else if (!strcmp(part, "wronly"))
        part_wronly();
    else if (!strcmp(part, "pending"))
        part_pending();
    else if (!strcmp(part, "seqview"))
        part_seqview();
    else if (!strcmp(part, "pieces"))
        part_pieces();
    else
        CHECK(0, "unknown part %s", part);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) rmdir(dir);
    if (me == 0) printf("io %s: %d ranks ok\n", part, np);
    MPI_Finalize();
    return 0;
}
