/* MPI communicators, groups and attributes.
 *
 * A communicator is its members (job ranks in member order), this rank's place
 * among them, two engine contexts (ctx for point-to-point, ctx + 1 for
 * collectives: a cr_group), its error handler, name and attributes. A group is
 * just an ordered list of job ranks. An intercommunicator also has a remote
 * group; dup, split and create of one, and MPI_Intercomm_create / _merge, are
 * in mpi_inter.c (which agrees its pair over both groups); the calls here
 * dispatch to it after checking their arguments. Also here:
 * MPI_Comm_create_group (the pair agreed among the group's members alone, by
 * explicit messages with a tag of its own), MPI_Comm_split_type (a split by
 * host or hardware level, of intercommunicators too) and the MPI-1 attribute
 * calls (the same keyvals as MPI-2's).
 *
 * Contexts (as in MPICH and Open MPI): each rank keeps a bitmap of the context
 * pairs it uses (ctx_used). A creating call (dup, split, create), which every
 * member of the parent makes, ANDs the members' free maps with an all-reduce
 * over the parent and takes a pair free on all of them. First only one word is
 * reduced, the one the parent's last creating call found a pair in (ctx_hint:
 * the same on every member, as they all made the same calls over it); when that
 * word has no pair free on all, the members agree on how many words any of them
 * uses and AND all of those, plus one none has touched, taking the lowest pair.
 * When no pair is free on all members the call fails through the parent's
 * error handler (MPI_ERR_INTERN), the same on every member, and changes nothing.
 * Several threads of a rank may be making communicators at once (over
 * different parents, MPI_THREAD_MULTIPLE): only one of their agreements at a
 * time offers this rank's free pairs, the one of lowest priority (mpi_agree,
 * mpi_impl.h), and a round in which a member offered none is tried again by
 * every member; the pair agreed is taken before the offer is given up.
 *
 * Invariants:
 *  - a pair is taken by a rank for at most one communicator at a time, and a
 *    communicator's pair is taken on each of its members: two communicators
 *    with one pair (the disjoint ones a split makes, or one made over a group
 *    after another was freed elsewhere) have no member in common, so no message
 *    of one can reach the other;
 *  - a pair is given back by MPI_Comm_free only when no receive is posted and
 *    no message waits unreceived on its contexts at this rank; otherwise the
 *    communicator drains (its handle is dead, its slot and pair are kept) and
 *    the next creating call gives the pair back once that is over. So a receive
 *    left pending across MPI_Comm_free (allowed: it completes normally) never
 *    matches a message of a later communicator, and a message that arrived for
 *    the freed one is never received by a later one. A message still
 *    travelling that a receive here will take was posted for before the free
 *    (the handle is dead after it), so that receive keeps the pair. What this
 *    cannot see: a message still travelling that no receive will ever take (a
 *    program error: every send must be received); arriving after its pair was
 *    reused, it could match the later communicator;
 *  - MPI_COMM_WORLD and MPI_COMM_SELF (handles 0 and 1) are never freed;
 *  - a communicator or group, once allocated, never moves (the tables hold
 *    pointers; a freed slot is cleared and reused): the collective layer keeps
 *    &c->g through waits, while another thread's call may grow the table;
 *  - a freed communicator or group handle is detected on its next use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/coll_split.h"
#include "mpi_impl.h"

/* ---- communicators: table ------------------------------------------------------- */

/* The table's entry handle h names, live or freed (NULL: none). */
static mpi_comm *comm_slot(int h)
{
    mpi_state *m = mpi_st();
    if (!h_is(h, K_COMM)) return NULL;
    int i = h_idx(h);
    return i < m->ncomms ? m->comms[i] : NULL;
}

mpi_comm *mpi_comm_get(int h)
{
    mpi_comm *c = comm_slot(h);
    return c && c->used && !c->draining ? c : NULL;
}

bool mpi_comm_freed(int h)
{
    const mpi_comm *c = comm_slot(h);
    return c && (!c->used || c->draining);
}

int mpi_comm_check(cr_job *job, const char *call, MPI_Comm h, mpi_comm **out)
{
    mpi_comm *c = mpi_comm_get(h);
    if (!c)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COMM,
                        h == MPI_COMM_NULL  ? "communicator is MPI_COMM_NULL"
                        : mpi_comm_freed(h) ? "communicator %#x was freed (MPI_Comm_free): "
                                              "use one that is still allocated"
                                            : "communicator %#x is not a valid communicator",
                        (unsigned)h);
    *out = c;
    return 0;
}

int mpi_comm_job_to_rank(mpi_comm *c, int jr)
{
    if (!c->ranks) return jr;
    if (!c->inv) {
        cr_job *job = cr_job_get();
        c->inv = malloc((size_t)job->npeers * sizeof *c->inv);
        if (!c->inv) cr_fatal(job, "MPI", "out of memory for a communicator");
        for (int i = 0; i < job->npeers; i++) c->inv[i] = -1;
        for (int i = 0; i < c->size; i++) c->inv[c->ranks[i]] = i;
    }
    return c->inv[jr];
}

int mpi_comm_job_to_peer(mpi_comm *c, int jr)
{
    if (!c->inter) return mpi_comm_job_to_rank(c, jr);
    if (!c->rinv) {
        cr_job *job = cr_job_get();
        c->rinv = malloc((size_t)job->npeers * sizeof *c->rinv);
        if (!c->rinv) cr_fatal(job, "MPI", "out of memory for a communicator");
        for (int i = 0; i < job->npeers; i++) c->rinv[i] = -1;
        for (int i = 0; i < c->rsize; i++) c->rinv[c->rranks[i]] = i;
    }
    return c->rinv[jr];
}

/* A communicator of the whole job in the world's order (a dup, a split with
 * one color, ...) whose context pair p is one of the first CR_AREA_MPI_MORE_N
 * takes collective area CR_AREA_MPI_MORE + p, as MPI_COMM_WORLD has its own
 * (coll_shm.c; IMB's communicator, 4 ranks on 2 cores, 8-byte allreduce
 * 2.6-4.5 -> 1.6-1.7 us; at 2 ranks as fast as messages). The members agreed
 * on the pair, and a pair is free on all of them only once every member has
 * dropped the communicator that had it before, so no two live communicators
 * share an area. Each starts where that one left the area's generations: every
 * member did the same area collectives on it, so they start alike. */
static void comm_area(cr_job *job, mpi_comm *c)
{
    int p = (c->ctx - MPI_CTX_FIRST_FREE) / 2;
    if (c->ctx < MPI_CTX_FIRST_FREE || p >= CR_AREA_MPI_MORE_N || c->size != job->size ||
        c->g.spans)
        return;
    for (int k = 0; c->ranks && k < c->size; k++)
        if (c->ranks[k] != k) return;
    c->g.ranks = NULL; /* member i is rank i */
    c->g.area = (uint8_t)(CR_AREA_MPI_MORE + p);
    c->g.area_seq = job->mpi->area_seq[p];
    c->g.area_loose = job->mpi->area_loose[p];
}

MPI_Comm mpi_comm_add(cr_job *job, const char *call, int size, int me, int *ranks, int ctx,
                      MPI_Errhandler errh)
{
    int i = job->mpi->comm_free_from > 2 ? job->mpi->comm_free_from : 2;
    while (i < job->mpi->ncomms && job->mpi->comms[i]->used) i++;
    job->mpi->comm_free_from = i + 1;
    if (i == job->mpi->ncomms) {
        if (job->mpi->ncomms % 16 == 0) {
            mpi_comm **n = realloc(job->mpi->comms, (size_t)(job->mpi->ncomms + 16) * sizeof *n);
            if (!n) cr_fatal(job, call, "out of memory for communicators");
            job->mpi->comms = n;
        }
        if (!(job->mpi->comms[i] = malloc(sizeof **job->mpi->comms)))
            cr_fatal(job, call, "out of memory for communicators");
        job->mpi->ncomms++;
    }
    mpi_comm *c = job->mpi->comms[i];
    job->ctx_names_gen++; /* its context may have had another name (comm_ctx_name) */
    *c = (mpi_comm){.used = true,
                    .idx = i,
                    .size = size,
                    .me = me,
                    .ranks = ranks,
                    .ctx = (uint16_t)ctx,
                    .g = {.size = size, .me = me, .ranks = ranks, .ctx = (uint16_t)(ctx + 1)},
                    .errh = errh,
                    .ctx_hint = (ctx - MPI_CTX_FIRST_FREE) / 2 / 64};
    for (int k = 0; ranks && k < size && !c->g.spans; k++) c->g.spans = ranks[k] >= job->size;
    comm_area(job, c);
    return (MPI_Comm)(K_COMM | (unsigned)i);
}

/* The watchdog's name for engine context ctx (job->ctx_name): the
 * communicator whose point-to-point (ctx) or collective (ctx + 1) context it
 * is, by its name (MPI_Comm_set_name's; MPI_COMM_WORLD, MPI_COMM_SELF) or its
 * number; true for the collective one. Called only when a rank reports itself
 * blocked, and then only when the context or ctx_names_gen changed: whatever
 * changes what it says bumps job->ctx_names_gen. */
static bool comm_ctx_name(cr_job *job, uint16_t ctx, char *buf, size_t len)
{
    if (ctx == CR_CTX_MPI_CHECK) { /* --check's own messages: its look at MPI_Finalize, or an
                                      epoch's records (--check=rma), which every member sends */
        snprintf(buf, len, "%s",
                 job->in_call && !strcmp(job->in_call, "MPI_Finalize") ? "MPI_COMM_WORLD"
                                                                       : "the window's group");
        return true;
    }
    for (int i = 0; i < job->mpi->ncomms; i++) {
        const mpi_comm *c = job->mpi->comms[i];
        if (!c || !c->used || (c->ctx != ctx && c->ctx + 1 != ctx)) continue;
        if (c->name[0])
            snprintf(buf, len, "%s", c->name);
        else
            snprintf(buf, len, "communicator #%d", c->idx);
        return c->ctx + 1 == ctx;
    }
    return false;
}

void mpi_comms_init(cr_job *job)
{
    job->ctx_name = comm_ctx_name;
    job->mpi->ctx_used = calloc(MPI_CTX_WORDS, sizeof *job->mpi->ctx_used);
    if (!job->mpi->ctx_used) cr_fatal(job, "MPI_Init", "out of memory for communicator contexts");
    job->mpi->comms = calloc(16, sizeof *job->mpi->comms);
    if (!job->mpi->comms || !(job->mpi->comms[0] = malloc(sizeof **job->mpi->comms)) ||
        !(job->mpi->comms[1] = malloc(sizeof **job->mpi->comms)))
        cr_fatal(job, "MPI_Init", "out of memory for communicators");
    job->mpi->ncomms = 2;
    job->mpi->self_rank[0] = job->rank;
    *job->mpi->comms[0] = (mpi_comm){
        .used = true,
        .size = job->size,
        .me = job->rank,
        .ctx = MPI_CTX_WORLD,
        .g = {.size = job->size, .me = job->rank, .ctx = MPI_CTX_WORLD + 1, .area = CR_AREA_MPI},
        .errh = MPI_ERRORS_ARE_FATAL,
        .name = "MPI_COMM_WORLD"};
    *job->mpi->comms[1] =
        (mpi_comm){.used = true,
                   .idx = 1,
                   .size = 1,
                   .me = 0,
                   .ranks = job->mpi->self_rank,
                   .ctx = MPI_CTX_SELF,
                   .g = {.size = 1, .me = 0, .ranks = job->mpi->self_rank, .ctx = MPI_CTX_SELF + 1},
                   .errh = MPI_ERRORS_ARE_FATAL,
                   .name = "MPI_COMM_SELF"};
    job->mpi->groups = calloc(16, sizeof *job->mpi->groups);
    if (!job->mpi->groups || !(job->mpi->groups[0] = malloc(sizeof **job->mpi->groups)))
        cr_fatal(job, "MPI_Init", "out of memory for groups");
    job->mpi->ngroups = 1; /* 0: MPI_GROUP_EMPTY */
    *job->mpi->groups[0] = (mpi_group){.used = true, .refs = 1};
}

/* This rank's free pairs in word w of the map. */
long mpi_ctx_free_word(long w)
{
    uint64_t f = ~mpi_st()->ctx_used[w];
    if (w == MPI_CTX_WORDS - 1 && MPI_CTX_PAIRS % 64 != 0)
        f &= (UINT64_C(1) << (MPI_CTX_PAIRS % 64)) - 1; /* past the last pair */
    return (long)f;
}

/* Is a receive posted, or does a message wait unreceived, on the pair of
 * contexts that starts at ctx? */
static bool ctx_pending(const cr_job *job, int ctx)
{
    return cr_ctx_in_use(job, (uint16_t)ctx, (uint16_t)(ctx + 1));
}

static void comm_drop(mpi_comm *c);

/* Give back the pairs of freed communicators that have drained. */
void mpi_ctx_reclaim(cr_job *job)
{
    for (int i = 2; job->mpi->ndraining && i < job->mpi->ncomms; i++) {
        mpi_comm *c = job->mpi->comms[i];
        if (c->used && c->draining && !ctx_pending(job, c->ctx)) comm_drop(c);
    }
}

/* This rank uses the pair now; its point-to-point context. */
int mpi_ctx_take(int pair)
{
    mpi_state *m = mpi_st();
    m->ctx_used[pair / 64] |= UINT64_C(1) << (pair % 64);
    if (pair / 64 + 1 > m->ctx_words) m->ctx_words = pair / 64 + 1;
    return MPI_CTX_FIRST_FREE + 2 * pair;
}

static void ctx_give_back(int ctx)
{
    int pair = (ctx - MPI_CTX_FIRST_FREE) / 2;
    mpi_st()->ctx_used[pair / 64] &= ~(UINT64_C(1) << (pair % 64));
}

void mpi_ctx_untake(int pair)
{
    ctx_give_back(MPI_CTX_FIRST_FREE + 2 * pair);
}

/* ---- agreeing on a pair among the threads of this rank (mpi_impl.h) ------------- */

uint64_t mpi_agree_prio(int ctx, int tag)
{
    return (uint64_t)(uint16_t)ctx << 32 | ((uint32_t)tag + 1u);
}

void mpi_agree_begin(mpi_agree *a, uint64_t prio)
{
    mpi_state *m = mpi_st();
    *a = (mpi_agree){.next = m->agreeing, .prio = prio};
    m->agreeing = a;
}

bool mpi_agree_round(mpi_agree *a)
{
    mpi_state *m = mpi_st();
    a->offers = false;
    if (m->offering) return false;
    for (const mpi_agree *o = m->agreeing; o; o = o->next)
        if (o != a && o->prio < a->prio) return false; /* it goes first */
    m->offering = a;
    a->offers = true;
    return true;
}

void mpi_agree_offered(mpi_agree *a, const long *words, long lo, long n)
{
    a->offer = words;
    a->offer_lo = lo;
    a->offer_n = n;
}

void mpi_agree_round_end(mpi_agree *a, int pair)
{
    mpi_state *m = mpi_st();
    if (pair >= 0) mpi_ctx_take(pair);
    if (m->offering == a) m->offering = NULL;
    a->offers = false;
    a->offer = NULL;
    a->offer_n = 0;
}

void mpi_agree_end(mpi_agree *a)
{
    mpi_agree_round_end(a, -1);
    mpi_agree **pp = &mpi_st()->agreeing;
    while (*pp != a) pp = &(*pp)->next;
    *pp = a->next;
}

long mpi_ctx_spare_word(long w)
{
    long f = mpi_ctx_free_word(w);
    const mpi_agree *o = mpi_st()->offering;
    if (o && o->offer && w >= o->offer_lo && w < o->offer_lo + o->offer_n)
        f &= ~o->offer[w - o->offer_lo];
    return f;
}

/* The rest of an offering round of agree_ctx, when every member offered but
 * no pair of the hint word is free on all: look at every word any member has
 * used, plus one none has touched. The lowest pair free on all, or -1. */
static int agree_wide(cr_job *job, const char *call, mpi_comm *parent, mpi_agree *a)
{
    cr_redop band = CR_OP_PREDEF(cr_op_band_long, long), mx = CR_OP_PREDEF(cr_op_max_long, long);
    long words = job->mpi->ctx_words;
    cr_coll_allreduce(job, &parent->g, call, &words, &words, 1, &mx);
    if (words < MPI_CTX_WORDS) words++; /* one word none has touched yet */
    long *fr = malloc(2 * (size_t)words * sizeof *fr), *offer = fr + words;
    if (!fr) cr_fatal(job, call, "out of memory");
    for (long w = 0; w < words; w++) offer[w] = fr[w] = mpi_ctx_free_word(w);
    mpi_agree_offered(a, offer, 0, words);
    cr_coll_allreduce(job, &parent->g, call, fr, fr, (size_t)words, &band);
    int pair = -1;
    for (long w = 0; w < words && pair < 0; w++)
        if (fr[w]) pair = (int)(w * 64) + __builtin_ctzll((unsigned long long)fr[w]);
    mpi_agree_round_end(a, pair); /* (before the offer's storage goes) */
    free(fr);
    if (pair >= 0) parent->ctx_hint = pair / 64;
    return pair;
}

/* A pair for a communicator of one member, which needs no other rank: the
 * lowest free here and outside the offer another thread of this rank may have
 * out now (mpi_ctx_spare_word), taken at once; -1 when there is none. Never a
 * round: with threads, a round over one member that cannot offer (another
 * thread's agreement holds the offer while it waits for a member whose thread
 * is here, in an MPI_Comm_dup of MPI_COMM_SELF under the program's own mutex)
 * would be tried again forever (MPICH's threads/comm/comm_dup_deadlock). */
static int ctx_alone(cr_job *job)
{
    if (job->mpi->ndraining) mpi_ctx_reclaim(job);
    for (long w = 0; w < MPI_CTX_WORDS; w++) {
        long f = mpi_ctx_spare_word(w);
        if (!f) continue;
        int pair = (int)(w * 64) + __builtin_ctzll((unsigned long long)f);
        mpi_ctx_take(pair);
        return pair;
    }
    return -1;
}

/* Agree with the parent's members on a context pair free on all of them, and
 * take it (mpi_ctx_untake gives it back if the caller does not use it); -1
 * when there is none. Collective over the parent: every member gets the same
 * answer (and the parent's hint moves the same way on each). Each round first
 * ANDs one word of the map, with a second word that says whether every member
 * offered (mpi_impl.h: several threads may be agreeing at once); a round in
 * which one did not is tried again. */
static int agree_ctx(cr_job *job, const char *call, mpi_comm *parent)
{
    if (parent->size == 1) return ctx_alone(job);
    cr_redop band = CR_OP_PREDEF(cr_op_band_long, long);
    mpi_agree a;
    mpi_agree_begin(&a, mpi_agree_prio(parent->ctx, -1));
    int pair = -2;
    while (pair == -2) {
        if (job->mpi->ndraining) mpi_ctx_reclaim(job);
        bool offers = mpi_agree_round(&a);
        long hint = parent->ctx_hint, mine = offers ? mpi_ctx_free_word(hint) : 0;
        long one[2] = {mine, offers ? -1L : 0};
        mpi_agree_offered(&a, &mine, hint, 1);
        cr_coll_allreduce(job, &parent->g, call, one, one, 2, &band);
        if (one[0])
            pair = (int)(hint * 64) + __builtin_ctzll((unsigned long long)one[0]);
        else if (one[1])
            pair = agree_wide(job, call, parent, &a);
        mpi_agree_round_end(&a, pair);
    }
    mpi_agree_end(&a);
    return pair;
}

int mpi_no_ctx(cr_job *job, MPI_Comm comm, const char *call)
{
    int used = 0;
    for (int w = 0; w < job->mpi->ctx_words; w++)
        used += __builtin_popcountll(job->mpi->ctx_used[w]);
    return mpi_fail(job, comm, call, MPI_ERR_INTERN,
                    "no communicator context is free on every member (this rank uses %d of %d, "
                    "%d of them by freed communicators with receives or messages still pending): "
                    "free communicators no longer needed with MPI_Comm_free, and complete or "
                    "cancel receives left pending on freed ones",
                    used, MPI_CTX_PAIRS, job->mpi->ndraining);
}

/* ---- communicator calls --------------------------------------------------------- */

PMPI_WEAK(Comm_rank);
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    cr_job *job = mpi_enter("MPI_Comm_rank");
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, "MPI_Comm_rank", comm, &c);
    if (!rc && !rank) rc = mpi_fail(job, comm, "MPI_Comm_rank", MPI_ERR_ARG, "rank is NULL");
    if (rc) return mpi_leave(job, rc);
    *rank = c->me;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_size);
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    cr_job *job = mpi_enter("MPI_Comm_size");
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, "MPI_Comm_size", comm, &c);
    if (!rc && !size) rc = mpi_fail(job, comm, "MPI_Comm_size", MPI_ERR_ARG, "size is NULL");
    if (rc) return mpi_leave(job, rc);
    *size = c->size;
    return mpi_leave(job, MPI_SUCCESS);
}

static int *ranks_copy(cr_job *job, const char *call, const mpi_comm *c)
{
    int *r = malloc((size_t)c->size * sizeof *r);
    if (!r) cr_fatal(job, call, "out of memory");
    for (int i = 0; i < c->size; i++) r[i] = comm_rank_to_job(c, i);
    return r;
}

static void comm_release(cr_job *job, MPI_Comm h);

PMPI_WEAK(Comm_dup);
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_dup";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && !newcomm) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "newcomm is NULL");
    if (rc) return mpi_leave(job, rc);
    MPI_Comm nh;
    if (c->inter) {
        rc = mpi_inter_dup(job, call, comm, &nh);
        if (rc) return mpi_leave(job, rc);
    } else {
        int pair = agree_ctx(job, call, c);
        if (pair < 0) return mpi_leave(job, mpi_no_ctx(job, comm, call));
        int ctx = mpi_ctx_take(pair);
        int *ranks = ranks_copy(job, call, c);
        c = mpi_comm_get(comm);
        nh = mpi_comm_add(job, call, c->size, c->me, ranks, ctx, c->errh);
        mpi_comm_get(nh)->session = c->session; /* a session's buffer (mpi_buf.c) */
    }
    mpi_topo_dup(comm, nh); /* topology and info hints (mpi_topo.c) */
    int kv = 0;
    rc = mpi_attrs_copy(job, MPI_OBJ_COMM, comm, nh, &kv);
    if (rc != MPI_SUCCESS) { /* no new communicator: undo what was copied */
        int ignored;
        mpi_attrs_delete(job, MPI_OBJ_COMM, nh, &ignored);
        comm_release(job, nh);
        *newcomm = MPI_COMM_NULL;
        return mpi_leave(job,
                         mpi_fail(job, comm, call, mpi_attr_cb_class(rc),
                                  "the copy callback of keyval %#x returned %d", (unsigned)kv, rc));
    }
    *newcomm = nh;
    return mpi_leave(job, MPI_SUCCESS);
}

/* The split of intracommunicator comm (arguments checked); an MPI code. */
static int comm_split(cr_job *job, const char *call, MPI_Comm comm, int color, int key,
                      MPI_Comm *newcomm)
{
    mpi_comm *c = mpi_comm_get(comm);
    int pair = agree_ctx(job, call, c);
    if (pair < 0) return mpi_no_ctx(job, comm, call);
    c = mpi_comm_get(comm);
    int *ranks, me;
    int m = cr_split(job, &c->g, call, color, key, 0, NULL, &ranks, &me);
    if (color == MPI_UNDEFINED) {
        free(ranks);
        mpi_ctx_untake(pair);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < m; i++) ranks[i] = comm_rank_to_job(c, ranks[i]);
    *newcomm = mpi_comm_add(job, call, m, me, ranks, mpi_ctx_take(pair), c->errh);
    mpi_comm_get(*newcomm)->session = c->session;
    return MPI_SUCCESS;
}

PMPI_WEAK(Comm_split);
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_split";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && !newcomm) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "newcomm is NULL");
    if (!rc && color < 0 && color != MPI_UNDEFINED)
        rc = mpi_fail(job, comm, call, MPI_ERR_ARG,
                      "color %d is invalid: colors are >= 0 or MPI_UNDEFINED", color);
    if (rc) return mpi_leave(job, rc);
    if (c->inter) return mpi_leave(job, mpi_inter_split(job, call, comm, color, key, newcomm));
    return mpi_leave(job, comm_split(job, call, comm, color, key, newcomm));
}

/* MPI_COMM_TYPE_SHARED: the ranks of one host (job->host_of, which
 * COURIER_TEST_HOSTS splits into pretend hosts) share memory. The hardware
 * levels (HW_GUIDED, RESOURCE_GUIDED, HW_UNGUIDED) are mpi_hw.c's (on an
 * intercommunicator HW_UNGUIDED's level is chosen in each group). On an
 * intercommunicator (MPI-4.1 §8.4.2) the result is an intercommunicator, as
 * MPI_Comm_split by the instance gives: the local group's ranks of one
 * instance with the remote group's ranks of that same instance, and
 * MPI_COMM_NULL where the other group has none. */
PMPI_WEAK(Comm_split_type);
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_split_type";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && !newcomm) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "newcomm is NULL");
    bool hw = split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_HW_UNGUIDED ||
              split_type == MPI_COMM_TYPE_RESOURCE_GUIDED;
    if (!rc && !hw && split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
        rc = mpi_fail(job, comm, call, MPI_ERR_ARG,
                      "split_type %d is invalid: courier knows MPI_COMM_TYPE_SHARED (%d), "
                      "MPI_COMM_TYPE_HW_UNGUIDED (%d), MPI_COMM_TYPE_HW_GUIDED (%d), "
                      "MPI_COMM_TYPE_RESOURCE_GUIDED (%d) and MPI_UNDEFINED",
                      split_type, MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_UNGUIDED,
                      MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_RESOURCE_GUIDED);
    if (!rc) rc = mpi_info_arg(job, comm, call, info, true);
    if (rc) return mpi_leave(job, rc);
    int color = split_type == MPI_UNDEFINED ? MPI_UNDEFINED : job->host_of[job->rank];
    const char *level = NULL;
    if (hw) color = mpi_hw_split_color(job, call, &c->g, split_type, info, &level);
    rc = mpi_leave(job, c->inter ? mpi_inter_split(job, call, comm, color, key, newcomm)
                                 : comm_split(job, call, comm, color, key, newcomm));
    /* MPI-4.1: HW_UNGUIDED tells in the info given which level it split by */
    if (!rc && level && info != MPI_INFO_NULL && *newcomm != MPI_COMM_NULL)
        rc = PMPI_Info_set(info, "mpi_hw_resource_type", level);
    return rc;
}

mpi_group *mpi_group_get(int h)
{
    mpi_state *m = mpi_st();
    if (!h_is(h, K_GROUP)) return NULL;
    int i = h_idx(h);
    if (i >= m->ngroups || !m->groups[i]->used) return NULL;
    return m->groups[i];
}

int mpi_group_check(cr_job *job, const char *call, MPI_Group h, mpi_group **out)
{
    mpi_group *g = mpi_group_get(h);
    if (!g)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_GROUP,
                        h == MPI_GROUP_NULL ? "group is MPI_GROUP_NULL"
                                            : "group %#x is not a valid group",
                        (unsigned)h);
    *out = g;
    return 0;
}

PMPI_WEAK(Comm_create);
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_create";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_group *g = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = mpi_group_check(job, call, group, &g);
    if (!rc && !newcomm) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "newcomm is NULL");
    for (int i = 0; !rc && i < g->size; i++)
        if (mpi_comm_job_to_rank(c, g->ranks[i]) < 0)
            rc = mpi_fail(job, comm, call, MPI_ERR_GROUP,
                          "member %d of the group is not in the communicator%s", i,
                          c->inter ? "'s local group" : "");
    if (rc) return mpi_leave(job, rc);
    if (c->inter) return mpi_leave(job, mpi_inter_create(job, call, comm, group, newcomm));
    int pair = agree_ctx(job, call, c);
    if (pair < 0) return mpi_leave(job, mpi_no_ctx(job, comm, call));
    c = mpi_comm_get(comm);
    g = mpi_group_get(group);
    int me = -1;
    for (int i = 0; i < g->size; i++)
        if (g->ranks[i] == job->rank) me = i;
    if (me < 0) {
        mpi_ctx_untake(pair);
        *newcomm = MPI_COMM_NULL;
        return mpi_leave(job, MPI_SUCCESS);
    }
    int *ranks = malloc((size_t)g->size * sizeof *ranks);
    if (!ranks) cr_fatal(job, call, "out of memory");
    memcpy(ranks, g->ranks, (size_t)g->size * sizeof *ranks);
    *newcomm = mpi_comm_add(job, call, g->size, me, ranks, mpi_ctx_take(pair), c->errh);
    mpi_comm_get(*newcomm)->session = c->session;
    return mpi_leave(job, MPI_SUCCESS);
}

/* Among the n members r[0..n) (this rank is r[me]), which have no group of
 * their own: v = the element-wise AND (or MAX) of every member's v, through a
 * binomial tree to member 0 and back, on context ctx with tag 'tag'. */
static void tagged_allreduce(cr_job *job, const char *call, const int *r, int n, int me,
                             uint16_t ctx, int32_t tag, long *v, size_t cnt, bool max)
{
    long *tmp = malloc(cnt * sizeof *tmp);
    if (!tmp) cr_fatal(job, call, "out of memory");
    cr_status st;
    int mask = 1;
    for (; mask < n; mask <<= 1) {
        if (me & mask) {
            cr_send(job, call, r[me - mask], ctx, tag, v, cnt * sizeof *v);
            break;
        }
        if (me + mask < n) {
            cr_sel sel = {.src = r[me + mask], .ctx = ctx, .tag_mode = CR_TAG_EXACT, .tag = tag};
            cr_recv(job, call, &sel, tmp, cnt * sizeof *tmp, &st);
            for (size_t i = 0; i < cnt; i++)
                v[i] = max ? (tmp[i] > v[i] ? tmp[i] : v[i]) : v[i] & tmp[i];
        }
    }
    if (me) {
        cr_sel sel = {.src = r[me - mask], .ctx = ctx, .tag_mode = CR_TAG_EXACT, .tag = tag};
        cr_recv(job, call, &sel, v, cnt * sizeof *v, &st);
    }
    for (mask >>= 1; mask >= 1; mask >>= 1)
        if (me + mask < n) cr_send(job, call, r[me + mask], ctx, tag, v, cnt * sizeof *v);
    free(tmp);
}

/* MPI-3.1 §6.4.2: only the members of group call, so the pair is agreed among
 * them alone (not over comm): on comm's collective context with a negative tag
 * made from the program's (comm's own collectives use tags >= 0), so that
 * calls of disjoint groups, or with different tags, never mix. */
PMPI_WEAK(Comm_create_group);
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_create_group";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_group *g = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && c->inter)
        rc = mpi_fail(job, comm, call, MPI_ERR_COMM,
                      "the communicator is an intercommunicator: MPI_Comm_create_group takes an "
                      "intracommunicator");
    if (!rc) rc = mpi_group_check(job, call, group, &g);
    if (!rc && !newcomm) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "newcomm is NULL");
    if (!rc && tag < 0)
        rc = mpi_fail(job, comm, call, MPI_ERR_TAG, "tag %d is invalid: tags are 0..%d", tag,
                      INT32_MAX);
    for (int i = 0; !rc && i < g->size; i++)
        if (mpi_comm_job_to_rank(c, g->ranks[i]) < 0)
            rc = mpi_fail(job, comm, call, MPI_ERR_GROUP,
                          "member %d of the group is not in the communicator", i);
    if (rc) return mpi_leave(job, rc);
    int me = -1, n = g->size;
    for (int i = 0; i < n; i++)
        if (g->ranks[i] == job->rank) me = i;
    if (me < 0) { /* not a member (MPI_GROUP_EMPTY included): nothing to agree */
        *newcomm = MPI_COMM_NULL;
        return mpi_leave(job, MPI_SUCCESS);
    }
    int *ranks = malloc((size_t)n * sizeof *ranks);
    if (!ranks) cr_fatal(job, call, "out of memory");
    memcpy(ranks, g->ranks, (size_t)n * sizeof *ranks);
    uint16_t ctx = (uint16_t)(c->ctx + 1);
    int32_t ttag = -1 - tag;
    /* Rounds as agree_ctx's (several threads may agree at once): the words
     * any member uses plus one, and after them a word that says whether every
     * member offered its free pairs. */
    mpi_agree a;
    mpi_agree_begin(&a, mpi_agree_prio(c->ctx, tag));
    int pair = n == 1 ? ctx_alone(job) : -2;
    while (pair == -2) {
        if (job->mpi->ndraining) mpi_ctx_reclaim(job);
        long words = job->mpi->ctx_words;
        tagged_allreduce(job, call, ranks, n, me, ctx, ttag, &words, 1, true);
        if (words < MPI_CTX_WORDS) words++; /* one word none has touched yet */
        bool offers = mpi_agree_round(&a);
        long *fr = malloc((2 * (size_t)words + 1) * sizeof *fr), *offer = fr + words + 1;
        if (!fr) cr_fatal(job, call, "out of memory");
        for (long w = 0; w < words; w++) offer[w] = fr[w] = offers ? mpi_ctx_free_word(w) : 0;
        fr[words] = offers ? -1L : 0;
        mpi_agree_offered(&a, offer, 0, words);
        tagged_allreduce(job, call, ranks, n, me, ctx, ttag, fr, (size_t)words + 1, false);
        pair = fr[words] ? -1 : -2;
        for (long w = 0; w < words && pair < 0; w++)
            if (fr[w]) pair = (int)(w * 64) + __builtin_ctzll((unsigned long long)fr[w]);
        mpi_agree_round_end(&a, pair);
        free(fr);
    }
    mpi_agree_end(&a);
    if (pair < 0) {
        free(ranks);
        return mpi_leave(job, mpi_no_ctx(job, comm, call));
    }
    c = mpi_comm_get(comm);
    *newcomm = mpi_comm_add(job, call, n, me, ranks, mpi_ctx_take(pair), c->errh);
    mpi_comm_get(*newcomm)->session = c->session;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_free);
int PMPI_Comm_free(MPI_Comm *comm)
{
    const char *call = "MPI_Comm_free";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    if (!comm)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                          "the comm argument is NULL: pass the address of a communicator handle"));
    int rc = mpi_comm_check(job, call, *comm, &c);
    if (rc) return mpi_leave(job, rc);
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return mpi_leave(job, mpi_fail(job, *comm, call, MPI_ERR_COMM,
                                       "%s is predefined and cannot be freed", c->name));
    int kv = 0;
    rc = mpi_attrs_delete(job, MPI_OBJ_COMM, *comm, &kv);
    if (rc != MPI_SUCCESS)
        return mpi_leave(job, mpi_fail(job, *comm, call, mpi_attr_cb_class(rc),
                                       "the delete callback of keyval %#x returned %d: the "
                                       "communicator is not freed",
                                       (unsigned)kv, rc));
    comm_release(job, *comm);
    *comm = MPI_COMM_NULL;
    return mpi_leave(job, MPI_SUCCESS);
}

/* Give back a communicator's context pair and table slot. */
static void comm_drop(mpi_comm *c)
{
    mpi_state *m = mpi_st();
    if (c->draining) m->ndraining--;
    if (c->g.area >= CR_AREA_MPI_MORE) { /* the next user of the area starts there */
        m->area_seq[c->g.area - CR_AREA_MPI_MORE] = c->g.area_seq;
        m->area_loose[c->g.area - CR_AREA_MPI_MORE] = c->g.area_loose;
    }
    ctx_give_back(c->ctx);
    cr_job_get()->ctx_names_gen++; /* its contexts have no name now (comm_ctx_name) */
    free(c->ranks);
    free(c->inv);
    free(c->rranks);
    free(c->rinv);
    free((void *)c->ig.ranks);
    mpi_attrs_forget(&c->attrs, MPI_OBJ_COMM);
    mpi_topo_free(c);         /* topology and info hints (mpi_topo.c) */
    mpi_bpool_forget(c->idx); /* its attached buffer (mpi_buf.c) */
    int i = c->idx;
    *c = (mpi_comm){.idx = i};
    if (i < m->comm_free_from) m->comm_free_from = i;
}

/* The handle dies now; the pair and slot too unless traffic on it is pending
 * here (then it drains: see the invariants above). */
static void comm_release(cr_job *job, MPI_Comm h)
{
    mpi_comm *c = mpi_comm_get(h);
    if (!ctx_pending(job, c->ctx)) {
        comm_drop(c);
        return;
    }
    mpi_attrs_forget(&c->attrs, MPI_OBJ_COMM);
    c->draining = true;
    job->mpi->ndraining++;
}

/* 0: identical lists, 1: same members in another order, 2: different. */
static int lists_compare(const int *a, int na, const int *b, int nb)
{
    if (na != nb) return 2;
    bool same = true;
    for (int i = 0; i < na; i++) same = same && a[i] == b[i];
    if (same) return 0;
    for (int i = 0; i < na; i++) {
        bool found = false;
        for (int j = 0; j < nb && !found; j++) found = a[i] == b[j];
        if (!found) return 2;
    }
    return 1;
}

PMPI_WEAK(Comm_compare);
int PMPI_Comm_compare(MPI_Comm c1, MPI_Comm c2, int *result)
{
    const char *call = "MPI_Comm_compare";
    cr_job *job = mpi_enter(call);
    mpi_comm *a = NULL, *b = NULL;
    int rc = mpi_comm_check(job, call, c1, &a);
    if (!rc) rc = mpi_comm_check(job, call, c2, &b);
    if (!rc && !result) rc = mpi_fail(job, c1, call, MPI_ERR_ARG, "result is NULL");
    if (rc) return mpi_leave(job, rc);
    if (c1 == c2) {
        *result = MPI_IDENT;
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (a->inter != b->inter) {
        *result = MPI_UNEQUAL;
        return mpi_leave(job, MPI_SUCCESS);
    }
    int *ra = ranks_copy(job, call, a), *rb = ranks_copy(job, call, b);
    int k = lists_compare(ra, a->size, rb, b->size);
    free(ra);
    free(rb);
    if (a->inter) { /* both groups: the worse of the two comparisons */
        int kr = lists_compare(a->rranks, a->rsize, b->rranks, b->rsize);
        if (kr > k) k = kr;
    }
    *result = k == 0 ? MPI_CONGRUENT : k == 1 ? MPI_SIMILAR : MPI_UNEQUAL;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_test_inter);
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    cr_job *job = mpi_enter("MPI_Comm_test_inter");
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, "MPI_Comm_test_inter", comm, &c);
    if (!rc && !flag) rc = mpi_fail(job, comm, "MPI_Comm_test_inter", MPI_ERR_ARG, "flag is NULL");
    if (rc) return mpi_leave(job, rc);
    *flag = c->inter;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_set_name);
int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    cr_job *job = mpi_enter("MPI_Comm_set_name");
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, "MPI_Comm_set_name", comm, &c);
    if (!rc && !name) rc = mpi_fail(job, comm, "MPI_Comm_set_name", MPI_ERR_ARG, "name is NULL");
    if (rc) return mpi_leave(job, rc);
    snprintf(c->name, sizeof c->name, "%s", name);
    job->ctx_names_gen++; /* the board's name for its contexts (comm_ctx_name) */
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_get_name);
int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    cr_job *job = mpi_enter("MPI_Comm_get_name");
    mpi_comm *c = NULL;
    /* MPI-4.1: the null handle has a name too, its own */
    int rc = comm == MPI_COMM_NULL ? 0 : mpi_comm_check(job, "MPI_Comm_get_name", comm, &c);
    if (!rc && (!name || !resultlen))
        rc = mpi_fail(job, comm, "MPI_Comm_get_name", MPI_ERR_ARG, "name or resultlen is NULL");
    if (rc) return mpi_leave(job, rc);
    *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c ? c->name : "MPI_COMM_NULL");
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- attributes ------------------------------------------------------------------ */

/* The keyvals and the lists are mpi_attr.c's, shared with datatypes and
 * windows; here are the calls, their checks and MPI_COMM_SELF at finalize. */

int MPI_COMM_DUP_FN(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_DUP_FN(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    return MPI_COMM_DUP_FN(oldcomm, keyval, extra, in, out, flag);
}

static int create_keyval(const char *call, MPI_Comm_copy_attr_function *copy,
                         MPI_Comm_delete_attr_function *del, int *keyval_out, void *extra)
{
    cr_job *job = mpi_enter(call);
    if (!keyval_out)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "keyval is NULL"));
    *keyval_out = mpi_keyval_create(job, call, MPI_OBJ_COMM, copy, del, extra);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_create_keyval);
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                            int *keyval_out, void *extra)
{
    return create_keyval("MPI_Comm_create_keyval", copy, del, keyval_out, extra);
}

/* MPI-1 (deprecated): the same keyvals; MPI_Copy_function and
 * MPI_Delete_function have the signatures of the MPI-2 callbacks. */
PMPI_WEAK(Keyval_create);
int PMPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval_out,
                       void *extra)
{
    return create_keyval("MPI_Keyval_create", copy, del, keyval_out, extra);
}

static int free_keyval(const char *call, int *kv)
{
    cr_job *job = mpi_enter(call);
    if (!mpi_keyval_free(kv, MPI_OBJ_COMM))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_KEYVAL,
                                       "not a keyval from MPI_Comm_create_keyval, or one freed "
                                       "already"));
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_free_keyval);
int PMPI_Comm_free_keyval(int *kv)
{
    return free_keyval("MPI_Comm_free_keyval", kv);
}

PMPI_WEAK(Keyval_free);
int PMPI_Keyval_free(int *kv)
{
    return free_keyval("MPI_Keyval_free", kv);
}

int mpi_comm_self_finalize(cr_job *job)
{
    int kv = 0, rc = mpi_attrs_delete(job, MPI_OBJ_COMM, MPI_COMM_SELF, &kv);
    if (rc != MPI_SUCCESS)
        return mpi_fail(job, MPI_COMM_SELF, "MPI_Finalize", mpi_attr_cb_class(rc),
                        "the delete callback of keyval %#x on MPI_COMM_SELF returned %d",
                        (unsigned)kv, rc);
    return MPI_SUCCESS;
}

static int get_attr(const char *call, MPI_Comm comm, int kv, void *val, int *flag)
{
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && (!val || !flag))
        rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "attribute_val or flag is NULL");
    if (rc) return mpi_leave(job, rc);
    /* The values live on after the call (the caller gets pointers to them,
     * into the job's MPI state), and are set again at each call, whatever the
     * program did to them. MPI_LASTUSEDCODE is job->mpi->last_code, which
     * MPI_Add_error_class/code move. MPI_WTIME_IS_GLOBAL is 0: the ranks read
     * one host's clock today, but nothing promises synchronized clocks once
     * jobs span hosts. */
    mpi_state *m = job->mpi;
    m->attrv.tag_ub = INT32_MAX;
    m->attrv.host = MPI_PROC_NULL;
    m->attrv.io = MPI_ANY_SOURCE; /* every rank can do I/O */
    m->attrv.wtime_global = 0;
    m->attrv.universe = job->size;
    m->attrv.appnum = job->appnum;
    int *p = NULL;
    switch (kv) {
    case MPI_TAG_UB:
        p = &m->attrv.tag_ub;
        break;
    case MPI_HOST:
        p = &m->attrv.host;
        break;
    case MPI_IO:
        p = &m->attrv.io;
        break;
    case MPI_WTIME_IS_GLOBAL:
        p = &m->attrv.wtime_global;
        break;
    case MPI_UNIVERSE_SIZE:
        p = &m->attrv.universe;
        break;
    case MPI_APPNUM:
        p = &m->attrv.appnum;
        break;
    case MPI_LASTUSEDCODE:
        p = &m->last_code;
        break;
    default:
        break;
    }
    if (p) {
        *(int **)val = p;
        *flag = 1;
        return mpi_leave(job, MPI_SUCCESS);
    }
    mpi_attr *a = mpi_attr_find(MPI_OBJ_COMM, comm, kv);
    if (!a && !mpi_keyval_live(kv, MPI_OBJ_COMM))
        return mpi_leave(job, mpi_fail(job, comm, call, MPI_ERR_KEYVAL,
                                       "keyval %#x is not a valid keyval", (unsigned)kv));
    *flag = a != NULL;
    if (a) *(void **)val = a->val;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_get_attr);
int PMPI_Comm_get_attr(MPI_Comm comm, int kv, void *val, int *flag)
{
    return get_attr("MPI_Comm_get_attr", comm, kv, val, flag);
}

PMPI_WEAK(Attr_get);
int PMPI_Attr_get(MPI_Comm comm, int kv, void *val, int *flag)
{
    return get_attr("MPI_Attr_get", comm, kv, val, flag);
}

static int set_attr(const char *call, MPI_Comm comm, int kv, void *val)
{
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && !mpi_keyval_live(kv, MPI_OBJ_COMM))
        rc = mpi_fail(job, comm, call, MPI_ERR_KEYVAL,
                      "keyval %#x is not from MPI_Comm_create_keyval (predefined attributes are "
                      "read-only)",
                      (unsigned)kv);
    if (rc) return mpi_leave(job, rc);
    rc = mpi_attr_set(job, MPI_OBJ_COMM, comm, kv, val);
    if (rc != MPI_SUCCESS)
        rc = mpi_fail(job, comm, call, mpi_attr_cb_class(rc),
                      "the delete callback of keyval %#x returned %d: the old value stays",
                      (unsigned)kv, rc);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Comm_set_attr);
int PMPI_Comm_set_attr(MPI_Comm comm, int kv, void *val)
{
    return set_attr("MPI_Comm_set_attr", comm, kv, val);
}

PMPI_WEAK(Attr_put);
int PMPI_Attr_put(MPI_Comm comm, int kv, void *val)
{
    return set_attr("MPI_Attr_put", comm, kv, val);
}

static int delete_attr(const char *call, MPI_Comm comm, int kv)
{
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && !mpi_attr_find(MPI_OBJ_COMM, comm, kv))
        rc =
            mpi_fail(job, comm, call, MPI_ERR_KEYVAL, "keyval %#x has no value here", (unsigned)kv);
    if (rc) return mpi_leave(job, rc);
    rc = mpi_attr_delete(job, MPI_OBJ_COMM, comm, kv);
    if (rc != MPI_SUCCESS)
        rc = mpi_fail(job, comm, call, mpi_attr_cb_class(rc),
                      "the delete callback of keyval %#x returned %d: the attribute stays",
                      (unsigned)kv, rc);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Comm_delete_attr);
int PMPI_Comm_delete_attr(MPI_Comm comm, int kv)
{
    return delete_attr("MPI_Comm_delete_attr", comm, kv);
}

PMPI_WEAK(Attr_delete);
int PMPI_Attr_delete(MPI_Comm comm, int kv)
{
    return delete_attr("MPI_Attr_delete", comm, kv);
}

/* ---- groups --------------------------------------------------------------------- */

MPI_Group mpi_group_add(cr_job *job, const char *call, int *ranks, int size)
{
    if (size == 0) {
        free(ranks);
        return MPI_GROUP_EMPTY;
    }
    int i = 1;
    while (i < job->mpi->ngroups && job->mpi->groups[i]->used) i++;
    if (i == job->mpi->ngroups) {
        if (job->mpi->ngroups % 16 == 0) {
            mpi_group **n = realloc(job->mpi->groups, (size_t)(job->mpi->ngroups + 16) * sizeof *n);
            if (!n) cr_fatal(job, call, "out of memory for groups");
            job->mpi->groups = n;
        }
        if (!(job->mpi->groups[i] = malloc(sizeof **job->mpi->groups)))
            cr_fatal(job, call, "out of memory for groups");
        job->mpi->ngroups++;
    }
    *job->mpi->groups[i] = (mpi_group){.used = true, .refs = 1, .size = size, .ranks = ranks};
    return (MPI_Group)(K_GROUP | (unsigned)i);
}

static int *ints(cr_job *job, const char *call, int n)
{
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) cr_fatal(job, call, "out of memory");
    return p;
}

PMPI_WEAK(Comm_group);
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    const char *call = "MPI_Comm_group";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && !group) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "group is NULL");
    if (rc) return mpi_leave(job, rc);
    *group = mpi_group_add(job, call, ranks_copy(job, call, c), c->size);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Group_size);
int PMPI_Group_size(MPI_Group group, int *size)
{
    cr_job *job = mpi_enter("MPI_Group_size");
    mpi_group *g = NULL;
    int rc = mpi_group_check(job, "MPI_Group_size", group, &g);
    if (!rc && !size)
        rc = mpi_fail(job, MPI_COMM_WORLD, "MPI_Group_size", MPI_ERR_ARG, "size is NULL");
    if (rc) return mpi_leave(job, rc);
    *size = g->size;
    return mpi_leave(job, MPI_SUCCESS);
}

static int group_rank_of(const mpi_group *g, int jr)
{
    for (int i = 0; i < g->size; i++)
        if (g->ranks[i] == jr) return i;
    return MPI_UNDEFINED;
}

PMPI_WEAK(Group_rank);
int PMPI_Group_rank(MPI_Group group, int *rank)
{
    cr_job *job = mpi_enter("MPI_Group_rank");
    mpi_group *g = NULL;
    int rc = mpi_group_check(job, "MPI_Group_rank", group, &g);
    if (!rc && !rank)
        rc = mpi_fail(job, MPI_COMM_WORLD, "MPI_Group_rank", MPI_ERR_ARG, "rank is NULL");
    if (rc) return mpi_leave(job, rc);
    *rank = group_rank_of(g, job->rank);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Group_translate_ranks);
int PMPI_Group_translate_ranks(MPI_Group g1, int n, const int r1[], MPI_Group g2, int r2[])
{
    const char *call = "MPI_Group_translate_ranks";
    cr_job *job = mpi_enter(call);
    mpi_group *a = NULL, *b = NULL;
    int rc = mpi_group_check(job, call, g1, &a);
    if (!rc) rc = mpi_group_check(job, call, g2, &b);
    if (!rc && n < 0) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COUNT, "n %d < 0", n);
    if (!rc && n && (!r1 || !r2))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "ranks1 or ranks2 is NULL but n is %d", n);
    for (int i = 0; !rc && i < n; i++)
        if (r1[i] != MPI_PROC_NULL && (r1[i] < 0 || r1[i] >= a->size))
            rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_RANK,
                          "rank %d is not in the first group (size %d)", r1[i], a->size);
    if (rc) return mpi_leave(job, rc);
    for (int i = 0; i < n; i++)
        r2[i] = r1[i] == MPI_PROC_NULL ? MPI_PROC_NULL : group_rank_of(b, a->ranks[r1[i]]);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Group_compare);
int PMPI_Group_compare(MPI_Group g1, MPI_Group g2, int *result)
{
    const char *call = "MPI_Group_compare";
    cr_job *job = mpi_enter(call);
    mpi_group *a = NULL, *b = NULL;
    int rc = mpi_group_check(job, call, g1, &a);
    if (!rc) rc = mpi_group_check(job, call, g2, &b);
    if (!rc && !result) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "result is NULL");
    if (rc) return mpi_leave(job, rc);
    int k = lists_compare(a->ranks, a->size, b->ranks, b->size);
    *result = k == 0 ? MPI_IDENT : k == 1 ? MPI_SIMILAR : MPI_UNEQUAL;
    return mpi_leave(job, MPI_SUCCESS);
}

/* Check a list of n distinct ranks of g; 0 or an error code. */
static int ranks_check(cr_job *job, const char *call, const mpi_group *g, int n, const int *r)
{
    if (n < 0 || n > g->size)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "n %d is out of range 0..%d", n,
                        g->size);
    if (n && !r) return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "ranks is NULL");
    char *seen = calloc((size_t)g->size + 1, 1);
    if (!seen) cr_fatal(job, call, "out of memory");
    int rc = 0;
    for (int i = 0; !rc && i < n; i++) {
        if (r[i] < 0 || r[i] >= g->size)
            rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_RANK,
                          "rank %d is not in the group (size %d)", r[i], g->size);
        else if (seen[r[i]]++)
            rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_RANK, "rank %d is listed twice", r[i]);
    }
    free(seen);
    return rc;
}

PMPI_WEAK(Group_incl);
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    const char *call = "MPI_Group_incl";
    cr_job *job = mpi_enter(call);
    mpi_group *g = NULL;
    int rc = mpi_group_check(job, call, group, &g);
    if (!rc) rc = ranks_check(job, call, g, n, ranks);
    if (!rc && !newgroup) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "newgroup is NULL");
    if (rc) return mpi_leave(job, rc);
    int *r = ints(job, call, n);
    for (int i = 0; i < n; i++) r[i] = g->ranks[ranks[i]];
    *newgroup = mpi_group_add(job, call, r, n);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Group_excl);
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    const char *call = "MPI_Group_excl";
    cr_job *job = mpi_enter(call);
    mpi_group *g = NULL;
    int rc = mpi_group_check(job, call, group, &g);
    if (!rc) rc = ranks_check(job, call, g, n, ranks);
    if (!rc && !newgroup) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "newgroup is NULL");
    if (rc) return mpi_leave(job, rc);
    int *r = ints(job, call, g->size - n), m = 0;
    for (int i = 0; i < g->size; i++) {
        bool out = false;
        for (int j = 0; j < n && !out; j++) out = ranks[j] == i;
        if (!out) r[m++] = g->ranks[i];
    }
    *newgroup = mpi_group_add(job, call, r, m);
    return mpi_leave(job, MPI_SUCCESS);
}

/* Expand (first, last, stride) triplets into a rank list; NULL after an error. */
static int *ranges_expand(cr_job *job, const char *call, const mpi_group *g, int n, int ranges[][3],
                          int *count, int *rc)
{
    *rc = 0;
    if (n < 0 || (n && !ranges)) {
        *rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "n or ranges is invalid");
        return NULL;
    }
    int *r = ints(job, call, g->size), m = 0;
    for (int i = 0; i < n && !*rc; i++) {
        int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];
        if (s == 0 || f < 0 || f >= g->size || (s > 0 && f > l) || (s < 0 && f < l)) {
            *rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_RANK,
                           "range (%d, %d, %d) is invalid for a group of %d", f, l, s, g->size);
            break;
        }
        /* last need not be a rank: only the ranks computed must be (MPI-4.1 7.3.2) */
        for (long x = f; s > 0 ? x <= l : x >= l; x += s) {
            if (x < 0 || x >= g->size) {
                *rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_RANK,
                               "range (%d, %d, %d) computes rank %ld, outside a group of %d", f, l,
                               s, x, g->size);
                break;
            }
            if (m == g->size) {
                *rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_RANK,
                               "the ranges name a rank twice");
                break;
            }
            r[m++] = (int)x;
        }
    }
    if (!*rc) *rc = ranks_check(job, call, g, m, r);
    if (*rc) {
        free(r);
        return NULL;
    }
    *count = m;
    return r;
}

PMPI_WEAK(Group_range_incl);
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    const char *call = "MPI_Group_range_incl";
    cr_job *job = mpi_enter(call);
    mpi_group *g = NULL;
    int rc = mpi_group_check(job, call, group, &g), m = 0;
    if (!rc && !newgroup) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "newgroup is NULL");
    int *r = rc ? NULL : ranges_expand(job, call, g, n, ranges, &m, &rc);
    if (rc) {
        free(r);
        return mpi_leave(job, rc);
    }
    for (int i = 0; i < m; i++) r[i] = g->ranks[r[i]];
    *newgroup = mpi_group_add(job, call, r, m);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Group_range_excl);
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    const char *call = "MPI_Group_range_excl";
    cr_job *job = mpi_enter(call);
    mpi_group *g = NULL;
    int rc = mpi_group_check(job, call, group, &g), m = 0;
    if (!rc && !newgroup) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "newgroup is NULL");
    int *r = rc ? NULL : ranges_expand(job, call, g, n, ranges, &m, &rc);
    if (rc) {
        free(r);
        return mpi_leave(job, rc);
    }
    int *o = ints(job, call, g->size), k = 0;
    for (int i = 0; i < g->size; i++) {
        bool out = false;
        for (int j = 0; j < m && !out; j++) out = r[j] == i;
        if (!out) o[k++] = g->ranks[i];
    }
    free(r);
    *newgroup = mpi_group_add(job, call, o, k);
    return mpi_leave(job, MPI_SUCCESS);
}

/* Set operations: union (0), intersection (1), difference (2), in g1's order. */
static int group_setop(const char *call, MPI_Group g1, MPI_Group g2, MPI_Group *newgroup, int how)
{
    cr_job *job = mpi_enter(call);
    mpi_group *a = NULL, *b = NULL;
    int rc = mpi_group_check(job, call, g1, &a);
    if (!rc) rc = mpi_group_check(job, call, g2, &b);
    if (!rc && !newgroup) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "newgroup is NULL");
    if (rc) return mpi_leave(job, rc);
    int *r = ints(job, call, a->size + b->size), m = 0;
    for (int i = 0; i < a->size; i++) {
        bool inb = group_rank_of(b, a->ranks[i]) != MPI_UNDEFINED;
        if (how == 0 || (how == 1 && inb) || (how == 2 && !inb)) r[m++] = a->ranks[i];
    }
    for (int i = 0; how == 0 && i < b->size; i++)
        if (group_rank_of(a, b->ranks[i]) == MPI_UNDEFINED) r[m++] = b->ranks[i];
    *newgroup = mpi_group_add(job, call, r, m);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Group_union);
int PMPI_Group_union(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    return group_setop("MPI_Group_union", g1, g2, newgroup, 0);
}

PMPI_WEAK(Group_intersection);
int PMPI_Group_intersection(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    return group_setop("MPI_Group_intersection", g1, g2, newgroup, 1);
}

PMPI_WEAK(Group_difference);
int PMPI_Group_difference(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    return group_setop("MPI_Group_difference", g1, g2, newgroup, 2);
}

PMPI_WEAK(Group_free);
int PMPI_Group_free(MPI_Group *group)
{
    const char *call = "MPI_Group_free";
    cr_job *job = mpi_enter(call);
    mpi_group *g = NULL;
    if (!group)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                          "the group argument is NULL: pass the address of a group handle"));
    int rc = mpi_group_check(job, call, *group, &g);
    if (rc) return mpi_leave(job, rc);
    if (*group != MPI_GROUP_EMPTY) {
        free(g->ranks);
        *g = (mpi_group){0};
    }
    *group = MPI_GROUP_NULL;
    return mpi_leave(job, MPI_SUCCESS);
}
