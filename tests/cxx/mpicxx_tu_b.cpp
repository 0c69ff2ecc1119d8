// The second translation unit of the mpicxx two-unit test.
#include <mpi.h>

int sum_ranks(const MPI::Intracomm &comm)
{
    int r = comm.Get_rank(), s = 0;
    comm.Allreduce(&r, &s, 1, MPI::INT, MPI::SUM);
    return s;
}

void set_throw(MPI::Intracomm &comm)
{
    comm.Set_errhandler(MPI::ERRORS_THROW_EXCEPTIONS);
}

static void add_op(const void *in, void *inout, int len, const MPI::Datatype &)
{
    for (int i = 0; i < len; i++) static_cast<int *>(inout)[i] += static_cast<const int *>(in)[i];
}

int apply_user_op(const MPI::Intracomm &comm)
{
    MPI::Op op;
    op.Init(add_op, true);
    int one = 1, n = 0;
    comm.Allreduce(&one, &n, 1, MPI::INT, op);
    op.Free();
    return n;
}
