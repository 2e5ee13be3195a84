/* ident.h -- how a trace names a frame and a compile: the one definition
 * of each, shared by the recorder's readers (diff, replay, report, view,
 * repro).  SCHEMA.md, "Compile identity".
 *
 * A compile is identified by (epoch, frame key, ordinal within the frame):
 * torch._dynamo.reset() restarts Dynamo's compile ids, so the recorder
 * stores a compile id with its epoch, "E:F/N" after the E-th reset and
 * plain "F/N" before the first.  A frame is identified by its file
 * (relative to the run's root), qualname and first line. */
#ifndef DR_IDENT_H
#define DR_IDENT_H

#include <stddef.h>

/* The epoch of a stored compile id ("2:0/1" -> 2, "0/1" -> 0, NULL -> 0);
 * *dynamo_id (when not NULL) is set to Dynamo's own id inside it ("0/1"),
 * or to "" for NULL.  A prefix that is not a number is no epoch (0, and
 * the whole text is Dynamo's id).  The same rule as EPOCH_OF in trace.c. */
long dr_compile_epoch(const char *cid, const char **dynamo_id);

/* Writes the frame key "file\x1fqualname\x1fline" into buf (size n, cut
 * when longer); returns buf.  Frames of two traces match when their keys
 * are equal (COMPARE.md, "Matching"). */
char *dr_frame_key(char *buf, size_t n, const char *file, const char *qualname, long line);

/* Whether the code of file f is library code, not the user's: generated
 * (NULL, "<string>", "<frozen ...>"), installed (site-packages,
 * dist-packages), the standard library (lib/python3.X), inductor's
 * generated code (a torchinductor_ directory), or under one of the n
 * directories dirs (each ending in '/'; a NULL entry is skipped): torch's
 * own wherever it is installed, the standard library's, inductor's cache
 * directory as set.  The one rule: the recorder's frame counts (writer.c),
 * the adapter's user stacks and stored sources (_dynrec.is_library) and
 * show's user code (SQL dynrec_is_library) all ask it. */
int dr_is_library(const char *f, const char *const *dirs, size_t n);

#endif
