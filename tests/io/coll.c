/* MPI-IO collective buffering's paths (src/api/mpi_file_coll.c):
 * io_coll MODE DIR. Every rank writes, with MPI_File_write_all, 16-byte
 * blocks through a vector view, one in every group of np + 1 blocks (the
 * last block of each group a hole that must keep the 0x55 the file held),
 * 5000 blocks per rank (more than the 4096 offsets an aggregator reads of
 * another rank at a time), in windows of 64 KiB (many rounds); the file is
 * checked byte for byte against what a sequential program computes, then
 * read back with MPI_File_read_all into a zeroed buffer and compared.
 *   defaults      the defaults (on one host: every rank an aggregator, by
 *                 single copy; over tcp and across hosts: one aggregator a
 *                 host, by messages)
 *   two           cb_nodes 2: a second aggregator, whose domain starts
 *                 mid-file (it walks the others' offsets from their start)
 *   refused_write rank 0 (an aggregator) has the kernel refuse its
 *                 process_vm_readv/writev (a seccomp filter, as
 *                 tests/transport/refused.c) just before the write: its
 *                 first read of another rank is refused, and every rank does
 *                 the write again by messages
 *   refused_read  the same just before the read
 *   empty         the last rank's view has an empty filetype (one block of
 *                 length 0: PnetCDF's view on a rank that owns nothing of a
 *                 variable), and it writes and reads 0 bytes in the
 *                 collectives (its blocks keep 0x55); an access of 1 byte
 *                 through that view fails with MPI_ERR_ARG
 * Prints "io_coll MODE: N ranks ok" (rank 0). */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../deny_cma.h"
#include "../mpi/mcheck.h"

static int me, np;

static unsigned char byte_of(int owner, long i)
{
    return (unsigned char)(owner * 37 + i % 239 + 1);
}

/* From now on the kernel refuses this process's process_vm_readv/writev with
 * EPERM, in every thread. */
static void deny(void)
{
    const char *failed = deny_cma();
    CHECK(!failed, "%s: %s", failed, strerror(errno));
    char x = 0, y = 1;
    struct iovec l = {&x, 1}, r = {&y, 1};
    CHECK(process_vm_readv(getpid(), &l, 1, &r, 1, 0) < 0 && errno == EPERM,
          "process_vm_readv still allowed");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(argc == 3, "usage: io_coll MODE DIR");
    const char *mode = argv[1];
    const int B = 16, N = 5000, G = np + 1;
    long size = (long)B * G * N;
    char p[600];
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(p, sizeof p, "%s.%ld.dat", argv[2], pid);
    if (me == 0) {
        FILE *fp = fopen(p, "wb");
        CHECK(fp, "%s: %s", p, strerror(errno));
        for (long i = 0; i < size; i++) fputc(0x55, fp);
        fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, "cb_buffer_size", "65536");
    /* reads on one host go through the aggregator only when asked */
    MPI_Info_set(in, "romio_cb_read", "enable");
    if (!strcmp(mode, "two")) MPI_Info_set(in, "cb_nodes", "2");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, in, &fh));
    MPI_Info_free(&in);
    MPI_Datatype ft, ftr;
    bool empty = !strcmp(mode, "empty") && me == np - 1, none = !strcmp(mode, "empty");
    if (empty) { /* no data: size 0, extent 0 */
        int zero = 0;
        MPI_Aint at = 0;
        OK(MPI_Type_create_hindexed(1, &zero, &at, MPI_BYTE, &ft));
        OK(MPI_Type_dup(ft, &ftr));
    } else {
        MPI_Type_vector(N, B, B * G, MPI_BYTE, &ft);
        MPI_Type_create_resized(ft, 0, (MPI_Aint)B * G * N, &ftr);
    }
    MPI_Type_commit(&ftr);
    OK(MPI_File_set_view(fh, (MPI_Offset)B * me, MPI_BYTE, ftr, "native", MPI_INFO_NULL));
    if (empty) {
        int ec;
        unsigned char one = 1;
        MPI_Error_class(MPI_File_write_at(fh, 0, &one, 1, MPI_BYTE, MPI_STATUS_IGNORE), &ec);
        CHECK(ec == MPI_ERR_ARG, "a byte through an empty filetype: class %d", ec);
    }
    size_t n1 = empty ? 0 : (size_t)B * N;
    unsigned char *w = malloc(n1 + 1), *r = calloc(1, n1 + 1), *f = malloc((size_t)size);
    CHECK(w && r && f, "out of memory");
    for (size_t i = 0; i < n1; i++) w[i] = byte_of(me, (long)i);
    if (!strcmp(mode, "refused_write") && me == 0) deny();
    MPI_Status st;
    int cnt;
    OK(MPI_File_write_all(fh, w, (int)n1, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == (int)n1, "write_all count %d", cnt);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FILE *fp = fopen(p, "rb");
    CHECK(fp && fread(f, 1, (size_t)size + 1, fp) == (size_t)size, "reading %s back", p);
    fclose(fp);
    for (long i = 0; i < size; i++) {
        int blk = (int)(i / B % G);
        int want = blk < np && !(none && blk == np - 1)
                       ? byte_of(blk, i / ((long)B * G) * B + i % B)
                       : 0x55;
        CHECK(f[i] == want, "file byte %ld: %#x, want %#x", i, f[i], want);
    }
    if (!strcmp(mode, "refused_read") && me == 0) deny();
    OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_read_all(fh, r, (int)n1, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == (int)n1, "read_all count %d", cnt);
    for (size_t i = 0; i < n1; i++)
        CHECK(r[i] == w[i], "read_all byte %zu: %#x, want %#x", i, r[i], w[i]);
    OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    MPI_Type_free(&ftr);
    free(w);
    free(r);
    free(f);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        unlink(p);
        printf("io_coll %s: %d ranks ok\n", mode, np);
    }
    MPI_Finalize();
    return 0;
}
