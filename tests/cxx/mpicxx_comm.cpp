// Communicators, groups, attributes and info objects through the C++
// binding: Dup, Clone, Split, Create, Create_cart (Get_coords, Shift, Sub),
// Compare, Free, COMM_NULL, Get_group and Group calls, keyvals with C++ copy
// and delete functions, Info.
#include "mpicxx_check.h"

#include <cstring>

static int copies, deletes;

static int copy_fn(const MPI::Comm &, int, void *extra, void *in, void *out, bool &flag)
{
    CHECK(extra == &copies);
    copies++;
    *static_cast<void **>(out) = in;
    flag = true;
    return MPI::SUCCESS;
}

static int delete_fn(MPI::Comm &comm, int, void *, void *)
{
    CHECK(!comm.Is_inter());
    deletes++;
    return MPI::SUCCESS;
}

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    const int rank = MPI::COMM_WORLD.Get_rank();
    const int size = MPI::COMM_WORLD.Get_size();
    CHECK(size >= 4 && size % 2 == 0);

    // Dup and Compare, attributes copied by Dup
    int key = MPI::Comm::Create_keyval(copy_fn, delete_fn, &copies);
    static int value = 99;
    MPI::COMM_WORLD.Set_attr(key, &value);
    MPI::Intracomm dup = MPI::COMM_WORLD.Dup();
    CHECK(MPI::Comm::Compare(dup, MPI::COMM_WORLD) == MPI::CONGRUENT);
    CHECK(MPI::Comm::Compare(MPI::COMM_WORLD, MPI::COMM_WORLD) == MPI::IDENT);
    CHECK(copies == 1);
    int *got = 0;
    CHECK(dup.Get_attr(key, &got) && got == &value);
    void *tag_ub = 0;
    CHECK(MPI::COMM_WORLD.Get_attr(MPI::TAG_UB, &tag_ub) && *static_cast<int *>(tag_ub) >= 32767);

    // Clone: a new object of the same class, a new communicator
    MPI::Comm &clone = MPI::COMM_WORLD.Clone();
    CHECK(dynamic_cast<MPI::Intracomm *>(&clone) != 0);
    CHECK(MPI::Comm::Compare(clone, MPI::COMM_WORLD) == MPI::CONGRUENT && copies == 2);
    clone.Free();
    CHECK(clone == MPI::COMM_NULL && deletes == 1);
    delete &clone;

    // Split: even and odd ranks
    MPI::Intracomm half = MPI::COMM_WORLD.Split(rank % 2, rank);
    CHECK(half.Get_size() == size / 2 && half.Get_rank() == rank / 2);
    int hs = 0;
    half.Allreduce(&rank, &hs, 1, MPI::INT, MPI::SUM);
    CHECK(hs == (rank % 2 ? size * size / 4 : size * (size - 2) / 4));
    CHECK(MPI::Comm::Compare(half, MPI::COMM_WORLD) == MPI::UNEQUAL);

    // Groups: world, incl, excl, translate, union, compare; Create from a group
    MPI::Group wg = MPI::COMM_WORLD.Get_group();
    CHECK(wg.Get_size() == size && wg.Get_rank() == rank);
    const int firsts[2] = {0, 1};
    MPI::Group g01 = wg.Incl(2, firsts);
    MPI::Group rest = wg.Excl(2, firsts);
    CHECK(g01.Get_size() == 2 && rest.Get_size() == size - 2);
    CHECK(rest.Get_rank() == (rank < 2 ? MPI::UNDEFINED : rank - 2));
    MPI::Group all = MPI::Group::Union(g01, rest);
    CHECK(MPI::Group::Compare(all, wg) == MPI::IDENT);
    MPI::Group none = MPI::Group::Intersect(g01, rest);
    CHECK(none.Get_size() == 0 && MPI::Group::Compare(none, MPI::GROUP_EMPTY) == MPI::IDENT);
    const int r1 = 1;
    int tr = -5;
    MPI::Group::Translate_ranks(g01, 1, &r1, wg, &tr);
    CHECK(tr == 1);
    const int range[1][3] = {{0, size - 1, 2}};
    MPI::Group evens = wg.Range_incl(1, range);
    CHECK(evens.Get_size() == size / 2);
    MPI::Intracomm ec = MPI::COMM_WORLD.Create(evens);
    if (rank % 2 == 0) {
        CHECK(ec != MPI::COMM_NULL && ec.Get_size() == size / 2);
        CHECK(MPI::Comm::Compare(ec, half) == MPI::CONGRUENT);
        ec.Free();
    } else {
        CHECK(ec == MPI::COMM_NULL);
    }
    evens.Free();
    none.Free();
    all.Free();
    rest.Free();
    g01.Free();
    wg.Free();
    CHECK(wg == MPI::GROUP_NULL);

    // Cartesian: a 2 x size/2 torus
    int dims[2] = {0, 0};
    MPI::Compute_dims(size, 2, dims);
    CHECK(dims[0] * dims[1] == size);
    dims[0] = 2;
    dims[1] = size / 2;
    const bool periods[2] = {true, false};
    MPI::Cartcomm cart = MPI::COMM_WORLD.Create_cart(2, dims, periods, false);
    CHECK(cart.Get_topology() == MPI::CART && cart.Get_dim() == 2);
    int coords[2];
    cart.Get_coords(cart.Get_rank(), 2, coords);
    CHECK(cart.Get_cart_rank(coords) == cart.Get_rank());
    CHECK(coords[0] == rank / (size / 2) && coords[1] == rank % (size / 2));
    int src = -9, dst = -9;
    cart.Shift(0, 1, src, dst);
    CHECK(src == dst && src == (rank + size / 2) % size);
    cart.Shift(1, 1, src, dst);
    CHECK(src == (coords[1] == 0 ? MPI::PROC_NULL : rank - 1));
    CHECK(dst == (coords[1] == size / 2 - 1 ? MPI::PROC_NULL : rank + 1));
    int gd[2];
    bool gp[2];
    int gc[2];
    cart.Get_topo(2, gd, gp, gc);
    CHECK(gd[1] == size / 2 && gp[0] && !gp[1] && gc[1] == coords[1]);
    const bool keep[2] = {false, true};
    MPI::Cartcomm row = cart.Sub(keep);
    CHECK(row.Get_size() == size / 2 && row.Get_dim() == 1);
    MPI::Cartcomm cd = cart.Dup();
    CHECK(cd.Get_topology() == MPI::CART);
    cd.Free();
    row.Free();
    cart.Free();
    CHECK(MPI::COMM_WORLD.Get_topology() == MPI::UNDEFINED);

    // Graph: a ring
    {
        int index[64], edges[128];
        CHECK(size <= 64);
        for (int i = 0; i < size; i++) {
            index[i] = 2 * (i + 1);
            edges[2 * i] = (i + 1) % size;
            edges[2 * i + 1] = (i + size - 1) % size;
        }
        MPI::Graphcomm gr = MPI::COMM_WORLD.Create_graph(size, index, edges, false);
        CHECK(gr.Get_topology() == MPI::GRAPH && gr.Get_neighbors_count(rank) == 2);
        int nb[2];
        gr.Get_neighbors(rank, 2, nb);
        CHECK(nb[0] == (rank + 1) % size);
        gr.Free();
    }

    // names, Info
    dup.Set_name("dup of world");
    char name[MPI::MAX_OBJECT_NAME];
    int len;
    dup.Get_name(name, len);
    CHECK(std::strcmp(name, "dup of world") == 0 && len == 12);
    MPI::Info info = MPI::Info::Create();
    info.Set("color", "blue");
    info.Set("shape", "round");
    CHECK(info.Get_nkeys() == 2);
    char val[MPI::MAX_INFO_VAL + 1];
    CHECK(info.Get("shape", MPI::MAX_INFO_VAL, val) && std::strcmp(val, "round") == 0);
    int vlen = 0;
    CHECK(info.Get_valuelen("color", vlen) && vlen == 4);
    CHECK(!info.Get("size", MPI::MAX_INFO_VAL, val));
    char k[MPI::MAX_INFO_KEY + 1];
    info.Get_nthkey(1, k);
    CHECK(std::strcmp(k, "shape") == 0);
    MPI::Info i2 = info.Dup();
    info.Delete("color");
    CHECK(info.Get_nkeys() == 1 && i2.Get_nkeys() == 2);
    i2.Free();
    info.Free();
    CHECK(info == MPI::INFO_NULL);

    // Free: the delete function runs for dup's copy; then the world's
    half.Free();
    dup.Free();
    CHECK(dup == MPI::COMM_NULL && deletes == 2);
    MPI::COMM_WORLD.Delete_attr(key);
    CHECK(deletes == 3);
    MPI::Comm::Free_keyval(key);
    CHECK(key == MPI::KEYVAL_INVALID);

    MPI::COMM_WORLD.Barrier();
    if (rank == 0) std::printf("mpicxx comm: all checks passed on %d ranks\n", size);
    MPI::Finalize();
    return 0;
}
