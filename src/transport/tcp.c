/* TCP transport: peers on other hosts (or every peer, with COURIER_TRANSPORTS=tcp),
 * over one authenticated connection per pair of ranks.
 *
 * Wire-up: at open, a non-blocking listening socket on the address COURIER_NET
 * picks (default 127.0.0.1) is published as this rank's card. A connection is
 * made on first use: the first send_am to a peer reads its card and connects;
 * messages queue in user space until the connection is authenticated.
 *
 * Invariants:
 *  - no byte from a connection reaches the engine before the handshake of
 *    tcp_auth.h has proven that both ends hold the job's secret, and the peer is
 *    one this transport serves (own); strangers are refused and each kind of
 *    refusal is logged once; at most TCP_MAX_STRANGERS + one per rank unproven
 *    connections are kept (the oldest goes first: a connection storm of the job's
 *    own start-up never reaches it) and each gets TCP_HANDSHAKE_MS (times the
 *    host's ranks per CPU: a crowded host's members may not run for seconds) to prove
 *    itself; nothing ever blocks on them;
 *  - at most one connection per peer serves traffic (peers[p].conn). When both
 *    ends call each other at once, the connection the lower rank made is kept:
 *    the acceptor decides when the connector's proof arrives and only then says
 *    WELCOME, and a connector sends frames only after its WELCOME, so no frame
 *    is ever sent on a connection that is dropped;
 *  - a peer's send queue (peers[p].q*) continues the byte stream exactly where
 *    the socket stopped: a frame is written whole, or its rest is queued, and
 *    nothing is written directly while anything is queued; send_am says
 *    CR_EAGAIN (nothing sent, nothing queued) when the queue holds more than
 *    TCP_QUEUE_LIMIT, or holds anything when a DATA chunk comes (large messages
 *    then stream from the user's buffer, without a copy into the queue);
 *  - sockets are non-blocking and registered once, edge-triggered, in one epoll
 *    set with the listener and a timerfd (no epoll_ctl per message); only the
 *    hot connection, read directly every poll, may be out of EPOLLIN (quiet),
 *    and never while the rank sleeps; a connection's readable/writable flags
 *    say what epoll reported and no short read or write has since contradicted;
 *    the ready list holds every connection that may have work without a new
 *    event; arm() is 1 exactly when poll() would find work without waiting;
 *  - lanes (CR_HDR_LANE) share the pair's one connection: a frame the engine
 *    refuses is held back in the connection's queue of its kind (park[0]
 *    ordinary, park[1] the lane) with every later frame of that kind, in
 *    arrival order, and the socket is read on, so a lane frame never waits
 *    behind a refused ordinary one (nor the reverse); a held queue is offered
 *    again, in order, once *recv_gen has changed (stalled[k]); a BYE that
 *    arrives while anything is held takes effect only after it, and nothing is
 *    read after it. The held bytes are bounded by TCP_PARK_LIMIT: at that
 *    point the socket is not read (TCP's own flow control holds the sender)
 *    until the engine takes again (see the comment at TCP_PARK_LIMIT);
 *  - a long DATA frame, when the engine names the receive's memory for it and
 *    nothing of its kind is held, is read straight there (inplace_*) and then
 *    delivered whole with that address as its payload; rx holds nothing of it;
 *  - a connection is freed only at the end of a poll round (conn_kill marks it),
 *    so no pointer taken in that round dangles;
 *  - an authenticated peer leaves with BYE; an end of stream without it is the
 *    job's end ("lost the connection to rank P", said after TCP_LOST_MS unless the
 *    launcher, which saw the peer die, ended the job first); at close, queued output is
 *    flushed, BYE sent, the write side shut and the kernel's send queue drained
 *    (bounded) before the sockets are closed, reading and discarding meanwhile,
 *    so our last bytes are never destroyed by a reset. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tcp_auth.h"
#include "tcp_crypto.h"
#include "tcp_wire.h"
#include "tp_common.h"
#include "transport.h"

/* The shared helpers (tp_common.h), with this transport's state. */
#define now_ms() cr_tp_now_ms()
#define warn_once(s, kind, ...) cr_tp_warn_once(&(s)->env, &(s)->warned, kind, __VA_ARGS__)
#define die(s, call, ...) cr_tp_die(&(s)->env, call, __VA_ARGS__)

_Static_assert(CR_SECRET_LEN == TCP_AUTH_KEY, "the job's secret is the handshake's key");

#define TCP_MAX_PAYLOAD (1u << 20)  /* DATA chunk (1 MiB: +5-10 % over 256 KiB at 4 MiB) */
#define TCP_QUEUE_LIMIT (1u << 20)  /* bytes queued per peer before CR_EAGAIN */
#define TCP_INPLACE_MIN (16u << 10) /* DATA frames this long are read in place */
#define TCP_BLOCK (64u << 10)       /* queue blocks hold at least this much */
#define TCP_RX_MIN (64u << 10)      /* an rx buffer's first size (grows to a frame) */
#define TCP_MAX_STRANGERS 64        /* unproven connections kept at once, beyond one per rank */
#define TCP_HANDSHAKE_MS 3000       /* an accepted connection has this long to prove itself */
#define TCP_BUDGET 64               /* frames from one connection per poll */
#define TCP_CLOSE_MS 10000          /* close waits at most this long for peers */
#define TCP_RETRY_MAX_MS 1000       /* connect retries back off up to this */
#define TCP_REFUSED_MS 30000        /* a peer refusing for this long ends the job */
#define TCP_LOST_MS 2000            /* a peer lost: how long the launcher has to say why */
#define TCP_EVENTS 64
#define TCP_SMALL 64        /* frames with at most this payload go out through one buffer */
#define TCP_QUIET_ROUNDS 64 /* polls a connection stays hot before it leaves EPOLLIN */

/* Lanes over one connection. A pair's lane messages must not wait behind its
 * ordinary messages that the engine refuses (transport.h). Two ways were open:
 * a second connection per pair for the lane, or one connection read past a
 * refused frame. The second connection would need a kind in the handshake
 * (tcp_auth.c insists the head's two spare bytes are zero, and its MAC would
 * have to cover the kind), the simultaneous-call rule per kind, and a BYE per
 * connection ordered against the other's last frames; reading on changes
 * nothing on the wire or in the handshake and touches only the receiving side.
 * So: when the engine refuses a frame, it is copied into the connection's held
 * queue of its kind and reading goes on; later frames of that kind join the
 * queue behind it (their order holds), frames of the other kind are delivered
 * as they come; the held queues are offered again when *recv_gen changes (the
 * moment a stalled connection was read again before).
 *
 * The bound. Over tcp the engine has no per-peer credits of its own: a send
 * waits only when send_am says CR_EAGAIN, i.e. when the sender's queue passes
 * TCP_QUEUE_LIMIT, and that queue drains as long as the receiver reads. So a
 * receiver that reads past what it refuses removes the only brake on the
 * sender, and the bound has to be the receiver's: once TCP_PARK_LIMIT bytes
 * are held on a connection the socket is not read (frames already in the rx
 * buffer stay there), TCP's flow control holds the sender as before, and at
 * most TCP_PARK_LIMIT plus one frame (TCP_MAX_PAYLOAD + 48 bytes) is held per
 * connection. Only past it can a lane frame wait behind refused ordinary
 * traffic again: more than TCP_PARK_LIMIT bytes of the pair's ordinary
 * messages refused ahead of it. (A reserved stream's own words are bounded by
 * its credits, a destination's depth; rendezvous replies are small.) */
#define TCP_PARK_LIMIT (1u << 20)

/* A rank's card: where its listening socket is. */
typedef struct tcp_card {
    uint8_t family; /* 4 or 6 */
    uint8_t pad;
    uint16_t port; /* network order */
    uint32_t scope;
    uint8_t addr[16];
} tcp_card;

/* A frame held back (the engine refused it, or one of its kind before it). */
typedef struct tcp_park {
    struct tcp_park *next;
    cr_hdr h;
    uint32_t len;
    unsigned char data[];
} tcp_park;

typedef struct tcp_block {
    struct tcp_block *next;
    size_t off, len, cap;
    unsigned char data[];
} tcp_block;

enum { ST_HANDSHAKE = 1, ST_UP, ST_DEAD };

typedef struct tcp_conn {
    int fd;
    int peer;       /* the rank it serves, or -1 while unproven (acceptor) */
    uint8_t accept; /* we accepted it (else we called) */
    uint8_t state;  /* ST_* */
    uint8_t readable, writable;
    uint8_t in_ready;
    uint8_t stranger; /* accepted and not yet proven: counted in nstrangers */
    uint8_t hello_ok; /* a well-formed HELLO came: a member that gave up, not a scanner */
    uint8_t shut;     /* closing: our write side is shut */
    uint8_t bye_held; /* a BYE came while frames were held: it waits for them */
    int broken;       /* errno of a failed write: the read side says what happened */
    uint32_t epoch;   /* the poll round that last handled it */
    uint64_t since;   /* ms: accepted (the handshake's deadline counts from here) */
    tcp_auth *auth;   /* during the handshake */
    unsigned char *rx;
    size_t rxcap, rxhead, rxtail;
    /* Frames held back per kind ([1]: the lane), in arrival order; stalled[k]
     * is *recv_gen + 1 while the engine refuses the first of park[k]. */
    tcp_park *park[2], *park_tail[2];
    uint32_t stalled[2];
    size_t parked; /* bytes held in park[] */
    /* A DATA frame read straight into the receive's memory: ip_len bytes at
     * ip_dst, ip_got of them in so far, its header ip_h (ip_dst NULL: none). */
    unsigned char *ip_dst;
    size_t ip_len, ip_got;
    cr_hdr ip_h;
    struct tcp_conn *next, *prev;   /* every connection */
    struct tcp_conn *rnext, *rprev; /* the ready list */
    char who[64];                   /* address:port, for log lines */
} tcp_conn;

typedef struct tcp_peer {
    tcp_conn *conn; /* serving, or our own call while it is in the handshake */
    tcp_block *qhead, *qtail;
    size_t qbytes;
    uint8_t gone;           /* it left: BYE came, or it was gone before we called */
    uint8_t bye_out;        /* closing: our BYE is queued */
    uint8_t done;           /* closing: nothing more to do for it */
    uint64_t retry_at;      /* ms: call again then (0: no call due) */
    uint64_t refused_since; /* ms: its address has refused us since then */
    unsigned backoff;       /* ms */
} tcp_peer;

enum {
    W_GARBAGE = 1,
    W_RANK = 2,
    W_MAC = 4,
    W_SLOW = 8,
    W_CLOSED = 16,
    W_FLOOD = 32,
    W_FAR = 64,
    W_CLOSE = 128
};

typedef struct tcp_state {
    cr_tp_env env;
    int epfd, lfd, tfd;
    uint32_t maxpay;
    tcp_peer *peers;
    uint8_t *may; /* per rank: ours to serve */
    tcp_conn *conns, *conns_tail;
    tcp_conn *ready, *ready_tail;
    int nstrangers, ndead;
    uint64_t timer_at; /* when the timerfd fires (0: disarmed) */
    uint64_t hs_ms;    /* an unproven connection's deadline: TCP_HANDSHAKE_MS x crowding */
    uint32_t epoch;
    unsigned warned; /* W_* kinds already logged */
    bool closing, in_poll, listen_more;
    tcp_conn *hot;   /* the connection we last sent or delivered on: read it first */
    tcp_conn *quiet; /* hot, and out of EPOLLIN (quiet_set); NULL: none */
    unsigned rounds; /* polls so far (epoll_wait every few while a connection is hot) */
    unsigned hot_n;  /* polls that read hot directly since it became hot */
    char lkey, tkey; /* epoll tags of the listener and the timer */
    char addr[64];   /* our listening address, for log lines */
} tcp_state;

/* ---- small helpers ---------------------------------------------------------- */

static void fmt_addr(const struct sockaddr *sa, char *buf, size_t len)
{
    char a[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)sa;
        inet_ntop(AF_INET, &in->sin_addr, a, sizeof a);
        port = ntohs(in->sin_port);
        snprintf(buf, len, "%s:%u", a, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in = (const void *)sa;
        inet_ntop(AF_INET6, &in->sin6_addr, a, sizeof a);
        port = ntohs(in->sin6_port);
        snprintf(buf, len, "[%s]:%u", a, port);
    } else
        snprintf(buf, len, "an unknown address");
}

static void lower(char *p)
{
    if (*p >= 'A' && *p <= 'Z') *p += 'a' - 'A';
}

static void timer_want(tcp_state *s, uint64_t at)
{
    if (s->timer_at && s->timer_at <= at) return;
    s->timer_at = at;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t cur = (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
    uint64_t wait = at > cur ? at - cur : 0;
    struct itimerspec its = {0};
    its.it_value.tv_sec = (time_t)(wait / 1000u);
    its.it_value.tv_nsec = (long)(wait % 1000u) * 1000000L + 1; /* 0 would disarm */
    timerfd_settime(s->tfd, 0, &its, NULL);
}

/* ---- connections and the ready list ----------------------------------------- */

static void ready_push(tcp_state *s, tcp_conn *c)
{
    if (c->in_ready || c->state == ST_DEAD) return;
    c->in_ready = 1;
    c->rnext = NULL;
    c->rprev = s->ready_tail;
    if (s->ready_tail)
        s->ready_tail->rnext = c;
    else
        s->ready = c;
    s->ready_tail = c;
}

static void ready_del(tcp_state *s, tcp_conn *c)
{
    if (!c->in_ready) return;
    c->in_ready = 0;
    if (c->rprev)
        c->rprev->rnext = c->rnext;
    else
        s->ready = c->rnext;
    if (c->rnext)
        c->rnext->rprev = c->rprev;
    else
        s->ready_tail = c->rprev;
}

/* BBR (many systems' default) paces each segment by its estimate of the
 * path's bandwidth; a job's connections run over loopback or a cluster's LAN,
 * where that pacing, not the network, sets the pace: osu_bw 4 MiB on loopback
 * 3.1-3.6 GB/s with BBR, 6.6-7.2 with cubic or reno (bench/results/tcp.md).
 * So a connection that would use BBR uses cubic, or reno where an unprivileged
 * process may not choose cubic (reno is always allowed); any other choice of
 * the system's stays. */
static void avoid_pacing(int fd)
{
    char cc[16] = "";
    socklen_t l = sizeof cc - 1;
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &l) || strncmp(cc, "bbr", 3)) return;
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5))
        setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4);
}

static tcp_conn *conn_new(tcp_state *s, int fd, int accept, int peer)
{
    tcp_conn *c = calloc(1, sizeof *c);
    tcp_auth *a = malloc(sizeof *a);
    if (!c || !a) die(s, "progress", "tcp: out of memory for a connection");
    c->fd = fd;
    c->peer = peer;
    c->accept = (uint8_t)accept;
    c->state = ST_HANDSHAKE;
    c->auth = a;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = c};
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev))
        die(s, "progress", "tcp: epoll_ctl: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    avoid_pacing(fd);
    c->prev = s->conns_tail;
    if (s->conns_tail)
        s->conns_tail->next = c;
    else
        s->conns = c;
    s->conns_tail = c;
    return c;
}

/* Done with c: its socket closes now, the struct goes at the end of the round. */
static void conn_kill(tcp_state *s, tcp_conn *c, bool reset)
{
    if (c->state == ST_DEAD) return;
    if (c->stranger) s->nstrangers--;
    c->stranger = 0;
    if (c->peer >= 0 && s->peers[c->peer].conn == c) s->peers[c->peer].conn = NULL;
    if (s->hot == c) s->hot = NULL;
    if (s->quiet == c) s->quiet = NULL;
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    if (reset) { /* a refused stranger: no TIME_WAIT left behind */
        struct linger l = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    close(c->fd);
    c->fd = -1;
    c->state = ST_DEAD;
    s->ndead++;
}

static void conn_free(tcp_conn *c)
{
    if (c->auth) {
        tcp_auth_clear(c->auth);
        free(c->auth);
    }
    for (int k = 0; k < 2; k++)
        for (tcp_park *f = c->park[k], *next; f; f = next) {
            next = f->next;
            free(f);
        }
    free(c->rx);
    free(c);
}

static void free_dead(tcp_state *s)
{
    for (tcp_conn *c = s->conns, *next; c && s->ndead; c = next) {
        next = c->next;
        if (c->state != ST_DEAD) continue;
        ready_del(s, c);
        if (c->prev)
            c->prev->next = c->next;
        else
            s->conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        else
            s->conns_tail = c->prev;
        conn_free(c);
        s->ndead--;
    }
}

/* The hot connection, once read directly TCP_QUIET_ROUNDS polls in a row, leaves
 * epoll's EPOLLIN (quiet): its peer's messages then no longer wake the epoll
 * set nor come back from epoll_wait, which the fast path would only have
 * skipped (osu_latency 8 B on loopback, bench/results/tcp-osu.md). It is put
 * back, and EPOLL_CTL_MOD reports at once what is already there, when another
 * connection becomes hot, when the fast path cannot read it, and before the
 * rank sleeps (tcp_arm): nothing waits on epoll for a quiet connection. */
static void quiet_set(tcp_state *s, tcp_conn *c, bool quiet)
{
    struct epoll_event ev = {.events = (quiet ? 0u : EPOLLIN) | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                             .data.ptr = c};
    if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev))
        die(s, "progress", "tcp: epoll_ctl: %s", strerror(errno));
    s->quiet = quiet ? c : NULL;
}

static void hot_is(tcp_state *s, tcp_conn *c)
{
    if (s->hot == c) return;
    s->hot = c;
    s->hot_n = 0;
    if (s->quiet) quiet_set(s, s->quiet, false);
}

/* ---- send queues ------------------------------------------------------------ */

static void q_add(tcp_state *s, tcp_peer *pr, const void *a, size_t alen, const void *b,
                  size_t blen)
{
    size_t n = alen + blen;
    tcp_block *t = pr->qtail;
    if (!t || t->cap - t->len < n) {
        size_t cap = n > TCP_BLOCK ? n : TCP_BLOCK;
        t = malloc(sizeof *t + cap);
        if (!t) die(s, "progress", "tcp: out of memory for a send queue");
        t->next = NULL;
        t->off = t->len = 0;
        t->cap = cap;
        if (pr->qtail)
            pr->qtail->next = t;
        else
            pr->qhead = t;
        pr->qtail = t;
    }
    if (alen) memcpy(t->data + t->len, a, alen);
    if (blen) memcpy(t->data + t->len + alen, b, blen);
    t->len += n;
    pr->qbytes += n;
}

static void q_drop(tcp_peer *pr)
{
    while (pr->qhead) {
        tcp_block *b = pr->qhead;
        pr->qhead = b->next;
        free(b);
    }
    pr->qtail = NULL;
    pr->qbytes = 0;
}

static void conn_broken(tcp_state *s, tcp_conn *c, int err)
{
    c->broken = err;
    c->writable = 0;
    c->readable = 1; /* the read side finds the BYE, or the reason */
    ready_push(s, c);
}

/* Write what is queued for peer p (its connection is up). */
static void q_flush(tcp_state *s, int p)
{
    tcp_peer *pr = &s->peers[p];
    tcp_conn *c = pr->conn;
    while (pr->qhead && !c->broken) {
        struct iovec iov[64];
        int k = 0;
        size_t total = 0;
        for (tcp_block *b = pr->qhead; b && k < 64; b = b->next, k++) {
            iov[k].iov_base = b->data + b->off;
            iov[k].iov_len = b->len - b->off;
            total += iov[k].iov_len;
        }
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)k};
        ssize_t n = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                c->writable = 0;
            else
                conn_broken(s, c, errno);
            return;
        }
        pr->qbytes -= (size_t)n;
        bool shortw = (size_t)n < total;
        while (n > 0) {
            tcp_block *b = pr->qhead;
            size_t left = b->len - b->off;
            if ((size_t)n < left) {
                b->off += (size_t)n;
                break;
            }
            n -= (ssize_t)left;
            pr->qhead = b->next;
            free(b);
        }
        if (!pr->qhead) pr->qtail = NULL;
        if (shortw) {
            c->writable = 0; /* the socket is full */
            return;
        }
    }
}

/* ---- calling a peer --------------------------------------------------------- */

static void retry_later(tcp_state *s, int p, unsigned first_ms, unsigned max_ms)
{
    tcp_peer *pr = &s->peers[p];
    pr->backoff = pr->backoff ? pr->backoff * 2 : first_ms;
    if (pr->backoff > max_ms) pr->backoff = max_ms;
    pr->retry_at = now_ms() + pr->backoff;
    timer_want(s, pr->retry_at);
}

/* Peer p has left (its card says so): nothing will ever read what is for it. */
static void peer_left(tcp_state *s, int p)
{
    tcp_peer *pr = &s->peers[p];
    pr->gone = 1;
    pr->retry_at = 0;
    q_drop(pr);
    if (pr->conn) conn_kill(s, pr->conn, false);
}

static void hs_progress(tcp_state *s, tcp_conn *c);

static void start_connect(tcp_state *s, int p)
{
    tcp_peer *pr = &s->peers[p];
    pr->retry_at = 0;
    if (pr->conn || pr->gone) return;
    tcp_card card;
    size_t len = sizeof card;
    memset(&card, 0, sizeof card);
    int rc = s->env.card_get(s->env.owner, p, &card, &len);
    if (rc == -EAGAIN) { /* it has not started yet */
        retry_later(s, p, 1, 100);
        return;
    }
    if (rc < 0) {
        peer_left(s, p);
        return;
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sl;
    if (len == sizeof card && card.family == 4) {
        struct sockaddr_in *in = (void *)&ss;
        in->sin_family = AF_INET;
        in->sin_port = card.port;
        memcpy(&in->sin_addr, card.addr, 4);
        sl = sizeof *in;
    } else if (len == sizeof card && card.family == 6) {
        struct sockaddr_in6 *in = (void *)&ss;
        in->sin6_family = AF_INET6;
        in->sin6_port = card.port;
        in->sin6_scope_id = card.scope;
        memcpy(&in->sin6_addr, card.addr, 16);
        sl = sizeof *in;
    } else
        die(s, "progress", "tcp: rank %d published an address this rank cannot read", p);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die(s, "progress",
            "tcp: cannot make a socket for rank %d: %s (each rank needs a descriptor per peer it "
            "talks to; raise the open-file limit, ulimit -n)",
            p, strerror(errno));
    if (connect(fd, (struct sockaddr *)&ss, sl) && errno != EINPROGRESS) {
        int err = errno;
        close(fd);
        char who[64];
        fmt_addr((struct sockaddr *)&ss, who, sizeof who);
        uint64_t now = now_ms();
        if (!pr->refused_since) pr->refused_since = now;
        if (now - pr->refused_since > TCP_REFUSED_MS)
            die(s, "progress", "tcp: cannot connect to rank %d at %s: %s", p, who, strerror(err));
        retry_later(s, p, 10, TCP_RETRY_MAX_MS);
        return;
    }
    tcp_conn *c = conn_new(s, fd, 0, p);
    fmt_addr((struct sockaddr *)&ss, c->who, sizeof c->who);
    unsigned char nonce[TCP_AUTH_NONCE];
    if (tcp_crypto_random(nonce, sizeof nonce))
        die(s, "progress", "tcp: no random bytes for a nonce");
    tcp_auth_connect(c->auth, s->env.secret, s->env.rank, p, s->env.size, nonce);
    pr->conn = c;
    c->writable = 1; /* try at once: EAGAIN until connected, then epoll says */
    hs_progress(s, c);
}

/* Our call to peer p ended before its WELCOME (refused, reset, closed). A lower
 * rank closes our call when it is calling us at the same time; a peer that has
 * left refuses. Call again a little later unless its card says it is gone. */
static void call_failed(tcp_state *s, tcp_conn *c, int err)
{
    int p = c->peer;
    conn_kill(s, c, false);
    tcp_peer *pr = &s->peers[p];
    tcp_card card;
    size_t len = sizeof card;
    int rc = s->env.card_get(s->env.owner, p, &card, &len);
    if (rc < 0 && rc != -EAGAIN) {
        peer_left(s, p);
        return;
    }
    if (err == ECONNREFUSED || err == ENETUNREACH || err == EHOSTUNREACH || err == ETIMEDOUT) {
        uint64_t now = now_ms();
        if (!pr->refused_since) pr->refused_since = now;
        if (now - pr->refused_since > TCP_REFUSED_MS)
            die(s, "progress", "tcp: cannot connect to rank %d at %s: %s", p, c->who,
                strerror(err));
    }
    retry_later(s, p, 10, TCP_RETRY_MAX_MS);
}

/* ---- the handshake ---------------------------------------------------------- */

static void go_up(tcp_state *s, tcp_conn *c)
{
    int p = c->peer;
    tcp_peer *pr = &s->peers[p];
    c->state = ST_UP;
    tcp_auth_clear(c->auth);
    free(c->auth);
    c->auth = NULL;
    c->rxcap = TCP_RX_MIN;
    c->rx = malloc(c->rxcap);
    if (!c->rx) die(s, "progress", "tcp: out of memory for a connection");
    pr->conn = c;
    pr->backoff = 0;
    pr->refused_since = 0;
    pr->retry_at = 0;
    if (pr->qbytes && c->writable) q_flush(s, p);
    ready_push(s, c);
}

/* An accepted connection failed the handshake (rc) or ended during it (err,
 * or 0: closed). */
static void stranger_refused(tcp_state *s, tcp_conn *c, int rc, int err)
{
    if (rc) {
        unsigned kind = rc == TCP_AUTH_EGARBAGE ? W_GARBAGE : rc == TCP_AUTH_ERANK ? W_RANK : W_MAC;
        warn_once(s, kind, "tcp: refused a connection from %s: %s", c->who, tcp_auth_strerror(rc));
    } else if (!c->hello_ok) {
        warn_once(s, W_CLOSED,
                  "tcp: refused a connection from %s: it %s before proving it "
                  "belongs to this job",
                  c->who, err ? "reset the connection" : "hung up");
    }
    conn_kill(s, c, rc != 0);
}

/* The acceptor has the connector's proof: keep this connection, unless one to
 * the same peer is already kept or (ours, in the handshake) wins by rank. */
static void decide(tcp_state *s, tcp_conn *c)
{
    int p = c->auth->peer;
    tcp_peer *pr = &s->peers[p];
    tcp_conn *old = pr->conn;
    if (pr->gone || (old && (old->accept || old->state == ST_UP)) || (old && p > s->env.rank)) {
        conn_kill(s, c, false); /* the other connection wins */
        return;
    }
    if (old) conn_kill(s, old, false); /* our call loses to the lower rank's */
    c->stranger = 0;
    s->nstrangers--;
    c->peer = p;
    pr->conn = c;
    tcp_auth_welcome(c->auth);
}

/* Move the handshake of c as far as the socket allows. */
static void hs_progress(tcp_state *s, tcp_conn *c)
{
    tcp_auth *a = c->auth;
    for (;;) {
        if (a->outoff < a->outlen && c->writable) {
            ssize_t n = send(c->fd, a->out + a->outoff, a->outlen - a->outoff, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR) continue;
                if (errno != EAGAIN && errno != EWOULDBLOCK) goto failed;
                c->writable = 0;
            } else {
                a->outoff += (size_t)n;
                if (a->outoff == a->outlen)
                    a->outoff = a->outlen = 0;
                else
                    c->writable = 0;
            }
        }
        if (a->state == TCP_AUTH_S_DONE && !a->outlen) {
            if (c->peer >= 0 && s->peers[c->peer].conn == c) go_up(s, c);
            return;
        }
        size_t want = tcp_auth_want(a);
        if (!want || !c->readable) return;
        unsigned char buf[TCP_AUTH_CHALLENGE];
        ssize_t n = recv(c->fd, buf, want, 0);
        if (n == 0) {
            errno = 0;
            goto failed;
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                c->readable = 0;
                return;
            }
            goto failed;
        }
        if ((size_t)n < want) c->readable = 0;
        size_t used;
        int was = a->state;
        int rc = tcp_auth_input(a, buf, (size_t)n, &used);
        if (c->accept && was == TCP_AUTH_S_HELLO && a->state == TCP_AUTH_S_RESPONSE)
            c->hello_ok = 1;
        if (rc < 0) {
            if (c->accept) {
                stranger_refused(s, c, rc, 0);
            } else {
                /* the address on the card answered, but not as our peer */
                warn_once(s, W_FAR, "tcp: the process at rank %d's address %s was refused: %s",
                          c->peer, c->who, tcp_auth_strerror(rc));
                call_failed(s, c, 0);
            }
            return;
        }
        if (rc == TCP_AUTH_VERIFIED) {
            decide(s, c);
            if (c->state == ST_DEAD) return;
        }
    }
failed:
    if (c->accept && c->stranger)
        stranger_refused(s, c, 0, errno);
    else if (c->accept)
        conn_kill(s, c, false); /* a proven peer dropped its call before WELCOME */
    else
        call_failed(s, c, errno);
}

/* ---- receiving -------------------------------------------------------------- */

/* The read side of an authenticated connection ended (err, or 0: closed). */
static void conn_ended(tcp_state *s, tcp_conn *c, int err)
{
    int p = c->peer;
    if (s->peers[p].gone || s->closing) {
        conn_kill(s, c, false);
        return;
    }
    /* The peer went without BYE: it died, most likely killed. Its launcher saw
     * that and ends the job naming the cause, one line; we speak only if it has
     * not ended us within TCP_LOST_MS (a peer lost some other way). */
    struct timespec nap = {TCP_LOST_MS / 1000, (TCP_LOST_MS % 1000) * 1000000L};
    while (nanosleep(&nap, &nap) < 0 && errno == EINTR) {
    }
    char why[128];
    snprintf(why, sizeof why, "%s", err ? strerror(err) : "connection closed by peer");
    lower(why);
    die(s, "progress", "lost the connection to rank %d (%s); ending the job", p, why);
}

static inline bool conn_held(const tcp_conn *c)
{
    return c->park[0] || c->park[1];
}

/* Hold a frame back in c's queue of kind k (1: the lane), behind the others. */
static void park_add(tcp_state *s, tcp_conn *c, int k, const cr_hdr *h, const unsigned char *pl,
                     uint32_t len)
{
    tcp_park *f = malloc(sizeof *f + len);
    if (!f)
        die(s, "progress",
            "tcp: out of memory holding back a %u-byte message from rank %d until this rank "
            "can take it (give the job more memory, or post its receives sooner)",
            len, c->peer);
    f->next = NULL;
    f->h = *h;
    f->len = len;
    if (len) memcpy(f->data, pl, len);
    if (c->park_tail[k])
        c->park_tail[k]->next = f;
    else
        c->park[k] = f;
    c->park_tail[k] = f;
    c->parked += sizeof *f + len;
}

/* Offer the engine c's held frames of kind k again, in order, once *recv_gen
 * has changed since it refused the first (closing: drop them); how many it took. */
static int park_retry(tcp_state *s, tcp_conn *c, int k, int budget)
{
    int n = 0;
    if (!c->park[k] || (!s->closing && c->stalled[k] == *s->env.recv_gen + 1)) return 0;
    c->stalled[k] = 0;
    tcp_park *f;
    while ((f = c->park[k]) && n < budget) {
        if (!s->closing && !s->peers[c->peer].gone) {
            if (!s->env.deliver(s->env.owner, c->peer, &f->h, f->data, f->len)) {
                c->stalled[k] = *s->env.recv_gen + 1;
                break;
            }
            n++;
            hot_is(s, c);
        }
        c->park[k] = f->next;
        if (!f->next) c->park_tail[k] = NULL;
        c->parked -= sizeof *f + f->len;
        free(f);
    }
    return n;
}

/* A DATA frame whose header is in c->rx and whose payload is not all there yet
 * is read straight into the receive's memory, when the engine says where that
 * is and nothing of its kind is held before it: the bytes already in rx are
 * copied there, the rest comes from the socket (inplace_read). One copy (the
 * kernel's) instead of two: 4 MiB over loopback (tcp.md). */
static bool inplace_start(tcp_state *s, tcp_conn *c, const cr_hdr *h, uint32_t len)
{
    size_t have = c->rxtail - c->rxhead;
    if (have < TCP_HDR_LEN || h->op != CR_OP_DATA || len < TCP_INPLACE_MIN || !s->env.data_dest ||
        s->closing || s->peers[c->peer].gone || c->park[(h->flags & CR_HDR_LANE) != 0])
        return false;
    unsigned char *dst = s->env.data_dest(s->env.owner, c->peer, h, len);
    if (!dst) return false;
    have -= TCP_HDR_LEN; /* < len: the frame is not complete */
    memcpy(dst, c->rx + c->rxhead + TCP_HDR_LEN, have);
    c->rxhead = c->rxtail = 0;
    c->ip_dst = dst;
    c->ip_len = len;
    c->ip_got = have;
    c->ip_h = *h;
    return true;
}

/* Read on into the frame inplace_start began: 1 when it is complete (and
 * delivered), 0 when the socket has no more now, -1 when the connection ended. */
static int inplace_read(tcp_state *s, tcp_conn *c)
{
    while (c->ip_got < c->ip_len) {
        if (!c->readable) return 0;
        size_t room = c->ip_len - c->ip_got;
        ssize_t r = recv(c->fd, c->ip_dst + c->ip_got, room, 0);
        if (r > 0) {
            c->ip_got += (size_t)r;
            if ((size_t)r < room) c->readable = 0;
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->readable = 0;
            if (!c->broken) return 0;
        }
        conn_ended(s, c, r == 0 ? 0 : c->broken ? c->broken : errno);
        return -1;
    }
    unsigned char *dst = c->ip_dst;
    c->ip_dst = NULL;
    if (!s->closing && !s->peers[c->peer].gone) {
        if (!s->env.deliver(s->env.owner, c->peer, &c->ip_h, dst, c->ip_len))
            die(s, "progress", "tcp: the engine refused data it had given a place for");
        hot_is(s, c);
    }
    return 1;
}

/* Deliver what has arrived on c (up to the budget); how many messages. A frame
 * the engine refuses is held with the later ones of its kind (the lane's or the
 * ordinary), and reading goes on up to TCP_PARK_LIMIT held bytes. */
static int conn_read(tcp_state *s, tcp_conn *c)
{
    int n = 0, p = c->peer;
    tcp_peer *pr = &s->peers[p];
    if (conn_held(c)) {
        n += park_retry(s, c, 1, TCP_BUDGET); /* the lane first, as shm reads it */
        n += park_retry(s, c, 0, TCP_BUDGET - n);
        if (c->bye_held) {
            if (conn_held(c)) return n;
            c->bye_held = 0; /* all that came before it is delivered */
            pr->gone = 1;
            q_drop(pr);
        }
    }
    for (;;) {
        if (c->ip_dst) {
            int k = inplace_read(s, c);
            if (k <= 0) return n;
            n++;
        }
        uint32_t len = 0;
        while (n < TCP_BUDGET && c->parked < TCP_PARK_LIMIT) {
            cr_hdr h;
            const unsigned char *pl;
            long fl =
                tcp_decode(c->rx + c->rxhead, c->rxtail - c->rxhead, s->maxpay, &h, &pl, &len);
            if (fl == TCP_FRAME_BAD) {
                if (s->closing) {
                    conn_kill(s, c, false);
                    return n;
                }
                die(s, "progress", "rank %d sent a malformed message (corrupt peer?)", p);
            }
            if (fl == TCP_FRAME_MORE) {
                if (inplace_start(s, c, &h, len)) len = 0;
                break;
            }
            if (h.op == TCP_OP_BYE) {
                if (conn_held(c)) { /* it leaves after what is held: read no more */
                    c->bye_held = 1;
                    c->rxhead += (size_t)fl;
                    return n;
                }
                pr->gone = 1;
                q_drop(pr);
            } else if (!s->closing && !pr->gone) {
                int k = (h.flags & CR_HDR_LANE) != 0;
                if (c->park[k]) {
                    park_add(s, c, k, &h, pl, len); /* behind its kind's refused frame */
                } else if (!s->env.deliver(s->env.owner, p, &h, pl, len)) {
                    park_add(s, c, k, &h, pl, len);
                    c->stalled[k] = *s->env.recv_gen + 1;
                } else {
                    n++;
                    hot_is(s, c);
                }
            }
            c->rxhead += (size_t)fl;
        }
        if (n >= TCP_BUDGET || c->parked >= TCP_PARK_LIMIT) return n;
        if (c->ip_dst) continue;
        if (c->rxhead == c->rxtail) c->rxhead = c->rxtail = 0;
        if (!c->readable) return n;
        size_t have = c->rxtail - c->rxhead;
        size_t need = have >= TCP_HDR_LEN ? TCP_HDR_LEN + (size_t)len : TCP_HDR_LEN;
        if (c->rxcap < need) { /* a frame larger than the buffer: grow it once */
            if (c->rxhead) {
                memmove(c->rx, c->rx + c->rxhead, have);
                c->rxhead = 0;
                c->rxtail = have;
            }
            unsigned char *r = realloc(c->rx, need);
            if (!r) die(s, "progress", "tcp: out of memory for a receive buffer");
            c->rx = r;
            c->rxcap = need;
        } else if (c->rxcap - c->rxhead < need || c->rxtail == c->rxcap) {
            memmove(c->rx, c->rx + c->rxhead, have);
            c->rxhead = 0;
            c->rxtail = have;
        }
        size_t room = c->rxcap - c->rxtail;
        ssize_t r = recv(c->fd, c->rx + c->rxtail, room, 0);
        if (r > 0) {
            c->rxtail += (size_t)r;
            if ((size_t)r < room) c->readable = 0;
            continue;
        }
        if (r == 0) {
            conn_ended(s, c, 0);
            return n;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            c->readable = 0;
            if (c->broken) conn_ended(s, c, c->broken);
            return n;
        }
        conn_ended(s, c, errno);
        return n;
    }
}

/* Does c have work that needs no new event? */
static bool conn_busy(const tcp_state *s, const tcp_conn *c)
{
    if (c->state == ST_DEAD) return false;
    if (c->state == ST_HANDSHAKE) return c->readable || (c->writable && c->auth->outlen);
    for (int k = 0; k < 2; k++)
        if (c->park[k] && (s->closing || c->stalled[k] != *s->env.recv_gen + 1)) return true;
    if (c->bye_held || c->parked >= TCP_PARK_LIMIT) return false;
    if (c->readable) return true;
    cr_hdr h;
    const unsigned char *pl;
    uint32_t len;
    return tcp_decode(c->rx + c->rxhead, c->rxtail - c->rxhead, s->maxpay, &h, &pl, &len) != 0;
}

/* ---- accepting -------------------------------------------------------------- */

static void accept_some(tcp_state *s)
{
    for (int i = 0; i < 16; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE) /* a peer would wait for us forever */
                die(s, "progress",
                    "tcp: cannot accept a connection: %s (each rank needs a descriptor per "
                    "peer it talks to; raise the open-file limit, ulimit -n)",
                    strerror(errno));
            s->listen_more = false; /* EAGAIN */
            return;
        }
        if (s->nstrangers >= TCP_MAX_STRANGERS + s->env.size) {
            for (tcp_conn *o = s->conns; o; o = o->next)
                if (o->stranger) {
                    warn_once(s, W_FLOOD,
                              "tcp: more than %d connections at once have not proved they "
                              "belong to this job; dropping the oldest",
                              TCP_MAX_STRANGERS + s->env.size);
                    conn_kill(s, o, true);
                    break;
                }
        }
        tcp_conn *c = conn_new(s, fd, 1, -1);
        fmt_addr((struct sockaddr *)&ss, c->who, sizeof c->who);
        c->stranger = 1;
        s->nstrangers++;
        c->since = now_ms();
        unsigned char nonce[TCP_AUTH_NONCE];
        if (tcp_crypto_random(nonce, sizeof nonce))
            die(s, "progress", "tcp: no random bytes for a nonce");
        tcp_auth_accept(c->auth, s->env.secret, s->env.rank, s->env.size, s->may, nonce);
        c->readable = 1;
        c->writable = 1;
        ready_push(s, c);
        timer_want(s, c->since + s->hs_ms);
    }
}

/* ---- timers ----------------------------------------------------------------- */

static void timers(tcp_state *s)
{
    uint64_t now = now_ms();
    s->timer_at = 0;
    for (tcp_conn *c = s->conns; c; c = c->next) {
        if (!c->stranger || c->state == ST_DEAD) continue;
        if (now >= c->since + s->hs_ms) {
            if (!c->hello_ok)
                warn_once(s, W_SLOW,
                          "tcp: refused a connection from %s: it did not prove it belongs to "
                          "this job within %d s",
                          c->who, (int)(s->hs_ms / 1000));
            conn_kill(s, c, true);
        } else
            timer_want(s, c->since + s->hs_ms);
    }
    for (int p = 0; p < s->env.size; p++) {
        tcp_peer *pr = &s->peers[p];
        if (!pr->retry_at) continue;
        if (now >= pr->retry_at) {
            pr->retry_at = 0;
            if (!pr->conn && !pr->gone && (pr->qbytes || s->closing)) start_connect(s, p);
        } else
            timer_want(s, pr->retry_at);
    }
}

/* ---- progress --------------------------------------------------------------- */

static int progress(tcp_state *s)
{
    int n = 0;
    /* The fast path: the peer we just sent to (or heard from) is the likeliest
     * to have sent; read its socket directly, and ask epoll only every fourth
     * round (one system call per round, not two). */
    tcp_conn *hot = s->hot;
    if (hot && hot->state == ST_UP && !conn_held(hot) && !hot->broken) {
        hot->readable = 1;
        n = conn_read(s, hot);
        if (hot->state == ST_UP && (conn_busy(s, hot) || conn_held(hot))) ready_push(s, hot);
        if (s->hot == hot && s->quiet != hot && hot->state == ST_UP && !conn_held(hot) &&
            ++s->hot_n >= TCP_QUIET_ROUNDS)
            quiet_set(s, hot, true);
        if (++s->rounds & 3) goto rest;
    } else if (s->quiet) {
        quiet_set(s, s->quiet, false);
    }
    struct epoll_event ev[TCP_EVENTS];
    int k = epoll_wait(s->epfd, ev, TCP_EVENTS, 0);
    for (int i = 0; i < k; i++) {
        void *ptr = ev[i].data.ptr;
        uint32_t e = ev[i].events;
        if (ptr == &s->lkey) {
            s->listen_more = true;
            continue;
        }
        if (ptr == &s->tkey) {
            uint64_t x;
            if (read(s->tfd, &x, sizeof x) < 0) { /* nothing: it re-arms below */
            }
            continue;
        }
        tcp_conn *c = ptr;
        if (c->state == ST_DEAD) continue;
        if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) c->readable = 1;
        if (e & EPOLLOUT) c->writable = 1;
        if (c->state == ST_UP && (e & EPOLLOUT) && s->peers[c->peer].qbytes) q_flush(s, c->peer);
        if (c->state != ST_UP || c->readable) ready_push(s, c);
    }
    if (s->listen_more) accept_some(s);
    uint32_t epoch = ++s->epoch;
    for (tcp_conn *c = s->ready, *next; c; c = next) {
        next = c->rnext;
        if (c->epoch == epoch) continue;
        c->epoch = epoch;
        if (c->state == ST_HANDSHAKE)
            hs_progress(s, c);
        else if (c->state == ST_UP)
            n += conn_read(s, c);
        if (!conn_busy(s, c) && !(c->state == ST_UP && conn_held(c))) ready_del(s, c);
    }
rest:
    if (s->timer_at && now_ms() >= s->timer_at) timers(s);
    if (s->ndead) free_dead(s);
    return n;
}

static int tcp_poll(void *ctx)
{
    tcp_state *s = ctx;
    if (s->in_poll) return 0;
    s->in_poll = true;
    int n = progress(s);
    s->in_poll = false;
    return n;
}

static int tcp_arm(void *ctx)
{
    tcp_state *s = ctx;
    if (s->quiet) quiet_set(s, s->quiet, false); /* epoll watches all while we sleep */
    if (s->listen_more) return 1;
    for (tcp_conn *c = s->ready; c; c = c->rnext)
        if (conn_busy(s, c)) return 1;
    if (s->timer_at && now_ms() >= s->timer_at) return 1;
    return 0;
}

static int tcp_fd(void *ctx)
{
    return ((tcp_state *)ctx)->epfd;
}

/* ---- sending ---------------------------------------------------------------- */

static int tcp_send_am(void *ctx, int p, const cr_hdr *h, const void *payload, size_t len)
{
    tcp_state *s = ctx;
    tcp_peer *pr = &s->peers[p];
    if (pr->gone) return 0; /* it left: nothing will ever read this */
    if (len > s->maxpay) die(s, "progress", "tcp: a message of %zu bytes exceeds the chunk", len);
    tcp_conn *c = pr->conn;
    bool up = c && c->state == ST_UP;
    unsigned char hb[TCP_HDR_LEN];
    if (pr->qbytes) {
        if (up && c->writable) q_flush(s, p);
        if (pr->qbytes) {
            if (h->op == CR_OP_DATA || pr->qbytes + len > TCP_QUEUE_LIMIT) return CR_EAGAIN;
            tcp_encode(hb, h, (uint32_t)len);
            q_add(s, pr, hb, sizeof hb, payload, len);
            return 0;
        }
    }
    tcp_encode(hb, h, (uint32_t)len);
    if (!up || c->broken) {
        q_add(s, pr, hb, sizeof hb, payload, len);
        if (!c && !pr->retry_at) start_connect(s, p);
        return 0;
    }
    size_t total = sizeof hb + len;
    ssize_t n;
    if (len <= TCP_SMALL) {
        /* header and payload copied into one buffer and sent with send(2):
         * cheaper than sendmsg's iovec for a small frame (osu_latency 8 B on
         * loopback 3.27 -> 3.21 us, bench/results/tcp-osu.md) */
        unsigned char fb[TCP_HDR_LEN + TCP_SMALL];
        memcpy(fb, hb, sizeof hb);
        if (len) memcpy(fb + sizeof hb, payload, len);
        do n = send(c->fd, fb, total, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
    } else {
        struct iovec iov[2] = {{hb, sizeof hb}, {(void *)payload, len}};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
        do n = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
    }
    hot_is(s, c);
    if ((size_t)n == total) return 0;
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK) conn_broken(s, c, errno);
        n = 0;
    }
    c->writable = 0;
    size_t done = (size_t)n;
    if (done < sizeof hb)
        q_add(s, pr, hb + done, sizeof hb - done, payload, len);
    else
        q_add(s, pr, NULL, 0, (const char *)payload + (done - sizeof hb), total - done);
    return 0;
}

static void tcp_flush(void *ctx)
{
    tcp_state *s = ctx;
    for (int p = 0; p < s->env.size; p++) {
        tcp_peer *pr = &s->peers[p];
        if (pr->qbytes && pr->conn && pr->conn->state == ST_UP && pr->conn->writable) q_flush(s, p);
    }
}

static size_t tcp_max_payload(void *ctx, int peer)
{
    (void)peer;
    return ((tcp_state *)ctx)->maxpay;
}

static int tcp_peer_gone(void *ctx, int peer)
{
    return ((tcp_state *)ctx)->peers[peer].gone;
}

/* ---- opening: the listening address ---------------------------------------- */

/* The address to listen on, from COURIER_NET: an address, a prefix
 * (address/bits) that one of this host's addresses is in, or an interface's
 * name (its first IPv4 address, else its first IPv6 one); default 127.0.0.1. */
static int pick_address(tcp_state *s, const char *net, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in4 = (void *)ss;
    struct sockaddr_in6 *in6 = (void *)ss;
    if (!net || !*net) net = "127.0.0.1";
    if (inet_pton(AF_INET, net, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, net, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        return 0;
    }
    cr_net_spec spec;
    if (cr_net_parse(net, &spec))
        die(s, "init", "COURIER_NET=%s is not an address/prefix; give e.g. 10.0.0.0/8", net);
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs)) die(s, "init", "tcp: getifaddrs: %s", strerror(errno));
    const struct ifaddrs *best = NULL;
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        const struct sockaddr *sa = i->ifa_addr;
        if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) continue;
        if (!cr_net_matches(&spec, i)) continue;
        bool v4 = sa->sa_family == AF_INET;
        bool ll = !v4 && IN6_IS_ADDR_LINKLOCAL(
                             &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
        if (!best) {
            best = i;
            if (v4) break;
            continue;
        }
        bool bv4 = best->ifa_addr->sa_family == AF_INET;
        bool bll =
            !bv4 && IN6_IS_ADDR_LINKLOCAL(
                        &((const struct sockaddr_in6 *)(const void *)best->ifa_addr)->sin6_addr);
        if (v4 || (bll && !ll)) best = i;
        if (v4) break;
    }
    int rc = -1;
    if (best) {
        memcpy(ss, best->ifa_addr,
               best->ifa_addr->sa_family == AF_INET ? sizeof *in4 : sizeof *in6);
        if (ss->ss_family == AF_INET)
            in4->sin_port = 0;
        else {
            in6->sin6_port = 0;
            if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr))
                in6->sin6_scope_id = if_nametoindex(best->ifa_name);
        }
        rc = 0;
    }
    freeifaddrs(ifs);
    if (rc)
        die(s, "init",
            "COURIER_NET=%s names no address of this host (give an address, a prefix such as "
            "10.0.0.0/8, or an interface such as lo)",
            net);
    return 0;
}

/* ---- open and close --------------------------------------------------------- */

static void free_state(tcp_state *s)
{
    for (tcp_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (c->fd >= 0) close(c->fd);
        conn_free(c);
    }
    if (s->peers)
        for (int p = 0; p < s->env.size; p++) q_drop(&s->peers[p]);
    if (s->lfd >= 0) close(s->lfd);
    if (s->tfd >= 0) close(s->tfd);
    if (s->epfd >= 0) close(s->epfd);
    free(s->peers);
    free(s->may);
    free(s);
}

static int tcp_open(void **ctx, const cr_tp_env *env)
{
    if (!env->secret)
        env->fatal(env->owner, "init",
                   "tcp needs the job's secret; start the program with courier run");
    /* Load libcrypto now (tcp_crypto.c): before the job registers its exit
     * handler, and with none of its own, as close (at exit) still makes nonces. */
    char why[200];
    if (tcp_crypto_load(why, sizeof why)) {
        char msg[240];
        snprintf(msg, sizeof msg, "tcp: %s", why);
        env->fatal(env->owner, "init", msg);
    }
    tcp_state *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    s->env = *env;
    s->lfd = s->tfd = s->epfd = -1;
    s->maxpay = TCP_MAX_PAYLOAD;
    s->hs_ms = (uint64_t)TCP_HANDSHAKE_MS * (uint64_t)(env->crowding > 1 ? env->crowding : 1);
    s->peers = calloc((size_t)env->size, sizeof *s->peers);
    s->may = calloc((size_t)env->size, 1);
    if (!s->peers || !s->may) {
        free_state(s);
        return -ENOMEM;
    }
    struct sockaddr_storage ss;
    pick_address(s, env->net, &ss);
    socklen_t sl =
        ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    s->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int rc = 0;
    if (s->epfd < 0 || s->tfd < 0 || s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&ss, sl) ||
        listen(s->lfd, SOMAXCONN) || getsockname(s->lfd, (struct sockaddr *)&ss, &sl))
        rc = -errno;
    if (rc) {
        char a[64];
        fmt_addr((struct sockaddr *)&ss, a, sizeof a);
        free_state(s);
        char msg[160];
        snprintf(msg, sizeof msg, "tcp: cannot listen on %s: %s", a, strerror(-rc));
        env->fatal(env->owner, "init", msg);
    }
    fmt_addr((struct sockaddr *)&ss, s->addr, sizeof s->addr);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = &s->lkey};
    struct epoll_event tev = {.events = EPOLLIN, .data.ptr = &s->tkey};
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev) ||
        epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &tev)) {
        rc = -errno;
        free_state(s);
        return rc;
    }
    tcp_card card;
    memset(&card, 0, sizeof card);
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)&ss;
        card.family = 4;
        card.port = in->sin_port;
        memcpy(card.addr, &in->sin_addr, 4);
    } else {
        const struct sockaddr_in6 *in = (const void *)&ss;
        card.family = 6;
        card.port = in->sin6_port;
        card.scope = in->sin6_scope_id;
        memcpy(card.addr, &in->sin6_addr, 16);
    }
    rc = env->card_put(env->owner, &card, sizeof card);
    if (rc) {
        free_state(s);
        char msg[160];
        snprintf(msg, sizeof msg, "tcp: cannot publish this rank's address: %s", strerror(-rc));
        env->fatal(env->owner, "init", msg);
    }
    *ctx = s;
    return 0;
}

static bool tcp_reaches(void *ctx, int peer)
{
    return peer != ((tcp_state *)ctx)->env.rank;
}

static void tcp_own(void *ctx, int peer)
{
    ((tcp_state *)ctx)->may[peer] = 1;
}

/* Leave: flush, say BYE, shut the write side, wait (bounded) until the kernel
 * has delivered every byte, reading and discarding meanwhile; then close. */
static void tcp_close(void *ctx)
{
    tcp_state *s = ctx;
    s->closing = true;
    uint64_t start = now_ms();
    static const cr_hdr bye = {.op = TCP_OP_BYE};
    for (;;) {
        tcp_poll(s);
        bool busy = false;
        for (int p = 0; p < s->env.size; p++) {
            tcp_peer *pr = &s->peers[p];
            if (!s->may[p] || pr->gone || pr->done) continue;
            tcp_conn *c = pr->conn;
            if (!c) {
                if (!pr->qbytes) {
                    pr->done = 1;
                    continue;
                }
                busy = true;
                if (!pr->retry_at) start_connect(s, p);
                continue;
            }
            if (c->state != ST_UP) {
                busy = true;
                continue;
            }
            if (c->broken) {
                pr->done = 1;
                continue;
            }
            if (!pr->bye_out) {
                unsigned char hb[TCP_HDR_LEN];
                tcp_encode(hb, &bye, 0);
                q_add(s, pr, hb, sizeof hb, NULL, 0);
                pr->bye_out = 1;
                c->writable = 1;
            }
            if (pr->qbytes) {
                if (c->writable) q_flush(s, p);
                if (pr->qbytes) {
                    busy = true;
                    continue;
                }
            }
            if (!c->shut) {
                shutdown(c->fd, SHUT_WR);
                c->shut = 1;
            }
            int outq = 0;
            if (ioctl(c->fd, SIOCOUTQ, &outq) == 0 && outq > 0) {
                busy = true;
                continue;
            }
            pr->done = 1;
        }
        if (!busy) break;
        if (now_ms() - start > TCP_CLOSE_MS) {
            for (int p = 0; p < s->env.size; p++)
                if (s->may[p] && !s->peers[p].gone && !s->peers[p].done)
                    warn_once(s, W_CLOSE,
                              "tcp: leaving after %d s while rank %d has not taken all this "
                              "rank sent it (it may be stuck or gone)",
                              TCP_CLOSE_MS / 1000, p);
            break;
        }
        struct pollfd pfd = {.fd = s->epfd, .events = POLLIN};
        poll(&pfd, 1, 1);
    }
    free_state(s);
}

const cr_transport cr_transport_tcp = {
    .name = "tcp",
    .caps = CR_CAP_FD,
    .open = tcp_open,
    .reaches = tcp_reaches,
    .own = tcp_own,
    .close = tcp_close,
    .send_am = tcp_send_am,
    .poll = tcp_poll,
    .flush = tcp_flush,
    .arm = tcp_arm,
    .fd = tcp_fd,
    .peer_gone = tcp_peer_gone,
    .max_payload = tcp_max_payload,
};
