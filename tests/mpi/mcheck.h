/* Assertions for the MPI conformance programs: a failed check prints the rank,
 * the place and the reason, and exits non-zero (which ends the whole job). */
#ifndef COURIER_TEST_MCHECK_H
#define COURIER_TEST_MCHECK_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static inline int mrank(void)
{
    int r = -1, f = 0, done = 0;
    MPI_Initialized(&f);
    MPI_Finalized(&done); /* after MPI_Finalize, asking would itself be an error */
    if (f && !done) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL rank %d %s:%d: %s: ", mrank(), __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)
#endif
