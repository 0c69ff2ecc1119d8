/* Messages queued behind one the receiver refused (2 ranks, run with
 * COURIER_UNEXPECTED_LIMIT=1 so that one unexpected message fills the budget).
 *
 * In each round rank 1 sends rank 0 small messages it does not receive yet:
 * the first fills rank 0's unexpected budget, the second is refused (its
 * transport holds it and everything of rank 1's behind it). Then rank 0 waits
 * for something that comes behind the refused one:
 *  - named: a receive naming rank 1, for the third message;
 *  - any: a receive from any source, for the third message;
 *  - rma: the reply to its own put through rank 1's one-sided service (run
 *    with COURIER_RMA_NO_MAP=1 COURIER_NO_CMA=1 so that the put is a request).
 * A send and a receive that match must complete: the refused message has to
 * be taken over the budget while a receive that may want a later message of
 * its sender is posted. Before, rank 0 waited for ever (a reported deadlock,
 * found over tcp by the transport conformance test with the same budget). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void fail(const char *what, int got, int want)
{
    fprintf(stderr, "refused_behind: %s: got %d, wanted %d\n", what, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Rank 0: the first message (tag) is here and the second right behind it: give
 * it time to arrive and be refused, without posting a receive. */
static void let_refuse(int tag)
{
    int flag = 0;
    while (!flag) MPI_Iprobe(1, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    for (double t = MPI_Wtime(); MPI_Wtime() - t < 0.05;)
        MPI_Iprobe(1, tag + 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

/* Rank 0: receive the three messages of a round, the third first. */
static void take_round(int tag, int src_of_third)
{
    int v[3] = {0, 0, 0};
    MPI_Recv(&v[2], 1, MPI_INT, src_of_third, tag + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&v[0], 1, MPI_INT, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&v[1], 1, MPI_INT, 1, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 3; i++)
        if (v[i] != 100 * tag + i) fail("a message's value", v[i], 100 * tag + i);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2) {
        if (me == 0) fprintf(stderr, "refused_behind: run it on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *mem, word = 0;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    *mem = 0;
    /* named (tags 10..12), any (20..22): three messages each */
    for (int tag = 10; tag <= 20; tag += 10) {
        if (me == 1) {
            for (int i = 0; i < 3; i++) {
                int v = 100 * tag + i;
                MPI_Send(&v, 1, MPI_INT, 0, tag + i, MPI_COMM_WORLD);
            }
        } else {
            let_refuse(tag);
            take_round(tag, tag == 10 ? 1 : MPI_ANY_SOURCE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* rma: two messages (tags 30, 31) left for later, then a put into rank 1 */
    if (me == 1) {
        for (int i = 0; i < 2; i++) {
            int v = 3000 + i;
            MPI_Send(&v, 1, MPI_INT, 0, 30 + i, MPI_COMM_WORLD);
        }
    } else {
        let_refuse(30);
        word = 4242;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(&word, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        MPI_Win_unlock(1, win); /* the put's reply comes behind the refused one */
        for (int i = 0; i < 2; i++) {
            int v = 0;
            MPI_Recv(&v, 1, MPI_INT, 1, 30 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (v != 3000 + i) fail("a message's value", v, 3000 + i);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 serves the put in here */
    if (me == 1 && *mem != 4242) fail("the word put into rank 1", *mem, 4242);
    MPI_Win_free(&win);
    if (me == 0) printf("refused behind ok\n");
    MPI_Finalize();
    return 0;
}
