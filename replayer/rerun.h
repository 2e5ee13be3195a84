/* rerun.h -- `dynrec rerun`: run a recorded program again under its recorded
 * conditions, record it, and compare the two traces. */
#ifndef DR_RERUN_H
#define DR_RERUN_H

#include "../cli/exit.h"

typedef struct {
    const char *trace;    /* the recording to re-run */
    const char *out;      /* -o: the new trace (default <trace>-rerun.db) */
    int nset;             /* --set NAME=VALUE, passed to `dynrec run --set` */
    char **set;
    int from_trace;       /* --from-trace: run the sources stored in the trace */
    int trust;            /* --trust: allowed to run code that came in the trace */
    int no_sandbox;       /* --no-sandbox: a foreign or --from-trace re-run unconfined */
    int json;             /* --json report */
    unsigned ignore;      /* --ignore: DrCompareOptions.ignore bits (compare.h) */
    const char *self;     /* the dynrec binary to run (`dynrec run --rerun-of`) */
} DrRerunOptions;

/* Exit statuses of dr_rerun (cli/exit.h): 0 identical, 1 different, 2, 65,
 * 66 (the recorded script is gone: use --from-trace), 69 (another Python
 * minor version), 77 (--from-trace without --trust). */

/* Re-runs, records and compares; prints its notes to stderr and the report
 * to stdout.  Returns the exit status for the command. */
int dr_rerun(const DrRerunOptions *o);

/* `dynrec replay`: Dynamo's tracing of every captured frame, re-executed
 * from the trace alone (`dynrec run --replay-of`, replayer/replay.py), then
 * compared with the recording. */
typedef struct {
    const char *trace;    /* the recording to replay */
    const char *out;      /* -o: the replay's trace (default <trace>-replay.db) */
    const char *frame;    /* --frame QUALNAME: only that frame (and its resume functions) */
    const char *compile;  /* --compile ID: that compile's frame, up to that compile */
    const char *backend;  /* --backend recorded|eager|NAME */
    int nset;             /* --set NAME=VALUE */
    char **set;
    int trust;            /* --trust: run definitions from sources not on disk as recorded */
    int no_sandbox;       /* --no-sandbox: run the replay child unconfined */
    int json;
    unsigned ignore;      /* --ignore, added to exit status and output (never compared) */
    const char *self;
} DrReplayOptions;

/* Exit statuses of dr_replay: those of dr_rerun, and 3 (identical, but
 * some frames could not be replayed). */

int dr_replay(const DrReplayOptions *o);

#endif
