/* The scheduling policies of this process's threads, for tests of the
 * progress thread (src/core/progress.c): how many threads of this process have
 * policy `policy` now (SCHED_OTHER, SCHED_BATCH, ...), read from /proc/self/task. */
#ifndef COURIER_TEST_THREADS_H
#define COURIER_TEST_THREADS_H
#include <dirent.h>
#include <sched.h>
#include <stdlib.h>

static inline int test_threads_with_policy(int policy)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        int tid = atoi(e->d_name);
        if (tid > 0 && sched_getscheduler(tid) == policy) n++;
    }
    closedir(d);
    return n;
}
#endif
