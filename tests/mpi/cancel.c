/* MPI_Cancel: a send is never recalled — the cancel returns MPI_SUCCESS, the
 * send completes and MPI_Test_cancelled says false, and the receiver gets every
 * such message intact — for every protocol: empty, eager, rendezvous (above
 * the eager limit), synchronous, buffered, and a send already complete. A
 * receive that has not matched is cancelled: its status says so, and a message
 * sent later goes to the next receive. Regression: cancelling a send ended the
 * job. Needs 2 ranks. */
#include <stdlib.h>
#include <string.h>

#include "mcheck.h"

#define BIG (256 * 1024)

static void fill(char *b, int n, int seed)
{
    for (int i = 0; i < n; i++) b[i] = (char)(seed + i * 7);
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np == 2, "needs 2 ranks, has %d", np);
    const int sizes[] = {0, 8, 4096, BIG};
    const int ns = (int)(sizeof sizes / sizeof *sizes);
    char *buf = malloc(BIG), *want = malloc(BIG);
    static char bsend_space[BIG + 4 * MPI_BSEND_OVERHEAD];
    OK(MPI_Buffer_attach(bsend_space, sizeof bsend_space));
    if (me == 0) {
        for (int k = 0; k < ns; k++) {
            for (int mode = 0; mode < 3; mode++) { /* Isend, Issend, Ibsend */
                int tag = k * 10 + mode;
                fill(buf, sizes[k], tag);
                MPI_Request r;
                if (mode == 0) OK(MPI_Isend(buf, sizes[k], MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r));
                if (mode == 1) OK(MPI_Issend(buf, sizes[k], MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r));
                if (mode == 2) OK(MPI_Ibsend(buf, sizes[k], MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r));
                OK(MPI_Cancel(&r));
                MPI_Status st;
                OK(MPI_Wait(&r, &st));
                CHECK(r == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
                int flag = -1;
                OK(MPI_Test_cancelled(&st, &flag));
                CHECK(flag == 0, "send of %d bytes (mode %d) says cancelled", sizes[k], mode);
            }
        }
        /* Cancel after the send is complete: nothing happens. */
        MPI_Request r;
        OK(MPI_Isend(buf, 8, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &r));
        int done = 0;
        while (!done) OK(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
        CHECK(r == MPI_REQUEST_NULL, "completed request not freed");
        /* A receive cancelled before any message: rank 1 sends only after the barrier. */
        OK(MPI_Irecv(buf, 8, MPI_BYTE, 1, 200, MPI_COMM_WORLD, &r));
        OK(MPI_Cancel(&r));
        MPI_Status st;
        OK(MPI_Wait(&r, &st));
        int flag = 0;
        OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 1, "an unmatched receive was not cancelled");
        OK(MPI_Barrier(MPI_COMM_WORLD));
        long v = 0;
        OK(MPI_Recv(&v, 1, MPI_LONG, 1, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(v == 4242, "the message after a cancelled receive is %ld", v);
    } else {
        /* Every cancelled send still arrives, in order, intact. */
        for (int k = 0; k < ns; k++) {
            for (int mode = 0; mode < 3; mode++) {
                int tag = k * 10 + mode;
                fill(want, sizes[k], tag);
                memset(buf, 0, BIG);
                MPI_Status st;
                OK(MPI_Recv(buf, BIG, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
                int count;
                OK(MPI_Get_count(&st, MPI_BYTE, &count));
                CHECK(count == sizes[k], "tag %d: %d bytes, want %d", tag, count, sizes[k]);
                CHECK(!memcmp(buf, want, (size_t)sizes[k]), "tag %d: data differ", tag);
            }
        }
        OK(MPI_Recv(buf, 8, MPI_BYTE, 0, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        long v = 4242;
        OK(MPI_Send(&v, 1, MPI_LONG, 0, 200, MPI_COMM_WORLD));
    }
    void *b;
    int bs;
    OK(MPI_Buffer_detach(&b, &bs));
    if (me == 0) printf("cancel: sends complete uncancelled, receives cancel\n");
    free(buf);
    free(want);
    OK(MPI_Finalize());
    return 0;
}
