/* A rank is stopped (SIGSTOP, or a debugger attached) while the other waits for
 * it: not a deadlock. Node 1 writes its pid to $COURIER_TEST_KILL_FILE and
 * waits in crecv for node 0; node 0 waits, outside any call, for the file
 * $COURIER_TEST_KILL_FILE.go (the test makes it once node 1 is stopped), then
 * sends to node 1 and waits in crecv for its answer. While node 1 is stopped
 * both are in a communication call and nothing moves; once it is continued the
 * job ends well. Run by tests/reliability/stopped.sh. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

int main(void)
{
    long me = mynode();
    CHECK(numnodes() == 2, "run with 2 nodes");
    const char *path = getenv("COURIER_TEST_KILL_FILE");
    CHECK(path && *path, "COURIER_TEST_KILL_FILE is not set; run me with stopped.sh");
    char tmp[4096], go[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    snprintf(go, sizeof go, "%s.go", path);
    long x = 0;
    if (me == 1) {
        FILE *f = fopen(tmp, "w");
        CHECK(f && fprintf(f, "%d\n", (int)getpid()) > 0 && fclose(f) == 0 &&
                  rename(tmp, path) == 0,
              "cannot write %s", path);
        crecv(1, (char *)&x, sizeof x);
        x++;
        csend(2, (char *)&x, sizeof x, 0, 0);
    } else {
        while (access(go, F_OK) != 0) nanosleep(&(struct timespec){0, 10000000}, NULL);
        x = 41;
        csend(1, (char *)&x, sizeof x, 1, 0);
        crecv(2, (char *)&x, sizeof x);
        CHECK(x == 42, "got %ld back, not 42", x);
        printf("stopped: node 1 answered after it was continued\n");
    }
    return 0;
}
