/* MPI info objects (MPI-3.1 chapter 9) and the info hints of communicators
 * (MPI_Comm_set_info, MPI_Comm_get_info, MPI_Comm_dup_with_info).
 *
 * An info object is an ordered list of (key, value) strings: a key appears at
 * most once, and MPI_Info_get_nthkey gives the keys in the order they were
 * first set (setting an existing key replaces its value in place, deleting one
 * closes the gap). Handles are K_INFO | index into the job's table (job->mpi->infos); index
 * 0 is MPI_INFO_ENV, which is built on first use (command, argv, maxprocs,
 * host, arch, wdir: the same before MPI_Init as after) and is read-only: MPI_Info_set,
 * MPI_Info_delete and MPI_Info_free refuse it (MPI_ERR_INFO).
 *
 * Invariants:
 *  - keys are 1..MPI_MAX_INFO_KEY characters, values 1..MPI_MAX_INFO_VAL;
 *    longer or empty ones are refused (MPI_ERR_INFO_KEY / MPI_ERR_INFO_VALUE)
 *    and the object is left as it was;
 *  - a freed handle is detected on its next use (MPI_ERR_INFO); its slot is
 *    reused by later creations;
 *  - the info calls themselves work before MPI_Init and after MPI_Finalize
 *    (as MPI-4 allows): they take the engine lock, and an error outside Init..Finalize ends the
 * job;
 *  - a communicator's hints (mpi_comm.info) are an info handle the library
 *    owns, MPI_INFO_NULL when none was set; MPI_Comm_dup copies them and
 *    freeing the communicator frees them (mpi_topo_dup / mpi_topo_free). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_impl.h"

typedef struct info_ent {
    char *key, *val;
} info_ent;

typedef struct mpi_info {
    bool used;
    int n, cap;
    info_ent *e;
    const char *made_by; /* the program's: the call that made it (--check=leaks); NULL: ours */
    const void *at;      /* and where it was called from */
} mpi_info;

/* ---- table ------------------------------------------------------------------ */

static mpi_info *info_get(MPI_Info h)
{
    if (!h_is(h, K_INFO)) return NULL;
    int i = h_idx(h);
    mpi_state *m = mpi_st(); /* the info calls make it (ienter) */
    if (!m || i >= m->infos.n || !m->infos.t[i].used) return NULL;
    return &m->infos.t[i];
}

static void *xalloc(cr_job *job, const char *call, void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) cr_fatal(job, call, "out of memory for info objects");
    return p;
}

static char *xstrdup(cr_job *job, const char *call, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xalloc(job, call, NULL, n);
    memcpy(d, s, n);
    return d;
}

static int ent_find(const mpi_info *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (!strcmp(in->e[i].key, key)) return i;
    return -1;
}

static void ent_set(cr_job *job, const char *call, mpi_info *in, const char *key, const char *val)
{
    int i = ent_find(in, key);
    if (i >= 0) {
        char *v = xstrdup(job, call, val);
        free(in->e[i].val);
        in->e[i].val = v;
        return;
    }
    if (in->n == in->cap) {
        in->cap = in->cap ? 2 * in->cap : 8;
        in->e = xalloc(job, call, in->e, (size_t)in->cap * sizeof *in->e);
    }
    in->e[in->n].key = xstrdup(job, call, key);
    in->e[in->n].val = xstrdup(job, call, val);
    in->n++;
}

static void ent_clear(mpi_info *in)
{
    for (int i = 0; i < in->n; i++) {
        free(in->e[i].key);
        free(in->e[i].val);
    }
    free(in->e);
    *in = (mpi_info){0};
}

/* The table, with slot 0 (MPI_INFO_ENV) in it. */
static void table_init(cr_job *job, const char *call)
{
    mpi_state *m = job->mpi;
    if (m->infos.n) return;
    m->infos.t = xalloc(job, call, NULL, 16 * sizeof *m->infos.t);
    memset(m->infos.t, 0, 16 * sizeof *m->infos.t);
    m->infos.n = 1;
    m->infos.free_from = 1;
}

/* A new, empty object (slot 0 is kept for MPI_INFO_ENV). */
static MPI_Info info_new(cr_job *job, const char *call)
{
    mpi_state *m = job->mpi;
    table_init(job, call);
    int i = m->infos.free_from > 1 ? m->infos.free_from : 1;
    while (i < m->infos.n && m->infos.t[i].used) i++;
    m->infos.free_from = i + 1;
    if (i == m->infos.n) {
        if (i >= (int)H_IDX_MASK) cr_fatal(job, call, "too many info objects");
        if (m->infos.n % 16 == 0)
            m->infos.t =
                xalloc(job, call, m->infos.t, (size_t)(m->infos.n + 16) * sizeof *m->infos.t);
        m->infos.n++;
    }
    m->infos.t[i] = (mpi_info){.used = true};
    return (MPI_Info)(K_INFO | (unsigned)i);
}

static void info_release(MPI_Info h)
{
    mpi_state *m = mpi_st();
    mpi_info *in = info_get(h);
    if (!in || h == MPI_INFO_ENV) return;
    ent_clear(in);
    int i = h_idx(h);
    if (i < m->infos.free_from) m->infos.free_from = i;
}

static MPI_Info info_copy(cr_job *job, const char *call, MPI_Info h)
{
    MPI_Info nh = info_new(job, call);
    const mpi_info *in = info_get(h); /* after info_new: the table may have moved */
    mpi_info *out = info_get(nh);
    for (int i = 0; in && i < in->n; i++) ent_set(job, call, out, in->e[i].key, in->e[i].val);
    return nh;
}

/* ---- MPI_INFO_ENV (MPI-3.1 §10.3.1) ------------------------------------------ */

static void env_build(cr_job *job, const char *call)
{
    mpi_state *m = job->mpi;
    table_init(job, call);
    mpi_info *env = &m->infos.t[0];
    ent_clear(env);
    env->used = true;
    /* command and argv: from the kernel's copy of this process's command line */
    char cmd[4096];
    size_t len = 0;
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        len = fread(cmd, 1, sizeof cmd - 1, f);
        fclose(f);
    }
    cmd[len] = 0;
    if (len && cmd[0]) {
        ent_set(job, call, env, "command", cmd);
        char args[MPI_MAX_INFO_VAL + 1];
        size_t o = 0;
        for (size_t p = strlen(cmd) + 1; p < len && o < MPI_MAX_INFO_VAL; p += strlen(cmd + p) + 1)
            o += (size_t)snprintf(args + o, sizeof args - o, "%s%s", o ? " " : "", cmd + p);
        if (o > MPI_MAX_INFO_VAL) o = MPI_MAX_INFO_VAL;
        args[o] = 0;
        if (o) ent_set(job, call, env, "argv", args);
    }
    char buf[MPI_MAX_INFO_VAL + 1];
    /* maxprocs: the job's size; before MPI_Init, what courier run (or a PMI
     * launcher) put in the environment, 1 for a singleton */
    const char *np = getenv("COURIER_SIZE");
    if (!np) np = getenv("PMI_SIZE");
    snprintf(buf, sizeof buf, "%d", job->mpi->inited ? job->size : np ? atoi(np) : 1);
    ent_set(job, call, env, "maxprocs", buf);
    if (!gethostname(buf, sizeof buf - 1)) {
        buf[sizeof buf - 1] = 0;
        ent_set(job, call, env, "host", buf);
    }
#if defined(__x86_64__)
    ent_set(job, call, env, "arch", "x86_64");
#elif defined(__aarch64__)
    ent_set(job, call, env, "arch", "aarch64");
#endif
    if (getcwd(buf, sizeof buf)) ent_set(job, call, env, "wdir", buf);
    m->infos.env_built = true;
}

/* ---- entry and errors --------------------------------------------------------- */

typedef struct iargs {
    cr_job *job;
    const char *call;
} iargs;

cr_job *mpi_enter_any(void)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    mpi_state_get(job); /* where the tables live, before MPI_Init too */
    return job;
}

int mpi_vfail_any(cr_job *job, const char *call, int code, const char *fmt, va_list ap)
{
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (!job->mpi->inited || job->mpi->finalized) cr_fatal(job, call, "%s", msg);
    return mpi_fail(job, MPI_COMM_WORLD, call, code, "%s", msg);
}

int mpi_fail_any(cr_job *job, const char *call, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mpi_vfail_any(job, call, code, fmt, ap);
    va_end(ap);
    return rc;
}

/* Info calls may come before MPI_Init and after MPI_Finalize: lock only. */
static void ienter(iargs *a, const char *call)
{
    a->call = call;
    a->job = mpi_enter_any();
}

#define ifail(a, code, ...) mpi_fail_any((a)->job, (a)->call, code, __VA_ARGS__)

static int idone(iargs *a, int rc)
{
    cr_unlock(a->job);
    return rc;
}

/* A live info object (MPI_INFO_ENV too unless 'writing'). */
static int icheck(iargs *a, MPI_Info h, bool writing, mpi_info **out)
{
    if (h == MPI_INFO_ENV && !mpi_st()->infos.env_built) env_build(a->job, a->call);
    mpi_info *in = info_get(h);
    if (!in)
        return ifail(a, MPI_ERR_INFO,
                     h == MPI_INFO_NULL ? "info is MPI_INFO_NULL"
                                        : "info %#x is not a valid info object",
                     (unsigned)h);
    if (writing && h == MPI_INFO_ENV)
        return ifail(a, MPI_ERR_INFO, "MPI_INFO_ENV is predefined and read-only");
    *out = in;
    return 0;
}

static int ikey(iargs *a, const char *key)
{
    if (!key) return ifail(a, MPI_ERR_INFO_KEY, "key is NULL");
    size_t n = strnlen(key, MPI_MAX_INFO_KEY + 1);
    if (!n) return ifail(a, MPI_ERR_INFO_KEY, "key is empty");
    if (n > MPI_MAX_INFO_KEY)
        return ifail(a, MPI_ERR_INFO_KEY, "key \"%.40s...\" is longer than MPI_MAX_INFO_KEY (%d)",
                     key, MPI_MAX_INFO_KEY);
    return 0;
}

/* ---- the calls ------------------------------------------------------------------ */

/* h is the program's, made by call from at (courier run --check=leaks reports
 * it at MPI_Finalize unless freed). */
static MPI_Info given(MPI_Info h, const char *call, const void *at)
{
    mpi_info *in = info_get(h);
    in->made_by = call;
    in->at = at;
    return h;
}

void mpi_info_leaks(void (*fn)(void *ctx, int idx, int nkeys, const char *call, const void *at),
                    void *ctx)
{
    const mpi_state *m = mpi_st();
    for (int i = 1; i < m->infos.n; i++)
        if (m->infos.t[i].used && m->infos.t[i].made_by)
            fn(ctx, i, m->infos.t[i].n, m->infos.t[i].made_by, m->infos.t[i].at);
}

PMPI_WEAK(Info_create);
int PMPI_Info_create(MPI_Info *info)
{
    iargs a;
    ienter(&a, "MPI_Info_create");
    if (!info) return idone(&a, ifail(&a, MPI_ERR_ARG, "info is NULL"));
    *info = given(info_new(a.job, a.call), a.call, __builtin_return_address(0));
    return idone(&a, MPI_SUCCESS);
}

PMPI_WEAK(Info_set);
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    iargs a;
    mpi_info *in = NULL;
    ienter(&a, "MPI_Info_set");
    int rc = icheck(&a, info, true, &in);
    if (!rc) rc = ikey(&a, key);
    if (!rc && !value) rc = ifail(&a, MPI_ERR_INFO_VALUE, "value is NULL");
    if (!rc) {
        size_t n = strnlen(value, MPI_MAX_INFO_VAL + 1);
        if (!n)
            rc = ifail(&a, MPI_ERR_INFO_VALUE, "the value of key \"%s\" is empty", key);
        else if (n > MPI_MAX_INFO_VAL)
            rc = ifail(&a, MPI_ERR_INFO_VALUE,
                       "the value of key \"%s\" is longer than MPI_MAX_INFO_VAL (%d)", key,
                       MPI_MAX_INFO_VAL);
    }
    if (!rc) ent_set(a.job, a.call, in, key, value);
    return idone(&a, rc);
}

PMPI_WEAK(Info_delete);
int PMPI_Info_delete(MPI_Info info, const char *key)
{
    iargs a;
    mpi_info *in = NULL;
    ienter(&a, "MPI_Info_delete");
    int rc = icheck(&a, info, true, &in);
    if (!rc) rc = ikey(&a, key);
    int i = rc ? -1 : ent_find(in, key);
    if (!rc && i < 0)
        rc = ifail(&a, MPI_ERR_INFO_NOKEY, "key \"%s\" is not in the info object", key);
    if (rc) return idone(&a, rc);
    free(in->e[i].key);
    free(in->e[i].val);
    memmove(in->e + i, in->e + i + 1, (size_t)(in->n - i - 1) * sizeof *in->e);
    in->n--;
    return idone(&a, MPI_SUCCESS);
}

PMPI_WEAK(Info_get);
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    iargs a;
    mpi_info *in = NULL;
    ienter(&a, "MPI_Info_get");
    int rc = icheck(&a, info, false, &in);
    if (!rc) rc = ikey(&a, key);
    if (!rc && valuelen < 0) rc = ifail(&a, MPI_ERR_ARG, "valuelen %d is negative", valuelen);
    if (!rc && !flag) rc = ifail(&a, MPI_ERR_ARG, "flag is NULL");
    if (!rc && !value) rc = ifail(&a, MPI_ERR_ARG, "value is NULL");
    if (rc) return idone(&a, rc);
    int i = ent_find(in, key);
    *flag = i >= 0;
    if (i >= 0) { /* at most valuelen characters, then the terminating null */
        size_t n = strlen(in->e[i].val);
        if (n > (size_t)valuelen) n = (size_t)valuelen;
        memcpy(value, in->e[i].val, n);
        value[n] = 0;
    }
    return idone(&a, MPI_SUCCESS);
}

/* MPI-4.0 (offered early): the value and its full length in one call. */
PMPI_WEAK(Info_get_string);
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    iargs a;
    mpi_info *in = NULL;
    ienter(&a, "MPI_Info_get_string");
    int rc = icheck(&a, info, false, &in);
    if (!rc) rc = ikey(&a, key);
    if (!rc && (!buflen || *buflen < 0))
        rc = ifail(&a, MPI_ERR_ARG, buflen ? "*buflen %d is negative" : "buflen is NULL",
                   buflen ? *buflen : 0);
    if (!rc && !flag) rc = ifail(&a, MPI_ERR_ARG, "flag is NULL");
    if (!rc && !value && *buflen > 0) rc = ifail(&a, MPI_ERR_ARG, "value is NULL");
    if (rc) return idone(&a, rc);
    int i = ent_find(in, key);
    *flag = i >= 0;
    if (i >= 0) {
        size_t n = strlen(in->e[i].val);
        if (*buflen > 0) {
            size_t c = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
            memcpy(value, in->e[i].val, c);
            value[c] = 0;
        }
        *buflen = (int)n + 1;
    }
    return idone(&a, MPI_SUCCESS);
}

PMPI_WEAK(Info_get_valuelen);
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    iargs a;
    mpi_info *in = NULL;
    ienter(&a, "MPI_Info_get_valuelen");
    int rc = icheck(&a, info, false, &in);
    if (!rc) rc = ikey(&a, key);
    if (!rc && (!valuelen || !flag))
        rc = ifail(&a, MPI_ERR_ARG, "%s is NULL", valuelen ? "flag" : "valuelen");
    if (rc) return idone(&a, rc);
    int i = ent_find(in, key);
    *flag = i >= 0;
    if (i >= 0) *valuelen = (int)strlen(in->e[i].val);
    return idone(&a, MPI_SUCCESS);
}

PMPI_WEAK(Info_get_nkeys);
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    iargs a;
    mpi_info *in = NULL;
    ienter(&a, "MPI_Info_get_nkeys");
    int rc = icheck(&a, info, false, &in);
    if (!rc && !nkeys) rc = ifail(&a, MPI_ERR_ARG, "nkeys is NULL");
    if (!rc) *nkeys = in->n;
    return idone(&a, rc);
}

PMPI_WEAK(Info_get_nthkey);
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    iargs a;
    mpi_info *in = NULL;
    ienter(&a, "MPI_Info_get_nthkey");
    int rc = icheck(&a, info, false, &in);
    if (!rc && (n < 0 || n >= in->n))
        rc = ifail(&a, MPI_ERR_ARG, "n %d is out of range: the object has %d keys (0..%d)", n,
                   in->n, in->n - 1);
    if (!rc && !key) rc = ifail(&a, MPI_ERR_ARG, "key is NULL");
    if (!rc) strcpy(key, in->e[n].key);
    return idone(&a, rc);
}

PMPI_WEAK(Info_dup);
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    iargs a;
    mpi_info *in = NULL;
    ienter(&a, "MPI_Info_dup");
    int rc = icheck(&a, info, false, &in);
    if (!rc && !newinfo) rc = ifail(&a, MPI_ERR_ARG, "newinfo is NULL");
    if (!rc) *newinfo = given(info_copy(a.job, a.call, info), a.call, __builtin_return_address(0));
    return idone(&a, rc);
}

PMPI_WEAK(Info_free);
int PMPI_Info_free(MPI_Info *info)
{
    iargs a;
    mpi_info *in = NULL;
    ienter(&a, "MPI_Info_free");
    if (!info) return idone(&a, ifail(&a, MPI_ERR_ARG, "info is NULL"));
    int rc = icheck(&a, *info, true, &in);
    if (rc) return idone(&a, rc);
    info_release(*info);
    *info = MPI_INFO_NULL;
    return idone(&a, MPI_SUCCESS);
}

/* MPI-4.0 (offered early): an object like MPI_INFO_ENV, the program's to change. */
PMPI_WEAK(Info_create_env);
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    (void)argc;
    (void)argv;
    iargs a;
    mpi_info *in = NULL;
    ienter(&a, "MPI_Info_create_env");
    if (!info) return idone(&a, ifail(&a, MPI_ERR_ARG, "info is NULL"));
    int rc = icheck(&a, MPI_INFO_ENV, false, &in);
    if (!rc)
        *info = given(info_copy(a.job, a.call, MPI_INFO_ENV), a.call, __builtin_return_address(0));
    return idone(&a, rc);
}

/* ---- communicator hints --------------------------------------------------------- */

MPI_Info mpi_info_copy(MPI_Info h)
{
    if (h == MPI_INFO_NULL || !info_get(h)) return MPI_INFO_NULL;
    return info_copy(cr_job_get(), "MPI_Comm_dup", h);
}

void mpi_info_drop(MPI_Info h)
{
    info_release(h);
}

/* Check an info argument (MPI_INFO_NULL allowed when 'null_ok'); errors are
 * reported on comm. */
int mpi_info_arg(cr_job *job, MPI_Comm comm, const char *call, MPI_Info info, bool null_ok)
{
    if (info == MPI_INFO_NULL && null_ok) return 0;
    if (info == MPI_INFO_ENV && !mpi_st()->infos.env_built) env_build(job, call);
    if (!info_get(info))
        return mpi_fail(job, comm, call, MPI_ERR_INFO,
                        info == MPI_INFO_NULL ? "info is MPI_INFO_NULL"
                                              : "info %#x is not a valid info object",
                        (unsigned)info);
    return 0;
}

/* Merge the entries of 'from' into the communicator's hints. */
static void comm_hints_merge(cr_job *job, const char *call, MPI_Comm comm, MPI_Info from)
{
    mpi_comm *c = mpi_comm_get(comm);
    if (!info_get(from) || !info_get(from)->n) return;
    if (c->info == MPI_INFO_NULL) {
        MPI_Info h = info_new(job, call);
        c->info = h;
    }
    const mpi_info *src = info_get(from);
    mpi_info *dst = info_get(c->info);
    for (int i = 0; i < src->n; i++) ent_set(job, call, dst, src->e[i].key, src->e[i].val);
}

PMPI_WEAK(Comm_set_info);
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    const char *call = "MPI_Comm_set_info";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = mpi_info_arg(job, comm, call, info, false);
    if (!rc) comm_hints_merge(job, call, comm, info);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Comm_get_info);
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    const char *call = "MPI_Comm_get_info";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && !info_used) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "info_used is NULL");
    if (rc) return mpi_leave(job, rc);
    MPI_Info hints = c->info;
    *info_used = given(info_get(hints) ? info_copy(job, call, hints) : info_new(job, call), call,
                       __builtin_return_address(0));
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_dup_with_info);
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_dup_with_info";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = mpi_info_arg(job, comm, call, info, true);
    if (!rc && !newcomm) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "newcomm is NULL");
    mpi_leave(job, 0);
    if (rc) return rc;
    rc = PMPI_Comm_dup(comm, newcomm);
    if (rc) return rc;
    cr_lock(job);
    mpi_comm_hints_replace(job, call, *newcomm, info); /* those MPI_Comm_dup copied */
    return mpi_leave(job, MPI_SUCCESS);
}

void mpi_comm_hints_replace(cr_job *job, const char *call, MPI_Comm h, MPI_Info info)
{
    mpi_comm *c = mpi_comm_get(h);
    MPI_Info old = c->info;
    c->info = MPI_INFO_NULL;
    info_release(old);
    if (info != MPI_INFO_NULL) comm_hints_merge(job, call, h, info);
}

bool mpi_info_live(MPI_Info h)
{
    return info_get(h) != NULL;
}

const char *mpi_info_lookup(MPI_Info h, const char *key)
{
    const mpi_info *in = info_get(h);
    int i = in ? ent_find(in, key) : -1;
    return i >= 0 ? in->e[i].val : NULL;
}
