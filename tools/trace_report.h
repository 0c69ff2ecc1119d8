/* `courier trace FILE [--plot DIR] [--top N]`: the summary of a trace file written by
 * `courier run --trace FILE` (Chrome trace-event JSON, one event per line). */
#ifndef COURIER_TRACE_REPORT_H
#define COURIER_TRACE_REPORT_H

/* argv[0] is "trace". Prints the report on stdout. Returns the process exit status:
 * 0 ok (also for a truncated file whose events could be read, with a warning), 1 the
 * plots could not be drawn (gnuplot failed, a file could not be written), 2 bad arguments
 * or bad input (one line on stderr naming the file, the line and what is wrong), 3 --plot
 * without gnuplot installed (the data and scripts are left in DIR). */
int cr_trace_main(int argc, char **argv);

#endif
