/* iWarp's GetRow and PutRow (seed 002 §3.1.2) with cr_stream_splice, over a
 * chain of all ranks; words checked one by one.
 *
 * GetRow: rank 0 sends one row down the chain without knowing how it is
 * shared; every other rank reads its part (sizes differ, some past a queue's
 * depth and past a message) and splices the rest on to the next rank, then
 * computes while its service forwards; the last rank reads to end-of-stream
 * and must get exactly what is left. PutRow: every rank but the last writes
 * its own block to the next rank and splices what comes from the rank before
 * behind it; the last rank reads one stream holding every block, nearest rank
 * first. A third stream splices onto a pathway that skips a rank, and a fourth
 * splices a stream with words already queued and a partly read message. */
#include <string.h>

#include <courier/courier.h>

#include "../check.h"

static uint64_t word(int ch, int who, uint64_t i)
{
    return (uint64_t)ch << 56 ^ (uint64_t)who << 40 ^ (i * 0x9e3779b97f4a7c15ULL);
}

static size_t part(int r)
{
    return (size_t)(r * 97 % 700) + 1; /* 1 .. 700 words */
}

#define ROW 20000
static uint64_t buf[ROW];

int main(void)
{
    cr_stream_init();
    int me = cr_rank(), n = cr_size();
    CHECK(n >= 3, "needs 3 ranks or more");
    const int last = n - 1;

    /* GetRow on channel 1 */
    if (me == 0) {
        cr_stream s = cr_stream_open(1, 1, NULL, 0, 0);
        for (uint64_t i = 0; i < ROW; i++) buf[i] = word(1, 0, i);
        cr_stream_write(s, buf, ROW);
        cr_stream_close(s);
    } else {
        size_t before = 0; /* words the ranks before me took */
        for (int r = 1; r < me; r++) before += part(r);
        cr_stream in = cr_stream_accept(me - 1, 1, 32);
        size_t want = me == last ? ROW - before : part(me);
        size_t got = cr_stream_read(in, buf, want);
        CHECK(got == want, "GetRow: %zu of %zu words", got, want);
        for (size_t i = 0; i < got; i++)
            CHECK(buf[i] == word(1, 0, before + i), "GetRow word %zu", before + i);
        if (me == last) {
            uint64_t w;
            CHECK(cr_stream_recv(in, &w) == 0, "GetRow: words after the row");
            cr_stream_close(in);
        } else {
            cr_stream out = cr_stream_open(me + 1, 1, NULL, 0, 0);
            cr_stream_splice(in, out);
            test_compute(5000000); /* the service forwards meanwhile */
        }
    }

    /* PutRow on channel 2: block r has part(r + 5) words */
    if (me < last) {
        size_t k = part(me + 5);
        cr_stream out = cr_stream_open(me + 1, 2, NULL, 0, 0);
        for (size_t i = 0; i < k; i++) buf[i] = word(2, me, i);
        cr_stream_write(out, buf, k);
        if (me == 0) {
            cr_stream_close(out);
        } else {
            cr_stream in = cr_stream_accept(me - 1, 2, 16);
            cr_stream_splice(in, out);
        }
    } else {
        cr_stream in = cr_stream_accept(me - 1, 2, 64);
        for (int r = last - 1; r >= 0; r--) {
            size_t k = part(r + 5);
            CHECK(cr_stream_read(in, buf, k) == k, "PutRow: block of rank %d short", r);
            for (size_t i = 0; i < k; i++)
                CHECK(buf[i] == word(2, r, i), "PutRow: word %zu of rank %d's block", i, r);
        }
        uint64_t w;
        CHECK(cr_stream_recv(in, &w) == 0, "PutRow: words after the last block");
        cr_stream_close(in);
    }

    /* channel 3: 0 -> 1, spliced at 1 onto a pathway 1 -> (2) -> last that
     * skips the ranks between; the last rank reads it */
    if (n >= 4) {
        if (me == 0) {
            cr_stream s = cr_stream_open(1, 3, NULL, 0, CR_STREAM_RESERVED);
            for (uint64_t i = 0; i < 3000; i++) cr_stream_send(s, word(3, 0, i));
            cr_stream_close(s);
        } else if (me == 1) {
            const int via[1] = {2};
            cr_stream in = cr_stream_accept(0, 3, 8);
            cr_stream out = cr_stream_open(last, 3, via, 1, CR_STREAM_RESERVED);
            cr_stream_splice(in, out);
        } else if (me == last) {
            cr_stream in = cr_stream_accept(1, 3, 128);
            for (uint64_t i = 0; i < 3000; i++) {
                uint64_t w;
                CHECK(cr_stream_recv(in, &w) == 1 && w == word(3, 0, i), "pathway word %lu",
                      (unsigned long)i);
            }
            uint64_t w;
            CHECK(cr_stream_recv(in, &w) == 0, "pathway: no end-of-stream");
            cr_stream_close(in);
        }
    }

    /* channel 4: rank 1 reads 3 words of a message, lets more queue, then
     * splices: the rest of the staged message and what is queued go first */
    if (me == 0) {
        cr_stream s = cr_stream_open(1, 4, NULL, 0, 0);
        for (uint64_t i = 0; i < 600; i++) buf[i] = word(4, 0, i);
        cr_stream_write(s, buf, 600);
        cr_stream_close(s);
    } else if (me == 1) {
        cr_stream in = cr_stream_accept(0, 4, 600);
        uint64_t w;
        for (uint64_t i = 0; i < 3; i++)
            CHECK(cr_stream_recv(in, &w) == 1 && w == word(4, 0, i), "channel 4 word %lu",
                  (unsigned long)i);
        test_compute(5000000); /* the rest queues here */
        cr_stream out = cr_stream_open(2, 4, NULL, 0, 0);
        cr_stream_send(out, 7);
        cr_stream_splice(in, out);
    } else if (me == 2) {
        cr_stream in = cr_stream_accept(1, 4, 64);
        uint64_t w;
        CHECK(cr_stream_recv(in, &w) == 1 && w == 7, "channel 4: rank 1's own word first");
        CHECK(cr_stream_read(in, buf, 600) == 597, "channel 4: not 597 words");
        for (uint64_t i = 0; i < 597; i++)
            CHECK(buf[i] == word(4, 0, i + 3), "channel 4 word %lu", (unsigned long)(i + 3));
        cr_stream_close(in);
    }

    cr_stream_finalize();
    if (me == 0) printf("stream_row: ok on %d ranks\n", n);
    return 0;
}
