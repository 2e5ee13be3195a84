/* test_trace.c -- Criterion tests for the trace store (schema/trace.c).
 *
 * Everything goes through the public API of trace.h, as the recorder and the
 * viewer use it; raw sqlite3 calls appear only to fabricate files a real
 * dynrec never writes (a foreign database, a newer schema, a damaged blob).
 * The bad-file tests check both the status code and that the message names
 * the file, since that message is what the user sees.  Each test works in its
 * own mkdtemp directory, removed by the fixture. */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>
#include <zdict.h>

#include "trace.h"
#include "unit_util.h"

static char trace_dir[64]; /* mkdtemp template below */

static void trace_setup(void) {
    snprintf(trace_dir, sizeof trace_dir, "/tmp/dynrec-test-trace-XXXXXX");
    cr_assert_not_null(mkdtemp(trace_dir), "mkdtemp failed");
}

static void trace_teardown(void) {
    DIR *d = opendir(trace_dir);
    if (!d) return;
    struct dirent *e;
    char p[PATH_MAX + 256];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", trace_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(trace_dir);
}

TestSuite(trace, .init = trace_setup, .fini = trace_teardown);

/* Fills buf with the path of name inside the test's directory. */
static const char *trace_file(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/%s", trace_dir, name);
    return buf;
}

static int trace_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

static long long trace_size(const char *path) {
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0, "stat %s", path);
    return (long long)sb.st_size;
}

static void trace_write_bytes(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* Raw SQLite on a closed trace: only to fabricate files dynrec never writes. */
static void trace_sqlite_exec(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK, "sqlite3_open %s", path);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    cr_assert_eq(rc, SQLITE_OK, "%s: %s", sql, msg ? msg : "?");
    sqlite3_free(msg);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
}

/* ---- fabricating traces ------------------------------------------------- */

static DrTrace *trace_new(const char *path) {
    DrError err = {0};
    DrTrace *t = dr_trace_create(path, 0, &err);
    cr_assert_not_null(t, "create %s: %s", path, err.msg);
    return t;
}

static void trace_close_ok(DrTrace *t, int complete) {
    DrError err = {0};
    cr_assert_eq(dr_trace_close(t, complete, &err), DR_OK, "close: %s", err.msg);
}

static DrTrace *trace_open_ok(const char *path) {
    DrError err = {0};
    DrTrace *t = dr_trace_open(path, &err);
    cr_assert_not_null(t, "open %s: %s", path, err.msg);
    return t;
}

static int64_t trace_event(DrTrace *t, int64_t t_ns, const char *kind, int64_t num,
                           const char *text) {
    DrError err = {0};
    DrEvent ev = {.t_ns = t_ns, .thread = 1, .kind = kind, .num = num, .text = text};
    int64_t seq = dr_trace_add_event(t, &ev, &err);
    cr_assert_gt(seq, 0, "add_event: %s", err.msg);
    return seq;
}

/* A finished trace of n events with distinct texts and a payload every tenth,
 * big enough to span many pages. */
static void trace_make_finished(const char *path, int n) {
    DrError err = {0};
    DrTrace *t = trace_new(path);
    cr_assert_eq(dr_trace_begin(t, &err), DR_OK, "%s", err.msg);
    char text[64];
    for (int i = 0; i < n; i++) {
        snprintf(text, sizeof text, "event text number %d", i);
        DrEvent ev = {.t_ns = i * 1000, .thread = 1, .kind = "callback", .num = i, .text = text};
        char *payload = NULL;
        if (i % 10 == 0) {
            payload = ut_python_text(300, (uint64_t)i + 1);
            ev.payload = payload;
            ev.payload_len = 300;
        }
        cr_assert_gt(dr_trace_add_event(t, &ev, &err), 0, "%s", err.msg);
        free(payload);
    }
    cr_assert_eq(dr_trace_commit(t, &err), DR_OK, "%s", err.msg);
    trace_close_ok(t, 1);
}

/* Opens a bad file and checks the code and that the message names it. */
static void trace_expect_open_error(const char *path, int code, const char *also) {
    DrError err = {0};
    DrTrace *t = dr_trace_open(path, &err);
    if (t) dr_trace_free(t);
    cr_assert_null(t, "%s opened, expected %s", path, dr_strerror(code));
    cr_assert_eq(err.code, code, "%s: got %s (%s), expected %s", path, dr_strerror(err.code),
                 err.msg, dr_strerror(code));
    cr_assert_not_null(strstr(err.msg, path), "message does not name the file: %s", err.msg);
    if (also) cr_assert_not_null(strstr(err.msg, also), "message lacks \"%s\": %s", also, err.msg);
}

/* ---- writing and reading back ------------------------------------------ */

Test(trace, round_trip_meta_and_single_file) {
    char path[PATH_MAX], side[PATH_MAX + 16];
    trace_file(path, sizeof path, "run.db");
    DrError err = {0};
    DrTrace *t = trace_new(path);
    cr_assert_eq(dr_trace_set_meta(t, "argv", "[\"python\", \"demo.py\"]", &err), DR_OK, "%s",
                 err.msg);
    cr_assert_eq(dr_trace_set_meta_int(t, "pid", 4242, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(dr_trace_set_meta(t, "replaced", "old", &err), DR_OK, "%s", err.msg);
    cr_assert_eq(dr_trace_set_meta(t, "replaced", "new", &err), DR_OK, "%s", err.msg);
    trace_event(t, 10, "start", 0, NULL);
    trace_close_ok(t, 1);

    /* A cleanly closed trace is one self-contained file in rollback mode. */
    static const char *const sfx[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(side, sizeof side, "%s%s", path, sfx[i]);
        cr_assert(!trace_exists(side), "%s left behind after a clean close", side);
    }
    unsigned char hdr[100];
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(hdr, 1, sizeof hdr, f), sizeof hdr);
    fclose(f);
    cr_assert_eq(hdr[18], 1, "file format write version %d: still in WAL mode", hdr[18]);
    cr_assert_eq(hdr[19], 1, "file format read version %d: still in WAL mode", hdr[19]);

    DrTrace *r = trace_open_ok(path);
    cr_assert_eq(ut_q1_int(r, "PRAGMA application_id"), DR_APPLICATION_ID);
    cr_assert_eq(ut_q1_int(r, "PRAGMA user_version"), DR_SCHEMA_VERSION);
    cr_assert_eq(dr_trace_schema_version(r), DR_SCHEMA_VERSION);
    cr_assert_str_eq(dr_trace_path(r), path);
    cr_assert_eq(dr_trace_is_complete(r), 1);
    ut_expect_meta(r, "argv", "[\"python\", \"demo.py\"]");
    ut_expect_meta(r, "pid", "4242");
    ut_expect_meta(r, "replaced", "new");
    ut_expect_meta(r, "writer_version", DR_VERSION);
    ut_expect_meta(r, "sqlite_version", dr_trace_sqlite_version());
    ut_expect_meta(r, "zstd_version", dr_trace_zstd_version());
    char ver[16];
    snprintf(ver, sizeof ver, "%d", DR_SCHEMA_VERSION);
    ut_expect_meta(r, "schema_version", ver);
    cr_assert_eq(ut_count_rows(r, "SELECT key FROM meta WHERE key = 'replaced'"), 1);
    char *absent = (char *)1;
    cr_assert_eq(dr_trace_get_meta(r, "no_such_key", &absent, &err), DR_OK, "%s", err.msg);
    cr_assert_null(absent);
    cr_assert_eq(ut_count_rows(r, "SELECT * FROM v_events"), 1);
    dr_trace_free(r);
}

Test(trace, abandoned_writer_is_incomplete) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "abandoned.db");
    DrError err = {0};
    DrTrace *t = trace_new(path);
    cr_assert_eq(dr_trace_begin(t, &err), DR_OK, "%s", err.msg);
    trace_event(t, 1, "start", 7, "kept");
    cr_assert_eq(dr_trace_commit(t, &err), DR_OK, "%s", err.msg);
    dr_trace_free(t);

    DrTrace *r = trace_open_ok(path);
    cr_assert_eq(dr_trace_is_complete(r), 0);
    ut_expect_meta(r, "complete", "0");
    ut_expect_q1(r, "SELECT text FROM v_events WHERE kind = 'start'", "kept");
    dr_trace_free(r);
}

Test(trace, close_without_complete_is_incomplete) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "cut.db");
    DrTrace *t = trace_new(path);
    trace_event(t, 1, "start", 0, NULL);
    trace_close_ok(t, 0);
    DrTrace *r = trace_open_ok(path);
    cr_assert_eq(dr_trace_is_complete(r), 0);
    cr_assert_eq(ut_count_rows(r, "SELECT * FROM v_events"), 1);
    dr_trace_free(r);
}

Test(trace, intern_same_string_same_id) {
    char path[PATH_MAX], sql[256];
    trace_file(path, sizeof path, "strings.db");
    DrError err = {0};
    DrTrace *t = trace_new(path);
    int64_t a = dr_trace_intern(t, "forward", -1, &err);
    int64_t b = dr_trace_intern(t, "forward", -1, &err);
    int64_t c = dr_trace_intern(t, "backward", -1, &err);
    int64_t d = dr_trace_intern(t, "forwardX", 7, &err); /* explicit length: "forward" */
    cr_assert_gt(a, 0, "%s", err.msg);
    cr_assert_eq(a, b);
    cr_assert_gt(c, 0);
    cr_assert_neq(a, c);
    cr_assert_eq(d, a, "a length-limited prefix is the same string");

    /* Enough strings to grow the in-memory table several times; every one
     * must still map to its first id afterwards. */
    enum { N = 5000 };
    int64_t *ids = malloc(N * sizeof *ids);
    cr_assert_not_null(ids);
    char s[32];
    for (int i = 0; i < N; i++) {
        snprintf(s, sizeof s, "name_%d", i);
        ids[i] = dr_trace_intern(t, s, -1, &err);
        cr_assert_gt(ids[i], 0, "%s", err.msg);
    }
    for (int i = 0; i < N; i++) {
        snprintf(s, sizeof s, "name_%d", i);
        cr_assert_eq(dr_trace_intern(t, s, -1, &err), ids[i], "%s changed id", s);
    }
    cr_assert_eq(dr_trace_intern(t, "forward", -1, &err), a);
    trace_close_ok(t, 1);

    DrTrace *r = trace_open_ok(path);
    cr_assert_eq(ut_count_rows(r, "SELECT id FROM strings WHERE text = 'forward'"), 1);
    snprintf(sql, sizeof sql, "SELECT text FROM strings WHERE id = %lld", (long long)a);
    ut_expect_q1(r, sql, "forward");
    snprintf(sql, sizeof sql, "SELECT text FROM strings WHERE id = %lld", (long long)ids[1234]);
    ut_expect_q1(r, sql, "name_1234");
    cr_assert_eq(ut_q1_int(r, "SELECT count(*) FROM strings"), N + 2);
    cr_assert_eq(ut_q1_int(r, "SELECT count(DISTINCT text) FROM strings"), N + 2);
    dr_trace_free(r);
    free(ids);
}

Test(trace, intern_embedded_nul) {
    char path[PATH_MAX], sql[256];
    trace_file(path, sizeof path, "nul.db");
    DrError err = {0};
    DrTrace *t = trace_new(path);
    int64_t ab = dr_trace_intern(t, "a\0b", 3, &err);
    int64_t ac = dr_trace_intern(t, "a\0c", 3, &err);
    int64_t a = dr_trace_intern(t, "a", -1, &err);
    int64_t a0 = dr_trace_intern(t, "a\0", 2, &err);
    cr_assert_gt(ab, 0, "%s", err.msg);
    cr_assert(ab != ac && ab != a && ac != a && a0 != a && a0 != ab, "ids %lld %lld %lld %lld",
              (long long)ab, (long long)ac, (long long)a, (long long)a0);
    cr_assert_eq(dr_trace_intern(t, "a\0b", 3, &err), ab);
    cr_assert_eq(dr_trace_intern(t, "a\0b", 1, &err), a, "\"a\\0b\" cut to 1 byte is \"a\"");
    trace_close_ok(t, 1);

    DrTrace *r = trace_open_ok(path);
    snprintf(sql, sizeof sql, "SELECT hex(CAST(text AS BLOB)) FROM strings WHERE id = %lld",
             (long long)ab);
    ut_expect_q1(r, sql, "610062");
    snprintf(sql, sizeof sql, "SELECT hex(CAST(text AS BLOB)) FROM strings WHERE id = %lld",
             (long long)ac);
    ut_expect_q1(r, sql, "610063");
    snprintf(sql, sizeof sql, "SELECT hex(CAST(text AS BLOB)) FROM strings WHERE id = %lld",
             (long long)a0);
    ut_expect_q1(r, sql, "6100");
    cr_assert_eq(ut_q1_int(r, "SELECT count(*) FROM strings"), 4);
    dr_trace_free(r);
}

typedef struct {
    int rows;
    char kind[8][32], text[8][32], qualname[8][32];
    long long num[8], t_ns[8];
    int text_null[8], blob_null[8];
} TraceEvents;

static int trace_collect_events(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    TraceEvents *e = ud;
    cr_assert_eq(n, 6);
    cr_assert_lt(e->rows, 8);
    int i = e->rows++;
    snprintf(e->kind[i], sizeof e->kind[i], "%s", v[0] ? v[0] : "(null)");
    e->text_null[i] = v[1] == NULL;
    snprintf(e->text[i], sizeof e->text[i], "%s", v[1] ? v[1] : "");
    e->num[i] = v[2] ? strtoll(v[2], NULL, 10) : -999;
    e->t_ns[i] = v[3] ? strtoll(v[3], NULL, 10) : -999;
    snprintf(e->qualname[i], sizeof e->qualname[i], "%s", v[4] ? v[4] : "");
    e->blob_null[i] = v[5] == NULL;
    return 0;
}

Test(trace, events_in_v_events) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "events.db");
    DrError err = {0};
    DrTrace *t = trace_new(path);
    cr_assert_eq(dr_trace_begin(t, &err), DR_OK, "%s", err.msg);
    int64_t code = dr_trace_add_code(t, "model.py", "Net.forward", 12, &err);
    cr_assert_gt(code, 0, "%s", err.msg);
    DrEvent e1 = {.t_ns = 100, .thread = 5, .kind = "start", .num = 1};
    DrEvent e2 = {.t_ns = 200,
                  .thread = 5,
                  .kind = "callback",
                  .code_id = code,
                  .num = -7,
                  .text = "compiled"};
    DrEvent e3 = {.t_ns = 300,
                  .thread = 6,
                  .kind = "exception",
                  .num = 3,
                  .text = "boom",
                  .payload = "Traceback: ...",
                  .payload_len = 14};
    int64_t s1 = dr_trace_add_event(t, &e1, &err);
    int64_t s2 = dr_trace_add_event(t, &e2, &err);
    int64_t s3 = dr_trace_add_event(t, &e3, &err);
    cr_assert(s1 > 0 && s2 > s1 && s3 > s2, "seqs %lld %lld %lld: %s", (long long)s1, (long long)s2,
              (long long)s3, err.msg);
    cr_assert_eq(dr_trace_commit(t, &err), DR_OK, "%s", err.msg);
    trace_close_ok(t, 1);

    DrTrace *r = trace_open_ok(path);
    TraceEvents ev = {0};
    cr_assert_eq(dr_trace_query(r,
                                "SELECT kind, text, num, t_ns, qualname, blob_id FROM v_events"
                                " ORDER BY seq",
                                trace_collect_events, &ev, &err),
                 DR_OK, "%s", err.msg);
    cr_assert_eq(ev.rows, 3);
    cr_assert_str_eq(ev.kind[0], "start");
    cr_assert(ev.text_null[0], "an event without text has text NULL");
    cr_assert_eq(ev.num[0], 1);
    cr_assert_eq(ev.t_ns[0], 100);
    cr_assert(ev.blob_null[0]);
    cr_assert_str_eq(ev.kind[1], "callback");
    cr_assert_str_eq(ev.text[1], "compiled");
    cr_assert_eq(ev.num[1], -7);
    cr_assert_str_eq(ev.qualname[1], "Net.forward");
    cr_assert_str_eq(ev.kind[2], "exception");
    cr_assert_str_eq(ev.text[2], "boom");
    cr_assert_eq(ev.num[2], 3);
    cr_assert(!ev.blob_null[2], "the payload is stored as a blob");
    ut_expect_q1(r, "SELECT thread FROM v_events WHERE kind = 'exception'", "6");
    ut_expect_q1(r, "SELECT filename FROM v_events WHERE kind = 'callback'", "model.py");

    long long bid = ut_q1_int(r, "SELECT blob_id FROM v_events WHERE kind = 'exception'");
    void *out = NULL;
    size_t len = 0;
    cr_assert_eq(dr_trace_read_blob(r, bid, 0, &out, &len, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(len, 14);
    cr_assert_str_eq(out, "Traceback: ...");
    free(out);
    dr_trace_free(r);
}

/* Guards are stored as templates over their interned source (schema 3);
 * the views give back the text, data and key a guard was written with. */
Test(trace, guard_templates_read_back_as_written) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "guards.db");
    DrError err = {0};
    DrTrace *t = trace_new(path);
    cr_assert_eq(dr_trace_begin(t, &err), DR_OK, "%s", err.msg);
    const char *src = "L['self']._modules['a']";
    DrEvent g[] = {
        /* text and masked text as templates (the source occurs twice) */
        {.kind = "guard",
         .compile_id = "0/1",
         .guard = 1,
         .guard_source = src,
         .guard_location = "m.py:3 in f",
         .guard_text = "ID_MATCH: id(\x01) == 77 or \x01",
         .guard_masked = "ID_MATCH: id(\x01) == # or \x01"},
        /* plain text, no source, no location, no key */
        {.kind = "guard", .compile_id = "0/1", .guard = 1, .text = "GLOBAL_STATE: ok"},
        /* plain text and a stored key (the source does not occur in it) */
        {.kind = "guard",
         .guard = 1,
         .guard_source = "G['x']",
         .text = "X: 5",
         .key = "guard None X: #"},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        cr_assert_gt(dr_trace_add_event(t, &g[i], &err), 0, "%s", err.msg);
    cr_assert_eq(dr_trace_commit(t, &err), DR_OK, "%s", err.msg);
    trace_close_ok(t, 1);

    DrTrace *r = trace_open_ok(path);
    ut_expect_q1(r, "SELECT count(*) FROM v_guards", "3");
    ut_expect_q1(r,
                 "SELECT guard || '|' || source || '|' || user_location FROM v_guards"
                 " WHERE compile_id = '0/1' AND source IS NOT NULL",
                 "ID_MATCH: id(L['self']._modules['a']) == 77 or L['self']._modules['a']|"
                 "L['self']._modules['a']|m.py:3 in f");
    ut_expect_q1(r, "SELECT key FROM v_canonical WHERE key LIKE 'guard 0/1 ID%'",
                 "guard 0/1 ID_MATCH: id(L['self']._modules['a']) == # or "
                 "L['self']._modules['a']");
    ut_expect_q1(r, "SELECT key FROM v_canonical WHERE key LIKE '%GLOBAL%'",
                 "guard 0/1 GLOBAL_STATE: ok");
    ut_expect_q1(r, "SELECT data FROM v_ev WHERE text = 'GLOBAL_STATE: ok'",
                 "{\"source\":null,\"user_location\":null}");
    ut_expect_q1(r,
                 "SELECT key || '|' || json_extract(data, '$.source') FROM v_ev"
                 " WHERE text = 'X: 5'",
                 "guard None X: #|G['x']");
    /* Stored once: the template, not the long text. */
    ut_expect_q1(r, "SELECT count(*) FROM strings WHERE text LIKE 'ID_MATCH: id(L[%'", "0");
    dr_trace_free(r);
}

Test(trace, blob_round_trip) {
    char path[PATH_MAX], sql[256];
    trace_file(path, sizeof path, "blobs.db");
    DrError err = {0};
    enum { BIG = 1 << 20 };
    char *big = ut_python_text(BIG, 7);
    DrTrace *t = trace_new(path);
    int64_t empty = dr_trace_put_blob(t, "", 0, &err);
    int64_t small = dr_trace_put_blob(t, "x = 1\n", 6, &err);
    int64_t large = dr_trace_put_blob(t, big, BIG, &err);
    cr_assert(empty > 0 && small > 0 && large > 0, "put_blob: %s", err.msg);
    cr_assert(empty != small && small != large);
    trace_close_ok(t, 1);

    DrTrace *r = trace_open_ok(path);
    void *out = NULL;
    size_t len = 99;
    cr_assert_eq(dr_trace_read_blob(r, empty, 0, &out, &len, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(len, 0);
    cr_assert_not_null(out);
    cr_assert_eq(((char *)out)[0], '\0');
    free(out);
    cr_assert_eq(dr_trace_read_blob(r, small, 0, &out, &len, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(len, 6);
    cr_assert_str_eq(out, "x = 1\n");
    free(out);
    cr_assert_eq(dr_trace_read_blob(r, large, 0, &out, &len, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(len, BIG);
    cr_assert(memcmp(out, big, BIG) == 0, "1 MB blob differs after the round trip");
    free(out);
    /* It was stored compressed. */
    snprintf(sql, sizeof sql, "SELECT length(data) FROM blobs WHERE id = %lld", (long long)large);
    long long stored = ut_q1_int(r, sql);
    cr_assert_lt(stored, BIG / 4, "1 MB of text stored in %lld bytes", stored);
    /* A limit below the declared size refuses it. */
    cr_assert_eq(dr_trace_read_blob(r, large, 1000, &out, &len, &err), DR_ERR_BLOB);
    cr_assert_null(out);
    /* And a blob that does not exist is an error naming it. */
    cr_assert_eq(dr_trace_read_blob(r, 424242, 0, &out, &len, &err), DR_ERR_BLOB);
    cr_assert_null(out);
    cr_assert_not_null(strstr(err.msg, "424242"), "%s", err.msg);
    dr_trace_free(r);
    free(big);
}

Test(trace, add_file_in_v_files) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "files.db");
    DrError err = {0};
    char *src = ut_python_text(5000, 3);
    DrTrace *t = trace_new(path);
    cr_assert_eq(dr_trace_add_file(t, "/home/u/demo.py", "script", src, 5000, &err), DR_OK, "%s",
                 err.msg);
    cr_assert_eq(dr_trace_add_file(t, "/home/u/util.py", "source", "pass\n", 5, &err), DR_OK, "%s",
                 err.msg);
    trace_close_ok(t, 1);

    DrTrace *r = trace_open_ok(path);
    cr_assert_eq(ut_count_rows(r, "SELECT * FROM v_files"), 2);
    ut_expect_q1(r, "SELECT path FROM v_files WHERE role = 'script'", "/home/u/demo.py");
    ut_expect_q1(r, "SELECT size FROM v_files WHERE role = 'script'", "5000");
    ut_expect_q1(r, "SELECT role FROM v_files WHERE path = '/home/u/util.py'", "source");
    long long bid = ut_q1_int(r, "SELECT blob_id FROM v_files WHERE role = 'script'");
    void *out = NULL;
    size_t len = 0;
    cr_assert_eq(dr_trace_read_blob(r, bid, 0, &out, &len, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(len, 5000);
    cr_assert(memcmp(out, src, 5000) == 0);
    free(out);
    dr_trace_free(r);
    free(src);
}

Test(trace, frame_count_upsert) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "counts.db");
    DrError err = {0};
    DrTrace *t = trace_new(path);
    int64_t c1 = dr_trace_add_code(t, "model.py", "Net.forward", 10, &err);
    int64_t c2 = dr_trace_add_code(t, "model.py", "Net.helper", 30, &err);
    cr_assert(c1 > 0 && c2 > 0 && c1 != c2, "%s", err.msg);
    cr_assert_eq(dr_trace_set_frame_count(t, c1, 3, 1, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(dr_trace_set_frame_count(t, c2, 1, 0, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(dr_trace_set_frame_count(t, c1, 70, 20, &err), DR_OK, "%s", err.msg);
    trace_close_ok(t, 1);

    DrTrace *r = trace_open_ok(path);
    cr_assert_eq(ut_count_rows(r, "SELECT * FROM v_frame_counts"), 2);
    ut_expect_q1(r, "SELECT calls FROM v_frame_counts WHERE qualname = 'Net.forward'", "70");
    ut_expect_q1(r, "SELECT resumes FROM v_frame_counts WHERE qualname = 'Net.forward'", "20");
    ut_expect_q1(r, "SELECT firstlineno FROM v_frame_counts WHERE qualname = 'Net.forward'", "10");
    ut_expect_q1(r, "SELECT calls FROM v_frame_counts WHERE qualname = 'Net.helper'", "1");
    ut_expect_q1(r, "SELECT filename FROM v_frame_counts WHERE qualname = 'Net.helper'",
                 "model.py");
    dr_trace_free(r);
}

Test(trace, create_refuses_existing_unless_overwrite) {
    char path[PATH_MAX], wal[PATH_MAX + 8];
    trace_file(path, sizeof path, "exists.db");
    trace_write_bytes(path, "precious", 8);
    DrError err = {0};
    DrTrace *t = dr_trace_create(path, 0, &err);
    if (t) dr_trace_free(t);
    cr_assert_null(t, "an existing file was taken over");
    cr_assert_eq(err.code, DR_ERR_IO, "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, path), "%s", err.msg);
    cr_assert_eq(trace_size(path), 8, "the existing file was touched");

    /* A stale WAL beside it must go too, or SQLite would replay it. */
    snprintf(wal, sizeof wal, "%s-wal", path);
    trace_write_bytes(wal, "stale wal junk", 14);
    t = dr_trace_create(path, 1, &err);
    cr_assert_not_null(t, "overwrite: %s", err.msg);
    trace_event(t, 1, "start", 0, NULL);
    trace_close_ok(t, 1);
    cr_assert(!trace_exists(wal));
    DrTrace *r = trace_open_ok(path);
    cr_assert_eq(dr_trace_is_complete(r), 1);
    cr_assert_eq(ut_count_rows(r, "SELECT * FROM v_events"), 1);
    dr_trace_free(r);
}

/* ---- files that are not good traces ------------------------------------ */

Test(trace, open_missing) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "nope.db");
    trace_expect_open_error(path, DR_ERR_MISSING, NULL);
}

Test(trace, open_empty_file) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "empty.db");
    trace_write_bytes(path, "", 0);
    trace_expect_open_error(path, DR_ERR_NOT_SQLITE, NULL);
}

Test(trace, open_text_file) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "script.py");
    const char *text = "import torch\n\n@torch.compile\ndef f(x):\n    return x + 1\n"
                       "print(f(torch.ones(3)))\n"
                       "# padding so the file is longer than an SQLite header...........\n";
    trace_write_bytes(path, text, strlen(text));
    trace_expect_open_error(path, DR_ERR_NOT_SQLITE, NULL);
}

Test(trace, open_plain_sqlite) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "other.db");
    trace_sqlite_exec(path, "CREATE TABLE people(name TEXT); INSERT INTO people VALUES('ada');");
    trace_expect_open_error(path, DR_ERR_NOT_TRACE, NULL);
}

Test(trace, open_too_new) {
    char path[PATH_MAX], sql[64];
    trace_file(path, sizeof path, "future.db");
    trace_make_finished(path, 10);
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", DR_SCHEMA_VERSION + 1);
    trace_sqlite_exec(path, sql);
    trace_expect_open_error(path, DR_ERR_TOO_NEW, "upgrade");
}

Test(trace, open_truncated_half) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "half.db");
    trace_make_finished(path, 2000);
    long long size = trace_size(path);
    cr_assert_gt(size, 16 * 4096, "the trace is too small to be interesting");
    cr_assert_eq(truncate(path, size / 2), 0);
    trace_expect_open_error(path, DR_ERR_CORRUPT, NULL);
}

Test(trace, open_garbage_middle_page) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "garbage.db");
    trace_make_finished(path, 2000);
    long long size = trace_size(path);
    cr_assert_gt(size, 16 * 4096);
    long long page = (size / 4096) / 2;
    unsigned char junk[4096];
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof junk; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        junk[i] = (unsigned char)(s >> 32);
    }
    int fd = open(path, O_WRONLY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(pwrite(fd, junk, sizeof junk, (off_t)(page * 4096)), (ssize_t)sizeof junk);
    close(fd);
    cr_assert_eq(trace_size(path), size, "the size must stay the same");
    /* Opening reads the header and the schema only (it must stay fast on
     * large files): the damage shows, as DR_ERR_CORRUPT naming the file,
     * when a query reaches that page. */
    DrError err = {0};
    DrTrace *t = dr_trace_open(path, &err);
    if (!t) {
        cr_assert_eq(err.code, DR_ERR_CORRUPT, "%s", err.msg);
        return;
    }
    int rc = dr_trace_query(t, "SELECT count(*), sum(length(text)), sum(length(data)) FROM v_ev",
                            NULL, NULL, &err);
    if (rc == DR_OK)
        rc = dr_trace_query(t, "SELECT sum(length(data)) FROM blobs", NULL, NULL, &err);
    dr_trace_free(t);
    cr_assert_eq(rc, DR_ERR_CORRUPT, "reading every row: got %s (%s)", dr_strerror(rc), err.msg);
    cr_assert_not_null(strstr(err.msg, path), "message does not name the file: %s", err.msg);
}

Test(trace, open_first_ten_bytes) {
    char path[PATH_MAX], stub[PATH_MAX];
    trace_file(path, sizeof path, "whole.db");
    trace_file(stub, sizeof stub, "stub.db");
    trace_make_finished(path, 5);
    unsigned char head[10];
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    trace_write_bytes(stub, head, sizeof head);
    trace_expect_open_error(stub, DR_ERR_CORRUPT, NULL);
}

/* Makes a finished trace with three blobs, then replaces blob 2 by bytes. */
static void trace_damage_blob(const char *path, int64_t *victim, int64_t *good,
                              const char *hex_data) {
    DrError err = {0};
    DrTrace *t = trace_new(path);
    int64_t b1 = dr_trace_put_blob(t, "first", 5, &err);
    int64_t b2 = dr_trace_put_blob(t, "second", 6, &err);
    int64_t b3 = dr_trace_put_blob(t, "third", 5, &err);
    cr_assert(b1 > 0 && b2 > 0 && b3 > 0, "%s", err.msg);
    cr_assert_eq(dr_trace_set_meta(t, "argv", "demo.py", &err), DR_OK, "%s", err.msg);
    trace_close_ok(t, 1);
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE blobs SET data = x'%s' WHERE id = %lld", hex_data,
             (long long)b2);
    trace_sqlite_exec(path, sql);
    *victim = b2;
    *good = b3;
}

/* A bad blob is refused by id; the trace stays usable for everything else. */
static void trace_expect_bad_blob(const char *path, int64_t victim, int64_t good) {
    DrError err = {0};
    DrTrace *r = trace_open_ok(path);
    void *out = NULL;
    size_t len = 0;
    cr_assert_eq(dr_trace_read_blob(r, victim, 0, &out, &len, &err), DR_ERR_BLOB, "%s", err.msg);
    cr_assert_null(out);
    char want[64];
    snprintf(want, sizeof want, "blob %lld", (long long)victim);
    cr_assert_not_null(strstr(err.msg, want), "message does not name %s: %s", want, err.msg);
    cr_assert_not_null(strstr(err.msg, path), "message does not name the file: %s", err.msg);

    cr_assert_eq(ut_count_rows(r, "SELECT key, value FROM meta"), 6);
    ut_expect_q1(r, "SELECT value FROM meta WHERE key = 'argv'", "demo.py");
    cr_assert_eq(dr_trace_is_complete(r), 1);
    cr_assert_eq(dr_trace_read_blob(r, good, 0, &out, &len, &err), DR_OK, "%s", err.msg);
    cr_assert_str_eq(out, "third");
    free(out);
    dr_trace_free(r);
}

Test(trace, corrupt_blob_is_reported_by_id) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "badblob.db");
    int64_t victim, good;
    /* zstd codec with a length varint that never ends */
    trace_damage_blob(path, &victim, &good, "01ffffffffffffffffffffff");
    trace_expect_bad_blob(path, victim, good);
}

Test(trace, oversized_blob_is_refused) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "hugeblob.db");
    int64_t victim, good;
    /* raw codec declaring 2^40 bytes (LEB128 80 80 80 80 80 20) with 4 of them */
    trace_damage_blob(path, &victim, &good, "0080808080802061626364");
    trace_expect_bad_blob(path, victim, good);
}

/* ---- a recording cut short ---------------------------------------------- */

Test(trace, incomplete_recording_after_crash) {
    char path[PATH_MAX], wal[PATH_MAX + 8], shm[PATH_MAX + 8];
    trace_file(path, sizeof path, "crashed.db");
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork failed");
    if (pid == 0) {
        /* The child records and dies without closing; no cr_assert here. */
        DrError err = {0};
        DrTrace *t = dr_trace_create(path, 0, &err);
        if (!t) _exit(10);
        for (int batch = 0; batch < 3; batch++) {
            if (dr_trace_begin(t, &err) != DR_OK) _exit(11);
            for (int i = 0; i < 10; i++) {
                DrEvent ev = {.t_ns = batch * 10 + i,
                              .thread = 1,
                              .kind = "committed",
                              .num = batch * 10 + i,
                              .text = "step"};
                if (dr_trace_add_event(t, &ev, &err) <= 0) _exit(12);
            }
            if (dr_trace_commit(t, &err) != DR_OK) _exit(13);
        }
        /* A batch in flight when the process died is lost, not half-written. */
        if (dr_trace_begin(t, &err) != DR_OK) _exit(14);
        DrEvent ev = {.t_ns = 99, .thread = 1, .kind = "uncommitted", .num = 99};
        if (dr_trace_add_event(t, &ev, &err) <= 0) _exit(15);
        _exit(0);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: status %d", status);
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    cr_assert(trace_exists(wal), "the crashed writer should leave its WAL");
    cr_assert(trace_exists(shm), "the crashed writer should leave its -shm");

    DrTrace *r = trace_open_ok(path);
    cr_assert_eq(dr_trace_is_complete(r), 0);
    cr_assert_eq(ut_q1_int(r, "SELECT count(*) FROM v_events WHERE kind = 'committed'"), 30);
    cr_assert_eq(ut_count_rows(r, "SELECT * FROM v_events WHERE kind = 'uncommitted'"), 0);
    cr_assert_eq(ut_q1_int(r, "SELECT max(num) FROM v_events"), 29);
    ut_expect_meta(r, "writer_version", DR_VERSION);
    dr_trace_free(r);
}

/* ---- dictionaries ------------------------------------------------------- */

/* One short Python-like snippet, the kind of text a trace stores many of. */
static size_t trace_snippet(char *buf, size_t cap, uint64_t *seed) {
    static const char *ops[] = {"add", "mul", "relu", "matmul", "cat", "sigmoid", "view"};
    static const char *names[] = {"forward", "helper", "loss_fn", "step", "block"};
    size_t n = 0;
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    uint64_t r = *seed;
    n += (size_t)snprintf(buf + n, cap - n, "def %s_%u(self, x: torch.Tensor):\n", names[r % 5],
                          (unsigned)(r >> 20) % 100);
    for (int k = 0; k < 1 + (int)((r >> 8) % 3); k++)
        n += (size_t)snprintf(buf + n, cap - n, "    x = torch.%s(x, %u)\n",
                              ops[(r >> (k * 3)) % 7], (unsigned)(r >> (30 + k * 5)) % 64);
    n += (size_t)snprintf(buf + n, cap - n, "    return x\n");
    return n;
}

Test(trace, dictionary_round_trip) {
    enum { NSAMPLES = 400, DICTCAP = 4096, NBLOBS = 20 };
    char path[PATH_MAX];
    trace_file(path, sizeof path, "dict.db");
    char *samples = malloc((size_t)NSAMPLES * 256);
    size_t *sizes = malloc(NSAMPLES * sizeof *sizes);
    void *dict = malloc(DICTCAP);
    cr_assert(samples && sizes && dict);
    uint64_t seed = 12345;
    size_t off = 0;
    for (int i = 0; i < NSAMPLES; i++) {
        sizes[i] = trace_snippet(samples + off, 256, &seed);
        off += sizes[i];
    }
    size_t dlen = ZDICT_trainFromBuffer(dict, DICTCAP, samples, sizes, NSAMPLES);
    cr_assert(!ZDICT_isError(dlen), "training: %s", ZDICT_getErrorName(dlen));

    DrError err = {0};
    DrTrace *t = trace_new(path);
    cr_assert_eq(dr_trace_use_dict(t, dict, dlen, &err), DR_OK, "%s", err.msg);
    char text[NBLOBS][512];
    size_t tlen[NBLOBS];
    int64_t ids[NBLOBS];
    seed = 999; /* texts the dictionary was not trained on */
    for (int i = 0; i < NBLOBS; i++) {
        tlen[i] = trace_snippet(text[i], 256, &seed);
        if (i % 2) tlen[i] += trace_snippet(text[i] + tlen[i], 256, &seed);
        ids[i] = dr_trace_put_blob(t, text[i], tlen[i], &err);
        cr_assert_gt(ids[i], 0, "%s", err.msg);
    }
    int64_t tiny = dr_trace_put_blob(t, "x", 1, &err); /* too short: raw even with a dict */
    cr_assert_gt(tiny, 0, "%s", err.msg);
    trace_close_ok(t, 1);

    DrTrace *r = trace_open_ok(path);
    char sql[128];
    cr_assert_eq(ut_q1_int(r, "SELECT count(*) FROM dicts"), 1);
    /* The dictionary is stored as a blob itself: codec byte, then its length. */
    cr_assert_leq(ut_q1_int(r, "SELECT length(data) FROM dicts"), (long long)dlen + 11);
    cr_assert_gt(ut_q1_int(r, "SELECT length(data) FROM dicts"), 0);
    snprintf(sql, sizeof sql, "SELECT hex(substr(data, 1, 1)) FROM blobs WHERE id = %lld",
             (long long)ids[0]);
    ut_expect_q1(r, sql, "02"); /* DR_CODEC_ZSTD_DICT: the dictionary was used */
    for (int i = 0; i < NBLOBS; i++) {
        void *out = NULL;
        size_t len = 0;
        cr_assert_eq(dr_trace_read_blob(r, ids[i], 0, &out, &len, &err), DR_OK, "blob %d: %s", i,
                     err.msg);
        cr_assert_eq(len, tlen[i]);
        cr_assert(memcmp(out, text[i], len) == 0, "blob %d differs", i);
        free(out);
    }
    void *out = NULL;
    size_t len = 0;
    cr_assert_eq(dr_trace_read_blob(r, tiny, 0, &out, &len, &err), DR_OK, "%s", err.msg);
    cr_assert_str_eq(out, "x");
    free(out);
    dr_trace_free(r);
    free(samples);
    free(sizes);
    free(dict);
}

/* The writer keeps the number of events of each kind (event_counts), over
 * several transactions, so readers need not count the events table. */
Test(trace, event_counts_follow_the_events) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "counts.db");
    DrError err = {0};
    DrTrace *t = trace_new(path);
    static const char *const kinds[] = {"guard", "compile", "graph_break"};
    for (int batch = 0; batch < 5; batch++) {
        cr_assert_eq(dr_trace_begin(t, &err), DR_OK, "%s", err.msg);
        for (int i = 0; i < 100 + batch; i++) {
            DrEvent ev = {.t_ns = i, .thread = 1, .kind = kinds[(i * (batch + 1)) % 3], .num = i};
            cr_assert_gt(dr_trace_add_event(t, &ev, &err), 0, "%s", err.msg);
        }
        cr_assert_eq(dr_trace_commit(t, &err), DR_OK, "%s", err.msg);
    }
    trace_close_ok(t, 1);
    DrTrace *r = dr_trace_open(path, &err);
    cr_assert_not_null(r, "%s", err.msg);
    char *diff = NULL;
    cr_assert_eq(dr_trace_query_text(r,
                                     "SELECT count(*) FROM (SELECT k.text AS kind, count(*) AS n "
                                     "FROM events e JOIN strings k ON k.id = e.kind_id GROUP BY "
                                     "e.kind_id EXCEPT SELECT kind, n FROM v_event_counts)",
                                     &diff, &err),
                 DR_OK, "%s", err.msg);
    cr_assert_str_eq(diff, "0");
    free(diff);
    char *total = NULL;
    dr_trace_query_text(r, "SELECT sum(n) FROM v_event_counts", &total, &err);
    cr_assert_str_eq(total, "510");
    free(total);
    dr_trace_free(r);
}

/* A blob id that a row refers to but the blobs table lacks (a hostile or
 * damaged trace): a clean error naming the trace and the blob. */
Test(trace, missing_blob_is_reported_by_id) {
    char path[PATH_MAX];
    trace_file(path, sizeof path, "noblob.db");
    trace_make_finished(path, 20);
    DrError err = {0};
    DrTrace *r = trace_open_ok(path);
    void *out = NULL;
    size_t len = 0;
    int rc = dr_trace_read_blob(r, 987654, 0, &out, &len, &err);
    cr_assert_eq(rc, DR_ERR_BLOB, "got %s: %s", dr_strerror(rc), err.msg);
    cr_assert_null(out);
    cr_assert_not_null(strstr(err.msg, "987654"), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, path), "%s", err.msg);
    dr_trace_free(r);
}
