/* The sim transport (courier run --sim): every peer's messages go through the
 * launcher's simulator, which decides in virtual time when each arrives
 * (src/run/vsim.c over the network models of src/net). The bytes travel in
 * the simulated mode's segment (src/host/vtime.h): a message is a record in
 * this rank's out ring, stamped with the clock it was sent at; the simulator
 * writes it into the receiver's in ring once the model has delivered it,
 * stamped with its arrival, in the order of arrival.
 *
 * Invariants:
 *  - a message is handed to the engine only once the rank's clock is past its
 *    arrival and the in ring was known complete up to that clock
 *    (t < vt->synced): so what a rank sees at a given virtual time never
 *    depends on how fast the simulator or the other ranks ran;
 *  - arrivals reach the engine in the order the simulator wrote them (the
 *    order of arrival, ties in the model's own order), one at a time, and
 *    each moves the clock by the receive overhead the simulator gave it; a
 *    refused one (no room in the unexpected queue) holds back the later ones
 *    of its source and lane (CR_HDR_LANE), not of others, until the engine's
 *    recv_gen moves;
 *  - send_am always takes a message (the simulator buffers without bound):
 *    the rank's clock moves by the modelled node's send overhead for the
 *    message's class (and copy, for the sizes the node software copies), and
 *    the message is stamped with the clock after it: the time it enters the
 *    network (or the floor cr_vt_use_class left, if later). Nothing a rank
 *    sends can therefore reach the network before its clock plus its look,
 *    which is the simulator's lookahead;
 *  - a message is one-sided traffic (class CR_VT_CLASS_ONESIDED) when its
 *    context is env.onesided_ctx, and then costs the one-sided model's;
 *  - a hardware transaction (cr_vt_hw_mark: the CS-2's Elan) says how much of
 *    it is the transaction's header; an answer is stamped as any message of
 *    its class but costs the rank's clock nothing;
 *  - a message of an open chain (cr_vt_chain_open: a stream's hop) carries
 *    the chain's id, and the empty one that ends it says so;
 *  - when the ranks are contexts of one process (hd->contexts), a message's
 *    bytes never enter the rings: the sender copies them once into an arrival
 *    of its own heap and the record carries that arrival's address (part:
 *    the address's size; total: the message's length, which the simulator
 *    times), which the receiver takes as it is and frees. Else the bytes go
 *    in the records and the receiver gathers them into an arrival;
 *  - arrivals are recycled through small spare lists by size in this rank's
 *    state (arrival_new, arrival_free): glibc's thread cache takes none over
 *    1,032 bytes, and with contexts one rank frees what another allocated.
 * Sends to itself never come here (the self transport serves them). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../host/spares.h"
#include "transport.h"

typedef struct arrival {
    struct arrival *next;
    int src;
    unsigned kls;    /* its spare list (ARRIVAL_KINDS: none) */
    int64_t t, cost; /* arrived at; the receiving CPU's time for it */
    cr_hdr h;
    size_t len, got;
    char data[];
} arrival;

/* Spare arrivals (../host/spares.h), by the room for data they have: 64 << k bytes
 * for list k < ARRIVAL_KINDS, at most ARRIVAL_SPARES of each (a rank that receives
 * more than it sends frees the rest). */
#define ARRIVAL_KINDS 6
#define ARRIVAL_SPARES 4

typedef struct sim_tp {
    cr_tp_env env;
    cr_vt *vt;
    cr_vt_ring *out, *in;
    uint64_t cap, part_max;
    arrival *head, **tail; /* drained from the in ring, not yet handed over */
    arrival *partial;      /* the last one, while its parts come (not in the list yet) */
    /* Per source, the lanes (lane_bit) whose first waiting message the engine
     * refused at recv_gen refused_gen: theirs wait (in order) until it moves;
     * others go on. Made at the first refusal (NULL before: a byte per peer
     * in every rank is N^2 bytes for the job, 256 MiB at 16384 ranks). */
    uint8_t *refused;
    int nrefused;
    uint32_t refused_gen;
    bool byref; /* contexts: records carry an arrival's address (hd->contexts) */
    cr_spares spare;
} sim_tp;

/* An arrival with room for len bytes of data (NULL: out of memory). */
static arrival *arrival_new(sim_tp *s, size_t len)
{
    unsigned k;
    arrival *a = cr_spares_get(&s->spare, sizeof *a, len, &k);
    if (a) a->kls = k;
    return a;
}

static void arrival_free(sim_tp *s, arrival *a)
{
    cr_spares_put(&s->spare, a, a->kls);
}

_Static_assert(sizeof(cr_hdr) == sizeof(((cr_vt_rec *)0)->hdr), "the record holds a header");

/* Move what the in ring holds into our own list (the simulator may write on). */
static void drain(void *arg)
{
    sim_tp *s = arg;
    cr_vt_rec *rec;
    while ((rec = cr_vt_ring_peek(s->in, s->cap))) {
        if (s->byref) { /* the sender's arrival, whole: ours from here */
            arrival *a;
            if (rec->kind != CR_VT_REC_MSG || rec->part != sizeof a)
                s->env.fatal(s->env.owner, "sim", "the simulator's in ring is out of order");
            memcpy(&a, rec->data, sizeof a);
            a->next = NULL;
            a->src = rec->peer;
            a->t = rec->t;
            a->cost = rec->cost;
            memcpy(&a->h, rec->hdr, sizeof a->h);
            a->len = a->got = rec->total;
            cr_vt_ring_take(s->in, rec);
            *s->tail = a;
            s->tail = &a->next;
            continue;
        }
        if (rec->kind == CR_VT_REC_MSG) {
            arrival *a = arrival_new(s, rec->total);
            if (!a) s->env.fatal(s->env.owner, "sim", "out of memory for an arriving message");
            a->next = NULL;
            a->src = rec->peer;
            a->t = rec->t;
            a->cost = rec->cost;
            memcpy(&a->h, rec->hdr, sizeof a->h);
            a->len = rec->total;
            a->got = 0;
            s->partial = a;
        }
        arrival *a = s->partial;
        if (!a || a->got + rec->part > a->len)
            s->env.fatal(s->env.owner, "sim", "the simulator's in ring is out of order");
        memcpy(a->data + a->got, rec->data, rec->part);
        a->got += rec->part;
        cr_vt_ring_take(s->in, rec);
        if (a->got == a->len) {
            *s->tail = a;
            s->tail = &a->next;
            s->partial = NULL;
        }
    }
}

static int64_t next_arrival(void *arg, int64_t from)
{
    sim_tp *s = arg;
    drain(s);
    for (arrival *a = s->head; a; a = a->next)
        if (a->t >= from) return a->t;
    return s->partial ? s->partial->t : CR_VT_NEVER; /* its parts are still coming */
}

static int sim_open(void **ctx, const cr_tp_env *env)
{
    if (!env->vt) return -ENODEV;
    sim_tp *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    s->spare = cr_spares_make(ARRIVAL_KINDS, ARRIVAL_SPARES, SIZE_MAX);
    s->env = *env;
    s->vt = env->vt;
    s->cap = s->vt->hd->ring_bytes;
    s->part_max = cr_vt_part_max(s->cap);
    s->out = cr_vt_ring_of(s->vt->base, env->rank, 0);
    s->in = cr_vt_ring_of(s->vt->base, env->rank, 1);
    s->tail = &s->head;
    s->byref = s->vt->hd->contexts;
    s->vt->drain = drain;
    s->vt->next_arrival = next_arrival;
    s->vt->drain_arg = s;
    *ctx = s;
    return 0;
}

static bool sim_reaches(void *ctx, int peer)
{
    return peer != ((sim_tp *)ctx)->env.rank;
}

static void sim_own(void *ctx, int peer)
{
    (void)ctx;
    (void)peer;
}

static void sim_close(void *ctx)
{
    sim_tp *s = ctx;
    s->vt->drain = NULL;
    s->vt->next_arrival = NULL;
    while (s->head) {
        arrival *a = s->head;
        s->head = a->next;
        free(a);
    }
    free(s->partial);
    free(s->refused);
    cr_spares_clear(&s->spare);
    free(s);
}

/* Room for one record in the out ring: the simulator empties it all the time,
 * so wait for it (yielding the CPU, which it may share with us). */
static cr_vt_rec *reserve(sim_tp *s, uint32_t bytes)
{
    cr_vt_rec *r;
    while (!(r = cr_vt_ring_reserve(s->out, s->cap, bytes))) {
        /* the simulator may be writing to us meanwhile: make room for it */
        drain(s);
        atomic_store(&s->vt->me->need_room, 0);
        cr_vt_ring_sim(s->vt);
        sched_yield();
    }
    return r;
}

static int sim_send(void *ctx, int peer, const cr_hdr *h, const void *payload, size_t len)
{
    sim_tp *s = ctx;
    cr_vt *vt = s->vt;
    int cls = s->env.onesided_ctx >= 0 && h->ctx == s->env.onesided_ctx ? CR_VT_CLASS_ONESIDED
                                                                        : CR_VT_CLASS_MSG;
    if (cls != CR_VT_CLASS_MSG) cr_vt_use_class(vt, cls);
    const cr_vt_cost *c = &vt->hd->cost[cls];
    int64_t cost = c->o_send;
    if (c->eager_max < 0 || (int64_t)len <= c->eager_max) cost += (int64_t)len * c->copy_ps;
    /* stamped with the clock after the overhead (when it enters the wire),
     * but the clock moves there only once the record is out: the simulator
     * reads a clock first and the ring after, so what it has not read yet
     * enters the wire no earlier than that clock plus the rank's look. A
     * broadcast's message is stamped by its group, which moves the clock at
     * its end. */
    cr_vt_bcast bc = {0};
    int64_t t;
    bool grouped = cr_vt_group_stamp(vt, cls, peer, cost, &t, &bc);
    uint32_t ctl = 0;
    bool hw = false; /* a hardware answer: free for this rank */
    if (!grouped && cr_vt_hw_mark(vt, cls, peer, len, &ctl, &hw) && ctl > len) ctl = (uint32_t)len;
    if (!grouped) {
        cr_vt_answer_mark(vt, cls, peer, &bc);
        t = cr_vt_now(vt) + cost;
        if (t < vt->floor) t = vt->floor;
    }
    uint32_t chain_end = 0;
    uint32_t chain = vt->nchains && h->op == CR_OP_EAGER
                         ? cr_vt_chain_mark(vt, peer, h->ctx, h->tag, len, &chain_end)
                         : 0;
    const unsigned char *p = payload;
    arrival *a = NULL; /* with contexts: the receiver's arrival, the record its address */
    if (s->byref) {
        if (!(a = arrival_new(s, len)))
            s->env.fatal(s->env.owner, "sim", "out of memory for a message being sent");
        if (len) memcpy(a->data, payload, len);
        p = (const unsigned char *)&a;
    }
    size_t size = a ? sizeof a : len, off = 0;
    do {
        size_t part = size - off < s->part_max ? size - off : s->part_max;
        cr_vt_rec *r = reserve(s, cr_vt_rec_size(part));
        r->bytes = cr_vt_rec_size(part);
        r->kind = off ? CR_VT_REC_MORE : CR_VT_REC_MSG;
        r->cls = (uint16_t)cls;
        r->peer = peer;
        r->part = (uint32_t)part;
        r->t = t;
        r->total = len;
        r->bc = bc;
        r->chain = chain;
        r->flags = (chain_end ? CR_VT_REC_F_CHAIN_END : 0) | (hw ? CR_VT_REC_F_HW : 0);
        r->ctl = ctl;
        memcpy(r->hdr, h, sizeof *h);
        if (part) memcpy(r->data, p + off, part);
        cr_vt_ring_put(s->out, r);
        off += part;
    } while (off < size);
    if (!grouped && !hw) cr_vt_spend(vt, cost, &vt->me->acct.send);
    vt->me->acct.sent_msgs++;
    vt->me->acct.sent_bytes += len;
    cr_vt_ring_soon(vt);
    cr_vt_mark(vt);
    return 0;
}

/* A's bit in refused[src]: its source's ordinary messages or its lane. */
static inline uint8_t lane_bit(const arrival *a)
{
    return a->h.flags & CR_HDR_LANE ? 2 : 1;
}

static inline bool is_refused(const sim_tp *s, const arrival *a)
{
    return s->refused && (s->refused[a->src] & lane_bit(a));
}

static int sim_poll(void *ctx)
{
    sim_tp *s = ctx;
    drain(s);
    if (s->nrefused && *s->env.recv_gen != s->refused_gen) {
        memset(s->refused, 0, (size_t)s->env.size);
        s->nrefused = 0;
    }
    int n = 0;
    arrival **pp = &s->head, *a, *last = NULL;
    while ((a = *pp) && a->t < s->vt->synced) {
        uint8_t bit = lane_bit(a);
        if (is_refused(s, a) || !s->env.deliver(s->env.owner, a->src, &a->h, a->data, a->len)) {
            if (!s->refused && !(s->refused = calloc((size_t)s->env.size, 1)))
                s->env.fatal(s->env.owner, "sim", "out of memory for the refused messages");
            if (!(s->refused[a->src] & bit)) {
                s->refused[a->src] |= bit;
                s->nrefused++;
                s->refused_gen = *s->env.recv_gen;
            }
            last = a;
            pp = &a->next;
            continue;
        }
        cr_vt_spend(s->vt, a->cost, &s->vt->me->acct.recv);
        s->vt->me->acct.recv_msgs++;
        s->vt->me->acct.recv_bytes += a->len;
        *pp = a->next;
        if (!*pp) s->tail = last ? &last->next : &s->head;
        arrival_free(s, a);
        n++;
    }
    return n;
}

static void sim_flush(void *ctx)
{
    (void)ctx;
}

static int sim_arm(void *ctx)
{
    sim_tp *s = ctx;
    drain(s);
    for (arrival *a = s->head; a && a->t < s->vt->synced; a = a->next)
        if (!is_refused(s, a) || *s->env.recv_gen != s->refused_gen) return 1;
    return 0;
}

static int sim_gone(void *ctx, int peer)
{
    sim_tp *s = ctx;
    return s->env.host ? cr_host_gone(s->env.host, peer) : 0;
}

static size_t sim_max_payload(void *ctx, int peer)
{
    (void)ctx;
    (void)peer;
    return (size_t)1 << 30;
}

const cr_transport cr_transport_sim = {
    .name = "sim",
    .caps = 0,
    .open = sim_open,
    .reaches = sim_reaches,
    .own = sim_own,
    .close = sim_close,
    .send_am = sim_send,
    .poll = sim_poll,
    .flush = sim_flush,
    .arm = sim_arm,
    .peer_gone = sim_gone,
    .max_payload = sim_max_payload,
};
