/* MPI-4.0 sessions (chapter 11): MPI_Session_init/_finalize, the process sets
 * ("mpi://WORLD", "mpi://SELF", and "courier://host": the ranks on this
 * rank's host, each host its own set under the same name), their queries,
 * MPI_Group_from_session_pset, MPI_Comm_create_from_group,
 * MPI_Intercomm_create_from_groups, the session's error handler and handle
 * conversion, and a session's buffer for buffered sends (MPI-4.1
 * MPI_Session_attach_buffer and the rest; the pools are mpi_buf.c's): the
 * communicators MPI_Comm_create_from_group makes from its groups use it when
 * they have none of their own.
 *
 * Invariants:
 *  - MPI_Session_init works without MPI_Init: it brings MPI's tables up
 *    (mpi_layer_up) the first time; MPI_Init after it is still allowed once;
 *  - a session handle is K_SESSION | index into job->mpi->mpi4.sessions; a
 *    finalized session's slot is marked unused and its handle is refused
 *    (MPI_ERR_SESSION) from then on; slots are reused;
 *  - the communicators made from groups are made over MPI_COMM_WORLD's
 *    context (MPI_Comm_create_group with a tag hashed from the string tag):
 *    every process in the group must call with the same string tag, as MPI
 *    requires; two concurrent creations over the same group need different
 *    string tags whose hashes differ (31 bits). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mpi_impl.h"

typedef struct mpi_session {
    bool used;
    int level; /* the thread level it provides (its info's "thread_level") */
    MPI_Errhandler errh;
    MPI_Info info; /* a copy of the init's info, or MPI_INFO_NULL */
} mpi_session;

#define SS (&job->mpi->mpi4)

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF", "courier://host"};
#define NPSETS 3

static mpi_session *session_get(cr_job *job, MPI_Session h)
{
    if (!h_is(h, K_SESSION) || h_idx(h) >= SS->nsessions) return NULL;
    mpi_session *s = &SS->sessions[h_idx(h)];
    return s->used ? s : NULL;
}

/* An error raised on error handler h for the object obj (a session, or the
 * null handle of what a call was given h for and has not made: MPI-4.1
 * §11.3.1, §7.3.2). */
static int vhfail(cr_job *job, MPI_Errhandler h, int obj, const char *call, int code,
                  const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return mpi_fail_with(job, h, &obj, call, code, msg);
}

static int hfail(cr_job *job, MPI_Errhandler h, int obj, const char *call, int code,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int hfail(cr_job *job, MPI_Errhandler h, int obj, const char *call, int code,
                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vhfail(job, h, obj, call, code, fmt, ap);
    va_end(ap);
    return rc;
}

/* An error of a call on session h: its handler (MPI_COMM_WORLD's when h is
 * not a session). */
static int sfail(cr_job *job, MPI_Session h, const char *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int sfail(cr_job *job, MPI_Session h, const char *call, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mpi_session *s = session_get(job, h);
    int rc = s ? vhfail(job, s->errh, (int)h, call, code, fmt, ap)
               : mpi_vfail(job, MPI_COMM_WORLD, call, code, fmt, ap);
    va_end(ap);
    return rc;
}

static int scheck(cr_job *job, const char *call, MPI_Session h, mpi_session **out)
{
    *out = session_get(job, h);
    if (*out) return 0;
    return sfail(job, h, call, MPI_ERR_SESSION,
                 "session %#x is not a live session: MPI_SESSION_NULL, finalized, or never "
                 "returned by MPI_Session_init",
                 (unsigned)h);
}

/* The calls that may come before any session or MPI_Init bring MPI's tables up. */
static void layer_up(void)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    if (!mpi_state_get(job)->finalized) mpi_layer_up(job);
    cr_unlock(job);
}

static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                     "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

/* The level a session asking for info's "thread_level" gets: what it asks for,
 * and never less than the process has (MPI_Init_thread's, or an earlier
 * session's); MPI_THREAD_MULTIPLE turns the process's locking on, as
 * MPI_Init_thread does (not when simulated: funneled there). */
static int session_level(cr_job *job, MPI_Info info)
{
    const char *v = info == MPI_INFO_NULL ? NULL : mpi_info_lookup(info, "thread_level");
    int want = MPI_THREAD_SINGLE;
    for (int i = 0; v && i < 4; i++)
        if (!strcmp(v, levels[i])) want = MPI_THREAD_SINGLE + i;
    if (job->vt.base && want > MPI_THREAD_FUNNELED) want = MPI_THREAD_FUNNELED;
    mpi_state *m = job->mpi;
    if (want == MPI_THREAD_MULTIPLE && m->thread_level < MPI_THREAD_MULTIPLE) cr_multi_begin(job);
    if (want > m->thread_level) m->thread_level = want;
    return m->thread_level;
}

PMPI_WEAK(Session_init);
int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    const char *call = "MPI_Session_init";
    layer_up();
    cr_job *job = mpi_enter(call);
    int rc = mpi_info_arg(job, MPI_COMM_WORLD, call, info, true);
    if (!rc && !mpi_errh_valid(errhandler))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ERRHANDLER,
                      "errhandler %#x is not an error handler", (unsigned)errhandler);
    if (!rc && !session) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "session is NULL");
    const char *lv = rc || info == MPI_INFO_NULL ? NULL : mpi_info_lookup(info, "thread_level");
    bool known = !lv;
    for (int k = 0; lv && k < 4; k++) known |= !strcmp(lv, levels[k]);
    if (!known)
        rc = hfail(job, errhandler, (int)MPI_SESSION_NULL, call, MPI_ERR_ARG,
                   "info key thread_level is \"%s\": it must be MPI_THREAD_SINGLE, "
                   "MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE",
                   lv);
    if (rc) return mpi_leave(job, rc);
    int i = 0;
    while (i < SS->nsessions && SS->sessions[i].used) i++;
    if (i == SS->nsessions) {
        mpi_session *t = realloc(SS->sessions, (size_t)(i + 1) * sizeof *t);
        if (!t) cr_fatal(job, call, "out of memory for sessions");
        SS->sessions = t;
        SS->nsessions++;
    }
    SS->sessions[i] =
        (mpi_session){.used = true,
                      .level = session_level(job, info),
                      .errh = errhandler,
                      .info = info == MPI_INFO_NULL ? MPI_INFO_NULL : mpi_info_copy(info)};
    *session = (MPI_Session)(K_SESSION | (unsigned)i);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Session_finalize);
int PMPI_Session_finalize(MPI_Session *session)
{
    const char *call = "MPI_Session_finalize";
    cr_job *job = mpi_enter(call);
    mpi_session *s = NULL;
    int rc = session ? scheck(job, call, *session, &s)
                     : mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "session is NULL");
    if (rc) return mpi_leave(job, rc);
    mpi_bpool *b = mpi_bpool_of_session(job, h_idx(*session) + 1);
    if (b) { /* its buffer: what is charged to it is delivered first */
        mpi_bpool_drain(job, call, b);
        b->session = 0;
        b->buf = NULL;
        b->size = 0;
    }
    mpi_info_drop(s->info);
    *s = (mpi_session){0};
    *session = MPI_SESSION_NULL;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Session_get_num_psets);
int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    const char *call = "MPI_Session_get_num_psets";
    cr_job *job = mpi_enter(call);
    mpi_session *s;
    int rc = scheck(job, call, session, &s);
    (void)info;
    if (!rc && !npset_names) rc = sfail(job, session, call, MPI_ERR_ARG, "npset_names is NULL");
    if (!rc) *npset_names = NPSETS;
    return mpi_leave(job, rc);
}

PMPI_WEAK(Session_get_nth_pset);
int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                              char *pset_name)
{
    const char *call = "MPI_Session_get_nth_pset";
    cr_job *job = mpi_enter(call);
    mpi_session *s;
    int rc = scheck(job, call, session, &s);
    (void)info;
    if (!rc && (n < 0 || n >= NPSETS))
        rc = sfail(job, session, call, MPI_ERR_ARG, "n = %d: the process sets are 0..%d", n,
                   NPSETS - 1);
    if (!rc && !pset_len) rc = sfail(job, session, call, MPI_ERR_ARG, "pset_len is NULL");
    if (!rc && *pset_len > 0 && !pset_name)
        rc = sfail(job, session, call, MPI_ERR_ARG,
                   "pset_name is NULL but pset_len is %d: pass a buffer of pset_len bytes, or "
                   "pset_len 0 to be told the length",
                   *pset_len);
    if (rc) return mpi_leave(job, rc);
    int need = (int)strlen(psets[n]) + 1;
    if (*pset_len > 0 && pset_name) snprintf(pset_name, (size_t)*pset_len, "%s", psets[n]);
    *pset_len = need; /* 0 in: just the length (with the terminating NUL) */
    return mpi_leave(job, MPI_SUCCESS);
}

/* The job ranks of process set name (NULL: no such set); *n its size. Names
 * are taken in any case ("mpi://world"), as MPICH and Open MPI take them
 * (MPICH's own session tests ask for "mpi://world"). */
static int *pset_ranks(cr_job *job, const char *call, const char *name, int *n)
{
    int which = -1;
    for (int i = 0; i < NPSETS; i++)
        if (name && !strcasecmp(name, psets[i])) which = i;
    if (which < 0) return NULL;
    int *r = malloc((size_t)job->size * sizeof *r);
    if (!r) cr_fatal(job, call, "out of memory");
    *n = 0;
    for (int i = 0; i < job->size; i++)
        if (which == 0 || (which == 1 && i == job->rank) ||
            (which == 2 && job->host_of[i] == job->host_of[job->rank]))
            r[(*n)++] = i;
    return r;
}

static int no_pset(cr_job *job, MPI_Session session, const char *call, const char *name)
{
    return sfail(job, session, call, MPI_ERR_ARG,
                 "\"%s\" is not a process set: they are mpi://WORLD, mpi://SELF and "
                 "courier://host (MPI_Session_get_nth_pset)",
                 name ? name : "(null)");
}

PMPI_WEAK(Session_get_pset_info);
int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    const char *call = "MPI_Session_get_pset_info";
    cr_job *job = mpi_enter(call);
    mpi_session *s;
    int rc = scheck(job, call, session, &s), n = 0;
    if (!rc && !info) rc = sfail(job, session, call, MPI_ERR_ARG, "info is NULL");
    int *r = rc ? NULL : pset_ranks(job, call, pset_name, &n);
    if (!rc && !r) rc = no_pset(job, session, call, pset_name);
    if (rc) return mpi_leave(job, rc);
    free(r);
    mpi_leave(job, 0);
    char v[16];
    snprintf(v, sizeof v, "%d", n);
    rc = PMPI_Info_create(info);
    if (!rc) rc = PMPI_Info_set(*info, "mpi_size", v);
    return rc;
}

PMPI_WEAK(Session_get_info);
int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    const char *call = "MPI_Session_get_info";
    cr_job *job = mpi_enter(call);
    mpi_session *s;
    int rc = scheck(job, call, session, &s);
    if (!rc && !info_used) rc = sfail(job, session, call, MPI_ERR_ARG, "info_used is NULL");
    if (rc) return mpi_leave(job, rc);
    MPI_Info from = s->info;
    const char *level = levels[s->level - MPI_THREAD_SINGLE];
    mpi_leave(job, 0);
    rc = from == MPI_INFO_NULL ? PMPI_Info_create(info_used) : PMPI_Info_dup(from, info_used);
    if (!rc) rc = PMPI_Info_set(*info_used, "thread_level", level);
    return rc;
}

PMPI_WEAK(Group_from_session_pset);
int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    const char *call = "MPI_Group_from_session_pset";
    cr_job *job = mpi_enter(call);
    mpi_session *s;
    int rc = scheck(job, call, session, &s), n = 0;
    if (!rc && !newgroup) rc = sfail(job, session, call, MPI_ERR_ARG, "newgroup is NULL");
    int *r = rc ? NULL : pset_ranks(job, call, pset_name, &n);
    if (!rc && !r) rc = no_pset(job, session, call, pset_name);
    if (rc) return mpi_leave(job, rc);
    *newgroup = mpi_group_add(job, call, r, n);
    mpi_group_get(*newgroup)->session = h_idx(session) + 1;
    return mpi_leave(job, MPI_SUCCESS);
}

/* The 31-bit tag of a string tag (FNV-1a). */
static int tag_of(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return (int)(h & 0x7fffffffu);
}

PMPI_WEAK(Comm_create_from_group);
int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_create_from_group";
    cr_job *job = mpi_enter(call);
    mpi_group *g = NULL;
    int rc = mpi_group_check(job, call, group, &g);
    if (!rc && !mpi_errh_valid(errhandler))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ERRHANDLER,
                      "errhandler %#x is not an error handler", (unsigned)errhandler);
    /* from here on, errors go to the handler the call was given */
    if (!rc && (!stringtag || !newcomm))
        rc = hfail(job, errhandler, (int)MPI_COMM_NULL, call, MPI_ERR_ARG, "%s is NULL",
                   stringtag ? "newcomm" : "stringtag");
    if (!rc) rc = mpi_info_arg(job, MPI_COMM_WORLD, call, info, true);
    int session = rc ? 0 : g->session;
    mpi_leave(job, 0);
    if (rc) return rc;
    rc = PMPI_Comm_create_group(MPI_COMM_WORLD, group, tag_of(stringtag), newcomm);
    if (!rc && *newcomm != MPI_COMM_NULL && session) { /* its buffers come from the session's */
        job = mpi_enter(call);
        mpi_comm_get(*newcomm)->session = session;
        mpi_leave(job, 0);
    }
    if (!rc && *newcomm != MPI_COMM_NULL) rc = PMPI_Comm_set_errhandler(*newcomm, errhandler);
    if (!rc && *newcomm != MPI_COMM_NULL && info != MPI_INFO_NULL)
        rc = PMPI_Comm_set_info(*newcomm, info);
    return rc;
}

PMPI_WEAK(Intercomm_create_from_groups);
int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    const char *call = "MPI_Intercomm_create_from_groups";
    cr_job *job = mpi_enter(call);
    mpi_group *lg = NULL, *rg = NULL;
    int rc = mpi_group_check(job, call, local_group, &lg);
    if (!rc) rc = mpi_group_check(job, call, remote_group, &rg);
    if (!rc && (!stringtag || !newintercomm))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "%s is NULL",
                      stringtag ? "newintercomm" : "stringtag");
    if (!rc && (local_leader < 0 || local_leader >= lg->size))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_RANK,
                      "local_leader %d is not a rank of the local group (0..%d)", local_leader,
                      lg->size - 1);
    if (!rc && (remote_leader < 0 || remote_leader >= rg->size))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_RANK,
                      "remote_leader %d is not a rank of the remote group (0..%d)", remote_leader,
                      rg->size - 1);
    int rjob = rc ? -1 : rg->ranks[remote_leader];
    mpi_leave(job, 0);
    if (rc) return rc;
    /* the local group's communicator, then the leaders meet over MPI_COMM_WORLD */
    char ltag[MPI_MAX_STRINGTAG_LEN + 16];
    snprintf(ltag, sizeof ltag, "%.*s/local", MPI_MAX_STRINGTAG_LEN, stringtag);
    MPI_Comm local;
    rc = PMPI_Comm_create_from_group(local_group, ltag, MPI_INFO_NULL, errhandler, &local);
    if (rc) return rc;
    rc = PMPI_Intercomm_create(local, local_leader, MPI_COMM_WORLD, rjob, tag_of(stringtag),
                               newintercomm);
    PMPI_Comm_free(&local);
    if (!rc) rc = PMPI_Comm_set_errhandler(*newintercomm, errhandler);
    if (!rc && info != MPI_INFO_NULL) rc = PMPI_Comm_set_info(*newintercomm, info);
    return rc;
}

/* ---- error handlers and handle conversion ------------------------------------ */

PMPI_WEAK(Session_create_errhandler);
int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    layer_up(); /* callable before any session (MPI-4.1 11.2.1), to give MPI_Session_init */
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))fn,
                                       errhandler);
}

PMPI_WEAK(Session_set_errhandler);
int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    const char *call = "MPI_Session_set_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_session *s;
    int rc = scheck(job, call, session, &s);
    if (!rc && !mpi_errh_valid(errhandler))
        rc = sfail(job, session, call, MPI_ERR_ERRHANDLER, "errhandler %#x is not an error handler",
                   (unsigned)errhandler);
    if (!rc) s->errh = errhandler;
    return mpi_leave(job, rc);
}

PMPI_WEAK(Session_get_errhandler);
int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    const char *call = "MPI_Session_get_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_session *s;
    int rc = scheck(job, call, session, &s);
    if (!rc && !errhandler) rc = sfail(job, session, call, MPI_ERR_ARG, "errhandler is NULL");
    if (!rc) *errhandler = s->errh;
    return mpi_leave(job, rc);
}

PMPI_WEAK(Session_call_errhandler);
int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    const char *call = "MPI_Session_call_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_session *s;
    int rc = scheck(job, call, session, &s);
    if (!rc) sfail(job, session, call, errorcode, "error %d raised by the program", errorcode);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Session_c2f);
MPI_Fint PMPI_Session_c2f(MPI_Session session)
{
    return (MPI_Fint)session;
}

PMPI_WEAK(Session_f2c);
MPI_Session PMPI_Session_f2c(MPI_Fint session)
{
    return (MPI_Session)session;
}

/* ---- a session's buffer for buffered sends (MPI-4.1 §3.6) ---- */

/* The session's pool, or an error when it has none. */
static int session_pool(cr_job *job, const char *call, MPI_Session session, mpi_bpool **b)
{
    mpi_session *s;
    int rc = scheck(job, call, session, &s);
    *b = rc ? NULL : mpi_bpool_of_session(job, h_idx(session) + 1);
    if (!rc && !*b)
        rc = sfail(job, session, call, MPI_ERR_BUFFER,
                   "no buffer is attached to this session (MPI_Session_attach_buffer)");
    return rc;
}

/* MPI_Session_attach_buffer(_c): a _c form's size is kept whole. */
static int session_attach(const char *call, MPI_Session session, void *buffer, MPI_Count size)
{
    cr_job *job = mpi_enter(call);
    mpi_session *s;
    int rc = scheck(job, call, session, &s);
    if (!rc && buffer != MPI_BUFFER_AUTOMATIC && (size < 0 || (!buffer && size)))
        rc = sfail(job, session, call, MPI_ERR_BUFFER, "buffer %p of %lld bytes is invalid", buffer,
                   (long long)size);
    if (!rc && mpi_bpool_of_session(job, h_idx(session) + 1))
        rc = sfail(job, session, call, MPI_ERR_BUFFER,
                   "this session has a buffer attached already: detach it first "
                   "(MPI_Session_detach_buffer)");
    if (rc) return mpi_leave(job, rc);
    mpi_bpool *b = mpi_bpool_new(job, call);
    b->session = h_idx(session) + 1;
    mpi_bpool_attach(b, buffer, size);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Session_attach_buffer);
int PMPI_Session_attach_buffer(MPI_Session session, void *buffer, int size)
{
    return session_attach("MPI_Session_attach_buffer", session, buffer, size);
}

PMPI_WEAK(Session_attach_buffer_c);
int PMPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size)
{
    return session_attach("MPI_Session_attach_buffer_c", session, buffer, size);
}

/* MPI_Session_detach_buffer(_c): the size in the form's width (isize: the
 * int form's, MPI_UNDEFINED past INT_MAX; csize: the _c form's). */
static int session_detach(const char *call, MPI_Session session, void *buffer_addr, int *isize,
                          MPI_Count *csize)
{
    cr_job *job = mpi_enter(call);
    mpi_bpool *b = NULL;
    int rc = session_pool(job, call, session, &b);
    if (!rc && (!buffer_addr || (!isize && !csize)))
        rc = sfail(job, session, call, MPI_ERR_ARG, "buffer_addr or size is NULL");
    if (rc) return mpi_leave(job, rc);
    mpi_bpool_drain(job, call, b);
    mpi_bpool_detach(b, buffer_addr, isize, csize);
    b->session = 0;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Session_detach_buffer);
int PMPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    return session_detach("MPI_Session_detach_buffer", session, buffer_addr, size, NULL);
}

PMPI_WEAK(Session_detach_buffer_c);
int PMPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    return session_detach("MPI_Session_detach_buffer_c", session, buffer_addr, NULL, size);
}

PMPI_WEAK(Session_flush_buffer);
int PMPI_Session_flush_buffer(MPI_Session session)
{
    const char *call = "MPI_Session_flush_buffer";
    cr_job *job = mpi_enter(call);
    mpi_bpool *b = NULL;
    int rc = session_pool(job, call, session, &b);
    if (!rc) mpi_bpool_drain(job, call, b);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Session_iflush_buffer);
int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    const char *call = "MPI_Session_iflush_buffer";
    cr_job *job = mpi_enter(call);
    mpi_bpool *b = NULL;
    int rc = session_pool(job, call, session, &b);
    if (!rc && !request) rc = sfail(job, session, call, MPI_ERR_REQUEST, "request is NULL");
    if (rc) return mpi_leave(job, rc);
    return mpi_leave(job, mpi_bpool_iflush(job, b, request));
}
