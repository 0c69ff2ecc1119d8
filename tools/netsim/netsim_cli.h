/* `courier netsim`: the command-line front end of the network models (src/net/). */
#ifndef COURIER_NETSIM_CLI_H
#define COURIER_NETSIM_CLI_H

#include <stddef.h>

/* argv[0] is "netsim". Returns the process exit status (0 ok, 2 bad arguments). */
int cr_netsim_main(int argc, char **argv);

/* Parse the options as cr_netsim_main does, but run nothing and print nothing:
 * 0 (the options would run), 1 (--help), or 2 with a one-line message in err
 * (no "courier netsim:" prefix, no newline). argv is not changed. */
int cr_netsim_parse(int argc, char **argv, char *err, size_t errlen);

#endif
