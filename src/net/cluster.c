/* A modern cluster (courier run --sim cluster): its descriptor, its node software (a modern
 * MPI library, ASSUMED), its --sim keys (bw=, lat=), and its parameters of the fat-tree
 * family's model (ftree.c): the CS-2's topology with one network, its link bandwidth and
 * per-switch latency given by the user; the NIC sends a message as MTU-sized cut-through
 * packets back to back at the link rate (no wait for acknowledges), and the switches' latency
 * is added to the arrival as a pipeline delay. Nothing here is from a seed paper: it has no
 * rows in the validation table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"

static const cr_swmodel sw[] = {
    {.name = "mpi",
     .desc = "a modern MPI library (ASSUMED 0.5 us each end, no copy)",
     .o_send = CR_CLUSTER_OSEND_PS,
     .o_recv = CR_CLUSTER_ORECV_PS,
     .eager_max = -1},
};

static uint64_t link_bps(const cr_net_config *c)
{
    return c->link_bps ? c->link_bps : CR_CLUSTER_LINK_BPS;
}

static cr_time hop_ps(const cr_net_config *c)
{
    return c->hop_ps > 0 ? c->hop_ps : CR_CLUSTER_HOP_PS;
}

static int cluster_init(cr_net *net, char *err, size_t errlen)
{
    const cr_ftree_params p = {
        .max_nodes = CR_CLUSTER_MAX_NODES,
        .default_nodes = 64,
        .networks = 1,
        .lat_ps = hop_ps(&net->cfg),
        .frag = CR_CLUSTER_MTU,
        .rate = link_bps(&net->cfg),
    };
    return cr_ftree_init(net, &p, err, errlen);
}

/* --sim bw=GBITS (every link), lat=US (each switch on a route) */
static int cluster_key(cr_net_config *c, const char *k, const char *v, char *err, size_t errlen)
{
    if (strcmp(k, "bw") && strcmp(k, "lat")) return 1;
    char *end;
    double x = strtod(v, &end);
    if (*end || !*v || !(x > 0) || x > 1e6)
        return snprintf(err, errlen, "--sim: %s=%s must be a number > 0 (%s, at most 1e6)", k, v,
                        k[0] == 'b' ? "Gb/s" : "us"),
               -1;
    if (k[0] == 'b')
        c->link_bps = (uint64_t)llround(x * 1e9 / 8);
    else
        c->hop_ps = (int64_t)llround(x * 1e6);
    return 0;
}

static void cluster_describe(const cr_net_config *c, char *buf, size_t len)
{
    snprintf(buf, len, ", links %g Gb/s and %g us per switch", (double)link_bps(c) * 8 / 1e9,
             (double)hop_ps(c) / 1e6);
}

const cr_machine cr_machine_cluster = {
    .name = "cluster",
    .title = "a modern cluster: fat tree of given link bandwidth and latency (ASSUMED)",
    .sw = sw,
    .nsw = CR_ARRAY_LEN(sw),
    .sw_default = "mpi",
    .sim = true,
    .sim_sw = "mpi",
    .cpu = 1, /* a core like this machine's */
    .sim_keys = "bw, lat",
    .sim_keys_what = "sets the cluster's links",
    .sim_keys_help = "bw=GBITS (link Gb/s), lat=US (per switch)",
    .sim_key = cluster_key,
    .sim_describe = cluster_describe,
    .init = cluster_init,
    .fini = cr_ftree_fini,
    .wire = cr_ftree_dma_wire,
    .hops = cr_ftree_hops,
    .route_links = cr_ftree_route_links,
    .stats = cr_ftree_stats,
    .inject_bps = CR_CLUSTER_LINK_BPS,
    .fabric = cr_ftree_fabric,
    .link_name = cr_ftree_link_name,
};
