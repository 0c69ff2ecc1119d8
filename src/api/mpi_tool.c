/* The tools interface MPI_T (MPI-4.1 chapter 15): initialization, control
 * variables, enumerations, categories, sources and events (performance
 * variables: mpi_tool_pvar.c).
 *
 * The control variables are the COURIER_* settings of docs/run.md, named as
 * the environment names them, each with the value this rank took (the
 * environment's, else the default) as the reader of the setting takes it.
 * Written at run time, on this rank only, where the engine reads the value
 * anew at each use and no state depends on an earlier value:
 *  - COURIER_SPIN, COURIER_SPIN_MIN, COURIER_YIELD_US, COURIER_NAP_MS (scope
 *    LOCAL): the waiting point's bounds, read at each idle round or sleep
 *    (spin_floor <= spin_limit kept, as at start);
 *  - COURIER_UNEXPECTED_LIMIT (LOCAL): compared at each arrival; a lower limit
 *    only leaves later messages at their senders;
 *  - COURIER_COLL_ALG (ALL_EQ): read when a collective is built; every rank
 *    must write the same value between the same two collectives, as with the
 *    variable in the environment.
 * The others are read once at start (or by the launcher): scope CONSTANT,
 * MPI_T_ERR_CVAR_SET_NEVER.
 *
 * Invariants: the tables are constant and in the order of their indices
 * (cvars sorted by category only in the category lists); there are no event
 * types, so no event registration or instance handle can exist and every call
 * that takes one reports MPI_T_ERR_INVALID_HANDLE; one time source (index 0,
 * CLOCK_MONOTONIC in nanoseconds). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_nbc.h"
#include "mpi_tool.h"

/* ---- errors --------------------------------------------------------------- */

static const char *const t_err[][2] = {
    {"MPI_T_ERR_CANNOT_INIT", "the tools interface cannot be initialized"},
    {"MPI_T_ERR_NOT_ACCESSIBLE", "the variable or event is not accessible now"},
    {"MPI_T_ERR_NOT_INITIALIZED", "the tools interface is not initialized (MPI_T_init_thread)"},
    {"MPI_T_ERR_NOT_SUPPORTED", "not supported by courier's tools interface"},
    {"MPI_T_ERR_MEMORY", "out of memory in the tools interface"},
    {"MPI_T_ERR_INVALID", "invalid use of the tools interface or bad argument value"},
    {"MPI_T_ERR_INVALID_INDEX", "no variable, category, event or source has this index"},
    {"MPI_T_ERR_INVALID_ITEM", "no item of the enumeration has this index"},
    {"MPI_T_ERR_INVALID_SESSION", "invalid performance variable session"},
    {"MPI_T_ERR_INVALID_HANDLE", "invalid tools interface handle"},
    {"MPI_T_ERR_INVALID_NAME", "no variable, category or event has this name"},
    {"MPI_T_ERR_OUT_OF_HANDLES", "no more handles available"},
    {"MPI_T_ERR_OUT_OF_SESSIONS", "no more sessions available"},
    {"MPI_T_ERR_CVAR_SET_NOT_NOW", "the control variable cannot be set now"},
    {"MPI_T_ERR_CVAR_SET_NEVER", "the control variable cannot be set at run time"},
    {"MPI_T_ERR_PVAR_NO_WRITE", "the performance variable cannot be written or reset"},
    {"MPI_T_ERR_PVAR_NO_STARTSTOP", "the performance variable cannot be started or stopped"},
    {"MPI_T_ERR_PVAR_NO_ATOMIC", "the performance variable cannot be read and reset atomically"},
};
_Static_assert(sizeof t_err / sizeof *t_err == MPI_T_ERR_PVAR_NO_ATOMIC - MPI_T_ERR_CANNOT_INIT + 1,
               "one name per MPI_T error class");

const char *mpi_t_err_name(int code)
{
    return code >= MPI_T_ERR_CANNOT_INIT && code <= MPI_T_ERR_PVAR_NO_ATOMIC
               ? t_err[code - MPI_T_ERR_CANNOT_INIT][0]
               : NULL;
}
const char *mpi_t_err_text(int code)
{
    return mpi_t_err_name(code) ? t_err[code - MPI_T_ERR_CANNOT_INIT][1] : NULL;
}

/* ---- entry, strings ------------------------------------------------------- */

cr_job *mpi_t_enter(mpi_tool **t)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    *t = mpi_state_get(job)->tool;
    if (*t && (*t)->refs > 0) return job;
    cr_unlock(job);
    return NULL;
}

/* The usual opening of a call: the job, or return MPI_T_ERR_NOT_INITIALIZED. */
#define T_ENTER(job, t)                                                                            \
    mpi_tool *t;                                                                                   \
    cr_job *job = mpi_t_enter(&t);                                                                 \
    if (!job) return MPI_T_ERR_NOT_INITIALIZED

void mpi_t_str(char *buf, int *len, const char *s)
{
    if (!len) return;
    size_t n = strlen(s);
    if (!buf || *len <= 0) {
        *len = (int)n + 1;
        return;
    }
    if (n > (size_t)*len - 1) n = (size_t)*len - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    *len = (int)n + 1;
}

PMPI_WEAK(T_init_thread);
int PMPI_T_init_thread(int required, int *provided)
{
    if (!provided || required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return MPI_T_ERR_INVALID;
    cr_job *job = cr_job_get();
    cr_lock(job);
    mpi_state *m = mpi_state_get(job);
    if (!m->tool && !(m->tool = calloc(1, sizeof *m->tool))) {
        cr_unlock(job);
        return MPI_T_ERR_MEMORY;
    }
    m->tool->refs++;
    /* The lock is real only once several threads may call: a tool that asks
     * for MPI_THREAD_MULTIPLE (as MPI_Init_thread may) makes it so, also
     * before MPI_Init, and every call then takes the engine lock. Simulated,
     * FUNNELED at most, as MPI_Init_thread says. */
    if (job->vt.base && required > MPI_THREAD_FUNNELED) required = MPI_THREAD_FUNNELED;
    if (required == MPI_THREAD_MULTIPLE) cr_multi_begin(job);
    *provided = required;
    cr_unlock(job);
    return MPI_SUCCESS;
}

PMPI_WEAK(T_finalize);
int PMPI_T_finalize(void)
{
    T_ENTER(job, t);
    if (--t->refs == 0) { /* every handle is invalid from now on */
        mpi_t_sessions_free(job, t);
        while (t->cvars) {
            struct cr_mpit_cvar *h = t->cvars;
            t->cvars = h->next;
            free(h);
        }
    }
    return mpi_t_leave(job, MPI_SUCCESS);
}

/* ---- enumerations ----------------------------------------------------------- */

static const char *const coll_algs[] = {"auto",   "binomial", "pipeline", "recdbl", "rabenseifner",
                                        "ring",   "bruck",    "pairwise", "linear", "scatter",
                                        "direct", "split",    "window",   "area"};
#define NALGS ((int)(sizeof coll_algs / sizeof *coll_algs))

/* The one enumeration: COURIER_COLL_ALG's algorithms, item i of value i (the
 * handle is the address of the table, never written through). */
static MPI_T_enum alg_enum(void)
{
    return (MPI_T_enum)(uintptr_t)coll_algs;
}

PMPI_WEAK(T_enum_get_info);
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    T_ENTER(job, t);
    if (enumtype != alg_enum()) return mpi_t_leave(job, MPI_T_ERR_INVALID_HANDLE);
    if (num) *num = NALGS;
    mpi_t_str(name, name_len, "courier_coll_alg");
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_enum_get_item);
int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    T_ENTER(job, t);
    if (enumtype != alg_enum()) return mpi_t_leave(job, MPI_T_ERR_INVALID_HANDLE);
    if (index < 0 || index >= NALGS) return mpi_t_leave(job, MPI_T_ERR_INVALID_INDEX);
    if (value) *value = index;
    mpi_t_str(name, name_len, coll_algs[index]);
    return mpi_t_leave(job, MPI_SUCCESS);
}

/* ---- control variables --------------------------------------------------------- */

typedef enum { V_INT, V_ULL, V_STR, V_DBL } vkind;
typedef struct cvar_def {
    const char *name;
    vkind k;
    long dflt, lo, hi; /* V_INT, V_ULL: the default and the range the reader takes */
    int cat, scope;    /* scope: CONSTANT, or where it is written at run time */
    const char *desc;
} cvar_def;

enum {
    CV_EAGER,
    CV_UNEXP,
    CV_NO_CMA,
    CV_SPIN,
    CV_SPIN_MIN,
    CV_YIELD,
    CV_NAP,
    CV_TRANSPORTS,
    CV_NET,
    CV_COLL_ALG,
    CV_COLL_WINDOW,
    CV_NBC_THREAD,
    CV_RMA_NO_MAP,
    CV_TRACE_BUF,
    CV_IWARP_WORDS,
    CV_TEST_HOSTS,
    CV_TEST_CLAIM,
    CV_TEST_SHM_FULL,
    CV_TREE_FANOUT,
    CV_HEARTBEAT,
    CV_AGENT_TIMEOUT,
    CV_NO_SLURM,
    CV_HANG_TIMEOUT,
    CV_CHECK,
    NCVARS
};

#define C_ MPI_T_SCOPE_CONSTANT
#define L_ MPI_T_SCOPE_LOCAL
static const cvar_def cvars[NCVARS] = {
    [CV_EAGER] = {"COURIER_EAGER_LIMIT", V_INT, 16384, 0, INT_MAX, MPI_T_CAT_MSG, C_,
                  "largest message sent at once, bytes (a transport may take less)"},
    [CV_UNEXP] = {"COURIER_UNEXPECTED_LIMIT", V_ULL, 64L << 20, 0, LONG_MAX, MPI_T_CAT_MSG, L_,
                  "bytes of unasked-for messages this rank holds; over it they stay at "
                  "their senders (writable)"},
    [CV_NO_CMA] = {"COURIER_NO_CMA", V_INT, 0, 0, 1, MPI_T_CAT_MSG, C_,
                   "1: no single copy (process_vm_readv)"},
    [CV_SPIN] = {"COURIER_SPIN", V_INT, 0, 1, INT_MAX, MPI_T_CAT_WAIT, L_,
                 "most idle polls before a waiting rank yields (writable)"},
    [CV_SPIN_MIN] = {"COURIER_SPIN_MIN", V_INT, 16, 1, INT_MAX, MPI_T_CAT_WAIT, L_,
                     "fewest idle polls before a waiting rank yields (writable; at most "
                     "COURIER_SPIN)"},
    [CV_YIELD] = {"COURIER_YIELD_US", V_INT, 0, 0, INT_MAX, MPI_T_CAT_WAIT, L_,
                  "microseconds a waiting rank yields before it sleeps (writable)"},
    [CV_NAP] = {"COURIER_NAP_MS", V_INT, 100, 1, INT_MAX, MPI_T_CAT_WAIT, L_,
                "the longest a sleeping rank sleeps before it looks again: the net under a "
                "lost wake-up (writable)"},
    [CV_TRANSPORTS] = {"COURIER_TRANSPORTS", V_STR, 0, 0, 0, MPI_T_CAT_MSG, C_,
                       "the transports a rank may use, a comma list of self, shm, tcp, ucx "
                       "(empty: all that apply)"},
    [CV_NET] = {"COURIER_NET", V_STR, 0, 0, 0, MPI_T_CAT_MSG, C_,
                "where TCP listens: an address, address/prefix or interface (empty: "
                "127.0.0.1)"},
    [CV_COLL_ALG] = {"COURIER_COLL_ALG", V_INT, 0, 0, NALGS - 1, MPI_T_CAT_COLL, MPI_T_SCOPE_ALL_EQ,
                     "collective algorithm forced (auto: chosen per call); writable, the same "
                     "value on every rank between the same two collectives"},
    [CV_COLL_WINDOW] = {"COURIER_COLL_WINDOW", V_INT, 4, 1, 4096, MPI_T_CAT_COLL, C_,
                        "exchanges in flight in the window all-to-all"},
    [CV_NBC_THREAD] = {"COURIER_NBC_THREAD", V_INT, 1, 0, 1, MPI_T_CAT_COLL, C_,
                       "0: no progress thread for nonblocking collectives (unset: none with "
                       "more ranks than CPUs)"},
    [CV_RMA_NO_MAP] = {"COURIER_RMA_NO_MAP", V_INT, 0, 0, 1, MPI_T_CAT_MSG, C_,
                       "1: never map a peer's window"},
    [CV_TRACE_BUF] = {"COURIER_TRACE_BUF", V_INT, 16384, 16, 1L << 24, MPI_T_CAT_LAUNCH, C_,
                      "trace records buffered per rank"},
    [CV_IWARP_WORDS] = {"COURIER_IWARP_WORDS", V_INT, 0, 0, 1, MPI_T_CAT_LAUNCH, C_,
                        "1: the simulated iWarp model word by word"},
    [CV_TEST_HOSTS] = {"COURIER_TEST_HOSTS", V_INT, 1, 1, 4096, MPI_T_CAT_LAUNCH, C_,
                       "tests: pretend hosts on one machine"},
    [CV_TEST_CLAIM] = {"COURIER_TEST_CLAIM", V_STR, 0, 0, 0, MPI_T_CAT_MSG, C_,
                       "tests: which side of a cooperative copy takes its second half, "
                       "receiver or sender (empty: whichever claims it first)"},
    [CV_TEST_SHM_FULL] = {"COURIER_TEST_SHM_FULL_US", V_INT, 0, 0, 1000000, MPI_T_CAT_MSG, C_,
                          "tests: microseconds a shm send that finds the ring full waits "
                          "before it looks again"},
    [CV_TREE_FANOUT] = {"COURIER_TREE_FANOUT", V_INT, 32, 1, 4096, MPI_T_CAT_LAUNCH, C_,
                        "agents each node of the launch tree starts"},
    [CV_HEARTBEAT] = {"COURIER_HEARTBEAT_MS", V_INT, 200, 10, 60000, MPI_T_CAT_LAUNCH, C_,
                      "the launch tree's heartbeat, milliseconds"},
    [CV_AGENT_TIMEOUT] = {"COURIER_AGENT_TIMEOUT", V_INT, 30, 1, 3600, MPI_T_CAT_LAUNCH, C_,
                          "seconds an agent has to call back"},
    [CV_NO_SLURM] = {"COURIER_NO_SLURM", V_INT, 0, 0, 1, MPI_T_CAT_LAUNCH, C_,
                     "1: inside a Slurm allocation, run on this node only"},
    [CV_HANG_TIMEOUT] = {"COURIER_HANG_TIMEOUT", V_DBL, 5, 0, 0, MPI_T_CAT_LAUNCH, C_,
                         "seconds all ranks may be blocked before the watchdog ends the job "
                         "(0: no watch)"},
    [CV_CHECK] = {"COURIER_CHECK", V_STR, 0, 0, 0, MPI_T_CAT_LAUNCH, C_,
                  "the correctness checks: 0, 1, all, or a comma list of types, coll, leaks, "
                  "sync, buffers (courier run --check; docs/check.md)"},
};
#undef C_
#undef L_

/* The environment's number for d, or its default (out of range: the default,
 * as the launcher refused such a value before the rank started). */
static long env_num(const cvar_def *d)
{
    const char *v = getenv(d->name);
    if (!v || !*v) return d->dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < d->lo || x > d->hi ? d->dflt : x;
}

static MPI_Datatype cvar_type(const cvar_def *d)
{
    return d->k == V_INT   ? MPI_INT
           : d->k == V_ULL ? MPI_UNSIGNED_LONG_LONG
           : d->k == V_DBL ? MPI_DOUBLE
                           : MPI_CHAR;
}

#define STR_COUNT 256 /* characters of a string variable's value, with its NUL */

PMPI_WEAK(T_cvar_get_num);
int PMPI_T_cvar_get_num(int *num_cvar)
{
    T_ENTER(job, t);
    if (!num_cvar) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    *num_cvar = NCVARS;
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_cvar_get_info);
int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    T_ENTER(job, t);
    if (cvar_index < 0 || cvar_index >= NCVARS) return mpi_t_leave(job, MPI_T_ERR_INVALID_INDEX);
    const cvar_def *d = &cvars[cvar_index];
    mpi_t_str(name, name_len, d->name);
    mpi_t_str(desc, desc_len, d->desc);
    if (verbosity)
        *verbosity = d->scope == MPI_T_SCOPE_CONSTANT ? MPI_T_VERBOSITY_USER_DETAIL
                                                      : MPI_T_VERBOSITY_TUNER_BASIC;
    if (datatype) *datatype = cvar_type(d);
    if (enumtype) *enumtype = cvar_index == CV_COLL_ALG ? alg_enum() : MPI_T_ENUM_NULL;
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    if (scope) *scope = d->scope;
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_cvar_get_index);
int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    T_ENTER(job, t);
    if (!name || !cvar_index) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    for (int i = 0; i < NCVARS; i++)
        if (!strcmp(cvars[i].name, name)) {
            *cvar_index = i;
            return mpi_t_leave(job, MPI_SUCCESS);
        }
    return mpi_t_leave(job, MPI_T_ERR_INVALID_NAME);
}

PMPI_WEAK(T_cvar_handle_alloc);
int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    (void)obj_handle; /* every variable is bound to no object */
    T_ENTER(job, t);
    if (cvar_index < 0 || cvar_index >= NCVARS) return mpi_t_leave(job, MPI_T_ERR_INVALID_INDEX);
    if (!handle || !count) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    struct cr_mpit_cvar *h = malloc(sizeof *h);
    if (!h) return mpi_t_leave(job, MPI_T_ERR_MEMORY);
    h->idx = cvar_index;
    h->next = t->cvars;
    t->cvars = h;
    *handle = h;
    *count = cvars[cvar_index].k == V_STR ? STR_COUNT : 1;
    return mpi_t_leave(job, MPI_SUCCESS);
}

/* h's place in the list of live handles, or NULL: not one. */
static struct cr_mpit_cvar **cvar_find(mpi_tool *t, MPI_T_cvar_handle h)
{
    for (struct cr_mpit_cvar **p = &t->cvars; *p; p = &(*p)->next)
        if (*p == h && h) return p;
    return NULL;
}

PMPI_WEAK(T_cvar_handle_free);
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    T_ENTER(job, t);
    struct cr_mpit_cvar **p = handle ? cvar_find(t, *handle) : NULL;
    if (!p) return mpi_t_leave(job, MPI_T_ERR_INVALID_HANDLE);
    *p = (*handle)->next;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return mpi_t_leave(job, MPI_SUCCESS);
}

/* The value of a number variable as this rank holds it. */
static long long cvar_number(cr_job *job, int i)
{
    switch (i) {
    case CV_UNEXP:
        return (long long)job->unexp_limit;
    case CV_SPIN:
        return job->spin_limit;
    case CV_SPIN_MIN:
        return job->spin_floor;
    case CV_YIELD:
        return (long long)(job->yield_ns / 1000u);
    case CV_NAP:
        return job->nap_ms;
    case CV_COLL_ALG:
        return cr_coll_forced(job);
    case CV_NBC_THREAD: /* unset: it depends on the job */
        return mpi_nbc_thread_wanted(job);
    default:
        return env_num(&cvars[i]);
    }
}

PMPI_WEAK(T_cvar_read);
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    T_ENTER(job, t);
    if (!cvar_find(t, handle)) return mpi_t_leave(job, MPI_T_ERR_INVALID_HANDLE);
    if (!buf) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    int i = handle->idx;
    const cvar_def *d = &cvars[i];
    if (d->k == V_STR) {
        const char *v = getenv(d->name);
        int len = STR_COUNT;
        mpi_t_str(buf, &len, v ? v : "");
    } else if (d->k == V_DBL) { /* COURIER_HANG_TIMEOUT: seconds, as pmiwatch.c reads it */
        const char *v = getenv(d->name);
        char *end = NULL;
        double s = v && *v ? strtod(v, &end) : (double)d->dflt;
        *(double *)buf = end && (*end || !(s >= 0)) ? (double)d->dflt : s;
    } else if (d->k == V_ULL) {
        *(unsigned long long *)buf = (unsigned long long)cvar_number(job, i);
    } else {
        *(int *)buf = (int)cvar_number(job, i);
    }
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_cvar_write);
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    T_ENTER(job, t);
    if (!cvar_find(t, handle)) return mpi_t_leave(job, MPI_T_ERR_INVALID_HANDLE);
    if (!buf) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    int i = handle->idx;
    const cvar_def *d = &cvars[i];
    if (d->scope == MPI_T_SCOPE_CONSTANT) return mpi_t_leave(job, MPI_T_ERR_CVAR_SET_NEVER);
    long long v = d->k == V_ULL ? (long long)*(const unsigned long long *)buf : *(const int *)buf;
    if (v < d->lo || v > d->hi) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    switch (i) {
    case CV_UNEXP:
        job->unexp_limit = (size_t)v;
        break;
    case CV_SPIN: /* the waiting point keeps floor <= now <= limit */
        job->spin_limit = (unsigned)v;
        if (job->spin_floor > job->spin_limit) job->spin_floor = job->spin_limit;
        if (job->spin_now > job->spin_limit) job->spin_now = job->spin_limit;
        break;
    case CV_SPIN_MIN:
        job->spin_floor = (unsigned)v < job->spin_limit ? (unsigned)v : job->spin_limit;
        if (job->spin_now < job->spin_floor) job->spin_now = job->spin_floor;
        break;
    case CV_YIELD:
        job->yield_ns = (uint64_t)v * 1000u;
        break;
    case CV_NAP:
        job->nap_ms = (int)v;
        break;
    case CV_COLL_ALG:
        cr_coll_forced(job); /* read first, so that the environment never overrides it */
        job->coll_forced = (int)v + 1;
        break;
    default:
        return mpi_t_leave(job, MPI_T_ERR_CVAR_SET_NEVER);
    }
    return mpi_t_leave(job, MPI_SUCCESS);
}

/* ---- categories ------------------------------------------------------------------ */

static const char *const cats[MPI_T_NCAT][2] = {
    [MPI_T_CAT_ROOT] = {"courier", "courier's settings and counters (docs/run.md, docs/mpi.md)"},
    [MPI_T_CAT_MSG] = {"courier_messages",
                       "point-to-point messages: protocols, transports, queues, counters"},
    [MPI_T_CAT_WAIT] = {"courier_waiting", "how a rank waits, and the time it spends waiting"},
    [MPI_T_CAT_COLL] = {"courier_collectives", "the collectives' algorithms"},
    [MPI_T_CAT_LAUNCH] = {"courier_launch", "courier run, its agents, watchdog and trace"},
};

/* The cvars of category c (at most len of them into idx, which may be NULL); how many. */
static int cvars_of(int c, int len, int *idx)
{
    int n = 0;
    for (int i = 0; i < NCVARS; i++)
        if (cvars[i].cat == c) {
            if (idx && n < len) idx[n] = i;
            n++;
        }
    return n;
}

static int bad_cat(int c)
{
    return c < 0 || c >= MPI_T_NCAT;
}

PMPI_WEAK(T_category_get_num);
int PMPI_T_category_get_num(int *num_cat)
{
    T_ENTER(job, t);
    if (!num_cat) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    *num_cat = MPI_T_NCAT;
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_category_get_info);
int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    T_ENTER(job, t);
    if (bad_cat(cat_index)) return mpi_t_leave(job, MPI_T_ERR_INVALID_INDEX);
    mpi_t_str(name, name_len, cats[cat_index][0]);
    mpi_t_str(desc, desc_len, cats[cat_index][1]);
    if (num_cvars) *num_cvars = cvars_of(cat_index, 0, NULL);
    if (num_pvars) *num_pvars = mpi_t_pvars_of(cat_index, 0, NULL);
    if (num_categories) *num_categories = cat_index == MPI_T_CAT_ROOT ? MPI_T_NCAT - 1 : 0;
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_category_get_num_events);
int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    T_ENTER(job, t);
    if (bad_cat(cat_index)) return mpi_t_leave(job, MPI_T_ERR_INVALID_INDEX);
    if (!num_events) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    *num_events = 0;
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_category_get_index);
int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    T_ENTER(job, t);
    if (!name || !cat_index) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    for (int i = 0; i < MPI_T_NCAT; i++)
        if (!strcmp(cats[i][0], name)) {
            *cat_index = i;
            return mpi_t_leave(job, MPI_SUCCESS);
        }
    return mpi_t_leave(job, MPI_T_ERR_INVALID_NAME);
}

/* The lists of a category: which 0 cvars, 1 pvars, 2 events, 3 subcategories. */
static int cat_list(int which, int cat_index, int len, int *indices)
{
    T_ENTER(job, t);
    if (bad_cat(cat_index)) return mpi_t_leave(job, MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && !indices)) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    if (which == 0) cvars_of(cat_index, len, indices);
    if (which == 1) mpi_t_pvars_of(cat_index, len, indices);
    for (int i = 1; which == 3 && cat_index == MPI_T_CAT_ROOT && i < MPI_T_NCAT && i - 1 < len; i++)
        indices[i - 1] = i;
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_category_get_cvars);
int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return cat_list(0, cat_index, len, indices);
}
PMPI_WEAK(T_category_get_pvars);
int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return cat_list(1, cat_index, len, indices);
}
PMPI_WEAK(T_category_get_events);
int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    return cat_list(2, cat_index, len, indices);
}
PMPI_WEAK(T_category_get_categories);
int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    return cat_list(3, cat_index, len, indices);
}

PMPI_WEAK(T_category_changed);
int PMPI_T_category_changed(int *update_number)
{
    T_ENTER(job, t);
    if (!update_number) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    *update_number = 0; /* the categories never change */
    return mpi_t_leave(job, MPI_SUCCESS);
}

/* ---- sources ------------------------------------------------------------------ */

PMPI_WEAK(T_source_get_num);
int PMPI_T_source_get_num(int *num_sources)
{
    T_ENTER(job, t);
    if (!num_sources) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    *num_sources = 1;
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_source_get_info);
int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info)
{
    T_ENTER(job, t);
    if (source_index != 0) return mpi_t_leave(job, MPI_T_ERR_INVALID_INDEX);
    mpi_t_str(name, name_len, "courier_clock");
    mpi_t_str(desc, desc_len, "this rank's CLOCK_MONOTONIC, nanoseconds");
    if (ordering) *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second) *ticks_per_second = 1000000000;
    if (max_ticks) *max_ticks = LLONG_MAX;
    mpi_t_leave(job, MPI_SUCCESS);
    /* an info object of no hints, the caller's to free (the info calls lock) */
    return info && PMPI_Info_create(info) != MPI_SUCCESS ? MPI_T_ERR_MEMORY : MPI_SUCCESS;
}

PMPI_WEAK(T_source_get_timestamp);
int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    T_ENTER(job, t);
    if (source_index != 0) return mpi_t_leave(job, MPI_T_ERR_INVALID_INDEX);
    if (!timestamp) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    *timestamp = (MPI_Count)cr_mono_ns();
    return mpi_t_leave(job, MPI_SUCCESS);
}

/* ---- events: courier has no event types ------------------------------------------ */

PMPI_WEAK(T_event_get_num);
int PMPI_T_event_get_num(int *num_events)
{
    T_ENTER(job, t);
    if (!num_events) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    *num_events = 0;
    return mpi_t_leave(job, MPI_SUCCESS);
}

/* A call about event type 'index' (none exists) or a registration/instance
 * handle (none can exist). */
static int no_event(bool is_index)
{
    T_ENTER(job, t);
    return mpi_t_leave(job, is_index ? MPI_T_ERR_INVALID_INDEX : MPI_T_ERR_INVALID_HANDLE);
}

PMPI_WEAK(T_event_get_info);
int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    return no_event(true);
}

PMPI_WEAK(T_event_get_index);
int PMPI_T_event_get_index(const char *name, int *event_index)
{
    T_ENTER(job, t);
    if (!name || !event_index) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    return mpi_t_leave(job, MPI_T_ERR_INVALID_NAME);
}

PMPI_WEAK(T_event_handle_alloc);
int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    return no_event(true);
}

PMPI_WEAK(T_event_handle_set_info);
int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    (void)event_registration, (void)info;
    return no_event(false);
}

PMPI_WEAK(T_event_handle_get_info);
int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    (void)event_registration, (void)info_used;
    return no_event(false);
}

PMPI_WEAK(T_event_register_callback);
int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function event_cb_function)
{
    (void)event_registration, (void)cb_safety, (void)info, (void)user_data;
    (void)event_cb_function;
    return no_event(false);
}

PMPI_WEAK(T_event_callback_set_info);
int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    (void)event_registration, (void)cb_safety, (void)info;
    return no_event(false);
}

PMPI_WEAK(T_event_callback_get_info);
int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    (void)event_registration, (void)cb_safety, (void)info_used;
    return no_event(false);
}

PMPI_WEAK(T_event_handle_free);
int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function)
{
    (void)event_registration, (void)user_data, (void)free_cb_function;
    return no_event(false);
}

PMPI_WEAK(T_event_set_dropped_handler);
int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function)
{
    (void)event_registration, (void)dropped_cb_function;
    return no_event(false);
}

PMPI_WEAK(T_event_read);
int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    (void)event_instance, (void)element_index, (void)buffer;
    return no_event(false);
}

PMPI_WEAK(T_event_copy);
int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    (void)event_instance, (void)buffer;
    return no_event(false);
}

PMPI_WEAK(T_event_get_timestamp);
int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    (void)event_instance, (void)event_timestamp;
    return no_event(false);
}

PMPI_WEAK(T_event_get_source);
int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    (void)event_instance, (void)source_index;
    return no_event(false);
}
