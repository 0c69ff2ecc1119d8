/* MPI-IO independent accesses whose memory type is non-contiguous with long
 * runs (src/api/mpi_file_io.c mem_runs: read and written in place, no
 * staging buffer): memruns DIR. Each rank's view is 4 KiB blocks dealt
 * round-robin over the ranks; the memory type is 700-byte runs every 1000
 * bytes (so the file's blocks and the memory's runs cut each other
 * anywhere). With data sieving forced on and off: blocking and nonblocking
 * writes, the file checked byte for byte against the sequential
 * computation; reads back (independent and collective), the gaps of memory
 * left alone; a read past the
 * end of the file (its count, what it read); and IOR's strided-view memory
 * type (4 KiB resized to extent 0: every instance on the same bytes). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../mpi/mcheck.h"

#define B 4096       /* file block */
#define NB 96        /* memory runs an instance */
#define RUN 700      /* bytes a run */
#define GAP 1000     /* run start to run start */
#define S (NB * RUN) /* stream bytes of one instance */

static int me, np;

static unsigned char val(int r, long i)
{
    return (unsigned char)(r * 131 + i * 7 + i / 251);
}

/* file offset of rank r's stream byte i */
static long file_off(int r, long i)
{
    return (i / B) * B * np + (long)r * B + i % B;
}

static void set_view(MPI_File fh)
{
    MPI_Datatype ft, ftr;
    OK(MPI_Type_vector(8, B, B * np, MPI_BYTE, &ft));
    OK(MPI_Type_create_resized(ft, 0, (MPI_Aint)B * np * 8, &ftr));
    OK(MPI_Type_commit(&ftr));
    OK(MPI_File_set_view(fh, (MPI_Offset)me * B, MPI_BYTE, ftr, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    MPI_Type_free(&ftr);
}

/* memory of one instance of the memory type, stream bytes [s, s + S) */
static void fill(unsigned char *m, long s)
{
    memset(m, 0xEE, (size_t)(NB - 1) * GAP + RUN);
    for (long k = 0; k < NB; k++)
        for (long j = 0; j < RUN; j++) m[k * GAP + j] = val(me, s + k * RUN + j);
}

/* m holds stream bytes [s, s + n) of rank me in its runs (n: a prefix), the gaps untouched */
static void check_mem(const unsigned char *m, long s, long n, const char *what)
{
    for (long k = 0; k < NB; k++) {
        for (long j = 0; j < RUN && k * RUN + j < n; j++)
            CHECK(m[k * GAP + j] == val(me, s + k * RUN + j),
                  "%s: rank %d, stream byte %ld: %#x, not %#x", what, me, s + k * RUN + j,
                  m[k * GAP + j], val(me, s + k * RUN + j));
        if (k < NB - 1)
            for (long j = RUN; j < GAP; j++)
                CHECK(m[k * GAP + j] == 0xEE, "%s: rank %d: the gap at memory byte %ld was written",
                      what, me, k * GAP + j);
    }
}

static void run(const char *dir, const char *ds)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/memruns-%s", dir, ds);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", ds);
    MPI_Info_set(info, "romio_ds_write", ds);
    MPI_Datatype mt;
    OK(MPI_Type_vector(NB, RUN, GAP, MPI_BYTE, &mt));
    OK(MPI_Type_commit(&mt));
    size_t mlen = (size_t)(NB - 1) * GAP + RUN;
    unsigned char *m0 = malloc(mlen), *m1 = malloc(mlen);
    MPI_File fh;
    MPI_Status st;
    MPI_Request rq;
    int n;

    /* writes: stream [0, S) blocking, [S, 2S) nonblocking */
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    set_view(fh);
    fill(m0, 0);
    fill(m1, S);
    OK(MPI_File_write_at(fh, 0, m0, 1, mt, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(n == S, "rank %d: write_at wrote %d bytes, not %d", me, n, S);
    OK(MPI_File_iwrite_at(fh, S, m1, 1, mt, &rq));
    OK(MPI_Wait(&rq, &st));
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) { /* the file, byte for byte */
        FILE *fp = fopen(p, "rb");
        CHECK(fp, "cannot open %s", p);
        long len = file_off(np - 1, 2L * S - 1) + 1;
        unsigned char *f = calloc((size_t)len + 1, 1);
        CHECK(fread(f, 1, (size_t)len + 1, fp) == (size_t)len, "%s: not %ld bytes long", p, len);
        fclose(fp);
        for (int r = 0; r < np; r++)
            for (long i = 0; i < 2L * S; i++)
                CHECK(f[file_off(r, i)] == val(r, i),
                      "%s (ds %s): rank %d's byte %ld: %#x, not %#x", p, ds, r, i,
                      f[file_off(r, i)], val(r, i));
        free(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* reads back: blocking, nonblocking, and past the end */
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, info, &fh));
    set_view(fh);
    memset(m0, 0xEE, mlen);
    memset(m1, 0xEE, mlen);
    OK(MPI_File_read_at(fh, 0, m0, 1, mt, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(n == S, "rank %d: read_at read %d bytes, not %d", me, n, S);
    check_mem(m0, 0, S, "read_at");
    OK(MPI_File_iread_at(fh, S, m1, 1, mt, &rq));
    OK(MPI_Wait(&rq, &st));
    check_mem(m1, S, S, "iread_at");
    /* collective reads (on one host: each rank its own part, in place) */
    memset(m0, 0xEE, mlen);
    memset(m1, 0xEE, mlen);
    OK(MPI_File_read_at_all(fh, 0, m0, 1, mt, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(n == S, "rank %d: read_at_all read %d bytes, not %d", me, n, S);
    check_mem(m0, 0, S, "read_at_all");
    OK(MPI_File_iread_at_all(fh, S, m1, 1, mt, &rq));
    OK(MPI_Wait(&rq, &st));
    check_mem(m1, S, S, "iread_at_all");
    /* from 1000 bytes before the stream's end: the last rank's stream ends
     * the file; the others' go on through the zeros of their last block */
    long at = 2L * S - 1000, left = B - (2L * S) % B;
    long want = me == np - 1 ? 1000 : 1000 + left;
    memset(m0, 0xEE, mlen);
    OK(MPI_File_read_at(fh, at, m0, 1, mt, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(n == want, "rank %d: a read past the end read %d bytes, not %ld", me, n, want);
    for (long i = 0; i < 1000; i++) {
        long k = i / RUN, j = i % RUN;
        CHECK(m0[k * GAP + j] == val(me, at + i), "past the end: rank %d, byte %ld", me, i);
    }
    OK(MPI_File_close(&fh));

    /* IOR's memory type: 4 KiB of extent 0, four instances on the same bytes */
    snprintf(p, sizeof p, "%s/memruns-ior-%s", dir, ds);
    MPI_Datatype c, z;
    OK(MPI_Type_contiguous(B, MPI_BYTE, &c));
    OK(MPI_Type_create_resized(c, 0, 0, &z));
    OK(MPI_Type_commit(&z));
    unsigned char *four = malloc(4 * B), one[B], back[B];
    for (int i = 0; i < 4 * B; i++) four[i] = val(me, i * 3L);
    for (int i = 0; i < B; i++) one[i] = val(me + 7, i);
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    set_view(fh);
    OK(MPI_File_write_at(fh, 0, one, 4, z, &st)); /* stream [0, 4B): one, four times */
    OK(MPI_File_write_at(fh, 4 * B, four, 4 * B, MPI_BYTE, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char *got = malloc(4 * B);
    OK(MPI_File_read_at(fh, 0, got, 4 * B, MPI_BYTE, &st));
    for (int k = 0; k < 4; k++)
        CHECK(!memcmp(got + k * B, one, B), "rank %d: extent-0 write, instance %d wrong", me, k);
    OK(MPI_File_read_at(fh, 4 * B, back, 4, z, &st)); /* the last instance's bytes stay */
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(n == 4 * B, "rank %d: extent-0 read of %d bytes, not %d", me, n, 4 * B);
    CHECK(!memcmp(back, four + 3 * B, B), "rank %d: extent-0 read: not the last block", me);
    OK(MPI_File_close(&fh));
    MPI_Type_free(&c);
    MPI_Type_free(&z);
    MPI_Type_free(&mt);
    MPI_Info_free(&info);
    free(four);
    free(got);
    free(m0);
    free(m1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(argc >= 2, "usage: memruns DIR");
    char dir[512];
    long pid = (long)getpid(); /* a directory of this run's own */
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "%s.%ld", argv[1], pid);
    if (me == 0) mkdir(dir, 0755);
    MPI_Barrier(MPI_COMM_WORLD);
    run(dir, "enable");
    run(dir, "disable");
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        char p[1100];
        const char *names[] = {"memruns-enable", "memruns-disable", "memruns-ior-enable",
                               "memruns-ior-disable"};
        for (int i = 0; i < 4; i++) {
            snprintf(p, sizeof p, "%s/%s", dir, names[i]);
            unlink(p);
        }
        rmdir(dir);
        printf("io memruns: %d ranks ok\n", np);
    }
    MPI_Finalize();
    return 0;
}
