/* `courier run`: the job launcher (src/run/launcher.c; its parts, src/run/launch_internal.h). */
#ifndef COURIER_LAUNCHER_H
#define COURIER_LAUNCHER_H

#include <stdbool.h>
#include <stddef.h>

#define CR_RUN_MAX_RANKS 4096 /* real ranks: the host segment is laid out for all of them */
/* --sim: contexts of one process (the cluster's model's most) */
#define CR_RUN_MAX_SIM_RANKS 16384

/* One program of an (MPMD) job: n ranks run argv (NULL-terminated). */
typedef struct cr_run_app {
    int n;
    char **argv;
} cr_run_app;

/* --bind: where ranks may run. */
enum cr_run_bind {
    CR_BIND_AUTO = 0, /* one CPU each, round robin, when there are more ranks than CPUs;
                         else CPUs of its own for each rank, a share of cpus/ranks */
    CR_BIND_CORE,     /* one CPU each, round robin, always */
    CR_BIND_NONE      /* wherever the scheduler likes */
};

/* What a `courier run` command line asks for. */
typedef struct cr_run_spec {
    cr_run_app *apps;
    int napps, total;       /* programs; ranks in all (1..CR_RUN_MAX_RANKS, or _SIM_) */
    bool label;             /* --label */
    bool help;              /* -h/--help: print the usage and run nothing */
    int bind;               /* enum cr_run_bind */
    double timeout;         /* seconds; 0: none */
    double hang_timeout;    /* seconds; 0: no watchdog (default 5) */
    const char *net;        /* --net: COURIER_NET for the ranks, or NULL */
    const char *hosts;      /* --hosts a:4,b:4, or NULL */
    const char *hostfile;   /* --hostfile F, or NULL */
    const char *rsh;        /* --rsh CMD: starts an agent on a host (default "ssh") */
    const char *trace;      /* --trace FILE: the trace to write, or NULL */
    const char *trace_dir;  /* where the ranks write their parts (the launcher's
                               choice, passed to agents as --trace-parts DIR) */
    const char *sim;        /* --sim MACHINE[,key=value...]: run in virtual time, or NULL */
    const char *sim_report; /* --sim-report FILE: the simulator's summary as JSON, or NULL */
    const char *check;      /* --check[=LIST]: COURIER_CHECK for the ranks ("1": all), or NULL */
    char **args;            /* owned: the copy of argv the apps point into */
} cr_run_spec;

/* Parse a command line (argv[0] is "run", never looked at; argv is not changed,
 * its strings are referred to, not copied). find(prog, find_arg) says whether a
 * program can be executed; NULL accepts every name. Returns 0 with *spec filled
 * (or spec->help set), or 2 with a one-line message in err (no "courier run:"
 * prefix, no newline) and *spec empty. Prints nothing, never exits. */
int cr_run_parse(int argc, char *const *argv, cr_run_spec *spec,
                 bool (*find)(const char *prog, void *arg), void *find_arg, char *err,
                 size_t errlen);
/* Free what cr_run_parse allocated; safe on an empty spec and twice. */
void cr_run_spec_free(cr_run_spec *spec);

/* argv[0] is "run". Returns the exit status for the courier command. */
int cr_run_main(int argc, char **argv);
/* argv[0] is "agent": a host's agent, started by courier run (or a parent
 * agent) through the rsh command. */
int cr_agent_main(int argc, char **argv);

#endif
