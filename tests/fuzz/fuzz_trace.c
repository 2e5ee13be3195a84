/* fuzz_trace.c -- libFuzzer target: opening a trace file and reading it all.
 *
 * Writes the input to a private file, opens it as a trace, runs every view,
 * reads the blobs the views name, prints `dynrec show` (text and JSON), the
 * report, the Perfetto export and an SQL query through dynrec_text,
 * builds the detail page of `dynrec view` for the first event of each of
 * its screens (the drawing itself needs a terminal) and loads the
 * comparison model and compares it with itself, checks the signature and
 * makes the snapshot a replay runs from.  Anything but
 * clean errors (a sanitizer report, an abort, a hang caught by -timeout) is
 * a bug. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../replayer/compare.h"
#include "../../schema/sign.h"
#include "../../schema/trace.h"
#include "../../viewer/export.h"
#include "../../viewer/report.h"
#include "../../viewer/show.h"
#include "../../sql/sql.h"
#include "../../viewer/view.h"
#include "../../viewer/view_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const views[] = {
    "v_code",        "v_frame_counts", "v_events",      "v_files",          "v_ev",
    "v_frames",      "v_compiles",     "v_guards",      "v_guard_failures", "v_graph_breaks",
    "v_speculation", "v_side_effects", "v_errors",      "v_graphs",         "v_canonical",
    "v_captures",    "v_values",       "v_event_counts"};

typedef struct {
    DrTrace *t;
    int blobs;
} Ctx;

/* Reads the blob a row names (its last column), at most a few per view. */
static int row(void *ud, int n, const char *const *names, const char *const *v) {
    Ctx *c = ud;
    for (int i = 0; i < n; i++) {
        if (!v[i] || !strstr(names[i], "blob") || c->blobs >= 8) continue;
        void *out = NULL;
        size_t len;
        c->blobs++;
        dr_trace_read_blob(c->t, atoll(v[i]), 1 << 22, &out, &len, NULL);
        free(out);
    }
    return 0;
}

/* The viewer's detail pages: for each screen, its first event. */
static void view_pages(DrTrace *t) {
    static const struct {
        int screen;
        const char *kind;
    } pages[] = {{DR_VIEW_RECOMPILES, "guard_failure"},
                 {DR_VIEW_FRAMES, "callback"},
                 {DR_VIEW_COMPILES, "compile"},
                 {DR_VIEW_BREAKS, "graph_break"},
                 {DR_VIEW_ERRORS, "error"},
                 {DR_VIEW_GRAPHS, "graph"},
                 {DR_VIEW_SPECULATION, "speculation"}};
    VwKinds k = {0};
    VwRows ids = {0};
    if (vw_rows_query(t,
                      "SELECT s.text, c.kind_id FROM event_counts c JOIN strings s ON s.id = "
                      "c.kind_id",
                      &ids, NULL) != DR_OK) {
        vw_rows_free(&ids);
        return;
    }
    static const char *names[] = {"callback",    "compile",    "guard",       "guard_failure",
                                  "graph_break", "graph",      "speculation", "side_effect",
                                  "error",       "cache_entry"};
    long long *dst[] = {&k.callback,    &k.compile,    &k.guard,       &k.guard_failure,
                        &k.graph_break, &k.graph,      &k.speculation, &k.side_effect,
                        &k.error,       &k.cache_entry};
    for (size_t i = 0; i < ids.n; i++)
        for (size_t j = 0; j < sizeof names / sizeof *names; j++)
            if (vw_cell(&ids, i, 0) && strcmp(vw_cell(&ids, i, 0), names[j]) == 0)
                *dst[j] = vw_cell_int(&ids, i, 1);
    vw_rows_free(&ids);
    for (size_t p = 0; p < sizeof pages / sizeof *pages; p++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "SELECT e.seq, e.code_id, c.text FROM events e LEFT JOIN strings "
                 "c ON c.id = e.compile_id WHERE e.kind_id = (SELECT id FROM "
                 "strings WHERE text = '%s') ORDER BY e.seq LIMIT 1",
                 pages[p].kind);
        VwRows r = {0};
        if (vw_rows_query(t, sql, &r, NULL) == DR_OK && r.n) {
            VwKey key = {.screen = pages[p].screen,
                         .id = vw_cell_int(&r, 0, 0),
                         .code_id = vw_cell_int(&r, 0, 1)};
            if (pages[p].screen == DR_VIEW_FRAMES) key.id = key.code_id;
            snprintf(key.cid, sizeof key.cid, "%s", vw_cell(&r, 0, 2) ? vw_cell(&r, 0, 2) : "");
            for (int limit = 0; limit < 2; limit++) {
                VwDoc d = {0};
                vw_detail(t, &k, &key, limit, &d, NULL);
                for (size_t i = 0; i < d.n; i++)
                    for (const unsigned char *c = (const unsigned char *)d.v[i].text; *c; c++)
                        if (*c < 0x20 || *c == 0x7f) abort(); /* a control byte escaped dr_safe */
                vw_doc_free(&d);
            }
        }
        vw_rows_free(&r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/dynrec-fuzz-%d.db", (int)getpid());
    unlink(path);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    DrError err = {0};
    DrTrace *t = dr_trace_open(path, &err);
    if (!t) {
        if (!err.msg[0]) abort();
        return 0;
    }
    Ctx c = {t, 0};
    for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT * FROM %s LIMIT 200", views[i]);
        dr_trace_query(t, sql, row, &c, NULL);
    }
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        DrShowOptions o = {0};
        dr_show(t, &o, null, NULL);
        o.json = 1;
        dr_show(t, &o, null, NULL);
        /* The readers that hand a trace to other tools. */
        DrReportOptions ro = {.top = 5};
        dr_report(t, &ro, null, NULL);
        dr_export_perfetto(t, null, NULL);
        DrSqlOptions so = {.format = DR_SQL_JSON};
        dr_sql_run(t,
                   "SELECT seq, dynrec_text(blob_id) FROM v_ev WHERE blob_id IS NOT NULL "
                   "LIMIT 20",
                   &so, null, NULL);
        DrModel *m = dr_model_load(t, NULL);
        if (m) {
            DrDiff *d = dr_compare(m, m, NULL, NULL);
            if (d) {
                dr_diff_print(d, null, 0);
                dr_diff_print(d, null, 1);
                if (!dr_diff_identical(d)) abort(); /* a trace always equals itself */
                dr_diff_free(d);
            }
            dr_model_free(m);
        }
        fclose(null);
    }
    view_pages(t);
    /* The signature's digest over the signed rows, and the snapshot a
     * replay runs from: a private copy, checked value by value. */
    dr_trace_signature(t);
    static char snap[80];
    if (!snap[0]) snprintf(snap, sizeof snap, "/tmp/dynrec-fuzz-%d-snap.db", (int)getpid());
    unlink(snap);
    DrError serr = {0};
    if (dr_trace_snapshot(t, snap, &serr) == DR_OK) {
        DrTrace *c = dr_trace_open(snap, &serr);
        if (!c) abort(); /* a snapshot that passed its checks opens */
        dr_trace_free(c);
    } else if (!serr.msg[0]) {
        abort();
    }
    unlink(snap);
    dr_trace_free(t);
    return 0;
}
