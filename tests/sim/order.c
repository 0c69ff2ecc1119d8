/* Non-overtaking under courier run --sim (tests/sim): the model may carry a
 * short message faster than a long one sent before it (another protocol, more
 * trips), but a receiver must match a sender's messages in the order they
 * were sent, as MPI requires.
 *
 * Ranks 0 and 2 each send rank 1 ROUNDS rounds of messages with one tag,
 * sizes alternating between long (past every modelled node's short-message
 * limit) and short; each carries its sender and its number. Rank 1 takes
 * them by source and tag, then (second half) with MPI_ANY_SOURCE and
 * MPI_ANY_TAG, and checks that each source's come in order and whole. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 40
#define LONG 3000

static int size_of(int k)
{
    return k % 2 ? 8 + k % 5 : LONG + 7 * k;
}

static void fill(unsigned char *b, int n, int src, int k)
{
    for (int i = 0; i < n; i++) b[i] = (unsigned char)(src * 31 + k * 7 + i);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 3) {
        if (me == 0) fprintf(stderr, "order: needs 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    static unsigned char buf[LONG + 7 * 2 * ROUNDS + 64], want[sizeof buf];
    if (me != 1) {
        for (int k = 0; k < 2 * ROUNDS; k++) {
            fill(buf, size_of(k), me, k);
            MPI_Send(buf, size_of(k), MPI_BYTE, 1, 9, MPI_COMM_WORLD);
        }
    } else {
        int next[3] = {0, 0, 0}, bad = 0;
        for (int i = 0; i < 4 * ROUNDS; i++) {
            MPI_Status st;
            int src = i < 2 * ROUNDS ? i % 2 * 2 : MPI_ANY_SOURCE; /* 0, 2, 0, 2, ... */
            MPI_Recv(buf, (int)sizeof buf, MPI_BYTE, src, i < 2 * ROUNDS ? 9 : MPI_ANY_TAG,
                     MPI_COMM_WORLD, &st);
            int got, k = next[st.MPI_SOURCE]++;
            MPI_Get_count(&st, MPI_BYTE, &got);
            fill(want, size_of(k), st.MPI_SOURCE, k);
            if (got != size_of(k) || memcmp(buf, want, (size_t)got)) {
                if (bad++ < 5)
                    fprintf(stderr,
                            "order: message %d from rank %d: %d bytes, not the %d sent %s\n", k,
                            st.MPI_SOURCE, got, size_of(k),
                            got == size_of(k) ? "(other bytes)" : "in that place");
            }
        }
        if (bad) {
            fprintf(stderr, "order: %d messages out of order\n", bad);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("order: %d messages in order\n", 4 * ROUNDS);
    }
    MPI_Finalize();
    return 0;
}
