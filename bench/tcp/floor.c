/* bench/tcp/floor.c: the floor under any MPI's TCP latency on this machine: two
 * processes ping-pong LEN-byte messages over one loopback TCP connection
 * (TCP_NODELAY), with no library between, and print the one-way time (half
 * the round trip, averaged over ITERS after 1000 unmeasured). Not a test.
 *   floor [MODE [LEN [ITERS]]]
 * MODE says how a side waits for the next message:
 *   recv   spin on recv(MSG_DONTWAIT) (courier's fast path)
 *   poll   spin on poll(2) with a zero timeout, then recv (Open MPI's ob1/tcp)
 *   epoll  as recv, the socket also in an edge-triggered epoll set that is
 *          asked every 4th round (courier's transport as a whole)
 * LEN defaults to 56: courier's frame of an 8-byte message (48-byte header).
 * Invariants: every message is read whole before the answer is sent; nothing
 * outlives main (the child is waited for). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { M_RECV, M_POLL, M_EPOLL };

struct side {
    int fd, ep, mode;
    unsigned rounds;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void side_init(struct side *sd, int fd, int mode)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sd->fd = fd;
    sd->mode = mode;
    sd->rounds = 0;
    sd->ep = -1;
    if (mode == M_EPOLL) {
        sd->ep = epoll_create1(0);
        struct epoll_event e = {.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP};
        epoll_ctl(sd->ep, EPOLL_CTL_ADD, fd, &e);
    }
}

/* read exactly n bytes, spinning as the mode says */
static int get(struct side *sd, char *b, size_t n)
{
    size_t got = 0;
    while (got < n) {
        if (sd->mode == M_POLL) {
            struct pollfd p = {.fd = sd->fd, .events = POLLIN};
            while (poll(&p, 1, 0) < 1) {
            }
        }
        if (sd->ep >= 0 && !(++sd->rounds & 3)) {
            struct epoll_event e[8];
            epoll_wait(sd->ep, e, 8, 0);
        }
        ssize_t r = recv(sd->fd, b + got, n - got, MSG_DONTWAIT);
        if (r == 0) return -1;
        if (r > 0) got += (size_t)r;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *ms = argc > 1 ? argv[1] : "recv";
    int mode = !strcmp(ms, "poll") ? M_POLL : !strcmp(ms, "epoll") ? M_EPOLL : M_RECV;
    size_t len = argc > 2 ? (size_t)atol(argv[2]) : 56;
    long iters = argc > 3 ? atol(argv[3]) : 100000;
    if ((mode == M_RECV && strcmp(ms, "recv")) || len < 1 || len > 4096 || iters < 1) {
        fprintf(stderr, "usage: floor [recv|poll|epoll [LEN (1-4096) [ITERS]]]\n");
        return 2;
    }
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof a;
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) ||
        getsockname(l, (struct sockaddr *)&a, &sl) || listen(l, 1)) {
        perror("floor: listen on 127.0.0.1");
        return 1;
    }
    char b[4096] = {0};
    struct side sd;
    pid_t kid = fork();
    if (kid < 0) {
        perror("floor: fork");
        return 1;
    }
    if (kid == 0) {
        int c = socket(AF_INET, SOCK_STREAM, 0);
        if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a)) _exit(1);
        side_init(&sd, c, mode);
        for (long i = 0; i < iters + 1000; i++)
            if (get(&sd, b, len) || send(c, b, len, 0) != (ssize_t)len) _exit(1);
        _exit(0);
    }
    int c = accept(l, NULL, NULL);
    if (c < 0) {
        perror("floor: accept");
        return 1;
    }
    side_init(&sd, c, mode);
    double t0 = 0;
    for (long i = 0; i < iters + 1000; i++) {
        if (i == 1000) t0 = now_s();
        if (send(c, b, len, 0) != (ssize_t)len || get(&sd, b, len)) {
            fprintf(stderr, "floor: the connection broke\n");
            return 1;
        }
    }
    double t = now_s() - t0;
    int st = 0;
    waitpid(kid, &st, 0);
    printf("floor %s %zu B: %.2f us one-way\n", ms, len, t / (double)iters / 2 * 1e6);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
