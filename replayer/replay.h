/* replay.h -- `dynrec replay`: Dynamo's tracing of every captured frame,
 * re-executed from the trace alone (`dynrec run --replay-of`,
 * replayer/replay.py), then compared with the recording. */
#ifndef DR_REPLAY_H
#define DR_REPLAY_H

#include <stdio.h>

#include "../cli/exit.h"
#include "../schema/error.h"

typedef struct {
    const char *trace;   /* the recording to replay */
    const char *out;     /* -o: the replay's trace (default <trace>-replay.db) */
    const char *frame;   /* --frame QUALNAME: only that frame (and its resume functions) */
    const char *compile; /* --compile ID: that compile's frame, up to that compile */
    const char *backend; /* --backend recorded|eager|NAME */
    int nset;            /* --set NAME=VALUE */
    char **set;
    int trust;      /* --trust: run definitions from sources not on disk as recorded */
    int no_sandbox; /* --no-sandbox: run the replay child unconfined */
    int json;
    unsigned ignore; /* --ignore, added to exit status and output (never compared) */
    const char *self;
} DrReplayOptions;

/* Exit statuses of dr_replay: those of dr_rerun, and 3 (identical, but
 * some frames could not be replayed). */

/* Replays and compares: the report goes to out, notes to msgs, the
 * child's own output to stderr.  Returns the exit status; on a failure
 * err (not NULL) says why, as dr_rerun's does, or is left empty when the
 * replay child already said it (65, 2). */
int dr_replay(const DrReplayOptions *o, FILE *out, FILE *msgs, DrError *err);

#endif
