/* UCX transport (COURIER_TRANSPORTS=ucx): every peer through one UCX worker,
 * whose address each rank publishes as its card. UCX picks the wire per peer
 * (shared memory on this host, TCP otherwise) and moves large payloads with its
 * own rendezvous.
 *
 * libucp is loaded with dlopen on the first open (UCX_LIBUCP, the file name the
 * build found), never linked: a program that does not ask for ucx never maps
 * it. Its functions are resolved into a table in the transport's state; the
 * library is never unloaded (UCX patches the process's memory calls and keeps
 * exit handlers of its own).
 *
 * Invariants:
 *  - a message is one active message (id UCX_AM_MSG): the header is ucx_wire
 *    (the engine's cr_hdr, the sender's rank, a sequence number and the job's
 *    key, derived from its secret), the payload the engine's; one without the
 *    key comes from outside the job (UCX's connections prove nothing) and is
 *    dropped unread, said once; a pair has two sequences, its ordinary messages' and
 *    its lane's (CR_HDR_LANE), each delivered in sequence order whatever order
 *    UCX's callbacks come in (out-of-order arrivals wait in its ooo), and a
 *    rendezvous payload still being received holds back everything behind it
 *    in its sequence;
 *  - the engine is never called from inside a UCX callback: callbacks only
 *    queue (rx[k].rq, per source and sequence), and poll delivers after
 *    ucp_worker_progress returns, so deliver may send and nothing in UCX is
 *    re-entered;
 *  - a message the engine refuses stays first in its queue (UCX's buffer kept
 *    with UCS_INPROGRESS, or a copy) and that queue is not offered again until
 *    *recv_gen changes; the source's other queue goes on, so a lane message
 *    never waits behind a refused ordinary one (every arrival is queued
 *    whatever the engine refuses, as before lanes: nothing here holds the
 *    sender back but UCX itself);
 *  - send_am never leaves UCX holding the caller's buffer: a send completes at
 *    once (UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL), or header and payload are copied
 *    into a record that lives until UCX's completion callback; a peer's bytes in
 *    such records (and waiting for its card) are bounded by UCX_QUEUE_LIMIT,
 *    beyond which send_am says CR_EAGAIN (one message is always let through);
 *  - an endpoint is made on the first send to a peer, from its card; until the
 *    card is there, messages for it wait in order in wq and a timer retries;
 *  - a peer leaves with BYE (the last message of the pair's ordinary sequence,
 *    carrying the length of its lane's, h.size); it has left (gone) once the
 *    BYE and every lane message before it are delivered; an
 *    endpoint error without it is the job's end, said after UCX_LOST_MS unless
 *    the launcher, which saw the peer die, ended the job first;
 *  - close sends BYE to every peer it talked to, waits (bounded) for every send
 *    to complete and every endpoint to flush, then destroys them and the worker;
 *  - no file-level state: everything is in ucx_state. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "tcp_crypto.h"
#include "tp_common.h"

/* The shared helpers (tp_common.h), with this transport's state. */
#define now_ms() cr_tp_now_ms()
#define warn_once(s, kind, ...) cr_tp_warn_once(&(s)->env, &(s)->warned, kind, __VA_ARGS__)
#define die(s, call, ...) cr_tp_die(&(s)->env, call, __VA_ARGS__)

#ifndef UCX_LIBUCP

/* Built without UCX's headers: never usable. */
static int ucx_open_none(void **ctx, const cr_tp_env *env)
{
    (void)ctx;
    if (env->size > 1)
        env->warn(env->owner, "ucx: courier was built without UCX (Debian: libucx-dev); "
                              "using the next transport named in COURIER_TRANSPORTS");
    return -ENODEV;
}

const cr_transport cr_transport_ucx = {.name = "ucx", .open = ucx_open_none};

#else

#include <ucp/api/ucp.h>

#define UCX_MAX_PAYLOAD (4u << 20) /* DATA chunk: UCX's rendezvous moves it whole */
#define UCX_QUEUE_LIMIT (1u << 20) /* bytes copied and in flight per peer before CR_EAGAIN */
#define UCX_IMM_MAX (16u << 10)    /* up to this, try to send without a copy first */
#define UCX_INLINE 240             /* payloads up to this are kept inside the queued record */
#define UCX_BUF_MIN (64u << 10)    /* buffers this large and more are cached */
#define UCX_BUF_KEEP 8             /* cached buffers */
#define UCX_BUDGET 256             /* messages delivered per poll */
#define UCX_CLOSE_MS 10000         /* close waits at most this long for peers */
#define UCX_LOST_MS 2000           /* a peer lost: how long the launcher has to say why */
#define UCX_LEAVING_MS 2000        /* ucp_ep_create failing: how long its card has to say it left */
#define UCX_AM_MSG 0
#define UCX_OP_BYE 0xb0 /* our own op, never the engine's */
#define UCX_KEY_LABEL "courier ucx message key v1"

typedef struct ucx_wire {
    cr_hdr h;
    uint32_t src;
    uint32_t seq;
    uint64_t key; /* the job's UCX key (ucx_state.key): proof the sender is of the job */
} ucx_wire;

/* The calls of libucp (and libucs, found through it) that courier makes. */
typedef struct ucx_fn {
    __typeof__(&ucp_config_read) config_read;
    __typeof__(&ucp_config_release) config_release;
    __typeof__(&ucp_init_version) init_version;
    __typeof__(&ucp_cleanup) cleanup;
    __typeof__(&ucp_worker_create) worker_create;
    __typeof__(&ucp_worker_destroy) worker_destroy;
    __typeof__(&ucp_worker_query) worker_query;
    __typeof__(&ucp_worker_release_address) worker_release_address;
    __typeof__(&ucp_worker_get_efd) worker_get_efd;
    __typeof__(&ucp_worker_arm) worker_arm;
    __typeof__(&ucp_worker_progress) worker_progress;
    __typeof__(&ucp_worker_set_am_recv_handler) set_am_recv_handler;
    __typeof__(&ucp_ep_create) ep_create;
    __typeof__(&ucp_ep_close_nbx) ep_close_nbx;
    __typeof__(&ucp_am_send_nbx) am_send_nbx;
    __typeof__(&ucp_am_recv_data_nbx) am_recv_data_nbx;
    __typeof__(&ucp_am_data_release) am_data_release;
    __typeof__(&ucp_request_check_status) request_check_status;
    __typeof__(&ucp_request_cancel) request_cancel;
    __typeof__(&ucp_request_free) request_free;
    __typeof__(&ucs_status_string) status_string;
} ucx_fn;

struct ucx_state;

/* A received message waiting to be delivered. */
typedef struct ucx_msg {
    struct ucx_msg *next;
    struct ucx_state *s;
    cr_hdr h;
    int src;
    uint32_t seq;
    uint8_t bye;
    uint8_t lane;          /* its sequence: 1 the lane's (CR_HDR_LANE), 0 the ordinary one */
    _Atomic uint8_t ready; /* payload complete (a rendezvous one when its callback ran) */
    int failed;            /* a rendezvous receive's error status */
    void *req;             /* the rendezvous receive, until it completes */
    const void *data;
    size_t len;
    void *desc; /* UCX's buffer, kept with UCS_INPROGRESS: ucp_am_data_release */
    void *buf;  /* ours (buf_get) */
    size_t bcap;
    unsigned char inl[UCX_INLINE];
} ucx_msg;

/* A send UCX did not complete at once, or one waiting for the peer's card. */
typedef struct ucx_send {
    struct ucx_send *next, *prev;
    struct ucx_state *s;
    int peer;
    void *req;
    size_t len;
    void *buf; /* ours (buf_get), or NULL: the payload is in inl */
    size_t bcap;
    ucx_wire w;
    unsigned char inl[UCX_INLINE];
} ucx_send;

/* One of a source's two sequences as it arrives: ordinary (0) or its lane (1). */
typedef struct ucx_rxq {
    uint32_t seq;     /* the next in order */
    uint32_t stalled; /* *recv_gen + 1 while the engine refuses the first of rq */
    ucx_msg *rq, *rq_tail;
    ucx_msg *ooo; /* arrived ahead of seq, by sequence */
} ucx_rxq;

typedef struct ucx_peer {
    struct ucx_state *s;
    int rank;
    ucp_ep_h ep;
    uint8_t own;
    uint8_t heard;    /* something came from it (close says BYE to it) */
    uint8_t bye_seen; /* its BYE arrived (maybe still behind refused messages) */
    uint8_t gone;     /* it left: its BYE and its lane were reached in order, or its card says so */
    uint8_t bye_done; /* its BYE was reached in order (its lane may still have some) */
    uint8_t in_active;
    uint8_t failure_seen;
    _Atomic int status; /* an endpoint error (ucs_status_t), 0: none */
    size_t outstanding; /* bytes of its records in flight or in wq */
    ucx_send *wq, *wq_tail;
    uint64_t retry_at; /* ms: ask for its card again (0: not due) */
    unsigned backoff;
    uint64_t ep_failing; /* ms: since when ucp_ep_create fails for it (0: it does not) */
    uint32_t tx_seq[2];  /* what we sent it: [0] ordinary, [1] lane */
    uint32_t lane_end;   /* its BYE's count of lane messages */
    ucx_rxq rx[2];       /* what it sends us: [0] ordinary, [1] lane */
} ucx_peer;

typedef struct ucx_buf {
    void *p;
    size_t cap;
} ucx_buf;

typedef struct ucx_state {
    cr_tp_env env;
    ucx_fn fn;
    void *lib;
    ucp_context_h ctx;
    ucp_worker_h worker;
    int efd, epfd, tfd;
    uint64_t timer_at;
    ucx_peer *peers;
    int *active; /* sources with queued messages */
    int nactive;
    ucx_msg *free_msgs;
    ucx_send *free_sends;
    ucx_send *inflight; /* records UCX holds */
    ucx_buf pool[UCX_BUF_KEEP];
    int npool;
    _Atomic int nfailed; /* endpoint errors noted, not yet handled */
    bool in_poll, closing;
    unsigned warned;
    uint64_t reordered; /* arrivals that came ahead of their turn */
    uint64_t key;       /* HMAC-SHA256(the job's secret, UCX_KEY_LABEL), its first 8 bytes */
} ucx_state;

enum { W_STRANGE = 1, W_CLOSE = 2, W_ORDER = 4, W_STRANGER = 8 };

/* ---- small helpers ---------------------------------------------------------- */

static const char *why(ucx_state *s, ucs_status_t st)
{
    return s->fn.status_string ? s->fn.status_string(st) : "unknown error";
}

static void timer_want(ucx_state *s, uint64_t at)
{
    if (s->timer_at && s->timer_at <= at) return;
    s->timer_at = at;
    uint64_t cur = now_ms(), wait = at > cur ? at - cur : 0;
    struct itimerspec its = {0};
    its.it_value.tv_sec = (time_t)(wait / 1000u);
    its.it_value.tv_nsec = (long)(wait % 1000u) * 1000000L + 1; /* 0 would disarm */
    timerfd_settime(s->tfd, 0, &its, NULL);
}

/* Buffers for large payloads: a few are kept, so that a stream of 4 MiB chunks
 * does not map and fault in fresh memory for each. */
static void *buf_get(ucx_state *s, size_t need, size_t *cap)
{
    int best = -1;
    for (int i = 0; i < s->npool; i++)
        if (s->pool[i].cap >= need && (best < 0 || s->pool[i].cap < s->pool[best].cap)) best = i;
    if (best >= 0) {
        void *p = s->pool[best].p;
        *cap = s->pool[best].cap;
        s->pool[best] = s->pool[--s->npool];
        return p;
    }
    size_t c =
        need < UCX_BUF_MIN ? UCX_BUF_MIN : (need + UCX_BUF_MIN - 1) & ~(size_t)(UCX_BUF_MIN - 1);
    void *p = malloc(c);
    if (!p) die(s, "progress", "ucx: out of memory for a %zu-byte message", need);
    *cap = c;
    return p;
}

static void buf_put(ucx_state *s, void *p, size_t cap)
{
    if (!p) return;
    if (s->npool < UCX_BUF_KEEP) {
        s->pool[s->npool++] = (ucx_buf){p, cap};
        return;
    }
    int small = 0; /* keep the larger ones */
    for (int i = 1; i < s->npool; i++)
        if (s->pool[i].cap < s->pool[small].cap) small = i;
    if (s->pool[small].cap < cap) {
        free(s->pool[small].p);
        s->pool[small] = (ucx_buf){p, cap};
    } else
        free(p);
}

/* ---- receiving -------------------------------------------------------------- */

static ucx_msg *msg_new(ucx_state *s)
{
    ucx_msg *m = s->free_msgs;
    if (m)
        s->free_msgs = m->next;
    else if (!(m = malloc(sizeof *m)))
        die(s, "progress", "ucx: out of memory for a message");
    m->next = NULL;
    m->s = s;
    m->bye = 0;
    atomic_store_explicit(&m->ready, 0, memory_order_relaxed);
    m->failed = 0;
    m->req = NULL;
    m->desc = m->buf = NULL;
    m->bcap = 0;
    return m;
}

static void msg_free(ucx_state *s, ucx_msg *m)
{
    if (m->desc) s->fn.am_data_release(s->worker, m->desc);
    buf_put(s, m->buf, m->bcap);
    m->next = s->free_msgs;
    s->free_msgs = m;
}

static void active_add(ucx_state *s, ucx_peer *pr)
{
    if (pr->in_active) return;
    pr->in_active = 1;
    s->active[s->nactive++] = pr->rank;
}

/* m is next in its sequence from pr, or ahead of it: queue it in order. */
static void rx_arrive(ucx_state *s, ucx_peer *pr, ucx_msg *m)
{
    ucx_rxq *q = &pr->rx[m->lane];
    if (m->seq != q->seq) {
        ucx_msg **pp = &q->ooo;
        while (*pp && (int32_t)((*pp)->seq - m->seq) < 0) pp = &(*pp)->next;
        m->next = *pp;
        *pp = m;
        s->reordered++;
        return;
    }
    for (;;) {
        m->next = NULL;
        if (q->rq_tail)
            q->rq_tail->next = m;
        else
            q->rq = m;
        q->rq_tail = m;
        q->seq++;
        if (!q->ooo || q->ooo->seq != q->seq) break;
        m = q->ooo;
        q->ooo = m->next;
    }
    active_add(s, pr);
}

static void rndv_done(void *req, ucs_status_t st, size_t length, void *user_data)
{
    ucx_msg *m = user_data;
    (void)length;
    if (st != UCS_OK) m->failed = st;
    m->req = NULL;
    m->s->fn.request_free(req);
    atomic_store_explicit(&m->ready, 1, memory_order_release);
}

/* UCX's active-message callback: queue, never deliver here. */
static ucs_status_t am_arrived(void *arg, const void *header, size_t hlen, void *data, size_t len,
                               const ucp_am_recv_param_t *param)
{
    ucx_state *s = arg;
    ucx_wire w;
    if (hlen == sizeof w) memcpy(&w, header, sizeof w);
    if (hlen != sizeof w || (w.key ^ s->key)) {
        /* UCX took the connection without asking us (nothing in UCX 1.13 lets a
         * worker reached by its address refuse one); what it carries is refused
         * here, before anything of it is read. */
        warn_once(s, W_STRANGER,
                  "ucx: refused a message from outside the job (%s; a %zu-byte header): UCX's "
                  "connections are not authenticated, courier's messages carry the job's key; "
                  "the job goes on, further ones are not logged",
                  hlen == sizeof w ? "not the job's key" : "not courier's header", hlen);
        return UCS_OK;
    }
    if (w.src >= (uint32_t)s->env.size || (int)w.src == s->env.rank || !s->peers[w.src].own) {
        warn_once(s, W_STRANGE, "ucx: dropped a message from rank %u, which is no peer of ucx's",
                  w.src);
        return UCS_OK;
    }
    ucx_peer *pr = &s->peers[w.src];
    pr->heard = 1;
    ucx_msg *m = msg_new(s);
    m->h = w.h;
    m->src = (int)w.src;
    m->seq = w.seq;
    m->len = len;
    m->lane = 0;
    if (w.h.op == UCX_OP_BYE) {
        m->bye = 1;
        pr->bye_seen = 1;
    } else if (w.h.flags & CR_HDR_LANE)
        m->lane = 1;
    ucs_status_t ret = UCS_OK;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        m->buf = buf_get(s, len ? len : 1, &m->bcap);
        m->data = m->buf;
        ucp_request_param_t rp = {.op_attr_mask =
                                      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                                  .cb.recv_am = rndv_done,
                                  .user_data = m};
        void *r = s->fn.am_recv_data_nbx(s->worker, data, m->buf, len, &rp);
        if (UCS_PTR_IS_ERR(r))
            m->failed = UCS_PTR_STATUS(r);
        else if (r)
            m->req = r;
        if (!r || UCS_PTR_IS_ERR(r)) atomic_store_explicit(&m->ready, 1, memory_order_relaxed);
    } else if (len <= UCX_INLINE) {
        if (len) memcpy(m->inl, data, len);
        m->data = m->inl;
        atomic_store_explicit(&m->ready, 1, memory_order_relaxed);
    } else if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) {
        m->desc = data; /* UCX keeps it for us until ucp_am_data_release */
        m->data = data;
        atomic_store_explicit(&m->ready, 1, memory_order_relaxed);
        ret = UCS_INPROGRESS;
    } else {
        m->buf = buf_get(s, len, &m->bcap);
        memcpy(m->buf, data, len);
        m->data = m->buf;
        atomic_store_explicit(&m->ready, 1, memory_order_relaxed);
    }
    rx_arrive(s, pr, m);
    return ret;
}

static void peer_left(ucx_state *s, ucx_peer *pr);

/* Hand the engine what is queued in q, one of pr's sequences, in order (at
 * most budget messages); how many it took. */
static int drain_q(ucx_state *s, ucx_peer *pr, ucx_rxq *q, int budget)
{
    int n = 0;
    if (q->stalled && q->stalled == *s->env.recv_gen + 1) return 0;
    q->stalled = 0;
    ucx_msg *m;
    while ((m = q->rq) && atomic_load_explicit(&m->ready, memory_order_acquire) && n < budget) {
        if (m->failed && !s->closing && !pr->gone)
            die(s, "progress",
                "ucx: ucp_am_recv_data_nbx: receiving %zu bytes from rank %d failed: %s "
                "(is rank %d still running? UCX_TLS=%s)",
                m->len, pr->rank, why(s, (ucs_status_t)m->failed), pr->rank,
                getenv("UCX_TLS") ? getenv("UCX_TLS") : "");
        if (m->bye) {
            pr->bye_done = 1;
            pr->lane_end = (uint32_t)m->h.size;
        } else if (!s->closing && !pr->gone) {
            if (!s->env.deliver(s->env.owner, pr->rank, &m->h, m->data, m->len)) {
                q->stalled = *s->env.recv_gen + 1;
                break;
            }
            n++;
        }
        q->rq = m->next;
        if (!q->rq) q->rq_tail = NULL;
        msg_free(s, m);
    }
    return n;
}

/* Hand the engine what is queued, in order per source and sequence (the lane
 * first, as shm reads it); how many it took. */
static int drain(ucx_state *s)
{
    int n = 0;
    for (int i = 0; i < s->nactive && n < UCX_BUDGET;) {
        ucx_peer *pr = &s->peers[s->active[i]];
        n += drain_q(s, pr, &pr->rx[1], UCX_BUDGET - n);
        n += drain_q(s, pr, &pr->rx[0], UCX_BUDGET - n);
        /* It has left once its BYE and every lane message it sent before are in. */
        if (pr->bye_done && !pr->gone && pr->rx[1].seq == pr->lane_end && !pr->rx[1].rq)
            pr->gone = 1;
        if (!pr->rx[0].rq && !pr->rx[1].rq) {
            pr->in_active = 0;
            s->active[i] = s->active[--s->nactive];
        } else
            i++;
    }
    return n;
}

/* ---- sending ---------------------------------------------------------------- */

static ucx_send *send_new(ucx_state *s, int peer, const ucx_wire *w, const void *payload,
                          size_t len)
{
    ucx_send *t = s->free_sends;
    if (t)
        s->free_sends = t->next;
    else if (!(t = malloc(sizeof *t)))
        die(s, "progress", "ucx: out of memory for a send");
    t->next = t->prev = NULL;
    t->s = s;
    t->peer = peer;
    t->req = NULL;
    t->len = len;
    t->w = *w;
    t->buf = NULL;
    t->bcap = 0;
    if (len > UCX_INLINE) t->buf = buf_get(s, len, &t->bcap);
    if (len) memcpy(t->buf ? t->buf : t->inl, payload, len);
    return t;
}

static void send_free(ucx_state *s, ucx_send *t)
{
    buf_put(s, t->buf, t->bcap);
    t->next = s->free_sends;
    s->free_sends = t;
}

static void note_failure(ucx_peer *pr, ucs_status_t st)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&pr->status, &none, (int)st))
        atomic_fetch_add(&pr->s->nfailed, 1);
}

static void send_done(void *req, ucs_status_t st, void *user_data)
{
    ucx_send *t = user_data;
    ucx_state *s = t->s;
    ucx_peer *pr = &s->peers[t->peer];
    if (st != UCS_OK && st != UCS_ERR_CANCELED) note_failure(pr, st);
    pr->outstanding -= t->len;
    if (t->prev)
        t->prev->next = t->next;
    else
        s->inflight = t->next;
    if (t->next) t->next->prev = t->prev;
    s->fn.request_free(req);
    send_free(s, t);
}

/* Give record t to UCX; it stays counted in outstanding until it completes. */
static void send_start(ucx_state *s, ucx_peer *pr, ucx_send *t)
{
    ucp_request_param_t rp = {.op_attr_mask =
                                  UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                              .cb.send = send_done,
                              .user_data = t};
    void *r = s->fn.am_send_nbx(pr->ep, UCX_AM_MSG, &t->w, sizeof t->w, t->buf ? t->buf : t->inl,
                                t->len, &rp);
    if (r && !UCS_PTR_IS_ERR(r)) {
        t->req = r;
        t->prev = NULL;
        t->next = s->inflight;
        if (s->inflight) s->inflight->prev = t;
        s->inflight = t;
        return;
    }
    if (UCS_PTR_IS_ERR(r)) note_failure(pr, UCS_PTR_STATUS(r));
    pr->outstanding -= t->len;
    send_free(s, t);
}

static void ep_failed_cb(void *arg, ucp_ep_h ep, ucs_status_t st)
{
    (void)ep;
    note_failure(arg, st);
}

/* Make the endpoint to pr from its card; false while the card is not there. */
static bool connect_peer(ucx_state *s, ucx_peer *pr)
{
    if (pr->ep) return true;
    if (pr->gone) return false;
    unsigned char card[CR_CARD_MAX];
    size_t len = sizeof card;
    pr->retry_at = 0;
    int rc = s->env.card_get(s->env.owner, pr->rank, card, &len);
    if (rc == -EAGAIN) { /* it has not started yet */
        pr->backoff = pr->backoff ? pr->backoff * 2 : 1;
        if (pr->backoff > 100) pr->backoff = 100;
        pr->retry_at = now_ms() + pr->backoff;
        timer_want(s, pr->retry_at);
        return false;
    }
    if (rc < 0) { /* it has left */
        peer_left(s, pr);
        return false;
    }
    /* Error handling on a peer of this host would cost its shared memory: UCX
     * 1.13 then leaves sysv and cma out and goes by TCP (0 B latency 11-26 us
     * instead of 0.19 us here). A peer of this host that dies is seen by this
     * host's launcher, which ends the job; a peer elsewhere is watched. */
    bool same_host = s->env.host_of[pr->rank] == s->env.host_of[s->env.rank];
    ucp_ep_params_t ep = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = (const ucp_address_t *)card,
        .err_mode = same_host ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER,
        .err_handler = {.cb = ep_failed_cb, .arg = pr}};
    ucs_status_t st = s->fn.ep_create(s->worker, &ep, &pr->ep);
    if (st != UCS_OK) {
        /* A peer that is leaving has already given its shared memory back
         * (UCX's sysv shmat fails) before its card says it left: ask again
         * for UCX_LEAVING_MS before calling it an error. */
        pr->ep = NULL;
        uint64_t now = now_ms();
        if (!pr->ep_failing) pr->ep_failing = now;
        if (now - pr->ep_failing < UCX_LEAVING_MS) {
            pr->retry_at = now + 10;
            timer_want(s, pr->retry_at);
            return false;
        }
        die(s, "progress",
            "ucx: ucp_ep_create for rank %d failed: %s (the transports in UCX_TLS=%s must reach "
            "it; try COURIER_TRANSPORTS=tcp)",
            pr->rank, why(s, st), getenv("UCX_TLS") ? getenv("UCX_TLS") : "");
    }
    pr->ep_failing = 0;
    pr->backoff = 0;
    while (pr->wq && pr->ep) { /* what waited for the card, in order */
        ucx_send *t = pr->wq;
        pr->wq = t->next;
        if (!pr->wq) pr->wq_tail = NULL;
        send_start(s, pr, t);
    }
    return true;
}

static void wq_drop(ucx_state *s, ucx_peer *pr)
{
    while (pr->wq) {
        ucx_send *t = pr->wq;
        pr->wq = t->next;
        pr->outstanding -= t->len;
        send_free(s, t);
    }
    pr->wq_tail = NULL;
}

static void ep_close_force(ucx_state *s, ucx_peer *pr)
{
    if (!pr->ep) return;
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                              .flags = UCP_EP_CLOSE_FLAG_FORCE};
    void *r = s->fn.ep_close_nbx(pr->ep, &rp);
    pr->ep = NULL;
    if (r && !UCS_PTR_IS_ERR(r)) {
        while (s->fn.request_check_status(r) == UCS_INPROGRESS) s->fn.worker_progress(s->worker);
        s->fn.request_free(r);
    }
}

/* Peer pr has left in order: nothing will ever read what is for it. */
static void peer_left(ucx_state *s, ucx_peer *pr)
{
    pr->gone = 1;
    pr->retry_at = 0;
    wq_drop(s, pr);
}

/* Endpoint errors noted by UCX's callbacks: a peer that left in order, or one
 * that died (the launcher says so first, unless the job outlives UCX_LOST_MS). */
static void failures(ucx_state *s)
{
    atomic_store(&s->nfailed, 0);
    for (int p = 0; p < s->env.size; p++) {
        ucx_peer *pr = &s->peers[p];
        int st = atomic_load(&pr->status);
        if (!st || pr->failure_seen) continue;
        pr->failure_seen = 1;
        if (pr->gone || s->closing) {
            peer_left(s, pr);
            ep_close_force(s, pr);
            continue;
        }
        if (pr->bye_seen) { /* it left in order: what came before its BYE, maybe held
                               (refused) still, is delivered before it counts as gone */
            pr->retry_at = 0;
            wq_drop(s, pr);
            ep_close_force(s, pr);
            continue;
        }
        unsigned char card[CR_CARD_MAX];
        size_t len = sizeof card;
        int rc = 0;
        for (int t = 0; t <= UCX_LOST_MS / 50; t++) {
            len = sizeof card;
            rc = s->env.card_get(s->env.owner, p, card, &len);
            if (rc < 0 && rc != -EAGAIN) break; /* it finalized: it left in order */
            struct timespec nap = {0, 50 * 1000000L};
            nanosleep(&nap, NULL);
        }
        if (rc < 0 && rc != -EAGAIN) {
            peer_left(s, pr);
            ep_close_force(s, pr);
            continue;
        }
        die(s, "progress",
            "ucx: lost rank %d (%s, said by UCX's endpoint); ending the job (if it is alive, "
            "check UCX_TLS or try COURIER_TRANSPORTS=tcp)",
            p, why(s, (ucs_status_t)st));
    }
}

static int ucx_send_am(void *ctx, int p, const cr_hdr *h, const void *payload, size_t len)
{
    ucx_state *s = ctx;
    ucx_peer *pr = &s->peers[p];
    if (pr->gone || pr->bye_seen) return 0; /* it left: nothing will ever read this */
    if (len > UCX_MAX_PAYLOAD)
        die(s, "progress", "ucx: a message of %zu bytes exceeds the chunk", len);
    if (pr->outstanding && pr->outstanding + len > UCX_QUEUE_LIMIT) return CR_EAGAIN;
    uint32_t *seq = &pr->tx_seq[(h->flags & CR_HDR_LANE) && h->op != UCX_OP_BYE];
    ucx_wire w = {.h = *h, .src = (uint32_t)s->env.rank, .seq = *seq, .key = s->key};
    if ((pr->ep || connect_peer(s, pr)) && !pr->wq) {
        if (len <= UCX_IMM_MAX) {
            ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL};
            void *r = s->fn.am_send_nbx(pr->ep, UCX_AM_MSG, &w, sizeof w, payload, len, &rp);
            if (!r) {
                (*seq)++;
                return 0;
            }
            if (!UCS_PTR_IS_ERR(r))
                die(s, "progress", "ucx: ucp_am_send_nbx did not complete a forced-immediate send");
            if (UCS_PTR_STATUS(r) != UCS_ERR_NO_RESOURCE) {
                note_failure(pr, UCS_PTR_STATUS(r));
                (*seq)++;
                return 0;
            }
        }
        ucx_send *t = send_new(s, p, &w, payload, len);
        pr->outstanding += len;
        (*seq)++;
        send_start(s, pr, t);
        return 0;
    }
    if (pr->gone) return 0;
    ucx_send *t = send_new(s, p, &w, payload, len); /* wait for its card, in order */
    if (pr->wq_tail)
        pr->wq_tail->next = t;
    else
        pr->wq = t;
    pr->wq_tail = t;
    pr->outstanding += len;
    (*seq)++;
    return 0;
}

/* ---- progress --------------------------------------------------------------- */

static void timers(ucx_state *s)
{
    uint64_t x, now = now_ms();
    if (read(s->tfd, &x, sizeof x) < 0) { /* nothing: re-armed below */
    }
    s->timer_at = 0;
    for (int p = 0; p < s->env.size; p++) {
        ucx_peer *pr = &s->peers[p];
        if (!pr->retry_at) continue;
        if (now >= pr->retry_at)
            connect_peer(s, pr);
        else
            timer_want(s, pr->retry_at);
    }
}

static int ucx_poll(void *ctx)
{
    ucx_state *s = ctx;
    if (s->in_poll) return 0;
    s->in_poll = true;
    for (int k = 0; k < 8 && s->fn.worker_progress(s->worker); k++) {
    }
    if (atomic_load_explicit(&s->nfailed, memory_order_relaxed)) failures(s);
    if (s->timer_at && now_ms() >= s->timer_at) timers(s);
    int n = s->nactive ? drain(s) : 0;
    s->in_poll = false;
    return n;
}

static int ucx_arm(void *ctx)
{
    ucx_state *s = ctx;
    if (s->timer_at && now_ms() >= s->timer_at) return 1;
    if (atomic_load(&s->nfailed)) return 1;
    uint32_t gen1 = *s->env.recv_gen + 1;
    for (int i = 0; i < s->nactive; i++) {
        ucx_peer *pr = &s->peers[s->active[i]];
        for (int k = 0; k < 2; k++) {
            const ucx_rxq *q = &pr->rx[k];
            if (q->stalled != gen1 && q->rq &&
                atomic_load_explicit(&q->rq->ready, memory_order_acquire))
                return 1;
        }
    }
    ucs_status_t st = s->fn.worker_arm(s->worker);
    return st == UCS_OK ? 0 : 1; /* UCS_ERR_BUSY: events to progress first */
}

static int ucx_fd(void *ctx)
{
    return ((ucx_state *)ctx)->epfd;
}

static void ucx_flush(void *ctx)
{
    ucx_state *s = ctx;
    if (s->timer_at && now_ms() >= s->timer_at) timers(s);
}

static size_t ucx_max_payload(void *ctx, int peer)
{
    (void)ctx;
    (void)peer;
    return UCX_MAX_PAYLOAD;
}

static int ucx_peer_gone(void *ctx, int peer)
{
    return ((ucx_state *)ctx)->peers[peer].gone;
}

static bool ucx_reaches(void *ctx, int peer)
{
    return peer != ((ucx_state *)ctx)->env.rank;
}

static void ucx_own(void *ctx, int peer)
{
    ((ucx_state *)ctx)->peers[peer].own = 1;
}

/* ---- opening ---------------------------------------------------------------- */

static int load(ucx_state *s, char *err, size_t errlen)
{
    s->lib = dlopen(UCX_LIBUCP, RTLD_NOW | RTLD_LOCAL);
    if (!s->lib) {
        snprintf(err, errlen, "cannot load %s (%s); install UCX (Debian: libucx0)", UCX_LIBUCP,
                 dlerror());
        return -1;
    }
    struct {
        const char *name;
        void **slot;
    } want[] = {
        {"ucp_config_read", (void **)&s->fn.config_read},
        {"ucp_config_release", (void **)&s->fn.config_release},
        {"ucp_init_version", (void **)&s->fn.init_version},
        {"ucp_cleanup", (void **)&s->fn.cleanup},
        {"ucp_worker_create", (void **)&s->fn.worker_create},
        {"ucp_worker_destroy", (void **)&s->fn.worker_destroy},
        {"ucp_worker_query", (void **)&s->fn.worker_query},
        {"ucp_worker_release_address", (void **)&s->fn.worker_release_address},
        {"ucp_worker_get_efd", (void **)&s->fn.worker_get_efd},
        {"ucp_worker_arm", (void **)&s->fn.worker_arm},
        {"ucp_worker_progress", (void **)&s->fn.worker_progress},
        {"ucp_worker_set_am_recv_handler", (void **)&s->fn.set_am_recv_handler},
        {"ucp_ep_create", (void **)&s->fn.ep_create},
        {"ucp_ep_close_nbx", (void **)&s->fn.ep_close_nbx},
        {"ucp_am_send_nbx", (void **)&s->fn.am_send_nbx},
        {"ucp_am_recv_data_nbx", (void **)&s->fn.am_recv_data_nbx},
        {"ucp_am_data_release", (void **)&s->fn.am_data_release},
        {"ucp_request_check_status", (void **)&s->fn.request_check_status},
        {"ucp_request_cancel", (void **)&s->fn.request_cancel},
        {"ucp_request_free", (void **)&s->fn.request_free},
        {"ucs_status_string", (void **)&s->fn.status_string},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        *want[i].slot = dlsym(s->lib, want[i].name);
        if (!*want[i].slot) {
            snprintf(err, errlen, "%s lacks %s (courier needs UCX 1.13 or later)", UCX_LIBUCP,
                     want[i].name);
            return -1;
        }
    }
    return 0;
}

/* The network device UCX may use, from COURIER_NET as tcp reads it: an
 * interface's name, or the interface that holds an address or has one in a
 * prefix; default loopback (today a job runs on one host, and lo reaches every
 * peer without opening a port to the network). dev is "" when nothing matches. */
static void net_device(const char *net, char *dev, size_t len)
{
    cr_net_spec spec;
    dev[0] = 0;
    struct ifaddrs *ifs;
    if (cr_net_parse(net, &spec) || getifaddrs(&ifs)) return;
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
        if (cr_net_matches(&spec, i)) {
            snprintf(dev, len, "%s", i->ifa_name);
            break;
        }
    freeifaddrs(ifs);
}

static void free_state(ucx_state *s)
{
    if (s->worker) s->fn.worker_destroy(s->worker);
    if (s->ctx) s->fn.cleanup(s->ctx);
    if (s->tfd >= 0) close(s->tfd);
    if (s->epfd >= 0) close(s->epfd);
    for (ucx_msg *m = s->free_msgs, *n; m; m = n) {
        n = m->next;
        free(m);
    }
    for (ucx_send *t = s->free_sends, *n; t; t = n) {
        n = t->next;
        free(t);
    }
    for (int i = 0; i < s->npool; i++) free(s->pool[i].p);
    free(s->peers);
    free(s->active);
    free(s); /* the library stays loaded (see the top of this file) */
}

static int ucx_open(void **ctx, const cr_tp_env *env)
{
    if (env->size < 2) return -ENODEV; /* no peer to reach */
    ucx_state *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    s->env = *env;
    s->efd = s->epfd = s->tfd = -1;
    /* Every message carries a key derived from the job's secret: UCX's own
     * connections prove nothing (see am_arrived). */
    char kerr[200] = "cannot derive the message key (libcrypto failed)";
    unsigned char mac[TCP_CRYPTO_MAC];
    if (!env->secret || tcp_crypto_load(kerr, sizeof kerr) ||
        tcp_crypto_hmac(env->secret, CR_SECRET_LEN, UCX_KEY_LABEL, sizeof UCX_KEY_LABEL - 1, mac)) {
        char msg[300];
        snprintf(msg, sizeof msg, "ucx: %s; using the next transport in COURIER_TRANSPORTS",
                 env->secret ? kerr : "no job secret (start the program with courier run)");
        env->warn(env->owner, msg);
        free(s);
        return -ENODEV;
    }
    memcpy(&s->key, mac, sizeof s->key);
    /* Defaults a user's environment overrides, set before libucp is loaded
     * (libucs reads its global options when it loads) and so for every user,
     * not only the tests:
     *  - UCX_TLS: what works for ranks of one or several hosts without special
     *    hardware: TCP, System V shared memory and cross-memory attach for the
     *    rendezvous (self is never used: courier's own self transport serves a
     *    rank's messages to itself). Not posix: its files in /dev/shm stay
     *    behind when a rank is killed (measured: three files of up to 2.6 MB
     *    after a failing job), where courier promises to leave nothing; sysv
     *    segments are removed with their last process. Left to itself UCX also
     *    probes InfiniBand and RDMA-CM (installed with UCX) on every start;
     *  - UCX_NET_DEVICES: the interface COURIER_NET names, or loopback when it
     *    names none and every rank is on this host (tcp listens only there
     *    too); UCX otherwise opens a port on every interface. A job across
     *    hosts without COURIER_NET leaves UCX its default (every interface);
     *  - UCX_WARN_UNUSED_ENV_VARS=n: a job's environment carries other UCX_
     *    variables (for MPI libraries); UCX would warn about each;
     *  - UCX_HANDLE_ERRORS=none: a rank that crashes is reported by courier
     *    run (which signal, which rank); UCX's own handler would print a
     *    backtrace and change how the rank ends. */
    setenv("UCX_TLS", "tcp,sysv,cma,self", 0);
    setenv("UCX_WARN_UNUSED_ENV_VARS", "n", 0);
    setenv("UCX_HANDLE_ERRORS", "none", 0);
    bool one_host = true;
    for (int p = 0; p < env->size; p++) one_host &= env->host_of[p] == env->host_of[env->rank];
    if (!getenv("UCX_NET_DEVICES") && (one_host || (env->net && *env->net))) {
        char dev[IF_NAMESIZE + 1];
        net_device(env->net, dev, sizeof dev);
        if (!dev[0]) {
            free_state(s);
            char msg[200];
            snprintf(msg, sizeof msg,
                     "ucx: COURIER_NET=%s names no interface or address of this host (give "
                     "an address, a prefix such as 10.0.0.0/8, or an interface such as lo)",
                     env->net);
            env->fatal(env->owner, "init", msg);
        }
        setenv("UCX_NET_DEVICES", dev, 0);
    }
    char err[300];
    if (load(s, err, sizeof err)) {
        char msg[400];
        snprintf(msg, sizeof msg, "ucx: %s; using the next transport in COURIER_TRANSPORTS", err);
        env->warn(env->owner, msg);
        free_state(s);
        return -ENODEV;
    }
    s->peers = calloc((size_t)env->size, sizeof *s->peers);
    s->active = calloc((size_t)env->size, sizeof *s->active);
    if (!s->peers || !s->active) {
        free_state(s);
        return -ENOMEM;
    }
    for (int p = 0; p < env->size; p++) {
        s->peers[p].s = s;
        s->peers[p].rank = p;
    }
    ucp_config_t *cfg;
    ucs_status_t st = s->fn.config_read(NULL, NULL, &cfg);
    const char *call = "ucp_config_read";
    if (st == UCS_OK) {
        ucp_params_t up = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                           .features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP};
        call = "ucp_init";
        st = s->fn.init_version(UCP_API_MAJOR, UCP_API_MINOR, &up, cfg, &s->ctx);
        s->fn.config_release(cfg);
    }
    if (st == UCS_OK) {
        ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                                  .thread_mode = UCS_THREAD_MODE_SERIALIZED};
        call = "ucp_worker_create";
        st = s->fn.worker_create(s->ctx, &wp, &s->worker);
    }
    if (st == UCS_OK) {
        ucp_am_handler_param_t hp = {
            .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                          UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG,
            .id = UCX_AM_MSG,
            .flags = UCP_AM_FLAG_WHOLE_MSG,
            .cb = am_arrived,
            .arg = s};
        call = "ucp_worker_set_am_recv_handler";
        st = s->fn.set_am_recv_handler(s->worker, &hp);
    }
    if (st == UCS_OK) {
        call = "ucp_worker_get_efd";
        st = s->fn.worker_get_efd(s->worker, &s->efd);
    }
    if (st != UCS_OK) {
        snprintf(err, sizeof err,
                 "ucx: %s failed: %s (UCX_TLS=%s, UCX_NET_DEVICES=%s); using the next transport "
                 "in COURIER_TRANSPORTS",
                 call, why(s, st), getenv("UCX_TLS"), getenv("UCX_NET_DEVICES"));
        env->warn(env->owner, err);
        free_state(s);
        return -ENODEV;
    }
    /* One descriptor for the waiting point: UCX's, and our timer (card retries). */
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    int rc = 0;
    if (s->epfd < 0 || s->tfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->efd, &ev) ||
        epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &ev))
        rc = -errno;
    if (rc) {
        free_state(s);
        return rc;
    }
    ucp_worker_attr_t wa = {.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS};
    st = s->fn.worker_query(s->worker, &wa);
    if (st != UCS_OK) {
        snprintf(err, sizeof err, "ucx: ucp_worker_query failed: %s", why(s, st));
        free_state(s);
        env->fatal(env->owner, "init", err);
    }
    rc = env->card_put(env->owner, wa.address, wa.address_length);
    size_t alen = wa.address_length;
    s->fn.worker_release_address(s->worker, wa.address);
    if (rc == -ENODEV) { /* no cards to meet by (a rank started alone) */
        free_state(s);
        return -ENODEV;
    }
    if (rc) {
        free_state(s);
        snprintf(err, sizeof err,
                 "ucx: cannot publish this rank's UCX address (%zu bytes; a card holds %d): %s; "
                 "name fewer transports in UCX_TLS",
                 alen, CR_CARD_MAX, strerror(-rc));
        env->fatal(env->owner, "init", err);
    }
    *ctx = s;
    return 0;
}

/* ---- closing ---------------------------------------------------------------- */

/* Leave: BYE to every peer we talked to, wait (bounded) for every send, flush
 * and close the endpoints, then destroy the worker. */
static void ucx_close(void *ctx)
{
    ucx_state *s = ctx;
    s->closing = true;
    uint64_t start = now_ms();
    for (int p = 0; p < s->env.size; p++) {
        ucx_peer *pr = &s->peers[p];
        if (!pr->own || pr->gone || pr->bye_seen || !(pr->ep || pr->heard || pr->wq)) continue;
        /* the last of our ordinary sequence; it says how long our lane's was */
        const cr_hdr bye = {.op = UCX_OP_BYE, .size = pr->tx_seq[1]};
        size_t keep = pr->outstanding;
        pr->outstanding = 0; /* BYE always goes */
        ucx_send_am(s, p, &bye, NULL, 0);
        pr->outstanding += keep;
    }
    for (;;) {
        ucx_poll(s);
        bool busy = s->inflight != NULL;
        for (int p = 0; p < s->env.size && !busy; p++) busy = s->peers[p].wq && !s->peers[p].gone;
        if (!busy) break;
        if (now_ms() - start > UCX_CLOSE_MS) {
            for (int p = 0; p < s->env.size; p++)
                if (s->peers[p].outstanding && !s->peers[p].gone)
                    warn_once(s, W_CLOSE,
                              "ucx: leaving after %d s while rank %d has not taken all this "
                              "rank sent it (it may be stuck or gone)",
                              UCX_CLOSE_MS / 1000, p);
            break;
        }
        if (s->fn.worker_arm(s->worker) == UCS_OK) {
            struct pollfd pfd = {.fd = s->epfd, .events = POLLIN};
            poll(&pfd, 1, 1);
        }
    }
    /* Flush and close every endpoint, all at once. */
    void **reqs = calloc((size_t)(unsigned)s->env.size, sizeof *reqs);
    for (int p = 0; p < s->env.size; p++) {
        ucx_peer *pr = &s->peers[p];
        if (!pr->ep) continue;
        bool force = atomic_load(&pr->status) != 0 || !reqs;
        ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                  .flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0};
        void *r = s->fn.ep_close_nbx(pr->ep, &rp);
        pr->ep = NULL;
        if (r && !UCS_PTR_IS_ERR(r)) {
            if (reqs)
                reqs[p] = r;
            else {
                while (s->fn.request_check_status(r) == UCS_INPROGRESS)
                    s->fn.worker_progress(s->worker);
                s->fn.request_free(r);
            }
        }
    }
    uint64_t deadline =
        now_ms() + 2000 > start + UCX_CLOSE_MS ? now_ms() + 2000 : start + UCX_CLOSE_MS;
    for (bool busy = reqs != NULL; busy;) {
        busy = false;
        s->fn.worker_progress(s->worker);
        for (int p = 0; p < s->env.size; p++) {
            if (!reqs[p]) continue;
            if (s->fn.request_check_status(reqs[p]) != UCS_INPROGRESS) {
                s->fn.request_free(reqs[p]);
                reqs[p] = NULL;
            } else
                busy = true;
        }
        if (busy && now_ms() > deadline) {
            for (int p = 0; p < s->env.size; p++)
                if (reqs[p]) {
                    warn_once(s, W_CLOSE,
                              "ucx: leaving while the endpoint to rank %d has not flushed "
                              "(it may be stuck or gone)",
                              p);
                    s->fn.request_cancel(s->worker, reqs[p]);
                }
            break;
        }
    }
    /* What is still queued: release UCX's buffers, cancel unfinished receives. */
    for (int p = 0; p < s->env.size; p++) {
        ucx_peer *pr = &s->peers[p];
        for (int k = 0; k < 2; k++) {
            ucx_rxq *q = &pr->rx[k];
            for (ucx_msg *m = q->rq, *n; m; m = n) {
                n = m->next;
                if (m->req) {
                    s->fn.request_cancel(s->worker, m->req);
                    for (int t = 0; t < 1000 && m->req; t++) s->fn.worker_progress(s->worker);
                    if (m->req) continue; /* UCX still owns it: leak it, never free it */
                }
                msg_free(s, m);
            }
            for (ucx_msg *m = q->ooo, *n; m; m = n) {
                n = m->next;
                if (!m->req) msg_free(s, m);
            }
            q->rq = q->ooo = NULL;
        }
        wq_drop(s, pr);
    }
    free(reqs);
    free_state(s);
}

const cr_transport cr_transport_ucx = {
    .name = "ucx",
    .caps = CR_CAP_FD,
    .open = ucx_open,
    .reaches = ucx_reaches,
    .own = ucx_own,
    .close = ucx_close,
    .send_am = ucx_send_am,
    .poll = ucx_poll,
    .flush = ucx_flush,
    .arm = ucx_arm,
    .fd = ucx_fd,
    .peer_gone = ucx_peer_gone,
    .max_payload = ucx_max_payload,
};

#endif
