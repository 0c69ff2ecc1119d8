/* The MPI-1 calls MPI-3.0 removed, with the switch that declares them
 * (OMPI_ENABLE_MPI1_COMPAT): MPI_Address, MPI_Type_extent/_lb/_ub,
 * MPI_Type_hvector/_hindexed/_struct and the MPI_LB/MPI_UB markers, each
 * checked against what it must give, and the removed combiners
 * MPI_COMBINER_*_INTEGER (their values; C's calls report the MPI-2 ones). One
 * rank is enough; rank 0 prints "legacy ok". Built without the switch it
 * must not compile (mpi4.cmake). */
#include "mcheck.h"

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    double d[4];
    MPI_Aint a0, a2;
    OK(MPI_Address(&d[0], &a0));
    OK(MPI_Address(&d[2], &a2));
    CHECK(a2 - a0 == 2 * (MPI_Aint)sizeof(double), "MPI_Address: %ld", (long)(a2 - a0));

    MPI_Datatype hv, hi, st, st2;
    OK(MPI_Type_hvector(3, 2, 5 * sizeof(int), MPI_INT, &hv));
    MPI_Aint ext, lb, ub;
    OK(MPI_Type_extent(hv, &ext));
    CHECK(ext == 12 * (MPI_Aint)sizeof(int), "hvector extent %ld", (long)ext);
    int bl[3] = {1, 2, 1};
    MPI_Aint disp[3] = {4 * sizeof(int), 0, 8 * sizeof(int)};
    OK(MPI_Type_hindexed(3, bl, disp, MPI_INT, &hi));
    OK(MPI_Type_lb(hi, &lb));
    OK(MPI_Type_ub(hi, &ub));
    CHECK(lb == 0 && ub == 9 * (MPI_Aint)sizeof(int), "hindexed lb %ld ub %ld", (long)lb, (long)ub);

    /* struct with markers: one int at 8, lb at 4, ub at 32 (the MPI-1 idiom) */
    int sbl[3] = {1, 1, 1};
    MPI_Aint sd[3] = {4, 8, 32};
    MPI_Datatype sty[3] = {MPI_LB, MPI_INT, MPI_UB};
    OK(MPI_Type_struct(3, sbl, sd, sty, &st));
    OK(MPI_Type_lb(st, &lb));
    OK(MPI_Type_ub(st, &ub));
    OK(MPI_Type_extent(st, &ext));
    CHECK(lb == 4 && ub == 32 && ext == 28, "struct lb %ld ub %ld extent %ld", (long)lb, (long)ub,
          (long)ext);
    int size = 0;
    OK(MPI_Type_size(st, &size));
    CHECK(size == (int)sizeof(int), "struct size %d", size);
    /* without markers: an ordinary struct */
    MPI_Aint sd2[2] = {0, 8};
    MPI_Datatype sty2[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_struct(2, sbl, sd2, sty2, &st2));
    OK(MPI_Type_extent(st2, &ext));
    CHECK(ext == 16, "plain struct extent %ld", (long)ext);

    /* the marker type moves data: 2 of them, 28 bytes apart */
    OK(MPI_Type_commit(&st));
    int buf[16] = {0}, out[16];
    for (int i = 0; i < 16; i++) buf[i] = i;
    for (int i = 0; i < 16; i++) out[i] = -1;
    OK(MPI_Sendrecv(buf, 2, st, 0, 1, out, 2, st, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    CHECK(out[2] == 2 && out[9] == 9 && out[3] == -1, "struct data %d %d %d", out[2], out[9],
          out[3]);

    /* the removed combiners: the values they had, reported by no type */
    CHECK(MPI_COMBINER_HVECTOR_INTEGER == 5 && MPI_COMBINER_HINDEXED_INTEGER == 8 &&
              MPI_COMBINER_STRUCT_INTEGER == 11,
          "removed combiners %d %d %d", MPI_COMBINER_HVECTOR_INTEGER, MPI_COMBINER_HINDEXED_INTEGER,
          MPI_COMBINER_STRUCT_INTEGER);
    MPI_Datatype made[3] = {hv, hi, st2};
    int want[3] = {MPI_COMBINER_HVECTOR, MPI_COMBINER_HINDEXED, MPI_COMBINER_STRUCT};
    for (int i = 0; i < 3; i++) {
        int ni, na, nd, comb;
        OK(MPI_Type_get_envelope(made[i], &ni, &na, &nd, &comb));
        CHECK(comb == want[i], "type %d: combiner %d, expected %d", i, comb, want[i]);
    }
    OK(MPI_Type_free(&hv));
    OK(MPI_Type_free(&hi));
    OK(MPI_Type_free(&st));
    OK(MPI_Type_free(&st2));
    if (!me) printf("legacy ok\n");
    OK(MPI_Finalize());
    return 0;
}
