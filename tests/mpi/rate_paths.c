/* The short paths of a small message (docs/engine.md, "the message rate")
 * keep MPI's meaning. Any number of ranks >= 2; each rank sends to its right
 * neighbour and receives from its left in a communicator whose ranks run the
 * other way from the world's (MPI_Comm_split, key -rank), so that a status's
 * source must be translated.
 *
 *  - windows of 64 MPI_Isend/MPI_Irecv of 0-48 bytes (some with NULL buffers
 *    and count 0), completed by MPI_Waitall with statuses: every source, tag
 *    and count right, MPI_ERROR set to MPI_SUCCESS (it was something else),
 *    every handle MPI_REQUEST_NULL, the data right and in order per sender,
 *    with MPI_ANY_SOURCE and MPI_ANY_TAG receives among them;
 *  - MPI_Wait and MPI_Test leave a status's MPI_ERROR as it was (MPI-3.1
 *    §3.2.5) and fill the rest;
 *  - a message longer than its receive in a window: MPI_ERR_IN_STATUS with
 *    MPI_ERR_TRUNCATE in its status (MPI_ERRORS_RETURN), the others fine;
 *  - arguments the inline test does not pass are still reported: a rank out
 *    of range, a negative tag, a NULL buffer with a count, an uncommitted
 *    datatype, MPI_PROC_NULL (allowed). */
#include <string.h>

#include "mcheck.h"

#define W 64

static int rank, size;

static void fill(char *b, int n, int from, int i)
{
    for (int k = 0; k < n; k++) b[k] = (char)(from * 31 + i * 7 + k);
}

static void windows(MPI_Comm c, int crank, int csize)
{
    int right = (crank + 1) % csize, left = (crank + csize - 1) % csize;
    static char sb[W][48], rb[W][48];
    MPI_Request rq[2 * W];
    MPI_Status st[2 * W];
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < W; i++) {
            int n = (i * 5 + round) % 49, any = i % 7 == 3;
            fill(sb[i], n, crank, i);
            memset(rb[i], 0, sizeof rb[i]);
            OK(MPI_Irecv(n ? rb[i] : NULL, n, MPI_CHAR, any ? MPI_ANY_SOURCE : left,
                         any ? MPI_ANY_TAG : i, c, &rq[i]));
        }
        for (int i = 0; i < W; i++) {
            int n = (i * 5 + round) % 49;
            OK(MPI_Isend(n ? sb[i] : NULL, n, MPI_CHAR, right, i, c, &rq[W + i]));
        }
        for (int i = 0; i < 2 * W; i++) st[i].MPI_ERROR = 12345;
        OK(MPI_Waitall(2 * W, rq, st));
        for (int i = 0; i < W; i++) {
            int n = (i * 5 + round) % 49, got;
            char want[48];
            fill(want, n, left, i);
            CHECK(rq[i] == MPI_REQUEST_NULL && rq[W + i] == MPI_REQUEST_NULL, "handle %d", i);
            CHECK(st[i].MPI_SOURCE == left, "source %d, not %d", st[i].MPI_SOURCE, left);
            CHECK(st[i].MPI_TAG == i, "tag %d, not %d (in order per sender)", st[i].MPI_TAG, i);
            CHECK(st[i].MPI_ERROR == MPI_SUCCESS, "MPI_ERROR %d", st[i].MPI_ERROR);
            CHECK(st[W + i].MPI_ERROR == MPI_SUCCESS, "send's MPI_ERROR %d", st[W + i].MPI_ERROR);
            OK(MPI_Get_count(&st[i], MPI_CHAR, &got));
            CHECK(got == n, "count %d, not %d", got, n);
            CHECK(memcmp(rb[i], want, (size_t)n) == 0, "data of message %d", i);
        }
    }
}

static void single(MPI_Comm c, int crank, int csize)
{
    int right = (crank + 1) % csize, left = (crank + csize - 1) % csize, flag = 0;
    char s[8] = "abcdefg", r[8] = {0};
    MPI_Request rq, sq;
    MPI_Status st = {.MPI_ERROR = 777};
    OK(MPI_Irecv(r, 8, MPI_CHAR, left, 5, c, &rq));
    OK(MPI_Isend(s, 8, MPI_CHAR, right, 5, c, &sq));
    OK(MPI_Wait(&rq, &st));
    CHECK(st.MPI_ERROR == 777 && st.MPI_SOURCE == left && st.MPI_TAG == 5, "wait's status");
    CHECK(rq == MPI_REQUEST_NULL && memcmp(r, s, 8) == 0, "wait's receive");
    st.MPI_ERROR = 778;
    while (!flag) OK(MPI_Test(&sq, &flag, &st));
    CHECK(st.MPI_ERROR == 778 && sq == MPI_REQUEST_NULL, "test's status");
}

static void truncated(MPI_Comm c, int crank, int csize)
{
    int right = (crank + 1) % csize, left = (crank + csize - 1) % csize;
    char s[3][16] = {"0123456789", "abcdefghij", "ABCDEFGHIJ"}, r[3][16];
    MPI_Request rq[6];
    MPI_Status st[6];
    OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    for (int i = 0; i < 3; i++)
        OK(MPI_Irecv(r[i], i == 1 ? 4 : 16, MPI_CHAR, left, 40 + i, c, &rq[i]));
    for (int i = 0; i < 3; i++) OK(MPI_Isend(s[i], 10, MPI_CHAR, right, 40 + i, c, &rq[3 + i]));
    int rc = MPI_Waitall(6, rq, st), cls;
    CHECK(rc == MPI_ERR_IN_STATUS, "Waitall returned %d", rc);
    MPI_Error_class(st[1].MPI_ERROR, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "class %d", cls);
    CHECK(st[0].MPI_ERROR == MPI_SUCCESS && st[2].MPI_ERROR == MPI_SUCCESS, "the others");
    CHECK(memcmp(r[2], s[2], 10) == 0 && memcmp(r[0], s[0], 10) == 0, "the others' data");
}

static void reported(MPI_Comm c, int csize)
{
    char b[4];
    MPI_Request rq;
    MPI_Datatype t;
    int cls;
    OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    MPI_Error_class(MPI_Isend(b, 4, MPI_CHAR, csize, 0, c, &rq), &cls);
    CHECK(cls == MPI_ERR_RANK, "rank out of range: %d", cls);
    MPI_Error_class(MPI_Irecv(b, 4, MPI_CHAR, 0, -5, c, &rq), &cls);
    CHECK(cls == MPI_ERR_TAG, "negative tag: %d", cls);
    MPI_Error_class(MPI_Isend(NULL, 4, MPI_CHAR, 0, 0, c, &rq), &cls);
    CHECK(cls == MPI_ERR_BUFFER, "NULL buffer: %d", cls);
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_Error_class(MPI_Irecv(b, 1, t, 0, 0, c, &rq), &cls);
    CHECK(cls == MPI_ERR_TYPE, "uncommitted type: %d", cls);
    OK(MPI_Type_free(&t));
    OK(MPI_Isend(b, 4, MPI_CHAR, MPI_PROC_NULL, 0, c, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(rq == MPI_REQUEST_NULL, "MPI_PROC_NULL's request");
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs 2 ranks or more");
    MPI_Comm rev;
    int crank, csize;
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev));
    OK(MPI_Comm_rank(rev, &crank));
    OK(MPI_Comm_size(rev, &csize));
    CHECK(crank == size - 1 - rank, "split rank %d", crank);
    windows(rev, crank, csize);
    windows(MPI_COMM_WORLD, rank, size);
    single(rev, crank, csize);
    truncated(rev, crank, csize);
    reported(rev, csize);
    OK(MPI_Comm_free(&rev));
    OK(MPI_Finalize());
    if (rank == 0) printf("rate paths ok\n");
    return 0;
}
