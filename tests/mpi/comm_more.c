/* Communicator creation beyond dup/split/create: MPI_Comm_create_group (only
 * the group's members call; disjoint groups at once, different tags),
 * MPI_Comm_split_type with MPI_COMM_TYPE_SHARED (one communicator per host:
 * with COURIER_TEST_HOSTS=h, world rank p is on pretend host p*h/np) and
 * MPI_UNDEFINED, and the MPI-1 attribute calls (MPI_Keyval_create,
 * MPI_Attr_put/get/delete, MPI_Keyval_free, MPI_DUP_FN, MPI_NULL_COPY_FN). */
#include <stdlib.h>
#include <string.h>

#include "mcheck.h"

static int me, np, deletes;

static int count_delete(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c, (void)kv, (void)val;
    (*(int *)extra)++;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    int n, r, flag, rc, cls;

    /* ---- MPI_Comm_create_group ---- */
    MPI_Group wg, evens, odds;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int ranks[64], ne = 0, no = 0;
    for (int i = 0; i < np; i += 2) ranks[ne++] = i;
    OK(MPI_Group_incl(wg, ne, ranks, &evens));
    for (int i = 1; i < np; i += 2) ranks[no++] = i;
    OK(MPI_Group_incl(wg, no, ranks, &odds));
    for (int round = 0; round < 50; round++) {
        /* the evens and the odds, at the same time, with different tags; the
         * odds list their members in reverse (rank order is the group's) */
        MPI_Comm c;
        if (me % 2 == 0) {
            OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 10 + round, &c));
            OK(MPI_Comm_size(c, &n));
            OK(MPI_Comm_rank(c, &r));
            CHECK(n == ne && r == me / 2, "evens: size %d rank %d", n, r);
        } else {
            OK(MPI_Comm_create_group(MPI_COMM_WORLD, odds, 7, &c));
            OK(MPI_Comm_size(c, &n));
            OK(MPI_Comm_rank(c, &r));
            CHECK(n == no && r == me / 2, "odds: size %d rank %d", n, r);
        }
        int sum = 0;
        OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c));
        int want = 0;
        for (int i = me % 2; i < np; i += 2) want += i;
        CHECK(sum == want, "sum over the created group %d, expected %d", sum, want);
        OK(MPI_Comm_free(&c));
    }
    /* a group that leaves out rank 0, over a dup, while rank 0 does something else */
    {
        MPI_Comm d, c;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        if (np > 1) {
            MPI_Group g, rev;
            int zero = 0;
            OK(MPI_Comm_group(d, &g));
            OK(MPI_Group_excl(g, 1, &zero, &rev));
            if (me != 0) {
                OK(MPI_Comm_create_group(d, rev, 0, &c));
                OK(MPI_Comm_rank(c, &r));
                CHECK(r == me - 1, "create_group without 0: rank %d", r);
                OK(MPI_Barrier(c));
                OK(MPI_Comm_free(&c));
            }
            OK(MPI_Group_free(&rev));
            OK(MPI_Group_free(&g));
        }
        /* a process outside the group gets MPI_COMM_NULL at once */
        OK(MPI_Comm_create_group(d, MPI_GROUP_EMPTY, 0, &c));
        CHECK(c == MPI_COMM_NULL, "create_group of the empty group");
        OK(MPI_Comm_free(&d));
    }
    OK(MPI_Group_free(&evens));
    OK(MPI_Group_free(&odds));
    OK(MPI_Group_free(&wg));

    /* ---- MPI_Comm_split_type ---- */
    const char *h = getenv("COURIER_TEST_HOSTS");
    int hosts = h ? atoi(h) : 1;
    if (hosts < 1) hosts = 1;
    if (hosts > np) hosts = np;
    int myhost = (int)((long)me * hosts / np), lsize = 0, lrank = 0;
    for (int p = 0; p < np; p++)
        if ((int)((long)p * hosts / np) == myhost) {
            if (p < me) lrank++;
            lsize++;
        }
    MPI_Comm sh;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh));
    OK(MPI_Comm_size(sh, &n));
    OK(MPI_Comm_rank(sh, &r));
    CHECK(n == lsize && r == lrank, "shared: size %d rank %d, expected %d %d (host %d of %d)", n, r,
          lsize, lrank, myhost, hosts);
    int hostsum = 0;
    OK(MPI_Allreduce(&myhost, &hostsum, 1, MPI_INT, MPI_SUM, sh));
    CHECK(hostsum == myhost * lsize, "shared communicator spans hosts");
    OK(MPI_Comm_free(&sh));
    /* key reverses the order */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -me, MPI_INFO_NULL, &sh));
    OK(MPI_Comm_rank(sh, &r));
    CHECK(r == lsize - 1 - lrank, "shared, reversed: rank %d", r);
    OK(MPI_Comm_free(&sh));
    /* MPI_UNDEFINED on the odd ranks */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, me % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                           MPI_INFO_NULL, &sh));
    if (me % 2)
        CHECK(sh == MPI_COMM_NULL, "split_type MPI_UNDEFINED");
    else {
        CHECK(sh != MPI_COMM_NULL, "split_type shared");
        OK(MPI_Comm_free(&sh));
    }

    /* ---- MPI-1 attribute calls ---- */
    int kv_dup, kv_null, dels = 0;
    static int v1 = 1, v2 = 2;
    OK(MPI_Keyval_create(MPI_DUP_FN, count_delete, &kv_dup, &dels));
    OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &kv_null, NULL));
    MPI_Comm a, b;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    OK(MPI_Attr_put(a, kv_dup, &v1));
    OK(MPI_Attr_put(a, kv_null, &v2));
    int *got = NULL;
    OK(MPI_Attr_get(a, kv_dup, &got, &flag));
    CHECK(flag && got == &v1, "Attr_get after Attr_put");
    OK(MPI_Comm_get_attr(a, kv_null, &got, &flag)); /* the same keyvals as MPI-2's */
    CHECK(flag && got == &v2, "Comm_get_attr of an Attr_put value");
    OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &got, &flag));
    CHECK(flag && *got >= 32767, "MPI_TAG_UB through Attr_get");
    OK(MPI_Comm_dup(a, &b));
    OK(MPI_Attr_get(b, kv_dup, &got, &flag));
    CHECK(flag && got == &v1, "MPI_DUP_FN copies");
    OK(MPI_Attr_get(b, kv_null, &got, &flag));
    CHECK(!flag, "MPI_NULL_COPY_FN does not copy");
    OK(MPI_Attr_put(a, kv_dup, &v2)); /* replaces: the old value's delete runs */
    CHECK(dels == 1, "replacing runs the delete function: %d", dels);
    OK(MPI_Attr_delete(a, kv_dup));
    CHECK(dels == 2, "Attr_delete runs the delete function: %d", dels);
    OK(MPI_Attr_get(a, kv_dup, &got, &flag));
    CHECK(!flag, "deleted");
    OK(MPI_Keyval_free(&kv_dup));
    CHECK(kv_dup == MPI_KEYVAL_INVALID, "Keyval_free resets the keyval");
    OK(MPI_Comm_free(&b)); /* the copied value's delete still runs */
    CHECK(dels == 3, "free runs the delete function: %d", dels);
    OK(MPI_Comm_free(&a));
    OK(MPI_Keyval_free(&kv_null));

    /* errors, returned */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Attr_put(MPI_COMM_WORLD, MPI_TAG_UB, &v1);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "Attr_put of a predefined key: %d", rc);
    int bad = 12345;
    rc = MPI_Keyval_free(&bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "Keyval_free of a bad keyval: %d", rc);
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &sh);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "bad split_type: %d", rc);
    MPI_Comm c;
    rc = MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, -1, &c);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TAG, "create_group with a negative tag: %d", rc);

    OK(MPI_Finalize());
    if (me == 0) printf("comm_more: ok on %d ranks\n", np);
    return 0;
}
