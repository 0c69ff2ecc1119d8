/* Tracing (trace.h): this rank's records, gathered in a buffer that is written
 * to its part file whenever it fills, at the end, and when the launcher ends
 * the rank with SIGTERM (a failed or hung job: its trace matters most then).
 *
 * Invariants: every record is written under the engine lock (the hooks run in
 * the engine and in the interfaces' enter/leave, which hold it), so one writer
 * at a time touches the buffer and nothing here is atomic; a slot's kind is
 * cleared when it is taken and stored last, so a record that a signal
 * interrupts is skipped rather than read half-made. The buffer is allocated
 * and touched once: writing a record never faults a page in (measured: a
 * fresh page per 85 records cost ~60 ns a record here). Strings (call names,
 * protocols) are interned by address: the first use of an address writes a
 * NAME record with its text, and later records carry its id. Per-call state is
 * kept per thread class (main, progress thread, any other), since the calls of
 * one class nest but do not interleave. Under courier run --sim the ticks are
 * the rank's virtual clock in nanoseconds (plus one, so that 0 stays "not
 * set"), and so are the waits: the trace is the modelled machine's timeline,
 * and reading it moves no clock. */
#define _GNU_SOURCE
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"

struct cr_trace {
    bool tsc;  /* ticks are the time-stamp counter */
    cr_vt *vt; /* simulated: ticks are virtual nanoseconds (before the attach: 0) */
    int fd;
    cr_trace_rec *buf; /* cap records */
    uint32_t used, cap;
    uint64_t written; /* records in the file before buf's */
    uint64_t lost;
    uint64_t run_t0;
    cr_trace_head head;
    const char *names[CR_TRACE_NAMES]; /* slot i: string id i + 1 */
    cr_trace_thr thr[CR_TR_THREADS];
    pthread_t main;
    struct sigaction old_term; /* the SIGTERM action before ours */
    bool term_hooked;
};

static inline cr_trace_thr *thr_of(cr_job *job, uint8_t *tid)
{
    cr_trace *t = job->trace;
    pthread_t me = pthread_self();
    int k = pthread_equal(me, t->main)                                    ? CR_TR_MAIN
            : job->progress_on && pthread_equal(me, job->progress_thread) ? CR_TR_PROGRESS
                                                                          : CR_TR_OTHER;
    if (tid) *tid = (uint8_t)k;
    return &t->thr[k];
}

/* The virtual clock in nanoseconds, plus one. */
static uint64_t vticks(cr_vt *vt)
{
    return (vt->base ? (uint64_t)cr_vt_read(vt) / 1000 : 0) + 1;
}

static inline uint64_t ticks(const cr_trace *t)
{
    if (__builtin_expect(t->vt != NULL, 0)) return vticks(t->vt);
#if defined(__x86_64__) || defined(__i386__)
    if (t->tsc) return __builtin_ia32_rdtsc();
#endif
    (void)t;
    return cr_clock_ns();
}

uint64_t cr_trace_now(cr_job *job)
{
    return ticks(job->trace);
}

uint64_t cr_trace_ns(cr_job *job)
{
    return job->vt.base ? vticks(&job->vt) : cr_clock_ns();
}

/* The time of the clock pairs: real nanoseconds, or the virtual ones (then
 * equal to the ticks, which makes the rate 1). */
static uint64_t pair_ns(const cr_trace *t, uint64_t tick)
{
    return t->vt ? tick : cr_clock_ns();
}

/* A clock pair: the ticks and the real (or virtual) nanoseconds at one moment.
 * Read as ticks, clock, ticks, the pair is as good as the two ticks are close:
 * a rank preempted between the reads (a loaded machine) would skew its every
 * record by the time it lost (3.6 us seen, arrows backwards in trace_ring over
 * tcp under the suite's load), so the tightest of a few tries is kept.
 * Async-signal-safe (the clock is the vDSO's or a system call). */
static void clock_pair(const cr_trace *t, uint64_t *tick, uint64_t *ns)
{
    *tick = ticks(t);
    *ns = pair_ns(t, *tick);
    if (!t->tsc) return; /* the ticks are the clock (or the virtual one) */
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16 && best > 2000; i++) {
        uint64_t a = ticks(t), n = cr_clock_ns(), b = ticks(t);
        if (b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *ns = n;
        }
    }
}

/* Write what the buffer holds (async-signal-safe: system calls only). */
static void flush(cr_trace *t, uint32_t ended)
{
    const char *p = (const char *)t->buf;
    size_t len = (size_t)t->used * sizeof(cr_trace_rec);
    off_t at = CR_TRACE_HEAD + (off_t)(t->written * sizeof(cr_trace_rec));
    while (len) {
        ssize_t n = pwrite(t->fd, p, len, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { /* disk full: what is left is lost, and said so */
            t->lost += len / sizeof(cr_trace_rec);
            break;
        }
        p += n;
        at += n;
        len -= (size_t)n;
    }
    t->written += t->used - (len / sizeof(cr_trace_rec));
    t->used = 0;
    t->head.nrec = t->written;
    t->head.lost = t->lost;
    t->head.ended = ended;
    clock_pair(t, &t->head.tick1, &t->head.ns1);
    if (pwrite(t->fd, &t->head, sizeof t->head, 0) != (ssize_t)sizeof t->head) t->lost++;
}

/* A slot for one record (its kind cleared until the record is sealed). */
static cr_trace_rec *slot(cr_job *job)
{
    cr_trace *t = job->trace;
    if (t->used == t->cap) flush(t, 0);
    cr_trace_rec *r = &t->buf[t->used++];
    r->kind = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return r;
}

static inline void seal(cr_trace_rec *r, uint8_t kind)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    r->kind = kind;
}

/* The id of string s (interned on first use); 0 for NULL or when the table is full. */
static uint16_t intern(cr_job *job, const char *s)
{
    if (!s) return 0;
    cr_trace *t = job->trace;
    uint64_t h = (uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull;
    for (unsigned n = 0, i = (unsigned)(h >> 54); n < CR_TRACE_NAMES;
         n++, i = (i + 1) % CR_TRACE_NAMES) {
        if (t->names[i] == s) return (uint16_t)(i + 1);
        if (t->names[i]) continue;
        t->names[i] = s;
        cr_trace_rec *r = slot(job);
        char text[CR_TRACE_NAME_LEN] = {0};
        strncpy(text, s, sizeof text - 1);
        memcpy(r, text, sizeof text);
        r->name = (uint16_t)(i + 1);
        seal(r, CR_TR_NAME);
        return (uint16_t)(i + 1);
    }
    return 0;
}

static void run_record(cr_job *job, uint64_t t1)
{
    cr_trace_rec *r = slot(job);
    *r = (cr_trace_rec){.t0 = job->trace->run_t0, .t1 = t1};
    seal(r, CR_TR_RUN);
}

/* SIGTERM from the launcher (a rank failed, a --timeout, a hang): write what
 * the buffer holds, then end as SIGTERM would have. */
static void on_term(int sig)
{
    cr_job *job = __atomic_load_n(&cr_the_job_ptr, __ATOMIC_ACQUIRE); /* no malloc here */
    cr_trace *t = job ? job->trace : NULL;
    if (t) {
        job->trace = NULL;
        cr_trace_rec *r = &t->buf[t->used < t->cap ? t->used++ : t->cap - 1];
        *r = (cr_trace_rec){.t0 = t->run_t0, .t1 = ticks(t), .kind = CR_TR_RUN};
        flush(t, 2);
        sigaction(SIGTERM, &t->old_term, NULL);
    } else {
        signal(sig, SIG_DFL);
    }
    raise(sig);
}

void cr_trace_open(cr_job *job, bool simulated)
{
    const char *dir = getenv("COURIER_TRACE");
    if (!dir || !*dir) return;
    cr_trace *t = calloc(1, sizeof *t);
    /* COURIER_TRACE_BUF: records buffered (tests make it small to write often) */
    const char *b = getenv("COURIER_TRACE_BUF");
    long cap = b ? strtol(b, NULL, 10) : CR_TRACE_BUF;
    if (cap < 16 || cap > (1L << 24)) cap = CR_TRACE_BUF;
    size_t bytes = (size_t)cap * sizeof(cr_trace_rec);
    if (!t || !(t->buf = malloc(bytes))) cr_fatal(job, "init", "out of memory for the trace");
    t->cap = (uint32_t)cap;
    memset(t->buf, 0, bytes); /* its pages, now rather than on the message path */
    /* courier run made it on its host; on another host the first rank there
     * makes it (the same path: a shared directory, or one to collect) */
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        cr_fatal(job, "init", "cannot make the trace directory %s: %s", dir, strerror(errno));
    char path[4096];
    if (snprintf(path, sizeof path, "%s/rank-%d", dir, job->rank) >= (int)sizeof path)
        cr_fatal(job, "init", "the trace directory's name is too long: %s", dir);
    t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (t->fd < 0)
        cr_fatal(job, "init", "cannot write the trace part %s: %s; check --trace's directory", path,
                 strerror(errno));
    memcpy(t->head.magic, CR_TRACE_MAGIC, sizeof t->head.magic);
    t->head.rec_size = sizeof(cr_trace_rec);
    t->head.rank = (uint32_t)job->rank;
    t->head.size = (uint32_t)job->size;
    t->head.pid = (uint32_t)getpid();
    t->main = pthread_self();
    if (simulated) t->vt = &job->vt; /* attached after this */
    t->tsc = !t->vt && cr_tsc_ok();
    t->head.tsc = t->tsc;
    /* The tick rate: from this pair and the one each write adds; a rank that
     * dies before its first write has this one and one a millisecond on. */
    clock_pair(t, &t->head.tick0, &t->head.ns0);
    while (!t->vt && cr_clock_ns() - t->head.ns0 < 1000000u) {
    }
    clock_pair(t, &t->head.tick1, &t->head.ns1);
    char zero[CR_TRACE_HEAD] = {0};
    memcpy(zero, &t->head, sizeof t->head);
    if (pwrite(t->fd, zero, sizeof zero, 0) != (ssize_t)sizeof zero)
        cr_fatal(job, "init", "cannot write the trace part %s: %s", path, strerror(errno));
    t->run_t0 = ticks(t);
    job->trace = t;
    run_record(job, 0);
    /* The launcher ends a failed or hung job's ranks with SIGTERM: keep their
     * records, unless the program handles SIGTERM itself. */
    struct sigaction cur;
    if (sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL) {
        struct sigaction sa = {.sa_handler = on_term};
        sigemptyset(&sa.sa_mask);
        t->term_hooked = sigaction(SIGTERM, &sa, &t->old_term) == 0;
    }
}

void cr_trace_close(cr_job *job)
{
    cr_trace *t = job->trace;
    if (!t) return;
    if (t->term_hooked) {
        struct sigaction cur;
        if (sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == on_term)
            sigaction(SIGTERM, &t->old_term, NULL);
    }
    run_record(job, ticks(t));
    job->trace = NULL;
    flush(t, 1);
    close(t->fd);
    free(t->buf);
    free(t);
}

void cr_trace_enter_on(cr_job *job, const char *call)
{
    cr_trace_thr *c = thr_of(job, NULL);
    if (c->depth++) return;
    c->call = call;
    c->how = NULL;
    c->t0 = ticks(job->trace);
    c->wait0 = c->waited;
    c->args_set = c->how_set = c->summed = false;
    c->peer = -1;
    c->tag = 0;
    c->bytes = 0;
    c->ctx = 0;
}

void cr_trace_leave_on(cr_job *job)
{
    uint8_t tid;
    cr_trace_thr *c = thr_of(job, &tid);
    if (c->depth == 0 || --c->depth) return;
    uint16_t name = intern(job, c->call), how = intern(job, c->how); /* may write records */
    cr_trace_rec *r = slot(job);
    *r = (cr_trace_rec){.t0 = c->t0,
                        .t1 = ticks(job->trace),
                        .bytes = c->bytes,
                        .wait = c->waited - c->wait0,
                        .peer = c->peer,
                        .tag = c->tag,
                        .ctx = c->ctx,
                        .name = name,
                        .how = how,
                        .tid = tid};
    seal(r, CR_TR_CALL);
}

void cr_trace_args_on(cr_job *job, int peer, int32_t tag, uint64_t bytes, uint16_t ctx)
{
    cr_trace_thr *c = thr_of(job, NULL);
    if (!c->depth || c->args_set) return;
    c->peer = peer;
    c->tag = tag;
    c->bytes = bytes;
    c->ctx = ctx;
    c->args_set = true;
}

void cr_trace_how_on(cr_job *job, const char *how)
{
    cr_trace_thr *c = thr_of(job, NULL);
    if (!c->depth || c->how_set) return;
    c->how = how;
    c->how_set = true;
}

void cr_trace_wait_on(cr_job *job, uint64_t ns)
{
    thr_of(job, NULL)->waited += ns;
}

/* A call's first message gives it its peer, tag and protocol, and its size is
 * what all its messages carry (an MPI_Waitall that completes four receives:
 * their four sizes), unless the interface said them (cr_trace_args,
 * cr_trace_how). */
static void first_message(cr_trace_thr *c, int peer, uint16_t ctx, int32_t tag, uint64_t bytes,
                          const char *how)
{
    if (!c->depth) return;
    if (c->summed) c->bytes += bytes;
    if (!c->args_set) {
        c->peer = peer;
        c->tag = tag;
        c->bytes = bytes;
        c->ctx = ctx;
        c->args_set = c->summed = true;
    }
    if (!c->how) c->how = how;
}

/* A message record: at t0 (a send), or matched at t1 by a receive posted at t0. */
static void message(cr_job *job, uint8_t kind, int peer, uint16_t ctx, int32_t tag, uint64_t bytes,
                    uint64_t t0, uint64_t t1, const char *how)
{
    uint8_t tid;
    first_message(thr_of(job, &tid), peer, ctx, tag, bytes, how);
    uint16_t how_id = intern(job, how); /* before the slot: it may write a record */
    cr_trace_rec *r = slot(job);
    *r = (cr_trace_rec){.t0 = t0,
                        .t1 = t1,
                        .bytes = bytes,
                        .peer = peer,
                        .tag = tag,
                        .ctx = ctx,
                        .how = how_id,
                        .tid = tid};
    seal(r, kind);
}

void cr_trace_send_on(cr_job *job, int dst, uint16_t ctx, int32_t tag, uint64_t bytes, uint64_t at,
                      const char *how)
{
    message(job, CR_TR_SEND, dst, ctx, tag, bytes, at ? at : ticks(job->trace), 0, how);
}

void cr_trace_recv_on(cr_job *job, int src, uint16_t ctx, int32_t tag, uint64_t bytes,
                      uint64_t posted, const char *how)
{
    uint64_t now = ticks(job->trace);
    message(job, CR_TR_RECV, src, ctx, tag, bytes, posted && posted < now ? posted : now, now, how);
}
