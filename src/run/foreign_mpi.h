/* The names that give away another MPI library in a program: the launcher
 * looks for them in the program's symbol tables (progfile.c), the probe
 * preloaded into a script's programs in what they loaded (probe.c). Open
 * MPI's: ompi_mpi_init (its MPI_Init calls it), ompi_mpi_comm_world (its
 * MPI_COMM_WORLD is that object's address); MPICH's and those built on it
 * (Intel MPI, MVAPICH): MPIR_Init_thread and MPIR_Process (in the library's
 * own symbol table), MPII_Version_string (exported by libmpich.so). */
#ifndef COURIER_FOREIGN_MPI_H
#define COURIER_FOREIGN_MPI_H

#define CR_FOREIGN_MPI_SYMBOLS                                                                     \
    "ompi_mpi_init", "ompi_mpi_comm_world", "MPIR_Init_thread", "MPIR_Process",                    \
        "MPII_Version_string"

#endif
