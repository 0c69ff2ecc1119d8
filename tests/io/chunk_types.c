/* A filetype made of tens of thousands of live derived types (parallel HDF5's
 * "link chunk" collective I/O, testphdf5 -o LC_coll_MD_read, at the MPI
 * level): every rank builds one small type per chunk it writes, as HDF5's
 * H5S_mpio_space_type does (a contiguous type, a vector of it, an hindexed
 * one of that; the first two freed at once), keeps all of them alive, then
 * makes one struct of them all, the chunks of the ranks interleaved in the
 * file, sets it as the view and writes and reads it collectively; every int
 * of the file is checked. Then every type is freed.
 * Regression: each new type was put in the first free slot found by scanning
 * the type table from its start, so making n live types took n^2/2 steps:
 * 4 ranks of HDF5's test made 60,000 types each and never got to the write
 * (still running after 10 minutes on 2 cores; Open MPI: 10 s).
 * Usage: chunk_types DIR [CHUNKS] (default 40,000 chunks per rank). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcheck.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc >= 2, "usage: chunk_types DIR [CHUNKS]");
    int nch = argc > 2 ? atoi(argv[2]) : 40000;
    char path[4096];
    snprintf(path, sizeof path, "%s/chunk_types.dat", argv[1]);

    /* chunk j of rank r holds 2 ints at file int 2 * (j * size + r) */
    MPI_Datatype *chunk = malloc((size_t)nch * sizeof *chunk);
    int *bl = malloc((size_t)nch * sizeof *bl);
    MPI_Aint *disp = malloc((size_t)nch * sizeof *disp);
    int *buf = malloc((size_t)nch * 2 * sizeof *buf);
    CHECK(chunk && bl && disp && buf, "out of memory");
    for (int j = 0; j < nch; j++) {
        MPI_Datatype c, v;
        MPI_Aint zero = 0;
        int one = 1;
        OK(MPI_Type_contiguous(2, MPI_INT, &c));
        OK(MPI_Type_vector(1, 1, 1, c, &v));
        OK(MPI_Type_create_hindexed(1, &one, &zero, v, &chunk[j]));
        OK(MPI_Type_free(&c));
        OK(MPI_Type_free(&v));
        bl[j] = 1;
        disp[j] = (MPI_Aint)(2 * ((size_t)j * (size_t)size + (size_t)rank) * sizeof(int));
        buf[2 * j] = rank * 1000003 + j;
        buf[2 * j + 1] = -(rank * 1000003 + j);
    }
    MPI_Datatype ftype;
    OK(MPI_Type_create_struct(nch, bl, disp, chunk, &ftype));
    OK(MPI_Type_commit(&ftype));

    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", MPI_INFO_NULL));
    MPI_Status st;
    int n = 0;
    OK(MPI_File_write_at_all(fh, 0, buf, 2 * nch, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 2 * nch, "wrote %d ints of %d", n, 2 * nch);
    memset(buf, 0, (size_t)nch * 2 * sizeof *buf);
    OK(MPI_File_read_at_all(fh, 0, buf, 2 * nch, MPI_INT, &st));
    for (int j = 0; j < nch; j++)
        CHECK(buf[2 * j] == rank * 1000003 + j && buf[2 * j + 1] == -(rank * 1000003 + j),
              "chunk %d read back as %d %d", j, buf[2 * j], buf[2 * j + 1]);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* rank 0 checks the whole file as a sequential program would */
    if (rank == 0) {
        FILE *fp = fopen(path, "rb");
        CHECK(fp, "cannot open %s", path);
        long total = 2L * nch * size;
        int *all = malloc((size_t)total * sizeof *all);
        CHECK(all && fread(all, sizeof *all, (size_t)total, fp) == (size_t)total, "short file %s",
              path);
        fclose(fp);
        for (long k = 0; k < total / 2; k++) {
            int r = (int)(k % size), j = (int)(k / size);
            CHECK(all[2 * k] == r * 1000003 + j && all[2 * k + 1] == -(r * 1000003 + j),
                  "file ints %ld: %d %d, want chunk %d of rank %d", 2 * k, all[2 * k],
                  all[2 * k + 1], j, r);
        }
        free(all);
        remove(path);
    }
    for (int j = 0; j < nch; j++) OK(MPI_Type_free(&chunk[j]));
    OK(MPI_Type_free(&ftype));
    free(chunk);
    free(bl);
    free(disp);
    free(buf);
    if (rank == 0) printf("io chunk types: %d ranks, %d chunks each ok\n", size, nch);
    MPI_Finalize();
    return 0;
}
