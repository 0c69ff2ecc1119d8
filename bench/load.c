/* A CPU-bound load for the "loaded machine" rows of bench/compare.sh: N
 * processes that compute without pause, as another user's job would, while a
 * benchmark runs beside them.
 *
 *   load N SECONDS   start N busy processes, unbound; end them after SECONDS,
 *                    or at once when this process gets SIGTERM or SIGINT
 * Invariants: the children end with the parent (PR_SET_PDEATHSIG) and are
 * waited for; nothing outlives SECONDS. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void busy(void)
{
    volatile unsigned long x = 0;
    for (;;) x++;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    int secs = argc > 2 ? atoi(argv[2]) : 60;
    if (n < 1 || n > 1024 || secs < 1) {
        fprintf(stderr, "usage: load N SECONDS (N busy processes, 1..1024)\n");
        return 2;
    }
    pid_t parent = getpid(), kids[1024];
    int made = 0;
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0) {
            perror("load: fork");
            break;
        }
        if (p == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(0);
            alarm((unsigned)secs + 1);
            busy();
        }
        kids[made++] = p;
    }
    /* SIGTERM/SIGINT only cut the sleep short; then the children are ended. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    struct timespec ts = {secs, 0};
    sigtimedwait(&set, NULL, &ts);
    for (int i = 0; i < made; i++) kill(kids[i], SIGKILL);
    while (wait(NULL) > 0) {
    }
    return 0;
}
