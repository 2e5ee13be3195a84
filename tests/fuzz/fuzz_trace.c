/* fuzz_trace.c -- libFuzzer target: opening a trace file and reading it all.
 *
 * Writes the input to a private file, opens it as a trace, runs every view,
 * reads the blobs the views name, prints `dynrec show` (text and JSON), the
 * report, the Perfetto export and an SQL query through dynrec_text, and
 * loads the comparison model and compares it with itself.  Anything but
 * clean errors (a sanitizer report, an abort, a hang caught by -timeout) is
 * a bug. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../replayer/compare.h"
#include "../../schema/trace.h"
#include "../../viewer/export.h"
#include "../../viewer/report.h"
#include "../../viewer/show.h"
#include "../../viewer/sql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const views[] = {
    "v_code", "v_frame_counts", "v_events", "v_files", "v_ev", "v_frames", "v_compiles",
    "v_guards", "v_guard_failures", "v_graph_breaks", "v_speculation", "v_side_effects",
    "v_errors", "v_graphs", "v_canonical", "v_captures", "v_values", "v_event_counts"};

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
        dr_sql_run(t, "SELECT seq, dynrec_text(blob_id) FROM v_ev WHERE blob_id IS NOT NULL "
                      "LIMIT 20", &so, null, NULL);
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
    dr_trace_free(t);
    return 0;
}
