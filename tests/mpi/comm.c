/* Communicators, groups and attributes: dup, split, create, compare, free,
 * group algebra, rank translation, predefined attributes and user keyvals,
 * and that traffic on different communicators never mixes. */
#include <string.h>

#include "mcheck.h"

static int copies, deletes;
static int copy_fn(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv, (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c, (void)kv, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int me, np, r, n, res;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    OK(MPI_Comm_size(MPI_COMM_SELF, &n));
    OK(MPI_Comm_rank(MPI_COMM_SELF, &r));
    CHECK(n == 1 && r == 0, "COMM_SELF");

    /* dup: congruent, and isolated from the parent. */
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT, "dup is congruent: %d", res);
    OK(MPI_Comm_compare(dup, dup, &res));
    CHECK(res == MPI_IDENT, "ident");
    if (np >= 2) {
        int a = 1, b = 2, x, y;
        if (me == 0) {
            OK(MPI_Send(&a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
            OK(MPI_Send(&b, 1, MPI_INT, 1, 0, dup));
        } else if (me == 1) { /* receive in the other order: contexts keep them apart */
            OK(MPI_Recv(&y, 1, MPI_INT, 0, 0, dup, MPI_STATUS_IGNORE));
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(x == 1 && y == 2, "communicators mixed: %d %d", x, y);
        }
    }

    /* split by parity, key reverses the order. */
    MPI_Comm half;
    OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &half));
    OK(MPI_Comm_size(half, &n));
    OK(MPI_Comm_rank(half, &r));
    int expect_n = (np + 1 - me % 2) / 2;
    CHECK(n == expect_n, "split size %d, want %d", n, expect_n);
    int sum = 0, mine = me;
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, half));
    int want = 0;
    for (int i = me % 2; i < np; i += 2) want += i;
    CHECK(sum == want, "split allreduce %d want %d", sum, want);
    int top; /* rank 0 of half has the largest world rank (key = -me) */
    OK(MPI_Bcast(&mine, 1, MPI_INT, 0, half));
    top = mine;
    for (int i = me % 2; i < np; i += 2) CHECK(top >= i, "key order: rank 0 is world %d", top);
    MPI_Comm none;
    OK(MPI_Comm_split(MPI_COMM_WORLD, me == 0 ? MPI_UNDEFINED : 1, 0, &none));
    CHECK((me == 0) == (none == MPI_COMM_NULL), "UNDEFINED gives COMM_NULL");
    if (none != MPI_COMM_NULL) OK(MPI_Comm_free(&none));

    /* groups */
    MPI_Group world, g1, g2, g3, ge;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Group_size(world, &n));
    CHECK(n == np, "group size");
    int evens[64], ne = 0;
    for (int i = 0; i < np; i += 2) evens[ne++] = i;
    OK(MPI_Group_incl(world, ne, evens, &g1));
    OK(MPI_Group_excl(world, ne, evens, &g2));
    int ranges[1][3] = {{0, np - 1, 2}};
    OK(MPI_Group_range_incl(world, 1, ranges, &g3));
    OK(MPI_Group_compare(g1, g3, &res));
    CHECK(res == MPI_IDENT, "range_incl == incl: %d", res);
    OK(MPI_Group_range_excl(world, 1, ranges, &ge));
    OK(MPI_Group_compare(g2, ge, &res));
    CHECK(res == MPI_IDENT, "range_excl == excl");
    { /* last beyond the group: only the ranks computed (np - 1, np - 3, ...) count */
        MPI_Group same = (np - 1) % 2 ? g2 : g1, other = (np - 1) % 2 ? g1 : g2, got;
        int past[1][3] = {{(np - 1) % 2, np, 2}};
        OK(MPI_Group_range_incl(world, 1, past, &got));
        OK(MPI_Group_compare(same, got, &res));
        CHECK(res == MPI_IDENT, "range_incl (%d, %d, 2): %d", past[0][0], np, res);
        OK(MPI_Group_free(&got));
        OK(MPI_Group_range_excl(world, 1, past, &got));
        OK(MPI_Group_compare(other, got, &res));
        CHECK(res == MPI_IDENT, "range_excl: %d", res);
        OK(MPI_Group_free(&got));
    }
    OK(MPI_Group_rank(g1, &r));
    CHECK(me % 2 ? r == MPI_UNDEFINED : r == me / 2, "group rank %d", r);
    int tr[64], seq[64];
    for (int i = 0; i < ne; i++) seq[i] = i;
    OK(MPI_Group_translate_ranks(g1, ne, seq, world, tr));
    for (int i = 0; i < ne; i++) CHECK(tr[i] == evens[i], "translate");
    int idx[1] = {0}, out[1];
    OK(MPI_Group_translate_ranks(world, 1, idx, g2, out));
    CHECK(out[0] == MPI_UNDEFINED, "rank 0 is not odd");
    MPI_Group u, in, d;
    OK(MPI_Group_union(g1, g2, &u));
    OK(MPI_Group_compare(u, world, &res));
    CHECK(res == (np > 2 ? MPI_SIMILAR : res), "union similar");
    OK(MPI_Group_intersection(g1, g2, &in));
    OK(MPI_Group_size(in, &n));
    CHECK(n == 0, "intersection empty");
    OK(MPI_Group_difference(world, g2, &d));
    OK(MPI_Group_compare(d, g1, &res));
    CHECK(res == MPI_IDENT, "difference");

    /* create from a group: only members get a communicator */
    MPI_Comm ev;
    OK(MPI_Comm_create(MPI_COMM_WORLD, g1, &ev));
    CHECK((me % 2 == 0) == (ev != MPI_COMM_NULL), "create membership");
    if (ev != MPI_COMM_NULL) {
        OK(MPI_Comm_rank(ev, &r));
        CHECK(r == me / 2, "create rank");
        OK(MPI_Comm_compare(ev, half, &res));
        CHECK(res == (np > 2 ? MPI_SIMILAR : MPI_CONGRUENT) || np <= 2, "similar: %d", res);
        OK(MPI_Barrier(ev));
        OK(MPI_Comm_free(&ev));
        CHECK(ev == MPI_COMM_NULL, "freed");
    }
    OK(MPI_Group_free(&g1));
    OK(MPI_Group_free(&g2));
    OK(MPI_Group_free(&g3));
    OK(MPI_Group_free(&ge));
    OK(MPI_Group_free(&u));
    OK(MPI_Group_free(&in));
    OK(MPI_Group_free(&d));
    OK(MPI_Group_free(&world));

    /* attributes */
    int *ub, flag;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && *ub >= 32767, "TAG_UB");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &ub, &flag));
    CHECK(flag, "WTIME_IS_GLOBAL");
    int kv;
    static int payload = 77;
    OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &kv, NULL));
    OK(MPI_Comm_set_attr(dup, kv, &payload));
    int *got;
    OK(MPI_Comm_get_attr(dup, kv, &got, &flag));
    CHECK(flag && got == &payload, "user attribute");
    MPI_Comm dup2;
    OK(MPI_Comm_dup(dup, &dup2));
    CHECK(copies == 1, "copy callback ran %d", copies);
    OK(MPI_Comm_get_attr(dup2, kv, &got, &flag));
    CHECK(flag && *got == 77, "copied attribute");
    OK(MPI_Comm_free(&dup2));
    CHECK(deletes == 1, "delete callback on free");
    OK(MPI_Comm_delete_attr(dup, kv));
    CHECK(deletes == 2, "delete callback");
    OK(MPI_Comm_get_attr(dup, kv, &got, &flag));
    CHECK(!flag, "deleted");
    OK(MPI_Comm_free_keyval(&kv));
    char name[MPI_MAX_OBJECT_NAME];
    OK(MPI_Comm_set_name(dup, "mine"));
    OK(MPI_Comm_get_name(dup, name, &n));
    CHECK(!strcmp(name, "mine") && n == 4, "name");
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &n));
    CHECK(!strcmp(name, "MPI_COMM_WORLD"), "world name");
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_free(&half));
    /* many communicators: contexts do not run out quickly */
    for (int i = 0; i < 200; i++) {
        MPI_Comm t;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &t));
        OK(MPI_Comm_free(&t));
    }
    OK(MPI_Finalize());
    if (me == 0) printf("mpi comm: ok on %d ranks\n", np);
    return 0;
}
