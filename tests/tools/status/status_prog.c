/* A job in a known state for `courier ps` and `courier status` (run.sh): three
 * ranks, point-to-point only, so that every counter has one right value.
 *  - rank 0 posts two irecv of type 99 that nothing matches yet, creates the
 *    file argv[1] ("ready") and polls (msgdone: it is running, not blocked,
 *    and it takes in what arrives) until the file argv[2] ("go") exists, at
 *    most 60 s;
 *  - rank 1 sends rank 0 three messages of type 7, 100 bytes each, that rank 0
 *    leaves unreceived until "go", and ends;
 *  - rank 2 blocks in crecv of type 5 (8 bytes, from anyone).
 * On "go" rank 0 sends rank 2 its type 5, receives the three messages, and
 * rank 2 satisfies rank 0's two irecv: the job ends cleanly. */
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../check.h"

int main(int argc, char **argv)
{
    CHECK(argc >= 3, "usage: status_prog READY GO");
    CHECK(numnodes() == 3, "run with 3 nodes");
    long me = mynode(), v = 0;
    char buf[100], small[8] = {0};
    if (me == 1) {
        memset(buf, 7, sizeof buf);
        for (int i = 0; i < 3; i++) csend(7, buf, sizeof buf, 0, 0);
        return 0;
    }
    if (me == 2) {
        crecv(5, small, sizeof small);
        for (int i = 0; i < 2; i++) csend(99, (char *)&v, sizeof v, 0, 0);
        return 0;
    }
    long a = 0, b = 0;
    long ida = irecv(99, (char *)&a, sizeof a), idb = irecv(99, (char *)&b, sizeof b);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0, "cannot create %s", argv[1]);
    close(fd);
    struct timespec nap = {0, 20000000};
    for (int i = 0; i < 3000 && access(argv[2], F_OK) != 0; i++) {
        CHECK(!msgdone(ida) && !msgdone(idb), "a type 99 message came before go");
        nanosleep(&nap, NULL);
    }
    CHECK(access(argv[2], F_OK) == 0, "no %s after 60 s", argv[2]);
    csend(5, small, sizeof small, 2, 0);
    for (int i = 0; i < 3; i++) {
        crecv(7, buf, sizeof buf);
        CHECK(infocount() == 100 && buf[99] == 7, "message %d of type 7 is wrong", i);
    }
    msgwait(ida);
    msgwait(idb);
    return 0;
}
