/* Communicators of the whole job in the world's order (MPI_Comm_dup, a split
 * with one color, a shared-memory split on one host) take collective areas of
 * their own (mpi_comm.c), and an area passes to the next such communicator
 * when one is freed. Each round makes one, runs allreduces, barriers and a
 * broadcast long enough to go through the area in chunks (where ranks have
 * cores) on it, checks every result against values that change each round,
 * and frees it; some rounds keep six at once (more than there are areas, and
 * freed out of order) and use them in turn. A member that reused an area's
 * stale generations would read another round's data. Prints "comm areas ok".
 * Usage: comm_areas [ROUNDS] */
#include <string.h>

#include "mcheck.h"

static char big[100000];

static void use(MPI_Comm c, int round)
{
    int me, np;
    OK(MPI_Comm_rank(c, &me));
    OK(MPI_Comm_size(c, &np));
    for (int k = 0; k < 3; k++) {
        long x = (long)(me + 1) * (round * 7 + k), s;
        OK(MPI_Allreduce(&x, &s, 1, MPI_LONG, MPI_SUM, c));
        CHECK(s == (long)np * (np + 1) / 2 * (round * 7 + k), "round %d: allreduce %d gave %ld",
              round, k, s);
        double d[4] = {me, -me, round, me * 0.5}, r[4];
        OK(MPI_Allreduce(d, r, 4, MPI_DOUBLE, MPI_MAX, c));
        CHECK(r[0] == np - 1 && r[1] == 0 && r[2] == round && r[3] == (np - 1) * 0.5,
              "round %d: max gave %g %g %g %g", round, r[0], r[1], r[2], r[3]);
    }
    OK(MPI_Barrier(c));
    int root = round % np;
    if (me == root) memset(big, round & 0x7f, sizeof big);
    OK(MPI_Bcast(big, (int)sizeof big, MPI_CHAR, root, c));
    CHECK(big[0] == (char)(round & 0x7f) && big[sizeof big - 1] == (char)(round & 0x7f),
          "round %d: broadcast", round);
    int all[64], mine = me * 1000 + round;
    CHECK(np <= 64, "at most 64 ranks");
    OK(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, c));
    for (int i = 0; i < np; i++)
        CHECK(all[i] == i * 1000 + round, "round %d: allgather [%d] = %d", round, i, all[i]);
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int rounds = argc > 1 ? atoi(argv[1]) : 60, me;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    for (int r = 1; r <= rounds; r++) {
        MPI_Comm c;
        switch (r % 3) {
        case 0:
            OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
            break;
        case 1:
            OK(MPI_Comm_split(MPI_COMM_WORLD, 0, me, &c));
            break;
        default:
            OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
        }
        use(c, r);
        use(MPI_COMM_WORLD, r);
        if (r % 10 == 0) { /* six at once, used in turn, freed out of order */
            MPI_Comm six[6];
            for (int i = 0; i < 6; i++) OK(MPI_Comm_dup(i % 2 ? c : MPI_COMM_WORLD, &six[i]));
            for (int i = 0; i < 6; i++) use(six[i], r * 10 + i);
            for (int i = 0; i < 6; i += 2) OK(MPI_Comm_free(&six[i]));
            use(c, r + 1000);
            for (int i = 1; i < 6; i += 2) use(six[i], r * 10 + i + 100);
            for (int i = 1; i < 6; i += 2) OK(MPI_Comm_free(&six[i]));
        }
        OK(MPI_Comm_free(&c));
    }
    if (me == 0) printf("comm areas ok\n");
    OK(MPI_Finalize());
    return 0;
}
