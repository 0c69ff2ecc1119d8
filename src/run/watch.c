/* Watching a job (watch): reaping ranks, noting and reporting the failure that
 * ends it, signals to the launcher, --timeout, and the hang watchdog.
 *
 * Invariants: the first rank to fail is reported in one line, then every other
 * rank is sent SIGTERM and, GRACE_MS later, SIGKILL (a second after a signal
 * to the launcher); a rank that exits non-zero from outside the job lets the
 * others run on until each has ended or waited STILL_MS, nothing moving, or
 * LAST_WORDS_MS have passed, while a signal or an end inside the job ends them
 * at once; when every rank still running has waited in a communication call,
 * nothing moving, for --hang-timeout seconds, the watchdog says what each waits
 * for and the job ends with status 99 (EXIT_DEADLOCK); before any report line
 * every rank's pipes are read of what they hold. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tree.h"
#include "vsim.h"
#include "../host/watchdog.h"

#include "launch_internal.h"

uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- watching ------------------------------------------------------------ */

void end_job(job_spec *js, int status)
{
    if (js->ending) return;
    js->ending = true;
    js->exit_status = status;
    if (js->vsim && status != EXIT_DEADLOCK) cr_vsim_stop(js->vsim);
    if (js->tree) cr_tree_send(js->tree, -2, CR_F_END, 0, 0, status, NULL, 0);
    if (!js->pgid) return;
    kill(-js->pgid, SIGTERM);
    js->kill_at = now_ns() + (uint64_t)GRACE_MS * 1000000u;
}

static int find_rank(job_spec *js, pid_t pid)
{
    for (int r = 0; r < js->cmd.total; r++)
        if (js->ranks[r].pid == pid) return r;
    return -1;
}

/* Ranks running that this process knows of: its own, or (the launcher of a
 * job across hosts) all, as the agents report them. */
static int running(job_spec *js)
{
    int n = 0;
    for (int r = 0; r < js->cmd.total; r++) n += js->ranks[r].running;
    return n;
}

static const char *host_of_rank(const job_spec *js, int r)
{
    if (!js->tree) return NULL;
    for (int h = 0; h < js->tree->nnodes - 1; h++)
        if (r >= js->tree->hosts[h].first &&
            r < js->tree->hosts[h].first + js->tree->hosts[h].count)
            return js->tree->hosts[h].name;
    return "?";
}

/* A rank ended (here, or reported by an agent): note the failure that will end
 * the job. When several fail, the one killed by a signal is reported: a rank
 * that died takes others down with it (they find it gone), and the report must
 * name the cause. */
void rank_ended(job_spec *js, int r, pid_t pid, int st, bool outside, bool aborted)
{
    js->ranks[r].running = false;
    js->quiet_asked = false; /* the others may all wait for it now (tree_watch) */
    if (js->vsim) cr_vsim_rank_gone(js->vsim, r);
    /* aborted: MPI_Abort(comm, 0) ends the job as a failure would, status 0 */
    bool failed = WIFSIGNALED(st) || WEXITSTATUS(st) != 0 || aborted;
    if (js->ending || !failed) return; /* ended by us, or done: nothing to report */
    failure *f = &js->fail;
    if (f->rank < 0 || (WIFSIGNALED(st) && !WIFSIGNALED(f->st))) {
        f->rank = r;
        f->st = st;
        f->pid = pid;
        f->said = false;
    }
    if (WIFEXITED(st) && outside) {
        if (!f->until) f->until = now_ns() + (uint64_t)LAST_WORDS_MS * 1000000u;
    } else {
        f->now = true;
    }
}

/* Rank r ended without a call its interface requires (it said which): the
 * job fails at its end, if nothing else failed (watch_and_finish). */
void rank_unfinished(job_spec *js, int r)
{
    if (!js->unfinished) js->unfinished = r + 1;
}

/* The process of the ranks as contexts ended: every rank has. A rank that
 * ended in its context left its status (a failing one ended the process); the
 * process's own status is the rank's whose context ran when it died (a signal,
 * an _exit in the library), or else the first rank's that was still running. */
static void contexts_ended(job_spec *js, pid_t pid, int st)
{
    int n = js->cmd.total, cur = cr_vsim_ctx_current(js->vsim), code;
    bool failed = WIFSIGNALED(st) || WEXITSTATUS(st) != 0, blamed = false;
    for (int r = 0; r < n; r++) {
        drain_rank(js, r);
        if (cr_vsim_rank_exit(js->vsim, r, &code) && code) blamed = true;
    }
    if (cur < 0 || cur >= n || cr_vsim_rank_exit(js->vsim, cur, &code))
        for (cur = 0; cur < n && cr_vsim_rank_exit(js->vsim, cur, &code); cur++) {
        }
    for (int r = 0; r < n; r++) {
        if (!js->ranks[r].running) continue;
        int rst = 0;
        if (cr_vsim_rank_exit(js->vsim, r, &code))
            rst = W_EXITCODE(code & 0xff ? code & 0xff : code != 0, 0);
        else if (failed && !blamed && r == cur)
            rst = st;
        rank_ended(js, r, pid, rst, false, false);
    }
}

/* Collect every rank that has ended, forwarding all it wrote, and note the
 * failure that will end the job. When several fail, the one killed by a signal
 * is reported: a rank that died takes others down with it (they find it gone),
 * and the report must name the cause. */
static void reap(job_spec *js)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) { /* a rank may leave the group */
        if (js->tree && cr_tree_reaped(js->tree, pid, st) >= 0) continue;
        if (js->contexts && pid == js->ctx_pid) {
            contexts_ended(js, pid, st);
            continue;
        }
        int r = find_rank(js, pid);
        if (r < 0) continue;
        drain_rank(js, r); /* it is gone: all it wrote is in its pipes */
        bool outside = js->wd && cr_watchdog_rank_outside(js->wd, r);
        bool unfinished = js->wd && cr_watchdog_rank_unfinished(js->wd, r);
        bool aborted = js->wd && cr_watchdog_rank_aborted(js->wd, r);
        if (js->agent) { /* the launcher judges; its output went up before this */
            js->ranks[r].running = false;
            int32_t p32 = pid;
            /* flag: 1 ended outside the job, 2 a job it spawned said why it
             * failed, 4 ended without its interface's closing call, 8 ended
             * the job by MPI_Abort(comm, 0) */
            bool said = js->wd && cr_watchdog_rank_said(js->wd, r);
            cr_tree_send(js->tree, -1, CR_F_EXIT,
                         (uint8_t)(outside | said << 1 | unfinished << 2 | aborted << 3), r, st,
                         &p32, sizeof p32);
            continue;
        }
        if (unfinished) rank_unfinished(js, r);
        rank_ended(js, r, pid, st, outside, aborted);
    }
}

int failure_status(const failure *f)
{
    return WIFSIGNALED(f->st) ? 128 + WTERMSIG(f->st) : WEXITSTATUS(f->st);
}

/* Say which rank failed, once, after everything the ranks have written so far. */
void report_failure(job_spec *js)
{
    failure *f = &js->fail;
    if (f->rank < 0 || f->reported) return;
    f->reported = true;
    drain_all(js);
    /* a job this rank spawned failed, and its launcher has said so */
    if (f->said || (js->wd && cr_watchdog_rank_said(js->wd, f->rank))) return;
    char where[300] = "";
    if (js->tree) snprintf(where, sizeof where, " on host %s", host_of_rank(js, f->rank));
    if (WIFSIGNALED(f->st)) {
        int sig = WTERMSIG(f->st);
        say(js, "courier: rank %d%s (pid %d) killed by SIG%s; ending the job\n", f->rank, where,
            (int)f->pid, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    } else {
        say(js, "courier: rank %d%s (pid %d) exited with status %d; ending the job\n", f->rank,
            where, (int)f->pid, WEXITSTATUS(f->st));
    }
}

static bool *alive_now(job_spec *js)
{
    for (int r = 0; r < js->cmd.total; r++) js->alive[r] = js->ranks[r].running;
    return js->alive;
}

/* A rank has failed: end the job when no rank has anything more to say. At once
 * for a signal or a rank that ended inside the job; else once every other rank
 * has ended or waited in a communication call (for the failed one, most likely)
 * for STILL_MS with nothing moving, or LAST_WORDS_MS after the failure, whichever
 * comes first. "Waits" alone is not enough: a rank asleep in a wait whose
 * message has just come (a collective's last step) shows as waiting until it
 * runs, then goes on to print its own last words. */
static void settle(job_spec *js, uint64_t now)
{
    failure *f = &js->fail;
    if (js->ending || f->rank < 0) return;
    if (!f->now && running(js) && now < f->until &&
        !(js->control && js->wd &&
          cr_watchdog_check(js->wd, alive_now(js), now, (uint64_t)STILL_MS * 1000000u)))
        return;
    report_failure(js);
    end_job(js, failure_status(f));
}

/* Say what the watchdog has noted (a rank stopped by a signal or a debugger):
 * the launcher in order with the ranks' output, an agent on its stderr. */
static void say_notes(job_spec *js)
{
    char line[400];
    while (js->wd && cr_watchdog_note(js->wd, line, sizeof line)) {
        if (js->agent)
            fputs(line, stderr);
        else
            say(js, "%s", line);
    }
    if (js->tree && js->tree->note[0]) { /* a stranger refused on the agents' port */
        if (js->agent)
            fprintf(stderr, "courier agent (host %s): %s\n",
                    cr_tree_node_name(js->tree, js->tree->node), js->tree->note);
        else
            say(js, "courier run: %s\n", js->tree->note);
        js->tree->note[0] = 0;
    }
}

void on_signal(job_spec *js, int sig)
{
    if (sig == SIGCHLD) return;
    if (js->tree) cr_tree_send(js->tree, -2, CR_F_SIGNAL, 0, 0, sig, NULL, 0);
    if (js->ending) { /* asked twice: stop waiting, kill everything now */
        if (!js->agent && !js->killed_all)
            say(js, "courier: got SIG%s again; killing every process of the job now\n",
                sigabbrev_np(sig));
        js->killed_all = true;
        if (js->pgid) kill(-js->pgid, SIGKILL);
        /* an agent that is stopped cannot act on the signal sent down: its
         * rsh process (or the agent itself) is killed, and its connection */
        if (js->tree) cr_tree_kill_children(js->tree);
        return;
    }
    if (!js->agent) {
        report_failure(js); /* one pending: it happened first */
        drain_all(js);
        say(js, "courier: got SIG%s; ending the job\n", sigabbrev_np(sig));
    }
    js->ending = true;
    js->exit_status = 128 + sig;
    if (js->pgid) kill(-js->pgid, sig);
    js->kill_at = now_ns() + 1000000000u;
}

/* The hang watchdog's report: to out (NULL: the job's stderr, in order with
 * the ranks' output), and kept for the trace. */
static void hang_report(job_spec *js, const bool *alive, FILE *out)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *m = open_memstream(&text, &tlen);
    if (!m) {
        cr_watchdog_report(js->wd, alive, js->cmd.hang_timeout, out ? out : stderr);
        return;
    }
    cr_watchdog_report(js->wd, alive, js->cmd.hang_timeout, m);
    fclose(m);
    if (out)
        fwrite(text, 1, tlen, out);
    else
        put_report(js, text, tlen);
    free(js->hang_text);
    js->hang_text = text;
    js->hang_at = now_ns();
}

/* Every WATCH_MS: an agent tells the launcher how still its whole subtree is
 * (CR_F_STILL: STILL_HANG, every rank blocked, unmoving, for the hang timeout;
 * STILL_QUIET, for 0.3 s, none runnable: cr_watchdog_quiet); the launcher,
 * once every host says STILL_HANG, asks each rank what it waits for and reports
 * the deadlock. Once every host is quiet it asks too, once per quiet spell: the
 * ranks may all wait for ranks that have finished (ended on whichever host: an
 * agent cannot tell of another host's), and the job ends then at once. */
static void tree_watch(job_spec *js, uint64_t now)
{
    cr_tree *t = js->tree;
    unsigned char level = js->cmd.hang_timeout > 0 ? STILL_HANG : STILL_NOT;
    for (int i = 0; i < t->nchild; i++)
        if (!t->child_done[i] && js->child_still[i] < level) level = js->child_still[i];
    if (js->agent) {
        if (level && running(js) && js->wd) {
            bool *alive = alive_now(js);
            unsigned char mine =
                cr_watchdog_check(js->wd, alive, now, (uint64_t)(js->cmd.hang_timeout * 1e9))
                    ? STILL_HANG
                : cr_watchdog_quiet(js->wd, alive, now) ? STILL_QUIET
                                                        : STILL_NOT;
            if (mine < level) level = mine;
        }
        if (level != js->still) cr_tree_send(t, -1, CR_F_STILL, 0, 0, level, NULL, 0);
        js->still = level;
        return;
    }
    if (level == STILL_NOT) js->quiet_asked = false; /* something moves: a new spell */
    if (js->ending || !running(js)) return;
    if (!js->reports_until) {
        if (level != STILL_HANG && (level != STILL_QUIET || js->quiet_asked)) return;
        js->quiet_asked = true;
        memset(js->reported, 0, (size_t)js->cmd.total);
        js->reports_until = now + 1000000000u;
        cr_tree_send(t, -2, CR_F_REPORTQ, 0, 0, 0, NULL, 0);
        return;
    }
    bool all = true;
    for (int r = 0; r < js->cmd.total; r++) all &= !js->ranks[r].running || js->reported[r];
    if (!all && now < js->reports_until) return;
    js->reports_until = 0;
    /* (something moved meanwhile, or only quiet and not all for finished ranks) */
    if (level != STILL_HANG &&
        !(all && level == STILL_QUIET && cr_watchdog_wait_for_finished(js->wd, alive_now(js))))
        return;
    report_failure(js);
    hang_report(js, alive_now(js), NULL);
    say(js, "courier: ending the job\n");
    end_job(js, EXIT_DEADLOCK);
}

/* ---- watching ------------------------------------------------------------ */

static bool tree_busy(const job_spec *js)
{
    if (!js->tree) return false;
    if (js->agent && !js->tree->parent) return false; /* orphaned: only our ranks matter */
    return !cr_tree_children_done(js->tree);
}

/* Ranks this process watches that still run: its own. (The launcher of a job
 * across hosts hears of every rank, but once its agents are done or lost,
 * nothing more can come of those it did not hear end.) */
static int running_here(job_spec *js)
{
    return js->tree && !js->agent ? 0 : running(js);
}

/* Where the ranks still running are (a job ended by --timeout), after the
 * line that says so, in order with the ranks' output. */
static void where_report(job_spec *js)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *m = js->wd ? open_memstream(&text, &tlen) : NULL;
    if (!m) return;
    cr_watchdog_report_where(js->wd, alive_now(js),
                             js->contexts ? cr_vsim_ctx_current(js->vsim) : -1, m);
    fclose(m);
    if (tlen) put_report(js, text, tlen);
    free(text);
}

/* The job ends now: past --timeout, a deadlock (the hang watchdog, or
 * simulated: the simulator knows at once). True when it was ended here;
 * else *wait_ms is cut to when to look again. */
static bool watch_ends(job_spec *js, uint64_t now, uint64_t deadline, bool hang_watch,
                       uint64_t *next_look, int *wait_ms)
{
    if (deadline && !js->ending) {
        if (now >= deadline) {
            report_failure(js);
            drain_all(js);
            say(js,
                "courier: job exceeded --timeout %g s with %d rank(s) still running; "
                "ending the job\n",
                js->cmd.timeout, running(js));
            where_report(js);
            end_job(js, 124);
            return true;
        }
        uint64_t left = (deadline - now) / 1000000u + 1;
        if (left < (uint64_t)*wait_ms) *wait_ms = (int)left;
    }
    if (hang_watch && !js->ending) {
        if (now >= *next_look) {
            *next_look = now + (uint64_t)WATCH_MS * 1000000u;
            if (cr_watchdog_check(js->wd, alive_now(js), now,
                                  (uint64_t)(js->cmd.hang_timeout * 1e9))) {
                report_failure(js);
                drain_all(js);
                hang_report(js, js->alive, stderr);
                fprintf(stderr, "courier: ending the job\n");
                end_job(js, EXIT_DEADLOCK);
                return true;
            }
        }
        if (*wait_ms > WATCH_MS) *wait_ms = WATCH_MS;
    }
    if (js->vsim && !js->ending) {
        if (cr_vsim_deadlocked(js->vsim, NULL)) {
            double *vc = calloc((size_t)js->cmd.total, sizeof *vc);
            report_failure(js);
            drain_all(js);
            if (vc) cr_vsim_deadlocked(js->vsim, vc);
            if (js->wd) cr_watchdog_report_sim(js->wd, alive_now(js), vc, stderr);
            fprintf(stderr, "courier: ending the job\n");
            free(vc);
            end_job(js, EXIT_DEADLOCK);
            return true;
        }
        if (*wait_ms > WATCH_MS) *wait_ms = WATCH_MS;
    }
    return false;
}

/* Across hosts, every turn of the watch loop: the tree's watch every WATCH_MS,
 * an agent's cards sent up, the launcher's output kept bounded (CR_F_HOLD);
 * *wait_ms is cut to when the tree wants to be looked at again. */
static void watch_tree(job_spec *js, uint64_t now, uint64_t *next_look, int *wait_ms)
{
    if (now >= *next_look) {
        *next_look = now + (uint64_t)WATCH_MS * 1000000u;
        tree_watch(js, now);
    }
    int tw = cr_tree_wait_ms(js->tree);
    if (tw < *wait_ms) *wait_ms = tw;
    if (js->agent && js->cards_left) {
        send_cards(js);
        /* the ranks wait for these: look every ms for the first 2 s */
        int cw = now - js->started < 2000000000u ? 1 : 50;
        if (js->cards_left && cw < *wait_ms) *wait_ms = cw;
    }
    if (js->reports_until && *wait_ms > 20) *wait_ms = 20;
    if (js->oq) { /* the launcher's output keeps up, or the agents hold theirs */
        size_t ob = out_bytes(js->oq);
        if (!js->held && ob > OUT_HOLD) {
            js->held = true;
            cr_tree_send(js->tree, -2, CR_F_HOLD, 0, 0, 1, NULL, 0);
        } else if (js->held && ob < OUT_HOLD / 4) {
            js->held = false;
            cr_tree_send(js->tree, -2, CR_F_HOLD, 0, 0, 0, NULL, 0);
        }
        if (js->held && *wait_ms > 20) *wait_ms = 20;
    }
}

int watch(job_spec *js, int sfd)
{
    int tfds = js->tree ? cr_tree_maxfds(js->tree) : 0;
    int nfds = 2 * js->count + 3 + tfds;
    struct pollfd *pf = calloc((size_t)nfds, sizeof *pf);
    int *who = calloc((size_t)nfds, sizeof *who);
    js->alive = calloc((size_t)js->cmd.total, sizeof *js->alive);
    js->wd = cr_watchdog_new(js->control, js->cmd.total);
    if (js->wd && js->agent) cr_watchdog_set_here(js->wd, js->first, js->count);
    if (!pf || !who || !js->alive) {
        free(pf);
        free(who);
        return -1;
    }
    uint64_t deadline = js->cmd.timeout > 0 ? now_ns() + (uint64_t)(js->cmd.timeout * 1e9) : 0;
    /* Simulated, ranks wait while the simulator works: the simulator itself
     * knows a deadlock (nothing on its way), at once. */
    bool hang_watch = js->wd && js->cmd.hang_timeout > 0 && !js->tree && !js->vsim;
    uint64_t next_look = 0;
    bool streams_open = true;
    while (running_here(js) || streams_open || tree_busy(js)) {
        int k = 0;
        pf[k++] = (struct pollfd){.fd = sfd, .events = POLLIN};
        if (js->tree) k += cr_tree_pollfds(js->tree, pf + k);
        int ik = -1; /* standard input: the launcher reads, the agent writes */
        if (js->in_fd >= 0 && js->tree && !js->agent &&
            cr_tree_backlog(js->tree, 0) < ((size_t)1 << 20)) {
            ik = k;
            pf[k++] = (struct pollfd){.fd = js->in_fd, .events = POLLIN};
        } else if (js->in_fd >= 0 && js->agent && js->in_len) {
            ik = k;
            pf[k++] = (struct pollfd){.fd = js->in_fd, .events = POLLOUT};
        }
        int sk = k;
        /* An agent whose launcher does not keep up (its output blocked, a slow
         * network) leaves the ranks' output in their pipes, and the ranks block
         * writing it, as on one host, instead of holding it all in memory. */
        bool hold = js->agent && js->tree->parent && !js->ending &&
                    (js->held || cr_tree_backlog(js->tree, -1) > OUT_HOLD);
        for (int r = js->first; r < js->first + js->count && !hold; r++)
            for (int j = 0; j < 2; j++)
                if (js->ranks[r].s[j].fd >= 0) {
                    who[k] = r * 2 + j;
                    pf[k++] = (struct pollfd){.fd = js->ranks[r].s[j].fd, .events = POLLIN};
                }
        if (js->mux.fd >= 0) {
            who[k] = -1;
            pf[k++] = (struct pollfd){.fd = js->mux.fd, .events = POLLIN};
        }
        streams_open = k > sk || hold;
        if (!streams_open && !running_here(js) && !tree_busy(js)) break;
        int wait_ms = 1000;
        uint64_t now = now_ns();
        if (watch_ends(js, now, deadline, hang_watch, &next_look, &wait_ms)) continue;
        if (js->tree) watch_tree(js, now, &next_look, &wait_ms);
        if (js->fail.rank >= 0 && !js->ending && wait_ms > PENDING_MS) wait_ms = PENDING_MS;
        if (js->kill_at) {
            if (now >= js->kill_at) {
                if (js->pgid) kill(-js->pgid, SIGKILL);
                js->kill_at = 0;
            } else {
                uint64_t left = (js->kill_at - now) / 1000000u + 1;
                if (left < (uint64_t)wait_ms) wait_ms = (int)left;
            }
        }
        if (!running_here(js) && !tree_busy(js) && wait_ms > 200)
            wait_ms = 200; /* ranks are gone: only their children keep pipes */
        int n = poll(pf, (nfds_t)k, wait_ms);
        if (n < 0 && errno != EINTR) break;
        if (n == 0 && !running_here(js) && !tree_busy(js) && !hold)
            break; /* nothing more will come */
        if (pf[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                on_signal(js, (int)si.ssi_signo);
        }
        if (ik >= 0 && pf[ik].revents) {
            if (js->agent)
                stdin_write(js);
            else
                stdin_read(js);
        }
        for (int i = sk; i < k; i++)
            if (pf[i].revents && who[i] < 0) {
                if (js->mux.fd >= 0) mux_pump(js, SIZE_MAX);
            } else if (pf[i].revents) {
                stream *s = &js->ranks[who[i] / 2].s[who[i] % 2];
                if (s->fd >= 0) pump(js, who[i] / 2, s, sizeof s->buf);
            }
        reap(js);
        if (js->tree) cr_tree_service(js->tree, now_ns() / 1000000u, on_frame, on_lost, js);
        settle(js, now_ns());
        say_notes(js);
    }
    free(pf);
    free(who);
    return 0;
}
