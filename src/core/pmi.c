/* Start-up under a PMI-2 process manager (Slurm's srun --mpi=pmi2) or a PMIx
 * one (srun --mpi=pmix, prterun: its client is pmix.c) instead of courier run:
 * rank and size from PMI2_Init (PMIx_Init), the ranks' TCP addresses (cards)
 * and the job's secret through the key-value space (KVS), whichever of the two
 * the environment names (PMI_FD: PMI-2; PMIX_NAMESPACE: PMIx).
 *
 * Slurm's libpmi2 is loaded with dlopen, by the file name the build found
 * (PMI2_LIBRARY, e.g. libpmi2.so.0; COURIER_PMI2_LIBRARY names another), never
 * linked: a job started by courier run, the common case, must not pay for
 * loading and relocating a library it never calls (as with libcrypto,
 * src/transport/tcp_crypto.c). The library, not our own client of the wire
 * protocol over PMI_FD, because it is the process manager's own half of the
 * protocol: it matches the installed Slurm's version and quirks.
 *
 * Invariants:
 *  - everything lives in the job (job->pmi); the library is loaded at most once
 *    per process, by cr_pmi_start, and never unloaded;
 *  - the job's sequence is fixed: start (PMI2_Init), secret (rank 0 puts it),
 *    card put (tcp's open), one fence, secret get (the other ranks), then card
 *    gets at any time (tcp connects on first use); PMI2_Finalize runs at exit,
 *    after the job's own exit handler, which may still read cards;
 *  - values in the KVS are strings: binary cards and the secret travel as
 *    lowercase hex; the KVS is seen only by the processes of this job step, so
 *    the secret is as private as the launcher's sealed memfd makes it;
 *  - without a launcher the ranks of one machine make their host segment
 *    themselves (cr_pmi_host): the one the process manager calls its first
 *    (else the lowest, after one more fence) makes it in a memfd and the
 *    others take its descriptor with pidfd_getfd, so nothing is left in
 *    /dev/shm; all of that machine's ranks use it or none does (a rank that
 *    cannot take it says so, and they talk by tcp). Ranks on other machines
 *    reach each other by tcp. The ranks watch each other instead of the
 *    launcher (pmiwatch.c: a failed rank or a deadlock ends the step with
 *    courier run's lines). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine.h"
#include "pmi.h"
#include "pmiwatch.h"
#include "pmix.h"

#ifndef PMI2_LIBRARY
#error "PMI2_LIBRARY (libpmi2's file name, e.g. libpmi2.so.0) comes from the build"
#endif

#define PMI2_OK 0
#define PMI2_VALLEN 1024 /* PMI2_MAX_VALLEN */
#define PMI2_KEYLEN 64   /* PMI2_MAX_KEYLEN */

typedef int (*pmi2_init_fn)(int *spawned, int *size, int *rank, int *appnum);
typedef int (*pmi2_void_fn)(void);
typedef int (*pmi2_jobid_fn)(char jobid[], int jobid_size);
typedef int (*pmi2_put_fn)(const char key[], const char value[]);
typedef int (*pmi2_get_fn)(const char *jobid, int src_pmi_id, const char key[], char value[],
                           int maxvalue, int *vallen);

#ifdef PMI2_HAVE_HEADER /* the build saw Slurm's pmi2.h: check our prototypes against it */
#include <slurm/pmi2.h>
_Static_assert(__builtin_types_compatible_p(__typeof__(&PMI2_Init), pmi2_init_fn), "PMI2_Init");
_Static_assert(__builtin_types_compatible_p(__typeof__(&PMI2_KVS_Fence), pmi2_void_fn), "Fence");
_Static_assert(__builtin_types_compatible_p(__typeof__(&PMI2_Job_GetId), pmi2_jobid_fn), "GetId");
_Static_assert(__builtin_types_compatible_p(__typeof__(&PMI2_KVS_Put), pmi2_put_fn), "Put");
_Static_assert(__builtin_types_compatible_p(__typeof__(&PMI2_KVS_Get), pmi2_get_fn), "Get");
_Static_assert(PMI2_MAX_VALLEN == PMI2_VALLEN && PMI2_MAX_KEYLEN == PMI2_KEYLEN, "KVS sizes");
#endif

struct cr_pmi {
    pmi2_init_fn init;
    pmi2_void_fn finalize, fence;
    pmi2_jobid_fn job_getid;
    pmi2_put_fn put;
    pmi2_get_fn get;
    char jobid[256];
    bool fenced;
    cr_pmix *px; /* PMIx's client instead (pmix.c), or NULL: PMI-2 */
};

/* ---- helpers ------------------------------------------------------------ */

static void to_hex(char *out, const unsigned char *in, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * len] = 0;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decode hex into out (at most cap bytes): the byte count, or -1. */
static long from_hex(unsigned char *out, size_t cap, const char *in, size_t n)
{
    if (n % 2 || n / 2 > cap) return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_digit(in[2 * i]), lo = hex_digit(in[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return (long)(n / 2);
}

static void card_key(char key[PMI2_KEYLEN], int rank)
{
    snprintf(key, PMI2_KEYLEN, "courier-card-%d", rank);
}

static const char secret_key[] = "courier-secret";

static void pmi_exit(void)
{
    cr_pmi *p = cr_the_job.pmi;
    if (!p) return;
    if (p->px)
        cr_pmix_finalize(p->px);
    else
        p->finalize();
}

/* The key-value space, PMI-2's or PMIx's: PMI2_OK (0) or an error code. */
static const char *kvs(const cr_pmi *p)
{
    return p->px ? "PMIx" : "PMI-2";
}

static int kv_put(cr_pmi *p, const char *key, const char *value)
{
    return p->px ? cr_pmix_put(p->px, key, value) : p->put(key, value);
}

static int kv_fence(cr_pmi *p)
{
    return p->px ? cr_pmix_fence(p->px) : p->fence();
}

/* rank's value of key in value (len bytes), its length in *n. */
static int kv_get(cr_pmi *p, int rank, const char *key, char *value, size_t len, int *n)
{
    if (!p->px) return p->get(p->jobid, rank, key, value, (int)len, n);
    int rc = cr_pmix_get(p->px, rank, key, value, len);
    *n = rc ? -1 : (int)strlen(value);
    return rc;
}

/* What every start-up under a process manager does once rank and size are known. */
static void started(cr_job *job)
{
    /* Ranks on several nodes cannot reach each other at the loopback address,
     * tcp's default: say so now rather than fail to connect later. */
    const char *nodes = getenv("SLURM_STEP_NUM_NODES");
    const char *net = getenv("COURIER_NET");
    if (nodes && atoi(nodes) > 1 && (!net || !*net))
        cr_fatal(job, "init",
                 "srun started this job on %s nodes and COURIER_NET is not set, so the ranks "
                 "would publish 127.0.0.1; set COURIER_NET to the network the nodes share "
                 "(e.g. COURIER_NET=10.0.0.0/8 or COURIER_NET=eth0)",
                 nodes);
    /* Output goes to srun a line at a time, as under courier run. */
    setvbuf(stdout, NULL, _IOLBF, 0);
}

/* Under a PMIx server (srun --mpi=pmix, prterun): pmix.c. */
static bool start_pmix(cr_job *job)
{
    cr_pmi *p = calloc(1, sizeof *p);
    if (!p) cr_fatal(job, "init", "out of memory");
    int rank, size, appnum;
    p->px = cr_pmix_start(job, &rank, &size, &appnum);
    job->size = size;
    job->rank = rank;
    job->appnum = appnum;
    job->pmi = p;
    atexit(pmi_exit); /* registered before the job's own: runs after it */
    started(job);
    return true;
}

/* ---- start-up ----------------------------------------------------------- */

bool cr_pmi_start(cr_job *job)
{
    if (getenv("COURIER_RANK")) return false; /* courier run's environment wins */
    const char *fd = getenv("PMI_FD");
    bool pmi2 = fd && *fd && getenv("PMI_RANK") && getenv("PMI_SIZE");
    if (!pmi2 && cr_pmix_here()) return start_pmix(job);
    if (!pmi2) {
        /* srun without PMI-2 or PMIx (--mpi=none): every task would be a job
         * of one rank, all computing alone; say so instead. */
        const char *tasks = getenv("SLURM_STEP_NUM_TASKS");
        if (tasks && atoi(tasks) > 1 && !getenv("COURIER_SIZE")) {
            const char *id = getenv("SLURM_PROCID");
            job->rank = id ? atoi(id) : -1;
            cr_fatal(job, "init",
                     "srun started %s tasks without PMI-2 or PMIx (neither PMI_FD nor "
                     "PMIX_NAMESPACE is set), so each would run alone as a job of one rank; "
                     "start them with srun --mpi=pmi2 or --mpi=pmix (or MpiDefault in "
                     "slurm.conf), or with courier run",
                     tasks);
        }
        return false;
    }
    /* Until PMI2_Init says, the rank is the one in the environment (for errors). */
    job->rank = atoi(getenv("PMI_RANK"));
    const char *name = getenv("COURIER_PMI2_LIBRARY");
    if (!name || !*name) name = PMI2_LIBRARY;
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        cr_fatal(job, "init",
                 "started by a PMI-2 process manager (PMI_FD is set: srun --mpi=pmi2) but cannot "
                 "load %s (%s); install Slurm's PMI-2 library (Debian: libpmi2-0) or name it in "
                 "COURIER_PMI2_LIBRARY, or start the program with courier run",
                 name, dlerror());
    cr_pmi *p = calloc(1, sizeof *p);
    if (!p) cr_fatal(job, "init", "out of memory");
    p->init = (pmi2_init_fn)dlsym(h, "PMI2_Init");
    p->finalize = (pmi2_void_fn)dlsym(h, "PMI2_Finalize");
    p->fence = (pmi2_void_fn)dlsym(h, "PMI2_KVS_Fence");
    p->job_getid = (pmi2_jobid_fn)dlsym(h, "PMI2_Job_GetId");
    p->put = (pmi2_put_fn)dlsym(h, "PMI2_KVS_Put");
    p->get = (pmi2_get_fn)dlsym(h, "PMI2_KVS_Get");
    if (!p->init || !p->finalize || !p->fence || !p->job_getid || !p->put || !p->get)
        cr_fatal(job, "init",
                 "%s lacks the PMI-2 calls courier needs (PMI2_Init, PMI2_KVS_Put/Fence/Get, "
                 "PMI2_Job_GetId, PMI2_Finalize); name Slurm's libpmi2 in COURIER_PMI2_LIBRARY",
                 name);
    int spawned = 0, size = 0, rank = -1, appnum = 0;
    int rc = p->init(&spawned, &size, &rank, &appnum);
    if (rc != PMI2_OK || size < 1 || rank < 0 || rank >= size)
        cr_fatal(job, "init",
                 "PMI2_Init failed (error %d, rank %d of %d; PMI_FD=%s): the process manager "
                 "did not answer; start the program with srun --mpi=pmi2 or courier run",
                 rc, rank, size, fd);
    job->size = size;
    job->rank = rank;
    job->appnum = appnum > 0 ? appnum : 0;
    job->pmi = p;
    atexit(pmi_exit); /* registered before the job's own: runs after it */
    rc = p->job_getid(p->jobid, (int)sizeof p->jobid);
    if (rc != PMI2_OK)
        cr_fatal(job, "init", "PMI2_Job_GetId failed (error %d); the process manager is broken",
                 rc);
    started(job);
    return true;
}

void cr_pmi_secret(cr_job *job)
{
    cr_pmi *p = job->pmi;
    job->has_secret = true;
    if (job->rank != 0) return; /* filled by cr_pmi_fence */
    if (getrandom(job->secret, sizeof job->secret, 0) != (ssize_t)sizeof job->secret)
        cr_fatal(job, "init", "getrandom for the job's secret failed: %s", strerror(errno));
    char hex[2 * CR_SECRET_LEN + 1];
    to_hex(hex, job->secret, sizeof job->secret);
    int rc = kv_put(p, secret_key, hex);
    if (rc != PMI2_OK)
        cr_fatal(job, "init",
                 "putting the job's secret in the %s key-value space failed (error %d)", kvs(p),
                 rc);
}

int cr_pmi_card_put(cr_job *job, const void *card, size_t len)
{
    char key[PMI2_KEYLEN], hex[PMI2_VALLEN];
    if (2 * len + 1 > sizeof hex) return -EMSGSIZE;
    card_key(key, job->rank);
    to_hex(hex, card, len);
    int rc = kv_put(job->pmi, key, hex);
    return rc == PMI2_OK ? 0 : -EIO;
}

static void sync_all(cr_job *job, const char *what)
{
    int rc = kv_fence(job->pmi);
    if (rc != PMI2_OK)
        cr_fatal(job, "init",
                 "the %s fence for %s failed (error %d): a rank of this job step may have "
                 "ended before it started; see srun's messages",
                 kvs(job->pmi), what, rc);
}

void cr_pmi_fence(cr_job *job)
{
    cr_pmi *p = job->pmi;
    cr_pmiwatch_prepare(job); /* the ranks' own watchdog: rank 0 puts its address */
    sync_all(job, "the ranks' addresses");
    p->fenced = true;
    if (job->rank == 0) return;
    char hex[PMI2_VALLEN];
    int n = 0;
    int rc = kv_get(p, 0, secret_key, hex, sizeof hex, &n);
    if (rc != PMI2_OK || n < 0 || n >= (int)sizeof hex ||
        from_hex(job->secret, sizeof job->secret, hex, (size_t)n) != CR_SECRET_LEN)
        cr_fatal(job, "init",
                 "cannot read the job's secret from the %s key-value space (error %d, %d "
                 "bytes): rank 0 did not publish it; are all ranks courier programs of one "
                 "version?",
                 kvs(p), rc, n);
}

int cr_pmi_card_get(cr_job *job, int peer, void *card, size_t *len)
{
    cr_pmi *p = job->pmi;
    if (!p->fenced) return -EAGAIN;
    char key[PMI2_KEYLEN], hex[PMI2_VALLEN];
    card_key(key, peer);
    int n = 0;
    int rc = kv_get(p, peer, key, hex, sizeof hex, &n);
    long got =
        rc == PMI2_OK && n >= 0 && n < (int)sizeof hex ? from_hex(card, *len, hex, (size_t)n) : -1;
    if (got < 0)
        cr_fatal(job, "progress",
                 "cannot read rank %d's address from the %s key-value space (error %d, %d "
                 "bytes); every rank must open tcp (check COURIER_TRANSPORTS is the same for all)",
                 peer, kvs(p), rc, n);
    *len = (size_t)got;
    return 0;
}

int cr_pmi_put(cr_job *job, const char *key, const char *value)
{
    return kv_put(job->pmi, key, value) == PMI2_OK ? 0 : -1;
}

int cr_pmi_get(cr_job *job, int rank, const char *key, char *value, size_t len)
{
    cr_pmi *p = job->pmi;
    int n = 0;
    if (!p->fenced || len > PMI2_VALLEN) return -1;
    int rc = kv_get(p, rank, key, value, len, &n);
    if (rc != PMI2_OK || n < 0 || (size_t)n >= len) return -1;
    value[n] = '\0';
    return 0;
}

/* ---- the ranks of one machine: a host segment among them ----------------- */

/* What tells two ranks that one can map the other's memfd: the same kernel
 * (its boot id) and the same pid namespace (pidfd_open takes a pid of ours).
 * Empty when unknown: such a rank shares with none. */
static void machine_id(char *out, size_t len)
{
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f)) boot[0] = 0;
        fclose(f);
    }
    boot[strcspn(boot, "\n")] = 0;
    struct stat st;
    if (!boot[0] || stat("/proc/self/ns/pid", &st) != 0) {
        out[0] = 0;
        return;
    }
    snprintf(out, len, "%s-%llx", boot, (unsigned long long)st.st_ino);
}

static void put_rank_key(cr_job *job, const char *name, int rank, const char *value)
{
    char key[PMI2_KEYLEN];
    snprintf(key, sizeof key, "courier-%s-%d", name, rank);
    int rc = kv_put(job->pmi, key, value);
    if (rc != PMI2_OK)
        cr_fatal(job, "init", "putting %s in the %s key-value space failed (error %d)", key,
                 kvs(job->pmi), rc);
}

static void get_rank_key(cr_job *job, const char *name, int rank, char *value, size_t len)
{
    char key[PMI2_KEYLEN];
    snprintf(key, sizeof key, "courier-%s-%d", name, rank);
    int n = 0;
    int rc = kv_get(job->pmi, rank, key, value, len, &n);
    if (rc != PMI2_OK || n < 0 || (size_t)n >= len)
        cr_fatal(job, "init",
                 "cannot read %s from the %s key-value space (error %d): are all ranks "
                 "courier programs of one version?",
                 key, kvs(job->pmi), rc);
    value[n] = 0;
}

/* The leader's memfd, taken into this process (-1 with errno). A test makes
 * rank COURIER_TEST_TAKE_FAIL fail as a refused pidfd_getfd does. */
static int take_fd(cr_job *job, const char *where)
{
    int pid, fd;
    const char *t = getenv("COURIER_TEST_TAKE_FAIL");
    if (t && atoi(t) == job->rank) {
        errno = EPERM;
        return -1;
    }
    if (sscanf(where, "%d %d", &pid, &fd) != 2) {
        errno = EPROTO;
        return -1;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) return -1;
    int got = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    int e = errno;
    close(pidfd);
    if (got >= 0) fcntl(got, F_SETFD, FD_CLOEXEC);
    errno = e;
    return got;
}

/* The segment is laid out for the whole job (2 x size^2 inbox slots taken at
 * once): beyond courier run's own limit of ranks the machines do not share. */
#define SHARE_MAX_RANKS 4096

/* A CPU mask as hex, lowest byte first, up to its last non-zero byte ("-":
 * none), and back (ORed into *set; false when it is not one). */
static void mask_hex(char *out, const cpu_set_t *set)
{
    const unsigned char *b = (const unsigned char *)set;
    size_t len = sizeof *set;
    while (len && !b[len - 1]) len--;
    if (len)
        to_hex(out, b, len);
    else
        strcpy(out, "-");
}

static bool mask_or(cpu_set_t *set, const char *hex)
{
    unsigned char b[sizeof(cpu_set_t)];
    long n = from_hex(b, sizeof b, hex, strlen(hex));
    if (n <= 0) return false;
    for (long i = 0; i < n; i++) ((unsigned char *)set)[i] |= b[i];
    return true;
}

/* Whether the process manager says this rank is the first of its machine
 * (srun, Open MPI's mpirun, MPICH's hydra): it then makes the machine's
 * segment before the first fence, which saves one. */
static bool first_here(void)
{
    static const char *const vars[] = {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
                                       "MPI_LOCALRANKID"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return !strcmp(v, "0");
    }
    return false;
}

/* Make the machine's segment and say where it is ("PID FD"; "-": could not,
 * *err why). */
static int make_here(cr_job *job, uint32_t flags, char *where, size_t len, int *err)
{
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* Yama: let the others take it */
    size_t bytes;
    int fd = cr_shm_segment_make(job->size, flags, &bytes);
    *err = fd < 0 ? errno : 0;
    if (fd >= 0)
        snprintf(where, len, "%d %d", (int)getpid(), fd);
    else
        snprintf(where, len, "-");
    return fd;
}

int cr_pmi_host(cr_job *job, int *cpus, bool *same)
{
    int n = job->size, me = job->rank;
    if (n > SHARE_MAX_RANKS) return n;
    /* Each rank's machine, the CPUs it may use and, from a rank that the
     * process manager says is its machine's first, where the segment is:
     * "ID MASK WHERE" */
    char v[PMI2_VALLEN], id[128], mask[2 * sizeof(cpu_set_t) + 1] = "-", where[64] = "-";
    machine_id(id, sizeof id);
    cpu_set_t set, all;
    if (sched_getaffinity(0, sizeof set, &set) == 0) mask_hex(mask, &set);
    int fd = -1, err = 0;
    if (id[0] && first_here()) fd = make_here(job, 0, where, sizeof where, &err);
    snprintf(v, sizeof v, "%s %s %s", id[0] ? id : "-", mask, where);
    put_rank_key(job, "machine", me, v);
    sync_all(job, "the ranks' machines");
    /* host_of[p]: the lowest rank on p's machine; all: the CPUs of this
     * machine's ranks (each bound to CPUs of its own is no more ranks than
     * CPUs, whatever a rank's own mask says); maker: the lowest rank of this
     * machine that made a segment, whose where is used */
    CPU_ZERO(&all);
    bool masks = true;
    int maker = -1;
    char **ids = calloc((size_t)n, sizeof *ids);
    int *firsts = calloc((size_t)n, sizeof *firsts), nd = 0;
    int *count = calloc((size_t)n, sizeof *count), *made = calloc((size_t)n, sizeof *made);
    if (!ids || !firsts || !count || !made)
        cr_fatal(job, "init", "out of memory for %d ranks' machines", n);
    for (int p = 0; p < n; p++) {
        get_rank_key(job, "machine", p, v, sizeof v);
        char *m = strchr(v, ' '), *w = m ? strchr(m + 1, ' ') : NULL;
        if (m) *m++ = 0;
        if (w) *w++ = 0;
        job->host_of[p] = p;
        if (!strcmp(v, "-")) continue;
        if (!strcmp(v, id)) {
            masks = masks && m && mask_or(&all, m);
            if (maker < 0 && w && strcmp(w, "-")) {
                maker = p;
                snprintf(where, sizeof where, "%s", w);
            }
        }
        int k = 0;
        while (k < nd && strcmp(ids[firsts[k]], v)) k++;
        if (k == nd) {
            ids[p] = strdup(v);
            if (!ids[p]) cr_fatal(job, "init", "out of memory for %d ranks' machines", n);
            firsts[nd++] = p;
        }
        job->host_of[p] = firsts[k];
        count[k]++;
        made[k] |= w && strcmp(w, "-");
    }
    bool shared = false, unmade = false; /* (every rank knows them alike) */
    for (int k = 0; k < nd; k++) {
        free(ids[firsts[k]]);
        shared |= count[k] > 1;
        unmade |= count[k] > 1 && !made[k];
    }
    free(ids);
    free(firsts);
    free(count);
    free(made);
    *same = getenv("COURIER_CPUS") || (masks && CPU_COUNT(&all) > 0);
    if (masks && CPU_COUNT(&all) > 0 && !getenv("COURIER_CPUS")) *cpus = CPU_COUNT(&all);
    int lead = job->host_of[me], here = 0;
    for (int p = 0; p < n; p++) {
        here += job->host_of[p] == lead;
        job->hosts_differ |= job->host_of[p] != job->host_of[0];
    }
    if (fd >= 0 && (maker != me || here < 2)) { /* another's is used, or none */
        close(fd);
        fd = -1;
    }
    uint32_t flags = here <= *cpus ? CR_HOST_SLEEPERS_FENCE : 0;
    if (!shared) return here;

    /* Where no rank made one, the machine's lowest makes it after a fence. */
    if (unmade) {
        if (here > 1 && maker < 0 && me == lead) {
            fd = make_here(job, flags, where, sizeof where, &err);
            put_rank_key(job, "segment", me, where);
        }
        sync_all(job, "this machine's segment");
        if (here > 1 && maker < 0) {
            maker = lead;
            if (me != lead) get_rank_key(job, "segment", lead, where, sizeof where);
        }
    }
    /* The others take it, and all say whether they could. */
    if (here > 1 && me != maker) {
        fd = strcmp(where, "-") ? take_fd(job, where) : -1;
        err = fd < 0 ? (strcmp(where, "-") ? errno : err ? err : EIO) : 0;
    }
    if (here > 1 && me == maker && fd >= 0 && /* the head's flags, now that they are known */
        pwrite(fd, &flags, sizeof flags, offsetof(cr_host_head, flags)) != sizeof flags) {
        err = errno;
        close(fd);
        fd = -1;
    }
    if (here > 1) put_rank_key(job, "segment-ok", me, fd >= 0 ? "0" : strerror(err));
    sync_all(job, "this machine's segment");
    if (here < 2) return here;
    /* all of this machine's ranks use it, or none */
    int failed = -1;
    for (int p = lead; p < n && failed < 0; p++) {
        if (job->host_of[p] != lead) continue;
        get_rank_key(job, "segment-ok", p, v, sizeof v);
        if (strcmp(v, "0")) failed = p;
    }
    if (failed < 0) {
        int rc = cr_host_attach(&job->host, fd, me, n);
        if (rc)
            cr_fatal(job, "init", "cannot attach this machine's shared segment: %s", strerror(-rc));
        close(fd);
        return here;
    }
    if (me == lead)
        fprintf(stderr,
                "courier: rank %d: rank %d cannot share memory with the ranks on its machine "
                "(%s: %s); they talk by tcp\n",
                me, failed, failed == maker ? "making the segment" : "pidfd_getfd", v);
    if (fd >= 0) close(fd);
    for (int p = lead; p < n; p++)
        if (job->host_of[p] == lead) job->host_of[p] = p;
    return here;
}
