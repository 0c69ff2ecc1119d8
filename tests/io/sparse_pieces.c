/* Independent and collective accesses of many small, sparse pieces (parallel
 * HDF5's testpar/t_bigio point selection, at the MPI level): a file of rows
 * of 4 * size long longs, rank r owning columns 4r and 4r + 1 of every row
 * (16 bytes every 32 * size), through a vector filetype; each rank writes
 * its pieces with MPI_File_write_at, reads them back with MPI_File_read_at and
 * MPI_File_read_at_all, then writes them again with MPI_File_write_at_all;
 * rank 0 checks every byte of the file (the other columns stay zero).
 * Regression: independent I/O looked for a data sieving window from every
 * piece in turn, scanning the whole window each time, and took one system
 * call per piece for windows less than a quarter data: t_bigio took 244 s at
 * 4 ranks on 2 cores. Usage: sparse_pieces DIR [ROWS] (default 512 Ki rows). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcheck.h"

static long long value(int rank, long row, int col)
{
    return (long long)row * 1000 + rank * 10 + col + 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc >= 2, "usage: sparse_pieces DIR [ROWS]");
    long rows = argc > 2 ? atol(argv[2]) : 1L << 19;
    char path[4096];
    snprintf(path, sizeof path, "%s/sparse_pieces.dat", argv[1]);

    MPI_Datatype ftype;
    OK(MPI_Type_vector((int)rows, 2, 4 * size, MPI_LONG_LONG, &ftype));
    OK(MPI_Type_commit(&ftype));
    long long *buf = malloc((size_t)rows * 2 * sizeof *buf);
    CHECK(buf, "out of memory");
    for (long i = 0; i < rows; i++)
        for (int c = 0; c < 2; c++) buf[2 * i + c] = value(rank, i, c);

    MPI_File fh;
    if (rank == 0) MPI_File_delete(path, MPI_INFO_NULL);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, (MPI_Offset)(4 * rank * sizeof(long long)), MPI_LONG_LONG, ftype,
                         "native", MPI_INFO_NULL));
    MPI_Status st;
    int n = 0;
    OK(MPI_File_write_at(fh, 0, buf, (int)(2 * rows), MPI_LONG_LONG, &st));
    OK(MPI_Get_count(&st, MPI_LONG_LONG, &n));
    CHECK(n == 2 * rows, "write_at wrote %d of %ld", n, 2 * rows);
    OK(MPI_File_sync(fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_sync(fh));
    for (int coll = 0; coll < 2; coll++) {
        memset(buf, 0, (size_t)rows * 2 * sizeof *buf);
        if (coll)
            OK(MPI_File_read_at_all(fh, 0, buf, (int)(2 * rows), MPI_LONG_LONG, &st));
        else
            OK(MPI_File_read_at(fh, 0, buf, (int)(2 * rows), MPI_LONG_LONG, &st));
        OK(MPI_Get_count(&st, MPI_LONG_LONG, &n));
        CHECK(n == 2 * rows, "%s read %d of %ld", coll ? "read_at_all" : "read_at", n, 2 * rows);
        for (long i = 0; i < rows; i++)
            for (int c = 0; c < 2; c++)
                CHECK(buf[2 * i + c] == value(rank, i, c), "%s: row %ld col %d: %lld, want %lld",
                      coll ? "read_at_all" : "read_at", i, c, buf[2 * i + c], value(rank, i, c));
    }
    OK(MPI_File_write_at_all(fh, 0, buf, (int)(2 * rows), MPI_LONG_LONG, &st));
    OK(MPI_Get_count(&st, MPI_LONG_LONG, &n));
    CHECK(n == 2 * rows, "write_at_all wrote %d of %ld", n, 2 * rows);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    if (rank == 0) { /* as a sequential program reads the file */
        FILE *fp = fopen(path, "rb");
        CHECK(fp, "cannot open %s", path);
        long w = 4L * size;
        long long *row = malloc((size_t)w * sizeof *row);
        CHECK(row, "out of memory");
        for (long i = 0; i < rows; i++) {
            size_t got = fread(row, sizeof *row, (size_t)w, fp);
            /* the last row ends with the last rank's pieces */
            CHECK(got == (size_t)w || (i == rows - 1 && got == (size_t)w - 2), "short row %ld", i);
            for (long k = 0; k < (long)got; k++) {
                int r = (int)(k / 4), c = (int)(k % 4);
                long long want = c < 2 ? value(r, i, c) : 0;
                CHECK(row[k] == want, "row %ld, long long %ld: %lld, want %lld", i, k, row[k],
                      want);
            }
        }
        fclose(fp);
        free(row);
        remove(path);
    }
    OK(MPI_Type_free(&ftype));
    free(buf);
    if (rank == 0) printf("io sparse pieces: %d ranks, %ld rows ok\n", size, rows);
    MPI_Finalize();
    return 0;
}
