/* Link reservation engine shared by the circuit-switched hypercube and the wormhole fat trees.
 *
 * A worm's header takes its path's links in order; a busy link queues the header (FIFO, or
 * round-robin over the requesting input ports as in the Direct-Connect arbiters) while the
 * worm keeps every link it already holds: hold-and-wait, which is exactly what makes routing
 * order matter for deadlock. Once the header is at the destination and the sink accepts, the
 * whole timeline of the data is known, so releases are lazy: a link records the time its tail
 * passes (free_at) and costs an event only when some header is waiting for it.
 *
 * Invariants: a link is free iff holder == NULL or free_at <= now; a link with waiters and a
 * known free_at has exactly one wake event pending; a worm waits on at most one link; nother
 * counts the waiters whose input port is not port0.
 */
#include <stdlib.h>

#include "net_internal.h"

int cr_fabric_init(cr_fabric *f, cr_sim *sim, size_t nlinks)
{
    f->sim = sim;
    f->nlinks = nlinks;
    f->links = calloc(nlinks ? nlinks : 1, sizeof(cr_link));
    if (!f->links) return -1;
    for (size_t i = 0; i < nlinks; i++) f->links[i].last_port = -1;
    return 0;
}

void cr_fabric_fini(cr_fabric *f)
{
    free(f->links);
    for (size_t i = 0; i < f->nall; i++) free(f->all[i]);
    free(f->all);
}

cr_worm *cr_worm_alloc(cr_fabric *f)
{
    cr_worm *w = f->free_worms;
    if (w) {
        f->free_worms = w->wnext;
    } else {
        if (f->nall == f->capall) {
            f->capall = f->capall ? 2 * f->capall : 256;
            f->all = realloc(f->all, f->capall * sizeof(cr_worm *));
        }
        if (!f->all || !(w = malloc(sizeof(*w))))
            abort(); /* the simulator cannot continue without memory */
        f->all[f->nall++] = w;
    }
    w->n = w->hop = 0;
    w->waiting_on = -1;
    w->wnext = NULL;
    w->owner = NULL;
    w->tag = 0;
    w->fab = f;
    return w;
}

void cr_worm_free(cr_fabric *f, cr_worm *w)
{
    w->wnext = f->free_worms;
    f->free_worms = w;
}

static void header_arrive(cr_sim *sim, void *obj, uint64_t arg);
static void link_wake(cr_sim *sim, void *obj, uint64_t arg);

/* The link a worm's header comes in by to the link it asks for (-1: from its node). */
static int32_t in_port(const cr_worm *w)
{
    return w->hop ? w->links[w->hop - 1] : -1;
}

static int link_free(const cr_link *l, cr_time now)
{
    return l->holder == NULL || l->free_at <= now;
}

static void grant(cr_fabric *f, cr_worm *w, cr_link *l)
{
    cr_time now = cr_sim_now(f->sim);
    l->holder = w;
    l->free_at = CR_TIME_NEVER;
    l->since = now;
    l->last_port = in_port(w);
    w->waiting_on = -1;
    if (w->hop == 0) w->t_acq0 = now;
    /* Crossing into the next router costs the routing time; the last link enters the node. */
    cr_time dt = (w->hop + 1 < w->n) ? f->hop_ps : 0;
    cr_sim_at(f->sim, now + dt, header_arrive, w, 0);
}

/* Follow holder -> link it waits for -> holder ... ; a return to w is a wait-for cycle. */
static int closes_cycle(cr_fabric *f, cr_worm *w, cr_link *l)
{
    cr_worm *cur = l->holder;
    for (size_t steps = 0; cur && steps < f->nlinks; steps++) {
        if (cur == w) return 1;
        if (cur->waiting_on < 0) return 0;
        cr_link *nl = &f->links[cur->waiting_on];
        if (nl->free_at != CR_TIME_NEVER) return 0;
        cur = nl->holder;
    }
    return 0;
}

static void ensure_wake(cr_fabric *f, cr_link *l)
{
    if (l->wh && !l->wake_pending && l->free_at != CR_TIME_NEVER) {
        l->wake_pending = 1;
        cr_time t = l->free_at > cr_sim_now(f->sim) ? l->free_at : cr_sim_now(f->sim);
        cr_sim_at(f->sim, t, link_wake, f, (uint64_t)(l - f->links));
    }
}

static void request(cr_fabric *f, cr_worm *w)
{
    int32_t li = w->links[w->hop];
    cr_link *l = &f->links[li];
    if (link_free(l, cr_sim_now(f->sim)) && !l->wh) {
        grant(f, w, l);
        return;
    }
    f->waits++;
    w->waiting_on = li;
    w->wnext = NULL;
    int32_t port = in_port(w);
    if (l->wt) {
        l->wt->wnext = w;
        l->nother += port != l->port0;
    } else {
        l->wh = w;
        l->port0 = port;
        l->nother = 0;
    }
    l->wt = w;
    if (++l->nwait > f->max_wait) f->max_wait = l->nwait;
    if (f->detect_deadlock && closes_cycle(f, w, l)) {
        f->deadlocks++;
        cr_sim_stop(f->sim);
    }
    ensure_wake(f, l);
}

/* Round-robin: the waiter whose input port comes next after the last one granted
 * (the first of that port's, which wait in order). When every waiter came in by
 * one port that is the queue's head, found without a walk: a flood of one
 * sender queues its whole backlog on one link. */
static cr_worm *pick_waiter(cr_fabric *f, cr_link *l)
{
    cr_worm *best = l->wh, *bprev = NULL;
    if (f->rr && l->nother) {
        uint32_t bestd = UINT32_MAX;
        for (cr_worm *p = NULL, *c = l->wh; c; p = c, c = c->wnext) {
            int32_t port = in_port(c);
            uint32_t d = (uint32_t)(port - l->last_port - 1);
            if (d < bestd) bestd = d, best = c, bprev = p;
        }
    }
    if (bprev)
        bprev->wnext = best->wnext;
    else
        l->wh = best->wnext;
    if (l->wt == best) l->wt = bprev;
    l->nwait--;
    l->nother -= in_port(best) != l->port0;
    return best;
}

static void link_wake(cr_sim *sim, void *obj, uint64_t arg)
{
    cr_fabric *f = obj;
    cr_link *l = &f->links[arg];
    l->wake_pending = 0;
    if (!l->wh) return;
    if (!link_free(l, cr_sim_now(sim))) {
        ensure_wake(f, l);
        return;
    }
    grant(f, pick_waiter(f, l), l);
}

static void worm_arrived(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    cr_worm *w = obj;
    w->fab->arrived(w->fab->ctx, w);
}

/* The header is at the destination and the sink accepts: lay out the data's timeline. */
static void go(cr_fabric *f, cr_worm *w)
{
    cr_time now = cr_sim_now(f->sim);
    cr_time dur = cr_xfer_time(w->bytes, w->rate);
    cr_time n = w->n, tail;
    w->t_h = now;
    if (f->circuit)
        tail = now + n * f->status_ps + dur + n * f->pipe_ps;
    else
        tail = now + dur;
    for (int i = 0; i < w->n; i++) {
        cr_link *l = &f->links[w->links[i]];
        cr_time rel = tail - (n - 1 - i) * f->pipe_ps;
        l->free_at = rel > now ? rel : now;
        l->busy += l->free_at - l->since;
        l->bytes += w->bytes;
        ensure_wake(f, l);
    }
    if (f->src_free) f->src_free(f->ctx, w, f->links[w->links[0]].free_at);
    cr_sim_at(f->sim, tail, worm_arrived, w, 0);
}

static void sink_go_ev(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    go((cr_fabric *)obj, (cr_worm *)(uintptr_t)arg);
}

void cr_fabric_sink_go(cr_fabric *f, cr_worm *w)
{
    cr_sim_at(f->sim, cr_sim_now(f->sim), sink_go_ev, f, (uint64_t)(uintptr_t)w);
}

static void header_arrive(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    (void)arg;
    cr_worm *w = obj;
    cr_fabric *f = w->fab;
    w->hop++;
    if (w->hop < w->n) {
        request(f, w);
        return;
    }
    w->waiting_on = -1;
    if (!f->sink_ready || f->sink_ready(f->ctx, w)) go(f, w);
}

void cr_fabric_start(cr_fabric *f, cr_worm *w)
{
    f->worms++;
    w->hop = 0;
    w->waiting_on = -1;
    request(f, w);
}
