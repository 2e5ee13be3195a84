/* trace.h -- the dynrec trace file: an SQLite database with a fixed identity.
 *
 * A trace is one SQLite file in WAL mode while it is being written and in
 * rollback mode once closed cleanly, so a finished trace is a single file.
 * It identifies itself with PRAGMA application_id = DR_APPLICATION_ID and
 * PRAGMA user_version = DR_SCHEMA_VERSION; the meta table holds versions,
 * argv and the `complete` flag, which only dr_trace_close(t, 1) sets.
 *
 *   DrTrace *t = dr_trace_create("run.db", 0, &err);     -- writer
 *   dr_trace_begin(t, &err);
 *   int64_t kind = dr_trace_intern(t, "callback", -1, &err);
 *   dr_trace_add_event(t, &ev, &err);
 *   dr_trace_commit(t, &err);
 *   dr_trace_close(t, 1, &err);
 *
 *   DrTrace *r = dr_trace_open("run.db", &err);          -- reader
 *   dr_trace_query(r, "SELECT ...", row_cb, ud, &err);
 *   dr_trace_free(r);
 *
 * Only this module (with codec.c) calls sqlite3_* and ZSTD_*.  A DrTrace is
 * used by one thread at a time.  Nothing here prints or exits. */
#ifndef DR_TRACE_H
#define DR_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* 'dynr' in ASCII: PRAGMA application_id of every dynrec trace. */
#define DR_APPLICATION_ID 0x64796e72

/* The on-disk schema version (PRAGMA user_version), independent of the
 * release version.  Bump it only when an older reader would misread a newer
 * file; then follow SCHEMA.md's "Changing the schema" (the reader's step
 * from the previous version in trace.c, the version history, and a test
 * that opens a kept file of the previous version). */
#define DR_SCHEMA_VERSION 3

#define DR_VERSION "0.7.10"

typedef struct DrTrace DrTrace;

/* One row of the events table, as handed to the writer.  Strings are
 * interned; a payload, when present, is stored as a compressed blob. */
typedef struct DrEvent {
    int64_t t_ns;           /* monotonic ns since the start of the recording */
    int64_t thread;         /* thread identifier */
    const char *kind;       /* event kind, e.g. "start", "exception" (required) */
    int64_t code_id;        /* a code_objects id, or 0 for none */
    int64_t code2_id;       /* a second code object (compiled code of a cache entry), or 0 */
    const char *compile_id; /* Dynamo's compile id ("0/1"), or NULL */
    int64_t num;            /* a kind-specific number */
    const char *text;       /* short text (interned), or NULL */
    const char *data;       /* a JSON object of further fields (interned), or NULL */
    const char *key;        /* canonical key: the event with volatile parts masked, or NULL */
    const void *payload;    /* large payload (compressed), or NULL */
    size_t payload_len;
    /* guard 1: a guard's source and user location (each may be NULL), kept
     * in the table guard_fields (v_ev returns them as its data), and, in
     * place of text and key (then NULL), guard_text and guard_masked: the
     * text and masked text with char(1) for each occurrence of the source */
    int guard;
    const char *guard_source, *guard_location, *guard_text, *guard_masked;
} DrEvent;

/* ---- writing ---------------------------------------------------------- */

/* Creates a new trace at path.  An existing file is an error (DR_ERR_IO)
 * unless overwrite is set, in which case it and its -wal/-shm are removed.
 * Returns NULL on error with err filled.  Free with dr_trace_close or, to
 * abandon it unmarked, dr_trace_free. */
DrTrace *dr_trace_create(const char *path, int overwrite, DrError *err);

/* The two halves of dr_trace_create: reserve makes the empty file (the
 * checks that can fail at once: the path, permissions, an existing file),
 * create_reserved turns that file into a trace (may run on another thread). */
int dr_trace_reserve(const char *path, int overwrite, DrError *err);
DrTrace *dr_trace_create_reserved(const char *path, DrError *err);

/* Batched writes: everything between begin and commit is one transaction. */
int dr_trace_begin(DrTrace *t, DrError *err);
int dr_trace_commit(DrTrace *t, DrError *err);

/* Abandons the open transaction, if any (after a failed write). */
void dr_trace_rollback(DrTrace *t);

/* Sets meta[key] (replacing an earlier value). */
int dr_trace_set_meta(DrTrace *t, const char *key, const char *value, DrError *err);
int dr_trace_set_meta_int(DrTrace *t, const char *key, int64_t value, DrError *err);

/* Interns s (len bytes, or strlen(s) when len < 0) in the strings table and
 * returns its id (> 0), or -1 on error.  Repeated strings cost one hash
 * lookup, no SQL. */
int64_t dr_trace_intern(DrTrace *t, const char *s, int64_t len, DrError *err);

/* Compresses and stores a payload; returns its blob id (> 0) or -1. */
int64_t dr_trace_put_blob(DrTrace *t, const void *data, size_t len, DrError *err);

/* Installs a zstd dictionary: it is stored in the file and used for every
 * later blob.  Returns DR_OK or an error. */
int dr_trace_use_dict(DrTrace *t, const void *dict, size_t len, DrError *err);

/* Records a code object; returns its id (> 0) or -1. */
int64_t dr_trace_add_code(DrTrace *t, const char *filename, const char *qualname,
                          int64_t firstlineno, DrError *err);

/* Sets the running totals of evaluations for a code object (upsert). */
int dr_trace_set_frame_count(DrTrace *t, int64_t code_id, int64_t calls, int64_t resumes,
                             DrError *err);

/* Appends an event; returns its seq (> 0) or -1. */
int64_t dr_trace_add_event(DrTrace *t, const DrEvent *ev, DrError *err);

/* Records a file's text (the script, a traced source) under a role such as
 * "script"; returns DR_OK or an error. */
int dr_trace_add_file(DrTrace *t, const char *path, const char *role, const void *data, size_t len,
                      DrError *err);

/* Stores one node of a captured frame's value tree (table value_nodes);
 * data, when not NULL, becomes a blob.  Returns DR_OK or an error. */
int dr_trace_add_value(DrTrace *t, int64_t capture, int64_t node, const char *kind,
                       const char *type, const char *value, const void *data, size_t len,
                       DrError *err);

/* Commits anything pending, sets meta complete=1 when complete is non-zero,
 * switches the file out of WAL mode and closes it.  Frees t in every case.
 * Returns DR_OK or the first error. */
int dr_trace_close(DrTrace *t, int complete, DrError *err);

/* Closes without marking complete (a reader, or a writer being abandoned).
 * Accepts NULL. */
void dr_trace_free(DrTrace *t);

/* ---- reading ---------------------------------------------------------- */

/* Opens an existing trace read-only and checks what it is.  Returns NULL
 * with err->code one of DR_ERR_MISSING, DR_ERR_NOT_SQLITE, DR_ERR_NOT_TRACE,
 * DR_ERR_TOO_NEW, DR_ERR_CORRUPT, DR_ERR_IO, and a message that names the
 * file and says what to do. */
DrTrace *dr_trace_open(const char *path, DrError *err);

const char *dr_trace_path(const DrTrace *t);
int dr_trace_schema_version(const DrTrace *t);
/* 1 when the recording was closed cleanly, 0 when it was cut short. */
int dr_trace_is_complete(DrTrace *t);

/* Runs one SQL statement and calls row(ud, ncols, names, values) for each
 * result row; values are text (NULL for SQL NULL), valid during the call.
 * A non-zero return from row stops the query.  Returns DR_OK or an error;
 * SQLITE_CORRUPT maps to DR_ERR_CORRUPT. */
typedef int (*DrRowFn)(void *ud, int ncols, const char *const *names, const char *const *values);
int dr_trace_query(DrTrace *t, const char *sql, DrRowFn row, void *ud, DrError *err);

/* The first column of the first row of sql as a malloc'd string (*out NULL
 * when there is no row or it is SQL NULL). */
int dr_trace_query_text(DrTrace *t, const char *sql, char **out, DrError *err);

/* Reads meta[key] into a malloc'd string (*out NULL when absent). */
int dr_trace_get_meta(DrTrace *t, const char *key, char **out, DrError *err);

/* Decodes blob id into a malloc'd NUL-terminated buffer; a corrupt or
 * oversized blob fails with DR_ERR_BLOB naming the blob, the file stays
 * usable.  max_len 0 means the codec's default cap. */
int dr_trace_read_blob(DrTrace *t, int64_t id, size_t max_len, void **out, size_t *len,
                       DrError *err);

/* The read-only, hardened SQLite connection of a trace opened with
 * dr_trace_open, for readers that need more than dr_trace_query (SQL
 * functions, typed columns: `dynrec sql`).  Borrowed: it stays t's. */
struct sqlite3;
struct sqlite3 *dr_trace_sqlite(DrTrace *t);

/* Writes a compacted copy of the trace (its file and WAL as one, in
 * rollback-journal mode) to path, which must not exist (SQLite's VACUUM
 * INTO).  Returns DR_OK or an error naming path. */
int dr_trace_copy_to(DrTrace *t, const char *path, DrError *err);

/* ---- files from strangers -------------------------------------------- */

/* dr_trace_open checks every table the readers read before any reader
 * does: a real table (a view, a virtual table, a trigger anywhere in the
 * file is refused), with its columns and primary key, no generated column,
 * integer columns holding integers only (an id stored as the text '1_000'
 * reads as 1 in C and as 1000 in Python), blobs as blobs, sizes within
 * 1 GiB.  A failure is DR_ERR_CORRUPT naming the file and what is wrong.
 *
 * Every statement on a reader's connection runs under a query budget: a
 * step that works longer than the budget towards its next row (default
 * 10 s, or DYNREC_QUERY_BUDGET_MS) is interrupted, and the query helpers
 * report it as DR_ERR_CORRUPT ("a query on FILE ran past N s: the file is
 * hostile or damaged").  ms <= 0 turns it off. */
void dr_trace_set_query_budget(DrTrace *t, long ms);

/* For readers that step their own statements on dr_trace_sqlite(t): turns
 * the SQLite result code rc of a failed call into the DrError the query
 * helpers give (the budget and corruption as DR_ERR_CORRUPT naming the
 * file); what names the operation ("reading the compiles").  Returns the
 * DrStatus. */
int dr_trace_sql_error(DrTrace *t, int rc, const char *what, DrError *err);

/* Writes a private (mode 0600, never an existing file) copy of the opened,
 * already checked trace to dest_path, consistent (one read transaction of
 * the file and its WAL, by SQLite's backup API), in rollback mode, holding
 * only dynrec's own tables: the file's views, triggers, indexes of its own
 * and foreign tables are left out (today's views are written in their
 * place when the file has today's schema).  dr_trace_open(dest_path)
 * checks it as it checked t.  For the replay driver: the checks and the
 * program that runs the trace then read the same rows.  Returns DR_OK or
 * an error (DR_ERR_IO naming dest_path, DR_ERR_FULL, DR_ERR_CORRUPT naming
 * the trace); on error dest_path is removed. */
int dr_trace_snapshot(DrTrace *t, const char *dest_path, DrError *err);

/* Strips db, a read-write copy of a checked trace of the given schema
 * version at path, to dynrec's own tables as dr_trace_snapshot does (for
 * `dynrec pack`, which copies with VACUUM INTO).  Returns DR_OK or
 * DR_ERR_SQL / DR_ERR_NOMEM naming path. */
int dr_trace_strip_copy(struct sqlite3 *db, const char *path, int version, DrError *err);

/* Versions of the libraries behind the format, for --version and meta. */
const char *dr_trace_sqlite_version(void);
const char *dr_trace_zstd_version(void);

#endif
