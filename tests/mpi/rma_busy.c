/* One-sided operations into shared windows while the progress thread works:
 * the short paths of MPI_Put, MPI_Get, the accumulates, MPI_Compare_and_swap
 * and MPI_Win_flush run without the engine lock in a single-threaded program
 * (mpi_enter_owned), beside the thread that a nonblocking all-reduce keeps
 * busy the whole time. Checked: every rank's fetch-and-add tickets on rank
 * 0's counter are distinct and add up (the accumulate lock taken at once, or
 * after a wait on the locked path); a critical section guarded by a
 * compare-and-swap spin lock is never entered by two ranks (a non-atomic
 * read-modify-write through get and put); every put lands where it was aimed.
 * The ThreadSanitizer stage runs it (.ci/sanitize).
 *   courier run -n N mpi_rma_busy [rounds]   (2000; 100 across hosts) */
#include <stdint.h>
#include <string.h>

#include "mcheck.h"

enum { W_LOCK, W_COUNT, W_CRIT, W_INSIDE, W_SLOTS }; /* words of rank 0's window */
#define BIG (1 << 16)                                /* doubles of the busy all-reduce */

/* The busy all-reduce's result. */
static void busy_check(const double *out, int np)
{
    double want = (double)np * (np - 1) / 2;
    for (int i = 0; i < BIG; i += 4099)
        CHECK(out[i] == want + (double)np * i, "all-reduce element %d: %g", i, out[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    /* Where some ranks are on another host, their operations go through the target's
     * service, a round trip each, and the spin lock's losers retry by round trips too:
     * under a loaded machine 2000 rounds of that took minutes. The short paths this
     * program is about run between ranks that share memory. */
    MPI_Comm node;
    int nn;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nn);
    MPI_Comm_free(&node);
    int rounds = argc > 1 ? atoi(argv[1]) : nn == np ? 2000 : 100;
    MPI_Aint words = W_SLOTS + (MPI_Aint)np * rounds;
    int64_t *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(words * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, (size_t)words * 8);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the progress thread's work, all along */
    MPI_Comm busy;
    MPI_Comm_dup(MPI_COMM_WORLD, &busy);
    double *in = malloc(BIG * sizeof *in), *out = malloc(BIG * sizeof *out);
    CHECK(in && out, "out of memory");
    for (int i = 0; i < BIG; i++) in[i] = me + i;
    MPI_Request rq;
    OK(MPI_Iallreduce(in, out, BIG, MPI_DOUBLE, MPI_SUM, busy, &rq));
    int reduces = 1;

    int64_t *tickets = malloc((size_t)rounds * sizeof *tickets);
    int64_t *vals = malloc((size_t)rounds * sizeof *vals); /* put sources: kept until flushed */
    CHECK(tickets && vals, "out of memory");
    const int64_t one = 1, zero = 0, mine = me + 1;
    OK(MPI_Win_lock_all(0, win));
    for (int r = 0; r < rounds; r++) {
        OK(MPI_Fetch_and_op(&one, &tickets[r], MPI_INT64_T, 0, W_COUNT, MPI_SUM, win));
        OK(MPI_Win_flush(0, win));
        /* the spin lock, then a read-modify-write no atomic protects */
        int64_t old;
        do {
            OK(MPI_Compare_and_swap(&mine, &zero, &old, MPI_INT64_T, 0, W_LOCK, win));
            OK(MPI_Win_flush(0, win));
        } while (old != 0);
        int64_t inside, crit;
        OK(MPI_Get(&inside, 1, MPI_INT64_T, 0, W_INSIDE, 1, MPI_INT64_T, win));
        OK(MPI_Win_flush(0, win));
        CHECK(inside == 0, "round %d: rank %lld is inside the critical section too", r,
              (long long)inside - 1);
        OK(MPI_Put(&mine, 1, MPI_INT64_T, 0, W_INSIDE, 1, MPI_INT64_T, win));
        OK(MPI_Win_flush(0, win));
        OK(MPI_Get(&crit, 1, MPI_INT64_T, 0, W_CRIT, 1, MPI_INT64_T, win));
        OK(MPI_Win_flush(0, win));
        crit++;
        OK(MPI_Put(&crit, 1, MPI_INT64_T, 0, W_CRIT, 1, MPI_INT64_T, win));
        OK(MPI_Put(&zero, 1, MPI_INT64_T, 0, W_INSIDE, 1, MPI_INT64_T, win));
        OK(MPI_Win_flush(0, win));
        OK(MPI_Accumulate(&zero, 1, MPI_INT64_T, 0, W_LOCK, 1, MPI_INT64_T, MPI_REPLACE, win));
        OK(MPI_Win_flush(0, win));
        /* my slot of this round, at the next rank (puts into another's window) */
        vals[r] = (int64_t)me * 1000003 + r;
        OK(MPI_Put(&vals[r], 1, MPI_INT64_T, (me + 1) % np, W_SLOTS + (MPI_Aint)me * rounds + r, 1,
                   MPI_INT64_T, win));
        if (r % 256 == 255) { /* the next (every rank starts as many, in the same order) */
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            busy_check(out, np);
            OK(MPI_Iallreduce(in, out, BIG, MPI_DOUBLE, MPI_SUM, busy, &rq));
            reduces++;
        }
    }
    OK(MPI_Win_flush_all(win));
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    busy_check(out, np);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the tickets: distinct over all ranks, 0 .. np*rounds-1 */
    int64_t *all = NULL;
    if (me == 0) all = malloc((size_t)np * rounds * sizeof *all);
    MPI_Gather(tickets, rounds, MPI_INT64_T, all, rounds, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (me == 0) {
        char *seen = calloc((size_t)np * rounds, 1);
        CHECK(seen, "out of memory");
        for (int i = 0; i < np * rounds; i++) {
            CHECK(all[i] >= 0 && all[i] < (int64_t)np * rounds && !seen[all[i]],
                  "ticket %lld given twice or out of range", (long long)all[i]);
            seen[all[i]] = 1;
        }
        CHECK(mem[W_COUNT] == (int64_t)np * rounds, "counter %lld, expected %lld",
              (long long)mem[W_COUNT], (long long)np * rounds);
        CHECK(mem[W_CRIT] == (int64_t)np * rounds,
              "critical count %lld, expected %lld (lost "
              "updates: two ranks were inside at once)",
              (long long)mem[W_CRIT], (long long)np * rounds);
        CHECK(mem[W_LOCK] == 0 && mem[W_INSIDE] == 0, "lock word %lld, inside %lld",
              (long long)mem[W_LOCK], (long long)mem[W_INSIDE]);
        free(seen);
        free(all);
    }
    int from = (me + np - 1) % np;
    for (int r = 0; r < rounds; r++)
        CHECK(mem[W_SLOTS + (MPI_Aint)from * rounds + r] == (int64_t)from * 1000003 + r,
              "slot %d of rank %d: %lld", r, from,
              (long long)mem[W_SLOTS + (MPI_Aint)from * rounds + r]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        printf("rma busy: %d ranks x %d rounds ok (%d all-reduces beside)\n", np, rounds, reduces);
    free(tickets);
    free(vals);
    free(in);
    free(out);
    MPI_Comm_free(&busy);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
