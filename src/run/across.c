/* A job across hosts: the launcher's side (run_across: the agents' tree
 * started, then watched) and what the launcher and the agents say to each
 * other over the tree (on_frame, on_lost): ranks' cards, output and its hold,
 * rank 0's standard input, ranks ended, STILL and hang reports, END.
 *
 * Invariants: the launcher starts no rank itself, each host's agent starts its
 * own; a host lost (its agent, the network to it) is reported in one line and
 * ends the job; before the launcher reports anything it asks every agent for
 * its ranks' output (flush_hosts, at most FLUSH_MS), so the report comes after
 * what the ranks said; rank 0's input is the launcher's, sent to the first
 * host's agent. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../host/host.h"
#include "hosts.h"
#include "launcher.h"
#include "tree.h"
#include "../host/watchdog.h"

#include "launch_internal.h"

/* ---- across hosts: the agents' tree ---------------------------------------- */

/* The launcher: a host was lost (its agent, the network to it, or it could not
 * start). Its ranks are gone; the others are ended. */
static void host_lost(job_spec *js, const char *why)
{
    if (js->ending) return;
    report_failure(js);
    say(js, "courier: %s; ending the job\n", why);
    end_job(js, js->fail.rank >= 0 ? failure_status(&js->fail) : 1);
}

/* An agent: forward its ranks' cards (tcp addresses) up as they appear. */
void send_cards(job_spec *js)
{
    for (int r = js->first; r < js->first + js->count; r++) {
        if (js->card_sent[r - js->first]) continue;
        uint32_t ready = atomic_load_explicit(&js->cards[r].ready, memory_order_acquire);
        if (!ready || ready - 1 > CR_CARD_MAX) continue;
        cr_tree_send(js->tree, -1, CR_F_CARD, 0, r, 0, js->cards[r].data, ready - 1);
        js->card_sent[r - js->first] = true;
        js->cards_left--;
    }
}

/* A card of a rank on another host: for our ranks to read (an agent), and for
 * the children that join later (both). */
static void put_card(job_spec *js, int r, const void *data, size_t len)
{
    if (r < 0 || r >= js->cmd.total || (r >= js->first && r < js->first + js->count) ||
        len > CR_CARD_MAX)
        return;
    cr_host_card *c = &js->cards[r];
    if (atomic_load_explicit(&c->ready, memory_order_acquire)) return;
    memcpy(c->data, data, len);
    atomic_store_explicit(&c->ready, (uint32_t)len + 1, memory_order_release);
}

/* Rank 0's standard input across hosts. The agent writes what came into the
 * pipe as it takes it; at EOF (or when rank 0 closed its end) the pipe closes. */
void stdin_write(job_spec *js)
{
    while (js->in_fd >= 0 && js->in_len) {
        ssize_t w = write(js->in_fd, js->in_buf, js->in_len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) return;
        if (w <= 0) { /* EPIPE: rank 0 wants no more */
            js->in_len = 0;
            js->in_eof = true;
            break;
        }
        memmove(js->in_buf, js->in_buf + w, js->in_len - (size_t)w);
        js->in_len -= (size_t)w;
    }
    if (js->in_fd >= 0 && js->in_eof && !js->in_len) {
        close(js->in_fd);
        js->in_fd = -1;
    }
}

/* The launcher reads its standard input while the first host's agent keeps up. */
void stdin_read(job_spec *js)
{
    char buf[65536];
    ssize_t r = read(js->in_fd, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (r <= 0) js->in_fd = -1; /* EOF (or an error: the same to rank 0) */
    cr_tree_send(js->tree, 0, CR_F_STDIN, 0, 0, 0, buf, r > 0 ? (size_t)r : 0);
}

static bool valid_rank(const job_spec *js, int r)
{
    return r >= 0 && r < js->cmd.total;
}

/* An agent: once every child has flushed (or is gone), say so to the parent. */
static void flush_owed(job_spec *js)
{
    cr_tree *t = js->tree;
    if (!js->agent || !js->flushing) return;
    for (int i = 0; i < t->nchild; i++)
        if (!js->flushed[i] && !t->child_done[i]) return;
    js->flushing = false;
    cr_tree_send(t, -1, CR_F_FLUSHED, 0, t->node, 0, NULL, 0);
}

/* The launcher: ask every host for what its ranks have written so far, and
 * wait (at most FLUSH_MS) until it has come, so that a report comes after it. */
void flush_hosts(job_spec *js)
{
    cr_tree *t = js->tree;
    if (js->flushing) return; /* a report while we wait: it comes after this flush */
    js->flushing = true;
    memset(js->flushed, 0, (size_t)t->nchild + 1);
    cr_tree_send(t, -2, CR_F_FLUSH, 0, 0, 0, NULL, 0);
    uint64_t until = now_ns() + (uint64_t)FLUSH_MS * 1000000u;
    struct pollfd *pf = calloc((size_t)cr_tree_maxfds(t), sizeof *pf);
    for (uint64_t now = now_ns(); pf && now < until; now = now_ns()) {
        bool all = true;
        for (int i = 0; i < t->nchild; i++) all &= js->flushed[i] || t->child_done[i];
        if (all) break;
        int k = cr_tree_pollfds(t, pf);
        poll(pf, (nfds_t)k, 10);
        cr_tree_service(t, now_ns() / 1000000u, on_frame, on_lost, js);
    }
    free(pf);
    js->flushing = false;
}

/* The launcher: a frame from an agent below that is the launcher's to judge
 * (output, a rank's end, a card, a hang report, a host lost or failed). */
static void frame_from_below(job_spec *js, const cr_frame_hdr *h, const void *pl)
{
    cr_tree *t = js->tree;
    switch (h->type) {
    case CR_F_OUT:
        if (valid_rank(js, h->a)) emit(js, h->a, h->flag == 2 ? 2 : 1, pl, h->len);
        break;
    case CR_F_EXIT:
        if (valid_rank(js, h->a) && js->ranks[h->a].running && h->len == sizeof(int32_t)) {
            int32_t pid;
            memcpy(&pid, pl, sizeof pid);
            if (h->flag & 4) rank_unfinished(js, h->a);
            rank_ended(js, h->a, pid, h->b, (h->flag & 1) != 0, (h->flag & 8) != 0);
            if ((h->flag & 2) && js->fail.rank == h->a) js->fail.said = true; /* watch.c */
        }
        break;
    case CR_F_CARD:
        put_card(js, h->a, pl, h->len);
        cr_tree_send(t, -2, CR_F_CARD, 0, h->a, 0, pl, h->len);
        break;
    case CR_F_REPORT:
        if (valid_rank(js, h->a) && h->len == sizeof(cr_waitinfo) && js->wd) {
            cr_waitinfo w;
            memcpy(&w, pl, sizeof w);
            cr_waitinfo_sane(&w);
            cr_watchdog_put(js->wd, h->a, &w);
            js->reported[h->a] = true;
        }
        break;
    case CR_F_LOST:
    case CR_F_FAIL: {
        char why[400];
        snprintf(why, sizeof why, "%.*s", (int)(h->len < 399 ? h->len : 399), (const char *)pl);
        for (char *p = why; *p; p++)
            if ((unsigned char)*p < 0x20) *p = '?';
        if (h->type == CR_F_FAIL && !js->ending) {
            report_failure(js);
            say(js, "courier: %s\n", why);
            end_job(js, 1);
        } else {
            host_lost(js, why);
        }
        break;
    }
    }
}

/* An agent: a frame from the launcher's side (cards, the end, hold, flush,
 * rank 0's input, a signal, the hang report's question). */
static void frame_from_above(job_spec *js, const cr_frame_hdr *h, const void *pl)
{
    cr_tree *t = js->tree;
    switch (h->type) {
    case CR_F_CARD:
        put_card(js, h->a, pl, h->len);
        cr_tree_send(t, -2, CR_F_CARD, 0, h->a, 0, pl, h->len);
        break;
    case CR_F_END:
        end_job(js, h->b);
        break;
    case CR_F_HOLD:
        js->held = h->b != 0;
        cr_tree_send(t, -2, CR_F_HOLD, 0, 0, h->b, NULL, 0);
        break;
    case CR_F_FLUSH:
        drain_all(js);
        memset(js->flushed, 0, (size_t)t->nchild + 1);
        js->flushing = true;
        cr_tree_send(t, -2, CR_F_FLUSH, 0, 0, 0, NULL, 0);
        flush_owed(js);
        break;
    case CR_F_STDIN:
        if (js->in_fd < 0) break; /* rank 0 closed it (or it is not here) */
        if (!h->len) {
            js->in_eof = true;
        } else {
            char *b = realloc(js->in_buf, js->in_len + h->len);
            if (!b) break;
            memcpy(b + js->in_len, pl, h->len);
            js->in_buf = b;
            js->in_len += h->len;
        }
        stdin_write(js);
        break;
    case CR_F_SIGNAL:
        if (h->b > 0 && h->b < 65) on_signal(js, h->b);
        break;
    case CR_F_REPORTQ:
        for (int r = js->first; r < js->first + js->count; r++)
            if (js->ranks[r].running && js->wd)
                cr_tree_send(t, -1, CR_F_REPORT, 0, r, 0, cr_watchdog_get(js->wd, r),
                             sizeof(cr_waitinfo));
        cr_tree_send(t, -2, CR_F_REPORTQ, 0, 0, 0, NULL, 0);
        break;
    }
}

void on_frame(void *arg, int from, const cr_frame_hdr *h, const void *pl)
{
    job_spec *js = arg;
    cr_tree *t = js->tree;
    if (h->type == 0) { /* child 'from' has proven itself: the job, and the cards so far */
        cr_tree_send(t, from, CR_F_JOB, 0, 0, 0, t->job, t->job_len);
        for (int r = 0; r < js->cmd.total; r++) {
            uint32_t ready = atomic_load_explicit(&js->cards[r].ready, memory_order_acquire);
            if (ready && ready - 1 <= CR_CARD_MAX)
                cr_tree_send(t, from, CR_F_CARD, 0, r, 0, js->cards[r].data, ready - 1);
        }
        if (js->held) cr_tree_send(t, from, CR_F_HOLD, 0, 0, 1, NULL, 0);
        if (js->ending) /* it comes late: the job is already over */
            cr_tree_send(t, from, CR_F_END, 0, 0, js->exit_status, NULL, 0);
        return;
    }
    if (from >= 0) { /* from below */
        if (h->type == CR_F_STILL) {
            js->child_still[from] = h->b <= STILL_HANG ? (unsigned char)h->b : STILL_NOT;
            return;
        }
        if (h->type == CR_F_DONE) {
            flush_owed(js);
            return;
        }
        if (h->type == CR_F_FLUSHED) {
            js->flushed[from] = true;
            flush_owed(js);
            return;
        }
        if (js->agent) { /* not ours to judge: up it goes */
            cr_tree_send(t, -1, h->type, h->flag, h->a, h->b, pl, h->len);
            return;
        }
        frame_from_below(js, h, pl);
        return;
    }
    /* from the launcher's side (an agent) */
    frame_from_above(js, h, pl);
}

void on_lost(void *arg, int from, const char *why)
{
    job_spec *js = arg;
    if (from >= 0) {
        js->child_still[from] = STILL_HANG; /* it moves nothing any more */
        flush_owed(js);
        if (js->agent)
            cr_tree_send(js->tree, -1, CR_F_LOST, 0, cr_tree_child_node(js->tree, from), 0, why,
                         strlen(why));
        else
            host_lost(js, why);
        return;
    }
    /* The agent lost the launcher: nobody is left to report to. */
    fprintf(stderr, "courier agent (host %s): lost the launcher (%s); ending this host's ranks\n",
            cr_tree_node_name(js->tree, js->tree->node), why);
    end_job(js, 1);
}

static long env_ms(const char *name, long def, long lo, long hi)
{
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < lo || x > hi ? def : x;
}

/* The agents get the command line without the options about hosts (and,
 * with --trace, where the ranks' parts go), in jargv (room for argc + 2).
 * Returns its length. */
static int agents_argv(job_spec *js, int argc, char **argv, char **jargv)
{
    int jargc = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], ":")) { /* past the options: the rest is programs */
            for (; i < argc; i++) jargv[jargc++] = argv[i];
            break;
        }
        if ((!strcmp(argv[i], "--hosts") || !strcmp(argv[i], "--hostfile") ||
             !strcmp(argv[i], "--rsh") || !strcmp(argv[i], "--trace")) &&
            i + 1 < argc) {
            i++;
            continue;
        }
        jargv[jargc++] = argv[i];
        if (i == 0 && js->trace_parts[0]) { /* the ranks' parts go where the launcher says */
            jargv[jargc++] = "--trace-parts";
            jargv[jargc++] = js->trace_parts;
        }
    }
    return jargc;
}

/* The launcher of a job across hosts: start the agents' tree, then watch it.
 * hl: the hosts already known (a Slurm allocation), else those the command
 * line names. */
int run_across(job_spec *js, int argc, char **argv, cr_hostlist hl)
{
    char err[600];
    if ((js->cmd.hostfile && cr_hosts_parse_file(&hl, js->cmd.hostfile, err, sizeof err)) ||
        (js->cmd.hosts && cr_hosts_parse_list(&hl, js->cmd.hosts, err, sizeof err)) ||
        cr_hosts_place(&hl, js->cmd.total, err, sizeof err)) {
        cr_hosts_free(&hl);
        free(js->ranks);
        cr_run_spec_free(&js->cmd);
        fprintf(stderr, "courier run: %s\n", err); /* the hosts, not the options' syntax */
        return 2;
    }
    js->argc = argc;
    js->argv = argv;
    if (trace_begin(js, "courier run")) {
        cr_hosts_free(&hl);
        free(js->ranks);
        cr_run_spec_free(&js->cmd);
        return 1;
    }
    cr_tree tree = {.lfd = -1};
    js->tree = &tree;
    tree.hosts = calloc((size_t)hl.n, sizeof *tree.hosts);
    char *rshbuf = strdup(js->cmd.rsh ? js->cmd.rsh : "ssh");
    tree.rsh = calloc(strlen(rshbuf ? rshbuf : "") / 2 + 2, sizeof *tree.rsh);
    char **jargv = calloc((size_t)argc + 3, sizeof *jargv);
    unsigned char key[32];
    char self[PATH_MAX];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    int status = 1;
    if (!tree.hosts || !rshbuf || !tree.rsh || !jargv || sl <= 0 || random_key(key)) {
        fprintf(stderr, "courier run: cannot prepare the job across hosts: %s\n",
                sl <= 0 ? "cannot find this executable (/proc/self/exe)" : "out of memory");
        goto out;
    }
    self[sl] = 0;
    tree.agent = getenv("COURIER_AGENT") ? getenv("COURIER_AGENT") : self;
    for (int h = 0, first = 0; h < hl.n; h++) {
        tree.hosts[h] = (cr_tree_host){.name = hl.name[h], .count = hl.count[h], .first = first};
        first += hl.count[h];
    }
    int nw = 0;
    for (char *save = NULL, *w = strtok_r(rshbuf, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save))
        tree.rsh[nw++] = w;
    if (!nw) tree.rsh[nw++] = "ssh";
    /* Heartbeats every COURIER_HEARTBEAT_MS (200); five missed mean a host is lost. */
    tree.hb_ms = (uint64_t)env_ms("COURIER_HEARTBEAT_MS", 200, 10, 60000);
    tree.lost_ms = 5 * tree.hb_ms;
    tree.join_ms = (uint64_t)env_ms("COURIER_AGENT_TIMEOUT", 30, 1, 3600) * 1000u;
    int fanout = (int)env_ms("COURIER_TREE_FANOUT", CR_TREE_FANOUT, 1, 4096);
    if (cr_tree_root(&tree, key, hl.n, fanout)) {
        fprintf(stderr, "courier run: %s\n", tree.why);
        goto out;
    }
    int jargc = agents_argv(js, argc, argv, jargv);
    tree.job = cr_tree_job_encode(&tree, jargc, jargv, &tree.job_len);
    js->child_still = calloc((size_t)tree.nchild + 1, sizeof *js->child_still);
    js->flushed = calloc((size_t)tree.nchild + 1, sizeof *js->flushed);
    js->reported = calloc((size_t)js->cmd.total, 1);
    js->cards = calloc((size_t)js->cmd.total, sizeof *js->cards);
    if (!tree.job || !js->child_still || !js->flushed || !js->reported || !js->cards) {
        fprintf(stderr, "courier run: the job's description is too large (%d hosts)\n", hl.n);
        goto out;
    }
    for (int r = 0; r < js->cmd.total; r++) js->ranks[r].running = true;
    js->in_fd = fcntl(0, F_GETFD) < 0 ? -1 : 0; /* rank 0's, on the first host */
    out_q *oq = calloc(1, sizeof *oq);
    if (!oq) {
        fprintf(stderr, "courier run: out of memory\n");
        goto out;
    }
    pthread_mutex_init(&oq->mu, NULL);
    pthread_cond_init(&oq->cv, NULL);
    /* The signals go to the descriptor, blocked before the writer thread
     * starts and inherits the mask (else SIGINT killed the launcher there,
     * silently, without ending the job in order). */
    int sfd = signal_fd();
    if (pthread_create(&oq->th, NULL, out_writer, oq)) {
        free(oq);
        if (sfd >= 0) close(sfd);
        fprintf(stderr, "courier run: cannot start the output thread\n");
        goto out;
    }
    js->oq = oq;
    js->started = now_ns();
    if (sfd < 0 || cr_tree_spawn(&tree, key)) {
        fprintf(stderr, "courier run: %s\n", sfd < 0 ? strerror(errno) : tree.why);
        for (int i = 0; i < tree.nchild; i++)
            if (tree.rsh_pid[i] > 0) kill(tree.rsh_pid[i], SIGKILL);
        while (waitpid(-1, NULL, 0) > 0) {
        }
        goto out;
    }
    explicit_bzero(key, sizeof key);
    js->first = js->count = 0;
    register_job(js, argc, argv);
    status = watch_and_finish(js, sfd, "courier run");
    close(sfd);
    free(jargv);
    free(rshbuf);
    cr_hosts_free(&hl);
    return status;
out:
    explicit_bzero(key, sizeof key);
    cr_tree_free(&tree);
    free(jargv);
    free(rshbuf);
    cr_hosts_free(&hl);
    free(js->ranks);
    free(js->child_still);
    free(js->flushed);
    free(js->reported);
    free(js->cards);
    cr_run_spec_free(&js->cmd);
    return status;
}
