/* A barrier lets no rank go before every rank has come, whichever form the
 * collective selector takes (the shared area's, where with more ranks than
 * CPUs member 0 waits for all and then lets the others go; messages in a
 * split communicator), also right after broadcasts through the area (whose
 * members do not all wait for each other) and between allreduces. Every rank
 * writes the round into its slot of a shared window before the barrier and
 * after it finds every slot at that round or later. Prints "barrier order ok"
 * from rank 0. Usage: barrier_order [ROUNDS] */
#include <stdatomic.h>
#include <string.h>

#include "mcheck.h"

static void rounds(MPI_Comm comm, int n, _Atomic int *slots, const int *map)
{
    int me, np;
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &np));
    static char big[200000]; /* longer than one area chunk: the broadcast goes in pieces */
    for (int r = 1; r <= n; r++) {
        atomic_store(&slots[map[me]], r);
        OK(MPI_Barrier(comm));
        for (int i = 0; i < np; i++) {
            int seen = atomic_load(&slots[map[i]]);
            CHECK(seen >= r, "round %d: rank %d left the barrier while member %d was at %d", r, me,
                  i, seen);
        }
        if (r % 3 == 0) { /* a broadcast, whose root leaves before the others read */
            int root = r % np;
            if (me == root) memset(big, r & 0xff, sizeof big);
            OK(MPI_Bcast(big, (int)sizeof big, MPI_CHAR, root, comm));
            CHECK(big[0] == (char)(r & 0xff) && big[sizeof big - 1] == (char)(r & 0xff),
                  "round %d: broadcast from %d", r, root);
        }
        if (r % 5 == 0) {
            int x = me + r, s;
            OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, comm));
            CHECK(s == np * (np - 1) / 2 + np * r, "round %d: allreduce gave %d", r, s);
        }
    }
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int n = argc > 1 ? atoi(argv[1]) : 2000, me, np;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    MPI_Comm node;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    /* Across hosts (the tests' pretend hosts too) a window is shared only
     * within each: the rounds are then this host's ranks'. */
    int nn;
    OK(MPI_Comm_size(node, &nn));
    MPI_Comm world = MPI_COMM_WORLD;
    if (nn != np) {
        world = node;
        OK(MPI_Comm_rank(node, &me));
        np = nn;
    }
    _Atomic int *mine, *slots;
    MPI_Win win;
    OK(MPI_Win_allocate_shared(me == 0 ? (MPI_Aint)(np * sizeof(int)) : 0, sizeof(int),
                               MPI_INFO_NULL, node, &mine, &win));
    MPI_Aint size;
    int disp;
    OK(MPI_Win_shared_query(win, 0, &size, &disp, &slots));
    if (me == 0)
        for (int i = 0; i < np; i++) atomic_store(&slots[i], 0);
    OK(MPI_Barrier(world));
    int map[64];
    CHECK(np <= 64, "at most 64 ranks");
    for (int i = 0; i < np; i++) map[i] = i;
    rounds(world, n, slots, map);
    /* Half the ranks, in reverse order: no area, messages. */
    MPI_Comm half;
    OK(MPI_Comm_split(world, me % 2, np - me, &half));
    int hn;
    OK(MPI_Comm_size(half, &hn));
    int hmap[64]; /* member i of half is rank hmap[i] of the world: its slot */
    OK(MPI_Allgather(&me, 1, MPI_INT, hmap, 1, MPI_INT, half));
    OK(MPI_Barrier(world));
    atomic_store(&slots[me], 0);
    OK(MPI_Barrier(world));
    rounds(half, n / 4, slots, hmap);
    OK(MPI_Comm_free(&half));
    OK(MPI_Win_free(&win));
    OK(MPI_Comm_free(&node));
    if (me == 0) printf("barrier order ok\n");
    OK(MPI_Finalize());
    return 0;
}
