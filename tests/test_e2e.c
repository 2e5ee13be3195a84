#define _GNU_SOURCE 1
/* test_e2e.c -- end-to-end tests: the real dynrec binary on real scripts.
 *
 * Each test gets a fresh mkdtemp directory, copies the scripts it needs
 * from tests/scripts/ into it and runs children there: `dynrec run` next to
 * the same command under plain python, comparing stdout, stderr and the wait
 * status byte for byte, then reading the trace through the reader API
 * (dr_trace_open, SQL on the v_* views).  Signals are sent the way a user
 * or a job control system would, and plain python is put through the same
 * to learn what "the same" means instead of assuming it.
 *
 * The machinery (children, files, traces, the fixture and the environment
 * it reads: DYNREC_BIN, DYNREC_PYTHON, DYNREC_ASAN) is in e2e_util.c,
 * shared with test_dynamo.c. */
#include <criterion/criterion.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_util.h"

TestSuite(e2e, .init = e2e_setup, .fini = e2e_teardown, .timeout = 240);

/* ---- 1, 2: the same as plain python ------------------------------------ */

Test(e2e, argv_name_path_and_file_match_python) {
    e2e_copy_script("argv_info.py");
    /* Options of dynrec's own after the script belong to the script; a
     * non-ASCII argument ("héllo" in UTF-8) is decoded as python does. */
    const char *args[] = {"argv_info.py", "-q", "--all-frames", "a b", "-o", "h\xc3\xa9llo", NULL};
    E2eProc *dr = e2e_same_as_python(args, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "argv_info.py");
    char *want = e2e_fmt("argv ['argv_info.py', '-q', '--all-frames', 'a b', '-o', "
                         "'h\xc3\xa9llo']\nname __main__\npath0 %s\nfile %s/argv_info.py\n",
                         e2e_dir, e2e_dir);
    cr_assert_str_eq(dr->out.data, want);
    e2e_close(e2e_check_trace("T.db", 0,
                              "[\"-q\", \"--all-frames\", \"a b\", \"-o\", \"h\xc3\xa9llo\"]",
                              "argv_info.py", NULL));
}

Test(e2e, sys_exit_zero_matches_python) {
    e2e_copy_script("exit_with.py");
    E2eProc *dr =
        e2e_same_as_python((const char *[]){"exit_with.py", "0", NULL}, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "sys.exit(0)");
    cr_assert_str_eq(dr->out.data, "exiting with 0\n");
    e2e_close(e2e_check_trace("T.db", 0, "[\"0\"]", "exit_with.py", NULL));
}

Test(e2e, sys_exit_seven_matches_python) {
    e2e_copy_script("exit_with.py");
    E2eProc *dr =
        e2e_same_as_python((const char *[]){"exit_with.py", "7", NULL}, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 7, "sys.exit(7)");
    e2e_close(e2e_check_trace("T.db", 7, "[\"7\"]", "exit_with.py", NULL));
}

/* The shell sees sys.exit(256) as status 0 (only the low 8 bits survive);
 * the trace must record the status the run really ended with. */
Test(e2e, sys_exit_256_records_the_status_the_parent_sees) {
    e2e_copy_script("exit_with.py");
    E2eProc *dr =
        e2e_same_as_python((const char *[]){"exit_with.py", "256", NULL}, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "sys.exit(256)");
    e2e_close(e2e_check_trace("T.db", 0, "[\"256\"]", "exit_with.py", NULL));
}

Test(e2e, sys_exit_message_matches_python) {
    e2e_copy_script("exit_with.py");
    E2eProc *dr = e2e_same_as_python((const char *[]){"exit_with.py", "giving up: no input", NULL},
                                     NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 1, "sys.exit(message)");
    cr_assert_str_eq(dr->err.data, "giving up: no input\n");
    e2e_close(e2e_check_trace("T.db", 1, "[\"giving up: no input\"]", "exit_with.py", NULL));
}

Test(e2e, uncaught_exception_traceback_matches_python) {
    e2e_copy_script("uncaught.py");
    E2eProc *dr = e2e_same_as_python((const char *[]){"uncaught.py", NULL}, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 1, "uncaught exception");
    cr_assert_not_null(strstr(dr->err.data, "Traceback (most recent call last):"));
    cr_assert_not_null(strstr(dr->err.data, "ValueError: invalid literal for int()"));
    cr_assert_not_null(strstr(dr->err.data, "RuntimeError: cannot parse 'not a number'"));
    e2e_close(e2e_check_trace("T.db", 1, "[]", "uncaught.py", NULL));
}

Test(e2e, stdin_lines_match_python) {
    e2e_copy_script("stdin_lines.py");
    const char *in = "first line\nsecond\n\nlast without newline";
    E2eProc *dr = e2e_same_as_python((const char *[]){"stdin_lines.py", NULL}, in, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "stdin_lines.py");
    cr_assert_str_eq(dr->out.data, "1: FIRST LINE\n2: SECOND\n3: \n4: LAST WITHOUT NEWLINE\n");
    cr_assert_str_eq(dr->err.data, "lines: 4\n");
    e2e_close(e2e_check_trace("T.db", 0, "[]", "stdin_lines.py", NULL));
}

Test(e2e, module_in_package_matches_python) {
    e2e_copy_script("pkg/__init__.py");
    e2e_copy_script("pkg/mod.py");
    E2eProc *dr =
        e2e_same_as_python((const char *[]){"-m", "pkg.mod", "a", "b", NULL}, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "-m pkg.mod");
    char *want = e2e_fmt("argv ['%s/pkg/mod.py', 'a', 'b']\nname __main__\nspec pkg.mod\n"
                         "path0 %s\n",
                         e2e_dir, e2e_dir);
    cr_assert_str_eq(dr->out.data, want);
    DrTrace *t = e2e_check_trace("T.db", 0, "[\"a\", \"b\"]", NULL, "pkg.mod");
    /* A module's source is recorded at the end, under role 'main'. */
    char *path = e2e_sql(t, "SELECT path FROM v_files WHERE role = 'main'");
    cr_assert(path && strcmp(path, e2e_fmt("%s/pkg/mod.py", e2e_dir)) == 0,
              "no 'main' file for -m pkg.mod (got %s)", path);
    e2e_close(t);
}

Test(e2e, missing_module_matches_python) {
    E2eProc *dr = e2e_same_as_python((const char *[]){"-m", "no_such_module_e2e", NULL}, NULL,
                                     E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 1, "-m no_such_module_e2e");
    cr_assert_not_null(strstr(dr->err.data, "No module named no_such_module_e2e"));
    e2e_close(e2e_check_trace("T.db", 1, "[]", NULL, "no_such_module_e2e"));
}

/* `python DIR` runs DIR/__main__.py; so must `dynrec run DIR`. */
Test(e2e, directory_with_main_matches_python) {
    e2e_copy_script("app/__main__.py");
    E2eProc *dr = e2e_same_as_python((const char *[]){"app", "x", NULL}, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "app/__main__.py");
    cr_assert_str_eq(dr->out.data, "argv ['app', 'x']\nname __main__\n");
    DrTrace *t = e2e_check_trace("T.db", 0, "[\"x\"]", NULL, NULL);
    char *s = e2e_meta(t, "script");
    cr_assert(s && strcmp(s, "app") == 0, "meta script %s", s);
    e2e_close(t);
}

/* A child made by os.fork() ends with sys.exit, running the C exit handlers
 * it inherited: it must neither end nor damage its parent's recording. */
Test(e2e, forked_child_leaves_the_parent_recording_alone) {
    e2e_copy_script("fork_child.py");
    E2eProc *py = e2e_run((const char *[]){e2e_python, "fork_child.py", NULL});
    E2eProc *dr = e2e_run((const char *[]){e2e_bin, "run", "-q", "--all-frames", "-o", "T.db",
                                           "fork_child.py", NULL});
    e2e_assert_same(py, dr, "fork_child.py");
    e2e_assert_exit(dr, 0, "fork_child.py");
    cr_assert_str_eq(dr->out.data, "child\nparent saw 3\n100000\n");
    DrTrace *t = e2e_check_trace("T.db", 0, "[]", "fork_child.py", NULL);
    char *pid = e2e_meta(t, "pid");
    cr_assert(pid && atoll(pid) == (long long)dr->pid, "meta pid %s, dynrec was %d", pid,
              (int)dr->pid);
    cr_assert_eq(e2e_calls(t, "fork_child.py", "work"), 100000);
    e2e_close(t);
}

/* ---- 3: torch ---------------------------------------------------------- */

Test(e2e, torch_compile_eager_matches_python_and_is_counted) {
    e2e_copy_script("torch_compile.py");
    E2eProc *dr =
        e2e_same_as_python((const char *[]){"torch_compile.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "torch_compile.py");
    DrTrace *t = e2e_check_trace("T.db", 0, "[]", "torch_compile.py", NULL);
    /* The torch the script printed is the one the trace names (2.13.0 in
     * the project's venv; others under tools/compat.sh). */
    char *tv = e2e_meta(t, "torch_version");
    cr_assert(tv && strncmp(tv, "2.1", 3) == 0, "torch_version %s", tv);
    cr_assert(strncmp(dr->out.data, e2e_fmt("torch %s\n", tv), strlen(tv) + 7) == 0, "stdout:\n%s",
              dr->out.data);
    char *hook = e2e_meta(t, "hook.set_eval_frame");
    cr_assert(hook && strcmp(hook, "active") == 0, "hook.set_eval_frame %s", hook);
    char *installs = e2e_meta(t, "hook.installs");
    cr_assert(installs && atoll(installs) > 0, "hook.installs %s", installs);
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_frame_counts"), 0,
                 "no frames counted while Dynamo was active");
    /* The compiled function's own frames reached the hook under Dynamo. */
    cr_assert_gt(e2e_calls(t, "torch_compile.py", "f"), 0, "f was not counted");
    e2e_close(t);
}

/* ---- 4: frame counts without torch ------------------------------------- */

Test(e2e, no_frames_counted_without_dynamo) {
    e2e_copy_script("count_calls.py");
    E2eProc *dr =
        e2e_run((const char *[]){e2e_bin, "run", "-q", "-o", "T.db", "count_calls.py", NULL});
    e2e_assert_exit(dr, 0, "count_calls.py");
    cr_assert_str_eq(dr->out.data, "100000\n");
    DrTrace *t = e2e_check_trace("T.db", 0, "[]", "count_calls.py", NULL);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_frame_counts"), 0,
                 "frames were counted although Dynamo never ran");
    char *mode = e2e_meta(t, "hook.frame");
    cr_assert(mode && strcmp(mode, "while-dynamo") == 0, "hook.frame %s", mode);
    e2e_close(t);
}

Test(e2e, all_frames_counts_every_call) {
    e2e_copy_script("count_calls.py");
    E2eProc *dr = e2e_run((const char *[]){e2e_bin, "run", "-q", "--all-frames", "-o", "T.db",
                                           "count_calls.py", NULL});
    e2e_assert_exit(dr, 0, "count_calls.py --all-frames");
    cr_assert_str_eq(dr->out.data, "100000\n");
    DrTrace *t = e2e_check_trace("T.db", 0, "[]", "count_calls.py", NULL);
    cr_assert_eq(e2e_calls(t, "count_calls.py", "tick"), 100000);
    cr_assert_eq(e2e_calls(t, "count_calls.py", "<module>"), 1);
    char *mode = e2e_meta(t, "hook.frame");
    cr_assert(mode && strcmp(mode, "all-frames") == 0, "hook.frame %s", mode);
    e2e_close(t);
}

/* ---- 5, 6, 7: signals -------------------------------------------------- */

Test(e2e, sigkill_leaves_an_incomplete_but_readable_trace) {
    e2e_copy_script("spin.py");
    E2eProc *dr = e2e_spawn(
        (const char *[]){e2e_bin, "run", "-q", "--all-frames", "-o", "T.db", "spin.py", NULL},
        NULL);
    char *trace = e2e_path("T.db");
    long long seen = 0;
    DrError err = {0};
    int64_t deadline = e2e_now_ms() + 10000;
    while (seen <= 0 && e2e_now_ms() < deadline) {
        e2e_sleep_ms(100);
        pid_t w = waitpid(dr->pid, &dr->status, WNOHANG);
        if (w == dr->pid) dr->reaped = 1;
        cr_assert_eq(w, 0, "dynrec ended early: %s\nstderr:\n%s", e2e_status_text(dr->status),
                     dr->err.data);
        DrTrace *t = e2e_try_open(trace, &err);
        if (!t) continue; /* not created yet, or caught mid-write: err says */
        cr_assert_eq(dr_trace_is_complete(t), 0, "a running trace claims to be complete");
        seen = e2e_calls(t, "spin.py", "spin_once");
        e2e_close(t);
    }
    cr_assert_gt(seen, 0, "spin_once never showed up in the live trace within 10 s (%s)",
                 err.msg[0] ? err.msg : "it opened");
    cr_assert_eq(kill(dr->pid, SIGKILL), 0);
    e2e_wait(dr, E2E_TIMEOUT_MS);
    cr_assert(WIFSIGNALED(dr->status) && WTERMSIG(dr->status) == SIGKILL, "ended with %s",
              e2e_status_text(dr->status));
    DrTrace *t = e2e_open(trace);
    cr_assert_eq(dr_trace_is_complete(t), 0, "a killed run's trace claims to be complete");
    long long after = e2e_calls(t, "spin.py", "spin_once");
    cr_assert_geq(after, seen, "count went from %lld to %lld", seen, after);
    cr_assert_null(e2e_meta(t, "exit_status"));
    e2e_close(t);
    /* show reads it and says it was cut short. */
    E2eProc *show = e2e_run((const char *[]){e2e_bin, "show", "T.db", NULL});
    e2e_assert_exit(show, 0, "dynrec show on a killed run's trace");
    cr_assert_not_null(strcasestr(show->out.data, "incomplete"), "show:\n%s", show->out.data);
    cr_assert_not_null(strstr(show->out.data, "spin_once"), "show:\n%s", show->out.data);
}

/* Waits until pid's main thread is blocked (state S in /proc/pid/stat).
 * After "ready" the only place the script blocks is time.sleep, so a
 * KeyboardInterrupt then always comes from the same line: sent a moment
 * earlier, it could come out of print() in one run and not the other. */
static void e2e_wait_blocked(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int64_t deadline = e2e_now_ms() + 10000;
    while (e2e_now_ms() < deadline) {
        FILE *f = fopen(path, "r");
        if (!f) return; /* no /proc: rely on the time it took to get here */
        char line[1024];
        char *got = fgets(line, sizeof line, f);
        fclose(f);
        const char *close_paren = got ? strrchr(line, ')') : NULL;
        if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'S') return;
        e2e_sleep_ms(2);
    }
    cr_assert_fail("e2e: process %d never went to sleep", (int)pid);
}

/* Starts argv, waits for "ready" on its stdout and for the script to sleep,
 * sends sig, and waits for the process to end. */
static E2eProc *e2e_signal_after_ready(const char *const *argv, int sig) {
    E2eProc *p = e2e_spawn(argv, NULL);
    int r = e2e_pump(p, e2e_now_ms() + E2E_TIMEOUT_MS, "ready\n");
    cr_assert_eq(r, 1, "%s never said ready\nstdout:\n%s\nstderr:\n%s", argv[0], p->out.data,
                 p->err.data);
    e2e_wait_blocked(p->pid);
    cr_assert_eq(kill(p->pid, sig), 0);
    e2e_wait(p, E2E_TIMEOUT_MS);
    return p;
}

Test(e2e, sigterm_kills_like_python_and_completes_the_trace) {
    e2e_copy_script("ready_sleep.py");
    E2eProc *py =
        e2e_signal_after_ready((const char *[]){e2e_python, "ready_sleep.py", NULL}, SIGTERM);
    E2eProc *dr = e2e_signal_after_ready(
        (const char *[]){e2e_bin, "run", "-q", "-o", "T.db", "ready_sleep.py", NULL}, SIGTERM);
    cr_assert(WIFSIGNALED(py->status) && WTERMSIG(py->status) == SIGTERM, "python: %s",
              e2e_status_text(py->status));
    cr_assert(WIFSIGNALED(dr->status) && WTERMSIG(dr->status) == SIGTERM,
              "dynrec run: %s\nstderr:\n%s", e2e_status_text(dr->status), dr->err.data);
    e2e_assert_same(py, dr, "ready_sleep.py + SIGTERM");
    DrTrace *t = e2e_open(e2e_path("T.db"));
    cr_assert_eq(dr_trace_is_complete(t), 1, "trace of a SIGTERMed run is not complete");
    char *sig = e2e_meta(t, "exit_signal");
    cr_assert(sig && atoi(sig) == SIGTERM, "exit_signal %s", sig);
    e2e_close(t);
}

Test(e2e, sigint_raises_keyboardinterrupt_like_python) {
    e2e_copy_script("ready_sleep.py");
    E2eProc *py =
        e2e_signal_after_ready((const char *[]){e2e_python, "ready_sleep.py", NULL}, SIGINT);
    E2eProc *dr = e2e_signal_after_ready(
        (const char *[]){e2e_bin, "run", "-q", "-o", "T.db", "ready_sleep.py", NULL}, SIGINT);
    /* What python does: a KeyboardInterrupt traceback, then death by SIGINT. */
    cr_assert(WIFSIGNALED(py->status) && WTERMSIG(py->status) == SIGINT, "python: %s",
              e2e_status_text(py->status));
    cr_assert_not_null(strstr(py->err.data, "KeyboardInterrupt"), "python stderr:\n%s",
                       py->err.data);
    e2e_assert_same(py, dr, "ready_sleep.py + SIGINT");
    DrTrace *t = e2e_open(e2e_path("T.db"));
    cr_assert_eq(dr_trace_is_complete(t), 1, "trace of a SIGINTed run is not complete");
    char *sig = e2e_meta(t, "exit_signal");
    cr_assert(sig && atoi(sig) == SIGINT, "exit_signal %s", sig);
    e2e_close(t);
}

/* ---- 8: trace names ---------------------------------------------------- */

/* The file named by dynrec's "trace written to X" line (owned). */
static char *e2e_written_to(const E2eProc *p) {
    const char *tag = "dynrec: trace written to ";
    const char *at = strstr(p->err.data, tag);
    cr_assert_not_null(at, "no '%s' on stderr:\n%s", tag, p->err.data);
    at += strlen(tag);
    const char *nl = strchr(at, '\n');
    cr_assert_not_null(nl);
    return e2e_fmt("%.*s", (int)(nl - at), at);
}

Test(e2e, default_trace_names_never_replace_each_other) {
    e2e_copy_script("argv_info.py");
    const char *argv[] = {e2e_bin, "run", "argv_info.py", NULL};
    E2eProc *a = e2e_run(argv);
    E2eProc *b = e2e_run(argv);
    e2e_assert_exit(a, 0, "first run");
    e2e_assert_exit(b, 0, "second run");
    char *na = e2e_written_to(a), *nb = e2e_written_to(b);
    cr_assert_str_neq(na, nb, "both runs wrote %s", na);
    /* The message is the whole of what dynrec adds to stderr. */
    cr_assert_str_eq(a->err.data, e2e_fmt("dynrec: trace written to %s\n", na));
    int n = 0;
    char *dbs = e2e_list(".db", &n);
    cr_assert_eq(n, 2, "wanted two traces, found:\n%s", dbs);
    cr_assert_not_null(strstr(dbs, na));
    cr_assert_not_null(strstr(dbs, nb));
    cr_assert(strncmp(na, "argv_info-", 10) == 0, "default name %s", na);
    int side = 0;
    e2e_list("-wal", &side);
    cr_assert_eq(side, 0, "a finished trace left its -wal file");
    e2e_close(e2e_check_trace(na, 0, "[]", "argv_info.py", NULL));
    e2e_close(e2e_check_trace(nb, 0, "[]", "argv_info.py", NULL));

    /* -q: the same run, silent, still writes a third trace. */
    E2eProc *q = e2e_run((const char *[]){e2e_bin, "run", "-q", "argv_info.py", NULL});
    e2e_assert_exit(q, 0, "quiet run");
    cr_assert_str_eq(q->err.data, "", "-q still printed:\n%s", q->err.data);
    cr_assert_str_eq(q->out.data, a->out.data);
    e2e_list(".db", &n);
    cr_assert_eq(n, 3);
}

Test(e2e, output_option_replaces_an_existing_file) {
    e2e_copy_script("argv_info.py");
    const char junk[] = "not a trace, to be replaced\n";
    e2e_write_file(e2e_path("existing.db"), junk, sizeof junk - 1);
    E2eProc *p =
        e2e_run((const char *[]){e2e_bin, "run", "-o", "existing.db", "argv_info.py", "new", NULL});
    e2e_assert_exit(p, 0, "run -o existing.db");
    cr_assert_str_eq(p->err.data, "dynrec: trace written to existing.db\n");
    e2e_close(e2e_check_trace("existing.db", 0, "[\"new\"]", "argv_info.py", NULL));
    /* And an earlier trace there is replaced, not appended to. */
    p = e2e_run(
        (const char *[]){e2e_bin, "run", "-q", "-o", "existing.db", "argv_info.py", "newer", NULL});
    e2e_assert_exit(p, 0, "second run -o existing.db");
    e2e_close(e2e_check_trace("existing.db", 0, "[\"newer\"]", "argv_info.py", NULL));
    int n = 0;
    e2e_list(".db", &n);
    cr_assert_eq(n, 1);
}

/* ---- 9: dynrec show ---------------------------------------------------- */

Test(e2e, show_summarises_a_good_trace) {
    e2e_copy_script("count_calls.py");
    E2eProc *r = e2e_run((const char *[]){e2e_bin, "run", "-q", "--all-frames", "-o", "T.db",
                                          "count_calls.py", NULL});
    e2e_assert_exit(r, 0, "count_calls.py");
    E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", "T.db", NULL});
    e2e_assert_exit(s, 0, "dynrec show");
    cr_assert_not_null(strstr(s->out.data, "complete"), "show:\n%s", s->out.data);
    cr_assert_null(strcasestr(s->out.data, "incomplete"), "show:\n%s", s->out.data);
    cr_assert_not_null(strstr(s->out.data, "count_calls.py"), "show:\n%s", s->out.data);
    cr_assert_not_null(strstr(s->out.data, "tick"), "top code objects lack tick:\n%s", s->out.data);
    cr_assert_str_eq(s->err.data, "");

    E2eProc *j = e2e_run((const char *[]){e2e_bin, "show", "--json", "T.db", NULL});
    e2e_assert_exit(j, 0, "dynrec show --json");
    cr_assert_not_null(strstr(j->out.data, "\"complete\": true"), "json:\n%s", j->out.data);
    E2eProc *parse =
        e2e_run_in((const char *[]){e2e_python, "-c",
                                    "import json,sys; d = json.load(sys.stdin); "
                                    "assert d['complete'] is True, d; "
                                    "assert any(c['qualname'] == 'tick' and c['calls'] == 100000 "
                                    "for c in d['top_code']), d['top_code']",
                                    NULL},
                   j->out.data, E2E_TIMEOUT_MS);
    e2e_assert_exit(parse, 0, "show --json output through json.load");
}

/* `dynrec show file` must exit 65 with one stderr line naming the file. */
static void e2e_assert_bad_trace(const char *name, const char *what) {
    E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", name, NULL});
    e2e_assert_exit(s, 65, what);
    cr_assert_str_eq(s->out.data, "", "%s: stdout:\n%s", what, s->out.data);
    size_t len = strlen(s->err.data);
    cr_assert(len > 1 && s->err.data[len - 1] == '\n' && !memchr(s->err.data, '\n', len - 1),
              "%s: wanted one stderr line, got:\n%s", what, s->err.data);
    cr_assert_not_null(strstr(s->err.data, name), "%s: message does not name %s:\n%s", what, name,
                       s->err.data);
}

Test(e2e, show_refuses_bad_files_with_65) {
    e2e_assert_bad_trace("missing.db", "a missing file");

    const char text[] = "this is a text file, not a trace\n";
    e2e_write_file(e2e_path("text.db"), text, sizeof text - 1);
    e2e_assert_bad_trace("text.db", "a text file");

    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(e2e_path("plain.db"), &db), SQLITE_OK);
    cr_assert_eq(
        sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);", NULL, NULL, NULL),
        SQLITE_OK);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    e2e_assert_bad_trace("plain.db", "a plain sqlite database");

    e2e_write_file(e2e_path("empty.db"), "", 0);
    e2e_assert_bad_trace("empty.db", "an empty file");
    cr_assert_eq(mkdir(e2e_path("dir.db"), 0755), 0);
    e2e_assert_bad_trace("dir.db", "a directory");

    e2e_copy_script("argv_info.py");
    E2eProc *r =
        e2e_run((const char *[]){e2e_bin, "run", "-q", "-o", "half.db", "argv_info.py", NULL});
    e2e_assert_exit(r, 0, "argv_info.py");
    size_t len = 0;
    char *good = e2e_slurp(e2e_path("half.db"), &len);
    cr_assert_not_null(good);
    e2e_write_file(e2e_path("new.db"), good, len);
    cr_assert_eq(sqlite3_open(e2e_path("new.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    e2e_assert_bad_trace("new.db", "a trace of a newer schema");

    struct stat st;
    cr_assert_eq(stat(e2e_path("half.db"), &st), 0);
    cr_assert_gt(st.st_size, 4096, "the trace is too small to cut in half meaningfully");
    cr_assert_eq(truncate(e2e_path("half.db"), st.st_size / 2), 0);
    e2e_assert_bad_trace("half.db", "a trace truncated to half");
}

/* ---- 10: the command line ---------------------------------------------- */

Test(e2e, help_goes_to_stdout_with_status_0) {
    const char *const cmds[][4] = {{"--help"}, {"-h"}, {"run", "--help"}, {"show", "--help"}};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        const char *argv[5] = {e2e_bin, cmds[i][0], cmds[i][1], NULL, NULL};
        E2eProc *p = e2e_run(argv);
        e2e_assert_exit(p, 0, cmds[i][0]);
        cr_assert_not_null(strstr(p->out.data, "usage: dynrec"), "%s %s:\n%s", cmds[i][0],
                           cmds[i][1] ? cmds[i][1] : "", p->out.data);
        cr_assert_str_eq(p->err.data, "");
    }
}

Test(e2e, version_names_every_component) {
    E2eProc *p = e2e_run((const char *[]){e2e_bin, "--version", NULL});
    e2e_assert_exit(p, 0, "--version");
    const char *want[] = {"dynrec ", "Python ", "SQLite ", "zstd "};
    for (size_t i = 0; i < 4; i++) {
        const char *at = strstr(p->out.data, want[i]);
        cr_assert(at && (at == p->out.data || at[-1] == '\n'), "no line starting '%s':\n%s",
                  want[i], p->out.data);
    }
}

Test(e2e, usage_errors_exit_2_on_stderr) {
    e2e_copy_script("argv_info.py");
    const char *const cases[][4] = {
        {"frobnicate"},                          /* unknown command */
        {"--frobnicate"},                        /* unknown top-level option */
        {"run", "--frobnicate", "argv_info.py"}, /* unknown run option */
        {"run", "-o"},                           /* -o without a path */
        {"run"},                                 /* no script */
        {"show", "--frobnicate", "T.db"},        /* unknown show option */
        {"show"},                                /* no trace */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[6] = {e2e_bin, cases[i][0], cases[i][1], cases[i][2], NULL, NULL};
        E2eProc *p = e2e_run(argv);
        char *what = e2e_fmt("dynrec %s %s %s", cases[i][0], cases[i][1] ? cases[i][1] : "",
                             cases[i][2] ? cases[i][2] : "");
        e2e_assert_exit(p, 2, what);
        cr_assert_str_eq(p->out.data, "", "%s: stdout:\n%s", what, p->out.data);
        cr_assert_neq(p->err.len, 0, "%s: no message on stderr", what);
    }
    E2eProc *none = e2e_run((const char *[]){e2e_bin, NULL});
    e2e_assert_exit(none, 2, "dynrec without arguments");
    cr_assert_not_null(strstr(none->err.data, "usage:"));
    int n = 0;
    e2e_list(".db", &n);
    cr_assert_eq(n, 0, "a usage error left a trace behind");
}

Test(e2e, missing_script_exits_2_naming_it) {
    E2eProc *p =
        e2e_run((const char *[]){e2e_bin, "run", "-o", "T.db", "no_such_script.py", "arg", NULL});
    e2e_assert_exit(p, 2, "run no_such_script.py");
    cr_assert_not_null(strstr(p->err.data, "no_such_script.py"), "stderr:\n%s", p->err.data);
    cr_assert_str_eq(p->out.data, "");
    cr_assert_neq(access(e2e_path("T.db"), F_OK), 0, "a missing script left a trace behind");
}

/* ---- 10: write failures ------------------------------------------------ */

/* show's verdict on a trace whose recording stopped on a full disk. */
static void assert_stopped_readable(const char *trace) {
    E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", trace, NULL});
    e2e_assert_exit(s, 0, e2e_fmt("dynrec show %s", trace));
    cr_assert_not_null(strstr(s->out.data, "INCOMPLETE: recording stopped at "), "%s", s->out.data);
    cr_assert_not_null(strstr(s->out.data, "the disk was full"), "%s", s->out.data);
    DrTrace *t = e2e_open(e2e_path(trace));
    cr_assert_eq(dr_trace_is_complete(t), 0);
    cr_assert_not_null(e2e_meta(t, "script"), "the start of the run is not readable");
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM events"), 0);
}

/* An injected write failure: the program runs on unchanged, what was
 * committed before stays readable, meta says why recording stopped. */
Test(e2e, write_failure_keeps_what_was_committed) {
    e2e_copy_example("shape_recompiles.py");
    E2eProc *py =
        e2e_run_python((const char *[]){"shape_recompiles.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    setenv("DYNREC_FAULT_WRITE", "4", 1);
    E2eProc *dr = e2e_record("T.db", (const char *[]){"shape_recompiles.py", NULL}, NULL,
                             E2E_TORCH_TIMEOUT_MS);
    unsetenv("DYNREC_FAULT_WRITE");
    e2e_assert_exit(dr, 0, "shape_recompiles.py with a failing writer");
    cr_assert_str_eq(dr->out.data, py->out.data, "the program's output changed");
    /* stderr: the program's own (none), then dynrec's one line about it. */
    cr_assert_not_null(strstr(dr->err.data, "dynrec: the trace T.db is incomplete: "), "%s",
                       dr->err.data);
    assert_stopped_readable("T.db");
    DrTrace *t = e2e_open(e2e_path("T.db"));
    char *why = e2e_meta(t, "stopped");
    cr_assert(why && why[0] >= '0' && why[0] <= '9' && strstr(why, " s: the disk was full"),
              "meta stopped: %s", why ? why : "(none)");
}

/* A real full disk: a small tmpfs (root only; skipped with a reason
 * otherwise).  The trace's last pages may stay in its -wal file, which
 * every reader opens with it. */
Test(e2e, full_disk_keeps_a_readable_trace) {
    if (geteuid() != 0) {
        printf("e2e.full_disk_keeps_a_readable_trace: skipped: mounting a tmpfs needs root\n");
        return;
    }
    e2e_copy_example("shape_recompiles.py");
    char *mnt = e2e_path("small");
    cr_assert_eq(mkdir(mnt, 0755), 0);
    E2eProc *m = e2e_run_in(
        (const char *[]){"/bin/mount", "-t", "tmpfs", "-o", "size=320k", "tmpfs", mnt, NULL}, NULL,
        10000);
    if (m->status != 0) {
        printf("e2e.full_disk_keeps_a_readable_trace: skipped: cannot mount a tmpfs here (%s)\n",
               m->err.data);
        return;
    }
    E2eProc *py =
        e2e_run_python((const char *[]){"shape_recompiles.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    E2eProc *dr = e2e_run_in(
        (const char *[]){e2e_bin, "run", "-q", "-o", "small/t.db", "shape_recompiles.py", NULL},
        NULL, E2E_TORCH_TIMEOUT_MS);
    /* The files as they are, then the mount goes before any assertion. */
    E2eProc *cp = e2e_run_in(
        (const char *[]){"/bin/sh", "-c", "cp small/t.db* . ; umount small", NULL}, NULL, 10000);
    e2e_assert_exit(cp, 0, "copying the trace off the tmpfs and unmounting it");
    e2e_assert_exit(dr, 0, "dynrec run on a full disk");
    cr_assert_str_eq(dr->out.data, py->out.data, "the program's output changed");
    cr_assert_not_null(strstr(dr->err.data, "is incomplete"), "%s", dr->err.data);
    /* The reserve the writer held back lets it write why it stopped, and
     * often checkpoint too; any -wal left is read with the trace. */
    assert_stopped_readable("t.db");
}

/* The disk fills at the very end, while the trace is closed: with the
 * last commit in the WAL and no room to fold it into the file, the trace is
 * complete in two files.  stderr and show say the same thing, whichever of
 * the outcomes a given amount of free space gives; among the amounts tried,
 * one leaves the last pages in t.db-wal (the WAL is a few MB, the space
 * left a few hundred KB), and the copied pair reads whole. */
Test(e2e, disk_full_at_close_leaves_a_complete_trace_and_says_where) {
    if (geteuid() != 0) {
        printf("e2e.disk_full_at_close: skipped: mounting a tmpfs needs root\n");
        return;
    }
    e2e_copy_script("fill_disk_at_exit.py");
    char *mnt = e2e_path("small");
    cr_assert_eq(mkdir(mnt, 0755), 0);
    const char *leaves[] = {"131072", "196608", "262144", "393216"};
    int kept = 0;
    for (size_t i = 0; i < 4 && !kept; i++) {
        E2eProc *m = e2e_run_in(
            (const char *[]){"/bin/mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt, NULL},
            NULL, 10000);
        if (m->status != 0) {
            printf("e2e.disk_full_at_close: skipped: cannot mount a tmpfs here (%s)\n",
                   m->err.data);
            return;
        }
        setenv("FILL_LEAVE", leaves[i], 1);
        setenv("FILL_DIR", mnt, 1);
        E2eProc *dr = e2e_run_in((const char *[]){e2e_bin, "run", "-q", "-o", "small/t.db",
                                                  "fill_disk_at_exit.py", NULL},
                                 NULL, E2E_TORCH_TIMEOUT_MS);
        E2eProc *cp = e2e_run_in(
            (const char *[]){"/bin/sh", "-c",
                             "rm -f t.db t.db-wal t.db-shm; rm small/ballast; cp small/t.db* . ; "
                             "umount small",
                             NULL},
            NULL, 10000);
        unsetenv("FILL_LEAVE");
        unsetenv("FILL_DIR");
        e2e_assert_exit(cp, 0, "copying the trace off the tmpfs and unmounting it");
        e2e_assert_exit(dr, 0, "dynrec run filling its disk at exit");
        cr_assert_str_eq(dr->out.data, "done\n", "the program's output changed");
        E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", "t.db", NULL});
        e2e_assert_exit(s, 0, "dynrec show");
        int said_kept = strstr(dr->err.data, "t.db is complete, but the disk filled as it was "
                                             "closed: its last pages are in small/t.db-wal; keep "
                                             "both files together") != NULL;
        int said_incomplete = strstr(dr->err.data, "is incomplete") != NULL;
        cr_assert(!(said_kept && said_incomplete), "%s", dr->err.data);
        if (said_kept) {
            kept = 1;
            cr_assert_eq(access(e2e_path("t.db-wal"), F_OK), 0, "no t.db-wal beside t.db");
            cr_assert_not_null(strstr(s->out.data, "recording    complete (its last pages are "
                                                   "in t.db-wal: keep both files together)"),
                               "show disagrees with stderr (%s):\n%s", dr->err.data, s->out.data);
            DrTrace *t = e2e_open(e2e_path("t.db"));
            cr_assert_eq(dr_trace_is_complete(t), 1);
            cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles"), 38);
            cr_assert_not_null(e2e_meta(t, "exit_status"));
            e2e_close(t);
        } else if (said_incomplete) {
            cr_assert_not_null(strstr(s->out.data, "recording    INCOMPLETE"),
                               "show disagrees with stderr (%s):\n%s", dr->err.data, s->out.data);
        } else {
            cr_assert_str_eq(dr->err.data, "", "stderr: %s", dr->err.data);
            cr_assert_not_null(strstr(s->out.data, "recording    complete\n"), "%s", s->out.data);
        }
    }
    cr_assert(kept, "no amount of free space left the last pages in the WAL");
}

/* Compiling a module or a builtin compiles torch's wrapper
 * (wrap_inline.<locals>.inner in torch/_dynamo/external_utils.py): the views
 * and show name each compile by what the user compiled and where they
 * called it. */
Test(e2e, torch_wrappers_are_named_by_what_the_user_compiled) {
    e2e_copy_script("compile_module.py");
    E2eProc *r =
        e2e_record("T.db", (const char *[]){"compile_module.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "compile_module.py");
    DrTrace *t = e2e_open(e2e_path("T.db"));
    int n = 0;
    char *rows = e2e_sql_lines(t, &n,
                               "SELECT compile_id || ' ' || qualname || ' | ' || "
                               "display_name || ' | ' || user_location FROM v_compiles "
                               "ORDER BY seq");
    cr_assert_eq(n, 4, "%s", rows);
    const char *want[] = {"Sequential via cm(torch.randn(n, 4)) | ",
                          "Linear via cl(torch.randn(2, 4)) | ", "torch.sin via print("};
    for (size_t i = 0; i < 3; i++)
        cr_assert_not_null(strstr(rows, want[i]), "no '%s' in\n%s", want[i], rows);
    /* Python 3.10's code objects have no qualname: Dynamo's and ours say inner. */
    cr_assert_not_null(
        strstr(rows, e2e_python_minor() == 10 ? "0/0 inner | " : "wrap_inline.<locals>.inner"),
        "%s", rows);
    cr_assert_not_null(strstr(rows, "compile_module.py:10\n"), "the call site: %s", rows);
    char *gf = e2e_sql(t, "SELECT display_name || ' ' || user_location FROM v_guard_failures"
                          " WHERE compile_id = '0/1'");
    cr_assert(gf && strncmp(gf, "Sequential via cm(", 18) == 0 &&
                  strstr(gf, "compile_module.py:10"),
              "%s", gf ? gf : "(none)");
    char *fr = e2e_sql(t, "SELECT display_name FROM v_frames WHERE compiles = 4");
    cr_assert(fr && strstr(fr, "Sequential via") && strstr(fr, "torch.sin via"), "%s",
              fr ? fr : "(none)");
    E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", "T.db", NULL});
    e2e_assert_exit(s, 0, "dynrec show");
    cr_assert_not_null(strstr(s->out.data, "0/1  rejects 0/0  Sequential via cm("), "%s",
                       s->out.data);
    cr_assert_not_null(strstr(s->out.data, "0/3  torch.sin via print("), "%s", s->out.data);
}

/* show lists the script's own code, Dynamo's compiled code by its compile,
 * and library code only with --top-library. */
Test(e2e, show_lists_own_code_and_names_compiled_code) {
    e2e_copy_example("shape_recompiles.py");
    E2eProc *r = e2e_record("T.db", (const char *[]){"shape_recompiles.py", NULL}, NULL,
                            E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "shape_recompiles.py");
    E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", "T.db", NULL});
    e2e_assert_exit(s, 0, "dynrec show");
    for (int k = 0; k < 4; k++)
        cr_assert_not_null(strstr(s->out.data, e2e_fmt("compiled 0/%d of scale ", k)), "%s",
                           s->out.data);
    const char *own = strstr(s->out.data, "the script's own code");
    cr_assert_not_null(own, "%s", s->out.data);
    cr_assert_null(strstr(own, "/site-packages/"), "library code listed by default:\n%s", own);
    cr_assert_null(strstr(s->out.data, "all code objects"), "%s", s->out.data);
    E2eProc *l = e2e_run((const char *[]){e2e_bin, "show", "--top-library", "5", "T.db", NULL});
    e2e_assert_exit(l, 0, "dynrec show --top-library 5");
    const char *all = strstr(l->out.data, "all code objects by evaluations, libraries included");
    cr_assert_not_null(all, "%s", l->out.data);
    cr_assert(strstr(all, "/site-packages/") || strstr(all, "/lib/python3."), "%s", all);
    E2eProc *j = e2e_run((const char *[]){e2e_bin, "show", "--json", "T.db", NULL});
    cr_assert_not_null(strstr(j->out.data, "\"compiled\": \"0/3\""), "%s", j->out.data);
    /* Sections keyed by plain column names, never by SQL. */
    cr_assert(strstr(j->out.data, "\"graphs\": \"graphs=1\", \"attempts\": \"attempts=1\""), "%s",
              j->out.data);
    cr_assert_null(strstr(j->out.data, "||"), "a key is SQL: %s", j->out.data);
}

/* ---- 11: threads ------------------------------------------------------- */

/* Eight threads calling compiled functions while half of them make Dynamo
 * recompile: the program's output is unchanged, nothing is dropped, the run
 * ends (a deadlock would hit the timeout), and the trace's counts add up to
 * the calls the script counted. */
Test(e2e, eight_threads_hits_and_recompiles_add_up) {
    e2e_copy_script("thread_storm.py");
    E2eProc *py =
        e2e_run_python((const char *[]){"thread_storm.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    E2eProc *dr =
        e2e_record("T.db", (const char *[]){"thread_storm.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(py, 0, "python thread_storm.py");
    e2e_assert_exit(dr, 0, "dynrec run thread_storm.py");
    cr_assert_str_eq(dr->out.data, py->out.data);
    cr_assert_str_eq(dr->out.data, "steady 12000\nshifting 1200\n");
    DrTrace *t = e2e_open(e2e_path("T.db"));
    char *dropped = e2e_meta(t, "records_dropped");
    cr_assert(!dropped || strcmp(dropped, "0") == 0, "records dropped: %s", dropped);
    cr_assert_eq(dr_trace_is_complete(t), 1);
    /* Every call ran compiled code: once right after its compile, or as a
     * cache hit. */
    cr_assert_eq(e2e_sql_int(t, "SELECT compiled_runs FROM v_frames WHERE qualname = 'steady'"),
                 12000);
    cr_assert_eq(e2e_sql_int(t, "SELECT compiled_runs FROM v_frames WHERE qualname = 'shifting'"),
                 1200);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_frames WHERE compiles > 0 AND "
                                "cache_hits + compiles != compiled_runs"),
                 0);
    cr_assert_geq(e2e_sql_int(t, "SELECT compiles FROM v_frames WHERE qualname = 'shifting'"), 5);
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_guard_failures"), 0);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(DISTINCT thread) FROM v_ev WHERE kind = 'callback'"),
                 8);
}

/* Every past crash of the trace fuzzer (tests/fuzz/regressions/trace/):
 * show, show --json and diff of the file with itself end with a clean
 * status (under ASan/UBSan any invalid read aborts instead). */
Test(e2e, fuzz_regressions_read_cleanly) {
    const char *dir = e2e_fmt("%s/../fuzz/regressions/trace", e2e_scripts);
    E2eProc *ls = e2e_run_in((const char *[]){"/bin/ls", dir, NULL}, NULL, 10000);
    e2e_assert_exit(ls, 0, "listing the fuzz regressions");
    int n = 0;
    for (char *name = strtok(ls->out.data, "\n"); name; name = strtok(NULL, "\n"), n++) {
        const char *f = e2e_fmt("%s/%s", dir, name);
        const char *const cmds[][5] = {{e2e_bin, "show", f, NULL},
                                       {e2e_bin, "show", "--json", f, NULL},
                                       {e2e_bin, "diff", f, f, NULL}};
        for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
            E2eProc *p = e2e_run(cmds[i]);
            cr_assert(WIFEXITED(p->status) &&
                          (WEXITSTATUS(p->status) == 0 || WEXITSTATUS(p->status) == 65),
                      "%s %s: %s\n%s", cmds[i][1], name, e2e_status_text(p->status), p->err.data);
        }
    }
    cr_assert_gt(n, 0);
}
