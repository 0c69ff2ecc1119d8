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
    long info[8], lens[2] = {8, -4}, cnt;
    char y[64], work[64];
    if (mynode() != 0) { /* node 1 only serves the cases that need it */
        if (!strcmp(c, "truncate")) csend(1, buf, sizeof buf, 0, 0);
        if (!strcmp(c, "gcol_small")) gcol(buf, 8, y, sizeof y, &cnt);
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
    /* the Paragon's calls */
    if (!strcmp(c, "crecvx_node")) crecvx(1, buf, 8, 77, -1, info);
    if (!strcmp(c, "crecvx_ptype")) crecvx(1, buf, 8, 1, -5, info);
    if (!strcmp(c, "irecvx_neglen")) irecvx(1, buf, -5, 1, -1, info);
    if (!strcmp(c, "cprobex_node")) cprobex(-1, 2, -1, info);
    if (!strcmp(c, "iprobex_typesel")) iprobex(LONG_MIN, -1, -1, info);
    if (!strcmp(c, "csendx_node")) csendx(1, buf, 8, 77, 0, info);
    if (!strcmp(c, "isendx_nullbuf")) isendx(1, NULL, 10, 1, 0, info);
    if (!strcmp(c, "giprod_neg")) giprod(&v, -2, &v);
    if (!strcmp(c, "gior_null")) gior(NULL, 3, &v);
    if (!strcmp(c, "gcol_neglen")) gcol(buf, -1, y, sizeof y, &cnt);
    if (!strcmp(c, "gcol_small")) gcol(buf, 8, y, 8, &cnt);
    if (!strcmp(c, "gcolx_neglen")) gcolx(buf, lens, y);
    if (!strcmp(c, "gopf_null")) gopf(buf, 8, work, NULL);
    return 0;
}
