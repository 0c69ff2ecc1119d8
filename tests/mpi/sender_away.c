/* A receive never waits for a sender that is away from the library, and
 * loses no byte. Two ranks:
 *  - away: rank 0 marks the one partition of a 65,536-byte partitioned send
 *    ready and stays away 500 ms before its MPI_Wait; rank 1, waiting for
 *    it, must read it meanwhile and says so with a message that rank 0 must
 *    find (MPI_Iprobe) before it waits;
 *  - waitany: rank 0 sends 50,000 bytes (MPI_Isend) and then 8 (MPI_Send),
 *    and stays away 300 ms; rank 1's MPI_Waitany matches both and returns
 *    with the short one, and rank 1 stays away 1 s: the long one, matched
 *    in the wait, must have been read by then, so that rank 0's MPI_Test
 *    finds its send complete;
 *  - window: 16 messages of 40,000 bytes each way (MPI_Isend, then
 *    MPI_Irecv, one MPI_Waitall), 20 rounds, every byte checked.
 * Prints "sender away ok" on both ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { AWAY = 65536, ANY = 50000, WIN = 16, WLEN = 40000, ROUNDS = 20 };

static void fail(const char *what)
{
    printf("sender away: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check(const char *b, int n, int salt, const char *what)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (char)(i * 7 + salt)) fail(what);
}

static void fill(char *b, int n, int salt)
{
    for (int i = 0; i < n; i++) b[i] = (char)(i * 7 + salt);
}

/* Did the peer's word (tag 99) come while this rank was away? */
static void word_came(int peer, const char *what)
{
    int flag = 0, w;
    MPI_Iprobe(peer, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    if (!flag) fail(what);
    MPI_Recv(&w, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n, word = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 2) fail("run it on 2 ranks");
    int peer = 1 - r;
    char *b = malloc(AWAY), *s = malloc((size_t)WIN * WLEN), *d = malloc((size_t)WIN * WLEN);
    MPI_Request q, two[2], win[2 * WIN];

    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        fill(b, AWAY, 1);
        MPI_Psend_init(b, 1, AWAY, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        MPI_Start(&q);
        MPI_Pready(0, q);
        usleep(500000);
        word_came(1, "away: rank 1's partitioned receive waited for its sender to come back");
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
    } else {
        MPI_Precv_init(b, 1, AWAY, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
        check(b, AWAY, 1, "away: wrong data");
        MPI_Send(&word, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        long eight = 8;
        int done = 0;
        fill(b, ANY, 2);
        MPI_Isend(b, ANY, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &q);
        MPI_Send(&eight, 1, MPI_LONG, 1, 3, MPI_COMM_WORLD);
        usleep(300000);
        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
        if (!done) fail("waitany: the long receive was not read when the wait ended");
    } else {
        long eight = 0;
        int which;
        MPI_Irecv(b, ANY, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &two[0]);
        MPI_Irecv(&eight, 1, MPI_LONG, 0, 3, MPI_COMM_WORLD, &two[1]);
        MPI_Waitany(2, two, &which, MPI_STATUS_IGNORE);
        usleep(1000000);
        MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
        check(b, ANY, 2, "waitany: wrong data");
        if (eight != 8) fail("waitany: wrong short message");
    }

    for (int k = 0; k < ROUNDS; k++) {
        for (int w = 0; w < WIN; w++) fill(s + (size_t)w * WLEN, WLEN, r * 31 + w + k);
        for (int w = 0; w < WIN; w++)
            MPI_Isend(s + (size_t)w * WLEN, WLEN, MPI_CHAR, peer, 4, MPI_COMM_WORLD, &win[w]);
        for (int w = 0; w < WIN; w++)
            MPI_Irecv(d + (size_t)w * WLEN, WLEN, MPI_CHAR, peer, 4, MPI_COMM_WORLD, &win[WIN + w]);
        MPI_Waitall(2 * WIN, win, MPI_STATUSES_IGNORE);
        for (int w = 0; w < WIN; w++)
            check(d + (size_t)w * WLEN, WLEN, peer * 31 + w + k, "window: wrong data");
    }
    printf("sender away ok\n");
    free(b);
    free(s);
    free(d);
    MPI_Finalize();
    return 0;
}
