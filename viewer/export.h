/* export.h -- `dynrec export`: a trace in the formats other viewers read.
 *
 *   perfetto     Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing)
 *   torch-trace  the structured-trace log TORCH_TRACE writes (tlparse) */
#ifndef DR_EXPORT_H
#define DR_EXPORT_H

#include <stdio.h>

#include "../schema/trace.h"

/* Writes the trace's compiles (slices, attempts and backend compiles
 * nested), graph breaks, guard failures and errors (instant events) and
 * cache counters as one Chrome trace-event JSON object to out.  Returns
 * DR_OK or an error (err names the file). */
int dr_export_perfetto(DrTrace *t, FILE *out, DrError *err);

/* The same for n traces (the ranks of a torchrun job) as one timeline: a
 * process per trace, named by its rank (meta dist.rank) and script, on one
 * clock when every trace records its wall-clock start (start_unix_ns). */
int dr_export_perfetto_many(DrTrace *const *t, size_t n, FILE *out, DrError *err);

/* Writes the structured-trace records of t into directory dir (created
 * when missing) as dedicated_log_torch_trace_<name>.log, line for line in
 * TORCH_TRACE's format.  *path (when not NULL) gets the file's malloc'd
 * path, *skipped the number of records left out because their metadata was
 * not a JSON object or their payload unreadable.  Returns DR_OK, DR_ERR_IO
 * (dir or the file cannot be made), or the reader's errors. */
int dr_export_torch_trace(DrTrace *t, const char *dir, char **path, long *skipped, DrError *err);

#endif
