/* Creation side of the shm transport's region of the host segment: its size and
 * head for a job of n ranks, and the whole segment made in a memfd. Used by the
 * launcher, which links none of the engine, and by a rank that makes its host's
 * segment itself (under srun: src/core/pmi.c). Invariants: the layout depends
 * only on n, so its maker and the ranks agree on it; the head and the inboxes
 * come first, so that the memory a job needs from the start is one prefix of
 * the region (cr_shm_region_fixed) and the channels after it take memory only
 * once used. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../host/host.h"
#include "shm_layout.h"
#include "transport.h"

/* Ring sizes shrink with the job: all-to-all traffic still opens N^2 channels. */
static void shm_geometry(int n, uint32_t *ncells, uint32_t *dbytes)
{
    *ncells = n <= 32 ? 64 : n <= 128 ? 32 : n <= 256 ? 16 : 8;
    *dbytes = n <= 16 ? 64 * 1024 : n <= 64 ? 32 * 1024 : n <= 256 ? 8 * 1024 : 4 * 1024;
}

static size_t chan_stride(uint32_t ncells, uint32_t dbytes)
{
    return sizeof(shm_chan) + (size_t)ncells * CELL + dbytes;
}

static size_t page_round(size_t x)
{
    return (x + 4095) & ~(size_t)4095;
}

/* The inboxes' lines, then 2 * nranks slots per receiver (a channel and a lane
 * per sender). */
static size_t inbox_off(void)
{
    return sizeof(shm_region);
}

size_t cr_shm_region_fixed(int n)
{
    size_t inboxes = (size_t)n * sizeof(shm_inbox) + 2 * (size_t)n * n * sizeof(uint32_t);
    return page_round(inbox_off() + inboxes);
}

size_t cr_shm_region_size(int n)
{
    uint32_t nc, db;
    shm_geometry(n, &nc, &db);
    return cr_shm_region_fixed(n) + 2 * (size_t)n * n * chan_stride(nc, db);
}

void cr_shm_region_init(void *region, int n)
{
    shm_region *r = region;
    shm_geometry(n, &r->ncells, &r->dbytes);
    r->nranks = (uint32_t)n;
    r->chan_stride = chan_stride(r->ncells, r->dbytes);
    r->inbox_off = inbox_off();
    r->chan_off = cr_shm_region_fixed(n);
}

int cr_shm_segment_make(int n, uint32_t flags, size_t *len)
{
    size_t region = cr_shm_region_size(n);
    *len = cr_host_segment_size(n, region);
    int fd = memfd_create("courier-job", MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)*len) < 0) goto fail;
    /* Reserve the memory every rank needs now (control part, shm inboxes), so
     * that a job too big for this machine fails here with a clear message
     * instead of a SIGBUS in a rank later. Channels take theirs when first used
     * (cr_host_reserve), so memory grows with the pairs that talk. */
    int rc = posix_fallocate(fd, 0, (off_t)(cr_host_control_size(n) + cr_shm_region_fixed(n)));
    if (rc) {
        errno = rc;
        goto fail;
    }
    size_t head = cr_host_control_size(n) + cr_shm_region_fixed(n);
    void *base = mmap(NULL, head, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) goto fail;
    cr_shm_region_init(cr_host_segment_init(base, n, region, flags), n);
    munmap(base, head);
    return fd;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}
