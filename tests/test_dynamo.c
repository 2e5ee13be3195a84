#define _GNU_SOURCE 1
/* test_dynamo.c -- end-to-end tests of what dynrec records about Dynamo.
 *
 * Each test records one script of examples/ with `dynrec run`, runs it under
 * plain python too (recording must not change the program: same stdout,
 * stderr and exit status), and then asserts the facts the example's
 * docstring promises through the trace's SQL views (v_frames, v_compiles,
 * v_guards, v_guard_failures, v_graph_breaks, v_speculation,
 * v_side_effects, v_errors, v_graphs, v_canonical).  Every torch import
 * costs seconds, so each test records its example once and checks several
 * facts on that trace; the determinism checks record a second time.
 * inductor_model is the only test that runs the inductor backend.
 *
 * Examples written by others (cond_side_effect.py, closure_cell.py) are
 * skipped while they do not exist.  The machinery is in e2e_util.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

/* Two to three torch runs a test, seconds each (inductor builds C++ on a
 * cold cache).  The timeout is e2e's on purpose: Criterion 2.4.1's runner
 * leaks one 48-byte timeout request, which LeakSanitizer reports in `make
 * asan`, when suites with different timeouts run side by side. */
TestSuite(dynamo, .init = e2e_setup, .fini = e2e_teardown, .timeout = 240);

/* ---- helpers ------------------------------------------------------------ */

/* The integer a query (an sqlite3_mprintf format and its arguments)
 * returns; the test fails when there is no row or it is NULL. */
#define DYN_INT(t, ...) dyn_int_of(e2e_sql((t), __VA_ARGS__), #__VA_ARGS__)

static long long dyn_int_of(const char *value, const char *query) {
    cr_assert_not_null(value, "no value from %s", query);
    return atoll(value);
}

/* s, or a placeholder that no expected value equals. */
static const char *dyn_str(const char *s) { return s ? s : "(no row)"; }

/* A LIKE pattern matching the recorded filename of an example (CPython
 * records the script's absolute path). */
static const char *dyn_file(const char *name) { return e2e_fmt("%%/%s", name); }

/* Skips the test while examples/<name> has not been written. */
static void dyn_need_example(const char *name) {
    if (access(e2e_example_path(name), R_OK) != 0)
        cr_skip_test("examples/%s does not exist yet", name);
}

/* Copies examples/<name>, runs it under python and under `dynrec run -q -o
 * T.db`, asserts they behaved alike (stdout and exit status only when
 * stderr_varies: a library may print warnings with times and pids) and
 * exited 0, and returns the checked, complete trace.  *dr_out (when not
 * NULL) gets the dynrec run. */
static DrTrace *dyn_record(const char *name, int stderr_varies, E2eProc **dr_out) {
    e2e_copy_example(name);
    const char *args[] = {name, NULL};
    E2eProc *py = e2e_run_python(args, NULL, E2E_TORCH_TIMEOUT_MS);
    E2eProc *dr = e2e_record("T.db", args, NULL, E2E_TORCH_TIMEOUT_MS);
    if (stderr_varies) e2e_assert_same_stdout(py, dr, name);
    else e2e_assert_same(py, dr, name);
    e2e_assert_exit(dr, 0, name);
    if (dr_out) *dr_out = dr;
    return e2e_check_trace("T.db", 0, "[]", name, NULL);
}

/* Records name a second time, into trace2, and asserts that both traces
 * hold the same canonical keys in the same order. */
static void dyn_assert_deterministic(DrTrace *t, const char *name, const char *trace2) {
    E2eProc *again = e2e_record(trace2, (const char *[]){name, NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(again, 0, e2e_fmt("%s, second recording", name));
    DrTrace *t2 = e2e_open(e2e_path(trace2));
    const char *q = "SELECT key FROM v_canonical ORDER BY seq";
    int n1 = 0, n2 = 0;
    char *k1 = e2e_sql_lines(t, &n1, "%s", q), *k2 = e2e_sql_lines(t2, &n2, "%s", q);
    cr_assert_gt(n1, 10, "%s: only %d canonical keys:\n%s", name, n1, k1);
    if (strcmp(k1, k2) != 0) {
        /* Name the first difference: the lists are long. */
        int line = 1;
        size_t i = 0;
        for (; k1[i] && k1[i] == k2[i]; i++) line += k1[i] == '\n';
        size_t a = i, b = i;
        while (a > 0 && k1[a - 1] != '\n') a--;
        while (k1[b] && k1[b] != '\n') b++;
        const char *l2 = k2 + a;
        cr_assert_fail("%s: v_canonical differs between two recordings (%d vs %d keys); "
                       "first at key %d:\n  first:  %.*s\n  second: %.*s",
                       name, n1, n2, line, (int)(b - a), k1 + a, (int)(strcspn(l2, "\n")), l2);
    }
    e2e_close(t2);
}

/* 1-based number of the first line of file (in the test's directory) that
 * contains tag; the test fails when none does. */
static int dyn_line_of(const char *file, const char *tag) {
    char *text = e2e_slurp(e2e_path(file), NULL);
    cr_assert_not_null(text, "cannot read %s", file);
    const char *at = strstr(text, tag);
    cr_assert_not_null(at, "%s has no line with %s", file, tag);
    int line = 1;
    for (const char *c = text; c < at; c++) line += *c == '\n';
    return line;
}

/* The integer literal after "NAME = " at the start of a line of file (a
 * constant of the example the test must agree with). */
static long long dyn_constant(const char *file, const char *name) {
    char *text = e2e_slurp(e2e_path(file), NULL);
    cr_assert_not_null(text, "cannot read %s", file);
    const char *at = strstr(text, e2e_fmt("\n%s = ", name));
    cr_assert_not_null(at, "%s defines no %s", file, name);
    long long v = 0;
    for (at += strlen(name) + 4; (*at >= '0' && *at <= '9') || *at == '_'; at++)
        if (*at != '_') v = v * 10 + (*at - '0'); /* 10_000 is Python for 10000 */
    return v;
}

/* ---- recompiles and guards ---------------------------------------------- */

Test(dynamo, shape_recompiles_fail_the_guards_of_every_older_entry) {
    const char *name = "shape_recompiles.py", *file = dyn_file(name);
    E2eProc *dr = NULL;
    DrTrace *t = dyn_record(name, 0, &dr);
    int calls = 0;
    for (const char *c = dr->out.data; *c; c++) calls += *c == '\n'; /* a line a call */
    cr_assert_eq(calls, 12, "stdout:\n%s", dr->out.data);

    char *compiles = e2e_sql_lines(t, NULL,
                                   "SELECT compile_id || ' ' || outcome || ' ' || recompile"
                                   " FROM v_compiles WHERE filename LIKE %Q AND qualname = 'scale'"
                                   " ORDER BY seq",
                                   file);
    cr_assert_str_eq(compiles, "0/0 compiled 0\n0/1 compiled 1\n0/2 compiled 1\n0/3 compiled 1\n",
                     "compile_id outcome recompile of scale");
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_compiles WHERE qualname = 'scale'"
                            " AND attempts = 1 AND duration_ms > 0"),
                 4);
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_guard_failures WHERE compile_id = '0/0'"), 0);
    /* The size guard points at the line that uses x (torch shortens the
     * path, so only its end is compared). */
    int use = dyn_line_of(name, "return (x * 2 + 1).sum()");
    char *where = e2e_sql(t, "SELECT source || ' @ ' || user_location FROM v_guards"
                             " WHERE compile_id = '0/0' AND guard LIKE 'TENSOR_MATCH:%%'");
    cr_assert(where && strncmp(where, "L['x'] @ ", 9) == 0 &&
                  strstr(where, e2e_fmt("%s:%d in scale", name, use)),
              "source @ user_location of the size guard: %s", where);
    for (int k = 1; k <= 3; k++) {
        /* Compile 0/k ran after every older entry 0/0 .. 0/k-1 failed. */
        char *failed = e2e_sql_lines(t, NULL,
                                     "SELECT failed_compile_id FROM v_guard_failures"
                                     " WHERE compile_id = '0/%d' AND filename LIKE %Q"
                                     " AND qualname = 'scale' ORDER BY failed_compile_id",
                                     k, file);
        char want[64] = "";
        for (int j = 0; j < k; j++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "0/%d\n", j);
        cr_assert_str_eq(failed, want, "entries whose guards failed before compile 0/%d", k);
        char *reasons = e2e_sql_lines(t, NULL,
                                      "SELECT reason FROM v_guard_failures WHERE compile_id ="
                                      " '0/%d' AND reason NOT LIKE '%%size mismatch%%'",
                                      k);
        cr_assert_str_eq(reasons, "", "reasons of 0/%d that do not name the size mismatch:\n%s", k,
                         reasons);
        /* Each entry is specialized to the size it was compiled for. */
        cr_assert_eq(DYN_INT(t,
                             "SELECT count(*) FROM v_guards WHERE compile_id = '0/%d'"
                             " AND qualname = 'scale' AND guard LIKE 'TENSOR_MATCH:%%'"
                             " AND guard LIKE '%%size=[%d]%%'",
                             k, k + 2),
                     1, "no TENSOR_MATCH guard with size=[%d] for 0/%d", k + 2, k);
    }
    cr_assert_eq(DYN_INT(t,
                         "SELECT count(*) FROM v_frames WHERE filename LIKE %Q"
                         " AND qualname = 'scale' AND callbacks = 4 AND compiles = 4"
                         " AND cache_hits = %d",
                         file, calls - 4),
                 1, "v_frames for scale:\n%s",
                 e2e_sql_lines(t, NULL,
                               "SELECT callbacks || ' callbacks, ' || compiles ||"
                               " ' compiles, ' || cache_hits || ' hits' FROM v_frames"
                               " WHERE qualname = 'scale'"));
    e2e_close(t);
    /* `dynrec show` puts the guard failures first, then the compiles. */
    E2eProc *show = e2e_run((const char *[]){e2e_bin, "show", "T.db", NULL});
    e2e_assert_exit(show, 0, "dynrec show");
    const char *gf = strstr(show->out.data, "DYNAMO\nguard failures");
    const char *cp = strstr(show->out.data, "\ncompiles\n");
    cr_assert(gf && cp && gf < cp, "show output:\n%s", show->out.data);
    cr_assert(strstr(gf, "0/3  rejects 0/0  scale"), "show output:\n%s", show->out.data);
}

Test(dynamo, dynamic_shapes_guard_on_symbolic_sizes) {
    const char *name = "dynamic_shapes.py", *file = dyn_file(name);
    DrTrace *t = dyn_record(name, 0, NULL);
    char *compiles = e2e_sql_lines(t, NULL,
                                   "SELECT compile_id || ' ' || outcome || ' ' || recompile"
                                   " FROM v_compiles WHERE filename LIKE %Q AND qualname = 'norm'",
                                   file);
    cr_assert_str_eq(compiles, "0/0 compiled 0\n", "one compile serves every size");
    cr_assert_gt(DYN_INT(t,
                         "SELECT count(*) FROM v_guards WHERE compile_id = '0/0'"
                         " AND filename LIKE %Q AND qualname = 'norm'"
                         " AND guard LIKE '%%L[''x''].size()[0]%%'",
                         file),
                 0, "no guard on L['x'].size()[0]; guards:\n%s",
                 e2e_sql_lines(t, NULL, "SELECT guard FROM v_guards"));
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_guards WHERE guard LIKE '%%size=[3]%%'"), 0,
                 "a guard pins x to the first size, 3");
    /* The graph takes the size as a symbol (s<n>): a SymInt input, or a
     * tensor input whose shape names it. */
    cr_assert_gt(DYN_INT(t, "SELECT count(*) FROM v_graphs g, json_each(g.inputs) i"
                            " WHERE g.compile_id = '0/0' AND"
                            " (json_extract(i.value, '$.symint') GLOB 's[0-9]*'"
                            " OR json_extract(i.value, '$.shape') GLOB '*\"s[0-9]*')"),
                 0, "no symbolic size among the graph's inputs:\n%s",
                 e2e_sql_lines(t, NULL, "SELECT inputs FROM v_graphs"));
    cr_assert_eq(DYN_INT(t,
                         "SELECT cache_hits FROM v_frames WHERE filename LIKE %Q"
                         " AND qualname = 'norm'",
                         file),
                 3, "4 calls, 1 compile");
    e2e_close(t);
}

/* ---- graph breaks and determinism --------------------------------------- */

Test(dynamo, graph_break_is_recorded_at_its_line_and_deterministically) {
    const char *name = "graph_breaks.py", *file = dyn_file(name);
    DrTrace *t = dyn_record(name, 0, NULL);
    int line = dyn_line_of(name, "# GRAPH_BREAK");
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_graph_breaks"), 1, "graph breaks:\n%s",
                 e2e_sql_lines(t, NULL,
                               "SELECT compile_id || ' ' || lineno || ' ' || type"
                               " FROM v_graph_breaks"));
    char *row = e2e_sql(t,
                        "SELECT compile_id || ' ' || qualname || ' ' || lineno"
                        " FROM v_graph_breaks WHERE filename LIKE %Q",
                        file);
    cr_assert_not_null(row, "no graph break in %s", name);
    cr_assert_str_eq(row, e2e_fmt("0/0 step %d", line), "compile, function and line");
    char *reason = e2e_sql(t, "SELECT reason FROM v_graph_breaks");
    cr_assert(reason && strstr(reason, "graph_break()"), "reason: %s", reason);
    char *stack = e2e_sql(t, "SELECT user_stack FROM v_graph_breaks");
    cr_assert(stack && strstr(stack, e2e_fmt("%s:%d", name, line)), "user_stack: %s", stack);
    /* The code on both sides of the break is compiled: step and its resume
     * function, one graph each. */
    cr_assert_eq(DYN_INT(t,
                         "SELECT count(*) FROM v_compiles WHERE outcome = 'compiled'"
                         " AND filename LIKE %Q AND (qualname = 'step'"
                         " OR qualname LIKE 'torch_dynamo_resume_in_step%%')",
                         file),
                 2);
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_graphs WHERE nodes > 0"), 2);
    /* The break is found in the first attempt, which is rolled back and
     * restarted; the second attempt compiles up to it. */
    cr_assert_eq(DYN_INT(t, "SELECT attempts FROM v_compiles WHERE compile_id = '0/0'"), 2);
    char *spec = e2e_sql_lines(t, NULL,
                               "SELECT action FROM v_speculation"
                               " WHERE compile_id = '0/0' ORDER BY seq");
    cr_assert_str_eq(spec, "checkpoint\nrollback\nrestart\ncheckpoint\n", "speculation of 0/0");
    dyn_assert_deterministic(t, name, "T2.db");
    e2e_close(t);
}

Test(dynamo, hot_loop_cache_hits_are_calls_minus_compiles_deterministically) {
    const char *name = "hot_loop.py", *file = dyn_file(name);
    E2eProc *dr = NULL;
    DrTrace *t = dyn_record(name, 0, &dr);
    long long calls = atoll(dr->out.data); /* the script prints its number of calls first */
    cr_assert_eq(calls, dyn_constant(name, "CALLS"), "stdout:\n%s", dr->out.data);
    long long compiles = DYN_INT(t,
                                 "SELECT count(*) FROM v_compiles WHERE filename LIKE %Q"
                                 " AND qualname = 'axpy' AND outcome = 'compiled'",
                                 file);
    cr_assert_eq(compiles, 1, "one shape, one compile");
    char *frame = e2e_sql(t,
                          "SELECT compiles || ' ' || cache_hits FROM v_frames"
                          " WHERE filename LIKE %Q AND qualname = 'axpy'",
                          file);
    cr_assert_not_null(frame, "no v_frames row for axpy");
    cr_assert_str_eq(frame, e2e_fmt("%lld %lld", compiles, calls - compiles),
                     "v_frames compiles, cache_hits of axpy");
    dyn_assert_deterministic(t, name, "T2.db");
    e2e_close(t);
}

/* ---- a failing hook ------------------------------------------------------- */

/* A recording hook that fails is recorded and switches itself off; the
 * program's output does not change and the other hooks go on. */
Test(dynamo, failing_hook_is_recorded_and_switches_itself_off) {
    setenv("DYNREC_FAULT_HOOK", "callback", 1);
    DrTrace *t = dyn_record("shape_recompiles.py", 0, NULL);
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_ev WHERE kind = 'recorder_error'"
                            " AND text LIKE 'callback: RuntimeError: fault injected%%'"),
                 1, "one recorder_error for the callback hook");
    cr_assert_str_eq(dyn_str(e2e_meta(t, "hook.callback")), "disabled after an error");
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_ev WHERE kind = 'callback'"), 0);
    cr_assert_gt(DYN_INT(t, "SELECT count(*) FROM v_compiles WHERE outcome = 'compiled'"), 1,
                 "the compile hook went on recording");
    cr_assert_gt(DYN_INT(t, "SELECT count(*) FROM v_guard_failures"), 0);
    e2e_close(t);
    /* Its traceback names the adapter's real file and line (recorder/embed.h). */
    E2eProc *tb = e2e_run((const char *[]){e2e_bin, "sql", "T.db",
                                           "SELECT dynrec_text(blob_id) FROM v_ev"
                                           " WHERE kind = 'recorder_error'",
                                           NULL});
    e2e_assert_exit(tb, 0, "dynrec sql");
    const char *at = strstr(tb->out.data, "File \"<dynrec recorder/dynamo.py>\", line ");
    cr_assert_not_null(at, "%s", tb->out.data);
    int line = atoi(at + strlen("File \"<dynrec recorder/dynamo.py>\", line "));
    char *src = e2e_slurp(e2e_example_path("../recorder/dynamo.py"), NULL);
    cr_assert_not_null(src);
    const char *l = src;
    for (int i = 1; i < line && l; i++) l = (l = strchr(l, '\n')) ? l + 1 : NULL;
    const char *raise = "raise RuntimeError(\"fault injected";
    cr_assert(l && strncmp(l + strspn(l, " "), raise, strlen(raise)) == 0,
              "line %d of recorder/dynamo.py is not the raise: %.80s", line, l ? l : "");
}

/* ---- errors -------------------------------------------------------------- */

Test(dynamo, suppressed_backend_error_falls_back_to_eager) {
    const char *name = "suppressed_error.py", *file = dyn_file(name);
    E2eProc *dr = NULL;
    DrTrace *t = dyn_record(name, 0, &dr);
    /* What eager mode computes, and nothing on stderr. */
    cr_assert_str_eq(dr->out.data, "0 [0.0, 0.0, 0.0, 3.0, 6.0]\n1 [0.0, 0.0, 3.0, 6.0, 9.0]\n"
                                   "2 [0.0, 3.0, 6.0, 9.0, 12.0]\n");
    cr_assert_str_eq(dr->err.data, "");
    char *err = e2e_sql_lines(t, NULL,
                              "SELECT compile_id || ' ' || exc_type || ' ' ||"
                              " suppressed FROM v_errors ORDER BY seq");
    cr_assert_str_eq(err, "0/0 BackendCompilerFailed 1\n", "v_errors");
    char *msg = e2e_sql(t, "SELECT message FROM v_errors");
    cr_assert(msg && strstr(msg, "broken_backend refuses every graph"), "message: %s", msg);
    cr_assert_str_eq(dyn_str(e2e_sql(t,
                                     "SELECT outcome FROM v_compiles WHERE filename LIKE %Q"
                                     " AND qualname = 'f'",
                                     file)),
                     "error");
    cr_assert_str_eq(dyn_str(e2e_sql(t, "SELECT group_concat(backend) FROM v_graphs")),
                     "broken_backend");
    e2e_close(t);
}

Test(dynamo, backend_error_reaches_the_user_and_names_the_backend) {
    const char *name = "backend_raises.py";
    E2eProc *dr = NULL;
    DrTrace *t = dyn_record(name, 0, &dr);
    cr_assert_str_eq(dr->out.data, "caught BackendCompilerFailed\n");
    char *err = e2e_sql_lines(t, NULL,
                              "SELECT compile_id || ' ' || exc_type || ' ' ||"
                              " suppressed FROM v_errors ORDER BY seq");
    cr_assert_str_eq(err, "0/0 BackendCompilerFailed 0\n", "v_errors");
    char *msg = e2e_sql(t, "SELECT message FROM v_errors");
    cr_assert(msg && strstr(msg, "exploding_backend cannot compile this"), "message: %s", msg);
    char *graphs = e2e_sql_lines(t, NULL,
                                 "SELECT compile_id || ' ' || backend FROM v_graphs"
                                 " WHERE nodes > 0");
    cr_assert_str_eq(graphs, "0/0 exploding_backend\n", "v_graphs");
    e2e_close(t);
}

/* ---- threads ------------------------------------------------------------- */

Test(dynamo, two_threads_both_go_through_dynamo) {
    const char *name = "two_threads.py", *file = dyn_file(name);
    DrTrace *t = dyn_record(name, 0, NULL);
    long long calls = 2 * dyn_constant(name, "CALLS");
    /* Each thread's first call misses the cache (its own size). */
    const char *mix = "FROM v_ev e JOIN v_code c ON c.code_id = e.code_id"
                      " WHERE c.filename LIKE %Q AND c.qualname = 'mix'";
    cr_assert_eq(DYN_INT(t,
                         e2e_fmt("SELECT count(DISTINCT e.thread) %s AND e.kind = 'callback'", mix),
                         file),
                 2, "callbacks of mix by thread:\n%s",
                 e2e_sql_lines(t, NULL,
                               e2e_fmt("SELECT e.thread || ' ' || e.kind || ' ' ||"
                                       " count(*) %s GROUP BY e.thread, e.kind",
                                       mix),
                               file));
    cr_assert_eq(
        DYN_INT(t, e2e_fmt("SELECT count(DISTINCT e.thread) %s AND e.kind = 'compile'", mix), file),
        2, "each thread compiles its size");
    char *frame = e2e_sql(t,
                          "SELECT callbacks || ' ' || compiles || ' ' || cache_hits || ' ' ||"
                          " compiled_runs FROM v_frames WHERE filename LIKE %Q"
                          " AND qualname = 'mix'",
                          file);
    cr_assert_not_null(frame, "no v_frames row for mix");
    cr_assert_str_eq(frame, e2e_fmt("2 2 %lld %lld", calls - 2, calls),
                     "v_frames callbacks, compiles, cache_hits, compiled_runs of mix");
    cr_assert_eq(e2e_calls(t, name, "mix"), calls, "frames of mix counted");
    e2e_close(t);
}

/* ---- inductor (the only test that compiles with it) ----------------------- */

Test(dynamo, inductor_model_graph_goes_to_inductor) {
    const char *name = "inductor_model.py", *file = dyn_file(name);
    DrTrace *t = dyn_record(name, 1, NULL);
    char *compiles = e2e_sql_lines(t, NULL,
                                   "SELECT compile_id || ' ' || qualname || ' ' ||"
                                   " outcome FROM v_compiles WHERE filename LIKE %Q",
                                   file);
    cr_assert_str_eq(compiles,
                     e2e_python_minor() == 10 ? "0/0 forward compiled\n"
                                              : "0/0 Mlp.forward compiled\n",
                     "v_compiles");
    /* The view names the backend as torch.compile(backend="inductor") does. */
    char *graphs = e2e_sql_lines(t, NULL, "SELECT compile_id || ' ' || backend FROM v_graphs");
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_graphs WHERE compile_id = '0/0'"
                            " AND backend = 'inductor' AND nodes > 0"),
                 1, "v_graphs:\n%s", graphs);
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_errors"), 0);
    cr_assert_eq(DYN_INT(t,
                         "SELECT cache_hits FROM v_frames WHERE filename LIKE %Q"
                         " AND qualname = %Q",
                         file, e2e_python_minor() == 10 ? "forward" : "Mlp.forward"),
                 2, "3 calls, 1 compile");
    e2e_close(t);
}

/* ---- speculation and side effects (examples written elsewhere) ------------ */

Test(dynamo, cond_branches_roll_back_and_drop_side_effects) {
    const char *name = "cond_side_effect.py";
    dyn_need_example(name);
    DrTrace *t = dyn_record(name, 0, NULL);
    const char *actions[] = {"checkpoint", "rollback", "merge"};
    for (size_t i = 0; i < sizeof actions / sizeof *actions; i++)
        cr_assert_gt(DYN_INT(t, "SELECT count(*) FROM v_speculation WHERE action = %Q", actions[i]),
                     0, "no '%s' in v_speculation:\n%s", actions[i],
                     e2e_sql_lines(t, NULL,
                                   "SELECT compile_id || ' ' || action || ' ' ||"
                                   " detail FROM v_speculation ORDER BY seq"));
    /* A branch rolls back what its checkpoint saved: a checkpoint comes
     * first in the same compile. */
    cr_assert_gt(DYN_INT(t, "SELECT count(*) FROM v_speculation r WHERE r.action = 'rollback'"
                            " AND EXISTS (SELECT 1 FROM v_speculation c WHERE"
                            " c.action = 'checkpoint' AND c.compile_id = r.compile_id"
                            " AND c.seq < r.seq)"),
                 0);
    char *effects = e2e_sql_lines(t, NULL,
                                  "SELECT compile_id || ' ' || status || ' ' ||"
                                  " description FROM v_side_effects ORDER BY seq");
    cr_assert_gt(DYN_INT(t, "SELECT count(*) FROM v_side_effects WHERE status = 'dropped'"), 0,
                 "nothing dropped:\n%s", effects);
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_side_effects WHERE status = 'applied'"), 0,
                 "no side effect survives a cond branch:\n%s", effects);
    e2e_close(t);
}

Test(dynamo, closure_cell_store_is_applied) {
    const char *name = "closure_cell.py";
    dyn_need_example(name);
    E2eProc *dr = NULL;
    DrTrace *t = dyn_record(name, 0, &dr);
    cr_assert_not_null(strstr(dr->out.data, "hits = 3\n"), "stdout:\n%s", dr->out.data);
    char *effects = e2e_sql_lines(t, NULL,
                                  "SELECT compile_id || ' ' || status || ' ' ||"
                                  " description FROM v_side_effects ORDER BY seq");
    cr_assert_gt(DYN_INT(t, "SELECT count(*) FROM v_side_effects WHERE status = 'applied'"
                            " AND description LIKE '%%hits%%'"),
                 0, "no applied store to the cell hits:\n%s", effects);
    cr_assert_eq(DYN_INT(t, "SELECT count(*) FROM v_side_effects WHERE status = 'dropped'"), 0,
                 "dropped:\n%s", effects);
    e2e_close(t);
}
