/* A systolic matrix-vector product y = A x over a chain of ranks, written with
 * courier's streams (courier/streams.h, after iWarp): rank 0 feeds the words
 * of x into a stream; each rank holds a block of rows of A, takes every x_j as
 * it passes, adds A[i][j] * x_j into its partial sums and passes x_j on to the
 * next rank; at the end each rank sends its block of y back to rank 0 through
 * a stream, and rank 0 checks the whole of y against a serial product (same
 * order of additions: bit for bit). Exits non-zero on a mismatch.
 *   courier run -n 4 systolic [rows-per-rank] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <courier/courier.h>

static double a_elem(int i, int j)
{
    return (double)((i * 7 + j * 13) % 17) - 8.0;
}

static double x_elem(int j)
{
    return 1.0 / (1 + j % 5) + j * 0.25;
}

static uint64_t to_word(double d)
{
    uint64_t w;
    memcpy(&w, &d, sizeof w);
    return w;
}

static double from_word(uint64_t w)
{
    double d;
    memcpy(&d, &w, sizeof d);
    return d;
}

int main(int argc, char **argv)
{
    cr_stream_init();
    int me = cr_rank(), p = cr_size();
    int m = argc > 1 ? atoi(argv[1]) : 64;
    if (m < 1) m = 1;
    int n = m * p;
    double *y = calloc((size_t)m, sizeof *y);
    /* the pipeline: x flows 0 -> 1 -> ... -> p-1, one word at a time */
    cr_stream in = me > 0 ? cr_stream_accept(me - 1, 1, 16) : -1;
    cr_stream out = me < p - 1 ? cr_stream_open(me + 1, 1, NULL, 0, 0) : -1;
    for (int j = 0; j < n; j++) {
        uint64_t w = to_word(x_elem(j));
        if (me > 0 && cr_stream_recv(in, &w) != 1) {
            fprintf(stderr, "rank %d: the x stream ended early at %d\n", me, j);
            return 1;
        }
        double xj = from_word(w);
        for (int i = 0; i < m; i++) y[i] += a_elem(me * m + i, j) * xj;
        if (out >= 0) cr_stream_send(out, w);
    }
    if (out >= 0) cr_stream_close(out);
    if (in >= 0) cr_stream_close(in);
    /* the results go home in blocks */
    int bad = 0;
    if (me > 0) {
        cr_stream home = cr_stream_open(0, 2, NULL, 0, 0);
        uint64_t *w = malloc((size_t)m * sizeof *w);
        for (int i = 0; i < m; i++) w[i] = to_word(y[i]);
        cr_stream_write(home, w, (size_t)m);
        cr_stream_close(home);
        free(w);
    } else {
        double *all = malloc((size_t)n * sizeof *all);
        memcpy(all, y, (size_t)m * sizeof *y);
        uint64_t *w = malloc((size_t)m * sizeof *w);
        for (int r = 1; r < p; r++) {
            cr_stream home = cr_stream_accept(r, 2, 256);
            if (cr_stream_read(home, w, (size_t)m) != (size_t)m) bad++;
            for (int i = 0; i < m; i++) all[r * m + i] = from_word(w[i]);
            cr_stream_close(home);
        }
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int j = 0; j < n; j++) s += a_elem(i, j) * x_elem(j);
            if (s != all[i]) {
                if (bad < 5) fprintf(stderr, "y[%d] = %g, serial %g\n", i, all[i], s);
                bad++;
            }
        }
        printf("systolic: y = A x for n = %d on %d ranks: %s\n", n, p, bad ? "MISMATCH" : "ok");
        free(all);
        free(w);
    }
    cr_stream_finalize();
    free(y);
    return bad ? 1 : 0;
}
