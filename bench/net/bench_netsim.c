/* Network-model benchmark (not a test): simulated events per second, the wall time of the
 * issue's all-to-all (256 CS-2 nodes, 1 KiB, 12 repetitions = 783,360 messages; goal < 5 s),
 * and the peak memory of a 4096-node CS-2 uniform-traffic run. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cr_net.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int bench(const char *name, const cr_net_config *c, const cr_traffic *t)
{
    cr_net_result r;
    char err[200];
    double t0 = now_s();
    if (cr_net_run(c, t, &r, NULL, NULL, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 1;
    }
    double wall = now_s() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%-34s %9llu msgs %11llu events %7.2f s wall %6.2f Mev/s  sim %.1f ms  "
           "mean lat %.1f us  peak RSS %.1f MB\n",
           name, (unsigned long long)r.msgs, (unsigned long long)r.events, wall,
           (double)r.events / wall / 1e6, r.elapsed_us / 1000, r.lat_mean_us,
           (double)ru.ru_maxrss / 1024);
    return r.undelivered != 0;
}

int main(int argc, char **argv)
{
    int only_big = argc > 1 && strcmp(argv[1], "--big") == 0;
    cr_net_config c;
    memset(&c, 0, sizeof(c));
    c.kind = CR_MACH_CS2;
    c.seed = 1;
    cr_traffic t;
    cr_traffic_defaults(&t);
    int rc = 0;
    if (!only_big) {
        c.nodes = 256;
        c.sw = "dma";
        t.pattern = CR_PAT_ALLTOALL;
        t.bytes = 1024;
        t.count = 12; /* repetitions of the whole exchange */
        t.window = 4;
        rc |= bench("cs2 all-to-all 256 x 1KiB x 12", &c, &t);
    }
    c.nodes = 4096;
    c.sw = "dma";
    t.pattern = CR_PAT_UNIFORM;
    t.bytes = 1024;
    t.load = 0.5;
    t.count = 50;
    rc |= bench("cs2 4096 uniform 1KiB load 0.5", &c, &t);
    return rc;
}
