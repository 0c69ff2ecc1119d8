/* `courier run`: start a job, forward its output and signals, watch it, and
 * clean up whatever happens.
 *
 * Invariants:
 *  - the shared segment is a memfd (no name anywhere), so it disappears with the
 *    last process that holds it: nothing is ever left in /dev/shm;
 *  - every rank runs in the job's own process group and has PR_SET_PDEATHSIG
 *    (SIGKILL): if the launcher dies, even by SIGKILL, the ranks die too; the
 *    launcher itself kills the whole group before it returns, so no process of
 *    the job outlives it;
 *  - the first rank to fail (non-zero exit or a signal) is reported in one line,
 *    then every other rank is sent SIGTERM and, half a second later, SIGKILL (a
 *    second, after a signal to the launcher). A rank that exits non-zero from
 *    outside the job (it had finalized at exit, or never joined) harms nobody's
 *    messages, so the others are ended only once each has ended or waited in a
 *    communication call, nothing moving, for STILL_MS, or after LAST_WORDS_MS:
 *    a rank printing its own last words is not killed half-way (NPB DT: every
 *    rank prints an error and exits 1 after MPI_Finalize). A signal, or an end
 *    inside the job (a fatal error, _exit, MPI_Abort), ends the others at once;
 *  - when every rank still running has been blocked in a communication call,
 *    with nothing moving, for --hang-timeout seconds, the watchdog says what
 *    each waits for and the job ends with status 99 (src/run/watchdog.c);
 *  - output is forwarded a whole line at a time, so lines of different ranks
 *    never mix (a partial line is flushed when it grows past the buffer or at
 *    the end of the stream);
 *  - nothing a rank wrote is lost, and the launcher's report comes after it:
 *    a rank that ended has its pipes read to EOF (or, while a process it left
 *    behind holds them, to empty) when it is reaped, and before any report line
 *    (failure, --timeout, deadlock, signal) every rank's pipes are read of what
 *    they hold; after the report, ranks are forwarded until their pipes close. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../host/host.h"
#include "../transport/transport.h"
#include "launcher.h"
#include "watchdog.h"

#define LINE_MAX_FWD 4096
#define GRACE_MS 500 /* from SIGTERM to SIGKILL */
#define WATCH_MS 200 /* how often the hang watchdog looks */
#define EXIT_DEADLOCK 99
#define LAST_WORDS_MS 2000 /* the most the others run on after a failure outside the job */
#define STILL_MS 500       /* ... unless all have waited in calls, nothing moving, this long */
#define PENDING_MS 20      /* meanwhile, how often we look whether they all wait */

typedef struct stream {
    int fd;  /* -1 once closed */
    int out; /* 1 or 2 */
    size_t len;
    char buf[LINE_MAX_FWD];
} stream;

typedef struct rank_proc {
    pid_t pid;
    int appnum;
    bool running;
    stream s[2];
} rank_proc;

/* The failure that will end the job, once reported. */
typedef struct failure {
    int rank; /* -1: none */
    pid_t pid;
    int st;         /* its wait status */
    bool now;       /* end the others at once: a signal, or it ended inside the job */
    uint64_t until; /* else the others may run on until then (ns) */
    bool reported;
} failure;

typedef struct job_spec {
    cr_run_spec cmd; /* what the command line asks for */
    void *control;   /* the segment's control part (rank and status records) */
    int secretfd;    /* the job's secret, a sealed memfd each rank reads once */
    cr_watchdog *wd; /* reads those records; NULL if it could not be made */
    rank_proc *ranks;
    bool *alive; /* scratch: ranks[r].running, for the watchdog */
    failure fail;
    pid_t pgid;
    int exit_status;
    bool ending;             /* termination under way */
    cpu_set_t cpus;          /* the CPUs the launcher may use, and so the job */
    int cpu_of[CPU_SETSIZE]; /* the i-th of them */
    bool bind;               /* each rank on one of them, round robin (--bind) */
    uint64_t kill_at;        /* when SIGKILL follows the SIGTERM (ns), 0: not scheduled */
} job_spec;

static const char usage_text[] =
    "usage: courier run [--label] [--timeout S] [--hang-timeout S] [--bind B] [--net NET]\n"
    "                   -n N prog [args]\n"
    "                   [: -n M prog2 [args]]...\n"
    "  -n N              start N ranks of prog (1..1024 in all)\n"
    "  --label           prefix every output line with [rank]\n"
    "  --timeout S       end the job if it runs longer than S seconds\n"
    "  --hang-timeout S  report and end a deadlock after S seconds (default 5, 0: off)\n"
    "  --bind B          auto (default): one CPU per rank, round robin, when ranks\n"
    "                    outnumber CPUs; core: always; none: never\n"
    "  --net NET         the address TCP listens on: an address, address/prefix or\n"
    "                    interface name (sets COURIER_NET; default 127.0.0.1)\n";

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("courier run: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fputs(usage_text, stderr);
    return 2;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the command line ---------------------------------------------------- */

static int parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || !*s || *end) return -1;
    *out = v;
    return 0;
}

/* Is prog something execvp can run (a path, or a name found along $PATH)? */
static bool find_program(const char *prog, void *arg)
{
    (void)arg;
    if (strchr(prog, '/')) return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    char buf[PATH_MAX];
    for (const char *p = path;; p = strchr(p, ':') + 1) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? p : ".", prog);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return true;
        if (!e) return false;
    }
}

__attribute__((format(printf, 4, 5))) static int parse_error(cr_run_spec *spec, char *err,
                                                             size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* The message quotes arguments: keep it one line and free of terminal controls. */
    for (char *p = err; errlen && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    cr_run_spec_free(spec);
    return 2;
}

void cr_run_spec_free(cr_run_spec *spec)
{
    free(spec->apps);
    free(spec->args);
    spec->apps = NULL;
    spec->args = NULL;
    spec->napps = spec->total = 0;
}

int cr_run_parse(int argc, char *const *argv, cr_run_spec *spec,
                 bool (*find)(const char *prog, void *arg), void *find_arg, char *err,
                 size_t errlen)
{
    *spec = (cr_run_spec){.hang_timeout = 5};
    if (errlen) err[0] = '\0';
    if (argc < 1) argc = 1; /* argv[0] ("run") is never looked at */
    /* One copy of the argument vector: each program's list ends where its ':' was. */
    spec->apps = calloc((size_t)argc, sizeof *spec->apps);
    spec->args = calloc((size_t)argc + 1, sizeof *spec->args);
    if (!spec->apps || !spec->args) return parse_error(spec, err, errlen, "out of memory");
    for (int k = 0; k < argc; k++) spec->args[k] = argv[k];
    char **args = spec->args;
    int i = 1;
    for (;;) {
        long n = -1;
        while (i < argc && args[i][0] == '-') {
            const char *a = args[i];
            if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np")) {
                if (i + 1 >= argc) return parse_error(spec, err, errlen, "%s needs a number", a);
                if (parse_count(args[i + 1], &n) || n < 1 || n > CR_RUN_MAX_RANKS)
                    return parse_error(spec, err, errlen,
                                       "-n %s: the number of ranks must be 1..%d", args[i + 1],
                                       CR_RUN_MAX_RANKS);
                i += 2;
            } else if (!strcmp(a, "--label")) {
                spec->label = true;
                i++;
            } else if (!strcmp(a, "--timeout") || !strcmp(a, "--hang-timeout")) {
                char *end;
                bool hang = a[2] == 'h';
                if (i + 1 >= argc)
                    return parse_error(spec, err, errlen, "%s needs a number of seconds", a);
                double v = strtod(args[i + 1], &end);
                if (*end || !*args[i + 1] || !(v > 0 || (hang && v == 0)) || v > 1e7)
                    return parse_error(spec, err, errlen,
                                       "%s %s: give a positive number of seconds", a, args[i + 1]);
                *(hang ? &spec->hang_timeout : &spec->timeout) = v;
                i += 2;
            } else if (!strcmp(a, "--bind")) {
                const char *v = i + 1 < argc ? args[i + 1] : "";
                if (!strcmp(v, "auto"))
                    spec->bind = CR_BIND_AUTO;
                else if (!strcmp(v, "core"))
                    spec->bind = CR_BIND_CORE;
                else if (!strcmp(v, "none"))
                    spec->bind = CR_BIND_NONE;
                else
                    return parse_error(spec, err, errlen, "--bind %s: give auto, core or none", v);
                i += 2;
            } else if (!strcmp(a, "--net")) {
                if (i + 1 >= argc || !*args[i + 1] || args[i + 1][0] == '-' ||
                    strlen(args[i + 1]) > 255)
                    return parse_error(spec, err, errlen,
                                       "--net needs an address, address/prefix or interface "
                                       "name (e.g. 10.0.0.0/8 or eth0)");
                spec->net = args[i + 1];
                i += 2;
            } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
                cr_run_spec_free(spec);
                spec->help = true;
                return 0;
            } else {
                return parse_error(spec, err, errlen, "unknown option %s", a);
            }
        }
        if (n < 0) return parse_error(spec, err, errlen, "give the number of ranks with -n N");
        if (i >= argc || !strcmp(args[i], ":"))
            return parse_error(spec, err, errlen, "no program to run");
        if (find && !find(args[i], find_arg))
            return parse_error(spec, err, errlen, "program '%s' not found or not executable",
                               args[i]);
        cr_run_app *a = &spec->apps[spec->napps++];
        a->n = (int)n;
        a->argv = &args[i];
        while (i < argc && strcmp(args[i], ":")) i++;
        if (spec->total + n > CR_RUN_MAX_RANKS)
            return parse_error(spec, err, errlen, "%ld ranks in all: at most %d", spec->total + n,
                               CR_RUN_MAX_RANKS);
        spec->total += (int)n;
        if (i >= argc) break;
        args[i++] = NULL; /* ends this program's argument list (in our copy) */
    }
    return 0;
}

/* ---- output forwarding --------------------------------------------------- */

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return; /* our own output is gone (closed pipe): drop, keep watching the job */
        }
        p += w;
        n -= (size_t)w;
    }
}

static void emit(job_spec *js, int rank, int out, const char *p, size_t n)
{
    if (js->cmd.label) {
        char pre[32];
        int k = snprintf(pre, sizeof pre, "[%d] ", rank);
        char line[LINE_MAX_FWD + 40];
        memcpy(line, pre, (size_t)k);
        memcpy(line + k, p, n);
        write_all(out, line, (size_t)k + n);
    } else {
        write_all(out, p, n);
    }
}

/* Read at most max bytes of the stream; forward every complete line. Returns the
 * bytes read, 0 at EOF (the stream is then closed), -1 when it has nothing now. */
static ssize_t pump(job_spec *js, int rank, stream *s, size_t max)
{
    size_t room = sizeof s->buf - s->len;
    ssize_t r = read(s->fd, s->buf + s->len, max < room ? max : room);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return -1;
    if (r <= 0) {
        if (s->len) emit(js, rank, s->out, s->buf, s->len);
        if (s->len && s->buf[s->len - 1] != '\n') write_all(s->out, "\n", 1);
        s->len = 0;
        close(s->fd);
        s->fd = -1;
        return 0;
    }
    s->len += (size_t)r;
    size_t start = 0;
    for (size_t i = 0; i < s->len; i++)
        if (s->buf[i] == '\n') {
            emit(js, rank, s->out, s->buf + start, i + 1 - start);
            start = i + 1;
        }
    if (start == 0 && s->len == sizeof s->buf) { /* a line longer than the buffer */
        emit(js, rank, s->out, s->buf, s->len);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
    return r;
}

/* Forward all the stream holds now, and close it at EOF. Bounded by what the
 * pipe holds when called (and one read more, which sees EOF once every writer
 * is gone), so a rank that writes without pause cannot keep us here. */
static void drain_stream(job_spec *js, int rank, stream *s)
{
    if (s->fd < 0) return;
    int avail = 0;
    if (ioctl(s->fd, FIONREAD, &avail) < 0 || avail < 0) avail = 0;
    for (size_t left = (size_t)avail; left;) {
        ssize_t r = pump(js, rank, s, left);
        if (r <= 0) break;
        left -= (size_t)r;
    }
    if (s->fd >= 0) pump(js, rank, s, sizeof s->buf);
}

static void drain_rank(job_spec *js, int rank)
{
    for (int j = 0; j < 2; j++) drain_stream(js, rank, &js->ranks[rank].s[j]);
}

/* Before the launcher says anything: forward what every rank has written. */
static void drain_all(job_spec *js)
{
    for (int r = 0; r < js->cmd.total; r++) drain_rank(js, r);
}

/* ---- starting ranks ------------------------------------------------------ */

static size_t segment_size(int n)
{
    return cr_host_segment_size(n, cr_shm_region_size(n));
}

static int make_segment(int n, size_t *len, void **control)
{
    *len = segment_size(n);
    int fd = memfd_create("courier-job", MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)*len) < 0) goto fail;
    /* Reserve the memory now, so that a job too big for this machine fails here
     * with a clear message instead of a SIGBUS in a rank later. */
    int rc = posix_fallocate(fd, 0, (off_t)*len);
    if (rc) {
        errno = rc;
        goto fail;
    }
    void *base = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) goto fail;
    cr_shm_region_init(cr_host_segment_init(base, n, cr_shm_region_size(n)), n);
    /* keep the control part: the watchdog reads the ranks' status records */
    size_t keep = cr_host_control_size(n);
    munmap((char *)base + keep, *len - keep);
    *control = base;
    return fd;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* The job's secret (32 random bytes): what proves that a connection comes from
 * a rank of this job (the tcp transport's handshake). It goes to the ranks in a
 * memfd sealed against writes, inherited, which each rank reads once and closes:
 * never in argv, the environment or a file another user could read. */
static int make_secret(void)
{
    unsigned char key[32];
    size_t got = 0;
    while (got < sizeof key) {
        ssize_t n = getrandom(key + got, sizeof key - got, 0);
        if (n < 0 && errno != EINTR) return -1;
        if (n > 0) got += (size_t)n;
    }
    int fd = memfd_create("courier-secret", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    if (write(fd, key, sizeof key) != (ssize_t)sizeof key ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    explicit_bzero(key, sizeof key);
    return fd;
}

static void child_exec(job_spec *js, int rank, int appnum, int segfd, int out[2], int err[2],
                       pid_t parent)
{
    setpgid(0, js->pgid);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* the launcher is already gone */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL); /* the launcher ignores it; an ignored signal survives exec */
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (rank != 0) {
        int dn = open("/dev/null", O_RDONLY);
        if (dn >= 0) dup2(dn, 0);
    }
    /* The rank gets stdin/stdout/stderr and the segment, nothing else the launcher
     * inherited (a test harness's pipes, a shell's descriptors). */
    if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
        for (int fd = 3; fd < 1024; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(segfd, F_SETFD, fcntl(segfd, F_GETFD) & ~FD_CLOEXEC);
    fcntl(js->secretfd, F_SETFD, fcntl(js->secretfd, F_GETFD) & ~FD_CLOEXEC);
    char v[32];
    snprintf(v, sizeof v, "%d", rank);
    setenv("COURIER_RANK", v, 1);
    snprintf(v, sizeof v, "%d", js->cmd.total);
    setenv("COURIER_SIZE", v, 1);
    snprintf(v, sizeof v, "%d", segfd);
    setenv("COURIER_SHM_FD", v, 1);
    snprintf(v, sizeof v, "%d", js->secretfd);
    setenv("COURIER_SECRET_FD", v, 1);
    snprintf(v, sizeof v, "%d", appnum);
    setenv("COURIER_APPNUM", v, 1);
    setenv("COURIER_HOST_RANK", "0", 1);
    setenv("COURIER_LAUNCHED", "1", 1);
    if (js->cmd.net) setenv("COURIER_NET", js->cmd.net, 1);
    /* The CPUs the job has, whatever this rank is bound to: ranks judge from it
     * whether they outnumber the CPUs (and so must not spin). */
    snprintf(v, sizeof v, "%d", CPU_COUNT(&js->cpus));
    setenv("COURIER_CPUS", v, 1);
    if (js->bind) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(js->cpu_of[rank % CPU_COUNT(&js->cpus)], &one);
        sched_setaffinity(0, sizeof one, &one); /* a failure leaves the rank unbound */
    }
    char **argv = js->cmd.apps[appnum].argv;
    execvp(argv[0], argv);
    fprintf(stderr, "courier: rank %d: cannot execute %s: %s\n", rank, argv[0], strerror(errno));
    _exit(127);
}

/* The job's process group has a leader of its own that lives until the end, so
 * its id cannot be reused by an unrelated group while we may still signal it. */
static int start_leader(job_spec *js)
{
    pid_t me = getpid(), pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != me) _exit(0);
        for (;;) pause();
    }
    setpgid(pid, pid);
    js->pgid = pid;
    return 0;
}

static int start_ranks(job_spec *js, int segfd)
{
    pid_t me = getpid();
    if (start_leader(js) < 0) return -1;
    int rank = 0;
    for (int a = 0; a < js->cmd.napps; a++)
        for (int k = 0; k < js->cmd.apps[a].n; k++, rank++) {
            int out[2], err[2];
            if (pipe2(out, O_CLOEXEC) < 0) return -1;
            if (pipe2(err, O_CLOEXEC) < 0) {
                close(out[0]);
                close(out[1]);
                return -1;
            }
            pid_t pid = fork();
            if (pid < 0) return -1;
            if (pid == 0) child_exec(js, rank, a, segfd, out, err, me);
            setpgid(pid, js->pgid);
            rank_proc *rp = &js->ranks[rank];
            rp->pid = pid;
            rp->appnum = a;
            rp->running = true;
            close(out[1]);
            close(err[1]);
            rp->s[0] = (stream){.fd = out[0], .out = 1};
            rp->s[1] = (stream){.fd = err[0], .out = 2};
            fcntl(out[0], F_SETFL, O_NONBLOCK);
            fcntl(err[0], F_SETFL, O_NONBLOCK);
        }
    return 0;
}

/* ---- watching ------------------------------------------------------------ */

static void end_job(job_spec *js, int status)
{
    if (js->ending) return;
    js->ending = true;
    js->exit_status = status;
    kill(-js->pgid, SIGTERM);
    js->kill_at = now_ns() + (uint64_t)GRACE_MS * 1000000u;
}

static int find_rank(job_spec *js, pid_t pid)
{
    for (int r = 0; r < js->cmd.total; r++)
        if (js->ranks[r].pid == pid) return r;
    return -1;
}

static int running(job_spec *js)
{
    int n = 0;
    for (int r = 0; r < js->cmd.total; r++) n += js->ranks[r].running;
    return n;
}

/* Collect every rank that has ended, forwarding all it wrote, and note the
 * failure that will end the job. When several fail, the one killed by a signal
 * is reported: a rank that died takes others down with it (they find it gone),
 * and the report must name the cause. */
static void reap(job_spec *js)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) { /* a rank may leave the group */
        int r = find_rank(js, pid);
        if (r < 0) continue;
        js->ranks[r].running = false;
        drain_rank(js, r); /* it is gone: all it wrote is in its pipes */
        bool failed = WIFSIGNALED(st) || WEXITSTATUS(st) != 0;
        if (js->ending || !failed) continue; /* ended by us, or done: nothing to report */
        failure *f = &js->fail;
        if (f->rank < 0 || (WIFSIGNALED(st) && !WIFSIGNALED(f->st))) {
            f->rank = r;
            f->st = st;
            f->pid = pid;
        }
        if (WIFEXITED(st) && js->wd && cr_watchdog_rank_outside(js->wd, r)) {
            if (!f->until) f->until = now_ns() + (uint64_t)LAST_WORDS_MS * 1000000u;
        } else {
            f->now = true;
        }
    }
}

static int failure_status(const failure *f)
{
    return WIFSIGNALED(f->st) ? 128 + WTERMSIG(f->st) : WEXITSTATUS(f->st);
}

/* Say which rank failed, once, after everything the ranks have written so far. */
static void report_failure(job_spec *js)
{
    failure *f = &js->fail;
    if (f->rank < 0 || f->reported) return;
    f->reported = true;
    drain_all(js);
    if (WIFSIGNALED(f->st)) {
        int sig = WTERMSIG(f->st);
        fprintf(stderr, "courier: rank %d (pid %d) killed by SIG%s; ending the job\n", f->rank,
                (int)f->pid, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    } else {
        fprintf(stderr, "courier: rank %d (pid %d) exited with status %d; ending the job\n",
                f->rank, (int)f->pid, WEXITSTATUS(f->st));
    }
}

static bool *alive_now(job_spec *js)
{
    for (int r = 0; r < js->cmd.total; r++) js->alive[r] = js->ranks[r].running;
    return js->alive;
}

/* A rank has failed: end the job when no rank has anything more to say. At once
 * for a signal or a rank that ended inside the job; else once every other rank
 * has ended or waited in a communication call (for the failed one, most likely)
 * for STILL_MS with nothing moving, or LAST_WORDS_MS after the failure, whichever
 * comes first. "Waits" alone is not enough: a rank asleep in a wait whose
 * message has just come (a collective's last step) shows as waiting until it
 * runs, then goes on to print its own last words. */
static void settle(job_spec *js, uint64_t now)
{
    failure *f = &js->fail;
    if (js->ending || f->rank < 0) return;
    if (!f->now && running(js) && now < f->until &&
        !(js->wd && cr_watchdog_check(js->wd, alive_now(js), now, (uint64_t)STILL_MS * 1000000u)))
        return;
    report_failure(js);
    end_job(js, failure_status(f));
}

static void on_signal(job_spec *js, int sig)
{
    if (sig == SIGCHLD) return;
    if (js->ending) { /* asked twice: stop waiting */
        kill(-js->pgid, SIGKILL);
        return;
    }
    report_failure(js); /* one pending: it happened first */
    drain_all(js);
    fprintf(stderr, "courier: got SIG%s; ending the job\n", sigabbrev_np(sig));
    js->ending = true;
    js->exit_status = 128 + sig;
    kill(-js->pgid, sig);
    js->kill_at = now_ns() + 1000000000u;
}

static int watch(job_spec *js, int sfd)
{
    int nfds = 2 * js->cmd.total + 1;
    struct pollfd *pf = calloc((size_t)nfds, sizeof *pf);
    int *who = calloc((size_t)nfds, sizeof *who);
    js->alive = calloc((size_t)js->cmd.total, sizeof *js->alive);
    js->wd = cr_watchdog_new(js->control, js->cmd.total);
    if (!pf || !who || !js->alive) {
        free(pf);
        free(who);
        return -1;
    }
    uint64_t deadline = js->cmd.timeout > 0 ? now_ns() + (uint64_t)(js->cmd.timeout * 1e9) : 0;
    bool hang_watch = js->wd && js->cmd.hang_timeout > 0;
    uint64_t next_look = 0;
    bool streams_open = true;
    while (running(js) || streams_open) {
        int k = 0;
        pf[k++] = (struct pollfd){.fd = sfd, .events = POLLIN};
        for (int r = 0; r < js->cmd.total; r++)
            for (int j = 0; j < 2; j++)
                if (js->ranks[r].s[j].fd >= 0) {
                    who[k] = r * 2 + j;
                    pf[k++] = (struct pollfd){.fd = js->ranks[r].s[j].fd, .events = POLLIN};
                }
        streams_open = k > 1;
        if (!streams_open && !running(js)) break;
        int wait_ms = 1000;
        uint64_t now = now_ns();
        if (deadline && !js->ending) {
            if (now >= deadline) {
                report_failure(js);
                drain_all(js);
                fprintf(stderr,
                        "courier: job exceeded --timeout %g s with %d rank(s) still running; "
                        "ending the job\n",
                        js->cmd.timeout, running(js));
                end_job(js, 124);
                continue;
            }
            uint64_t left = (deadline - now) / 1000000u + 1;
            if (left < (uint64_t)wait_ms) wait_ms = (int)left;
        }
        if (hang_watch && !js->ending) {
            if (now >= next_look) {
                next_look = now + (uint64_t)WATCH_MS * 1000000u;
                if (cr_watchdog_check(js->wd, alive_now(js), now,
                                      (uint64_t)(js->cmd.hang_timeout * 1e9))) {
                    report_failure(js);
                    drain_all(js);
                    cr_watchdog_report(js->wd, js->alive, js->cmd.hang_timeout, stderr);
                    fprintf(stderr, "courier: ending the job\n");
                    end_job(js, EXIT_DEADLOCK);
                    continue;
                }
            }
            if (wait_ms > WATCH_MS) wait_ms = WATCH_MS;
        }
        if (js->fail.rank >= 0 && !js->ending && wait_ms > PENDING_MS) wait_ms = PENDING_MS;
        if (js->kill_at) {
            if (now >= js->kill_at) {
                kill(-js->pgid, SIGKILL);
                js->kill_at = 0;
            } else {
                uint64_t left = (js->kill_at - now) / 1000000u + 1;
                if (left < (uint64_t)wait_ms) wait_ms = (int)left;
            }
        }
        if (!running(js)) wait_ms = 200; /* ranks are gone: only their children keep pipes */
        int n = poll(pf, (nfds_t)k, wait_ms);
        if (n < 0 && errno != EINTR) break;
        if (n == 0 && !running(js)) break; /* nothing more will come */
        if (pf[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                on_signal(js, (int)si.ssi_signo);
        }
        for (int i = 1; i < k; i++)
            if (pf[i].revents) {
                stream *s = &js->ranks[who[i] / 2].s[who[i] % 2];
                if (s->fd >= 0) pump(js, who[i] / 2, s, sizeof s->buf);
            }
        reap(js);
        settle(js, now_ns());
    }
    free(pf);
    free(who);
    return 0;
}

int cr_run_main(int argc, char **argv)
{
    job_spec js = {.fail.rank = -1};
    char err[8192];
    int rc = cr_run_parse(argc, argv, &js.cmd, find_program, NULL, err, sizeof err);
    if (rc) return usage_error("%s", err);
    if (js.cmd.help) {
        fputs(usage_text, stdout);
        return 0;
    }

    /* Two pipes per rank: raise the descriptor limit as far as we may. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    js.ranks = calloc((size_t)js.cmd.total, sizeof *js.ranks);
    if (!js.ranks) return usage_error("out of memory for %d ranks", js.cmd.total);
    /* Binding: with more ranks than CPUs, a rank left to migrate costs everyone a
     * trip through the load balancer; one CPU each, neighbours apart, is steadier
     * (docs/run.md has the figures). */
    if (sched_getaffinity(0, sizeof js.cpus, &js.cpus) != 0) {
        CPU_ZERO(&js.cpus);
        CPU_SET(0, &js.cpus);
    }
    for (int c = 0, k = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &js.cpus)) js.cpu_of[k++] = c;
    js.bind = js.cmd.bind == CR_BIND_CORE ||
              (js.cmd.bind == CR_BIND_AUTO && js.cmd.total > CPU_COUNT(&js.cpus));

    size_t seglen = segment_size(js.cmd.total);
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        seglen + (64u << 20) > rl.rlim_cur) {
        fprintf(stderr,
                "courier run: the %zu MiB shared segment for %d ranks does not fit the "
                "address-space limit (ulimit -v %llu KiB); use fewer ranks or raise the limit\n",
                seglen >> 20, js.cmd.total, (unsigned long long)rl.rlim_cur / 1024);
        return 1;
    }
    int segfd = make_segment(js.cmd.total, &seglen, &js.control);
    if (segfd < 0) {
        fprintf(stderr,
                "courier run: cannot create the %zu-byte shared segment for %d ranks: %s; "
                "use fewer ranks or raise the memory limit\n",
                seglen, js.cmd.total, strerror(errno));
        return 1;
    }
    js.secretfd = make_secret();
    if (js.secretfd < 0) {
        fprintf(stderr, "courier run: cannot make the job's secret: %s\n", strerror(errno));
        close(segfd);
        return 1;
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    signal(SIGPIPE, SIG_IGN);
    if (sfd < 0 || start_ranks(&js, segfd) < 0) {
        int e = errno;
        fprintf(stderr, "courier run: cannot start %d ranks: %s%s\n", js.cmd.total, strerror(e),
                e == EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
        if (js.pgid) {
            kill(-js.pgid, SIGKILL);
            while (waitpid(-js.pgid, NULL, 0) > 0) {
            }
        }
        return 1;
    }
    close(segfd); /* the ranks hold it now */
    close(js.secretfd);
    if (watch(&js, sfd) < 0) {
        fprintf(stderr, "courier run: out of memory watching %d ranks; ending the job\n",
                js.cmd.total);
        js.exit_status = 1;
    }
    kill(-js.pgid, SIGKILL); /* the leader, and anything a rank left in the job's group */
    while (waitpid(-1, NULL, 0) > 0) {
    }
    cr_watchdog_free(js.wd);
    free(js.alive);
    munmap(js.control, cr_host_control_size(js.cmd.total));
    free(js.ranks);
    cr_run_spec_free(&js.cmd);
    return js.exit_status;
}
