/* MPI-4.1 session buffers, without MPI_Init: a communicator made from a
 * session's group with no buffer anywhere refuses a buffered send
 * (MPI_ERR_BUFFER); with the session's attached it sends through it; its own
 * buffer comes first (a message that fits the session's but not its own is
 * refused until it is detached), and a communicator split from it uses the
 * session's too; MPI_Session_flush_buffer and
 * _iflush_buffer (waited on) return; detach gives back the buffer and its
 * size, the _c forms too, MPI_BUFFER_AUTOMATIC gives size 0; a second attach,
 * a detach with none attached, a negative size and a flush of a session
 * without a buffer are MPI_ERR_BUFFER. Rank 0 prints "sessbuf ok". */
#include <string.h>

#include "mcheck.h"

static int cls(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

int main(void)
{
    MPI_Session s;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Group g;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_Comm c;
    OK(MPI_Comm_create_from_group(g, "sessbuf", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int me, np;
    OK(MPI_Comm_rank(c, &me));
    OK(MPI_Comm_size(c, &np));
    int to = (me + 1) % np, from = (me + np - 1) % np;
    int x[4] = {me, me + 1, me + 2, me + 3}, y[4];

    CHECK(cls(MPI_Bsend(x, 4, MPI_INT, to, 1, c)) == MPI_ERR_BUFFER, "no buffer: not refused");
    CHECK(cls(MPI_Session_flush_buffer(s)) == MPI_ERR_BUFFER, "flush without a buffer");
    int dsize = -1;
    void *dbuf = NULL;
    CHECK(cls(MPI_Session_detach_buffer(s, &dbuf, &dsize)) == MPI_ERR_BUFFER,
          "detach without a buffer");
    static char big[4096], small[64];
    CHECK(cls(MPI_Session_attach_buffer(s, big, -1)) == MPI_ERR_BUFFER, "negative size taken");
    OK(MPI_Session_attach_buffer(s, big, sizeof big));
    CHECK(cls(MPI_Session_attach_buffer(s, big, sizeof big)) == MPI_ERR_BUFFER,
          "a second attach taken");

    /* Through the session's buffer. */
    OK(MPI_Bsend(x, 4, MPI_INT, to, 1, c));
    OK(MPI_Recv(y, 4, MPI_INT, from, 1, c, MPI_STATUS_IGNORE));
    CHECK(y[0] == from && y[3] == from + 3, "received %d..%d from %d", y[0], y[3], from);
    OK(MPI_Session_flush_buffer(s));

    /* The communicator's own buffer first: 1000 ints fit the session's only. */
    static int many[1000], got[1000];
    for (int i = 0; i < 1000; i++) many[i] = me * 1000 + i;
    OK(MPI_Comm_attach_buffer(c, small, sizeof small));
    CHECK(cls(MPI_Bsend(many, 1000, MPI_INT, to, 2, c)) == MPI_ERR_BUFFER,
          "the session's buffer used while the communicator has one");
    OK(MPI_Comm_detach_buffer(c, &dbuf, &dsize));
    CHECK(dbuf == small && dsize == (int)sizeof small, "comm detach: %p %d", dbuf, dsize);
    OK(MPI_Bsend(many, 1000, MPI_INT, to, 2, c));
    MPI_Request r;
    OK(MPI_Session_iflush_buffer(s, &r));
    OK(MPI_Recv(got, 1000, MPI_INT, from, 2, c, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL && got[0] == from * 1000 && got[999] == from * 1000 + 999,
          "got %d..%d from %d", got[0], got[999], from);

    /* A communicator split from it uses the session's buffer too. */
    MPI_Comm sub;
    OK(MPI_Comm_split(c, 0, me, &sub));
    OK(MPI_Bsend(x, 4, MPI_INT, to, 5, sub));
    OK(MPI_Recv(y, 4, MPI_INT, from, 5, sub, MPI_STATUS_IGNORE));
    CHECK(y[0] == from, "split: received %d from %d", y[0], from);
    OK(MPI_Comm_free(&sub));

    OK(MPI_Session_detach_buffer(s, &dbuf, &dsize));
    CHECK(dbuf == big && dsize == (int)sizeof big, "detach: %p %d", dbuf, dsize);
    CHECK(cls(MPI_Bsend(x, 4, MPI_INT, to, 3, c)) == MPI_ERR_BUFFER, "detached: not refused");

    MPI_Count csize = -1;
    OK(MPI_Session_attach_buffer_c(s, big, (MPI_Count)sizeof big));
    OK(MPI_Session_detach_buffer_c(s, &dbuf, &csize));
    CHECK(dbuf == big && csize == (MPI_Count)sizeof big, "detach_c: %p %lld", dbuf,
          (long long)csize);
    OK(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
    OK(MPI_Bsend(x, 4, MPI_INT, to, 4, c));
    OK(MPI_Recv(y, 4, MPI_INT, from, 4, c, MPI_STATUS_IGNORE));
    OK(MPI_Session_detach_buffer(s, &dbuf, &dsize));
    CHECK(dsize == 0, "automatic: size %d", dsize);

    OK(MPI_Comm_free(&c));
    OK(MPI_Group_free(&g));
    if (me == 0) printf("sessbuf ok\n");
    OK(MPI_Session_finalize(&s));
    return 0;
}
