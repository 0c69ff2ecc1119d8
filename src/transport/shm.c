/* Shared-memory transport: the peers on this host, through the shm region of
 * the host segment (src/host), which the launcher creates with memfd_create and
 * every rank inherits, so nothing can be left in /dev/shm.
 *
 * Layout: the region's head, one inbox per receiver, then the place of two
 * channels per ordered pair (sender, receiver): the ordinary one and the lane
 * (messages flagged CR_HDR_LANE: a reserved stream's); the doorbells and pids
 * are the host segment's rank records. A channel is a single-producer,
 * single-consumer ring of 64-byte cells plus a byte ring for payloads that do
 * not fit in a cell.
 * Invariants:
 *  - a channel is opened by its sender on its first send: it takes the
 *    channel's memory (cr_host_reserve), then announces itself in the
 *    receiver's inbox; each side touches the channel's pages once when it
 *    takes the channel up (cr_host_touch), not one page per 4 KiB of traffic;
 *    a receiver polls only the channels announced to it, so memory and the
 *    cost of a poll grow with the peers a rank hears from, not with the job's
 *    size;
 *  - a receiver looks at its lanes before its ordinary channels (poll, peek),
 *    and a refused message stalls only its own channel: a lane message never
 *    waits behind the ordinary messages of its pair, and each channel keeps
 *    its own order;
 *  - only the sender writes cells and the data ring; only the receiver writes the
 *    channel's first line (head_pub, dhead_pub: what it has consumed);
 *  - a cell is published by storing seq = position + 1 with release order after
 *    everything else in the cell and its payload is written; the receiver reads
 *    seq with acquire order, so one cache line carries a small message;
 *  - the receiver publishes consumed positions lazily (every half ring, when
 *    a poll has read a channel dry, and before it idles), so the two sides do
 *    not bounce a line per message: the sender reads them only when it finds
 *    the ring full;
 *  - a sender stores its cell, then kicks the receiver's host doorbell
 *    (cr_host_kick: a fence, then a system call only if it sleeps); a sleeper
 *    announces itself, then looks at its rings again (arm) before it waits: no
 *    wake-up is lost;
 *  - only peers this transport owns are polled or sent to. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shm_layout.h"
#include "transport.h"

typedef struct shm_tx {
    shm_chan *ch; /* NULL until the first send opens it */
    unsigned char *data;
    uint32_t tail, head_cache, dtail, dhead_cache;
    int blocked; /* last send_am said CR_EAGAIN */
} shm_tx;

typedef struct shm_rx {
    shm_chan *ch; /* NULL until the sender announces it */
    unsigned char *data;
    uint32_t head, dhead, head_pub, dhead_pub;
    uint32_t stalled; /* *recv_gen + 1 while the engine refuses the head cell */
} shm_rx;

/* The channels a receiver hears on, in the order they were announced, and where
 * its next poll starts. */
typedef struct shm_list {
    int *ch; /* channel numbers: index in rx (peer, or nranks + peer for a lane) */
    int n;
    int rr;
} shm_list;

typedef struct shm_state {
    cr_tp_env env;
    cr_host *host;
    shm_region *reg;
    uint32_t ncells, dbytes;
    shm_tx *tx;              /* 2 * nranks: [peer] the ordinary channel, [nranks + peer] the lane */
    shm_rx *rx;              /* likewise */
    shm_inbox *inbox;        /* every receiver's; ours is inbox[rank] */
    _Atomic uint32_t *slots; /* 2 * nranks per receiver */
    uint32_t inbox_head;     /* slots of ours read so far */
    unsigned char *host_owned; /* per rank: this transport serves it */
    shm_list lanes, chans;     /* the lanes and the ordinary channels we hear on */
    int *outs;                 /* the channels (index in tx) we have sent on */
    int nouts;
    /* the message peek returned: its channel (index in rx), the list and the
     * place in it, and the data-ring position once it is taken */
    int peek_c, peek_k;
    shm_list *peek_l;
    uint32_t peek_dend;
} shm_state;

#define LANE_BIT 0x80000000u /* an announcement of a lane */

static inline int peer_of(const shm_state *s, int c)
{
    return c < s->env.size ? c : c - s->env.size;
}

/* Channel c (peer, or nranks + peer for the lane) from 'from' to 'to'. */
static shm_chan *chan_of(shm_state *s, int from, int to, bool lane)
{
    char *p = (char *)s->reg + s->reg->chan_off;
    size_t n = s->reg->nranks;
    return (shm_chan *)(p +
                        (((lane ? n : 0) + (size_t)from) * n + (size_t)to) * s->reg->chan_stride);
}

/* Open our channel (or lane) to peer: take its memory, then tell the peer (its inbox). */
static void open_tx(shm_state *s, int peer, bool lane)
{
    shm_chan *ch = chan_of(s, s->env.rank, peer, lane);
    int rc = cr_host_reserve(s->host, ch, s->reg->chan_stride);
    if (rc) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "no memory for a shared-memory channel to rank %d (%s): this host is out of "
                 "memory; run fewer ranks per host",
                 peer, strerror(-rc));
        s->env.fatal(s->env.owner, "send", msg);
    }
    /* the pages' first writes here (the channel is ours until announced) */
    cr_host_touch(ch, s->reg->chan_stride, true);
    int c = lane ? s->env.size + peer : peer;
    s->tx[c].ch = ch;
    s->tx[c].data = (unsigned char *)&ch->cells[s->ncells];
    s->outs[s->nouts++] = c;
    uint32_t k = atomic_fetch_add_explicit(&s->inbox[peer].tail, 1, memory_order_relaxed);
    atomic_store_explicit(&s->slots[(size_t)peer * 2 * s->reg->nranks + k],
                          ((uint32_t)s->env.rank + 1) | (lane ? LANE_BIT : 0),
                          memory_order_release);
}

/* Take in the senders announced since we last looked. */
static void read_inbox(shm_state *s)
{
    uint32_t tail = atomic_load_explicit(&s->inbox[s->env.rank].tail, memory_order_relaxed);
    while (s->inbox_head != tail) {
        _Atomic uint32_t *slot =
            &s->slots[(size_t)s->env.rank * 2 * s->reg->nranks + s->inbox_head];
        uint32_t v = atomic_load_explicit(slot, memory_order_acquire);
        if (!v) break; /* taken, not yet written */
        bool lane = v & LANE_BIT;
        int p = (int)(v & ~LANE_BIT) - 1, c = lane ? s->env.size + p : p;
        if (p < 0 || p >= s->env.size || p == s->env.rank || s->rx[c].ch || !s->host_owned[p]) {
            char msg[96];
            snprintf(msg, sizeof msg, "a bad announcement (%u) in rank %d's inbox (corrupt peer?)",
                     v, s->env.rank);
            s->env.fatal(s->env.owner, "progress", msg);
        }
        s->rx[c].ch = chan_of(s, p, s->env.rank, lane);
        s->rx[c].data = (unsigned char *)&s->rx[c].ch->cells[s->ncells];
        /* the pages' first reads here, now rather than in the traffic */
        cr_host_touch(s->rx[c].ch, s->reg->chan_stride, false);
        shm_list *l = lane ? &s->lanes : &s->chans;
        l->ch[l->n++] = c;
        s->inbox_head++;
    }
}

static inline void kick(shm_state *s, int peer)
{
    cr_host_kick(s->host, peer);
}

/* The host segment stays: the engine detaches it (peers see us gone there). */
static void shm_close(void *ctx)
{
    shm_state *s = ctx;
    free(s->tx);
    free(s->rx);
    free(s->lanes.ch);
    free(s->chans.ch);
    free(s->outs);
    free(s->host_owned);
    free(s);
}

static int shm_open(void **ctx, const cr_tp_env *env)
{
    cr_host *h = env->host;
    if (!h || !h->region || h->region_bytes < sizeof(shm_region)) return -ENODEV;
    shm_region *reg = h->region;
    if (reg->nranks != (uint32_t)env->size || reg->ncells == 0 || reg->dbytes < 2 ||
        reg->inbox_off < sizeof(shm_region) ||
        reg->inbox_off +
                (size_t)env->size * (sizeof(shm_inbox) + 2 * env->size * sizeof(uint32_t)) >
            reg->chan_off ||
        reg->chan_off + 2 * (size_t)env->size * env->size * reg->chan_stride > h->region_bytes)
        return -EINVAL;
    shm_state *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    s->env = *env;
    s->host = h;
    s->reg = reg;
    s->ncells = reg->ncells;
    s->dbytes = reg->dbytes;
    s->inbox = (shm_inbox *)((char *)reg + reg->inbox_off);
    s->slots = (_Atomic uint32_t *)(s->inbox + env->size);
    /* per-peer state is zero until a peer is talked to: untouched pages */
    size_t n = (size_t)env->size;
    s->tx = calloc(2 * n, sizeof *s->tx);
    s->rx = calloc(2 * n, sizeof *s->rx);
    s->lanes.ch = calloc(n, sizeof *s->lanes.ch);
    s->chans.ch = calloc(n, sizeof *s->chans.ch);
    s->outs = calloc(2 * n, sizeof *s->outs);
    s->host_owned = calloc(n, 1);
    if (!s->tx || !s->rx || !s->lanes.ch || !s->chans.ch || !s->outs || !s->host_owned) {
        shm_close(s);
        return -ENOMEM;
    }
    *ctx = s;
    return 0;
}

static bool shm_reaches(void *ctx, int peer)
{
    shm_state *s = ctx;
    const int *host_of = s->env.host_of;
    return peer != s->env.rank && host_of[peer] == host_of[s->env.rank];
}

static void shm_own(void *ctx, int p)
{
    ((shm_state *)ctx)->host_owned[p] = 1;
}

static size_t shm_max_payload(void *ctx, int peer)
{
    (void)peer;
    return ((shm_state *)ctx)->dbytes / 2;
}

/* Reserve len bytes of the data ring, contiguous; returns its running position. */
static int data_reserve(shm_state *s, shm_tx *t, size_t len, uint32_t *pos)
{
    uint32_t p = t->dtail, off = p & (s->dbytes - 1);
    if (off + len > s->dbytes) p += s->dbytes - off; /* skip the ring's tail end */
    if (p + (uint32_t)len - t->dhead_cache > s->dbytes) {
        t->dhead_cache = atomic_load_explicit(&t->ch->dhead_pub, memory_order_acquire);
        if (p + (uint32_t)len - t->dhead_cache > s->dbytes) return -1;
    }
    *pos = p;
    return 0;
}

static int shm_send_am(void *ctx, int peer, const cr_hdr *h, const void *payload, size_t len)
{
    shm_state *s = ctx;
    bool lane = h->flags & CR_HDR_LANE;
    shm_tx *t = &s->tx[lane ? s->env.size + peer : peer];
    if (__builtin_expect(!t->ch, 0)) open_tx(s, peer, lane);
again:
    if (t->tail - t->head_cache >= s->ncells) {
        t->head_cache = atomic_load_explicit(&t->ch->head_pub, memory_order_acquire);
        if (t->tail - t->head_cache >= s->ncells) goto full;
    }
    shm_cell *c = &t->ch->cells[t->tail & (s->ncells - 1)];
    /* (op | WHOLE) is EAGER for an eager message without a value in rreq alone */
    if ((h->op | (h->flags & CR_HDR_WHOLE)) == CR_OP_EAGER && len <= INLINE_MAX) {
        cr_copy(c->u.inl, payload, len);
    } else if (h->op == CR_OP_EAGER && len <= INLINE_TAGGED) { /* rreq in the cell's tail */
        cr_copy(c->u.inl, payload, len);
        memcpy(c->u.inl + INLINE_TAGGED, &h->rreq, sizeof h->rreq);
    } else {
        uint32_t pos = t->dtail;
        if (len && data_reserve(s, t, len, &pos)) goto full;
        if (len) memcpy(t->data + (pos & (s->dbytes - 1)), payload, len);
        t->dtail = pos + (uint32_t)len;
        c->u.c.dpos = pos;
        c->u.c.size = h->size;
        c->u.c.addr = h->addr;
        c->u.c.sreq = h->sreq;
        c->u.c.rreq = h->rreq;
    }
    c->op = h->op;
    c->flags = h->flags;
    c->ctx = h->ctx;
    c->tag = h->tag;
    c->len = (uint32_t)len;
    atomic_store_explicit(&c->seq, t->tail + 1, memory_order_release);
    t->tail++;
    t->blocked = 0;
    kick(s, peer);
    return 0;
full:
    /* shm_arm wakes this rank when a count differs from its cache, so the
     * caches must hold the counts the refusal was decided on: credits given
     * after those reads, whose kick found no sleeper, are looked for here,
     * and the send is tried again with them (read afresh into the caches
     * instead, they would hide those credits: the rank would sleep with room
     * in the ring). The other count is brought up to date too (it may be old:
     * the refusal was not its), so that the rank sleeps instead of seeing it
     * move. The window is widest when the sender loses its CPU here; tests
     * widen it (COURIER_TEST_SHM_FULL_US) at a refusal that follows a
     * refusal: the engine's last try before it sleeps. */
    if (__builtin_expect(s->env.full_us != 0, 0) && t->blocked) usleep(s->env.full_us);
    uint32_t hp = atomic_load_explicit(&t->ch->head_pub, memory_order_acquire);
    uint32_t dp = atomic_load_explicit(&t->ch->dhead_pub, memory_order_acquire);
    if (hp != t->head_cache || dp != t->dhead_cache) {
        t->head_cache = hp;
        t->dhead_cache = dp;
        goto again;
    }
    t->blocked = 1;
    return CR_EAGAIN;
}

/* Tell the sender on channel c what we have consumed. */
static void publish(shm_state *s, int c)
{
    shm_rx *r = &s->rx[c];
    atomic_store_explicit(&r->ch->head_pub, r->head, memory_order_release);
    atomic_store_explicit(&r->ch->dhead_pub, r->dhead, memory_order_release);
    r->head_pub = r->head;
    r->dhead_pub = r->dhead;
    kick(s, peer_of(s, c));
}

/* The next message on channel c, decoded, if one has arrived. */
static inline __attribute__((always_inline)) bool
peek(shm_state *s, int c, cr_hdr *h, const void **payload, uint32_t *len, uint32_t *dend)
{
    shm_rx *r = &s->rx[c];
    shm_cell *cell = &r->ch->cells[r->head & (s->ncells - 1)];
    if (atomic_load_explicit(&cell->seq, memory_order_acquire) != r->head + 1) return false;
    *dend = r->dhead;
    if (cr_shm_decode(cell, r->data, s->dbytes, h, payload, len, dend)) {
        char msg[96];
        snprintf(msg, sizeof msg, "rank %d sent a malformed message (corrupt peer?)",
                 peer_of(s, c));
        s->env.fatal(s->env.owner, "progress", msg);
    }
    return true;
}

/* The message peek returned is taken: free its cell (and ring bytes up to dend). */
static inline void consume(shm_state *s, int c, uint32_t dend)
{
    shm_rx *r = &s->rx[c];
    r->stalled = 0;
    r->head++;
    r->dhead = dend;
    if (r->head - r->head_pub >= s->ncells / 2 || r->dhead - r->dhead_pub >= s->dbytes / 2)
        publish(s, c);
}

/* Deliver up to 'budget' messages from channel c; returns how many. */
static int poll_chan(shm_state *s, int c, int budget)
{
    int n = 0;
    cr_hdr h;
    const void *payload;
    uint32_t len, dend;
    for (;;) {
        if (n == budget) return n;
        if (!peek(s, c, &h, &payload, &len, &dend)) break;
        /* the next cell's line comes over while this message is delivered */
        __builtin_prefetch(&s->rx[c].ch->cells[(s->rx[c].head + 1) & (s->ncells - 1)]);
        if (!s->env.deliver(s->env.owner, peer_of(s, c), &h, payload, len)) {
            /* no room: the sender waits until we receive */
            s->rx[c].stalled = *s->env.recv_gen + 1;
            return n;
        }
        consume(s, c, dend);
        n++;
    }
    /* Read dry: give the sender its credits now. A window of sends as long as
     * the ring would otherwise find the cells of the last one not yet given
     * back whenever the half-ring marks fall out of step with the windows
     * (after a publish before idling), and wait until this rank idles. The
     * line is ours until the sender reads it, which it does only when it
     * thinks the ring full. */
    shm_rx *r = &s->rx[c];
    if (n && (r->head != r->head_pub || r->dhead != r->dhead_pub)) publish(s, c);
    return n;
}

static int poll_list(shm_state *s, shm_list *l)
{
    int n = 0;
    for (int i = 0; i < l->n; i++) {
        int k = l->rr + i;
        if (k >= l->n) k -= l->n;
        n += poll_chan(s, l->ch[k], 16);
    }
    if (++l->rr >= l->n) l->rr = 0;
    return n;
}

static int shm_poll(void *ctx)
{
    shm_state *s = ctx;
    read_inbox(s);
    int n = s->lanes.n ? poll_list(s, &s->lanes) : 0;
    return n + poll_list(s, &s->chans);
}

/* The next message of the first channel of l in round-robin order that has
 * one the engine has not refused. */
static bool peek_list(shm_state *s, shm_list *l, int *src, cr_hdr *h, const void **payload,
                      size_t *len)
{
    uint32_t gen1 = *s->env.recv_gen + 1;
    for (int i = 0; i < l->n; i++) {
        int k = l->rr + i;
        if (k >= l->n) k -= l->n;
        int c = l->ch[k];
        uint32_t n;
        if (s->rx[c].stalled == gen1 || !peek(s, c, h, payload, &n, &s->peek_dend)) continue;
        *src = peer_of(s, c);
        *len = n;
        s->peek_c = c;
        s->peek_k = k;
        s->peek_l = l;
        return true;
    }
    return false;
}

/* A lane's message first, else an ordinary channel's; take() consumes it and
 * moves the round on. */
static bool shm_peek(void *ctx, int *src, cr_hdr *h, const void **payload, size_t *len)
{
    shm_state *s = ctx;
    read_inbox(s);
    return (s->lanes.n && peek_list(s, &s->lanes, src, h, payload, len)) ||
           peek_list(s, &s->chans, src, h, payload, len);
}

static void shm_take(void *ctx, int src)
{
    shm_state *s = ctx;
    (void)src; /* the channel peek returned */
    consume(s, s->peek_c, s->peek_dend);
    shm_list *l = s->peek_l;
    int k = s->peek_k + 1;
    l->rr = k < l->n ? k : 0; /* the next receive looks at the next channel first */
}

static void shm_refused(void *ctx, int src)
{
    shm_state *s = ctx;
    (void)src; /* the channel peek returned */
    s->rx[s->peek_c].stalled = *s->env.recv_gen + 1;
}

static void flush_list(shm_state *s, const shm_list *l)
{
    for (int i = 0; i < l->n; i++) {
        shm_rx *r = &s->rx[l->ch[i]];
        if (r->head != r->head_pub || r->dhead != r->dhead_pub) publish(s, l->ch[i]);
    }
}

static void shm_flush(void *ctx)
{
    shm_state *s = ctx;
    flush_list(s, &s->lanes);
    flush_list(s, &s->chans);
}

/* A message on one of l's channels that the engine has not refused. */
static bool arrived(shm_state *s, const shm_list *l, uint32_t gen1)
{
    for (int i = 0; i < l->n; i++) {
        shm_rx *r = &s->rx[l->ch[i]];
        shm_cell *c = &r->ch->cells[r->head & (s->ncells - 1)];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) == r->head + 1 &&
            r->stalled != gen1)
            return true;
    }
    return false;
}

/* Anything that would let this rank go on: a new cell, or credits we wait for. */
static int shm_arm(void *ctx)
{
    shm_state *s = ctx;
    uint32_t gen1 = *s->env.recv_gen + 1;
    if (atomic_load_explicit(&s->inbox[s->env.rank].tail, memory_order_acquire) != s->inbox_head)
        return 1;
    if (arrived(s, &s->lanes, gen1) || arrived(s, &s->chans, gen1)) return 1;
    for (int i = 0; i < s->nouts; i++) {
        shm_tx *t = &s->tx[s->outs[i]];
        if (t->blocked &&
            (atomic_load_explicit(&t->ch->head_pub, memory_order_acquire) != t->head_cache ||
             atomic_load_explicit(&t->ch->dhead_pub, memory_order_acquire) != t->dhead_cache))
            return 1;
    }
    return 0;
}

/* Single copy between this process's 'local' and the peer's address 'addr'
 * (process_vm_readv to read, process_vm_writev to write); 0 or -errno. */
static int peer_copy(shm_state *s, int peer, void *local, uint64_t addr, size_t len, bool write)
{
    pid_t pid = cr_host_pid(s->host, peer);
    size_t done = 0;
    while (done < len) {
        struct iovec l = {(char *)local + done, len - done};
        struct iovec r = {(void *)(uintptr_t)(addr + done), len - done};
        ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                          : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (n == 0) return -EIO;
        done += (size_t)n;
    }
    return 0;
}

/* The vector form: n pieces, the same lengths on both sides; a short transfer
 * (the kernel stops at a page it cannot reach) finishes piece by piece. */
static int peer_copyv(shm_state *s, int peer, const struct iovec *l, const struct iovec *r, int n,
                      bool write)
{
    pid_t pid = cr_host_pid(s->host, peer);
    while (n > 0) {
        int k = n < IOV_MAX ? n : IOV_MAX;
        size_t want = 0;
        for (int i = 0; i < k; i++) want += l[i].iov_len;
        ssize_t got = write ? process_vm_writev(pid, l, (unsigned long)k, r, (unsigned long)k, 0)
                            : process_vm_readv(pid, l, (unsigned long)k, r, (unsigned long)k, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return -errno;
        if ((size_t)got != want) /* finish this batch one piece at a time */
            for (int i = 0; i < k; i++) {
                int rc = peer_copy(s, peer, l[i].iov_base, (uintptr_t)r[i].iov_base, l[i].iov_len,
                                   write);
                if (rc) return rc;
            }
        l += k;
        r += k;
        n -= k;
    }
    return 0;
}

static int shm_getv(void *ctx, int peer, const struct iovec *local, const struct iovec *remote,
                    int n)
{
    return peer_copyv(ctx, peer, local, remote, n, false);
}

static int shm_putv(void *ctx, int peer, const struct iovec *local, const struct iovec *remote,
                    int n)
{
    return peer_copyv(ctx, peer, local, remote, n, true);
}

static int shm_get(void *ctx, int peer, void *dst, uint64_t addr, size_t len)
{
    return peer_copy(ctx, peer, dst, addr, len, false);
}

static int shm_put(void *ctx, int peer, uint64_t addr, const void *src, size_t len)
{
    return peer_copy(ctx, peer, (void *)src, addr, len, true);
}

static int shm_peer_gone(void *ctx, int peer)
{
    return cr_host_gone(((shm_state *)ctx)->host, peer);
}

const cr_transport cr_transport_shm = {
    .name = "shm",
    .caps = CR_CAP_GET | CR_CAP_PUT | CR_CAP_BELL | CR_CAP_PEEK,
    .open = shm_open,
    .reaches = shm_reaches,
    .own = shm_own,
    .close = shm_close,
    .send_am = shm_send_am,
    .poll = shm_poll,
    .get = shm_get,
    .put = shm_put,
    .getv = shm_getv,
    .putv = shm_putv,
    .flush = shm_flush,
    .arm = shm_arm,
    .peer_gone = shm_peer_gone,
    .max_payload = shm_max_payload,
    .peek = shm_peek,
    .take = shm_take,
    .refused = shm_refused,
};
