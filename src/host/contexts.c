/* Ranks as contexts (contexts.h): the scheduler that runs every rank of a
 * simulated job in one process, on one thread.
 *
 * Invariants:
 *  - one rank's context runs at a time, and only the scheduler switches to a
 *    rank; a rank switches back to it when it waits (cr_ctx_wait) or ends.
 *    The live copy of the writable data of the program and of libcourier
 *    (their globals: the job struct, MPI's state) is the running rank's: at
 *    a switch to another rank the live copy is saved in the rank it belongs
 *    to and the other's is put in its place, together with libc's environ,
 *    stdin, stdout and stderr. So a rank sees its own globals only, in its
 *    own calls;
 *  - the scheduler's own state is on the heap, reached through `the`, which is
 *    set before the first copy is taken and never changes: it is the same in
 *    every copy;
 *  - a waiting rank runs again once the simulator queued it on the wake queue
 *    (vtime.h), which only this process takes; a rank resumed too early finds
 *    what it waits for not there and waits again;
 *  - a rank that ends runs its exit handlers (cr_ctx_atexit) in its context,
 *    flushes its streams and leaves its status in its slot of the simulated
 *    mode's segment, where the launcher reads it. A rank that fails ends the
 *    process at once, as its process would have ended the job. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <link.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include "contexts.h"
#include "vtime.h"

extern char **environ;

enum { CTX_READY, CTX_RUN, CTX_WAIT, CTX_DONE };

#define CTX_ATEXIT 8 /* the library registers two */
#define CTX_SEGS 4   /* writable ranges swapped (the program's, libcourier's) */

typedef struct ctx {
    void *sp;    /* its stack pointer while it does not run */
    char *stack; /* the mapping, guard page first */
    size_t stack_len;
    int state;
    bool started, queued, finishing;
    char *image;      /* its copy of the writable data while another's is live */
    const char *warm; /* and what it touches elsewhere at each turn (cr_ctx_warm) */
    size_t warm_len;
    FILE *in, *out, *err;
    char **env, **argv; /* its environment and arguments (arrays of its own) */
    char *rank_var;     /* its COURIER_RANK=r */
    void (*atexit_fn[CTX_ATEXIT])(void);
    int natexit;
    int status;
} ctx;

typedef struct seg {
    char *addr;
    size_t len;
} seg;

typedef struct ctx_map { /* a segment the ranks share (cr_ctx_segment) */
    int fd;
    size_t len;
    void *base;
} ctx_map;

typedef struct sched {
    int n, cur, live, owner; /* owner: the rank whose data is live (-1: the first copy's) */
    ctx *c;
    void *sp; /* the scheduler's stack pointer while a rank runs */
    seg segs[CTX_SEGS];
    int nseg;
    size_t image_bytes;
    char *first; /* the writable data before any rank ran */
    cr_main_fn *main_fn;
    int argc;
    char **argv, **env0;
    FILE *in0, *out0, *err0, *devnull;
    int *outfd, *errfd;        /* each rank's stdout and stderr (rank 0: 1 and 2) */
    int mux;                   /* or, >= 0, the one pipe of the others' frames (mux_write) */
    cr_vt_head *hd;            /* the simulated mode's segment */
    int *ready, rhead, rcount; /* ranks to run, in order */
    cr_vt_waiter waiter;       /* this process's yields while it waits (vtime.h) */
    size_t stack_bytes;
    ctx_map maps[4];
    int nmaps;
    pthread_t th; /* the one thread every rank runs on */
} sched;

static sched *the;

/* ---- switching ------------------------------------------------------------ */

/* cr_ctx_swap(&save, to): save the callee-saved registers and the floating
 * point control words on the stack, store the stack pointer in *save, and go
 * on from to (a stack that an earlier swap saved, or a new one, prepared by
 * new_stack to return into ctx_entry). */
void cr_ctx_swap(void **save, void *to);
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl cr_ctx_swap\n"
        ".hidden cr_ctx_swap\n"
        ".type cr_ctx_swap,@function\n"
        "cr_ctx_swap:\n"
        "  .cfi_startproc\n"
        "  endbr64\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size cr_ctx_swap, .-cr_ctx_swap\n");
#define CTX_SUPPORTED 1
#else
#define CTX_SUPPORTED 0
void cr_ctx_swap(void **save, void *to)
{
    (void)save;
    (void)to;
    abort(); /* the stub never asks for contexts here (ctx_main.c) */
}
#endif

static _Noreturn void ctx_entry(void);

/* A new context's stack, as cr_ctx_swap leaves one: the control words, six
 * registers, then the address it returns to (ctx_entry, entered as if called:
 * the stack pointer 8 past a multiple of 16). */
static void *new_stack(char *lo, size_t len)
{
    uintptr_t top = ((uintptr_t)lo + len) & ~(uintptr_t)15;
    uint64_t *p = (uint64_t *)top;
    *--p = 0;                              /* ctx_entry's return address: never used */
    *--p = (uint64_t)(uintptr_t)ctx_entry; /* where cr_ctx_swap returns to */
    for (int i = 0; i < 6; i++) *--p = 0;  /* rbp rbx r12-r15 */
    uint32_t mxcsr = 0x1f80;               /* the defaults, replaced by the caller's */
    uint16_t fpcw = 0x37f;
#if defined(__x86_64__)
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpcw));
#endif
    --p;
    memcpy(p, &mxcsr, 4);
    memcpy((char *)p + 4, &fpcw, 2);
    return p;
}

/* ---- the writable data ---------------------------------------------------- */

static bool holds(struct dl_phdr_info *info, uintptr_t a)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz) return true;
    }
    return false;
}

/* The program's writable segments and libcourier's, less what is read-only
 * after relocation (RELRO: the pages below its end). */
static int find_segs(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    sched *s = arg;
    bool program = info->dlpi_name == NULL || info->dlpi_name[0] == '\0';
    if (!program && !holds(info, (uintptr_t)&find_segs)) return 0; /* libcourier's */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), relro = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO)
            relro = (info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz) &
                    ~(page - 1);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (relro > lo && relro <= hi) lo = relro;
        bool seen = false;
        for (int k = 0; k < s->nseg; k++) seen |= (uintptr_t)s->segs[k].addr == lo;
        if (hi <= lo || seen || s->nseg == CTX_SEGS) continue;
        s->segs[s->nseg++] = (seg){(char *)lo, hi - lo};
        s->image_bytes += hi - lo;
    }
    return 0;
}

static void copy_out(sched *s, char *to)
{
    for (int k = 0; k < s->nseg; k++, to += s->segs[k - 1].len)
        memcpy(to, s->segs[k].addr, s->segs[k].len);
}

static void copy_in(sched *s, const char *from)
{
    for (int k = 0; k < s->nseg; k++, from += s->segs[k - 1].len)
        memcpy(s->segs[k].addr, from, s->segs[k].len);
}

/* A rank's stdout or stderr (cookie: rank * 2 + stream) as frames into the one
 * pipe (the launcher's ctx_mux): its header, then the bytes, written whole
 * (one thread writes: frames never mix). */
static ssize_t mux_write(void *cookie, const char *buf, size_t size)
{
    uint32_t hdr[2] = {(uint32_t)(intptr_t)cookie, 0};
    for (size_t done = 0; done < size;) {
        size_t c = size - done > (1u << 30) ? (1u << 30) : size - done;
        hdr[1] = (uint32_t)c;
        struct iovec v[2] = {{hdr, sizeof hdr}, {(char *)buf + done, c}};
        size_t want = sizeof hdr + c;
        for (size_t put = 0; put < want;) {
            ssize_t w = writev(the->mux, v, 2);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) return done ? (ssize_t)done : -1;
            put += (size_t)w;
            for (int k = 0; k < 2 && w > 0; k++) { /* step past what went */
                size_t t = (size_t)w < v[k].iov_len ? (size_t)w : v[k].iov_len;
                v[k].iov_base = (char *)v[k].iov_base + t;
                v[k].iov_len -= t;
                w -= (ssize_t)t;
            }
        }
        done += c;
    }
    return (ssize_t)size;
}

static _Noreturn void die(int rank, const char *what)
{
    fprintf(the && the->err0 ? the->err0 : stderr,
            "courier: rank %d: %s: %s; run it as processes (--sim MACHINE,ranks=processes) or "
            "with fewer ranks\n",
            rank, what, strerror(errno));
    _exit(1);
}

/* Make rank r's data the live copy. */
static void take_data(sched *s, int r)
{
    if (s->owner == r) return;
    if (s->owner >= 0) { /* a rank that runs still (ended() disowns the others) */
        ctx *o = &s->c[s->owner];
        if (!o->image && !(o->image = malloc(s->image_bytes))) die(s->owner, "its globals");
        copy_out(s, o->image);
    }
    copy_in(s, s->c[r].image ? s->c[r].image : s->first);
    s->owner = r;
}

/* The process's one mapping of the segment inherited as fd: made at the
 * first call, kept (with the descriptor) until the process ends. */
static void *shared_map(sched *s, int fd, size_t len)
{
    for (int i = 0; i < s->nmaps; i++)
        if (s->maps[i].fd == fd && s->maps[i].len == len) return s->maps[i].base;
    void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base != MAP_FAILED && s->nmaps < (int)(sizeof s->maps / sizeof s->maps[0]))
        s->maps[s->nmaps++] = (ctx_map){fd, len, base};
    return base;
}

/* ---- a rank's life --------------------------------------------------------- */

static void make_ready(sched *s, int r)
{
    ctx *c = &s->c[r];
    if (c->queued) return;
    c->queued = true;
    c->state = CTX_READY;
    s->ready[(s->rhead + s->rcount++) % s->n] = r;
}

static int next_ready(sched *s)
{
    if (!s->rcount) return -1;
    int r = s->ready[s->rhead];
    s->rhead = (s->rhead + 1) % s->n;
    s->rcount--;
    s->c[r].queued = false;
    return r;
}

/* Its stack (the size a process's main thread gets, ulimit -s), its
 * environment and arguments, its streams (rank 0 has the process's). */
static void start(sched *s, int r)
{
    ctx *c = &s->c[r];
    c->started = true;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    c->stack_len = s->stack_bytes + page;
    c->stack = mmap(NULL, c->stack_len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (c->stack == MAP_FAILED) die(r, "cannot map its stack");
    mprotect(c->stack, page, PROT_NONE); /* an overflow faults, as a process's does */
    c->sp = new_stack(c->stack + page, s->stack_bytes);

    int nenv = 0;
    while (s->env0[nenv]) nenv++;
    c->env = malloc((size_t)(nenv + 2) * sizeof *c->env);
    c->argv = malloc((size_t)(s->argc + 1) * sizeof *c->argv);
    if (asprintf(&c->rank_var, "COURIER_RANK=%d", r) < 0 || !c->env || !c->argv)
        die(r, "out of memory for its environment");
    int k = 0;
    for (int i = 0; i < nenv; i++) {
        const char *e = s->env0[i];
        if (!strncmp(e, "COURIER_RANK=", 13) || !strncmp(e, "COURIER_SIM_CONTEXTS=", 21) ||
            !strncmp(e, "COURIER_CTX_FDS=", 16))
            continue;
        c->env[k++] = s->env0[i];
    }
    c->env[k++] = c->rank_var;
    c->env[k] = NULL;
    memcpy(c->argv, s->argv, (size_t)(s->argc + 1) * sizeof *c->argv);

    if (r == 0) {
        c->in = s->in0;
        c->out = s->out0;
        c->err = s->err0;
    } else if (s->mux >= 0) {
        c->in = s->devnull;
        cookie_io_functions_t io = {.write = mux_write};
        c->out = fopencookie((void *)(intptr_t)(2 * r), "w", io);
        c->err = fopencookie((void *)(intptr_t)(2 * r + 1), "w", io);
        if (!c->out || !c->err) die(r, "cannot open its stdout and stderr");
        setvbuf(c->err, NULL, _IONBF, 0);
    } else {
        c->in = s->devnull;
        c->out = fdopen(s->outfd[r], "w");
        c->err = fdopen(s->errfd[r], "w");
        if (!c->out || !c->err) die(r, "cannot open its stdout and stderr");
        setvbuf(c->err, NULL, _IONBF, 0);
    }
}

/* While rank c runs, bring into the cache what the next switch touches: c's
 * image, which take_data copies the live data out into, and the next ready
 * rank's image, copied in, with the top of its stack (where its registers and
 * the frames it returns through are), its warm range (its job), its slot and
 * its next arrival. With
 * thousands of ranks these are all cold by their next turn, and a switch
 * waited for them: at 1024 ranks take_data alone took 0.9-1.4 us a switch,
 * 0.15-0.2 us with this (one switch per message in an all-to-all). */
#define STACK_WARM 1024 /* bytes above a waiting rank's stack pointer */
static void prefetch_next(const sched *s, const ctx *c)
{
    for (size_t i = 0; c->image && i < s->image_bytes; i += 64)
        __builtin_prefetch(c->image + i, 1, 3);
    if (!s->rcount) return;
    const ctx *n = &s->c[s->ready[s->rhead]];
    for (size_t i = 0; n->image && i < s->image_bytes; i += 64)
        __builtin_prefetch(n->image + i, 0, 3);
    for (size_t i = 0; n->started && i < STACK_WARM; i += 64)
        __builtin_prefetch((const char *)n->sp + i, 1, 3);
    for (size_t i = 0; i < n->warm_len; i += 64) __builtin_prefetch(n->warm + i, 1, 3);
    cr_vt_prefetch_rank(s->hd, s->ready[s->rhead]);
}

/* Run rank r until it waits, yields or ends. */
static void run(sched *s, int r)
{
    ctx *c = &s->c[r];
    take_data(s, r);
    prefetch_next(s, c);
    if (!c->started) start(s, r);
    c->state = CTX_RUN;
    environ = c->env;
    stdin = c->in;
    stdout = c->out;
    stderr = c->err;
    s->cur = r;
    atomic_store_explicit(&s->hd->ctx_current, r, memory_order_relaxed);
    cr_ctx_swap(&s->sp, c->sp);
    atomic_store_explicit(&s->hd->ctx_current, -1, memory_order_relaxed);
    s->cur = -1;
    if (c->state != CTX_DONE) { /* what the rank made of them (setenv, freopen) */
        c->env = environ;
        c->in = stdin;
        c->out = stdout;
        c->err = stderr;
    }
    environ = s->env0;
    stdin = s->in0;
    stdout = s->out0;
    stderr = s->err0;
}

static void flush_all(sched *s)
{
    for (int r = 0; r < s->n; r++) {
        ctx *c = &s->c[r];
        if (!c->started || c->state == CTX_DONE) continue;
        if (c->out) fflush(c->out);
        if (c->err) fflush(c->err);
    }
    fflush(s->out0);
    fflush(s->err0);
}

/* Rank r ended: its status to the launcher, its resources back. */
static void ended(sched *s, int r)
{
    ctx *c = &s->c[r];
    cr_vt_slot *sl = cr_vt_slot_of(s->hd, r);
    atomic_store_explicit(&sl->exit_status, c->status, memory_order_relaxed);
    atomic_store_explicit(&sl->exited, 1, memory_order_release);
    s->live--;
    if (c->status != 0) { /* as its process's end would: the job ends */
        flush_all(s);
        _exit(c->status & 0xff ? c->status & 0xff : 1);
    }
    munmap(c->stack, c->stack_len);
    if (r != 0) { /* its streams stay open until the process ends, flushed: fclose
                   * unlinks a stream from libc's list of all of them by walking it
                   * (O(N^2) for the job), and a pipe that ends wakes the launcher,
                   * which polls every rank's (O(N) each: O(N^2) again) */
        fflush(c->out);
        fflush(c->err);
    }
    if (s->owner == r) s->owner = -2; /* nobody's: the next rank's replaces it as is */
    free(c->image);
    free(c->argv);
    free(c->rank_var);
    /* c->env stays: the rank's setenv may have made it libc's own array */
    c->image = NULL;
}

static _Noreturn void finish(int status)
{
    sched *s = the;
    ctx *c = &s->c[s->cur];
    if (!c->finishing) {
        c->finishing = true;
        while (c->natexit) c->atexit_fn[--c->natexit]();
    }
    fflush(stdout);
    fflush(stderr);
    c->status = status;
    c->state = CTX_DONE;
    cr_ctx_swap(&c->sp, s->sp);
    __builtin_unreachable();
}

static _Noreturn void ctx_entry(void)
{
    sched *s = the;
    ctx *c = &s->c[s->cur];
    finish(s->main_fn(s->argc, c->argv, c->env));
}

/* ---- the scheduler --------------------------------------------------------- */

/* Ranks the simulator queued (and, after a full queue, every waiting one). */
static bool take_woken(sched *s)
{
    bool any = false;
    int r;
    while ((r = cr_vt_wq_pop(s->hd)) >= 0)
        if (r < s->n && s->c[r].state == CTX_WAIT) make_ready(s, r), any = true;
    if (atomic_exchange(&s->hd->wq_lost, 0))
        for (r = 0; r < s->n; r++)
            if (s->c[r].state == CTX_WAIT) make_ready(s, r), any = true;
    return any;
}

static int schedule(sched *s)
{
    while (s->live) {
        int r = next_ready(s);
        if (r < 0) {
            if (take_woken(s)) continue;
            if (atomic_load(&s->hd->stopped)) { /* a deadlock, reported: the launcher ends us */
                flush_all(s);
                for (;;) pause();
            }
            cr_vt_host_idle(s->hd, &s->waiter);
            continue;
        }
        run(s, r);
        if (s->c[r].state == CTX_DONE) ended(s, r);
    }
    flush_all(s);
    return 0;
}

static int env_fd(const char *name)
{
    const char *v = getenv(name);
    char *end;
    long fd = v && *v ? strtol(v, &end, 10) : -1;
    return v && *v && !*end && fd >= 0 && fd < INT_MAX ? (int)fd : -1;
}

int cr_ctx_main(int argc, char **argv, char **envp, cr_main_fn *main_fn)
{
    const char *v = getenv("COURIER_SIM_CONTEXTS");
    if (!v || !CTX_SUPPORTED) return main_fn(argc, argv, envp);
    int n = atoi(v), simfd = env_fd("COURIER_SIM_FD");
    const char *fds = getenv("COURIER_CTX_FDS");
    sched *s = calloc(1, sizeof *s);
    if (n < 1 || simfd < 0 || !fds || !s) {
        fprintf(stderr, "courier: the ranks' process was started without its contexts' "
                        "settings; start the program with courier run\n");
        return 1;
    }
    s->n = n;
    s->c = calloc((size_t)n, sizeof *s->c);
    s->ready = calloc((size_t)n, sizeof *s->ready);
    s->outfd = calloc((size_t)n, sizeof *s->outfd);
    s->errfd = calloc((size_t)n, sizeof *s->errfd);
    if (!s->c || !s->ready || !s->outfd || !s->errfd) die(0, "out of memory for the contexts");
    s->outfd[0] = 1;
    s->errfd[0] = 2;
    s->mux = -1;
    const char *p = fds;
    if (!strncmp(fds, "mux:", 4)) { /* "mux:FD": ranks 1..n-1 write frames into FD */
        char *end;
        long m = strtol(fds + 4, &end, 10);
        if (end == fds + 4 || *end || m < 0) {
            fprintf(stderr,
                    "courier: COURIER_CTX_FDS=%s names no pipe; start the program "
                    "with courier run\n",
                    fds);
            return 1;
        }
        s->mux = (int)m;
    }
    for (int r = 1; r < n && s->mux < 0; r++) { /* "out,err,out,err...": ranks 1..n-1 */
        char *end;
        long o = strtol(p, &end, 10), e = -1;
        if (end != p && *end == ',') {
            const char *q = end + 1;
            e = strtol(q, &end, 10);
            if (end == q) e = -1;
        }
        if (o < 0 || e < 0 || (*end != ',' && *end) || (!*end && r != n - 1)) {
            fprintf(stderr,
                    "courier: COURIER_CTX_FDS names no stdout and stderr for rank %d; "
                    "start the program with courier run\n",
                    r);
            return 1;
        }
        s->outfd[r] = (int)o;
        s->errfd[r] = (int)e;
        p = end + 1;
    }
    s->main_fn = main_fn;
    s->argc = argc;
    s->argv = argv;
    s->env0 = envp;
    s->in0 = stdin;
    s->out0 = stdout;
    s->err0 = stderr;
    s->devnull = fopen("/dev/null", "r");
    s->owner = -1;
    s->cur = -1;
    s->live = n;
    struct rlimit rl;
    s->stack_bytes = getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                         ? (size_t)rl.rlim_cur
                         : 8u << 20;
    if (s->stack_bytes < (256u << 10)) s->stack_bytes = 256u << 10;
    if (s->stack_bytes > (64u << 20)) s->stack_bytes = 64u << 20;
    size_t total;
    if (cr_vt_probe(simfd, n, &total)) {
        fprintf(stderr,
                "courier: the simulator's segment is not this build's, or not for %d "
                "ranks; run the program with the courier of the libcourier it loads\n",
                n);
        return 1;
    }
    s->th = pthread_self();
    the = s; /* before the first copy: the same in every rank's */
    s->hd = shared_map(s, simfd, total);
    if (s->hd == MAP_FAILED) die(0, "cannot map the simulator's segment");
    dl_iterate_phdr(find_segs, s);
    if (!(s->first = malloc(s->image_bytes))) die(0, "out of memory for the globals");
    copy_out(s, s->first);
    for (int r = 0; r < n; r++) make_ready(s, r);
    return schedule(s);
}

/* ---- the calls ------------------------------------------------------------- */

bool cr_ctx_active(void)
{
    return the && the->cur >= 0;
}

void *cr_ctx_map(int fd, size_t len)
{
    if (cr_ctx_active()) return shared_map(the, fd, len);
    void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd); /* the mapping keeps the segment; no descriptor is left to leak */
    errno = e;
    return base;
}

void cr_ctx_unmap(void *base, size_t len)
{
    if (!cr_ctx_active()) munmap(base, len);
}

void cr_ctx_close_fd(int fd)
{
    if (!cr_ctx_active()) close(fd);
}

_Noreturn void cr_ctx_exit(int status)
{
    if (cr_ctx_active()) finish(status);
    exit(status);
}

_Noreturn void __wrap_exit(int status)
{
    cr_ctx_exit(status);
}

void cr_ctx_warm(const void *p, size_t len)
{
    if (!cr_ctx_active()) return;
    the->c[the->cur].warm = p;
    the->c[the->cur].warm_len = len;
}

void cr_ctx_atexit(void (*fn)(void))
{
    if (!cr_ctx_active()) {
        atexit(fn);
        return;
    }
    ctx *c = &the->c[the->cur];
    if (c->natexit == CTX_ATEXIT) {
        fprintf(stderr, "courier: rank %d: more than %d library exit handlers\n", the->cur,
                CTX_ATEXIT);
        _exit(1);
    }
    c->atexit_fn[c->natexit++] = fn;
}

/* A thread the program started (one the launcher could not see: a library's)
 * waits in courier: its rank's context is not its own to leave. */
static void own_thread(sched *s)
{
    if (pthread_equal(pthread_self(), s->th)) return;
    fprintf(s->err0,
            "courier: rank %d: a wait for the simulator from a thread of the program's own: the "
            "ranks run as contexts of one thread; run the program with --sim "
            "MACHINE,ranks=processes\n",
            s->cur);
    _exit(1);
}

void cr_ctx_wait(void)
{
    sched *s = the;
    own_thread(s);
    ctx *c = &s->c[s->cur];
    c->state = CTX_WAIT;
    cr_ctx_swap(&c->sp, s->sp);
}
