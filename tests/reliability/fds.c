/* A rank holds no descriptor but stdin, stdout and stderr: the launcher's pipes
 * and the segment's descriptor are not leaked into the program. */
#include <dirent.h>
#include <stdlib.h>

#include "../check.h"

int main(void)
{
    long me = mynode(); /* joins the job: the segment is mapped by now */
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL, "cannot list /proc/self/fd");
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            int fd = atoi(e->d_name);
            if (fd != dirfd(d)) {
                CHECK(fd <= 2, "node %ld holds descriptor %d", me, fd);
                n++;
            }
        }
    closedir(d);
    CHECK(n == 3, "node %ld holds %d descriptors", me, n);
    gsync();
    return 0;
}
