/* Shared state and helpers of the MPI interface (src/api/mpi_*.c).
 *
 * The interface only translates: point-to-point calls end in cr_send / cr_isend
 * / cr_irecv_call, collectives in src/coll; this header holds the handle tables
 * the translation needs (communicators, groups, datatypes, operations,
 * requests) and the error policy.
 *
 * Invariants:
 *  - a handle is an int whose bits 26..30 say its kind and whose low bits index
 *    the kind's table; a stale, freed or wrong-kind handle is detected and
 *    reported, never dereferenced;
 *  - every entry point takes the engine lock (mpi_enter) and releases it on
 *    every return path (mpi_leave); errors go through mpi_fail, which applies
 *    the communicator's error handler (fatal by default) before returning the
 *    code, and a call that fails has changed nothing;
 *  - under MPI_THREAD_MULTIPLE the lock is real (otherwise a no-op until a
 *    progress thread exists), and a call that waits or runs a user callback
 *    releases it meanwhile, so another thread's call may grow any table then:
 *    what a call keeps a pointer to across a wait never moves (communicators,
 *    groups, datatypes, requests are allocated one by one or in chunks), and
 *    what it reads from a table that does move (keyvals, operations, error
 *    handlers) it copies before it lets go of the lock;
 *  - each communicator owns two engine contexts, ctx (point-to-point) and
 *    ctx + 1 (its collectives), both in MPI_CTX_BASE..0xffff and free on every
 *    member when it is made: a pair free on all of the parent's members (agreed
 *    by a collective over the parent; for an intercommunicator, on every
 *    member of both groups: mpi_inter.c); MPI_Comm_free gives the pair back once no
 *    receive is pending and no message waits on it here (mpi_comm.c). */
#ifndef COURIER_MPI_IMPL_H
#define COURIER_MPI_IMPL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../coll/coll.h"
/* libcourier defines the MPI-1 calls MPI-3.0 removed and names their
 * combiners (mpi_legacy.c, mpi_check.c): it sees what a program opts into. */
#ifndef OMPI_ENABLE_MPI1_COMPAT
#define OMPI_ENABLE_MPI1_COMPAT 1
#endif
#include "courier/mpi.h"

/* The profiling interface (MPI-3.1 §14.2): every call is defined as PMPI_name,
 * and MPI_name is a weak alias of it, declared right before the definition with
 * PMPI_WEAK(name). A tool (or program) that defines MPI_name itself replaces the
 * alias, in a static link as in a shared one, and reaches courier through
 * PMPI_name. Calls made inside courier use the PMPI_ names, so a tool sees only
 * the program's calls. */
#define PMPI_WEAK(name)                                                                            \
    extern __typeof__(MPI_##name) PMPI_##name __attribute__((visibility("default")));              \
    extern __typeof__(PMPI_##name) MPI_##name                                                      \
        __attribute__((weak, alias("PMPI_" #name), visibility("default")))

#define MPI_CTX_BASE 0x2000
#define MPI_CTX_WORLD MPI_CTX_BASE
#define MPI_CTX_SELF (MPI_CTX_BASE + 2)
#define MPI_CTX_FIRST_FREE (MPI_CTX_BASE + 4)
#define MPI_CTX_PAIRS ((0xffff - MPI_CTX_FIRST_FREE) / 2)
#define MPI_CTX_WORDS ((MPI_CTX_PAIRS + 63) / 64)

#define H_KIND_MASK 0x7c000000u
#define H_IDX_MASK 0x03ffffffu
#define K_COMM 0x44000000u
#define K_GROUP 0x48000000u
#define K_TYPE 0x4c000000u
#define K_ERRH 0x54000000u
#define K_OP 0x58000000u
#define K_KEYVAL 0x64000000u
#define K_INFO 0x5c000000u /* MPI_Info (mpi_info.c) */
#define K_WIN 0x60000000u  /* MPI_Win (mpi_win.c) */

static inline bool h_is(int h, unsigned kind)
{
    return ((unsigned)h & H_KIND_MASK) == kind && !((unsigned)h & 0x80000000u);
}
static inline int h_idx(int h)
{
    return (int)((unsigned)h & H_IDX_MASK);
}

/* ---- datatypes ------------------------------------------------------------ */

/* One entry of a type map (mpi_type.c): a run of 'len' bytes at 'off' holding
 * basic elements of 'esz' bytes each; rep 0: just that run (a plain run),
 * else repeated as the type's rep[rep - 1] says. */
typedef struct mpi_blk {
    ptrdiff_t off;
    size_t len;
    uint32_t esz, rep;
} mpi_blk;

/* How an entry's run repeats: n[0] times s[0] bytes apart, the whole n[1]
 * times s[1] bytes apart, so the runs are at off + j*s[1] + i*s[0], in the
 * order j outer, i inner (n[1] == 1: one level). */
typedef struct mpi_rep {
    size_t n[2];
    ptrdiff_t s[2];
} mpi_rep;

/* An attribute (MPI_*_set_attr), and an object's list of them in the order set. */
typedef struct mpi_attr {
    int keyval;
    void *val;
    bool boxed; /* set from Fortran: val is a malloc'd MPI_Aint holding the value (mpi_attr.c) */
} mpi_attr;
typedef struct mpi_attrs {
    int n;
    mpi_attr *a;
} mpi_attrs;

/* The predefined datatypes are table indices 1..MPI_NPREDEF-1 (mpi_type.c). */
#define MPI_NPREDEF 0x45

/* gfortran's 16-byte kinds (MPI_INTEGER16, MPI_REAL16, MPI_COMPLEX32):
 * INTEGER(16) is __int128, REAL(16) IEEE quad precision (__float128 on x86-64,
 * long double where that is quad). Where C has no such type they are 16 (32)
 * bytes that move but take no reduction (MPI_HAVE_QUAD / MPI_HAVE_I128 0). */
#if defined(__SIZEOF_INT128__)
#define MPI_HAVE_I128 1
__extension__ typedef __int128 mpi_i128;
#else
#define MPI_HAVE_I128 0
typedef struct {
    _Alignas(16) unsigned char b[16];
} mpi_i128;
#endif
#if defined(__SIZEOF_FLOAT128__)
#define MPI_HAVE_QUAD 1
typedef __float128 mpi_quad;
#elif __LDBL_MANT_DIG__ == 113
#define MPI_HAVE_QUAD 1
typedef long double mpi_quad;
#else
#define MPI_HAVE_QUAD 0
typedef struct {
    _Alignas(16) unsigned char b[16];
} mpi_quad;
#endif
typedef struct {
    mpi_quad re, im;
} mpi_cquad;

typedef struct mpi_type {
    int idx; /* its place in the table (the handle's index) */
    bool used, predef, committed;
    bool dead;                  /* freed by the program, kept for pending receives */
    int refs;                   /* the handle + receives still to unpack into it */
    size_t size;                /* bytes of data in one instance */
    ptrdiff_t lb, ub;           /* extent = ub - lb */
    ptrdiff_t true_lb, true_ub; /* of the data itself */
    size_t align;               /* for the padding of struct types */
    int nblk;                   /* type map of one instance, in order: the entries */
    mpi_blk *blk;               /* (predefined: points at 'one', so a type never moves) */
    mpi_blk one[2];             /* storage for predefined maps */
    mpi_rep *rep;               /* the repetitions the entries name */
    size_t reps;                /* the list of entries repeated reps times (>= 1), */
    ptrdiff_t rstride;          /* ... rstride bytes apart (mpi_type.c) */
    size_t nelem;               /* basic elements in one instance */
    size_t unit;                /* the size every basic element's is a multiple of (the gcd
                                   of theirs; 0: no data): a message whose length is not a
                                   multiple of it cannot match a receive of this type */
    int base;                   /* predefined type every element has, or -1 */
    bool contig;                /* one run, from offset 0, size == extent */
    bool raw;                   /* count instances are count*extent bytes of 'base' */
    char name[MPI_MAX_OBJECT_NAME];
    size_t xsize;        /* bytes of one instance in "external32" (MPI_Pack_external) */
    struct mpi_env *env; /* how a derived type was made (NULL: predefined) */
    mpi_attrs attrs;     /* attributes (MPI_Type_set_attr) */
    /* courier run --check (mpi_check.c): the type signature of one instance,
     * made on first use: a hash of its basic types in type-map order, and
     * the hash's base raised to their number (chk_set: both made). */
    uint64_t chk_h, chk_p;
    bool chk_set;
} mpi_type;

/* The constructor call a derived type came from (MPI_Type_get_envelope):
 * copies of its arguments; 'types' are table indices of the datatypes, each
 * derived one holding a reference (refs) until this type is released. A
 * large-count constructor (_c) given a value past INT_MAX records the
 * envelope MPI-4.1 §5.1.13 gives its _c form: nc large counts (all of its
 * values; a subarray's sizes, subsizes and starts; a darray's gsizes), the
 * rest as ints, no aints, as MPI_Type_get_contents_c returns them. */
typedef struct mpi_env {
    int combiner, ni, na, nd, nc;
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    int *types;
} mpi_env;
/* reps groups of n consecutive instances of old, group r at disp + r*stride. */
typedef void mpi_group_fn(void *ctx, const mpi_type *old, ptrdiff_t disp, size_t n, size_t reps,
                          ptrdiff_t stride);
/* The extents a constructor's counts are in: memory's (a NULL units), or a
 * file representation's (mpi_type_file_layout). */
typedef struct mpi_units {
    ptrdiff_t (*ext)(struct mpi_units *u, const mpi_type *t);
} mpi_units;
/* The groups of old-type instances a type made as e holds, in type-map order,
 * with counts of extents in u's (mpi_type_new.c). */
void mpi_type_groups(const mpi_env *e, mpi_units *u, mpi_group_fn *cb, void *ctx);
/* Value k of e's arguments by its place in the int form's envelope, whichever
 * form recorded it. */
MPI_Count mpi_env_at(const mpi_env *e, MPI_Count k);
/* Call cb(ctx, old, disp, n) for each run of n instances of 'old' at 'disp'
 * that a type made as e holds, in type-map order. */
void mpi_type_enum(const mpi_env *e,
                   void (*cb)(void *ctx, const mpi_type *old, ptrdiff_t disp, size_t n), void *ctx);
/* A new live handle made like t (map, envelope, commit state): what
 * MPI_Type_get_contents returns for a derived type. */
int mpi_type_clone(cr_job *job, const char *call, int idx, MPI_Datatype *out);
/* The layout of one instance of t in a file's data representation (MPI-3.1
 * 13.5.2): every basic element takes its bytes in the file (psz[i] for
 * predefined type i, as the representation's extent function says; NULL:
 * its "external32" size); displacements a constructor counts in extents of
 * its old type (contiguous, vector, indexed, subarray, darray) are scaled to
 * that type's extent in the file, those given in bytes (hvector, hindexed,
 * struct, resized) are kept as given. Gives the runs of its elements in
 * type-map order (run may be NULL), its bounds in the file and its bytes of
 * data there (any of the three pointers may be NULL); MPI_ERR_NO_MEM or
 * MPI_SUCCESS. */
int mpi_type_file_layout(const mpi_type *t, const MPI_Aint *psz,
                         void (*run)(void *ctx, ptrdiff_t off, size_t len), void *ctx,
                         ptrdiff_t *lb, ptrdiff_t *ub, size_t *size);
/* Mark seen[i] for every predefined type i that t is made of (MPI_NPREDEF
 * entries). */
void mpi_type_bases(const mpi_type *t, unsigned char *seen);
/* MPI_Type_contiguous_c, MPI_Type_vector_c and MPI_Type_create_hvector_c
 * with a value past INT_MAX (mpi_type_new.c): the envelope holds the counts
 * (stride: in extents of old for the vector, bytes for the hvector); count
 * only for contiguous. */
int mpi_type_vector_c(const char *call, int combiner, MPI_Count count, MPI_Count bl,
                      MPI_Count stride, MPI_Datatype old, MPI_Datatype *newtype);
/* An array argument of a datatype constructor as the call passed it: int,
 * MPI_Aint or MPI_Count elements. The int and _c forms of the indexed,
 * struct, subarray and darray constructors share one body over these; it
 * records the int form's envelope when every value fits an int, else the
 * large-count one (MPI_Type_get_envelope_c). */
typedef struct mpi_arr {
    const void *p;
    enum { MPI_ARR_INT, MPI_ARR_AINT, MPI_ARR_COUNT } kind;
} mpi_arr;
/* The indexed family and struct (mpi_type_new.c): count blocks of bls[i]
 * instances (or bl1 for all, when bls.p is NULL) at displacements d (in
 * extents of old for MPI_COMBINER_INDEXED(_BLOCK), else bytes), of old or,
 * for MPI_COMBINER_STRUCT, of types[i]. */
int mpi_type_indexed(const char *call, int combiner, MPI_Count count, mpi_arr bls, MPI_Count bl1,
                     mpi_arr d, const MPI_Datatype *types, MPI_Datatype old, MPI_Datatype *newtype);
int mpi_type_subarray(const char *call, int nd, mpi_arr sizes, mpi_arr subs, mpi_arr starts,
                      int order, MPI_Datatype old, MPI_Datatype *newtype);
int mpi_type_darray(const char *call, int size, int rank, int nd, mpi_arr gsizes, const int *dists,
                    const int *dargs, const int *psizes, int order, MPI_Datatype old,
                    MPI_Datatype *newtype);

/* The greatest common divisor (of two element sizes: mpi_type's unit). */
static inline size_t mpi_gcd(size_t a, size_t b)
{
    while (b) {
        size_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}
/* t's unit less one where it is a power of two (every predefined type's is), else 0: the
 * bits no length of a message that matches a receive of t has set. */
static inline uint32_t mpi_unit_mask(const mpi_type *t)
{
    return t->unit > 1 && t->unit <= (1u << 31) && !(t->unit & (t->unit - 1))
               ? (uint32_t)(t->unit - 1)
               : 0;
}
static inline ptrdiff_t type_extent(const mpi_type *t)
{
    return t->ub - t->lb;
}

/* How entry e of t repeats (a plain run: once). */
static inline const mpi_rep *mpi_rep_of(const mpi_type *t, const mpi_blk *e)
{
    static const mpi_rep once = {{1, 1}, {0, 0}};
    return e->rep ? &t->rep[e->rep - 1] : &once;
}

/* Made by MPI_Type_create_f90_*: predefined for the program (not freed). */
bool mpi_type_is_f90(const mpi_type *t);
/* "MPI_LB" or "MPI_UB" for MPI-1's bound markers, else NULL (mpi_legacy.c). */
const char *mpi_legacy_marker_name(MPI_Datatype dt);
/* Types of the interface. */
mpi_type *mpi_type_at(int idx); /* also a freed one still referenced */
/* Slot i of the table, its storage made on first use (mpi_type.c). */
mpi_type *mpi_type_slot(cr_job *job, const char *call, int i);
void mpi_type_unref(int idx);
void mpi_types_init(cr_job *job);
/* Validate a datatype for communication (live and committed); 0 or an error code. */
int mpi_type_check(cr_job *job, MPI_Comm comm, const char *call, MPI_Datatype dt, mpi_type **out);
/* The same for count elements of dt to move: with count 0, MPI_DATATYPE_NULL
 * too (nothing moves; *out is then MPI_BYTE's). MPICH accepts it, and codes
 * pass it for the peers they exchange nothing with (PIO, ESMF). */
int mpi_type_check_n(cr_job *job, MPI_Comm comm, const char *call, MPI_Datatype dt, MPI_Count count,
                     mpi_type **out);
void mpi_pack_data(const mpi_type *t, const void *in, size_t count, char *out);
/* Unpack 'n' bytes (at most count instances); a short tail fills a prefix. */
void mpi_unpack_data(const mpi_type *t, const char *in, size_t n, void *out, size_t count);
/* The basic elements of t in bytes, or MPI_ELEMENTS_PART when the bytes end
 * inside one (no whole number of elements: MPI_Get_elements says MPI_UNDEFINED). */
#define MPI_ELEMENTS_PART SIZE_MAX
size_t mpi_elements(const mpi_type *t, size_t bytes);
/* The contiguous runs of count instances of t (offsets from the buffer), in
 * the order their bytes are packed; adjacent runs come as one. */
void mpi_type_runs(const mpi_type *t, size_t count,
                   void (*cb)(void *ctx, ptrdiff_t off, size_t len), void *ctx);

/* ---- groups and communicators --------------------------------------------- */

typedef struct mpi_group {
    bool used;
    int refs;
    int size;
    int *ranks;  /* job rank of each member */
    int session; /* MPI_Group_from_session_pset's session: its slot + 1; 0: none */
} mpi_group;

/* Attributes of communicators, datatypes and windows (mpi_attr.c): one keyval
 * table, one algorithm. The callbacks' types are MPI's own (every handle is an
 * int), without the object's name. */
typedef enum { MPI_OBJ_COMM, MPI_OBJ_TYPE, MPI_OBJ_WIN } mpi_obj_kind;
typedef int mpi_attr_copy_fn(int h, int keyval, void *extra, void *in, void *out, int *flag);
typedef int mpi_attr_del_fn(int h, int keyval, void *val, void *extra);
/* How a keyval's callbacks are called: as C's, or as Fortran procedures
 * (every argument by reference, the code in a last IERROR; the values and
 * extra state INTEGER(KIND=MPI_ADDRESS_KIND), or MPI-1's default INTEGER):
 * mpi_attr_call_copy/_del, mpi_f2c.c. */
typedef enum { MPI_ATTR_C, MPI_ATTR_F, MPI_ATTR_F_INT } mpi_attr_lang;
typedef struct mpi_keyval {
    mpi_obj_kind kind;
    bool used; /* the handle is live */
    int refs;  /* attributes set with it, on any object */
    mpi_attr_copy_fn *copy;
    mpi_attr_del_fn *del;
    void *extra;
    mpi_attr_lang lang;
} mpi_keyval;
int mpi_attr_call_copy(mpi_attr_lang lang, mpi_attr_copy_fn *fn, int h, int kv, void *extra,
                       void *in, void **out, int *flag);
int mpi_attr_call_del(mpi_attr_lang lang, mpi_attr_del_fn *fn, int h, int kv, void *val,
                      void *extra);
/* A new keyval's handle (fatal when out of memory). */
int mpi_keyval_create(cr_job *job, const char *call, mpi_obj_kind kind, mpi_attr_copy_fn *copy,
                      mpi_attr_del_fn *del, void *extra);
/* Free *kv (set to MPI_KEYVAL_INVALID); false when it is no keyval of this kind. */
bool mpi_keyval_free(int *kv, mpi_obj_kind kind);
bool mpi_keyval_live(int kv, mpi_obj_kind kind);      /* created, not freed, of this kind */
bool mpi_keyval_set_lang(int kv, mpi_attr_lang lang); /* false: no live keyval */
/* Box the value of kv on h as Fortran's (false: none there); whether it is. */
bool mpi_attr_box(cr_job *job, mpi_obj_kind kind, int h, int kv);
bool mpi_attr_boxed(mpi_obj_kind kind, int h, int kv);
mpi_attr *mpi_attr_find(mpi_obj_kind kind, int h, int kv); /* NULL: no value there */
/* Set (the old value's delete callback first), delete one (its callback first),
 * copy all on a dup (flag from each copy callback), delete all (the last set
 * first): MPI_SUCCESS or the first failing callback's code (*kv_out: its keyval);
 * what failed stays. */
int mpi_attr_set(cr_job *job, mpi_obj_kind kind, int h, int kv, void *val);
int mpi_attr_delete(cr_job *job, mpi_obj_kind kind, int h, int kv);
int mpi_attrs_copy(cr_job *job, mpi_obj_kind kind, int oldh, int newh, int *kv_out);
int mpi_attrs_delete(cr_job *job, mpi_obj_kind kind, int h, int *kv_out);
void mpi_attrs_forget(mpi_attrs *l, mpi_obj_kind kind); /* no callbacks: they ran, or failed */
/* The code a failing callback's return is reported as: itself when it is an
 * error code MPI knows (predefined, or one the program added), else
 * MPI_ERR_OTHER. */
int mpi_attr_cb_class(int rc);
/* A predefined error code or class other than MPI_SUCCESS, or one the program
 * added and has not removed (the engine lock held). */
bool mpi_err_known(int code);
mpi_attrs *mpi_win_attrs(int h); /* mpi_win.c; NULL: not a live window */

typedef struct mpi_comm {
    bool used;
    int idx; /* its slot in job->mpi->comms (the handle's index) */
    int size, me;
    int *ranks;     /* job rank of each member; NULL: member i is job rank i */
    int *inv;       /* job rank -> member (lazy), -1: not a member */
    uint16_t ctx;   /* point-to-point; ctx + 1 is in g */
    cr_group g;     /* for the collective layer */
    cr_trunc trunc; /* a collective's message longer than its receive (g.trunc, ig's) */
    MPI_Errhandler errh;
    mpi_attrs attrs;
    int ctx_hint;  /* word of the context map where creating calls over it look first */
    bool draining; /* freed with receives or messages pending on it: pair still taken */
    char name[MPI_MAX_OBJECT_NAME];
    int session; /* made from a session's group (MPI_Comm_create_from_group) or from
                  * such a communicator (dup, split, create): the session's slot + 1 */
    /* Intercommunicator: size/me/ranks are the local group, and the ranks of
     * point-to-point calls name members of the remote group (rsize members,
     * job ranks rranks; rinv the lazy inverse). Intracommunicator: inter false,
     * the peers are the local group. */
    bool inter;
    int rsize;
    int *rranks;
    int *rinv;
    /* Intercommunicator only (mpi_inter.c; all three on context ctx + 1):
     *  - g is the LOCAL group (size/me/ranks above): collectives over it are
     *    internal ones of the local group (the local phase of an intercomm
     *    collective), never an MPI collective of the intercommunicator;
     *  - ig is both groups, the "low" group first (the one whose rank 0 has the
     *    lower job rank); ilow: this rank's group is the low one. So local rank
     *    i is ig member (ilow ? i : rsize + i), remote rank r is
     *    (ilow ? size + r : r); ig.ranks is owned here;
     *  - the two leaders (rank 0 of each group) also exchange courier's own
     *    messages on ctx + 1 with the negative tag MPI_INTER_TAG (see
     *    mpi_inter_swap). Traffic of g, ig and the leaders never mixes: each
     *    receive names its source, and the collectives' tags are >= 0. */
    cr_group ig;
    bool ilow;
    MPI_Info info;         /* hints (mpi_info.c): owned by the communicator, or MPI_INFO_NULL */
    struct mpi_topo *topo; /* topology (mpi_topo.c), NULL: none */
} mpi_comm;

/* ---- collective argument checks (mpi_collchk.c), shared by the blocking
 * (mpi_coll.c) and nonblocking (mpi_nbc.c) forms ----------------------------- */

/* A collective call under way: entered, its communicator checked; s, seq and
 * seq_taken are the nonblocking form's (its schedule under construction). */
typedef struct mpi_cargs {
    cr_job *job;
    const char *call;
    MPI_Comm comm;
    mpi_comm *c;
    struct nbc *s;
    uint32_t seq;
    bool seq_taken;
    struct mpi_chknbc *chk; /* --check=coll's record while a schedule is built (mpi_check.h) */
} mpi_cargs;
/* Report an error of the call (mpi_fail on its communicator); the code. */
int mpi_cfail(const mpi_cargs *a, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Each returns 0 or the MPI code of what it found, reported. */
int mpi_chk_count(const mpi_cargs *a, int count, const char *what);
int mpi_chk_type(const mpi_cargs *a, MPI_Datatype dt, mpi_type **t);
int mpi_chk_type_n(const mpi_cargs *a, MPI_Datatype dt, int count, mpi_type **t);
int mpi_chk_buf(const mpi_cargs *a, const void *buf, int count, const mpi_type *t,
                const char *what);
/* A root: a member; on an intercommunicator MPI_ROOT, MPI_PROC_NULL or a rank
 * of the remote group. */
int mpi_chk_root(const mpi_cargs *a, int root);
int mpi_chk_alias(const mpi_cargs *a, const void *s, const void *r, size_t len);
/* MPI_ERR_BUFFER when s (len bytes) is the start of the buffer 'whole' of the
 * other side, or this rank's own block of it (own bytes in): what MPI_IN_PLACE
 * is for (MPI-3.1 §5.2.1). Gather's send is checked against the receive, and
 * scatter's receive against the send. */
int mpi_chk_own_block(const mpi_cargs *a, const void *s, const void *whole, ptrdiff_t own,
                      size_t len);
int mpi_chk_no_inplace(const mpi_cargs *a, const void *buf); /* intercommunicators */
/* (buffer, count, type); *t set on success. what: "send" or "receive". */
int mpi_chk_triple(const mpi_cargs *a, const void *buf, int count, MPI_Datatype dt, mpi_type **t,
                   const char *what);
int mpi_chk_match(const mpi_cargs *a, size_t sbytes, size_t rbytes);
/* The whole check of one collective on an intracommunicator, as both forms
 * make it. */
int mpi_chk_bcast(const mpi_cargs *a, void *buf, int count, MPI_Datatype dt, int root,
                  mpi_type **t);
/* gather: the root's receive side, everyone's send side (MPI_IN_PLACE at the
 * root); scatter: the mirror. *ts / *tr set where they are looked at. */
int mpi_chk_gather(const mpi_cargs *a, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   int rcount, MPI_Datatype rtype, int root, mpi_type **ts, mpi_type **tr);
int mpi_chk_scatter(const mpi_cargs *a, const void *sbuf, int scount, MPI_Datatype stype,
                    void *rbuf, int rcount, MPI_Datatype rtype, int root, mpi_type **ts,
                    mpi_type **tr);
/* all-gather, all-to-all: both triples, the sizes agree, the buffers are
 * distinct unless the send side is MPI_IN_PLACE. */
int mpi_chk_blocks(const mpi_cargs *a, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   int rcount, MPI_Datatype rtype, mpi_type **ts, mpi_type **tr);
/* The v forms: counts and displs given, no count negative (one per peer:
 * the remote group's members on an intercommunicator). what: "send", "recv". */
int mpi_chk_counts(const mpi_cargs *a, const int *counts, const int *displs, const char *what);
/* Byte layout of np blocks counts[i] (displs[i]) of t: in the user buffer
 * itself when t is contiguous, else packed back to back in staging (staged).
 * len and off (len + np) are the caller's, 2 * np entries. */
typedef struct mpi_vlay {
    size_t *len, *off;
    bool staged;
    size_t total;
} mpi_vlay;
void mpi_vlay_fill(mpi_vlay *v, const mpi_type *t, const int *counts, const int *displs, int np);
/* reduce (root given), allreduce, scan, exscan (root ignored) of count of dt:
 * the buffers this member uses; MPI_IN_PLACE at the root (every member but
 * for reduce). */
int mpi_chk_reduce(const mpi_cargs *a, bool rooted, const void *sbuf, void *rbuf, int count,
                   MPI_Datatype dt, int root, mpi_type **t);
/* reduce (root: MPI_ROOT, MPI_PROC_NULL or a remote rank) and allreduce (all)
 * on an intercommunicator: what this member sends and receives (nothing more
 * is looked at with MPI_PROC_NULL); no MPI_IN_PLACE. */
int mpi_chk_xreduce(const mpi_cargs *a, bool all, const void *sbuf, void *rbuf, int count,
                    MPI_Datatype dt, int root, mpi_type **t);
/* reduce_scatter (counts, one per member of this group) and _block (is_block:
 * block each): *total instances in all, *below those of the members before
 * this one. */
int mpi_chk_reduce_scatter(const mpi_cargs *a, const void *sbuf, void *rbuf, const int *counts,
                           bool is_block, int block, MPI_Datatype dt, mpi_type **t, size_t *total,
                           size_t *below);
/* The blocks of a reduce-scatter of np members, in units of k (the
 * operation's elements per instance): member i's block is bo[i] .. bo[i + 1]
 * (bo has np + 1 entries). */
void mpi_reduce_scatter_blocks(size_t *bo, int np, const int *counts, bool is_block, int block,
                               size_t k);
/* One side of an Alltoallw, block i: len[i] bytes, counts[i] of t[i] (NULL for
 * an empty block of MPI_DATATYPE_NULL); staged: a block with data is not
 * contiguous or lies below the buffer. t and len are the caller's, one entry
 * per peer (the remote group's members on an intercommunicator). */
typedef struct mpi_wside {
    mpi_type **t;
    size_t *len, total;
    bool staged;
} mpi_wside;
/* Both sides (the send side not with MPI_IN_PLACE), the own blocks agree, the
 * buffers are distinct and not NULL where data goes straight to or from them. */
int mpi_chk_alltoallw(const mpi_cargs *a, const void *sbuf, const int *scounts, const int *sdispls,
                      const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                      const int *rdispls, const MPI_Datatype *rtypes, mpi_wside *s, mpi_wside *r);
/* Offsets of w's blocks: displs in the user buffer, or back to back where w
 * is staged; and its blocks packed from buf to out + off[i]. */
void mpi_wside_offsets(const mpi_wside *w, const int *displs, size_t *off, int np);
void mpi_wside_pack(const mpi_wside *w, const size_t *off, const void *buf, const int *counts,
                    const int *displs, char *out, int np);

/* ---- intercommunicators and communicator creation (mpi_inter.c, mpi_comm.c) */

#define MPI_INTER_TAG (-2)
/* The MPI collectives of an intercommunicator (mpi_coll.c, src/coll/coll_inter.c)
 * send across the groups on ctx + 1 with tags in [INT32_MIN, INT32_MIN + 2^30)
 * (CR_INTER_TAG), and advance ig.seq once per call on every member of both groups. */
/* Leader of an intercommunicator's group (local rank 0) only: send mine
 * (mlen bytes) to the other group's leader and receive its theirs (tlen bytes,
 * exactly), over ctx + 1 with MPI_INTER_TAG. Both leaders must call it with
 * matching lengths. */
void mpi_inter_swap(cr_job *job, const char *call, mpi_comm *c, const void *mine, size_t mlen,
                    void *theirs, size_t tlen);
/* Intercommunicator forms of dup/split/create, called by mpi_comm.c once the
 * arguments are checked: they return an MPI code (already reported) and make
 * *newcomm (dup: without attributes; MPI_Comm_dup copies them). */
int mpi_inter_dup(cr_job *job, const char *call, MPI_Comm comm, MPI_Comm *newcomm);
/* Make the intercommunicator of local members ranks[0..size) (this rank is
 * member me) and remote members rranks[0..rsize) on the agreed pair; takes
 * both arrays. */
MPI_Comm mpi_inter_add(cr_job *job, const char *call, int size, int me, int *ranks, int rsize,
                       int *rranks, int pair, MPI_Errhandler errh);
/* Which group is ig's first: the low one's members see low true, the other's
 * false (mpi_inter_add guesses from the job ranks, which two jobs number each
 * their own way: a communicator made from one that spans jobs keeps its
 * parent's, mpi_dyn.c's says whose side accepted). */
void mpi_inter_set_low(mpi_comm *c, bool low);
/* MPI_Finalize: close this process's ports, remove the names it published (mpi_dyn.c). */
void mpi_dyn_finalize(cr_job *job);
/* MPI_Init of a job that MPI_Comm_spawn started: connect to the parent (mpi_dyn.c). */
void mpi_dyn_init(cr_job *job);
/* Agree on a context pair over both groups, the leaders (lead in lg; peer, the
 * other's, a job rank) talking on ctx with tag (mpi_inter.c's bridge). */
int mpi_inter_agree(cr_job *job, const char *call, cr_group *lg, int lead, int peer, uint16_t ctx,
                    int32_t tag);
int mpi_inter_split(cr_job *job, const char *call, MPI_Comm comm, int color, int key,
                    MPI_Comm *newcomm);
int mpi_inter_create(cr_job *job, const char *call, MPI_Comm comm, MPI_Group group,
                     MPI_Comm *newcomm);
/* Shared by the creating calls (mpi_comm.c). */
MPI_Comm mpi_comm_add(cr_job *job, const char *call, int size, int me, int *ranks, int ctx,
                      MPI_Errhandler errh);
void mpi_ctx_reclaim(cr_job *job); /* give back the pairs of drained communicators */
long mpi_ctx_free_word(long w);    /* this rank's free pairs in word w of the map */
int mpi_ctx_take(int pair);        /* this rank uses the pair now; its p2p context */
void mpi_ctx_untake(int pair);     /* ... no longer (an agreed pair left unused) */
/* Free pairs of word w that no agreement under way here offers (what a call
 * that cannot wait, MPI_Comm_idup, may reserve). */
long mpi_ctx_spare_word(long w);

/* Agreeing on a pair among the threads of a rank (mpi_comm.c). Several
 * creating calls may agree at once, each over its own members, in several
 * threads: a pair one of them offers must not be taken by another meanwhile.
 * So only one at a time offers this rank's free pairs (it holds the offer);
 * the others offer none, which makes their round fail, and try again (every
 * member learns that from the round's result, so all of them do). The offer
 * goes to the agreement with the lowest prio, which is the same on every
 * member (its parent's context and tag), so one of them always gets the offer
 * on all its members and ends: MPICH's way. With one thread, every round
 * offers. */
typedef struct mpi_agree {
    struct mpi_agree *next; /* in job->mpi->agreeing */
    uint64_t prio;
    bool offers;       /* this round offers this rank's free pairs */
    const long *offer; /* ... words offer_lo.. of them (the offer's copy) */
    long offer_lo, offer_n;
} mpi_agree;
uint64_t mpi_agree_prio(int ctx, int tag); /* the prio of an agreement over ctx */
void mpi_agree_begin(mpi_agree *a, uint64_t prio);
/* A new round: true when this rank offers its free pairs in it (a->offers). */
bool mpi_agree_round(mpi_agree *a);
/* What this round offers: words lo..lo+n-1 of the map, as they are (an
 * offering round; the array must live until the round ends). */
void mpi_agree_offered(mpi_agree *a, const long *words, long lo, long n);
/* The round is over: pair (-1: none) is taken, the offer given up. */
void mpi_agree_round_end(mpi_agree *a, int pair);
void mpi_agree_end(mpi_agree *a);
int mpi_no_ctx(cr_job *job, MPI_Comm comm, const char *call); /* report: no pair free */
mpi_group *mpi_group_get(int h);                              /* NULL: not a live group */
int mpi_group_check(cr_job *job, const char *call, MPI_Group h, mpi_group **out);
MPI_Group mpi_group_add(cr_job *job, const char *call, int *ranks, int size); /* takes ranks */

mpi_comm *mpi_comm_get(int h); /* NULL: not a live communicator */
bool mpi_comm_freed(int h);    /* h was a communicator's, freed since */
/* Look up a communicator argument; reports MPI_ERR_COMM on COMM_WORLD's handler. */
int mpi_comm_check(cr_job *job, const char *call, MPI_Comm h, mpi_comm **out);
void mpi_comms_init(cr_job *job);
static inline int comm_rank_to_job(const mpi_comm *c, int r)
{
    return c->ranks ? c->ranks[r] : r;
}
int mpi_comm_job_to_rank(mpi_comm *c, int jr);
/* The peers of point-to-point calls: the remote group of an intercommunicator,
 * the communicator's own members otherwise. */
static inline int comm_peer_size(const mpi_comm *c)
{
    return c->inter ? c->rsize : c->size;
}
static inline int comm_peer_to_job(const mpi_comm *c, int r)
{
    return c->inter ? c->rranks[r] : comm_rank_to_job(c, r);
}
int mpi_comm_job_to_peer(mpi_comm *c, int jr); /* -1: not a peer */
/* MPI_Finalize's first step: delete MPI_COMM_SELF's attributes (callbacks run,
 * the last set first); an error a callback returns. */
int mpi_comm_self_finalize(cr_job *job);

/* Info objects and topologies (mpi_info.c, mpi_topo.c). A communicator's
 * extras are its topology and its info hints: MPI_Comm_dup copies them to the
 * new communicator with mpi_topo_dup(old, new) (handles: both live), and
 * freeing a communicator releases them with mpi_topo_free. */
void mpi_topo_dup(MPI_Comm oldh, MPI_Comm newh);
void mpi_topo_free(mpi_comm *c);
MPI_Info mpi_info_copy(MPI_Info h); /* a new handle; MPI_INFO_NULL for none */
void mpi_info_drop(MPI_Info h);     /* release a handle the library owns */
/* Check an info argument of a call (MPI_INFO_NULL allowed when null_ok): 0,
 * or MPI_ERR_INFO reported on comm. */
int mpi_info_arg(cr_job *job, MPI_Comm comm, const char *call, MPI_Info info, bool null_ok);

/* ---- operations ----------------------------------------------------------- */

/* Build the engine's reduction descriptor for (op, datatype): whether the data
 * must be packed first ('*packed'), and the element count to reduce. 'ctx'
 * holds what a user operation's wrapper needs and must live as long as o. */
typedef struct mpi_opctx {
    MPI_User_function *user;
    MPI_User_function_c *userc; /* MPI_Op_create_c's: called instead, len as MPI_Count */
    MPI_Datatype dt;
} mpi_opctx;
int mpi_redop(cr_job *job, MPI_Comm comm, const char *call, MPI_Op op, const mpi_type *t,
              size_t count, cr_redop *o, mpi_opctx *ctx, bool *packed, size_t *n);
/* The function of predefined operation op on the elements of t, where t is
 * made of one contiguous basic type (n elements of t: n * t->size / base's
 * size of the basic type, no argument); NULL where mpi_redop would report an
 * error or take another path (user operations, pairs, MPI_REPLACE, MPI_NO_OP).
 * It reports nothing: for the short paths that run without the lock. */
cr_op_fn mpi_op_fn(MPI_Op op, const mpi_type *t);

/* ---- state, entry and errors ---------------------------------------------- */

/* ---- MPI-4 additions: their state (mpi_part.c, mpi_buf.c) ---- */
/* Buffered sends' space (mpi_buf.c): an attached buffer bounds what the
 * buffered sends charged to it may hold (their data is copied elsewhere);
 * buf == MPI_BUFFER_AUTOMATIC: no bound. */
typedef struct mpi_bpool {
    void *buf; /* NULL: none attached (a NULL buffer of 0 bytes is stored as the pool itself) */
    size_t size, used;
    int comm;    /* a communicator's: its table index; -1: the process's, or free */
    int session; /* a session's: its slot + 1 while attached; 0: not a session's */
    struct mpi_bpool *next;
} mpi_bpool;

/* This rank's state of the MPI-4 additions. */
typedef struct mpi4_state {
    uint32_t next_chan;           /* where the search for a free channel starts */
    uint64_t *chan_used;          /* bit c: a live partitioned send of this rank uses channel c */
    struct mpi_prt *recvs;        /* live partitioned receives, in the order they were made */
    struct mpi_hello *parked;     /* announcements of sends no receive here took yet, in order */
    mpi_bpool *bufs;              /* communicators' attached buffers (mpi_buf.c); never freed */
    bool world;                   /* MPI_Init(_thread) was called (mpi_env.c) */
    struct mpi_session *sessions; /* mpi_session.c: the table, nsessions entries */
    int nsessions;
} mpi4_state;

/* The interface's state, reached from the job (job->mpi: the engine sees only
 * the pointer). Made by the first call that needs it (MPI_Init, or one of the
 * calls allowed before it: the info calls, MPI_Initialized, ...; mpi_state_get)
 * and kept until the process ends, so a handle never outlives what it names.
 * In the contexts of the simulated mode each rank's job reaches its own. Read
 * and written under the engine lock, except inited and finalized, which
 * MPI_Initialized and MPI_Finalized read without it (atomic accesses). */
struct cr_mpi {
    bool inited, finalized;
    int thread_level;
    bool chk_threads;      /* --check=threads: every call goes by mpi_check_thread_enter */
    pthread_t main_thread; /* the one that called MPI_Init(_thread) */
    uint64_t *ctx_used;    /* bit p: context pair MPI_CTX_FIRST_FREE + 2p is in use here */
    int ctx_words;         /* words of it that have ever had a bit set */
    int ndraining;         /* freed communicators whose pair is not yet given back */
    /* The collective areas of whole-job communicators other than the world
     * (mpi_comm.c: pair p < CR_AREA_MPI_MORE_N has area CR_AREA_MPI_MORE + p):
     * where the last one to use each left its generations. */
    uint32_t area_seq[CR_AREA_MPI_MORE_N];
    bool area_loose[CR_AREA_MPI_MORE_N];
    /* Context agreements of this rank's threads (mpi_comm.c): those under way,
     * and the one whose offer of free pairs is out (NULL: none). */
    struct mpi_agree *agreeing, *offering;
    /* Communicators and groups: each allocated once and never moved (a freed
     * slot is cleared and reused), so a pointer to one stays valid while
     * another thread's call grows the table (the collective layer holds &c->g
     * through waits). */
    mpi_comm **comms;
    int ncomms;
    int comm_free_from; /* no free slot in comms below this index */
    mpi_group **groups;
    int ngroups;
    mpi_type **types; /* each allocated once and never moved: maps point into them */
    int ntypes;
    int type_free_from; /* no free slot in types below this index */
    /* The types MPI_Type_create_f90_* made, one per (combiner, p, r) (mpi_type_new.c). */
    struct mpi_f90_cache {
        struct mpi_f90_type {
            int combiner, p, r, idx;
        } * v;
        int n;
    } f90;
    int last_code;    /* MPI_LASTUSEDCODE: MPI_ERR_LASTCODE + the codes added (mpi_env.c) */
    mpi_keyval *keys; /* every keyval ever made, of every kind (mpi_attr.c) */
    int nkeys;
    struct mpi_file_tab *files; /* MPI-IO's files and data representations (mpi_file.c) */
    mpi4_state mpi4;            /* MPI-4 additions (mpi_part.c, mpi_buf.c, mpi_session.c) */
    /* User operations (mpi_coll.c): handle USER_OP_BASE + i is ops[i]. */
    struct {
        struct mpi_uop {
            bool used, commute;
            MPI_User_function *fn;
            MPI_User_function_c *fnc; /* MPI_Op_create_c's (fn NULL) */
        } * ops;
        int n;
    } uops;
    /* Nonblocking collectives (mpi_nbc.c): those started and not yet complete,
     * oldest first; released ones kept for the next calls (a list of nspare);
     * the engine's hook added; COURIER_NBC_THREAD read, =0. */
    struct {
        struct nbc *active, *spare;
        int nspare;
        bool hooked, env_read, no_thread;
    } nbc;

    /* Requests (mpi_req.c) and matched messages (mpi_p2p.c): id tables whose
     * slots never move; and the buffered sends in flight, each charged to
     * the process's attached buffer or a communicator's (mpi_p2p.c). */
    struct mpi_p2p {
        cr_idt reqs;
        int nfreed;
        cr_idt msgs;
        mpi_bpool proc; /* MPI_Buffer_attach's (a communicator's: mpi_buf.c) */
        struct mpi_bsend {
            cr_req *r;
            char *copy;
            size_t cost;
            mpi_bpool *pool; /* whose space it holds */
        } * bs;
        int nbs, bscap;
    } p2p;
    /* Windows (mpi_win.c): each allocated once; a freed one's slot is NULL. */
    struct {
        struct mpi_win **w;
        int n;
    } wins;
    /* MPI_Alloc_mem's blocks made as shared memory (mpi_env.c), which a window
     * made over them (MPI_Win_create) lets the same-host members map. */
    struct mpi_amem {
        char *p;
        size_t len;
        cr_shared sh;
        bool spare; /* freed, kept for the next allocation it fits */
    } * amem;
    int namem, amemcap;
    /* Info objects (mpi_info.c): slot 0 is MPI_INFO_ENV, built when first read. */
    struct {
        struct mpi_info *t;
        int n;
        int free_from; /* no free slot below this index */
        bool env_built;
    } infos;
    /* Error handlers the program made: handle index 2.. (0, 1 are the
     * predefined ones), never freed (mpi_env.c); where each was made and
     * whether MPI_Errhandler_free was called (--check=leaks). */
    struct {
        MPI_Comm_errhandler_function **fn;
        int n;
        const void **at;
        bool *freed;
    } errh;
    /* Codes added by the program: code MPI_ERR_LASTCODE + 1 + i is v[i]; a
     * class added by MPI_Add_error_class is a code whose class is itself. The
     * last entry is never a removed one (n shrinks past them: mpi_env.c). */
    struct {
        struct mpi_ucode {
            int cls;    /* -1: removed */
            int ncodes; /* a class: how many codes it has, besides itself */
            char *text; /* NULL: none set */
        } * v;
        int n, cap;
    } ucode;
    /* What the predefined attributes' values point at (MPI_Comm_get_attr,
     * MPI_Win_get_attr): the program keeps the pointers, so they live as long
     * as the state; set by each call that hands one out. */
    struct {
        int tag_ub, host, io, wtime_global, universe, appnum;
        int win_model; /* MPI_WIN_UNIFIED: every window's MPI_WIN_MODEL */
    } attrv;
    int self_rank[1]; /* MPI_COMM_SELF's one member, as a job rank */
    /* The tools interface MPI_T (mpi_tool.h): NULL until MPI_T_init_thread. */
    struct mpi_tool *tool;
    /* libmpi_abi.so's functions of the program that courier calls through
     * its trampolines (src/abi/abi_cb.c): NULL until the first is made. */
    struct mpi_abi_cbs *abi_cbs;
    struct mpi_dyn *dyn; /* dynamic processes (mpi_dyn.c): ports, names, other jobs; or NULL */
    struct mpi_chk *chk; /* courier run --check (mpi_check.h): NULL while off */
};
typedef struct cr_mpi mpi_state;

/* The state of this process's job, made if it is not yet (cold: once). */
mpi_state *mpi_state_new(cr_job *job) __attribute__((cold));
static inline mpi_state *mpi_state_get(cr_job *job)
{
    mpi_state *m = job->mpi;
    return __builtin_expect(m != NULL, 1) ? m : mpi_state_new(job);
}
/* The state where no job is at hand (it exists: MPI_Init made it, and every
 * call that reaches this passed mpi_enter). `mpi_g.x` names the same field
 * (mpi_nbc.c and mpi_inter.c spell it so). */
static inline mpi_state *mpi_st(void)
{
    return cr_the_job.mpi;
}
#define mpi_g (*mpi_st())

/* Entry of every call that needs MPI_Init: takes the lock; a call before Init or
 * after Finalize is reported (fatal) here. Every mpi_enter is paired with one
 * mpi_leave (or, where a call ends outside the lock, mpi_leave_unlocked): the
 * trace records a call between the two. Inline: it is on the path of every
 * call, a put of 8 bytes into a shared window included. */
void mpi_enter_refused(cr_job *job, const char *call) __attribute__((noreturn, cold));
/* --check=threads: a call from a thread the thread level does not allow is an
 * error (mpi_check.c); the leave ends the thread's turn. */
void mpi_check_thread_enter(cr_job *job, const char *call) __attribute__((cold));
void mpi_check_thread_leave(cr_job *job) __attribute__((cold));
static inline cr_job *mpi_enter(const char *call)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    const mpi_state *m = job->mpi;
    if (__builtin_expect(!m || !m->inited || m->finalized, 0)) mpi_enter_refused(job, call);
    if (__builtin_expect(m->chk_threads, 0)) mpi_check_thread_enter(job, call);
    cr_call_enter(job, call);
    if (!job->in_call) job->in_call = call; /* the board names the outermost call */
    return job;
}

/* Entry of a short path that reads and writes only what the program's thread
 * owns (its windows, datatypes and one-sided operations in flight; memory it
 * maps) and reports nothing: the job where that path may run without the
 * engine lock, NULL where the call must take mpi_enter. Without the lock when
 * no other program thread may call at once (not MPI_THREAD_MULTIPLE), no trace
 * records the call and the run is not simulated: the progress thread, which
 * the lock keeps out of the engine, never writes what such a path reads. A put
 * into a shared window then takes no atomic instruction, with a progress
 * thread as without (the lock's are two per call). */
static inline cr_job *mpi_enter_owned(void)
{
    cr_job *job = cr_job_get();
    const mpi_state *m = job->mpi;
    if (job->multi || job->trace || job->vt.base || !m || !m->inited || m->finalized ||
        m->chk_threads)
        return NULL;
    return job;
}

/* The table's entry handle h names, live or freed (NULL: none). */
static inline mpi_type *mpi_type_entry(int h)
{
    if (!h_is(h, K_TYPE)) return NULL;
    int i = h_idx(h);
    const mpi_state *m = mpi_st();
    if (!m || i <= 0 || i >= m->ntypes) return NULL;
    return m->types[i];
}
/* The datatype of handle h, or NULL: not a live datatype handle. Inline for
 * the same reason. */
static inline mpi_type *mpi_type_get(int h)
{
    mpi_type *t = mpi_type_entry(h);
    return t && t->used && !t->dead ? t : NULL;
}
/* Was h a datatype's handle, freed since (MPI_Type_free)? */
static inline bool mpi_type_freed(int h)
{
    const mpi_type *t = mpi_type_entry(h);
    return t && (!t->used || t->dead);
}
static inline int mpi_leave(cr_job *job, int rc)
{
    const mpi_state *m = job->mpi;
    if (__builtin_expect(m && m->chk_threads, 0)) mpi_check_thread_leave(job);
    job->in_call = NULL;
    cr_call_leave(job);
    cr_unlock(job);
    return rc;
}
/* The end of a call that released the lock already (it ended in other MPI
 * calls): the trace is written under the lock, so take it for that. */
static inline int mpi_leave_unlocked(cr_job *job, int rc)
{
    cr_lock(job);
    return mpi_leave(job, rc);
}
/* Is [base, base+len) inside a block MPI_Alloc_mem made as shared memory?
 * Then *sh describes it, off where base is (mpi_env.c). */
bool mpi_amem_find(cr_job *job, const void *base, size_t len, cr_shared *sh);
/* Report an error on 'comm' (or COMM_WORLD when comm is not a live
 * communicator): apply its handler, return 'code'. */
int mpi_fail(cr_job *job, MPI_Comm comm, const char *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The same with the arguments as a va_list (the call-specific reporters). */
int mpi_vfail(cr_job *job, MPI_Comm comm, const char *call, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

/* Apply error handler h of object *obj (a communicator or a window) to an
 * error: end the job (fatal), call the program's handler, or just return
 * code; msg is the one line that says what went wrong. */
int mpi_fail_with(cr_job *job, MPI_Errhandler h, int *obj, const char *call, int code,
                  const char *msg);
/* --check=leaks: fn(ctx, ...) for every info object the program made and has
 * not freed (idx: its handle's index; call: what made it; at: the caller). */
void mpi_info_leaks(void (*fn)(void *ctx, int idx, int nkeys, const char *call, const void *at),
                    void *ctx);
bool mpi_errh_valid(MPI_Errhandler h); /* a predefined handler or one made by the program */

/* The tables of requests and matched messages, made at MPI_Init (mpi_p2p.c). */
void mpi_requests_init(cr_job *job);

/* Requests of other kinds (nonblocking collectives, generalized requests, ...)
 * live in mpi_req.c's table like point-to-point ones, so that every wait and
 * test form takes them (and mixes them with point-to-point requests); these
 * hooks give their progress and completion. Each is called with the engine
 * lock held. */
typedef struct mpi_ext_ops {
    const char *what; /* the call that made it ("MPI_Ibcast"), for errors and the watchdog */
    /* Advance the operation; true once it is complete, with *st filled. */
    bool (*test)(cr_job *job, void *obj, MPI_Status *st);
    /* Release obj: called exactly once, after completion. */
    void (*free)(cr_job *job, void *obj);
    /* MPI_Cancel; NULL: the operation cannot be cancelled (MPI_Cancel has no
     * effect, as MPI allows). */
    int (*cancel)(cr_job *job, void *obj);
    /* It completes without another rank (a file access the I/O thread runs):
     * a poll of it is not a rank waiting for others (cr_poll_missed). */
    bool local;
} mpi_ext_ops;
/* Make an active request for obj: MPI_SUCCESS, or an error code (reported on
 * comm) when the table is full; on error obj is not taken. */
int mpi_request_ext(cr_job *job, MPI_Comm comm, const mpi_ext_ops *ops, void *obj,
                    MPI_Request *out);

/* ---- MPI-4 additions (mpi_isr.c, mpi_part.c): the request layer's hooks
 * (mpi_p2p.c) and the state of the calls ------------------------------------- */

/* A persistent request of another file (partitioned communication): made
 * inactive; MPI_Start/MPI_Startall call start(obj) (an MPI code, reported) and
 * make it active; the wait/test that sees ops->test true makes it inactive
 * again; ops->free runs once, when the request is freed (MPI_Request_free of an
 * inactive one, or when a freed active one completes). */
int mpi_request_ext_persistent(cr_job *job, MPI_Comm comm, const mpi_ext_ops *ops,
                               int (*start)(cr_job *job, void *obj), void *obj, MPI_Request *out);
/* The obj of live persistent request h made with ops (*active: started and not
 * completed); NULL when h is no such request. */
void *mpi_request_ext_obj(MPI_Request h, const mpi_ext_ops *ops, bool *active);
/* Requests another request is made of (MPI_Isendrecv), under the lock: is h's
 * operation complete (a null or inactive one is)? Complete it: fill *st
 * (MPI_STATUS_IGNORE allowed), release it (*h = MPI_REQUEST_NULL, or inactive
 * when persistent), return its error code (reported by no one yet). */
bool mpi_request_done(cr_job *job, MPI_Request h);
int mpi_request_take(cr_job *job, MPI_Request *h, MPI_Status *st);
/* mpi_p2p.c's check of a send's (recv false) or receive's arguments. */
int mpi_p2p_check(cr_job *job, const char *call, const void *buf, int count, MPI_Datatype dt,
                  int peer, int tag, MPI_Comm comm, bool recv, mpi_comm **c, mpi_type **t);
/* The entry of a call that may come before MPI_Init or after MPI_Finalize
 * (the info calls, MPI-5.0's ABI inquiries): the lock and MPI's state, made
 * if need be. Its errors: mpi_fail on MPI_COMM_WORLD between Init and
 * Finalize, else fatal (MPI's initial error handler), under that lock. */
cr_job *mpi_enter_any(void);
int mpi_fail_any(cr_job *job, const char *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int mpi_vfail_any(cr_job *job, const char *call, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
/* The value of key in info h (NULL: not there, or h is no info). */
const char *mpi_info_lookup(MPI_Info h, const char *key);
bool mpi_info_live(MPI_Info h); /* a live info object (MPI_INFO_ENV once built) */

/* mpi_hw.c: this rank's color for MPI_Comm_split_type's HW_GUIDED,
 * RESOURCE_GUIDED (info's "mpi_hw_resource_type") or HW_UNGUIDED (collective
 * over g: the largest level that divides it; *level its name, for the info
 * the program passed, else NULL); MPI_UNDEFINED for none. */
int mpi_hw_split_color(cr_job *job, const char *call, cr_group *g, int split_type, MPI_Info info,
                       const char **level);
/* Replace communicator h's hints with a copy of info's (MPI_INFO_NULL: none). */
void mpi_comm_hints_replace(cr_job *job, const char *call, MPI_Comm h, MPI_Info info);

/* Buffered-send pools (mpi_buf.c, mpi_p2p.c). */
mpi_bpool *mpi_bpool_of(MPI_Comm comm);    /* comm's attached one, or NULL */
mpi_bpool *mpi_bpool_process(cr_job *job); /* MPI_Buffer_attach's (reaped) */
void mpi_bpool_attach(mpi_bpool *b, void *buf, MPI_Count size);
/* Detach b: its buffer, and its size in the calling form's width (csize: the
 * _c form's; else isize, MPI_UNDEFINED past INT_MAX, a _c attach's). */
void mpi_bpool_detach(mpi_bpool *b, void *buffer_addr, int *isize, MPI_Count *csize);
MPI_Count mpi_bpool_size(const mpi_bpool *b); /* the attached bytes; 0: none or automatic */
void mpi_bpool_forget(int comm_idx);          /* the communicator is gone */
/* Sessions' buffers (mpi_buf.c): session is the slot + 1. The pool a buffered
 * send on comm is charged to: comm's, its session's, else the process's. */
mpi_bpool *mpi_bpool_for(cr_job *job, MPI_Comm comm);
mpi_bpool *mpi_bpool_of_session(cr_job *job, int session);
mpi_bpool *mpi_bpool_new(cr_job *job, const char *call);           /* a free one, not attached */
void mpi_bpool_drain(cr_job *job, const char *call, mpi_bpool *b); /* wait: all delivered */
int mpi_bpool_iflush(cr_job *job, mpi_bpool *b,
                     MPI_Request *req); /* as MPI_Session_iflush_buffer */
bool mpi_bsends_done(void *pool);       /* every buffered send of pool (NULL: any) delivered */

/* Bring MPI's tables up for a call that may come first (MPI_Session_init),
 * MPI_THREAD_SINGLE; nothing when they are up (mpi_env.c). */
void mpi_layer_up(cr_job *job);
#define K_SESSION 0x68000000u /* MPI_Session (mpi_session.c) */

/* A wildcard receive or probe (source MPI_ANY_SOURCE, tag MPI_ANY_TAG) on a
 * communicator whose hints assert mpi_assert_no_any_source/_tag "true" is
 * erroneous (MPI-4.0 §7.4.4): MPI_ERR_ARG, reported (mpi_isr.c). */
int mpi_assert_wild_check(cr_job *job, const char *call, MPI_Comm comm, const mpi_comm *c,
                          int source, int tag);
static inline int mpi_assert_wild(cr_job *job, const char *call, MPI_Comm comm, const mpi_comm *c,
                                  int source, int tag)
{
    if (c->info == MPI_INFO_NULL || (source != MPI_ANY_SOURCE && tag != MPI_ANY_TAG)) return 0;
    return mpi_assert_wild_check(job, call, comm, c, source, tag);
}

#endif
