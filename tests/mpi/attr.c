/* Attribute callbacks and predefined attributes (after MPICH's attr/attrend2,
 * attr/attrerrcomm and attr/baseattrcomm):
 *  - MPI_Finalize first runs the delete callbacks of MPI_COMM_SELF's attributes,
 *    the last set first, while MPI is still usable (MPI_Finalized says false);
 *  - an error a copy callback returns fails MPI_Comm_dup (no communicator), and
 *    one a delete callback returns fails MPI_Comm_delete_attr, MPI_Comm_set_attr
 *    replacing a value, and MPI_Comm_free (which then frees nothing);
 *  - every predefined attribute answers, MPI_LASTUSEDCODE included.
 * Regression: these callbacks' errors were dropped, MPI_Finalize ran no
 * callback, and MPI_LASTUSEDCODE ended the job. Any number of ranks. */
#include <string.h>

#include "mcheck.h"

static int order[4], norder, fail_copy, fail_del, deletes;

static int del_self(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c;
    (void)kv;
    (void)extra;
    int fin = 1;
    MPI_Finalized(&fin);
    CHECK(!fin, "a delete callback at MPI_Finalize ran after MPI was finalized");
    int me = -1;
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &me) == MPI_SUCCESS, "MPI unusable in the callback");
    if (norder < 4) order[norder++] = *(int *)val;
    return MPI_SUCCESS;
}

static int copy_maybe(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c;
    (void)kv;
    (void)extra;
    if (fail_copy) return MPI_ERR_OTHER;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int del_maybe(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c;
    (void)kv;
    (void)val;
    (void)extra;
    if (fail_del) return MPI_ERR_OTHER;
    deletes++;
    return MPI_SUCCESS;
}

static void predefined(int np)
{
    int *v, flag = 0;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v == MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE: flag %d value %d", flag, *v);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_TAG_UB: flag %d value %d", flag, *v);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < np)), "MPI_HOST %d", *v);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || *v >= 0), "MPI_IO %d", *v);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(flag && (*v == 0 || *v == 1), "MPI_WTIME_IS_GLOBAL %d", *v);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(flag && *v >= np, "MPI_UNIVERSE_SIZE %d with %d ranks", *v, np);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(flag && *v == 0, "MPI_APPNUM %d", *v);
}

static void callback_errors(void)
{
    MPI_Comm c, d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int kv, val = 7;
    OK(MPI_Comm_create_keyval(copy_maybe, del_maybe, &kv, NULL));
    OK(MPI_Comm_set_attr(c, kv, &val));

    fail_copy = 1; /* dup fails, and makes nothing */
    d = MPI_COMM_WORLD;
    int rc = MPI_Comm_dup(c, &d);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_dup ignored the copy callback's error");
    CHECK(d == MPI_COMM_NULL, "a failed MPI_Comm_dup left a communicator");
    fail_copy = 0;
    OK(MPI_Comm_dup(c, &d)); /* and works again */
    int *got, flag = 0;
    OK(MPI_Comm_get_attr(d, kv, &got, &flag));
    CHECK(flag && *got == 7, "copied attribute: flag %d", flag);

    fail_del = 1;
    CHECK(MPI_Comm_delete_attr(c, kv) != MPI_SUCCESS, "delete_attr ignored the error");
    OK(MPI_Comm_get_attr(c, kv, &got, &flag));
    CHECK(flag, "the attribute went although its delete callback failed");
    int val2 = 8;
    CHECK(MPI_Comm_set_attr(c, kv, &val2) != MPI_SUCCESS, "set_attr replaced despite the error");
    OK(MPI_Comm_get_attr(c, kv, &got, &flag));
    CHECK(flag && *got == 7, "the old value changed to %d", *got);
    MPI_Comm keep = c;
    CHECK(MPI_Comm_free(&c) != MPI_SUCCESS, "MPI_Comm_free ignored the delete callback's error");
    CHECK(c == keep, "a failed MPI_Comm_free cleared the handle");
    fail_del = 0;
    deletes = 0;
    OK(MPI_Comm_set_attr(c, kv, &val2)); /* replacing deletes the old value */
    CHECK(deletes == 1, "replacing a value ran %d delete callbacks", deletes);
    OK(MPI_Comm_delete_attr(c, kv));
    CHECK(deletes == 2, "delete_attr ran %d delete callbacks in all", deletes);
    OK(MPI_Comm_free(&c));
    OK(MPI_Comm_free(&d));
    CHECK(deletes == 3, "freeing the dup ran %d delete callbacks in all", deletes);
    OK(MPI_Comm_free_keyval(&kv));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    predefined(np);
    callback_errors();
    static int v1 = 1, v2 = 2, v3 = 3;
    int k1, k2, k3;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_self, &k1, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_self, &k2, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_self, &k3, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, k2, &v2));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, k1, &v1));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, k3, &v3));
    OK(MPI_Finalize());
    CHECK(norder == 3, "MPI_Finalize ran %d of the 3 delete callbacks on MPI_COMM_SELF", norder);
    CHECK(order[0] == 3 && order[1] == 1 && order[2] == 2,
          "delete callbacks ran in order %d %d %d, want the last set first: 3 1 2", order[0],
          order[1], order[2]);
    if (me == 0) printf("attr: callbacks' errors reach the caller; MPI_Finalize deletes first\n");
    return 0;
}
