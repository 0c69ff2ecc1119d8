/* The tcp transport's state, shared by its two files and private to them:
 * tcp.c moves frames (send queues, receiving, progress, leaving) and
 * tcp_connect.c makes connections (the listening socket and this rank's card,
 * calling a peer, accepting, the handshake, refusing strangers, timers). The
 * invariants this state keeps are in those two files' opening comments; here
 * are only the structs and the few calls one file makes into the other. */
#ifndef COURIER_TCP_INTERNAL_H
#define COURIER_TCP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tcp_auth.h"
#include "tp_common.h"
#include "transport.h"

/* The shared helpers (tp_common.h), with this transport's state. */
#define now_ms() cr_tp_now_ms()
#define warn_once(s, kind, ...) cr_tp_warn_once(&(s)->env, &(s)->warned, kind, __VA_ARGS__)
#define die(s, call, ...) cr_tp_die(&(s)->env, call, __VA_ARGS__)

/* A frame held back (the engine refused it, or one of its kind before it). */
typedef struct tcp_park {
    struct tcp_park *next;
    cr_hdr h;
    uint32_t len;
    unsigned char data[];
} tcp_park;

typedef struct tcp_block {
    struct tcp_block *next;
    size_t off, len, cap;
    unsigned char data[];
} tcp_block;

enum { ST_HANDSHAKE = 1, ST_UP, ST_DEAD };

typedef struct tcp_conn {
    int fd;
    int peer;       /* the rank it serves, or -1 while unproven (acceptor) */
    uint8_t accept; /* we accepted it (else we called) */
    uint8_t state;  /* ST_* */
    uint8_t readable, writable;
    uint32_t events; /* the interest mask it is in the epoll set with (0: out, quiet) */
    uint8_t in_ready;
    uint8_t stranger; /* accepted and not yet proven: counted in nstrangers */
    uint8_t hello_ok; /* a well-formed HELLO came: a member that gave up, not a scanner */
    uint8_t shut;     /* closing: our write side is shut */
    uint8_t bye_held; /* a BYE came while frames were held: it waits for them */
    int broken;       /* errno of a failed write: the read side says what happened */
    uint32_t epoch;   /* the poll round that last handled it */
    uint64_t since;   /* ms: accepted (the handshake's deadline counts from here) */
    tcp_auth *auth;   /* during the handshake */
    unsigned char *rx;
    size_t rxcap, rxhead, rxtail;
    /* Frames held back per kind ([1]: the lane), in arrival order; stalled[k]
     * is *recv_gen + 1 while the engine refuses the first of park[k]. */
    tcp_park *park[2], *park_tail[2];
    uint32_t stalled[2];
    size_t parked; /* bytes held in park[] */
    /* A DATA frame read straight into the receive's memory: ip_len bytes at
     * ip_dst, ip_got of them in so far, its header ip_h (ip_dst NULL: none). */
    unsigned char *ip_dst;
    size_t ip_len, ip_got;
    cr_hdr ip_h;
    struct tcp_conn *next, *prev;   /* every connection */
    struct tcp_conn *rnext, *rprev; /* the ready list */
    char who[64];                   /* address:port, for log lines */
} tcp_conn;

typedef struct tcp_peer {
    tcp_conn *conn; /* serving, or our own call while it is in the handshake */
    tcp_block *qhead, *qtail;
    size_t qbytes;
    uint8_t gone;           /* it left: BYE came, or it was gone before we called */
    uint8_t bye_out;        /* closing: our BYE is queued */
    uint8_t done;           /* closing: nothing more to do for it */
    uint64_t retry_at;      /* ms: call again then (0: no call due) */
    uint64_t refused_since; /* ms: its address has refused us since then */
    unsigned backoff;       /* ms */
} tcp_peer;

enum {
    W_GARBAGE = 1,
    W_RANK = 2,
    W_MAC = 4,
    W_SLOW = 8,
    W_CLOSED = 16,
    W_FLOOD = 32,
    W_FAR = 64,
    W_CLOSE = 128
};

typedef struct tcp_state {
    cr_tp_env env;
    int epfd, lfd, tfd;
    uint32_t maxpay;
    tcp_peer *peers;
    uint8_t *may; /* per rank: ours to serve */
    tcp_conn *conns, *conns_tail;
    tcp_conn *ready, *ready_tail;
    int nstrangers, ndead;
    uint64_t timer_at; /* when the timerfd fires (0: disarmed) */
    uint64_t hs_ms;    /* an unproven connection's deadline: TCP_HANDSHAKE_MS x crowding */
    uint32_t epoch;
    unsigned warned; /* W_* kinds already logged */
    bool closing, in_poll, listen_more;
    tcp_conn *hot;   /* the connection we last sent or delivered on: read it first */
    tcp_conn *quiet; /* hot, and out of the epoll set (quiet_set); NULL: none */
    unsigned rounds; /* polls so far (epoll_wait every few while a connection is hot) */
    unsigned hot_n;  /* polls that read hot directly since it became hot */
    char lkey, tkey; /* epoll tags of the listener and the timer */
    char addr[64];   /* our listening address, for log lines */
} tcp_state;

/* The ready list: connections that may have work without a new event. */
static inline void ready_push(tcp_state *s, tcp_conn *c)
{
    if (c->in_ready || c->state == ST_DEAD) return;
    c->in_ready = 1;
    c->rnext = NULL;
    c->rprev = s->ready_tail;
    if (s->ready_tail)
        s->ready_tail->rnext = c;
    else
        s->ready = c;
    s->ready_tail = c;
}

static inline void ready_del(tcp_state *s, tcp_conn *c)
{
    if (!c->in_ready) return;
    c->in_ready = 0;
    if (c->rprev)
        c->rprev->rnext = c->rnext;
    else
        s->ready = c->rnext;
    if (c->rnext)
        c->rnext->rprev = c->rprev;
    else
        s->ready_tail = c->rprev;
}

/* tcp_connect.c */
int tcp_open(void **ctx, const cr_tp_env *env);
void tcp_free_state(tcp_state *s);
/* Call peer p now (a send needs it, or closing has something for it). */
void tcp_start_connect(tcp_state *s, int p);
/* Move the handshake of c as far as the socket allows. */
void tcp_hs_progress(tcp_state *s, tcp_conn *c);
/* Accept what the listener has (a few at a time). */
void tcp_accept_some(tcp_state *s);
/* The timerfd fired: drop slow strangers, call peers whose retry is due. */
void tcp_timers(tcp_state *s);
/* Done with c: its socket closes now, the struct goes at the end of the round
 * (tcp_free_dead). reset: a refused stranger, closed without TIME_WAIT. */
void tcp_conn_kill(tcp_state *s, tcp_conn *c, bool reset);
void tcp_free_dead(tcp_state *s);

/* tcp.c */
/* Write what is queued for peer p (its connection is up). */
void tcp_q_flush(tcp_state *s, int p);
/* Drop what is queued for a peer (it has left). */
void tcp_q_drop(tcp_peer *pr);
/* Bring c's interest mask in the epoll set to what c->writable asks for
 * (EPOLLOUT only while a write has come short); call after changing it. */
void tcp_watch(tcp_state *s, tcp_conn *c);

#endif
