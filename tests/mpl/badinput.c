/* Bad arguments to MPL calls: `badinput CASE`; each must end the job with one
 * line naming the call, the task and the reason (checked by tests/expect.sh). */
#include <string.h>

#include <courier/mpl.h>

#include "../check.h"

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    char buf[64];
    int n, me, src = DONTCARE, type = DONTCARE, nbytes, id, gid, list[2] = {0, 0}, v = 1;
    mpc_environ(&n, &me);
    if (me != 0) { /* task 1 only serves the cases that need a message */
        if (!strcmp(c, "overflow")) mpc_bsend(buf, sizeof buf, 0, 1);
        type = 99;
        mpc_brecv(buf, 8, &src, &type, &nbytes); /* ended by the launcher */
        return 0;
    }
    if (!strcmp(c, "task")) mpc_bsend(buf, 8, 5, 1);
    if (!strcmp(c, "neglen")) mpc_bsend(buf, -5, 1, 1);
    if (!strcmp(c, "nullbuf")) mpc_bsend(NULL, 8, 1, 1);
    if (!strcmp(c, "negtype")) mpc_bsend(buf, 8, 1, -4);
    if (!strcmp(c, "src")) src = 9, mpc_brecv(buf, 8, &src, &type, &nbytes);
    if (!strcmp(c, "stride")) mpc_bvsend(buf, 4, 16, 8, 1, 1);
    if (!strcmp(c, "blocks")) mpc_bvsend(buf, -1, 4, 8, 1, 1);
    if (!strcmp(c, "gid")) mpc_sync(17);
    if (!strcmp(c, "func")) mpc_combine(buf, buf + 8, 8, NULL, ALLGRP);
    if (!strcmp(c, "msgid")) id = 4242, mpc_wait(&id, &nbytes);
    if (!strcmp(c, "status")) {      /* mpc_status completed it: one wait takes its count, */
        mpc_send(buf, 8, 0, 3, &id); /* a second names the id */
        while (mpc_status(id) == MPL_NOT_COMPLETED) {
        }
        mpc_wait(&id, &nbytes);
        mpc_wait(&id, &nbytes);
    }
    if (!strcmp(c, "twice")) {
        mpc_send(buf, 8, 0, 3, &id);
        mpc_wait(&id, &nbytes);
        mpc_wait(&id, &nbytes);
    }
    if (!strcmp(c, "width")) { /* a length variable neither 4 nor 8 bytes wide */
        short sn;
        mpc_brecv(buf, 8, &src, &type, &sn);
    }
    if (!strcmp(c, "biglen")) { /* an 8-byte length beyond INT_MAX, by reference */
        size_t big = (size_t)1 << 31;
        int dest = 1, t = 1;
        mp_bsend(buf, &big, &dest, &t);
    }
    if (!strcmp(c, "root")) mpc_bcast(buf, 8, 2, ALLGRP);
    if (!strcmp(c, "dup")) mpc_group(2, list, 0, &gid);
    if (!strcmp(c, "multiple")) mpc_combine(buf, buf + 8, 6, i_vadd, ALLGRP);
    if (!strcmp(c, "overflow")) {
        mpc_task_set(&v, 1, MPL_SET_OVERFLOW_ERROR);
        src = 1, type = 1;
        mpc_brecv(buf, 10, &src, &type, &nbytes);
    }
    return 0;
}
