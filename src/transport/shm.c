/* Shared-memory transport: one host, one segment created by the launcher with
 * memfd_create and inherited by every rank, so nothing can be left in /dev/shm.
 *
 * Layout: a header, one record per rank (pid and futex doorbell), then one
 * channel per ordered pair (sender, receiver). A channel is a single-producer,
 * single-consumer ring of 64-byte cells plus a byte ring for payloads that do not
 * fit in a cell. Invariants:
 *  - only the sender writes cells and the data ring; only the receiver writes the
 *    channel's first line (head_pub, dhead_pub: what it has consumed);
 *  - a cell is published by storing seq = position + 1 with release order after
 *    everything else in the cell and its payload is written; the receiver reads
 *    seq with acquire order, so one cache line carries a small message;
 *  - the receiver publishes consumed positions lazily (every half ring, and
 *    before it idles), so the two sides do not bounce a line per message;
 *  - a sender stores its cell, issues a full fence, then reads the receiver's
 *    sleepers count; a sleeper increments it, then re-checks its rings before
 *    waiting on the futex. Either the sender sees the sleeper and wakes it, or the
 *    sleeper sees the message: no wake-up is lost. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../core/engine.h"

#include "shm_layout.h"

typedef struct shm_tx {
    shm_chan *ch;
    unsigned char *data;
    uint32_t tail, head_cache, dtail, dhead_cache;
    int blocked; /* last send_am said CR_EAGAIN */
} shm_tx;

typedef struct shm_rx {
    shm_chan *ch;
    unsigned char *data;
    uint32_t head, dhead, head_pub, dhead_pub;
    uint32_t stalled; /* job->recv_gen + 1 while the engine refuses the head cell */
} shm_rx;

typedef struct shm_state {
    void *base;
    size_t len;
    shm_head *hd;
    shm_rank *ranks;
    shm_status *status;
    uint32_t ncells, dbytes;
    shm_tx *tx;
    shm_rx *rx;
    int rr; /* next peer to poll first */
    cr_coll_area coll[CR_COLL_AREAS];
} shm_state;

static shm_chan *chan_of(shm_state *s, int from, int to)
{
    char *p = (char *)s->base + s->hd->chan_off;
    return (shm_chan *)(p + ((size_t)from * s->hd->nranks + (size_t)to) * s->hd->chan_stride);
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

/* Wake the peer's sleeping threads, if it has any. The fence orders our earlier
 * stores (a cell, a consumed count) before the read of its sleepers count. */
static inline void full_fence(void)
{
#if defined(__x86_64__)
    /* A locked add to the stack orders like mfence and costs about half as much. */
    __asm__ __volatile__("lock addl $0,-4(%%rsp)" ::: "memory", "cc");
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

static inline void kick(shm_state *s, int peer)
{
    shm_rank *r = &s->ranks[peer];
    full_fence();
    if (atomic_load_explicit(&r->sleepers, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&r->bell, 1, memory_order_seq_cst);
        futex(&r->bell, FUTEX_WAKE, INT_MAX, NULL);
    }
}

int cr_shm_attach(cr_job *job, int fd)
{
    shm_head probe;
    if (pread(fd, &probe, sizeof probe, 0) != (ssize_t)sizeof probe) return -EINVAL;
    if (probe.magic != SHM_MAGIC || probe.nranks != (uint32_t)job->size) return -EINVAL;
    void *base = mmap(NULL, probe.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) return -errno;
    close(fd); /* the mapping keeps the segment; no descriptor is left to leak */
    shm_state *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    s->base = base;
    s->len = probe.total;
    s->hd = base;
    s->ranks = (shm_rank *)((char *)base + s->hd->rank_off);
    s->status = (shm_status *)((char *)base + s->hd->status_off);
    s->ncells = s->hd->ncells;
    s->dbytes = s->hd->dbytes;
    s->tx = calloc((size_t)job->size, sizeof *s->tx);
    s->rx = calloc((size_t)job->size, sizeof *s->rx);
    if (!s->tx || !s->rx) return -ENOMEM;
    for (int p = 0; p < job->size; p++) {
        s->tx[p].ch = chan_of(s, job->rank, p);
        s->tx[p].data = (unsigned char *)&s->tx[p].ch->cells[s->ncells];
        s->rx[p].ch = chan_of(s, p, job->rank);
        s->rx[p].data = (unsigned char *)&s->rx[p].ch->cells[s->ncells];
    }
    for (int k = 0; k < CR_COLL_AREAS && s->hd->coll_bytes; k++) {
        char *a = (char *)base + s->hd->coll_off + (size_t)k * s->hd->coll_bytes;
        s->coll[k].lines = (cr_coll_line *)a;
        s->coll[k].slots = (unsigned char *)a + (size_t)job->size * 2 * sizeof(cr_coll_line);
        s->coll[k].slot = cr_shm_coll_slot(job->size);
    }
    atomic_store(&s->ranks[job->rank].pid, (int32_t)getpid());
    job->shm = s;
    return 0;
}

void cr_shm_detach(cr_job *job)
{
    shm_state *s = job->shm;
    if (!s) return;
    atomic_store(&s->ranks[job->rank].gone, 1);
    for (int p = 0; p < job->size; p++)
        if (p != job->rank) kick(s, p); /* a peer draining towards us must notice */
    munmap(s->base, s->len);
    free(s->tx);
    free(s->rx);
    free(s);
    job->shm = NULL;
}

static size_t shm_max_payload(cr_job *job)
{
    return ((shm_state *)job->shm)->dbytes / 2;
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

static int shm_send_am(cr_job *job, int peer, const cr_hdr *h, const void *payload, size_t len)
{
    shm_state *s = job->shm;
    shm_tx *t = &s->tx[peer];
    if (t->tail - t->head_cache >= s->ncells) {
        t->head_cache = atomic_load_explicit(&t->ch->head_pub, memory_order_acquire);
        if (t->tail - t->head_cache >= s->ncells) goto full;
    }
    shm_cell *c = &t->ch->cells[t->tail & (s->ncells - 1)];
    if (h->op == CR_OP_EAGER && len <= INLINE_MAX) {
        if (len) memcpy(c->u.inl, payload, len);
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
    /* Both counts fresh, so that shm_pending sees only real progress. */
    t->head_cache = atomic_load_explicit(&t->ch->head_pub, memory_order_acquire);
    t->dhead_cache = atomic_load_explicit(&t->ch->dhead_pub, memory_order_acquire);
    t->blocked = 1;
    return CR_EAGAIN;
}

static void publish(shm_state *s, int peer)
{
    shm_rx *r = &s->rx[peer];
    atomic_store_explicit(&r->ch->head_pub, r->head, memory_order_release);
    atomic_store_explicit(&r->ch->dhead_pub, r->dhead, memory_order_release);
    r->head_pub = r->head;
    r->dhead_pub = r->dhead;
    kick(s, peer);
}

/* The next message from peer p, decoded, if one has arrived. */
static inline __attribute__((always_inline)) bool peek(cr_job *job, shm_state *s, int p, cr_hdr *h,
                                                       const void **payload, uint32_t *len,
                                                       uint32_t *dend)
{
    shm_rx *r = &s->rx[p];
    shm_cell *c = &r->ch->cells[r->head & (s->ncells - 1)];
    if (atomic_load_explicit(&c->seq, memory_order_acquire) != r->head + 1) return false;
    *dend = r->dhead;
    if (cr_shm_decode(c, r->data, s->dbytes, h, payload, len, dend))
        cr_fatal(job, "progress", "rank %d sent a malformed message (corrupt peer?)", p);
    return true;
}

/* The message peek returned is taken: free its cell (and ring bytes up to dend). */
static inline void consume(shm_state *s, int p, uint32_t dend)
{
    shm_rx *r = &s->rx[p];
    r->stalled = 0;
    r->head++;
    r->dhead = dend;
    if (r->head - r->head_pub >= s->ncells / 2 || r->dhead - r->dhead_pub >= s->dbytes / 2)
        publish(s, p);
}

/* Deliver up to 'budget' messages from one peer; returns how many. */
static int poll_peer(cr_job *job, shm_state *s, int p, int budget)
{
    int n = 0;
    cr_hdr h;
    const void *payload;
    uint32_t len, dend;
    while (n < budget && peek(job, s, p, &h, &payload, &len, &dend)) {
        if (!cr_engine_deliver(job, p, &h, payload, len)) {
            s->rx[p].stalled = job->recv_gen + 1; /* no room: the sender waits until we receive */
            break;
        }
        consume(s, p, dend);
        n++;
    }
    return n;
}

static int shm_recv_direct(cr_job *job, const cr_sel *sel, void *buf, size_t cap, cr_status *st)
{
    shm_state *s = job->shm;
    int size = job->size;
    for (int i = 0; i < size; i++) {
        int p = s->rr + i;
        if (p >= size) p -= size;
        cr_hdr h;
        const void *payload;
        uint32_t len, dend;
        if (p == job->rank || !peek(job, s, p, &h, &payload, &len, &dend)) continue;
        int next = p + 1 < size ? p + 1 : 0;
        if (h.op != CR_OP_EAGER || len > cap || !cr_sel_match(sel, p, h.ctx, h.tag)) {
            if (!poll_peer(job, s, p, 1)) continue; /* refused for now */
            s->rr = next;
            return -1;
        }
        if (len) memcpy(buf, payload, len);
        *st = (cr_status){.src = p, .tag = h.tag, .size = len, .count = len};
        consume(s, p, dend);
        s->rr = next; /* round robin: the next receive looks at the next peer first */
        return 1;
    }
    return 0;
}

static int shm_poll(cr_job *job)
{
    shm_state *s = job->shm;
    int n = 0, size = job->size;
    for (int i = 0; i < size; i++) {
        int p = s->rr + i;
        if (p >= size) p -= size;
        if (p == job->rank) continue;
        n += poll_peer(job, s, p, 16);
    }
    if (++s->rr >= size) s->rr = 0;
    return n;
}

static void shm_flush(cr_job *job)
{
    shm_state *s = job->shm;
    for (int p = 0; p < job->size; p++) {
        shm_rx *r = &s->rx[p];
        if (r->head != r->head_pub || r->dhead != r->dhead_pub) publish(s, p);
    }
}

/* Anything that would let this rank go on: a new cell, or credits we wait for. */
static int shm_pending(cr_job *job, shm_state *s)
{
    for (int p = 0; p < job->size; p++) {
        if (p == job->rank) continue;
        shm_rx *r = &s->rx[p];
        shm_cell *c = &r->ch->cells[r->head & (s->ncells - 1)];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) == r->head + 1 &&
            r->stalled != job->recv_gen + 1)
            return 1;
        shm_tx *t = &s->tx[p];
        if (t->blocked &&
            (atomic_load_explicit(&t->ch->head_pub, memory_order_acquire) != t->head_cache ||
             atomic_load_explicit(&t->ch->dhead_pub, memory_order_acquire) != t->dhead_cache))
            return 1;
    }
    return 0;
}

static void shm_sleep(cr_job *job, int timeout_ms, bool (*ready)(void *), void *arg)
{
    shm_state *s = job->shm;
    shm_rank *me = &s->ranks[job->rank];
    atomic_fetch_add_explicit(&me->sleepers, 1, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst); /* pairs with the fence in kick */
    uint32_t v = atomic_load_explicit(&me->bell, memory_order_seq_cst);
    if (!shm_pending(job, s) && !(ready && ready(arg))) {
        struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
        cr_unlock(job);
        futex(&me->bell, FUTEX_WAIT, v, &ts);
        cr_lock(job);
    }
    atomic_fetch_sub_explicit(&me->sleepers, 1, memory_order_seq_cst);
}

/* Single copy between this process's 'local' and the peer's address 'addr'
 * (process_vm_readv to read, process_vm_writev to write); 0 or -errno. */
static int peer_copy(cr_job *job, int peer, void *local, uint64_t addr, size_t len, bool write)
{
    shm_state *s = job->shm;
    pid_t pid = atomic_load(&s->ranks[peer].pid);
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

static int shm_get(cr_job *job, int peer, void *dst, uint64_t addr, size_t len)
{
    return peer_copy(job, peer, dst, addr, len, false);
}

static int shm_put(cr_job *job, int peer, uint64_t addr, const void *src, size_t len)
{
    return peer_copy(job, peer, (void *)src, addr, len, true);
}

static void shm_wake(cr_job *job, int peer)
{
    shm_state *s = job->shm;
    atomic_fetch_add_explicit(&s->ranks[peer].bell, 1, memory_order_seq_cst);
    futex(&s->ranks[peer].bell, FUTEX_WAKE, INT_MAX, NULL);
}

static void shm_nudge(cr_job *job, int peer)
{
    kick(job->shm, peer);
}

static const cr_coll_area *shm_coll_area(cr_job *job, int k)
{
    shm_state *s = job->shm;
    return k >= 0 && k < CR_COLL_AREAS && s->coll[k].lines ? &s->coll[k] : NULL;
}

static void shm_report_wait(cr_job *job, const cr_waitinfo *w)
{
    shm_status *st = &((shm_state *)job->shm)->status[job->rank];
    uint32_t q = atomic_load_explicit(&st->seq, memory_order_relaxed);
    atomic_store_explicit(&st->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    st->blocked = w != NULL;
    if (w) {
        st->w = *w;
        st->spells++;
    }
    atomic_store_explicit(&st->seq, q + 2, memory_order_release);
}

static void shm_report_busy(cr_job *job, int busy)
{
    shm_status *st = &((shm_state *)job->shm)->status[job->rank];
    atomic_store_explicit(&st->busy, (uint32_t)busy, memory_order_release);
}

static int shm_peer_gone(cr_job *job, int peer)
{
    shm_state *s = job->shm;
    return (int)atomic_load(&s->ranks[peer].gone);
}

const cr_transport cr_transport_shm = {
    .name = "shm",
    .send_am = shm_send_am,
    .poll = shm_poll,
    .get = shm_get,
    .put = shm_put,
    .flush = shm_flush,
    .sleep = shm_sleep,
    .wake = shm_wake,
    .nudge = shm_nudge,
    .peer_gone = shm_peer_gone,
    .report_wait = shm_report_wait,
    .report_busy = shm_report_busy,
    .max_payload = shm_max_payload,
    .recv_direct = shm_recv_direct,
    .coll_area = shm_coll_area,
};
