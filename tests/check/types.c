/* courier run --check=types: a send and its receive that disagree on the type
 * signature, and the correct twin. Two ranks; argv[1] says which:
 *   bad       MPI_Send 4 x MPI_INT, MPI_Recv 4 x MPI_FLOAT (eager);
 *   bad_long  MPI_Isend 100000 x MPI_DOUBLE, MPI_Irecv as MPI_LONG_LONG_INT
 *             (rendezvous: the signature travels with the request to send);
 *   ok        what MPI allows: the same basic sequence spelled by other types
 *             (contiguous(2, MPI_INT) x 2 against 4 x MPI_INT, a vector),
 *             a receive longer than the message, MPI_BYTE on one side, a
 *             struct on both, every send mode, a long message, MPI_Sendrecv;
 *             prints "check types ok".
 * Unchecked, "bad" runs to its end and says so. */
#include <string.h>

#include "../mpi/mcheck.h"

static int me;

static void bad(void)
{
    int x[4] = {1, 2, 3, 4};
    float f[4];
    if (me == 0) OK(MPI_Send(x, 4, MPI_INT, 1, 7, MPI_COMM_WORLD));
    if (me == 1) OK(MPI_Recv(f, 4, MPI_FLOAT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (me == 1) printf("check types: bad ran without a report\n"); /* not checking */
}

static void bad_long(void)
{
    enum { N = 100000 };
    static double d[N];
    static long long l[N];
    MPI_Request r;
    if (me == 0) OK(MPI_Isend(d, N, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD, &r));
    if (me == 1) OK(MPI_Irecv(l, N, MPI_LONG_LONG_INT, 0, 8, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

struct pt {
    int id;
    double v[2];
};

static void ok(void)
{
    int a[8] = {0}, b[8] = {0};
    MPI_Datatype pair, vec, st;
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    int bl[2] = {1, 2};
    MPI_Aint dis[2] = {offsetof(struct pt, id), offsetof(struct pt, v)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, bl, dis, ty, &st));
    OK(MPI_Type_commit(&st));
    struct pt p[3] = {{1, {1, 2}}, {2, {3, 4}}, {3, {5, 6}}}, q[3];
    enum { N = 100000 };
    static double big[N], big2[N];
    if (me == 0) {
        for (int i = 0; i < 8; i++) a[i] = i;
        OK(MPI_Send(a, 2, pair, 1, 1, MPI_COMM_WORLD));         /* 4 ints as 2 pairs */
        OK(MPI_Send(a, 4, MPI_INT, 1, 2, MPI_COMM_WORLD));      /* into a longer receive */
        OK(MPI_Send(a, 2, vec, 1, 3, MPI_COMM_WORLD));          /* 4 ints, strided */
        OK(MPI_Send(a, 3, MPI_INT, 1, 4, MPI_COMM_WORLD));      /* into MPI_BYTE */
        OK(MPI_Send(a, 12, MPI_BYTE, 1, 5, MPI_COMM_WORLD));    /* from MPI_BYTE */
        OK(MPI_Ssend(p, 3, st, 1, 6, MPI_COMM_WORLD));          /* a struct both sides */
        OK(MPI_Send(big, N, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD)); /* rendezvous */
        OK(MPI_Send(a, 0, MPI_INT, 1, 8, MPI_COMM_WORLD));      /* empty, as floats */
        int bs = 1024 + MPI_BSEND_OVERHEAD;
        char *buf = malloc((size_t)bs);
        OK(MPI_Buffer_attach(buf, bs));
        OK(MPI_Bsend(a, 2, MPI_INT, 1, 9, MPI_COMM_WORLD));
        OK(MPI_Buffer_detach(&buf, &bs));
        free(buf);
        MPI_Request r;
        OK(MPI_Isend(a, 4, MPI_INT, 1, 10, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Sendrecv(a, 4, MPI_INT, 1, 11, b, 4, MPI_INT, 1, 12, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    } else if (me == 1) {
        OK(MPI_Recv(b, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(b[3] == 3, "pair-sent ints");
        OK(MPI_Recv(b, 8, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(b, 2, pair, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(b[1] == 2 && b[3] == 5, "vector-sent ints: %d %d", b[1], b[3]);
        OK(MPI_Recv(b, 12, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(b, 3, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(q, 3, st, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(q[2].v[1] == 6, "struct");
        OK(MPI_Recv(big2, N, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(b, 4, MPI_FLOAT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_Request r;
        OK(MPI_Irecv(b, 2, MPI_INT, 0, 9, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Irecv(b, 2, pair, 0, 10, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Sendrecv(a, 4, MPI_INT, 0, 12, b, 2, pair, 0, 11, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    }
    MPI_Type_free(&pair);
    MPI_Type_free(&vec);
    MPI_Type_free(&st);
    if (me == 0) printf("check types ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *c = argc > 1 ? argv[1] : "ok";
    if (!strcmp(c, "bad"))
        bad();
    else if (!strcmp(c, "bad_long"))
        bad_long();
    else
        ok();
    MPI_Finalize();
    return 0;
}
