/* --check=threads: calls from threads the thread level does not allow.
 *   threads funneled | serialized | serialized_ok | io_ok
 * funneled: MPI_THREAD_FUNNELED, and a thread that is not the main one calls
 *   MPI_Send (rank 0) while the main thread waits in MPI_Recv for ever;
 * serialized: MPI_THREAD_SERIALIZED, rank 0's main thread waits in MPI_Recv
 *   for ever while another thread sends in a loop: the first send that comes
 *   while the main thread is inside its call is the error, or the receive, when
 *   the main thread enters it while a send is under way (without the check the
 *   job runs until --timeout);
 * serialized_ok: MPI_THREAD_SERIALIZED, two threads take turns under a lock;
 * io_ok: MPI_THREAD_FUNNELED and nonblocking collective file writes, which
 *   courier's own I/O thread carries out (no report). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../mpi/mcheck.h"

static int me;
static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;

static void *sender(void *arg)
{
    (void)arg;
    int x = 1;
    for (;;) MPI_Send(&x, 1, MPI_INT, 1, 2, MPI_COMM_WORLD); /* until the check ends the rank */
    return NULL;
}

static void *taker(void *arg)
{
    int *sum = arg;
    for (int i = 0; i < 200; i++) {
        pthread_mutex_lock(&turn);
        int v = me + i, all = 0;
        OK(MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        *sum += all;
        pthread_mutex_unlock(&turn);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    bool funneled = !strcmp(m, "funneled") || !strcmp(m, "io_ok");
    int want = funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_SERIALIZED, got = -1, x = 0;
    MPI_Init_thread(&argc, &argv, want, &got);
    CHECK(got == want, "provided %d, asked %d", got, want);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (!strcmp(m, "funneled") || !strcmp(m, "serialized")) {
        if (me == 0) {
            pthread_t t;
            CHECK(!pthread_create(&t, NULL, sender, NULL), "pthread_create");
            MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never sent */
        } else {
            for (;;) MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(m, "serialized_ok")) {
        /* each rank's two threads take turns; the ranks' k-th calls match */
        int s1 = 0, s2 = 0;
        pthread_t t;
        CHECK(!pthread_create(&t, NULL, taker, &s1), "pthread_create");
        taker(&s2);
        pthread_join(t, NULL);
        CHECK(s1 + s2 == 2 * 200 * 1 + 2 * 2 * 199 * 200 / 2, "sums %d + %d", s1, s2);
    } else if (!strcmp(m, "io_ok")) {
        char path[256];
        snprintf(path, sizeof path, "%s", argc > 2 ? argv[2] : "check_threads.dat");
        MPI_File fh;
        OK(MPI_File_open(MPI_COMM_WORLD, path,
                         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                         &fh));
        int v[64];
        for (int i = 0; i < 64; i++) v[i] = me * 64 + i;
        MPI_Request r[4];
        for (int k = 0; k < 4; k++)
            OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)((k * 2 + me) * sizeof v), v, 64, MPI_INT,
                                      &r[k]));
        OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
        OK(MPI_File_close(&fh));
    }
    MPI_Finalize();
    if (me == 0) printf("check threads %s ok\n", m);
    return 0;
}
