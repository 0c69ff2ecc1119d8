/* The combiners MPI-3.0 removed, named without OMPI_ENABLE_MPI1_COMPAT: this
 * must not compile (mpi4.cmake's mpi_legacy_hidden_combiners; MPI-4.1 §18.1).
 * legacy.c checks them with the switch. */
#include <mpi.h>

int removed =
    MPI_COMBINER_HVECTOR_INTEGER + MPI_COMBINER_HINDEXED_INTEGER + MPI_COMBINER_STRUCT_INTEGER;
