/* trace.c -- writer and reader of the dynrec trace file (see trace.h).
 *
 * The writer owns a fresh file, so it keeps every interned string in an
 * in-memory table and never asks SQLite what an id is: interning a repeated
 * string is one hash lookup.  All statements are prepared once; each call is
 * bind, step, reset, and every return code is checked.  The reader trusts
 * nothing in the file: it classifies it from the raw header before SQLite
 * sees it, opens it read-only with the defensive flags on, checks the shape
 * of every table and the values of the small ones (check_tables), and
 * checks blob lengths before decoding.  The DDL and its version history
 * live in DDL_V1 below and in schema/SCHEMA.md. */
#define _GNU_SOURCE 1
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <zstd.h>

#include "codec.h"

#define GUARD_FIELDS_DDL(temp)                                                                     \
    "CREATE " temp "TABLE guard_fields(seq INTEGER PRIMARY KEY REFERENCES events,\n"               \
    "  source_id INTEGER REFERENCES strings, location_id INTEGER REFERENCES strings,\n"            \
    "  text_id INTEGER REFERENCES strings, masked_id INTEGER REFERENCES strings);\n"

#define VALUE_NODES_DDL(temp)                                                                       \
    "CREATE " temp "TABLE value_nodes(capture INTEGER NOT NULL, node INTEGER NOT NULL,\n"           \
    "  kind_id INTEGER NOT NULL REFERENCES strings, type_id INTEGER NOT NULL REFERENCES strings,\n" \
    "  value TEXT, blob_id INTEGER REFERENCES blobs, PRIMARY KEY(capture, node)) WITHOUT ROWID;\n"

/* Version 1.  Tables may change between versions; the views are the stable
 * read interface (see SCHEMA.md).  Changing this: SCHEMA.md's "Changing the
 * schema" (bump DR_SCHEMA_VERSION, the reader's step from the previous
 * version, the version history, a test on a kept old file). */
static const char DDL_V1[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;\n"
    "CREATE TABLE strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL);\n"
    "CREATE TABLE dicts(id INTEGER PRIMARY KEY, data BLOB NOT NULL);\n"
    "CREATE TABLE blobs(id INTEGER PRIMARY KEY, data BLOB NOT NULL);\n"
    "CREATE TABLE files(id INTEGER PRIMARY KEY,\n"
    "  path_id INTEGER NOT NULL REFERENCES strings,\n"
    "  role_id INTEGER NOT NULL REFERENCES strings,\n"
    "  size INTEGER NOT NULL, blob_id INTEGER NOT NULL REFERENCES blobs);\n"
    "CREATE TABLE code_objects(id INTEGER PRIMARY KEY,\n"
    "  filename_id INTEGER NOT NULL REFERENCES strings,\n"
    "  qualname_id INTEGER NOT NULL REFERENCES strings,\n"
    "  firstlineno INTEGER NOT NULL);\n"
    "CREATE TABLE frame_counts(code_id INTEGER PRIMARY KEY REFERENCES code_objects,\n"
    "  calls INTEGER NOT NULL, resumes INTEGER NOT NULL);\n"
    "CREATE TABLE events(seq INTEGER PRIMARY KEY, t_ns INTEGER NOT NULL,\n"
    "  thread INTEGER NOT NULL, kind_id INTEGER NOT NULL REFERENCES strings,\n"
    "  code_id INTEGER REFERENCES code_objects, code2_id INTEGER REFERENCES code_objects,\n"
    "  compile_id INTEGER REFERENCES strings, num INTEGER,\n"
    "  text_id INTEGER REFERENCES strings, data_id INTEGER REFERENCES strings,\n"
    "  key_id INTEGER REFERENCES strings, blob_id INTEGER REFERENCES blobs);\n"
    /* Version 2: the value trees of captured frame inputs (dynrec replay),
     * and the number of events of each kind (kept by the writer, so readers
     * need not count a million rows). */
    VALUE_NODES_DDL(
        "") "CREATE TABLE event_counts(kind_id INTEGER PRIMARY KEY REFERENCES strings,\n"
            "  n INTEGER NOT NULL);\n"
    /* Version 3: a guard's source and user location, interned, and its text
     * and masked text as templates where the source stands for char(1): a
     * model's guards repeat the same few shapes over many long sources
     * (TYPE_MATCH of every submodule), and were the largest part of a
     * trace.  v_ev rebuilds text, data and key from them. */
    GUARD_FIELDS_DDL("");

/* The views: the stable read interface.  The writer stores them in the file
 * for the plain sqlite3 CLI; the reader never uses a file's own views (they
 * are untrusted, and SQLite refuses json_extract in them with
 * trusted_schema off): it defines these as TEMP views, which shadow them.
 * That is also where a reader adapts an older schema to today's views. */
/* Names a person recognises (schema 3): a frame of torch's own (the
 * wrapper that compiling a module or a builtin compiles) by what it wraps
 * and the user's call site, recorded in the compile's data; other frames by
 * their qualname and definition. */
#define DISPLAY_COLUMNS                                                                            \
    "  coalesce(json_extract(e.data, '$.display_name'), v.qualname) AS display_name,\n"            \
    "  coalesce(json_extract(e.data, '$.user_location'), v.filename || ':' ||\n"                   \
    "    v.firstlineno) AS user_location\n"

/* The epoch of a stored compile id (SCHEMA.md, "Compile identity"): the
 * "E:" before Dynamo's id after the E-th torch._dynamo.reset(), else 0.
 * The one SQL spelling of dr_compile_epoch (schema/ident.c). */
#define EPOCH_OF(cid)                                                                              \
    "CASE WHEN instr(" cid ", ':') > 1 THEN CAST(substr(" cid ", 1, instr(" cid ", ':') - 1)"      \
    " AS INTEGER) ELSE 0 END"

static const char VIEWS_V1[] =
    "CREATE VIEW v_code AS SELECT c.id AS code_id, f.text AS filename,\n"
    "  q.text AS qualname, c.firstlineno AS firstlineno\n"
    "  FROM code_objects c JOIN strings f ON f.id = c.filename_id\n"
    "  JOIN strings q ON q.id = c.qualname_id;\n"
    "CREATE VIEW v_frame_counts AS SELECT v.filename, v.qualname, v.firstlineno,\n"
    "  fc.calls, fc.resumes FROM frame_counts fc JOIN v_code v ON v.code_id = fc.code_id;\n"
    /* Dynamo capture: one view per concern over the events table. */
    "CREATE VIEW v_ev AS SELECT e.seq, e.t_ns, e.thread, k.text AS kind, e.code_id,\n"
    "  e.code2_id, c.text AS compile_id, " EPOCH_OF(
        "c.text") " AS epoch, e.num,\n"
                  "  CASE WHEN e.text_id IS NOT NULL THEN s.text WHEN g.text_id IS NOT NULL THEN\n"
                  "    replace(gt.text, char(1), coalesce(gs.text, '')) END AS text,\n"
                  "  CASE WHEN e.data_id IS NOT NULL THEN d.text WHEN g.seq IS NOT NULL THEN\n"
                  "    json_object('source', gs.text, 'user_location', gl.text) END AS data,\n"
                  "  CASE WHEN e.key_id IS NOT NULL THEN y.text WHEN g.masked_id IS NOT NULL THEN\n"
                  "    'guard ' || coalesce(c.text, 'None') || ' ' ||\n"
                  "    replace(gm.text, char(1), coalesce(gs.text, '')) END AS key,\n"
                  "  e.blob_id FROM events e JOIN strings k ON k.id = e.kind_id\n"
                  "  LEFT JOIN strings c ON c.id = e.compile_id LEFT JOIN strings s ON s.id = e.text_id\n"
                  "  LEFT JOIN strings d ON d.id = e.data_id LEFT JOIN strings y ON y.id = e.key_id\n"
                  "  LEFT JOIN guard_fields g ON g.seq = e.seq LEFT JOIN strings gs ON gs.id = g.source_id\n"
                  "  LEFT JOIN strings gl ON gl.id = g.location_id LEFT JOIN strings gt ON gt.id = g.text_id\n"
                  "  LEFT JOIN strings gm ON gm.id = g.masked_id;\n"
                  "CREATE VIEW v_events AS SELECT e.seq, e.t_ns, e.thread, e.kind, v.filename, v.qualname,\n"
                  "  e.compile_id, e.num, e.text, e.data, e.blob_id\n"
                  "  FROM v_ev e LEFT JOIN v_code v ON v.code_id = e.code_id;\n"
                  /* On the events table itself, by kind id: a large trace is scanned
                   * three times, not joined with strings row by row. */
                  "CREATE VIEW v_frames AS\n"
                  "  WITH cb AS (SELECT e.code_id, count(*) AS callbacks,\n"
                  "      sum(json_extract(d.text, '$.outcome') = 'compiled') AS ran_compiled\n"
                  "      FROM events e LEFT JOIN strings d ON d.id = e.data_id\n"
                  "      WHERE e.kind_id = (SELECT id FROM strings WHERE text = 'callback') GROUP BY e.code_id),\n"
                  "    cp AS (SELECT e.code_id, count(*) AS compiles,\n"
                  "      group_concat(DISTINCT json_extract(d.text, '$.display_name')) AS names,\n"
                  "      min(json_extract(d.text, '$.user_location')) AS loc\n"
                  "      FROM events e LEFT JOIN strings d ON d.id = e.data_id\n"
                  "      WHERE e.kind_id = (SELECT id FROM strings WHERE text = 'compile') GROUP BY e.code_id),\n"
                  "    links AS (SELECT DISTINCT code_id, code2_id FROM events\n"
                  "      WHERE kind_id = (SELECT id FROM strings WHERE text = 'cache_entry')),\n"
                  "    runs AS (SELECT l.code_id, sum(fc.calls) AS runs FROM links l\n"
                  "      JOIN frame_counts fc ON fc.code_id = l.code2_id GROUP BY l.code_id)\n"
                  "  SELECT v.filename, v.qualname, v.firstlineno, cb.callbacks,\n"
                  "    max(coalesce(runs.runs, 0) - coalesce(cb.ran_compiled, 0), 0) AS cache_hits,\n"
                  "    coalesce(cp.compiles, 0) AS compiles, coalesce(runs.runs, 0) AS compiled_runs,\n"
                  "    v.code_id, coalesce(cp.names, v.qualname) AS display_name,\n"
                  "    coalesce(cp.loc, v.filename || ':' || v.firstlineno) AS user_location\n"
                  "  FROM cb JOIN v_code v ON v.code_id = cb.code_id\n"
                  "  LEFT JOIN cp ON cp.code_id = cb.code_id LEFT JOIN runs ON runs.code_id = cb.code_id;\n"
                  "CREATE VIEW v_compiles AS SELECT e.compile_id, e.epoch, v.filename, v.qualname, v.firstlineno,\n"
                  "  json_extract(e.data, '$.attempts') AS attempts, json_extract(e.data, '$.outcome') AS outcome,\n"
                  "  json_extract(e.data, '$.graphs') AS graphs, json_extract(e.data, '$.recompile') AS recompile,\n"
                  "  json_extract(e.data, '$.duration_ns') / 1e6 AS duration_ms, e.text AS reason, e.seq,\n" DISPLAY_COLUMNS
                  "  FROM v_ev e LEFT JOIN v_code v ON v.code_id = e.code_id WHERE e.kind = 'compile';\n"
                  "CREATE VIEW v_guards AS SELECT e.compile_id, e.epoch, v.filename, v.qualname, e.text AS guard,\n"
                  "  json_extract(e.data, '$.source') AS source, json_extract(e.data, '$.user_location') AS\n"
                  "  user_location, e.seq FROM v_ev e LEFT JOIN v_code v ON v.code_id = e.code_id\n"
                  "  WHERE e.kind = 'guard';\n"
                  "CREATE VIEW v_guard_failures AS SELECT e.compile_id, e.epoch,\n"
                  "  json_extract(e.data, '$.failed_compile_id') AS failed_compile_id, v.filename, v.qualname,\n"
                  "  e.text AS reason, e.seq,\n" DISPLAY_COLUMNS
                  "  FROM v_ev e LEFT JOIN v_code v ON v.code_id = e.code_id\n"
                  "  WHERE e.kind = 'guard_failure';\n"
                  "CREATE VIEW v_graph_breaks AS SELECT e.compile_id, e.epoch, v.filename, v.qualname,\n"
                  "  COALESCE((SELECT CAST(substr(j.value, length(v.filename) + 2) AS INTEGER)\n"
                  "    FROM json_each(e.data, '$.user_stack') j WHERE substr(j.value, 1,\n"
                  "    length(v.filename) + 1) = v.filename || ':' ORDER BY j.key DESC LIMIT 1), e.num)\n"
                  "  AS lineno,\n"
                  "  e.text AS reason, json_extract(e.data, '$.type') AS type,\n"
                  "  json_extract(e.data, '$.user_stack') AS user_stack, e.seq\n"
                  "  FROM v_ev e LEFT JOIN v_code v ON v.code_id = e.code_id WHERE e.kind = 'graph_break';\n"
                  "CREATE VIEW v_speculation AS SELECT e.compile_id, e.epoch, e.seq,\n"
                  "  json_extract(e.data, '$.action') AS action, e.text AS detail, e.data\n"
                  "  FROM v_ev e WHERE e.kind = 'speculation';\n"
                  "CREATE VIEW v_side_effects AS SELECT e.compile_id, e.epoch, json_extract(e.data, '$.status') AS status,\n"
                  "  e.text AS description, e.seq FROM v_ev e WHERE e.kind = 'side_effect';\n"
                  "CREATE VIEW v_errors AS SELECT e.compile_id, e.epoch, json_extract(e.data, '$.exc_type') AS exc_type,\n"
                  "  e.text AS message, e.num AS suppressed, e.blob_id AS traceback_blob, e.seq\n"
                  "  FROM v_ev e WHERE e.kind = 'error';\n"
                  "CREATE VIEW v_graphs AS SELECT e.compile_id, e.epoch, json_extract(e.data, '$.backend') AS backend,\n"
                  "  e.num AS nodes, json_extract(e.data, '$.inputs') AS inputs,\n"
                  "  json_extract(e.data, '$.duration_ns') / 1e6 AS duration_ms, e.blob_id AS code_blob, e.seq\n"
                  "  FROM v_ev e WHERE e.kind = 'graph';\n"
                  /* A guard's key is stored only where masking changed its text. */
                  "CREATE VIEW v_canonical AS SELECT seq, coalesce(key, 'guard ' || coalesce(compile_id,\n"
                  "  'None') || ' ' || coalesce(text, '')) AS key FROM v_ev\n"
                  "  WHERE key IS NOT NULL OR kind = 'guard';\n"
                  "CREATE VIEW v_files AS SELECT p.text AS path, r.text AS role, f.size, f.blob_id\n"
                  "  FROM files f JOIN strings p ON p.id = f.path_id JOIN strings r ON r.id = f.role_id;\n"
                  "CREATE VIEW v_captures AS SELECT e.num AS capture, e.compile_id, e.epoch, v.filename, v.qualname,\n"
                  "  v.firstlineno, json_extract(e.data, '$.replayable') AS replayable, e.text AS reason,\n"
                  "  json_extract(e.data, '$.nodes') AS nodes, json_extract(e.data, '$.data_bytes') AS\n"
                  "  data_bytes, e.blob_id AS code_blob, e.seq\n"
                  "  FROM v_ev e LEFT JOIN v_code v ON v.code_id = e.code_id WHERE e.kind = 'capture';\n"
                  "CREATE VIEW v_event_counts AS SELECT s.text AS kind, c.n FROM event_counts c\n"
                  "  JOIN strings s ON s.id = c.kind_id;\n"
                  "CREATE VIEW v_values AS SELECT n.capture, n.node, k.text AS kind, y.text AS type, n.value,\n"
                  "  n.blob_id FROM value_nodes n JOIN strings k ON k.id = n.kind_id\n"
                  "  JOIN strings y ON y.id = n.type_id;\n";

/* Statements the writer prepares once.  Adding one: add its SQL to
 * stmt_sql[] at the same index. */
enum {
    ST_BEGIN,
    ST_COMMIT,
    ST_META,
    ST_STRING,
    ST_BLOB,
    ST_DICT,
    ST_CODE,
    ST_COUNT,
    ST_EVENT,
    ST_FILE,
    ST_VALUE,
    ST_KIND_COUNT,
    ST_GUARD,
    ST__N
};
static const char *const stmt_sql[ST__N] = {
    [ST_BEGIN] = "BEGIN",
    [ST_COMMIT] = "COMMIT",
    [ST_META] = "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)",
    [ST_STRING] = "INSERT INTO strings(id, text) VALUES(?1, ?2)",
    [ST_BLOB] = "INSERT INTO blobs(data) VALUES(?1)",
    [ST_DICT] = "INSERT INTO dicts(id, data) VALUES(?1, ?2)",
    [ST_CODE] = "INSERT INTO code_objects(filename_id, qualname_id, firstlineno)"
                " VALUES(?1, ?2, ?3)",
    [ST_COUNT] = "INSERT INTO frame_counts(code_id, calls, resumes) VALUES(?1, ?2, ?3)"
                 " ON CONFLICT(code_id) DO UPDATE SET calls = excluded.calls,"
                 " resumes = excluded.resumes",
    [ST_EVENT] = "INSERT INTO events(t_ns, thread, kind_id, code_id, num, text_id, blob_id,"
                 " code2_id, compile_id, data_id, key_id)"
                 " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    [ST_FILE] = "INSERT INTO files(path_id, role_id, size, blob_id) VALUES(?1, ?2, ?3, ?4)",
    [ST_VALUE] = "INSERT OR IGNORE INTO value_nodes(capture, node, kind_id, type_id, value,"
                 " blob_id) VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
    [ST_KIND_COUNT] = "INSERT INTO event_counts(kind_id, n) VALUES(?1, ?2)"
                      " ON CONFLICT(kind_id) DO UPDATE SET n = excluded.n",
    [ST_GUARD] = "INSERT INTO guard_fields(seq, source_id, location_id, text_id, masked_id)"
                 " VALUES(?1, ?2, ?3, ?4, ?5)",
};

/* One slot of the writer's string table: open addressing on the hash. */
typedef struct {
    uint64_t hash;
    int64_t id; /* 0 = empty slot */
    size_t len;
    char *text;
} StrSlot;

struct DrTrace {
    sqlite3 *db;
    char *path;
    int writer;
    int in_txn;
    int schema_version;
    sqlite3_stmt *st[ST__N];
    StrSlot *strs;
    size_t str_cap, str_n;
    int64_t next_str_id;
    DrDict *dict;      /* writer: used for new blobs; reader: loaded lazily */
    struct KindCount { /* writer: events of each kind, written at commit */
        int64_t id, n;
        int dirty;
    } * kinds;
    size_t nkinds, kinds_cap;
    int dict_loaded;
    /* reader: the query budget (see on_progress) */
    int64_t budget_ns;  /* 0 = none */
    int64_t step_start; /* monotonic ns when the running step began; 0 = not yet */
    int budget_hit;     /* the last interrupt was the budget's */
    int full_check;     /* reader: check the values of every table (a snapshot) */
};

static int sql_err(DrTrace *t, DrError *err, int rc, const char *what) {
    if ((rc & 0xff) == SQLITE_INTERRUPT && t && t->budget_hit)
        return dr_error(err, DR_ERR_CORRUPT,
                        "a query on %s ran past %g s (%s): the file is hostile or damaged; "
                        "give a trace written by 'dynrec run' (DYNREC_QUERY_BUDGET_MS=N "
                        "allows N ms)",
                        t->path, (double)t->budget_ns / 1e9, what);
    int full = (rc & 0xff) == SQLITE_FULL ||
               ((rc & 0xff) == SQLITE_IOERR && t && t->db && sqlite3_system_errno(t->db) == ENOSPC);
    if (full)
        return dr_error(err, DR_ERR_FULL, "%s: %s failed: the disk is full",
                        t && t->path ? t->path : "trace", what);
    int code = (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) ? DR_ERR_CORRUPT
               : rc == SQLITE_NOMEM                          ? DR_ERR_NOMEM
               : (rc == SQLITE_FULL || rc == SQLITE_IOERR || rc == SQLITE_CANTOPEN ||
                  rc == SQLITE_READONLY)
                   ? DR_ERR_IO
                   : DR_ERR_SQL;
    const char *path = t && t->path ? t->path : "trace";
    if (code == DR_ERR_CORRUPT)
        return dr_error(err, code,
                        "%s: the trace is truncated or corrupt (%s: %s); record it again", path,
                        what, t && t->db ? sqlite3_errmsg(t->db) : sqlite3_errstr(rc));
    return dr_error(err, code, "%s: %s failed: %s", path, what,
                    t && t->db ? sqlite3_errmsg(t->db) : sqlite3_errstr(rc));
}

/* Runs a prepared statement that returns no rows, then resets it. */
static int step_done(DrTrace *t, sqlite3_stmt *st, const char *what, DrError *err) {
    int rc = sqlite3_step(st);
    int rrc = sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE) return sql_err(t, err, rc, what);
    if (rrc != SQLITE_OK) return sql_err(t, err, rrc, what);
    return DR_OK;
}

static int exec(DrTrace *t, const char *sql, DrError *err) {
    int rc = sqlite3_exec(t->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? DR_OK : sql_err(t, err, rc, sql);
}

static void harden(sqlite3 *db) {
    /* A trace may come from a stranger: no triggers or functions from its
     * schema run, no writes to sqlite_master, bounded sizes. */
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 1, NULL);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 30);
}

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ? h : 1;
}

void dr_trace_free(DrTrace *t) {
    if (!t) return;
    for (int i = 0; i < ST__N; i++) sqlite3_finalize(t->st[i]);
    if (t->db) sqlite3_close_v2(t->db);
    for (size_t i = 0; i < t->str_cap; i++) free(t->strs[i].text);
    free(t->strs);
    free(t->kinds);
    dr_dict_free(t->dict);
    free(t->path);
    free(t);
}

static int remove_trace_files(const char *path, DrError *err) {
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    char buf[4096];
    for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
        if (snprintf(buf, sizeof buf, "%s%s", path, sfx[i]) >= (int)sizeof buf)
            return dr_error(err, DR_ERR_ARG, "%s: path too long", path);
        if (unlink(buf) != 0 && errno != ENOENT)
            return dr_error(err, DR_ERR_IO, "%s: cannot replace it: %s", buf, strerror(errno));
    }
    return DR_OK;
}

int dr_trace_reserve(const char *path, int overwrite, DrError *err) {
    if (overwrite && remove_trace_files(path, err) != DR_OK) return err ? err->code : DR_ERR_IO;
    /* O_EXCL makes "never overwrite" race-free; SQLite later opens the empty
     * file and initialises it. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == EEXIST)
            return dr_error(err, DR_ERR_IO, "%s: already exists; choose another path with -o",
                            path);
        return dr_error(err, DR_ERR_IO, "%s: cannot create the trace: %s", path, strerror(errno));
    }
    close(fd);
    return DR_OK;
}

DrTrace *dr_trace_create(const char *path, int overwrite, DrError *err) {
    if (dr_trace_reserve(path, overwrite, err) != DR_OK) return NULL;
    return dr_trace_create_reserved(path, err);
}

DrTrace *dr_trace_create_reserved(const char *path, DrError *err) {
    DrTrace *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        dr_error(err, DR_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    t->writer = 1;
    t->next_str_id = 1;
    int rc = sqlite3_open_v2(path, &t->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        sql_err(t, err, rc, "open");
        goto fail;
    }
    harden(t->db);
    sqlite3_extended_result_codes(t->db, 0);
    /* Identity first, in rollback mode, so it is in the main file even if the
     * process dies before the first WAL checkpoint. */
    /* One transaction without syncs: until the first event there is nothing
     * a crash could lose, and a half-made file has no application_id. */
    char ddl[200];
    snprintf(ddl, sizeof ddl,
             "PRAGMA page_size=4096; PRAGMA synchronous=OFF; BEGIN; "
             "PRAGMA application_id=%d; PRAGMA user_version=%d;",
             DR_APPLICATION_ID, DR_SCHEMA_VERSION);
    if (exec(t, ddl, err) != DR_OK) goto fail;
    if (exec(t, DDL_V1, err) != DR_OK || exec(t, VIEWS_V1, err) != DR_OK) goto fail;
    if (exec(t, "COMMIT", err) != DR_OK) goto fail;
    if (exec(t, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err) != DR_OK) goto fail;
    for (int i = 0; i < ST__N; i++) {
        rc = sqlite3_prepare_v3(t->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &t->st[i], NULL);
        if (rc != SQLITE_OK) {
            sql_err(t, err, rc, "prepare");
            goto fail;
        }
    }
    t->schema_version = DR_SCHEMA_VERSION;
    if (dr_trace_begin(t, err) != DR_OK) goto fail;
    if (dr_trace_set_meta(t, "writer_version", DR_VERSION, err) != DR_OK ||
        dr_trace_set_meta_int(t, "schema_version", DR_SCHEMA_VERSION, err) != DR_OK ||
        dr_trace_set_meta(t, "sqlite_version", sqlite3_libversion(), err) != DR_OK ||
        dr_trace_set_meta(t, "zstd_version", ZSTD_versionString(), err) != DR_OK ||
        dr_trace_set_meta_int(t, "complete", 0, err) != DR_OK)
        goto fail;
    if (dr_trace_commit(t, err) != DR_OK) goto fail;
    return t;
fail:
    dr_trace_free(t);
    return NULL;
}

int dr_trace_begin(DrTrace *t, DrError *err) {
    if (t->in_txn) return DR_OK;
    int rc = step_done(t, t->st[ST_BEGIN], "begin", err);
    if (rc == DR_OK) t->in_txn = 1;
    return rc;
}

/* One more event of kind id, counted in memory until the commit. */
static int count_kind(DrTrace *t, int64_t id, DrError *err) {
    for (size_t i = 0; i < t->nkinds; i++)
        if (t->kinds[i].id == id) {
            t->kinds[i].n++;
            t->kinds[i].dirty = 1;
            return DR_OK;
        }
    if (t->nkinds == t->kinds_cap) {
        size_t ncap = t->kinds_cap ? t->kinds_cap * 2 : 32;
        struct KindCount *k = realloc(t->kinds, ncap * sizeof *k);
        if (!k) return dr_error(err, DR_ERR_NOMEM, "%s: out of memory", t->path);
        t->kinds = k;
        t->kinds_cap = ncap;
    }
    t->kinds[t->nkinds++] = (struct KindCount){id, 1, 1};
    return DR_OK;
}

int dr_trace_commit(DrTrace *t, DrError *err) {
    if (!t->in_txn) return DR_OK;
    for (size_t i = 0; i < t->nkinds; i++) {
        if (!t->kinds[i].dirty) continue;
        sqlite3_stmt *st = t->st[ST_KIND_COUNT];
        sqlite3_bind_int64(st, 1, t->kinds[i].id);
        sqlite3_bind_int64(st, 2, t->kinds[i].n);
        int krc = step_done(t, st, "counting events", err);
        if (krc != DR_OK) return krc;
        t->kinds[i].dirty = 0;
    }
    int rc = step_done(t, t->st[ST_COMMIT], "commit", err);
    if (rc == DR_OK) t->in_txn = 0;
    return rc;
}

void dr_trace_rollback(DrTrace *t) {
    if (!t || !t->in_txn) return;
    sqlite3_exec(t->db, "ROLLBACK", NULL, NULL, NULL); /* may fail: no transaction left */
    t->in_txn = 0;
}

int dr_trace_set_meta(DrTrace *t, const char *key, const char *value, DrError *err) {
    sqlite3_stmt *st = t->st[ST_META];
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (value) sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    return step_done(t, st, "writing meta", err);
}

int dr_trace_set_meta_int(DrTrace *t, const char *key, int64_t value, DrError *err) {
    sqlite3_stmt *st = t->st[ST_META];
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, value);
    return step_done(t, st, "writing meta", err);
}

static int strtab_grow(DrTrace *t) {
    size_t ncap = t->str_cap ? t->str_cap * 2 : 1024;
    StrSlot *n = calloc(ncap, sizeof *n);
    if (!n) return -1;
    for (size_t i = 0; i < t->str_cap; i++) {
        if (!t->strs[i].id) continue;
        size_t j = t->strs[i].hash & (ncap - 1);
        while (n[j].id) j = (j + 1) & (ncap - 1);
        n[j] = t->strs[i];
    }
    free(t->strs);
    t->strs = n;
    t->str_cap = ncap;
    return 0;
}

int64_t dr_trace_intern(DrTrace *t, const char *s, int64_t len, DrError *err) {
    size_t n = len < 0 ? strlen(s) : (size_t)len;
    if ((t->str_n + 1) * 2 > t->str_cap && strtab_grow(t) != 0) {
        dr_error(err, DR_ERR_NOMEM, "%s: out of memory interning a string", t->path);
        return -1;
    }
    uint64_t h = hash_bytes(s, n);
    size_t j = h & (t->str_cap - 1);
    for (; t->strs[j].id; j = (j + 1) & (t->str_cap - 1)) {
        StrSlot *e = &t->strs[j];
        if (e->hash == h && e->len == n && memcmp(e->text, s, n) == 0) return e->id;
    }
    char *copy = malloc(n + 1);
    if (!copy) {
        dr_error(err, DR_ERR_NOMEM, "%s: out of memory interning a string", t->path);
        return -1;
    }
    memcpy(copy, s, n);
    copy[n] = 0;
    int64_t id = t->next_str_id;
    sqlite3_stmt *st = t->st[ST_STRING];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, copy, (int)n, SQLITE_STATIC);
    if (step_done(t, st, "interning a string", err) != DR_OK) {
        free(copy);
        return -1;
    }
    t->next_str_id++;
    t->strs[j] = (StrSlot){.hash = h, .id = id, .len = n, .text = copy};
    t->str_n++;
    return id;
}

int dr_trace_use_dict(DrTrace *t, const void *dict, size_t len, DrError *err) {
    DrDict *d = dr_dict_create(dict, len, 1, err);
    if (!d) return err ? err->code : DR_ERR_ARG;
    /* Stored as a blob itself (codec header, zstd without dictionary). */
    void *enc = NULL;
    size_t enclen = 0;
    int rc = dr_codec_encode(dict, len, NULL, 0, &enc, &enclen, err);
    if (rc == DR_OK) {
        sqlite3_stmt *st = t->st[ST_DICT];
        sqlite3_bind_int64(st, 1, 1);
        sqlite3_bind_blob(st, 2, enc, (int)enclen, SQLITE_STATIC);
        rc = step_done(t, st, "storing the dictionary", err);
    }
    free(enc);
    if (rc != DR_OK) {
        dr_dict_free(d);
        return rc;
    }
    dr_dict_free(t->dict);
    t->dict = d;
    return DR_OK;
}

int64_t dr_trace_put_blob(DrTrace *t, const void *data, size_t len, DrError *err) {
    void *enc = NULL;
    size_t enclen = 0;
    if (dr_codec_encode(data, len, t->dict, 0, &enc, &enclen, err) != DR_OK) return -1;
    if (enclen > INT32_MAX) {
        free(enc);
        dr_error(err, DR_ERR_ARG, "%s: payload of %zu bytes is too large", t->path, len);
        return -1;
    }
    sqlite3_stmt *st = t->st[ST_BLOB];
    sqlite3_bind_blob(st, 1, enc, (int)enclen, SQLITE_STATIC);
    int rc = step_done(t, st, "storing a blob", err);
    free(enc);
    return rc == DR_OK ? sqlite3_last_insert_rowid(t->db) : -1;
}

int64_t dr_trace_add_code(DrTrace *t, const char *filename, const char *qualname,
                          int64_t firstlineno, DrError *err) {
    int64_t f = dr_trace_intern(t, filename ? filename : "", -1, err);
    int64_t q = f < 0 ? -1 : dr_trace_intern(t, qualname ? qualname : "", -1, err);
    if (q < 0) return -1;
    sqlite3_stmt *st = t->st[ST_CODE];
    sqlite3_bind_int64(st, 1, f);
    sqlite3_bind_int64(st, 2, q);
    sqlite3_bind_int64(st, 3, firstlineno);
    if (step_done(t, st, "recording a code object", err) != DR_OK) return -1;
    return sqlite3_last_insert_rowid(t->db);
}

int dr_trace_set_frame_count(DrTrace *t, int64_t code_id, int64_t calls, int64_t resumes,
                             DrError *err) {
    sqlite3_stmt *st = t->st[ST_COUNT];
    sqlite3_bind_int64(st, 1, code_id);
    sqlite3_bind_int64(st, 2, calls);
    sqlite3_bind_int64(st, 3, resumes);
    return step_done(t, st, "writing frame counts", err);
}

int64_t dr_trace_add_event(DrTrace *t, const DrEvent *ev, DrError *err) {
    int64_t kind = dr_trace_intern(t, ev->kind ? ev->kind : "", -1, err);
    if (kind < 0) return -1;
    int64_t text = 0, blob = 0, cid = 0, data = 0, key = 0;
    if (ev->text && (text = dr_trace_intern(t, ev->text, -1, err)) < 0) return -1;
    if (ev->compile_id && (cid = dr_trace_intern(t, ev->compile_id, -1, err)) < 0) return -1;
    if (ev->data && (data = dr_trace_intern(t, ev->data, -1, err)) < 0) return -1;
    if (ev->key && (key = dr_trace_intern(t, ev->key, -1, err)) < 0) return -1;
    if (ev->payload && (blob = dr_trace_put_blob(t, ev->payload, ev->payload_len, err)) < 0)
        return -1;
    sqlite3_stmt *st = t->st[ST_EVENT];
    sqlite3_bind_int64(st, 1, ev->t_ns);
    sqlite3_bind_int64(st, 2, ev->thread);
    sqlite3_bind_int64(st, 3, kind);
    if (ev->code_id > 0) sqlite3_bind_int64(st, 4, ev->code_id);
    sqlite3_bind_int64(st, 5, ev->num);
    if (text) sqlite3_bind_int64(st, 6, text);
    if (blob) sqlite3_bind_int64(st, 7, blob);
    if (ev->code2_id > 0) sqlite3_bind_int64(st, 8, ev->code2_id);
    if (cid) sqlite3_bind_int64(st, 9, cid);
    if (data) sqlite3_bind_int64(st, 10, data);
    if (key) sqlite3_bind_int64(st, 11, key);
    if (step_done(t, st, "writing an event", err) != DR_OK) return -1;
    int64_t seq = sqlite3_last_insert_rowid(t->db);
    if (count_kind(t, kind, err) != DR_OK) return -1;
    if (ev->guard) {
        int64_t src = 0, loc = 0, tt = 0, mt = 0;
        if ((ev->guard_source && (src = dr_trace_intern(t, ev->guard_source, -1, err)) < 0) ||
            (ev->guard_location && (loc = dr_trace_intern(t, ev->guard_location, -1, err)) < 0) ||
            (ev->guard_text && (tt = dr_trace_intern(t, ev->guard_text, -1, err)) < 0) ||
            (ev->guard_masked && (mt = dr_trace_intern(t, ev->guard_masked, -1, err)) < 0))
            return -1;
        st = t->st[ST_GUARD];
        sqlite3_bind_int64(st, 1, seq);
        if (src) sqlite3_bind_int64(st, 2, src);
        if (loc) sqlite3_bind_int64(st, 3, loc);
        if (tt) sqlite3_bind_int64(st, 4, tt);
        if (mt) sqlite3_bind_int64(st, 5, mt);
        if (step_done(t, st, "writing a guard", err) != DR_OK) return -1;
    }
    return seq;
}

int dr_trace_add_file(DrTrace *t, const char *path, const char *role, const void *data, size_t len,
                      DrError *err) {
    int64_t p = dr_trace_intern(t, path, -1, err);
    int64_t r = p < 0 ? -1 : dr_trace_intern(t, role, -1, err);
    int64_t b = r < 0 ? -1 : dr_trace_put_blob(t, data, len, err);
    if (b < 0) return err ? err->code : DR_ERR_SQL;
    sqlite3_stmt *st = t->st[ST_FILE];
    sqlite3_bind_int64(st, 1, p);
    sqlite3_bind_int64(st, 2, r);
    sqlite3_bind_int64(st, 3, (int64_t)len);
    sqlite3_bind_int64(st, 4, b);
    return step_done(t, st, "storing a file", err);
}

int dr_trace_add_value(DrTrace *t, int64_t capture, int64_t node, const char *kind,
                       const char *type, const char *value, const void *data, size_t len,
                       DrError *err) {
    int64_t k = dr_trace_intern(t, kind, -1, err);
    int64_t y = k < 0 ? -1 : dr_trace_intern(t, type, -1, err);
    int64_t b = 0;
    if (y < 0 || (data && (b = dr_trace_put_blob(t, data, len, err)) < 0))
        return err ? err->code : DR_ERR_SQL;
    sqlite3_stmt *st = t->st[ST_VALUE];
    sqlite3_bind_int64(st, 1, capture);
    sqlite3_bind_int64(st, 2, node);
    sqlite3_bind_int64(st, 3, k);
    sqlite3_bind_int64(st, 4, y);
    if (value) sqlite3_bind_text(st, 5, value, -1, SQLITE_STATIC);
    if (b) sqlite3_bind_int64(st, 6, b);
    return step_done(t, st, "writing a captured value", err);
}

int dr_trace_close(DrTrace *t, int complete, DrError *err) {
    if (!t) return DR_OK;
    int rc = DR_OK;
    if (t->writer) {
        rc = dr_trace_begin(t, err);
        if (rc == DR_OK && complete) rc = dr_trace_set_meta_int(t, "complete", 1, err);
        if (rc == DR_OK) rc = dr_trace_commit(t, err);
        /* Leave one self-contained file behind: fold the WAL in and switch to
         * rollback mode, which a reader can open on read-only media. */
        if (rc == DR_OK) {
            for (int i = 0; i < ST__N; i++) {
                sqlite3_finalize(t->st[i]);
                t->st[i] = NULL;
            }
            /* No fsync: the run is over and waiting for the disk would only
             * delay the user's shell; the OS writes the pages out. */
            DrError ce = {0};
            rc = exec(t, "PRAGMA synchronous=OFF; PRAGMA journal_mode=DELETE", &ce);
            /* Everything is committed (to the WAL) by now: a disk that fills
             * while the WAL is folded in leaves a complete trace in two
             * files, which SQLite (every reader) opens as one. */
            if (complete && (rc == DR_ERR_FULL || rc == DR_ERR_IO))
                rc = dr_error(err, DR_ERR_WAL_KEPT,
                              "%s is complete, but the disk filled as it was closed: its last "
                              "pages are in %s-wal; keep both files together (every reader "
                              "opens them as one)",
                              t->path, t->path);
            else if (rc != DR_OK && err) *err = ce;
        }
    }
    dr_trace_free(t);
    return rc;
}

/* ---- reading ---------------------------------------------------------- */

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Classifies the file from its first 100 bytes before SQLite opens it, so
 * that "not SQLite", "not ours" and "cut short" get their own messages. */
static int check_header(const char *path, DrError *err) {
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno == ENOENT)
            return dr_error(err, DR_ERR_MISSING,
                            "%s: no such file; check the path, or record one with "
                            "'dynrec run -o %s script.py'",
                            path, path);
        return dr_error(err, DR_ERR_IO, "%s: cannot read it: %s", path, strerror(errno));
    }
    if (!S_ISREG(sb.st_mode))
        return dr_error(err, DR_ERR_NOT_SQLITE, "%s: not a regular file; give a trace file", path);
    if (sb.st_size == 0)
        return dr_error(err, DR_ERR_NOT_SQLITE,
                        "%s: empty file, not a dynrec trace; record one with 'dynrec run'", path);
    FILE *f = fopen(path, "rb");
    if (!f) return dr_error(err, DR_ERR_IO, "%s: cannot open it: %s", path, strerror(errno));
    unsigned char h[100];
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    static const char magic[16] = "SQLite format 3";
    if (n < 16 || memcmp(h, magic, 16) != 0) {
        if (n > 0 && n < 16 && memcmp(h, magic, n) == 0)
            return dr_error(err, DR_ERR_CORRUPT,
                            "%s: truncated (%zu bytes); the trace is unusable, record it again",
                            path, n);
        return dr_error(err, DR_ERR_NOT_SQLITE,
                        "%s: not an SQLite file, so not a dynrec trace; give the .db file "
                        "that 'dynrec run' wrote",
                        path);
    }
    if (n < sizeof h)
        return dr_error(err, DR_ERR_CORRUPT,
                        "%s: truncated inside the header (%zu bytes); record it again", path, n);
    uint32_t pgsz = (uint32_t)h[16] << 8 | h[17];
    if (pgsz == 1) pgsz = 65536;
    if (pgsz < 512 || (pgsz & (pgsz - 1)))
        return dr_error(err, DR_ERR_CORRUPT, "%s: corrupt header (page size %u); record it again",
                        path, pgsz);
    uint32_t npages = be32(h + 28);
    /* A trace whose recording stopped early (a full disk, a killed run) may
     * keep its latest pages in the -wal file beside it: SQLite reads them
     * from there, so the main file may be shorter than the header says. */
    char wal[4200];
    struct stat wb;
    snprintf(wal, sizeof wal, "%s-wal", path);
    int has_wal = h[18] == 2 && stat(wal, &wb) == 0 && S_ISREG(wb.st_mode) && wb.st_size > 0;
    if (npages && !has_wal && be32(h + 24) == be32(h + 92) &&
        (uint64_t)sb.st_size < (uint64_t)npages * pgsz)
        return dr_error(err, DR_ERR_CORRUPT,
                        "%s: truncated (%lld of %llu bytes); the trace was cut short in a copy, "
                        "copy it again",
                        path, (long long)sb.st_size, (unsigned long long)npages * pgsz);
    return DR_OK;
}

static int pragma_int(DrTrace *t, const char *sql, int64_t *out, DrError *err) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(t->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return sql_err(t, err, rc, sql);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
    int frc = sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return sql_err(t, err, rc == SQLITE_DONE ? frc : rc, sql);
    return DR_OK;
}

/* Our own view definitions, as TEMP views shadowing the file's. */
static int define_temp_views(DrTrace *t, DrError *err) {
    static const char from[] = "CREATE VIEW ", to[] = "CREATE TEMP VIEW ";
    size_t n = 0;
    for (const char *p = VIEWS_V1; (p = strstr(p, from)); p += sizeof from - 1) n++;
    char *sql = malloc(sizeof VIEWS_V1 + n * (sizeof to - sizeof from));
    if (!sql) return dr_error(err, DR_ERR_NOMEM, "%s: out of memory", t->path);
    char *w = sql;
    for (const char *p = VIEWS_V1;;) {
        const char *q = strstr(p, from);
        size_t len = q ? (size_t)(q - p) : strlen(p);
        memcpy(w, p, len);
        w += len;
        if (!q) break;
        memcpy(w, to, sizeof to - 1);
        w += sizeof to - 1;
        p = q + sizeof from - 1;
    }
    *w = 0;
    int rc = exec(t, sql, err);
    free(sql);
    return rc;
}

/* ---- a file from a stranger ------------------------------------------- */

/* The query budget.  A hostile schema (a view that recurses, a join that
 * never ends) must not hang a reader: no single step of a statement -- the
 * time SQLite works towards its next row, not the caller's own time between
 * rows -- may run past the budget (DYNREC_QUERY_BUDGET_MS, default 10 s of
 * monotonic time).  Such a step is interrupted and reported as a hostile
 * file (DR_ERR_CORRUPT).  The trace hook marks where each statement starts
 * and each row is returned; the progress handler, every PROGRESS_OPS VM
 * instructions, measures from the first of its calls after that mark. */
#define DEFAULT_BUDGET_MS 10000
#define PROGRESS_OPS 1000

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int on_progress(void *ud) {
    DrTrace *t = ud;
    int64_t now = mono_ns();
    if (!t->step_start) {
        t->step_start = now;
        return 0;
    }
    if (now - t->step_start <= t->budget_ns) return 0;
    t->budget_hit = 1;
    return 1;
}

static int on_trace(unsigned type, void *ud, void *p, void *x) {
    (void)p;
    (void)x;
    DrTrace *t = ud;
    t->step_start = 0;
    if (type == SQLITE_TRACE_STMT) t->budget_hit = 0;
    return 0;
}

void dr_trace_set_query_budget(DrTrace *t, long ms) {
    if (!t || !t->db) return;
    t->budget_ns = ms > 0 ? (int64_t)ms * 1000000 : 0;
    t->step_start = 0;
    t->budget_hit = 0;
    if (ms > 0) {
        sqlite3_progress_handler(t->db, PROGRESS_OPS, on_progress, t);
        sqlite3_trace_v2(t->db, SQLITE_TRACE_STMT | SQLITE_TRACE_ROW, on_trace, t);
    } else {
        sqlite3_progress_handler(t->db, 0, NULL, NULL);
        sqlite3_trace_v2(t->db, 0, NULL, NULL);
    }
}

static long budget_from_env(void) {
    const char *v = getenv("DYNREC_QUERY_BUDGET_MS");
    if (v && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (!*end && n > 0) return n;
    }
    return DEFAULT_BUDGET_MS;
}

int dr_trace_sql_error(DrTrace *t, int rc, const char *what, DrError *err) {
    return sql_err(t, err, rc, what);
}

/* The tables readers read, and what their columns must hold.  A reader
 * checks each at open (check_tables): a real table (not a view or a virtual
 * table standing in for it), with these columns, its primary key, no
 * generated column, and values of the right type: SQLite's affinity keeps
 * text that does not look like a number as text, so '1_000' in an INTEGER
 * column stays text, which C reads as 1 and Python's int() as 1000.
 * Adding a table or a column the readers read: add it here. */
typedef struct {
    const char *name;
    int since;          /* required from this schema version on (0: optional) */
    const char *pk;     /* primary key columns, in order; NULL: none */
    const char *ints;   /* integer, never NULL */
    const char *nints;  /* integer or NULL */
    const char *texts;  /* text, never NULL */
    const char *ntexts; /* text or NULL */
    const char *blobs;  /* blob, never NULL */
    const char *other;  /* any value */
    const char *sizes;  /* integers within 0 .. DR_CODEC_MAX_DEFAULT */
} TableSpec;

static const TableSpec table_specs[] = {
    {"meta", 1, "key", NULL, NULL, "key", NULL, NULL, "value", NULL},
    {"strings", 1, "id", "id", NULL, "text", NULL, NULL, NULL, NULL},
    {"dicts", 1, "id", "id", NULL, NULL, NULL, "data", NULL, NULL},
    {"blobs", 1, "id", "id", NULL, NULL, NULL, "data", NULL, NULL},
    {"files", 1, "id", "id path_id role_id size blob_id", NULL, NULL, NULL, NULL, NULL, "size"},
    {"code_objects", 1, "id", "id filename_id qualname_id firstlineno", NULL, NULL, NULL, NULL,
     NULL, NULL},
    {"frame_counts", 1, "code_id", "code_id calls resumes", NULL, NULL, NULL, NULL, NULL, NULL},
    {"events", 1, "seq", "seq t_ns thread kind_id",
     "code_id code2_id compile_id num text_id data_id key_id blob_id", NULL, NULL, NULL, NULL,
     NULL},
    {"value_nodes", 2, "capture node", "capture node kind_id type_id", "blob_id", NULL, "value",
     NULL, NULL, NULL},
    /* optional: version-2 files of dynrec 0.3.0 have none (counted at open) */
    {"event_counts", 0, "kind_id", "kind_id n", NULL, NULL, NULL, NULL, NULL, NULL},
    {"guard_fields", 3, "seq", "seq", "source_id location_id text_id masked_id", NULL, NULL, NULL,
     NULL, NULL},
    /* written by dynrec pack only */
    {"pack_log", 0, NULL, "n", NULL, "what detail", NULL, NULL, NULL, NULL},
};
#define N_TABLE_SPECS (sizeof table_specs / sizeof *table_specs)

/* Calls fn(ud, word, len) for each space-separated word of list (may be
 * NULL); stops at and returns fn's first non-zero return. */
static int each_word(const char *list, int (*fn)(void *, const char *, size_t), void *ud) {
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, " ");
        int r = n ? fn(ud, p, n) : 0;
        if (r) return r;
        p += n;
        while (*p == ' ') p++;
    }
    return 0;
}

typedef struct {
    char names[32][64]; /* the table's columns */
    int pk[32], hidden[32];
    int n;
    const char *missing; /* the first expected column not there */
    size_t missing_len;
} Columns;

static int col_index(const Columns *c, const char *w, size_t n) {
    for (int i = 0; i < c->n; i++)
        if (strlen(c->names[i]) == n && sqlite3_strnicmp(c->names[i], w, (int)n) == 0) return i;
    return -1;
}

static int need_column(void *ud, const char *w, size_t n) {
    Columns *c = ud;
    if (col_index(c, w, n) >= 0) return 0;
    c->missing = w;
    c->missing_len = n;
    return 1;
}

/* Appends PRE COND POST (", sum(COND)", " OR (COND)") for each column of a
 * list to the query being built. */
typedef struct {
    char *sql;
    size_t len, cap;
    const char *cond;       /* printf format with %.*s for the column, three times at most */
    const char *pre, *post; /* around each condition */
    int oom;
} Builder;

static int add_sum(void *ud, const char *w, size_t n) {
    Builder *b = ud;
    char part[512];
    int k = snprintf(part, sizeof part, "%s", b->pre);
    k += snprintf(part + k, sizeof part - (size_t)k, b->cond, (int)n, w, (int)n, w, (int)n, w);
    k += snprintf(part + k, sizeof part - (size_t)k, "%s", b->post);
    if (k >= (int)sizeof part) return b->oom = 1;
    if (b->len + (size_t)k + 1 > b->cap) {
        size_t cap = (b->cap + (size_t)k + 1) * 2;
        char *s = realloc(b->sql, cap);
        if (!s) return b->oom = 1;
        b->sql = s;
        b->cap = cap;
    }
    memcpy(b->sql + b->len, part, (size_t)k + 1);
    b->len += (size_t)k;
    return 0;
}

/* What each class of columns must hold, and how a bad value is named. */
static const struct {
    size_t off; /* offsetof(TableSpec, list) */
    const char *cond, *what;
} value_rules[] = {
    {offsetof(TableSpec, ints), "typeof(\"%.*s\") <> 'integer'", "not an integer"},
    {offsetof(TableSpec, nints), "typeof(\"%.*s\") NOT IN ('integer', 'null')", "not an integer"},
    {offsetof(TableSpec, texts), "typeof(\"%.*s\") <> 'text'", "not text"},
    {offsetof(TableSpec, ntexts), "typeof(\"%.*s\") NOT IN ('text', 'null')", "not text"},
    {offsetof(TableSpec, blobs), "typeof(\"%.*s\") <> 'blob'", "not a blob"},
    {offsetof(TableSpec, sizes),
     "typeof(\"%.*s\") = 'integer' AND (\"%.*s\" < 0 OR \"%.*s\" > 1073741824)",
     "a size below 0 or above 1 GiB"},
};

static const char *spec_list(const TableSpec *s, size_t off) {
    return *(const char *const *)((const char *)s + off);
}

/* The n-th word of list into buf. */
static void nth_word(const char *list, int nth, char *buf, size_t cap) {
    buf[0] = 0;
    for (const char *p = list; p && *p; nth--) {
        size_t n = strcspn(p, " ");
        if (nth == 0) {
            snprintf(buf, cap, "%.*s", (int)n, p);
            return;
        }
        p += n;
        while (*p == ' ') p++;
    }
}

static int count_words(const char *list) {
    int n = 0;
    for (const char *p = list; p && *p; n++) {
        p += strcspn(p, " ");
        while (*p == ' ') p++;
    }
    return n;
}

static int refuse(DrTrace *t, DrError *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(DrTrace *t, DrError *err, const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return dr_error(err, DR_ERR_CORRUPT,
                    "%s: not a trace as dynrec writes it: %s; the file was edited or is damaged "
                    "(give the file 'dynrec run' wrote, or record it again)",
                    t->path, what);
}

static int check_table(DrTrace *t, const TableSpec *s, DrError *err) {
    sqlite3_stmt *st = NULL;
    int status = DR_OK;
    int rc = sqlite3_prepare_v2(t->db,
                                "SELECT type, rootpage FROM main.sqlite_schema WHERE name = ?1 "
                                "COLLATE NOCASE",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) return sql_err(t, err, rc, "reading the schema");
    sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    char type[16] = "";
    int64_t root = 0;
    if (rc == SQLITE_ROW) {
        const char *ty = (const char *)sqlite3_column_text(st, 0);
        snprintf(type, sizeof type, "%s", ty ? ty : "?");
        root = sqlite3_column_int64(st, 1);
    }
    int frc = sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return sql_err(t, err, rc, "reading the schema");
    if (rc == SQLITE_DONE && frc != SQLITE_OK) return sql_err(t, err, frc, "reading the schema");
    if (rc == SQLITE_DONE) {
        if (s->since && t->schema_version >= s->since)
            return refuse(t, err, "table %s is missing", s->name);
        return DR_OK;
    }
    if (strcmp(type, "table") != 0) return refuse(t, err, "%s is a %s, not a table", s->name, type);
    if (root <= 0) return refuse(t, err, "%s is a virtual table", s->name);

    /* Its columns, primary key and generated columns. */
    Columns c = {0};
    rc = sqlite3_prepare_v2(t->db, "SELECT name, pk, hidden FROM pragma_table_xinfo(?1, 'main')",
                            -1, &st, NULL);
    if (rc != SQLITE_OK) return sql_err(t, err, rc, "reading the schema");
    sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (c.n == 32) continue; /* more than ours: the check of ours still works */
        const char *nm = (const char *)sqlite3_column_text(st, 0);
        snprintf(c.names[c.n], sizeof c.names[c.n], "%s", nm ? nm : "");
        c.pk[c.n] = sqlite3_column_int(st, 1);
        c.hidden[c.n] = sqlite3_column_int(st, 2);
        c.n++;
    }
    frc = sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return sql_err(t, err, rc, "reading the schema");
    if (frc != SQLITE_OK) return sql_err(t, err, frc, "reading the schema");
    for (size_t r = 0; r < sizeof value_rules / sizeof *value_rules; r++)
        if (each_word(spec_list(s, value_rules[r].off), need_column, &c)) {
            char col[64];
            snprintf(col, sizeof col, "%.*s", (int)c.missing_len, c.missing);
            return refuse(t, err, "table %s has no column %s", s->name, col);
        }
    if (each_word(s->other, need_column, &c))
        return refuse(t, err, "table %s lacks a column dynrec reads", s->name);
    for (int i = 0; i < c.n; i++)
        if (c.hidden[i])
            return refuse(t, err, "%s.%s is a generated or hidden column", s->name, c.names[i]);
    int npk = count_words(s->pk), have_pk = 0;
    for (int i = 0; i < c.n; i++)
        if (c.pk[i]) {
            char want[64];
            nth_word(s->pk, c.pk[i] - 1, want, sizeof want);
            if (c.pk[i] > npk || sqlite3_stricmp(want, c.names[i]) != 0)
                return refuse(t, err, "%s has another primary key (%s)", s->name, c.names[i]);
            have_pk++;
        }
    if (have_pk != npk)
        return refuse(t, err, "%s lacks its primary key (%s)", s->name, s->pk ? s->pk : "");

    /* The values of the tables that grow with the run (events, value
     * nodes, guards, strings, blobs) are checked in a snapshot only
     * (dr_trace_snapshot: what replay, rerun and repro read), so opening a
     * trace for show or view costs what it reads, not the file's size; a
     * mistyped value there misleads a display at worst, which copes with
     * any value.  The small tables every reader trusts (meta, files, code
     * objects, dictionaries, counts) are checked at every open. */
    static const char *const grows[] = {"events", "value_nodes", "guard_fields", "strings",
                                        "blobs"};
    for (size_t g = 0; !t->full_check && g < sizeof grows / sizeof *grows; g++)
        if (strcmp(s->name, grows[g]) == 0) return DR_OK;
    /* The values, in one pass that stops at the first bad one (a good file
     * is read once: about a second per million events on a slow disk);
     * only then a second pass counts, per rule and column, what is wrong. */
    Builder any = {.pre = " OR (", .post = ")", .cond = "0"};
    Builder b = {.pre = ", sum(", .post = ")", .cond = "0"};
    add_sum(&any, "", 0); /* a leading term keeps the lists well-formed */
    add_sum(&b, "", 0);
    for (size_t r = 0; r < sizeof value_rules / sizeof *value_rules; r++) {
        any.cond = b.cond = value_rules[r].cond;
        each_word(spec_list(s, value_rules[r].off), add_sum, &any);
        each_word(spec_list(s, value_rules[r].off), add_sum, &b);
    }
    char *sql = NULL;
    int64_t bad_rows = 0;
    if (any.oom ||
        asprintf(&sql, "SELECT EXISTS(SELECT 1 FROM main.\"%s\" WHERE 0%s)", s->name, any.sql) < 0)
        sql = NULL;
    free(any.sql);
    if (!sql) {
        free(b.sql);
        return dr_error(err, DR_ERR_NOMEM, "%s: out of memory", t->path);
    }
    status = pragma_int(t, sql, &bad_rows, err);
    free(sql);
    if (status != DR_OK || !bad_rows) {
        free(b.sql);
        return status;
    }
    if (b.oom || asprintf(&sql, "SELECT count(*)%s FROM main.\"%s\"", b.sql, s->name) < 0) {
        free(b.sql);
        return dr_error(err, DR_ERR_NOMEM, "%s: out of memory", t->path);
    }
    free(b.sql);
    rc = sqlite3_prepare_v2(t->db, sql, -1, &st, NULL);
    free(sql);
    if (rc != SQLITE_OK) return sql_err(t, err, rc, "checking the tables");
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        int k = 2; /* column 0 is count(*), 1 the sum(0) */
        for (size_t r = 0; r < sizeof value_rules / sizeof *value_rules && status == DR_OK; r++) {
            const char *list = spec_list(s, value_rules[r].off);
            for (int w = 0; w < count_words(list); w++, k++) {
                long long bad = sqlite3_column_int64(st, k);
                if (bad > 0 && status == DR_OK) {
                    char col[64];
                    nth_word(list, w, col, sizeof col);
                    status =
                        refuse(t, err, "%s.%s holds %lld value%s that %s %s", s->name, col, bad,
                               bad == 1 ? "" : "s", bad == 1 ? "is" : "are", value_rules[r].what);
                }
            }
        }
    } else {
        status = sql_err(t, err, rc, "checking the tables");
    }
    frc = sqlite3_finalize(st);
    if (status == DR_OK && frc != SQLITE_OK) status = sql_err(t, err, frc, "checking the tables");
    return status;
}

/* The whole file: no trigger and no virtual table anywhere (a trace has
 * none; they would travel into a copy), then each table readers read. */
static int check_tables(DrTrace *t, DrError *err) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(t->db,
                                "SELECT type, name FROM main.sqlite_schema WHERE type = 'trigger'"
                                " OR (type = 'table' AND rootpage = 0) LIMIT 1",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) return sql_err(t, err, rc, "reading the schema");
    rc = sqlite3_step(st);
    int status = DR_OK;
    if (rc == SQLITE_ROW) {
        const char *ty = (const char *)sqlite3_column_text(st, 0);
        const char *nm = (const char *)sqlite3_column_text(st, 1);
        status =
            refuse(t, err, "it holds a %s (%s)",
                   ty && strcmp(ty, "trigger") == 0 ? "trigger" : "virtual table", nm ? nm : "?");
    } else if (rc != SQLITE_DONE) {
        status = sql_err(t, err, rc, "reading the schema");
    }
    sqlite3_finalize(st);
    for (size_t i = 0; i < N_TABLE_SPECS && status == DR_OK; i++)
        status = check_table(t, &table_specs[i], err);
    return status;
}

int dr_trace_strip_copy(struct sqlite3 *db, const char *path, int version, DrError *err) {
    /* Everything but dynrec's own tables (and the indexes SQLite made for
     * their keys): views, triggers, indexes of the file's own, other tables. */
    char keep[512] = "";
    size_t k = 0;
    for (size_t i = 0; i < N_TABLE_SPECS; i++)
        k += (size_t)snprintf(keep + k, sizeof keep - k, "%s'%s'", i ? ", " : "",
                              table_specs[i].name);
    char *sql = NULL;
    if (asprintf(&sql,
                 "SELECT type, name FROM main.sqlite_schema WHERE type IN ('view', 'trigger')"
                 " OR (type = 'index' AND sql IS NOT NULL)"
                 " OR (type = 'table' AND lower(name) NOT IN (%s)"
                 "     AND (name NOT LIKE 'sqlite%%' OR lower(name) LIKE 'sqlite_stat%%'))"
                 " ORDER BY type = 'table', name",
                 keep) < 0)
        return dr_error(err, DR_ERR_NOMEM, "%s: out of memory", path);
    sqlite3_stmt *st = NULL;
    char **drops = NULL;
    size_t n = 0;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    free(sql);
    int status = DR_OK;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        if ((rc = sqlite3_step(st)) != SQLITE_ROW) break;
        const char *ty = (const char *)sqlite3_column_text(st, 0);
        const char *nm = (const char *)sqlite3_column_text(st, 1);
        char *d = sqlite3_mprintf("DROP %s IF EXISTS main.\"%w\"", ty ? ty : "", nm ? nm : "");
        char **nd = d ? realloc(drops, (n + 1) * sizeof *nd) : NULL;
        if (!nd) {
            sqlite3_free(d);
            status = dr_error(err, DR_ERR_NOMEM, "%s: out of memory", path);
            break;
        }
        drops = nd;
        drops[n++] = d;
    }
    if (status == DR_OK && rc != SQLITE_DONE)
        status = dr_error(err, DR_ERR_SQL, "%s: reading the copy's schema failed: %s", path,
                          sqlite3_errmsg(db));
    sqlite3_finalize(st);
    if (status == DR_OK && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        status = dr_error(err, DR_ERR_SQL, "%s: %s", path, sqlite3_errmsg(db));
    for (size_t i = 0; i < n && status == DR_OK; i++)
        if (sqlite3_exec(db, drops[i], NULL, NULL, NULL) != SQLITE_OK)
            status =
                dr_error(err, DR_ERR_SQL, "%s: %s failed: %s", path, drops[i], sqlite3_errmsg(db));
    /* The views for the sqlite3 shell, ours (they name today's tables). */
    if (status == DR_OK && version == DR_SCHEMA_VERSION &&
        sqlite3_exec(db, VIEWS_V1, NULL, NULL, NULL) != SQLITE_OK)
        status =
            dr_error(err, DR_ERR_SQL, "%s: writing the views failed: %s", path, sqlite3_errmsg(db));
    if (status == DR_OK && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        status = dr_error(err, DR_ERR_SQL, "%s: %s", path, sqlite3_errmsg(db));
    if (status != DR_OK) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    for (size_t i = 0; i < n; i++) sqlite3_free(drops[i]);
    free(drops);
    return status;
}

static DrTrace *open_reader(const char *path, int full_check, DrError *err);

int dr_trace_snapshot(DrTrace *t, const char *dest_path, DrError *err) {
    if (!t || t->writer || !dest_path || !*dest_path)
        return dr_error(err, DR_ERR_ARG, "dr_trace_snapshot: give an open reader and a path");
    /* Private: made here, for this user only, never an existing file. */
    int fd = open(dest_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return dr_error(err, DR_ERR_IO, "%s: cannot create the snapshot of %s: %s", dest_path,
                        t->path, strerror(errno));
    close(fd);
    sqlite3 *d = NULL;
    int status = DR_OK;
    int rc = sqlite3_open_v2(dest_path, &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        status = dr_error(err, DR_ERR_IO, "%s: cannot open the snapshot: %s", dest_path,
                          d ? sqlite3_errmsg(d) : sqlite3_errstr(rc));
        goto done;
    }
    harden(d);
    /* One step: the copy is made in one read transaction of the source, so
     * it is one consistent state of the file (and its WAL). */
    sqlite3_backup *b = sqlite3_backup_init(d, "main", t->db, "main");
    if (!b) {
        status = dr_error(err, DR_ERR_IO, "%s: cannot copy %s: %s", dest_path, t->path,
                          sqlite3_errmsg(d));
        goto done;
    }
    rc = sqlite3_backup_step(b, -1);
    int frc = sqlite3_backup_finish(b);
    if (rc == SQLITE_DONE) rc = frc;
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB)
        status = dr_error(err, DR_ERR_CORRUPT,
                          "%s: the trace is truncated or corrupt (%s); record it again", t->path,
                          sqlite3_errstr(rc));
    else if ((rc & 0xff) == SQLITE_FULL)
        status = dr_error(err, DR_ERR_FULL, "%s: cannot write the snapshot of %s: the disk is full",
                          dest_path, t->path);
    else if (rc != SQLITE_OK)
        status = dr_error(err, DR_ERR_IO, "%s: cannot write the snapshot of %s: %s", dest_path,
                          t->path, sqlite3_errstr(rc));
    if (status == DR_OK &&
        sqlite3_exec(d, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK)
        status = dr_error(err, DR_ERR_IO, "%s: %s", dest_path, sqlite3_errmsg(d));
    if (status == DR_OK) status = dr_trace_strip_copy(d, dest_path, t->schema_version, err);
done:
    if (d && sqlite3_close(d) != SQLITE_OK && status == DR_OK)
        status = dr_error(err, DR_ERR_IO, "%s: cannot close the snapshot", dest_path);
    /* The copy is what runs: every value of every table is checked in it
     * (the source's name in the message, the copy is private). */
    if (status == DR_OK) {
        DrTrace *c = open_reader(dest_path, 1, err);
        if (!c) {
            status = err ? err->code : DR_ERR_CORRUPT;
            if (err) {
                char msg[sizeof err->msg];
                const char *p = strstr(err->msg, ": not a trace");
                snprintf(msg, sizeof msg, "%s%s", t->path, p ? p : ": its snapshot is unreadable");
                snprintf(err->msg, sizeof err->msg, "%s", msg);
            }
        }
        dr_trace_free(c);
    }
    if (status != DR_OK) {
        unlink(dest_path);
        char j[4200];
        snprintf(j, sizeof j, "%s-journal", dest_path);
        unlink(j);
    }
    return status;
}

static DrTrace *open_reader(const char *path, int full_check, DrError *err) {
    if (check_header(path, err) != DR_OK) return NULL;
    DrTrace *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        dr_error(err, DR_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    t->full_check = full_check;
    int rc = sqlite3_open_v2(path, &t->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        sql_err(t, err, rc, "open");
        goto fail;
    }
    harden(t->db);
    /* The budget first: the schema and the tables are the stranger's. */
    dr_trace_set_query_budget(t, budget_from_env());
    int64_t appid = 0, ver = 0;
    if (pragma_int(t, "PRAGMA application_id", &appid, err) != DR_OK) goto fail;
    if (appid != DR_APPLICATION_ID) {
        dr_error(err, DR_ERR_NOT_TRACE,
                 "%s: an SQLite database but not a dynrec trace (application_id %lld); "
                 "give a file written by 'dynrec run'",
                 path, (long long)appid);
        goto fail;
    }
    if (pragma_int(t, "PRAGMA user_version", &ver, err) != DR_OK) goto fail;
    if (ver > DR_SCHEMA_VERSION) {
        dr_error(err, DR_ERR_TOO_NEW,
                 "%s: written by schema %lld; this dynrec (%s) reads up to %d: upgrade dynrec",
                 path, (long long)ver, DR_VERSION, DR_SCHEMA_VERSION);
        goto fail;
    }
    if (ver < 1) {
        dr_error(err, DR_ERR_CORRUPT, "%s: dynrec trace without a schema version; record it again",
                 path);
        goto fail;
    }
    t->schema_version = (int)ver;
    /* Every table readers read, before anything reads one. */
    if (check_tables(t, err) != DR_OK) goto fail;
    /* Version 1 predates captured values (an empty TEMP table stands in)
     * and kept no event counts (counted here, once). */
    int64_t has_values = 0, has_counts = 0, has_guards = 0;
    if (pragma_int(t,
                   "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                   "name = 'value_nodes'",
                   &has_values, err) != DR_OK ||
        pragma_int(t,
                   "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                   "name = 'event_counts'",
                   &has_counts, err) != DR_OK ||
        pragma_int(t,
                   "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                   "name = 'guard_fields'",
                   &has_guards, err) != DR_OK)
        goto fail;
    /* Versions 1 and 2 kept a guard's fields in its data (an empty TEMP
     * guard_fields stands in). */
    if ((!has_values && exec(t, VALUE_NODES_DDL("TEMP "), err) != DR_OK) ||
        (!has_guards && exec(t, GUARD_FIELDS_DDL("TEMP "), err) != DR_OK) ||
        (!has_counts && exec(t,
                             "CREATE TEMP TABLE event_counts AS SELECT kind_id, count(*) AS n"
                             " FROM events GROUP BY kind_id",
                             err) != DR_OK))
        goto fail;
    if (define_temp_views(t, err) != DR_OK) goto fail;
    /* No full-file check here: opening costs what it reads (the header,
     * the schema), not the file's size.  Corruption met later by a query
     * is reported then, as DR_ERR_CORRUPT naming the file. */
    return t;
fail:
    dr_trace_free(t);
    return NULL;
}

DrTrace *dr_trace_open(const char *path, DrError *err) { return open_reader(path, 0, err); }

int dr_trace_copy_to(DrTrace *t, const char *path, DrError *err) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(t->db, "VACUUM INTO ?1", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    int frc = sqlite3_finalize(st);
    if (rc == SQLITE_OK) rc = frc;
    if (rc == SQLITE_FULL) {
        /* A damaged page count also reads as "full": only a disk without
         * room for twice the trace is really full. */
        struct stat sb;
        struct statvfs vf;
        char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash) *slash = 0;
        if (dir && stat(t->path, &sb) == 0 && statvfs(slash ? (*dir ? dir : "/") : ".", &vf) == 0 &&
            (uint64_t)vf.f_bavail * vf.f_frsize > 2 * (uint64_t)sb.st_size + (1u << 20))
            rc = SQLITE_CORRUPT;
        free(dir);
    }
    if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB)
        return dr_error(err, DR_ERR_CORRUPT, "%s: the trace is corrupt (%s); record it again",
                        t->path, sqlite3_errmsg(t->db));
    if (rc != SQLITE_OK)
        return dr_error(err, rc == SQLITE_FULL ? DR_ERR_FULL : DR_ERR_IO,
                        "%s: cannot write a copy of %s: %s", path, t->path, sqlite3_errmsg(t->db));
    return DR_OK;
}

const char *dr_trace_path(const DrTrace *t) { return t->path; }
int dr_trace_schema_version(const DrTrace *t) { return t->schema_version; }

int dr_trace_query(DrTrace *t, const char *sql, DrRowFn row, void *ud, DrError *err) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(t->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return sql_err(t, err, rc, "query");
    int n = sqlite3_column_count(st);
    const char *names[64], *vals[64];
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++) names[i] = sqlite3_column_name(st, i);
    int status = DR_OK;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < n; i++) vals[i] = (const char *)sqlite3_column_text(st, i);
        if (row && row(ud, n, names, vals)) break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) status = sql_err(t, err, rc, "query");
    int frc = sqlite3_finalize(st);
    if (status == DR_OK && frc != SQLITE_OK && rc != SQLITE_ROW)
        status = sql_err(t, err, frc, "query");
    return status;
}

static int first_text(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    char **out = ud;
    if (n > 0 && v[0] && !(*out = strdup(v[0]))) *out = NULL;
    return 1;
}

int dr_trace_query_text(DrTrace *t, const char *sql, char **out, DrError *err) {
    *out = NULL;
    return dr_trace_query(t, sql, first_text, out, err);
}

int dr_trace_get_meta(DrTrace *t, const char *key, char **out, DrError *err) {
    *out = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(t->db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL);
    if (rc != SQLITE_OK) return sql_err(t, err, rc, "reading meta");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        if (v && !(*out = strdup(v))) rc = SQLITE_NOMEM;
    }
    int frc = sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return sql_err(t, err, rc, "reading meta");
    if (rc == SQLITE_DONE && frc != SQLITE_OK) return sql_err(t, err, frc, "reading meta");
    return DR_OK;
}

int dr_trace_is_complete(DrTrace *t) {
    char *v = NULL;
    if (dr_trace_get_meta(t, "complete", &v, NULL) != DR_OK) return 0;
    int c = v && strcmp(v, "1") == 0;
    free(v);
    return c;
}

static int load_dict(DrTrace *t, DrError *err) {
    if (t->dict_loaded) return DR_OK;
    sqlite3_stmt *st = NULL;
    int rc =
        sqlite3_prepare_v2(t->db, "SELECT id, data FROM dicts ORDER BY id LIMIT 1", -1, &st, NULL);
    if (rc != SQLITE_OK) return sql_err(t, err, rc, "reading the dictionary");
    rc = sqlite3_step(st);
    int status = DR_OK;
    if (rc == SQLITE_ROW) {
        DrError e2 = {0};
        if (!(t->dict = dr_dict_from_row(sqlite3_column_int64(st, 0), sqlite3_column_blob(st, 1),
                                         (size_t)sqlite3_column_bytes(st, 1), &e2)))
            status = dr_error(err, DR_ERR_BLOB, "%s: %s", t->path, e2.msg);
    } else if (rc != SQLITE_DONE) {
        status = sql_err(t, err, rc, "reading the dictionary");
    }
    sqlite3_finalize(st);
    if (status == DR_OK) t->dict_loaded = 1;
    return status;
}

int dr_trace_read_blob(DrTrace *t, int64_t id, size_t max_len, void **out, size_t *len,
                       DrError *err) {
    *out = NULL;
    *len = 0;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(t->db, "SELECT data FROM blobs WHERE id = ?1", -1, &st, NULL);
    if (rc != SQLITE_OK) return sql_err(t, err, rc, "reading a blob");
    sqlite3_bind_int64(st, 1, id);
    rc = sqlite3_step(st);
    int status = DR_OK;
    if (rc == SQLITE_ROW) {
        const void *data = sqlite3_column_blob(st, 0);
        size_t n = (size_t)sqlite3_column_bytes(st, 0);
        int codec = 0;
        uint64_t raw = 0;
        uint32_t did = 0;
        DrError e2 = {0};
        if (dr_codec_peek(data, n, &codec, &raw, &did, &e2) == DR_OK && codec == DR_CODEC_ZSTD_DICT)
            status = load_dict(t, err);
        if (status == DR_OK && dr_codec_decode(data, n, t->dict, max_len, out, len, &e2) != DR_OK)
            status = dr_error(err, DR_ERR_BLOB,
                              "%s: blob %lld is unreadable (%s); "
                              "the rest of the trace is usable",
                              t->path, (long long)id, e2.msg);
    } else if (rc == SQLITE_DONE) {
        status = dr_error(err, DR_ERR_BLOB, "%s: blob %lld does not exist", t->path, (long long)id);
    } else {
        status = sql_err(t, err, rc, "reading a blob");
    }
    sqlite3_finalize(st);
    return status;
}

struct sqlite3 *dr_trace_sqlite(DrTrace *t) {
    return t->db;
}

const char *dr_trace_sqlite_version(void) { return sqlite3_libversion(); }
const char *dr_trace_zstd_version(void) { return ZSTD_versionString(); }
