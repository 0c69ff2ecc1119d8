/* A long message crossing a flood: node 0 starts many small sends to node 1,
 * then receives a long message from node 1; node 1 first sends that long
 * message, then takes the small ones. With a tiny unexpected-message budget the
 * reply node 0 waits for (FIN, CTS or DATA) sits behind small messages node 0
 * cannot buffer: the engine must still take them rather than deadlock. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"

enum { N = 300, SMALL = 100, LONG = 200000 };

int main(void)
{
    long me = mynode();
    CHECK(numnodes() == 2, "run with 2 nodes");
    static char small[N][SMALL], big[LONG];
    if (me == 0) {
        long ids[N];
        for (int i = 0; i < N; i++) {
            memset(small[i], i, SMALL);
            ids[i] = isend(1, small[i], SMALL, 1, 0);
        }
        crecv(2, big, LONG);
        for (long k = 0; k < LONG; k++) CHECK(big[k] == (char)(k % 251), "long byte %ld", k);
        for (int i = 0; i < N; i++) msgwait(ids[i]);
    } else {
        for (long k = 0; k < LONG; k++) big[k] = (char)(k % 251);
        csend(2, big, LONG, 0, 0);
        for (int i = 0; i < N; i++) {
            char b[SMALL];
            crecv(1, b, SMALL);
            CHECK(b[0] == (char)i && b[SMALL - 1] == (char)i, "small message %d", i);
        }
        printf("crossing: a long message crossed %d small ones\n", N);
    }
    return 0;
}
