/* courier run --sim: the simulator. A thread of the launcher that reads what
 * the ranks send (their out rings in the simulated mode's segment,
 * src/host/vtime.h), times every message on a network model with its node
 * software model (src/net), and writes each into its receiver's in ring at
 * the virtual time the model delivers it.
 *
 * Conservative and deterministic, with a lookahead of the send overhead:
 *  - a rank that runs (or asks for a sync) has a clock c; a message it sends
 *    enters the network at c + look at the earliest, look being the least
 *    send overhead of the classes of messages it sends (vtime.h: the rank
 *    spends its send overhead first and stamps the message after it, and
 *    lowers its look only with a floor that keeps this true). The simulator
 *    handles the events of time t only once t < h, h (the horizon) being the
 *    least c + look, a whole time step at a time: first the model's events at
 *    t, then the messages entering the network at t (by rank, then in each
 *    rank's order), then what those started at t. The order of everything
 *    therefore depends on virtual times only;
 *  - a rank that blocks (waits for a message) holds nothing back; the first
 *    step that delivers to it wakes it just past that step's time, which is
 *    where it runs from: from then on it counts in h (also while the arrivals
 *    that woke it wait for room in its in ring). One pass of the loop handles
 *    every step below h and then answers every rank it woke, so that ranks
 *    whose messages arrive within a send overhead of each other run together;
 *  - done (in the segment) says every event at or before it is handled: a rank
 *    whose clock is c knows its in ring complete for arrivals before c once
 *    done >= c - 1 and nothing of its own is held back (in ring full);
 *  - when no rank runs, none waits for a sync, nothing is queued and some rank
 *    still waits for a message, the program is deadlocked: the simulator says
 *    so (cr_vsim_deadlocked) and stops;
 *  - when every rank has left, the launcher may stop the loop before its last
 *    passes: cr_vsim_finish then reads and handles what is left (finish_model),
 *    so that the report is the same run after run;
 *  - a rank answered while it sleeps goes on the wake queue; when the ranks
 *    are contexts of one process (cr_vsim_use_contexts), that process alone
 *    takes the queue, and the simulator rings it once per pass that queued;
 *  - with contexts a message's bytes stay in the ranks' process: its record
 *    carries the address of the sender's copy (src/transport/sim.c), and its
 *    total, which alone the model times, is the message's length. This
 *    thread passes such a record on as it is, never reading the address (one
 *    to a rank that has ended is dropped: its bytes stay allocated in the ranks'
 *    process until that process ends);
 *  - packets are recycled through spare lists by size (pkt_new, pkt_free),
 *    held in this struct: glibc's thread cache takes none over 1,032 bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../host/spares.h"
#include "../host/vtime.h"
#include "cr_net.h"
#include "json.h"
#include "vsim.h"

/* A message between its send and the receiver's in ring. */
typedef struct pkt {
    struct pkt *next; /* in a hold list, or its pair's list of early arrivals */
    int src, dst;
    int64_t t;      /* entered the network at; then arrived at */
    int64_t cost;   /* the receiving CPU's time for it */
    int cls;        /* its class of costs (CR_VT_CLASS_*) */
    uint64_t seq;   /* order of reading (ties of one rank's sends) */
    uint32_t order; /* its place among the messages from src to dst */
    cr_vt_bcast bc; /* its part in a hardware broadcast (bc.id 0: none) */
    bool free;      /* its receiver's CPU takes no time for it (a combined answer's, or a
                       hardware answer) */
    uint32_t ctl;   /* of len, the bytes of a hardware transaction's header (not timed) */
    bool chain_end; /* it ends its chain ... */
    uint32_t chain; /* ... the sender's chain it continues (0: none; cr_vt_chain_open) */
    unsigned char hdr[40];
    uint64_t len;   /* the message's length, which the model times */
    uint64_t carry; /* the bytes in data: len, or with contexts the sender's copy's address */
    uint64_t got;   /* of carry, read from the out ring; then written into the in ring */
    uint8_t kls;    /* its spare list (PKT_KINDS: none) */
    unsigned char data[];
} pkt;

/* Spare packets (../host/spares.h), by the room for data they have: 64 << k bytes
 * for list k < PKT_KINDS. A list keeps at most PKT_SPARE_BYTES of room; larger
 * packets are freed. */
#define PKT_KINDS 7
#define PKT_SPARE_BYTES ((size_t)4 << 20)

/* The messages in the model from one rank to another. The model may deliver a
 * later one first (a short message overtakes a long one whose protocol takes
 * more trips, or that a slower path carries), but the receiver must see a
 * pair's messages in the order they were sent (the non-overtaking rule of
 * MPI, MPL and NX/2, which the engine relies on): one that arrives before its
 * turn waits in early and goes on right behind the one it overtook. A pair is
 * in the table only while it has messages in the model. */
typedef struct flight {
    int32_t src, dst; /* src < 0: a free entry */
    uint32_t sent;    /* messages injected so far */
    uint32_t passed;  /* of them, passed on to the receiver */
    pkt *early;       /* arrived before their turn, by order */
} flight;

/* One message of a hardware broadcast in the model (the lead's, injected with
 * cr_net_hw_broadcast) and its copies, which wait here for their target's
 * arrival: they were stamped with the lead's time, and arrive no earlier. */
typedef struct wave {
    struct wave *next;
    struct cr_vsim *s;
    int src, ord;
    uint32_t grp;
    int left;  /* targets the model has yet to reach; answers: yet to come */
    pkt *pkts; /* the lead's and the copies not yet arrived; answers: those come */
} wave;

typedef struct vrank {
    uint8_t st;             /* enum cr_vt_state, as this thread last saw it */
    bool listed;            /* in the hold list */
    pkt *assembling;        /* an out message whose parts are still coming */
    pkt *hold, **hold_tail; /* arrivals that found no room in the in ring */
    int64_t block_c;        /* clock when it blocked */
    int64_t resume;         /* blocked and woken: where it runs again from (-1: not woken) */
} vrank;

struct cr_vsim {
    int n, fd;
    void *base;
    size_t len;
    cr_vt_head *hd;
    cr_vt_waiter waiter; /* the simulator thread's yields while it waits (vtime.h) */
    cr_net *net;
    cr_sim *sim;
    char desc[256];
    const char *machine;
    vrank *r;
    int *active, nactive; /* the ranks in RUN or SYNC */
    int *held, nheld;     /* ranks with a hold list */
    int *woke, nwoke;     /* blocked ranks with an arrival: answered once done >= resume - 1
                             and their arrivals are all in the in ring */
    int64_t h; /* the horizon: the least clock + look of the ranks that run (or were woken):
                  events before it may be handled */
    const cr_swmodel *sw[CR_VT_CLASSES]; /* each class's node software (NULL: none) */
    pkt **heap;                          /* sends not yet injected, by (t, src, seq) */
    size_t nheap, capheap;
    flight *fl; /* pairs with messages in the model: open addressing, capfl a power of 2 */
    size_t nfl, capfl;
    wave *waves;   /* hardware broadcasts in the model */
    wave *answers; /* broadcasts whose targets' answers are coming, to be combined */
    uint64_t seq;
    int ndone;
    pthread_t th;
    bool started;
    _Atomic int stop;
    _Atomic int deadlock;
    _Atomic int gone; /* ranks the launcher saw end (cr_vsim_rank_gone) */
    int gone_seen;
    int stall_rank;      /* the one rank that ran at the last progress line (-1: none) */
    int64_t stall_clock; /* its clock then */
    bool stall_said;
    bool ring_host; /* with contexts: ranks queued since their process was rung */
    int ranks;      /* CR_VSIM_RANKS_*, from the options */
    /* the shared= key: the programs' allocations this large share their pages */
    uint64_t shared;
    bool byref; /* contexts: records carry the address of the message's bytes */
    cr_spares spare;
};

/* ---- options ------------------------------------------------------------- */

/* The keys every machine takes are here; the machine's own defaults (software,
 * one-sided software, cpu ratio, shape), keys and description are its
 * descriptor's (cr_machine, src/net), so that a new machine needs nothing here. */

/* What one read of a timer costs a rank (timer=NS): about a clock read today. */
#define CR_VSIM_TIMER_NS 25

typedef struct vsim_opts {
    cr_net_config cfg;
    double cpu;     /* -1: the machine's default */
    double poll_us; /* -1: default */
    double timer_ns;
    const cr_machine *m;
    char sw[32];                /* the job's software model (cfg.sw points here) */
    int ranks;                  /* CR_VSIM_RANKS_* */
    uint64_t shared;            /* shared=BYTES (0: none) */
    const cr_swmodel *onesided; /* the one-sided class's software model (NULL: hw) */
} vsim_opts;

/* Append to buf (of len, holding a string) what fmt says, as far as it goes. */
static void add(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t len, const char *fmt, ...)
{
    size_t at = strlen(buf);
    if (at + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
}

/* The machines --sim offers (cr_machine.sim), in CR_MACHINES's order. */
static const cr_machine *sim_machine(int i)
{
    const cr_machine *m = cr_machine_get((cr_machine_kind)i);
    return m && m->sim ? m : NULL;
}

void cr_vsim_machines(char *buf, size_t len, const char *conj)
{
    int n = 0, k = 0;
    for (int i = 0; i < CR_MACH_COUNT; i++) n += sim_machine(i) != NULL;
    if (len) buf[0] = '\0';
    for (int i = 0; i < CR_MACH_COUNT; i++)
        if (sim_machine(i))
            add(buf, len, "%s%s", k++ == 0 ? "" : k == n ? conj : ", ", sim_machine(i)->name);
}

/* Whether k is one of list's names ("bw, lat"). */
static bool in_list(const char *list, const char *k)
{
    size_t n = strlen(k);
    if (!n) return false; /* "" is in every string: strstr would not move on */
    for (const char *p = list; (p = strstr(p, k)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ',')) return true;
    return false;
}

/* The keys, for messages: "cpu, sw, ...; sp2: tokens; cluster: bw, lat". */
static void key_names(char *buf, size_t len)
{
    snprintf(buf, len, "cpu, sw, rma, seed, poll, timer, ranks, shared");
    for (int i = 0; i < CR_MACH_COUNT; i++)
        if (sim_machine(i) && sim_machine(i)->sim_keys)
            add(buf, len, "; %s: %s", sim_machine(i)->name, sim_machine(i)->sim_keys);
}

/* Print words (split at spaces) from column `at`, wrapping before column 87 to column 20. */
static int wrap(FILE *f, int at, const char *words)
{
    for (const char *w = words; *w;) {
        const char *e = strchr(w, ' ');
        int n = e ? (int)(e - w) : (int)strlen(w);
        if (at > 20 && at + 1 + n > 86) {
            fprintf(f, "\n%20s", "");
            at = 20;
        } else if (at > 20) {
            fputc(' ', f);
            at++;
        }
        fprintf(f, "%.*s", n, w);
        at += n;
        w += n + (e != NULL);
    }
    return at;
}

void cr_vsim_usage(FILE *f)
{
    char machines[200], words[600];
    cr_vsim_machines(machines, sizeof machines, " or ");
    snprintf(words, sizeof words,
             "run the programs in virtual time on a model of %s; keys: cpu=F (compute times F; 0: "
             "not counted), sw=NAME (node software model), rma=NAME (one-sided traffic's), "
             "seed=N, poll=US, timer=NS, ranks=auto|processes|contexts, shared=BYTES (the "
             "program's allocations this large share their pages: a benchmark's buffers)",
             machines);
    fprintf(f, "  --sim MACHINE     ");
    wrap(f, 20, words);
    fprintf(f, "\n%20s", "");
    int at = wrap(f, 20, "(contexts of one process where the program allows)");
    for (int i = 0; i < CR_MACH_COUNT; i++) {
        const cr_machine *m = sim_machine(i);
        if (!m || !m->sim_keys_help) continue;
        fprintf(f, ";\n%20s", "");
        snprintf(words, sizeof words, "%s: %s", m->name, m->sim_keys_help);
        at = wrap(f, 20, words);
    }
    if (at + 14 > 86) fprintf(f, "\n%19s", "");
    fprintf(f, " (docs/sim.md)\n");
}

/* A software model of machine m by name ("hw": none, into *out NULL): 0, or -1 with err set
 * (naming the machine's models). */
static int find_sw(const cr_machine *m, cr_machine_kind kind, const char *key, const char *v,
                   const cr_swmodel **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!strcmp(v, "hw") || (*out = cr_swmodel_find(kind, v))) return 0;
    char names[200] = "";
    for (size_t i = 0; i < m->nsw; i++)
        add(names, sizeof names, "%s%s", i ? ", " : "", m->sw[i].name);
    if (m->nsw)
        snprintf(err, errlen, "--sim: %s has no software model '%s' (its models: %s; hw: none)",
                 m->name, v, names);
    else
        snprintf(err, errlen, "--sim: %s has no software model '%s' (it has none: %s=hw)", m->name,
                 v, key);
    return -1;
}

static int parse_opts(const char *spec, int n, vsim_opts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->cpu = o->poll_us = -1;
    o->timer_ns = CR_VSIM_TIMER_NS;
    o->cfg.seed = 1;
    o->cfg.tokens = 1;
    char buf[256], names[200], keys[200];
    if (!spec || !*spec || strlen(spec) >= sizeof buf) {
        cr_vsim_machines(names, sizeof names, " or ");
        return snprintf(err, errlen, "--sim needs a machine: %s (e.g. --sim sp2,cpu=0)", names), -1;
    }
    strcpy(buf, spec);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    const cr_machine *m = tok ? cr_machine_find(tok) : NULL;
    if (!m || !m->sim || cr_machine_parse(tok, &o->cfg.kind)) {
        cr_vsim_machines(names, sizeof names, " and ");
        return snprintf(err, errlen, "--sim %s: the machines are %s", spec, names), -1;
    }
    o->m = m;
    const char *sw = NULL, *rma = NULL; /* as given (in buf) */
    while ((tok = strtok_r(NULL, ",", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            key_names(keys, sizeof keys);
            return snprintf(err, errlen, "--sim: '%s' is not key=value (%s)", tok, keys), -1;
        }
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        char *end;
        if (!strcmp(k, "cpu") || !strcmp(k, "poll") || !strcmp(k, "timer")) {
            double x = strtod(v, &end);
            if (*end || !*v || !(x >= 0) || x > 1e9)
                return snprintf(err, errlen, "--sim: %s=%s must be a number >= 0", k, v), -1;
            *(k[0] == 'c' ? &o->cpu : k[0] == 'p' ? &o->poll_us : &o->timer_ns) = x;
        } else if (!strcmp(k, "ranks")) {
            if (!strcmp(v, "auto"))
                o->ranks = CR_VSIM_RANKS_AUTO;
            else if (!strcmp(v, "processes"))
                o->ranks = CR_VSIM_RANKS_PROCESSES;
            else if (!strcmp(v, "contexts"))
                o->ranks = CR_VSIM_RANKS_CONTEXTS;
            else
                return snprintf(err, errlen, "--sim: ranks=%s must be auto, processes or contexts",
                                v),
                       -1;
        } else if (!strcmp(k, "shared")) {
            unsigned long long x = strtoull(v, &end, 10);
            int shift = *end == 'k' || *end == 'K'   ? 10
                        : *end == 'm' || *end == 'M' ? 20
                        : *end == 'g' || *end == 'G' ? 30
                                                     : 0;
            if (shift) end++;
            if (*end || !*v || *v == '-' || !x || x > (1ull << 40) >> shift)
                return snprintf(err, errlen,
                                "--sim: shared=%s must be a size in bytes (K, M or G after it: "
                                "shared=1M), the least allocation whose pages are shared",
                                v),
                       -1;
            o->shared = x << shift;
        } else if (!strcmp(k, "seed")) {
            unsigned long long x = strtoull(v, &end, 10);
            if (*end || !*v) return snprintf(err, errlen, "--sim: seed=%s is not a number", v), -1;
            o->cfg.seed = x ? x : 1;
        } else if (!strcmp(k, "sw") || !strcmp(k, "rma")) {
            const cr_swmodel *found;
            if (find_sw(m, o->cfg.kind, k, v, &found, err, errlen)) return -1;
            *(k[0] == 's' ? &sw : &rma) = v;
        } else {
            int rc = m->sim_key ? m->sim_key(&o->cfg, k, v, err, errlen) : 1;
            if (rc < 0) return -1;
            if (rc == 0) continue;
            for (int i = 0; i < CR_MACH_COUNT; i++) { /* another machine's key */
                const cr_machine *other = sim_machine(i);
                if (other && other->sim_keys && in_list(other->sim_keys, k))
                    return snprintf(err, errlen, "--sim: %s= %s; %s has no such key", k,
                                    other->sim_keys_what, m->name),
                           -1;
            }
            key_names(keys, sizeof keys);
            return snprintf(err, errlen, "--sim: unknown key '%s' (%s)", k, keys), -1;
        }
    }
    cr_net_config *c = &o->cfg;
    if (m->sim_shape)
        m->sim_shape(c, n);
    else
        c->nodes = n < 2 ? 2 : n;
    /* the job's software; one-sided traffic's (the machine's own beside a library, when it
     * has such hardware; else the job's) */
    if (!sw) sw = m->sim_sw;
    if (!rma) rma = m->sim_rma && strcmp(sw, "hw") ? m->sim_rma : sw;
    snprintf(o->sw, sizeof o->sw, "%s", sw);
    c->sw = o->sw;
    /* the model carries every message by the job's model's protocol: the
     * one-sided one may change the costs at the ends, not the trips */
    const cr_swmodel *a = cr_swmodel_find(c->kind, sw), *b = cr_swmodel_find(c->kind, rma);
    int64_t ea = a ? a->eager_max : -1, eb = b ? b->eager_max : -1;
    if (ea != eb || (a ? a->ctl_ps : 0) != (b ? b->ctl_ps : 0))
        return snprintf(err, errlen,
                        "--sim: rma=%s sends long messages otherwise than sw=%s (eager limit, "
                        "control trips); the model carries every message by the job's model: "
                        "choose models of one protocol",
                        rma, sw),
               -1;
    o->onesided = b;
    if (o->cpu < 0) o->cpu = m->cpu;
    return 0;
}

int cr_vsim_check(const char *spec, int nranks, char *err, size_t errlen)
{
    vsim_opts o;
    if (parse_opts(spec, nranks, &o, err, errlen)) return -1;
    cr_net *net = cr_net_new(&o.cfg, err, errlen);
    if (!net) {
        char why[200];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "--sim %s with %d ranks: %s", spec, nranks, why);
        return -1;
    }
    cr_net_free(net);
    return 0;
}

/* ---- packets ---------------------------------------------------------------- */

static pkt *pkt_new(cr_vsim *s, uint64_t carry)
{
    unsigned k;
    pkt *p = cr_spares_get(&s->spare, sizeof *p, carry, &k);
    if (!p) abort();
    p->kls = (uint8_t)k;
    return p;
}

static void pkt_free(cr_vsim *s, pkt *p)
{
    cr_spares_put(&s->spare, p, p->kls);
}

/* ---- the pending sends: a heap by (t, src, seq) ---------------------------- */

static bool pkt_before(const pkt *a, const pkt *b)
{
    if (a->t != b->t) return a->t < b->t;
    if (a->src != b->src) return a->src < b->src;
    return a->seq < b->seq;
}

static void heap_push(cr_vsim *s, pkt *p)
{
    if (s->nheap == s->capheap) {
        s->capheap = s->capheap ? 2 * s->capheap : 1024;
        s->heap = realloc(s->heap, s->capheap * sizeof *s->heap);
        if (!s->heap) abort();
    }
    size_t i = s->nheap++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!pkt_before(p, s->heap[up])) break;
        s->heap[i] = s->heap[up];
        i = up;
    }
    s->heap[i] = p;
}

static pkt *heap_pop(cr_vsim *s)
{
    pkt *top = s->heap[0], *last = s->heap[--s->nheap];
    size_t i = 0, n = s->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && pkt_before(s->heap[c + 1], s->heap[c])) c++;
        if (!pkt_before(s->heap[c], last)) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (n) s->heap[i] = last;
    return top;
}

/* ---- pairs in flight: their order ------------------------------------------- */

static size_t fl_home(const cr_vsim *s, int src, int dst)
{
    uint64_t k = ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst) * 0x9e3779b97f4a7c15ull;
    return (size_t)(k >> 32) & (s->capfl - 1);
}

/* The pair's entry; with make, a new one when it has none (else NULL). */
static flight *fl_find(cr_vsim *s, int src, int dst, bool make)
{
    if (make && 2 * (s->nfl + 1) > s->capfl) { /* grow: at most half full */
        size_t cap = s->capfl ? 2 * s->capfl : 1024;
        flight *old = s->fl, *nt = malloc(cap * sizeof *nt);
        if (!nt) abort();
        for (size_t i = 0; i < cap; i++) nt[i].src = -1;
        size_t oldcap = s->capfl;
        s->fl = nt;
        s->capfl = cap;
        for (size_t i = 0; i < oldcap; i++) {
            if (old[i].src < 0) continue;
            size_t j = fl_home(s, old[i].src, old[i].dst);
            while (nt[j].src >= 0) j = (j + 1) & (cap - 1);
            nt[j] = old[i];
        }
        free(old);
    }
    if (!s->capfl) return NULL;
    for (size_t i = fl_home(s, src, dst);; i = (i + 1) & (s->capfl - 1)) {
        flight *f = &s->fl[i];
        if (f->src == src && f->dst == dst) return f;
        if (f->src < 0) {
            if (!make) return NULL;
            *f = (flight){.src = src, .dst = dst};
            s->nfl++;
            return f;
        }
    }
}

/* The pair has nothing in the model any more: take its entry out (shifting
 * the entries after it back, so that every lookup still finds its own). */
static void fl_drop(cr_vsim *s, flight *f)
{
    size_t mask = s->capfl - 1, i = (size_t)(f - s->fl), j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (s->fl[j].src < 0) break;
        size_t home = fl_home(s, s->fl[j].src, s->fl[j].dst);
        /* j's entry may move to i when its home is not in (i, j] */
        if ((i < j) ? (home <= i || home > j) : (home <= i && home > j)) {
            s->fl[i] = s->fl[j];
            i = j;
        }
    }
    s->fl[i].src = -1;
    s->nfl--;
}

/* ---- the rings -------------------------------------------------------------- */

static cr_vt_slot *slot(cr_vsim *s, int r)
{
    return cr_vt_slot_of(s->base, r);
}

/* Rank r from clock c on: nothing it sends enters the network before c plus
 * its look (read after c: a clock the rank stored after lowering its look
 * comes with the lower one). */
static int64_t bound(cr_vsim *s, int r, int64_t c)
{
    int64_t look = atomic_load_explicit(&slot(s, r)->look, memory_order_acquire);
    return c >= CR_VT_NEVER - look ? CR_VT_NEVER : c + look;
}

/* A rank that sleeps goes on the wake queue: the system call is left to
 * whoever is idle (vtime.h), the simulator itself only between passes. */
static void wake_rank(cr_vsim *s, int r)
{
    cr_vt_slot *sl = slot(s, r);
    atomic_fetch_add_explicit(&sl->wake, 1, memory_order_seq_cst);
    if (!atomic_load_explicit(&sl->sleeping, memory_order_seq_cst)) return;
    if (s->hd->contexts) { /* their process takes the queue; rung at the pass's end */
        if (!cr_vt_wq_push(s->base, r)) atomic_store(&s->hd->wq_lost, 1);
        s->ring_host = true;
    } else if (!cr_vt_wq_push(s->base, r)) {
        cr_vt_wake_slot(sl);
    }
}

/* Read rank r's out ring: every whole message goes on the heap. */
static bool drain_out(cr_vsim *s, int r)
{
    cr_vt_ring *q = cr_vt_ring_of(s->base, r, 0);
    uint64_t cap = s->hd->ring_bytes;
    vrank *v = &s->r[r];
    bool any = false;
    cr_vt_rec *rec;
    while ((rec = cr_vt_ring_peek(q, cap))) {
        any = true;
        if (rec->kind == CR_VT_REC_MSG) {
            if (rec->peer < 0 || rec->peer >= s->n || rec->peer == r || rec->total > (1u << 30) ||
                rec->cls >= CR_VT_CLASSES)
                abort(); /* the rings are ours: a bad record is a bug, not input */
            if (rec->t <= atomic_load_explicit(&s->hd->done, memory_order_relaxed)) {
                /* the lookahead's promise broken: a bug, and the run would not repeat */
                fprintf(stderr,
                        "courier: simulator: rank %d sent a message at %lld ps, which is "
                        "already handled; please report this\n",
                        r, (long long)rec->t);
                abort();
            }
            uint64_t carry = s->byref ? sizeof(void *) : rec->total;
            if (s->byref && rec->part != carry) abort();
            pkt *p = pkt_new(s, carry);
            p->next = NULL;
            p->src = r;
            p->dst = rec->peer;
            p->cls = rec->cls;
            p->t = rec->t;
            p->bc = rec->bc;
            p->chain = rec->chain;
            p->chain_end = rec->flags & CR_VT_REC_F_CHAIN_END;
            p->free = rec->flags & CR_VT_REC_F_HW; /* the Elan takes it */
            p->ctl = rec->ctl;
            int end = p->bc.part == CR_VT_GRP_ANSWER ? p->src : p->dst; /* a target */
            if (p->bc.id &&
                (p->bc.lo < 0 || p->bc.hi >= s->n || p->bc.lo > p->bc.hi || end < p->bc.lo ||
                 end > p->bc.hi || p->bc.ord >= CR_VT_GROUP_MSGS || p->bc.part > CR_VT_GRP_ANSWER))
                abort();
            p->seq = s->seq++;
            memcpy(p->hdr, rec->hdr, sizeof p->hdr);
            p->len = rec->total;
            p->carry = carry;
            p->got = 0;
            v->assembling = p;
        }
        pkt *p = v->assembling;
        if (!p || p->got + rec->part > p->carry) abort();
        memcpy(p->data + p->got, rec->data, rec->part);
        p->got += rec->part;
        cr_vt_ring_take(q, rec);
        if (p->got == p->carry) {
            v->assembling = NULL;
            heap_push(s, p);
        }
    }
    return any;
}

/* Write what is left of p into its receiver's in ring, as far as there is
 * room (a long message goes in parts as the receiver drains): true once all
 * of it is written. p->got counts what is written (of carry: with contexts, the
 * address of the message's bytes in one record, total still its length). */
static bool write_in(cr_vsim *s, pkt *p)
{
    cr_vt_ring *q = cr_vt_ring_of(s->base, p->dst, 1);
    uint64_t cap = s->hd->ring_bytes, part_max = cr_vt_part_max(cap);
    do {
        uint64_t part = p->carry - p->got < part_max ? p->carry - p->got : part_max;
        cr_vt_rec *r = cr_vt_ring_reserve(q, cap, cr_vt_rec_size(part));
        if (!r) return false;
        r->bytes = cr_vt_rec_size(part);
        r->kind = p->got ? CR_VT_REC_MORE : CR_VT_REC_MSG;
        r->peer = p->src;
        r->part = (uint32_t)part;
        r->t = p->t;
        r->cost = p->cost;
        r->total = p->len;
        memcpy(r->hdr, p->hdr, sizeof r->hdr);
        if (part) memcpy(r->data, p->data + p->got, part);
        cr_vt_ring_put(q, r);
        p->got += part;
    } while (p->got < p->carry);
    return true;
}

static void hold(cr_vsim *s, pkt *p)
{
    vrank *v = &s->r[p->dst];
    if (!v->hold) {
        v->hold_tail = &v->hold;
        atomic_store_explicit(&slot(s, p->dst)->held_from, p->t, memory_order_release);
        if (!v->listed) {
            v->listed = true;
            s->held[s->nheld++] = p->dst;
        }
        atomic_store(&slot(s, p->dst)->need_room, 1);
    }
    p->next = NULL;
    *v->hold_tail = p;
    v->hold_tail = &p->next;
}

/* Blocked rank r's first arrival since it last knew its in ring whole is at
 * t: it runs again from the later of t + 1 and its clock (once the in ring is
 * whole up to there), and the horizon comes back to that. */
static void woken(cr_vsim *s, int r, int64_t t)
{
    vrank *v = &s->r[r];
    v->resume = t + 1 > v->block_c ? t + 1 : v->block_c;
    s->woke[s->nwoke++] = r;
    int64_t b = bound(s, r, v->resume);
    if (b < s->h) s->h = b;
}

/* p arrives now, in its pair's order: into the receiver's in ring (or its
 * hold list). */
static void arrive(cr_vsim *s, pkt *p)
{
    p->t = cr_sim_now(s->sim);
    p->cost = p->free ? 0 : cr_net_recv_cost(s->sw[p->cls], p->len);
    p->got = 0; /* from here: how much of it is in the in ring */
    vrank *v = &s->r[p->dst];
    if (v->st == CR_VT_DONE) {
        pkt_free(s, p);
        return;
    }
    if (v->st == CR_VT_BLOCK && v->resume < 0) woken(s, p->dst, p->t);
    if (v->hold || !write_in(s, p))
        hold(s, p);
    else
        pkt_free(s, p);
}

/* The model delivered p: it arrives now if its pair's earlier messages have,
 * and then so do the later ones that came before it. */
static void delivered(cr_vsim *s, pkt *p)
{
    flight *f = fl_find(s, p->src, p->dst, false);
    if (!f) abort();             /* injected, so in the table */
    if (p->order != f->passed) { /* overtook an earlier one: wait for it */
        pkt **pp = &f->early;
        while (*pp && (*pp)->order < p->order) pp = &(*pp)->next;
        p->next = *pp;
        *pp = p;
        return;
    }
    arrive(s, p);
    f->passed++;
    while (f->early && f->early->order == f->passed) {
        pkt *q = f->early;
        f->early = q->next;
        arrive(s, q);
        f->passed++;
    }
    if (f->passed == f->sent) fl_drop(s, f);
}

static void on_deliver(cr_net *net, cr_msg *m, void *ctx)
{
    pkt *p = (pkt *)(uintptr_t)m->tag;
    cr_net_msg_free(net, m);
    delivered(ctx, p);
}

/* The broadcast reached node d: its message there (the lead's or a copy)
 * arrives. Once every target is reached the wave is done; a copy whose
 * target it did not reach (none should be) arrives with the last. */
static void wave_arrive(cr_net *net, int d, cr_time t, void *ctx)
{
    (void)net;
    (void)t;
    wave *w = ctx;
    cr_vsim *s = w->s;
    for (pkt **pp = &w->pkts; *pp; pp = &(*pp)->next)
        if ((*pp)->dst == d) {
            pkt *p = *pp;
            *pp = p->next;
            delivered(s, p);
            break;
        }
    if (--w->left > 0) return;
    while (w->pkts) {
        pkt *p = w->pkts;
        w->pkts = p->next;
        delivered(s, p);
    }
    wave **pp = &s->waves;
    while (*pp != w) pp = &(*pp)->next;
    *pp = w->next;
    free(w);
}

/* The combined answer reached the root (the first node the model's broadcast
 * timing reaches: the return path is as long as the way out): every target's
 * answer arrives, the root's CPU taking the time of one. */
static void answers_back(cr_net *net, int d, cr_time t, void *ctx)
{
    (void)net;
    (void)d;
    (void)t;
    wave *w = ctx;
    while (w->pkts) {
        pkt *p = w->pkts;
        w->pkts = p->next;
        /* the last one delivered costs the root its receive (unless hardware's) */
        p->free = p->free || w->pkts != NULL;
        delivered(w->s, p);
    }
    if (--w->left == 0) free(w);
}

/* A target's answer to a broadcast's message: held until every target's has
 * come, then they go back together. */
static bool join_answers(cr_vsim *s, pkt *p)
{
    wave **pp = &s->answers;
    while (*pp && !((*pp)->src == p->dst && (*pp)->grp == p->bc.id)) pp = &(*pp)->next;
    wave *w = *pp;
    if (!w) {
        if (!(w = calloc(1, sizeof *w))) abort();
        *w = (wave){.s = s, .src = p->dst, .grp = p->bc.id};
        w->left = p->bc.hi - p->bc.lo + 1 - (p->dst >= p->bc.lo && p->dst <= p->bc.hi);
        w->next = s->answers;
        s->answers = w;
        pp = &s->answers;
    }
    p->next = w->pkts;
    w->pkts = p;
    if (--w->left > 0) return true;
    *pp = w->next;
    w->left = cr_net_hw_broadcast(s->net, w->src, p->bc.lo, p->bc.hi, 0, answers_back, w);
    if (w->left <= 0) { /* no hardware broadcast after all: they arrive as they are */
        w->left = 1;
        answers_back(s->net, w->src, cr_sim_now(s->sim), w);
    }
    return true;
}

/* A hardware broadcast's message enters the model: the lead's starts the
 * broadcast, a copy waits for it. False where the machine has none, or the
 * lead's did not start one: then it travels as any other message. */
static bool join_wave(cr_vsim *s, pkt *p)
{
    if (p->bc.part == CR_VT_GRP_ANSWER) return join_answers(s, p);
    if (p->bc.part == CR_VT_GRP_COPY) {
        for (wave *w = s->waves; w; w = w->next)
            if (w->src == p->src && w->grp == p->bc.id && w->ord == p->bc.ord) {
                p->next = w->pkts;
                w->pkts = p;
                return true;
            }
        return false;
    }
    wave *w = calloc(1, sizeof *w);
    if (!w) abort();
    *w = (wave){.s = s, .src = p->src, .ord = p->bc.ord, .grp = p->bc.id, .pkts = p};
    p->next = NULL;
    w->left = cr_net_hw_broadcast(s->net, p->src, p->bc.lo, p->bc.hi, p->len, wave_arrive, w);
    if (w->left <= 0) {
        free(w);
        return false;
    }
    w->next = s->waves;
    s->waves = w;
    return true;
}

static void answer_block(cr_vsim *s, int r)
{
    vrank *v = &s->r[r];
    cr_vt_slot *sl = slot(s, r);
    int64_t c = v->resume;
    atomic_store_explicit(&sl->clock, c, memory_order_relaxed); /* where it resumes */
    atomic_store_explicit(&sl->state, CR_VT_RUN, memory_order_release);
    v->st = CR_VT_RUN;
    v->resume = -1;
    s->active[s->nactive++] = r;
    int64_t b = bound(s, r, c);
    if (b < s->h) s->h = b; /* it runs from c: the horizon comes back to it */
    wake_rank(s, r);
}

/* Hold lists into rings where there is room now. */
static bool flush_holds(cr_vsim *s)
{
    bool moved = false;
    for (int i = 0; i < s->nheld;) {
        int r = s->held[i];
        vrank *v = &s->r[r];
        while (v->hold && (v->st == CR_VT_DONE || write_in(s, v->hold))) {
            pkt *p = v->hold;
            v->hold = p->next;
            pkt_free(s, p);
            moved = true;
            if (v->hold)
                atomic_store_explicit(&slot(s, r)->held_from, v->hold->t, memory_order_release);
        }
        if (v->hold) {
            atomic_store(&slot(s, r)->need_room, 1); /* tell us when there is room */
            wake_rank(s, r);                         /* it drains as it waits */
            i++;
            continue;
        }
        atomic_store_explicit(&slot(s, r)->held_from, CR_VT_NEVER, memory_order_release);
        v->listed = false;
        s->held[i] = s->held[--s->nheld];
    }
    return moved;
}

/* A rank that has just blocked at its clock c may already have its next
 * arrival: the lookahead delivers ahead of running ranks. Its time, or NEVER.
 * What the rank read of its in ring had none after c but what it says; the
 * first message written after what it read is the next (the ring is in the
 * order of arrival), else the first one held back. */
static int64_t pending_arrival(cr_vsim *s, int r)
{
    cr_vt_slot *sl = slot(s, r);
    int64_t next = atomic_load_explicit(&sl->block_next, memory_order_relaxed);
    cr_vt_ring *q = cr_vt_ring_of(s->base, r, 1);
    uint64_t cap = s->hd->ring_bytes,
             pos = atomic_load_explicit(&sl->block_head, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed); /* ours */
    /* the rank drains nothing until it sees this, so nothing after pos was
     * consumed, and we cannot have written over it */
    while (next == CR_VT_NEVER && pos < head) {
        const cr_vt_rec *rec = (const cr_vt_rec *)(q->data + pos % cap);
        if (rec->kind == CR_VT_REC_MSG)
            next = rec->t;
        else if (rec->kind != CR_VT_REC_PAD)
            abort(); /* the rank said it had no part of it */
        pos += rec->bytes;
    }
    if (next == CR_VT_NEVER && s->r[r].hold) next = s->r[r].hold->t;
    atomic_store_explicit(&sl->block_head, CR_VT_SEEN, memory_order_release);
    return next;
}

/* Ranks that ended while blocked (killed, or a crash in a handler) are in no
 * list the loop scans: count them out, and forget their pending answers. */
static void count_gone(cr_vsim *s)
{
    int gone = atomic_load(&s->gone);
    if (gone == s->gone_seen) return;
    s->gone_seen = gone;
    for (int r = 0; r < s->n; r++) {
        vrank *v = &s->r[r];
        if (v->st != CR_VT_BLOCK ||
            atomic_load_explicit(&slot(s, r)->state, memory_order_acquire) != CR_VT_DONE)
            continue;
        v->st = CR_VT_DONE;
        s->ndone++;
        for (int i = 0; i < s->nwoke; i++)
            if (s->woke[i] == r) s->woke[i--] = s->woke[--s->nwoke];
    }
}

/* ---- the loop -------------------------------------------------------------- */

static void inject(cr_vsim *s, pkt *p)
{
    p->order = fl_find(s, p->src, p->dst, true)->sent++;
    if (p->bc.id && join_wave(s, p)) return;
    cr_msg *m = cr_net_msg(s->net, p->src, p->dst, p->len - (p->ctl < p->len ? p->ctl : p->len));
    m->tag = (uint64_t)(uintptr_t)p;
    if (p->chain) {
        m->chain = (uint64_t)p->src << 32 | p->chain;
        if (p->chain_end) m->flags |= CR_MSG_CHAIN_END;
    }
    cr_net_send_wired(s->net, m); /* the rank's clock paid for its send overhead */
}

/* Handle time step t: the model's events at t, the messages entering the
 * network at t, and what they start at t. */
static void step(cr_vsim *s, int64_t t)
{
    cr_sim_run(s->sim, t);
    if (s->nheap && s->heap[0]->t == t) {
        cr_sim_advance(s->sim, t);
        while (s->nheap && s->heap[0]->t == t) inject(s, heap_pop(s));
        cr_sim_run(s->sim, t);
    }
}

/* Nothing to do until a rank moves: look again for a while, handing the CPU
 * to whoever wants it (a rank about to answer may share ours), then sleep. */
#define BELL_YIELD_NS 200000
typedef struct bell_look {
    cr_vsim *s;
    uint32_t seen;
} bell_look;

/* A rank rang; meanwhile, wake ranks of the wake queue (the simulator idles). */
static bool bell_rung(void *arg)
{
    bell_look *b = arg;
    if (atomic_load_explicit(&b->s->hd->bell, memory_order_acquire) != b->seen) return true;
    cr_vt_wq_help(b->s->base, 1);
    return false;
}

static void sleep_for_bell(cr_vsim *s, uint32_t bell)
{
    bell_look b = {s, bell};
    cr_vt_bell_wait(&s->hd->bell, &s->hd->sleeping, bell, BELL_YIELD_NS, 50000000L, bell_rung, &b,
                    &s->waiter);
}

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A line on stderr once a run has taken PROGRESS_FIRST_S, then every
 * PROGRESS_EVERY_S: how far the virtual time and the messages are. */
#define PROGRESS_FIRST_S 2.0
#define PROGRESS_EVERY_S 10.0
/* One rank runs, every other waits, its clock stood still between two
 * progress lines, and messages are on their way (in the model, or unread in
 * its in ring) that cannot arrive before its clock moves: it computes without
 * calling courier, maybe waiting for what only its own calls would serve (a
 * put into its memory). Say so once: the real run would have gone on. */
static void stall_hint(cr_vsim *s)
{
    int r = s->nactive == 1 && s->ndone + s->nactive < s->n ? s->active[0] : -1;
    int64_t c = r < 0 ? -1 : atomic_load_explicit(&slot(s, r)->clock, memory_order_acquire);
    bool stuck = r >= 0 && r == s->stall_rank && c == s->stall_clock;
    s->stall_rank = r;
    s->stall_clock = c;
    if (!stuck || s->stall_said) return;
    cr_vt_ring *q = cr_vt_ring_of(s->base, r, 1);
    if (atomic_load(&q->head) == atomic_load(&q->tail) && !s->nheld && !s->nheap &&
        cr_sim_next(s->sim) == CR_TIME_NEVER)
        return; /* nothing is on its way: the others wait for what it computes */
    s->stall_said = true;
    fprintf(stderr,
            "courier: rank %d computes without calling courier while every other rank waits, "
            "and messages wait for its clock to move (at %.3f us of virtual time). Under --sim a "
            "rank's library serves one-sided operations into its memory only at its own "
            "calls: a program that waits for a put or an atomic by watching memory waits "
            "forever. End the job (Ctrl-C, --timeout) and call courier in the loop (cr_event_test, "
            "MPI_Iprobe; docs/sim.md)\n",
            r, (double)c / 1e6);
}

static void progress_line(cr_vsim *s, double t0, double *next)
{
    double now = wall_now();
    if (now - t0 < *next) return;
    *next += *next < PROGRESS_EVERY_S ? PROGRESS_EVERY_S - PROGRESS_FIRST_S : PROGRESS_EVERY_S;
    uint64_t msgs = 0;
    for (int r = 0; r < s->n; r++) msgs += slot(s, r)->acct.sent_msgs; /* as far as seen */
    fprintf(stderr,
            "courier: simulating %s: %.3f us of virtual time, %llu messages, %llu events, %d "
            "of %d ranks done, %.0f s\n",
            s->machine, (double)atomic_load(&s->hd->done) / 1e6, (unsigned long long)msgs,
            (unsigned long long)cr_sim_events(s->sim), s->ndone, s->n, now - t0);
    stall_hint(s);
}

static void *vsim_main(void *arg)
{
    cr_vsim *s = arg;
    double t0 = wall_now(), next = PROGRESS_FIRST_S;
    for (uint32_t pass = 0; !atomic_load(&s->stop); pass++) {
        if ((pass & 255) == 0) progress_line(s, t0, &next);
        count_gone(s);
        uint32_t bell = atomic_load_explicit(&s->hd->bell, memory_order_acquire);
        bool moved = false;
        s->h = CR_VT_NEVER;
        /* the ranks that run or ask: clocks first, then their out rings */
        for (int i = 0; i < s->nactive;) {
            int r = s->active[i];
            cr_vt_slot *sl = slot(s, r);
            vrank *v = &s->r[r];
            uint32_t st = atomic_load_explicit(&sl->state, memory_order_acquire);
            int64_t c = atomic_load_explicit(&sl->clock, memory_order_acquire);
            moved |= drain_out(s, r);
            if (st == CR_VT_RUN || st == CR_VT_SYNC) {
                v->st = (uint8_t)st;
                int64_t b = bound(s, r, c);
                if (b < s->h) s->h = b;
                i++;
                continue;
            }
            /* blocked or gone: out of the active list */
            moved = true;
            s->active[i] = s->active[--s->nactive];
            if (st == CR_VT_BLOCK) {
                v->st = CR_VT_BLOCK;
                v->block_c = c;
                v->resume = -1;
                int64_t next = pending_arrival(s, r);
                if (next != CR_VT_NEVER) woken(s, r, next);
            } else {
                v->st = CR_VT_DONE;
                s->ndone++;
                if (v->assembling) pkt_free(s, v->assembling), v->assembling = NULL;
            }
        }
        if (s->nheld) moved |= flush_holds(s);
        /* a woken rank runs from its resume time: nothing later may be
         * handled before it does */
        for (int i = 0; i < s->nwoke; i++) {
            int64_t b = bound(s, s->woke[i], s->r[s->woke[i]].resume);
            if (b < s->h) s->h = b;
        }
        /* every time step below the horizon, the ranks' clocks plus their
         * lookaheads (a step that wakes a rank brings it back to that rank) */
        for (;;) {
            int64_t te = cr_sim_next(s->sim), tr = s->nheap ? s->heap[0]->t : CR_VT_NEVER;
            int64_t t = te < tr ? te : tr;
            if (t >= s->h || t == CR_VT_NEVER) {
                int64_t upto = (t < s->h ? t : s->h) - 1;
                if (upto > atomic_load_explicit(&s->hd->done, memory_order_relaxed))
                    atomic_store_explicit(&s->hd->done, upto, memory_order_release);
                break;
            }
            step(s, t);
            atomic_store_explicit(&s->hd->done, t, memory_order_release);
            moved = true;
        }
        int64_t done = atomic_load_explicit(&s->hd->done, memory_order_relaxed);
        for (int i = 0; i < s->nwoke;) {
            int r = s->woke[i];
            if (s->r[r].hold || done < s->r[r].resume - 1) {
                i++;
                continue;
            }
            s->woke[i] = s->woke[--s->nwoke];
            answer_block(s, r);
        }
        /* syncs that can be answered now */
        for (int i = 0; i < s->nactive; i++) {
            int r = s->active[i];
            cr_vt_slot *sl = slot(s, r);
            if (s->r[r].st != CR_VT_SYNC || s->r[r].hold) continue;
            int64_t c = atomic_load_explicit(&sl->clock, memory_order_acquire);
            if (done >= c - 1) {
                s->r[r].st = CR_VT_RUN;
                atomic_store_explicit(&sl->state, CR_VT_RUN, memory_order_release);
                wake_rank(s, r);
                moved = true;
            }
        }
        if (s->ndone == s->n) break;
        if (!s->nactive && !s->nheap && cr_sim_next(s->sim) == CR_TIME_NEVER && !s->nheld &&
            !s->nwoke && !atomic_load(&s->stop)) {
            atomic_store(&s->deadlock, 1);
            atomic_store(&s->hd->stopped, 1);
            break;
        }
        /* the first of the ranks answered asleep now: they wake the others */
        cr_vt_wq_help(s->base, 1);
        if (s->ring_host) {
            s->ring_host = false;
            cr_vt_ring_host(s->base);
        }
        if (!moved) {
            sleep_for_bell(s, bell);
            progress_line(s, t0, &next);
        }
    }
    return NULL;
}

/* ---- life ------------------------------------------------------------------ */

cr_vsim *cr_vsim_new(const char *spec, int nranks, char *err, size_t errlen)
{
    vsim_opts o;
    if (parse_opts(spec, nranks, &o, err, errlen)) return NULL;
    cr_vsim *s = calloc(1, sizeof *s);
    if (!s) return snprintf(err, errlen, "out of memory"), NULL;
    s->fd = -1;
    s->stall_rank = -1;
    s->spare = cr_spares_make(PKT_KINDS, UINT32_MAX, PKT_SPARE_BYTES);
    s->n = nranks;
    s->r = calloc((size_t)nranks, sizeof *s->r);
    s->active = calloc((size_t)nranks, sizeof *s->active);
    s->held = calloc((size_t)nranks, sizeof *s->held);
    s->woke = calloc((size_t)nranks, sizeof *s->woke);
    char why[200];
    s->net = cr_net_new(&o.cfg, why, sizeof why);
    if (!s->r || !s->active || !s->held || !s->woke || !s->net) {
        snprintf(err, errlen, "--sim %s with %d ranks: %s", spec, nranks,
                 s->net ? "out of memory" : why);
        cr_vsim_free(s);
        return NULL;
    }
    s->sim = cr_net_sim(s->net);
    cr_net_set_deliver(s->net, on_deliver, s);
    s->machine = o.m->name;
    const cr_swmodel *sw = cr_net_swmodel(s->net);
    s->sw[CR_VT_CLASS_MSG] = sw;
    s->sw[CR_VT_CLASS_ONESIDED] = o.onesided;
    const cr_swmodel *rw = s->sw[CR_VT_CLASS_ONESIDED];
    char links[64] = "", onesided[48] = "";
    if (o.m->sim_describe) o.m->sim_describe(&o.cfg, links, sizeof links);
    if (rw != sw) snprintf(onesided, sizeof onesided, " (one-sided: %s)", rw ? rw->name : "none");
    snprintf(s->desc, sizeof s->desc, "%s, %d nodes%s, node software %s%s, cpu=%g", s->machine,
             cr_net_nodes(s->net), links, sw ? sw->name : "none (hw)", onesided, o.cpu);
    s->len = cr_vt_segment_size(nranks);
    s->fd = memfd_create("courier-sim", MFD_CLOEXEC);
    if (s->fd < 0 || ftruncate(s->fd, (off_t)s->len) < 0 ||
        (s->base = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0)) ==
            MAP_FAILED) {
        snprintf(err, errlen, "--sim: cannot make the simulator's segment: %s", strerror(errno));
        s->base = NULL;
        cr_vsim_free(s);
        return NULL;
    }
    cr_vt_segment_init(s->base, nranks);
    s->hd = s->base;
    for (int k = 0; k < CR_VT_CLASSES; k++)
        s->hd->cost[k] =
            s->sw[k] ? (cr_vt_cost){s->sw[k]->o_send, s->sw[k]->copy_ps, s->sw[k]->eager_max}
                     : (cr_vt_cost){0, 0, -1};
    for (int r = 0; r < nranks; r++) /* until it sends one-sided traffic */
        atomic_store(&slot(s, r)->look, s->hd->cost[CR_VT_CLASS_MSG].o_send);
    s->hd->poll_ps = o.poll_us >= 0 ? (int64_t)llround(o.poll_us * 1e6)
                     : sw           ? sw->o_recv / 10
                                    : 100000;
    s->hd->timer_ps = (int64_t)llround(o.timer_ns * 1e3);
    s->hd->cpu_factor = o.cpu;
    s->hd->hw_bcast = cr_net_has_hw_broadcast(s->net);
    s->hd->chains = cr_net_has_chains(s->net);
    s->hd->hw_answers = rw && rw->hw_answer;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    s->hd->yields = nranks <= cpus ? 32 : 0; /* about a CPU each */
    atomic_store(&s->hd->ctx_current, -1);
    s->ranks = o.ranks;
    s->shared = o.shared;
    for (int r = 0; r < nranks; r++) {
        s->r[r].resume = -1;
        s->active[s->nactive++] = r;
    }
    return s;
}

int cr_vsim_fd(const cr_vsim *s)
{
    return s->fd;
}

int cr_vsim_ranks(const cr_vsim *s)
{
    return s->ranks;
}

uint64_t cr_vsim_shared(const cr_vsim *s)
{
    return s->shared;
}

void cr_vsim_use_contexts(cr_vsim *s)
{
    s->hd->contexts = 1;
    s->hd->yields = 0; /* a waiting rank hands its process's CPU to the next at once */
    s->byref = true;   /* the ranks' records carry their bytes' address (transport/sim.c) */
}

bool cr_vsim_rank_exit(const cr_vsim *s, int r, int *status)
{
    cr_vt_slot *sl = cr_vt_slot_of(s->base, r);
    if (!atomic_load_explicit(&sl->exited, memory_order_acquire)) return false;
    *status = atomic_load_explicit(&sl->exit_status, memory_order_relaxed);
    return true;
}

int cr_vsim_ctx_current(const cr_vsim *s)
{
    return atomic_load_explicit(&s->hd->ctx_current, memory_order_relaxed);
}

int cr_vsim_start(cr_vsim *s)
{
    int rc = pthread_create(&s->th, NULL, vsim_main, s);
    if (rc) return -rc;
    s->started = true;
    return 0;
}

void cr_vsim_rank_gone(cr_vsim *s, int r)
{
    if (r < 0 || r >= s->n) return;
    cr_vt_slot *sl = slot(s, r);
    atomic_store_explicit(&sl->state, CR_VT_DONE, memory_order_release);
    atomic_fetch_add(&s->gone, 1);
    cr_vt_bell_ring(&s->hd->bell, &s->hd->sleeping);
}

bool cr_vsim_deadlocked(cr_vsim *s, double *clock_us)
{
    if (!atomic_load(&s->deadlock)) return false;
    if (clock_us)
        for (int r = 0; r < s->n; r++) clock_us[r] = (double)atomic_load(&slot(s, r)->clock) / 1e6;
    return true;
}

void cr_vsim_stop(cr_vsim *s)
{
    atomic_store(&s->stop, 1);
    cr_vt_bell_ring(&s->hd->bell, &s->hd->sleeping);
}

/* After the loop: when every rank has left the job (and it did not deadlock),
 * the launcher may have stopped the loop before it read the ranks' last
 * messages or handled the model's last events (the rank processes' exits race
 * with the loop's last passes). Read and handle them all here, so that the
 * report (events, links' busy times) is the same run after run. */
static void finish_model(cr_vsim *s)
{
    if (atomic_load(&s->deadlock)) return;
    for (int r = 0; r < s->n; r++)
        if (atomic_load_explicit(&slot(s, r)->state, memory_order_acquire) != CR_VT_DONE) return;
    for (int r = 0; r < s->n; r++) {
        drain_out(s, r);
        s->r[r].st = CR_VT_DONE;
    }
    for (;;) {
        int64_t te = cr_sim_next(s->sim), tr = s->nheap ? s->heap[0]->t : CR_VT_NEVER;
        int64_t t = te < tr ? te : tr;
        if (t == CR_VT_NEVER) break;
        step(s, t);
    }
    if (s->nheld) flush_holds(s);
}

int cr_vsim_finish(cr_vsim *s, FILE *out, const char *json, double wall_s)
{
    if (s->started) {
        cr_vsim_stop(s);
        pthread_join(s->th, NULL);
        s->started = false;
        finish_model(s);
    }
    int64_t end = 0;
    cr_vt_account sum = {0};
    for (int r = 0; r < s->n; r++) {
        cr_vt_slot *sl = slot(s, r);
        int64_t c = atomic_load(&sl->clock);
        if (c > end) end = c;
        sum.compute += sl->acct.compute;
        sum.send += sl->acct.send;
        sum.recv += sl->acct.recv;
        sum.wait += sl->acct.wait;
        sum.sent_msgs += sl->acct.sent_msgs;
        sum.sent_bytes += sl->acct.sent_bytes;
    }
    uint64_t events = cr_sim_events(s->sim);
    cr_net_link_use busiest[10];
    int nbusy = cr_net_busiest_links(s->net, busiest, 10);
    if (out) {
        fprintf(out,
                "courier: simulated %s: %.3f us of virtual time in %.2f s; %llu messages, "
                "%llu bytes, %llu events%s\n",
                s->desc, (double)end / 1e6, wall_s, (unsigned long long)sum.sent_msgs,
                (unsigned long long)sum.sent_bytes, (unsigned long long)events,
                atomic_load(&s->deadlock) ? " (deadlocked)" : "");
        if (s->n <= 16) {
            fprintf(out,
                    "courier:   rank    end_us    compute_us    send_us    recv_us    wait_us  "
                    "msgs bytes\n");
            for (int r = 0; r < s->n; r++) {
                cr_vt_slot *sl = slot(s, r);
                fprintf(out, "courier:   %4d %9.3f %13.3f %10.3f %10.3f %10.3f %5llu %llu\n", r,
                        (double)atomic_load(&sl->clock) / 1e6, (double)sl->acct.compute / 1e6,
                        (double)sl->acct.send / 1e6, (double)sl->acct.recv / 1e6,
                        (double)sl->acct.wait / 1e6, (unsigned long long)sl->acct.sent_msgs,
                        (unsigned long long)sl->acct.sent_bytes);
            }
        } else {
            fprintf(out,
                    "courier:   per rank, mean: compute %.3f us, send %.3f us, recv %.3f us, wait "
                    "%.3f us\n",
                    (double)sum.compute / 1e6 / s->n, (double)sum.send / 1e6 / s->n,
                    (double)sum.recv / 1e6 / s->n, (double)sum.wait / 1e6 / s->n);
        }
        for (int i = 0; i < nbusy && i < 3; i++)
            fprintf(out, "courier:   %s %s: busy %.1f %% of the time, %llu bytes\n",
                    i ? "          " : "busiest links:", busiest[i].name,
                    end ? 100.0 * (double)busiest[i].busy / (double)end : 0.0,
                    (unsigned long long)busiest[i].bytes);
    }
    if (!json) return 0;
    FILE *f = fopen(json, "w");
    if (!f) return -1;
    fprintf(f, "{\"machine\": ");
    cr_json_str(f, s->machine);
    fprintf(f, ", \"description\": ");
    cr_json_str(f, s->desc);
    fprintf(f,
            ", \"ranks\": %d, \"virtual_us\": %.6f, \"wall_s\": %.3f, \"messages\": %llu, "
            "\"bytes\": %llu, \"events\": %llu, \"deadlock\": %s, \"per_rank\": [",
            s->n, (double)end / 1e6, wall_s, (unsigned long long)sum.sent_msgs,
            (unsigned long long)sum.sent_bytes, (unsigned long long)events,
            atomic_load(&s->deadlock) ? "true" : "false");
    for (int r = 0; r < s->n; r++) {
        cr_vt_slot *sl = slot(s, r);
        fprintf(f,
                "%s\n  {\"rank\": %d, \"end_us\": %.6f, \"compute_us\": %.6f, \"send_us\": %.6f, "
                "\"recv_us\": %.6f, \"wait_us\": %.6f, \"sent_msgs\": %llu, \"sent_bytes\": %llu, "
                "\"recv_msgs\": "
                "%llu, \"recv_bytes\": %llu}",
                r ? "," : "", r, (double)atomic_load(&sl->clock) / 1e6,
                (double)sl->acct.compute / 1e6, (double)sl->acct.send / 1e6,
                (double)sl->acct.recv / 1e6, (double)sl->acct.wait / 1e6,
                (unsigned long long)sl->acct.sent_msgs, (unsigned long long)sl->acct.sent_bytes,
                (unsigned long long)sl->acct.recv_msgs, (unsigned long long)sl->acct.recv_bytes);
    }
    fprintf(f, "\n], \"busiest_links\": [");
    for (int i = 0; i < nbusy; i++) {
        fprintf(f, "%s\n  {\"link\": ", i ? "," : "");
        cr_json_str(f, busiest[i].name);
        fprintf(f, ", \"busy_us\": %.6f, \"busy_share\": %.6f, \"bytes\": %llu}",
                (double)busiest[i].busy / 1e6, end ? (double)busiest[i].busy / (double)end : 0.0,
                (unsigned long long)busiest[i].bytes);
    }
    fprintf(f, "\n]}\n");
    return fclose(f) ? -1 : 0;
}

void cr_vsim_free(cr_vsim *s)
{
    if (!s) return;
    if (s->started) cr_vsim_finish(s, NULL, NULL, 0);
    while (s->nheap) free(heap_pop(s));
    for (int r = 0; s->r && r < s->n; r++) {
        free(s->r[r].assembling);
        while (s->r[r].hold) {
            pkt *p = s->r[r].hold;
            s->r[r].hold = p->next;
            free(p);
        }
    }
    for (size_t i = 0; i < s->capfl; i++)
        while (s->fl[i].src >= 0 && s->fl[i].early) {
            pkt *p = s->fl[i].early;
            s->fl[i].early = p->next;
            free(p);
        }
    while (s->answers) { /* still collecting (a complete one is the model event's) */
        wave *w = s->answers;
        s->answers = w->next;
        w->next = s->waves;
        s->waves = w;
    }
    while (s->waves) {
        wave *w = s->waves;
        s->waves = w->next;
        while (w->pkts) {
            pkt *p = w->pkts;
            w->pkts = p->next;
            free(p);
        }
        free(w);
    }
    cr_spares_clear(&s->spare);
    free(s->fl);
    free(s->heap);
    free(s->r);
    free(s->active);
    free(s->held);
    free(s->woke);
    cr_net_free(s->net);
    if (s->base) munmap(s->base, s->len);
    if (s->fd >= 0) close(s->fd);
    free(s);
}
