/* Kernel unit tests: time order, deterministic tie-breaking, RNG determinism, transfer-time
 * rounding, and the link engine's FIFO/round-robin arbitration seen through a real machine. */
#include <stdio.h>
#include <string.h>

#include "cr_net.h"

static int failures;
#define CHECK(c, msg)                                                                              \
    do {                                                                                           \
        if (!(c)) failures++, printf("FAIL line %d: %s\n", __LINE__, msg);                         \
    } while (0)

static int order[1200], norder;
static void ev(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)obj;
    order[norder++] = (int)arg;
}
static void chain(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)obj;
    order[norder++] = (int)arg;
    if (arg < 5) cr_sim_after(sim, 0, chain, NULL, arg + 1); /* same time, runs after */
}

/* Schedules one event at the same time (the kernel's FIFO of the current time), which
 * must still run after the events of that time scheduled earlier (in the heap). */
static void spawn(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)obj;
    order[norder++] = (int)arg;
    cr_sim_at(sim, cr_sim_now(sim), ev, NULL, arg + 100);
}
static void fan(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)obj;
    order[norder++] = (int)arg;
    for (int i = 1; i <= 600; i++) cr_sim_after(sim, 0, ev, NULL, arg + (uint64_t)i);
}
static void halt(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)obj;
    order[norder++] = (int)arg;
    cr_sim_after(sim, 0, ev, NULL, arg + 1);
    cr_sim_stop(sim);
}

int main(void)
{
    cr_sim *s = cr_sim_new(42);
    cr_sim_at(s, 300, ev, NULL, 3);
    cr_sim_at(s, 100, ev, NULL, 1);
    cr_sim_at(s, 200, ev, NULL, 2);
    cr_sim_at(s, 200, ev, NULL, 22); /* same time: scheduling order */
    cr_sim_at(s, 100, ev, NULL, 11);
    cr_sim_run(s, CR_TIME_NEVER);
    int want[] = {1, 11, 2, 22, 3};
    CHECK(norder == 5 && memcmp(order, want, sizeof(want)) == 0, "event order");
    CHECK(cr_sim_now(s) == 300, "clock at last event");
    norder = 0;
    cr_sim_after(s, 10, chain, NULL, 0);
    cr_sim_at(s, 310, ev, NULL, 99);
    cr_sim_run(s, CR_TIME_NEVER);
    CHECK(norder == 7 && order[0] == 0 && order[1] == 99 && order[6] == 5, "ties after");
    /* run(until) leaves later events queued */
    cr_sim_at(s, 1000, ev, NULL, 7);
    cr_sim_run(s, 500);
    CHECK(cr_sim_pending(s) == 1, "until stops before later events");
    cr_sim_free(s);

    /* Events scheduled for the current time (no delay) keep the order of scheduling among
     * everything at that time: after the ones scheduled earlier, in order among themselves,
     * also past the FIFO's first capacity, and a stop leaves them for the next run. */
    s = cr_sim_new(1);
    norder = 0;
    cr_sim_at(s, 400, spawn, NULL, 1);
    cr_sim_at(s, 400, ev, NULL, 2);
    cr_sim_at(s, 400, spawn, NULL, 3);
    cr_sim_at(s, 401, ev, NULL, 4);
    cr_sim_run(s, 400);
    int want2[] = {1, 2, 3, 101, 103};
    CHECK(norder == 5 && memcmp(order, want2, sizeof(want2)) == 0, "same time after the heap's");
    CHECK(cr_sim_pending(s) == 1 && cr_sim_next(s) == 401, "the next time's event waits");
    norder = 0;
    cr_sim_at(s, 500, fan, NULL, 1000);
    cr_sim_at(s, 500, ev, NULL, 5);
    cr_sim_run(s, CR_TIME_NEVER);
    int ok = norder == 603 && order[0] == 4 && order[1] == 1000 && order[2] == 5;
    for (int i = 3; ok && i < norder; i++) ok = order[i] == 1000 + i - 2;
    CHECK(ok && cr_sim_now(s) == 500, "600 same-time events in order");
    norder = 0;
    cr_sim_at(s, 600, halt, NULL, 10);
    cr_sim_at(s, 600, ev, NULL, 20);
    cr_sim_run(s, CR_TIME_NEVER);
    CHECK(norder == 1 && cr_sim_pending(s) == 2 && cr_sim_next(s) == 600, "stopped: both left");
    cr_sim_run(s, CR_TIME_NEVER);
    CHECK(norder == 3 && order[1] == 20 && order[2] == 11, "the heap's first after a stop");
    cr_sim_free(s);

    cr_sim *a = cr_sim_new(5), *b = cr_sim_new(5), *c = cr_sim_new(6);
    int same = 1, diff = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = cr_sim_rand(a), y = cr_sim_rand(b), z = cr_sim_rand(c);
        same &= x == y;
        diff |= x != z;
        CHECK(cr_sim_rand_below(a, 10) < 10, "rand_below range");
        cr_sim_rand_below(b, 10);
    }
    CHECK(same && diff, "rng determinism");
    cr_sim_free(a);
    cr_sim_free(b);
    cr_sim_free(c);

    CHECK(cr_xfer_time(28, 2800000) == 10 * CR_US, "2.8 MB/s: 28 bytes = 10 us");
    CHECK(cr_xfer_time(1, 3) == 333333333334LL, "rounds up");
    CHECK(cr_xfer_time(0, 50000000) == 0, "zero bytes");

    /* Two senders into one sink on the hypercube: the sink (and each channel) serve one
     * message at a time, so two simultaneous 28000-byte messages take one 10 ms slot each. */
    cr_net_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.kind = CR_MACH_IPSC2;
    cfg.dim = 3;
    cfg.sw = "hw";
    cr_traffic t;
    cr_traffic_defaults(&t);
    t.pattern = CR_PAT_HOTSPOT;
    t.hot = 0;
    t.hot_frac = 1.0;
    t.bytes = 28000;
    t.count = 1;
    t.window = 1;
    cr_net_result r;
    char err[200];
    CHECK(cr_net_run(&cfg, &t, &r, NULL, NULL, err, sizeof(err)) == 0, err);
    CHECK(r.msgs == 7, "seven senders delivered");
    CHECK(r.lat_max_us > 7 * 10000 && r.lat_max_us < 7 * 10000 * 1.5, "sink serialises");
    CHECK(r.st.waits >= 6, "headers waited for the sink");

    /* bad configurations are refused with a reason */
    cfg.dim = 8;
    CHECK(cr_net_new(&cfg, err, sizeof(err)) == NULL && strstr(err, "dimension"), "dim 8");
    cfg.kind = CR_MACH_CS2;
    cfg.dim = 0;
    cfg.nodes = 5000;
    CHECK(cr_net_new(&cfg, err, sizeof(err)) == NULL, "cs2 5000 nodes");
    cfg.kind = CR_MACH_IWARP;
    cfg.nodes = 0;
    cfg.mesh_x = 33;
    cfg.mesh_y = 2;
    CHECK(cr_net_new(&cfg, err, sizeof(err)) == NULL, "iwarp 33x2");
    printf(failures ? "%d FAILURES\n" : "kernel ok\n", failures);
    return failures != 0;
}
