/* MPI-4.1 MPI_Remove_error_class/_code/_string and MPI-4.0
 * MPI_ERR_PROC_ABORTED: what was removed is unknown to MPI_Error_class and
 * MPI_Error_string afterwards, and the removals refuse what they must (a
 * class with codes, a predefined class, a code without a string, a class
 * or a code that still has a string, as mpi4py's test_errorcode asks). Rank 0
 * prints "errors4 ok". */
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
    CHECK(again != cls && cls_of(again) == again, "a new class after removal: %d", again);
    if (!me) printf("errors4 ok\n");
    OK(MPI_Finalize());
    return 0;
}
