/* show.h -- `dynrec show`: a plain-text or JSON summary of one trace. */
#ifndef DR_SHOW_H
#define DR_SHOW_H

#include <stdio.h>

#include "../schema/trace.h"

typedef struct DrShowOptions {
    int json;        /* --json */
    int top;         /* how many of the script's own code objects to list */
    int top_library; /* --top-library: also list all code, libraries included (0: not) */
} DrShowOptions;

/* Writes the summary of an open trace to out.  Returns DR_OK or an error
 * (err filled); on error the output may be partial. */
int dr_show(DrTrace *t, const DrShowOptions *o, FILE *out, DrError *err);

#endif
