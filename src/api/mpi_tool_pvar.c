/* The tools interface's performance variables (MPI-4.1 §15.3.7): the
 * counters this rank keeps for `courier status` (job->stats: messages and
 * bytes sent and received, the posted and unexpected queues and their
 * high-water marks) and the time the engine's waits spent waiting, with their
 * sessions and handles.
 *
 * Invariants:
 *  - counters and the timer are not continuous: a handle counts only while
 *    started (accum, plus the change since base while started), so a session
 *    brackets the traffic it is started around; reset or write sets the
 *    handle's value (base taken anew), never the engine's counters, which
 *    other sessions and `courier status` read too;
 *  - the queue lengths and high-water marks are continuous and read-only: they
 *    are the engine's values as they are (the marks since the rank started);
 *  - the wait timer and count move only while some handle of them is started
 *    (job->time_waits counts those handles), so the engine reads no clock for
 *    them otherwise;
 *  - every handle is in its session's list; freeing a session, or the last
 *    MPI_T_finalize, stops and frees its handles. */
#include <stdlib.h>
#include <string.h>

#include "mpi_tool.h"

enum {
    PV_SENT_MSGS,
    PV_SENT_BYTES,
    PV_RECV_MSGS,
    PV_RECV_BYTES,
    PV_POSTED,
    PV_UNEXP,
    PV_UNEXP_BYTES,
    PV_POSTED_MAX,
    PV_UNEXP_MAX,
    PV_WAIT_TIME,
    PV_WAITS,
    NPVARS
};

typedef struct pvar_def {
    const char *name;
    int cls, cat;
    bool continuous; /* (also read-only) */
    const char *desc;
} pvar_def;

static const pvar_def pvars[NPVARS] = {
    [PV_SENT_MSGS] = {"courier_sent_messages", MPI_T_PVAR_CLASS_COUNTER, MPI_T_CAT_MSG, false,
                      "messages this rank started sending (point-to-point and the "
                      "collectives' own)"},
    [PV_SENT_BYTES] = {"courier_sent_bytes", MPI_T_PVAR_CLASS_COUNTER, MPI_T_CAT_MSG, false,
                       "bytes of the messages this rank started sending"},
    [PV_RECV_MSGS] = {"courier_recv_messages", MPI_T_PVAR_CLASS_COUNTER, MPI_T_CAT_MSG, false,
                      "messages a receive of this rank matched"},
    [PV_RECV_BYTES] = {"courier_recv_bytes", MPI_T_PVAR_CLASS_COUNTER, MPI_T_CAT_MSG, false,
                       "bytes of the messages a receive of this rank matched"},
    [PV_POSTED] = {"courier_posted_queue_length", MPI_T_PVAR_CLASS_LEVEL, MPI_T_CAT_MSG, true,
                   "receives posted that no message matched yet"},
    [PV_UNEXP] = {"courier_unexpected_queue_length", MPI_T_PVAR_CLASS_LEVEL, MPI_T_CAT_MSG, true,
                  "messages arrived that no receive matched yet"},
    [PV_UNEXP_BYTES] = {"courier_unexpected_queue_bytes", MPI_T_PVAR_CLASS_LEVEL, MPI_T_CAT_MSG,
                        true, "bytes of the messages no receive matched yet"},
    [PV_POSTED_MAX] = {"courier_posted_queue_max", MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_CAT_MSG,
                       true, "the longest the posted receive queue has been"},
    [PV_UNEXP_MAX] = {"courier_unexpected_queue_max", MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_CAT_MSG,
                      true, "the longest the unexpected message queue has been"},
    [PV_WAIT_TIME] =
        {"courier_wait_time", MPI_T_PVAR_CLASS_TIMER, MPI_T_CAT_WAIT, false,
         "seconds this rank's blocking calls spent waiting in the engine (MPI_DOUBLE)"},
    [PV_WAITS] = {"courier_waits", MPI_T_PVAR_CLASS_COUNTER, MPI_T_CAT_WAIT, false,
                  "waits of this rank's blocking calls that had to wait"},
};

int mpi_t_pvars_of(int cat, int len, int *idx)
{
    int n = 0;
    for (int i = 0; i < NPVARS; i++)
        if (pvars[i].cat == cat) {
            if (idx && n < len) idx[n] = i;
            n++;
        }
    return n;
}

static bool is_timed(int i)
{
    return i == PV_WAIT_TIME || i == PV_WAITS;
}

/* The engine's value of variable i now (the timer in nanoseconds). */
static uint64_t raw(cr_job *job, int i)
{
    const cr_host_stats *s = job->stats;
    switch (i) {
    case PV_SENT_MSGS:
        return s->sent_msgs;
    case PV_SENT_BYTES:
        return s->sent_bytes;
    case PV_RECV_MSGS:
        return s->recv_msgs;
    case PV_RECV_BYTES:
        return s->recv_bytes;
    case PV_POSTED:
        return s->posted;
    case PV_UNEXP:
        return s->unexpected;
    case PV_UNEXP_BYTES:
        return s->unexp_bytes;
    case PV_POSTED_MAX:
        return s->posted_max;
    case PV_UNEXP_MAX:
        return s->unexpected_max;
    case PV_WAIT_TIME:
        return job->wait_ns;
    default:
        return job->waits;
    }
}

/* ---- the calls ----------------------------------------------------------------- */

/* The usual opening of a call (mpi_tool.c has the same). */
#define T_ENTER(job, t)                                                                            \
    mpi_tool *t;                                                                                   \
    cr_job *job = mpi_t_enter(&t);                                                                 \
    if (!job) return MPI_T_ERR_NOT_INITIALIZED

PMPI_WEAK(T_pvar_get_num);
int PMPI_T_pvar_get_num(int *num_pvar)
{
    T_ENTER(job, t);
    if (!num_pvar) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    *num_pvar = NPVARS;
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_pvar_get_info);
int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *readonly, int *continuous, int *atomic)
{
    T_ENTER(job, t);
    if (pvar_index < 0 || pvar_index >= NPVARS) return mpi_t_leave(job, MPI_T_ERR_INVALID_INDEX);
    const pvar_def *d = &pvars[pvar_index];
    mpi_t_str(name, name_len, d->name);
    mpi_t_str(desc, desc_len, d->desc);
    if (verbosity) *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (var_class) *var_class = d->cls;
    if (datatype) *datatype = pvar_index == PV_WAIT_TIME ? MPI_DOUBLE : MPI_UNSIGNED_LONG_LONG;
    if (enumtype) *enumtype = MPI_T_ENUM_NULL;
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly) *readonly = d->continuous;
    if (continuous) *continuous = d->continuous;
    if (atomic) *atomic = !d->continuous; /* readreset under the lock */
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_pvar_get_index);
int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    T_ENTER(job, t);
    if (!name || !pvar_index) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    for (int i = 0; i < NPVARS; i++)
        if (pvars[i].cls == var_class && !strcmp(pvars[i].name, name)) {
            *pvar_index = i;
            return mpi_t_leave(job, MPI_SUCCESS);
        }
    return mpi_t_leave(job, MPI_T_ERR_INVALID_NAME);
}

PMPI_WEAK(T_pvar_session_create);
int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    T_ENTER(job, t);
    if (!session) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    struct cr_mpit_session *s = calloc(1, sizeof *s);
    if (!s) return mpi_t_leave(job, MPI_T_ERR_OUT_OF_SESSIONS);
    s->next = t->sessions;
    t->sessions = s;
    *session = s;
    return mpi_t_leave(job, MPI_SUCCESS);
}

/* Session s's place in the list, or NULL: not a live session. */
static struct cr_mpit_session **session_find(mpi_tool *t, MPI_T_pvar_session s)
{
    for (struct cr_mpit_session **p = &t->sessions; *p; p = &(*p)->next)
        if (*p == s && s) return p;
    return NULL;
}

/* Handle h's place in session s, or NULL: not one of its handles. */
static struct cr_mpit_pvar **handle_find(struct cr_mpit_session *s, MPI_T_pvar_handle h)
{
    for (struct cr_mpit_pvar **p = &s->handles; *p; p = &(*p)->next)
        if (*p == h && h) return p;
    return NULL;
}

static void h_start(cr_job *job, struct cr_mpit_pvar *h)
{
    if (h->started || pvars[h->idx].continuous) return;
    if (is_timed(h->idx)) job->time_waits++;
    h->base = raw(job, h->idx);
    h->started = true;
}

static void h_stop(cr_job *job, struct cr_mpit_pvar *h)
{
    if (!h->started || pvars[h->idx].continuous) return;
    h->accum += raw(job, h->idx) - h->base;
    h->started = false;
    if (is_timed(h->idx)) job->time_waits--;
}

static uint64_t h_value(cr_job *job, const struct cr_mpit_pvar *h)
{
    if (pvars[h->idx].continuous) return raw(job, h->idx);
    return h->accum + (h->started ? raw(job, h->idx) - h->base : 0);
}

static void h_set(cr_job *job, struct cr_mpit_pvar *h, uint64_t v)
{
    h->accum = v;
    h->base = raw(job, h->idx);
}

static void h_put(const struct cr_mpit_pvar *h, uint64_t v, void *buf)
{
    if (h->idx == PV_WAIT_TIME)
        *(double *)buf = (double)v * 1e-9;
    else
        *(unsigned long long *)buf = v;
}

static void session_free(cr_job *job, struct cr_mpit_session *s)
{
    while (s->handles) {
        struct cr_mpit_pvar *h = s->handles;
        s->handles = h->next;
        h_stop(job, h);
        free(h);
    }
    free(s);
}

void mpi_t_sessions_free(cr_job *job, mpi_tool *t)
{
    while (t->sessions) {
        struct cr_mpit_session *s = t->sessions;
        t->sessions = s->next;
        session_free(job, s);
    }
}

PMPI_WEAK(T_pvar_session_free);
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    T_ENTER(job, t);
    struct cr_mpit_session **p = session ? session_find(t, *session) : NULL;
    if (!p) return mpi_t_leave(job, MPI_T_ERR_INVALID_SESSION);
    *p = (*session)->next;
    session_free(job, *session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_pvar_handle_alloc);
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle; /* every variable is bound to no object */
    T_ENTER(job, t);
    if (!session_find(t, session)) return mpi_t_leave(job, MPI_T_ERR_INVALID_SESSION);
    if (pvar_index < 0 || pvar_index >= NPVARS) return mpi_t_leave(job, MPI_T_ERR_INVALID_INDEX);
    if (!handle || !count) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    struct cr_mpit_pvar *h = calloc(1, sizeof *h);
    if (!h) return mpi_t_leave(job, MPI_T_ERR_OUT_OF_HANDLES);
    h->idx = pvar_index;
    h->next = session->handles;
    session->handles = h;
    *handle = h;
    *count = 1;
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_pvar_handle_free);
int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    T_ENTER(job, t);
    if (!session_find(t, session)) return mpi_t_leave(job, MPI_T_ERR_INVALID_SESSION);
    struct cr_mpit_pvar **p = handle ? handle_find(session, *handle) : NULL;
    if (!p) return mpi_t_leave(job, MPI_T_ERR_INVALID_HANDLE);
    struct cr_mpit_pvar *h = *p;
    *p = h->next;
    h_stop(job, h);
    free(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return mpi_t_leave(job, MPI_SUCCESS);
}

/* Start (1), stop (0) or reset (2) one handle, or every handle of the session
 * (MPI_T_PVAR_ALL_HANDLES: those the operation does not apply to are left as
 * they are). */
static int startstop(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int op)
{
    T_ENTER(job, t);
    if (!session_find(t, session)) return mpi_t_leave(job, MPI_T_ERR_INVALID_SESSION);
    bool all = handle == MPI_T_PVAR_ALL_HANDLES;
    if (!all && !handle_find(session, handle)) return mpi_t_leave(job, MPI_T_ERR_INVALID_HANDLE);
    if (!all && pvars[handle->idx].continuous)
        return mpi_t_leave(job, op == 2 ? MPI_T_ERR_PVAR_NO_WRITE : MPI_T_ERR_PVAR_NO_STARTSTOP);
    for (struct cr_mpit_pvar *h = session->handles; h; h = h->next) {
        if (!all && h != handle) continue;
        if (op == 1) h_start(job, h);
        if (op == 0) h_stop(job, h);
        if (op == 2 && !pvars[h->idx].continuous) h_set(job, h, 0);
    }
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_pvar_start);
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return startstop(session, handle, 1);
}

PMPI_WEAK(T_pvar_stop);
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return startstop(session, handle, 0);
}

PMPI_WEAK(T_pvar_reset);
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return startstop(session, handle, 2);
}

/* Read (and, reset, set to 0) one handle's value into buf. */
static int readwrite(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf,
                     const void *in, bool reset)
{
    T_ENTER(job, t);
    if (!session_find(t, session)) return mpi_t_leave(job, MPI_T_ERR_INVALID_SESSION);
    if (handle == MPI_T_PVAR_ALL_HANDLES || !handle_find(session, handle))
        return mpi_t_leave(job, MPI_T_ERR_INVALID_HANDLE);
    if (!buf && !in) return mpi_t_leave(job, MPI_T_ERR_INVALID);
    if ((in || reset) && pvars[handle->idx].continuous) /* read-only */
        return mpi_t_leave(job, MPI_T_ERR_PVAR_NO_WRITE);
    if (buf) h_put(handle, h_value(job, handle), buf);
    if (reset) h_set(job, handle, 0);
    if (in)
        h_set(job, handle,
              handle->idx == PV_WAIT_TIME ? (uint64_t)(*(const double *)in * 1e9)
                                          : *(const unsigned long long *)in);
    return mpi_t_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(T_pvar_read);
int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return readwrite(session, handle, buf, NULL, false);
}

PMPI_WEAK(T_pvar_readreset);
int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return readwrite(session, handle, buf, NULL, true);
}

PMPI_WEAK(T_pvar_write);
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    return readwrite(session, handle, NULL, buf, false);
}
