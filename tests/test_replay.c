#define _GNU_SOURCE 1
/* test_replay.c -- end-to-end tests of `dynrec replay`.
 *
 * Real torch, the real binary: each example and each scenario script under
 * tests/scripts/replay/ is recorded in its own directory, its sources are
 * moved away, and `dynrec replay --trust` must reproduce every compile from
 * the trace alone: exit 0, and the replay's views hold as many guards,
 * guard failures, graph breaks and side effects per compile, with the same
 * graph break reasons.  Then the what-if (--set), the refusals (sources
 * missing without --trust, malformed value trees, another Python, a trace
 * from before input capture) and a frame that cannot be replayed. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../schema/mask.h"
#include "e2e_util.h"

TestSuite(replay, .init = e2e_setup, .fini = e2e_teardown, .timeout = 240);

static E2eProc *sh(const char *cmd, int timeout_ms) {
    return e2e_run_in((const char *[]){"/bin/sh", "-c", cmd, NULL}, NULL, timeout_ms);
}

static E2eProc *dynrec(const char *const *args) {
    const char *argv[20] = {e2e_bin};
    for (int i = 0; args[i] && i < 18; i++) argv[i + 1] = args[i];
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* Records dir/script into dir/t.db (cwd dir), then moves every .py of dir
 * into dir/gone: the replay has nothing but the trace. */
static void record_and_hide(const char *dir, const char *script) {
    E2eProc *p = sh(e2e_fmt("cd '%s' && '%s' run -q -o t.db '%s' >/dev/null && mkdir gone && "
                            "mv *.py gone/",
                            e2e_path(dir), e2e_bin, script),
                    E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, e2e_fmt("recording %s: %s", script, p->err.data));
}

static void copy_example_to(const char *name, const char *dir) {
    mkdir(e2e_path(dir), 0755);
    size_t len = 0;
    char *src = e2e_slurp(e2e_example_path(name), &len);
    cr_assert_not_null(src, "examples/%s is missing", name);
    e2e_write_file(e2e_path(e2e_fmt("%s/%s", dir, name)), src, len);
}

/* dir/t.db replayed confined (no --trust) into dir/u.db: all n of its
 * compiles reproduced.  The replay's process, for more checks. */
static E2eProc *assert_confined_reproduces_in(const char *dir, long long n) {
    E2eProc *u = dynrec(
        (const char *[]){"replay", "-o", e2e_fmt("%s/u.db", dir), e2e_fmt("%s/t.db", dir), NULL});
    cr_assert_eq(u->status, 0, "confined replay: %s%s", u->out.data, u->err.data);
    char *want = e2e_fmt("reproduced %lld/%lld compile", n, n); /* (1 compile, 2 compiles) */
    cr_assert_not_null(strstr(u->out.data, want), "want '%s': %s", want, u->out.data);
    return u;
}

static E2eProc *assert_confined_reproduces(long long n) {
    return assert_confined_reproduces_in("replay", n);
}

/* One number per compile id of a view, as "0/0=12 0/1=3 ...". */
static char *per_compile(DrTrace *t, const char *view) {
    int n = 0;
    char *s = e2e_sql_lines(t, &n,
                            "SELECT compile_id || '=' || count(*) FROM %s"
                            " GROUP BY compile_id ORDER BY compile_id",
                            view);
    return s ? s : "";
}

/* The replay reproduced everything, and its views say so too. */
static void assert_reproduced(const char *dir, const char *what) {
    const char *trace = e2e_fmt("%s/t.db", dir), *out = e2e_fmt("%s/r.db", dir);
    E2eProc *r = dynrec((const char *[]){"replay", "--trust", "-o", out, trace, NULL});
    cr_assert_eq(r->status, 0, "%s: replay exit %s:\n%s%s", what, e2e_status_text(r->status),
                 r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->out.data, "\nidentical: "), "%s:\n%s", what, r->out.data);
    DrTrace *a = e2e_open(e2e_path(trace)), *b = e2e_open(e2e_path(out));
    long long na = e2e_sql_int(a, "SELECT count(*) FROM v_compiles");
    cr_assert_gt(na, 0, "%s: nothing was compiled", what);
    char *line = e2e_fmt("reproduced %lld/%lld compile", na, na);
    cr_assert_not_null(strstr(r->out.data, line), "%s: want '%s':\n%s", what, line, r->out.data);
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles"), na, "%s", what);
    static const char *const views[] = {"v_guards", "v_guard_failures", "v_graph_breaks",
                                        "v_side_effects", "v_graphs"};
    for (size_t i = 0; i < sizeof views / sizeof *views; i++)
        /* Whether a thread's compile fails a guard of another thread's
         * entry depends on timing; the comparison counts those apart. */
        if (!(i == 1 && strstr(what, "thread")))
            cr_assert_str_eq(per_compile(b, views[i]), per_compile(a, views[i]),
                             "%s: %s per compile", what, views[i]);
    int n1 = 0, n2 = 0;
    char *br_a =
        e2e_sql_lines(a, &n1, "SELECT reason FROM v_graph_breaks ORDER BY compile_id, seq");
    char *br_b =
        e2e_sql_lines(b, &n2, "SELECT reason FROM v_graph_breaks ORDER BY compile_id, seq");
    /* masked as the comparison masks them (a function's address in its repr) */
    char *ma = br_a ? dr_mask(NULL, br_a, strlen(br_a), NULL) : NULL;
    char *mb = br_b ? dr_mask(NULL, br_b, strlen(br_b), NULL) : NULL;
    cr_assert_str_eq(mb ? e2e_own(mb) : "", ma ? e2e_own(ma) : "", "%s: graph break reasons", what);
    cr_assert_str_eq(e2e_meta(b, "replay_of"), e2e_path(trace));
    /* The replay runs no main program: nothing the script prints shows. */
    cr_assert_null(strstr(r->err.data, "imported"), "%s:\n%s", what, r->err.data);
}

static void example_replays(const char *name) {
    copy_example_to(name, "w");
    record_and_hide("w", name);
    assert_reproduced("w", name);
}

Test(replay, quickstart) { example_replays("quickstart.py"); }
Test(replay, shape_recompiles) { example_replays("shape_recompiles.py"); }
Test(replay, two_threads) { example_replays("two_threads.py"); }
Test(replay, graph_breaks) { example_replays("graph_breaks.py"); }
Test(replay, dynamic_shapes) { example_replays("dynamic_shapes.py"); }
Test(replay, hot_loop) { example_replays("hot_loop.py"); }
Test(replay, closure_cell) { example_replays("closure_cell.py"); }
Test(replay, cond_side_effect) { example_replays("cond_side_effect.py"); }
Test(replay, suppressed_error) { example_replays("suppressed_error.py"); }
Test(replay, backend_raises) { example_replays("backend_raises.py"); }
/* Inductor compiles twice over do not fit the suite's timeout under ASan. */
Test(replay, inductor_model) {
    if (e2e_asan) {
        printf("replay.inductor_model: skipped under ASan (two inductor compiles)\n");
        return;
    }
    example_replays("inductor_model.py");
}

/* A recording whose inductor compile its caches served (the second run
 * with one TORCHINDUCTOR_CACHE_DIR) says so: the replay, whose cache is
 * empty, compiles afresh, and the guards lowering adds can differ. */
Test(replay, inductor_cache_hits_are_named) {
    if (e2e_asan) {
        printf("replay.inductor_cache_hits_are_named: skipped under ASan (inductor compiles)\n");
        return;
    }
    copy_example_to("inductor_model.py", "w");
    for (int i = 0; i < 2; i++) {
        E2eProc *p = sh(e2e_fmt("cd '%s' && TORCHINDUCTOR_CACHE_DIR='%s' '%s' run -q -o t%d.db "
                                "inductor_model.py >/dev/null",
                                e2e_path("w"), e2e_path("w/cache"), e2e_bin, i),
                        E2E_TORCH_TIMEOUT_MS);
        e2e_assert_exit(p, 0, e2e_fmt("recording inductor_model.py: %s", p->err.data));
    }
    DrTrace *a = e2e_open(e2e_path("w/t0.db")), *b = e2e_open(e2e_path("w/t1.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_ev WHERE text = "
                                "'artifact:fx_graph_cache_hit'"),
                 0, "the first run found a cache");
    char *hits = e2e_sql(b, "SELECT group_concat(compile_id, ', ') FROM (SELECT DISTINCT "
                            "compile_id FROM v_ev WHERE text IN ('artifact:fx_graph_cache_hit',"
                            " 'artifact:aotautograd_cache_hit') ORDER BY compile_id)");
    cr_assert_not_null(hits, "the second run hit no cache");
    e2e_close(a);
    e2e_close(b);
    E2eProc *r = dynrec((const char *[]){"replay", "--json", "-o", "w/r.db", "w/t1.db", NULL});
    cr_assert(WIFEXITED(r->status) && WEXITSTATUS(r->status) <= 1, "%s%s", r->out.data,
              r->err.data);
    cr_assert_not_null(strstr(r->out.data, e2e_fmt("\"inductor_cache_hits\": \"%s\"", hits)), "%s",
                       r->out.data);
}

/* A scenario script of tests/scripts/replay/ (with the others beside it). */
static void scenario(const char *script) {
    static const char *const all[] = {"modes.py",
                                      "models.py",
                                      "uses_models.py",
                                      "closures.py",
                                      "opaque_arg.py",
                                      "marks.py",
                                      "singletons.py",
                                      "wrapmod.py",
                                      "uses_wraps.py",
                                      "objects.py",
                                      "numpy_values.py",
                                      "generator.py",
                                      "local_class.py",
                                      "same_names.py",
                                      "branch_after_break.py",
                                      "skip_fallback.py",
                                      "compiled_wrappers.py",
                                      "export_and_transforms.py",
                                      "isolate_regions.py",
                                      "backend_objects.py",
                                      "class_attrs.py",
                                      "recompile_limit.py",
                                      "unreadable_then_plain.py",
                                      "test_case_state.py",
                                      "train_module.py",
                                      "shape_env_config.py",
                                      "random_and_nested_breaks.py",
                                      "library_test_decorator.py",
                                      "transforms.py",
                                      "fx_graph_modules.py",
                                      "fx_one_graph_module.py",
                                      "views.py",
                                      "function_attrs.py",
                                      "autocast_breaks.py",
                                      "partials.py",
                                      "missing_name.py",
                                      "missing_name_mod.py",
                                      "saved_hooks_off.py",
                                      "config_skip.py",
                                      "allow_in_graph.py",
                                      "contextmanager_arg.py",
                                      "local_class_breaks.py",
                                      "local_namedtuples.py",
                                      "function_defaults.py",
                                      "lru_cached.py",
                                      "disabled_nested.py",
                                      "std_streams.py",
                                      "lazy_modules.py",
                                      "tensor_subclasses.py",
                                      "dict_subclasses.py",
                                      "lambdas_of_one_line.py",
                                      "iterators_and_exceptions.py",
                                      "inductor_freezing.py",
                                      "module_globals.py",
                                      "helper_consts.py",
                                      "method_defaults.py",
                                      "nonstrict_and_leaf.py",
                                      "mapping_proxies.py",
                                      "allow_in_graph_calls.py",
                                      "library_lambdas.py",
                                      "reset_epochs.py",
                                      "build_class_config.py",
                                      "local_class_closures.py",
                                      "pytree_registrations.py",
                                      "dynamo_decorators.py",
                                      "local_backends.py",
                                      "config_patches.py",
                                      "sentinels.py",
                                      "registry_getitem.py",
                                      "registry_mod.py",
                                      "leaf_views.py",
                                      "dict_iterators.py",
                                      "weight_norm.py",
                                      "own_getattribute.py",
                                      "own_getattr.py",
                                      "structseqs_and_deques.py",
                                      "local_class_identity.py",
                                      "ids_kept.py",
                                      "guard_filter.py",
                                      "numpy_strides.py",
                                      "custom_ops.py",
                                      "library_objects.py",
                                      "backend_raises.py",
                                      "export_between_calls.py",
                                      "class_with_failing_method.py",
                                      "local_custom_ops.py",
                                      "weak_containers.py",
                                      "stance_then_compile.py",
                                      "backend_with_arguments.py",
                                      "id_values.py",
                                      "local_class_cells.py",
                                      "generator_arguments.py",
                                      "compiled_optimizer.py",
                                      "distributions.py",
                                      "autograd_ctx.py",
                                      "signature.py",
                                      "expanded_tensors.py",
                                      "shared_cells.py",
                                      "grad_scaler.py",
                                      "wrapper_subclasses.py",
                                      "paths.py",
                                      "forced_backend.py",
                                      "local_backend_skips.py"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        e2e_copy_script(e2e_fmt("replay/%s", all[i]));
    record_and_hide("replay", script);
}

/* train/eval submodules, an int argument, a global, grad mode. */
Test(replay, module_modes_int_global_grad) {
    scenario("modes.py");
    assert_reproduced("replay", "modes.py");
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    /* Each change was a recompile whose guard failure the replay reproduced. */
    cr_assert_eq(e2e_sql_int(b, "SELECT count(DISTINCT compile_id) FROM v_guard_failures"), 4);
    char *reasons = e2e_sql(b, "SELECT group_concat(reason, ' | ') FROM v_guard_failures");
    cr_assert_not_null(strstr(reasons, "training"), "%s", reasons);
    cr_assert_not_null(strstr(reasons, "SCALE"), "%s", reasons);
    cr_assert_not_null(strstr(reasons, "k"), "%s", reasons);
    cr_assert_not_null(strstr(reasons, "GLOBAL_STATE"), "%s", reasons);
}

/* Views as inputs: one of a tensor that requires grad is made with grad
 * mode on, as in the recording (made under no_grad, map's tracing failed on
 * it: "A view was created in no_grad mode ..."); a module's dataclass
 * singleton in a closure. */
Test(replay, tensor_views) {
    scenario("views.py");
    assert_reproduced("replay", "views.py");
    assert_confined_reproduces(9);
    /* pytree's _LEAF_SPEC (a frozen dataclass) is the module's object: a
     * copy of it got 3 guards more than the recording. */
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'singleton' AND"
                                " json_extract(value, '$.name') = '_LEAF_SPEC'"),
                 0);
}

/* A nested function's own attributes, read through its closure (the cell
 * holds the function itself: the replay stopped there, "a cycle through an
 * immutable value"); the attribute's change is the recompile's guard
 * failure. */
Test(replay, function_attributes_and_self_reference) {
    scenario("function_attrs.py");
    assert_reproduced("replay", "function_attrs.py");
    assert_confined_reproduces(2);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    char *reasons = e2e_sql(b, "SELECT group_concat(reason, ' | ') FROM v_guard_failures");
    cr_assert_not_null(reasons);
    cr_assert_not_null(strstr(reasons, "pred"), "%s", reasons);
}

/* Graph breaks inside torch.autocast: the resume functions' code holds a
 * dtype, which marshal refuses; they were not replayable (3 frames, 4
 * compiles), and replay now uses the ones its Dynamo makes, confined too. */
Test(replay, resume_functions_inside_autocast) {
    scenario("autocast_breaks.py");
    assert_reproduced("replay", "autocast_breaks.py");
    assert_confined_reproduces(8);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_compiles WHERE qualname LIKE"
                                " '%torch_dynamo_resume_in_%'"),
                 4);
}

/* functools.partial objects (of a user function, of torch.clip, of an
 * nn.Module with an attribute set, of a lambda) and a defaultdict: each a
 * value kind of its own, once an opaque argument (12 frames of PyTorch's
 * test_functions); a keyword's change is the recompile. */
Test(replay, partials_and_defaultdict) {
    scenario("partials.py");
    assert_reproduced("replay", "partials.py");
    assert_confined_reproduces(5);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'opaque'"), 0);
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'partial'"), 3);
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'defaultdict'"), 0);
}

/* `from m import (a, b)` where this torch has no `a`: `b` is imported alone
 * (PyTorch's newer test files under an older torch lost every name of the
 * statement, and with them their test classes). */
Test(replay, import_of_a_name_torch_lacks) {
    scenario("missing_name.py");
    assert_reproduced("replay", "missing_name.py");
    E2eProc *u = dynrec((const char *[]){"replay", "-o", "replay/u.db", "replay/t.db", NULL});
    cr_assert_eq(u->status, 0, "%s%s", u->out.data, u->err.data);
    cr_assert_not_null(strstr(u->out.data, "cannot import name 'dynrec_test_name_torch_lacks'"),
                       "%s", u->out.data);
    cr_assert_not_null(strstr(u->out.data, "reproduced 1/1 compile"), "%s", u->out.data);
}

/* Compiled while saved-tensor hooks are disabled: the graph restores the
 * outer message on exit, so the replay disables them as recorded (without
 * it the graph differed). */
Test(replay, saved_tensors_hooks_disabled_around_the_compile) {
    scenario("saved_hooks_off.py");
    assert_reproduced("replay", "saved_hooks_off.py");
    assert_confined_reproduces(1);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_str_eq(e2e_sql(a, "SELECT json_extract(data, '$.global_state."
                                "saved_tensors_hooks_disabled') FROM v_ev WHERE kind = 'capture'"),
                     "Previously disabled message");
}

/* The config of a compile that is not replayed is set all the same: the
 * compile after it changes the config as recorded (the replay saw no
 * change there, and the comparison reported one). */
Test(replay, config_of_a_compile_not_replayed) {
    scenario("config_skip.py");
    E2eProc *r = dynrec((const char *[]){"replay", "-o", "replay/r.db", "replay/t.db", NULL});
    cr_assert_eq(r->status, 3 << 8, "one frame is not replayable: %s%s", r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->out.data, "reproduced 2/2 compiles"), "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "\nidentical: "), "%s", r->out.data);
}

/* A nested function marked allow_in_graph is a call in the graph, as
 * recorded: the replay marks the function it makes (Dynamo's registry
 * holds the recorded one by id). */
Test(replay, allow_in_graph_functions) {
    scenario("allow_in_graph.py");
    assert_reproduced("replay", "allow_in_graph.py");
    /* (and the class: before, "Call to `torch._dynamo.graph_break()`") */
    assert_confined_reproduces(2);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'function' AND"
                                " json_extract(value, '$.allow_in_graph')"),
                 1);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'class' AND"
                                " json_extract(value, '$.allow_in_graph')"),
                 1);
}

/* A @contextmanager object not yet entered, as an argument: its generator
 * is made by calling the generator function with the recorded arguments
 * (it was an opaque generator).  The resume functions after __enter__ hold
 * a started generator, which is not rebuilt: named not replayable. */
Test(replay, contextmanager_object_as_argument) {
    scenario("contextmanager_arg.py");
    E2eProc *r = dynrec((const char *[]){"replay", "-o", "replay/r.db", "replay/t.db", NULL});
    cr_assert_eq(r->status, 3 << 8, "%s%s", r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->out.data, "reproduced 2/2 compiles"), "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "\nidentical: "), "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "reproduced 0/0 run.<locals>.fn: compiled"), "%s",
                       r->out.data);
    cr_assert_not_null(strstr(r->out.data, "'ctx'.__dict__['gen'] of type builtins.generator"),
                       "%s", r->out.data);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'pygenerator'"), 0);
}

/* namedtuple classes made inside a function (one under another name, one
 * with defaults, and a second class of the same name that recompiles): made
 * again by collections.namedtuple, one class per recorded class.  They were
 * "not reachable by name" (3 compiles of PyTorch's test_functions). */
Test(replay, namedtuple_classes_made_inside_functions) {
    scenario("local_namedtuples.py");
    assert_reproduced("replay", "local_namedtuples.py");
    assert_confined_reproduces(5);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_captures WHERE replayable = 0"), 0);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT coalesce(json_extract(value,"
                                " '$.class.namedtuple.number'), json_extract(value,"
                                " '$.namedtuple.number'))) FROM v_values"),
                 3);
}

/* A program's functions whose defaults change (a default tensor mutated,
 * __defaults__ and __kwdefaults__ patched): each compile's defaults are
 * captured and set, so each recompile on them is reproduced (1 of 4 before;
 * 4 compiles of PyTorch's test_functions differed). */
Test(replay, function_defaults_as_at_each_compile) {
    scenario("function_defaults.py");
    assert_reproduced("replay", "function_defaults.py");
    assert_confined_reproduces(4);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'function' AND"
                                " json_extract(value, '$.kwdefaults') IS NOT NULL AND"
                                " json_extract(value, '$.name') IS NULL"),
                 0);
}

/* Module-level functions under @functools.lru_cache: by reference, as
 * their def statements make them in the replay (the frame was not
 * replayable: "global 'cached_sin' of type functools._lru_cache_wrapper"). */
Test(replay, lru_cache_functions_by_reference) {
    scenario("lru_cached.py");
    assert_reproduced("replay", "lru_cached.py");
    assert_confined_reproduces(2);
}

/* Nested functions under torch._dynamo.disable (with a reason, without
 * functools.wraps): torch._dynamo.disable called again on the rebuilt
 * function; the wrapper's closure holds Dynamo's DisableContext, which made
 * all 3 frames not replayable. */
Test(replay, disabled_nested_functions) {
    scenario("disabled_nested.py");
    assert_reproduced("replay", "disabled_nested.py");
    assert_confined_reproduces(3);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'compiled' AND"
                                " json_extract(value, '$.disable.reason') = 'host sync' AND"
                                " capture = 1"),
                 1);
}

/* contextlib.redirect_stdout(sys.stderr) and redirect_stderr(sys.stdout)
 * around a graph break: the resume functions hold the context object and
 * through it a standard stream, stored as the sys attribute it is (2 of the
 * 5 frames were not replayable: "of type _io.TextIOWrapper"). */
Test(replay, standard_streams_by_reference) {
    scenario("std_streams.py");
    assert_reproduced("replay", "std_streams.py");
    assert_confined_reproduces(5);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'singleton' AND"
                                " json_extract(value, '$.module') = 'sys'"),
                 1);
}

/* Lazy modules compiled before their first call: their uninitialized
 * parameters and buffers, the load hook torch wraps around a module method
 * (_WrappedHook) and the hook handles the module keeps; all made by torch's
 * own constructors and __setstate__ (the frame was not replayable). */
Test(replay, lazy_modules_before_their_first_call) {
    scenario("lazy_modules.py");
    assert_reproduced("replay", "lazy_modules.py");
    assert_confined_reproduces(1);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT kind) FROM v_values WHERE kind IN"
                                " ('uninitialized', 'module_hook', 'hook_handle')"),
                 3);
}

/* Tensors of the program's subclasses of torch.Tensor (a __torch_function__
 * one defined inside a function, a leaf requiring grad, one that is not a
 * leaf) and a C method descriptor as a value: all 4 frames were not
 * replayable; then a getset descriptor (torch.Tensor.shape) and its bound
 * __get__ (a method-wrapper), 2 frames not replayable before 0.7.8; a
 * subclass of Parameter with an attribute of its own (a quantized weight),
 * a module's parameter, not replayable before 0.7.9. */
Test(replay, tensor_subclasses_and_method_descriptors) {
    scenario("tensor_subclasses.py");
    assert_reproduced("replay", "tensor_subclasses.py");
    assert_confined_reproduces(7);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'tensor' AND"
                                " json_extract(value, '$.subclass.qualname') ="
                                " 'make_subclass.<locals>.TensorProxy'"),
                 0);
}

/* Objects of the program's subclasses of dict and OrderedDict (one defined
 * inside a function, in place of each module's _parameters; one with an
 * attribute as an argument, whose item change recompiles): their
 * attributes and their items, set by the C type's __setitem__ (both frames
 * were not replayable). */
Test(replay, dict_and_ordered_dict_subclasses) {
    scenario("dict_subclasses.py");
    assert_reproduced("replay", "dict_subclasses.py");
    assert_confined_reproduces(3);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT json_extract(value, '$.class.qualname'))"
                                " FROM v_values WHERE kind = 'object' AND"
                                " json_extract(value, '$.mapping') IS NOT NULL"),
                 2);
}

/* Two lambdas of one line, compiled as frames and called through a tuple
 * of them: each is its own code object in the replay, found by where its
 * body starts (the first lambda's code stood for both: 1 of 4 compiles). */
Test(replay, lambdas_of_one_line) {
    scenario("lambdas_of_one_line.py");
    assert_reproduced("replay", "lambdas_of_one_line.py");
    assert_confined_reproduces(4);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT json_extract(value, '$.place')) FROM"
                                " v_values WHERE kind = 'function' AND"
                                " json_extract(value, '$.qualname') = '<lambda>'"),
                 2);
}

/* Builtin iterators part way through (a filter on a resume function's
 * stack, enumerate, zip, map, a list iterator after one next()) and
 * exceptions as arguments (StopIteration, a subclass defined inside a
 * function, a ValueError with an attribute): rebuilt by the builtins their
 * __reduce__ names and by the exception's C base (the frames were not
 * replayable). */
Test(replay, iterators_and_exceptions) {
    scenario("iterators_and_exceptions.py");
    assert_reproduced("replay", "iterators_and_exceptions.py");
    assert_confined_reproduces(14);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT json_extract(value, '$.make')) FROM"
                                " v_values WHERE kind = 'iterator'"),
                 5);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT json_extract(value, '$.class.qualname'))"
                                " FROM v_values WHERE kind = 'exception'"),
                 3);
    /* fn's break is inside torch's polyfill of filter: its line in the
     * script is the for statement's (not the polyfill's). */
    cr_assert_eq(e2e_sql_int(a, "SELECT lineno FROM v_graph_breaks WHERE qualname = 'fn'"), 12);
}

/* Inductor's freezing setting, which Dynamo reads while it traces: set
 * again for the compiles it was on for (a buffer guarded by id, a new one
 * recompiles) and back off after (1 of 3 compiles reproduced before). */
Test(replay, inductor_freezing_setting) {
    scenario("inductor_freezing.py");
    assert_reproduced("replay", "inductor_freezing.py");
    assert_confined_reproduces(3);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_ev WHERE kind = 'capture' AND"
                                " json_extract(data, '$.config.\"inductor.freezing\"') = 'True'"),
                 2);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_guards WHERE qualname = 'frozen' AND"
                                " guard LIKE 'ID_MATCH: %_buffers[''buf'']%'"),
                 2);
}

/* A script run as `dynrec run ../script.py`: its code's file name keeps
 * the "..", and the stored source is compiled under that name, so its
 * frames are found and Dynamo's texts name the recorded file (its frames
 * were "no code stored"). */
Test(replay, script_run_by_a_path_with_dot_dot) {
    e2e_copy_script("replay/inductor_freezing.py");
    E2eProc *p = sh(e2e_fmt("cd '%s' && mkdir sub && cd sub && '%s' run -q -o ../t.db"
                            " ../inductor_freezing.py >/dev/null && cd .. && mkdir gone &&"
                            " mv *.py gone/",
                            e2e_path("replay"), e2e_bin),
                    E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, e2e_fmt("recording: %s", p->err.data));
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_captures WHERE filename LIKE"
                                " '%/sub/../inductor_freezing.py'"),
                 3);
    assert_reproduced("replay", "inductor_freezing.py");
    assert_confined_reproduces(3);
}

/* A module of the program whose constant a compiled function reads (no
 * code of it traced): its source is stored, and its value at each compile
 * set again, so the change recompiles (the frame was "module helper_consts
 * is not imported by the trace's sources"). */
Test(replay, constants_of_a_module_of_the_program) {
    scenario("module_globals.py");
    assert_reproduced("replay", "module_globals.py");
    assert_confined_reproduces(2);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_files WHERE role = 'source' AND"
                                " path LIKE '%/helper_consts.py'"),
                 1);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_ev WHERE kind = 'capture_state'"), 2);
}

/* The defaults of a method of the program's class, patched while it runs
 * (__defaults__, then __kwdefaults__): captured with the object of that
 * class and set on the method before each compile, so both patches
 * recompile (1 of 3 compiles reproduced before). */
Test(replay, patched_method_defaults) {
    scenario("method_defaults.py");
    assert_reproduced("replay", "method_defaults.py");
    assert_confined_reproduces(3);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'module' AND"
                                " json_extract(value, '$.method_defaults.\"WithDefaults.forward\"')"
                                " IS NOT NULL"),
                 3);
}

/* Functions nonstrict_trace and leaf_function wrapped (at module level and
 * inside a function): each rebuilt wrapper is put in the registries they
 * put it in, by id, so Dynamo calls it as recorded instead of as a plain
 * allow_in_graph function (2 of 4 compiles reproduced before). */
Test(replay, nonstrict_trace_and_leaf_functions) {
    scenario("nonstrict_and_leaf.py");
    assert_reproduced("replay", "nonstrict_and_leaf.py");
    assert_confined_reproduces(4);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT json_extract(value, '$.marks[0]')) FROM"
                                " v_values WHERE kind = 'function'"),
                 2);
    /* leaf_function_validate_outputs is set, not skipped as unknown. */
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM meta WHERE key = 'replay.config_skipped'"
                                " AND value LIKE '%leaf_function%'"),
                 0);
}

/* types.MappingProxyType views of dicts as arguments (one over a dict the
 * frame also gets and mutates: one node, one dict) and the mappingproxy
 * class in a closure, by types' name for it (every frame was not
 * replayable). */
Test(replay, mapping_proxies) {
    scenario("mapping_proxies.py");
    assert_reproduced("replay", "mapping_proxies.py");
    assert_confined_reproduces(5);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'mappingproxy'"), 2);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'class' AND"
                                " json_extract(value, '$.qualname') = 'MappingProxyType'"),
                 1);
}

/* torch._dynamo.allow_in_graph called on a module function as the program
 * runs: the function by reference carries the mark, and the replay marks
 * it again (its call was traced into: 0 of 1 compile before). */
Test(replay, allow_in_graph_called_at_run_time) {
    scenario("allow_in_graph_calls.py");
    assert_reproduced("replay", "allow_in_graph_calls.py");
    assert_confined_reproduces(1);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'function' AND"
                                " json_extract(value, '$.qualname') = 'my_custom_function' AND"
                                " json_extract(value, '$.allow_in_graph')"),
                 1);
}

/* A lambda torch made at its module level (pytree's flatten function of
 * torch.Size) as an argument: confined, its code comes from the library's
 * own file, compiled, never from the trace (was: "its code is stored
 * compiled in the trace; --trust uses it"). */
Test(replay, library_lambdas_from_the_library_file) {
    scenario("library_lambdas.py");
    assert_reproduced("replay", "library_lambdas.py");
    assert_confined_reproduces(1);
}

/* A local class's methods compile as in the file (the module's imports
 * are seen by the compiler, never run): the resume function of a graph
 * break in a method, handed to forward's under nested graph breaks, has the
 * recorded bytecode ("no resume function here has the recorded bytecode"
 * before). */
Test(replay, resume_functions_of_local_class_methods) {
    scenario("local_class_breaks.py");
    assert_reproduced("replay", "local_class_breaks.py");
    assert_confined_reproduces(2);
}

/* The model class in a file of its own, whose main-program print never runs. */
Test(replay, model_in_a_separate_user_file) {
    scenario("uses_models.py");
    assert_reproduced("replay", "uses_models.py");
}

/* Closures mutated across a graph break (resume functions), automatic
 * dynamic after a recompile, mark_dynamic. */
Test(replay, closures_graph_breaks_dynamic) {
    scenario("closures.py");
    assert_reproduced("replay", "closures.py");
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_gt(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE qualname LIKE "
                                "'%torch_dynamo_resume_in_step%'"),
                 0);
}

/* The two branches' resume functions share a name and a line: each replays
 * as itself (its graph calls add, the other's sub), with or without
 * --trust, because the stored source compiles to the recorded bytecode. */
Test(replay, resume_functions_of_two_branches) {
    scenario("branch_after_break.py");
    assert_reproduced("replay", "branch_after_break.py");
    E2eProc *r = dynrec((const char *[]){"replay", "-o", "replay/r2.db", "replay/t.db", NULL});
    e2e_assert_exit(r, 0, "replay without --trust");
    cr_assert_not_null(strstr(r->out.data, "reproduced 4/4 compiles"), "%s", r->out.data);
    E2eProc *q = dynrec((const char *[]){
        "sql", "--csv", "replay/r2.db",
        "SELECT group_concat(compile_id || ':' || (instr(code, 'torch.add') > 0) || "
        "(instr(code, 'torch.sub') > 0), ' ') FROM (SELECT compile_id, "
        "group_concat(dynrec_text(code_blob)) AS code FROM v_graphs GROUP BY compile_id "
        "ORDER BY compile_id)",
        NULL});
    e2e_assert_exit(q, 0, "dynrec sql");
    cr_assert_not_null(strstr(q->out.data, "0/0:00 1/0:00 2/0:10 3/0:01"),
                       "graphs per compile (add, sub): %s", q->out.data);
}

/* A compile that gives up (skip_frame) is not followed by Dynamo's eager
 * fallback in the replay: the frame's own code never runs there, so inner()
 * is called once, by its own capture, a compile and no cache hit, and the
 * skip_frame() call the frame makes is never evaluated. */
Test(replay, failed_compile_is_never_run) {
    scenario("skip_fallback.py");
    assert_reproduced("replay", "skip_fallback.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_frames WHERE qualname = 'skip_frame'"), 1,
                 "the recording ran the frame eagerly");
    e2e_close(a);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_frames WHERE qualname = 'skip_frame'"), 0,
                 "the replay ran the frame it failed to compile");
    char *inner = e2e_sql(b, "SELECT callbacks || '/' || cache_hits || '/' || compiles "
                             "FROM v_frames WHERE qualname = 'inner'");
    cr_assert_str_eq(inner, "1/0/1", "inner: callbacks/cache hits/compiles");
    char *cb = e2e_sql(b, "SELECT group_concat(json_extract(data, '$.outcome'), ' ') FROM "
                          "v_events WHERE kind = 'callback'");
    cr_assert_str_eq(cb, "compiled skipped compiled", "callback outcomes: %s", cb);
}

/* torch.compile of torch's own modules and builtins (nn.Sequential,
 * nn.Linear, torch.sin) compiles one wrapper of torch's for all of them
 * (wrap_inline.<locals>.inner): its code comes from torch (a constant of
 * wrap_inline's), one code object, so the later compiles are recompiles,
 * without --trust; each compile is named by what it compiled. */
Test(replay, torch_modules_compiled_through_torchs_wrapper) {
    mkdir(e2e_path("w"), 0755);
    e2e_copy_script("compile_module.py");
    cr_assert_eq(rename(e2e_path("compile_module.py"), e2e_path("w/compile_module.py")), 0);
    record_and_hide("w", "compile_module.py");
    assert_reproduced("w", "compile_module.py");
    E2eProc *u = dynrec((const char *[]){"replay", "-o", "w/u.db", "w/t.db", NULL});
    e2e_assert_exit(u, 0, "replay without --trust");
    cr_assert_not_null(strstr(u->out.data, "reproduced 4/4 compiles"), "%s", u->out.data);
    cr_assert_not_null(strstr(u->out.data, "reproduced 0/2 Linear via cl("), "%s", u->out.data);
    cr_assert_not_null(strstr(u->out.data, "reproduced 0/3 torch.sin via "), "%s", u->out.data);
    DrTrace *b = e2e_open(e2e_path("w/u.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE recompile"), 3);
}

/* The most common pattern: torch.compile(model) trained, with a recompile
 * on a new batch size; without --trust too, the recompile is one on the
 * same code, failing the first entry's guard. */
Test(replay, compiled_module_training_loop_with_a_recompile) {
    scenario("train_module.py");
    assert_reproduced("replay", "train_module.py");
    E2eProc *u = dynrec((const char *[]){"replay", "-o", "replay/u.db", "replay/t.db", NULL});
    e2e_assert_exit(u, 0, "replay without --trust");
    cr_assert_not_null(strstr(u->out.data, "reproduced 2/2 compiles"), "%s", u->out.data);
    DrTrace *b = e2e_open(e2e_path("replay/u.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE recompile"), 1);
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_guard_failures WHERE compile_id = '0/1'"
                                " AND reason LIKE '%size mismatch at index 0%'"),
                 1);
}

/* torch.compile's wrappers among the values (compiled modules in a list, a
 * compiled function in an attribute): stored as what they wrap and how, and
 * made again by torch.compile, without --trust. */
Test(replay, compiled_wrappers_are_compiled_again) {
    scenario("compiled_wrappers.py");
    assert_reproduced("replay", "compiled_wrappers.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_captures WHERE NOT replayable"), 0);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT value) FROM v_values WHERE kind = "
                                "'compiled' AND json_extract(value, '$.module')"),
                 2, "the two compiled modules");
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'compiled' AND NOT"
                                " json_extract(value, '$.module') AND json_extract(value, "
                                "'$.dynamic') = 0 AND json_extract(value, '$.backend.name') ="
                                " 'eager'"),
                 2, "the compiled function, with its options, at each compile");
    e2e_close(a);
    E2eProc *u = dynrec((const char *[]){"replay", "-o", "replay/u.db", "replay/t.db", NULL});
    e2e_assert_exit(u, 0, "replay without --trust");
    cr_assert_not_null(strstr(u->out.data, "reproduced 2/2 compiles"), "%s", u->out.data);
}

/* mark_dynamic, maybe_mark_dynamic, mark_static and the flag they set: each
 * recompile of the recording is a recompile of the replay, for the same
 * reason (a replay without the flag met the cached entry instead). */
Test(replay, every_dynamo_mark) {
    scenario("marks.py");
    assert_reproduced("replay", "marks.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_compiles WHERE recompile"), 3);
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'tensor' AND"
                                " json_extract(value, '$.marks._has_dynamo_dim_marking')"),
                 0);
    e2e_close(a);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE recompile"), 3);
}

/* The ShapeEnv's config (torch.fx.experimental._config) is recorded with
 * Dynamo's, as fx.NAME, and set again: the three compiles of its
 * specializing half are three in the replay too (a replay without it has
 * one, and a cache hit). */
Test(replay, shape_env_config) {
    scenario("shape_env_config.py");
    assert_reproduced("replay", "shape_env_config.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(
        e2e_sql_int(a, "SELECT count(*) FROM v_ev WHERE kind = 'capture' AND json_extract(data, "
                       "'$.config.\"fx.symbol_guard_limit_before_specialize\"') = '3'"),
        3);
    e2e_close(a);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles"), 4);
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE recompile"), 2);
}

/* random.Random objects (and a subclass with an attribute) are captured by
 * class, state and __dict__, C methods bound to objects (a Random's random,
 * a list's append) by the object and the name; a resume function handed to an outer one (a
 * graph break inside torch's comptime.graph_break, nested graph breaks on)
 * is the one Dynamo makes in the replay, not code from the trace: every
 * compile replays confined, without --trust. */
Test(replay, random_objects_and_nested_resume_functions) {
    scenario("random_and_nested_breaks.py");
    assert_reproduced("replay", "random_and_nested_breaks.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_str_eq(e2e_sql(a, "SELECT group_concat(type, ' ') FROM (SELECT DISTINCT type FROM "
                                "v_values WHERE kind = 'random' ORDER BY type)"),
                     "__main__.MyRandom random.Random");
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'function' AND "
                                "json_extract(value, '$.code_digest') IS NOT NULL AND "
                                "json_extract(value, '$.qualname') LIKE "
                                "'%torch_dynamo_resume_in_graph_break%'"),
                 1);
    cr_assert_str_eq(e2e_sql(a,
                             "SELECT group_concat(b, ' ') FROM (SELECT json_extract(value, "
                             "'$.builtin') AS b FROM v_values WHERE kind = 'method' ORDER BY b)"),
                     "append random");
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_captures WHERE NOT replayable"), 0);
    long long n = e2e_sql_int(a, "SELECT count(*) FROM v_compiles");
    e2e_close(a);
    E2eProc *u = dynrec((const char *[]){"replay", "-o", "replay/u.db", "replay/t.db", NULL});
    e2e_assert_exit(u, 0, "replay without --trust");
    cr_assert_not_null(strstr(u->out.data, e2e_fmt("reproduced %lld/%lld compiles", n, n)), "%s",
                       u->out.data);
}

/* A logger and torch's wrap higher-order op, by reference: the frame is
 * replayable (both were opaque values once) and reproduces; a pybind11
 * enum's member (SDPBackend.MATH) by its class and name. */
Test(replay, module_singletons_by_reference) {
    scenario("singletons.py");
    assert_reproduced("replay", "singletons.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'opaque'"), 0);
    cr_assert_str_eq(e2e_sql(a, "SELECT value FROM v_values WHERE kind = 'logger'"),
                     "\"singletons\"");
    cr_assert_str_eq(e2e_sql(a, "SELECT json_extract(value, '$.module') || '.' ||"
                                " json_extract(value, '$.name') FROM v_values"
                                " WHERE kind = 'singleton'"),
                     "torch._higher_order_ops.wrap.wrap");
    cr_assert_str_eq(e2e_sql(a, "SELECT type || ' ' || json_extract(value, '$.name') FROM v_values"
                                " WHERE kind = 'enum'"),
                     "torch.nn.attention._SDPBackend MATH");
}

/* A functools.wraps wrapper from another module, not reachable by name:
 * rebuilt with the globals of the module its code ran in (the wrapper's
 * __module__ names another). */
Test(replay, wraps_wrapper_keeps_its_globals) {
    scenario("uses_wraps.py");
    assert_reproduced("replay", "uses_wraps.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_str_eq(e2e_sql(a,
                             "SELECT json_extract(value, '$.module') || ' ' ||"
                             " json_extract(value, '$.globals_module') FROM v_values"
                             " WHERE kind = 'function' AND json_extract(value, '$.name') = 'act'"),
                     "__main__ wrapmod");
}

/* A function defined inside a library function (torch's make_dynamo_test,
 * which PyTorch's own Dynamo tests use) and the functools.wraps wrapper it
 * returns: their code comes from the installed library, found by the code's
 * own qualname (code_qualname where wraps gave the function another), so
 * the confined replay reproduces every compile without --trust. */
Test(replay, library_nested_functions_replay_confined) {
    scenario("library_test_decorator.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_str_eq(e2e_sql(a, "SELECT json_extract(value, '$.code_qualname') FROM v_values"
                                " WHERE kind = 'function' AND json_extract(value, '$.qualname')"
                                " = 'Case.check' AND json_extract(value, '$.code_qualname')"
                                " IS NOT NULL LIMIT 1"),
                     "make_dynamo_test.<locals>.test_fn");
    long long n = e2e_sql_int(a, "SELECT count(*) FROM v_compiles");
    cr_assert_geq(n, 2);
    e2e_close(a);
    E2eProc *u = dynrec((const char *[]){"replay", "-o", "replay/u.db", "replay/t.db", NULL});
    cr_assert_eq(u->status, 0, "confined replay: %s%s", u->out.data, u->err.data);
    char *want = e2e_fmt("reproduced %lld/%lld compile", n, n); /* (1 compile, 2 compiles) */
    cr_assert_not_null(strstr(u->out.data, want), "want '%s': %s", want, u->out.data);
    cr_assert_null(strstr(u->out.data, "stored compiled"), "%s", u->out.data);
    assert_reproduced("replay", "library_test_decorator.py");
}

/* A dataclass with an attribute outside its fields and a plain object of a
 * library class: captured (not opaque), and each recompile on one of their
 * attributes recurs. */
Test(replay, dataclass_extras_and_library_objects) {
    scenario("objects.py");
    assert_reproduced("replay", "objects.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'opaque'"), 0);
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'object' AND"
                                " type = 'argparse.Namespace'"),
                 0);
    e2e_close(a);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    char *reasons = e2e_sql(b, "SELECT group_concat(reason, ' | ') FROM v_guard_failures");
    cr_assert_not_null(strstr(reasons, "cfg._internal == 1.0"), "%s", reasons);
    cr_assert_not_null(strstr(reasons, "ns.steps == 3"), "%s", reasons);
    cr_assert_not_null(strstr(reasons, "pt.x == 1.0"), "%s", reasons);
    e2e_close(b);
    a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'object' AND type = "
                                "'__main__.Point' AND json_extract(value, '$.slots._Point__y') "
                                "IS NOT NULL"),
                 0, "the slots, a private one by its mangled name");
}

/* numpy scalars and arrays; a torch.Generator (its state; also on a resume
 * function's stack after the graph break it causes). */
Test(replay, numpy_values) {
    scenario("numpy_values.py");
    assert_reproduced("replay", "numpy_values.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'opaque'"), 0);
    cr_assert_str_eq(e2e_sql_lines(a, NULL,
                                   "SELECT DISTINCT kind || ' ' || type FROM v_values"
                                   " WHERE kind IN ('npscalar', 'ndarray', 'npdtype', 'npinfo')"
                                   " ORDER BY 1"),
                     "ndarray numpy.ndarray\nnpdtype numpy.dtypes.Float16DType\n"
                     "npdtype numpy.dtypes.Float32DType\nnpinfo numpy.finfo\nnpinfo numpy.iinfo\n"
                     "npscalar numpy.float16\nnpscalar numpy.int64\n");
}

Test(replay, generators) {
    scenario("generator.py");
    assert_reproduced("replay", "generator.py");
    DrTrace *g = e2e_open(e2e_path("replay/t.db"));
    cr_assert_gt(e2e_sql_int(g, "SELECT count(*) FROM v_values WHERE kind = 'generator'"), 0);
    cr_assert_gt(e2e_sql_int(g, "SELECT count(*) FROM v_compiles WHERE qualname LIKE"
                                " '%torch_dynamo_resume_in_f%'"),
                 0);
}

/* Classes defined inside test methods (an nn.Module whose forward is
 * compiled, a plain state object, a mapping whose base the method imports,
 * a dataclass with field(default_factory=dict) the compile constructs, a
 * frozen dataclass whose field's default a call made, a class whose
 * subclasses beside it are listed): made from the stored source with the
 * recorded qualnames and free variables; every compile reproduces (the
 * last three compiles before 0.7.8: the field left out, the dataclass
 * __init__ found among another module's, the subclasses not made).  A
 * field whose default_factory is a lambda is made with the source's lambda
 * (before 0.7.9, the frozen dataclass's compile diverged: the field left
 * out), and the closure cells of the methods @dataclass generates (a
 * frozen one's __setattr__ holds the class) are not captured: the replay's
 * @dataclass makes them. */
Test(replay, classes_defined_inside_functions) {
    scenario("local_class.py");
    assert_reproduced("replay", "local_class.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_captures WHERE NOT replayable"), 0);
    cr_assert_str_eq(e2e_sql_lines(a, NULL,
                                   "SELECT DISTINCT json_extract(value, '$.class.qualname')"
                                   " FROM v_values WHERE kind IN ('module', 'object')"
                                   " AND json_extract(value, '$.class.local')"
                                   " ORDER BY 1"),
                     "Case.test_mapping.<locals>.TensorDict\nCase.test_module.<locals>.Block\n"
                     "Case.test_state.<locals>.State\n");
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'class' AND "
                                "json_array_length(json_extract(value, '$.subclasses')) = 2"),
                 1);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE value LIKE "
                                "'%Holder.__setattr__:%'"),
                 0);
    e2e_close(a);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_guard_failures WHERE reason LIKE"
                                " '%training%'"),
                 1);
}

/* --frame with a full qualname replays that frame and its own resume
 * function, not another test's frame of the same short name. */
Test(replay, frame_by_exact_qualname) {
    scenario("same_names.py");
    if (e2e_python_minor() == 10) {
        /* 3.10 code objects carry no qualname and frames go by their plain
         * name, as Dynamo names them there: `--frame fn` is both fn frames
         * and their resume functions, never another name's. */
        E2eProc *r = dynrec((const char *[]){"replay", "--trust", "-o", "replay/r.db", "--frame",
                                             "fn", "replay/t.db", NULL});
        cr_assert_eq(r->status, 0, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                     r->err.data);
        cr_assert_not_null(strstr(r->out.data, "reproduced 4/4 compiles"), "%s", r->out.data);
        return;
    }
    E2eProc *r = dynrec((const char *[]){"replay", "--trust", "-o", "replay/r.db", "--frame",
                                         "T.test_a.<locals>.fn", "replay/t.db", NULL});
    cr_assert_eq(r->status, 0, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->out.data, "reproduced 2/2 compiles"), "%s", r->out.data);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE qualname LIKE 'T.test_b%'"),
                 0);
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE qualname LIKE"
                                " 'T.test_a.<locals>.torch_dynamo_resume_in_fn_at_%'"),
                 1);
}

/* Without --trust, an object whose class has a finalizer is not rebuilt
 * unconfined (--no-sandbox; inside the sandbox it is, and its finalizer
 * cannot write): the frame is named not replayable and it never runs. */
Test(replay, finalizer_objects_need_trust) {
    e2e_copy_script("replay/finalizer.py");
    E2eProc *p = sh(e2e_fmt("cd '%s' && '%s' run -q -o t.db finalizer.py >/dev/null",
                            e2e_path("replay"), e2e_bin),
                    E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, p->err.data);
    char *before = e2e_slurp(e2e_path("replay/finalized.log"), NULL);
    cr_assert_str_eq(before ? before : "", "2\n", "the recording itself finalizes once");
    E2eProc *r =
        sh(e2e_fmt("cd '%s' && '%s' replay --no-sandbox -o r.db t.db", e2e_path("replay"), e2e_bin),
           E2E_TORCH_TIMEOUT_MS);
    cr_assert_eq(r->status, 3 << 8, "exit %s: %s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->out.data, "has a finalizer"), "%s", r->out.data);
    /* Nothing compared is never "identical". */
    cr_assert_not_null(strstr(r->out.data, "\nnothing was replayed: "), "%s", r->out.data);
    cr_assert_null(strstr(r->out.data, "\nidentical: "), "%s", r->out.data);
    E2eProc *j = sh(e2e_fmt("cd '%s' && '%s' replay --no-sandbox --json -o j.db t.db",
                            e2e_path("replay"), e2e_bin),
                    E2E_TORCH_TIMEOUT_MS);
    cr_assert_eq(j->status, 3 << 8, "exit %s: %s%s", e2e_status_text(j->status), j->out.data,
                 j->err.data);
    cr_assert_not_null(strstr(j->out.data, "\"nothing_replayed\": true"), "%s", j->out.data);
    char *after = e2e_slurp(e2e_path("replay/finalized.log"), NULL);
    cr_assert_str_eq(after ? after : "", "2\n", "the replay ran the finalizer");
}

/* What-if: without automatic dynamic shapes the second size of `grow`
 * is compiled static: the replay diverges at that compile. */
Test(replay, what_if_set_diverges_naming_the_compile) {
    scenario("closures.py");
    E2eProc *r =
        dynrec((const char *[]){"replay", "--trust", "-o", "replay/r.db", "--frame", "grow",
                                "--set", "automatic_dynamic_shapes=False", "replay/t.db", NULL});
    cr_assert_eq(r->status, 256, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->out.data, "--set automatic_dynamic_shapes=False"), "%s",
                       r->out.data);
    cr_assert_not_null(strstr(r->out.data, "different: first divergence in guards"), "%s",
                       r->out.data);
    cr_assert_not_null(strstr(r->out.data, "compile #1 of grow"), "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "/1 in a, 0/1 in b"), "%s", r->out.data);
    /* --compile replays that frame up to that compile, and agrees; for a
     * resume function (frame 1) its parent's compiles replay first. */
    for (int i = 0; i < 2; i++) {
        E2eProc *c = dynrec((const char *[]){"replay", "--trust", "-o", "replay/c.db", "--compile",
                                             i ? "1/1" : "2/1", "--json", "replay/t.db", NULL});
        cr_assert_eq(c->status, 0, "%s%s", c->out.data, c->err.data);
        cr_assert_not_null(strstr(c->out.data, "\"reproduced\": 2, \"compared\": 2"), "%s",
                           c->out.data);
    }
}

/* An argument of a type the capture does not support: that frame is listed
 * as not replayable (exit 3); the other frame replays. */
Test(replay, unsupported_argument_is_not_replayable) {
    scenario("opaque_arg.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_captures WHERE replayable = 0"), 1);
    E2eProc *r =
        dynrec((const char *[]){"replay", "--trust", "-o", "replay/r.db", "replay/t.db", NULL});
    cr_assert_eq(r->status, 3 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(
        strstr(r->out.data, "reproduced 1/1 compile; 1 frame not replayable (1 recorded compile):"),
        "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "with_lock (opaque_arg.py:9): argument 'lock' of "
                                           "type _thread.lock"),
                       "%s", r->out.data);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE qualname = 'plain'"), 1);
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE qualname = 'with_lock'"), 0);
}

/* A frame not replayable before torch._dynamo.reset() is left out in that
 * epoch only: its compiles after the reset are first compiles again, and
 * replay (the frame was left out in every epoch: 0/0). */
Test(replay, frame_not_replayable_before_a_reset) {
    scenario("reset_epochs.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_compiles WHERE qualname = 'f'"), 3);
    E2eProc *r = dynrec((const char *[]){"replay", "-o", "replay/r.db", "replay/t.db", NULL});
    cr_assert_eq(r->status, 3 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(
        strstr(r->out.data,
               "reproduced 2/2 compiles; 1 frame not replayable (1 recorded compile):"),
        "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "\nidentical: 1 frame, 2 compiles,"), "%s", r->out.data);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_str_eq(
        e2e_sql(b, "SELECT group_concat(compile_id, ' ') FROM (SELECT compile_id FROM v_compiles"
                   " WHERE qualname = 'f' ORDER BY compile_id)"),
        "1:0/0 1:0/1");
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_guard_failures WHERE compile_id = '1:0/1'"),
                 1);
}

/* enable_trace_load_build_class, which Dynamo's TestCase sets, is set
 * again (the class statement was a graph break in the replay: 2/3), and
 * log_compilation_metrics, which only logs, is left out without a note. */
Test(replay, build_class_and_logging_settings) {
    scenario("build_class_config.py");
    assert_reproduced("replay", "build_class_config.py");
    E2eProc *r = assert_confined_reproduces(3);
    cr_assert_null(strstr(r->out.data, "log_compilation_metrics"), "%s", r->out.data);
}

/* Classes defined inside a function, one per call: their methods' closure
 * cells (a helper defined beside the class) hold the recorded values (the
 * rebuilt class bound the names to None, or read them as globals: Dynamo
 * failed to find the helper), and each recorded class is a class of its
 * own that shares its methods' code with the others, so the second
 * module's forward is a recompile on a type check (2/4 before). */
Test(replay, local_classes_with_closures_one_per_call) {
    scenario("local_class_closures.py");
    assert_reproduced("replay", "local_class_closures.py");
    assert_confined_reproduces(4);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_guard_failures"), 2);
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE qualname ="
                                " 'make.<locals>.Block.forward'"),
                 2);
}

/* A class of the program registered with pytree while it runs: its entry
 * in torch.utils._pytree.SUPPORTED_NODES is put back (dynrec sets no other
 * state of torch; the nonstrict_trace call was an error), once, so that
 * the recompile fails the recorded guard, not the dict's version. */
Test(replay, pytree_registrations_of_the_program) {
    scenario("pytree_registrations.py");
    assert_reproduced("replay", "pytree_registrations.py");
    E2eProc *r = assert_confined_reproduces(2);
    cr_assert_null(strstr(r->out.data, "SUPPORTED_NODES"), "%s", r->out.data);
}

/* Dynamo's decorator objects in the program's closures and modules
 * (error_on_graph_break, torch._dynamo.disable of a submodule, set_stance)
 * are captured as plain objects of their torch classes: every frame that
 * reached one was not replayable (7 of the 11 compiles).  A compile under
 * error_on_graph_break(True) that traces no op is compiled empty, as
 * recorded (skipped before: "No ops traced"), and the mark
 * assume_constant_result sets on a local class's property getter after
 * its class statement is set again (method_attrs; before, Dynamo traced the
 * getter: 14 guards more and a side effect). */
Test(replay, dynamo_decorator_objects) {
    scenario("dynamo_decorators.py");
    assert_reproduced("replay", "dynamo_decorators.py");
    assert_confined_reproduces(13);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_ev WHERE kind = 'capture' AND"
                                " json_extract(data, '$.global_state.error_on_graph_break') = 1"),
                 1);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE value LIKE "
                                "'%method_attrs%WithId.cached_id%'"),
                 1);
}

/* A backend function defined inside a function, one per call: captured
 * by value (backend_fn, from 0.7.10) and made from the stored source, one
 * per recorded function (an eager stand-in of its own per function, named
 * as it, before), so the second is a recompile on BACKEND_MATCH as recorded
 * (one "eager" for both was a cache hit: 1/2); no note of eager. */
Test(replay, backend_functions_one_per_call) {
    scenario("local_backends.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM value_nodes WHERE node = 0"
                                " AND json_extract(value, '$.backend_fn') IS NOT NULL"),
                 2);
    e2e_close(a);
    E2eProc *r = dynrec((const char *[]){"replay", "-o", "replay/r.db", "replay/t.db", NULL});
    cr_assert_eq(r->status, 0, "%s%s", r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->out.data, "reproduced 2/2 compiles"), "%s", r->out.data);
    cr_assert_null(strstr(r->out.data, "eager instead"), "%s", r->out.data);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_guard_failures WHERE reason LIKE"
                                " '%BACKEND_MATCH%debug_compiler%'"),
                 1);
}

/* torch._dynamo.patch_dynamo_config and dont_skip_tracing wrappers: the
 * proxy their closures hold is captured by its changes (config_patch) and
 * made again by patch_dynamo_config (3 of the 5 compiles were not
 * replayable: "of type ...DynamoConfigPatchProxy"). */
Test(replay, dynamo_config_patches) {
    scenario("config_patches.py");
    assert_reproduced("replay", "config_patches.py");
    assert_confined_reproduces(5);
}

/* Classes defined side by side in one test (class C(B), B(A)): C's base is
 * the B that a method names (B.mul(self, x), super(B, self)), one class per
 * recorded class (the replay made B twice: "super(type, obj): obj must be
 * an instance or subtype of type"); class attributes the definitions do not
 * make though they are functions or descriptors (add = my_add, prop =
 * FlagDescriptor(), set on the class later) are set from the capture; an
 * inference tensor is made under inference_mode (its TENSOR_MATCH lacked
 * the autograd keys); torch.backends.cuda.matmul.allow_tf32 (in
 * GLOBAL_STATE) and torch.compiler.config.dynamic_sources are set as
 * recorded; a compile inside a TorchDispatchMode's __torch_dispatch__
 * (below autograd: the dispatch keys it excludes) and one inside
 * inference_mode run so again (their TENSOR_MATCH had the autograd keys);
 * a local class under @torch._dynamo.disable keeps the disabled __call__
 * and _call_impl that decorator set (the replay broke inside _call_impl,
 * not at the call); a class attribute the class body set and the program
 * changed between two calls (A.a = 5) has its value at each compile (the
 * recompile was a cache hit).  Confined: 11/11 (1/11 before). */
Test(replay, local_class_identity_and_global_state) {
    scenario("local_class_identity.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
#define GS(path)                                                                                    \
    "SELECT count(*) FROM v_ev WHERE kind = 'capture' AND json_extract(data, '$.global_state." path \
    "') IS NOT NULL"
    cr_assert_eq(e2e_sql_int(a, GS("tls_exclude.raw")), 2);
    cr_assert_eq(e2e_sql_int(a, GS("inference_mode")), 1);
    cr_assert_eq(e2e_sql_int(a, GS("allow_tf32")), 11);
#undef GS
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT k.key) FROM v_values v, json_each("
                                "json_extract(v.value, '$.class_attrs')) k WHERE k.key LIKE"
                                " 'test_disabled_class.<locals>.Inner.%%'"),
                 2);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'tensor' AND"
                                " json_extract(value, '$.inference') = 1"),
                 2);
    cr_assert_geq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE value LIKE"
                                 " '%%\"bases\": {\"B\": {%%'"),
                  1);
    e2e_close(a);
    assert_reproduced("replay", "local_class_identity.py");
    assert_confined_reproduces(11);
}

/* Objects Dynamo guards by id stay alive as the program kept them: the
 * replay keeps a frame's latest inputs, so the second module fails the id
 * of the first (the replay said "L['m'] got deallocated": 3/4), and lets
 * them go where the recording says the object died (test_dropped). */
Test(replay, objects_guarded_by_id_live_as_recorded) {
    scenario("ids_kept.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_guard_failures WHERE reason LIKE"
                                " '%%got deallocated%%'"),
                 1);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_guard_failures WHERE reason LIKE"
                                " '%%___check_obj_id(m,%%'"),
                 1);
    e2e_close(a);
    assert_reproduced("replay", "ids_kept.py");
    assert_confined_reproduces(4);
}

/* torch.compile(options={"guard_filter_fn": f}) with a function of the
 * program and with one of torch's: the function is captured with the frame
 * (the frame node's guard_filter_fn) and passed to torch.compile again, so
 * the guards it drops are dropped (0/3 before: the replay kept them all). */
Test(replay, guard_filter_functions) {
    scenario("guard_filter.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'frame' AND"
                                " json_extract(value, '$.guard_filter_fn') IS NOT NULL"),
                 3);
    e2e_close(a);
    assert_reproduced("replay", "guard_filter.py");
    assert_confined_reproduces(3);
}

/* numpy arrays that are not C-contiguous (np.broadcast_to's zero strides,
 * read-only; a[:, None]; a transpose) keep their strides, in elements, and
 * read-only flag: Dynamo guards the strides of the tensor it makes of them
 * (0/3 before: made contiguous). */
Test(replay, numpy_arrays_keep_their_strides) {
    scenario("numpy_strides.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_str_eq(e2e_sql_lines(a, NULL,
                                   "SELECT json_extract(value, '$.strides') FROM v_values WHERE"
                                   " kind = 'ndarray' ORDER BY capture, node"),
                     "[0,1]\n[1,0]\n[1,3]\n");
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'ndarray' AND"
                                " json_extract(value, '$.readonly') = 1"),
                 1);
    e2e_close(a);
    assert_reproduced("replay", "numpy_strides.py");
    assert_confined_reproduces(3);
}

/* A module-level @torch.library.custom_op (its CustomOpDef, with a fake
 * registered by @scale.register_fake) read as a global: a reference to the
 * module's name, which the replay's definitions make again by running the
 * decorated defs (the frame was not replayable: "of type
 * torch._library.custom_ops.CustomOpDef"); and an op whose schema
 * torch.library.define gives at module level (with a pt2_compliant tag),
 * defined again by the real torch.library.define, its
 * @torch.library.impl and register_fake definitions beside it. */
Test(replay, module_level_custom_ops) {
    scenario("custom_ops.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'singleton' AND"
                                " json_extract(value, '$.name') = 'scale'"),
                 2);
    e2e_close(a);
    assert_reproduced("replay", "custom_ops.py");
    assert_confined_reproduces(2);
}

/* Custom ops a module makes with torch.library.Library objects:
 * lib.define and lib.impl (a kernel of the module, one of torch's),
 * torch.library.define and a @torch.library.impl of a FRAGMENT library
 * (lib=frag), a register_fake with lib=lib.  The replay makes each
 * Library with the real class and binds its name for the decorators
 * beside it (before, none of the ops existed: 0/2, "errors 0 vs 1"). */
Test(replay, module_level_library_objects) {
    scenario("library_objects.py");
    assert_reproduced("replay", "library_objects.py");
    assert_confined_reproduces(2);
}

/* A backend function a test defines raises (BackendCompilerFailed, raised
 * and under suppress_errors): the replay's stand-in for it raises where the
 * recorded one did, as the recorded builtin type with its message, and
 * returns the graph elsewhere (before, 1/3: the failed compiles compiled,
 * with guards the recording never built). */
Test(replay, stand_in_backends_raise_where_the_recorded_ones_did) {
    scenario("backend_raises.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_errors WHERE exc_type = "
                                "'BackendCompilerFailed'"),
                 2);
    e2e_close(a);
    assert_reproduced("replay", "backend_raises.py");
    E2eProc *u = assert_confined_reproduces(3);
    (void)u;
    DrTrace *r = e2e_open(e2e_path("replay/u.db"));
    cr_assert_eq(e2e_sql_int(r, "SELECT count(*) FROM v_errors WHERE message LIKE "
                                "'backend=''broken_backend'' raised:%ValueError: two inputs%'"),
                 1);
    e2e_close(r);
}

/* torch._dynamo.export of a function between torch.compile calls of it:
 * export drops the code's cache entries before and after, so each compile
 * after it is a first compile of a new frame id (0/0, 1/0, 2/0, 3/0); the
 * replay drops them too (before, 1/4: the later compiles recompiled the
 * export's cache entry). */
Test(replay, export_between_calls_starts_the_frame_again) {
    scenario("export_between_calls.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_compiles WHERE recompile = 0"), 4);
    e2e_close(a);
    assert_reproduced("replay", "export_between_calls.py");
    assert_confined_reproduces(4);
}

/* A class of the program one of whose method decorators fails in the
 * replay (a name a statement that is not a definition binds; a name a
 * newer torch has): the class is made without that method, with a note,
 * so the frames of its other methods replay (before, "has no Tests": not
 * replayable). */
Test(replay, class_with_a_method_that_cannot_be_made) {
    scenario("class_with_failing_method.py");
    assert_reproduced("replay", "class_with_failing_method.py");
    E2eProc *u = assert_confined_reproduces(2);
    cr_assert_not_null(strstr(u->out.data, "NameError: name 'marker' is not defined"), "%s",
                       u->out.data);
}

/* Custom ops a test function defines in its body for the functions it
 * compiles (with torch.library._scoped_library(...) as lib: define, impl
 * of torch's functions, lib.define, defs decorated with
 * @torch.library.impl(lib, ...) and register_fake): made before the
 * test's first frame, undefined at the next test's (which defines
 * mylib::bar again, with another schema), kernels that are lambdas, two
 * `with` blocks binding one name, each Library kept until the next test
 * (before, 0/3 and one frame not
 * replayable: "no op mylib::bar"). */
Test(replay, custom_ops_a_test_defines) {
    scenario("local_custom_ops.py");
    assert_reproduced("replay", "local_custom_ops.py");
    E2eProc *u = assert_confined_reproduces(6);
    cr_assert_null(strstr(u->out.data, "custom op statement"), "%s", u->out.data);
}

/* Weak containers and references a compiled function reads (a
 * WeakKeyDictionary of modules, a WeakSet, a module's global
 * WeakKeyDictionary, weakref.ref of a live object and of a dead one):
 * made again over their items, which the replay keeps alive while the
 * frame compiles (before: not replayable, "of type weakref.ReferenceType";
 * the recompile is states' length). */
Test(replay, weak_containers_and_references) {
    scenario("weak_containers.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a,
                             "SELECT count(DISTINCT json_extract(value, '$.class')) FROM v_values"
                             " WHERE kind = 'weak'"),
                 2);
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'weakref' AND"
                                " json_extract(value, '$.referent') IS NULL"),
                 0);
    e2e_close(a);
    assert_reproduced("replay", "weak_containers.py");
    assert_confined_reproduces(2);
}

/* A bare object() a function makes (a sentinel): made again as an
 * object() (both frames were not replayable: "of type builtins.object"). */
Test(replay, bare_object_sentinels) {
    scenario("sentinels.py");
    assert_reproduced("replay", "sentinels.py");
    assert_confined_reproduces(2);
}

/* A registry like transformers' ACT2FN (an OrderedDict subclass whose
 * __getitem__ makes a module per lookup) that a compiled function reads
 * through its module: its items are read through the C type (dict(v)
 * called __getitem__: the state held modules, not classes, which the
 * replay put in the registry: 0/3), and, in a module of the program,
 * which the replay defines from its definitions only, it is made again as
 * the object it is; a class attribute of the program the guards read
 * (Flags.scale, Instantiator.made, set while it runs) is put back. */
Test(replay, registries_read_without_their_getitem) {
    scenario("registry_getitem.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
#define STATE                                                                                      \
    "SELECT count(*) FROM v_values WHERE capture IN (SELECT num FROM v_ev WHERE kind = 'capture_state')"
    cr_assert_eq(e2e_sql_int(a, STATE " AND kind = 'module'"), 0);
    cr_assert_geq(e2e_sql_int(a, STATE " AND kind = 'class' AND value LIKE '%%Plus1%%'"), 1);
#undef STATE
    e2e_close(a);
    assert_reproduced("replay", "registry_getitem.py");
    assert_confined_reproduces(3);
}

/* A leaf view that requires grad of a base that does not: made as such
 * (the replay refused the whole trace as malformed, exit 65). */
Test(replay, leaf_views_that_require_grad) {
    scenario("leaf_views.py");
    assert_reproduced("replay", "leaf_views.py");
    assert_confined_reproduces(1);
}

/* A dict's iterators part way through (a dict comprehension's `.0` in
 * transformers' output capturing): iter() of the same dict's view,
 * advanced as far as recorded (the frames were not replayable: "of type
 * builtins.dict_keyiterator"). */
Test(replay, dict_iterators_part_way) {
    scenario("dict_iterators.py");
    assert_reproduced("replay", "dict_iterators.py");
    assert_confined_reproduces(6);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'iterator' AND"
                                " json_extract(value, '$.make') IN ('dict_keys', 'dict_values')"),
                 2);
}

/* Modules with parametrized weights (weight_norm, as in Wav2Vec2 and
 * HuBERT): the class torch.nn.utils.parametrize makes per module
 * (ParametrizedConv1d) is made again by parametrize's own functions, one
 * per recorded class (every frame that reached one was not replayable:
 * "of type torch.nn.utils.parametrize.ParametrizedConv1d"). */
Test(replay, parametrized_modules) {
    scenario("weight_norm.py");
    assert_reproduced("replay", "weight_norm.py");
    assert_confined_reproduces(2);
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT json_extract(value, '$.class.parametrized"
                                ".number')) FROM v_values WHERE kind = 'module' AND"
                                " json_extract(value, '$.class.parametrized') IS NOT NULL"),
                 2);
}

/* An object whose class has its own __getattribute__: its __dict__ is
 * filled without calling it (hasattr(obj, "__dict__") ran the program's
 * __getattribute__, which failed on the empty object: the whole replay
 * stopped as malformed, exit 65). */
Test(replay, objects_with_their_own_getattribute) {
    scenario("own_getattribute.py");
    assert_reproduced("replay", "own_getattribute.py");
    assert_confined_reproduces(1);
}

/* A dict subclass with a __getattr__ of its own: capture never calls it
 * (it asked the object for `name`, which the program then saw: "asked
 * ['name', 'offset']", and the frame was not replayable). */
Test(replay, objects_with_their_own_getattr) {
    scenario("own_getattr.py");
    E2eProc *p = sh(e2e_fmt("cd '%s/replay/gone' && '%s' run -q -o ../again.db own_getattr.py",
                            e2e_dir, e2e_bin),
                    E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "asked ['offset']\n"), "%s", p->out.data);
    assert_reproduced("replay", "own_getattr.py");
    assert_confined_reproduces(1);
}

/* torch.return_types struct sequences (x.max(dim), x.topk(k)) across a
 * graph break and as an argument, and a collections.deque with a maxlen:
 * made again from their items (those frames were not replayable: "of type
 * torch.return_types.max", "of type collections.deque"). */
Test(replay, struct_sequences_and_deques) {
    scenario("structseqs_and_deques.py");
    assert_reproduced("replay", "structseqs_and_deques.py");
    assert_confined_reproduces(4);
}

/* A frame torch._dynamo.export traced is traced for export again (its
 * lambda guards on the sizes, not a TENSOR_MATCH); a frame compiled inside
 * torch.func.jvp is not replayable, and says why. */
Test(replay, export_is_traced_for_export_and_transforms_are_named) {
    scenario("export_and_transforms.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_ev WHERE kind = 'capture' AND"
                                " json_extract(data, '$.export')"),
                 1);
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_guards WHERE guard LIKE"
                                " 'LAMBDA_GUARD: L[''x''].size()[0] == 1%'"),
                 0);
    long long guards =
        e2e_sql_int(a, "SELECT count(*) FROM v_guards g JOIN v_compiles c ON c.compile_id ="
                       " g.compile_id WHERE c.qualname = 'Model.forward'");
    e2e_close(a);
    E2eProc *r = dynrec((const char *[]){"replay", "-o", "replay/r.db", "replay/t.db", NULL});
    cr_assert_eq(r->status, 3 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(
        strstr(r->out.data, "reproduced 1/1 compile; 1 frame not replayable (1 recorded compile):"),
        "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "fn (export_and_transforms.py:17): compiled inside "
                                           "torch.func's Jvp: the replay enters vmap, grad,"
                                           " functionalize only"),
                       "%s", r->out.data);
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_guards g JOIN v_compiles c ON"
                                " c.compile_id = g.compile_id WHERE c.qualname = 'Model.forward'"),
                 guards);
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_guards WHERE guard LIKE 'TENSOR_MATCH%'"),
                 0);
    e2e_close(b);
}

/* torch.compile(isolate_recompiles=True): each recorded region is a region
 * of its own in the replay, so the second region's compile is a first
 * compile and the first region's next one a recompile, as recorded. */
Test(replay, isolate_recompiles_regions_keep_their_own_caches) {
    scenario("isolate_regions.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_str_eq(e2e_sql_lines(a, NULL,
                                   "SELECT group_concat(json_extract(data, '$.isolate_region'))"
                                   " FROM v_ev WHERE kind = 'capture'"),
                     "0,1,0\n");
    cr_assert_str_eq(e2e_sql_lines(a, NULL, "SELECT group_concat(recompile) FROM v_compiles"),
                     "0,0,1\n");
    e2e_close(a);
    assert_reproduced("replay", "isolate_regions.py");
}

/* Backend objects (PyTorch's tests pass a CompileCounter per compile): each
 * recorded object is an object of its own in the replay, made with the
 * backend it wraps, so a second object's compile is a BACKEND_MATCH
 * recompile as recorded and the wrapper of EagerAndRecordGraphs is made
 * around one, never eager with a note. */
Test(replay, backend_objects_are_rebuilt_one_per_recorded_object) {
    scenario("backend_objects.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_str_eq(
        e2e_sql_lines(a, NULL,
                      "SELECT group_concat(json_extract(data, '$.backend.instance') || ':' ||"
                      " coalesce(json_extract(data, '$.backend.backend_arg.instance_of.qualname'),"
                      " json_extract(data, '$.backend.backend_arg')), ',') FROM v_ev"
                      " WHERE kind = 'capture'"),
        "0:eager,1:eager,2:EagerAndRecordGraphs\n");
    cr_assert_str_eq(e2e_sql_lines(a, NULL, "SELECT group_concat(recompile) FROM v_compiles"),
                     "0,1,1\n");
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_guard_failures WHERE reason LIKE"
                                " '%BACKEND_MATCH%'"),
                 0);
    e2e_close(a);
    assert_reproduced("replay", "backend_objects.py");
    E2eProc *r =
        dynrec((const char *[]){"replay", "--trust", "-o", "replay/r2.db", "replay/t.db", NULL});
    cr_assert_null(strstr(r->out.data, "cannot be rebuilt"), "%s", r->out.data);
}

/* Computed class attributes of a class defined inside a function (y =
 * torch.ones(4) * 3, limit = max(NAMES)): its definitions do not make them,
 * so the captured values are set on the rebuilt class (the replay failed
 * with "Observed exception" without them); a module-level class body runs
 * whole. */
Test(replay, computed_attributes_of_local_classes) {
    scenario("class_attrs.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_str_eq(
        e2e_sql_lines(
            a, NULL,
            "SELECT group_concat(k.key, ',') FROM v_values v,"
            " json_each(json_extract(v.value, '$.class_attrs')) k WHERE v.kind = 'object'"),
        "test_case.<locals>.Holder.y,test_case.<locals>.Holder.limit\n");
    e2e_close(a);
    assert_reproduced("replay", "class_attrs.py");
}

/* torch.compile(recompile_limit=2) is recorded as such (capture data
 * recompile_limit) and passed to torch.compile again, so the config
 * changes when the recording's did (setting config.recompile_limit at the
 * start instead made the replay differ in config) and the third compile
 * hits the limit. */
Test(replay, recompile_limit_of_torch_compile) {
    scenario("recompile_limit.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_str_eq(e2e_sql_lines(a, NULL,
                                   "SELECT group_concat(json_extract(data, '$.recompile_limit'))"
                                   " FROM v_ev WHERE kind = 'capture'"),
                     "2,2,2\n");
    cr_assert_str_eq(e2e_sql_lines(a, NULL, "SELECT group_concat(outcome) FROM v_compiles"),
                     "compiled,compiled,error\n");
    e2e_close(a);
    assert_reproduced("replay", "recompile_limit.py");
}

/* A value the capture cannot read (reading its state raises) is opaque,
 * never an error that ends capture for the rest of the run: the later
 * compiles are captured and replay (PyTorch's test_input_attr_tracking
 * replayed 9/20 compiles when a vmap test turned capture off); the frame is
 * named not replayable with the error. */
Test(replay, unreadable_values_never_end_capture) {
    scenario("unreadable_then_plain.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_ev WHERE kind = 'capture'"), 3);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_ev WHERE kind = 'recorder_error'"), 0);
    cr_assert_str_eq(e2e_meta(a, "hook.capture"), "active");
    e2e_close(a);
    E2eProc *r =
        dynrec((const char *[]){"replay", "--trust", "-o", "replay/r.db", "replay/t.db", NULL});
    cr_assert_eq(r->status, 3 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(
        strstr(r->out.data,
               "reproduced 2/2 compiles; 1 frame not replayable (1 recorded compile):"),
        "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "inner (unreadable_then_plain.py:16): argument 'obj'"
                                           " of type __main__.Fragile (RuntimeError: no state"
                                           " to read)"),
                       "%s", r->out.data);
}

/* Compiles inside torch.func transforms (vmap with a recompile, grad, vmap
 * over grad, functionalize, grad's nesting): the capture keeps the
 * transform stack and each wrapped tensor as the tensor it wraps, its
 * transform and level; the replay enters the same transforms, wraps the
 * tensors again and reproduces every compile, confined (they were named
 * "compiled inside torch.func's Vmap": PyTorch's test_input_attr_tracking,
 * 5 compiles). */
Test(replay, compiles_inside_torch_func_transforms) {
    scenario("transforms.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    long long n = e2e_sql_int(a, "SELECT count(*) FROM v_captures");
    cr_assert_eq(n, 7);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_captures WHERE NOT replayable"), 0);
    cr_assert_str_eq(e2e_sql(a, "SELECT group_concat(DISTINCT json_extract(value, '$.transform'))"
                                " FROM (SELECT value FROM v_values WHERE kind = 'wrapped_tensor'"
                                " ORDER BY json_extract(value, '$.transform'))"),
                     "Functionalize,Grad,Vmap");
    /* vmap over grad: a grad wrapper at level 2 around a batched tensor. */
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values w JOIN v_values i ON"
                                " i.capture = w.capture AND i.node = json_extract(w.value,"
                                " '$.inner') WHERE w.kind = 'wrapped_tensor' AND"
                                " json_extract(w.value, '$.level') = 2 AND i.kind ="
                                " 'wrapped_tensor'"),
                 0);
    e2e_close(a);
    assert_confined_reproduces(n);
    assert_reproduced("replay", "transforms.py");
}

/* fx GraphModules compiled as they are (make_fx's with aten operators and
 * pytree inputs, symbolic_trace's with submodules and a buffer, one built
 * node by node with a method call and keyword arguments, const folding's
 * FoldedGraphModule holding its folded subgraph): captured as
 * graph data, built again by torch.fx in the replay, and the recompile of
 * the same GraphModule is a recompile there too (it was "argument 'self'
 * of type ...GraphModule.__new__.<locals>.GraphModuleImpl"). */
Test(replay, fx_graph_modules_replay_from_their_graphs) {
    scenario("fx_graph_modules.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    long long n = e2e_sql_int(a, "SELECT count(*) FROM v_captures");
    cr_assert_eq(n, 8);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_captures WHERE NOT replayable"), 0);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT capture) FROM v_values WHERE kind ="
                                " 'graph_module'"),
                 8);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'graph_module' AND"
                                " json_extract(value, '$.class.qualname') = 'FoldedGraphModule'"),
                 1);
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'torch_op' AND"
                                " value = '\"aten.sin.default\"'"),
                 0);
    /* Its code is stored nowhere: no function node holds generated code. */
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'function' AND"
                                " json_extract(value, '$.filename') LIKE '<eval_with_key>%%'"),
                 0);
    e2e_close(a);
    assert_confined_reproduces(n);
    assert_reproduced("replay", "fx_graph_modules.py");
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    /* the make_fx one's and the hand-built one's recompiles */
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_guard_failures"), 2);
}

/* A TestCase's private runner state that cannot be captured (unittest's
 * _outcome reaches sys.stdout; a lock) is left out, and the test method
 * bound to the object as its own attribute through a wrapper is bound
 * again: the frame replays (it was "argument 'self'.__dict__['_outcome']...
 * of type _io.TextIOWrapper"; PyTorch's make_dynamo_test tests in
 * test_exceptions, 18 compiles, the same). */
Test(replay, test_case_runner_state_is_left_out) {
    scenario("test_case_state.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_ev WHERE kind = 'capture' AND"
                                " json_extract(data, '$.replayable')"),
                 1);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values v JOIN v_values k ON"
                                " k.capture = v.capture AND k.kind = 'str' AND k.value IN"
                                " ('\"_outcome\"', '\"_lock\"') WHERE v.kind = 'dict' AND"
                                " EXISTS (SELECT 1 FROM json_each(v.value) p WHERE"
                                " json_extract(p.value, '$[0]') = k.node)"),
                 0);
    e2e_close(a);
    assert_reproduced("replay", "test_case_state.py");
}

/* Sources gone and no --trust: exit 77 and nothing ran (no replay trace). */
/* Unconfined, the stored definitions of sources that are not on disk run
 * only with --trust; confined (the default where bubblewrap works) they
 * run without it. */
Test(replay, missing_sources_need_trust) {
    copy_example_to("shape_recompiles.py", "w");
    record_and_hide("w", "shape_recompiles.py");
    E2eProc *r = dynrec((const char *[]){"replay", "--no-sandbox", "-o", "w/r.db", "w/t.db", NULL});
    cr_assert_eq(r->status, 77 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->err.data, "shape_recompiles.py is not on disk; nothing was run"),
                       "%s", r->err.data);
    cr_assert_not_null(strstr(r->err.data, "--trust"), "%s", r->err.data);
    cr_assert_neq(access(e2e_path("w/r.db"), F_OK), 0, "a replay ran without --trust");
    E2eProc *c = dynrec((const char *[]){"replay", "-o", "w/c.db", "w/t.db", NULL});
    cr_assert_eq(c->status, 0, "confined: %s%s", c->out.data, c->err.data);
    cr_assert_not_null(strstr(c->out.data, "sandbox: bubblewrap+seccomp"), "%s", c->out.data);
    /* With the sources back at their recorded paths, no --trust is needed. */
    E2eProc *mv = sh(e2e_fmt("mv '%s'/gone/*.py '%s'/", e2e_path("w"), e2e_path("w")), 10000);
    e2e_assert_exit(mv, 0, "moving the sources back");
    E2eProc *ok =
        dynrec((const char *[]){"replay", "--no-sandbox", "-o", "w/r.db", "w/t.db", NULL});
    cr_assert_eq(ok->status, 0, "%s%s", ok->out.data, ok->err.data);
}

/* A copy of w/t.db with sql applied; the replay must refuse it (65) with a
 * message containing want, and no compile may have run when before is 0. */
/* A copy of w/t.db named copy (relative to the test's directory) with sql
 * applied. */
static void edited_copy(const char *copy, const char *sql) {
    size_t len = 0;
    char *data = e2e_slurp(e2e_path("w/t.db"), &len);
    e2e_write_file(e2e_path(copy), data, len);
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(e2e_path(copy), &db), SQLITE_OK);
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql, msg);
    sqlite3_close(db);
}

static void refused(const char *sql, const char *want, int any_before) {
    const char *copy = e2e_fmt("w/f%d.db", (int)(strlen(sql) % 1000));
    edited_copy(copy, sql);
    const char *out = e2e_fmt("%s-r.db", copy);
    E2eProc *r = dynrec((const char *[]){"replay", "--trust", "-o", out, copy, NULL});
    cr_assert_eq(r->status, 65 << 8, "%s: exit %s:\n%s%s", sql, e2e_status_text(r->status),
                 r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->err.data, "is malformed: "), "%s", r->err.data);
    cr_assert_not_null(strstr(r->err.data, want), "%s: want %s:\n%s", sql, want, r->err.data);
    if (!any_before) {
        DrTrace *t = e2e_open(e2e_path(out));
        cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles"), 0, "%s", sql);
    }
}

#define KIND(k) "(SELECT id FROM strings WHERE text = '" k "')"
#define ADD_KIND(k)                                                                                \
    "INSERT INTO strings(id, text) SELECT max(id) + 1, '" k "' FROM strings "                      \
    "WHERE NOT EXISTS (SELECT 1 FROM strings WHERE text = '" k "');"

Test(replay, malformed_value_trees_are_refused) {
    copy_example_to("shape_recompiles.py", "w");
    record_and_hide("w", "shape_recompiles.py");
    /* A 2^40-element tensor: refused before anything is allocated. */
    refused("UPDATE value_nodes SET value = json_set(value, '$.shape', json('[1099511627776]'))"
            " WHERE kind_id = " KIND("tensor"),
            "over the replay limit", 0);
    refused("UPDATE value_nodes SET value = '[-1, 2]' WHERE kind_id = " KIND("tensor"),
            "tensor without an object of fields", 0);
    refused("UPDATE value_nodes SET value = '\"three\"' WHERE node = 0",
            "frame without an object of fields", 0);
    refused("UPDATE value_nodes SET value = '[[1, 99999]]' WHERE node = 1", "which is not there",
            0);
    refused(ADD_KIND("bogus") "UPDATE value_nodes SET kind_id = " KIND("bogus") " WHERE node = 2",
            "unknown kind 'bogus'", 0);
    refused("UPDATE value_nodes SET value = '{' WHERE node = 3", "is not JSON", 0);
    /* A tuple holding itself: found while building the last capture. */
    refused(ADD_KIND("tuple") "UPDATE value_nodes SET kind_id = " KIND(
                "tuple") ", value = '[2]'"
                         " WHERE node = 2 AND capture = (SELECT max(capture) FROM value_nodes)",
            "a cycle through an immutable value", 1);
}

/* A function's attributes from a stranger: a dunder name (__wrapped__,
 * which inspect and Dynamo follow) is refused as malformed. */
Test(replay, function_attributes_with_a_dunder_are_refused) {
    mkdir(e2e_path("w"), 0755);
    size_t len = 0;
    char *src = e2e_slurp(e2e_fmt("%s/replay/function_attrs.py", e2e_scripts), &len);
    cr_assert_not_null(src);
    e2e_write_file(e2e_path("w/function_attrs.py"), src, len);
    record_and_hide("w", "function_attrs.py");
    refused("UPDATE value_nodes SET value = '\"__wrapped__\"' WHERE value = '\"pred\"'"
            " AND kind_id = (SELECT id FROM strings WHERE text = 'str')",
            "not a dict of plain names", 0);
}

/* A GraphModule's graph from a stranger: a node referring to one made
 * after it, a node of another graph or an attribute its graph makes is
 * malformed (65); a class that is not torch.fx's GraphModule and an
 * operator torch.ops does not have are not replayable (3), never called. */
Test(replay, fx_graph_modules_from_bad_graphs_are_refused) {
    mkdir(e2e_path("w"), 0755);
    static const char *const scripts[] = {"fx_graph_modules.py", "fx_one_graph_module.py"};
    for (size_t i = 0; i < 2; i++) {
        size_t len = 0;
        char *src = e2e_slurp(e2e_fmt("%s/replay/%s", e2e_scripts, scripts[i]), &len);
        cr_assert_not_null(src);
        e2e_write_file(e2e_path(e2e_fmt("w/%s", scripts[i])), src, len);
    }
    record_and_hide("w", "fx_graph_modules.py");
    refused("UPDATE value_nodes SET value = '\"add\"' WHERE capture = 1 AND value = '\"sin\"'"
            " AND kind_id = (SELECT id FROM strings WHERE text = 'fx_node')",
            "outside its graph or before it is made", 0);
    refused("UPDATE value_nodes SET value = '\"_code\"' WHERE capture = 1 AND value ="
            " '\"training\"'",
            "graph_module attributes are not a dict of names", 0);
    refused("UPDATE value_nodes SET value = json_set(value, '$.co_fields', json_extract(value,"
            " '$.dict')) WHERE capture = 1 AND kind_id = (SELECT id FROM strings WHERE text ="
            " 'graph_module')",
            "co_fields is not a file, line and name", 0);
    /* a method name fx would write as an attribute chain into the code */
    refused("UPDATE value_nodes SET value = '\"add.__globals__\"' WHERE (capture, node) IN"
            " (SELECT t.capture, json_extract(t.value, '$[2]') FROM value_nodes t JOIN"
            " value_nodes o ON o.capture = t.capture AND o.node = json_extract(t.value, '$[0]')"
            " WHERE o.value = '\"call_method\"' AND json_valid(t.value) AND"
            " json_type(t.value) = 'array')",
            ": its target is not a name", 1);
    static const struct {
        const char *sql, *why;
    } not_replayable[] = {
        {"UPDATE value_nodes SET value = json_set(value, '$.class', json('{\"module\": \"os\","
         " \"qualname\": \"system\"}')) WHERE kind_id = (SELECT id FROM strings WHERE text ="
         " 'graph_module')",
         "an fx GraphModule of class posix.system"},
        {"UPDATE value_nodes SET value = '\"load_library.x\"' WHERE kind_id = (SELECT id FROM"
         " strings WHERE text = 'torch_op')",
         "torch has no operator torch.ops.load_library.x here"},
        /* fx writes an argument's repr() into the code: a logger's is not
         * its own plain text (nor is a user object's, which could run) */
        {ADD_KIND("logger") "UPDATE value_nodes SET kind_id = " KIND(
             "logger") ", value ="
                       " '\"x\"' WHERE capture = 1 AND kind_id = " KIND("int") " AND value = '2'",
         "fx node mul has an argument of type logging.Logger"},
    };
    for (size_t i = 0; i < sizeof not_replayable / sizeof *not_replayable; i++) {
        const char *copy = e2e_fmt("w/nr%zu.db", i);
        edited_copy(copy, not_replayable[i].sql);
        E2eProc *r =
            dynrec((const char *[]){"replay", "-o", e2e_fmt("w/nr%zu-r.db", i), copy, NULL});
        cr_assert_eq(r->status, 3 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                     r->err.data);
        cr_assert_not_null(strstr(r->out.data, not_replayable[i].why), "want '%s':\n%s",
                           not_replayable[i].why, r->out.data);
    }
}

Test(replay, other_python_and_old_traces_are_refused) {
    copy_example_to("shape_recompiles.py", "w");
    record_and_hide("w", "shape_recompiles.py");
    size_t len = 0;
    char *data = e2e_slurp(e2e_path("w/t.db"), &len);
    e2e_write_file(e2e_path("w/py.db"), data, len);
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(e2e_path("w/py.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db,
                              "UPDATE meta SET value = '3.9.1 (x)' WHERE key = "
                              "'python_version'",
                              NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(db);
    E2eProc *r = dynrec((const char *[]){"replay", "--trust", "w/py.db", NULL});
    cr_assert_eq(r->status, 69 << 8, "%s%s", r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->err.data, "recorded with Python 3.9"), "%s", r->err.data);
    /* A version-1 trace (dynrec 0.1.0) still opens, and replay says why it
     * cannot be replayed. */
    char *old = e2e_fmt("%s/../tests/data/v1-shape_recompiles.db", e2e_examples);
    E2eProc *o = dynrec((const char *[]){"replay", old, NULL});
    cr_assert_eq(o->status, 66 << 8, "%s%s", o->out.data, o->err.data);
    cr_assert_not_null(strstr(o->err.data, "predates input capture"), "%s", o->err.data);
    E2eProc *s = dynrec((const char *[]){"show", old, NULL});
    cr_assert_eq(s->status, 0, "%s", s->err.data);
    DrTrace *t = e2e_open(old);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_values"), 0);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_captures"), 0);
    /* Its event counts, which version 1 did not keep, are counted on open. */
    cr_assert_eq(e2e_sql_int(t, "SELECT sum(n) FROM v_event_counts"),
                 e2e_sql_int(t, "SELECT count(*) FROM events"));
}

Test(replay, usage_errors) {
    E2eProc *h = dynrec((const char *[]){"replay", "--help", NULL});
    cr_assert_eq(h->status, 0);
    cr_assert_not_null(strstr(h->out.data, "usage: dynrec replay"));
    E2eProc *n = dynrec((const char *[]){"replay", NULL});
    cr_assert_eq(n->status, 2 << 8);
    E2eProc *m = dynrec((const char *[]){"replay", "missing.db", NULL});
    cr_assert_eq(m->status, 65 << 8, "%s", m->err.data);
    cr_assert_not_null(strstr(m->err.data, "missing.db"), "%s", m->err.data);
    const char junk[] = "not a trace at all\n";
    e2e_write_file(e2e_path("junk.db"), junk, sizeof junk - 1);
    E2eProc *j = dynrec((const char *[]){"replay", "junk.db", NULL});
    cr_assert_eq(j->status, 65 << 8, "%s", j->err.data);
    cr_assert_not_null(strstr(j->err.data, "junk.db: not an SQLite file"), "%s", j->err.data);
    cr_assert_eq(access(e2e_path("junk-replay.db"), F_OK), -1, "a replay ran on junk");
}

/* --capture-values: 0 keeps no tensor data (the replay fills zeros and still
 * reproduces); a failing capture switches itself off, the program runs on
 * unchanged, and replay says why there is nothing to replay. */
Test(replay, capture_values_and_a_failing_capture) {
    copy_example_to("shape_recompiles.py", "w");
    E2eProc *p = sh(e2e_fmt("cd '%s' && '%s' run -q --capture-values 0 -o t.db shape_recompiles.py"
                            " && mkdir gone && mv *.py gone/",
                            e2e_path("w"), e2e_bin),
                    E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, p->err.data);
    DrTrace *t = e2e_open(e2e_path("w/t.db"));
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_values WHERE kind = 'tensor'"), 0);
    cr_assert_eq(e2e_sql_int(t,
                             "SELECT count(*) FROM v_values WHERE kind = 'tensor' AND "
                             "(blob_id IS NOT NULL OR json_extract(value, '$.data') IS NOT NULL)"),
                 0);
    assert_reproduced("w", "shape_recompiles.py with --capture-values 0");
    E2eProc *bad = dynrec((const char *[]){"run", "--capture-values", "lots", "x.py", NULL});
    cr_assert_eq(bad->status, 2 << 8, "%s", bad->err.data);

    e2e_copy_example("shape_recompiles.py");
    const char *args[] = {"shape_recompiles.py", NULL};
    setenv("DYNREC_FAULT_HOOK", "capture", 1);
    E2eProc *r = e2e_same_as_python(args, NULL, E2E_TORCH_TIMEOUT_MS);
    unsetenv("DYNREC_FAULT_HOOK");
    e2e_assert_exit(r, 0, r->err.data);
    DrTrace *f = e2e_open(e2e_path("T.db"));
    cr_assert_str_eq(e2e_meta(f, "hook.capture"), "disabled after an error");
    cr_assert_eq(e2e_sql_int(f, "SELECT count(*) FROM v_captures"), 0);
    cr_assert_eq(e2e_sql_int(f, "SELECT count(*) FROM v_compiles"), 4);
    cr_assert_eq(e2e_sql_int(f, "SELECT count(*) FROM v_ev WHERE kind = 'recorder_error'"), 1);
    E2eProc *rp = dynrec((const char *[]){"replay", "--trust", "T.db", NULL});
    cr_assert_eq(rp->status, 66 << 8, "%s%s", rp->out.data, rp->err.data);
    cr_assert_not_null(strstr(rp->err.data, "the capture was switched off"), "%s", rp->err.data);
}

/* The value-tree parser on randomly damaged trees (the driver's own fuzzing
 * mode): every damage ends in a clean refusal or a frame not replayable,
 * never in another exception.  `make fuzz` runs it longer. */
Test(replay, damaged_value_trees_never_crash_the_parser) {
    /* closures.py has lambdas and nested functions: with seed 1, 100000
     * trees found a function node whose file name was a list (fixed). */
    scenario("closures.py");
    setenv("DYNREC_REPLAY_FUZZ", "100000", 1);
    setenv("DYNREC_REPLAY_TRUST", "1", 1);
    E2eProc *r = dynrec(
        (const char *[]){"run", "-q", "-o", "replay/f.db", "--replay-of", "replay/t.db", NULL});
    unsetenv("DYNREC_REPLAY_FUZZ");
    unsetenv("DYNREC_REPLAY_TRUST");
    cr_assert_eq(r->status, 0, "%s", r->err.data);
    cr_assert_not_null(strstr(r->err.data, "fuzzed 100000 value trees"), "%s", r->err.data);
    cr_assert_not_null(strstr(r->err.data, ": 0 unexpected errors"), "%s", r->err.data);
}

/* ---- real models: transformers (tools/setup.sh pins it), tiny configs,
 * random weights, nothing from the hub ------------------------------------ */

/* Records and replays tests/scripts/models/script; 0 when skipped. */
static int model_recorded(const char *script) {
    if (e2e_asan) {
        printf("replay.%s: skipped under ASan (transformers under ASan outlasts the timeout)\n",
               script);
        return 0;
    }
    E2eProc *has = sh(e2e_fmt("'%s' -c 'import transformers'", e2e_python), E2E_TIMEOUT_MS);
    if (has->status != 0) {
        printf("replay.%s: skipped: no transformers in %s (tools/setup.sh installs it on "
               "Python 3.11 and newer)\n",
               script, e2e_python);
        return 0;
    }
    setenv("HF_HUB_OFFLINE", "1", 1);
    e2e_copy_script(e2e_fmt("models/%s", script));
    record_and_hide("models", script);
    return 1;
}

static int model_replays(const char *script) {
    if (!model_recorded(script)) return 0;
    assert_reproduced("models", script);
    return 1;
}

/* The registry transformers fills while the program runs is module state
 * its guards read: captured (capture_state) and put back by the replay. */
Test(replay, transformers_gpt2_over_three_lengths) {
    if (!model_replays("gpt2_lengths.py")) return;
    DrTrace *t = e2e_open(e2e_path("models/t.db"));
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_ev WHERE kind = 'capture_state'"), 0);
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_values WHERE kind = 'str' AND"
                                " value = '\"_CAN_RECORD_REGISTRY\"'"),
                 0, "the output-capturing registry was not captured");
    /* The recompile of the decorator's wrapper is one on the same code. */
    DrTrace *r = e2e_open(e2e_path("models/r.db"));
    cr_assert_eq(e2e_sql_int(r, "SELECT count(*) FROM v_compiles WHERE recompile = 1"),
                 e2e_sql_int(t, "SELECT count(*) FROM v_compiles WHERE recompile = 1"));
    /* Without --trust (confined): the wrapper's code and the forward behind
     * it come from the installed library, not from the trace. */
    E2eProc *u = dynrec((const char *[]){"replay", "-o", "models/u.db", "models/t.db", NULL});
    cr_assert_eq(u->status, 0, "untrusted replay: %s%s", u->out.data, u->err.data);
    cr_assert_not_null(strstr(u->out.data, "reproduced 2/2 compiles"), "%s", u->out.data);
}
/* The pattern transformers documents for generate(): model.forward =
 * torch.compile(model.forward).  The model's __dict__ holds the compiled
 * wrapper (a "compiled" value) and the KV cache's layers are plain library
 * objects; every compile replays, without --trust too. */
Test(replay, transformers_gpt2_generate_with_a_compiled_forward) {
    if (!model_replays("gpt2_generate.py")) return;
    DrTrace *t = e2e_open(e2e_path("models/t.db"));
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_values WHERE kind = 'compiled'"), 0);
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_values WHERE kind = 'object' AND type ="
                                " 'transformers.cache_utils.DynamicLayer'"),
                 0);
    long long n = e2e_sql_int(t, "SELECT count(*) FROM v_captures");
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_compiles WHERE recompile"), 0);
    E2eProc *u = dynrec((const char *[]){"replay", "-o", "models/u.db", "models/t.db", NULL});
    cr_assert_eq(u->status, 0, "untrusted replay: %s%s", u->out.data, u->err.data);
    char *want = e2e_fmt("reproduced %lld/%lld compile", n, n); /* (1 compile, 2 compiles) */
    cr_assert_not_null(strstr(u->out.data, want), "want '%s': %s", want, u->out.data);
}
Test(replay, transformers_bert_with_an_attention_mask) { model_replays("bert_mask.py"); }
/* Wav2Vec2 CTC training: every recorded compile replays, confined (7/23
 * before: ParametrizedConv1d, a dict_keyiterator and a ModelOutput
 * __init__ behind a wrapper were not replayable, and a leaf view that
 * requires grad stopped the replay as malformed). */
Test(replay, transformers_wav2vec2_ctc_training) {
    if (!model_replays("wav2vec2_ctc.py")) return;
    DrTrace *t = e2e_open(e2e_path("models/t.db"));
    long long n = e2e_sql_int(t, "SELECT count(*) FROM v_compiles");
    cr_assert_gt(n, 10);
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_values WHERE kind = 'function' AND"
                                " json_extract(value, '$.wrapped') = 1"),
                 0);
    e2e_close(t);
    assert_confined_reproduces_in("models", n);
}
/* GPT-2 compiled as a module with a guard filter of torch's
 * (skip_guard_on_all_nn_modules_unsafe), called inside inference_mode
 * over two lengths: the filter is passed again and the compiles run in
 * inference_mode with inference tensors, confined (0/2 before: 453 guards
 * on the modules the filter drops). */
Test(replay, transformers_gpt2_inference_mode_with_a_guard_filter) {
    if (!model_replays("gpt2_inference_mode.py")) return;
    DrTrace *t = e2e_open(e2e_path("models/t.db"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_ev WHERE kind = 'capture' AND"
                                " json_extract(data, '$.global_state.inference_mode') = 1"),
                 2);
    e2e_close(t);
    assert_confined_reproduces_in("models", 2);
}
/* GPT-2 training with gradient checkpointing, compiled as a module: the
 * frame of transformers' output-capturing wrapper reads its own module's
 * _CAN_RECORD_REGISTRY (G['_CAN_RECORD_REGISTRY'], filled by the graph
 * broken calls before it), captured as that module's state and put back
 * (34 guards were missing); the frame of the loss_function property's
 * getter is found in the installed library (before, "stored compiled in
 * the trace": 7/8 confined, one frame not replayable). */
Test(replay, transformers_gpt2_gradient_checkpointing) {
    if (!model_replays("gpt2_checkpointing.py")) return;
    DrTrace *t = e2e_open(e2e_path("models/t.db"));
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_values WHERE kind = 'str' AND"
                                " value = '\"transformers.utils.output_capturing\"' AND capture IN"
                                " (SELECT num FROM v_ev WHERE kind = 'capture_state')"),
                 0, "the wrapper's own registry was not captured");
    long long n = e2e_sql_int(t, "SELECT count(*) FROM v_compiles");
    cr_assert_gt(n, 5);
    e2e_close(t);
    assert_confined_reproduces_in("models", n);
}
/* GPT-2 asked for its hidden states and attentions: the first compile, of
 * transformers' config-defaults wrapper, fails at the lock the output
 * capturing takes (an unsupported context manager), so it builds no
 * guards; the module state its tracing's guards read (the output
 * capturing registry) is captured all the same, and the replay takes the
 * same path to the lock (before, 9/10: the empty registry of a fresh
 * import skipped the hooks and the compile succeeded). */
Test(replay, transformers_gpt2_output_flags_failing_compile) {
    /* (Not assert_reproduced: one graph break's developer context holds
     * torch's count of hook handles made, RemovableHandle.next_id, which
     * follows the program's history; the comparison reads its first line.) */
    if (!model_recorded("gpt2_output_flags.py")) return;
    DrTrace *t = e2e_open(e2e_path("models/t.db"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_ev WHERE kind = 'capture_state' AND"
                                " compile_id IN (SELECT compile_id FROM v_compiles WHERE"
                                " outcome = 'error')"),
                 1);
    long long n = e2e_sql_int(t, "SELECT count(*) FROM v_compiles");
    e2e_close(t);
    assert_confined_reproduces_in("models", n);
}
/* ACT2FN read through DeBERTa's module (G['__import_...'].ACT2FN): stored
 * by its items as the C type holds them (classes), never through its
 * __getitem__, which made an activation module per item while recording
 * (a warning python never printed) and put modules in the replay's ACT2FN
 * (0/2); the recorded output is python's. */
Test(replay, transformers_deberta_activation_registry) {
    if (!model_replays("deberta_global.py")) return;
    assert_confined_reproduces_in("models", 2);
    E2eProc *py =
        sh(e2e_fmt("cd '%s/models/gone' && '%s' deberta_global.py 2>&1", e2e_dir, e2e_python),
           E2E_TORCH_TIMEOUT_MS);
    E2eProc *dr = sh(e2e_fmt("cd '%s/models/gone' && '%s' run -q -o ../again.db deberta_global.py "
                             "2>&1",
                             e2e_dir, e2e_bin),
                     E2E_TORCH_TIMEOUT_MS);
    cr_assert_str_eq(dr->out.data, py->out.data);
}
/* A ModelOutput (a dataclass over an OrderedDict) among the inputs: made by
 * OrderedDict's __new__, its fields and its items set, with its recompile;
 * confined too. */
Test(replay, transformers_model_output_dataclass_mapping) {
    if (!model_replays("model_output_head.py")) return;
    DrTrace *t = e2e_open(e2e_path("models/t.db"));
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_values WHERE kind = 'dataclass' AND "
                                "json_extract(value, '$.mapping') IS NOT NULL"),
                 0);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles WHERE recompile"), 1);
    e2e_close(t);
    E2eProc *u = dynrec((const char *[]){"replay", "-o", "models/u.db", "models/t.db", NULL});
    cr_assert_eq(u->status, 0, "untrusted replay: %s%s", u->out.data, u->err.data);
    cr_assert_not_null(strstr(u->out.data, "reproduced 2/2 compiles"), "%s", u->out.data);
}
/* The compiled frame is deprecate_kwarg's wrapper in front of the model's
 * forward: it is named by the model it runs and the user's call, in the
 * views (show, report, view) and in the replay's report (diff's engine). */
Test(replay, transformers_llama_training_step) {
    if (!model_replays("llama_train.py")) return;
    DrTrace *t = e2e_open(e2e_path("models/t.db"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles WHERE qualname LIKE "
                                "'deprecate_kwarg.%' AND display_name LIKE 'LlamaForCausalLM "
                                "via out = cm(%'"),
                 1, "%s", e2e_sql(t, "SELECT group_concat(display_name) FROM v_compiles"));
    E2eProc *u = dynrec((const char *[]){"replay", "-o", "models/u.db", "models/t.db", NULL});
    cr_assert_not_null(strstr(u->out.data, "reproduced 0/0 LlamaForCausalLM via out = cm("), "%s",
                       u->out.data);
    E2eProc *shown = dynrec((const char *[]){"show", "models/t.db", NULL});
    cr_assert_not_null(strstr(shown->out.data, "0/0  LlamaForCausalLM via out = cm("), "%s",
                       shown->out.data);
}
/* And its redacted pack replays as the trace does: the class names a
 * capture refers to (BertModel) and the strings transformers' own sources
 * hold ('sdpa', 'past_key_values') are code, not the user's data, and are
 * not redacted (schema/pack.c). */
Test(replay, transformers_bert_in_a_user_module_with_graph_breaks) {
    if (!model_replays("user_module_bert.py")) return;
    E2eProc *p = dynrec(
        (const char *[]){"pack", "-q", "--redact", "models/t.db", "-o", "models/p.dynrec", NULL});
    e2e_assert_exit(p, 0, p->err.data);
    E2eProc *r = dynrec((const char *[]){"replay", "-o", "models/pr.db", "models/p.dynrec", NULL});
    DrTrace *t = e2e_open(e2e_path("models/t.db"));
    char *want =
        e2e_fmt("reproduced %lld/%lld compiles", e2e_sql_int(t, "SELECT count(*) FROM v_captures"),
                e2e_sql_int(t, "SELECT count(*) FROM v_captures"));
    cr_assert_eq(r->status, 0, "redacted pack: %s%s", r->out.data, r->err.data);
    cr_assert_not_null(strstr(r->out.data, want), "want '%s':\n%s", want, r->out.data);
}

/* torch.compiler.set_stance("eager_then_compile") and
 * "aot_eager_then_compile": the compile at the second call makes dynamic
 * what changed since the first, eager, call (Dynamo's code_context
 * "dynamism" of the code, captured with the frame and set again for the
 * replay's compile), also for a resume function (before, 2/5: the
 * compiles were static). */
Test(replay, set_stance_eager_then_compile) {
    scenario("stance_then_compile.py");
    assert_reproduced("replay", "stance_then_compile.py");
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(DISTINCT compile_id) FROM v_guards "
                                "WHERE guard LIKE '%2 <= L[''y''].size()[0]%'"),
                 3);
    e2e_close(b);
    assert_confined_reproduces(5);
}

/* A backend object whose class takes constructor arguments the trace does
 * not hold: eager stands in for it, named by the class as the recorder
 * names an object backend, so its graphs compare (before, "backend" against
 * "AssertOutputs": 0/1). */
Test(replay, backend_object_that_cannot_be_made_again) {
    scenario("backend_with_arguments.py");
    assert_reproduced("replay", "backend_with_arguments.py");
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_graphs WHERE backend = 'AssertOutputs'"),
                 1);
    e2e_close(b);
    assert_confined_reproduces(1);
}

/* Ints that are id() of other values: a module's id beside it (the graph
 * follows `id(self) == ref_id`), the same id passed beside another module
 * in a later compile (the id of the module the earlier compile made), an
 * object holding its own id (before, 1/3: the recorded ints were no one's
 * ids). */
Test(replay, ints_that_are_ids_of_values) {
    scenario("id_values.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'id'"), 3);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'id' AND "
                                "json_extract(value, '$.of') IS NULL"),
                 1);
    e2e_close(a);
    assert_reproduced("replay", "id_values.py");
    assert_confined_reproduces(3);
}

/* Classes defined inside a function beside the function compiled: the
 * frame's closure cell of a class is the cell the class's own methods hold
 * (Foo.__mul__ returns Foo(...); a second cell holding Foo made the call
 * unsupported in the replay), and a class read as itself carries the class
 * attributes its definitions do not make (class_variable = Foo()) (before,
 * 0/2). */
Test(replay, local_classes_share_cells_and_carry_their_attributes) {
    scenario("local_class_cells.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'class' AND "
                                "json_extract(value, '$.class_attrs') IS NOT NULL"),
                 1);
    e2e_close(a);
    assert_reproduced("replay", "local_class_cells.py");
    /* (and a class defined under a with statement of the test: before, "no
     * definition of TestModel in the stored source") */
    assert_confined_reproduces(3);
}

/* Generators not started handed to compiled functions (model.parameters(),
 * a generator function of the script with *args, keyword-only and **kwargs
 * arguments, a nested generator function): made again by calling the
 * function their module or class binds (or one of the nested function's
 * code), which runs none of its body (before, not replayable: "of type
 * builtins.generator"). */
Test(replay, generators_not_started_as_arguments) {
    scenario("generator_arguments.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'pygenerator'"), 4);
    /* the nested generator function by its code and the free variable's
     * value (before, not replayable) */
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'function' AND "
                                "json_extract(value, '$.qualname') = 'nested.<locals>.whoo' AND "
                                "json_array_length(json_extract(value, '$.closure')) = 1"),
                 1);
    /* (torch 2.14 compiles no resume function of total) */
    long long n = e2e_sql_int(a, "SELECT count(*) FROM v_compiles");
    e2e_close(a);
    assert_reproduced("replay", "generator_arguments.py");
    assert_confined_reproduces(n);
}

/* torch.compile of an optimizer's step beside a compiled module, with a
 * learning-rate scheduler: the optimizer is captured as a plain object (it
 * was opaque: 1/6, four frames not replayable), one object across the
 * compiles that read it, and the state tensors Dynamo's tracing of its
 * first step made are those the next capture names (Dynamo guards both by
 * identity), so the recompile fails on the learning rate, as recorded
 * (5/6 without them). */
Test(replay, compiled_optimizer_step_with_a_scheduler) {
    scenario("compiled_optimizer.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'object' AND "
                                "type = 'torch.optim.adamw.AdamW'"),
                 e2e_sql_int(a, "SELECT count(DISTINCT capture) FROM v_values WHERE kind = "
                                "'object' AND type = 'torch.optim.adamw.AdamW'"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT json_extract(value, '$.ident')) FROM "
                                "v_values WHERE type = 'torch.optim.adamw.AdamW'"),
                 1);
    e2e_close(a);
    assert_reproduced("replay", "compiled_optimizer.py");
    DrTrace *b = e2e_open(e2e_path("replay/r.db"));
    char *reasons = e2e_sql(b, "SELECT group_concat(reason, ' | ') FROM v_guard_failures");
    cr_assert_not_null(strstr(reasons, "['lr'] == 0.001"), "%s", reasons);
    e2e_close(b);
    assert_confined_reproduces(6);
}

/* A mixed-precision training step compiled whole (autocast, GradScaler's
 * scale, unscale_, step and update, clipping, AdamW): the scaler is a plain
 * object of torch's class (before 0.7.8, 3 of 10 compiles: 7 not
 * replayable, "global 'scaler' of type torch.amp.grad_scaler.GradScaler"). */
Test(replay, mixed_precision_step_with_a_grad_scaler) {
    scenario("grad_scaler.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'object' AND "
                                "json_extract(value, '$.class.qualname') = 'GradScaler'"),
                 0);
    long long n = e2e_sql_int(a, "SELECT count(*) FROM v_compiles");
    e2e_close(a);
    cr_assert_gt(n, 5);
    assert_reproduced("replay", "grad_scaler.py");
    assert_confined_reproduces(n);
}

/* Probability distributions as arguments (torch.distributions' Normal and
 * Categorical, as an RL policy hands them): plain objects of torch's
 * classes (before, not replayable: "of type
 * torch.distributions.normal.Normal"); and torch's test helper SampleInput
 * (before 0.7.8, "of type torch.testing._internal.opinfo.core.SampleInput"). */
Test(replay, distributions_as_arguments) {
    scenario("distributions.py");
    assert_reproduced("replay", "distributions.py");
    assert_confined_reproduces(3);
}

/* The ctx of a torch.autograd.Function whose forward has a graph break
 * (forward and its resume function compiled on their own, after apply
 * fell back to eager): a ctx of the Function's own type with the
 * attributes forward set and the tensors it saved (before, not
 * replayable: "of type torch.autograd.function.DoubleBackward"). */
Test(replay, autograd_function_ctx) {
    scenario("autograd_ctx.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'autograd_ctx' AND "
                                "json_extract(value, '$.c_attrs.to_save') IS NOT NULL"),
                 1);
    /* `mult2 = Mult.apply`: torch's Function.apply, a classmethod's
     * function, by reference (before, a function made from its code, which
     * Dynamo inlined instead of tracing the Function: "Unresolved
     * GetAttrVariable comparison" and 2 of 4 compiles). */
    /* (torch 2.14's Function.apply is a C classmethod: a method node of the
     * class and the name) */
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE (kind = 'function' AND "
                                "json_extract(value, '$.qualname') = 'Function.apply' AND "
                                "json_extract(value, '$.classmethod') = 1) OR (kind = 'method' "
                                "AND json_extract(value, '$.builtin') = 'apply')"),
                 1);
    e2e_close(a);
    assert_reproduced("replay", "autograd_ctx.py");
    /* (and a Function whose forward a decorator the enclosing function
     * defines wraps: before, "MySin cannot be rebuilt from its source:
     * 'NoneType' object is not callable") */
    /* (and a member of an Enum defined beside the Function: before, its
     * class in forward's cell was not captured, the enum's own attributes
     * opaque, and the member and the class's member were two objects) */
    assert_confined_reproduces(6);
}

/* An inspect.Signature as an argument: its parameters, a mappingproxy over
 * an OrderedDict (before, not replayable: "of type builtins.mappingproxy"). */
Test(replay, signature_over_an_ordered_mapping) {
    scenario("signature.py");
    assert_reproduced("replay", "signature.py");
    assert_confined_reproduces(1);
}
/* GPT-2 training with the model compiled as a module and the optimizer
 * step with transformers' linear warmup schedule compiled in one function:
 * AdamW is a plain object, one object (and one set of state tensors)
 * across the step's compiles, so the recompile fails on the learning rate
 * the schedule changed, as recorded (before, the optimizer was opaque:
 * its frames not replayable). */
Test(replay, transformers_gpt2_compiled_optimizer_step) {
    if (!model_replays("gpt2_optimizer_step.py")) return;
    DrTrace *b = e2e_open(e2e_path("models/r.db"));
    char *reasons = e2e_sql(b, "SELECT group_concat(reason, ' | ') FROM v_guard_failures");
    cr_assert_not_null(strstr(reasons, "['lr'] =="), "%s", reasons);
    e2e_close(b);
    DrTrace *t = e2e_open(e2e_path("models/t.db"));
    long long n = e2e_sql_int(t, "SELECT count(*) FROM v_compiles");
    e2e_close(t);
    assert_confined_reproduces_in("models", n);
}

/* Expanded tensors as inputs (stride 0: a sum's backward hands its
 * grad_output so): their data written through one element per expanded
 * dimension (before, not replayable: "more than one element of the
 * written-to tensor refers to a single memory location"). */
Test(replay, expanded_tensors) {
    scenario("expanded_tensors.py");
    assert_reproduced("replay", "expanded_tensors.py");
    assert_confined_reproduces(2);
}

/* Closure cells a function shares with the methods of a class defined
 * beside it (inc_x's nonlocal x that MyObj's method reads: Dynamo's
 * "write to immutable cell" and reconstruction failure, as recorded; a
 * list both append to, named as the function's local): the capture names
 * each class cell's own node, and the replay makes the function's cell the
 * method's (before, 0/2: two cells). */
Test(replay, cells_shared_with_a_local_class) {
    scenario("shared_cells.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE json_extract(value, "
                                "'$.class_cell_nodes') IS NOT NULL"),
                 0);
    e2e_close(a);
    assert_reproduced("replay", "shared_cells.py");
    /* (the third: the cell reached through a function another cell of the
     * method holds, while the class is being given its cells: before, two
     * cells, and Dynamo guarded `state` by another path) */
    assert_confined_reproduces(3);
}

/* Tensors of traceable wrapper subclasses as arguments (torch's TwoTensor,
 * one requiring grad, one marked dynamic, and the program's own subclass
 * whose __tensor_flatten__ context holds its scale): made by the class's
 * __tensor_unflatten__ from the recorded inner tensors (before 0.7.9, 0 of
 * 5 compiles: "argument 'x' of type ...TwoTensor").  A Linear whose weight
 * is a parameter of that subclass and whose extra_repr is a partial bound
 * to it (torchao's quantize_ leaves both): the partial is bound again
 * under confinement (before: "a method binding partial to an object of
 * ...Linear, whose class does not define it").  Views: a TwoTensor's, made
 * by as_strided of its base, and jagged nested tensors, views of their
 * values (Dynamo guards L['nt1']._base), made as torch makes them; two
 * sharing offsets share their jagged dim, and new offsets recompile; one
 * made under inference_mode is made so again (TENSOR_MATCH checks its
 * dispatch keys).  An aot_autograd() backend with a compiler of the
 * program's is replayed with aot_eager, not eager: AOTAutograd's tracing of
 * a subclass marked dynamic guards its inner sizes (before 0.7.9, the
 * guards differed). */
Test(replay, traceable_wrapper_subclasses_as_arguments) {
    scenario("wrapper_subclasses.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(DISTINCT json_extract(value, '$.class.qualname'))"
                                " FROM v_values WHERE kind = 'subclass_tensor'"),
                 3);
    cr_assert_gt(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'subclass_tensor'"
                                " AND json_extract(value, '$.marks._dynamo_dynamic_indices')"
                                " IS NOT NULL"),
                 0);
    /* a TwoTensor view, three jagged nested tensors, views of values, and
     * eight captures of four views of jagged nested tensors (over the
     * dense base of one, a leaf view made under no_grad, a view of such a
     * leaf view, one of a nested tensor of its own; before 0.7.10 their
     * frame was not replayable: "a view of a NestedTensor whose base is a
     * Tensor"), two of them leaf views that require grad */
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'subclass_tensor'"
                                " AND json_extract(value, '$.view_of') IS NOT NULL"),
                 12);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'subclass_tensor'"
                                " AND json_extract(value, '$.view_of') IS NOT NULL"
                                " AND json_extract(value, '$.leaf') = 1"
                                " AND json_extract(value, '$.requires_grad') = 1"),
                 2);
    e2e_close(a);
    assert_reproduced("replay", "wrapper_subclasses.py");
    E2eProc *r = assert_confined_reproduces(19);
    cr_assert_not_null(strstr(r->out.data, "aot_autograd() with compilers of its own; aot_eager"),
                       "%s", r->out.data);
}

/* pathlib paths as values (a module's cache directory, a list of pure
 * paths, an argument): captured as their class and text, made again from
 * the text, no file touched (before 0.7.9 the frame was not replayable:
 * "argument 'self'.__dict__['cache_dir'] of type pathlib.PosixPath"). */
Test(replay, pathlib_paths_as_values) {
    scenario("paths.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_values WHERE kind = 'path'"), 3);
    e2e_close(a);
    assert_reproduced("replay", "paths.py");
    assert_confined_reproduces(2);
}

/* A program whose packages are imported through PYTHONPATH, from a folder
 * beside the script's (PYTHONPATH=$PWD/src python scripts/train.py): the
 * sources stored in the trace (flatpkg/__init__.py, deeppkg/blocks.py) are
 * made as those packages' modules again, their names from the recorded
 * PYTHONPATH, and named as recorded though the sandbox's cwd is another;
 * deeppkg/consts.py, which no frame ran, is not stored (its import fails,
 * a note).  A replay given a PYTHONPATH of its own imports the packages
 * from there, its folder mounted in the sandbox: no note.  (Before 0.7.10:
 * "module flatpkg is not imported by the trace's sources", and
 * PYTHONPATH was left out of every replay.) */
Test(replay, packages_imported_through_pythonpath) {
    char *dir = e2e_path("pp");
    E2eProc *m = sh(
        e2e_fmt("mkdir -p '%s/src/flatpkg' '%s/src/deeppkg' '%s/scripts'", dir, dir, dir), 10000);
    cr_assert_eq(m->status, 0);
    static const char *const files[][2] = {
        {"src/flatpkg/__init__.py",
         "import torch\n\n\nclass Block(torch.nn.Module):\n"
         "    def __init__(self):\n        super().__init__()\n"
         "        self.lin = torch.nn.Linear(4, 4)\n\n"
         "    def forward(self, x):\n        return torch.relu(self.lin(x)) * 2\n"},
        {"src/deeppkg/__init__.py", "from .blocks import Scaled\n"},
        {"src/deeppkg/consts.py", "SCALE = 3.0\n"},
        {"src/deeppkg/blocks.py",
         "import torch\n\nfrom .consts import SCALE\n\n\nclass Scaled(torch.nn.Module):\n"
         "    def forward(self, x):\n        return x.sin() * SCALE\n"},
        {"scripts/train.py",
         "import torch\nimport deeppkg\nimport flatpkg\n\n"
         "m = torch.compile(flatpkg.Block(), backend=\"eager\")\n"
         "s = torch.compile(deeppkg.Scaled(), backend=\"eager\")\n"
         "for n in (2, 3):\n"
         "    print(tuple(m(torch.randn(n, 4)).shape), tuple(s(torch.randn(n)).shape))\n"}};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        e2e_write_file(e2e_fmt("%s/%s", dir, files[i][0]), files[i][1], strlen(files[i][1]));
    E2eProc *p = sh(e2e_fmt("cd '%s' && PYTHONPATH='%s/src' '%s' run -q -o t.db scripts/train.py"
                            " && mv scripts/train.py scripts/train.away",
                            dir, dir, e2e_bin),
                    E2E_TORCH_TIMEOUT_MS);
    cr_assert_eq(p->status, 0, "record: %s%s", p->out.data, p->err.data);
    /* from the stored sources */
    E2eProc *a = sh(e2e_fmt("cd '%s' && env -u PYTHONPATH '%s' replay -o a.db t.db", dir, e2e_bin),
                    E2E_TORCH_TIMEOUT_MS);
    cr_assert_eq(a->status, 0, "replay: %s%s", a->out.data, a->err.data);
    cr_assert_not_null(strstr(a->out.data, "reproduced 4/4 compiles"), "%s", a->out.data);
    cr_assert_not_null(strstr(a->out.data, "No module named 'deeppkg.consts'"), "%s", a->out.data);
    /* beside a difference (one --set makes), the note on the recorded
     * PYTHONPATH left out says a replay's own is used */
    E2eProc *d = sh(e2e_fmt("cd '%s' && env -u PYTHONPATH '%s' replay --set"
                            " automatic_dynamic_shapes=False -o d.db t.db",
                            dir, e2e_bin),
                    E2E_TORCH_TIMEOUT_MS);
    cr_assert_eq(d->status, 1 << 8, "replay: %s%s", d->out.data, d->err.data);
    cr_assert_not_null(strstr(d->out.data, "make Python import): PYTHONPATH\n"), "%s", d->out.data);
    cr_assert_not_null(strstr(d->out.data, "a PYTHONPATH set for the replay is used"), "%s",
                       d->out.data);
    /* from the replay's own PYTHONPATH, confined */
    E2eProc *b =
        sh(e2e_fmt("cd '%s' && PYTHONPATH='%s/src' '%s' replay -o b.db t.db", dir, dir, e2e_bin),
           E2E_TORCH_TIMEOUT_MS);
    cr_assert_eq(b->status, 0, "replay: %s%s", b->out.data, b->err.data);
    cr_assert_not_null(strstr(b->out.data, "reproduced 4/4 compiles"), "%s", b->out.data);
    cr_assert_not_null(strstr(b->out.data, "bubblewrap"), "%s", b->out.data);
    cr_assert_null(strstr(b->out.data, "deeppkg.consts"), "%s", b->out.data);
    /* never a folder that holds $HOME (the sandbox has none): not mounted */
    E2eProc *c = sh(e2e_fmt("cd '%s' && HOME='%s/src/deeppkg' PYTHONPATH='%s/src' '%s' replay"
                            " -o c.db t.db",
                            dir, dir, dir, e2e_bin),
                    E2E_TORCH_TIMEOUT_MS);
    cr_assert_eq(c->status, 0, "replay: %s%s", c->out.data, c->err.data);
    cr_assert_not_null(strstr(c->out.data, "No module named 'deeppkg.consts'"), "%s", c->out.data);
}

/* torch.compiler.set_stance("default", force_backend=B) around calls of
 * compiled functions (test_decorators' test_set_stance_force_backend):
 * the capture says so (force_backend) and the replay forces B again, so
 * the BACKEND_MATCH failure of the second forced backend names B, as
 * recorded (before 0.7.10 the replay compiled through torch.compile's
 * wrapper: "Cached backend: _TorchCompileWrapper(compiler=...)"). */
Test(replay, backend_forced_by_set_stance) {
    scenario("forced_backend.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_ev WHERE kind = 'capture'"
                                " AND json_extract(data, '$.force_backend') = 1"),
                 3);
    cr_assert_eq(e2e_sql_int(a, "SELECT count(*) FROM v_guard_failures WHERE reason LIKE"
                                " '%BACKEND_MATCH%Cached backend: CompileCounter%'"),
                 1);
    e2e_close(a);
    assert_reproduced("replay", "forced_backend.py");
    assert_confined_reproduces(4);
    DrTrace *b = e2e_open(e2e_path("replay/u.db"));
    cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_guard_failures WHERE instr(reason,"
                                " 'New backend: __main__.fail_backend defined at') > 0"),
                 1);
    e2e_close(b);
}

/* A backend function a test defines, closing over a counter, that raises
 * SkipFrame (test_skip_non_tensor's test_backend_skip_frame_still_skips_
 * code_object): the replay calls that function, made from the stored
 * source, so the compile is skipped as recorded (an eager stand-in
 * compiled it: "compiled, 1 graph" against "skipped"). */
Test(replay, local_backend_function_is_called) {
    scenario("local_backend_skips.py");
    DrTrace *a = e2e_open(e2e_path("replay/t.db"));
    cr_assert_str_eq(e2e_sql_lines(a, NULL, "SELECT group_concat(outcome) FROM v_compiles"),
                     "skipped\n");
    e2e_close(a);
    assert_reproduced("replay", "local_backend_skips.py");
    assert_confined_reproduces(1);
}
