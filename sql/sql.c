/* sql.c -- `dynrec sql trace.db "SELECT ..."`: one query on a trace.
 *
 * The trace is opened by dr_trace_open (read-only, defensive, no triggers,
 * the file's own views shadowed by TEMP ones); dynrec_text and dynrec_json
 * (sqlfuncs.c) are added to that connection.  A query must be one
 * statement that SQLite says does not write (sqlite3_stmt_readonly: this
 * refuses INSERT into a TEMP table too, which the read-only file would not),
 * and an authorizer refuses ATTACH and pragmas that change the connection
 * (trusted_schema, query_only, ...).  The whole result is rendered in
 * memory first, so an error in row 1000 leaves no half-written JSON or CSV
 * on stdout.  Text from the trace is untrusted: on a terminal, and in
 * aligned columns anywhere, it goes through the shared sanitizer
 * (dr_text_safe, schema/text.c); only a pipe gets the exact text. */
#define _GNU_SOURCE 1
#include "sql.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/json.h"
#include "../schema/text.h"
#include "sqlfuncs.h"

/* Pragmas that only read, allowed with an argument (table_info(x)). */
static const char *const read_pragmas[] = {
    "table_info",       "table_xinfo",     "index_list",  "index_info", "index_xinfo",
    "foreign_key_list", "integrity_check", "quick_check", "table_list", NULL,
};

static int authorize(void *ud, int action, const char *a1, const char *a2, const char *db,
                     const char *trigger) {
    (void)ud, (void)db, (void)trigger;
    if (action == SQLITE_ATTACH || action == SQLITE_DETACH) return SQLITE_DENY;
    if (action == SQLITE_PRAGMA && a2) {
        for (int i = 0; read_pragmas[i]; i++)
            if (a1 && sqlite3_stricmp(a1, read_pragmas[i]) == 0) return SQLITE_OK;
        return SQLITE_DENY;
    }
    return SQLITE_OK;
}

/* ---- cells ------------------------------------------------------------- */

static void put_hex(FILE *f, const unsigned char *p, int n) {
    for (int i = 0; i < n; i++) fprintf(f, "%02x", p[i]);
}

/* Writes n bytes of s: the runs between line breaks, tabs and NULs
 * sanitised when safe (else as they are); each of those bytes goes to brk. */
static void put_runs(FILE *f, const char *s, int n, int safe, const char *breaks,
                     void (*brk)(FILE *, char, void *), void *ud) {
    for (int k = 0; k < n;) {
        int run = k;
        while (run < n && s[run] && !strchr(breaks, s[run])) run++;
        if (safe) dr_text_safe_n(f, s + k, (size_t)(run - k));
        else fwrite(s + k, 1, (size_t)(run - k), f);
        if (run == n) break;
        brk(f, s[run], ud);
        k = run + 1;
    }
}

typedef struct {
    int one_col, safe;
} CellCtx;

static void cell_break(FILE *f, char c, void *ud) {
    const CellCtx *x = ud;
    if (c == 0 && x->safe) fputs("^@", f);
    else if (c == 0) fputc(0, f);
    else if (x->one_col) fputc(c, f);
    else fputs(c == '\n' ? "\\n" : "\\t", f);
}

/* The display text of column i (text output), malloc'd.  Multi-column
 * output escapes newlines and tabs so rows stay one line; a single column
 * keeps them.  The rest is sanitised on a terminal and in multi-column
 * output (alignment); a single column into a pipe gets the exact text. */
static char *cell_text(sqlite3_stmt *st, int i, int one_col, int terminal) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    int type = sqlite3_column_type(st, i);
    if (type == SQLITE_NULL) {
        fputs("NULL", f);
    } else if (type == SQLITE_BLOB) {
        int n = sqlite3_column_bytes(st, i);
        const unsigned char *p = sqlite3_column_blob(st, i);
        if (n <= 32) {
            fputs("x'", f);
            put_hex(f, p, n);
            fputc('\'', f);
        } else {
            fprintf(f, "<blob, %d bytes>", n);
        }
    } else {
        const char *s = (const char *)sqlite3_column_text(st, i);
        int n = sqlite3_column_bytes(st, i);
        CellCtx x = {one_col, terminal || !one_col};
        if (s) put_runs(f, s, n, x.safe, "\n\t", cell_break, &x);
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Width in code points (continuation bytes of UTF-8 do not count). */
static size_t width(const char *s) {
    size_t w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void put_padded(FILE *f, const char *s, size_t w, int last) {
    fputs(s, f);
    if (last) return;
    for (size_t k = width(s); k < w; k++) fputc(' ', f);
}

static void put_json_value(FILE *f, sqlite3_stmt *st, int i) {
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL: fputs("null", f); break;
    case SQLITE_INTEGER: fprintf(f, "%lld", (long long)sqlite3_column_int64(st, i)); break;
    case SQLITE_FLOAT: {
        double d = sqlite3_column_double(st, i);
        char num[40];
        snprintf(num, sizeof num, "%.15g", d); /* shortest that reads back the same */
        if (strtod(num, NULL) != d) snprintf(num, sizeof num, "%.17g", d);
        if (isfinite(d)) fputs(num, f);
        else fputs("null", f);
        break;
    }
    case SQLITE_BLOB:
        fputc('"', f);
        put_hex(f, sqlite3_column_blob(st, i), sqlite3_column_bytes(st, i));
        fputc('"', f);
        break;
    default: dr_json_string(f, (const char *)sqlite3_column_text(st, i));
    }
}

static void csv_break(FILE *f, char c, void *ud) {
    if (c == '"') fputs("\"\"", f);
    else if (c == 0 && *(const int *)ud) fputs("^@", f);
    else fputc(c, f);
}

/* RFC 4180: a field with a comma, quote, CR or LF (or leading or trailing
 * space, which some readers strip) is quoted, quotes doubled. */
static void put_csv_text(FILE *f, const char *s, int n, int terminal) {
    int quote = n > 0 && (s[0] == ' ' || s[n - 1] == ' ');
    for (int k = 0; k < n && !quote; k++)
        quote = s[k] == ',' || s[k] == '"' || s[k] == '\r' || s[k] == '\n';
    for (int k = 0; k < n && !quote && terminal; k++)
        quote = (unsigned char)s[k] < 0x20 || s[k] == 0x7f;
    if (!quote) {
        fwrite(s, 1, (size_t)n, f);
        return;
    }
    fputc('"', f);
    /* On a terminal the text is sanitised but its newlines (a CR shows as
     * ^M: it could hide what went before it on the line). */
    put_runs(f, s, n, terminal, terminal ? "\"\n" : "\"\r\n", csv_break, &terminal);
    fputc('"', f);
}

static void put_csv_value(FILE *f, sqlite3_stmt *st, int i, int terminal) {
    int type = sqlite3_column_type(st, i);
    if (type == SQLITE_NULL) return;
    if (type == SQLITE_BLOB) {
        put_hex(f, sqlite3_column_blob(st, i), sqlite3_column_bytes(st, i));
        return;
    }
    const char *s = (const char *)sqlite3_column_text(st, i);
    put_csv_text(f, s ? s : "", sqlite3_column_bytes(st, i), terminal);
}

/* ---- the query --------------------------------------------------------- */

typedef struct {
    char **cells; /* rows * ncols, row-major (text output only) */
    size_t n, cap;
} Cells;

static int cells_add(Cells *c, char *s) {
    if (!s) return -1;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        char **p = realloc(c->cells, cap * sizeof *p);
        if (!p) {
            free(s);
            return -1;
        }
        c->cells = p;
        c->cap = cap;
    }
    c->cells[c->n++] = s;
    return 0;
}

static void render_text(FILE *f, const Cells *c, int ncols) {
    size_t *w = calloc((size_t)ncols, sizeof *w);
    if (!w) return;
    for (size_t k = 0; k < c->n; k++) {
        size_t cw = width(c->cells[k]);
        if (cw > w[k % (size_t)ncols]) w[k % (size_t)ncols] = cw;
    }
    size_t rows = c->n / (size_t)ncols;
    for (size_t r = 0; r < rows; r++) {
        for (int i = 0; i < ncols; i++) {
            if (i) fputs("  ", f);
            put_padded(f, c->cells[r * (size_t)ncols + (size_t)i], w[i], i == ncols - 1);
        }
        fputc('\n', f);
        if (r == 0 && ncols > 1) { /* under the header */
            for (int i = 0; i < ncols; i++) {
                if (i) fputs("  ", f);
                for (size_t k = 0; k < (w[i] ? w[i] : 1); k++) fputc('-', f);
            }
            fputc('\n', f);
        }
    }
    free(w);
}

/* Checks what follows the statement: only spaces and comments. */
static int single_statement(sqlite3 *db, const char *tail) {
    sqlite3_stmt *st = NULL;
    const char *rest = NULL;
    int rc = sqlite3_prepare_v2(db, tail, -1, &st, &rest);
    int ok = rc == SQLITE_OK && st == NULL;
    sqlite3_finalize(st);
    return ok;
}

static int sql_error(DrTrace *t, int rc, DrError *err) {
    /* The query budget (schema/trace.c) says so itself: exit 65. */
    if ((rc & 0xff) == SQLITE_INTERRUPT) return dr_trace_sql_error(t, rc, "running the query", err);
    sqlite3 *db = dr_trace_sqlite(t);
    const char *msg = sqlite3_errmsg(db);
    int code = (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB ? DR_ERR_CORRUPT
               : (rc & 0xff) == SQLITE_NOMEM                                 ? DR_ERR_NOMEM
               : (rc & 0xff) == SQLITE_IOERR                                 ? DR_ERR_IO
                                                                             : DR_ERR_SQL;
    if (code == DR_ERR_CORRUPT)
        return dr_error(err, code, "%s: the trace is truncated or corrupt (%s); record it again",
                        dr_trace_path(t), msg);
    if ((rc & 0xff) == SQLITE_AUTH)
        return dr_error(err, DR_ERR_ARG,
                        "%s: the query is refused: dynrec sql reads one trace "
                        "and changes nothing (no ATTACH, no pragma that sets a value)",
                        dr_trace_path(t));
    return dr_error(err, code, "%s: %s", dr_trace_path(t), msg);
}

int dr_sql_run(DrTrace *t, const char *query, const DrSqlOptions *o, FILE *out, DrError *err) {
    sqlite3 *db = dr_trace_sqlite(t);
    int rc = dr_sqlfuncs_register(db);
    if (rc != SQLITE_OK)
        return dr_error(err, DR_ERR_SQL, "%s: cannot add the SQL functions: %s", dr_trace_path(t),
                        sqlite3_errstr(rc));
    if ((rc = sqlite3_set_authorizer(db, authorize, NULL)) != SQLITE_OK)
        return dr_error(err, DR_ERR_SQL, "%s: cannot set the authorizer: %s", dr_trace_path(t),
                        sqlite3_errstr(rc));
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    rc = sqlite3_prepare_v2(db, query, -1, &st, &tail);
    int status = DR_OK;
    char *buf = NULL;
    size_t buflen = 0;
    FILE *f = NULL;
    Cells cells = {0};
    if (rc != SQLITE_OK) {
        status = sql_error(t, rc, err);
        goto done;
    }
    if (!st) {
        status = dr_error(err, DR_ERR_ARG, "the query is empty: give one SQL statement");
        goto done;
    }
    if (!single_statement(db, tail)) {
        status = dr_error(err, DR_ERR_ARG,
                          "give one SQL statement, not several (or remove "
                          "what follows the first ';')");
        goto done;
    }
    if (!sqlite3_stmt_readonly(st)) {
        status = dr_error(err, DR_ERR_ARG,
                          "%s: the statement would write; dynrec sql opens the "
                          "trace read-only and runs queries that only read (use sqlite3 on a "
                          "copy to change it)",
                          dr_trace_path(t));
        goto done;
    }
    if (!(f = open_memstream(&buf, &buflen))) {
        status = dr_error(err, DR_ERR_NOMEM, "out of memory");
        goto done;
    }
    int ncols = sqlite3_column_count(st);
    int one_col = ncols == 1;
    if (o->format == DR_SQL_JSON) fputc('[', f);
    for (int i = 0; i < ncols; i++) {
        const char *name = sqlite3_column_name(st, i);
        if (!name) name = "";
        if (o->format == DR_SQL_CSV) {
            if (i) fputc(',', f);
            put_csv_text(f, name, (int)strlen(name), o->terminal);
        } else if (o->format == DR_SQL_TEXT) {
            char *h = NULL;
            size_t hl = 0;
            FILE *hf = open_memstream(&h, &hl);
            if (hf) {
                if (o->terminal) dr_text_safe(hf, name);
                else fputs(name, hf);
                if (fclose(hf) != 0) free(h), h = NULL;
            }
            if (cells_add(&cells, h) != 0) {
                status = dr_error(err, DR_ERR_NOMEM, "out of memory");
                goto done;
            }
        }
    }
    if (o->format == DR_SQL_CSV && ncols) fputs("\r\n", f);
    long nrows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (o->format == DR_SQL_JSON) {
            fputs(nrows ? ",\n  {" : "\n  {", f);
            for (int i = 0; i < ncols; i++) {
                if (i) fputs(", ", f);
                dr_json_string(f, sqlite3_column_name(st, i));
                fputs(": ", f);
                put_json_value(f, st, i);
            }
            fputc('}', f);
        } else if (o->format == DR_SQL_CSV) {
            for (int i = 0; i < ncols; i++) {
                if (i) fputc(',', f);
                put_csv_value(f, st, i, o->terminal);
            }
            fputs("\r\n", f);
        } else {
            for (int i = 0; i < ncols; i++)
                if (cells_add(&cells, cell_text(st, i, one_col, o->terminal)) != 0) {
                    status = dr_error(err, DR_ERR_NOMEM, "out of memory");
                    goto done;
                }
        }
        nrows++;
    }
    if (rc != SQLITE_DONE) {
        status = sql_error(t, rc, err);
        goto done;
    }
    if (o->format == DR_SQL_JSON) fputs(nrows ? "\n]\n" : "]\n", f);
    if (o->format == DR_SQL_TEXT && ncols) render_text(f, &cells, ncols);
    if (fclose(f) != 0) {
        f = NULL;
        status = dr_error(err, DR_ERR_NOMEM, "out of memory");
        goto done;
    }
    f = NULL;
    if (buflen && fwrite(buf, 1, buflen, out) != buflen)
        status = dr_error(err, DR_ERR_IO, "cannot write the result");
done:
    if (f) fclose(f);
    free(buf);
    for (size_t k = 0; k < cells.n; k++) free(cells.cells[k]);
    free(cells.cells);
    rc = sqlite3_finalize(st);
    (void)rc; /* an error of the last step was reported above */
    sqlite3_set_authorizer(db, NULL, NULL);
    return status;
}
