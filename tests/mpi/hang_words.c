/* Deadlocks whose watchdog report must be in MPI's words (tests/mpi/CMakeLists.txt
 * checks the lines): the call the rank is in and the one that started what it
 * waits for, communicators by name, no internal tags, full call names.
 *   hang_words waitall|bcast|probe|sendrecv|detach|ibcast|fence|sendself|nofinalize|
 *              nofinalize_coll|nofinalize_ok|recvbarrier|rename|finalize
 * (finalize, run with --check: rank 0 waits in MPI_Finalize, which --check's
 * look for leaks makes collective, for rank 1, which waits for rank 0)
 * (sendself: each rank in a synchronous send to itself: a cycle of one;
 * nofinalize: rank 1 returns from main without MPI_Finalize while rank 0
 * waits for its message; the watchdog need not wait out its hang timeout;
 * nofinalize_coll: the same while the others wait in MPI_Barrier, where all
 * but one may wait for a member that waits for rank 1 in turn;
 * nofinalize_ok: rank 1 returns without MPI_Finalize, the others finish
 * (an erroneous program: the job fails, rank 1 says why);
 * recvbarrier: rank 1 waits in MPI_Recv for rank 0, the others in MPI_Barrier
 * (rank 2 waits there for rank 0, which is in it too: not "to enter it");
 * rename: both wait on a communicator, named "before" in their first wait, which
 * they rename "after", and a freed one's context made anew, before they deadlock
 * on it: the board names a context again only when a name changed) */
#include <stdlib.h>
#include <string.h>

#include "mcheck.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, x = 0, y = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Request r[2];
    MPI_Status st;
    const char *m = argc > 1 ? argv[1] : "";
    int peer = 1 - me;
    if (!strcmp(m, "finalize")) { /* rank 1 waits for a message; rank 0 goes on to finalize */
        if (me == 1) MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
    } else if (!strcmp(m, "waitall")) { /* rank 0: two receives nobody sends */
        if (me == 0) {
            MPI_Irecv(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r[0]);
            MPI_Irecv(&y, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        } else {
            MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
        }
    } else if (!strcmp(m, "bcast")) { /* rank 1 in a broadcast rank 0 never joins */
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_set_name(c, "my_comm");
        if (me == 1)
            MPI_Bcast(&x, 1, MPI_INT, 0, c);
        else
            MPI_Recv(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &st);
    } else if (!strcmp(m, "probe")) {
        MPI_Probe(peer, 9, MPI_COMM_WORLD, &st);
    } else if (!strcmp(m, "sendrecv")) { /* both wait for a tag the other never sends */
        MPI_Sendrecv_replace(&y, 1, MPI_INT, peer, 3, peer, 4, MPI_COMM_WORLD, &st);
    } else if (!strcmp(m, "detach")) { /* rank 0's buffered send of a long message */
        static char big[1 << 20], space[(1 << 20) + MPI_BSEND_OVERHEAD];
        if (me == 0) {
            MPI_Buffer_attach(space, sizeof space);
            MPI_Bsend(big, sizeof big, MPI_CHAR, 1, 8, MPI_COMM_WORLD);
            void *b;
            int n;
            MPI_Buffer_detach(&b, &n);
        } else {
            MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &st);
        }
    } else if (!strcmp(m, "fence")) { /* rank 0 in a fence rank 1 never joins */
        static int mem[4];
        MPI_Win w;
        MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
        if (me == 0)
            MPI_Win_fence(0, w);
        else
            MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
    } else if (!strcmp(m, "sendself")) {
        MPI_Ssend(&x, 1, MPI_INT, me, 3, MPI_COMM_WORLD);
    } else if (!strcmp(m, "nofinalize")) {
        if (me == 1) return 0;
        MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &st);
    } else if (!strcmp(m, "nofinalize_ok")) {
        if (me == 1) return 0;
    } else if (!strcmp(m, "nofinalize_coll")) {
        if (me == 1) return 0;
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(m, "recvbarrier")) {
        if (me == 1)
            MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
        else
            MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(m, "rename")) {
        MPI_Comm c, d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_set_name(d, "freed");
        if (me == 0) /* rank 1 waits for it (under --sim every wait is shown) */
            MPI_Send(&x, 1, MPI_INT, 1, 1, d);
        else
            MPI_Recv(&x, 1, MPI_INT, 0, 1, d, &st);
        MPI_Comm_free(&d);
        MPI_Comm_dup(MPI_COMM_WORLD, &c); /* d's context again, once it drained */
        MPI_Comm_set_name(c, "before");
        if (me == 0)
            MPI_Send(&x, 1, MPI_INT, 1, 1, c);
        else
            MPI_Recv(&x, 1, MPI_INT, 0, 1, c, &st);
        MPI_Comm_set_name(c, "after");
        MPI_Recv(&x, 1, MPI_INT, peer, 2, c, &st);
    } else if (!strcmp(m, "ibcast")) { /* rank 1 waits on a broadcast rank 0 never starts */
        if (me == 1) {
            MPI_Ibcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[0]);
            MPI_Wait(&r[0], &st);
        } else {
            MPI_Recv(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &st);
        }
    }
    MPI_Finalize();
    return 0;
}
