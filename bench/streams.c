/* Streams benchmark (courier/streams.h): per-word latency (a ping-pong of
 * single words, half the round trip) and channel throughput (words/s of block
 * sends of 4096 words into a reader), over one hop (0 <-> 1) and, with 3 or
 * more ranks, over a pathway through rank 1 (0 -> 1 -> 2 and back), ordinary
 * and reserved, and over streams spliced at rank 1 (GetRow's forwarding); with
 * 4 or more ranks also the ordinary and the reserved pathway's latency while
 * rank 3 floods an ordinary pathway through rank 1 to rank 2, and with 5 or
 * more while the flood passes rank 2 on to rank 4 (rank 2's program then does
 * nothing for it).
 *   courier run -n 5 streams [seconds-per-row] */
#include <stdio.h>
#include <stdlib.h>

#include <courier/courier.h>

#define BLOCK 4096

static double secs = 0.5;
static cr_stream drain = -1; /* a flood the ping-pong's second rank reads beside */

static void drain_some(void)
{
    if (drain < 0) return;
    uint64_t w;
    for (int i = 0; i < 256 && cr_stream_tryrecv(drain, &w) == 1; i++) {
    }
}

/* Ping-pong of words between me and peer over out/in; returns us one way. */
static double pingpong(int me, int first, cr_stream out, cr_stream in)
{
    uint64_t w = 0;
    long iters = 0;
    double t0 = cr_time(), t;
    int stop = 0;
    for (;;) {
        for (int i = 0; i < 200; i++) {
            if (me == first) {
                cr_stream_send(out, w);
                cr_stream_recv(in, &w);
            } else {
                cr_stream_recv(in, &w);
                cr_stream_send(out, w + 1);
                drain_some();
            }
        }
        iters += 200;
        t = cr_time() - t0;
        /* the first decides when to stop and tells the other in-band */
        if (me == first) {
            stop = t > secs;
            cr_stream_send(out, (uint64_t)stop);
            if (stop) break;
        } else {
            cr_stream_recv(in, &w);
            if (w) break;
        }
    }
    return t / iters / 2 * 1e6;
}

static double throughput(int me, int src, cr_stream s, long words)
{
    static uint64_t buf[BLOCK];
    double t0 = cr_time();
    if (me == src) {
        for (long k = 0; k < words; k += BLOCK) cr_stream_write(s, buf, BLOCK);
    } else {
        for (long k = 0; k < words; k += BLOCK) cr_stream_read(s, buf, BLOCK);
    }
    return words / (cr_time() - t0);
}

/* Latency and throughput between ranks 0 and dst over their ends out and in
 * (every rank calls it; the others pass -1). */
static void measure(int me, const char *name, int dst, cr_stream out, cr_stream in)
{
    double lat = 0, tput = 0;
    if (me == 0 || me == dst) {
        lat = pingpong(me, 0, out, in);
        /* throughput 0 -> dst: sized by a trial */
        long words = 64L * BLOCK;
        double r = throughput(me, 0, me == 0 ? out : in, words);
        words = (long)(r * secs) / BLOCK * BLOCK;
        if (words < BLOCK) words = BLOCK;
        /* both ends agree on the count: rank 0 tells */
        uint64_t w = (uint64_t)words;
        if (me == 0)
            cr_stream_send(out, w);
        else
            cr_stream_recv(in, &w);
        tput = throughput(me, 0, me == 0 ? out : in, (long)w);
        cr_stream_close(out);
        cr_stream_close(in);
    }
    if (me == 0)
        printf("%-34s %10.3f us/word %12.0f words/s (%7.1f MB/s)\n", name, lat, tput,
               tput * 8 / 1e6);
    cr_sync();
}

static void row(int me, const char *name, int dst, const int *via, int nvia, int flags, int ch)
{
    /* forward 0 -> dst, back dst -> 0 along the reversed route */
    int back[4];
    for (int i = 0; i < nvia; i++) back[i] = via[nvia - 1 - i];
    cr_stream out = -1, in = -1;
    if (me == 0) {
        out = cr_stream_open(dst, ch, via, nvia, flags);
        in = cr_stream_accept(dst, ch + 1, 64);
    } else if (me == dst) {
        in = cr_stream_accept(0, ch, 64);
        out = cr_stream_open(0, ch + 1, back, nvia, flags);
    }
    measure(me, name, dst, out, in);
}

/* 0 -> 1 and 1 -> 2 spliced at rank 1, and back the same way: the words pass
 * rank 1's service as through a pathway, but as two streams. */
static void splice_row(int me, int ch)
{
    cr_stream out = -1, in = -1;
    if (me == 0) {
        out = cr_stream_open(1, ch, NULL, 0, 0);
        in = cr_stream_accept(1, ch + 1, 64);
    } else if (me == 1) {
        cr_stream a = cr_stream_accept(0, ch, 64);
        cr_stream_splice(a, cr_stream_open(2, ch, NULL, 0, 0));
        cr_stream b = cr_stream_accept(2, ch + 1, 64);
        cr_stream_splice(b, cr_stream_open(0, ch + 1, NULL, 0, 0));
    } else if (me == 2) {
        in = cr_stream_accept(1, ch, 64);
        out = cr_stream_open(1, ch + 1, NULL, 0, 0);
    }
    measure(me, "spliced at 1: 0 -> 1 => 2", 2, out, in);
}

/* Ranks 0 and 2 ping-pong over an ordinary and then a reserved pathway
 * 0 -> 1 -> 2 while rank 3 floods a pathway through via to sink. Sink 2: rank 2
 * reads the flood between its pings (its program shares the work); sink 4: the
 * flood passes rank 2 (its service forwards it) to rank 4, which reads it all. */
static void flooded_rows(int me, const int *via, int nvia, int sink, int ch, const char *what)
{
    static uint64_t buf[BLOCK];
    const int via1[1] = {1};
    for (int reserved = 0; reserved < 2; reserved++) {
        int fch = ch + reserved, pch = ch + 10 + 2 * reserved;
        cr_stream f = -1;
        if (me == 3) f = cr_stream_open(sink, fch, via, nvia, 0);
        if (me == sink) f = cr_stream_accept(3, fch, 256);
        cr_stream out = -1, in = -1;
        int flags = reserved ? CR_STREAM_RESERVED : 0;
        if (me == 0) {
            out = cr_stream_open(2, pch, via1, 1, flags);
            in = cr_stream_accept(2, pch + 1, 64);
        } else if (me == 2) {
            in = cr_stream_accept(0, pch, 64);
            out = cr_stream_open(0, pch + 1, via1, 1, flags);
        }
        double lat = 0;
        if (me == 2 && sink == 2) drain = f;
        if (me == 0 || me == 2) lat = pingpong(me, 0, out, in);
        drain = -1;
        if (me == 3) { /* written while the ping-pong runs, then the rest */
            for (long k = 0; k < (long)(secs * 4e6) / BLOCK; k++) cr_stream_write(f, buf, BLOCK);
            cr_stream_close(f);
        }
        if (me == sink) {
            while (cr_stream_read(f, buf, BLOCK) == BLOCK) {
            }
            cr_stream_close(f);
        }
        if (me == 0 || me == 2) {
            cr_stream_close(out);
            cr_stream_close(in);
        }
        if (me == 0)
            printf("%-34s %10.3f us/word   (%s)\n",
                   reserved ? "reserved 0 -> 1 -> 2, flooded" : "ordinary 0 -> 1 -> 2, flooded",
                   lat, what);
        cr_sync();
    }
}

int main(int argc, char **argv)
{
    if (argc > 1) secs = atof(argv[1]);
    cr_stream_init();
    int me = cr_rank(), p = cr_size();
    if (p < 2) {
        fprintf(stderr, "streams: needs 2 ranks or more\n");
        return 1;
    }
    if (me == 0)
        printf("# streams on %d ranks: latency (ping-pong of 1 word, one way) and throughput\n", p);
    const int via1[1] = {1};
    row(me, "1 hop (0 -> 1)", 1, NULL, 0, 0, 10);
    if (p >= 3) {
        row(me, "pathway 0 -> 1 -> 2", 2, via1, 1, 0, 20);
        row(me, "reserved pathway 0 -> 1 -> 2", 2, via1, 1, CR_STREAM_RESERVED, 30);
        splice_row(me, 60);
    }
    if (p >= 4) {
        const int via1_2[2] = {1, 2};
        flooded_rows(me, via1, 1, 2, 40, "rank 3 floods 3 -> 1 -> 2 meanwhile");
        if (p >= 5) flooded_rows(me, via1_2, 2, 4, 70, "rank 3 floods 3 -> 1 -> 2 -> 4 meanwhile");
    }
    cr_stream_finalize();
    return 0;
}
