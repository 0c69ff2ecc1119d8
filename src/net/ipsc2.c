/* The Intel iPSC/2 (seed 000): its descriptor, its node software (NX/2), its rows of the
 * validation table (with the iPSC/1 comparison), and its Direct-Connect network, circuit
 * switched; the hypercube helpers ipsc1.c shares.
 *
 * Direct-Connect: a message is one worm over [node source, channel d0, channel d1, ...,
 * node sink]. The routing probe takes the lowest differing dimension first and then only
 * strictly higher ones (e-cube), so channels are always acquired in increasing dimension
 * order and no wait-for cycle can form. Each channel's arbiter grants waiting requests
 * round-robin over its input ports. The destination returns RDY on the status path only when
 * its receive FIFO is armed: after each message the node's interrupt handler must re-arm the
 * DMA (CR_IPSC2_REARM_PS), and a probe that arrives earlier is throttled (holds its path,
 * no data moves) until then. Data then streams at 2.8 MB/s and every channel is released as
 * the checksum/EOM word passes.
 *
 * Link numbering: node n owns links 10n+k for its outgoing channel in dimension k (k < 8,
 * k = 7 being the external I/O channel, unused by routing), 10n+8 (node source into its
 * router) and 10n+9 (router into node sink).
 */
#include <stdlib.h>

#include "net_internal.h"

typedef struct hcube {
    cr_fabric fab;
    cr_net *net;
    int dim;
    cr_time *rx_ready; /* when the node's receive DMA is armed again; NEVER while receiving */
    cr_worm **parked;  /* probe throttled at this node's sink (at most one: the sink is held) */
} hcube;

int cr_hcube_dim(cr_net *net, char *err, size_t errlen)
{
    const cr_net_config *c = &net->cfg;
    int dim = c->dim;
    if (dim <= 0 && c->nodes > 0) {
        for (dim = 0; (1 << dim) < c->nodes && dim < 31; dim++) {
        }
        if ((1 << dim) != c->nodes) {
            snprintf(err, errlen, "a hypercube has a power-of-two number of nodes, not %d",
                     c->nodes);
            return -1;
        }
    }
    if (dim <= 0 && c->nodes <= 0) dim = 4;
    if (dim < 1 || dim > CR_IPSC2_MAX_DIM) {
        snprintf(err, errlen, "dimension %d is outside 1..%d (the iPSC/2 maximum is %d)", dim,
                 CR_IPSC2_MAX_DIM, CR_IPSC2_MAX_DIM);
        return -1;
    }
    return dim;
}

int cr_ecube_path(int src, int dst, int *dims, int max)
{
    int n = 0;
    for (int x = src ^ dst, k = 0; x && n < max; x >>= 1, k++)
        if (x & 1) dims[n++] = k;
    return n;
}

int cr_hcube_hops(cr_net *net, int a, int b)
{
    (void)net;
    return __builtin_popcount((unsigned)(a ^ b));
}

static void rearm(cr_sim *sim, void *obj, uint64_t node)
{
    hcube *h = obj;
    if (cr_sim_now(sim) < h->rx_ready[node]) return; /* a later message re-armed it again */
    cr_worm *w = h->parked[node];
    if (!w) return;
    h->parked[node] = NULL;
    h->rx_ready[node] = CR_TIME_NEVER;
    cr_fabric_sink_go(&h->fab, w);
}

static int hc_sink_ready(void *ctx, cr_worm *w)
{
    hcube *h = ctx;
    int d = w->dst_node;
    if (cr_sim_now(h->net->sim) >= h->rx_ready[d]) {
        h->rx_ready[d] = CR_TIME_NEVER;
        return 1;
    }
    h->parked[d] = w; /* RDY withheld: the source keeps sending status nibbles */
    return 0;
}

static void hc_arrived(void *ctx, cr_worm *w)
{
    hcube *h = ctx;
    cr_net *net = h->net;
    int d = w->dst_node;
    cr_msg *m = w->owner;
    h->rx_ready[d] = cr_sim_now(net->sim) + CR_IPSC2_REARM_PS;
    cr_sim_at(net->sim, h->rx_ready[d], rearm, h, (uint64_t)d);
    cr_worm_free(&h->fab, w);
    cr_net_wire_done(net, m);
}

static void hc_wire(cr_net *net, cr_msg *m)
{
    hcube *h = net->mach;
    int dims[CR_IPSC2_MAX_DIM];
    int n = cr_ecube_path(m->wfrom, m->wto, dims, CR_IPSC2_MAX_DIM);
    if (net->cfg.route == CR_ROUTE_ANYMIN) /* minimal, but dimensions in any order */
        for (int i = n - 1; i > 0; i--) {
            int j = (int)cr_sim_rand_below(net->sim, (uint64_t)i + 1), t = dims[i];
            dims[i] = dims[j], dims[j] = t;
        }
    cr_worm *w = cr_worm_alloc(&h->fab);
    int node = m->wfrom;
    w->links[w->n++] = 10 * node + 8;
    for (int i = 0; i < n; i++) {
        w->links[w->n++] = 10 * node + dims[i];
        node ^= 1 << dims[i];
    }
    w->links[w->n++] = 10 * m->wto + 9;
    w->bytes = m->wbytes + CR_IPSC2_FRAME_BYTES;
    w->rate = CR_IPSC2_CHAN_BPS < CR_IPSC2_NODE_BPS ? CR_IPSC2_CHAN_BPS : CR_IPSC2_NODE_BPS;
    w->dst_node = m->wto;
    w->owner = m;
    cr_fabric_start(&h->fab, w);
}

static int hc_init(cr_net *net, char *err, size_t errlen)
{
    int dim = cr_hcube_dim(net, err, errlen);
    if (dim < 0) return -1;
    hcube *h = calloc(1, sizeof(*h));
    if (!h) return snprintf(err, errlen, "out of memory"), -1;
    net->mach = h;
    net->nodes = 1 << dim;
    h->net = net;
    h->dim = dim;
    h->rx_ready = calloc((size_t)net->nodes, sizeof(cr_time));
    h->parked = calloc((size_t)net->nodes, sizeof(cr_worm *));
    if (!h->rx_ready || !h->parked || cr_fabric_init(&h->fab, net->sim, 10u * net->nodes))
        return snprintf(err, errlen, "out of memory"), -1;
    h->fab.hop_ps = CR_IPSC2_PROBE_PS;
    h->fab.status_ps = CR_IPSC2_STATUS_PS;
    h->fab.pipe_ps = CR_IPSC2_PIPE_PS;
    h->fab.circuit = 1;
    h->fab.rr = 1;
    h->fab.detect_deadlock = 1;
    h->fab.sink_ready = hc_sink_ready;
    h->fab.arrived = hc_arrived;
    h->fab.ctx = h;
    return 0;
}

static void hc_fini(cr_net *net)
{
    hcube *h = net->mach;
    cr_fabric_fini(&h->fab);
    free(h->rx_ready);
    free(h->parked);
    free(h);
}

static void hc_stats(cr_net *net, cr_net_stats *st)
{
    hcube *h = net->mach;
    st->wires = h->fab.worms;
    st->waits = h->fab.waits;
    st->deadlocks = h->fab.deadlocks;
    st->max_link_users = h->fab.max_wait + 1;
}

static cr_fabric *hc_fabric(cr_net *net)
{
    return &((hcube *)net->mach)->fab;
}

/* Link 10 * node + d: the channel of dimension d (0-7) out of node, its injection (8) or
 * ejection (9). */
static void hc_link_name(cr_net *net, int32_t link, char *buf, size_t len)
{
    (void)net;
    int node = link / 10, d = link % 10;
    if (d < 8)
        snprintf(buf, len, "node %d -> node %d (dimension %d)", node, node ^ (1 << d), d);
    else
        snprintf(buf, len, "node %d %s", node, d == 8 ? "into its router" : "out of its router");
}

static const cr_swmodel nx2[] = {
    {.name = "nx2",
     .desc = "NX/2 on the iPSC/2 (seed 000 s.3)",
     .o_send = CR_NX2_OSEND_PS,
     .o_recv = CR_NX2_ORECV_PS,
     .copy_ps = CR_NX2_COPY_PS,
     .eager_max = CR_NX2_SHORT_MAX,
     .ctl_ps = CR_NX2_CTL_PS,
     .ctl_bytes = CR_NX2_CTL_BYTES},
};

static void ipsc2_validate(cr_valid_ctx *v)
{
    cr_net_config c = cr_valid_config(CR_MACH_IPSC2, 32, NULL);
    double l1 = cr_valid_echo_us(&c, 0, 1, 0, 4), l5 = cr_valid_echo_us(&c, 0, 31, 0, 4);
    cr_valid_add(v, "iPSC/2 NX/2 0-byte latency, 1 hop", "us", 350, l1, CR_CMP_NEAR);
    cr_valid_add(v, "iPSC/2 NX/2 0-byte latency, 5 hops", "us", 350, l5, CR_CMP_NEAR);
    /* "the latency due to hardware is on the order of 5% of that due to software" (seed
     * 000, the echo plots): the 5-hop 0-byte latency's hardware part (the same echo with no
     * node software) against the rest, NX/2's send and receive */
    cr_net_config h = cr_valid_config(CR_MACH_IPSC2, 32, "hw");
    double hw5 = cr_valid_echo_us(&h, 0, 31, 0, 4);
    cr_valid_add(v, "iPSC/2 hardware share of the 5-hop 0-byte latency (~5% of sw)", "% of sw", 5,
                 hw5 / (l5 - hw5) * 100, CR_CMP_NEAR);
    cr_valid_add(v, "iPSC/2 bandwidth 1 MB message, 1 hop (\"over 2.7\")", "MB/s", 2.7,
                 cr_valid_bw_MBps(&c, 0, 1, 1000000), CR_CMP_ATLEAST);
    cr_valid_add(v, "iPSC/2 bandwidth 1 MB message, 5 hops (\"over 2.7\")", "MB/s", 2.7,
                 cr_valid_bw_MBps(&c, 0, 31, 1000000), CR_CMP_ATLEAST);
    cr_net_config f = cr_valid_config(CR_MACH_IPSC1, 32, NULL);
    double s1 = cr_valid_echo_us(&f, 0, 1, 0, 2), s2 = cr_valid_echo_us(&f, 0, 3, 0, 2),
           s5 = cr_valid_echo_us(&f, 0, 31, 0, 2);
    cr_valid_add(v, "iPSC/1 store-and-forward: per-hop increment 1..5 vs 1..2", "us/hop", s2 - s1,
                 (s5 - s1) / 4, CR_CMP_NEAR);
    cr_valid_add(v, "iPSC/2 latency under 1/5 of iPSC/1 (1 hop)", "ratio", 0.2, l1 / s1,
                 CR_CMP_ATMOST);
}

/* --sim: the smallest cube that holds n ranks */
static void ipsc2_shape(cr_net_config *c, int n)
{
    for (c->dim = 1; (1 << c->dim) < n; c->dim++) {
    }
}

const cr_machine cr_machine_ipsc2 = {
    .name = "ipsc2",
    .title = "Intel iPSC/2, Direct-Connect hypercube (seed 000)",
    .sw = nx2,
    .nsw = CR_ARRAY_LEN(nx2),
    .sw_default = "nx2",
    .sim = true,
    .sim_sw = "nx2",
    .cpu = 2000, /* 16 MHz 80386 + 80387 */
    .sim_shape = ipsc2_shape,
    .validate = ipsc2_validate,
    .init = hc_init,
    .fini = hc_fini,
    .wire = hc_wire,
    .hops = cr_hcube_hops,
    .stats = hc_stats,
    .inject_bps = CR_IPSC2_CHAN_BPS,
    .fabric = hc_fabric,
    .link_name = hc_link_name,
};
