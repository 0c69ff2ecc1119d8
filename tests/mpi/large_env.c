/* Large counts that an int cannot hold, kept whole (MPI-4.1):
 *  - MPI_Type_contiguous_c, MPI_Type_vector_c and MPI_Type_create_hvector_c
 *    with a value past INT_MAX describe themselves as the call was made
 *    (MPI_Type_get_envelope_c: their combiner, the values as large counts;
 *    MPI_Type_get_contents_c gives them back, and a derived type inside comes
 *    back with its own large counts), have the size and extent they say, and
 *    the int forms MPI_Type_get_envelope/_contents refuse them with
 *    MPI_ERR_TYPE (MPI-4.1 §6.1.13); small _c types keep their int envelopes
 *    (mpi4py's testContiguousBigMPI);
 *  - MPI_Buffer_attach_c, MPI_Comm_attach_buffer_c and
 *    MPI_Session_attach_buffer_c of 3 GiB (mapped, never written: courier
 *    copies buffered sends elsewhere) hold the whole size: a buffered send
 *    goes through, the _c detach gives 3 GiB back, the int detach
 *    MPI_UNDEFINED (MPI-4.1 §4.6);
 *  - the indexed, struct, subarray and darray _c constructors with a value
 *    past INT_MAX likewise: their envelope and contents as MPI-4.1 §5.1.13
 *    lays them out (all values as large counts; subarray's ndims and order,
 *    darray's all but gsizes, as integers), the size and bounds they give,
 *    the bytes they select (in 3 GiB mapped, a few pages written), and the
 *    int forms' MPI_ERR_TYPE.
 * Any number of ranks (each alone); argument "types", "buffers" or "indexed":
 * that part only. */
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "mcheck.h"

#define BIG ((MPI_Count)INT_MAX + INT_MAX / 1024)

static void envelope(MPI_Datatype t, MPI_Count ni, MPI_Count na, MPI_Count nc, MPI_Count nd,
                     int comb)
{
    MPI_Count i, a, c, d;
    int k;
    OK(MPI_Type_get_envelope_c(t, &i, &a, &c, &d, &k));
    CHECK(i == ni && a == na && c == nc && d == nd && k == comb,
          "envelope_c %lld/%lld/%lld/%lld combiner %d, expected %lld/%lld/%lld/%lld %d",
          (long long)i, (long long)a, (long long)c, (long long)d, k, (long long)ni, (long long)na,
          (long long)nc, (long long)nd, comb);
}

/* The int forms cannot say what t holds. */
static void int_forms_refuse(MPI_Datatype t)
{
    int ni, na, nd, comb, cls, ints[4];
    MPI_Aint aints[4];
    MPI_Datatype types[2];
    int rc = MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "MPI_Type_get_envelope gave class %d", cls);
    rc = MPI_Type_get_contents(t, 4, 4, 2, ints, aints, types);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "MPI_Type_get_contents gave class %d", cls);
}

static void types(void)
{
    MPI_Datatype t, v, h, small, got[2];
    MPI_Count counts[3], size, lb, ext;
    int ints[3];
    MPI_Aint aints[1];

    /* contiguous: one large count */
    OK(MPI_Type_contiguous_c(BIG, MPI_BYTE, &t));
    OK(MPI_Type_size_c(t, &size));
    OK(MPI_Type_get_extent_c(t, &lb, &ext));
    CHECK(size == BIG && lb == 0 && ext == BIG, "size %lld lb %lld extent %lld", (long long)size,
          (long long)lb, (long long)ext);
    envelope(t, 0, 0, 1, 1, MPI_COMBINER_CONTIGUOUS);
    OK(MPI_Type_get_contents_c(t, 0, 0, 1, 1, ints, aints, counts, got));
    CHECK(counts[0] == BIG && got[0] == MPI_BYTE, "contents %lld", (long long)counts[0]);
    int_forms_refuse(t);

    /* vector of 2 blocks of the contiguous type, 3 of its extents apart: its
     * own values fit ints */
    OK(MPI_Type_vector_c(2, 1, 3, t, &v));
    envelope(v, 3, 0, 0, 1, MPI_COMBINER_VECTOR);
    OK(MPI_Type_size_c(v, &size));
    OK(MPI_Type_get_extent_c(v, &lb, &ext));
    CHECK(size == 2 * BIG && ext == 4 * BIG, "vector size %lld extent %lld", (long long)size,
          (long long)ext);
    /* a vector whose stride alone is large: 3 ints, 2^32 ints apart */
    OK(MPI_Type_vector_c(3, 1, (MPI_Count)1 << 32, MPI_INT, &h));
    envelope(h, 0, 0, 3, 1, MPI_COMBINER_VECTOR);
    OK(MPI_Type_get_contents_c(h, 0, 0, 3, 1, ints, aints, counts, got));
    CHECK(counts[0] == 3 && counts[1] == 1 && counts[2] == (MPI_Count)1 << 32 && got[0] == MPI_INT,
          "vector contents %lld %lld %lld", (long long)counts[0], (long long)counts[1],
          (long long)counts[2]);
    OK(MPI_Type_get_extent_c(h, &lb, &ext));
    CHECK(ext == ((MPI_Count)2 << 32) * 4 + 4, "large-stride vector extent %lld", (long long)ext);
    int_forms_refuse(h);
    OK(MPI_Type_free(&h));

    /* the vector's contents: its old type comes back as a new contiguous type
     * with its large count, even after the original is freed */
    OK(MPI_Type_free(&t));
    OK(MPI_Type_get_contents(v, 3, 0, 1, ints, aints, got));
    CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 3, "vector contents %d %d %d", ints[0],
          ints[1], ints[2]);
    envelope(got[0], 0, 0, 1, 1, MPI_COMBINER_CONTIGUOUS);
    OK(MPI_Type_get_contents_c(got[0], 0, 0, 1, 1, ints, aints, counts, &t));
    CHECK(counts[0] == BIG && t == MPI_BYTE, "inner contents %lld", (long long)counts[0]);
    OK(MPI_Type_free(&got[0]));
    OK(MPI_Type_free(&v));

    /* hvector with a large block length: 2 blocks of BIG bytes, BIG+8 bytes apart */
    OK(MPI_Type_create_hvector_c(2, BIG, BIG + 8, MPI_BYTE, &h));
    envelope(h, 0, 0, 3, 1, MPI_COMBINER_HVECTOR);
    OK(MPI_Type_size_c(h, &size));
    OK(MPI_Type_get_extent_c(h, &lb, &ext));
    CHECK(size == 2 * BIG && ext == 2 * BIG + 8, "hvector size %lld extent %lld", (long long)size,
          (long long)ext);
    OK(MPI_Type_get_contents_c(h, 0, 0, 3, 1, ints, aints, counts, got));
    CHECK(counts[0] == 2 && counts[1] == BIG && counts[2] == BIG + 8 && got[0] == MPI_BYTE,
          "hvector contents");
    OK(MPI_Type_free(&h));

    /* small _c types keep the int envelope the int forms read */
    OK(MPI_Type_contiguous_c(INT_MAX, MPI_BYTE, &small));
    envelope(small, 1, 0, 0, 1, MPI_COMBINER_CONTIGUOUS);
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(small, &ni, &na, &nd, &comb));
    OK(MPI_Type_get_contents(small, 1, 0, 1, ints, aints, got));
    CHECK(ints[0] == INT_MAX && got[0] == MPI_BYTE, "small contents %d", ints[0]);
    OK(MPI_Type_free(&small));
}

#define GIB3 ((MPI_Count)3 << 30)

static void *big_buffer(void)
{
    void *p = mmap(NULL, (size_t)GIB3, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of 3 GiB failed");
    return p;
}

/* One buffered send to this rank, received: the attached pool takes it. */
static void bsend_self(MPI_Comm comm)
{
    int me, x = 42, y = 0;
    MPI_Comm_rank(comm, &me);
    OK(MPI_Bsend(&x, 1, MPI_INT, me, 5, comm));
    OK(MPI_Recv(&y, 1, MPI_INT, me, 5, comm, MPI_STATUS_IGNORE));
    CHECK(y == 42, "received %d", y);
}

static void buffers(void)
{
    void *buf = big_buffer(), *back = NULL;
    MPI_Count size = 0;
    int isize = 0;

    /* the process's buffer */
    OK(MPI_Buffer_attach_c(buf, GIB3));
    bsend_self(MPI_COMM_WORLD);
    OK(MPI_Buffer_detach_c(&back, &size));
    CHECK(back == buf && size == GIB3, "MPI_Buffer_detach_c gave %p, %lld bytes", back,
          (long long)size);
    OK(MPI_Buffer_attach_c(buf, GIB3));
    OK(MPI_Buffer_detach(&back, &isize));
    CHECK(back == buf && isize == MPI_UNDEFINED, "MPI_Buffer_detach gave %p, %d", back, isize);

    /* a communicator's */
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_attach_buffer_c(dup, buf, GIB3));
    bsend_self(dup);
    OK(MPI_Comm_detach_buffer_c(dup, &back, &size));
    CHECK(back == buf && size == GIB3, "MPI_Comm_detach_buffer_c gave %lld", (long long)size);
    OK(MPI_Comm_attach_buffer_c(dup, buf, GIB3));
    OK(MPI_Comm_detach_buffer(dup, &back, &isize));
    CHECK(isize == MPI_UNDEFINED, "MPI_Comm_detach_buffer gave %d", isize);
    OK(MPI_Comm_free(&dup));

    /* a session's */
    MPI_Session s;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    OK(MPI_Session_attach_buffer_c(s, buf, GIB3));
    OK(MPI_Session_detach_buffer_c(s, &back, &size));
    CHECK(back == buf && size == GIB3, "MPI_Session_detach_buffer_c gave %lld", (long long)size);
    OK(MPI_Session_attach_buffer_c(s, buf, GIB3));
    OK(MPI_Session_detach_buffer(s, &back, &isize));
    CHECK(isize == MPI_UNDEFINED, "MPI_Session_detach_buffer gave %d", isize);
    OK(MPI_Session_finalize(&s));

    /* a small one still comes back as it was */
    OK(MPI_Buffer_attach_c(buf, 4096));
    OK(MPI_Buffer_detach(&back, &isize));
    CHECK(isize == 4096, "MPI_Buffer_detach gave %d", isize);
    munmap(buf, (size_t)GIB3);
}

/* The large counts and integers of t's contents, as MPI_Type_get_contents_c
 * gives them, against nc expected counts and ni integers; its datatypes
 * (nd of them) in got (predefined: as they are; the caller frees the rest). */
static void contents_c(MPI_Datatype t, int ni, const int *ints, int nc, const MPI_Count *counts,
                       int nd, MPI_Datatype *got)
{
    int gi[16];
    MPI_Count gc[16];
    MPI_Aint ga[1];
    OK(MPI_Type_get_contents_c(t, ni, 0, nc, nd, gi, ga, gc, got));
    for (int k = 0; k < ni; k++)
        CHECK(gi[k] == ints[k], "integer %d: %d, not %d", k, gi[k], ints[k]);
    for (int k = 0; k < nc; k++)
        CHECK(gc[k] == counts[k], "large count %d: %lld, not %lld", k, (long long)gc[k],
              (long long)counts[k]);
}

static void bounds(MPI_Datatype t, MPI_Count size, MPI_Count lb, MPI_Count ext, MPI_Count tlb,
                   MPI_Count text)
{
    MPI_Count s, l, e, tl, te;
    OK(MPI_Type_size_c(t, &s));
    OK(MPI_Type_get_extent_c(t, &l, &e));
    OK(MPI_Type_get_true_extent_c(t, &tl, &te));
    CHECK(s == size && l == lb && e == ext && tl == tlb && te == text,
          "size %lld lb %lld extent %lld true %lld/%lld, expected %lld %lld %lld %lld/%lld",
          (long long)s, (long long)l, (long long)e, (long long)tl, (long long)te, (long long)size,
          (long long)lb, (long long)ext, (long long)tlb, (long long)text);
}

/* One instance of t over buf packed: the n bytes want. */
static void selects(MPI_Datatype t, const char *buf, const char *want, int n)
{
    char out[16];
    MPI_Count pos = 0;
    OK(MPI_Type_commit(&t));
    OK(MPI_Pack_c(buf, 1, t, out, sizeof out, &pos, MPI_COMM_WORLD));
    CHECK(pos == n && memcmp(out, want, (size_t)n) == 0, "packed %lld bytes '%.*s', expected '%s'",
          (long long)pos, (int)pos, out, want);
}

#define FAR ((MPI_Count)INT_MAX + 9) /* a displacement past INT_MAX, inside 3 GiB */

static void indexed(void)
{
    char *buf = big_buffer();
    buf[0] = 'a', buf[1] = 'b', buf[FAR - 2] = 'w', buf[FAR - 1] = 'x', buf[FAR] = 'y';
    buf[FAR + 1] = 'z';
    MPI_Datatype t, d, got[2];

    /* indexed: a displacement past INT_MAX, then a block length */
    MPI_Count ibl[2] = {1, 2}, idi[2] = {0, FAR};
    OK(MPI_Type_indexed_c(2, ibl, idi, MPI_CHAR, &t));
    envelope(t, 0, 0, 5, 1, MPI_COMBINER_INDEXED);
    contents_c(t, 0, NULL, 5, (MPI_Count[]){2, 1, 2, 0, FAR}, 1, got);
    CHECK(got[0] == MPI_CHAR, "indexed old type");
    bounds(t, 3, 0, FAR + 2, 0, FAR + 2);
    selects(t, buf, "ayz", 3);
    int_forms_refuse(t);
    /* a copy made from it (MPI_Type_dup's contents) keeps the large counts */
    OK(MPI_Type_dup(t, &d));
    OK(MPI_Type_free(&t));
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(d, &ni, &na, &nd, &comb));
    OK(MPI_Type_get_contents(d, 0, 0, 1, NULL, NULL, got));
    envelope(got[0], 0, 0, 5, 1, MPI_COMBINER_INDEXED);
    OK(MPI_Type_free(&got[0]));
    OK(MPI_Type_free(&d));
    OK(MPI_Type_indexed_c(1, (MPI_Count[]){BIG}, (MPI_Count[]){4}, MPI_BYTE, &t));
    envelope(t, 0, 0, 3, 1, MPI_COMBINER_INDEXED);
    contents_c(t, 0, NULL, 3, (MPI_Count[]){1, BIG, 4}, 1, got);
    bounds(t, BIG, 4, BIG, 4, BIG);
    OK(MPI_Type_free(&t));

    /* hindexed: a block length past INT_MAX */
    OK(MPI_Type_create_hindexed_c(2, (MPI_Count[]){BIG, 1}, (MPI_Count[]){0, BIG + 100}, MPI_BYTE,
                                  &t));
    envelope(t, 0, 0, 5, 1, MPI_COMBINER_HINDEXED);
    contents_c(t, 0, NULL, 5, (MPI_Count[]){2, BIG, 1, 0, BIG + 100}, 1, got);
    bounds(t, BIG + 1, 0, BIG + 101, 0, BIG + 101);
    int_forms_refuse(t);
    OK(MPI_Type_free(&t));

    /* indexed_block: a displacement past INT_MAX */
    OK(MPI_Type_create_indexed_block_c(2, 2, (MPI_Count[]){0, FAR - 2}, MPI_CHAR, &t));
    envelope(t, 0, 0, 4, 1, MPI_COMBINER_INDEXED_BLOCK);
    contents_c(t, 0, NULL, 4, (MPI_Count[]){2, 2, 0, FAR - 2}, 1, got);
    bounds(t, 4, 0, FAR, 0, FAR);
    selects(t, buf, "abwx", 4);
    int_forms_refuse(t);
    OK(MPI_Type_free(&t));

    /* hindexed_block: a block length past INT_MAX */
    OK(MPI_Type_create_hindexed_block_c(2, BIG, (MPI_Count[]){BIG, 0}, MPI_BYTE, &t));
    envelope(t, 0, 0, 4, 1, MPI_COMBINER_HINDEXED_BLOCK);
    contents_c(t, 0, NULL, 4, (MPI_Count[]){2, BIG, BIG, 0}, 1, got);
    bounds(t, 2 * BIG, 0, 2 * BIG, 0, 2 * BIG);
    int_forms_refuse(t);
    OK(MPI_Type_free(&t));

    /* struct: a block length past INT_MAX */
    OK(MPI_Type_create_struct_c(2, (MPI_Count[]){1, BIG}, (MPI_Count[]){0, 8},
                                (MPI_Datatype[]){MPI_INT, MPI_BYTE}, &t));
    envelope(t, 0, 0, 5, 2, MPI_COMBINER_STRUCT);
    contents_c(t, 0, NULL, 5, (MPI_Count[]){2, 1, BIG, 0, 8}, 2, got);
    CHECK(got[0] == MPI_INT && got[1] == MPI_BYTE, "struct types");
    MPI_Count ext = (8 + BIG + 3) / 4 * 4; /* padded to MPI_INT's alignment */
    bounds(t, 4 + BIG, 0, ext, 0, 8 + BIG);
    int_forms_refuse(t);
    OK(MPI_Type_free(&t));

    /* subarray: ndims and order as integers, the rest as large counts */
    OK(MPI_Type_create_subarray_c(1, (MPI_Count[]){FAR + 2}, (MPI_Count[]){3},
                                  (MPI_Count[]){FAR - 1}, MPI_ORDER_C, MPI_CHAR, &t));
    envelope(t, 2, 0, 3, 1, MPI_COMBINER_SUBARRAY);
    contents_c(t, 2, (int[]){1, MPI_ORDER_C}, 3, (MPI_Count[]){FAR + 2, 3, FAR - 1}, 1, got);
    bounds(t, 3, 0, FAR + 2, FAR - 1, 3);
    selects(t, buf, "xyz", 3);
    int_forms_refuse(t);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_subarray_c(2, (MPI_Count[]){3, FAR}, (MPI_Count[]){2, 1},
                                  (MPI_Count[]){1, 5}, MPI_ORDER_C, MPI_CHAR, &t));
    envelope(t, 2, 0, 6, 1, MPI_COMBINER_SUBARRAY);
    contents_c(t, 2, (int[]){2, MPI_ORDER_C}, 6, (MPI_Count[]){3, FAR, 2, 1, 1, 5}, 1, got);
    bounds(t, 2, 0, 3 * FAR, FAR + 5, FAR + 1);
    OK(MPI_Type_free(&t));

    /* darray: gsizes as large counts, the rest as integers */
    OK(MPI_Type_create_darray_c(2, 1, 1, (MPI_Count[]){FAR}, (int[]){MPI_DISTRIBUTE_BLOCK},
                                (int[]){MPI_DISTRIBUTE_DFLT_DARG}, (int[]){2}, MPI_ORDER_C,
                                MPI_CHAR, &t));
    envelope(t, 7, 0, 1, 1, MPI_COMBINER_DARRAY);
    contents_c(t, 7,
               (int[]){2, 1, 1, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C}, 1,
               (MPI_Count[]){FAR}, 1, got);
    bounds(t, FAR / 2, 0, FAR, FAR / 2, FAR / 2);
    int_forms_refuse(t);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_darray_c(2, 1, 1, (MPI_Count[]){FAR}, (int[]){MPI_DISTRIBUTE_CYCLIC},
                                (int[]){1}, (int[]){2}, MPI_ORDER_FORTRAN, MPI_CHAR, &t));
    envelope(t, 7, 0, 1, 1, MPI_COMBINER_DARRAY);
    bounds(t, FAR / 2, 0, FAR, 1, FAR - 1);
    OK(MPI_Type_free(&t));

    /* with values that fit, the int form's envelope, as before */
    OK(MPI_Type_indexed_c(2, ibl, (MPI_Count[]){0, 5}, MPI_CHAR, &t));
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(ni == 5 && na == 0 && nd == 1 && comb == MPI_COMBINER_INDEXED, "small indexed %d/%d/%d",
          ni, na, nd);
    OK(MPI_Type_free(&t));
    munmap(buf, (size_t)GIB3);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *part = argc > 1 ? argv[1] : "all";
    bool all = !strcmp(part, "all");
    if (all || !strcmp(part, "types")) types();
    if (all || !strcmp(part, "buffers")) buffers();
    if (all || !strcmp(part, "indexed")) indexed();
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) printf("large_env ok\n");
    MPI_Finalize();
    return 0;
}
