/* What a rank says when it dies of a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL) or aborts (SIGABRT:
 * abort(), a failed assert, the C library's "double free detected"): its rank, the
 * signal and the address, the MPI call it was in (the board's in_call) with what is likely
 * wrong, and the stack of the thread that got the signal, on its stderr; then it dies of the signal
 * as it would have (the launcher says "killed by SIGSEGV", a core is dumped where enabled).
 * COURIER_BACKTRACE=0 turns it off.
 *
 * Invariants: installed only over the default action (a handler of the program's, a
 * sanitizer's or a debugger's stays), once a process (the contexts of simulated mode share
 * it: the job is the running rank's, cr_the_job_ptr); the handler calls only
 * async-signal-safe functions and backtrace, which cr_crash_hook ran once already (its
 * first call loads libgcc_s, which allocates); SA_RESETHAND puts the default action back
 * before it runs, so a fault inside it ends the rank as the first one would have; it
 * runs on a stack of its own (sigaltstack, the thread that installs it: MPI_Init's), so
 * that the overflow of that thread's stack is reported as one. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "crash.h"
#include "engine.h"

static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
/* A fault this close below the stack pointer is the stack's guard page. */
#define STACK_NEAR (256u << 10)

typedef struct {
    char b[640];
    size_t n;
} line;

static void put(line *l, const char *s)
{
    while (*s && l->n < sizeof l->b) l->b[l->n++] = *s++;
}

static void put_num(line *l, uintptr_t v, unsigned base)
{
    char d[24];
    int k = 0;
    do {
        d[k++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v && k < (int)sizeof d);
    while (k && l->n < sizeof l->b) l->b[l->n++] = d[--k];
}

/* The faulting thread's stack pointer, where this machine's context says it. */
static uintptr_t fault_sp(const void *uc)
{
#if defined(__x86_64__)
    return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.sp;
#else
    (void)uc;
    return 0;
#endif
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    cr_job *job = __atomic_load_n(&cr_the_job_ptr, __ATOMIC_ACQUIRE);
    line l = {.n = 0};
    put(&l, "courier: rank ");
    if (job)
        put_num(&l, (uintptr_t)job->rank, 10);
    else
        put(&l, "?");
    put(&l, ": SIG");
    put(&l, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    if (sig == SIGSEGV || sig == SIGBUS) {
        put(&l, " at address 0x");
        put_num(&l, (uintptr_t)si->si_addr, 16);
        uintptr_t sp = fault_sp(uc), a = (uintptr_t)si->si_addr;
        if (sp && a < sp + 4096 && a + STACK_NEAR > sp)
            put(&l, " (next to the stack pointer: the stack overflowed; large local arrays go on "
                    "the heap, or raise the limit with ulimit -s)");
    }
    if (job && job->in_call) {
        put(&l, " inside ");
        put(&l, job->in_call);
        put(&l, ": an argument given to it (a buffer, count, datatype or handle) may not be "
                "what it should, or memory was overwritten before the call");
    }
    put(&l, "; the stack of the thread that got the signal:\n");
    int fd = stderr ? fileno(stderr) : 2; /* (a context's own stream, in simulated mode) */
    if (fd < 0) fd = 2;
    if (write(fd, l.b, l.n) < 0) return;
    void *pcs[48];
    int k = backtrace(pcs, 48);
    if (k > 2) /* from the frame that got the signal: not this handler, nor the kernel's return */
        backtrace_symbols_fd(pcs + 2, k - 2, fd);
    static const char hint[] = "courier: (addr2line -f -C -e FILE +OFFSET names a frame of a "
                               "FILE(+OFFSET) line above; build with -g for file and line)\n";
    if (write(fd, hint, sizeof hint - 1) < 0) return;
    /* A fault comes back when the instruction runs again, now to the default action; a
     * signal that was sent must be sent again (it stays blocked until we return). */
    if (si->si_code <= 0) raise(sig);
}

void cr_crash_hook(void)
{
    const char *e = getenv("COURIER_BACKTRACE");
    if (e && !strcmp(e, "0")) return;
    void *pc[1];
    backtrace(pc, 1); /* loads libgcc_s now, not in the handler */
    /* the handler's own stack, so that an overflow of this thread's is reported too
     * (kept for the process's life: the kernel holds its address, nothing else) */
    stack_t cur_alt;
    if (sigaltstack(NULL, &cur_alt) == 0 && (cur_alt.ss_flags & SS_DISABLE)) {
        size_t len = (size_t)sysconf(_SC_SIGSTKSZ) + (64u << 10);
        stack_t alt = {.ss_sp = malloc(len), .ss_size = len};
        if (alt.ss_sp && sigaltstack(&alt, NULL) != 0) free(alt.ss_sp);
    }
    for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++) {
        struct sigaction cur;
        if (sigaction(fatal_sigs[i], NULL, &cur) || (cur.sa_flags & SA_SIGINFO) ||
            cur.sa_handler != SIG_DFL)
            continue;
        struct sigaction sa = {.sa_sigaction = on_fault,
                               .sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK};
        sigemptyset(&sa.sa_mask);
        sigaction(fatal_sigs[i], &sa, NULL);
    }
}
