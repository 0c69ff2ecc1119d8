/* The agents' tree (tree.h): connections, frames, heartbeats and the start of
 * each node's children.
 *
 * Invariants:
 *  - a connection carries frames only after both ends have proven they hold the
 *    job's secret (the tcp transport's handshake, src/transport/tcp_auth.h, with
 *    node numbers for ranks and a key derived from the secret for this use, so
 *    nothing said in the tree can be replayed between ranks or the reverse); a
 *    listener takes only its own children, at most CR_TREE_PENDING unproven at once,
 *    each for HANDSHAKE_MS; the first stranger refused is noted (t->note), once;
 *  - a node listens only where its children reach it: the source address of its
 *    route to each child's host (loopback for agents on this machine), on one
 *    port; on every address only when a host's name does not resolve here;
 *  - the secret reaches an agent on its standard input (through ssh, encrypted),
 *    never in an argument or the environment;
 *  - nothing blocks once the tree stands: frames are queued and written as the
 *    socket takes them; a node sends a heartbeat when it has sent nothing for
 *    hb_ms, and a connection whose data has gone unacknowledged for lost_ms
 *    (TCP_USER_TIMEOUT: its host, or the network to it, is down) is lost, as is
 *    one that closes before DONE; a peer that is merely slow to read is not;
 *  - the tree owns its rsh processes: each is started with PR_SET_PDEATHSIG, and
 *    killed at the end if it still runs. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/close_range.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../transport/tcp_auth.h"
#include "../transport/tcp_crypto.h"
#include "../transport/tp_common.h"
#include "tree.h"

#define now_ms() cr_tp_now_ms()

#define HANDSHAKE_MS 5000
#define CONNECT_MS 2000 /* per address tried */

struct cr_ctl {
    int fd;
    int node;       /* the peer's node (-1 while unproven) */
    tcp_auth *auth; /* while proving itself (accepted connections) */
    uint64_t deadline;
    unsigned char *in;
    size_t inlen, incap;
    unsigned char *out;
    size_t outlen, outoff, outcap;
    uint64_t last_tx;
    bool done;                      /* said DONE: its closing is no loss */
    char gone[200];                 /* how it closed, while its rsh process is awaited */
    char who[INET6_ADDRSTRLEN + 8]; /* an accepted connection's address, for the log */
};

/* Milliseconds from then to now (0 if then is later: it was read after now). */
static uint64_t since(uint64_t now, uint64_t then)
{
    return now > then ? now - then : 0;
}

static void why(cr_tree *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why(cr_tree *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof t->why, fmt, ap);
    va_end(ap);
}

static int derive_key(cr_tree *t, const unsigned char secret[32])
{
    static const char label[] = "courier agent tree v1";
    char err[160];
    if (tcp_crypto_load(err, sizeof err)) {
        why(t, "%s", err);
        return -1;
    }
    if (tcp_crypto_hmac(secret, 32, label, sizeof label - 1, t->key)) {
        why(t, "cannot derive the tree's key (libcrypto failed)");
        return -1;
    }
    return 0;
}

/* A host that stops answering (down, or its network) is found by TCP itself:
 * our heartbeats stay unacknowledged, and after ms the socket fails with
 * ETIMEDOUT. A process that is only slow (blocked writing our output to a
 * terminal) is not: its kernel still acknowledges what we send. */
static void set_lost_after(int fd, uint64_t ms)
{
    unsigned v = (unsigned)ms;
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &v, sizeof v);
}

static cr_ctl *ctl_new(int fd, int node)
{
    cr_ctl *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->fd = fd;
    c->node = node;
    c->last_tx = now_ms();
    return c;
}

static void ctl_free(cr_ctl *c)
{
    if (!c) return;
    if (c->fd >= 0) close(c->fd);
    if (c->auth) {
        tcp_auth_clear(c->auth);
        free(c->auth);
    }
    free(c->in);
    free(c->out);
    free(c);
}

static void ctl_write(cr_ctl *c)
{
    while (c->outoff < c->outlen) {
        ssize_t w = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return; /* EAGAIN, or an error the next read reports */
        }
        c->outoff += (size_t)w;
        c->last_tx = now_ms();
    }
    c->outoff = c->outlen = 0;
}

static void ctl_queue(cr_ctl *c, const void *p, size_t n)
{
    if (c->outoff && c->outoff == c->outlen) c->outoff = c->outlen = 0;
    if (c->outlen + n > c->outcap) {
        if (c->outoff) { /* make room at the front first */
            memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
            c->outlen -= c->outoff;
            c->outoff = 0;
        }
        size_t cap = c->outcap ? c->outcap : 4096;
        while (cap < c->outlen + n) cap *= 2;
        unsigned char *o = realloc(c->out, cap);
        if (!o) return; /* out of memory: the frame is dropped, the peer times out */
        c->out = o;
        c->outcap = cap;
    }
    memcpy(c->out + c->outlen, p, n);
    c->outlen += n;
}

static void ctl_send(cr_ctl *c, int type, int flag, int a, int b, const void *payload, size_t len)
{
    if (!c || c->fd < 0 || c->auth) return;
    cr_frame_hdr h = {
        .len = (uint32_t)len, .type = (uint8_t)type, .flag = (uint8_t)flag, .a = a, .b = b};
    ctl_queue(c, &h, sizeof h);
    if (len) ctl_queue(c, payload, len);
    ctl_write(c);
}

/* ---- addresses ------------------------------------------------------------ */

static int prefix_bits(const struct sockaddr *mask)
{
    if (!mask) return 0;
    const unsigned char *m;
    size_t n;
    if (mask->sa_family == AF_INET) {
        m = (const unsigned char *)&((const struct sockaddr_in *)(const void *)mask)->sin_addr;
        n = 4;
    } else if (mask->sa_family == AF_INET6) {
        m = (const unsigned char *)&((const struct sockaddr_in6 *)(const void *)mask)->sin6_addr;
        n = 16;
    } else
        return 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) bits += __builtin_popcount(m[i]);
    return bits;
}

/* Our addresses for the children, "addr/bits,..." (global ones first, loopback
 * last, IPv6 link-local never: it needs an interface the child cannot name):
 * every one (the wildcard listener), or only those in want[0..nwant). */
static void list_addrs(cr_tree *t, const struct sockaddr_storage *want, int nwant)
{
    struct ifaddrs *ifs;
    t->addrs[0] = 0;
    if (getifaddrs(&ifs)) return;
    size_t off = 0;
    for (int pass = 0; pass < 2; pass++)
        for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
            const struct sockaddr *sa = i->ifa_addr;
            if (!sa || !(i->ifa_flags & IFF_UP)) continue;
            int fam;
            const unsigned char *b = cr_addr_bytes(sa, &fam);
            if (!b) continue;
            if (fam == AF_INET6 && IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)(const void *)b))
                continue;
            bool loop = (i->ifa_flags & IFF_LOOPBACK) != 0;
            if (loop != (pass == 1)) continue;
            bool wanted = !want;
            char a[INET6_ADDRSTRLEN];
            for (int w = 0; w < nwant && !wanted; w++) {
                int wf;
                const unsigned char *wb = cr_addr_bytes((const struct sockaddr *)&want[w], &wf);
                wanted = wb && wf == fam && !memcmp(wb, b, fam == AF_INET ? 4 : 16);
            }
            if (!wanted) continue;
            inet_ntop(fam, b, a, sizeof a);
            int n = snprintf(t->addrs + off, sizeof t->addrs - off, "%s%s/%d", off ? "," : "", a,
                             prefix_bits(i->ifa_netmask));
            if (n < 0 || (size_t)n >= sizeof t->addrs - off) {
                t->addrs[off] = 0;
                pass = 2;
                break;
            }
            off += (size_t)n;
        }
    freeifaddrs(ifs);
    /* An address no interface lists (127.0.1.1 on lo's 127/8): as it is. */
    for (int w = 0; w < nwant; w++) {
        int wf;
        const unsigned char *wb = cr_addr_bytes((const struct sockaddr *)&want[w], &wf);
        char a[INET6_ADDRSTRLEN];
        if (!wb || !inet_ntop(wf, wb, a, sizeof a)) continue;
        if (strstr(t->addrs, a)) continue;
        int n = snprintf(t->addrs + off, sizeof t->addrs - off, "%s%s/%d", off ? "," : "", a,
                         wf == AF_INET ? 32 : 128);
        if (n < 0 || (size_t)n >= sizeof t->addrs - off) break;
        off += (size_t)n;
    }
}

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    int fa, fb;
    const unsigned char *pa = cr_addr_bytes((const struct sockaddr *)a, &fa);
    const unsigned char *pb = cr_addr_bytes((const struct sockaddr *)b, &fb);
    return pa && pb && fa == fb && !memcmp(pa, pb, fa == AF_INET ? 4 : 16);
}

/* Where our children reach us: for each child's host, the address this host's
 * route to it leaves from (a loopback address when the host is this one; only
 * loopback when the agents run here, --rsh none). The count (at most
 * CR_TREE_LISTEN), or -1 when a name does not resolve here (an ssh alias, a
 * network namespace's name: nothing tells where its agent comes from) or the
 * routes are more than a listener each can take. */
static int child_routes(const cr_tree *t, struct sockaddr_storage *out)
{
    bool direct = t->rsh && t->rsh[0] && !t->rsh[1] && !strcmp(t->rsh[0], "none");
    if (direct) {
        struct sockaddr_in *in = (void *)&out[0];
        memset(&out[0], 0, sizeof out[0]);
        in->sin_family = AF_INET;
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return 1;
    }
    int n = 0;
    for (int i = 0; i < t->nchild; i++) {
        if (!t->hosts) return -1;
        struct addrinfo hint = {.ai_socktype = SOCK_DGRAM}, *res = NULL;
        if (getaddrinfo(t->hosts[cr_tree_child_node(t, i) - 1].name, "9", &hint, &res)) return -1;
        int found = 0;
        for (const struct addrinfo *a = res; a; a = a->ai_next) {
            if (a->ai_family == AF_INET6 &&
                IN6_IS_ADDR_LINKLOCAL(
                    &((const struct sockaddr_in6 *)(void *)a->ai_addr)->sin6_addr))
                continue;
            int fd = socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            struct sockaddr_storage src;
            socklen_t sl = sizeof src;
            /* a datagram socket's connect sends nothing: it only picks the route */
            bool ok = fd >= 0 && !connect(fd, a->ai_addr, a->ai_addrlen) &&
                      !getsockname(fd, (struct sockaddr *)&src, &sl);
            if (fd >= 0) close(fd);
            if (!ok) continue;
            found = 1;
            bool dup = false;
            for (int k = 0; k < n && !dup; k++) dup = same_addr(&out[k], &src);
            if (dup) continue;
            if (n == CR_TREE_LISTEN) {
                freeaddrinfo(res);
                return -1;
            }
            out[n++] = src;
        }
        freeaddrinfo(res);
        if (!found) return -1;
    }
    return n;
}

static int port_of(const struct sockaddr_storage *ss)
{
    return ntohs(ss->ss_family == AF_INET6
                     ? ((const struct sockaddr_in6 *)(const void *)ss)->sin6_port
                     : ((const struct sockaddr_in *)(const void *)ss)->sin_port);
}

static void set_port(struct sockaddr_storage *ss, int port)
{
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)(void *)ss)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)(void *)ss)->sin_port = htons((uint16_t)port);
}

static void close_listeners(cr_tree *t)
{
    for (int i = 0; i < t->nls; i++) close(t->ls[i]);
    t->nls = 0;
    if (t->lfd >= 0) close(t->lfd);
    t->lfd = -1;
}

/* One listening socket on ss at port (0: any), added to t->ls. */
static int listen_on(cr_tree *t, struct sockaddr_storage *ss, int *port)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (ss->ss_family == AF_INET6) {
        int off = 0; /* the wildcard takes IPv4 too */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    }
    set_port(ss, *port);
    socklen_t sl =
        ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    struct epoll_event ev = {.events = EPOLLIN};
    if (bind(fd, (struct sockaddr *)ss, sl) || listen(fd, 64) ||
        getsockname(fd, (struct sockaddr *)ss, &sl) || epoll_ctl(t->lfd, EPOLL_CTL_ADD, fd, &ev)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    t->ls[t->nls++] = fd;
    *port = port_of(ss);
    return 0;
}

/* Listen where our children reach us (child_routes), else on every address;
 * all listeners share one port, and t->lfd (an epoll set of them) is what the
 * caller polls. */
static int listen_for_children(cr_tree *t)
{
    struct sockaddr_storage want[CR_TREE_LISTEN];
    int nwant = child_routes(t, want);
    for (int tries = 0; tries < 8; tries++) {
        t->lfd = epoll_create1(EPOLL_CLOEXEC);
        if (t->lfd < 0) break;
        int port = 0, rc = 0;
        if (nwant > 0) {
            for (int i = 0; i < nwant && !rc; i++) rc = listen_on(t, &want[i], &port);
        } else {
            struct sockaddr_storage any;
            memset(&any, 0, sizeof any);
            any.ss_family = AF_INET6; /* in6addr_any: zeros */
            rc = listen_on(t, &any, &port);
            if (rc && errno == EAFNOSUPPORT) {
                any.ss_family = AF_INET; /* INADDR_ANY: zeros */
                rc = listen_on(t, &any, &port);
            }
        }
        if (!rc) {
            t->port = port;
            list_addrs(t, nwant > 0 ? want : NULL, nwant);
            return 0;
        }
        int e = errno;
        close_listeners(t);
        errno = e;
        if (e != EADDRINUSE) break; /* the first port was taken on another address: again */
    }
    why(t, "cannot listen for the agents: %s", strerror(errno));
    return -1;
}

static int setup(cr_tree *t, int node, int nnodes, int fanout)
{
    t->node = node;
    t->nnodes = nnodes;
    t->fanout = fanout > 0 ? fanout : CR_TREE_FANOUT;
    t->lfd = -1; /* hb_ms, lost_ms, join_ms: the launcher's, or the JOB's */
    long first = (long)node * t->fanout + 1;
    t->first_child = first < nnodes ? (int)first : nnodes;
    t->nchild = t->first_child + t->fanout <= nnodes ? t->fanout : nnodes - t->first_child;
    if (t->nchild < 0) t->nchild = 0;
    size_t n = t->nchild ? (size_t)t->nchild : 1;
    t->child = calloc(n, sizeof *t->child);
    t->rsh_pid = calloc(n, sizeof *t->rsh_pid);
    t->rsh_status = calloc(n, sizeof *t->rsh_status);
    t->child_done = calloc(n, sizeof *t->child_done);
    if (!t->child || !t->rsh_pid || !t->rsh_status || !t->child_done) {
        why(t, "out of memory");
        return -1;
    }
    return t->nchild ? listen_for_children(t) : 0;
}

int cr_tree_root(cr_tree *t, const unsigned char secret[32], int nhosts, int fanout)
{
    if (derive_key(t, secret)) return -1;
    return setup(t, 0, nhosts + 1, fanout);
}

/* Blocking connect with a deadline. */
static int connect_to(const char *addr, int port, int ms)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sl;
    struct sockaddr_in *in4 = (void *)&ss;
    struct sockaddr_in6 *in6 = (void *)&ss;
    if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
        sl = sizeof *in4;
    } else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        sl = sizeof *in6;
    } else {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&ss, sl) && errno != EINPROGRESS) goto fail;
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int r = poll(&p, 1, ms);
    if (r <= 0) {
        errno = r == 0 ? ETIMEDOUT : errno;
        goto fail;
    }
    int err = 0;
    socklen_t el = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
    if (err) {
        errno = err;
        goto fail;
    }
    return fd;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* Is addr (the parent's, with its prefix) on a network one of ours is on? */
static bool on_my_net(const char *addr, int bits, const struct ifaddrs *ifs)
{
    unsigned char b[16];
    int fam = inet_pton(AF_INET, addr, b) == 1    ? AF_INET
              : inet_pton(AF_INET6, addr, b) == 1 ? AF_INET6
                                                  : 0;
    for (const struct ifaddrs *i = ifs; fam && i; i = i->ifa_next) {
        if (!i->ifa_addr || (i->ifa_flags & IFF_LOOPBACK)) continue;
        int mb = prefix_bits(i->ifa_netmask);
        if (cr_addr_in_prefix(i->ifa_addr, b, fam, mb < bits ? mb : bits)) return true;
    }
    return false;
}

/* Read exactly n bytes, or fail at the deadline. */
static int read_full(int fd, unsigned char *p, size_t n, uint64_t deadline)
{
    while (n) {
        uint64_t now = now_ms();
        if (now >= deadline) return -1;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, (int)(deadline - now)) <= 0) continue;
        ssize_t r = read(fd, p, n);
        if (r == 0) return -1;
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const unsigned char *p, size_t n, uint64_t deadline)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno != EAGAIN && errno != EINTR) return -1;
            uint64_t now = now_ms();
            if (now >= deadline) return -1;
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            poll(&pf, 1, (int)(deadline - now));
            continue;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The connector's side of the handshake, synchronously (an agent does nothing
 * else until it stands). */
static int prove(cr_tree *t, int fd, int parent)
{
    tcp_auth a;
    unsigned char nonce[TCP_AUTH_NONCE];
    if (tcp_crypto_random(nonce, sizeof nonce)) return TCP_AUTH_ESTATE;
    tcp_auth_connect(&a, t->key, t->node, parent, t->nnodes, nonce);
    uint64_t deadline = now_ms() + HANDSHAKE_MS;
    int rc = TCP_AUTH_MORE;
    while (rc == TCP_AUTH_MORE) {
        if (a.outlen > a.outoff) {
            if (write_full(fd, a.out + a.outoff, a.outlen - a.outoff, deadline)) break;
            a.outoff = a.outlen = 0;
        }
        size_t want = tcp_auth_want(&a);
        if (!want) break;
        unsigned char buf[TCP_AUTH_CHALLENGE];
        if (want > sizeof buf) want = sizeof buf;
        if (read_full(fd, buf, want, deadline)) break;
        size_t used;
        rc = tcp_auth_input(&a, buf, want, &used);
    }
    tcp_auth_clear(&a);
    return rc == TCP_AUTH_DONE ? 0 : rc == TCP_AUTH_MORE ? TCP_AUTH_ESTATE : rc;
}

int cr_tree_join(cr_tree *t, const unsigned char secret[32], int node, int fanout,
                 const char *addrs, int port)
{
    if (derive_key(t, secret)) return -1;
    t->node = node;
    t->lfd = -1;
    t->fanout = fanout > 0 ? fanout : CR_TREE_FANOUT;
    t->nnodes = node + 1; /* for the handshake's range check until the job says more */
    int parent = (node - 1) / t->fanout;
    /* Try the parent's addresses on a network we share first, then the others. */
    struct ifaddrs *ifs = NULL;
    getifaddrs(&ifs);
    char *list = strdup(addrs ? addrs : "");
    int fd = -1, err = ENOENT;
    char tried[256] = "";
    for (int pass = 0; list && pass < 2 && fd < 0; pass++) {
        char *copy = strdup(list), *save = NULL;
        for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && fd < 0;
             tok = strtok_r(NULL, ",", &save)) {
            char *slash = strchr(tok, '/');
            int bits = slash ? atoi(slash + 1) : 128;
            if (slash) *slash = 0;
            if (on_my_net(tok, bits, ifs) != (pass == 0)) continue;
            fd = connect_to(tok, port, CONNECT_MS);
            if (fd < 0) {
                err = errno;
                size_t k = strlen(tried);
                snprintf(tried + k, sizeof tried - k, "%s%s", k ? ", " : "", tok);
            }
        }
        free(copy);
    }
    free(list);
    if (ifs) freeifaddrs(ifs);
    if (fd < 0) {
        why(t, "cannot reach the parent (node %d) at port %d of %s: %s", parent, port,
            tried[0] ? tried : "no address", strerror(err));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int rc = prove(t, fd, parent);
    if (rc) {
        close(fd);
        why(t, "the parent (node %d) refused this agent: %s", parent,
            rc == TCP_AUTH_ESTATE ? "no answer in time" : tcp_auth_strerror(rc));
        return -1;
    }
    set_lost_after(fd, t->lost_ms);
    t->parent = ctl_new(fd, parent);
    if (!t->parent) {
        close(fd);
        why(t, "out of memory");
        return -1;
    }
    return 0;
}

int cr_tree_local_addr(const cr_tree *t, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (!t->parent || getsockname(t->parent->fd, (struct sockaddr *)&ss, &sl)) return -1;
    int fam;
    const unsigned char *b = cr_addr_bytes((struct sockaddr *)&ss, &fam);
    if (!b) return -1;
    if (fam == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)(const void *)b))
        return inet_ntop(AF_INET, b + 12, buf, (socklen_t)len) ? 0 : -1;
    return inet_ntop(fam, b, buf, (socklen_t)len) ? 0 : -1;
}

/* ---- the children ---------------------------------------------------------- */

int cr_tree_child_node(const cr_tree *t, int i)
{
    return t->first_child + i;
}

const char *cr_tree_node_name(const cr_tree *t, int node)
{
    if (node <= 0 || node >= t->nnodes || !t->hosts) return "the launcher";
    return t->hosts[node - 1].name;
}

int cr_tree_spawn(cr_tree *t, const unsigned char secret[32])
{
    if (!t->child && setup(t, t->node, t->nnodes, t->fanout)) return -1;
    if (t->parent) set_lost_after(t->parent->fd, t->lost_ms); /* the job's setting, now known */
    if (!t->nchild) return 0;
    int nrsh = 0;
    while (t->rsh && t->rsh[nrsh]) nrsh++;
    bool direct = nrsh == 1 && !strcmp(t->rsh[0], "none");
    t->started_ms = now_ms();
    for (int i = 0; i < t->nchild; i++) {
        int node = cr_tree_child_node(t, i);
        char port[16], nodes[16], fan[16];
        snprintf(fan, sizeof fan, "%d", t->fanout);
        snprintf(port, sizeof port, "%d", t->port);
        snprintf(nodes, sizeof nodes, "%d", node);
        const char *argv[64];
        int k = 0;
        if (!direct) {
            for (int j = 0; j < nrsh && k < 50; j++) argv[k++] = t->rsh[j];
            argv[k++] = t->hosts[node - 1].name;
        }
        argv[k++] = t->agent;
        argv[k++] = "agent";
        argv[k++] = "--parent";
        argv[k++] = t->addrs;
        argv[k++] = "--port";
        argv[k++] = port;
        argv[k++] = "--node";
        argv[k++] = nodes;
        argv[k++] = "--fanout";
        argv[k++] = fan;
        argv[k] = NULL;
        int in[2];
        if (pipe2(in, O_CLOEXEC)) {
            why(t, "cannot start the agent of host %s: %s", t->hosts[node - 1].name,
                strerror(errno));
            return -1;
        }
        pid_t me = getpid(), pid = fork();
        if (pid < 0) {
            why(t, "cannot start the agent of host %s: %s", t->hosts[node - 1].name,
                strerror(errno));
            close(in[0]);
            close(in[1]);
            return -1;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != me) _exit(127);
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            signal(SIGPIPE, SIG_DFL);
            dup2(in[0], 0);
            dup2(2, 1); /* the agent's own words go to our stderr */
            if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
                for (int fd = 3; fd < 1024; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
            execvp(argv[0], (char *const *)argv);
            fprintf(stderr, "courier: cannot execute %s to start the agent of host %s: %s\n",
                    argv[0], t->hosts[node - 1].name, strerror(errno));
            _exit(127);
        }
        close(in[0]);
        /* The secret, then EOF: a pipe holds 32 bytes without blocking. */
        ssize_t w = write(in[1], secret, 32);
        (void)w;
        close(in[1]);
        t->rsh_pid[i] = pid;
    }
    return 0;
}

int cr_tree_reaped(cr_tree *t, pid_t pid, int status)
{
    for (int i = 0; i < t->nchild; i++)
        if (t->rsh_pid[i] == pid) {
            t->rsh_pid[i] = 0;
            t->rsh_status[i] = status;
            return i;
        }
    return -1;
}

/* ---- frames ----------------------------------------------------------------- */

void cr_tree_send(cr_tree *t, int to, int type, int flag, int a, int b, const void *payload,
                  size_t len)
{
    if (to == -1) {
        ctl_send(t->parent, type, flag, a, b, payload, len);
    } else if (to == -2) {
        for (int i = 0; i < t->nchild; i++)
            if (!t->child_done[i]) ctl_send(t->child[i], type, flag, a, b, payload, len);
    } else if (to >= 0 && to < t->nchild) {
        ctl_send(t->child[to], type, flag, a, b, payload, len);
    }
}

int cr_tree_pollfds(cr_tree *t, struct pollfd *pf)
{
    int k = 0;
    if (t->lfd >= 0) pf[k++] = (struct pollfd){.fd = t->lfd, .events = POLLIN};
    if (t->parent && t->parent->fd >= 0)
        pf[k++] = (struct pollfd){.fd = t->parent->fd,
                                  .events = POLLIN |
                                            (t->parent->outlen > t->parent->outoff ? POLLOUT : 0)};
    for (int i = 0; i < t->nchild; i++) {
        cr_ctl *c = t->child[i];
        if (c && c->fd >= 0)
            pf[k++] = (struct pollfd){.fd = c->fd,
                                      .events = POLLIN | (c->outlen > c->outoff ? POLLOUT : 0)};
    }
    for (int i = 0; i < CR_TREE_PENDING; i++)
        if (t->pending[i]) pf[k++] = (struct pollfd){.fd = t->pending[i]->fd, .events = POLLIN};
    return k;
}

int cr_tree_maxfds(const cr_tree *t)
{
    return 2 + t->nchild + CR_TREE_PENDING;
}

/* ---- servicing -------------------------------------------------------------- */

static void drop_child(cr_tree *t, int i)
{
    ctl_free(t->child[i]);
    t->child[i] = NULL;
    t->child_done[i] = true;
}

static void lose_child(cr_tree *t, int i, const char *what, cr_tree_on_lost on_lost, void *arg)
{
    drop_child(t, i);
    on_lost(arg, i, what);
}

/* Why child i's agent is gone, from its rsh process's end if we have it. */
static void child_gone_why(const cr_tree *t, int i, char *buf, size_t len, const char *fallback)
{
    const char *host = t->hosts ? t->hosts[cr_tree_child_node(t, i) - 1].name : "?";
    /* The network went first: that is the cause, whatever the agent did next
     * (it ends itself once it loses us). */
    bool net = !strncmp(fallback, "no answer", 9);
    if (!t->rsh_pid[i] && t->started_ms && !net) {
        int st = t->rsh_status[i];
        if (WIFSIGNALED(st))
            snprintf(buf, len, "host %s: its agent was killed by SIG%s", host,
                     sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
        else
            snprintf(buf, len,
                     "host %s: its agent (or the command starting it) exited with status %d", host,
                     WEXITSTATUS(st));
    } else {
        snprintf(buf, len, "host %s: %s", host, fallback);
    }
}

/* A connection that did not prove itself a child of ours: refused (closed);
 * the first refusal of the tree's life is noted for the log (t->note), the
 * others are not (a stranger knocking again must not flood it). */
static void refuse(cr_tree *t, int k, const char *what)
{
    cr_ctl *c = t->pending[k];
    if (!t->refused++)
        snprintf(t->note, sizeof t->note,
                 "refused a connection from %s on the agents' port %d: %s (the job goes on; "
                 "further refusals are not logged)",
                 c->who, t->port, what);
    ctl_free(c);
    t->pending[k] = NULL;
}

static void accept_some(cr_tree *t, uint64_t now)
{
    for (int l = 0;;) {
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        if (l >= t->nls) return;
        int fd = accept4(t->ls[l], (struct sockaddr *)&from, &fl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            l++; /* this one has no more: the next listener */
            continue;
        }
        int slot = -1;
        uint64_t oldest = UINT64_MAX;
        for (int i = 0; i < CR_TREE_PENDING; i++) {
            if (!t->pending[i]) {
                slot = i;
                break;
            }
            if (t->pending[i]->deadline < oldest) {
                oldest = t->pending[i]->deadline;
                slot = i;
            }
        }
        if (t->pending[slot]) refuse(t, slot, "no proof in time (others were waiting)");
        cr_ctl *c = ctl_new(fd, -1);
        tcp_auth *a = calloc(1, sizeof *a);
        unsigned char nonce[TCP_AUTH_NONCE];
        if (!c || !a || tcp_crypto_random(nonce, sizeof nonce)) {
            free(a);
            if (c)
                ctl_free(c);
            else
                close(fd);
            continue;
        }
        /* Any node may say who it is; only a child of ours that has not yet
         * joined is kept, once it has proven it (pending_step). */
        tcp_auth_accept(a, t->key, t->node, t->nnodes, NULL, nonce);
        c->auth = a;
        int fam;
        const unsigned char *b = cr_addr_bytes((const struct sockaddr *)&from, &fam);
        if (!b || !inet_ntop(fam, b, c->who, sizeof c->who)) snprintf(c->who, sizeof c->who, "?");
        c->deadline = now + HANDSHAKE_MS;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        t->pending[slot] = c;
    }
}

/* Move a pending connection's handshake on. */
static void pending_step(cr_tree *t, int k, cr_tree_on_frame on_frame, void *arg)
{
    cr_ctl *c = t->pending[k];
    const char *what = "it broke the handshake";
    for (;;) {
        size_t want = tcp_auth_want(c->auth);
        unsigned char buf[TCP_AUTH_CHALLENGE];
        if (!want || want > sizeof buf) goto drop;
        ssize_t r = read(c->fd, buf, want);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (r <= 0) {
            what = r ? strerror(errno) : "it closed before proving it holds the job's secret";
            goto drop;
        }
        size_t used;
        int rc = tcp_auth_input(c->auth, buf, (size_t)r, &used);
        if (rc < 0) {
            what = tcp_auth_strerror(rc);
            goto drop;
        }
        tcp_auth *a = c->auth;
        if (a->outlen > a->outoff) {
            ssize_t w = send(c->fd, a->out + a->outoff, a->outlen - a->outoff, MSG_NOSIGNAL);
            if (w != (ssize_t)(a->outlen - a->outoff)) goto drop; /* a few bytes: never partial */
            a->outoff = a->outlen = 0;
        }
        if (rc == TCP_AUTH_VERIFIED) {
            int i = a->peer - t->first_child;
            if (i < 0 || i >= t->nchild || t->child[i] || t->child_done[i]) {
                what = "it is no child of this node waiting to join";
                goto drop;
            }
            tcp_auth_welcome(a);
            ssize_t w = send(c->fd, a->out, a->outlen, MSG_NOSIGNAL);
            if (w != (ssize_t)a->outlen) goto drop;
            tcp_auth_clear(a);
            free(a);
            c->auth = NULL;
            c->node = cr_tree_child_node(t, i);
            c->deadline = 0; /* from now on: the wait for its rsh process, once it closes */
            set_lost_after(c->fd, t->lost_ms);
            c->last_tx = now_ms();
            t->child[i] = c;
            t->pending[k] = NULL;
            cr_frame_hdr joined = {.type = 0};
            on_frame(arg, i, &joined, NULL);
            return;
        }
    }
drop:
    refuse(t, k, what);
}

/* Read what a proven connection has; deliver whole frames. Returns 0, or -1
 * with what went wrong in buf (the connection is then to be dropped). */
static int ctl_read(cr_tree *t, cr_ctl *c, int from, cr_tree_on_frame on_frame, void *arg,
                    char *buf, size_t blen)
{
    for (int rounds = 0; rounds < 64; rounds++) {
        if (c->incap - c->inlen < 65536) {
            size_t cap = c->incap ? c->incap * 2 : 65536 * 2;
            unsigned char *n = realloc(c->in, cap);
            if (!n) {
                snprintf(buf, blen, "out of memory");
                return -1;
            }
            c->in = n;
            c->incap = cap;
        }
        ssize_t r = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
        if (r <= 0) {
            if (r < 0 && errno == ETIMEDOUT) /* TCP_USER_TIMEOUT: our heartbeats went unanswered */
                snprintf(buf, blen,
                         "no answer for %llu ms: the host or the network to it may be down",
                         (unsigned long long)t->lost_ms);
            else
                snprintf(buf, blen, r == 0 ? "closed its connection" : "its connection failed: %s",
                         strerror(errno));
            return -1;
        }
        c->inlen += (size_t)r;
        size_t off = 0;
        while (c->inlen - off >= sizeof(cr_frame_hdr)) {
            cr_frame_hdr h;
            memcpy(&h, c->in + off, sizeof h);
            if (h.len > CR_TREE_FRAME_MAX || h.type < CR_F_JOB || h.type > CR_F_LAST) {
                snprintf(buf, blen, "sent a frame this launcher cannot read (type %u, %u bytes)",
                         h.type, h.len);
                return -1;
            }
            if (c->inlen - off < sizeof h + h.len) break;
            if (h.type == CR_F_DONE) {
                c->done = true;
                if (from >= 0) t->child_done[from] = true;
            }
            if (h.type != CR_F_PING) on_frame(arg, from, &h, c->in + off + sizeof h);
            off += sizeof h + h.len;
            /* on_frame may have dropped this very connection (END at an agent
             * closes nothing, so c is still ours here). */
        }
        memmove(c->in, c->in + off, c->inlen - off);
        c->inlen -= off;
        if (c->inlen + 65536 < c->incap && c->incap > 4 * 65536) {
            unsigned char *n = realloc(c->in, c->incap / 2);
            if (n) {
                c->in = n;
                c->incap /= 2;
            }
        }
    }
    return 0;
}

void cr_tree_service(cr_tree *t, uint64_t now, cr_tree_on_frame on_frame, cr_tree_on_lost on_lost,
                     void *arg)
{
    char buf[1024], what[200];
    if (t->lfd >= 0) accept_some(t, now);
    for (int k = 0; k < CR_TREE_PENDING; k++)
        if (t->pending[k]) {
            if (now >= t->pending[k]->deadline) {
                refuse(t, k, "no proof in time");
            } else {
                pending_step(t, k, on_frame, arg);
            }
        }
    if (t->parent) {
        ctl_write(t->parent);
        if (ctl_read(t, t->parent, -1, on_frame, arg, what, sizeof what)) {
            ctl_free(t->parent);
            t->parent = NULL;
            on_lost(arg, -1, what);
        } else if (since(now, t->parent->last_tx) >= t->hb_ms) {
            ctl_send(t->parent, CR_F_PING, 0, 0, 0, NULL, 0);
        }
    }
    for (int i = 0; i < t->nchild; i++) {
        cr_ctl *c = t->child[i];
        if (c) {
            ctl_write(c);
            int rc = ctl_read(t, c, i, on_frame, arg, what, sizeof what);
            c = t->child[i];
            if (!c) continue;
            if (rc && c->done) { /* it said DONE and left */
                drop_child(t, i);
                continue;
            }
            if (rc && !c->deadline) { /* give its rsh process a moment to say how it ended */
                c->deadline = now + 200;
                close(c->fd);
                c->fd = -1;
                snprintf(c->gone, sizeof c->gone, "%s", what);
                continue;
            }
            if (c->fd < 0) {
                if (t->rsh_pid[i] == 0 || now >= c->deadline) {
                    child_gone_why(t, i, buf, sizeof buf, c->gone);
                    lose_child(t, i, buf, on_lost, arg);
                }
                continue;
            }
            if (since(now, c->last_tx) >= t->hb_ms) ctl_send(c, CR_F_PING, 0, 0, 0, NULL, 0);
        } else if (!t->child_done[i] && t->started_ms) {
            if (t->rsh_pid[i] == 0) {
                child_gone_why(t, i, buf, sizeof buf, "");
                snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " before it called back");
                t->child_done[i] = true;
                on_lost(arg, i, buf);
            } else if (since(now, t->started_ms) >= t->join_ms) {
                snprintf(buf, sizeof buf,
                         "host %s: its agent did not call back within %llu s (is courier "
                         "installed there at %s? can it reach %s port %d?)",
                         t->hosts[cr_tree_child_node(t, i) - 1].name,
                         (unsigned long long)(t->join_ms / 1000), t->agent, t->addrs, t->port);
                t->child_done[i] = true;
                on_lost(arg, i, buf);
            }
        }
    }
}

int cr_tree_wait_ms(const cr_tree *t)
{
    int ms = (int)(t->hb_ms / 2);
    return ms > 0 ? ms : 1;
}

bool cr_tree_children_done(const cr_tree *t)
{
    for (int i = 0; i < t->nchild; i++)
        if (!t->child_done[i]) return false;
    return true;
}

size_t cr_tree_backlog(const cr_tree *t, int i)
{
    const cr_ctl *c = i == -1 ? t->parent : i >= 0 && i < t->nchild ? t->child[i] : NULL;
    return c && c->fd >= 0 ? c->outlen - c->outoff : SIZE_MAX;
}

void cr_tree_flush(cr_tree *t, int ms)
{
    uint64_t deadline = now_ms() + (uint64_t)ms;
    cr_ctl *c = t->parent;
    while (c && c->fd >= 0 && c->outlen > c->outoff) {
        uint64_t now = now_ms();
        if (now >= deadline) return;
        struct pollfd pf = {.fd = c->fd, .events = POLLOUT};
        if (poll(&pf, 1, (int)(deadline - now)) < 0 && errno != EINTR) return;
        if (pf.revents & (POLLERR | POLLHUP)) return;
        ctl_write(c);
    }
}

void cr_tree_kill_children(cr_tree *t)
{
    for (int i = 0; i < t->nchild; i++) {
        if (t->rsh_pid[i] > 0) kill(t->rsh_pid[i], SIGKILL);
        if (!t->child_done[i]) drop_child(t, i);
    }
}

void cr_tree_free(cr_tree *t)
{
    ctl_free(t->parent);
    t->parent = NULL;
    for (int i = 0; i < t->nchild; i++) {
        if (t->child) ctl_free(t->child[i]);
        if (t->rsh_pid && t->rsh_pid[i] > 0) kill(t->rsh_pid[i], SIGKILL);
    }
    for (int k = 0; k < CR_TREE_PENDING; k++) ctl_free(t->pending[k]);
    close_listeners(t);
    free(t->child);
    free(t->rsh_pid);
    free(t->rsh_status);
    free(t->child_done);
    free(t->hosts);
    free(t->rsh);
    free(t->job);
    free(t->env);
    explicit_bzero(t->key, sizeof t->key);
    memset(t, 0, sizeof *t);
    t->lfd = -1;
}

/* ---- the job's description --------------------------------------------------- */

/* Does environment entry e (NAME=VALUE) travel to the other hosts: a COURIER_*
 * setting, or a name in exp (COURIER_EXPORT's comma list; NULL: none)? */
static bool travels(const char *e, const char *exp)
{
    const char *eq = strchr(e, '=');
    if (!eq || eq == e) return false;
    if (!strncmp(e, "COURIER_", 8)) return true;
    size_t n = (size_t)(eq - e);
    for (const char *p = exp; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        size_t k = strcspn(p, ",");
        if (k == n && !strncmp(p, e, n)) return true;
    }
    return false;
}

static size_t put_str(char *buf, size_t off, const char *s)
{
    size_t n = strlen(s) + 1;
    if (buf) memcpy(buf + off, s, n);
    return off + n;
}

char *cr_tree_job_encode(const cr_tree *t, int argc, char *const *argv, size_t *len)
{
    char num[32];
    char *buf = NULL;
    for (int pass = 0; pass < 2; pass++) {
        size_t off = put_str(buf, 0, "courier-job-1");
#define NUM(v) (snprintf(num, sizeof num, "%lld", (long long)(v)), off = put_str(buf, off, num))
        NUM(t->fanout);
        NUM(t->hb_ms);
        NUM(t->lost_ms);
        NUM(t->join_ms);
        off = put_str(buf, off, t->agent);
        int nrsh = 0;
        while (t->rsh[nrsh]) nrsh++;
        NUM(nrsh);
        for (int i = 0; i < nrsh; i++) off = put_str(buf, off, t->rsh[i]);
        NUM(t->nnodes - 1);
        for (int h = 0; h < t->nnodes - 1; h++) {
            off = put_str(buf, off, t->hosts[h].name);
            NUM(t->hosts[h].count);
        }
        NUM(argc);
        for (int i = 0; i < argc; i++) off = put_str(buf, off, argv[i]);
        /* COURIER_* settings travel with the job (ssh does not pass them), and
         * the variables COURIER_EXPORT names (mpiexec's -x). */
        const char *exp = getenv("COURIER_EXPORT");
        int nenv = 0;
        for (char **e = environ; *e; e++) nenv += travels(*e, exp);
        NUM(nenv);
        for (char **e = environ; *e; e++)
            if (travels(*e, exp)) off = put_str(buf, off, *e);
#undef NUM
        if (pass == 0) {
            if (off > CR_TREE_FRAME_MAX || !(buf = malloc(off))) return NULL;
        } else {
            *len = off;
        }
    }
    return buf;
}

char **cr_tree_job_decode(cr_tree *t, const void *payload, size_t len, int *argc)
{
    if (!len || ((const char *)payload)[len - 1]) return NULL;
    t->job = malloc(len);
    if (!t->job) return NULL;
    memcpy(t->job, payload, len);
    t->job_len = len;
    char *p = t->job, *end = t->job + len;
    const char *f[8];
    /* fields in order: tag, fanout, hb, lost, join, agent */
    for (int i = 0; i < 6; i++) {
        if (p >= end) return NULL;
        f[i] = p;
        p += strlen(p) + 1;
    }
    if (strcmp(f[0], "courier-job-1")) return NULL;
    t->fanout = atoi(f[1]);
    t->hb_ms = (uint64_t)atoll(f[2]);
    t->lost_ms = (uint64_t)atoll(f[3]);
    t->join_ms = (uint64_t)atoll(f[4]);
    t->agent = (char *)f[5];
    if (p >= end) return NULL;
    int nrsh = atoi(p);
    p += strlen(p) + 1;
    if (nrsh < 0 || nrsh > 32) return NULL;
    t->rsh = calloc((size_t)nrsh + 1, sizeof *t->rsh);
    if (!t->rsh) return NULL;
    for (int i = 0; i < nrsh; i++) {
        if (p >= end) return NULL;
        t->rsh[i] = p;
        p += strlen(p) + 1;
    }
    if (p >= end) return NULL;
    int nhosts = atoi(p);
    p += strlen(p) + 1;
    if (nhosts < 1 || nhosts > 1 << 20) return NULL;
    t->hosts = calloc((size_t)nhosts, sizeof *t->hosts);
    if (!t->hosts) return NULL;
    int first = 0;
    for (int h = 0; h < nhosts; h++) {
        if (p >= end) return NULL;
        t->hosts[h].name = p;
        p += strlen(p) + 1;
        if (p >= end) return NULL;
        t->hosts[h].count = atoi(p);
        t->hosts[h].first = first;
        first += t->hosts[h].count;
        p += strlen(p) + 1;
    }
    t->nnodes = nhosts + 1;
    if (p >= end) return NULL;
    int n = atoi(p);
    p += strlen(p) + 1;
    if (n < 1 || n > 1 << 16) return NULL;
    char **argv = calloc((size_t)n + 1, sizeof *argv);
    if (!argv) return NULL;
    for (int i = 0; i < n; i++) {
        if (p >= end) {
            free(argv);
            return NULL;
        }
        argv[i] = p;
        p += strlen(p) + 1;
    }
    int nenv = p < end ? atoi(p) : -1;
    p += p < end ? strlen(p) + 1 : 0;
    if (nenv < 0 || nenv > 4096 || !(t->env = calloc((size_t)nenv + 1, sizeof *t->env))) {
        free(argv);
        return NULL;
    }
    /* what COURIER_EXPORT (among them) names may come too */
    const char *exp = NULL;
    const char *q = p;
    for (int i = 0; i < nenv && q < end; i++, q += strlen(q) + 1)
        if (!strncmp(q, "COURIER_EXPORT=", 15)) exp = q + 15;
    for (int i = 0; i < nenv; i++) {
        if (p >= end || !travels(p, exp)) {
            free(argv);
            return NULL;
        }
        t->env[i] = p;
        p += strlen(p) + 1;
    }
    *argc = n;
    return argv;
}
