/* Message sizes around every protocol boundary, checked byte for byte: 0, 1,
 * eager-1, eager, eager+1 (COURIER_EAGER_LIMIT, default 16384), 64 KiB +-1 (the
 * least a sender helps to copy), 1 MiB, 1 MiB + 4097 (a split off the page
 * grain), 64 MiB.
 * Node 0 sends to node 1 and back; run it also with COURIER_NO_CMA=1 (the
 * pipelined copy through the segment) and a small eager limit. Both orders are
 * tried: receive posted first (irecv) and message first (unexpected). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"

static void fill(char *b, size_t n, long seq)
{
    for (size_t i = 0; i < n; i++) b[i] = (char)pattern(mynode(), seq, i);
}

static void verify(const char *b, size_t n, long src, long seq)
{
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == (char)pattern(src, seq, i), "size %zu: byte %zu differs", n, i);
}

int main(void)
{
    long me = mynode();
    CHECK(numnodes() == 2, "run with 2 nodes");
    const char *e = getenv("COURIER_EAGER_LIMIT");
    size_t eager = e ? (size_t)atol(e) : 16384;
    if (eager == 0) eager = 1; /* every message is long: 0, 1, 2 bytes still cross it */
    size_t sizes[] = {0,     1,       eager - 1,        eager,   eager + 1, 65535, 65536,
                      65537, 1 << 20, (1 << 20) + 4097, 64 << 20};
    int ns = sizeof sizes / sizeof sizes[0];
    char *buf = malloc(64 << 20), *in = malloc((64 << 20) + 16);
    CHECK(buf && in, "out of memory");
    for (int k = 0; k < ns; k++)
        for (int posted_first = 0; posted_first < 2; posted_first++) {
            size_t n = sizes[k];
            long seq = k * 2 + posted_first;
            if (me == 0) {
                fill(buf, n, seq);
                if (!posted_first) usleep(1000); /* let the receive be posted first */
                csend(seq, buf, (long)n, 1, 0);
                crecv(seq, in, (long)n + 16);
                CHECK((size_t)infocount() == n, "echo of %zu came back with %ld", n, infocount());
                verify(in, n, 1, seq);
            } else {
                if (posted_first) {
                    long id = irecv(seq, in, (long)n + 16);
                    msgwait(id);
                } else {
                    usleep(20000); /* the message waits as unexpected */
                    crecv(seq, in, (long)n + 16);
                }
                CHECK((size_t)infocount() == n && infonode() == 0, "got %ld bytes", infocount());
                verify(in, n, 0, seq);
                fill(buf, n, seq);
                csend(seq, buf, (long)n, 0, 0);
            }
        }
    if (me == 0) printf("sizes: 0 B to 64 MiB intact (eager limit %zu)\n", eager);
    free(buf);
    free(in);
    return 0;
}
