/* GMD's machine (seed 004, Giloi and Schroeder-Preikschat): its descriptor, the TICNET model,
 * PEACE's node software with the communication processor, and its rows of the validation
 * table. courier run --sim gmd.
 *
 * TICNET is two levels: clusters of CR_GMD_CLUSTER nodes on a parallel bus (640 MB/s), and a
 * distributed crossbar of byte-serial links (100 MB/s) between the clusters, switched at the
 * cluster buses ("Totally Interconnected": one link for every ordered pair of clusters). A
 * message inside a cluster takes its bus; between clusters it takes the source cluster's bus,
 * the link, then the destination cluster's bus, cut through: the link sets the pace and each
 * bus is held only for its own share (the message at 640 MB/s). Buses and links are FIFO
 * servers reserved in the order messages enter (as the iPSC/1's channels, ipsc1.c): one event
 * per message, the arrival.
 *
 * Node software: T_ipc = T_startup + T_trans (section 4). T_startup is the synchronous
 * protocol's (sections 7 and 10): the HVDT request to the receiver's CP (peer_send), the
 * receiver CP's peer_movefrom back once the receive matched, and the high-volume data
 * transfer, whose set-up (the DMAs) and end (one interrupt per HVDT at each node CPU) cost the
 * ends as a message does. courier's synchronous send is exactly those three messages under
 * --sim (the request, the answer that asks for the data, the data), and as with the hardware
 * CP the answer costs its sender but not the node it returns to (the library takes it; the
 * CP, not the node CPU, accepts a peer_movefrom: the software CP needs an interrupt for it,
 * section 7). So the protocol is five ends' costs, each a fifth of T_startup, and each made of
 * PEACE's five parts (section 4: supervisor space switches, dispatching, team isolation,
 * interrupts, the routines proper). The models differ by the parts they keep: `peace` all five
 * (20 us with the CP), `peace-single` one process per node (only the routines: "nearly two
 * thirds of the startup time would disappear"), `peace-soft` the CP in software (two interrupts
 * at each CP instead of one, section 7 against section 10), `typical` a message-based OS of
 * the millisecond class the paper contrasts with (ASSUMED 1 ms).
 *
 * Invariants: a resource's free time never moves back; every message wired gets exactly one
 * arrival event, at or after the time it was wired. */
#include <stdlib.h>

#include "net_internal.h"

/* One end's share of a message's startup made of the given parts (per mille of T_startup):
 * the synchronous protocol is five ends' costs (above). */
#define GMD_PARTS_ALL                                                                              \
    (CR_GMD_PART_SUPERVISOR + CR_GMD_PART_DISPATCH + CR_GMD_PART_ISOLATION +                       \
     CR_GMD_PART_INTERRUPT + CR_GMD_PART_ROUTINES)
#define GMD_END_PS(parts) ((cr_time)CR_GMD_STARTUP_PS / 5 * (parts) / 1000)

static const cr_swmodel sw[] = {
    {.name = "peace",
     .desc = "PEACE with the communication processor: startup 20 us (all five parts)",
     .o_send = GMD_END_PS(GMD_PARTS_ALL),
     .o_recv = GMD_END_PS(GMD_PARTS_ALL),
     .eager_max = -1},
    {.name = "peace-single",
     .desc = "PEACE, one process per node: the communication routines only (40 %)",
     .o_send = GMD_END_PS(CR_GMD_PART_ROUTINES),
     .o_recv = GMD_END_PS(CR_GMD_PART_ROUTINES),
     .eager_max = -1},
    {.name = "peace-soft",
     .desc = "PEACE, the CP in software: two interrupts at each end instead of one",
     .o_send = GMD_END_PS(GMD_PARTS_ALL + CR_GMD_PART_INTERRUPT),
     .o_recv = GMD_END_PS(GMD_PARTS_ALL + CR_GMD_PART_INTERRUPT),
     .eager_max = -1},
    {.name = "typical",
     .desc = "a message-based OS of 1990: startup of the order of 1 ms (ASSUMED)",
     .o_send = CR_GMD_TYPICAL_PS / 5,
     .o_recv = CR_GMD_TYPICAL_PS / 5,
     .eager_max = -1},
};

typedef struct gmd {
    int clusters;
    cr_time *bus_free;  /* per cluster */
    cr_time *link_free; /* per ordered pair of clusters */
    uint64_t transfers, waits;
} gmd;

static cr_time later(cr_time a, cr_time b)
{
    return a > b ? a : b;
}

static void arrived(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    cr_msg *m = obj;
    cr_net_wire_done(m->net, m);
}

static void gmd_wire(cr_net *net, cr_msg *m)
{
    gmd *g = net->mach;
    cr_time now = cr_sim_now(net->sim), at;
    int cs = m->wfrom / CR_GMD_CLUSTER, cd = m->wto / CR_GMD_CLUSTER;
    cr_time on_bus = cr_xfer_time(m->wbytes, CR_GMD_BUS_BPS);
    cr_time t0 = later(now, g->bus_free[cs]);
    g->waits += t0 > now;
    g->transfers++;
    if (cs == cd) {
        at = g->bus_free[cs] = t0 + CR_GMD_BUS_ARB_PS + on_bus;
    } else {
        cr_time *link = &g->link_free[(size_t)cs * (size_t)g->clusters + (size_t)cd];
        g->bus_free[cs] = t0 + CR_GMD_BUS_ARB_PS + on_bus;
        cr_time t1 = later(t0 + CR_GMD_BUS_ARB_PS + CR_GMD_XBAR_PS, *link);
        g->waits += t1 > t0 + CR_GMD_BUS_ARB_PS + CR_GMD_XBAR_PS;
        cr_time end = *link = t1 + cr_xfer_time(m->wbytes, CR_GMD_LINK_BPS);
        /* the destination bus carries the message's last share as the link delivers it */
        cr_time d0 = later(g->bus_free[cd], end - on_bus);
        at = g->bus_free[cd] = later(end, d0 + on_bus) + CR_GMD_BUS_ARB_PS;
    }
    cr_sim_at(net->sim, at, arrived, m, 0);
}

static int gmd_hops(cr_net *net, int a, int b)
{
    (void)net;
    if (a == b) return 0;
    return a / CR_GMD_CLUSTER == b / CR_GMD_CLUSTER ? 1 : 3; /* bus; bus, link, bus */
}

static int gmd_init(cr_net *net, char *err, size_t errlen)
{
    int nodes = net->cfg.nodes > 0 ? net->cfg.nodes : 4 * CR_GMD_CLUSTER;
    if (nodes < 2 || nodes > CR_GMD_MAX_NODES)
        return snprintf(err, errlen, "gmd has 2..%d nodes, not %d", CR_GMD_MAX_NODES, nodes), -1;
    gmd *g = calloc(1, sizeof(*g));
    if (!g) return snprintf(err, errlen, "out of memory"), -1;
    net->mach = g;
    net->nodes = nodes;
    g->clusters = (nodes + CR_GMD_CLUSTER - 1) / CR_GMD_CLUSTER;
    g->bus_free = calloc((size_t)g->clusters, sizeof(cr_time));
    g->link_free = calloc((size_t)g->clusters * (size_t)g->clusters, sizeof(cr_time));
    if (!g->bus_free || !g->link_free) return snprintf(err, errlen, "out of memory"), -1;
    return 0;
}

static void gmd_fini(cr_net *net)
{
    gmd *g = net->mach;
    free(g->bus_free);
    free(g->link_free);
    free(g);
}

static void gmd_stats(cr_net *net, cr_net_stats *st)
{
    gmd *g = net->mach;
    st->wires = g->transfers;
    st->waits = g->waits;
}

static void gmd_describe(const cr_net_config *c, char *buf, size_t len)
{
    int n = c->nodes > 0 ? c->nodes : 2;
    snprintf(buf, len, " in %d cluster%s of %d on TICNET",
             (n + CR_GMD_CLUSTER - 1) / CR_GMD_CLUSTER, n > CR_GMD_CLUSTER ? "s" : "",
             CR_GMD_CLUSTER);
}

/* The synchronous protocol's startup under model s: its request and the peer_movefrom (IPC
 * messages of 16 bytes, "(sender_id, receiver_id, message_type) ... 16 bytes"; the CP takes
 * the latter: no receive cost) and an empty data transfer. */
static double sync_startup_us(const char *s)
{
    cr_net_config c = cr_valid_config(CR_MACH_GMD, 2 * CR_GMD_CLUSTER, s);
    const cr_swmodel *m = cr_swmodel_find(CR_MACH_GMD, s);
    return 2 * cr_valid_echo_us(&c, 0, 1, 16, 4) + cr_valid_echo_us(&c, 0, 1, 0, 4) -
           (double)m->o_recv / 1e6;
}

static void gmd_validate(cr_valid_ctx *v)
{
    cr_net_config c = cr_valid_config(CR_MACH_GMD, 2 * CR_GMD_CLUSTER, "peace");
    cr_valid_add(v, "GMD IPC message of the CP, 16 bytes (\"within 10 us\")", "us", 10,
                 cr_valid_echo_us(&c, 0, 1, 16, 4), CR_CMP_ATMOST);
    double peace = sync_startup_us("peace"), single = sync_startup_us("peace-single");
    cr_valid_add(v, "GMD startup of a synchronous send with the CP (~20 us)", "us", 20, peace,
                 CR_CMP_NEAR);
    cr_valid_add(v, "GMD one process per node: startup that disappears (60 %)", "%", 60,
                 (1 - single / peace) * 100, CR_CMP_NEAR);
    cr_valid_add(v, "GMD TICNET cluster bus: 1 MiB inside a cluster", "MB/s", 640,
                 cr_valid_bw_MBps(&c, 0, 1, 1 << 20), CR_CMP_NEAR);
    cr_valid_add(v, "GMD TICNET crossbar link: 1 MiB between clusters", "MB/s", 100,
                 cr_valid_bw_MBps(&c, 0, CR_GMD_CLUSTER, 1 << 20), CR_CMP_NEAR);
}

const cr_machine cr_machine_gmd = {
    .name = "gmd",
    .title = "GMD: TICNET clusters and crossbar, PEACE with the communication processor (seed "
             "004)",
    .sw = sw,
    .nsw = CR_ARRAY_LEN(sw),
    .sw_default = "peace",
    .sim = true,
    .sim_sw = "peace",
    .cpu = 100, /* ASSUMED: a node of "approximately 50 MIPS" */
    .sim_describe = gmd_describe,
    .validate = gmd_validate,
    .init = gmd_init,
    .fini = gmd_fini,
    .wire = gmd_wire,
    .hops = gmd_hops,
    .stats = gmd_stats,
    .inject_bps = CR_GMD_BUS_BPS,
};
