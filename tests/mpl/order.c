/* The two ordering properties of seed 003 ("Order") and its example1, on 2 tasks.
 *  1. a receive never takes a message while an earlier-sent message from the same
 *     source that it also matches is still unreceived;
 *  2. a receive never completes while an earlier-posted receive with the same
 *     source and type is still pending.
 * example1: a dontcare receive and a type-1 receive may take the two type-1
 * messages in either order, but between them they take both. */
#include <string.h>

#include <courier/mpl.h>

#include "../check.h"

#define N 60

static void property1(int me)
{
    int src, type, nbytes, v;
    if (me == 1) {
        for (int i = 0; i < N; i++) mpc_bsend((char *)&i, sizeof i, 0, 1 + i % 2);
        return;
    }
    /* all type-2 messages first (exact type): in the order sent */
    for (int i = 1; i < N; i += 2) {
        src = 1, type = 2;
        mpc_brecv((char *)&v, sizeof v, &src, &type, &nbytes);
        CHECK(v == i, "type 2: got message %d, wanted %d", v, i);
    }
    /* then the rest with a wildcard type: still in the order sent */
    for (int i = 0; i < N; i += 2) {
        src = DONTCARE, type = DONTCARE;
        mpc_brecv((char *)&v, sizeof v, &src, &type, &nbytes);
        CHECK(v == i && type == 1 && src == 1, "wildcard: got %d type %d, wanted %d", v, type, i);
    }
}

static void property2(int me)
{
    int src[N], type[N], id[N], v[N], nbytes;
    if (me == 1) {
        int go;
        src[0] = 0, type[0] = 3;
        mpc_brecv((char *)&go, sizeof go, &src[0], &type[0], &nbytes);
        for (int i = 0; i < N; i++) mpc_bsend((char *)&i, sizeof i, 0, 5);
        return;
    }
    for (int i = 0; i < N; i++) {
        src[i] = 1, type[i] = 5;
        mpc_recv((char *)&v[i], sizeof v[i], &src[i], &type[i], &id[i]);
    }
    mpc_bsend((char *)v, sizeof v[0], 1, 3);
    for (int i = N - 1; i >= 0; i--) { /* waiting in reverse changes nothing */
        mpc_wait(&id[i], &nbytes);
        CHECK(v[i] == i, "receive %d posted in order got message %d", i, v[i]);
    }
}

static void example1(int taskid)
{
    int source = 0, dest = 1, type, msgid, nbytes, a[10], b[10];
    int msglen = sizeof(a);
    if (taskid == source) {
        for (int i = 0; i < 10; i++) a[i] = 100 + i, b[i] = 200 + i;
        type = 1;
        mpc_bsend((char *)a, msglen, dest, type);
        mpc_bsend((char *)b, msglen, dest, type);
    } else if (taskid == dest) {
        type = DONTCARE;
        mpc_recv((char *)a, msglen, &source, &type, &msgid);
        type = 1;
        mpc_brecv((char *)b, msglen, &source, &type, &nbytes);
        mpc_wait(&msgid, &nbytes);
        CHECK(nbytes == msglen && type == 1 && source == 0, "example1 status");
        CHECK((a[0] == 100 && b[0] == 200) || (a[0] == 200 && b[0] == 100),
              "example1: a[0] %d b[0] %d: both messages must arrive, one each", a[0], b[0]);
        CHECK(a[9] - a[0] == 9 && b[9] - b[0] == 9, "example1 data");
    }
}

int main(void)
{
    int n, me;
    mpc_environ(&n, &me);
    CHECK(n == 2, "run with 2 tasks");
    property1(me);
    property2(me);
    example1(me);
    mpc_sync(ALLGRP);
    if (me == 0) printf("order: both MPL order properties and example1 hold\n");
    return 0;
}
