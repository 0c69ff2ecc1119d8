/* The hardware levels courier knows, for MPI_Comm_split_type's
 * MPI_COMM_TYPE_HW_GUIDED, _RESOURCE_GUIDED and _HW_UNGUIDED: the host (what
 * MPI_COMM_TYPE_SHARED splits by: job->host_of, which COURIER_TEST_HOSTS
 * divides into pretend hosts), the NUMA node and the core. A rank's NUMA node
 * and core are those of the CPUs it may run on (sched_getaffinity), read from
 * sysfs (/sys/devices/system/cpu/cpuN/nodeM and topology/thread_siblings_list)
 * at the call; a rank whose CPUs span several of them (an unbound rank) is in
 * none, and a split by that level gives it MPI_COMM_NULL.
 *
 * Invariants:
 *  - a level's color identifies one instance job-wide: it includes the host
 *    (host * 65536 + node, or + the core's first CPU), so the same node or core
 *    number on two (pretend) hosts are different instances; -1 means none;
 *  - levels are ordered from the largest (host) to the smallest (core), each
 *    within the one before. */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

enum { HW_HOST, HW_NUMA, HW_CORE, HW_LEVELS };

/* The names "mpi_hw_resource_type" takes (hwloc's, also as "hwloc://NAME",
 * and MPI's for the host). */
static const char *const hw_names[][2] = {
    {"mpi_shared_memory", "Machine"}, {"NUMANode", "NUMANode"}, {"Core", "Core"}};

/* CPU cpu's NUMA node (0 where sysfs has none) and its core (the first CPU of
 * its thread siblings; the CPU itself where sysfs does not say). */
static void cpu_place(int cpu, int *node, int *core)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
    *node = 0;
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        int n;
        if (sscanf(e->d_name, "node%d", &n) == 1) {
            *node = n;
            break;
        }
    }
    if (d) closedir(d);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%d", core) != 1) *core = cpu;
    if (f) fclose(f);
}

/* This rank's color at each level (-1: its CPUs are not all in one). */
static void hw_colors(cr_job *job, int color[HW_LEVELS])
{
    int host = job->host_of[job->rank];
    color[HW_HOST] = host;
    color[HW_NUMA] = color[HW_CORE] = -1;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set)) return;
    int node = -1, core = -1, first = 1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set)) continue;
        int n, k;
        cpu_place(cpu, &n, &k);
        if (first) node = n, core = k, first = 0;
        if (n != node) node = -2;
        if (k != core) core = -2;
    }
    if (node >= 0) color[HW_NUMA] = host * 65536 + node;
    if (node >= 0 && core >= 0) color[HW_CORE] = host * 65536 + core;
}

/* The level "mpi_hw_resource_type" names in info, or -1. */
static int guided_level(MPI_Info info)
{
    const char *v = info == MPI_INFO_NULL ? NULL : mpi_info_lookup(info, "mpi_hw_resource_type");
    if (v && !strncmp(v, "hwloc://", 8)) v += 8; /* the URI form of MPI-4.1's examples */
    for (int l = 0; v && l < HW_LEVELS; l++)
        if (!strcmp(v, hw_names[l][0]) || !strcmp(v, hw_names[l][1])) return l;
    return -1;
}

int mpi_hw_split_color(cr_job *job, const char *call, cr_group *g, int split_type, MPI_Info info,
                       const char **level)
{
    int color[HW_LEVELS];
    *level = NULL;
    hw_colors(job, color);
    if (split_type != MPI_COMM_TYPE_HW_UNGUIDED) {
        int l = guided_level(info);
        return l < 0 || color[l] < 0 ? MPI_UNDEFINED : color[l];
    }
    /* The first level, from the largest, whose instances divide comm: its
     * members are not all in one (the minimum and the maximum differ), though
     * some are in one. Every member reaches the same level. */
    long mm[2 * HW_LEVELS];
    for (int l = 0; l < HW_LEVELS; l++) mm[l] = color[l], mm[HW_LEVELS + l] = -(long)color[l];
    cr_redop mn = CR_OP_PREDEF(cr_op_min_long, long);
    cr_coll_allreduce(job, g, call, mm, mm, 2 * HW_LEVELS, &mn);
    for (int l = 0; l < HW_LEVELS; l++) {
        long lo = mm[l], hi = -mm[HW_LEVELS + l];
        if (hi < 0) break; /* no member is in one: the smaller levels neither */
        if (lo != hi) {
            if (color[l] < 0) return MPI_UNDEFINED;
            *level = hw_names[l][0];
            return color[l];
        }
    }
    return MPI_UNDEFINED;
}

/* MPI-4.1: what this rank runs on, at the call. "mpi_hw_resource_type": the
 * values of that key HW_GUIDED splits this rank by (its levels, largest
 * first, comma-separated); then one key per such level, named by the value,
 * whose value is the instance (the host's number, the NUMA node's, the
 * core's first CPU). */
PMPI_WEAK(Get_hw_resource_info);
int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    const char *call = "MPI_Get_hw_resource_info";
    cr_job *job = mpi_enter(call);
    if (!hw_info)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "hw_info is NULL"));
    int color[HW_LEVELS];
    hw_colors(job, color);
    mpi_leave(job, MPI_SUCCESS);
    char types[64] = "", val[HW_LEVELS][16];
    for (int l = 0; l < HW_LEVELS && color[l] >= 0; l++) {
        snprintf(types + strlen(types), sizeof types - strlen(types), "%s%s", l ? "," : "",
                 hw_names[l][0]);
        snprintf(val[l], sizeof val[l], "%d", l ? color[l] % 65536 : color[l]);
    }
    int rc = PMPI_Info_create(hw_info);
    if (rc) return rc;
    PMPI_Info_set(*hw_info, "mpi_hw_resource_type", types);
    for (int l = 0; l < HW_LEVELS && color[l] >= 0; l++)
        PMPI_Info_set(*hw_info, hw_names[l][0], val[l]);
    return MPI_SUCCESS;
}
