/* The agents' tree of a job that spans hosts (src/run/tree.c): how `courier
 * run` and the `courier agent` on each host start one another and talk.
 *
 * Nodes: the launcher is node 0; the agent of host k is node k + 1. Node v's
 * children are v*F+1 .. v*F+F (F: the fan-out), so no process holds more than F
 * connections however many hosts there are. Each node starts its children's
 * agents itself (the rsh command), listens for them and keeps one TCP
 * connection to each; frames go up and down that tree only. */
#ifndef COURIER_TREE_H
#define COURIER_TREE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CR_TREE_FANOUT 32
#define CR_TREE_FRAME_MAX (1u << 20)
#define CR_TREE_PENDING 16 /* unproven connections at once */
#define CR_TREE_LISTEN 8   /* listening sockets: addresses the children reach us at */

/* Frame types. Up: towards the launcher; down: towards the leaves. */
enum cr_frame {
    CR_F_JOB = 1, /* down, to one child: what to run (NUL-separated strings) */
    CR_F_CARD,    /* both: a = rank; payload: its card (a tcp address) */
    CR_F_OUT,     /* up: a = rank, flag = 1 stdout / 2 stderr; payload: whole lines */
    CR_F_EXIT,    /* up: a = rank, b = wait status, flag = 1 if it ended outside the job;
                     payload: its pid (int32) */
    CR_F_END,     /* down: end every rank (b: the job's exit status) */
    CR_F_SIGNAL,  /* down: b = a signal to pass to every rank */
    CR_F_STILL,   /* up: b = how still the subtree's ranks are (or ended): cr_still */
    CR_F_REPORTQ, /* down: say what each rank waits for */
    CR_F_REPORT,  /* up: payload: the watchdog's lines for one host */
    CR_F_LOST,    /* up: a = node lost; payload: why */
    CR_F_FAIL,    /* up: a = node; payload: an agent's error line */
    CR_F_DONE,    /* up: every rank and agent of the subtree has ended */
    CR_F_PING,    /* both: heartbeat */
    CR_F_STDIN,   /* down, to the first host: bytes for rank 0's standard input (none: EOF) */
    CR_F_FLUSH,   /* down: send up all your ranks have written (the launcher will speak) */
    CR_F_FLUSHED, /* up: done, for the whole subtree */
    CR_F_HOLD     /* down: b = 1: keep the ranks' output in their pipes for now; 0: go on */
};
#define CR_F_LAST CR_F_HOLD

/* How still a subtree is (CR_F_STILL, src/run/watch.c tree_watch): a rank
 * moves; every rank has been blocked, unmoving, for 0.3 s, none runnable
 * (cr_watchdog_quiet); every rank has been so for the hang timeout. */
enum cr_still { STILL_NOT = 0, STILL_QUIET = 1, STILL_HANG = 2 };

typedef struct cr_frame_hdr {
    uint32_t len; /* payload bytes */
    uint8_t type, flag;
    uint16_t pad;
    int32_t a, b;
} cr_frame_hdr;

/* One connection of the tree (to the parent or a child). */
typedef struct cr_ctl cr_ctl;

typedef struct cr_tree_host {
    char *name;
    int count, first; /* its ranks: first .. first+count-1 */
} cr_tree_host;

typedef struct cr_tree {
    int node, nnodes, fanout;
    unsigned char key[32];  /* the tree's key, derived from the job's secret */
    cr_tree_host *hosts;    /* [nnodes - 1] */
    char **rsh;             /* the command that starts an agent on a host: words, NULL-ended */
    char *agent;            /* the courier executable on the hosts */
    int lfd;                /* listening for our children: an epoll set of ls (poll it) */
    int ls[CR_TREE_LISTEN]; /* one socket per address the children reach us at (the route
                               from here to their hosts; loopback for agents here), or one
                               on every address when a host's name does not resolve here */
    int nls;
    char addrs[512];  /* those addresses, comma-separated, for the children */
    int port;         /* the same on each */
    unsigned refused; /* strangers refused on the port */
    char note[320];   /* the first refusal, for the caller to log once and clear */
    cr_ctl *parent;   /* NULL at the launcher */
    int first_child, nchild;
    cr_ctl **child;                   /* [nchild]: NULL until it connects (and proves itself) */
    pid_t *rsh_pid;                   /* [nchild]: the process that started it (0: reaped) */
    int *rsh_status;                  /* [nchild] */
    bool *child_done;                 /* [nchild]: sent DONE (or lost: counted as done) */
    cr_ctl *pending[CR_TREE_PENDING]; /* accepted, not yet proven */
    uint64_t started_ms;              /* when the children were started */
    uint64_t hb_ms, lost_ms;          /* heartbeat; silence that means a connection is lost */
    uint64_t join_ms;                 /* how long a child's agent has to call back */
    char *job;  /* an agent: the JOB frame's payload, which the strings point into */
    char **env; /* an agent: the launcher's COURIER_* settings, NULL-ended */
    size_t job_len;
    char why[256]; /* the last error, for a report line */
} cr_tree;

/* A frame that arrived: from a child (index into child[]) or the parent (-1). */
typedef void (*cr_tree_on_frame)(void *arg, int from, const cr_frame_hdr *h, const void *payload);
/* A connection that ended (closed, silent past lost_ms, spoke garbage): why is
 * a one-line reason. */
typedef void (*cr_tree_on_lost)(void *arg, int from, const char *why);

/* The launcher's side: listen where the children reach us (the children try
 * the addresses on a network they share first). */
int cr_tree_root(cr_tree *t, const unsigned char secret[32], int nhosts, int fanout);
/* An agent's side: connect to the parent (addrs: comma-separated; port), prove
 * ourselves, then listen for our children. 0, or -1 with t->why. */
int cr_tree_join(cr_tree *t, const unsigned char secret[32], int node, int fanout,
                 const char *addrs, int port);
/* Our local address on the connection to the parent (for the ranks' COURIER_NET). */
int cr_tree_local_addr(const cr_tree *t, char *buf, size_t len);
/* Start our children's agents with the rsh command (passing the secret on their
 * standard input). 0, or -1 with t->why. */
int cr_tree_spawn(cr_tree *t, const unsigned char secret[32]);
/* Is pid one of our rsh processes? Record its end (index, or -1). */
int cr_tree_reaped(cr_tree *t, pid_t pid, int status);

/* Send a frame: to a child (index), to the parent (-1), or to every child (-2).
 * Queued; never blocks. */
void cr_tree_send(cr_tree *t, int to, int type, int flag, int a, int b, const void *payload,
                  size_t len);
/* Poll set: the descriptors the tree wants watched (at most cr_tree_maxfds). */
int cr_tree_maxfds(const cr_tree *t);
int cr_tree_pollfds(cr_tree *t, struct pollfd *pf);
/* Service every connection (accept, read, write; all non-blocking), then
 * heartbeats and deadlines. */
void cr_tree_service(cr_tree *t, uint64_t now_ms, cr_tree_on_frame on_frame,
                     cr_tree_on_lost on_lost, void *arg);
/* Milliseconds until the tree needs servicing again (heartbeat, deadline). */
int cr_tree_wait_ms(const cr_tree *t);
/* Every child done (or lost). */
bool cr_tree_children_done(const cr_tree *t);
/* Bytes queued for child i, or the parent (-1); SIZE_MAX when not connected. */
size_t cr_tree_backlog(const cr_tree *t, int i);
/* Try to write what is queued, for at most ms (at the end). */
void cr_tree_flush(cr_tree *t, int ms);
/* The node of a child index, and its host's name. */
int cr_tree_child_node(const cr_tree *t, int i);
const char *cr_tree_node_name(const cr_tree *t, int node);
/* The JOB frame: the tree's settings, the hosts and the run command line (argv
 * as `courier run` would parse it, without the host options). decode fills t
 * and returns argv (calloc'ed, pointing into t->job), NULL if malformed. */
char *cr_tree_job_encode(const cr_tree *t, int argc, char *const *argv, size_t *len);
char **cr_tree_job_decode(cr_tree *t, const void *payload, size_t len, int *argc);
/* Give up on every child at once (a second signal to the launcher): SIGKILL
 * its rsh process (the agent itself, with --rsh none or ip netns exec: even a
 * stopped one dies, and its ranks with it by PR_SET_PDEATHSIG; ssh: its
 * connection ends) and close its connection, so that an agent still able to
 * act ends its ranks; each child is then done. The processes are reaped by
 * the caller's wait loop. */
void cr_tree_kill_children(cr_tree *t);
/* Close everything, SIGKILL rsh processes still running (they are reaped by
 * the caller's wait loop), free. */
void cr_tree_free(cr_tree *t);

#endif
