/* What this machine allows, measured without courier: the floors the
 * performance targets run into. Plain processes and shared memory only.
 *
 *   floors line      one cache line bounced between two processes: one-way time
 *                    (the latency floor of any shared-memory message passing)
 *   floors yield     sched_yield between processes bound to one CPU: time per
 *                    context switch
 *   floors ring [N]  N processes (default 8) bound round robin to the CPUs pass a
 *                    token through shared memory, waiting with sched_yield: time
 *                    per hop (the floor of an oversubscribed token ring)
 *   floors futex     two processes on one CPU hand a token back and forth with
 *                    futex wait/wake: one-way time
 * Output lines are "floor NAME VALUE us". Invariants: every child is waited for;
 * loops are bounded by their iteration counts. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    _Atomic long v;
    char pad[56];
} line;

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void bind_to(int k)
{
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all)) return;
    int n = CPU_COUNT(&all), want = k % n;
    CPU_ZERO(&one);
    for (int c = 0, i = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all) && i++ == want) CPU_SET(c, &one);
    sched_setaffinity(0, sizeof one, &one);
}

static line *shared(size_t n)
{
    line *l = mmap(NULL, n * sizeof *l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (l == MAP_FAILED) {
        perror("floors: mmap");
        exit(1);
    }
    memset(l, 0, n * sizeof *l);
    return l;
}

static void wait_children(void)
{
    while (wait(NULL) > 0) {
    }
}

/* One line each way: a writes v, b answers v. */
static void floor_line(void)
{
    line *l = shared(2);
    const long n = 2000000;
    if (fork() == 0) {
        for (long i = 1; i <= n; i++) {
            while (atomic_load_explicit(&l[0].v, memory_order_acquire) != i) relax();
            atomic_store_explicit(&l[1].v, i, memory_order_release);
        }
        _exit(0);
    }
    double t0 = now();
    for (long i = 1; i <= n; i++) {
        atomic_store_explicit(&l[0].v, i, memory_order_release);
        while (atomic_load_explicit(&l[1].v, memory_order_acquire) != i) relax();
    }
    printf("floor line %.3f us\n", (now() - t0) / (double)n / 2 * 1e6);
    wait_children();
}

static void floor_yield(void)
{
    const long n = 200000;
    bind_to(0);
    double t0 = now();
    if (fork() == 0) {
        for (long i = 0; i < n; i++) sched_yield();
        _exit(0);
    }
    for (long i = 0; i < n; i++) sched_yield();
    wait_children();
    printf("floor yield %.3f us\n", (now() - t0) / (double)(2 * n) * 1e6);
}

static void floor_ring(int np)
{
    line *l = shared((size_t)np + 1);
    const long n = 20000;
    int me = 0;
    for (int i = 1; i < np; i++)
        if (fork() == 0) {
            me = i;
            break;
        }
    bind_to(me);
    atomic_fetch_add(&l[np].v, 1);
    while (atomic_load(&l[np].v) < np) sched_yield(); /* everyone bound and here */
    double t0 = now();
    for (long it = 0; it < n; it++) {
        long want = it * np + me + 1;
        if (me || it)
            while (atomic_load_explicit(&l[me].v, memory_order_acquire) < want) sched_yield();
        atomic_store_explicit(&l[(me + 1) % np].v, want + 1, memory_order_release);
    }
    if (me) _exit(0);
    while (atomic_load_explicit(&l[0].v, memory_order_acquire) < n * np + 1) sched_yield();
    printf("floor ring%d %.3f us\n", np, (now() - t0) / (double)(n * np) * 1e6);
    wait_children();
}

static long futex(_Atomic long *a, int op, long v)
{
    return syscall(SYS_futex, (int *)a, op, (int)v, NULL, NULL, 0);
}

static void floor_futex(void)
{
    line *l = shared(1);
    const long n = 50000;
    bind_to(0);
    if (fork() == 0) {
        for (long i = 1; i <= n; i++) {
            while (atomic_load(&l[0].v) != 2 * i - 1) futex(&l[0].v, FUTEX_WAIT, 2 * i - 2);
            atomic_store(&l[0].v, 2 * i);
            futex(&l[0].v, FUTEX_WAKE, 1);
        }
        _exit(0);
    }
    double t0 = now();
    for (long i = 1; i <= n; i++) {
        atomic_store(&l[0].v, 2 * i - 1);
        futex(&l[0].v, FUTEX_WAKE, 1);
        while (atomic_load(&l[0].v) != 2 * i) futex(&l[0].v, FUTEX_WAIT, 2 * i - 1);
    }
    printf("floor futex %.3f us\n", (now() - t0) / (double)(2 * n) * 1e6);
    wait_children();
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(what, "line"))
        floor_line();
    else if (!strcmp(what, "yield"))
        floor_yield();
    else if (!strcmp(what, "ring"))
        floor_ring(argc > 2 && atoi(argv[2]) > 1 ? atoi(argv[2]) : 8);
    else if (!strcmp(what, "futex"))
        floor_futex();
    else {
        fprintf(stderr, "usage: floors line|yield|ring [N]|futex\n");
        return 2;
    }
    return 0;
}
