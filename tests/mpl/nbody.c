/* MPL patterns of real SP2 programs (an N-body code's MPL layer, TCGMSG):
 *  1. mpc_wait on an id that mpc_status already reported complete returns at
 *     once with its length (`if (mpc_status(id) >= 0) mpc_wait(&id, &n)`);
 *  2. a receive with a given source and type posted with pointers to locals of
 *     a function that returns before it completes: nothing is written through
 *     them afterwards (only wildcards are written back), so the stack that
 *     reuses their place keeps its contents;
 *  3. poll-only use, never a wait: 100,000 messages, each id polled with
 *     mpc_status until complete, and the ids never run out.
 * Task 1 sends; task 0 receives and checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpproto.h>

#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "FAIL task %d: ", me);                                                 \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int me;
static char rbuf[64];

/* Posts a receive whose source and type live on this frame, and returns. */
static __attribute__((noinline)) int post_from_locals(int from, int type)
{
    int src = from, typ = type, id;
    mpc_recv(rbuf, sizeof rbuf, &src, &typ, &id);
    return id;
}

/* Fills a frame like post_from_locals' with a pattern; 1 when it is intact
 * after 'id' completed meanwhile. */
static __attribute__((noinline)) int frame_kept(int id)
{
    volatile int canary[64];
    for (int i = 0; i < 64; i++) canary[i] = 0x5a5a0000 + i;
    int n;
    mpc_wait(&id, &n);
    for (int i = 0; i < 64; i++)
        if (canary[i] != 0x5a5a0000 + i) return 0;
    return n == 10;
}

int main(int argc, char **argv)
{
    int ntasks, n, id, src, type;
    long polls = argc > 1 ? atol(argv[1]) : 100000;
    mpc_environ(&ntasks, &me);
    char buf[64] = "0123456789";
    if (me == 1) {
        mpc_bsend(buf, 10, 0, 1); /* 1 */
        mpc_bsend(buf, 10, 0, 2); /* 2 */
        for (long i = 0; i < polls; i++) mpc_bsend(buf, 8, 0, 3);
    } else if (me == 0) {
        src = DONTCARE, type = 1;
        mpc_recv(rbuf, sizeof rbuf, &src, &type, &id);
        while (mpc_status(id) == MPL_NOT_COMPLETED) {
        }
        int got = -1;
        CHECK(mpc_wait(&id, &got) == 0 && got == 10, "wait after status: %d bytes", got);
        CHECK(src == 1, "a wildcard source is written back (%d)", src);
        id = post_from_locals(1, 2);
        CHECK(frame_kept(id), "the receive wrote through pointers to a returned frame");
        for (long i = 0; i < polls; i++) {
            src = 1, type = 3;
            mpc_recv(rbuf, sizeof rbuf, &src, &type, &id);
            while ((n = mpc_status(id)) == MPL_NOT_COMPLETED) {
            }
            CHECK(n == 8, "poll %ld: status %d", i, n);
        }
        printf("nbody patterns ok: %ld polled messages\n", polls);
    }
    mpc_sync(ALLGRP);
    return 0;
}
