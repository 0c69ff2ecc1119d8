/* A rank left waiting must not keep a core busy: node 1 waits about 1.5 s in
 * crecv while node 0 sleeps; node 1's CPU time over that wait stays small. */
#include <sys/resource.h>
#include <unistd.h>

#include "../check.h"

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

int main(void)
{
    CHECK(numnodes() == 2, "run with 2 nodes");
    long v = 1;
    if (mynode() == 0) {
        sleep(1);
        usleep(500000);
        csend(1, (char *)&v, sizeof v, 1, 0);
        return 0;
    }
    double c0 = cpu_seconds();
    crecv(1, (char *)&v, sizeof v);
    double used = cpu_seconds() - c0;
    CHECK(used < 0.3, "waiting 1.5 s used %.3f s of CPU", used);
    printf("idle: waiting 1.5 s cost %.3f s of CPU\n", used);
    return 0;
}
