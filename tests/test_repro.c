#define _GNU_SOURCE 1
/* test_repro.c -- end-to-end tests of `dynrec repro`.
 *
 * Real torch, the real binary: an example (or a scenario script of
 * tests/scripts/) is recorded in its own directory and its sources are moved
 * away; `dynrec repro` writes the script of one frame into a directory of
 * its own, the venv's plain python runs it there (it must need nothing but
 * torch), and `dynrec run` records that run.  The frame's compiles in both
 * traces -- the frame's and its resume functions', in order -- must agree
 * on outcome, recompile, graph breaks, the number of guards and the guards
 * that failed (compared without compile ids and source locations, which a
 * standalone script cannot keep).  Then the refusals, malformed captures, a
 * frame that cannot be rebuilt whole, and a hostile trace that tries to put
 * code into the script. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../schema/mask.h"
#include "e2e_util.h"

TestSuite(repro, .init = e2e_setup, .fini = e2e_teardown, .timeout = 300);

static E2eProc *sh(const char *cmd, int timeout_ms) {
    return e2e_run_in((const char *[]){"/bin/sh", "-c", cmd, NULL}, NULL, timeout_ms);
}

static E2eProc *dynrec(const char *const *args) {
    const char *argv[20] = {e2e_bin};
    for (int i = 0; args[i] && i < 18; i++) argv[i + 1] = args[i];
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* Records w/script (cwd w) into w/t.db, then moves every .py of w away. */
static void record_and_hide(const char *script) {
    E2eProc *p = sh(e2e_fmt("cd '%s' && '%s' run -q -o t.db '%s' >/dev/null && mkdir gone && "
                            "mv *.py gone/",
                            e2e_path("w"), e2e_bin, script),
                    E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, e2e_fmt("recording %s: %s", script, p->err.data));
}

static void example(const char *name) {
    mkdir(e2e_path("w"), 0755);
    size_t len = 0;
    char *src = e2e_slurp(e2e_example_path(name), &len);
    cr_assert_not_null(src, "examples/%s is missing", name);
    e2e_write_file(e2e_path(e2e_fmt("w/%s", name)), src, len);
    record_and_hide(name);
}

/* tests/scripts/<script> (and the file beside it named also, or NULL)
 * recorded in w/. */
static void scenario_with(const char *script, const char *also) {
    mkdir(e2e_path("w"), 0755);
    const char *files[2] = {script, also};
    for (int i = 0; i < 2 && files[i]; i++) {
        e2e_copy_script(files[i]); /* to <test dir>/<files[i]> */
        const char *slash = strrchr(files[i], '/');
        cr_assert_eq(
            rename(e2e_path(files[i]), e2e_path(e2e_fmt("w/%s", slash ? slash + 1 : files[i]))), 0);
    }
    const char *slash = strrchr(script, '/');
    record_and_hide(slash ? slash + 1 : script);
}

static void scenario(const char *script) { scenario_with(script, NULL); }

/* Per compile of the frame named short (and of its resume functions), in
 * order: outcome|recompile|graph breaks|guards|the failing guards, each reason's
 * first line without its compile id and its "  # source location" part,
 * masked (a type's id in ___check_type_id) as the comparison masks it. */
static char *compiles_of(DrTrace *t, const char *short_name, int *n) {
    char *s = e2e_sql_lines(
        t, n,
        "SELECT c.outcome || '|' || c.recompile || '|' ||"
        " (SELECT count(*) FROM v_graph_breaks b WHERE b.compile_id = c.compile_id) || '|' ||"
        " (SELECT count(*) FROM v_guards g WHERE g.compile_id = c.compile_id) || '|' ||"
        " coalesce((SELECT group_concat(r, ' ; ') FROM (SELECT trim(substr(x, instr(x, ': ') + 2))"
        "   AS r FROM (SELECT substr(l, 1, instr(l || '  #', '  #') - 1) AS x FROM"
        "   (SELECT substr(g.reason, 1, instr(g.reason || char(10), char(10)) - 1) AS l"
        "    FROM v_guard_failures g WHERE g.compile_id = c.compile_id)) ORDER BY r)), '')"
        " FROM v_compiles c WHERE c.qualname = '%s' OR c.qualname LIKE '%%.%s'"
        " OR c.qualname LIKE '%%torch_dynamo_resume_in_%s_at_%%' ORDER BY c.seq",
        short_name, short_name, short_name);
    char *m = s ? dr_mask(NULL, s, strlen(s), NULL) : NULL;
    return m ? e2e_own(m) : "";
}

/* Writes the repro (extra options opt1, opt2 may be NULL) of w/t.db into
 * w/out-NAME/repro.py, runs it with the venv's python there, records that
 * run into w/out-NAME/r.db and compares the frame's compiles.  Returns the script. */
static char *last_printed; /* what the last repro.py printed under dynrec run */

static char *reproduces(const char *short_name, const char *opt1, const char *opt2) {
    char *out = e2e_fmt("w/out-%s", short_name);
    mkdir(e2e_path(out), 0755);
    const char *args[8] = {"repro", e2e_path("w/t.db"), "-o",
                           e2e_path(e2e_fmt("%s/repro.py", out))};
    int k = 4;
    if (opt1) args[k++] = opt1;
    if (opt2) args[k++] = opt2;
    args[k] = NULL;
    E2eProc *g = dynrec(args);
    e2e_assert_exit(g, 0, e2e_fmt("repro of %s: %s", short_name, g->err.data));
    char *script = e2e_slurp(e2e_path(e2e_fmt("%s/repro.py", out)), NULL);
    cr_assert_not_null(script);
    /* Standalone: torch only; no pickles, nothing of dynrec's. */
    cr_assert_null(strstr(script, "import _dynrec"), "%s", script);
    cr_assert_null(strstr(script, "import dynrec"), "%s", script);
    cr_assert_null(strstr(script, "import pickle"), "%s", script);
    E2eProc *py = sh(e2e_fmt("cd '%s' && ls && '%s' repro.py", e2e_path(out), e2e_python),
                     E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(py, 0, e2e_fmt("python repro.py (%s): %s", short_name, py->err.data));
    cr_assert(strncmp(py->out.data, "repro.py\n", 9) == 0, "the directory holds more: %s",
              py->out.data);
    E2eProc *rec = sh(e2e_fmt("cd '%s' && '%s' run -q -o r.db repro.py", e2e_path(out), e2e_bin),
                      E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(rec, 0, e2e_fmt("recording repro.py (%s): %s", short_name, rec->err.data));
    DrTrace *a = e2e_open(e2e_path("w/t.db")), *b = e2e_open(e2e_path(e2e_fmt("%s/r.db", out)));
    int na = 0, nb = 0;
    char *ca = compiles_of(a, short_name, &na), *cb = compiles_of(b, short_name, &nb);
    cr_assert_gt(na, 0, "%s: the recording has no compile of the frame", short_name);
    cr_assert_str_eq(cb, ca,
                     "%s: compiles (outcome|recompile|breaks|guards|failed guards) differ:\n"
                     "recorded:\n%s\nrepro:\n%s",
                     short_name, ca, cb);
    /* What the script prints says the same. */
    long long frame = e2e_sql_int(a, e2e_fmt("SELECT count(*) FROM v_compiles WHERE outcome ="
                                             " 'compiled' AND (qualname = '%s' OR qualname"
                                             " LIKE '%%.%s')",
                                             short_name, short_name));
    char *line = e2e_fmt("compiles of the frame: %lld (recorded: %lld)", frame, frame);
    cr_assert_not_null(strstr(rec->out.data, line), "%s: want '%s' in:\n%s", short_name, line,
                       rec->out.data);
    last_printed = rec->out.data;
    e2e_close(a);
    e2e_close(b);
    return script;
}

Test(repro, shape_recompiles) {
    example("shape_recompiles.py");
    char *s = reproduces("scale", NULL, NULL);
    /* Four calls, the recorded data of each input, the recorded config. */
    cr_assert_not_null(strstr(s, "# ---- call 4 of 4: recorded compile 0/3"), "%s", s);
    cr_assert_not_null(
        strstr(s, "x = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0], dtype=torch.float32)"));
    cr_assert_not_null(strstr(s, "torch._dynamo.config.automatic_dynamic_shapes = False"));
    cr_assert_not_null(strstr(s, "torch.compile(scale, backend='eager')"));
    /* The @torch.compile of the stored source is removed: compiled once. */
    cr_assert_null(strstr(s, "\n@torch.compile"), "%s", s);
}

Test(repro, graph_breaks) {
    example("graph_breaks.py");
    reproduces("step", NULL, NULL);
}

Test(repro, dynamic_shapes) {
    example("dynamic_shapes.py");
    char *s = reproduces("norm", NULL, NULL);
    cr_assert_not_null(strstr(s, "dynamic=True"), "%s", s);
}

Test(repro, closure_cell) {
    example("closure_cell.py");
    char *s = reproduces("step", NULL, NULL);
    /* The nested function is made by a factory taking its closure. */
    cr_assert_not_null(strstr(s, "make_bump(hits=1)"), "%s", s);
}

/* A branch of torch.cond reads a global object the frame itself does not:
 * the globals its callees read are rebuilt too.  The other frame's compile
 * fails, as recorded, and the script says so. */
Test(repro, cond_globals_and_errors) {
    example("cond_side_effect.py");
    char *s = reproduces("flip", "--frame", "flip");
    cr_assert_not_null(strstr(s, "state = State.__new__(State)"), "%s", s);
    s = reproduces("logged", "--frame", "logged");
    cr_assert_not_null(strstr(s, "RECORDED = {'compiles': ['1/0'],\n 'compiled': 0,\n 'errors': 1"),
                       "%s", s);
}

/* A backend that raises: the compile fails in the repro as recorded. */
Test(repro, backend_raises) {
    example("backend_raises.py");
    reproduces("f", NULL, NULL);
}

/* Inductor compiles twice over do not fit the suite's timeout under ASan. */
Test(repro, inductor_model) {
    if (e2e_asan) {
        printf("repro.inductor_model: skipped under ASan (two inductor compiles)\n");
        return;
    }
    example("inductor_model.py");
    char *s = reproduces("forward", NULL, NULL);
    cr_assert_not_null(strstr(s, "backend='inductor'"), "%s", s);
    cr_assert_not_null(strstr(s, "fc1.register_parameter('weight', weight)"), "%s", s);
    cr_assert_not_null(strstr(s, "with torch.no_grad():"), "%s", s);
}

/* An nn.Module switched between train and eval, an int argument, a global
 * and grad mode: four recompiles, each with its own guard failure. */
Test(repro, module_modes) {
    scenario("replay/modes.py");
    char *s = reproduces("forward", NULL, NULL);
    cr_assert_not_null(strstr(s, "net.train(False)"), "%s", s);
    cr_assert_not_null(strstr(s, "SCALE = 3.0  # a global the frame reads"), "%s", s);
}

/* The model's class in another file of the program: its definitions go
 * into the script and are registered as that module. */
Test(repro, model_in_another_module) {
    scenario_with("replay/uses_models.py", "replay/models.py");
    char *s = reproduces("forward", NULL, NULL);
    cr_assert_not_null(strstr(s, "sys.modules['models'] = types.ModuleType('models')"), "%s", s);
    cr_assert_not_null(strstr(s, "class Mlp(torch.nn.Module):"), "%s", s);
    /* Definitions only: the module's main-program line is not copied. */
    cr_assert_null(strstr(s, "models.py imported"), "%s", s);
}

/* A closure with a graph break (its resume function recompiles too), and
 * automatic dynamic shapes; --frame and --compile choose. */
Test(repro, frames_by_name_and_compile) {
    scenario("replay/closures.py");
    reproduces("step", "--frame", "step");
    reproduces("grow", "--compile", "2/1");
    char *s = reproduces("marked", "--frame", "marked");
    cr_assert_not_null(strstr(s, "torch._dynamo.mark_dynamic(x, 0)"), "%s", s);
}

/* Values of many kinds: views, strides, offsets, dataclass, namedtuple,
 * enum, plain object, shared list, global, mark_dynamic with a range, a
 * tensor too large for its data to be kept. */
Test(repro, values_of_many_kinds) {
    scenario("repro/values.py");
    char *s = reproduces("f", NULL, NULL);
    cr_assert_not_null(strstr(s, "mark_dynamic(dyn, 0, min=2, max=64)"), "%s", s);
    cr_assert_not_null(strstr(s, "big = torch.randn((40, 40), dtype=torch.float64)"), "%s", s);
    cr_assert_not_null(strstr(s, "x = base.as_strided((4, 3), (1, 4), 0)"), "%s", s);
    cr_assert_not_null(strstr(s, "Point(2, 3)"), "%s", s);
    cr_assert_not_null(strstr(s, "object.__setattr__(opts, 'scale', 1.5)"), "%s", s);
}

/* Classes defined inside a test method (a state object with a base class
 * beside it, a frozen dataclass): the script makes each by a factory that
 * nests it as the source does, its qualname and @dataclass as recorded,
 * and the second call recompiles as recorded. */
Test(repro, classes_defined_inside_functions) {
    scenario("repro/local_classes.py");
    char *s = reproduces("f", NULL, NULL);
    cr_assert_null(strstr(s, "NOT REBUILT"), "%s", s);
    cr_assert_not_null(strstr(s, "State.__qualname__ = 'T.test_x.<locals>.State'"), "%s", s);
    cr_assert_not_null(strstr(s, "class State(Base):"), "%s", s);
    cr_assert_not_null(strstr(s, "@dataclasses.dataclass(frozen=True)\n"), "%s", s);
    cr_assert_not_null(
        strstr(s, "tags: 'list' = dataclasses.field(default_factory=list, repr=False)"), "%s", s);
    cr_assert_not_null(strstr(s, "st = State.__new__(State)"), "%s", s);
}

/* torch.compile's wrappers among the values are written as calls of
 * torch.compile with the recorded backend and options. */
Test(repro, compiled_wrappers) {
    scenario("replay/compiled_wrappers.py");
    char *s = reproduces("run", NULL, NULL);
    cr_assert_not_null(strstr(s, "h.mods = [torch.compile("), "%s", s);
    cr_assert_not_null(strstr(s, "backend='eager', dynamic=False)"), "%s", s);
}

/* Backend objects: a new torch.compile per recorded object (the second
 * CompileCounter's compile is a BACKEND_MATCH recompile), each made with
 * the backend it wraps. */
Test(repro, backend_objects) {
    scenario("replay/backend_objects.py");
    char *s = reproduces("f", NULL, NULL);
    cr_assert_not_null(strstr(s, "backend=torch._dynamo.testing.CompileCounterWithBackend("
                                 "'eager'))"),
                       "%s", s);
    cr_assert_not_null(strstr(s, "CompileCounterWithBackend(torch._dynamo.testing."
                                 "EagerAndRecordGraphs()))"),
                       "%s", s);
}

/* An fx GraphModule compiled itself: the script builds its graph node by
 * node and the module with its parameter, lets torch.fx generate the code,
 * and gives the second call's GraphModule the first one's class (one
 * GraphModule in the recording), so its recompile is one here too. */
Test(repro, fx_graph_module) {
    scenario("replay/fx_one_graph_module.py");
    char *s = reproduces("forward", NULL, NULL);
    cr_assert_not_null(strstr(s, ".create_node('call_function', _operator.getitem,"), "%s", s);
    cr_assert_not_null(strstr(s, ".graph = gm_graph  # torch.fx generates its code"), "%s", s);
    cr_assert_not_null(strstr(s, "gm.__class__ = repro_fx_classes.setdefault("), "%s", s);
    cr_assert_null(strstr(s, "def forward"), "no generated code is written: %s", s);
}

/* A library's function of a module (torch's map, compiled directly):
 * found in that module by its qualified name, and compiled as recorded on
 * tensor views, recompiles and all. */
Test(repro, library_function_of_a_module) {
    scenario("replay/views.py");
    char *s = reproduces("map", "--frame", "map");
    cr_assert_not_null(
        strstr(s, "repro_library_function(sys.modules['torch._higher_order_ops.map'], 'map', "),
        "%s", s);
    cr_assert_not_null(strstr(s, "# a view, as recorded"), "%s", s);
}

/* functools.partial arguments and globals: written as functools.partial
 * calls, with the recompile on a keyword's value. */
Test(repro, partials) {
    scenario("replay/partials.py");
    char *s = reproduces("fn", "--frame", "fn");
    cr_assert_not_null(strstr(s, "functools.partial(multiply, y=4)"), "%s", s);
    cr_assert_not_null(strstr(s, "functools.partial(torch.clip, min=0.0, max=1.0)"), "%s", s);
}

/* numpy dtypes and finfo/iinfo objects, and the numpy module a frame's
 * global names: the recompile on the dtype as recorded. */
Test(repro, numpy_dtypes_and_info) {
    scenario("replay/numpy_values.py");
    char *s = reproduces("g", "--frame", "g");
    cr_assert_not_null(strstr(s, "numpy.finfo(numpy.dtype('<f8'))"), "%s", s);
    cr_assert_not_null(strstr(s, "np = numpy"), "%s", s);
}

/* A @contextmanager object as an argument: its class from contextlib, its
 * generator made by calling the generator function unwrapped. */
Test(repro, contextmanager_object) {
    scenario("replay/contextmanager_arg.py");
    char *s = reproduces("fn", "--frame", "run.<locals>.fn");
    cr_assert_not_null(strstr(s, "contextlib._GeneratorContextManager.__new__("), "%s", s);
    cr_assert_not_null(strstr(s, "= inspect.unwrap("), "%s", s);
}

/* namedtuple classes made inside a function: made by
 * collections.namedtuple, once per recorded class, so the third call's
 * class of the same name recompiles as recorded. */
Test(repro, namedtuple_classes_made_inside_functions) {
    scenario("replay/local_namedtuples.py");
    char *s = reproduces("scaled", "--frame", "scaled");
    cr_assert_not_null(strstr(s, "Point = collections.namedtuple('Point', ['x', 'y', 'scale'],"
                                 " defaults=[2], module='__main__')"),
                       "%s", s);
    cr_assert_not_null(strstr(s, "Point_(1.0, 2.0, 2)"), "%s", s);
    s = reproduces("func", "--frame", "shapes.<locals>.func");
    cr_assert_not_null(strstr(s, "collections.namedtuple('Sdpa_Shape'"), "%s", s);
}

/* Nested functions under torch._dynamo.disable: written as
 * torch._dynamo.disable calls with the recorded reason and wrapping. */
Test(repro, disabled_nested_functions) {
    scenario("replay/disabled_nested.py");
    char *s = reproduces("f", "--frame", "run.<locals>.f");
    cr_assert_not_null(strstr(s, "reason='host sync', wrapping=False)"), "%s", s);
    /* the function the def makes, not the decorator's wrapper of it */
    cr_assert_not_null(strstr(s, "return repro_unwrapped(disallowed, 'disallowed')"), "%s", s);
}

/* A lazy module before its first call: uninitialized parameters by
 * torch's constructor, the hook handles bound to the module's own hook
 * dicts (so initializing removes its hooks, as in the program). */
Test(repro, lazy_modules) {
    scenario("replay/lazy_modules.py");
    char *s = reproduces("forward", "--frame", "LazyMLP.forward");
    cr_assert_not_null(strstr(s, "torch.nn.parameter.UninitializedParameter(True,"), "%s", s);
    cr_assert_not_null(strstr(s, "fc1.__dict__['_forward_pre_hooks'] = _forward_pre_hooks"), "%s",
                       s);
}

/* Tensors of the program's subclasses of torch.Tensor: a leaf by
 * torch.Tensor._make_subclass, one that is not by as_subclass. */
Test(repro, tensor_subclasses) {
    scenario("replay/tensor_subclasses.py");
    char *s = reproduces("foo", "--frame", "foo");
    cr_assert_not_null(strstr(s, "torch.Tensor._make_subclass(TensorProxy, y.detach(), True)"),
                       "%s", s);
    s = reproduces("bar", "--frame", "bar");
    cr_assert_not_null(strstr(s, ".as_subclass(Scaled)"), "%s", s);
}

/* A dict subclass's items are set by dict's own __setitem__; an
 * OrderedDict subclass in place of a module's _parameters is that object. */
Test(repro, dict_subclasses) {
    scenario("replay/dict_subclasses.py");
    char *s = reproduces("f", "--frame", "run.<locals>.f");
    cr_assert_not_null(strstr(s, "else dict).__setitem__(p,"), "%s", s);
    s = reproduces("forward", "--frame", "run.<locals>.Net.forward");
    cr_assert_not_null(strstr(s, "fc.__dict__['_parameters'] = "), "%s", s);
}

/* Two lambdas of one line as values: a factory for each, with its own
 * body. */
Test(repro, lambdas_of_one_line) {
    scenario("replay/lambdas_of_one_line.py");
    char *s = reproduces("apply_all", "--frame", "apply_all");
    cr_assert_not_null(strstr(s, "return lambda x: x - 3"), "%s", s);
    cr_assert_not_null(strstr(s, "return lambda x: x / 4"), "%s", s);
}

/* A filter part way through, made by the builtin; an exception by its
 * class's C base, never the class's own __init__. */
Test(repro, iterators_and_exceptions) {
    scenario("replay/iterators_and_exceptions.py");
    char *s = reproduces("stops", "--frame", "main.<locals>.stops");
    cr_assert_not_null(strstr(s, "if b.__module__ == 'builtins').__init__("), "%s", s);
    s = reproduces("walk", "--frame", "walk");
    cr_assert_not_null(strstr(s, "enumerate(*"), "%s", s);
}

/* A method's defaults as they were at each compile: set on the method. */
Test(repro, patched_method_defaults) {
    scenario("replay/method_defaults.py");
    char *s = reproduces("Wrapper.forward", "--frame", "Wrapper.forward");
    cr_assert_not_null(strstr(s, "['forward'].__kwdefaults__ = "), "%s", s);
    /* The compiles Dynamo started, not every frame its callback saw
     * (torch's nn.Module call frames, which it skips, counted 4 more). */
    cr_assert_not_null(strstr(last_printed, "compiles, resume functions too: 3 (recorded: 3)"),
                       "%s", last_printed);
}

/* The closure cells of a local class's methods, set by a helper of the
 * script; one class per recorded class, made by the factory again. */
Test(repro, local_classes_with_closures_one_per_call) {
    scenario("replay/local_class_closures.py");
    char *s = reproduces("run", "--frame", "run");
    cr_assert_not_null(strstr(s, "repro_set_cell(next(b for b in Block.__mro__"), "%s", s);
    cr_assert_not_null(strstr(s, "Block_"), "%s", s);
    reproduces("forward", "--frame", "make.<locals>.Block.forward");
}

/* A global that a library decorator's wrapper holds (patch_dynamo_config
 * around item_of): the decorated definition makes it again, never None. */
Test(repro, library_wrappers_of_definitions) {
    scenario("replay/config_patches.py");
    char *s = reproduces("outer", "--frame", "outer");
    cr_assert_not_null(strstr(s, "# item_of: as its decorated definition above makes it"), "%s", s);
    cr_assert_null(strstr(s, "NOT REBUILT"), "%s", s);
}

/* torch.compile(options={"guard_filter_fn": f}): passed again, the
 * function made as the frame's other values are. */
Test(repro, guard_filter_functions) {
    scenario("replay/guard_filter.py");
    char *s = reproduces("fn", "--frame", "test_filter_by_id.<locals>.fn");
    cr_assert_not_null(strstr(s, "options={'guard_filter_fn': "), "%s", s);
    reproduces("g", "--frame", "g");
}

/* Module-level custom ops: a decorated def and the definitions that
 * register themselves with it (@scale.register_fake), which no name reaches
 * (without the fake, both calls raised); a torch.library.define schema and
 * the @torch.library.impl / register_fake definitions of that op. */
Test(repro, module_level_custom_ops) {
    scenario("replay/custom_ops.py");
    char *s = reproduces("f", "--frame", "f");
    cr_assert_not_null(strstr(s, "@scale.register_fake"), "%s", s);
    cr_assert_not_null(strstr(s, "torch.library.define(\"dynrec_test::twice\""), "%s", s);
    cr_assert_not_null(strstr(s, "@torch.library.register_fake(\"dynrec_test::twice\")"), "%s", s);
}

/* Module-level torch.library.Library objects: the Library statements, the
 * lib.define / lib.impl statements and the kernels they name (before, the
 * script had none of them and both calls raised). */
Test(repro, module_level_library_objects) {
    scenario("replay/library_objects.py");
    char *s = reproduces("f", "--frame", "f");
    cr_assert_not_null(strstr(s, "lib = torch.library.Library(\"dynrec_lib\", \"DEF\")"), "%s", s);
    cr_assert_not_null(strstr(s, "lib.impl(\"scale2\", scale2_kernel, \"CPU\")"), "%s", s);
    cr_assert_not_null(strstr(s, "def scale2_kernel(x, s):"), "%s", s);
    cr_assert_not_null(strstr(s, "@torch.library.impl(\"dynrec_lib::shift\""), "%s", s);
}

/* The custom ops a test defines in its body for the function it compiles
 * (a `with torch.library._scoped_library(...) as lib:`, lib.define, defs
 * registered with @torch.library.impl(lib, ...)), written at module level
 * as the replay makes them, each Library kept (a second `with` binds the
 * same name); before, the call raised: no op mylib::copy_to. */
Test(repro, custom_ops_a_test_defines) {
    scenario("replay/local_custom_ops.py");
    char *s = reproduces("f1", "--frame", "Tests.test_out_variant.<locals>.f1");
    cr_assert_not_null(strstr(s, "lib = torch.library.Library('mylib', 'FRAGMENT')"), "%s", s);
    cr_assert_not_null(strstr(s, "repro_libraries.append(lib)"), "%s", s);
    cr_assert_not_null(strstr(s, "@torch.library.impl(lib, 'copy_to', 'Meta')"), "%s", s);
    reproduces("g", "--frame", "Tests.test_compliant.<locals>.g");
}

/* Weak containers and references, made over items the script keeps
 * alive (repro_weak), a dead reference dead again. */
Test(repro, weak_containers_and_references) {
    scenario("replay/weak_containers.py");
    char *s = reproduces("fn", "--frame", "test_weak.<locals>.fn");
    cr_assert_not_null(strstr(s, "repro_weak(weakref.WeakSet, ["), "%s", s);
    cr_assert_not_null(strstr(s, "repro_weak(weakref.ref, None)"), "%s", s);
}

/* numpy arrays with their recorded strides and read-only flag. */
Test(repro, numpy_arrays_keep_their_strides) {
    scenario("replay/numpy_strides.py");
    char *s = reproduces("same", "--frame", "same");
    cr_assert_not_null(strstr(s, "= numpy.ndarray((2, 3), dtype='<i8', buffer=numpy.zeros(3,"),
                       "%s", s);
    cr_assert_not_null(strstr(s, ".flags.writeable = False"), "%s", s);
}

/* A dict's iterator, made by iter() of the dict's view and advanced. */
Test(repro, dict_iterators_part_way) {
    scenario("replay/dict_iterators.py");
    char *s = reproduces("rest", "--frame", "rest");
    cr_assert_not_null(strstr(s, "= iter(dict.keys("), "%s", s);
    cr_assert_not_null(strstr(s, "= iter(dict.values("), "%s", s);
}

/* A struct sequence by its class and one tuple; a deque with its maxlen. */
Test(repro, struct_sequences_and_deques) {
    scenario("replay/structseqs_and_deques.py");
    char *s = reproduces("use", "--frame", "use");
    cr_assert_not_null(strstr(s, "torch.return_types.topk(("), "%s", s);
    s = reproduces("window", "--frame", "window");
    cr_assert_not_null(strstr(s, "collections.deque(["), "%s", s);
    cr_assert_not_null(strstr(s, "maxlen=3)"), "%s", s);
}

/* A mappingproxy over the rebuilt dict the frame also gets. */
Test(repro, mapping_proxies) {
    scenario("replay/mapping_proxies.py");
    char *s = reproduces("shared", "--frame", "shared");
    cr_assert_not_null(strstr(s, "types.MappingProxyType(d)"), "%s", s);
}

/* A local class's computed class attributes: set on the class, as captured. */
Test(repro, computed_attributes_of_local_classes) {
    scenario("replay/class_attrs.py");
    char *s = reproduces("fn", NULL, NULL);
    cr_assert_not_null(strstr(s, "'limit', 'c')  # its class body made it"), "%s", s);
}

/* random.Random objects (Random itself and a subclass with an attribute)
 * are made through random.Random.__new__ and setstate, the recorded state. */
Test(repro, random_objects) {
    scenario("replay/random_and_nested_breaks.py");
    char *s = reproduces("fn", NULL, NULL);
    cr_assert_not_null(strstr(s, "rng = random.Random.__new__(random.Random)"), "%s", s);
    cr_assert_not_null(strstr(s, "random.Random.setstate(rng, (3, ("), "%s", s);
    cr_assert_not_null(strstr(s, "= random.Random.__new__(MyRandom)"), "%s", s);
    cr_assert_not_null(strstr(s, ".label = 'mine'"), "%s", s);
}

/* A library's frame (GPT-2's forward behind transformers' can_return_tuple,
 * compiled as model.forward = torch.compile(model.forward)): the script
 * finds the function on the model's class and imports the modules of that
 * installed package only; it compiles as recorded, recompiles and all. */
Test(repro, library_frame_of_a_transformers_model) {
    if (e2e_asan) {
        printf("repro.library_frame: skipped under ASan (transformers outlasts the timeout)\n");
        return;
    }
    E2eProc *has = sh(e2e_fmt("'%s' -c 'import transformers'", e2e_python), E2E_TIMEOUT_MS);
    if (has->status != 0) {
        printf("repro.library_frame: skipped: no transformers in %s\n", e2e_python);
        return;
    }
    setenv("HF_HUB_OFFLINE", "1", 1);
    scenario("models/gpt2_generate.py");
    char *s = reproduces("wrapper", NULL, NULL);
    cr_assert_not_null(strstr(s, "repro_fn = repro_library_function(gpt2lmheadmodel, "
                                 "'can_return_tuple.<locals>.wrapper', "),
                       "%s", s);
    cr_assert_not_null(strstr(s, "import transformers.cache_utils  # named by a recorded value"));
    cr_assert_not_null(strstr(s, "# Standalone repro of torch.compile on GPT2LMHeadModel via "));
    cr_assert_null(strstr(s, "None.__new__"), "a class the script could not name");
}

/* Literals longer than a line: the script is broken only after commas
 * inside brackets, never inside a string (which once made a script that
 * did not parse, reported as a malformed trace). */
Test(repro, long_literals_are_never_split) {
    scenario("repro/long_literals.py");
    char *s = reproduces("f", NULL, NULL);
    cr_assert_not_null(strstr(s, "\"alpha, beta, gamma, delta, epsilon, zeta, eta, theta, iota, "
                                 "kappa, lambda, mu, nu, xi, omicron\""),
                       "%s", s);
    cr_assert_not_null(strstr(s, "\"three, four, five, six, seven, eight, nine, ten, eleven, "
                                 "twelve, thirteen\""),
                       "%s", s);
}

static E2eProc *repro_of(const char *trace, const char *opt, const char *val) {
    return dynrec((const char *[]){"repro", trace, "-o", e2e_path("x.py"), opt, val, NULL});
}

Test(repro, refusals) {
    /* Junk, a missing file: exit 65 naming the file; nothing written. */
    e2e_write_file(e2e_path("junk.db"), "not a trace\n", 12);
    E2eProc *p = repro_of(e2e_path("junk.db"), NULL, NULL);
    e2e_assert_exit(p, 65, p->err.data);
    cr_assert_not_null(strstr(p->err.data, "junk.db"), "%s", p->err.data);
    p = repro_of(e2e_path("missing.db"), NULL, NULL);
    e2e_assert_exit(p, 65, p->err.data);
    cr_assert_not_null(strstr(p->err.data, "missing.db"), "%s", p->err.data);
    cr_assert_neq(access(e2e_path("x.py"), F_OK), 0, "a script was written");
    /* A trace from before input capture: 66, saying so. */
    char *v1 = e2e_fmt("%s/../tests/fuzz/corpus/trace/v1-shape_recompiles.db", e2e_examples);
    p = repro_of(v1, NULL, NULL);
    e2e_assert_exit(p, 66, p->err.data);
    cr_assert_not_null(strstr(p->err.data, "holds no captured frames"), "%s", p->err.data);
    /* Usage: unknown frame and compile list the captured ones. */
    example("shape_recompiles.py");
    p = repro_of(e2e_path("w/t.db"), "--frame", "nope");
    e2e_assert_exit(p, 2, p->err.data);
    cr_assert_not_null(strstr(p->err.data, "scale (shape_recompiles.py:18, 4 compiles: "
                                           "0/0 0/1 0/2 0/3)"),
                       "%s", p->err.data);
    p = repro_of(e2e_path("w/t.db"), "--compile", "7/7");
    e2e_assert_exit(p, 2, p->err.data);
    cr_assert_not_null(strstr(p->err.data, "no compile 7/7"), "%s", p->err.data);
    p = dynrec((const char *[]){"repro", "--frame", "a", "--compile", "0/0", "t.db", NULL});
    e2e_assert_exit(p, 2, p->err.data);
    p = dynrec((const char *[]){"repro", "--bogus", NULL});
    e2e_assert_exit(p, 2, p->err.data);
    p = dynrec((const char *[]){"repro", "--help", NULL});
    e2e_assert_exit(p, 0, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "usage: dynrec repro"));
    /* --compile 0/1: the frame's calls up to that compile; to stdout. */
    p = dynrec((const char *[]){"repro", e2e_path("w/t.db"), "--compile", "0/1", NULL});
    e2e_assert_exit(p, 0, p->err.data);
    cr_assert_not_null(strstr(p->out.data, "# ---- call 2 of 2: recorded compile 0/1"), "%s",
                       p->out.data);
}

/* A frame with an argument the capture could not keep (a lock): the script
 * is still written, with None and a comment in its place, exit 3; without
 * --frame the replayable frame is chosen. */
Test(repro, not_replayable) {
    scenario("replay/opaque_arg.py");
    E2eProc *p = repro_of(e2e_path("w/t.db"), "--frame", "with_lock");
    e2e_assert_exit(p, 3, p->err.data);
    cr_assert_not_null(strstr(p->err.data, "_thread.lock"), "%s", p->err.data);
    char *s = e2e_slurp(e2e_path("x.py"), NULL);
    cr_assert_not_null(s);
    cr_assert_not_null(strstr(s, "# NOT CAPTURED: lock, a value of type _thread.lock"), "%s", s);
    cr_assert_not_null(strstr(s, "repro_call('call 1', repro_compiled, x, None)"), "%s", s);
    E2eProc *py =
        sh(e2e_fmt("cd '%s' && '%s' -c 'import ast, sys; ast.parse(open(\"x.py\").read())'",
                   e2e_dir, e2e_python),
           E2E_TIMEOUT_MS);
    e2e_assert_exit(py, 0, py->err.data);
    p = repro_of(e2e_path("w/t.db"), NULL, NULL);
    e2e_assert_exit(p, 0, p->err.data);
    cr_assert_not_null(strstr(p->err.data, "of plain"), "%s", p->err.data);
}

/* Malformed value trees are refused before anything is written: exit 65
 * naming the capture and node. */
Test(repro, malformed_values) {
    example("shape_recompiles.py");
    static const char *const damage[][2] = {
        {"UPDATE value_nodes SET value = replace(value, '\"shape\": [2]', '\"shape\": "
         "[1099511627776]') WHERE capture = 1 AND node = 3",
         "over 1 GiB"},
        {"UPDATE value_nodes SET value = '[[2, 99]]' WHERE capture = 1 AND node = 1",
         "refers to node 99, which is not there"},
        {"UPDATE value_nodes SET kind_id = (SELECT kind_id FROM value_nodes WHERE capture = 1"
         " AND node = 0) WHERE capture = 1 AND node = 2",
         "frame without an object of fields"},
    };
    for (size_t i = 0; i < sizeof damage / sizeof *damage; i++) {
        E2eProc *cp =
            sh(e2e_fmt("cp '%s' '%s'", e2e_path("w/t.db"), e2e_path("bad.db")), E2E_TIMEOUT_MS);
        e2e_assert_exit(cp, 0, cp->err.data);
        sqlite3 *db = NULL;
        cr_assert_eq(sqlite3_open(e2e_path("bad.db"), &db), SQLITE_OK);
        cr_assert_eq(sqlite3_exec(db, damage[i][0], NULL, NULL, NULL), SQLITE_OK, "%s",
                     sqlite3_errmsg(db));
        cr_assert_eq(sqlite3_changes(db), 1, "%s", damage[i][0]);
        cr_assert_eq(sqlite3_close(db), SQLITE_OK);
        E2eProc *p = repro_of(e2e_path("bad.db"), NULL, NULL);
        e2e_assert_exit(p, 65, p->err.data);
        cr_assert_not_null(strstr(p->err.data, damage[i][1]), "want '%s': %s", damage[i][1],
                           p->err.data);
        cr_assert_not_null(strstr(p->err.data, "bad.db is malformed: capture 1 node"), "%s",
                           p->err.data);
        cr_assert_neq(access(e2e_path("x.py"), F_OK), 0, "a script was written");
    }
}

/* A hostile trace: a captured string, a compile id and a stored source's
 * class name carry code.  Strings land as repr() literals and comments
 * stay one line, so running the script never runs the payload; a name that
 * is not a dotted identifier is refused (65). */
Test(repro, hostile_trace_adds_no_code) {
    scenario("repro/values.py");
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(e2e_path("w/t.db"), &db), SQLITE_OK);
    const char *payload = "x\"\"\"'''\nprint(\"INJECTED\")\n#";
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    "UPDATE value_nodes SET value = json_quote(?1)"
                                    " WHERE value = '\"fast\"'",
                                    -1, &st, NULL),
                 SQLITE_OK);
    sqlite3_bind_text(st, 1, payload, -1, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE, "%s", sqlite3_errmsg(db));
    cr_assert_gt(sqlite3_changes(db), 0);
    sqlite3_finalize(st);
    cr_assert_eq(
        sqlite3_prepare_v2(db, "UPDATE strings SET text = ?1 WHERE text = '0/1'", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_text(st, 1, "0/1\nprint(\"INJECTED\")\r\x0c", -1, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    E2eProc *p = repro_of(e2e_path("w/t.db"), NULL, NULL);
    e2e_assert_exit(p, 0, p->err.data);
    char *s = e2e_slurp(e2e_path("x.py"), NULL);
    cr_assert_null(strstr(s, "\nprint(\"INJECTED\")"), "%s", s);
    E2eProc *py = sh(e2e_fmt("cd '%s' && '%s' x.py", e2e_dir, e2e_python), E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(py, 0, py->err.data);
    cr_assert_null(strstr(py->out.data, "\nINJECTED\n"), "%s", py->out.data);
    cr_assert_neq(strncmp(py->out.data, "INJECTED\n", 9), 0, "%s", py->out.data);
    cr_assert_null(strstr(py->err.data, "\nINJECTED\n"), "%s", py->err.data);
    /* The string did reach the function, as data. */
    cr_assert_not_null(strstr(s, "\\nprint(\"INJECTED\")\\n"), "%s", s);

    /* A class reference whose name is code: refused. */
    cr_assert_eq(sqlite3_open(e2e_path("w/t.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db,
                              "UPDATE value_nodes SET value = replace(value, '\"Opts\"',"
                              " '\"Opts; import os\"') WHERE value LIKE '%\"Opts\"%'",
                              NULL, NULL, NULL),
                 SQLITE_OK);
    cr_assert_gt(sqlite3_changes(db), 0);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    unlink(e2e_path("x.py"));
    p = repro_of(e2e_path("w/t.db"), NULL, NULL);
    e2e_assert_exit(p, 65, p->err.data);
    cr_assert_not_null(strstr(p->err.data, "is not a dotted name"), "%s", p->err.data);
    cr_assert_neq(access(e2e_path("x.py"), F_OK), 0, "a script was written");
}

/* Ints that were ids of values: repro_id() of the value made for them, the
 * same id again in a later call whose arguments do not hold that value. */
Test(repro, ints_that_are_ids_of_values) {
    scenario("replay/id_values.py");
    char *s = reproduces("forward", "--frame", "M.forward");
    cr_assert_not_null(strstr(s, "x, repro_id("), "%s", s);
    cr_assert_not_null(strstr(s, ", m))"), "%s", s);
    s = reproduces("g", "--frame", "g");
    cr_assert_not_null(strstr(s, ".me = repro_id("), "%s", s);
}

/* A class defined inside a function, read as itself: the class attribute
 * its body made by a call is set on the class the script defines. */
Test(repro, local_class_attributes_of_a_class_read_as_itself) {
    scenario("replay/local_class_cells.py");
    char *s =
        reproduces("run_mock", "--frame", "test_class_attribute_made_by_a_call.<locals>.run_mock");
    cr_assert_not_null(strstr(s, "'class_variable', class_variable)"), "%s", s);
}

/* An autograd.Function's ctx: made by the Function's _backward_cls, its
 * attributes and C attributes set. */
Test(repro, autograd_function_ctx) {
    scenario("replay/autograd_ctx.py");
    char *s = reproduces("forward", "--frame", "Double.forward");
    cr_assert_not_null(strstr(s, "= Double._backward_cls()"), "%s", s);
    cr_assert_not_null(strstr(s, ".needs_input_grad = "), "%s", s);
}

/* Functions defined in a test: `mult2 = Mult.apply` binds the function of
 * torch's classmethod, not the bound method its name finds; a method that
 * a decorator the enclosing function defines wraps is made by a factory
 * that binds that decorator to the identity (the wrapper's cell holds the
 * function the def made). */
Test(repro, classmethod_function_and_local_decorator_of_local_functions) {
    scenario("replay/autograd_ctx.py");
    char *s = reproduces("g", "--frame", "aliased.<locals>.g");
    /* (torch 2.14: a C classmethod, Mult.apply) */
    cr_assert(
        strstr(s, "types.MethodType(torch.autograd.function.Function.apply.__func__, Mult)") ||
            strstr(s, "mult2=Mult.apply"),
        "%s", s);
    s = reproduces("fn", "--frame", "wrapped.<locals>.fn");
    cr_assert_not_null(strstr(s, "my_decorator = (lambda f: f)  # a decorator wrapped defines"),
                       "%s", s);
}

/* A class defined in a function and marked with torch._dynamo.allow_in_graph
 * (an autograd.Function with a graph break in forward): marked again after
 * its making, so Dynamo puts it in the graph as recorded. */
Test(repro, local_class_marked_allow_in_graph) {
    scenario("replay/allow_in_graph.py");
    char *s = reproduces("fn", "--frame", "run_class.<locals>.fn");
    cr_assert_not_null(strstr(s, "torch._dynamo.allow_in_graph(AllowInGraphFunc)\n"), "%s", s);
}

/* A traceable wrapper subclass tensor (torch's TwoTensor) as an argument:
 * made by the class's __tensor_unflatten__ from its inner tensors; the
 * script's four compiles of the frame (three recompiles) are the recorded
 * ones. */
Test(repro, traceable_wrapper_subclass_argument) {
    scenario("replay/wrapper_subclasses.py");
    char *s = reproduces("f", "--frame", "f");
    cr_assert_not_null(
        strstr(s, "torch.testing._internal.two_tensor.TwoTensor.__tensor_unflatten__("), "%s", s);
}

/* Jagged nested tensors as arguments, views of their values: written as
 * torch._nested_view_from_jagged of the recorded values and offsets (the
 * two first sharing offsets), and the recompile on new offsets is the
 * recorded one. */
Test(repro, jagged_nested_tensor_arguments) {
    scenario("replay/wrapper_subclasses.py");
    char *s = reproduces("binary", "--frame", "binary");
    cr_assert_not_null(strstr(s, "torch._nested_view_from_jagged("), "%s", s);
}

/* Calls under torch.compiler.set_stance("default", force_backend=B): the
 * script calls them inside that stance, so the second backend's
 * BACKEND_MATCH recompile names B as recorded. */
Test(repro, backend_forced_by_set_stance) {
    scenario("replay/forced_backend.py");
    char *s = reproduces("a", "--frame", "a");
    cr_assert_not_null(strstr(s, "with torch.compiler.set_stance('default', force_backend="), "%s",
                       s);
}
