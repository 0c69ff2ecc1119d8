/* courier — the Intel iPSC/2 NX/2 message-passing interface.
 *
 * Programs written for NX/2 compile unchanged against this header and run with
 * `courier run -n N prog`. Nodes are the ranks of the job, numbered 0..numnodes()-1;
 * there is one process per node (pid 0). No initialization call is needed.
 *
 * Types are non-negative. A typesel in a receive or probe is:
 *   >= 0   exactly that type;
 *   -1     any type but the force types (FORCE_TYPE and above);
 *   other  negative: a mask; bit t (0..30) set selects type t.
 * Messages from one node to another are received in the order they were sent.
 * Errors (bad node, negative length, a message longer than the receive buffer, an
 * unknown message id...) print one line naming the call and the node, and end the
 * job with a non-zero status; the underscore forms (_csend, ...) return -1 and
 * set errno instead. See docs/nx.md. */
#ifndef COURIER_NX_H
#define COURIER_NX_H

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default) /* libcourier exports only its interfaces */
#endif

/* Blocking calls: csend returns when buf may be reused; crecv when the message is in buf.
 * node -1 in csend sends to every other node. */
void csend(long type, char *buf, long count, long node, long pid);
void crecv(long typesel, char *buf, long count);
void cprobe(long typesel);

/* Asynchronous calls return a message id for msgwait/msgdone. */
long isend(long type, char *buf, long count, long node, long pid);
long irecv(long typesel, char *buf, long count);
void msgwait(long mid);
long msgdone(long mid); /* 1 (and the id is released) when complete, else 0 */
/* Cancel an isend or irecv and release its id (the Paragon's): a receive that
 * no message has matched yet receives nothing; one already matched, or a send
 * whose data is under way, completes first. */
void msgcancel(long mid);
long iprobe(long typesel);

/* Interrupt-driven receive: handler(type, count, node, pid) runs when the message
 * has arrived, also while the program computes. masktrap(1) holds handlers back
 * (and waits for a running one to return), masktrap(0) lets them run; both return
 * the previous state. */
void hrecv(long typesel, char *buf, long count, void (*handler)(long, long, long, long));
long masktrap(long state);

/* Extended receive and probe (Paragon OSF/1 NX): nodesel picks the sending node
 * (-1: any), ptypesel its process type (-1: any; every courier process is type 0
 * and any ptypesel >= 0 selects it). When the message is received or probed (for
 * irecvx: when msgwait/msgdone completes it), info[0..3] receives its type,
 * count in bytes, node and process type; info[4..7] are left alone (programs
 * pass an array of 8). The info calls below are not changed. info may be NULL. */
void crecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[]);
/* The info array NX supplied for these calls (8 longs; programs pass it as info).
 * Declared without a size so that a program that defines its own still compiles. */
extern long msginfo[];
long irecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[]);
void cprobex(long typesel, long nodesel, long ptypesel, long info[]);
long iprobex(long typesel, long nodesel, long ptypesel, long info[]);
/* Sends with a process type and an info array (courier's assumption; see
 * docs/nx.md): like csend/isend, and info[0..3] receives the type, count, node
 * and process type of the message sent. */
void csendx(long type, char *buf, long count, long node, long ptype, long info[]);
long isendx(long type, char *buf, long count, long node, long ptype, long info[]);

/* The last message received or probed by a call without an info array. */
long infocount(void);
long infonode(void);
long infopid(void);
long infotype(void);

/* Where this process stands. myhost() is a number no node has (-32768): the host
 * process, or in a job without one the first rank of the job's first program. */
long mynode(void);
long mypid(void);
long numnodes(void);
long nodedim(void); /* dimension of the smallest hypercube holding numnodes() nodes */
long myhost(void);

/* Global operations over all nodes; every node calls them in the same order.
 * x[0..n-1] is combined element-wise across nodes, the result left in x on every
 * node; work[0..n-1] is scratch space. */
void gsync(void);
void gdsum(double x[], long n, double work[]);
void gisum(long x[], long n, long work[]);
void gdhigh(double x[], long n, double work[]);
void gihigh(long x[], long n, long work[]);
void gdlow(double x[], long n, double work[]);
void gilow(long x[], long n, long work[]);
void gdprod(double x[], long n, double work[]);
void giprod(long x[], long n, long work[]); /* wraps around on overflow */
void giand(long x[], long n, long work[]);  /* bitwise and */
void gior(long x[], long n, long work[]);   /* bitwise or */
void gixor(long x[], long n, long work[]);  /* bitwise exclusive or */
/* Single precision (float, Fortran's REAL): sum, maximum, minimum, product. */
void gssum(float x[], long n, float work[]);
void gshigh(float x[], long n, float work[]);
void gslow(float x[], long n, float work[]);
void gsprod(float x[], long n, float work[]);

/* Global concatenation, in node order, into y on every node. gcol: each node
 * gives xlen bytes (the lengths may differ); y holds ylen bytes, and *ncnt
 * receives the bytes concatenated. gcolx: xlens[i] is the length of node i's
 * contribution (the same array on every node). */
void gcol(char x[], long xlen, char y[], long ylen, long *ncnt);
void gcolx(char x[], long xlens[], char y[]);

/* Global operation with a user function over xlen-byte values: the function is
 * called as function(a, b, xlen) with two xlen-byte values (a function of two
 * arguments ignores the third) and must leave a op b in a (its return value is
 * ignored; b may be written over); op must be associative and commutative. The
 * result is left in x on every node; work is xlen bytes of scratch. */
#if defined(__cplusplus)
typedef long (*nx_gopf_fn)(void *, void *);
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ > 201710L
typedef void *nx_gopf_fn; /* C23 has no unprototyped function types */
#else
typedef long (*nx_gopf_fn)(); /* long function(T *a, T *b[, int len]) */
#endif
void gopf(char x[], long xlen, char work[], nx_gopf_fn function);

/* Time: dclock in seconds, mclock in milliseconds, both from the same
 * monotonic clock on every node of the machine (only differences mean anything).
 * flick gives the processor up briefly (to other processes on it). */
double dclock(void);
long mclock(void);
void flick(void);

/* Force types (the iPSC/860's): types FORCE_TYPE..1999999999, which typesel -1
 * does not select. The original dropped such a message when no receive was
 * posted for it; courier keeps it like any other (docs/nx.md). */
#define FORCE_TYPE 1073741824L

/* The underscore forms (Paragon OSF/1): the same calls, but where the plain
 * call ends the job (a bad argument: errno EINVAL; a message longer than the
 * receive buffer, cut to fit: EMSGSIZE) they return -1 and set errno, and
 * nx_perror(s) prints s and what went wrong. Otherwise they return what the
 * plain call does, or 0 where it returns nothing; _msgdone returns -1 for a
 * message cut to fit once it is complete (its id is released). */
long _csend(long type, char *buf, long count, long node, long pid);
long _crecv(long typesel, char *buf, long count);
long _cprobe(long typesel);
long _iprobe(long typesel);
long _isend(long type, char *buf, long count, long node, long pid);
long _irecv(long typesel, char *buf, long count);
long _msgwait(long mid);
long _msgdone(long mid);
long _msgcancel(long mid);
long _crecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[]);
long _irecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[]);
long _cprobex(long typesel, long nodesel, long ptypesel, long info[]);
long _iprobex(long typesel, long nodesel, long ptypesel, long info[]);
long _csendx(long type, char *buf, long count, long node, long ptype, long info[]);
long _isendx(long type, char *buf, long count, long node, long ptype, long info[]);
long _gsync(void);
double _dclock(void);
/* The iPSC/860's hardware clock (as PICL's port reads it): ticks of 200 ns, the
 * low 32 bits in t[0], the high in t[1]; the same clock as dclock's. */
void _hwclock(unsigned long t[2]);
long _flick(void);
void nx_perror(const char *s);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
