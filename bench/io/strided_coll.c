/* The strided collective row of bench/io/iobench.c alone, for profiling and
 * before/after runs: strided_coll DIR MiB REPS [READ [FRESH]]. Each rank
 * writes (READ 0, default) or reads (READ 1) MiB through a vector view of
 * 4 KiB blocks dealt round-robin, with MPI_File_write_at_all /
 * read_at_all, REPS times (each a fresh open; FRESH 1: the file removed
 * first, so a write makes it anew and a read finds it empty; HINTS: info
 * hints for the open, "key=value,key=value"). Prints the
 * best and mean of the slowest rank's times. Builds against any MPI. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int me, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 4) {
        if (!me) fprintf(stderr, "usage: strided_coll DIR MiB REPS [READ [FRESH [HINTS]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int mib = atoi(argv[2]), reps = atoi(argv[3]), rd = argc > 4 ? atoi(argv[4]) : 0;
    int fresh = argc > 5 && atoi(argv[5]);
    MPI_Info info = MPI_INFO_NULL;
    if (argc > 6) {
        MPI_Info_create(&info);
        char *h = strdup(argv[6]), *save = NULL;
        for (char *kv = strtok_r(h, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(kv, '=');
            if (!eq) continue;
            *eq = 0;
            MPI_Info_set(info, kv, eq + 1);
        }
        free(h);
    }
    size_t bytes = (size_t)mib << 20;
    const int B = 4096;
    char *buf = malloc(bytes);
    memset(buf, me + 1, bytes);
    char path[512];
    snprintf(path, sizeof path, "%s/sc.dat", argv[1]);
    double best = 1e9, sum = 0;
    for (int r = 0; r < reps; r++) {
        MPI_File fh;
        if (fresh && !me) unlink(path);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
        MPI_Datatype ft;
        MPI_Type_vector((int)(bytes / B), B, B * np, MPI_BYTE, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, (MPI_Offset)B * me, MPI_BYTE, ft, "native", MPI_INFO_NULL);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        MPI_Status st;
        if (rd)
            MPI_File_read_at_all(fh, 0, buf, (int)bytes, MPI_BYTE, &st);
        else
            MPI_File_write_at_all(fh, 0, buf, (int)bytes, MPI_BYTE, &st);
        double mine = MPI_Wtime() - t, worst;
        MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (worst < best) best = worst;
        sum += worst;
        MPI_File_close(&fh);
        MPI_Type_free(&ft);
    }
    if (!me)
        printf("%s best %.1f ms (%.0f MB/s) mean %.1f ms\n", rd ? "read" : "write", best * 1e3,
               bytes * np / best / 1e6, sum / reps * 1e3);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    MPI_Finalize();
}
