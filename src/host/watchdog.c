/* The hang watchdog of `courier run` and of the ranks' own watch under srun
 * (src/core/pmiwatch.c): here, below both, so that each uses it without a
 * layer reaching up. It reads what each rank says it is blocked on
 * (the status board of the host segment, src/host) and decides when the job can no
 * longer move. It also tells the launcher whether a rank that ended was outside
 * the job (its rank record), which decides how soon a failed job's other ranks
 * are ended (with cr_watchdog_check over a shorter time).
 *
 * A rank is blocked when it has waited inside a communication call past its spin
 * phase; it bumps its spell count each time it starts waiting anew, so any
 * message it handles shows up as a change; a rank whose loop only polls for what
 * does not come (MPI_Test, iprobe: src/core/wait.c) shows itself blocked the
 * same way, marked as polling. The job is hung when every rank still
 * running is blocked and no spell count has changed for the hang timeout. A rank
 * that computes is not blocked, so it is never reported, however long it takes.
 * Nor is a rank that is stopped (/proc/PID/stat state T or t: SIGSTOP, Ctrl-Z,
 * a debugger attached): it still holds what the others wait for and goes on when
 * it is continued, so while one is stopped the job is not hung. Ranks are looked
 * up in /proc only while all seem blocked; each stop is noted once
 * (cr_watchdog_note), and the hang timeout starts again once it runs. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "host.h"
#include "watchdog.h"

struct cr_watchdog {
    const cr_host_rank *rk;
    const cr_host_status *st;
    int n;
    uint32_t *spells;
    cr_waitinfo *w;
    unsigned char *blocked;
    uint64_t still_since; /* when the last change was seen; 0: not all blocked */
    /* Stopped ranks, looked for while every rank seems blocked: the cause said
     * last (its tracer's pid, 0: a signal; -1: none since the rank last moved),
     * whether one is still to be said, and how many looks in a row found each
     * stopped (a stop is said at the second, so that a tracer's brief stops,
     * strace's at each system call, are not). */
    int *said;
    unsigned char *to_say, *stops;
    int notes; /* how many to_say */
    /* Ranks on other hosts (an agent's watchdog): not running here, but not
     * known to have finished either. */
    unsigned char *away;
    int naway;
};

cr_watchdog *cr_watchdog_new(const void *segment, int n)
{
    const cr_host_head *hd = segment;
    cr_watchdog *wd = calloc(1, sizeof *wd);
    if (!wd) return NULL;
    if (hd) {
        wd->rk = (const cr_host_rank *)((const char *)segment + hd->rank_off);
        wd->st = (const cr_host_status *)((const char *)segment + hd->status_off);
    }
    wd->n = n;
    wd->spells = calloc((size_t)n, sizeof *wd->spells);
    wd->w = calloc((size_t)n, sizeof *wd->w);
    wd->blocked = calloc((size_t)n, 1);
    wd->said = malloc((size_t)n * sizeof *wd->said);
    wd->to_say = calloc((size_t)n, 1);
    wd->stops = calloc((size_t)n, 1);
    wd->away = calloc((size_t)n, 1);
    if (!wd->spells || !wd->w || !wd->blocked || !wd->said || !wd->to_say || !wd->stops ||
        !wd->away) {
        cr_watchdog_free(wd);
        return NULL;
    }
    for (int r = 0; r < n; r++) wd->said[r] = -1;
    return wd;
}

void cr_watchdog_set_here(cr_watchdog *wd, int first, int count)
{
    wd->naway = 0;
    for (int r = 0; r < wd->n; r++) {
        wd->away[r] = r < first || r >= first + count;
        wd->naway += wd->away[r];
    }
}

const cr_waitinfo *cr_watchdog_get(const cr_watchdog *wd, int r)
{
    return &wd->w[r];
}

void cr_watchdog_put(cr_watchdog *wd, int r, const cr_waitinfo *w)
{
    if (r < 0 || r >= wd->n) return;
    wd->w[r] = *w;
    wd->blocked[r] = 1;
}

void cr_watchdog_free(cr_watchdog *wd)
{
    if (!wd) return;
    free(wd->spells);
    free(wd->w);
    free(wd->blocked);
    free(wd->said);
    free(wd->to_say);
    free(wd->stops);
    free(wd->away);
    free(wd);
}

/* As cr_watchdog_read_status, *blocked the record's own (CR_HOST_SOME too),
 * 0 while a handler runs. */
static void read_board(const cr_host_status *s, uint32_t *spells, unsigned char *blocked,
                       cr_waitinfo *w)
{
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t q1 = atomic_load_explicit(&((cr_host_status *)s)->seq, memory_order_acquire);
        if (q1 & 1) continue;
        uint32_t sp = s->spells, b = atomic_load(&((cr_host_status *)s)->busy) ? 0 : s->blocked;
        cr_waitinfo copy = s->w;
        cr_waitinfo_sane(&copy); /* written by the rank: trust nothing */
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&((cr_host_status *)s)->seq, memory_order_relaxed) != q1) continue;
        *spells = sp;
        *blocked = (unsigned char)b;
        *w = copy;
        return;
    }
    *blocked = 0; /* a rank rewriting its record all the time is not stuck */
}

void cr_watchdog_read_status(const cr_host_status *s, uint32_t *spells, unsigned char *blocked,
                             cr_waitinfo *w)
{
    read_board(s, spells, blocked, w);
    *blocked = *blocked == 1;
}

/* The state letter of process pid (/proc/PID/stat: R running or runnable, S
 * asleep, T/t stopped, ...), or 0 when it cannot be read. */
static char proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the name may hold anything */
    return p && p[1] == ' ' ? p[2] : 0;
}

/* Is process pid, in state st, stopped (T: a signal; t: a tracer's stop)? Its
 * tracer's pid in *tracer (0: none). */
static bool proc_stopped(pid_t pid, char st, int *tracer)
{
    char path[64], buf[512];
    *tracer = 0;
    if (st != 'T' && st != 't') return false;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if ((f = fopen(path, "r"))) {
        while (fgets(buf, sizeof buf, f))
            if (!strncmp(buf, "TracerPid:", 10)) *tracer = atoi(buf + 10);
        fclose(f);
    }
    return true;
}

/* Rank r (running) held by something outside it, so that its wait may still
 * end: stopped (a new stop is noted, to be said), or in the kernel's
 * uninterruptible sleep (D: a page read back from swap, a write to a disk
 * that stalls; a machine that swaps stalls every rank for seconds, each
 * with its wait still on the board). */
static bool rank_held(cr_watchdog *wd, int r)
{
    int32_t pid = wd->rk ? atomic_load(&((cr_host_rank *)&wd->rk[r])->pid) : 0;
    int tracer = 0;
    char st = pid > 0 ? proc_state(pid) : 0;
    if (st == 'D') return true;
    if (pid <= 0 || !proc_stopped(pid, st, &tracer)) {
        wd->stops[r] = 0;
        return false;
    }
    if (wd->stops[r] < 2) wd->stops[r]++;
    if (wd->stops[r] == 2 && wd->said[r] != tracer) {
        wd->said[r] = tracer;
        wd->to_say[r] = 1;
        wd->notes++;
    }
    return true;
}

bool cr_watchdog_note(cr_watchdog *wd, char *buf, size_t len)
{
    for (int r = 0; wd->notes && r < wd->n; r++) {
        if (!wd->to_say[r]) continue;
        wd->to_say[r] = 0;
        wd->notes--;
        int pid = wd->rk ? atomic_load(&((cr_host_rank *)&wd->rk[r])->pid) : 0;
        int tracer = wd->said[r];
        if (tracer > 0) {
            char path[64], comm[64] = "";
            snprintf(path, sizeof path, "/proc/%d/comm", tracer);
            FILE *f = fopen(path, "r");
            if (f) {
                if (!fgets(comm, sizeof comm, f)) comm[0] = '\0';
                fclose(f);
            }
            comm[strcspn(comm, "\n")] = '\0';
            for (char *p = comm; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
            snprintf(buf, len,
                     "courier: rank %d (pid %d) is stopped (traced by pid %d%s%s); not a "
                     "deadlock: the watchdog waits until it runs again\n",
                     r, pid, tracer, comm[0] ? ", " : "", comm);
        } else {
            snprintf(buf, len,
                     "courier: rank %d (pid %d) is stopped by a signal (SIGSTOP, Ctrl-Z); not a "
                     "deadlock: the watchdog waits until it runs again (kill -CONT %d)\n",
                     r, pid, pid);
        }
        return true;
    }
    return false;
}

/* How long the ranks must stay still when all they wait for has finished. */
#define FINISHED_NS 300000000u

/* Is a running rank's process (on this host) runnable: woken by what reached
 * it, but not yet given a CPU by a busy machine? */
static bool any_runnable(const cr_watchdog *wd, const bool *running)
{
    for (int r = 0; wd->rk && r < wd->n; r++) {
        /* (one that polls is always runnable: cr_poll_missed) */
        int32_t pid =
            running[r] && !wd->w[r].polls ? atomic_load(&((cr_host_rank *)&wd->rk[r])->pid) : 0;
        if (pid > 0 && proc_state(pid) == 'R') return true;
    }
    return false;
}

/* Does every running rank wait, directly or through running ranks that wait
 * in turn (a collective's members waiting for the one that waits for the rank
 * gone), for a rank that has finished (or, waiting for any rank, have none
 * left running to hear from)? A rank of another host (an agent's watchdog)
 * runs for all we know: the launcher judges such chains (cr_watchdog_quiet). A chain that comes
 * back on itself is a cycle: the hang timeout and the cycle's report are for it. */
static bool all_wait_for_finished(const cr_watchdog *wd, const bool *running)
{
    int others = wd->naway; /* (running for all we know) */
    for (int r = 0; r < wd->n; r++) others += running[r];
    for (int r = 0; r < wd->n; r++) {
        if (!running[r]) continue;
        int at = r, steps = 0;
        for (;;) {
            const cr_waitinfo *w = &wd->w[at];
            if (w->kind < CR_WAIT_RECV || w->kind > CR_WAIT_ARRIVE) return false; /* locks, exits */
            /* a polling rank's loop may end on its own: the full hang timeout */
            if (w->polls) return false;
            if (w->peer < 0) {
                if (others > 1) return false;
                break;
            }
            if (w->peer >= wd->n) return false;
            if (wd->away[w->peer]) return false;
            if (!running[w->peer]) break; /* ends at a rank that has finished */
            at = w->peer;
            if (++steps >= others) return false; /* a cycle */
        }
    }
    return true;
}

bool cr_watchdog_check(cr_watchdog *wd, const bool *running, uint64_t now_ns, uint64_t timeout_ns)
{
    bool all_blocked = true, changed = false, any = false;
    if (!wd->st) return false; /* told, not looking */
    for (int r = 0; r < wd->n; r++) {
        if (!running[r]) continue;
        any = true;
        uint32_t sp = wd->spells[r];
        unsigned char b = 0;
        cr_waitinfo w = wd->w[r];
        cr_watchdog_read_status(&wd->st[r], &sp, &b, &w);
        if (!b) all_blocked = false;
        if (sp != wd->spells[r]) wd->said[r] = -1; /* it moved: a new stop is said anew */
        if (sp != wd->spells[r] || b != wd->blocked[r]) changed = true;
        wd->spells[r] = sp;
        wd->blocked[r] = b;
        wd->w[r] = w;
    }
    /* A rank that is stopped moves again once continued, one in the kernel's
     * uninterruptible sleep once its page or disk answers: nothing is hung. */
    bool stopped = false;
    for (int r = 0; any && all_blocked && r < wd->n; r++)
        if (running[r] && rank_held(wd, r)) stopped = true;
    if (stopped) all_blocked = false;
    if (!any || !all_blocked) {
        wd->still_since = 0;
        return false;
    }
    if (changed || !wd->still_since) {
        wd->still_since = now_ns;
        return false;
    }
    /* Every blocked rank waits for ranks that have finished (left the job,
     * their sends delivered: nothing more can come from them), e.g. one that
     * returned from main without MPI_Finalize: no need to wait out the hang
     * timeout, only long enough for a rank to see what reached it last — and
     * not while one is runnable: on a busy machine a rank woken by the last
     * data of a rank that has finished may wait longer than that for a CPU
     * (nx_sizes over tcp beside 4 CPU-bound processes: the 64 MiB echo of a
     * rank that had left was reported as a deadlock 1 run in 20). */
    if (all_wait_for_finished(wd, running) && timeout_ns > FINISHED_NS &&
        !any_runnable(wd, running))
        timeout_ns = FINISHED_NS;
    return now_ns - wd->still_since >= timeout_ns;
}

bool cr_watchdog_quiet(const cr_watchdog *wd, const bool *running, uint64_t now_ns)
{
    return wd->still_since && now_ns - wd->still_since >= FINISHED_NS && !any_runnable(wd, running);
}

bool cr_watchdog_wait_for_finished(const cr_watchdog *wd, const bool *running)
{
    return all_wait_for_finished(wd, running);
}

bool cr_watchdog_rank_outside(const cr_watchdog *wd, int r)
{
    if (r < 0 || r >= wd->n || !wd->rk) return false;
    cr_host_rank *rk = (cr_host_rank *)&wd->rk[r];
    return atomic_load(&rk->gone) != 0 || atomic_load(&rk->pid) == 0;
}

/* Rank r's record on the board, or NULL: no such rank, no board. */
static cr_host_rank *rank_rec(const cr_watchdog *wd, int r)
{
    return r < 0 || r >= wd->n || !wd->rk ? NULL : (cr_host_rank *)&wd->rk[r];
}

bool cr_watchdog_rank_said(const cr_watchdog *wd, int r)
{
    const cr_host_rank *rk = rank_rec(wd, r);
    return rk && atomic_load(&rk->said) != 0;
}

bool cr_watchdog_rank_aborted(const cr_watchdog *wd, int r)
{
    const cr_host_rank *rk = rank_rec(wd, r);
    return rk && atomic_load(&rk->aborted) != 0;
}

bool cr_watchdog_rank_unfinished(const cr_watchdog *wd, int r)
{
    const cr_host_rank *rk = rank_rec(wd, r);
    return rk && atomic_load(&rk->unfinished) != 0;
}

/* The words of the interface that made the call: MPI says tag, rank and
 * communicator; MPL type, task and group; NX/2 type, node and group. */
typedef struct words {
    const char *tag, *peer, *group;
} words;

static words words_of(const char *call)
{
    if (!strncmp(call, "MPI_", 4)) return (words){"tag", "rank", "communicator"};
    if (!strncmp(call, "mpc_", 4) || !strncmp(call, "mp_", 3))
        return (words){"type", "task", "group"};
    return (words){"type", "node", "group"};
}

static void describe_sel(char *buf, size_t len, const cr_waitinfo *w, const words *wd)
{
    if (w->tag_mode == 0) /* CR_TAG_EXACT */
        snprintf(buf, len, "%s %d", wd->tag, (int)w->tag);
    else if (w->tag_mode == 1 || w->tag_mode == 3) /* CR_TAG_ANY, CR_TAG_BELOW (NX's -1) */
        snprintf(buf, len, "any %s", wd->tag);
    else
        snprintf(buf, len, "%s mask 0x%x", wd->tag, (unsigned)w->mask);
}

/* A rank that polls in a loop (cr_poll_missed) rather than waits in a call. */
static const char *verb_of(const cr_waitinfo *w)
{
    return w->polls ? "polls" : "waits";
}

void cr_watchdog_describe_wait(char *buf, size_t len, const cr_waitinfo *w)
{
    char sel[48], ctx[48], call[96], size[32] = "";
    words wd = words_of(w->call);
    describe_sel(sel, sizeof sel, w, &wd);
    if (w->group[0]) /* the interface named it: "on MPI_COMM_WORLD" */
        snprintf(ctx, sizeof ctx, ", on %s", w->group);
    else
        snprintf(ctx, sizeof ctx, "%s%s",
                 w->ctx == 0   ? ""
                 : w->ctx == 1 ? ", collective"
                               : ", ",
                 w->ctx > 1 ? wd.group : "");
    /* the call the rank is in, and the one that started what it waits for:
     * "MPI_Waitall: MPI_Irecv" */
    snprintf(call, sizeof call, "%s%s%s", w->call, w->op[0] ? ": " : "", w->op);
    bool probe = strstr(w->call, "robe") && !w->op[0];
    const char *verb = verb_of(w);
    if (!probe) snprintf(size, sizeof size, ", %llu bytes", (unsigned long long)w->size);
    if (w->coll && w->peer >= 0 && w->kind >= CR_WAIT_RECV && w->kind <= CR_WAIT_MATCH) {
        /* a collective's own messages: their tags say nothing to the user */
        snprintf(buf, len, "%s for rank %d in %s on %s (collective: %s rank %d)", verb, w->peer,
                 call, w->group, w->kind == CR_WAIT_RECV ? "its part from" : "its part to",
                 w->peer);
        return;
    }
    switch (w->kind) {
    case CR_WAIT_RECV:
        if (w->peer >= 0)
            snprintf(buf, len, "%s for rank %d in %s(%s from %s %d%s%s)", verb, w->peer, call, sel,
                     wd.peer, w->peer, size, ctx);
        else
            snprintf(buf, len, "%s for any rank in %s(%s%s%s)", verb, call, sel, size, ctx);
        break;
    case CR_WAIT_CREDIT:
    case CR_WAIT_MATCH:
        snprintf(buf, len, "%s for rank %d in %s(%s to %s %d%s%s) (%s)", verb, w->peer, call, sel,
                 wd.peer, w->peer, size, ctx,
                 w->kind == CR_WAIT_CREDIT ? "no buffer at receiver"
                 /* a standard send made synchronous by courier run --check=sync */
                 : strstr(w->op, "[check=sync]")
                     ? "no matching receive posted: would deadlock without buffering"
                     : "no matching receive posted");
        break;
    case CR_WAIT_ARRIVE:
        snprintf(buf, len, "waits in %s%s%s for rank %d to enter it too (collective)", w->call,
                 w->group[0] ? " on " : "", w->group, w->peer);
        break;
    case CR_WAIT_LOCK:
        snprintf(buf, len, "waits in %s for the lock on rank %d's window (held by another rank)",
                 w->call, (int)w->tag);
        break;
    default:
        snprintf(buf, len, "%s in %s (%s)", verb, w->call,
                 !strcmp(w->call, "exit") ? "finishing its sends"
                 : !strncmp(w->call, "MPI_", 4) && !strstr(w->call, "MPI_Win")
                     ? "for requests: several, or a nonblocking collective's"
                     : "for other ranks: their one-sided operations, sends or events");
    }
}

/* Rank r's line. A collective's member that waits for another to enter it
 * (the collective area: a barrier's, say) may wait for one that has entered
 * and waits in turn: that one is named as such, not as one yet to come. */
static void describe(const cr_watchdog *wd, const bool *running, char *buf, size_t len, int r)
{
    const cr_waitinfo *w = &wd->w[r];
    char what[320];
    int p = w->peer;
    if (w->kind == CR_WAIT_ARRIVE && p >= 0 && p < wd->n && p != r && running[p] &&
        !strcmp(wd->w[p].call, w->call) && !strcmp(wd->w[p].group, w->group))
        snprintf(what, sizeof what,
                 "%s in %s%s%s for rank %d, which is in it too and waits in turn (collective)",
                 verb_of(w), w->call, w->group[0] ? " on " : "", w->group, p);
    else
        cr_watchdog_describe_wait(what, sizeof what, w);
    snprintf(buf, len, "rank %d %s", r, what);
}

/* Shortest wait-for cycle through blocked ranks; "any" waits for every rank.
 * A rank that waits for itself (a synchronous send to itself) is a cycle of
 * one. */
static int find_cycle(cr_watchdog *wd, const bool *running, int *cycle)
{
    int n = wd->n, best = 0;
    for (int r = 0; r < n; r++)
        if (running[r] && wd->w[r].peer == r) {
            cycle[0] = r;
            return 1;
        }
    int *prev = malloc((size_t)n * sizeof *prev), *queue = malloc((size_t)n * sizeof *queue);
    if (!prev || !queue) goto out;
    for (int s = 0; s < n && s < 256 && best != 2; s++) { /* bounded: O(n^2) per start */
        if (!running[s]) continue;
        for (int i = 0; i < n; i++) prev[i] = -2;
        int head = 0, tail = 0, found = -1;
        queue[tail++] = s;
        prev[s] = -1;
        while (head < tail && found < 0) {
            int u = queue[head++];
            const cr_waitinfo *w = &wd->w[u];
            for (int v = 0; v < n; v++) {
                if (!running[v] || v == u) continue;
                if (w->peer >= 0 && w->peer != v) continue;
                if (v == s) {
                    found = u;
                    break;
                }
                if (prev[v] != -2) continue;
                prev[v] = u;
                queue[tail++] = v;
            }
        }
        if (found < 0) continue;
        int len = 0, tmp[4096];
        for (int v = found; v != -1 && len < 4096; v = prev[v]) tmp[len++] = v;
        if (!best || len < best) {
            best = len;
            for (int i = 0; i < len; i++) cycle[i] = tmp[len - 1 - i];
        }
    }
out:
    free(prev);
    free(queue);
    return best;
}

/* One line per rank (with its virtual time, in the simulated mode), then the
 * shortest wait-for cycle. */
static void report_ranks(cr_watchdog *wd, const bool *running, const double *vclock_us, FILE *out)
{
    char line[352];
    for (int r = 0; r < wd->n; r++) {
        if (!running[r]) {
            fprintf(out, "courier:   rank %d has finished%s\n", r,
                    cr_watchdog_rank_unfinished(wd, r) ? " (without MPI_Finalize)" : "");
            continue;
        }
        describe(wd, running, line, sizeof line, r);
        if (vclock_us)
            fprintf(out, "courier:   %s (virtual time %.3f us)\n", line, vclock_us[r]);
        else
            fprintf(out, "courier:   %s\n", line);
    }
    int *cycle = malloc((size_t)wd->n * sizeof *cycle);
    int len = cycle ? find_cycle(wd, running, cycle) : 0;
    if (len) {
        fprintf(out, "courier: wait-for cycle: ");
        for (int i = 0; i < len; i++) {
            describe(wd, running, line, sizeof line, cycle[i]);
            fprintf(out, "%s%s", i ? "; " : "", line);
        }
        fprintf(out, "\n");
    } else if (all_wait_for_finished(wd, running)) {
        fprintf(out, "courier: no cycle: the ranks wait for ranks that have finished\n");
    } else {
        fprintf(out, "courier: no wait-for cycle among the ranks' waits\n");
    }
    free(cycle);
}

void cr_watchdog_report(cr_watchdog *wd, const bool *running, double timeout_s, FILE *out)
{
    bool polling = false;
    for (int r = 0; r < wd->n; r++) polling |= running[r] && wd->w[r].polls;
    if (polling)
        fprintf(out,
                "courier: deadlock: every rank still running is blocked in a communication call "
                "or polls in a loop (MPI_Test, MPI_Iprobe) for what never comes, and nothing has "
                "moved for %g s\n",
                timeout_s);
    else if (all_wait_for_finished(wd, running))
        fprintf(out, "courier: deadlock: every rank still running waits in a communication call "
                     "for ranks that have finished (nothing more can come from them)\n");
    else
        fprintf(out,
                "courier: deadlock: every rank still running is blocked in a communication call "
                "and nothing has moved for %g s\n",
                timeout_s);
    report_ranks(wd, running, NULL, out);
}

void cr_watchdog_report_sim(cr_watchdog *wd, const bool *running, const double *vclock_us,
                            FILE *out)
{
    for (int r = 0; r < wd->n; r++) {
        if (!running[r] || !wd->st) continue;
        uint32_t sp = wd->spells[r];
        unsigned char b = 0;
        cr_watchdog_read_status(&wd->st[r], &sp, &b, &wd->w[r]);
    }
    bool polling = false;
    for (int r = 0; r < wd->n; r++) polling |= running[r] && wd->w[r].polls;
    fprintf(out,
            "courier: deadlock in the simulated program: every rank still running waits "
            "for a message%s and none is on its way\n",
            polling ? " (or polls in a loop for one: MPI_Test, MPI_Iprobe)" : "");
    report_ranks(wd, running, vclock_us, out);
}

void cr_watchdog_report_where(cr_watchdog *wd, const bool *running, int ctx_running, FILE *out)
{
    if (!wd->st) return; /* (the launcher of a job across hosts: its agents know) */
    char line[352];
    int shown = 0, more = 0;
    for (int r = 0; r < wd->n; r++) {
        if (!running[r] || wd->away[r]) continue;
        uint32_t sp = wd->spells[r];
        unsigned char b = 0;
        cr_waitinfo w;
        read_board(&wd->st[r], &sp, &b, &w);
        if (b == 1) wd->w[r] = w; /* (describe reads the blocked ranks' waits there) */
        if (shown == CR_WATCHDOG_WHERE_MAX) {
            more++;
            continue;
        }
        shown++;
        if (b == 1) {
            describe(wd, running, line, sizeof line, r);
            fprintf(out, "courier:   %s\n", line);
        } else if (b == CR_HOST_SOME) {
            cr_watchdog_describe_wait(line, sizeof line, &w);
            fprintf(out, "courier:   rank %d %s in one of its threads (another runs)\n", r, line);
        } else if (ctx_running >= 0 && r != ctx_running) {
            fprintf(out,
                    "courier:   rank %d waits for its turn to run: the ranks are contexts of "
                    "one process, which rank %d holds\n",
                    r, ctx_running);
        } else {
            fprintf(out,
                    "courier:   rank %d runs outside any communication call (it computes, or "
                    "waits for something else: a thread, a sleep, a file)%s\n",
                    r, ctx_running >= 0 ? "; as contexts, no other rank runs meanwhile" : "");
        }
    }
    if (more) fprintf(out, "courier:   and %d more rank(s) still running\n", more);
}
