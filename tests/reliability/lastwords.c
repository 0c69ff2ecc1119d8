/* A rank's last words: every rank finishes MPI, prints one line to stdout and
 * one to stderr and exits 1 (NPB DT does this), one rank also writes 64 KiB in a
 * single write; lastwords.sh checks that all of it arrives, every time, before
 * the launcher's report.
 *   lastwords all    every rank writes and exits at once; rank 1 writes 64 KiB
 *   lastwords late   the others exit at once; rank 0 first waits until the
 *                    launcher has reaped them all (it has seen them fail), then
 *                    writes its lines and the 64 KiB
 * Invariant: the output is fixed (lastwords.sh knows it): "lastwords: rank R
 * stdout|stderr", and BIG_LINES lines "big R NNNN xxx..." then "big R end" with
 * no newline. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

enum { BIG_LINES = 1000, BIG_LINE = 64 };

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return;
        p += w;
        n -= (size_t)w;
    }
}

/* 64,000 bytes of numbered lines and an unfinished one, in one write(2). */
static void big_write(int me)
{
    static char buf[BIG_LINES * BIG_LINE + 64];
    size_t n = 0;
    for (int i = 0; i < BIG_LINES; i++) {
        int k = snprintf(buf + n, 32, "big %d %04d ", me, i);
        memset(buf + n + k, 'x', (size_t)(BIG_LINE - 1 - k));
        buf[n + BIG_LINE - 1] = '\n';
        n += BIG_LINE;
    }
    n += (size_t)snprintf(buf + n, 32, "big %d end", me);
    write_all(1, buf, n);
}

/* Has the launcher reaped this process (its parent too) yet? A zombie still counts. */
static int present(int pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int ppid = -1;
    if (fgets(line, sizeof line, f)) {
        char *p = strrchr(line, ')'); /* the name may hold spaces */
        if (p) sscanf(p + 1, " %*c %d", &ppid);
    }
    fclose(f);
    return ppid == (int)getppid(); /* else the pid was reused */
}

int main(int argc, char **argv)
{
    int me, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int late = argc > 1 && !strcmp(argv[1], "late");
    int *pids = malloc((size_t)n * sizeof *pids), pid = (int)getpid();
    MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Finalize();
    if (late && me == 0) {
        /* The others exit now; wait (bounded: a minute) until the launcher has
         * seen every one of them fail, so that it is deciding our fate. */
        struct timespec ms = {0, 1000000};
        for (int tries = 0; tries < 60000; tries++) {
            int left = 0;
            for (int r = 1; r < n; r++) left += present(pids[r]);
            if (!left) break;
            nanosleep(&ms, NULL);
        }
    }
    printf("lastwords: rank %d stdout\n", me);
    fprintf(stderr, "lastwords: rank %d stderr\n", me);
    if (me == (late ? 0 : 1 % n)) big_write(me);
    free(pids);
    exit(1);
}
