/* courier's mpiexec / mpirun front end (tools/mpiexec.c). */
#ifndef COURIER_MPIEXEC_H
#define COURIER_MPIEXEC_H

/* argv[0] is the name we were called by (mpiexec, mpirun, courier-mpiexec,
 * ...). Returns the exit status: courier run's, or 2 for an option refused. */
int cr_mpiexec_main(int argc, char **argv);

#endif
