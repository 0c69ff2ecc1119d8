/* Stress: every node sends MSGS messages of random sizes (mostly small, some past
 * the eager limit) and random types to random nodes, with isend/csend, while
 * receiving with crecv/irecv under -1 and masks. Every message carries its
 * sender and sequence number and a checksummed body; receivers check that
 * nothing is lost, duplicated, corrupted or reordered per (sender, type). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

enum { MSGS_DEFAULT = 12500, WINDOW = 32, MAXSZ = 70000 };

typedef struct {
    long src, seq, size;
    uint32_t sum;
} head;

static uint64_t rng_state;
static uint32_t rnd(void)
{
    return test_rand(&rng_state);
}

static long pick_size(void)
{
    return test_msg_size(&rng_state, (long)sizeof(head), MAXSZ);
}

static uint32_t body_sum(const char *b, long n)
{
    uint32_t s = 2166136261u;
    for (long i = (long)sizeof(head); i < n; i++) s = (s ^ (unsigned char)b[i]) * 16777619u;
    return s;
}

static long n_nodes, msgs;
static long *expect_from, *got_from, (*last_seq)[31];
static char rbuf[MAXSZ];

static void take(void)
{
    head h;
    memcpy(&h, rbuf, sizeof h);
    long t = infotype();
    CHECK(infonode() == h.src && infocount() == h.size, "header says %ld/%ld, info %ld/%ld", h.src,
          h.size, infonode(), infocount());
    CHECK(body_sum(rbuf, h.size) == h.sum, "checksum of message %ld from %ld", h.seq, h.src);
    CHECK(h.seq > last_seq[h.src][t], "from %ld type %ld: seq %ld after %ld", h.src, t, h.seq,
          last_seq[h.src][t]);
    last_seq[h.src][t] = h.seq;
    got_from[h.src]++;
}

/* Receive whatever is there, with a mix of selectors. */
static void drain(void)
{
    static int turn;
    turn++;
    long sel = turn % 3 == 0 ? -1 : (long)(int)(0x80000000u | (1u << (turn * 7 % 31)) | 1u);
    while (iprobe(sel)) {
        crecv(sel, rbuf, sizeof rbuf);
        take();
    }
    while (iprobe(-1)) {
        long id = irecv(-1, rbuf, sizeof rbuf);
        msgwait(id);
        take();
    }
}

int main(int argc, char **argv)
{
    long me = mynode();
    n_nodes = numnodes();
    msgs = argc > 1 && atol(argv[1]) > 0 ? atol(argv[1]) : MSGS_DEFAULT;
    expect_from = calloc((size_t)n_nodes, sizeof(long));
    got_from = calloc((size_t)n_nodes, sizeof(long));
    last_seq = malloc((size_t)n_nodes * sizeof *last_seq);
    for (long p = 0; p < n_nodes; p++)
        for (int t = 0; t < 31; t++) last_seq[p][t] = -1;
    /* Every node replays every sender's random plan to know what it will get. */
    for (long s = 0; s < n_nodes; s++) {
        rng_state = 12345 + (uint64_t)s * 777;
        for (long i = 0; i < msgs; i++) {
            long dst = rnd() % n_nodes;
            rnd();
            pick_size();
            if (dst == me) expect_from[s]++;
        }
    }
    rng_state = 12345 + (uint64_t)me * 777;
    static char sbuf[WINDOW][MAXSZ];
    long ids[WINDOW] = {0};
    for (long i = 0; i < msgs; i++) {
        long dst = rnd() % n_nodes, type = rnd() % 31, size = pick_size();
        int slot = (int)(i % WINDOW);
        if (ids[slot])
            while (!msgdone(ids[slot])) drain();
        char *b = sbuf[slot];
        head h = {me, i, size, 0};
        for (long k = (long)sizeof h; k < size; k++) b[k] = (char)pattern(me, i, (size_t)k);
        h.sum = body_sum(b, size);
        memcpy(b, &h, sizeof h);
        if (i % 5 == 0 && size < 4096) {
            csend(type, b, size, dst, 0);
            ids[slot] = 0;
        } else {
            ids[slot] = isend(type, b, size, dst, 0);
        }
        drain();
    }
    for (int s = 0; s < WINDOW; s++)
        if (ids[s])
            while (!msgdone(ids[s])) drain();
    long want = 0, have = 0;
    for (long p = 0; p < n_nodes; p++) want += expect_from[p];
    for (;;) {
        have = 0;
        for (long p = 0; p < n_nodes; p++) have += got_from[p];
        if (have >= want) break;
        crecv(-1, rbuf, sizeof rbuf);
        take();
    }
    for (long p = 0; p < n_nodes; p++)
        CHECK(got_from[p] == expect_from[p], "from %ld: got %ld, expected %ld", p, got_from[p],
              expect_from[p]);
    gsync();
    CHECK(!iprobe(-1), "a message too many");
    long total[1] = {have}, work[1];
    gisum(total, 1, work);
    if (me == 0)
        printf("stress: %ld messages among %ld nodes, all intact and in order\n", total[0],
               n_nodes);
    return 0;
}
