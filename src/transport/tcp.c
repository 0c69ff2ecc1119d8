/* TCP transport: peers on other hosts (or every peer, with COURIER_TRANSPORTS=tcp),
 * over one authenticated connection per pair of ranks. This file moves the
 * frames (send queues, receiving, progress, leaving) and holds the transport's
 * table; tcp_connect.c makes the connections (listening, calling, accepting,
 * the handshake) and tcp_internal.h holds the state both share.
 *
 * Invariants:
 *  - nothing is read from or written to a connection here before it is
 *    ST_UP (tcp_connect.c: the handshake has proven the peer);
 *  - a peer's send queue (peers[p].q*) continues the byte stream exactly where
 *    the socket stopped: a frame is written whole, or its rest is queued, and
 *    nothing is written directly while anything is queued; send_am says
 *    CR_EAGAIN (nothing sent, nothing queued) when the queue holds more than
 *    TCP_QUEUE_LIMIT, or holds anything when a DATA chunk comes (large messages
 *    then stream from the user's buffer, without a copy into the queue);
 *  - the sockets, the listener and the timerfd are in one epoll set,
 *    edge-triggered (no epoll_ctl per message); only the
 *    hot connection, read directly every poll and writable, may be out of the
 *    set (quiet), and never while the rank sleeps; a connection's readable/writable flags
 *    say what epoll reported and no short read or write has since contradicted;
 *    its mask holds EPOLLOUT exactly while writable is 0 and it is not broken
 *    (tcp_watch), so re-adding a writable socket before a sleep reports nothing;
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
 *  - a connection is freed only at the end of a poll round (tcp_conn_kill
 *    marks it), so no pointer taken in that round dangles;
 *  - an authenticated peer leaves with BYE; an end of stream without it is the
 *    job's end ("lost the connection to rank P", said after TCP_LOST_MS unless the
 *    launcher, which saw the peer die, ended the job first); at close, queued output is
 *    flushed, BYE sent, the write side shut and the kernel's send queue drained
 *    (bounded) before the sockets are closed, reading and discarding meanwhile,
 *    so our last bytes are never destroyed by a reset. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tcp_wire.h"
#include "tcp_internal.h"

#define TCP_QUEUE_LIMIT (1u << 20)  /* bytes queued per peer before CR_EAGAIN */
#define TCP_INPLACE_MIN (16u << 10) /* DATA frames this long are read in place */
#define TCP_BLOCK (64u << 10)       /* queue blocks hold at least this much */
#define TCP_BUDGET 64               /* frames from one connection per poll */
#define TCP_CLOSE_MS 10000          /* close waits at most this long for peers */
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

/* ---- small helpers, and the hot connection ---------------------------------- */

static void lower(char *p)
{
    if (*p >= 'A' && *p <= 'Z') *p += 'a' - 'A';
}

/* The hot connection, once read directly TCP_QUIET_ROUNDS polls in a row, leaves
 * the epoll set (quiet): the kernel then runs no epoll callback for its peer's
 * packets, which it does for a socket in the set whatever the interest mask
 * (osu_latency 8 B on loopback, bench/results/tcp-osu.md). It is put back with
 * EPOLL_CTL_ADD, which reports at once what is already there (edge-triggered
 * too), when another connection becomes hot, when the fast path cannot read
 * it, when a write to it comes short (only epoll says when it drains), and
 * before the rank sleeps (tcp_arm): nothing waits on epoll for a quiet
 * connection. Nor does it leave while another thread of the rank sleeps on
 * the epoll set (env.pollers): that thread would not hear its messages (two
 * threads waiting at once, one woken after its nap, 100 ms). */
static void quiet_set(tcp_state *s, tcp_conn *c, bool quiet)
{
    if (quiet) {
        if (epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL))
            die(s, "progress", "tcp: epoll_ctl: %s", strerror(errno));
        c->events = 0;
        s->quiet = c;
    } else {
        s->quiet = NULL;
        tcp_watch(s, c);
    }
}

/* EPOLLOUT is asked for only while a write has come short (writable 0): a
 * writable socket is always EPOLLOUT-ready, and adding it back (EPOLL_CTL_ADD
 * or _MOD, edge-triggered or not) reports what is ready at once; so a mask
 * that kept EPOLLOUT made every re-add before a sleep (tcp_arm) wake the epoll
 * set at once, and a rank waiting in MPI_Recv spun at ~50-90 % of a core
 * instead of sleeping (transport_quiet_tcp). A broken connection waits for
 * nothing but its read side. */
void tcp_watch(tcp_state *s, tcp_conn *c)
{
    uint32_t want = EPOLLIN | EPOLLRDHUP | EPOLLET | (c->writable || c->broken ? 0u : EPOLLOUT);
    if (s->quiet == c || c->events == want) return;
    struct epoll_event ev = {.events = want, .data.ptr = c};
    if (epoll_ctl(s->epfd, c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev))
        die(s, "progress", "tcp: epoll_ctl: %s", strerror(errno));
    c->events = want;
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

void tcp_q_drop(tcp_peer *pr)
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
    tcp_watch(s, c);
    ready_push(s, c);
}

/* Write what is queued for peer p (its connection is up). */
void tcp_q_flush(tcp_state *s, int p)
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
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                c->writable = 0;
                tcp_watch(s, c);
            } else {
                conn_broken(s, c, errno);
            }
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
            tcp_watch(s, c);
            return;
        }
    }
}

/* ---- receiving -------------------------------------------------------------- */

/* The read side of an authenticated connection ended (err, or 0: closed). */
static void conn_ended(tcp_state *s, tcp_conn *c, int err)
{
    int p = c->peer;
    if (s->peers[p].gone || s->closing) {
        tcp_conn_kill(s, c, false);
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
            tcp_q_drop(pr);
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
                    tcp_conn_kill(s, c, false);
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
                tcp_q_drop(pr);
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

/* ---- progress --------------------------------------------------------------- */

static int progress(tcp_state *s)
{
    int n = 0;
    bool timers = false;
    /* The fast path: the peer we just sent to (or heard from) is the likeliest
     * to have sent; read its socket directly, and ask epoll only every fourth
     * round (one system call per round, not two). */
    tcp_conn *hot = s->hot;
    if (hot && hot == s->quiet && !hot->writable) { /* a short write: epoll says when it drains */
        quiet_set(s, hot, false);
        s->hot_n = 0;
    }
    if (hot && hot->state == ST_UP && !conn_held(hot) && !hot->broken) {
        hot->readable = 1;
        n = conn_read(s, hot);
        if (hot->state == ST_UP && (conn_busy(s, hot) || conn_held(hot))) ready_push(s, hot);
        if (s->hot == hot && s->quiet != hot && hot->state == ST_UP && !conn_held(hot) &&
            hot->writable && ++s->hot_n >= TCP_QUIET_ROUNDS && !*s->env.pollers)
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
            if (read(s->tfd, &x, sizeof x) < 0) { /* nothing: tcp_timers re-arms it */
            }
            timers = true;
            continue;
        }
        tcp_conn *c = ptr;
        if (c->state == ST_DEAD) continue;
        if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) c->readable = 1;
        if (e & EPOLLOUT) c->writable = 1;
        if (c->state == ST_UP && (e & EPOLLOUT) && s->peers[c->peer].qbytes)
            tcp_q_flush(s, c->peer);
        if (e & EPOLLOUT) tcp_watch(s, c); /* drained: EPOLLOUT out of the mask */
        if (c->state != ST_UP || c->readable) ready_push(s, c);
    }
    if (s->listen_more) tcp_accept_some(s);
    uint32_t epoch = ++s->epoch;
    for (tcp_conn *c = s->ready, *next; c; c = next) {
        next = c->rnext;
        if (c->epoch == epoch) continue;
        c->epoch = epoch;
        if (c->state == ST_HANDSHAKE)
            tcp_hs_progress(s, c);
        else if (c->state == ST_UP)
            n += conn_read(s, c);
        if (!conn_busy(s, c) && !(c->state == ST_UP && conn_held(c))) ready_del(s, c);
    }
rest:
    /* timers run when the timerfd fires, not by reading the clock every poll
     * (4 % of osu_latency's samples while timer_at was set, bench/results/tcp-osu.md) */
    if (timers) tcp_timers(s);
    if (s->ndead) tcp_free_dead(s);
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
    return 0; /* a due timer has made the timerfd, so the epoll set, readable */
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
        if (up && c->writable) tcp_q_flush(s, p);
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
        if (!c && !pr->retry_at) tcp_start_connect(s, p);
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
    tcp_watch(s, c);
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
        if (pr->qbytes && pr->conn && pr->conn->state == ST_UP && pr->conn->writable)
            tcp_q_flush(s, p);
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

/* ---- the transport ---------------------------------------------------------- */

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
                if (!pr->retry_at) tcp_start_connect(s, p);
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
                if (c->writable) tcp_q_flush(s, p);
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
    tcp_free_state(s);
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
