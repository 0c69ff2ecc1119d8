/* MPI_Comm_spawn through courier run.
 *   spawn master    (2 ranks) spawns 3 workers of this program in "wdir" /:
 *                   (spawn slow: the workers compute 3 s first, past the
 *                   parent's hang timeout: its wait is not a deadlock;
 *                   spawn multi: MPI_Comm_spawn_multiple, 1 + 2 workers)
 *                   each parent rank sends each worker a task, each worker
 *                   answers every parent rank, the root broadcasts to the
 *                   workers over the intercommunicator, the two jobs merge
 *                   (MPI_Intercomm_merge) and reduce, both disconnect;
 *   spawn missing   spawns a program that does not exist, then `false` (a job
 *                   that fails before its ranks connect, which its launcher
 *                   reports): each MPI_ERR_SPAWN, every error code
 *                   MPI_ERR_SPAWN, MPI_COMM_NULL, no hang;
 *   spawn freed     (2 ranks) ranks 0 and 1 connect (MPI_Comm_accept/connect on
 *                   MPI_COMM_SELF) and free that intercommunicator without
 *                   disconnecting it; then each spawns a worker of its own
 *                   and disconnects from it: the new intercommunicator may
 *                   get the freed one's handle, and its disconnect must close
 *                   the spawn's connection, not the freed one's (it did: the
 *                   workers waited for a goodbye forever);
 *   spawn kill M    (2 ranks) spawns 2 workers; worker 1 writes its pid to
 *                   $COURIER_TEST_KILL_FILE (tests/expect.sh kills it) while
 *                   everyone waits: both jobs end, with one line.
 * A worker finds its parent with MPI_Comm_get_parent. */
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

/* Both jobs as one intracommunicator (the parents first): its ranks and a sum. */
static void merged(MPI_Comm inter, int high, int all)
{
    MPI_Comm m;
    MPI_Intercomm_merge(inter, high, &m);
    int r, n, one = 1, sum = 0, wr;
    MPI_Comm_rank(m, &r);
    MPI_Comm_size(m, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    CHECK(n == all, "merged size %d, wanted %d", n, all);
    CHECK(high ? r >= all - 3 : r == wr, "merged rank %d (world rank %d)", r, wr);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, m);
    CHECK(sum == all, "allreduce over both jobs: %d", sum);
    int rsum = 0;
    MPI_Allreduce(&r, &rsum, 1, MPI_INT, MPI_SUM, m);
    CHECK(rsum == all * (all - 1) / 2, "ranks of the merged communicator: sum %d", rsum);
    /* Nonblocking collectives over both jobs, whose algorithm both jobs must
     * choose alike though one of them may have more ranks than CPUs and the
     * other not (the workers' one-round forms against the parents' rounds
     * waited for each other forever). */
    int *got = malloc((size_t)n * sizeof *got), *to = malloc((size_t)n * sizeof *to);
    MPI_Request q;
    MPI_Iallgather(&r, 1, MPI_INT, got, 1, MPI_INT, m, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == i, "iallgather over both jobs: [%d] = %d", i, got[i]);
    for (int i = 0; i < n; i++) to[i] = 100 * r + i;
    MPI_Ialltoall(to, 1, MPI_INT, got, 1, MPI_INT, m, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == 100 * i + r, "ialltoall over both jobs: [%d] = %d", i, got[i]);
    free(got);
    free(to);
    MPI_Comm_free(&m);
}

static int worker(MPI_Comm parent, const char *mode)
{
    int me, n, pn;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_remote_size(parent, &pn);
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
    if (!strcmp(mode, "worker-bye")) {
        MPI_Barrier(parent);
        MPI_Comm_disconnect(&parent);
        return 0;
    }
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) && !strcmp(cwd, "/"), "wdir: in %s", cwd);
    if (!strcmp(mode, "worker-slow")) sleep(3); /* the parent waits past its hang timeout */
    for (int p = 0; p < pn; p++) {
        int task;
        MPI_Recv(&task, 1, MPI_INT, p, 1, parent, MPI_STATUS_IGNORE);
        CHECK(task == 100 * p + me, "task from parent %d: %d", p, task);
        int answer = task * 2 + 1;
        MPI_Send(&answer, 1, MPI_INT, p, 2, parent);
    }
    int word = 0;
    MPI_Bcast(&word, 1, MPI_INT, 0, parent);
    CHECK(word == 4242, "broadcast from the parent: %d", word);
    merged(parent, 1, pn + n);
    MPI_Comm_disconnect(&parent);
    return 0;
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
    CHECK(argc > 1, "usage: spawn master|missing|kill");
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm inter;
    int codes[3] = {-1, -1, -1};
    if (!strcmp(argv[1], "missing")) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Comm_spawn("/nonexistent/courier-worker", MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0,
                                MPI_COMM_WORLD, &inter, codes);
        CHECK(rc == MPI_ERR_SPAWN, "spawn of a missing program: %d", rc);
        CHECK(inter == MPI_COMM_NULL, "no intercommunicator");
        for (int i = 0; i < 3; i++) CHECK(codes[i] == MPI_ERR_SPAWN, "code %d: %d", i, codes[i]);
        /* a job that fails before its ranks connect: its launcher reports it */
        codes[0] = codes[1] = -1;
        rc = MPI_Comm_spawn("false", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                            codes);
        CHECK(rc == MPI_ERR_SPAWN && inter == MPI_COMM_NULL, "spawn of false: %d", rc);
        for (int i = 0; i < 2; i++) CHECK(codes[i] == MPI_ERR_SPAWN, "code %d: %d", i, codes[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) printf("spawn missing ok\n");
        MPI_Finalize();
        return 0;
    }
    if (!strcmp(argv[1], "freed")) {
        char port[MPI_MAX_PORT_NAME];
        if (me == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
            MPI_Close_port(port);
        } else if (me == 1) {
            MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        }
        if (me < 2) {
            int x = 7;
            MPI_Bcast(&x, 1, MPI_INT, me == 0 ? MPI_ROOT : 0, inter);
            CHECK(x == 7, "broadcast over the connection: %d", x);
            MPI_Comm_free(&inter); /* not disconnected */
        }
        char *wargv[] = {"worker-bye", NULL};
        MPI_Comm kid;
        CHECK(MPI_Comm_spawn(argv[0], wargv, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &kid,
                             MPI_ERRCODES_IGNORE) == MPI_SUCCESS,
              "spawn on MPI_COMM_SELF");
        MPI_Barrier(kid);
        MPI_Comm_disconnect(&kid);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) printf("spawn freed ok\n");
        MPI_Finalize();
        return 0;
    }
    if (!strcmp(argv[1], "kill")) {
        char *wargv[] = {"worker-kill", argc > 2 ? argv[2] : "", NULL};
        MPI_Comm_spawn(argv[0], wargv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 98, inter, MPI_STATUS_IGNORE); /* never comes */
        return 1;
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "wdir", "/");
    char *wargv[] = {!strcmp(argv[1], "slow") ? "worker-slow" : "worker", NULL};
    if (!strcmp(argv[1], "multi")) { /* two commands: 1 worker, then 2 */
        char *cmds[2] = {argv[0], argv[0]}, **argvs[2] = {wargv, wargv};
        int np[2] = {1, 2};
        MPI_Info infos[2] = {info, MPI_INFO_NULL};
        CHECK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter,
                                      codes) == MPI_SUCCESS,
              "spawn_multiple");
    } else
        CHECK(MPI_Comm_spawn(argv[0], wargv, 3, info, 0, MPI_COMM_WORLD, &inter, codes) ==
                  MPI_SUCCESS,
              "spawn");
    MPI_Info_free(&info);
    for (int i = 0; i < 3; i++) CHECK(codes[i] == MPI_SUCCESS, "code %d: %d", i, codes[i]);
    int rn;
    MPI_Comm_remote_size(inter, &rn);
    CHECK(rn == 3, "3 workers, got %d", rn);
    for (int w = 0; w < rn; w++) {
        int task = 100 * me + w;
        MPI_Send(&task, 1, MPI_INT, w, 1, inter);
    }
    for (int w = 0; w < rn; w++) {
        int answer;
        MPI_Recv(&answer, 1, MPI_INT, w, 2, inter, MPI_STATUS_IGNORE);
        CHECK(answer == 2 * (100 * me + w) + 1, "answer of worker %d: %d", w, answer);
    }
    int word = 4242;
    MPI_Bcast(&word, 1, MPI_INT, me == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    merged(inter, 0, n + rn);
    MPI_Comm_disconnect(&inter);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("spawn %s ok\n", argv[1]);
    MPI_Finalize();
    return 0;
}
