/* The behavioural claims of issue 2, checked with the simulator:
 *  - e-cube never deadlocks under saturating uniform traffic; unrestricted minimal routing can;
 *  - CS-2 one-top-switch routing is non-blocking for shift and FFT permutations (statically:
 *    no link shared; dynamically: no header ever waits), random routing is not;
 *  - Direct-Connect multi-hop latency is only marginally above one hop, store-and-forward
 *    grows linearly with hops;
 *  - SP2 hot spot: with tokens off, tree saturation slows unrelated traffic; tokens prevent it;
 *  - determinism: the same seed gives the same result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cr_net.h"

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            failures++;                                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static cr_net_config cfg(cr_machine_kind k, int nodes, const char *sw)
{
    cr_net_config c;
    memset(&c, 0, sizeof(c));
    c.kind = k;
    c.nodes = nodes;
    c.sw = sw;
    c.seed = 7;
    c.wrap = 1;
    return c;
}

static cr_net_result run(const cr_net_config *c, const cr_traffic *t)
{
    cr_net_result r;
    char err[200];
    if (cr_net_run(c, t, &r, NULL, NULL, err, sizeof(err)) != 0) {
        printf("run failed: %s\n", err);
        exit(1);
    }
    return r;
}

static void deadlock(void)
{
    cr_traffic t;
    cr_traffic_defaults(&t);
    t.pattern = CR_PAT_UNIFORM;
    t.bytes = 256;
    t.load = 0; /* saturate */
    t.window = 4;
    t.count = 400;
    cr_net_config c = cfg(CR_MACH_IPSC2, 32, "hw");
    c.route = CR_ROUTE_ECUBE;
    cr_net_result r = run(&c, &t);
    printf("e-cube: %llu msgs, %llu waits, deadlock %d, undelivered %llu\n",
           (unsigned long long)r.msgs, (unsigned long long)r.st.waits, r.deadlock,
           (unsigned long long)r.undelivered);
    CHECK(!r.deadlock && r.undelivered == 0, "e-cube deadlocked");
    CHECK(r.st.waits > 1000, "traffic was not saturating (%llu waits)",
          (unsigned long long)r.st.waits);
    int found = 0;
    for (uint64_t seed = 1; seed <= 5 && !found; seed++) {
        c.route = CR_ROUTE_ANYMIN;
        c.seed = seed;
        r = run(&c, &t);
        printf("any-order minimal, seed %llu: deadlock %d after %llu msgs\n",
               (unsigned long long)seed, r.deadlock, (unsigned long long)r.msgs);
        found = r.deadlock && r.undelivered > 0;
    }
    CHECK(found, "unrestricted minimal routing never deadlocked");
}

static int max_link_load(cr_net *net, int N, int (*perm)(int, int), int arg)
{
    static int use[1 << 20];
    memset(use, 0, sizeof(use));
    int mx = 0;
    for (int s = 0; s < N; s++) {
        int32_t lk[32];
        int n = cr_net_route_links(net, s, perm(s, arg) % N, lk, 32);
        for (int i = 0; i < n; i++)
            if (++use[lk[i]] > mx) mx = use[lk[i]];
    }
    return mx;
}
static int shiftp(int s, int k)
{
    return s + k;
}
static int fftp(int s, int k)
{
    return s ^ (1 << k);
}

static void nonblocking(void)
{
    char err[200];
    for (int route = 0; route < 2; route++) {
        cr_net_config c = cfg(CR_MACH_CS2, 256, "hw");
        c.route = route ? CR_ROUTE_RANDOM : CR_ROUTE_TOPSWITCH;
        c.networks = 1;
        cr_net *net = cr_net_new(&c, err, sizeof(err));
        int worst = 0;
        for (int k = 1; k < 256; k++) {
            int m = max_link_load(net, 256, shiftp, k);
            if (m > worst) worst = m;
        }
        for (int k = 0; k < 8; k++) {
            int m = max_link_load(net, 256, fftp, k);
            if (m > worst) worst = m;
        }
        cr_net_free(net);
        printf("%s: worst link load over 255 shifts + 8 FFT stages = %d\n",
               route ? "random" : "topswitch", worst);
        if (!route)
            CHECK(worst == 1, "topswitch routing shares a link (%d)", worst);
        else
            CHECK(worst > 1, "random routing found no conflict");
        /* and in the simulator: no header ever waits for a link */
        cr_traffic t;
        cr_traffic_defaults(&t);
        t.pattern = CR_PAT_SHIFT;
        t.shift = 37;
        t.bytes = 4096;
        t.window = 1;
        t.count = 20;
        cr_net_result r = run(&c, &t);
        printf("  shift 37 dynamic: %llu waits\n", (unsigned long long)r.st.waits);
        if (!route)
            CHECK(r.st.waits == 0, "topswitch shift waited %llu times",
                  (unsigned long long)r.st.waits);
        else
            CHECK(r.st.waits > 0, "random shift never waited");
    }
}

static void multihop(void)
{
    cr_net_config dc = cfg(CR_MACH_IPSC2, 32, NULL), sf = cfg(CR_MACH_IPSC1, 32, NULL);
    double d[6], s[6];
    int dst[6] = {0, 1, 3, 7, 15, 31};
    for (int h = 1; h <= 5; h++) {
        d[h] = (double)cr_net_echo(&dc, 0, dst[h], 0, 2);
        s[h] = (double)cr_net_echo(&sf, 0, dst[h], 0, 2);
        printf("hops %d: direct-connect %.1f us, store-and-forward %.1f us\n", h, d[h] / 1e6,
               s[h] / 1e6);
    }
    CHECK((d[5] - d[1]) / d[1] < 0.05, "direct-connect 5 hops is %.1f%% above 1 hop",
          (d[5] - d[1]) / d[1] * 100);
    double inc = s[2] - s[1];
    CHECK(inc > 0.3 * s[1], "store-and-forward hop increment too small");
    for (int h = 3; h <= 5; h++)
        CHECK(abs((int)((s[h] - s[1]) / (h - 1) - inc)) < inc / 100, "SF not linear at %d", h);
    /* also for a long message: circuit switching pays the wire once */
    double d1 = (double)cr_net_echo(&dc, 0, 1, 65536, 1),
           d5 = (double)cr_net_echo(&dc, 0, 31, 65536, 1);
    CHECK((d5 - d1) / d1 < 0.01, "64 KB: 5 hops %.2f%% above 1 hop", (d5 - d1) / d1 * 100);
}

static void tree_saturation(void)
{
    cr_traffic t;
    cr_traffic_defaults(&t);
    t.pattern = CR_PAT_HOTSPOT;
    t.bytes = 512;
    t.hot_frac = 0.25;
    t.hot = 0;
    t.load = 0.05; /* background */
    t.window = 8;
    t.count = 60;
    double lat[2];
    for (int tok = 0; tok < 2; tok++) {
        cr_net_config c = cfg(CR_MACH_SP2, 64, "mpl-thin");
        c.tokens = tok;
        cr_net_result r = run(&c, &t);
        lat[tok] = r.bg_lat_mean_us;
        printf("sp2 hot spot, tokens %s: background latency %.1f us (%llu msgs), hot-path "
               "waits %llu, undelivered %llu\n",
               tok ? "on " : "off", r.bg_lat_mean_us, (unsigned long long)r.bg_msgs,
               (unsigned long long)r.st.waits, (unsigned long long)r.undelivered);
        CHECK(r.undelivered == 0, "messages lost");
    }
    t.pattern = CR_PAT_UNIFORM; /* the same background alone */
    cr_net_config c = cfg(CR_MACH_SP2, 64, "mpl-thin");
    cr_net_result base = run(&c, &t);
    printf("background alone: %.1f us\n", base.lat_mean_us);
    CHECK(lat[0] > 2 * lat[1], "tokens off (%.1f us) not clearly worse than on (%.1f us)", lat[0],
          lat[1]);
    CHECK(lat[1] < 1.5 * base.lat_mean_us, "tokens on still slows background: %.1f vs %.1f", lat[1],
          base.lat_mean_us);
}

/* The CS-2 barrier (seed 001, section 3.3: the network test with the hardware broadcast):
 * three transactions (test broadcast, combined answer, release broadcast), each with the
 * node software at both ends, so with every Table 1 model the 2-PE barrier is about three of
 * its one-way latencies, whatever they are. */
static void cs2_barrier(void)
{
    static const char *sw[] = {"dma", "channel", "nx2"};
    for (int i = 0; i < 3; i++) {
        cr_net_config c = cfg(CR_MACH_CS2, 2, sw[i]);
        cr_traffic t;
        cr_traffic_defaults(&t);
        t.pattern = CR_PAT_BARRIER;
        t.bytes = 0;
        t.count = 1;
        double bar = run(&c, &t).lat_mean_us, one = (double)cr_net_echo(&c, 0, 1, 0, 2) / 1e6;
        printf("cs2 barrier, 2 PEs, %s: %.2f us = %.2f one-way latencies\n", sw[i], bar, bar / one);
        CHECK(bar > 2.9 * one && bar < 3.1 * one, "%s: barrier %.2f us, one way %.2f us", sw[i],
              bar, one);
    }
}

static void determinism(void)
{
    cr_traffic t;
    cr_traffic_defaults(&t);
    t.pattern = CR_PAT_UNIFORM;
    t.load = 0.5;
    t.count = 50;
    cr_net_config c = cfg(CR_MACH_CS2, 64, "dma");
    cr_net_result a = run(&c, &t), b = run(&c, &t);
    CHECK(a.lat_mean_us == b.lat_mean_us && a.events == b.events, "same seed, different run");
    c.seed = 8;
    cr_net_result d = run(&c, &t);
    CHECK(d.lat_mean_us != a.lat_mean_us, "seed has no effect");
}

int main(void)
{
    deadlock();
    nonblocking();
    multihop();
    tree_saturation();
    cs2_barrier();
    determinism();
    printf(failures ? "%d FAILURES\n" : "all claims hold\n", failures);
    return failures != 0;
}
