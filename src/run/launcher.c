/* `courier run`: start a job, forward its output and signals, watch it, and
 * clean up whatever happens.
 *
 * Invariants:
 *  - what can be known wrong before a rank starts is refused then, in one line:
 *    the COURIER_* settings (src/run/envcheck.c), a program that is missing, a
 *    directory or linked with another MPI library (src/run/progfile.c), a
 *    --net naming no address of this host (an agent: of its host);
 *  - the shared segment is a memfd (no name anywhere), so it disappears with the
 *    last process that holds it: nothing is ever left in /dev/shm;
 *  - every rank runs in the job's own process group and has PR_SET_PDEATHSIG
 *    (SIGKILL): if the launcher dies, even by SIGKILL, the ranks die too; the
 *    launcher itself kills the whole group before it returns, so no process of
 *    the job outlives it;
 *  - the first rank to fail (non-zero exit or a signal) is reported in one line,
 *    then every other rank is sent SIGTERM and, half a second later, SIGKILL (a
 *    second, after a signal to the launcher). A rank that exits non-zero from
 *    outside the job (it had finalized at exit, or never joined) harms nobody's
 *    messages, so the others are ended only once each has ended or waited in a
 *    communication call, nothing moving, for STILL_MS, or after LAST_WORDS_MS:
 *    a rank printing its own last words is not killed half-way (NPB DT: every
 *    rank prints an error and exits 1 after MPI_Finalize). A signal, or an end
 *    inside the job (a fatal error, _exit, MPI_Abort), ends the others at once;
 *  - when every rank still running has been blocked in a communication call,
 *    with nothing moving, for --hang-timeout seconds, the watchdog says what
 *    each waits for and the job ends with status 99 (src/host/watchdog.c);
 *  - output is forwarded a whole line at a time, so lines of different ranks
 *    never mix (a partial line is flushed when it grows past the buffer or at
 *    the end of the stream);
 *  - nothing a rank wrote is lost, and the launcher's report comes after it:
 *    a rank that ended has its pipes read to EOF (or, while a process it left
 *    behind holds them, to empty) when it is reaped, and before any report line
 *    (failure, --timeout, deadlock, signal) every rank's pipes are read of what
 *    they hold; after the report, ranks are forwarded until their pipes close.
 *
 * This file is cr_run_main: the command line checked, then the job run on this
 * host or across hosts. The parts (their prototypes and the job_spec they share
 * in launch_internal.h): parse.c the command line and the help; output.c output
 * forwarding; start.c starting this host's ranks; watch.c watching them and
 * ending the job; across.c a job across hosts and the agents' tree; finish.c
 * the trace, the jobs registry and the end of a job; agent.c `courier agent`. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envcheck.h"
#include "hosts.h"
#include "launcher.h"
#include "progfile.h"

#include "launch_internal.h"

/* Whether the hosts the command line names are all this machine. A list that
 * does not parse is not: run_across reports it. */
static bool hosts_here(const cr_run_spec *cmd)
{
    cr_hostlist hl = {0};
    char err[600];
    bool here = !(cmd->hostfile && cr_hosts_parse_file(&hl, cmd->hostfile, err, sizeof err)) &&
                !(cmd->hosts && cr_hosts_parse_list(&hl, cmd->hosts, err, sizeof err)) &&
                cr_hosts_all_here(&hl);
    cr_hosts_free(&hl);
    return here;
}

/* An iPSC host program (it calls cube.h's host calls) is the first program,
 * on one rank, with node programs beside it: then COURIER_NX_HOST=1 tells
 * every rank's NX/2 that rank 0 is the host (src/api/nx.c). A program that
 * is not here (across hosts) is taken for a node program. 0, or -1 with err. */
static int nx_host(const cr_run_spec *cmd, char *err, size_t errlen)
{
    unsetenv("COURIER_NX_HOST"); /* a job's own, never its parent's */
    for (int a = 0; a < cmd->napps; a++) {
        char path[PATH_MAX];
        const char *prog = cmd->apps[a].argv[0];
        if (!resolve_program(prog, path) || !cr_progfile_nx_host(path)) continue;
        if (a == 0 && cmd->apps[0].n == 1 && cmd->napps > 1) {
            setenv("COURIER_NX_HOST", "1", 1);
            continue;
        }
        snprintf(err, errlen,
                 "%s is an iPSC host program (it calls load, setpid, getcube, waitall or "
                 "killcube): give it first, on one rank, and the node program after it: "
                 "courier run -n 1 %s : -n 8 ./node",
                 prog, prog);
        for (char *p = err; *p; p++) /* it quotes an argument: one line */
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
        return -1;
    }
    return 0;
}

int cr_run_main(int argc, char **argv)
{
    job_spec js = {.fail.rank = -1};
    char err[8192];
    int rc = cr_run_parse(argc, argv, &js.cmd, NULL, NULL, err, sizeof err);
    bool across = !rc && (js.cmd.hosts || js.cmd.hostfile);
    if (rc) return usage_error("%s", err);
    /* --hosts localhost:4 (or this machine's name, in a hostfile too) is a job on
     * this machine, as with other MPIs' launchers: no agent, no ssh. */
    if (across && !js.cmd.rsh && hosts_here(&js.cmd)) across = false;
    if (!js.cmd.help && !across) { /* the programs must be here: a missing one is one line */
        cr_run_spec_free(&js.cmd);
        if (cr_run_parse(argc, argv, &js.cmd, find_program, NULL, err, sizeof err)) {
            fprintf(stderr, "courier run: %s\n", err);
            return 2;
        }
        js.cmd.hosts = js.cmd.hostfile = NULL;
    }
    if (js.cmd.help) {
        print_usage(stdout);
        return 0;
    }
    if (js.cmd.rsh && !across) {
        cr_run_spec_free(&js.cmd);
        return usage_error("--rsh starts agents on other hosts: give --hosts or --hostfile");
    }
    /* The settings from the environment, once for every rank. */
    if (js.cmd.check) setenv("COURIER_CHECK", js.cmd.check, 1); /* --check: the ranks read it */
    if (cr_envcheck(err, sizeof err)) {
        fprintf(stderr, "courier run: %s\n", err);
        cr_run_spec_free(&js.cmd);
        return 2;
    }
    /* The programs and --net, here (across hosts each agent looks on its host). */
    for (int a = 0; !across && a < js.cmd.napps; a++) {
        int kind = program_problem(js.cmd.apps[a].argv[0], err, sizeof err);
        if (kind == PROG_OK) continue;
        cr_run_spec_free(&js.cmd);
        fprintf(stderr, "courier run: %s\n", err); /* the program, not the options */
        return 2;
    }
    if (nx_host(&js.cmd, err, sizeof err)) {
        cr_run_spec_free(&js.cmd);
        fprintf(stderr, "courier run: %s\n", err);
        return 2;
    }
    const char *net_env = getenv("COURIER_NET");
    if (!across && (js.cmd.net || (net_env && *net_env)) &&
        cr_envcheck_net(js.cmd.net ? js.cmd.net : net_env,
                        js.cmd.net ? "--net " : "COURIER_NET=", err, sizeof err)) {
        cr_run_spec_free(&js.cmd);
        if (js.cmd.net) return usage_error("%s", err);
        fprintf(stderr, "courier run: %s\n", err);
        return 2;
    }
    raise_fd_limit(js.cmd.total);
    if (alloc_ranks(&js)) return usage_error("out of memory for %d ranks", js.cmd.total);
    /* Inside a Slurm allocation of several nodes, a job without --hosts spans
     * them, its agents started by srun (COURIER_NO_SLURM=1: this node only). */
    cr_hostlist slurm = {0};
    if (!across && !cr_envcheck_flag("COURIER_NO_SLURM")) {
        char err[600];
        rc = cr_hosts_from_slurm(&slurm, err, sizeof err);
        if (rc < 0) {
            cr_hosts_free(&slurm);
            free(js.ranks);
            cr_run_spec_free(&js.cmd);
            return usage_error("inside a Slurm allocation: %s", err);
        }
        across = rc == 0;
        if (across && !js.cmd.rsh) js.cmd.rsh = "srun --overlap -N1 -n1 -w";
    }
    if (across) return run_across(&js, argc, argv, slurm);

    js.count = js.cmd.total;
    js.argc = argc;
    js.argv = argv;
    if (trace_begin(&js, "courier run")) {
        release(&js);
        return 1;
    }
    unsigned char key[32];
    int sfd = signal_fd();
    if (sfd < 0 || random_key(key)) {
        fprintf(stderr, "courier run: cannot start: %s\n", strerror(errno));
        release(&js);
        return 1;
    }
    rc = start_here(&js, key, "courier run");
    explicit_bzero(key, sizeof key);
    if (rc) {
        release(&js);
        return rc;
    }
    register_job(&js, argc, argv);
    return watch_and_finish(&js, sfd, "courier run");
}
