/* courier — <cube.h>, the iPSC/2's and iPSC/860's name of the NX/2 header.
 *
 * Node programs include it for csend, crecv, mynode, gdsum... (all of nx.h).
 * Host programs, which ran on the iPSC's host and load the node program, also
 * get the host's calls below. With courier the host program is the first
 * program of the job, on one rank, and courier run starts the node program
 * beside it:
 *
 *     courier run -n 1 ./host : -n 8 ./node
 *
 * The host is then outside the cube: the nodes are numbered 0..7, the host is
 * node myhost() (-32768) to them, and it takes no part in global operations.
 * courier run recognizes a host program by its calls to these functions. See
 * docs/nx.md, "The host process". */
#ifndef COURIER_CUBE_H
#define COURIER_CUBE_H

#include "nx.h"

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif

/* The host's calls. Each returns 0; a node that calls one ends the job with a
 * message. The cube is the job's nodes: getcube, attachcube and relcube check
 * nothing else; load checks its node and pid (the node program is already
 * running); setpid checks its pid. */
long getcube(char *cubename, char *cubetype, char *srmname, long keep);
long attachcube(char *cubename);
long relcube(char *cubename);
long load(char *filename, long node, long pid);
long setpid(long pid);
/* Wait until node (-1: every node) has ended. killcube does the same: the
 * nodes end by themselves, and none is killed. */
long waitall(long node, long pid);
long killcube(long node, long pid);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif
