// One-sided communication and MPI-IO through the C++ binding: Win::Create,
// Put, Get and Accumulate in Fence epochs, Lock/Unlock, Get_group, window
// names; File::Open, Write_at, Read_at, Get_size, Set_view with Read_all,
// Close and Delete on a temporary file.
#include "mpicxx_check.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    const int rank = MPI::COMM_WORLD.Get_rank();
    const int size = MPI::COMM_WORLD.Get_size();
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    // RMA
    int mem[4] = {-1, -1, -1, 0};
    MPI::Win win = MPI::Win::Create(mem, sizeof mem, sizeof(int), MPI::INFO_NULL, MPI::COMM_WORLD);
    MPI::Group wg = win.Get_group();
    CHECK(wg.Get_size() == size);
    wg.Free();
    win.Set_name("ring window");
    char name[MPI::MAX_OBJECT_NAME];
    int len = 0;
    win.Get_name(name, len);
    CHECK(std::strcmp(name, "ring window") == 0);

    win.Fence(0);
    int v = 100 + rank;
    win.Put(&v, 1, MPI::INT, right, 0, 1, MPI::INT); // mem[0] of right = 100 + rank
    int one = 1;
    for (int t = 0; t < size; t++) win.Accumulate(&one, 1, MPI::INT, t, 3, 1, MPI::INT, MPI::SUM);
    win.Fence(0);
    CHECK(mem[0] == 100 + left && mem[3] == size);
    mem[1] = 200 + rank;
    win.Fence(0);
    int g = -1;
    win.Get(&g, 1, MPI::INT, left, 1, 1, MPI::INT);
    win.Fence(0);
    CHECK(g == 200 + left);

    // passive target: each rank adds to rank 0's mem[2] under an exclusive lock
    win.Fence(0);
    if (rank == 0) mem[2] = 0;
    win.Fence(0);
    win.Lock(MPI::LOCK_EXCLUSIVE, 0, 0);
    win.Accumulate(&one, 1, MPI::INT, 0, 2, 1, MPI::INT, MPI::SUM);
    win.Unlock(0);
    MPI::COMM_WORLD.Barrier();
    win.Lock(MPI::LOCK_SHARED, 0, 0);
    int c = -1;
    win.Get(&c, 1, MPI::INT, 0, 2, 1, MPI::INT);
    win.Unlock(0);
    CHECK(c == size);
    win.Free();
    CHECK(win == MPI::WIN_NULL);

    // MPI-IO on a temporary file named by rank 0
    char path[256];
    if (rank == 0) {
        const char *dir = std::getenv("TMPDIR");
        std::snprintf(path, sizeof path, "%s/mpicxx_io_%ld.dat", dir ? dir : "/tmp",
                      (long)getpid());
    }
    MPI::COMM_WORLD.Bcast(path, sizeof path, MPI::CHAR, 0);
    MPI::File f =
        MPI::File::Open(MPI::COMM_WORLD, path, MPI::MODE_CREATE | MPI::MODE_RDWR, MPI::INFO_NULL);
    CHECK(f != MPI::FILE_NULL);
    CHECK(f.Get_amode() == (MPI::MODE_CREATE | MPI::MODE_RDWR));
    int block[4];
    for (int i = 0; i < 4; i++) block[i] = rank * 4 + i;
    MPI::Status st;
    f.Write_at((MPI::Offset)rank * sizeof block, block, 4, MPI::INT, st);
    CHECK(st.Get_count(MPI::INT) == 4);
    f.Sync();
    MPI::COMM_WORLD.Barrier();
    f.Sync();
    CHECK(f.Get_size() == (MPI::Offset)(size * sizeof block));
    int rb[4] = {0, 0, 0, 0};
    f.Read_at((MPI::Offset)left * sizeof block, rb, 4, MPI::INT, st);
    CHECK(st.Get_count(MPI::INT) == 4 && rb[0] == left * 4 && rb[3] == left * 4 + 3);
    // a view: every rank reads the ints i with i % size == rank
    MPI::Datatype every = MPI::INT.Create_vector(4, 1, size);
    MPI::Datatype tile = every.Create_resized(0, 4 * size * sizeof(int));
    tile.Commit();
    f.Set_view(rank * sizeof(int), MPI::INT, tile, "native", MPI::INFO_NULL);
    int mine[4] = {-1, -1, -1, -1};
    f.Read_all(mine, 4, MPI::INT, st);
    for (int i = 0; i < 4; i++) CHECK(mine[i] == i * size + rank);
    f.Close();
    CHECK(f == MPI::FILE_NULL);
    tile.Free();
    every.Free();
    MPI::COMM_WORLD.Barrier();
    if (rank == 0) MPI::File::Delete(path, MPI::INFO_NULL);

    MPI::COMM_WORLD.Barrier();
    if (rank == 0) std::printf("mpicxx rma and io: all checks passed on %d ranks\n", size);
    MPI::Finalize();
    return 0;
}
