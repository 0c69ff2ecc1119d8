/* The simulated mode's test program (tests/sim): ping-pong between rank 0 and
 * a peer in NX/2 or MPL, timed with dclock, which is virtual time under
 * courier run --sim; a gather of one message from every rank with a
 * wildcard receive (the order the simulator delivers them in); and a
 * deadlock (every rank receives, nobody sends).
 *
 *   echo nx|mpl PEER ITERS SIZE...   rank 0 prints "echo SIZE ONE_WAY_US MBPS"
 *   echo sync PEER ITERS SIZE...     the ping-pong with GMD's synchronous sends
 *                                    (cr_send_sync, cr_recv_mode); rank 0 prints "echo
 *                                    SIZE ONE_WAY_US MBPS": seed 004's T_ipc
 *   echo gmdmodes PEER ITERS SIZE... trains of ITERS synchronous, single-buffer and
 *                                    no-wait sends to PEER; rank 0 prints "gmdmodes SIZE
 *                                    SYNC_US SINGLE_US NOWAIT_US" (its sends' time each)
 *   echo exchange PEER ITERS SIZE... rank 0 and PEER send to each other at once
 *                                    (MPL nonblocking); rank 0 prints
 *                                    "exchange SIZE US_PER_EXCHANGE TOTAL_MBPS"
 *   echo anysrc                      rank 0 prints "from R" per message, in order
 *   echo hotspot HOT SIZE COUNT BG GAP_US
 *                                    tree saturation (MPL): HOT ranks spread evenly
 *                                    (one per leaf switch when HOT is a quarter) send
 *                                    COUNT messages of SIZE to rank 0 as fast as they
 *                                    can; the other ranks but 0 send BG messages of
 *                                    SIZE to each other, one every GAP_US, and time
 *                                    each; rank 0 prints "background MEAN_US over N"
 *   echo deadlock                    never returns (the launcher reports it)
 *   echo clock ITERS                 the NX ping-pong with rank 1 timed three ways:
 *                                    rank 0 prints "clock CLOCK_GETTIME_US
 *                                    GETTIMEOFDAY_US DCLOCK_US" (one way)
 *   echo handler                     rank 0's hrecv handler runs while it waits in a
 *                                    crecv for a later message; rank 0 prints
 *                                    "handler AT_US crecv AT_US masked AT_US"
 *   echo flick                       rank 0 polls with flick() until its hrecv handler
 *                                    has run (rank 1's message after a gsync), at most
 *                                    10^7 flicks; prints "flick handled N after K"
 *   echo spin MS                     every rank waits MS milliseconds by reading dclock
 *                                    in a loop, nothing else; rank 0 prints "spin US"
 *   echo killed                      rank 1 is killed while it waits for a message
 *                                    that rank 0 sends only after (the launcher
 *                                    reports the kill, not a deadlock) */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <courier/modes.h>
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

/* GMD's synchronous send (seed 004): a ping-pong of cr_send_sync, so that each one-way time
 * is one complete exchange, T_ipc = T_startup + T_trans, from the send to the receiver
 * having the message. */
static void sync_pingpong(int me, int peer, long iters, long size, char *buf)
{
    if (me != 0 && me != peer) return;
    int other = me == 0 ? peer : 0;
    double t0 = dclock();
    for (long i = 0; i < iters; i++) {
        if (me == 0) cr_send_sync(other, 1, buf, (size_t)size);
        cr_recv_mode(other, 1, buf, (size_t)size, NULL);
        if (me != 0) cr_send_sync(other, 1, buf, (size_t)size);
    }
    double us = (dclock() - t0) / (double)iters / 2 * 1e6;
    if (me == 0) printf("echo %ld %.3f %.3f\n", size, us, size ? (double)size / us : 0.0);
}

/* GMD's three send modes (seed 004, section 9) in trains: rank 0 sends ITERS messages of SIZE
 * in each mode to PEER, which takes them as they come; rank 0 prints "gmdmodes SIZE SYNC_US
 * SINGLE_US NOWAIT_US", the time its sends took per message (until the last send returned). */
static void gmd_modes(int me, int peer, long iters, long size, char *buf)
{
    if (me != 0 && me != peer) return;
    double us[3];
    for (int mode = 0; mode < 3; mode++) {
        cr_modes_flush();
        if (me == 0) { /* both start together */
            cr_send_sync(peer, 2, NULL, 0);
            cr_recv_mode(peer, 2, NULL, 0, NULL);
        } else {
            cr_recv_mode(0, 2, NULL, 0, NULL);
            cr_send_sync(0, 2, NULL, 0);
        }
        double t0 = dclock();
        for (long i = 0; i < iters; i++) {
            if (me != 0)
                cr_recv_mode(0, 1, buf, (size_t)size, NULL);
            else if (mode == 0)
                cr_send_sync(peer, 1, buf, (size_t)size);
            else if (mode == 1)
                cr_send_single(peer, 1, buf, (size_t)size);
            else
                cr_send_nowait(peer, 1, buf, (size_t)size);
        }
        us[mode] = (dclock() - t0) / (double)iters * 1e6;
    }
    cr_modes_flush();
    if (me == 0) printf("gmdmodes %ld %.3f %.3f %.3f\n", size, us[0], us[1], us[2]);
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

/* Seed 003's tree saturation, as a program (the setting of tests/net's claim):
 * the hot ranks flood rank 0, and the background ranks measure the one-way time
 * of their own traffic (the send time travels in the message; virtual clocks
 * are global). */
static int is_hot(int r, int np, int hot)
{
    int stride = hot > 0 ? np / hot : 0;
    return stride > 0 && r != 0 && r % stride == stride - 1;
}

static void hotspot(int me, int np, int hot, long size, int count, int bg, double gap_us)
{
    char *buf = calloc(2, (size_t)size + sizeof(double));
    char *rbuf = buf + size + sizeof(double);
    int *bgr = calloc((size_t)np, sizeof(int)), nbg = 0, i = -1;
    for (int r = 1; r < np; r++)
        if (!is_hot(r, np, hot)) {
            if (r == me) i = nbg;
            bgr[nbg++] = r;
        }
    int src, type, nb, nhot = np - 1 - nbg;
    double lat = 0, got = 0;
    if (me == 0) {
        for (long k = 0; k < (long)nhot * count; k++) {
            src = DONTCARE, type = 3;
            mpc_brecv(rbuf, (int)size, &src, &type, &nb);
        }
    } else if (i < 0) {
        for (int k = 0; k < count; k++) mpc_bsend(buf, (int)size, 0, 3);
    } else {
        int sent = 0;
        double next = dclock();
        while (nbg > 1 && (sent < bg || got < bg)) {
            if (sent < bg && dclock() >= next) {
                double now = dclock();
                memcpy(buf, &now, sizeof now);
                int to = bgr[(i + 1 + sent % (nbg - 1)) % nbg];
                mpc_bsend(buf, (int)size, to, 4);
                sent++;
                next += gap_us * 1e-6;
            }
            src = DONTCARE, type = 4;
            mpc_probe(&src, &type, &nb);
            if (nb >= 0) {
                mpc_brecv(rbuf, (int)size, &src, &type, &nb);
                double t;
                memcpy(&t, rbuf, sizeof t);
                lat += dclock() - t;
                got++;
            }
        }
    }
    double mine[2] = {lat, got}, all[2];
    mpc_combine(mine, all, sizeof mine, (mpl_reduce_fn)d_vadd, ALLGRP);
    if (me == 0) printf("background %.3f over %.0f\n", all[1] ? all[0] / all[1] * 1e6 : 0, all[1]);
    free(bgr);
    free(buf);
}

static long hbox[2];
static int handled;
static double handled_at, first_handled;

static void on_type9(long type, long count, long node, long pid)
{
    (void)type, (void)count, (void)node, (void)pid;
    handled_at = dclock();
    if (!handled++) first_handled = handled_at;
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
    if (!strcmp(mode, "hotspot") && argc == 7) {
        if (atol(argv[3]) < (long)sizeof(double)) {
            fprintf(stderr, "echo hotspot: SIZE must hold a double\n");
            return 2;
        }
        hotspot(me, np, atoi(argv[2]), atol(argv[3]), atoi(argv[4]), atoi(argv[5]), atof(argv[6]));
        return 0;
    }
    if (!strcmp(mode, "spin") && argc == 3) {
        double ms = atof(argv[2]), t0 = dclock(), t = t0;
        while (t - t0 < ms * 1e-3) t = dclock(); /* no other call: only the timer moves */
        gsync();
        if (me == 0) printf("spin %.3f us\n", (t - t0) * 1e6);
        return 0;
    }
    if (!strcmp(mode, "clock") && argc == 3) {
        long iters = atol(argv[2]);
        char c = 0;
        struct timespec a, b;
        struct timeval ta, tb;
        double d0 = dclock();
        clock_gettime(CLOCK_MONOTONIC, &a);
        gettimeofday(&ta, NULL);
        for (long i = 0; i < iters && me < 2; i++) {
            if (me == 0) {
                csend(1, &c, 0, 1, 0);
                crecv(1, &c, 0);
            } else {
                crecv(1, &c, 0);
                csend(1, &c, 0, 0, 0);
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        gettimeofday(&tb, NULL);
        double d1 = dclock(), n = 2.0 * (double)iters;
        if (me == 0)
            printf("clock %.3f %.3f %.3f\n",
                   ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3 /
                       n,
                   ((double)(tb.tv_sec - ta.tv_sec) * 1e6 + (double)(tb.tv_usec - ta.tv_usec)) / n,
                   (d1 - d0) * 1e6 / n);
        return 0;
    }
    if (!strcmp(mode, "handler")) {
        long v[2] = {0, 0};
        if (me == 1) {
            crecv(1, (char *)v, 0); /* go */
            csend(9, (char *)v, sizeof v, 0, 0);
            for (double t0 = dclock(); dclock() - t0 < 0.001;) /* 1 ms: probes cost time */
                iprobe(99);
            csend(10, (char *)v, sizeof v, 0, 0); /* crecv's; masked: the next type 9 */
            csend(9, (char *)v, sizeof v, 0, 0);
            csend(11, (char *)v, 0, 0, 0);
        } else if (me == 0) {
            hrecv(9, (char *)hbox, sizeof hbox, on_type9);
            csend(1, NULL, 0, 1, 0);
            crecv(10, (char *)v, sizeof v);
            double crecv_at = dclock();
            masktrap(1);
            hrecv(9, (char *)hbox, sizeof hbox, on_type9);
            crecv(11, (char *)v, 0); /* type 9 arrives first, held back by the mask */
            double masked_at = handled_at;
            masktrap(0);
            flick(); /* unmasked: it runs at the next call */
            printf("handler %.3f crecv %.3f masked %.3f handled %d\n", first_handled * 1e6,
                   crecv_at * 1e6, masked_at * 1e6, handled);
        }
        return 0;
    }
    if (!strcmp(mode, "flick")) {
        long v = 0, k = 0;
        if (me == 0) hrecv(9, (char *)hbox, sizeof hbox, on_type9);
        gsync();
        if (me == 1) csend(9, (char *)&v, sizeof v, 0, 0);
        if (me == 0) {
            while (!*(volatile int *)&handled && k < 10000000) {
                flick();
                k++;
            }
            printf("flick handled %d after %ld\n", handled, k);
        }
        return 0;
    }
    if (!strcmp(mode, "killed")) {
        char c = 0;
        if (me == 1) {
            pid_t parent = getpid();
            if (fork() == 0) { /* the killer: once the parent is blocked, in real time */
                usleep(300000);
                kill(parent, SIGKILL);
                _exit(0);
            }
            crecv(5, &c, 1);
        } else if (me == 0) { /* computes meanwhile (no deadlock), then waits */
            for (double t0 = dclock(); dclock() - t0 < 1.0;) {
            }
            crecv(6, &c, 1);
        }
        return 0;
    }
    if (!strcmp(mode, "deadlock")) {
        char c;
        crecv(99, &c, 1);
        return 0;
    }
    if (argc < 5) {
        fprintf(stderr, "usage: echo nx|mpl|sync|gmdmodes|exchange PEER ITERS SIZE...\n");
        return 2;
    }
    int mpl = !strcmp(mode, "mpl"), exch = !strcmp(mode, "exchange"), peer = atoi(argv[2]);
    long iters = atol(argv[3]);
    for (int a = 4; a < argc; a++) {
        long size = atol(argv[a]);
        char *buf = calloc(2, (size_t)size + 1);
        if (exch)
            exchange(me, peer, iters, size, buf, buf + size + 1);
        else if (!strcmp(mode, "sync"))
            sync_pingpong(me, peer, iters, size, buf);
        else if (!strcmp(mode, "gmdmodes"))
            gmd_modes(me, peer, iters, size, buf);
        else
            pingpong(mpl, me, peer, iters, size, buf);
        free(buf);
    }
    return 0;
}
