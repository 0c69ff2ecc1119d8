/* Internals shared by the files of src/net (not part of the public interface). */
#ifndef COURIER_NET_INTERNAL_H
#define COURIER_NET_INTERNAL_H

#include "cr_net.h"
#include "cr_net_params.h"

/* ------------------------------------------------------------------ fabric (fabric.c)
 * A worm is one message or packet moving over a path of exclusive links: its header acquires
 * the links one by one (waiting, and holding what it has, when one is busy), then data
 * streams and each link is released as the tail passes. In circuit mode (iPSC/2) data waits
 * for the destination's RDY to come back over the status path; in wormhole mode (Elite, SP2)
 * data follows the header directly. */
#define CR_MAX_PATH 24

typedef struct cr_fabric cr_fabric;
typedef struct cr_worm cr_worm;

struct cr_worm {
    int32_t links[CR_MAX_PATH];
    uint8_t n, hop;
    int32_t waiting_on; /* link index, or -1 when not blocked on a link */
    int32_t dst_node;
    uint64_t bytes; /* wire bytes */
    uint64_t rate;  /* streaming rate, bytes/s (the path's slowest element) */
    cr_time t_acq0, t_h;
    cr_worm *wnext; /* wait queues, parking lists and free list */
    cr_msg *owner;
    uint64_t tag;
    cr_fabric *fab;
};

typedef struct cr_link {
    cr_worm *holder;
    cr_time free_at;   /* CR_TIME_NEVER while held with the release time not yet known */
    cr_worm *wh, *wt;  /* waiting headers */
    int32_t last_port; /* round-robin arbitration state */
    uint32_t nwait;
    int32_t port0;   /* the input port of the waiter that found the queue empty */
    uint32_t nother; /* waiters from other ports than port0 (0: the queue's head is next) */
    uint8_t wake_pending;
    cr_time since; /* the holder got it at */
    cr_time busy;  /* held in all, counted when a holder's release time is known */
    uint64_t bytes;
} cr_link;

struct cr_fabric {
    cr_sim *sim;
    cr_link *links;
    size_t nlinks;
    cr_time hop_ps;    /* header time through each router/switch */
    cr_time status_ps; /* circuit: RDY per hop back to the source */
    cr_time pipe_ps;   /* data latency per link */
    int circuit;       /* wait for RDY before data */
    int rr;            /* round-robin arbitration among input ports (else FIFO) */
    int detect_deadlock;
    int (*sink_ready)(void *ctx, cr_worm *w); /* 0: the model parks w, calls sink_go later */
    void (*src_free)(void *ctx, cr_worm *w, cr_time t); /* tail leaves the source at t */
    void (*arrived)(void *ctx, cr_worm *w);             /* event: tail at destination */
    void *ctx;
    uint64_t worms, waits, deadlocks;
    uint32_t max_wait;
    cr_worm *free_worms;
    cr_worm **all; /* every worm ever allocated, so in-flight ones are freed too */
    size_t nall, capall;
};

int cr_fabric_init(cr_fabric *f, cr_sim *sim, size_t nlinks);
void cr_fabric_fini(cr_fabric *f);
cr_worm *cr_worm_alloc(cr_fabric *f);
void cr_worm_free(cr_fabric *f, cr_worm *w);
void cr_fabric_start(cr_fabric *f, cr_worm *w);   /* header starts now */
void cr_fabric_sink_go(cr_fabric *f, cr_worm *w); /* a parked worm's destination is ready */

/* ------------------------------------------------------------------ machines */
typedef struct cr_machine_ops {
    cr_machine_kind kind;
    int (*init)(cr_net *net, char *err, size_t errlen);
    void (*fini)(cr_net *net);
    void (*wire)(cr_net *net, cr_msg *m); /* move m->wbytes from m->wfrom to m->wto */
    int (*hops)(cr_net *net, int a, int b);
    int (*route_links)(cr_net *net, int s, int d, int32_t *links, int max);
    int (*bcast)(cr_net *net, int root, int lo, int hi, uint64_t bytes,
                 void (*arrive)(cr_net *, int, cr_time, void *), void *ctx);
    void (*stats)(cr_net *net, cr_net_stats *st);
    uint64_t inject_bps;
    /* the machine's links, when they are a fabric's (else NULL), and a link's name */
    cr_fabric *(*fabric)(cr_net *net);
    void (*link_name)(cr_net *net, int32_t link, char *buf, size_t len);
} cr_machine_ops;

extern const cr_machine_ops cr_hcube_ops, cr_sf_ops, cr_cs2_ops, cr_sp2_ops, cr_iwarp_ops,
    cr_cluster_ops;

struct cr_net {
    cr_sim *sim;
    cr_net_config cfg;
    int nodes;
    const cr_swmodel *sw; /* NULL: hardware only */
    const cr_machine_ops *ops;
    void *mach;
    cr_time *cpu_free; /* each node's processor, a FIFO server */
    void (*deliver)(cr_net *, cr_msg *, void *);
    void *deliver_ctx;
    cr_msg *free_msgs;
    cr_msg **all_msgs; /* every message allocated, freed with the machine */
    size_t nmsgs, capmsgs;
    int stop_on_deadlock;
};

/* The machine calls this when the current wire trip of m has fully arrived (now). */
void cr_net_wire_done(cr_net *net, cr_msg *m);
/* Reserve node's processor for cost from now (FIFO); returns the time it is done. */
cr_time cr_net_cpu(cr_net *net, int node, cr_time cost);
/* Topology helpers shared by the hypercube models. */
int cr_ecube_path(int src, int dst, int *dims, int max);

#endif
