/* Start-up under a PMIx process manager (Slurm's srun --mpi=pmix, Open MPI 5's
 * PRRTE, other resource managers) instead of courier run: the PMIx client
 * that pmi.c uses when the environment is PMIx's (PMIX_NAMESPACE, PMIX_RANK)
 * rather than PMI-2's. Rank, job size and appnum from PMIx_Init and PMIx_Get;
 * the key-value space through PMIx_Put (global scope), PMIx_Commit and one
 * PMIx_Fence that collects the data, then PMIx_Get of a rank's key.
 *
 * libpmix is loaded with dlopen, by the file name the build found (PMIX_LIBRARY,
 * e.g. libpmix.so.2; COURIER_PMIX_LIBRARY names another), as libpmi2 is: a job
 * started by courier run never loads it. The few types the calls take are
 * declared here; where the build saw libpmix's header (PMIX_HAVE_HEADER,
 * Debian's libpmix-dev) their layout and the prototypes are checked against it.
 *
 * Invariants: a cr_pmix lives as long as the process (the job's pmi holds it);
 * values are strings (pmi.c hex-encodes binary ones); every value PMIx_Get
 * hands out is released here. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "pmix.h"

#ifndef PMIX_LIBRARY
#error "PMIX_LIBRARY (libpmix's file name, e.g. libpmix.so.2) comes from the build"
#endif

#define PX_SUCCESS 0
#define PX_BOOL 1
#define PX_STRING 3
#define PX_UINT32 14
#define PX_GLOBAL 3
#define PX_RANK_WILDCARD (UINT32_MAX - 1)
#define PX_NSLEN 256  /* PMIX_MAX_NSLEN + 1 */
#define PX_KEYLEN 512 /* PMIX_MAX_KEYLEN + 1 */

typedef struct px_proc {
    char nspace[PX_NSLEN];
    uint32_t rank;
} px_proc;

typedef struct px_value {
    uint16_t type;
    union {
        bool flag;
        char *string;
        uint32_t uint32;
        unsigned char room[48]; /* libpmix's union is larger; it reads the member of type */
    } data;
} px_value;

typedef struct px_info {
    char key[PX_KEYLEN];
    uint32_t flags;
    px_value value;
} px_info;

typedef int (*px_init_fn)(px_proc *proc, px_info info[], size_t ninfo);
typedef int (*px_finalize_fn)(const px_info info[], size_t ninfo);
typedef int (*px_put_fn)(uint8_t scope, const char key[], px_value *val);
typedef int (*px_commit_fn)(void);
typedef int (*px_fence_fn)(const px_proc procs[], size_t nprocs, const px_info info[],
                           size_t ninfo);
typedef int (*px_get_fn)(const px_proc *proc, const char key[], const px_info info[], size_t ninfo,
                         px_value **val);
typedef void (*px_destruct_fn)(px_value *val);

#ifdef PMIX_HAVE_HEADER /* the build saw libpmix's pmix.h: check what we declare */
#include <pmix.h>
_Static_assert(PMIX_SUCCESS == PX_SUCCESS && PMIX_BOOL == PX_BOOL && PMIX_STRING == PX_STRING &&
                   PMIX_UINT32 == PX_UINT32 && PMIX_GLOBAL == PX_GLOBAL,
               "PMIx constants");
_Static_assert(PMIX_MAX_NSLEN + 1 == PX_NSLEN && PMIX_MAX_KEYLEN + 1 == PX_KEYLEN, "PMIx lengths");
_Static_assert(sizeof(pmix_proc_t) == sizeof(px_proc) &&
                   offsetof(pmix_proc_t, rank) == offsetof(px_proc, rank),
               "pmix_proc_t");
_Static_assert(offsetof(pmix_value_t, data) == offsetof(px_value, data) &&
                   sizeof(pmix_value_t) <= sizeof(px_value),
               "pmix_value_t");
_Static_assert(offsetof(pmix_info_t, flags) == offsetof(px_info, flags) &&
                   offsetof(pmix_info_t, value) == offsetof(px_info, value),
               "pmix_info_t");
#endif

struct cr_pmix {
    px_proc me;
    px_init_fn init;
    px_finalize_fn finalize;
    px_put_fn put;
    px_commit_fn commit;
    px_fence_fn fence;
    px_get_fn get;
    px_destruct_fn destruct;
};

bool cr_pmix_here(void)
{
    const char *ns = getenv("PMIX_NAMESPACE"), *rank = getenv("PMIX_RANK");
    return ns && *ns && rank && *rank;
}

/* A uint32 the process manager holds for proc (PMIx_Get), or -1. */
static long get_u32(cr_pmix *p, const px_proc *proc, const char *key)
{
    px_value *v = NULL;
    if (p->get(proc, key, NULL, 0, &v) != PX_SUCCESS || !v) return -1;
    long r = v->type == PX_UINT32 ? (long)v->data.uint32 : -1;
    p->destruct(v);
    free(v);
    return r;
}

cr_pmix *cr_pmix_start(cr_job *job, int *rank, int *size, int *appnum)
{
    job->rank = atoi(getenv("PMIX_RANK")); /* until PMIx_Init says (for errors) */
    const char *name = getenv("COURIER_PMIX_LIBRARY");
    if (!name || !*name) name = PMIX_LIBRARY;
    void *h = dlopen(name, RTLD_NOW | RTLD_GLOBAL); /* its plugins need its symbols */
    if (!h)
        cr_fatal(job, "init",
                 "started by a PMIx process manager (PMIX_NAMESPACE is set: srun --mpi=pmix, "
                 "prterun) but cannot load %s (%s); install libpmix (Debian: libpmix2) or name it "
                 "in COURIER_PMIX_LIBRARY, or start the program with courier run",
                 name, dlerror());
    cr_pmix *p = calloc(1, sizeof *p);
    if (!p) cr_fatal(job, "init", "out of memory");
    p->init = (px_init_fn)dlsym(h, "PMIx_Init");
    p->finalize = (px_finalize_fn)dlsym(h, "PMIx_Finalize");
    p->put = (px_put_fn)dlsym(h, "PMIx_Put");
    p->commit = (px_commit_fn)dlsym(h, "PMIx_Commit");
    p->fence = (px_fence_fn)dlsym(h, "PMIx_Fence");
    p->get = (px_get_fn)dlsym(h, "PMIx_Get");
    p->destruct = (px_destruct_fn)dlsym(h, "PMIx_Value_destruct");
    if (!p->init || !p->finalize || !p->put || !p->commit || !p->fence || !p->get || !p->destruct)
        cr_fatal(job, "init",
                 "%s lacks the PMIx calls courier needs (PMIx_Init, Put, Commit, Fence, Get, "
                 "Value_destruct, Finalize); name libpmix in COURIER_PMIX_LIBRARY",
                 name);
    int rc = p->init(&p->me, NULL, 0);
    if (rc != PX_SUCCESS)
        cr_fatal(job, "init",
                 "PMIx_Init failed (error %d; PMIX_NAMESPACE=%s): the process manager did not "
                 "answer; start the program with srun --mpi=pmix or courier run",
                 rc, getenv("PMIX_NAMESPACE"));
    px_proc all = p->me;
    all.rank = PX_RANK_WILDCARD;
    long n = get_u32(p, &all, "pmix.job.size");
    if (n < 1 || p->me.rank >= (uint32_t)n)
        cr_fatal(job, "init",
                 "PMIx_Get of the job's size (pmix.job.size) failed or says %ld for rank %u; the "
                 "process manager is broken",
                 n, p->me.rank);
    long app = get_u32(p, &p->me, "pmix.appnum");
    *rank = (int)p->me.rank;
    *size = (int)n;
    *appnum = app > 0 ? (int)app : 0;
    return p;
}

int cr_pmix_put(cr_pmix *p, const char *key, const char *value)
{
    px_value v = {.type = PX_STRING, .data.string = (char *)value};
    return p->put(PX_GLOBAL, key, &v);
}

int cr_pmix_fence(cr_pmix *p)
{
    int rc = p->commit();
    if (rc != PX_SUCCESS) return rc;
    px_info collect = {.key = "pmix.collect", .value = {.type = PX_BOOL, .data.flag = true}};
    return p->fence(NULL, 0, &collect, 1);
}

int cr_pmix_get(cr_pmix *p, int rank, const char *key, char *value, size_t len)
{
    px_proc who = p->me;
    who.rank = (uint32_t)rank;
    px_value *v = NULL;
    int rc = p->get(&who, key, NULL, 0, &v);
    if (rc != PX_SUCCESS) return rc;
    if (!v) return -1;
    rc = v->type == PX_STRING && v->data.string && strlen(v->data.string) < len ? PX_SUCCESS : -1;
    if (!rc) strcpy(value, v->data.string);
    p->destruct(v);
    free(v);
    return rc;
}

void cr_pmix_finalize(cr_pmix *p)
{
    p->finalize(NULL, 0);
}
