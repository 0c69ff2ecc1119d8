/* Creation side of the shm transport's region of the host segment: its size and
 * head for a job of n ranks. Used by the launcher, which links none of the
 * engine. Invariant: the ring geometry depends only on n, so launcher and ranks
 * agree on it. */
#include "shm_layout.h"
#include "transport.h"

/* Ring sizes shrink with the job so that N^2 channels stay affordable. */
static void shm_geometry(int n, uint32_t *ncells, uint32_t *dbytes)
{
    *ncells = n <= 32 ? 64 : n <= 128 ? 32 : n <= 256 ? 16 : 8;
    *dbytes = n <= 16 ? 64 * 1024 : n <= 64 ? 32 * 1024 : n <= 256 ? 8 * 1024 : 4 * 1024;
}

static size_t chan_stride(uint32_t ncells, uint32_t dbytes)
{
    return sizeof(shm_chan) + (size_t)ncells * CELL + dbytes;
}

size_t cr_shm_region_size(int n)
{
    uint32_t nc, db;
    shm_geometry(n, &nc, &db);
    return sizeof(shm_region) + (size_t)n * n * chan_stride(nc, db);
}

void cr_shm_region_init(void *region, int n)
{
    shm_region *r = region;
    shm_geometry(n, &r->ncells, &r->dbytes);
    r->nranks = (uint32_t)n;
    r->chan_stride = chan_stride(r->ncells, r->dbytes);
}
