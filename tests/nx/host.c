/* An iPSC host program, as they were written (with tests/nx/node.c): it takes
 * a cube, loads the node program, sends the problem to every node with one
 * csend to -1, collects a part from each node and the nodes' global sum from
 * node 0, waits for the nodes to end and releases the cube. Run as
 * `courier run -n 1 nx_host : -n N nx_node`: the host is outside the cube. */
#include <courier/cube.h>
#include <string.h>

#include "../check.h"

int main(void)
{
    CHECK(getcube("mycube", "d2", NULL, 0) == 0, "getcube");
    CHECK(setpid(1) == 0, "setpid");
    CHECK(load("nx_node", -1, 0) == 0, "load");
    long nodes = numnodes(), n = 100000;
    CHECK(nodes >= 1, "numnodes %ld", nodes);
    CHECK(mynode() == myhost(), "the host is node %ld, myhost() %ld", mynode(), myhost());
    csend(10, (char *)&n, sizeof n, -1, 0); /* every node */
    double total = 0, part, sum;
    char seen[64] = {0};
    for (long i = 0; i < nodes; i++) {
        crecv(20, (char *)&part, sizeof part);
        long from = infonode();
        CHECK(from >= 0 && from < nodes && from < 64 && !seen[from], "a part from node %ld", from);
        CHECK(infocount() == sizeof part, "count %ld", infocount());
        seen[from] = 1;
        total += part;
    }
    long info[8];
    crecvx(30, (char *)&sum, sizeof sum, 0, -1, info); /* node 0's, by node */
    CHECK(info[2] == 0 && info[0] == 30, "the sum came from node %ld, type %ld", info[2], info[0]);
    double want = (double)n * (double)(n - 1) / 2;
    CHECK(total == want && sum == want, "parts %.0f, global sum %.0f, want %.0f", total, sum, want);
    CHECK(waitall(-1, -1) == 0, "waitall");
    CHECK(killcube(-1, -1) == 0, "killcube");
    CHECK(relcube("mycube") == 0, "relcube");
    printf("host: %ld nodes, sum %.0f\n", nodes, sum);
    return 0;
}
