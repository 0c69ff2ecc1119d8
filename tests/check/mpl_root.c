/* courier run --check=coll in MPL: a broadcast whose tasks disagree on the
 * root, and the correct twin. Any number of tasks (>= 2); argv[1] says which:
 *   bad  mpc_bcast with each task naming itself the root (unchecked, each
 *        task broadcasts its own buffer and the others wait: a hang, or a
 *        wrong result; checked: one report naming every task's call);
 *   ok   mpc_sync, mpc_bcast, mpc_reduce, mpc_combine, mpc_gather and
 *        mpc_scatter called alike by every task; prints "check mpl ok". */
#include <string.h>

#include <courier/mpl.h>

#include "../check.h"

static void sum(int *a, int *b, int *out, int *len)
{
    for (int i = 0; i < *len / (int)sizeof(int); i++) out[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
    int n, me, buf[4] = {1, 2, 3, 4}, out[4], all[64];
    mpc_environ(&n, &me);
    if (argc > 1 && !strcmp(argv[1], "bad")) {
        mpc_bcast(buf, sizeof buf, me, ALLGRP);
    } else {
        CHECK(mpc_sync(ALLGRP) == 0, "sync");
        CHECK(mpc_bcast(buf, sizeof buf, n - 1, ALLGRP) == 0, "bcast");
        CHECK(mpc_reduce(buf, out, sizeof buf, 0, (mpl_reduce_fn)sum, ALLGRP) == 0, "reduce");
        CHECK(mpc_combine(buf, out, sizeof buf, (mpl_reduce_fn)sum, ALLGRP) == 0, "combine");
        CHECK(mpc_gather(buf, all, sizeof(int), 1, ALLGRP) == 0, "gather");
        CHECK(mpc_scatter(all, out, sizeof(int), 1, ALLGRP) == 0, "scatter");
        if (me == 0) printf("check mpl ok\n");
    }
    return 0;
}
