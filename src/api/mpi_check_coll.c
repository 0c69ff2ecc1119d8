/* courier run --check=coll (docs/check.md): before a collective moves data,
 * its members agree that they call the same collective with the same root,
 * operator and type signature. Blocking ones as below; nonblocking and
 * persistent ones in the first rounds of their own schedule (each member's
 * record to member 0, which judges them in a step of its schedule: nothing
 * blocks in the call); on an intercommunicator each group within itself; the
 * blocking v forms also per pair (mpi_check_coll_v).
 *
 * How: each member contributes a fixed-size record of its call (name, root,
 * operator, counts, the check values of one block it sends and receives:
 * mpi_check.c's signatures) to an allgather over the communicator's own
 * collective group, the same group and context the collective itself then
 * uses, so the check matches whatever collective the other members called.
 * Every member then judges the same table, so every member sees a
 * disagreement; member 0 reports it, in one block naming each rank's call and
 * arguments, and ends its rank; the others wait for the launcher to end them.
 *
 * Invariants: the check sends nothing but the one allgather (nonblocking:
 * the one record to member 0); a record's signatures are 0 where a side
 * carries nothing to compare (no data there, MPI_BYTE/MPI_PACKED); the block
 * signatures that are not 0 must all be equal across the members, which is
 * MPI's rule for every rooted and all-to-all collective whose blocks have one
 * size; a v form's record (vform) carries the rank's whole data instead,
 * compared only against the counts of the rank that sends or receives it
 * (docs/check.md: what is not compared). The same agreement, on the call, root and length, serves
 * the interfaces without datatypes (MPL: cr_check_group_agree). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"
#include "mpi_check_mpl.h"

typedef struct coll_rec {
    char call[32];
    int32_t root;
    int32_t op;
    int64_t scount, rcount;
    uint64_t ssig, rsig;  /* one block's check value (0: none, or MPI_BYTE) */
    uint8_t sside, rside; /* the rank has that side */
    uint8_t vform;        /* the v forms: the sides are this rank's whole data, not one block */
    uint8_t pad[5];
} coll_rec;

static const char *const op_names[] = {
    "MPI_OP_NULL", "MPI_MAX", "MPI_MIN",  "MPI_SUM",  "MPI_PROD",   "MPI_LAND",   "MPI_BAND",
    "MPI_LOR",     "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC",
};

void mpi_check_op_words(int32_t op, char *buf, size_t len)
{
    unsigned i = (unsigned)op & 0xffffu;
    if (op == MPI_OP_NULL ||
        (((unsigned)op & H_KIND_MASK) == K_OP && i > 0 && i < sizeof op_names / sizeof op_names[0]))
        snprintf(buf, len, "%s", op_names[op == MPI_OP_NULL ? 0 : i]);
    else
        snprintf(buf, len, "a user operation (%#x)", (unsigned)op);
}

/* One side of a record: "send count 4 of MPI_INT" (what: "send count"). */
static void side_words(char *buf, size_t len, const char *what, uint64_t sig, int64_t count)
{
    const char *type = !sig                ? "MPI_BYTE/MPI_PACKED"
                       : (sig & 0xff) == 0 ? "a derived datatype of several basic types"
                                           : mpi_type_at((int)(sig & 0xff))->name;
    snprintf(buf, len, "%s %lld of %s", what, (long long)count, type);
}

/* A record as the report shows it: "MPI_Bcast(root 1, send count 4 of MPI_INT, ...)". */
static void rec_words(const coll_rec *r, char *buf, size_t len)
{
    char parts[4][160];
    int n = 0;
    if (r->root >= 0) snprintf(parts[n++], sizeof parts[0], "root %d", r->root);
    if (r->root == MPI_ROOT) snprintf(parts[n++], sizeof parts[0], "root MPI_ROOT");
    if (r->op != MPI_OP_NULL) {
        char ow[48];
        mpi_check_op_words(r->op, ow, sizeof ow);
        snprintf(parts[n++], sizeof parts[0], "op %s", ow);
    }
    if (r->sside && r->rside && r->ssig == r->rsig && r->scount == r->rcount) /* one buffer */
        side_words(parts[n++], sizeof parts[0], "count", r->ssig, r->scount);
    else if (r->sside)
        side_words(parts[n++], sizeof parts[0], "send count", r->ssig, r->scount);
    if (r->rside && n < 4 && !(r->sside && r->ssig == r->rsig && r->scount == r->rcount))
        side_words(parts[n++], sizeof parts[0], "receive count", r->rsig, r->rcount);
    size_t at = (size_t)snprintf(buf, len, "%s(", r->call);
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", parts[i]);
    if (at < len) snprintf(buf + at, len - at, ")");
}

/* A member that leaves the report to another: it keeps its transports
 * moving (the reporter may still need what this rank sent, held in a
 * transport's queue: tcp's) until the launcher ends the job, which the
 * reporter's exit does. */
_Noreturn void mpi_check_wait_end(cr_job *job)
{
    for (;;) {
        cr_progress(job);
        usleep(1000);
    }
}

static bool sig_eq(uint64_t a, uint64_t b)
{
    return !a || !b || ((a ^ b) & ~MPI_CHK_SIG_LOW) == 0;
}

static void rec_make(cr_job *job, coll_rec *r, const char *call, int root, MPI_Op op, int scount,
                     const mpi_type *ts, int rcount, const mpi_type *tr)
{
    *r = (coll_rec){.root = root,
                    .op = (int32_t)op,
                    .scount = scount,
                    .rcount = rcount,
                    .ssig = ts ? mpi_check_sig(job, ts, (size_t)scount, "") : 0,
                    .rsig = tr ? mpi_check_sig(job, tr, (size_t)rcount, "") : 0,
                    .sside = ts != NULL,
                    .rside = tr != NULL};
    snprintf(r->call, sizeof r->call, "%s", call);
}

/* What the members' records disagree on (NULL: nothing), judged the same way
 * on every member. On an intercommunicator (a group's records: inter) the
 * root is MPI_ROOT at one member and MPI_PROC_NULL at the others of the root's
 * group, the same rank of the other group at every member of that one. */
static const char *judge(const coll_rec *all, int np, bool inter)
{
    uint64_t ref = 0;
    int roots = 0, nulls = 0; /* MPI_ROOT, MPI_PROC_NULL */
    for (int i = 0; i < np; i++) {
        const coll_rec *r = &all[i];
        if (strcmp(r->call, all[0].call)) return "which collective they call";
        if (r->op != all[0].op) return "the operator";
        if (inter) {
            roots += r->root == MPI_ROOT;
            nulls += r->root == MPI_PROC_NULL;
            continue; /* the sides' signatures are the other group's to match */
        }
        if (r->root != all[0].root) return "the root";
        if (r->vform) continue; /* compared per pair (mpi_check_coll_v) */
        uint64_t sg[2] = {r->sside ? r->ssig : 0, r->rside ? r->rsig : 0};
        for (int k = 0; k < 2; k++) {
            if (!sg[k]) continue;
            if (!ref) ref = sg[k];
            if (!sig_eq(ref, sg[k]))
                return "the type signature of the data (basic types and counts)";
        }
    }
    /* (MPI_PROC_NULL is also what the calls without a root pass: -1) */
    if (inter && roots && (roots != 1 || roots + nulls != np)) return "the root";
    if (inter && !roots)
        for (int i = 1; i < np; i++)
            if (all[i].root != all[0].root) return "the root";
    return NULL;
}

/* Member 0's report of what the records disagree on; the rank ends. */
_Noreturn static void report(cr_job *job, MPI_Comm comm, bool inter, const char *what,
                             const coll_rec *all, int np)
{
    char cw[MPI_MAX_OBJECT_NAME + 24];
    mpi_check_comm_words(comm, cw, sizeof cw);
    fflush(stdout);
    fprintf(stderr, "courier: check: collective mismatch on %s%s: the ranks disagree on %s\n", cw,
            inter ? " (this group of the intercommunicator)" : "", what);
    for (int i = 0; i < np; i++) {
        if (i == 16 && np > 17) {
            fprintf(stderr, "  ... (%d ranks more)\n", np - 16);
            break;
        }
        char rw[400];
        rec_words(&all[i], rw, sizeof rw);
        fprintf(stderr, "  rank %d: %s\n", i, rw);
    }
    fprintf(stderr, "  every rank of a communicator must make the same collective calls in the "
                    "same order, with the same root and operator and matching type signatures "
                    "(MPI-4.1, chapter 6): make the ranks' calls agree\n");
    mpi_check_trace(job, "check: collective mismatch");
    mpi_check_end();
}

void mpi_check_coll(const mpi_cargs *a, int root, MPI_Op op, int scount, const mpi_type *ts,
                    int rcount, const mpi_type *tr)
{
    cr_job *job = a->job;
    mpi_comm *c = a->c;
    coll_rec mine;
    rec_make(job, &mine, a->call, root, op, scount, ts, rcount, tr);
    int np = c->size; /* on an intercommunicator: the local group */
    coll_rec *all = calloc((size_t)np, sizeof *all);
    if (!all) cr_fatal(job, a->call, "out of memory for --check's collective records");
    cr_coll_allgather(job, &c->g, a->call, &mine, all, sizeof mine);
    const char *what = judge(all, np, c->inter);
    if (!what) {
        free(all);
        return;
    }
    if (c->me != 0) { /* member 0 reports; the launcher ends the job then */
        free(all);
        mpi_check_wait_end(job);
    }
    report(job, a->comm, c->inter, what, all, np);
}

void mpi_check_coll_v(const mpi_cargs *a, int root, int scount, const mpi_type *ts, int rcount,
                      const mpi_type *tr, const int *pc, const mpi_type *pt, bool pc_recv)
{
    cr_job *job = a->job;
    mpi_comm *c = a->c;
    coll_rec mine;
    rec_make(job, &mine, a->call, root, MPI_OP_NULL, scount, ts, rcount, tr);
    mine.vform = 1;
    int np = c->size;
    coll_rec *all = calloc((size_t)np, sizeof *all);
    if (!all) cr_fatal(job, a->call, "out of memory for --check's collective records");
    cr_coll_allgather(job, &c->g, a->call, &mine, all, sizeof mine);
    const char *what = judge(all, np, false);
    if (what && c->me != 0) {
        free(all);
        mpi_check_wait_end(job);
    }
    if (what) report(job, a->comm, false, what, all, np);
    /* this rank's counts per peer against what each peer sends (receives) */
    for (int i = 0; pc && pt && i < np; i++) {
        const coll_rec *r = &all[i];
        uint64_t other = pc_recv ? (r->sside ? r->ssig : 0) : (r->rside ? r->rsig : 0);
        uint64_t want = mpi_check_sig(job, pt, (size_t)pc[i], "");
        if (!other || !want || sig_eq(other, want)) continue;
        char cw[MPI_MAX_OBJECT_NAME + 24], ow[160], ww[160];
        mpi_check_comm_words(a->comm, cw, sizeof cw);
        side_words(ow, sizeof ow, pc_recv ? "sends count" : "receives count", other,
                   pc_recv ? r->scount : r->rcount);
        side_words(ww, sizeof ww, pc_recv ? "receives count" : "sends count", want, pc[i]);
        fflush(stdout);
        fprintf(stderr,
                "courier: check: type mismatch in %s on %s: rank %d %s, rank %d %s from it\n"
                "  rank %d: %s(%s)\n"
                "  the type signature each rank sends must match what the other side's counts "
                "and datatype for it say (MPI-4.1, chapter 6): make rank %d's %s[%d] and "
                "datatype describe what rank %d %s\n",
                a->call, cw, i, ow, c->me, ww, c->me, a->call, ww, c->me,
                pc_recv ? "recvcounts" : "sendcounts", i, i, pc_recv ? "sends" : "receives");
        free(all);
        mpi_check_trace(job, "check: collective type mismatch");
        mpi_check_end();
    }
    free(all);
}

/* ---- nonblocking and persistent collectives ------------------------------------------- */

/* The step of the agreement's transfers in a schedule's tags (src/coll's
 * algorithms stay far below it). */
#define CHECK_STEP 0xffd

struct mpi_chknbc {
    coll_rec *all; /* member 0: every member's; the others: their own (all[0]) */
    int np, me;
    bool inter;
    MPI_Comm comm;
};

mpi_chknbc *mpi_check_coll_rec(cr_job *job, cr_sched *s, const mpi_comm *c, MPI_Comm comm,
                               const char *call, int root, MPI_Op op, int scount,
                               const mpi_type *ts, int rcount, const mpi_type *tr)
{
    mpi_chknbc *k = cr_sched_alloc(job, s, sizeof *k);
    k->np = c->size;
    k->me = c->me;
    k->inter = c->inter;
    k->comm = comm;
    k->all = cr_sched_alloc(job, s, (size_t)(k->me ? 1 : k->np) * sizeof(coll_rec));
    rec_make(job, &k->all[0], call, root, op, scount, ts, rcount, tr);
    return k;
}

void mpi_check_coll_set(cr_job *job, mpi_chknbc *k, const char *call, int root, MPI_Op op,
                        int scount, const mpi_type *ts, int rcount, const mpi_type *tr)
{
    rec_make(job, &k->all[0], call, root, op, scount, ts, rcount, tr);
}

static void nbc_judge(cr_job *job, void *arg)
{
    const mpi_chknbc *k = arg;
    const char *what = judge(k->all, k->np, k->inter);
    if (what) report(job, k->comm, k->inter, what, k->all, k->np);
}

void mpi_check_coll_round(cr_job *job, cr_sched *s, const cr_group *g, mpi_chknbc *k)
{
    if (k->me) {
        cr_sched_send(job, s, cr_group_rank(g, 0), CHECK_STEP, &k->all[0], sizeof(coll_rec));
        cr_sched_round_end(job, s);
        return;
    }
    for (int i = 1; i < k->np; i++)
        cr_sched_recv(job, s, cr_group_rank(g, i), CHECK_STEP, &k->all[i], sizeof(coll_rec));
    cr_sched_round_end(job, s);
    cr_sched_call(job, s, nbc_judge, k);
    cr_sched_round_end(job, s);
}

/* ---- interfaces without datatypes (MPL) ---------------------------------------------- */

typedef struct grp_rec {
    char call[32];
    int64_t root, len;
} grp_rec;

void cr_check_group_agree(cr_job *job, cr_group *g, const char *call, int root, long len,
                          const char *who, const char *group)
{
    grp_rec mine = {.root = root, .len = len};
    snprintf(mine.call, sizeof mine.call, "%s", call);
    grp_rec *all = calloc((size_t)g->size, sizeof *all);
    if (!all) cr_fatal(job, call, "out of memory for --check's collective records");
    cr_coll_allgather(job, g, call, &mine, all, sizeof mine);
    const char *what = NULL;
    for (int i = 1; i < g->size && !what; i++)
        what = strcmp(all[i].call, all[0].call) ? "which collective they call"
               : all[i].root != all[0].root     ? "the root"
               : all[i].len != all[0].len       ? "the length"
                                                : NULL;
    if (!what) {
        free(all);
        return;
    }
    if (g->me != 0) {
        free(all);
        mpi_check_wait_end(job);
    }
    fflush(stdout);
    fprintf(stderr, "courier: check: collective mismatch in %s: the %ss disagree on %s\n", group,
            who, what);
    for (int i = 0; i < g->size && i < 16; i++) {
        char args[64] = "";
        if (all[i].root >= 0) snprintf(args, sizeof args, "root %lld", (long long)all[i].root);
        if (all[i].len >= 0)
            snprintf(args + strlen(args), sizeof args - strlen(args), "%s%lld bytes",
                     args[0] ? ", " : "", (long long)all[i].len);
        fprintf(stderr, "  %s %d: %s(%s)\n", who, i, all[i].call, args);
    }
    if (g->size > 16) fprintf(stderr, "  ... (%d %ss more)\n", g->size - 16, who);
    fprintf(stderr,
            "  every %s of a group must make the same collective calls in the same order, "
            "with the same root and length: make the %ss' calls agree\n",
            who, who);
    free(all);
    mpi_check_trace(job, "check: collective mismatch");
    mpi_check_end();
}
