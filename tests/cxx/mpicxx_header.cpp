// Compiled only (test mpicxx_header): the C++ binding as a program sees it,
// or, with EXPECT_NO_BINDING and a skip macro, its absence.
#include <stdio.h> // first: its SEEK_* macros must not hide MPI::SEEK_*

#include <mpi.h>
#include <mpi.h> // twice: include guards

#ifdef EXPECT_NO_BINDING
#ifdef COURIER_MPICXX_H
#error "the C++ binding was included despite a skip macro"
#endif
int main()
{
    return MPI_COMM_WORLD == MPI_COMM_NULL;
}
#else
#include <complex>
#include <iterator>
#include <set>
#include <vector>

// The program's own names meet none of the binding's: std::set and std::end
// under using namespace std, with <stdio.h> first (the binding once put
// 'set', 'cur' and 'end' in the global namespace: Quicksilver, PnetCDF).
static int std_names()
{
    using namespace std;
    vector<int> v{1, 2, 3};
    set<int> s(v.begin(), end(v));
    return (int)s.size();
}

// Every class, used as a program would.
static int use(MPI::Intracomm &comm)
{
    MPI::Status status;
    MPI::Request req = MPI::REQUEST_NULL;
    MPI::Prequest preq;
    MPI::Grequest greq;
    MPI::Group group = MPI::GROUP_EMPTY;
    MPI::Op op = MPI::SUM;
    MPI::Errhandler eh = MPI::ERRORS_THROW_EXCEPTIONS;
    MPI::Info info = MPI::INFO_NULL;
    MPI::Win win = MPI::WIN_NULL;
    MPI::File file = MPI::FILE_NULL;
    MPI::Intercomm inter = MPI::COMM_NULL;
    MPI::Cartcomm cart;
    cart = MPI::COMM_NULL;
    MPI::Graphcomm graph;
    MPI::Datatype types[] = {MPI::INT,     MPI::DOUBLE,         MPI::BOOL,
                             MPI::COMPLEX, MPI::DOUBLE_COMPLEX, MPI::LONG_DOUBLE_COMPLEX,
                             MPI::TWOINT,  MPI::PACKED};
    MPI::Aint a = 0;
    MPI::Offset o = MPI::DISPLACEMENT_CURRENT;
    const MPI::Comm &base = comm;
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
        comm.Send(MPI::BOTTOM, 0, types[0], MPI::PROC_NULL, MPI::ANY_TAG);
    } catch (MPI::Exception &e) {
        return e.Get_error_class();
    }
#else
    comm.Send(MPI::BOTTOM, 0, types[0], MPI::PROC_NULL, MPI::ANY_TAG);
#endif
    int seeks = MPI::SEEK_SET + MPI::SEEK_CUR + MPI::SEEK_END; // MPI's
    int stdio = SEEK_SET + SEEK_CUR + SEEK_END;                // stdio's
    return (base == MPI::COMM_NULL) + (req == MPI::REQUEST_NULL) + (preq == req) + (greq == req) +
           group.Get_size() + (op == MPI::MAX) + (eh == MPI::ERRORS_RETURN) +
           (info == MPI::INFO_NULL) + (win == MPI::WIN_NULL) + (file == MPI::FILE_NULL) +
           (inter == MPI::COMM_NULL) + (cart == MPI::COMM_NULL) + (graph == MPI::COMM_NULL) +
           status.Get_source() + (int)a + (int)o + seeks + stdio + (MPI::IN_PLACE != MPI::BOTTOM) +
           MPI::ERR_RANK + MPI::THREAD_MULTIPLE + MPI::IDENT + MPI::CART + MPI::MODE_RDWR;
}

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    int r = use(MPI::COMM_WORLD) + std_names();
    MPI::Finalize();
    return r == 12345;
}
#endif
