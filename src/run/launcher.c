/* `courier run`: start a job, forward its output and signals, watch it, and
 * clean up whatever happens.
 *
 * Invariants:
 *  - what can be known wrong before a rank starts is refused then, in one line:
 *    the COURIER_* settings (src/run/envcheck.c), a program that is missing, a
 *    directory or linked with another MPI library (src/run/progfile.c), a
 *    --net naming no address of this host (an agent: of its host);
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
#include <pthread.h>
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
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "../host/host.h"
#include "../transport/transport.h"
#include "envcheck.h"
#include "hosts.h"
#include "jobs.h"
#include "launcher.h"
#include "progfile.h"
#include "trace_merge.h"
#include "tree.h"
#include "vsim.h"
#include "watchdog.h"

#define LINE_MAX_FWD 4096
#define GRACE_MS 500 /* from SIGTERM to SIGKILL */
#define WATCH_MS 200 /* how often the hang watchdog looks */
#define EXIT_DEADLOCK 99
#define LAST_WORDS_MS 2000 /* the most the others run on after a failure outside the job */
#define STILL_MS 500       /* ... unless all have waited in calls, nothing moving, this long */
#define PENDING_MS 20      /* meanwhile, how often we look whether they all wait */
#define FLUSH_MS 500       /* across hosts: how long a report waits for the ranks' output */

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

/* Across hosts, the launcher's output: what ranks and the launcher itself say,
 * in order, written by a thread of its own so that a terminal or pipe that
 * does not read (a pager) never stops the launcher from serving the agents'
 * tree (its heartbeats, its sockets). Past OUT_HOLD bytes the agents are told
 * to hold the ranks' output (CR_F_HOLD), so it stays bounded. */
#define OUT_HOLD (4u << 20)
typedef struct out_chunk {
    struct out_chunk *next;
    int fd;
    size_t len;
    char data[];
} out_chunk;

typedef struct out_q {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    out_chunk *head, *tail;
    size_t bytes;
    bool stop;
    pthread_t th;
} out_q;

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
    bool killed_all;         /* ... and, asked twice, everything killed at once */
    cpu_set_t cpus;          /* the CPUs the launcher may use, and so the job */
    int cpu_of[CPU_SETSIZE]; /* the i-th of them */
    bool bind;               /* each rank bound to CPUs of its own (--bind; start_here) */
    bool one_each;           /* ... one CPU, round robin; else a share of cpus/count CPUs */
    int cpu_start;           /* the place in cpu_of where rank first's CPUs begin */
    uint64_t kill_at;        /* when SIGKILL follows the SIGTERM (ns), 0: not scheduled */
    /* Across hosts (src/run/tree.c): the launcher starts no rank itself; each
     * host's agent starts its own and reports them up the tree. */
    int first, count;                /* the ranks this process starts: first .. first+count-1 */
    cr_tree *tree;                   /* the agents' tree; NULL for a job on this host alone */
    bool agent;                      /* this process is a host's agent */
    char *layout;                    /* COURIER_HOST_LAYOUT for the ranks: ranks per host, "4,4" */
    char net_here[INET6_ADDRSTRLEN]; /* an agent's default COURIER_NET */
    cr_host_card *cards;             /* every rank's card known here: the segment's (an
                                        agent), or a table of the launcher's own */
    bool *card_sent;                 /* an agent: cards of its ranks sent up */
    int cards_left;
    uint64_t started;       /* when the ranks were started (ns) */
    bool still;             /* the subtree's STILL, as last sent (agent) */
    bool *child_still;      /* each child's */
    uint64_t reports_until; /* the launcher: collecting what each rank waits for */
    /* Rank 0's standard input across hosts: the launcher reads its own and sends
     * it to the first host's agent (rank 0 is always there), which writes it
     * into a pipe. */
    int in_fd;      /* the launcher: 0 while it reads; the agent: the pipe's end, else -1 */
    int in_pipe[2]; /* the agent of rank 0: the pipe (read end for the rank) */
    char *in_buf;   /* the agent: what the pipe has not taken yet */
    size_t in_len;
    bool in_eof;    /* ... and then EOF */
    bool *flushed;  /* each child has sent up all its ranks wrote (CR_F_FLUSH) */
    out_q *oq;      /* the launcher across hosts: its output, written by a thread */
    bool held;      /* the launcher: the agents hold output; an agent: told to */
    bool flushing;  /* the launcher waits for that; an agent owes its parent FLUSHED */
    bool *reported; /* ... which ranks have said */
    /* `courier ps` / `courier status` (src/run/jobs.c): this process's entry in
     * the user's registry of jobs ("": none), and the segment's descriptor,
     * kept open so that courier status can map the segment through /proc. */
    char regpath[PATH_MAX];
    int segfd; /* valid while control is set */
    /* --trace (the launcher): the ranks' parts directory, and the hang
     * report for the trace when there was one (and when it was made). */
    char trace_parts[PATH_MAX];
    char *hang_text;
    uint64_t hang_at;
    int argc; /* the command line from "run" on, as the trace names the job */
    char **argv;
    cr_vsim *vsim;              /* --sim: the simulator (src/run/vsim.c), else NULL */
    char sim_preload[PATH_MAX]; /* --sim: the timer shim the ranks preload ("": none found) */
    bool contexts;              /* --sim: the ranks are contexts of one process, ... */
    pid_t ctx_pid;              /* ... this one (every rank_proc has its pid) */
} job_spec;

static const char usage_text[] =
    "usage: courier run [--label] [--timeout S] [--hang-timeout S] [--bind B] [--net NET]\n"
    "                   [--hosts LIST | --hostfile F] [--rsh CMD] [--trace FILE]\n"
    "                   [--sim MACHINE[,key=value...] [--sim-report FILE]]\n"
    "                   -n N prog [args]\n"
    "                   [: -n M prog2 [args]]...\n"
    "  -n N              start N ranks of prog (1..4096 in all)\n"
    "  --label           prefix every output line with [rank]\n"
    "  --timeout S       end the job if it runs longer than S seconds\n"
    "  --hang-timeout S  report and end a deadlock after S seconds (default 5, 0: off)\n"
    "  --bind B          auto (default): CPUs of its own for each rank (a share of\n"
    "                    CPUs/ranks; one each, round robin, when ranks outnumber\n"
    "                    CPUs); core: one CPU each always; none: never bind\n"
    "  --net NET         the address TCP listens on: an address, address/prefix or\n"
    "                    interface name (sets COURIER_NET; default 127.0.0.1, or across\n"
    "                    hosts the address each host reaches the launcher from)\n"
    "  --hosts LIST      run across hosts: a:4,b:4 (host:slots; ranks fill them in order)\n"
    "  --hostfile F      the hosts from a file: 'name slots=N' per line\n"
    "  --rsh CMD         how to start courier's agent on a host (default ssh; e.g.\n"
    "                    'ip netns exec'; 'none': on this machine, for tests)\n"
    "  --trace FILE      record every communication call and message of every rank\n"
    "                    into FILE (Chrome trace format: Perfetto opens it; a summary:\n"
    "                    courier trace FILE)\n";
/* After the machines' part of the help (cr_vsim_usage, from their descriptors). */
static const char usage_tail[] = "  --sim-report FILE the simulator's summary as JSON\n";

static void print_usage(FILE *f)
{
    fputs(usage_text, f);
    cr_vsim_usage(f);
    fputs(usage_tail, f);
}

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("courier run: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    print_usage(stderr);
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

/* The file execvp would run for prog (a path, or a name found along $PATH),
 * in buf; false when there is none. */
static bool resolve_program(const char *prog, char buf[PATH_MAX])
{
    if (strchr(prog, '/')) {
        snprintf(buf, PATH_MAX, "%s", prog);
        return access(prog, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    for (const char *p = path;; p = strchr(p, ':') + 1) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(buf, PATH_MAX, "%.*s/%s", (int)n, n ? p : ".", prog);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return true;
        if (!e) return false;
    }
}

/* Is prog something execvp can run? */
static bool find_program(const char *prog, void *arg)
{
    (void)arg;
    char buf[PATH_MAX];
    return resolve_program(prog, buf);
}

/* What keeps prog from running as a job of courier's, in one line (err):
 * PROG_USAGE (not found, a directory: the command line is wrong) or
 * PROG_FOREIGN (linked with another MPI library: its ranks would each start
 * alone, as a job of one rank, and end with status 0); PROG_OK: nothing. */
enum { PROG_OK, PROG_USAGE, PROG_FOREIGN };
static int program_problem(const char *prog, char *err, size_t errlen)
{
    int kind = PROG_USAGE;
    char path[PATH_MAX], lib[64];
    struct stat st;
    if (!resolve_program(prog, path))
        snprintf(err, errlen, "program '%s' not found or not executable", prog);
    else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(err, errlen, "program '%s' is a directory, not a program (name the program in it)",
                 prog);
    else if (cr_progfile_foreign_mpi(path, lib, sizeof lib) && (kind = PROG_FOREIGN))
        snprintf(err, errlen,
                 "program '%s' is linked with another MPI library (%s: Open MPI's, MPICH's or "
                 "another's), not with courier, so each of its ranks would run alone as a job of "
                 "one rank; rebuild it with courier-cc (or run it with that library's mpirun)",
                 prog, lib);
    else
        return PROG_OK;
    for (char *p = err; *p; p++) /* it quotes an argument: one line, no terminal controls */
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return kind;
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
            } else if (!strcmp(a, "--hosts") || !strcmp(a, "--hostfile") || !strcmp(a, "--rsh")) {
                if (i + 1 >= argc || !*args[i + 1])
                    return parse_error(spec, err, errlen, "%s needs %s", a,
                                       a[2] == 'r'   ? "a command (e.g. ssh, or 'ip netns exec')"
                                       : a[6] == 'f' ? "a file name"
                                                     : "a list of hosts (e.g. a:4,b:4)");
                *(a[2] == 'r'   ? &spec->rsh
                  : a[6] == 'f' ? &spec->hostfile
                                : &spec->hosts) = args[i + 1];
                i += 2;
            } else if (!strcmp(a, "--sim") || !strcmp(a, "--sim-report")) {
                char names[200];
                cr_vsim_machines(names, sizeof names, " or ");
                if (i + 1 >= argc || !*args[i + 1] || args[i + 1][0] == '-')
                    return parse_error(spec, err, errlen, "%s needs %s%s%s", a,
                                       a[5] ? "a file name (e.g. --sim-report sim.json)"
                                            : "a machine (",
                                       a[5] ? "" : names, a[5] ? "" : ")");
                *(a[5] ? &spec->sim_report : &spec->sim) = args[i + 1];
                i += 2;
            } else if (!strcmp(a, "--trace") || !strcmp(a, "--trace-parts")) {
                if (i + 1 >= argc || !*args[i + 1] || args[i + 1][0] == '-')
                    return parse_error(spec, err, errlen,
                                       "%s needs a file name (e.g. --trace job.json)", a);
                *(a[7] ? &spec->trace_dir : &spec->trace) = args[i + 1];
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
    if (spec->sim_report && !spec->sim)
        return parse_error(spec, err, errlen, "--sim-report needs --sim MACHINE");
    if (spec->sim && (spec->hosts || spec->hostfile))
        return parse_error(spec, err, errlen,
                           "--sim runs the job on one host, in virtual time: drop --hosts");
    char why[300];
    if (spec->sim && cr_vsim_check(spec->sim, spec->total, why, sizeof why))
        return parse_error(spec, err, errlen, "%s", why);
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

static void *out_writer(void *arg)
{
    out_q *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->stop) pthread_cond_wait(&q->cv, &q->mu);
        out_chunk *c = q->head;
        if (!c) break; /* stopped, and all is written */
        q->head = c->next;
        if (!q->head) q->tail = NULL;
        pthread_mutex_unlock(&q->mu);
        write_all(c->fd, c->data, c->len);
        pthread_mutex_lock(&q->mu);
        q->bytes -= c->len;
        free(c);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static void out_put(out_q *q, int fd, const char *p, size_t n)
{
    out_chunk *c = malloc(sizeof *c + n);
    if (!c) return;
    c->next = NULL;
    c->fd = fd;
    c->len = n;
    memcpy(c->data, p, n);
    pthread_mutex_lock(&q->mu);
    if (q->tail)
        q->tail->next = c;
    else
        q->head = c;
    q->tail = c;
    q->bytes += n;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static size_t out_bytes(out_q *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->bytes;
    pthread_mutex_unlock(&q->mu);
    return n;
}

/* Write it all, then stop the writer. */
static void out_stop(out_q *q)
{
    pthread_mutex_lock(&q->mu);
    q->stop = true;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->th, NULL);
}

/* Bytes for the launcher's stdout or stderr: through the writer thread's queue
 * when there is one (across hosts), else at once. */
static void put_out(job_spec *js, int fd, const char *p, size_t n)
{
    if (js->oq)
        out_put(js->oq, fd, p, n);
    else
        write_all(fd, p, n);
}

/* The launcher's own line, after what the ranks said. */
__attribute__((format(printf, 2, 3))) static void say(job_spec *js, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof line) n = sizeof line - 1;
    put_out(js, 2, line, (size_t)n);
}

static void emit(job_spec *js, int rank, int out, const char *p, size_t n)
{
    if (js->agent) { /* the launcher labels and writes it */
        cr_tree_send(js->tree, -1, CR_F_OUT, out, rank, 0, p, n);
        return;
    }
    if (js->cmd.label) {
        char pre[32];
        int k = snprintf(pre, sizeof pre, "[%d] ", rank);
        char line[LINE_MAX_FWD + 40];
        memcpy(line, pre, (size_t)k);
        memcpy(line + k, p, n);
        put_out(js, out, line, (size_t)k + n);
    } else {
        put_out(js, out, p, n);
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
        /* the last line, ended for it (one piece, so that it is labelled once) */
        if (s->len && s->buf[s->len - 1] != '\n' && s->len < sizeof s->buf) s->buf[s->len++] = '\n';
        if (s->len) emit(js, rank, s->out, s->buf, s->len);
        if (s->len && s->buf[s->len - 1] != '\n') emit(js, rank, s->out, "\n", 1);
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

static void flush_hosts(job_spec *js);

/* Before the launcher says anything: forward what every rank has written (across
 * hosts: what every agent has read of them, a round trip down the tree). */
static void drain_all(job_spec *js)
{
    if (js->tree && !js->agent) {
        flush_hosts(js);
        return;
    }
    for (int r = js->first; r < js->first + js->count; r++) drain_rank(js, r);
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
    /* Reserve the memory every rank needs now (control part, shm inboxes), so
     * that a job too big for this machine fails here with a clear message
     * instead of a SIGBUS in a rank later. Channels take theirs when first used
     * (cr_host_reserve), so memory grows with the pairs that talk. */
    int rc = posix_fallocate(fd, 0, (off_t)(cr_host_control_size(n) + cr_shm_region_fixed(n)));
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
static int random_key(unsigned char key[32])
{
    size_t got = 0;
    while (got < 32) {
        ssize_t n = getrandom(key + got, 32 - got, 0);
        if (n < 0 && errno != EINTR) return -1;
        if (n > 0) got += (size_t)n;
    }
    return 0;
}

static int make_secret(const unsigned char key[32])
{
    int fd = memfd_create("courier-secret", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    if (write(fd, key, 32) != 32 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Exec rank `rank` of app appnum, its stdout and stderr the pipe ends w
 * (rank_pipes). rank -1: the process of every rank, as contexts (--sim): w is
 * rank 0's, and ctx_fds lists the other ranks' (stdout,stderr,...). */
static void child_exec(job_spec *js, int rank, int appnum, int segfd, const int w[2], pid_t parent,
                       const char *ctx_fds)
{
    setpgid(0, js->pgid);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* the launcher is already gone */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL); /* the launcher ignores it; an ignored signal survives exec */
    dup2(w[0], 1);
    dup2(w[1], 2);
    if (rank <= 0 && js->in_pipe[0] >= 0) { /* across hosts: what the launcher reads */
        dup2(js->in_pipe[0], 0);
    } else if (rank > 0) {
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
    if (rank >= 0) {
        snprintf(v, sizeof v, "%d", rank);
        setenv("COURIER_RANK", v, 1);
    } else { /* contexts: each rank's COURIER_RANK is set in its context */
        unsetenv("COURIER_RANK");
        for (const char *p = ctx_fds; *p;) {
            char *end;
            int fd = (int)strtol(p, &end, 10);
            fcntl(fd, F_SETFD, 0);
            p = *end ? end + 1 : end;
        }
        snprintf(v, sizeof v, "%d", js->cmd.total);
        setenv("COURIER_SIM_CONTEXTS", v, 1);
        setenv("COURIER_CTX_FDS", ctx_fds, 1);
    }
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
    if (js->cmd.net)
        setenv("COURIER_NET", js->cmd.net, 1);
    else if (js->net_here[0])
        setenv("COURIER_NET", js->net_here, 1);
    if (js->layout) setenv("COURIER_HOST_LAYOUT", js->layout, 1);
    if (js->cmd.trace_dir) setenv("COURIER_TRACE", js->cmd.trace_dir, 1);
    if (js->vsim) {
        int fd = cr_vsim_fd(js->vsim);
        fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) & ~FD_CLOEXEC);
        snprintf(v, sizeof v, "%d", fd);
        setenv("COURIER_SIM_FD", v, 1);
        if (js->sim_preload[0]) { /* the program's own timers read virtual time too */
            const char *old = getenv("LD_PRELOAD");
            char pre[PATH_MAX * 2];
            snprintf(pre, sizeof pre, "%s%s%s", js->sim_preload, old && *old ? ":" : "",
                     old ? old : "");
            setenv("LD_PRELOAD", pre, 1);
            /* A program built with AddressSanitizer wants its runtime first of
             * all; the shim replaces no memory function, so that check may go. */
            const char *asan = getenv("ASAN_OPTIONS");
            snprintf(pre, sizeof pre, "%s%sverify_asan_link_order=0", asan ? asan : "",
                     asan && *asan ? ":" : "");
            setenv("ASAN_OPTIONS", pre, 1);
        }
    }
    /* The CPUs the job has, whatever this rank is bound to: ranks judge from it
     * whether they outnumber the CPUs (and so must not spin). */
    snprintf(v, sizeof v, "%d", CPU_COUNT(&js->cpus));
    setenv("COURIER_CPUS", v, 1);
    if (js->bind && rank >= 0) {
        int n = CPU_COUNT(&js->cpus), i = rank - js->first, lo = i % n, hi = lo + 1;
        if (!js->one_each) { /* the i-th of count shares */
            lo = (int)((long)i * n / js->count);
            hi = (int)((long)(i + 1) * n / js->count);
        }
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int k = lo; k < hi; k++) CPU_SET(js->cpu_of[(js->cpu_start + k) % n], &set);
        sched_setaffinity(0, sizeof set, &set); /* a failure leaves the rank unbound */
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

/* Rank r's stdout and stderr: two pipes, whose read ends the launcher keeps
 * (r's streams, non-blocking) and whose write ends, w, go to the rank. 0 or -1. */
static int rank_pipes(job_spec *js, int r, int w[2])
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) < 0) return -1;
    if (pipe2(err, O_CLOEXEC) < 0) {
        close(out[0]);
        close(out[1]);
        return -1;
    }
    rank_proc *rp = &js->ranks[r];
    rp->s[0] = (stream){.fd = out[0], .out = 1};
    rp->s[1] = (stream){.fd = err[0], .out = 2};
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    w[0] = out[1];
    w[1] = err[1];
    return 0;
}

/* --sim with contexts: one process for every rank, with every rank's pipes. */
static int start_contexts(job_spec *js, int segfd)
{
    int n = js->cmd.total;
    int *w = malloc((size_t)n * 2 * sizeof *w);
    char *fds = malloc((size_t)n * 24 + 1);
    if (!w || !fds) {
        free(w);
        free(fds);
        errno = ENOMEM;
        return -1;
    }
    size_t len = 0;
    fds[0] = '\0';
    int made = 0, rc = -1;
    for (; made < n; made++) {
        if (rank_pipes(js, made, &w[2 * made]) < 0) goto out;
        js->ranks[made].appnum = 0;
        if (made > 0)
            len += (size_t)sprintf(fds + len, "%s%d,%d", made > 1 ? "," : "", w[2 * made],
                                   w[2 * made + 1]);
    }
    pid_t me = getpid(), pid = fork();
    if (pid < 0) goto out;
    if (pid == 0) child_exec(js, -1, 0, segfd, w, me, fds);
    setpgid(pid, js->pgid);
    js->ctx_pid = pid;
    for (int r = 0; r < n; r++) {
        js->ranks[r].pid = pid;
        js->ranks[r].running = true;
    }
    rc = 0;
out:
    for (int i = 0; i < 2 * made; i++) close(w[i]);
    free(w);
    free(fds);
    return rc;
}

static int start_ranks(job_spec *js, int segfd)
{
    pid_t me = getpid();
    if (start_leader(js) < 0) return -1;
    if (js->contexts) return start_contexts(js, segfd);
    if (js->agent && js->first == 0) {
        if (pipe2(js->in_pipe, O_CLOEXEC) < 0) return -1;
        fcntl(js->in_pipe[1], F_SETFL, O_NONBLOCK);
    }
    int rank = 0;
    for (int a = 0; a < js->cmd.napps; a++)
        for (int k = 0; k < js->cmd.apps[a].n; k++, rank++) {
            if (rank < js->first || rank >= js->first + js->count) continue;
            int w[2];
            if (rank_pipes(js, rank, w) < 0) return -1;
            pid_t pid = fork();
            if (pid < 0) return -1;
            if (pid == 0) child_exec(js, rank, a, segfd, w, me, NULL);
            setpgid(pid, js->pgid);
            rank_proc *rp = &js->ranks[rank];
            rp->pid = pid;
            rp->appnum = a;
            rp->running = true;
            close(w[0]);
            close(w[1]);
        }
    return 0;
}

/* ---- watching ------------------------------------------------------------ */

static void end_job(job_spec *js, int status)
{
    if (js->ending) return;
    js->ending = true;
    js->exit_status = status;
    if (js->vsim && status != EXIT_DEADLOCK) cr_vsim_stop(js->vsim);
    if (js->tree) cr_tree_send(js->tree, -2, CR_F_END, 0, 0, status, NULL, 0);
    if (!js->pgid) return;
    kill(-js->pgid, SIGTERM);
    js->kill_at = now_ns() + (uint64_t)GRACE_MS * 1000000u;
}

static int find_rank(job_spec *js, pid_t pid)
{
    for (int r = 0; r < js->cmd.total; r++)
        if (js->ranks[r].pid == pid) return r;
    return -1;
}

/* Ranks running that this process knows of: its own, or (the launcher of a
 * job across hosts) all, as the agents report them. */
static int running(job_spec *js)
{
    int n = 0;
    for (int r = 0; r < js->cmd.total; r++) n += js->ranks[r].running;
    return n;
}

static const char *host_of_rank(const job_spec *js, int r)
{
    if (!js->tree) return NULL;
    for (int h = 0; h < js->tree->nnodes - 1; h++)
        if (r >= js->tree->hosts[h].first &&
            r < js->tree->hosts[h].first + js->tree->hosts[h].count)
            return js->tree->hosts[h].name;
    return "?";
}

#ifndef COURIER_LIBDIR /* the build gives the install's (CMAKE_INSTALL_LIBDIR) */
#define COURIER_LIBDIR "lib"
#endif

/* The simulated mode's timer shim (src/api/simclock.c), beside libcourier:
 * from the build tree's tools/courier, ../src; from an installed bin/courier,
 * ../<libdir>. Without it the ranks run on, and only courier's own timers
 * (dclock, MPI_Wtime, ...) read virtual time: said once. */
static void find_sim_preload(job_spec *js, const char *who)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    js->sim_preload[0] = '\0';
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) *slash = '\0';
        const char *rel[] = {"../src", "../" COURIER_LIBDIR};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char p[PATH_MAX];
            if (snprintf(p, sizeof p, "%s/%s/libcourier_simclock.so", self, rel[i]) <
                    (int)sizeof p &&
                access(p, R_OK) == 0 && realpath(p, js->sim_preload))
                return;
        }
    }
    fprintf(stderr,
            "%s: --sim: libcourier_simclock.so is not beside courier; the programs' own "
            "clock_gettime and gettimeofday read real time (dclock and MPI_Wtime are virtual)\n",
            who);
}

/* A rank ended (here, or reported by an agent): note the failure that will end
 * the job. When several fail, the one killed by a signal is reported: a rank
 * that died takes others down with it (they find it gone), and the report must
 * name the cause. */
static void rank_ended(job_spec *js, int r, pid_t pid, int st, bool outside)
{
    js->ranks[r].running = false;
    if (js->vsim) cr_vsim_rank_gone(js->vsim, r);
    bool failed = WIFSIGNALED(st) || WEXITSTATUS(st) != 0;
    if (js->ending || !failed) return; /* ended by us, or done: nothing to report */
    failure *f = &js->fail;
    if (f->rank < 0 || (WIFSIGNALED(st) && !WIFSIGNALED(f->st))) {
        f->rank = r;
        f->st = st;
        f->pid = pid;
    }
    if (WIFEXITED(st) && outside) {
        if (!f->until) f->until = now_ns() + (uint64_t)LAST_WORDS_MS * 1000000u;
    } else {
        f->now = true;
    }
}

/* The process of the ranks as contexts ended: every rank has. A rank that
 * ended in its context left its status (a failing one ended the process); the
 * process's own status is the rank's whose context ran when it died (a signal,
 * an _exit in the library), or else the first rank's that was still running. */
static void contexts_ended(job_spec *js, pid_t pid, int st)
{
    int n = js->cmd.total, cur = cr_vsim_ctx_current(js->vsim), code;
    bool failed = WIFSIGNALED(st) || WEXITSTATUS(st) != 0, blamed = false;
    for (int r = 0; r < n; r++) {
        drain_rank(js, r);
        if (cr_vsim_rank_exit(js->vsim, r, &code) && code) blamed = true;
    }
    if (cur < 0 || cur >= n || cr_vsim_rank_exit(js->vsim, cur, &code))
        for (cur = 0; cur < n && cr_vsim_rank_exit(js->vsim, cur, &code); cur++) {
        }
    for (int r = 0; r < n; r++) {
        if (!js->ranks[r].running) continue;
        int rst = 0;
        if (cr_vsim_rank_exit(js->vsim, r, &code))
            rst = W_EXITCODE(code & 0xff ? code & 0xff : code != 0, 0);
        else if (failed && !blamed && r == cur)
            rst = st;
        rank_ended(js, r, pid, rst, false);
    }
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
        if (js->tree && cr_tree_reaped(js->tree, pid, st) >= 0) continue;
        if (js->contexts && pid == js->ctx_pid) {
            contexts_ended(js, pid, st);
            continue;
        }
        int r = find_rank(js, pid);
        if (r < 0) continue;
        drain_rank(js, r); /* it is gone: all it wrote is in its pipes */
        bool outside = js->wd && cr_watchdog_rank_outside(js->wd, r);
        if (js->agent) { /* the launcher judges; its output went up before this */
            js->ranks[r].running = false;
            int32_t p32 = pid;
            cr_tree_send(js->tree, -1, CR_F_EXIT, outside, r, st, &p32, sizeof p32);
            continue;
        }
        rank_ended(js, r, pid, st, outside);
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
    char where[300] = "";
    if (js->tree) snprintf(where, sizeof where, " on host %s", host_of_rank(js, f->rank));
    if (WIFSIGNALED(f->st)) {
        int sig = WTERMSIG(f->st);
        say(js, "courier: rank %d%s (pid %d) killed by SIG%s; ending the job\n", f->rank, where,
            (int)f->pid, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    } else {
        say(js, "courier: rank %d%s (pid %d) exited with status %d; ending the job\n", f->rank,
            where, (int)f->pid, WEXITSTATUS(f->st));
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
        !(js->control && js->wd &&
          cr_watchdog_check(js->wd, alive_now(js), now, (uint64_t)STILL_MS * 1000000u)))
        return;
    report_failure(js);
    end_job(js, failure_status(f));
}

/* Say what the watchdog has noted (a rank stopped by a signal or a debugger):
 * the launcher in order with the ranks' output, an agent on its stderr. */
static void say_notes(job_spec *js)
{
    char line[400];
    while (js->wd && cr_watchdog_note(js->wd, line, sizeof line)) {
        if (js->agent)
            fputs(line, stderr);
        else
            say(js, "%s", line);
    }
}

static void on_signal(job_spec *js, int sig)
{
    if (sig == SIGCHLD) return;
    if (js->tree) cr_tree_send(js->tree, -2, CR_F_SIGNAL, 0, 0, sig, NULL, 0);
    if (js->ending) { /* asked twice: stop waiting, kill everything now */
        if (!js->agent && !js->killed_all)
            say(js, "courier: got SIG%s again; killing every process of the job now\n",
                sigabbrev_np(sig));
        js->killed_all = true;
        if (js->pgid) kill(-js->pgid, SIGKILL);
        /* an agent that is stopped cannot act on the signal sent down: its
         * rsh process (or the agent itself) is killed, and its connection */
        if (js->tree) cr_tree_kill_children(js->tree);
        return;
    }
    if (!js->agent) {
        report_failure(js); /* one pending: it happened first */
        drain_all(js);
        say(js, "courier: got SIG%s; ending the job\n", sigabbrev_np(sig));
    }
    js->ending = true;
    js->exit_status = 128 + sig;
    if (js->pgid) kill(-js->pgid, sig);
    js->kill_at = now_ns() + 1000000000u;
}

/* ---- across hosts: the agents' tree ---------------------------------------- */

/* The launcher: a host was lost (its agent, the network to it, or it could not
 * start). Its ranks are gone; the others are ended. */
static void host_lost(job_spec *js, const char *why)
{
    if (js->ending) return;
    report_failure(js);
    say(js, "courier: %s; ending the job\n", why);
    end_job(js, js->fail.rank >= 0 ? failure_status(&js->fail) : 1);
}

/* An agent: forward its ranks' cards (tcp addresses) up as they appear. */
static void send_cards(job_spec *js)
{
    for (int r = js->first; r < js->first + js->count; r++) {
        if (js->card_sent[r - js->first]) continue;
        uint32_t ready = atomic_load_explicit(&js->cards[r].ready, memory_order_acquire);
        if (!ready || ready - 1 > CR_CARD_MAX) continue;
        cr_tree_send(js->tree, -1, CR_F_CARD, 0, r, 0, js->cards[r].data, ready - 1);
        js->card_sent[r - js->first] = true;
        js->cards_left--;
    }
}

/* A card of a rank on another host: for our ranks to read (an agent), and for
 * the children that join later (both). */
static void put_card(job_spec *js, int r, const void *data, size_t len)
{
    if (r < 0 || r >= js->cmd.total || (r >= js->first && r < js->first + js->count) ||
        len > CR_CARD_MAX)
        return;
    cr_host_card *c = &js->cards[r];
    if (atomic_load_explicit(&c->ready, memory_order_acquire)) return;
    memcpy(c->data, data, len);
    atomic_store_explicit(&c->ready, (uint32_t)len + 1, memory_order_release);
}

/* Rank 0's standard input across hosts. The agent writes what came into the
 * pipe as it takes it; at EOF (or when rank 0 closed its end) the pipe closes. */
static void stdin_write(job_spec *js)
{
    while (js->in_fd >= 0 && js->in_len) {
        ssize_t w = write(js->in_fd, js->in_buf, js->in_len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) return;
        if (w <= 0) { /* EPIPE: rank 0 wants no more */
            js->in_len = 0;
            js->in_eof = true;
            break;
        }
        memmove(js->in_buf, js->in_buf + w, js->in_len - (size_t)w);
        js->in_len -= (size_t)w;
    }
    if (js->in_fd >= 0 && js->in_eof && !js->in_len) {
        close(js->in_fd);
        js->in_fd = -1;
    }
}

/* The launcher reads its standard input while the first host's agent keeps up. */
static void stdin_read(job_spec *js)
{
    char buf[65536];
    ssize_t r = read(js->in_fd, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (r <= 0) js->in_fd = -1; /* EOF (or an error: the same to rank 0) */
    cr_tree_send(js->tree, 0, CR_F_STDIN, 0, 0, 0, buf, r > 0 ? (size_t)r : 0);
}

static bool valid_rank(const job_spec *js, int r)
{
    return r >= 0 && r < js->cmd.total;
}

static void on_frame(void *arg, int from, const cr_frame_hdr *h, const void *pl);
static void on_lost(void *arg, int from, const char *why);

/* An agent: once every child has flushed (or is gone), say so to the parent. */
static void flush_owed(job_spec *js)
{
    cr_tree *t = js->tree;
    if (!js->agent || !js->flushing) return;
    for (int i = 0; i < t->nchild; i++)
        if (!js->flushed[i] && !t->child_done[i]) return;
    js->flushing = false;
    cr_tree_send(t, -1, CR_F_FLUSHED, 0, t->node, 0, NULL, 0);
}

/* The launcher: ask every host for what its ranks have written so far, and
 * wait (at most FLUSH_MS) until it has come, so that a report comes after it. */
static void flush_hosts(job_spec *js)
{
    cr_tree *t = js->tree;
    if (js->flushing) return; /* a report while we wait: it comes after this flush */
    js->flushing = true;
    memset(js->flushed, 0, (size_t)t->nchild + 1);
    cr_tree_send(t, -2, CR_F_FLUSH, 0, 0, 0, NULL, 0);
    uint64_t until = now_ns() + (uint64_t)FLUSH_MS * 1000000u;
    struct pollfd *pf = calloc((size_t)cr_tree_maxfds(t), sizeof *pf);
    for (uint64_t now = now_ns(); pf && now < until; now = now_ns()) {
        bool all = true;
        for (int i = 0; i < t->nchild; i++) all &= js->flushed[i] || t->child_done[i];
        if (all) break;
        int k = cr_tree_pollfds(t, pf);
        poll(pf, (nfds_t)k, 10);
        cr_tree_service(t, now_ns() / 1000000u, on_frame, on_lost, js);
    }
    free(pf);
    js->flushing = false;
}

static void on_frame(void *arg, int from, const cr_frame_hdr *h, const void *pl)
{
    job_spec *js = arg;
    cr_tree *t = js->tree;
    if (h->type == 0) { /* child 'from' has proven itself: the job, and the cards so far */
        cr_tree_send(t, from, CR_F_JOB, 0, 0, 0, t->job, t->job_len);
        for (int r = 0; r < js->cmd.total; r++) {
            uint32_t ready = atomic_load_explicit(&js->cards[r].ready, memory_order_acquire);
            if (ready && ready - 1 <= CR_CARD_MAX)
                cr_tree_send(t, from, CR_F_CARD, 0, r, 0, js->cards[r].data, ready - 1);
        }
        if (js->held) cr_tree_send(t, from, CR_F_HOLD, 0, 0, 1, NULL, 0);
        if (js->ending) /* it comes late: the job is already over */
            cr_tree_send(t, from, CR_F_END, 0, 0, js->exit_status, NULL, 0);
        return;
    }
    if (from >= 0) { /* from below */
        if (h->type == CR_F_STILL) {
            js->child_still[from] = h->b != 0;
            return;
        }
        if (h->type == CR_F_DONE) {
            flush_owed(js);
            return;
        }
        if (h->type == CR_F_FLUSHED) {
            js->flushed[from] = true;
            flush_owed(js);
            return;
        }
        if (js->agent) { /* not ours to judge: up it goes */
            cr_tree_send(t, -1, h->type, h->flag, h->a, h->b, pl, h->len);
            return;
        }
        switch (h->type) {
        case CR_F_OUT:
            if (valid_rank(js, h->a)) emit(js, h->a, h->flag == 2 ? 2 : 1, pl, h->len);
            break;
        case CR_F_EXIT:
            if (valid_rank(js, h->a) && js->ranks[h->a].running && h->len == sizeof(int32_t)) {
                int32_t pid;
                memcpy(&pid, pl, sizeof pid);
                rank_ended(js, h->a, pid, h->b, h->flag != 0);
            }
            break;
        case CR_F_CARD:
            put_card(js, h->a, pl, h->len);
            cr_tree_send(t, -2, CR_F_CARD, 0, h->a, 0, pl, h->len);
            break;
        case CR_F_REPORT:
            if (valid_rank(js, h->a) && h->len == sizeof(cr_waitinfo) && js->wd) {
                cr_waitinfo w;
                memcpy(&w, pl, sizeof w);
                cr_waitinfo_sane(&w);
                cr_watchdog_put(js->wd, h->a, &w);
                js->reported[h->a] = true;
            }
            break;
        case CR_F_LOST:
        case CR_F_FAIL: {
            char why[400];
            snprintf(why, sizeof why, "%.*s", (int)(h->len < 399 ? h->len : 399), (const char *)pl);
            for (char *p = why; *p; p++)
                if ((unsigned char)*p < 0x20) *p = '?';
            if (h->type == CR_F_FAIL && !js->ending) {
                report_failure(js);
                say(js, "courier: %s\n", why);
                end_job(js, 1);
            } else {
                host_lost(js, why);
            }
            break;
        }
        }
        return;
    }
    /* from the launcher's side (an agent) */
    switch (h->type) {
    case CR_F_CARD:
        put_card(js, h->a, pl, h->len);
        cr_tree_send(t, -2, CR_F_CARD, 0, h->a, 0, pl, h->len);
        break;
    case CR_F_END:
        end_job(js, h->b);
        break;
    case CR_F_HOLD:
        js->held = h->b != 0;
        cr_tree_send(t, -2, CR_F_HOLD, 0, 0, h->b, NULL, 0);
        break;
    case CR_F_FLUSH:
        drain_all(js);
        memset(js->flushed, 0, (size_t)t->nchild + 1);
        js->flushing = true;
        cr_tree_send(t, -2, CR_F_FLUSH, 0, 0, 0, NULL, 0);
        flush_owed(js);
        break;
    case CR_F_STDIN:
        if (js->in_fd < 0) break; /* rank 0 closed it (or it is not here) */
        if (!h->len) {
            js->in_eof = true;
        } else {
            char *b = realloc(js->in_buf, js->in_len + h->len);
            if (!b) break;
            memcpy(b + js->in_len, pl, h->len);
            js->in_buf = b;
            js->in_len += h->len;
        }
        stdin_write(js);
        break;
    case CR_F_SIGNAL:
        if (h->b > 0 && h->b < 65) on_signal(js, h->b);
        break;
    case CR_F_REPORTQ:
        for (int r = js->first; r < js->first + js->count; r++)
            if (js->ranks[r].running && js->wd)
                cr_tree_send(t, -1, CR_F_REPORT, 0, r, 0, cr_watchdog_get(js->wd, r),
                             sizeof(cr_waitinfo));
        cr_tree_send(t, -2, CR_F_REPORTQ, 0, 0, 0, NULL, 0);
        break;
    }
}

static void on_lost(void *arg, int from, const char *why)
{
    job_spec *js = arg;
    if (from >= 0) {
        js->child_still[from] = true; /* it moves nothing any more */
        flush_owed(js);
        if (js->agent)
            cr_tree_send(js->tree, -1, CR_F_LOST, 0, cr_tree_child_node(js->tree, from), 0, why,
                         strlen(why));
        else
            host_lost(js, why);
        return;
    }
    /* The agent lost the launcher: nobody is left to report to. */
    fprintf(stderr, "courier agent (host %s): lost the launcher (%s); ending this host's ranks\n",
            cr_tree_node_name(js->tree, js->tree->node), why);
    end_job(js, 1);
}

/* The hang watchdog's report: to out (NULL: the job's stderr, in order with
 * the ranks' output), and kept for the trace. */
static void hang_report(job_spec *js, const bool *alive, FILE *out)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *m = open_memstream(&text, &tlen);
    if (!m) {
        cr_watchdog_report(js->wd, alive, js->cmd.hang_timeout, out ? out : stderr);
        return;
    }
    cr_watchdog_report(js->wd, alive, js->cmd.hang_timeout, m);
    fclose(m);
    if (out)
        fwrite(text, 1, tlen, out);
    else
        put_out(js, 2, text, tlen);
    free(js->hang_text);
    js->hang_text = text;
    js->hang_at = now_ns();
}

/* Every WATCH_MS: an agent tells the launcher whether its whole subtree has
 * stood still for the hang timeout; the launcher, once every host says so,
 * asks each rank what it waits for and then reports the deadlock. */
static void tree_watch(job_spec *js, uint64_t now)
{
    cr_tree *t = js->tree;
    bool still = js->cmd.hang_timeout > 0;
    for (int i = 0; i < t->nchild; i++) still &= js->child_still[i] || t->child_done[i];
    if (js->agent) {
        if (still && running(js) && js->wd)
            still = cr_watchdog_check(js->wd, alive_now(js), now,
                                      (uint64_t)(js->cmd.hang_timeout * 1e9));
        if (still != js->still) cr_tree_send(t, -1, CR_F_STILL, 0, 0, still, NULL, 0);
        js->still = still;
        return;
    }
    if (js->ending || !running(js)) return;
    if (!js->reports_until) {
        if (!still) return;
        memset(js->reported, 0, (size_t)js->cmd.total);
        js->reports_until = now + 1000000000u;
        cr_tree_send(t, -2, CR_F_REPORTQ, 0, 0, 0, NULL, 0);
        return;
    }
    bool all = true;
    for (int r = 0; r < js->cmd.total; r++) all &= !js->ranks[r].running || js->reported[r];
    if (!all && now < js->reports_until) return;
    js->reports_until = 0;
    if (!still) return; /* something moved meanwhile */
    report_failure(js);
    hang_report(js, alive_now(js), NULL);
    say(js, "courier: ending the job\n");
    end_job(js, EXIT_DEADLOCK);
}

/* ---- watching ------------------------------------------------------------ */

static bool tree_busy(const job_spec *js)
{
    if (!js->tree) return false;
    if (js->agent && !js->tree->parent) return false; /* orphaned: only our ranks matter */
    return !cr_tree_children_done(js->tree);
}

/* Ranks this process watches that still run: its own. (The launcher of a job
 * across hosts hears of every rank, but once its agents are done or lost,
 * nothing more can come of those it did not hear end.) */
static int running_here(job_spec *js)
{
    return js->tree && !js->agent ? 0 : running(js);
}

static int watch(job_spec *js, int sfd)
{
    int tfds = js->tree ? cr_tree_maxfds(js->tree) : 0;
    int nfds = 2 * js->count + 2 + tfds;
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
    /* Simulated, ranks wait while the simulator works: the simulator itself
     * knows a deadlock (nothing on its way), at once. */
    bool hang_watch = js->wd && js->cmd.hang_timeout > 0 && !js->tree && !js->vsim;
    uint64_t next_look = 0;
    bool streams_open = true;
    while (running_here(js) || streams_open || tree_busy(js)) {
        int k = 0;
        pf[k++] = (struct pollfd){.fd = sfd, .events = POLLIN};
        if (js->tree) k += cr_tree_pollfds(js->tree, pf + k);
        int ik = -1; /* standard input: the launcher reads, the agent writes */
        if (js->in_fd >= 0 && js->tree && !js->agent &&
            cr_tree_backlog(js->tree, 0) < ((size_t)1 << 20)) {
            ik = k;
            pf[k++] = (struct pollfd){.fd = js->in_fd, .events = POLLIN};
        } else if (js->in_fd >= 0 && js->agent && js->in_len) {
            ik = k;
            pf[k++] = (struct pollfd){.fd = js->in_fd, .events = POLLOUT};
        }
        int sk = k;
        /* An agent whose launcher does not keep up (its output blocked, a slow
         * network) leaves the ranks' output in their pipes, and the ranks block
         * writing it, as on one host, instead of holding it all in memory. */
        bool hold = js->agent && js->tree->parent && !js->ending &&
                    (js->held || cr_tree_backlog(js->tree, -1) > OUT_HOLD);
        for (int r = js->first; r < js->first + js->count && !hold; r++)
            for (int j = 0; j < 2; j++)
                if (js->ranks[r].s[j].fd >= 0) {
                    who[k] = r * 2 + j;
                    pf[k++] = (struct pollfd){.fd = js->ranks[r].s[j].fd, .events = POLLIN};
                }
        streams_open = k > sk || hold;
        if (!streams_open && !running_here(js) && !tree_busy(js)) break;
        int wait_ms = 1000;
        uint64_t now = now_ns();
        if (deadline && !js->ending) {
            if (now >= deadline) {
                report_failure(js);
                drain_all(js);
                say(js,
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
                    hang_report(js, js->alive, stderr);
                    fprintf(stderr, "courier: ending the job\n");
                    end_job(js, EXIT_DEADLOCK);
                    continue;
                }
            }
            if (wait_ms > WATCH_MS) wait_ms = WATCH_MS;
        }
        if (js->vsim && !js->ending) {
            if (cr_vsim_deadlocked(js->vsim, NULL)) {
                double *vc = calloc((size_t)js->cmd.total, sizeof *vc);
                report_failure(js);
                drain_all(js);
                if (vc) cr_vsim_deadlocked(js->vsim, vc);
                if (js->wd) cr_watchdog_report_sim(js->wd, alive_now(js), vc, stderr);
                fprintf(stderr, "courier: ending the job\n");
                free(vc);
                end_job(js, EXIT_DEADLOCK);
                continue;
            }
            if (wait_ms > WATCH_MS) wait_ms = WATCH_MS;
        }
        if (js->tree) {
            if (now >= next_look) {
                next_look = now + (uint64_t)WATCH_MS * 1000000u;
                tree_watch(js, now);
            }
            int tw = cr_tree_wait_ms(js->tree);
            if (tw < wait_ms) wait_ms = tw;
            if (js->agent && js->cards_left) {
                send_cards(js);
                /* the ranks wait for these: look every ms for the first 2 s */
                int cw = now - js->started < 2000000000u ? 1 : 50;
                if (js->cards_left && cw < wait_ms) wait_ms = cw;
            }
            if (js->reports_until && wait_ms > 20) wait_ms = 20;
            if (js->oq) { /* the launcher's output keeps up, or the agents hold theirs */
                size_t ob = out_bytes(js->oq);
                if (!js->held && ob > OUT_HOLD) {
                    js->held = true;
                    cr_tree_send(js->tree, -2, CR_F_HOLD, 0, 0, 1, NULL, 0);
                } else if (js->held && ob < OUT_HOLD / 4) {
                    js->held = false;
                    cr_tree_send(js->tree, -2, CR_F_HOLD, 0, 0, 0, NULL, 0);
                }
                if (js->held && wait_ms > 20) wait_ms = 20;
            }
        }
        if (js->fail.rank >= 0 && !js->ending && wait_ms > PENDING_MS) wait_ms = PENDING_MS;
        if (js->kill_at) {
            if (now >= js->kill_at) {
                if (js->pgid) kill(-js->pgid, SIGKILL);
                js->kill_at = 0;
            } else {
                uint64_t left = (js->kill_at - now) / 1000000u + 1;
                if (left < (uint64_t)wait_ms) wait_ms = (int)left;
            }
        }
        if (!running_here(js) && !tree_busy(js) && wait_ms > 200)
            wait_ms = 200; /* ranks are gone: only their children keep pipes */
        int n = poll(pf, (nfds_t)k, wait_ms);
        if (n < 0 && errno != EINTR) break;
        if (n == 0 && !running_here(js) && !tree_busy(js) && !hold)
            break; /* nothing more will come */
        if (pf[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                on_signal(js, (int)si.ssi_signo);
        }
        if (ik >= 0 && pf[ik].revents) {
            if (js->agent)
                stdin_write(js);
            else
                stdin_read(js);
        }
        for (int i = sk; i < k; i++)
            if (pf[i].revents) {
                stream *s = &js->ranks[who[i] / 2].s[who[i] % 2];
                if (s->fd >= 0) pump(js, who[i] / 2, s, sizeof s->buf);
            }
        reap(js);
        if (js->tree) cr_tree_service(js->tree, now_ns() / 1000000u, on_frame, on_lost, js);
        settle(js, now_ns());
        say_notes(js);
    }
    free(pf);
    free(who);
    return 0;
}

/* ---- starting a job --------------------------------------------------------- */

/* The signals the watch loop takes, from a descriptor. */
static int signal_fd(void)
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

static void raise_fd_limit(void)
{
    /* Two pipes per rank: raise the descriptor limit as far as we may. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int alloc_ranks(job_spec *js)
{
    js->in_fd = js->in_pipe[0] = js->in_pipe[1] = js->segfd = -1;
    js->ranks = calloc((size_t)js->cmd.total, sizeof *js->ranks);
    if (!js->ranks) return -1;
    for (int r = 0; r < js->cmd.total; r++) js->ranks[r].s[0].fd = js->ranks[r].s[1].fd = -1;
    return 0;
}

/* This host's part of the job: its segment and secret, then its ranks (first ..
 * first+count-1). 0, or 1 after saying why (who: "courier run", or the agent). */
static int start_here(job_spec *js, const unsigned char key[32], const char *who)
{
    /* Binding (docs/run.md has the figures). With more ranks than CPUs, a rank
     * left to migrate costs everyone a trip through the load balancer: one CPU
     * each, neighbours apart. Otherwise each rank gets CPUs of its own, a share
     * of cpus/count (on a machine with as many CPUs as ranks, one): with other
     * work on the machine the scheduler put two unbound ranks on one CPU and
     * every message then waited for a time slice (osu_latency, 8 B, 2 ranks on
     * 2 CPUs beside 4-8 CPU-bound processes: 27-442 us in some runs, against
     * 0.13-0.14 bound), while a rank's own threads keep the room of its share.
     * The shares start at the CPU the launcher runs on, so that jobs started
     * side by side (ctest -j) spread over the machine. A job of one rank is
     * left alone. */
    if (sched_getaffinity(0, sizeof js->cpus, &js->cpus) != 0) {
        CPU_ZERO(&js->cpus);
        CPU_SET(0, &js->cpus);
    }
    int ncpu = CPU_COUNT(&js->cpus), here = sched_getcpu();
    js->cpu_start = 0;
    for (int c = 0, k = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &js->cpus)) {
            if (c == here && js->count < ncpu) js->cpu_start = k;
            js->cpu_of[k++] = c;
        }
    js->one_each = js->cmd.bind == CR_BIND_CORE || js->count > ncpu;
    js->bind = js->cmd.bind == CR_BIND_CORE || (js->cmd.bind == CR_BIND_AUTO && js->count > 1);

    size_t seglen = segment_size(js->cmd.total);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        seglen + (64u << 20) > rl.rlim_cur) {
        unsigned long long need = (seglen + (64u << 20) + 1023) / 1024;
        fprintf(stderr,
                "%s: the address-space limit (ulimit -v %llu KiB) is too low: the job's shared "
                "segment for %d ranks (%llu KiB) and the room every rank needs besides (64 MiB) "
                "do not fit in it; raise it to at least %llu KiB (ulimit -v unlimited, or "
                "ulimit -v %llu), or use fewer ranks\n",
                who, (unsigned long long)rl.rlim_cur / 1024, js->cmd.total,
                (unsigned long long)(seglen + 1023) / 1024, need, need);
        return 1;
    }
    int segfd = make_segment(js->cmd.total, &seglen, &js->control);
    if (segfd < 0) {
        fprintf(stderr,
                "%s: cannot create the %zu-byte shared segment for %d ranks: %s; "
                "use fewer ranks or raise the memory limit\n",
                who, seglen, js->cmd.total, strerror(errno));
        return 1;
    }
    const cr_host_head *hd = js->control;
    js->cards = (cr_host_card *)((char *)js->control + hd->card_off);
    js->secretfd = make_secret(key);
    if (js->secretfd < 0) {
        fprintf(stderr, "%s: cannot make the job's secret: %s\n", who, strerror(errno));
        close(segfd);
        return 1;
    }
    if (js->cmd.sim) {
        char err[300];
        js->vsim = cr_vsim_new(js->cmd.sim, js->cmd.total, err, sizeof err);
        if (!js->vsim) {
            fprintf(stderr, "%s: %s\n", who, err);
            close(segfd);
            close(js->secretfd);
            return 1;
        }
        find_sim_preload(js, who);
        /* Ranks as contexts of one process where the program allows it
         * (docs/sim.md, "Ranks as contexts"); else processes. */
        int want = cr_vsim_ranks(js->vsim);
        if (want != CR_VSIM_RANKS_PROCESSES) {
            char path[PATH_MAX];
            const char *prog = js->cmd.apps[0].argv[0];
            const char *why = js->cmd.napps > 1              ? "the job runs several programs"
                              : js->count != js->cmd.total   ? "its ranks are on several hosts"
                              : !resolve_program(prog, path) ? "the program is not found"
                                                             : cr_progfile_contexts(path);
            if (!why) {
                js->contexts = true;
                cr_vsim_use_contexts(js->vsim);
            } else if (want == CR_VSIM_RANKS_CONTEXTS) {
                fprintf(stderr,
                        "%s: --sim ranks=contexts: %s cannot run its ranks as contexts: %s; "
                        "leave ranks= out to run them as processes\n",
                        who, prog, why);
                close(segfd);
                close(js->secretfd);
                return 1;
            }
        }
    }
    js->started = now_ns();
    if (start_ranks(js, segfd) < 0) {
        int e = errno;
        fprintf(stderr, "%s: cannot start %d ranks: %s%s\n", who, js->count, strerror(e),
                e == EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
        if (js->pgid) {
            kill(-js->pgid, SIGKILL);
            while (waitpid(-js->pgid, NULL, 0) > 0) {
            }
        }
        close(segfd);
        close(js->secretfd);
        return 1;
    }
    if (js->vsim && cr_vsim_start(js->vsim)) {
        fprintf(stderr, "%s: cannot start the simulator's thread\n", who);
        kill(-js->pgid, SIGKILL);
        return 1;
    }
    js->segfd = segfd;         /* kept for courier status (closed at the end) */
    if (js->in_pipe[0] >= 0) { /* rank 0 holds its end */
        close(js->in_pipe[0]);
        js->in_fd = js->in_pipe[1];
    }
    close(js->secretfd);
    return 0;
}

/* System V shared memory that a rank made and nobody holds any more: a library
 * in a rank (UCX's sysv transport) marks its segments for removal only once
 * every peer has attached, so a rank killed during start-up leaves them. Once
 * every process of the job is gone, remove those the ranks created that no
 * process is attached to: nothing of the job outlives it. A segment whose
 * creator pid is alive again belongs to whoever has that pid now. */
static void remove_sysv_leftovers(const job_spec *js)
{
    FILE *f = fopen("/proc/sysvipc/shm", "r");
    if (!f) return;
    char line[512];
    int col_id = -1, col_cpid = -1, col_nattch = -1;
    if (fgets(line, sizeof line, f)) { /* the header names the columns */
        int c = 0;
        for (char *save = NULL, *w = strtok_r(line, " \t\n", &save); w;
             w = strtok_r(NULL, " \t\n", &save), c++) {
            if (!strcmp(w, "shmid")) col_id = c;
            if (!strcmp(w, "cpid")) col_cpid = c;
            if (!strcmp(w, "nattch")) col_nattch = c;
        }
    }
    while (col_id >= 0 && col_cpid >= 0 && col_nattch >= 0 && fgets(line, sizeof line, f)) {
        long v[32] = {0};
        int c = 0;
        for (char *save = NULL, *w = strtok_r(line, " \t\n", &save); w && c < 32;
             w = strtok_r(NULL, " \t\n", &save))
            v[c++] = strtol(w, NULL, 10);
        if (v[col_nattch] != 0) continue;
        /* a live creator is not one of ours (they are all gone): its pid came
         * round again, to a rank of another job that has made the segment and
         * not attached to it yet (seen under ctest -j2 with pid_max 32768) */
        if (kill((pid_t)v[col_cpid], 0) == 0 || errno == EPERM) continue;
        for (int r = js->first; r < js->first + js->count; r++)
            if (js->ranks[r].pid == (pid_t)v[col_cpid]) {
                shmctl((int)v[col_id], IPC_RMID, NULL);
                break;
            }
    }
    fclose(f);
}

/* --trace FILE: the directory the ranks write their parts in, FILE.parts.PID
 * beside FILE (an absolute path: agents and ranks on other hosts are given
 * it). 0, or 1 after saying why not. */
static int trace_begin(job_spec *js, const char *who)
{
    if (!js->cmd.trace) return 0;
    /* What would stop the trace being written is said now, not after the job
     * ran (its records were lost then): a directory, or a file we may not
     * write (the parts directory beside it shows that the directory is). */
    struct stat st;
    if (stat(js->cmd.trace, &st) == 0 &&
        (S_ISDIR(st.st_mode) || access(js->cmd.trace, W_OK) != 0)) {
        fprintf(stderr, "%s: --trace %s: %s; name a file to write the trace to\n", who,
                js->cmd.trace,
                S_ISDIR(st.st_mode) ? "is a directory" : "cannot be written (permission)");
        return 1;
    }
    char cwd[PATH_MAX] = "";
    if (js->cmd.trace[0] != '/' && !getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
    int n = snprintf(js->trace_parts, sizeof js->trace_parts, "%s%s%s.parts.%d", cwd,
                     cwd[0] ? "/" : "", js->cmd.trace, (int)getpid());
    if (n < 0 || (size_t)n >= sizeof js->trace_parts) {
        fprintf(stderr, "%s: --trace %s: the name is too long\n", who, js->cmd.trace);
        return 1;
    }
    if (mkdir(js->trace_parts, 0700) != 0) {
        fprintf(stderr, "%s: --trace %s: cannot make %s: %s (is the directory writable?)\n", who,
                js->cmd.trace, js->trace_parts, strerror(errno));
        return 1;
    }
    js->cmd.trace_dir = js->trace_parts;
    return 0;
}

/* The job is over: the parts become the trace, and go. */
static void trace_finish(job_spec *js)
{
    if (!js->trace_parts[0]) return;
    char *cmd = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&cmd, &len);
    for (int i = 0; m && i < js->argc; i++) fprintf(m, "%s%s", i ? " " : "", js->argv[i]);
    if (m) fclose(m);
    char clock[300];
    if (js->cmd.sim)
        snprintf(clock, sizeof clock, "virtual (--sim %s)", js->cmd.sim);
    else
        snprintf(clock, sizeof clock, "real");
    cr_trace_job tj = {.dir = js->trace_parts,
                       .out = js->cmd.trace,
                       .nranks = js->cmd.total,
                       .command = cmd,
                       .clock = clock,
                       .hang = js->hang_text,
                       .hang_at = js->hang_at};
    int events = cr_trace_merge(&tj, stderr);
    free(cmd);
    cr_trace_parts_remove(js->trace_parts, js->cmd.total);
    if (events >= 0)
        fprintf(stderr,
                "courier: trace of %d ranks, %d events: %s (a summary: courier trace %s; the "
                "timeline: open it in ui.perfetto.dev)\n",
                js->cmd.total, events, js->cmd.trace, js->cmd.trace);
    else if (!js->exit_status)
        js->exit_status = 1;
}

/* Enter the job in the user's registry for courier ps/status (src/run/jobs.c),
 * once its ranks are started; removed in watch_and_finish. argv: the command
 * line from "run" on. */
static void register_job(job_spec *js, int argc, char **argv)
{
    char *hosts = NULL;
    size_t len = 0;
    FILE *m = js->tree ? open_memstream(&hosts, &len) : NULL;
    for (int h = 0; m && h < js->tree->nnodes - 1; h++)
        fprintf(m, "%s%s:%d", h ? "," : "", js->tree->hosts[h].name, js->tree->hosts[h].count);
    if (m) fclose(m);
    cr_jobs_info info = {.agent = js->agent,
                         .ranks = js->cmd.total,
                         .first = js->first,
                         .count = js->count,
                         .hosts = hosts,
                         .segfd = js->control ? js->segfd : -1,
                         .timeout = js->cmd.timeout,
                         .trace = js->cmd.trace,
                         .argc = argc,
                         .argv = argv};
    cr_jobs_register(&info, js->regpath, sizeof js->regpath);
    free(hosts);
}

static void release(job_spec *js);

static int watch_and_finish(job_spec *js, int sfd, const char *who)
{
    if (watch(js, sfd) < 0) {
        fprintf(stderr, "%s: out of memory watching %d ranks; ending the job\n", who,
                js->cmd.total);
        js->exit_status = 1;
    }
    if (js->oq) { /* everything said, written */
        out_stop(js->oq);
        free(js->oq);
        js->oq = NULL;
    }
    /* The job is over (an agent may be killed once its parent hears DONE). */
    cr_jobs_unregister(js->regpath);
    if (js->agent && js->tree->parent) { /* every rank below us has ended */
        cr_tree_send(js->tree, -1, CR_F_DONE, 0, js->tree->node, 0, NULL, 0);
        cr_tree_flush(js->tree, 1000);
    }
    if (js->pgid) kill(-js->pgid, SIGKILL); /* the leader, and what a rank left in its group */
    if (js->tree) cr_tree_free(js->tree);   /* SIGKILLs rsh processes still running */
    while (waitpid(-1, NULL, 0) > 0) {
    }
    if (js->count) remove_sysv_leftovers(js);
    if (js->vsim) {
        fflush(stdout);
        if (cr_vsim_finish(js->vsim, stderr, js->cmd.sim_report,
                           (double)(now_ns() - js->started) / 1e9))
            fprintf(stderr, "%s: cannot write --sim-report %s: %s\n", who, js->cmd.sim_report,
                    strerror(errno));
        cr_vsim_free(js->vsim);
        js->vsim = NULL;
    }
    trace_finish(js);
    release(js);
    return js->exit_status;
}

/* What a job holds in the launcher, given back (also for a job that never
 * started: every field is NULL, zero or made). */
static void release(job_spec *js)
{
    cr_vsim_free(js->vsim);
    js->vsim = NULL;
    free(js->hang_text);
    cr_watchdog_free(js->wd);
    free(js->alive);
    if (!js->control) free(js->cards); /* the launcher's own table, not the segment's */
    if (js->control) munmap(js->control, cr_host_control_size(js->cmd.total));
    if (js->segfd >= 0) close(js->segfd);
    free(js->ranks);
    free(js->layout);
    free(js->card_sent);
    free(js->child_still);
    free(js->flushed);
    free(js->reported);
    free(js->in_buf);
    if (js->in_fd > 0) close(js->in_fd);
    cr_run_spec_free(&js->cmd);
}

static long env_ms(const char *name, long def, long lo, long hi)
{
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < lo || x > hi ? def : x;
}

/* The launcher of a job across hosts: start the agents' tree, then watch it.
 * hl: the hosts already known (a Slurm allocation), else those the command
 * line names. */
static int run_across(job_spec *js, int argc, char **argv, cr_hostlist hl)
{
    char err[600];
    if ((js->cmd.hostfile && cr_hosts_parse_file(&hl, js->cmd.hostfile, err, sizeof err)) ||
        (js->cmd.hosts && cr_hosts_parse_list(&hl, js->cmd.hosts, err, sizeof err)) ||
        cr_hosts_place(&hl, js->cmd.total, err, sizeof err)) {
        cr_hosts_free(&hl);
        free(js->ranks);
        cr_run_spec_free(&js->cmd);
        return usage_error("%s", err);
    }
    js->argc = argc;
    js->argv = argv;
    if (trace_begin(js, "courier run")) {
        cr_hosts_free(&hl);
        free(js->ranks);
        cr_run_spec_free(&js->cmd);
        return 1;
    }
    cr_tree tree = {.lfd = -1};
    js->tree = &tree;
    tree.hosts = calloc((size_t)hl.n, sizeof *tree.hosts);
    char *rshbuf = strdup(js->cmd.rsh ? js->cmd.rsh : "ssh");
    tree.rsh = calloc(strlen(rshbuf ? rshbuf : "") / 2 + 2, sizeof *tree.rsh);
    char **jargv = calloc((size_t)argc + 3, sizeof *jargv);
    unsigned char key[32];
    char self[PATH_MAX];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    int status = 1;
    if (!tree.hosts || !rshbuf || !tree.rsh || !jargv || sl <= 0 || random_key(key)) {
        fprintf(stderr, "courier run: cannot prepare the job across hosts: %s\n",
                sl <= 0 ? "cannot find this executable (/proc/self/exe)" : "out of memory");
        goto out;
    }
    self[sl] = 0;
    tree.agent = getenv("COURIER_AGENT") ? getenv("COURIER_AGENT") : self;
    for (int h = 0, first = 0; h < hl.n; h++) {
        tree.hosts[h] = (cr_tree_host){.name = hl.name[h], .count = hl.count[h], .first = first};
        first += hl.count[h];
    }
    int nw = 0;
    for (char *save = NULL, *w = strtok_r(rshbuf, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save))
        tree.rsh[nw++] = w;
    if (!nw) tree.rsh[nw++] = "ssh";
    /* Heartbeats every COURIER_HEARTBEAT_MS (200); five missed mean a host is lost. */
    tree.hb_ms = (uint64_t)env_ms("COURIER_HEARTBEAT_MS", 200, 10, 60000);
    tree.lost_ms = 5 * tree.hb_ms;
    tree.join_ms = (uint64_t)env_ms("COURIER_AGENT_TIMEOUT", 30, 1, 3600) * 1000u;
    int fanout = (int)env_ms("COURIER_TREE_FANOUT", CR_TREE_FANOUT, 1, 4096);
    if (cr_tree_root(&tree, key, hl.n, fanout)) {
        fprintf(stderr, "courier run: %s\n", tree.why);
        goto out;
    }
    /* The agents get the command line without the options about hosts. */
    int jargc = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], ":")) { /* past the options: the rest is programs */
            for (; i < argc; i++) jargv[jargc++] = argv[i];
            break;
        }
        if ((!strcmp(argv[i], "--hosts") || !strcmp(argv[i], "--hostfile") ||
             !strcmp(argv[i], "--rsh") || !strcmp(argv[i], "--trace")) &&
            i + 1 < argc) {
            i++;
            continue;
        }
        jargv[jargc++] = argv[i];
        if (i == 0 && js->trace_parts[0]) { /* the ranks' parts go where the launcher says */
            jargv[jargc++] = "--trace-parts";
            jargv[jargc++] = js->trace_parts;
        }
    }
    tree.job = cr_tree_job_encode(&tree, jargc, jargv, &tree.job_len);
    js->child_still = calloc((size_t)tree.nchild + 1, sizeof *js->child_still);
    js->flushed = calloc((size_t)tree.nchild + 1, sizeof *js->flushed);
    js->reported = calloc((size_t)js->cmd.total, 1);
    js->cards = calloc((size_t)js->cmd.total, sizeof *js->cards);
    if (!tree.job || !js->child_still || !js->flushed || !js->reported || !js->cards) {
        fprintf(stderr, "courier run: the job's description is too large (%d hosts)\n", hl.n);
        goto out;
    }
    for (int r = 0; r < js->cmd.total; r++) js->ranks[r].running = true;
    js->in_fd = fcntl(0, F_GETFD) < 0 ? -1 : 0; /* rank 0's, on the first host */
    out_q *oq = calloc(1, sizeof *oq);
    if (!oq) {
        fprintf(stderr, "courier run: out of memory\n");
        goto out;
    }
    pthread_mutex_init(&oq->mu, NULL);
    pthread_cond_init(&oq->cv, NULL);
    /* The signals go to the descriptor, blocked before the writer thread
     * starts and inherits the mask (else SIGINT killed the launcher there,
     * silently, without ending the job in order). */
    int sfd = signal_fd();
    if (pthread_create(&oq->th, NULL, out_writer, oq)) {
        free(oq);
        if (sfd >= 0) close(sfd);
        fprintf(stderr, "courier run: cannot start the output thread\n");
        goto out;
    }
    js->oq = oq;
    js->started = now_ns();
    if (sfd < 0 || cr_tree_spawn(&tree, key)) {
        fprintf(stderr, "courier run: %s\n", sfd < 0 ? strerror(errno) : tree.why);
        for (int i = 0; i < tree.nchild; i++)
            if (tree.rsh_pid[i] > 0) kill(tree.rsh_pid[i], SIGKILL);
        while (waitpid(-1, NULL, 0) > 0) {
        }
        goto out;
    }
    explicit_bzero(key, sizeof key);
    js->first = js->count = 0;
    register_job(js, argc, argv);
    status = watch_and_finish(js, sfd, "courier run");
    close(sfd);
    free(jargv);
    free(rshbuf);
    cr_hosts_free(&hl);
    return status;
out:
    explicit_bzero(key, sizeof key);
    cr_tree_free(&tree);
    free(jargv);
    free(rshbuf);
    cr_hosts_free(&hl);
    free(js->ranks);
    free(js->child_still);
    free(js->flushed);
    free(js->reported);
    free(js->cards);
    cr_run_spec_free(&js->cmd);
    return status;
}

int cr_run_main(int argc, char **argv)
{
    job_spec js = {.fail.rank = -1};
    char err[8192];
    int rc = cr_run_parse(argc, argv, &js.cmd, NULL, NULL, err, sizeof err);
    bool across = !rc && (js.cmd.hosts || js.cmd.hostfile);
    if (!rc && !js.cmd.help && !across) { /* the programs must be here */
        cr_run_spec_free(&js.cmd);
        rc = cr_run_parse(argc, argv, &js.cmd, find_program, NULL, err, sizeof err);
    }
    if (rc) return usage_error("%s", err);
    if (js.cmd.help) {
        print_usage(stdout);
        return 0;
    }
    if (js.cmd.rsh && !across) {
        cr_run_spec_free(&js.cmd);
        return usage_error("--rsh starts agents on other hosts: give --hosts or --hostfile");
    }
    /* The settings from the environment, once for every rank. */
    if (cr_envcheck(err, sizeof err)) {
        fprintf(stderr, "courier run: %s\n", err);
        cr_run_spec_free(&js.cmd);
        return 2;
    }
    /* The programs and --net, here (across hosts each agent looks on its host). */
    for (int a = 0; !across && a < js.cmd.napps; a++) {
        int kind = program_problem(js.cmd.apps[a].argv[0], err, sizeof err);
        if (kind == PROG_OK) continue;
        cr_run_spec_free(&js.cmd);
        if (kind == PROG_USAGE) return usage_error("%s", err);
        fprintf(stderr, "courier run: %s\n", err);
        return 2;
    }
    const char *net_env = getenv("COURIER_NET");
    if (!across && (js.cmd.net || (net_env && *net_env)) &&
        cr_envcheck_net(js.cmd.net ? js.cmd.net : net_env,
                        js.cmd.net ? "--net " : "COURIER_NET=", err, sizeof err)) {
        cr_run_spec_free(&js.cmd);
        if (js.cmd.net) return usage_error("%s", err);
        fprintf(stderr, "courier run: %s\n", err);
        return 2;
    }
    raise_fd_limit();
    if (alloc_ranks(&js)) return usage_error("out of memory for %d ranks", js.cmd.total);
    /* Inside a Slurm allocation of several nodes, a job without --hosts spans
     * them, its agents started by srun (COURIER_NO_SLURM=1: this node only). */
    cr_hostlist slurm = {0};
    if (!across && !cr_envcheck_flag("COURIER_NO_SLURM")) {
        char err[600];
        rc = cr_hosts_from_slurm(&slurm, err, sizeof err);
        if (rc < 0) {
            cr_hosts_free(&slurm);
            free(js.ranks);
            cr_run_spec_free(&js.cmd);
            return usage_error("inside a Slurm allocation: %s", err);
        }
        across = rc == 0;
        if (across && !js.cmd.rsh) js.cmd.rsh = "srun --overlap -N1 -n1 -w";
    }
    if (across) return run_across(&js, argc, argv, slurm);

    js.count = js.cmd.total;
    js.argc = argc;
    js.argv = argv;
    if (trace_begin(&js, "courier run")) {
        release(&js);
        return 1;
    }
    unsigned char key[32];
    int sfd = signal_fd();
    if (sfd < 0 || random_key(key)) {
        fprintf(stderr, "courier run: cannot start: %s\n", strerror(errno));
        release(&js);
        return 1;
    }
    rc = start_here(&js, key, "courier run");
    explicit_bzero(key, sizeof key);
    if (rc) {
        release(&js);
        return rc;
    }
    register_job(&js, argc, argv);
    return watch_and_finish(&js, sfd, "courier run");
}

/* ---- a host's agent ------------------------------------------------------------- */

/* What comes before the agent stands: the JOB, and what follows it at once
 * (cards, rank 0's input, an END), kept as frames to be handled once the ranks
 * are started. */
typedef struct job_wait {
    bool got, lost;
    char *payload;
    size_t len;
    unsigned char *early; /* headers and payloads, one after another */
    size_t elen;
} job_wait;

static void on_job(void *arg, int from, const cr_frame_hdr *h, const void *pl)
{
    job_wait *w = arg;
    if (from != -1) return;
    if (h->type == CR_F_JOB && !w->got) {
        w->payload = malloc(h->len ? h->len : 1);
        if (w->payload) memcpy(w->payload, pl, h->len);
        w->len = h->len;
        w->got = true;
        return;
    }
    unsigned char *n = realloc(w->early, w->elen + sizeof *h + h->len);
    if (!n) return;
    w->early = n;
    memcpy(w->early + w->elen, h, sizeof *h);
    memcpy(w->early + w->elen + sizeof *h, pl, h->len);
    w->elen += sizeof *h + h->len;
}

static void on_job_lost(void *arg, int from, const char *why)
{
    (void)why;
    if (from == -1) ((job_wait *)arg)->lost = true;
}

static const char agent_usage[] =
    "usage: courier agent --parent ADDRS --port P --node K [--fanout F]\n"
    "  (started by courier run on each host of a job; the job's secret comes on stdin)\n";

int cr_agent_main(int argc, char **argv)
{
    const char *parent = NULL;
    long port = -1, node = -1, fanout = CR_TREE_FANOUT;
    for (int i = 1; i + 1 < argc; i += 2) {
        long *v = !strcmp(argv[i], "--port")     ? &port
                  : !strcmp(argv[i], "--node")   ? &node
                  : !strcmp(argv[i], "--fanout") ? &fanout
                                                 : NULL;
        if (!strcmp(argv[i], "--parent"))
            parent = argv[i + 1];
        else if (!v || parse_count(argv[i + 1], v))
            node = -1;
    }
    if (!parent || port < 1 || port > 65535 || node < 1 || fanout < 1 || (argc - 1) % 2) {
        fputs(agent_usage, stderr);
        return 2;
    }
    /* The secret: 32 bytes on stdin, then stdin is /dev/null. */
    unsigned char key[32];
    size_t got = 0;
    uint64_t until = now_ns() + 10000000000u;
    while (got < sizeof key && now_ns() < until) {
        struct pollfd p = {.fd = 0, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0) continue;
        ssize_t r = read(0, key + got, sizeof key - got);
        if (r <= 0 && !(r < 0 && errno == EINTR)) break;
        if (r > 0) got += (size_t)r;
    }
    int dn = open("/dev/null", O_RDONLY);
    if (dn >= 0) {
        dup2(dn, 0);
        close(dn);
    }
    if (got != sizeof key) {
        fprintf(stderr,
                "courier agent (node %ld): no job secret on standard input; agents are "
                "started by courier run --hosts\n",
                node);
        return 1;
    }
    job_spec js = {.fail.rank = -1, .agent = true};
    cr_tree tree = {.lfd = -1, .hb_ms = 200, .lost_ms = 5000};
    js.tree = &tree;
    int sfd = signal_fd();
    if (sfd < 0 || cr_tree_join(&tree, key, (int)node, (int)fanout, parent, (int)port)) {
        fprintf(stderr, "courier agent (node %ld): %s\n", node,
                sfd < 0 ? strerror(errno) : tree.why);
        explicit_bzero(key, sizeof key);
        cr_tree_free(&tree);
        return 1;
    }
    /* What to run. */
    job_wait w = {0};
    while (!w.got && !w.lost && now_ns() < until) {
        struct pollfd pf[4];
        int k = cr_tree_pollfds(&tree, pf);
        poll(pf, (nfds_t)k, 100);
        cr_tree_service(&tree, now_ns() / 1000000u, on_job, on_job_lost, &w);
    }
    int jargc = 0;
    char **jargv = w.got ? cr_tree_job_decode(&tree, w.payload, w.len, &jargc) : NULL;
    free(w.payload);
    char err[1024], who[300];
    snprintf(who, sizeof who, "courier agent (host %s)", cr_tree_node_name(&tree, (int)node));
    int rc = jargv ? cr_run_parse(jargc, jargv, &js.cmd, NULL, NULL, err, sizeof err) : 2;
    if (!jargv) snprintf(err, sizeof err, "no readable job from the launcher");
    /* The programs this host runs must be here (others need not be). */
    for (int a = 0, r0 = 0; !rc && node < tree.nnodes && a < js.cmd.napps;
         r0 += js.cmd.apps[a++].n) {
        const cr_tree_host *h = &tree.hosts[node - 1];
        if (r0 < h->first + h->count && r0 + js.cmd.apps[a].n > h->first &&
            program_problem(js.cmd.apps[a].argv[0], err, sizeof err) != PROG_OK)
            rc = 2;
    }
    if (!rc && js.cmd.net && cr_envcheck_net(js.cmd.net, "--net ", err, sizeof err)) rc = 2;
    if (rc || node >= tree.nnodes || tree.hosts[node - 1].count < 1 ||
        tree.hosts[node - 1].first + tree.hosts[node - 1].count > js.cmd.total) {
        if (!rc) snprintf(err, sizeof err, "the job's host list does not match its ranks");
        char msg[1400];
        int n = snprintf(msg, sizeof msg, "host %s: %s", cr_tree_node_name(&tree, (int)node), err);
        cr_tree_send(&tree, -1, CR_F_FAIL, 0, (int)node, 0, msg, (size_t)n);
        cr_tree_flush(&tree, 1000);
        explicit_bzero(key, sizeof key);
        free(jargv);
        cr_tree_free(&tree);
        cr_run_spec_free(&js.cmd);
        return 1;
    }
    js.cmd.timeout = 0; /* the launcher keeps the time */
    for (char **e = tree.env; e && *e; e++) {
        char *eq = strchr(*e, '=');
        *eq = 0;
        setenv(*e, eq + 1, 1);
        *eq = '=';
    }
    js.first = tree.hosts[node - 1].first;
    js.count = tree.hosts[node - 1].count;
    size_t ll = (size_t)(tree.nnodes - 1) * 8 + 1;
    js.layout = malloc(ll);
    js.card_sent = calloc((size_t)js.count, 1);
    js.cards_left = js.count;
    if (js.layout) {
        size_t off = 0;
        for (int h = 0; h < tree.nnodes - 1; h++)
            off += (size_t)snprintf(js.layout + off, ll - off, "%s%d", h ? "," : "",
                                    tree.hosts[h].count);
    }
    cr_tree_local_addr(&tree, js.net_here, sizeof js.net_here);
    raise_fd_limit();
    rc = !js.layout || !js.card_sent || alloc_ranks(&js) || cr_tree_spawn(&tree, key);
    js.child_still = calloc((size_t)tree.nchild + 1, sizeof *js.child_still);
    js.flushed = calloc((size_t)tree.nchild + 1, sizeof *js.flushed);
    if (rc || !js.child_still || !js.flushed) {
        char msg[600];
        int n = snprintf(msg, sizeof msg, "host %s: %s", cr_tree_node_name(&tree, (int)node),
                         tree.why[0] ? tree.why : "out of memory");
        cr_tree_send(&tree, -1, CR_F_FAIL, 0, (int)node, 0, msg, (size_t)n);
        cr_tree_flush(&tree, 1000);
        rc = 1;
    } else {
        rc = start_here(&js, key, who);
    }
    for (size_t off = 0; !rc && off < w.elen;) { /* what came right after the job */
        cr_frame_hdr h;
        memcpy(&h, w.early + off, sizeof h);
        on_frame(&js, -1, &h, w.early + off + sizeof h);
        off += sizeof h + h.len;
    }
    free(w.early);
    explicit_bzero(key, sizeof key);
    if (rc) {
        if (!js.ranks) { /* nothing started */
            cr_tree_free(&tree);
            cr_run_spec_free(&js.cmd);
            free(js.layout);
            free(js.card_sent);
            free(js.child_still);
            free(js.flushed);
            free(jargv);
            return 1;
        }
        end_job(&js, 1);
    } else {
        register_job(&js, jargc, jargv);
    }
    rc = watch_and_finish(&js, sfd, who);
    free(jargv);
    close(sfd);
    return rc;
}
