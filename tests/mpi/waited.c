/* Point-to-point messages of the eager limit to 256 KiB whose senders do
 * different things while they wait: each is read by single copy, whether its
 * sender waits for it or computes (docs/engine.md: the push of a waited send
 * lost to the read). Rank 0 sends rank 1, every byte checked, a barrier
 * between:
 *   65536 bytes  MPI_Send (a blocking send)
 *   98304        MPI_Isend + MPI_Wait, received 200 ms later
 *   81920        MPI_Isend, the sender away for 200 ms before MPI_Wait
 *   262144       MPI_Send
 *   73728        persistent (MPI_Start + MPI_Wait), received late
 *   90112        partitioned, 1 partition, received late
 *   106496 and 114688  two MPI_Isend + one MPI_Waitall, received late
 *   57344        MPI_Isend, then MPI_Waitall of a receive only (the reply that
 *                comes after it), received late
 * tests/mpi/waited.sh reads the job's trace for how each went. Prints "waited ok" on both ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { BLK = 65536, ISW = 98304, AWAY = 81920, BIG = 262144, PERS = 73728, PART = 90112 };
enum { ALL1 = 106496, ALL2 = 114688, OTHER = 57344 };

static void fill(char *b, int n, int salt)
{
    for (int i = 0; i < n; i++) b[i] = (char)(i * 13 + salt);
}

static void check(const char *b, int n, int salt, const char *what)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (char)(i * 13 + salt)) {
            printf("waited: %s: byte %d wrong\n", what, i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    char *b = malloc(BIG);
    MPI_Request q;
    if (r == 0) {
        fill(b, BLK, 1);
        MPI_Send(b, BLK, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        fill(b, ISW, 2);
        MPI_Isend(b, ISW, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        fill(b, AWAY, 3);
        MPI_Isend(b, AWAY, MPI_CHAR, 1, 3, MPI_COMM_WORLD, &q);
        usleep(200000);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        fill(b, BIG, 4);
        MPI_Send(b, BIG, MPI_CHAR, 1, 4, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        fill(b, PERS, 5);
        MPI_Send_init(b, PERS, MPI_CHAR, 1, 5, MPI_COMM_WORLD, &q);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
        MPI_Barrier(MPI_COMM_WORLD);
        fill(b, PART, 6);
        MPI_Psend_init(b, 1, PART, MPI_CHAR, 1, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        MPI_Start(&q);
        MPI_Pready(0, q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
        MPI_Barrier(MPI_COMM_WORLD);
        char *c = malloc(ALL2);
        MPI_Request two[2];
        fill(b, ALL1, 7);
        fill(c, ALL2, 8);
        MPI_Isend(b, ALL1, MPI_CHAR, 1, 7, MPI_COMM_WORLD, &two[0]);
        MPI_Isend(c, ALL2, MPI_CHAR, 1, 8, MPI_COMM_WORLD, &two[1]);
        MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        fill(b, OTHER, 9);
        int reply = 0;
        MPI_Isend(b, OTHER, MPI_CHAR, 1, 9, MPI_COMM_WORLD, &two[0]);
        MPI_Irecv(&reply, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, &two[1]);
        MPI_Waitall(1, &two[1], MPI_STATUSES_IGNORE);
        MPI_Wait(&two[0], MPI_STATUS_IGNORE);
        if (reply != 42) {
            printf("waited: the reply is %d\n", reply);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        free(c);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (r == 1) {
        MPI_Recv(b, BLK, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(b, BLK, 1, "MPI_Send");
        MPI_Barrier(MPI_COMM_WORLD);
        usleep(200000); /* the sender is in its MPI_Wait by now */
        MPI_Recv(b, ISW, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(b, ISW, 2, "MPI_Isend");
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Recv(b, AWAY, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(b, AWAY, 3, "MPI_Isend, sender away");
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Recv(b, BIG, MPI_CHAR, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(b, BIG, 4, "MPI_Send, 256 KiB");
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Recv_init(b, PERS, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &q);
        usleep(200000);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
        check(b, PERS, 5, "persistent");
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Precv_init(b, 1, PART, MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        usleep(200000);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
        check(b, PART, 6, "partitioned");
        MPI_Barrier(MPI_COMM_WORLD);
        char *c = malloc(ALL2);
        usleep(200000);
        MPI_Request two[2]; /* both posted at once: each matched as posted */
        MPI_Irecv(b, ALL1, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &two[0]);
        MPI_Irecv(c, ALL2, MPI_CHAR, 0, 8, MPI_COMM_WORLD, &two[1]);
        MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
        check(b, ALL1, 7, "MPI_Waitall, first");
        check(c, ALL2, 8, "MPI_Waitall, second");
        free(c);
        MPI_Barrier(MPI_COMM_WORLD);
        int reply = 42;
        usleep(200000);
        MPI_Recv(b, OTHER, MPI_CHAR, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(b, OTHER, 9, "MPI_Isend, MPI_Waitall of another");
        MPI_Send(&reply, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < 8; i++) MPI_Barrier(MPI_COMM_WORLD);
    }
    printf("waited ok\n");
    free(b);
    MPI_Finalize();
    return 0;
}
