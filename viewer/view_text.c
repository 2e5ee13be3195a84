/* view_text.c -- the viewer's safe text, documents and query rows (see view_int.h).
 *
 * No byte of a trace reaches the terminal except through vw_safe: it
 * passes printable ASCII and valid, printable, non-reordering UTF-8, and
 * shows everything else escaped (^[ for ESC, \xff for a byte that is not
 * UTF-8, \u202e for a bidi override); outside a UTF-8 locale it passes
 * ASCII only.  A document holds sanitised lines only. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "view_int.h"

int vw_utf8 = 1;

/* ---- safe text ------------------------------------------------------------ */

/* The code point of the valid UTF-8 sequence at s (n bytes left), with its
 * length in *len; -1 when it is not one. */
static long utf8_decode(const unsigned char *s, size_t n, size_t *len) {
    unsigned c = s[0];
    size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (k == 0 || k > n) return -1;
    long cp = k == 1 ? (long)c : k == 2 ? (long)(c & 0x1f) : k == 3 ? (long)(c & 0x0f)
                                                                     : (long)(c & 0x07);
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return -1;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const long min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
    *len = k;
    return cp;
}

/* Characters that reorder or hide text (Trojan Source) are shown escaped. */
static int is_bidi(long cp) {
    return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
           cp == 0x200f || cp == 0x061c;
}

typedef struct {
    char *s;
    size_t n, cap;
    int cols;
} Out;

static void out_put(Out *o, const char *p, size_t n, int cols) {
    if (o->n + n + 1 > o->cap) {
        size_t cap = (o->cap ? o->cap * 2 : 64) + n;
        char *s = realloc(o->s, cap);
        if (!s) return; /* out of memory: the text is shorter, never unsafe */
        o->s = s;
        o->cap = cap;
    }
    memcpy(o->s + o->n, p, n);
    o->n += n;
    o->s[o->n] = 0;
    o->cols += cols;
}

char *vw_safe(const char *str, size_t n, int max_cols, int stop_at_nl) {
    Out o = {0};
    out_put(&o, "", 0, 0);
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    char esc[16];
    for (size_t i = 0; i < n && s[i];) {
        unsigned c = s[i];
        if (c == '\n' && stop_at_nl) {
            if (i + 1 < n && s[i + 1]) out_put(&o, " ...", 4, 4);
            break;
        }
        const char *piece = esc;
        size_t plen, adv = 1;
        int cols;
        if (c == '\t') {
            int sp = 4 - o.cols % 4;
            piece = "    ";
            plen = (size_t)sp;
            cols = sp;
        } else if (c < 0x20 || c == 0x7f) {
            esc[0] = '^', esc[1] = (char)(c ^ 0x40), esc[2] = 0;
            plen = 2, cols = 2;
        } else if (c < 0x80) {
            piece = (const char *)s + i;
            plen = 1, cols = 1;
        } else {
            size_t len = 0;
            long cp = utf8_decode(s + i, n - i, &len);
            int w = cp >= 0 ? wcwidth((wchar_t)cp) : -1;
            if (cp < 0) {
                snprintf(esc, sizeof esc, "\\x%02x", c);
            } else if (cp < 0xa0 || is_bidi(cp) || w <= 0 || !vw_utf8) {
                snprintf(esc, sizeof esc, cp > 0xffff ? "\\U%08lx" : "\\u%04lx", cp);
                adv = len;
            } else {
                piece = (const char *)s + i;
                adv = len;
                plen = len;
                cols = w;
                goto put;
            }
            plen = strlen(esc);
            cols = (int)plen;
        }
    put:
        if (max_cols > 0 && o.cols + cols > max_cols - 3) {
            out_put(&o, "...", 3, 3);
            break;
        }
        out_put(&o, piece, plen, cols);
        i += adv;
    }
    return o.s;
}

/* Sanitised strings hold only printable ASCII and valid printable UTF-8. */
size_t vw_fit(const char *str, int cols, int *used) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    int w = 0;
    while (s[i]) {
        size_t len = 1;
        int cw = 1;
        if (s[i] >= 0x80) {
            long cp = utf8_decode(s + i, strlen((const char *)s + i), &len);
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
        doc_push(d, attr, vw_safe(p, n, 4000, 0));
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

