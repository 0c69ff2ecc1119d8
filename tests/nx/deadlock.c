/* Hangs the watchdog must catch (and one it must not): `deadlock CASE`
 *   headtohead  both nodes csend a long message to each other first (deadlocks
 *               when the receiver may not buffer it: COURIER_UNEXPECTED_LIMIT small)
 *   recvrecv    both nodes wait for a message nobody sends
 *   orphan      node 1 exits; node 0 waits for its message forever
 *   compute     node 0 computes for 3 s before sending: not a hang
 *   msgdone     both nodes poll msgdone for a message nobody sends
 *   iprobe      node 0 polls iprobe, node 1 msgdone: nobody sends */
#include <string.h>
#include <time.h>

#include "../check.h"

static char big[100000];

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    long me = mynode();
    CHECK(numnodes() == 2, "run with 2 nodes");
    if (!strcmp(c, "headtohead")) {
        csend(3, big, sizeof big, 1 - me, 0);
        crecv(3, big, sizeof big);
    } else if (!strcmp(c, "recvrecv")) {
        crecv(5, big, 8);
    } else if (!strcmp(c, "orphan")) {
        if (me == 0) crecv(6, big, 8);
    } else if (!strcmp(c, "msgdone") || (!strcmp(c, "iprobe") && me == 1)) {
        long id = irecv(5, big, 8);
        while (!msgdone(id)) continue;
    } else if (!strcmp(c, "iprobe")) {
        while (!iprobe(6)) continue;
    } else if (!strcmp(c, "compute")) {
        if (me == 0) {
            struct timespec t0, t;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            volatile double x = 1;
            do {
                x = x * 1.0000001 + 1e-9;
                clock_gettime(CLOCK_MONOTONIC, &t);
            } while (t.tv_sec - t0.tv_sec < 3);
            csend(1, big, 8, 1, 0);
        } else {
            crecv(1, big, 8);
            printf("compute: a rank computing for 3 s was not taken for a hang\n");
        }
    }
    return 0;
}
