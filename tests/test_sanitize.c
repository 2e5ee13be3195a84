#define _GNU_SOURCE 1
/* test_sanitize.c -- the one terminal sanitizer (schema/text.c) and every
 * command that prints trace text through it.
 *
 * A table of hostile inputs -> what dr_safe shows, each row also checked
 * through dr_text_safe (the same rule, to a stream) and for what no output
 * may carry: a byte under 0x20, DEL, a C1 control as UTF-8 (C2 80..9F), a
 * bidi control (E2 80 AA..AE, E2 81 A6..A9) or a byte that is not UTF-8.
 * The JSON writer's rows check that it escapes the same characters.
 *
 * Then one real recording, edited with SQLite to carry an OSC 52 clipboard
 * write, a screen clear, a C1 CSI, a bidi override and an invalid byte in
 * a qualname, guards, a file name and meta values, and every reader run
 * on it under a terminal (script(1)): show, show --json, report, diff,
 * sql (cells and column names, text and CSV), and the refusals of replay,
 * rerun and repro (none of which starts torch). */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../schema/json.h"
#include "../schema/text.h"
#include "e2e_util.h"

/* NULL when s (n bytes) carries nothing a terminal would obey, else what
 * it found. */
static const char *unsafe_in(const unsigned char *s, size_t n, int allow_nl) {
    for (size_t i = 0; i < n; i++) {
        unsigned c = s[i];
        if (c == '\n' && allow_nl) continue;
        if (c == '\r' && allow_nl) { /* a pty's CRLF (CSV's own CRLF: CR CR LF) */
            size_t k = i;
            while (k < n && s[k] == '\r') k++;
            if (k < n && s[k] == '\n') continue;
        }
        if (c < 0x20 || c == 0x7f) return "a C0 control or DEL";
        if (c == 0xc2 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f) return "a C1 control";
        if (c == 0xe2 && i + 2 < n && s[i + 1] == 0x80 && s[i + 2] >= 0xaa && s[i + 2] <= 0xae)
            return "a bidi embedding or override";
        if (c == 0xe2 && i + 2 < n && s[i + 1] == 0x81 && s[i + 2] >= 0xa6 && s[i + 2] <= 0xa9)
            return "a bidi isolate";
        if (c >= 0x80) {
            size_t len = 0;
            if (dr_utf8_decode(s + i, n - i, &len) < 0) return "a byte that is not UTF-8";
            i += len - 1;
        }
    }
    return NULL;
}

static char *to_stream(const char *in) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    dr_text_safe(f, in);
    cr_assert_eq(fclose(f), 0);
    return buf;
}

Test(sanitize, table_of_hostile_text) {
    static const struct {
        const char *in, *want;
    } rows[] = {
        {"plain text", "plain text"},
        {"esc\x1b", "esc^["},
        {"\x1b]52;c;aGk=\x07", "^[]52;c;aGk=^G"}, /* OSC 52: set the clipboard */
        {"\x1b[2Jclear", "^[[2Jclear"},           /* clear the screen */
        {"csi\xc2\x9b"
         "2J",
         "csi\\u009b2J"},        /* C1 CSI as UTF-8 */
        {"raw\x9b", "raw\\x9b"}, /* C1 CSI as a lone byte */
        {"bidi\xe2\x80\xae"
         "evil",
         "bidi\\u202eevil"},                                    /* right-to-left override */
        {"iso\xe2\x81\xa6x\xe2\x81\xa9", "iso\\u2066x\\u2069"}, /* bidi isolates */
        {"mark\xe2\x80\x8f", "mark\\u200f"},                    /* right-to-left mark */
        {"ls\xe2\x80\xa8ps\xe2\x80\xa9", "ls\\u2028ps\\u2029"},
        {"bad\xff\xfe", "bad\\xff\\xfe"},
        {"over\xc0\xaf", "over\\xc0\\xaf"},        /* overlong '/' */
        {"cut\xe2\x80", "cut\\xe2\\x80"},          /* truncated sequence */
        {"sur\xed\xa0\x80", "sur\\xed\\xa0\\x80"}, /* a surrogate */
        {"del\x7f", "del^?"},
        {"one\ntwo", "one^Jtwo"},
        {"a\tb", "a   b"},
        {"caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80", /* kept as it is */
         "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char *out = dr_safe(rows[i].in, strlen(rows[i].in), 0, 0);
        cr_assert_not_null(out);
        cr_assert_str_eq(out, rows[i].want, "row %zu", i);
        const char *bad = unsafe_in((const unsigned char *)out, strlen(out), 0);
        cr_assert_null(bad, "row %zu: %s left in \"%s\"", i, bad, out);
        char *streamed = to_stream(rows[i].in);
        cr_assert_str_eq(streamed, out, "row %zu: dr_text_safe and dr_safe differ", i);
        free(streamed);
        free(out);
    }
    /* a cut after max_cols columns, "..." included; a first line only */
    char *cut = dr_safe("abcdefghijklmnop", 16, 10, 0);
    cr_assert_str_eq(cut, "abcdefg...");
    free(cut);
    char *first = dr_safe("first\nsecond", 12, 0, 1);
    cr_assert_str_eq(first, "first ...");
    free(first);
    /* an escape is never cut in half */
    char *esc = dr_safe("ab\x1b[2J", 6, 6, 0);
    cr_assert_str_eq(esc, "ab...");
    free(esc);
    /* n bytes, stopping at a NUL; NULL is "" */
    char *part = dr_safe("abc\x1b", 3, 0, 0);
    cr_assert_str_eq(part, "abc");
    free(part);
    char *none = dr_safe(NULL, 0, 0, 0);
    cr_assert_str_eq(none, "");
    free(none);
    /* without UTF-8 every non-ASCII character is escaped */
    dr_text_utf8 = 0;
    char *ascii = dr_safe("caf\xc3\xa9", 5, 0, 0);
    dr_text_utf8 = 1;
    cr_assert_str_eq(ascii, "caf\\u00e9");
    free(ascii);
}

Test(sanitize, json_escapes_what_a_terminal_would_obey) {
    static const struct {
        const char *in, *want;
    } rows[] = {
        {"\x1b[2J", "\"\\u001b[2J\""},
        {"c1\xc2\x9b", "\"c1\\u009b\""},
        {"bidi\xe2\x80\xae", "\"bidi\\u202e\""},
        {"iso\xe2\x81\xa6", "\"iso\\u2066\""},
        {"ls\xe2\x80\xa8", "\"ls\\u2028\""},
        {"bad\xff", "\"bad\\ufffd\""},
        {"q\"b\\\n", "\"q\\\"b\\\\\\n\""},
        {"caf\xc3\xa9 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xf0\x9f\x98\x80\""}, /* kept */
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char *q = dr_json_quote(rows[i].in);
        cr_assert_not_null(q);
        cr_assert_str_eq(q, rows[i].want, "row %zu", i);
        const char *bad = unsafe_in((const unsigned char *)q, strlen(q), 0);
        cr_assert_null(bad, "row %zu: %s left in %s", i, bad, q);
        free(q);
    }
}

/* ---- every command, on a terminal ---------------------------------------- */

/* ESC ] 52 (clipboard) BEL, ESC [2J, C1 CSI, RLO, a byte that is not UTF-8. */
#define EVIL                                                                                       \
    "(char(27) || ']52;c;aGk=' || char(7) || char(27) || '[2J' || CAST(X'C29B' AS TEXT) || "       \
    "CAST(X'E280AE' AS TEXT) || CAST(X'FF' AS TEXT))"

static void exec_sql(sqlite3 *db, const char *sql) {
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    cr_assert_eq(rc, SQLITE_OK, "%s: %s", sql, msg ? msg : "?");
}

/* Runs `sh -c cmd` under script(1), so the command's stdout and stderr are
 * a terminal; returns what the terminal got. */
static E2eProc *on_terminal(const char *script, const char *cmd) {
    const char *env = e2e_asan ? "ASAN_OPTIONS=detect_leaks=0 " : "";
    char *line = e2e_fmt("cd %s && NO_COLOR=1 %s%s 2>&1", e2e_dir, env, cmd);
    return e2e_run_in((const char *[]){script, "-qec", line, "/dev/null", NULL}, NULL,
                      E2E_TORCH_TIMEOUT_MS);
}

static void assert_clean(const E2eProc *p, const char *what) {
    const char *bad = unsafe_in((const unsigned char *)p->out.data, p->out.len, 1);
    cr_assert_null(bad, "%s: %s reached the terminal:\n%s", what, bad, p->out.data);
}

Test(sanitize, no_command_prints_a_control_from_the_trace, .init = e2e_setup, .fini = e2e_teardown,
     .timeout = 300) {
    if (access("/usr/bin/script", X_OK) != 0) cr_skip_test("util-linux's script(1) is missing");
    const char *script = "/usr/bin/script";
    e2e_copy_example("quickstart.py");
    E2eProc *r =
        e2e_record("orig.db", (const char *[]){"quickstart.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "dynrec run quickstart.py");
    size_t len = 0;
    char *bytes = e2e_slurp(e2e_path("orig.db"), &len);
    e2e_write_file(e2e_path("evil.db"), bytes, len);

    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(e2e_path("evil.db"), &db), SQLITE_OK);
    /* the frame's qualname (also its code name), its guards, guard
     * failures and graph breaks, the stored script's name, meta values */
    exec_sql(db, "UPDATE strings SET text = 'st' || " EVIL " || 'ep' WHERE text = 'step'");
    exec_sql(db, "UPDATE strings SET text = text || " EVIL " WHERE id IN (SELECT text_id FROM "
                 "events WHERE kind_id IN (SELECT id FROM strings WHERE text IN ('guard', "
                 "'guard_failure', 'graph_break')))");
    exec_sql(db, "UPDATE strings SET text = 'quick' || " EVIL " || 'start.py' WHERE id IN "
                 "(SELECT path_id FROM files WHERE role_id = (SELECT id FROM strings WHERE "
                 "text = 'script'))");
    exec_sql(db, "UPDATE meta SET value = value || " EVIL " WHERE key IN ('exit_status', "
                 "'torch_version', 'hash_seed', 'hook.frame')");
    exec_sql(db, "UPDATE meta SET value = 'quick' || " EVIL " || 'start.py' WHERE key = 'script'");
    exec_sql(db, "INSERT OR REPLACE INTO meta(key, value) VALUES ('exit_signal', '15')");
    sqlite3_close(db);

    /* a query whose cells and column names carry controls */
    const char *q = "SELECT qualname AS \"name\x1b[31m\xc2\x9b\xe2\x80\xae\", char(27) || '[2J' "
                    "AS x FROM v_frames WHERE compiles > 0";
    e2e_write_file(e2e_path("q.sql"), q, strlen(q));

    const char *bin = e2e_bin;
    const struct {
        const char *what, *args;
        int want; /* exit status, -1: any */
    } cmds[] = {
        {"show", "show evil.db", 0},
        {"show --json", "show --json evil.db", 0},
        {"report", "report evil.db", 0},
        {"diff", "diff orig.db evil.db", -1},
        {"sql", "sql evil.db \"$(cat q.sql)\"", 0},
        {"sql --csv", "sql --csv evil.db \"$(cat q.sql)\"", 0},
        /* refusals: no torch starts */
        {"replay (a stored file not on disk)", "replay --no-sandbox evil.db", 77},
        {"rerun (the recorded script not there)", "rerun --trust evil.db", -1},
        {"repro (no such frame: the frames listed)", "repro --frame nosuch evil.db", -1},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *cmd = e2e_fmt("%s %s; echo \"[exit $?]\"", bin, cmds[i].args);
        E2eProc *p = on_terminal(script, cmd);
        e2e_assert_exit(p, 0, cmds[i].what);
        cr_assert_gt(p->out.len, 0, "%s printed nothing", cmds[i].what);
        assert_clean(p, cmds[i].what);
        if (cmds[i].want >= 0)
            cr_assert(strstr(p->out.data, e2e_fmt("[exit %d]", cmds[i].want)), "%s:\n%s",
                      cmds[i].what, p->out.data);
        /* the planted text is there, escaped: it was printed, not dropped */
        if (strcmp(cmds[i].what, "show --json") == 0)
            cr_assert(strstr(p->out.data, "\\u001b]52;c;aGk=\\u0007\\u001b[2J\\u009b\\u202e"),
                      "%s:\n%s", cmds[i].what, p->out.data);
        else if (strcmp(cmds[i].what, "report") != 0 && strcmp(cmds[i].what, "diff") != 0)
            /* (repro reads the trace as str, so its \xff came as U+FFFD) */
            cr_assert(strstr(p->out.data, "^[]52;c;aGk=^G^[[2J\\u009b\\u202e"), "%s:\n%s",
                      cmds[i].what, p->out.data);
    }
}
