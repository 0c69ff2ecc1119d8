/* The registry of running jobs and the commands that read it, `courier ps` and
 * `courier status` (src/run/jobs.c). */
#ifndef COURIER_JOBS_H
#define COURIER_JOBS_H

#include <stddef.h>

/* What a launcher (or a host's agent) says about its job. */
typedef struct cr_jobs_info {
    int agent;         /* 0: the launcher; 1: a host's agent of a job across hosts */
    int ranks;         /* the job's ranks in all */
    int first, count;  /* the ranks this process started (count 0: none, across hosts) */
    const char *hosts; /* "a:2,b:2" (host:ranks, in rank order); NULL: this host alone */
    int segfd;         /* the host segment's memfd in this process; -1: none here */
    double timeout;    /* --timeout, 0: none */
    const char *trace; /* --trace's file, or NULL */
    int argc;          /* the courier command line from "run" on */
    char *const *argv;
} cr_jobs_info;

/* Write this process's entry in the user's registry of jobs (atomically); path
 * (len bytes) receives its name, for cr_jobs_unregister. A registry that is
 * missing is made; one that is unsafe (another user's, group- or
 * world-writable, a symbolic link) or any other failure gets one warning line
 * on stderr and no entry (path ""): the job runs on regardless. */
void cr_jobs_register(const cr_jobs_info *info, char *path, size_t len);
/* Remove the entry (nothing when path is ""), and forget it. */
void cr_jobs_unregister(char *path);

/* argv[0] is "ps" / "status". Return the exit status of the courier command. */
int cr_ps_main(int argc, char **argv);
int cr_status_main(int argc, char **argv);

#endif
