#define _GNU_SOURCE 1
/* test_hostile_values.c -- traces edited to attack `dynrec replay` and
 * `dynrec repro` through what a value tree or a capture may name.
 *
 * One real recording of tests/scripts/hostile/base.py is made per run of
 * the test binary (the first test to need it records it, under a lock, in
 * a directory shared by this run's tests and removed after them); each test
 * copies it, edits the copy with SQLite as a reviewer did, and replays it
 * without --trust.  Every payload would create a marker file in the test's
 * directory: the marker must not exist afterwards, and the exit status is
 * the documented one (replays run with --no-sandbox: see replay()):
 *   3  (not replayable) when the attacked frame is refused with a reason:
 *      a library function as the frame, a method of a class that does not
 *      define it, an object with a finalizer, a module that is a program;
 *   65 (bad data) when the tree is malformed: nested too deep, a dtype that
 *      is not a dtype (repro);
 *   0  when the attack is only dropped: a config key outside the allow-list
 *      (skipped with a note), a repro global named like a builtin (not
 *      rebound, with a note). */
/* The trace edits below are SQL spelled as string literals next to
 * macros (STR, ADD_STR, NODE), laid out by hand to read as SQL:
 * clang-format cannot lay them out stably, so it leaves this file alone. */
/* clang-format off */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2e_util.h"

TestSuite(hostile_values, .init = e2e_setup, .fini = e2e_teardown, .timeout = 300);

static E2eProc *sh(const char *cmd) {
    return e2e_run_in((const char *[]){"/bin/sh", "-c", cmd, NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* The directory of this run's shared recording: one per test runner. */
static char *shared_dir(void) {
    return e2e_fmt("%s/dynrec-hostile.%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                   (int)getppid());
}

/* Removes the shared recording once every test ran (in the runner). */
ReportHook(POST_ALL)(struct criterion_global_stats *stats) {
    (void)stats;
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/dynrec-hostile.%d'",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    if (system(cmd) != 0) { /* nothing to do: a temp directory left */
    }
}

/* The shared recording, made by the first test that needs it. */
static const char *shared_trace(void) {
    char *dir = shared_dir();
    mkdir(dir, 0700);
    int fd = open(e2e_fmt("%s/lock", dir), O_CREAT | O_RDWR, 0600);
    cr_assert_geq(fd, 0);
    cr_assert_eq(flock(fd, LOCK_EX), 0);
    char *trace = e2e_fmt("%s/t.db", dir);
    if (access(trace, F_OK) != 0) {
        size_t len = 0;
        char *src = e2e_slurp(e2e_fmt("%s/hostile/base.py", e2e_scripts), &len);
        cr_assert_not_null(src, "tests/scripts/hostile/base.py is missing");
        e2e_write_file(e2e_fmt("%s/base.py", dir), src, len);
        E2eProc *p = sh(e2e_fmt("cd '%s' && '%s' run -q -o t.tmp base.py >/dev/null && "
                                "mv t.tmp t.db", dir, e2e_bin));
        e2e_assert_exit(p, 0, e2e_fmt("recording base.py: %s", p->err.data));
    }
    flock(fd, LOCK_UN);
    close(fd);
    return trace;
}

#define STR(s) "(SELECT id FROM strings WHERE text = '" s "')"
#define ADD_STR(s) "INSERT INTO strings(id, text) SELECT max(id) + 1, '" s "' FROM strings " \
    "WHERE NOT EXISTS (SELECT 1 FROM strings WHERE text = '" s "');"
#define NODE(cond) "(SELECT node FROM value_nodes WHERE capture = 1 AND " cond ")"

/* A copy of the shared recording in the test's directory with sql (an
 * sqlite3_mprintf format: %Q quotes, which the compiler cannot check)
 * applied; returns its path. */
static char *hostile(const char *name, const char *fmt, ...) {
    size_t len = 0;
    char *data = e2e_slurp(shared_trace(), &len);
    cr_assert_not_null(data);
    char *copy = e2e_path(name);
    e2e_write_file(copy, data, len);
    va_list ap;
    va_start(ap, fmt);
    char *sql = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(copy, &db), SQLITE_OK);
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql, msg);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    sqlite3_free(sql);
    return copy;
}

static char *marker(void) { return e2e_path("marker"); }

static void assert_no_marker(const E2eProc *r) {
    cr_assert_neq(access(marker(), F_OK), 0, "the payload ran:\n%s%s", r->out.data, r->err.data);
}

/* `dynrec replay` without --trust, in the test's directory, unconfined:
 * the rules must hold without the sandbox (each layer holds alone), and
 * only unconfined could a payload that got through make the marker. */
static E2eProc *replay(const char *trace) {
    return sh(e2e_fmt("cd '%s' && '%s' replay --no-sandbox -o r.db '%s'", e2e_dir, e2e_bin, trace));
}

static void assert_not_replayable(const E2eProc *r, const char *why) {
    cr_assert_eq(r->status, 3 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->out.data, why), "want '%s':\n%s%s", why, r->out.data,
                       r->err.data);
}

/* The trace refused as malformed (exit 65) saying want, with no traceback. */
static void assert_malformed(const E2eProc *r, const char *want) {
    cr_assert_eq(r->status, 65 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->err.data, want), "want '%s':\n%s%s", want, r->out.data,
                       r->err.data);
    cr_assert_null(strstr(r->err.data, "Traceback"), "%s", r->err.data);
}

/* 1. The frame is a library function (subprocess.getoutput) with Dynamo
 * disabled in its recorded config: without the rules Dynamo skips it and
 * getoutput runs the trace's command. */
Test(hostile_values, library_function_as_the_frame_is_refused) {
    E2eProc *py = e2e_run((const char *[]){e2e_python, "-c", "import subprocess as s; c = "
                                           "s.getoutput.__code__; print(c.co_filename); "
                                           "print(c.co_firstlineno)", NULL});
    e2e_assert_exit(py, 0, py->err.data);
    char file[PATH_MAX];
    int line = 0;
    cr_assert_eq(sscanf(py->out.data, "%4095s %d", file, &line), 2, "%s", py->out.data);
    char *t = hostile(
        "lib.db",
        "INSERT INTO strings(id, text) SELECT max(id) + 1, %Q FROM strings;"
        ADD_STR("getoutput") ADD_STR("none") ADD_STR("builtins.NoneType")
        "UPDATE code_objects SET filename_id = (SELECT max(id) FROM strings WHERE text = %Q),"
        " qualname_id = " STR("getoutput") ", firstlineno = %d"
        " WHERE id = (SELECT code_id FROM events WHERE kind_id = " STR("capture") ");"
        "UPDATE strings SET text = json_set(text, '$.config', json('{\"disable\": \"True\"}'),"
        " '$.user_code', json('false'))"
        " WHERE id = (SELECT data_id FROM events WHERE kind_id = " STR("capture") ");"
        "UPDATE value_nodes SET value = json_set(value, '$.module', 'subprocess') WHERE node = 0;"
        "UPDATE value_nodes SET value = '\"cmd\"' WHERE value = '\"x\"';"
        "UPDATE value_nodes SET value = '\"encoding\"' WHERE value = '\"ns\"';"
        "UPDATE value_nodes SET kind_id = " STR("str") ", type_id = " STR("builtins.str") ","
        " value = json_quote(%Q), blob_id = NULL WHERE kind_id = " STR("tensor") ";"
        "UPDATE value_nodes SET kind_id = " STR("none") ", type_id = " STR("builtins.NoneType")
        ", value = NULL WHERE kind_id = " STR("object") ";"
        "INSERT INTO value_nodes VALUES (1, 100, " STR("str") ", " STR("builtins.str")
        ", '\"errors\"', NULL), (1, 101, " STR("none") ", " STR("builtins.NoneType") ", NULL, NULL);"
        "UPDATE value_nodes SET value = json_insert(value, '$[#]', json('[100, 101]'))"
        " WHERE node = 1;",
        file, file, line, e2e_fmt("touch '%s'", marker()));
    E2eProc *r = replay(t);
    assert_no_marker(r);
    assert_not_replayable(r, "its code is a library's");
}

/* 1a. A config patch (patch_dynamo_config's proxy) of a setting dynrec
 * never sets from a trace, or that this torch does not let it patch: the
 * frame is not replayable, never traced under it. */
Test(hostile_values, config_patch_outside_the_allow_list_is_refused) {
    static const char *const changes[] = {"{\"verify_correctness\": true}",
                                          "{\"suppress_errors\": true}"};
    for (int i = 0; i < 2; i++) {
        char *t = hostile(e2e_fmt("patch%d.db", i),
                          ADD_STR("config_patch")
                          ADD_STR("torch._dynamo.decorators.DynamoConfigPatchProxy")
                          "UPDATE value_nodes SET kind_id = " STR("config_patch") ", type_id = "
                          STR("torch._dynamo.decorators.DynamoConfigPatchProxy") ", value = %Q"
                          " WHERE kind_id = " STR("object") ";",
                          changes[i]);
        E2eProc *r = replay(t);
        assert_not_replayable(r, "patch_dynamo_config of ");
    }
}

/* 1c. A parametrized class (weight_norm's) over a class that is not a
 * torch.nn.Module: not made (parametrize's functions never run on it). */
Test(hostile_values, parametrized_class_over_a_plain_class_is_refused) {
    char *t = hostile("par.db",
                      "UPDATE value_nodes SET value = json_set(value, '$.class', json("
                      "'{\"module\": \"torch.nn.utils.parametrize\", \"qualname\":"
                      " \"ParametrizedNamespace\", \"parametrized\": {\"base\": {\"module\":"
                      " \"argparse\", \"qualname\": \"Namespace\"}, \"tensors\": [\"lr\"],"
                      " \"number\": 1}}')) WHERE kind_id = " STR("object") ";");
    E2eProc *r = replay(t);
    assert_not_replayable(r, "its base is not a torch.nn.Module class");
}

/* 1b. A user frame whose recorded config disables Dynamo: the key is not
 * one a trace may set; the frame replays and the note says why. */
Test(hostile_values, config_outside_the_allow_list_is_skipped) {
    char *t = hostile("cfg.db",
                      "UPDATE strings SET text = json_set(text, '$.config', json('{\"disable\":"
                      " \"True\", \"debug_dir_root\": \"%q\"}'))"
                      " WHERE id = (SELECT data_id FROM events WHERE kind_id = " STR("capture")
                      ");", e2e_path("dbg"));
    E2eProc *r = replay(t);
    cr_assert_eq(r->status, 0, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->out.data, "reproduced 1/1 compile"), "%s", r->out.data);
    DrTrace *b = e2e_open(e2e_path("r.db"));
    char *notes = e2e_meta(b, "replay.notes");
    cr_assert(notes && strstr(notes, "config disable") && strstr(notes, "config debug_dir_root"),
              "%s", notes ? notes : "(no notes)");
    cr_assert_neq(access(e2e_path("dbg"), F_OK), 0, "the debug directory was made");
}

/* The finalizer gadget's parts: an object of a stdlib class whose __del__
 * calls self.close(), with close a method node binding os.system to the
 * payload (MethodType(os.system, "touch marker")). */
#define GADGET_METHOD                                                                          \
    ADD_STR("method") ADD_STR("function") ADD_STR("types.MethodType")                          \
    ADD_STR("builtins.builtin_function_or_method")                                            \
    "UPDATE value_nodes SET kind_id = " STR("method") ", type_id = " STR("types.MethodType")   \
    ", value = '{\"self\": 100, \"func\": 101}' WHERE kind_id = " STR("float")                 \
    " AND value = '\"0.5\"';"                                                                  \
    "INSERT INTO value_nodes VALUES (1, 100, " STR("str") ", " STR("builtins.str")             \
    ", json_quote(%Q), NULL), (1, 101, " STR("function") ", "                                  \
    STR("builtins.builtin_function_or_method")                                                 \
    ", '{\"module\": \"posix\", \"qualname\": \"system\"}', NULL);"

/* 2. The whole gadget: never rebuilt, the marker never made. */
Test(hostile_values, finalizer_gadget_is_not_rebuilt) {
    char *t = hostile("gadget.db",
                      GADGET_METHOD
                      "UPDATE value_nodes SET value = '\"close\"' WHERE value = '\"lr\"';"
                      "UPDATE value_nodes SET value = json_set(value, '$.class', json("
                      "'{\"module\": \"tempfile\", \"qualname\": \"_TemporaryFileCloser\"}'))"
                      " WHERE kind_id = " STR("object") ";",
                      e2e_fmt("touch '%s'", marker()));
    E2eProc *r = replay(t);
    assert_no_marker(r);
    cr_assert_eq(r->status, 3 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert(strstr(r->out.data, "does not define it") || strstr(r->out.data, "finalizer"),
              "%s", r->out.data);
}

/* 2b. The method rule alone: a library function bound to a string is not a
 * method of str. */
Test(hostile_values, method_node_binds_only_what_the_class_defines) {
    char *t = hostile("method.db", GADGET_METHOD, e2e_fmt("touch '%s'", marker()));
    E2eProc *r = replay(t);
    assert_no_marker(r);
    assert_not_replayable(r, "whose class does not define it");
}

/* 2c. The object rule alone: a stdlib class with a finalizer is not rebuilt
 * from recorded state. */
Test(hostile_values, object_with_a_finalizer_needs_trust) {
    char *t = hostile("fin.db",
                      "UPDATE value_nodes SET value = json_set(value, '$.class', json("
                      "'{\"module\": \"tempfile\", \"qualname\": \"_TemporaryFileCloser\"}'))"
                      " WHERE kind_id = " STR("object") ";");
    E2eProc *r = replay(t);
    assert_not_replayable(r, "has a finalizer (__del__)");
}

/* 3. A module node naming unittest.__main__: importing it runs the test
 * files of the working directory (one here would make the marker). */
Test(hostile_values, module_node_never_imports) {
    char *test_file = e2e_fmt("open(%s, 'w').close()\n", e2e_fmt("'%s'", marker()));
    e2e_write_file(e2e_path("test_marker.py"), test_file, strlen(test_file));
    char *t = hostile("mod.db",
                      ADD_STR("pymodule") ADD_STR("builtins.module")
                      "UPDATE value_nodes SET kind_id = " STR("pymodule") ", type_id = "
                      STR("builtins.module") ", value = '\"unittest.__main__\"'"
                      " WHERE kind_id = " STR("float") " AND value = '\"2.0\"';");
    E2eProc *r = replay(t);
    assert_no_marker(r);
    assert_not_replayable(r, "unittest.__main__");
}

/* 4. A list nested 5000 deep: a clean refusal (65) naming the trace and the
 * capture, never a Python traceback. */
Test(hostile_values, deep_value_tree_is_malformed) {
    char *t = hostile("deep.db",
                      ADD_STR("list") ADD_STR("builtins.list") ADD_STR("int") ADD_STR("builtins.int")
                      "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c"
                      " WHERE i < 4999) INSERT INTO value_nodes SELECT 1, 1000 + i, "
                      STR("list") ", " STR("builtins.list") ", '[' || (1001 + i) || ']', NULL"
                      " FROM c;"
                      "INSERT INTO value_nodes VALUES (1, 6000, " STR("int") ", "
                      STR("builtins.int") ", '1', NULL);"
                      "UPDATE value_nodes SET kind_id = " STR("list") ", type_id = "
                      STR("builtins.list") ", value = '[1000]'"
                      " WHERE kind_id = " STR("float") " AND value = '\"2.0\"';");
    E2eProc *r = replay(t);
    cr_assert_eq(r->status, 65 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->err.data, ".db is malformed: capture 1 node"), "%s",
                       r->err.data);
    cr_assert_not_null(strstr(r->err.data, "nested deeper than 200"), "%s", r->err.data);
    cr_assert_null(strstr(r->err.data, "Traceback"), "%s", r->err.data);
}

/* 4a'. A weak container node of a class that is not one of weakref's
 * (WEAK_CLASSES: it would name any callable), or a weak dictionary over
 * something other than a dict: malformed, no traceback. */
Test(hostile_values, weak_container_of_another_class_is_malformed) {
    static const char *const values[] = {
        "json_object('class', 'Popen', 'items', json_array())",
        "json_object('class', 'WeakKeyDictionary', 'entries', " NODE("kind_id = " STR("str")) ")"};
    for (int i = 0; i < 2; i++) {
        char *t = hostile(e2e_fmt("weak%d.db", i),
                          ADD_STR("weak") "UPDATE value_nodes SET kind_id = " STR("weak")
                                          ", value = %s WHERE kind_id = " STR("float")
                                          " AND value = '\"2.0\"';",
                          values[i]);
        assert_malformed(replay(t), i == 0 ? "weak without a weak container class"
                                           : "a weak dictionary of something other than a dict");
    }
}

/* 4a''. An id node without its int, or naming its value by something other
 * than a node number: malformed, no traceback. */
Test(hostile_values, id_without_its_int_is_malformed) {
    static const char *const values[] = {"json_object('of', 1)", "json_object('of', 'x', 'int', 1)"};
    for (int i = 0; i < 2; i++) {
        char *t = hostile(e2e_fmt("id%d.db", i),
                          ADD_STR("id") "UPDATE value_nodes SET kind_id = " STR("id")
                                        ", value = %s WHERE kind_id = " STR("float")
                                        " AND value = '\"2.0\"';",
                          values[i]);
        assert_malformed(replay(t), "id without the value it is the id of");
    }
}

/* 4b. An object's slots naming an attribute that is not one of its class's
 * slots (__class__ would swap the object's class): malformed, nothing set. */
Test(hostile_values, slot_that_the_class_lacks_is_malformed) {
    char *t = hostile("slots.db",
                      "UPDATE value_nodes SET value = json_set(value, '$.slots', json("
                      "'{\"__class__\": ' || " NODE("kind_id = " STR("str")) " || '}'))"
                      " WHERE kind_id = " STR("object") ";");
    E2eProc *r = replay(t);
    cr_assert_eq(r->status, 65 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->err.data, "has no slot '__class__'"), "%s", r->err.data);
    cr_assert_null(strstr(r->err.data, "Traceback"), "%s", r->err.data);
}

/* 4b'. An object's or a tensor's ident that is not a positive int (it
 * names the object an earlier capture made): malformed, no traceback. */
Test(hostile_values, object_number_that_is_not_one_is_malformed) {
    static const char *const kinds[] = {"object", "tensor"};
    for (int i = 0; i < 2; i++) {
        char *t = hostile(e2e_fmt("ident%d.db", i),
                          "UPDATE value_nodes SET value = json_set(value, '$.ident', 'x')"
                          " WHERE kind_id = (SELECT id FROM strings WHERE text = %Q);",
                          kinds[i]);
        assert_malformed(replay(t), e2e_fmt("%s with a number that is not one", kinds[i]));
    }
}

/* 4b''. An autograd ctx node whose C attributes name one outside
 * AUTOGRAD_CTX_ATTRS (setattr on the ctx): malformed, no traceback. */
Test(hostile_values, autograd_ctx_attribute_not_known_is_malformed) {
    char *t = hostile("actx.db",
                      ADD_STR("autograd_ctx")
                      "UPDATE value_nodes SET kind_id = " STR("autograd_ctx") ", value = json_object("
                      "'function', json_object('module', 'torch', 'qualname', 'Tensor'), 'dict', "
                      NODE("kind_id = " STR("str")) ", 'c_attrs', json_object('__class__', "
                      NODE("kind_id = " STR("str")) ")) WHERE kind_id = " STR("object") ";");
    assert_malformed(replay(t), "autograd_ctx without its Function");
}

/* 4b'''''. A path node naming a class outside pathlib's (os.system) or
 * holding no text: malformed, nothing called, no traceback. */
Test(hostile_values, path_of_a_class_not_pathlibs_is_malformed) {
    static const char *const values[] = {"json('[\"system\", \"id\"]')",
                                         "json('[\"PosixPath\", 5]')"};
    for (int i = 0; i < 2; i++) {
        char *t = hostile(e2e_fmt("path%d.db", i),
                          ADD_STR("path")
                          "UPDATE value_nodes SET kind_id = " STR("path") ", value = %s"
                          " WHERE kind_id = " STR("object") ";",
                          values[i]);
        assert_malformed(replay(t), "path with a value of the wrong type");
    }
}

/* 4b'''''. A frame's backend_fn (a backend function a test defines, which
 * the replay calls as the backend) that is not a function the stored
 * sources define: a string here, as any value the tree can make (a
 * library function by reference would be called on the graph):
 * malformed, nothing compiled, no traceback. */
Test(hostile_values, backend_fn_that_is_not_a_stored_function_is_malformed) {
    char *t = hostile("backend_fn.db",
                      "UPDATE value_nodes SET value = json_set(value, '$.backend_fn', "
                      NODE("kind_id = " STR("str")) ") WHERE capture = 1 AND node = 0;");
    assert_malformed(replay(t), "a backend_fn that is not a function the stored sources define");
}

/* 4b''''. A subclass_tensor node whose class is not a traceable wrapper
 * subclass (torch.Tensor itself, or a class of any module: its
 * __tensor_unflatten__ would run whatever that is), or whose inner tensors
 * are named by a dunder: malformed, nothing called, no traceback. */
Test(hostile_values, subclass_tensor_of_a_class_not_a_traceable_subclass_is_malformed) {
    static const char *const cls[] = {"json_object('module', 'torch', 'qualname', 'Tensor')",
                                      "json_object('module', 'os', 'qualname', 'system')"};
    for (int i = 0; i < 2; i++) {
        char *t = hostile(e2e_fmt("subt%d.db", i),
                          ADD_STR("subclass_tensor")
                          "UPDATE value_nodes SET kind_id = " STR("subclass_tensor") ", value ="
                          " json_object('class', %s, 'inner_tensors', json_object('a', "
                          NODE("kind_id = " STR("str")) "), 'ctx', NULL, 'size', json('[2]'),"
                          " 'stride', json('[1]'), 'requires_grad', json('false'), 'leaf',"
                          " json('true')) WHERE kind_id = " STR("object") ";",
                          cls[i]);
        assert_malformed(replay(t), "not a traceable tensor subclass");
    }
    char *t = hostile("subt_dunder.db",
                      ADD_STR("subclass_tensor")
                      "UPDATE value_nodes SET kind_id = " STR("subclass_tensor") ", value ="
                      " json_object('class', json_object('module', 'torch', 'qualname', 'Tensor'),"
                      " 'inner_tensors', json_object('__class__', " NODE("kind_id = " STR("str"))
                      "), 'ctx', NULL, 'size', json('[2]'), 'stride', json('[1]'), 'requires_grad',"
                      " json('false'), 'leaf', json('true')) WHERE kind_id = " STR("object") ";");
    assert_malformed(replay(t), "subclass_tensor without its class, inner tensors");
}

/* 4b'''. A reference whose `classmethod` is not true (it takes the function
 * out of the method its name finds): malformed, no traceback. */
Test(hostile_values, reference_whose_classmethod_is_not_true_is_malformed) {
    char *t = hostile("clsmeth.db", "UPDATE value_nodes SET value = json_set(value, "
                                    "'$.class.classmethod', 'x') WHERE kind_id = " STR("object") ";");
    assert_malformed(replay(t), "a reference whose classmethod is not true");
}

/* 4c. A compiled wrapper of something that is not callable (a string):
 * malformed, torch.compile never called on it. */
Test(hostile_values, compiled_wrapper_of_a_string_is_malformed) {
    char *t = hostile("compiled.db",
                      ADD_STR("compiled")
                      "UPDATE value_nodes SET kind_id = " STR("compiled") ", value = json_object("
                      "'orig', " NODE("kind_id = " STR("str")) ", 'backend', NULL, 'fullgraph',"
                      " json('false'), 'dynamic', NULL, 'module', json('false'))"
                      " WHERE kind_id = " STR("object") ";");
    E2eProc *r = replay(t);
    cr_assert_eq(r->status, 65 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->err.data, "a compiled wrapper of something not callable"), "%s",
                       r->err.data);
    cr_assert_null(strstr(r->err.data, "Traceback"), "%s", r->err.data);
}

static E2eProc *repro(const char *trace);

/* 4d. An object's class_attrs naming a hook that runs on its own
 * (__init_subclass__, __del__, __getattr__), one the class statement makes
 * (__dict__) or a class that is not local to a function: malformed for
 * replay and repro alike (the one check of the tree), nothing set on any
 * class.  (Other dunders, such as the __call__ torch._dynamo.disable sets,
 * may be set.)  The same for the keys of method_attrs (the own attributes
 * of a local class's functions), which name a class attribute too. */
Test(hostile_values, class_attribute_that_is_not_a_local_plain_name_is_malformed) {
    static const char *const keys[] = {"T.f.<locals>.C.__init_subclass__", "Module.y",
                                       "T.f.<locals>.C.__del__", "T.f.<locals>.C.__getattr__",
                                       "T.f.<locals>.C.__dict__", "Module.forward",
                                       "T.f.<locals>.C.__set_name__"};
    for (int i = 0; i < 7; i++) {
        char *t = hostile(e2e_fmt("cattr%d.db", i),
                          "UPDATE value_nodes SET value = json_set(value, '$.%s',"
                          " json_object(%Q, " NODE("kind_id = " STR("str")) "))"
                          " WHERE kind_id = " STR("object") ";",
                          i < 5 ? "class_attrs" : "method_attrs", keys[i]);
        E2eProc *r = replay(t);
        cr_assert_eq(r->status, 65 << 8, "%s: exit %s:\n%s%s", keys[i],
                     e2e_status_text(r->status), r->out.data, r->err.data);
        cr_assert_not_null(strstr(r->err.data, "not a local class's plain name"), "%s",
                           r->err.data);
        cr_assert_null(strstr(r->err.data, "Traceback"), "%s", r->err.data);
        E2eProc *x = repro(t);
        cr_assert_eq(x->status, 65 << 8, "repro %s: exit %s:\n%s%s", keys[i],
                     e2e_status_text(x->status), x->out.data, x->err.data);
        cr_assert_null(strstr(x->err.data, "Traceback"), "%s", x->err.data);
    }
}

/* 4d'. An object's class_attrs naming _abc_impl, which a dynrec before
 * 0.7.5 recorded for a local abstract class (test_functions' TensorDict):
 * well formed, never set; the trace replays (it was refused as malformed,
 * exit 65, by 0.7.5). */
Test(hostile_values, class_attribute_an_older_dynrec_recorded_is_left_unset) {
    char *t = hostile("cattr_abc.db",
                      "UPDATE value_nodes SET value = json_set(value, '$.class_attrs',"
                      " json_object('T.f.<locals>.C._abc_impl', " NODE("kind_id = " STR("str")) "))"
                      " WHERE kind_id = " STR("object") ";");
    E2eProc *r = replay(t);
    cr_assert_eq(r->status, 0, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    E2eProc *x = repro(t);
    cr_assert_eq(x->status, 0, "repro: exit %s:\n%s%s", e2e_status_text(x->status), x->out.data,
                 x->err.data);
}

/* 4e. A capture's tls_exclude naming every dispatch key (63 bits on
 * this torch; the backend keys by name on another): the replay excludes
 * autograd's and the functionality keys above the backends only, never
 * CPU, BackendSelect or Python, so the compile still runs on CPU tensors
 * (its tensor guards without the autograd keys: a divergence, exit 1);
 * key names it does not allow are left out (the compile reproduces). */
Test(hostile_values, excluded_dispatch_keys_never_a_backend) {
    static const char *const values[] = {
        "json_object('raw', 9223372036854775807, 'torch',"
        " (SELECT value FROM meta WHERE key = 'torch_version'), 'keys', json_array())",
        "json_object('raw', 1, 'torch', '0.0', 'keys',"
        " json_array('CPU', 'BackendSelect', 'Dense', 'Undefined', '__class__', 7))"};
    for (int i = 0; i < 2; i++) {
        char *t = hostile(e2e_fmt("tls%d.db", i),
                          "UPDATE strings SET text = json_set(text, '$.global_state.tls_exclude',"
                          " %s) WHERE id IN (SELECT data_id FROM events WHERE kind_id ="
                          " " STR("capture") ");",
                          values[i]);
        E2eProc *r = replay(t);
        cr_assert_eq(r->status, (i == 0) << 8, "%d: exit %s:\n%s%s", i,
                     e2e_status_text(r->status), r->out.data, r->err.data);
        cr_assert_null(strstr(r->err.data, "Traceback"), "%s", r->err.data);
        DrTrace *b = e2e_open(e2e_path("r.db"));
        cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_compiles WHERE outcome = 'compiled'"),
                     1, "%d:\n%s%s", i, r->out.data, r->err.data);
        cr_assert_eq(e2e_sql_int(b, "SELECT count(*) FROM v_guards WHERE guard LIKE"
                                    " 'TENSOR_MATCH%%DispatchKeySet(CPU, BackendSelect%%'"),
                     1, "%d:\n%s", i, r->out.data);
        e2e_close(b);
        if (i == 1)
            cr_assert_not_null(strstr(r->out.data, "reproduced 1/1 compile"), "%s", r->out.data);
    }
}

/* 4f. torch.compiler.config's dynamic sources, which Dynamo matches with
 * re.match: a pattern that could backtrack for ever ((a+)+$, many *) is
 * not set, with a note; the compile replays. */
Test(hostile_values, source_patterns_that_could_backtrack_are_not_set) {
    static const char *const values[] = {"'(a+)+$'", "'L.*.*.*.*.*x'", "'L[x]|y'"};
    for (int i = 0; i < 3; i++) {
        char *t = hostile(e2e_fmt("pat%d.db", i),
                          "UPDATE strings SET text = json_set(text, '$.config.\"compiler.dynamic_"
                          "sources\"', %Q) WHERE id IN (SELECT data_id FROM events WHERE kind_id ="
                          " " STR("capture") ");",
                          values[i]);
        E2eProc *r = replay(t);
        cr_assert_eq(r->status, 0, "%s: exit %s:\n%s%s", values[i], e2e_status_text(r->status),
                     r->out.data, r->err.data);
        cr_assert_not_null(strstr(r->out.data, "config compiler.dynamic_sources from the trace is"
                                               " not one dynrec sets"),
                           "%s:\n%s", values[i], r->out.data);
    }
}

static E2eProc *repro(const char *trace) {
    return sh(e2e_fmt("cd '%s' && '%s' repro '%s' -o x.py", e2e_dir, e2e_bin, trace));
}

/* 4d. A function node whose marks name something other than Dynamo's
 * nonstrict_trace and leaf_function registries (a mark is what the replay
 * puts an id in): malformed for replay and repro, no registry touched. */
Test(hostile_values, function_marks_that_are_not_known_are_malformed) {
    char *t = hostile("marks.db",
                      ADD_STR("function")
                      "UPDATE value_nodes SET kind_id = " STR("function") ", value = json_object("
                      "'module', '__main__', 'qualname', 'f', 'marks',"
                      " json('[\"_disallowed_callable_ids\"]')) WHERE kind_id = " STR("object") ";");
    E2eProc *r = replay(t);
    cr_assert_eq(r->status, 65 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->err.data, "Dynamo marks that are not known ones"), "%s",
                       r->err.data);
    cr_assert_null(strstr(r->err.data, "Traceback"), "%s", r->err.data);
    E2eProc *x = repro(t);
    cr_assert_eq(x->status, 65 << 8, "repro: exit %s:\n%s%s", e2e_status_text(x->status),
                 x->out.data, x->err.data);
}


/* 5. repro: a frame global named print bound to os.system is not rebound,
 * nothing names posix, and trace text printed by the summary is escaped. */
Test(hostile_values, repro_never_rebinds_builtins) {
    char *t = hostile("print.db",
                      ADD_STR("function") ADD_STR("builtins.builtin_function_or_method")
                      "INSERT INTO value_nodes VALUES (1, 100, " STR("str") ", "
                      STR("builtins.str") ", '\"print\"', NULL), (1, 101, " STR("function") ", "
                      STR("builtins.builtin_function_or_method")
                      ", '{\"module\": \"posix\", \"qualname\": \"system\"}', NULL);"
                      "UPDATE value_nodes SET value = json_insert(value, '$[#]',"
                      " json('[100, 101]')) WHERE node = (SELECT json_extract(value,"
                      " '$.globals') FROM value_nodes WHERE capture = 1 AND node = 0);"
                      "UPDATE strings SET text = text || char(27) || ']0;x' || char(7)"
                      " WHERE text = '0/0';");
    E2eProc *r = repro(t);
    cr_assert_eq(r->status, 0, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    char *s = e2e_slurp(e2e_path("x.py"), NULL);
    cr_assert_not_null(s);
    cr_assert_null(strstr(s, "\nprint ="), "%s", s);
    cr_assert_null(strstr(s, "posix"), "%s", s);
    cr_assert_null(strchr(s, 27), "a raw escape in the script:\n%s", s);
    cr_assert_not_null(strstr(r->err.data, "global print of the frame is not rebound"), "%s",
                       r->err.data);
}

/* 5b. A dtype node naming a torch function (torch.load) is malformed. */
Test(hostile_values, repro_dtype_is_a_real_dtype) {
    char *t = hostile("dtype.db",
                      ADD_STR("dtype") ADD_STR("torch.dtype")
                      "UPDATE value_nodes SET kind_id = " STR("dtype") ", type_id = "
                      STR("torch.dtype") ", value = '\"torch.load\"'"
                      " WHERE kind_id = " STR("float") " AND value = '\"2.0\"';");
    E2eProc *r = repro(t);
    cr_assert_eq(r->status, 65 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->err.data, "dtype with a value of the wrong type"), "%s",
                       r->err.data);
    cr_assert_neq(access(e2e_path("x.py"), F_OK), 0, "a script was written");
}

/* Module state (capture_state, 0.7.1) a stranger wrote: a capture 99 for
 * compile 0/0 with the value rows given (node, kind, type, value). */
#define STATE_EVENT                                                                          \
    ADD_STR("capture_state") ADD_STR("frame") ADD_STR("list") ADD_STR("str")                 \
    ADD_STR("builtins.list") ADD_STR("builtins.str")                                         \
    "INSERT INTO events(seq, t_ns, thread, kind_id, code_id, compile_id, num)"               \
    " SELECT (SELECT max(seq) + 1 FROM events), t_ns, thread, " STR("capture_state") ","     \
    " code_id, compile_id, 99 FROM events WHERE kind_id = " STR("capture") " LIMIT 1;"
#define STATE_NODE(n, kind, type, value)                                                     \
    "INSERT INTO value_nodes(capture, node, kind_id, type_id, value) VALUES(99, " #n ", "    \
    STR(kind) ", " STR(type) ", '" value "');"

/* A state tree of the wrong shape stops the replay before anything runs. */
Test(hostile_values, module_state_of_the_wrong_shape_is_refused) {
    char *t = hostile("state.db", STATE_EVENT
                      STATE_NODE(0, "frame", "frame", "{\"module\": null, \"state\": 1}")
                      STATE_NODE(1, "str", "builtins.str", "\"x\""));
    E2eProc *r = replay(t);
    cr_assert_eq(r->status, 65 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->err.data, "module state without a list of attributes"), "%s",
                       r->err.data);
}

/* sys.path (a list, as the recorder stores registries) is never set from
 * a trace: the replay goes on and says so. */
Test(hostile_values, module_state_of_sys_is_never_set) {
    char *t = hostile("sys.db", STATE_EVENT ADD_STR("/evil/path") ADD_STR("sys") ADD_STR("path")
                      STATE_NODE(0, "frame", "frame", "{\"module\": null, \"state\": 1}")
                      STATE_NODE(1, "list", "builtins.list", "[2]")
                      STATE_NODE(2, "list", "builtins.list", "[3, 4, 5]")
                      STATE_NODE(3, "str", "builtins.str", "\"sys\"")
                      STATE_NODE(4, "str", "builtins.str", "\"path\"")
                      STATE_NODE(5, "list", "builtins.list", "[6]")
                      STATE_NODE(6, "str", "builtins.str", "\"/evil/path\""));
    E2eProc *r = replay(t);
    cr_assert_eq(r->status, 0, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    DrTrace *b = e2e_open(e2e_path("r.db"));
    char *notes = e2e_meta(b, "replay.notes");
    cr_assert_not_null(notes);
    cr_assert_not_null(strstr(notes, "sys.path is not set: dynrec never sets state of sys"),
                       "%s", notes);
    e2e_close(b);
}

/* The tensor x made a torch.func wrapper, in a capture that says it ran
 * inside a functionalize: FUNC_STACK sets the stack, WRAP(n, inner) makes
 * node n a functionalize wrapper at level 1 around node inner. */
#define FUNC_STACK                                                                             \
    ADD_STR("wrapped_tensor")                                                                  \
    "UPDATE strings SET text = json_set(text, '$.functorch', json('[\"Functionalize\"]'),"     \
    " '$.functorch_stack', json('[{\"type\": \"Functionalize\", \"level\": 1,"                \
    " \"add_back_views\": true}]'))"                                                           \
    " WHERE id = (SELECT data_id FROM events WHERE kind_id = " STR("capture") ");"
#define COPY_TENSOR(n)                                                                         \
    "INSERT INTO value_nodes SELECT capture, " #n ", kind_id, type_id, value, blob_id"         \
    " FROM value_nodes WHERE capture = 1 AND node < 100 AND kind_id = " STR("tensor") ";"
#define WRAP(n, inner)                                                                         \
    "UPDATE value_nodes SET kind_id = " STR("wrapped_tensor") ", value = '{\"transform\":"    \
    " \"Functionalize\", \"level\": 1, \"inner\": " #inner "}', blob_id = NULL WHERE"          \
    " capture = 1 AND node = " #n ";"

/* A wrapper around a wrapper of the same level (a functionalize tensor of
 * a functionalize tensor) is malformed; the transforms the replay entered
 * are left as the replay stops, and it exits 65, never crashing at exit. */
Test(hostile_values, torch_func_wrapper_at_its_own_level_is_malformed) {
    char *t = hostile("ft.db", FUNC_STACK COPY_TENSOR(100) COPY_TENSOR(101) WRAP(100, 101)
                      "UPDATE value_nodes SET kind_id = " STR("wrapped_tensor") ", value ="
                      " '{\"transform\": \"Functionalize\", \"level\": 1, \"inner\": 100}',"
                      " blob_id = NULL WHERE capture = 1 AND kind_id = " STR("tensor")
                      " AND node < 100;");
    E2eProc *r = replay(t);
    cr_assert_eq(r->status, 65 << 8, "exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->err.data, "a torch.func wrapper at level 1 around one at"
                                           " level 1"),
                       "%s", r->err.data);
}

/* A wrapped tensor in a capture that ran inside no transform, and a
 * transform stack naming one replay does not enter: not replayable, with
 * why. */
Test(hostile_values, torch_func_wrapper_outside_its_transform_is_refused) {
    char *t = hostile("ft1.db", ADD_STR("wrapped_tensor") COPY_TENSOR(100)
                      "UPDATE value_nodes SET kind_id = " STR("wrapped_tensor") ", value ="
                      " '{\"transform\": \"Vmap\", \"bdim\": 0, \"level\": 1, \"inner\": 100}',"
                      " blob_id = NULL WHERE capture = 1 AND kind_id = " STR("tensor")
                      " AND node < 100;");
    assert_not_replayable(replay(t), "a tensor of torch.func's vmap at level 1, which the"
                                     " compile did not run inside");
    t = hostile("ft2.db",
                "UPDATE strings SET text = json_set(text, '$.functorch_stack', json('[{\"type\":"
                " \"Jvp\", \"level\": 1}]')) WHERE id = (SELECT data_id FROM events WHERE"
                " kind_id = " STR("capture") ");");
    assert_not_replayable(replay(t), "compiled inside torch.func's Jvp: the replay enters vmap,"
                                     " grad, functionalize only");
}
