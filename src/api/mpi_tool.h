/* The tools interface MPI_T (MPI-4.1 chapter 15): what its two files share.
 * mpi_tool.c has initialization, control variables (courier's COURIER_*
 * settings), enumerations, categories, the one time source and the event
 * calls (no event types); mpi_tool_pvar.c the performance variables and their
 * sessions.
 *
 * Invariants: the state hangs off the interface's state (job->mpi->tool, made
 * by the first MPI_T_init_thread, kept until the process ends); every call
 * but MPI_T_init_thread returns MPI_T_ERR_NOT_INITIALIZED while refs is 0;
 * every call runs under the engine lock (t_enter/t_leave) and returns its
 * error class without calling an error handler; a handle is checked against
 * the lists here before it is used (a freed or made-up one is reported, never
 * followed). */
#ifndef COURIER_MPI_TOOL_H
#define COURIER_MPI_TOOL_H

#include "mpi_impl.h"

/* A control variable's handle: which variable (the table's index). */
struct cr_mpit_cvar {
    struct cr_mpit_cvar *next; /* in mpi_tool.cvars */
    int idx;
};

/* A performance variable's handle in a session. A started one counts the
 * variable's change since base, on top of accum; a stopped one holds accum. */
struct cr_mpit_pvar {
    struct cr_mpit_pvar *next; /* in its session's list */
    int idx;
    bool started;
    uint64_t accum, base;
};

struct cr_mpit_session {
    struct cr_mpit_session *next; /* in mpi_tool.sessions */
    struct cr_mpit_pvar *handles;
};

typedef struct mpi_tool {
    int refs; /* MPI_T_init_thread calls not yet matched by MPI_T_finalize */
    struct cr_mpit_cvar *cvars;
    struct cr_mpit_session *sessions;
} mpi_tool;

/* Entry of every MPI_T call but init: the lock taken, *t set; NULL when the
 * interface is not initialized (the lock then released again). */
cr_job *mpi_t_enter(mpi_tool **t);
static inline int mpi_t_leave(cr_job *job, int rc)
{
    cr_unlock(job);
    return rc;
}

/* MPI_T's rule for a string out-argument: len NULL: nothing; *len 0 or buf
 * NULL: *len the length it needs (with the terminating NUL); else at most
 * *len - 1 characters and a NUL, *len what was written (with the NUL). */
void mpi_t_str(char *buf, int *len, const char *s);

/* The sessions' end (mpi_tool_pvar.c): every handle freed, at the last MPI_T_finalize. */
void mpi_t_sessions_free(cr_job *job, mpi_tool *t);
/* Categories of the performance variables (mpi_tool_pvar.c): how many pvars
 * category cat holds, and their indices (at most len of them) in idx. */
int mpi_t_pvars_of(int cat, int len, int *idx);

/* Categories, in the order of their indices (mpi_tool.c's table). */
enum {
    MPI_T_CAT_ROOT,
    MPI_T_CAT_MSG,
    MPI_T_CAT_WAIT,
    MPI_T_CAT_COLL,
    MPI_T_CAT_LAUNCH,
    MPI_T_NCAT
};

/* MPI_Error_string / MPI_Error_class of the MPI_T_ERR_* classes (mpi_env.c
 * asks): the class's name and text, NULL when code is none of them. */
const char *mpi_t_err_name(int code);
const char *mpi_t_err_text(int code);

#endif
