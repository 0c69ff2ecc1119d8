/* courier run --check=rma: a target's own stores into its window memory while
 * it holds a lock on itself, against other origins' passive-target accesses
 * to the same bytes (MPI-4.1 section 12.7), and the correct twin. Three
 * ranks, a window of 16 ints (disp_unit 4) at each, rank 0 the target; every
 * rank locks rank 0 (shared) or calls MPI_Win_lock_all; argv[1] says which:
 *   bad_put      once rank 0 holds its lock on itself (a message says so),
 *                rank 1 puts int 0 while rank 0 waits (the put lands) and
 *                then increments int 0;
 *   bad_get      likewise rank 1 gets int 0 while rank 0 stores into it;
 *   bad_put_all  bad_put under MPI_Win_lock_all;
 *   ok           rank 0 stores into int 1 while rank 1 puts int 0 (other
 *                bytes); rank 1's put into int 2 lands while rank 0 holds its
 *                lock and stores nothing; rank 0 increments int 3 in a later
 *                epoch of its own, after rank 1's put there and a barrier;
 *                under MPI_Win_lock_all, rank 1 puts a flag into int 4 that
 *                rank 0 waits for with MPI_Win_sync and, after one more,
 *                resets (the unified model allows it); rank 0 stores into int 5 under an
 *                exclusive lock on itself; prints "check rma self ok".
 * Each "bad" ran to its end without a report before the check (and does
 * unchecked: it says so). */
#include <string.h>
#include <unistd.h>

#include "../mpi/mcheck.h"

static int me;
static int *mem;
static MPI_Win win;

/* Rank 1 starts its access once rank 0 holds its lock on itself: a message
 * from rank 0 (a send: no synchronisation of rank 0's, which would exempt its
 * epoch) that rank 1 waits for. */
static void token(void)
{
    int t = 0;
    if (me == 0) OK(MPI_Send(&t, 1, MPI_INT, 1, 77, MPI_COMM_WORLD));
    if (me == 1) OK(MPI_Recv(&t, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* rank 0 waits in its epoch, then increments int d; rank 1 puts v into it */
static void put_then_store(int d, int v, int all)
{
    if (all)
        OK(MPI_Win_lock_all(0, win));
    else
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    token();
    if (me == 1) OK(MPI_Put(&v, 1, MPI_INT, 0, d, 1, MPI_INT, win));
    if (me == 0) {
        usleep(300000); /* the put lands meanwhile (if it does not, the store comes first) */
        mem[d]++;
    }
    if (all)
        OK(MPI_Win_unlock_all(win));
    else
        OK(MPI_Win_unlock(0, win));
}

static void ok(void)
{
    int v = 7, flag = 1;
    /* a store into other bytes than the put's */
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    if (me == 1) OK(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    if (me == 0) {
        usleep(100000);
        mem[1] = 11;
    }
    OK(MPI_Win_unlock(0, win));
    /* a put lands in rank 0's epoch; rank 0 stores nothing */
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    if (me == 1) OK(MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, win));
    if (me == 0) usleep(100000);
    OK(MPI_Win_unlock(0, win));
    /* a put, a barrier, then rank 0's store in an epoch of its own */
    if (me == 1) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        OK(MPI_Put(&v, 1, MPI_INT, 0, 3, 1, MPI_INT, win));
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        mem[3]++;
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* a flag that rank 0 waits for with MPI_Win_sync, then resets */
    OK(MPI_Win_lock_all(0, win));
    if (me == 1) {
        OK(MPI_Put(&flag, 1, MPI_INT, 0, 4, 1, MPI_INT, win));
        OK(MPI_Win_flush(0, win));
    }
    if (me == 0) {
        do OK(MPI_Win_sync(win));
        while (*(volatile int *)&mem[4] != 1);
        /* the flag may have landed after the last sync: seeing it is no
         * synchronisation, so one more before the store (without it, the
         * check rightly found the store racing the put, once in .ci/run) */
        OK(MPI_Win_sync(win));
        mem[4] = 0;
    }
    OK(MPI_Win_unlock_all(win));
    /* an exclusive lock on itself */
    if (me == 0) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        mem[5] = 3;
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        CHECK(mem[0] == 7 && mem[1] == 11 && mem[3] == 8, "%d %d %d", mem[0], mem[1], mem[3]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *mode = argc > 1 ? argv[1] : "ok";
    OK(MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < 16; i++) mem[i] = 4;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (!strcmp(mode, "bad_put")) {
        put_then_store(0, 0, 0);
    } else if (!strcmp(mode, "bad_put_all")) {
        put_then_store(0, 0, 1);
    } else if (!strcmp(mode, "bad_get")) {
        int got = -1;
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        token();
        if (me == 1) OK(MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        if (me == 0) {
            usleep(300000);
            mem[0] = 5;
        }
        OK(MPI_Win_unlock(0, win));
    } else {
        ok();
    }
    OK(MPI_Win_free(&win));
    if (me == 0)
        printf(strcmp(mode, "ok") ? "check rma self: %s ran without a report\n"
                                  : "check rma self ok\n",
               mode);
    MPI_Finalize();
    return 0;
}
