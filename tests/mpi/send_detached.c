/* Blocking sends of rendezvous size with more ranks than CPUs (run on one CPU,
 * 2 ranks, COURIER_UNEXPECTED_LIMIT=1): the engine copies such a send aside
 * and returns at once (engine.c: send_detached), and the receiver reads the
 * copy whenever its receive matches.
 *
 *  1. MPI_Send returns before its receive is posted: rank 0 sends a long
 *     message, then a short one; rank 1 receives the short one first. Rank 1
 *     cannot take the long one into memory itself (its unexpected budget is a
 *     byte), so a send that waited for its receive waited for ever (the
 *     watchdog reports the deadlock).
 *  2. The copy is what was sent: rank 0 overwrites its buffer as soon as each
 *     MPI_Send returns; sizes across the eager limit, the largest detached
 *     size (64 KiB) and beyond.
 *  3. More than the engine holds at once (4 MiB): 80 sends of 60,000 bytes
 *     in a row; past the budget a send waits for its receive as before. Rank
 *     1 then answers, so that rank 0 has every FIN before part 4.
 *  4. Rank 0 leaves (MPI_Finalize) with detached sends not yet read: the
 *     engine keeps them until rank 1 has them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSIZES 8
#define MANY 80
#define MANY_LEN 60000

static unsigned char pattern(int round, size_t i)
{
    return (unsigned char)(i * 31 + (size_t)round * 7 + 1);
}

static void fill(unsigned char *b, size_t n, int round)
{
    for (size_t i = 0; i < n; i++) b[i] = pattern(round, i);
}

static void check(const unsigned char *b, size_t n, int round, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern(round, i)) {
            fprintf(stderr, "send_detached: %s (%zu bytes, round %d): byte %zu is %u, not %u\n",
                    what, n, round, i, b[i], pattern(round, i));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2) {
        if (me == 0) fprintf(stderr, "send_detached: run it on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    static const size_t sizes[NSIZES] = {16385,  32768,  56000,  65536,
                                         131071, 131072, 131073, 300000};
    unsigned char *buf = malloc(300000);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 2);
    int go = 1;

    /* 1: the short message overtakes nothing, but is received first */
    if (me == 0) {
        fill(buf, 56000, 0);
        MPI_Send(buf, 56000, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        memset(buf, 0xee, 56000);
        MPI_Send(&go, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(buf, 56000, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(buf, 56000, 0, "long message received after a later short one");
    }

    /* 2: each size, the buffer overwritten once the send returns */
    for (int round = 1; round <= 3; round++)
        for (int s = 0; s < NSIZES; s++) {
            size_t n = sizes[s];
            if (me == 0) {
                fill(buf, n, round);
                MPI_Send(buf, (int)n, MPI_BYTE, 1, 10 + s, MPI_COMM_WORLD);
                memset(buf, 0xee, n);
            } else {
                MPI_Status st;
                int count;
                MPI_Recv(buf, 300000, MPI_BYTE, 0, 10 + s, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &count);
                if ((size_t)count != n) {
                    fprintf(stderr, "send_detached: got %d bytes, sent %zu\n", count, n);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                check(buf, n, round, "overwritten after MPI_Send");
            }
        }

    /* 3: past what the engine holds at once */
    if (me == 0) {
        for (int i = 0; i < MANY; i++) {
            fill(buf, MANY_LEN, 100 + i);
            MPI_Send(buf, MANY_LEN, MPI_BYTE, 1, 30, MPI_COMM_WORLD);
            memset(buf, 0xee, MANY_LEN);
        }
        MPI_Send(&go, 1, MPI_INT, 1, 31, MPI_COMM_WORLD);
        MPI_Recv(&go, 1, MPI_INT, 1, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        for (int i = 0; i < MANY; i++) {
            MPI_Recv(buf, MANY_LEN, MPI_BYTE, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(buf, MANY_LEN, 100 + i, "one of many");
        }
        MPI_Recv(&go, 1, MPI_INT, 0, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&go, 1, MPI_INT, 0, 32, MPI_COMM_WORLD);
    }

    /* 4: rank 0 finishes first; rank 1 receives after its own short message */
    if (me == 0) {
        for (int i = 0; i < 4; i++) {
            fill(buf, 56000, 200 + i);
            MPI_Send(buf, 56000, MPI_BYTE, 1, 40, MPI_COMM_WORLD);
        }
        memset(buf, 0xee, 56000);
        MPI_Send(&go, 1, MPI_INT, 1, 41, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 0, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++) {
            MPI_Recv(buf, 56000, MPI_BYTE, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(buf, 56000, 200 + i, "read after its sender went on");
        }
        printf("send detached ok\n");
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
