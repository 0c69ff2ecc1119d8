/* One simulated machine: configuration checks, the node processors, the message pool, and
 * the node software model that turns a send into protocol trips over the machine's wire.
 *
 * Software model (seed 004: T_ipc = T_startup + T_trans; seed 000 section 3):
 *   eager  (bytes <= eager_max): sender CPU o_send + copy, one data trip, receiver CPU o_recv
 *          + copy.
 *   three trips (longer): proxy (control message), request back from the receiver, then the
 *          whole message by DMA; each control message costs ctl_ps of OS time at both ends.
 * Invariants: a message has at most one wire trip in flight; node processors are FIFO servers
 * (cpu_free), so work queued on a node is served in the order events asked for it.
 */
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"

enum { ST_SENT, ST_PROXY, ST_REQ_CPU, ST_REQUEST, ST_DATA_CPU, ST_DATA, ST_RECVD };

/* The machines, by kind (CR_MACHINES in cr_net.h). */
static const cr_machine *const machines[CR_MACH_COUNT] = {
#define CR_MACH_ENTRY_(kind, desc) [kind] = &desc,
    CR_MACHINES(CR_MACH_ENTRY_)
#undef CR_MACH_ENTRY_
};

const cr_machine *cr_machine_get(cr_machine_kind kind)
{
    return (unsigned)kind < CR_MACH_COUNT ? machines[kind] : NULL;
}

const cr_machine *cr_machine_find(const char *s)
{
    for (int i = 0; i < CR_MACH_COUNT; i++)
        if (strcmp(s, machines[i]->name) == 0) return machines[i];
    return NULL;
}

const cr_swmodel *cr_swmodel_find(cr_machine_kind kind, const char *name)
{
    const cr_machine *m = cr_machine_get(kind);
    for (size_t i = 0; m && i < m->nsw; i++)
        if (strcmp(m->sw[i].name, name) == 0) return &m->sw[i];
    return NULL;
}

const cr_swmodel *cr_swmodel_default(cr_machine_kind kind)
{
    const cr_machine *m = cr_machine_get(kind);
    return m && m->sw_default ? cr_swmodel_find(kind, m->sw_default) : NULL;
}

const char *cr_machine_name(cr_machine_kind k)
{
    const cr_machine *m = cr_machine_get(k);
    return m ? m->name : "?";
}

int cr_machine_parse(const char *s, cr_machine_kind *out)
{
    for (int i = 0; i < CR_MACH_COUNT; i++)
        if (strcmp(s, machines[i]->name) == 0) return *out = (cr_machine_kind)i, 0;
    return -1;
}

cr_net *cr_net_new(const cr_net_config *cfg, char *err, size_t errlen)
{
    const cr_machine *mach = cr_machine_get(cfg->kind);
    if (!mach) {
        snprintf(err, errlen, "unknown machine");
        return NULL;
    }
    cr_net *net = calloc(1, sizeof(*net));
    if (!net) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    net->cfg = *cfg;
    net->m = mach;
    net->sim = cr_sim_new(cfg->seed ? cfg->seed : 1);
    if (!cfg->sw)
        net->sw = cr_swmodel_default(cfg->kind);
    else if (strcmp(cfg->sw, "hw") != 0 && !(net->sw = cr_swmodel_find(cfg->kind, cfg->sw))) {
        snprintf(err, errlen, "no software model '%s' for %s", cfg->sw, cr_machine_name(cfg->kind));
        cr_net_free(net);
        return NULL;
    }
    if (!net->sim || mach->init(net, err, errlen) != 0) {
        cr_net_free(net);
        return NULL;
    }
    net->cpu_free = calloc((size_t)net->nodes, sizeof(cr_time));
    if (!net->cpu_free) {
        snprintf(err, errlen, "out of memory");
        cr_net_free(net);
        return NULL;
    }
    return net;
}

void cr_net_free(cr_net *net)
{
    if (!net) return;
    if (net->mach && net->m->fini) net->m->fini(net);
    for (size_t i = 0; i < net->nmsgs; i++) free(net->all_msgs[i]);
    free(net->all_msgs);
    free(net->cpu_free);
    cr_sim_free(net->sim);
    free(net);
}

cr_sim *cr_net_sim(cr_net *net)
{
    return net->sim;
}
int cr_net_nodes(const cr_net *net)
{
    return net->nodes;
}
const cr_swmodel *cr_net_swmodel(const cr_net *net)
{
    return net->sw;
}
uint64_t cr_net_inject_bps(const cr_net *net)
{
    return net->m->inject_bps;
}

int cr_net_hops(cr_net *net, int a, int b)
{
    return net->m->hops(net, a, b);
}

void cr_net_set_deliver(cr_net *net, void (*fn)(cr_net *, cr_msg *, void *), void *ctx)
{
    net->deliver = fn;
    net->deliver_ctx = ctx;
}

cr_msg *cr_net_msg(cr_net *net, int src, int dst, uint64_t bytes)
{
    cr_msg *m = net->free_msgs;
    if (m) {
        net->free_msgs = m->next;
    } else {
        if (net->nmsgs == net->capmsgs) {
            net->capmsgs = net->capmsgs ? 2 * net->capmsgs : 256;
            net->all_msgs = realloc(net->all_msgs, net->capmsgs * sizeof(cr_msg *));
        }
        if (!net->all_msgs || !(m = malloc(sizeof(*m))))
            abort(); /* no way to continue a run without memory */
        net->all_msgs[net->nmsgs++] = m;
    }
    memset(m, 0, sizeof(*m));
    m->net = net;
    m->src = src;
    m->dst = dst;
    m->bytes = bytes;
    m->t_create = cr_sim_now(net->sim);
    return m;
}

void cr_net_msg_free(cr_net *net, cr_msg *m)
{
    m->next = net->free_msgs;
    net->free_msgs = m;
}

cr_time cr_net_cpu(cr_net *net, int node, cr_time cost)
{
    cr_time now = cr_sim_now(net->sim);
    cr_time start = net->cpu_free[node] > now ? net->cpu_free[node] : now;
    net->cpu_free[node] = start + cost;
    return start + cost;
}

static void self_done(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    cr_msg *m = obj;
    cr_net_wire_done(m->net, m);
}

static void wire(cr_net *net, cr_msg *m, int from, int to, uint64_t bytes, int stage)
{
    m->stage = stage;
    m->wfrom = from;
    m->wto = to;
    m->wbytes = bytes;
    memset(m->mstate, 0, sizeof(m->mstate));
    if (from == to)
        cr_sim_at(net->sim, cr_sim_now(net->sim), self_done, m, 0);
    else
        net->m->wire(net, m);
}

static void step(cr_sim *sim, void *obj, uint64_t arg);

/* Run cost on node's CPU, then continue the protocol at stage. */
static void cpu_then(cr_net *net, cr_msg *m, int node, cr_time cost, int stage)
{
    m->stage = stage;
    cr_sim_at(net->sim, cr_net_cpu(net, node, cost), step, m, 0);
}

static void deliver(cr_net *net, cr_msg *m)
{
    m->t_done = cr_sim_now(net->sim);
    if (net->deliver) net->deliver(net, m, net->deliver_ctx);
}

static int is_eager(const cr_swmodel *sw, uint64_t bytes)
{
    return sw->eager_max < 0 || bytes <= (uint64_t)sw->eager_max;
}

static void step(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    cr_msg *m = obj;
    cr_net *net = m->net;
    const cr_swmodel *sw = net->sw;
    switch (m->stage) {
    case ST_SENT:
        if (is_eager(sw, m->bytes))
            wire(net, m, m->src, m->dst, m->bytes, ST_DATA);
        else
            wire(net, m, m->src, m->dst, sw->ctl_bytes, ST_PROXY);
        break;
    case ST_REQ_CPU:
        wire(net, m, m->dst, m->src, sw->ctl_bytes, ST_REQUEST);
        break;
    case ST_DATA_CPU:
        wire(net, m, m->src, m->dst, m->bytes, ST_DATA);
        break;
    case ST_RECVD:
        deliver(net, m);
        break;
    }
}

void cr_net_wire_done(cr_net *net, cr_msg *m)
{
    const cr_swmodel *sw = net->sw;
    if (!sw) {
        deliver(net, m);
        return;
    }
    switch (m->stage) {
    case ST_PROXY:
        cpu_then(net, m, m->dst, 2 * sw->ctl_ps, ST_REQ_CPU);
        break;
    case ST_REQUEST:
        cpu_then(net, m, m->src, 2 * sw->ctl_ps, ST_DATA_CPU);
        break;
    case ST_DATA:
        if (m->flags & CR_MSG_ENDS_PAID)
            deliver(net, m);
        else
            cpu_then(net, m, m->dst, cr_net_recv_cost(sw, m->bytes), ST_RECVD);
        break;
    }
}

void cr_net_send(cr_net *net, cr_msg *m)
{
    if (!net->sw) { /* no end-point costs to pay: straight onto the wire */
        cr_net_send_wired(net, m);
        return;
    }
    m->net = net;
    cr_time cost = net->sw->o_send;
    if (is_eager(net->sw, m->bytes)) cost += (cr_time)m->bytes * net->sw->copy_ps;
    cpu_then(net, m, m->src, cost, ST_SENT);
}

cr_time cr_net_recv_cost(const cr_swmodel *sw, uint64_t bytes)
{
    if (!sw) return 0;
    uint64_t copied = is_eager(sw, bytes) ? bytes : (uint64_t)sw->eager_max;
    return sw->o_recv + (cr_time)copied * sw->copy_ps;
}

void cr_net_send_wired(cr_net *net, cr_msg *m)
{
    m->net = net;
    m->flags |= CR_MSG_ENDS_PAID;
    if (!net->sw) {
        wire(net, m, m->src, m->dst, m->bytes, ST_DATA);
        return;
    }
    m->stage = ST_SENT;
    step(net->sim, m, 0);
}

bool cr_net_has_hw_broadcast(const cr_net *net)
{
    return net->m->bcast != NULL;
}

bool cr_net_has_chains(const cr_net *net)
{
    return net->m->chains;
}

int cr_net_hw_broadcast(cr_net *net, int root, int lo, int hi, uint64_t bytes,
                        void (*arrive)(cr_net *, int, cr_time, void *), void *ctx)
{
    if (!net->m->bcast) return 0;
    return net->m->bcast(net, root, lo, hi, bytes, arrive, ctx);
}

void cr_net_get_stats(const cr_net *net, cr_net_stats *st)
{
    memset(st, 0, sizeof(*st));
    if (net->m->stats) net->m->stats((cr_net *)net, st);
}

int cr_net_busiest_links(cr_net *net, cr_net_link_use *out, int max)
{
    if (!net->m->fabric || !net->m->link_name || max <= 0) return 0;
    cr_fabric *f = net->m->fabric(net);
    int n = 0;
    for (size_t i = 0; i < f->nlinks; i++) {
        const cr_link *l = &f->links[i];
        if (!l->busy || (n == max && l->busy <= out[n - 1].busy)) continue;
        int j = n < max ? n++ : n - 1; /* insert in order, the least busy falls off */
        for (; j > 0 && out[j - 1].busy < l->busy; j--) out[j] = out[j - 1];
        out[j] = (cr_net_link_use){.link = (int32_t)i, .busy = l->busy, .bytes = l->bytes};
    }
    for (int i = 0; i < n; i++)
        net->m->link_name(net, out[i].link, out[i].name, sizeof out[i].name);
    return n;
}

int cr_net_route_links(cr_net *net, int src, int dst, int32_t *links, int max)
{
    if (!net->m->route_links) return -1;
    return net->m->route_links(net, src, dst, links, max);
}
