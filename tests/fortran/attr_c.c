/* The C half of mpi_fortran_callbacks: reads and sets communicator
 * attributes from C, for the Fortran program to check MPI-3.1 17.2.7's rules
 * across the languages (C reads a pointer to a value Fortran set; Fortran
 * reads the address C set). Called from Fortran: every argument by reference. */
#include "mpi.h"

/* *ok: 1 when C reads, for kv on comm, a pointer to the value want. */
void cgetattr_(const MPI_Fint *comm, const MPI_Fint *kv, const MPI_Aint *want, MPI_Fint *ok);
void cgetattr_(const MPI_Fint *comm, const MPI_Fint *kv, const MPI_Aint *want, MPI_Fint *ok)
{
    MPI_Aint *p = NULL;
    int flag = 0;
    *ok = MPI_Comm_get_attr(MPI_Comm_f2c(*comm), *kv, &p, &flag) == MPI_SUCCESS && flag && p &&
          *p == *want;
}

/* Sets kv on comm to the address of *x; gives that address back in *addr. */
void csetattr_(const MPI_Fint *comm, const MPI_Fint *kv, MPI_Fint *x, MPI_Aint *addr);
void csetattr_(const MPI_Fint *comm, const MPI_Fint *kv, MPI_Fint *x, MPI_Aint *addr)
{
    *addr = (MPI_Aint)x;
    MPI_Comm_set_attr(MPI_Comm_f2c(*comm), *kv, x);
}
