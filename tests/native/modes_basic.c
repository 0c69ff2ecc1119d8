/* The GMD communication modes (courier/modes.h) between ranks 0 and 1 (more
 * ranks only watch): data checked byte by byte, order across modes, and the
 * promises of each mode checked by the order of events, never by timing:
 *  - cr_send_sync returns only after the receiver posted its receive: the
 *    receiver sends a notice (NX/2, another context) just before its receive,
 *    on the same channel as its reply to the rendezvous, so the notice must be
 *    there when the send returns;
 *  - cr_send_single k+1 returns only after message k was consumed: the same
 *    notice, one per message;
 *  - cr_send_nowait returns while the receiver does not receive at all: every
 *    message (some past the eager limit, so they need the receiver) is sent
 *    before the receiver is told to start, and the buffer is reused at once. */
#include <string.h>

#include <courier/courier.h>

#include "../check.h"

#define NOTICE 7 /* NX/2 type of the receiver's notices */
#define GO 8

static unsigned char pat(int seq, size_t i)
{
    return (unsigned char)(seq * 37 + i * 11 + (i >> 9));
}

static void fill(unsigned char *b, int seq, size_t len)
{
    for (size_t i = 0; i < len; i++) b[i] = pat(seq, i);
}

static void expect(const unsigned char *b, int seq, size_t len)
{
    for (size_t i = 0; i < len; i++)
        CHECK(b[i] == pat(seq, i), "message %d byte %zu is %d, not %d", seq, i, b[i], pat(seq, i));
}

/* Notices that have arrived from rank 1 so far (taken off as counted). */
static int notices_seen(void)
{
    static int seen;
    long v;
    while (iprobe(NOTICE)) {
        crecv(NOTICE, (char *)&v, sizeof v);
        CHECK(v == seen, "notice %ld came, expected %d", v, seen);
        seen++;
    }
    return seen;
}

static void notice(long v)
{
    csend(NOTICE, (char *)&v, sizeof v, 0, 0);
}

static const size_t sizes[] = {0, 1, 8, 100, 4096, 20000, 200000};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define NOWAIT 60

int main(void)
{
    int me = cr_rank();
    CHECK(cr_size() >= 2, "needs 2 ranks");
    static unsigned char buf[200000], got[200000];
    cr_mode_status st;
    if (me == 0) {
        /* synchronous: one notice per message, sent before the receive */
        for (int k = 0; k < (int)NSIZES; k++) {
            fill(buf, k, sizes[k]);
            cr_send_sync(1, 10 + k, buf, sizes[k]);
            /* (the receiver may have sent its next notice already) */
            CHECK(notices_seen() >= k + 1, "cr_send_sync %d returned before the receive", k);
        }
        /* single-buffer: message k+1 waits until k was consumed */
        for (int k = 0; k < 2 * (int)NSIZES; k++) {
            size_t len = sizes[k % NSIZES];
            fill(buf, 100 + k, len);
            cr_send_single(1, 5, buf, len);
            memset(buf, 0xee, len); /* the buffer is ours again at once */
            CHECK(notices_seen() >= (int)NSIZES + k,
                  "cr_send_single %d returned before message %d was consumed", k, k - 1);
        }
        cr_modes_flush();
        CHECK(notices_seen() == (int)NSIZES + 2 * (int)NSIZES, "flush before all were consumed");
        /* no-wait: all sent before the receiver starts */
        for (int k = 0; k < NOWAIT; k++) {
            size_t len = sizes[k % NSIZES];
            fill(buf, 200 + k, len);
            cr_send_nowait(1, 3, buf, len);
            memset(buf, 0xdd, len);
        }
        long go = 1;
        csend(GO, (char *)&go, sizeof go, 1, 0);
        /* order across modes: no-wait, then synchronous, then single */
        fill(buf, 300, 50000);
        cr_send_nowait(1, 4, buf, 50000);
        fill(buf, 301, 64);
        cr_send_sync(1, 4, buf, 64);
        fill(buf, 302, 64);
        cr_send_single(1, 4, buf, 64);
        cr_modes_flush();
    } else if (me == 1) {
        for (int k = 0; k < (int)NSIZES; k++) {
            notice(k);
            size_t n = cr_recv_mode(0, 10 + k, got, sizeof got, &st);
            CHECK(n == sizes[k] && st.src == 0 && st.type == 10 + k && st.size == sizes[k],
                  "sync %d: %zu bytes type %d from %d", k, n, st.type, st.src);
            expect(got, k, n);
        }
        for (int k = 0; k < 2 * (int)NSIZES; k++) {
            notice((long)NSIZES + k);
            size_t n = cr_recv_mode(CR_MODE_ANY, CR_MODE_ANY, got, sizeof got, &st);
            CHECK(n == sizes[k % NSIZES] && st.type == 5, "single %d: %zu bytes", k, n);
            expect(got, 100 + k, n);
        }
        long go;
        crecv(GO, (char *)&go, sizeof go);
        for (int k = 0; k < NOWAIT; k++) {
            size_t n = cr_recv_mode(0, 3, got, sizeof got, &st);
            CHECK(n == sizes[k % NSIZES], "nowait %d: %zu bytes", k, n);
            expect(got, 200 + k, n);
        }
        for (int k = 0; k < 3; k++) {
            size_t n = cr_recv_mode(0, 4, got, sizeof got, &st);
            CHECK(n == (k ? 64u : 50000u), "mixed %d: %zu bytes", k, n);
            expect(got, 300 + k, n);
        }
        CHECK(!cr_probe_mode(CR_MODE_ANY, CR_MODE_ANY, &st), "a message too many");
    }
    cr_sync();
    if (me == 0) printf("modes_basic: ok on %d ranks\n", cr_size());
    return 0;
}
