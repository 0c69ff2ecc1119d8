/* A job's bookkeeping around its run, and its end: the --trace parts
 * directory and the merged trace, the entry in the user's registry of jobs
 * (courier ps/status), and watch_and_finish, which watches the job and then
 * gives back everything it held (release).
 *
 * Invariants: when watch_and_finish returns, no process of the job is left
 * (its process group SIGKILLed, every child reaped), nor a System V segment a
 * rank made that nobody holds, nor the registry entry; release is safe on a
 * job that never started. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../host/host.h"
#include "hosts.h"
#include "jobs.h"
#include "launcher.h"
#include "trace_merge.h"
#include "tree.h"
#include "vsim.h"
#include "../host/watchdog.h"

#include "launch_internal.h"

/* System V shared memory that a rank made and nobody holds any more: a library
 * in a rank (UCX's sysv transport) marks its segments for removal only once
 * every peer has attached, so a rank killed during start-up leaves them. Once
 * every process of the job is gone, remove those the ranks created that no
 * process is attached to: nothing of the job outlives it. A segment whose
 * creator pid is alive again belongs to whoever has that pid now. */
static void remove_sysv_leftovers(const job_spec *js)
{
    FILE *f = fopen("/proc/sysvipc/shm", "r");
    if (!f) return;
    char line[512];
    int col_id = -1, col_cpid = -1, col_nattch = -1;
    if (fgets(line, sizeof line, f)) { /* the header names the columns */
        int c = 0;
        for (char *save = NULL, *w = strtok_r(line, " \t\n", &save); w;
             w = strtok_r(NULL, " \t\n", &save), c++) {
            if (!strcmp(w, "shmid")) col_id = c;
            if (!strcmp(w, "cpid")) col_cpid = c;
            if (!strcmp(w, "nattch")) col_nattch = c;
        }
    }
    while (col_id >= 0 && col_cpid >= 0 && col_nattch >= 0 && fgets(line, sizeof line, f)) {
        long v[32] = {0};
        int c = 0;
        for (char *save = NULL, *w = strtok_r(line, " \t\n", &save); w && c < 32;
             w = strtok_r(NULL, " \t\n", &save))
            v[c++] = strtol(w, NULL, 10);
        if (v[col_nattch] != 0) continue;
        /* a live creator is not one of ours (they are all gone): its pid came
         * round again, to a rank of another job that has made the segment and
         * not attached to it yet (seen under ctest -j2 with pid_max 32768) */
        if (kill((pid_t)v[col_cpid], 0) == 0 || errno == EPERM) continue;
        for (int r = js->first; r < js->first + js->count; r++)
            if (js->ranks[r].pid == (pid_t)v[col_cpid]) {
                shmctl((int)v[col_id], IPC_RMID, NULL);
                break;
            }
    }
    fclose(f);
}

/* --trace FILE: the directory the ranks write their parts in, FILE.parts.PID
 * beside FILE (an absolute path: agents and ranks on other hosts are given
 * it). 0, or 1 after saying why not. */
int trace_begin(job_spec *js, const char *who)
{
    if (!js->cmd.trace) return 0;
    /* What would stop the trace being written is said now, not after the job
     * ran (its records were lost then): a directory, or a file we may not
     * write (the parts directory beside it shows that the directory is). */
    struct stat st;
    if (stat(js->cmd.trace, &st) == 0 &&
        (S_ISDIR(st.st_mode) || access(js->cmd.trace, W_OK) != 0)) {
        fprintf(stderr, "%s: --trace %s: %s; name a file to write the trace to\n", who,
                js->cmd.trace,
                S_ISDIR(st.st_mode) ? "is a directory" : "cannot be written (permission)");
        return 1;
    }
    char cwd[PATH_MAX] = "";
    if (js->cmd.trace[0] != '/' && !getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
    int n = snprintf(js->trace_parts, sizeof js->trace_parts, "%s%s%s.parts.%d", cwd,
                     cwd[0] ? "/" : "", js->cmd.trace, (int)getpid());
    if (n < 0 || (size_t)n >= sizeof js->trace_parts) {
        fprintf(stderr, "%s: --trace %s: the name is too long\n", who, js->cmd.trace);
        return 1;
    }
    if (mkdir(js->trace_parts, 0700) != 0) {
        fprintf(stderr, "%s: --trace %s: cannot make %s: %s (is the directory writable?)\n", who,
                js->cmd.trace, js->trace_parts, strerror(errno));
        return 1;
    }
    js->cmd.trace_dir = js->trace_parts;
    return 0;
}

/* The job is over: the parts become the trace, and go. */
static void trace_finish(job_spec *js)
{
    if (!js->trace_parts[0]) return;
    char *cmd = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&cmd, &len);
    for (int i = 0; m && i < js->argc; i++) fprintf(m, "%s%s", i ? " " : "", js->argv[i]);
    if (m) fclose(m);
    char clock[300];
    if (js->cmd.sim)
        snprintf(clock, sizeof clock, "virtual (--sim %s)", js->cmd.sim);
    else
        snprintf(clock, sizeof clock, "real");
    cr_trace_job tj = {.dir = js->trace_parts,
                       .out = js->cmd.trace,
                       .nranks = js->cmd.total,
                       .command = cmd,
                       .clock = clock,
                       .hang = js->hang_text,
                       .hang_at = js->hang_at};
    int events = cr_trace_merge(&tj, stderr);
    free(cmd);
    cr_trace_parts_remove(js->trace_parts, js->cmd.total);
    if (events >= 0)
        fprintf(stderr,
                "courier: trace of %d ranks, %d events: %s (a summary: courier trace %s; the "
                "timeline: open it in ui.perfetto.dev)\n",
                js->cmd.total, events, js->cmd.trace, js->cmd.trace);
    else if (!js->exit_status)
        js->exit_status = 1;
}

/* Enter the job in the user's registry for courier ps/status (src/run/jobs.c),
 * once its ranks are started; removed in watch_and_finish. argv: the command
 * line from "run" on. */
void register_job(job_spec *js, int argc, char **argv)
{
    char *hosts = NULL;
    size_t len = 0;
    FILE *m = js->tree ? open_memstream(&hosts, &len) : NULL;
    for (int h = 0; m && h < js->tree->nnodes - 1; h++)
        fprintf(m, "%s%s:%d", h ? "," : "", js->tree->hosts[h].name, js->tree->hosts[h].count);
    if (m) fclose(m);
    cr_jobs_info info = {.agent = js->agent,
                         .ranks = js->cmd.total,
                         .first = js->first,
                         .count = js->count,
                         .hosts = hosts,
                         .segfd = js->control ? js->segfd : -1,
                         .timeout = js->cmd.timeout,
                         .trace = js->cmd.trace,
                         .argc = argc,
                         .argv = argv};
    cr_jobs_register(&info, js->regpath, sizeof js->regpath);
    free(hosts);
}

int watch_and_finish(job_spec *js, int sfd, const char *who)
{
    if (watch(js, sfd) < 0) {
        fprintf(stderr, "%s: out of memory watching %d ranks; ending the job\n", who,
                js->cmd.total);
        js->exit_status = 1;
    }
    if (!js->exit_status && js->unfinished && !js->agent) { /* the rank said which call */
        drain_all(js);
        fprintf(stderr, "courier: rank %d ended without MPI_Finalize: the job failed\n",
                js->unfinished - 1);
        js->exit_status = 1;
    }
    if (js->oq) { /* everything said, written */
        out_stop(js->oq);
        free(js->oq);
        js->oq = NULL;
    }
    /* The job is over (an agent may be killed once its parent hears DONE). */
    cr_jobs_unregister(js->regpath);
    if (js->agent && js->tree->parent) { /* every rank below us has ended */
        cr_tree_send(js->tree, -1, CR_F_DONE, 0, js->tree->node, 0, NULL, 0);
        cr_tree_flush(js->tree, 1000);
    }
    if (js->pgid) kill(-js->pgid, SIGKILL); /* the leader, and what a rank left in its group */
    if (js->tree) cr_tree_free(js->tree);   /* SIGKILLs rsh processes still running */
    while (waitpid(-1, NULL, 0) > 0) {
    }
    if (js->count) remove_sysv_leftovers(js);
    if (js->vsim) {
        fflush(stdout);
        if (cr_vsim_finish(js->vsim, stderr, js->cmd.sim_report,
                           (double)(now_ns() - js->started) / 1e9))
            fprintf(stderr, "%s: cannot write --sim-report %s: %s\n", who, js->cmd.sim_report,
                    strerror(errno));
        cr_vsim_free(js->vsim);
        js->vsim = NULL;
    }
    trace_finish(js);
    release(js);
    return js->exit_status;
}

/* What a job holds in the launcher, given back (also for a job that never
 * started: every field is NULL, zero or made). */
void release(job_spec *js)
{
    cr_vsim_free(js->vsim);
    js->vsim = NULL;
    free(js->hang_text);
    cr_watchdog_free(js->wd);
    free(js->alive);
    if (!js->control) free(js->cards); /* the launcher's own table, not the segment's */
    if (js->control) munmap(js->control, cr_host_control_size(js->cmd.total));
    if (js->segfd >= 0) close(js->segfd);
    free(js->ranks);
    free(js->layout);
    free(js->spawn_hosts);
    free(js->spawn_rsh);
    free(js->card_sent);
    free(js->child_still);
    free(js->flushed);
    free(js->reported);
    free(js->in_buf);
    if (js->in_fd > 0) close(js->in_fd);
    cr_run_spec_free(&js->cmd);
}
