/* `courier run` and `courier agent` inside: the job_spec every part of the
 * launcher shares, and the functions one part calls in another. Only the
 * launcher's own files include it (launcher.c, parse.c, output.c, start.c,
 * watch.c, across.c, finish.c, agent.c); the rest of courier sees launcher.h.
 *
 * Invariants: a job's whole state is its job_spec (no file of the launcher
 * has mutable globals of its own); a job_spec starts zeroed with fail.rank
 * -1, and release (finish.c) gives back whatever it holds at any point. */
#ifndef COURIER_LAUNCH_INTERNAL_H
#define COURIER_LAUNCH_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <arpa/inet.h>

#include "../host/host.h"
#include "hosts.h"
#include "launcher.h"
#include "tree.h"
#include "vsim.h"
#include "../host/watchdog.h"

#define LINE_MAX_FWD 4096
#define GRACE_MS 500 /* from SIGTERM to SIGKILL */
#define WATCH_MS 200 /* how often the hang watchdog looks */
#define EXIT_DEADLOCK 99
#define LAST_WORDS_MS 2000 /* the most the others run on after a failure outside the job */
#define STILL_MS 500       /* ... unless all have waited in calls, nothing moving, this long */
#define PENDING_MS 20      /* meanwhile, how often we look whether they all wait */
#define FLUSH_MS 500       /* across hosts: how long a report waits for the ranks' output */

typedef struct stream {
    int fd;  /* -1 once closed */
    int out; /* 1 or 2 */
    size_t len;
    char buf[LINE_MAX_FWD];
} stream;

/* --sim with contexts beyond the descriptor limit: ranks 1.. write their
 * stdout and stderr into one pipe as frames (a header of two uint32: rank * 2
 * + stream (0 stdout, 1 stderr), the length; then the bytes), which
 * mux_pump hands to each rank's stream as if read from its pipe. */
typedef struct ctx_mux {
    int fd; /* -1: none (or closed) */
    uint32_t hdr[2];
    size_t hdr_len; /* bytes of hdr read */
    size_t left;    /* bytes of the current frame's data still to come */
} ctx_mux;

typedef struct rank_proc {
    pid_t pid;
    int appnum;
    bool running;
    stream s[2];
} rank_proc;

/* Across hosts, the launcher's output: what ranks and the launcher itself say,
 * in order, written by a thread of its own so that a terminal or pipe that
 * does not read (a pager) never stops the launcher from serving the agents'
 * tree (its heartbeats, its sockets). Past OUT_HOLD bytes the agents are told
 * to hold the ranks' output (CR_F_HOLD), so it stays bounded. */
#define OUT_HOLD (4u << 20)
typedef struct out_chunk {
    struct out_chunk *next;
    int fd;
    size_t len;
    char data[];
} out_chunk;

typedef struct out_q {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    out_chunk *head, *tail;
    size_t bytes;
    bool stop;
    pthread_t th;
} out_q;

/* The failure that will end the job, once reported. */
typedef struct failure {
    int rank; /* -1: none */
    pid_t pid;
    int st;         /* its wait status */
    bool now;       /* end the others at once: a signal, or it ended inside the job */
    uint64_t until; /* else the others may run on until then (ns) */
    bool reported;
    bool said; /* a job it spawned failed and that job's launcher said why (across hosts) */
} failure;

typedef struct job_spec {
    cr_run_spec cmd; /* what the command line asks for */
    void *control;   /* the segment's control part (rank and status records) */
    int secretfd;    /* the job's secret, a sealed memfd each rank reads once */
    cr_watchdog *wd; /* reads those records; NULL if it could not be made */
    int unfinished;  /* 1 + the first rank that ended without MPI_Finalize; 0: none */
    rank_proc *ranks;
    bool *alive; /* scratch: ranks[r].running, for the watchdog */
    failure fail;
    pid_t pgid;
    int exit_status;
    bool ending;             /* termination under way */
    bool killed_all;         /* ... and, asked twice, everything killed at once */
    cpu_set_t cpus;          /* the CPUs the launcher may use, and so the job */
    int cpu_of[CPU_SETSIZE]; /* the i-th of them */
    bool bind;               /* each rank bound to CPUs of its own (--bind; start_here) */
    bool one_each;           /* ... one CPU, round robin; else a share of cpus/count CPUs */
    int cpu_start;           /* the place in cpu_of where rank first's CPUs begin */
    uint64_t kill_at;        /* when SIGKILL follows the SIGTERM (ns), 0: not scheduled */
    /* Across hosts (src/run/tree.c): the launcher starts no rank itself; each
     * host's agent starts its own and reports them up the tree. */
    int first, count;                /* the ranks this process starts: first .. first+count-1 */
    cr_tree *tree;                   /* the agents' tree; NULL for a job on this host alone */
    bool agent;                      /* this process is a host's agent */
    char *layout;                    /* COURIER_HOST_LAYOUT for the ranks: ranks per host, "4,4" */
    char net_here[INET6_ADDRSTRLEN]; /* an agent's default COURIER_NET */
    cr_host_card *cards;             /* every rank's card known here: the segment's (an
                                        agent), or a table of the launcher's own */
    bool *card_sent;                 /* an agent: cards of its ranks sent up */
    int cards_left;
    uint64_t started;           /* when the ranks were started (ns) */
    unsigned char still;        /* the subtree's STILL_*, as last sent (agent) */
    bool quiet_asked;           /* the launcher asked in this quiet spell (tree_watch) */
    unsigned char *child_still; /* each child's STILL_* */
    uint64_t reports_until;     /* the launcher: collecting what each rank waits for */
    /* Rank 0's standard input across hosts: the launcher reads its own and sends
     * it to the first host's agent (rank 0 is always there), which writes it
     * into a pipe. */
    int in_fd;      /* the launcher: 0 while it reads; the agent: the pipe's end, else -1 */
    int in_pipe[2]; /* the agent of rank 0: the pipe (read end for the rank) */
    char *in_buf;   /* the agent: what the pipe has not taken yet */
    size_t in_len;
    bool in_eof;    /* ... and then EOF */
    bool *flushed;  /* each child has sent up all its ranks wrote (CR_F_FLUSH) */
    out_q *oq;      /* the launcher across hosts: its output, written by a thread */
    bool held;      /* the launcher: the agents hold output; an agent: told to */
    bool flushing;  /* the launcher waits for that; an agent owes its parent FLUSHED */
    bool *reported; /* ... which ranks have said */
    /* `courier ps` / `courier status` (src/run/jobs.c): this process's entry in
     * the user's registry of jobs ("": none), and the segment's descriptor,
     * kept open so that courier status can map the segment through /proc. */
    char regpath[PATH_MAX];
    int segfd; /* valid while control is set */
    /* --trace (the launcher): the ranks' parts directory, and the hang
     * report for the trace when there was one (and when it was made). */
    char trace_parts[PATH_MAX];
    char *hang_text;
    uint64_t hang_at;
    int argc; /* the command line from "run" on, as the trace names the job */
    char **argv;
    cr_vsim *vsim;              /* --sim: the simulator (src/run/vsim.c), else NULL */
    char sim_preload[PATH_MAX]; /* --sim: the timer shim the ranks preload ("": none found) */
    char sim_shared_preload[PATH_MAX]; /* --sim ...,shared=: its buffers' preload ("": none) */
    char probe_preload[PATH_MAX];      /* the probe a script's ranks preload ("": none found) */
    char abi_dir[PATH_MAX]; /* the directory of courier's libmpi_abi.so ("": none found) */
    /* An agent: what MPI_Comm_spawn needs to start a job on the job's hosts
     * (start.c, child_exec): "name:ranks,..." and the rsh command's words
     * joined by spaces (malloc'd; NULL on one host). */
    char *spawn_hosts, *spawn_rsh;
    bool contexts;    /* --sim: the ranks are contexts of one process, ... */
    pid_t ctx_pid;    /* ... this one (every rank_proc has its pid) */
    ctx_mux mux;      /* ... whose ranks 1.. may write through one pipe */
    bool mid_line[3]; /* what was last put on fd 1, 2 did not end a line */
} job_spec;

/* parse.c */
void print_usage(FILE *f);
int usage_error(const char *fmt, ...);
int parse_count(const char *s, long *out);
bool resolve_program(const char *prog, char buf[PATH_MAX]);
bool find_program(const char *prog, void *arg);
/* What keeps prog from running as a job of courier's, in one line (err):
 * PROG_USAGE (not found, a directory: the command line is wrong) or
 * PROG_FOREIGN (linked with another MPI library: its ranks would each start
 * alone, as a job of one rank, and end with status 0); PROG_OK: nothing. */
enum { PROG_OK, PROG_USAGE, PROG_FOREIGN };
int program_problem(const char *prog, char *err, size_t errlen);
/* Does prog's file start with "#!" (a script: its programs are not read)? */
bool program_is_script(const char *prog);

/* output.c */
void *out_writer(void *arg);
size_t out_bytes(out_q *q);
void out_stop(out_q *q);
void put_out(job_spec *js, int fd, const char *p, size_t n);
void put_report(job_spec *js, const char *p, size_t n);
__attribute__((format(printf, 2, 3))) void say(job_spec *js, const char *fmt, ...);
void emit(job_spec *js, int rank, int out, const char *p, size_t n);
ssize_t pump(job_spec *js, int rank, stream *s, size_t max);
ssize_t mux_pump(job_spec *js, size_t max);
void drain_rank(job_spec *js, int rank);
void drain_all(job_spec *js);

/* start.c */
int random_key(unsigned char key[32]);
int signal_fd(void);
void raise_fd_limit(int ranks);
int alloc_ranks(job_spec *js);
int start_here(job_spec *js, const unsigned char key[32], const char *who);

/* watch.c */
uint64_t now_ns(void);
void end_job(job_spec *js, int status);
void rank_ended(job_spec *js, int r, pid_t pid, int st, bool outside, bool aborted);
void rank_unfinished(job_spec *js, int r);
int failure_status(const failure *f);
void report_failure(job_spec *js);
void on_signal(job_spec *js, int sig);
int watch(job_spec *js, int sfd);

/* across.c */
void send_cards(job_spec *js);
void stdin_write(job_spec *js);
void stdin_read(job_spec *js);
void flush_hosts(job_spec *js);
void on_frame(void *arg, int from, const cr_frame_hdr *h, const void *pl);
void on_lost(void *arg, int from, const char *why);
int run_across(job_spec *js, int argc, char **argv, cr_hostlist hl);

/* finish.c */
int trace_begin(job_spec *js, const char *who);
void register_job(job_spec *js, int argc, char **argv);
int watch_and_finish(job_spec *js, int sfd, const char *who);
void release(job_spec *js);

#endif
