/* The shared-memory collectives of ALLGRP (src/coll/coll_shm.c) interleaved with
 * the message-based ones, many times over, each result checked: barrier and
 * combine go through the collective area, reduce, bcast and prefix by messages,
 * so the area's generations must stay right across collectives that do not
 * synchronize everyone. Then rounds where one task arrives late (it sleeps
 * first) so that the others go to sleep in the wait and must be woken by the
 * late task's arrival. With the argument "hang", the last task waits for a
 * message nobody sends while the others enter mpc_sync: the watchdog must name
 * the task the collective waits for. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <courier/mpl.h>

#include "../check.h"

static void nap_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int n, me;
    mpc_environ(&n, &me);
    if (argc > 1 && !strcmp(argv[1], "hang")) {
        int src = DONTCARE, type = 5, nbytes;
        char b[4];
        if (me == n - 1) return mpc_brecv(b, sizeof b, &src, &type, &nbytes);
        return mpc_sync(ALLGRP);
    }
    long long sum_ranks = (long long)n * (n - 1) / 2;
    for (int it = 0; it < 3000; it++) {
        int x[2] = {me + it, 1}, y[2] = {-1, -1};
        CHECK(mpc_combine(x, y, sizeof x, i_vadd, ALLGRP) == 0, "combine");
        CHECK(y[0] == (int)(sum_ranks + (long long)n * it) && y[1] == n,
              "iteration %d: combine gave %d %d", it, y[0], y[1]);
        int root = it % n;
        y[0] = y[1] = -1;
        CHECK(mpc_reduce(x, y, sizeof x, root, i_vmax, ALLGRP) == 0, "reduce");
        if (me == root)
            CHECK(y[0] == n - 1 + it && y[1] == 1, "iteration %d: reduce gave %d", it, y[0]);
        CHECK(mpc_sync(ALLGRP) == 0, "sync");
        int b = me == root ? it * 3 : -1;
        CHECK(mpc_bcast(&b, sizeof b, root, ALLGRP) == 0, "bcast");
        CHECK(b == it * 3, "iteration %d: bcast gave %d", it, b);
        int p = 0;
        CHECK(mpc_prefix(&x[1], &p, sizeof p, i_vadd, ALLGRP) == 0, "prefix");
        CHECK(p == me + 1, "iteration %d: prefix gave %d", it, p);
    }
    for (int it = 0; it < 12; it++) {
        if (me == it % n) nap_ms(5); /* longer than the waiters' spin and yield */
        double d = me + 0.5, s = 0;
        CHECK(mpc_combine(&d, &s, sizeof d, d_vadd, ALLGRP) == 0, "late combine");
        CHECK(s == (double)sum_ranks + 0.5 * n, "late round %d: combine gave %g", it, s);
        if (me == (it + 1) % n) nap_ms(5);
        CHECK(mpc_sync(ALLGRP) == 0, "late sync");
    }
    if (me == 0) printf("coll_area: 3000 mixed rounds and 12 late rounds ok on %d tasks\n", n);
    return 0;
}
