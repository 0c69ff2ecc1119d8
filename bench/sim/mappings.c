/* What a copy into or out of a program's buffer costs when the buffers are many
 * mappings of the same pages, as `courier run --sim MACHINE,shared=BYTES` makes
 * them (src/api/simshared.c: every rank's buffer a mapping of one memfd): N
 * mappings of BYTES each, then 1 KiB copies out of a random block of a random
 * mapping, against the same blocks of the first mapping alone. No courier code.
 * On a virtual machine whose hypervisor keeps shadow page tables, a working set
 * of many virtual pages costs far more than the same physical pages through one
 * mapping (bench/results/sim.md, "Where a message's CPU goes").
 *
 *   mappings N [MIB [COPIES]]   N mappings of MIB MiB (default 4), COPIES copies
 *                               (default 4,000,000); prints ns per 1 KiB copy
 * Build: cc -O2 bench/sim/mappings.c -o mappings */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A cheap deterministic random number (a linear congruential step). */
static uint32_t next(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    long mib = argc > 2 ? atol(argv[2]) : 4, copies = argc > 3 ? atol(argv[3]) : 4000000;
    if (n < 1 || mib < 1 || copies < 1) {
        fprintf(stderr, "usage: mappings N [MIB [COPIES]]\n");
        return 2;
    }
    size_t len = (size_t)mib << 20, blocks = len / 1024;
    int fd = memfd_create("mappings", 0);
    char **m = malloc((size_t)n * sizeof *m);
    if (fd < 0 || ftruncate(fd, (off_t)len) < 0 || !m) {
        perror("mappings: memfd");
        return 1;
    }
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        m[i] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m[i] == MAP_FAILED) {
            perror("mappings: mmap");
            return 1;
        }
        memset(m[i], i & 0xff, len); /* every page touched once through each mapping */
    }
    double t1 = now_s();
    printf("%d mappings of %ld MiB, each written once: %.2f s (%.2f us per 4 KiB page)\n", n, mib,
           t1 - t0, (t1 - t0) * 1e6 / ((double)n * (double)len / 4096));
    char tmp[1024];
    unsigned sum = 0;
    for (int one = 0; one < 2; one++) {
        uint32_t s = 1;
        double a = now_s();
        for (long k = 0; k < copies; k++) {
            int i = (int)(next(&s) % (uint32_t)n);
            size_t b = next(&s) % blocks;
            memcpy(tmp, (one ? m[0] : m[i]) + b * 1024, sizeof tmp);
            sum += (unsigned char)tmp[k & 1023];
        }
        printf("%s: %.0f ns per 1 KiB copy\n",
               one ? "the same blocks through one mapping" : "a random mapping's block",
               (now_s() - a) * 1e9 / (double)copies);
    }
    return sum == 1 ? 3 : 0; /* (uses the copies, so that they are made) */
}
