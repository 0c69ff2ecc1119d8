/* A token ring in NX/2: node 0 sends a counter around all nodes a few times;
 * each node adds its number. Shows csend/crecv, the info calls and gdsum. */
#include <stdio.h>

#include <courier/nx.h>

int main(void)
{
    long me = mynode(), n = numnodes(), laps = 3, token = 0;
    for (long lap = 0; lap < laps; lap++) {
        if (me == 0) {
            csend(1, (char *)&token, sizeof token, (me + 1) % n, 0);
            crecv(1, (char *)&token, sizeof token);
        } else {
            crecv(1, (char *)&token, sizeof token);
            token += me;
            csend(1, (char *)&token, sizeof token, (me + 1) % n, 0);
        }
    }
    double x[1] = {(double)me}, work[1];
    gdsum(x, 1, work);
    if (me == 0)
        printf("ring of %ld nodes: token %ld after %ld laps (expected %ld); sum of node "
               "numbers %g\n",
               n, token, laps, laps * n * (n - 1) / 2, x[0]);
    return me != 0 || token == laps * n * (n - 1) / 2 ? 0 : 1;
}
