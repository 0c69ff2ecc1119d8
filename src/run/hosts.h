/* The hosts of a job: `courier run --hosts a:4,b:4` or `--hostfile F`
 * (src/run/hosts.c). */
#ifndef COURIER_HOSTS_H
#define COURIER_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cr_hostlist {
    int n;
    char **name; /* owned */
    int *slots;  /* ranks it may run */
    int *count;  /* ranks it runs, once placed */
} cr_hostlist;

/* Add the hosts of a --hosts list ("a:4,b,c:2"; a host without a count has one
 * slot) or of a hostfile (Open MPI's syntax: "name [slots=N] [max_slots=M]" per
 * line, '#' comments). A name given twice adds its slots. 0, or -1 with a
 * one-line message in err. */
int cr_hosts_parse_list(cr_hostlist *hl, const char *list, char *err, size_t errlen);
int cr_hosts_parse_file(cr_hostlist *hl, const char *path, char *err, size_t errlen);
/* Inside a Slurm allocation of several nodes: its nodes (SLURM_JOB_NODELIST,
 * expanded by `scontrol show hostnames`), with as many slots as Slurm gives
 * tasks (SLURM_TASKS_PER_NODE) or CPUs (SLURM_JOB_CPUS_PER_NODE) there: "4(x2),2".
 * 0 with the hosts added; 1: not in an allocation of several nodes; -1 with err. */
int cr_hosts_from_slurm(cr_hostlist *hl, char *err, size_t errlen);
/* Place n ranks: the first host's slots first, in order. Hosts left with no
 * rank are dropped. 0, or -1 with err (more ranks than slots). */
int cr_hosts_place(cr_hostlist *hl, int n, char *err, size_t errlen);
/* Whether every host of the list is this machine (localhost, 127.0.0.1, ::1,
 * this machine's name or one of its addresses): such a job needs no agent and
 * no ssh, as with mpirun --host localhost. */
bool cr_hosts_all_here(const cr_hostlist *hl);
void cr_hosts_free(cr_hostlist *hl);

#endif
