/* Two jobs started separately meet through a port and a published name:
 *   pair server NAME   opens a port, publishes it as NAME, accepts;
 *   pair client NAME   looks NAME up (until the server has published it) and
 *                      connects.
 * Every member of each group then exchanges a word with every member of the
 * other, rank 0 of each sends the other's rank 0 a long message (past the
 * eager limit: the rendezvous over the set's tcp), both groups run an
 * intercommunicator collective, and both disconnect. A connect to a port
 * nobody opened must fail with MPI_ERR_PORT, a lookup of a name nobody
 * published with MPI_ERR_NAME. `pair stranger NAME` (run with another
 * XDG_RUNTIME_DIR: another user's key, as far as courier can tell) connects to
 * the port in $DYN_PORT_FILE and must be refused (MPI_ERR_PORT). NAME gets the test's marker
 * appended (several runs of the suite share the user's name directory). */
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

#define LONG (200 * 1000)

static void exchange(MPI_Comm inter, int server)
{
    int me, n, rn;
    MPI_Comm_rank(inter, &me);
    MPI_Comm_size(inter, &n);
    MPI_Comm_remote_size(inter, &rn);
    int *in = calloc((size_t)rn, sizeof *in), *out = calloc((size_t)rn, sizeof *out);
    MPI_Request *rq = calloc(2 * (size_t)rn, sizeof *rq);
    for (int j = 0; j < rn; j++) {
        out[j] = (server ? 1000 : 2000) + 10 * me + j;
        MPI_Irecv(&in[j], 1, MPI_INT, j, 7, inter, &rq[j]);
        MPI_Isend(&out[j], 1, MPI_INT, j, 7, inter, &rq[rn + j]);
    }
    MPI_Waitall(2 * rn, rq, MPI_STATUSES_IGNORE);
    for (int j = 0; j < rn; j++)
        CHECK(in[j] == (server ? 2000 : 1000) + 10 * j + me, "word from remote %d: %d", j, in[j]);
    if (me == 0) {
        char *b = malloc(LONG), *r = malloc(LONG);
        for (int i = 0; i < LONG; i++) b[i] = (char)(i * (server ? 7 : 13));
        MPI_Sendrecv(b, LONG, MPI_CHAR, 0, 8, r, LONG, MPI_CHAR, 0, 8, inter, MPI_STATUS_IGNORE);
        for (int i = 0; i < LONG; i++)
            CHECK(r[i] == (char)(i * (server ? 13 : 7)), "long message byte %d", i);
        free(b);
        free(r);
    }
    /* an intercommunicator collective: each side's sum reaches the other */
    int mine = server ? 1 : 100, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK(sum == rn * (server ? 100 : 1), "allreduce over the intercommunicator: %d", sum);
    free(in);
    free(out);
    free(rq);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc >= 3, "usage: pair server|client NAME");
    int server = !strcmp(argv[1], "server"), me;
    char name[300], port[MPI_MAX_PORT_NAME];
    const char *mark = getenv("COURIER_TEST_MARK");
    snprintf(name, sizeof name, "%s-%s", argv[2], mark ? mark : "");
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm inter;
    if (!strcmp(argv[1], "stranger")) { /* another key (XDG_RUNTIME_DIR): refused */
        FILE *f = fopen(getenv("DYN_PORT_FILE"), "r");
        CHECK(f && fgets(port, sizeof port, f), "read the port file");
        fclose(f);
        port[strcspn(port, "\n")] = '\0';
        CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter) == MPI_ERR_PORT,
              "a connect with another user's key must be refused");
        CHECK(inter == MPI_COMM_NULL, "refused: MPI_COMM_NULL");
        if (me == 0) printf("dyn stranger refused ok\n");
        MPI_Finalize();
        return 0;
    }
    if (server) {
        if (me == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            const char *pf = getenv("DYN_PORT_FILE"); /* for a stranger (stranger.sh) */
            if (pf) {
                char tmp[4200];
                snprintf(tmp, sizeof tmp, "%s.tmp", pf);
                FILE *f = fopen(tmp, "w");
                CHECK(f && fprintf(f, "%s\n", port) > 0 && fclose(f) == 0, "write %s", tmp);
                CHECK(rename(tmp, pf) == 0, "rename to %s", pf);
            }
            CHECK(MPI_Publish_name(name, MPI_INFO_NULL, port) == MPI_SUCCESS, "publish %s", name);
            CHECK(MPI_Publish_name(name, MPI_INFO_NULL, port) == MPI_ERR_SERVICE,
                  "publishing %s twice", name);
        }
        CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter) == MPI_SUCCESS,
              "accept");
    } else {
        if (me == 0) {
            char none[MPI_MAX_PORT_NAME];
            CHECK(MPI_Lookup_name("courier-dyn-no-such-name", MPI_INFO_NULL, none) == MPI_ERR_NAME,
                  "lookup of a name nobody published");
            while (MPI_Lookup_name(name, MPI_INFO_NULL, port) != MPI_SUCCESS) usleep(20000);
        }
        MPI_Comm bad;
        CHECK(MPI_Comm_connect("127.0.0.1:1", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &bad) ==
                  MPI_ERR_PORT,
              "connect to a port nobody opened");
        CHECK(bad == MPI_COMM_NULL, "a failed connect gives MPI_COMM_NULL");
        CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter) == MPI_SUCCESS,
              "connect");
    }
    int flag;
    MPI_Comm_test_inter(inter, &flag);
    CHECK(flag, "accept/connect give an intercommunicator");
    exchange(inter, server);
    /* a second round on a duplicate: contexts agreed across the two jobs */
    MPI_Comm dup;
    MPI_Comm_dup(inter, &dup);
    exchange(dup, server);
    MPI_Comm_free(&dup);
    CHECK(MPI_Comm_disconnect(&inter) == MPI_SUCCESS && inter == MPI_COMM_NULL, "disconnect");
    if (server && me == 0) {
        CHECK(MPI_Unpublish_name(name, MPI_INFO_NULL, port) == MPI_SUCCESS, "unpublish");
        MPI_Close_port(port);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("dyn %s ok\n", server ? "server" : "client");
    MPI_Finalize();
    return 0;
}
