/* Live inspection of jobs: the per-user registry of running jobs that `courier
 * run` keeps, and the commands that read it, `courier ps` (the jobs) and
 * `courier status JOB` (each rank: what it does, its queues and traffic, from
 * the status board of the job's host segment).
 *
 * The registry is a directory of the user's own, $XDG_RUNTIME_DIR/courier when
 * XDG_RUNTIME_DIR names a directory of the user's, else /tmp/courier-<uid>,
 * mode 0700. Each launcher (and, across hosts, each host's agent) writes one
 * file named by its pid, of key=value lines, and removes it when it ends.
 *
 * Invariants:
 *  - a registry directory that is not ours, is writable by others or is a
 *    symbolic link is never written or read: the launcher warns once and runs
 *    the job unregistered, ps and status say so and stop;
 *  - an entry appears whole or not at all (written to a temporary file, then
 *    renamed); it names the launcher by pid and start time (/proc/PID/stat
 *    field 22), so an entry whose process is gone, or whose pid now belongs to
 *    another process, is stale: ps and status skip and delete it;
 *  - the segment is read through the launcher's own descriptor of it
 *    (/proc/PID/fd/SEGFD), mapped read-only: nothing here ever writes to a
 *    job; whatever the segment holds is checked (magic, rank count, offsets)
 *    before it is read, and the text in it (a call's name) is bounded. */
#define _GNU_SOURCE
#include "jobs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "../host/host.h"
#include "../host/watchdog.h"

#define MAX_RANKS (1 << 20) /* sanity bound on what an entry may claim */
#define WATCH_MAX 86400.0   /* --watch: the longest interval, seconds */

/* ---- the registry directory ---------------------------------------------- */

/* A process's start time (/proc/PID/stat field 22, clock ticks after boot) and
 * state letter; 0, or -1 when there is no such process. */
static int proc_stat(pid_t pid, unsigned long long *start, char *state)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold anything */
    if (!p) return -1;
    int field = 2;
    char *save = NULL;
    for (char *w = strtok_r(p + 1, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        field++;
        if (field == 3 && state) *state = w[0];
        if (field == 22) {
            *start = strtoull(w, NULL, 10);
            return 0;
        }
    }
    return -1;
}

/* Is pid a live process (not a zombie)? */
static bool pid_alive(pid_t pid)
{
    unsigned long long start;
    char state = '?';
    return pid > 0 && proc_stat(pid, &start, &state) == 0 && state != 'Z' && state != 'X';
}

/* ---- writing an entry (the launcher) --------------------------------------- */

/* Text for one line of an entry: control characters (a newline would end the
 * line) become '?'. */
static void put_text(FILE *m, const char *s)
{
    for (; s && *s; s++) fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, m);
}

/* A word of the command line as a shell would take it back. */
static void put_word(FILE *m, const char *w)
{
    bool plain = *w != '\0';
    for (const char *c = w; *c && plain; c++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                       "_-+./:=,@%^",
                       *c) != NULL;
    if (plain) {
        fputs(w, m);
        return;
    }
    fputc('\'', m);
    for (const char *c = w; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", m);
        else
            put_text(m, (char[]){*c, 0});
    }
    fputc('\'', m);
}

void cr_jobs_register(const cr_jobs_info *in, char *path, size_t len)
{
    char dir[PATH_MAX], why[PATH_MAX + 200], tmp[PATH_MAX + 32], host[256] = "localhost",
                                                                 cwd[PATH_MAX] = "";
    path[0] = '\0';
    if (cr_user_dir(dir, sizeof dir, true, 022, why, sizeof why)) goto warn;
    unsigned long long start = 0;
    if (proc_stat(getpid(), &start, NULL)) {
        snprintf(why, sizeof why, "cannot read /proc/self/stat");
        goto warn;
    }
    char *text = NULL;
    size_t tlen = 0;
    FILE *m = open_memstream(&text, &tlen);
    if (!m) {
        snprintf(why, sizeof why, "out of memory");
        goto warn;
    }
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
    fprintf(m, "pid=%d\nstart=%llu\nstarted=%lld\nrole=%s\nranks=%d\nfirst=%d\ncount=%d\nhosts=",
            (int)getpid(), start, (long long)time(NULL), in->agent ? "agent" : "launcher",
            in->ranks, in->first, in->count);
    if (in->hosts)
        put_text(m, in->hosts);
    else
        fprintf(m, "%s:%d", host, in->ranks);
    fputs("\ncwd=", m);
    put_text(m, cwd);
    fputs("\ncommand=courier", m);
    for (int i = 0; i < in->argc; i++) {
        fputc(' ', m);
        put_word(m, in->argv[i]);
    }
    fprintf(m, "\nsegfd=%d\ntimeout=%g\ntrace=", in->segfd, in->timeout);
    put_text(m, in->trace);
    fputc('\n', m);
    if (fclose(m) || !text) {
        free(text);
        snprintf(why, sizeof why, "out of memory");
        goto warn;
    }
    snprintf(tmp, sizeof tmp, "%s/.%d.tmp", dir, (int)getpid());
    int n = snprintf(path, len, "%s/%d", dir, (int)getpid());
    unlink(tmp); /* one a process that had our pid left */
    int fd = n > 0 && (size_t)n < len
                 ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)
                 : -1;
    bool ok = fd >= 0 && write(fd, text, tlen) == (ssize_t)tlen;
    if (fd >= 0 && close(fd)) ok = false;
    if (ok && rename(tmp, path) < 0) ok = false;
    int e = errno;
    free(text);
    if (ok) return;
    if (fd >= 0) unlink(tmp);
    snprintf(why, sizeof why, "cannot write %s: %s", tmp, strerror(e));
    path[0] = '\0';
warn:
    fprintf(stderr, "courier run: warning: the job is not registered for courier ps/status: %s\n",
            why);
}

void cr_jobs_unregister(char *path)
{
    if (!path || !path[0]) return;
    unlink(path);
    path[0] = '\0';
}

/* ---- reading entries --------------------------------------------------------- */

typedef struct entry {
    pid_t pid;
    unsigned long long start;
    long long started;
    bool agent;
    int ranks, first, count, segfd;
    double timeout;
    char *hosts, *cwd, *command, *trace;
} entry;

static void entry_free(entry *e)
{
    if (!e) return;
    free(e->hosts);
    free(e->cwd);
    free(e->command);
    free(e->trace);
    free(e);
}

static bool parse_ll(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > hi) return false;
    *out = x;
    return true;
}

/* Read the entry of pid from the registry (fd: the directory); NULL when it is
 * not a whole entry of ours. */
static entry *entry_read(int dfd, pid_t pid)
{
    char name[32];
    snprintf(name, sizeof name, "%d", (int)pid);
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "r");
    entry *e = calloc(1, sizeof *e);
    if (!f || !e) {
        if (f)
            fclose(f);
        else
            close(fd);
        free(e);
        return NULL;
    }
    e->segfd = -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long long v = 0, got_pid = -1, got_start = -1;
    bool bad = false;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n') line[n - 1] = '\0';
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = '\0';
        const char *k = line, *val = eq + 1;
        char **str = !strcmp(k, "hosts")     ? &e->hosts
                     : !strcmp(k, "cwd")     ? &e->cwd
                     : !strcmp(k, "command") ? &e->command
                     : !strcmp(k, "trace")   ? &e->trace
                                             : NULL;
        if (str) {
            free(*str);
            if (!(*str = strdup(val))) bad = true;
        } else if (!strcmp(k, "pid")) {
            if (!parse_ll(val, 1, INT_MAX, &got_pid)) bad = true;
        } else if (!strcmp(k, "start")) {
            char *end;
            e->start = strtoull(val, &end, 10);
            if (end == val || *end) bad = true;
            got_start = 1;
        } else if (!strcmp(k, "started")) {
            if (parse_ll(val, 0, LLONG_MAX, &v)) e->started = v;
        } else if (!strcmp(k, "role")) {
            e->agent = !strcmp(val, "agent");
        } else if (!strcmp(k, "ranks")) {
            if (!parse_ll(val, 1, MAX_RANKS, &v)) bad = true;
            e->ranks = (int)v;
        } else if (!strcmp(k, "first") || !strcmp(k, "count") || !strcmp(k, "segfd")) {
            if (!parse_ll(val, -1, MAX_RANKS, &v)) bad = true;
            *(k[0] == 'f' ? &e->first : k[0] == 'c' ? &e->count : &e->segfd) = (int)v;
        } else if (!strcmp(k, "timeout")) {
            e->timeout = strtod(val, NULL);
        }
    }
    free(line);
    fclose(f);
    e->pid = pid;
    if (bad || got_pid != pid || got_start < 0 || e->ranks < 1 || e->first < 0 || e->count < 0 ||
        e->first > e->ranks - e->count || !e->hosts || !e->command) {
        entry_free(e);
        return NULL;
    }
    if (!e->cwd) e->cwd = strdup("");
    if (!e->trace) e->trace = strdup("");
    if (!e->cwd || !e->trace) {
        entry_free(e);
        return NULL;
    }
    return e;
}

/* Is the entry's process still the one that wrote it? */
static bool entry_alive(const entry *e)
{
    unsigned long long start;
    char state = '?';
    return proc_stat(e->pid, &start, &state) == 0 && start == e->start && state != 'Z';
}

/* A name of the registry: an entry (its pid, *tmp false) or a temporary file
 * (".PID.tmp", *tmp true); 0: neither. */
static pid_t name_pid(const char *name, bool *tmp)
{
    *tmp = name[0] == '.';
    const char *p = name + *tmp;
    long long v;
    char num[32];
    size_t k = strspn(p, "0123456789");
    if (!k || k >= sizeof num) return 0;
    memcpy(num, p, k);
    num[k] = '\0';
    if (strcmp(p + k, *tmp ? ".tmp" : "") || !parse_ll(num, 1, INT_MAX, &v)) return 0;
    return (pid_t)v;
}

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = *(entry *const *)a, *y = *(entry *const *)b;
    if (x->started != y->started) return x->started < y->started ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

typedef struct entries {
    entry **v;
    int n;
} entries;

static void entries_free(entries *es)
{
    for (int i = 0; i < es->n; i++) entry_free(es->v[i]);
    free(es->v);
    es->v = NULL;
    es->n = 0;
}

/* The live entries (agents' too when all), oldest first; stale ones (and
 * temporary files of processes that are gone) are deleted on the way. 0, or -1
 * after saying why on stderr (who: the command). */
static int entries_load(entries *es, bool all, const char *who)
{
    char dir[PATH_MAX], why[PATH_MAX + 200];
    *es = (entries){0};
    int rc = cr_user_dir(dir, sizeof dir, false, 022, why, sizeof why);
    if (rc == 1) return 0;
    if (rc < 0) {
        fprintf(stderr, "%s: cannot use the registry of jobs: %s\n", who, why);
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: cannot read the registry of jobs %s: %s\n", who, dir, strerror(errno));
        return -1;
    }
    int dfd = dirfd(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        bool tmp;
        pid_t pid = name_pid(de->d_name, &tmp);
        if (!pid) continue;
        if (tmp) {
            if (!pid_alive(pid)) unlinkat(dfd, de->d_name, 0);
            continue;
        }
        entry *e = entry_read(dfd, pid);
        if (!e || !entry_alive(e)) {
            if (e || !pid_alive(pid)) unlinkat(dfd, de->d_name, 0); /* stale */
            entry_free(e);
            continue;
        }
        entry **nv = all || !e->agent ? realloc(es->v, (size_t)(es->n + 1) * sizeof *nv) : NULL;
        if (!nv) {
            entry_free(e);
            continue;
        }
        es->v = nv;
        es->v[es->n++] = e;
    }
    closedir(d);
    if (es->n) qsort(es->v, (size_t)es->n, sizeof *es->v, entry_cmp);
    return 0;
}

/* The host of rank r from an entry's host list ("a:2,b:2"), in buf. */
static const char *host_of(const entry *e, int r, char *buf, size_t len)
{
    snprintf(buf, len, "?");
    int first = 0;
    for (const char *p = e->hosts; *p;) {
        const char *end = strchr(p, ','), *stop = end ? end : p + strlen(p);
        const char *colon = memrchr(p, ':', (size_t)(stop - p));
        int count = colon ? atoi(colon + 1) : 1;
        if (r >= first && r < first + count) {
            size_t k = (size_t)((colon ? colon : stop) - p);
            snprintf(buf, len, "%.*s", (int)(k < len ? k : len - 1), p);
            break;
        }
        first += count;
        p = end ? end + 1 : stop;
    }
    return buf;
}

/* Hosts of an entry: how many, and the list without counts in buf. */
static int host_names(const entry *e, char *buf, size_t len)
{
    int n = 0;
    size_t off = 0;
    buf[0] = '\0';
    for (const char *p = e->hosts; *p; n++) {
        const char *end = strchr(p, ','), *stop = end ? end : p + strlen(p);
        const char *colon = memrchr(p, ':', (size_t)(stop - p));
        int k = (int)((colon ? colon : stop) - p);
        if (off < len) off += (size_t)snprintf(buf + off, len - off, "%s%.*s", n ? "," : "", k, p);
        p = end ? end + 1 : stop;
    }
    return n;
}

/* ---- the status board of a job ------------------------------------------------ */

typedef struct board {
    void *base;
    size_t len;
    uint64_t mem_used, mem_space; /* the segment's memory taken, and its size */
    const cr_host_rank *rk;
    const cr_host_status *st;
} board;

/* Map the control part of e's host segment read-only. 0, or -1 with why (one
 * line from "cannot ...", with what to do). */
static int board_open(const entry *e, board *b, char *why, size_t wlen)
{
    char path[64];
    *b = (board){0};
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)e->pid, e->segfd);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (!entry_alive(e))
            snprintf(why, wlen, "job %d has ended", (int)e->pid);
        else if (err == EACCES || err == EPERM)
            snprintf(why, wlen,
                     "cannot open job %d's shared segment (%s): %s; run courier status as the "
                     "user who started the job",
                     (int)e->pid, path, strerror(err));
        else
            snprintf(why, wlen,
                     "cannot open job %d's shared segment (%s): %s; the job may be ending "
                     "(courier ps lists the running jobs)",
                     (int)e->pid, path, strerror(err));
        return -1;
    }
    cr_host_head hd;
    struct stat st;
    size_t need = cr_host_control_size(e->ranks);
    if (pread(fd, &hd, sizeof hd, 0) != (ssize_t)sizeof hd || fstat(fd, &st) < 0 ||
        hd.magic != CR_HOST_MAGIC || hd.nranks != (uint32_t)e->ranks ||
        (uint64_t)st.st_size < need ||
        hd.rank_off + (uint64_t)e->ranks * sizeof(cr_host_rank) > need ||
        hd.status_off + (uint64_t)e->ranks * sizeof(cr_host_status) > need ||
        hd.status_off % CR_HOST_LINE || hd.rank_off % CR_HOST_LINE) {
        close(fd);
        snprintf(why, wlen,
                 "job %d's descriptor %d is not a courier segment of %d ranks (a courier of "
                 "another version started it?); use the courier that started the job",
                 (int)e->pid, e->segfd, e->ranks);
        return -1;
    }
    void *base = mmap(NULL, need, PROT_READ, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (base == MAP_FAILED) {
        snprintf(why, wlen, "cannot map job %d's shared segment: %s", (int)e->pid, strerror(err));
        return -1;
    }
    b->base = base;
    b->len = need;
    b->mem_used = (uint64_t)st.st_blocks * 512u;
    b->mem_space = (uint64_t)st.st_size;
    b->rk = (const cr_host_rank *)((const char *)base + hd.rank_off);
    b->st = (const cr_host_status *)((const char *)base + hd.status_off);
    return 0;
}

static void board_close(board *b)
{
    if (b->base) munmap(b->base, b->len);
    b->base = NULL;
}

enum rank_state {
    RS_RUNNING,   /* computing, or between calls, or in a call's spin phase */
    RS_BLOCKED,   /* waiting in a communication call past its spin phase */
    RS_FINISHED,  /* left the job in order */
    RS_ENDED,     /* its process is gone, without leaving the job in order */
    RS_STARTING,  /* not attached to the segment yet */
    RS_ELSEWHERE, /* on another host: that host's agent has its record */
    RS_NOBOARD    /* a job of one rank: the rank keeps no status board */
};
static const char *const state_name[] = {"running",  "blocked",   "finished", "ended",
                                         "starting", "elsewhere", "unknown"};

typedef struct rank_view {
    int state;
    pid_t pid;
    char wait[320];
    cr_host_stats s;
} rank_view;

static void rank_read(const entry *e, const board *b, int r, rank_view *v)
{
    *v = (rank_view){.state = RS_ELSEWHERE};
    if (!b->base || r < e->first || r >= e->first + e->count) return;
    cr_host_rank *rk = (cr_host_rank *)&b->rk[r];
    v->pid = atomic_load_explicit(&rk->pid, memory_order_acquire);
    bool gone = atomic_load_explicit(&rk->gone, memory_order_acquire) != 0;
    memcpy(&v->s, (const void *)&b->st[r].stats, sizeof v->s); /* aligned words; see host.h */
    if (gone) {
        v->state = RS_FINISHED;
    } else if (!v->pid) {
        v->state = e->ranks == 1 ? RS_NOBOARD : RS_STARTING;
    } else if (!pid_alive(v->pid)) {
        v->state = RS_ENDED;
    } else {
        uint32_t spells = 0;
        unsigned char blocked = 0;
        cr_waitinfo w = {0};
        cr_watchdog_read_status(&b->st[r], &spells, &blocked, &w);
        v->state = blocked ? RS_BLOCKED : RS_RUNNING;
        if (blocked) cr_watchdog_describe_wait(v->wait, sizeof v->wait, &w);
    }
}

/* Counts over the ranks this entry's process started. */
typedef struct tally {
    int here, blocked, finished, ended;
    int counted; /* ranks whose counters are in s */
    cr_host_stats s;
} tally;

static void tally_add(tally *t, const rank_view *v)
{
    if (v->state == RS_ELSEWHERE) return;
    t->here++;
    t->blocked += v->state == RS_BLOCKED;
    t->finished += v->state == RS_FINISHED;
    t->ended += v->state == RS_ENDED;
    if (v->state == RS_NOBOARD) return;
    t->counted++;
    t->s.sent_msgs += v->s.sent_msgs;
    t->s.sent_bytes += v->s.sent_bytes;
    t->s.recv_msgs += v->s.recv_msgs;
    t->s.recv_bytes += v->s.recv_bytes;
    t->s.unexp_bytes += v->s.unexp_bytes;
    t->s.posted += v->s.posted;
    t->s.unexpected += v->s.unexpected;
}

/* The job's state in a few words: "running", "1 of 4 blocked, 2 of 4 finished",
 * "finished". */
static void tally_words(const entry *e, const tally *t, char *buf, size_t len)
{
    int done = t->finished + t->ended;
    if (!t->here) {
        char names[64];
        snprintf(buf, len, "running on %d hosts", host_names(e, names, sizeof names));
    } else if (done == t->here) {
        snprintf(buf, len, t->ended ? "ended" : "finished");
    } else if (!t->blocked && !done) {
        snprintf(buf, len, "running");
    } else {
        size_t off = 0;
        if (t->blocked) off += (size_t)snprintf(buf, len, "%d of %d blocked", t->blocked, t->here);
        if (done && off < len)
            snprintf(buf + off, len - off, "%s%d of %d finished", off ? ", " : "", done, t->here);
    }
}

static void elapsed(long long started, char *buf, size_t len)
{
    long long s = (long long)time(NULL) - started;
    if (s < 0) s = 0;
    if (s >= 86400)
        snprintf(buf, len, "%lld-%02lld:%02lld:%02lld", s / 86400, s / 3600 % 24, s / 60 % 60,
                 s % 60);
    else if (s >= 3600)
        snprintf(buf, len, "%02lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, len, "%02lld:%02lld", s / 60, s % 60);
}

/* ---- courier ps ------------------------------------------------------------------ */

static const char ps_usage[] =
    "usage: courier ps [--all]\n"
    "  lists your running jobs (started by courier run on this host): JOB (the\n"
    "  launcher's pid, for courier status JOB), RANKS, HOSTS, ELAPSED, STATE, COMMAND\n"
    "  --all   also the parts of jobs across hosts that run here (their agents)\n";

int cr_ps_main(int argc, char **argv)
{
    bool all = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all") || !strcmp(argv[i], "-a")) {
            all = true;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(ps_usage, stdout);
            return 0;
        } else {
            fprintf(stderr, "courier ps: unknown argument '%s'\n", argv[i]);
            fputs(ps_usage, stderr);
            return 2;
        }
    }
    entries es;
    if (entries_load(&es, all, "courier ps")) return 1;
    printf("%-8s %-7s %-20s %-10s %-32s %s\n", "JOB", "RANKS", "HOSTS", "ELAPSED", "STATE",
           "COMMAND");
    for (int i = 0; i < es.n; i++) {
        const entry *e = es.v[i];
        char ranks[32], hosts[256], names[256], up[32], state[96], why[PATH_MAX + 200];
        tally t = {0};
        board b = {0};
        if (e->segfd >= 0 && board_open(e, &b, why, sizeof why) == 0) {
            for (int r = e->first; r < e->first + e->count; r++) {
                rank_view v;
                rank_read(e, &b, r, &v);
                tally_add(&t, &v);
            }
            board_close(&b);
            tally_words(e, &t, state, sizeof state);
        } else if (e->segfd >= 0) {
            snprintf(state, sizeof state, entry_alive(e) ? "unreadable" : "ended");
        } else {
            tally_words(e, &t, state, sizeof state);
        }
        int nh = host_names(e, names, sizeof names);
        if (e->agent) {
            host_of(e, e->first, hosts, sizeof hosts);
            snprintf(hosts + strlen(hosts), sizeof hosts - strlen(hosts), " (agent)");
            snprintf(ranks, sizeof ranks, "%d-%d/%d", e->first, e->first + e->count - 1, e->ranks);
        } else {
            if (nh > 1 && strlen(names) > 20)
                snprintf(hosts, sizeof hosts, "%d hosts", nh);
            else
                snprintf(hosts, sizeof hosts, "%s", names);
            snprintf(ranks, sizeof ranks, "%d", e->ranks);
        }
        elapsed(e->started, up, sizeof up);
        printf("%-8d %-7s %-20s %-10s %-32s %s\n", (int)e->pid, ranks, hosts, up, state,
               e->command);
    }
    entries_free(&es);
    return 0;
}

/* ---- courier status --------------------------------------------------------------- */

static const char status_usage[] =
    "usage: courier status [--json] [--watch S] [JOB]\n"
    "  shows each rank of a running job: its pid, what it does (running, blocked\n"
    "  in a call and on what, finished), the receives it has posted, the messages\n"
    "  that arrived unmatched (and the bytes they hold), the messages and bytes it\n"
    "  has sent and received. JOB: as courier ps shows it; it may be left out when\n"
    "  one job runs.\n"
    "  --json     one JSON object (per refresh)\n"
    "  --watch S  show it again every S seconds until the job ends\n";

static void json_stats(const cr_host_stats *s)
{
    printf("\"posted\":%u,\"unexpected\":%u,\"unexp_bytes\":%llu,\"sent_msgs\":%llu,"
           "\"sent_bytes\":%llu,\"recv_msgs\":%llu,\"recv_bytes\":%llu",
           s->posted, s->unexpected, (unsigned long long)s->unexp_bytes,
           (unsigned long long)s->sent_msgs, (unsigned long long)s->sent_bytes,
           (unsigned long long)s->recv_msgs, (unsigned long long)s->recv_bytes);
}

static void print_json(const entry *e, const board *b, bool ended)
{
    char host[256], state[96];
    tally t = {0};
    printf("{\"job\":%d,\"ended\":%s,\"agent\":%s,\"started\":%lld,\"elapsed\":%lld,"
           "\"ranks\":%d,\"first\":%d,\"count\":%d,\"hosts\":",
           (int)e->pid, ended ? "true" : "false", e->agent ? "true" : "false", e->started,
           (long long)time(NULL) - e->started, e->ranks, e->first, e->count);
    cr_json_str(stdout, e->hosts);
    printf(",\"cwd\":");
    cr_json_str(stdout, e->cwd);
    printf(",\"command\":");
    cr_json_str(stdout, e->command);
    printf(",\"timeout\":%g,\"trace\":", e->timeout);
    cr_json_str(stdout, e->trace);
    printf(",\"shm_bytes\":%llu,\"shm_space\":%llu", (unsigned long long)b->mem_used,
           (unsigned long long)b->mem_space);
    printf(",\"rank\":[");
    for (int r = 0; r < e->ranks; r++) {
        rank_view v;
        rank_read(e, b, r, &v);
        tally_add(&t, &v);
        printf("%s{\"rank\":%d,\"host\":", r ? "," : "", r);
        cr_json_str(stdout, host_of(e, r, host, sizeof host));
        printf(",\"state\":\"%s\"", state_name[v.state]);
        if (v.state == RS_ELSEWHERE || v.state == RS_NOBOARD) {
            printf(",\"pid\":null,\"wait\":null}");
            continue;
        }
        if (v.pid)
            printf(",\"pid\":%d,\"wait\":", (int)v.pid);
        else
            printf(",\"pid\":null,\"wait\":");
        if (v.state == RS_BLOCKED)
            cr_json_str(stdout, v.wait);
        else
            printf("null");
        putchar(',');
        json_stats(&v.s);
        putchar('}');
    }
    tally_words(e, &t, state, sizeof state);
    printf("],\"total\":{\"state\":");
    cr_json_str(stdout, state);
    printf(",\"here\":%d,\"blocked\":%d,\"finished\":%d,\"ended\":%d,", t.here, t.blocked,
           t.finished, t.ended);
    json_stats(&t.s);
    printf("}}\n");
}

static void print_counts(const cr_host_stats *s)
{
    printf("%-7u %-6u %-12llu %-9llu %-12llu %-9llu %-12llu ", s->posted, s->unexpected,
           (unsigned long long)s->unexp_bytes, (unsigned long long)s->sent_msgs,
           (unsigned long long)s->sent_bytes, (unsigned long long)s->recv_msgs,
           (unsigned long long)s->recv_bytes);
}

static void print_table(const entry *e, const board *b, bool ended)
{
    char up[32], host[256], state[96];
    tally t = {0};
    elapsed(e->started, up, sizeof up);
    char names[256];
    host_names(e, names, sizeof names);
    if (ended)
        printf("job %d has ended; its last state:\n", (int)e->pid);
    else if (e->agent)
        printf("job %d, the agent of host %s (ranks %d-%d of a job across hosts %s): up %s, in "
               "%s: %s\n",
               (int)e->pid, host_of(e, e->first, host, sizeof host), e->first,
               e->first + e->count - 1, names, up, e->cwd, e->command);
    else
        printf("job %d %s %s: %d rank%s, up %s, in %s: %s\n", (int)e->pid,
               e->count ? "on" : "across hosts", names, e->ranks, e->ranks == 1 ? "" : "s", up,
               e->cwd, e->command);
    if (b->base)
        printf("shared memory: %.1f MiB in use (channels take theirs as pairs first talk; %.0f "
               "MiB of address space)\n",
               (double)b->mem_used / (1 << 20), (double)b->mem_space / (1 << 20));
    printf("%-5s %-8s %-7s %-6s %-12s %-9s %-12s %-9s %-12s %s\n", "RANK", "PID", "POSTED", "UNEXP",
           "UNEXP_BYTES", "SENT", "SENT_BYTES", "RECV", "RECV_BYTES", "STATE");
    for (int r = 0; r < e->ranks; r++) {
        rank_view v;
        rank_read(e, b, r, &v);
        tally_add(&t, &v);
        printf("%-5d ", r);
        if (v.state == RS_ELSEWHERE) {
            printf("%-8s %-7s %-6s %-12s %-9s %-12s %-9s %-12s on host %s: run courier status "
                   "there\n",
                   "-", "-", "-", "-", "-", "-", "-", "-", host_of(e, r, host, sizeof host));
            continue;
        }
        if (v.state == RS_NOBOARD) {
            printf("%-8s %-7s %-6s %-12s %-9s %-12s %-9s %-12s unknown: a job of one rank keeps "
                   "no status board\n",
                   "-", "-", "-", "-", "-", "-", "-", "-");
            continue;
        }
        if (v.pid)
            printf("%-8d ", (int)v.pid);
        else
            printf("%-8s ", "-");
        print_counts(&v.s);
        if (v.state == RS_BLOCKED)
            printf("blocked: %s\n", v.wait);
        else if (v.state == RS_STARTING)
            printf("starting: not in the job yet (no courier call so far)\n");
        else if (v.state == RS_ENDED)
            printf("ended: its process is gone without leaving the job in order\n");
        else
            printf("%s\n", state_name[v.state]);
    }
    tally_words(e, &t, state, sizeof state);
    printf("%-5s %-8s ", "total", "");
    if (t.counted)
        print_counts(&t.s);
    else
        printf("%-7s %-6s %-12s %-9s %-12s %-9s %-12s ", "-", "-", "-", "-", "-", "-", "-");
    printf("%s\n", state);
}

/* Say why pid names no job of ours; the exit status. */
static int no_such_job(pid_t pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    if (stat(path, &st) < 0)
        fprintf(stderr,
                "courier status: no job %d: no such process (it has ended, or never was); "
                "courier ps lists your running jobs\n",
                (int)pid);
    else if (st.st_uid != geteuid())
        fprintf(stderr,
                "courier status: process %d belongs to uid %u, not to you; courier status "
                "shows your own jobs (run it as that user)\n",
                (int)pid, (unsigned)st.st_uid);
    else
        fprintf(stderr,
                "courier status: process %d is not a courier job (or runs unregistered); "
                "courier ps lists your running jobs\n",
                (int)pid);
    return 1;
}

/* Sleep s seconds, waking early when the job ends; whether it still runs. */
static bool nap(const entry *e, double s)
{
    struct timespec end, now;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += (time_t)s;
    end.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    for (;;) {
        if (!entry_alive(e)) return false;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long left =
            (long long)(end.tv_sec - now.tv_sec) * 1000000000LL + (end.tv_nsec - now.tv_nsec);
        if (left <= 0) return true;
        struct timespec ts = {0, left > 100000000LL ? 100000000L : (long)left};
        nanosleep(&ts, NULL);
    }
}

int cr_status_main(int argc, char **argv)
{
    bool json = false;
    double every = 0;
    long long want = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *end;
        if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--watch")) {
            if (i + 1 >= argc || (every = strtod(argv[i + 1], &end), end == argv[i + 1] || *end) ||
                !(every >= 0.1 && every <= WATCH_MAX)) {
                fprintf(stderr, "courier status: --watch needs seconds between 0.1 and %g\n",
                        WATCH_MAX);
                fputs(status_usage, stderr);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(status_usage, stdout);
            return 0;
        } else if (a[0] != '-' && !want && parse_ll(a, 1, INT_MAX, &want)) {
        } else {
            fprintf(stderr, "courier status: %s '%s'\n",
                    a[0] == '-' ? "unknown option"
                                : "not a job number (a pid, as courier ps shows)",
                    a);
            fputs(status_usage, stderr);
            return 2;
        }
    }
    entries es;
    if (entries_load(&es, true, "courier status")) return 1;
    entry *e = NULL;
    int rc = 0;
    if (want) {
        for (int i = 0; i < es.n; i++)
            if (es.v[i]->pid == (pid_t)want) e = es.v[i];
        if (!e) {
            entries_free(&es);
            return no_such_job((pid_t)want);
        }
    } else {
        int launchers = 0;
        for (int i = 0; i < es.n; i++) launchers += !es.v[i]->agent;
        for (int i = 0; i < es.n; i++)
            if ((launchers == 1 && !es.v[i]->agent) || (!launchers && es.n == 1)) e = es.v[i];
        if (!e) {
            if (!es.n) {
                fprintf(stderr, "courier status: no job of yours is running here (courier run "
                                "starts one)\n");
            } else {
                fprintf(stderr, "courier status: %d jobs are running (", es.n);
                for (int i = 0; i < es.n; i++)
                    fprintf(stderr, "%s%d", i ? ", " : "", (int)es.v[i]->pid);
                fprintf(stderr, "); name one: courier status JOB\n");
            }
            rc = es.n ? 2 : 1;
            entries_free(&es);
            return rc;
        }
    }
    char why[PATH_MAX + 200];
    board b = {0};
    if (e->segfd >= 0 && board_open(e, &b, why, sizeof why)) {
        fprintf(stderr, "courier status: %s\n", why);
        entries_free(&es);
        return 1;
    }
    for (bool first = true;; first = false) {
        bool alive = entry_alive(e);
        if (!alive && first) {
            fprintf(stderr, "courier status: job %d has ended\n", (int)e->pid);
            rc = 1;
            break;
        }
        if (!first && !json) putchar('\n');
        if (json)
            print_json(e, &b, !alive);
        else
            print_table(e, &b, !alive);
        fflush(stdout);
        if (!alive || every <= 0) break;
        if (!nap(e, every)) {
            /* one last look: what the ranks left on the board */
            if (!json) putchar('\n');
            if (json)
                print_json(e, &b, true);
            else
                print_table(e, &b, true);
            break;
        }
    }
    board_close(&b);
    entries_free(&es);
    return rc;
}
