/* Overlap of nonblocking MPI-IO with computation: overlap DIR MiB REPS.
 * Each repetition times, on every rank (the slowest counts): (1)
 * MPI_File_iwrite_at of MiB then MPI_Wait, and how long the iwrite_at call
 * itself took; (2) a compute loop alone, sized to take about as long as (1);
 * (3) the iwrite_at, the compute loop, then MPI_Wait. Prints the medians and
 * the median overlap, (t1 + t2 - t3) / min(t1, t2) of each repetition: 1 when
 * the write hides entirely behind the computation, 0 when nothing overlaps.
 * The same for MPI_File_iwrite_at_all. Overlap needs a core for the I/O to
 * run on beside the computing ranks (with page-cached files the write is a
 * copy by the CPU): run fewer ranks than cores. Builds against any MPI
 * (courier-cc, mpicc). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile double sink;

static void compute(long n)
{
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    sink = x;
}

static double slowest(double mine)
{
    double worst;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

/* io: start the write; work: compute; then wait. *call: the start's time. */
static double timed(MPI_File fh, char *buf, int bytes, int coll, long work, int io, double *call)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Offset at = (MPI_Offset)bytes * me;
    if (io && coll) MPI_File_iwrite_at_all(fh, at, buf, bytes, MPI_BYTE, &q);
    if (io && !coll) MPI_File_iwrite_at(fh, at, buf, bytes, MPI_BYTE, &q);
    double c = MPI_Wtime() - t;
    compute(work);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    double all = slowest(MPI_Wtime() - t);
    if (call) *call = slowest(c);
    return all;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc < 4) {
        if (!me) fprintf(stderr, "usage: overlap DIR MiB REPS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bytes = atoi(argv[2]) << 20, reps = atoi(argv[3]);
    char path[1024];
    snprintf(path, sizeof path, "%s/overlap.dat", argv[1]);
    char *buf = malloc((size_t)bytes);
    memset(buf, 'a' + me, (size_t)bytes);
    double *v = malloc(sizeof(double) * 5 * (size_t)reps);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    for (int coll = 0; coll < 2; coll++) {
        /* a loop about as long as the write (the best of 3 of each) */
        double tw = 1e9, tl = 1e9;
        for (int k = 0; k < 3; k++) {
            double w = timed(fh, buf, bytes, coll, 0, 1, NULL), t0 = MPI_Wtime();
            compute(10000000);
            double l = slowest(MPI_Wtime() - t0);
            if (w < tw) tw = w;
            if (l < tl) tl = l;
        }
        long work = (long)(10000000 * tw / tl);
        double *t1 = v, *t2 = v + reps, *t3 = v + 2 * reps, *ov = v + 3 * reps, *tc = v + 4 * reps;
        for (int r = 0; r < reps; r++) {
            t1[r] = timed(fh, buf, bytes, coll, 0, 1, &tc[r]);
            t2[r] = timed(fh, buf, bytes, coll, work, 0, NULL);
            t3[r] = timed(fh, buf, bytes, coll, work, 1, NULL);
            ov[r] = (t1[r] + t2[r] - t3[r]) / (t1[r] < t2[r] ? t1[r] : t2[r]);
        }
        if (!me)
            printf("%s %d MiB: write %.1f ms (call %.2f ms) compute %.1f ms both %.1f ms overlap "
                   "%.2f\n",
                   coll ? "iwrite_at_all" : "iwrite_at", bytes >> 20, median(t1, reps) * 1e3,
                   median(tc, reps) * 1e3, median(t2, reps) * 1e3, median(t3, reps) * 1e3,
                   median(ov, reps));
    }
    MPI_File_close(&fh);
    if (!me) unlink(path);
    free(v);
    free(buf);
    MPI_Finalize();
    return 0;
}
