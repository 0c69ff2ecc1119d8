/* The first-generation Intel iPSC, for comparison with the iPSC/2 only (not offered by
 * courier run --sim): its store-and-forward hypercube (seed 004's F(N_hops) = N_hops).
 * Every packet is received whole by each intermediate node, whose software then forwards it
 * (CR_IPSC1_FWD_PS of that node's processor); channels are FIFO servers. */
#include <stdlib.h>

#include "net_internal.h"

typedef struct sfnet {
    cr_time *chan_free;
    uint64_t packets;
} sfnet;

enum { SF_ARRIVE = 0, SF_SEND = 1 };

static uint64_t sf_arg(int kind, int node, uint64_t bytes)
{
    return (uint64_t)kind | ((uint64_t)node << 1) | (bytes << 17);
}

static void sf_event(cr_sim *sim, void *obj, uint64_t arg)
{
    cr_msg *m = obj;
    cr_net *net = m->net;
    sfnet *s = net->mach;
    int kind = (int)(arg & 1), node = (int)((arg >> 1) & 0xffff);
    uint64_t bytes = arg >> 17;
    if (kind == SF_ARRIVE) {
        if (node == m->wto) {
            if (--m->mstate[0] == 0) cr_net_wire_done(net, m);
            return;
        }
        cr_sim_at(sim, cr_net_cpu(net, node, CR_IPSC1_FWD_PS), sf_event, m,
                  sf_arg(SF_SEND, node, bytes));
        return;
    }
    int k = __builtin_ctz((unsigned)(node ^ m->wto)); /* e-cube next dimension */
    size_t link = (size_t)node * 8 + (size_t)k;
    cr_time now = cr_sim_now(sim);
    cr_time start = s->chan_free[link] > now ? s->chan_free[link] : now;
    s->chan_free[link] = start + cr_xfer_time(bytes + 16, CR_IPSC1_CHAN_BPS);
    cr_sim_at(sim, s->chan_free[link], sf_event, m, sf_arg(SF_ARRIVE, node ^ (1 << k), bytes));
}

static void sf_wire(cr_net *net, cr_msg *m)
{
    sfnet *s = net->mach;
    uint64_t left = m->wbytes;
    int npk = left ? (int)((left + CR_IPSC1_PACKET - 1) / CR_IPSC1_PACKET) : 1;
    m->mstate[0] = npk;
    for (int i = 0; i < npk; i++) {
        uint64_t b = left > CR_IPSC1_PACKET ? CR_IPSC1_PACKET : left;
        left -= b;
        s->packets++;
        sf_event(net->sim, m, sf_arg(SF_SEND, m->wfrom, b));
    }
}

static int sf_init(cr_net *net, char *err, size_t errlen)
{
    int dim = cr_hcube_dim(net, err, errlen);
    if (dim < 0) return -1;
    sfnet *s = calloc(1, sizeof(*s));
    if (!s) return snprintf(err, errlen, "out of memory"), -1;
    net->mach = s;
    net->nodes = 1 << dim;
    s->chan_free = calloc((size_t)net->nodes * 8, sizeof(cr_time));
    if (!s->chan_free) return snprintf(err, errlen, "out of memory"), -1;
    return 0;
}

static void sf_fini(cr_net *net)
{
    sfnet *s = net->mach;
    free(s->chan_free);
    free(s);
}

static void sf_stats(cr_net *net, cr_net_stats *st)
{
    st->wires = ((sfnet *)net->mach)->packets;
}

static const cr_swmodel nx1[] = {
    {.name = "nx1",
     .desc = "first-generation iPSC node software (ASSUMED)",
     .o_send = CR_IPSC1_OSEND_PS,
     .o_recv = CR_IPSC1_ORECV_PS,
     .eager_max = -1},
};

/* Its rows are the iPSC/2's comparisons (ipsc2.c). Channels are FIFO servers, not a fabric. */
const cr_machine cr_machine_ipsc1 = {
    .name = "ipsc1",
    .title = "Intel iPSC/1, store-and-forward hypercube (seed 004; ASSUMED figures)",
    .sw = nx1,
    .nsw = CR_ARRAY_LEN(nx1),
    .sw_default = "nx1",
    .init = sf_init,
    .fini = sf_fini,
    .wire = sf_wire,
    .hops = cr_hcube_hops,
    .stats = sf_stats,
    .inject_bps = CR_IPSC1_CHAN_BPS,
};
