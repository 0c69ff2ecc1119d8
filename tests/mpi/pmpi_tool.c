/* A profiling library of the kind mpiP or a hand-written wrapper is: it defines
 * a few MPI_ calls, counts them, and forwards each to its PMPI_ name. Linked
 * before libcourier (shared or static), its definitions must replace courier's
 * weak MPI_ aliases; the counts it prints at MPI_Finalize show what the program
 * called, and only that (courier's own internal calls use the PMPI_ names).
 * tests/mpi/pmpi.c is the program; CMakeLists.txt checks the printed line. */
#include <mpi.h>
#include <stdio.h>

static int n_init, n_init_thread, n_send, n_recv, n_allreduce, n_bcast, n_comm_rank;

int MPI_Init(int *argc, char ***argv)
{
    n_init++;
    return PMPI_Init(argc, argv);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    n_init_thread++;
    return PMPI_Init_thread(argc, argv, required, provided);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    n_comm_rank++;
    return PMPI_Comm_rank(comm, rank);
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    n_send++;
    return PMPI_Send(buf, count, dt, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    n_recv++;
    return PMPI_Recv(buf, count, dt, src, tag, comm, st);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    n_allreduce++;
    return PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    n_bcast++;
    return PMPI_Bcast(buf, count, dt, root, comm);
}

int MPI_Finalize(void)
{
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("pmpi rank %d: Init %d Init_thread %d Comm_rank %d Send %d Recv %d Allreduce %d "
           "Bcast %d\n",
           rank, n_init, n_init_thread, n_comm_rank, n_send, n_recv, n_allreduce, n_bcast);
    fflush(stdout);
    return PMPI_Finalize();
}
