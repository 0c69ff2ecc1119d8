/* MPI_Comm_join over a TCP connection the program made itself: rank 0 listens,
 * tells rank 1 its port, rank 1 connects; each joins over its end, and the two
 * exchange words and a long message over the intercommunicator, then
 * disconnect. A descriptor that is no socket is refused (MPI_ERR_ARG). */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHECK(c, what)                                                                             \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what);                         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    CHECK(n == 2, "needs 2 ranks");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm none;
    CHECK(MPI_Comm_join(0 + 1000, &none) == MPI_ERR_ARG && none == MPI_COMM_NULL,
          "join over a descriptor that is no socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    int fd;
    if (me == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, al) == 0 && listen(l, 1) == 0 &&
                  getsockname(l, (struct sockaddr *)&a, &al) == 0,
              "listen");
        MPI_Send(&a.sin_port, sizeof a.sin_port, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        MPI_Recv(&a.sin_port, sizeof a.sin_port, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(connect(fd, (struct sockaddr *)&a, al) == 0, "connect");
    }
    CHECK(fd >= 0, "socket");
    MPI_Comm inter;
    CHECK(MPI_Comm_join(fd, &inter) == MPI_SUCCESS, "join");
    int rn;
    MPI_Comm_remote_size(inter, &rn);
    CHECK(rn == 1, "the other side is one process");
    int out = 40 + me, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, 0, 3, &in, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
    CHECK(in == 41 - me, "the word from the other side");
    enum { L = 300000 };
    char *b = malloc(L), *r = malloc(L);
    for (int i = 0; i < L; i++) b[i] = (char)(i + me);
    MPI_Sendrecv(b, L, MPI_CHAR, 0, 4, r, L, MPI_CHAR, 0, 4, inter, MPI_STATUS_IGNORE);
    for (int i = 0; i < L; i++) CHECK(r[i] == (char)(i + 1 - me), "long message");
    CHECK(MPI_Comm_disconnect(&inter) == MPI_SUCCESS, "disconnect");
    close(fd);
    free(b);
    free(r);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("dyn join ok\n");
    MPI_Finalize();
    return 0;
}
