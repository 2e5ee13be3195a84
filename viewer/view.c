/* view.c -- `dynrec view`: screens, keys and the terminal (see view.h).
 *
 * One state (the active screen, a list or an open detail page) and one
 * loop: draw into a cell buffer, paint the buffer with curses, read a key,
 * map it through the key table to an action.  Drawing never touches the
 * terminal, so `--dump-first-screen` prints the same buffer as text (for
 * tests and the benchmark).  Each list screen is a row of the screens
 * table: the SQL of one page (LIMIT/OFFSET over the events table, by kind
 * id, no view that scans the whole trace per row) and its columns; only
 * the rows around the cursor are held.  Every string from the trace is
 * sanitised (dr_safe, schema/text.c) before it is put in the buffer. */
#define _GNU_SOURCE 1
#include "view.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "view_int.h"

#include <sqlite3.h>

#include "../replayer/compare.h"

/* ---- screens -------------------------------------------------------------- */

typedef struct {
    const char *title;
    int width; /* columns; 0: what is left */
} Col;

/* Each page query returns the shown columns, then the key: event seq (or
 * code id), code id, compile id.  %1$lld is the kind id, %2$ld the page
 * size, %3$ld the offset. */
typedef struct {
    const char *name, *title, *empty;
    const char *kind; /* whose event count is the row count; NULL: counted */
    Col cols[8];
    int ncols;
    const char *sql;
} ScreenDef;

#define BASENAME(f) "replace(" f ", rtrim(" f ", replace(" f ", '/', '')), '')"
/* The display name and user location a compile or guard failure recorded
 * in its data (schema 3; NULL before). */
#define DISPLAY(d)                                                                                 \
    "CASE WHEN json_valid(" d ".text) THEN json_extract(" d ".text, '$.display_name') END"
#define LOCATION(d)                                                                                \
    "CASE WHEN json_valid(" d ".text) THEN json_extract(" d ".text, '$.user_location') END"

static const ScreenDef screens[DR_VIEW__N] = {
    [DR_VIEW_RECOMPILES] =
        {"recompiles",
         "Recompiles, guard failures first (by frame, then time)",
         "no recompiles: no cache entry's guards failed in this trace",
         NULL,
         {{"compile", 8},
          {"frame", 14},
          {"where", 22},
          {"#/frame", 9},
          {"rej", 3},
          {"failed guard (of the newest rejected entry)", 0}},
         6,
         "WITH g AS (SELECT code_id, compile_id, n, s0 FROM vw_recompiles WHERE n > 0 AND "
         "%1$lld ORDER BY code_id, s0 LIMIT %2$ld OFFSET %3$ld) "
         /* The frame by the name its compile recorded (what a torch wrapper
          * wraps, and the user's call site), else its qualname. */
         "SELECT cs.text, coalesce(" DISPLAY("gd") ", c.qualname), coalesce(" BASENAME(LOCATION("gd")) ", " BASENAME(
             "c.filename") " || ':' || c.firstlineno), '', "
                           "g.n, r.text, g.s0, g.code_id, cs.text FROM g LEFT JOIN v_code c ON c.code_id = "
                           "g.code_id LEFT JOIN strings cs ON cs.id = g.compile_id LEFT JOIN events e ON e.seq = "
                           "g.s0 LEFT JOIN strings r ON r.id = e.text_id LEFT JOIN strings gd ON gd.id = "
                           "e.data_id ORDER BY g.code_id, g.s0"},
    [DR_VIEW_FRAMES] =
        {"frames",
         "Frames Dynamo handled: callbacks (cache misses), cache hits, compiles",
         "no frame reached Dynamo's callback",
         NULL,
         {{"frame", 28}, {"where", 26}, {"callbacks", 9}, {"hits", 9}, {"compiles", 0}},
         5,
         "SELECT c.qualname, " BASENAME(
             "c.filename") " || ':' || c.firstlineno, f.callbacks, "
                           "f.cache_hits, f.compiles, f.code_id, f.code_id, '' FROM vw_frames f JOIN v_code c ON "
                           "c.code_id = f.code_id WHERE %1$lld ORDER BY f.compiles DESC, f.code_id "
                           "LIMIT %2$ld OFFSET %3$ld"},
    [DR_VIEW_COMPILES] =
        {"compiles",
         "Compiles in order: outcome, attempts, graphs, recompile, time",
         "no compile recorded",
         "compile",
         {{"compile", 8},
          {"frame", 18},
          {"outcome", 9},
          {"att", 3},
          {"gr", 3},
          {"recomp", 6},
          {"ms", 8},
          {"reason", 0}},
         8,
         "SELECT c.text, coalesce(" DISPLAY(
             "d") ", v.qualname), json_extract(d.text, '$.outcome'), "
                  "json_extract(d.text, '$.attempts'), json_extract(d.text, '$.graphs'), CASE WHEN "
                  "json_extract(d.text, '$.recompile') THEN 'yes' ELSE '' END, printf('%%.1f', "
                  "json_extract(d.text, '$.duration_ns') / 1e6), s.text, e.seq, e.code_id, c.text "
                  "FROM events e LEFT JOIN strings c ON c.id = e.compile_id LEFT JOIN strings d ON "
                  "d.id = e.data_id LEFT JOIN strings s ON s.id = e.text_id LEFT JOIN v_code v ON "
                  "v.code_id = e.code_id WHERE e.kind_id = %1$lld ORDER BY e.seq LIMIT %2$ld OFFSET "
                  "%3$ld"},
    [DR_VIEW_BREAKS] =
        {"breaks",
         "Graph breaks (Enter: reason, user stack, source)",
         "no graph break",
         "graph_break",
         {{"compile", 8}, {"frame", 18}, {"line", 5}, {"type", 22}, {"reason", 0}},
         5,
         "SELECT c.text, v.qualname, e.num, json_extract(d.text, '$.type'), s.text, e.seq, "
         "e.code_id, c.text FROM events e LEFT JOIN strings c ON c.id = e.compile_id LEFT JOIN "
         "strings d ON d.id = e.data_id LEFT JOIN strings s ON s.id = e.text_id LEFT JOIN v_code "
         "v ON v.code_id = e.code_id WHERE e.kind_id = %1$lld ORDER BY e.seq LIMIT %2$ld "
         "OFFSET %3$ld"},
    [DR_VIEW_ERRORS] =
        {"errors",
         "Errors inside Dynamo (suppressed: it fell back to eager)",
         "no error inside Dynamo",
         "error",
         {{"compile", 8}, {"exception", 20}, {"", 10}, {"message", 0}},
         4,
         "SELECT c.text, json_extract(d.text, '$.exc_type'), CASE WHEN e.num THEN 'SUPPRESSED' "
         "ELSE 'raised' END, s.text, e.seq, e.code_id, c.text FROM events e LEFT JOIN strings c "
         "ON c.id = e.compile_id LEFT JOIN strings d ON d.id = e.data_id LEFT JOIN strings s "
         "ON s.id = e.text_id WHERE e.kind_id = %1$lld ORDER BY e.seq LIMIT %2$ld OFFSET %3$ld"},
    [DR_VIEW_GRAPHS] =
        {"graphs",
         "Graphs handed to the backend (Enter: inputs, FX code)",
         "no graph reached a backend",
         "graph",
         {{"compile", 8}, {"backend", 24}, {"nodes", 6}, {"inputs", 6}, {"ms", 0}},
         5,
         "SELECT c.text, s.text, e.num, json_array_length(json_extract(d.text, '$.inputs')), "
         "printf('%%.1f', json_extract(d.text, '$.duration_ns') / 1e6), e.seq, e.code_id, "
         "c.text FROM events e LEFT JOIN strings c ON c.id = e.compile_id LEFT JOIN strings d "
         "ON d.id = e.data_id AND json_valid(d.text) LEFT JOIN strings s ON s.id = e.text_id "
         "WHERE e.kind_id = %1$lld ORDER BY e.seq LIMIT %2$ld OFFSET %3$ld"},
    [DR_VIEW_SPECULATION] =
        {"speculation",
         "Speculation: checkpoint -> restart/rollback/merge (Enter: timeline)",
         "no speculation recorded",
         "speculation",
         {{"compile", 8}, {"action", 10}, {"dropped", 7}, {"step", 0}},
         4,
         "SELECT c.text, json_extract(d.text, '$.action'), json_extract(d.text, "
         "'$.dropped_side_effects'), s.text, e.seq, e.code_id, c.text FROM events e LEFT JOIN "
         "strings c ON c.id = e.compile_id LEFT JOIN strings d ON d.id = e.data_id LEFT JOIN "
         "strings s ON s.id = e.text_id WHERE e.kind_id = %1$lld ORDER BY e.seq LIMIT %2$ld "
         "OFFSET %3$ld"},
    [DR_VIEW_DIFF] =
        {"diff",
         "Divergences, first one first (Enter: both sides)",
         "no comparison: open a trace written by dynrec rerun or replay, or give --diff B.db",
         NULL,
         {{"#", 4}, {"category", 14}, {"compile a / b", 14}, {"what differs", 0}},
         4,
         "SELECT n + 1, category, coalesce(compile_a, '-') || ' / ' || coalesce(compile_b, '-'), "
         "what, n, 0, coalesce(compile_a, compile_b, '') FROM vw_diff WHERE %1$lld ORDER BY n "
         "LIMIT %2$ld OFFSET %3$ld"},
};

int dr_view_screen_parse(const char *name) {
    for (int i = 0; i < DR_VIEW__N; i++)
        if (strcmp(name, screens[i].name) == 0) return i;
    return -1;
}

const char *dr_view_screen_name(int screen) {
    return screen >= 0 && screen < DR_VIEW__N ? screens[screen].name : "?";
}

/* ---- keys ----------------------------------------------------------------- */

/* Keys are data: the loop maps a key to an action through this table, and
 * `?` lists the same table. */
enum {
    K_NONE,
    K_UP,
    K_DOWN,
    K_PGUP,
    K_PGDN,
    K_TOP,
    K_BOTTOM,
    K_OPEN,
    K_BACK,
    K_NEXT,
    K_PREV,
    K_SCREEN,
    K_SEARCH,
    K_MATCH_NEXT,
    K_MATCH_PREV,
    K_HELP,
    K_QUIT
};

static const struct {
    int key, action;
    const char *name, *help; /* help NULL: listed with the row above */
} keys[] = {
    {KEY_UP, K_UP, "Up, k", "previous row (a detail page: scroll up)"},
    {'k', K_UP, NULL, NULL},
    {KEY_DOWN, K_DOWN, "Down, j", "next row (a detail page: scroll down)"},
    {'j', K_DOWN, NULL, NULL},
    {KEY_PPAGE, K_PGUP, "PgUp, b", "one page up"},
    {'b', K_PGUP, NULL, NULL},
    {KEY_NPAGE, K_PGDN, "PgDn, Space", "one page down"},
    {' ', K_PGDN, NULL, NULL},
    {'g', K_TOP, "g, Home", "first row"},
    {KEY_HOME, K_TOP, NULL, NULL},
    {'G', K_BOTTOM, "G, End", "last row"},
    {KEY_END, K_BOTTOM, NULL, NULL},
    {'\n', K_OPEN, "Enter, Right, l", "open the row: its detail page"},
    {'\r', K_OPEN, NULL, NULL},
    {KEY_ENTER, K_OPEN, NULL, NULL},
    {KEY_RIGHT, K_OPEN, NULL, NULL},
    {'l', K_OPEN, NULL, NULL},
    {27, K_BACK, "Esc, Left, h", "back from a detail page to its list"},
    {KEY_LEFT, K_BACK, NULL, NULL},
    {'h', K_BACK, NULL, NULL},
    {KEY_BACKSPACE, K_BACK, NULL, NULL},
    {'\t', K_NEXT, "Tab", "next screen"},
    {KEY_BTAB, K_PREV, "Shift-Tab", "previous screen"},
    {'1', K_SCREEN, "1 ... 8",
     "recompiles, frames, compiles, breaks, errors, graphs, "
     "speculation, diff"},
    {'/', K_SEARCH, "/", "search this screen (case-insensitive)"},
    {'n', K_MATCH_NEXT, "n", "next match"},
    {'N', K_MATCH_PREV, "N", "previous match"},
    {'?', K_HELP, "?", "this help"},
    {'q', K_QUIT, "q", "quit"},
};

static int key_action(int ch) {
    if (ch >= '1' && ch < '1' + DR_VIEW__N) return K_SCREEN;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (keys[i].key == ch) return keys[i].action;
    return K_NONE;
}

/* ---- state ---------------------------------------------------------------- */

typedef struct {
    long long code_id;
    long n;     /* recompiles of the frame */
    long start; /* index of its first row on the recompiles screen */
    int limit;  /* the frame hit the recompile limit */
} FrameSum;

typedef struct {
    long sel, top, count;
    VwRows rows; /* the cached window of rows, from rows_off */
    long rows_off;
    int valid;
    int counted; /* count is known */
} List;

typedef struct {
    char ch[8];
    unsigned char attr, cont;
} Cell;

typedef struct {
    DrTrace *t;
    DrError *err;
    int status; /* the error that ends the viewer, or DR_OK */
    int follow, complete, dump;
    long long data_version;
    VwKinds kinds;
    long kind_n[16];
    FrameSum *fs;
    size_t nfs;
    int scr;
    List list[DR_VIEW__N];
    /* an open detail page */
    VwDoc doc;
    int doc_open, help_open;
    long doc_top, doc_match;
    size_t *vis; /* the doc's wrapped rows: line index << 20 | byte offset */
    size_t nvis;
    int vis_width;
    char search[256];
    long match; /* the list row of the last match, -1 none */
    char msg[300];
    Cell *buf;
    int rows, cols;
    int color;
    long ndiff;          /* rows of temp.vw_diff (the diff screen) */
    char diff_note[400]; /* what the diff screen compares, or why it cannot */
} View;

static volatile sig_atomic_t vw_signal;

static void on_signal(int sig) { vw_signal = sig; }

/* ---- data ----------------------------------------------------------------- */

static int load_kinds(View *v) {
    VwRows r = {0};
    int rc = vw_rows_query(v->t,
                           "SELECT c.kind_id, s.text, c.n FROM event_counts c JOIN strings "
                           "s ON s.id = c.kind_id",
                           &r, v->err);
    if (rc != DR_OK) return rc;
    static const char *names[] = {"callback",    "compile",    "guard",       "guard_failure",
                                  "graph_break", "graph",      "speculation", "side_effect",
                                  "error",       "cache_entry"};
    long long *ids[] = {&v->kinds.callback,      &v->kinds.compile,     &v->kinds.guard,
                        &v->kinds.guard_failure, &v->kinds.graph_break, &v->kinds.graph,
                        &v->kinds.speculation,   &v->kinds.side_effect, &v->kinds.error,
                        &v->kinds.cache_entry};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        *ids[i] = 0;
        v->kind_n[i] = 0;
        for (size_t j = 0; j < r.n; j++)
            if (vw_cell(&r, j, 1) && strcmp(vw_cell(&r, j, 1), names[i]) == 0) {
                *ids[i] = vw_cell_int(&r, j, 0);
                v->kind_n[i] = (long)vw_cell_int(&r, j, 2);
            }
    }
    vw_rows_free(&r);
    return DR_OK;
}

static long kind_count(const View *v, const char *kind) {
    static const char *names[] = {"callback",    "compile",    "guard",       "guard_failure",
                                  "graph_break", "graph",      "speculation", "side_effect",
                                  "error",       "cache_entry"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(names[i], kind) == 0) return v->kind_n[i];
    return 0;
}

static long long screen_kind(const View *v, int s) {
    switch (s) {
    case DR_VIEW_RECOMPILES: return v->kinds.guard_failure;
    case DR_VIEW_FRAMES: return v->kinds.callback;
    case DR_VIEW_COMPILES: return v->kinds.compile;
    case DR_VIEW_BREAKS: return v->kinds.graph_break;
    case DR_VIEW_ERRORS: return v->kinds.error;
    case DR_VIEW_GRAPHS: return v->kinds.graph;
    case DR_VIEW_DIFF: return 1;
    default: return v->kinds.speculation;
    }
}

/* One scan of the trace builds the summary of the recompiles screen, a
 * TEMP table (never the user's file): per (frame, compile) the guard
 * failures and the first of them, and whether the compile was refused at
 * the recompile limit.  Pages and the per-frame counts are then read from
 * it through its index.  The frame summary (one row per frame that
 * recompiled) is held in memory. */
static int load_frames(View *v) {
    free(v->fs);
    v->fs = NULL;
    v->nfs = 0;
    v->list[DR_VIEW_RECOMPILES].count = 0;
    char sql[2048];
    int rc = dr_trace_query(v->t, "DROP TABLE IF EXISTS temp.vw_recompiles", NULL, NULL, v->err);
    if (rc != DR_OK || !v->kinds.guard_failure) return rc;
    snprintf(sql, sizeof sql,
             "CREATE TEMP TABLE vw_recompiles AS SELECT code_id, compile_id, "
             "sum(kind_id = %1$lld) AS n, min(CASE WHEN kind_id = %1$lld THEN seq END) AS s0, "
             "max(kind_id = %2$lld AND text_id IN (SELECT id FROM strings WHERE text LIKE "
             "'%%recompile limit%%' OR text LIKE '%%recompile_limit%%' OR text LIKE "
             "'%%cache_size_limit%%' OR text LIKE '%%cache size limit%%')) AS lim "
             "FROM events WHERE kind_id IN (%1$lld, %2$lld) GROUP BY code_id, compile_id",
             v->kinds.guard_failure, v->kinds.compile ? v->kinds.compile : -1);
    if ((rc = dr_trace_query(v->t, sql, NULL, NULL, v->err)) != DR_OK ||
        (rc = dr_trace_query(v->t,
                             "CREATE INDEX temp.vw_recompiles_order ON "
                             "vw_recompiles(code_id, s0) WHERE n > 0",
                             NULL, NULL, v->err)) != DR_OK)
        return rc;
    VwRows r = {0};
    rc = vw_rows_query(v->t,
                       "SELECT code_id, sum(n > 0), max(lim) FROM vw_recompiles GROUP BY "
                       "code_id HAVING sum(n > 0) > 0 OR max(lim) > 0 ORDER BY code_id",
                       &r, v->err);
    if (rc == DR_OK && r.n && !(v->fs = calloc(r.n, sizeof *v->fs)))
        rc = dr_error(v->err, DR_ERR_NOMEM, "out of memory");
    long start = 0;
    for (size_t i = 0; rc == DR_OK && i < r.n; i++) {
        FrameSum *f = &v->fs[v->nfs++];
        f->code_id = vw_cell_int(&r, i, 0);
        f->n = (long)vw_cell_int(&r, i, 1);
        f->limit = vw_cell_int(&r, i, 2) > 0;
        f->start = start;
        start += f->n;
    }
    v->list[DR_VIEW_RECOMPILES].count = start;
    vw_rows_free(&r);
    return rc;
}

static const FrameSum *frame_sum(const View *v, long long code_id) {
    size_t lo = 0, hi = v->nfs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->fs[mid].code_id < code_id) lo = mid + 1;
        else hi = mid;
    }
    return lo < v->nfs && v->fs[lo].code_id == code_id ? &v->fs[lo] : NULL;
}

static int count_screen(View *v, int s) {
    List *l = &v->list[s];
    if (s == DR_VIEW_RECOMPILES) return DR_OK; /* load_frames counts it */
    if (s == DR_VIEW_DIFF) {
        l->count = v->ndiff;
        return DR_OK;
    }
    if (screens[s].kind) {
        l->count = kind_count(v, screens[s].kind);
        return DR_OK;
    }
    if (!v->kinds.callback) {
        l->count = 0;
        return DR_OK;
    }
    /* The frames screen: v_frames's numbers (SCHEMA.md) from one scan of
     * the trace into a TEMP table, not the view's three. */
    char sql[2048], *n = NULL;
    long long cb = v->kinds.callback, cp = v->kinds.compile ? v->kinds.compile : -1,
              ce = v->kinds.cache_entry ? v->kinds.cache_entry : -1;
    snprintf(sql, sizeof sql,
             "CREATE TEMP TABLE vw_frames AS "
             "WITH f AS MATERIALIZED (SELECT code_id, kind_id, data_id, code2_id FROM events "
             "WHERE kind_id IN (%1$lld, %2$lld, %3$lld)), "
             "compiled AS (SELECT id FROM strings WHERE id IN (SELECT data_id FROM f WHERE "
             "kind_id = %1$lld) AND json_valid(text) AND json_extract(text, '$.outcome') = "
             "'compiled'), "
             "cb AS (SELECT code_id, count(*) AS callbacks, sum(data_id IN compiled) AS "
             "ran_compiled FROM f WHERE kind_id = %1$lld GROUP BY code_id), "
             "cp AS (SELECT code_id, count(*) AS compiles FROM f WHERE kind_id = %2$lld GROUP BY "
             "code_id), "
             "runs AS (SELECT l.code_id, sum(fc.calls) AS runs FROM (SELECT DISTINCT code_id, "
             "code2_id FROM f WHERE kind_id = %3$lld) l JOIN frame_counts fc ON fc.code_id = "
             "l.code2_id GROUP BY l.code_id) "
             "SELECT cb.code_id, cb.callbacks, max(coalesce(runs.runs, 0) - "
             "coalesce(cb.ran_compiled, 0), 0) AS cache_hits, coalesce(cp.compiles, 0) AS "
             "compiles FROM cb JOIN code_objects c ON c.id = cb.code_id LEFT JOIN cp ON "
             "cp.code_id = cb.code_id LEFT JOIN runs ON runs.code_id = cb.code_id",
             cb, cp, ce);
    int rc = dr_trace_query(v->t, "DROP TABLE IF EXISTS temp.vw_frames", NULL, NULL, v->err);
    if (rc == DR_OK) rc = dr_trace_query(v->t, sql, NULL, NULL, v->err);
    if (rc == DR_OK) rc = dr_trace_query_text(v->t, "SELECT count(*) FROM vw_frames", &n, v->err);
    l->count = n ? atol(n) : 0;
    free(n);
    return rc;
}

/* A screen's row count, worked out when the screen is first shown (each
 * costs a scan of a large trace, so only the screens a user visits pay). */
static int ensure_count(View *v, int s) {
    List *l = &v->list[s];
    if (l->counted || v->status != DR_OK) return v->status;
    int rc = s == DR_VIEW_RECOMPILES ? load_frames(v) : count_screen(v, s);
    if (rc != DR_OK) return v->status = rc;
    l->counted = 1;
    if (l->sel >= l->count) l->sel = l->count - 1;
    if (l->sel < 0) l->sel = 0;
    return DR_OK;
}

/* Everything that depends on how much the trace holds (again, in --follow). */
static int reload(View *v) {
    int rc = load_kinds(v);
    for (int s = 0; rc == DR_OK && s < DR_VIEW__N; s++) {
        vw_rows_free(&v->list[s].rows);
        v->list[s].valid = 0;
        v->list[s].counted = 0;
    }
    if (rc == DR_OK) rc = ensure_count(v, v->scr);
    v->complete = dr_trace_is_complete(v->t);
    return rc;
}

/* Fetches rows [off, off + n) of screen s into r. */
static int fetch(View *v, int s, long off, long n, VwRows *r) {
    long long kind = screen_kind(v, s);
    if (!kind) return DR_OK;
    char *sql = NULL;
    if (asprintf(&sql, screens[s].sql, kind, n, off) < 0)
        return dr_error(v->err, DR_ERR_NOMEM, "out of memory");
    int rc = vw_rows_query(v->t, sql, r, v->err);
    free(sql);
    return rc;
}

/* Row i of screen s (NULL when it does not exist), fetching the window of
 * rows around it when it is not held. */
static const char *const *row_at(View *v, int s, long i) {
    List *l = &v->list[s];
    if (i < 0 || i >= l->count || v->status != DR_OK) return NULL;
    if (!l->valid || i < l->rows_off || i >= l->rows_off + (long)l->rows.n) {
        vw_rows_free(&l->rows);
        long page = v->rows > 10 ? v->rows * 2 : 64;
        long off = i - page / 2 < 0 ? 0 : i - page / 2;
        v->status = fetch(v, s, off, page, &l->rows);
        l->rows_off = off;
        l->valid = v->status == DR_OK;
        if (!l->valid || i >= l->rows_off + (long)l->rows.n) return NULL;
    }
    return (const char *const *)l->rows.cell + (size_t)(i - l->rows_off) * (size_t)l->rows.ncol;
}

/* ---- drawing into the cell buffer ----------------------------------------- */

static void buf_clear(View *v) {
    for (int i = 0; i < v->rows * v->cols; i++) {
        strcpy(v->buf[i].ch, " ");
        v->buf[i].attr = VA_NORMAL;
        v->buf[i].cont = 0;
    }
}

static void fill_row(View *v, int row, int attr) {
    if (row < 0 || row >= v->rows) return;
    for (int c = 0; c < v->cols; c++) v->buf[row * v->cols + c].attr = (unsigned char)attr;
}

/* Puts sanitised text at (row, col), at most maxcols columns; returns the
 * columns used. */
static int put(View *v, int row, int col, int attr, const char *s, int maxcols) {
    if (row < 0 || row >= v->rows || col >= v->cols || !s) return 0;
    if (maxcols <= 0 || col + maxcols > v->cols) maxcols = v->cols - col;
    int used = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        /* one character: sanitised text is valid UTF-8 of width 1 or 2 */
        size_t one = 1;
        while (one < 4 && p[one] && (p[one] & 0xC0) == 0x80) one++;
        char ch[8] = {0};
        memcpy(ch, p, one);
        int cw = vw_width(ch);
        if (cw <= 0) cw = 1;
        if (used + cw > maxcols) break;
        Cell *c = &v->buf[row * v->cols + col + used];
        memcpy(c->ch, ch, sizeof ch);
        c->attr = (unsigned char)attr;
        c->cont = 0;
        if (cw == 2) {
            Cell *c2 = c + 1;
            c2->ch[0] = 0;
            c2->attr = (unsigned char)attr;
            c2->cont = 1;
        }
        used += cw;
        p += one;
    }
    return used;
}

/* A cell from the trace: sanitised, first line only. */
static int put_cell(View *v, int row, int col, int attr, const char *raw, int maxcols) {
    char *s = dr_safe(raw ? raw : "", raw ? strlen(raw) : 0, 1000, 1);
    int n = put(v, row, col, attr, s, maxcols);
    free(s);
    return n;
}

static void col_widths(const View *v, int s, int *w) {
    const ScreenDef *d = &screens[s];
    int fixed = 0;
    for (int i = 0; i < d->ncols; i++) fixed += d->cols[i].width + 1;
    for (int i = 0; i < d->ncols; i++) {
        w[i] = d->cols[i].width;
        if (w[i] == 0) w[i] = v->cols - fixed - 1 > 8 ? v->cols - fixed - 1 : 8;
    }
}

static const char *status_word(const View *v) {
    if (v->complete) return "complete";
    return v->follow ? "recording" : "INCOMPLETE (cut short)";
}

static void draw_tabs(View *v) {
    fill_row(v, 0, VA_HEAD);
    /* roomy when the terminal is wide, all eight tabs at 80 columns */
    int tabs = 0;
    for (int s = 0; s < DR_VIEW__N; s++) tabs += (int)strlen(screens[s].name) + 3;
    int wide = tabs + 13 <= v->cols;
    int c = wide ? put(v, 0, 0, VA_HEAD, " dynrec view ", 0) : 0;
    for (int s = 0; s < DR_VIEW__N; s++) {
        char t[32];
        snprintf(t, sizeof t, wide || s ? " %d %s" : "%d %s", s + 1, screens[s].name);
        c += put(v, 0, c, s == v->scr && !v->help_open ? VA_SEL : VA_HEAD, t, 0);
    }
}

/* The title of the page on row 1, the state of the recording at its right. */
static void draw_title(View *v, const char *title) {
    char st[64];
    snprintf(st, sizeof st, " [%s]", status_word(v));
    int w = vw_width(st);
    put(v, 1, 0, VA_TITLE, title, v->cols - w - 1);
    put(v, 1, v->cols - w, v->complete ? VA_DIM : VA_ERR, st, 0);
}

/* The bottom row: where the cursor is (or the last message), the keys
 * that matter most at the right. */
static void draw_status(View *v, const char *left) {
    static const char keys_hint[] = " ? help  q quit ";
    int r = v->rows - 1, w = (int)sizeof keys_hint - 1;
    fill_row(v, r, VA_HEAD);
    put(v, r, 0, VA_HEAD, v->msg[0] ? v->msg : left, v->cols - w - 1);
    if (v->cols > 2 * w) put(v, r, v->cols - w, VA_HEAD, keys_hint, 0);
}

static void draw_list(View *v) {
    int s = v->scr;
    const ScreenDef *d = &screens[s];
    List *l = &v->list[s];
    if (ensure_count(v, s) != DR_OK) return;
    char *path = dr_safe(dr_trace_path(v->t), strlen(dr_trace_path(v->t)), v->cols / 2, 1);
    char title[512];
    snprintf(title, sizeof title, "%s  (%ld)  %s", d->title, l->count, path ? path : "");
    free(path);
    draw_title(v, title);
    int w[8];
    col_widths(v, s, w);
    int c = 1;
    for (int i = 0; i < d->ncols; i++) {
        put(v, 2, c, VA_DIM, d->cols[i].title, w[i]);
        c += w[i] + 1;
    }
    int body = v->rows - 4, y0 = 3;
    if (s == DR_VIEW_DIFF && v->diff_note[0] && l->count) body--, y0++; /* the note's row */
    if (body < 1) body = 1;
    if (l->sel < l->top) l->top = l->sel;
    if (l->sel >= l->top + body) l->top = l->sel - body + 1;
    if (l->top < 0) l->top = 0;
    if (s == DR_VIEW_DIFF && v->diff_note[0]) put(v, 3, 2, VA_DIM, v->diff_note, 0);
    if (l->count == 0 && !(s == DR_VIEW_DIFF && v->diff_note[0])) put(v, 3, 2, VA_DIM, d->empty, 0);
    for (int i = 0; i < body && l->top + i < l->count; i++) {
        long idx = l->top + i;
        const char *const *row = row_at(v, s, idx);
        if (!row) break;
        int attr = idx == l->sel ? VA_SEL : VA_NORMAL;
        int y = y0 + i;
        if (attr == VA_SEL) fill_row(v, y, VA_SEL);
        c = 1;
        for (int k = 0; k < d->ncols; k++) {
            const char *cell = row[k];
            char tmp[64];
            if (s == DR_VIEW_RECOMPILES && k == 3) {
                const FrameSum *f =
                    frame_sum(v, atoll(row[d->ncols + 1] ? row[d->ncols + 1] : "0"));
                if (f)
                    snprintf(tmp, sizeof tmp, "%ld/%ld%s", idx - f->start + 1, f->n,
                             f->limit ? " LIMIT" : "");
                else snprintf(tmp, sizeof tmp, "?");
                cell = tmp;
                put(v, y, c, f && f->limit && attr != VA_SEL ? VA_ERR : attr, cell, w[k]);
            } else {
                /* "0/2: reason": the entry is in the detail page */
                if (s == DR_VIEW_RECOMPILES && k == 5 && cell) {
                    const char *p = strstr(cell, ": ");
                    if (p && p - cell < 24 && strspn(cell, "0123456789/[]") == (size_t)(p - cell))
                        cell = p + 2;
                }
                put_cell(v, y, c, attr, cell, w[k]);
            }
            c += w[k] + 1;
        }
    }
    char left[256];
    snprintf(left, sizeof left, " row %ld/%ld  Enter open  Tab screens  / search",
             l->count ? l->sel + 1 : 0, l->count);
    draw_status(v, left);
}

/* How far a wrapped line's later rows are indented: under its text, two
 * more than its own indentation, at most a third of the width. */
static int cont_indent(const char *text, int width) {
    int lead = (int)strspn(text, " ") + 2;
    return lead > width / 3 ? width / 3 : lead;
}

/* The doc's rows wrapped at the screen width. */
static void wrap_doc(View *v) {
    int width = v->cols - 2 > 10 ? v->cols - 2 : 10;
    if (v->vis && v->vis_width == width) return;
    free(v->vis);
    v->vis = NULL;
    v->nvis = 0;
    size_t cap = v->doc.n + 16;
    v->vis = malloc(cap * sizeof *v->vis);
    if (!v->vis) return;
    for (size_t i = 0; i < v->doc.n; i++) {
        const char *t = v->doc.v[i].text;
        size_t off = 0;
        do {
            if (v->nvis == cap) {
                size_t *n = realloc(v->vis, (cap *= 2) * sizeof *n);
                if (!n) return;
                v->vis = n;
            }
            v->vis[v->nvis++] = i << 20 | off;
            size_t n = vw_fit(t + off, off ? width - cont_indent(t, width) : width, NULL);
            if (n == 0 && t[off]) n = 1;
            /* break at a space when a word would be cut */
            if (t[off + n] && t[off + n] != ' ') {
                size_t b = n;
                while (b > n / 2 && t[off + b - 1] != ' ') b--;
                if (b > n / 2) n = b;
            }
            off += n;
        } while (t[off] && off < ((size_t)1 << 20));
    }
    v->vis_width = width;
}

static void draw_doc(View *v) {
    wrap_doc(v);
    int body = v->rows - 3;
    if (body < 1) body = 1;
    long maxtop = (long)v->nvis - body;
    if (v->doc_top > maxtop) v->doc_top = maxtop;
    if (v->doc_top < 0) v->doc_top = 0;
    draw_title(v, v->help_open ? "Keys" : "Detail (Esc back, / search)");
    for (int i = 0; i < body && v->doc_top + i < (long)v->nvis; i++) {
        size_t li = v->vis[v->doc_top + i] >> 20, off = v->vis[v->doc_top + i] & 0xfffff;
        int attr = (long)li == v->doc_match ? VA_SEL : v->doc.v[li].attr;
        if (attr == VA_SEL || attr == VA_HI) fill_row(v, 2 + i, attr);
        /* this row's piece of the line: up to where the next row starts */
        const char *text = v->doc.v[li].text + off;
        size_t n = strlen(text);
        size_t next = (size_t)(v->doc_top + i + 1);
        if (next < v->nvis && (v->vis[next] >> 20) == li) n = (v->vis[next] & 0xfffff) - off;
        char *piece = strndup(text, n);
        int indent = off ? cont_indent(v->doc.v[li].text, v->vis_width) : 0;
        put(v, 2 + i, 1 + indent, attr, piece ? piece : "", v->cols - 2 - indent);
        free(piece);
    }
    char left[256];
    snprintf(left, sizeof left, " lines %ld-%ld/%zu  Esc back  / search  n/N next/previous",
             v->nvis ? v->doc_top + 1 : 0,
             v->doc_top + body < (long)v->nvis ? v->doc_top + body : (long)v->nvis, v->nvis);
    draw_status(v, left);
}

static void draw(View *v) {
    buf_clear(v);
    draw_tabs(v);
    if (v->doc_open) draw_doc(v);
    else draw_list(v);
}

/* ---- the terminal --------------------------------------------------------- */

static chtype attr_of(const View *v, int a) {
    if (v->color) {
        switch (a) {
        case VA_HEAD: return COLOR_PAIR(1);
        case VA_SEL: return A_REVERSE | A_BOLD;
        case VA_TITLE: return A_BOLD;
        case VA_HI: return COLOR_PAIR(2) | A_BOLD;
        case VA_HINT: return COLOR_PAIR(3);
        case VA_ERR: return COLOR_PAIR(4) | A_BOLD;
        case VA_DIM: return COLOR_PAIR(5);
        }
        return A_NORMAL;
    }
    switch (a) {
    case VA_HEAD: return A_REVERSE;
    case VA_SEL: return A_REVERSE | A_BOLD;
    case VA_TITLE:
    case VA_HI:
    case VA_ERR: return A_BOLD;
    case VA_DIM: return A_DIM;
    }
    return A_NORMAL;
}

static void paint(View *v) {
    for (int r = 0; r < v->rows; r++) {
        move(r, 0);
        for (int c = 0; c < v->cols; c++) {
            const Cell *cell = &v->buf[r * v->cols + c];
            if (cell->cont) continue;
            attrset(attr_of(v, cell->attr));
            addstr(cell->ch);
        }
    }
    attrset(A_NORMAL);
    refresh();
}

static int resize_buf(View *v, int rows, int cols) {
    if (rows < 3) rows = 3;
    if (cols < 20) cols = 20;
    Cell *b = calloc((size_t)rows * (size_t)cols, sizeof *b);
    if (!b) return dr_error(v->err, DR_ERR_NOMEM, "out of memory");
    free(v->buf);
    v->buf = b;
    v->rows = rows;
    v->cols = cols;
    v->vis_width = 0;
    return DR_OK;
}

static void dump(View *v, FILE *out) {
    for (int r = 0; r < v->rows; r++) {
        char line[8192];
        size_t n = 0;
        for (int c = 0; c < v->cols && n + 8 < sizeof line; c++) {
            const Cell *cell = &v->buf[r * v->cols + c];
            if (cell->cont) continue;
            size_t k = strlen(cell->ch);
            memcpy(line + n, cell->ch, k);
            n += k;
        }
        while (n && line[n - 1] == ' ') n--;
        fprintf(out, "%.*s\n", (int)n, line);
    }
}

/* ---- actions -------------------------------------------------------------- */

static void close_doc(View *v) {
    vw_doc_free(&v->doc);
    free(v->vis);
    v->vis = NULL;
    v->nvis = 0;
    v->doc_open = v->help_open = 0;
}

static void open_help(View *v) {
    close_doc(v);
    vw_doc_add(&v->doc, VA_TITLE, "dynrec view: keys");
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (keys[i].help) vw_doc_addf(&v->doc, VA_NORMAL, "  %-16s %s", keys[i].name, keys[i].help);
    vw_doc_add(&v->doc, VA_NORMAL, "");
    vw_doc_add(&v->doc, VA_TITLE, "Screens");
    for (int s = 0; s < DR_VIEW__N; s++)
        vw_doc_addf(&v->doc, VA_NORMAL, "  %d %-12s %s", s + 1, screens[s].name, screens[s].title);
    vw_doc_add(&v->doc, VA_NORMAL, "");
    vw_doc_add(&v->doc, VA_DIM,
               "  Nothing in the trace runs; text from it is shown with control "
               "characters escaped (^[ for ESC).");
    v->doc_open = v->help_open = 1;
    v->doc_top = 0;
    v->doc_match = -1;
}

static void open_row(View *v) {
    int s = v->scr;
    List *l = &v->list[s];
    const char *const *row = row_at(v, s, l->sel);
    if (!row) return;
    int nc = screens[s].ncols;
    VwKey key = {.screen = s};
    key.id = row[nc] ? atoll(row[nc]) : 0;
    key.code_id = row[nc + 1] ? atoll(row[nc + 1]) : 0;
    snprintf(key.cid, sizeof key.cid, "%s", row[nc + 2] ? row[nc + 2] : "");
    const FrameSum *f = frame_sum(v, key.code_id);
    close_doc(v);
    v->status = vw_detail(v->t, &v->kinds, &key, f && f->limit, &v->doc, v->err);
    v->doc_open = 1;
    v->doc_top = 0;
    v->doc_match = -1;
}

/* Case-insensitive search of the current screen from its cursor, forward
 * (dir 1) or back (-1), wrapping once. */
static void search(View *v, int dir) {
    if (!v->search[0]) {
        snprintf(v->msg, sizeof v->msg, " no search yet: press / to search");
        return;
    }
    if (v->doc_open) {
        /* from the match, else from the first line on the screen */
        long n = (long)v->doc.n, from = -dir;
        if (v->doc_match >= 0) from = v->doc_match;
        else if (v->nvis) from = (long)(v->vis[v->doc_top] >> 20) - dir;
        for (long k = 1; k <= n; k++) {
            long i = ((from + dir * k) % n + n) % n;
            if (strcasestr(v->doc.v[i].text, v->search)) {
                v->doc_match = i;
                wrap_doc(v);
                for (size_t r = 0; r < v->nvis; r++)
                    if ((long)(v->vis[r] >> 20) == i) {
                        v->doc_top = (long)r - 2;
                        break;
                    }
                return;
            }
        }
        snprintf(v->msg, sizeof v->msg, " not found: %.200s", v->search);
        return;
    }
    /* A list: pages of SEARCH_PAGE rows from the row after the cursor,
     * wrapping once; a large trace costs a query per page, not per row. */
    enum { SEARCH_PAGE = 1000 };
    int s = v->scr;
    List *l = &v->list[s];
    int nc = screens[s].ncols;
    long n = l->count, i = l->sel, checked = 0;
    while (n > 0 && checked < n && v->status == DR_OK) {
        i = ((i + dir) % n + n) % n;
        long off = dir > 0 ? i : (i - SEARCH_PAGE + 1 < 0 ? 0 : i - SEARCH_PAGE + 1);
        VwRows r = {0};
        if ((v->status = fetch(v, s, off, SEARCH_PAGE, &r)) != DR_OK || r.n == 0) {
            vw_rows_free(&r);
            break;
        }
        for (; i >= off && i < off + (long)r.n && checked < n; i += dir, checked++) {
            for (int c = 0; c < nc && c < r.ncol; c++) {
                const char *cell = vw_cell(&r, (size_t)(i - off), c);
                char *safe = cell ? dr_safe(cell, strlen(cell), 4000, 0) : NULL;
                int hit = safe && strcasestr(safe, v->search);
                free(safe);
                if (hit) {
                    l->sel = i;
                    vw_rows_free(&r);
                    return;
                }
            }
        }
        vw_rows_free(&r);
        i -= dir;
    }
    if (v->status == DR_OK) snprintf(v->msg, sizeof v->msg, " not found: %.200s", v->search);
}

/* Reads the search text on the status line. */
static int prompt(View *v) {
    char text[256] = {0};
    size_t n = 0;
    for (;;) {
        char line[300];
        snprintf(line, sizeof line, "/%s", text);
        char *safe = dr_safe(line, strlen(line), v->cols - 1, 1);
        v->msg[0] = 0;
        draw(v);
        draw_status(v, "");
        fill_row(v, v->rows - 1, VA_NORMAL);
        put(v, v->rows - 1, 0, VA_NORMAL, safe ? safe : "/", 0);
        free(safe);
        paint(v);
        int ch = getch();
        if (vw_signal) return 0;
        if (ch == ERR || ch == KEY_RESIZE) {
            if (ch == KEY_RESIZE) resize_buf(v, LINES, COLS);
            continue;
        }
        if (ch == 27) return 0;
        if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) break;
        if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n) text[--n] = 0;
        else if (ch >= 0x20 && ch < 0x100 && ch != 127 && n + 1 < sizeof text) text[n++] = (char)ch;
    }
    if (n) snprintf(v->search, sizeof v->search, "%s", text);
    return n > 0;
}

static void move_sel(View *v, long delta, int absolute) {
    if (v->doc_open) {
        int body = v->rows - 3;
        v->doc_top = absolute ? (delta < 0 ? 0 : (long)v->nvis) : v->doc_top + delta;
        if (v->doc_top > (long)v->nvis - body) v->doc_top = (long)v->nvis - body;
        if (v->doc_top < 0) v->doc_top = 0;
        return;
    }
    List *l = &v->list[v->scr];
    l->sel = absolute ? (delta < 0 ? 0 : l->count - 1) : l->sel + delta;
    if (l->sel >= l->count) l->sel = l->count - 1;
    if (l->sel < 0) l->sel = 0;
}

/* Checks whether the writer committed since the last look (--follow). */
static int poll_trace(View *v) {
    char *dv = NULL;
    int rc = dr_trace_query_text(v->t, "PRAGMA data_version", &dv, v->err);
    long long n = dv ? atoll(dv) : 0;
    free(dv);
    if (rc != DR_OK) return rc;
    if (n != v->data_version) {
        v->data_version = n;
        return reload(v);
    }
    if (!v->complete) v->complete = dr_trace_is_complete(v->t);
    return DR_OK;
}

static int act(View *v, int ch, int *quit) {
    int a = key_action(ch);
    int page = v->rows - 4 > 1 ? v->rows - 4 : 1;
    v->msg[0] = 0;
    switch (a) {
    case K_UP: move_sel(v, -1, 0); break;
    case K_DOWN: move_sel(v, 1, 0); break;
    case K_PGUP: move_sel(v, -page, 0); break;
    case K_PGDN: move_sel(v, page, 0); break;
    case K_TOP: move_sel(v, -1, 1); break;
    case K_BOTTOM: move_sel(v, 1, 1); break;
    case K_OPEN:
        if (!v->doc_open) open_row(v);
        break;
    case K_BACK: close_doc(v); break;
    case K_NEXT:
    case K_PREV:
        close_doc(v);
        v->scr = (v->scr + (a == K_NEXT ? 1 : DR_VIEW__N - 1)) % DR_VIEW__N;
        break;
    case K_SCREEN:
        close_doc(v);
        v->scr = ch - '1';
        break;
    case K_SEARCH:
        if (prompt(v)) {
            if (v->doc_open) v->doc_match = -1;
            search(v, 1);
        }
        break;
    case K_MATCH_NEXT: search(v, 1); break;
    case K_MATCH_PREV: search(v, -1); break;
    case K_HELP: open_help(v); break;
    case K_QUIT: *quit = 1; break;
    }
    return v->status;
}

static void view_free(View *v) {
    close_doc(v);
    for (int s = 0; s < DR_VIEW__N; s++) vw_rows_free(&v->list[s].rows);
    free(v->fs);
    free(v->buf);
}

/* The diff screen's rows: the comparison engine's divergences between the
 * trace and the one given with --diff (this trace as a), or the one a
 * rerun or replay re-ran (as a, in replay mode for a replay), kept in
 * temp.vw_diff from the engine's JSON report.  A trace that cannot be
 * compared is said on the screen, never an error of the viewer. */
static void load_diff(View *v, const char *diff) {
    DrError e = {0};
    char *other = NULL, *replay_of = NULL, *rerun_of = NULL;
    if (diff) {
        other = strdup(diff);
    } else {
        dr_trace_get_meta(v->t, "replay_of", &replay_of, &e);
        dr_trace_get_meta(v->t, "rerun_of", &rerun_of, &e);
        other = replay_of ? strdup(replay_of) : rerun_of ? strdup(rerun_of) : NULL;
    }
    free(rerun_of);
    if (!other) {
        free(replay_of);
        return;
    }
    DrTrace *ot = dr_trace_open(other, &e);
    DrTrace *ta = diff ? v->t : ot, *tb = diff ? ot : v->t;
    DrModel *ma = NULL, *mb = NULL;
    DrDiff *d = NULL;
    char *json = NULL;
    size_t len = 0;
    FILE *f = NULL;
    if (ot && (ma = dr_model_load(ta, &e)) && (mb = dr_model_load(tb, &e))) {
        DrCompareOptions co = {.replay = replay_of != NULL,
                               .label_a = dr_trace_path(ta),
                               .label_b = dr_trace_path(tb)};
        d = dr_compare(ma, mb, &co, &e);
    }
    if (d && (f = open_memstream(&json, &len)) && dr_diff_print(d, f, 1) == 0 && fclose(f) == 0) {
        f = NULL;
        sqlite3 *db = dr_trace_sqlite(v->t);
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_exec(db, "DROP TABLE IF EXISTS temp.vw_diff", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc =
                sqlite3_prepare_v2(db,
                                   "CREATE TEMP TABLE vw_diff AS SELECT CAST(key AS INTEGER) AS n,"
                                   " json_extract(value, '$.category') AS category,"
                                   " json_extract(value, '$.what') AS what,"
                                   " json_extract(value, '$.compile_a') AS compile_a,"
                                   " json_extract(value, '$.compile_b') AS compile_b, value AS json"
                                   " FROM json_each(?1, '$.divergences')",
                                   -1, &st, NULL);
        if (rc == SQLITE_OK) {
            sqlite3_bind_text(st, 1, json, (int)len, SQLITE_STATIC);
            rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        }
        sqlite3_finalize(st);
        char *n = NULL;
        if (rc == SQLITE_OK &&
            dr_trace_query_text(v->t, "SELECT count(*) FROM temp.vw_diff", &n, &e) == DR_OK) {
            v->ndiff = n ? atol(n) : 0;
            snprintf(v->diff_note, sizeof v->diff_note, "%s %.150s and %.150s: %s",
                     replay_of ? "replay of" : "comparing", dr_trace_path(ta), dr_trace_path(tb),
                     v->ndiff ? "first divergence first" : "identical, no divergence");
        } else {
            snprintf(v->diff_note, sizeof v->diff_note, "cannot compare: %s", sqlite3_errmsg(db));
        }
        free(n);
    } else {
        snprintf(v->diff_note, sizeof v->diff_note, "cannot compare with %.150s: %.200s", other,
                 e.msg[0] ? e.msg : "out of memory");
    }
    if (f) fclose(f);
    free(json);
    dr_diff_free(d);
    dr_model_free(mb);
    dr_model_free(ma);
    dr_trace_free(ot);
    free(other);
    free(replay_of);
}

DrTrace *dr_view_open(const char *path, int follow, int wait_ms, DrError *err) {
    struct timespec ts = {0, 100 * 1000000L};
    for (int waited = 0;; waited += 100) {
        DrTrace *t = dr_trace_open(path, err);
        if (t || !follow || waited >= wait_ms) return t;
        /* `dynrec run` makes the file first and its schema just after. */
        if (err && err->code != DR_ERR_NOT_SQLITE && err->code != DR_ERR_NOT_TRACE &&
            err->code != DR_ERR_MISSING && err->code != DR_ERR_CORRUPT && err->code != DR_ERR_SQL)
            return NULL;
        nanosleep(&ts, NULL);
    }
}

int dr_view(DrTrace *t, const DrViewOptions *o, int *exit_signal, DrError *err) {
    View v = {.t = t, .err = err, .follow = o->follow, .dump = o->dump_first_screen};
    v.scr = o->screen >= 0 && o->screen < DR_VIEW__N ? o->screen : 0;
    *exit_signal = 0;
    setlocale(LC_ALL, "");
    dr_text_utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    load_diff(&v, o->diff);
    int rc = reload(&v);
    if (rc == DR_OK) {
        char *dv = NULL;
        rc = dr_trace_query_text(t, "PRAGMA data_version", &dv, err);
        v.data_version = dv ? atoll(dv) : 0;
        free(dv);
    }
    if (rc != DR_OK) goto out;
    if (v.dump) {
        rc = resize_buf(&v, o->dump_rows > 0 ? o->dump_rows : 30,
                        o->dump_cols > 0 ? o->dump_cols : 100);
        if (rc == DR_OK) draw(&v);
        if (rc == DR_OK && (rc = v.status) == DR_OK) dump(&v, stdout);
        goto out;
    }

    /* Our handlers first, so that curses keeps them: a signal ends the
     * loop, which restores the terminal. */
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr) {
        rc = dr_error(err, DR_ERR_ARG, "cannot drive this terminal (TERM=%s); use 'dynrec show'",
                      getenv("TERM") ? getenv("TERM") : "unset");
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        goto out;
    }
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    const char *nc = getenv("NO_COLOR");
    if (has_colors() && !(nc && *nc)) {
        v.color = 1;
        start_color();
        use_default_colors();
        init_pair(1, COLOR_WHITE, COLOR_BLUE);
        init_pair(2, COLOR_YELLOW, -1);
        init_pair(3, COLOR_GREEN, -1);
        init_pair(4, COLOR_RED, -1);
        init_pair(5, COLOR_CYAN, -1);
    }
    timeout(250);
    rc = resize_buf(&v, LINES, COLS);
    int quit = 0, idle = 0;
    while (rc == DR_OK && !quit && !vw_signal) {
        draw(&v);
        if ((rc = v.status) != DR_OK) break;
        paint(&v);
        int ch = getch();
        if (vw_signal) break;
        if (ch == KEY_RESIZE) {
            rc = resize_buf(&v, LINES, COLS);
            continue;
        }
        if (ch == ERR) {
            /* The writer flushes about every 100 ms; a look every 500 ms
             * costs one PRAGMA. */
            if (v.follow && ++idle % 2 == 0) rc = poll_trace(&v);
            continue;
        }
        if (ch == '\r') ch = '\n';
        rc = act(&v, ch, &quit);
    }
    endwin();
    delscreen(scr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    *exit_signal = vw_signal;
out:
    view_free(&v);
    return rc;
}
