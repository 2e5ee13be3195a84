/* show.c -- the summary printed by `dynrec show` (text for people, JSON for scripts).
 *
 * Everything read from the trace is untrusted: text output goes through
 * dr_text_safe / dr_safe (schema/text.c), which escape control characters,
 * bidi controls and invalid UTF-8 so a hostile trace cannot drive the
 * terminal, and JSON output through dr_json_string. */
#define _GNU_SOURCE 1
#include "show.h"

#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/json.h"
#include "../schema/sign.h"
#include "../schema/text.h"
#include "../sql/sqlfuncs.h"

static char *meta(DrTrace *t, const char *key) {
    char *v = NULL;
    dr_trace_get_meta(t, key, &v, NULL);
    return v;
}

typedef struct {
    FILE *out;
    int json;
    int n;
} RowCtx;

static int meta_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    RowCtx *c = ud;
    if (n < 2) return 0;
    if (c->json) {
        fputs(c->n++ ? ",\n    " : "\n    ", c->out);
        dr_json_string(c->out, v[0]);
        fputs(": ", c->out);
        dr_json_string(c->out, v[1]);
    }
    return 0;
}

/* Rows of CODE_SQL: filename, qualname, firstlineno, calls, resumes and the
 * compile id when the code object is the compiled code of a cache entry. */
static int code_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    RowCtx *c = ud;
    if (n < 6) return 0;
    if (c->json) {
        fputs(c->n++ ? ",\n    " : "\n    ", c->out);
        fputs("{\"filename\": ", c->out);
        dr_json_string(c->out, v[0]);
        fputs(", \"qualname\": ", c->out);
        dr_json_string(c->out, v[1]);
        fprintf(c->out, ", \"firstlineno\": %lld, \"calls\": %lld, \"resumes\": %lld",
                atoll(v[2] ? v[2] : "0"), atoll(v[3] ? v[3] : "0"), atoll(v[4] ? v[4] : "0"));
        if (v[5]) {
            fputs(", \"compiled\": ", c->out);
            dr_json_string(c->out, v[5]);
        }
        fputc('}', c->out);
    } else {
        c->n++;
        fprintf(c->out, "  %12lld %9lld  ", atoll(v[3] ? v[3] : "0"), atoll(v[4] ? v[4] : "0"));
        if (v[5]) {
            /* Dynamo's compiled code carries the function's name: say which
             * compile it is instead of repeating the function. */
            fputs("compiled ", c->out);
            dr_text_safe(c->out, v[5]);
            fputs(" of ", c->out);
        }
        dr_text_safe(c->out, v[1]);
        fputs("  ", c->out);
        dr_text_safe(c->out, v[0]);
        fprintf(c->out, ":%lld\n", atoll(v[2] ? v[2] : "0"));
    }
    return 0;
}

static int kind_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    RowCtx *c = ud;
    if (n < 2) return 0;
    if (c->json) {
        fputs(c->n++ ? ", " : "", c->out);
        dr_json_string(c->out, v[0]);
        fprintf(c->out, ": %lld", atoll(v[1] ? v[1] : "0"));
    } else {
        c->n++;
        fprintf(c->out, "  %12lld  ", atoll(v[1] ? v[1] : "0"));
        dr_text_safe(c->out, v[0]);
        fputc('\n', c->out);
    }
    return 0;
}

/* Generic rows: text lines of the columns (first line of each, at most 160
 * columns), or JSON objects keyed by column name. */
static void put_cell(FILE *f, const char *s) {
    char *safe = dr_safe(s, s ? strlen(s) : 0, 160, 1);
    fputs(safe ? safe : "?", f);
    free(safe);
}

static int any_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    RowCtx *c = ud;
    if (c->json) {
        fputs(c->n++ ? ",\n      {" : "\n      {", c->out);
        for (int i = 0; i < n; i++) {
            if (i) fputs(", ", c->out);
            dr_json_string(c->out, names[i]);
            fputs(": ", c->out);
            dr_json_string(c->out, v[i]);
        }
        fputc('}', c->out);
    } else {
        c->n++;
        fputs("  ", c->out);
        for (int i = 0; i < n; i++) {
            if (i) fputs("  ", c->out);
            put_cell(c->out, v[i]);
        }
        fputc('\n', c->out);
    }
    return 0;
}

/* The Dynamo sections, guard failures first: what a user asks first is why
 * a function recompiled.  Each is about one kind of event: a section whose
 * kind the trace never recorded costs no query, and the others ask for no
 * more rows than there are, so that the scan of a large trace stops early.
 * Every column has a plain name: the keys of `show --json`.  (An alias
 * shadows its column in ORDER BY: the sort names the view's column.) */
static const struct {
    const char *title, *kind, *sql;
    long limit;
} dynamo_sections[] = {
    {"guard failures (why a cache entry was rejected)", "guard_failure",
     "SELECT compile_id, 'rejects ' || failed_compile_id AS rejects, display_name, reason "
     "FROM v_guard_failures "
     "ORDER BY seq",
     20},
    {"compiles", "compile",
     "SELECT compile_id, display_name, outcome, 'graphs=' || graphs AS graphs, 'attempts=' || "
     "attempts AS attempts, CASE WHEN recompile THEN 'recompile' ELSE '' END AS recompile, "
     "printf('%.1f ms', duration_ms) AS duration, coalesce(reason, '') AS reason FROM v_compiles "
     "ORDER BY seq",
     30},
    {"graph breaks", "graph_break",
     "SELECT compile_id, qualname, 'line ' || lineno AS line, type, reason FROM v_graph_breaks "
     "ORDER BY seq",
     20},
    {"errors", "error",
     "SELECT compile_id, exc_type, CASE WHEN suppressed THEN 'suppressed' ELSE 'raised' "
     "END AS status, message FROM v_errors ORDER BY seq",
     20},
    {"resets (torch._dynamo.reset(): compile ids start again; after the E-th they read E:F/N)",
     "reset",
     "SELECT 'epoch ' || num || ' begins' AS epoch, 'after ' || (SELECT count(*) FROM v_ev "
     "c WHERE c.kind = 'compile' AND c.seq < r.seq) || ' compiles' AS place FROM v_ev r WHERE kind = 'reset' "
     "ORDER BY seq",
     20},
    {"frames Dynamo handled (callbacks, cache hits, compiles)", "compile",
     "SELECT display_name, 'callbacks=' || callbacks AS callbacks, 'cache_hits=' || cache_hits AS "
     "cache_hits, 'compiles=' || compiles AS compiles, user_location FROM v_frames f "
     "WHERE f.compiles > 0 ORDER BY f.cache_hits + f.callbacks DESC",
     20},
    {"speculation (restarts, rollbacks, higher-order-op branches)", NULL,
     "SELECT compile_id, action, detail FROM v_speculation WHERE NOT (action = 'checkpoint' AND "
     "json_extract(data, '$.scope') = 'attempt') ORDER BY seq",
     20},
    {"backend graphs", "graph",
     "SELECT compile_id, backend, 'nodes=' || nodes AS nodes FROM v_graphs ORDER BY seq", 20},
    {"side effects", "side_effect",
     "SELECT compile_id, status, description FROM v_side_effects ORDER BY seq", 20},
    {"frame inputs captured for dynrec replay (not replayable first)", "capture",
     "SELECT compile_id, qualname, CASE WHEN replayable THEN 'replayable' ELSE "
     "'not replayable: ' || coalesce(reason, '?') END AS replayable, nodes || ' values' AS "
     "\"values\", data_bytes || ' bytes of tensor data' AS tensor_data FROM v_captures c "
     "ORDER BY c.replayable, seq",
     20},
};

typedef struct {
    char kind[64];
    long n;
} KindN;

typedef struct {
    KindN *v;
    size_t n, cap;
} Kinds;

static int kinds_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Kinds *k = ud;
    if (n < 2 || !v[0] || k->n == k->cap) return 0;
    snprintf(k->v[k->n].kind, sizeof k->v[k->n].kind, "%s", v[0]);
    k->v[k->n++].n = atol(v[1] ? v[1] : "0");
    return 0;
}

/* How many events of kind the trace holds (from v_event_counts). */
static long kind_count(const Kinds *k, const char *kind) {
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->v[i].kind, kind) == 0) return k->v[i].n;
    return 0;
}

static int show_dynamo(DrTrace *t, FILE *out, int json, DrError *err) {
    RowCtx c = {out, json, 0};
    int any = 0;
    KindN kv[256];
    Kinds kinds = {kv, 0, sizeof kv / sizeof *kv};
    int rc = dr_trace_query(t, "SELECT kind, n FROM v_event_counts", kinds_row, &kinds, err);
    if (rc != DR_OK) return rc;
    if (json) fputs(",\n  \"dynamo\": {", out);
    for (size_t i = 0; i < sizeof dynamo_sections / sizeof *dynamo_sections; i++) {
        c.n = 0;
        long have = dynamo_sections[i].kind ? kind_count(&kinds, dynamo_sections[i].kind)
                                            : kind_count(&kinds, "speculation");
        long limit = dynamo_sections[i].limit;
        /* A section of one row per event stops after the last one there is. */
        if (dynamo_sections[i].kind && strcmp(dynamo_sections[i].kind, "compile") != 0 &&
            have < limit)
            limit = have;
        char sql[1024];
        snprintf(sql, sizeof sql, "%s LIMIT %ld", dynamo_sections[i].sql, limit);
        if (json) {
            fputs(i ? ",\n    " : "\n    ", out);
            dr_json_string(out, dynamo_sections[i].title);
            fputs(": [", out);
        } else if (have > 0) {
            /* Text: print the title only above a non-empty section. */
            char *buf = NULL;
            size_t len = 0;
            FILE *tmp = open_memstream(&buf, &len);
            if (!tmp) return dr_error(err, DR_ERR_NOMEM, "out of memory");
            c.out = tmp;
            rc = dr_trace_query(t, sql, any_row, &c, err);
            fclose(tmp);
            c.out = out;
            if (rc != DR_OK) {
                free(buf);
                return rc;
            }
            if (c.n) {
                fprintf(out, "\n%s%s\n", any++ ? "" : "DYNAMO\n", dynamo_sections[i].title);
                fwrite(buf, 1, len, out);
            }
            free(buf);
            continue;
        } else {
            continue;
        }
        if (have > 0 && (rc = dr_trace_query(t, sql, any_row, &c, err)) != DR_OK) return rc;
        fputs(c.n ? "\n    ]" : "]", out);
    }
    if (json) fputs("\n  }", out);
    return DR_OK;
}

static const char *signame(long sig) {
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGKILL: return "SIGKILL";
    }
    return "a signal";
}

static void text_line(FILE *out, const char *label, const char *value) {
    if (!value) return;
    fprintf(out, "%-12s ", label);
    dr_text_safe(out, value);
    fputc('\n', out);
}

int dr_show(DrTrace *t, const DrShowOptions *o, FILE *out, DrError *err) {
    int frc = dr_sqlfuncs_register(dr_trace_sqlite(t)); /* dynrec_is_library */
    if (frc != SQLITE_OK)
        return dr_error(err, DR_ERR_SQL, "%s: cannot add the SQL functions: %s", dr_trace_path(t),
                        sqlite3_errstr(frc));
    int complete = dr_trace_is_complete(t);
    int top = o->top > 0 ? o->top : 10;
    int top_lib = o->top_library > 0 ? o->top_library : 10;
    /* Code objects with their counts, and the compile whose cache entry
     * a code object is (Dynamo's compiled code keeps the function's name). */
#define CODE_SQL                                                                                   \
    "SELECT c.filename, c.qualname, c.firstlineno, fc.calls, fc.resumes, e.cid "                   \
    "FROM frame_counts fc JOIN v_code c ON c.code_id = fc.code_id LEFT JOIN "                      \
    "(SELECT x.code2_id, min(s.text) AS cid FROM events x JOIN strings s ON s.id = "               \
    "x.compile_id WHERE x.kind_id = (SELECT id FROM strings WHERE text = 'cache_entry') "          \
    "GROUP BY x.code2_id) e ON e.code2_id = fc.code_id "
/* Library code (../schema/ident.h, the one rule), and inductor's generated
 * code in TORCHINDUCTOR_CACHE_DIR as recorded. */
#define LIBRARY_CODE                                                                               \
    "dynrec_is_library(c.filename, (SELECT value FROM meta WHERE key = "                           \
    "'env.TORCHINDUCTOR_CACHE_DIR') || '/')"
    char sql[1024];
    snprintf(sql, sizeof sql, CODE_SQL "ORDER BY fc.calls + fc.resumes DESC, c.qualname LIMIT %d",
             top_lib);
    /* The user's own code: what is left without the standard library,
     * installed packages and frozen modules. */
    char user_sql[1024];
    snprintf(user_sql, sizeof user_sql,
             CODE_SQL "WHERE NOT " LIBRARY_CODE
                      " ORDER BY fc.calls + fc.resumes DESC, c.qualname LIMIT %d",
             top);
    const char *kinds_sql = "SELECT kind, n FROM v_event_counts ORDER BY 2 DESC, 1";
    RowCtx c = {out, o->json, 0};
    int rc;
    if (o->json) {
        fputs("{\n  \"trace\": ", out);
        dr_json_string(out, dr_trace_path(t));
        fprintf(out, ",\n  \"schema_version\": %d,\n  \"complete\": %s,\n  \"signature\": ",
                dr_trace_schema_version(t), complete ? "true" : "false");
        dr_json_string(out, dr_sig_text(dr_trace_signature(t)));
        fputs(",\n  \"meta\": {", out);
        rc = dr_trace_query(t, "SELECT key, value FROM meta ORDER BY key", meta_row, &c, err);
        if (rc != DR_OK) return rc;
        fputs(c.n ? "\n  },\n  \"top_code\": [" : "},\n  \"top_code\": [", out);
        c.n = 0;
        if ((rc = dr_trace_query(t, sql, code_row, &c, err)) != DR_OK) return rc;
        fputs(c.n ? "\n  ],\n  \"top_user_code\": [" : "],\n  \"top_user_code\": [", out);
        c.n = 0;
        if ((rc = dr_trace_query(t, user_sql, code_row, &c, err)) != DR_OK) return rc;
        fputs(c.n ? "\n  ],\n  \"events\": {" : "],\n  \"events\": {", out);
        c.n = 0;
        if ((rc = dr_trace_query(t, kinds_sql, kind_row, &c, err)) != DR_OK) return rc;
        fputs("}", out);
        if ((rc = show_dynamo(t, out, 1, err)) != DR_OK) return rc;
        fputs("\n}\n", out);
        return DR_OK;
    }

    char *cmd = meta(t, "command"), *script = meta(t, "script"), *module = meta(t, "module");
    char *argv = meta(t, "argv"), *py = meta(t, "python_version");
    char *torch = meta(t, "torch_version"), *start = meta(t, "start_time");
    char *dur = meta(t, "duration_ns"), *st = meta(t, "exit_status");
    char *sig = meta(t, "exit_signal"), *seed = meta(t, "hash_seed");
    char *hook = meta(t, "hook.frame"), *writer = meta(t, "writer_version");
    char *cwd = meta(t, "cwd"), *installs = meta(t, "hook.installs");

    fputs("trace        ", out);
    dr_text_safe(out, dr_trace_path(t));
    fprintf(out, " (schema %d, dynrec ", dr_trace_schema_version(t));
    dr_text_safe(out, writer ? writer : "?");
    fputs(")\n", out);
    char *stopped = complete ? NULL : meta(t, "stopped");
    char *last = NULL;
    if (!complete && !stopped)
        dr_trace_query_text(t, "SELECT printf('%.3f', max(t_ns) / 1e9) FROM events", &last, NULL);
    if (complete) {
        /* A disk that filled at the close leaves the last pages in -wal
         * (the recorder said so on stderr); SQLite reads the two as one. */
        char *wal = NULL;
        struct stat wsb;
        int has_wal = asprintf(&wal, "%s-wal", dr_trace_path(t)) >= 0 && stat(wal, &wsb) == 0 &&
                      S_ISREG(wsb.st_mode) && wsb.st_size > 0;
        fprintf(out, "%-12s complete", "recording");
        if (has_wal) {
            fputs(" (its last pages are in ", out);
            dr_text_safe(out, wal);
            fputs(": keep both files together)", out);
        }
        fputc('\n', out);
        free(wal);
    } else if (stopped) {
        /* The recorder's own word: "2.3 s: the disk was full". */
        fprintf(out, "%-12s INCOMPLETE: recording stopped at ", "recording");
        dr_text_safe(out, stopped);
        fputs("; what was written before is all here\n", out);
    } else {
        fprintf(out,
                "%-12s INCOMPLETE: the run was cut short (last event at %s s); counts are "
                "as of the last flush\n",
                "recording", last ? last : "?");
    }
    free(stopped);
    free(last);
    /* Whether this user recorded it here (sign.h), and how a replay was
     * confined. */
    fprintf(out, "%-12s %s\n", "signature", dr_sig_text(dr_trace_signature(t)));
    char *sandbox = meta(t, "sandbox");
    text_line(out, "sandbox", sandbox);
    free(sandbox);
    /* A pack (dynrec pack) says what it removed. */
    char *redacted = meta(t, "pack.redacted"), *dropped = meta(t, "pack.dropped");
    text_line(out, "redacted", redacted);
    text_line(out, "dropped", dropped);
    free(redacted);
    free(dropped);
    text_line(out, "command", cmd);
    text_line(out, "script", script);
    text_line(out, "module", module);
    text_line(out, "argv", argv);
    text_line(out, "cwd", cwd);
    if (py) py[strcspn(py, " ")] = 0; /* the version number; the build is in meta */
    text_line(out, "python", py);
    text_line(out, "torch", torch ? torch : "not imported");
    text_line(out, "started", start);
    if (dur) fprintf(out, "%-12s %.3f s\n", "duration", atof(dur) / 1e9);
    if (sig) {
        fprintf(out, "%-12s killed by %s (status ", "exit", signame(atol(sig)));
        dr_text_safe(out, st ? st : "?");
        fputs(")\n", out);
    } else {
        text_line(out, "exit", st ? st : "unknown (not recorded)");
    }
    text_line(out, "hash seed", seed);
    if (hook) {
        fprintf(out, "%-12s ", "frame hook");
        dr_text_safe(out, hook);
        if (installs && strcmp(hook, "while-dynamo") == 0) {
            fputs(" (installed ", out);
            dr_text_safe(out, installs);
            fputs(" times)", out);
        }
        fputc('\n', out);
    }
    rc = show_dynamo(t, out, 0, err);
    if (rc == DR_OK) {
        fprintf(out,
                "\nthe script's own code by evaluations (top %d; the standard library and "
                "site-packages with --top-library N)\n  %12s %9s  %s\n",
                top, "calls", "resumes", "code");
        c.n = 0;
        rc = dr_trace_query(t, user_sql, code_row, &c, err);
        if (rc == DR_OK && c.n == 0) fputs("  (none counted)\n", out);
    }
    if (rc == DR_OK && o->top_library > 0) {
        fprintf(out,
                "\nall code objects by evaluations, libraries included (top %d)\n"
                "  %12s %9s  %s\n",
                top_lib, "calls", "resumes", "code");
        c.n = 0;
        rc = dr_trace_query(t, sql, code_row, &c, err);
        if (rc == DR_OK && c.n == 0) fputs("  (none counted)\n", out);
        char *lib = meta(t, "frames.library_not_kept");
        if (rc == DR_OK && lib) {
            fputs("  library code not kept in this trace: ", out);
            dr_text_safe(out, lib);
            fputs(" (dynrec run --all-frames keeps it)\n", out);
        }
        free(lib);
    }
    if (rc == DR_OK) {
        fputs("\nevents by kind\n", out);
        c.n = 0;
        rc = dr_trace_query(t, kinds_sql, kind_row, &c, err);
        if (rc == DR_OK && c.n == 0) fputs("  (none)\n", out);
    }
    free(cmd), free(script), free(module), free(argv), free(py), free(torch), free(start);
    free(dur), free(st), free(sig), free(seed), free(hook), free(writer), free(cwd);
    free(installs);
    return rc;
}
