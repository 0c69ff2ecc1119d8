// Two translation units, both including mpi.h with its C++ binding, linked
// into one program (the binding is header-only: its tables and objects must
// not be defined twice). This one has main; mpicxx_tu_b.cpp the rest.
#include "mpicxx_check.h"

int sum_ranks(const MPI::Intracomm &comm);     // mpicxx_tu_b.cpp
void set_throw(MPI::Intracomm &comm);          // mpicxx_tu_b.cpp
int apply_user_op(const MPI::Intracomm &comm); // mpicxx_tu_b.cpp

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    const int rank = MPI::COMM_WORLD.Get_rank();
    const int size = MPI::COMM_WORLD.Get_size();
    CHECK(sum_ranks(MPI::COMM_WORLD) == size * (size - 1) / 2);
    CHECK(apply_user_op(MPI::COMM_WORLD) == size);
    // The handler set in the other file is the one this file sees.
    set_throw(MPI::COMM_WORLD);
    CHECK(MPI::COMM_WORLD.Get_errhandler() == MPI::ERRORS_THROW_EXCEPTIONS);
    bool caught = false;
    try {
        MPI::COMM_WORLD.Send(&rank, 1, MPI::INT, 999, 0);
    } catch (MPI::Exception &e) {
        caught = e.Get_error_class() == MPI::ERR_RANK;
    }
    CHECK(caught);
    if (rank == 0) std::printf("mpicxx two units: linked and ran on %d ranks\n", size);
    MPI::Finalize();
    return 0;
}
