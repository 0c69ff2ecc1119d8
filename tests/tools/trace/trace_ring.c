/* A program whose trace is known in advance (tests/tools/trace): each rank sends
 * ROUNDS messages around a ring with MPI_Send/MPI_Recv (every 5th one long, so
 * it goes by rendezvous), then the same with NX/2's csend/crecv and MPL's
 * mpc_bsend/mpc_brecv, then one MPI_Allreduce, one native cr_put and one
 * cr_get. check.sh counts the calls and messages in the trace it leaves.
 * Argument "fail": rank 1 exits with status 3 after the rings, so the trace of
 * a failed job (its other ranks ended by SIGTERM) can be checked; "hang": rank
 * 1 then waits for a message nobody sends. */
#include <courier/courier.h>
#include <courier/mpi.h>
#include <courier/mpl.h>
#include <courier/nx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 20
#define SHORT 64
#define LONG (256 * 1024)

static char sbuf[LONG], rbuf[LONG];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int i = 0; i < ROUNDS; i++) {
        int len = i % 5 == 4 ? LONG : SHORT;
        memset(sbuf, i, (size_t)len);
        if (me % 2 == 0) {
            MPI_Send(sbuf, len, MPI_BYTE, right, 7, MPI_COMM_WORLD);
            MPI_Recv(rbuf, len, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, len, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, len, MPI_BYTE, right, 7, MPI_COMM_WORLD);
        }
        if (rbuf[0] != (char)i || rbuf[len - 1] != (char)i) {
            fprintf(stderr, "rank %d: round %d: wrong data\n", me, i);
            return 1;
        }
    }
    for (int i = 0; i < ROUNDS; i++) { /* NX/2: type 9 */
        if (me % 2 == 0) {
            csend(9, sbuf, SHORT, right, 0);
            crecv(9, rbuf, SHORT);
        } else {
            crecv(9, rbuf, SHORT);
            csend(9, sbuf, SHORT, right, 0);
        }
    }
    for (int i = 0; i < ROUNDS; i++) { /* MPL: type 11 */
        int src = left, type = 11, nbytes;
        if (me % 2 == 0) {
            mpc_bsend(sbuf, SHORT, right, 11);
            mpc_brecv(rbuf, SHORT, &src, &type, &nbytes);
        } else {
            mpc_brecv(rbuf, SHORT, &src, &type, &nbytes);
            mpc_bsend(sbuf, SHORT, right, 11);
        }
    }
    if (argc > 1 && me == 1 && !strcmp(argv[1], "fail")) exit(3);
    if (argc > 1 && me == 1 && !strcmp(argv[1], "hang")) crecv(99, rbuf, SHORT);
    double x = me, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (sum != n * (n - 1) / 2.0) {
        fprintf(stderr, "rank %d: allreduce gave %g\n", me, sum);
        return 1;
    }
    uint64_t word = 0, got = 0;
    int key = cr_region_register(&word, sizeof word);
    uint64_t mine = (uint64_t)me + 100;
    cr_handle_wait(cr_put(right, key, 0, &mine, sizeof mine, CR_NO_EVENT));
    cr_sync();
    cr_handle_wait(cr_get(left, key, 0, &got, sizeof got, CR_NO_EVENT));
    if (word != (uint64_t)left + 100 || got != (uint64_t)(left - 1 + n) % n + 100) {
        fprintf(stderr, "rank %d: put/get gave %llu %llu\n", me, (unsigned long long)word,
                (unsigned long long)got);
        return 1;
    }
    cr_sync();
    if (me == 0) printf("trace_ring: ok on %d ranks\n", n);
    MPI_Finalize();
    return 0;
}
