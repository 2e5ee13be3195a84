/* rerun.h -- `dynrec rerun`: run a recorded program again under its recorded
 * conditions, record it, and compare the two traces. */
#ifndef DR_RERUN_H
#define DR_RERUN_H

#include <stdio.h>

#include "../cli/exit.h"
#include "../schema/error.h"

typedef struct {
    const char *trace; /* the recording to re-run */
    const char *out;   /* -o: the new trace (default <trace>-rerun.db) */
    int nset;          /* --set NAME=VALUE, passed to `dynrec run --set` */
    char **set;
    int from_trace;   /* --from-trace: run the sources stored in the trace */
    int trust;        /* --trust: allowed to run code that came in the trace */
    int no_sandbox;   /* --no-sandbox: a foreign or --from-trace re-run unconfined */
    int json;         /* --json report */
    unsigned ignore;  /* --ignore: DrCompareOptions.ignore bits (compare.h) */
    const char *self; /* the dynrec binary to run (`dynrec run --rerun-of`) */
} DrRerunOptions;

/* Exit statuses of dr_rerun (cli/exit.h): 0 identical, 1 different, 2, 65,
 * 66 (the recorded script is gone: use --from-trace), 69 (another Python
 * minor version), 77 (--from-trace without --trust). */

/* Re-runs, records and compares: the report goes to out, notes (what was
 * restored, which sources changed, the sandbox) to msgs.  Returns the exit
 * status for the command (above); on a failure, err (not NULL) says why,
 * for the command line to print, or is left empty when a line on msgs
 * already did (--set) or there is nothing to add (out of memory). */
int dr_rerun(const DrRerunOptions *o, FILE *out, FILE *msgs, DrError *err);

#endif
