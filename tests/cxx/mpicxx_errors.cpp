// Error handling through the C++ binding: ERRORS_RETURN makes the C calls
// return codes; ERRORS_THROW_EXCEPTIONS throws MPI::Exception with the error's
// class (a send to rank 999 on COMM_WORLD: ERR_RANK), for requests, on a
// communicator that inherited it by Dup, from Call_errhandler, for windows
// and files; Get_errhandler gives it back; a user error handler created by
// Comm::Create_errhandler runs, and what it throws reaches the caller.
#include "mpicxx_check.h"

#include <cstring>
#include <stdexcept>

static int handled;
static void counting_handler(MPI::Comm &comm, int *code, ...)
{
    CHECK(comm == MPI::COMM_WORLD);
    CHECK(MPI::Get_error_class(*code) == MPI::ERR_TAG);
    handled++;
}
static void throwing_handler(MPI::Comm &, int *code, ...)
{
    throw std::runtime_error(*code == MPI::ERR_OTHER ? "other" : "unexpected");
}

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    const int rank = MPI::COMM_WORLD.Get_rank();
    const int size = MPI::COMM_WORLD.Get_size();
    int x = 0;

    CHECK(MPI::COMM_WORLD.Get_errhandler() == MPI::ERRORS_ARE_FATAL);

    // ERRORS_RETURN: the C calls give the code; the C++ calls return
    MPI::COMM_WORLD.Set_errhandler(MPI::ERRORS_RETURN);
    CHECK(MPI::COMM_WORLD.Get_errhandler() == MPI::ERRORS_RETURN);
    int rc = MPI_Send(&x, 1, MPI_INT, 999, 0, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS && MPI::Get_error_class(rc) == MPI::ERR_RANK);
    MPI::COMM_WORLD.Send(&x, 1, MPI::INT, 999, 0); // returns
    char msg[MPI::MAX_ERROR_STRING];
    int len = 0;
    MPI::Get_error_string(rc, msg, len);
    CHECK(len > 0 && (int)std::strlen(msg) == len);

    // ERRORS_THROW_EXCEPTIONS
    MPI::COMM_WORLD.Set_errhandler(MPI::ERRORS_THROW_EXCEPTIONS);
    CHECK(MPI::COMM_WORLD.Get_errhandler() == MPI::ERRORS_THROW_EXCEPTIONS);
    bool caught = false;
    try {
        MPI::COMM_WORLD.Send(&x, 1, MPI::INT, 999, 0);
    } catch (MPI::Exception &e) {
        caught = true;
        CHECK(e.Get_error_class() == MPI::ERR_RANK);
        CHECK(MPI::Get_error_class(e.Get_error_code()) == MPI::ERR_RANK);
        CHECK(std::strlen(e.Get_error_string()) > 0);
    }
    CHECK(caught);
    // the C call on the same communicator still returns the code
    rc = MPI_Send(&x, 1, MPI_INT, 999, 0, MPI_COMM_WORLD);
    CHECK(MPI::Get_error_class(rc) == MPI::ERR_RANK);

    caught = false;
    try {
        MPI::COMM_WORLD.Irecv(&x, -1, MPI::INT, 0, 0);
    } catch (MPI::Exception &e) {
        caught = e.Get_error_class() == MPI::ERR_COUNT;
    }
    CHECK(caught);

    // inherited by Dup
    MPI::Intracomm dup = MPI::COMM_WORLD.Dup();
    CHECK(dup.Get_errhandler() == MPI::ERRORS_THROW_EXCEPTIONS);
    caught = false;
    try {
        dup.Bcast(&x, 1, MPI::INT, size + 5);
    } catch (MPI::Exception &e) {
        caught = e.Get_error_class() == MPI::ERR_ROOT;
    }
    CHECK(caught);
    // raised by the program
    caught = false;
    try {
        dup.Call_errhandler(MPI::ERR_OTHER);
    } catch (MPI::Exception &e) {
        caught = e.Get_error_code() == MPI::ERR_OTHER;
    }
    CHECK(caught);
    // calls on no object raise on COMM_WORLD
    caught = false;
    try {
        (void)MPI::INT.Create_contiguous(-3);
    } catch (MPI::Exception &e) {
        caught = e.Get_error_class() == MPI::ERR_COUNT;
    }
    CHECK(caught);
    // a communicator with ERRORS_RETURN does not throw
    dup.Set_errhandler(MPI::ERRORS_RETURN);
    dup.Send(&x, 1, MPI::INT, 999, 0);

    // user error handlers: one that counts, one that throws its own exception
    MPI::Errhandler counting = MPI::Comm::Create_errhandler(counting_handler);
    MPI::COMM_WORLD.Set_errhandler(counting);
    CHECK(MPI::COMM_WORLD.Get_errhandler() == counting);
    MPI::COMM_WORLD.Send(&x, 1, MPI::INT, rank, -5);
    CHECK(handled == 1);
    MPI::Errhandler thrower = MPI::Comm::Create_errhandler(throwing_handler);
    dup.Set_errhandler(thrower);
    caught = false;
    try {
        dup.Call_errhandler(MPI::ERR_OTHER);
    } catch (std::runtime_error &e) {
        caught = std::strcmp(e.what(), "other") == 0;
    }
    CHECK(caught);
    counting.Free();
    thrower.Free();

    // windows and files
    int mem = 0;
    MPI::Win win = MPI::Win::Create(&mem, sizeof mem, 1, MPI::INFO_NULL, MPI::COMM_WORLD);
    win.Set_errhandler(MPI::ERRORS_THROW_EXCEPTIONS);
    CHECK(win.Get_errhandler() == MPI::ERRORS_THROW_EXCEPTIONS);
    caught = false;
    win.Fence(0);
    try {
        win.Put(&mem, 1, MPI::INT, size + 7, 0, 1, MPI::INT);
    } catch (MPI::Exception &e) {
        caught = e.Get_error_class() == MPI::ERR_RANK;
    }
    win.Fence(0);
    CHECK(caught);
    win.Free();

    MPI::FILE_NULL.Get_errhandler(); // ERRORS_RETURN: opening errors return
    MPI::File none =
        MPI::File::Open(MPI::COMM_SELF, "/nonexistent/dir/f", MPI::MODE_RDONLY, MPI::INFO_NULL);
    CHECK(none == MPI::FILE_NULL);
    MPI::File nf;
    nf.Set_errhandler(MPI::ERRORS_THROW_EXCEPTIONS); // MPI_FILE_NULL's handler
    caught = false;
    try {
        MPI::File::Open(MPI::COMM_SELF, "/nonexistent/dir/f", MPI::MODE_RDONLY, MPI::INFO_NULL);
    } catch (MPI::Exception &e) {
        caught = e.Get_error_class() == MPI::ERR_NO_SUCH_FILE;
    }
    CHECK(caught);
    nf.Set_errhandler(MPI::ERRORS_RETURN);

    dup.Free();
    MPI::COMM_WORLD.Set_errhandler(MPI::ERRORS_ARE_FATAL);
    MPI::COMM_WORLD.Barrier();
    if (rank == 0) std::printf("mpicxx errors: all checks passed on %d ranks\n", size);
    MPI::Finalize();
    return 0;
}
