/* view_doc.c -- the viewer's detail pages and their hints (see view_int.h).
 *
 * Everything here treats the trace as hostile: each string goes through
 * dr_safe (schema/text.c) before it is stored in a document, so no byte of
 * the file can reach the terminal as a control sequence; blobs are read
 * with a cap.
 * The recompile page explains a guard failure: the rejected entries, the
 * guard that failed and where it came from in the user's code (with the
 * source stored in the trace), the guarded value across the frame's
 * compiles, and a hint from one table of known patterns. */
#define _GNU_SOURCE 1
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../schema/ident.h"
#include "view.h"
#include "view_int.h"

/* printf into a malloc'd SQL string (NULL when out of memory). */
__attribute__((format(printf, 1, 2))) static char *sqlf(const char *fmt, ...) {
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    return rc < 0 ? NULL : s;
}

/* A guard's text, source and user location: schema 3 keeps them in
 * guard_fields (text as a template over the source), older files in the
 * event's text and data (an empty TEMP guard_fields stands in there). */
#define GUARD_JOINS                                                                                \
    " LEFT JOIN guard_fields g ON g.seq = e.seq LEFT JOIN strings gs ON gs.id = g.source_id"       \
    " LEFT JOIN strings gl ON gl.id = g.location_id LEFT JOIN strings gt ON gt.id = g.text_id "
#define EV_TEXT "coalesce(s.text, replace(gt.text, char(1), coalesce(gs.text, '')))"
#define EV_DATA                                                                                    \
    "coalesce(d.text, CASE WHEN g.seq IS NOT NULL THEN json_object('source', gs.text,"             \
    " 'user_location', gl.text) END)"
#define GUARD_SOURCE "coalesce(gs.text, json_extract(d.text, '$.source'))"
#define GUARD_LOCATION "coalesce(gl.text, json_extract(d.text, '$.user_location'))"

static int rows_sqlf(DrTrace *t, VwRows *r, DrError *err, char *sql) {
    if (!sql) return dr_error(err, DR_ERR_NOMEM, "out of memory");
    int rc = vw_rows_query(t, sql, r, err);
    free(sql);
    return rc;
}

/* ---- sources stored in the trace ------------------------------------------ */

/* Caps on what one page decodes from a blob. */
#define SOURCE_CAP ((size_t)16 << 20)
#define BLOB_CAP ((size_t)8 << 20)

/* Adds the lines around line of path (as Dynamo wrote it: absolute,
 * relative, or cut from the left) from the sources stored in the trace,
 * the line itself highlighted.  Returns 1 when shown, 0 when the trace has
 * no such source. */
static int show_source(DrTrace *t, VwDoc *d, const char *path, long line, int ctx, DrError *err,
                       int *status) {
    if (!path || !*path || line <= 0) return 0;
    VwRows files = {0};
    int rc = vw_rows_query(t,
                           "SELECT path, blob_id FROM v_files WHERE role NOT IN "
                           "('stdout', 'stderr') ORDER BY rowid",
                           &files, err);
    if (rc != DR_OK) {
        *status = rc;
        return 0;
    }
    size_t plen = strlen(path);
    long long best = 0;
    size_t best_len = 0;
    const char *best_path = NULL;
    for (size_t i = 0; i < files.n; i++) {
        const char *fp = vw_cell(&files, i, 0);
        if (!fp) continue;
        size_t flen = strlen(fp), m = 0;
        /* One of the two ends the other at a path boundary (or the shorter
         * is Dynamo's left-cut location, which may start mid-name). */
        if (flen >= plen && strcmp(fp + flen - plen, path) == 0) m = plen;
        else if (plen >= flen && strcmp(path + plen - flen, fp) == 0 &&
                 (plen == flen || path[plen - flen - 1] == '/'))
            m = flen;
        if (m > best_len) {
            best_len = m;
            best = vw_cell_int(&files, i, 1);
            best_path = fp;
        }
    }
    int shown = 0;
    if (best > 0) {
        void *buf = NULL;
        size_t len = 0;
        DrError e2 = {0};
        if (dr_trace_read_blob(t, best, SOURCE_CAP, &buf, &len, &e2) != DR_OK) {
            vw_doc_addf(d, VA_ERR, "    (the source of %s is unreadable: %s)", best_path, e2.msg);
            shown = 1;
        } else {
            const char *p = buf;
            long ln = 1;
            while (p && ln <= line + ctx) {
                const char *nl = memchr(p, '\n', len - (size_t)(p - (const char *)buf));
                size_t n = nl ? (size_t)(nl - p) : len - (size_t)(p - (const char *)buf);
                if (ln >= line - ctx) {
                    char *safe = dr_safe(p, n, 2000, 0);
                    vw_doc_addf(d, ln == line ? VA_HI : VA_NORMAL, "  %s %5ld | %s",
                                ln == line ? ">" : " ", ln, safe ? safe : "");
                    free(safe);
                    shown = 1;
                }
                if (!nl) break;
                p = nl + 1;
                ln++;
            }
            if (!shown)
                vw_doc_addf(d, VA_DIM, "    (%s has no line %ld in the trace)", best_path, line);
            shown = 1;
        }
        free(buf);
    }
    vw_rows_free(&files);
    return shown;
}

/* "path:line in fn" (Dynamo's user location) -> path and line. */
static int parse_location(const char *loc, char *path, size_t cap, long *line) {
    if (!loc) return 0;
    const char *in = strstr(loc, " in ");
    size_t n = in ? (size_t)(in - loc) : strlen(loc);
    const char *colon = NULL;
    for (size_t i = 0; i < n; i++)
        if (loc[i] == ':') colon = loc + i;
    if (!colon || (size_t)(colon - loc) >= cap) return 0;
    *line = atol(colon + 1);
    snprintf(path, cap, "%.*s", (int)(colon - loc), loc);
    return *line > 0;
}

/* The innermost `File "path", line N` of a Python stack text. */
/* The frame of a "User stack trace:" to show: the innermost one in the
 * user's files (dr_is_library: not torch's, the standard library's or an
 * installed package's: the user's line that reached nn/modules/dropout.py),
 * else the innermost. */
static int parse_stack_file(const char *text, char *path, size_t cap, long *line) {
    int found = 0, user = 0;
    for (const char *p = text; p && (p = strstr(p, "File \"")); p++) {
        const char *q = strchr(p + 6, '"');
        if (!q || strncmp(q, "\", line ", 8) != 0) continue;
        if ((size_t)(q - p - 6) >= cap) continue;
        long at = atol(q + 8);
        if (at <= 0) continue;
        char file[1024];
        snprintf(file, sizeof file, "%.*s", (int)(q - p - 6), p + 6);
        int mine = !dr_is_library(file, NULL, 0);
        if (user && !mine) continue;
        snprintf(path, cap, "%s", file);
        *line = at;
        found = 1;
        user |= mine;
    }
    return found;
}

/* ---- recompile analysis and hints ----------------------------------------- */

/* What a guard failure reason says, as far as the known patterns go. */
enum { P_SIZE, P_TRAINING, P_INT, P_GLOBAL, P_STATE, P_LIMIT, P_OTHER };

typedef struct {
    int pattern;
    char expr[256];   /* what is guarded, as the user would write it: x.size()[0] */
    char source[256]; /* Dynamo's source of the guard: L['x'] ("" for global state) */
    char name[128];   /* the variable: x */
    char value[128];  /* the value the rejected entry expected */
    char kind[32];    /* the guard kind to look for ("" any) */
    char check[512];  /* the failed check as the reason states it */
    int dim;
} Failure;

/* The hints: one row per known pattern, naming the Dynamo concept.  In the
 * text {expr}, {name}, {dim} and {value} are replaced by what the failure
 * says. */
static const struct {
    int pattern;
    const char *concept, *text;
} hints[] = {
    {P_SIZE, "static shapes: Dynamo specialised on a size (dynamic shapes)",
     "{expr} keeps changing and each compile was specialised on its value. Mark the "
     "dimension dynamic before the call: torch._dynamo.mark_dynamic({name}, {dim}), or "
     "compile with torch.compile(..., dynamic=True)."},
    {P_TRAINING, "nn.Module training flag guard",
     "Dynamo guards on {expr}: one compile for train() and one for eval() is expected; it is "
     "a problem only when the mode flips back and forth in a loop."},
    {P_INT, "int specialisation: Dynamo treats a Python int argument as a constant",
     "{name} was {value} when this entry was compiled. Pass it as a tensor "
     "(torch.tensor({name})), or mark it dynamic with torch.compile(..., dynamic=True) "
     "(automatic dynamic shapes do so after one recompile unless switched off)."},
    {P_GLOBAL, "guard on a global variable",
     "The function reads the global {expr} and Dynamo guards on its value, so each new value "
     "recompiles. Pass it as an argument (a tensor for a number) instead of changing the "
     "global between calls."},
    {P_STATE, "global state guard (GLOBAL_STATE: grad mode, default dtype, ...)",
     "torch's global state changed between calls: {expr}. torch.no_grad()/enable_grad(), "
     "set_default_dtype, deterministic algorithms and autocast are part of every cache "
     "entry's guards; one compile per state is expected, or keep the state the same around "
     "the compiled call."},
    {P_LIMIT, "recompile limit (torch._dynamo.config.recompile_limit)",
     "This frame hit the recompile limit: Dynamo stopped compiling it and runs it eagerly "
     "from then on. Fix the cause above, or raise torch._dynamo.config.recompile_limit "
     "(8 by default) if this many variants are really needed."},
};

static void hint_add(VwDoc *d, int pattern, const Failure *f) {
    for (size_t i = 0; i < sizeof hints / sizeof *hints; i++) {
        if (hints[i].pattern != pattern) continue;
        char out[2048];
        size_t w = 0;
        char dim[16];
        snprintf(dim, sizeof dim, "%d", f->dim);
        for (const char *p = hints[i].text; *p && w + 1 < sizeof out;) {
            const char *rep = NULL;
            size_t skip = 0;
            if (strncmp(p, "{expr}", 6) == 0) rep = f->expr, skip = 6;
            else if (strncmp(p, "{name}", 6) == 0) rep = f->name, skip = 6;
            else if (strncmp(p, "{dim}", 5) == 0) rep = dim, skip = 5;
            else if (strncmp(p, "{value}", 7) == 0) rep = f->value, skip = 7;
            if (rep) {
                w += (size_t)snprintf(out + w, sizeof out - w, "%s", rep);
                if (w >= sizeof out) w = sizeof out - 1;
                p += skip;
            } else {
                out[w++] = *p++;
            }
        }
        out[w] = 0;
        vw_doc_addf(d, VA_HINT, "  Hint (%s):", hints[i].concept);
        vw_doc_addf(d, VA_HINT, "    %s", out);
    }
}

static void trim(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
    size_t i = 0;
    while (s[i] == ' ') i++;
    memmove(s, s + i, strlen(s + i) + 1);
}

/* Dynamo's source for an expression the user wrote: `n` is L['n'],
 * `self.training` is L['self'].training; G[...] and L[...] stay. */
static void to_source(const char *expr, char *out, size_t cap) {
    if (strncmp(expr, "G[", 2) == 0 || strncmp(expr, "L[", 2) == 0) {
        snprintf(out, cap, "%s", expr);
        return;
    }
    size_t n = strspn(expr, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
    snprintf(out, cap, "L['%.*s']%s", (int)n, expr, expr + n);
}

/* Reads the first line of a failure reason ("0/2: tensor 'x' size mismatch
 * at index 0. expected 4, actual 5"). */
static void parse_failure(const char *reason, Failure *f) {
    memset(f, 0, sizeof *f);
    f->pattern = P_OTHER;
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(reason ? reason : "", "\n"),
             reason ? reason : "");
    char *r = line;
    char *colon = strstr(r, ": ");
    if (colon && strchr("0123456789", r[0]) && (size_t)(colon - r) < 32) r = colon + 2;
    char *hash = strstr(r, "  #");
    if (hash) *hash = 0;
    trim(r);
    snprintf(f->check, sizeof f->check, "%.*s", (int)(sizeof f->check - 1), r);
    const char *p;
    if ((p = strstr(r, "tensor '")) && strstr(r, "size mismatch at index ")) {
        const char *q = strchr(p + 8, '\'');
        const char *end = q ? strstr(q, "' size mismatch") : NULL;
        if (end) q = end;
        if (q) {
            snprintf(f->name, sizeof f->name, "%.*s", (int)(q - p - 8), p + 8);
            f->dim = atoi(strstr(r, "at index ") + 9);
            f->pattern = P_SIZE;
            snprintf(f->kind, sizeof f->kind, "TENSOR_MATCH");
            to_source(f->name, f->source, sizeof f->source);
            snprintf(f->expr, sizeof f->expr, "%s.size()[%d]", f->name, f->dim);
            const char *ex = strstr(r, "expected ");
            if (ex) snprintf(f->value, sizeof f->value, "%.*s", (int)strcspn(ex + 9, ","), ex + 9);
            return;
        }
    }
    if ((p = strstr(r, "GLOBAL_STATE changed: "))) {
        f->pattern = P_STATE;
        snprintf(f->expr, sizeof f->expr, "%s", p + 22);
        trim(f->expr);
        snprintf(f->kind, sizeof f->kind, "GLOBAL_STATE");
        snprintf(f->name, sizeof f->name, "%.*s", (int)strcspn(f->expr, " ,"), f->expr);
        return;
    }
    char *eq = strstr(r, " == ");
    if (eq) {
        snprintf(f->expr, sizeof f->expr, "%.*s", (int)(eq - r), r);
        snprintf(f->value, sizeof f->value, "%s", eq + 4);
        trim(f->expr);
        trim(f->value);
        to_source(f->expr, f->source, sizeof f->source);
        snprintf(f->name, sizeof f->name, "%.*s", (int)strcspn(f->expr, ".["), f->expr);
        size_t vl = strlen(f->value);
        int is_int =
            vl > 0 &&
            strspn(f->value + (f->value[0] == '-'), "0123456789") == vl - (f->value[0] == '-') &&
            vl > (size_t)(f->value[0] == '-');
        if (strstr(f->expr, ".training")) f->pattern = P_TRAINING;
        else if (strncmp(f->expr, "G[", 2) == 0) f->pattern = P_GLOBAL;
        else if (is_int) f->pattern = P_INT;
        return;
    }
    snprintf(f->expr, sizeof f->expr, "%.*s", (int)(sizeof f->expr - 1), r);
}

/* The value a guard pins for the failure's expression ("" when unknown). */
static void guard_value(const Failure *f, const char *guard, char *out, size_t cap) {
    out[0] = 0;
    if (!guard) return;
    if (f->pattern == P_SIZE) {
        const char *p = strstr(guard, "size=[");
        if (!p) return;
        p += 6;
        for (int i = 0; i < f->dim && p; i++) {
            p = strpbrk(p, ",]");
            if (p && *p == ',') p++;
            else p = NULL;
        }
        if (p) {
            while (*p == ' ') p++;
            snprintf(out, cap, "%.*s", (int)strcspn(p, ",]"), p);
        }
    } else if (f->pattern == P_STATE) {
        char key[160];
        snprintf(key, sizeof key, "\"%s\":", f->name);
        const char *p = strstr(guard, key);
        if (p) {
            p += strlen(key);
            snprintf(out, cap, "%.*s", (int)strcspn(p, ",}"), p);
        }
    } else {
        /* Only a guard that compares with a value pins it (a type or id
         * check does not: captured_value then). */
        const char *p = NULL, *q = guard;
        while ((q = strstr(q, " == "))) p = q, q += 4;
        if (p) snprintf(out, cap, "%s", p + 4);
    }
}

/* The value compile cid's frame started with at a guard source that is a
 * plain global or argument (G['SCALE'], L['n']), from the inputs the
 * trace captured, when it is a number, a bool or a string ("" otherwise,
 * and for a trace without captures). */
static void captured_value(DrTrace *t, const char *cid, const char *source, char *out, size_t cap) {
    out[0] = 0;
    char name[128];
    size_t n = 0;
    if (!cid || (source[0] != 'G' && source[0] != 'L') || strncmp(source + 1, "['", 2) != 0) return;
    n = strspn(source + 3, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
    if (n == 0 || n >= sizeof name || strcmp(source + 3 + n, "']") != 0) return;
    snprintf(name, sizeof name, "%.*s", (int)n, source + 3);
    char *qcid = vw_sql_quote(cid);
    if (!qcid) return;
    VwRows r = {0};
    DrError e = {0};
    if (rows_sqlf(t, &r, &e,
                  sqlf("SELECT v.kind, v.value FROM v_captures c JOIN v_values f ON f.capture = "
                       "c.capture AND f.node = 0 JOIN v_values d ON d.capture = c.capture AND "
                       "d.node = json_extract(f.value, '$.%s') AND d.kind = 'dict', "
                       "json_each(d.value) p JOIN v_values k ON k.capture = c.capture AND k.node "
                       "= json_extract(p.value, '$[0]') JOIN v_values v ON v.capture = c.capture "
                       "AND v.node = json_extract(p.value, '$[1]') WHERE c.compile_id = %s AND "
                       "k.kind = 'str' AND k.value = '\"%s\"' LIMIT 1",
                       source[0] == 'G' ? "globals" : "locals", qcid, name)) == DR_OK &&
        r.n == 1) {
        const char *kind = vw_cell(&r, 0, 0), *v = vw_cell(&r, 0, 1);
        if (kind && v) {
            if (strcmp(kind, "int") == 0) snprintf(out, cap, "%s", v);
            else if (strcmp(kind, "bool") == 0)
                snprintf(out, cap, "%s", strcmp(v, "true") == 0 ? "True" : "False");
            else if ((strcmp(kind, "float") == 0 || strcmp(kind, "str") == 0) && v[0] == '"') {
                size_t len = strlen(v);
                int str = kind[0] == 's';
                snprintf(out, cap, "%s%.*s%s", str ? "'" : "", len >= 2 ? (int)len - 2 : 0, v + 1,
                         str ? "'" : "");
            }
        }
    }
    vw_rows_free(&r);
    free(qcid);
}

/* The recompile page of compile key->cid, whose first guard failure is
 * event key->id. */
static int detail_recompile(DrTrace *t, const VwKinds *k, const VwKey *key, int limit_hit, VwDoc *d,
                            DrError *err) {
    VwRows frame = {0}, fails = {0}, comp = {0}, hist = {0};
    char *qcid = vw_sql_quote(key->cid);
    int rc = qcid ? DR_OK : dr_error(err, DR_ERR_NOMEM, "out of memory");
    long long cid_id = 0;
    if (rc == DR_OK)
        rc = rows_sqlf(t, &frame, err,
                       sqlf("SELECT qualname, filename, firstlineno, (SELECT compile_id FROM "
                            "events WHERE seq = %lld) FROM v_code WHERE code_id = %lld",
                            key->id, key->code_id));
    if (rc != DR_OK) goto done;
    cid_id = vw_cell_int(&frame, 0, 3);
    /* The compile's own event comes after its guard failures and guards. */
    if ((rc = rows_sqlf(t, &comp, err,
                        sqlf("SELECT e.seq, json_extract(d.text, '$.outcome'), s.text FROM "
                             "events e LEFT JOIN strings d ON d.id = e.data_id LEFT JOIN "
                             "strings s ON s.id = e.text_id WHERE e.seq > %lld AND e.kind_id = "
                             "%lld AND e.compile_id = %lld ORDER BY e.seq LIMIT 1",
                             key->id, k->compile, cid_id))) != DR_OK)
        goto done;
    long long upto = comp.n ? vw_cell_int(&comp, 0, 0) : (1ll << 62);
    if ((rc = rows_sqlf(t, &fails, err,
                        sqlf("SELECT json_extract(d.text, '$.failed_compile_id'), s.text FROM "
                             "events e LEFT JOIN strings d ON d.id = e.data_id LEFT JOIN "
                             "strings s ON s.id = e.text_id WHERE e.seq >= %lld AND e.seq < "
                             "%lld AND e.kind_id = %lld AND e.compile_id = %lld ORDER BY e.seq "
                             "LIMIT 1000",
                             key->id, upto, k->guard_failure, cid_id))) != DR_OK)
        goto done;

    const char *qual = vw_cell(&frame, 0, 0), *file = vw_cell(&frame, 0, 1);
    vw_doc_addf(d, VA_TITLE, "Recompile %s of %s", key->cid, qual ? qual : "?");
    vw_doc_addf(d, VA_NORMAL, "  frame    %s at %s:%s", qual ? qual : "?", file ? file : "?",
                vw_cell(&frame, 0, 2) ? vw_cell(&frame, 0, 2) : "?");
    if (comp.n) {
        const char *why = vw_cell(&comp, 0, 2);
        vw_doc_addf(d, VA_NORMAL, "  outcome  %s%s%s",
                    vw_cell(&comp, 0, 1) ? vw_cell(&comp, 0, 1) : "?", why ? ": " : "",
                    why ? why : "");
    } else {
        vw_doc_add(d, VA_DIM, "  outcome  (not recorded yet)");
    }
    if (limit_hit)
        vw_doc_add(d, VA_ERR,
                   "  this frame hit the recompile limit "
                   "(torch._dynamo.config.recompile_limit)");
    vw_doc_add(d, VA_NORMAL, "");
    vw_doc_addf(d, VA_TITLE, "Rejected cache entries (%zu), newest first", fails.n);
    for (size_t i = 0; i < fails.n; i++) {
        vw_doc_addf(d, VA_NORMAL,
                    "  entry %s rejected:", vw_cell(&fails, i, 0) ? vw_cell(&fails, i, 0) : "?");
        const char *reason = vw_cell(&fails, i, 1);
        for (const char *p = reason ? reason : ""; *p;) {
            size_t n = strcspn(p, "\n");
            char *safe = dr_safe(p, n, 4000, 0);
            vw_doc_addf(d, VA_NORMAL, "    %s", safe ? safe : "");
            free(safe);
            p += n;
            if (*p) p++;
        }
    }
    if (!fails.n) {
        vw_doc_add(d, VA_DIM, "  (no failure reason recorded)");
        goto done;
    }

    /* The failed guard: the newest rejected entry's, found among the
     * guards of the frame's compiles on the same source. */
    Failure f;
    parse_failure(vw_cell(&fails, 0, 1), &f);
    const char *failed_cid = vw_cell(&fails, 0, 0);
    char *qsrc = vw_sql_quote(f.source), *qkind = NULL;
    if (f.kind[0]) qkind = sqlf("'%s:%%'", f.kind);
    if (!qsrc || (f.kind[0] && !qkind)) {
        free(qsrc);
        free(qkind);
        rc = dr_error(err, DR_ERR_NOMEM, "out of memory");
        goto done;
    }
    rc = rows_sqlf(t, &hist, err,
                   sqlf("SELECT c.text, " EV_TEXT ", " GUARD_LOCATION " FROM "
                        "events e LEFT JOIN strings s ON s.id = e.text_id LEFT JOIN strings d ON "
                        "d.id = e.data_id LEFT JOIN strings c ON c.id = e.compile_id" GUARD_JOINS
                        "WHERE e.kind_id = %lld AND e.code_id = %lld AND e.seq < %lld AND " EV_TEXT
                        " IS NOT NULL AND %s%s%s%s%s ORDER BY e.seq DESC LIMIT 2000",
                        k->guard, key->code_id, upto == (1ll << 62) ? (1ll << 62) : upto,
                        f.source[0] ? GUARD_SOURCE " = " : "1", f.source[0] ? qsrc : "",
                        qkind ? " AND " EV_TEXT " LIKE " : "", qkind ? qkind : "",
                        f.pattern == P_OTHER && !f.source[0] ? " AND 0" : ""));
    free(qsrc);
    free(qkind);
    if (rc != DR_OK) goto done;
    /* One guard per compile: the first whose value can be read. */
    long guard_row = -1;
    for (size_t i = 0; i < hist.n; i++)
        if (failed_cid && vw_cell(&hist, i, 0) && strcmp(vw_cell(&hist, i, 0), failed_cid) == 0) {
            char v[128];
            guard_value(&f, vw_cell(&hist, i, 1), v, sizeof v);
            if (guard_row < 0 || v[0]) guard_row = (long)i;
            if (v[0]) break;
        }
    vw_doc_add(d, VA_NORMAL, "");
    vw_doc_add(d, VA_TITLE, "Failed guard");
    vw_doc_addf(d, VA_HI, "  %s", f.check);
    vw_doc_addf(d, VA_NORMAL, "  failed in the newest rejected entry, %s",
                failed_cid ? failed_cid : "?");
    if (guard_row >= 0) {
        vw_doc_addf(d, VA_NORMAL, "  guard of %s: %s", failed_cid,
                    vw_cell(&hist, (size_t)guard_row, 1));
        if (f.source[0]) vw_doc_addf(d, VA_NORMAL, "  guarded source: %s", f.source);
    }

    /* Where it comes from: the stack Dynamo attached to the reason, else
     * the guard's user location. */
    vw_doc_add(d, VA_NORMAL, "");
    vw_doc_add(d, VA_TITLE, "Where the guard comes from in your code");
    char path[1024];
    long line = 0;
    const char *loc = guard_row >= 0 ? vw_cell(&hist, (size_t)guard_row, 2) : NULL;
    const char *reason0 = vw_cell(&fails, 0, 1);
    const char *stack = reason0 ? strstr(reason0, "User stack trace:") : NULL;
    int have = 0;
    if (stack && parse_stack_file(stack, path, sizeof path, &line)) have = 1;
    else if (parse_location(loc, path, sizeof path, &line)) have = 1;
    if (loc) vw_doc_addf(d, VA_NORMAL, "  %s", loc);
    if (have) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (!loc) vw_doc_addf(d, VA_NORMAL, "  %s:%ld", path, line);
        else if (!strstr(loc, base))
            /* Dynamo's location is torch's or a library's code: the user's
             * line that led there. */
            vw_doc_addf(d, VA_NORMAL, "  reached from your code at %s:%ld", path, line);
        int status = DR_OK;
        if (!show_source(t, d, path, line, 3, err, &status)) {
            if (status != DR_OK) {
                rc = status;
                goto done;
            }
            vw_doc_add(d, VA_DIM, "    (that source is not stored in the trace)");
        }
    } else if (!loc) {
        vw_doc_add(d, VA_DIM, "  (Dynamo attached no user location to this guard)");
    }

    /* The value history across the frame's compiles, oldest first. */
    vw_doc_add(d, VA_NORMAL, "");
    vw_doc_addf(d, VA_TITLE, "Value history of %s", f.expr);
    /* One value per compile, the newest HIST_MAX of them (the query
     * returned the guards newest first). */
    enum { HIST_MAX = 40 };
    size_t pick[HIST_MAX];
    int npick = 0;
    long older = 0;
    const char *last_cid = NULL;
    /* Per compile the value a guard pins, else (a type check) the value
     * the capture holds. */
    char(*vals)[128] = calloc(HIST_MAX, sizeof *vals);
    if (!vals) {
        rc = dr_error(err, DR_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < hist.n; i++) {
        const char *c = vw_cell(&hist, i, 0);
        if (!c || (last_cid && strcmp(last_cid, c) == 0)) continue;
        char v[128];
        guard_value(&f, vw_cell(&hist, i, 1), v, sizeof v);
        if (!v[0]) {
            size_t j = i + 1; /* another guard of this compile may pin it */
            while (j < hist.n && vw_cell(&hist, j, 0) && strcmp(vw_cell(&hist, j, 0), c) == 0) {
                guard_value(&f, vw_cell(&hist, j, 1), v, sizeof v);
                if (v[0]) break;
                j++;
            }
        }
        if (!v[0] && f.source[0] && npick < HIST_MAX) captured_value(t, c, f.source, v, sizeof v);
        last_cid = c;
        if (!v[0]) continue;
        if (npick < HIST_MAX) {
            snprintf(vals[npick], sizeof vals[npick], "%s", v);
            pick[npick++] = i;
        } else {
            older++;
        }
    }
    char *hline = NULL;
    size_t hlen = 0;
    FILE *hf = open_memstream(&hline, &hlen);
    int nvals = 0;
    if (hf && (older || hist.n == 2000))
        fprintf(hf, "(%s%ld earlier not shown) ", hist.n == 2000 ? "at least " : "", older);
    for (int j = npick; hf && j-- > 0;)
        fprintf(hf, "%s%s at %s", nvals++ ? ", " : "", vals[j], vw_cell(&hist, pick[j], 0));
    free(vals);
    const char *prev_cid = npick ? vw_cell(&hist, pick[0], 0) : NULL;
    if (hf && strcmp(key->cid, prev_cid ? prev_cid : "") != 0 && f.pattern == P_SIZE) {
        /* This compile's own guard is not written yet (cut short): the
         * reason has the value it saw. */
        const char *act = reason0 ? strstr(reason0, "actual ") : NULL;
        if (act)
            fprintf(hf, "%s%.*s at %s", nvals++ ? ", " : "", (int)strcspn(act + 7, ",\n"), act + 7,
                    key->cid);
    } else if (hf && strcmp(key->cid, prev_cid ? prev_cid : "") != 0 && f.source[0]) {
        /* Or the value this compile's frame was called with, captured. */
        char v[128];
        captured_value(t, key->cid, f.source, v, sizeof v);
        if (v[0]) fprintf(hf, "%s%s at %s", nvals++ ? ", " : "", v, key->cid);
    }
    if (hf) fclose(hf);
    if (nvals) vw_doc_addf(d, VA_HI, "  %s", hline);
    else vw_doc_add(d, VA_DIM, "  (no guard of the frame's compiles pins this value)");
    free(hline);

    vw_doc_add(d, VA_NORMAL, "");
    vw_doc_add(d, VA_TITLE, "What to do");
    int any = 0;
    if (f.pattern != P_OTHER) hint_add(d, f.pattern, &f), any = 1;
    if (limit_hit) hint_add(d, P_LIMIT, &f), any = 1;
    if (!any) vw_doc_add(d, VA_DIM, "  (no hint for this kind of guard)");
done:
    free(qcid);
    vw_rows_free(&frame);
    vw_rows_free(&fails);
    vw_rows_free(&comp);
    vw_rows_free(&hist);
    return rc;
}

/* ---- the other detail pages ----------------------------------------------- */

static int detail_frame(DrTrace *t, const VwKinds *k, const VwKey *key, VwDoc *d, DrError *err) {
    VwRows fr = {0}, cs = {0};
    int rc = rows_sqlf(t, &fr, err,
                       sqlf("SELECT qualname, filename, firstlineno FROM v_code WHERE code_id = "
                            "%lld",
                            key->code_id));
    if (rc == DR_OK)
        rc = rows_sqlf(t, &cs, err,
                       sqlf("SELECT c.text, json_extract(d.text, '$.outcome'), json_extract(d.text,"
                            " '$.attempts'), json_extract(d.text, '$.graphs'), printf('%%.1f', "
                            "json_extract(d.text, '$.duration_ns') / 1e6), s.text FROM events e "
                            "LEFT JOIN strings c ON c.id = e.compile_id LEFT JOIN strings d ON "
                            "d.id = e.data_id LEFT JOIN strings s ON s.id = e.text_id WHERE "
                            "e.kind_id = %lld AND e.code_id = %lld ORDER BY e.seq LIMIT 5000",
                            k->compile, key->code_id));
    if (rc == DR_OK) {
        const char *q = vw_cell(&fr, 0, 0);
        vw_doc_addf(d, VA_TITLE, "Frame %s", q ? q : "?");
        vw_doc_addf(d, VA_NORMAL, "  %s:%s", vw_cell(&fr, 0, 1) ? vw_cell(&fr, 0, 1) : "?",
                    vw_cell(&fr, 0, 2) ? vw_cell(&fr, 0, 2) : "?");
        int status = DR_OK;
        show_source(t, d, vw_cell(&fr, 0, 1), vw_cell_int(&fr, 0, 2), 2, err, &status);
        rc = status;
        vw_doc_add(d, VA_NORMAL, "");
        vw_doc_addf(d, VA_TITLE, "Compiles (%zu%s)", cs.n, cs.n == 5000 ? ", the first" : "");
        for (size_t i = 0; i < cs.n; i++)
            vw_doc_addf(d, VA_NORMAL, "  %-8s %-9s attempts=%s graphs=%s %s ms  %s",
                        vw_cell(&cs, i, 0) ? vw_cell(&cs, i, 0) : "?",
                        vw_cell(&cs, i, 1) ? vw_cell(&cs, i, 1) : "?",
                        vw_cell(&cs, i, 2) ? vw_cell(&cs, i, 2) : "?",
                        vw_cell(&cs, i, 3) ? vw_cell(&cs, i, 3) : "?",
                        vw_cell(&cs, i, 4) ? vw_cell(&cs, i, 4) : "?",
                        vw_cell(&cs, i, 5) ? vw_cell(&cs, i, 5) : "");
    }
    vw_rows_free(&fr);
    vw_rows_free(&cs);
    return rc;
}

/* Adds a decoded blob's text under a title, or says why it cannot. */
static void add_blob(DrTrace *t, VwDoc *d, long long blob, const char *what) {
    if (blob <= 0) {
        vw_doc_addf(d, VA_DIM, "  (no %s recorded)", what);
        return;
    }
    void *buf = NULL;
    size_t len = 0;
    DrError e2 = {0};
    if (dr_trace_read_blob(t, blob, BLOB_CAP, &buf, &len, &e2) != DR_OK) {
        vw_doc_addf(d, VA_ERR, "  (the %s is unreadable: %s)", what, e2.msg);
    } else {
        const char *p = buf;
        while (p < (const char *)buf + len) {
            size_t n = strcspn(p, "\n");
            char *safe = dr_safe(p, n, 4000, 0);
            vw_doc_addf(d, VA_NORMAL, "  %s", safe ? safe : "");
            free(safe);
            p += n + 1;
            if (d->cut) break;
        }
    }
    free(buf);
}

/* The speculation timeline of one compile, the side effects a rollback
 * dropped listed under it (they are recorded just before it). */
static void timeline(const VwKinds *k, const VwRows *ev, VwDoc *d, const char *arrow) {
    size_t pending_from = (size_t)-1;
    for (size_t i = 0; i < ev->n; i++) {
        long long kind = vw_cell_int(ev, i, 1);
        const char *text = vw_cell(ev, i, 2), *action = vw_cell(ev, i, 3);
        const char *scope = vw_cell(ev, i, 4), *status = vw_cell(ev, i, 5);
        if (kind == k->side_effect) {
            if (status && strcmp(status, "dropped") == 0 && pending_from == (size_t)-1)
                pending_from = i;
            continue;
        }
        if (kind != k->speculation) continue;
        int branch = scope && strcmp(scope, "branch") == 0;
        int bad = action && (strcmp(action, "rollback") == 0 || strcmp(action, "restart") == 0);
        vw_doc_addf(d, bad ? VA_ERR : VA_NORMAL, "  %s%s %-10s %s", branch ? "    " : "", arrow,
                    action ? action : "?", text ? text : "");
        if (bad && pending_from != (size_t)-1) {
            for (size_t j = pending_from; j < i; j++) {
                const char *st = vw_cell(ev, j, 5);
                if (vw_cell_int(ev, j, 1) == k->side_effect && st && strcmp(st, "dropped") == 0)
                    vw_doc_addf(d, VA_HI, "  %s      dropped side effect: %s", branch ? "    " : "",
                                vw_cell(ev, j, 2) ? vw_cell(ev, j, 2) : "?");
            }
            pending_from = (size_t)-1;
        }
    }
    if (pending_from != (size_t)-1)
        for (size_t j = pending_from; j < ev->n; j++) {
            const char *st = vw_cell(ev, j, 5);
            if (vw_cell_int(ev, j, 1) == k->side_effect && st && strcmp(st, "dropped") == 0)
                vw_doc_addf(d, VA_HI, "  dropped side effect (no rollback recorded): %s",
                            vw_cell(ev, j, 2) ? vw_cell(ev, j, 2) : "?");
        }
    for (size_t j = 0; j < ev->n; j++) {
        const char *st = vw_cell(ev, j, 5);
        if (vw_cell_int(ev, j, 1) == k->side_effect && st && strcmp(st, "applied") == 0)
            vw_doc_addf(d, VA_NORMAL, "  applied after the graph: %s",
                        vw_cell(ev, j, 2) ? vw_cell(ev, j, 2) : "?");
    }
}

/* Everything recorded under one compile id. */
static int detail_compile(DrTrace *t, const VwKinds *k, const VwKey *key, int speculation_only,
                          VwDoc *d, DrError *err) {
    VwRows ev = {0};
    const char *arrow = dr_text_utf8 ? "\xe2\x86\x92" : "->";
    int rc = rows_sqlf(
        t, &ev, err,
        sqlf(
            "SELECT e.seq, e.kind_id, " EV_TEXT ", json_extract(d.text, '$.action'), "
            "json_extract(d.text, '$.scope'), json_extract(d.text, '$.status'), " EV_DATA
            ", e.num, e.blob_id, json_extract(d.text, '$.failed_compile_id') FROM events e LEFT "
            "JOIN strings s ON s.id = e.text_id LEFT JOIN strings d ON d.id = e.data_id" GUARD_JOINS
            "WHERE "
            "e.compile_id = (SELECT compile_id FROM events WHERE seq = %lld) AND e.kind_id IN "
            "(%lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld) ORDER BY e.seq LIMIT 20000",
            key->id, k->compile, k->guard, k->guard_failure, k->graph_break, k->graph,
            k->speculation, k->side_effect, k->error));
    if (rc != DR_OK) goto done;
    if (speculation_only) {
        vw_doc_addf(d, VA_TITLE,
                    "Speculation of compile %s: checkpoints, restarts, rollbacks, "
                    "merges",
                    key->cid);
        VwRows spec = {0};
        for (size_t i = 0; i < ev.n; i++) {
            long long kind = vw_cell_int(&ev, i, 1);
            if (kind != k->speculation && kind != k->side_effect) continue;
            /* keep the rows in place: a copy of the pointers, not the strings */
            if (spec.n == spec.cap) {
                size_t cap = spec.cap ? spec.cap * 2 : 64;
                char **c = realloc(spec.cell, cap * (size_t)ev.ncol * sizeof *c);
                if (!c) break;
                spec.cell = c;
                spec.cap = cap;
            }
            memcpy(spec.cell + spec.n * (size_t)ev.ncol, ev.cell + i * (size_t)ev.ncol,
                   (size_t)ev.ncol * sizeof *ev.cell);
            spec.ncol = ev.ncol;
            spec.n++;
        }
        timeline(k, &spec, d, arrow);
        if (!spec.n) vw_doc_add(d, VA_DIM, "  (nothing recorded)");
        free(spec.cell);
        goto done;
    }
    static const struct {
        const char *title;
        int which;
    } sections[] = {{"Guard failures (entries this compile rejected)", 2},
                    {"Graph breaks", 3},
                    {"Graphs handed to the backend", 4},
                    {"Speculation and side effects", 5},
                    {"Errors", 7},
                    {"Guards of the new cache entry", 1}};
    long long ids[8] = {k->compile, k->guard,       k->guard_failure, k->graph_break,
                        k->graph,   k->speculation, k->side_effect,   k->error};
    vw_doc_addf(d, VA_TITLE, "Compile %s", key->cid);
    for (size_t i = 0; i < ev.n; i++)
        if (vw_cell_int(&ev, i, 1) == k->compile) {
            vw_doc_addf(d, VA_NORMAL, "  %s", vw_cell(&ev, i, 6) ? vw_cell(&ev, i, 6) : "");
            if (vw_cell(&ev, i, 2)) vw_doc_addf(d, VA_NORMAL, "  reason: %s", vw_cell(&ev, i, 2));
        }
    for (size_t s = 0; s < sizeof sections / sizeof *sections; s++) {
        int w = sections[s].which;
        size_t n = 0;
        for (size_t i = 0; i < ev.n; i++) {
            long long kind = vw_cell_int(&ev, i, 1);
            if (kind == ids[w] || (w == 5 && kind == k->side_effect)) n++;
        }
        vw_doc_add(d, VA_NORMAL, "");
        vw_doc_addf(d, VA_TITLE, "%s (%zu)", sections[s].title, n);
        if (w == 5) {
            timeline(k, &ev, d, arrow);
            continue;
        }
        for (size_t i = 0; i < ev.n; i++) {
            if (vw_cell_int(&ev, i, 1) != ids[w]) continue;
            const char *text = vw_cell(&ev, i, 2) ? vw_cell(&ev, i, 2) : "";
            if (w == 2) {
                vw_doc_addf(d, VA_NORMAL,
                            "  entry %s:", vw_cell(&ev, i, 9) ? vw_cell(&ev, i, 9) : "?");
                for (const char *p = text; *p;) {
                    size_t m = strcspn(p, "\n");
                    char *safe = dr_safe(p, m, 4000, 0);
                    vw_doc_addf(d, VA_NORMAL, "    %s", safe ? safe : "");
                    free(safe);
                    p += m;
                    if (*p) p++;
                }
            } else if (w == 3) {
                vw_doc_addf(d, VA_NORMAL, "  line %s: %s", vw_cell(&ev, i, 7), text);
            } else if (w == 4) {
                vw_doc_addf(d, VA_NORMAL, "  backend %s, %s nodes", text, vw_cell(&ev, i, 7));
            } else if (w == 7) {
                vw_doc_add(d, vw_cell_int(&ev, i, 7) ? VA_DIM : VA_ERR,
                           vw_cell_int(&ev, i, 7) ? "  suppressed:" : "  raised:");
                vw_doc_addf(d, VA_NORMAL, "    %s", text);
            } else {
                vw_doc_addf(d, VA_NORMAL, "  %s", text);
            }
        }
    }
done:
    vw_rows_free(&ev);
    return rc;
}

static int detail_break(DrTrace *t, const VwKey *key, VwDoc *d, DrError *err) {
    VwRows r = {0}, st = {0};
    int rc = rows_sqlf(t, &r, err,
                       sqlf("SELECT compile_id, qualname, filename, lineno, reason, type, "
                            "json_extract(data, '$.filename') FROM (SELECT e.compile_id, "
                            "v.qualname, v.filename, e.num AS lineno, e.text AS reason, "
                            "json_extract(e.data, '$.type') AS type, e.data FROM v_ev e LEFT JOIN "
                            "v_code v ON v.code_id = e.code_id WHERE e.seq = %lld)",
                            key->id));
    if (rc == DR_OK)
        rc = rows_sqlf(t, &st, err,
                       sqlf("SELECT j.value FROM events e JOIN strings d ON d.id = e.data_id, "
                            "json_each(json_extract(d.text, '$.user_stack')) j WHERE e.seq = %lld "
                            "AND json_valid(d.text) ORDER BY j.key LIMIT 200",
                            key->id));
    if (rc != DR_OK || !r.n) goto done;
    vw_doc_addf(d, VA_TITLE, "Graph break in %s (compile %s)",
                vw_cell(&r, 0, 1) ? vw_cell(&r, 0, 1) : "?",
                vw_cell(&r, 0, 0) ? vw_cell(&r, 0, 0) : "?");
    vw_doc_addf(d, VA_NORMAL, "  type     %s", vw_cell(&r, 0, 5) ? vw_cell(&r, 0, 5) : "?");
    vw_doc_add(d, VA_NORMAL, "");
    vw_doc_add(d, VA_TITLE, "Reason");
    vw_doc_add(d, VA_NORMAL, vw_cell(&r, 0, 4));
    vw_doc_add(d, VA_NORMAL, "");
    vw_doc_add(d, VA_TITLE, "User stack");
    for (size_t i = 0; i < st.n; i++) vw_doc_addf(d, VA_NORMAL, "  %s", vw_cell(&st, i, 0));
    if (!st.n) vw_doc_add(d, VA_DIM, "  (none recorded)");
    vw_doc_add(d, VA_NORMAL, "");
    const char *file = vw_cell(&r, 0, 6) ? vw_cell(&r, 0, 6) : vw_cell(&r, 0, 2);
    vw_doc_addf(d, VA_TITLE, "Source at %s:%s", file ? file : "?",
                vw_cell(&r, 0, 3) ? vw_cell(&r, 0, 3) : "?");
    int status = DR_OK;
    if (!show_source(t, d, file, vw_cell_int(&r, 0, 3), 4, err, &status))
        vw_doc_add(d, VA_DIM, "  (that source is not stored in the trace)");
    rc = status;
done:
    vw_rows_free(&r);
    vw_rows_free(&st);
    return rc;
}

static int detail_error(DrTrace *t, const VwKey *key, VwDoc *d, DrError *err) {
    VwRows r = {0};
    int rc = rows_sqlf(t, &r, err,
                       sqlf("SELECT compile_id, exc_type, suppressed, message, traceback_blob "
                            "FROM v_errors WHERE seq = %lld",
                            key->id));
    if (rc == DR_OK && r.n) {
        int sup = (int)vw_cell_int(&r, 0, 2);
        vw_doc_addf(d, VA_TITLE, "%s in compile %s", vw_cell(&r, 0, 1) ? vw_cell(&r, 0, 1) : "?",
                    vw_cell(&r, 0, 0) ? vw_cell(&r, 0, 0) : "?");
        vw_doc_add(d, sup ? VA_DIM : VA_ERR,
                   sup ? "  SUPPRESSED: Dynamo fell back to eager instead of raising it"
                       : "  RAISED: it reached the program");
        vw_doc_add(d, VA_NORMAL, "");
        vw_doc_add(d, VA_TITLE, "Message");
        vw_doc_add(d, VA_NORMAL, vw_cell(&r, 0, 3));
        vw_doc_add(d, VA_NORMAL, "");
        vw_doc_add(d, VA_TITLE, "Traceback");
        add_blob(t, d, vw_cell_int(&r, 0, 4), "traceback");
    }
    vw_rows_free(&r);
    return rc;
}

static int detail_graph(DrTrace *t, const VwKey *key, VwDoc *d, DrError *err) {
    VwRows r = {0}, in = {0};
    int rc = rows_sqlf(t, &r, err,
                       sqlf("SELECT compile_id, backend, nodes, printf('%%.1f', duration_ms), "
                            "code_blob FROM v_graphs WHERE seq = %lld",
                            key->id));
    if (rc == DR_OK)
        rc = rows_sqlf(t, &in, err,
                       sqlf("SELECT j.value FROM events e JOIN strings d ON d.id = e.data_id, "
                            "json_each(json_extract(d.text, '$.inputs')) j WHERE e.seq = %lld "
                            "AND json_valid(d.text) ORDER BY j.key LIMIT 1000",
                            key->id));
    if (rc == DR_OK && r.n) {
        vw_doc_addf(d, VA_TITLE, "Graph of compile %s",
                    vw_cell(&r, 0, 0) ? vw_cell(&r, 0, 0) : "?");
        vw_doc_addf(d, VA_NORMAL, "  backend  %s", vw_cell(&r, 0, 1) ? vw_cell(&r, 0, 1) : "?");
        vw_doc_addf(d, VA_NORMAL, "  nodes    %s", vw_cell(&r, 0, 2) ? vw_cell(&r, 0, 2) : "?");
        vw_doc_addf(d, VA_NORMAL, "  time     %s ms", vw_cell(&r, 0, 3) ? vw_cell(&r, 0, 3) : "?");
        vw_doc_add(d, VA_NORMAL, "");
        vw_doc_addf(d, VA_TITLE, "Inputs (%zu)", in.n);
        for (size_t i = 0; i < in.n; i++) vw_doc_addf(d, VA_NORMAL, "  %s", vw_cell(&in, i, 0));
        vw_doc_add(d, VA_NORMAL, "");
        vw_doc_add(d, VA_TITLE, "FX graph code");
        add_blob(t, d, vw_cell_int(&r, 0, 4), "graph code");
    }
    vw_rows_free(&r);
    vw_rows_free(&in);
    return rc;
}

/* One divergence of the diff screen (temp.vw_diff, from the comparison
 * engine's report): both sides, the frame, what is only on one side. */
static int detail_diff(DrTrace *t, const VwKey *key, VwDoc *d, DrError *err) {
    VwRows r = {0}, only = {0};
    int rc = rows_sqlf(t, &r, err,
                       sqlf("SELECT n + 1, category, what, compile_a, compile_b, "
                            "json_extract(json, '$.frame.qualname'), "
                            "json_extract(json, '$.frame.file'), "
                            "json_extract(json, '$.frame.firstlineno'), "
                            "json_extract(json, '$.a'), json_extract(json, '$.b') "
                            "FROM temp.vw_diff WHERE n = %lld",
                            key->id));
    if (rc == DR_OK)
        rc = rows_sqlf(t, &only, err,
                       sqlf("SELECT '-', j.value FROM temp.vw_diff v, json_each(v.json, "
                            "'$.only_in_a') j WHERE v.n = %1$lld UNION ALL SELECT '+', j.value "
                            "FROM temp.vw_diff v, json_each(v.json, '$.only_in_b') j WHERE "
                            "v.n = %1$lld LIMIT 5000",
                            key->id));
    if (rc == DR_OK && r.n) {
        const char *q = vw_cell(&r, 0, 5);
        vw_doc_addf(d, VA_TITLE, "Divergence %s (%s): %s", vw_cell(&r, 0, 0),
                    vw_cell(&r, 0, 1) ? vw_cell(&r, 0, 1) : "?",
                    vw_cell(&r, 0, 2) ? vw_cell(&r, 0, 2) : "?");
        if (q)
            vw_doc_addf(d, VA_NORMAL, "  frame    %s at %s:%s", q,
                        vw_cell(&r, 0, 6) ? vw_cell(&r, 0, 6) : "?",
                        vw_cell(&r, 0, 7) ? vw_cell(&r, 0, 7) : "?");
        vw_doc_addf(d, VA_NORMAL, "  compile  %s in a, %s in b",
                    vw_cell(&r, 0, 3) ? vw_cell(&r, 0, 3) : "none",
                    vw_cell(&r, 0, 4) ? vw_cell(&r, 0, 4) : "none");
        if (vw_cell(&r, 0, 8)) vw_doc_addf(d, VA_HI, "  a: %s", vw_cell(&r, 0, 8));
        if (vw_cell(&r, 0, 9)) vw_doc_addf(d, VA_HI, "  b: %s", vw_cell(&r, 0, 9));
        if (only.n) {
            vw_doc_add(d, VA_NORMAL, "");
            vw_doc_add(d, VA_HEAD, "only in a (-) and only in b (+)");
        }
        for (size_t i = 0; i < only.n; i++)
            vw_doc_addf(d, *vw_cell(&only, i, 0) == '-' ? VA_ERR : VA_HINT, "  %s %s",
                        vw_cell(&only, i, 0), vw_cell(&only, i, 1) ? vw_cell(&only, i, 1) : "");
    }
    vw_rows_free(&r);
    vw_rows_free(&only);
    return rc;
}

int vw_detail(DrTrace *t, const VwKinds *k, const VwKey *key, int limit_hit, VwDoc *d,
              DrError *err) {
    int rc;
    switch (key->screen) {
    case DR_VIEW_RECOMPILES: rc = detail_recompile(t, k, key, limit_hit, d, err); break;
    case DR_VIEW_FRAMES: rc = detail_frame(t, k, key, d, err); break;
    case DR_VIEW_COMPILES: rc = detail_compile(t, k, key, 0, d, err); break;
    case DR_VIEW_BREAKS: rc = detail_break(t, key, d, err); break;
    case DR_VIEW_ERRORS: rc = detail_error(t, key, d, err); break;
    case DR_VIEW_GRAPHS: rc = detail_graph(t, key, d, err); break;
    case DR_VIEW_SPECULATION: rc = detail_compile(t, k, key, 1, d, err); break;
    case DR_VIEW_DIFF: rc = detail_diff(t, key, d, err); break;
    default: rc = DR_OK;
    }
    if (d->cut) vw_doc_addf(d, VA_DIM, "(cut at %d lines)", VW_DOC_MAX);
    return rc;
}
