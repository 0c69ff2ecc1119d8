/* Synthetic traffic and measurement: the patterns of `courier netsim` run on one machine.
 *
 * Sources are open loop (Poisson arrivals at an offered load, a fraction of the node's
 * injection bandwidth) or closed loop (load 0: each node keeps `window` messages in flight).
 * A message's latency is from its creation (so it includes queueing at the source) to the
 * end of the receiver's software. Everything is driven by the simulation's own RNG, so a run
 * is a function of (config, traffic, seed).
 */
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"

static const char *const pnames[CR_PAT_COUNT] = {
    "echo",      "uniform",    "transpose", "shift",   "bit-reversal", "hotspot",
    "neighbour", "all-to-all", "broadcast", "barrier", "exchange"};

const char *cr_pattern_name(cr_pattern p)
{
    return (unsigned)p < CR_PAT_COUNT ? pnames[p] : "?";
}

int cr_pattern_parse(const char *s, cr_pattern *out)
{
    for (int i = 0; i < CR_PAT_COUNT; i++)
        if (strcmp(s, pnames[i]) == 0) return *out = (cr_pattern)i, 0;
    if (strcmp(s, "bitrev") == 0) return *out = CR_PAT_BITREV, 0;
    if (strcmp(s, "neighbor") == 0) return *out = CR_PAT_NEIGHBOUR, 0;
    if (strcmp(s, "alltoall") == 0) return *out = CR_PAT_ALLTOALL, 0;
    return -1;
}

void cr_traffic_defaults(cr_traffic *t)
{
    memset(t, 0, sizeof(*t));
    t->pattern = CR_PAT_UNIFORM;
    t->bytes = 1024;
    t->count = 100;
    t->src = t->dst = -1;
    t->shift = 1;
    t->hot_frac = 0.25;
    t->window = 4;
}

typedef struct run {
    cr_net *net;
    const cr_traffic *t;
    int N;
    cr_time *lat;
    size_t nlat, cap;
    uint64_t bytes, bg_bytes, bg_msgs, created, delivered, expected;
    double bg_lat_sum;
    cr_time last;
    int *sent;     /* per node: messages generated */
    int *inflight; /* closed loop */
    uint8_t *hot_sender;
    int bcast_left, round;
    cr_time round_start;
    cr_time launched; /* barrier by network test: when the test broadcast left the root */
    void (*progress)(void *, double);
    void *pctx;
} run;

static void record(run *r, cr_time lat, uint64_t bytes, int bg)
{
    if (r->nlat == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 4096;
        cr_time *n = realloc(r->lat, r->cap * sizeof(cr_time));
        if (!n) abort(); /* cannot keep measuring */
        r->lat = n;
    }
    r->lat[r->nlat++] = lat;
    r->bytes += bytes;
    r->delivered++;
    r->last = cr_sim_now(r->net->sim);
    if (bg) {
        r->bg_msgs++;
        r->bg_bytes += bytes;
        r->bg_lat_sum += (double)lat;
    }
}

static int bitrev(int x, int bits)
{
    int y = 0;
    for (int i = 0; i < bits; i++) y |= ((x >> i) & 1) << (bits - 1 - i);
    return y;
}

static int log2i(int n)
{
    int b = 0;
    while ((1 << b) < n) b++;
    return b;
}

/* A random neighbour in the machine's own topology. */
static int neighbour(run *r, int s)
{
    cr_net *net = r->net;
    for (int tries = 0; tries < 64; tries++) {
        int d = (int)cr_sim_rand_below(net->sim, (uint64_t)r->N);
        if (d != s && net->m->hops(net, s, d) == 1) return d;
    }
    return s ^ 1;
}

/* Destination of the k-th message of node s (k counts from 0). */
static int pick_dst(run *r, int s, int k)
{
    const cr_traffic *t = r->t;
    int N = r->N;
    switch (t->pattern) {
    case CR_PAT_SHIFT:
        return (s + t->shift) % N;
    case CR_PAT_BITREV:
        return bitrev(s, log2i(N)) % N;
    case CR_PAT_NEIGHBOUR:
        return neighbour(r, s);
    case CR_PAT_TRANSPOSE: { /* pairwise exchange schedule of the 2-D FFT transpose */
        int P = 1 << log2i(N), d;
        do d = s ^ (1 + (k++ % (P - 1)));
        while (d >= N);
        return d;
    }
    case CR_PAT_ALLTOALL:
        return (s + 1 + k % (N - 1)) % N;
    case CR_PAT_HOTSPOT:
        if (r->hot_sender[s]) return t->hot;
        __attribute__((fallthrough)); /* background traffic is uniform over the other nodes */
    default: {
        int d;
        do d = (int)cr_sim_rand_below(r->net->sim, (uint64_t)N);
        while (d == s || (t->pattern == CR_PAT_HOTSPOT && d == t->hot));
        return d;
    }
    }
}

static void send_one(run *r, int s)
{
    int d = pick_dst(r, s, r->sent[s]++);
    cr_msg *m = cr_net_msg(r->net, s, d, r->t->bytes);
    if (r->t->pattern == CR_PAT_HOTSPOT && !r->hot_sender[s]) m->flags |= CR_MSG_BACKGROUND;
    r->created++;
    r->inflight[s]++;
    if (s == d) { /* bit-reversal fixed points stay local */
        m->t_done = cr_sim_now(r->net->sim);
        r->net->deliver(r->net, m, r->net->deliver_ctx);
        return;
    }
    cr_net_send(r->net, m);
}

static int open_loop(const run *r, int s)
{
    if (r->t->pattern == CR_PAT_HOTSPOT && r->hot_sender[s]) return 0;
    return r->t->load > 0;
}

static cr_time interarrival(run *r)
{
    double bytes = (double)r->t->bytes + 16.0;
    double mean_ps = bytes / (r->t->load * (double)cr_net_inject_bps(r->net)) * 1e12;
    double u = ((double)(cr_sim_rand(r->net->sim) >> 11) + 0.5) / 9007199254740992.0;
    return (cr_time)(-mean_ps * __builtin_log(u)) + 1;
}

static void arrival(cr_sim *sim, void *obj, uint64_t s)
{
    run *r = obj;
    send_one(r, (int)s);
    if (r->sent[s] < r->t->count) cr_sim_after(sim, interarrival(r), arrival, r, s);
}

static void closed_fill(run *r, int s)
{
    while (r->inflight[s] < r->t->window && r->sent[s] < r->t->count) send_one(r, s);
}

static void on_deliver(cr_net *net, cr_msg *m, void *ctx)
{
    run *r = ctx;
    record(r, m->t_done - m->t_create, m->bytes, (m->flags & CR_MSG_BACKGROUND) != 0);
    int s = m->src;
    r->inflight[s]--;
    cr_net_msg_free(net, m);
    if (!open_loop(r, s)) closed_fill(r, s);
}

/* ---- echo and exchange */
static void echo_deliver(cr_net *net, cr_msg *m, void *ctx)
{
    run *r = ctx;
    r->delivered++;
    r->last = m->t_done;
    if (r->delivered >= r->expected) {
        cr_net_msg_free(net, m);
        return;
    }
    cr_msg *b = cr_net_msg(net, m->dst, m->src, m->bytes); /* bounce it back */
    cr_net_msg_free(net, m);
    cr_net_send(net, b);
}

static void exch_deliver(cr_net *net, cr_msg *m, void *ctx)
{
    run *r = ctx;
    r->delivered++;
    r->bytes += m->bytes;
    r->last = m->t_done;
    cr_net_msg_free(net, m);
}

/* ---- broadcast and barrier rounds */
static void start_round(run *r);

static void round_done(run *r)
{
    cr_time now = cr_sim_now(r->net->sim);
    record(r, now - r->round_start, r->t->bytes, 0);
    if (++r->round < r->t->count) start_round(r);
}

static void tree_send(run *r, int rel, uint64_t bytes)
{
    int N = r->N, root = r->t->src < 0 ? 0 : r->t->src;
    int top = rel ? __builtin_ctz((unsigned)rel) : log2i(N);
    for (int j = top - 1; j >= 0; j--) {
        int child = rel + (1 << j);
        if (child >= N) continue;
        cr_msg *m = cr_net_msg(r->net, (rel + root) % N, (child + root) % N, bytes);
        m->tag = (uint64_t)child;
        cr_net_send(r->net, m);
    }
}

static void hw_arrive(cr_net *net, int node, cr_time t, void *ctx)
{
    run *r = ctx;
    (void)t;
    /* the receiver's software still has to see it */
    cr_time done = net->sw ? cr_net_cpu(net, node, net->sw->o_recv) : cr_sim_now(net->sim);
    if (done > r->last) r->last = done;
    if (--r->bcast_left == 0) {
        cr_time now = cr_sim_now(net->sim);
        record(r, r->last - r->round_start, r->t->bytes, 0);
        (void)now;
        if (++r->round < r->t->count) start_round(r); /* next round starts at once */
    }
}

static void release(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    run *r = obj;
    int root = r->t->src < 0 ? 0 : r->t->src;
    uint64_t bytes = r->t->pattern == CR_PAT_BARRIER ? 0 : r->t->bytes;
    r->bcast_left = r->N - 1;
    r->last = 0;
    if (cr_net_hw_broadcast(r->net, root, 0, r->N - 1, bytes, hw_arrive, r) > 0) return;
    tree_send(r, 0, bytes);
}

static void coll_deliver(cr_net *net, cr_msg *m, void *ctx)
{
    run *r = ctx;
    int barrier_arrive = r->t->pattern == CR_PAT_BARRIER && m->tag == UINT64_MAX;
    int rel = (int)m->tag;
    cr_net_msg_free(net, m);
    if (barrier_arrive) {
        if (--r->bcast_left == 0) {
            int root = r->t->src < 0 ? 0 : r->t->src;
            cr_time t = net->sw ? cr_net_cpu(net, root, net->sw->o_send) : cr_sim_now(net->sim);
            cr_sim_at(net->sim, t, release, r, 0);
        }
        return;
    }
    uint64_t bytes = r->t->pattern == CR_PAT_BARRIER ? 0 : r->t->bytes;
    tree_send(r, rel, bytes);
    if (--r->bcast_left == 0) round_done(r);
}

/* The barrier where the network broadcasts (the CS-2, seed 001 section 3.3: "A network test
 * operation allows semaphores to be polled across the network. Combining this with the network
 * hardware broadcast function allows creation of block synchronisation primitives"): the root
 * broadcasts a test of every node's semaphore, each node's software answers it, the switches
 * combine the answers into one that returns over the broadcast's path, and the root then
 * releases everyone with a second broadcast. Three transactions, each with its software at
 * both ends; nothing is fitted (2 PEs with the Direct DMA's costs: 27.0 us, Table 1: 28). */
static void answer_back(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)arg;
    run *r = obj;
    int root = r->t->src < 0 ? 0 : r->t->src;
    const cr_swmodel *sw = r->net->sw;
    cr_time t = sw ? cr_net_cpu(r->net, root, sw->o_recv + sw->o_send) : cr_sim_now(sim);
    cr_sim_at(sim, t, release, r, 0);
}

static void test_arrive(cr_net *net, int node, cr_time t, void *ctx)
{
    run *r = ctx;
    (void)t;
    cr_time now = cr_sim_now(net->sim);
    cr_time done = net->sw ? cr_net_cpu(net, node, net->sw->o_recv + net->sw->o_send) : now;
    if (done > r->last) r->last = done;
    if (--r->bcast_left == 0) /* the combined answer: back over the same switches */
        cr_sim_at(net->sim, r->last + (now - r->launched), answer_back, r, 0);
}

static void test_start(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)arg;
    run *r = obj;
    int root = r->t->src < 0 ? 0 : r->t->src;
    r->bcast_left = r->N - 1;
    r->last = 0;
    r->launched = cr_sim_now(sim);
    cr_net_hw_broadcast(r->net, root, 0, r->N - 1, 0, test_arrive, r);
}

static void start_round(run *r)
{
    r->round_start = cr_sim_now(r->net->sim);
    int root = r->t->src < 0 ? 0 : r->t->src;
    if (r->t->pattern == CR_PAT_BROADCAST ||
        (r->t->pattern == CR_PAT_BARRIER && cr_net_has_hw_broadcast(r->net))) {
        cr_time t = r->round_start;
        if (r->net->m->bcast && r->net->sw) t = cr_net_cpu(r->net, root, r->net->sw->o_send);
        cr_sim_at(r->net->sim, t, r->t->pattern == CR_PAT_BARRIER ? test_start : release, r, 0);
        return;
    }
    r->bcast_left = r->N - 1; /* barrier, no broadcast: everyone reports to the root */
    for (int s = 0; s < r->N; s++) {
        if (s == root) continue;
        cr_msg *m = cr_net_msg(r->net, s, root, 0);
        m->tag = UINT64_MAX;
        cr_net_send(r->net, m);
    }
}

static void prog_hook(void *ctx, cr_time now)
{
    (void)now;
    run *r = ctx;
    if (r->progress && r->expected)
        r->progress(r->pctx, (double)r->delivered / (double)r->expected);
}

static int cmp_time(const void *a, const void *b)
{
    cr_time x = *(const cr_time *)a, y = *(const cr_time *)b;
    return (x > y) - (x < y);
}

static void summarize(run *r, cr_net_result *res)
{
    res->msgs = r->nlat;
    res->bytes = r->bytes;
    res->elapsed_us = (double)r->last / 1e6;
    if (r->nlat) {
        qsort(r->lat, r->nlat, sizeof(cr_time), cmp_time);
        double sum = 0;
        for (size_t i = 0; i < r->nlat; i++) sum += (double)r->lat[i];
        res->lat_mean_us = sum / (double)r->nlat / 1e6;
        res->lat_p50_us = (double)r->lat[r->nlat / 2] / 1e6;
        res->lat_p95_us = (double)r->lat[(size_t)((double)(r->nlat - 1) * 0.95)] / 1e6;
        res->lat_p99_us = (double)r->lat[(size_t)((double)(r->nlat - 1) * 0.99)] / 1e6;
        res->lat_max_us = (double)r->lat[r->nlat - 1] / 1e6;
    }
    if (r->last > 0) {
        res->thr_MBps = (double)r->bytes / ((double)r->last / 1e12) / 1e6;
        res->node_MBps = res->thr_MBps / r->N;
        res->bg_MBps = (double)r->bg_bytes / ((double)r->last / 1e12) / 1e6;
    }
    res->bg_msgs = r->bg_msgs;
    if (r->bg_msgs) res->bg_lat_mean_us = r->bg_lat_sum / (double)r->bg_msgs / 1e6;
}

static int check_traffic(const cr_traffic *t, int N, char *err, size_t errlen)
{
    if (t->load < 0) return snprintf(err, errlen, "offered load must not be negative"), -1;
    if (t->src >= N || t->dst >= N || t->hot < 0 || t->hot >= N)
        return snprintf(err, errlen, "node %d is outside the machine (0..%d)",
                        t->src >= N ? t->src : (t->dst >= N ? t->dst : t->hot), N - 1),
               -1;
    if (t->count <= 0 || t->window <= 0)
        return snprintf(err, errlen, "count and window must be positive"), -1;
    return 0;
}

static void setup(run *r)
{
    const cr_traffic *t = r->t;
    int N = r->N;
    cr_sim *sim = r->net->sim;
    switch (t->pattern) {
    case CR_PAT_ECHO: {
        int a = t->src < 0 ? 0 : t->src, b = t->dst < 0 ? 1 : t->dst;
        r->expected = 2 * (uint64_t)t->count;
        cr_net_set_deliver(r->net, echo_deliver, r);
        cr_net_send(r->net, cr_net_msg(r->net, a, b, t->bytes));
        return;
    }
    case CR_PAT_EXCHANGE: {
        int a = t->src < 0 ? 0 : t->src, b = t->dst < 0 ? 1 : t->dst;
        r->expected = 2 * (uint64_t)t->count;
        cr_net_set_deliver(r->net, exch_deliver, r);
        for (int i = 0; i < t->count; i++) {
            cr_net_send(r->net, cr_net_msg(r->net, a, b, t->bytes));
            cr_net_send(r->net, cr_net_msg(r->net, b, a, t->bytes));
        }
        return;
    }
    case CR_PAT_BROADCAST:
    case CR_PAT_BARRIER:
        r->expected = (uint64_t)t->count;
        cr_net_set_deliver(r->net, coll_deliver, r);
        start_round(r);
        return;
    default:
        break;
    }
    int per = t->count;
    if (t->pattern == CR_PAT_TRANSPOSE || t->pattern == CR_PAT_ALLTOALL) {
        per = t->count * (N - 1); /* count = repetitions of the whole exchange */
        ((cr_traffic *)t)->count = per;
    }
    r->expected = (uint64_t)per * (uint64_t)N;
    cr_net_set_deliver(r->net, on_deliver, r);
    for (int s = 0; s < N; s++) {
        if (t->pattern == CR_PAT_HOTSPOT) {
            double f = t->hot_frac;
            r->hot_sender[s] = s != t->hot && (int)((s + 1) * f) > (int)(s * f);
        }
        if (t->pattern == CR_PAT_HOTSPOT && s == t->hot) continue;
        if (open_loop(r, s))
            cr_sim_after(sim, interarrival(r), arrival, r, (uint64_t)s);
        else
            closed_fill(r, s);
    }
    if (t->pattern == CR_PAT_HOTSPOT) r->expected -= (uint64_t)per;
}

int cr_net_run(const cr_net_config *cfg, const cr_traffic *t0, cr_net_result *res,
               void (*progress)(void *, double), void *pctx, char *err, size_t errlen)
{
    memset(res, 0, sizeof(*res));
    cr_traffic t = *t0;
    cr_net *net = cr_net_new(cfg, err, errlen);
    if (!net) return -1;
    run r = {0};
    r.net = net;
    r.t = &t;
    r.N = net->nodes;
    if (t.hot < 0) t.hot = 0;
    if (t.pattern == CR_PAT_ECHO || t.pattern == CR_PAT_EXCHANGE) {
        if (t.src < 0) t.src = 0;
        if (t.dst < 0) t.dst = 1;
        if (t.src == t.dst && t.src < r.N) {
            snprintf(err, errlen, "echo needs two different nodes");
            cr_net_free(net);
            return -1;
        }
    }
    if (check_traffic(&t, r.N, err, errlen) != 0) {
        cr_net_free(net);
        return -1;
    }
    r.sent = calloc((size_t)r.N, sizeof(int));
    r.inflight = calloc((size_t)r.N, sizeof(int));
    r.hot_sender = calloc((size_t)r.N, 1);
    r.progress = progress;
    r.pctx = pctx;
    if (!r.sent || !r.inflight || !r.hot_sender) abort();
    cr_sim_set_progress(net->sim, 1u << 18, prog_hook, &r);
    setup(&r);
    cr_sim_run(net->sim, t.max_events ? CR_TIME_NEVER : CR_TIME_NEVER);
    summarize(&r, res);
    if (t.pattern == CR_PAT_ECHO && r.delivered) {
        double one = (double)r.last / (double)r.delivered / 1e6;
        res->msgs = r.delivered;
        res->lat_mean_us = res->lat_p50_us = res->lat_p95_us = res->lat_p99_us = one;
        res->lat_max_us = one;
        res->thr_MBps = one > 0 ? (double)t.bytes / one : 0;
        res->node_MBps = res->thr_MBps;
    }
    if (t.pattern == CR_PAT_EXCHANGE) {
        res->msgs = r.delivered;
        res->thr_MBps = r.last ? (double)r.bytes / ((double)r.last / 1e12) / 1e6 : 0;
    }
    cr_net_get_stats(net, &res->st);
    res->deadlock = res->st.deadlocks > 0;
    res->undelivered = r.expected > r.delivered ? r.expected - r.delivered : 0;
    res->events = cr_sim_events(net->sim);
    free(r.lat);
    free(r.sent);
    free(r.inflight);
    free(r.hot_sender);
    cr_net_free(net);
    return 0;
}

cr_time cr_net_echo(const cr_net_config *cfg, int src, int dst, uint64_t bytes, int reps)
{
    cr_traffic t;
    cr_traffic_defaults(&t);
    t.pattern = CR_PAT_ECHO;
    t.src = src;
    t.dst = dst;
    t.bytes = bytes;
    t.count = reps;
    cr_net_result res;
    char err[160];
    if (cr_net_run(cfg, &t, &res, NULL, NULL, err, sizeof(err)) != 0) return -1;
    return (cr_time)(res.lat_mean_us * 1e6 + 0.5);
}

int cr_net_node_at_hops(const cr_net_config *cfg, int hops)
{
    char err[160];
    cr_net *net = cr_net_new(cfg, err, sizeof(err));
    if (!net) return -1;
    int found = -1;
    for (int n = 1; n < net->nodes && found < 0; n++)
        if (net->m->hops(net, 0, n) == hops) found = n;
    cr_net_free(net);
    return found;
}
