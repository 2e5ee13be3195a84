/* test_escape.c -- unit tests of the escaping of trace text for other
 * formats: the JSON string writer (schema/json.c) and the Markdown and
 * HTML escaping of `dynrec report` (viewer/report.c), without torch.
 *
 * The JSON rows give input -> the exact quoted string; each output is also
 * read back by SQLite's JSON parser, which must find it valid and, for
 * valid UTF-8, decode it to the input (escaping loses nothing).  The
 * report's escapers are static: they are checked through dr_report on a
 * trace made here whose meta, qualname, reasons and guards carry markup,
 * fences and controls, asserting on the exact lines written. */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../schema/json.h"
#include "../viewer/report.h"
#include "trace.h"

/* ---- JSON strings ------------------------------------------------------------ */

/* SQLite's reading of the JSON string q: *valid, and the decoded text
 * (malloc'd) when valid. */
static char *json_decode(const char *q, int *valid) {
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    "SELECT json_valid('[' || ?1 || ']'),"
                                    " json_extract('[' || ?1 || ']', '$[0]')",
                                    -1, &st, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(db));
    sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    *valid = sqlite3_column_int(st, 0);
    const unsigned char *t = sqlite3_column_text(st, 1);
    char *out = *valid && t ? strdup((const char *)t) : NULL;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

static char *json_via_stream(const char *s) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    dr_json_string(f, s);
    cr_assert_eq(fclose(f), 0);
    return buf;
}

Test(escape, json_string_table) {
    static const struct {
        const char *in, *want;
        int utf8; /* the input is valid UTF-8: decoding gives it back */
    } rows[] = {
        {"", "\"\"", 1},
        {"plain text", "\"plain text\"", 1},
        /* what JSON requires */
        {"say \"hi\"", "\"say \\\"hi\\\"\"", 1},
        {"C:\\dir\\", "\"C:\\\\dir\\\\\"", 1},
        {"a\nb\tc\rd", "\"a\\nb\\tc\\rd\"", 1},
        {"\x01\x08\x0c\x1f", "\"\\u0001\\u0008\\u000c\\u001f\"", 1},
        {"esc\x1b[2J", "\"esc\\u001b[2J\"", 1},
        /* DEL, C1, bidi controls, marks and separators: what a terminal obeys */
        {"del\x7f", "\"del\\u007f\"", 1},
        {"nel\xc2\x85", "\"nel\\u0085\"", 1},
        {"rlo\xe2\x80\xae!", "\"rlo\\u202e!\"", 1},
        {"lri\xe2\x81\xa6", "\"lri\\u2066\"", 1},
        {"rlm\xe2\x80\x8f alm\xd8\x9c", "\"rlm\\u200f alm\\u061c\"", 1},
        {"ls\xe2\x80\xa8ps\xe2\x80\xa9", "\"ls\\u2028ps\\u2029\"", 1},
        /* other characters are kept as they are */
        {"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 /<>&'",
         "\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 /<>&'\"", 1},
        /* bytes that are not UTF-8: each U+FFFD, the rest kept */
        {"bad\xff", "\"bad\\ufffd\"", 0},
        {"\x80x", "\"\\ufffdx\"", 0},
        {"over\xc0\xaf", "\"over\\ufffd\\ufffd\"", 0},
        {"sur\xed\xa0\x80", "\"sur\\ufffd\\ufffd\\ufffd\"", 0},
        {"cut\xe2\x82", "\"cut\\ufffd\\ufffd\"", 0},
        {"cut4\xf0\x9f\x98", "\"cut4\\ufffd\\ufffd\\ufffd\"", 0},
        {"\xe2\x82"
         "a",
         "\"\\ufffd\\ufffda\"", 0},
        /* nesting: JSON text inside a JSON string, and quoted twice */
        {"{\"a\": [\"b\\\"c\", null]}", "\"{\\\"a\\\": [\\\"b\\\\\\\"c\\\", null]}\"", 1},
        {"\"\\u0041\"", "\"\\\"\\\\u0041\\\"\"", 1},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        char *q = dr_json_quote(rows[r].in);
        cr_assert_not_null(q);
        cr_expect_str_eq(q, rows[r].want, "row %zu: got %s", r, q);
        char *s = json_via_stream(rows[r].in);
        cr_expect_str_eq(s, q, "row %zu: dr_json_string and dr_json_quote differ", r);
        for (const unsigned char *p = (const unsigned char *)q; *p; p++)
            cr_expect(*p >= 0x20 && *p != 0x7f, "row %zu: a raw control 0x%02x", r, *p);
        int valid = 0;
        char *back = json_decode(q, &valid);
        cr_expect(valid, "row %zu: not valid JSON: %s", r, q);
        if (rows[r].utf8)
            cr_expect(back && strcmp(back, rows[r].in) == 0, "row %zu: decodes to %s", r,
                      back ? back : "(null)");
        free(back);
        free(s);
        free(q);
    }
    /* NULL is null */
    char *n = dr_json_quote(NULL);
    cr_assert_str_eq(n, "null");
    free(n);
    char *ns = json_via_stream(NULL);
    cr_assert_str_eq(ns, "null");
    free(ns);
}

/* Quoting a quoted string nests: decoding twice gives the text back. */
Test(escape, json_quoted_twice_decodes_twice) {
    const char *in = "x \"y\" \\ \n\x01 \xe2\x80\xae";
    char *q1 = dr_json_quote(in), *q2 = dr_json_quote(q1);
    cr_assert_not_null(q2);
    cr_expect_str_eq(q2, "\"\\\"x \\\\\\\"y\\\\\\\" \\\\\\\\ \\\\n\\\\u0001 \\\\u202e\\\"\"");
    int valid = 0;
    char *d1 = json_decode(q2, &valid);
    cr_assert(valid);
    cr_expect_str_eq(d1, q1);
    char *d2 = json_decode(d1, &valid);
    cr_assert(valid);
    cr_expect_str_eq(d2, in);
    free(d2);
    free(d1);
    free(q2);
    free(q1);
}

/* ---- the report's Markdown and HTML ------------------------------------------ */

static char escape_dir[64];

static void escape_setup(void) {
    snprintf(escape_dir, sizeof escape_dir, "/tmp/dynrec-test-escape-XXXXXX");
    cr_assert_not_null(mkdtemp(escape_dir), "mkdtemp failed");
}

static void escape_teardown(void) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/r.db", escape_dir);
    unlink(p);
    rmdir(escape_dir);
}

static void add(DrTrace *t, DrEvent ev) {
    DrError err = {0};
    cr_assert_gt(dr_trace_add_event(t, &ev, &err), 0, "%s", err.msg);
}

/* The report of a recompiled frame whose names, reasons and meta carry
 * what Markdown and HTML would read as markup. */
static char *hostile_report(void) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/r.db", escape_dir);
    DrError err = {0};
    DrTrace *t = dr_trace_create(path, 0, &err);
    cr_assert_not_null(t, "%s", err.msg);
    cr_assert_eq(dr_trace_begin(t, &err), DR_OK, "%s", err.msg);
    static const char *const meta[][2] = {
        {"script", "a`b<i>x</i>.py"},
        {"torch_version", "2.14*<b>_[l](u)|#!"},
        {"python_version", "3.11.7 (main)"},
        {"writer_version", DR_VERSION},
        {"cwd", "/w ``x``"},
        {"exit_signal", "9\nINJECTED <img>"},
        {"argv", "[\"--n\", \"1 ~~s~~\"]"},
    };
    for (size_t i = 0; i < sizeof meta / sizeof *meta; i++)
        cr_assert_eq(dr_trace_set_meta(t, meta[i][0], meta[i][1], &err), DR_OK, "%s", err.msg);
    int64_t code = dr_trace_add_code(t, "/w/m&n.py", "F<script>&\"'", 7, &err);
    cr_assert_gt(code, 0, "%s", err.msg);
    add(t, (DrEvent){.kind = "callback", .code_id = code, .thread = 1});
    add(t, (DrEvent){.kind = "compile",
                     .code_id = code,
                     .compile_id = "0/0",
                     .thread = 1,
                     .data = "{\"recompile\": 0, \"outcome\": \"compiled\"}"});
    add(t, (DrEvent){.kind = "guard",
                     .compile_id = "0/1",
                     .guard = 1,
                     .thread = 1,
                     .text = "TYPE_MATCH: ``` </details> \x1b[2J"});
    add(t, (DrEvent){.kind = "guard_failure",
                     .code_id = code,
                     .compile_id = "0/1",
                     .thread = 1,
                     .text = "0/0: size ````x````\n<b>bold</b>\n\x1b]52;c;aGk=\x07",
                     .data = "{\"failed_compile_id\": \"0/0\"}"});
    add(t, (DrEvent){.kind = "graph_break",
                     .code_id = code,
                     .compile_id = "0/1",
                     .thread = 1,
                     .num = 9,
                     .text = "call *x* <u>\n```\n</details>",
                     .data = "{\"type\": \"Un|supported_[x]\"}"});
    add(t, (DrEvent){.kind = "compile",
                     .code_id = code,
                     .compile_id = "0/1",
                     .thread = 1,
                     .data = "{\"recompile\": 1, \"outcome\": \"compiled\"}"});
    cr_assert_eq(dr_trace_commit(t, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(dr_trace_close(t, 1, &err), DR_OK, "%s", err.msg);
    DrTrace *r = dr_trace_open(path, &err);
    cr_assert_not_null(r, "%s", err.msg);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(dr_report(r, NULL, f, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(fclose(f), 0);
    dr_trace_free(r);
    return buf;
}

Test(escape, report_escapes_markdown_html_fences_and_controls, .init = escape_setup,
     .fini = escape_teardown) {
    char *md = hostile_report();
    static const char *const want[] = {
        /* inline code: one backtick more than the text's longest run, padded */
        "# torch\\.compile report: `` a`b<i>x</i>.py ``\n",
        " in ``` /w ``x`` ```",
        /* inline text: every markup character backslash-escaped, a line break a space */
        "| torch | 2\\.14\\*\\<b\\>\\_\\[l\\]\\(u\\)\\|\\#\\! |\n",
        ", killed by signal 9 INJECTED \\<img\\>",
        "`` python a`b<i>x</i>.py --n 1 ~~s~~ ``",
        "### ` F<script>&\"' ` at ` m&n.py:7 `: 1 recompile\n",
        "### ` F<script>&\"' ` at ` m&n.py:9 `, compile ` 0/1 `\n",
        "Type: Un\\|supported\\_\\[x\\]\n",
        /* fenced blocks: a fence longer than any run of backticks inside,
         * controls shown escaped */
        "\n`````\n0/0: size ````x````\n<b>bold</b>\n^[]52;c;aGk=^G\n`````\n",
        "\n````\ncall *x* <u>\n```\n</details>\n````\n",
        /* HTML inside our <summary>: escaped */
        "<details><summary>Guards of F&lt;script&gt;&amp;&quot;&#39;, compile 0/1 (1 guards)"
        "</summary>\n\n````\nTYPE_MATCH: ``` </details> ^[[2J\n````\n\n</details>\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_expect(strstr(md, want[i]), "line %zu not in the report:\n%s\n--- report:\n%s", i,
                  want[i], md);
    /* nothing from the trace reaches the report raw */
    cr_expect_null(strstr(md, "<img>"));
    cr_expect_null(strstr(md, "\x1b"));
    cr_expect_null(strstr(md, "\x07"));
    cr_expect_null(strstr(md, "<script>&\"'</summary>"));
    free(md);
}
