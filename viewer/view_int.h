/* view_int.h -- what view.c (terminal, screens, keys) and view_doc.c (safe
 * text, documents, the detail pages and their hints) share.  Not a public
 * interface. */
#ifndef DR_VIEW_INT_H
#define DR_VIEW_INT_H

#include <stddef.h>

#include "../schema/text.h"
#include "../schema/trace.h"

/* Display attributes, mapped to curses attributes (and colours when the
 * terminal has them) in one place in view.c. */
enum { VA_NORMAL, VA_HEAD, VA_SEL, VA_TITLE, VA_HI, VA_HINT, VA_ERR, VA_DIM, VA__N };

/* Untrusted text is made printable by dr_safe (schema/text.h); the viewer
 * sets dr_text_utf8 from the locale. */
/* Columns a sanitised string takes, and how many of its bytes fit in cols. */
int vw_width(const char *s);
size_t vw_fit(const char *s, int cols, int *used);

/* A document: sanitised lines with an attribute each, for the detail
 * pages.  Capped at VW_DOC_MAX lines. */
#define VW_DOC_MAX 50000
typedef struct {
    char *text;
    int attr;
} VwLine;
typedef struct {
    VwLine *v;
    size_t n, cap;
    int cut; /* lines were dropped at the cap */
} VwDoc;

/* Appends text, one line per '\n', each sanitised. */
void vw_doc_add(VwDoc *d, int attr, const char *text);
/* printf, then vw_doc_add (so arguments from the trace are sanitised too). */
void vw_doc_addf(VwDoc *d, int attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void vw_doc_free(VwDoc *d);

/* What a detail page is about: the list row that was opened. */
typedef struct {
    int screen;        /* DR_VIEW_* */
    long long id;      /* seq of the event, or code id for a frame */
    long long code_id; /* the frame, when known */
    char cid[64];      /* compile id, when known */
} VwKey;

/* Kind ids of the trace (strings ids), 0 when the trace has none yet. */
typedef struct {
    long long callback, compile, guard, guard_failure, graph_break, graph, speculation, side_effect,
        error, cache_entry;
} VwKinds;

/* Builds the detail page of key into d.  Returns DR_OK or an error that
 * ends the viewer (a corrupt trace); an unreadable blob is shown in d. */
int vw_detail(DrTrace *t, const VwKinds *k, const VwKey *key, int limit_hit, VwDoc *d,
              DrError *err);

/* Rows of a query, every value copied (NULL stays NULL). */
typedef struct {
    char **cell; /* n * ncol values */
    size_t n, cap;
    int ncol;
} VwRows;
/* Runs sql and appends its rows to r; returns DR_OK or the error. */
int vw_rows_query(DrTrace *t, const char *sql, VwRows *r, DrError *err);
const char *vw_cell(const VwRows *r, size_t row, int col); /* NULL for SQL NULL */
long long vw_cell_int(const VwRows *r, size_t row, int col);
void vw_rows_free(VwRows *r);

/* An SQL string literal of s ('...' with quotes doubled), malloc'd. */
char *vw_sql_quote(const char *s);

#endif
