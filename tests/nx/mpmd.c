/* MPMD: `courier run -n 1 mpmd host : -n 3 mpmd node`; the host (node 0) gets a
 * greeting from every node and checks their roles and numbers. */
#include <string.h>

#include "../check.h"

int main(int argc, char **argv)
{
    const char *role = argc > 1 ? argv[1] : "";
    long me = mynode(), n = numnodes();
    CHECK(n == 4, "numnodes %ld", n);
    CHECK(myhost() < 0, "myhost %ld is a node's number", myhost());
    if (!strcmp(role, "host")) {
        CHECK(me == 0, "host is node %ld", me);
        for (long i = 1; i < n; i++) {
            char msg[32];
            crecv(5, msg, sizeof msg);
            CHECK(!strcmp(msg, "node"), "node %ld says %s", infonode(), msg);
        }
        printf("mpmd: host got 3 greetings\n");
    } else {
        CHECK(me >= 1 && !strcmp(role, "node"), "node %ld has role %s", me, role);
        csend(5, "node", 5, myhost(), 0);
    }
    return 0;
}
