/* MPI-4.1 buffers per communicator: a buffered send on a communicator with a
 * buffer of its own is charged to that buffer (too small: MPI_ERR_BUFFER,
 * while the same send on MPI_COMM_WORLD fits the process's buffer), and to the
 * process's once detached; MPI_Comm_iflush_buffer, MPI_Buffer_iflush,
 * MPI_Comm_flush_buffer, MPI_Buffer_flush; MPI_BUFFER_AUTOMATIC (no bound).
 * Rank 0 sends to rank 1; rank 0 prints "bufs ok". */
#include <string.h>

#include "mcheck.h"

#define BIG (1 << 20)

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(np >= 2, "needs 2 ranks");
    static char pbuf[BIG + 1024], small[100 + MPI_BSEND_OVERHEAD], msg[BIG], in[BIG];
    MPI_Comm c1;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
    OK(MPI_Comm_set_errhandler(c1, MPI_ERRORS_RETURN));
    if (me == 0) {
        OK(MPI_Buffer_attach(pbuf, sizeof pbuf));
        OK(MPI_Comm_attach_buffer(c1, small, sizeof small));
        CHECK(MPI_Comm_attach_buffer(c1, small, sizeof small) != MPI_SUCCESS, "attached twice");
        for (int i = 0; i < BIG; i++) msg[i] = (char)(i * 7);
        int cls = 0, rc = MPI_Bsend(msg, 200, MPI_CHAR, 1, 1, c1);
        OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_BUFFER, "200 bytes fit a 100-byte buffer: class %d", cls);
        OK(MPI_Bsend(msg, 200, MPI_CHAR, 1, 1, MPI_COMM_WORLD)); /* the process's buffer */
        OK(MPI_Bsend(msg, 100, MPI_CHAR, 1, 2, c1));
        MPI_Request r[2];
        OK(MPI_Comm_iflush_buffer(c1, &r[0]));
        OK(MPI_Buffer_iflush(&r[1]));
        OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        void *addr = NULL;
        int size = 0;
        OK(MPI_Comm_detach_buffer(c1, &addr, &size));
        CHECK(addr == small && size == (int)sizeof small, "detached %p %d", addr, size);
        OK(MPI_Bsend(msg, 200, MPI_CHAR, 1, 3, c1)); /* the process's buffer now */
        /* no bound: four sends of 1 MiB, more than the process's buffer holds */
        OK(MPI_Comm_attach_buffer(c1, MPI_BUFFER_AUTOMATIC, 0));
        for (int k = 0; k < 4; k++) OK(MPI_Bsend(msg, BIG, MPI_CHAR, 1, 4, c1));
        OK(MPI_Comm_flush_buffer(c1));
        OK(MPI_Comm_detach_buffer(c1, &addr, &size));
        CHECK(addr == MPI_BUFFER_AUTOMATIC, "automatic detached as %p", addr);
        OK(MPI_Buffer_flush());
        OK(MPI_Buffer_detach(&addr, &size));
        CHECK(addr == pbuf, "process buffer detached as %p", addr);
    } else if (me == 1) {
        OK(MPI_Recv(in, 200, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(in[199] == (char)(199 * 7), "world message");
        OK(MPI_Recv(in, 100, MPI_CHAR, 0, 2, c1, MPI_STATUS_IGNORE));
        CHECK(in[99] == (char)(99 * 7), "c1 message");
        MPI_Status st;
        OK(MPI_Recv(in, BIG, MPI_CHAR, 0, MPI_ANY_TAG, c1, &st));
        CHECK(st.MPI_TAG == 3, "the failed send arrived (tag %d)", st.MPI_TAG);
        for (int k = 0; k < 4; k++) {
            OK(MPI_Recv(in, BIG, MPI_CHAR, 0, 4, c1, MPI_STATUS_IGNORE));
            CHECK(in[BIG - 1] == (char)((BIG - 1) * 7), "big message %d", k);
        }
    }
    OK(MPI_Comm_free(&c1));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (!me) printf("bufs ok\n");
    OK(MPI_Finalize());
    return 0;
}
