/* The mpif.h / `use mpi` entry points that tools/fortran_gen.awk does not
 * generate, because their Fortran form is not the C one's by reference:
 * MPI_INIT and MPI_INIT_THREAD (no argc/argv), MPI_PCONTROL (no varargs), and
 * the attribute calls, whose Fortran values are INTEGER(KIND=MPI_ADDRESS_KIND)
 * (MPI-1's MPI_ATTR_GET/PUT: default INTEGER) where C stores a pointer.
 *
 * Invariants:
 *  - a value a Fortran program sets is boxed by libcourier right after the
 *    C call stored it (courier_f_attr_box: C then reads a pointer to it, as
 *    MPI-3.1 17.2.7 says), and read back as the value; a value C set reaches
 *    Fortran as the pointer's bits;
 *  - the predefined attributes, which C gives as a pointer to their value,
 *    reach Fortran as the value itself (MPI_WIN_BASE: the base address);
 *  - the calls are the C ones: their checks and error handlers apply.
 *
 * Also the calls that take Fortran procedures MPI calls back in another way
 * than C's: the keyval calls (the keyval is marked as Fortran's right after
 * the C call made it: src/api/mpi_f2c.c calls its copy and delete procedures,
 * every argument by reference), the predefined copy and delete procedures
 * (MPI_COMM_DUP_FN, MPI_NULL_COPY_FN, ...: Fortran's forms, called as the
 * program's are), and MPI_GREQUEST_START, whose procedures are reached through
 * a small record that lives as long as the request (freed after the free
 * procedure ran); they get the program's own EXTRA_STATE variable, by
 * reference, as MPICH and Open MPI give it (MPICH's greqf counts on it), so
 * that variable must outlive the request (mpi_f08's too: MPICH's greqf08
 * counts on it as well). MPI_OP_CREATE and the error handlers need
 * nothing of the kind: C calls those with every argument by reference already.
 * Last, MPI-4's MPI_INFO_GET_STRING (BUFLEN as Fortran counts it: no null
 * character), MPI_INFO_CREATE_ENV (no argc/argv) and MPI_STATUS_F082F/F2F08. */
#include "fortran.h"

CR_FEXPORT void mpi_init_(MPI_Fint *ierr)
{
    *ierr = MPI_Init(NULL, NULL);
}

CR_FEXPORT void pmpi_init_(MPI_Fint *ierr)
{
    *ierr = PMPI_Init(NULL, NULL);
}

CR_FEXPORT void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    *ierr = MPI_Init_thread(NULL, NULL, *required, provided);
}

CR_FEXPORT void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    *ierr = PMPI_Init_thread(NULL, NULL, *required, provided);
}

CR_FEXPORT void mpi_pcontrol_(MPI_Fint *level, MPI_Fint *ierr)
{
    *ierr = MPI_Pcontrol(*level);
}

CR_FEXPORT void pmpi_pcontrol_(MPI_Fint *level, MPI_Fint *ierr)
{
    *ierr = PMPI_Pcontrol(*level);
}

void courier_f_attr_box(int kind, int h, int kv); /* src/api/mpi_f2c.c */
int courier_f_attr_boxed(int kind, int h, int kv);

/* A value got through C as Fortran sees it: one a Fortran program set is
 * boxed (C reads a pointer to it), one C set is the pointer's bits. */
static MPI_Aint fvalue(int kind, int h, int kv, void *v)
{
    return courier_f_attr_boxed(kind, h, kv) ? *(MPI_Aint *)v : (MPI_Aint)v;
}

/* A communicator's predefined attribute: C gives a pointer to an int. */
static int comm_predefined(int keyval)
{
    return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

/* A window's predefined attribute, as Fortran sees it. */
static MPI_Aint win_value(MPI_Win win, int keyval, void *v)
{
    switch (keyval) {
    case MPI_WIN_BASE:
        return (MPI_Aint)v;
    case MPI_WIN_SIZE:
        return *(MPI_Aint *)v;
    case MPI_WIN_DISP_UNIT:
    case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL:
        return *(int *)v;
    default:
        return fvalue(2, win, keyval, v);
    }
}

#define ATTR_PAIR(pfx, PFX)                                                                        \
    CR_FEXPORT void pfx##mpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val,       \
                                            MPI_Fint *ierr)                                        \
    {                                                                                              \
        *ierr = PFX##MPI_Comm_set_attr(*comm, *keyval, (void *)*val);                              \
        if (*ierr == MPI_SUCCESS) courier_f_attr_box(0, *comm, *keyval);                           \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val,       \
                                            MPI_Fint *flag, MPI_Fint *ierr)                        \
    {                                                                                              \
        void *v = NULL;                                                                            \
        *ierr = PFX##MPI_Comm_get_attr(*comm, *keyval, &v, flag);                                  \
        if (*ierr == MPI_SUCCESS && *flag)                                                         \
            *val = comm_predefined(*keyval) ? *(int *)v : fvalue(0, *comm, *keyval, v);            \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val,            \
                                       MPI_Fint *ierr)                                             \
    {                                                                                              \
        *ierr = PFX##MPI_Attr_put(*comm, *keyval, (void *)(MPI_Aint)*val);                         \
        if (*ierr == MPI_SUCCESS) courier_f_attr_box(0, *comm, *keyval);                           \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val,            \
                                       MPI_Fint *flag, MPI_Fint *ierr)                             \
    {                                                                                              \
        void *v = NULL;                                                                            \
        *ierr = PFX##MPI_Attr_get(*comm, *keyval, &v, flag);                                       \
        if (*ierr == MPI_SUCCESS && *flag)                                                         \
            *val = comm_predefined(*keyval) ? *(int *)v : (MPI_Fint)fvalue(0, *comm, *keyval, v);  \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_win_set_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val,         \
                                           MPI_Fint *ierr)                                         \
    {                                                                                              \
        *ierr = PFX##MPI_Win_set_attr(*win, *keyval, (void *)*val);                                \
        if (*ierr == MPI_SUCCESS) courier_f_attr_box(2, *win, *keyval);                            \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val,         \
                                           MPI_Fint *flag, MPI_Fint *ierr)                         \
    {                                                                                              \
        void *v = NULL;                                                                            \
        *ierr = PFX##MPI_Win_get_attr(*win, *keyval, &v, flag);                                    \
        if (*ierr == MPI_SUCCESS && *flag) *val = win_value(*win, *keyval, v);                     \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_type_set_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val,       \
                                            MPI_Fint *ierr)                                        \
    {                                                                                              \
        *ierr = PFX##MPI_Type_set_attr(*type, *keyval, (void *)*val);                              \
        if (*ierr == MPI_SUCCESS) courier_f_attr_box(1, *type, *keyval);                           \
    }                                                                                              \
    CR_FEXPORT void pfx##mpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val,       \
                                            MPI_Fint *flag, MPI_Fint *ierr)                        \
    {                                                                                              \
        void *v = NULL;                                                                            \
        *ierr = PFX##MPI_Type_get_attr(*type, *keyval, &v, flag);                                  \
        if (*ierr == MPI_SUCCESS && *flag) *val = fvalue(1, *type, *keyval, v);                    \
    }

ATTR_PAIR(, )
ATTR_PAIR(p, P)

/* ---- keyvals with Fortran procedures ------------------------------------------ */

void courier_f_keyval_lang(int kv, int mpi1); /* src/api/mpi_f2c.c */

typedef void f_proc(void);

#define KEYVAL_CREATE(pfx, PFX, name, Name, Copy, Del)                                             \
    CR_FEXPORT void pfx##mpi_##name##_create_keyval_(f_proc *copy, f_proc *del, MPI_Fint *kv,      \
                                                     MPI_Aint *extra, MPI_Fint *ierr)              \
    {                                                                                              \
        *ierr = PFX##MPI_##Name##_create_keyval((Copy *)copy, (Del *)del, kv, (void *)*extra);     \
        if (*ierr == MPI_SUCCESS) courier_f_keyval_lang(*kv, 0);                                   \
    }

KEYVAL_CREATE(, , comm, Comm, MPI_Comm_copy_attr_function, MPI_Comm_delete_attr_function)
KEYVAL_CREATE(p, P, comm, Comm, MPI_Comm_copy_attr_function, MPI_Comm_delete_attr_function)
KEYVAL_CREATE(, , type, Type, MPI_Type_copy_attr_function, MPI_Type_delete_attr_function)
KEYVAL_CREATE(p, P, type, Type, MPI_Type_copy_attr_function, MPI_Type_delete_attr_function)
KEYVAL_CREATE(, , win, Win, MPI_Win_copy_attr_function, MPI_Win_delete_attr_function)
KEYVAL_CREATE(p, P, win, Win, MPI_Win_copy_attr_function, MPI_Win_delete_attr_function)

/* MPI-1: the extra state and the values are default INTEGERs. */
#define KEYVAL_CREATE1(pfx, PFX)                                                                   \
    CR_FEXPORT void pfx##mpi_keyval_create_(f_proc *copy, f_proc *del, MPI_Fint *kv,               \
                                            MPI_Fint *extra, MPI_Fint *ierr)                       \
    {                                                                                              \
        *ierr = PFX##MPI_Keyval_create((MPI_Copy_function *)copy, (MPI_Delete_function *)del, kv,  \
                                       (void *)(MPI_Aint)*extra);                                  \
        if (*ierr == MPI_SUCCESS) courier_f_keyval_lang(*kv, 1);                                   \
    }
KEYVAL_CREATE1(, )
KEYVAL_CREATE1(p, P)

/* The predefined copy and delete procedures, as Fortran declares them. */
#define PREDEF(name, T)                                                                            \
    CR_FEXPORT void mpi_##name##null_copy_fn_(MPI_Fint *h, MPI_Fint *kv, T *extra, T *in, T *out,  \
                                              MPI_Fint *flag, MPI_Fint *ierr)                      \
    {                                                                                              \
        (void)h, (void)kv, (void)extra, (void)in, (void)out;                                       \
        *flag = 0;                                                                                 \
        *ierr = MPI_SUCCESS;                                                                       \
    }                                                                                              \
    CR_FEXPORT void mpi_##name##dup_fn_(MPI_Fint *h, MPI_Fint *kv, T *extra, T *in, T *out,        \
                                        MPI_Fint *flag, MPI_Fint *ierr)                            \
    {                                                                                              \
        (void)h, (void)kv, (void)extra;                                                            \
        *out = *in;                                                                                \
        *flag = 1;                                                                                 \
        *ierr = MPI_SUCCESS;                                                                       \
    }                                                                                              \
    CR_FEXPORT void mpi_##name##null_delete_fn_(MPI_Fint *h, MPI_Fint *kv, T *val, T *extra,       \
                                                MPI_Fint *ierr)                                    \
    {                                                                                              \
        (void)h, (void)kv, (void)val, (void)extra;                                                 \
        *ierr = MPI_SUCCESS;                                                                       \
    }

PREDEF(comm_, MPI_Aint)
PREDEF(type_, MPI_Aint)
PREDEF(win_, MPI_Aint)
PREDEF(, MPI_Fint) /* MPI-1's MPI_NULL_COPY_FN, MPI_DUP_FN, MPI_NULL_DELETE_FN */

/* ---- generalized requests ----------------------------------------------------- */

typedef void f_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierr);
typedef void f_free_fn(MPI_Aint *extra, MPI_Fint *ierr);
typedef void f_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierr);
typedef struct f_greq {
    f_query_fn *query;
    f_free_fn *free;
    f_cancel_fn *cancel;
    MPI_Aint *extra; /* the program's variable */
} f_greq;

static int greq_query(void *x, MPI_Status *st)
{
    f_greq *g = x;
    MPI_Fint fst[MPI_STATUS_SIZE], ierr = MPI_SUCCESS;
    memcpy(fst, st, sizeof fst); /* what MPI filled in, for the fields the procedure leaves */
    g->query(g->extra, fst, &ierr);
    memcpy(st, fst, sizeof fst);
    return ierr;
}

static int greq_free(void *x)
{
    f_greq *g = x;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(g->extra, &ierr);
    free(g);
    return ierr;
}

static int greq_cancel(void *x, int complete)
{
    f_greq *g = x;
    MPI_Fint c = complete != 0, ierr = MPI_SUCCESS;
    g->cancel(g->extra, &c, &ierr);
    return ierr;
}

static int greq_start(__typeof__(MPI_Grequest_start) *start, f_proc *query, f_proc *gfree,
                      f_proc *cancel, MPI_Aint *extra, MPI_Fint *request)
{
    f_greq *g = malloc(sizeof *g);
    if (!g) return MPI_ERR_NO_MEM;
    *g = (f_greq){(f_query_fn *)query, (f_free_fn *)gfree, (f_cancel_fn *)cancel, extra};
    int rc = start(greq_query, greq_free, greq_cancel, g, request);
    if (rc != MPI_SUCCESS) free(g);
    return rc;
}

CR_FEXPORT void mpi_grequest_start_(f_proc *query, f_proc *gfree, f_proc *cancel, MPI_Aint *extra,
                                    MPI_Fint *request, MPI_Fint *ierr)
{
    *ierr = greq_start(MPI_Grequest_start, query, gfree, cancel, extra, request);
}

CR_FEXPORT void pmpi_grequest_start_(f_proc *query, f_proc *gfree, f_proc *cancel, MPI_Aint *extra,
                                     MPI_Fint *request, MPI_Fint *ierr)
{
    *ierr = greq_start(PMPI_Grequest_start, query, gfree, cancel, extra, request);
}

/* ---- MPI-4's info calls ----------------------------------------------------------- */

/* MPI_INFO_GET_STRING(INFO, KEY, BUFLEN, VALUE, FLAG, IERROR): at most BUFLEN
 * characters of the value (none when it is 0), blank-padded; BUFLEN gives back
 * the value's length (Fortran's has no null character to count). */
static int info_get_string(__typeof__(MPI_Info_get_string) *get, MPI_Fint info, const char *key,
                           size_t key_len, MPI_Fint *buflen, char *value, size_t value_len,
                           MPI_Fint *flag)
{
    char *k = cr_fstr_in(key, key_len);
    if (!k) return MPI_ERR_NO_MEM;
    int n = 0, f = 0;
    char none = 0;
    int rc = get(info, k, &n, &none, &f);
    char *v = NULL;
    if (rc == MPI_SUCCESS && f && *buflen > 0 && n > 0) {
        v = malloc((size_t)n);
        rc = v ? get(info, k, &n, v, &f) : MPI_ERR_NO_MEM;
    }
    free(k);
    if (rc == MPI_SUCCESS) {
        *flag = f;
        if (f) {
            if (v) {
                size_t len = strlen(v);
                if (len > (size_t)*buflen) len = (size_t)*buflen;
                v[len] = '\0';
                cr_fstr_out(value, value_len, v);
            }
            *buflen = n > 0 ? n - 1 : 0;
        }
    }
    free(v);
    return rc;
}

CR_FEXPORT void mpi_info_get_string_(MPI_Fint *info, const char *key, MPI_Fint *buflen, char *value,
                                     MPI_Fint *flag, MPI_Fint *ierr, size_t key_len,
                                     size_t value_len)
{
    *ierr =
        info_get_string(MPI_Info_get_string, *info, key, key_len, buflen, value, value_len, flag);
}

CR_FEXPORT void pmpi_info_get_string_(MPI_Fint *info, const char *key, MPI_Fint *buflen,
                                      char *value, MPI_Fint *flag, MPI_Fint *ierr, size_t key_len,
                                      size_t value_len)
{
    *ierr =
        info_get_string(PMPI_Info_get_string, *info, key, key_len, buflen, value, value_len, flag);
}

/* MPI_INFO_CREATE_ENV(INFO, IERROR): Fortran has no argc and argv to give. */
CR_FEXPORT void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierr)
{
    *ierr = MPI_Info_create_env(0, NULL, info);
}

CR_FEXPORT void pmpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierr)
{
    *ierr = PMPI_Info_create_env(0, NULL, info);
}

/* ---- MPI-4's status conversions between the two Fortran forms ------------------------ */

/* MPI_STATUS_F082F(F08_STATUS, F_STATUS, IERROR) and MPI_STATUS_F2F08: the
 * C calls (their checks: an ignore value is MPI_ERR_ARG). */
CR_FEXPORT void mpi_status_f082f_(MPI_F08_status *f08, MPI_Fint *f, MPI_Fint *ierr)
{
    *ierr = MPI_Status_f082f(f08, f);
}

CR_FEXPORT void pmpi_status_f082f_(MPI_F08_status *f08, MPI_Fint *f, MPI_Fint *ierr)
{
    *ierr = PMPI_Status_f082f(f08, f);
}

CR_FEXPORT void mpi_status_f2f08_(MPI_Fint *f, MPI_F08_status *f08, MPI_Fint *ierr)
{
    *ierr = MPI_Status_f2f08(f, f08);
}

CR_FEXPORT void pmpi_status_f2f08_(MPI_Fint *f, MPI_F08_status *f08, MPI_Fint *ierr)
{
    *ierr = PMPI_Status_f2f08(f, f08);
}
