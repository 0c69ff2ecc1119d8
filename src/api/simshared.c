/* The simulated mode's shared buffers (`courier run --sim MACHINE,shared=BYTES`),
 * a library of its own (libcourier_simshared.so, which --sim preloads into
 * every rank only when shared= is given: it replaces malloc, which no other
 * preload of courier's does, and a program built with AddressSanitizer must
 * keep its runtime's): malloc, calloc and realloc of BYTES or more, called from the
 * program (not from libcourier), return pages that every such allocation of the
 * process shares, as SimGrid SMPI's shared malloc does. A program whose ranks
 * each hold large buffers (an all-to-all's N blocks) is then simulated in the
 * memory of one buffer; what the buffers hold is meaningless (every rank writes
 * the same pages), so only a program that does not read its results back (a
 * benchmark) may use it.
 *
 * Invariants:
 *  - without COURIER_SIM_SHARED in the environment (a positive size), every
 *    call is libc's, found once by dlsym(RTLD_NEXT); the few allocations dlsym
 *    itself makes meanwhile come from a static area, never freed;
 *  - a shared allocation is a MAP_SHARED mapping of offset 0 of one memfd of
 *    SHARED_SPAN bytes (larger ones: that mapping repeated), recorded in a
 *    table of (address, length, holders) under a lock; free and realloc look a
 *    pointer up there first and hand the others to libc. The memfd's pages are
 *    created as they are touched: the process holds at most SHARED_SPAN of them;
 *  - ranks that run as contexts of one process (the default of --sim) share
 *    the mappings too: a rank's allocation takes a mapping of its length that
 *    it does not hold yet, whoever else holds it, and a mapping is unmapped
 *    when its last holder frees it. So a rank's live allocations never share an
 *    address (MPI may check that two buffers differ), while every rank's k-th
 *    buffer of a size is one mapping: 4096 ranks' two all-to-all buffers are 2
 *    mappings, not 8192, whose pages would each fault in once per mapping (21-54
 *    us a page on a virtual machine: docs/sim.md, "At scale"). The holder is
 *    the rank of COURIER_RANK (each context has its own environment);
 *  - calls from inside libcourier (its own buffers and per-peer tables, which
 *    must hold what they are given) are never shared. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "simshim.h"

#define SHARED_SPAN ((size_t)1 << 30) /* the memfd's size, a mapping's at most */
#define BOOT_BYTES 8192               /* for dlsym's own allocations */

typedef void *malloc_fn(size_t);
typedef void free_fn(void *);
typedef void *calloc_fn(size_t, size_t);
typedef void *realloc_fn(void *, size_t);

typedef struct span {
    uintptr_t at; /* 0: free slot; 1: deleted */
    size_t len;
    uint64_t seq;    /* the how-manieth mapping the process made */
    unsigned nwords; /* who's length in words */
    uint64_t *who;   /* which ranks hold it, a bit each (libc's memory) */
} span;

static struct {
    pthread_mutex_t lock;
    int state; /* 0: not looked; 1: looking (dlsym under way); 2: libc's only; 3: sharing */
    malloc_fn *real_malloc;
    free_fn *real_free;
    calloc_fn *real_calloc;
    realloc_fn *real_realloc;
    size_t min;               /* COURIER_SIM_SHARED */
    int fd;                   /* the memfd (-1: none yet) */
    uintptr_t lib_lo, lib_hi; /* libcourier's segments (0, 0: not found) */
    span *tab;                /* open addressing, a power of two slots */
    size_t cap, used;         /* slots, slots not free (live or deleted) */
    uint64_t made;            /* mappings made so far */
    size_t boot_used;
    _Alignas(16) char boot[BOOT_BYTES];
} sh = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static bool in_boot(const void *p)
{
    return (const char *)p >= sh.boot && (const char *)p < sh.boot + BOOT_BYTES;
}

static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (sh.boot_used + n > BOOT_BYTES) return NULL;
    void *p = sh.boot + sh.boot_used;
    sh.boot_used += n;
    return p; /* static storage: zero */
}

static int find_courier(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "/libcourier.so")) return 0;
    cr_shim_load_range(info, &sh.lib_lo, &sh.lib_hi);
    return 1;
}

/* Find libc's functions and read the threshold: once, the first call's. */
static void look(void)
{
    if (__atomic_load_n(&sh.state, __ATOMIC_ACQUIRE) >= 2) return;
    pthread_mutex_lock(&sh.lock);
    if (sh.state == 0) {
        sh.state = 1;
        sh.real_malloc = (malloc_fn *)dlsym(RTLD_NEXT, "malloc");
        sh.real_free = (free_fn *)dlsym(RTLD_NEXT, "free");
        sh.real_calloc = (calloc_fn *)dlsym(RTLD_NEXT, "calloc");
        sh.real_realloc = (realloc_fn *)dlsym(RTLD_NEXT, "realloc");
        const char *v = getenv("COURIER_SIM_SHARED");
        char *end;
        unsigned long long min = v ? strtoull(v, &end, 10) : 0;
        int state = 2;
        if (v && !*end && min > 0) {
            sh.min = (size_t)min;
            dl_iterate_phdr(find_courier, NULL);
            state = 3;
        }
        __atomic_store_n(&sh.state, state, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&sh.lock);
}

static size_t slot_of(const span *tab, size_t cap, uintptr_t at)
{
    size_t i = (size_t)((at >> 12) * 0x9e3779b97f4a7c15ull) & (cap - 1);
    while (tab[i].at && tab[i].at != at) i = (i + 1) & (cap - 1);
    return i;
}

/* The rank that calls: its environment's COURIER_RANK (0 without one). */
static unsigned caller_rank(void)
{
    const char *v = getenv("COURIER_RANK");
    long r = v ? strtol(v, NULL, 10) : 0;
    return r > 0 && r < (1L << 24) ? (unsigned)r : 0;
}

static bool holds(const span *e, unsigned r)
{
    return r / 64 < e->nwords && (e->who[r / 64] >> (r % 64) & 1);
}

/* Make r one of e's holders (under the lock): false when its set cannot grow. */
static bool hold(span *e, unsigned r)
{
    if (r / 64 >= e->nwords) {
        unsigned n = r / 64 + 1 > 2 * e->nwords ? r / 64 + 1 : 2 * e->nwords;
        uint64_t *w = sh.real_realloc(e->who, n * sizeof *w);
        if (!w) return false;
        memset(w + e->nwords, 0, (n - e->nwords) * sizeof *w);
        e->who = w;
        e->nwords = n;
    }
    e->who[r / 64] |= (uint64_t)1 << (r % 64);
    return true;
}

/* Record at, held by r (under the lock): false when the table cannot grow. */
static bool record(uintptr_t at, size_t len, unsigned r)
{
    if (2 * (sh.used + 1) > sh.cap) {
        size_t cap = sh.cap ? 2 * sh.cap : 1024;
        span *t =
            mmap(NULL, cap * sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (t == MAP_FAILED) return false;
        size_t live = 0;
        for (size_t i = 0; i < sh.cap; i++)
            if (sh.tab[i].at > 1) {
                t[slot_of(t, cap, sh.tab[i].at)] = sh.tab[i];
                live++;
            }
        if (sh.tab) munmap(sh.tab, sh.cap * sizeof *sh.tab);
        sh.tab = t;
        sh.cap = cap;
        sh.used = live;
    }
    span e = {.at = at, .len = len, .seq = sh.made++};
    if (!hold(&e, r)) return false;
    sh.tab[slot_of(sh.tab, sh.cap, at)] = e;
    sh.used++;
    return true;
}

/* The shared allocation at p (under the lock), NULL when p is not one. */
static span *find(const void *p)
{
    if (!sh.cap) return NULL;
    span *e = &sh.tab[slot_of(sh.tab, sh.cap, (uintptr_t)p)];
    return e->at ? e : NULL;
}

/* The length of the shared allocation at p, 0 when p is not one. */
static size_t length_of(const void *p)
{
    if (!__atomic_load_n(&sh.used, __ATOMIC_RELAXED)) return 0;
    pthread_mutex_lock(&sh.lock);
    span *e = find(p);
    size_t len = e ? e->len : 0;
    pthread_mutex_unlock(&sh.lock);
    return len;
}

/* The calling rank gives the shared allocation at p back: false when p is
 * not one. The mapping goes with its last holder. A rank that frees what
 * only others hold (another rank's pointer) gives back one of their holds. */
static bool release(const void *p)
{
    if (!__atomic_load_n(&sh.used, __ATOMIC_RELAXED)) return false;
    pthread_mutex_lock(&sh.lock);
    span *e = find(p);
    size_t unmap = 0;
    if (e) { /* (the rank is looked up only for shared pointers: free is hot) */
        unsigned r = caller_rank(), k = 0;
        if (holds(e, r))
            e->who[r / 64] &= ~((uint64_t)1 << (r % 64));
        else
            for (; k < e->nwords; k++)
                if (e->who[k]) {
                    e->who[k] &= e->who[k] - 1; /* its lowest holder */
                    break;
                }
        for (k = 0; k < e->nwords && !e->who[k]; k++) continue;
        if (k == e->nwords) { /* no holder left */
            unmap = e->len;
            sh.real_free(e->who);
            *e = (span){.at = 1};
        }
    }
    pthread_mutex_unlock(&sh.lock);
    if (unmap) munmap((void *)p, unmap);
    return e != NULL;
}

/* Whether a call of n bytes from caller is shared. */
static bool shares(size_t n, const void *caller)
{
    look();
    uintptr_t c = (uintptr_t)caller;
    return sh.state == 3 && n >= sh.min && !(c >= sh.lib_lo && c < sh.lib_hi);
}

/* n bytes of the shared pages: NULL when they cannot be made (then libc's). */
static void *shared_alloc(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (n + page - 1) & ~(page - 1);
    unsigned r = caller_rank();
    pthread_mutex_lock(&sh.lock);
    void *p = MAP_FAILED;
    span *oldest = NULL; /* of this length, not r's: the ranks' k-th buffers are one */
    for (size_t i = 0; i < sh.cap; i++) {
        span *e = &sh.tab[i];
        if (e->at > 1 && e->len == len && !holds(e, r) && (!oldest || e->seq < oldest->seq))
            oldest = e;
    }
    if (oldest && hold(oldest, r)) {
        pthread_mutex_unlock(&sh.lock);
        return (void *)oldest->at;
    }
    if (sh.fd < 0 && (sh.fd = memfd_create("courier-sim-shared", MFD_CLOEXEC)) >= 0 &&
        ftruncate(sh.fd, (off_t)SHARED_SPAN)) {
        close(sh.fd);
        sh.fd = -1;
    }
    if (sh.fd >= 0 && len <= SHARED_SPAN) {
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sh.fd, 0);
    } else if (sh.fd >= 0) { /* the span over and over */
        p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        for (size_t off = 0; p != MAP_FAILED && off < len; off += SHARED_SPAN) {
            size_t l = len - off < SHARED_SPAN ? len - off : SHARED_SPAN;
            if (mmap((char *)p + off, l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, sh.fd,
                     0) == MAP_FAILED) {
                munmap(p, len);
                p = MAP_FAILED;
            }
        }
    }
    if (p != MAP_FAILED && !record((uintptr_t)p, len, r)) {
        munmap(p, len);
        p = MAP_FAILED;
    }
    pthread_mutex_unlock(&sh.lock);
    return p == MAP_FAILED ? NULL : p;
}

void *malloc(size_t n)
{
    if (__atomic_load_n(&sh.state, __ATOMIC_ACQUIRE) == 1) return boot_alloc(n);
    if (shares(n, __builtin_return_address(0))) {
        void *p = shared_alloc(n);
        if (p) return p;
    }
    return sh.real_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    if (__atomic_load_n(&sh.state, __ATOMIC_ACQUIRE) == 1)
        return n && k > SIZE_MAX / n ? NULL : boot_alloc(k * n);
    if (!(n && k > SIZE_MAX / n) && shares(k * n, __builtin_return_address(0))) {
        void *p = shared_alloc(k * n); /* what it holds is anyone's (above) */
        if (p) return p;
    }
    return sh.real_calloc(k, n);
}

void free(void *p)
{
    if (!p || in_boot(p)) return;
    look();
    if (!release(p)) sh.real_free(p);
}

void *realloc(void *p, size_t n)
{
    if (!p) return malloc(n);
    if (in_boot(p)) { /* dlsym's: copy it out (its length is not kept: the rest of boot) */
        void *q = malloc(n);
        size_t room = (size_t)(sh.boot + BOOT_BYTES - (char *)p);
        if (q) memcpy(q, p, n < room ? n : room);
        return q;
    }
    look();
    size_t len = length_of(p);
    bool share = shares(n, __builtin_return_address(0));
    if (!len && !share) return sh.real_realloc(p, n);
    void *q = share ? shared_alloc(n) : NULL;
    bool same = len && q; /* shared both: the same pages, nothing to copy */
    if (!q && !(q = sh.real_malloc(n))) return NULL;
    if (!same) {
        size_t old = len ? len : malloc_usable_size(p);
        memcpy(q, p, old < n ? old : n);
    }
    free(p);
    return q;
}
