/* Partitioned communication's wire (src/api/mpi_part.c): how many messages a
 * round of MPI_Pready'd partitions takes, and that every partition's data
 * still arrives when the sender's partitions travel together. Ranks 0 and 1
 * (others idle); the sender's MPI_T counter courier_sent_messages (read
 * between MPI_Startall and MPI_Waitall) counts each round's messages:
 *  - 64 KiB in 8 partitions, received in 16: at most 2 messages (chunks of at
 *    least four times the eager limit, sent by single copy: 1 today), not one
 *    per partition;
 *  - 4 KiB in 4 partitions, received in 1: one message;
 *  - 1 MiB in 8 partitions, received in 64: 8 messages (a partition of
 *    128 KiB is a chunk of its own);
 *  - 1.5 MiB in 24 partitions of 64 KiB, received in 48, marked ready by
 *    MPI_Pready_range(0, 11), MPI_Pready(12) and one MPI_Pready_list of the
 *    other 11 out of order: the chunks each call completes side by side
 *    travel as one message (768 KiB, 64 KiB, 704 KiB), which part_wire.sh
 *    finds in the job's trace; every chunk still has its message (24).
 * The sender marks the first three operations' partitions ready one by one
 * in reverse order; the receiver polls
 * MPI_Parrived and checks each of its partitions as it arrives, then all of
 * them after MPI_Waitall; 3 rounds, each with its own values. Rank 0 prints
 * "partitioned wire ok" with the counts. */
#include <stdbool.h>
#include <string.h>

#include "mcheck.h"

enum { NOPS = 4, RUNS = 3 };
/* per operation: sender partitions and ints each, receiver partitions and ints
 * each (the same total), and the most messages a round may take; operation
 * RUNS marks its partitions by ranges and lists (mark_runs) */
static const int SP[NOPS] = {8, 4, 8, 24}, SC[NOPS] = {2048, 256, 32768, 16384};
static const int RP[NOPS] = {16, 1, 64, 48}, RC[NOPS] = {1024, 1024, 4096, 8192};
static const int MOST[NOPS] = {2, 1, 8, 24};

/* Operation RUNS's partitions: 0..11 by one range, 12 alone, the rest by one
 * list in an order of their own. */
static void mark_runs(MPI_Request rq)
{
    static const int rest[11] = {23, 14, 13, 22, 16, 15, 21, 17, 20, 18, 19};
    OK(MPI_Pready_range(0, 11, rq));
    OK(MPI_Pready(12, rq));
    OK(MPI_Pready_list(11, rest, rq));
}

static int val(int op, int r, int i)
{
    return op * 10000000 + r * 1000000 + i;
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np, provided;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(np >= 2, "needs 2 ranks");
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int idx = -1;
    OK(MPI_T_pvar_get_index("courier_sent_messages", MPI_T_PVAR_CLASS_COUNTER, &idx));
    MPI_T_pvar_session ses;
    MPI_T_pvar_handle h;
    int one = 0;
    OK(MPI_T_pvar_session_create(&ses));
    OK(MPI_T_pvar_handle_alloc(ses, idx, NULL, &h, &one));
    OK(MPI_T_pvar_start(ses, h));
    int *buf[NOPS];
    for (int o = 0; o < NOPS; o++) {
        CHECK(SP[o] * SC[o] == RP[o] * RC[o], "op %d: the two sides' totals differ", o);
        buf[o] = malloc(sizeof(int) * (size_t)SP[o] * (size_t)SC[o]);
        CHECK(buf[o] != NULL, "out of memory");
    }
    MPI_Request rq[NOPS];
    unsigned long long msgs[NOPS] = {0};
    bool sender = me == 0, active = me < 2;
    for (int o = 0; active && o < NOPS; o++) {
        if (sender)
            OK(MPI_Psend_init(buf[o], SP[o], SC[o], MPI_INT, 1, 30 + o, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &rq[o]));
        else
            OK(MPI_Precv_init(buf[o], RP[o], RC[o], MPI_INT, 0, 30 + o, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &rq[o]));
    }
    for (int r = 0; active && r < 3; r++) {
        if (sender) {
            for (int o = 0; o < NOPS; o++)
                for (int i = 0; i < SP[o] * SC[o]; i++) buf[o][i] = val(o, r, i);
            unsigned long long before[NOPS], after;
            OK(MPI_Startall(NOPS, rq));
            for (int o = 0; o < NOPS; o++) { /* one operation at a time: its own count */
                OK(MPI_T_pvar_read(ses, h, &before[o]));
                if (o == RUNS) mark_runs(rq[o]);
                for (int k = SP[o] - 1; o != RUNS && k >= 0; k--) OK(MPI_Pready(k, rq[o]));
                OK(MPI_T_pvar_read(ses, h, &after));
                msgs[o] = after - before[o];
                CHECK(msgs[o] >= 1 && msgs[o] <= (unsigned long long)MOST[o],
                      "round %d: %d partitions of %d ints went as %llu messages, expected 1..%d", r,
                      SP[o], SC[o], msgs[o], MOST[o]);
            }
            OK(MPI_Waitall(NOPS, rq, MPI_STATUSES_IGNORE));
        } else {
            for (int o = 0; o < NOPS; o++)
                memset(buf[o], 0xff, sizeof(int) * (size_t)SP[o] * SC[o]);
            OK(MPI_Startall(NOPS, rq));
            for (int o = 0; o < NOPS; o++) {
                bool seen[64] = {false};
                int nseen = 0;
                while (nseen < RP[o])
                    for (int k = 0; k < RP[o]; k++) {
                        int flag = 0;
                        if (seen[k]) continue;
                        OK(MPI_Parrived(rq[o], k, &flag));
                        if (!flag) continue;
                        for (int i = k * RC[o]; i < (k + 1) * RC[o]; i++)
                            CHECK(buf[o][i] == val(o, r, i),
                                  "op %d round %d partition %d: [%d] = %d", o, r, k, i, buf[o][i]);
                        seen[k] = true;
                        nseen++;
                    }
            }
            MPI_Status st[NOPS];
            OK(MPI_Waitall(NOPS, rq, st));
            for (int o = 0; o < NOPS; o++) {
                int n = 0;
                OK(MPI_Get_count(&st[o], MPI_INT, &n));
                CHECK(n == SP[o] * SC[o] && st[o].MPI_SOURCE == 0 && st[o].MPI_TAG == 30 + o,
                      "op %d: count %d source %d tag %d", o, n, st[o].MPI_SOURCE, st[o].MPI_TAG);
                for (int i = 0; i < n; i++)
                    CHECK(buf[o][i] == val(o, r, i), "op %d round %d: [%d] = %d", o, r, i,
                          buf[o][i]);
            }
        }
    }
    for (int o = 0; active && o < NOPS; o++) OK(MPI_Request_free(&rq[o]));
    OK(MPI_T_pvar_handle_free(ses, &h));
    OK(MPI_T_pvar_session_free(&ses));
    OK(MPI_T_finalize());
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (!me)
        printf("partitioned wire ok: 64 KiB in 8 partitions as %llu messages, 4 KiB in 4 as %llu, "
               "1 MiB in 8 as %llu, 1.5 MiB in 24 by runs as %llu\n",
               msgs[0], msgs[1], msgs[2], msgs[3]);
    for (int o = 0; o < NOPS; o++) free(buf[o]);
    OK(MPI_Finalize());
    return 0;
}
