/* test_hostile_trace.c -- traces edited by a stranger (schema/trace.c's
 * checks at open, the query budget, dr_trace_snapshot, the codec's ratio
 * cap, export's output cap, pack's stripping).
 *
 * Each hostile file is a copy of tests/data/v3-shape_recompiles.db edited
 * with plain SQLite, as an attacker would: an id stored as the text
 * '1_000', a table replaced by a view (random rows, a recursion without
 * end), a trigger, a payload of zeros named by many events.  Every reader
 * must refuse such a file with exit 65 and a message naming it, quickly
 * (replay and repro before Python starts), and never hang or write a giant
 * file.  The in-process tests use the public API of trace.h. */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "codec.h"
#include "e2e_util.h"
#include "trace.h"

TestSuite(hostile_trace, .init = e2e_setup, .fini = e2e_teardown, .timeout = 240);

static char *data_file(const char *name) {
    return e2e_fmt("%s/../tests/data/%s", e2e_examples, name);
}

/* A copy of the committed version-3 trace as name in the test directory,
 * with sql (may be NULL) run on it by plain SQLite. */
static char *hostile(const char *name, const char *sql) {
    char *src = data_file("v3-shape_recompiles.db");
    size_t len = 0;
    char *bytes = e2e_slurp(src, &len);
    cr_assert_not_null(bytes, "cannot read %s", src);
    char *path = e2e_path(name);
    e2e_write_file(path, bytes, len);
    if (sql) {
        sqlite3 *db = NULL;
        cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
        char *msg = NULL;
        int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
        cr_assert_eq(rc, SQLITE_OK, "editing %s: %s", name, msg ? msg : "");
        sqlite3_close(db);
    }
    return path;
}

static E2eProc *dynrec(const char *const *args) {
    const char *argv[16] = {e2e_bin};
    for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = args[i];
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* Asserts exit 65 and that stderr names the file. */
static void expect_refused(const char *const *args, const char *file, const char *what) {
    E2eProc *p = dynrec(args);
    e2e_assert_exit(p, 65, what);
    cr_assert_not_null(strstr(p->err.data, file), "%s: the message does not name %s: %s", what,
                       file, p->err.data);
}

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

Test(hostile_trace, blob_id_as_text_is_refused_by_show_replay_export) {
    hostile("h.db", "UPDATE files SET blob_id = '1_000' WHERE id = (SELECT min(id) FROM files)");
    expect_refused((const char *[]){"show", "h.db", NULL}, "h.db", "show");
    expect_refused((const char *[]){"replay", "h.db", NULL}, "h.db", "replay");
    expect_refused((const char *[]){"export", "--format", "perfetto", "h.db", NULL}, "h.db",
                   "export");
    E2eProc *p = dynrec((const char *[]){"show", "h.db", NULL});
    cr_assert_not_null(strstr(p->err.data, "files.blob_id"), "%s", p->err.data);
    DrError err = {0};
    cr_assert_null(e2e_try_open(e2e_path("h.db"), &err));
    cr_assert_eq(err.code, DR_ERR_CORRUPT);
}

Test(hostile_trace, files_replaced_by_a_view_is_refused) {
    hostile("h.db", "ALTER TABLE files RENAME TO files_real;"
                    "CREATE VIEW files AS SELECT * FROM files_real ORDER BY random();");
    expect_refused((const char *[]){"show", "h.db", NULL}, "h.db", "show");
    expect_refused((const char *[]){"replay", "h.db", NULL}, "h.db", "replay");
}

/* The recursive view is refused at open; the budget (small here) is the
 * backstop, so whatever happens every reader is done within seconds. */
Test(hostile_trace, recursive_strings_view_every_reader_exits_65_quickly) {
    setenv("DYNREC_QUERY_BUDGET_MS", "500", 1);
    hostile("h.db", "ALTER TABLE strings RENAME TO strings_real;"
                    "CREATE VIEW strings AS WITH RECURSIVE r(id, text) AS (SELECT 1, 'a'"
                    " UNION ALL SELECT id + 1, text FROM r) SELECT * FROM r;");
    char *good = data_file("v3-shape_recompiles.db");
    int64_t t0 = e2e_now_ms();
    expect_refused((const char *[]){"show", "h.db", NULL}, "h.db", "show");
    expect_refused((const char *[]){"report", "h.db", NULL}, "h.db", "report");
    expect_refused((const char *[]){"diff", good, "h.db", NULL}, "h.db", "diff");
    expect_refused((const char *[]){"export", "--format", "perfetto", "h.db", NULL}, "h.db",
                   "export perfetto");
    expect_refused((const char *[]){"export", "--format", "torch-trace", "-o", "tt", "h.db", NULL},
                   "h.db", "export torch-trace");
    expect_refused((const char *[]){"sql", "h.db", "SELECT count(*) FROM strings", NULL}, "h.db",
                   "sql");
    expect_refused((const char *[]){"view", "--dump-first-screen", "h.db", NULL}, "h.db", "view");
    expect_refused((const char *[]){"repro", "-o", "r.py", "h.db", NULL}, "h.db", "repro");
    cr_assert(!exists(e2e_path("r.py")));
    expect_refused((const char *[]){"replay", "h.db", NULL}, "h.db", "replay");
    int64_t took = e2e_now_ms() - t0;
    cr_assert_lt(took, 60000, "the readers took %lld ms", (long long)took);
}

Test(hostile_trace, trigger_and_missing_column_are_refused) {
    hostile("t.db", "CREATE TRIGGER tr AFTER INSERT ON meta BEGIN SELECT 1; END;");
    expect_refused((const char *[]){"show", "t.db", NULL}, "t.db", "trigger");
    hostile("c.db", "ALTER TABLE code_objects RENAME COLUMN firstlineno TO line;");
    E2eProc *p = dynrec((const char *[]){"show", "c.db", NULL});
    e2e_assert_exit(p, 65, "missing column");
    cr_assert_not_null(strstr(p->err.data, "firstlineno"), "%s", p->err.data);
    /* A table that grows with the run is checked value by value in the
     * snapshot a replay runs from (opening for a display checks its shape). */
    hostile("s.db", "UPDATE strings SET text = CAST(text AS BLOB) WHERE id = 1;");
    expect_refused((const char *[]){"replay", "s.db", NULL}, "s.db", "blob in strings.text");
}

Test(hostile_trace, pack_refuses_a_view_and_strips_foreign_objects) {
    hostile("h.db", "ALTER TABLE strings RENAME TO strings_real;"
                    "CREATE VIEW strings AS SELECT * FROM strings_real;");
    expect_refused((const char *[]){"pack", "h.db", "-o", "p.dynrec", NULL}, "h.db", "pack");
    cr_assert(!exists(e2e_path("p.dynrec")));
    /* Readable, but with objects of the author's own: none reach the pack. */
    hostile("g.db", "CREATE TABLE secrets(x); INSERT INTO secrets VALUES('hunter2');"
                    "DROP VIEW v_files; CREATE VIEW v_files AS SELECT * FROM secrets;"
                    "CREATE INDEX ix ON events(t_ns);");
    E2eProc *p = dynrec((const char *[]){"pack", "-q", "g.db", "-o", "g.dynrec", NULL});
    e2e_assert_exit(p, 0, "pack of g.db");
    DrTrace *t = e2e_open(e2e_path("g.dynrec"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM sqlite_schema WHERE name IN "
                                "('secrets', 'ix')"),
                 0);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM sqlite_schema WHERE name = 'v_files' AND "
                                "sql LIKE '%secrets%'"),
                 0);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM sqlite_schema WHERE type = 'view' AND "
                                "name = 'v_files'"),
                 1);
    e2e_close(t);
    size_t len = 0;
    char *bytes = e2e_slurp(e2e_path("g.dynrec"), &len);
    cr_assert_not_null(bytes);
    cr_assert_null(memmem(bytes, len, "hunter2", 7));
}

Test(hostile_trace, query_budget_interrupts_a_runaway_query) {
    setenv("DYNREC_QUERY_BUDGET_MS", "200", 1);
    char *path = hostile("b.db", NULL);
    DrTrace *t = e2e_open(path);
    DrError err = {0};
    int64_t t0 = e2e_now_ms();
    int rc = dr_trace_query(t,
                            "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)"
                            " SELECT count(*) FROM r",
                            NULL, NULL, &err);
    int64_t took = e2e_now_ms() - t0;
    cr_assert_eq(rc, DR_ERR_CORRUPT, "%d: %s", rc, err.msg);
    cr_assert_not_null(strstr(err.msg, path), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "ran past"), "%s", err.msg);
    cr_assert_lt(took, 5000, "took %lld ms", (long long)took);
    /* The connection stays usable, and slow callers are not charged: the
     * budget counts SQLite's work towards a row, not the caller's. */
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_ev") > 0, 1);
    rc = dr_trace_query(t,
                        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r"
                        " LIMIT 3) SELECT x FROM r",
                        NULL, NULL, &err);
    cr_assert_eq(rc, DR_OK, "%s", err.msg);
    e2e_close(t);
    /* dynrec sql says the same, exit 65. */
    E2eProc *p = dynrec((const char *[]){"sql", path,
                                         "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL"
                                         " SELECT x + 1 FROM r) SELECT count(*) FROM r",
                                         NULL});
    unsetenv("DYNREC_QUERY_BUDGET_MS");
    e2e_assert_exit(p, 65, "sql past the budget");
    cr_assert_not_null(strstr(p->err.data, "ran past"), "%s", p->err.data);
}

/* A payload of 1 MiB of zeros (under the codec's floor, so readable) named
 * by 600 structured-trace events: a 160 KB file whose torch-trace export
 * would be 600 MiB. */
Test(hostile_trace, export_of_a_high_ratio_payload_stops_cleanly) {
    char *path = hostile("z.db", NULL);
    size_t n = (size_t)1 << 20;
    char *zeros = calloc(1, n);
    void *enc = NULL;
    size_t enclen = 0;
    cr_assert_eq(dr_codec_encode(zeros, n, NULL, 0, &enc, &enclen, NULL), DR_OK);
    free(zeros);
    cr_assert_lt(enclen, 1000);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(db, "INSERT INTO blobs(data) VALUES(?1)", -1, &st, NULL),
                 SQLITE_OK);
    sqlite3_bind_blob(st, 1, enc, (int)enclen, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    free(enc);
    char *msg = NULL;
    char *sql =
        e2e_fmt("INSERT INTO events(t_ns, thread, kind_id, num, text_id, data_id, blob_id)"
                " WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 600)"
                " SELECT e.t_ns, e.thread, e.kind_id, e.num, e.text_id, e.data_id, %lld FROM r,"
                " (SELECT * FROM events WHERE seq = 4) e",
                (long long)sqlite3_last_insert_rowid(db));
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
    sqlite3_close(db);
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_assert_lt(sb.st_size, 400000);
    E2eProc *p =
        dynrec((const char *[]){"export", "--format", "torch-trace", "-o", "out", "z.db", NULL});
    e2e_assert_exit(p, 65, "export of the bomb");
    cr_assert_not_null(strstr(p->err.data, "z.db"), "%s", p->err.data);
    cr_assert(!exists(e2e_path("out/dedicated_log_torch_trace_z.log")),
              "the partial log was left behind");
    /* Perfetto does not write payloads: it works. */
    p = dynrec((const char *[]){"export", "--format", "perfetto", "-o", "z.json", "z.db", NULL});
    e2e_assert_exit(p, 0, "perfetto export");
    /* The real trace exports. */
    p = dynrec((const char *[]){"export", "--format", "torch-trace", "-o", "out",
                                data_file("v3-shape_recompiles.db"), NULL});
    e2e_assert_exit(p, 0, "export of the real trace");
}

/* Above the floor, a blob that inflates more than the ratio is refused at
 * any size, for that blob only. */
Test(hostile_trace, codec_refuses_a_bomb_above_one_mib) {
    size_t n = (size_t)2 << 20;
    char *zeros = calloc(1, n);
    void *enc = NULL, *out = NULL;
    size_t enclen = 0, outlen = 0;
    cr_assert_eq(dr_codec_encode(zeros, n, NULL, 0, &enc, &enclen, NULL), DR_OK);
    DrError err = {0};
    cr_assert_eq(dr_codec_decode(enc, enclen, NULL, 0, &out, &outlen, &err), DR_ERR_BLOB);
    cr_assert_not_null(strstr(err.msg, "decompression bomb"), "%s", err.msg);
    free(enc);
    /* The same size of real text decodes. */
    uint64_t x = 88172645463325252ull; /* xorshift: letters that do not repeat */
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        zeros[i] = (char)('a' + x % 26);
    }
    cr_assert_eq(dr_codec_encode(zeros, n, NULL, 0, &enc, &enclen, NULL), DR_OK);
    cr_assert_eq(dr_codec_decode(enc, enclen, NULL, 0, &out, &outlen, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(outlen, n);
    free(out);
    free(enc);
    free(zeros);
}

Test(hostile_trace, old_traces_still_open) {
    const char *names[] = {"v1-shape_recompiles.db", "v2-shape_recompiles.db",
                           "v3-shape_recompiles.db"};
    for (int i = 0; i < 3; i++) {
        E2eProc *p = dynrec((const char *[]){"show", data_file(names[i]), NULL});
        e2e_assert_exit(p, 0, names[i]);
    }
    /* Version 2 as dynrec 0.3.0 wrote it: no event_counts table. */
    char *v2 = e2e_fmt("%s/../tests/fuzz/corpus/trace/hot_loop.db", e2e_examples);
    E2eProc *p = dynrec((const char *[]){"show", v2, NULL});
    e2e_assert_exit(p, 0, "hot_loop.db (version 2, no event_counts)");
    DrTrace *t = e2e_open(v2);
    char *snap = e2e_path("snap.db");
    DrError err = {0};
    cr_assert_eq(dr_trace_snapshot(t, snap, &err), DR_OK, "%s", err.msg);
    e2e_close(t);
}

Test(hostile_trace, snapshot_is_private_consistent_and_checked_again) {
    char *path = hostile("s.db", "CREATE TABLE extra(x); CREATE VIEW v_extra AS SELECT 1;");
    DrTrace *t = e2e_open(path);
    char *snap = e2e_path("snap.db");
    DrError err = {0};
    cr_assert_eq(dr_trace_snapshot(t, snap, &err), DR_OK, "%s", err.msg);
    struct stat sb;
    cr_assert_eq(stat(snap, &sb), 0);
    cr_assert_eq(sb.st_mode & 0777, 0600);
    /* Never over an existing file. */
    cr_assert_eq(dr_trace_snapshot(t, snap, &err), DR_ERR_IO);
    cr_assert_not_null(strstr(err.msg, snap), "%s", err.msg);
    DrTrace *s = e2e_open(snap);
    const char *same[] = {"SELECT count(*) FROM v_ev", "SELECT count(*) FROM v_files",
                          "SELECT count(*) FROM v_values", "SELECT sum(length(data)) FROM blobs"};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(e2e_sql_int(s, same[i]), e2e_sql_int(t, same[i]), "%s", same[i]);
    cr_assert_eq(e2e_sql_int(s, "SELECT count(*) FROM sqlite_schema WHERE name IN "
                                "('extra', 'v_extra')"),
                 0);
    e2e_close(s);
    e2e_close(t);
    /* An older schema: the snapshot opens as the original does. */
    t = e2e_open(data_file("v1-shape_recompiles.db"));
    char *snap1 = e2e_path("snap1.db");
    cr_assert_eq(dr_trace_snapshot(t, snap1, &err), DR_OK, "%s", err.msg);
    s = e2e_open(snap1);
    cr_assert_eq(e2e_sql_int(s, "SELECT count(*) FROM v_compiles"),
                 e2e_sql_int(t, "SELECT count(*) FROM v_compiles"));
    e2e_close(s);
    e2e_close(t);
}
