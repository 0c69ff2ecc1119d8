/* Attribute callbacks and predefined attributes (after MPICH's attr/attrend2,
 * attr/attrerrcomm and attr/baseattrcomm):
 *  - MPI_Finalize first runs the delete callbacks of MPI_COMM_SELF's attributes,
 *    the last set first (also of keyvals already freed), while MPI is still
 *    usable (MPI_Finalized says false, messages still move);
 *  - the error a copy callback returns fails MPI_Comm_dup through the
 *    communicator's error handler, with that code, and makes no communicator;
 *    one a delete callback returns fails MPI_Comm_delete_attr, MPI_Comm_set_attr
 *    replacing a value, and MPI_Comm_free, which then change nothing;
 *  - every predefined attribute of MPI_COMM_WORLD answers, MPI_LASTUSEDCODE
 *    included.
 * Regression: these callbacks' errors were dropped, MPI_Finalize ran no
 * callback, and MPI_LASTUSEDCODE ended the job. Any number of ranks. */
#include <string.h>

#include "mcheck.h"

#define NSELF 20

static int order[NSELF], norder, fail_copy, fail_del, deletes, handled, handled_code;

/* Each runs at MPI_Finalize; attrend2's check: the ones set later already ran. */
static int del_self(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c;
    (void)kv;
    (void)extra;
    int fin = 1, me = -1, back = -1;
    MPI_Finalized(&fin);
    CHECK(!fin, "a delete callback at MPI_Finalize ran after MPI was finalized");
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &me) == MPI_SUCCESS, "MPI unusable in the callback");
    int i = *(int *)val;
    CHECK(MPI_Sendrecv(&i, 1, MPI_INT, me, 9, &back, 1, MPI_INT, me, 9, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS &&
              back == i,
          "no message moves in a delete callback at MPI_Finalize");
    if (norder < NSELF) order[norder++] = i;
    return MPI_SUCCESS;
}

static int copy_maybe(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c;
    (void)kv;
    (void)extra;
    if (fail_copy) return MPI_ERR_NO_MEM;
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
    if (fail_del) return MPI_ERR_BASE;
    deletes++;
    return MPI_SUCCESS;
}

/* An error handler that notes the error and lets the call return it. */
static void note_error(MPI_Comm *c, int *code, ...)
{
    (void)c;
    handled++;
    handled_code = *code;
}

/* The call returned 'want' after the communicator's handler saw it once. */
#define FAILS_WITH(want, call)                                                                     \
    do {                                                                                           \
        int before_ = handled, rc_ = (call);                                                       \
        CHECK(rc_ == (want) && handled == before_ + 1 && handled_code == (want),                   \
              "%s returned %d, handler ran %d time(s) with %d; want %s once", #call, rc_,          \
              handled - before_, handled_code, #want);                                             \
    } while (0)

static void predefined(int np)
{
    int *v = NULL, flag = 0;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE: flag %d value %d", flag, *v);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_TAG_UB: flag %d value %d", flag, *v);
    int x = 1, y = 0; /* the largest tag is usable */
    OK(MPI_Sendrecv(&x, 1, MPI_INT, 0, *v, &y, 1, MPI_INT, 0, *v, MPI_COMM_SELF,
                    MPI_STATUS_IGNORE));
    CHECK(y == 1, "a message with tag MPI_TAG_UB gave %d", y);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < np)), "MPI_HOST %d", *v);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < np)),
          "MPI_IO %d", *v);
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
    MPI_Errhandler eh;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    OK(MPI_Comm_create_errhandler(note_error, &eh));
    OK(MPI_Comm_set_errhandler(c, eh));
    int kv, val = 7;
    OK(MPI_Comm_create_keyval(copy_maybe, del_maybe, &kv, NULL));
    OK(MPI_Comm_set_attr(c, kv, &val));

    fail_copy = 1; /* dup fails, and makes nothing */
    d = MPI_COMM_WORLD;
    FAILS_WITH(MPI_ERR_NO_MEM, MPI_Comm_dup(c, &d));
    CHECK(d == MPI_COMM_NULL, "a failed MPI_Comm_dup left a communicator");
    fail_copy = 0;
    OK(MPI_Comm_dup(c, &d)); /* and works again */
    int *got, flag = 0;
    OK(MPI_Comm_get_attr(d, kv, &got, &flag));
    CHECK(flag && *got == 7, "copied attribute: flag %d", flag);

    fail_del = 1;
    FAILS_WITH(MPI_ERR_BASE, MPI_Comm_delete_attr(c, kv));
    OK(MPI_Comm_get_attr(c, kv, &got, &flag));
    CHECK(flag, "the attribute went although its delete callback failed");
    int val2 = 8;
    FAILS_WITH(MPI_ERR_BASE, MPI_Comm_set_attr(c, kv, &val2));
    OK(MPI_Comm_get_attr(c, kv, &got, &flag));
    CHECK(flag && *got == 7, "the old value changed to %d", *got);
    MPI_Comm keep = c;
    FAILS_WITH(MPI_ERR_BASE, MPI_Comm_free(&c));
    CHECK(c == keep, "a failed MPI_Comm_free cleared the handle");
    int me = -1;
    OK(MPI_Comm_rank(c, &me)); /* still a communicator */
    fail_del = 0;
    deletes = 0;
    OK(MPI_Comm_set_attr(c, kv, &val2)); /* replacing deletes the old value */
    CHECK(deletes == 1, "replacing a value ran %d delete callbacks", deletes);
    OK(MPI_Comm_get_attr(c, kv, &got, &flag));
    CHECK(flag && *got == 8, "the new value is %d", *got);
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
    /* Set in a scrambled order; keyvals freed before MPI_Finalize (attributes
     * set stay until deleted). */
    static int vals[NSELF];
    int kv[NSELF];
    for (int i = 0; i < NSELF; i++) {
        vals[i] = (i * 7) % NSELF;
        OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_self, &kv[i], NULL));
        OK(MPI_Comm_set_attr(MPI_COMM_SELF, kv[i], &vals[i]));
    }
    for (int i = 0; i < NSELF; i++) OK(MPI_Comm_free_keyval(&kv[i]));
    OK(MPI_Finalize());
    /* CHECK would ask MPI for the rank: not after MPI_Finalize. */
    if (norder != NSELF) {
        fprintf(stderr,
                "FAIL rank %d: MPI_Finalize ran %d of the %d delete callbacks on "
                "MPI_COMM_SELF\n",
                me, norder, NSELF);
        return 1;
    }
    for (int i = 0; i < NSELF; i++)
        if (order[i] != vals[NSELF - 1 - i]) {
            fprintf(stderr,
                    "FAIL rank %d: delete callback %d had value %d, want %d: the last set "
                    "first\n",
                    me, i, order[i], vals[NSELF - 1 - i]);
            return 1;
        }
    if (me == 0) printf("attr: callbacks' errors reach the caller; MPI_Finalize deletes first\n");
    return 0;
}
