/* A stranger at the door (issue 11): while the ranks of a TCP job exchange
 * checksummed traffic, a process outside the job attacks every rank's listening
 * port, and the job must neither notice in its data nor crash, hang or let it in.
 *
 *   COURIER_TRANSPORTS=tcp courier run -n 4 stranger [SECONDS [ANY...]]
 *
 * Each rank finds its own listening TCP socket among its descriptors (the one
 * socket with SO_ACCEPTCONN), the ranks all-gather the addresses, and rank 0
 * forks and executes a fresh copy of this program as the stranger (a new image:
 * it holds no memory of the rank's, so it never knows the job's secret; its
 * environment is empty). For SECONDS (default 8) the ranks then run rounds of
 * all-to-all and shifted-ring traffic of mixed sizes (8 B to 4 KiB, 64-256 KiB,
 * and 1-3 MiB), two rounds in three received from MPI_ANY_SOURCE; every message
 * carries a header (source, destination, round, length) and a 64-bit checksum
 * of its body, and the receiver checks both against what the sender must have
 * made. Meanwhile the stranger, each attack many times at every rank:
 *   random     random bytes (1 B to 4 KiB, or 64 KiB);
 *   badmac     a well-formed HELLO claiming to be another rank, then, after
 *              the CHALLENGE, a RESPONSE with a random MAC or the CHALLENGE's
 *              own MAC reflected;
 *   badrank    a well-formed HELLO from a rank outside the job, or the target's own;
 *   halfopen   connect and say nothing (two per rank, opened again when dropped);
 *   loris      a HELLO one byte every 200 ms, then random bytes as slowly;
 *   scan       bursts of connect + close;
 *   reset      connect and reset at once (SO_LINGER 0), sometimes after half a HELLO.
 * At the end rank 0 stops the stranger (SIGTERM, then SIGKILL after 10 s) and
 * reaps it, and reads its report from a pipe.
 *
 * Invariants checked:
 *  - every message arrives once, from the rank and round its header names, with
 *    its length and checksum right; all ranks' sent and received counts, bytes
 *    and checksum sums agree (MPI_Allreduce);
 *  - no stranger connection ever gets a WELCOME, and a rank sends nothing but a
 *    CHALLENGE, and that only in answer to a well-formed HELLO from a member, to
 *    a stranger;
 *  - the stranger inherits no descriptor of rank 0's (they are close-on-exec);
 *  - the ranks refuse (close) random, badmac and badrank connections, and drop
 *    half-open ones (the transport gives an unproven connection a few seconds;
 *    checked when the run lasts 8 s or more);
 *  - every attack kind reached every rank several times (halfopen and loris:
 *    at least once, they last);
 *  - nothing is unbounded: the traffic stops after SECONDS (rank 0 decides and
 *    broadcasts each round), every stranger connection has a deadline, the
 *    stranger exits on SIGTERM, dies with rank 0 (PR_SET_PDEATHSIG), stops by
 *    itself after SECONDS + 30 s and is ended by alarm() 60 s later; its
 *    reaping waits at most 10 + 5 s.
 * The job must end with status 0 (the launcher's --timeout bounds it too). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/transport/tcp_auth.h" /* the handshake's sizes and kinds */
#include "../mpi/mcheck.h"

enum {
    MAX_RANKS = 64,
    HDR = 40,          /* a message's header: see msg_make */
    SMALL_MAX = 4096,  /* small bodies: 8 B .. 4 KiB */
    BIG_MIN = 1 << 20, /* big: 1 .. 3 MiB */
    BIG_MAX = 3 << 20,
    MSG_MAX = BIG_MAX + HDR,
    TAGS = 30000,         /* round r uses tag r % TAGS */
    MAX_ROUNDS = 1000000, /* a bound besides the clock */
    REAP_GRACE_S = 10,    /* after SIGTERM, before SIGKILL */
    STRANGER_EXTRA_S = 60 /* its alarm: this after its own limit (SECONDS + 30) */
};

static int me, np;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* ---- the job's traffic ------------------------------------------------------ */

/* The body length of round r's message from src to dst. */
static size_t body_len(long r, int src, int dst)
{
    uint64_t h = mix((uint64_t)r * 1000003u + (uint64_t)src * 131u + (uint64_t)dst);
    if (r % 10 == 9) return BIG_MIN + h % (BIG_MAX - BIG_MIN + 1);
    if (r % 10 == 4) return (64u << 10) + h % (192u << 10);
    return 8 + h % (SMALL_MAX - 8 + 1);
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> 8 * i);
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* FNV-1a over 8-byte words, then the tail */
static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) h = (h ^ get64(p + i)) * 0x100000001b3ULL;
    for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* Round r's message from src to dst into m: header (src, dst, round, body
 * length, checksum of the body) and a body that depends on all of them. */
static size_t msg_make(unsigned char *m, long r, int src, int dst)
{
    size_t n = body_len(r, src, dst);
    unsigned char *b = m + HDR;
    uint64_t x = mix((uint64_t)r << 20 ^ (uint64_t)src << 10 ^ (uint64_t)dst) | 1;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        put64(b + i, x);
    }
    for (; i < n; i++) b[i] = (unsigned char)(x >> (i % 8 * 8));
    put64(m, (uint64_t)src);
    put64(m + 8, (uint64_t)dst);
    put64(m + 16, (uint64_t)r);
    put64(m + 24, n);
    put64(m + 32, checksum(b, n));
    return HDR + n;
}

typedef struct tally {
    uint64_t msgs, bytes, sum; /* sum: of the messages' checksums */
} tally;
static tally sent, got;

/* Check a received message: count bytes from src (MPI_Status), round r. */
static void msg_check(const unsigned char *m, int count, int src, long r, unsigned char *scratch)
{
    CHECK(count >= HDR, "round %ld: a message of %d bytes from rank %d", r, count, src);
    uint64_t s = get64(m), d = get64(m + 8), rr = get64(m + 16), n = get64(m + 24);
    CHECK(s == (uint64_t)src && d == (uint64_t)me && rr == (uint64_t)r,
          "round %ld: the message from rank %d says source %llu, destination %llu, round %llu", r,
          src, (unsigned long long)s, (unsigned long long)d, (unsigned long long)rr);
    CHECK(n == body_len(r, src, me) && (uint64_t)count == HDR + n,
          "round %ld: the message from rank %d has %d bytes, its header says %llu + %d, it "
          "should have %zu + %d",
          r, src, count, (unsigned long long)n, HDR, body_len(r, src, me), HDR);
    uint64_t c = checksum(m + HDR, n);
    CHECK(c == get64(m + 32), "round %ld: the body from rank %d does not match its checksum", r,
          src);
    msg_make(scratch, r, src, me);
    CHECK(c == get64(scratch + 32) && !memcmp(m + HDR, scratch + HDR, n),
          "round %ld: the body from rank %d is not what it sent", r, src);
    got.msgs++;
    got.bytes += (uint64_t)count;
    got.sum += c;
}

/* One round: all-to-all with named sources, all-to-all from any source, or a
 * shift by k received from any source. */
static void round_run(long r, unsigned char **sbuf, unsigned char **rbuf, unsigned char *scratch)
{
    int kind = (int)(r % 3), tag = (int)(r % TAGS), ns = 0, nr = 0;
    int k = 1 + (int)(r / 3 % (np - 1)), dsts[MAX_RANKS];
    MPI_Request req[2 * MAX_RANKS];
    MPI_Status st[2 * MAX_RANKS];
    int srcs[MAX_RANKS];
    if (kind == 2) {
        dsts[ns++] = (me + k) % np;
        srcs[nr++] = MPI_ANY_SOURCE;
    } else
        for (int p = 0; p < np; p++)
            if (p != me) {
                dsts[ns++] = p;
                srcs[nr++] = kind == 1 ? MPI_ANY_SOURCE : p;
            }
    for (int i = 0; i < nr; i++)
        OK(MPI_Irecv(rbuf[i], MSG_MAX, MPI_BYTE, srcs[i], tag, MPI_COMM_WORLD, &req[i]));
    for (int i = 0; i < ns; i++) {
        size_t len = msg_make(sbuf[i], r, me, dsts[i]);
        OK(MPI_Isend(sbuf[i], (int)len, MPI_BYTE, dsts[i], tag, MPI_COMM_WORLD, &req[nr + i]));
        sent.msgs++;
        sent.bytes += len;
        sent.sum += get64(sbuf[i] + 32);
    }
    OK(MPI_Waitall(nr + ns, req, st));
    int from[MAX_RANKS] = {0};
    for (int i = 0; i < nr; i++) {
        int count, src = st[i].MPI_SOURCE;
        OK(MPI_Get_count(&st[i], MPI_BYTE, &count));
        CHECK(src >= 0 && src < np && src != me, "round %ld: a message from rank %d", r, src);
        CHECK(kind != 2 || src == (me - k + np) % np, "round %ld: shift by %d, but rank %d sent", r,
              k, src);
        CHECK(st[i].MPI_TAG == tag, "round %ld: tag %d", r, st[i].MPI_TAG);
        CHECK(!from[src]++, "round %ld: two messages from rank %d", r, src);
        msg_check(rbuf[i], count, src, r, scratch);
    }
}

/* ---- finding my listening socket -------------------------------------------- */

typedef struct endpoint {
    int32_t family; /* AF_INET or AF_INET6 */
    int32_t port;
    unsigned char addr[16];
} endpoint;

static endpoint my_listener(void)
{
    endpoint e;
    int found = 0;
    memset(&e, 0, sizeof e);
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL, "cannot list /proc/self/fd");
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        int fd = atoi(de->d_name), on = 0, type = 0, proto = 0;
        socklen_t l1 = sizeof on, l2 = sizeof type, l3 = sizeof proto;
        struct stat sb;
        if (fd == dirfd(d) || fstat(fd, &sb) != 0 || !S_ISSOCK(sb.st_mode)) continue;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &l1) != 0 || !on ||
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l2) != 0 || type != SOCK_STREAM ||
            getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l3) != 0 || proto != IPPROTO_TCP)
            continue;
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        CHECK(getsockname(fd, (struct sockaddr *)&ss, &sl) == 0, "getsockname(%d): %s", fd,
              strerror(errno));
        found++;
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *in = (void *)&ss;
            e.family = AF_INET;
            e.port = ntohs(in->sin_port);
            if (in->sin_addr.s_addr == htonl(INADDR_ANY))
                in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            memcpy(e.addr, &in->sin_addr, 4);
        } else {
            struct sockaddr_in6 *in = (void *)&ss;
            e.family = AF_INET6;
            e.port = ntohs(in->sin6_port);
            if (IN6_IS_ADDR_UNSPECIFIED(&in->sin6_addr)) in->sin6_addr = in6addr_loopback;
            memcpy(e.addr, &in->sin6_addr, 16);
        }
    }
    closedir(d);
    CHECK(found == 1,
          "rank %d has %d listening TCP sockets, wants exactly one (run me with "
          "COURIER_TRANSPORTS=tcp)",
          me, found);
    return e;
}

/* ---- the stranger ------------------------------------------------------------- */

enum { A_RANDOM, A_BADMAC, A_BADRANK, A_HALFOPEN, A_LORIS, A_SCAN, A_RESET, NKINDS };
static const char *const kind_name[NKINDS] = {"random", "badmac", "badrank", "halfopen",
                                              "loris",  "scan",   "reset"};

/* What the stranger saw, per kind. refused: the rank closed or reset it. */
typedef struct counts {
    long started, connected, refused, welcomed, replied, challenged, badchallenge, slow, connfail,
        open_at_end;
    long minconn, minref; /* the least connected / refused at any one rank */
} counts;

enum { C_CONNECTING = 1, C_WAIT, C_HELLO_SENT, C_RESPONSE_SENT };

typedef struct sconn {
    int fd, target, kind, state, claim;
    double opened, deadline, next_byte;
    size_t loris_off;
    unsigned char in[TCP_AUTH_CHALLENGE];
    size_t inlen;
    unsigned char hello[TCP_AUTH_HELLO];
} sconn;

enum { MAX_CONNS = 512, PER_TARGET = 24 };
static sconn conns[MAX_CONNS];
static int nconns;
static counts cnt[NKINDS];
static long tconn[MAX_RANKS][NKINDS], tref[MAX_RANKS][NKINDS]; /* per target */
static volatile sig_atomic_t stop_flag;
static uint64_t srng;
static struct sockaddr_storage taddr[MAX_RANKS];
static socklen_t tlen[MAX_RANKS];
static int ntargets;

static uint32_t srand32(void)
{
    srng ^= srng << 13, srng ^= srng >> 7, srng ^= srng << 17;
    return (uint32_t)(srng >> 11);
}

static void on_term(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void put32le(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> 8 * i);
}

/* A handshake message head, as tcp_auth.c writes it: "cour", version, kind, two
 * zero bytes, from and to (u32, little-endian). */
static void auth_head(unsigned char *p, int kind, uint32_t from, uint32_t to)
{
    memcpy(p, "cour", 4);
    p[4] = TCP_AUTH_VERSION;
    p[5] = (unsigned char)kind;
    p[6] = p[7] = 0;
    put32le(p + 8, from);
    put32le(p + 12, to);
}

static int head_is(const unsigned char *p, int kind)
{
    return !memcmp(p, "cour", 4) && p[4] == TCP_AUTH_VERSION && p[5] == kind;
}

static void fill_random(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)srand32();
}

static void conn_close(int i, int reset)
{
    if (reset) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(conns[i].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    close(conns[i].fd);
    conns[i] = conns[--nconns];
}

static int open_to_target(int t)
{
    int n = 0;
    for (int i = 0; i < nconns; i++) n += conns[i].target == t;
    return n;
}

/* Start a connection of kind k to target t (non-blocking). */
static void conn_start(int t, int k, double now)
{
    if (nconns == MAX_CONNS || (k != A_SCAN && open_to_target(t) >= PER_TARGET)) return;
    cnt[k].started++;
    int fd = socket(taddr[t].ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        cnt[k].connfail++;
        return;
    }
    if (connect(fd, (struct sockaddr *)&taddr[t], tlen[t]) != 0 && errno != EINPROGRESS) {
        cnt[k].connfail++;
        close(fd);
        return;
    }
    sconn *c = &conns[nconns++];
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->target = t;
    c->kind = k;
    c->state = C_CONNECTING;
    c->opened = now;
    c->deadline = now + 2; /* to connect */
    /* the rank a HELLO claims: another member (badmac), or one that is not
     * (badrank: outside the job, or the target itself) */
    c->claim = (t + 1 + (int)(srand32() % (uint32_t)(ntargets - 1))) % ntargets;
    if (k == A_BADRANK) c->claim = srand32() % 2 ? ntargets + (int)(srand32() % 1000) : t;
    auth_head(c->hello, TCP_AUTH_K_HELLO, (uint32_t)c->claim, (uint32_t)t);
    fill_random(c->hello + TCP_AUTH_HEAD, TCP_AUTH_NONCE);
}

static void send_some(sconn *c, const void *p, size_t n)
{
    (void)send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT); /* a full buffer: the rest is lost */
}

/* How long a rank may take to refuse a stranger: the transport gives one 3 s
 * times its host's ranks per CPU (a crowded host's ranks may not run for a
 * while), and we allow 3 s more. */
static double refuse_s(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    long crowding = ntargets > cpus ? (ntargets + cpus - 1) / cpus : 1;
    return 3.0 * (double)crowding + 3.0;
}

/* The connection is up: do what its kind does first. 0: it is finished. */
static int conn_connected(int i, double now)
{
    sconn *c = &conns[i];
    cnt[c->kind].connected++;
    tconn[c->target][c->kind]++;
    c->state = C_WAIT;
    c->deadline = now + refuse_s(); /* refused by then */
    switch (c->kind) {
    case A_RANDOM: {
        static unsigned char junk[64 << 10];
        size_t n = srand32() % 4 ? 1 + srand32() % 4096 : sizeof junk;
        fill_random(junk, n);
        if (n >= 4 && !memcmp(junk, "cour", 4)) junk[0] ^= 1;
        send_some(c, junk, n);
        break;
    }
    case A_BADMAC:
    case A_BADRANK:
        send_some(c, c->hello, TCP_AUTH_HELLO);
        c->state = C_HELLO_SENT;
        break;
    case A_HALFOPEN:
        c->deadline = now + 1e9; /* kept until the rank drops it or the run ends */
        break;
    case A_LORIS:
        c->deadline = now + 1e9;
        c->next_byte = now;
        break;
    case A_SCAN:
        conn_close(i, 0);
        return 0;
    case A_RESET:
        if (srand32() % 2) send_some(c, c->hello, TCP_AUTH_HELLO / 2);
        conn_close(i, 1);
        return 0;
    }
    return 1;
}

/* Bytes came from the rank on c. 0: the connection is finished. */
static int conn_input(int i)
{
    sconn *c = &conns[i];
    counts *k = &cnt[c->kind];
    unsigned char buf[4096];
    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            k->refused++;
            tref[c->target][c->kind]++;
            conn_close(i, 0);
            return 0;
        }
        if (n < 0) return 1;
        for (ssize_t j = 0; j + TCP_AUTH_HEAD <= n; j++)
            if (head_is(buf + j, TCP_AUTH_K_WELCOME)) k->welcomed++;
        int may_challenge = c->state == C_HELLO_SENT && c->kind == A_BADMAC;
        if (c->kind == A_LORIS && c->loris_off >= TCP_AUTH_HELLO) may_challenge = 1;
        if (!may_challenge) {
            k->replied++;
            continue;
        }
        size_t take = (size_t)n;
        if (take > TCP_AUTH_CHALLENGE - c->inlen) take = TCP_AUTH_CHALLENGE - c->inlen;
        memcpy(c->in + c->inlen, buf, take);
        c->inlen += take;
        if ((size_t)n > take) k->replied++;
        if (c->inlen < TCP_AUTH_CHALLENGE) continue;
        const unsigned char *h = c->in;
        uint32_t from =
            (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24;
        uint32_t to =
            (uint32_t)h[12] | (uint32_t)h[13] << 8 | (uint32_t)h[14] << 16 | (uint32_t)h[15] << 24;
        if (!head_is(h, TCP_AUTH_K_CHALLENGE) || from != (uint32_t)c->target ||
            to != (uint32_t)c->claim)
            k->badchallenge++;
        k->challenged++;
        c->inlen = 0;
        if (c->kind == A_LORIS) {
            c->loris_off = 0; /* the rest of the slow bytes: a RESPONSE it cannot make */
            continue;
        }
        unsigned char resp[TCP_AUTH_RESPONSE];
        auth_head(resp, TCP_AUTH_K_RESPONSE, (uint32_t)c->claim, (uint32_t)c->target);
        if (srand32() % 2) /* the acceptor's own MAC, reflected */
            memcpy(resp + TCP_AUTH_HEAD, h + TCP_AUTH_HEAD + TCP_AUTH_NONCE, TCP_AUTH_MAC);
        else
            fill_random(resp + TCP_AUTH_HEAD, TCP_AUTH_MAC);
        send_some(c, resp, sizeof resp);
        c->state = C_RESPONSE_SENT;
    }
}

static int stranger_main(int argc, char **argv)
{
    double limit = atof(argv[2]);
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    alarm((unsigned)limit + STRANGER_EXTRA_S); /* a last resort: SIGALRM ends it */
    srng = mix((uint64_t)getpid() << 32 ^ (uint64_t)(now_s() * 1e9)) | 1;
    for (int i = 3; i < argc && strcmp(argv[i], "--") && ntargets < MAX_RANKS; i++) {
        char host[INET6_ADDRSTRLEN + 1];
        int port;
        const char *slash = strrchr(argv[i], '/');
        if (!slash || slash - argv[i] > INET6_ADDRSTRLEN) return 2;
        memcpy(host, argv[i], (size_t)(slash - argv[i]));
        host[slash - argv[i]] = 0;
        port = atoi(slash + 1);
        struct sockaddr_in *in = (void *)&taddr[ntargets];
        struct sockaddr_in6 *in6 = (void *)&taddr[ntargets];
        if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
            in->sin_family = AF_INET;
            in->sin_port = htons((uint16_t)port);
            tlen[ntargets] = sizeof *in;
        } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
            in6->sin6_family = AF_INET6;
            in6->sin6_port = htons((uint16_t)port);
            tlen[ntargets] = sizeof *in6;
        } else
            return 2;
        ntargets++;
    }
    if (ntargets < 2) return 2;
    /* what came across exec from the rank: its descriptors must all be
     * close-on-exec (the transport's sockets are the job's, not ours) */
    int inherited = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *de; d && (de = readdir(d));)
        if (de->d_name[0] != '.' && atoi(de->d_name) > 2 && atoi(de->d_name) != dirfd(d))
            inherited++;
    if (d) closedir(d);
    /* per target: when each kind is due next; periods in seconds */
    static const double period[NKINDS] = {0.15, 0.15, 0.3, 0, 0, 0.5, 0.15};
    static double due[MAX_RANKS][NKINDS];
    double t0 = now_s(), end = t0 + limit;
    for (int t = 0; t < ntargets; t++)
        for (int k = 0; k < NKINDS; k++) due[t][k] = t0 + period[k] * t / ntargets;
    struct pollfd pfd[MAX_CONNS];
    while (!stop_flag && now_s() < end) {
        double now = now_s();
        for (int t = 0; t < ntargets; t++) {
            int half = 0, loris = 0;
            for (int i = 0; i < nconns; i++)
                if (conns[i].target == t) {
                    half += conns[i].kind == A_HALFOPEN;
                    loris += conns[i].kind == A_LORIS;
                }
            for (; half < 2; half++) conn_start(t, A_HALFOPEN, now);
            if (!loris) conn_start(t, A_LORIS, now);
            for (int k = 0; k < NKINDS; k++) {
                if (!period[k] || now < due[t][k]) continue;
                due[t][k] = now + period[k];
                for (int b = 0; b < (k == A_SCAN ? 16 : 1); b++) conn_start(t, k, now);
            }
        }
        for (int i = 0; i < nconns; i++) {
            pfd[i].fd = conns[i].fd;
            pfd[i].events = conns[i].state == C_CONNECTING ? POLLOUT : POLLIN;
            pfd[i].revents = 0;
        }
        int n = nconns;
        if (poll(pfd, (nfds_t)n, 5) < 0 && errno != EINTR) return 3;
        now = now_s();
        /* from the end down: conn_close moves the last entry into the hole */
        for (int i = n - 1; i >= 0; i--) {
            sconn *c = &conns[i];
            if (c->fd != pfd[i].fd) continue; /* moved: handled at its old place */
            if (c->state == C_CONNECTING) {
                if (pfd[i].revents) {
                    int err = 0;
                    socklen_t el = sizeof err;
                    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
                    if (err) {
                        cnt[c->kind].connfail++;
                        conn_close(i, 0);
                    } else
                        conn_connected(i, now);
                } else if (now > c->deadline) {
                    cnt[c->kind].connfail++;
                    conn_close(i, 1);
                }
                continue;
            }
            if (pfd[i].revents && !conn_input(i)) continue;
            if (c->kind == A_LORIS && now >= c->next_byte) {
                unsigned char b = c->loris_off < TCP_AUTH_HELLO ? c->hello[c->loris_off]
                                                                : (unsigned char)srand32();
                send_some(c, &b, 1);
                c->loris_off++;
                c->next_byte = now + 0.2;
            }
            if (now > c->deadline) {
                cnt[c->kind].slow++; /* not refused in time */
                conn_close(i, 1);
            }
        }
    }
    for (int i = 0; i < nconns; i++) cnt[conns[i].kind].open_at_end++;
    while (nconns) conn_close(nconns - 1, 1);
    for (int k = 0; k < NKINDS; k++) {
        counts *c = &cnt[k];
        c->minconn = c->minref = -1;
        for (int t = 0; t < ntargets; t++) {
            if (c->minconn < 0 || tconn[t][k] < c->minconn) c->minconn = tconn[t][k];
            if (c->minref < 0 || tref[t][k] < c->minref) c->minref = tref[t][k];
        }
        printf("%s %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld\n", kind_name[k], c->started,
               c->connected, c->refused, c->welcomed, c->replied, c->challenged, c->badchallenge,
               c->slow, c->connfail, c->open_at_end, c->minconn, c->minref);
    }
    printf("inherited %d\n", inherited);
    printf("seconds %.1f\n", now_s() - t0);
    return fflush(stdout) == 0 ? 0 : 4;
}

/* ---- rank 0's side of the stranger -------------------------------------------- */

/* The stranger: this program again (a new image), "--stranger LIMIT ADDR/PORT...
 * -- rank 0's arguments" (the last so that a test harness that marks the job's
 * processes by an argument finds the stranger too). */
static pid_t stranger_start(const endpoint *eps, double seconds, int rargc, char **rargv,
                            int *report)
{
    static char args[MAX_RANKS][INET6_ADDRSTRLEN + 8], limit[32];
    char *argv[MAX_RANKS + 64];
    int a = 0;
    snprintf(limit, sizeof limit, "%.0f", seconds + 30);
    argv[a++] = rargv[0];
    argv[a++] = "--stranger";
    argv[a++] = limit;
    for (int r = 0; r < np; r++) {
        char host[INET6_ADDRSTRLEN];
        CHECK(inet_ntop(eps[r].family, eps[r].addr, host, sizeof host), "rank %d's address", r);
        snprintf(args[r], sizeof args[r], "%s/%d", host, (int)eps[r].port);
        argv[a++] = args[r];
    }
    argv[a++] = "--";
    for (int i = 1; i < rargc && a < MAX_RANKS + 63; i++) argv[a++] = rargv[i];
    argv[a] = NULL;
    char *envp[] = {NULL};
    int p[2];
    CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
    pid_t parent = getpid(), pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) { /* only async-signal-safe calls until exec */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(126);
        if (dup2(p[1], 1) < 0) _exit(126);
        execve("/proc/self/exe", argv, envp);
        _exit(127);
    }
    close(p[1]);
    *report = p[0];
    return pid;
}

/* Stop and reap the stranger, read its report and judge it. */
static void stranger_end(pid_t pid, int report, double seconds)
{
    kill(pid, SIGTERM);
    int status = 0;
    pid_t w = 0;
    for (double t = now_s();
         (w = waitpid(pid, &status, WNOHANG)) == 0 && now_s() - t < REAP_GRACE_S;)
        usleep(10000);
    if (w == 0) {
        kill(pid, SIGKILL);
        for (double t = now_s(); (w = waitpid(pid, &status, WNOHANG)) == 0 && now_s() - t < 5;)
            usleep(10000);
    }
    CHECK(w == pid, "the stranger (pid %d) could not be reaped", (int)pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the stranger did not stop in order on SIGTERM (status %#x)", status);
    static char text[8192];
    size_t len = 0;
    for (;;) { /* it has exited: the pipe holds all there is */
        ssize_t n = read(report, text + len, sizeof text - 1 - len);
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(report);
    text[len] = 0;
    counts c[NKINDS];
    memset(c, 0, sizeof c);
    int seen = 0, inherited = -1;
    static char copy[sizeof text];
    memcpy(copy, text, len + 1);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char name[32];
        counts x;
        sscanf(line, "inherited %d", &inherited);
        if (sscanf(line, "%31s %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld", name, &x.started,
                   &x.connected, &x.refused, &x.welcomed, &x.replied, &x.challenged,
                   &x.badchallenge, &x.slow, &x.connfail, &x.open_at_end, &x.minconn,
                   &x.minref) != 13)
            continue;
        for (int k = 0; k < NKINDS; k++)
            if (!strcmp(name, kind_name[k])) {
                c[k] = x;
                seen |= 1 << k;
            }
        fprintf(
            stderr,
            "stranger: %-8s %5ld started, %5ld connected, %5ld refused by a rank, %ld welcomed, "
            "%ld answered, %ld challenged, %ld not refused in time, %ld connects failed, %ld "
            "open at the end\n",
            name, x.started, x.connected, x.refused, x.welcomed, x.replied, x.challenged, x.slow,
            x.connfail, x.open_at_end);
    }
    CHECK(seen == (1 << NKINDS) - 1 && inherited >= 0, "the stranger's report is incomplete:\n%s",
          copy);
    CHECK(inherited == 0,
          "the stranger, a child of rank 0, inherited %d descriptors across exec (a rank's "
          "descriptors must be close-on-exec)",
          inherited);
    for (int k = 0; k < NKINDS; k++) {
        long several = k == A_HALFOPEN || k == A_LORIS ? 1 : 3;
        CHECK(c[k].minconn >= several, "attack %s reached some rank only %ld times", kind_name[k],
              c[k].minconn);
        CHECK(c[k].welcomed == 0, "a rank said WELCOME to a stranger (%s, %ld times)", kind_name[k],
              c[k].welcomed);
        CHECK(c[k].replied == 0, "a rank answered a stranger (%s) with something not a CHALLENGE",
              kind_name[k]);
        CHECK(c[k].badchallenge == 0, "a CHALLENGE to a stranger (%s) had a wrong head",
              kind_name[k]);
    }
    for (int k = A_RANDOM; k <= A_BADRANK; k++) {
        CHECK(c[k].minref >= 1, "some rank never refused attack %s", kind_name[k]);
        CHECK(c[k].slow == 0, "%ld %s connections were not refused within %.0f s", c[k].slow,
              kind_name[k], refuse_s());
    }
    CHECK(c[A_BADMAC].challenged >= np, "the plausible HELLOs got %ld CHALLENGEs",
          c[A_BADMAC].challenged);
    CHECK(c[A_BADRANK].challenged == 0, "a HELLO from a rank outside the job was challenged");
    if (seconds >= 8)
        CHECK(c[A_HALFOPEN].minref >= 1 && c[A_LORIS].minref >= 1,
              "in %.0f s some rank dropped no half-open (least %ld) or no slow connection "
              "(least %ld) (an unproven connection has a few seconds)",
              seconds, c[A_HALFOPEN].minref, c[A_LORIS].minref);
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--stranger")) return stranger_main(argc, argv);
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(np >= 2 && np <= MAX_RANKS, "run me with 2 to %d ranks", MAX_RANKS);
    double seconds = argc > 1 ? atof(argv[1]) : 8;
    CHECK(seconds > 0 && seconds < 3600, "SECONDS: %s", argv[1]);

    endpoint mine = my_listener(), eps[MAX_RANKS];
    OK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, eps, sizeof mine, MPI_BYTE, MPI_COMM_WORLD));
    int report = -1;
    pid_t stranger = 0;
    if (me == 0) stranger = stranger_start(eps, seconds, argc, argv, &report);

    unsigned char *sbuf[MAX_RANKS], *rbuf[MAX_RANKS], *scratch = malloc(MSG_MAX);
    CHECK(scratch != NULL, "out of memory");
    for (int i = 0; i < np - 1; i++) {
        sbuf[i] = malloc(MSG_MAX);
        rbuf[i] = malloc(MSG_MAX);
        CHECK(sbuf[i] && rbuf[i], "out of memory");
    }
    double t0 = now_s();
    long rounds = 0;
    for (;;) {
        int go = me != 0 || (now_s() - t0 < seconds && rounds < MAX_ROUNDS);
        OK(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (!go) break;
        round_run(rounds++, sbuf, rbuf, scratch);
    }
    if (me == 0) stranger_end(stranger, report, seconds);

    uint64_t mine6[6] = {sent.msgs, sent.bytes, sent.sum, got.msgs, got.bytes, got.sum}, all[6];
    OK(MPI_Allreduce(mine6, all, 6, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
    CHECK(all[0] == all[3] && all[1] == all[4] && all[2] == all[5],
          "the job sent %llu messages (%llu bytes) and received %llu (%llu bytes), checksum "
          "sums %llx and %llx",
          (unsigned long long)all[0], (unsigned long long)all[1], (unsigned long long)all[3],
          (unsigned long long)all[4], (unsigned long long)all[2], (unsigned long long)all[5]);
    if (me == 0)
        fprintf(stderr, "stranger: %ld rounds, %llu messages, %.1f MB checked in %.1f s\n", rounds,
                (unsigned long long)all[3], (double)all[4] / 1e6, now_s() - t0);
    for (int i = 0; i < np - 1; i++) {
        free(sbuf[i]);
        free(rbuf[i]);
    }
    free(scratch);
    OK(MPI_Finalize());
    return 0;
}
