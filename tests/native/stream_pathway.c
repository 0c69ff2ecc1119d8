/* Pathways (courier/streams.h) over 4 ranks: 0 -> 1 -> 2 -> 3 and back
 * 3 -> 2 -> 1 -> 0, the intermediates computing (not in a courier call) while
 * their progress thread forwards; words checked one by one. Redirection: rank
 * 3 has the next words land in a buffer (spooling), partly from words already
 * queued, partly straight from the wire, then reads on word by word. A
 * reserved pathway 0 -> 1 -> 2 -> 3 answers a ping-pong while an ordinary
 * pathway along the same ranks is full and unread (it must not wait behind). */
#include <string.h>

#include <courier/courier.h>

#include "../check.h"

static uint64_t word(int ch, uint64_t i)
{
    return (uint64_t)ch << 56 ^ (i * 0x9e3779b97f4a7c15ULL);
}

#define N 30000
#define PINGS 200

int main(void)
{
    cr_stream_init();
    int me = cr_rank();
    CHECK(cr_size() == 4, "needs 4 ranks");
    static uint64_t buf[N], red[N];
    const int fwd[2] = {1, 2}, back[2] = {2, 1};
    if (me == 0) {
        cr_stream s = cr_stream_open(3, 7, fwd, 2, 0);
        for (uint64_t i = 0; i < N; i++) buf[i] = word(7, i);
        for (int i = 0; i < 100; i++) cr_stream_send(s, buf[i]);
        cr_stream_write(s, buf + 100, N - 100);
        cr_stream_close(s);
        cr_stream r = cr_stream_accept(3, 8, 32);
        CHECK(cr_stream_read(r, buf, N) == N, "back: short");
        for (uint64_t i = 0; i < N; i++)
            CHECK(buf[i] == word(8, i), "back word %lu", (unsigned long)i);
        cr_stream_close(r);
        /* reserved beside a full ordinary pathway */
        cr_stream o = cr_stream_open(3, 9, fwd, 2, 0);
        cr_stream q = cr_stream_open(3, 10, fwd, 2, CR_STREAM_RESERVED);
        cr_stream a = cr_stream_accept(3, 11, 4);
        cr_stream_send(o, 0);
        while (cr_stream_trysend(o, 1)) {
        }
        for (uint64_t i = 0; i < PINGS; i++) {
            uint64_t w;
            cr_stream_send(q, i);
            CHECK(cr_stream_recv(a, &w) == 1 && w == i + 1000, "pong %lu", (unsigned long)i);
        }
        cr_stream_close(q);
        cr_stream_close(o);
        cr_stream_close(a);
    } else if (me == 3) {
        cr_stream s = cr_stream_accept(0, 7, 64);
        uint64_t w;
        CHECK(cr_stream_recv(s, &w) == 1 && w == word(7, 0), "word 0");
        cr_stream_redirect(s, red, 10000); /* some words are here already */
        CHECK(cr_stream_redirect_wait(s) == 10000, "redirect 1 short");
        for (uint64_t i = 0; i < 10000; i++)
            CHECK(red[i] == word(7, 1 + i), "redirected word %lu", (unsigned long)(1 + i));
        CHECK(cr_stream_recv(s, &w) == 1 && w == word(7, 10001), "word after the redirection");
        cr_stream_redirect(s, red, N); /* more than there is: ends at end-of-stream */
        size_t k;
        while ((k = cr_stream_redirect_test(s)) == (size_t)-1) {
        }
        CHECK(k == N - 10002, "redirect 2: %zu words", k);
        for (uint64_t i = 0; i < k; i++)
            CHECK(red[i] == word(7, 10002 + i), "redirected word %lu", (unsigned long)(10002 + i));
        CHECK(cr_stream_recv(s, &w) == 0, "no end-of-stream after the redirection");
        cr_stream_close(s);
        cr_stream r = cr_stream_open(0, 8, back, 2, 0);
        for (uint64_t i = 0; i < N; i++) buf[i] = word(8, i);
        cr_stream_write(r, buf, N);
        cr_stream_close(r);
        cr_stream o = cr_stream_accept(0, 9, 16);
        cr_stream q = cr_stream_accept(0, 10, 4);
        cr_stream a = cr_stream_open(0, 11, NULL, 0, 0);
        for (uint64_t i = 0; i < PINGS; i++) {
            CHECK(cr_stream_recv(q, &w) == 1 && w == i, "ping %lu", (unsigned long)i);
            cr_stream_send(a, i + 1000);
        }
        CHECK(cr_stream_recv(q, &w) == 0, "reserved: no end-of-stream");
        cr_stream_close(q);
        CHECK(cr_stream_read(o, buf, 100) == 16, "the ordinary pathway held 16 words");
        cr_stream_close(o);
        cr_stream_close(a);
    } else {
        test_compute(20000000); /* forwarding goes on meanwhile, on the progress thread */
    }
    cr_stream_finalize();
    if (me == 0) printf("stream_pathway: ok\n");
    return 0;
}
