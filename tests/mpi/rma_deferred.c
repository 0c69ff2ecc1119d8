/* Small one-sided transfers of active-target epochs into memory the origin
 * does not map (MPI_Win_create over malloc's memory, or a dynamic window),
 * which courier queues and sends to the target at the epoch's end
 * (mpi_win_rma.c, "deferred"): what each epoch leaves in every window is
 * checked against what every rank computes from all ranks' loops.
 *  - fence: 20,000 accumulates a rank (past many queue batches) to every
 *    member, self included, and puts of disjoint slots;
 *  - the order MPI gives one origin's accumulates to a location: replace,
 *    sum, then a fetching get_accumulate and fetch_and_op, an accumulate too
 *    large to be queued over the same word, another small one, and a
 *    compare-and-swap that sees all of them;
 *  - a pair type (MPI_DOUBLE_INT with MPI_MINLOC) and a strided target type;
 *  - post/start/complete/wait around a ring, then a passive-target epoch.
 * Run with "malloc" or "dynamic"; prints "rma deferred: ok". */
#include <stdint.h>
#include <string.h>

#include "mcheck.h"

#define W 4096   /* int64 slots of the accumulate area */
#define P 64     /* put slots a rank gets from its left neighbour */
#define K 20000  /* accumulates a rank makes in the first epoch */
#define BIG 1024 /* int64 of the accumulate that is not queued (8 KiB) */

static int me, np, dyn;
static MPI_Aint *bases;

/* displacement of int64 slot i at rank r */
static MPI_Aint disp(int r, long i)
{
    return dyn ? bases[r] + (MPI_Aint)i * 8 : (MPI_Aint)i;
}

/* displacement of byte offset b (a multiple of 8) at rank r */
static MPI_Aint bdisp(int r, size_t b)
{
    return dyn ? bases[r] + (MPI_Aint)b : (MPI_Aint)(b / 8);
}

/* the first epoch's k-th accumulate of origin o: target, slot, value */
static void acc_k(int o, long k, int *t, long *slot, int64_t *v)
{
    *t = (int)((o + k) % np);
    *slot = (k * 31 + o * 7) % W;
    *v = (o + 1) * (k % 7 + 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    dyn = argc > 1 && !strcmp(argv[1], "dynamic");
    /* the areas: accumulates, puts, the order words (one per origin), a
     * MINLOC pair per member, strided ints, then the ring's slots */
    size_t n64 = W + P + (size_t)np + BIG, bytes = n64 * 8 + 16 + 64 * sizeof(int) + 64;
    char *mem = malloc(bytes);
    CHECK(mem, "malloc");
    memset(mem, 0, bytes);
    int64_t *a = (int64_t *)(void *)mem;
    MPI_Win win;
    if (dyn) {
        OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        OK(MPI_Win_attach(win, mem, (MPI_Aint)bytes));
    } else {
        OK(MPI_Win_create(mem, (MPI_Aint)bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
    bases = malloc((size_t)np * sizeof *bases);
    MPI_Aint mine;
    MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    long PUT0 = W, ORD0 = W + P, BIG0 = W + P + np;

    /* 1. fence: many small accumulates everywhere, puts of disjoint slots */
    OK(MPI_Win_fence(0, win));
    for (long k = 0; k < K; k++) {
        int t;
        long s;
        int64_t v;
        acc_k(me, k, &t, &s, &v);
        OK(MPI_Accumulate(&v, 1, MPI_INT64_T, t, disp(t, s), 1, MPI_INT64_T, MPI_SUM, win));
    }
    int right = (me + 1) % np;
    int64_t pv[P];
    for (int j = 0; j < P; j++) pv[j] = (int64_t)me * 1000 + j;
    for (int j = 0; j < P; j += 2) /* two elements a put */
        OK(MPI_Put(&pv[j], 2, MPI_INT64_T, right, disp(right, PUT0 + j), 2, MPI_INT64_T, win));
    OK(MPI_Win_fence(0, win));
    for (long s = 0; s < W; s++) {
        int64_t want = 0;
        for (int o = 0; o < np; o++)
            for (long k = (me - o + np) % np; k < K; k += np) { /* those that target me */
                int t;
                long sl;
                int64_t v;
                acc_k(o, k, &t, &sl, &v);
                if (sl == s) want += v;
            }
        CHECK(a[s] == want, "slot %ld holds %lld, the accumulates make %lld", s, (long long)a[s],
              (long long)want);
    }
    int left = (me + np - 1) % np;
    for (int j = 0; j < P; j++)
        CHECK(a[PUT0 + j] == (int64_t)left * 1000 + j, "put slot %d holds %lld", j,
              (long long)a[PUT0 + j]);

    /* 2. one origin's accumulates to one word, in order */
    long w = ORD0 + me; /* my word at my right neighbour */
    int64_t v = 5, got = -1, one = 1, ten = 10, cmp = 61, nv = 100, res = -1;
    OK(MPI_Accumulate(&v, 1, MPI_INT64_T, right, disp(right, w), 1, MPI_INT64_T, MPI_REPLACE, win));
    v = 3;
    OK(MPI_Accumulate(&v, 1, MPI_INT64_T, right, disp(right, w), 1, MPI_INT64_T, MPI_SUM, win));
    OK(MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &got, 1, MPI_INT64_T, right, disp(right, w), 1,
                          MPI_INT64_T, MPI_NO_OP, win));
    CHECK(got == 8, "get_accumulate after replace 5, sum 3 gives %lld", (long long)got);
    OK(MPI_Fetch_and_op(&one, &got, MPI_INT64_T, right, disp(right, w), MPI_SUM, win));
    CHECK(got == 8, "fetch_and_op gives %lld, not 8", (long long)got);
    /* a small replace (queued), then an accumulate too large to queue over
     * the same word and the big area, then a small sum (queued) */
    v = 50;
    OK(MPI_Accumulate(&v, 1, MPI_INT64_T, right, disp(right, w), 1, MPI_INT64_T, MPI_REPLACE, win));
    MPI_Datatype two; /* my word, then the big area */
    int bl[2] = {1, BIG};
    MPI_Aint dl[2] = {w * 8, BIG0 * 8};
    OK(MPI_Type_create_hindexed(2, bl, dl, MPI_INT64_T, &two));
    OK(MPI_Type_commit(&two));
    static int64_t ones[BIG + 1];
    for (int i = 0; i <= BIG; i++) ones[i] = 1;
    OK(MPI_Accumulate(ones, BIG + 1, MPI_INT64_T, right, disp(right, 0), 1, two, MPI_SUM, win));
    OK(MPI_Accumulate(&ten, 1, MPI_INT64_T, right, disp(right, w), 1, MPI_INT64_T, MPI_SUM, win));
    OK(MPI_Compare_and_swap(&nv, &cmp, &res, MPI_INT64_T, right, disp(right, w), win));
    CHECK(res == 61, "compare_and_swap saw %lld, not 50 + 1 + 10 = 61", (long long)res);
    OK(MPI_Win_fence(0, win));
    CHECK(a[ORD0 + left] == 100, "the order word holds %lld, not 100", (long long)a[ORD0 + left]);
    for (int i = 0; i < BIG; i++)
        CHECK(a[BIG0 + i] == 1, "big area word %d holds %lld", i, (long long)a[BIG0 + i]);
    OK(MPI_Type_free(&two));

    /* 3. a pair type and a strided target */
    struct di {
        double v;
        int loc;
    } *pair = (struct di *)(void *)(mem + n64 * 8), mypair = {(double)(np - me), me};
    int *ints = (int *)(void *)(mem + n64 * 8 + 16);
    pair->v = 1e300;
    pair->loc = -1;
    for (int i = 0; i < 64; i++) ints[i] = 0;
    OK(MPI_Win_fence(0, win));
    MPI_Datatype strided; /* 4 blocks of 2 ints, 4 apart */
    OK(MPI_Type_vector(4, 2, 4, MPI_INT, &strided));
    OK(MPI_Type_commit(&strided));
    int add[8];
    for (int i = 0; i < 8; i++) add[i] = me + 1;
    for (int t = 0; t < np; t++) {
        OK(MPI_Accumulate(&mypair, 1, MPI_DOUBLE_INT, t, bdisp(t, n64 * 8), 1, MPI_DOUBLE_INT,
                          MPI_MINLOC, win));
        OK(MPI_Accumulate(add, 8, MPI_INT, t, bdisp(t, n64 * 8 + 16), 1, strided, MPI_SUM, win));
    }
    OK(MPI_Win_fence(0, win));
    CHECK(pair->v == 1.0 && pair->loc == np - 1, "MINLOC gives (%g, %d), not (1, %d)", pair->v,
          pair->loc, np - 1);
    for (int i = 0; i < 16; i++) {
        int want = i % 4 < 2 ? np * (np + 1) / 2 : 0;
        CHECK(ints[i] == want, "strided int %d holds %d, not %d", i, ints[i], want);
    }
    OK(MPI_Type_free(&strided));

    /* 4. post/start/complete/wait around the ring, then a lock epoch */
    size_t ring0 = n64 * 8 + 16 + 64 * sizeof(int); /* byte offset */
    int64_t *ring = (int64_t *)(void *)(mem + ring0);
    MPI_Group world, lg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &lg);
    MPI_Group_incl(world, 1, &right, &rg);
    for (int round = 0; round < 3; round++) {
        OK(MPI_Win_post(lg, 0, win));
        OK(MPI_Win_start(rg, 0, win));
        int64_t x = (int64_t)me * 10 + round;
        OK(MPI_Put(&x, 1, MPI_INT64_T, right, bdisp(right, ring0), 1, MPI_INT64_T, win));
        OK(MPI_Accumulate(&x, 1, MPI_INT64_T, right, bdisp(right, ring0 + 8), 1, MPI_INT64_T,
                          MPI_SUM, win));
        OK(MPI_Win_complete(win));
        OK(MPI_Win_wait(win));
        CHECK(ring[0] == (int64_t)left * 10 + round, "ring round %d put %lld", round,
              (long long)ring[0]);
        int64_t sum = 0;
        for (int r = 0; r <= round; r++) sum += (int64_t)left * 10 + r;
        CHECK(ring[1] == sum, "ring round %d sum %lld, not %lld", round, (long long)ring[1],
              (long long)sum);
    }
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Group_free(&world);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    OK(MPI_Accumulate(&one, 1, MPI_INT64_T, right, bdisp(right, ring0 + 8), 1, MPI_INT64_T, MPI_SUM,
                      win));
    OK(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    int64_t final = ring[1];
    OK(MPI_Win_unlock(me, win));
    CHECK(final == (int64_t)left * 30 + 3 + 1, "after the lock epoch %lld", (long long) final);

    OK(MPI_Win_free(&win));
    free(mem);
    free(bases);
    if (me == 0) printf("rma deferred: ok\n");
    MPI_Finalize();
    return 0;
}
