/* export.c -- `dynrec export`: Perfetto (Chrome trace-event JSON) and the
 * TORCH_TRACE log (for tlparse) from a trace.
 *
 * Perfetto: one track per Python thread (numbered 1, 2, ... in order of
 * first appearance and named after the thread), each compile a complete
 * ("X") slice ending at its compile event with its recorded duration, its
 * tracing attempts nested in it (an attempt runs from its checkpoint to the
 * next one or to the end of the compile) and the backend compiles nested in
 * the attempt that holds them; graph breaks, guard failures and errors are
 * instant events with their text in args; per frame a counter of Dynamo's
 * cache entries (from each callback) and one of cache hits (the trace
 * keeps their total per frame, shown at the end of the run).  Times are the
 * trace's t_ns (monotonic since the start) in microseconds.  Events are
 * written sorted per track, parents before children.
 *
 * TORCH_TRACE: each `trace` event becomes the line torch's
 * TorchLogsFormatter writes: "V" + MMDD HH:MM:SS.micro (the recorded start
 * time plus t_ns, local time as torch writes it) + pid + a location + "] "
 * + the metadata JSON with the record's name first (the recorder stored
 * the keys sorted; they are put back in torch's order), then each payload
 * line after "\n\t".  The source location of the logging call is not
 * recorded: "dynrec_export.py:SEQ" stands in (SEQ the event's seq).
 * Everything from the trace is untrusted: metadata that is not one JSON
 * object on one line is left out and counted. */
#define _GNU_SOURCE 1
#include "export.h"

#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../schema/json.h"

/* ---- shared ------------------------------------------------------------ */

typedef struct {
    DrTrace *t;
    DrError *err;
    int status;
} Q;

/* Prepares sql; on error fills q->err. */
static sqlite3_stmt *prepare(Q *q, const char *sql) {
    sqlite3_stmt *st = NULL;
    sqlite3 *db = dr_trace_sqlite(q->t);
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        q->status = dr_trace_sql_error(q->t, rc, "reading the trace", q->err);
        sqlite3_finalize(st);
        return NULL;
    }
    return st;
}

/* Checks the end of a stepping loop (rc the last step) and finalizes. */
static int finish(Q *q, sqlite3_stmt *st, int rc) {
    if (rc != SQLITE_DONE && q->status == DR_OK)
        q->status = dr_trace_sql_error(q->t, rc, "reading the trace", q->err);
    sqlite3_finalize(st);
    return q->status;
}

static const char *col(sqlite3_stmt *st, int i) {
    const char *s = (const char *)sqlite3_column_text(st, i);
    return s ? s : "";
}

/* The most bytes an export writes: 64 times the trace (its file and WAL)
 * plus 64 MiB.  A real trace exports to a few times its size (payloads are
 * stored compressed 5 to 30 times; the Perfetto JSON of its events is
 * smaller still); one that would write more is hostile -- one payload of
 * zeros named by thousands of events -- and is stopped with nothing left
 * behind. */
#define EXPORT_CAP_FACTOR 64
#define EXPORT_CAP_EXTRA ((uint64_t)64 << 20)

static uint64_t export_cap(DrTrace *t) {
    uint64_t size = 0;
    struct stat sb;
    char wal[4200];
    if (stat(dr_trace_path(t), &sb) == 0) size += (uint64_t)sb.st_size;
    snprintf(wal, sizeof wal, "%s-wal", dr_trace_path(t));
    if (stat(wal, &sb) == 0) size += (uint64_t)sb.st_size;
    return size * EXPORT_CAP_FACTOR + EXPORT_CAP_EXTRA;
}

static int too_big(DrTrace *t, uint64_t cap, DrError *err) {
    return dr_error(err, DR_ERR_CORRUPT,
                    "%s: the export would be larger than %llu bytes (%d times the trace and "
                    "%llu MiB): the trace is hostile or damaged; nothing written",
                    dr_trace_path(t), (unsigned long long)cap, EXPORT_CAP_FACTOR,
                    (unsigned long long)(EXPORT_CAP_EXTRA >> 20));
}

/* ---- perfetto ---------------------------------------------------------- */

typedef struct {
    char ph;         /* X, i, C */
    int64_t ts, dur; /* ns */
    int tid;         /* 0 for process-wide (counters) */
    int depth;       /* nesting for ties: compile 0, attempt 1, backend 2 */
    char *name, *cat;
    char *args; /* a JSON object, or NULL */
} PEvent;

typedef struct {
    PEvent *v;
    size_t n, cap;
    int64_t *threads; /* thread idents, index + 1 is the tid */
    char **thread_names;
    size_t nthreads;
    int oom;
    uint64_t bytes, limit; /* what the events will write, at most */
    int too_big;
} PEvents;

static int tid_of(PEvents *e, int64_t ident, const char *name) {
    for (size_t i = 0; i < e->nthreads; i++)
        if (e->threads[i] == ident) {
            if (name && *name && !e->thread_names[i]) e->thread_names[i] = strdup(name);
            return (int)i + 1;
        }
    int64_t *t = realloc(e->threads, (e->nthreads + 1) * sizeof *t);
    if (!t) return e->oom = 1, 0;
    e->threads = t;
    char **n = realloc(e->thread_names, (e->nthreads + 1) * sizeof *n);
    if (!n) return e->oom = 1, 0;
    e->thread_names = n;
    e->threads[e->nthreads] = ident;
    e->thread_names[e->nthreads] = name && *name ? strdup(name) : NULL;
    return (int)++e->nthreads;
}

/* Adds an event; name, cat and args are copied (args may be NULL). */
static PEvent *add(PEvents *e, char ph, int64_t ts, int64_t dur, int tid, int depth,
                   const char *name, const char *cat, char *args_owned) {
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 256;
        PEvent *v = realloc(e->v, cap * sizeof *v);
        if (!v) {
            free(args_owned);
            e->oom = 1;
            return NULL;
        }
        e->v = v;
        e->cap = cap;
    }
    /* name, cat and args as written, and the keys around them */
    e->bytes +=
        (name ? strlen(name) : 0) + strlen(cat) + (args_owned ? strlen(args_owned) : 0) + 128;
    if (e->bytes > e->limit) {
        free(args_owned);
        e->too_big = e->oom = 1;
        return NULL;
    }
    PEvent *p = &e->v[e->n++];
    *p = (PEvent){.ph = ph,
                  .ts = ts,
                  .dur = dur < 0 ? 0 : dur,
                  .tid = tid,
                  .depth = depth,
                  .name = strdup(name ? name : ""),
                  .cat = strdup(cat),
                  .args = args_owned};
    if (!p->name || !p->cat) e->oom = 1;
    return p;
}

/* A JSON object built from key/value pairs (values are strings; NULL
 * values are left out); keys prefixed with '#' take a number written as
 * is (checked to be one). */
static char *jobj(int n, ...) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    va_list ap;
    va_start(ap, n);
    fputc('{', f);
    int first = 1;
    for (int i = 0; i < n; i++) {
        const char *k = va_arg(ap, const char *);
        const char *v = va_arg(ap, const char *);
        if (!v) continue;
        int num = k[0] == '#';
        if (num) {
            char *end;
            strtod(v, &end);
            if (!*v || *end) num = 0, k++; /* not a number: written as a string */
        }
        if (!first) fputs(", ", f);
        first = 0;
        dr_json_string(f, num ? k + 1 : k);
        fputs(": ", f);
        if (num) fputs(v, f);
        else dr_json_string(f, v);
    }
    va_end(ap);
    fputc('}', f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int cmp_event(const void *a, const void *b) {
    const PEvent *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1; /* parents first */
    if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
    return 0;
}

static void put_us(FILE *f, int64_t ns) {
    if (ns < 0) ns = 0;
    fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

/* The compile slices and, by compile id, their time range and tid. */
typedef struct {
    char *cid;
    int64_t start, end;
    int tid;
    int64_t *attempts; /* checkpoint times, in order */
    size_t nattempts;
} Compile;

static Compile *find_compile(Compile *c, size_t n, const char *cid) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(c[i].cid, cid) == 0) return &c[i];
    return NULL;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* One process of the timeline: the events of trace t, as process pidn
 * named pname (the script, and its rank in a torchrun job), times moved by
 * offset_ns.  Starts with the process_name record; the caller writes the
 * separators between processes. */
static int perfetto_process(DrTrace *t, FILE *out, long long pidn, const char *rank,
                            int64_t offset_ns, DrError *err) {
    Q q = {t, err, DR_OK};
    PEvents e = {0};
    e.limit = export_cap(t);
    Compile *comp = NULL;
    size_t ncomp = 0;
    int rc = SQLITE_DONE;
    char *script = NULL, *duration = NULL;
    dr_trace_get_meta(t, "script", &script, NULL);
    if (!script) dr_trace_get_meta(t, "module", &script, NULL);
    dr_trace_get_meta(t, "duration_ns", &duration, NULL);

    /* Compiles: the event is written when the compile ends. */
    sqlite3_stmt *st = prepare(
        &q,
        "SELECT e.t_ns, e.thread, e.compile_id, json_extract(e.data, '$.duration_ns'),\n"
        "  json_extract(e.data, '$.outcome'), json_extract(e.data, '$.attempts'),\n"
        "  json_extract(e.data, '$.graphs'), json_extract(e.data, '$.recompile'),\n"
        "  json_extract(e.data, '$.thread_name'), v.qualname, v.filename, v.firstlineno, e.text\n"
        "FROM v_ev e LEFT JOIN v_code v ON v.code_id = e.code_id\n"
        "WHERE e.kind = 'compile' AND e.compile_id IS NOT NULL ORDER BY e.seq");
    if (!st) goto done;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t end = sqlite3_column_int64(st, 0);
        int64_t dur = sqlite3_column_int64(st, 3);
        if (dur < 0 || dur > end) dur = end;
        int tid = tid_of(&e, sqlite3_column_int64(st, 1), col(st, 8));
        const char *cid = col(st, 2);
        Compile *c = realloc(comp, (ncomp + 1) * sizeof *c);
        if (!c) {
            e.oom = 1;
            break;
        }
        comp = c;
        comp[ncomp] = (Compile){.cid = strdup(cid), .start = end - dur, .end = end, .tid = tid};
        if (!comp[ncomp++].cid) e.oom = 1;
        char *name = NULL;
        if (asprintf(&name, "compile %s %s", cid, col(st, 9)) < 0) name = NULL;
        char *args = jobj(9, "compile_id", cid, "frame", col(st, 9), "file", col(st, 10),
                          "#firstlineno", col(st, 11), "outcome", col(st, 4), "#attempts",
                          col(st, 5), "#graphs", col(st, 6), "#recompile", col(st, 7), "reason",
                          sqlite3_column_text(st, 12) ? col(st, 12) : NULL);
        add(&e, 'X', end - dur, dur, tid, 0, name ? name : cid, "compile", args);
        free(name);
    }
    if (finish(&q, st, rc) != DR_OK || e.oom) goto done;

    /* Attempts: a checkpoint of scope attempt starts one. */
    st =
        prepare(&q, "SELECT t_ns, compile_id, json_extract(data, '$.attempt') FROM v_ev\n"
                    "WHERE kind = 'speculation' AND json_extract(data, '$.action') = 'checkpoint'\n"
                    "  AND json_extract(data, '$.scope') = 'attempt' AND compile_id IS NOT NULL\n"
                    "ORDER BY seq");
    if (!st) goto done;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        Compile *c = find_compile(comp, ncomp, col(st, 1));
        if (!c) continue; /* a compile cut short by the end of the recording */
        int64_t *a = realloc(c->attempts, (c->nattempts + 1) * sizeof *a);
        if (!a) {
            e.oom = 1;
            break;
        }
        c->attempts = a;
        c->attempts[c->nattempts++] = clamp(sqlite3_column_int64(st, 0), c->start, c->end);
    }
    if (finish(&q, st, rc) != DR_OK || e.oom) goto done;
    for (size_t i = 0; i < ncomp; i++) {
        Compile *c = &comp[i];
        for (size_t k = 0; k < c->nattempts; k++) {
            int64_t s = c->attempts[k], end = k + 1 < c->nattempts ? c->attempts[k + 1] : c->end;
            if (end < s) end = s;
            char name[64], num[32];
            snprintf(name, sizeof name, "attempt %zu", k);
            snprintf(num, sizeof num, "%zu", k);
            add(&e, 'X', s, end - s, c->tid, 1, name, "attempt",
                jobj(2, "compile_id", c->cid, "#attempt", num));
        }
    }

    /* Backend compiles, inside the attempt (or compile) that holds them. */
    st = prepare(&q, "SELECT t_ns, compile_id, json_extract(data, '$.duration_ns'), text, num,\n"
                     "  json_extract(data, '$.failed') FROM v_ev\n"
                     "WHERE kind = 'graph' AND compile_id IS NOT NULL ORDER BY seq");
    if (!st) goto done;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        Compile *c = find_compile(comp, ncomp, col(st, 1));
        if (!c) continue;
        int64_t end = clamp(sqlite3_column_int64(st, 0), c->start, c->end);
        int64_t lo = c->start;
        for (size_t k = 0; k < c->nattempts; k++)
            if (c->attempts[k] <= end) lo = c->attempts[k];
        int64_t dur = sqlite3_column_int64(st, 2);
        int64_t start = clamp(end - (dur < 0 ? 0 : dur), lo, end);
        char *name = NULL;
        if (asprintf(&name, "backend %s", col(st, 3)) < 0) name = NULL;
        add(&e, 'X', start, end - start, c->tid, 2, name ? name : "backend", "backend",
            jobj(4, "compile_id", c->cid, "backend", col(st, 3), "#nodes", col(st, 4), "#failed",
                 col(st, 5)));
        free(name);
    }
    if (finish(&q, st, rc) != DR_OK || e.oom) goto done;

    /* Instants. */
    static const struct {
        const char *name, *sql;
    } instants[] = {
        {"graph break",
         "SELECT e.t_ns, e.thread, g.compile_id, g.reason, g.type, g.qualname, g.filename,\n"
         "  g.lineno, NULL FROM v_graph_breaks g JOIN events e ON e.seq = g.seq ORDER BY g.seq"},
        {"guard failure",
         "SELECT e.t_ns, e.thread, g.compile_id, g.reason, g.failed_compile_id, g.qualname,\n"
         "  g.filename, NULL, NULL FROM v_guard_failures g JOIN events e ON e.seq = g.seq\n"
         "ORDER BY g.seq"},
        {"error",
         "SELECT e.t_ns, e.thread, g.compile_id, g.message, g.exc_type, NULL, NULL, NULL,\n"
         "  CASE WHEN g.suppressed THEN 'suppressed' ELSE 'raised' END\n"
         "FROM v_errors g JOIN events e ON e.seq = g.seq ORDER BY g.seq"},
    };
    for (size_t k = 0; k < sizeof instants / sizeof *instants; k++) {
        st = prepare(&q, instants[k].sql);
        if (!st) goto done;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int tid = tid_of(&e, sqlite3_column_int64(st, 1), NULL);
            const char *cid = sqlite3_column_text(st, 2) ? col(st, 2) : NULL;
            const char *v4 = sqlite3_column_text(st, 4) ? col(st, 4) : NULL;
            const char *v5 = sqlite3_column_text(st, 5) ? col(st, 5) : NULL;
            const char *v6 = sqlite3_column_text(st, 6) ? col(st, 6) : NULL;
            const char *v7 = sqlite3_column_text(st, 7) ? col(st, 7) : NULL;
            const char *v8 = sqlite3_column_text(st, 8) ? col(st, 8) : NULL;
            char *args = k == 0   ? jobj(6, "compile_id", cid, "reason", col(st, 3), "type", v4,
                                         "frame", v5, "file", v6, "#line", v7)
                         : k == 1 ? jobj(5, "compile_id", cid, "reason", col(st, 3),
                                         "failed_compile_id", v4, "frame", v5, "file", v6)
                                  : jobj(4, "compile_id", cid, "message", col(st, 3), "exc_type",
                                         v4, "status", v8);
            char *name = NULL;
            if (asprintf(&name, "%s%s%s", instants[k].name, v4 && k != 1 ? ": " : "",
                         v4 && k != 1 ? v4 : "") < 0)
                name = NULL;
            /* Inside the compile it belongs to, as attempts and backend
             * compiles are: a recompile's guard failure is recorded as
             * Dynamo decides to compile, a moment before the compile's
             * own clock starts. */
            int64_t ts = sqlite3_column_int64(st, 0);
            const Compile *c = cid ? find_compile(comp, ncomp, cid) : NULL;
            if (c) ts = clamp(ts, c->start, c->end);
            add(&e, 'i', ts, 0, tid, 3, name ? name : instants[k].name, instants[k].name, args);
            free(name);
        }
        if (finish(&q, st, rc) != DR_OK || e.oom) goto done;
    }

    /* Counters: cache entries seen by each callback, per frame; cache hits
     * in all (the trace keeps the total), at the end of the run. */
    st = prepare(&q, "SELECT e.t_ns, v.qualname, json_extract(e.data, '$.cache_entries_before'),\n"
                     "  json_extract(e.data, '$.outcome') FROM v_ev e\n"
                     "JOIN v_code v ON v.code_id = e.code_id WHERE e.kind = 'callback'\n"
                     "  AND e.code_id IN (SELECT code_id FROM v_frames WHERE compiles > 0)\n"
                     "  AND json_extract(e.data, '$.cache_entries_before') IS NOT NULL\n"
                     "ORDER BY e.seq");
    if (!st) goto done;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char *name = NULL;
        if (asprintf(&name, "cache entries %s", col(st, 1)) < 0) continue;
        long long n = sqlite3_column_int64(st, 2);
        char num[32];
        /* A compile adds one entry once the callback returns. */
        snprintf(num, sizeof num, "%lld", n + (strcmp(col(st, 3), "compiled") == 0));
        add(&e, 'C', sqlite3_column_int64(st, 0), 0, 0, 0, name, "cache", jobj(1, "#entries", num));
        free(name);
    }
    if (finish(&q, st, rc) != DR_OK || e.oom) goto done;
    int64_t end_ns = duration ? atoll(duration) : 0;
    for (size_t i = 0; i < e.n; i++)
        if (e.v[i].ts + e.v[i].dur > end_ns) end_ns = e.v[i].ts + e.v[i].dur;
    st = prepare(&q, "SELECT qualname, cache_hits FROM v_frames WHERE compiles > 0 ORDER BY "
                     "code_id");
    if (!st) goto done;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char *name = NULL;
        if (asprintf(&name, "cache hits %s", col(st, 0)) < 0) continue;
        add(&e, 'C', 0, 0, 0, 0, name, "cache", jobj(1, "#hits", "0"));
        add(&e, 'C', end_ns, 0, 0, 0, name, "cache", jobj(1, "#hits", col(st, 1)));
        free(name);
    }
    if (finish(&q, st, rc) != DR_OK || e.oom) goto done;

    qsort(e.v, e.n, sizeof *e.v, cmp_event);
    fprintf(out,
            "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %lld, \"tid\": 0, "
            "\"args\": {\"name\": ",
            pidn);
    char *pname = NULL;
    if ((rank ? asprintf(&pname, "rank %s: %s (dynrec)", rank, script ? script : "python")
              : asprintf(&pname, "%s (dynrec)", script ? script : "python")) < 0)
        pname = NULL;
    dr_json_string(out, pname ? pname : "python");
    free(pname);
    fputs("}}", out);
    for (size_t i = 0; i < e.nthreads; i++) {
        char *tname = NULL;
        if (asprintf(&tname, "%s (thread %lld)", e.thread_names[i] ? e.thread_names[i] : "thread",
                     (long long)e.threads[i]) < 0)
            tname = NULL;
        fprintf(out,
                ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %lld, \"tid\": %zu, "
                "\"args\": {\"name\": ",
                pidn, i + 1);
        dr_json_string(out, tname ? tname : "thread");
        fputs("}}", out);
        free(tname);
    }
    for (size_t i = 0; i < e.n; i++) {
        PEvent *p = &e.v[i];
        fprintf(out, ",\n{\"ph\": \"%c\", \"name\": ", p->ph);
        dr_json_string(out, p->name);
        fputs(", \"cat\": ", out);
        dr_json_string(out, p->cat);
        fputs(", \"ts\": ", out);
        put_us(out, p->ts + offset_ns);
        if (p->ph == 'X') {
            fputs(", \"dur\": ", out);
            put_us(out, p->dur);
        }
        if (p->ph == 'i') fputs(", \"s\": \"t\"", out);
        fprintf(out, ", \"pid\": %lld, \"tid\": %d", pidn, p->tid);
        fprintf(out, ", \"args\": %s}", p->args ? p->args : "{}");
    }
    if (ferror(out)) q.status = dr_error(err, DR_ERR_IO, "writing the Perfetto trace failed");
done:
    if (e.too_big && q.status == DR_OK) q.status = too_big(t, e.limit, err);
    if (e.oom && q.status == DR_OK) q.status = dr_error(err, DR_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < e.n; i++) free(e.v[i].name), free(e.v[i].cat), free(e.v[i].args);
    free(e.v);
    for (size_t i = 0; i < e.nthreads; i++) free(e.thread_names[i]);
    free(e.thread_names);
    free(e.threads);
    for (size_t i = 0; i < ncomp; i++) free(comp[i].cid), free(comp[i].attempts);
    free(comp);
    free(script);
    free(duration);
    return q.status;
}

/* A meta value as a number in [lo, hi], or def. */
static long long meta_number(DrTrace *t, const char *key, long long lo, long long hi,
                             long long def) {
    char *v = NULL, *end = NULL;
    long long n = def;
    if (dr_trace_get_meta(t, key, &v, NULL) == DR_OK && v && *v) {
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (!*end && !errno && x >= lo && x <= hi) n = x;
    }
    free(v);
    return n;
}

int dr_export_perfetto_many(DrTrace *const *given, size_t n, FILE *out, DrError *err) {
    /* Several traces (the ranks of a torchrun job): one process each, in
     * rank order (traces without a rank after, as given), on one clock when
     * every trace has its wall-clock start (meta start_unix_ns, from dynrec
     * 0.7.2), else each from its own start. */
    long long *start = calloc(n ? n : 1, sizeof *start), first = -1;
    long long *pids = calloc(n ? n : 1, sizeof *pids);
    long long *ranks = calloc(n ? n : 1, sizeof *ranks);
    DrTrace **t = calloc(n ? n : 1, sizeof *t);
    if (!start || !pids || !ranks || !t) {
        free(start);
        free(pids);
        free(ranks);
        free(t);
        return dr_error(err, DR_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) { /* insertion sort by rank, stable */
        long long r = meta_number(given[i], "dist.rank", 0, INT32_MAX, LLONG_MAX);
        size_t k = i;
        for (; k > 0 && ranks[k - 1] > r; k--) {
            ranks[k] = ranks[k - 1];
            t[k] = t[k - 1];
        }
        ranks[k] = r;
        t[k] = given[i];
    }
    int aligned = 1;
    for (size_t i = 0; i < n; i++) {
        start[i] = meta_number(t[i], "start_unix_ns", 1, LLONG_MAX, -1);
        if (start[i] < 0) aligned = 0;
        else if (first < 0 || start[i] < first) first = start[i];
    }
    fputs("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"exported_by\": \"dynrec " DR_VERSION
          "\", ",
          out);
    char *script = NULL;
    if (n) {
        dr_trace_get_meta(t[0], "script", &script, NULL);
        if (!script) dr_trace_get_meta(t[0], "module", &script, NULL);
    }
    if (n == 1) {
        fputs("\"trace\": ", out);
        dr_json_string(out, dr_trace_path(t[0]));
    } else {
        fputs("\"traces\": [", out);
        for (size_t i = 0; i < n; i++) {
            if (i) fputs(", ", out);
            dr_json_string(out, dr_trace_path(t[i]));
        }
        fprintf(out, "], \"clock\": \"%s\"",
                aligned ? "wall clock (start_unix_ns)" : "each trace from its own start");
    }
    fputs(", \"script\": ", out);
    dr_json_string(out, script);
    free(script);
    fputs("},\n\"traceEvents\": [\n", out);
    int rc = DR_OK;
    for (size_t i = 0; i < n && rc == DR_OK; i++) {
        long long pidn = meta_number(t[i], "pid", 1, INT32_MAX, 1);
        for (size_t k = 0; k < i; k++)
            if (pids[k] == pidn) pidn = 1000000 + (long long)i; /* one process each */
        pids[i] = pidn;
        long long r = n > 1 && ranks[i] != LLONG_MAX ? ranks[i] : -1;
        char rank[32];
        snprintf(rank, sizeof rank, "%lld", r);
        if (i) fputs(",\n", out);
        rc = perfetto_process(t[i], out, pidn, r >= 0 ? rank : NULL,
                              aligned && n > 1 ? (int64_t)(start[i] - first) : 0, err);
    }
    fputs("\n]}\n", out);
    if (rc == DR_OK && ferror(out))
        rc = dr_error(err, DR_ERR_IO, "writing the Perfetto trace failed");
    free(start);
    free(pids);
    free(ranks);
    free(t);
    return rc;
}

int dr_export_perfetto(DrTrace *t, FILE *out, DrError *err) {
    return dr_export_perfetto_many(&t, 1, out, err);
}

/* ---- torch-trace ------------------------------------------------------- */

/* One member of a JSON object: key (with its quotes) and value spans. */
typedef struct {
    const char *key, *val;
    size_t klen, vlen;
} Member;

/* The end of the JSON string starting at s[i] == '"', or 0 when it is cut. */
static size_t skip_string(const char *s, size_t n, size_t i) {
    for (i++; i < n; i++) {
        if (s[i] == '\\') i++;
        else if (s[i] == '"') return i + 1;
    }
    return 0;
}

/* Splits the top-level members of the JSON object s[0..n) (already checked
 * by json_valid); returns the count, or -1 when it is not an object or has
 * more than max members. */
static int split_object(const char *s, size_t n, Member *m, int max) {
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    if (i >= n || s[i] != '{') return -1;
    i++;
    int count = 0;
    for (;;) {
        while (i < n && s[i] == ' ') i++;
        if (i < n && s[i] == '}') return count;
        if (i >= n || s[i] != '"' || count == max) return -1;
        size_t kend = skip_string(s, n, i);
        if (!kend) return -1;
        m[count].key = s + i;
        m[count].klen = kend - i;
        i = kend;
        while (i < n && s[i] == ' ') i++;
        if (i >= n || s[i] != ':') return -1;
        i++;
        while (i < n && s[i] == ' ') i++;
        size_t v = i;
        int depth = 0;
        while (i < n) {
            char c = s[i];
            if (c == '"') {
                size_t e = skip_string(s, n, i);
                if (!e) return -1;
                i = e;
                continue;
            }
            if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') {
                if (depth == 0) break;
                depth--;
            } else if (c == ',' && depth == 0) {
                break;
            }
            i++;
        }
        if (i >= n) return -1;
        size_t ve = i;
        while (ve > v && s[ve - 1] == ' ') ve--;
        m[count].val = s + v;
        m[count].vlen = ve - v;
        count++;
        if (s[i] == ',') i++;
    }
}

static int key_is(const Member *m, const char *k) {
    size_t n = strlen(k);
    return m->klen == n + 2 && memcmp(m->key + 1, k, n) == 0;
}

/* The metadata with torch's key order: the record's name, then rank, stack,
 * compiled_autograd_id, frame_id, frame_compile_id, attempt,
 * subgraph_name, then any other key, has_payload last.  Returns 0 when
 * meta is not a flat-enough object (the caller skips the record). */
static int write_metadata(FILE *f, const char *meta, size_t len, const char *name,
                          int *has_payload) {
    Member m[64];
    int n = split_object(meta, len, m, 64);
    if (n < 1) return 0;
    static const char *const order[] = {
        "rank",          "stack", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt",
        "subgraph_name", NULL};
    int used[64] = {0};
    int first = 1;
    *has_payload = 0;
    fputc('{', f);
#define PUT(i)                                                                                     \
    do {                                                                                           \
        if (!first) fputs(", ", f);                                                                \
        first = 0;                                                                                 \
        fwrite(m[i].key, 1, m[i].klen, f);                                                         \
        fputs(": ", f);                                                                            \
        fwrite(m[i].val, 1, m[i].vlen, f);                                                         \
        used[i] = 1;                                                                               \
    } while (0)
    for (int i = 0; i < n; i++)
        if (key_is(&m[i], name)) PUT(i);
    for (int k = 0; order[k]; k++)
        for (int i = 0; i < n; i++)
            if (!used[i] && key_is(&m[i], order[k])) PUT(i);
    for (int i = 0; i < n; i++)
        if (!used[i] && !key_is(&m[i], "has_payload")) PUT(i);
    for (int i = 0; i < n; i++)
        if (!used[i]) {
            *has_payload = 1;
            PUT(i);
        }
#undef PUT
    fputc('}', f);
    return 1;
}

static int valid_line(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n' || s[i] == '\r' || s[i] == 0) return 0;
    return 1;
}

/* Seconds since the epoch of "2026-11-30T13:23:09Z"; 0 when malformed. */
static time_t parse_utc(const char *s) {
    struct tm tm = {0};
    if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm)) return 0;
    return timegm(&tm);
}

int dr_export_torch_trace(DrTrace *t, const char *dir, char **path_out, long *skipped,
                          DrError *err) {
    Q q = {t, err, DR_OK};
    long skip = 0;
    if (path_out) *path_out = NULL;
    if (skipped) *skipped = 0;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return dr_error(err, DR_ERR_IO, "%s: cannot create the directory: %s", dir,
                        strerror(errno));
    /* The log's name from the trace's: letters, digits, '-', '_' and '.'. */
    const char *base = strrchr(dr_trace_path(t), '/');
    base = base ? base + 1 : dr_trace_path(t);
    char name[128];
    size_t k = 0;
    for (const char *p = base; *p && k < sizeof name - 1; p++)
        name[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                            (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'
                        ? *p
                        : '_';
    name[k] = 0;
    if (k > 3 && strcmp(name + k - 3, "_db") == 0) name[k - 3] = 0;
    char *path = NULL;
    if (asprintf(&path, "%s/dedicated_log_torch_trace_%s.log", dir, name[0] ? name : "trace") < 0)
        return dr_error(err, DR_ERR_NOMEM, "out of memory");
    FILE *f = fopen(path, "w");
    if (!f) {
        dr_error(err, DR_ERR_IO, "%s: cannot create the file: %s", path, strerror(errno));
        free(path);
        return DR_ERR_IO;
    }
    char *pid = NULL, *start = NULL;
    dr_trace_get_meta(t, "pid", &pid, NULL);
    dr_trace_get_meta(t, "start_time", &start, NULL);
    time_t t0 = parse_utc(start);
    long long pidn = pid ? atoll(pid) : 0;
    uint64_t cap = export_cap(t);
    sqlite3_stmt *check = prepare(&q, "SELECT json_valid(?1) AND json_type(?1) = 'object'");
    sqlite3_stmt *st =
        check
            ? prepare(
                  &q,
                  "SELECT e.seq, e.t_ns, e.text, e.data, e.blob_id FROM v_ev e\n"
                  "WHERE e.kind = 'trace' AND e.text IS NOT NULL AND e.data IS NOT NULL ORDER BY e.seq")
            : NULL;
    int rc = SQLITE_DONE;
    while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0), t_ns = sqlite3_column_int64(st, 1);
        const char *rec = col(st, 2);
        const char *data = col(st, 3);
        char *blob = NULL;
        size_t blen = 0;
        int have_blob = sqlite3_column_type(st, 4) != SQLITE_NULL;
        DrError e2 = {0};
        if (have_blob && dr_trace_read_blob(t, sqlite3_column_int64(st, 4), 0, (void **)&blob,
                                            &blen, &e2) != DR_OK) {
            if (e2.code == DR_ERR_CORRUPT || e2.code == DR_ERR_NOMEM) {
                q.status = dr_error(err, e2.code, "%s", e2.msg);
                break;
            }
            skip++;
            continue;
        }
        const char *meta = data, *payload = blob;
        size_t mlen = strlen(data), plen = blen;
        if (strstr(data, "\"metadata_in_blob\": true")) {
            /* The metadata is the blob's first line, the payload the rest. */
            char *nl = blob ? memchr(blob, '\n', blen) : NULL;
            if (!nl) {
                free(blob);
                skip++;
                continue;
            }
            meta = blob;
            mlen = (size_t)(nl - blob);
            payload = nl + 1;
            plen = blen - mlen - 1;
        }
        /* The record's name as torch keys it: artifact:NAME is "artifact". */
        const char *key = strncmp(rec, "artifact:", 9) == 0 ? "artifact" : rec;
        int ok = valid_line(meta, mlen) &&
                 sqlite3_bind_text(check, 1, meta, (int)mlen, SQLITE_STATIC) == SQLITE_OK &&
                 sqlite3_step(check) == SQLITE_ROW && sqlite3_column_int(check, 0) == 1;
        sqlite3_reset(check);
        sqlite3_clear_bindings(check);
        if (!ok) {
            free(blob);
            skip++;
            continue;
        }
        /* At most: the prefix, the metadata, each payload byte twice (a
         * newline becomes "\n\t"). */
        long at = ftell(f);
        if (at < 0 || (uint64_t)at + 2 * (uint64_t)plen + mlen + 256 > cap) {
            free(blob);
            q.status = too_big(t, cap, err);
            break;
        }
        time_t sec = t0 + (time_t)(t_ns / 1000000000);
        struct tm tm;
        char stamp[32] = "0101 00:00:00";
        if (localtime_r(&sec, &tm)) strftime(stamp, sizeof stamp, "%m%d %H:%M:%S", &tm);
        fprintf(f, "V%s.%06lld %lld dynrec_export.py:%lld] ", stamp,
                (long long)(t_ns % 1000000000 / 1000), pidn, (long long)seq);
        int has_payload = 0;
        if (!write_metadata(f, meta, mlen, key, &has_payload)) {
            /* Not splittable (deeply odd but valid JSON): as it is. */
            fwrite(meta, 1, mlen, f);
            has_payload = strstr(meta, "\"has_payload\"") != NULL;
        }
        if (has_payload || (have_blob && meta != blob)) {
            /* Torch writes each payload line after a newline and a tab. */
            const char *p = payload ? payload : "";
            size_t left = payload ? plen : 0;
            for (;;) {
                const char *nl = memchr(p, '\n', left);
                size_t n = nl ? (size_t)(nl - p) : left;
                fputs("\n\t", f);
                fwrite(p, 1, n, f);
                if (!nl) break;
                p = nl + 1;
                left -= n + 1;
            }
        }
        fputc('\n', f);
        free(blob);
    }
    if (st) finish(&q, st, rc);
    sqlite3_finalize(check);
    free(pid);
    free(start);
    if (fclose(f) != 0 && q.status == DR_OK)
        q.status = dr_error(err, DR_ERR_IO, "%s: writing failed: %s", path, strerror(errno));
    if (q.status != DR_OK) unlink(path); /* no partial log */
    if (skipped) *skipped = skip;
    if (q.status == DR_OK && path_out) *path_out = path;
    else free(path);
    return q.status;
}
