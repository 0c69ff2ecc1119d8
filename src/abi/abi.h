/* The MPI-5 ABI's translation (libmpi_abi.so): what the wrappers (generated
 * abi_wrap.c, compiled against include/abi/mpi.h) and the tables (generated
 * abi_consts.c, compiled against courier's mpi.h) share. Neither header can
 * see the other's names, so this one speaks plain C: a courier handle is an
 * int, an ABI handle a uintptr_t.
 *
 * Invariants:
 *  - every predefined ABI handle is below ABI_PREDEF (0x400) and every courier
 *    handle but the null ones (0) has bit 30 set: an ABI handle at or above
 *    ABI_PREDEF is a courier handle as it is, one below it is read from
 *    abi_h_in (0 there: no such handle in courier, which reports the null
 *    handle as invalid). So a handle costs a compare and, for a constant, a
 *    load;
 *  - courier's values copied here (CR_*) are checked against courier's mpi.h
 *    where abi_consts.c compiles (_Static_assert), so a change there breaks
 *    the build, never a program. */
#ifndef COURIER_ABI_H
#define COURIER_ABI_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ABI_PREDEF 0x400u
/* courier's rank and tag sentinels, MPI_UNDEFINED (checked in abi_consts.c) */
#define ABI_CR_ANY_SOURCE (-2)
#define ABI_CR_PROC_NULL (-1)
#define ABI_CR_ROOT (-3)
#define ABI_CR_ANY_TAG (-1)
#define ABI_CR_IN_PLACE ((void *)-1) /* (checked by tests/abi only) */
#define ABI_CR_BUFFER_AUTOMATIC ((void *)1)
/* the ABI's (include/abi/mpi.h) */
#define ABI_ANY_SOURCE (-1)
#define ABI_ANY_TAG (-2)
#define ABI_PROC_NULL (-3)
#define ABI_ROOT (-4)
#define ABI_IN_PLACE ((void *)1)
#define ABI_BUFFER_AUTOMATIC ((void *)2)
#define ABI_UNWEIGHTED ((int *)10)
#define ABI_WEIGHTS_EMPTY ((int *)11)
#define ABI_DISTRIBUTE_DFLT_DARG 19
#define ABI_WIN_FLAVOR_CREATE 311 /* .._ALLOCATE, _DYNAMIC, _SHARED: the next three */
#define ABI_WIN_UNIFIED 321
#define ABI_WIN_SEPARATE 322

/* courier's MPI_Status (checked in abi_consts.c): it fits in the ABI's 32
 * bytes, the three public fields first. */
struct abi_cr_status {
    int source, tag, error, cancelled;
    long long bytes;
};

extern const int abi_h_in[ABI_PREDEF];

static inline int abi_hin(uintptr_t h)
{
    return __builtin_expect(h < ABI_PREDEF, 0) ? abi_h_in[h] : (int)(unsigned)h;
}
/* MPI_Comm_idup's new communicator is written into the program's slot when
 * the request completes: its low half (abi_gen.awk) */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the ABI's idup writes the low half");
/* A courier handle of a kind with no predefined handle but its null one. */
static inline uintptr_t abi_hout_plain(int h, uintptr_t null)
{
    return __builtin_expect(h != 0, 1) ? (uintptr_t)(unsigned)h : null;
}
/* The kinds with predefined handles (abi_consts.c). */
uintptr_t abi_hout_Comm(int h);
uintptr_t abi_hout_Group(int h);
uintptr_t abi_hout_Datatype(int h);
uintptr_t abi_hout_Op(int h);
uintptr_t abi_hout_Errhandler(int h);
uintptr_t abi_hout_Info(int h);
uintptr_t abi_hout_Message(int h);
#define abi_hout_Request(h) abi_hout_plain(h, 0x180)
#define abi_hout_Win(h) abi_hout_plain(h, 0x110)
#define abi_hout_File(h) abi_hout_plain(h, 0x118)
#define abi_hout_Session(h) abi_hout_plain(h, 0x120)

static inline int abi_rank_in(int r)
{
    if (__builtin_expect(r >= 0, 1)) return r;
    return r == ABI_ANY_SOURCE  ? ABI_CR_ANY_SOURCE
           : r == ABI_PROC_NULL ? ABI_CR_PROC_NULL
           : r == ABI_ROOT      ? ABI_CR_ROOT
                                : r;
}
static inline int abi_rank_out(int r)
{
    if (__builtin_expect(r >= 0, 1)) return r;
    return r == ABI_CR_ANY_SOURCE  ? ABI_ANY_SOURCE
           : r == ABI_CR_PROC_NULL ? ABI_PROC_NULL
           : r == ABI_CR_ROOT      ? ABI_ROOT
                                   : r;
}
static inline int abi_tag_in(int t)
{
    return __builtin_expect(t == ABI_ANY_TAG, 0) ? ABI_CR_ANY_TAG : t;
}
static inline int abi_tag_out(int t)
{
    return __builtin_expect(t == ABI_CR_ANY_TAG, 0) ? ABI_ANY_TAG : t;
}
static inline void *abi_buf_in(const void *p)
{
    return (void *)(__builtin_expect(p == ABI_IN_PLACE, 0) ? ABI_CR_IN_PLACE : p);
}
static inline void *abi_attach_in(void *p)
{
    return p == ABI_BUFFER_AUTOMATIC ? ABI_CR_BUFFER_AUTOMATIC : p;
}
/* what MPI_Buffer_detach and the others give back: the address attached */
static inline void abi_detach_out(void *buffer_addr)
{
    void **p = buffer_addr;
    if (*p == ABI_CR_BUFFER_AUTOMATIC) *p = ABI_BUFFER_AUTOMATIC;
}
int *abi_weights_in(const int *w); /* MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY */

/* Error codes: classes by their names, the program's codes (above
 * MPI_ERR_LASTCODE) shifted above the ABI's. */
int abi_err_out_slow(int code);
int abi_err_in(int code);
static inline int abi_err_out(int code)
{
    return __builtin_expect(code == 0, 1) ? 0 : abi_err_out_slow(code);
}

/* The other integer constants, by what they are (abi_consts.c). */
int abi_thread_in(int v), abi_thread_out(int v);
int abi_compare_out(int v);
int abi_topo_out(int v);
int abi_split_in(int v);
int abi_lock_in(int v);
int abi_combiner_out(int v);
int abi_order_in(int v);
int abi_distrib_in(int v);
int abi_typeclass_in(int v);
int abi_seek_in(int v);
int abi_keyval_in(int v), abi_keyval_out(int v);
int abi_mode_in(int v), abi_amode_out(int v);

/* Constants inside arrays and attribute values (abi_core.c). */
int abi_darg_in(int v); /* a distribution argument: MPI_DISTRIBUTE_DFLT_DARG or a number */
/* After MPI_Comm_spawn(_multiple) at the root of courier communicator c: the
 * error codes (as many as the n counts in np add up to) become the ABI's. */
void abi_errcodes_out(int c, int root, int *codes, const int *np, int n);
/* After a successful get_attr of courier keyval kv: a predefined attribute
 * whose value is a constant (MPI_HOST's MPI_PROC_NULL, MPI_IO's
 * MPI_ANY_SOURCE, a window's flavor and model) or an error code
 * (MPI_LASTUSEDCODE) points to the ABI's value instead (*(int **)val). */
void abi_attr_out(int kv, void *val);
/* After MPI_Type_get_contents of courier datatype dt: the distributions,
 * distribution arguments and orders among its integers (at most max) become
 * the ABI's. */
void abi_contents_out(int dt, long long max, int *ints);
/* Where MPI_LASTUSEDCODE's ABI value lives (the job's MPI state; abi_cb.c). */
int *abi_last_code_cell(void);

/* Statuses: courier's written into the ABI's, and back. */
static inline void abi_status_out(void *abi, const struct abi_cr_status *c)
{
    int *a = abi;
    a[0] = abi_rank_out(c->source);
    a[1] = abi_tag_out(c->tag);
    a[2] = abi_err_out(c->error);
    memcpy(a + 3, &c->cancelled, sizeof *c - 3 * sizeof(int));
}
static inline void abi_status_in(struct abi_cr_status *c, const void *abi)
{
    const int *a = abi;
    c->source = abi_rank_in(a[0]);
    c->tag = abi_tag_in(a[1]);
    c->error = abi_err_in(a[2]);
    memcpy(&c->cancelled, a + 3, sizeof *c - 3 * sizeof(int));
}

/* Scratch for a translated array of n elements of size sz: buf (room for
 * 16) when it fits, else malloc'ed (NULL: out of memory); abi_tmp_free
 * releases what was malloc'ed. */
static inline void *abi_tmp(void *buf, size_t n, size_t sz)
{
    return n <= 16 ? buf : malloc(n * sz);
}
static inline void abi_tmp_free(void *p, void *buf)
{
    if (p != buf) free(p);
}
/* The program's functions courier calls (user operations, error handlers):
 * courier calls one of ABI_CB_SLOTS trampolines of the kind (abi_cb_wrap.c),
 * which calls the function its slot holds with the ABI's handles. A slot is
 * taken once per distinct function and kept (abi_cb.c). MPI_Op_create_c's
 * functions (ABI_CB_OP_C) take the count as a long long (MPI_Count). */
enum {
    ABI_CB_OP,
    ABI_CB_OP_C,
    ABI_CB_COMM_EH,
    ABI_CB_WIN_EH,
    ABI_CB_FILE_EH,
    ABI_CB_SESSION_EH,
    ABI_CB_KINDS
};
#define ABI_CB_SLOTS 64
typedef void (*abi_fn)(void);
int abi_cb_add(int kind, abi_fn fn); /* its slot, or -1: every slot is taken */
abi_fn abi_cb_get(int kind, int slot);

/* courier's own copy function that duplicates an attribute (MPI_COMM_DUP_FN,
 * MPI_TYPE_DUP_FN, MPI_WIN_DUP_FN, MPI_DUP_FN), which the ABI names 1. */
enum { ABI_DUP_COMM, ABI_DUP_TYPE, ABI_DUP_WIN, ABI_DUP_MPI1 };
abi_fn abi_cr_dup_fn(int which);

/* Peers of courier communicator c (the remote group's size on an
 * intercommunicator): the length of MPI_Alltoallw's type arrays. */
int abi_peers(int c);
/* Neighbours of this rank in courier communicator c's topology, those it
 * receives from (in) or sends to (out): the lengths of
 * MPI_Neighbor_alltoallw's type arrays (0 without a topology). */
int abi_nbrs(int c, int out);

#endif
