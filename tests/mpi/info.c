/* Info objects and communicator hints (MPI-3.1 chapter 9, §6.4.4):
 *  - every info call, values checked: set/replace/get (truncation to
 *    valuelen), get_valuelen, get_nkeys, get_nthkey in the order keys were
 *    first set (a replaced key keeps its place, a deleted one closes the gap),
 *    delete, dup (independent of the original both ways), free;
 *  - the limits: a key of MPI_MAX_INFO_KEY characters and a value of
 *    MPI_MAX_INFO_VAL are taken, one more is MPI_ERR_INFO_KEY /
 *    MPI_ERR_INFO_VALUE, and the object is unchanged;
 *  - errors under MPI_ERRORS_RETURN: MPI_ERR_INFO_NOKEY, a freed or null
 *    handle, bad n in get_nthkey, negative valuelen;
 *  - MPI_INFO_ENV: "command" and "maxprocs" (= the job's size) answer; set,
 *    delete and free are refused; a dup of it is the program's to change;
 *  - info calls before MPI_Init and after MPI_Finalize (MPI-4 allows it);
 *  - MPI_Comm_set_info / get_info / dup_with_info, hints copied by
 *    MPI_Comm_dup, with several ranks collective over the communicator.
 * Any number of ranks (tested with 1 and 2). */
#include <string.h>

#include "mcheck.h"

static void expect_err(int rc, int code, const char *what)
{
    CHECK(rc == code, "%s returned %d, expected %d", what, rc, code);
}

static void expect_value(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = -1, len = -1;
    OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    if (!want) {
        CHECK(flag == 0, "key %s should be absent", key);
        OK(MPI_Info_get_valuelen(info, key, &len, &flag));
        CHECK(flag == 0, "get_valuelen finds absent key %s", key);
        return;
    }
    CHECK(flag == 1, "key %s not found", key);
    CHECK(!strcmp(v, want), "key %s: got \"%s\", want \"%s\"", key, v, want);
    OK(MPI_Info_get_valuelen(info, key, &len, &flag));
    CHECK(flag == 1 && len == (int)strlen(want), "valuelen of %s is %d, want %d", key, len,
          (int)strlen(want));
}

static void expect_keys(MPI_Info info, int n, const char *const *keys)
{
    int nk = -1;
    OK(MPI_Info_get_nkeys(info, &nk));
    CHECK(nk == n, "nkeys %d, want %d", nk, n);
    for (int i = 0; i < n; i++) {
        char k[MPI_MAX_INFO_KEY + 1];
        OK(MPI_Info_get_nthkey(info, i, k));
        CHECK(!strcmp(k, keys[i]), "key %d is \"%s\", want \"%s\"", i, k, keys[i]);
    }
}

int main(int argc, char **argv)
{
    /* before MPI_Init */
    MPI_Info early;
    OK(MPI_Info_create(&early));
    OK(MPI_Info_set(early, "before", "init"));

    OK(MPI_Init(&argc, &argv));
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    expect_value(early, "before", "init");

    /* set, replace, get, order */
    MPI_Info info;
    OK(MPI_Info_create(&info));
    CHECK(info != MPI_INFO_NULL, "MPI_Info_create gave MPI_INFO_NULL");
    expect_keys(info, 0, NULL);
    OK(MPI_Info_set(info, "zeta", "1"));
    OK(MPI_Info_set(info, "alpha", "two"));
    OK(MPI_Info_set(info, "mid", "three"));
    OK(MPI_Info_set(info, "alpha", "replaced value")); /* keeps its place */
    static const char *const k3[] = {"zeta", "alpha", "mid"};
    expect_keys(info, 3, k3);
    expect_value(info, "alpha", "replaced value");
    expect_value(info, "zeta", "1");
    expect_value(info, "nope", NULL);
    expect_value(info, "Alpha", NULL); /* case-sensitive */

    /* truncation: at most valuelen characters, then a null */
    char small[8];
    int flag = 0;
    memset(small, 'x', sizeof small);
    OK(MPI_Info_get(info, "alpha", 4, small, &flag));
    CHECK(flag && !strcmp(small, "repl") && small[5] == 'x', "truncated get gave \"%s\"", small);
    OK(MPI_Info_get(info, "alpha", 0, small, &flag));
    CHECK(flag && small[0] == 0, "get with valuelen 0 gave \"%s\"", small);

    /* MPI_Info_get_string (MPI-4): the full size comes back */
    int buflen = 5;
    OK(MPI_Info_get_string(info, "alpha", &buflen, small, &flag));
    CHECK(flag && buflen == (int)strlen("replaced value") + 1 && !strcmp(small, "repl"),
          "get_string: flag %d buflen %d \"%s\"", flag, buflen, small);

    /* delete closes the gap */
    OK(MPI_Info_delete(info, "zeta"));
    static const char *const k2[] = {"alpha", "mid"};
    expect_keys(info, 2, k2);
    expect_err(MPI_Info_delete(info, "zeta"), MPI_ERR_INFO_NOKEY, "delete of a missing key");
    expect_keys(info, 2, k2);

    /* dup: same contents, independent */
    MPI_Info dup;
    OK(MPI_Info_dup(info, &dup));
    CHECK(dup != info, "dup returned the same handle");
    expect_keys(dup, 2, k2);
    OK(MPI_Info_set(dup, "only_in_dup", "d"));
    OK(MPI_Info_set(info, "mid", "changed"));
    OK(MPI_Info_delete(info, "alpha"));
    expect_value(info, "only_in_dup", NULL);
    expect_value(dup, "mid", "three");
    expect_value(dup, "alpha", "replaced value");
    static const char *const kd[] = {"alpha", "mid", "only_in_dup"};
    expect_keys(dup, 3, kd);

    /* limits */
    char key[MPI_MAX_INFO_KEY + 2], val[MPI_MAX_INFO_VAL + 2];
    memset(key, 'k', sizeof key);
    key[MPI_MAX_INFO_KEY] = 0;
    memset(val, 'v', sizeof val);
    val[MPI_MAX_INFO_VAL] = 0;
    OK(MPI_Info_set(dup, key, val));
    int len = 0;
    OK(MPI_Info_get_valuelen(dup, key, &len, &flag));
    CHECK(flag && len == MPI_MAX_INFO_VAL, "longest value: len %d", len);
    char nth[MPI_MAX_INFO_KEY + 1];
    OK(MPI_Info_get_nthkey(dup, 3, nth));
    CHECK(!strcmp(nth, key), "longest key not given back by get_nthkey");
    key[MPI_MAX_INFO_KEY] = 'k';
    key[MPI_MAX_INFO_KEY + 1] = 0;
    expect_err(MPI_Info_set(dup, key, "x"), MPI_ERR_INFO_KEY, "set of a too long key");
    expect_err(MPI_Info_set(dup, "", "x"), MPI_ERR_INFO_KEY, "set of an empty key");
    expect_err(MPI_Info_get(dup, key, 10, small, &flag), MPI_ERR_INFO_KEY, "get, long key");
    val[MPI_MAX_INFO_VAL] = 'v';
    val[MPI_MAX_INFO_VAL + 1] = 0;
    expect_err(MPI_Info_set(dup, "fine", val), MPI_ERR_INFO_VALUE, "set of a too long value");
    expect_err(MPI_Info_set(dup, "fine", ""), MPI_ERR_INFO_VALUE, "set of an empty value");
    int nk = 0;
    OK(MPI_Info_get_nkeys(dup, &nk));
    CHECK(nk == 4, "failed sets changed the object: %d keys", nk);

    /* other errors */
    expect_err(MPI_Info_get_nthkey(dup, 4, nth), MPI_ERR_ARG, "get_nthkey past the end");
    expect_err(MPI_Info_get_nthkey(dup, -1, nth), MPI_ERR_ARG, "get_nthkey(-1)");
    expect_err(MPI_Info_get(dup, "mid", -1, small, &flag), MPI_ERR_ARG, "negative valuelen");
    expect_err(MPI_Info_set(MPI_INFO_NULL, "a", "b"), MPI_ERR_INFO, "set on MPI_INFO_NULL");
    expect_err(MPI_Info_get_nkeys(MPI_COMM_WORLD, &nk), MPI_ERR_INFO, "a communicator as info");
    MPI_Info gone = dup;
    OK(MPI_Info_free(&dup));
    CHECK(dup == MPI_INFO_NULL, "free did not set MPI_INFO_NULL");
    expect_err(MPI_Info_get_nkeys(gone, &nk), MPI_ERR_INFO, "use of a freed info");
    expect_err(MPI_Info_free(&gone), MPI_ERR_INFO, "double free");
    expect_value(info, "mid", "changed"); /* the original lives on */

    /* the new error codes are classes of their own, with a text */
    int codes[3] = {MPI_ERR_INFO_KEY, MPI_ERR_INFO_VALUE, MPI_ERR_INFO_NOKEY};
    for (int i = 0; i < 3; i++) {
        int cls = -1, slen = 0;
        char text[MPI_MAX_ERROR_STRING];
        OK(MPI_Error_class(codes[i], &cls));
        OK(MPI_Error_string(codes[i], text, &slen));
        CHECK(cls == codes[i] && slen > 0 && strstr(text, "info"),
              "error code %d: class %d, \"%s\"", codes[i], cls, text);
    }

    /* MPI_INFO_ENV */
    char v[MPI_MAX_INFO_VAL + 1];
    OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strstr(v, "info"), "MPI_INFO_ENV command: flag %d \"%s\"", flag, v);
    OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && atoi(v) == np, "MPI_INFO_ENV maxprocs: flag %d \"%s\", size %d", flag, v, np);
    OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &nk));
    CHECK(nk >= 2, "MPI_INFO_ENV has %d keys", nk);
    expect_err(MPI_Info_set(MPI_INFO_ENV, "a", "b"), MPI_ERR_INFO, "set on MPI_INFO_ENV");
    expect_err(MPI_Info_delete(MPI_INFO_ENV, "command"), MPI_ERR_INFO, "delete on MPI_INFO_ENV");
    MPI_Info env = MPI_INFO_ENV;
    expect_err(MPI_Info_free(&env), MPI_ERR_INFO, "free of MPI_INFO_ENV");
    OK(MPI_Info_dup(MPI_INFO_ENV, &env));
    OK(MPI_Info_delete(env, "command"));
    OK(MPI_Info_set(env, "mine", "yes"));
    OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag, "changing a dup of MPI_INFO_ENV changed MPI_INFO_ENV");
    OK(MPI_Info_free(&env));
    MPI_Info cenv;
    OK(MPI_Info_create_env(argc, argv, &cenv));
    OK(MPI_Info_get(cenv, "maxprocs", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && atoi(v) == np, "MPI_Info_create_env maxprocs \"%s\"", v);
    OK(MPI_Info_free(&cenv));

    /* communicator hints */
    MPI_Comm c, d, e;
    MPI_Info hints, got;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    OK(MPI_Comm_get_info(c, &got));
    OK(MPI_Info_get_nkeys(got, &nk));
    CHECK(nk == 0, "a new communicator has %d hints", nk);
    OK(MPI_Info_free(&got));
    OK(MPI_Info_create(&hints));
    OK(MPI_Info_set(hints, "mpi_assert_no_any_tag", "true"));
    OK(MPI_Comm_set_info(c, hints));
    OK(MPI_Info_set(hints, "mpi_assert_no_any_tag", "false")); /* the comm keeps its copy */
    OK(MPI_Comm_get_info(c, &got));
    expect_value(got, "mpi_assert_no_any_tag", "true");
    OK(MPI_Info_set(got, "x", "y")); /* the program's own object */
    OK(MPI_Info_free(&got));
    OK(MPI_Comm_dup(c, &d)); /* copies the hints */
    OK(MPI_Comm_get_info(d, &got));
    expect_value(got, "mpi_assert_no_any_tag", "true");
    expect_value(got, "x", NULL);
    OK(MPI_Info_free(&got));
    OK(MPI_Info_set(hints, "other", "1"));
    OK(MPI_Comm_dup_with_info(c, hints, &e)); /* its hints replace c's */
    OK(MPI_Comm_get_info(e, &got));
    expect_value(got, "mpi_assert_no_any_tag", "false");
    expect_value(got, "other", "1");
    OK(MPI_Info_free(&got));
    MPI_Comm f;
    OK(MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &f));
    OK(MPI_Comm_get_info(f, &got));
    OK(MPI_Info_get_nkeys(got, &nk));
    CHECK(nk == 0, "dup_with_info(MPI_INFO_NULL) left %d hints", nk);
    OK(MPI_Info_free(&got));
    expect_err(MPI_Comm_set_info(c, MPI_INFO_NULL), MPI_ERR_INFO, "set_info(MPI_INFO_NULL)");
    int sum = 0, one = 1;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, e)); /* the new ones work */
    CHECK(sum == np, "allreduce on dup_with_info's communicator gave %d", sum);
    OK(MPI_Comm_free(&c));
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free(&e));
    OK(MPI_Comm_free(&f));
    OK(MPI_Info_free(&hints));

    /* many objects: handles reused after free, none confused */
    MPI_Info many[200];
    for (int i = 0; i < 200; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        OK(MPI_Info_create(&many[i]));
        OK(MPI_Info_set(many[i], k, k));
    }
    for (int i = 0; i < 200; i += 2) OK(MPI_Info_free(&many[i]));
    for (int i = 1; i < 200; i += 2) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        expect_value(many[i], k, k);
        OK(MPI_Info_free(&many[i]));
    }

    OK(MPI_Finalize());
    /* after MPI_Finalize */
    expect_value(info, "mid", "changed");
    OK(MPI_Info_free(&info));
    OK(MPI_Info_free(&early));
    if (me == 0) printf("info: ok\n");
    return 0;
}
