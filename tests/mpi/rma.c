/* MPI one-sided communication, every window flavor: puts and gets (contiguous
 * and with derived datatypes on both sides) in fence epochs, accumulates from
 * every rank, a counter under exclusive locks and one with MPI_Fetch_and_op,
 * compare-and-swap, lock_all with flushes, post/start/complete/wait around a
 * ring, request-based Rput/Rget, MPI_Win_shared_query's direct loads, a
 * dynamic window's attached memory, the window attributes, and a strided put
 * and get of 10000 pieces. Run with the
 * flavor as argument: create (over MPI_Alloc_mem's memory, which the members
 * on one host map), create_inside (over a part of an MPI_Alloc_mem block that
 * starts past a page boundary), create_malloc (over malloc's memory: single
 * copy or the target's service), allocate, shared, dynamic. */
#include <stdint.h>
#include <string.h>

#include "mcheck.h"

#define N 64 /* ints per rank's window part */

static int me, np;

static int val(int owner, int from, int i)
{
    return owner * 100000 + from * 1000 + i;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *flavor = argc > 1 ? argv[1] : "create";
    MPI_Win win;
    int *mem = NULL;
    size_t bytes = (size_t)(N * np + 8) * sizeof(int);
    int dyn = !strcmp(flavor, "dynamic");
    int create = !strncmp(flavor, "create", 6);
    char *block = NULL; /* create_inside: the MPI_Alloc_mem block the window lies in */
    MPI_Aint *bases = malloc((size_t)np * sizeof *bases);
    if (create) {
        if (!strcmp(flavor, "create_malloc"))
            mem = malloc(bytes);
        else if (!strcmp(flavor, "create_inside")) {
            OK(MPI_Alloc_mem((MPI_Aint)(bytes + 3 * 4096 + 40), MPI_INFO_NULL, &block));
            mem = (int *)(block + 2 * 4096 + 40);
        } else
            OK(MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &mem));
        OK(MPI_Win_create(mem, (MPI_Aint)bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else if (!strcmp(flavor, "allocate")) {
        OK(MPI_Win_allocate((MPI_Aint)bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                            &win));
    } else if (!strcmp(flavor, "shared")) {
        MPI_Comm node;
        int nn;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &nn);
        MPI_Comm_free(&node);
        if (nn < np) { /* ranks on several hosts: the window cannot be made */
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            int code = MPI_Win_allocate_shared((MPI_Aint)bytes, sizeof(int), MPI_INFO_NULL,
                                               MPI_COMM_WORLD, &mem, &win);
            CHECK(code == MPI_ERR_RMA_SHARED && win == MPI_WIN_NULL,
                  "shared window across hosts: code %d, window %d", code, win);
            if (me == 0) printf("rma shared: refused across hosts, as it must be\n");
            free(bases);
            MPI_Finalize();
            return 0;
        }
        OK(MPI_Win_allocate_shared((MPI_Aint)bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                   &mem, &win));
    } else {
        OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        mem = malloc(bytes);
        OK(MPI_Win_attach(win, mem, (MPI_Aint)bytes));
    }
    MPI_Aint mine = 0;
    MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    /* displacement of int i at rank r */
#define DISP(r, i) (dyn ? bases[r] + (MPI_Aint)(i) * (MPI_Aint)sizeof(int) : (MPI_Aint)(i))
    memset(mem, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);

    /* attributes */
    int flag = 0, *fl = NULL;
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    int want = dyn                           ? MPI_WIN_FLAVOR_DYNAMIC
               : create                      ? MPI_WIN_FLAVOR_CREATE
               : !strcmp(flavor, "allocate") ? MPI_WIN_FLAVOR_ALLOCATE
                                             : MPI_WIN_FLAVOR_SHARED;
    CHECK(flag && *fl == want, "flavor %d, expected %d", fl ? *fl : -1, want);
    void *b = NULL;
    OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag && (dyn ? b == NULL : b == mem), "MPI_WIN_BASE %p, mem %p", b, (void *)mem);
    MPI_Aint *sz = NULL;
    OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK(flag && *sz == (dyn ? 0 : (MPI_Aint)bytes), "MPI_WIN_SIZE %ld", (long)*sz);

    /* 1. fence: every rank puts its block into every rank, then gets it back */
    int *src = malloc(N * sizeof(int)), *back = malloc(N * sizeof(int));
    OK(MPI_Win_fence(0, win));
    for (int t = 0; t < np; t++) {
        for (int i = 0; i < N; i++) src[i] = val(t, me, i);
        OK(MPI_Put(src, N, MPI_INT, t, DISP(t, me * N), N, MPI_INT, win));
        OK(MPI_Win_fence(0, win)); /* src is reused */
    }
    for (int from = 0; from < np; from++)
        for (int i = 0; i < N; i++)
            CHECK(mem[from * N + i] == val(me, from, i), "put: mem[%d] = %d", from * N + i,
                  mem[from * N + i]);
    int t = (me + 1) % np;
    OK(MPI_Get(back, N, MPI_INT, t, DISP(t, me * N), N, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) CHECK(back[i] == val(t, me, i), "get: %d at %d", back[i], i);

    /* 2. derived types: every other int of mine into a vector at the target */
    MPI_Datatype vec;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < N; i++) src[i] = -i;
    OK(MPI_Put(src, N / 2, MPI_INT, t, DISP(t, me * N), 1, vec, win));
    OK(MPI_Win_fence(0, win));
    int from = (me + np - 1) % np;
    for (int i = 0; i < N; i++)
        CHECK(mem[from * N + i] == (i % 2 ? val(me, from, i) : -(i / 2)), "vector put: [%d] = %d",
              i, mem[from * N + i]);
    memset(back, 0, N * sizeof(int));
    OK(MPI_Get(back, 1, vec, t, DISP(t, me * N), N / 2, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        int k = i / 2, w = i % 2 ? 0 : k % 2 ? val(t, me, k) : -(k / 2);
        CHECK(back[i] == w, "vector get: [%d] = %d, expected %d", i, back[i], w);
    }
    MPI_Type_free(&vec);

    /* 3. accumulate: every rank adds its rank+1 to N ints at rank 0 */
    int *acc = mem + N * np; /* the 8 spare ints */
    memset(acc, 0, 8 * sizeof(int));
    OK(MPI_Win_fence(0, win));
    int ones[8];
    for (int i = 0; i < 8; i++) ones[i] = me + 1;
    OK(MPI_Accumulate(ones, 4, MPI_INT, 0, DISP(0, N * np), 4, MPI_INT, MPI_SUM, win));
    OK(MPI_Accumulate(ones, 1, MPI_INT, 0, DISP(0, N * np + 4), 1, MPI_INT, MPI_MAX, win));
    OK(MPI_Win_fence(0, win));
    if (me == 0) {
        for (int i = 0; i < 4; i++)
            CHECK(acc[i] == np * (np + 1) / 2, "accumulate SUM: %d", acc[i]);
        CHECK(acc[4] == np, "accumulate MAX: %d", acc[4]);
    }
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* 4. passive target: a counter at the last rank, under exclusive locks,
     * incremented with get + put; another one with MPI_Fetch_and_op */
    int last = np - 1;
    for (int k = 0; k < 10; k++) {
        int v;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, win));
        OK(MPI_Get(&v, 1, MPI_INT, last, DISP(last, N * np + 5), 1, MPI_INT, win));
        OK(MPI_Win_flush(last, win));
        v++;
        OK(MPI_Put(&v, 1, MPI_INT, last, DISP(last, N * np + 5), 1, MPI_INT, win));
        OK(MPI_Win_unlock(last, win));
        int one = 1, old = -1;
        OK(MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win));
        OK(MPI_Fetch_and_op(&one, &old, MPI_INT, last, DISP(last, N * np + 6), MPI_SUM, win));
        OK(MPI_Win_unlock(last, win));
        CHECK(old >= 0 && old < 10 * np, "fetch_and_op returned %d", old);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == last) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win)); /* own memory: see the others' updates */
        OK(MPI_Win_sync(win));
        CHECK(acc[5] == 10 * np && acc[6] == 10 * np, "locked counters %d and %d, expected %d",
              acc[5], acc[6], 10 * np);
        OK(MPI_Win_unlock(last, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 5. compare-and-swap: ranks take turns claiming acc[7] of rank 0 */
    OK(MPI_Win_lock_all(0, win));
    for (int turn = 0; turn < np; turn++) {
        if (turn == me) {
            int cmp = me, nv = me + 1, res = -1;
            OK(MPI_Compare_and_swap(&nv, &cmp, &res, MPI_INT, 0, DISP(0, N * np + 7), win));
            OK(MPI_Win_flush(0, win));
            CHECK(res == me, "cas returned %d", res);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int res = -1, dummy = 0;
    OK(MPI_Fetch_and_op(&dummy, &res, MPI_INT, 0, DISP(0, N * np + 7), MPI_NO_OP, win));
    OK(MPI_Win_flush_all(win));
    CHECK(res == np, "after the turns the word is %d", res);
    /* request-based transfers inside the lock_all epoch */
    MPI_Request rq[2];
    int rv[2] = {0, 0};
    OK(MPI_Rget(&rv[0], 1, MPI_INT, t, DISP(t, me * N + 1), 1, MPI_INT, win, &rq[0]));
    OK(MPI_Rget(&rv[1], 1, MPI_INT, t, DISP(t, me * N + 3), 1, MPI_INT, win, &rq[1]));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(rv[0] == val(t, me, 1) && rv[1] == val(t, me, 3), "rget gave %d %d", rv[0], rv[1]);
    OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* 6. post/start/complete/wait around the ring: put to the next rank */
    MPI_Group world, next, prev;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int pr = (me + np - 1) % np;
    MPI_Group_incl(world, 1, &t, &next);
    MPI_Group_incl(world, 1, &pr, &prev);
    for (int round = 0; round < 3; round++) {
        OK(MPI_Win_post(prev, 0, win));
        OK(MPI_Win_start(next, 0, win));
        int v = 7000 + round * 10 + me;
        MPI_Request r;
        OK(MPI_Rput(&v, 1, MPI_INT, t, DISP(t, 0), 1, MPI_INT, win, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Win_complete(win));
        int done = 0;
        while (!done) OK(MPI_Win_test(win, &done));
        CHECK(mem[0] == 7000 + round * 10 + pr, "pscw round %d: %d", round, mem[0]);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Group_free(&next);
    MPI_Group_free(&prev);
    MPI_Group_free(&world);

    /* 7. shared memory: load the neighbour's part directly */
    if (!strcmp(flavor, "shared")) {
        MPI_Aint qs;
        int du;
        int *p = NULL;
        OK(MPI_Win_shared_query(win, t, &qs, &du, &p));
        CHECK(qs == (MPI_Aint)bytes && du == (int)sizeof(int) && p, "query: %ld %d %p", (long)qs,
              du, (void *)p);
        CHECK(p[0] == 7020 + me, "direct load of rank %d's word: %d", t, p[0]);
        OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qs, &du, &p));
        CHECK(p != NULL, "MPI_PROC_NULL query gave no memory");
    }

    /* errors, returned under MPI_ERRORS_RETURN */
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int x = 0, code = MPI_Put(&x, 1, MPI_INT, t, DISP(t, 0), 1, MPI_INT, win);
    CHECK(code == MPI_ERR_RMA_SYNC, "put outside an epoch gave %d", code);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    code = MPI_Put(&x, 1, MPI_INT, t, DISP(t, N * np + 8), 1, MPI_INT, win);
    CHECK(code == MPI_ERR_RMA_RANGE, "put past the end gave %d", code);
    /* a NULL origin or result buffer with data: an error, not a crash */
    code = MPI_Put(NULL, 1, MPI_INT, t, DISP(t, N * np + 5), 1, MPI_INT, win);
    CHECK(code == MPI_ERR_BUFFER, "put from NULL gave %d", code);
    code = MPI_Get(NULL, 1, MPI_INT, t, DISP(t, N * np + 5), 1, MPI_INT, win);
    CHECK(code == MPI_ERR_BUFFER, "get into NULL gave %d", code);
    code = MPI_Accumulate(NULL, 1, MPI_INT, t, DISP(t, N * np + 5), 1, MPI_INT, MPI_SUM, win);
    CHECK(code == MPI_ERR_BUFFER, "accumulate from NULL gave %d", code);
    code = MPI_Fetch_and_op(&x, NULL, MPI_INT, t, DISP(t, N * np + 5), MPI_SUM, win);
    CHECK(code == MPI_ERR_BUFFER, "fetch-and-op into NULL gave %d", code);
    code = MPI_Compare_and_swap(&x, NULL, &x, MPI_INT, t, DISP(t, N * np + 5), win);
    CHECK(code == MPI_ERR_BUFFER, "compare-and-swap with a NULL compare buffer gave %d", code);
    OK(MPI_Put(NULL, 0, MPI_INT, t, DISP(t, N * np + 5), 0, MPI_INT,
               win)); /* nothing to move: fine */
    code = MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    CHECK(code == MPI_ERR_RMA_SYNC, "locking twice gave %d", code);
    OK(MPI_Win_unlock(t, win));
    code = MPI_Win_lock(99, t, 0, win);
    CHECK(code == MPI_ERR_LOCKTYPE, "bad lock type gave %d", code);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Win_set_name(win, "ring"));
    OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 4 && !strcmp(name, "ring"), "name %s", name);

    MPI_Barrier(MPI_COMM_WORLD); /* the errors above reach the neighbour's attached memory */
    if (dyn) OK(MPI_Win_detach(win, mem));
    OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "freed window is %d", win);
    if (!strcmp(flavor, "create")) MPI_Free_mem(mem);
    if (block) MPI_Free_mem(block);
    if (!strcmp(flavor, "create_malloc")) free(mem);
    if (dyn) free(mem);

    /* 8. a long strided put and get: every other int of 2 x LONGV, more pieces
     * than one request to a target's service carries */
    enum { LONGV = 10000 };
    int *lmem, *lsrc = malloc(LONGV * sizeof(int)), *lback = malloc(2 * LONGV * sizeof(int));
    MPI_Win lwin;
    OK(MPI_Win_allocate(2 * LONGV * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &lmem,
                        &lwin));
    for (int i = 0; i < 2 * LONGV; i++) lmem[i] = -1;
    for (int i = 0; i < LONGV; i++) lsrc[i] = me * LONGV + i;
    MPI_Datatype lvec;
    MPI_Type_vector(LONGV, 1, 2, MPI_INT, &lvec);
    MPI_Type_commit(&lvec);
    OK(MPI_Win_fence(0, lwin));
    OK(MPI_Put(lsrc, LONGV, MPI_INT, t, 0, 1, lvec, lwin));
    OK(MPI_Win_fence(0, lwin));
    for (int i = 0; i < 2 * LONGV; i++)
        CHECK(lmem[i] == (i % 2 ? -1 : from * LONGV + i / 2), "long vector put: [%d] = %d", i,
              lmem[i]);
    OK(MPI_Get(lback, 1, lvec, t, 0, 1, lvec, lwin));
    OK(MPI_Win_fence(0, lwin));
    for (int i = 0; i < 2 * LONGV; i += 2)
        CHECK(lback[i] == me * LONGV + i / 2, "long vector get: [%d] = %d", i, lback[i]);
    MPI_Type_free(&lvec);
    OK(MPI_Win_free(&lwin));
    free(lsrc);
    free(lback);
    free(src);
    free(back);
    free(bases);
    if (me == 0) printf("rma %s: %d ranks ok\n", flavor, np);
    MPI_Finalize();
    return 0;
}
