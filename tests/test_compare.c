#define _GNU_SOURCE 1
/* test_compare.c -- end-to-end tests of `dynrec diff` and `dynrec rerun`.
 *
 * Real torch, the real binary: each example is recorded twice, in two
 * different directories, and the two traces must diff identical; the first
 * is re-run with `dynrec rerun`, which must report identical too.  Then the
 * what-ifs: an edited script, --set, --from-trace with and without --trust,
 * a trace whose stored file name tries to escape, and bad input files; config
 * keys that only one of two torch versions has (a note, not a divergence),
 * and --ignore on replay and rerun. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2e_util.h"

TestSuite(compare, .init = e2e_setup, .fini = e2e_teardown, .timeout = 240);

/* Runs a shell command line in the test's directory (to record from
 * another working directory). */
static E2eProc *sh(const char *cmd, int timeout_ms) {
    return e2e_run_in((const char *[]){"/bin/sh", "-c", cmd, NULL}, NULL, timeout_ms);
}

/* `dynrec run -q -o <trace> <script>` with dir (a subdirectory of the
 * test's directory) as the working directory; the run must exit 0. */
static void record_in(const char *dir, const char *script, const char *trace) {
    E2eProc *p = sh(e2e_fmt("cd '%s' && exec '%s' run -q -o '%s' '%s' >/dev/null", dir, e2e_bin,
                            e2e_path(trace), script),
                    E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, e2e_fmt("recording %s in %s: %s", script, dir, p->err.data));
}

static void copy_example_to(const char *name, const char *dir) {
    mkdir(e2e_path(dir), 0755);
    size_t len = 0;
    char *src = e2e_slurp(e2e_example_path(name), &len);
    cr_assert_not_null(src, "examples/%s is missing", name);
    e2e_write_file(e2e_path(e2e_fmt("%s/%s", dir, name)), src, len);
}

static E2eProc *dynrec(const char *const *args) {
    const char *argv[16] = {e2e_bin};
    for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = args[i];
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* Two recordings in two directories diff identical, and the first reruns
 * identical (the rerun's own trace is the third recording). */
static void example_is_deterministic_(int rerun, const char *name) {
    copy_example_to(name, "a");
    copy_example_to(name, "b");
    record_in("a", name, "a.db");
    record_in("b", name, "b.db");
    E2eProc *d = dynrec((const char *[]){"diff", "a.db", "b.db", NULL});
    cr_assert_eq(d->status, 0, "%s: two recordings differ:\n%s%s", name, d->out.data, d->err.data);
    cr_assert(strncmp(d->out.data, "identical: ", 11) == 0, "%s:\n%s", name, d->out.data);
    if (!rerun) return;
    E2eProc *r = dynrec((const char *[]){"rerun", "-o", "r.db", "a.db", NULL});
    cr_assert_eq(r->status, 0, "%s: the rerun differs:\n%s%s", name, r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->out.data, "\nidentical: "), "%s:\n%s", name, r->out.data);
    DrTrace *t = e2e_open(e2e_path("r.db"));
    cr_assert_str_eq(e2e_meta(t, "rerun_of"), e2e_path("a.db"));
    DrTrace *ta = e2e_open(e2e_path("a.db"));
    cr_assert_str_eq(e2e_meta(t, "seed.random"), e2e_meta(ta, "seed.random"));
    cr_assert_str_eq(e2e_meta(t, "seed.numpy"), e2e_meta(ta, "seed.numpy"));
    cr_assert_str_eq(e2e_meta(t, "hash_seed"), e2e_meta(ta, "hash_seed"));
}

static void example_is_deterministic(const char *name) { example_is_deterministic_(1, name); }

Test(compare, quickstart_is_deterministic) { example_is_deterministic("quickstart.py"); }
Test(compare, shape_recompiles_is_deterministic) {
    example_is_deterministic("shape_recompiles.py");
}
Test(compare, two_threads_is_deterministic) { example_is_deterministic("two_threads.py"); }
Test(compare, graph_breaks_is_deterministic) { example_is_deterministic("graph_breaks.py"); }
Test(compare, dynamic_shapes_is_deterministic) { example_is_deterministic("dynamic_shapes.py"); }
Test(compare, hot_loop_is_deterministic) { example_is_deterministic("hot_loop.py"); }
Test(compare, closure_cell_is_deterministic) { example_is_deterministic("closure_cell.py"); }
Test(compare, cond_side_effect_is_deterministic) {
    example_is_deterministic("cond_side_effect.py");
}
Test(compare, suppressed_error_is_deterministic) {
    example_is_deterministic("suppressed_error.py");
}
Test(compare, backend_raises_is_deterministic) { example_is_deterministic("backend_raises.py"); }
/* Three inductor runs do not fit the suite's timeout under ASan (whose
 * suites must share one timeout): there the rerun is left out. */
Test(compare, inductor_model_is_deterministic) {
    example_is_deterministic_(e2e_asan ? 0 : 1, "inductor_model.py");
}

Test(compare, edited_script_reruns_different_naming_the_compile_and_guards) {
    copy_example_to("shape_recompiles.py", "a");
    record_in("a", "shape_recompiles.py", "a.db");
    /* The third size becomes 7: compile 0/2 now guards on a size of 7. */
    char *path = e2e_path("a/shape_recompiles.py");
    char *src = e2e_slurp(path, NULL);
    char *at = strstr(src, "(2, 3, 4, 5)");
    cr_assert_not_null(at);
    memcpy(at, "(2, 3, 7, 5)", 12);
    e2e_write_file(path, src, strlen(src));
    E2eProc *r = dynrec((const char *[]){"rerun", "-o", "r.db", "a.db", NULL});
    cr_assert_eq(r->status, 256, "exit %d:\n%s%s", r->status, r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->err.data, "shape_recompiles.py changed since it was recorded"),
                       "%s", r->err.data);
    cr_assert_not_null(strstr(r->err.data, "(2, 3, 7, 5)"), "no changed line:\n%s", r->err.data);
    cr_assert_not_null(strstr(r->out.data, "first divergence in guards"), "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "compile: 0/2 in a, 0/2 in b"), "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "size=[4]"), "removed guard not named:\n%s",
                       r->out.data);
    cr_assert_not_null(strstr(r->out.data, "size=[7]"), "added guard not named:\n%s", r->out.data);
    /* The program prints its sizes: its own output changed too. */
    cr_assert_not_null(strstr(r->out.data, "the program's own output differs"), "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "the program's stdout differs from line 7"), "%s",
                       r->out.data);
    /* The same through diff --json. */
    E2eProc *j = dynrec((const char *[]){"diff", "--json", "a.db", "r.db", NULL});
    cr_assert_eq(j->status, 256);
    cr_assert_not_null(strstr(j->out.data, "\"identical\": false"));
    cr_assert_not_null(strstr(j->out.data, "\"category\": \"guards\""), "%s", j->out.data);
    /* Ignoring guards, guard failures and the printed sizes leaves the graphs,
     * which match. */
    E2eProc *ig = dynrec(
        (const char *[]){"diff", "--ignore", "guards,guard_failures,output", "a.db", "r.db", NULL});
    cr_assert_eq(ig->status, 0, "%s", ig->out.data);
}

/* The text a trace kept of one stream ("<stdout>" or "<stderr>"). */
static char *kept_output(DrTrace *t, const char *name, size_t *len) {
    char *blob = e2e_sql(t, "SELECT blob_id FROM v_files WHERE path = %Q", name);
    cr_assert_not_null(blob, "no %s in the trace", name);
    void *data = NULL;
    DrError err = {0};
    cr_assert_eq(dr_trace_read_blob(t, atoll(blob), 0, &data, len, &err), DR_OK, "%s", err.msg);
    return e2e_own(data);
}

Test(compare, run_keeps_the_programs_output_exactly) {
    e2e_copy_script("both_streams.py");
    E2eProc *dr =
        e2e_same_as_python((const char *[]){"both_streams.py", NULL}, NULL, E2E_TIMEOUT_MS);
    DrTrace *t = e2e_open(e2e_path("T.db"));
    size_t n = 0;
    char *out = kept_output(t, "<stdout>", &n);
    cr_assert_eq(n, dr->out.len);
    cr_assert_eq(memcmp(out, dr->out.data, n), 0, "kept:\n%.*s", (int)n, out);
    char *err = kept_output(t, "<stderr>", &n);
    cr_assert_eq(n, dr->err.len);
    cr_assert_eq(memcmp(err, dr->err.data, n), 0, "kept:\n%.*s", (int)n, err);
    cr_assert_str_eq(e2e_meta(t, "output.stdout_bytes"), e2e_fmt("%zu", dr->out.len));
    cr_assert_str_eq(e2e_meta(t, "output.stdout_complete"), "1");
    /* A second recording compares identical, output included. */
    E2eProc *again =
        e2e_record("T2.db", (const char *[]){"both_streams.py", NULL}, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(again, 0, "second recording");
    E2eProc *d = dynrec((const char *[]){"diff", "T.db", "T2.db", NULL});
    cr_assert_eq(d->status, 0, "%s", d->out.data);
}

Test(compare, set_automatic_dynamic_shapes_false_adds_compiles) {
    copy_example_to("quickstart.py", "a");
    record_in("a", "quickstart.py", "a.db");
    E2eProc *r = dynrec((const char *[]){"rerun", "-o", "r.db", "--set",
                                         "automatic_dynamic_shapes=False", "a.db", NULL});
    cr_assert_eq(r->status, 256, "exit %d:\n%s%s", r->status, r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->out.data, "--set automatic_dynamic_shapes=False"), "%s",
                       r->out.data);
    cr_assert_not_null(strstr(r->out.data, "compile #2 of step only in b"), "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "size=[32, 32]"), "the extra compile's guards:\n%s",
                       r->out.data);
    DrTrace *t = e2e_open(e2e_path("r.db"));
    cr_assert_str_eq(e2e_meta(t, "set.automatic_dynamic_shapes"), "False");
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles"), 3);
    /* An unknown name is a usage error naming the close match, before running. */
    E2eProc *bad = dynrec((const char *[]){"rerun", "-o", "x.db", "--set",
                                           "automatic_dynamic_shape=False", "a.db", NULL});
    cr_assert_eq(bad->status, 2 << 8, "%s", bad->err.data);
    cr_assert_not_null(strstr(bad->err.data, "automatic_dynamic_shapes"), "%s", bad->err.data);
    cr_assert_neq(access(e2e_path("x.db"), F_OK), 0);
}

Test(compare, from_trace_needs_trust_and_runs_stored_sources) {
    copy_example_to("graph_breaks.py", "a");
    record_in("a", "graph_breaks.py", "a.db");
    E2eProc *no = dynrec((const char *[]){"rerun", "--from-trace", "-o", "r.db", "a.db", NULL});
    cr_assert_eq(no->status, 77 << 8, "%s", no->err.data);
    cr_assert_not_null(strstr(no->err.data, "--trust"), "%s", no->err.data);
    cr_assert_neq(access(e2e_path("r.db"), F_OK), 0, "something ran without --trust");
    /* Without the script and without --from-trace: a clear error. */
    cr_assert_eq(unlink(e2e_path("a/graph_breaks.py")), 0);
    E2eProc *gone = dynrec((const char *[]){"rerun", "-o", "r.db", "a.db", NULL});
    cr_assert_eq(gone->status, 66 << 8, "%s", gone->err.data);
    cr_assert_not_null(strstr(gone->err.data, "--from-trace --trust"), "%s", gone->err.data);
    E2eProc *yes =
        dynrec((const char *[]){"rerun", "--from-trace", "--trust", "-o", "r.db", "a.db", NULL});
    cr_assert_eq(yes->status, 0, "%s%s", yes->out.data, yes->err.data);
    cr_assert_not_null(strstr(yes->out.data, "identical: "), "%s", yes->out.data);
}

Test(compare, from_trace_refuses_a_name_that_escapes) {
    copy_example_to("shape_recompiles.py", "a");
    record_in("a", "shape_recompiles.py", "a.db");
    size_t len = 0;
    char *data = e2e_slurp(e2e_path("a.db"), &len);
    e2e_write_file(e2e_path("evil.db"), data, len);
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(e2e_path("evil.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db,
                              "INSERT INTO strings(id, text) VALUES"
                              " ((SELECT max(id) + 1 FROM strings), '../../escaped.py');"
                              "UPDATE files SET path_id = (SELECT max(id) FROM strings)"
                              " WHERE rowid = (SELECT min(rowid) FROM files);",
                              NULL, NULL, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    E2eProc *r =
        dynrec((const char *[]){"rerun", "--from-trace", "--trust", "-o", "r.db", "evil.db", NULL});
    cr_assert_eq(r->status, 65 << 8, "exit %d: %s", r->status, r->err.data);
    cr_assert_not_null(strstr(r->err.data, "escape"), "%s", r->err.data);
    cr_assert_neq(access(e2e_path("r.db"), F_OK), 0);
    cr_assert_neq(access(e2e_path("../escaped.py"), F_OK), 0);
}

Test(compare, diff_exit_codes) {
    copy_example_to("shape_recompiles.py", "a");
    copy_example_to("graph_breaks.py", "a");
    record_in("a", "shape_recompiles.py", "s.db");
    record_in("a", "graph_breaks.py", "g.db");
    E2eProc *same = dynrec((const char *[]){"diff", "s.db", "s.db", NULL});
    cr_assert_eq(same->status, 0, "%s", same->out.data);
    cr_assert(strncmp(same->out.data, "identical: 10 frames, 4 compiles, 40 guards", 43) == 0, "%s",
              same->out.data);
    E2eProc *other = dynrec((const char *[]){"diff", "--context", "2", "s.db", "g.db", NULL});
    cr_assert_eq(other->status, 1 << 8, "%s", other->out.data);
    cr_assert_not_null(strstr(other->out.data, "different: first divergence"));
    cr_assert_not_null(strstr(other->out.data, "summary:"));

    const char text[] = "not a trace\n";
    e2e_write_file(e2e_path("junk.db"), text, sizeof text - 1);
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(e2e_path("foreign.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    size_t len = 0;
    char *good = e2e_slurp(e2e_path("s.db"), &len);
    e2e_write_file(e2e_path("half.db"), good, len / 2);
    const char *bad[] = {"missing.db", "junk.db", "foreign.db", "half.db"};
    for (size_t i = 0; i < 4; i++) {
        E2eProc *p = dynrec((const char *[]){"diff", "s.db", bad[i], NULL});
        cr_assert_eq(p->status, 65 << 8, "%s: exit %d %s", bad[i], p->status, p->err.data);
        cr_assert_not_null(strstr(p->err.data, bad[i]), "%s", p->err.data);
        cr_assert_str_eq(p->out.data, "");
        E2eProc *q = dynrec((const char *[]){"rerun", bad[i], NULL});
        cr_assert_eq(q->status, 65 << 8, "rerun %s: exit %d %s", bad[i], q->status, q->err.data);
    }
    const char *const usage[][4] = {{"diff"},
                                    {"diff", "s.db"},
                                    {"diff", "--ignore", "nope", "s.db"},
                                    {"diff", "--frob"},
                                    {"rerun"}};
    for (size_t i = 0; i < sizeof usage / sizeof *usage; i++) {
        E2eProc *p = dynrec(usage[i]);
        cr_assert_eq(p->status, 2 << 8, "%s %s: exit %d", usage[i][0],
                     usage[i][1] ? usage[i][1] : "", p->status);
    }
    for (int i = 0; i < 2; i++) {
        E2eProc *h = dynrec((const char *[]){i ? "rerun" : "diff", "--help", NULL});
        cr_assert_eq(h->status, 0);
        cr_assert_not_null(strstr(h->out.data, "exit status"));
    }
}

/* A trace written by the first schema (kept in tests/data) still compares. */
Test(compare, a_version_1_trace_still_compares) {
    char *old = e2e_fmt("%s/../tests/data/v1-shape_recompiles.db", e2e_examples);
    E2eProc *p = dynrec((const char *[]){"diff", old, old, NULL});
    cr_assert_eq(p->status, 0, "%s%s", p->out.data, p->err.data);
    cr_assert(strncmp(p->out.data, "identical: 10 frames, 4 compiles, 40 guards", 43) == 0, "%s",
              p->out.data);
    E2eProc *j = dynrec((const char *[]){"diff", "--json", old, old, NULL});
    cr_assert_not_null(strstr(j->out.data, "\"identical\": true"), "%s", j->out.data);
}

/* A trace written by schema 2 (dynrec 0.3.0, guards as JSON strings)
 * compares identical to a fresh schema-3 recording of the same example:
 * the guard templates read back as the texts, sources and keys they were. */
Test(compare, a_version_2_trace_matches_a_fresh_recording) {
    char *old = e2e_fmt("%s/../tests/data/v2-shape_recompiles.db", e2e_examples);
    copy_example_to("shape_recompiles.py", "a");
    record_in("a", "shape_recompiles.py", "new.db");
    E2eProc *p = dynrec((const char *[]){"diff", old, "new.db", NULL});
    cr_assert_eq(p->status, 0, "%s%s", p->out.data, p->err.data);
    cr_assert(strncmp(p->out.data, "identical: 10 frames, 4 compiles, 40 guards", 43) == 0, "%s",
              p->out.data);
}

Test(compare, rerun_refuses_another_python_and_survives_a_gone_cwd) {
    /* Recorded from directory c with the script's absolute path; then c is
     * removed: the rerun says so and runs in a fresh temporary directory. */
    copy_example_to("shape_recompiles.py", "a");
    mkdir(e2e_path("c"), 0755);
    record_in("c", e2e_path("a/shape_recompiles.py"), "t.db");
    cr_assert_eq(rmdir(e2e_path("c")), 0);
    E2eProc *r = dynrec((const char *[]){"rerun", "-o", "r.db", "t.db", NULL});
    cr_assert_eq(r->status, 0, "%s%s", r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->err.data, "is gone; running in"), "%s", r->err.data);

    size_t len = 0;
    char *data = e2e_slurp(e2e_path("t.db"), &len);
    e2e_write_file(e2e_path("old.db"), data, len);
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(e2e_path("old.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db,
                              "UPDATE meta SET value = '2.7.18 (default)'"
                              " WHERE key = 'python_version'",
                              NULL, NULL, NULL),
                 SQLITE_OK);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    E2eProc *p = dynrec((const char *[]){"rerun", "-o", "p.db", "old.db", NULL});
    cr_assert_eq(p->status, 69 << 8, "exit %d: %s", p->status, p->err.data);
    cr_assert_not_null(strstr(p->err.data, "Python 2.7"), "%s", p->err.data);
    cr_assert_neq(access(e2e_path("p.db"), F_OK), 0, "something ran");

    /* A recording made on another torch: the report starts by saying so. */
    e2e_write_file(e2e_path("tv.db"), data, len);
    cr_assert_eq(sqlite3_open(e2e_path("tv.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "UPDATE meta SET value = '2.12.0' WHERE key = 'torch_version'",
                              NULL, NULL, NULL),
                 SQLITE_OK);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    mkdir(e2e_path("c"), 0755);
    E2eProc *v = dynrec((const char *[]){"rerun", "-o", "v.db", "tv.db", NULL});
    cr_assert_eq(v->status, 0, "%s%s", v->out.data, v->err.data);
    cr_assert_not_null(strstr(v->out.data, "recorded on torch 2.12.0, re-run on 2.13.0"), "%s",
                       v->out.data);
}

/* A copy of trace from with sql applied to it. */
static void edited_copy(const char *from, const char *to, const char *sql) {
    size_t len = 0;
    char *data = e2e_slurp(e2e_path(from), &len);
    cr_assert_not_null(data, "%s is missing", from);
    e2e_write_file(e2e_path(to), data, len);
    sqlite3 *db = NULL;
    char *msg = NULL;
    cr_assert_eq(sqlite3_open(e2e_path(to), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", to, msg);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
}

/* The string id of the data of the config at start (the 'initial' config
 * event), for UPDATE strings ... WHERE id = INITIAL_CONFIG. */
#define INITIAL_CONFIG                                                                             \
    "(SELECT e.data_id FROM events e JOIN strings k ON k.id = e.kind_id"                           \
    " JOIN strings t ON t.id = e.text_id WHERE k.text = 'config' AND t.text = 'initial'"           \
    " AND e.compile_id IS NULL)"
/* torch 2.14 renamed 2.13's _shapes_spec and added a key. */
#define RENAME_AND_ADD                                                                             \
    "UPDATE strings SET text = json_insert(json_remove(text, '$._shapes_spec'),"                   \
    " '$._dynamic_shapes_spec', json_extract(text, '$._shapes_spec'),"                             \
    " '$.dynrec_test_new_key', 'True') WHERE id = " INITIAL_CONFIG ";"
#define TORCH_2_14 "UPDATE meta SET value = '2.14.1' WHERE key = 'torch_version';"

/* Adds a config-change event with data json to compile 0/0 (as Dynamo's
 * config_changes records one when the script changes a setting). */
static char *config_change(const char *json) {
    return e2e_fmt("INSERT INTO strings(text) VALUES('%s');"
                   " INSERT INTO events(seq, t_ns, thread, kind_id, compile_id, num, text_id,"
                   " data_id) SELECT (SELECT max(seq) + 1 FROM events), e.t_ns, e.thread,"
                   " e.kind_id, (SELECT id FROM strings WHERE text = '0/0'), 2, e.text_id,"
                   " (SELECT max(id) FROM strings WHERE text = '%s') FROM events e"
                   " WHERE e.data_id = " INITIAL_CONFIG ";",
                   json, json);
}

/* Config keys that only one of two torch versions has are a note, not a
 * divergence; a changed value of a key both have still diverges, and on
 * the same torch version a key on one side only still diverges. */
Test(compare, config_keys_of_one_torch_version_are_a_note) {
    copy_example_to("shape_recompiles.py", "a");
    record_in("a", "shape_recompiles.py", "s.db");
    DrTrace *t = e2e_open(e2e_path("s.db"));
    cr_assert_not_null(e2e_sql(t, "SELECT json_type(text, '$._shapes_spec') FROM strings"
                                  " WHERE id = " INITIAL_CONFIG),
                       "the recorded config has no _shapes_spec: pick another key");
    cr_assert_null(
        e2e_sql(t, "SELECT 1 FROM v_ev WHERE kind = 'config' AND compile_id IS NOT NULL"));
    char *torch = e2e_meta(t, "torch_version");
    cr_assert(torch && strcmp(torch, "2.14.1") != 0);
    e2e_close(t);

    edited_copy("s.db", "b.db", TORCH_2_14 RENAME_AND_ADD);
    E2eProc *p = dynrec((const char *[]){"diff", "s.db", "b.db", NULL});
    cr_assert_eq(p->status, 0, "%s%s", p->out.data, p->err.data);
    cr_assert(strncmp(p->out.data, "identical: ", 11) == 0, "%s", p->out.data);
    cr_assert_not_null(
        strstr(p->out.data, e2e_fmt("note: 1 Dynamo config key only in a (torch %s)", torch)), "%s",
        p->out.data);
    cr_assert_not_null(strstr(p->out.data, "not compared: _shapes_spec\n"), "%s", p->out.data);
    cr_assert_not_null(strstr(p->out.data, "note: 2 Dynamo config keys only in b (torch 2.14.1)"),
                       "%s", p->out.data);
    cr_assert_not_null(strstr(p->out.data, "not compared: _dynamic_shapes_spec, "
                                           "dynrec_test_new_key\n"),
                       "%s", p->out.data);
    E2eProc *j = dynrec((const char *[]){"diff", "--json", "s.db", "b.db", NULL});
    cr_assert_eq(j->status, 0, "%s", j->out.data);
    cr_assert_not_null(strstr(j->out.data, "\"identical\": true"), "%s", j->out.data);
    cr_assert_not_null(strstr(j->out.data, "\"config_keys_not_compared\": {\"only_in_a\": "
                                           "[\"_shapes_spec\"], \"only_in_b\": "
                                           "[\"_dynamic_shapes_spec\", \"dynrec_test_new_key\"], "
                                           "\"not_set_by_replay\": [], \"not_recorded_by_a\": "
                                           "[], \"not_recorded_by_b\": []}"),
                       "%s", j->out.data);
    cr_assert_not_null(strstr(j->out.data, "\"notes\": [\"torch "), "%s", j->out.data);
    cr_assert_not_null(strstr(j->out.data, "only in b (torch 2.14.1)"), "%s", j->out.data);

    /* The same edit on the same torch: the config differs. */
    edited_copy("s.db", "c.db", RENAME_AND_ADD);
    p = dynrec((const char *[]){"diff", "s.db", "c.db", NULL});
    cr_assert_eq(p->status, 1 << 8, "%s%s", p->out.data, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "different: first divergence in config"), "%s",
                       p->out.data);
    cr_assert_not_null(strstr(p->out.data, "+ dynrec_test_new_key = True"), "%s", p->out.data);
    cr_assert_null(strstr(p->out.data, "not compared"), "%s", p->out.data);

    /* Across versions, a key both have with another value differs. */
    edited_copy("s.db", "v.db",
                TORCH_2_14 RENAME_AND_ADD
                "UPDATE strings SET text = json_set(text, '$.recompile_limit', '1234')"
                " WHERE id = " INITIAL_CONFIG ";");
    p = dynrec((const char *[]){"diff", "s.db", "v.db", NULL});
    cr_assert_eq(p->status, 1 << 8, "%s%s", p->out.data, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "different: first divergence in config"), "%s",
                       p->out.data);
    cr_assert_not_null(strstr(p->out.data, "+ recompile_limit = 1234"), "%s", p->out.data);
    cr_assert_null(strstr(p->out.data, "_shapes_spec ="), "%s", p->out.data);

    /* A compile's config changes: the key of one version is left out, a
     * shared key is compared. */
    edited_copy("s.db", "s2.db",
                config_change("{\"_shapes_spec\": \"None\", \"recompile_limit\": \"16\"}"));
    edited_copy("b.db", "b2.db",
                config_change("{\"recompile_limit\": \"16\", \"_dynamic_shapes_spec\": \"None\"}"));
    edited_copy("b.db", "b3.db",
                config_change("{\"_dynamic_shapes_spec\": \"None\", \"recompile_limit\": \"17\"}"));
    p = dynrec((const char *[]){"diff", "s2.db", "b2.db", NULL});
    cr_assert_eq(p->status, 0, "%s%s", p->out.data, p->err.data);
    p = dynrec((const char *[]){"diff", "s2.db", "b3.db", NULL});
    cr_assert_eq(p->status, 1 << 8, "%s%s", p->out.data, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "config changes of compile #0"), "%s", p->out.data);
    cr_assert_not_null(strstr(p->out.data, "b: {\"recompile_limit\": \"17\"}"), "%s", p->out.data);
    edited_copy("s.db", "s3.db", config_change("{\"_dynamic_shapes_spec\": \"None\"}"));
    p = dynrec((const char *[]){"diff", "s2.db", "s3.db", NULL});
    cr_assert_eq(p->status, 1 << 8, "same torch: %s%s", p->out.data, p->err.data);
}

/* A trace of an older dynrec has no fx.* keys (the ShapeEnv's config, from
 * 0.7.4): against a new one on the same torch they are a note, not a
 * divergence; once both sides have some, an fx key on one side differs. */
Test(compare, config_group_an_older_dynrec_did_not_record_is_a_note) {
    copy_example_to("shape_recompiles.py", "a");
    record_in("a", "shape_recompiles.py", "s.db");
    DrTrace *t = e2e_open(e2e_path("s.db"));
    long long nfx = e2e_sql_int(
        t, "SELECT count(*) FROM strings, json_each(text) WHERE strings.id = " INITIAL_CONFIG
           " AND key LIKE 'fx.%'");
    cr_assert_gt(nfx, 5, "the recorded config has no fx.* keys");
    e2e_close(t);
    /* What an older dynrec wrote: the config events without fx.* keys. */
    const char *strip = "UPDATE strings SET text = (SELECT json_group_object(key, value) FROM "
                        "json_each(text) WHERE key NOT LIKE 'fx.%') WHERE id IN (SELECT "
                        "e.data_id FROM events e JOIN strings k ON k.id = e.kind_id WHERE "
                        "k.text = 'config');";
    edited_copy("s.db", "old.db", strip);
    E2eProc *p = dynrec((const char *[]){"diff", "old.db", "s.db", NULL});
    cr_assert_eq(p->status, 0, "%s%s", p->out.data, p->err.data);
    cr_assert(strncmp(p->out.data, "identical: ", 11) == 0, "%s", p->out.data);
    cr_assert_not_null(strstr(p->out.data, e2e_fmt("note: %lld config keys only in b, which the "
                                                   "dynrec that wrote a did not record yet",
                                                   nfx)),
                       "%s", p->out.data);
    E2eProc *j = dynrec((const char *[]){"diff", "--json", "old.db", "s.db", NULL});
    cr_assert_eq(j->status, 0, "%s", j->out.data);
    cr_assert_not_null(strstr(j->out.data, "\"not_recorded_by_a\": [\"fx."), "%s", j->out.data);
    /* Both record the group: a key on one side only is a divergence. */
    edited_copy("s.db", "one.db",
                "UPDATE strings SET text = json_remove(text, '$.\"fx.use_duck_shape\"') WHERE id"
                " = " INITIAL_CONFIG ";");
    p = dynrec((const char *[]){"diff", "one.db", "s.db", NULL});
    cr_assert_eq(p->status, 1 << 8, "%s%s", p->out.data, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "+ fx.use_duck_shape = True"), "%s", p->out.data);
}

/* torch's global state (the GLOBAL_STATE guard's object) gains keys between
 * versions (2.15's cuda_matmul_precision): across versions a key of one side
 * only is a note, a shared key with another value still diverges; on one
 * version the extra key diverges. */
#define GS_ADD_KEY                                                                                 \
    "UPDATE strings SET text = replace(text, '\"num_threads\":', "                                 \
    "'\"dynrec_test_state\":0,\"num_threads\":') WHERE text LIKE 'GLOBAL_STATE: %';"
#define GS_THREADS                                                                                 \
    "UPDATE strings SET text = replace(text, '\"num_threads\":', '\"num_threads\":9') "            \
    "WHERE text LIKE 'GLOBAL_STATE: %';"

Test(compare, global_state_keys_of_one_torch_version_are_a_note) {
    copy_example_to("shape_recompiles.py", "a");
    record_in("a", "shape_recompiles.py", "s.db");
    DrTrace *t = e2e_open(e2e_path("s.db"));
    cr_assert_not_null(e2e_sql(t, "SELECT 1 FROM strings WHERE text LIKE 'GLOBAL_STATE: %%'"
                                  " AND text LIKE '%%\"num_threads\":%%'"),
                       "no GLOBAL_STATE guard with num_threads: pick another key");
    e2e_close(t);
    edited_copy("s.db", "b.db", TORCH_2_14 GS_ADD_KEY);
    E2eProc *p = dynrec((const char *[]){"diff", "s.db", "b.db", NULL});
    cr_assert_eq(p->status, 0, "%s%s", p->out.data, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "note: global state keys of one torch version only, "
                                           "not compared: dynrec_test_state\n"),
                       "%s", p->out.data);
    E2eProc *j = dynrec((const char *[]){"diff", "--json", "s.db", "b.db", NULL});
    cr_assert_not_null(strstr(j->out.data, "\"global_state_keys_not_compared\": "
                                           "[\"dynrec_test_state\"]"),
                       "%s", j->out.data);
    edited_copy("s.db", "c.db", GS_ADD_KEY);
    p = dynrec((const char *[]){"diff", "s.db", "c.db", NULL});
    cr_assert_eq(p->status, 1 << 8, "same torch: %s%s", p->out.data, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "first divergence in guards"), "%s", p->out.data);
    edited_copy("s.db", "v.db", TORCH_2_14 GS_ADD_KEY GS_THREADS);
    p = dynrec((const char *[]){"diff", "s.db", "v.db", NULL});
    cr_assert_eq(p->status, 1 << 8, "a shared key changed: %s%s", p->out.data, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "\"num_threads\":9"), "%s", p->out.data);
}

/* replay and rerun take diff's --ignore; --json lists what was ignored. */
Test(compare, replay_and_rerun_take_ignore) {
    copy_example_to("shape_recompiles.py", "a");
    record_in("a", "shape_recompiles.py", "s.db");
    E2eProc *p = dynrec(
        (const char *[]){"replay", "--json", "--ignore", "guards", "-o", "rp.db", "s.db", NULL});
    cr_assert_eq(p->status, 0, "%s%s", p->out.data, p->err.data);
    cr_assert_not_null(
        strstr(p->out.data, "\"ignored\": [\"guards\", \"exit_status\", \"output\"]"), "%s",
        p->out.data);
    cr_assert_not_null(strstr(p->out.data, "\"guards\": {\"compared\": false"), "%s", p->out.data);
    cr_assert_not_null(
        strstr(p->out.data, "\"notes\": [\"not compared: guards, exit_status, output\"]"), "%s",
        p->out.data);
    p = dynrec(
        (const char *[]){"rerun", "--json", "--ignore", "output,exit", "-o", "r.db", "s.db", NULL});
    cr_assert_eq(p->status, 0, "%s%s", p->out.data, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "\"ignored\": [\"exit_status\", \"output\"]"), "%s",
                       p->out.data);
    cr_assert_not_null(strstr(p->out.data, "\"output\": {\"compared\": false"), "%s", p->out.data);
    p = dynrec((const char *[]){"rerun", "--ignore", "output", "-o", "r2.db", "s.db", NULL});
    cr_assert_eq(p->status, 0, "%s%s", p->out.data, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "note: not compared: output\n"), "%s", p->out.data);

    const char *const bad[][6] = {{"replay", "--ignore", "guards,nope", "s.db"},
                                  {"rerun", "--ignore", "nope", "s.db"},
                                  {"diff", "--ignore", "nope", "s.db", "s.db"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        E2eProc *q = dynrec(bad[i]);
        cr_assert_eq(q->status, 2 << 8, "%s: exit %d", bad[i][0], q->status);
        cr_assert_not_null(strstr(q->err.data, "unknown category 'nope'"), "%s", q->err.data);
        cr_assert_str_eq(q->out.data, "");
    }
    for (int i = 0; i < 2; i++) {
        E2eProc *q = dynrec((const char *[]){i ? "replay" : "rerun", "--ignore", NULL});
        cr_assert_eq(q->status, 2 << 8, "%s --ignore: exit %d", i ? "replay" : "rerun", q->status);
        E2eProc *h = dynrec((const char *[]){i ? "replay" : "rerun", "--help", NULL});
        cr_assert_not_null(strstr(h->out.data, "--ignore LIST"), "%s", h->out.data);
    }
}

/* Output that differs only in a time ("9 passed in 9.67s" against "in
 * 13.11s", pytest's last line) is the same output: the masked texts are
 * equal and both traces kept all of it, so the byte counts' difference is
 * only what masking hid.  A real difference still shows. */
Test(compare, output_differing_only_in_times_is_the_same) {
    const char *src = "import os\nprint('9 passed in %ss' % os.environ['T'])\n";
    mkdir(e2e_path("o"), 0755);
    e2e_write_file(e2e_path("o/p.py"), src, strlen(src));
    const char *const runs[][2] = {{"9.67", "a.db"}, {"13.11", "b.db"}, {"13.11x", "c.db"}};
    for (size_t i = 0; i < 3; i++) {
        E2eProc *p = sh(e2e_fmt("cd '%s' && T=%s '%s' run -q -o '%s' p.py >/dev/null",
                                e2e_path("o"), runs[i][0], e2e_bin, e2e_path(runs[i][1])),
                        E2E_TIMEOUT_MS);
        e2e_assert_exit(p, 0, "recording p.py");
    }
    E2eProc *same = dynrec((const char *[]){"diff", "a.db", "b.db", NULL});
    cr_assert_eq(same->status, 0, "%s%s", same->out.data, same->err.data);
    E2eProc *diff = dynrec((const char *[]){"diff", "a.db", "c.db", NULL});
    cr_assert_eq(diff->status, 1 << 8, "%s%s", diff->out.data, diff->err.data);
    cr_assert_not_null(strstr(diff->out.data, "the program's stdout differs"), "%s",
                       diff->out.data);
}
