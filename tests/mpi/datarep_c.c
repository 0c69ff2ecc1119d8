/* MPI-4.0 MPI_Register_datarep_c: a representation whose conversions take
 * MPI_Count counts (each rank's own file): writing through its view stores
 * the write conversion's bytes (the ints inverted, read back with POSIX
 * calls), reading through it gives the values back, and each conversion was
 * called with the element count and the extra state; one registered with
 * MPI_CONVERSION_FN_NULL_C stores the native bytes; registering a name
 * twice (through either call) is MPI_ERR_DUP_DATAREP and a NULL extent
 * function MPI_ERR_ARG; an extent function that answers MPI_UNDEFINED makes
 * MPI_File_get_type_extent raise MPI_ERR_VALUE_TOO_LARGE (MPI-4.1 §15.5.3),
 * and MPI_File_set_view of that type, which cannot be laid out, too.
 * Rank 0 prints "datarep_c ok". */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcheck.h"

typedef struct {
    MPI_Count rd, wr; /* the counts the conversions were last called with */
} seen;

static int inv_rd(void *user, MPI_Datatype t, MPI_Count count, void *file, MPI_Offset pos, void *x)
{
    (void)t, (void)pos;
    ((seen *)x)->rd = count;
    for (MPI_Count i = 0; i < count; i++) ((int *)user)[i] = ~((int *)file)[i];
    return MPI_SUCCESS;
}
static int inv_wr(void *user, MPI_Datatype t, MPI_Count count, void *file, MPI_Offset pos, void *x)
{
    (void)t, (void)pos;
    ((seen *)x)->wr = count;
    for (MPI_Count i = 0; i < count; i++) ((int *)file)[i] = ~((int *)user)[i];
    return MPI_SUCCESS;
}
static int ext(MPI_Datatype t, MPI_Aint *e, void *x)
{
    (void)x;
    MPI_Aint lb;
    return MPI_Type_get_extent(t, &lb, e);
}

/* ints as in memory; doubles too large to express */
static int ext_too_large(MPI_Datatype t, MPI_Aint *e, void *x)
{
    (void)x;
    *e = t == MPI_INT ? 4 : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int cls(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* Write v through a view of datarep at 0, read it back through it, and the
 * first int as the file holds it. */
static int round_trip(const char *p, const char *datarep, const int v[4])
{
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, datarep, MPI_INFO_NULL));
    OK(MPI_File_write_at(fh, 0, v, 4, MPI_INT, MPI_STATUS_IGNORE));
    int back[4] = {0};
    OK(MPI_File_read_at(fh, 0, back, 4, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(!memcmp(back, v, sizeof back), "%s: round trip %d %d %d %d", datarep, back[0], back[1],
          back[2], back[3]);
    OK(MPI_File_close(&fh));
    FILE *f = fopen(p, "rb");
    int raw = 0;
    CHECK(f && fread(&raw, sizeof raw, 1, f) == 1, "cannot read %s back", p);
    fclose(f);
    return raw;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *tmp = getenv("TMPDIR");
    char p[1024];
    snprintf(p, sizeof p, "%s/courier_datarep_c_%d_%d.dat", tmp ? tmp : "/tmp", (int)getpid(), me);
    seen s = {-1, -1};
    OK(MPI_Register_datarep_c("inverted_c", inv_rd, inv_wr, ext, &s));
    CHECK(cls(MPI_Register_datarep_c("inverted_c", inv_rd, inv_wr, ext, &s)) == MPI_ERR_DUP_DATAREP,
          "registered twice");
    CHECK(cls(MPI_Register_datarep("inverted_c", NULL, NULL, ext, NULL)) == MPI_ERR_DUP_DATAREP,
          "registered twice through MPI_Register_datarep");
    CHECK(cls(MPI_Register_datarep_c("no_extent_c", inv_rd, inv_wr, NULL, NULL)) == MPI_ERR_ARG,
          "a NULL extent function taken");
    int v[4] = {me, -2, 7, 1000 + me};
    int raw = round_trip(p, "inverted_c", v);
    CHECK(raw == ~me, "on disk %d, expected %d", raw, ~me);
    CHECK(s.wr == 4 && s.rd == 4, "conversions called with counts %lld and %lld", (long long)s.wr,
          (long long)s.rd);
    OK(MPI_Register_datarep_c("plain_c", MPI_CONVERSION_FN_NULL_C, MPI_CONVERSION_FN_NULL_C, ext,
                              NULL));
    raw = round_trip(p, "plain_c", v);
    CHECK(raw == me, "plain_c on disk %d, expected %d", raw, me);
    OK(MPI_Register_datarep("too_large", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                            ext_too_large, NULL));
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "too_large", MPI_INFO_NULL));
    MPI_Aint e = 0;
    CHECK(cls(MPI_File_get_type_extent(fh, MPI_DOUBLE, &e)) == MPI_ERR_VALUE_TOO_LARGE,
          "an extent the function cannot express was not MPI_ERR_VALUE_TOO_LARGE");
    /* a view of that type cannot be laid out: the same class */
    CHECK(cls(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "too_large", MPI_INFO_NULL)) ==
              MPI_ERR_VALUE_TOO_LARGE,
          "a view of a type whose extent the function cannot express was not "
          "MPI_ERR_VALUE_TOO_LARGE");
    OK(MPI_File_close(&fh));
    unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("datarep_c ok\n");
    MPI_Finalize();
    return 0;
}
