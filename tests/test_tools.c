#define _GNU_SOURCE 1
/* test_tools.c -- the readers that hand a trace to other tools: `dynrec sql`
 * and its SQLite extension, `dynrec export` (Perfetto, TORCH_TRACE) and
 * `dynrec report` (Markdown).
 *
 * Every test records a real example with real torch.compile, runs the real
 * binary on it and checks what came out with an independent reader: the
 * trace API for blobs, the venv's Python (json, csv) for the formats, the
 * stock sqlite3 shell for the extension, tlparse for the TORCH_TRACE log,
 * cmark (CommonMark) for the Markdown. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec.h"
#include "e2e_util.h"

TestSuite(tools, .init = e2e_setup, .fini = e2e_teardown, .timeout = 300);

/* Records examples/<script> (or tests/scripts/<script>) into trace. */
static void record(const char *script, const char *trace, int from_scripts) {
    if (from_scripts) e2e_copy_script(script);
    else e2e_copy_example(script);
    E2eProc *p = e2e_record(trace, (const char *[]){script, NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, script);
}

/* Runs `dynrec args...` (a reader: no Python starts).  Under ASan with
 * leak checking on, which the fixture turns off for children because
 * CPython keeps its allocations: these commands must not leak. */
static E2eProc *dynrec(const char *const *args) {
    int n = 0;
    while (args[n]) n++;
    const char **argv = e2e_own(calloc((size_t)n + 4, sizeof *argv));
    cr_assert_not_null(argv);
    int k = 0;
    if (e2e_asan) {
        argv[k++] = "/usr/bin/env";
        argv[k++] = "ASAN_OPTIONS=detect_leaks=1";
    }
    argv[k++] = e2e_bin;
    for (int i = 0; i < n; i++) argv[k++] = args[i];
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* Runs the venv's python on code with args; asserts exit 0 and returns
 * its stdout. */
static char *python(const char *code, const char *const *args) {
    int n = 0;
    while (args && args[n]) n++;
    const char **argv = e2e_own(calloc((size_t)n + 4, sizeof *argv));
    cr_assert_not_null(argv);
    argv[0] = e2e_python;
    argv[1] = "-c";
    argv[2] = code;
    for (int i = 0; i < n; i++) argv[i + 3] = args[i];
    E2eProc *p = e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, "python check");
    return p->out.data;
}

/* The decoded text of a blob, through the trace API. */
static char *blob_text(DrTrace *t, long long id) {
    void *data = NULL;
    size_t len = 0;
    DrError err = {0};
    cr_assert_eq(dr_trace_read_blob(t, id, 0, &data, &len, &err), DR_OK, "blob %lld: %s", id,
                 err.msg);
    return e2e_own(data);
}

/* The path of a program on PATH; the test fails, saying what to install,
 * when there is none. */
static const char *program(const char *name, const char *install) {
    const char *path = getenv("PATH");
    char *dirs = e2e_own(strdup(path ? path : "/usr/bin:/bin"));
    for (char *d = strtok(dirs, ":"); d; d = strtok(NULL, ":")) {
        char *p = e2e_fmt("%s/%s", d, name);
        if (access(p, X_OK) == 0) return p;
    }
    cr_assert_fail("%s is not on PATH: %s", name, install);
    return NULL;
}

static void save(const char *name, const E2eProc *p) {
    e2e_write_file(e2e_path(name), p->out.data, p->out.len);
}

/* ---- sql ------------------------------------------------------------------ */

#define GRAPHS_SQL                                                                                 \
    "SELECT compile_id, nodes, dynrec_text(code_blob) AS code FROM v_graphs ORDER BY seq"

Test(tools, sql_prints_a_recorded_trace_as_text_json_and_csv) {
    record("quickstart.py", "q.db", 0);
    DrTrace *t = e2e_open(e2e_path("q.db"));
    long long ngraphs = e2e_sql_int(t, "SELECT count(*) FROM v_graphs");
    cr_assert_geq(ngraphs, 2, "quickstart.py compiles twice");
    char *ids = e2e_sql_lines(t, NULL, "SELECT code_blob FROM v_graphs ORDER BY seq");
    char *want_json = e2e_fmt("[");
    for (char *p = ids; *p;) {
        long long id = strtoll(p, &p, 10);
        p++;
        char *code = blob_text(t, id);
        cr_assert(strstr(code, "def forward"), "blob %lld is FX code", id);
        /* Python's json.dumps of the code, to compare with what dynrec wrote. */
        e2e_write_file(e2e_path("code.txt"), code, strlen(code));
        char *q = python("import json,sys; print(json.dumps(open(sys.argv[1]).read()), end='')",
                         (const char *[]){e2e_path("code.txt"), NULL});
        want_json = e2e_fmt("%s%s%s", want_json, want_json[1] ? "," : "", q);
    }
    want_json = e2e_fmt("%s]", want_json);
    e2e_close(t);

    E2eProc *j = dynrec((const char *[]){"sql", "--json", "q.db", GRAPHS_SQL, NULL});
    e2e_assert_exit(j, 0, "sql --json");
    save("out.json", j);
    E2eProc *c = dynrec((const char *[]){"sql", "--csv", "q.db", GRAPHS_SQL, NULL});
    e2e_assert_exit(c, 0, "sql --csv");
    save("out.csv", c);
    cr_assert(strstr(c->out.data, "compile_id,nodes,code\r\n") == c->out.data,
              "CSV starts with its header and CRLF: %.80s", c->out.data);
    /* The JSON parses, has one object per graph with typed values, its code
     * is the blob's text; the CSV (read by Python's csv module) holds the
     * same rows. */
    char *out =
        python("import csv, json, sys\n"
               "rows = json.load(open(sys.argv[1]))\n"
               "assert isinstance(rows, list) and len(rows) == int(sys.argv[3]), rows\n"
               "assert all(isinstance(r['nodes'], int) for r in rows), rows\n"
               "assert [r['code'] for r in rows] == json.loads(sys.argv[4])\n"
               "with open(sys.argv[2], newline='') as f:\n"
               "    c = list(csv.reader(f, strict=True))\n"
               "assert c[0] == ['compile_id', 'nodes', 'code'], c[0]\n"
               "assert c[1:] == [[r['compile_id'], str(r['nodes']), r['code']] for r in rows], c\n"
               "print(' '.join(r['compile_id'] for r in rows))\n",
               (const char *[]){e2e_path("out.json"), e2e_path("out.csv"), e2e_fmt("%lld", ngraphs),
                                want_json, NULL});
    cr_assert_str_eq(out, "0/0 0/1\n");

    /* Text: aligned columns, one line per row (newlines of the code shown
     * as \n), a ruler under the header. */
    E2eProc *x = dynrec((const char *[]){"sql", "q.db", GRAPHS_SQL, NULL});
    e2e_assert_exit(x, 0, "sql");
    int lines = 0;
    for (char *p = x->out.data; *p; p++) lines += *p == '\n';
    cr_assert_eq(lines, 2 + ngraphs, "header, ruler and one line per graph:\n%s", x->out.data);
    cr_assert(strncmp(x->out.data, "compile_id  nodes  code", 23) == 0, "%s", x->out.data);
    cr_assert(strstr(x->out.data, "\n----------  -----  ----"), "%s", x->out.data);
    cr_assert(strstr(x->out.data, "\n0/1         8      \\n\\n\\ndef forward("), "%s", x->out.data);
}

/* Control characters reach a pipe as they are (single column: the exact
 * text) but never a terminal (script(1) gives the command one). */
Test(tools, sql_sanitizes_control_characters_on_a_terminal_only) {
    record("quickstart.py", "q.db", 0);
    const char *q = "SELECT char(27) || '[31m' || qualname AS a FROM v_frames WHERE compiles > 0 "
                    "LIMIT 1";
    E2eProc *p = dynrec((const char *[]){"sql", "q.db", q, NULL});
    e2e_assert_exit(p, 0, "sql to a pipe");
    cr_assert_str_eq(p->out.data, "a\n\033[31mstep\n");
    const char *script = program("script", "util-linux's script(1) gives a terminal");
    for (int csv = 0; csv < 2; csv++) {
        char *cmd =
            e2e_fmt("%s%s sql %s q.db \"%s\"", e2e_asan ? "ASAN_OPTIONS=detect_leaks=1 " : "",
                    e2e_bin, csv ? "--csv" : "", q);
        p = e2e_run_in((const char *[]){script, "-qec", cmd, "/dev/null", NULL}, NULL,
                       E2E_TORCH_TIMEOUT_MS);
        e2e_assert_exit(p, 0, "sql on a terminal");
        cr_assert_null(strchr(p->out.data, '\033'), "no ESC on a terminal: %s", p->out.data);
        cr_assert(strstr(p->out.data, "^[[31mstep"), "%s", p->out.data);
    }
}

Test(tools, sqlite3_shell_loads_the_extension) {
    record("quickstart.py", "q.db", 0);
    char *so = e2e_fmt("%.*s/dynrec_sqlite", (int)(strrchr(e2e_bin, '/') - e2e_bin), e2e_bin);
    cr_assert_eq(access(e2e_fmt("%s.so", so), R_OK), 0,
                 "%s.so is missing: build it with make (make check builds it)", so);
    DrTrace *t = e2e_open(e2e_path("q.db"));
    char *ids = e2e_sql_lines(t, NULL, "SELECT code_blob FROM v_graphs ORDER BY seq");
    char *want = e2e_fmt("%s", "");
    for (char *p = ids; *p;) {
        long long id = strtoll(p, &p, 10);
        p++;
        want = e2e_fmt("%s%s\n", want, blob_text(t, id));
    }
    const char *sqlite3_bin = program("sqlite3", "tools/setup.sh installs it");
    e2e_close(t);
    E2eProc *p =
        e2e_run((const char *[]){sqlite3_bin, "q.db", "-cmd", e2e_fmt(".load %s", so),
                                 "SELECT dynrec_text(code_blob) FROM v_graphs ORDER BY seq", NULL});
    e2e_assert_exit(p, 0, "sqlite3 .load dynrec_sqlite");
    cr_assert_str_eq(p->out.data, want);
    /* dynrec_json feeds json_extract: Dynamo's first chromium event of
     * the structured trace is for compile 0/0. */
    p = e2e_run((const char *[]){sqlite3_bin, "q.db", "-cmd", e2e_fmt(".load %s", so),
                                 "SELECT json_extract(dynrec_json(blob_id), '$.args.compile_id') "
                                 "FROM v_ev WHERE kind = 'trace' AND text = 'chromium_event' "
                                 "ORDER BY seq LIMIT 1",
                                 NULL});
    e2e_assert_exit(p, 0, "sqlite3 dynrec_json");
    cr_assert_str_eq(p->out.data, "0/0\n");
    /* Not JSON (FX code): an error that says to use dynrec_text. */
    p = e2e_run((const char *[]){sqlite3_bin, "q.db", "-cmd", e2e_fmt(".load %s", so),
                                 "SELECT dynrec_json(code_blob) FROM v_graphs", NULL});
    cr_assert_neq(p->status, 0);
    cr_assert(strstr(p->err.data, "is not JSON (read it with dynrec_text)"), "%s", p->err.data);
    /* A missing blob is an SQL error in the shell too. */
    p = e2e_run((const char *[]){sqlite3_bin, "q.db", "-cmd", e2e_fmt(".load %s", so),
                                 "SELECT dynrec_text(987654321)", NULL});
    cr_assert_neq(p->status, 0);
    cr_assert(strstr(p->err.data, "blob 987654321 does not exist"), "%s", p->err.data);
}

/* Copies trace src to dst adding a blob that declares (and really
 * decompresses to) 100 MiB of zeros; returns its id. */
static long long add_bomb(const char *src, const char *dst) {
    size_t len = 0;
    char *data = e2e_slurp(e2e_path(src), &len);
    cr_assert_not_null(data);
    e2e_write_file(e2e_path(dst), data, len);
    size_t n = (size_t)100 << 20;
    char *zeros = calloc(1, n);
    cr_assert_not_null(zeros);
    void *blob = NULL;
    size_t blen = 0;
    DrError err = {0};
    cr_assert_eq(dr_codec_encode(zeros, n, NULL, 1, &blob, &blen, &err), DR_OK, "%s", err.msg);
    free(zeros);
    cr_assert_lt(blen, (size_t)1 << 20, "100 MiB of zeros compress to %zu bytes", blen);
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(e2e_path(dst), &db), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db, "INSERT INTO blobs(data) VALUES (?1)", -1, &st, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_bind_blob(st, 1, blob, (int)blen, free), SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE, "%s", sqlite3_errmsg(db));
    long long id = sqlite3_last_insert_rowid(db);
    cr_assert_eq(sqlite3_finalize(st), SQLITE_OK);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    return id;
}

Test(tools, sql_refuses_writes_missing_blobs_bombs_and_junk) {
    record("quickstart.py", "q.db", 0);
    size_t len0 = 0;
    char *before = e2e_slurp(e2e_path("q.db"), &len0);

    E2eProc *p = dynrec((const char *[]){"sql", "q.db", "SELECT dynrec_text(987654321)", NULL});
    e2e_assert_exit(p, 1, "a missing blob");
    cr_assert(strstr(p->err.data, "q.db: dynrec_text: blob 987654321 does not exist"), "%s",
              p->err.data);
    cr_assert_str_eq(p->out.data, "", "nothing on stdout after an error");

    const char *writes[] = {"DELETE FROM meta", "INSERT INTO meta VALUES ('a', 'b')",
                            "CREATE TEMP TABLE x(a)", "DROP VIEW v_frames", NULL};
    for (int i = 0; writes[i]; i++) {
        p = dynrec((const char *[]){"sql", "q.db", writes[i], NULL});
        e2e_assert_exit(p, 2, writes[i]);
        cr_assert(strstr(p->err.data, "the statement would write"), "%s: %s", writes[i],
                  p->err.data);
    }
    const char *refused[] = {"ATTACH 'other.db' AS o", "PRAGMA trusted_schema = 1", NULL};
    for (int i = 0; refused[i]; i++) {
        p = dynrec((const char *[]){"sql", "q.db", refused[i], NULL});
        e2e_assert_exit(p, 2, refused[i]);
        cr_assert(strstr(p->err.data, "refused"), "%s: %s", refused[i], p->err.data);
    }
    cr_assert_eq(access(e2e_path("other.db"), F_OK), -1, "ATTACH created no file");
    p = dynrec((const char *[]){"sql", "q.db", "SELECT 1; DELETE FROM meta", NULL});
    e2e_assert_exit(p, 2, "two statements");
    size_t len1 = 0;
    char *after = e2e_slurp(e2e_path("q.db"), &len1);
    cr_assert(len0 == len1 && memcmp(before, after, len0) == 0, "the trace is unchanged");

    /* A blob that decompresses to 100 MiB is refused before it is
     * allocated, with the blob named; the rest of the trace still reads. */
    long long bomb = add_bomb("q.db", "bomb.db");
    p = dynrec((const char *[]){"sql", "bomb.db", e2e_fmt("SELECT dynrec_text(%lld)", bomb), NULL});
    e2e_assert_exit(p, 1, "a bomb");
    cr_assert(strstr(p->err.data, e2e_fmt("blob %lld is unreadable", bomb)), "%s", p->err.data);
    p = dynrec((const char *[]){"sql", "bomb.db", "SELECT count(*) FROM v_graphs", NULL});
    e2e_assert_exit(p, 0, "the rest of a trace with a bomb");

    e2e_write_file(e2e_path("junk.db"), "this is not a trace\n", 20);
    p = dynrec((const char *[]){"sql", "junk.db", "SELECT 1", NULL});
    e2e_assert_exit(p, 65, "junk");
    cr_assert(strstr(p->err.data, "junk.db"), "%s", p->err.data);
    p = dynrec((const char *[]){"sql", "q.db", NULL});
    e2e_assert_exit(p, 2, "no query");
    p = dynrec((const char *[]){"sql", "--help", NULL});
    e2e_assert_exit(p, 0, "--help");
    cr_assert(strstr(p->out.data, "dynrec_text(blob_id)"));
}

/* ---- export --format perfetto ------------------------------------------ */

/* Checks a Chrome trace-event file: its structure, that slices nest on
 * each track (a child inside its parent, never straddling), that times
 * never go back on a track, and prints a summary to compare with the
 * trace. */
static const char perfetto_check[] =
    "import json, sys\n"
    "doc = json.load(open(sys.argv[1]))\n"
    "ev = doc['traceEvents']\n"
    "assert isinstance(ev, list) and ev\n"
    "names = {}\n"
    "for e in ev:\n"
    "    for k in ('ph', 'name', 'pid', 'tid'):\n"
    "        assert k in e, (k, e)\n"
    "    assert isinstance(e['pid'], int) and isinstance(e['tid'], int), e\n"
    "    if e['ph'] == 'M':\n"
    "        names[e['tid']] = e['args']['name']\n"
    "        continue\n"
    "    assert isinstance(e['ts'], (int, float)) and e['ts'] >= 0, e\n"
    "    assert e['ph'] in ('X', 'i', 'C'), e\n"
    "    if e['ph'] == 'X':\n"
    "        assert e['dur'] >= 0, e\n"
    "    if e['ph'] == 'i':\n"
    "        assert e['s'] == 't' and e['args'], e\n"
    "    if e['ph'] == 'C':\n"
    "        assert e['args'] and all(isinstance(v, (int, float)) for v in e['args'].values()), e\n"
    "tracks = {}\n"
    "for e in ev:\n"
    "    if e['ph'] in ('X', 'i'):\n"
    "        tracks.setdefault(e['tid'], []).append(e)\n"
    "eps = 0.0015\n"
    "count = {}\n"
    "for tid, es in tracks.items():\n"
    "    assert tid in names, ('unnamed thread', tid)\n"
    "    last = -1\n"
    "    stack = []\n"
    "    for e in es:\n"
    "        assert e['ts'] >= last, ('time goes back', e)\n"
    "        last = e['ts']\n"
    "        while stack and e['ts'] >= stack[-1]['ts'] + stack[-1]['dur'] - eps and not (\n"
    "                e['ph'] == 'X' and e['dur'] == 0 and e['ts'] <= stack[-1]['ts'] + stack[-1]['dur']):\n"
    "            stack.pop()\n"
    "        if stack and e['ph'] == 'X':\n"
    "            p = stack[-1]\n"
    "            assert e['ts'] + e['dur'] <= p['ts'] + p['dur'] + eps, ('straddles', p, e)\n"
    "        parent = stack[-1]['cat'] if stack else None\n"
    "        want = {'compile': [None], 'attempt': ['compile'], 'backend': ['attempt', 'compile']}\n"
    "        if e['ph'] == 'X':\n"
    "            assert parent in want[e['cat']], ('nested in', parent, e)\n"
    "            stack.append(e)\n"
    "        elif e['cat'] in ('graph break', 'guard failure'):\n"
    "            assert parent in ('attempt', 'compile'), ('instant outside a compile', e)\n"
    "        count[e['cat']] = count.get(e['cat'], 0) + 1\n"
    "hits = sum(1 for e in ev if e['ph'] == 'C' and 'hits' in e['args'])\n"
    "print(' '.join('%s=%d' % kv for kv in sorted(count.items())), 'hits=%d' % hits,\n"
    "      'threads=%d' % len([t for t in names if t]))\n";

Test(tools, export_perfetto_nests_compiles_attempts_and_backends) {
    record("graph_breaks.py", "g.db", 0);
    record("shape_recompiles.py", "s.db", 0);
    record("two_threads.py", "t.db", 0);
    const char *traces[] = {"g.db", "s.db", "t.db"};
    for (int i = 0; i < 3; i++) {
        DrTrace *t = e2e_open(e2e_path(traces[i]));
        long long compiles = e2e_sql_int(t, "SELECT count(*) FROM v_compiles");
        long long attempts = e2e_sql_int(t, "SELECT count(*) FROM v_speculation WHERE action = "
                                            "'checkpoint' AND json_extract(data, '$.scope') = "
                                            "'attempt'");
        long long graphs = e2e_sql_int(t, "SELECT count(*) FROM v_graphs");
        long long breaks = e2e_sql_int(t, "SELECT count(*) FROM v_graph_breaks");
        long long failures = e2e_sql_int(t, "SELECT count(*) FROM v_guard_failures");
        long long frames = e2e_sql_int(t, "SELECT count(*) FROM v_frames WHERE compiles > 0");
        long long threads = e2e_sql_int(t, "SELECT count(DISTINCT thread) FROM v_ev WHERE kind IN "
                                           "('compile', 'graph_break', 'guard_failure', 'error')");
        e2e_close(t);
        cr_assert_gt(compiles, 1);
        if (i < 2)
            cr_assert_gt(breaks + failures, 0, "%s has graph breaks or guard failures", traces[i]);
        else cr_assert_eq(threads, 2, "two_threads.py compiles in two threads");
        char *json = e2e_fmt("%s.json", traces[i]);
        E2eProc *p =
            dynrec((const char *[]){"export", "--format", "perfetto", "-o", json, traces[i], NULL});
        e2e_assert_exit(p, 0, "export --format perfetto");
        char *got = python(perfetto_check, (const char *[]){e2e_path(json), NULL});
        char *want =
            e2e_fmt("attempt=%lld backend=%lld compile=%lld%s%s hits=%lld threads=%lld\n", attempts,
                    graphs, compiles, breaks ? e2e_fmt(" graph break=%lld", breaks) : "",
                    failures ? e2e_fmt(" guard failure=%lld", failures) : "", 2 * frames, threads);
        cr_assert_str_eq(got, want, "%s", traces[i]);
    }
    /* The text of a graph break is in its args. */
    E2eProc *p = dynrec((const char *[]){"export", "--format", "perfetto", "g.db", NULL});
    e2e_assert_exit(p, 0, "export to stdout");
    cr_assert(strstr(p->out.data, "\"reason\": \"Encountered graph break"), "%.2000s", p->out.data);
    e2e_write_file(e2e_path("junk.db"), "junk", 4);
    p = dynrec((const char *[]){"export", "--format", "perfetto", "junk.db", NULL});
    e2e_assert_exit(p, 65, "junk");
    p = dynrec((const char *[]){"export", "--format", "svg", "g.db", NULL});
    e2e_assert_exit(p, 2, "unknown format");
}

/* ---- export --format torch-trace --------------------------------------- */

/* tlparse's compile_directory.json of two logs: the same compiles, each
 * with the same artifacts (names carry tlparse's running number, so the
 * order of the records must match too).  Prints the compile ids. */
static const char tlparse_compare[] =
    "import json, os, subprocess, sys\n"
    "tlparse, real, ours, out = sys.argv[1:5]\n"
    "dirs = []\n"
    "for name, log in (('real', real), ('ours', ours)):\n"
    "    d = os.path.join(out, name)\n"
    "    r = subprocess.run([tlparse, log, '-o', d, '--overwrite', '--no-browser'],\n"
    "                       capture_output=True, text=True)\n"
    "    assert r.returncode == 0, (name, r.stdout, r.stderr)\n"
    "    dirs.append(json.load(open(os.path.join(d, 'compile_directory.json'))))\n"
    "a, b = dirs\n"
    "assert sorted(a) == sorted(b), (sorted(a), sorted(b))\n"
    "for k in a:\n"
    "    x = [y['name'] for y in a[k]['artifacts']]\n"
    "    z = [y['name'] for y in b[k]['artifacts']]\n"
    "    assert x == z, (k, x, z)\n"
    "print(' '.join(sorted(k for k in a if a[k]['artifacts'])))\n";

static char *only_file(const char *dir) {
    char *cmd = e2e_fmt("ls %s", dir);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    char line[512] = "";
    cr_assert_not_null(fgets(line, sizeof line, f), "%s is empty", dir);
    char extra[512];
    cr_assert_null(fgets(extra, sizeof extra, f), "%s holds more than one file", dir);
    pclose(f);
    line[strcspn(line, "\n")] = 0;
    return e2e_fmt("%s/%s", dir, line);
}

Test(tools, export_torch_trace_reads_in_tlparse_like_the_real_log) {
    char *tlparse =
        e2e_fmt("%.*s/tlparse", (int)(strrchr(e2e_python, '/') - e2e_python), e2e_python);
    cr_assert_eq(access(tlparse, X_OK), 0, "%s is missing: tools/setup.sh installs it", tlparse);
    const char *scripts[] = {"graph_breaks.py", "shape_recompiles.py", "suppressed_error.py"};
    for (int i = 0; i < 3; i++) {
        /* One run, recorded by dynrec and logged by TORCH_TRACE at once. */
        char *real = e2e_path(e2e_fmt("real%d", i));
        cr_assert_eq(setenv("TORCH_TRACE", real, 1), 0);
        char *trace = e2e_fmt("t%d.db", i);
        record(scripts[i], trace, 0);
        unsetenv("TORCH_TRACE");
        char *ours = e2e_path(e2e_fmt("ours%d", i));
        E2eProc *p =
            dynrec((const char *[]){"export", "--format", "torch-trace", "-o", ours, trace, NULL});
        e2e_assert_exit(p, 0, "export --format torch-trace");
        cr_assert(strstr(p->err.data, "wrote "), "%s", p->err.data);
        cr_assert_null(strstr(p->err.data, "left out"), "%s", p->err.data);
        char *real_log = only_file(real), *our_log = only_file(ours);
        /* Line for line, past the prefix (time, location): the same records
         * (the metadata's nested keys are stored sorted, so they are
         * compared as JSON) and the same payload lines. */
        python(
            "import json, re, sys\n"
            "def recs(path):\n"
            "    out = []\n"
            "    for line in open(path).read().split('\\n'):\n"
            "        if line.startswith('\\t'):\n"
            "            out[-1][1].append(line)\n"
            "        elif line:\n"
            "            m = re.match(r'^V\\d{4} \\d\\d:\\d\\d:\\d\\d\\.\\d{6} (\\d+) \\S+:\\d+\\] (.*)$', line)\n"
            "            assert m, line\n"
            "            out.append((json.loads(m.group(2)), []))\n"
            "    return out\n"
            "a, b = recs(sys.argv[1]), recs(sys.argv[2])\n"
            "key = lambda r: json.dumps(r, sort_keys=True)\n"
            "assert sorted(map(key, a)) == sorted(map(key, b)), 'records differ'\n"
            "assert [list(r[0])[0] for r in b if 'str' not in r[0]][:1] != []\n",
            (const char *[]){real_log, our_log, NULL});
        char *got = python(tlparse_compare, (const char *[]){tlparse, real_log, our_log,
                                                             e2e_path(e2e_fmt("tl%d", i)), NULL});
        DrTrace *t = e2e_open(e2e_path(trace));
        char *ids = e2e_sql_lines(t, NULL,
                                  "SELECT '[' || compile_id || ']' FROM v_compiles "
                                  "ORDER BY compile_id");
        e2e_close(t);
        for (char *id = strtok(ids, "\n"); id; id = strtok(NULL, "\n"))
            cr_assert(strstr(got, id), "%s: compile %s has a tlparse directory: %s", scripts[i], id,
                      got);
    }
}

/* A plain python run logged by TORCH_TRACE, and a dynrec recording of the
 * same script without it, exported: the same record kinds, as many of each
 * (the torch_version artifact and the first compile's "dynamo" begin event
 * included), the first records in the same order.  The recording is made
 * as users make it, TORCH_TRACE unset, where torch's own trace handler
 * removes itself at the first record. */
Test(tools, export_torch_trace_has_the_records_of_a_plain_torch_trace_run) {
    const char *scripts[] = {"graph_breaks.py", "shape_recompiles.py"};
    for (int i = 0; i < 2; i++) {
        char *real = e2e_path(e2e_fmt("plain%d", i));
        char *trace = e2e_fmt("t%d.db", i);
        unsetenv("TORCH_TRACE");
        record(scripts[i], trace, 0);
        char *ours = e2e_path(e2e_fmt("ours%d", i));
        E2eProc *p =
            dynrec((const char *[]){"export", "--format", "torch-trace", "-o", ours, trace, NULL});
        e2e_assert_exit(p, 0, "export --format torch-trace");
        char *got = python(
            "import collections, json, os, subprocess, sys\n"
            "script, real, ours = sys.argv[1:4]\n"
            "env = dict(os.environ, TORCH_TRACE=real)\n"
            "r = subprocess.run([sys.executable, script], env=env, capture_output=True)\n"
            "assert r.returncode == 0, r.stderr[-2000:]\n"
            "def kinds(d):\n"
            "    (f,) = os.listdir(d)\n"
            "    out = []\n"
            "    for line in open(os.path.join(d, f)):\n"
            "        if line.startswith('\\t') or '] {' not in line: continue\n"
            "        md = json.loads(line.split('] ', 1)[1])\n"
            "        k = next(iter(md))\n"
            "        if k == 'artifact': k += ':' + md[k]['name']\n"
            "        out.append(k)\n"
            "    return out\n"
            "a, b = kinds(real), kinds(ours)\n"
            "assert 'artifact:torch_version' in a, a[:5]\n"
            "assert collections.Counter(a) == collections.Counter(b), "
            "(collections.Counter(a) - collections.Counter(b), collections.Counter(b) - collections.Counter(a))\n"
            "assert a[:6] == b[:6], (a[:6], b[:6])\n"
            "print(len(a))\n",
            (const char *[]){e2e_path(scripts[i]), real, ours, NULL});
        cr_assert_gt(atoi(got), 20, "%s: %s records", scripts[i], got);
    }
}

/* ---- report ---------------------------------------------------------------- */

/* Occurrences of needle in hay. */
static int occurrences(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

Test(tools, report_renders_as_commonmark_without_injected_html) {
    const char *cmark = program("cmark-gfm", "tools/setup.sh installs it (Debian cmark-gfm)");
    /* hostile_strings.py puts <script>, <b>, backticks and runs of three
     * and four backticks into a graph-break message and an exception
     * message; its file name carries backticks, <i> and an entity. */
    const char *name = "x``<i>y<i>&amp;.py";
    size_t len = 0;
    char *src = e2e_slurp(e2e_fmt("%s/hostile_strings.py", e2e_scripts), &len);
    cr_assert_not_null(src);
    e2e_write_file(e2e_path(name), src, len);
    E2eProc *p = e2e_record("h.db", (const char *[]){name, NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, name);
    DrTrace *t = e2e_open(e2e_path("h.db"));
    long long compiles = e2e_sql_int(t, "SELECT count(*) FROM v_compiles");
    long long recompiles = e2e_sql_int(t, "SELECT count(*) FROM v_compiles WHERE recompile");
    long long breaks = e2e_sql_int(t, "SELECT count(*) FROM v_graph_breaks");
    long long supp = e2e_sql_int(t, "SELECT count(*) FROM v_errors WHERE suppressed");
    char *torch = e2e_meta(t, "torch_version");
    char *break_line = e2e_sql(t, "SELECT lineno FROM v_graph_breaks ORDER BY seq LIMIT 1");
    char *guard_cid = e2e_sql(t, "SELECT compile_id FROM v_guards WHERE guard LIKE "
                                 "'EQUALS_MATCH: L[''mode''] == ''a''' LIMIT 1");
    e2e_close(t);
    cr_assert(breaks >= 1 && supp >= 1 && recompiles >= 1 && guard_cid,
              "the script breaks the graph, suppresses an error and recompiles");

    p = dynrec((const char *[]){"report", "h.db", NULL});
    e2e_assert_exit(p, 0, "report");
    save("h.md", p);
    E2eProc *r =
        e2e_run((const char *[]){cmark, "--unsafe", "-e", "table", e2e_path("h.md"), NULL});
    e2e_assert_exit(r, 0, "cmark-gfm");
    const char *html = r->out.data;
    /* Raw HTML is let through by --unsafe: none may come from the trace. */
    cr_assert_null(strstr(html, "<script"), "%s", html);
    cr_assert_null(strstr(html, "<b>"), "%s", html);
    cr_assert_null(strstr(html, "<i>"), "%s", html);
    /* The hostile text is there, whole and escaped, in code blocks: the
     * graph-break reason and the suppressed error's message. */
    const char *evil = "&lt;script&gt;alert('pwn')&lt;/script&gt; ``` `tick`\n%s````\n%s"
                       "&lt;b&gt;bold&lt;/b&gt; &amp; *star*\n";
    cr_assert(strstr(html, e2e_fmt("<pre><code>backend='evil_backend' raised:\n"
                                   "RuntimeError: backend says %s",
                                   e2e_fmt(evil, "", ""))),
              "%s", html);
    /* (Dynamo indents the message's second line in the reason.) */
    cr_assert(strstr(html, e2e_fmt(evil, "    ", "    ")), "%s", html);
    cr_assert_eq(occurrences(html, "<pre><code>Encountered graph break"), breaks, "%s", html);
    /* The file name in code spans: title and locations. */
    cr_assert(strstr(html, "<h1>torch.compile report: <code>x``&lt;i&gt;y&lt;i&gt;&amp;amp;.py"
                           "</code></h1>"),
              "%s", html);
    cr_assert(
        strstr(html, e2e_fmt("at <code>x``&lt;i&gt;y&lt;i&gt;&amp;amp;.py:%s</code>", break_line)),
        "%s", html);
    /* Our own structure: the versions table, the summary, the guards
     * folded in <details>, how to reproduce. */
    cr_assert(strstr(html, e2e_fmt("<td>torch</td>\n<td>%s</td>", torch)), "%s", html);
    char *summary = e2e_fmt("<p><strong>Summary:</strong> %lld compiles, %lld recompile%s, "
                            "%lld graph break%s, 0 errors, %lld suppressed error%s</p>",
                            compiles, recompiles, recompiles == 1 ? "" : "s", breaks,
                            breaks == 1 ? "" : "s", supp, supp == 1 ? "" : "s");
    cr_assert(strstr(html, summary), "wanted %s in\n%s", summary, html);
    const char *details = strstr(html, "<details><summary>Guards of ");
    cr_assert_not_null(details, "%s", html);
    cr_assert(strstr(details, e2e_fmt(", compile %s (", guard_cid)), "%s", details);
    const char *guard = strstr(details, "EQUALS_MATCH: L['mode'] == 'a'");
    cr_assert(guard && guard < strstr(details, "</details>"), "%s", details);
    cr_assert(strstr(html, "<h2>How to reproduce</h2>"), "%s", html);
    cr_assert(strstr(html, "dynrec replay h.db"), "%s", html);

    p = dynrec((const char *[]){"report", "--top", "0", "h.db", NULL});
    e2e_assert_exit(p, 2, "--top 0");
    e2e_write_file(e2e_path("junk.db"), "junk", 4);
    p = dynrec((const char *[]){"report", "junk.db", NULL});
    e2e_assert_exit(p, 65, "junk");
}

/* ---- damaged traces ------------------------------------------------------- */

/* Every reader on copies of a real trace with bytes overwritten here and
 * there (the header, b-tree pages, blob pages): each ends with its own
 * status and a message, never a crash or a sanitizer report. */
Test(tools, readers_survive_damaged_traces) {
    record("graph_breaks.py", "g.db", 0);
    size_t len = 0;
    char *orig = e2e_slurp(e2e_path("g.db"), &len);
    cr_assert(orig && len > 8192);
    uint64_t x = 0x9E3779B97F4A7C15ull; /* xorshift64: the same damage every run */
    for (int i = 0; i < 16; i++) {
        char *data = e2e_own(malloc(len));
        cr_assert_not_null(data);
        memcpy(data, orig, len);
        for (int hit = 0; hit < 3; hit++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t off = i == 0 && hit == 0 ? 60 : (size_t)(x % (len - 256));
            for (int k = 0; k < 200; k++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                data[off + (size_t)k] = (char)x;
            }
        }
        char *name = e2e_fmt("d%d.db", i);
        e2e_write_file(e2e_path(name), data, len);
        /* One shell per copy runs the six readers (a test may start only
         * so many children) and prints each one's status and stderr. */
        char *bin = e2e_fmt("%s%s", e2e_asan ? "env ASAN_OPTIONS=detect_leaks=1 " : "", e2e_bin);
        char *sh = e2e_fmt(
            "run() { \"$@\" >/dev/null 2>err; echo \"status $?\"; cat err; }\n"
            "run %s sql %s 'SELECT seq, length(dynrec_text(blob_id)) FROM v_ev WHERE blob_id "
            "IS NOT NULL'\n"
            "run %s sql --json %s 'SELECT * FROM v_compiles'\n"
            "run %s export --format perfetto -o d%d.json %s\n"
            "run %s export --format torch-trace -o d%d %s\n"
            "run %s report %s\n"
            "run %s pack -q --redact --redact-source %s -o d%d.dynrec\n",
            bin, name, bin, name, bin, i, name, bin, i, name, bin, name, bin, name, i);
        E2eProc *p =
            e2e_run_in((const char *[]){"/bin/sh", "-c", sh, NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
        e2e_assert_exit(p, 0, "the readers' shell");
        const char *out = p->out.data;
        cr_assert_eq(occurrences(out, "status "), 6, "%s", out);
        cr_assert(!strstr(out, "Sanitizer") && !strstr(out, "runtime error"), "%s: %s", name, out);
        int k = 0;
        for (const char *q = out; (q = strstr(q, "status ")); q += 7, k++) {
            int st = atoi(q + 7);
            cr_assert(st == 0 || st == 65 || (st == 1 && k == 0),
                      "reader %d on %s: status "
                      "%d\n%s",
                      k, name, st, out);
            if (st) {
                const char *msg = strchr(q, '\n');
                cr_assert(msg && strncmp(msg + 1, "dynrec ", 7) == 0 && strstr(msg, name),
                          "reader %d on %s names the file:\n%s", k, name, out);
            }
        }
    }
}
