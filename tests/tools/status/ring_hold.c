/* A job whose ranks talk to few peers, held so that `courier status` can read
 * how much shared memory it took (run.sh memory): each rank sends one message
 * to its right neighbour and receives one from its left, the job synchronizes
 * (gsync), rank 0 creates argv[1] ("ready") and waits for argv[2] ("go"), at
 * most 60 s, and the job synchronizes again. Channels are opened only between
 * the pairs that talk: the ring's and the barrier's. */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "../../check.h"

int main(int argc, char **argv)
{
    CHECK(argc >= 3, "usage: ring_hold READY GO");
    long me = mynode(), n = numnodes(), got = -1;
    csend(3, (char *)&me, sizeof me, (me + 1) % n, 0);
    crecv(3, (char *)&got, sizeof got);
    CHECK(got == (me + n - 1) % n, "rank %ld got %ld from its left, not %ld", me, got,
          (me + n - 1) % n);
    gsync();
    if (me == 0) {
        int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        CHECK(fd >= 0, "cannot create %s", argv[1]);
        close(fd);
        struct timespec nap = {0, 20000000};
        for (int i = 0; i < 3000 && access(argv[2], F_OK) != 0; i++) nanosleep(&nap, NULL);
        CHECK(access(argv[2], F_OK) == 0, "no %s after 60 s", argv[2]);
    }
    gsync();
    return 0;
}
