/* Interrupt-driven receive: a handler runs while the program computes (never
 * calling the library), and masktrap holds handlers back in a critical section. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "../check.h"
#include "../threads.h"

static atomic_long fired, h_type, h_count, h_node;
static long box[4];

static void handler(long type, long count, long node, long pid)
{
    CHECK(pid == 0, "pid %ld", pid);
    h_type = type;
    h_count = count;
    h_node = node;
    fired++;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Compute (no library calls) until the handler has fired 'want' times, at most 30 s. */
static int compute_until(long want, double limit)
{
    double t0 = now();
    volatile double x = 1;
    while (fired < want && now() - t0 < limit) x = x * 1.0000001 + 1e-9;
    return fired >= want;
}

int main(void)
{
    long me = mynode();
    CHECK(numnodes() == 2, "run with 2 nodes");
    if (me == 1) {
        long v[4] = {11, 22, 33, 44};
        crecv(1, (char *)v, 0); /* go: node 0 has posted its hrecv */
        csend(9, (char *)v, sizeof v, 0, 0);
        crecv(2, (char *)v, 0); /* go: node 0 is masked */
        csend(10, (char *)v, sizeof v, 0, 0);
        crecv(3, (char *)v, 0);
        return 0;
    }
    hrecv(9, (char *)box, sizeof box, handler);
    csend(1, NULL, 0, 1, 0);
    CHECK(compute_until(1, 30), "handler did not run while computing");
    /* handlers run like interrupts: their thread is no batch thread */
    CHECK(test_threads_with_policy(SCHED_BATCH) == 0, "the handlers' thread is SCHED_BATCH");
    CHECK(h_type == 9 && h_count == sizeof box && h_node == 1 && box[3] == 44,
          "handler saw type %ld count %ld node %ld", (long)h_type, (long)h_count, (long)h_node);

    CHECK(masktrap(1) == 0, "masktrap should report unmasked");
    hrecv(10, (char *)box, sizeof box, handler);
    csend(2, NULL, 0, 1, 0);
    CHECK(!compute_until(2, 0.5), "handler ran while masked");
    CHECK(masktrap(0) == 1, "masktrap should report masked");
    CHECK(compute_until(2, 30), "handler did not run after unmask");
    CHECK(h_type == 10, "second handler type %ld", (long)h_type);
    csend(3, NULL, 0, 1, 0);
    printf("hrecv: handlers ran while computing; masktrap held them back\n");
    return 0;
}
