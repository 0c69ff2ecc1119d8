/* `courier run`: the job launcher (src/run/launcher.c). */
#ifndef COURIER_LAUNCHER_H
#define COURIER_LAUNCHER_H
/* argv[0] is "run". Returns the exit status for the courier command. */
int cr_run_main(int argc, char **argv);
#endif
