/* Peers of other jobs (MPI's dynamic processes): sets of extra peers beyond the
 * job's world, and the authenticated channel over which two processes of the
 * same user agree to make one.
 *
 * A set is a world of its own: `size` members, this process member `self`,
 * its members numbered alike in every process that belongs to it (the two
 * groups one after the other). Each process opens the tcp transport once more
 * for the set, with the set's key in place of the job's secret, so that every
 * connection of the set proves itself exactly as the job's own do (tcp_auth.h).
 * The members of the other group then become engine peers job->npeers,
 * job->npeers + 1, ...: point-to-point, matching and the protocols treat them
 * as any rank (they are never on this host's segment: no single copy).
 *
 * The channel (cr_xchan) is how the two groups' leaders swap what a set needs
 * (sizes, cards) over a stream socket (a port's connection, MPI_Comm_join's
 * descriptor): both ends prove they hold the user's key (cr_user_key, a file
 * only the user can read), and every message after that carries a MAC under
 * a key of this channel alone. */
#ifndef COURIER_XPEERS_H
#define COURIER_XPEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

#define CR_XCARD 64 /* the most bytes a member's card takes */

typedef struct cr_xset cr_xset;

/* The user's key: CR_SECRET_LEN random bytes in the user's directory, file
 * "key" (mode 0600, made once); 0, or -1 with why. */
int cr_user_key(unsigned char key[CR_SECRET_LEN], char *why, size_t wlen);

/* The address a port listens on (COURIER_NET's, as tcp picks it; default
 * 127.0.0.1): a listening socket (non-blocking) and its "addr:port" in name;
 * the descriptor, or -1 with why. */
int cr_listen_any(char *name, size_t len, char *why, size_t wlen);
/* Connect to "addr:port" (blocking); the descriptor, or -1 with why. */
int cr_connect_to(const char *name, char *why, size_t wlen);

/* The channel between two leaders. */
typedef struct cr_xchan {
    int fd;
    bool low;                          /* this end is the low group of the set (the acceptor) */
    unsigned char mkey[CR_SECRET_LEN]; /* the MACs of this channel's messages */
    unsigned char lkey[CR_SECRET_LEN]; /* the set's key, for the tcp transport */
    uint64_t sent, got;                /* messages each way (in every MAC) */
} cr_xchan;
enum { CR_XCHAN_ACCEPT = 1, CR_XCHAN_CONNECT = 0, CR_XCHAN_EITHER = 2 };
/* The handshake over fd: role is the end's (EITHER: both ends alike, as
 * MPI_Comm_join's; the one whose nonce is lower is the low one). Waits for the
 * other end with the engine moving (the engine lock released meanwhile);
 * watch, when given, is asked between waits whether to give up (non-zero:
 * its value is returned). 0, or -1 with why. */
int cr_xchan_start(cr_job *job, cr_xchan *ch, int fd, int role, int (*watch)(void *), void *arg,
                   char *why, size_t wlen);
int cr_xchan_send(cr_job *job, cr_xchan *ch, const void *buf, size_t len, char *why, size_t wlen);
/* Exactly len bytes (the other end sent len): 0, or -1 with why. */
int cr_xchan_recv(cr_job *job, cr_xchan *ch, void *buf, size_t len, char *why, size_t wlen);
void cr_xchan_close(cr_xchan *ch);

/* Wait until fd is readable (a port's listener, a socket), moving the engine
 * meanwhile with its lock released; watch as above. 0, or watch's value. This
 * wait is not reported to the hang watchdog: what it waits for comes from
 * outside the job. */
int cr_wait_fd(cr_job *job, int fd, int (*watch)(void *), void *arg);

/* The waiting point also wakes when fd is readable (a child's pidfd), until
 * cr_poll_no_more. */
void cr_poll_also(cr_job *job, int fd);
void cr_poll_no_more(cr_job *job, int fd);

/* This process's end of a new set: member self of size, key the set's. Its
 * card goes to card (*cardlen bytes, at most CR_XCARD). NULL, with why. */
cr_xset *cr_xset_open(cr_job *job, int self, int size, const unsigned char key[CR_SECRET_LEN],
                      void *card, size_t *cardlen, char *why, size_t wlen);
/* Members lo..lo+n-1 of the set, whose cards are cards[i * CR_XCARD], become
 * engine peers; returns the engine's peer of member lo (member lo + i is that
 * + i). Once per set, for the members of the other group. */
int cr_xset_add(cr_job *job, cr_xset *x, int lo, int n, const unsigned char *cards);
/* When the set's transport finds a peer lost (its connection ended without
 * goodbye: the other job died) it ends this process; fn is called first, and
 * may end it in its own words instead (it does not return then). */
void cr_xset_on_lost(cr_xset *x, void (*fn)(cr_job *job, void *arg), void *arg);
/* Leave the set: every send to its peers completes, each member of this group
 * swaps a last word with each member of the other (so that nothing either
 * sends after it is still on its way), and the transport is closed; its peers
 * answer cr_tp_gone from then on and may not be named again. Collective over
 * the whole set. */
void cr_xset_close(cr_job *job, const char *call, cr_xset *x);

#endif
