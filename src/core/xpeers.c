/* Peers of other jobs (xpeers.h): the user's key and directory, the leaders'
 * authenticated channel, and sets of extra peers reached by a tcp transport of
 * their own.
 *
 * Invariants:
 *  - a set's transport is polled (is in job->links) only once its members of
 *    the other group are owned (cr_xset_add): a connection that comes earlier
 *    waits in the kernel's backlog, never meets a transport that would refuse
 *    it;
 *  - a set's peers keep their engine numbers for the life of the process (a
 *    number is never given twice); once the set is closed they point at the
 *    closed link (job->links[CR_LINK_CLOSED]), whose peers are all gone, and
 *    the set's slot in job->links may serve a later set;
 *  - the per-peer arrays of the job always have job->npeers entries; host_of,
 *    which transports keep a pointer to, is copied when it grows and the old
 *    array is kept (it is never freed while the job lives);
 *  - no byte of a channel reaches the caller before both ends proved they
 *    hold the user's key, and every message after that is checked against its
 *    MAC (keyed by this channel's nonces, numbered): a recorded or reordered
 *    message is refused. */
#define _GNU_SOURCE
#include "xpeers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../transport/tcp_crypto.h"
#include "../transport/tp_common.h"

/* ---- the user's directory and key ---------------------------------------- */

int cr_user_key(unsigned char key[CR_SECRET_LEN], char *why, size_t wlen)
{
    char dir[256], path[300];
    if (cr_user_dir(dir, sizeof dir, true, 077, why, wlen)) return -1;
    snprintf(path, sizeof path, "%s/key", dir);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        /* Made whole under a name of its own, then linked: a reader never
         * sees half a key, and of two makers the first link wins. */
        char tmp[320];
        snprintf(tmp, sizeof tmp, "%s/key.%d", dir, (int)getpid());
        unsigned char k[CR_SECRET_LEN];
        int t = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        bool ok = t >= 0 && tcp_crypto_random(k, sizeof k) == 0 &&
                  write(t, k, sizeof k) == (ssize_t)sizeof k;
        if (t >= 0) close(t);
        if (ok && link(tmp, path) < 0 && errno != EEXIST) ok = false;
        if (t >= 0) unlink(tmp);
        if (!ok) {
            snprintf(why, wlen, "cannot make the user's key %s: %s", path, strerror(errno));
            return -1;
        }
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(why, wlen, "cannot read the user's key %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    ssize_t n = read(fd, key, CR_SECRET_LEN);
    close(fd);
    if (st.st_uid != geteuid() || (st.st_mode & 077) || n != CR_SECRET_LEN) {
        snprintf(why, wlen,
                 "the user's key %s is not %d bytes that only you may read; remove it (a new "
                 "one is made)",
                 path, CR_SECRET_LEN);
        return -1;
    }
    return 0;
}

/* ---- sockets ------------------------------------------------------------- */

/* The IPv4 address COURIER_NET picks: a literal address, the first interface
 * it names or matches, else 127.0.0.1. */
static void pick_v4(struct in_addr *a)
{
    const char *net = getenv("COURIER_NET");
    a->s_addr = htonl(INADDR_LOOPBACK);
    if (!net || !*net || inet_pton(AF_INET, net, a) == 1) return;
    cr_net_spec spec;
    struct ifaddrs *ifs;
    if (cr_net_parse(net, &spec) || getifaddrs(&ifs)) return;
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && cr_net_matches(&spec, i)) {
            *a = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
            break;
        }
    freeifaddrs(ifs);
}

int cr_listen_any(char *name, size_t len, char *why, size_t wlen)
{
    struct sockaddr_in in = {.sin_family = AF_INET};
    pick_v4(&in.sin_addr);
    socklen_t sl = sizeof in;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&in, sl) || listen(fd, 16) ||
        getsockname(fd, (struct sockaddr *)&in, &sl)) {
        snprintf(why, wlen, "cannot listen on %s: %s", inet_ntoa(in.sin_addr), strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    char a[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &in.sin_addr, a, sizeof a);
    snprintf(name, len, "%s:%u", a, (unsigned)ntohs(in.sin_port));
    return fd;
}

int cr_connect_to(const char *name, char *why, size_t wlen)
{
    char a[64];
    unsigned port;
    const char *colon = strrchr(name, ':');
    struct sockaddr_in in = {.sin_family = AF_INET};
    if (!colon || (size_t)(colon - name) >= sizeof a || sscanf(colon + 1, "%u", &port) != 1 ||
        port == 0 || port > 65535) {
        snprintf(why, wlen, "'%s' is not a port name (address:port)", name);
        return -1;
    }
    memcpy(a, name, (size_t)(colon - name));
    a[colon - name] = '\0';
    if (inet_pton(AF_INET, a, &in.sin_addr) != 1) {
        snprintf(why, wlen, "'%s' is not a port name (its address '%s' is no IPv4 address)", name,
                 a);
        return -1;
    }
    in.sin_port = htons((uint16_t)port);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&in, sizeof in) < 0) {
        snprintf(why, wlen, "cannot connect to port %s: %s (is it open, and its server alive?)",
                 name, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int cr_wait_fd(cr_job *job, int fd, int (*watch)(void *), void *arg)
{
    int ms = 1;
    for (;;) {
        cr_progress(job);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        cr_unlock(job);
        int n = poll(&p, 1, ms);
        cr_lock(job);
        if (n > 0) return 0;
        if (watch) {
            int rc = watch(arg);
            if (rc) return rc;
        }
        if (ms < 50) ms *= 2;
    }
}

/* ---- the channel --------------------------------------------------------- */

static int put_all(cr_xchan *ch, const void *buf, size_t len, char *why, size_t wlen)
{
    const char *p = buf;
    while (len) {
        ssize_t n = send(ch->fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            snprintf(why, wlen, "the other side's leader is gone (send: %s)", strerror(errno));
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int get_all(cr_job *job, cr_xchan *ch, void *buf, size_t len, int (*watch)(void *),
                   void *arg, char *why, size_t wlen)
{
    char *p = buf;
    while (len) {
        int rc = cr_wait_fd(job, ch->fd, watch, arg);
        if (rc) {
            snprintf(why, wlen, "the other end did not answer in time");
            return rc;
        }
        ssize_t n = recv(ch->fd, p, len, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) {
            snprintf(why, wlen, "the other side's leader is gone (%s)",
                     n ? strerror(errno) : "it closed the connection");
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

#define XCHAN_MAGIC "courierX"
enum { XHELLO = 8 + 1 + 32, XNONCE = 32 };

/* HMAC(key, tag | a | b), a and b XNONCE bytes each. */
static void mac3(const unsigned char *key, char tag, const unsigned char *a, const unsigned char *b,
                 unsigned char out[TCP_CRYPTO_MAC])
{
    unsigned char m[1 + 2 * XNONCE];
    m[0] = (unsigned char)tag;
    memcpy(m + 1, a, XNONCE);
    memcpy(m + 1 + XNONCE, b, XNONCE);
    tcp_crypto_hmac(key, CR_SECRET_LEN, m, sizeof m, out);
}

int cr_xchan_start(cr_job *job, cr_xchan *ch, int fd, int role, int (*watch)(void *), void *arg,
                   char *why, size_t wlen)
{
    memset(ch, 0, sizeof *ch);
    ch->fd = fd;
    unsigned char key[CR_SECRET_LEN];
    if (tcp_crypto_load(why, wlen) || cr_user_key(key, why, wlen)) return -1;
    unsigned char hello[XHELLO], theirs[XHELLO];
    memcpy(hello, XCHAN_MAGIC, 8);
    hello[8] = (unsigned char)role;
    if (tcp_crypto_random(hello + 9, XNONCE)) {
        snprintf(why, wlen, "no random numbers from libcrypto");
        return -1;
    }
    int rc = put_all(ch, hello, sizeof hello, why, wlen);
    if (!rc) rc = get_all(job, ch, theirs, sizeof theirs, watch, arg, why, wlen);
    if (rc) return rc;
    const unsigned char *mine = hello + 9, *other = theirs + 9;
    int cmp = memcmp(mine, other, XNONCE);
    bool ok_roles =
        role == CR_XCHAN_EITHER
            ? theirs[8] == CR_XCHAN_EITHER && cmp
            : theirs[8] == (role == CR_XCHAN_ACCEPT ? CR_XCHAN_CONNECT : CR_XCHAN_ACCEPT);
    if (memcmp(theirs, XCHAN_MAGIC, 8) || !ok_roles) {
        snprintf(why, wlen, "the other end is not courier's %s (bad greeting)",
                 role == CR_XCHAN_EITHER ? "MPI_Comm_join" : "MPI_Comm_accept/connect");
        return -1;
    }
    ch->low = role == CR_XCHAN_EITHER ? cmp < 0 : role == CR_XCHAN_ACCEPT;
    /* Each end's proof covers the other's fresh nonce and says which end made it. */
    unsigned char proof[TCP_CRYPTO_MAC], want[TCP_CRYPTO_MAC], got[TCP_CRYPTO_MAC];
    mac3(key, ch->low ? 'L' : 'H', other, mine, proof);
    mac3(key, ch->low ? 'H' : 'L', mine, other, want);
    rc = put_all(ch, proof, sizeof proof, why, wlen);
    if (!rc) rc = get_all(job, ch, got, sizeof got, watch, arg, why, wlen);
    if (rc) return rc;
    if (!tcp_crypto_equal(got, want, sizeof got)) {
        snprintf(why, wlen,
                 "the other end did not prove it holds your key: it is not a job of yours "
                 "(refused)");
        return -1;
    }
    const unsigned char *lo = ch->low ? mine : other, *hi = ch->low ? other : mine;
    mac3(key, 'M', lo, hi, ch->mkey);
    mac3(key, 'K', lo, hi, ch->lkey);
    memset(key, 0, sizeof key);
    return 0;
}

static void msg_mac(const cr_xchan *ch, uint64_t seq, const void *buf, size_t len,
                    unsigned char out[TCP_CRYPTO_MAC])
{
    size_t n = 8 + len;
    unsigned char *m = malloc(n);
    if (!m) {
        memset(out, 0, TCP_CRYPTO_MAC);
        return;
    }
    memcpy(m, &seq, 8);
    if (len) memcpy(m + 8, buf, len);
    tcp_crypto_hmac(ch->mkey, sizeof ch->mkey, m, n, out);
    free(m);
}

int cr_xchan_send(cr_job *job, cr_xchan *ch, const void *buf, size_t len, char *why, size_t wlen)
{
    (void)job;
    uint64_t n = len;
    unsigned char mac[TCP_CRYPTO_MAC];
    msg_mac(ch, ch->sent++, buf, len, mac);
    if (put_all(ch, &n, sizeof n, why, wlen) || put_all(ch, buf, len, why, wlen) ||
        put_all(ch, mac, sizeof mac, why, wlen))
        return -1;
    return 0;
}

int cr_xchan_recv(cr_job *job, cr_xchan *ch, void *buf, size_t len, char *why, size_t wlen)
{
    uint64_t n;
    unsigned char mac[TCP_CRYPTO_MAC], want[TCP_CRYPTO_MAC];
    if (get_all(job, ch, &n, sizeof n, NULL, NULL, why, wlen)) return -1;
    if (n != len) {
        snprintf(why, wlen, "the other side's leader sent %llu bytes where %zu were expected",
                 (unsigned long long)n, len);
        return -1;
    }
    if (get_all(job, ch, buf, len, NULL, NULL, why, wlen) ||
        get_all(job, ch, mac, sizeof mac, NULL, NULL, why, wlen))
        return -1;
    msg_mac(ch, ch->got++, buf, len, want);
    if (!tcp_crypto_equal(mac, want, sizeof mac)) {
        snprintf(why, wlen, "a message from the other side's leader failed its check (refused)");
        return -1;
    }
    return 0;
}

void cr_xchan_close(cr_xchan *ch)
{
    memset(ch->mkey, 0, sizeof ch->mkey);
    memset(ch->lkey, 0, sizeof ch->lkey);
}

/* ---- sets of extra peers ------------------------------------------------- */

struct cr_xset {
    cr_job *job;
    const cr_transport *ops;
    void *ctx;
    cr_link *link; /* its slot in job->links once added */
    int self, size;
    int lo, n; /* the other group's members */
    int first; /* the engine's peer of member lo */
    unsigned char key[CR_SECRET_LEN];
    unsigned char card[CR_XCARD];
    size_t cardlen;
    unsigned char *cards;                 /* the other group's, CR_XCARD each */
    void (*lost)(cr_job *job, void *arg); /* cr_xset_on_lost's, or NULL */
    void *lost_arg;
};

static int closed_poll(void *ctx)
{
    (void)ctx;
    return 0;
}
static void closed_flush(void *ctx)
{
    (void)ctx;
}
static void closed_close(void *ctx)
{
    (void)ctx;
}
static int closed_gone(void *ctx, int peer)
{
    (void)ctx, (void)peer;
    return 1;
}
static int closed_send(void *ctx, int peer, const cr_hdr *h, const void *payload, size_t len)
{
    (void)ctx, (void)peer, (void)h, (void)payload, (void)len;
    return CR_EAGAIN; /* never sent: the peer has left (cr_tp_gone says so) */
}
static size_t closed_max(void *ctx, int peer)
{
    (void)ctx, (void)peer;
    return 0;
}
/* A set's slot after its close (poll and arm find nothing), and what its peers
 * are reached by from then on. */
static const cr_transport closed_tp = {.name = "closed",
                                       .poll = closed_poll,
                                       .flush = closed_flush,
                                       .arm = closed_poll,
                                       .close = closed_close,
                                       .send_am = closed_send,
                                       .peer_gone = closed_gone,
                                       .max_payload = closed_max};

static int x_deliver(void *owner, int src, const cr_hdr *h, const void *payload, size_t len)
{
    cr_xset *x = owner;
    return cr_engine_deliver(x->job, src + x->link->base, h, payload, len);
}

static void *x_data_dest(void *owner, int src, const cr_hdr *h, size_t len)
{
    cr_xset *x = owner;
    return cr_engine_data_dest(x->job, src + x->link->base, h, len);
}

__attribute__((noreturn)) static void x_fatal(void *owner, const char *call, const char *msg)
{
    cr_xset *x = owner;
    if (x->lost) x->lost(x->job, x->lost_arg);
    cr_fatal(x->job, call, "%s (a peer of another job)", msg);
}

void cr_xset_on_lost(cr_xset *x, void (*fn)(cr_job *job, void *arg), void *arg)
{
    x->lost = fn;
    x->lost_arg = arg;
}

static void x_warn(void *owner, const char *msg)
{
    fprintf(stderr, "courier: rank %d: %s (peers of another job)\n", ((cr_xset *)owner)->job->rank,
            msg);
}

static int x_card_put(void *owner, const void *card, size_t len)
{
    cr_xset *x = owner;
    if (len > CR_XCARD) return -ENOSPC;
    memcpy(x->card, card, len);
    x->cardlen = len;
    return 0;
}

static int x_card_get(void *owner, int peer, void *card, size_t *len)
{
    cr_xset *x = owner;
    if (!x->cards || peer < x->lo || peer >= x->lo + x->n || *len < x->cardlen) return -ENODEV;
    memcpy(card, x->cards + (size_t)(peer - x->lo) * CR_XCARD, x->cardlen);
    *len = x->cardlen;
    return 0;
}

cr_xset *cr_xset_open(cr_job *job, int self, int size, const unsigned char key[CR_SECRET_LEN],
                      void *card, size_t *cardlen, char *why, size_t wlen)
{
    cr_xset *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(why, wlen, "out of memory");
        return NULL;
    }
    x->job = job;
    x->self = self;
    x->size = size;
    memcpy(x->key, key, CR_SECRET_LEN);
    cr_tp_env env = {.rank = self,
                     .size = size,
                     .owner = x,
                     .deliver = x_deliver,
                     .data_dest = x_data_dest,
                     .fatal = x_fatal,
                     .warn = x_warn,
                     .recv_gen = &job->recv_gen,
                     .pollers = &job->pollers,
                     .secret = x->key,
                     .net = getenv("COURIER_NET"),
                     .crowding = 1,
                     .card_put = x_card_put,
                     .card_get = x_card_get,
                     .onesided_ctx = CR_CTX_RMA};
    x->ops = &cr_transport_tcp;
    int rc = x->ops->open(&x->ctx, &env);
    if (rc) {
        snprintf(why, wlen, "cannot open the tcp transport: %s", strerror(-rc));
        free(x);
        return NULL;
    }
    memcpy(card, x->card, x->cardlen);
    *cardlen = x->cardlen;
    return x;
}

/* The waiting point polls the set's descriptor too (and, where it slept on
 * the host doorbell alone, from now on in poll(2) with the wake-up eventfd). */
void cr_poll_also(cr_job *job, int fd)
{
    if (job->wake_fd < 0) {
        job->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (job->wake_fd < 0) cr_die_errno("MPI: eventfd");
        if (job->use_bell) cr_host_sleep_on_fd(&job->host, job->wake_fd);
    }
    struct pollfd *p = realloc(job->pfds, (size_t)(job->npfds + 2) * sizeof *p);
    if (!p) cr_fatal(job, "MPI", "out of memory");
    job->pfds = p;
    if (!job->npfds)
        job->pfds[job->npfds++] = (struct pollfd){.fd = job->wake_fd, .events = POLLIN};
    job->pfds[job->npfds++] = (struct pollfd){.fd = fd, .events = POLLIN};
}

void cr_poll_no_more(cr_job *job, int fd)
{
    for (int i = 1; i < job->npfds; i++)
        if (job->pfds[i].fd == fd) {
            job->pfds[i] = job->pfds[--job->npfds];
            return;
        }
}

/* The link every closed set's peers point at (job->links' last). */
static const cr_link closed_link = {.ops = &closed_tp};

int cr_xset_add(cr_job *job, cr_xset *x, int lo, int n, const unsigned char *cards)
{
    job->links[CR_LINK_CLOSED] = closed_link;
    cr_link *l = NULL;
    for (int i = 0; i < job->nlinks && !l; i++)
        if (job->links[i].ops == &closed_tp) l = &job->links[i];
    if (!l) {
        if (job->nlinks == CR_MAX_LINKS)
            cr_fatal(job, "MPI",
                     "more than %d connections to other jobs at once; disconnect some first",
                     CR_MAX_LINKS - 4);
        l = &job->links[job->nlinks++];
    }
    x->cards = malloc((size_t)n * CR_XCARD);
    if (!x->cards) cr_fatal(job, "MPI", "out of memory");
    memcpy(x->cards, cards, (size_t)n * CR_XCARD);
    x->lo = lo;
    x->n = n;
    x->first = job->npeers;
    size_t old = (size_t)job->npeers, np = old + (size_t)n;
    job->link_of = cr_peer_array(job, job->link_of, old, np, sizeof *job->link_of);
    job->single_copy = cr_peer_array(job, job->single_copy, old, np, sizeof *job->single_copy);
    job->backlog = cr_peer_array(job, job->backlog, 2 * old, 2 * np, sizeof *job->backlog);
    job->ctrlq = cr_peer_array(job, job->ctrlq, old, np, sizeof *job->ctrlq);
    job->owed = cr_peer_array(job, job->owed, old, np, sizeof *job->owed);
    job->sends_to = cr_peer_array(job, job->sends_to, old, np, sizeof *job->sends_to);
    int *hosts = malloc(np * sizeof *hosts); /* the first array stays: transports keep it */
    if (!hosts) cr_fatal(job, "MPI", "out of memory");
    memcpy(hosts, job->host_of, old * sizeof *hosts);
    if (job->host_of_first)
        free(job->host_of); /* an earlier set's: only the job held it */
    else
        job->host_of_first = job->host_of;
    job->host_of = hosts;
    long eager = getenv("COURIER_EAGER_LIMIT") ? atol(getenv("COURIER_EAGER_LIMIT")) : 16384;
    size_t max = x->ops->max_payload(x->ctx, lo); /* the same for every peer */
    *l = (cr_link){.ops = x->ops,
                   .ctx = x->ctx,
                   .base = x->first - lo,
                   .eager = eager >= 0 && (size_t)eager < max ? (size_t)eager : max};
    x->link = l;
    job->one_link = -1; /* the set's peers have a link of their own */
    for (int i = 0; i < n; i++) {
        int p = x->first + i;
        job->link_of[p] = (uint8_t)(l - job->links);
        job->host_of[p] = -1 - i; /* on no host of this job's */
        x->ops->own(x->ctx, lo + i);
    }
    job->npeers = (int)np;
    cr_poll_also(job, x->ops->fd(x->ctx));
    return x->first;
}

typedef struct sends_to {
    cr_job *job;
    int lo, hi;
} sends_to;

/* No send to peers lo..hi-1 is queued or under way. */
static bool sends_done(void *arg)
{
    sends_to *s = arg;
    cr_job *job = s->job;
    for (int p = s->lo; p < s->hi; p++)
        if (job->backlog[2 * p] || job->backlog[2 * p + 1] || job->ctrlq[p] || job->owed[p])
            return false;
    for (uint32_t i = 0; i < job->reqs.n && job->sends_active; i++) {
        cr_req *r = cr_idt_at(&job->reqs, i);
        if (cr_idt_live(r) && r->kind == CR_REQ_SEND && !r->done && r->peer >= s->lo &&
            r->peer < s->hi)
            return false;
    }
    return true;
}

void cr_xset_close(cr_job *job, const char *call, cr_xset *x)
{
    sends_to s = {job, x->first, x->first + x->n};
    cr_wait_until(job, call, sends_done, &s, NULL);
    cr_req **rr = malloc((size_t)x->n * sizeof *rr);
    if (!rr) cr_fatal(job, call, "out of memory");
    for (int i = 0; i < x->n; i++) {
        cr_sel sel = {.src = x->first + i, .ctx = CR_CTX_XPEERS, .tag_mode = CR_TAG_EXACT};
        rr[i] = cr_irecv(job, call, &sel, NULL, 0);
    }
    for (int i = 0; i < x->n; i++) cr_send(job, call, x->first + i, CR_CTX_XPEERS, 0, NULL, 0);
    for (int i = 0; i < x->n; i++) {
        cr_req_wait(job, rr[i]);
        cr_req_release(job, rr[i]);
    }
    free(rr);
    cr_wait_until(job, call, sends_done, &s, NULL);
    cr_poll_no_more(job, x->ops->fd(x->ctx));
    x->ops->close(x->ctx);
    for (int p = s.lo; p < s.hi; p++) job->link_of[p] = CR_LINK_CLOSED;
    *x->link = closed_link;
    free(x->cards);
    memset(x->key, 0, sizeof x->key);
    free(x);
}
