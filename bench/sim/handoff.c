/* The floor of a simulated run's speed on this machine: what it costs to pass the
 * CPU from one waiting party to the next, with nothing else done. N parties (processes,
 * or threads of one process) form a ring; a token goes round LAPS times; each party
 * waits on its own futex word, wakes the next one's and waits again. No courier code:
 * under `courier run --sim`, every message that a waiting rank needs costs at least
 * one such hand-off between rank processes (bench/results/sim.md).
 *
 *   handoff procs|threads N LAPS     prints "N procs|threads: US us per hand-off"
 * Build: cc -O2 -pthread bench/sim/handoff.c -o handoff */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORD_STRIDE 16 /* one cache line per party */

static _Atomic unsigned *words;
static int n, laps, private_futex;

static void party(int r)
{
    _Atomic unsigned *me = &words[r * WORD_STRIDE], *next = &words[((r + 1) % n) * WORD_STRIDE];
    int wait_op = private_futex ? FUTEX_WAIT_PRIVATE : FUTEX_WAIT;
    int wake_op = private_futex ? FUTEX_WAKE_PRIVATE : FUTEX_WAKE;
    for (unsigned lap = 0; lap < (unsigned)laps; lap++) {
        unsigned need = r == 0 ? lap : lap + 1, v; /* rank 0 starts each lap */
        while ((v = atomic_load(me)) < need) syscall(SYS_futex, me, wait_op, v, NULL, NULL, 0);
        atomic_fetch_add(next, 1);
        syscall(SYS_futex, next, wake_op, 1, NULL, NULL, 0);
    }
}

static void *thread_main(void *arg)
{
    party((int)(long)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "procs") && strcmp(argv[1], "threads")) ||
        (n = atoi(argv[2])) < 2 || (laps = atoi(argv[3])) < 1) {
        fprintf(stderr, "usage: handoff procs|threads N LAPS   (N >= 2, LAPS >= 1)\n");
        return 2;
    }
    int threads = !strcmp(argv[1], "threads");
    private_futex = threads;
    size_t bytes = (size_t)n * WORD_STRIDE * sizeof(unsigned);
    words = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    if (words == MAP_FAILED || !th) {
        perror("handoff");
        return 1;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int r = 0; r < n; r++) {
        if (threads) {
            if (pthread_create(&th[r], NULL, thread_main, (void *)(long)r)) {
                perror("pthread_create");
                return 1;
            }
        } else {
            pid_t pid = fork();
            if (pid < 0) {
                perror("fork");
                return 1;
            }
            if (pid == 0) {
                party(r);
                _exit(0);
            }
        }
    }
    if (threads)
        for (int r = 0; r < n; r++) pthread_join(th[r], NULL);
    else
        while (wait(NULL) > 0) {
        }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    printf("%d %s: %.2f us per hand-off\n", n, argv[1], s / ((double)n * laps) * 1e6);
    free(th);
    return 0;
}
