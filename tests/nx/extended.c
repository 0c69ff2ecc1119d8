/* The Paragon's NX calls on 1+ nodes: the extended receive, probe and send calls
 * with their info arrays (node selection, info contents, the global info calls
 * left alone), dclock/mclock/flick, the global products and bitwise operations,
 * gcol/gcolx concatenation and gopf with a user function. Every result is
 * checked against a value computed here from what each node contributed. */
#include <string.h>
#include <time.h>

#include "../check.h"

#define UNTOUCHED (-7L) /* info[4..7] must keep it */

static void check_info(const long *info, long type, long count, long node, const char *what)
{
    CHECK(info[0] == type && info[1] == count && info[2] == node && info[3] == 0,
          "%s: info type %ld count %ld node %ld ptype %ld, want %ld %ld %ld 0", what, info[0],
          info[1], info[2], info[3], type, count, node);
    for (int i = 4; i < 8; i++) CHECK(info[i] == UNTOUCHED, "%s: info[%d] = %ld", what, i, info[i]);
}

static void fresh(long *info)
{
    for (int i = 0; i < 8; i++) info[i] = UNTOUCHED;
}

/* ---- time ---------------------------------------------------------------- */

static void timing(void)
{
    double d0 = dclock();
    long m0 = mclock();
    CHECK(d0 > 0 && m0 > 0, "dclock %g mclock %ld", d0, m0);
    struct timespec nap = {0, 50 * 1000 * 1000}; /* nanosleep waits at least this */
    nanosleep(&nap, NULL);
    flick();
    double d1 = dclock();
    long m1 = mclock();
    CHECK(d1 - d0 >= 0.05, "dclock moved %g s over a 50 ms sleep", d1 - d0);
    CHECK(m1 - m0 >= 49, "mclock moved %ld ms over a 50 ms sleep", m1 - m0);
    /* Seconds and milliseconds of one clock: read in order, they must nest. */
    long ma = mclock();
    double d = dclock();
    long mb = mclock();
    CHECK(ma / 1000.0 <= d + 1e-3 && d <= mb / 1000.0 + 1e-3, "mclock %ld..%ld ms vs dclock %f s",
          ma, mb, d);
    double prev = dclock();
    for (int i = 0; i < 1000; i++) {
        double t = dclock();
        CHECK(t >= prev, "dclock went back from %f to %f", prev, t);
        prev = t;
    }
}

/* ---- extended point-to-point --------------------------------------------- */

/* Every node sends two messages (types 5 and 6) to every node, itself
 * included; they are received by node, in the opposite order of the nodes. */
static void xrecv(void)
{
    long me = mynode(), n = numnodes();
    long out[3] = {me, me * 10, 0}, in[3], info[8];

    /* A plain receive sets the global info; no x call may change it. */
    csend(9, (char *)out, 8, me, 0);
    crecv(9, (char *)in, sizeof in);
    CHECK(infotype() == 9 && infocount() == 8 && infonode() == me, "info after crecv");

    for (long j = 0; j < n; j++) {
        out[2] = j;
        fresh(info);
        csendx(5, (char *)out, sizeof out, j, 0, info);
        check_info(info, 5, sizeof out, j, "csendx");
        out[2] = 100 + j;
        fresh(info);
        long id = isendx(6, (char *)out, 2 * sizeof(long) + (j % 2) * sizeof(long), j, 0, info);
        check_info(info, 6, 2 * sizeof(long) + (j % 2) * sizeof(long), j, "isendx");
        msgwait(id);
    }

    /* Probe the last node's type-6 message by node and type; a mask typesel too. */
    long last = n - 1, cnt6 = 2 * sizeof(long) + ((me % 2) * sizeof(long));
    fresh(info);
    cprobex(6, last, -1, info);
    check_info(info, 6, cnt6, last, "cprobex");
    fresh(info);
    CHECK(iprobex(-(1L << 6), last, 0, info) == 1, "iprobex with a mask for type 6");
    check_info(info, 6, cnt6, last, "iprobex");
    fresh(info);
    CHECK(iprobex(7, -1, -1, info) == 0, "iprobex found a type-7 message");
    for (int i = 0; i < 8; i++) CHECK(info[i] == UNTOUCHED, "iprobex with no match wrote info");

    /* Type 5 by blocking receives, nodes in reverse order; every other one into
     * NX's own msginfo array, as Paragon programs do. */
    for (long j = n - 1; j >= 0; j--) {
        long *to = j % 2 ? msginfo : info;
        fresh(to);
        memset(in, 0, sizeof in);
        crecvx(5, (char *)in, sizeof in, j, j % 2 ? -1 : 3, to); /* any ptype >= 0 selects */
        check_info(to, 5, sizeof in, j, "crecvx");
        CHECK(in[0] == j && in[1] == j * 10 && in[2] == me, "crecvx from %ld got %ld %ld %ld", j,
              in[0], in[1], in[2]);
    }

    /* Type 6 by irecvx, posted for every node, completed out of order. */
    long ids[64], infos[64][8], bufs[64][3];
    CHECK(n <= 64, "at most 64 nodes");
    for (long j = n - 1; j >= 0; j--) {
        fresh(infos[j]);
        memset(bufs[j], 0, sizeof bufs[j]);
        ids[j] = irecvx(-1, (char *)bufs[j], sizeof bufs[j], j, -1, infos[j]);
        for (int i = 0; i < 8; i++) CHECK(infos[j][i] == UNTOUCHED, "irecvx wrote info early");
    }
    for (long j = 0; j < n; j++) {
        if (j % 2) {
            msgwait(ids[j]);
        } else {
            while (!msgdone(ids[j])) flick();
        }
        check_info(infos[j], 6, 2 * sizeof(long) + (me % 2) * sizeof(long), j, "irecvx");
        CHECK(bufs[j][0] == j && bufs[j][1] == j * 10, "irecvx from %ld got %ld %ld", j, bufs[j][0],
              bufs[j][1]);
        CHECK(bufs[j][2] == (me % 2 ? 100 + me : 0), "irecvx from %ld: third word %ld", j,
              bufs[j][2]);
    }
    CHECK(infotype() == 9 && infocount() == 8 && infonode() == me,
          "x calls changed the global info: type %ld count %ld node %ld", infotype(), infocount(),
          infonode());

    /* A NULL info array is allowed; a plain irecv after an irecvx sets the global info. */
    csendx(11, (char *)out, 8, (me + 1) % n, 0, NULL);
    long id = irecvx(11, (char *)in, 8, (me + n - 1) % n, -1, NULL);
    msgwait(id);
    CHECK(in[0] == (me + n - 1) % n, "irecvx with NULL info got %ld", in[0]);
    csend(12, (char *)out, 8, (me + 1) % n, 0);
    id = irecv(12, (char *)in, 8);
    msgwait(id);
    CHECK(infotype() == 12 && infonode() == (me + n - 1) % n, "irecv after irecvx: info");

    /* msgcancel: a receive nothing matches is cancelled and its id released;
     * a type-13 message sent afterwards goes to the next receive. */
    long got = -1;
    id = irecv(13, (char *)&got, sizeof got);
    msgcancel(id);
    gsync();
    csend(13, (char *)&me, sizeof me, (me + 1) % n, 0);
    crecv(13, (char *)&got, sizeof got);
    CHECK(got == (me + n - 1) % n, "after msgcancel: got %ld", got);
}

/* ---- global operations --------------------------------------------------- */

static void products_and_bits(void)
{
    long me = mynode(), n = numnodes();
    double dx[3] = {(double)(me + 1), 0.5, -1.0}, dw[3];
    gdprod(dx, 3, dw);
    double fact = 1, half = 1, sign = 1;
    for (long i = 0; i < n; i++) fact *= (double)(i + 1), half *= 0.5, sign = -sign;
    CHECK(dx[0] == fact && dx[1] == half && dx[2] == sign, "gdprod %g %g %g", dx[0], dx[1], dx[2]);

    /* Single precision: exact in float for these values. */
    float fx[4] = {(float)me + 0.5f, (float)me, (float)-me, me % 2 ? -1.0f : 2.0f}, fw[4];
    gssum(fx, 1, fw);
    gshigh(fx + 1, 1, fw);
    gslow(fx + 2, 1, fw);
    gsprod(fx + 3, 1, fw);
    float fprod = 1;
    for (long i = 0; i < n; i++) fprod *= i % 2 ? -1.0f : 2.0f;
    CHECK(fx[0] == (float)(n * (n - 1) / 2) + 0.5f * (float)n && fx[1] == (float)(n - 1) &&
              fx[2] == (float)-(n - 1) && fx[3] == fprod,
          "gssum %g gshigh %g gslow %g gsprod %g", fx[0], fx[1], fx[2], fx[3]);

    long ix[3] = {me + 2, -1, 1L << 40}, iw[3];
    giprod(ix, 3, iw);
    long f2 = 1;
    unsigned long big = 1;
    for (long i = 0; i < n; i++) f2 *= i + 2, big *= 1UL << 40;
    CHECK(ix[0] == f2 && ix[1] == (n % 2 ? -1 : 1) && ix[2] == (long)big,
          "giprod %ld %ld %ld (want %ld, wrapped %ld)", ix[0], ix[1], ix[2], f2, (long)big);

    /* Bitwise: short vectors, and long ones (past the shared-memory area's 1 KiB). */
    enum { LONG_N = 3000 };
    static long a[LONG_N], o[LONG_N], x[LONG_N], w[LONG_N];
    for (int len = 4; len <= LONG_N; len += LONG_N - 4) {
        for (int k = 0; k < len; k++) {
            long v = (k == 0) ? 1L << me : (k == 1) ? ~(1L << me) : (long)(me * 0x0101 + k * 77);
            a[k] = o[k] = x[k] = v;
        }
        giand(a, len, w);
        gior(o, len, w);
        gixor(x, len, w);
        for (int k = 0; k < len; k++) {
            long wa = -1, wo = 0, wx = 0;
            for (long i = 0; i < n; i++) {
                long v = (k == 0) ? 1L << i : (k == 1) ? ~(1L << i) : (long)(i * 0x0101 + k * 77);
                wa &= v, wo |= v, wx ^= v;
            }
            CHECK(a[k] == wa && o[k] == wo && x[k] == wx,
                  "len %d elem %d: and %lx or %lx xor %lx, want %lx %lx %lx", len, k, a[k], o[k],
                  x[k], wa, wo, wx);
        }
    }
    giand(NULL, 0, NULL); /* zero elements is allowed */
}

/* Node i contributes lenof(i) bytes of pattern(i, 0, .). */
static long lenof(long i, long big)
{
    if (i == 1) return 0; /* a node with nothing to give */
    return i == 2 && big ? 20000 : 3 + i * 5;
}

static void concatenation(void)
{
    long me = mynode(), n = numnodes();

    /* gcol, equal lengths: 3 longs from each node, in node order. */
    long eq[3] = {me, me * 10, me * 100}, *all = malloc((size_t)n * sizeof eq), cnt = -1;
    gcol((char *)eq, sizeof eq, (char *)all, (long)((size_t)n * sizeof eq), &cnt);
    CHECK(cnt == n * (long)sizeof eq, "gcol ncnt %ld", cnt);
    for (long i = 0; i < n; i++)
        CHECK(all[3 * i] == i && all[3 * i + 1] == i * 10 && all[3 * i + 2] == i * 100,
              "gcol block %ld: %ld %ld %ld", i, all[3 * i], all[3 * i + 1], all[3 * i + 2]);
    free(all);

    for (long big = 0; big <= 1; big++) {
        long total = 0, lens[64];
        CHECK(n <= 64, "at most 64 nodes");
        for (long i = 0; i < n; i++) total += lens[i] = lenof(i, big);
        char *x = malloc((size_t)lenof(me, big) + 1), *y = malloc((size_t)total + 16);
        for (long k = 0; k < lenof(me, big); k++) x[k] = (char)pattern(me, big, (size_t)k);

        /* gcol, lengths that differ, into a buffer with room to spare. */
        memset(y, 0x5c, (size_t)total + 16);
        cnt = -1;
        gcol(x, lenof(me, big), y, total + 16, &cnt);
        CHECK(cnt == total, "gcol (big %ld) ncnt %ld, want %ld", big, cnt, total);
        for (long i = 0, off = 0; i < n; off += lens[i++])
            for (long k = 0; k < lens[i]; k++)
                CHECK(y[off + k] == (char)pattern(i, big, (size_t)k), "gcol byte %ld of node %ld",
                      k, i);
        for (long k = total; k < total + 16; k++) CHECK(y[k] == 0x5c, "gcol wrote past ncnt");

        /* gcolx, the same lengths given as an array. */
        memset(y, 0x5c, (size_t)total + 16);
        gcolx(x, lens, y);
        for (long i = 0, off = 0; i < n; off += lens[i++])
            for (long k = 0; k < lens[i]; k++)
                CHECK(y[off + k] == (char)pattern(i, big, (size_t)k), "gcolx byte %ld of node %ld",
                      k, i);
        for (long k = total; k < total + 16; k++) CHECK(y[k] == 0x5c, "gcolx wrote past the end");
        free(x);
        free(y);
    }
}

/* gopf: the largest value and the lowest node that holds it (commutative,
 * associative); it also scribbles over its second argument, which is allowed. */
typedef struct maxloc {
    double v;
    long node;
} maxloc;

static long maxloc_fn(maxloc *a, maxloc *b)
{
    if (b->v > a->v || (b->v == a->v && b->node < a->node)) *a = *b;
    b->v = -1e300, b->node = -99;
    return 0;
}

/* Element-wise sum of 400 longs as one 3200-byte value (past the 1 KiB area);
 * it takes the length from its third argument. */
enum { SUMN = 400 };
static long sum_len(long *a, long *b, int len)
{
    for (int i = 0; i < len / (int)sizeof(long); i++) a[i] += b[i], b[i] = 0;
    return 0;
}

static void user_function(void)
{
    long me = mynode(), n = numnodes();
    maxloc m = {(double)((me * 5) % 7), me}, mw;
    gopf((char *)&m, sizeof m, (char *)&mw, maxloc_fn);
    maxloc want = {-1, -1};
    for (long i = 0; i < n; i++)
        if ((double)((i * 5) % 7) > want.v) want.v = (double)((i * 5) % 7), want.node = i;
    CHECK(m.v == want.v && m.node == want.node, "gopf maxloc %g@%ld, want %g@%ld", m.v, m.node,
          want.v, want.node);

    static long s[SUMN], sw[SUMN];
    for (int i = 0; i < SUMN; i++) s[i] = me * 1000 + i;
    gopf((char *)s, sizeof s, (char *)sw, sum_len);
    for (int i = 0; i < SUMN; i++)
        CHECK(s[i] == 1000 * n * (n - 1) / 2 + (long)i * n, "gopf sum elem %d: %ld", i, s[i]);
    gopf(NULL, 0, NULL, sum_len); /* zero bytes is allowed */
}

int main(void)
{
    timing();
    xrecv();
    gsync();
    products_and_bits();
    concatenation();
    user_function();
    gsync();
    CHECK(!iprobe(-1), "a stray message is left");
    if (mynode() == 0) printf("extended: all Paragon NX calls ok on %ld nodes\n", numnodes());
    return 0;
}
