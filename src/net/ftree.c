/* The fat-tree family: the network models of the Meiko CS-2 Elite network (seed 001), the
 * IBM SP2 High-Performance Switch (seed 003) and a modern cluster, all built from 8-port
 * switches with 4 links down and 4 up (a 4-ary n-tree: n levels of Np/4 switches, Np = 4^n >=
 * nodes). Their descriptors (cs2.c, sp2.c, cluster.c) give the parameters (cr_ftree_params)
 * and use the hooks here; nothing here asks which machine it is.
 *
 * Naming: node p has base-4 digits; a level-l switch is (group g = p >> 2l, path q) with
 * q < 4^(l-1) recording the up-ports taken, index g*4^(l-1) + q. A route from s to d climbs
 * to level h (the lowest common ancestor) choosing up-ports (the digits of q), then descends
 * along d's digits: 2h-1 switches, 2h links. Routes are source routes chosen on entry:
 *   random     one of four table routes per (source, destination), picked at random per
 *              packet; the table is a hash of (seed, s, d, k), so it costs no memory.
 *   topswitch  q = d mod 4^(h-1): every packet for d crosses the same top switch ("d-mod-k"),
 *              which reduces the tree to an Omega network (non-blocking for shifts and FFT).
 *
 * CS-2: each Elan's DMA engine sends one message at a time as fragments (wormhole packets at
 * the DMA's 44 MB/s over 50 MB/s links, 170 ns per switch); the next fragment starts as the
 * previous tail leaves, and the next message after the last fragment's acknowledge has come
 * back on the return path. Two independent networks. Hardware broadcast to a range.
 * Cluster: the same, one network, with the user's link bandwidth and latency: the NIC sends
 * a message as MTU-sized cut-through packets back to back at the link rate (no wait for
 * acknowledges); the links are held only for the packets' transfer time, and the latency of
 * the switches on the way is added to the message's arrival as a pipeline delay (the fabric
 * lays out a packet's timeline once its header is through, so a latency larger than a
 * packet's transfer time kept in the links would let one packet through per latency).
 * SP2: MPL's pipe layer copies each packet (processor, a FIFO server), the adapter DMAs it
 * (the SP1's TB0 adapter had no DMA: the processor's copy is its PIO into the adapter's FIFO)
 * over the Micro Channel (a FIFO server shared by both directions), the switch carries it as a
 * wormhole packet; at the receiver the adapter needs a free receive-queue slot (no end-to-end
 * flow control: a full queue stops the link and congestion backs up into the tree) unless
 * tokens are on, in which case a packet enters the network only with a token for its pipe,
 * returned when the receiver has consumed it.
 */
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"

typedef struct ftree {
    cr_fabric fab;
    cr_net *net;
    int levels, np, nets, tokens;
    size_t per_net;
    uint64_t pow4[8];
    /* CS-2 DMA engines (and the cluster's NICs): one message at a time, in fragments */
    cr_msg **dq_h, **dq_t;
    uint8_t *dma_busy;
    uint64_t frag, rate; /* fragment bytes, bytes/s */
    cr_time ack_ps;      /* per switch, for the last fragment's acknowledge (0: none) */
    cr_time lat_ps;      /* cluster: per switch, a pure delay after the last fragment */
    /* SP2 */
    cr_time *adapter_free;
    uint64_t adapter_bps; /* the adapter's DMA, both directions (0: none, PIO) */
    cr_time copy_ps;
    int *rxq;
    cr_worm **park_h, **park_t;
    int16_t *tok;
    cr_msg **tq_h, **tq_t;
} ftree;

static int lca(int s, int d)
{
    int h = 1;
    while ((s >> 2 * h) != (d >> 2 * h)) h++;
    return h;
}

static int ft_path(ftree *t, int s, int d, uint64_t q, int nt, int32_t *lk)
{
    size_t off = (size_t)nt * t->per_net, np = (size_t)t->np;
    int n = 0, h = lca(s, d), L = t->levels;
    lk[n++] = (int32_t)(off + (size_t)s);
    for (int l = 1; l < h; l++) {
        uint64_t idx = (uint64_t)(s >> 2 * l) * t->pow4[l - 1] + q % t->pow4[l - 1];
        uint64_t j = (q >> 2 * (l - 1)) & 3;
        lk[n++] = (int32_t)(off + 2 * np + (size_t)(l - 1) * np + idx * 4 + j);
    }
    for (int l = h; l >= 2; l--) {
        uint64_t idx = (uint64_t)(d >> 2 * l) * t->pow4[l - 1] + q % t->pow4[l - 1];
        uint64_t c = (uint64_t)(d >> 2 * (l - 1)) & 3;
        lk[n++] =
            (int32_t)(off + 2 * np + (size_t)(L - 1) * np + (size_t)(l - 2) * np + idx * 4 + c);
    }
    lk[n++] = (int32_t)(off + np + (size_t)d);
    return n;
}

/* Choose the route on entry, as the Elan (or the SP2 adapter) does. */
static int choose_route(ftree *t, int s, int d, int k, int32_t *lk)
{
    int h = lca(s, d);
    uint64_t q, nt;
    if (t->net->cfg.route == CR_ROUTE_TOPSWITCH) {
        q = (uint64_t)d % t->pow4[h - 1];
        nt = (uint64_t)d % (uint64_t)t->nets;
    } else {
        if (k < 0) k = (int)cr_sim_rand_below(t->net->sim, CR_CS2_ROUTES);
        uint64_t key = ((uint64_t)s * (uint64_t)t->np + (uint64_t)d) * CR_CS2_ROUTES + (uint64_t)k;
        uint64_t hv = cr_hash64(key ^ (t->net->cfg.seed * 0x9e3779b97f4a7c15ULL));
        q = hv % t->pow4[h - 1];
        nt = (hv >> 48) % (uint64_t)t->nets;
    }
    return ft_path(t, s, d, q, (int)nt, lk);
}

int cr_ftree_hops(cr_net *net, int a, int b)
{
    (void)net;
    return a == b ? 0 : 2 * lca(a, b) - 1; /* switches traversed */
}

int cr_ftree_route_links(cr_net *net, int s, int d, int32_t *links, int max)
{
    ftree *t = net->mach;
    int32_t lk[CR_MAX_PATH];
    int n = choose_route(t, s, d, 0, lk);
    if (n > max) return -1;
    memcpy(links, lk, (size_t)n * sizeof(int32_t));
    return n;
}

/* ------------------------------------------------------------------ CS-2 */
static void cs2_send_fragment(cr_sim *sim, void *obj, uint64_t arg);

static void cs2_dma_next(ftree *t, int node)
{
    cr_msg *m = t->dq_h[node];
    if (!m) {
        t->dma_busy[node] = 0;
        return;
    }
    t->dq_h[node] = m->next;
    if (!m->next) t->dq_t[node] = NULL;
    t->dma_busy[node] = 1;
    cs2_send_fragment(t->net->sim, m, 0);
}

static void cs2_dma_done(cr_sim *sim, void *obj, uint64_t node)
{
    (void)sim;
    cs2_dma_next(obj, (int)node);
}

static void cs2_send_fragment(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    cr_msg *m = obj;
    ftree *t = m->net->mach;
    uint64_t b = (uint64_t)m->mstate[2] > t->frag ? t->frag : (uint64_t)m->mstate[2];
    m->mstate[2] -= (int64_t)b;
    m->mstate[0]--;
    cr_worm *w = cr_worm_alloc(&t->fab);
    w->n = (uint8_t)choose_route(t, m->wfrom, m->wto, -1, w->links);
    w->bytes = b;
    w->rate = t->rate;
    w->dst_node = m->wto;
    w->owner = m;
    cr_fabric_start(&t->fab, w);
}

static void cs2_src_free(void *ctx, cr_worm *w, cr_time at)
{
    ftree *t = ctx;
    if (w->owner->mstate[0] > 0) cr_sim_at(t->net->sim, at, cs2_send_fragment, w->owner, 0);
}

static void wire_done_ev(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    cr_msg *m = obj;
    cr_net_wire_done(m->net, m);
}

static void cs2_arrived(void *ctx, cr_worm *w)
{
    ftree *t = ctx;
    cr_msg *m = w->owner;
    int n = w->n;
    cr_worm_free(&t->fab, w);
    if (--m->mstate[1] > 0) return;
    /* The DMA descriptor completes when the last acknowledge is back at the source. */
    cr_sim_after(t->net->sim, (cr_time)(n - 1) * t->ack_ps, cs2_dma_done, t, (uint64_t)m->wfrom);
    if (t->lat_ps)
        cr_sim_after(t->net->sim, (cr_time)(n - 1) * t->lat_ps, wire_done_ev, m, 0);
    else
        cr_net_wire_done(t->net, m);
}

void cr_ftree_dma_wire(cr_net *net, cr_msg *m)
{
    ftree *t = net->mach;
    int64_t nfrag = m->wbytes ? (int64_t)((m->wbytes + t->frag - 1) / t->frag) : 1;
    m->mstate[0] = m->mstate[1] = nfrag;
    m->mstate[2] = (int64_t)m->wbytes;
    m->next = NULL;
    int s = m->wfrom;
    if (t->dq_t[s])
        t->dq_t[s]->next = m;
    else
        t->dq_h[s] = m;
    t->dq_t[s] = m;
    if (!t->dma_busy[s]) cs2_dma_next(t, s);
}

typedef struct bcast_ev {
    cr_net *net;
    int root, lo, hi;
    void (*arrive)(cr_net *, int, cr_time, void *);
    void *ctx;
} bcast_ev;

static void bcast_fire(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)arg;
    bcast_ev *b = obj;
    for (int d = b->lo; d <= b->hi; d++)
        if (d != b->root) b->arrive(b->net, d, cr_sim_now(sim), b->ctx);
    free(b);
}

/* The packet climbs to the switch above the whole range and every switch below forwards it
 * to a contiguous range of outputs, so all destinations see the same 2h-1 switches. */
int cr_ftree_bcast(cr_net *net, int root, int lo, int hi, uint64_t bytes,
                   void (*arrive)(cr_net *, int, cr_time, void *), void *ctx)
{
    int h = lca(root, lo);
    if (lca(root, hi) > h) h = lca(root, hi);
    bcast_ev *b = malloc(sizeof(*b));
    if (!b) return 0;
    *b = (bcast_ev){net, root, lo, hi, arrive, ctx};
    cr_time t = (cr_time)(2 * h - 1) * CR_CS2_SWITCH_PS + cr_xfer_time(bytes, CR_CS2_DMA_BPS);
    cr_sim_after(net->sim, t, bcast_fire, b, 0);
    return hi - lo + 1 - (root >= lo && root <= hi);
}

/* ------------------------------------------------------------------ SP2 */
#define SP2_PAYLOAD (CR_SP2_PACKET - CR_SP2_PKT_HDR)

static cr_time adapter(ftree *t, int node, uint64_t bytes)
{
    cr_time now = cr_sim_now(t->net->sim);
    if (!t->adapter_bps) return now; /* no DMA (the SP1's TB0): the processor's PIO moved it */
    cr_time st = t->adapter_free[node] > now ? t->adapter_free[node] : now;
    return t->adapter_free[node] = st + cr_xfer_time(bytes, t->adapter_bps);
}

static void sp2_inject(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    cr_worm *w = obj;
    ftree *t = w->owner->net->mach;
    w->n = (uint8_t)choose_route(t, w->owner->wfrom, w->owner->wto, -1, w->links);
    cr_fabric_start(&t->fab, w);
}

static void sp2_dma_out(ftree *t, cr_worm *w)
{
    cr_sim_at(t->net->sim, adapter(t, w->owner->wfrom, w->tag), sp2_inject, w, 0);
}

static void sp2_pump(ftree *t, cr_msg *m);

/* The pipe layer has copied one packet into the switch interface: hand it to the adapter and
 * copy the next one (one at a time, so receive work on this processor interleaves). */
static void sp2_copied(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    cr_worm *w = obj;
    ftree *t = w->owner->net->mach;
    sp2_dma_out(t, w);
    sp2_pump(t, w->owner);
}

static void sp2_pump(ftree *t, cr_msg *m)
{
    if (m->mstate[0] <= 0) return;
    if (t->tokens) {
        size_t p = (size_t)m->wfrom * (size_t)t->np + (size_t)m->wto;
        if (t->tok[p] <= 0) { /* no space at the receiver: wait at the source */
            m->next = NULL;
            if (t->tq_t[p])
                t->tq_t[p]->next = m;
            else
                t->tq_h[p] = m;
            t->tq_t[p] = m;
            return;
        }
        t->tok[p]--;
    }
    uint64_t b = (uint64_t)m->mstate[2] > SP2_PAYLOAD ? SP2_PAYLOAD : (uint64_t)m->mstate[2];
    m->mstate[2] -= (int64_t)b;
    m->mstate[0]--;
    cr_worm *w = cr_worm_alloc(&t->fab);
    w->owner = m;
    w->tag = b;
    w->bytes = b + CR_SP2_PKT_HDR;
    w->rate = CR_SP2_LINK_BPS;
    w->dst_node = m->wto;
    cr_time done = cr_net_cpu(t->net, m->wfrom, (cr_time)b * t->copy_ps);
    cr_sim_at(t->net->sim, done, sp2_copied, w, 0);
}

static void sp2_token_back(cr_sim *sim, void *obj, uint64_t p)
{
    (void)sim;
    ftree *t = obj;
    t->tok[p]++;
    cr_msg *m = t->tq_h[p];
    if (!m) return;
    t->tq_h[p] = m->next;
    if (!m->next) t->tq_t[p] = NULL;
    sp2_pump(t, m);
}

static void sp2_consumed(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)arg;
    cr_worm *w = obj;
    cr_msg *m = w->owner;
    ftree *t = m->net->mach;
    int d = m->wto;
    if (t->tokens) {
        uint64_t p = (uint64_t)m->wfrom * (uint64_t)t->np + (uint64_t)d;
        cr_sim_after(sim, CR_SP2_TOKEN_RET_PS, sp2_token_back, t, p);
    } else if (t->park_h[d]) { /* a slot is free again: the stalled packet moves */
        cr_worm *pw = t->park_h[d];
        t->park_h[d] = pw->wnext;
        if (!pw->wnext) t->park_t[d] = NULL;
        cr_fabric_sink_go(&t->fab, pw);
    } else
        t->rxq[d]--;
    cr_worm_free(&t->fab, w);
    if (--m->mstate[1] == 0) cr_net_wire_done(m->net, m);
}

static void sp2_adapter_in(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    cr_worm *w = obj;
    ftree *t = w->owner->net->mach;
    cr_time done = cr_net_cpu(t->net, w->owner->wto, (cr_time)w->tag * t->copy_ps);
    cr_sim_at(t->net->sim, done, sp2_consumed, w, 0);
}

static void sp2_arrived(void *ctx, cr_worm *w)
{
    ftree *t = ctx;
    cr_sim_at(t->net->sim, adapter(t, w->owner->wto, w->tag), sp2_adapter_in, w, 0);
}

static int sp2_sink_ready(void *ctx, cr_worm *w)
{
    ftree *t = ctx;
    int d = w->dst_node;
    if (t->tokens) return 1; /* the token guaranteed the space */
    if (t->rxq[d] < CR_SP2_RXQ) {
        t->rxq[d]++;
        return 1;
    }
    w->wnext = NULL; /* the receiver stops the link: the packet holds its path */
    if (t->park_t[d])
        t->park_t[d]->wnext = w;
    else
        t->park_h[d] = w;
    t->park_t[d] = w;
    return 0;
}

void cr_ftree_pipe_wire(cr_net *net, cr_msg *m)
{
    uint64_t left = m->wbytes;
    int64_t npk = left ? (int64_t)((left + SP2_PAYLOAD - 1) / SP2_PAYLOAD) : 1;
    m->mstate[0] = m->mstate[1] = npk;
    m->mstate[2] = (int64_t)left;
    sp2_pump(net->mach, m);
}

/* ------------------------------------------------------------------ setup */
int cr_ftree_init(cr_net *net, const cr_ftree_params *p, char *err, size_t errlen)
{
    const cr_net_config *c = &net->cfg;
    int nodes = c->nodes > 0 ? c->nodes : p->default_nodes;
    if (nodes < 2 || nodes > p->max_nodes)
        return snprintf(err, errlen, "%s has 2..%d nodes, not %d", net->m->name, p->max_nodes,
                        nodes),
               -1;
    if (c->route == CR_ROUTE_ECUBE || c->route == CR_ROUTE_ANYMIN)
        return snprintf(err, errlen, "routing must be random or topswitch on a fat tree"), -1;
    ftree *t = calloc(1, sizeof(*t));
    if (!t) return snprintf(err, errlen, "out of memory"), -1;
    net->mach = t;
    net->nodes = nodes;
    t->net = net;
    t->nets = p->networks;
    t->pow4[0] = 1;
    for (int i = 1; i < 8; i++) t->pow4[i] = t->pow4[i - 1] * 4;
    for (t->levels = 1; t->pow4[t->levels] < (uint64_t)nodes; t->levels++) {
    }
    t->np = (int)t->pow4[t->levels];
    t->per_net = 2 * (size_t)t->levels * (size_t)t->np;
    if (cr_fabric_init(&t->fab, net->sim, t->per_net * (size_t)t->nets))
        return snprintf(err, errlen, "out of memory"), -1;
    cr_fabric *f = &t->fab;
    f->hop_ps = f->pipe_ps = p->switch_ps;
    t->lat_ps = p->lat_ps;
    t->frag = p->frag;
    t->rate = p->rate;
    t->ack_ps = p->ack_ps;
    f->detect_deadlock = 1;
    f->ctx = t;
    size_t n = (size_t)nodes;
    if (!p->pipe) {
        t->dq_h = calloc(n, sizeof(cr_msg *));
        t->dq_t = calloc(n, sizeof(cr_msg *));
        t->dma_busy = calloc(n, 1);
        f->src_free = cs2_src_free;
        f->arrived = cs2_arrived;
        if (!t->dq_h || !t->dq_t || !t->dma_busy) return snprintf(err, errlen, "out of memory"), -1;
        return 0;
    }
    t->copy_ps = p->copy_ps;
    t->adapter_bps = p->adapter_bps;
    t->tokens = c->tokens;
    t->adapter_free = calloc(n, sizeof(cr_time));
    t->rxq = calloc(n, sizeof(int));
    t->park_h = calloc(n, sizeof(cr_worm *));
    t->park_t = calloc(n, sizeof(cr_worm *));
    f->arrived = sp2_arrived;
    f->sink_ready = sp2_sink_ready;
    if (!t->adapter_free || !t->rxq || !t->park_h || !t->park_t)
        return snprintf(err, errlen, "out of memory"), -1;
    if (t->tokens) {
        size_t pipes = (size_t)t->np * (size_t)t->np;
        t->tok = malloc(pipes * sizeof(int16_t));
        t->tq_h = calloc(pipes, sizeof(cr_msg *));
        t->tq_t = calloc(pipes, sizeof(cr_msg *));
        if (!t->tok || !t->tq_h || !t->tq_t) return snprintf(err, errlen, "out of memory"), -1;
        for (size_t i = 0; i < pipes; i++) t->tok[i] = CR_SP2_TOKENS;
    }
    return 0;
}

void cr_ftree_fini(cr_net *net)
{
    ftree *t = net->mach;
    cr_fabric_fini(&t->fab);
    free(t->dq_h);
    free(t->dq_t);
    free(t->dma_busy);
    free(t->adapter_free);
    free(t->rxq);
    free(t->park_h);
    free(t->park_t);
    free(t->tok);
    free(t->tq_h);
    free(t->tq_t);
    free(t);
}

void cr_ftree_stats(cr_net *net, cr_net_stats *st)
{
    ftree *t = net->mach;
    st->wires = t->fab.worms;
    st->waits = t->fab.waits;
    st->deadlocks = t->fab.deadlocks;
    st->max_link_users = t->fab.max_wait + 1;
}

cr_fabric *cr_ftree_fabric(cr_net *net)
{
    return &((ftree *)net->mach)->fab;
}

/* The inverse of ft_path's numbering. */
void cr_ftree_link_name(cr_net *net, int32_t link, char *buf, size_t len)
{
    ftree *t = net->mach;
    size_t np = (size_t)t->np, L = (size_t)t->levels, r = (size_t)link % t->per_net;
    char nt[16] = "";
    if (t->nets > 1) snprintf(nt, sizeof nt, "network %d: ", (int)((size_t)link / t->per_net));
    if (r < np)
        snprintf(buf, len, "%snode %zu up", nt, r);
    else if (r < 2 * np)
        snprintf(buf, len, "%snode %zu down", nt, r - np);
    else if ((r -= 2 * np) < (L - 1) * np)
        snprintf(buf, len, "%slevel %zu switch %zu up %zu", nt, r / np + 1, r % np / 4, r % 4);
    else {
        r -= (L - 1) * np;
        snprintf(buf, len, "%slevel %zu switch %zu down %zu", nt, r / np + 2, r % np / 4, r % 4);
    }
}
