/* MPI environment and errors: Init/Finalize, thread levels, timers, version,
 * error handlers, error strings and classes.
 *
 * Invariants:
 *  - every call that needs the library initialized goes through mpi_enter,
 *    which ends the job with one clear line when MPI_Init was not called or
 *    MPI_Finalize already was;
 *  - the thread level asked is the level provided, MPI_THREAD_MULTIPLE
 *    included (the engine lock is then taken by every call: cr_multi_begin),
 *    except under courier run --sim, which models a rank's calls as one
 *    node's sequence: there at most MPI_THREAD_FUNNELED; the main thread is
 *    the one that called MPI_Init or MPI_Init_thread;
 *  - an error is reported exactly once, by mpi_fail, on the communicator the
 *    call names (COMM_WORLD when it names none or a bad one): fatal handlers
 *    end the job with one line naming call, rank and reason (MPI_ERRORS_ABORT
 *    as MPI_Abort does, the error code its exit status); MPI_ERRORS_RETURN
 *    returns the code; a user handler is called without the engine lock;
 *  - each predefined error code is its own class, and MPI_Error_string
 *    describes it; codes the program adds (MPI_Add_error_class/code) are
 *    numbered from MPI_ERR_LASTCODE + 1 up, each with its class and string,
 *    and job->mpi->last_code (MPI_LASTUSEDCODE) is the highest of them. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_check.h"
#include "mpi_impl.h"
#include "mpi_tool.h"

/* Referred to by every program compiled with courier's mpi.h (its link guard). */
const int courier_mpi_h_needs_libcourier = 1;

mpi_state *mpi_state_new(cr_job *job)
{
    mpi_state *m = calloc(1, sizeof *m);
    if (!m) cr_fatal(job, "MPI", "out of memory for the interface's state");
    m->last_code = MPI_ERR_LASTCODE;
    /* MPI_Initialized, in another thread, reads the pointer without the lock */
    __atomic_store_n(&job->mpi, m, __ATOMIC_RELEASE);
    return m;
}

static void mpi_init_common(cr_job *job)
{
    mpi_state *m = mpi_state_get(job);
    __atomic_store_n(&m->inited, true, __ATOMIC_RELEASE); /* MPI_Initialized reads it unlocked */
    mpi_types_init(job);
    mpi_comms_init(job);
    mpi_requests_init(job);
    mpi_check_init(job);
}

void mpi_enter_refused(cr_job *job, const char *call)
{
    if (!job->mpi || !job->mpi->inited)
        cr_fatal(job, call,
                 "MPI_Init has not been called: call MPI_Init (or MPI_Init_thread) "
                 "before any other MPI function");
    cr_fatal(job, call, "called after MPI_Finalize: no MPI call is allowed after it");
}

static const char *const err_text[] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid reduce operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument of some other kind",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated on receive",
    [MPI_ERR_OTHER] = "known error not in this list",
    [MPI_ERR_INTERN] = "internal MPI (implementation) error",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_KEYVAL] = "invalid keyval",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_BASE] = "invalid base passed to MPI_Free_mem",
    [MPI_ERR_INFO] = "invalid info argument",
    [MPI_ERR_NOT_SAME] = "collective argument not identical on all processes",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported by courier",
    [MPI_ERR_INFO_KEY] = "invalid info key (empty or longer than MPI_MAX_INFO_KEY)",
    [MPI_ERR_INFO_VALUE] = "invalid info value (empty or longer than MPI_MAX_INFO_VAL)",
    [MPI_ERR_INFO_NOKEY] = "key not in the info object",
    [MPI_ERR_WIN] = "invalid window",
    [MPI_ERR_SIZE] = "invalid size",
    [MPI_ERR_DISP] = "invalid displacement unit",
    [MPI_ERR_LOCKTYPE] = "invalid lock type",
    [MPI_ERR_ASSERT] = "invalid assertion",
    [MPI_ERR_RMA_CONFLICT] = "conflicting accesses to a window",
    [MPI_ERR_RMA_SYNC] = "one-sided call outside an access or exposure epoch, or epochs misused",
    [MPI_ERR_RMA_RANGE] = "target memory outside the window",
    [MPI_ERR_RMA_ATTACH] = "memory cannot be attached to the window",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared among the window's processes",
    [MPI_ERR_RMA_FLAVOR] = "wrong window flavor for this call",
    /* MPI-IO (mpi_file*.c) */
    [MPI_ERR_FILE] = "invalid file handle",
    [MPI_ERR_AMODE] = "invalid access mode",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "unsupported data representation",
    [MPI_ERR_NO_SUCH_FILE] = "file does not exist",
    [MPI_ERR_FILE_EXISTS] = "file exists",
    [MPI_ERR_BAD_FILE] = "invalid file name",
    [MPI_ERR_ACCESS] = "permission denied",
    [MPI_ERR_NO_SPACE] = "not enough space",
    [MPI_ERR_QUOTA] = "quota exceeded",
    [MPI_ERR_READ_ONLY] = "read-only file or file system",
    [MPI_ERR_FILE_IN_USE] = "file in use by some process",
    [MPI_ERR_DUP_DATAREP] = "data representation already registered",
    [MPI_ERR_CONVERSION] = "error in a user data conversion function",
    [MPI_ERR_IO] = "other I/O error",
    [MPI_ERR_PROC_ABORTED] = "a process the operation needs has aborted",
    [MPI_ERR_SESSION] = "invalid session",
    [MPI_ERR_VALUE_TOO_LARGE] = "a value is too large to be stored in the output argument",
    [MPI_ERR_ERRHANDLER] = "invalid error handler",
    [MPI_ERR_ABI] = "the Fortran ABI given is not this library's",
    /* dynamic processes (mpi_dyn.c) */
    [MPI_ERR_PORT] = "invalid port name",
    [MPI_ERR_NAME] = "service name not published",
    [MPI_ERR_SERVICE] = "service name could not be published or unpublished",
    [MPI_ERR_SPAWN] = "could not spawn processes",
};
#define NERR ((int)(sizeof err_text / sizeof *err_text))

static const char *err_name(int code)
{
    static const char *const names[] = {
        "MPI_SUCCESS", "MPI_ERR_BUFFER", "MPI_ERR_COUNT", "MPI_ERR_TYPE", "MPI_ERR_TAG",
        "MPI_ERR_COMM", "MPI_ERR_RANK", "MPI_ERR_REQUEST", "MPI_ERR_ROOT", "MPI_ERR_GROUP",
        "MPI_ERR_OP", "MPI_ERR_TOPOLOGY", "MPI_ERR_DIMS", "MPI_ERR_ARG", "MPI_ERR_UNKNOWN",
        "MPI_ERR_TRUNCATE", "MPI_ERR_OTHER", "MPI_ERR_INTERN", "MPI_ERR_IN_STATUS",
        "MPI_ERR_PENDING", "MPI_ERR_KEYVAL", "MPI_ERR_NO_MEM", "MPI_ERR_BASE", "MPI_ERR_INFO",
        "MPI_ERR_NOT_SAME", "MPI_ERR_UNSUPPORTED_OPERATION", "MPI_ERR_INFO_KEY",
        "MPI_ERR_INFO_VALUE", "MPI_ERR_INFO_NOKEY", "MPI_ERR_WIN", "MPI_ERR_SIZE", "MPI_ERR_DISP",
        "MPI_ERR_LOCKTYPE", "MPI_ERR_ASSERT", "MPI_ERR_RMA_CONFLICT", "MPI_ERR_RMA_SYNC",
        "MPI_ERR_RMA_RANGE", "MPI_ERR_RMA_ATTACH", "MPI_ERR_RMA_SHARED", "MPI_ERR_RMA_FLAVOR",
        /* MPI-IO */
        "MPI_ERR_FILE", "MPI_ERR_AMODE", "MPI_ERR_UNSUPPORTED_DATAREP", "MPI_ERR_NO_SUCH_FILE",
        "MPI_ERR_FILE_EXISTS", "MPI_ERR_BAD_FILE", "MPI_ERR_ACCESS", "MPI_ERR_NO_SPACE",
        "MPI_ERR_QUOTA", "MPI_ERR_READ_ONLY", "MPI_ERR_FILE_IN_USE", "MPI_ERR_DUP_DATAREP",
        "MPI_ERR_CONVERSION", "MPI_ERR_IO",
        /* MPI-4 */
        "MPI_ERR_PROC_ABORTED", "MPI_ERR_SESSION", "MPI_ERR_VALUE_TOO_LARGE", "MPI_ERR_ERRHANDLER",
        /* MPI-5 (59 unused) */
        "MPI_ERR_ABI", "MPI_ERR_UNKNOWN",
        /* dynamic processes */
        "MPI_ERR_PORT", "MPI_ERR_NAME", "MPI_ERR_SERVICE", "MPI_ERR_SPAWN"};
    _Static_assert(sizeof names / sizeof *names == NERR, "one name per error code");
    return code >= 0 && code < NERR ? names[code] : "MPI_ERR_UNKNOWN";
}

/* An error code the program added, or NULL. */
static struct mpi_ucode *ucode_get(int code)
{
    const mpi_state *m = mpi_st(); /* NULL: an error string asked before MPI_Init */
    return m && code > MPI_ERR_LASTCODE && code - MPI_ERR_LASTCODE - 1 < m->ucode.n &&
                   m->ucode.v[code - MPI_ERR_LASTCODE - 1].cls >= 0 /* -1: removed */
               ? &m->ucode.v[code - MPI_ERR_LASTCODE - 1]
               : NULL;
}

bool mpi_err_known(int code)
{
    return (code > MPI_SUCCESS && code < NERR) || ucode_get(code);
}

int mpi_fail(cr_job *job, MPI_Comm comm, const char *call, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mpi_vfail(job, comm, call, code, fmt, ap);
    va_end(ap);
    return rc;
}

int mpi_vfail(cr_job *job, MPI_Comm comm, const char *call, int code, const char *fmt, va_list ap)
{
    char msg[480];
    vsnprintf(msg, sizeof msg, fmt, ap);
    mpi_comm *c = mpi_comm_get(comm);
    if (!c) {
        comm = MPI_COMM_WORLD;
        c = mpi_comm_get(comm);
    }
    return mpi_fail_with(job, c ? c->errh : MPI_ERRORS_ARE_FATAL, &comm, call, code, msg);
}

/* The Fortran call that led to this error, in buf ("MPI_SEND (Fortran)",
 * "MPI_Send (mpi_f08)"), when a wrapper of the Fortran bindings
 * (libcourier_fort: mpif.h's and use mpi's mpi_send_, mpi_f08's
 * courier_f08_send) is on the stack: a Fortran programmer is told of the call
 * they wrote. Looked for only when an error ends the job (backtrace and
 * dladdr, a few microseconds), so the calls themselves pay nothing. */
static bool fortran_caller(const char *call, char *buf, size_t len)
{
    void *frames[32];
    int n = backtrace(frames, 32);
    for (int i = 1; i < n; i++) {
        Dl_info di;
        if (!dladdr(frames[i], &di) || !di.dli_sname || !di.dli_fname ||
            !strstr(di.dli_fname, "libcourier_fort"))
            continue;
        const char *s = di.dli_sname;
        size_t l = strlen(s);
        if (!strncmp(s, "courier_f08_", 12)) {           /* the C call's own spelling */
            if (strstr(call, "(mpi_f08)")) return false; /* said by the binding itself */
            snprintf(buf, len, "%s (mpi_f08)", call);
            return true;
        }
        bool p = !strncmp(s, "pmpi_", 5);
        if ((p || !strncmp(s, "mpi_", 4)) && l > 5u + p && s[l - 1] == '_') {
            while (l && s[l - 1] == '_') l--; /* mpi_send_ (gfortran), mpi_send__ */
            size_t k = 0;
            for (; k < l && k + 12 < len; k++) buf[k] = (char)toupper((unsigned char)s[k]);
            snprintf(buf + k, len - k, " (Fortran)");
            return true;
        }
    }
    return false;
}

/* Where the program made the call that ends in a fatal error: the first frame
 * on the stack outside libcourier's shared objects (libcourier, the Fortran
 * bindings), as mpi_where says it (" at prog.c:12 (main)"); "" when courier is
 * linked into the program (its frames cannot be told from the program's). */
static void program_caller(char *buf, size_t len)
{
    buf[0] = '\0';
    Dl_info self;
    if (!dladdr((void *)program_caller, &self) || !self.dli_fname ||
        !strstr(self.dli_fname, "libcourier"))
        return;
    void *frames[48];
    int n = backtrace(frames, 48);
    for (int i = 1; i < n; i++) {
        Dl_info di;
        if (!dladdr(frames[i], &di) || !di.dli_fname) continue;
        const char *base = strrchr(di.dli_fname, '/');
        base = base ? base + 1 : di.dli_fname;
        if (!strncmp(base, "libcourier", 10)) continue;
        mpi_where(frames[i], buf, len);
        return;
    }
}

int mpi_fail_with(cr_job *job, MPI_Errhandler h, int *obj, const char *call, int code,
                  const char *msg)
{
    if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_ABORT) {
        char fcall[96], what[160], at[PATH_MAX + 300];
        if (fortran_caller(call, fcall, sizeof fcall)) call = fcall;
        program_caller(at, sizeof at);
        struct mpi_ucode *u = ucode_get(code);
        if (u)
            snprintf(what, sizeof what, "error code %d: %s", code, u->text ? u->text : "");
        else
            snprintf(what, sizeof what, "%s", err_name(code));
        if (h == MPI_ERRORS_ARE_FATAL) cr_fatal(job, call, "%s (%s)%s", msg, what, at);
        /* MPI_ERRORS_ABORT, as MPI_Abort(obj, code): the code is the exit status */
        fflush(stdout);
        fprintf(stderr, "courier: rank %d: %s: %s (%s)%s: MPI_ERRORS_ABORT: ending every rank\n",
                job->rank, call, msg, what, at);
        fflush(stderr);
        cr_abort_exit(job, code);
    }
    if (h != MPI_ERRORS_RETURN) {
        int i = h_idx(h);
        const mpi_state *m = job->mpi;
        if (i >= 2 && i - 2 < m->errh.n && m->errh.fn[i - 2]) {
            MPI_Comm_errhandler_function *fn = m->errh.fn[i - 2];
            cr_unlock(job);
            fn(obj, &code, call, msg); /* a communicator's or a window's (both ints) */
            cr_lock(job);
        }
    }
    return code;
}

/* ---- init and finalize ------------------------------------------------------ */

PMPI_WEAK(Init);
int PMPI_Init(int *argc, char ***argv)
{
    int provided;
    return PMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

PMPI_WEAK(Init_thread);
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    cr_job *job = cr_job_get();
    cr_lock(job);
    mpi_state *m = mpi_state_get(job);
    if (m->inited && (m->finalized || m->mpi4.world))
        cr_fatal(job, "MPI_Init",
                 m->finalized ? "called after MPI_Finalize"
                              : "MPI is already initialized: call MPI_Init once");
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        cr_fatal(job, "MPI_Init_thread",
                 "required thread level %d is not one of "
                 "MPI_THREAD_SINGLE..MPI_THREAD_MULTIPLE",
                 required);
    m->mpi4.world = true;
    if (!m->inited) mpi_init_common(job); /* (else MPI_Session_init did) */
    job->must_call = "MPI_Finalize";
    /* Every level is provided as asked. MULTIPLE: from here on every call takes
     * the engine lock and each thread that waits makes progress itself (the
     * engine's waiting point lets the others in meanwhile). The lower levels
     * need nothing: their calls never overlap. Simulated, a rank is one
     * node's sequence of calls on one clock, which only the main thread's
     * compute moves (docs/sim.md): FUNNELED at most. */
    if (job->vt.base && required > MPI_THREAD_FUNNELED) required = MPI_THREAD_FUNNELED;
    m->thread_level = required;
    m->main_thread = pthread_self();
    if (required == MPI_THREAD_MULTIPLE) cr_multi_begin(job);
    mpi_dyn_init(job); /* a spawned job: its parent (MPI_Comm_get_parent) */
    if (provided) *provided = m->thread_level;
    return mpi_leave(job, MPI_SUCCESS);
}

void mpi_layer_up(cr_job *job)
{
    mpi_state *m = mpi_state_get(job);
    if (m->inited) return;
    mpi_init_common(job);
    m->thread_level = MPI_THREAD_SINGLE;
    m->main_thread = pthread_self();
}

PMPI_WEAK(Query_thread);
int PMPI_Query_thread(int *provided)
{
    cr_job *job = mpi_enter("MPI_Query_thread");
    if (!provided)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, "MPI_Query_thread", MPI_ERR_ARG,
                                       "provided is NULL"));
    *provided = job->mpi->thread_level;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Is_thread_main);
int PMPI_Is_thread_main(int *flag)
{
    cr_job *job = mpi_enter("MPI_Is_thread_main");
    if (!flag)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, "MPI_Is_thread_main", MPI_ERR_ARG, "flag is NULL"));
    *flag =
        pthread_equal(pthread_self(), job->mpi->main_thread) != 0; /* the one that called Init */
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Initialized);
int PMPI_Initialized(int *flag)
{
    /* any thread, any time (MPI-3.1 §12.4.3): without the lock */
    const mpi_state *m = __atomic_load_n(&cr_the_job.mpi, __ATOMIC_ACQUIRE);
    if (flag) *flag = m && __atomic_load_n(&m->inited, __ATOMIC_ACQUIRE);
    return MPI_SUCCESS;
}

PMPI_WEAK(Finalized);
int PMPI_Finalized(int *flag)
{
    const mpi_state *m = __atomic_load_n(&cr_the_job.mpi, __ATOMIC_ACQUIRE);
    if (flag) *flag = m && __atomic_load_n(&m->finalized, __ATOMIC_ACQUIRE);
    return MPI_SUCCESS;
}

PMPI_WEAK(Finalize);
int PMPI_Finalize(void)
{
    cr_job *job = mpi_enter("MPI_Finalize");
    /* First, as if MPI_COMM_SELF were freed: its attributes' delete callbacks
     * run while MPI is still usable (MPI-3.1 8.7.1). */
    int rc = mpi_comm_self_finalize(job);
    if (mpi_chk_on(job, MPI_CHK_LEAKS)) mpi_check_finalize(job); /* --check (mpi_check.c) */
    mpi_dyn_finalize(job); /* ports closed, names unpublished */
    /* Sends still under way complete at exit (cr_job_finalize drains them). */
    __atomic_store_n(&job->mpi->finalized, true, __ATOMIC_RELEASE);
    job->must_call = NULL;
    return mpi_leave(job, rc);
}

PMPI_WEAK(Abort);
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    cr_job *job = cr_job_get();
    (void)comm;
    fflush(stdout);
    fprintf(stderr, "courier: rank %d: MPI_Abort(%d): ending every rank\n", job->rank, errorcode);
    fflush(stderr);
    cr_abort_exit(job, errorcode);
}

PMPI_WEAK(Wtime);
double PMPI_Wtime(void)
{
    return (double)cr_timer_ns() * 1e-9;
}

PMPI_WEAK(Wtick);
double PMPI_Wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) == 0)
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    return 1e-9;
}

PMPI_WEAK(Get_processor_name);
int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (!name || !resultlen) return MPI_ERR_ARG;
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0) snprintf(name, 16, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = 0;
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

PMPI_WEAK(Get_version);
int PMPI_Get_version(int *version, int *subversion)
{
    if (version) *version = MPI_VERSION;
    if (subversion) *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

PMPI_WEAK(Get_library_version);
int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen) return MPI_ERR_ARG;
    *resultlen = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "courier (MPI %d.%d)",
                          MPI_VERSION, MPI_SUBVERSION);
    return MPI_SUCCESS;
}

/* MPI_Alloc_mem's blocks are shared memory (a memfd mapping) while a block
 * may become a window that same-host members can map: then MPI_Win_create over
 * it gives them loads and stores instead of a system call per transfer
 * (Graph500's one-sided BFS: 1-element MPI_Accumulate 18.6 -> 0.1 us, MPI_Put
 * 11.8 us -> 0.04). Each block holds a descriptor open, so at most AMEM_MAX at
 * a time; past that, and in a job of one rank or simulated, malloc's.
 * A freed block is kept (at most AMEM_SPARES of them, AMEM_SPARE_BYTES in
 * all) for the next allocation that fits it without wasting more than half: a fresh
 * block costs a memfd, a mapping and a page fault per page on first touch,
 * and its free an unmapping (ARMCI-MPI takes a buffer with MPI_Alloc_mem for
 * each scaled accumulate and frees it: 8 bytes 430 us a round before, against
 * Open MPI's 0.2). */
#define AMEM_MAX 64
#define AMEM_SPARES 8
#define AMEM_SPARE_BYTES ((size_t)64 << 20)

static void amem_drop(struct cr_mpi *m, int i)
{
    cr_shared_free(m->amem[i].p, &m->amem[i].sh);
    m->amem[i] = m->amem[--m->namem];
}

static void *amem_shared(cr_job *job, size_t len)
{
    struct cr_mpi *m = job->mpi;
    if (!job->host.base || job->size < 2 || job->vt.base) return NULL;
    int best = -1, spares = 0;
    for (int i = 0; i < m->namem; i++) {
        const struct mpi_amem *a = &m->amem[i];
        if (!a->spare) continue;
        spares++;
        if (a->len >= len && a->len - len <= a->len / 2 && (best < 0 || a->len < m->amem[best].len))
            best = i;
    }
    if (best >= 0) {
        m->amem[best].spare = false;
        return m->amem[best].p;
    }
    if (m->namem >= AMEM_MAX && spares) /* room for a new one: a spare goes */
        for (int i = 0; i < m->namem; i++)
            if (m->amem[i].spare) {
                amem_drop(m, i);
                break;
            }
    if (m->namem >= AMEM_MAX) return NULL;
    if (m->namem == m->amemcap) {
        int cap = m->amemcap ? 2 * m->amemcap : 8;
        struct mpi_amem *t = realloc(m->amem, (size_t)cap * sizeof *t);
        if (!t) return NULL;
        m->amem = t;
        m->amemcap = cap;
    }
    cr_shared sh;
    char *p = cr_shared_alloc(job, len, &sh);
    if (p) m->amem[m->namem++] = (struct mpi_amem){p, len, sh, false};
    return p;
}

bool mpi_amem_find(cr_job *job, const void *base, size_t len, cr_shared *sh)
{
    const struct cr_mpi *m = job->mpi;
    for (int i = 0; m && i < m->namem; i++) {
        const struct mpi_amem *a = &m->amem[i];
        if (!a->spare && (const char *)base >= a->p &&
            (size_t)((const char *)base - a->p) <= a->len &&
            len <= a->len - (size_t)((const char *)base - a->p)) {
            *sh = a->sh;
            sh->off = (uint64_t)((const char *)base - a->p);
            return true;
        }
    }
    return false;
}

PMPI_WEAK(Alloc_mem);
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    cr_job *job = mpi_enter("MPI_Alloc_mem");
    int rc = mpi_info_arg(job, MPI_COMM_WORLD, "MPI_Alloc_mem", info, true);
    if (rc) return mpi_leave(job, rc); /* hints: none changes how courier allocates */
    if (size < 0 || !baseptr)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, "MPI_Alloc_mem", MPI_ERR_ARG,
                                       size < 0 ? "size %ld is negative" : "baseptr is NULL%.0ld",
                                       (long)size));
    void *p = size ? amem_shared(job, (size_t)size) : NULL;
    if (!p) p = malloc(size ? (size_t)size : 1);
    if (!p)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, "MPI_Alloc_mem", MPI_ERR_NO_MEM,
                                       "cannot allocate %ld bytes", (long)size));
    *(void **)baseptr = p;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Free_mem);
int PMPI_Free_mem(void *base)
{
    cr_job *job = cr_job_get();
    struct cr_mpi *m = job->mpi;
    if (m && m->namem && base) {
        cr_lock(job);
        for (int i = 0; i < m->namem; i++)
            if (m->amem[i].p == base && !m->amem[i].spare) {
                int spares = 0;
                size_t kept = m->amem[i].len;
                for (int k = 0; k < m->namem; k++)
                    if (m->amem[k].spare) {
                        spares++;
                        kept += m->amem[k].len;
                    }
                if (kept <= AMEM_SPARE_BYTES && spares < AMEM_SPARES)
                    m->amem[i].spare = true; /* kept: amem_shared */
                else
                    amem_drop(m, i);
                cr_unlock(job);
                return MPI_SUCCESS;
            }
        cr_unlock(job);
    }
    free(base);
    return MPI_SUCCESS;
}

PMPI_WEAK(Pcontrol);
int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}

/* ---- error handlers ----------------------------------------------------------- */

bool mpi_errh_valid(MPI_Errhandler h)
{
    if (!h_is(h, K_ERRH)) return false;
    int i = h_idx(h);
    const mpi_state *m = mpi_st();
    return i < 2 || h == MPI_ERRORS_ABORT || (i - 2 < m->errh.n && m->errh.fn[i - 2]);
}

PMPI_WEAK(Comm_set_errhandler);
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler h)
{
    const char *call = "MPI_Comm_set_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (rc) return mpi_leave(job, rc);
    if (!mpi_errh_valid(h))
        return mpi_leave(job, mpi_fail(job, comm, call, MPI_ERR_ERRHANDLER,
                                       "error handler %#x is not a valid handler", (unsigned)h));
    c->errh = h;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_get_errhandler);
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *h)
{
    const char *call = "MPI_Comm_get_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (rc) return mpi_leave(job, rc);
    if (!h) return mpi_leave(job, mpi_fail(job, comm, call, MPI_ERR_ARG, "errhandler is NULL"));
    *h = c->errh;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_create_errhandler);
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *h)
{
    const char *call = "MPI_Comm_create_errhandler";
    cr_job *job = mpi_enter(call);
    if (!fn || !h)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "%s is NULL",
                                       fn ? "errhandler" : "function"));
    mpi_state *m = job->mpi;
    size_t n = (size_t)m->errh.n + 1;
    MPI_Comm_errhandler_function **t = realloc(m->errh.fn, n * sizeof *t);
    if (t) m->errh.fn = t;
    const void **at = t ? realloc(m->errh.at, n * sizeof *at) : NULL;
    if (at) m->errh.at = at;
    bool *freed = at ? realloc(m->errh.freed, n * sizeof *freed) : NULL;
    if (!freed) cr_fatal(job, call, "out of memory");
    m->errh.freed = freed;
    m->errh.fn[m->errh.n] = fn;
    m->errh.at[m->errh.n] = __builtin_return_address(0); /* for --check=leaks */
    m->errh.freed[m->errh.n] = false;
    *h = (MPI_Errhandler)(K_ERRH | (unsigned)(m->errh.n + 2));
    m->errh.n++;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_call_errhandler);
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    const char *call = "MPI_Comm_call_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_fail(job, comm, call, errorcode, "error %d raised by the program", errorcode);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Errhandler_free);
int PMPI_Errhandler_free(MPI_Errhandler *h)
{
    const char *call = "MPI_Errhandler_free";
    cr_job *job = mpi_enter(call);
    if (!h)
        return mpi_leave(job,
                         mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "errhandler is NULL"));
    if (!mpi_errh_valid(*h))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ERRHANDLER,
                                       "error handler %#x is not a valid handler", (unsigned)*h));
    /* Communicators may still use it: the function pointer stays. */
    if (h_idx(*h) >= 2 && *h != MPI_ERRORS_ABORT) job->mpi->errh.freed[h_idx(*h) - 2] = true;
    *h = MPI_ERRHANDLER_NULL;
    return mpi_leave(job, MPI_SUCCESS);
}

/* The user-code table is read under the engine lock once MPI is initialized
 * (another thread may be adding codes); the predefined texts need none. */
static cr_job *ucode_lock(void)
{
    const mpi_state *m = __atomic_load_n(&cr_the_job.mpi, __ATOMIC_ACQUIRE);
    if (!m || !__atomic_load_n(&m->inited, __ATOMIC_ACQUIRE)) return NULL;
    cr_job *job = cr_job_get();
    cr_lock(job);
    return job;
}

static void ucode_unlock(cr_job *job)
{
    if (job) cr_unlock(job);
}

PMPI_WEAK(Error_string);
int PMPI_Error_string(int code, char *string, int *resultlen)
{
    if (!string || !resultlen) return MPI_ERR_ARG;
    const char *t = code >= 0 && code < NERR ? err_text[code] : mpi_t_err_text(code);
    if (t) {
        const char *name = code >= 0 && code < NERR ? err_name(code) : mpi_t_err_name(code);
        *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", name, t);
        return MPI_SUCCESS;
    }
    cr_job *job = ucode_lock();
    struct mpi_ucode *u = ucode_get(code);
    if (u)
        *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", u->text ? u->text : "");
    else
        *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "unknown error code %d", code);
    ucode_unlock(job);
    return u ? MPI_SUCCESS : MPI_ERR_ARG;
}

PMPI_WEAK(Error_class);
int PMPI_Error_class(int code, int *errorclass)
{
    if (!errorclass) return MPI_ERR_ARG;
    if ((code >= 0 && code < NERR) || mpi_t_err_name(code)) { /* MPI_T's: mpi_tool.c */
        *errorclass = code;
        return MPI_SUCCESS;
    }
    cr_job *job = ucode_lock();
    struct mpi_ucode *u = ucode_get(code);
    if (u) *errorclass = u->cls;
    ucode_unlock(job);
    return u ? MPI_SUCCESS : MPI_ERR_ARG;
}

/* ---- error classes, codes and strings the program adds (MPI-3.1 §8.5) --------- */

static int ucode_add(cr_job *job, const char *call, int cls)
{
    mpi_state *m = job->mpi;
    if (m->last_code == INT32_MAX) cr_fatal(job, call, "no error code is left to add");
    if (m->ucode.n == m->ucode.cap) {
        int cap = m->ucode.cap ? 2 * m->ucode.cap : 16;
        struct mpi_ucode *v = realloc(m->ucode.v, (size_t)cap * sizeof *v);
        if (!v) cr_fatal(job, call, "out of memory for error codes");
        m->ucode.v = v;
        m->ucode.cap = cap;
    }
    int code = MPI_ERR_LASTCODE + 1 + m->ucode.n;
    struct mpi_ucode *c = ucode_get(cls); /* a class the program added */
    if (c) c->ncodes++;
    m->ucode.v[m->ucode.n++] = (struct mpi_ucode){.cls = cls < 0 ? code : cls, .text = NULL};
    m->last_code = code;
    return code;
}

PMPI_WEAK(Add_error_class);
int PMPI_Add_error_class(int *errorclass)
{
    const char *call = "MPI_Add_error_class";
    cr_job *job = mpi_enter(call);
    if (!errorclass)
        return mpi_leave(job,
                         mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "errorclass is NULL"));
    *errorclass = ucode_add(job, call, -1);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Add_error_code);
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    const char *call = "MPI_Add_error_code";
    cr_job *job = mpi_enter(call);
    struct mpi_ucode *u = ucode_get(errorclass);
    bool is_class = (errorclass >= 0 && errorclass < NERR) || (u && u->cls == errorclass);
    int rc = 0;
    if (!errorcode)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "errorcode is NULL");
    else if (!is_class)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "%d is not an error class: a predefined one (0..%d) or one made by "
                      "MPI_Add_error_class",
                      errorclass, NERR - 1);
    if (rc) return mpi_leave(job, rc);
    *errorcode = ucode_add(job, call, errorclass);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Add_error_string);
int PMPI_Add_error_string(int errorcode, const char *string)
{
    const char *call = "MPI_Add_error_string";
    cr_job *job = mpi_enter(call);
    struct mpi_ucode *u = ucode_get(errorcode);
    int rc = 0;
    if (!string)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "string is NULL");
    else if (!u)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "%d is not an error code or class added by the program (predefined ones "
                      "keep their strings)",
                      errorcode);
    else if (strlen(string) >= MPI_MAX_ERROR_STRING)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "the string has %zu characters: at most %d fit", strlen(string),
                      MPI_MAX_ERROR_STRING - 1);
    if (rc) return mpi_leave(job, rc);
    char *t = strdup(string);
    if (!t) cr_fatal(job, call, "out of memory");
    free(u->text);
    u->text = t;
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- MPI-4.1: removing what the program added (§9.5) ---------------------------
 * A removed code or class is marked (cls -1): every call then treats it as
 * unknown. Removed entries at the end of the table are dropped, so that their
 * numbers are given out again and MPI_LASTUSEDCODE goes back down to the
 * highest code still in use: a program that adds and removes codes in a loop
 * (the MPICH suite's errhan/adderr, 10,000 rounds of 192) keeps a small table.
 * Each class counts its codes, so that removing one costs no search. */

static int remove_common(const char *call, int code, int what)
{
    cr_job *job = mpi_enter(call);
    mpi_state *m = job->mpi;
    struct mpi_ucode *u = ucode_get(code);
    int rc = 0;
    if (!u)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "%d is not an error %s added by the program (or it was removed)", code,
                      what == 0 ? "class" : "code");
    else if (what == 0 && u->cls != code)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "%d is an error code, not a class: use MPI_Remove_error_code", code);
    else if (what == 1 && u->cls == code)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "%d is an error class: use MPI_Remove_error_class", code);
    else if (what == 2 && !u->text)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "error code %d has no string (MPI_Add_error_string) to remove", code);
    else if (what < 2 && u->text) /* MPI-4.1: the string goes first */
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "error %s %d still has a string: remove it first (MPI_Remove_error_string)",
                      what == 0 ? "class" : "code", code);
    for (int i = 0; !rc && what == 0 && u->ncodes && i < m->ucode.n; i++)
        if (m->ucode.v[i].cls == code && i != code - MPI_ERR_LASTCODE - 1)
            rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                          "error class %d still has code %d: remove its codes first", code,
                          MPI_ERR_LASTCODE + 1 + i);
    if (rc) return mpi_leave(job, rc);
    free(u->text);
    u->text = NULL;
    if (what < 2) {
        struct mpi_ucode *c = what == 1 ? ucode_get(u->cls) : NULL;
        if (c) c->ncodes--;
        u->cls = -1;
        while (m->ucode.n && m->ucode.v[m->ucode.n - 1].cls < 0) m->ucode.n--;
        m->last_code = MPI_ERR_LASTCODE + m->ucode.n;
    }
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Remove_error_class);
int PMPI_Remove_error_class(int errorclass)
{
    return remove_common("MPI_Remove_error_class", errorclass, 0);
}

PMPI_WEAK(Remove_error_code);
int PMPI_Remove_error_code(int errorcode)
{
    return remove_common("MPI_Remove_error_code", errorcode, 1);
}

PMPI_WEAK(Remove_error_string);
int PMPI_Remove_error_string(int errorcode)
{
    return remove_common("MPI_Remove_error_string", errorcode, 2);
}

/* ---- the MPI-1 names of error handler calls (deprecated, removed in MPI-3.0) ---- */

PMPI_WEAK(Errhandler_create);
int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_create_errhandler(function, errhandler);
}

PMPI_WEAK(Errhandler_set);
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}

PMPI_WEAK(Errhandler_get);
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_get_errhandler(comm, errhandler);
}
