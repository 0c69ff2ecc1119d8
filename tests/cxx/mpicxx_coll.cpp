// Collectives through the C++ binding: Bcast, Reduce (predefined and a user
// Op::Init operation), Allreduce with IN_PLACE, Gather(v), Scatter(v),
// Allgather, Alltoall, Scan, Exscan, Reduce_scatter_block, Barrier, and
// MPI::BOOL and MPI::DOUBLE_COMPLEX reductions.
#include "mpicxx_check.h"

#include <complex>
#include <vector>

// A non-commutative user operation on int pairs (a, b): (a1, b1) o (a2, b2)
// = (a1 + a2, b2) keeps the b of the highest rank: shows the order courier
// applies it in.
static void pair_op(const void *in, void *inout, int len, const MPI::Datatype &type)
{
    CHECK(type == MPI::TWOINT);
    const int *a = static_cast<const int *>(in);
    int *b = static_cast<int *>(inout);
    for (int i = 0; i < len; i++) b[2 * i] += a[2 * i];
}

static void max_abs(const void *in, void *inout, int len, const MPI::Datatype &)
{
    const double *a = static_cast<const double *>(in);
    double *b = static_cast<double *>(inout);
    for (int i = 0; i < len; i++) {
        double x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
        b[i] = x > y ? a[i] : b[i];
    }
}

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    const int rank = MPI::COMM_WORLD.Get_rank();
    const int size = MPI::COMM_WORLD.Get_size();
    const MPI::Intracomm &w = MPI::COMM_WORLD;

    // Bcast
    int b[2] = {0, 0};
    if (rank == size - 1) {
        b[0] = 17;
        b[1] = 18;
    }
    w.Bcast(b, 2, MPI::INT, size - 1);
    CHECK(b[0] == 17 && b[1] == 18);

    // Reduce with SUM and MAX
    int v = rank + 1, s = 0, m = 0;
    w.Reduce(&v, &s, 1, MPI::INT, MPI::SUM, 0);
    w.Reduce(&v, &m, 1, MPI::INT, MPI::MAX, 0);
    if (rank == 0) CHECK(s == size * (size + 1) / 2 && m == size);

    // Reduce with user operations
    MPI::Op pair;
    pair.Init(pair_op, false);
    CHECK(!pair.Is_commutative());
    int p[2] = {rank, rank}, r[2] = {-1, -1};
    w.Reduce(p, r, 1, MPI::TWOINT, pair, 0);
    if (rank == 0) CHECK(r[0] == size * (size - 1) / 2 && r[1] == size - 1);
    pair.Free();
    CHECK(pair == MPI::OP_NULL);

    MPI::Op mabs;
    mabs.Init(max_abs, true);
    CHECK(mabs.Is_commutative());
    double d = (rank % 2 ? -1.0 : 1.0) * (rank + 0.5), dm = 0;
    w.Allreduce(&d, &dm, 1, MPI::DOUBLE, mabs);
    CHECK(dm == ((size - 1) % 2 ? -1.0 : 1.0) * (size - 0.5));
    double loc[2] = {1.0, -4.0}, inout[2] = {-3.0, 2.0};
    mabs.Reduce_local(loc, inout, 2, MPI::DOUBLE);
    CHECK(inout[0] == -3.0 && inout[1] == -4.0);
    mabs.Free();

    // Allreduce in place
    long a[3] = {rank, 1, 2L * rank};
    w.Allreduce(MPI::IN_PLACE, a, 3, MPI::LONG, MPI::SUM);
    CHECK(a[0] == size * (size - 1) / 2 && a[1] == size && a[2] == size * (size - 1));

    // bool and complex
    bool t = rank != 1, all = false;
    w.Allreduce(&t, &all, 1, MPI::BOOL, MPI::LAND);
    CHECK(all == (size == 1));
    std::complex<double> z(rank, 1.0), zs;
    w.Allreduce(&z, &zs, 1, MPI::DOUBLE_COMPLEX, MPI::SUM);
    CHECK(zs.real() == size * (size - 1) / 2 && zs.imag() == size);

    // Gather, Gatherv
    std::vector<int> g(size, -1);
    w.Gather(&rank, 1, MPI::INT, g.data(), 1, MPI::INT, 0);
    if (rank == 0)
        for (int i = 0; i < size; i++) CHECK(g[i] == i);
    std::vector<int> counts(size), displs(size);
    int total = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = i + 1;
        displs[i] = total;
        total += i + 1;
    }
    std::vector<int> mine(rank + 1, rank), gv(total, -1);
    w.Gatherv(mine.data(), rank + 1, MPI::INT, gv.data(), counts.data(), displs.data(), MPI::INT,
              0);
    if (rank == 0)
        for (int i = 0; i < size; i++)
            for (int k = 0; k < i + 1; k++) CHECK(gv[displs[i] + k] == i);

    // Scatter, Scatterv
    std::vector<int> sc(size);
    for (int i = 0; i < size; i++) sc[i] = 1000 + i;
    int got = -1;
    w.Scatter(sc.data(), 1, MPI::INT, &got, 1, MPI::INT, 0);
    CHECK(got == 1000 + rank);
    std::vector<int> sv(total);
    for (int i = 0; i < size; i++)
        for (int k = 0; k < i + 1; k++) sv[displs[i] + k] = 10 * i + k;
    std::vector<int> back(rank + 1, -1);
    w.Scatterv(sv.data(), counts.data(), displs.data(), MPI::INT, back.data(), rank + 1, MPI::INT,
               0);
    for (int k = 0; k < rank + 1; k++) CHECK(back[k] == 10 * rank + k);

    // Allgather, Alltoall
    std::vector<int> ag(size, -1);
    w.Allgather(&rank, 1, MPI::INT, ag.data(), 1, MPI::INT);
    for (int i = 0; i < size; i++) CHECK(ag[i] == i);
    std::vector<int> so(size), ro(size, -1);
    for (int i = 0; i < size; i++) so[i] = rank * 100 + i;
    w.Alltoall(so.data(), 1, MPI::INT, ro.data(), 1, MPI::INT);
    for (int i = 0; i < size; i++) CHECK(ro[i] == i * 100 + rank);

    // Scan, Exscan, Reduce_scatter_block
    int sc1 = 0, ex = -7;
    w.Scan(&v, &sc1, 1, MPI::INT, MPI::SUM);
    CHECK(sc1 == (rank + 1) * (rank + 2) / 2);
    w.Exscan(&v, &ex, 1, MPI::INT, MPI::SUM);
    if (rank > 0) CHECK(ex == rank * (rank + 1) / 2);
    std::vector<int> rs(size, 1);
    int rsb = 0;
    w.Reduce_scatter_block(rs.data(), &rsb, 1, MPI::INT, MPI::SUM);
    CHECK(rsb == size);

    w.Barrier();
    if (rank == 0) std::printf("mpicxx coll: all checks passed on %d ranks\n", size);
    MPI::Finalize();
    return 0;
}
