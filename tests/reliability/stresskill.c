/* A rank killed in the middle of heavy traffic (tests/expect.sh
 * --kill-rank-when-ready): every node sends MSGS messages of random sizes
 * (mostly small, some past the eager limit) to random nodes while receiving
 * whatever comes. One node, the victim (chosen from the launcher's pid, so it
 * varies from run to run), stops when half its messages are sent, writes its
 * pid to $COURIER_TEST_KILL_FILE and waits, outside any communication call, to
 * be killed. Invariant: the job cannot end before the kill, whatever the
 * machine's speed: the victim never returns, and the others, once their own
 * sends are done, wait for the messages it will never send and in gsync, which
 * it never joins. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../check.h"

enum { MSGS_DEFAULT = 12500, WINDOW = 32, MAXSZ = 70000 };

static uint64_t rng_state;
static uint32_t rnd(void)
{
    return test_rand(&rng_state);
}

static long pick_size(void)
{
    return test_msg_size(&rng_state, 8, MAXSZ);
}

static char rbuf[MAXSZ];
static long got; /* messages received */

static void drain(void)
{
    while (iprobe(-1)) {
        crecv(-1, rbuf, sizeof rbuf);
        got++;
    }
}

/* Tell expect.sh which process to kill: the file appears whole (rename). */
static void ready_to_die(void)
{
    const char *path = getenv("COURIER_TEST_KILL_FILE");
    CHECK(path && *path, "COURIER_TEST_KILL_FILE is not set; run me with tests/expect.sh "
                         "--kill-rank-when-ready");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    CHECK(f && fprintf(f, "%d\n", (int)getpid()) > 0 && fclose(f) == 0 && rename(tmp, path) == 0,
          "cannot write %s", path);
    for (;;) pause(); /* not blocked in a call: the hang watchdog leaves us alone */
}

int main(int argc, char **argv)
{
    long me = mynode(), n = numnodes();
    long msgs = argc > 1 && atol(argv[1]) > 0 ? atol(argv[1]) : MSGS_DEFAULT;
    /* Every rank of a job on one host has the launcher as parent; across hosts
     * the test names the victim (each host's ranks have their own agent). */
    const char *named = getenv("COURIER_TEST_VICTIM");
    long victim = (named ? atol(named) : (long)getppid()) % n;
    /* How many messages each node will get: replay every sender's plan. */
    long want = 0;
    for (long s = 0; s < n; s++) {
        rng_state = 12345 + (uint64_t)s * 777;
        for (long i = 0; i < msgs; i++) {
            long dst = rnd() % n;
            rnd();
            pick_size();
            want += dst == me;
        }
    }
    rng_state = 12345 + (uint64_t)me * 777;
    static char sbuf[WINDOW][MAXSZ];
    long ids[WINDOW] = {0};
    for (long i = 0; i < msgs; i++) {
        if (me == victim && i == msgs / 2) ready_to_die();
        long dst = rnd() % n, type = rnd() % 31, size = pick_size();
        int slot = (int)(i % WINDOW);
        if (ids[slot])
            while (!msgdone(ids[slot])) drain();
        for (long k = 0; k < size; k++) sbuf[slot][k] = (char)pattern(me, i, (size_t)k);
        ids[slot] = isend(type, sbuf[slot], size, dst, 0);
        drain();
    }
    for (int s = 0; s < WINDOW; s++)
        if (ids[s])
            while (!msgdone(ids[s])) drain();
    /* The rest of the victim's messages never come, and it never joins gsync:
     * this waits until the launcher ends the job. */
    for (; got < want; got++) crecv(-1, rbuf, sizeof rbuf);
    gsync();
    fprintf(stderr, "stresskill: rank %ld: the victim (rank %ld) was not killed\n", me, victim);
    return 3;
}
