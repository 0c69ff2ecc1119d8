/* iWarp torus/mesh (seed 002), simulated word by word.
 *
 * A message is a chain of logical channels ("segments"): the computation agent's output bus
 * into the source cell's queue, then one logical channel per hop, each ending in an 8-word
 * queue in the next cell, then the destination's bus to its computation agent. Each physical
 * bus (4 out per cell at 40 MB/s, plus the internal in/out busses) serves its logical channels
 * round-robin, one 32-bit word per 100 ns, considering only channels that are eligible: a
 * word waiting upstream and a free slot in the receiver's queue. The transmitter keeps that
 * free-slot count; it decrements it per word sent and increments it when the receiver's
 * dequeue signal returns (CR_IWARP_DEQ_PS later). So an idle channel costs no bandwidth and a
 * lone channel gets the full 40 MB/s (the 8-word queue covers the feedback delay).
 *
 * Street-sign routing: the header travels X first, then turns one corner into Y (shortest way
 * round on a torus); it needs a free logical output channel of its pool (open pool for
 * messages, reservation pool for pathways) in each direction it leaves a cell, and waits for
 * one otherwise. Header timing follows section 8 (150 ns channel request, 100 ns begin marker,
 * 50 ns per corner address, 200 ns forwarding per cell, 250 ns per corner turn). Data may
 * follow the header immediately but never passes it. The end marker is one more word; as it
 * passes each cell that cell's open-pool channel is released. A pathway (reservation pool) is
 * set up by its first message and kept: later messages pay only the 100 ns message begin
 * marker; messages on one pathway go one after the other.
 *
 * Invariants: queue occupancy <= 8; a message's memory is freed only when it is delivered and
 * none of its events is pending (refs == 0).
 */
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"

#define IW_MAXSEG (2 * CR_IWARP_MAX_SIDE + 4)
enum { IW_XP, IW_YP, IW_XM, IW_YM, IW_INJ, IW_EJ, IW_NBUS };

typedef struct iw_msg iw_msg;
typedef struct iwarp iwarp;
typedef struct iw_seg {
    iw_msg *im;
    int k, bus, credit, est;
    int64_t sent;
    struct iw_seg *bnext, *bprev;
} iw_seg;

typedef struct iw_path {
    int src, dst, held, busy;
    iw_msg *qh, *qt;
    struct iw_path *next;
} iw_path;

struct iw_msg {
    cr_msg *m;
    struct iwarp *w;
    int H, last, turn_at, corners, pool, refs, done;
    int cells[IW_MAXSEG], dirs[IW_MAXSEG];
    iw_seg seg[IW_MAXSEG];
    int q[IW_MAXSEG];
    int64_t words, inject_left, ejected;
    iw_path *pw;
    iw_msg *wnext; /* lc wait queue or pathway queue */
    int wait_hop;
};

typedef struct iw_bus {
    iw_seg *rr; /* circular list of established segments, and the round-robin position */
    int busy;
} iw_bus;

struct iwarp {
    cr_net *net;
    int X, Y, wrap, cells;
    iw_bus *bus;
    int (*lc_free)[2];
    iw_msg **lcw_h, **lcw_t; /* per (cell, dir, pool) waiting headers */
    iw_path **paths;         /* per source cell */
    uint64_t words, lc_waits, msgs;
};

static void ev_bus_done(cr_sim *sim, void *obj, uint64_t k);
static void ev_credit(cr_sim *sim, void *obj, uint64_t k);
static void ev_hdr(cr_sim *sim, void *obj, uint64_t hop);
static void ev_start_path(cr_sim *sim, void *obj, uint64_t arg);
static void src_established(iwarp *w, iw_msg *im);

static iwarp *IW(iw_msg *im)
{
    return im->w;
}

static void at(iw_msg *im, cr_time t, cr_event_fn fn, uint64_t arg)
{
    im->refs++;
    cr_sim_at(im->m->net->sim, t, fn, im, arg);
}

static int eligible(const iw_msg *im, const iw_seg *s)
{
    if (!s->est) return 0;
    if (s->k == 0 ? im->inject_left <= 0 : im->q[s->k - 1] <= 0) return 0;
    return s->k == im->last || s->credit > 0;
}

static void bus_add(iwarp *w, iw_seg *s)
{
    iw_bus *b = &w->bus[s->bus];
    if (!b->rr) {
        b->rr = s->bnext = s->bprev = s;
        return;
    }
    s->bnext = b->rr;
    s->bprev = b->rr->bprev;
    s->bprev->bnext = s;
    b->rr->bprev = s;
}

static void bus_remove(iwarp *w, iw_seg *s)
{
    iw_bus *b = &w->bus[s->bus];
    if (s->bnext == s)
        b->rr = NULL;
    else {
        s->bprev->bnext = s->bnext;
        s->bnext->bprev = s->bprev;
        if (b->rr == s) b->rr = s->bnext;
    }
    s->bnext = s->bprev = NULL;
}

/* Round-robin over the bus's channels; only eligible ones are considered. */
static void bus_kick(iwarp *w, int bi)
{
    iw_bus *b = &w->bus[bi];
    if (b->busy || !b->rr) return;
    iw_seg *s = b->rr;
    do {
        if (eligible(s->im, s)) {
            iw_msg *im = s->im;
            cr_time now = cr_sim_now(w->net->sim);
            b->busy = 1;
            b->rr = s->bnext;
            if (s->k == 0)
                im->inject_left--;
            else {
                im->q[s->k - 1]--;
                at(im, now + CR_IWARP_DEQ_PS, ev_credit, (uint64_t)(s->k - 1));
            }
            if (s->k != im->last) s->credit--;
            s->sent++;
            w->words++;
            at(im, now + CR_IWARP_WORD_PS, ev_bus_done, (uint64_t)s->k);
            return;
        }
        s = s->bnext;
    } while (s != b->rr);
}

static void maybe_free(iw_msg *im)
{
    if (im->done && im->refs == 0) free(im);
}

static void lc_release(iwarp *w, int cell, int dir, int pool)
{
    int key = cell * 4 + dir, p = key * 2 + pool;
    iw_msg *im = w->lcw_h[p];
    if (!im) {
        w->lc_free[key][pool]++;
        return;
    }
    w->lcw_h[p] = im->wnext; /* hand the channel straight to the first waiting header */
    if (!im->wnext) w->lcw_t[p] = NULL;
    at(im, cr_sim_now(w->net->sim), ev_hdr, (uint64_t)im->wait_hop | (1ull << 32));
}

static void path_next(iwarp *w, iw_path *pw);

static void message_done(iwarp *w, iw_msg *im)
{
    cr_msg *m = im->m;
    im->done = 1;
    if (im->pw) {
        im->pw->held = 1;
        im->pw->busy = 0;
        path_next(w, im->pw);
    }
    cr_net_wire_done(w->net, m);
}

static void ev_bus_done(cr_sim *sim, void *obj, uint64_t k)
{
    (void)sim;
    iw_msg *im = obj;
    iwarp *w = IW(im);
    iw_seg *s = &im->seg[k];
    int bi = s->bus;
    im->refs--;
    w->bus[bi].busy = 0;
    if ((int)k == im->last) {
        if (++im->ejected == im->words) message_done(w, im);
    } else {
        im->q[k]++;
        bus_kick(w, im->seg[k + 1].bus);
    }
    if (s->sent == im->words) { /* the end marker has passed this channel */
        bus_remove(w, s);
        if (k >= 1 && (int)k <= im->H && !im->pw)
            lc_release(w, im->cells[k - 1], im->dirs[k - 1], im->pool);
    }
    bus_kick(w, bi);
    maybe_free(im);
}

static void ev_credit(cr_sim *sim, void *obj, uint64_t k)
{
    (void)sim;
    iw_msg *im = obj;
    im->refs--;
    im->seg[k].credit++;
    if (im->seg[k].bnext) bus_kick(IW(im), im->seg[k].bus);
    maybe_free(im);
}

static void establish(iwarp *w, iw_msg *im, int k)
{
    iw_seg *s = &im->seg[k];
    s->est = 1;
    bus_add(w, s);
    bus_kick(w, s->bus);
}

/* Header at hop index `hop` (cell im->cells[hop]); bit 32 of arg: the channel was handed to
 * us by a release. */
static void ev_hdr(cr_sim *sim, void *obj, uint64_t arg)
{
    iw_msg *im = obj;
    iwarp *w = IW(im);
    int hop = (int)(arg & 0xffffffffu), granted = (int)((arg >> 32) & 1);
    cr_time now = cr_sim_now(sim);
    im->refs--;
    if (arg >> 33) {
        src_established(w, im);
        maybe_free(im);
        return;
    }
    if (hop == im->H) { /* destination: the match CAM recognises the address */
        establish(w, im, im->last);
        maybe_free(im);
        return;
    }
    int key = im->cells[hop] * 4 + im->dirs[hop];
    if (!granted) {
        if (w->lc_free[key][im->pool] > 0)
            w->lc_free[key][im->pool]--;
        else {
            int p = key * 2 + im->pool;
            w->lc_waits++;
            im->wait_hop = hop;
            im->wnext = NULL;
            if (w->lcw_t[p])
                w->lcw_t[p]->wnext = im;
            else
                w->lcw_h[p] = im;
            w->lcw_t[p] = im;
            return;
        }
    }
    cr_time dt;
    if (hop == 0) /* channel request, begin marker, one word per corner address */
        dt = CR_IWARP_CHREQ_PS + CR_IWARP_BEGIN_PS + im->corners * CR_IWARP_CORNER_ADDR_PS;
    else
        dt = hop == im->turn_at ? CR_IWARP_TURN_PS : CR_IWARP_FWD_PS;
    if (hop == 0) {
        /* The computation agent may send as soon as the header has left. */
        at(im, now + dt, ev_hdr, (uint64_t)0 | (2ull << 32));
        return;
    }
    establish(w, im, hop + 1);
    at(im, now + dt, ev_hdr, (uint64_t)(hop + 1));
    maybe_free(im);
}

static int sdelta(int a, int b, int n, int wrap)
{
    int d = b - a;
    if (wrap) {
        if (d > n / 2) d -= n;
        if (d < -n / 2) d += n;
    }
    return d;
}

static void build_route(iwarp *w, iw_msg *im, int s, int d)
{
    int sx = s % w->X, sy = s / w->X, dx = sdelta(sx, d % w->X, w->X, w->wrap);
    int dy = sdelta(sy, d / w->X, w->Y, w->wrap), x = sx, y = sy, n = 0;
    for (int i = 0; i < abs(dx); i++, n++) {
        im->cells[n] = y * w->X + x;
        im->dirs[n] = dx > 0 ? IW_XP : IW_XM;
        x = (x + (dx > 0 ? 1 : w->X - 1)) % w->X;
    }
    for (int i = 0; i < abs(dy); i++, n++) {
        im->cells[n] = y * w->X + x;
        im->dirs[n] = dy > 0 ? IW_YP : IW_YM;
        y = (y + (dy > 0 ? 1 : w->Y - 1)) % w->Y;
    }
    im->cells[n] = d;
    im->H = n;
    im->last = n + 1;
    im->corners = (dx && dy) ? 1 : 0;
    im->turn_at = im->corners ? abs(dx) : -1;
    /* segment 0: computation agent -> source queue; k in 1..H: hop k-1; last: eject */
    for (int k = 0; k <= im->last; k++) {
        iw_seg *sg = &im->seg[k];
        memset(sg, 0, sizeof(*sg));
        sg->im = im;
        sg->k = k;
        sg->credit = CR_IWARP_QUEUE_WORDS;
        if (k == 0)
            sg->bus = s * IW_NBUS + IW_INJ;
        else if (k == im->last)
            sg->bus = d * IW_NBUS + IW_EJ;
        else
            sg->bus = im->cells[k - 1] * IW_NBUS + im->dirs[k - 1];
    }
}

/* Header has left the source (arg bit 33): the first two channels carry data from now. */
static void src_established(iwarp *w, iw_msg *im)
{
    establish(w, im, 0);
    establish(w, im, 1);
    at(im, cr_sim_now(w->net->sim) + CR_IWARP_FWD_PS, ev_hdr, 1);
}

static void ev_start_path(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    iw_msg *im = obj;
    iwarp *w = IW(im);
    im->refs--;
    for (int k = 0; k <= im->last; k++) establish(w, im, k);
    maybe_free(im);
}

static void path_next(iwarp *w, iw_path *pw)
{
    iw_msg *im = pw->qh;
    if (!im || pw->busy) return;
    pw->qh = im->wnext;
    if (!pw->qh) pw->qt = NULL;
    pw->busy = 1;
    cr_time now = cr_sim_now(w->net->sim);
    if (pw->held)
        at(im, now + CR_IWARP_MSG_BEGIN_PS, ev_start_path, 0);
    else
        at(im, now, ev_hdr, 0);
}

static iw_path *find_path(iwarp *w, int s, int d)
{
    for (iw_path *p = w->paths[s]; p; p = p->next)
        if (p->dst == d) return p;
    iw_path *p = calloc(1, sizeof(*p));
    if (!p) abort(); /* out of memory mid-run */
    p->src = s;
    p->dst = d;
    p->next = w->paths[s];
    w->paths[s] = p;
    return p;
}

static void iw_wire(cr_net *net, cr_msg *m)
{
    iwarp *w = net->mach;
    iw_msg *im = calloc(1, sizeof(*im));
    if (!im) abort(); /* out of memory mid-run */
    im->m = m;
    im->w = w;
    build_route(w, im, m->wfrom, m->wto);
    im->words = (int64_t)((m->wbytes + 3) / 4) + 1; /* data words + end marker */
    im->inject_left = im->words;
    im->pool = net->cfg.pathways ? 1 : 0;
    w->msgs++;
    if (!net->cfg.pathways) {
        at(im, cr_sim_now(net->sim), ev_hdr, 0);
        return;
    }
    iw_path *pw = find_path(w, m->wfrom, m->wto);
    im->pw = pw;
    im->wnext = NULL;
    if (pw->qt)
        pw->qt->wnext = im;
    else
        pw->qh = im;
    pw->qt = im;
    path_next(w, pw);
}

static int iw_hops(cr_net *net, int a, int b)
{
    iwarp *w = net->mach;
    return abs(sdelta(a % w->X, b % w->X, w->X, w->wrap)) +
           abs(sdelta(a / w->X, b / w->X, w->Y, w->wrap));
}

static int iw_init(cr_net *net, char *err, size_t errlen)
{
    const cr_net_config *c = &net->cfg;
    int X = c->mesh_x > 0 ? c->mesh_x : 8, Y = c->mesh_y > 0 ? c->mesh_y : 8;
    if (c->mesh_x <= 0 && c->mesh_y <= 0 && c->nodes > 0) {
        for (X = 1; X * X < c->nodes; X++) {
        }
        Y = X;
        if (X * Y != c->nodes)
            return snprintf(err, errlen, "iwarp --nodes must be a square; use --mesh XxY"), -1;
    }
    if (X < 1 || Y < 1 || X > CR_IWARP_MAX_SIDE || Y > CR_IWARP_MAX_SIDE || X * Y < 2)
        return snprintf(err, errlen,
                        "iwarp array %dx%d: each side must be 1..%d, and the array 2 cells or "
                        "more",
                        X, Y, CR_IWARP_MAX_SIDE),
               -1;
    iwarp *w = calloc(1, sizeof(*w));
    if (!w) return snprintf(err, errlen, "out of memory"), -1;
    net->mach = w;
    w->net = net;
    w->X = X;
    w->Y = Y;
    w->wrap = c->wrap;
    w->cells = net->nodes = X * Y;
    size_t n = (size_t)w->cells;
    w->bus = calloc(n * IW_NBUS, sizeof(iw_bus));
    w->lc_free = calloc(n * 4, sizeof(*w->lc_free));
    w->lcw_h = calloc(n * 8, sizeof(iw_msg *));
    w->lcw_t = calloc(n * 8, sizeof(iw_msg *));
    w->paths = calloc(n, sizeof(iw_path *));
    if (!w->bus || !w->lc_free || !w->lcw_h || !w->lcw_t || !w->paths)
        return snprintf(err, errlen, "out of memory"), -1;
    for (size_t i = 0; i < n * 4; i++) {
        w->lc_free[i][0] = CR_IWARP_OPEN_PER_DIR;
        w->lc_free[i][1] = CR_IWARP_RES_PER_DIR;
    }
    return 0;
}

static void iw_fini(cr_net *net)
{
    iwarp *w = net->mach;
    for (int i = 0; i < w->cells; i++)
        while (w->paths[i]) {
            iw_path *p = w->paths[i];
            w->paths[i] = p->next;
            free(p);
        }
    free(w->paths);
    free(w->bus);
    free(w->lc_free);
    free(w->lcw_h);
    free(w->lcw_t);
    free(w);
}

static void iw_stats(cr_net *net, cr_net_stats *st)
{
    iwarp *w = net->mach;
    st->wires = w->msgs;
    st->waits = w->lc_waits;
}

const cr_machine_ops cr_iwarp_ops = {
    CR_MACH_IWARP, iw_init,  iw_fini,
    iw_wire,       iw_hops,  NULL,
    NULL,          iw_stats, 4 * CR_SEC / CR_IWARP_WORD_PS,
    NULL,          NULL, /* buses and queues of its own, not a fabric */
};
