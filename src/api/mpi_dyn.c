/* MPI dynamic processes (MPI-4.1 chapter 11): ports (MPI_Open_port,
 * MPI_Close_port), MPI_Comm_accept / MPI_Comm_connect between two jobs of the
 * same user, MPI_Comm_join over a connected socket, MPI_Comm_disconnect, and
 * the name service (MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name),
 * and MPI_Comm_spawn(_multiple) through a new courier run (on the job's hosts
 * or info "host"'s, through its agents: spawn_places).
 * docs/mpi.md, "Dynamic processes", says how it works.
 *
 * How two groups become one intercommunicator (connect_groups): the two roots
 * talk over an authenticated channel (src/core/xpeers.h: a port's connection,
 * or join's socket) and swap their groups' sizes; each root tells its group;
 * every member opens its end of a new set of peers (a tcp transport of its
 * own, keyed by the channel) and the roots swap the members' cards; every
 * member adds the other group's members as engine peers; the leaders then
 * agree on a context pair over those peers (mpi_inter.c's bridge, on
 * CR_CTX_MPI_DYN) and the intercommunicator is made, the accepting group
 * (join: the lower nonce's) first in ig on both sides.
 *
 * Invariants:
 *  - every member of a group makes the same sequence of collectives over it in
 *    a creating call, whatever its root met: a failure at the root is
 *    broadcast and every member returns the same error;
 *  - a port's listener belongs to the process that opened it; its name is
 *    "address:port" (the address COURIER_NET picks, as tcp's);
 *  - a published name is a file of the user's directory (names/<service>),
 *    made whole or not at all, holding the port and the publisher's pid; a
 *    name whose publisher is gone is stale and taken over; what a process
 *    published and did not unpublish is removed at MPI_Finalize;
 *  - the set of peers an accept/connect/join made lives as long as that
 *    intercommunicator: MPI_Comm_disconnect closes it (collective over both
 *    groups); communicators derived from it must be freed first;
 *  - a spawned job's launcher ends with the rank that started it, and only
 *    then, whichever thread of the rank spawned (spawn_watcher). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/xpeers.h"
#include "mpi_impl.h"

typedef struct dyn_set {
    MPI_Comm comm; /* the intercommunicator it serves (MPI_COMM_NULL: freed) */
    cr_xset *x;
    int first, n; /* its peers (engine ranks first..first+n-1): comm's remote group */
} dyn_set;

typedef struct mpi_dyn {
    struct dyn_port {
        char name[MPI_MAX_PORT_NAME];
        int fd;
    } * ports;
    int nports;
    dyn_set *sets;
    int nsets;
    char **pub; /* service names this process published */
    int npub;
    struct dyn_kid *kids; /* jobs this process spawned, not yet ended */
    int nkids;
    uint64_t kids_checked; /* when the root last looked (kids_hook) */
    MPI_Comm parent;       /* the job that spawned this one, or MPI_COMM_NULL */
} mpi_dyn;

/* The set of intercommunicator h, or -1. A communicator freed without
 * MPI_Comm_disconnect leaves its set open (MPI: its traffic may still be
 * under way) and its handle to be given again: a set is h's only while h's
 * remote group is the set's peers. */
static int set_of(const mpi_dyn *d, MPI_Comm h)
{
    const mpi_comm *c = mpi_comm_get(h);
    for (int i = 0; c && c->inter && i < d->nsets; i++)
        if (d->sets[i].comm == h && c->rsize == d->sets[i].n &&
            comm_peer_to_job(c, 0) == d->sets[i].first)
            return i;
    return -1;
}

static mpi_dyn *dyn_of(cr_job *job)
{
    mpi_state *m = job->mpi;
    if (!m->dyn) {
        m->dyn = calloc(1, sizeof *m->dyn);
        if (!m->dyn) cr_fatal(job, "MPI", "out of memory");
    }
    return m->dyn;
}

static void *grow(cr_job *job, void *p, int n, size_t each)
{
    void *q = realloc(p, (size_t)n * each);
    if (!q) cr_fatal(job, "MPI", "out of memory");
    return q;
}

/* ---- ports ---------------------------------------------------------------- */

PMPI_WEAK(Open_port);
int PMPI_Open_port(MPI_Info info, char *port_name)
{
    const char *call = "MPI_Open_port";
    cr_job *job = mpi_enter(call);
    (void)info;
    if (!port_name)
        return mpi_leave(job,
                         mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "port_name is NULL"));
    char why[200], name[MPI_MAX_PORT_NAME];
    int fd = cr_listen_any(name, sizeof name, why, sizeof why);
    if (fd < 0)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_OTHER, "%s", why));
    mpi_dyn *d = dyn_of(job);
    d->ports = grow(job, d->ports, d->nports + 1, sizeof *d->ports);
    d->ports[d->nports].fd = fd;
    snprintf(d->ports[d->nports++].name, MPI_MAX_PORT_NAME, "%s", name);
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s", name);
    return mpi_leave(job, MPI_SUCCESS);
}

static struct dyn_port *port_find(mpi_dyn *d, const char *name)
{
    for (int i = 0; i < d->nports; i++)
        if (!strncmp(d->ports[i].name, name, MPI_MAX_PORT_NAME)) return &d->ports[i];
    return NULL;
}

PMPI_WEAK(Close_port);
int PMPI_Close_port(const char *port_name)
{
    const char *call = "MPI_Close_port";
    cr_job *job = mpi_enter(call);
    mpi_dyn *d = dyn_of(job);
    struct dyn_port *p = port_name ? port_find(d, port_name) : NULL;
    if (!p)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_PORT,
                                       "'%s' is not a port this process opened (MPI_Open_port)",
                                       port_name ? port_name : "(NULL)"));
    close(p->fd);
    *p = d->ports[--d->nports];
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- making the intercommunicator ------------------------------------------ */

/* What a root tells its group. */
typedef struct dyn_hdr {
    int ok;    /* 1: connected; 0: why says what failed */
    int rn;    /* the other group's size */
    int rroot; /* its root, a member of it */
    int low;   /* this group is ig's first (it accepted) */
    unsigned char lkey[CR_SECRET_LEN];
    char why[240];
} dyn_hdr;

/* Collective over comm (an intracommunicator, c); the root holds the channel
 * ch, which got as far as ok says (else why). */
static int connect_groups(cr_job *job, const char *call, MPI_Comm comm, int root, cr_xchan *ch,
                          bool ok, const char *why, int code, MPI_Comm *newcomm)
{
    mpi_comm *c = mpi_comm_get(comm);
    int nl = c->size, me = c->me;
    dyn_hdr h = {.ok = ok};
    char w2[200];
    if (me == root) {
        if (ok) {
            int mine[2] = {nl, root}, theirs[2];
            if (cr_xchan_send(job, ch, mine, sizeof mine, w2, sizeof w2) ||
                cr_xchan_recv(job, ch, theirs, sizeof theirs, w2, sizeof w2)) {
                h.ok = 0;
                why = w2;
            } else if (theirs[0] < 1 || theirs[1] < 0 || theirs[1] >= theirs[0]) {
                h.ok = 0;
                why = "the other group's leader sent a group size that makes no sense";
            } else {
                h.rn = theirs[0];
                h.rroot = theirs[1];
                h.low = ch->low;
                memcpy(h.lkey, ch->lkey, sizeof h.lkey);
            }
        }
        if (!h.ok) snprintf(h.why, sizeof h.why, "%s", why);
    }
    cr_coll_bcast(job, &c->g, call, &h, sizeof h, root);
    if (!h.ok) {
        memset(&h, 0, sizeof h.lkey);
        *newcomm = MPI_COMM_NULL;
        return mpi_fail(job, comm, call, code, "%s%s", me == root ? "" : "(at the root) ", h.why);
    }
    int rn = h.rn, size = nl + rn, self = h.low ? me : rn + me;
    unsigned char card[CR_XCARD] = {0};
    size_t clen = 0;
    char w3[200];
    cr_xset *x = cr_xset_open(job, self, size, h.lkey, card, &clen, w3, sizeof w3);
    memset(h.lkey, 0, sizeof h.lkey);
    if (!x) cr_fatal(job, call, "%s", w3);
    unsigned char *cards = malloc((size_t)(nl > rn ? nl : rn) * CR_XCARD);
    if (!cards) cr_fatal(job, call, "out of memory");
    cr_coll_gather(job, &c->g, call, card, cards, CR_XCARD, root);
    int fail = 0;
    if (me == root && (cr_xchan_send(job, ch, cards, (size_t)nl * CR_XCARD, w2, sizeof w2) ||
                       cr_xchan_recv(job, ch, cards, (size_t)rn * CR_XCARD, w2, sizeof w2)))
        fail = 1;
    cr_coll_bcast(job, &c->g, call, &fail, sizeof fail, root);
    if (fail) /* a leader that left halfway: the set is half made */
        cr_fatal(job, call, "the other group's leader left while the groups were connecting%s%s",
                 me == root ? ": " : "", me == root ? w2 : "");
    cr_coll_bcast(job, &c->g, call, cards, (size_t)rn * CR_XCARD, root);
    int first = cr_xset_add(job, x, h.low ? nl : 0, rn, cards);
    free(cards);
    int *ranks = malloc((size_t)nl * sizeof *ranks), *rranks = malloc((size_t)rn * sizeof *rranks);
    if (!ranks || !rranks) cr_fatal(job, call, "out of memory");
    for (int i = 0; i < nl; i++) ranks[i] = comm_rank_to_job(c, i);
    for (int i = 0; i < rn; i++) rranks[i] = first + i;
    int pair = mpi_inter_agree(job, call, &c->g, root, first + h.rroot, CR_CTX_MPI_DYN, 0);
    if (pair < 0) {
        free(ranks);
        free(rranks);
        cr_xset_close(job, call, x);
        *newcomm = MPI_COMM_NULL;
        return mpi_no_ctx(job, comm, call);
    }
    c = mpi_comm_get(comm);
    MPI_Comm nh = mpi_inter_add(job, call, nl, me, ranks, rn, rranks, pair, c->errh);
    mpi_inter_set_low(mpi_comm_get(nh), h.low);
    mpi_dyn *d = dyn_of(job);
    d->sets = grow(job, d->sets, d->nsets + 1, sizeof *d->sets);
    for (int i = 0; i < d->nsets; i++) /* a freed communicator's, whose handle nh was */
        if (d->sets[i].comm == nh) d->sets[i].comm = MPI_COMM_NULL;
    d->sets[d->nsets++] = (dyn_set){nh, x, first, rn};
    *newcomm = nh;
    return MPI_SUCCESS;
}

/* cr_wait_fd's watch for a handshake: 1 once past the deadline (ns, cr_mono_ns). */
static int past(void *deadline)
{
    return cr_mono_ns() > *(const uint64_t *)deadline;
}
#define HANDSHAKE_NS 10000000000u /* a client has this long to prove itself */

/* The arguments every accept/connect checks: comm an intracommunicator, root
 * one of its ranks, newcomm set. */
static int check_args(cr_job *job, const char *call, MPI_Comm comm, int root, MPI_Comm *newcomm,
                      mpi_comm **out)
{
    int rc = mpi_comm_check(job, call, comm, out);
    if (rc) return rc;
    if ((*out)->inter)
        return mpi_fail(job, comm, call, MPI_ERR_COMM,
                        "comm is an intercommunicator: it must be an intracommunicator");
    if (root < 0 || root >= (*out)->size)
        return mpi_fail(job, comm, call, MPI_ERR_ROOT, "root %d is not a rank of comm (0..%d)",
                        root, (*out)->size - 1);
    if (!newcomm) return mpi_fail(job, comm, call, MPI_ERR_ARG, "newcomm is NULL");
    return MPI_SUCCESS;
}

PMPI_WEAK(Comm_accept);
int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_accept";
    cr_job *job = mpi_enter(call);
    (void)info;
    mpi_comm *c;
    int rc = check_args(job, call, comm, root, newcomm, &c);
    if (rc) return mpi_leave(job, rc);
    cr_xchan ch = {.fd = -1};
    bool ok = false;
    char why[240] = "";
    if (c->me == root) {
        struct dyn_port *p = port_name ? port_find(dyn_of(job), port_name) : NULL;
        if (!p)
            snprintf(why, sizeof why, "'%s' is not a port this process opened (MPI_Open_port)",
                     port_name ? port_name : "(NULL)");
        else {
            /* Waiting for a client is waiting for the world outside the job:
             * cr_wait_fd tells the hang watchdog nothing, so a job whose
             * server waits here is never called hung (its other members,
             * waiting for the root, are blocked on a rank that is not). */
            int lfd = p->fd, refused = 0;
            for (;;) {
                cr_wait_fd(job, lfd, NULL, NULL);
                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0) continue; /* EAGAIN: another took it; a client that gave up */
                char w[200];
                uint64_t deadline = cr_mono_ns() + HANDSHAKE_NS; /* a silent stranger */
                if (cr_xchan_start(job, &ch, fd, CR_XCHAN_ACCEPT, past, &deadline, w, sizeof w)) {
                    /* not a client of ours: say so (once a call), wait for the next */
                    if (!refused++)
                        fprintf(stderr,
                                "courier: rank %d: MPI_Comm_accept: refused a connection to port "
                                "%s: %s\n",
                                job->rank, port_name, w);
                    close(fd);
                    continue;
                }
                ok = true;
                break;
            }
        }
    }
    rc = connect_groups(job, call, comm, root, &ch, ok, why, MPI_ERR_PORT, newcomm);
    if (ch.fd >= 0) close(ch.fd);
    cr_xchan_close(&ch);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Comm_connect);
int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_connect";
    cr_job *job = mpi_enter(call);
    (void)info;
    mpi_comm *c;
    int rc = check_args(job, call, comm, root, newcomm, &c);
    if (rc) return mpi_leave(job, rc);
    cr_xchan ch = {.fd = -1};
    bool ok = false;
    char why[240] = "";
    if (c->me == root) {
        int fd = port_name ? cr_connect_to(port_name, why, sizeof why) : -1;
        if (!port_name) snprintf(why, sizeof why, "port_name is NULL");
        if (fd >= 0 && cr_xchan_start(job, &ch, fd, CR_XCHAN_CONNECT, NULL, NULL, why, sizeof why))
            close(fd);
        else if (fd >= 0)
            ok = true;
    }
    rc = connect_groups(job, call, comm, root, &ch, ok, why, MPI_ERR_PORT, newcomm);
    if (ch.fd >= 0) close(ch.fd);
    cr_xchan_close(&ch);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Comm_join);
int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    const char *call = "MPI_Comm_join";
    cr_job *job = mpi_enter(call);
    if (!intercomm)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_SELF, call, MPI_ERR_ARG, "intercomm is NULL"));
    cr_xchan ch = {.fd = -1};
    char why[240] = "";
    struct stat st;
    bool ok = false;
    if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
        snprintf(why, sizeof why, "fd %d is not a connected socket", fd);
    else if (!cr_xchan_start(job, &ch, fd, CR_XCHAN_EITHER, NULL, NULL, why, sizeof why))
        ok = true;
    int rc = connect_groups(job, call, MPI_COMM_SELF, 0, &ch, ok, why, MPI_ERR_ARG, intercomm);
    cr_xchan_close(&ch); /* the socket is the program's */
    return mpi_leave(job, rc);
}

PMPI_WEAK(Comm_disconnect);
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    const char *call = "MPI_Comm_disconnect";
    cr_job *job = mpi_enter(call);
    mpi_comm *c;
    if (!comm)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "comm is NULL"));
    int rc = mpi_comm_check(job, call, *comm, &c);
    if (rc) return mpi_leave(job, rc);
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return mpi_leave(job, mpi_fail(job, *comm, call, MPI_ERR_COMM,
                                       "%s is predefined and cannot be disconnected", c->name));
    mpi_dyn *d = dyn_of(job);
    cr_xset *x = NULL;
    int i = set_of(d, *comm);
    if (i >= 0) {
        x = d->sets[i].x;
        d->sets[i] = d->sets[--d->nsets];
    }
    MPI_Comm h = *comm;
    mpi_leave(job, MPI_SUCCESS);
    /* Every message of the communicator is received (its matching sends are
     * done) before the set closes: a barrier over it, as MPI asks. */
    rc = PMPI_Barrier(h);
    if (rc == MPI_SUCCESS) rc = PMPI_Comm_free(comm);
    if (x) {
        job = mpi_enter(call);
        cr_xset_close(job, call, x);
        mpi_leave(job, MPI_SUCCESS);
    }
    return rc;
}

/* ---- the name service ------------------------------------------------------ */

/* The file of a service name in the user's directory: names/<name>, the
 * name's '/' and leading '.' escaped (%2F, %2E, and '%' as %25). */
static int name_path(const char *service, char *path, size_t len, char *why, size_t wlen)
{
    char dir[256];
    if (cr_user_dir(dir, sizeof dir, true, 077, why, wlen)) return -1;
    size_t n = (size_t)snprintf(path, len, "%s/names", dir);
    if (mkdir(path, 0700) < 0 && errno != EEXIST) {
        snprintf(why, wlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    if (n + 1 < len) path[n++] = '/';
    for (const char *s = service; *s && n + 4 < len; s++)
        if (*s == '/' || *s == '%' || (s == service && *s == '.'))
            n += (size_t)snprintf(path + n, len - n, "%%%02X", (unsigned char)*s);
        else
            path[n++] = *s;
    path[n] = '\0';
    return 0;
}

/* Read a name's file: its port, and whether its publisher still lives. */
static int name_read(const char *path, char *port, bool *live)
{
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    char line[MPI_MAX_PORT_NAME + 2];
    long pid = 0;
    int rc = fgets(line, sizeof line, f) && fscanf(f, "%ld", &pid) == 1 ? 0 : -1;
    fclose(f);
    if (rc) return -1;
    line[strcspn(line, "\n")] = '\0';
    line[MPI_MAX_PORT_NAME - 1] = '\0';
    memcpy(port, line, strlen(line) + 1);
    *live = pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
    return 0;
}

static int service_arg(cr_job *job, const char *call, const char *service)
{
    if (!service || !*service)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "service_name is NULL or empty");
    if (strlen(service) > 200)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                        "service_name is longer than 200 characters");
    return MPI_SUCCESS;
}

PMPI_WEAK(Publish_name);
int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    const char *call = "MPI_Publish_name";
    cr_job *job = mpi_enter(call);
    (void)info;
    int rc = service_arg(job, call, service_name);
    if (!rc && (!port_name || !*port_name))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "port_name is NULL or empty");
    if (rc) return mpi_leave(job, rc);
    char path[600], tmp[640], why[300];
    if (name_path(service_name, path, sizeof path, why, sizeof why))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_SERVICE, "%s", why));
    /* Whole or not at all: written aside, then linked (link fails if the name
     * exists); a stale name (its publisher gone) is replaced. */
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f || fprintf(f, "%s\n%ld\n", port_name, (long)getpid()) < 0 || fclose(f)) {
        if (f) unlink(tmp);
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_SERVICE,
                                       "cannot write %s: %s", tmp, strerror(errno)));
    }
    rc = link(tmp, path);
    if (rc < 0 && errno == EEXIST) {
        char old[MPI_MAX_PORT_NAME];
        bool live = true;
        if (name_read(path, old, &live) == 0 && !live) {
            rename(tmp, path);
            rc = 0;
        } else {
            unlink(tmp);
            return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_SERVICE,
                                           "service '%s' is already published (by a live "
                                           "process, port %s); unpublish it first",
                                           service_name, old));
        }
    }
    unlink(tmp);
    if (rc < 0)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_SERVICE,
                                       "cannot publish %s: %s", path, strerror(errno)));
    mpi_dyn *d = dyn_of(job);
    d->pub = grow(job, d->pub, d->npub + 1, sizeof *d->pub);
    d->pub[d->npub] = strdup(service_name);
    if (!d->pub[d->npub++]) cr_fatal(job, call, "out of memory");
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Lookup_name);
int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    const char *call = "MPI_Lookup_name";
    cr_job *job = mpi_enter(call);
    (void)info;
    int rc = service_arg(job, call, service_name);
    if (!rc && !port_name)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "port_name is NULL");
    if (rc) return mpi_leave(job, rc);
    char path[600], why[300], port[MPI_MAX_PORT_NAME];
    bool live = false;
    if (name_path(service_name, path, sizeof path, why, sizeof why))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_NAME, "%s", why));
    if (name_read(path, port, &live) || !live)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_NAME,
                                       "service '%s' is not published (by a live process of "
                                       "yours); publish it with MPI_Publish_name first",
                                       service_name));
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s", port);
    return mpi_leave(job, MPI_SUCCESS);
}

static void unpublish(mpi_dyn *d, int i, const char *path)
{
    unlink(path);
    free(d->pub[i]);
    d->pub[i] = d->pub[--d->npub];
}

PMPI_WEAK(Unpublish_name);
int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    const char *call = "MPI_Unpublish_name";
    cr_job *job = mpi_enter(call);
    (void)info;
    (void)port_name;
    int rc = service_arg(job, call, service_name);
    if (rc) return mpi_leave(job, rc);
    mpi_dyn *d = dyn_of(job);
    char path[600], why[300];
    for (int i = 0; i < d->npub; i++)
        if (!strcmp(d->pub[i], service_name)) {
            if (name_path(service_name, path, sizeof path, why, sizeof why))
                return mpi_leave(job,
                                 mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_SERVICE, "%s", why));
            unpublish(d, i, path);
            return mpi_leave(job, MPI_SUCCESS);
        }
    return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_SERVICE,
                                   "service '%s' was not published by this process", service_name));
}

/* ---- spawning ---------------------------------------------------------------- */

/* What a job of this process's spawned: its launcher (the root's child; -1 on
 * other ranks) and a pidfd of it (every rank of the group that spawned). */
typedef struct dyn_kid {
    pid_t pid;
    int pidfd;
    bool root;
} dyn_kid;

/* The environment of a new job: this rank's, without what names this rank in
 * its own job, with the port its ranks connect to. */
static char **kid_env(const char *port)
{
    static const char *const drop[] = {
        "COURIER_RANK=",         "COURIER_SIZE=",        "COURIER_SHM_FD=",
        "COURIER_SECRET_FD=",    "COURIER_HOST_RANK=",   "COURIER_APPNUM=",
        "COURIER_HOST_LAYOUT=",  "COURIER_CPUS=",        "COURIER_LAUNCHED=",
        "COURIER_RANK_PID=",     "COURIER_SIM_FD=",      "COURIER_CTX_FDS=",
        "COURIER_SIM_CONTEXTS=", "COURIER_PARENT_PORT=", "COURIER_SPAWN_HOSTS=",
        "COURIER_SPAWN_HOST=",   "COURIER_SPAWN_RSH="};
    int n = 0;
    while (environ[n]) n++;
    char **env = calloc((size_t)n + 2, sizeof *env);
    if (!env) return NULL;
    int k = 0;
    for (int i = 0; i < n; i++) {
        bool keep = true;
        for (size_t j = 0; j < sizeof drop / sizeof *drop && keep; j++)
            keep = strncmp(environ[i], drop[j], strlen(drop[j])) != 0;
        if (keep) env[k++] = environ[i];
    }
    static const char var[] = "COURIER_PARENT_PORT=";
    env[k] = malloc(sizeof var + strlen(port));
    if (!env[k]) return NULL;
    sprintf(env[k], "%s%s", var, port);
    return env;
}

/* The host of rank r of a job laid out as counts[0..nh) (ranks in order). */
static int host_of_rank(const int *counts, int nh, int r)
{
    for (int h = 0; h < nh; h++) {
        if (r < counts[h]) return h;
        r -= counts[h];
    }
    return nh - 1;
}

/* Add n ranks on host name to the list of (host, ranks) runs being made, the
 * last run grown when it is that host's. */
static void place_add(const char **names, int *ns, int *nrun, const char *name, int n)
{
    if (n < 1) return;
    if (*nrun && !strcmp(names[*nrun - 1], name)) {
        ns[*nrun - 1] += n;
        return;
    }
    names[*nrun] = name;
    ns[(*nrun)++] = n;
}

/* Where the new job's ranks go: courier run's --hosts list (malloc'd into
 * *list), or *list NULL when they all run on this host. A command's info
 * "host" names its host (this one: its name in the job's host list, the
 * machine's name, or "localhost"); without one, a job across hosts
 * (COURIER_SPAWN_HOSTS, set by the agents: src/run/start.c) spreads the
 * command's ranks over its hosts as its own are (the j-th on the host of its
 * rank j mod size, grouped by host), and a job on one host keeps them here.
 * 0, or -1 with why. */
static int spawn_places(int count, const int *np, const MPI_Info *infos, char **list, char *why,
                        size_t wlen)
{
    *list = NULL;
    const char *spread = getenv("COURIER_SPAWN_HOSTS"), *mine = getenv("COURIER_SPAWN_HOST");
    char machine[256] = "";
    gethostname(machine, sizeof machine - 1);
    const char *here = mine && *mine ? mine : machine;
    int nh = 0;
    for (const char *p = spread; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "") nh++;
    char *copy = spread ? strdup(spread) : NULL;
    const char **hn = calloc((size_t)nh + 1, sizeof *hn);
    int *hc = calloc((size_t)nh + 1, sizeof *hc), total = 0;
    const char **names = calloc((size_t)count * ((size_t)nh + 1), sizeof *names);
    int *ns = calloc((size_t)count * ((size_t)nh + 1), sizeof *ns), nrun = 0;
    int rc = -1;
    if ((spread && !copy) || !hn || !hc || !names || !ns) {
        snprintf(why, wlen, "out of memory");
        goto out;
    }
    nh = 0;
    for (char *save = NULL, *w = copy ? strtok_r(copy, ",", &save) : NULL; w;
         w = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(w, ':');
        hc[nh] = colon ? atoi(colon + 1) : 1;
        if (colon) *colon = '\0';
        hn[nh] = w;
        total += hc[nh] > 0 ? hc[nh] : 0;
        nh++;
    }
    bool remote = false;
    for (int i = 0; i < count; i++) {
        const char *h =
            infos && infos[i] != MPI_INFO_NULL ? mpi_info_lookup(infos[i], "host") : NULL;
        if (h && (!*h || strpbrk(h, ", :\t\n"))) {
            snprintf(why, wlen, "info \"host\" '%s' is not a host's name", h);
            goto out;
        }
        if (h && (!strcmp(h, here) || !strcmp(h, machine) || !strcmp(h, "localhost"))) h = here;
        if (h) {
            remote |= strcmp(h, here) != 0;
            place_add(names, ns, &nrun, h, np[i]);
        } else if (total > 0) { /* the job's hosts, as its own ranks are */
            for (int k = 0; k < nh; k++) {
                int n = 0;
                for (int j = 0; j < np[i]; j++) n += host_of_rank(hc, nh, j % total) == k;
                remote |= n > 0 && strcmp(hn[k], here) != 0;
                place_add(names, ns, &nrun, hn[k], n);
            }
        } else {
            place_add(names, ns, &nrun, here, np[i]);
        }
    }
    rc = 0;
    if (!remote) goto out;
    size_t len = 1;
    for (int r = 0; r < nrun; r++) len += strlen(names[r]) + 16;
    *list = malloc(len);
    if (!*list) {
        snprintf(why, wlen, "out of memory");
        rc = -1;
        goto out;
    }
    size_t off = 0;
    for (int r = 0; r < nrun; r++)
        off += (size_t)snprintf(*list + off, len - off, "%s%s:%d", r ? "," : "", names[r], ns[r]);
out:
    free(copy);
    free(hn);
    free(hc);
    free(names);
    free(ns);
    return rc;
}

/* The new launcher ends with the rank that started it (it ends its ranks then):
 * the kernel's parent-death signal does that, but it follows the thread that
 * forked, and a program may spawn from a thread that ends before the job does
 * (mpi4py.futures' pools do): the new job was ended with the thread (and the
 * launcher's SIGTERM took the rank too). From any thread but the main one, the
 * forked child stays as a watcher, one thread whose death signal is its
 * process's, and the launcher is its child: it passes SIGTERM, SIGINT and
 * SIGHUP on, ends the launcher when the rank is gone, and ends as the launcher
 * ended. Called in the forked child; returns in the launcher-to-be. */
static void spawn_watcher(pid_t rank)
{
    for (int fd = 3; fd < 1024; fd++) close(fd); /* not the rank's sockets */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    int rfd = (int)syscall(SYS_pidfd_open, rank, 0), sfd = signalfd(-1, &sigs, 0);
    pid_t me = getpid(), k = fork();
    if (k == 0) {
        close(rfd);
        close(sfd);
        sigprocmask(SIG_UNBLOCK, &sigs, NULL);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != me) _exit(1);
        return;
    }
    if (k < 0) _exit(127);
    if (rfd < 0 || sfd < 0) kill(k, SIGTERM); /* the rank is gone already */
    struct pollfd p[3] = {
        {rfd, POLLIN, 0}, {sfd, POLLIN, 0}, {(int)syscall(SYS_pidfd_open, k, 0), POLLIN, 0}};
    int st = 0;
    while (waitpid(k, &st, WNOHANG) != k) {
        poll(p, 3, p[2].fd < 0 ? 100 : -1);
        if (p[0].revents) { /* the rank ended */
            kill(k, SIGTERM);
            p[0].fd = -1;
        }
        struct signalfd_siginfo si;
        if (p[1].revents && read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
            kill(k, (int)si.ssi_signo);
    }
    if (WIFSIGNALED(st)) {
        signal(WTERMSIG(st), SIG_DFL);
        sigprocmask(SIG_UNBLOCK, &sigs, NULL);
        kill(me, WTERMSIG(st));
    }
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* The root: start `courier run -n N cmd args [: -n M cmd2 args2 ...]` with the
 * port in its environment, in the first command's "wdir". 0 and *pid, or -1
 * with why. */
static int kid_start(cr_job *job, int count, char **cmds, char ***argvs, const int *np,
                     const MPI_Info *infos, const char *port, pid_t *pid, char *why, size_t wlen)
{
    const char *courier = getenv("COURIER_RUN");
    if (!courier || !*courier) {
        snprintf(why, wlen,
                 "this job was not started by courier run (COURIER_RUN is not set); "
                 "start it with courier run");
        return -1;
    }
    const char *wdir = NULL;
    int nargs = 3;
    for (int i = 0; i < count; i++) {
        if (!cmds[i] || !*cmds[i] || np[i] < 1) {
            snprintf(why, wlen, "command %d is %s", i,
                     !cmds[i] || !*cmds[i] ? "empty" : "given no processes (maxprocs < 1)");
            return -1;
        }
        if (strchr(cmds[i], '/') && access(cmds[i], X_OK) < 0) {
            snprintf(why, wlen, "program '%s' not found or not executable: %s", cmds[i],
                     strerror(errno));
            return -1;
        }
        if (!wdir && infos && infos[i] != MPI_INFO_NULL) wdir = mpi_info_lookup(infos[i], "wdir");
        nargs += 4;
        for (int k = 0; argvs && argvs[i] && argvs[i][k]; k++) nargs++;
    }
    char *hosts = NULL;
    if (spawn_places(count, np, infos, &hosts, why, wlen)) return -1;
    const char *rsh = getenv("COURIER_SPAWN_RSH");
    nargs += 4;
    char **argv = calloc((size_t)nargs + 1, sizeof *argv), *nums = malloc((size_t)count * 16);
    char **abs = calloc((size_t)count, sizeof *abs);
    char **env = kid_env(port);
    if (!argv || !env || !nums || !abs) cr_fatal(job, "MPI_Comm_spawn", "out of memory");
    int a = 0;
    argv[a++] = (char *)courier;
    argv[a++] = "run";
    if (hosts) { /* through the agents, as courier run --hosts starts any job */
        argv[a++] = "--hosts";
        argv[a++] = hosts;
        if (rsh && *rsh) {
            argv[a++] = "--rsh";
            argv[a++] = (char *)rsh;
        }
    }
    for (int i = 0; i < count; i++) {
        if (i) argv[a++] = ":";
        argv[a++] = "-n";
        snprintf(nums + 16 * i, 16, "%d", np[i]);
        argv[a++] = nums + 16 * i;
        /* a relative path names a program from here, not from wdir */
        abs[i] = strchr(cmds[i], '/') && cmds[i][0] != '/' ? realpath(cmds[i], NULL) : NULL;
        argv[a++] = abs[i] ? abs[i] : cmds[i];
        for (int k = 0; argvs && argvs[i] && argvs[i][k]; k++) argv[a++] = argvs[i][k];
    }
    pid_t parent = getpid();
    bool main_thread = (pid_t)syscall(SYS_gettid) == parent;
    fflush(stdout);
    fflush(stderr);
    *pid = fork();
    if (*pid == 0) {
        /* the new launcher ends with this rank (it ends its ranks then) */
        if (!main_thread) {
            spawn_watcher(parent);
        } else {
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent) _exit(1);
        }
        if (wdir && chdir(wdir) < 0) {
            dprintf(2, "courier: rank %d: MPI_Comm_spawn: cannot enter wdir %s: %s\n", job->rank,
                    wdir, strerror(errno));
            _exit(2);
        }
        for (int fd = 3; fd < 1024; fd++) close(fd);
        execve(courier, argv, env);
        dprintf(2, "courier: rank %d: MPI_Comm_spawn: cannot run %s: %s\n", job->rank, courier,
                strerror(errno));
        _exit(127);
    }
    int err = errno;
    free(argv);
    free(hosts);
    free(nums);
    for (int i = 0; i < count; i++) free(abs[i]);
    free(abs);
    for (int k = 0; env[k]; k++)
        if (!strncmp(env[k], "COURIER_PARENT_PORT=", 20)) free(env[k]);
    free(env);
    if (*pid < 0) {
        snprintf(why, wlen, "cannot start courier run: fork: %s", strerror(err));
        return -1;
    }
    return 0;
}

/* cr_wait_fd's watch while the root waits for its new job: 1 once the new
 * launcher has ended (its status in *st). */
typedef struct kid_watch {
    pid_t pid;
    int st;
    bool ended;
} kid_watch;
static int kid_ended(void *arg)
{
    kid_watch *k = arg;
    if (waitpid(k->pid, &k->st, WNOHANG) == k->pid) k->ended = true;
    return k->ended;
}

static int kid_status(int st)
{
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* A spawned job failed and its launcher said so in one line: this rank's job
 * ends with its status, and nothing more is said (the launcher reads the
 * mark, cr_host_said). */
_Noreturn static void end_quietly(cr_job *job, int status)
{
    if (job->host.base) cr_host_said(&job->host);
    fflush(stdout);
    fflush(stderr);
    _exit(status ? status : 1);
}

/* The root: has a spawned job's launcher ended? Failed: end this job too
 * (quietly); done: forget it. Returns true when one ended. */
static bool kids_check(cr_job *job, bool block)
{
    mpi_dyn *d = job->mpi->dyn;
    bool any = false;
    for (int i = 0; d && i < d->nkids; i++) {
        dyn_kid *k = &d->kids[i];
        int st;
        if (!k->root || waitpid(k->pid, &st, block ? 0 : WNOHANG) != k->pid) continue;
        if (kid_status(st)) end_quietly(job, kid_status(st));
        cr_poll_no_more(job, k->pidfd);
        close(k->pidfd);
        d->kids[i--] = d->kids[--d->nkids];
        any = true;
    }
    return any;
}

/* The engine's background hook at the root of a spawn: a spawned job that
 * failed while this rank waits or computes between calls (the waiting point
 * wakes on the launcher's pidfd). At most every 20 ms. */
static int kids_hook(cr_job *job, bool *pending)
{
    *pending = false;
    mpi_dyn *d = job->mpi ? job->mpi->dyn : NULL;
    if (!d || !d->nkids) return 0;
    uint64_t now = cr_mono_ns();
    if (now - d->kids_checked < 20000000u) return 0;
    d->kids_checked = now;
    return kids_check(job, false);
}

/* A set of a spawn lost a peer (the spawned job died): the root waits for
 * the new launcher to end and, if it failed, ends this job quietly; another
 * member waits for its own launcher to end it (its root will) before the
 * transport says that the connection was lost. */
static void kid_lost(cr_job *job, void *arg)
{
    mpi_dyn *d = job->mpi->dyn;
    pid_t pid = (pid_t)(intptr_t)arg;
    for (int i = 0; i < d->nkids; i++) {
        if (d->kids[i].pid != pid) continue;
        struct pollfd p = {.fd = d->kids[i].pidfd, .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0) return;
        if (d->kids[i].root) {
            kids_check(job, true);
            return;
        }
        sleep(10); /* the root ends the job meanwhile */
        return;
    }
}

static int spawn(cr_job *job, const char *call, int count, char **cmds, char ***argvs,
                 const int *np, const MPI_Info *infos, int root, MPI_Comm comm, MPI_Comm *intercomm,
                 int *errcodes)
{
    mpi_comm *c;
    int rc = check_args(job, call, comm, root, intercomm, &c);
    if (rc) return rc;
    int total = 0; /* the root's count, for every member's error codes */
    cr_xchan ch = {.fd = -1};
    bool ok = false;
    char why[240] = "";
    kid_watch kw = {.pid = -1};
    if (c->me == root) {
        char port[MPI_MAX_PORT_NAME];
        if (count < 1 || !cmds || !np) snprintf(why, sizeof why, "no command to spawn");
        for (int i = 0; i < count && np && !why[0]; i++) total += np[i] > 0 ? np[i] : 0;
        int lfd = why[0] ? -1 : cr_listen_any(port, sizeof port, why, sizeof why);
        if (lfd >= 0 &&
            !kid_start(job, count, cmds, argvs, np, infos, port, &kw.pid, why, sizeof why)) {
            while (!ok) {
                if (cr_wait_fd(job, lfd, kid_ended, &kw)) {
                    snprintf(why, sizeof why,
                             "the new job's courier run ended (status %d) before its ranks "
                             "connected: see its message above",
                             kid_status(kw.st));
                    break;
                }
                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0) continue;
                char w[200];
                if (cr_xchan_start(job, &ch, fd, CR_XCHAN_ACCEPT, kid_ended, &kw, w, sizeof w)) {
                    close(fd);
                    continue;
                }
                ok = true;
            }
        }
        if (lfd >= 0) close(lfd);
    }
    int info[2] = {total, (int)kw.pid};
    cr_coll_bcast(job, &c->g, call, info, sizeof info, root);
    rc = connect_groups(job, call, comm, root, &ch, ok, why, MPI_ERR_SPAWN, intercomm);
    if (ch.fd >= 0) close(ch.fd);
    cr_xchan_close(&ch);
    for (int i = 0; errcodes && i < info[0]; i++) errcodes[i] = rc ? MPI_ERR_SPAWN : MPI_SUCCESS;
    if (rc) {
        if (kw.pid > 0 && !kw.ended) { /* connected halfway: it ends with its ranks */
            kill(kw.pid, SIGTERM);
            waitpid(kw.pid, NULL, 0);
        }
        return rc;
    }
    mpi_dyn *d = dyn_of(job);
    dyn_kid k = {.pid = (pid_t)info[1],
                 .pidfd = (int)syscall(SYS_pidfd_open, info[1], 0),
                 .root = c->me == root};
    d->kids = grow(job, d->kids, d->nkids + 1, sizeof *d->kids);
    d->kids[d->nkids++] = k;
    if (k.pidfd >= 0 && k.root) cr_poll_also(job, k.pidfd);
    if (k.root) cr_bg_add(job, kids_hook);
    cr_xset_on_lost(d->sets[d->nsets - 1].x, kid_lost, (void *)(intptr_t)k.pid);
    return MPI_SUCCESS;
}

PMPI_WEAK(Comm_spawn);
int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    const char *call = "MPI_Comm_spawn";
    cr_job *job = mpi_enter(call);
    char *cmd = (char *)command;
    char **argvs[1] = {argv};
    int rc = spawn(job, call, 1, &cmd, argvs, &maxprocs, &info, root, comm, intercomm,
                   array_of_errcodes);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Comm_spawn_multiple);
int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    const char *call = "MPI_Comm_spawn_multiple";
    cr_job *job = mpi_enter(call);
    int rc = spawn(job, call, count, array_of_commands, array_of_argv, array_of_maxprocs,
                   array_of_info, root, comm, intercomm, array_of_errcodes);
    return mpi_leave(job, rc);
}

void mpi_dyn_init(cr_job *job)
{
    const char *port = getenv("COURIER_PARENT_PORT");
    if (!port || !*port) return;
    const char *call = "MPI_Init";
    cr_xchan ch = {.fd = -1};
    char why[240] = "";
    bool ok = false;
    if (job->rank == 0) {
        int fd = cr_connect_to(port, why, sizeof why);
        if (fd >= 0 && cr_xchan_start(job, &ch, fd, CR_XCHAN_CONNECT, NULL, NULL, why, sizeof why))
            close(fd);
        else if (fd >= 0)
            ok = true;
    }
    MPI_Comm parent = MPI_COMM_NULL;
    int rc = connect_groups(job, call, MPI_COMM_WORLD, 0, &ch, ok, why, MPI_ERR_SPAWN, &parent);
    if (ch.fd >= 0) close(ch.fd);
    cr_xchan_close(&ch);
    if (rc) cr_fatal(job, call, "cannot reach the job that spawned this one (%s)", why);
    dyn_of(job)->parent = parent;
}

PMPI_WEAK(Comm_get_parent);
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    const char *call = "MPI_Comm_get_parent";
    cr_job *job = mpi_enter(call);
    if (!parent)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "parent is NULL"));
    mpi_dyn *d = job->mpi->dyn;
    *parent = d && mpi_comm_get(d->parent) ? d->parent : MPI_COMM_NULL;
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- finalize -------------------------------------------------------------- */

void mpi_dyn_finalize(cr_job *job)
{
    mpi_dyn *d = job->mpi->dyn;
    if (!d) return;
    char path[600], why[300];
    while (d->npub)
        if (name_path(d->pub[0], path, sizeof path, why, sizeof why) == 0)
            unpublish(d, 0, path);
        else {
            free(d->pub[0]);
            d->pub[0] = d->pub[--d->npub];
        }
    for (int i = 0; i < d->nports; i++) close(d->ports[i].fd);
    d->nports = 0;
    /* MPI_Finalize is collective over connected jobs: the root of a spawn
     * waits for the new job to end (its launcher), so nothing is left */
    while (d->nkids) {
        dyn_kid *k = &d->kids[0];
        if (k->root) {
            if (k->pidfd >= 0) cr_wait_fd(job, k->pidfd, NULL, NULL);
            kids_check(job, true);
        } else {
            if (k->pidfd >= 0) close(k->pidfd);
            *k = d->kids[--d->nkids];
        }
    }
}
