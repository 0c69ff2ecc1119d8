/* TCP transport, making connections (the frames they carry: tcp.c; the state
 * both files share: tcp_internal.h).
 *
 * Wire-up: at open, a non-blocking listening socket on the address COURIER_NET
 * picks (default 127.0.0.1) is published as this rank's card. A connection is
 * made on first use: the first send_am to a peer reads its card and connects
 * (tcp_start_connect); messages queue in user space (tcp.c) until the
 * connection is authenticated and goes up (go_up flushes them).
 *
 * Invariants:
 *  - no byte from a connection reaches the engine before the handshake of
 *    tcp_auth.h has proven that both ends hold the job's secret, and the peer is
 *    one this transport serves (own): a connection is ST_HANDSHAKE, read only
 *    by tcp_hs_progress, until go_up makes it ST_UP; strangers are refused and
 *    each kind of refusal is logged once; at most TCP_MAX_STRANGERS + one per
 *    rank unproven connections are kept (the oldest goes first: a connection
 *    storm of the job's own start-up never reaches it) and each gets
 *    TCP_HANDSHAKE_MS (times the host's ranks per CPU: a crowded host's members
 *    may not run for seconds) to prove itself; nothing ever blocks on them;
 *  - at most one connection per peer serves traffic (peers[p].conn). When both
 *    ends call each other at once, the connection the lower rank made is kept:
 *    the acceptor decides when the connector's proof arrives and only then says
 *    WELCOME, and a connector sends frames only after its WELCOME, so no frame
 *    is ever sent on a connection that is dropped;
 *  - a peer whose address refuses is called again with a back-off (up to
 *    TCP_RETRY_MAX_MS); refusing for TCP_REFUSED_MS ends the job; a peer whose
 *    card says it has left is gone (nothing queued for it is kept);
 *  - sockets are non-blocking, made with TCP_NODELAY and without BBR's pacing,
 *    and registered, edge-triggered, in one epoll set with the listener and a
 *    timerfd (conn_new), EPOLLOUT asked for only while a handshake write has
 *    come short (tcp_watch, tcp.c); the timerfd is armed for the earliest deadline
 *    (a stranger's, a call's retry) and never later;
 *  - a connection is freed only at the end of a poll round (tcp_conn_kill
 *    marks it, tcp_free_dead frees it), so no pointer taken in that round
 *    dangles. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "tcp_crypto.h"
#include "tcp_internal.h"

_Static_assert(CR_SECRET_LEN == TCP_AUTH_KEY, "the job's secret is the handshake's key");

#define TCP_MAX_PAYLOAD (1u << 20) /* DATA chunk (1 MiB: +5-10 % over 256 KiB at 4 MiB) */
#define TCP_RX_MIN (64u << 10)     /* an rx buffer's first size (grows to a frame) */
#define TCP_MAX_STRANGERS 64       /* unproven connections kept at once, beyond one per rank */
#define TCP_HANDSHAKE_MS 3000      /* an accepted connection has this long to prove itself */
#define TCP_RETRY_MAX_MS 1000      /* connect retries back off up to this */
#define TCP_REFUSED_MS 30000       /* a peer refusing for this long ends the job */

/* A rank's card: where its listening socket is. */
typedef struct tcp_card {
    uint8_t family; /* 4 or 6 */
    uint8_t pad;
    uint16_t port; /* network order */
    uint32_t scope;
    uint8_t addr[16];
} tcp_card;

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

/* ---- connections ------------------------------------------------------------ */

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
    c->writable = 1; /* try at once: a short write asks epoll for EPOLLOUT */
    tcp_watch(s, c);
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
void tcp_conn_kill(tcp_state *s, tcp_conn *c, bool reset)
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

void tcp_free_dead(tcp_state *s)
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
    tcp_q_drop(pr);
    if (pr->conn) tcp_conn_kill(s, pr->conn, false);
}

void tcp_start_connect(tcp_state *s, int p)
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
    tcp_hs_progress(s, c); /* EAGAIN until connected, then EPOLLOUT says */
}

/* Our call to peer p ended before its WELCOME (refused, reset, closed). A lower
 * rank closes our call when it is calling us at the same time; a peer that has
 * left refuses. Call again a little later unless its card says it is gone. */
static void call_failed(tcp_state *s, tcp_conn *c, int err)
{
    int p = c->peer;
    tcp_conn_kill(s, c, false);
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
    if (pr->qbytes && c->writable) tcp_q_flush(s, p);
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
    tcp_conn_kill(s, c, rc != 0);
}

/* The acceptor has the connector's proof: keep this connection, unless one to
 * the same peer is already kept or (ours, in the handshake) wins by rank. */
static void decide(tcp_state *s, tcp_conn *c)
{
    int p = c->auth->peer;
    tcp_peer *pr = &s->peers[p];
    tcp_conn *old = pr->conn;
    if (pr->gone || (old && (old->accept || old->state == ST_UP)) || (old && p > s->env.rank)) {
        tcp_conn_kill(s, c, false); /* the other connection wins */
        return;
    }
    if (old) tcp_conn_kill(s, old, false); /* our call loses to the lower rank's */
    c->stranger = 0;
    s->nstrangers--;
    c->peer = p;
    pr->conn = c;
    tcp_auth_welcome(c->auth);
}

/* Move the handshake of c as far as the socket allows. */
void tcp_hs_progress(tcp_state *s, tcp_conn *c)
{
    tcp_auth *a = c->auth;
    for (;;) {
        if (a->outoff < a->outlen && c->writable) {
            ssize_t n = send(c->fd, a->out + a->outoff, a->outlen - a->outoff, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR) continue;
                if (errno != EAGAIN && errno != EWOULDBLOCK) goto failed;
                c->writable = 0;
                tcp_watch(s, c);
            } else {
                a->outoff += (size_t)n;
                if (a->outoff == a->outlen) {
                    a->outoff = a->outlen = 0;
                } else {
                    c->writable = 0;
                    tcp_watch(s, c);
                }
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
        tcp_conn_kill(s, c, false); /* a proven peer dropped its call before WELCOME */
    else
        call_failed(s, c, errno);
}

/* ---- accepting -------------------------------------------------------------- */

void tcp_accept_some(tcp_state *s)
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
                    tcp_conn_kill(s, o, true);
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
        ready_push(s, c);
        timer_want(s, c->since + s->hs_ms);
    }
}

/* ---- timers ----------------------------------------------------------------- */

void tcp_timers(tcp_state *s)
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
            tcp_conn_kill(s, c, true);
        } else
            timer_want(s, c->since + s->hs_ms);
    }
    for (int p = 0; p < s->env.size; p++) {
        tcp_peer *pr = &s->peers[p];
        if (!pr->retry_at) continue;
        if (now >= pr->retry_at) {
            pr->retry_at = 0;
            if (!pr->conn && !pr->gone && (pr->qbytes || s->closing)) tcp_start_connect(s, p);
        } else
            timer_want(s, pr->retry_at);
    }
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

/* ---- opening: the socket and the card (closing: tcp.c) ---------------------- */

void tcp_free_state(tcp_state *s)
{
    for (tcp_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (c->fd >= 0) close(c->fd);
        conn_free(c);
    }
    if (s->peers)
        for (int p = 0; p < s->env.size; p++) tcp_q_drop(&s->peers[p]);
    if (s->lfd >= 0) close(s->lfd);
    if (s->tfd >= 0) close(s->tfd);
    if (s->epfd >= 0) close(s->epfd);
    free(s->peers);
    free(s->may);
    free(s);
}

int tcp_open(void **ctx, const cr_tp_env *env)
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
        tcp_free_state(s);
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
        tcp_free_state(s);
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
        tcp_free_state(s);
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
        tcp_free_state(s);
        char msg[160];
        snprintf(msg, sizeof msg, "tcp: cannot publish this rank's address: %s", strerror(-rc));
        env->fatal(env->owner, "init", msg);
    }
    *ctx = s;
    return 0;
}
