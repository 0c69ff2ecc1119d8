/* courier network models: a discrete-event kernel and models of the interconnects of the
 * iPSC/2, Meiko CS-2, iWarp, IBM SP2 and GMD's TICNET, and of a modern cluster (see
 * docs/netsim.md).
 *
 * Layering inside src/net (nothing here depends on anything outside src/net):
 *   cr_sim       event queue in integer picoseconds, deterministic tie-breaking, seeded RNG
 *   cr_fabric    circuit / wormhole reservation of exclusive links (iPSC/2, CS-2, SP2)
 *   machines     one file each (ipsc2.c, ipsc1.c, cs2.c, iwarp.c, sp2.c, cluster.c, gmd.c): the
 *                descriptor (cr_machine) and the topology + flow control, the fat trees'
 *                shared in ftree.c; CR_MACHINES lists them
 *   cr_net       one simulated machine: nodes, CPUs, software model (protocol trips)
 *   traffic      synthetic patterns and measurements (used by `courier netsim` and tests)
 */
#ifndef COURIER_NET_H
#define COURIER_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ time and kernel */
typedef int64_t cr_time; /* picoseconds */
#define CR_NS ((cr_time)1000)
#define CR_US ((cr_time)1000000)
#define CR_MS ((cr_time)1000000000)
#define CR_SEC ((cr_time)1000000000000)
#define CR_TIME_NEVER INT64_MAX

typedef struct cr_sim cr_sim;
typedef void (*cr_event_fn)(cr_sim *sim, void *obj, uint64_t arg);

cr_sim *cr_sim_new(uint64_t seed);
void cr_sim_free(cr_sim *sim);
/* Schedule fn(obj, arg) at absolute time t (t >= now). Events at equal times run in the
 * order they were scheduled. */
void cr_sim_at(cr_sim *sim, cr_time t, cr_event_fn fn, void *obj, uint64_t arg);
void cr_sim_after(cr_sim *sim, cr_time dt, cr_event_fn fn, void *obj, uint64_t arg);
cr_time cr_sim_now(const cr_sim *sim);
/* Run until the queue is empty, cr_sim_stop() is called, or the next event is after until.
 * Returns the number of events run. */
uint64_t cr_sim_run(cr_sim *sim, cr_time until);
void cr_sim_stop(cr_sim *sim);
/* The time of the next event, or CR_TIME_NEVER when none is queued. */
cr_time cr_sim_next(const cr_sim *sim);
/* Move the clock on to t with no event run (none may be queued before t): an
 * outside driver (courier run --sim) injects work at its own times. */
void cr_sim_advance(cr_sim *sim, cr_time t);
uint64_t cr_sim_events(const cr_sim *sim);
size_t cr_sim_pending(const cr_sim *sim);
uint64_t cr_sim_rand(cr_sim *sim);                   /* xoshiro256** */
uint64_t cr_sim_rand_below(cr_sim *sim, uint64_t n); /* uniform in [0, n) */
/* Progress hook, called every `every` events (wall-clock reporting lives in the caller). */
void cr_sim_set_progress(cr_sim *sim, uint64_t every, void (*fn)(void *ctx, cr_time now),
                         void *ctx);
/* Time to move `bytes` at `bytes_per_sec`, rounded up to a whole picosecond. */
cr_time cr_xfer_time(uint64_t bytes, uint64_t bytes_per_sec);
/* Stateless 64-bit hash (route tables are computed, not stored). */
uint64_t cr_hash64(uint64_t x);

/* ------------------------------------------------------------------ machines
 * Every machine is one descriptor (cr_machine, below) in a file of its own in src/net, which
 * also holds its model code or calls its family's (ftree.c: the fat trees); CR_MACHINES lists
 * them, one line each: the enum, the table (cr_machine_get) and their order (netsim, --sim's
 * messages, the validation table) come from it. docs/sim.md, "Adding a machine". */
#define CR_MACHINES(X)                                                                             \
    X(CR_MACH_IPSC2, cr_machine_ipsc2) /* ipsc2.c: circuit-switched Direct-Connect hypercube */    \
    X(CR_MACH_IPSC1, cr_machine_ipsc1) /* ipsc1.c: store-and-forward hypercube (comparison) */     \
    X(CR_MACH_CS2, cr_machine_cs2)     /* cs2.c: Elan/Elite fat tree */                            \
    X(CR_MACH_IWARP, cr_machine_iwarp) /* iwarp.c: 2-D torus / mesh of iWarp cells */              \
    X(CR_MACH_SP2, cr_machine_sp2)     /* sp2.c: SP2 High-Performance Switch */                    \
    X(CR_MACH_CLUSTER, cr_machine_cluster) /* cluster.c: a modern fat tree, links as given */      \
    X(CR_MACH_GMD, cr_machine_gmd)         /* gmd.c: TICNET, PEACE with the comm. processor */

typedef enum {
#define CR_MACH_ENUM_(kind, desc) kind,
    CR_MACHINES(CR_MACH_ENUM_)
#undef CR_MACH_ENUM_
        CR_MACH_COUNT
} cr_machine_kind;

typedef enum {
    CR_ROUTE_DEFAULT = 0,
    CR_ROUTE_ECUBE,    /* hypercube: lowest differing dimension first (the hardware) */
    CR_ROUTE_ANYMIN,   /* hypercube: minimal, dimensions in random order (for the deadlock demo) */
    CR_ROUTE_RANDOM,   /* fat tree: one of the source's four table routes at random */
    CR_ROUTE_TOPSWITCH /* fat tree: all traffic for one destination via one top switch */
} cr_route_kind;

typedef struct cr_net_config {
    cr_machine_kind kind;
    int nodes; /* cs2, sp2 (and hypercubes as 2^dim) */
    int dim;   /* hypercubes */
    int mesh_x, mesh_y;
    int wrap; /* iwarp: 1 torus (default), 0 mesh */
    cr_route_kind route;
    int networks;      /* cs2: 1 or 2 independent networks (0: default 2) */
    int tokens;        /* sp2: end-to-end token flow control on (1) or off (0) */
    int pathways;      /* iwarp: messages over reserved pathways instead of the open pool */
    uint64_t link_bps; /* cluster: bytes/s of every link (0: CR_CLUSTER_LINK_BPS) */
    int64_t hop_ps;    /* cluster: latency of each switch traversed (0: CR_CLUSTER_HOP_PS) */
    const char *sw;    /* software model name, "hw" for none, NULL for the machine default */
    int detect_deadlock;
    uint64_t seed;
} cr_net_config;

/* Software model of a node: T_ipc = T_startup + T_trans (seed 004) with protocol trips. Each
 * machine lists its own (cr_machine.sw). */
typedef struct cr_swmodel {
    const char *name;
    const char *desc;
    cr_time o_send, o_recv; /* per-message CPU cost at the sender and at the receiver */
    cr_time copy_ps;        /* per byte copied at each end (eager messages) */
    int64_t eager_max;      /* larger messages use three trips (proxy, request, data); <0 never */
    cr_time ctl_ps;         /* OS cost of handling a control message at each end */
    uint32_t ctl_bytes;     /* wire size of proxy / request */
    uint32_t node_type;     /* sp2: 0 thin, 1 fat */
    bool hw_answer;         /* one-sided (courier run --sim's rma=): the network interface answers a
                               put or a get in hardware (the CS-2's Elan DMA), at no cost to the
                               target's processor */
} cr_swmodel;

typedef struct cr_net cr_net;
typedef struct cr_msg cr_msg;
typedef struct cr_net_stats cr_net_stats;
struct cr_fabric;
struct cr_valid_ctx;

/* One machine: what it is called, its node software, what courier run --sim needs of it, its
 * published figures, and its network model. Written with designated initializers in the
 * machine's own file; hooks left NULL mean "none" (or the default the comment names). */
typedef struct cr_machine {
    const char *name;     /* netsim --machine and run --sim name it so */
    const char *title;    /* what it is, and the seed paper */
    const cr_swmodel *sw; /* its node software models */
    size_t nsw;
    const char *sw_default; /* the model's default (cr_net_config.sw NULL); NULL: hardware only */

    /* courier run --sim (src/run/vsim.c, docs/sim.md) */
    bool sim;            /* offered (the iPSC/1 is for comparisons only) */
    const char *sim_sw;  /* the job's node software by default ("hw": none) */
    const char *sim_rma; /* one-sided traffic's by default, when sim_sw is not "hw" (NULL: the
                            job's model; the CS-2's Elan DMA beside its library) */
    double cpu;          /* compute: rough ratio of a 2020s x86 core's speed to the node's */
    bool chains;         /* carries a chain's messages as one (cr_msg.chain: iWarp's pathways) */
    /* the machine for n ranks (NULL: nodes = n, at least 2) */
    void (*sim_shape)(cr_net_config *c, int nranks);
    /* its own keys: their names for messages ("tokens"), what they are ("is the sp2's flow
     * control"), their help ("tokens=on|off"), and the check: 0 taken, 1 not its key, -1 bad
     * with err set */
    const char *sim_keys, *sim_keys_what, *sim_keys_help;
    int (*sim_key)(cr_net_config *c, const char *k, const char *v, char *err, size_t errlen);
    /* what the job's description says of the configuration beyond nodes and software */
    void (*sim_describe)(const cr_net_config *c, char *buf, size_t len);

    /* its rows of the validation table (validate.c, docs/validation.md) */
    void (*validate)(struct cr_valid_ctx *v);

    /* the network model (src/net only) */
    int (*init)(cr_net *net, char *err, size_t errlen); /* sets net->nodes and net->mach */
    void (*fini)(cr_net *net);
    void (*wire)(cr_net *net, cr_msg *m); /* move m->wbytes from m->wfrom to m->wto */
    int (*hops)(cr_net *net, int a, int b);
    int (*route_links)(cr_net *net, int s, int d, int32_t *links, int max); /* NULL: -1 */
    int (*bcast)(cr_net *net, int root, int lo, int hi, uint64_t bytes,     /* NULL: none */
                 void (*arrive)(cr_net *, int, cr_time, void *), void *ctx);
    void (*stats)(cr_net *net, cr_net_stats *st);
    uint64_t inject_bps;
    /* the machine's links, when they are a fabric's (else NULL), and a link's name */
    struct cr_fabric *(*fabric)(cr_net *net);
    void (*link_name)(cr_net *net, int32_t link, char *buf, size_t len);
} cr_machine;

#define CR_MACH_DECL_(kind, desc) extern const cr_machine desc;
CR_MACHINES(CR_MACH_DECL_)
#undef CR_MACH_DECL_

/* The descriptor of kind (NULL if none); the one named s (NULL if none). */
const cr_machine *cr_machine_get(cr_machine_kind kind);
const cr_machine *cr_machine_find(const char *s);
const cr_swmodel *cr_swmodel_find(cr_machine_kind kind, const char *name);
const cr_swmodel *cr_swmodel_default(cr_machine_kind kind);
const char *cr_machine_name(cr_machine_kind kind);
int cr_machine_parse(const char *s, cr_machine_kind *out);

typedef struct cr_net cr_net;

struct cr_msg {
    cr_net *net;
    int32_t src, dst;
    uint64_t bytes;
    cr_time t_create, t_done;
    uint64_t tag;  /* owner's use */
    int32_t stage; /* software-protocol stage */
    int32_t flags;
    int32_t wfrom, wto; /* the current wire trip */
    uint64_t wbytes;
    int64_t mstate[4]; /* machine-private counters for the current trip */
    uint64_t chain;    /* 0, or the chain it continues: one key per (source, chain) */
    struct cr_msg *next;
};

#define CR_MSG_BACKGROUND 1 /* traffic marks messages that are not part of a hot spot */
#define CR_MSG_ENDS_PAID 2  /* cr_net_send_wired: the end points' CPU costs are the caller's */
/* Chains: the messages of one chain (cr_msg.chain, from one source to one destination) are
 * one message of a model that has such channels (iWarp: a stream's words on its pathway, seed
 * 002), which stays open between them and is carried with no header of its own after the
 * first; the one marked CR_MSG_CHAIN_END closes it (its end marker). Other models carry them
 * as messages of their own. */
#define CR_MSG_CHAIN_END 4

/* Create a machine. On error returns NULL and writes a one-line reason into err. */
cr_net *cr_net_new(const cr_net_config *cfg, char *err, size_t errlen);
void cr_net_free(cr_net *net);
cr_sim *cr_net_sim(cr_net *net);
int cr_net_nodes(const cr_net *net);
int cr_net_hops(cr_net *net, int a, int b); /* network hops between nodes (channels / switches) */
uint64_t cr_net_inject_bps(const cr_net *net); /* nominal per-node injection bandwidth */
const cr_swmodel *cr_net_swmodel(const cr_net *net);
void cr_net_set_deliver(cr_net *net, void (*fn)(cr_net *, cr_msg *, void *), void *ctx);
cr_msg *cr_net_msg(cr_net *net, int src, int dst, uint64_t bytes); /* from the pool */
void cr_net_msg_free(cr_net *net, cr_msg *m);
/* Start sending m now: software model, then wire trips; the deliver hook runs on arrival. */
void cr_net_send(cr_net *net, cr_msg *m);
/* The same, but the end points' own CPU costs are the caller's (the simulated mode, where each
 * rank's clock counts them): the sender spent o_send (and the copy of an eager message) before
 * it calls this, and the receiver spends cr_net_recv_cost after the delivery hook. The message
 * enters the protocol's first wire trip now and is delivered when its data trip ends. Neither
 * node processor is taken for it (control messages' OS costs still are), so nothing but this
 * message's own trips can start before the wire does. */
void cr_net_send_wired(cr_net *net, cr_msg *m);
/* The receiving CPU's cost of a message of `bytes` under software model sw (o_recv and what
 * it copies). */
cr_time cr_net_recv_cost(const cr_swmodel *sw, uint64_t bytes);
/* CS-2 hardware broadcast of `bytes` from root to the contiguous range [lo, hi]; returns 0 if
 * the machine has none (cr_net_has_hw_broadcast says beforehand), else the nodes it will reach.
 * `arrive` runs for every node reached. */
bool cr_net_has_hw_broadcast(const cr_net *net);
/* Does the model carry a chain's messages as one (cr_msg.chain)? */
bool cr_net_has_chains(const cr_net *net);
int cr_net_hw_broadcast(cr_net *net, int root, int lo, int hi, uint64_t bytes,
                        void (*arrive)(cr_net *, int node, cr_time t, void *), void *ctx);

struct cr_net_stats {
    uint64_t wires;     /* worms / packets / trips put on the wire */
    uint64_t waits;     /* times a header found a link or channel busy */
    uint64_t deadlocks; /* wait-for cycles found (run stops at the first) */
    uint64_t max_link_users;
};
void cr_net_get_stats(const cr_net *net, cr_net_stats *st);

/* The links held longest (the busiest), busiest first: how long each was held by messages
 * (header to tail) and the bytes it carried, with a name saying where it is. Returns how many
 * were written (at most max; 0 for models whose links are not a fabric's: iWarp, iPSC/1). */
typedef struct cr_net_link_use {
    int32_t link;
    cr_time busy;
    uint64_t bytes;
    char name[64];
} cr_net_link_use;
int cr_net_busiest_links(cr_net *net, cr_net_link_use *out, int max);

/* Static route inspection (fat trees): the links the route of (src,dst) uses, for proving
 * permutations non-blocking. Returns the number of links written, or -1. */
int cr_net_route_links(cr_net *net, int src, int dst, int32_t *links, int max);

/* ------------------------------------------------------------------ traffic */
typedef enum {
    CR_PAT_ECHO = 0,
    CR_PAT_UNIFORM,
    CR_PAT_TRANSPOSE,
    CR_PAT_SHIFT,
    CR_PAT_BITREV,
    CR_PAT_HOTSPOT,
    CR_PAT_NEIGHBOUR,
    CR_PAT_ALLTOALL,
    CR_PAT_BROADCAST,
    CR_PAT_BARRIER,
    CR_PAT_EXCHANGE,
    CR_PAT_COUNT
} cr_pattern;

const char *cr_pattern_name(cr_pattern p);
int cr_pattern_parse(const char *s, cr_pattern *out);

typedef struct cr_traffic {
    cr_pattern pattern;
    uint64_t bytes;      /* message size */
    double load;         /* offered load, fraction of node injection bandwidth; 0 = saturate */
    int count;           /* messages per node (open/closed loop), rounds for collectives */
    int src, dst;        /* echo / exchange / broadcast root (-1: choose) */
    int shift;           /* shift distance */
    int hot;             /* hotspot node */
    double hot_frac;     /* hotspot: fraction of nodes that send only to the hot node */
    int window;          /* saturating sources: messages outstanding per node */
    uint64_t max_events; /* safety stop, 0 = none */
} cr_traffic;

typedef struct cr_net_result {
    uint64_t msgs, bytes;
    double lat_mean_us, lat_p50_us, lat_p95_us, lat_p99_us, lat_max_us;
    double thr_MBps;       /* delivered bytes / elapsed simulated time, whole machine */
    double node_MBps;      /* per node */
    double bg_lat_mean_us; /* hotspot: background traffic only */
    double bg_MBps;
    uint64_t bg_msgs;
    double elapsed_us; /* simulated */
    uint64_t events;
    uint64_t undelivered;
    int deadlock;
    cr_net_stats st;
} cr_net_result;

void cr_traffic_defaults(cr_traffic *t);
/* Run one traffic experiment on a fresh machine. Returns 0, or -1 with err set. */
int cr_net_run(const cr_net_config *cfg, const cr_traffic *t, cr_net_result *res,
               void (*progress)(void *ctx, double frac), void *pctx, char *err, size_t errlen);
/* Ping-pong between two nodes: one-way time (half the round trip) of `bytes`, in ps. */
cr_time cr_net_echo(const cr_net_config *cfg, int src, int dst, uint64_t bytes, int reps);
/* A node at exactly `hops` hops from node 0, or -1. */
int cr_net_node_at_hops(const cr_net_config *cfg, int hops);

/* ------------------------------------------------------------------ validation */
typedef struct cr_valid_row {
    char what[96];
    char unit[12];
    double published, simulated, err_pct;
    int ok;
} cr_valid_row;
/* Fill up to max rows comparing published figures with the simulator. Returns rows. */
int cr_net_validate(cr_valid_row *rows, int max);

#endif
