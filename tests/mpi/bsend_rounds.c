/* Buffered sends give their space back once delivered: rank 0 attaches a buffer
 * that holds exactly N messages (each + MPI_BSEND_OVERHEAD), sends N with
 * MPI_Bsend, rank 1 receives them, both pass a barrier; then the next round
 * must fit again in the same buffer. Sizes from eager to rendezvous (4 MiB).
 *   bsend_rounds [ROUNDS]
 * Over shared memory the space of a large message came back only when the
 * sender happened to read its completion in some later wait. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcheck.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size == 2, "run with 2 ranks, not %d", size);
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    const int n = 3;
    const int sizes[] = {8, 65536, 1 << 20, 4 << 20};
    for (unsigned s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int len = sizes[s];
        int bsize = n * (len + MPI_BSEND_OVERHEAD);
        char *buf = malloc((size_t)bsize), *msg = malloc((size_t)len);
        CHECK(buf && msg, "out of memory");
        if (rank == 0) OK(MPI_Buffer_attach(buf, bsize));
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < n; i++) {
                if (rank == 0) {
                    memset(msg, 'a' + (r * n + i) % 26, (size_t)len);
                    int rc = MPI_Bsend(msg, len, MPI_CHAR, 1, i, MPI_COMM_WORLD);
                    CHECK(rc == MPI_SUCCESS, "round %d message %d of %d bytes: MPI_Bsend failed", r,
                          i, len);
                } else {
                    OK(MPI_Recv(msg, len, MPI_CHAR, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    char want = (char)('a' + (r * n + i) % 26);
                    CHECK(msg[0] == want && msg[len - 1] == want, "round %d message %d: wrong data",
                          r, i);
                }
            }
            /* Rank 1 has taken every message (its pulls need nothing of rank
             * 0) and waits in the barrier before rank 0 comes to it: rank 0's
             * barrier then has nothing to wait for, as on a loaded machine. */
            if (rank == 0) usleep(20000);
            OK(MPI_Barrier(MPI_COMM_WORLD));
        }
        if (rank == 0) {
            void *back;
            int bs;
            OK(MPI_Buffer_detach(&back, &bs));
            CHECK(back == buf && bs == bsize, "detach gave %p/%d", back, bs);
        }
        free(buf);
        free(msg);
    }
    if (rank == 0) printf("bsend rounds ok\n");
    MPI_Finalize();
    return 0;
}
