/* Streams between ranks 0 and 1 (courier/streams.h): words checked one by one
 * in order, through every send and receive form; flow control checked by what
 * the try form allows (exactly `depth` words while the receiver reads none);
 * two channels on one link independent (one full and unread does not hold
 * the other up); end-of-stream seen by every receive form. Ranks past 1 only
 * take part in the collectives. */
#include <string.h>

#include <courier/courier.h>

#include "../check.h"

#define GO 9 /* NX/2 type of the go-aheads */

static uint64_t word(int ch, uint64_t i)
{
    return (uint64_t)ch << 56 ^ (i * 0x9e3779b97f4a7c15ULL);
}

static void go(int to)
{
    long v = 1;
    csend(GO, (char *)&v, sizeof v, to, 0);
}

static void wait_go(void)
{
    long v;
    crecv(GO, (char *)&v, sizeof v);
}

int main(void)
{
    cr_stream_init();
    int me = cr_rank();
    CHECK(cr_size() >= 2, "needs 2 ranks");
    static uint64_t buf[20000];
    if (me == 0) {
        /* channel 1: words, then blocks, then close */
        cr_stream a = cr_stream_open(1, 1, NULL, 0, 0);
        for (uint64_t i = 0; i < 1000; i++) cr_stream_send(a, word(1, i));
        for (uint64_t i = 0; i < 20000; i++) buf[i] = word(1, 1000 + i);
        cr_stream_write(a, buf, 20000);
        cr_stream_write(a, buf, 0);
        cr_stream_close(a);
        /* channel 2, depth 16: exactly 16 words go while nothing is read */
        cr_stream b = cr_stream_open(1, 2, NULL, 0, 0);
        cr_stream_send(b, word(2, 0)); /* waits for the first credits */
        int n = 1;
        while (cr_stream_trysend(b, word(2, (uint64_t)n))) n++;
        CHECK(n == 16, "%d words went on a stream of depth 16 that nobody read", n);
        CHECK(!cr_stream_trysend(b, 0) && !cr_stream_trysend(b, 0), "a word without credit");
        go(1);
        for (uint64_t i = 16; i < 500; i++) cr_stream_send(b, word(2, i)); /* credits come back */
        cr_stream_close(b);
        /* channels 3 and 4 on one link: 3 full and unread, 4 still flows */
        cr_stream c3 = cr_stream_open(1, 3, NULL, 0, 0);
        cr_stream c4 = cr_stream_open(1, 4, NULL, 0, 0);
        cr_stream_send(c3, word(3, 0));
        n = 1;
        while (cr_stream_trysend(c3, word(3, (uint64_t)n))) n++;
        CHECK(n == 8, "%d words went on a stream of depth 8", n);
        for (uint64_t i = 0; i < 3000; i++) buf[i] = word(4, i);
        cr_stream_write(c4, buf, 3000);
        cr_stream_close(c4);
        cr_stream_close(c3);
    } else if (me == 1) {
        cr_stream a = cr_stream_accept(0, 1, 0);
        uint64_t w;
        for (uint64_t i = 0; i < 700; i++) {
            CHECK(cr_stream_recv(a, &w) == 1 && w == word(1, i), "word %lu wrong",
                  (unsigned long)i);
        }
        for (uint64_t i = 700; i < 1500;) { /* the try form, until words come */
            int r = cr_stream_tryrecv(a, &w);
            CHECK(r >= 0, "end-of-stream at word %lu", (unsigned long)i);
            if (r) {
                CHECK(w == word(1, i), "word %lu wrong (tryrecv)", (unsigned long)i);
                i++;
            }
        }
        size_t got = cr_stream_read(a, buf, 20000);
        CHECK(got == 19500, "read %zu words before end-of-stream, not 19500", got);
        for (size_t i = 0; i < got; i++)
            CHECK(buf[i] == word(1, 1500 + i), "word %zu wrong (read)", 1500 + i);
        CHECK(cr_stream_recv(a, &w) == 0, "no end-of-stream");
        CHECK(cr_stream_tryrecv(a, &w) == -1, "no end-of-stream (tryrecv)");
        CHECK(cr_stream_read(a, buf, 5) == 0, "no end-of-stream (read)");
        cr_stream_close(a);

        cr_stream b = cr_stream_accept(0, 2, 16);
        wait_go();
        for (uint64_t i = 0; i < 500; i++)
            CHECK(cr_stream_recv(b, &w) == 1 && w == word(2, i), "ch 2 word %lu wrong",
                  (unsigned long)i);
        CHECK(cr_stream_recv(b, &w) == 0, "no end-of-stream on ch 2");
        cr_stream_close(b);

        cr_stream c3 = cr_stream_accept(0, 3, 8);
        cr_stream c4 = cr_stream_accept(0, 4, 8);
        CHECK(cr_stream_read(c4, buf, 3001) == 3000, "ch 4 length");
        for (uint64_t i = 0; i < 3000; i++)
            CHECK(buf[i] == word(4, i), "ch 4 word %lu", (unsigned long)i);
        CHECK(cr_stream_read(c3, buf, 100) == 8, "ch 3 length");
        for (uint64_t i = 0; i < 8; i++)
            CHECK(buf[i] == word(3, i), "ch 3 word %lu", (unsigned long)i);
        cr_stream_close(c3);
        cr_stream_close(c4);
    }
    cr_stream_finalize();
    if (me == 0) printf("stream_basic: ok on %d ranks\n", cr_size());
    return 0;
}
