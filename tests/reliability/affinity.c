/* courier run --bind: with "bound", every rank runs on exactly one CPU, ranks
 * 0..c-1 on c different CPUs and rank r on the CPU of rank r mod c, where c is
 * the number of CPUs the job has (COURIER_CPUS); with "free", every rank may
 * use all c CPUs. Rank 0 gathers the placements and checks them. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <courier/nx.h>

#include "../check.h"

int main(int argc, char **argv)
{
    CHECK(argc == 2 && (!strcmp(argv[1], "bound") || !strcmp(argv[1], "free")),
          "usage: affinity bound|free");
    bool bound = !strcmp(argv[1], "bound");
    const char *c_env = getenv("COURIER_CPUS");
    CHECK(c_env && atoi(c_env) > 0, "COURIER_CPUS is not set by the launcher");
    long c = atol(c_env), me = mynode(), n = numnodes();
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity");
    long mine[2] = {CPU_COUNT(&set), -1};
    for (int i = 0; i < CPU_SETSIZE && mine[0] == 1; i++)
        if (CPU_ISSET(i, &set)) mine[1] = i;
    if (me) {
        csend(1, (char *)mine, sizeof mine, 0, 0);
        return 0;
    }
    long *all = calloc((size_t)n, sizeof mine);
    memcpy(all, mine, sizeof mine);
    for (long r = 1; r < n; r++) {
        long got[2];
        crecv(1, (char *)got, sizeof got);
        memcpy(&all[2 * infonode()], got, sizeof got);
    }
    for (long r = 0; r < n; r++) {
        if (!bound) {
            CHECK(all[2 * r] == c, "rank %ld may use %ld CPUs, not the job's %ld", r, all[2 * r],
                  c);
            continue;
        }
        CHECK(all[2 * r] == 1, "rank %ld may use %ld CPUs, not 1", r, all[2 * r]);
        for (long q = 0; q < r; q++)
            CHECK((all[2 * q + 1] == all[2 * r + 1]) == (q % c == r % c),
                  "ranks %ld and %ld: CPUs %ld and %ld", q, r, all[2 * q + 1], all[2 * r + 1]);
    }
    printf("affinity: %ld ranks %s on %ld CPUs\n", n, bound ? "bound round robin" : "unbound", c);
    free(all);
    return 0;
}
