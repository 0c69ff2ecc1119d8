/* Load: every node sends a small message to every other node, then a barrier and
 * a reduce-to-all; run with many ranks (256 on 2 cores). Rank 0 prints the wall
 * time of each phase and the spread of the nodes' finishing times (starvation
 * shows as a wide spread). */
#include <time.h>

#include "../check.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    long me = mynode(), n = numnodes();
    double t0 = now();
    gsync();
    double t1 = now();
    for (long k = 1; k < n; k++) {
        long v[2] = {me, k};
        csend(10, (char *)v, sizeof v, (me + k) % n, 0);
    }
    long seen = 0;
    for (long k = 1; k < n; k++) {
        long v[2];
        crecv(10, (char *)v, sizeof v);
        CHECK(v[0] == infonode() && (v[0] + v[1]) % n == me, "message %ld/%ld from %ld", v[0], v[1],
              infonode());
        seen |= 0;
    }
    double t2 = now();
    gsync();
    double t3 = now();
    double x[1] = {1.0}, w[1];
    gdsum(x, 1, w);
    CHECK(x[0] == (double)n, "sum %g", x[0]);
    double t4 = now();
    double hi[1] = {t4}, lo[1] = {t4};
    gdhigh(hi, 1, w);
    gdlow(lo, 1, w);
    if (me == 0)
        printf("load: %ld ranks: barrier %.3f s, all-to-all %.3f s, barrier %.3f s, "
               "allreduce %.3f s; finishing spread %.3f s\n",
               n, t1 - t0, t2 - t1, t3 - t2, t4 - t3, hi[0] - lo[0]);
    return (int)seen;
}
