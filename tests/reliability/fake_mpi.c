/* A stand-in for another MPI library (Open MPI's libmpi.so.40), for the tests
 * that courier run refuses a program linked with one: as a shared library
 * (rel_foreign_mpi: found by the library's name) and linked into the program
 * itself (rel_foreign_mpi_static: found by Open MPI's own symbol,
 * ompi_mpi_init, which its MPI_Init calls; rel_foreign_mpi_stripped, the same
 * without its symbol table: by the name of its settings). Every process is a job of one
 * rank, as a real one would run without its own launcher. */
#include <stdlib.h>

int MPI_Init(int *argc, char ***argv);
int MPI_Comm_size_world(void);
int ompi_mpi_init(int argc, char **argv);

int ompi_mpi_init(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

/* Open MPI reads its settings from OMPI_MCA_* variables: the prefix stays
 * among the data of a stripped program (rel_foreign_mpi_stripped). */
int MPI_Init(int *argc, char ***argv)
{
    if (getenv("OMPI_MCA_mpi_yield_when_idle")) return 1;
    return ompi_mpi_init(argc ? *argc : 0, argv ? *argv : 0);
}

int MPI_Comm_size_world(void)
{
    return 1;
}
