#define _GNU_SOURCE 1
/* test_identity.c -- end-to-end tests of compile identity and masking: "the
 * same decision" across torch._dynamo.reset(), object ids and addresses.
 *
 * Real torch, the real binary, the scripts of tests/scripts/identity/: a
 * script that resets Dynamo between rounds, a pytest file written as
 * PyTorch's own tests are (torch._dynamo.test_case.TestCase resets in setUp
 * and tearDown), a frame whose guards name a global Dynamo installs under
 * an object id, a CompileCounter backend (its repr holds an address) and a
 * run that logs through torch's logging (timestamps and pids in stderr).
 * Each is recorded and checked through SQL, recorded again and diffed, and
 * replayed; where it counts, repro and report too. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "e2e_util.h"

TestSuite(identity, .init = e2e_setup, .fini = e2e_teardown, .timeout = 300);

static E2eProc *sh(const char *cmd, int timeout_ms) {
    return e2e_run_in((const char *[]){"/bin/sh", "-c", cmd, NULL}, NULL, timeout_ms);
}

static E2eProc *dynrec(const char *const *args) {
    const char *argv[20] = {e2e_bin};
    for (int i = 0; args[i] && i < 18; i++) argv[i + 1] = args[i];
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* Records `dynrec run -q -o trace ARGS` (a shell word list) in the test's
 * directory with env (shell assignments, or "") before it; exit 0. */
static void record(const char *env, const char *trace, const char *args) {
    E2eProc *p = sh(e2e_fmt("cd '%s' && %s '%s' run -q -o '%s' %s >/dev/null", e2e_dir, env,
                            e2e_bin, trace, args),
                    E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, e2e_fmt("recording %s: %s", args, p->err.data));
}

static void assert_diff_identical(const char *a, const char *b, const char *what) {
    E2eProc *d = dynrec((const char *[]){"diff", a, b, NULL});
    cr_assert_eq(d->status, 0, "%s: two recordings differ:\n%s%s", what, d->out.data, d->err.data);
    cr_assert(strncmp(d->out.data, "identical: ", 11) == 0, "%s:\n%s", what, d->out.data);
}

/* Replays trace from the directory elsewhere/ with the sources moved away
 * (--trust: they come from the trace); exit 0, every compile reproduced. */
static void assert_replays(const char *trace, long long compiles, const char *what) {
    E2eProc *p = sh(e2e_fmt("cd '%s' && mkdir -p gone elsewhere && mv *.py gone/ 2>/dev/null; "
                            "cd elsewhere && exec '%s' replay --trust -o r-%s '../%s'",
                            e2e_dir, e2e_bin, trace, trace),
                    E2E_TORCH_TIMEOUT_MS);
    cr_assert_eq(p->status, 0, "%s: replay exit %s:\n%s%s", what, e2e_status_text(p->status),
                 p->out.data, p->err.data);
    char *want = e2e_fmt("reproduced %lld/%lld compiles", compiles, compiles);
    cr_assert_not_null(strstr(p->out.data, want), "%s: want '%s':\n%s", what, want, p->out.data);
    /* The sources come back for the next step of the test. */
    sh(e2e_fmt("cd '%s' && mv gone/*.py . 2>/dev/null; true", e2e_dir), E2E_TIMEOUT_MS);
}

/* Two frames compiled, torch._dynamo.reset(), compiled again, twice: each
 * epoch's compiles are their own, with their own ordinals and failures. */
Test(identity, reset_between_rounds) {
    e2e_copy_script("identity/reset_frames.py");
    record("", "t.db", "identity/reset_frames.py");
    DrTrace *t = e2e_open(e2e_path("t.db"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_events WHERE kind = 'reset'"), 2);
    cr_assert_str_eq(e2e_sql(t, "SELECT value FROM meta WHERE key = 'hook.reset'"), "active");
    /* Per frame and epoch: f once in each of 3 epochs, g twice (a
     * recompile on n) in each of 2; compile ids restart, keys do not. */
    cr_assert_str_eq(e2e_sql_lines(t, NULL,
                                   "SELECT qualname || ' ' || epoch || ' ' || count(*)"
                                   " || ' ' || sum(recompile) FROM v_compiles"
                                   " GROUP BY qualname, epoch ORDER BY qualname, epoch"),
                     "f 0 1 0\nf 1 1 0\nf 2 1 0\ng 0 2 1\ng 1 2 1\n");
    cr_assert_eq(e2e_sql_int(t, "SELECT count(DISTINCT compile_id) FROM v_compiles"), 7);
    cr_assert_str_eq(e2e_sql_lines(t, NULL,
                                   "SELECT compile_id || ' ' || failed_compile_id"
                                   " FROM v_guard_failures ORDER BY seq"),
                     "1/1 1/0\n1:1/1 1:1/0\n");
    /* Guards belong to their own compile: one set per compile. */
    cr_assert_eq(e2e_sql_int(t, "SELECT count(DISTINCT compile_id) FROM v_guards"), 7);
    e2e_close(t);

    E2eProc *s = dynrec((const char *[]){"show", "t.db", NULL});
    cr_assert_not_null(strstr(s->out.data, "epoch 2 begins  after 6 compiles"), "%s", s->out.data);

    /* repro of the recompile after the first reset: that epoch's two
     * compiles, no call of another epoch. */
    E2eProc *r =
        dynrec((const char *[]){"repro", "--compile", "1:1/1", "-o", "repro.py", "t.db", NULL});
    e2e_assert_exit(r, 0, r->err.data);
    char *script = e2e_slurp(e2e_path("repro.py"), NULL);
    cr_assert_not_null(strstr(script, "# ---- call 2 of 2: recorded compile 1:1/1"), "%s", script);
    cr_assert_null(strstr(script, "recorded compile 1/0"), "%s", script);

    assert_replays("t.db", 7, "reset_frames.py");
    DrTrace *rt = e2e_open(e2e_path("elsewhere/r-t.db"));
    cr_assert_eq(e2e_sql_int(rt, "SELECT count(*) FROM v_events WHERE kind = 'reset'"), 2);
    cr_assert_eq(e2e_sql_int(rt, "SELECT count(*) FROM v_compiles WHERE epoch = 2"), 1);
}

/* A pytest file whose TestCase resets in setUp and tearDown, run with
 * `dynrec run -m pytest`: 7 compiles of 3 tests, never merged. */
Test(identity, pytest_testcase_resets) {
    e2e_copy_script("identity/test_reset_case.py");
    const char *args = "-m pytest -q -p no:cacheprovider identity/test_reset_case.py";
    record("", "a.db", args);
    record("", "b.db", args);
    DrTrace *t = e2e_open(e2e_path("a.db"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles"), 7);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(DISTINCT compile_id) FROM v_compiles"), 7);
    cr_assert_str_eq(e2e_sql_lines(t, NULL,
                                   "SELECT qualname || ' ' || count(*) || ' ' ||"
                                   " sum(recompile) FROM v_compiles GROUP BY qualname"
                                   " ORDER BY qualname"),
                     "scale 4 2\nshift 3 1\n");
    /* Every rejected entry is a compile of the same frame. */
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_guard_failures"), 3);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_guard_failures g JOIN v_compiles c"
                                " ON c.compile_id = g.failed_compile_id"
                                " WHERE c.qualname = g.qualname AND c.epoch = g.epoch"),
                 3);
    char *shift_failure = e2e_sql(t, "SELECT compile_id FROM v_guard_failures"
                                     " WHERE qualname = 'shift'");
    e2e_close(t);

    /* report lists shift's recompile under shift. */
    E2eProc *rep = dynrec((const char *[]){"report", "a.db", NULL});
    e2e_assert_exit(rep, 0, rep->err.data);
    char *sec = strstr(rep->out.data, "### ` shift `");
    cr_assert_not_null(sec, "%s", rep->out.data);
    char *next = strstr(sec + 1, "\n#");
    char *hit = strstr(sec, e2e_fmt("Compile ` %s `", shift_failure));
    cr_assert(hit && (!next || hit < next), "shift's recompile %s not under shift:\n%s",
              shift_failure, rep->out.data);

    assert_diff_identical("a.db", "b.db", "pytest file");
    assert_replays("a.db", 7, "pytest file");
}

/* A set of strings in a guard (EQUALS_MATCH), listed in hash order: two
 * runs with other hash seeds compare identical, and the replay (a third
 * seed of its own) reproduces it. */
Test(identity, string_sets_in_hash_order_masked) {
    e2e_copy_script("identity/string_sets.py");
    record("PYTHONHASHSEED=1", "a.db", "identity/string_sets.py");
    record("PYTHONHASHSEED=2", "b.db", "identity/string_sets.py");
    DrTrace *a = e2e_open(e2e_path("a.db")), *b = e2e_open(e2e_path("b.db"));
#define SETS                                                                                       \
    "SELECT group_concat(guard, '|') FROM v_guards WHERE guard LIKE '%%EQUALS_MATCH%%names%%'"
    cr_assert_str_neq(e2e_sql(a, SETS), e2e_sql(b, SETS), "the two seeds listed the sets alike");
#undef SETS
    e2e_close(a);
    e2e_close(b);
    assert_diff_identical("a.db", "b.db", "sets of strings");
    assert_replays("a.db", 2, "sets of strings");
}

/* type() of a tensor: Dynamo guards on G['_<id(torch)>_c0'], an id that
 * changes from run to run. */
Test(identity, installed_global_ids_masked) {
    e2e_copy_script("identity/type_global.py");
    record("", "a.db", "identity/type_global.py");
    record("", "b.db", "identity/type_global.py");
    DrTrace *t = e2e_open(e2e_path("a.db"));
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_guards WHERE guard GLOB"
                                " '*G[[]''_[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]*_c0'']*'"),
                 0, "the script no longer makes Dynamo install an id-named global");
    e2e_close(t);
    assert_diff_identical("a.db", "b.db", "type_global.py");
}

/* torch._dynamo.testing.CompileCounter, the backend of PyTorch's tests:
 * recorded twice the same; replayed with a new CompileCounter. */
Test(identity, backend_object_by_class) {
    e2e_copy_script("identity/counter_backend.py");
    record("", "a.db", "identity/counter_backend.py");
    record("", "b.db", "identity/counter_backend.py");
    DrTrace *t = e2e_open(e2e_path("a.db"));
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_graphs WHERE backend LIKE"
                                " '<torch._dynamo.testing.CompileCounter object at 0x%'"),
                 0);
    e2e_close(t);
    assert_diff_identical("a.db", "b.db", "counter_backend.py");
    assert_replays("a.db", 2, "counter_backend.py");
}

/* TORCH_LOGS=recompiles: torch's log lines start with a timestamp, a pid
 * and a file:line; the output category still compares equal. */
Test(identity, torch_log_prefixes_masked) {
    e2e_copy_script("identity/counter_backend.py");
    record("TORCH_LOGS=recompiles", "a.db", "identity/counter_backend.py");
    record("TORCH_LOGS=recompiles", "b.db", "identity/counter_backend.py");
    E2eProc *d = dynrec((const char *[]){"diff", "--json", "a.db", "b.db", NULL});
    cr_assert_eq(d->status, 0, "%s%s", d->out.data, d->err.data);
    E2eProc *s = dynrec((const char *[]){"sql", "a.db",
                                         "SELECT dynrec_text(blob_id) FROM v_files"
                                         " WHERE path = '<stderr>'",
                                         NULL});
    cr_assert_not_null(strstr(s->out.data, "Recompiling function f"),
                       "the run logged no recompile:\n%s", s->out.data);
}

/* A trace written by dynrec 0.4.0 (schema 3, before epochs; kept in
 * tests/data) compares identical with a fresh recording of the same
 * example, and still replays: its compile ids read as epoch 0. */
Test(identity, a_version_3_trace_compares_and_replays) {
    char *old = e2e_fmt("%s/../tests/data/v3-shape_recompiles.db", e2e_examples);
    size_t len = 0;
    char *data = e2e_slurp(old, &len);
    cr_assert_not_null(data, "%s is missing", old);
    e2e_write_file(e2e_path("old.db"), data, len);
    e2e_copy_example("shape_recompiles.py");
    record("", "new.db", "shape_recompiles.py");
    DrTrace *n = e2e_open(e2e_path("new.db"));
    char *tv = e2e_meta(n, "torch_version");
    e2e_close(n);
    if (tv && strncmp(tv, "2.13.0", 6) == 0 && e2e_python_minor() == 11) {
        assert_diff_identical("old.db", "new.db", "the 0.4.0 trace");
    } else {
        /* Another torch or Python (tools/compat.sh): its own frames (plain
         * names on 3.10) and config defaults differ from those of 2.13.0
         * on 3.11; the decisions do not. */
        E2eProc *d =
            dynrec((const char *[]){"diff", "--ignore", "frames,config", "old.db", "new.db", NULL});
        cr_assert_eq(d->status, 0, "the 0.4.0 trace on torch %s:\n%s%s", tv, d->out.data,
                     d->err.data);
    }
    DrTrace *t = e2e_open(e2e_path("old.db"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles WHERE epoch = 0"), 4);
    e2e_close(t);
    /* Recorded with Python 3.11: a dynrec for another Python refuses to
     * replay it (marshalled code and bytecode are per minor version). */
    E2eProc *v =
        sh(e2e_fmt("'%s' -c 'import sys; print(\"%%d.%%d\" %% sys.version_info[:2])'", e2e_python),
           E2E_TIMEOUT_MS);
    e2e_assert_exit(v, 0, "python's version");
    if (strcmp(v->out.data, "3.11\n") == 0) {
        assert_replays("old.db", 4, "the 0.4.0 trace");
    } else {
        E2eProc *p = dynrec((const char *[]){"replay", "--trust", "old.db", NULL});
        e2e_assert_exit(p, 69, e2e_fmt("replay on Python %s", v->out.data));
        cr_assert_not_null(strstr(p->err.data, "was recorded with Python 3.11"), "%s", p->err.data);
    }
}
