/* The `courier` command: one entry point for the job launcher (run), the network
 * simulator (netsim) and information about this build (info). */
#include <stdio.h>
#include <string.h>

#include "jobs.h"
#include "launcher.h"
#include "mpiexec.h"
#include "netsim_cli.h"
#include "trace_report.h"

static const char usage[] = "usage: courier <command> [args]\n"
                            "  run     start a parallel job:  courier run -n 4 ./prog\n"
                            "  ps      list your running jobs\n"
                            "  status  what each rank of a job does:  courier status JOB\n"
                            "  netsim  simulate the networks of the iPSC/2, CS-2, iWarp and SP2\n"
                            "  trace   summarize a trace file:  courier trace FILE [--plot DIR]\n"
                            "  info    show how this courier was built (--version: its version)\n"
                            "  agent   (started by run on each host of a job across hosts)\n"
                            "Run 'courier <command> --help' for a command's options.\n";

int main(int argc, char **argv)
{
    /* called as mpiexec, mpirun, courier-mpiexec or courier-mpirun (links to
     * this program, tools/CMakeLists.txt): the MPI standard's front end */
    const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    if (!strncmp(base, "courier-", 8)) base += 8;
    if (!strcmp(base, "mpiexec") || !strcmp(base, "mpirun")) return cr_mpiexec_main(argc, argv);
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "run")) return cr_run_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "agent")) return cr_agent_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "ps")) return cr_ps_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "status")) return cr_status_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "netsim")) return cr_netsim_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "trace")) return cr_trace_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "info")) {
        printf("courier %s\ntransports: self, shm, tcp, ucx (ucx when named in "
               "COURIER_TRANSPORTS)\ninterfaces: NX/2, MPL, MPI 5.0 (C, C++, and Fortran where "
               "built with gfortran), "
               "native one-sided and streams\nlaunch: courier run "
               "(one host, or --hosts across hosts), mpiexec, srun --mpi=pmi2 or pmix\n",
               COURIER_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
        printf("courier %s\n", COURIER_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    fprintf(stderr, "courier: unknown command '%s'\n", cmd);
    fputs(usage, stderr);
    return 2;
}
