/* The large-count (_c) forms of MPI-4.0 (mpi_large.c, mpi_large_coll.c): what
 * the two files share. A count that fits an int goes to the int form as it
 * is; a larger one goes as one instance of a datatype of count instances
 * (mpi_big_arg), so every byte travels the int form's own size_t paths; counts
 * and displacements of the v forms go as int arrays when they fit. */
#ifndef COURIER_MPI_LARGE_H
#define COURIER_MPI_LARGE_H

#include "mpi_impl.h"

/* (count, datatype) of a _c call as its int form takes them: n, t. */
typedef struct mpi_big {
    int n;
    MPI_Datatype t;
    bool made; /* t is a type made here: mpi_big_done frees it */
} mpi_big;

/* count as it is when it fits an int, else (1, a type of count instances of
 * dt); a negative count or a bad datatype of a large count is reported on
 * comm by call. 0 or the MPI code. */
int mpi_big_arg(const char *call, MPI_Comm comm, MPI_Count count, MPI_Datatype dt, mpi_big *b);
void mpi_big_done(mpi_big *b);
/* A reduction of count elements by op: a large count with a user operation
 * (whose function would see the made type) is MPI_ERR_COUNT. */
int mpi_big_op(const char *call, MPI_Comm comm, MPI_Count count, MPI_Op op);
/* n values (MPI_Count, or MPI_Aint when aint) as a new int array in *out
 * (NULL stays NULL; free() it): MPI_ERR_COUNT reported when one does not fit. */
int mpi_large_ints(const char *call, MPI_Comm comm, int n, const void *v, bool aint, int **out);

#endif
