#define _GNU_SOURCE 1
/* test_identical.c -- recording never changes the program: what a user sees
 * under `dynrec run` (stdout, stderr, tracebacks, exit status) is what plain
 * python shows, where the two used to differ.
 *
 * - pytest's report of failing tests that use torch.compile, with
 *   TORCHDYNAMO_VERBOSE=1 so that Dynamo's own frames stay in the traceback:
 *   no frame of dynrec's adapter in it, and no extra structured-trace record
 *   in "Captured log call" (adapter frames on the stack shifted the frames
 *   torch skips by count);
 * - a script that compiles nn.Modules, to its last byte: under torch 2.14 the
 *   recorder's strong references to compiled code made Dynamo's weakref
 *   callbacks run after torch's modules were cleared, printing "Exception
 *   ignored in ...ExactWeakKeyDictionary..." at exit (run this suite with
 *   DYNREC_PYTHON of a torch 2.14 venv to check that);
 * - inductor's generated code, in its cache directory, is library code for
 *   `dynrec show`, not "the script's own code";
 * - a module with a module-level __getattr__ is never asked for a name the
 *   program did not ask for (torch 2.14's torch.utils.mkldnn compiled
 *   TorchScript classes and printed a FutureWarning when the recorder looked
 *   for trace_structured in it);
 * - the cyclic collector runs as often as under python: what the recorder
 *   allocates for each compile (and torch's structured-trace records it
 *   asks for) once brought a full collection of a whole model's objects
 *   forward, the largest part of a recording's cost.
 *
 * Uses e2e_util.c's fixture (DYNREC_BIN, DYNREC_PYTHON). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_util.h"

TestSuite(identical, .init = e2e_setup, .fini = e2e_teardown, .timeout = 400);

/* pytest's "in 1.23s" (and "(0:00:01)") differ between any two runs, in
 * their digits and in how many there are (9.87s, 10.02s): each run of
 * digits and dots after " in " becomes one N. */
static void mask_times(E2eProc *p) {
    char *s = p->out.data;
    for (char *at = s; (at = strstr(at, " in ")) != NULL; at += 4) {
        char *q = at + 4, *end = q;
        while (isdigit((unsigned char)*end) || *end == '.') end++;
        if (end == q) continue;
        *q = 'N';
        memmove(q + 1, end, strlen(end) + 1);
    }
    p->out.len = strlen(s);
}

Test(identical, pytest_failures_under_compile_match_python) {
    e2e_copy_script("failing_compile_tests.py");
    setenv("TORCHDYNAMO_VERBOSE", "1", 1);
    const char *args[] = {
        "-m", "pytest", "-q", "-p", "no:cacheprovider", "failing_compile_tests.py", NULL};
    E2eProc *py = e2e_run_python(args, NULL, E2E_TORCH_TIMEOUT_MS);
    E2eProc *dr = e2e_record("T.db", args, NULL, E2E_TORCH_TIMEOUT_MS);
    cr_assert_not_null(strstr(py->out.data, "3 failed"), "python: %s", py->out.data);
    mask_times(py);
    mask_times(dr);
    cr_assert_null(strstr(dr->out.data, "<dynrec"), "dynrec's frames shown: %s", dr->out.data);
    e2e_assert_same(py, dr, "pytest with failing compiled tests");
}

Test(identical, compiled_modules_exit_like_python) {
    e2e_copy_script("compile_module.py");
    E2eProc *dr =
        e2e_same_as_python((const char *[]){"compile_module.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "compile_module.py");
    cr_assert_null(strstr(dr->err.data, "Exception ignored"), "stderr: %s", dr->err.data);
}

Test(identical, collector_runs_as_often_as_under_python) {
    e2e_copy_script("gc_schedule.py");
    E2eProc *dr =
        e2e_same_as_python((const char *[]){"gc_schedule.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "gc_schedule.py");
    cr_assert_not_null(strstr(dr->out.data, "collections by generation ["), "%s", dr->out.data);
}

Test(identical, lazy_modules_are_not_asked_for_names) {
    e2e_copy_script("lazy_modules.py");
    E2eProc *dr =
        e2e_same_as_python((const char *[]){"lazy_modules.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "lazy_modules.py");
    cr_assert_not_null(strstr(dr->out.data, "lazy module lookups: []"), "%s", dr->out.data);
}

Test(identical, inductor_generated_code_is_library_code) {
    if (!e2e_examples[0]) cr_skip_test("examples/ not found");
    e2e_copy_example("inductor_model.py");
    char *cache = e2e_path("inductor-cache");
    setenv("TORCHINDUCTOR_CACHE_DIR", cache, 1);
    E2eProc *dr =
        e2e_same_as_python((const char *[]){"inductor_model.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "inductor_model.py");
    E2eProc *show = e2e_run((const char *[]){e2e_bin, "show", "T.db", NULL});
    e2e_assert_exit(show, 0, "dynrec show");
    char *own = strstr(show->out.data, "the script's own code");
    cr_assert_not_null(own, "show: %s", show->out.data);
    char *end = strstr(own, "\n\n");
    if (end) *end = '\0';
    cr_assert_not_null(strstr(own, "inductor_model.py"), "own code: %s", own);
    cr_assert_null(strstr(own, "inductor-cache"), "inductor's code listed as own: %s", own);
}
