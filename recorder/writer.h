/* writer.h -- the recorder's event buffer and its trace-writer thread.
 *
 * Producers (the Python adapter, the runner) append records to an in-memory
 * arena under a short mutex; a dedicated thread swaps the arena out at least
 * every DR_FLUSH_MS and writes it, with the latest per-code-object counts,
 * in one SQLite transaction.  The writer thread never takes the GIL, so the
 * write never stalls Python.  Nothing here includes Python.h. */
#ifndef DR_WRITER_H
#define DR_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "../schema/trace.h"

#define DR_FLUSH_MS 100

typedef struct DrRecorder DrRecorder;

/* Reports every code object with its counts: fn(ud, info) per entry. */
struct DrCodeInfo;
typedef void (*DrCodeVisit)(void *ud, const struct DrCodeInfo *info);
typedef long (*DrSnapshotFn)(DrCodeVisit fn, void *ud);

/* Takes ownership of t and starts the writer thread.  snapshot (may be
 * NULL) is called from the writer thread to read frame counts.  Returns
 * NULL on error (t is then closed unmarked). */
DrRecorder *dr_rec_start(DrTrace *t, DrSnapshotFn snapshot, DrError *err);

/* Starts the writer thread on a file reserved with dr_trace_reserve: the
 * thread makes it a trace and calls setup(trace, ud, err) before anything
 * else, while the caller goes on (starting Python).  A failure there is
 * reported by dr_rec_finish; records are dropped meanwhile. */
typedef int (*DrSetupFn)(DrTrace *t, void *ud, DrError *err);
DrRecorder *dr_rec_start_deferred(const char *path, DrSetupFn setup, void *ud,
                                  DrSnapshotFn snapshot, DrError *err);

/* Monotonic nanoseconds since dr_rec_start. */
int64_t dr_rec_now(const DrRecorder *r);

/* Appends one event (all pointers copied; text/payload may be NULL).
 * Thread-safe; never blocks on I/O.  After a write failure the recorder
 * drops everything and reports the failure once from dr_rec_finish. */
void dr_rec_event(DrRecorder *r, int64_t thread, const char *kind, int64_t num, const char *text,
                  size_t text_len, const void *payload, size_t payload_len);

/* The full form of an event, as the Dynamo adapter records them.  code and
 * code2 are indexes of the frame hook's code table (-1: none); the strings
 * with a length may hold any bytes, the others are NUL-terminated. */
typedef struct DrRecEvent {
    int64_t thread;
    const char *kind;
    int64_t code, code2;
    const char *compile_id; /* Dynamo's "frame/compile[_attempt]", or NULL */
    int64_t num;
    const char *text; /* the readable line (guard, reason, message) */
    size_t text_len;
    const char *data; /* a JSON object of further fields */
    size_t data_len;
    const char *key; /* the canonical key (volatile parts masked) */
    size_t key_len;
    const void *payload; /* large text, stored compressed */
    size_t payload_len;
    /* guard 1 (kind "guard"): data is not stored; the guard's source and
     * user location (NUL-terminated, each may be NULL) are, interned.
     * guard_text / guard_masked (NUL-terminated, or NULL) replace text /
     * key: the text and masked text with char(1) where the source was (see
     * DrEvent) */
    int guard;
    const char *guard_source, *guard_location, *guard_text, *guard_masked;
} DrRecEvent;
void dr_rec_event_full(DrRecorder *r, const DrRecEvent *ev);

/* keep 1 (--all-frames): write every code object the frame hook counts;
 * 0 (the default): library code only when an event refers to it, the rest
 * summed in meta frames.library_not_kept at the end. */
void dr_rec_keep_library(DrRecorder *r, int keep);

void dr_rec_meta(DrRecorder *r, const char *key, const char *value);
/* One node of a captured frame's value tree (table value_nodes): data (may
 * be NULL) is stored as a blob. */
void dr_rec_value(DrRecorder *r, int64_t capture, int64_t node, const char *kind, const char *type,
                  const char *value, size_t value_len, const void *data, size_t data_len);
void dr_rec_file(DrRecorder *r, const char *path, const char *role, const void *data, size_t len);

/* Installs the SIGTERM handler: on SIGTERM the writer thread writes what is
 * buffered, marks the trace closed by that signal, and re-raises it with
 * the default action, so the process ends as it would without dynrec. */
int dr_rec_handle_sigterm(DrRecorder *r);

/* Stops the writer thread after a last flush, writes the end-of-run meta
 * (exit status, or the signal that ended the run), marks the trace complete
 * and closes it.  Frees r.  Returns DR_OK, or the first write error seen
 * during the run (err filled).  Returns DR_OK and does nothing more when the
 * SIGTERM path already closed the trace. */
int dr_rec_finish(DrRecorder *r, int exit_status, int exit_signal, DrError *err);

/* Around os.fork (CPython 3.12 and newer warn of a fork in a process with
 * more than one OS thread, and the writer is one): dr_rec_pause flushes and
 * stops the writer thread, returning 1 when it did; dr_rec_resume starts a
 * new one.  Records appended meanwhile wait in the buffer.  GIL held. */
int dr_rec_pause(DrRecorder *r);
void dr_rec_resume(DrRecorder *r);

#endif
