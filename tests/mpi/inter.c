/* Intercommunicators: MPI_Intercomm_create from uneven halves of
 * MPI_COMM_WORLD (and from "rank 0 against the rest"), remote size and group,
 * point-to-point across (specific and MPI_ANY_SOURCE receives, probe),
 * MPI_Intercomm_merge with both orders of high, dup / split / create of an
 * intercommunicator, compare, names and attributes on it, errors, and many
 * create/free rounds (the context pair is given back). Runs on 2 to 5 ranks. */
#include <stdbool.h>
#include <string.h>

#include "mcheck.h"

static int me, np;

static int copy_fn(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Point-to-point across ic: every local rank r sends its world rank to remote
 * rank r % rsize; every rank then receives what it is owed, the first from
 * MPI_ANY_SOURCE after a probe, and checks the source against the value. */
static void p2p_check(MPI_Comm ic, const int *remote_world, int tag)
{
    int lsize, rsize, lr;
    OK(MPI_Comm_size(ic, &lsize));
    OK(MPI_Comm_remote_size(ic, &rsize));
    OK(MPI_Comm_rank(ic, &lr));
    MPI_Request rq;
    OK(MPI_Isend(&me, 1, MPI_INT, lr % rsize, tag, ic, &rq));
    int first = -1;
    for (int src = lr; src < rsize; src += lsize) {
        MPI_Status st;
        int v = -1;
        if (first < 0) { /* the first from anyone */
            OK(MPI_Probe(MPI_ANY_SOURCE, tag, ic, &st));
            CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize, "probe source %d", st.MPI_SOURCE);
            CHECK(st.MPI_SOURCE % lsize == lr, "probe source %d for %d", st.MPI_SOURCE, lr);
            OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, ic, &st));
            CHECK(st.MPI_SOURCE % lsize == lr, "source %d for %d", st.MPI_SOURCE, lr);
            first = st.MPI_SOURCE;
            src -= lsize; /* then every owed sender by name, but that one */
        } else {
            if (src == first) continue;
            OK(MPI_Recv(&v, 1, MPI_INT, src, tag, ic, &st));
            CHECK(st.MPI_SOURCE == src, "source %d, expected %d", st.MPI_SOURCE, src);
        }
        CHECK(v == remote_world[st.MPI_SOURCE], "got %d from remote %d (world %d)", v,
              st.MPI_SOURCE, remote_world[st.MPI_SOURCE]);
        CHECK(st.MPI_TAG == tag, "tag %d", st.MPI_TAG);
    }
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

/* Make an intercommunicator between world ranks [0, a) and [a, np). */
static MPI_Comm make_inter(int a, MPI_Comm *local, int tag)
{
    bool left = me < a;
    OK(MPI_Comm_split(MPI_COMM_WORLD, left, me, local));
    MPI_Comm ic;
    OK(MPI_Intercomm_create(*local, 0, MPI_COMM_WORLD, left ? a : 0, tag, &ic));
    return ic;
}

static void one_split(int a)
{
    bool left = me < a;
    int lsz = left ? a : np - a, rsz = left ? np - a : a, lbase = left ? 0 : a,
        rbase = left ? a : 0;
    MPI_Comm local, ic;
    ic = make_inter(a, &local, 17 + a);

    int flag = 0, n, r, res;
    OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "test_inter of an intercomm");
    OK(MPI_Comm_test_inter(local, &flag));
    CHECK(!flag, "test_inter of an intracomm");
    OK(MPI_Comm_size(ic, &n));
    CHECK(n == lsz, "local size %d, expected %d", n, lsz);
    OK(MPI_Comm_rank(ic, &r));
    CHECK(r == me - lbase, "local rank %d, expected %d", r, me - lbase);
    OK(MPI_Comm_remote_size(ic, &n));
    CHECK(n == rsz, "remote size %d, expected %d", n, rsz);

    /* groups: local and remote, in world order */
    MPI_Group wg, lg, rg;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    OK(MPI_Comm_group(ic, &lg));
    OK(MPI_Comm_remote_group(ic, &rg));
    int idx[8], out[8], rw[8];
    for (int i = 0; i < 8; i++) idx[i] = i;
    OK(MPI_Group_size(rg, &n));
    CHECK(n == rsz, "remote group size %d", n);
    OK(MPI_Group_translate_ranks(rg, rsz, idx, wg, out));
    for (int i = 0; i < rsz; i++) {
        CHECK(out[i] == rbase + i, "remote %d is world %d", i, out[i]);
        rw[i] = out[i];
    }
    OK(MPI_Group_translate_ranks(lg, lsz, idx, wg, out));
    for (int i = 0; i < lsz; i++) CHECK(out[i] == lbase + i, "local %d is world %d", i, out[i]);
    OK(MPI_Group_free(&lg));
    OK(MPI_Group_free(&rg));
    OK(MPI_Group_free(&wg));

    p2p_check(ic, rw, 5);

    /* merge, left low: merged rank = world rank */
    MPI_Comm m;
    OK(MPI_Intercomm_merge(ic, !left, &m));
    OK(MPI_Comm_test_inter(m, &flag));
    CHECK(!flag, "merge gives an intracomm");
    OK(MPI_Comm_size(m, &n));
    CHECK(n == np, "merged size %d", n);
    OK(MPI_Comm_rank(m, &r));
    CHECK(r == me, "merged rank %d, expected %d (left low)", r, me);
    int sum = 0;
    OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, m));
    CHECK(sum == np * (np - 1) / 2, "merged ranks sum %d", sum);
    OK(MPI_Comm_free(&m));
    /* merge, left high: the right group first */
    OK(MPI_Intercomm_merge(ic, left, &m));
    OK(MPI_Comm_rank(m, &r));
    int want = left ? (np - a) + me : me - a;
    CHECK(r == want, "merged rank %d, expected %d (left high)", r, want);
    OK(MPI_Comm_free(&m));
    /* merge, equal flags: some order, the same everywhere, each group contiguous */
    OK(MPI_Intercomm_merge(ic, 0, &m));
    OK(MPI_Comm_rank(m, &r));
    int ranks[8];
    OK(MPI_Allgather(&me, 1, MPI_INT, ranks, 1, MPI_INT, m));
    bool lfirst = ranks[0] == 0;
    for (int i = 0; i < np; i++) {
        int w = lfirst ? i : (i < np - a ? a + i : i - (np - a));
        CHECK(ranks[i] == w, "equal-high merge: member %d is world %d, expected %d", i, ranks[i],
              w);
    }
    OK(MPI_Comm_free(&m));

    /* dup: an intercomm, congruent, and isolated from the original */
    MPI_Comm d;
    OK(MPI_Comm_dup(ic, &d));
    OK(MPI_Comm_test_inter(d, &flag));
    CHECK(flag, "dup of an intercomm is an intercomm");
    OK(MPI_Comm_compare(ic, d, &res));
    CHECK(res == MPI_CONGRUENT, "compare(ic, dup) %d", res);
    OK(MPI_Comm_compare(ic, local, &res));
    CHECK(res == MPI_UNEQUAL, "compare(ic, local) %d", res);
    OK(MPI_Comm_remote_size(d, &n));
    CHECK(n == rsz, "dup remote size %d", n);
    { /* same tag on both, received in the other order */
        int lr = me - lbase, a1 = me, a2 = me + 100, b1 = -1, b2 = -1;
        MPI_Request q[2];
        OK(MPI_Isend(&a1, 1, MPI_INT, lr % rsz, 9, ic, &q[0]));
        OK(MPI_Isend(&a2, 1, MPI_INT, lr % rsz, 9, d, &q[1]));
        for (int s = 0; s < rsz; s++)
            if (s % lsz == lr) {
                OK(MPI_Recv(&b2, 1, MPI_INT, s, 9, d, MPI_STATUS_IGNORE));
                OK(MPI_Recv(&b1, 1, MPI_INT, s, 9, ic, MPI_STATUS_IGNORE));
                CHECK(b1 == rw[s] && b2 == rw[s] + 100, "dup isolation: %d %d from %d", b1, b2,
                      rw[s]);
            }
        OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    }
    p2p_check(d, rw, 6);

    /* names and attributes on an intercomm; dup copies attributes */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Comm_set_name(d, "the dup"));
    OK(MPI_Comm_get_name(d, name, &len));
    CHECK(strcmp(name, "the dup") == 0 && len == 7, "name '%s'", name);
    int kv;
    static int val = 42;
    OK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &kv, NULL));
    OK(MPI_Comm_set_attr(d, kv, &val));
    MPI_Comm d2;
    OK(MPI_Comm_dup(d, &d2));
    int *got = NULL;
    OK(MPI_Comm_get_attr(d2, kv, &got, &flag));
    CHECK(flag && got == &val, "attribute copied to the dup of an intercomm");
    OK(MPI_Comm_test_inter(d2, &flag));
    CHECK(flag, "dup of a dup");
    OK(MPI_Comm_free(&d2));
    OK(MPI_Comm_free_keyval(&kv));
    OK(MPI_Comm_free(&d));

    /* split of the intercomm: color = world rank % 2, key = -world rank */
    MPI_Comm s;
    int color = me % 2;
    OK(MPI_Comm_split(ic, color, -me, &s));
    int lcnt = 0, rcnt = 0;
    for (int w = lbase; w < lbase + lsz; w++) lcnt += w % 2 == color;
    for (int w = rbase; w < rbase + rsz; w++) rcnt += w % 2 == color;
    if (rcnt == 0) {
        CHECK(s == MPI_COMM_NULL, "split with an empty remote side gives MPI_COMM_NULL");
    } else {
        CHECK(s != MPI_COMM_NULL, "split gave MPI_COMM_NULL");
        OK(MPI_Comm_test_inter(s, &flag));
        CHECK(flag, "split of an intercomm is an intercomm");
        OK(MPI_Comm_size(s, &n));
        CHECK(n == lcnt, "split local size %d, expected %d", n, lcnt);
        OK(MPI_Comm_remote_size(s, &n));
        CHECK(n == rcnt, "split remote size %d, expected %d", n, rcnt);
        /* key = -rank: the highest world rank first */
        int rk = 0;
        for (int w = lbase + lsz - 1; w > me; w--) rk += w % 2 == color;
        OK(MPI_Comm_rank(s, &r));
        CHECK(r == rk, "split rank %d, expected %d", r, rk);
        int srw[8], k = 0;
        for (int w = rbase + rsz - 1; w >= rbase; w--)
            if (w % 2 == color) srw[k++] = w;
        p2p_check(s, srw, 7);
        OK(MPI_Comm_free(&s));
    }
    /* MPI_UNDEFINED on every rank */
    OK(MPI_Comm_split(ic, MPI_UNDEFINED, 0, &s));
    CHECK(s == MPI_COMM_NULL, "split with MPI_UNDEFINED");

    /* create: each side drops its local rank 0 (when it has more than one) */
    MPI_Group g, sub;
    OK(MPI_Comm_group(ic, &g));
    int zero = 0;
    if (lsz > 1)
        OK(MPI_Group_excl(g, 1, &zero, &sub));
    else
        OK(MPI_Group_incl(g, 1, &zero, &sub));
    OK(MPI_Comm_create(ic, sub, &s));
    int lkeep = lsz > 1 ? lsz - 1 : 1, rkeep = rsz > 1 ? rsz - 1 : 1;
    bool in = lsz == 1 || me != lbase;
    if (!in) {
        CHECK(s == MPI_COMM_NULL, "create: not in the group");
    } else {
        CHECK(s != MPI_COMM_NULL, "create gave MPI_COMM_NULL");
        OK(MPI_Comm_size(s, &n));
        CHECK(n == lkeep, "create local size %d", n);
        OK(MPI_Comm_remote_size(s, &n));
        CHECK(n == rkeep, "create remote size %d", n);
        int crw[8];
        for (int i = 0; i < rkeep; i++) crw[i] = rsz > 1 ? rbase + 1 + i : rbase;
        p2p_check(s, crw, 8);
        OK(MPI_Comm_free(&s));
    }
    OK(MPI_Group_free(&sub));
    OK(MPI_Group_free(&g));

    OK(MPI_Comm_free(&ic));
    CHECK(ic == MPI_COMM_NULL, "free sets MPI_COMM_NULL");
    OK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(np >= 2 && np <= 8, "run on 2 to 8 ranks");

    one_split((np + 1) / 2); /* uneven halves when np is odd */
    one_split(1);            /* rank 0 against the rest */
    if (np > 2) one_split(np - 1);

    /* many rounds: the pairs are given back */
    for (int i = 0; i < 300; i++) {
        MPI_Comm local, ic, d;
        ic = make_inter((np + 1) / 2, &local, 3);
        OK(MPI_Comm_dup(ic, &d));
        OK(MPI_Comm_free(&d));
        OK(MPI_Comm_free(&ic));
        OK(MPI_Comm_free(&local));
    }

    /* intercomm made with a peer communicator other than world, on a dup of it */
    {
        MPI_Comm peer, local, ic;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &peer));
        int a = np / 2;
        bool left = me < a;
        OK(MPI_Comm_split(MPI_COMM_WORLD, left, -me, &local)); /* leaders: highest ranks */
        OK(MPI_Intercomm_create(local, 0, peer, left ? np - 1 : a - 1, 0, &ic));
        int n;
        OK(MPI_Comm_remote_size(ic, &n));
        CHECK(n == (left ? np - a : a), "remote size %d", n);
        int rw[8];
        int rb = left ? a : 0, rs = left ? np - a : a;
        for (int i = 0; i < rs; i++) rw[i] = rb + rs - 1 - i;
        p2p_check(ic, rw, 11);
        OK(MPI_Comm_free(&ic));
        OK(MPI_Comm_free(&local));
        OK(MPI_Comm_free(&peer));
    }

    /* errors, returned */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int n, cls;
    int rc = MPI_Comm_remote_size(MPI_COMM_WORLD, &n);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "remote_size of an intracomm: %d", rc);
    MPI_Group grp;
    rc = MPI_Comm_remote_group(MPI_COMM_WORLD, &grp);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "remote_group of an intracomm: %d", rc);
    MPI_Comm m;
    rc = MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &m);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "merge of an intracomm: %d", rc);
    MPI_Comm ic;
    rc = MPI_Intercomm_create(MPI_COMM_WORLD, np, MPI_COMM_WORLD, 0, 0, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "bad local leader: %d", rc);
    rc = MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 0, -1, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TAG, "bad tag: %d", rc);
    /* a leader that names itself as the remote leader: every local member
     * (here: this rank alone, over MPI_COMM_SELF) gets the error */
    rc = MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, me, 0, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "remote leader is self: %d", rc);
    rc = MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, np, 0, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "remote leader out of range: %d", rc);

    OK(MPI_Finalize());
    if (me == 0) printf("inter: ok on %d ranks\n", np);
    return 0;
}
