/* The cooperative single copy of nonblocking, persistent and partitioned sends
 * (engine.c: start_pull, pull_claimed): the receiver reads the first part of a
 * long message and the rest goes to whichever side claims it first (a claim
 * slot in the host segment). Two ranks, rank 0 sends, rank 1 receives.
 *
 *  1. A nonblocking 1 MiB send whose sender then stays out of the library
 *     until the receiver says, through a file outside MPI, that its MPI_Wait
 *     returned: the receiver must take the rest itself. A receiver that waited
 *     for the sender's part waited for ever (the sender gives up after 60 s,
 *     waits for its send and the test fails).
 *  2. Every byte checked, at sizes around the cooperative minimum (64 KiB) and
 *     the split (half, rounded down to 4 KiB), in three forms: MPI_Isend and
 *     MPI_Irecv, persistent MPI_Send_init and MPI_Recv_init, and a partitioned
 *     send of 16 partitions; with a receive buffer shorter than the message
 *     (MPI_ERR_TRUNCATE, the bytes past it untouched).
 * Run as is, with COURIER_TEST_CLAIM=receiver (the receiver claims the rest
 * before it reads its own part: it always wins), with
 * COURIER_TEST_CLAIM=sender (the receiver waits for the sender's claim before
 * its own: the sender wins; part 1 is left out, its sender being away), and
 * with COURIER_NO_CMA=1 on either rank (single copy refused on one side; on
 * the receiver's, part 1 is left out: the message is pushed, which takes the
 * sender's calls). Argument: "away" runs part 1 too. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIB (1 << 20)
#define GUARD 4096

static unsigned char pattern(int round, size_t i)
{
    return (unsigned char)(i * 131 + (i >> 12) * 7 + (size_t)round * 13 + 1);
}

static void fill(unsigned char *b, size_t n, int round)
{
    for (size_t i = 0; i < n; i++) b[i] = pattern(round, i);
}

static void check(const unsigned char *b, size_t n, size_t cap, int round, const char *what)
{
    for (size_t i = 0; i < n && i < cap; i++)
        if (b[i] != pattern(round, i)) {
            fprintf(stderr, "coop: %s (%zu bytes into %zu): byte %zu is %u, not %u\n", what, n, cap,
                    i, b[i], pattern(round, i));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    for (size_t i = cap < n ? cap : n; i < cap + GUARD; i++)
        if (b[i] != 0xee) {
            fprintf(stderr, "coop: %s (%zu bytes into %zu): byte %zu past the message is %u\n",
                    what, n, cap, i, b[i]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Part 1: the sender goes away after MPI_Isend. */
static void away(int me, unsigned char *buf)
{
    char path[64] = "";
    if (me == 0) snprintf(path, sizeof path, "/tmp/courier-coop-%d.done", (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Request rq;
    if (me == 1) {
        memset(buf, 0xee, MIB + GUARD);
        MPI_Irecv(buf, MIB, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &rq);
    } else {
        fill(buf, MIB, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the receive is posted */
    if (me == 0) {
        MPI_Isend(buf, MIB, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &rq);
        int waited = 0; /* out of the library until the receiver is done */
        while (access(path, F_OK) != 0 && waited < 60000) {
            sleep_ms(1);
            waited++;
        }
        unlink(path);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (waited >= 60000) {
            fprintf(stderr, "coop: the receiver's MPI_Wait waited for a sender outside MPI\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    } else {
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        check(buf, MIB, MIB, 1, "away");
        FILE *f = fopen(path, "w");
        if (!f) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

enum { PLAIN, PERSIST, PART, NFORMS };
static const char *form_name[NFORMS] = {"isend", "persistent", "partitioned"};

/* One message of n bytes in form f, received into cap bytes. */
static void one(int me, int f, size_t n, size_t cap, int round, unsigned char *buf)
{
    MPI_Request rq;
    MPI_Status st;
    int rc;
    if (me == 0) {
        fill(buf, n, round);
        if (f == PLAIN) MPI_Isend(buf, (int)n, MPI_BYTE, 1, round, MPI_COMM_WORLD, &rq);
        if (f == PERSIST) {
            MPI_Send_init(buf, (int)n, MPI_BYTE, 1, round, MPI_COMM_WORLD, &rq);
            MPI_Start(&rq);
        }
        if (f == PART) {
            MPI_Psend_init(buf, 16, (MPI_Count)(n / 16), MPI_BYTE, 1, round, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &rq);
            MPI_Start(&rq);
            MPI_Pready_range(0, 15, rq);
        }
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (f != PLAIN) MPI_Request_free(&rq);
        return;
    }
    memset(buf, 0xee, cap + GUARD);
    if (f == PLAIN) MPI_Irecv(buf, (int)cap, MPI_BYTE, 0, round, MPI_COMM_WORLD, &rq);
    if (f == PERSIST) {
        MPI_Recv_init(buf, (int)cap, MPI_BYTE, 0, round, MPI_COMM_WORLD, &rq);
        MPI_Start(&rq);
    }
    if (f == PART) {
        MPI_Precv_init(buf, 16, (MPI_Count)(cap / 16), MPI_BYTE, 0, round, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &rq);
        MPI_Start(&rq);
    }
    rc = MPI_Wait(&rq, &st);
    if (f != PLAIN) MPI_Request_free(&rq);
    int want = cap < n ? MPI_ERR_TRUNCATE : MPI_SUCCESS, cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc == MPI_ERR_IN_STATUS ? st.MPI_ERROR : rc, &cls);
    if (f != PART && cls != want) {
        fprintf(stderr, "coop: %s of %zu bytes into %zu: error class %d, not %d\n", form_name[f], n,
                cap, cls, want);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    check(buf, n, cap, round, form_name[f]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2) {
        if (me == 0) fprintf(stderr, "coop: run it on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char *buf = malloc(5 * MIB);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 2);
    if (argc > 1 && !strcmp(argv[1], "away")) away(me, buf);
    /* around 64 KiB (the least copied cooperatively) and its split (32 KiB),
     * a split that is not a multiple of 4 KiB, 1 MiB, 4 MiB + 16 */
    static const size_t sizes[] = {65520,       65536,       65536 + 16, 65536 + 4096,
                                   73728 + 160, 131072 - 16, MIB,        4 * MIB + 16 * 3};
    int round = 2;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        for (int f = 0; f < NFORMS; f++) {
            size_t n = sizes[k];
            if (f == PART) n -= n % 16; /* 16 partitions of equal size */
            one(me, f, n, n, round++, buf);
            MPI_Barrier(MPI_COMM_WORLD);
            if (f == PART) continue; /* (a shorter partitioned receive: nothing moves) */
            /* truncated: the receive ends before the split, and after it */
            one(me, f, n, n / 4, round++, buf);
            one(me, f, n, n - n / 8, round++, buf);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    free(buf);
    MPI_Finalize();
    if (me == 0) printf("coop ok\n");
    return 0;
}
