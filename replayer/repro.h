/* repro.h -- `dynrec repro`: one recorded frame as a standalone Python script
 * that needs only torch (replayer/repro.py writes it). */
#ifndef DR_REPRO_H
#define DR_REPRO_H

#include <stdio.h>

#include "../cli/exit.h"
#include "../schema/error.h"

typedef struct {
    const char *trace;   /* the recording */
    const char *out;     /* -o: the script to write; NULL writes it to stdout */
    const char *frame;   /* --frame QUALNAME (NULL: the frame with the most compiles) */
    const char *compile; /* --compile ID: that compile's frame, up to that compile */
} DrReproOptions;

/* Exit statuses of dr_repro (cli/exit.h): 0; 2 (usage, an unknown frame or
 * compile); 3 (written, but some values could not be rebuilt); 65 (not a
 * readable trace, or a malformed value tree); 66 (no captured frames); 70
 * (the generator failed); 73 (the script cannot be written). */

/* Writes the repro to o->out, or to out when that is NULL; its notes go to
 * msgs, and what the generator finds wrong with the trace (an unknown
 * frame, no captures) to Python's sys.stderr.  Returns the exit status for
 * the command; on a failure of dynrec's own (the trace cannot be opened,
 * Python cannot start, the script cannot be written) err (not NULL) says
 * why, for the command line to print. */
int dr_repro(const DrReproOptions *o, FILE *out, FILE *msgs, DrError *err);

#endif
