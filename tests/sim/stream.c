/* A stream's bandwidth (courier/streams.h; seed 002, iWarp's logical channels), for the
 * simulated mode's checks (tests/sim/CMakeLists.txt): rank 0 opens a stream to the last rank
 * (directly, or with VIA a pathway through the ranks between) and writes WORDS words into
 * it, the last rank accepts it with queue depth DEPTH (0: the default) and
 * takes them one by one (MODE word) or in reads of 4096 (MODE block) until end-of-stream,
 * and prints the time from the start (after cr_stream_init's barrier) to the end-of-stream
 * and the words' bandwidth (8 bytes a word):
 *   stream WORDS DEPTH US MB/s
 * Invariant: rank 1 checks every word (word i is i), and fails if one is wrong or missing.
 * MODE three: rank 0 opens three streams to rank 1 (channels 0, 1, 2), writes 64 words into
 * the first two and leaves them open, then writes WORDS words into the third and closes it;
 * rank 1 reads the third to its end first, then the other two (more streams out of one cell
 * in one direction than iWarp's reservation pool has channels: the third must not wait for
 * the others to close). Prints "three WORDS ok".
 *   courier run --sim iwarp,cpu=0 -n N sim_stream [WORDS [DEPTH [word|block [via]]]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <courier/courier.h>

#define BLOCK 4096

static int check(cr_stream h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t w;
        if (cr_stream_recv(h, &w) != 1 || w != i) {
            fprintf(stderr, "stream: word %zu of %zu is wrong or missing\n", i, n);
            return 1;
        }
    }
    uint64_t w;
    return cr_stream_recv(h, &w) != 0; /* end-of-stream */
}

static int three(size_t words)
{
    size_t n[3] = {64, 64, words};
    int rc = 0;
    if (cr_rank() == 0) {
        uint64_t *w = malloc((words > 64 ? words : 64) * sizeof *w);
        if (!w) return 1;
        for (size_t i = 0; i < (words > 64 ? words : 64); i++) w[i] = i;
        cr_stream h[3];
        for (int c = 0; c < 3; c++) h[c] = cr_stream_open(1, c, NULL, 0, 0);
        for (int c = 0; c < 3; c++) cr_stream_write(h[c], w, n[c]);
        cr_stream_close(h[2]);
        cr_stream_close(h[0]);
        cr_stream_close(h[1]);
        free(w);
    } else if (cr_rank() == 1) {
        cr_stream h[3];
        for (int c = 0; c < 3; c++) h[c] = cr_stream_accept(0, c, 0);
        rc |= check(h[2], n[2]);
        rc |= check(h[0], n[0]);
        rc |= check(h[1], n[1]);
        for (int c = 0; c < 3; c++) cr_stream_close(h[c]);
        if (!rc) printf("three %zu ok\n", words);
    }
    return rc;
}

int main(int argc, char **argv)
{
    size_t words = argc > 1 ? strtoull(argv[1], NULL, 10) : 65536;
    int depth = argc > 2 ? atoi(argv[2]) : 0;
    int by_word = argc > 3 ? strcmp(argv[3], "block") != 0 : 1;
    int via = argc > 4 && !strcmp(argv[4], "via"), last = cr_size() - 1;
    int route[CR_STREAM_MAX_VIA];
    int nvia = via ? last - 1 : 0;
    if (nvia > CR_STREAM_MAX_VIA) nvia = CR_STREAM_MAX_VIA;
    for (int i = 0; i < nvia; i++) route[i] = i + 1;
    cr_stream_init();
    if (argc > 3 && !strcmp(argv[3], "three")) {
        int rc = three(words);
        cr_stream_finalize();
        return rc;
    }
    double t0 = cr_time();
    int rc = 0;
    if (cr_rank() == 0) {
        uint64_t *w = malloc(words * sizeof *w);
        if (!w) return 1;
        for (size_t i = 0; i < words; i++) w[i] = i;
        cr_stream h = cr_stream_open(last, 0, route, nvia, 0);
        cr_stream_write(h, w, words);
        cr_stream_close(h);
        free(w);
    } else if (cr_rank() == last) {
        cr_stream h = cr_stream_accept(0, 0, depth);
        size_t got = 0;
        uint64_t buf[BLOCK];
        for (;;) {
            size_t n;
            if (by_word) {
                n = (size_t)cr_stream_recv(h, buf);
            } else {
                n = cr_stream_read(h, buf, BLOCK);
            }
            if (!n) break;
            for (size_t i = 0; i < n; i++)
                if (buf[i] != got + i) {
                    fprintf(stderr, "stream: word %zu is %llu\n", got + i,
                            (unsigned long long)buf[i]);
                    rc = 1;
                }
            got += n;
        }
        double us = (cr_time() - t0) * 1e6;
        cr_stream_close(h);
        if (got != words) {
            fprintf(stderr, "stream: %zu words of %zu came\n", got, words);
            rc = 1;
        }
        printf("stream %zu %d %.3f %.3f\n", words, depth, us, (double)words * 8 / us);
    }
    cr_stream_finalize();
    return rc;
}
