/* A rank holds no descriptor but stdin, stdout and stderr, and courier's own
 * wake-up eventfd where it has no doorbell (one rank alone, or under --sim):
 * the launcher's pipes and the segments' descriptors are not leaked into the
 * program. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"

int main(void)
{
    long me = mynode(); /* joins the job: the segment is mapped by now */
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL, "cannot list /proc/self/fd");
    int n = 0, events = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            int fd = atoi(e->d_name);
            if (fd == dirfd(d)) continue;
            n++;
            if (fd <= 2) continue;
            char path[64], what[256] = "";
            snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
            ssize_t k = readlink(path, what, sizeof what - 1);
            what[k > 0 ? k : 0] = '\0';
            CHECK(!strcmp(what, "anon_inode:[eventfd]") && !events++,
                  "node %ld holds descriptor %d (%s)", me, fd, what);
        }
    closedir(d);
    CHECK(n == 3 + events, "node %ld holds %d descriptors", me, n);
    gsync();
    return 0;
}
