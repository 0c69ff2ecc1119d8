/* The Paragon's underscore forms and the iPSC/860's force types, on 2+ nodes:
 * each underscore call moves the same data as the plain one; a bad argument
 * returns -1 with errno EINVAL and the job goes on (nothing was sent: the next
 * message is the right one); a message longer than the buffer returns -1 with
 * EMSGSIZE, cut to fit, from _crecv, _crecvx and an _irecv's _msgwait and
 * _msgdone; typesel -1 does not select a force type, which an exact type and
 * a receive posted first do; myhost() is no node's number, and a message to it
 * reaches node 0; _hwclock counts 200 ns ticks of dclock's clock. Node 0 and
 * node 1 talk; the others check their own errors. */
#include <errno.h>
#include <string.h>

#include "../check.h"

#define BAD(call, err)                                                                             \
    do {                                                                                           \
        errno = 0;                                                                                 \
        long rc_ = (call);                                                                         \
        CHECK(rc_ == -1 && errno == (err), "%s returned %ld, errno %d (%s)", #call, rc_, errno,    \
              strerror(errno));                                                                    \
    } while (0)

static void bad_arguments(void)
{
    char b[8] = {0};
    long info[8];
    BAD(_csend(-3, b, 1, 1, 0), EINVAL);
    BAD(_csend(1, b, -5, 0, 0), EINVAL);
    BAD(_csend(1, b, 1, numnodes() + 5, 0), EINVAL);
    BAD(_csend(1, NULL, 4, 0, 0), EINVAL);
    BAD(_isend(1, b, 1, -1, 0), EINVAL); /* isend has no "all others" */
    BAD(_crecv(1, b, -1), EINVAL);
    BAD(_irecv(1, NULL, 8), EINVAL);
    BAD(_crecvx(1, b, 8, numnodes() + 1, -1, info), EINVAL);
    BAD(_irecvx(1, b, 8, 0, -5, info), EINVAL);
    BAD(_cprobex(1, 77777, -1, info), EINVAL);
    BAD(_iprobe(-2147483648L), EINVAL); /* a mask that selects no type */
    BAD(_msgwait(123456789), EINVAL);
    BAD(_msgdone(-4), EINVAL);
    BAD(_msgcancel(0), EINVAL);
    BAD(_csendx(1, b, 1, -7, 0, info), EINVAL);
    BAD(_isendx(-1 - (1L << 40), b, 1, 0, 0, info), EINVAL);
    /* still usable after all that: the lock and the call state were left */
    CHECK(_iprobe(424242) == 0, "a probe of a type nobody sends found one");
}

int main(void)
{
    long me = mynode(), n = numnodes();
    CHECK(n >= 2, "needs 2 nodes, has %ld", n);
    CHECK(myhost() < 0 || myhost() >= n, "myhost() %ld is a node's number", myhost());
    bad_arguments();
    unsigned long t0[2], t1[2]; /* taken outside the two dclocks: no shorter span */
    _hwclock(t0);
    double d0 = _dclock(), d1;
    while ((d1 = _dclock()) - d0 < 1e-3) CHECK(_flick() == 0, "_flick");
    _hwclock(t1);
    double ticks = ((double)t1[1] - (double)t0[1]) * 4294967296.0 + ((double)t1[0] - (double)t0[0]);
    CHECK(t0[0] <= 0xffffffffUL && t1[0] <= 0xffffffffUL && ticks * 200e-9 >= d1 - d0 - 400e-9,
          "_hwclock: %g ticks of 200 ns while dclock counted %g s", ticks, d1 - d0);
    gsync();

    char buf[64], small[4];
    long info[8];
    if (me == 1) {
        /* plain data through the underscore forms */
        CHECK(_csend(10, "hello", 6, 0, 0) == 0, "_csend");
        long id = _isend(11, "world", 6, 0, 0);
        CHECK(id > 0 && _msgwait(id) == 0, "_isend %ld", id);
        CHECK(_csendx(12, "x", 2, 0, 0, info) == 0 && info[0] == 12 && info[2] == 0, "_csendx");
        /* too long for the receivers' 4 bytes */
        CHECK(_csend(13, "0123456789", 10, 0, 0) == 0, "_csend 13");
        CHECK(_csend(14, "abcdefghij", 10, 0, 0) == 0, "_csend 14");
        CHECK(_csend(15, "ABCDEFGHIJ", 10, 0, 0) == 0, "_csend 15");
        CHECK(_csend(16, "klmnopqrst", 10, 0, 0) == 0, "_csend 16");
        /* a force type, then an ordinary one: node 0's crecv(-1) takes the second
         * (courier keeps a force-type message no receive was posted for) */
        csend(FORCE_TYPE + 1, "forced", 7, 0, 0);
        csend(21, "plain", 6, 0, 0);
        /* to the host's number */
        csend(22, "host", 5, myhost(), 0);
        CHECK(_gsync() == 0, "_gsync");
    } else if (me == 0) {
        CHECK(_crecv(10, buf, sizeof buf) == 0 && !strcmp(buf, "hello"), "_crecv %s", buf);
        CHECK(infotype() == 10 && infocount() == 6 && infonode() == 1, "info %ld %ld %ld",
              infotype(), infocount(), infonode());
        CHECK(infonode() != myhost(), "a message from node 1 looks like the host's");
        long id = _irecv(11, buf, sizeof buf);
        CHECK(id > 0 && _msgwait(id) == 0 && !strcmp(buf, "world"), "_irecv %s", buf);
        for (int i = 0; i < 8; i++) info[i] = -9;
        CHECK(_crecvx(12, buf, sizeof buf, 1, -1, info) == 0 && info[0] == 12 && info[1] == 2 &&
                  info[2] == 1,
              "_crecvx info %ld %ld %ld", info[0], info[1], info[2]);

        memset(small, 0, sizeof small);
        BAD(_crecv(13, small, sizeof small), EMSGSIZE);
        CHECK(!memcmp(small, "0123", 4) && infocount() == 4, "cut to %.4s, count %ld", small,
              infocount());
        BAD(_crecvx(14, small, sizeof small, -1, -1, info), EMSGSIZE);
        CHECK(!memcmp(small, "abcd", 4) && info[1] == 4, "cut to %.4s", small);
        id = _irecv(15, small, sizeof small);
        CHECK(id > 0, "_irecv 15");
        BAD(_msgwait(id), EMSGSIZE);
        CHECK(!memcmp(small, "ABCD", 4), "cut to %.4s", small);
        id = _irecv(16, small, sizeof small);
        long d;
        while ((d = _msgdone(id)) == 0) flick();
        CHECK(d == -1 && errno == EMSGSIZE && !memcmp(small, "klmn", 4), "_msgdone %ld", d);
        BAD(_msgwait(id), EINVAL); /* released by the _msgdone that completed it */

        char forced[16] = {0};
        crecv(-1, buf, sizeof buf); /* the ordinary message, not the forced one before it */
        CHECK(infotype() == 21 && !strcmp(buf, "plain"), "crecv(-1) got type %ld", infotype());
        crecv(FORCE_TYPE + 1, forced, sizeof forced);
        CHECK(!strcmp(forced, "forced") && infotype() == FORCE_TYPE + 1, "forced %s", forced);
        crecv(22, buf, sizeof buf);
        CHECK(!strcmp(buf, "host") && infonode() == 1, "to the host: %s from %ld", buf, infonode());
        CHECK(_gsync() == 0, "_gsync");
    } else {
        CHECK(_gsync() == 0, "_gsync");
    }
    printf("underscore: node %ld ok\n", me);
    return 0;
}
