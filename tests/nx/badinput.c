/* Bad arguments to NX/2 calls: `badinput CASE`; each must end the job with one
 * line naming the call, the node and the reason (checked by tests/expect.sh). */
#include <limits.h>
#include <string.h>

#include "../check.h"

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    char buf[64];
    long v = 0;
    if (mynode() != 0) { /* node 1 only serves the cases that need a message */
        if (!strcmp(c, "truncate")) csend(1, buf, sizeof buf, 0, 0);
        crecv(99, (char *)&v, sizeof v); /* ended by the launcher */
        return 0;
    }
    if (!strcmp(c, "neglen")) csend(1, buf, -5, 1, 0);
    if (!strcmp(c, "nullbuf")) crecv(1, NULL, 10);
    if (!strcmp(c, "node")) csend(1, buf, 8, 77, 0);
    if (!strcmp(c, "negtype")) csend(-3, buf, 8, 1, 0);
    if (!strcmp(c, "typesel")) crecv(LONG_MIN, buf, 8);
    if (!strcmp(c, "mid")) msgwait(123456);
    if (!strcmp(c, "twice")) {
        long id = isend(1, buf, 8, 0, 0);
        msgwait(id);
        msgwait(id);
    }
    if (!strcmp(c, "truncate")) crecv(1, buf, 10);
    if (!strcmp(c, "masktrap")) masktrap(5);
    return 0;
}
