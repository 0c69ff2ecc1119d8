/* MPI intercommunicators (MPI-3.1 §6.6): MPI_Intercomm_create,
 * MPI_Intercomm_merge, MPI_Comm_remote_size, MPI_Comm_remote_group, and the
 * intercommunicator forms of MPI_Comm_dup / _split / _create (mpi_comm.c checks
 * their arguments and calls mpi_inter_dup / _split / _create here).
 *
 * An intercommunicator is an mpi_comm with inter set: size/me/ranks are the
 * local group, rsize/rranks the remote group, whose ranks point-to-point calls
 * name (mpi_p2p.c maps them through comm_peer_to_job / mpi_comm_job_to_peer).
 * Both groups share one context pair: ctx carries point-to-point traffic (a
 * message on ctx can only come from the remote group, so MPI_ANY_SOURCE
 * needs nothing special), ctx + 1 three kinds of internal traffic, told apart
 * by their sources and tags (mpi_impl.h documents the fields):
 *  - g: the local group as a cr_group, for collectives among the local members
 *    (the creating calls here; the local phase of intercomm collectives);
 *  - ig: both groups as one cr_group, the low group first (the one whose rank 0
 *    has the lower job rank), for collectives that span the two groups;
 *  - the leaders (local rank 0 of each group) swap courier's own messages with
 *    the negative tag MPI_INTER_TAG (mpi_inter_swap): collectives' tags are
 *    >= 0, so those never match them.
 *
 * Context agreement. The pair of a new communicator must be free on every
 * member of both groups. Each group ANDs its members' free maps with a
 * collective over its local group (like agree_ctx in mpi_comm.c, over all the
 * words any member of either group has used, plus one none has touched), the
 * two leaders swap their results and both take the lowest pair free in the
 * AND of the two (the same pair: the AND is symmetric), and each leader
 * broadcasts it to its group. For MPI_Intercomm_create the local group is
 * local_comm and the leaders talk over peer_comm's point-to-point context with
 * the program's tag (as MPI asks of the program: no other traffic with that
 * tag may be pending between the leaders on peer_comm); for calls over an
 * intercommunicator, the local group is its g and the leaders talk on its
 * ctx + 1 with MPI_INTER_TAG. With several threads agreeing at once a round
 * may be tried again (bridge_agree; mpi_impl.h says why).
 *
 * Invariants:
 *  - every member of both groups makes the same sequence of local collectives
 *    and leader swaps in a creating call, so every member leaves with the same
 *    answer (the same pair, or -1 and the same error: MPI_ERR_INTERN when no
 *    pair is free on all);
 *  - the groups of an intercommunicator are disjoint (checked by
 *    MPI_Intercomm_create) and non-empty;
 *  - MPI_Intercomm_merge orders the group whose leader passed high = false
 *    first; with equal flags, the low group first. */
#include <stdlib.h>
#include <string.h>

#include "../coll/coll_split.h"
#include "mpi_impl.h"

/* How the two leaders talk during a creating call, and the local group. */
typedef struct bridge {
    cr_group *lg; /* the local group: local collectives run on it */
    int lead;     /* the local leader's index in lg */
    int peer;     /* leader: job rank of the other group's leader */
    uint16_t ctx; /* leader: context and tag of the leaders' messages */
    int32_t tag;
} bridge;

static bool is_lead(const bridge *b)
{
    return b->lg->me == b->lead;
}

static bridge inter_bridge(mpi_comm *c)
{
    return (bridge){&c->g, 0, c->rranks[0], (uint16_t)(c->ctx + 1), MPI_INTER_TAG};
}

static void *xmalloc(cr_job *job, const char *call, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) cr_fatal(job, call, "out of memory");
    return p;
}

/* Leader only: send mine, receive exactly tlen bytes from the other leader. */
static void swap(cr_job *job, const char *call, const bridge *b, const void *mine, size_t mlen,
                 void *theirs, size_t tlen)
{
    cr_sel sel = {.src = b->peer, .ctx = b->ctx, .tag_mode = CR_TAG_EXACT, .tag = b->tag};
    cr_req *r = cr_irecv(job, call, &sel, theirs, tlen);
    cr_send(job, call, b->peer, b->ctx, b->tag, mine, mlen);
    cr_req_wait(job, r);
    size_t got = r->st.size;
    cr_req_release(job, r);
    if (got != tlen)
        cr_fatal(job, call,
                 "the other group's leader (job rank %d) sent %zu bytes where %zu were expected: "
                 "is tag %d used by other traffic between the leaders?",
                 b->peer, got, tlen, (int)b->tag);
}

void mpi_inter_swap(cr_job *job, const char *call, mpi_comm *c, const void *mine, size_t mlen,
                    void *theirs, size_t tlen)
{
    bridge b = inter_bridge(c);
    swap(job, call, &b, mine, mlen, theirs, tlen);
}

/* Agree on a context pair free on every member of both groups, and take it
 * (mpi_ctx_untake gives it back if the caller does not use it); -1 when there
 * is none. On the way the leaders swap one value: *mine is this rank's in, the
 * local leader's out; *theirs the other leader's (both may be NULL). Collective
 * over both groups. Several threads may be agreeing at once (mpi_impl.h): a
 * round in which some member of either group did not offer its free pairs
 * (the word after the map's says) is tried again; the agreement's prio, the
 * lower of the two groups' (the same on every member), comes in each round's
 * header. */
static int bridge_agree(cr_job *job, const char *call, const bridge *b, int *mine, int *theirs)
{
    cr_redop band = CR_OP_PREDEF(cr_op_band_long, long), mx = CR_OP_PREDEF(cr_op_max_long, long);
    mpi_agree a;
    mpi_agree_begin(&a, UINT64_MAX); /* (goes before no other until its prio is known) */
    long pair = -2;
    int in = mine ? *mine : 0;
    while (pair == -2) {
        if (mpi_g.ndraining) mpi_ctx_reclaim(job);
        long words = mpi_g.ctx_words;
        cr_coll_allreduce(job, b->lg, call, &words, &words, 1, &mx);
        long hdr[4] = {words, in, 0, (long)mpi_agree_prio(b->lg->ctx, -1)}, rh[4];
        if (is_lead(b)) {
            swap(job, call, b, hdr, sizeof hdr, rh, sizeof rh);
            if (rh[0] > hdr[0]) hdr[0] = rh[0];
            hdr[2] = rh[1];
            if (rh[3] < hdr[3]) hdr[3] = rh[3];
        }
        cr_coll_bcast(job, b->lg, call, hdr, sizeof hdr, b->lead);
        if (mine) *mine = (int)hdr[1];
        if (theirs) *theirs = (int)hdr[2];
        a.prio = (uint64_t)hdr[3];
        words = hdr[0];
        if (words < MPI_CTX_WORDS) words++; /* one word none has touched yet */
        bool offers = mpi_agree_round(&a);
        long *fr = xmalloc(job, call, (2 * (size_t)words + 1) * sizeof *fr),
             *offer = fr + words + 1;
        for (long w = 0; w < words; w++) offer[w] = fr[w] = offers ? mpi_ctx_free_word(w) : 0;
        fr[words] = offers ? -1L : 0;
        mpi_agree_offered(&a, offer, 0, words);
        cr_coll_allreduce(job, b->lg, call, fr, fr, (size_t)words + 1, &band);
        if (is_lead(b)) {
            long *rf = xmalloc(job, call, ((size_t)words + 1) * sizeof *rf);
            swap(job, call, b, fr, ((size_t)words + 1) * sizeof *fr, rf,
                 ((size_t)words + 1) * sizeof *rf);
            pair = fr[words] & rf[words] ? -1 : -2;
            for (long w = 0; w < words && pair < 0; w++)
                if (fr[w] & rf[w])
                    pair = w * 64 + __builtin_ctzll((unsigned long long)(fr[w] & rf[w]));
            free(rf);
        }
        cr_coll_bcast(job, b->lg, call, &pair, sizeof pair, b->lead);
        mpi_agree_round_end(&a, (int)pair);
        free(fr);
    }
    mpi_agree_end(&a);
    return (int)pair;
}

MPI_Comm mpi_inter_add(cr_job *job, const char *call, int size, int me, int *ranks, int rsize,
                       int *rranks, int pair, MPI_Errhandler errh)
{
    MPI_Comm h = mpi_comm_add(job, call, size, me, ranks, mpi_ctx_take(pair), errh);
    mpi_comm *c = mpi_comm_get(h);
    c->inter = true;
    c->rsize = rsize;
    c->rranks = rranks;
    c->ilow = ranks[0] < rranks[0];
    int *all = xmalloc(job, call, (size_t)(size + rsize) * sizeof *all);
    int *lo = c->ilow ? ranks : rranks, nlo = c->ilow ? size : rsize;
    int *hi = c->ilow ? rranks : ranks, nhi = c->ilow ? rsize : size;
    memcpy(all, lo, (size_t)nlo * sizeof *all);
    memcpy(all + nlo, hi, (size_t)nhi * sizeof *all);
    c->ig = (cr_group){.size = size + rsize,
                       .me = c->ilow ? me : rsize + me,
                       .ranks = all,
                       .ctx = (uint16_t)(c->ctx + 1)};
    for (int k = 0; k < size + rsize && !c->ig.spans; k++) c->ig.spans = all[k] >= job->size;
    return h;
}

void mpi_inter_set_low(mpi_comm *c, bool low)
{
    if (c->ilow == low) return;
    int *all = (int *)c->ig.ranks;
    int *lo = low ? c->ranks : c->rranks, nlo = low ? c->size : c->rsize;
    int *hi = low ? c->rranks : c->ranks, nhi = low ? c->rsize : c->size;
    memcpy(all, lo, (size_t)nlo * sizeof *all);
    memcpy(all + nlo, hi, (size_t)nhi * sizeof *all);
    c->ilow = low;
    c->ig.me = low ? c->me : c->rsize + c->me;
}

int mpi_inter_agree(cr_job *job, const char *call, cr_group *lg, int lead, int peer, uint16_t ctx,
                    int32_t tag)
{
    bridge b = {lg, lead, peer, ctx, tag};
    return bridge_agree(job, call, &b, NULL, NULL);
}

static int *ints_copy(cr_job *job, const char *call, const int *src, int n)
{
    int *r = xmalloc(job, call, (size_t)n * sizeof *r);
    if (n) memcpy(r, src, (size_t)n * sizeof *r);
    return r;
}

static int *local_ranks(cr_job *job, const char *call, const mpi_comm *c)
{
    int *r = xmalloc(job, call, (size_t)c->size * sizeof *r);
    for (int i = 0; i < c->size; i++) r[i] = comm_rank_to_job(c, i);
    return r;
}

/* ---- MPI_Intercomm_create ---------------------------------------------------------- */

enum { LEAD_OK, LEAD_BAD_PEER, LEAD_BAD_REMOTE, LEAD_SELF, LEAD_OVERLAP };

PMPI_WEAK(Intercomm_create);
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    const char *call = "MPI_Intercomm_create";
    cr_job *job = mpi_enter(call);
    mpi_comm *lc = NULL;
    int rc = mpi_comm_check(job, call, local_comm, &lc);
    if (!rc && lc->inter)
        rc = mpi_fail(job, local_comm, call, MPI_ERR_COMM,
                      "local_comm is an intercommunicator: it must be an intracommunicator");
    if (!rc && !newintercomm)
        rc = mpi_fail(job, local_comm, call, MPI_ERR_ARG, "newintercomm is NULL");
    if (!rc && (local_leader < 0 || local_leader >= lc->size))
        rc = mpi_fail(job, local_comm, call, MPI_ERR_RANK,
                      "local_leader %d is invalid: ranks in local_comm are 0..%d", local_leader,
                      lc->size - 1);
    if (!rc && tag < 0)
        rc = mpi_fail(job, local_comm, call, MPI_ERR_TAG, "tag %d is invalid: tags are 0..%d", tag,
                      INT32_MAX);
    if (rc) return mpi_leave(job, rc);

    bridge b = {&lc->g, local_leader, -1, 0, tag};
    int nl = lc->size;
    int *ranks = local_ranks(job, call, lc);
    /* The leader checks peer_comm and remote_leader (significant there only),
     * swaps the groups with the other leader and tells its group. */
    int hdr[2] = {LEAD_OK, 0}; /* what the leader found, the remote group's size */
    int *rranks = NULL;
    if (is_lead(&b)) {
        mpi_comm *pc = mpi_comm_get(peer_comm);
        if (!pc)
            hdr[0] = LEAD_BAD_PEER;
        else if (remote_leader < 0 || remote_leader >= comm_peer_size(pc))
            hdr[0] = LEAD_BAD_REMOTE;
        else {
            b.peer = comm_peer_to_job(pc, remote_leader);
            b.ctx = pc->ctx;
            if (b.peer == job->rank) hdr[0] = LEAD_SELF;
        }
        if (hdr[0] == LEAD_OK) {
            int rn = 0;
            swap(job, call, &b, &nl, sizeof nl, &rn, sizeof rn);
            rranks = xmalloc(job, call, (size_t)rn * sizeof *rranks);
            swap(job, call, &b, ranks, (size_t)nl * sizeof *ranks, rranks,
                 (size_t)rn * sizeof *rranks);
            hdr[1] = rn;
            for (int i = 0; i < rn && hdr[0] == LEAD_OK; i++)
                for (int j = 0; j < nl; j++)
                    if (rranks[i] == ranks[j]) hdr[0] = LEAD_OVERLAP;
        }
    }
    cr_coll_bcast(job, b.lg, call, hdr, sizeof hdr, local_leader);
    if (hdr[0] != LEAD_OK) {
        free(ranks);
        free(rranks);
        static const char *const why[] = {
            "", "peer_comm is not a valid communicator", "remote_leader is not a rank of peer_comm",
            "remote_leader is the local leader itself: the groups must be disjoint",
            "the local and remote groups have a process in common: they must be disjoint"};
        int code = hdr[0] == LEAD_BAD_PEER  ? MPI_ERR_COMM
                   : hdr[0] == LEAD_OVERLAP ? MPI_ERR_GROUP
                                            : MPI_ERR_RANK;
        return mpi_leave(job, mpi_fail(job, local_comm, call, code,
                                       "at the local leader (rank %d of local_comm): %s "
                                       "(remote_leader %d)",
                                       local_leader, why[hdr[0]], remote_leader));
    }
    int rn = hdr[1];
    if (!rranks) rranks = xmalloc(job, call, (size_t)rn * sizeof *rranks);
    cr_coll_bcast(job, b.lg, call, rranks, (size_t)rn * sizeof *rranks, local_leader);
    int pair = bridge_agree(job, call, &b, NULL, NULL);
    if (pair < 0) {
        free(ranks);
        free(rranks);
        return mpi_leave(job, mpi_no_ctx(job, local_comm, call));
    }
    lc = mpi_comm_get(local_comm);
    *newintercomm = mpi_inter_add(job, call, nl, lc->me, ranks, rn, rranks, pair, lc->errh);
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- calls on an intercommunicator --------------------------------------------------- */

static int inter_check(cr_job *job, const char *call, MPI_Comm comm, mpi_comm **out)
{
    int rc = mpi_comm_check(job, call, comm, out);
    if (!rc && !(*out)->inter)
        rc =
            mpi_fail(job, comm, call, MPI_ERR_COMM, "the communicator is not an intercommunicator");
    return rc;
}

PMPI_WEAK(Intercomm_merge);
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *call = "MPI_Intercomm_merge";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = inter_check(job, call, intercomm, &c);
    if (!rc && !newintracomm)
        rc = mpi_fail(job, intercomm, call, MPI_ERR_ARG, "newintracomm is NULL");
    if (rc) return mpi_leave(job, rc);
    bridge b = inter_bridge(c);
    int lhigh = high != 0, rhigh = 0;
    int pair = bridge_agree(job, call, &b, &lhigh, &rhigh);
    if (pair < 0) return mpi_leave(job, mpi_no_ctx(job, intercomm, call));
    c = mpi_comm_get(intercomm);
    bool first = lhigh != rhigh ? !lhigh : c->ilow; /* this rank's group comes first */
    int n = c->size + c->rsize;
    int *ranks = xmalloc(job, call, (size_t)n * sizeof *ranks);
    int *loc = ranks + (first ? 0 : c->rsize), *rem = ranks + (first ? c->size : 0);
    for (int i = 0; i < c->size; i++) loc[i] = comm_rank_to_job(c, i);
    memcpy(rem, c->rranks, (size_t)c->rsize * sizeof *rem);
    int me = (first ? 0 : c->rsize) + c->me;
    *newintracomm = mpi_comm_add(job, call, n, me, ranks, mpi_ctx_take(pair), c->errh);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_remote_size);
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    const char *call = "MPI_Comm_remote_size";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = inter_check(job, call, comm, &c);
    if (!rc && !size) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "size is NULL");
    if (rc) return mpi_leave(job, rc);
    *size = c->rsize;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_remote_group);
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    const char *call = "MPI_Comm_remote_group";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = inter_check(job, call, comm, &c);
    if (!rc && !group) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "group is NULL");
    if (rc) return mpi_leave(job, rc);
    *group = mpi_group_add(job, call, ints_copy(job, call, c->rranks, c->rsize), c->rsize);
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- dup, split, create over an intercommunicator ------------------------------------ */

int mpi_inter_dup(cr_job *job, const char *call, MPI_Comm comm, MPI_Comm *newcomm)
{
    mpi_comm *c = mpi_comm_get(comm);
    bridge b = inter_bridge(c);
    int pair = bridge_agree(job, call, &b, NULL, NULL);
    if (pair < 0) return mpi_no_ctx(job, comm, call);
    c = mpi_comm_get(comm);
    *newcomm = mpi_inter_add(job, call, c->size, c->me, local_ranks(job, call, c), c->rsize,
                             ints_copy(job, call, c->rranks, c->rsize), pair, c->errh);
    mpi_inter_set_low(mpi_comm_get(*newcomm), c->ilow);
    return MPI_SUCCESS;
}

int mpi_inter_split(cr_job *job, const char *call, MPI_Comm comm, int color, int key,
                    MPI_Comm *newcomm)
{
    mpi_comm *c = mpi_comm_get(comm);
    bridge b = inter_bridge(c);
    int n = c->size, rn = c->rsize;
    cr_split_entry *la = cr_split_gather(job, b.lg, call, color, key, 0);
    cr_split_entry *ra = xmalloc(job, call, (size_t)rn * sizeof *ra);
    if (is_lead(&b)) swap(job, call, &b, la, (size_t)n * sizeof *la, ra, (size_t)rn * sizeof *ra);
    cr_coll_bcast(job, b.lg, call, ra, (size_t)rn * sizeof *ra, b.lead);
    int pair = bridge_agree(job, call, &b, NULL, NULL);
    int m = 0, rm = 0;
    if (color != MPI_UNDEFINED) {
        m = cr_split_pick(la, n, color);
        rm = cr_split_pick(ra, rn, color);
    }
    if (pair < 0 || m == 0 || rm == 0) { /* m == 0: MPI_UNDEFINED */
        free(la);
        free(ra);
        if (pair < 0) return mpi_no_ctx(job, comm, call);
        mpi_ctx_untake(pair);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    c = mpi_comm_get(comm);
    int *ranks = xmalloc(job, call, (size_t)m * sizeof *ranks), me = -1;
    int *rranks = xmalloc(job, call, (size_t)rm * sizeof *rranks);
    for (int i = 0; i < m; i++) {
        ranks[i] = comm_rank_to_job(c, la[i].index);
        if (la[i].index == c->me) me = i;
    }
    for (int i = 0; i < rm; i++) rranks[i] = c->rranks[ra[i].index];
    free(la);
    free(ra);
    *newcomm = mpi_inter_add(job, call, m, me, ranks, rm, rranks, pair, c->errh);
    mpi_inter_set_low(mpi_comm_get(*newcomm), c->ilow);
    return MPI_SUCCESS;
}

int mpi_inter_create(cr_job *job, const char *call, MPI_Comm comm, MPI_Group group,
                     MPI_Comm *newcomm)
{
    mpi_comm *c = mpi_comm_get(comm);
    mpi_group *g = mpi_group_get(group);
    bridge b = inter_bridge(c);
    int n = g->size, rn = 0;
    int *ranks = ints_copy(job, call, g->ranks, n), *rranks = NULL;
    if (is_lead(&b)) {
        swap(job, call, &b, &n, sizeof n, &rn, sizeof rn);
        rranks = xmalloc(job, call, (size_t)rn * sizeof *rranks);
        swap(job, call, &b, ranks, (size_t)n * sizeof *ranks, rranks, (size_t)rn * sizeof *rranks);
    }
    cr_coll_bcast(job, b.lg, call, &rn, sizeof rn, b.lead);
    if (!rranks) rranks = xmalloc(job, call, (size_t)rn * sizeof *rranks);
    if (rn) cr_coll_bcast(job, b.lg, call, rranks, (size_t)rn * sizeof *rranks, b.lead);
    int pair = bridge_agree(job, call, &b, NULL, NULL);
    int me = -1;
    for (int i = 0; i < n; i++)
        if (ranks[i] == job->rank) me = i;
    if (pair < 0 || me < 0 || rn == 0) {
        free(ranks);
        free(rranks);
        if (pair < 0) return mpi_no_ctx(job, comm, call);
        mpi_ctx_untake(pair);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    c = mpi_comm_get(comm);
    *newcomm = mpi_inter_add(job, call, n, me, ranks, rn, rranks, pair, c->errh);
    mpi_inter_set_low(mpi_comm_get(*newcomm), c->ilow);
    return MPI_SUCCESS;
}
