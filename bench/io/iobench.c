/* MPI-IO bandwidth, IOR-like (IOR is not installed here): iobench DIR MiB
 * REPS. Each rank writes then reads back MiB of data in four patterns:
 *   contig_ind / contig_coll: one block per rank (rank r at r * MiB), with
 *     MPI_File_write_at / _at_all;
 *   strided_ind / strided_coll: blocks of 4 KiB dealt round-robin to the
 *     ranks through a vector filetype (every rank's data interleaved with
 *     every other's), with MPI_File_write / _write_all.
 * Prints one line per pattern and direction: the aggregate MB/s (all ranks'
 * bytes over the slowest rank's time), the best of REPS. Every read is
 * checked. Builds against any MPI (courier-cc, mpicc). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me, np;

static double run(const char *path, int mib, int strided, int coll, int write, char *buf)
{
    MPI_File fh;
    size_t bytes = (size_t)mib << 20;
    const int B = 4096;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_Datatype ft = MPI_DATATYPE_NULL;
    if (strided) {
        MPI_Type_vector((int)(bytes / B), B, B * np, MPI_BYTE, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, (MPI_Offset)B * me, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    }
    if (!write) memset(buf, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    MPI_Status st;
    int rc;
    MPI_Offset off = strided ? 0 : (MPI_Offset)bytes * me;
    int n = (int)bytes;
    if (write)
        rc = coll ? MPI_File_write_at_all(fh, off, buf, n, MPI_BYTE, &st)
                  : MPI_File_write_at(fh, off, buf, n, MPI_BYTE, &st);
    else
        rc = coll ? MPI_File_read_at_all(fh, off, buf, n, MPI_BYTE, &st)
                  : MPI_File_read_at(fh, off, buf, n, MPI_BYTE, &st);
    double mine = MPI_Wtime() - t, worst;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "iobench: rank %d: an access failed (%d)\n", me, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (!write)
        for (size_t i = 0; i < bytes; i += 997)
            if (buf[i] != (char)(me * 31 + i % 251)) {
                fprintf(stderr, "iobench: rank %d: byte %zu read back wrong\n", me, i);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    MPI_File_close(&fh);
    if (ft != MPI_DATATYPE_NULL) MPI_Type_free(&ft);
    return (double)bytes * np / worst / 1e6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 4) {
        if (!me) fprintf(stderr, "usage: iobench DIR MiB REPS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int mib = atoi(argv[2]), reps = atoi(argv[3]);
    char path[1024];
    snprintf(path, sizeof path, "%s/iobench.dat", argv[1]);
    char *buf = malloc((size_t)mib << 20);
    static const char *const names[] = {"contig_ind", "contig_coll", "strided_ind", "strided_coll"};
    for (int p = 0; p < 4; p++) {
        double bw[2] = {0, 0};
        for (int r = 0; r < reps; r++)
            for (int w = 1; w >= 0; w--) {
                if (w)
                    for (size_t i = 0; i < (size_t)mib << 20; i++)
                        buf[i] = (char)(me * 31 + i % 251);
                double x = run(path, mib, p >= 2, p & 1, w, buf);
                if (x > bw[w]) bw[w] = x;
            }
        if (!me)
            printf("%s %d ranks %d MiB: write %.0f MB/s read %.0f MB/s\n", names[p], np, mib, bw[1],
                   bw[0]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (!me) unlink(path);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
