/* Internals shared by the files of src/net (not part of the public interface). */
#ifndef COURIER_NET_INTERNAL_H
#define COURIER_NET_INTERNAL_H

#include "cr_net.h"
#include "cr_net_params.h"

#define CR_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

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
struct cr_net {
    cr_sim *sim;
    cr_net_config cfg;
    int nodes;
    const cr_swmodel *sw; /* NULL: hardware only */
    const cr_machine *m;  /* the machine's descriptor: its hooks */
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
/* Topology helpers shared by the hypercube models (ipsc2.c). */
int cr_ecube_path(int src, int dst, int *dims, int max);
int cr_hcube_dim(cr_net *net, char *err, size_t errlen); /* from cfg.dim / nodes, or -1 */
int cr_hcube_hops(cr_net *net, int a, int b);

/* ------------------------------------------------------------------ fat trees (ftree.c)
 * The family of cs2.c, sp2.c and cluster.c: a 4-ary n-tree of 8-port switches. Each machine's
 * init fills the parameters; the hooks below are the descriptors'. */
typedef struct cr_ftree_params {
    int max_nodes, default_nodes;
    int networks;         /* independent networks */
    cr_time switch_ps;    /* header and data latency per switch (fabric hop_ps and pipe_ps) */
    cr_time lat_ps;       /* a pure delay per switch added to the arrival (0: none) */
    uint64_t frag;        /* DMA / NIC: fragment (packet) bytes */
    uint64_t rate;        /* DMA / NIC: bytes/s */
    cr_time ack_ps;       /* DMA: per switch, for the last fragment's acknowledge (0: none) */
    int pipe;             /* SP2: the pipe layer and adapter instead of a DMA engine */
    cr_time copy_ps;      /* pipe: the processor's copy per byte */
    uint64_t adapter_bps; /* pipe: the adapter's DMA (0: none, the copy is PIO) */
} cr_ftree_params;

int cr_ftree_init(cr_net *net, const cr_ftree_params *p, char *err, size_t errlen);
void cr_ftree_fini(cr_net *net);
void cr_ftree_dma_wire(cr_net *net, cr_msg *m);  /* CS-2 Elan DMA, the cluster's NIC */
void cr_ftree_pipe_wire(cr_net *net, cr_msg *m); /* SP2 pipe layer and adapter */
int cr_ftree_bcast(cr_net *net, int root, int lo, int hi, uint64_t bytes,
                   void (*arrive)(cr_net *, int, cr_time, void *), void *ctx); /* CS-2 */
int cr_ftree_hops(cr_net *net, int a, int b);
int cr_ftree_route_links(cr_net *net, int s, int d, int32_t *links, int max);
void cr_ftree_stats(cr_net *net, cr_net_stats *st);
cr_fabric *cr_ftree_fabric(cr_net *net);
void cr_ftree_link_name(cr_net *net, int32_t link, char *buf, size_t len);

/* ------------------------------------------------------------------ validation (validate.c)
 * The helpers of the machines' validate hooks: each row runs a small experiment on a fresh
 * machine. */
typedef struct cr_valid_ctx cr_valid_ctx;
enum { CR_CMP_NEAR, CR_CMP_ATLEAST, CR_CMP_ATMOST };
void cr_valid_add(cr_valid_ctx *v, const char *what, const char *unit, double pub, double sim,
                  int cmp);
cr_net_config cr_valid_config(cr_machine_kind k, int nodes, const char *sw);
double cr_valid_echo_us(const cr_net_config *c, int a, int b, uint64_t bytes, int reps);
double cr_valid_bw_MBps(const cr_net_config *c, int a, int b, uint64_t bytes);
double cr_valid_exchange_MBps(const cr_net_config *c, uint64_t bytes);
double cr_valid_coll_us(const cr_net_config *c, cr_pattern p);

#endif
