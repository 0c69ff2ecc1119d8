/* The node program of tests/nx/host.c: nodes 0..N-1 of the cube, the host
 * outside it. Each gets the problem from the host, sends its part back to
 * myhost(), and the nodes (not the host) add their parts with gdsum; node 0
 * also sends a word to every other node (csend to -1 reaches nodes only). */
#include <courier/nx.h>

#include "../check.h"

int main(void)
{
    long me = mynode(), nodes = numnodes(), n;
    CHECK(me >= 0 && me < nodes, "node %ld of %ld", me, nodes);
    CHECK(myhost() < 0, "myhost() %ld is a node's number", myhost());
    crecv(10, (char *)&n, sizeof n);
    CHECK(infonode() == myhost(), "the problem came from node %ld", infonode());
    double part = 0;
    for (long i = me; i < n; i += nodes) part += (double)i;
    csend(20, (char *)&part, sizeof part, myhost(), 0);
    double sum = part, work;
    gdsum(&sum, 1, &work);
    if (me == 0) {
        csend(30, (char *)&sum, sizeof sum, myhost(), 0);
        csend(40, (char *)&me, sizeof me, -1, 0);
    } else {
        long from;
        crecv(40, (char *)&from, sizeof from);
        CHECK(from == 0 && infonode() == 0, "the word came from node %ld", infonode());
    }
    gsync();
    return 0;
}
