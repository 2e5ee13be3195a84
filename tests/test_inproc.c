#define _GNU_SOURCE 1
/* test_inproc.c -- the in-process recorder: `import dynrec`, then
 * dynrec.record / start / stop, in a real python with real torch.compile.
 *
 * The package is the build's (DYNREC_PKG: build/pkg, laid out as pip
 * installs it); the tests skip without it.  The traces are read through SQL
 * and through the real binary's show, diff and replay. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_util.h"

TestSuite(inproc, .init = e2e_setup, .fini = e2e_teardown, .timeout = 300);

/* `python script args...` with the build's dynrec package importable. */
static E2eProc *run_py(const char *script, const char *a1, const char *a2, const char *a3) {
    const char *pkg = getenv("DYNREC_PKG");
    if (!pkg || !*pkg) cr_skip_test("DYNREC_PKG must name the build's package directory");
    e2e_copy_script(e2e_fmt("inproc/%s", script));
    const char *argv[] = {"/usr/bin/env",
                          e2e_fmt("PYTHONPATH=%s", pkg),
                          e2e_python,
                          e2e_fmt("inproc/%s", script),
                          a1,
                          a2,
                          a3,
                          NULL};
    E2eProc *p = e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
    return p;
}

static E2eProc *dynrec(const char *cmd, const char *a, const char *b) {
    const char *argv[] = {e2e_bin, cmd, a, b, NULL};
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

Test(inproc, a_block_holds_exactly_its_own_compiles) {
    E2eProc *p = run_py("block.py", "B.db", NULL, NULL);
    e2e_assert_exit(p, 0, "block.py");
    cr_assert_str_eq(p->out.data, "recorded True None\ndone\n");
    cr_assert_str_eq(p->err.data, "", "nothing on stderr: %s", p->err.data);
    DrTrace *t = e2e_open(e2e_path("B.db"));
    cr_assert_str_eq(e2e_meta(t, "recorded_by"), "in-process");
    cr_assert_str_eq(e2e_meta(t, "inprocess.compiles_before"), "1");
    cr_assert_str_eq(e2e_meta(t, "inprocess.torch_imported"), "1");
    cr_assert_str_eq(e2e_meta(t, "exit_status"), "0");
    cr_assert_str_eq(e2e_meta(t, "hook.set_eval_frame"), "active");
    /* The block's compiles, and neither the one before nor the one after. */
    char *compiles = e2e_sql_lines(t, NULL,
                                   "SELECT qualname || ' ' || compile_id || ' ' || "
                                   "recompile FROM v_compiles ORDER BY seq");
    cr_assert_str_eq(compiles, "early 0/1 1\ninside 1/0 0\n");
    /* The recompile names the entry made before start that it rejected. */
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_guard_failures"), 1);
    /* inside's second call is a cache hit, counted by the frame hook. */
    cr_assert_eq(e2e_sql_int(t, "SELECT cache_hits FROM v_frames WHERE qualname = 'inside'"), 1);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_files WHERE role = 'script' AND "
                                "path LIKE '%inproc/block.py'"),
                 1, "the script's source is stored");
    e2e_close(t);

    E2eProc *show = dynrec("show", "B.db", NULL);
    e2e_assert_exit(show, 0, "show");
    cr_assert(strstr(show->out.data, "inside"), "%s", show->out.data);

    /* Two recordings of one script are the same decisions. */
    E2eProc *p2 = run_py("block.py", "B2.db", NULL, NULL);
    e2e_assert_exit(p2, 0, "block.py again");
    E2eProc *diff = dynrec("diff", "B.db", "B2.db");
    e2e_assert_exit(diff, 0, "diff of two recordings");

    /* A re-run would record the whole program: refused, said why. */
    E2eProc *rr = dynrec("rerun", "B.db", NULL);
    e2e_assert_exit(rr, 2, "rerun of an in-process trace");
    cr_assert(strstr(rr->err.data, "recorded in process"), "%s", rr->err.data);

    /* Replay: the first compile reproduces; the recompile of an entry made
     * before start cannot, and says why instead of diverging. */
    E2eProc *rp = dynrec("replay", "B.db", NULL);
    e2e_assert_exit(rp, 3, "replay: identical, one frame not replayable");
    cr_assert(strstr(rp->out.data, "reproduced 1/1 compile") ||
                  strstr(rp->err.data, "reproduced 1/1 compile"),
              "out: %s\nerr: %s", rp->out.data, rp->err.data);
    cr_assert(strstr(rp->out.data, "before dynrec.start()") ||
                  strstr(rp->err.data, "before dynrec.start()"),
              "out: %s\nerr: %s", rp->out.data, rp->err.data);
}

Test(inproc, sessions_one_after_another_and_misuse) {
    E2eProc *p = run_py("sessions.py", "S1.db", "S2.db", "S3.db");
    e2e_assert_exit(p, 0, "sessions.py");
    cr_assert_str_eq(p->out.data, "second start refused: True\nstop 1: True\nstop again: None\n"
                                  "the block's exception: 'from the block'\ndone\n");
    DrTrace *t1 = e2e_open(e2e_path("S1.db"));
    cr_assert_str_eq(e2e_sql_lines(t1, NULL, "SELECT qualname FROM v_compiles ORDER BY seq"),
                     "first\n");
    cr_assert_str_eq(e2e_meta(t1, "inprocess.compiles_before"), "0");
    e2e_close(t1);
    DrTrace *t2 = e2e_open(e2e_path("S2.db"));
    cr_assert_str_eq(e2e_sql_lines(t2, NULL,
                                   "SELECT qualname || ' ' || recompile FROM "
                                   "v_compiles ORDER BY seq"),
                     "second 0\nsecond 1\n");
    cr_assert_str_eq(e2e_meta(t2, "inprocess.compiles_before"), "1");
    cr_assert_eq(e2e_sql_int(t2, "SELECT count(*) FROM v_events WHERE kind = 'config' AND "
                                 "text = 'initial'"),
                 1, "each session has its config");
    cr_assert_eq(e2e_sql_int(t2, "SELECT count(*) FROM v_files WHERE role = 'script'"), 1);
    e2e_close(t2);
    /* A block that raised: exit status 1, the exception the program's. */
    DrTrace *t3 = e2e_open(e2e_path("S3.db"));
    cr_assert_str_eq(e2e_meta(t3, "exit_status"), "1");
    cr_assert_str_eq(e2e_sql_lines(t3, NULL,
                                   "SELECT qualname || ' ' || recompile FROM "
                                   "v_compiles ORDER BY seq"),
                     "first 1\n");
    e2e_close(t3);
    E2eProc *diff = dynrec("diff", "S1.db", "S2.db");
    e2e_assert_exit(diff, 1, "different sessions differ");
}

Test(inproc, under_dynrec_run_the_api_does_nothing) {
    const char *pkg = getenv("DYNREC_PKG");
    if (!pkg || !*pkg) cr_skip_test("DYNREC_PKG must name the build's package directory");
    e2e_copy_script("inproc/under_run.py");
    const char *argv[] = {"/usr/bin/env", e2e_fmt("PYTHONPATH=%s", pkg), e2e_bin, "run", "-q", "-o",
                          "R.db",         "inproc/under_run.py",         NULL};
    E2eProc *p = e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, "under_run.py");
    cr_assert_str_eq(p->out.data, "inner None None\n");
    cr_assert(access(e2e_path("inner.db"), F_OK) != 0, "no second trace");
    DrTrace *t = e2e_open(e2e_path("R.db"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles"), 1);
    cr_assert_eq(e2e_meta(t, "recorded_by"), NULL);
    e2e_close(t);
}

/* ---- the pytest plugin --------------------------------------------------- */

/* `python -m pytest -q [-p dynrec.pytest_plugin] ARGS`
 * in the test's directory, on a copy of tests/scripts/pytest_plugin/FILE. */
static E2eProc *pytest(const char *file, int plugin, const char *a1, const char *a2) {
    const char *pkg = getenv("DYNREC_PKG");
    if (!pkg || !*pkg) cr_skip_test("DYNREC_PKG must name the build's package directory");
    e2e_copy_script(e2e_fmt("pytest_plugin/%s", file));
    const char *argv[12];
    int n = 0;
    argv[n++] = "/usr/bin/env";
    argv[n++] = e2e_fmt("PYTHONPATH=%s", pkg);
    argv[n++] = e2e_python;
    argv[n++] = "-m";
    argv[n++] = "pytest";
    argv[n++] = "-q";
    if (plugin) {
        argv[n++] = "-p";
        argv[n++] = "dynrec.pytest_plugin";
    }
    argv[n++] = e2e_fmt("pytest_plugin/%s", file);
    argv[n++] = a1;
    argv[n++] = a2;
    argv[n] = NULL;
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* pytest's output with the test's directory as DIR, numbers (timings,
 * addresses) as N and dynrec's own lines left out. */
static char *normal_output(const char *text) {
    char *out = e2e_own(calloc(strlen(text) + 1, 1)), *o = out;
    char *copy = e2e_own(strdup(text)), *hit;
    size_t dl = strlen(e2e_dir);
    while ((hit = strstr(copy, e2e_dir)) != NULL) {
        memcpy(hit, "DIR", 3);
        memmove(hit + 3, hit + dl, strlen(hit + dl) + 1);
    }
    const char *s = copy;
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s + 1) : strlen(s);
        if (strncmp(s, "dynrec: ", 8) != 0) {
            for (size_t i = 0; i < len; i++) {
                if (s[i] == '0' && s[i + 1] == 'x') { /* an address */
                    for (i += 2; i < len && strchr("0123456789abcdef", s[i]) && s[i]; i++) {
                    }
                    i--;
                    memcpy(o, "ADDR", 4);
                    o += 4;
                } else if (s[i] >= '0' && s[i] <= '9') {
                    if (o == out || o[-1] != 'N') *o++ = 'N';
                } else {
                    *o++ = s[i];
                }
            }
        }
        s += len;
    }
    *o = 0;
    return out;
}

Test(inproc, pytest_plugin_writes_a_trace_per_test_and_changes_no_output) {
    E2eProc *plain = pytest("test_plain.py", 0, NULL, NULL);
    e2e_assert_exit(plain, 1, "plain pytest");
    E2eProc *rec = pytest("test_plain.py", 1, "--dynrec", "traces");
    e2e_assert_exit(rec, 1, "pytest --dynrec");
    cr_assert_str_eq(normal_output(rec->out.data), normal_output(plain->out.data));
    cr_assert(strstr(rec->out.data, "dynrec: 3 traces in "), "%s", rec->out.data);
    static const char *const want[][2] = {
        {"test_ok", "passed"}, {"test_bad", "failed"}, {"test_error", "error"}};
    for (size_t i = 0; i < 3; i++) {
        char *path = e2e_path(e2e_fmt("traces/pytest_plugin.test_plain.py::%s.db", want[i][0]));
        DrTrace *t = e2e_open(path);
        cr_assert_str_eq(e2e_meta(t, "test.nodeid"),
                         e2e_fmt("pytest_plugin/test_plain.py::%s", want[i][0]));
        cr_assert_str_eq(e2e_meta(t, "test.outcome"), want[i][1], "%s", want[i][0]);
        cr_assert_str_eq(e2e_meta(t, "exit_status"), i == 0 ? "0" : "1", "%s", want[i][0]);
        if (i < 2)
            cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles"), 1, "%s", want[i][0]);
        e2e_close(t);
    }
}

Test(inproc, pytest_budgets_fail_a_test_with_the_reason_and_keep_its_trace) {
    E2eProc *p = pytest("test_budgets.py", 1, NULL, NULL);
    e2e_assert_exit(p, 1, "pytest with budgets");
    const char *o = p->out.data;
    cr_assert(strstr(o, "FAILED pytest_plugin/test_budgets.py::test_recompiles_over_budget") &&
                  strstr(o, "\ndynrec: 1 recompile, budget 0\n"),
              "%s", o);
    cr_assert(strstr(o, "guard failed: ") && strstr(o, "rank mismatch. expected 1, actual 2"),
              "the guard that failed is named: %s", o);
    cr_assert(strstr(o, "FAILED pytest_plugin/test_budgets.py::test_graph_break_over_budget") &&
                  strstr(o, "\ndynrec: 1 graph break, budget 0\n"),
              "%s", o);
    cr_assert(strstr(o, "torch._dynamo.graph_break()"), "the break's reason: %s", o);
    cr_assert(!strstr(o, "FAILED pytest_plugin/test_budgets.py::test_recompiles_within_budget"),
              "%s", o);
    cr_assert(!strstr(o, "FAILED pytest_plugin/test_budgets.py::test_passes"), "%s", o);
    cr_assert(strstr(o, "3 failed, 4 passed"), "%s", o);
    /* Without --dynrec only the traces over budget are kept, in pytest's
     * cache directory. */
    const char *kept =
        ".pytest_cache/d/dynrec/pytest_plugin.test_budgets.py::test_recompiles_over_budget.db";
    DrTrace *t = e2e_open(e2e_path(kept));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles WHERE recompile"), 1);
    e2e_close(t);
    cr_assert(access(e2e_path(".pytest_cache/d/dynrec/"
                              "pytest_plugin.test_budgets.py::test_passes.db"),
                     F_OK) != 0,
              "a trace within budget is not kept");

    /* The command-line budget applies to every test; a marker wins. */
    E2eProc *q = pytest("test_budgets.py", 1, "--dynrec-max-graph-breaks=5", "-k passes or param");
    e2e_assert_exit(q, 0, "budgets met");
}

/* ---- notebooks ----------------------------------------------------------- */

Test(inproc, a_jupyter_kernel_stores_its_cells_and_replays) {
    E2eProc *p = run_py("notebook.py", e2e_path("NB.db"), NULL, NULL);
    if (WIFEXITED(p->status) && WEXITSTATUS(p->status) == 77) cr_skip_test("%s", p->out.data);
    e2e_assert_exit(p, 0, "notebook.py");
    cr_assert(strstr(p->out.data, "stream 5.5244"), "the cell's output: %s", p->out.data);
    DrTrace *t = e2e_open(e2e_path("NB.db"));
    cr_assert_str_eq(e2e_meta(t, "module"), "__main__");
    /* The cell that defines f is stored, as the kernel compiled it. */
    E2eProc *cell = dynrec("sql", "NB.db",
                           "SELECT dynrec_text(f.blob_id) FROM v_files f JOIN v_compiles c "
                           "ON c.filename = f.path WHERE f.role = 'source' LIMIT 1");
    e2e_assert_exit(cell, 0, "dynrec sql");
    cr_assert(strstr(cell->out.data, "def f(x):\n    return x.sin() + 1"), "%s", cell->out.data);
    cr_assert_str_eq(e2e_sql_lines(t, NULL,
                                   "SELECT compile_id || ' ' || recompile FROM "
                                   "v_compiles ORDER BY seq"),
                     "0/0 0\n0/1 1\n");
    e2e_close(t);
    E2eProc *rp = dynrec("replay", "NB.db", NULL);
    e2e_assert_exit(rp, 0, "replay of the notebook's compiles");
    cr_assert(strstr(rp->out.data, "reproduced 2/2 compiles"), "%s", rp->out.data);
}

Test(inproc, pytest_traces_of_later_tests_replay_like_the_first) {
    /* Each test after the first records in a process that compiled and
     * reset before: its compile ids start a new epoch at its own first
     * reset, and its config snapshot is taken as Dynamo turns on, as in a
     * replay. */
    E2eProc *p = pytest("test_torch_case.py", 1, "--dynrec", "traces");
    e2e_assert_exit(p, 0, "pytest --dynrec on a torch TestCase file");
    const char *second =
        "traces/pytest_plugin.test_torch_case.py::Recompiles::test_second_recompiles.db";
    DrTrace *t = e2e_open(e2e_path(second));
    cr_assert_str_eq(e2e_sql_lines(t, NULL, "SELECT compile_id FROM v_compiles ORDER BY seq"),
                     "1:0/0\n1:0/1\n");
    e2e_close(t);
    E2eProc *rp = dynrec("replay", second, NULL);
    e2e_assert_exit(rp, 0, "replay of the second test");
    cr_assert(strstr(rp->out.data, "reproduced 2/2 compiles"), "%s", rp->out.data);
}

/* A test written as Dynamo's own are: pytest rewrote its assert (the graph
 * names the rewritten locals, _py_assert1), it passes a dataclass defined
 * inside the test and a tensor with an attribute of its own.  The replay
 * rewrites the stored source's asserts as pytest did, applies the real
 * @dataclass to the class it rebuilds and sets the attribute: every compile
 * reproduces, graphs included, confined. */
Test(inproc, pytest_rewritten_asserts_local_dataclasses_and_tensor_attributes_replay) {
    E2eProc *p = pytest("test_dynamo_style.py", 1, "--dynrec", "traces");
    e2e_assert_exit(p, 0, "pytest --dynrec on a Dynamo-style test");
    const char *trace = "traces/pytest_plugin.test_dynamo_style.py::Style::"
                        "test_assert_local_dataclass_tensor_attribute.db";
    /* torch 2.13 names the graph's torch.ones(()) node after the local
     * pytest's rewriter stores it in (_py_assert1), so a replay that does
     * not rewrite the file the same way traces another graph; torch 2.14
     * names it after the call (ones) either way.  The graphs name one or
     * the other, and the replay below must reproduce whichever it is. */
    const char *argv[] = {e2e_bin,
                          "sql",
                          "--csv",
                          trace,
                          "SELECT count(*) FROM v_graphs WHERE instr(dynrec_text(code_blob), "
                          "'_py_assert') > 0 OR instr(dynrec_text(code_blob), "
                          "'ones = torch.ones(())') > 0",
                          NULL};
    E2eProc *g = e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(g, 0, "dynrec sql");
    cr_assert(atoi(strchr(g->out.data, '\n') + 1) == 2,
              "the recorded graphs do not hold the assert's torch.ones(()): %s", g->out.data);
    DrTrace *t = e2e_open(e2e_path(trace));
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_values WHERE kind = 'tensor' AND "
                                "json_extract(value, '$.attrs') IS NOT NULL"),
                 0);
    long long n = e2e_sql_int(t, "SELECT count(*) FROM v_compiles");
    e2e_close(t);
    E2eProc *rp = dynrec("replay", trace, NULL);
    e2e_assert_exit(rp, 0, "replay of the Dynamo-style test");
    cr_assert(strstr(rp->out.data, e2e_fmt("reproduced %lld/%lld compiles", n, n)), "%s",
              rp->out.data);
}

/* ---- real models ---------------------------------------------------------- */

Test(inproc, transformers_models_recorded_in_process_replay) {
    if (e2e_asan) {
        printf("inproc.transformers: skipped under ASan (its replays outlast the timeout)\n");
        return;
    }
    E2eProc *has = e2e_run((const char *[]){e2e_python, "-c", "import transformers", NULL});
    if (!WIFEXITED(has->status) || WEXITSTATUS(has->status) != 0) {
        printf("inproc.transformers: skipped: no transformers in %s\n", e2e_python);
        return;
    }
    setenv("HF_HUB_OFFLINE", "1", 1);
    E2eProc *p = run_py("hf_models.py", e2e_dir, NULL, NULL);
    e2e_assert_exit(p, 0, "hf_models.py");
    /* GPT-2: its recompile rejects the entry made before the block. */
    E2eProc *g = dynrec("replay", "gpt2.db", NULL);
    cr_assert(strstr(g->out.data, "recompiles a cache entry made before dynrec.start()"), "%s",
              g->out.data);
    /* BERT: Dynamo's installed globals are numbered by the output graphs
     * the process made before (G['_..._c2'] here, _c0 in the replay). */
    E2eProc *b = dynrec("replay", "bert.db", NULL);
    e2e_assert_exit(b, 0, "replay of BERT");
    cr_assert(strstr(b->out.data, "reproduced 1/1 compile"), "%s", b->out.data);
    E2eProc *l = dynrec("replay", "llama.db", NULL);
    e2e_assert_exit(l, 0, "replay of the Llama training step");
    cr_assert(strstr(l->out.data, "reproduced 2/2 compiles"), "%s", l->out.data);
}
