/* view_text.c -- the viewer's safe text, documents and query rows (see view_int.h).
 *
 * No byte of a trace reaches the terminal except through dr_safe
 * (schema/text.c, the sanitizer every command shares): it passes printable
 * ASCII and valid, printable, non-reordering UTF-8, and shows everything
 * else escaped (^[ for ESC, \xff for a byte that is not UTF-8, \u202e for
 * a bidi override); outside a UTF-8 locale it passes ASCII only.  A
 * document holds sanitised lines only. */
#define _GNU_SOURCE 1
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "view_int.h"

/* ---- safe text ------------------------------------------------------------ */

/* Sanitised strings hold only printable ASCII and valid printable UTF-8. */
size_t vw_fit(const char *str, int cols, int *used) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    int w = 0;
    while (s[i]) {
        size_t len = 1;
        int cw = 1;
        if (s[i] >= 0x80) {
            long cp = dr_utf8_decode(s + i, strnlen((const char *)s + i, 4), &len);
            cw = cp < 0 ? 1 : wcwidth((wchar_t)cp);
            if (cp < 0) len = 1;
            if (cw < 0) cw = 1;
        }
        if (w + cw > cols) break;
        w += cw;
        i += len;
    }
    if (used) *used = w;
    return i;
}

int vw_width(const char *s) {
    int w = 0;
    vw_fit(s, 1 << 30, &w);
    return w;
}

/* ---- documents ------------------------------------------------------------ */

static void doc_push(VwDoc *d, int attr, char *text) {
    if (!text) return;
    if (d->n >= VW_DOC_MAX) {
        d->cut = 1;
        free(text);
        return;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        VwLine *v = realloc(d->v, cap * sizeof *v);
        if (!v) {
            free(text);
            return;
        }
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n].text = text;
    d->v[d->n++].attr = attr;
}

void vw_doc_add(VwDoc *d, int attr, const char *text) {
    const char *p = text ? text : "";
    for (;;) {
        size_t n = strcspn(p, "\n");
        doc_push(d, attr, dr_safe(p, n, 4000, 0));
        if (!p[n]) break;
        p += n + 1;
    }
}

void vw_doc_addf(VwDoc *d, int attr, const char *fmt, ...) {
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (rc < 0) return;
    vw_doc_add(d, attr, s);
    free(s);
}

void vw_doc_free(VwDoc *d) {
    for (size_t i = 0; i < d->n; i++) free(d->v[i].text);
    free(d->v);
    memset(d, 0, sizeof *d);
}

/* ---- rows ----------------------------------------------------------------- */

typedef struct {
    VwRows *r;
    int nomem;
} RowsCtx;

static int rows_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    RowsCtx *c = ud;
    VwRows *r = c->r;
    if (r->ncol == 0) r->ncol = n;
    if (n != r->ncol) return 0;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        char **cell = realloc(r->cell, cap * (size_t)n * sizeof *cell);
        if (!cell) return c->nomem = 1;
        r->cell = cell;
        r->cap = cap;
    }
    char **row = r->cell + r->n * (size_t)n;
    for (int i = 0; i < n; i++) {
        row[i] = v[i] ? strdup(v[i]) : NULL;
        if (v[i] && !row[i]) c->nomem = 1;
    }
    r->n++;
    return c->nomem;
}

int vw_rows_query(DrTrace *t, const char *sql, VwRows *r, DrError *err) {
    RowsCtx c = {r, 0};
    int rc = dr_trace_query(t, sql, rows_row, &c, err);
    if (rc == DR_OK && c.nomem) rc = dr_error(err, DR_ERR_NOMEM, "out of memory");
    return rc;
}

const char *vw_cell(const VwRows *r, size_t row, int col) {
    if (row >= r->n || col < 0 || col >= r->ncol) return NULL;
    return r->cell[row * (size_t)r->ncol + (size_t)col];
}

long long vw_cell_int(const VwRows *r, size_t row, int col) {
    const char *s = vw_cell(r, row, col);
    return s ? atoll(s) : 0;
}

void vw_rows_free(VwRows *r) {
    for (size_t i = 0; i < r->n * (size_t)r->ncol; i++) free(r->cell[i]);
    free(r->cell);
    memset(r, 0, sizeof *r);
}

char *vw_sql_quote(const char *s) {
    size_t n = 3;
    for (const char *p = s; *p; p++) n += *p == '\'' ? 2 : 1;
    char *q = malloc(n), *w = q;
    if (!q) return NULL;
    *w++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') *w++ = '\'';
        *w++ = *p;
    }
    *w++ = '\'';
    *w = 0;
    return q;
}
