/* A program's own mpi.h (tests/mpi/user_include.c): a directory named with -I comes
 * before courier's own in courier-cc's command. */
#define USERS_OWN_MPI_H 1
