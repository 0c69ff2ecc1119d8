/* MPI_Comm_split_type on an intercommunicator (MPI-4.1): the even and the
 * odd ranks of MPI_COMM_WORLD joined, split by MPI_COMM_TYPE_SHARED and by
 * MPI_COMM_TYPE_HW_GUIDED at "mpi_shared_memory": each rank gets an
 * intercommunicator of the local group's ranks on its host and the remote
 * group's ranks on that host (MPI_COMM_NULL where the remote group has none
 * there), which carries an intercommunicator all-reduce; MPI_UNDEFINED gives
 * MPI_COMM_NULL. Hosts are read from a split of MPI_COMM_WORLD (pretend hosts:
 * COURIER_TEST_HOSTS). 2 or more ranks. */
#include <stdlib.h>

#include "mcheck.h"

static int me, np, *host; /* host[r]: the lowest world rank on r's host */

static void check_split(MPI_Comm got)
{
    int lsame = 0, rsame = 0;
    for (int r = 0; r < np; r++)
        if (host[r] == host[me]) r % 2 == me % 2 ? lsame++ : rsame++;
    if (!rsame) {
        CHECK(got == MPI_COMM_NULL, "no remote rank on my host, yet a communicator");
        return;
    }
    CHECK(got != MPI_COMM_NULL, "MPI_COMM_NULL with %d remote ranks on my host", rsame);
    int flag, size, rsize;
    OK(MPI_Comm_test_inter(got, &flag));
    CHECK(flag, "the result is not an intercommunicator");
    OK(MPI_Comm_size(got, &size));
    OK(MPI_Comm_remote_size(got, &rsize));
    CHECK(size == lsame && rsize == rsame, "sizes %d/%d, expected %d/%d", size, rsize, lsame,
          rsame);
    int one = 1, sum = 0; /* an intercommunicator all-reduce: the remote group's sum */
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, got));
    CHECK(sum == rsame, "all-reduce gave %d, expected %d", sum, rsame);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np >= 2, "needs 2 or more ranks");
    host = malloc((size_t)np * sizeof *host);
    MPI_Comm node;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int lowest = me;
    OK(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node));
    OK(MPI_Allgather(&lowest, 1, MPI_INT, host, 1, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Comm_free(&node));

    /* the groups: even and odd world ranks (on pretend hosts of consecutive
     * ranks, each host has some of both, or of one only) */
    MPI_Comm half, inter, got;
    OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, 0, &half));
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 9, &inter));

    OK(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &got));
    CHECK(got == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");

    OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, np - me, MPI_INFO_NULL, &got));
    check_split(got);
    if (got != MPI_COMM_NULL) OK(MPI_Comm_free(&got));

    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_HW_GUIDED, 0, info, &got));
    check_split(got);
    if (got != MPI_COMM_NULL) OK(MPI_Comm_free(&got));
    OK(MPI_Info_free(&info));

    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&half));
    free(host);
    if (me == 0) printf("inter_split_type ok\n");
    MPI_Finalize();
    return 0;
}
