/* The GMD communication modes (courier/modes.h) measured against seed 004's
 * model T_ipc = T_startup + T_trans * bytes: for each mode and size, rank 0
 * sends a train of messages to rank 1, which receives them and then answers
 * with one empty synchronous message; T_ipc is the train's time over its
 * length (a complete exchange per message, as the paper counts it). A least
 * squares fit over the sizes gives T_startup (us), T_trans (us/byte) and its
 * inverse (MB/s).
 *   courier run -n 2 modes [seconds-per-point] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <courier/courier.h>

static const size_t sizes[] = {0, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576};
#define NS (sizeof sizes / sizeof sizes[0])
enum { SYNC, SINGLE, NOWAIT };
static const char *names[] = {"synchronous", "single-buffer", "no-wait"};

static double train(int me, int mode, char *buf, size_t len, long k)
{
    cr_sync();
    double t0 = cr_time();
    if (me == 0) {
        for (long i = 0; i < k; i++) {
            if (mode == SYNC) cr_send_sync(1, 1, buf, len);
            if (mode == SINGLE) cr_send_single(1, 1, buf, len);
            if (mode == NOWAIT) cr_send_nowait(1, 1, buf, len);
        }
        cr_recv_mode(1, 2, NULL, 0, NULL);
        cr_modes_flush();
    } else if (me == 1) {
        for (long i = 0; i < k; i++) cr_recv_mode(0, 1, buf, len, NULL);
        cr_send_sync(0, 2, NULL, 0);
    }
    double t = cr_time() - t0;
    return t / (double)k * 1e6; /* us per message */
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 0.2;
    int me = cr_rank();
    if (cr_size() < 2) {
        fprintf(stderr, "modes: needs 2 ranks\n");
        return 1;
    }
    char *buf = malloc(sizes[NS - 1]);
    memset(buf, 1, sizes[NS - 1]);
    if (me == 0) printf("# GMD modes, 2 ranks: T_ipc per message (us)\n%10s", "bytes");
    for (int m = 0; m < 3 && me == 0; m++) printf(" %14s", names[m]);
    if (me == 0) printf("\n");
    double t[3][NS];
    for (size_t s = 0; s < NS; s++) {
        for (int m = 0; m < 3; m++) {
            double trial = train(me, m, buf, sizes[s], 20);
            long k = trial > 0 ? (long)(secs * 1e6 / trial) : 1000;
            if (k < 20) k = 20;
            if (k > 200000) k = 200000;
            /* rank 0's k is the one both use */
            long kk = k;
            if (me == 0) cr_send_sync(1, 3, &kk, sizeof kk);
            if (me == 1) cr_recv_mode(0, 3, &kk, sizeof kk, NULL);
            t[m][s] = train(me, m, buf, sizes[s], kk);
        }
        if (me == 0) {
            printf("%10zu", sizes[s]);
            for (int m = 0; m < 3; m++) printf(" %14.3f", t[m][s]);
            printf("\n");
        }
    }
    if (me == 0) {
        printf("# least-squares fit T_ipc = T_startup + T_trans * bytes\n");
        for (int m = 0; m < 3; m++) {
            double sx = 0, sy = 0, sxx = 0, sxy = 0;
            for (size_t s = 0; s < NS; s++) {
                double x = (double)sizes[s], y = t[m][s];
                sx += x, sy += y, sxx += x * x, sxy += x * y;
            }
            double b = (NS * sxy - sx * sy) / (NS * sxx - sx * sx), a = (sy - b * sx) / NS;
            printf("%-14s T_startup %8.3f us  T_trans %.6f us/byte (%8.1f MB/s)\n", names[m], a, b,
                   b > 0 ? 1.0 / b : 0.0);
        }
    }
    free(buf);
    return 0;
}
