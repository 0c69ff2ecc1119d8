/* A stranger at the ranks' watchdog under srun (src/core/pmiwatch.c): rank 0
 * connects to each of its own listening sockets (the watchdog's hub and tcp's)
 * three times and sends bytes that are no proof of the job's secret. The job
 * must go on and end well; the hub says once that it refused a connection
 * (tests/slurm/CMakeLists.txt counts the line). */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpi.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int fd = 3; me == 0 && fd < 1024; fd++) {
        int acc = 0;
        socklen_t l = sizeof acc;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) || !acc) continue;
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        if (getsockname(fd, (struct sockaddr *)&ss, &sl)) continue;
        for (int k = 0; k < 3; k++) {
            int c = socket(ss.ss_family, SOCK_STREAM, 0);
            char junk[112]; /* as long as the hub's hello */
            memset(junk, 'x' + k, sizeof junk);
            if (c >= 0 && !connect(c, (struct sockaddr *)&ss, sl) &&
                write(c, junk, sizeof junk) == (ssize_t)sizeof junk)
                n++;
            if (c >= 0) close(c);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("watch_stranger: %d connections made, job done\n", n);
    MPI_Finalize();
    return 0;
}
