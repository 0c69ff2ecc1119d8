/* The ranks' own watchdog when no launcher of courier's watches them: a job
 * started by srun --mpi=pmi2 (pmi.c). Without it, a rank that exits early or
 * dies leaves the others waiting until srun's --time (srun ends the step only
 * with -K1), and a deadlock is never reported. With it the ranks find a failed
 * peer and a deadlock themselves and end the step with the lines courier run
 * would say.
 *
 * How: rank 0 runs a hub (a thread) that every other rank connects to at
 * start-up over TCP (its address in the PMI KVS, put before the one fence;
 * each connection proves, both ways, that it holds the job's secret with
 * HMAC-SHA256 over fresh nonces). Each rank's watch thread sends the hub what
 * its rank is blocked on whenever that changed (looked at every WATCH_MS; the
 * waiting point reports it as it does the segment's status board under
 * courier run), and its exit handler, run after the job's own (so its sends
 * are done), sends how it ended. The hub keeps a status board of its own for
 * the ranks and gives it to courier run's watchdog (src/host/watchdog.c), so
 * the decisions and the words are the same:
 *  - a connection that closes without that message: its rank died (a signal,
 *    _exit, MPI_Abort, a fatal error): the others are ended at once;
 *  - a rank that exits non-zero: the others may print their last words (until
 *    each has ended or waited still for STILL_MS, at most LAST_WORDS_MS);
 *  - every rank still running blocked with nothing moving for the hang timeout
 *    (COURIER_HANG_TIMEOUT, default 5 s, 0: off; 0.3 s when all wait for ranks
 *    that have finished): the deadlock report, and the job ends with 99.
 * Ending the job: the hub writes its lines on rank 0's standard error, sends
 * END to every rank and ends rank 0; each rank's watch thread ends its process
 * with _exit (the job's status), after flushing what stdout holds if it can.
 * Rank 0 dying ends the hub: each rank sees its connection close, rank 1 says
 * so, and all end (status 1).
 *
 * Invariants:
 *  - the watch exists only under PMI (job->pmi, no launcher): under courier
 *    run it costs nothing, not even a thread;
 *  - rank 0's exit waits, after its exit handlers, until every rank has said
 *    how it ended (or the job is ended), so the hub outlives the job; srun
 *    waits for every task anyway;
 *  - everything lives in job->pmiwatch; the threads block every signal (they
 *    are the program's) and never touch the engine: what a rank waits for
 *    crosses from the waiting point under a mutex of the watch's own;
 *  - a connection that does not prove it holds the secret is closed, and said
 *    once (rank 0's standard error). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../host/watchdog.h"
#include "../transport/tcp_crypto.h"
#include "../transport/tp_common.h"
#include "engine.h"
#include "pmi.h"
#include "pmiwatch.h"

#define WATCH_MS 100
#define STILL_NS 500000000ull       /* a failed job's others: waited still this long */
#define LAST_WORDS_NS 2000000000ull /* ... or at most this long after the failure */
#define HOSTLEN 64
#define KEY "courier-watch"
#define JOIN_S 30 /* a rank's time to join the hub; then rank 0 waits at exit only for those in */

enum { M_STATE = 1, M_EXIT, M_END };

typedef struct msg {
    uint32_t kind;
    int32_t status; /* M_EXIT: the rank's exit status; M_END: the job's */
    uint32_t blocked, spells;
    cr_waitinfo w;
} msg;

typedef struct hello { /* connector -> hub */
    char magic[8];
    int32_t rank, pid;
    char host[HOSTLEN];
    unsigned char nonce[32];
} hello;

typedef struct peer { /* the hub's view of a rank */
    int fd;           /* its connection, -1: none (yet, or any more) */
    bool known, done; /* it has connected; it has said how it ended */
    int pid;
    char host[HOSTLEN];
} peer;

struct cr_pmiwatch {
    int rank, size;
    pthread_mutex_t mu; /* the fields below, between the waiting point, the exit
                           handler and the thread */
    bool blocked;
    uint32_t spells;
    cr_waitinfo w;
    bool sent_blocked;
    uint32_t sent_spells;
    bool exiting;  /* its exit handler has run: the hub may go without a word */
    int fd;        /* a rank: its connection to the hub; rank 0: the exit pipe's write end */
    int listen_fd; /* rank 0 */
    int exit_pipe; /* rank 0: the read end (its own exit status arrives there) */
    pthread_mutex_t send_mu;
    pthread_cond_t all_done; /* rank 0's exit waits for it */
    bool finished;           /* rank 0: every rank has said how it ended */
    double hang_s;
    pid_t pid; /* the rank's process (a child it forked runs its exit handlers too) */
    char host[HOSTLEN];
    /* The hub (rank 0): its board, read by courier run's watchdog. */
    peer *peers;
    void *board; /* a segment's control part: head, rank records, status records */
    cr_host_rank *rk;
    cr_host_status *st;
    cr_watchdog *wd;
    bool *running;
    int fail_rank, fail_status;
    uint64_t fail_at;
    uint64_t started; /* when the hub started (ns) */
    bool stranger_said;
    unsigned char secret[CR_SECRET_LEN];
};

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t k = recv(fd, c, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static void mac(const cr_pmiwatch *pw, char role, const unsigned char nonce[32], int32_t rank,
                unsigned char out[TCP_CRYPTO_MAC])
{
    unsigned char m[1 + 32 + 4 + sizeof KEY];
    m[0] = (unsigned char)role;
    memcpy(m + 1, nonce, 32);
    memcpy(m + 33, &rank, 4);
    memcpy(m + 37, KEY, sizeof KEY);
    tcp_crypto_hmac(pw->secret, sizeof pw->secret, m, sizeof m, out);
}

/* ---- the address rank 0 listens on: COURIER_NET's, as tcp's ----------------- */

static int pick(const char *net, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in4 = (void *)ss;
    struct sockaddr_in6 *in6 = (void *)ss;
    if (!net || !*net) net = "127.0.0.1";
    if (inet_pton(AF_INET, net, &in4->sin_addr) == 1) return in4->sin_family = AF_INET, 0;
    if (inet_pton(AF_INET6, net, &in6->sin6_addr) == 1) return in6->sin6_family = AF_INET6, 0;
    cr_net_spec spec;
    struct ifaddrs *ifs;
    if (cr_net_parse(net, &spec) || getifaddrs(&ifs)) return -1;
    int rc = -1;
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        const struct sockaddr *sa = i->ifa_addr;
        if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) continue;
        if (!cr_net_matches(&spec, i)) continue;
        if (sa->sa_family == AF_INET6 &&
            IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr))
            continue;
        memcpy(ss, sa, sa->sa_family == AF_INET ? sizeof *in4 : sizeof *in6);
        rc = 0;
        if (sa->sa_family == AF_INET) break;
    }
    freeifaddrs(ifs);
    if (!rc) in4->sin_port = 0; /* (same place in both) */
    return rc;
}

/* ---- ending the job ---------------------------------------------------------- */

/* A rank told to end: what stdout holds goes out if no thread holds it. */
static _Noreturn void end_here(int status)
{
    if (ftrylockfile(stdout) == 0) {
        fflush_unlocked(stdout);
        funlockfile(stdout);
    }
    _exit(status);
}

/* The hub ends the job: its lines first (in one write), then every rank. */
static _Noreturn void end_job(cr_pmiwatch *pw, const char *text, int status)
{
    if (text) {
        size_t n = strlen(text);
        while (n) {
            ssize_t k = write(2, text, n);
            if (k <= 0 && errno != EINTR) break;
            if (k > 0) text += k, n -= (size_t)k;
        }
    }
    msg m = {.kind = M_END, .status = status};
    for (int r = 1; r < pw->size; r++)
        if (pw->peers[r].fd >= 0) write_all(pw->peers[r].fd, &m, sizeof m);
    end_here(status);
}

static void where(const cr_pmiwatch *pw, int r, char *buf, size_t len)
{
    const peer *p = &pw->peers[r];
    if (p->pid)
        snprintf(buf, len, " (pid %d on %s)", p->pid, p->host);
    else
        buf[0] = '\0';
}

/* ---- the hub ----------------------------------------------------------------- */

static void hub_accept(cr_pmiwatch *pw)
{
    struct sockaddr_storage from;
    socklen_t fl = sizeof from;
    int fd = accept4(pw->listen_fd, (struct sockaddr *)&from, &fl, SOCK_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE)) { /* the rest run unwatched */
        fprintf(stderr,
                "courier: rank 0: the ranks' watchdog can take no more ranks (%s: raise ulimit "
                "-n); the ranks not yet in run unwatched\n",
                strerror(errno));
        close(pw->listen_fd);
        pw->listen_fd = -1;
        return;
    }
    if (fd < 0) return;
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    hello h;
    unsigned char nonce[32], m[TCP_CRYPTO_MAC], want[TCP_CRYPTO_MAC];
    bool ok = !read_all(fd, &h, sizeof h) && !memcmp(h.magic, "cwatch1", 8) && h.rank > 0 &&
              h.rank < pw->size && pw->peers[h.rank].fd < 0 && !pw->peers[h.rank].known &&
              !tcp_crypto_random(nonce, sizeof nonce);
    if (ok) {
        unsigned char reply[32 + TCP_CRYPTO_MAC];
        memcpy(reply, nonce, 32);
        mac(pw, 'H', h.nonce, h.rank, reply + 32);
        mac(pw, 'C', nonce, h.rank, want);
        ok = !write_all(fd, reply, sizeof reply) && !read_all(fd, m, sizeof m) &&
             tcp_crypto_equal(m, want, sizeof m);
    }
    if (!ok) {
        close(fd);
        if (!pw->stranger_said) {
            char a[INET6_ADDRSTRLEN] = "?";
            void *ad = from.ss_family == AF_INET6
                           ? (void *)&((struct sockaddr_in6 *)&from)->sin6_addr
                           : (void *)&((struct sockaddr_in *)&from)->sin_addr;
            inet_ntop(from.ss_family, ad, a, sizeof a);
            fprintf(stderr,
                    "courier: rank 0: a connection to the ranks' watchdog from %s did not prove "
                    "it belongs to this job; refused (said once)\n",
                    a);
            pw->stranger_said = true;
        }
        return;
    }
    tv.tv_sec = 0;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    peer *p = &pw->peers[h.rank];
    p->fd = fd;
    p->known = true;
    p->pid = h.pid;
    h.host[HOSTLEN - 1] = '\0';
    snprintf(p->host, sizeof p->host, "%s", h.host);
    /* a rank on this host: the watchdog may see it stopped (a debugger) */
    if (!strcmp(p->host, pw->host)) atomic_store(&pw->rk[h.rank].pid, h.pid);
}

static void put_state(cr_pmiwatch *pw, int r, uint32_t blocked, uint32_t spells,
                      const cr_waitinfo *w)
{
    cr_host_status *s = &pw->st[r]; /* the hub's own board: one writer, one reader */
    s->blocked = blocked;
    s->spells = spells;
    s->w = *w;
    cr_waitinfo_sane(&s->w);
}

/* Rank r said it ended with status, or (died) its connection closed first. */
static void rank_ended(cr_pmiwatch *pw, int r, int status, bool died)
{
    peer *p = &pw->peers[r];
    if (p->done) return;
    p->done = true;
    pw->running[r] = false;
    char at[HOSTLEN + 32], line[512];
    where(pw, r, at, sizeof at);
    if (died) {
        snprintf(line, sizeof line,
                 "courier: rank %d%s ended without leaving the job (killed by a signal, or ended "
                 "by _exit, MPI_Abort or an error it reported); ending the job\n",
                 r, at);
        end_job(pw, line, 1);
    }
    if (status && pw->fail_rank < 0) {
        pw->fail_rank = r;
        pw->fail_status = status;
        pw->fail_at = mono_ns();
    }
}

static void hub_read(cr_pmiwatch *pw, int r)
{
    msg m;
    if (read_all(pw->peers[r].fd, &m, sizeof m)) {
        close(pw->peers[r].fd);
        pw->peers[r].fd = -1;
        rank_ended(pw, r, 0, !pw->peers[r].done);
        return;
    }
    if (m.kind == M_STATE) put_state(pw, r, m.blocked, m.spells, &m.w);
    if (m.kind == M_EXIT) rank_ended(pw, r, m.status, false);
}

/* Rank 0's own state, read from the watch. */
static void hub_self(cr_pmiwatch *pw)
{
    pthread_mutex_lock(&pw->mu);
    put_state(pw, 0, pw->blocked, pw->spells, &pw->w);
    pthread_mutex_unlock(&pw->mu);
}

static void hub_check(cr_pmiwatch *pw)
{
    int known = 0, running = 0;
    for (int r = 0; r < pw->size; r++) {
        known += pw->peers[r].known;
        running += pw->running[r];
    }
    uint64_t now = mono_ns();
    if (pw->fail_rank >= 0) { /* a rank exited non-zero: the others' last words */
        if (!running || now - pw->fail_at >= LAST_WORDS_NS ||
            (known == pw->size && cr_watchdog_check(pw->wd, pw->running, now, STILL_NS))) {
            char at[HOSTLEN + 32], line[512];
            where(pw, pw->fail_rank, at, sizeof at);
            snprintf(line, sizeof line,
                     "courier: rank %d%s exited with status %d; ending the job\n", pw->fail_rank,
                     at, pw->fail_status);
            end_job(pw, line, pw->fail_status);
        }
        return;
    }
    /* every rank has ended; or every one that joined has, and the others will
     * not join any more (the hub took no more, or they had JOIN_S to) */
    int waiting = 0;
    for (int r = 0; r < pw->size; r++) waiting += pw->running[r] && pw->peers[r].known;
    if (!running ||
        (!waiting && (pw->listen_fd < 0 || now - pw->started >= JOIN_S * 1000000000ull))) {
        pthread_mutex_lock(&pw->mu);
        pw->finished = true;
        pthread_cond_broadcast(&pw->all_done);
        pthread_mutex_unlock(&pw->mu);
        return;
    }
    if (known < pw->size || pw->hang_s <= 0) return;
    if (cr_watchdog_check(pw->wd, pw->running, now, (uint64_t)(pw->hang_s * 1e9))) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (f) {
            cr_watchdog_report(pw->wd, pw->running, pw->hang_s, f);
            fclose(f);
        }
        end_job(pw, text ? text : "courier: deadlock\n", 99);
    }
    char note[512];
    while (cr_watchdog_note(pw->wd, note, sizeof note)) fputs(note, stderr);
}

static void *hub(void *arg)
{
    cr_pmiwatch *pw = arg;
    struct pollfd *pf = calloc((size_t)pw->size + 2, sizeof *pf);
    int *who = calloc((size_t)pw->size + 2, sizeof *who);
    if (!pf || !who) end_job(pw, "courier: rank 0: out of memory for the watchdog\n", 1);
    for (;;) {
        int n = 0;
        if (pw->listen_fd >= 0) {
            pf[n] = (struct pollfd){.fd = pw->listen_fd, .events = POLLIN};
            who[n++] = -1;
        }
        if (pw->exit_pipe >= 0) {
            pf[n] = (struct pollfd){.fd = pw->exit_pipe, .events = POLLIN};
            who[n++] = 0;
        }
        for (int r = 1; r < pw->size; r++)
            if (pw->peers[r].fd >= 0) {
                pf[n] = (struct pollfd){.fd = pw->peers[r].fd, .events = POLLIN};
                who[n++] = r;
            }
        int k = poll(pf, (nfds_t)n, WATCH_MS);
        for (int i = 0; k > 0 && i < n; i++) {
            if (!pf[i].revents) continue;
            if (who[i] < 0) {
                hub_accept(pw);
            } else if (who[i] == 0) { /* rank 0's own exit */
                int32_t status = 0;
                if (read(pw->exit_pipe, &status, sizeof status) != (ssize_t)sizeof status)
                    status = 0;
                close(pw->exit_pipe);
                pw->exit_pipe = -1;
                rank_ended(pw, 0, status, false);
            } else {
                hub_read(pw, who[i]);
            }
        }
        if (!pw->peers[0].done) hub_self(pw);
        hub_check(pw);
    }
    return NULL;
}

/* ---- a rank's watch thread ----------------------------------------------- */

static void send_state(cr_pmiwatch *pw)
{
    pthread_mutex_lock(&pw->mu);
    bool changed = pw->blocked != pw->sent_blocked || pw->spells != pw->sent_spells;
    msg m = {.kind = M_STATE, .blocked = pw->blocked, .spells = pw->spells, .w = pw->w};
    pw->sent_blocked = pw->blocked;
    pw->sent_spells = pw->spells;
    pthread_mutex_unlock(&pw->mu);
    if (!changed) return;
    pthread_mutex_lock(&pw->send_mu);
    write_all(pw->fd, &m, sizeof m);
    pthread_mutex_unlock(&pw->send_mu);
}

static void *client(void *arg)
{
    cr_pmiwatch *pw = arg;
    for (;;) {
        struct pollfd pf = {.fd = pw->fd, .events = POLLIN};
        if (poll(&pf, 1, WATCH_MS) > 0) {
            msg m;
            if (read_all(pw->fd, &m, sizeof m)) {
                pthread_mutex_lock(&pw->mu);
                bool exiting = pw->exiting;
                pthread_mutex_unlock(&pw->mu);
                if (exiting) return NULL; /* rank 0 went once every rank had ended */
                /* rank 0 waits at its exit until every rank has said: it died */
                if (pw->rank == 1)
                    fprintf(stderr,
                            "courier: rank 0 ended without leaving the job (killed by a signal, "
                            "or ended by _exit, MPI_Abort or an error it reported); ending the "
                            "job\n");
                end_here(1);
            }
            if (m.kind == M_END) end_here(m.status);
        }
        send_state(pw);
    }
    return NULL;
}

/* ---- exit ---------------------------------------------------------------- */

/* Runs after the job's own exit handler (its sends are done): say how this
 * rank ended; rank 0 then waits until every rank has. */
static void on_exit_handler(int status, void *arg)
{
    cr_pmiwatch *pw = arg;
    if (pw->fd < 0 || getpid() != pw->pid) return; /* never started; a child of the rank */
    int32_t s = status;
    pthread_mutex_lock(&pw->mu);
    pw->exiting = true;
    pthread_mutex_unlock(&pw->mu);
    if (pw->rank == 0) {
        if (write(pw->fd, &s, sizeof s) != (ssize_t)sizeof s) return;
        pthread_mutex_lock(&pw->mu);
        while (!pw->finished) pthread_cond_wait(&pw->all_done, &pw->mu);
        pthread_mutex_unlock(&pw->mu);
        return;
    }
    msg m = {.kind = M_EXIT, .status = s};
    pthread_mutex_lock(&pw->send_mu);
    write_all(pw->fd, &m, sizeof m);
    pthread_mutex_unlock(&pw->send_mu);
}

/* ---- start-up ---------------------------------------------------------------- */

static double hang_timeout(cr_job *job)
{
    const char *v = getenv("COURIER_HANG_TIMEOUT");
    if (!v || !*v) return 5;
    char *end;
    double s = strtod(v, &end);
    if (*end || !(s >= 0) || s > 1e7)
        cr_fatal(job, "init",
                 "COURIER_HANG_TIMEOUT=%s is not a value it takes: give a number of seconds "
                 "(0: no deadlock watch; docs/run.md, Settings)",
                 v);
    return s;
}

void cr_pmiwatch_prepare(cr_job *job)
{
    cr_pmiwatch *pw = calloc(1, sizeof *pw);
    if (!pw) cr_fatal(job, "init", "out of memory");
    pw->rank = job->rank;
    pw->size = job->size;
    pw->fd = pw->listen_fd = pw->exit_pipe = -1;
    pw->fail_rank = -1;
    pw->hang_s = hang_timeout(job);
    pw->pid = getpid();
    pthread_mutex_init(&pw->mu, NULL);
    pthread_mutex_init(&pw->send_mu, NULL);
    pthread_cond_init(&pw->all_done, NULL);
    gethostname(pw->host, sizeof pw->host - 1);
    job->pmiwatch = pw;
    on_exit(on_exit_handler, pw); /* before the job's own: runs after it */
    if (job->rank != 0) return;
    struct rlimit rl; /* a connection per rank */
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    struct sockaddr_storage ss;
    const char *net = getenv("COURIER_NET");
    if (pick(net, &ss))
        cr_fatal(job, "init",
                 "COURIER_NET=%s names no address of this host (give an address, a prefix such "
                 "as 10.0.0.0/8, or an interface such as lo)",
                 net);
    socklen_t sl =
        ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 512) ||
        getsockname(fd, (struct sockaddr *)&ss, &sl))
        cr_fatal(job, "init", "the ranks' watchdog cannot listen: %s", strerror(errno));
    pw->listen_fd = fd;
    char a[INET6_ADDRSTRLEN], val[INET6_ADDRSTRLEN + 16];
    void *ad = ss.ss_family == AF_INET6 ? (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
                                        : (void *)&((struct sockaddr_in *)&ss)->sin_addr;
    inet_ntop(ss.ss_family, ad, a, sizeof a);
    snprintf(val, sizeof val, "%s %u", a, ntohs(((struct sockaddr_in *)&ss)->sin_port));
    if (cr_pmi_put(job, KEY, val))
        cr_fatal(job, "init", "PMI2_KVS_Put of the watchdog's address failed");
}

static void start_thread(cr_job *job, void *(*fn)(void *), cr_pmiwatch *pw)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* signals are the program's */
    pthread_t th;
    int rc = pthread_create(&th, NULL, fn, pw);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) cr_fatal(job, "init", "cannot start the ranks' watchdog thread: %s", strerror(rc));
    pthread_detach(th);
}

static void connect_hub(cr_job *job, cr_pmiwatch *pw)
{
    char val[128], a[INET6_ADDRSTRLEN];
    unsigned port = 0;
    if (cr_pmi_get(job, 0, KEY, val, sizeof val) || sscanf(val, "%45s %u", a, &port) != 2)
        cr_fatal(job, "init",
                 "cannot read rank 0's watchdog address from the PMI KVS; are all ranks courier "
                 "programs of one version?");
    struct sockaddr_storage ss = {0};
    struct sockaddr_in *in4 = (void *)&ss;
    struct sockaddr_in6 *in6 = (void *)&ss;
    socklen_t sl = sizeof *in4;
    if (inet_pton(AF_INET, a, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
    } else if (inet_pton(AF_INET6, a, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        sl = sizeof *in6;
    }
    /* A hub that cannot take this rank (its descriptors spent) leaves it
     * unwatched, said once, rather than stopping the job. */
    errno = 0;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = {.tv_sec = JOIN_S};
    hello h = {.magic = "cwatch1", .rank = job->rank, .pid = (int32_t)getpid()};
    snprintf(h.host, sizeof h.host, "%s", pw->host);
    unsigned char reply[32 + TCP_CRYPTO_MAC], want[TCP_CRYPTO_MAC], m[TCP_CRYPTO_MAC];
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) ||
        connect(fd, (struct sockaddr *)&ss, sl) || tcp_crypto_random(h.nonce, sizeof h.nonce) ||
        write_all(fd, &h, sizeof h) || read_all(fd, reply, sizeof reply)) {
        fprintf(stderr,
                "courier: rank %d: cannot join the ranks' watchdog at %s port %u (%s); this rank "
                "runs unwatched: its failure will not end the others\n",
                job->rank, a, port, errno ? strerror(errno) : "closed");
        if (fd >= 0) close(fd);
        return;
    }
    mac(pw, 'H', h.nonce, job->rank, want);
    if (!tcp_crypto_equal(want, reply + 32, sizeof want))
        cr_fatal(job, "init",
                 "the ranks' watchdog at %s port %u did not prove it belongs to this job", a, port);
    mac(pw, 'C', reply, job->rank, m);
    tv.tv_sec = 0;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (write_all(fd, m, sizeof m)) {
        close(fd);
        return;
    }
    pw->fd = fd;
}

void cr_pmiwatch_start(cr_job *job)
{
    cr_pmiwatch *pw = job->pmiwatch;
    if (!pw) return;
    memcpy(pw->secret, job->secret, sizeof pw->secret);
    char err[256];
    if (tcp_crypto_load(err, sizeof err)) cr_fatal(job, "init", "%s", err);
    if (job->rank != 0) {
        connect_hub(job, pw);
        if (pw->fd >= 0) start_thread(job, client, pw);
        return;
    }
    int n = job->size;
    size_t head = (sizeof(cr_host_head) + CR_HOST_LINE - 1) / CR_HOST_LINE * CR_HOST_LINE;
    size_t rks = (size_t)n * sizeof(cr_host_rank);
    pw->board = aligned_alloc(CR_HOST_LINE, head + rks + (size_t)n * sizeof(cr_host_status));
    pw->peers = calloc((size_t)n, sizeof *pw->peers);
    pw->running = calloc((size_t)n, sizeof *pw->running);
    if (!pw->board || !pw->peers || !pw->running) cr_fatal(job, "init", "out of memory");
    memset(pw->board, 0, head + rks + (size_t)n * sizeof(cr_host_status));
    cr_host_head *hd = pw->board;
    hd->nranks = (uint32_t)n;
    hd->rank_off = head;
    hd->status_off = head + rks;
    pw->rk = (cr_host_rank *)((char *)pw->board + head);
    pw->st = (cr_host_status *)((char *)pw->board + head + rks);
    pw->wd = cr_watchdog_new(pw->board, n);
    if (!pw->wd) cr_fatal(job, "init", "out of memory");
    for (int r = 0; r < n; r++) {
        pw->peers[r].fd = -1;
        pw->running[r] = true;
    }
    pw->peers[0].known = true;
    pw->peers[0].pid = (int)getpid();
    snprintf(pw->peers[0].host, HOSTLEN, "%s", pw->host);
    int p[2];
    if (pipe2(p, O_CLOEXEC)) cr_die_errno("init: pipe");
    pw->exit_pipe = p[0];
    pw->started = mono_ns();
    pw->fd = p[1];
    start_thread(job, hub, pw);
}

void cr_pmiwatch_report(cr_job *job, const cr_waitinfo *w)
{
    cr_pmiwatch *pw = job->pmiwatch;
    if (!pw) return;
    pthread_mutex_lock(&pw->mu);
    pw->blocked = w != NULL;
    if (w) {
        pw->w = *w;
        pw->spells++;
    }
    pthread_mutex_unlock(&pw->mu);
}
