// Shared by the mpicxx_*.cpp tests of the C++ binding: CHECK(cond) reports the
// failed condition with its rank and line and ends the job.
#ifndef MPICXX_CHECK_H
#define MPICXX_CHECK_H
#include <mpi.h>

#include <cstdio>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", MPI::COMM_WORLD.Get_rank(), \
                         __FILE__, __LINE__, #cond);                                               \
            std::fflush(stderr);                                                                   \
            MPI::COMM_WORLD.Abort(1);                                                              \
        }                                                                                          \
    } while (0)

#endif
