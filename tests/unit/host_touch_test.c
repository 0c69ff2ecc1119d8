/* Unit test of cr_host_touch (src/host/host.c), which a shared-memory channel's
 * two sides call when they take the channel up, so that each page's first
 * access in the process is over before the traffic:
 *  - every page the range meets is touched, the partial first and last pages
 *    too (a write touch makes each page of a fresh private mapping resident:
 *    mincore);
 *  - nothing outside the range is touched: the range sits between pages
 *    without access, where a touch of one byte too many ends the test with
 *    SIGSEGV;
 *  - the contents do not change, touched for writing or for reading, and a
 *    touch of no bytes touches nothing.
 * Exits non-zero, naming the check, when the code is wrong. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host.h"
#include "unit.h"

#define PAGES 3

int main(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    if (pg != 4096) {
        printf("skipped: pages of %zu bytes (the touch steps by 4 KiB)\n", pg);
        return 0;
    }
    /* guard, PAGES pages, guard */
    unsigned char *m = mmap(NULL, (PAGES + 2) * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    if (m == MAP_FAILED) return 1;
    unsigned char *p = m + pg;
    CHECK(mprotect(p, PAGES * pg, PROT_READ | PROT_WRITE) == 0);

    unsigned char vec[PAGES];
    CHECK(mincore(p, PAGES * pg, vec) == 0);
    for (int i = 0; i < PAGES; i++) CHECK(!(vec[i] & 1)); /* fresh: nothing resident */

    cr_host_touch(p + pg / 2, 0, true); /* no bytes: no page */
    CHECK(mincore(p, PAGES * pg, vec) == 0);
    CHECK(!(vec[0] & 1));

    /* from the middle of the first page to the middle of the last */
    cr_host_touch(p + 100, PAGES * pg - 200, true);
    CHECK(mincore(p, PAGES * pg, vec) == 0);
    for (int i = 0; i < PAGES; i++) CHECK(vec[i] & 1);

    /* contents unchanged; the whole range, and its last byte alone, at the guards */
    for (size_t i = 0; i < PAGES * pg; i++) p[i] = (unsigned char)(i * 7 + 3);
    cr_host_touch(p, PAGES * pg, true);
    cr_host_touch(p, PAGES * pg, false);
    cr_host_touch(p + PAGES * pg - 1, 1, true);
    cr_host_touch(p + PAGES * pg - 1, 1, false);
    int same = 1;
    for (size_t i = 0; i < PAGES * pg; i++) same &= p[i] == (unsigned char)(i * 7 + 3);
    CHECK(same);

    munmap(m, (PAGES + 2) * pg);
    if (!failures) printf("ok\n");
    return failures != 0;
}
