/* courier run --check=rma: conflicting one-sided accesses in one epoch, and
 * the correct twin. Three ranks (rank 0 the target, 1 and 2 the origins, of a
 * window of 64 ints, disp_unit 4); argv[1] says which:
 *   bad_put     fence epoch: ranks 1 and 2 MPI_Put ints 0..1 of rank 0;
 *   bad_get     fence epoch: rank 1 puts ints 0..1, rank 2 gets int 1;
 *   bad_acc     fence epoch: rank 1 accumulates MPI_SUM, rank 2 MPI_MAX on int 4;
 *   bad_accput  fence epoch: rank 1 accumulates MPI_SUM, rank 2 puts, on int 4;
 *   bad_acctype fence epoch: rank 1 accumulates MPI_SUM on int 4 as an MPI_INT,
 *               rank 2 as two MPI_SHORTs (one operation, two datatypes);
 *   bad_accalign fence epoch: rank 1 accumulates MPI_SUM on the MPI_INT at
 *               byte 16, rank 2 on the MPI_INT at byte 18 (a target datatype
 *               displaced by 2 bytes);
 *   bad_pscw    post/start/complete/wait: ranks 1 and 2 put int 8;
 *   bad_lock    shared locks held at once (a barrier inside the epochs):
 *               ranks 1 and 2 put int 12;
 *   bad_store   rank 1 puts int 20 and rank 0 stores into it in the same fence
 *               epoch (after the put is there: over shared memory);
 *   bad_origin  rank 1 changes its MPI_Put's origin buffer before the fence;
 *   bad_accorigin the same with an MPI_Accumulate's (MPI_SUM into ints 24..25);
 *   bad_pstore  rank 1 puts int 28 under an exclusive lock and, before its
 *               unlock, lets rank 0 (by a message) store into it (the put is
 *               there already: over shared memory);
 *   bad_getbuf  rank 1 gets int 1 and stores into its origin buffer before
 *               the fence that completes the get;
 *   bad_getget  rank 1 gets ints 0..1 and then int 2 into the same origin bytes
 *               under MPI_Win_lock_all, before any flush;
 *   bad_fstore  fence epoch: rank 0 stores into int 36, then (by a message)
 *               lets rank 1 put into it: the put overwrites the store;
 *   bad_fgstore fence epoch: rank 2 gets int 38, then (by a message) lets
 *               rank 0 store into it;
 *   bad_wstore  post/start/complete/wait: rank 0 posts, stores into int 40,
 *               then (by a message) lets rank 1 put into it;
 *   bad_lockseq under MPI_Win_lock_all: rank 1 puts int 48 and flushes, rank 2
 *               (its epoch open before that, then after a sleep, with no
 *               synchronisation) puts int 48;
 *   bad_rput    under MPI_Win_lock_all, rank 1 MPI_Rputs int 58, waits for the
 *               request (which completes the put at the origin only) and gets
 *               int 58 before any flush;
 *   bad_free    rank 1 puts int 52 after a fence and frees the window with no
 *               fence completing the put;
 *   bad_noprecede rank 2 puts int 54 and closes the epoch with a fence that
 *               asserts MPI_MODE_NOPRECEDE;
 *   ok          the same calls where MPI allows them: disjoint ranges, gets of
 *               the same bytes, accumulates with one operation (and
 *               MPI_NO_OP), an exclusive lock, shared locks ordered by a flush
 *               and a barrier, a store before the epoch and after it, the
 *               origin buffer written after the fence, a store after the
 *               unlock and a message, a flag put under MPI_Win_lock_all that
 *               rank 0 waits for with MPI_Win_sync and then resets before
 *               rank 1's unlock (the unified model allows it), a get's
 *               origin buffer written after the flush that completed it and
 *               then got into again, a get of bytes stored before its fence
 *               epoch, a put to bytes after a waited MPI_Rget of them (and a
 *               get after a waited MPI_Rget_accumulate), fences asserting
 *               MPI_MODE_NOPRECEDE and MPI_MODE_NOSUCCEED truly; prints
 *               "check rma ok".
 * Unchecked, "bad_put" runs to its end and says so. */
#include <string.h>
#include <unistd.h>

#include "../mpi/mcheck.h"

static int me;
static int *mem;
static MPI_Win win;

static void fence(void)
{
    OK(MPI_Win_fence(0, win));
}

/* Put n ints of value v at disp of rank 0, from a buffer of its own (an origin
 * buffer must stay as it is until the epoch closes). */
static void put(int v, int disp, int n)
{
    static int bufs[16][4], nb;
    int *buf = bufs[nb++ % 16];
    for (int i = 0; i < 4; i++) buf[i] = v;
    OK(MPI_Put(buf, n, MPI_INT, 0, disp, n, MPI_INT, win));
}

static void bad(const char *what)
{
    int x = 7, y[2];
    if (!strcmp(what, "bad_put")) {
        fence();
        if (me) put(me, 0, 2);
        fence();
    } else if (!strcmp(what, "bad_get")) {
        fence();
        if (me == 1) put(me, 0, 2);
        if (me == 2) OK(MPI_Get(y, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        fence();
    } else if (!strcmp(what, "bad_acc") || !strcmp(what, "bad_accput")) {
        fence();
        if (me == 1) OK(MPI_Accumulate(&x, 1, MPI_INT, 0, 4, 1, MPI_INT, MPI_SUM, win));
        if (me == 2 && !strcmp(what, "bad_acc"))
            OK(MPI_Accumulate(&x, 1, MPI_INT, 0, 4, 1, MPI_INT, MPI_MAX, win));
        if (me == 2 && !strcmp(what, "bad_accput")) put(me, 4, 1);
        fence();
    } else if (!strcmp(what, "bad_acctype") || !strcmp(what, "bad_accalign")) {
        short s[2] = {1, 1};
        MPI_Datatype at2;
        MPI_Aint two = 2;
        OK(MPI_Type_create_hindexed_block(1, 1, &two, MPI_INT, &at2));
        OK(MPI_Type_commit(&at2));
        fence();
        if (me == 1) OK(MPI_Accumulate(&x, 1, MPI_INT, 0, 4, 1, MPI_INT, MPI_SUM, win));
        if (me == 2 && !strcmp(what, "bad_acctype"))
            OK(MPI_Accumulate(s, 2, MPI_SHORT, 0, 4, 2, MPI_SHORT, MPI_SUM, win));
        if (me == 2 && !strcmp(what, "bad_accalign"))
            OK(MPI_Accumulate(&x, 1, MPI_INT, 0, 4, 1, at2, MPI_SUM, win));
        fence();
        OK(MPI_Type_free(&at2));
    } else if (!strcmp(what, "bad_pscw")) {
        MPI_Group world, g;
        OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
        int origins[2] = {1, 2}, target = 0;
        if (me == 0) {
            OK(MPI_Group_incl(world, 2, origins, &g));
            OK(MPI_Win_post(g, 0, win));
            OK(MPI_Win_wait(win));
        } else {
            OK(MPI_Group_incl(world, 1, &target, &g));
            OK(MPI_Win_start(g, 0, win));
            put(me, 8, 1);
            OK(MPI_Win_complete(win));
        }
        OK(MPI_Group_free(&g));
        OK(MPI_Group_free(&world));
    } else if (!strcmp(what, "bad_lock")) {
        if (me) OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        if (me) put(me, 12, 1);
        OK(MPI_Barrier(MPI_COMM_WORLD)); /* both epochs are open now */
        if (me) OK(MPI_Win_unlock(0, win));
    } else if (!strcmp(what, "bad_store")) {
        fence();
        if (me == 1) put(me, 20, 1);
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == 0) mem[20] = 99; /* erroneous: rank 1's put wrote it in this epoch */
        fence();
    } else if (!strcmp(what, "bad_origin") || !strcmp(what, "bad_accorigin")) {
        int buf[2] = {1, 2};
        fence();
        if (me == 1 && what[4] == 'o') OK(MPI_Put(buf, 2, MPI_INT, 0, 24, 2, MPI_INT, win));
        if (me == 1 && what[4] == 'a')
            OK(MPI_Accumulate(buf, 2, MPI_INT, 0, 24, 2, MPI_INT, MPI_SUM, win));
        buf[1] = 5; /* erroneous: the put is not complete before the fence */
        fence();
    } else if (!strcmp(what, "bad_getbuf")) {
        fence();
        if (me == 1) OK(MPI_Get(y, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        y[0] = 5; /* erroneous: the get is not complete before the fence */
        fence();
    } else if (!strcmp(what, "bad_getget")) {
        OK(MPI_Win_lock_all(0, win));
        if (me == 1) OK(MPI_Get(y, 2, MPI_INT, 0, 0, 2, MPI_INT, win));
        if (me == 1) OK(MPI_Get(y + 1, 1, MPI_INT, 0, 2, 1, MPI_INT, win)); /* erroneous */
        OK(MPI_Win_unlock_all(win));
    } else if (!strcmp(what, "bad_lockseq")) {
        OK(MPI_Win_lock_all(0, win));
        /* rank 2's epoch opens before rank 1's put lands (so its lock cannot
         * be taken for an ordering after it) */
        if (me == 1) usleep(100000);
        if (me == 1) put(me, 48, 1);
        if (me == 1) OK(MPI_Win_flush(0, win));
        if (me == 2) usleep(400000); /* erroneous: a pause orders nothing */
        if (me == 2) put(me, 48, 1);
        OK(MPI_Win_unlock_all(win));
    } else if (!strcmp(what, "bad_wstore")) {
        MPI_Group world, g;
        OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
        int one = 1, target = 0;
        if (me == 0) {
            OK(MPI_Group_incl(world, 1, &one, &g));
            OK(MPI_Win_post(g, 0, win));
            mem[40] = 9; /* erroneous: rank 1 puts into it in this epoch */
            OK(MPI_Send(&x, 1, MPI_INT, 1, 6, MPI_COMM_WORLD));
            OK(MPI_Win_wait(win));
        } else if (me == 1) {
            OK(MPI_Group_incl(world, 1, &target, &g));
            OK(MPI_Win_start(g, 0, win));
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            put(me, 40, 1);
            OK(MPI_Win_complete(win));
        }
        if (me < 2) OK(MPI_Group_free(&g));
        OK(MPI_Group_free(&world));
    } else if (!strcmp(what, "bad_fstore")) {
        fence();
        if (me == 0) {
            mem[36] = 9; /* erroneous: rank 1 puts into it in this epoch */
            OK(MPI_Send(&x, 1, MPI_INT, 1, 6, MPI_COMM_WORLD));
        } else if (me == 1) {
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            put(me, 36, 1);
        }
        fence();
    } else if (!strcmp(what, "bad_fgstore")) {
        fence();
        if (me == 2) {
            OK(MPI_Get(y, 1, MPI_INT, 0, 38, 1, MPI_INT, win));
            OK(MPI_Send(&x, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
        } else if (me == 0) {
            OK(MPI_Recv(&x, 1, MPI_INT, 2, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            mem[38] = 9; /* erroneous: rank 2 reads it in this epoch */
        }
        fence();
    } else if (!strcmp(what, "bad_pstore")) {
        if (me == 1) {
            OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            put(me, 28, 1);
            OK(MPI_Send(&x, 1, MPI_INT, 0, 4, MPI_COMM_WORLD));
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Win_unlock(0, win));
        } else if (me == 0) {
            OK(MPI_Recv(&x, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            mem[28] = 99; /* erroneous: rank 1's epoch is open, its put not complete */
            OK(MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        }
    } else if (!strcmp(what, "bad_rput")) {
        OK(MPI_Win_lock_all(0, win));
        if (me == 1) {
            MPI_Request rq;
            OK(MPI_Rput(&x, 1, MPI_INT, 0, 58, 1, MPI_INT, win, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); /* complete here, not at the target */
            OK(MPI_Get(y, 1, MPI_INT, 0, 58, 1, MPI_INT, win));
        }
        OK(MPI_Win_unlock_all(win));
    } else if (!strcmp(what, "bad_free")) {
        fence();
        if (me == 1) put(me, 52, 1); /* no fence completes it before MPI_Win_free */
    } else if (!strcmp(what, "bad_noprecede")) {
        fence();
        if (me == 2) put(me, 54, 1);
        OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win)); /* a false assertion on rank 2 */
        fence();
    }
}

static void ok(void)
{
    int x = 3, y[4], r;
    /* fence: disjoint puts, gets of the same bytes, one accumulate operation */
    fence();
    if (me) put(me, 2 * me, 2);
    if (me) OK(MPI_Get(y, 2, MPI_INT, 0, 40, 2, MPI_INT, win));
    if (me) OK(MPI_Accumulate(&x, 1, MPI_INT, 0, 44, 1, MPI_INT, MPI_SUM, win));
    if (me) OK(MPI_Get_accumulate(&x, 1, MPI_INT, &r, 1, MPI_INT, 0, 44, 1, MPI_INT, MPI_SUM, win));
    if (me) OK(MPI_Fetch_and_op(&x, &r, MPI_INT, 0, 44, MPI_NO_OP, win));
    fence();
    if (me == 0) CHECK(mem[44] == 12, "the accumulates gave %d, not 12", mem[44]);
    /* a store outside the epochs, a put into it after */
    if (me == 0) mem[20] = 1;
    fence();
    if (me == 1) put(5, 20, 1);
    fence();
    if (me == 0) mem[20] = 2;
    /* a get of bytes stored before its epoch */
    if (me == 0) mem[38] = 7;
    fence();
    if (me == 2) OK(MPI_Get(y, 1, MPI_INT, 0, 38, 1, MPI_INT, win));
    fence();
    if (me == 2) CHECK(y[0] == 7, "int 38 read %d, not 7", y[0]);
    /* the origin buffer written after the fence completed the put */
    int buf[2] = {1, 2};
    fence();
    if (me == 1) OK(MPI_Put(buf, 2, MPI_INT, 0, 24, 2, MPI_INT, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    buf[1] = 5;
    /* PSCW: disjoint */
    MPI_Group world, g;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int origins[2] = {1, 2}, target = 0;
    if (me == 0) {
        OK(MPI_Group_incl(world, 2, origins, &g));
        OK(MPI_Win_post(g, 0, win));
        OK(MPI_Win_wait(win));
    } else {
        OK(MPI_Group_incl(world, 1, &target, &g));
        OK(MPI_Win_start(g, 0, win));
        put(me, 8 + me, 1);
        OK(MPI_Win_complete(win));
    }
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&world));
    /* exclusive locks on the same bytes */
    if (me) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        put(me, 12, 1);
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* shared epochs open together, the same bytes ordered by a flush and a barrier */
    OK(MPI_Win_lock_all(0, win));
    if (me == 1) put(me, 16, 1);
    if (me == 1) OK(MPI_Win_flush(0, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 2) put(me, 16, 1);
    if (me == 2) OK(MPI_Win_flush_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 1) OK(MPI_Fetch_and_op(&x, &r, MPI_INT, 0, 16, MPI_SUM, win));
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) CHECK(mem[16] == 5, "int 16 is %d, not 2 + 3", mem[16]);
    /* shared epochs, the same bytes ordered by a flush and a message */
    OK(MPI_Win_lock_all(0, win));
    if (me == 1) {
        put(me, 48, 1);
        OK(MPI_Win_flush(0, win));
        OK(MPI_Send(&x, 1, MPI_INT, 2, 7, MPI_COMM_WORLD));
    } else if (me == 2) {
        OK(MPI_Recv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        put(me, 48, 1);
    }
    OK(MPI_Win_unlock_all(win));
    /* a store after the put's unlock and a message */
    if (me == 1) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        put(me, 28, 1);
        OK(MPI_Win_unlock(0, win));
        OK(MPI_Send(&x, 1, MPI_INT, 0, 4, MPI_COMM_WORLD));
    } else if (me == 0) {
        OK(MPI_Recv(&x, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        mem[28] = 99;
    }
    /* a flag put, seen through MPI_Win_sync and reset before the origin's unlock */
    OK(MPI_Win_lock_all(0, win));
    if (me == 1) {
        put(1, 32, 1);
        OK(MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (me == 0) {
        for (int seen = 0; !seen;) {
            OK(MPI_Win_sync(win));
            seen = ((volatile int *)mem)[32] == 1;
            if (!seen) OK(MPI_Iprobe(1, 5, MPI_COMM_WORLD, &r, MPI_STATUS_IGNORE)); /* progress */
        }
        mem[32] = 0;
        OK(MPI_Win_sync(win));
        OK(MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
    }
    OK(MPI_Win_unlock_all(win));
    /* a get's origin buffer written once a flush completed the get, got into again */
    OK(MPI_Win_lock_all(0, win));
    if (me == 1) {
        OK(MPI_Get(y, 2, MPI_INT, 0, 0, 2, MPI_INT, win));
        OK(MPI_Win_flush_local(0, win));
        y[0] = y[1] + 1;
        OK(MPI_Get(y, 2, MPI_INT, 0, 2, 2, MPI_INT, win));
        OK(MPI_Get(y + 2, 2, MPI_INT, 0, 0, 2, MPI_INT, win));
    }
    OK(MPI_Win_unlock_all(win));
    /* a request-based get (or get-accumulate) whose wait returned is complete
     * at the target too: a put to the same bytes after it is ordered (the
     * standard's own MPI_Rget/MPI_Rput example, MPICH's rma/req_example) */
    OK(MPI_Win_lock_all(0, win));
    if (me == 1) {
        MPI_Request rq;
        int g;
        OK(MPI_Rget(&g, 1, MPI_INT, 0, 60, 1, MPI_INT, win, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        g++;
        OK(MPI_Rput(&g, 1, MPI_INT, 0, 60, 1, MPI_INT, win, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        OK(MPI_Rget_accumulate(&x, 1, MPI_INT, &g, 1, MPI_INT, 0, 62, 1, MPI_INT, MPI_SUM, win,
                               &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        OK(MPI_Get(&g, 1, MPI_INT, 0, 62, 1, MPI_INT, win));
    }
    OK(MPI_Win_unlock_all(win));
    /* fences that assert what is true: nothing before the first, nothing after the last */
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    if (me == 1) put(me, 56, 1);
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    OK(MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, 64 * sizeof(int));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    const char *what = argc > 1 ? argv[1] : "ok";
    if (!strcmp(what, "ok"))
        ok();
    else
        bad(what);
    OK(MPI_Win_free(&win));
    if (me == 0)
        printf(strcmp(what, "ok") ? "check rma: %s ran without a report\n" : "check rma ok\n",
               what);
    MPI_Finalize();
    return 0;
}
