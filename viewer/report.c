/* report.c -- `dynrec report trace.db`: Markdown to paste into a GitHub issue.
 *
 * Sections: versions (a table), what was run, a summary line, recompiles
 * with the guards that failed (top N frames), graph breaks, errors and
 * suppressed errors with the first lines of their tracebacks, the guards of
 * the most-recompiled frame inside <details>, and how to reproduce.
 *
 * Everything from the trace is untrusted text that a reader's browser will
 * render: inline text is backslash-escaped (every character CommonMark or
 * GitHub could read as markup, so no HTML, link, emphasis or table cell
 * boundary can be injected), long or multi-line text goes into fenced code
 * blocks whose fence is longer than any run of backticks in the text, text
 * inside our own <details> HTML is HTML-escaped, and all of it first goes
 * through the terminal sanitizer (schema/text.c: control, C1 and bidi
 * characters and invalid UTF-8 shown escaped), as a report is read on a
 * terminal as often as pasted.  Long lists are cut with a line saying how to see the rest
 * (`dynrec show`, `dynrec sql`). */
#define _GNU_SOURCE 1
#include "report.h"

#include <stdarg.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "../schema/text.h"

/* At most this many lines of a reason, message or traceback. */
#define TEXT_LINES 12
#define LIST_MAX 20

/* ---- Markdown ---------------------------------------------------------- */

static void clean_break(FILE *f, char c, int lines) {
    if (!lines) fputc(' ', f);
    else if (c != '\r') fputc(c, f);
}

/* s through the terminal sanitizer, malloc'd ("" when out of memory):
 * line breaks and tabs as spaces, or with lines kept as they are (tabs
 * too; a CR dropped). */
static char *clean(const char *s, int lines) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return strdup("");
    for (const char *p = s ? s : ""; *p;) {
        size_t run = strcspn(p, "\n\r\t");
        dr_text_safe_n(f, p, run);
        if (!p[run]) break;
        clean_break(f, p[run], lines);
        p += run + 1;
    }
    if (fclose(f) != 0 || !buf) {
        free(buf);
        return strdup("");
    }
    return buf;
}

/* Inline text: sanitised, markup characters backslash-escaped, line breaks
 * as spaces. */
static void md_text(FILE *f, const char *str) {
    if (!str) return;
    char *safe = clean(str, 0);
    for (const char *s = safe; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (strchr("\\`*_{}[]<>()#+-.!|~&=\"'$^:", c)) fputc('\\', f);
        fputc(c, f);
    }
    free(safe);
}

/* The longest run of c in s. */
static size_t longest_run(const char *s, char c) {
    size_t best = 0, run = 0;
    for (; s && *s; s++) {
        run = *s == c ? run + 1 : 0;
        if (run > best) best = run;
    }
    return best;
}

/* Inline code: delimited by one backtick more than the longest run in s,
 * padded with spaces (which CommonMark strips) so that a leading or
 * trailing backtick stays content. */
static void md_code(FILE *f, const char *str) {
    char *s = clean(str, 0);
    size_t n = longest_run(s, '`') + 1;
    for (size_t i = 0; i < n; i++) fputc('`', f);
    fputc(' ', f);
    if (s) fputs(s, f);
    fputc(' ', f);
    for (size_t i = 0; i < n; i++) fputc('`', f);
    free(s);
}

/* A fenced code block of the first max_lines lines of s (0: all), with a
 * note after it when lines were cut. */
static void md_block(FILE *f, const char *str, int max_lines) {
    char *safe = clean(str, 1);
    const char *s = safe ? safe : "";
    size_t n = longest_run(s, '`') + 1;
    if (n < 3) n = 3;
    for (size_t i = 0; i < n; i++) fputc('`', f);
    fputc('\n', f);
    int lines = 0, cut = 0;
    const char *p = s;
    while (*p) {
        if (max_lines && lines == max_lines) {
            cut = 1;
            break;
        }
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        fwrite(p, 1, len, f);
        fputc('\n', f);
        lines++;
        p += len + (nl ? 1 : 0);
    }
    for (size_t i = 0; i < n; i++) fputc('`', f);
    fputc('\n', f);
    if (cut) {
        int more = 0;
        for (; *p; p++) more += *p == '\n';
        if (p > s && p[-1] != '\n') more++;
        fprintf(f, "\n(%d more line%s)\n", more, more == 1 ? "" : "s");
    }
    fputc('\n', f);
    free(safe);
}

/* Text inside raw HTML (our <summary>, on the line that opens an HTML
 * block, where CommonMark reads no Markdown): HTML-escaped, one line. */
static void html_text(FILE *f, const char *str) {
    char *safe = clean(str, 0);
    for (const char *s = safe; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '&') fputs("&amp;", f);
        else if (c == '<') fputs("&lt;", f);
        else if (c == '>') fputs("&gt;", f);
        else if (c == '"') fputs("&quot;", f);
        else if (c == '\'') fputs("&#39;", f);
        else fputc(c, f);
    }
    free(safe);
}

/* ---- rows -------------------------------------------------------------- */

typedef struct {
    char **v; /* nrows * ncols, NULL for SQL NULL */
    int ncols;
    size_t nrows, cap;
    int oom;
} Rows;

static int collect(void *ud, int n, const char *const *names, const char *const *vals) {
    (void)names;
    Rows *r = ud;
    if (r->nrows == 0 && r->ncols == 0) r->ncols = n;
    if ((r->nrows + 1) * (size_t)n > r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        while (cap < (r->nrows + 1) * (size_t)n) cap *= 2;
        char **v = realloc(r->v, cap * sizeof *v);
        if (!v) return r->oom = 1;
        r->v = v;
        r->cap = cap;
    }
    for (int i = 0; i < n; i++) {
        char *s = vals[i] ? strdup(vals[i]) : NULL;
        if (vals[i] && !s) r->oom = 1;
        r->v[r->nrows * (size_t)n + (size_t)i] = s;
    }
    r->nrows++;
    return r->oom;
}

static void rows_free(Rows *r) {
    for (size_t i = 0; i < r->nrows * (size_t)r->ncols; i++) free(r->v[i]);
    free(r->v);
    memset(r, 0, sizeof *r);
}

static const char *cell(const Rows *r, size_t row, int c) {
    return r->v[row * (size_t)r->ncols + (size_t)c];
}

/* Runs an sqlite3_mprintf-formatted query into r. */
static int query(DrTrace *t, Rows *r, DrError *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *sql = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    memset(r, 0, sizeof *r);
    if (!sql) return dr_error(err, DR_ERR_NOMEM, "out of memory");
    int rc = dr_trace_query(t, sql, collect, r, err);
    sqlite3_free(sql);
    if (rc == DR_OK && r->oom) rc = dr_error(err, DR_ERR_NOMEM, "out of memory");
    if (rc != DR_OK) rows_free(r);
    return rc;
}

static long long count(DrTrace *t, const char *sql, DrError *err, int *rc) {
    char *v = NULL;
    if (*rc == DR_OK) *rc = dr_trace_query_text(t, sql, &v, err);
    long long n = v ? atoll(v) : 0;
    free(v);
    return n;
}

static char *meta(DrTrace *t, const char *key) {
    char *v = NULL;
    dr_trace_get_meta(t, key, &v, NULL);
    return v;
}

static const char *plural(long long n, const char *one, const char *many) {
    return n == 1 ? one : many;
}

/* "file.py:12" of a path (its last component) and a line. */
static char *location(const char *file, const char *line) {
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file ? file : "?";
    char *s = NULL;
    if (asprintf(&s, "%s:%s", base, line ? line : "?") < 0) return NULL;
    return s;
}

/* ---- sections ---------------------------------------------------------- */

static void versions(DrTrace *t, FILE *f) {
    char *torch = meta(t, "torch_version"), *py = meta(t, "python_version"),
         *writer = meta(t, "writer_version");
    if (py) py[strcspn(py, " ")] = 0; /* "3.11.7 (main, ...)" */
    struct utsname u;
    char plat[256] = "unknown";
    if (uname(&u) == 0) snprintf(plat, sizeof plat, "%s %s %s", u.sysname, u.release, u.machine);
    fputs("| | |\n|---|---|\n| torch | ", f);
    md_text(f, torch ? torch : "not recorded");
    fputs(" |\n| Python | ", f);
    md_text(f, py ? py : "not recorded");
    fputs(" |\n| dynrec | ", f);
    md_text(f, writer ? writer : "not recorded");
    if (!writer || strcmp(writer, DR_VERSION) != 0) {
        fputs(" \\(this report: ", f);
        md_text(f, DR_VERSION);
        fputs("\\)", f);
    }
    fputs(" |\n| platform | ", f);
    md_text(f, plat);
    fputs(" \\(where this report was made; the trace does not record it\\) |\n\n", f);
    free(torch);
    free(py);
    free(writer);
}

static int what_ran(DrTrace *t, FILE *f, DrError *err) {
    char *script = meta(t, "script"), *module = meta(t, "module"), *cwd = meta(t, "cwd"),
         *status = meta(t, "exit_status"), *sig = meta(t, "exit_signal"),
         *dur = meta(t, "duration_ns"), *stopped = meta(t, "stopped");
    char *args = NULL;
    int rc = dr_trace_query_text(t,
                                 "SELECT CASE WHEN json_valid(value) AND json_type(value) = "
                                 "'array' THEN (SELECT group_concat(CAST(j.value AS TEXT), ' ') "
                                 "FROM json_each(meta.value) j) END FROM meta WHERE key = 'argv'",
                                 &args, err);
    if (rc == DR_OK) {
        char *cmd = NULL;
        if (asprintf(&cmd, "python %s%s%s%s", module ? "-m " : "",
                     module   ? module
                     : script ? script
                              : "?",
                     args && *args ? " " : "", args ? args : "") < 0)
            cmd = NULL;
        fputs("**What was run:** ", f);
        md_code(f, cmd ? cmd : "?");
        if (cwd) {
            fputs(" in ", f);
            md_code(f, cwd);
        }
        if (sig) {
            fputs(", killed by signal ", f);
            md_text(f, sig);
        } else {
            fputs(", exit status ", f);
            md_text(f, status ? status : "not recorded");
        }
        if (dur) fprintf(f, ", %.1f s", atof(dur) / 1e9);
        if (!dr_trace_is_complete(t)) {
            fputs("; **the recording is incomplete**", f);
            if (stopped) {
                fputs(" \\(", f);
                md_text(f, stopped);
                fputs("\\)", f);
            }
        }
        fputs("\n\n", f);
        free(cmd);
    }
    free(args);
    free(script);
    free(module);
    free(cwd);
    free(status);
    free(sig);
    free(dur);
    free(stopped);
    return rc;
}

static int summary(DrTrace *t, FILE *f, DrError *err) {
    int rc = DR_OK;
    long long compiles = count(t, "SELECT count(*) FROM v_compiles", err, &rc);
    long long recompiles = count(t, "SELECT count(*) FROM v_compiles WHERE recompile", err, &rc);
    long long breaks = count(t, "SELECT count(*) FROM v_graph_breaks", err, &rc);
    long long errors = count(t, "SELECT count(*) FROM v_errors WHERE NOT suppressed", err, &rc);
    long long supp = count(t, "SELECT count(*) FROM v_errors WHERE suppressed", err, &rc);
    if (rc != DR_OK) return rc;
    fprintf(f, "**Summary:** %lld %s, %lld %s, %lld %s, %lld %s, %lld suppressed %s\n\n", compiles,
            plural(compiles, "compile", "compiles"), recompiles,
            plural(recompiles, "recompile", "recompiles"), breaks,
            plural(breaks, "graph break", "graph breaks"), errors,
            plural(errors, "error", "errors"), supp, plural(supp, "error", "errors"));
    return DR_OK;
}

/* Frames with recompiles, most first (code_id, qualname, filename, line, n). */
#define RECOMPILED_SQL                                                                             \
    "SELECT e.code_id, v.qualname, v.filename, v.firstlineno, count(*) AS n FROM v_ev e "          \
    "JOIN v_code v ON v.code_id = e.code_id WHERE e.kind = 'compile' AND "                         \
    "json_extract(e.data, '$.recompile') GROUP BY e.code_id ORDER BY n DESC, e.code_id LIMIT %d"

static int recompiles(DrTrace *t, FILE *f, int top, DrError *err) {
    Rows fr;
    int rc = query(t, &fr, err, RECOMPILED_SQL, top);
    if (rc != DR_OK) return rc;
    fputs("## Recompiles\n\n", f);
    if (fr.nrows == 0) fputs("None.\n\n", f);
    for (size_t i = 0; i < fr.nrows && rc == DR_OK; i++) {
        long long n = atoll(cell(&fr, i, 4));
        char *loc = location(cell(&fr, i, 2), cell(&fr, i, 3));
        fputs("### ", f);
        md_code(f, cell(&fr, i, 1));
        fputs(" at ", f);
        md_code(f, loc ? loc : "?");
        fprintf(f, ": %lld %s\n\n", n, plural(n, "recompile", "recompiles"));
        free(loc);
        Rows g;
        rc = query(t, &g, err,
                   "SELECT c.compile_id, c.text, g.failed_compile_id, g.reason FROM v_ev c "
                   "LEFT JOIN v_guard_failures g ON g.compile_id = c.compile_id "
                   "WHERE c.kind = 'compile' AND c.code_id = %lld AND "
                   "json_extract(c.data, '$.recompile') ORDER BY c.seq, g.seq LIMIT %d",
                   atoll(cell(&fr, i, 0)), LIST_MAX + 1);
        if (rc != DR_OK) break;
        for (size_t k = 0; k < g.nrows && k < LIST_MAX; k++) {
            fputs("Compile ", f);
            md_code(f, cell(&g, k, 0));
            if (cell(&g, k, 2)) {
                fputs(": the guards of cache entry ", f);
                md_code(f, cell(&g, k, 2));
                fputs(" failed:\n\n", f);
                md_block(f, cell(&g, k, 3), TEXT_LINES);
            } else {
                fputs(": no failing guard was recorded", f);
                if (cell(&g, k, 1)) {
                    fputs(" \\(", f);
                    md_text(f, cell(&g, k, 1));
                    fputs("\\)", f);
                }
                fputs("\n\n", f);
            }
        }
        if (g.nrows > LIST_MAX)
            fputs("More: `dynrec sql TRACE \"SELECT * FROM v_guard_failures\"`\n\n", f);
        rows_free(&g);
    }
    rows_free(&fr);
    return rc;
}

static int graph_breaks(DrTrace *t, FILE *f, DrError *err) {
    Rows g;
    int rc = query(t, &g, err,
                   "SELECT compile_id, qualname, filename, lineno, type, reason, "
                   "user_stack FROM v_graph_breaks ORDER BY seq LIMIT %d",
                   LIST_MAX + 1);
    if (rc != DR_OK) return rc;
    fputs("## Graph breaks\n\n", f);
    if (g.nrows == 0) fputs("None.\n\n", f);
    for (size_t k = 0; k < g.nrows && k < LIST_MAX; k++) {
        char *loc = location(cell(&g, k, 2), cell(&g, k, 3));
        fputs("### ", f);
        md_code(f, cell(&g, k, 1) ? cell(&g, k, 1) : "?");
        fputs(" at ", f);
        md_code(f, loc ? loc : "?");
        fputs(", compile ", f);
        md_code(f, cell(&g, k, 0));
        fputs("\n\n", f);
        free(loc);
        if (cell(&g, k, 4)) {
            fputs("Type: ", f);
            md_text(f, cell(&g, k, 4));
            fputs("\n\n", f);
        }
        md_block(f, cell(&g, k, 5), TEXT_LINES);
    }
    if (g.nrows > LIST_MAX)
        fputs("More: `dynrec sql TRACE \"SELECT * FROM v_graph_breaks\"`\n\n", f);
    rows_free(&g);
    return DR_OK;
}

static int errors(DrTrace *t, FILE *f, int suppressed, DrError *err) {
    Rows e;
    int rc = query(t, &e, err,
                   "SELECT compile_id, exc_type, message, traceback_blob FROM "
                   "v_errors WHERE %s suppressed ORDER BY seq LIMIT %d",
                   suppressed ? "" : "NOT", LIST_MAX + 1);
    if (rc != DR_OK) return rc;
    fputs(suppressed ? "## Suppressed errors\n\n" : "## Errors\n\n", f);
    if (suppressed && e.nrows)
        fputs("Dynamo fell back to running these frames without compiling them.\n\n", f);
    if (e.nrows == 0) fputs("None.\n\n", f);
    for (size_t k = 0; k < e.nrows && k < LIST_MAX; k++) {
        fputs("### ", f);
        md_code(f, cell(&e, k, 1) ? cell(&e, k, 1) : "exception");
        fputs(" in compile ", f);
        md_code(f, cell(&e, k, 0) ? cell(&e, k, 0) : "?");
        fputs("\n\n", f);
        md_block(f, cell(&e, k, 2), TEXT_LINES);
        if (cell(&e, k, 3)) {
            void *tb = NULL;
            size_t len = 0;
            DrError e2 = {0};
            if (dr_trace_read_blob(t, atoll(cell(&e, k, 3)), 0, &tb, &len, &e2) == DR_OK) {
                fputs("Traceback \\(first lines\\):\n\n", f);
                md_block(f, tb, TEXT_LINES);
            } else {
                fputs("The traceback is unreadable: ", f);
                md_text(f, e2.msg);
                fputs("\n\n", f);
            }
            free(tb);
        }
    }
    if (e.nrows > LIST_MAX) fputs("More: `dynrec sql TRACE \"SELECT * FROM v_errors\"`\n\n", f);
    rows_free(&e);
    return DR_OK;
}

static int guards(DrTrace *t, FILE *f, DrError *err) {
    Rows fr;
    int rc = query(t, &fr, err, RECOMPILED_SQL, 1);
    if (rc != DR_OK || fr.nrows == 0) {
        rows_free(&fr);
        return rc;
    }
    Rows c;
    /* The latest compile of that frame that has guards. */
    rc = query(t, &c, err,
               "SELECT g.compile_id, count(*) FROM v_guards g JOIN v_ev e ON e.kind = 'compile' "
               "AND e.compile_id = g.compile_id WHERE e.code_id = %lld GROUP BY g.compile_id "
               "ORDER BY max(e.seq) DESC LIMIT 1",
               atoll(cell(&fr, 0, 0)));
    if (rc == DR_OK && c.nrows) {
        Rows g;
        rc = query(t, &g, err, "SELECT guard FROM v_guards WHERE compile_id = %Q ORDER BY seq",
                   cell(&c, 0, 0));
        if (rc == DR_OK) {
            char *text = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&text, &len);
            if (m) {
                for (size_t k = 0; k < g.nrows; k++) {
                    const char *s = cell(&g, k, 0) ? cell(&g, k, 0) : "";
                    /* One guard a line. */
                    for (; *s; s++) fputc(*s == '\n' ? ' ' : *s, m);
                    fputc('\n', m);
                }
                if (fclose(m) != 0) free(text), text = NULL;
            }
            fputs("## Guards of the most-recompiled frame\n\n<details><summary>Guards of ", f);
            html_text(f, cell(&fr, 0, 1));
            fputs(", compile ", f);
            html_text(f, cell(&c, 0, 0));
            fprintf(f, " (%s guards)</summary>\n\n", cell(&c, 0, 1));
            md_block(f, text ? text : "", 0);
            fputs("</details>\n\n", f);
            free(text);
            rows_free(&g);
        }
    }
    rows_free(&c);
    rows_free(&fr);
    return rc;
}

static void reproduce(DrTrace *t, FILE *f) {
    const char *base = strrchr(dr_trace_path(t), '/');
    base = base ? base + 1 : dr_trace_path(t);
    char *text = NULL;
    if (asprintf(&text,
                 "dynrec show %s      # what Dynamo did, guard failures first\n"
                 "dynrec replay %s    # re-run Dynamo's tracing of every compile from the "
                 "trace alone\n"
                 "dynrec rerun %s     # re-run the program under the recorded conditions\n",
                 base, base, base) < 0)
        return;
    fputs("## How to reproduce\n\nThe trace is attached \\(", f);
    md_code(f, base);
    fputs(", written by `dynrec run`; `dynrec pack` makes a smaller, redacted copy to "
          "attach\\). With dynrec:\n\n",
          f);
    md_block(f, text, 0);
    free(text);
}

int dr_report(DrTrace *t, const DrReportOptions *o, FILE *out, DrError *err) {
    int top = o && o->top > 0 ? o->top : 5;
    char *script = meta(t, "script");
    if (!script) script = meta(t, "module");
    fputs("# torch\\.compile report: ", out);
    md_code(out, script ? script : "unknown program");
    fputs("\n\n", out);
    free(script);
    versions(t, out);
    int rc = what_ran(t, out, err);
    if (rc == DR_OK) rc = summary(t, out, err);
    if (rc == DR_OK) rc = recompiles(t, out, top, err);
    if (rc == DR_OK) rc = graph_breaks(t, out, err);
    if (rc == DR_OK) rc = errors(t, out, 0, err);
    if (rc == DR_OK) rc = errors(t, out, 1, err);
    if (rc == DR_OK) rc = guards(t, out, err);
    if (rc == DR_OK) reproduce(t, out);
    if (rc == DR_OK) fputs("<sub>Made by `dynrec report`.</sub>\n", out);
    return rc;
}
