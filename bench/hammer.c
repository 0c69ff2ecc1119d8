/* A stranger hammering a job's ports, for the "with a stranger hammering the
 * port" row of bench/compare.sh: it connects to TCP ports in a loop, sends a
 * little junk and closes, at a fixed rate, until its time is up or it is told
 * to stop (SIGTERM, SIGINT).
 *
 *   hammer [--seconds S] [--rate N] [--host ADDR] [--exe PATH]... [--sink] [PORT]...
 *
 *   --seconds S  stop after S seconds (default 120)
 *   --rate N     connections per second over all targets (default 1000)
 *   --host ADDR  where the PORTs are (default 127.0.0.1)
 *   --exe PATH   also every listening TCP socket that only processes running
 *                the executable PATH hold, found in /proc (looked for again
 *                every 10 ms until 2 s after the first is found, then every
 *                second: the job may start after us); a socket inherited from
 *                a launcher is left alone
 *   --sink       the control: hammer a listening socket of our own instead,
 *                which we accept, read and close ourselves after each hit; the
 *                machine then does the same work for the connections, but
 *                outside the job, so a job's slowdown under --sink is what any
 *                such neighbour costs it, not what its transport does
 *
 * At the end it prints one line on stderr: "hammer: N connections to M ports
 * in S s (R/s), F failed", S counted from when the first port was found.
 *
 * Invariants:
 *  - every wait is bounded: connects are non-blocking and waited for with
 *    poll() for at most 100 ms, a send never blocks, the run ends after S s;
 *  - at most one connection is open at a time, and it is closed before the
 *    next one starts; every other one ends with a reset (SO_LINGER 0), so
 *    neither side piles up TIME_WAIT sockets at high rates;
 *  - between connections it sleeps until the next one is due (an absolute
 *    schedule, never catching up by more than one period), so what it costs the
 *    machine is the target's handling of the connections, not a core of ours
 *    spinning;
 *  - it never learns anything about the job: the junk is random. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MAX_TARGETS = 256, MAX_EXES = 8, MAX_INODES = 4096 };

typedef struct target {
    struct sockaddr_storage sa;
    socklen_t len;
} target;

static target targets[MAX_TARGETS];
static int ntargets;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static int same_target(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) return 0;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
    return x->sin6_port == y->sin6_port && !memcmp(&x->sin6_addr, &y->sin6_addr, 16);
}

static void add_target(const struct sockaddr_storage *sa)
{
    for (int i = 0; i < ntargets; i++)
        if (same_target(&targets[i].sa, sa)) return;
    if (ntargets == MAX_TARGETS) return;
    targets[ntargets].sa = *sa;
    targets[ntargets].len =
        sa->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    ntargets++;
}

/* The socket inodes held by processes running one of exes[] (want 1), or by
 * any other process (want 0). */
static int socket_inodes(char exes[][PATH_MAX], int nexes, int want, unsigned long *ino, int max)
{
    int n = 0;
    DIR *proc = opendir("/proc");
    if (!proc) return 0;
    struct dirent *e;
    while ((e = readdir(proc)) && n < max) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == getpid()) continue;
        char path[64], exe[PATH_MAX];
        snprintf(path, sizeof path, "/proc/%ld/exe", pid);
        ssize_t l = readlink(path, exe, sizeof exe - 1);
        exe[l > 0 ? l : 0] = 0;
        int match = 0;
        for (int i = 0; i < nexes; i++) match |= !strcmp(exe, exes[i]);
        if (match != want) continue;
        snprintf(path, sizeof path, "/proc/%ld/fd", pid);
        DIR *fds = opendir(path);
        if (!fds) continue;
        struct dirent *f;
        while ((f = readdir(fds)) && n < max) {
            char fpath[384], link[64];
            snprintf(fpath, sizeof fpath, "%s/%s", path, f->d_name);
            ssize_t k = readlink(fpath, link, sizeof link - 1);
            if (k <= 0) continue;
            link[k] = 0;
            unsigned long inode;
            if (sscanf(link, "socket:[%lu]", &inode) == 1) ino[n++] = inode;
        }
        closedir(fds);
    }
    closedir(proc);
    return n;
}

/* Add the listening sockets of /proc/net/tcp{,6} whose inode is in ino[]. A
 * wildcard address is reached through loopback. */
static void listeners(const char *table, int v6, const unsigned long *ino, int nino)
{
    FILE *f = fopen(table, "r");
    if (!f) return;
    char line[512];
    if (!fgets(line, sizeof line, f)) { /* the heading */
        fclose(f);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        char local[64], remote[64];
        unsigned st, uid;
        unsigned long inode;
        int timeout;
        if (sscanf(line, " %*d: %63s %63s %x %*s %*s %*s %u %d %lu", local, remote, &st, &uid,
                   &timeout, &inode) != 6 ||
            st != 0x0A) /* TCP_LISTEN */
            continue;
        int mine = 0;
        for (int i = 0; i < nino && !mine; i++) mine = ino[i] == inode;
        char *colon = strchr(local, ':');
        if (!mine || !colon) continue;
        *colon = 0;
        unsigned port = (unsigned)strtoul(colon + 1, NULL, 16);
        struct sockaddr_storage sa;
        memset(&sa, 0, sizeof sa);
        if (!v6) {
            struct sockaddr_in *in = (void *)&sa;
            in->sin_family = AF_INET;
            in->sin_port = htons((uint16_t)port);
            in->sin_addr.s_addr = (uint32_t)strtoul(local, NULL, 16); /* printed as stored */
            if (in->sin_addr.s_addr == htonl(INADDR_ANY))
                in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        } else {
            struct sockaddr_in6 *in = (void *)&sa;
            in->sin6_family = AF_INET6;
            in->sin6_port = htons((uint16_t)port);
            for (int w = 0; w < 4; w++) {
                char word[9];
                memcpy(word, local + 8 * w, 8);
                word[8] = 0;
                uint32_t v = (uint32_t)strtoul(word, NULL, 16);
                memcpy(in->sin6_addr.s6_addr + 4 * w, &v, 4);
            }
            if (IN6_IS_ADDR_UNSPECIFIED(&in->sin6_addr)) in->sin6_addr = in6addr_loopback;
        }
        add_target(&sa);
    }
    fclose(f);
}

/* The listening sockets that only processes running exes[] hold: one they
 * inherited from their launcher (MPICH's ranks hold mpiexec's) is not theirs. */
static void discover(char exes[][PATH_MAX], int nexes)
{
    static unsigned long ino[MAX_INODES], other[MAX_INODES];
    int n = socket_inodes(exes, nexes, 1, ino, MAX_INODES);
    if (!n) return;
    int no = socket_inodes(exes, nexes, 0, other, MAX_INODES);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < no; j++)
            if (ino[i] == other[j]) {
                ino[i--] = ino[--n];
                break;
            }
    listeners("/proc/net/tcp", 0, ino, n);
    listeners("/proc/net/tcp6", 1, ino, n);
}

/* One connection: connect (bounded), send junk, close (FIN or reset). 1: it
 * connected. */
static int hit(const target *t, int reset)
{
    int fd = socket(t->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    int ok = 0;
    if (connect(fd, (const struct sockaddr *)&t->sa, t->len) == 0)
        ok = 1;
    else if (errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int err = 0;
        socklen_t el = sizeof err;
        ok = poll(&p, 1, 100) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 &&
             err == 0;
    }
    if (ok) {
        unsigned char junk[256];
        size_t n = 1 + rnd() % sizeof junk;
        for (size_t i = 0; i < n; i++) junk[i] = (unsigned char)rnd();
        (void)send(fd, junk, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (reset) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    close(fd);
    return ok;
}

static void usage(void)
{
    fprintf(stderr, "usage: hammer [--seconds S] [--rate N] [--host ADDR] [--exe PATH]... [--sink] "
                    "[PORT]...\n");
    exit(2);
}

/* --sink: a non-blocking listener on loopback, added as the only target */
static int sink_open(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in = (void *)&ss;
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof *in;
    if (fd < 0 || bind(fd, (struct sockaddr *)in, sl) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)in, &sl) != 0) {
        fprintf(stderr, "hammer: --sink: %s\n", strerror(errno));
        exit(1);
    }
    add_target(&ss);
    return fd;
}

/* --sink: take what has arrived, as a transport refusing strangers would */
static void sink_drain(int lfd)
{
    for (int i = 0; i < 16; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        unsigned char buf[512];
        (void)recv(fd, buf, sizeof buf, 0);
        close(fd);
    }
}

int main(int argc, char **argv)
{
    double seconds = 120, rate = 1000;
    const char *host = "127.0.0.1";
    static char exes[MAX_EXES][PATH_MAX];
    int nexes = 0;
    long ports[MAX_TARGETS];
    int nports = 0, sink = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(a, "--rate") && i + 1 < argc)
            rate = atof(argv[++i]);
        else if (!strcmp(a, "--host") && i + 1 < argc)
            host = argv[++i];
        else if (!strcmp(a, "--exe") && i + 1 < argc && nexes < MAX_EXES) {
            if (!realpath(argv[++i], exes[nexes])) {
                fprintf(stderr, "hammer: %s: %s\n", argv[i], strerror(errno));
                return 2;
            }
            nexes++;
        } else if (!strcmp(a, "--sink"))
            sink = 0;
        else if (a[0] != '-' && nports < MAX_TARGETS && atol(a) > 0 && atol(a) < 65536)
            ports[nports++] = atol(a);
        else
            usage();
    }
    if ((!nports && !nexes && sink < 0) || seconds <= 0 || rate <= 0) usage();
    if (sink == 0) sink = sink_open();
    for (int i = 0; i < nports; i++) {
        struct sockaddr_storage sa;
        memset(&sa, 0, sizeof sa);
        struct sockaddr_in *in = (void *)&sa;
        struct sockaddr_in6 *in6 = (void *)&sa;
        if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
            in->sin_family = AF_INET;
            in->sin_port = htons((uint16_t)ports[i]);
        } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
            in6->sin6_family = AF_INET6;
            in6->sin6_port = htons((uint16_t)ports[i]);
        } else {
            fprintf(stderr, "hammer: --host %s: not an IPv4 or IPv6 address\n", host);
            return 2;
        }
        add_target(&sa);
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    rng ^= (uint64_t)getpid() << 20 ^ now_ns();

    uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9);
    uint64_t period = (uint64_t)(1e9 / rate), next = t0, rescan = t0;
    uint64_t first = 0; /* when the first target was there */
    long conns = 0, failed = 0;
    int fixed = ntargets, turn = 0;
    for (uint64_t now = t0; !stop && now < end; now = now_ns()) {
        if (nexes && now >= rescan) {
            discover(exes, nexes);
            /* every 10 ms until one is found and for 2 s more (the other ranks
             * open theirs a little later), then every second */
            rescan =
                now + (ntargets == fixed || now - first < 2000000000u ? 10000000u : 1000000000u);
        }
        if (ntargets && !first) first = now;
        if (ntargets) {
            if (hit(&targets[turn % ntargets], turn / ntargets % 2)) /* FIN, then reset */
                conns++;
            else
                failed++;
            turn++;
            if (sink >= 0) sink_drain(sink);
        }
        next += ntargets ? period : 10000000u; /* nothing found yet: look again in 10 ms */
        now = now_ns();
        if (next + period < now) next = now; /* behind: do not catch up in a burst */
        if (next > now) {
            struct timespec ts = {.tv_sec = (time_t)(next / 1000000000u),
                                  .tv_nsec = (long)(next % 1000000000u)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL); /* EINTR: stop is set */
        }
    }
    double secs = first ? (double)(now_ns() - first) / 1e9 : 0.0;
    fprintf(stderr, "hammer: %ld connections to %d ports in %.1f s (%.0f/s), %ld failed\n", conns,
            ntargets, secs, secs > 0 ? (double)conns / secs : 0.0, failed);
    return 0;
}
