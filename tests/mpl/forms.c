/* The other spellings real MPL programs use, and the msgid rulings of
 * docs/mpl.md, on 2 tasks:
 *  - <mpproto.h> and the Fortran-binding names called from C, every argument
 *    by reference (mp_environ, mp_send/recv/wait/status, mp_bsend/brecv,
 *    mp_rcvncall with mp_lockrnc, mp_sync, mp_bcast, mp_combine);
 *  - lengths written in the caller's width: size_t and long variables, filled
 *    with a pattern first, hold the exact length afterwards (the upper half was
 *    left as it was before: TCGMSG's port read garbage lengths);
 *  - a nonblocking receive writes source and type back, into the addresses
 *    given when it was posted, when mpc_status sees it complete; that status
 *    retires the id (mpc_status says MPL_INACTIVE after, mpc_wait is an error
 *    naming it, -1 and MPL_EMSGID when errors return);
 *  - a receive-and-call handler that starts many operations while the task
 *    waits for another one (the id table grows under the wait). */
#include <stdint.h>
#include <string.h>

#include <mpproto.h>

#include "../check.h"

#define GARBAGE ((uint64_t)0xdeadbeefdeadbeefULL)
#define MANY 700

static int h_src, h_type, h_id, h_box[2], done_handler;
static int many_ids[MANY], many_box[MANY];

static void handler(int *msgid)
{
    size_t n = (size_t)GARBAGE;
    CHECK(mpc_wait(msgid, &n) == 0 && n == sizeof h_box, "handler wait: %zu", n);
    /* Many sends from the handler while task 0 waits in mpc_wait below. */
    for (int i = 0; i < MANY; i++) {
        many_box[i] = i;
        CHECK(mpc_send((char *)&many_box[i], sizeof(int), 1, 500, &many_ids[i]) == 0, "send %d", i);
    }
    done_handler = 1;
}

static void forms(int me)
{
    int n = 0, t = -1;
    CHECK(mp_environ(&n, &t) == 0 && n == 2 && t == me, "mp_environ %d %d", n, t);
    int len = 3 * (int)sizeof(int), other = 1 - me, type = 11, id = 0, nb = -5, v[3];
    if (me == 0) {
        int out[3] = {4, 5, 6};
        CHECK(mp_bsend(out, &len, &other, &type) == 0, "mp_bsend");
        CHECK(mp_send(out, &len, &other, &type, &id) == 0, "mp_send");
        CHECK(mp_wait(&id, &nb) == 0 && nb == len, "mp_wait of a send: %d", nb);
    } else {
        int src = DONTCARE, ty = 11;
        CHECK(mp_brecv(v, &len, &src, &ty, &nb) == 0 && nb == len && v[2] == 6, "mp_brecv");
        src = DONTCARE;
        CHECK(mp_recv(v, &len, &src, &ty, &id) == 0, "mp_recv");
        int st;
        while ((st = mp_status(&id)) == MPL_NOT_COMPLETED) {
        }
        CHECK(st == len && src == 0 && ty == 11 && v[0] == 4, "mp_status: %d src %d", st, src);
    }
    int gid = ALLGRP, root = 0, x = me ? 0 : 77;
    len = sizeof x;
    CHECK(mp_bcast(&x, &len, &root, &gid) == 0 && x == 77, "mp_bcast %d", x);
    int mine = me + 1, sum = 0;
    CHECK(mp_combine(&mine, &sum, &len, i_vadd, &gid) == 0 && sum == 3, "mp_combine %d", sum);
    int lock = 1, old = -1;
    CHECK(mp_lockrnc(&lock, &old) == 0 && old == 0, "mp_lockrnc old %d", old);
    lock = 0;
    CHECK(mp_lockrnc(&lock, &old) == 0 && old == 1, "mp_lockrnc back, old %d", old);
    CHECK(mp_sync(&gid) == 0, "mp_sync");
}

static void widths(int me)
{
    char buf[40];
    if (me == 0) {
        for (int k = 0; k < 4; k++) CHECK(mpc_bsend(buf, 24 + k, 1, 20 + k) == 0, "bsend");
        int src = 1, ty = 30;
        long lnb = (long)GARBAGE;
        CHECK(mpc_bsendrecv(buf, 5, 1, 31, buf, sizeof buf, &src, &ty, &lnb) == 0 && lnb == 6,
              "bsendrecv into a long: %lx", (unsigned long)lnb);
    } else {
        int src = 0, ty = 20;
        size_t znb = (size_t)GARBAGE;
        CHECK(mpc_brecv(buf, sizeof buf, &src, &ty, &znb) == 0 && znb == 24,
              "brecv into a size_t: %zx", znb);
        long lnb = (long)GARBAGE;
        ty = 21;
        while (mpc_probe(&src, &ty, &lnb) == 0 && lnb < 0) {
        }
        CHECK(lnb == 25, "probe into a long: %lx", (unsigned long)lnb);
        int id;
        ty = 21;
        CHECK(mpc_recv(buf, sizeof buf, &src, &ty, &id) == 0, "recv");
        uint64_t u = GARBAGE;
        CHECK(mpc_wait(&id, &u) == 0 && u == 25, "wait into a uint64_t: %llx",
              (unsigned long long)u);
        int inb = -7;
        ty = 22;
        CHECK(mpc_brecv(buf, sizeof buf, &src, &ty, &inb) == 0 && inb == 26, "int still works");
        ty = 23;
        CHECK(mpc_bvrecv(buf, 1, 27, 27, &src, &ty, &znb) == 0 && znb == 27, "bvrecv %zu", znb);
        ty = 31;
        CHECK(mpc_bsendrecv(buf, 6, 0, 30, buf, sizeof buf, &src, &ty, &znb) == 0 && znb == 5,
              "bsendrecv into a size_t %zu", znb);
    }
}

static void rulings(int me)
{
    int buf[2] = {0, 0};
    if (me == 1) {
        int v[2] = {8, 9};
        CHECK(mpc_bsend((char *)v, sizeof v, 0, 40) == 0, "bsend");
        return;
    }
    int src = DONTCARE, type = DONTCARE, id, nb;
    CHECK(mpc_recv((char *)buf, sizeof buf, &src, &type, &id) == 0, "recv");
    int st;
    while ((st = mpc_status(id)) == MPL_NOT_COMPLETED) {
    }
    CHECK(st == (int)sizeof buf, "status gave %d", st);
    CHECK(src == 1 && type == 40, "written back at completion: src %d type %d", src, type);
    CHECK(mpc_status(id) == MPL_INACTIVE, "a completed id is inactive");
    int one = 0;
    CHECK(mpc_task_set(&one, 1, MPL_SET_ERRORS_FATAL) == 0, "errors return");
    int again = id;
    nb = -1; /* one wait after status takes the count at once; a second is an error */
    CHECK(mpc_wait(&again, &nb) == 0 && nb == (int)sizeof buf, "wait after status: %d bytes", nb);
    CHECK(mpc_wait(&again, &nb) == -1 && mperrno == MPL_EMSGID, "second wait: mperrno %d", mperrno);
    one = 1;
    CHECK(mpc_task_set(&one, 1, MPL_SET_ERRORS_FATAL) == 0, "errors fatal again");
}

static void growth(int me)
{
    if (me == 1) {
        int box[2] = {1, 2};
        CHECK(mpc_bsend((char *)box, sizeof box, 0, 50) == 0, "trigger");
        for (int i = 0; i < MANY; i++) {
            int v = -1, src = 0, ty = 500, nb;
            CHECK(mpc_brecv((char *)&v, sizeof v, &src, &ty, &nb) == 0 && v == i, "many %d: %d", i,
                  v);
        }
        CHECK(mpc_bsend((char *)box, sizeof box, 0, 51) == 0, "release");
        return;
    }
    h_src = 1;
    h_type = 50;
    CHECK(mpc_rcvncall((char *)h_box, sizeof h_box, &h_src, &h_type, &h_id, handler) == 0, "rnc");
    int r[2], src = 1, ty = 51, id, nb;
    CHECK(mpc_recv((char *)r, sizeof r, &src, &ty, &id) == 0, "recv");
    CHECK(mpc_wait(&id, &nb) == 0 && nb == sizeof r, "wait while the handler posts %d", MANY);
    CHECK(done_handler, "the handler ran");
    int all = ALLMSG;
    CHECK(mpc_wait(&all, &nb) == 0, "wait for the handler's sends");
}

int main(void)
{
    int n, me;
    CHECK(mpc_environ(&n, &me) == 0 && n == 2, "run with 2 tasks");
    forms(me);
    widths(me);
    rulings(me);
    growth(me);
    CHECK(mpc_sync(ALLGRP) == 0, "sync");
    if (me == 0) printf("forms: mp_ names, length widths and msgid rulings ok\n");
    return 0;
}
