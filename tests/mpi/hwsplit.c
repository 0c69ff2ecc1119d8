/* MPI_Comm_split_type by hardware level (MPI-4.0/4.1): HW_GUIDED and
 * RESOURCE_GUIDED with "mpi_hw_resource_type" = "mpi_shared_memory" give the
 * same groups as MPI_COMM_TYPE_SHARED (the pretend hosts of
 * COURIER_TEST_HOSTS: np / hosts ranks each); "NUMANode" lies within the host
 * and "Core" (also as "hwloc://Core") within the NUMA node, its members on one core by sysfs's
 * core_id and physical_package_id of the CPU each runs on (the job runs with
 * --bind core); MPI_INFO_NULL, no key and an unknown value give
 * MPI_COMM_NULL; HW_UNGUIDED over MPI_COMM_WORLD gives the hosts when there
 * are several (and "mpi_hw_resource_type" = "mpi_shared_memory" in the info
 * passed, as mpi4py's testSplitTypeHWUnguided asks), over a host a strict
 * subset of it or MPI_COMM_NULL, over
 * MPI_COMM_SELF MPI_COMM_NULL; a bad split type and a bad info handle are
 * refused (MPI_ERR_ARG, MPI_ERR_INFO). MPI_Get_hw_resource_info names the
 * three levels in "mpi_hw_resource_type", each with its own key, and each
 * value splits MPI_COMM_WORLD; a NULL argument is MPI_ERR_ARG. Rank 0 prints
 * "hwsplit ok". */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "mcheck.h"

static MPI_Comm guided(MPI_Comm comm, int type, const char *value)
{
    MPI_Info info;
    OK(MPI_Info_create(&info));
    if (value) OK(MPI_Info_set(info, "mpi_hw_resource_type", value));
    MPI_Comm out;
    OK(MPI_Comm_split_type(comm, type, 0, info, &out));
    OK(MPI_Info_free(&info));
    return out;
}

/* Every member of sub is a member of sup. */
static int within(MPI_Comm sub, MPI_Comm sup)
{
    MPI_Group a, b;
    OK(MPI_Comm_group(sub, &a));
    OK(MPI_Comm_group(sup, &b));
    int n;
    OK(MPI_Group_size(a, &n));
    int *in = malloc(2 * (size_t)n * sizeof *in), *out = in + n;
    for (int i = 0; i < n; i++) in[i] = i;
    OK(MPI_Group_translate_ranks(a, n, in, b, out));
    int ok = 1;
    for (int i = 0; i < n; i++) ok &= out[i] != MPI_UNDEFINED;
    free(in);
    MPI_Group_free(&a);
    MPI_Group_free(&b);
    return ok;
}

static long sysfs_long(int cpu, const char *what)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f && fscanf(f, "%ld", &v) != 1) v = -1;
    if (f) fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *hv = getenv("COURIER_TEST_HOSTS");
    int hosts = hv ? atoi(hv) : 1;

    MPI_Comm shared;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    int hs, cmp;
    OK(MPI_Comm_size(shared, &hs));
    CHECK(hs == np / hosts, "a host has %d ranks, expected %d", hs, np / hosts);
    const int types[2] = {MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_RESOURCE_GUIDED};
    for (int t = 0; t < 2; t++) {
        MPI_Comm host = guided(MPI_COMM_WORLD, types[t], "mpi_shared_memory");
        CHECK(host != MPI_COMM_NULL, "type %d: mpi_shared_memory gave MPI_COMM_NULL", types[t]);
        OK(MPI_Comm_compare(host, shared, &cmp));
        CHECK(cmp == MPI_CONGRUENT, "type %d: not the host's ranks (%d)", types[t], cmp);
        MPI_Comm_free(&host);
        MPI_Comm none = guided(MPI_COMM_WORLD, types[t], "no_such_resource");
        CHECK(none == MPI_COMM_NULL, "type %d: an unknown value gave a communicator", types[t]);
        none = guided(MPI_COMM_WORLD, types[t], NULL);
        CHECK(none == MPI_COMM_NULL, "type %d: no key gave a communicator", types[t]);
        OK(MPI_Comm_split_type(MPI_COMM_WORLD, types[t], 0, MPI_INFO_NULL, &none));
        CHECK(none == MPI_COMM_NULL, "type %d: MPI_INFO_NULL gave a communicator", types[t]);
    }

    /* Bound to one CPU (--bind core): in one NUMA node and one core. */
    MPI_Comm numa = guided(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, "NUMANode");
    CHECK(numa != MPI_COMM_NULL && within(numa, shared), "NUMA node not within the host");
    MPI_Comm core = guided(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, "Core");
    CHECK(core != MPI_COMM_NULL && within(core, numa), "core not within the NUMA node");
    MPI_Comm uri = guided(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, "hwloc://Core");
    CHECK(uri != MPI_COMM_NULL, "hwloc://Core gave MPI_COMM_NULL");
    OK(MPI_Comm_compare(uri, core, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "hwloc://Core: not Core's ranks (%d)", cmp);
    MPI_Comm_free(&uri);
    int cpu = sched_getcpu();
    long mine[2] = {sysfs_long(cpu, "physical_package_id"), sysfs_long(cpu, "core_id")}, first[2];
    memcpy(first, mine, sizeof first);
    OK(MPI_Bcast(first, 2, MPI_LONG, 0, core));
    CHECK(mine[0] == first[0] && mine[1] == first[1],
          "CPU %d: package %ld core %ld, the core communicator's rank 0 has %ld %ld", cpu, mine[0],
          mine[1], first[0], first[1]);

    MPI_Comm un;
    MPI_Info said;
    OK(MPI_Info_create(&said));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, said, &un));
    if (hosts > 1) {
        CHECK(un != MPI_COMM_NULL, "HW_UNGUIDED over several hosts gave MPI_COMM_NULL");
        OK(MPI_Comm_compare(un, shared, &cmp));
        CHECK(cmp == MPI_CONGRUENT, "HW_UNGUIDED over several hosts: not the hosts (%d)", cmp);
        /* MPI-4.1: the info given says which level it split by */
        char lv[64] = "";
        int lvlen = sizeof lv - 1, lvflag = 0;
        OK(MPI_Info_get_string(said, "mpi_hw_resource_type", &lvlen, lv, &lvflag));
        CHECK(lvflag && !strcmp(lv, "mpi_shared_memory"), "HW_UNGUIDED's info says '%s'", lv);
    }
    OK(MPI_Info_free(&said));
    if (un != MPI_COMM_NULL) MPI_Comm_free(&un);
    OK(MPI_Comm_split_type(shared, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &un));
    if (un != MPI_COMM_NULL) {
        int us;
        OK(MPI_Comm_size(un, &us));
        CHECK(us < hs && within(un, shared), "HW_UNGUIDED over a host: %d of %d ranks", us, hs);
        MPI_Comm_free(&un);
    }
    OK(MPI_Comm_split_type(MPI_COMM_SELF, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &un));
    CHECK(un == MPI_COMM_NULL, "HW_UNGUIDED over MPI_COMM_SELF gave a communicator");

    MPI_Info hw;
    OK(MPI_Get_hw_resource_info(&hw));
    char names[128], val[32];
    int flag = 0, len = sizeof names;
    OK(MPI_Info_get_string(hw, "mpi_hw_resource_type", &len, names, &flag));
    CHECK(flag && !strcmp(names, "mpi_shared_memory,NUMANode,Core"), "resource types '%s'",
          flag ? names : "(none)");
    for (char *t = strtok(names, ","); t; t = strtok(NULL, ",")) {
        len = sizeof val;
        OK(MPI_Info_get_string(hw, t, &len, val, &flag));
        CHECK(flag && val[0] >= '0' && val[0] <= '9', "key %s: '%s'", t, flag ? val : "(none)");
        MPI_Comm by = guided(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, t);
        CHECK(by != MPI_COMM_NULL, "%s from MPI_Get_hw_resource_info gave MPI_COMM_NULL", t);
        MPI_Comm_free(&by);
    }
    OK(MPI_Info_free(&hw));

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ec = -1;
    MPI_Error_class(MPI_Get_hw_resource_info(NULL), &ec);
    CHECK(ec == MPI_ERR_ARG, "MPI_Get_hw_resource_info(NULL): class %d", ec);
    MPI_Error_class(MPI_Comm_split_type(MPI_COMM_WORLD, 99, 0, MPI_INFO_NULL, &un), &ec);
    CHECK(ec == MPI_ERR_ARG, "split type 99: class %d", ec);
    MPI_Error_class(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, (MPI_Info)12345, &un), &ec);
    CHECK(ec == MPI_ERR_INFO, "a bad info handle: class %d", ec);

    MPI_Comm_free(&core);
    MPI_Comm_free(&numa);
    MPI_Comm_free(&shared);
    if (me == 0) printf("hwsplit ok\n");
    MPI_Finalize();
    return 0;
}
