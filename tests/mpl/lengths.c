/* What real MPL programs built against IBM's <mpproto.h> pass, on 2 tasks:
 *  - mpc_bsendrecv with IBM's 8 arguments (one type for both messages, the
 *    source written back), next to courier's 9-argument form;
 *  - the Fortran binding's mp_ names called from C with long and size_t
 *    lengths (TCGMSG's port passes a size_t to mp_rcvncall): lengths going in
 *    are read in full, lengths coming back are written in full (variables
 *    filled with 0xdeadbeefdeadbeef first hold the exact length after);
 *  - with errors returning, a length variable of another width and an 8-byte
 *    length beyond INT_MAX give -1 and MPL_EINVAL, and nothing is sent. */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>

#include <mpproto.h>

#include "../check.h"

#define GARBAGE ((uint64_t)0xdeadbeefdeadbeefULL)

static atomic_int fired;
static int h_src, h_type, h_id, h_box[3];

static void handler(int *msgid)
{
    size_t n = (size_t)GARBAGE;
    CHECK(mpc_wait(msgid, &n) == 0 && n == sizeof h_box, "wait in the handler: %zx", n);
    fired = 1;
}

/* IBM's form: both tasks exchange with one type; source in (selector) and out. */
static void bsendrecv8(int me)
{
    int out[3] = {me, me + 10, me + 20}, in[4] = {-1, -1, -1, -1}, other = 1 - me;
    int src = other;
    size_t nb = (size_t)GARBAGE;
    CHECK(mpc_bsendrecv(out, sizeof out, other, 60, in, sizeof in, &src, &nb) == 0,
          "8-argument bsendrecv");
    CHECK(nb == sizeof out && src == other && in[2] == other + 20, "got %zx bytes from %d", nb,
          src);
    src = DONTCARE;
    int inb = -1;
    CHECK(mpc_bsendrecv(out, 4, other, 61, in, sizeof in, &src, &inb) == 0 && inb == 4 &&
              src == other && in[0] == other,
          "8-argument bsendrecv, any source, int nbytes: %d from %d", inb, src);
}

/* The mp_ names with long and size_t lengths, as real C callers pass them. */
static void wide_mp(int me)
{
    int other = 1 - me, type = 70, id = 0;
    int v[3] = {7, 8, 9}, r[3] = {0, 0, 0};
    if (me == 0) {
        long len = sizeof v;
        CHECK(mp_bsend(v, &len, &other, &type) == 0, "mp_bsend with a long length");
        size_t slen = 2 * sizeof(int);
        type = 71;
        CHECK(mp_send(v, &slen, &other, &type, &id) == 0, "mp_send with a size_t length");
        uint64_t nb = GARBAGE;
        CHECK(mp_wait(&id, &nb) == 0 && nb == slen, "mp_wait of a send: %llx",
              (unsigned long long)nb);
        type = 72; /* for task 1's receive-and-call */
        len = sizeof v;
        CHECK(mp_bsend(v, &len, &other, &type) == 0, "mp_bsend for the handler");
        type = 74;
        CHECK(mp_bsend(v, &len, &other, &type) == 0, "mp_bsend after it");
        size_t s1 = sizeof v, r1 = sizeof r, n1 = (size_t)GARBAGE;
        int src = other, st = 73, rt = 73;
        CHECK(mp_bsendrecv(v, &s1, &other, &st, r, &r1, &src, &rt, &n1) == 0 && n1 == sizeof r &&
                  r[1] == 8,
              "mp_bsendrecv with size_t lengths: %zx", n1);
        return;
    }
    size_t len = sizeof r, nb = (size_t)GARBAGE;
    int src = DONTCARE, ty = 70;
    CHECK(mp_brecv(r, &len, &src, &ty, &nb) == 0 && nb == sizeof v && r[2] == 9 && src == 0,
          "mp_brecv into a size_t: %zx", nb);
    long lnb = (long)GARBAGE;
    ty = 71;
    while (mp_probe(&src, &ty, &lnb) == 0 && lnb < 0) {
    }
    CHECK(lnb == 2 * sizeof(int), "mp_probe into a long: %lx", (unsigned long)lnb);
    long llen = sizeof r;
    CHECK(mp_recv(r, &llen, &src, &ty, &id) == 0, "mp_recv with a long length");
    uint64_t wnb = GARBAGE;
    CHECK(mp_wait(&id, &wnb) == 0 && wnb == 2 * sizeof(int), "mp_wait into a uint64_t: %llx",
          (unsigned long long)wnb);
    /* TCGMSG: static size_t len_buf; mp_rcvncall(buf, &len_buf, &node, &htype, &msgid, h) */
    size_t len_buf = sizeof h_box;
    h_src = DONTCARE;
    h_type = 72;
    CHECK(mp_rcvncall(h_box, &len_buf, &h_src, &h_type, &h_id, handler) == 0, "mp_rcvncall");
    int z[3];
    ty = 74;
    CHECK(mpc_brecv((char *)z, sizeof z, &src, &ty, &nb) == 0, "brecv after the handler's");
    while (!fired) {
    }
    CHECK(h_src == 0 && h_type == 72 && h_box[0] == 7, "handler's message: from %d type %d", h_src,
          h_type);
    int back[3] = {0, 0, 0}, from = 0, dest = 0, st = 73, rt = 73;
    size_t s1 = sizeof r, r1 = sizeof back, n1 = (size_t)GARBAGE;
    CHECK(mp_bsendrecv(r, &s1, &dest, &st, back, &r1, &from, &rt, &n1) == 0 && n1 == sizeof back &&
              back[2] == 9,
          "mp_bsendrecv with size_t lengths: %zx", n1);
}

/* Errors returning: another width, and an 8-byte length beyond INT_MAX. */
static void width_errors(int me)
{
    int zero = 0, one = 1, other = 1 - me, type = 80, src = other;
    char buf[8] = {0};
    CHECK(mpc_task_set(&zero, 1, MPL_SET_ERRORS_FATAL) == 0, "errors return");
    short sn = 5;
    mperrno = 0;
    CHECK(mpc_brecv(buf, sizeof buf, &src, &type, &sn) == -1 && mperrno == MPL_EINVAL && sn == 5,
          "a 2-byte nbytes: mperrno %d", mperrno);
    size_t huge = (size_t)INT_MAX + 1;
    mperrno = 0;
    CHECK(mp_bsend(buf, &huge, &other, &type) == -1 && mperrno == MPL_EINVAL,
          "a length beyond INT_MAX: mperrno %d", mperrno);
    CHECK(mpc_task_set(&one, 1, MPL_SET_ERRORS_FATAL) == 0, "errors fatal again");
    /* Nothing was sent: the next message of type 80 is the one below. */
    CHECK(mpc_bsend(buf, 3, other, 80) == 0, "bsend");
    int nb = -1;
    src = other;
    CHECK(mpc_brecv(buf, sizeof buf, &src, &type, &nb) == 0 && nb == 3, "only the real one: %d",
          nb);
}

int main(void)
{
    int n, me;
    CHECK(mpc_environ(&n, &me) == 0 && n == 2, "run with 2 tasks");
    bsendrecv8(me);
    wide_mp(me);
    width_errors(me);
    CHECK(mpc_sync(ALLGRP) == 0, "sync");
    if (me == 0) printf("lengths: 8-argument bsendrecv and wide mp_ lengths ok\n");
    return 0;
}
