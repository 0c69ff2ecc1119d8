/* Compiled with courier-cc -I tests/mpi/user_include: the mpi.h found must be
 * that directory's, not courier's (tests/mpi/CMakeLists.txt). */
#include <mpi.h>

#ifndef USERS_OWN_MPI_H
#error "courier's mpi.h was found before the one in the directory named with -I"
#endif

int main(void)
{
    return 0;
}
