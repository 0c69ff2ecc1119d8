/* Receive-and-call: the handler runs when the message arrives, also while the
 * task computes; source and type are written back before it runs; it may wait
 * for its own msgid and post the next rcvncall (as TCGMSG does); mpc_lockrnc
 * holds handlers back in a critical section. */
#include <stdatomic.h>
#include <time.h>

#include <courier/mpl.h>

#include "../check.h"

static atomic_int fired;
static int h_src = DONTCARE, h_type = 9, h_id, h_nbytes, box[4];
static void handler(int *msgid);

static void post(void)
{
    h_src = DONTCARE;
    h_type = 9;
    CHECK(mpc_rcvncall((char *)box, sizeof box, &h_src, &h_type, &h_id, handler) == 0, "rcvncall");
}

static void handler(int *msgid)
{
    CHECK(*msgid == h_id, "handler got msgid %d, posted %d", *msgid, h_id);
    CHECK(h_src == 1 && h_type == 9, "written back before the handler: src %d type %d", h_src,
          h_type);
    CHECK(mpc_wait(msgid, &h_nbytes) == 0 && h_nbytes == sizeof box, "wait in handler");
    int n = ++fired;
    if (n < 2) post(); /* the third one is posted by main, while locked */
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int compute_until(int want, double limit)
{
    double t0 = now();
    volatile double x = 1;
    while (fired < want && now() - t0 < limit) x = x * 1.0000001 + 1e-9;
    return fired >= want;
}

int main(void)
{
    int n, me, src, type, nbytes, v[4] = {1, 2, 3, 4}, old;
    mpc_environ(&n, &me);
    CHECK(n == 2, "run with 2 tasks");
    if (me == 1) {
        for (int k = 0; k < 3; k++) {
            src = 0, type = 1;
            mpc_brecv((char *)v, 0, &src, &type, &nbytes); /* go */
            v[3] = 40 + k;
            mpc_bsend((char *)v, sizeof v, 0, 9);
        }
        src = 0, type = 2;
        mpc_brecv((char *)v, 0, &src, &type, &nbytes);
        return 0;
    }
    post();
    for (int k = 0; k < 2; k++) {
        mpc_bsend(NULL, 0, 1, 1);
        CHECK(compute_until(k + 1, 30), "handler %d did not run while computing", k + 1);
        CHECK(box[3] == 40 + k, "box %d", box[3]);
    }
    CHECK(mpc_lockrnc(1, &old) == 0 && old == 0, "lockrnc");
    post();
    mpc_bsend(NULL, 0, 1, 1);
    CHECK(!compute_until(3, 0.5), "handler ran while locked");
    CHECK(mpc_lockrnc(0, &old) == 0 && old == 1, "unlock");
    CHECK(compute_until(3, 30), "handler did not run after unlock");
    CHECK(box[3] == 42, "third message");
    mpc_bsend(NULL, 0, 1, 2);
    printf("rnc: handlers ran while computing; lockrnc held them back\n");
    return 0;
}
