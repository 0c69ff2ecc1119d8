/* cr_put_bcast under courier run --sim (tests/sim): the Elite switch's
 * broadcast against the same puts one by one.
 *
 *   bcast BYTES
 *     rank 0 writes BYTES into every rank's region with cr_put_bcast (its own
 *     too), and then into the others' with a cr_put per rank (all started, then waited for), each
 *     way twice between two cr_sync calls, and prints "bcast N BYTES BCAST_US
 *     PUTS_US" (virtual time of the second of each, from cr_virtual_ns). Every rank checks what
 * landed in its region after each and exits 1 on a wrong byte. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <courier/courier.h>

static int check(const unsigned char *reg, size_t len, unsigned char v, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (reg[i] != (unsigned char)(v + i)) {
            fprintf(stderr, "bcast: rank %d: %s: byte %zu is %u, not %u\n", cr_rank(), what, i,
                    reg[i], (unsigned char)(v + i));
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    size_t len = argc > 1 ? (size_t)atol(argv[1]) : 1024;
    int me = cr_rank(), n = cr_size();
    int key;
    unsigned char *reg = cr_region_alloc(len, &key);
    unsigned char *src = malloc(len ? len : 1);
    int bad = 0;
    long long t[2] = {0, 0};

    /* Each way twice: the first absorbs the barrier's skew (a target serves
     * only once it has left cr_sync); the second is timed. Meanwhile the
     * other ranks wait for an event that rank 0 sets after it, so that no
     * barrier message of theirs reaches rank 0 while it measures. */
    int ev = cr_event_new(); /* the same number on every rank */
    for (int way = 0; way < 2; way++) {
        unsigned char v = way ? 91 : 7;
        cr_sync();
        if (me == 0) {
            cr_handle *h = malloc(sizeof *h * (size_t)n);
            for (int round = 0; round < 2; round++) {
                for (size_t i = 0; i < len; i++) src[i] = (unsigned char)(round ? v + i : 0);
                long long t0 = cr_virtual_ns();
                if (way == 0) {
                    cr_put_bcast(0, n - 1, key, 0, src, len); /* its own region too */
                } else {
                    for (int r = 1; r < n; r++) h[r] = cr_put(r, key, 0, src, len, CR_NO_EVENT);
                    for (int r = 1; r < n; r++) cr_handle_wait(h[r]);
                }
                t[way] = cr_virtual_ns() - t0;
            }
            for (int r = 1; r < n; r++) cr_handle_wait(cr_put(r, key, 0, src, 0, ev));
            free(h);
        } else {
            cr_event_wait(ev);
        }
        cr_sync();
        if (me || !way) bad |= check(reg, len, v, way ? "cr_put one by one" : "cr_put_bcast");
    }
    cr_event_free(ev);
    if (me == 0) printf("bcast %d %zu %.3f %.3f\n", n, len, (double)t[0] / 1e3, (double)t[1] / 1e3);
    cr_region_free(key);
    free(src);
    return bad;
}
