/* The simulated mode's test program (tests/sim): ping-pong between rank 0 and
 * a peer in NX/2 or MPL, timed with dclock, which is virtual time under
 * courier run --sim; a gather of one message from every rank with a
 * wildcard receive (the order the simulator delivers them in); and a
 * deadlock (every rank receives, nobody sends).
 *
 *   echo nx|mpl PEER ITERS SIZE...   rank 0 prints "echo SIZE ONE_WAY_US MBPS"
 *   echo exchange PEER ITERS SIZE... rank 0 and PEER send to each other at once
 *                                    (MPL nonblocking); rank 0 prints
 *                                    "exchange SIZE US_PER_EXCHANGE TOTAL_MBPS"
 *   echo anysrc                      rank 0 prints "from R" per message, in order
 *   echo deadlock                    never returns (the launcher reports it) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <courier/mpl.h>
#include <courier/nx.h>

static void pingpong(int mpl, int me, int peer, long iters, long size, char *buf)
{
    int src, type, nb;
    if (me != 0 && me != peer) return;
    double t0 = dclock();
    for (long i = 0; i < iters; i++) {
        if (me == 0) {
            if (mpl) {
                mpc_bsend(buf, (int)size, peer, 1);
                src = peer, type = 1;
                mpc_brecv(buf, (int)size, &src, &type, &nb);
            } else {
                csend(1, buf, size, peer, 0);
                crecv(1, buf, size);
            }
        } else {
            if (mpl) {
                src = 0, type = 1;
                mpc_brecv(buf, (int)size, &src, &type, &nb);
                mpc_bsend(buf, (int)size, 0, 1);
            } else {
                crecv(1, buf, size);
                csend(1, buf, size, 0, 0);
            }
        }
    }
    double us = (dclock() - t0) / (double)iters / 2 * 1e6;
    if (me == 0) printf("echo %ld %.3f %.3f\n", size, us, size ? (double)size / us : 0.0);
}

/* The SP2 paper's exchange bandwidth: both nodes send SIZE bytes to each
 * other at once with the nonblocking calls; the total of both directions. */
static void exchange(int me, int peer, long iters, long size, char *sbuf, char *rbuf)
{
    if (me != 0 && me != peer) return;
    int other = me == 0 ? peer : 0;
    double t0 = dclock();
    for (long i = 0; i < iters; i++) {
        int sid, rid, src = other, type = 2, nb;
        mpc_recv(rbuf, (int)size, &src, &type, &rid);
        mpc_send(sbuf, (int)size, other, 2, &sid);
        mpc_wait(&sid, &nb);
        mpc_wait(&rid, &nb);
        if (nb != size) {
            fprintf(stderr, "exchange: received %d bytes, expected %ld\n", nb, size);
            exit(1);
        }
    }
    double us = (dclock() - t0) / (double)iters * 1e6;
    if (me == 0) printf("exchange %ld %.3f %.3f\n", size, us, 2.0 * (double)size / us);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "nx";
    int me = (int)mynode(), np = (int)numnodes();
    if (!strcmp(mode, "anysrc")) {
        char c = 0;
        if (me == 0)
            for (int i = 1; i < np; i++) {
                crecv(-1, &c, 1);
                printf("from %ld\n", infonode());
            }
        else
            csend(7, &c, 1, 0, 0);
        return 0;
    }
    if (!strcmp(mode, "deadlock")) {
        char c;
        crecv(99, &c, 1);
        return 0;
    }
    if (argc < 5) {
        fprintf(stderr, "usage: echo nx|mpl PEER ITERS SIZE...\n");
        return 2;
    }
    int mpl = !strcmp(mode, "mpl"), exch = !strcmp(mode, "exchange"), peer = atoi(argv[2]);
    long iters = atol(argv[3]);
    for (int a = 4; a < argc; a++) {
        long size = atol(argv[a]);
        char *buf = calloc(2, (size_t)size + 1);
        if (exch)
            exchange(me, peer, iters, size, buf, buf + size + 1);
        else
            pingpong(mpl, me, peer, iters, size, buf);
        free(buf);
    }
    return 0;
}
