/* Communicators made by several threads of each rank at once
 * (MPI_THREAD_MULTIPLE): each thread duplicates MPI_COMM_SELF under a mutex,
 * then the threads duplicate different communicators concurrently, round after
 * round (the pattern of MPICH's threads/comm/comm_dup_deadlock), and each new
 * communicator is checked by an all-reduce over it.
 *   dup_threads [ROUNDS] */
#include <pthread.h>
#include <stdlib.h>

#include "mcheck.h"

#define NT 2
static MPI_Comm comms[NT];
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;
static int rounds = 100;

static void *work(void *arg)
{
    int t = *(int *)arg, size;
    OK(MPI_Comm_size(comms[t], &size));
    for (int i = 0; i < rounds; i++) {
        MPI_Comm self, c;
        pthread_mutex_lock(&self_lock);
        OK(MPI_Comm_dup(MPI_COMM_SELF, &self));
        pthread_mutex_unlock(&self_lock);
        OK(MPI_Comm_dup(comms[t], &c));
        int one = 1, sum = 0;
        OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == size, "thread %d round %d: sum %d over a dup of %d ranks", t, i, sum, size);
        OK(MPI_Comm_free(&c));
        /* the same over a group, each thread with a tag of its own */
        MPI_Group g;
        OK(MPI_Comm_group(comms[t], &g));
        OK(MPI_Comm_create_group(comms[t], g, t, &c));
        OK(MPI_Group_free(&g));
        sum = 0;
        OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == size, "thread %d round %d: sum %d over a group of %d ranks", t, i, sum, size);
        OK(MPI_Comm_free(&c));
        OK(MPI_Comm_free(&self));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int prov;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    CHECK(prov == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", prov);
    if (argc > 1) rounds = atoi(argv[1]);
    for (int t = 0; t < NT; t++) OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    pthread_t th[NT];
    int ids[NT];
    for (int t = 0; t < NT; t++) {
        ids[t] = t;
        CHECK(pthread_create(&th[t], NULL, work, &ids[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++) OK(MPI_Comm_free(&comms[t]));
    int rank;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 0) printf("dup threads ok\n");
    MPI_Finalize();
    return 0;
}
