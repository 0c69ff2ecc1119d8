/* MPI_Alloc_mem's blocks as they come and go: courier keeps freed blocks
 * (shared memory) for later allocations that fit them (src/api/mpi_env.c).
 * Rounds of allocations of varied sizes, some kept alive across rounds, past
 * the 64 blocks that may be shared at once; each live block filled with its
 * own pattern and checked after the others were written (no two overlap);
 * every round a window over one block (MPI_Win_create), written by the left
 * neighbour with MPI_Put in a fence epoch and checked. Prints
 * "alloc mem: ok". */
#include <stdint.h>
#include <string.h>

#include "mcheck.h"

#define LIVE 80 /* blocks alive at most: more than may be shared at once */

static const size_t sizes[] = {8, 100, 4096, 5000, 65536, 100000, 1 << 20, 3 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static unsigned char pat(int slot, int round, size_t i)
{
    return (unsigned char)(slot * 31 + round * 7 + (int)(i % 251));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    unsigned char *blk[LIVE] = {0};
    size_t len[LIVE] = {0};
    int made[LIVE] = {0};
    int left = (me + np - 1) % np, right = (me + 1) % np;
    for (int round = 0; round < 40; round++) {
        /* free about half of the live blocks, then fill every empty slot */
        for (int s = 0; s < LIVE; s++)
            if (blk[s] && (s + round) % 2) {
                for (size_t i = 0; i < len[s]; i += 97)
                    CHECK(blk[s][i] == pat(s, made[s], i), "slot %d byte %zu changed", s, i);
                OK(MPI_Free_mem(blk[s]));
                blk[s] = NULL;
            }
        for (int s = 0; s < LIVE; s++)
            if (!blk[s]) {
                len[s] = sizes[(size_t)(s + round) % NSIZES];
                if (len[s] > 65536 && s % 8) len[s] = 4096 + (size_t)s; /* few large ones */
                OK(MPI_Alloc_mem((MPI_Aint)len[s], MPI_INFO_NULL, &blk[s]));
                made[s] = round;
                memset(blk[s], 0, len[s]);
                for (size_t i = 0; i < len[s]; i++) blk[s][i] = pat(s, round, i);
            }
        for (int s = 0; s < LIVE; s++) /* written after all: overlaps would show */
            for (size_t i = 0; i < len[s]; i += 61)
                CHECK(blk[s][i] == pat(s, made[s], i), "round %d: slot %d byte %zu is %d", round, s,
                      i, blk[s][i]);
        /* a window over a new block, most rounds one kept from a free */
        int64_t *mem;
        OK(MPI_Alloc_mem(64, MPI_INFO_NULL, &mem)); /* and one more, for the window */
        memset(mem, 0, 64);
        MPI_Win win;
        OK(MPI_Win_create(mem, 64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        OK(MPI_Win_fence(0, win));
        int64_t v[8];
        for (int i = 0; i < 8; i++) v[i] = (int64_t)me * 1000 + round * 10 + i;
        OK(MPI_Put(v, 8, MPI_INT64_T, right, 0, 8, MPI_INT64_T, win));
        OK(MPI_Win_fence(0, win));
        for (int i = 0; i < 8; i++)
            CHECK(mem[i] == (int64_t)left * 1000 + round * 10 + i,
                  "round %d: window word %d is %lld", round, i, (long long)mem[i]);
        OK(MPI_Win_free(&win));
        OK(MPI_Free_mem(mem));
    }
    for (int s = 0; s < LIVE; s++)
        if (blk[s]) OK(MPI_Free_mem(blk[s]));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("alloc mem: ok\n");
    MPI_Finalize();
    return 0;
}
