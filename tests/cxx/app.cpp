// A C++ program of the kind the Intel MPI Benchmarks are: classes with virtual
// functions, templates that map C++ types to MPI datatypes, std::vector
// buffers, exceptions, all over courier's C binding through <mpi.h>. Built with
// courier-c++ (tests/cxx/CMakeLists.txt) and run through `courier run`; every
// benchmark checks the data it moved, and a failure ends the job non-zero.
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{

template <typename T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<int>()
{
    return MPI_INT;
}
template <> MPI_Datatype mpi_type<double>()
{
    return MPI_DOUBLE;
}
template <> MPI_Datatype mpi_type<long long>()
{
    return MPI_LONG_LONG;
}

void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) throw std::runtime_error(std::string(what) + " failed");
}

class Benchmark
{
  public:
    Benchmark(MPI_Comm comm, const char *name) : comm_(comm), name_(name)
    {
        check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
        check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    }
    virtual ~Benchmark() = default;
    // Runs the kernel 'reps' times and returns the time per repetition.
    double run(int reps)
    {
        check(MPI_Barrier(comm_), "MPI_Barrier");
        double t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) kernel(i);
        return (MPI_Wtime() - t0) / reps;
    }
    const std::string &name() const
    {
        return name_;
    }

  protected:
    virtual void kernel(int iter) = 0;
    MPI_Comm comm_;
    std::string name_;
    int rank_ = -1, size_ = 0;
};

template <typename T> class PingPong : public Benchmark
{
  public:
    PingPong(MPI_Comm comm, size_t n) : Benchmark(comm, "PingPong"), buf_(n) {}

  protected:
    void kernel(int iter) override
    {
        if (size_ < 2 || rank_ > 1) return;
        if (rank_ == 0) {
            std::iota(buf_.begin(), buf_.end(), static_cast<T>(iter));
            check(MPI_Send(buf_.data(), (int)buf_.size(), mpi_type<T>(), 1, iter, comm_), "send");
            check(MPI_Recv(buf_.data(), (int)buf_.size(), mpi_type<T>(), 1, iter, comm_,
                           MPI_STATUS_IGNORE),
                  "recv");
            for (size_t k = 0; k < buf_.size(); k++)
                if (buf_[k] != static_cast<T>(iter) + static_cast<T>(k) + 1)
                    throw std::runtime_error("PingPong: wrong data back");
        } else {
            MPI_Status st;
            check(MPI_Recv(buf_.data(), (int)buf_.size(), mpi_type<T>(), 0, iter, comm_, &st),
                  "recv");
            int n = 0;
            check(MPI_Get_count(&st, mpi_type<T>(), &n), "MPI_Get_count");
            if (n != (int)buf_.size()) throw std::runtime_error("PingPong: wrong count");
            for (auto &x : buf_) x += 1;
            check(MPI_Send(buf_.data(), (int)buf_.size(), mpi_type<T>(), 0, iter, comm_), "send");
        }
    }

  private:
    std::vector<T> buf_;
};

template <typename T> class Allreduce : public Benchmark
{
  public:
    Allreduce(MPI_Comm comm, size_t n) : Benchmark(comm, "Allreduce"), in_(n), out_(n) {}

  protected:
    void kernel(int iter) override
    {
        for (size_t k = 0; k < in_.size(); k++) in_[k] = static_cast<T>(rank_ + iter + (int)k);
        check(
            MPI_Allreduce(in_.data(), out_.data(), (int)in_.size(), mpi_type<T>(), MPI_SUM, comm_),
            "MPI_Allreduce");
        for (size_t k = 0; k < out_.size(); k++) {
            T want = static_cast<T>(size_ * (size_ - 1) / 2 + size_ * (iter + (int)k));
            if (out_[k] != want) throw std::runtime_error("Allreduce: wrong sum");
        }
    }

  private:
    std::vector<T> in_, out_;
};

class Alltoall : public Benchmark
{
  public:
    Alltoall(MPI_Comm comm, int blk) : Benchmark(comm, "Alltoall"), blk_(blk)
    {
        in_.resize((size_t)blk_ * size_);
        out_.resize(in_.size());
    }

  protected:
    void kernel(int iter) override
    {
        for (int d = 0; d < size_; d++)
            for (int k = 0; k < blk_; k++) in_[(size_t)d * blk_ + k] = rank_ * 1000 + d + iter;
        check(MPI_Alltoall(in_.data(), blk_, MPI_INT, out_.data(), blk_, MPI_INT, comm_),
              "MPI_Alltoall");
        for (int s = 0; s < size_; s++)
            for (int k = 0; k < blk_; k++)
                if (out_[(size_t)s * blk_ + k] != s * 1000 + rank_ + iter)
                    throw std::runtime_error("Alltoall: wrong block");
    }

  private:
    int blk_;
    std::vector<int> in_, out_;
};

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    std::vector<std::unique_ptr<Benchmark>> all;
    all.emplace_back(new PingPong<double>(comm, 1));
    all.emplace_back(new PingPong<long long>(comm, 100000)); // past the eager limit
    all.emplace_back(new Allreduce<int>(comm, 1000));
    all.emplace_back(new Allreduce<double>(comm, 3));
    all.emplace_back(new Alltoall(comm, 64));
    try {
        for (auto &b : all) {
            double t = b->run(5);
            if (rank == 0) std::printf("%-10s %10.2f us\n", b->name().c_str(), t * 1e6);
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "FAIL rank %d: %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    all.clear();
    MPI_Comm_free(&comm);
    if (rank == 0) std::printf("cxx app: all benchmarks checked\n");
    MPI_Finalize();
    return 0;
}
