/* Every NX/2 call on 2+ nodes: identity, blocking and asynchronous point-to-point,
 * probes and the info calls, broadcast sends, and the global operations. */
#include <string.h>

#include "../check.h"

static void identity(void)
{
    long me = mynode(), n = numnodes(), d = nodedim();
    CHECK(n >= 2, "needs 2 nodes, have %ld", n);
    CHECK(me >= 0 && me < n, "mynode %ld", me);
    CHECK(mypid() == 0 && myhost() == -32768, "mypid %ld myhost %ld", mypid(), myhost());
    CHECK((1L << d) >= n && (d == 0 || (1L << (d - 1)) < n), "nodedim %ld for %ld nodes", d, n);
}

/* Each node sends one message to its right neighbour; probe, info, then receive. */
static void blocking(void)
{
    long me = mynode(), n = numnodes(), right = (me + 1) % n, left = (me + n - 1) % n;
    long out[4] = {me, me * 10, me * 100, 7}, in[4] = {0};
    csend(42, (char *)out, sizeof out, right, 0);
    cprobe(42);
    CHECK(infotype() == 42 && infonode() == left && infocount() == sizeof out && infopid() == 0,
          "after cprobe: type %ld node %ld count %ld", infotype(), infonode(), infocount());
    crecv(42, (char *)in, sizeof in);
    CHECK(in[0] == left && in[1] == left * 10 && in[2] == left * 100 && in[3] == 7,
          "got %ld %ld %ld", in[0], in[1], in[2]);
    CHECK(infonode() == left && infocount() == sizeof in, "info after crecv");
    CHECK(!iprobe(42), "nothing more of type 42 should be there");
    gsync();
}

static void asynchronous(void)
{
    long me = mynode(), n = numnodes(), right = (me + 1) % n, left = (me + n - 1) % n;
    enum { N = 8 };
    static char bufs[N][3000], outs[N][3000];
    long rids[N], sids[N];
    for (int i = 0; i < N; i++) rids[i] = irecv(100 + i, bufs[i], sizeof bufs[i]);
    for (int i = N - 1; i >= 0; i--) { /* sent in the opposite order of the receives */
        memset(outs[i], (int)(me + i), sizeof outs[i]);
        sids[i] = isend(100 + i, outs[i], 1000 + 250 * i, right, 0);
    }
    for (int i = 0; i < N; i++) {
        if (i % 2) {
            msgwait(rids[i]);
        } else {
            while (!msgdone(rids[i])) {
            }
        }
        CHECK(infotype() == 100 + i && infonode() == left && infocount() == 1000 + 250 * i,
              "info of message %d: type %ld node %ld count %ld", i, infotype(), infonode(),
              infocount());
        for (long k = 0; k < 1000 + 250 * i; k++)
            CHECK(bufs[i][k] == (char)(left + i), "byte %ld of message %d", k, i);
    }
    for (int i = 0; i < N; i++) msgwait(sids[i]);
    gsync();
}

/* node -1: every other node gets the message. */
static void broadcast(void)
{
    long me = mynode(), n = numnodes();
    if (me == 0) {
        long v = 4242;
        csend(7, (char *)&v, sizeof v, -1, 0);
    } else {
        long v = 0;
        crecv(7, (char *)&v, sizeof v);
        CHECK(v == 4242 && infonode() == 0, "broadcast value %ld from %ld", v, infonode());
    }
    gsync();
    CHECK(!iprobe(-1), "node %ld of %ld has a stray message", me, n);
}

static void globals(void)
{
    long me = mynode(), n = numnodes();
    double dx[3] = {(double)me, 1.5, -(double)me}, dw[3];
    gdsum(dx, 3, dw);
    CHECK(dx[0] == n * (n - 1) / 2.0 && dx[1] == 1.5 * n && dx[2] == -n * (n - 1) / 2.0,
          "gdsum %g %g %g", dx[0], dx[1], dx[2]);
    long ix[2] = {me + 1, 3}, iw[2];
    gisum(ix, 2, iw);
    CHECK(ix[0] == n * (n + 1) / 2 && ix[1] == 3 * n, "gisum %ld %ld", ix[0], ix[1]);
    double hx[1] = {me == 1 ? 99.5 : (double)me}, hw[1];
    gdhigh(hx, 1, hw);
    CHECK(hx[0] == (n > 99 ? (double)n - 1 : 99.5), "gdhigh %g", hx[0]);
    long gx[1] = {me * 3 - 5}, gw[1];
    gihigh(gx, 1, gw);
    CHECK(gx[0] == (n - 1) * 3 - 5, "gihigh %ld", gx[0]);
    double lx[1] = {(double)me - 0.25}, lw[1];
    gdlow(lx, 1, lw);
    CHECK(lx[0] == -0.25, "gdlow %g", lx[0]);
    long mx[1] = {100 - me}, mw[1];
    gilow(mx, 1, mw);
    CHECK(mx[0] == 100 - (n - 1), "gilow %ld", mx[0]);
    gdsum(NULL, 0, NULL); /* zero elements is allowed */
}

int main(void)
{
    identity();
    blocking();
    asynchronous();
    broadcast();
    globals();
    gsync();
    if (mynode() == 0) printf("basic: all NX/2 calls ok on %ld nodes\n", numnodes());
    return 0;
}
