/* MPI-4.0 sessions without MPI_Init: the process sets and their sizes, a
 * group from each, communicators from the groups (a collective on each), an
 * intercommunicator from two halves, the session's error handler, and
 * MPI_Session_finalize; an error handler made before any session (allowed,
 * MPI-4.1 11.2.1) and called through a second session, which asks for
 * MPI_THREAD_MULTIPLE in its info and is told it got it. Any number of ranks >= 2 on one host; rank
 * 0 prints "sessions ok". */
#include <stdlib.h>
#include <string.h>

#include "mcheck.h"

static int pset_size(MPI_Session s, const char *name)
{
    MPI_Info info;
    char v[16];
    int flag = 0;
    OK(MPI_Session_get_pset_info(s, name, &info));
    OK(MPI_Info_get(info, "mpi_size", sizeof v - 1, v, &flag));
    OK(MPI_Info_free(&info));
    CHECK(flag, "no mpi_size for %s", name);
    return atoi(v);
}

static int eh_calls;
static MPI_Session eh_session;
static void session_eh(MPI_Session *s, int *err, ...)
{
    CHECK(*s == eh_session && *err == MPI_ERR_OTHER, "error handler: session %#x, error %d",
          (unsigned)*s, *err);
    eh_calls++;
}

/* The thread level session s says it provides. */
static void expect_level(MPI_Session s, const char *want)
{
    MPI_Info info;
    char v[64];
    int flag = 0;
    OK(MPI_Session_get_info(s, &info));
    OK(MPI_Info_get(info, "thread_level", sizeof v - 1, v, &flag));
    OK(MPI_Info_free(&info));
    CHECK(flag && !strcmp(v, want), "thread_level %s, expected %s", flag ? v : "(none)", want);
}

int main(void)
{
    MPI_Session s;
    MPI_Errhandler myeh;
    OK(MPI_Session_create_errhandler(session_eh, &myeh));
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    expect_level(s, "MPI_THREAD_SINGLE");
    int n = 0;
    OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 3, "%d process sets", n);
    int found = 0;
    for (int i = 0; i < n; i++) {
        char name[64];
        int len = 0;
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= (int)sizeof name, "pset %d length %d", i, len);
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK((int)strlen(name) + 1 == len, "pset %d: %s / %d", i, name, len);
        if (!strcmp(name, "mpi://WORLD")) found |= 1;
        if (!strcmp(name, "mpi://SELF")) found |= 2;
        if (!strcmp(name, "courier://host")) found |= 4;
    }
    CHECK(found == 7, "process sets found: %d", found);

    MPI_Group gw, gs;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &gw));
    OK(MPI_Group_from_session_pset(s, "mpi://SELF", &gs));
    int np = 0, me = -1, one = 0;
    OK(MPI_Group_size(gw, &np));
    OK(MPI_Group_rank(gw, &me));
    OK(MPI_Group_size(gs, &one));
    CHECK(np >= 2 && me >= 0 && one == 1, "groups: world %d (me %d), self %d", np, me, one);
    CHECK(pset_size(s, "mpi://WORLD") == np && pset_size(s, "mpi://SELF") == 1 &&
              pset_size(s, "courier://host") == np,
          "pset sizes");
    /* names in any case, as MPICH and Open MPI take them */
    MPI_Group glow;
    int nlow = 0;
    OK(MPI_Group_from_session_pset(s, "mpi://world", &glow));
    OK(MPI_Group_size(glow, &nlow));
    CHECK(nlow == np && pset_size(s, "MPI://self") == 1, "lower-case world %d of %d", nlow, np);
    OK(MPI_Group_free(&glow));

    MPI_Comm cw, cs;
    OK(MPI_Comm_create_from_group(gw, "org.courier.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                  &cw));
    OK(MPI_Comm_create_from_group(gs, "org.courier.test.self", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                  &cs));
    int sum = 0, r = -1;
    OK(MPI_Comm_rank(cw, &r));
    CHECK(r == me, "rank %d in the communicator, %d in the group", r, me);
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, cw));
    CHECK(sum == np * (np - 1) / 2, "allreduce %d", sum);
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, cs));
    CHECK(sum == me, "self allreduce %d", sum);

    /* two halves, evens and odds, joined by an intercommunicator */
    int half[64], nh = 0;
    for (int i = me % 2; i < np && nh < 64; i += 2) half[nh++] = i;
    int other[64], no = 0;
    for (int i = 1 - me % 2; i < np && no < 64; i += 2) other[no++] = i;
    MPI_Group gl, gr;
    OK(MPI_Group_incl(gw, nh, half, &gl));
    OK(MPI_Group_incl(gw, no, other, &gr));
    MPI_Comm ic;
    OK(MPI_Intercomm_create_from_groups(gl, 0, gr, 0, "org.courier.test.halves", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &ic));
    int rsize = 0, inter = 0;
    OK(MPI_Comm_test_inter(ic, &inter));
    OK(MPI_Comm_remote_size(ic, &rsize));
    CHECK(inter && rsize == no, "intercommunicator: inter %d remote size %d", inter, rsize);
    int lr = -1, got = -1;
    OK(MPI_Comm_rank(ic, &lr));
    if (lr == 0) { /* the leaders swap their world ranks */
        OK(MPI_Sendrecv(&me, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE));
        CHECK(got == 1 - me % 2, "leader %d got %d", me, got);
    }

    /* the session's error handler: MPI_ERRORS_RETURN */
    MPI_Group bad;
    int rc = MPI_Group_from_session_pset(s, "mpi://NOWHERE", &bad), cls = 0;
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG, "unknown process set: class %d", cls);
    MPI_Errhandler eh;
    OK(MPI_Session_get_errhandler(s, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "errhandler %#x", (unsigned)eh);
    CHECK(MPI_Session_f2c(MPI_Session_c2f(s)) == s, "c2f/f2c");

    MPI_Info want;
    OK(MPI_Info_create(&want));
    OK(MPI_Info_set(want, "thread_level", "MPI_THREAD_MULTIPLE"));
    OK(MPI_Session_init(want, myeh, &eh_session));
    OK(MPI_Info_free(&want));
    expect_level(eh_session, "MPI_THREAD_MULTIPLE");
    OK(MPI_Session_call_errhandler(eh_session, MPI_ERR_OTHER));
    CHECK(eh_calls == 1, "the session's error handler ran %d times", eh_calls);
    OK(MPI_Errhandler_free(&myeh));
    OK(MPI_Session_finalize(&eh_session));

    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&cw));
    OK(MPI_Comm_free(&cs));
    OK(MPI_Group_free(&gw));
    OK(MPI_Group_free(&gs));
    OK(MPI_Group_free(&gl));
    OK(MPI_Group_free(&gr));
    OK(MPI_Session_finalize(&s));
    CHECK(s == MPI_SESSION_NULL, "session handle after finalize");
    if (me == 0) printf("sessions ok\n");
    return 0;
}
