/* `courier netsim`: the command-line front end of the network models (src/net/). */
#ifndef COURIER_NETSIM_CLI_H
#define COURIER_NETSIM_CLI_H
/* argv[0] is "netsim". Returns the process exit status (0 ok, 2 bad arguments). */
int cr_netsim_main(int argc, char **argv);
#endif
