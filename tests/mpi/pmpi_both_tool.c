/* A profiling library of the kind Darshan is: it defines both the MPI_ and
 * the PMPI_ name of each call it watches (the MPI_ one an alias of the
 * PMPI_ one) and forwards to the next PMPI_ definition (dlsym RTLD_NEXT:
 * courier's). So it sees every call made by either name from outside
 * libcourier; courier's own calls inside the library (a _c form taking its
 * int form's path, the collectives MPI_File_open makes) must not reach it,
 * or a tool counts operations and bytes twice. Prints its counts at
 * MPI_Finalize; tests/mpi/pmpi_both.c is the program. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

static int n_send, n_send_c, n_recv, n_recv_c, n_allreduce, n_allreduce_c, n_bcast, n_barrier,
    n_comm_dup, n_wat, n_wat_c;

/* the next definition of PMPI_name, found once */
#define NEXT(name)                                                                                 \
    static __typeof__(&PMPI_##name) next;                                                          \
    if (!next) next = (__typeof__(&PMPI_##name))dlsym(RTLD_NEXT, "PMPI_" #name)

#define WATCH(name, counter, params, args)                                                         \
    int PMPI_##name params                                                                         \
    {                                                                                              \
        NEXT(name);                                                                                \
        counter++;                                                                                 \
        return next args;                                                                          \
    }                                                                                              \
    int MPI_##name params __attribute__((alias("PMPI_" #name)))

WATCH(Send, n_send, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c),
      (b, n, t, d, tag, c));
WATCH(Send_c, n_send_c, (const void *b, MPI_Count n, MPI_Datatype t, int d, int tag, MPI_Comm c),
      (b, n, t, d, tag, c));
WATCH(Recv, n_recv, (void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st),
      (b, n, t, s, tag, c, st));
WATCH(Recv_c, n_recv_c,
      (void *b, MPI_Count n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st),
      (b, n, t, s, tag, c, st));
WATCH(Allreduce, n_allreduce,
      (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c), (s, r, n, t, op, c));
WATCH(Allreduce_c, n_allreduce_c,
      (const void *s, void *r, MPI_Count n, MPI_Datatype t, MPI_Op op, MPI_Comm c),
      (s, r, n, t, op, c));
WATCH(Bcast, n_bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c));
WATCH(Barrier, n_barrier, (MPI_Comm c), (c));
WATCH(Comm_dup, n_comm_dup, (MPI_Comm c, MPI_Comm *out), (c, out));
WATCH(File_write_at, n_wat,
      (MPI_File f, MPI_Offset o, const void *b, int n, MPI_Datatype t, MPI_Status *st),
      (f, o, b, n, t, st));
WATCH(File_write_at_c, n_wat_c,
      (MPI_File f, MPI_Offset o, const void *b, MPI_Count n, MPI_Datatype t, MPI_Status *st),
      (f, o, b, n, t, st));

int PMPI_Finalize(void)
{
    NEXT(Finalize);
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("pmpi both rank %d: Send %d Send_c %d Recv %d Recv_c %d Allreduce %d Allreduce_c %d "
           "Bcast %d Barrier %d Comm_dup %d File_write_at %d File_write_at_c %d\n",
           rank, n_send, n_send_c, n_recv, n_recv_c, n_allreduce, n_allreduce_c, n_bcast, n_barrier,
           n_comm_dup, n_wat, n_wat_c);
    fflush(stdout);
    return next();
}
int MPI_Finalize(void) __attribute__((alias("PMPI_Finalize")));
