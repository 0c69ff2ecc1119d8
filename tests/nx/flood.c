/* Flow control: node 0 floods node 1 with more small messages than node 1's
 * unexpected-message budget (COURIER_UNEXPECTED_LIMIT) while node 1 sleeps.
 * Node 0 must be made to wait (it cannot finish before node 1 starts taking
 * messages), node 1's memory must stay bounded, and nothing may be lost. */
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

enum { N = 100000, SZ = 1000 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    long me = mynode();
    CHECK(numnodes() == 2, "run with 2 nodes");
    char buf[SZ];
    if (me == 0) {
        for (long i = 0; i < N; i++) {
            memset(buf, (int)(i & 0xff), sizeof buf);
            memcpy(buf, &i, sizeof i);
            if (i == N - 1) {
                double t = now();
                memcpy(buf + 8, &t, sizeof t);
            }
            csend(1, buf, sizeof buf, 1, 0);
        }
        return 0;
    }
    sleep(1);
    double woke = now();
    for (long i = 0; i < N; i++) {
        crecv(1, buf, sizeof buf);
        long seq;
        memcpy(&seq, buf, sizeof seq);
        CHECK(seq == i, "message %ld arrived as %ld", i, seq);
        CHECK(buf[SZ - 1] == (char)(i & 0xff), "body of message %ld", i);
        if (i == N - 1) {
            double sent;
            memcpy(&sent, buf + 8, sizeof sent);
            CHECK(sent > woke, "the sender finished before the receiver woke: no flow control");
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    CHECK(ru.ru_maxrss < 64 * 1024, "receiver grew to %ld KiB for %d KiB of messages", ru.ru_maxrss,
          N * SZ / 1024);
    printf("flood: %d messages (%d MB) kept in order; receiver peak %ld KiB\n", N, N * SZ >> 20,
           ru.ru_maxrss);
    return 0;
}
