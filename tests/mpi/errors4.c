/* MPI-4.1 MPI_Remove_error_class/_code/_string and MPI-4.0
 * MPI_ERR_PROC_ABORTED: what was removed is unknown to MPI_Error_class and
 * MPI_Error_string afterwards, and the removals refuse what they must (a
 * class with codes, a predefined class, a code without a string, a class
 * or a code that still has a string, as mpi4py's test_errorcode asks), and
 * MPI_LASTUSEDCODE follows the highest code still in use, so that adding and
 * removing in a loop reuses the numbers. Rank 0 prints "errors4 ok". */
#include <string.h>

#include "mcheck.h"

static int cls_of(int code)
{
    int c = -1;
    return MPI_Error_class(code, &c) == MPI_SUCCESS ? c : -1;
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    OK(MPI_Error_string(MPI_ERR_PROC_ABORTED, s, &len));
    CHECK(strstr(s, "MPI_ERR_PROC_ABORTED"), "PROC_ABORTED string: %s", s);
    CHECK(cls_of(MPI_ERR_PROC_ABORTED) == MPI_ERR_PROC_ABORTED, "PROC_ABORTED class");

    int cls, code;
    OK(MPI_Add_error_class(&cls));
    OK(MPI_Add_error_code(cls, &code));
    OK(MPI_Add_error_string(code, "my code"));
    CHECK(MPI_Remove_error_class(cls) != MPI_SUCCESS, "removed a class that has a code");
    CHECK(MPI_Remove_error_class(MPI_ERR_ARG) != MPI_SUCCESS, "removed a predefined class");
    CHECK(MPI_Remove_error_code(cls) != MPI_SUCCESS, "removed a class as a code");
    CHECK(MPI_Remove_error_code(code) != MPI_SUCCESS, "removed a code that has a string");
    OK(MPI_Remove_error_string(code));
    OK(MPI_Error_string(code, s, &len));
    CHECK(len == 0, "string still there: %s", s);
    CHECK(MPI_Remove_error_string(code) != MPI_SUCCESS, "removed a string twice");
    OK(MPI_Remove_error_code(code));
    CHECK(cls_of(code) == -1, "removed code still has a class");
    CHECK(MPI_Error_string(code, s, &len) != MPI_SUCCESS, "removed code still has a string");
    OK(MPI_Add_error_string(cls, "my class"));
    CHECK(MPI_Remove_error_class(cls) != MPI_SUCCESS, "removed a class that has a string");
    OK(MPI_Remove_error_string(cls));
    OK(MPI_Remove_error_class(cls));
    CHECK(cls_of(cls) == -1, "removed class still known");
    CHECK(MPI_Remove_error_class(cls) != MPI_SUCCESS, "removed a class twice");
    int again;
    OK(MPI_Add_error_class(&again));
    CHECK(again == cls && cls_of(again) == again, "the last class's number again: %d", again);
    OK(MPI_Remove_error_class(again));

    /* MPI_LASTUSEDCODE follows the highest code in use; a number in the middle
     * is not given out again while a higher one is in use */
    int *lastp, flag;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag));
    CHECK(flag, "no MPI_LASTUSEDCODE");
    const int last0 = *lastp;
    int a, b, c;
    OK(MPI_Add_error_class(&a));
    OK(MPI_Add_error_code(a, &b));
    OK(MPI_Remove_error_code(b));
    OK(MPI_Add_error_code(a, &b));
    OK(MPI_Add_error_class(&c));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag));
    CHECK(*lastp == c && c == b + 1, "last %d, codes %d %d", *lastp, b, c);
    OK(MPI_Remove_error_code(b));
    OK(MPI_Remove_error_class(a));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag));
    CHECK(*lastp == c && cls_of(c) == c, "last %d after removing below %d", *lastp, c);
    int d;
    OK(MPI_Add_error_class(&d));
    CHECK(d == c + 1 && cls_of(a) == -1, "a class after a hole: %d (last %d)", d, c);
    OK(MPI_Remove_error_class(d));
    OK(MPI_Remove_error_class(c));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag));
    CHECK(*lastp == last0, "MPI_LASTUSEDCODE %d after removing all, was %d", *lastp, last0);

    /* adding and removing in a loop (the MPICH suite's errhan/adderr) keeps
     * the table small: each round gives out the same numbers */
    enum { NCLS = 32, NCODE = 5 };
    int ncls[NCLS], ncode[NCLS][NCODE], first = -1;
    for (int round = 0; round < 300; round++) {
        for (int i = 0; i < NCLS; i++) {
            OK(MPI_Add_error_class(&ncls[i]));
            for (int j = 0; j < NCODE; j++) {
                OK(MPI_Add_error_code(ncls[i], &ncode[i][j]));
                OK(MPI_Add_error_string(ncode[i][j], "a code of a round"));
            }
        }
        if (round == 0) first = ncls[0];
        CHECK(ncls[0] == first, "round %d's first class %d, the first round's %d", round, ncls[0],
              first);
        for (int i = 0; i < NCLS; i++) {
            for (int j = 0; j < NCODE; j++) {
                OK(MPI_Remove_error_string(ncode[i][j]));
                OK(MPI_Remove_error_code(ncode[i][j]));
            }
            OK(MPI_Remove_error_class(ncls[i]));
        }
    }
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag));
    CHECK(*lastp == last0, "MPI_LASTUSEDCODE %d after the rounds, was %d", *lastp, last0);
    if (!me) printf("errors4 ok\n");
    OK(MPI_Finalize());
    return 0;
}
