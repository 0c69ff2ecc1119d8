/* The simulated mode's shared buffers (--sim MACHINE,shared=BYTES,
 * src/api/simshared.c): a rank's allocations of BYTES or more share their
 * pages, smaller ones and libcourier's own do not.
 *
 *   shared BYTES   each rank mallocs two buffers of BYTES, writes into one and
 *                  reads the other (aliased when shared), checks that a small
 *                  allocation is its own, that realloc and calloc of shared
 *                  buffers work and that free gives them back; then the ranks
 *                  pass a 256 KiB message round a ring from static arrays
 *                  (libcourier's buffers for it must hold what it is sent).
 *                  Each rank also allocates three buffers of BYTES and checks
 *                  that no two of its live buffers share an address, frees one
 *                  and allocates again (still none), and tells rank 0 the
 *                  first one's address; once every rank has freed them, no
 *                  mapping of the shared pages is left (/proc/self/maps).
 *                  Rank 0 prints "shared: aliased in A of N ranks, one address
 *                  in S, ring ok, M left": with ranks as contexts every rank's
 *                  first buffer is the same mapping (S = N). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING (256 * 1024)
static char out[RING], in[RING];

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1 << 20;

    char *a = malloc(n), *b = malloc(n), *small = malloc(64);
    int bad = !a || !b || !small;
    volatile char *va = a, *vb = b; /* malloc's results do not alias, for the compiler */
    if (!bad) {
        memset(b, 0, n);
        memset(small, 7, 64);
        va[0] = (char)(rank + 1);
        va[n - 1] = (char)(rank + 2);
    }
    int aliased = !bad && vb[0] == (char)(rank + 1) && vb[n - 1] == (char)(rank + 2);
    bad |= !bad && small[0] != 7; /* never shared */
    if (!bad) {                   /* realloc keeps what the buffer holds; calloc gives a buffer */
        char *c = realloc(a, 2 * n), *d = calloc(n, 1);
        bad |= !c || !d || c[0] != (char)(rank + 1);
        free(c);
        free(d);
    }
    free(b);
    free(small);

    /* three live buffers of this rank: three addresses, also after a free */
    char *x[3] = {malloc(n), malloc(n), malloc(n)};
    bad |= !x[0] || !x[1] || !x[2] || x[0] == x[1] || x[1] == x[2] || x[0] == x[2];
    uint64_t first = (uint64_t)(uintptr_t)x[0], firsts[64];
    free(x[1]);
    x[1] = malloc(n);
    bad |= !x[1] || x[1] == x[0] || x[1] == x[2];
    if (size <= 64) MPI_Gather(&first, 1, MPI_UINT64_T, firsts, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++) free(x[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    int same = 0, left = 0;
    if (rank == 0) {
        for (int r = 0; r < size && size <= 64; r++) same += firsts[r] == first;
        FILE *maps = fopen("/proc/self/maps", "r");
        char line[512];
        while (maps && fgets(line, sizeof line, maps))
            left += strstr(line, "courier-sim-shared") != NULL;
        if (maps) fclose(maps);
    }

    /* a message larger than BYTES round the ring: libcourier's own buffers are its own */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < RING; i++) out[i] = (char)(rank * 31 + i);
    MPI_Sendrecv(out, RING, MPI_BYTE, next, 5, in, RING, MPI_BYTE, prev, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < RING; i++) bad |= in[i] != (char)(prev * 31 + i);

    int sum[2] = {aliased, bad}, tot[2];
    MPI_Reduce(sum, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("shared: aliased in %d of %d ranks, one address in %d, ring %s, %d left\n", tot[0],
               size, same, tot[1] ? "WRONG" : "ok", left);
    MPI_Finalize();
    return rank == 0 && tot[1] ? 1 : 0;
}
