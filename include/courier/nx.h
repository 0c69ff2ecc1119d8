/* courier — the Intel iPSC/2 NX/2 message-passing interface.
 *
 * Programs written for NX/2 compile unchanged against this header and run with
 * `courier run -n N prog`. Nodes are the ranks of the job, numbered 0..numnodes()-1;
 * there is one process per node (pid 0). No initialization call is needed.
 *
 * Types are non-negative. A typesel in a receive or probe is:
 *   >= 0   exactly that type;
 *   -1     any type;
 *   other  negative: a mask; bit t (0..30) set selects type t.
 * Messages from one node to another are received in the order they were sent.
 * Errors (bad node, negative length, a message longer than the receive buffer, an
 * unknown message id...) print one line naming the call and the node, and end the
 * job with a non-zero status. See docs/nx.md. */
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
long iprobe(long typesel);

/* Interrupt-driven receive: handler(type, count, node, pid) runs when the message
 * has arrived, also while the program computes. masktrap(1) holds handlers back
 * (and waits for a running one to return), masktrap(0) lets them run; both return
 * the previous state. */
void hrecv(long typesel, char *buf, long count, void (*handler)(long, long, long, long));
long masktrap(long state);

/* The last message received or probed. */
long infocount(void);
long infonode(void);
long infopid(void);
long infotype(void);

/* Where this process stands. myhost() names node 0, the controlling process of the job. */
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

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
