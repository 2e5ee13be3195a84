/* test_view.c -- `dynrec view` end to end, driven through tmux.
 *
 * Each test records a real script with the real binary (real torch.compile),
 * starts the viewer in a detached tmux session of a fixed size on its own
 * socket, sends keys and asserts on the text of the pane (capture-pane -p).
 * The pane runs `dynrec view ...; echo "view exited $?"; sleep`, so that a
 * test sees the exit status and what the terminal shows after the viewer
 * left.  Tests skip, saying why, only when tmux is not installed. */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <locale.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../viewer/view_int.h"
#include "e2e_util.h"

static char tmux_bin[PATH_MAX];
static char sock[64]; /* this test's tmux socket (-L), unique per process; "" none */

static void tmux_kill(void);

/* A test that fails half-way still ends its tmux server (and the viewer). */
static void view_teardown(void) {
    if (sock[0]) tmux_kill();
    e2e_teardown();
}

TestSuite(view, .init = e2e_setup, .fini = view_teardown, .timeout = 300);

/* Finds tmux on PATH, or skips the test. */
static void need_tmux(void) {
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
    tmux_bin[0] = 0;
    for (char *d = strtok(dirs, ":"); d; d = strtok(NULL, ":")) {
        snprintf(tmux_bin, sizeof tmux_bin, "%s/tmux", d);
        if (access(tmux_bin, X_OK) == 0) break;
        tmux_bin[0] = 0;
    }
    if (!tmux_bin[0]) cr_skip_test("tmux is not installed (tools/setup.sh installs it)");
    snprintf(sock, sizeof sock, "dynrec-view-%d", (int)getpid());
}

/* What one tmux command printed and how it ended. */
typedef struct {
    int status; /* exit status, -1 when it did not exit */
    char *out;  /* stdout, NUL-terminated, owned by the test */
} Tmux;

/* Runs `tmux -L sock -f /dev/null args...` to the end (its own child, not
 * one of e2e's: a test polls the pane hundreds of times).  Its output goes
 * to a file, not a pipe: the tmux server it may start keeps its fds. */
static Tmux tmux_run(const char *const *args) {
    const char *argv[40] = {tmux_bin, "-L", sock, "-f", "/dev/null"};
    int n = 5;
    for (int i = 0; args[i] && n < 39; i++) argv[n++] = args[i];
    argv[n] = NULL;
    char *path = e2e_path("tmux.out");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int dn = open("/dev/null", O_RDWR);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(fd, 1) < 0 || dup2(dn, 2) < 0) _exit(126);
        if (chdir(e2e_dir) != 0) _exit(126);
        if (e2e_asan) setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    close(fd);
    char *out = e2e_slurp(path, NULL);
    cr_assert_not_null(out);
    return (Tmux){WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

static Tmux tmux(const char *const *args) { return tmux_run(args); }

static void tmux_kill(void) { tmux((const char *[]){"kill-server", NULL}); }

/* Starts `dynrec view ARGS` in a detached session of cols x rows, with the
 * environment env (a shell prefix such as "LANG=C.UTF-8"). */
static void view_start(int cols, int rows, const char *env, const char *args) {
    char *cmd = e2e_fmt("cd '%s' && env %s '%s' view %s; echo \"view exited $?\"; sleep 600",
                        e2e_dir, env, e2e_bin, args);
    char *x = e2e_fmt("%d", cols), *y = e2e_fmt("%d", rows);
    Tmux p = tmux((const char *[]){"new-session", "-d", "-s", "v", "-x", x, "-y", y, cmd, NULL});
    cr_assert_eq(p.status, 0, "tmux new-session failed");
}

static char *screen(void) {
    Tmux p = tmux((const char *[]){"capture-pane", "-p", "-t", "v", NULL});
    cr_assert_eq(p.status, 0, "tmux capture-pane failed");
    return p.out;
}

/* The pane's text once it contains want (the test fails after timeout_ms).
 * While the viewer runs, also its status line: the bottom row is painted
 * last, so a screen caught half-painted is not taken. */
static char *wait_for(const char *want, int timeout_ms) {
    int64_t end = e2e_now_ms() + timeout_ms;
    int whole = strncmp(want, "view exited", 11) != 0;
    char *s;
    /* ... and two captures 100 ms apart agree: a capture taken while the
     * viewer redraws can hold a new page's top over the old page's bottom
     * (seen on a loaded machine). */
    for (;;) {
        s = screen();
        if (strstr(s, want) && (!whole || strstr(s, " q quit"))) {
            e2e_sleep_ms(100);
            if (strcmp(s, screen()) == 0) break;
        }
        if (e2e_now_ms() > end) {
            tmux_kill();
            cr_assert_fail("the screen never showed \"%s\"; it shows:\n%s", want, s);
        }
        e2e_sleep_ms(100);
    }
    return s;
}

static void keys(const char *const *k) {
    const char *argv[32] = {"send-keys", "-t", "v"};
    int n = 3;
    for (int i = 0; k[i] && n < 31; i++) argv[n++] = k[i];
    argv[n] = NULL;
    cr_assert_eq(tmux(argv).status, 0, "tmux send-keys failed");
}

/* Text typed literally (send-keys -l). */
static void type(const char *text) {
    cr_assert_eq(tmux((const char *[]){"send-keys", "-t", "v", "-l", text, NULL}).status, 0,
                 "tmux send-keys -l failed");
}

static void record_sizes(void) {
    e2e_copy_script("view_sizes.py");
    E2eProc *r =
        e2e_record("T.db", (const char *[]){"view_sizes.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "dynrec run view_sizes.py");
}

/* The line of s holding needle, as a malloc'd string owned by the test. */
static char *line_with(const char *s, const char *needle) {
    const char *p = strstr(s, needle);
    if (!p) return NULL;
    const char *b = p;
    while (b > s && b[-1] != '\n') b--;
    size_t n = strcspn(b, "\n");
    return e2e_fmt("%.*s", (int)n, b);
}

/* The first line of s holding both a and b. */
static char *line_with2(const char *s, const char *a, const char *b) {
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "\n");
        char *l = e2e_fmt("%.*s", (int)n, p);
        if (strstr(l, a) && strstr(l, b)) return l;
        p += n + (p[n] != 0);
    }
    return NULL;
}

Test(view, first_screen_lists_the_recompiles_with_their_size_guard) {
    need_tmux();
    record_sizes();
    view_start(100, 30, "LANG=C.UTF-8", "T.db");
    char *s = wait_for("Recompiles", 20000);
    /* sizes 3, 4, 5: the second and third compiles of scale are recompiles */
    char *r1 = line_with(s, "1/2"), *r2 = line_with(s, "2/2");
    cr_assert(r1 && strstr(r1, "scale") && strstr(r1, "view_sizes.py:"), "screen:\n%s", s);
    cr_assert(strstr(r1, "size mismatch at index 0"), "row: %s", r1);
    cr_assert(r2 && strstr(r2, "scale") && strstr(r2, "size mismatch"), "screen:\n%s", s);
    cr_assert(strstr(s, "(2)"), "two recompiles counted:\n%s", s);
    cr_assert(!strstr(s, "LIMIT"), "no frame hit the recompile limit:\n%s", s);
    tmux_kill();
}

/* A global whose later values no guard pins (a type check once Dynamo
 * stops specialising the float): its history comes from the captured
 * inputs.  A guard Dynamo made inside torch's dropout: the page shows the
 * user's line that led there, from the user stack, not torch's file. */
Test(view, value_history_from_captures_and_the_users_line) {
    need_tmux();
    e2e_copy_script("view_global.py");
    E2eProc *r =
        e2e_record("G.db", (const char *[]){"view_global.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "dynrec run view_global.py");
    view_start(110, 60, "LANG=C.UTF-8", "G.db");
    wait_for("Recompiles", 20000);
    keys((const char *[]){"Enter", NULL}); /* 0/1: SCALE changed */
    char *s = wait_for("Value history", 30000);
    cr_assert(strstr(s, "Value history of G['SCALE']"), "screen:\n%s", s);
    cr_assert(strstr(s, "2.0 at 0/0, 3.0 at 0/1"), "history:\n%s", s);
    cr_assert(!strstr(s, "___check_type_id"), "a type check is not a value:\n%s", s);
    keys((const char *[]){"Escape", NULL});
    wait_for("failed guard", 20000);
    keys((const char *[]){"j", "Enter", NULL}); /* 0/2: eval(), guarded in dropout.py */
    s = wait_for("Value history", 30000);
    cr_assert(strstr(s, "reached from your code at "), "screen:\n%s", s);
    char *src = line_with2(s, " > ", " | ");
    cr_assert(src && strstr(src, "return self.drop(x * 2)"), "the user's line, marked:\n%s", s);
    cr_assert(!strstr(s, "that source is not stored"), "screen:\n%s", s);
    tmux_kill();
}

Test(view, enter_shows_the_guard_source_value_history_and_hint) {
    need_tmux();
    record_sizes();
    view_start(100, 60, "LANG=C.UTF-8", "T.db");
    wait_for("Recompiles", 20000);
    keys((const char *[]){"j", "Enter", NULL}); /* the recompile for size 5 */
    char *s = wait_for("Value history", 30000);
    /* the newest rejected entry expected 4 and saw 5 */
    cr_assert(strstr(s, "expected 4, actual 5"), "screen:\n%s", s);
    /* the guard's origin: the source line from the trace, highlighted */
    char *src = line_with2(s, "SIZE_GUARD", " | ");
    cr_assert(src && strstr(src, " > ") && strstr(src, "return (x * 2 + 1).sum()"),
              "the guarding line, marked:\n%s", s);
    cr_assert(strstr(s, "Value history of x.size()[0]"), "screen:\n%s", s);
    char *h = line_with(s, "3 at ");
    cr_assert(h, "history line:\n%s", s);
    char *p3 = strstr(h, "3 at "), *p4 = strstr(h, "4 at "), *p5 = strstr(h, "5 at ");
    cr_assert(p3 && p4 && p5 && p3 < p4 && p4 < p5, "history 3, 4, 5 in order: %s", h);
    cr_assert(strstr(s, "torch._dynamo.mark_dynamic(x, 0)"), "the hint:\n%s", s);
    cr_assert(strstr(s, "dynamic=True"), "the hint:\n%s", s);
    /* back to the list */
    keys((const char *[]){"Escape", NULL});
    wait_for("failed guard", 20000);
    tmux_kill();
}

Test(view, tab_reaches_graph_breaks_with_source_context) {
    need_tmux();
    record_sizes();
    view_start(100, 40, "LANG=C.UTF-8", "T.db");
    wait_for("Recompiles", 20000);
    keys((const char *[]){"Tab", "Tab", "Tab", NULL});
    char *s = wait_for("Graph breaks", 20000);
    cr_assert(line_with(s, " step "), "a break in step:\n%s", s);
    keys((const char *[]){"Enter", NULL});
    s = wait_for("Source at", 20000);
    char *src = line_with2(s, "GRAPH_BREAK", " | ");
    cr_assert(src && strstr(src, " > ") && strstr(src, "torch._dynamo.graph_break()"),
              "the breaking line, marked:\n%s", s);
    /* number keys too */
    keys((const char *[]){"Escape", "3", NULL});
    s = wait_for("Compiles in order", 20000);
    cr_assert(line_with(s, "scale"), "screen:\n%s", s);
    tmux_kill();
}

Test(view, search_finds_a_guard) {
    need_tmux();
    record_sizes();
    view_start(100, 30, "LANG=C.UTF-8", "T.db");
    wait_for("Recompiles", 20000);
    /* on the list: the row whose failure saw size 5 */
    keys((const char *[]){"/", NULL});
    type("actual 5");
    keys((const char *[]){"Enter", NULL});
    wait_for("row 2/2", 20000);
    /* in a compile's page: a guard far below the first page */
    keys((const char *[]){"3", NULL});
    wait_for("Compiles in order", 20000);
    keys((const char *[]){"G", "Enter", NULL});
    char *s = wait_for("Compile ", 20000);
    cr_assert(!strstr(s, "DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_static"),
              "the guard is below the first page before the search:\n%s", s);
    cr_assert(strstr(s, "checkpoint") && !strstr(s, "\xe2\x86\x92 ?"),
              "the speculation steps, and only they, in the timeline:\n%s", s);
    keys((const char *[]){"/", NULL});
    type("_dynamo_static_indices");
    keys((const char *[]){"Enter", NULL});
    /* (not the search prompt's own text: the guard line the search shows) */
    s = wait_for("DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_static", 20000);
    cr_assert(strstr(s, "DIMENSION_DYNAMIC_MARKING_GUARD"), "screen:\n%s", s);
    cr_assert(!strstr(s, "not found"), "screen:\n%s", s);
    keys((const char *[]){"/", NULL});
    type("no such guard anywhere");
    keys((const char *[]){"Enter", NULL});
    wait_for("not found: no such guard anywhere", 20000);
    tmux_kill();
}

Test(view, help_lists_the_keys_and_q_exits_zero_restoring_the_terminal) {
    need_tmux();
    record_sizes();
    view_start(80, 24, "LANG=C.UTF-8", "T.db");
    char *s = wait_for("Recompiles", 20000);
    cr_assert(line_with(s, "scale"), "80x24 shows the rows:\n%s", s);
    keys((const char *[]){"?", NULL});
    s = wait_for("dynrec view: keys", 20000);
    static const char *names[] = {"Up, k", "Down, j", "PgUp", "PgDn", "g, Home", "G, End", "Enter",
                                  "Esc",   "Tab",     "/",    "n ",   "N ",      "?",      "q "};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        cr_assert(strstr(s, names[i]), "help lists %s:\n%s", names[i], s);
    keys((const char *[]){"q", NULL});
    s = wait_for("view exited", 20000);
    cr_assert(strstr(s, "view exited 0"), "exit status 0:\n%s", s);
    cr_assert(!strstr(s, "dynrec view") && !strstr(s, "Recompiles"),
              "the viewer's screen is gone (terminal restored):\n%s", s);
    tmux_kill();
}

Test(view, escape_sequences_from_the_trace_are_neutralised) {
    need_tmux();
    e2e_copy_script("view_hostile.py");
    E2eProc *r =
        e2e_record("T.db", (const char *[]){"view_hostile.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "dynrec run view_hostile.py");
    /* the trace really holds the raw bytes */
    DrTrace *t = e2e_open(e2e_path("T.db"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_errors WHERE instr(message, "
                                "char(27) || '[2J') AND instr(message, char(27) || ']52;')"),
                 1);
    e2e_close(t);
    view_start(100, 40, "LANG=C.UTF-8", "--screen errors T.db");
    char *s = wait_for("Errors inside Dynamo", 20000);
    keys((const char *[]){"Enter", NULL});
    s = wait_for("backend says", 20000);
    char *l = line_with(s, "backend says");
    cr_assert(strstr(l, "^[[2J^[]52;c;aGFja2Vk^G evil"), "shown escaped: %s", l);
    /* had ESC [2J reached the terminal the title would be gone; had OSC 52,
     * tmux would hold a paste buffer */
    cr_assert(strstr(s, "dynrec view") && strstr(s, "BackendCompilerFailed"), "screen:\n%s", s);
    Tmux b = tmux((const char *[]){"list-buffers", NULL});
    cr_assert(!strstr(b.out, "aGFja2Vk") && !strstr(b.out, "hacked"), "no clipboard buffer: %s",
              b.out);
    cr_assert_eq(strlen(b.out), 0, "no paste buffer at all: %s", b.out);
    tmux_kill();
}

Test(view, not_a_terminal_prints_what_show_prints) {
    record_sizes();
    E2eProc *v = e2e_run((const char *[]){e2e_bin, "view", "T.db", NULL});
    E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", "T.db", NULL});
    e2e_assert_exit(v, 0, "dynrec view | cat");
    e2e_assert_exit(s, 0, "dynrec show");
    cr_assert_str_eq(v->out.data, s->out.data);
    cr_assert(strstr(v->out.data, "guard failures"), "%s", v->out.data);
}

Test(view, a_bad_trace_is_the_same_clean_error_as_show) {
    e2e_write_file(e2e_path("junk.db"), "SQLite format 3", 15);
    E2eProc *v = e2e_run((const char *[]){e2e_bin, "view", "junk.db", NULL});
    E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", "junk.db", NULL});
    e2e_assert_exit(v, 65, "dynrec view junk.db");
    e2e_assert_exit(s, 65, "dynrec show junk.db");
    cr_assert(strncmp(v->err.data, "dynrec view: ", 13) == 0, "%s", v->err.data);
    cr_assert_str_eq(v->err.data + 13, s->err.data + 13);
    E2eProc *m = e2e_run((const char *[]){e2e_bin, "view", "missing.db", NULL});
    e2e_assert_exit(m, 65, "dynrec view missing.db");
    cr_assert(strstr(m->err.data, "missing.db: no such file"), "%s", m->err.data);
    E2eProc *u = e2e_run((const char *[]){e2e_bin, "view", "--screen", "nope", "T.db", NULL});
    e2e_assert_exit(u, 2, "dynrec view --screen nope");
}

/* Compiling a module compiles torch's wrapper: the screens name what the
 * user compiled and the line that called it. */
Test(view, torch_wrappers_are_named_by_what_the_user_compiled) {
    e2e_copy_script("compile_module.py");
    E2eProc *r =
        e2e_record("T.db", (const char *[]){"compile_module.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "compile_module.py");
    setenv("COLUMNS", "160", 1);
    E2eProc *v = e2e_run((const char *[]){e2e_bin, "view", "--dump-first-screen", "T.db", NULL});
    e2e_assert_exit(v, 0, "dynrec view --dump-first-screen");
    cr_assert(strstr(v->out.data, "Sequential via") && strstr(v->out.data, "compile_module.py:10"),
              "%s", v->out.data);
    cr_assert_null(strstr(v->out.data, "wrap_inline"), "%s", v->out.data);
    E2eProc *c = e2e_run((const char *[]){e2e_bin, "view", "--dump-first-screen", "--screen",
                                          "compiles", "T.db", NULL});
    cr_assert(strstr(c->out.data, "torch.sin via") && strstr(c->out.data, "Linear via"), "%s",
              c->out.data);
    unsetenv("COLUMNS");
}

/* A re-run under another recompile limit: its diff screen lists the
 * divergences from the recording, first one selected; Enter shows both
 * sides and what is on one side only.  --diff compares any two traces. */
Test(view, diff_screen_lists_a_reruns_divergences_first_one_selected) {
    need_tmux();
    e2e_copy_example("shape_recompiles.py");
    E2eProc *r = e2e_record("a.db", (const char *[]){"shape_recompiles.py", NULL}, NULL,
                            E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "dynrec run shape_recompiles.py");
    E2eProc *rr = e2e_run_in((const char *[]){e2e_bin, "rerun", "-o", "b.db", "--set",
                                              "recompile_limit=2", "a.db", NULL},
                             NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(rr, 1, "dynrec rerun --set recompile_limit=2 (a divergence)");
    setenv("COLUMNS", "120", 1);
    E2eProc *d = e2e_run(
        (const char *[]){e2e_bin, "view", "--dump-first-screen", "--screen", "diff", "b.db", NULL});
    e2e_assert_exit(d, 0, "view --screen diff b.db");
    char *first = line_with(d->out.data, " 1    ");
    cr_assert(first && strstr(first, "compile #2 of scale differs"), "%s", d->out.data);
    cr_assert(strstr(d->out.data, "row 1/") && strstr(d->out.data, "comparing "), "%s",
              d->out.data);
    E2eProc *same = e2e_run((const char *[]){e2e_bin, "view", "--dump-first-screen", "--screen",
                                             "diff", "--diff", "a.db", "a.db", NULL});
    cr_assert_not_null(strstr(same->out.data, "identical, no divergence"), "%s", same->out.data);
    unsetenv("COLUMNS");

    view_start(100, 30, "LANG=C.UTF-8", "--diff b.db a.db");
    wait_for("Recompiles", 20000);
    keys((const char *[]){"8", NULL});
    wait_for("Divergences", 20000);
    keys((const char *[]){"Enter", NULL});
    char *page = wait_for("Divergence 1 (compiles)", 20000);
    cr_assert(strstr(page, "a: compiled") && strstr(page, "recompile limit exceeded"), "%s", page);
    keys((const char *[]){"Escape", "j", "Enter", NULL});
    page = wait_for("Divergence 2 (guards)", 20000);
    cr_assert_not_null(strstr(page, "- TENSOR_MATCH"), "%s", page);
    keys((const char *[]){"q", NULL});
    wait_for("view exited 0", 20000);
    tmux_kill();
}

Test(view, dump_first_screen_is_the_first_screen_as_text) {
    record_sizes();
    E2eProc *v = e2e_run((const char *[]){e2e_bin, "view", "--dump-first-screen", "T.db", NULL});
    e2e_assert_exit(v, 0, "dynrec view --dump-first-screen");
    cr_assert(strstr(v->out.data, "Recompiles") && strstr(v->out.data, "size mismatch"), "%s",
              v->out.data);
    int lines = 0;
    for (const char *p = v->out.data; *p; p++) lines += *p == '\n';
    cr_assert_eq(lines, 30, "30 rows by default:\n%s", v->out.data);
}

Test(view, follow_shows_a_compile_made_after_it_opened) {
    need_tmux();
    e2e_copy_script("view_sizes.py");
    /* opened before the run has even made the file: it waits for it */
    view_start(100, 30, "LANG=C.UTF-8", "--follow T.db");
    const char *argv[] = {e2e_bin, "run",           "-q",           "-o",
                          "T.db",  "view_sizes.py", e2e_path("go"), NULL};
    E2eProc *run = e2e_spawn(argv, NULL);
    cr_assert_eq(e2e_pump(run, e2e_now_ms() + E2E_TORCH_TIMEOUT_MS, "waiting"), 1,
                 "the script never reached its wait: %s", run->err.data);
    /* the recompile for size 4 is there, the one for 5 is not yet */
    char *s = wait_for("1/1", 20000);
    cr_assert(strstr(s, "[recording]"), "says recording:\n%s", s);
    cr_assert(!line_with(s, "2/2"), "no second recompile yet:\n%s", s);
    e2e_write_file(e2e_path("go"), "", 0);
    s = wait_for("2/2", 30000);
    cr_assert(line_with(s, "2/2") && strstr(line_with(s, "2/2"), "scale"), "screen:\n%s", s);
    e2e_wait(run, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(run, 0, "dynrec run view_sizes.py go");
    wait_for("[complete]", 30000);
    /* the new rows open like any others */
    keys((const char *[]){"G", "Enter", NULL});
    s = wait_for("Failed guard", 30000);
    cr_assert(strstr(s, "Recompile ") && strstr(s, "expected 4, actual 5"), "screen:\n%s", s);
    tmux_kill();
}

Test(view, each_known_pattern_gets_its_hint) {
    need_tmux();
    e2e_copy_script("view_patterns.py");
    E2eProc *r =
        e2e_record("T.db", (const char *[]){"view_patterns.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "dynrec run view_patterns.py");
    view_start(110, 70, "LANG=C.UTF-8", "T.db");
    char *s = wait_for("Recompiles", 20000);
    char *lim = line_with(s, "8/8"), *intr = line_with(s, "by_int");
    cr_assert(lim && strstr(lim, "LIMIT") && strstr(lim, "limit"), "limit frame marked:\n%s", s);
    cr_assert(intr && !strstr(intr, "LIMIT"), "only that frame:\n%s", s);
    static const struct {
        const char *search, *want[4];
    } cases[] = {
        {"n == 1",
         {"Hint (int specialisation", "1 at 0/0, 2 at 0/1", "torch.tensor(n)", "INT_GUARD"}},
        {"G['SCALE']",
         {"Hint (guard on a global variable", "2.0 at 1/0, 3.0 at 1/1", "Pass it as an argument",
          "GLOBAL_GUARD"}},
        {"self.training",
         {"Hint (nn.Module training flag", "True at 2/0, False at 2/1",
          "one compile for train() and one for eval()", "TRAINING_GUARD"}},
        {"GLOBAL_STATE",
         {"Hint (global state guard", "true at 3/0, false at 3/1",
          "changed between calls: grad_mode", "torch.no_grad()"}},
        {"4/8",
         {"Hint (recompile limit", "torch._dynamo.config.recompile_limit",
          "torch._dynamo.mark_dynamic(x, 0)", "8 at 4/7, 9 at 4/8"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        keys((const char *[]){"g", "/", NULL});
        type(cases[i].search);
        keys((const char *[]){"Enter", "Enter", NULL});
        s = wait_for("What to do", 20000);
        for (int k = 0; k < 4; k++) {
            const char *w = cases[i].want[k];
            if (strstr(w, "_GUARD")) {
                char *l = line_with2(s, w, " | ");
                cr_assert(l && strstr(l, " > "), "%s: the guarding line marked:\n%s",
                          cases[i].search, s);
            } else {
                cr_assert(strstr(s, w), "%s: wants \"%s\":\n%s", cases[i].search, w, s);
            }
        }
        keys((const char *[]){"Escape", NULL});
        wait_for("failed guard", 20000);
    }
    tmux_kill();
}

/* Sets, in a copy of a recorded trace, every string equal to from to the
 * bytes to (n bytes, stored as TEXT as a hostile writer could). */
static void poke_string(const char *db, const char *from, const char *to, int n) {
    sqlite3 *h = NULL;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    cr_assert_eq(
        sqlite3_prepare_v2(h, "UPDATE strings SET text = ?1 WHERE text = ?2", -1, &st, NULL),
        SQLITE_OK, "%s", sqlite3_errmsg(h));
    sqlite3_bind_text(st, 1, to, n, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, from, -1, SQLITE_TRANSIENT);
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE, "%s", sqlite3_errmsg(h));
    cr_assert_gt(sqlite3_changes(h), 0, "no string '%s' in %s", from, db);
    sqlite3_finalize(st);
    sqlite3_close(h);
}

static E2eProc *dump(const char *lang, const char *screen_name, const char *db) {
    setenv("LANG", lang, 1);
    unsetenv("LC_ALL");
    unsetenv("LC_CTYPE");
    return e2e_run((const char *[]){e2e_bin, "view", "--dump-first-screen", "--screen", screen_name,
                                    db, NULL});
}

Test(view, control_bytes_invalid_utf8_and_long_lines_from_a_modified_trace) {
    record_sizes();
    size_t len = 0;
    char *t = e2e_slurp(e2e_path("T.db"), &len);
    cr_assert_not_null(t);
    e2e_write_file(e2e_path("H.db"), t, len);
    /* the frame's name: ESC [2J, an invalid byte, a bidi override, a C1 CSI,
     * and a non-ASCII letter */
    static const char evil[] = "s\x1b[2J\xff\xe2\x80\xae\xc2\x9b\xc3\xa9";
    poke_string(e2e_path("H.db"), "scale", evil, (int)sizeof evil - 1);
    /* a guard failure reason of 5000 columns */
    char *reason = e2e_own(malloc(5001));
    memset(reason, 'A', 5000);
    reason[5000] = 0;
    DrTrace *tr = e2e_open(e2e_path("H.db"));
    char *r1 = e2e_sql(tr, "SELECT reason FROM v_guard_failures ORDER BY seq LIMIT 1");
    e2e_close(tr);
    poke_string(e2e_path("H.db"), r1, reason, 5000);
    static const char *names[] = {"recompiles", "frames", "compiles",   "breaks",
                                  "errors",     "graphs", "speculation"};
    int shown = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        E2eProc *v = dump("C.UTF-8", names[i], "H.db");
        e2e_assert_exit(v, 0, names[i]);
        const unsigned char *o = (const unsigned char *)v->out.data;
        for (size_t k = 0; o[k]; k++) {
            cr_assert(o[k] != 0x1b && o[k] != 0x07 && o[k] != 0xff && o[k] != 0x9b,
                      "%s: a raw byte 0x%02x reached the output:\n%s", names[i], o[k], o);
            cr_assert(!(o[k] == 0xe2 && o[k + 1] == 0x80 && o[k + 2] == 0xae),
                      "%s: a raw bidi override reached the output", names[i]);
        }
        for (const char *p = v->out.data; *p;) {
            size_t n = strcspn(p, "\n");
            cr_assert_leq(n, 100 + 1 /* the one 2-byte letter */, "%s: a line of %zu bytes",
                          names[i], n);
            p += n + (p[n] != 0);
        }
        if (strstr(v->out.data, "s^[[2J\\xff\\u202e\\u009b\xc3\xa9")) shown++;
    }
    cr_assert_geq(shown, 1, "the name shown escaped in full on the frames screen");
    /* outside a UTF-8 locale even the letter is escaped: plain ASCII */
    E2eProc *c = dump("C", "frames", "H.db");
    e2e_assert_exit(c, 0, "LANG=C");
    cr_assert(strstr(c->out.data, "s^[[2J\\xff\\u202e\\u009b\\u00e9"), "%s", c->out.data);
    for (const char *p = c->out.data; *p; p++)
        cr_assert((unsigned char)*p < 0x80, "ASCII only:\n%s", c->out.data);
}

Test(view, resizing_redraws_at_the_new_size) {
    need_tmux();
    record_sizes();
    view_start(120, 40, "LANG=C.UTF-8", "T.db");
    char *s = wait_for("Recompiles", 20000);
    Tmux r = tmux((const char *[]){"resize-window", "-t", "v", "-x", "80", "-y", "24", NULL});
    cr_assert_eq(r.status, 0, "tmux resize-window failed");
    int64_t end = e2e_now_ms() + 20000;
    for (;;) {
        s = screen();
        int lines = 0;
        const char *last = s;
        for (const char *p = s; *p; p++)
            if (*p == '\n' && p[1]) lines++, last = p + 1;
        char *title = line_with(s, "[complete]");
        if (lines + 1 == 24 && strstr(last, "row 1/2") && title && strlen(title) == 80) break;
        cr_assert(e2e_now_ms() < end, "not redrawn at 80x24:\n%s", s);
        e2e_sleep_ms(100);
    }
    tmux_kill();
}

Test(view, colour_only_without_no_color) {
    need_tmux();
    record_sizes();
    view_start(100, 30, "LANG=C.UTF-8 TERM=screen", "T.db");
    wait_for("Recompiles", 20000);
    Tmux p = tmux((const char *[]){"capture-pane", "-p", "-e", "-t", "v", NULL});
    cr_assert(strstr(p.out, "44m") || strstr(p.out, ";44"), "the header in colour:\n%s", p.out);
    tmux_kill();
}

Test(view, no_color_means_no_colour) {
    need_tmux();
    record_sizes();
    view_start(100, 30, "LANG=C.UTF-8 TERM=screen NO_COLOR=1", "T.db");
    wait_for("Recompiles", 20000);
    keys((const char *[]){"Enter", NULL});
    wait_for("Value history", 20000);
    Tmux p = tmux((const char *[]){"capture-pane", "-p", "-e", "-t", "v", NULL});
    static const char *colours[] = {"31m", "32m", "33m", "34m", "36m", "44m", ";3", ";4"};
    for (size_t i = 0; i < sizeof colours / sizeof *colours; i++)
        cr_assert(!strstr(p.out, colours[i]), "no colour (%s):\n%s", colours[i], p.out);
    cr_assert(strstr(p.out, "\x1b[7m"), "reverse video still marks the bars:\n%s", p.out);
    tmux_kill();
}

Test(view, sigterm_restores_the_terminal) {
    need_tmux();
    record_sizes();
    view_start(100, 30, "LANG=C.UTF-8", "T.db");
    wait_for("Recompiles", 20000);
    /* the pane runs sh, whose child is the viewer */
    Tmux p = tmux((const char *[]){"list-panes", "-t", "v", "-F", "#{pane_pid}", NULL});
    int sh = atoi(p.out);
    cr_assert_gt(sh, 0, "pane pid: %s", p.out);
    char *kids = e2e_slurp(e2e_fmt("/proc/%d/task/%d/children", sh, sh), NULL);
    int viewer = kids ? atoi(kids) : 0;
    cr_assert_gt(viewer, 0, "the viewer under the pane's shell: %s", kids ? kids : "?");
    cr_assert_eq(kill(viewer, SIGTERM), 0);
    char *s = wait_for("view exited", 30000);
    cr_assert(strstr(s, "view exited 143"), "128 + SIGTERM:\n%s", s);
    cr_assert(!strstr(s, "Recompiles"), "the viewer's screen is gone:\n%s", s);
}

Test(view, speculation_timeline_and_graph_code) {
    need_tmux();
    e2e_copy_example("cond_side_effect.py");
    E2eProc *r = e2e_record("T.db", (const char *[]){"cond_side_effect.py", NULL}, NULL,
                            E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "dynrec run cond_side_effect.py");
    view_start(120, 40, "LANG=C.UTF-8", "--screen speculation T.db");
    wait_for("Speculation:", 20000);
    keys((const char *[]){"/", NULL});
    type("Unsafe side effect");
    keys((const char *[]){"Enter", "Enter", NULL});
    char *s = wait_for("Speculation of compile", 20000);
    /* the side effect the failed branch dropped, right under its rollback:
     * no other step between them */
    const char *rb = strstr(s, "rollback   branch true_fn");
    const char *drop = rb ? strstr(rb, "dropped side effect: list G['log'] append") : NULL;
    cr_assert(rb && drop, "a rollback with the dropped append:\n%s", s);
    char *between = e2e_fmt("%.*s", (int)(drop - rb), rb);
    cr_assert(!strstr(between, "checkpoint") && !strstr(between, "merge") &&
                  !strstr(between + 1, "rollback"),
              "right under it:\n%s", s);
    /* graphs: the FX code from its blob */
    keys((const char *[]){"Escape", "6", "Enter", NULL});
    s = wait_for("FX graph code", 20000);
    cr_assert(strstr(s, "def forward"), "the graph's code:\n%s", s);
    cr_assert(strstr(s, "Inputs ("), "its inputs:\n%s", s);
    tmux_kill();
}

/* dr_safe (schema/text.c), the one gate between the trace and the terminal, on its own. */
Test(view, safe_text_escapes_everything_a_terminal_would_obey) {
    static const struct {
        const char *in, *utf8, *ascii;
    } cases[] = {
        {"plain text", "plain text", "plain text"},
        {"\x1b[2Jclear", "^[[2Jclear", "^[[2Jclear"},
        {"\x1b]52;c;aGk=\x07", "^[]52;c;aGk=^G", "^[]52;c;aGk=^G"},
        {"del\x7f", "del^?", "del^?"},
        {"csi\xc2\x9b"
         "2J",
         "csi\\u009b2J", "csi\\u009b2J"},    /* C1 CSI as UTF-8 */
        {"raw\x9b", "raw\\x9b", "raw\\x9b"}, /* C1 CSI as a byte */
        {"bad\xff\xfe", "bad\\xff\\xfe", "bad\\xff\\xfe"},
        {"over\xc0\xaf", "over\\xc0\\xaf", "over\\xc0\\xaf"}, /* overlong '/' */
        {"bidi\xe2\x80\xae"
         "evil",
         "bidi\\u202eevil", "bidi\\u202eevil"},
        {"caf\xc3\xa9", "caf\xc3\xa9", "caf\\u00e9"},
        {"a\tb", "a   b", "a   b"},
        {"one\ntwo", "one^Jtwo", "one^Jtwo"},
    };
    /* widths come from the locale, as in the viewer */
    cr_assert_not_null(setlocale(LC_ALL, "C.UTF-8"), "no C.UTF-8 locale");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        for (int ascii = 0; ascii < 2; ascii++) {
            dr_text_utf8 = !ascii;
            char *out = dr_safe(cases[i].in, strlen(cases[i].in), 0, 0);
            const char *want = ascii ? cases[i].ascii : cases[i].utf8;
            cr_assert_str_eq(out, want, "case %zu (%s)", i, ascii ? "ASCII" : "UTF-8");
            for (const unsigned char *p = (const unsigned char *)out; *p; p++)
                cr_assert(*p >= 0x20 && *p != 0x7f && (!ascii || *p < 0x80),
                          "case %zu: byte 0x%02x left in \"%s\"", i, *p, out);
            free(out);
        }
    }
    dr_text_utf8 = 1;
    /* cut after max_cols columns, "..." included */
    char *cut = dr_safe("abcdefghijklmnop", 16, 10, 0);
    cr_assert_str_eq(cut, "abcdefg...");
    free(cut);
    /* a first line only */
    char *first = dr_safe("first\nsecond", 12, 0, 1);
    cr_assert_str_eq(first, "first ...");
    free(first);
}
