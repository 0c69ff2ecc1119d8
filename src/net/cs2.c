/* The Meiko CS-2 (seed 001): its descriptor, its node software models (Table 1), its rows of
 * the validation table, and its parameters of the fat-tree family's model (ftree.c): each
 * Elan's DMA engine sends one message at a time as fragments, two independent networks, a
 * hardware broadcast to a range of nodes. */
#include "net_internal.h"

/* Each is the pair of endpoint costs CALIBRATED so that the one-way 0-byte latency "between
 * two PEs over a single switch" equals Table 1's entry. */
static const cr_swmodel sw[] = {
    {.name = "dma",
     .desc = "CS-2 direct DMA, Table 1: 9 us, 44 MB/s",
     .o_send = CR_CS2_DMA_OSEND_PS,
     .o_recv = CR_CS2_DMA_ORECV_PS,
     .eager_max = -1,
     .hw_answer = true}, /* the Elan acknowledges a DMA and serves a read by itself */
    {.name = "channel",
     .desc = "CS-2 channel comms, Table 1: 24 us",
     .o_send = CR_CS2_CHAN_OSEND_PS,
     .o_recv = CR_CS2_CHAN_ORECV_PS,
     .eager_max = -1},
    {.name = "nx2",
     .desc = "NX/2 on the CS-2, Table 1: 78 us",
     .o_send = CR_CS2_LIB_OSEND_PS,
     .o_recv = CR_CS2_LIB_ORECV_PS,
     .eager_max = -1},
    {.name = "pvm",
     .desc = "PVM send/receive on the CS-2, Table 1: 78 us",
     .o_send = CR_CS2_LIB_OSEND_PS,
     .o_recv = CR_CS2_LIB_ORECV_PS,
     .eager_max = -1},
    {.name = "parmacs",
     .desc = "PARMACS on the CS-2, Table 1: 78 us",
     .o_send = CR_CS2_LIB_OSEND_PS,
     .o_recv = CR_CS2_LIB_ORECV_PS,
     .eager_max = -1},
};

static int cs2_init(cr_net *net, char *err, size_t errlen)
{
    const cr_ftree_params p = {
        .max_nodes = CR_CS2_MAX_NODES,
        .default_nodes = 64,
        .networks = net->cfg.networks == 1 ? 1 : CR_CS2_NETWORKS,
        .switch_ps = CR_CS2_SWITCH_PS,
        .frag = CR_CS2_FRAG,
        .rate = CR_CS2_DMA_BPS < CR_CS2_LINK_BPS ? CR_CS2_DMA_BPS : CR_CS2_LINK_BPS,
        .ack_ps = CR_CS2_ACK_PS,
    };
    return cr_ftree_init(net, &p, err, errlen);
}

static void cs2_validate(cr_valid_ctx *v)
{
    static const struct {
        const char *sw, *what;
        double us;
    } t1[] = {{"dma", "CS-2 Direct DMA latency (Table 1)", 9},
              {"channel", "CS-2 Channel comms latency (Table 1)", 24},
              {"nx2", "CS-2 NX/2 latency (Table 1)", 78},
              {"pvm", "CS-2 PVM latency (Table 1)", 78},
              {"parmacs", "CS-2 PARMACS latency (Table 1)", 78}};
    for (size_t i = 0; i < sizeof(t1) / sizeof(t1[0]); i++) {
        cr_net_config c = cr_valid_config(CR_MACH_CS2, 4, t1[i].sw);
        cr_valid_add(v, t1[i].what, "us", t1[i].us, cr_valid_echo_us(&c, 0, 1, 0, 4), CR_CMP_NEAR);
    }
    cr_net_config c = cr_valid_config(CR_MACH_CS2, 4, "dma");
    cr_valid_add(v, "CS-2 Direct DMA sustained bandwidth (Table 1)", "MB/s", 44,
                 cr_valid_bw_MBps(&c, 0, 1, 1 << 20), CR_CMP_NEAR);
    c = cr_valid_config(CR_MACH_CS2, 4, "nx2");
    cr_valid_add(v, "CS-2 NX/2 sustained bandwidth (Table 1)", "MB/s", 44,
                 cr_valid_bw_MBps(&c, 0, 1, 1 << 20), CR_CMP_NEAR);
    c = cr_valid_config(CR_MACH_CS2, 2, "dma"); /* test, combined answer, release */
    cr_valid_add(v, "CS-2 barrier sync, 2 PEs (Table 1)", "us", 28,
                 cr_valid_coll_us(&c, CR_PAT_BARRIER), CR_CMP_NEAR);
    c = cr_valid_config(CR_MACH_CS2, 1024, "hw");
    double near = cr_valid_echo_us(&c, 0, 1, 0, 2), far = cr_valid_echo_us(&c, 0, 1023, 0, 2);
    cr_net *net = cr_net_new(&c, (char[80]){0}, 80);
    int sw9 = net ? cr_net_hops(net, 0, 1023) : -1;
    cr_net_free(net);
    cr_valid_add(v, "CS-2 latency added per switch traversed", "ns", 170,
                 (far - near) * 1000 / (sw9 - 1), CR_CMP_NEAR);
    cr_valid_add(v, "CS-2 longest route in 1024 PEs: switches", "switches", 9, sw9, CR_CMP_NEAR);
    cr_valid_add(v, "CS-2 longest route adds to endpoint latency", "us", 1.5,
                 (far - near) * sw9 / (sw9 - 1), CR_CMP_NEAR);
}

const cr_machine cr_machine_cs2 = {
    .name = "cs2",
    .title = "Meiko CS-2, Elan/Elite fat tree (seed 001)",
    .sw = sw,
    .nsw = CR_ARRAY_LEN(sw),
    .sw_default = "dma",
    .sim = true,
    .sim_sw = "nx2",  /* the NX/2 library path, Table 1: 78 us */
    .sim_rma = "dma", /* one-sided traffic: the Elan DMA (Table 1: 9 us) beside the library */
    .cpu = 100,       /* 40 MHz SuperSPARC */
    .validate = cs2_validate,
    .init = cs2_init,
    .fini = cr_ftree_fini,
    .wire = cr_ftree_dma_wire,
    .hops = cr_ftree_hops,
    .route_links = cr_ftree_route_links,
    .bcast = cr_ftree_bcast,
    .stats = cr_ftree_stats,
    .inject_bps = CR_CS2_DMA_BPS,
    .fabric = cr_ftree_fabric,
    .link_name = cr_ftree_link_name,
};
