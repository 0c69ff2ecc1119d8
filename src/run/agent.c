/* `courier agent`: a host's part of a job across hosts, started by courier
 * run (or a parent agent) through the rsh command. It takes the JOB from its
 * parent, starts the agents below it, checks the programs and --net on its
 * host, starts its own ranks (start.c) and watches them (watch.c), reporting
 * up the tree.
 *
 * Invariants: the job's secret comes on stdin, never on a command line; what
 * arrives before the ranks are started is kept and handled once they are; an
 * agent that loses its parent ends its host's ranks. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envcheck.h"
#include "launcher.h"
#include "tree.h"

#include "launch_internal.h"

/* ---- a host's agent ------------------------------------------------------------- */

/* What comes before the agent stands: the JOB, and what follows it at once
 * (cards, rank 0's input, an END), kept as frames to be handled once the ranks
 * are started. */
typedef struct job_wait {
    bool got, lost;
    char *payload;
    size_t len;
    unsigned char *early; /* headers and payloads, one after another */
    size_t elen;
} job_wait;

static void on_job(void *arg, int from, const cr_frame_hdr *h, const void *pl)
{
    job_wait *w = arg;
    if (from != -1) return;
    if (h->type == CR_F_JOB && !w->got) {
        w->payload = malloc(h->len ? h->len : 1);
        if (w->payload) memcpy(w->payload, pl, h->len);
        w->len = h->len;
        w->got = true;
        return;
    }
    unsigned char *n = realloc(w->early, w->elen + sizeof *h + h->len);
    if (!n) return;
    w->early = n;
    memcpy(w->early + w->elen, h, sizeof *h);
    memcpy(w->early + w->elen + sizeof *h, pl, h->len);
    w->elen += sizeof *h + h->len;
}

static void on_job_lost(void *arg, int from, const char *why)
{
    (void)why;
    if (from == -1) ((job_wait *)arg)->lost = true;
}

/* The job's secret: 32 bytes on stdin (until then), then stdin is /dev/null.
 * Returns the bytes read (32: all of it). */
static size_t read_secret(unsigned char key[32], uint64_t until)
{
    size_t got = 0;
    while (got < 32 && now_ns() < until) {
        struct pollfd p = {.fd = 0, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0) continue;
        ssize_t r = read(0, key + got, 32 - got);
        if (r <= 0 && !(r < 0 && errno == EINTR)) break;
        if (r > 0) got += (size_t)r;
    }
    int dn = open("/dev/null", O_RDONLY);
    if (dn >= 0) {
        dup2(dn, 0);
        close(dn);
    }
    return got;
}

/* COURIER_HOST_LAYOUT for the ranks: each host's count of ranks, "4,4"
 * (malloc'd; NULL: out of memory). */
static char *host_layout(const cr_tree *tree)
{
    size_t ll = (size_t)(tree->nnodes - 1) * 8 + 1;
    char *layout = malloc(ll);
    if (layout) {
        size_t off = 0;
        for (int h = 0; h < tree->nnodes - 1; h++)
            off += (size_t)snprintf(layout + off, ll - off, "%s%d", h ? "," : "",
                                    tree->hosts[h].count);
    }
    return layout;
}

static const char agent_usage[] =
    "usage: courier agent --parent ADDRS --port P --node K [--fanout F]\n"
    "  (started by courier run on each host of a job; the job's secret comes on stdin)\n";

int cr_agent_main(int argc, char **argv)
{
    const char *parent = NULL;
    long port = -1, node = -1, fanout = CR_TREE_FANOUT;
    for (int i = 1; i + 1 < argc; i += 2) {
        long *v = !strcmp(argv[i], "--port")     ? &port
                  : !strcmp(argv[i], "--node")   ? &node
                  : !strcmp(argv[i], "--fanout") ? &fanout
                                                 : NULL;
        if (!strcmp(argv[i], "--parent"))
            parent = argv[i + 1];
        else if (!v || parse_count(argv[i + 1], v))
            node = -1;
    }
    if (!parent || port < 1 || port > 65535 || node < 1 || fanout < 1 || (argc - 1) % 2) {
        fputs(agent_usage, stderr);
        return 2;
    }
    /* The secret: 32 bytes on stdin, then stdin is /dev/null. */
    unsigned char key[32];
    uint64_t until = now_ns() + 10000000000u;
    size_t got = read_secret(key, until);
    if (got != sizeof key) {
        fprintf(stderr,
                "courier agent (node %ld): no job secret on standard input; agents are "
                "started by courier run --hosts\n",
                node);
        return 1;
    }
    job_spec js = {.fail.rank = -1, .agent = true};
    cr_tree tree = {.lfd = -1, .hb_ms = 200, .lost_ms = 5000};
    js.tree = &tree;
    int sfd = signal_fd();
    if (sfd < 0 || cr_tree_join(&tree, key, (int)node, (int)fanout, parent, (int)port)) {
        fprintf(stderr, "courier agent (node %ld): %s\n", node,
                sfd < 0 ? strerror(errno) : tree.why);
        explicit_bzero(key, sizeof key);
        cr_tree_free(&tree);
        return 1;
    }
    /* What to run. */
    job_wait w = {0};
    while (!w.got && !w.lost && now_ns() < until) {
        struct pollfd pf[4];
        int k = cr_tree_pollfds(&tree, pf);
        poll(pf, (nfds_t)k, 100);
        cr_tree_service(&tree, now_ns() / 1000000u, on_job, on_job_lost, &w);
    }
    int jargc = 0;
    char **jargv = w.got ? cr_tree_job_decode(&tree, w.payload, w.len, &jargc) : NULL;
    free(w.payload);
    char err[1024], who[300];
    snprintf(who, sizeof who, "courier agent (host %s)", cr_tree_node_name(&tree, (int)node));
    int rc = jargv ? cr_run_parse(jargc, jargv, &js.cmd, NULL, NULL, err, sizeof err) : 2;
    if (!jargv) snprintf(err, sizeof err, "no readable job from the launcher");
    /* The programs this host runs must be here (others need not be). */
    for (int a = 0, r0 = 0; !rc && node < tree.nnodes && a < js.cmd.napps;
         r0 += js.cmd.apps[a++].n) {
        const cr_tree_host *h = &tree.hosts[node - 1];
        if (r0 < h->first + h->count && r0 + js.cmd.apps[a].n > h->first &&
            program_problem(js.cmd.apps[a].argv[0], err, sizeof err) != PROG_OK)
            rc = 2;
    }
    if (!rc && js.cmd.net && cr_envcheck_net(js.cmd.net, "--net ", err, sizeof err)) rc = 2;
    if (rc || node >= tree.nnodes || tree.hosts[node - 1].count < 1 ||
        tree.hosts[node - 1].first + tree.hosts[node - 1].count > js.cmd.total) {
        if (!rc) snprintf(err, sizeof err, "the job's host list does not match its ranks");
        char msg[1400];
        int n = snprintf(msg, sizeof msg, "host %s: %s", cr_tree_node_name(&tree, (int)node), err);
        cr_tree_send(&tree, -1, CR_F_FAIL, 0, (int)node, 0, msg, (size_t)n);
        cr_tree_flush(&tree, 1000);
        explicit_bzero(key, sizeof key);
        free(jargv);
        cr_tree_free(&tree);
        cr_run_spec_free(&js.cmd);
        return 1;
    }
    js.cmd.timeout = 0; /* the launcher keeps the time */
    for (char **e = tree.env; e && *e; e++) {
        char *eq = strchr(*e, '=');
        *eq = 0;
        setenv(*e, eq + 1, 1);
        *eq = '=';
    }
    js.first = tree.hosts[node - 1].first;
    js.count = tree.hosts[node - 1].count;
    js.layout = host_layout(&tree);
    js.card_sent = calloc((size_t)js.count, 1);
    js.cards_left = js.count;
    cr_tree_local_addr(&tree, js.net_here, sizeof js.net_here);
    raise_fd_limit(js.count);
    rc = !js.layout || !js.card_sent || alloc_ranks(&js) || cr_tree_spawn(&tree, key);
    js.child_still = calloc((size_t)tree.nchild + 1, sizeof *js.child_still);
    js.flushed = calloc((size_t)tree.nchild + 1, sizeof *js.flushed);
    if (rc || !js.child_still || !js.flushed) {
        char msg[600];
        int n = snprintf(msg, sizeof msg, "host %s: %s", cr_tree_node_name(&tree, (int)node),
                         tree.why[0] ? tree.why : "out of memory");
        cr_tree_send(&tree, -1, CR_F_FAIL, 0, (int)node, 0, msg, (size_t)n);
        cr_tree_flush(&tree, 1000);
        rc = 1;
    } else {
        rc = start_here(&js, key, who);
    }
    for (size_t off = 0; !rc && off < w.elen;) { /* what came right after the job */
        cr_frame_hdr h;
        memcpy(&h, w.early + off, sizeof h);
        on_frame(&js, -1, &h, w.early + off + sizeof h);
        off += sizeof h + h.len;
    }
    free(w.early);
    explicit_bzero(key, sizeof key);
    if (rc) {
        if (!js.ranks) { /* nothing started */
            cr_tree_free(&tree);
            cr_run_spec_free(&js.cmd);
            free(js.layout);
            free(js.card_sent);
            free(js.child_still);
            free(js.flushed);
            free(jargv);
            return 1;
        }
        end_job(&js, 1);
    } else {
        register_job(&js, jargc, jargv);
    }
    rc = watch_and_finish(&js, sfd, who);
    free(jargv);
    close(sfd);
    return rc;
}
