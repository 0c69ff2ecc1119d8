/* The MPI-5 ABI's calls that take a function of the program courier calls
 * back: MPI_Op_create (and _c), the error handlers' create calls (communicators,
 * windows, files, sessions) (courier gets one of ABI_CB_SLOTS trampolines of the kind, which calls
 * the program's function, abi_cb.c's slot, with the ABI's handles and error codes); the keyvals'
 * create calls and MPI_Grequest_start (one trampoline, the program's functions reached through the
 * extra_state courier passes), MPI_Register_datarep likewise; and MPI_Pcontrol, whose variable
 * arguments no generated wrapper passes. Written against include/abi/mpi.h, as the generated
 * wrappers are.
 *
 * Invariants: a trampoline translates what it passes (a datatype, a
 * communicator or window, an error code) as a wrapper translates its
 * results; a function the program gives takes a slot for good, and when all
 * ABI_CB_SLOTS of its kind are taken the call fails with MPI_ERR_INTERN. */
#include <mpi.h> /* include/abi/mpi.h */
#include <stdlib.h>

#include "abi.h"

#define ABI_EXPORT(name)                                                                           \
    extern __typeof__(PMPI_##name) MPI_##name                                                      \
        __attribute__((weak, alias("PMPI_" #name), visibility("default")))

/* Every slot number, for the makers of trampolines below. */
#define ALL_SLOTS                                                                                  \
    X(0)                                                                                           \
    X(1)                                                                                           \
    X(2)                                                                                           \
    X(3)                                                                                           \
    X(4)                                                                                           \
    X(5)                                                                                           \
    X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21)    \
        X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) X(32) X(33) X(34) X(35) X(36)  \
            X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47) X(48) X(49) X(50)    \
                X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60) X(61) X(62) X(63)
_Static_assert(ABI_CB_SLOTS == 64, "ALL_SLOTS names ABI_CB_SLOTS slots");

/* ---- user operations ---- */
static void op_call(int slot, void *in, void *inout, int *len, int *dt)
{
    MPI_Datatype a = (MPI_Datatype)abi_hout_Datatype(*dt);
    ((MPI_User_function *)(void *)abi_cb_get(ABI_CB_OP, slot))(in, inout, len, &a);
}
#define X(s)                                                                                       \
    static void op_tramp_##s(void *in, void *inout, int *len, int *dt)                             \
    {                                                                                              \
        op_call(s, in, inout, len, dt);                                                            \
    }
ALL_SLOTS
#undef X
#define X(s) op_tramp_##s,
static void (*const op_tramps[ABI_CB_SLOTS])(void *, void *, int *, int *) = {ALL_SLOTS};
#undef X

int courier_PMPI_Op_create(void (*fn)(void *, void *, int *, int *), int commute, int *op);
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    int c = 0;
    if (!user_fn || !op) return abi_err_out(courier_PMPI_Op_create(NULL, commute, op ? &c : NULL));
    int slot = abi_cb_add(ABI_CB_OP, (abi_fn)(void *)user_fn);
    if (slot < 0) return MPI_ERR_INTERN;
    int rc = courier_PMPI_Op_create(op_tramps[slot], commute, &c);
    if (rc == 0) *op = (MPI_Op)abi_hout_Op(c);
    return abi_err_out(rc);
}
ABI_EXPORT(Op_create);

/* MPI_Op_create_c: the same with the large-count function (its own kind of
 * slots, the count a pointer to MPI_Count, courier's long long). */
static void op_c_call(int slot, void *in, void *inout, long long *len, int *dt)
{
    MPI_Datatype a = (MPI_Datatype)abi_hout_Datatype(*dt);
    MPI_Count n = (MPI_Count)*len;
    ((MPI_User_function_c *)(void *)abi_cb_get(ABI_CB_OP_C, slot))(in, inout, &n, &a);
}
#define X(s)                                                                                       \
    static void op_c_tramp_##s(void *in, void *inout, long long *len, int *dt)                     \
    {                                                                                              \
        op_c_call(s, in, inout, len, dt);                                                          \
    }
ALL_SLOTS
#undef X
#define X(s) op_c_tramp_##s,
static void (*const op_c_tramps[ABI_CB_SLOTS])(void *, void *, long long *, int *) = {ALL_SLOTS};
#undef X

int courier_PMPI_Op_create_c(void (*fn)(void *, void *, long long *, int *), int commute, int *op);
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    int c = 0;
    if (!user_fn || !op)
        return abi_err_out(courier_PMPI_Op_create_c(NULL, commute, op ? &c : NULL));
    int slot = abi_cb_add(ABI_CB_OP_C, (abi_fn)(void *)user_fn);
    if (slot < 0) return MPI_ERR_INTERN;
    int rc = courier_PMPI_Op_create_c(op_c_tramps[slot], commute, &c);
    if (rc == 0) *op = (MPI_Op)abi_hout_Op(c);
    return abi_err_out(rc);
}
ABI_EXPORT(Op_create_c);

/* ---- error handlers of communicators and windows ---- */
static void comm_eh_call(int slot, int *comm, int *code)
{
    MPI_Comm a = (MPI_Comm)abi_hout_Comm(*comm);
    int e = abi_err_out(*code);
    ((MPI_Comm_errhandler_function *)(void *)abi_cb_get(ABI_CB_COMM_EH, slot))(&a, &e);
}
static void win_eh_call(int slot, int *win, int *code)
{
    MPI_Win a = (MPI_Win)abi_hout_Win(*win);
    int e = abi_err_out(*code);
    ((MPI_Win_errhandler_function *)(void *)abi_cb_get(ABI_CB_WIN_EH, slot))(&a, &e);
}
static void file_eh_call(int slot, int *file, int *code)
{
    MPI_File a = (MPI_File)abi_hout_File(*file);
    int e = abi_err_out(*code);
    ((MPI_File_errhandler_function *)(void *)abi_cb_get(ABI_CB_FILE_EH, slot))(&a, &e);
}
static void session_eh_call(int slot, int *session, int *code)
{
    MPI_Session a = (MPI_Session)abi_hout_Session(*session);
    int e = abi_err_out(*code);
    ((MPI_Session_errhandler_function *)(void *)abi_cb_get(ABI_CB_SESSION_EH, slot))(&a, &e);
}
#define X(s)                                                                                       \
    static void comm_eh_##s(int *h, int *code, ...)                                                \
    {                                                                                              \
        comm_eh_call(s, h, code);                                                                  \
    }                                                                                              \
    static void win_eh_##s(int *h, int *code, ...)                                                 \
    {                                                                                              \
        win_eh_call(s, h, code);                                                                   \
    }                                                                                              \
    static void file_eh_##s(int *h, int *code, ...)                                                \
    {                                                                                              \
        file_eh_call(s, h, code);                                                                  \
    }                                                                                              \
    static void session_eh_##s(int *h, int *code, ...)                                             \
    {                                                                                              \
        session_eh_call(s, h, code);                                                               \
    }
ALL_SLOTS
#undef X
typedef void (*eh_tramp)(int *, int *, ...);
#define X(s) comm_eh_##s,
static const eh_tramp comm_ehs[ABI_CB_SLOTS] = {ALL_SLOTS};
#undef X
#define X(s) win_eh_##s,
static const eh_tramp win_ehs[ABI_CB_SLOTS] = {ALL_SLOTS};
#undef X
#define X(s) file_eh_##s,
static const eh_tramp file_ehs[ABI_CB_SLOTS] = {ALL_SLOTS};
#undef X
#define X(s) session_eh_##s,
static const eh_tramp session_ehs[ABI_CB_SLOTS] = {ALL_SLOTS};
#undef X

static int eh_create(int kind, abi_fn fn, const eh_tramp *tramps, int (*create)(eh_tramp, int *),
                     MPI_Errhandler *errhandler)
{
    int c = 0;
    if (!fn || !errhandler) return abi_err_out(create(NULL, errhandler ? &c : NULL));
    int slot = abi_cb_add(kind, fn);
    if (slot < 0) return MPI_ERR_INTERN;
    int rc = create(tramps[slot], &c);
    if (rc == 0) *errhandler = (MPI_Errhandler)abi_hout_Errhandler(c);
    return abi_err_out(rc);
}

int courier_PMPI_Comm_create_errhandler(eh_tramp fn, int *errhandler);
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return eh_create(ABI_CB_COMM_EH, (abi_fn)(void *)fn, comm_ehs,
                     courier_PMPI_Comm_create_errhandler, errhandler);
}
ABI_EXPORT(Comm_create_errhandler);

int courier_PMPI_Win_create_errhandler(eh_tramp fn, int *errhandler);
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return eh_create(ABI_CB_WIN_EH, (abi_fn)(void *)fn, win_ehs, courier_PMPI_Win_create_errhandler,
                     errhandler);
}
ABI_EXPORT(Win_create_errhandler);

int courier_PMPI_File_create_errhandler(eh_tramp fn, int *errhandler);
int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    return eh_create(ABI_CB_FILE_EH, (abi_fn)(void *)file_errhandler_fn, file_ehs,
                     courier_PMPI_File_create_errhandler, errhandler);
}
ABI_EXPORT(File_create_errhandler);

int courier_PMPI_Session_create_errhandler(eh_tramp fn, int *errhandler);
int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler)
{
    return eh_create(ABI_CB_SESSION_EH, (abi_fn)(void *)session_errhandler_fn, session_ehs,
                     courier_PMPI_Session_create_errhandler, errhandler);
}
ABI_EXPORT(Session_create_errhandler);

/* MPI_Pcontrol: its variable arguments are the profiler's; courier's takes
 * the level only. */
int courier_PMPI_Pcontrol(const int level, ...);
int PMPI_Pcontrol(const int level, ...)
{
    return abi_err_out(courier_PMPI_Pcontrol(level));
}
ABI_EXPORT(Pcontrol);

/* ---- attribute keyvals and generalized requests: these callbacks get an
 * extra_state, so courier gets one trampoline and, as the extra_state, what
 * the program gave (its functions and its extra_state). A keyval's is kept
 * until the process ends (an attribute set with a freed keyval still calls
 * its functions); a generalized request's is freed by its free function. ---- */
typedef struct abi_kv {
    abi_fn copy, del;
    void *extra;
    int kind; /* ABI_DUP_COMM, _TYPE, _WIN, _MPI1 (of communicators) */
} abi_kv;

/* The ABI's handle of courier handle h of the keyval's kind. */
static uintptr_t kv_handle(const abi_kv *k, int h)
{
    return k->kind == ABI_DUP_TYPE  ? abi_hout_Datatype(h)
           : k->kind == ABI_DUP_WIN ? abi_hout_Win(h)
                                    : abi_hout_Comm(h);
}
typedef int (*abi_copy_fn)(uintptr_t h, int keyval, void *extra, void *in, void *out, int *flag);
typedef int (*abi_del_fn)(uintptr_t h, int keyval, void *val, void *extra);
static int kv_copy(int h, int keyval, void *extra, void *in, void *out, int *flag)
{
    const abi_kv *k = extra;
    return abi_err_in(
        ((abi_copy_fn)k->copy)(kv_handle(k, h), abi_keyval_out(keyval), k->extra, in, out, flag));
}
static int kv_del(int h, int keyval, void *val, void *extra)
{
    const abi_kv *k = extra;
    return abi_err_in(((abi_del_fn)k->del)(kv_handle(k, h), abi_keyval_out(keyval), val, k->extra));
}
typedef int (*cr_copy_fn)(int, int, void *, void *, void *, int *);
typedef int (*cr_del_fn)(int, int, void *, void *);

/* Make a keyval with courier's create call: the ABI's null functions (0)
 * and duplicating function (1) are courier's own. */
static int kv_create(int kind, abi_fn copy, abi_fn del, void *extra, int *keyval,
                     int (*create)(cr_copy_fn, cr_del_fn, int *, void *))
{
    int c = 0;
    if (!keyval) return abi_err_out(create(NULL, NULL, NULL, extra));
    abi_kv *k = malloc(sizeof *k);
    if (!k) return abi_err_out(21 /* courier's MPI_ERR_NO_MEM */);
    *k = (abi_kv){copy, del, extra, kind};
    cr_copy_fn ccopy = (uintptr_t)(void *)copy == 0   ? NULL
                       : (uintptr_t)(void *)copy == 1 ? (cr_copy_fn)abi_cr_dup_fn(kind)
                                                      : kv_copy;
    cr_del_fn cdel = del ? kv_del : NULL;
    int rc = create(ccopy, cdel, &c, k);
    if (rc == 0)
        *keyval = abi_keyval_out(c);
    else
        free(k);
    return abi_err_out(rc);
}

int courier_PMPI_Comm_create_keyval(cr_copy_fn, cr_del_fn, int *, void *);
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
    return kv_create(ABI_DUP_COMM, (abi_fn)(void *)comm_copy_attr_fn,
                     (abi_fn)(void *)comm_delete_attr_fn, extra_state, comm_keyval,
                     courier_PMPI_Comm_create_keyval);
}
ABI_EXPORT(Comm_create_keyval);

int courier_PMPI_Type_create_keyval(cr_copy_fn, cr_del_fn, int *, void *);
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state)
{
    return kv_create(ABI_DUP_TYPE, (abi_fn)(void *)type_copy_attr_fn,
                     (abi_fn)(void *)type_delete_attr_fn, extra_state, type_keyval,
                     courier_PMPI_Type_create_keyval);
}
ABI_EXPORT(Type_create_keyval);

int courier_PMPI_Win_create_keyval(cr_copy_fn, cr_del_fn, int *, void *);
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state)
{
    return kv_create(ABI_DUP_WIN, (abi_fn)(void *)win_copy_attr_fn,
                     (abi_fn)(void *)win_delete_attr_fn, extra_state, win_keyval,
                     courier_PMPI_Win_create_keyval);
}
ABI_EXPORT(Win_create_keyval);

int courier_PMPI_Keyval_create(cr_copy_fn, cr_del_fn, int *, void *);
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return kv_create(ABI_DUP_MPI1, (abi_fn)(void *)copy_fn, (abi_fn)(void *)delete_fn, extra_state,
                     keyval, courier_PMPI_Keyval_create);
}
ABI_EXPORT(Keyval_create);

/* ---- generalized requests ---- */
typedef struct abi_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
} abi_greq;

static int greq_query(void *extra, struct abi_cr_status *st)
{
    const abi_greq *g = extra;
    MPI_Status a;
    abi_status_out(&a, st);
    int rc = g->query(g->extra, &a);
    abi_status_in(st, &a);
    return abi_err_in(rc);
}
static int greq_free(void *extra)
{
    abi_greq *g = extra;
    int rc = g->free(g->extra);
    free(g);
    return abi_err_in(rc);
}
static int greq_cancel(void *extra, int complete)
{
    const abi_greq *g = extra;
    return abi_err_in(g->cancel(g->extra, complete));
}

int courier_PMPI_Grequest_start(int (*)(void *, struct abi_cr_status *), int (*)(void *),
                                int (*)(void *, int), void *, int *);
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    int c = 0;
    if (!query_fn || !free_fn || !cancel_fn || !request)
        return abi_err_out(
            courier_PMPI_Grequest_start(NULL, NULL, NULL, extra_state, request ? &c : NULL));
    abi_greq *g = malloc(sizeof *g);
    if (!g) return abi_err_out(21 /* courier's MPI_ERR_NO_MEM */);
    *g = (abi_greq){query_fn, free_fn, cancel_fn, extra_state};
    int rc = courier_PMPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &c);
    if (rc == 0)
        *request = (MPI_Request)abi_hout_Request(c);
    else
        free(g);
    return abi_err_out(rc);
}
ABI_EXPORT(Grequest_start);

/* ---- data representations: the program's functions in the extra state ---- */
typedef struct {
    MPI_Datarep_conversion_function *read, *write;
    MPI_Datarep_extent_function *extent;
    void *extra;
} abi_datarep; /* kept until the process ends, as the representation is */

static int datarep_conv(MPI_Datarep_conversion_function *fn, void *userbuf, int dt, int count,
                        void *filebuf, long long position, void *extra)
{
    return abi_err_in(fn(userbuf, (MPI_Datatype)abi_hout_Datatype(dt), count, filebuf,
                         (MPI_Offset)position, extra));
}
static int datarep_read(void *userbuf, int dt, int count, void *filebuf, long long position,
                        void *extra)
{
    const abi_datarep *d = extra;
    return datarep_conv(d->read, userbuf, dt, count, filebuf, position, d->extra);
}
static int datarep_write(void *userbuf, int dt, int count, void *filebuf, long long position,
                         void *extra)
{
    const abi_datarep *d = extra;
    return datarep_conv(d->write, userbuf, dt, count, filebuf, position, d->extra);
}
static int datarep_extent(int dt, intptr_t *file_extent, void *extra)
{
    const abi_datarep *d = extra;
    MPI_Aint e = 0;
    int rc = d->extent((MPI_Datatype)abi_hout_Datatype(dt), &e, d->extra);
    *file_extent = (intptr_t)e;
    return abi_err_in(rc);
}

typedef int (*cr_datarep_conv)(void *, int, int, void *, long long, void *);
int courier_PMPI_Register_datarep(const char *datarep, cr_datarep_conv read_conversion_fn,
                                  cr_datarep_conv write_conversion_fn,
                                  int (*dtype_file_extent_fn)(int, intptr_t *, void *),
                                  void *extra_state);
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    if (!dtype_file_extent_fn) /* courier reports it */
        return abi_err_out(courier_PMPI_Register_datarep(datarep, NULL, NULL, NULL, extra_state));
    abi_datarep *d = malloc(sizeof *d);
    if (!d) return MPI_ERR_NO_MEM;
    *d = (abi_datarep){read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, extra_state};
    int rc = courier_PMPI_Register_datarep(datarep, read_conversion_fn ? datarep_read : NULL,
                                           write_conversion_fn ? datarep_write : NULL,
                                           datarep_extent, d);
    if (rc) free(d);
    return abi_err_out(rc);
}
ABI_EXPORT(Register_datarep);

/* The same for MPI_Register_datarep_c: the counts are MPI_Count. */
typedef struct {
    MPI_Datarep_conversion_function_c *read, *write;
    MPI_Datarep_extent_function *extent;
    void *extra;
} abi_datarep_c;

static int datarep_conv_c(MPI_Datarep_conversion_function_c *fn, void *userbuf, int dt,
                          long long count, void *filebuf, long long position, void *extra)
{
    return abi_err_in(fn(userbuf, (MPI_Datatype)abi_hout_Datatype(dt), (MPI_Count)count, filebuf,
                         (MPI_Offset)position, extra));
}
static int datarep_read_c(void *userbuf, int dt, long long count, void *filebuf, long long position,
                          void *extra)
{
    const abi_datarep_c *d = extra;
    return datarep_conv_c(d->read, userbuf, dt, count, filebuf, position, d->extra);
}
static int datarep_write_c(void *userbuf, int dt, long long count, void *filebuf,
                           long long position, void *extra)
{
    const abi_datarep_c *d = extra;
    return datarep_conv_c(d->write, userbuf, dt, count, filebuf, position, d->extra);
}
static int datarep_extent_c(int dt, intptr_t *file_extent, void *extra)
{
    const abi_datarep_c *d = extra;
    MPI_Aint e = 0;
    int rc = d->extent((MPI_Datatype)abi_hout_Datatype(dt), &e, d->extra);
    *file_extent = (intptr_t)e;
    return abi_err_in(rc);
}

typedef int (*cr_datarep_conv_c)(void *, int, long long, void *, long long, void *);
int courier_PMPI_Register_datarep_c(const char *datarep, cr_datarep_conv_c read_conversion_fn,
                                    cr_datarep_conv_c write_conversion_fn,
                                    int (*dtype_file_extent_fn)(int, intptr_t *, void *),
                                    void *extra_state);
int PMPI_Register_datarep_c(const char *datarep,
                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    if (!dtype_file_extent_fn) /* courier reports it */
        return abi_err_out(courier_PMPI_Register_datarep_c(datarep, NULL, NULL, NULL, extra_state));
    abi_datarep_c *d = malloc(sizeof *d);
    if (!d) return MPI_ERR_NO_MEM;
    *d =
        (abi_datarep_c){read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, extra_state};
    int rc = courier_PMPI_Register_datarep_c(datarep, read_conversion_fn ? datarep_read_c : NULL,
                                             write_conversion_fn ? datarep_write_c : NULL,
                                             datarep_extent_c, d);
    if (rc) free(d);
    return abi_err_out(rc);
}
ABI_EXPORT(Register_datarep_c);
