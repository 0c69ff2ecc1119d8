/* iWarp torus/mesh (seed 002), simulated word by word; its descriptor (hardware only, no
 * node software), its --sim shape and its rows of the validation table are at the end.
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
 * Bursts. Word by word costs about five events per word and hop. A message alone in the
 * network, once its pipeline runs at one word per 100 ns on every bus with no channel short of
 * input or credit (two inequalities per hop on the channels' latest start times:
 * burst_ready), goes on so to its end marker: every later word's times follow from each
 * channel's latest start. It is then a burst (burst_try): its pending word events are dropped
 * (the message's generation moves on: a stale event only drops its reference), and one event
 * per channel marks the end marker passing it, at the time and in the place among the
 * events of that picosecond that the word-by-word run gives. A message wired meanwhile turns
 * the burst back into words at that moment (burst_undo: every count, queue, credit and word
 * or dequeue signal in flight as the word-by-word run has them then). Alone, a burst gives
 * the word-by-word run's times exactly (a 64 KiB ping-pong under --sim: 28.2 s -> 1.3 s, the
 * same virtual times). Undone, its events in flight are scheduled in channel order, where the
 * word-by-word run had them in the order of their words' starts: when the new message's
 * channels later contend with them for a bus, a tie can go the other way, and a word then
 * crosses a period earlier or later (docs/sim.md: in 46 of 192 mixed runs, the slowest
 * message's latency by up to 83 ns). COURIER_IWARP_WORDS=1 runs word by word throughout.
 *
 * Chains (cr_msg.chain: a stream's hop under courier run --sim). The first message of a chain
 * sets up a pathway on the reservation pool as any message's header does; each later one adds
 * its words to the same channels (no header, no markers) and is delivered when its last word
 * is ejected; the one marked CR_MSG_CHAIN_END adds the end marker, which releases the channels.
 * An open chain whose words have all passed keeps its channels, idle (not eligible). A chain
 * bursts only through its last message's words, and an open one turns back into words when
 * the burst's last word has come (burst_undo: a burst keeps no queues or credits). A chain
 * whose route has no reservation channel free when its next message comes is not set up:
 * that message goes as any other (res_free).
 *
 * Invariants: queue occupancy <= 8; a message's memory is freed only when it is delivered and
 * none of its events is pending (refs == 0); a bursting message's buses hold only its own
 * channels and are marked busy, so no arbiter runs on them.
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
    cr_time st[4]; /* start times of its latest words: word j at st[j & 3] */
    cr_time bt;    /* burst: the start of word bn - 1, every later word P after the one before */
    int64_t bn;
    struct iw_seg *bnext, *bprev;
} iw_seg;

/* A chain's message not yet delivered: it is when word `end` of the chain has been ejected. */
typedef struct iw_part {
    cr_msg *m;
    int64_t end;
    struct iw_part *next;
} iw_part;

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
    uint64_t gen; /* events of another generation are stale */
    /* a chain (cr_msg.chain: a stream's hop): its key, whether it still takes messages (its
     * end marker is not in yet), its messages not yet delivered, the next open chain */
    uint64_t chain;
    int open;
    iw_part *parts, **parts_tail;
    iw_msg *cnext;
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
    int no_bursts;  /* COURIER_IWARP_WORDS=1 */
    int64_t active; /* messages in the network: wired and not yet delivered */
    iw_msg *burst;  /* the message in a burst, if any (it is alone in the network) */
    iw_msg *chains; /* open chains (their end marker not yet sent) */
};

static void ev_bus_done(cr_sim *sim, void *obj, uint64_t k);
static void ev_credit(cr_sim *sim, void *obj, uint64_t k);
static void ev_hdr(cr_sim *sim, void *obj, uint64_t hop);
static void ev_start_path(cr_sim *sim, void *obj, uint64_t arg);
static void ev_tail(cr_sim *sim, void *obj, uint64_t k);
static void src_established(iwarp *w, iw_msg *im);
static void burst_undo(iwarp *w, iw_msg *im);

#define P_WORD CR_IWARP_WORD_PS
/* A word event's argument: the channel and the message's generation. */
#define GEN_ARG(im, k) ((uint64_t)(k) | ((im)->gen << 8))
#define ARG_K(a) ((int)((a)&0x7f))
#define ARG_GEN(a) ((a) >> 8)
#define TAIL_START 0x80 /* ev_tail: the last word starts (channels number under 0x80) */

static iwarp *IW(iw_msg *im)
{
    return im->w;
}

static void at(iw_msg *im, cr_time t, cr_event_fn fn, uint64_t arg)
{
    im->refs++;
    cr_sim_at(im->w->net->sim, t, fn, im, arg);
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
                at(im, now + CR_IWARP_DEQ_PS, ev_credit, GEN_ARG(im, s->k - 1));
            }
            if (s->k != im->last) s->credit--;
            s->st[s->sent & 3] = now;
            s->sent++;
            w->words++;
            at(im, now + P_WORD, ev_bus_done, GEN_ARG(im, s->k));
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
    w->active--;
    if (im->pw) {
        im->pw->held = 1;
        im->pw->busy = 0;
        path_next(w, im->pw);
    }
    if (!im->chain) cr_net_wire_done(w->net, m);
}

/* A word (or the end marker) reached the destination's computation agent: a message whose
 * last word it is has arrived (a chain's, each as its last word comes). */
static void ejected(iwarp *w, iw_msg *im)
{
    im->ejected++;
    while (im->parts && im->parts->end <= im->ejected) {
        iw_part *p = im->parts;
        im->parts = p->next;
        if (!im->parts) im->parts_tail = &im->parts;
        cr_net_wire_done(w->net, p->m);
        free(p);
    }
    if (!im->open && im->ejected == im->words) message_done(w, im);
}

static void burst_try(iwarp *w, iw_msg *im);

/* Channel k's word has crossed its bus (a word event, or a burst's last word). */
static void bus_done(iwarp *w, iw_msg *im, int k)
{
    iw_seg *s = &im->seg[k];
    int bi = s->bus;
    w->bus[bi].busy = 0;
    if (k == im->last) {
        ejected(w, im);
    } else {
        im->q[k]++;
        bus_kick(w, im->seg[k + 1].bus);
    }
    if (s->sent == im->words && !im->open) { /* the end marker has passed this channel */
        bus_remove(w, s);
        if (k >= 1 && k <= im->H && !im->pw)
            lc_release(w, im->cells[k - 1], im->dirs[k - 1], im->pool);
    }
    bus_kick(w, bi);
}

static void ev_bus_done(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    iw_msg *im = obj;
    im->refs--;
    if (ARG_GEN(arg) == im->gen) {
        bus_done(IW(im), im, ARG_K(arg));
        if (ARG_K(arg) == im->last && !im->done) burst_try(IW(im), im);
    }
    maybe_free(im);
}

static void ev_credit(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    iw_msg *im = obj;
    im->refs--;
    if (ARG_GEN(arg) == im->gen) {
        int k = ARG_K(arg);
        im->seg[k].credit++;
        if (im->seg[k].bnext) bus_kick(IW(im), im->seg[k].bus);
    }
    maybe_free(im);
}

/* ---- bursts ------------------------------------------------------------------------ */

/* The start time of channel s's latest word. */
static cr_time latest(const iw_seg *s)
{
    return s->st[(s->sent - 1) & 3];
}

/* The start time of channel s's word j, in a burst (j >= bn - 4: older ones are not kept). */
static cr_time start_of(const iw_seg *s, int64_t j)
{
    return j >= s->bn ? s->bt + (j - s->bn + 1) * P_WORD : s->st[j & 3];
}

/* Can im run as a burst from now (see the head of the file)? Each channel has its bus to
 * itself, has started a word and has words left; with L the index of a channel's latest word
 * and t its start, every later word starts P after the one before when, for each hop, the
 * input is there in time (t[k-1] - t[k] + (L[k] - L[k-1] + 1) P <= 0: the word arrives from
 * upstream by the time the channel's bus is free) and so is the credit (t[k+1] - t[k] + (L[k]
 * - L[k+1] - 8) P + DEQ <= 0: the word eight back has left the next queue and its dequeue
 * signal has come back). Upstream of channel 0 the source always has the words. */
static int burst_ready(const iw_msg *im)
{
    for (int k = 0; k <= im->last; k++) {
        const iw_seg *s = &im->seg[k];
        if (!s->est || s->bnext != s || s->sent < 1 || s->sent >= im->words) return 0;
    }
    for (int k = 0; k <= im->last; k++) {
        const iw_seg *s = &im->seg[k];
        cr_time t = latest(s);
        if (k > 0) {
            const iw_seg *u = &im->seg[k - 1];
            if (latest(u) - t + (s->sent - u->sent + 1) * P_WORD > 0) return 0;
        }
        if (k < im->last) {
            const iw_seg *d = &im->seg[k + 1];
            if (latest(d) - t + (s->sent - d->sent - CR_IWARP_QUEUE_WORDS) * P_WORD +
                    CR_IWARP_DEQ_PS >
                0)
                return 0;
        }
    }
    return 1;
}

#define BURST_MIN_WORDS 16 /* fewer left: not worth the bookkeeping */

static void burst_try(iwarp *w, iw_msg *im)
{
    if (w->no_bursts || w->burst || w->active != 1 || im->words - im->ejected < BURST_MIN_WORDS ||
        !burst_ready(im))
        return;
    /* a chain's: only its last message's words (the burst delivers nothing on the way) */
    if (im->chain && (!im->parts || im->parts->next || im->parts->end != im->words)) return;
    w->burst = im;
    im->gen++; /* the word events pending are stale from here */
    for (int k = 0; k <= im->last; k++) {
        iw_seg *s = &im->seg[k];
        s->bn = s->sent;
        s->bt = latest(s);
        w->bus[s->bus].busy = 1; /* no arbiter runs on it while the burst lasts */
        /* the end marker passes this channel when its last word has crossed; scheduled
         * when that word starts, as word by word (an event at the same picosecond from
         * elsewhere, a rank's, keeps its place before or after it) */
        at(im, start_of(s, im->words - 1), ev_tail, GEN_ARG(im, k) | TAIL_START);
    }
}

/* The end marker passes channel k of a burst: its last word crosses the bus. */
static void ev_tail(cr_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    iw_msg *im = obj;
    iwarp *w = IW(im);
    im->refs--;
    if (ARG_GEN(arg) == im->gen && (arg & TAIL_START)) {
        at(im, cr_sim_now(sim) + P_WORD, ev_tail, arg & ~(uint64_t)TAIL_START);
    } else if (ARG_GEN(arg) == im->gen && im->open) {
        /* a chain that goes on: its buses stay marked busy until its last word has come,
         * then it is words again (burst_undo rebuilds the counts, queues and credits that a
         * burst does not keep, and that its next words need) */
        if (ARG_K(arg) == im->last) burst_undo(w, im);
    } else if (ARG_GEN(arg) == im->gen) {
        int k = ARG_K(arg);
        iw_seg *s = &im->seg[k];
        w->words += (uint64_t)(im->words - s->sent);
        s->sent = im->words;
        if (k == im->last) {
            im->ejected = im->words - 1;
            w->burst = NULL;
        }
        bus_done(w, im, k); /* (queues and credits of a burst are not kept: not needed) */
    }
    maybe_free(im);
}

/* Back to words at the present moment: each channel's counts, its queue, its credits, and
 * the events in flight (a word on the bus, dequeue signals on their way) as the word-by-word
 * run has them now. Events at this very moment stay pending, as they would be. */
static void burst_undo(iwarp *w, iw_msg *im)
{
    cr_time now = cr_sim_now(w->net->sim);
    w->burst = NULL;
    im->gen++; /* the tails are stale */
    int64_t sent[IW_MAXSEG] = {0}, arrived[IW_MAXSEG] = {0};
    for (int k = 0; k <= im->last; k++) {
        iw_seg *s = &im->seg[k];
        if (!s->bnext) { /* the end marker passed it already */
            sent[k] = arrived[k] = im->words;
            continue;
        }
        int64_t n = s->bn; /* words started before now */
        if (now > s->bt) n += (now - s->bt - 1) / P_WORD;
        if (n > im->words) n = im->words;
        w->words += (uint64_t)(n - s->sent);
        sent[k] = s->sent = n;
        for (int64_t j = n - 4; j < n; j++) /* keep the latest start times */
            if (j >= 0) s->st[j & 3] = start_of(s, j);
        cr_time last = latest(s);
        arrived[k] = last + P_WORD < now ? n : n - 1;
        w->bus[s->bus].busy = last + P_WORD >= now;
        if (w->bus[s->bus].busy) at(im, last + P_WORD, ev_bus_done, GEN_ARG(im, k));
    }
    im->inject_left = im->words - sent[0];
    im->ejected = arrived[im->last];
    for (int k = 0; k < im->last; k++) {
        iw_seg *s = &im->seg[k], *d = &im->seg[k + 1];
        im->q[k] = (int)(arrived[k] - sent[k + 1]);
        int64_t back = sent[k + 1]; /* dequeue signals come back for every word taken... */
        if (d->bnext) /* (past a channel the end marker passed, credits upstream matter no more) */
            for (int64_t j = sent[k + 1] - 1; j >= 0 && j >= sent[k + 1] - 4; j--) {
                cr_time due = start_of(d, j) + CR_IWARP_DEQ_PS;
                if (due < now) break;
                back--; /* ... but those still on their way */
                at(im, due, ev_credit, GEN_ARG(im, k));
            }
        s->credit = CR_IWARP_QUEUE_WORDS - (int)sent[k] + (int)back;
    }
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

static void chain_add(iw_msg *im, cr_msg *m)
{
    iw_part *p = malloc(sizeof(*p));
    if (!p) abort(); /* out of memory mid-run */
    int64_t words = (int64_t)((m->wbytes + 3) / 4) + (m->flags & CR_MSG_CHAIN_END ? 1 : 0);
    im->words += words;
    im->inject_left += words;
    *p = (iw_part){m, im->words, NULL};
    *im->parts_tail = p;
    im->parts_tail = &p->next;
    if (m->flags & CR_MSG_CHAIN_END) im->open = 0;
}

/* The next message of an open chain: its words join the chain's logical channels behind the
 * ones there (no header, no markers: the stream flows on its pathway), the last one with the
 * end marker, which dismantles it. True when m had an open chain. */
static int chain_more(iwarp *w, cr_msg *m)
{
    iw_msg **pp = &w->chains;
    while (*pp && (*pp)->chain != m->chain) pp = &(*pp)->cnext;
    iw_msg *im = *pp;
    if (!im) return 0;
    if (w->burst == im) burst_undo(w, im); /* its words go on one by one from here */
    chain_add(im, m);
    if (!im->open) *pp = im->cnext;
    w->msgs++;
    if (im->seg[0].est) bus_kick(w, im->seg[0].bus);
    return 1;
}

/* Has every hop of im's route a logical channel of the reservation pool free now? A chain
 * that would wait for one (the program keeps more streams open out of a cell in one
 * direction than the pool has channels, and may wait for the words of the one that waits
 * before it closes another) is carried as messages of their own, on the open pool, as long
 * as none is free when its next message comes: its words then never wait for a stream to
 * close, as a real run's do not. */
static int res_free(const iwarp *w, const iw_msg *im)
{
    for (int h = 0; h < im->H; h++)
        if (w->lc_free[im->cells[h] * 4 + im->dirs[h]][1] <= 0) return 0;
    return 1;
}

static void iw_wire(cr_net *net, cr_msg *m)
{
    iwarp *w = net->mach;
    if (m->chain && chain_more(w, m)) return;
    iw_msg *im = calloc(1, sizeof(*im));
    if (!im) abort(); /* out of memory mid-run */
    im->m = m;
    im->w = w;
    build_route(w, im, m->wfrom, m->wto);
    im->words = (int64_t)((m->wbytes + 3) / 4) + 1; /* data words + end marker */
    im->inject_left = im->words;
    im->pool = net->cfg.pathways ? 1 : 0;
    w->msgs++;
    if (w->burst) burst_undo(w, w->burst); /* it is no longer alone */
    w->active++;
    if (m->chain && res_free(w, im)) { /* a stream's first message sets up its pathway */
        im->chain = m->chain;
        im->open = 1;
        im->pool = 1;
        im->words = im->inject_left = 0;
        im->parts_tail = &im->parts;
        chain_add(im, m);
        if (im->open) {
            im->cnext = w->chains;
            w->chains = im;
        }
        at(im, cr_sim_now(net->sim), ev_hdr, 0);
        return;
    }
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
    const char *words = getenv("COURIER_IWARP_WORDS");
    w->no_bursts = words && *words == '1';
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

static void iwarp_validate(cr_valid_ctx *v)
{
    cr_net_config c = cr_valid_config(CR_MACH_IWARP, 0, "hw");
    c.mesh_x = c.mesh_y = 8;
    cr_valid_add(v, "iWarp one logical channel uses the full bus", "MB/s", 40,
                 cr_valid_bw_MBps(&c, 0, 1, 1 << 18), CR_CMP_NEAR);
    double h3 =
        cr_valid_echo_us(&c, 0, 3, 0, 2) * 1000 - 100; /* minus the end marker's last word */
    cr_valid_add(v, "iWarp header, 3 cells straight (150+100+3x200)", "ns", 850, h3, CR_CMP_NEAR);
    double hc = cr_valid_echo_us(&c, 0, 8 * 2 + 3, 0, 2) * 1000 - 100;
    cr_valid_add(v, "iWarp header, 3+2 cells, 1 corner (+50 addr +50 turn)", "ns", 1350, hc,
                 CR_CMP_NEAR);
    /* two channels multiplexed on cell 1's XRight bus */
    cr_traffic t;
    cr_traffic_defaults(&t);
    t.pattern = CR_PAT_SHIFT;
    t.shift = 2;
    t.bytes = 1 << 16;
    t.count = 1;
    t.window = 1;
    cr_net_config m = c;
    m.mesh_x = 4;
    m.mesh_y = 1;
    m.wrap = 0;
    m.nodes = 0;
    cr_net_result r;
    char err[160];
    /* cells 0->2 and 1->3 share bus 1->2; 2->0 and 3->1 share bus 2->1 (mesh, no wrap) */
    if (cr_net_run(&m, &t, &r, NULL, NULL, err, sizeof(err)) == 0)
        cr_valid_add(v, "iWarp two active channels share a bus: each gets", "MB/s", 20,
                     (double)t.bytes / r.lat_max_us, CR_CMP_NEAR);
}

/* --sim: the smallest near-square array that holds n ranks (the model has 2 cells or more), a
 * torus (seed 002), as courier netsim's default */
static void iwarp_shape(cr_net_config *c, int n)
{
    int m = n < 2 ? 2 : n, x = 1;
    while (x * x < m) x++;
    c->mesh_x = x;
    c->mesh_y = (m + x - 1) / x;
    c->wrap = 1;
}

/* Hardware only: no node software model. Buses and queues of its own, not a fabric. */
const cr_machine cr_machine_iwarp = {
    .name = "iwarp",
    .title = "iWarp, 2-D torus (or mesh) of cells (seed 002)",
    .sim = true,
    .sim_sw = "hw",
    .cpu = 500,     /* 20 MHz iWarp cell */
    .chains = true, /* a stream's words on its pathway */
    .sim_shape = iwarp_shape,
    .validate = iwarp_validate,
    .init = iw_init,
    .fini = iw_fini,
    .wire = iw_wire,
    .hops = iw_hops,
    .stats = iw_stats,
    .inject_bps = 4 * CR_SEC / CR_IWARP_WORD_PS,
};
