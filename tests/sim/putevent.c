/* The CS-2's one-sided write with its remote event (seed 001, Table 1's Direct DMA: 9 us),
 * for the simulated mode's checks (tests/sim/CMakeLists.txt): ranks 0 and 1 play ping-pong
 * with cr_put, each put setting the other's event, each rank waiting for its own event
 * (cr_event_wait) before it puts back; the origin waits for its put's handle after that.
 * Rank 0 prints the one-way time (half the round trip) over REPS round trips of SIZE bytes:
 *   putevent SIZE US
 * Invariant: every put's bytes are in the target's region when its event is seen (checked).
 *   courier run --sim cs2,cpu=0 -n 2 sim_putevent [SIZE [REPS]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <courier/courier.h>

#define MAXSIZE 4096

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoull(argv[1], NULL, 10) : 8;
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    if (size > MAXSIZE) size = MAXSIZE;
    int key;
    unsigned char *mem = cr_region_alloc(MAXSIZE, &key);
    int ev = cr_event_new(); /* the same number on every rank */
    unsigned char buf[MAXSIZE];
    int me = cr_rank(), peer = 1 - me, rc = 0;
    cr_sync();
    double t0 = cr_time();
    for (int i = 0; i < reps && me < 2; i++) {
        for (int pass = 0; pass < 2; pass++) {
            if ((pass == 0) == (me == 0)) {
                memset(buf, (unsigned char)(i + 1), size);
                cr_handle h = cr_put(peer, key, 0, buf, size, ev);
                if (pass == 0) {
                    cr_event_wait(ev); /* the answer's put */
                    if (size && mem[size - 1] != (unsigned char)(i + 1)) rc = 1;
                }
                cr_handle_wait(h);
            } else if (pass == 0) {
                cr_event_wait(ev);
                if (size && mem[size - 1] != (unsigned char)(i + 1)) rc = 1;
            }
        }
    }
    double us = (cr_time() - t0) * 1e6 / reps / 2;
    if (rc) fprintf(stderr, "putevent: rank %d saw a put's event before its bytes\n", me);
    if (me == 0) printf("putevent %zu %.3f\n", size, us);
    cr_sync();
    cr_region_free(key);
    return rc;
}
