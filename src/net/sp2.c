/* The IBM SP2 (seed 003): its descriptor, its node software (MPL, thin and fat nodes, Table
 * 1), its rows of the validation table, its --sim key (tokens=), and its parameters of the
 * fat-tree family's model (ftree.c): MPL's pipe layer copies each packet, the adapter DMAs it,
 * the High-Performance Switch carries it as a wormhole packet, one network. */
#include <string.h>

#include "net_internal.h"

static const cr_swmodel sw[] = {
    {.name = "mpl-thin",
     .desc = "MPL user space, thin (390) node, Table 1",
     .o_send = CR_SP2_THIN_OSEND_PS,
     .o_recv = CR_SP2_THIN_ORECV_PS,
     .eager_max = -1},
    {.name = "mpl-fat",
     .desc = "MPL user space, fat (590) node, Table 1",
     .o_send = CR_SP2_FAT_OSEND_PS,
     .o_recv = CR_SP2_FAT_ORECV_PS,
     .eager_max = -1,
     .node_type = 1},
    {.name = "mpl-370-tb0",
     .desc = "MPL on the SP1: 370 (POWER1) node, TB0 adapter without DMA, Table 1",
     .o_send = CR_SP1_TB0_OSEND_PS,
     .o_recv = CR_SP1_TB0_ORECV_PS,
     .eager_max = -1,
     .node_type = 2},
};

static int sp2_init(cr_net *net, char *err, size_t errlen)
{
    /* the processor's copy: a fat node's or the SP1's PIO when its software is (hardware
     * only: thin) */
    int type = net->sw ? (int)net->sw->node_type : 0;
    const cr_ftree_params p = {
        .max_nodes = CR_SP2_MAX_NODES,
        .default_nodes = 16,
        .networks = 1,
        .switch_ps = CR_SP2_SWITCH_PS,
        .pipe = 1,
        .copy_ps = type == 2   ? CR_SP1_PIO_PS
                   : type == 1 ? CR_SP2_FAT_COPY_PS
                               : CR_SP2_THIN_COPY_PS,
        .adapter_bps = type == 2 ? 0 : CR_SP2_ADAPTER_BPS,
    };
    return cr_ftree_init(net, &p, err, errlen);
}

/* --sim tokens=on|off: the pipe layer's end-to-end flow control (default on) */
static int sp2_key(cr_net_config *c, const char *k, const char *v, char *err, size_t errlen)
{
    if (strcmp(k, "tokens")) return 1;
    if (strcmp(v, "on") && strcmp(v, "off"))
        return snprintf(err, errlen, "--sim: tokens=%s must be on or off", v), -1;
    c->tokens = v[1] == 'n';
    return 0;
}

static void sp2_validate(cr_valid_ctx *v)
{
    cr_net_config c = cr_valid_config(CR_MACH_SP2, 16, "mpl-thin");
    cr_valid_add(v, "SP2 MPL latency, thin node (Table 1)", "us", 40.0,
                 cr_valid_echo_us(&c, 0, 5, 0, 4), CR_CMP_NEAR);
    cr_valid_add(v, "SP2 MPL pt-to-pt bandwidth, thin (Table 1)", "MB/s", 35.5,
                 cr_valid_bw_MBps(&c, 0, 5, 1 << 20), CR_CMP_NEAR);
    cr_valid_add(v, "SP2 MPL exchange bandwidth, thin (Table 1)", "MB/s", 37.0,
                 cr_valid_exchange_MBps(&c, 1 << 20), CR_CMP_NEAR);
    c = cr_valid_config(CR_MACH_SP2, 16, "mpl-fat");
    cr_valid_add(v, "SP2 MPL latency, fat node (Table 1)", "us", 39.0,
                 cr_valid_echo_us(&c, 0, 5, 0, 4), CR_CMP_NEAR);
    cr_valid_add(v, "SP2 MPL pt-to-pt bandwidth, fat (Table 1)", "MB/s", 35.5,
                 cr_valid_bw_MBps(&c, 0, 5, 1 << 20), CR_CMP_NEAR);
    cr_valid_add(v, "SP2 MPL exchange bandwidth, fat (Table 1)", "MB/s", 48.2,
                 cr_valid_exchange_MBps(&c, 1 << 20), CR_CMP_NEAR);
    /* the SP1: the pipe layer's PIO sets both rates (each processor moves every byte of its
     * own direction, or of both in an exchange) */
    c = cr_valid_config(CR_MACH_SP2, 16, "mpl-370-tb0");
    cr_valid_add(v, "SP1 MPL latency, 370 node, TB0 adapter (Table 1)", "us", 37.6,
                 cr_valid_echo_us(&c, 0, 5, 0, 4), CR_CMP_NEAR);
    cr_valid_add(v, "SP1 MPL pt-to-pt bandwidth, 370/TB0 (Table 1)", "MB/s", 8.7,
                 cr_valid_bw_MBps(&c, 0, 5, 1 << 20), CR_CMP_NEAR);
    cr_valid_add(v, "SP1 MPL exchange bandwidth, 370/TB0 (Table 1)", "MB/s", 8.8,
                 cr_valid_exchange_MBps(&c, 1 << 20), CR_CMP_NEAR);
    c = cr_valid_config(CR_MACH_SP2, 64, "hw");
    double sw = (cr_valid_echo_us(&c, 0, 63, 0, 2) - cr_valid_echo_us(&c, 0, 1, 0, 2)) * 5 / 4;
    cr_valid_add(v, "SP2 switch latency, 5 chips (\"less than 1 us\")", "us", 1.0, sw,
                 CR_CMP_ATMOST);
}

const cr_machine cr_machine_sp2 = {
    .name = "sp2",
    .title = "IBM SP2, High-Performance Switch (seed 003)",
    .sw = sw,
    .nsw = CR_ARRAY_LEN(sw),
    .sw_default = "mpl-thin",
    .sim = true,
    .sim_sw = "mpl-thin",
    .cpu = 50, /* 66.7 MHz POWER2 thin node */
    .sim_keys = "tokens",
    .sim_keys_what = "is the sp2's flow control",
    .sim_keys_help = "tokens=on|off",
    .sim_key = sp2_key,
    .validate = sp2_validate,
    .init = sp2_init,
    .fini = cr_ftree_fini,
    .wire = cr_ftree_pipe_wire,
    .hops = cr_ftree_hops,
    .route_links = cr_ftree_route_links,
    .stats = cr_ftree_stats,
    .inject_bps = CR_SP2_LINK_BPS,
    .fabric = cr_ftree_fabric,
    .link_name = cr_ftree_link_name,
};
