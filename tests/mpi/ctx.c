/* Communicator contexts are given back and reused (after MPICH's comm/ctxalloc
 * and comm/ctxsplit): 30,000 communicators made and freed one after another —
 * more than there are contexts — by dup, split and create, each used for a
 * collective and, now and then, point-to-point traffic; then running out with
 * MPI_ERRORS_RETURN returns MPI_ERR_INTERN and the program goes on. Regression:
 * contexts were never reused and the job ended after ~28,000 communicators. */
#include <stdlib.h>

#include "mcheck.h"

#define ROUNDS 30000

static void use(MPI_Comm c, int round)
{
    int me, n, sum = 0, one = 1;
    OK(MPI_Comm_rank(c, &me));
    OK(MPI_Comm_size(c, &n));
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n, "round %d: allreduce over %d ranks gave %d", round, n, sum);
    if (round % 97 == 0 && n > 1) { /* a ring: each sends its rank to the next */
        int got = -1;
        OK(MPI_Sendrecv(&me, 1, MPI_INT, (me + 1) % n, round, &got, 1, MPI_INT, (me + n - 1) % n,
                        round, c, MPI_STATUS_IGNORE));
        CHECK(got == (me + n - 1) % n, "round %d: ring gave %d", round, got);
    }
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Group world, half;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int first[1] = {0};
    OK(MPI_Group_incl(world, 1, first, &half));
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Comm c;
        switch (round % 3) {
        case 0:
            OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
            break;
        case 1:
            OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &c));
            break;
        default:
            OK(MPI_Comm_create(MPI_COMM_WORLD, half, &c));
            break;
        }
        if (c == MPI_COMM_NULL) {
            CHECK(round % 3 == 2 && me != 0, "round %d: no communicator", round);
            continue;
        }
        use(c, round);
        OK(MPI_Comm_free(&c));
        CHECK(c == MPI_COMM_NULL, "MPI_Comm_free left the handle");
    }
    OK(MPI_Group_free(&half));
    OK(MPI_Group_free(&world));

    /* Run out: dups of a communicator that returns errors, none freed. */
    MPI_Comm parent;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    OK(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));
    int cap = 40000, made = 0, rc = MPI_SUCCESS;
    MPI_Comm *all = malloc((size_t)cap * sizeof *all);
    while (made < cap && (rc = MPI_Comm_dup(parent, &all[made])) == MPI_SUCCESS) made++;
    int cls = -1;
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_INTERN, "running out gave class %d after %d communicators", cls, made);
    CHECK(made > 20000, "ran out after only %d communicators", made);
    use(all[made - 1], 0); /* the last one made still works */
    for (int i = 0; i < made; i++) OK(MPI_Comm_free(&all[i]));
    MPI_Comm again;
    OK(MPI_Comm_dup(parent, &again));
    use(again, 0);
    OK(MPI_Comm_free(&again));
    OK(MPI_Comm_free(&parent));
    free(all);
    if (me == 0)
        printf("ctx: %d communicators made and freed; ran out after %d, and recovered\n", ROUNDS,
               made);
    OK(MPI_Finalize());
    return 0;
}
