/* courier run --bind: with "bound", every rank runs on exactly one CPU, ranks
 * 0..c-1 on c different CPUs and rank r on the CPU of rank r mod c, where c is
 * the number of CPUs the job has (COURIER_CPUS); with "shares" (n <= c ranks),
 * each rank has CPUs of its own, floor(c/n) or ceil(c/n) of them, no two ranks
 * share one and together they cover all c; with "free", every rank may use all
 * c CPUs. Rank 0 gathers the placements and checks them. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <courier/nx.h>

#include "../check.h"

int main(int argc, char **argv)
{
    CHECK(argc == 2 &&
              (!strcmp(argv[1], "bound") || !strcmp(argv[1], "free") || !strcmp(argv[1], "shares")),
          "usage: affinity bound|shares|free");
    const char *mode = argv[1];
    const char *c_env = getenv("COURIER_CPUS");
    CHECK(c_env && atoi(c_env) > 0, "COURIER_CPUS is not set by the launcher");
    long c = atol(c_env), me = mynode(), n = numnodes();
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity");
    if (me) {
        csend(1, (char *)&set, sizeof set, 0, 0);
        return 0;
    }
    cpu_set_t *all = calloc((size_t)n, sizeof set);
    CHECK(all, "out of memory");
    all[0] = set;
    for (long r = 1; r < n; r++) {
        cpu_set_t got;
        crecv(1, (char *)&got, sizeof got);
        all[infonode()] = got;
    }
    cpu_set_t cover;
    CPU_ZERO(&cover);
    for (long r = 0; r < n; r++) {
        long k = CPU_COUNT(&all[r]);
        if (!strcmp(mode, "free")) {
            CHECK(k == c, "rank %ld may use %ld CPUs, not the job's %ld", r, k, c);
        } else if (!strcmp(mode, "bound")) {
            CHECK(k == 1, "rank %ld may use %ld CPUs, not 1", r, k);
            for (long q = 0; q < r; q++)
                CHECK(CPU_EQUAL(&all[q], &all[r]) == (q % c == r % c),
                      "ranks %ld and %ld: one CPU where they should differ, or the reverse", q, r);
        } else {
            CHECK(n <= c, "shares: %ld ranks outnumber the %ld CPUs", n, c);
            CHECK(k == c / n || k == (c + n - 1) / n, "rank %ld has %ld CPUs, not %ld/%ld", r, k, c,
                  n);
            cpu_set_t both;
            CPU_AND(&both, &cover, &all[r]);
            CHECK(CPU_COUNT(&both) == 0, "rank %ld shares a CPU with a lower rank", r);
            CPU_OR(&cover, &cover, &all[r]);
        }
    }
    if (!strcmp(mode, "shares"))
        CHECK(CPU_COUNT(&cover) == c, "the shares cover %d of the %ld CPUs", CPU_COUNT(&cover), c);
    printf("affinity: %ld ranks %s on %ld CPUs\n", n, mode, c);
    free(all);
    return 0;
}
