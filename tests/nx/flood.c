/* Flow control: node 0 floods node 1 with 100 MB of small messages while node 1
 * is inside the library (probing for a message of another type), so that every
 * message reaching it is unexpected and its to hold. Node 1 must hold no more
 * than its unexpected-message budget (BUDGET bytes, the first argument: the
 * test's own figure, which COURIER_UNEXPECTED_LIMIT must give the library), node
 * 0 must be made to wait (it cannot finish before node 1 starts taking
 * messages), and nothing may be lost.
 *   flood BUDGET
 * Node 1's growth is its peak resident memory (ru_maxrss) over what it had
 * before the flood: first it probes until it holds half the budget (the flood
 * does arrive unexpected: else the test would say nothing), then for 1.5 s
 * more, a probe every 0.5 ms (the sender gets the CPU between them): long
 * enough for a budget not enforced to let tens of megabytes in (it stops as
 * soon as the growth passes the limit). The growth must stay under the budget
 * and a slack for the transport's buffers (SLACK_KIB). */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

enum { N = 100000, SZ = 1000, SLACK_KIB = 8192 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long peak_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    long me = mynode();
    CHECK(numnodes() == 2, "run with 2 nodes");
    CHECK(argc > 1 && atol(argv[1]) >= (1L << 20) && atol(argv[1]) <= (long)N * SZ / 4,
          "give the budget in bytes, 1 MiB to a quarter of the %d MB flood", N * SZ >> 20);
    long budget_kib = atol(argv[1]) / 1024;
    char buf[SZ];
    long go = 0;
    if (me == 0) {
        crecv(3, (char *)&go, sizeof go); /* node 1 has its baseline */
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
    long base = peak_kib();
    csend(3, (char *)&go, sizeof go, 0, 0);
    double t0 = now();
    while (peak_kib() - base < budget_kib / 2) {
        CHECK(!iprobe(2), "a message of type 2 came: none is sent");
        CHECK(now() - t0 < 60,
              "node 1 grew by %ld KiB in 60 s of probing, under half its %ld KiB budget: the "
              "flood does not arrive unexpected",
              peak_kib() - base, budget_kib);
    }
    double t1 = now();
    long grown = 0;
    while (now() - t1 < 1.5 && grown <= budget_kib + SLACK_KIB) {
        CHECK(!iprobe(2), "a message of type 2 came: none is sent");
        grown = peak_kib() - base;
        usleep(500); /* the sender's turn, on a busy machine */
    }
    CHECK(grown <= budget_kib + SLACK_KIB,
          "node 1 grew by %ld KiB holding unexpected messages: over its budget of %ld KiB (and "
          "%d KiB for the transport): the budget is not enforced",
          grown, budget_kib, SLACK_KIB);
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
            CHECK(sent > woke, "the sender finished before the receiver took a message: no flow "
                               "control");
        }
    }
    grown = peak_kib() - base;
    CHECK(grown <= budget_kib + SLACK_KIB, "node 1 grew by %ld KiB: over its budget of %ld KiB",
          grown, budget_kib);
    printf("flood: %d messages (%d MB) kept in order; receiver grew %ld KiB for a %ld KiB budget\n",
           N, N * SZ >> 20, grown, budget_kib);
    return 0;
}
