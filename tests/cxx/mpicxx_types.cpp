// Derived datatypes through the C++ binding: Create_contiguous,
// Create_vector, Create_indexed, Create_struct, Create_resized, Dup, Commit,
// Free, Get_size, Get_extent, Get_envelope, names, Pack/Unpack.
#include "mpicxx_check.h"

#include <cstring>

struct particle {
    double x[3];
    int id;
    char tag;
};

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    const int rank = MPI::COMM_WORLD.Get_rank();
    const int size = MPI::COMM_WORLD.Get_size();
    CHECK(size >= 2);

    // contiguous
    MPI::Datatype c3 = MPI::INT.Create_contiguous(3);
    c3.Commit();
    CHECK(c3.Get_size() == 3 * (int)sizeof(int));
    MPI::Aint lb = -1, ext = -1;
    c3.Get_extent(lb, ext);
    CHECK(lb == 0 && ext == 3 * (MPI::Aint)sizeof(int));

    // vector: a column of a 4x5 matrix
    MPI::Datatype col = MPI::DOUBLE.Create_vector(4, 1, 5);
    col.Commit();
    CHECK(col.Get_size() == 4 * (int)sizeof(double));
    col.Get_extent(lb, ext);
    CHECK(ext == (3 * 5 + 1) * (MPI::Aint)sizeof(double));
    int ni, na, nd, comb;
    col.Get_envelope(ni, na, nd, comb);
    CHECK(comb == MPI::COMBINER_VECTOR && ni == 3 && nd == 1);
    double m[4][5];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++) m[i][j] = rank == 0 ? 10 * i + j : -1;
    if (rank == 0) {
        MPI::COMM_WORLD.Send(&m[0][2], 1, col, 1, 1);
        MPI::COMM_WORLD.Send(m, 1, c3, 1, 2); // three ints' worth of bytes... as ints
    } else if (rank == 1) {
        double colv[4];
        MPI::Status st;
        MPI::COMM_WORLD.Recv(colv, 4, MPI::DOUBLE, 0, 1, st);
        CHECK(st.Get_count(MPI::DOUBLE) == 4);
        for (int i = 0; i < 4; i++) CHECK(colv[i] == 10 * i + 2);
        int three[3];
        MPI::COMM_WORLD.Recv(three, 1, c3, 0, 2, st);
        CHECK(st.Get_count(c3) == 1 && st.Get_elements(MPI::INT) == 3);
    }

    // indexed
    const int bl[2] = {2, 1}, dp[2] = {0, 4};
    MPI::Datatype idx = MPI::INT.Create_indexed(2, bl, dp);
    idx.Commit();
    CHECK(idx.Get_size() == 3 * (int)sizeof(int));
    int src[5] = {1, 2, 3, 4, 5}, dst[5] = {0, 0, 0, 0, 0};
    MPI::COMM_WORLD.Sendrecv(src, 1, idx, rank, 3, dst, 1, idx, rank, 3);
    CHECK(dst[0] == 1 && dst[1] == 2 && dst[2] == 0 && dst[3] == 0 && dst[4] == 5);

    // struct, resized to the C++ struct's size
    particle pt;
    const int blens[3] = {3, 1, 1};
    MPI::Aint base = MPI::Get_address(&pt);
    const MPI::Aint disps[3] = {MPI::Get_address(&pt.x[0]) - base, MPI::Get_address(&pt.id) - base,
                                MPI::Get_address(&pt.tag) - base};
    const MPI::Datatype types[3] = {MPI::DOUBLE, MPI::INT, MPI::CHAR};
    MPI::Datatype st0 = MPI::Datatype::Create_struct(3, blens, disps, types);
    MPI::Datatype pty = st0.Create_resized(0, sizeof(particle));
    pty.Commit();
    st0.Free();
    CHECK(st0 == MPI::DATATYPE_NULL);
    pty.Get_extent(lb, ext);
    CHECK(ext == (MPI::Aint)sizeof(particle));
    pty.Set_name("particle");
    char name[MPI::MAX_OBJECT_NAME];
    int len = 0;
    pty.Get_name(name, len);
    CHECK(len == 8 && std::strcmp(name, "particle") == 0);
    particle ps[2];
    for (int i = 0; i < 2; i++) {
        ps[i].x[0] = rank + i;
        ps[i].x[1] = ps[i].x[2] = 0.5;
        ps[i].id = 10 * rank + i;
        ps[i].tag = (char)('a' + i);
    }
    particle pr[2];
    std::memset(pr, 0, sizeof pr);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI::COMM_WORLD.Sendrecv(ps, 2, pty, right, 4, pr, 2, pty, left, 4);
    CHECK(pr[1].x[0] == left + 1 && pr[1].id == 10 * left + 1 && pr[1].tag == 'b' &&
          pr[0].x[2] == 0.5);

    // Dup, Pack/Unpack
    MPI::Datatype pd = pty.Dup();
    char buf[256];
    int pos = 0;
    CHECK(pd.Pack_size(2, MPI::COMM_WORLD) <= (int)sizeof buf);
    pd.Pack(ps, 2, buf, sizeof buf, pos, MPI::COMM_WORLD);
    particle up[2];
    int upos = 0;
    pd.Unpack(buf, pos, up, 2, upos, MPI::COMM_WORLD);
    CHECK(upos == pos && up[1].id == ps[1].id && up[0].tag == 'a');

    pd.Free();
    pty.Free();
    idx.Free();
    col.Free();
    c3.Free();
    MPI::COMM_WORLD.Barrier();
    if (rank == 0) std::printf("mpicxx types: all checks passed on %d ranks\n", size);
    MPI::Finalize();
    return 0;
}
