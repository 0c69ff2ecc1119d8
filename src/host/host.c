/* The host segment (host.h): its layout for a job of n ranks, used by the
 * launcher that creates it, and each rank's view of it: doorbells, the status
 * board, the cards; the user's directory that the launcher's registry and
 * the ranks' links to other jobs share (cr_user_dir); and what the machine's
 * CPUs went to (a process's threads, the time no task used: cr_host_cpu_ns,
 * cr_host_unused_ns), by which a waiting rank tells other work beside its job, and the one
 * look of the host that its ranks share (cr_host_look_take). Invariants: the layout depends
 * only on n and the shm region's size, so launcher and ranks agree on it; a rank writes only its
 * own records (its rank record's pid/gone, its status, its card) besides the doorbells of the
 * peers it wakes, by compare-exchange only a claim slot a peer named to it (host.h), and the
 * host's look only while it holds it (taken by compare-exchange). */
#define _GNU_SOURCE
#include "contexts.h"
#include "host.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static size_t page_round(size_t x)
{
    return (x + 4095) & ~(size_t)4095;
}

/* One collective area: two lines per rank, then two slots per rank. */
/* peer_efd's entries: our duplicate of a peer's eventfd is fd + EFD_BASE */
enum { EFD_NONE, EFD_FAILED, EFD_BASE };

static size_t efd_bytes(int n)
{
    return page_round((size_t)(n > 0 ? n : 1) * sizeof(int));
}

static size_t coll_area_bytes(int n)
{
    if (n > CR_COLL_MAX_RANKS) return 0;
    return page_round((size_t)n * 2 * (sizeof(cr_coll_line) + cr_coll_slot(n)));
}

static size_t rank_off(void)
{
    return 4096;
}
static size_t status_off(int n)
{
    return rank_off() + page_round((size_t)n * sizeof(cr_host_rank));
}
static size_t card_off(int n)
{
    return status_off(n) + page_round((size_t)n * sizeof(cr_host_status));
}
static size_t coll_off(int n)
{
    return card_off(n) + page_round((size_t)n * sizeof(cr_host_card));
}

static size_t claim_off(int n)
{
    return coll_off(n) + CR_COLL_AREAS * coll_area_bytes(n);
}

size_t cr_host_control_size(int n)
{
    return claim_off(n) + page_round((size_t)n * CR_HOST_CLAIMS * sizeof(uint64_t));
}

size_t cr_host_segment_size(int n, size_t region_bytes)
{
    return cr_host_control_size(n) + page_round(region_bytes);
}

void *cr_host_segment_init(void *base, int n, size_t region_bytes, uint32_t flags)
{
    cr_host_head *hd = base;
    hd->nranks = (uint32_t)n;
    hd->flags = flags;
    hd->rank_off = rank_off();
    hd->status_off = status_off(n);
    hd->card_off = card_off(n);
    hd->coll_off = coll_off(n);
    hd->coll_bytes = coll_area_bytes(n);
    hd->claim_off = claim_off(n);
    hd->region_off = cr_host_control_size(n);
    hd->region_bytes = region_bytes;
    hd->total = cr_host_segment_size(n, region_bytes);
    atomic_thread_fence(memory_order_release);
    hd->magic = CR_HOST_MAGIC;
    return (char *)base + hd->region_off;
}

int cr_host_attach(cr_host *h, int fd, int rank, int size)
{
    cr_host_head probe;
    if (pread(fd, &probe, sizeof probe, 0) != (ssize_t)sizeof probe) return -EINVAL;
    if (probe.magic != CR_HOST_MAGIC || probe.nranks != (uint32_t)size) return -EINVAL;
    void *base = cr_ctx_map(fd, probe.total); /* (shared by contexts: contexts.h) */
    if (base == MAP_FAILED) return -errno;
    *h = (cr_host){.base = base, .len = probe.total, .rank = rank, .size = size, .hd = base};
    char *b = base;
    h->ranks = (cr_host_rank *)(b + h->hd->rank_off);
    h->status = (cr_host_status *)(b + h->hd->status_off);
    h->cards = (cr_host_card *)(b + h->hd->card_off);
    for (int k = 0; k < CR_COLL_AREAS && h->hd->coll_bytes; k++) {
        char *a = b + h->hd->coll_off + (size_t)k * h->hd->coll_bytes;
        h->coll[k].lines = (cr_coll_line *)a;
        h->coll[k].slots = (unsigned char *)a + (size_t)size * 2 * sizeof(cr_coll_line);
        h->coll[k].slot = cr_coll_slot(size);
    }
    h->others = (cr_host_others *)(b + CR_HOST_OTHERS_OFF);
    if (h->hd->claim_off) h->claims = (_Atomic uint64_t *)(b + h->hd->claim_off);
    h->region = b + h->hd->region_off;
    h->region_bytes = h->hd->region_bytes;
    /* zero pages, resident only for the peers this rank rings (a 16384-rank
     * simulated job would hold 1 GiB of them otherwise) */
    h->peer_efd =
        mmap(NULL, efd_bytes(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h->peer_efd == MAP_FAILED) {
        h->peer_efd = NULL;
        cr_ctx_unmap(base, probe.total);
        h->base = NULL;
        return -ENOMEM;
    }
    /* The sleepers' barrier (cr_host_kick), where the launcher chose it:
     * registering twice (contexts of one process) is harmless. */
    long mb = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    h->sleeper_barrier =
        (h->hd->flags & CR_HOST_SLEEPERS_FENCE) && mb > 0 && (mb & MEMBARRIER_CMD_GLOBAL_EXPEDITED);
    h->fenced_by_sleepers =
        h->sleeper_barrier &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    atomic_store(&h->ranks[rank].pid, (int32_t)getpid());
    return 0;
}

void cr_host_detach(cr_host *h)
{
    if (!h->base) return;
    atomic_store(&h->ranks[h->rank].gone, 1);
    for (int p = 0; p < h->size; p++)
        if (p != h->rank) cr_host_kick(h, p); /* a peer draining towards us must notice */
    cr_ctx_unmap(h->base, h->len);
    h->base = NULL;
    for (int p = 0; p < h->size; p++)
        if (h->peer_efd[p] >= EFD_BASE) close(h->peer_efd[p] - EFD_BASE);
    munmap(h->peer_efd, efd_bytes(h->size));
    h->peer_efd = NULL;
}

int cr_host_reserve(cr_host *h, const void *p, size_t len)
{
    (void)h;
    uintptr_t a = (uintptr_t)p, start = a & ~(uintptr_t)4095;
    if (madvise((void *)start, a + len - start, MADV_POPULATE_WRITE) == 0) return 0;
    return errno == EINVAL ? 0 : -errno; /* EINVAL: an older kernel */
}

void cr_host_touch(const void *p, size_t len, bool write)
{
    if (!len) return;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095, end = (uintptr_t)p + len;
    for (; a < end; a += 4096) {
        unsigned char *b = (unsigned char *)(a < (uintptr_t)p ? (uintptr_t)p : a);
        if (write)
            __atomic_fetch_or(b, 0, __ATOMIC_RELAXED); /* the same value: safe beside peers */
        else
            (void)__atomic_load_n(b, __ATOMIC_RELAXED);
    }
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

/* Our duplicate of peer's eventfd, made on first use; -1 when it cannot be had
 * (no pidfd_getfd before Linux 5.6, or not allowed: the peer is told). */
static int peer_efd(cr_host *h, int peer, int32_t efd)
{
    if (h->peer_efd[peer] >= EFD_BASE) return h->peer_efd[peer] - EFD_BASE;
    if (h->peer_efd[peer] == EFD_FAILED) return -1;
    int fd = -1;
    int pidfd = (int)syscall(SYS_pidfd_open, cr_host_pid(h, peer), 0);
    if (pidfd >= 0) {
        fd = (int)syscall(SYS_pidfd_getfd, pidfd, efd - 1, 0);
        close(pidfd);
    }
    if (fd < 0) {
        h->peer_efd[peer] = EFD_FAILED;
        atomic_store(&h->ranks[peer].efd_failed, 1);
        return -1;
    }
    h->peer_efd[peer] = fd + EFD_BASE;
    return fd;
}

void cr_host_ring(cr_host *h, int peer)
{
    cr_host_rank *r = &h->ranks[peer];
    atomic_fetch_add_explicit(&r->bell, 1, memory_order_seq_cst);
    futex(&r->bell, FUTEX_WAKE, INT_MAX, NULL);
    int32_t efd = atomic_load_explicit(&r->efd, memory_order_acquire);
    if (efd > 0 && peer != h->rank) {
        int fd = peer_efd(h, peer, efd);
        uint64_t one = 1;
        if (fd >= 0 && write(fd, &one, sizeof one) < 0) { /* full counter: it is awake anyway */
        }
    }
}

void cr_host_sleep_on_fd(cr_host *h, int fd)
{
    atomic_store_explicit(&h->ranks[h->rank].efd, fd + 1, memory_order_release);
}

#define SHORT_SLICE_NS 100000u /* the shortest slice Linux grants */
void cr_host_short_slice(bool shortened)
{
    cr_sched_attr attr = {.size = sizeof attr,
                          .policy = SCHED_OTHER,
                          .runtime = shortened ? SHORT_SLICE_NS : 0}; /* 0: the default slice */
    if (sched_getscheduler(0) != SCHED_OTHER) return;
    attr.nice = getpriority(PRIO_PROCESS, 0);
    syscall(SYS_sched_setattr, 0, &attr, 0);
}

uint64_t cr_host_clock_ns(clockid_t which)
{
    struct timespec ts;
    if (clock_gettime(which, &ts)) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cr_host_cpu_ns(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return 0;
    uint64_t sum = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char b[96];
        if (snprintf(path, sizeof path, "/proc/%d/task/%.12s/schedstat", (int)pid, e->d_name) >=
            (int)sizeof path)
            continue;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, b, sizeof b - 1);
        close(fd);
        if (n <= 0) continue;
        b[n] = 0;
        sum += strtoull(b, NULL, 10);
    }
    closedir(d);
    return sum;
}

bool cr_host_unused_ns(uint64_t *unused, unsigned *cpus)
{
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char b[512]; /* the first line: the whole machine's */
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0) return false;
    b[n] = 0;
    unsigned long long v[8];
    long hz = sysconf(_SC_CLK_TCK), online = sysconf(_SC_NPROCESSORS_ONLN);
    if (sscanf(b, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) != 8 ||
        hz <= 0 || online <= 0)
        return false;
    *unused = (v[3] + v[4] + v[7]) * (1000000000ull / (uint64_t)hz); /* idle, iowait, steal */
    *cpus = (unsigned)online;
    return true;
}

uint32_t cr_host_announce(cr_host *h)
{
    cr_host_rank *me = &h->ranks[h->rank];
    atomic_fetch_add_explicit(&me->sleepers, 1, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst); /* pairs with the fence in cr_host_kick */
    /* ... or with none there: a barrier on every CPU running a registered rank */
    if (h->sleeper_barrier) syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
    return atomic_load_explicit(&me->bell, memory_order_seq_cst);
}

void cr_host_wait(cr_host *h, uint32_t bell, long timeout_us)
{
    struct timespec ts = {timeout_us / 1000000, (timeout_us % 1000000) * 1000L};
    futex(&h->ranks[h->rank].bell, FUTEX_WAIT, bell, &ts);
}

void cr_host_unannounce(cr_host *h)
{
    atomic_fetch_sub_explicit(&h->ranks[h->rank].sleepers, 1, memory_order_seq_cst);
}

/* Write the rank's record under its sequence count (odd while it changes): a
 * reader copies it whole or tries again. A new spell only for a new block. */
static void report(cr_host *h, uint32_t blocked, const cr_waitinfo *w)
{
    cr_host_status *st = &h->status[h->rank];
    uint32_t q = atomic_load_explicit(&st->seq, memory_order_relaxed);
    atomic_store_explicit(&st->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    st->blocked = blocked;
    if (w) st->w = *w;
    if (blocked == 1) st->spells++;
    atomic_store_explicit(&st->seq, q + 2, memory_order_release);
}

void cr_host_report_wait(cr_host *h, const cr_waitinfo *w)
{
    report(h, w != NULL, w);
}

void cr_host_report_some(cr_host *h, const cr_waitinfo *w)
{
    report(h, CR_HOST_SOME, w); /* not a new spell: the rank runs */
}

void cr_host_report_busy(cr_host *h, int busy)
{
    atomic_store_explicit(&h->status[h->rank].busy, (uint32_t)busy, memory_order_release);
}

int cr_host_card_put(cr_host *h, const void *card, size_t len)
{
    if (len > CR_CARD_MAX) return -EMSGSIZE;
    cr_host_card *c = &h->cards[h->rank];
    memcpy(c->data, card, len);
    atomic_store_explicit(&c->ready, (uint32_t)len + 1, memory_order_release);
    return 0;
}

int cr_host_card_get(const cr_host *h, int peer, void *card, size_t *len)
{
    cr_host_card *c = &h->cards[peer];
    uint32_t r = atomic_load_explicit(&c->ready, memory_order_acquire);
    if (!r) return -EAGAIN;
    if (r - 1 > CR_CARD_MAX || r - 1 > *len) return -EMSGSIZE;
    memcpy(card, c->data, r - 1);
    *len = r - 1;
    return 0;
}

/* ---- the user's directory ------------------------------------------------- */

int cr_user_dir(char *dir, size_t len, bool create, unsigned forbid, char *why, size_t wlen)
{
    uid_t uid = geteuid();
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (xdg && xdg[0] == '/' && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid)
        snprintf(dir, len, "%s/courier", xdg);
    else
        snprintf(dir, len, "/tmp/courier-%u", (unsigned)uid);
    if (create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
        snprintf(why, wlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(dir, &st) < 0) {
        if (errno == ENOENT && !create) return 1;
        snprintf(why, wlen, "cannot look at %s: %s", dir, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode))
        snprintf(why, wlen, "%s is a symbolic link; remove it", dir);
    else if (!S_ISDIR(st.st_mode))
        snprintf(why, wlen, "%s is not a directory; remove it", dir);
    else if (st.st_uid != uid)
        snprintf(why, wlen, "%s belongs to uid %u, not to you; remove it or set XDG_RUNTIME_DIR",
                 dir, (unsigned)st.st_uid);
    else if (st.st_mode & forbid & 022)
        snprintf(why, wlen, "%s is writable by others (mode %03o); chmod 700 it", dir,
                 (unsigned)(st.st_mode & 0777));
    else if (st.st_mode & forbid)
        snprintf(why, wlen, "%s is readable by others (mode %03o); chmod 700 it", dir,
                 (unsigned)(st.st_mode & 0777));
    else
        return 0;
    return -1;
}

/* since is a time within span before now (0: none). Signed: another rank's
 * reading of the clock may be a little after ours. */
static bool fresh(uint64_t since, int64_t now, int64_t span)
{
    return since && now - (int64_t)since < span;
}

bool cr_host_look_take(cr_host_others *o, int64_t now, int64_t window_ns, int64_t stale_ns)
{
    uint64_t taking = atomic_load(&o->taking);
    if (fresh(atomic_load(&o->at), now, window_ns) || fresh(taking, now, stale_ns) ||
        !atomic_compare_exchange_strong(&o->taking, &taking, (uint64_t)now))
        return false;
    if (!fresh(atomic_load(&o->at), now, window_ns)) return true;
    atomic_store(&o->taking, 0); /* another rank looked meanwhile */
    return false;
}

void cr_host_look_done(cr_host_others *o, int64_t now, bool seen)
{
    atomic_store(&o->seen, seen);
    atomic_store(&o->at, (uint64_t)now);
    atomic_store(&o->taking, 0);
}
