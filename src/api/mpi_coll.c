/* MPI blocking collectives and reduction operations, translated into the
 * collective layer (src/coll) over each communicator's cr_group.
 *
 * Data of a contiguous datatype goes to the collective layer as it is; other
 * datatypes are packed into a staging buffer first (and unpacked after), so
 * the layer only ever sees bytes. Reductions see elements: a predefined
 * operation runs over the datatype's basic elements (in place when the type is
 * 'raw', on packed data otherwise); a user operation runs over whole instances
 * of the datatype, in the program's own layout.
 *
 * Invariants:
 *  - every argument is checked (communicator, counts, datatypes, operation,
 *    root, MPI_IN_PLACE where it is allowed, forbidden aliasing) before any
 *    message moves: a failed call has sent nothing, so no member is left
 *    waiting for a collective another member refused locally — except where the
 *    mistake is only visible at one member (e.g. a bad root on one rank), which
 *    MPI calls erroneous;
 *  - non-commutative operations combine in rank order (the layer's rule);
 *  - on an intercommunicator (c->inter) every call goes to the layer's
 *    cr_inter_* forms (coll_inter.c) over the local group g and the remote
 *    ranks, counted by ig.seq: counts, displacements and types name members of
 *    the REMOTE group (reduce_scatter's recvcounts: the local group), roots are
 *    MPI_ROOT / MPI_PROC_NULL / a remote rank, MPI_IN_PLACE is refused
 *    (MPI_ERR_BUFFER), and Scan / Exscan are MPI_ERR_COMM;
 *  - Alltoallw: per-peer types and byte displacements; blocks go straight
 *    from and to the user buffers when every block with data is contiguous,
 *    through packed staging otherwise. */
#include <complex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "mpi_impl.h"

/* ---- predefined operations ------------------------------------------------------ */

enum {
    K_NONE,
    K_I8,
    K_U8,
    K_I16,
    K_U16,
    K_I32,
    K_U32,
    K_I64,
    K_U64,
    K_F,
    K_D,
    K_LD,
    K_BOOL,
    K_CF,
    K_CD,
    K_CLD,
    K_BYTE,
    K_FI,
    K_DI,
    K_LI,
    K_II,
    K_SI,
    K_LDI,
    K_FF,   /* MPI_2REAL */
    K_DD,   /* MPI_2DOUBLE_PRECISION */
    K_I128, /* MPI_INTEGER16 */
    K_Q,    /* MPI_REAL16 */
    K_CQ,   /* MPI_COMPLEX32 */
    NKIND
};
enum { NOPS = 15 }; /* MPI_MAX (1) .. MPI_NO_OP (14) */

/* Each operation is also built for AVX2 and AVX-512, the best chosen when the
 * library loads (x86-64 only): Open MPI's reductions use them too (measured:
 * MPI_Reduce_local of 64 KiB of MPI_CHAR took 2.5x Open MPI's time with SSE2 alone). */
/* (Not under ThreadSanitizer: the clones' resolver runs while the library is
 * relocated, before the sanitizer's runtime is up, and crashes there.) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define OP_CLONES __attribute__((target_clones("arch=skylake-avx512", "avx2", "default")))
#else
#define OP_CLONES
#endif
#define BINOP(name, T, expr)                                                                       \
    OP_CLONES static void name(const void *lo, const void *hi, void *out, size_t n,                \
                               const void *arg)                                                    \
    {                                                                                              \
        const T *a = lo, *b = hi;                                                                  \
        T *o = out;                                                                                \
        (void)arg;                                                                                 \
        for (size_t i = 0; i < n; i++) {                                                           \
            T x = a[i], y = b[i];                                                                  \
            o[i] = (expr);                                                                         \
        }                                                                                          \
    }

#define ARITH(s, T)                                                                                \
    BINOP(sum_##s, T, x + y)                                                                       \
    BINOP(prod_##s, T, x *y)
#define ORDER(s, T)                                                                                \
    BINOP(max_##s, T, x > y ? x : y)                                                               \
    BINOP(min_##s, T, x < y ? x : y)
#define LOGIC(s, T)                                                                                \
    BINOP(land_##s, T, (T)((x != 0) && (y != 0)))                                                  \
    BINOP(lor_##s, T, (T)((x != 0) || (y != 0)))                                                   \
    BINOP(lxor_##s, T, (T)((x != 0) != (y != 0)))
#define BITS(s, T)                                                                                 \
    BINOP(band_##s, T, (T)(x & y))                                                                 \
    BINOP(bor_##s, T, (T)(x | y))                                                                  \
    BINOP(bxor_##s, T, (T)(x ^ y))
#define INTOPS(s, T) ARITH(s, T) ORDER(s, T) LOGIC(s, T) BITS(s, T)

INTOPS(i8, int8_t)
INTOPS(u8, uint8_t)
INTOPS(i16, int16_t)
INTOPS(u16, uint16_t)
INTOPS(i32, int32_t)
INTOPS(u32, uint32_t)
INTOPS(i64, int64_t)
INTOPS(u64, uint64_t)
ARITH(f, float)
ORDER(f, float)
ARITH(d, double)
ORDER(d, double)
ARITH(ld, long double)
ORDER(ld, long double)
ARITH(cf, float _Complex)
ARITH(cd, double _Complex)
ARITH(cld, long double _Complex)
LOGIC(b, _Bool)

#define PAIROPS(s, T, I)                                                                           \
    typedef struct {                                                                               \
        T v;                                                                                       \
        I i;                                                                                       \
    } pair_##s;                                                                                    \
    static void maxloc_##s(const void *lo, const void *hi, void *out, size_t n, const void *arg)   \
    {                                                                                              \
        const pair_##s *a = lo, *b = hi;                                                           \
        pair_##s *o = out;                                                                         \
        (void)arg;                                                                                 \
        for (size_t k = 0; k < n; k++) {                                                           \
            pair_##s x = a[k], y = b[k];                                                           \
            o[k] = x.v > y.v ? x : y.v > x.v ? y : (pair_##s){x.v, x.i < y.i ? x.i : y.i};         \
        }                                                                                          \
    }                                                                                              \
    static void minloc_##s(const void *lo, const void *hi, void *out, size_t n, const void *arg)   \
    {                                                                                              \
        const pair_##s *a = lo, *b = hi;                                                           \
        pair_##s *o = out;                                                                         \
        (void)arg;                                                                                 \
        for (size_t k = 0; k < n; k++) {                                                           \
            pair_##s x = a[k], y = b[k];                                                           \
            o[k] = x.v < y.v ? x : y.v < x.v ? y : (pair_##s){x.v, x.i < y.i ? x.i : y.i};         \
        }                                                                                          \
    }
PAIROPS(fi, float, int)
PAIROPS(di, double, int)
PAIROPS(li, long, int)
PAIROPS(ii, int, int)
PAIROPS(si, short, int)
PAIROPS(ldi, long double, int)
PAIROPS(ff, float, float)
PAIROPS(dd, double, double)

/* gfortran's 16-byte kinds, where C has them (mpi_impl.h); COMPLEX(16) as
 * its two parts (C has no complex of __float128 everywhere). */
#if MPI_HAVE_I128
INTOPS(i128, mpi_i128)
#define I128_ROW(op) , [K_I128] = op##_i128
#else
#define I128_ROW(op)
#endif
#if MPI_HAVE_QUAD
ARITH(q, mpi_quad)
ORDER(q, mpi_quad)
BINOP(sum_cq, mpi_cquad, ((mpi_cquad){x.re + y.re, x.im + y.im}))
BINOP(prod_cq, mpi_cquad, ((mpi_cquad){x.re * y.re - x.im * y.im, x.re *y.im + x.im *y.re}))
#define Q_ROW(op) , [K_Q] = op##_q
#define CQ_ROW(op) , [K_CQ] = op##_cq
#else
#define Q_ROW(op)
#define CQ_ROW(op)
#endif

/* The predefined operations' loops by operation and kind of element, and the
 * kind of each predefined type (by its number): constant tables, shared by
 * every rank (nothing here is a rank's state). */
#define INT_KIND(size, is_signed)                                                                  \
    ((size) == 1   ? ((is_signed) ? K_I8 : K_U8)                                                   \
     : (size) == 2 ? ((is_signed) ? K_I16 : K_U16)                                                 \
     : (size) == 4 ? ((is_signed) ? K_I32 : K_U32)                                                 \
                   : ((is_signed) ? K_I64 : K_U64))
#define INT_ROW(op)                                                                                \
    [K_I8] = op##_i8, [K_U8] = op##_u8, [K_I16] = op##_i16, [K_U16] = op##_u16,                    \
    [K_I32] = op##_i32, [K_U32] = op##_u32, [K_I64] = op##_i64, [K_U64] = op##_u64 I128_ROW(op)
#define FLT_ROW(op) [K_F] = op##_f, [K_D] = op##_d, [K_LD] = op##_ld Q_ROW(op)
#define PAIR_ROW(op)                                                                               \
    [K_FI] = op##_fi, [K_DI] = op##_di, [K_LI] = op##_li, [K_II] = op##_ii, [K_SI] = op##_si,      \
    [K_LDI] = op##_ldi, [K_FF] = op##_ff, [K_DD] = op##_dd
static const cr_op_fn optab[NOPS][NKIND] = {
    [1] = {INT_ROW(max), FLT_ROW(max)},
    [2] = {INT_ROW(min), FLT_ROW(min)},
    [3] = {INT_ROW(sum),
           FLT_ROW(sum), [K_CF] = sum_cf, [K_CD] = sum_cd, [K_CLD] = sum_cld CQ_ROW(sum)},
    [4] = {INT_ROW(prod),
           FLT_ROW(prod), [K_CF] = prod_cf, [K_CD] = prod_cd, [K_CLD] = prod_cld CQ_ROW(prod)},
    [5] = {INT_ROW(land), [K_BOOL] = land_b},
    [6] = {INT_ROW(band), [K_BYTE] = band_u8},
    [7] = {INT_ROW(lor), [K_BOOL] = lor_b},
    [8] = {INT_ROW(bor), [K_BYTE] = bor_u8},
    [9] = {INT_ROW(lxor), [K_BOOL] = lxor_b},
    [10] = {INT_ROW(bxor), [K_BYTE] = bxor_u8},
    [11] = {PAIR_ROW(maxloc)},
    [12] = {PAIR_ROW(minloc)},
};
/* MPI_CHAR holds characters, and MPI-3.1 5.9.2 defines no reduction on it;
 * courier, like MPICH and Open MPI, combines it as the integer a char is here
 * (the OSU micro-benchmarks 7 reduce MPI_CHAR by default). MPI_WCHAR (0x10)
 * takes none. */
static const int kind_of[MPI_NPREDEF] = {
    [0x01] = (char)-1 < 0 ? K_I8 : K_U8,
    [0x02] = K_I8,
    [0x03] = K_U8,
    [0x04] = K_BYTE,
    [0x05] = INT_KIND(sizeof(short), true),
    [0x06] = INT_KIND(sizeof(short), false),
    [0x07] = INT_KIND(sizeof(int), true),
    [0x08] = INT_KIND(sizeof(int), false),
    [0x09] = INT_KIND(sizeof(long), true),
    [0x0a] = INT_KIND(sizeof(long), false),
    [0x0b] = INT_KIND(sizeof(long long), true),
    [0x0c] = INT_KIND(sizeof(long long), false),
    [0x0d] = K_F,
    [0x0e] = K_D,
    [0x0f] = K_LD,
    [0x11] = K_BOOL,
    [0x12] = K_I8,
    [0x13] = K_I16,
    [0x14] = K_I32,
    [0x15] = K_I64,
    [0x16] = K_U8,
    [0x17] = K_U16,
    [0x18] = K_U32,
    [0x19] = K_U64,
    [0x1a] = INT_KIND(sizeof(MPI_Aint), true),
    [0x1b] = INT_KIND(sizeof(MPI_Offset), true),
    [0x1c] = INT_KIND(sizeof(MPI_Count), true),
    [0x1d] = K_CF,
    [0x1e] = K_CD,
    [0x1f] = K_CLD,
    [0x21] = K_FI,
    [0x22] = K_DI,
    [0x23] = K_LI,
    [0x24] = K_II,
    [0x25] = K_SI,
    [0x26] = K_LDI,
    [0x3f] = K_FF,
    [0x40] = K_DD,
    [0x41] = K_I128,
    [0x42] = K_Q,
    [0x43] = K_CQ,
};

static const char *const op_names[NOPS] = {"?",          "MPI_MAX",     "MPI_MIN",  "MPI_SUM",
                                           "MPI_PROD",   "MPI_LAND",    "MPI_BAND", "MPI_LOR",
                                           "MPI_BOR",    "MPI_LXOR",    "MPI_BXOR", "MPI_MAXLOC",
                                           "MPI_MINLOC", "MPI_REPLACE", "MPI_NO_OP"};

/* ---- user operations ---------------------------------------------------------------- */

#define USER_OP_BASE 16

#define U (mpi_st()->uops)

static struct mpi_uop *uop_get(MPI_Op op)
{
    if (!h_is(op, K_OP)) return NULL;
    int i = h_idx(op) - USER_OP_BASE;
    return i >= 0 && i < U.n && U.ops[i].used ? &U.ops[i] : NULL;
}

static bool predef_op(MPI_Op op)
{
    return h_is(op, K_OP) && h_idx(op) >= 1 && h_idx(op) < NOPS;
}

/* A user operation: fn, or (MPI_Op_create_c) fnc. */
static int op_create(const char *call, MPI_User_function *fn, MPI_User_function_c *fnc, int commute,
                     MPI_Op *op)
{
    cr_job *job = mpi_enter(call);
    if ((!fn && !fnc) || !op)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "%s is NULL",
                                       fn || fnc ? "op" : "function"));
    int i = 0;
    while (i < U.n && U.ops[i].used) i++;
    if (i == U.n) {
        struct mpi_uop *n = realloc(U.ops, (size_t)(U.n + 1) * sizeof *n);
        if (!n) cr_fatal(job, call, "out of memory");
        U.ops = n;
        U.n++;
    }
    U.ops[i] = (struct mpi_uop){true, commute != 0, fn, fnc};
    *op = (MPI_Op)(K_OP | (unsigned)(i + USER_OP_BASE));
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Op_create);
int PMPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create", fn, NULL, commute, op);
}

PMPI_WEAK(Op_create_c);
int PMPI_Op_create_c(MPI_User_function_c *fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create_c", NULL, fn, commute, op);
}

PMPI_WEAK(Op_free);
int PMPI_Op_free(MPI_Op *op)
{
    const char *call = "MPI_Op_free";
    cr_job *job = mpi_enter(call);
    struct mpi_uop *u = op ? uop_get(*op) : NULL;
    if (!u)
        return mpi_leave(job,
                         mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_OP,
                                  op && predef_op(*op) ? "predefined operations cannot be freed"
                                                       : "not an operation from MPI_Op_create"));
    u->used = false;
    *op = MPI_OP_NULL;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Op_commutative);
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    const char *call = "MPI_Op_commutative";
    cr_job *job = mpi_enter(call);
    struct mpi_uop *u = uop_get(op);
    if ((!u && !predef_op(op)) || !commute)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_OP, "invalid operation"));
    *commute = u ? u->commute : 1;
    return mpi_leave(job, MPI_SUCCESS);
}

/* The layer's out = lo op hi from MPI's inoutvec = invec op inoutvec. */
static void op_user(const void *lo, const void *hi, void *out, size_t n, const void *arg)
{
    const mpi_opctx *c = arg;
    size_t ext = (size_t)type_extent(mpi_type_get(c->dt));
    memcpy(out, hi, n * ext); /* out never aliases lo or hi (alias_ok is false) */
    MPI_Datatype dt = c->dt;
    if (c->userc) {
        MPI_Count len = (MPI_Count)n;
        c->userc((void *)lo, out, &len, &dt);
        return;
    }
    int len = (int)n;
    c->user((void *)lo, out, &len, &dt);
}

cr_op_fn mpi_op_fn(MPI_Op op, const mpi_type *t)
{
    if (!predef_op(op) || op == MPI_REPLACE || op == MPI_NO_OP || t->base < 0 ||
        !mpi_type_at(t->base)->contig)
        return NULL;
    return optab[h_idx(op)][kind_of[t->base]];
}

int mpi_redop(cr_job *job, MPI_Comm comm, const char *call, MPI_Op op, const mpi_type *t,
              size_t count, cr_redop *o, mpi_opctx *ctx, bool *packed, size_t *n)
{
    struct mpi_uop *u = uop_get(op);
    ptrdiff_t ext = type_extent(t);
    if (u) {
        /* a type with no data (MPI_Type_vector(0, ...)): nothing to combine */
        bool empty = t->size == 0 || count == 0;
        if (!empty && (t->lb != 0 || t->true_lb < 0 || t->true_ub > ext || ext <= 0))
            return mpi_fail(job, comm, call, MPI_ERR_UNSUPPORTED_OPERATION,
                            "user operations on datatypes whose data lies outside [0, extent) "
                            "are not supported by courier");
        ctx->user = u->fn;
        ctx->userc = u->fnc;
        ctx->dt = (MPI_Datatype)(K_TYPE | (unsigned)t->idx);
        *o = (cr_redop){op_user, ctx, empty ? 1 : (size_t)ext, u->commute, false};
        *packed = false;
        *n = empty ? 0 : count;
        return 0;
    }
    if (!predef_op(op))
        return mpi_fail(job, comm, call, MPI_ERR_OP,
                        op == MPI_OP_NULL ? "operation is MPI_OP_NULL"
                                          : "operation %#x is not a valid operation",
                        (unsigned)op);
    int k = h_idx(op);
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return mpi_fail(job, comm, call, MPI_ERR_OP,
                        "%s is for one-sided accumulate only, not for reductions", op_names[k]);
    if (t->base < 0)
        return mpi_fail(job, comm, call, MPI_ERR_TYPE,
                        "the datatype mixes basic types: %s needs one basic type", op_names[k]);
    const mpi_type *b = mpi_type_at(t->base);
    cr_op_fn fn = optab[k][kind_of[t->base]];
    if (!fn)
        return mpi_fail(job, comm, call, MPI_ERR_OP, "%s is not defined for %s", op_names[k],
                        b->name);
    size_t bext = (size_t)type_extent(b);
    if (t->raw) {
        *o = (cr_redop){fn, NULL, bext, true, true};
        *packed = false;
        *n = count * ((size_t)ext / bext);
        return 0;
    }
    if (!b->contig) /* pair types are combined in their C layout */
        return mpi_fail(job, comm, call, MPI_ERR_UNSUPPORTED_OPERATION,
                        "%s on a derived datatype of %s with gaps is not supported by courier",
                        op_names[k], b->name);
    *o = (cr_redop){fn, NULL, b->size, true, true};
    *packed = true;
    *n = count * (t->size / b->size);
    return 0;
}

PMPI_WEAK(Reduce_local);
int PMPI_Reduce_local(const void *in, void *inout, int count, MPI_Datatype dt, MPI_Op op)
{
    const char *call = "MPI_Reduce_local";
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = mpi_type_check(job, MPI_COMM_WORLD, call, dt, &t);
    if (!rc && count < 0)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COUNT, "count %d is negative", count);
    if (!rc && (in == MPI_IN_PLACE || inout == MPI_IN_PLACE))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER,
                      "MPI_IN_PLACE is not allowed here: both buffers are given");
    if (!rc && in == inout && count > 0)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER,
                      "inbuf and inoutbuf are the same buffer: they must not overlap");
    cr_redop o;
    mpi_opctx ctx;
    bool packed;
    size_t n;
    if (!rc) rc = mpi_redop(job, MPI_COMM_WORLD, call, op, t, (size_t)count, &o, &ctx, &packed, &n);
    if (rc) return mpi_leave(job, rc);
    if (!packed && o.alias_ok) { /* a predefined operation on its elements as they lie: in
                                  * place (a copy of both and the result took 4-20x the
                                  * operation itself, IMB's Reduce_local) */
        o.fn(in, inout, inout, n, o.arg);
        return mpi_leave(job, MPI_SUCCESS);
    }
    size_t len = n * o.elem;
    char *a = malloc(2 * len + 1), *bb = a + len;
    if (!a) cr_fatal(job, call, "out of memory");
    if (packed) {
        mpi_pack_data(t, in, (size_t)count, a);
        mpi_pack_data(t, inout, (size_t)count, bb);
    } else {
        memcpy(a, in, len);
        memcpy(bb, inout, len);
    }
    char *out = malloc(len + 1);
    if (!out) cr_fatal(job, call, "out of memory");
    o.fn(a, bb, out, n, o.arg);
    if (packed)
        mpi_unpack_data(t, out, len, inout, (size_t)count);
    else
        memcpy(inout, out, len);
    free(out);
    free(a);
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- helpers -------------------------------------------------------------------- */

static void *xmalloc(cr_job *job, const char *call, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) cr_fatal(job, call, "out of memory for %zu bytes", n);
    return p;
}

/* Bytes of 'count' instances of t at buf: the buffer itself when contiguous, or
 * a packed copy in *tmp. */
static const char *bytes_in(cr_job *job, const char *call, const mpi_type *t, const void *buf,
                            size_t count, char **tmp)
{
    cr_trace_args(job, -1, 0, count * t->size, 0); /* the call's size, in the trace */
    *tmp = NULL;
    if (t->contig) return buf;
    *tmp = xmalloc(job, call, count * t->size);
    mpi_pack_data(t, buf, count, *tmp);
    return *tmp;
}

/* Where 'count' instances of t are to arrive: buf itself or staging *tmp. */
static char *bytes_out(cr_job *job, const char *call, const mpi_type *t, void *buf, size_t count,
                       char **tmp)
{
    cr_trace_args(job, -1, 0, count * t->size, 0);
    *tmp = NULL;
    if (t->contig) return buf;
    *tmp = xmalloc(job, call, count * t->size);
    return *tmp;
}

static void bytes_done(const mpi_type *t, char *tmp, void *buf, size_t count)
{
    if (tmp) {
        mpi_unpack_data(t, tmp, count * t->size, buf, count);
        free(tmp);
    }
}

typedef mpi_cargs cargs;

static int begin(cargs *a, const char *call, MPI_Comm comm)
{
    a->call = call;
    a->comm = comm;
    a->chk = NULL;
    a->s = NULL; /* blocking: no schedule (--check=buffers watches none) */
    a->job = mpi_enter(call);
    int rc = mpi_comm_check(a->job, call, comm, &a->c);
    if (!rc) { /* a member's longer message is noted, and reported by done() */
        a->c->trunc.set = false;
        a->c->g.trunc = &a->c->trunc;
    }
    return rc;
}

/* The end of every call: a message longer than its receive (the members'
 * counts or datatypes disagree) goes through the error handler. */
static int done(cargs *a, int rc)
{
    const cr_trunc *t = rc ? NULL : &a->c->trunc;
    if (t && t->set)
        rc = mpi_cfail(a, MPI_ERR_TRUNCATE,
                       "rank %d sent %zu bytes where this rank's arguments make room for %zu: the "
                       "ranks' counts and datatypes must describe the same amount of data",
                       mpi_comm_job_to_peer(a->c, t->src), t->size, t->cap);
    return mpi_leave(a->job, rc);
}

/* ---- intercommunicators -------------------------------------------------------------- */

/* The layer's view of intercommunicator c: its local group g, the remote
 * group's job ranks, the collective context, and ig.seq as the count of
 * collectives over both groups (ig is the same on every member of both groups,
 * mpi_impl.h; its own collectives advance the count in step everywhere too). */
static cr_inter inter_of(mpi_comm *c)
{
    return (cr_inter){&c->g, c->rsize, c->rranks, (uint16_t)(c->ctx + 1), &c->ig.seq};
}

/* The layer's name for an intercommunicator root argument (checked). */
static int xroot(int root)
{
    return root == MPI_ROOT ? CR_INTER_ROOT : root == MPI_PROC_NULL ? CR_INTER_NONE : root;
}

/* Lengths and offsets (lens, lens + np) of np blocks of blk bytes, back to back. */
static size_t *uniform(cargs *a, int np, size_t blk)
{
    size_t *l = xmalloc(a->job, a->call, 2 * (size_t)np * sizeof *l);
    for (int i = 0; i < np; i++) {
        l[i] = blk;
        l[np + i] = (size_t)i * blk;
    }
    return l;
}

/* ---- barrier and broadcast --------------------------------------------------------- */

PMPI_WEAK(Barrier);
int PMPI_Barrier(MPI_Comm comm)
{
    cargs a;
    int rc = begin(&a, "MPI_Barrier", comm);
    if (!rc && a.c->inter) {
        cr_inter x = inter_of(a.c);
        mpi_chk_coll(&a, -1, MPI_OP_NULL, 0, NULL, 0, NULL); /* --check: this group */
        cr_inter_barrier(a.job, &x, a.call);
    } else if (!rc) {
        mpi_chk_coll(&a, -1, MPI_OP_NULL, 0, NULL, 0, NULL); /* --check (mpi_check.h) */
        cr_coll_barrier(a.job, &a.c->g, a.call);
    }
    return done(&a, rc);
}

/* Intercommunicator: the root (MPI_ROOT) sends to every member of the other
 * group, which names it by its rank; the root's other members pass MPI_PROC_NULL. */
static int inter_bcast(cargs *a, void *buf, int count, MPI_Datatype dt, int root)
{
    cr_inter x = inter_of(a->c);
    mpi_type *t = NULL;
    int rc = mpi_chk_root(a, root);
    if (!rc && root != MPI_PROC_NULL) rc = mpi_chk_count(a, count, "count");
    if (!rc && root != MPI_PROC_NULL) rc = mpi_chk_type(a, dt, &t);
    if (!rc && root != MPI_PROC_NULL) rc = mpi_chk_buf(a, buf, count, t, "buffer");
    if (rc) return done(a, rc);
    mpi_chk_coll(a, root, MPI_OP_NULL, 0, NULL, 0, NULL); /* --check: this group */
    if (root == MPI_PROC_NULL) {
        cr_inter_bcast(a->job, &x, a->call, NULL, 0, CR_INTER_NONE);
        return done(a, MPI_SUCCESS);
    }
    size_t n = (size_t)count;
    char *tmp = NULL;
    bool isroot = root == MPI_ROOT;
    char *data = isroot ? (char *)bytes_in(a->job, a->call, t, buf, n, &tmp)
                        : bytes_out(a->job, a->call, t, buf, n, &tmp);
    cr_inter_bcast(a->job, &x, a->call, data, n * t->size, xroot(root));
    if (isroot)
        free(tmp);
    else
        bytes_done(t, tmp, buf, n);
    return done(a, MPI_SUCCESS);
}

PMPI_WEAK(Bcast);
int PMPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    cargs a;
    mpi_type *t = NULL;
    int rc = begin(&a, "MPI_Bcast", comm);
    if (!rc && a.c->inter) return inter_bcast(&a, buf, count, dt, root);
    if (!rc) rc = mpi_chk_bcast(&a, buf, count, dt, root, &t);
    if (rc) return done(&a, rc);
    mpi_chk_coll(&a, root, MPI_OP_NULL, count, t, count, t);
    size_t n = (size_t)count;
    char *tmp = NULL;
    char *data = a.c->me == root ? (char *)bytes_in(a.job, a.call, t, buf, n, &tmp)
                                 : bytes_out(a.job, a.call, t, buf, n, &tmp);
    cr_coll_bcast(a.job, &a.c->g, a.call, data, n * t->size, root);
    if (a.c->me == root)
        free(tmp);
    else
        bytes_done(t, tmp, buf, n);
    return done(&a, MPI_SUCCESS);
}

/* ---- reductions -------------------------------------------------------------------- */

enum { R_REDUCE, R_ALLREDUCE, R_SCAN, R_EXSCAN };

static int reduce_common(const char *call, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                         MPI_Op op, int root, MPI_Comm comm, int kind)
{
    cargs a;
    mpi_type *t = NULL;
    int rc = begin(&a, call, comm);
    bool inter = !rc && a.c->inter;
    if (inter && (kind == R_SCAN || kind == R_EXSCAN))
        return done(&a, mpi_cfail(&a, MPI_ERR_COMM, "not defined on an intercommunicator"));
    if (inter) rc = mpi_chk_xreduce(&a, kind == R_ALLREDUCE, sbuf, rbuf, count, dt, root, &t);
    if (!rc && inter) /* --check: this group */
        mpi_chk_coll(&a, kind == R_REDUCE ? root : -1, op, 0, NULL, 0, NULL);
    if (!rc && inter && kind == R_REDUCE && root == MPI_PROC_NULL) { /* takes no part */
        cr_inter x = inter_of(a.c);
        cr_inter_reduce(a.job, &x, call, NULL, NULL, 0, NULL, CR_INTER_NONE);
        return done(&a, MPI_SUCCESS);
    }
    /* Intracommunicator: everyone sends (the root's data is in rbuf with
     * MPI_IN_PLACE); intercommunicator reduce: the root's group only receives
     * (at the root), the other group only sends. */
    bool recv_here, send_here = !inter || kind != R_REDUCE || root >= 0;
    if (!rc && !inter) rc = mpi_chk_reduce(&a, kind == R_REDUCE, sbuf, rbuf, count, dt, root, &t);
    if (inter)
        recv_here = kind != R_REDUCE || root == MPI_ROOT;
    else
        recv_here = kind != R_REDUCE || (!rc && a.c->me == root);
    bool inplace = send_here && sbuf == MPI_IN_PLACE;
    cr_redop o;
    mpi_opctx ctx;
    bool packed;
    size_t n;
    if (!rc) rc = mpi_redop(a.job, comm, call, op, t, (size_t)count, &o, &ctx, &packed, &n);
    if (rc) return done(&a, rc);
    if (!inter) mpi_chk_coll(&a, kind == R_REDUCE ? root : -1, op, count, t, count, t);
    size_t len = n * o.elem, cnt = (size_t)count;
    cr_trace_args(a.job, -1, 0, len, 0);
    const void *src = inplace ? rbuf : sbuf;
    char *s = (char *)src, *r = rbuf, *stmp = NULL, *rtmp = NULL;
    if (packed && send_here) {
        stmp = xmalloc(a.job, call, len);
        mpi_pack_data(t, src, cnt, stmp);
        s = stmp;
    }
    if ((packed || !recv_here) && kind != R_EXSCAN) r = rtmp = xmalloc(a.job, call, len);
    cr_group *g = &a.c->g;
    cr_inter x = inter ? inter_of(a.c) : (cr_inter){0};
    switch (kind) {
    case R_REDUCE:
        if (inter)
            cr_inter_reduce(a.job, &x, call, s, r, n, &o, xroot(root));
        else
            cr_coll_reduce(a.job, g, call, s, r, n, &o, root);
        break;
    case R_ALLREDUCE:
        if (inter)
            cr_inter_allreduce(a.job, &x, call, s, r, n, &o);
        else
            cr_coll_allreduce(a.job, g, call, s, r, n, &o);
        break;
    case R_SCAN:
        cr_coll_scan(a.job, g, call, s, r, n, &o);
        break;
    case R_EXSCAN: {
        char *fin = packed ? stmp : rbuf; /* (the input is taken before anything arrives) */
        cr_coll_exscan(a.job, g, call, s, fin, n, &o);
        if (packed && a.c->me > 0) mpi_unpack_data(t, fin, len, rbuf, cnt);
        free(stmp);
        free(rtmp);
        return done(&a, MPI_SUCCESS);
    }
    }
    if (packed && recv_here) mpi_unpack_data(t, r, len, rbuf, cnt);
    free(stmp);
    free(rtmp);
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Reduce);
int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm)
{
    return reduce_common("MPI_Reduce", sbuf, rbuf, count, dt, op, root, comm, R_REDUCE);
}

PMPI_WEAK(Allreduce);
int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm)
{
    return reduce_common("MPI_Allreduce", sbuf, rbuf, count, dt, op, 0, comm, R_ALLREDUCE);
}

PMPI_WEAK(Scan);
int PMPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return reduce_common("MPI_Scan", sbuf, rbuf, count, dt, op, 0, comm, R_SCAN);
}

PMPI_WEAK(Exscan);
int PMPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return reduce_common("MPI_Exscan", sbuf, rbuf, count, dt, op, 0, comm, R_EXSCAN);
}

/* Reduce a vector of sum(counts) instances, member i keeps counts[i] of them. */
static int reduce_scatter_common(const char *call, const void *sbuf, void *rbuf, const int *counts,
                                 bool is_block, int block, MPI_Datatype dt, MPI_Op op,
                                 MPI_Comm comm)
{
    cargs a;
    mpi_type *t = NULL;
    size_t total = 0, off = 0;
    int rc = begin(&a, call, comm);
    if (!rc)
        rc = mpi_chk_reduce_scatter(&a, sbuf, rbuf, counts, is_block, block, dt, &t, &total, &off);
    if (rc) return done(&a, rc);
    int np = a.c->size;
    size_t mine = (size_t)(is_block ? block : counts[a.c->me]);
    bool inplace = sbuf == MPI_IN_PLACE;
    cr_redop o;
    mpi_opctx ctx;
    bool packed;
    size_t n;
    if (!rc) rc = mpi_redop(a.job, comm, call, op, t, total, &o, &ctx, &packed, &n);
    if (rc) return done(&a, rc);
    /* --check (the blocks may differ) */
    mpi_chk_coll(&a, -1, op, 0, NULL, 0, NULL);
    size_t len = n * o.elem, per = total ? len / total : 0; /* bytes per instance */
    const void *src = inplace ? rbuf : sbuf;
    char *s = (char *)src, *stmp = NULL, *r = xmalloc(a.job, call, len);
    if (packed) {
        stmp = xmalloc(a.job, call, len);
        mpi_pack_data(t, src, total, stmp);
        s = stmp;
    }
    if (a.c->inter) {
        /* recvcounts describe this group: it gets the other group's reduction */
        size_t *ll = xmalloc(a.job, call, 2 * (size_t)np * sizeof *ll), *lo = ll + np, at = 0;
        for (int i = 0; i < np; i++) {
            ll[i] = (size_t)(is_block ? block : counts[i]) * per;
            lo[i] = at;
            at += ll[i];
        }
        char *out = packed ? r : rbuf;
        cr_inter x = inter_of(a.c);
        cr_inter_reduce_scatter(a.job, &x, call, s, out, n, &o, ll, lo);
        if (packed) mpi_unpack_data(t, out, mine * per, rbuf, mine);
        free(ll);
        free(stmp);
        free(r);
        return done(&a, MPI_SUCCESS);
    }
    /* each member's block in the operation's elements (an instance may be
     * several); src/coll's reduce-scatter, or where the vector is small
     * enough for the host's collective area the whole allreduce and this
     * member's part of it */
    size_t *bo = xmalloc(a.job, call, (size_t)(np + 1) * sizeof *bo);
    mpi_reduce_scatter_blocks(bo, np, counts, is_block, block, total ? n / total : 0);
    char *out = packed || inplace ? r : rbuf; /* rbuf is the input when in place */
    if (cr_coll_reduce_scatter(a.job, &a.c->g, call, s, out, bo, &o)) {
        if (packed)
            mpi_unpack_data(t, out, mine * per, rbuf, mine);
        else if (out != rbuf && mine)
            memcpy(rbuf, out, mine * per);
    } else {
        cr_coll_allreduce(a.job, &a.c->g, call, s, r, n, &o);
        if (packed)
            mpi_unpack_data(t, r + off * per, mine * per, rbuf, mine);
        else if (mine)
            memmove(rbuf, r + off * per, mine * per);
    }
    free(bo);
    free(stmp);
    free(r);
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Reduce_scatter);
int PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int counts[], MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_common("MPI_Reduce_scatter", sbuf, rbuf, counts, false, 0, dt, op, comm);
}

PMPI_WEAK(Reduce_scatter_block);
int PMPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                              MPI_Comm comm)
{
    return reduce_scatter_common("MPI_Reduce_scatter_block", sbuf, rbuf, NULL, true, count, dt, op,
                                 comm);
}

/* ---- gather, scatter, allgather, alltoall ------------------------------------------------ */

/* Intercommunicator, the group without the root: send scount of stype to it. */
static int inter_gather_send(cargs *a, const void *sbuf, int scount, MPI_Datatype stype, int root)
{
    mpi_type *t = NULL;
    int rc = mpi_chk_no_inplace(a, sbuf);
    if (!rc) rc = mpi_chk_triple(a, sbuf, scount, stype, &t, "send");
    if (rc) return done(a, rc);
    cr_inter x = inter_of(a->c);
    char *tmp;
    const char *s = bytes_in(a->job, a->call, t, sbuf, (size_t)scount, &tmp);
    cr_inter_gatherv(a->job, &x, a->call, s, (size_t)scount * t->size, NULL, NULL, NULL, root);
    free(tmp);
    return done(a, MPI_SUCCESS);
}

/* Intercommunicator, the group without the root: receive rcount of rtype from it. */
static int inter_scatter_recv(cargs *a, void *rbuf, int rcount, MPI_Datatype rtype, int root)
{
    mpi_type *t = NULL;
    int rc = mpi_chk_no_inplace(a, rbuf);
    if (!rc) rc = mpi_chk_triple(a, rbuf, rcount, rtype, &t, "receive");
    if (rc) return done(a, rc);
    cr_inter x = inter_of(a->c);
    char *tmp, *r = bytes_out(a->job, a->call, t, rbuf, (size_t)rcount, &tmp);
    cr_inter_scatterv(a->job, &x, a->call, NULL, NULL, NULL, r, (size_t)rcount * t->size, root);
    bytes_done(t, tmp, rbuf, (size_t)rcount);
    return done(a, MPI_SUCCESS);
}

/* Intercommunicator, a member of the root's group other than the root. */
static int inter_none(cargs *a, bool gather)
{
    cr_inter x = inter_of(a->c);
    if (gather)
        cr_inter_gatherv(a->job, &x, a->call, NULL, 0, NULL, NULL, NULL, CR_INTER_NONE);
    else
        cr_inter_scatterv(a->job, &x, a->call, NULL, NULL, NULL, NULL, 0, CR_INTER_NONE);
    return done(a, MPI_SUCCESS);
}

/* Intercommunicator gather: the root (MPI_ROOT) gets rcount of rtype from each
 * member of the other group, in its rank order. */
static int inter_gather(cargs *a, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        int rcount, MPI_Datatype rtype, int root)
{
    int rc = mpi_chk_root(a, root);
    if (rc) return done(a, rc);
    mpi_chk_coll(a, root, MPI_OP_NULL, 0, NULL, 0, NULL); /* --check: this group */
    if (root == MPI_PROC_NULL) return inter_none(a, true);
    if (root != MPI_ROOT) return inter_gather_send(a, sbuf, scount, stype, root);
    mpi_type *t = NULL;
    rc = mpi_chk_no_inplace(a, rbuf);
    if (!rc) rc = mpi_chk_triple(a, rbuf, rcount, rtype, &t, "receive");
    if (rc) return done(a, rc);
    int m = a->c->rsize;
    size_t cnt = (size_t)rcount * (size_t)m, *l = uniform(a, m, (size_t)rcount * t->size);
    char *tmp, *r = bytes_out(a->job, a->call, t, rbuf, cnt, &tmp);
    cr_inter x = inter_of(a->c);
    cr_inter_gatherv(a->job, &x, a->call, NULL, 0, r, l, l + m, CR_INTER_ROOT);
    bytes_done(t, tmp, rbuf, cnt);
    free(l);
    return done(a, MPI_SUCCESS);
}

/* Intercommunicator scatter: the root (MPI_ROOT) sends scount of stype to each
 * member of the other group. */
static int inter_scatter(cargs *a, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         int rcount, MPI_Datatype rtype, int root)
{
    int rc = mpi_chk_root(a, root);
    if (rc) return done(a, rc);
    mpi_chk_coll(a, root, MPI_OP_NULL, 0, NULL, 0, NULL); /* --check: this group */
    if (root == MPI_PROC_NULL) return inter_none(a, false);
    if (root != MPI_ROOT) return inter_scatter_recv(a, rbuf, rcount, rtype, root);
    mpi_type *t = NULL;
    rc = mpi_chk_no_inplace(a, sbuf);
    if (!rc) rc = mpi_chk_triple(a, sbuf, scount, stype, &t, "send");
    if (rc) return done(a, rc);
    int m = a->c->rsize;
    size_t cnt = (size_t)scount * (size_t)m, *l = uniform(a, m, (size_t)scount * t->size);
    char *tmp;
    const char *s = bytes_in(a->job, a->call, t, sbuf, cnt, &tmp);
    cr_inter x = inter_of(a->c);
    cr_inter_scatterv(a->job, &x, a->call, s, l, l + m, NULL, 0, CR_INTER_ROOT);
    free(tmp);
    free(l);
    return done(a, MPI_SUCCESS);
}

PMPI_WEAK(Gather);
int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    cargs a;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = begin(&a, "MPI_Gather", comm);
    if (!rc && a.c->inter) return inter_gather(&a, sbuf, scount, stype, rbuf, rcount, rtype, root);
    if (!rc) rc = mpi_chk_gather(&a, sbuf, scount, stype, rbuf, rcount, rtype, root, &ts, &tr);
    if (rc) return done(&a, rc);
    mpi_chk_coll(&a, root, MPI_OP_NULL, scount, ts, rcount, tr);
    bool isroot = a.c->me == root, inplace = sbuf == MPI_IN_PLACE;
    int np = a.c->size;
    if (!isroot) {
        char *tmp;
        const char *s = bytes_in(a.job, a.call, ts, sbuf, (size_t)scount, &tmp);
        cr_coll_gather(a.job, &a.c->g, a.call, s, NULL, (size_t)scount * ts->size, root);
        free(tmp);
        return done(&a, MPI_SUCCESS);
    }
    size_t blk = (size_t)rcount * tr->size, cnt = (size_t)rcount;
    char *rtmp, *r = bytes_out(a.job, a.call, tr, rbuf, cnt * (size_t)np, &rtmp);
    char *own = r + (size_t)root * blk, *stmp = NULL;
    if (inplace) {
        if (rtmp) mpi_pack_data(tr, (char *)rbuf + root * cnt * (size_t)type_extent(tr), cnt, own);
    } else {
        const char *s = bytes_in(a.job, a.call, ts, sbuf, (size_t)scount, &stmp);
        if (blk) memcpy(own, s, blk); /* empty blocks may have NULL buffers */
    }
    cr_coll_gather(a.job, &a.c->g, a.call, own, r, blk, root);
    free(stmp);
    bytes_done(tr, rtmp, rbuf, cnt * (size_t)np);
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Scatter);
int PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm)
{
    cargs a;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = begin(&a, "MPI_Scatter", comm);
    if (!rc && a.c->inter) return inter_scatter(&a, sbuf, scount, stype, rbuf, rcount, rtype, root);
    if (!rc) rc = mpi_chk_scatter(&a, sbuf, scount, stype, rbuf, rcount, rtype, root, &ts, &tr);
    if (rc) return done(&a, rc);
    mpi_chk_coll(&a, root, MPI_OP_NULL, scount, ts, rcount, tr);
    bool isroot = a.c->me == root, inplace = rbuf == MPI_IN_PLACE;
    int np = a.c->size;
    size_t blk = isroot ? (size_t)scount * ts->size : (size_t)rcount * tr->size;
    char *stmp = NULL, *rtmp = NULL;
    const char *s =
        isroot ? bytes_in(a.job, a.call, ts, sbuf, (size_t)scount * (size_t)np, &stmp) : NULL;
    char *r = inplace ? NULL : bytes_out(a.job, a.call, tr, rbuf, (size_t)rcount, &rtmp);
    if (inplace) r = (char *)s + (size_t)root * blk; /* own block stays where it is */
    cr_coll_scatter(a.job, &a.c->g, a.call, s, r, blk, root);
    free(stmp);
    if (!inplace) bytes_done(tr, rtmp, rbuf, (size_t)rcount);
    return done(&a, MPI_SUCCESS);
}

/* Intercommunicator all-gather (kind 'g') and all-to-all ('a'): every member
 * sends scount of stype (all-to-all: to each remote member), and gets rcount of
 * rtype from each member of the other group, in its rank order. */
static int inter_blocks(cargs *a, char kind, const void *sbuf, int scount, MPI_Datatype stype,
                        void *rbuf, int rcount, MPI_Datatype rtype)
{
    mpi_type *ts = NULL, *tr = NULL;
    int rc = mpi_chk_no_inplace(a, sbuf);
    if (!rc) rc = mpi_chk_triple(a, sbuf, scount, stype, &ts, "send");
    if (!rc) rc = mpi_chk_triple(a, rbuf, rcount, rtype, &tr, "receive");
    if (!rc) rc = mpi_chk_alias(a, sbuf, rbuf, (size_t)rcount * tr->size);
    if (rc) return done(a, rc);
    mpi_chk_coll(a, -1, MPI_OP_NULL, 0, NULL, 0, NULL); /* --check: this group */
    int m = a->c->rsize;
    size_t sn = kind == 'a' ? (size_t)scount * (size_t)m : (size_t)scount;
    size_t rn = (size_t)rcount * (size_t)m;
    size_t *sl = uniform(a, m, (size_t)scount * ts->size),
           *rl = uniform(a, m, (size_t)rcount * tr->size);
    char *stmp, *rtmp, *r = bytes_out(a->job, a->call, tr, rbuf, rn, &rtmp);
    const char *s = bytes_in(a->job, a->call, ts, sbuf, sn, &stmp);
    cr_inter x = inter_of(a->c);
    if (kind == 'a')
        cr_inter_alltoallv(a->job, &x, a->call, s, sl, sl + m, r, rl, rl + m);
    else
        cr_inter_allgatherv(a->job, &x, a->call, s, sn * ts->size, r, rl, rl + m);
    free(stmp);
    bytes_done(tr, rtmp, rbuf, rn);
    free(sl);
    free(rl);
    return done(a, MPI_SUCCESS);
}

PMPI_WEAK(Allgather);
int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm)
{
    cargs a;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = begin(&a, "MPI_Allgather", comm);
    if (!rc && a.c->inter) return inter_blocks(&a, 'g', sbuf, scount, stype, rbuf, rcount, rtype);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (!rc) rc = mpi_chk_blocks(&a, sbuf, scount, stype, rbuf, rcount, rtype, &ts, &tr);
    if (rc) return done(&a, rc);
    mpi_chk_coll(&a, -1, MPI_OP_NULL, scount, ts, rcount, tr);
    int np = a.c->size, me = a.c->me;
    size_t blk = (size_t)rcount * tr->size, cnt = (size_t)rcount;
    char *rtmp, *r = bytes_out(a.job, a.call, tr, rbuf, cnt * (size_t)np, &rtmp);
    char *own = r + (size_t)me * blk, *stmp = NULL;
    if (inplace) {
        if (rtmp) mpi_pack_data(tr, (char *)rbuf + me * cnt * (size_t)type_extent(tr), cnt, own);
    } else {
        const char *s = bytes_in(a.job, a.call, ts, sbuf, (size_t)scount, &stmp);
        if (blk) memcpy(own, s, blk); /* empty blocks may have NULL buffers */
    }
    cr_coll_allgather(a.job, &a.c->g, a.call, own, r, blk);
    free(stmp);
    bytes_done(tr, rtmp, rbuf, cnt * (size_t)np);
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Alltoall);
int PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    cargs a;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = begin(&a, "MPI_Alltoall", comm);
    if (!rc && a.c->inter) return inter_blocks(&a, 'a', sbuf, scount, stype, rbuf, rcount, rtype);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (!rc) rc = mpi_chk_blocks(&a, sbuf, scount, stype, rbuf, rcount, rtype, &ts, &tr);
    if (rc) return done(&a, rc);
    mpi_chk_coll(&a, -1, MPI_OP_NULL, scount, ts, rcount, tr);
    size_t np = (size_t)a.c->size, blk = (size_t)rcount * tr->size;
    char *stmp = NULL, *rtmp;
    const char *s;
    if (inplace) { /* send from a copy of the receive buffer */
        stmp = xmalloc(a.job, a.call, np * blk);
        mpi_pack_data(tr, rbuf, np * (size_t)rcount, stmp);
        s = stmp;
    } else {
        s = bytes_in(a.job, a.call, ts, sbuf, np * (size_t)scount, &stmp);
    }
    char *r = bytes_out(a.job, a.call, tr, rbuf, np * (size_t)rcount, &rtmp);
    cr_coll_alltoall(a.job, &a.c->g, a.call, s, r, blk);
    free(stmp);
    bytes_done(tr, rtmp, rbuf, np * (size_t)rcount);
    return done(&a, MPI_SUCCESS);
}

/* ---- the v forms ------------------------------------------------------------------ */

typedef mpi_vlay vlay; /* mpi_collchk.c */

static int vlay_make(cargs *a, vlay *v, const mpi_type *t, const int *counts, const int *displs,
                     const char *what)
{
    int rc = mpi_chk_counts(a, counts, displs, what), np = comm_peer_size(a->c);
    if (rc) return rc;
    v->len = xmalloc(a->job, a->call, 2 * (size_t)np * sizeof(size_t));
    mpi_vlay_fill(v, t, counts, displs, np);
    return 0;
}

static void vlay_pack(const vlay *v, const mpi_type *t, const void *buf, const int *counts,
                      const int *displs, char *out, int np)
{
    for (int i = 0; i < np; i++)
        mpi_pack_data(t, (const char *)buf + (ptrdiff_t)displs[i] * type_extent(t),
                      (size_t)counts[i], out + v->off[i]);
}

static void vlay_unpack(const vlay *v, const mpi_type *t, const char *in, void *buf,
                        const int *counts, const int *displs, int np)
{
    for (int i = 0; i < np; i++)
        mpi_unpack_data(t, in + v->off[i], v->len[i],
                        (char *)buf + (ptrdiff_t)displs[i] * type_extent(t), (size_t)counts[i]);
}

/* Intercommunicator gatherv (root: MPI_ROOT, rcounts over the other group). */
static int inter_gatherv(cargs *a, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         const int *rcounts, const int *displs, MPI_Datatype rtype, int root)
{
    int rc = mpi_chk_root(a, root);
    if (rc) return done(a, rc);
    if (root == MPI_PROC_NULL) return inter_none(a, true);
    if (root != MPI_ROOT) return inter_gather_send(a, sbuf, scount, stype, root);
    mpi_type *t = NULL;
    vlay v = {0};
    rc = mpi_chk_no_inplace(a, rbuf);
    if (!rc) rc = mpi_chk_type(a, rtype, &t);
    if (!rc) rc = vlay_make(a, &v, t, rcounts, displs, "recv");
    if (rc) return done(a, rc);
    char *r = v.staged ? xmalloc(a->job, a->call, v.total) : rbuf;
    cr_inter x = inter_of(a->c);
    cr_inter_gatherv(a->job, &x, a->call, NULL, 0, r, v.len, v.off, CR_INTER_ROOT);
    if (v.staged) {
        vlay_unpack(&v, t, r, rbuf, rcounts, displs, a->c->rsize);
        free(r);
    }
    free(v.len);
    return done(a, MPI_SUCCESS);
}

/* Intercommunicator scatterv (root: MPI_ROOT, scounts over the other group). */
static int inter_scatterv(cargs *a, const void *sbuf, const int *scounts, const int *displs,
                          MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root)
{
    int rc = mpi_chk_root(a, root);
    if (rc) return done(a, rc);
    if (root == MPI_PROC_NULL) return inter_none(a, false);
    if (root != MPI_ROOT) return inter_scatter_recv(a, rbuf, rcount, rtype, root);
    mpi_type *t = NULL;
    vlay v = {0};
    rc = mpi_chk_no_inplace(a, sbuf);
    if (!rc) rc = mpi_chk_type(a, stype, &t);
    if (!rc) rc = vlay_make(a, &v, t, scounts, displs, "send");
    if (rc) return done(a, rc);
    char *s = v.staged ? xmalloc(a->job, a->call, v.total) : (char *)sbuf;
    if (v.staged) vlay_pack(&v, t, sbuf, scounts, displs, s, a->c->rsize);
    cr_inter x = inter_of(a->c);
    cr_inter_scatterv(a->job, &x, a->call, s, v.len, v.off, NULL, 0, CR_INTER_ROOT);
    if (v.staged) free(s);
    free(v.len);
    return done(a, MPI_SUCCESS);
}

/* Intercommunicator allgatherv: rcounts/displs describe the other group. */
static int inter_allgatherv(cargs *a, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            const int *rcounts, const int *displs, MPI_Datatype rtype)
{
    mpi_type *ts = NULL, *tr = NULL;
    vlay v = {0};
    int rc = mpi_chk_no_inplace(a, sbuf);
    if (!rc) rc = mpi_chk_triple(a, sbuf, scount, stype, &ts, "send");
    if (!rc) rc = mpi_chk_type(a, rtype, &tr);
    if (!rc) rc = vlay_make(a, &v, tr, rcounts, displs, "recv");
    if (!rc && sbuf == rbuf && v.total && scount && ts->size) rc = mpi_chk_alias(a, sbuf, rbuf, 1);
    if (rc) {
        free(v.len);
        return done(a, rc);
    }
    char *stmp, *r = v.staged ? xmalloc(a->job, a->call, v.total) : rbuf;
    const char *s = bytes_in(a->job, a->call, ts, sbuf, (size_t)scount, &stmp);
    cr_inter x = inter_of(a->c);
    cr_inter_allgatherv(a->job, &x, a->call, s, (size_t)scount * ts->size, r, v.len, v.off);
    if (v.staged) {
        vlay_unpack(&v, tr, r, rbuf, rcounts, displs, a->c->rsize);
        free(r);
    }
    free(stmp);
    free(v.len);
    return done(a, MPI_SUCCESS);
}

PMPI_WEAK(Gatherv);
int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                 const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    cargs a;
    mpi_type *ts = NULL, *tr = NULL;
    vlay v = {0};
    int rc = begin(&a, "MPI_Gatherv", comm);
    if (!rc && a.c->inter)
        return inter_gatherv(&a, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root);
    if (!rc) rc = mpi_chk_root(&a, root);
    bool isroot = !rc && a.c->me == root, inplace = sbuf == MPI_IN_PLACE;
    if (!rc && inplace && !isroot)
        rc = mpi_cfail(&a, MPI_ERR_BUFFER, "MPI_IN_PLACE is for the root only");
    if (!rc && !inplace) rc = mpi_chk_triple(&a, sbuf, scount, stype, &ts, "send");
    if (!rc && isroot) rc = mpi_chk_type(&a, rtype, &tr);
    if (!rc && isroot) rc = vlay_make(&a, &v, tr, rcounts, displs, "recv");
    if (!rc && isroot && !inplace && (size_t)scount * ts->size != v.len[root])
        rc = mpi_chk_match(&a, (size_t)scount * ts->size, v.len[root]);
    if (!rc && isroot && !inplace)
        rc = mpi_chk_own_block(&a, sbuf, rbuf, (ptrdiff_t)displs[root] * type_extent(tr),
                               v.len[root]);
    if (rc) {
        free(v.len);
        return done(&a, rc);
    }
    mpi_chk_coll_v(&a, MPI_CHKV_GATHER, root, MPI_CHK1(scount, ts), MPI_CHKNR(rcounts, displs, tr));
    int np = a.c->size;
    char *stmp = NULL;
    if (!isroot) {
        const char *s = bytes_in(a.job, a.call, ts, sbuf, (size_t)scount, &stmp);
        cr_coll_gatherv(a.job, &a.c->g, a.call, s, (size_t)scount * ts->size, NULL, NULL, NULL,
                        root);
        free(stmp);
        return done(&a, MPI_SUCCESS);
    }
    char *r = v.staged ? xmalloc(a.job, a.call, v.total) : rbuf;
    const char *s = NULL;
    if (!inplace)
        s = bytes_in(a.job, a.call, ts, sbuf, (size_t)scount, &stmp);
    else if (v.staged)
        mpi_pack_data(tr, (char *)rbuf + (ptrdiff_t)displs[root] * type_extent(tr),
                      (size_t)rcounts[root], r + v.off[root]);
    cr_coll_gatherv(a.job, &a.c->g, a.call, s, v.len[root], r, v.len, v.off, root);
    if (v.staged) {
        vlay_unpack(&v, tr, r, rbuf, rcounts, displs, np);
        free(r);
    }
    free(stmp);
    free(v.len);
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Scatterv);
int PMPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                  void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    cargs a;
    mpi_type *ts = NULL, *tr = NULL;
    vlay v = {0};
    int rc = begin(&a, "MPI_Scatterv", comm);
    if (!rc && a.c->inter)
        return inter_scatterv(&a, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root);
    if (!rc) rc = mpi_chk_root(&a, root);
    bool isroot = !rc && a.c->me == root, inplace = rbuf == MPI_IN_PLACE;
    if (!rc && inplace && !isroot)
        rc = mpi_cfail(&a, MPI_ERR_BUFFER, "MPI_IN_PLACE is for the root only");
    if (!rc && isroot) rc = mpi_chk_type(&a, stype, &ts);
    if (!rc && isroot) rc = vlay_make(&a, &v, ts, scounts, displs, "send");
    if (!rc && !inplace) rc = mpi_chk_triple(&a, rbuf, rcount, rtype, &tr, "receive");
    if (!rc && isroot && !inplace) rc = mpi_chk_match(&a, v.len[root], (size_t)rcount * tr->size);
    if (!rc && isroot && !inplace)
        rc = mpi_chk_own_block(&a, rbuf, sbuf, (ptrdiff_t)displs[root] * type_extent(ts),
                               v.len[root]);
    if (rc) {
        free(v.len);
        return done(&a, rc);
    }
    mpi_chk_coll_v(&a, MPI_CHKV_SCATTER, root, MPI_CHKN(scounts, ts), MPI_CHK1(rcount, tr));
    int np = a.c->size;
    char *s = NULL;
    if (isroot) {
        s = v.staged ? xmalloc(a.job, a.call, v.total) : (char *)sbuf;
        if (v.staged) vlay_pack(&v, ts, sbuf, scounts, displs, s, np);
    }
    char *rtmp = NULL,
         *r = inplace ? NULL : bytes_out(a.job, a.call, tr, rbuf, (size_t)rcount, &rtmp);
    cr_coll_scatterv(a.job, &a.c->g, a.call, s, v.len, v.off, r,
                     inplace ? 0 : (size_t)rcount * tr->size, root);
    if (!inplace) bytes_done(tr, rtmp, rbuf, (size_t)rcount);
    if (v.staged) free(s);
    free(v.len);
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Allgatherv);
int PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    cargs a;
    mpi_type *ts = NULL, *tr = NULL;
    vlay v = {0};
    int rc = begin(&a, "MPI_Allgatherv", comm);
    if (!rc && a.c->inter)
        return inter_allgatherv(&a, sbuf, scount, stype, rbuf, rcounts, displs, rtype);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (!rc && !inplace) rc = mpi_chk_triple(&a, sbuf, scount, stype, &ts, "send");
    if (!rc) rc = mpi_chk_type(&a, rtype, &tr);
    if (!rc) rc = vlay_make(&a, &v, tr, rcounts, displs, "recv");
    if (!rc && !inplace) rc = mpi_chk_match(&a, (size_t)scount * ts->size, v.len[a.c->me]);
    if (!rc && !inplace)
        rc = mpi_chk_own_block(&a, sbuf, rbuf, (ptrdiff_t)displs[a.c->me] * type_extent(tr),
                               v.len[a.c->me]);
    if (rc) {
        free(v.len);
        return done(&a, rc);
    }
    mpi_chk_coll_v(&a, MPI_CHKV_ALLGATHER, -1, MPI_CHK1(scount, ts),
                   MPI_CHKNR(rcounts, displs, tr));
    int np = a.c->size, me = a.c->me;
    char *r = v.staged ? xmalloc(a.job, a.call, v.total) : rbuf, *stmp = NULL;
    const char *s = NULL;
    if (!inplace)
        s = bytes_in(a.job, a.call, ts, sbuf, (size_t)scount, &stmp);
    else if (v.staged)
        mpi_pack_data(tr, (char *)rbuf + (ptrdiff_t)displs[me] * type_extent(tr),
                      (size_t)rcounts[me], r + v.off[me]);
    cr_coll_allgatherv(a.job, &a.c->g, a.call, s, v.len[me], r, v.len, v.off);
    if (v.staged) {
        vlay_unpack(&v, tr, r, rbuf, rcounts, displs, np);
        free(r);
    }
    free(stmp);
    free(v.len);
    return done(&a, MPI_SUCCESS);
}

PMPI_WEAK(Alltoallv);
int PMPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                   void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                   MPI_Comm comm)
{
    cargs a;
    mpi_type *ts = NULL, *tr = NULL;
    vlay vs = {0}, vr = {0};
    int rc = begin(&a, "MPI_Alltoallv", comm);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (!rc && a.c->inter) rc = mpi_chk_no_inplace(&a, sbuf);
    if (!rc) rc = mpi_chk_type(&a, rtype, &tr);
    if (!rc) rc = vlay_make(&a, &vr, tr, rcounts, rdispls, "recv");
    if (!rc && !inplace) rc = mpi_chk_type(&a, stype, &ts);
    if (!rc && !inplace) rc = vlay_make(&a, &vs, ts, scounts, sdispls, "send");
    if (!rc && !inplace && sbuf == rbuf && vr.total) rc = mpi_chk_alias(&a, sbuf, rbuf, 1);
    if (rc) {
        free(vr.len);
        free(vs.len);
        return done(&a, rc);
    }
    mpi_chk_coll_v(&a, MPI_CHKV_ALLTOALL, -1, MPI_CHKN(scounts, ts),
                   MPI_CHKNR(rcounts, rdispls, tr));
    int np = comm_peer_size(a.c);
    char *s, *stmp = NULL;
    if (inplace) { /* send from a packed copy of the receive buffer */
        vs.len = xmalloc(a.job, a.call, 2 * (size_t)np * sizeof(size_t));
        vs.off = vs.len + np;
        size_t off = 0;
        for (int i = 0; i < np; i++) {
            vs.len[i] = vr.len[i];
            vs.off[i] = off;
            off += vr.len[i];
        }
        s = stmp = xmalloc(a.job, a.call, off);
        vs.staged = true;
        vlay_pack(&vs, tr, rbuf, rcounts, rdispls, s, np);
    } else if (vs.staged) {
        s = stmp = xmalloc(a.job, a.call, vs.total);
        vlay_pack(&vs, ts, sbuf, scounts, sdispls, s, np);
    } else {
        s = (char *)sbuf;
    }
    char *r = vr.staged ? xmalloc(a.job, a.call, vr.total) : rbuf;
    if (a.c->inter) {
        cr_inter x = inter_of(a.c);
        cr_inter_alltoallv(a.job, &x, a.call, s, vs.len, vs.off, r, vr.len, vr.off);
    } else {
        cr_coll_alltoallv(a.job, &a.c->g, a.call, s, vs.len, vs.off, r, vr.len, vr.off);
    }
    if (vr.staged) {
        vlay_unpack(&vr, tr, r, rbuf, rcounts, rdispls, np);
        free(r);
    }
    free(stmp);
    free(vs.len);
    free(vr.len);
    return done(&a, MPI_SUCCESS);
}

/* ---- MPI_Alltoallw ------------------------------------------------------------------ */

PMPI_WEAK(Alltoallw);
int PMPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                   const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                   const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    cargs a;
    int rc = begin(&a, "MPI_Alltoallw", comm);
    if (rc) return done(&a, rc);
    int np = comm_peer_size(a.c);
    bool inplace = sbuf == MPI_IN_PLACE;
    size_t *lens = xmalloc(a.job, a.call, 4 * (size_t)np * sizeof *lens);
    size_t *soff = lens + 2 * np, *roff = lens + 3 * np;
    mpi_type **types = xmalloc(a.job, a.call, 2 * (size_t)np * sizeof *types);
    mpi_wside ws = {types, lens, 0, false}, wr = {types + np, lens + np, 0, false};
    rc = mpi_chk_alltoallw(&a, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, &ws,
                           &wr);
    if (rc) {
        free(lens);
        free(types);
        return done(&a, rc);
    }
    mpi_chk_coll_v(&a, MPI_CHKV_ALLTOALL, -1, MPI_CHKW(scounts, inplace ? NULL : ws.t),
                   MPI_CHKWR(rcounts, rdispls, wr.t));
    mpi_wside_offsets(&wr, rdispls, roff, np);
    char *s, *stmp = NULL;
    if (inplace) { /* send from a packed copy of the receive buffer: the same blocks */
        memcpy(ws.len, wr.len, (size_t)np * sizeof *ws.len);
        ws.staged = true;
        mpi_wside_offsets(&ws, NULL, soff, np);
        s = stmp = xmalloc(a.job, a.call, wr.total);
        mpi_wside_pack(&wr, soff, rbuf, rcounts, rdispls, s, np);
    } else {
        mpi_wside_offsets(&ws, sdispls, soff, np);
        s = ws.staged ? (stmp = xmalloc(a.job, a.call, ws.total)) : (char *)sbuf;
        if (ws.staged) mpi_wside_pack(&ws, soff, sbuf, scounts, sdispls, s, np);
    }
    char *r = wr.staged ? xmalloc(a.job, a.call, wr.total) : rbuf;
    if (a.c->inter) {
        cr_inter x = inter_of(a.c);
        cr_inter_alltoallv(a.job, &x, a.call, s, ws.len, soff, r, wr.len, roff);
    } else {
        cr_coll_alltoallv(a.job, &a.c->g, a.call, s, ws.len, soff, r, wr.len, roff);
    }
    if (wr.staged) {
        for (int i = 0; i < np; i++)
            if (wr.len[i])
                mpi_unpack_data(wr.t[i], r + roff[i], wr.len[i], (char *)rbuf + rdispls[i],
                                (size_t)rcounts[i]);
        free(r);
    }
    free(stmp);
    free(lens);
    free(types);
    return done(&a, MPI_SUCCESS);
}
