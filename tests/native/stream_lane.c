/* A reserved pathway's words overtake ordinary traffic that its receiver
 * refuses (3 ranks, run with a tiny COURIER_UNEXPECTED_LIMIT). Rank 1 floods
 * rank 2 with an ordinary stream that rank 2 does not read yet: rank 2 keeps
 * one of its messages as unexpected and refuses the next, so everything behind
 * it from rank 1 waits. Then rank 0 sends words on a reserved pathway
 * 0 -> 1 -> 2; rank 1's service forwards them in the lane to rank 2, which
 * reads every one before it reads the flood. Without a lane of their own they
 * would wait behind the refused message and the job would never end. Words and
 * their order are checked on both streams. */
#include <courier/courier.h>

#include "../check.h"

#define FLOOD 40  /* ordinary messages of one word, beside the ring's cells */
#define WORDS 500 /* reserved words, 8 in flight (the depth) */

static uint64_t word(int ch, uint64_t i)
{
    return (uint64_t)ch << 56 ^ (i * 0x9e3779b97f4a7c15ULL);
}

int main(void)
{
    cr_stream_init();
    int me = cr_rank();
    CHECK(cr_size() == 3, "needs 3 ranks");
    const int via[1] = {1};
    uint64_t w;
    if (me == 0) {
        cr_stream q = cr_stream_open(2, 1, via, 1, CR_STREAM_RESERVED);
        cr_stream go = cr_stream_accept(1, 3, 0);
        cr_sync();                                          /* rank 2 has both headers */
        CHECK(cr_stream_recv(go, &w) == 1 && w == 1, "go"); /* the flood is in rank 2's ring */
        for (uint64_t i = 0; i < WORDS; i++) cr_stream_send(q, word(1, i));
        cr_stream_close(q);
        CHECK(cr_stream_recv(go, &w) == 0, "go: no end-of-stream");
        cr_stream_close(go);
    } else if (me == 1) {
        cr_stream o = cr_stream_open(2, 2, NULL, 0, 0);
        cr_stream go = cr_stream_open(0, 3, NULL, 0, 0);
        cr_sync();
        for (uint64_t i = 0; i < FLOOD; i++) cr_stream_send(o, word(2, i)); /* one message each */
        cr_stream_send(go, 1);
        cr_stream_close(go);
        cr_stream_close(o);
    } else {
        cr_stream q = cr_stream_accept(0, 1, 8);
        cr_stream o = cr_stream_accept(1, 2, FLOOD + 8);
        cr_sync();
        for (uint64_t i = 0; i < WORDS; i++)
            CHECK(cr_stream_recv(q, &w) == 1 && w == word(1, i), "reserved word %lu",
                  (unsigned long)i);
        CHECK(cr_stream_recv(q, &w) == 0, "reserved: no end-of-stream");
        cr_stream_close(q);
        for (uint64_t i = 0; i < FLOOD; i++)
            CHECK(cr_stream_recv(o, &w) == 1 && w == word(2, i), "flood word %lu",
                  (unsigned long)i);
        CHECK(cr_stream_recv(o, &w) == 0, "flood: no end-of-stream");
        cr_stream_close(o);
    }
    cr_stream_finalize();
    if (me == 0) printf("stream_lane: ok\n");
    return 0;
}
