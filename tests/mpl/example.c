/* example2 of seed 003: both tasks send N bytes with a blocking send, then
 * receive. It completes only when N bytes can be buffered (see docs/mpl.md:
 * COURIER_EAGER_LIMIT per message always; longer messages are taken by an idle
 * receiver while its unexpected-message budget and single copy allow), and
 * deadlocks otherwise, which the watchdog of courier run reports.
 *   example N */
#include <stdlib.h>
#include <string.h>

#include <courier/mpl.h>

#include "../check.h"

int main(int argc, char **argv)
{
    int taskid, numtask, other, nbytes, type;
    long N = argc > 1 ? atol(argv[1]) : 1000;
    char *a = malloc((size_t)N + 1);
    mpc_environ(&numtask, &taskid);
    memset(a, 'a' + taskid, (size_t)N);
    int msglen = (int)N;
    type = 1;
    if (taskid == 0) {
        other = 1;
        mpc_bsend(a, msglen, other, type);
        mpc_brecv(a, msglen, &other, &type, &nbytes);
    } else if (taskid == 1) {
        other = 0;
        mpc_bsend(a, msglen, other, type);
        mpc_brecv(a, msglen, &other, &type, &nbytes);
    }
    if (taskid < 2) CHECK(nbytes == msglen && (N == 0 || a[N - 1] == 'a' + 1 - taskid), "data");
    if (taskid == 0) printf("example2: %ld bytes each way completed\n", N);
    free(a);
    return 0;
}
