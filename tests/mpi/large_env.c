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
 *    MPI_UNDEFINED (MPI-4.1 §4.6). Any number of ranks (each alone); argument "types" or
 *    "buffers": that part only. */
#include <limits.h>
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *part = argc > 1 ? argv[1] : "all";
    if (strcmp(part, "buffers")) types();
    if (strcmp(part, "types")) buffers();
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) printf("large_env ok\n");
    MPI_Finalize();
    return 0;
}
