/* test_view.c -- `dynrec view` end to end, driven through tmux.
 *
 * Each test records a real script with the real binary (real torch.compile),
 * starts the viewer in a detached tmux session of a fixed size on its own
 * socket, sends keys and asserts on the text of the pane (capture-pane -p).
 * The pane runs `dynrec view ...; echo "view exited $?"; sleep`, so that a
 * test sees the exit status and what the terminal shows after the viewer
 * left.  Tests skip, saying why, only when tmux is not installed. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

TestSuite(view, .init = e2e_setup, .fini = e2e_teardown, .timeout = 300);

static char tmux_bin[PATH_MAX];
static char sock[64]; /* this test's tmux socket (-L), unique per process */

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

/* Runs `tmux -L sock -f /dev/null args...` to the end and returns it. */
static E2eProc *tmux(const char *const *args) {
    const char *argv[32] = {tmux_bin, "-L", sock, "-f", "/dev/null"};
    int n = 5;
    for (int i = 0; args[i] && n < 31; i++) argv[n++] = args[i];
    argv[n] = NULL;
    return e2e_run_in(argv, NULL, E2E_TIMEOUT_MS);
}

static void tmux_kill(void) { tmux((const char *[]){"kill-server", NULL}); }

/* Starts `dynrec view ARGS` in a detached session of cols x rows, with the
 * environment env (a shell prefix such as "LANG=C.UTF-8"). */
static void view_start(int cols, int rows, const char *env, const char *args) {
    char *cmd = e2e_fmt("cd '%s' && env %s '%s' view %s; echo \"view exited $?\"; sleep 600",
                        e2e_dir, env, e2e_bin, args);
    char *x = e2e_fmt("%d", cols), *y = e2e_fmt("%d", rows);
    E2eProc *p = tmux((const char *[]){"new-session", "-d", "-s", "v", "-x", x, "-y", y, cmd,
                                       NULL});
    e2e_assert_exit(p, 0, "tmux new-session");
}

static char *screen(void) {
    E2eProc *p = tmux((const char *[]){"capture-pane", "-p", "-t", "v", NULL});
    e2e_assert_exit(p, 0, "tmux capture-pane");
    return p->out.data;
}

/* The pane's text once it contains want (the test fails after timeout_ms). */
static char *wait_for(const char *want, int timeout_ms) {
    int64_t end = e2e_now_ms() + timeout_ms;
    char *s;
    while (!strstr(s = screen(), want)) {
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
    e2e_assert_exit(tmux(argv), 0, "tmux send-keys");
}

/* Text typed literally (send-keys -l). */
static void type(const char *text) {
    e2e_assert_exit(tmux((const char *[]){"send-keys", "-t", "v", "-l", text, NULL}), 0,
                    "tmux send-keys -l");
}

static void record_sizes(void) {
    e2e_copy_script("view_sizes.py");
    E2eProc *r = e2e_record("T.db", (const char *[]){"view_sizes.py", NULL}, NULL,
                            E2E_TORCH_TIMEOUT_MS);
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

Test(view, enter_shows_the_guard_source_value_history_and_hint) {
    need_tmux();
    record_sizes();
    view_start(100, 60, "LANG=C.UTF-8", "T.db");
    wait_for("Recompiles", 20000);
    keys((const char *[]){"j", "Enter", NULL}); /* the recompile for size 5 */
    char *s = wait_for("Value history", 10000);
    /* the newest rejected entry expected 4 and saw 5 */
    cr_assert(strstr(s, "expected 4, actual 5"), "screen:\n%s", s);
    /* the guard's origin: the source line from the trace, highlighted */
    char *src = line_with(s, "SIZE_GUARD");
    cr_assert(src && strstr(src, ">") && strstr(src, "return (x * 2 + 1).sum()"),
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
    wait_for("failed guard", 5000);
    tmux_kill();
}

Test(view, tab_reaches_graph_breaks_with_source_context) {
    need_tmux();
    record_sizes();
    view_start(100, 40, "LANG=C.UTF-8", "T.db");
    wait_for("Recompiles", 20000);
    keys((const char *[]){"Tab", "Tab", "Tab", NULL});
    char *s = wait_for("Graph breaks", 5000);
    cr_assert(line_with(s, " step "), "a break in step:\n%s", s);
    keys((const char *[]){"Enter", NULL});
    s = wait_for("Source at", 5000);
    char *src = line_with(s, "GRAPH_BREAK");
    cr_assert(src && strstr(src, ">") && strstr(src, "torch._dynamo.graph_break()"),
              "the breaking line, marked:\n%s", s);
    /* number keys too */
    keys((const char *[]){"Escape", "3", NULL});
    s = wait_for("Compiles in order", 5000);
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
    wait_for("row 2/2", 5000);
    /* in a compile's page: a guard far below the first page */
    keys((const char *[]){"3", NULL});
    wait_for("Compiles in order", 5000);
    keys((const char *[]){"G", "Enter", NULL});
    char *s = wait_for("Compile ", 5000);
    cr_assert(!strstr(s, "DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_static"),
              "the guard is below the first page before the search:\n%s", s);
    keys((const char *[]){"/", NULL});
    type("_dynamo_static_indices");
    keys((const char *[]){"Enter", NULL});
    s = wait_for("_dynamo_static_indices", 5000);
    cr_assert(strstr(s, "DIMENSION_DYNAMIC_MARKING_GUARD"), "screen:\n%s", s);
    cr_assert(!strstr(s, "not found"), "screen:\n%s", s);
    keys((const char *[]){"/", NULL});
    type("no such guard anywhere");
    keys((const char *[]){"Enter", NULL});
    wait_for("not found: no such guard anywhere", 5000);
    tmux_kill();
}

Test(view, help_lists_the_keys_and_q_exits_zero_restoring_the_terminal) {
    need_tmux();
    record_sizes();
    view_start(80, 24, "LANG=C.UTF-8", "T.db");
    char *s = wait_for("Recompiles", 20000);
    cr_assert(line_with(s, "scale"), "80x24 shows the rows:\n%s", s);
    keys((const char *[]){"?", NULL});
    s = wait_for("dynrec view: keys", 5000);
    static const char *names[] = {"Up, k", "Down, j", "PgUp", "PgDn", "g, Home", "G, End",
                                  "Enter", "Esc", "Tab", "/", "n ", "N ", "?", "q "};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        cr_assert(strstr(s, names[i]), "help lists %s:\n%s", names[i], s);
    keys((const char *[]){"q", NULL});
    s = wait_for("view exited", 5000);
    cr_assert(strstr(s, "view exited 0"), "exit status 0:\n%s", s);
    cr_assert(!strstr(s, "dynrec view") && !strstr(s, "Recompiles"),
              "the viewer's screen is gone (terminal restored):\n%s", s);
    tmux_kill();
}

Test(view, escape_sequences_from_the_trace_are_neutralised) {
    need_tmux();
    e2e_copy_script("view_hostile.py");
    E2eProc *r = e2e_record("T.db", (const char *[]){"view_hostile.py", NULL}, NULL,
                            E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "dynrec run view_hostile.py");
    /* the trace really holds the raw bytes */
    DrTrace *t = e2e_open(e2e_path("T.db"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_errors WHERE instr(message, "
                                "char(27) || '[2J') AND instr(message, char(27) || ']52;')"), 1);
    e2e_close(t);
    view_start(100, 40, "LANG=C.UTF-8", "--screen errors T.db");
    char *s = wait_for("Errors inside Dynamo", 20000);
    keys((const char *[]){"Enter", NULL});
    s = wait_for("backend says", 5000);
    char *l = line_with(s, "backend says");
    cr_assert(strstr(l, "^[[2J^[]52;c;aGFja2Vk^G evil"), "shown escaped: %s", l);
    /* had ESC [2J reached the terminal the title would be gone; had OSC 52,
     * tmux would hold a paste buffer */
    cr_assert(strstr(s, "dynrec view") && strstr(s, "BackendCompilerFailed"), "screen:\n%s", s);
    E2eProc *b = tmux((const char *[]){"list-buffers", NULL});
    cr_assert(!strstr(b->out.data, "aGFja2Vk") && !strstr(b->out.data, "hacked"),
              "no clipboard buffer: %s", b->out.data);
    cr_assert_eq(strlen(b->out.data), 0, "no paste buffer at all: %s", b->out.data);
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
    const char *argv[] = {e2e_bin, "run", "-q", "-o", "T.db", "view_sizes.py",
                          e2e_path("go"), NULL};
    E2eProc *run = e2e_spawn(argv, NULL);
    cr_assert_eq(e2e_pump(run, e2e_now_ms() + E2E_TORCH_TIMEOUT_MS, "waiting"), 1,
                 "the script never reached its wait: %s", run->err.data);
    view_start(100, 30, "LANG=C.UTF-8", "--follow T.db");
    /* the recompile for size 4 is there, the one for 5 is not yet */
    char *s = wait_for("1/1", 20000);
    cr_assert(strstr(s, "[recording]"), "says recording:\n%s", s);
    cr_assert(!line_with(s, "2/2"), "no second recompile yet:\n%s", s);
    e2e_write_file(e2e_path("go"), "", 0);
    s = wait_for("2/2", 30000);
    cr_assert(line_with(s, "2/2") && strstr(line_with(s, "2/2"), "scale"), "screen:\n%s", s);
    e2e_wait(run, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(run, 0, "dynrec run view_sizes.py go");
    wait_for("[complete]", 10000);
    tmux_kill();
}
