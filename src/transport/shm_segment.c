/* Creation-side of the shared-memory segment: its size and header for a job of
 * n ranks. Used by the launcher, which links none of the engine. Invariant: the
 * ring geometry depends only on n, so launcher and ranks agree on it. */
#include "shm_layout.h"
#include "transport.h"

/* Ring sizes shrink with the job so that N^2 channels stay affordable. */
static void shm_geometry(int n, uint32_t *ncells, uint32_t *dbytes)
{
    *ncells = n <= 32 ? 64 : n <= 128 ? 32 : n <= 256 ? 16 : 8;
    *dbytes = n <= 16 ? 64 * 1024 : n <= 64 ? 32 * 1024 : n <= 256 ? 8 * 1024 : 4 * 1024;
}

size_t cr_shm_chan_stride(uint32_t ncells, uint32_t dbytes)
{
    return sizeof(shm_chan) + (size_t)ncells * CELL + dbytes;
}

static size_t page_round(size_t x)
{
    return (x + 4095) & ~(size_t)4095;
}

/* One collective area: two lines per rank, then two slots per rank. */
static size_t coll_area_bytes(int n)
{
    if (n > COLL_MAX_RANKS) return 0;
    return page_round((size_t)n * 2 * (sizeof(cr_coll_line) + cr_shm_coll_slot(n)));
}

/* Bytes before the collective areas: header, rank records, status records. */
static size_t coll_offset(int n)
{
    return 4096 + page_round((size_t)n * sizeof(shm_rank)) +
           page_round((size_t)n * sizeof(shm_status));
}

/* Bytes before the first channel. */
size_t cr_shm_control_size(int n)
{
    return coll_offset(n) + CR_COLL_AREAS * coll_area_bytes(n);
}

size_t cr_shm_segment_size(int n)
{
    uint32_t nc, db;
    shm_geometry(n, &nc, &db);
    return cr_shm_control_size(n) + (size_t)n * n * cr_shm_chan_stride(nc, db);
}

void cr_shm_segment_init(void *base, int n)
{
    shm_head *hd = base;
    shm_geometry(n, &hd->ncells, &hd->dbytes);
    hd->nranks = (uint32_t)n;
    hd->rank_off = 4096;
    hd->status_off = 4096 + page_round((size_t)n * sizeof(shm_rank));
    hd->coll_off = coll_offset(n);
    hd->coll_bytes = coll_area_bytes(n);
    hd->chan_off = cr_shm_control_size(n);
    hd->chan_stride = cr_shm_chan_stride(hd->ncells, hd->dbytes);
    hd->total = cr_shm_segment_size(n);
    atomic_thread_fence(memory_order_release);
    hd->magic = SHM_MAGIC;
}
