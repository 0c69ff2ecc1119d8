/* MPI-IO collective accesses (src/api/mpi_file_coll.c): own_pieces DIR PART.
 *   own   (one host) write_at_all of 4 KiB blocks dealt round-robin over the ranks (IOR's
 *      strided pattern), from one buffer and through a memory type of 4 KiB
 *      runs: pieces of a page each, so no one aggregator takes them
 *      (MF_CB_PIECE): every rank writes as many bytes as its own, which its
 *      /proc/self/io wchar shows (by one aggregator, the others wrote
 *      nothing), and, single copy on, in a quarter of the system calls of
 *      its pieces or fewer (syscw): each rank writes its share of the span
 *      with the other ranks' adjacent pieces joined to its own (MF_CB_SPREAD;
 *      one pwritev a piece before); the file checked byte for byte. Then
 *      1 KiB blocks from one buffer: every rank an aggregator too (one
 *      aggregator before, the others writing nothing), single copy on.
 *   refused  (one host) own's write through memory runs, rank 0 having the
 *      kernel refuse its process_vm_readv/writev just before (a seccomp
 *      filter, tests/deny_cma.h): its single copy of another rank's runs is
 *      refused, and every rank writes again by messages (its runs packed
 *      then); the file checked byte for byte.
 *   runs  a memory type of 700-byte runs every 1000 bytes (its runs handed to
 *      collective buffering unpacked: packed there only when an aggregator
 *      takes the access) through 512-byte blocks dealt round-robin (small
 *      pieces: the aggregator takes them), write_all then read_all with
 *      romio_cb_read enabled: the file byte for byte, the memory read back
 *      run for run, its gaps left alone.
 * own exits 77 (skipped) where /proc/self/io cannot be read. Prints
 * "io own_pieces PART: N ranks ok" (rank 0). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../deny_cma.h"
#include "../mpi/mcheck.h"

static int me, np;

static unsigned char val(int r, long i)
{
    return (unsigned char)(r * 131 + i * 7 + i / 251 + 1);
}

/* bytes this process has handed to write system calls (syscw: the calls);
 * -1: unknown */
static long long proc_io(const char *what)
{
    FILE *fp = fopen("/proc/self/io", "r");
    if (!fp) return -1;
    char line[128], fmt[64];
    snprintf(fmt, sizeof fmt, "%s: %%lld", what);
    long long v = -1;
    while (fgets(line, sizeof line, fp))
        if (sscanf(line, fmt, &v) == 1) break;
    fclose(fp);
    return v;
}
static long long wchar(void)
{
    return proc_io("wchar");
}

/* view: blocks of b bytes, rank me's every np-th */
static void set_view(MPI_File fh, int b)
{
    MPI_Datatype c, ft;
    OK(MPI_Type_contiguous(b, MPI_BYTE, &c));
    OK(MPI_Type_create_resized(c, 0, (MPI_Aint)b * np, &ft));
    OK(MPI_Type_commit(&ft));
    OK(MPI_File_set_view(fh, (MPI_Offset)me * b, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    MPI_Type_free(&c);
    MPI_Type_free(&ft);
}

/* rank 0: the file holds every rank's stream [0, n) in blocks of b */
static void check_file(const char *p, int b, long n)
{
    if (me) return;
    FILE *fp = fopen(p, "rb");
    CHECK(fp, "cannot open %s", p);
    long len = n * np;
    unsigned char *f = malloc((size_t)len + 1);
    CHECK(fread(f, 1, (size_t)len + 1, fp) == (size_t)len, "%s: not %ld bytes long", p, len);
    fclose(fp);
    for (int r = 0; r < np; r++)
        for (long i = 0; i < n; i++) {
            long at = (i / b) * b * np + (long)r * b + i % b;
            CHECK(f[at] == val(r, i), "%s: rank %d's byte %ld (file byte %ld): %#x, not %#x", p, r,
                  i, at, f[at], val(r, i));
        }
    free(f);
}

#define B1 4096
#define N1 (256L * B1)
#define GAP1 100 /* bytes between the memory type's runs */
static void own_pieces(const char *dir, bool refuse)
{
    char p[1100];
    unsigned char *buf = malloc(N1), *mem = malloc(N1 / B1 * (B1 + GAP1));
    for (long i = 0; i < N1; i++) buf[i] = mem[i / B1 * (B1 + GAP1) + i % B1] = val(me, i);
    MPI_Datatype runs; /* the stream's 4 KiB blocks GAP1 bytes apart in memory */
    OK(MPI_Type_vector((int)(N1 / B1), B1, B1 + GAP1, MPI_BYTE, &runs));
    OK(MPI_Type_commit(&runs));
    const char *nocma = getenv("COURIER_NO_CMA");
    bool sc = (!nocma || strcmp(nocma, "1")) && !refuse; /* single copy may be on */
    if (refuse && me == 0) {
        const char *failed = deny_cma();
        CHECK(!failed, "%s: %s", failed, strerror(errno));
    }
    for (int how = refuse ? 1 : 0; how < (refuse ? 2 : 3); how++) {
        int bs = how == 2 ? B1 / 4 : B1; /* how 2: pieces of 1 KiB, from one buffer */
        snprintf(p, sizeof p, "%s/own%d", dir, how);
        MPI_File fh;
        MPI_Status st;
        OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
        set_view(fh, bs);
        long long w0 = wchar(), c0 = proc_io("syscw");
        if (how != 1)
            OK(MPI_File_write_at_all(fh, 0, buf, (int)N1, MPI_BYTE, &st));
        else
            OK(MPI_File_write_at_all(fh, 0, mem, 1, runs, &st));
        long long w1 = wchar(), c1 = proc_io("syscw");
        OK(MPI_File_close(&fh));
        CHECK((how == 2 && !sc) || w1 - w0 >= N1,
              "rank %d wrote %lld bytes itself in write_at_all (%d-byte pieces, %s), not its "
              "own %ld: one aggregator took them",
              me, w1 - w0, bs, how == 1 ? "memory runs" : "one buffer", N1);
        CHECK(!sc || c1 - c0 <= N1 / bs / 4,
              "rank %d made %lld write system calls for its %ld pieces of %d bytes (%s): the "
              "ranks' adjacent pieces were not joined",
              me, c1 - c0, N1 / bs, bs, how == 1 ? "memory runs" : "one buffer");
        MPI_Barrier(MPI_COMM_WORLD);
        check_file(p, bs, N1);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) unlink(p);
    }
    MPI_Type_free(&runs);
    free(buf);
    free(mem);
}

#define B2 512
#define NB 64   /* memory runs an instance */
#define RUN 700 /* bytes a run */
#define GAP 1000
#define S ((long)NB * RUN) /* stream bytes of one instance */
#define K 8                /* instances */
static void runs_cb(const char *dir)
{
    char p[1100];
    snprintf(p, sizeof p, "%s/runs", dir);
    MPI_Datatype one, mt;
    OK(MPI_Type_vector(NB, RUN, GAP, MPI_BYTE, &one));
    OK(MPI_Type_create_resized(one, 0, (MPI_Aint)NB * GAP, &mt));
    OK(MPI_Type_commit(&mt));
    size_t mlen = (size_t)K * NB * GAP;
    unsigned char *m = malloc(mlen);
    memset(m, 0xEE, mlen);
    for (long s = 0; s < K * S; s++) m[(s / RUN) * GAP + s % RUN] = val(me, s);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_read", "enable");
    MPI_File fh;
    MPI_Status st;
    int n;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    set_view(fh, B2);
    OK(MPI_File_write_at_all(fh, 0, m, K, mt, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(n == K * S, "rank %d: write_at_all wrote %d bytes, not %ld", me, n, K * S);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_file(p, B2, K * S);
    memset(m, 0xEE, mlen);
    OK(MPI_File_read_at_all(fh, 0, m, K, mt, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(n == K * S, "rank %d: read_at_all read %d bytes, not %ld", me, n, K * S);
    for (size_t i = 0; i < mlen; i++) {
        long s = (long)(i / GAP) * RUN + (long)(i % GAP);
        if (i % GAP < RUN)
            CHECK(m[i] == val(me, s), "rank %d: read_at_all: memory byte %zu: %#x, not %#x", me, i,
                  m[i], val(me, s));
        else
            CHECK(m[i] == 0xEE, "rank %d: read_at_all wrote the gap at memory byte %zu", me, i);
    }
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p);
    MPI_Info_free(&info);
    MPI_Type_free(&one);
    MPI_Type_free(&mt);
    free(m);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(argc >= 3 &&
              (!strcmp(argv[2], "own") || !strcmp(argv[2], "runs") || !strcmp(argv[2], "refused")),
          "usage: own_pieces DIR own|runs|refused");
    bool own = strcmp(argv[2], "runs") != 0;
    int can = !own || wchar() >= 0, all = 0;
    MPI_Allreduce(&can, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (me == 0) printf("io own_pieces %s: /proc/self/io cannot be read: skipped\n", argv[2]);
        MPI_Finalize();
        return 77;
    }
    char dir[512];
    long pid = (long)getpid(); /* a directory of this run's own */
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "%s.%ld", argv[1], pid);
    if (me == 0) mkdir(dir, 0755);
    MPI_Barrier(MPI_COMM_WORLD);
    if (own)
        own_pieces(dir, !strcmp(argv[2], "refused"));
    else
        runs_cb(dir);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        rmdir(dir);
        printf("io own_pieces %s: %d ranks ok\n", argv[2], np);
    }
    MPI_Finalize();
    return 0;
}
