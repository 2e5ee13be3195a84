/* report.h -- `dynrec report`: a trace as Markdown for a GitHub issue. */
#ifndef DR_REPORT_H
#define DR_REPORT_H

#include <stdio.h>

#include "../schema/trace.h"

typedef struct DrReportOptions {
    int top; /* frames listed with their recompiles (default 5) */
} DrReportOptions;

/* Writes the report of an open trace to out.  Everything taken from the
 * trace is escaped for Markdown (and for HTML inside <details>).  Returns
 * DR_OK or an error (err filled); on error the output may be partial. */
int dr_report(DrTrace *t, const DrReportOptions *o, FILE *out, DrError *err);

#endif
