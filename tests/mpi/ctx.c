/* Communicator contexts are given back and reused (after MPICH's comm/ctxalloc
 * and comm/ctxsplit); there are about 28,700 context pairs per rank:
 *  - 40,000 communicators made by MPI_Comm_dup and freed one after another,
 *    then 30,000 by MPI_Comm_split and MPI_Comm_create, each carrying messages;
 *  - one split's disjoint communicators share a pair: one side frees its own
 *    and makes another from a communicator of its own while the other side
 *    still talks on the old one;
 *  - a receive left pending across MPI_Comm_free (MPI allows it) keeps its
 *    pair taken: a later communicator's message never matches it;
 *  - running out, under MPI_ERRORS_RETURN, returns MPI_ERR_INTERN and the
 *    program goes on; a pair free on some ranks but not on all is not taken;
 *    after freeing, every pair is there again (none leaked).
 * Regression: contexts were never given back (the job ended after ~28,000
 * communicators); then a pair went back at MPI_Comm_free even with a receive
 * still posted on it. Any number of ranks; 2 and 5 in the suite. */
#include <stdlib.h>

#include "mcheck.h"

#define DUP_ROUNDS 40000
#define SPLIT_ROUNDS 30000

/* Each member sends (its rank, round) to the next and checks what the previous
 * one sent. */
static void ring(MPI_Comm c, int round)
{
    int me, n;
    OK(MPI_Comm_rank(c, &me));
    OK(MPI_Comm_size(c, &n));
    int out[2] = {me, round}, in[2] = {-1, -1};
    OK(MPI_Sendrecv(out, 2, MPI_INT, (me + 1) % n, round % 1000, in, 2, MPI_INT, (me + n - 1) % n,
                    round % 1000, c, MPI_STATUS_IGNORE));
    CHECK(in[0] == (me + n - 1) % n && in[1] == round, "round %d: ring gave (%d, %d)", round, in[0],
          in[1]);
}

/* Dup MPI_COMM_SELF until an error comes back; the dups are left in all[]. */
static int exhaust_self(MPI_Comm *all, int cap)
{
    int made = 0, rc = MPI_SUCCESS;
    while (made < cap && (rc = MPI_Comm_dup(MPI_COMM_SELF, &all[made])) == MPI_SUCCESS) made++;
    int cls = -1;
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_INTERN, "running out gave class %d after %d communicators", cls, made);
    CHECK(made > 20000, "ran out after only %d communicators", made);
    return made;
}

/* Every rank has the same value. */
static void same_everywhere(int v, const char *what)
{
    int lo = 0, hi = 0;
    OK(MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    OK(MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(lo == hi, "%s differs between ranks: %d..%d", what, lo, hi);
}

static void disjoint(int me, int np)
{
    MPI_Comm half, other;
    int side = me < np / 2;
    OK(MPI_Comm_split(MPI_COMM_WORLD, side, me, &half));
    OK(MPI_Comm_dup(half, &other));
    if (side) { /* free, and make one over a communicator of this side only */
        OK(MPI_Comm_free(&half));
        OK(MPI_Comm_dup(other, &half));
    }
    for (int round = 0; round < 100; round++) ring(half, round);
    int sum = 0;
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, half));
    int h = np / 2, want = side ? h * (h - 1) / 2 : (np * (np - 1) - h * (h - 1)) / 2;
    CHECK(sum == want, "side %d: sum of ranks %d, want %d", side, sum, want);
    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_free(&other));
}

/* Rank 0 leaves a receive posted on a communicator it frees; a message of the
 * next communicator, with the same source and tag, must not match it. */
static void pending_receive(int me)
{
    MPI_Comm c, next;
    MPI_Request rq = MPI_REQUEST_NULL;
    int old = -1;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    if (me == 0) OK(MPI_Irecv(&old, 1, MPI_INT, 1, 5, c, &rq));
    OK(MPI_Comm_free(&c));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &next));
    if (me == 1) {
        int x = 11, y = 12;
        OK(MPI_Send(&x, 1, MPI_INT, 0, 5, next));
        OK(MPI_Send(&y, 1, MPI_INT, 0, 6, next));
    }
    if (me == 0) {
        int got = -1, flag = -1;
        OK(MPI_Recv(&got, 1, MPI_INT, 1, 6, next, MPI_STATUS_IGNORE)); /* tag 5 came first */
        CHECK(got == 12, "tag 6 gave %d", got);
        OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag,
              "a receive posted on a freed communicator matched a message of the next "
              "one (got %d)",
              old);
        OK(MPI_Recv(&got, 1, MPI_INT, 1, 5, next, MPI_STATUS_IGNORE));
        CHECK(got == 11, "tag 5 gave %d", got);
        MPI_Status st;
        OK(MPI_Cancel(&rq));
        OK(MPI_Wait(&rq, &st));
        OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag, "the pending receive was not cancelled");
    }
    OK(MPI_Comm_free(&next));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int cap = 40000;
    MPI_Comm *all = malloc((size_t)cap * sizeof *all);
    CHECK(all, "out of memory");

    for (int round = 0; round < DUP_ROUNDS; round++) {
        MPI_Comm c;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        ring(c, round);
        OK(MPI_Comm_free(&c));
        CHECK(c == MPI_COMM_NULL, "MPI_Comm_free left the handle");
    }

    MPI_Group world, evens;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int range[1][3] = {{0, np - 1, 2}};
    OK(MPI_Group_range_incl(world, 1, range, &evens));
    for (int round = 0; round < SPLIT_ROUNDS; round++) {
        MPI_Comm c;
        int color = round % 2 ? me % 2 : me % 3, rev = round % 4 < 2, key = rev ? -me : me;
        if (round % 5 == 4) {
            OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
            if (me % 2) {
                CHECK(c == MPI_COMM_NULL, "round %d: odd rank in the even group", round);
                continue;
            }
        } else {
            OK(MPI_Comm_split(MPI_COMM_WORLD, color, key, &c));
        }
        int r, n;
        OK(MPI_Comm_rank(c, &r));
        OK(MPI_Comm_size(c, &n));
        if (round % 5 != 4 && round % 7 == 0 && n > 1) { /* rank order follows the key */
            int first = -1;
            OK(MPI_Allreduce(&me, &first, 1, MPI_INT, rev ? MPI_MAX : MPI_MIN, c));
            CHECK((r == 0) == (first == me), "round %d: rank %d of %d in the split", round, r, n);
        }
        ring(c, round);
        OK(MPI_Comm_free(&c));
    }
    OK(MPI_Group_free(&evens));
    OK(MPI_Group_free(&world));

    /* How many communicators this rank can have at once (all freed now). */
    int pairs = exhaust_self(all, cap);
    same_everywhere(pairs, "the number of contexts");
    for (int i = 0; i < pairs; i++) OK(MPI_Comm_free(&all[i]));

    disjoint(me, np);
    if (np > 1) pending_receive(me);

    /* Run out: MPI_COMM_SELF returns errors (set above); every pair is back but
     * the one of 'parent'. */
    MPI_Comm parent, c;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    OK(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));
    int made = exhaust_self(all, cap), cls = -1;
    CHECK(made == pairs - 1, "%d communicators at once after the others were freed, want %d", made,
          pairs - 1);
    OK(MPI_Error_class(MPI_Comm_dup(parent, &c), &cls));
    CHECK(cls == MPI_ERR_INTERN, "dup with no context free gave class %d", cls);
    ring(parent, 1); /* the program goes on */
    ring(all[made - 1], 2);
    if (np > 1) { /* each pair free on some rank, none on all */
        for (int i = 0; i < made; i++)
            if (i % np != me) OK(MPI_Comm_free(&all[i]));
        cls = -1;
        OK(MPI_Error_class(MPI_Comm_dup(parent, &c), &cls));
        CHECK(cls == MPI_ERR_INTERN, "dup with no context free on every rank gave class %d", cls);
    }
    for (int i = 0; i < made; i++)
        if (all[i] != MPI_COMM_NULL) OK(MPI_Comm_free(&all[i]));
    OK(MPI_Comm_dup(parent, &c));
    ring(c, 3);
    OK(MPI_Comm_free(&c));
    OK(MPI_Comm_free(&parent));
    free(all);
    if (me == 0)
        printf("ctx: %d dups and %d splits made and freed; %d contexts, run out and back\n",
               DUP_ROUNDS, SPLIT_ROUNDS, pairs);
    OK(MPI_Finalize());
    return 0;
}
