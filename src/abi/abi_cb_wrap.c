/* The MPI-5 ABI's calls that take a function of the program courier calls
 * back: MPI_Op_create, MPI_Comm_create_errhandler, MPI_Win_create_errhandler.
 * courier gets one of ABI_CB_SLOTS trampolines of the kind, which calls the
 * program's function (abi_cb.c's slot) with the ABI's handles and error
 * codes. Written against include/abi/mpi.h, as the generated wrappers are.
 *
 * Invariants: a trampoline translates what it passes (a datatype, a
 * communicator or window, an error code) as a wrapper translates its
 * results; a function the program gives takes a slot for good, and when all
 * ABI_CB_SLOTS of its kind are taken the call fails with MPI_ERR_INTERN. */
#include <mpi.h> /* include/abi/mpi.h */

#include "abi.h"

#define ABI_EXPORT(name)                                                                           \
    extern __typeof__(PMPI_##name) MPI_##name                                                      \
        __attribute__((weak, alias("PMPI_" #name), visibility("default")))

/* Every slot number, for the makers of trampolines below. */
#define ALL_SLOTS                                                                                  \
    X(0)                                                                                           \
    X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17)   \
        X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) X(32)  \
            X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46)    \
                X(47) X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59)      \
                    X(60) X(61) X(62) X(63)
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
#define X(s)                                                                                       \
    static void comm_eh_##s(int *h, int *code, ...)                                                \
    {                                                                                              \
        comm_eh_call(s, h, code);                                                                  \
    }                                                                                              \
    static void win_eh_##s(int *h, int *code, ...)                                                 \
    {                                                                                              \
        win_eh_call(s, h, code);                                                                   \
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
