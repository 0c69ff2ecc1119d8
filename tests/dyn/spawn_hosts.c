/* MPI_Comm_spawn onto other hosts (tests/dyn/CMakeLists.txt runs it on two
 * pretend hosts, tests/hosts/netns.sh): a master/worker job whose workers
 * are spawned through the new job's agents. A process tells its host by its
 * network namespace (/proc/self/ns/net), which is what a pretend host is.
 *   spawn_hosts master H2   (2 ranks, one per host; H2: the second host's name)
 *       1. 2 workers with info "host" H2: both must run where rank 1 does;
 *       2. 3 workers without "host": spread over the job's hosts as its own
 *          ranks are (2 on rank 0's host, 1 on rank 1's);
 *       each time the root hands out 24 tasks to whichever worker asks
 *       (MPI_ANY_SOURCE), the workers square them, and the root checks the
 *       sum; the other parent rank checks a broadcast over the
 *       intercommunicator; both jobs disconnect;
 *   spawn_hosts kill H2     (2 ranks) spawns 2 workers on H2; worker 1 writes
 *       its pid to $COURIER_TEST_KILL_FILE (tests/expect.sh kills it) while
 *       everyone waits: both jobs end, with one line. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);                           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

enum { NTASKS = 24, TAG_ASK = 1, TAG_TASK = 2, TAG_DONE = 3, TAG_HOST = 4 };

/* This process's network namespace, "net:[N]". */
static void where(char out[64])
{
    ssize_t n = readlink("/proc/self/ns/net", out, 63);
    out[n > 0 ? n : 0] = '\0';
}

static int worker(MPI_Comm parent, const char *mode)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char ns[64];
    where(ns);
    MPI_Send(ns, 64, MPI_CHAR, 0, TAG_HOST, parent);
    if (!strcmp(mode, "worker-kill")) {
        if (me == 1) {
            const char *f = getenv("COURIER_TEST_KILL_FILE");
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", f);
            FILE *o = fopen(tmp, "w");
            fprintf(o, "%d\n", (int)getpid());
            fclose(o);
            rename(tmp, f);
        }
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 99, parent, MPI_STATUS_IGNORE); /* never comes */
        return 1;
    }
    for (;;) { /* ask, get a task or the end */
        int task;
        MPI_Status st;
        MPI_Send(&me, 1, MPI_INT, 0, TAG_ASK, parent);
        MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, parent, &st);
        if (st.MPI_TAG == TAG_DONE) break;
        long long sq = (long long)task * task;
        MPI_Send(&sq, 1, MPI_LONG_LONG, 0, TAG_TASK, parent);
    }
    int word = 0;
    MPI_Bcast(&word, 1, MPI_INT, 1, parent);
    CHECK(word == 4242, "broadcast from parent rank 1: %d", word);
    MPI_Comm_disconnect(&parent);
    return 0;
}

/* One round: n workers (on host h, or NULL: the job's hosts); the root checks
 * that worker w ran in namespace want[w] (NULL: any) and the tasks' sum. */
static void round_of(const char *prog, int n, const char *h, char want[][64], int me)
{
    MPI_Info info = MPI_INFO_NULL;
    if (h) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "host", h);
    }
    char *wargv[] = {"worker", NULL};
    MPI_Comm inter;
    int codes[8];
    CHECK(MPI_Comm_spawn(prog, wargv, n, info, 0, MPI_COMM_WORLD, &inter, codes) == MPI_SUCCESS,
          "spawn of %d workers on %s", n, h ? h : "the job's hosts");
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    if (me == 0) {
        for (int w = 0; w < n; w++) {
            char ns[64];
            MPI_Recv(ns, 64, MPI_CHAR, w, TAG_HOST, inter, MPI_STATUS_IGNORE);
            CHECK(!strcmp(ns, want[w]), "worker %d of %d ran in %s, wanted %s (on %s)", w, n, ns,
                  want[w], h ? h : "the job's hosts");
        }
        long long sum = 0, want_sum = 0;
        int given = 0, done = 0;
        while (done < n) {
            int who;
            MPI_Status st;
            MPI_Recv(&who, 1, MPI_INT, MPI_ANY_SOURCE, TAG_ASK, inter, &st);
            if (given < NTASKS) {
                given++;
                want_sum += (long long)given * given;
                MPI_Send(&given, 1, MPI_INT, st.MPI_SOURCE, TAG_TASK, inter);
                long long sq;
                MPI_Recv(&sq, 1, MPI_LONG_LONG, st.MPI_SOURCE, TAG_TASK, inter, MPI_STATUS_IGNORE);
                sum += sq;
            } else {
                MPI_Send(&given, 1, MPI_INT, st.MPI_SOURCE, TAG_DONE, inter);
                done++;
            }
        }
        CHECK(sum == want_sum, "sum of the squares %lld, wanted %lld", sum, want_sum);
    }
    int word = 4242;
    MPI_Bcast(&word, 1, MPI_INT, me == 1 ? MPI_ROOT : MPI_PROC_NULL, inter);
    MPI_Comm_disconnect(&inter);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        int rc = worker(parent, argc > 1 ? argv[1] : "worker");
        MPI_Finalize();
        return rc;
    }
    CHECK(argc > 2, "usage: spawn_hosts master|kill HOST2");
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    CHECK(n == 2, "2 ranks, one per host (have %d)", n);
    char ns[2][64];
    where(ns[me]);
    MPI_Allgather(MPI_IN_PLACE, 64, MPI_CHAR, ns, 64, MPI_CHAR, MPI_COMM_WORLD);
    CHECK(strcmp(ns[0], ns[1]), "ranks 0 and 1 on one host (%s): run it on two", ns[0]);
    if (!strcmp(argv[1], "kill")) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "host", argv[2]);
        char *wargv[] = {"worker-kill", argc > 3 ? argv[3] : "", NULL}; /* expect.sh's mark */
        MPI_Comm inter;
        MPI_Comm_spawn(argv[0], wargv, 2, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 98, inter, MPI_STATUS_IGNORE); /* never comes */
        return 1;
    }
    char want[3][64];
    memcpy(want[0], ns[1], 64);
    memcpy(want[1], ns[1], 64);
    round_of(argv[0], 2, argv[2], want, me);
    memcpy(want[0], ns[0], 64);
    memcpy(want[1], ns[0], 64);
    memcpy(want[2], ns[1], 64);
    round_of(argv[0], 3, NULL, want, me);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        printf("spawn hosts: master/worker on %s and across the job's hosts ok\n", argv[2]);
    MPI_Finalize();
    return 0;
}
