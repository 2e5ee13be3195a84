/* model.c -- one trace's Dynamo decisions, read into memory for comparing.
 *
 * Two queries over the views (frames; the decision events in order) and
 * two small ones (meta, the config at start) build the model; each text is
 * masked once here (dr_mask, schema/mask.c) so that comparing is string
 * equality.  The rules for what is masked and how frames and compiles are
 * matched are in replayer/COMPARE.md; the masking is schema/mask.c's, the
 * matching this file's and compare.c's alone. */
#define _GNU_SOURCE 1
#include "model.h"

#include "../schema/ident.h"
#include "../schema/mask.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- masking ------------------------------------------------------------- */

/* The rules are schema/mask.c's, the one masking of the recorder and the
 * readers; a model only supplies its run's root and cwd. */
char *dr_model_mask(const DrModel *m, DrArena *a, const char *s, size_t limit) {
    DrMaskCtx ctx = {m->root, m->cwd};
    size_t n = s ? strlen(s) : 0, len;
    if (limit && n > limit) n = limit;
    char *masked = dr_mask(&ctx, s, n, &len);
    char *out = masked ? dr_arena_strndup(a, masked, len) : NULL;
    free(masked);
    return out;
}

char *dr_model_relname(const DrModel *m, DrArena *a, const char *path) {
    if (!path || !*path) return dr_arena_strdup(a, "?");
    /* A name in angle brackets ("<eval_with_key>.3 from /venv/.../x.py:7 in
     * f", "<string>"): masked as any text, whose rules cover the fx
     * counter and the path inside. */
    if (path[0] == '<') return dr_model_mask(m, a, path, 0);
    char *abs = dr_path_normalize(a, m->cwd, path);
    if (!abs) return NULL;
    /* Under the root (and not in a library directory, which the masking
     * checks first): relative to it. */
    DrMaskCtx ctx = {m->root, m->cwd};
    char *masked = dr_mask_path(&ctx, abs, strlen(abs), NULL);
    char *out = !masked                              ? NULL
                : strncmp(masked, "<root>/", 7) == 0 ? dr_arena_strdup(a, masked + 7)
                                                     : dr_arena_strdup(a, masked);
    free(masked);
    return out;
}

/* ---- loading --------------------------------------------------------------- */

static long parse_long(const char *s) {
    if (!s) return 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (v > 1000000000000LL) v = 1000000000000LL;
    if (v < -1000000000000LL) v = -1000000000000LL;
    return (long)v;
}

static int oom(DrModel *m, DrError *err) {
    return dr_error(err, DR_ERR_NOMEM, "%s: out of memory reading the trace",
                    dr_trace_path(m->trace));
}

static long frame_for(DrModel *m, const char *rel, const char *qual, long line, DrError *err) {
    char key[8192];
    dr_frame_key(key, sizeof key, rel, qual, line);
    long fi = dr_map_get(&m->frame_map, key);
    if (fi >= 0) return fi;
    if (m->nframes == m->frames_cap) {
        long ncap = m->frames_cap ? m->frames_cap * 2 : 64;
        DrFrame *nf = realloc(m->frames, (size_t)ncap * sizeof *nf);
        if (!nf) return oom(m, err), -1;
        m->frames = nf;
        m->frames_cap = ncap;
    }
    DrFrame *f = &m->frames[m->nframes];
    memset(f, 0, sizeof *f);
    f->file = dr_arena_strdup(&m->arena, rel);
    f->qualname = dr_arena_strdup(&m->arena, qual);
    f->firstlineno = line;
    f->first_rank = -1;
    if (!f->file || !f->qualname || dr_map_put(&m->frame_map, key, m->nframes) != 0)
        return oom(m, err), -1;
    return m->nframes++;
}

typedef struct {
    DrModel *m;
    DrError *err;
    int status;
} Ctx;

static int frame_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Ctx *c = ud;
    DrModel *m = c->m;
    if (n < 7) return 0;
    char *rel = dr_model_relname(m, &m->arena, v[0]);
    if (!rel) return c->status = oom(m, c->err), 1;
    long fi = frame_for(m, rel, v[1] ? v[1] : "?", parse_long(v[2]), c->err);
    if (fi < 0) return c->status = DR_ERR_NOMEM, 1;
    DrFrame *f = &m->frames[fi];
    f->callbacks += parse_long(v[3]);
    f->cache_hits += parse_long(v[4]);
    f->ncompiles_counted += parse_long(v[5]);
    if (v[6] && dr_map_put(&m->code_map, v[6], fi) != 0) return c->status = oom(m, c->err), 1;
    return 0;
}

const char *dr_frame_name(const DrFrame *f) { return f->display ? f->display : f->qualname; }

const char *dr_compile_name(const DrModel *m, const DrCompile *c) {
    if (c->display && *c->display) return c->display;
    return c->frame >= 0 ? dr_frame_name(&m->frames[c->frame]) : "?";
}

/* A frame's display name: its compiles' one display name, when they agree
 * and it is not the qualname (torch's wrapper of several modules has
 * one per compile: the frame keeps its qualname). */
static void frame_displays(DrModel *m) {
    for (long i = 0; i < m->ncompiles; i++) {
        const DrCompile *c = &m->compiles[i];
        if (c->frame < 0 || !c->display) continue;
        DrFrame *f = &m->frames[c->frame];
        if (f->multi_display) continue;
        if (!f->display) {
            if (strcmp(c->display, f->qualname) != 0) f->display = c->display;
        } else if (strcmp(f->display, c->display) != 0) {
            f->display = NULL;
            f->multi_display = 1;
        }
    }
}

/* The compile with Dynamo id cid, made on first sight. */
static DrCompile *compile_for(DrModel *m, const char *cid, int64_t seq, DrError *err) {
    const char *key = cid ? cid : "?";
    long ci = dr_map_get(&m->compile_map, key);
    if (ci >= 0) return &m->compiles[ci];
    if (m->ncompiles == m->compiles_cap) {
        long ncap = m->compiles_cap ? m->compiles_cap * 2 : 64;
        DrCompile *nc = realloc(m->compiles, (size_t)ncap * sizeof *nc);
        if (!nc) return oom(m, err), NULL;
        m->compiles = nc;
        m->compiles_cap = ncap;
    }
    DrCompile *c = &m->compiles[m->ncompiles];
    memset(c, 0, sizeof *c);
    c->cid = dr_arena_strdup(&m->arena, key);
    c->epoch = dr_compile_epoch(key, NULL);
    c->frame = -1;
    c->seq = seq;
    c->first_seq = seq;
    if (!c->cid || dr_map_put(&m->compile_map, key, m->ncompiles) != 0) return oom(m, err), NULL;
    m->ncompiles++;
    return c;
}

/* s masked, through a cache: a recompile storm repeats the same guard and
 * reason texts thousands of times.  s is read up to its NUL. */
static char *mask_cached(DrModel *m, const char *s) {
    long i = dr_map_get(&m->mask_map, s);
    if (i >= 0) return m->masked.v[i];
    char *out = dr_model_mask(m, &m->arena, s, 0);
    if (!out || dr_vec_push(&m->masked, out) != 0 ||
        dr_map_put(&m->mask_map, s, m->masked.n - 1) != 0)
        return NULL;
    return out;
}

/* A backend as compared: a backend object by its class's name, however
 * Dynamo named it (torch.compile(backend=cnt) records the object's repr,
 * "<torch._dynamo.testing.CompileCounter object at 0x...>", while
 * torch._dynamo.optimize(cnt) records "CompileCounter"); other names as
 * masked.  NULL when out of memory. */
static const char *backend_label(DrModel *m, const char *raw) {
    if (!raw) return "?";
    char *s = mask_cached(m, raw);
    size_t n = s ? strlen(s) : 0;
    static const char tail[] = " object>";
    if (!s || n < sizeof tail + 1 || s[0] != '<' || strcmp(s + n - (sizeof tail - 1), tail) != 0)
        return s;
    const char *end = s + n - (sizeof tail - 1), *start = end;
    while (start > s + 1 && (isalnum((unsigned char)start[-1]) || start[-1] == '_')) start--;
    if (start == end || (start[-1] != '.' && start != s + 1)) return s;
    return dr_arena_strndup(&m->arena, start, (size_t)(end - start));
}

/* First line of s, at most max bytes, masked. */
static char *first_line(DrModel *m, const char *s, size_t max) {
    if (!s) s = "";
    size_t n = strcspn(s, "\n");
    if (n > max) n = max;
    if (s[n] == 0) return mask_cached(m, s);
    char *line = dr_arena_strndup(&m->arena, s, n);
    return line ? mask_cached(m, line) : NULL;
}

/* Columns of the event query, in order. */
enum {
    EV_SEQ,
    EV_THREAD,
    EV_KIND,
    EV_CODE,
    EV_CID,
    EV_NUM,
    EV_TEXT,
    EV_OUTCOME,
    EV_ATTEMPTS,
    EV_RECOMPILE,
    EV_GRAPHS,
    EV_TNAME,
    EV_FAILED,
    EV_TYPE,
    EV_FILENAME,
    EV_BACKEND,
    EV_STATUS,
    EV_EXC,
    EV_ACTION,
    EV_DISPLAY,
    EV_BLOB,
    EV_DATA,
    EV__N
};

/* Each kind's JSON fields, read only where the kind has them and the data
 * is valid JSON (a hostile trace's malformed data reads as absent). */
#define J(kind, field)                                                                             \
    "CASE WHEN kind = '" kind "' AND json_valid(data) THEN json_extract(data, '$." field "') END"
/* clang-format off */
static const char EVENT_SQL[] =
    "SELECT seq, thread, kind, code_id, compile_id, num, text, "
    J("compile", "outcome") ", "
    J("compile", "attempts") ", "
    J("compile", "recompile") ", "
    J("compile", "graphs") ", "
    J("compile", "thread_name") ", "
    J("guard_failure", "failed_compile_id") ", "
    J("graph_break", "type") ", "
    J("graph_break", "filename") ", "
    J("graph", "backend") ", "
    J("side_effect", "status") ", "
    J("error", "exc_type") ", "
    J("speculation", "action") ", "
    J("compile", "display_name") ", "
    "blob_id, data FROM v_ev"
    " WHERE kind IN ('compile', 'guard', 'guard_failure', 'graph_break', 'graph',"
    " 'speculation', 'side_effect', 'error', 'config')"
    " ORDER BY seq";
/* clang-format on */
#undef J

static int push(DrModel *m, DrCompile *c, int cat, char *s, Ctx *x) {
    if (!s || dr_vec_push(&c->items[cat], s) != 0) return x->status = oom(m, x->err), 1;
    return 0;
}

/* Pushes the line "<prefix formatted from fmt><text>" (text already
 * masked; NULL when masking ran out of memory). */
static int push_line(Ctx *x, DrCompile *c, int cat, const char *text, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int push_line(Ctx *x, DrCompile *c, int cat, const char *text, const char *fmt, ...) {
    DrModel *m = x->m;
    char prefix[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    DrBuf b = {0};
    dr_buf_puts(&b, prefix);
    dr_buf_puts(&b, text);
    char *s = !text || b.failed ? NULL : dr_arena_strdup(&m->arena, b.s);
    dr_buf_free(&b);
    return push(m, c, cat, s, x);
}

static int event_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Ctx *x = ud;
    DrModel *m = x->m;
    if (n < EV__N || !v[EV_KIND]) return 0;
    const char *kind = v[EV_KIND];
    int64_t seq = parse_long(v[EV_SEQ]);
    if (strcmp(kind, "config") == 0 && !v[EV_CID]) {
        /* The config at start: compared key by key (config_row). */
        return 0;
    }
    DrCompile *c = compile_for(m, v[EV_CID], seq, x->err);
    if (!c) return x->status = DR_ERR_NOMEM, 1;
    char buf[1024];
    if (strcmp(kind, "compile") == 0) {
        c->has_event = 1;
        c->seq = seq;
        c->thread = v[EV_THREAD] ? strtoll(v[EV_THREAD], NULL, 10) : 0;
        c->thread_name = v[EV_TNAME] ? dr_arena_strdup(&m->arena, v[EV_TNAME]) : NULL;
        c->display = v[EV_DISPLAY] ? dr_arena_strdup(&m->arena, v[EV_DISPLAY]) : NULL;
        if (v[EV_DISPLAY] && !c->display) return x->status = oom(m, x->err), 1;
        c->outcome = dr_arena_strdup(&m->arena, v[EV_OUTCOME] ? v[EV_OUTCOME] : "?");
        c->reason = first_line(m, v[EV_TEXT], 2000);
        c->attempts = v[EV_ATTEMPTS] ? parse_long(v[EV_ATTEMPTS]) : 1;
        c->recompile = parse_long(v[EV_RECOMPILE]);
        c->graphs = parse_long(v[EV_GRAPHS]);
        if (v[EV_CODE]) {
            long fi = dr_map_get(&m->code_map, v[EV_CODE]);
            if (fi < 0) {
                /* A code object Dynamo compiled without a callback row. */
                char sql[160];
                snprintf(sql, sizeof sql,
                         "SELECT filename, qualname, firstlineno, 0, 0, 0, code_id FROM v_code"
                         " WHERE code_id = %lld",
                         (long long)parse_long(v[EV_CODE]));
                DrTrace *t = m->trace;
                if (dr_trace_query(t, sql, frame_row, x, x->err) != DR_OK)
                    return x->status = x->err ? x->err->code : DR_ERR_SQL, 1;
                fi = dr_map_get(&m->code_map, v[EV_CODE]);
            }
            c->frame = fi;
        }
        if (!c->outcome || !c->reason) return x->status = oom(m, x->err), 1;
    } else if (strcmp(kind, "guard") == 0) {
        return push(m, c, DR_CAT_GUARDS, mask_cached(m, v[EV_TEXT] ? v[EV_TEXT] : ""), x);
    } else if (strcmp(kind, "guard_failure") == 0) {
        /* Dynamo starts the reason with the failed entry's id: that id is
         * compared as the entry's position, not as text. */
        const char *r = v[EV_TEXT] ? v[EV_TEXT] : "";
        const char *f = v[EV_FAILED], *fid = NULL;
        dr_compile_epoch(f, &fid); /* the reason names Dynamo's id, without the epoch */
        if (f && *fid && strncmp(r, fid, strlen(fid)) == 0 && r[strlen(fid)] == ':')
            r += strlen(fid) + 1;
        while (*r == ' ') r++;
        char *reason = mask_cached(m, r);
        char *failed = dr_arena_strdup(&m->arena, f ? f : "?");
        if (!reason || !failed || dr_vec_push(&c->failed_cids, failed) != 0 ||
            dr_vec_push(&c->failure_reasons, reason) != 0)
            return x->status = oom(m, x->err), 1;
    } else if (strcmp(kind, "graph_break") == 0) {
        char *file = v[EV_FILENAME] ? dr_model_relname(m, &m->arena, v[EV_FILENAME]) : NULL;
        return push_line(x, c, DR_CAT_GRAPH_BREAKS, first_line(m, v[EV_TEXT], 2000),
                         "%s at %s:%ld: ", v[EV_TYPE] ? v[EV_TYPE] : "?", file ? file : "?",
                         parse_long(v[EV_NUM]));
    } else if (strcmp(kind, "graph") == 0) {
        /* The FX code, masked, is compared through its hash; the text is
         * kept for showing where two graphs differ. */
        char *code = NULL;
        if (v[EV_BLOB]) {
            void *raw = NULL;
            size_t len = 0;
            DrError e2 = {0};
            if (dr_trace_read_blob(m->trace, parse_long(v[EV_BLOB]), 16u << 20, &raw, &len, &e2) ==
                DR_OK)
                code = dr_model_mask(m, &m->arena, raw, 0);
            else code = dr_arena_strdup(&m->arena, "<unreadable graph code>");
            free(raw);
            if (!code) return x->status = oom(m, x->err), 1;
        }
        const char *backend = backend_label(m, v[EV_BACKEND]);
        if (!backend) return x->status = oom(m, x->err), 1;
        snprintf(buf, sizeof buf, "%.200s nodes=%ld code=%016llx", backend, parse_long(v[EV_NUM]),
                 code ? (unsigned long long)dr_hash64(code, strlen(code)) : 0ull);
        if (dr_vec_push(&c->graph_code, code ? code : dr_arena_strdup(&m->arena, "")) != 0)
            return x->status = oom(m, x->err), 1;
        return push(m, c, DR_CAT_GRAPHS, dr_arena_strdup(&m->arena, buf), x);
    } else if (strcmp(kind, "speculation") == 0) {
        return push_line(x, c, DR_CAT_SPECULATION, first_line(m, v[EV_TEXT], 2000),
                         "%s: ", v[EV_ACTION] ? v[EV_ACTION] : "?");
    } else if (strcmp(kind, "side_effect") == 0) {
        return push_line(x, c, DR_CAT_SIDE_EFFECTS, first_line(m, v[EV_TEXT], 2000),
                         "%s: ", v[EV_STATUS] ? v[EV_STATUS] : "?");
    } else if (strcmp(kind, "error") == 0) {
        return push_line(x, c, DR_CAT_ERRORS, first_line(m, v[EV_TEXT], 2000),
                         "%s (%s): ", v[EV_EXC] ? v[EV_EXC] : "?",
                         parse_long(v[EV_NUM]) ? "suppressed" : "raised");
    } else if (strcmp(kind, "config") == 0) {
        return push(m, c, DR_CAT_CONFIG, dr_model_mask(m, &m->arena, v[EV_DATA], 20000), x);
    }
    return 0;
}

/* A set's repr lists its elements in hash order, which changes with the
 * hash seed: "{'b', 'a'}" is written with its elements sorted. */
static void canonical_value(DrBuf *b, const char *v) {
    size_t n = strlen(v);
    const char *open = v[0] == '{' ? v : strncmp(v, "frozenset({", 11) == 0 ? v + 10 : NULL;
    const char *close = open ? strrchr(v, '}') : NULL;
    if (!open || !close || close <= open || memchr(open, ':', (size_t)(close - open)) ||
        n > 20000) {
        dr_buf_puts(b, v);
        return;
    }
    DrStrVec items = {0};
    DrArena a = {0};
    for (const char *p = open + 1; p < close;) {
        const char *q = strstr(p, ", ");
        if (!q || q > close) q = close;
        if (dr_vec_push(&items, dr_arena_strndup(&a, p, (size_t)(q - p))) != 0) b->failed = 1;
        p = q == close ? close : q + 2;
    }
    dr_vec_sort(&items);
    dr_buf_add(b, v, (size_t)(open - v) + 1);
    for (long i = 0; i < items.n; i++) {
        if (i) dr_buf_puts(b, ", ");
        dr_buf_puts(b, items.v[i]);
    }
    dr_buf_puts(b, close);
    dr_vec_free(&items);
    dr_arena_free(&a);
}

/* Config settings that decide nothing: where debug output would go (the
 * cwd at start, so a replay or rerun elsewhere differs).  COMPARE.md. */
static const char *const NOT_DECISIONS[] = {"debug_dir_root"};

static int config_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Ctx *x = ud;
    DrModel *m = x->m;
    if (n < 2 || !v[0]) return 0;
    for (size_t i = 0; i < sizeof NOT_DECISIONS / sizeof *NOT_DECISIONS; i++)
        if (strcmp(v[0], NOT_DECISIONS[i]) == 0) return 0;
    DrBuf b = {0};
    dr_buf_printf(&b, "%.200s = ", v[0]);
    canonical_value(&b, v[1] ? v[1] : "None");
    char *s = b.failed ? NULL : dr_model_mask(m, &m->arena, b.s, 0);
    dr_buf_free(&b);
    if (!s || dr_vec_push(&m->config_start, s) != 0) return x->status = oom(m, x->err), 1;
    return 0;
}

static int file_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Ctx *x = ud;
    DrModel *m = x->m;
    if (n < 2 || !v[0] || !v[1]) return 0;
    char *rel = dr_model_relname(m, &m->arena, v[0]);
    if (!rel) return x->status = oom(m, x->err), 1;
    if (dr_map_get(&m->file_map, rel) < 0 && dr_map_put(&m->file_map, rel, parse_long(v[1])) != 0)
        return x->status = oom(m, x->err), 1;
    return 0;
}

static char *meta(DrModel *m, const char *key);

/* The program's stdout and stderr as `dynrec run` kept them (the files
 * "<stdout>", "<stderr>"), masked; absent in traces of dynrec 0.1. */
static int load_output(DrModel *m) {
    static const char *const names[2] = {"stdout", "stderr"};
    for (int i = 0; i < 2; i++) {
        char path[16], key[40];
        snprintf(path, sizeof path, "<%s>", names[i]);
        long blob = dr_map_get(&m->file_map, path);
        if (blob <= 0) continue;
        void *raw = NULL;
        size_t len = 0;
        if (dr_trace_read_blob(m->trace, blob, 4u << 20, &raw, &len, NULL) != DR_OK) continue;
        m->output[i] = dr_model_mask(m, &m->arena, raw, 0);
        m->output_kept[i] = (long)len;
        free(raw);
        if (!m->output[i]) return DR_ERR_NOMEM;
        snprintf(key, sizeof key, "output.%s_bytes", names[i]);
        char *n = meta(m, key);
        m->output_bytes[i] = n ? parse_long(n) : (long)len;
    }
    return DR_OK;
}

static char *meta(DrModel *m, const char *key) {
    char *v = NULL;
    if (dr_trace_get_meta(m->trace, key, &v, NULL) != DR_OK) return NULL;
    char *s = v ? dr_arena_strdup(&m->arena, v) : NULL;
    free(v);
    return s;
}

static int cmp_rank(const void *a, const void *b) {
    const DrCompile *x = *(DrCompile *const *)a, *y = *(DrCompile *const *)b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Orders the compiles, then names each by its place in its frame: the
 * n-th compile of the frame ("#n"), or, when several threads compiled the
 * frame, the n-th of its thread ("Thread-1 (worker) #n"). */
static int number_compiles(DrModel *m, DrError *err) {
    long outside = -1;
    for (long i = 0; i < m->ncompiles; i++) {
        DrCompile *c = &m->compiles[i];
        if (c->frame >= 0) continue;
        if (outside < 0 && (outside = frame_for(m, "", "<outside any frame>", 0, err)) < 0)
            return DR_ERR_NOMEM;
        c->frame = outside;
    }
    DrCompile **order = malloc((size_t)(m->ncompiles + 1) * sizeof *order);
    m->by_rank = malloc((size_t)(m->ncompiles + 1) * sizeof *m->by_rank);
    if (!order || !m->by_rank) {
        free(order);
        return oom(m, err);
    }
    for (long i = 0; i < m->ncompiles; i++) order[i] = &m->compiles[i];
    qsort(order, (size_t)m->ncompiles, sizeof *order, cmp_rank);
    for (long i = 0; i < m->nframes; i++) {
        m->frames[i].multi_thread = 0;
        m->frames[i].ncomp = 0;
    }
    for (long r = 0; r < m->ncompiles; r++) {
        DrCompile *c = order[r];
        c->rank = r;
        DrFrame *f = &m->frames[c->frame];
        if (f->ncomp == 0) {
            f->first_thread = c->thread;
            f->first_rank = r;
        } else if (c->thread != f->first_thread) {
            f->multi_thread = 1;
        }
        f->ncomp++;
    }
    for (long i = 0; i < m->nframes; i++) {
        DrFrame *f = &m->frames[i];
        f->comp = calloc((size_t)(f->ncomp + 1), sizeof *f->comp);
        if (!f->comp) {
            free(order);
            return oom(m, err);
        }
        f->ncomp = 0;
    }
    DrMap ords = {0}; /* "frame\x1fgroup" -> last ordinal given */
    for (long r = 0; r < m->ncompiles; r++) {
        DrCompile *c = order[r];
        DrFrame *f = &m->frames[c->frame];
        f->comp[f->ncomp++] = (long)(c - m->compiles);
        /* The group: "" for a frame one thread compiled; else the thread's
         * name (stable across runs), or its order of first appearance in
         * traces that did not record names. */
        const char *group = "";
        char tbuf[64];
        if (f->multi_thread) {
            if (c->thread_name) {
                group = c->thread_name;
            } else {
                long k = 0;
                for (long j = 0; j < f->ncomp - 1; j++) {
                    const DrCompile *o = &m->compiles[f->comp[j]];
                    int seen = 0;
                    for (long q = 0; q < j; q++)
                        if (m->compiles[f->comp[q]].thread == o->thread) seen = 1;
                    if (!seen) {
                        if (o->thread == c->thread) break;
                        k++;
                    }
                }
                snprintf(tbuf, sizeof tbuf, "thread %ld", k + 1);
                group = tbuf;
            }
        }
        /* Ordinals count within the frame's compiles of one epoch: a
         * compile after torch._dynamo.reset() is a first compile again. */
        char gkey[400];
        snprintf(gkey, sizeof gkey, "%ld\x1f%ld\x1f%.300s", c->frame, c->epoch, group);
        long ord = dr_map_get(&ords, gkey) + 1; /* -1 when new: ordinal 0 */
        if (dr_map_put(&ords, gkey, ord) != 0) {
            free(order);
            dr_map_free(&ords);
            return oom(m, err);
        }
        c->group = dr_arena_strdup(&m->arena, group);
        c->ordinal = ord;
        char label[400], ep[40] = "";
        if (c->epoch) snprintf(ep, sizeof ep, "epoch %ld ", c->epoch);
        snprintf(label, sizeof label, "%s%.300s%s#%ld", ep, group, *group ? " " : "", ord);
        c->label = dr_arena_strdup(&m->arena, label);
        if (!c->group || !c->label) {
            free(order);
            dr_map_free(&ords);
            return oom(m, err);
        }
    }
    for (long r = 0; r < m->ncompiles; r++) m->by_rank[r] = (long)(order[r] - m->compiles);
    free(order);
    dr_map_free(&ords);
    /* Guard failures name the failed entry by its label; one compiled by
     * another thread depends on the interleaving and is not compared. */
    for (long i = 0; i < m->ncompiles; i++) {
        DrCompile *c = &m->compiles[i];
        for (long k = 0; k < c->failed_cids.n; k++) {
            long fi = dr_map_get(&m->compile_map, c->failed_cids.v[k]);
            const DrCompile *fc = fi >= 0 ? &m->compiles[fi] : NULL;
            if (fc && strcmp(fc->group, c->group) != 0) {
                c->cross_thread_failures++;
                continue;
            }
            DrBuf b = {0};
            dr_buf_printf(&b, "entry %s: %s", fc ? fc->label : "?", c->failure_reasons.v[k]);
            char *s = b.failed ? NULL : dr_arena_strdup(&m->arena, b.s);
            dr_buf_free(&b);
            if (!s || dr_vec_push(&c->items[DR_CAT_GUARD_FAILURES], s) != 0) return oom(m, err);
        }
        dr_vec_sort(&c->items[DR_CAT_GUARDS]);
        dr_vec_sort(&c->items[DR_CAT_GUARD_FAILURES]);
    }
    dr_vec_sort(&m->config_start);
    return DR_OK;
}

DrModel *dr_model_load(DrTrace *t, DrError *err) {
    DrModel *m = calloc(1, sizeof *m);
    if (!m) {
        dr_error(err, DR_ERR_NOMEM, "%s: out of memory", dr_trace_path(t));
        return NULL;
    }
    m->trace = t;
    m->path = dr_arena_strdup(&m->arena, dr_trace_path(t));
    m->cwd = meta(m, "cwd");
    m->script = meta(m, "script");
    m->module = meta(m, "module");
    m->torch_version = meta(m, "torch_version");
    m->python_version = meta(m, "python_version");
    m->exit_status = meta(m, "exit_status");
    m->exit_signal = meta(m, "exit_signal");
    m->complete = dr_trace_is_complete(t);
    if (!m->path) goto nomem;
    /* The root: the script's directory, against which file names are
     * compared, so that runs in different directories match. */
    if (m->cwd && m->cwd[0] == '/' && m->script && *m->script) {
        char *abs = dr_path_normalize(&m->arena, m->cwd, m->script);
        if (!abs) goto nomem;
        char *slash = strrchr(abs, '/');
        m->root = slash && slash != abs ? dr_arena_strndup(&m->arena, abs, (size_t)(slash - abs))
                                        : dr_arena_strdup(&m->arena, "/");
        m->script_rel = dr_model_relname(m, &m->arena, m->script);
        if (!m->root || !m->script_rel) goto nomem;
    } else {
        m->root = m->cwd;
    }
    Ctx x = {m, err, DR_OK};
    if (dr_trace_query(t,
                       "SELECT filename, qualname, firstlineno, callbacks, cache_hits, compiles,"
                       " code_id FROM v_frames ORDER BY code_id",
                       frame_row, &x, err) != DR_OK ||
        x.status != DR_OK)
        goto fail;
    if (dr_trace_query(t, EVENT_SQL, event_row, &x, err) != DR_OK || x.status != DR_OK) goto fail;
    frame_displays(m);
    if (dr_trace_query(t,
                       "SELECT j.key, j.value FROM v_ev e, json_each(e.data) j"
                       " WHERE e.kind = 'config' AND e.text = 'initial' AND e.compile_id IS NULL"
                       " AND json_valid(e.data) AND json_type(e.data) = 'object'",
                       config_row, &x, err) != DR_OK ||
        x.status != DR_OK)
        goto fail;
    if (dr_trace_query(t, "SELECT path, blob_id FROM v_files ORDER BY rowid", file_row, &x, err) !=
            DR_OK ||
        x.status != DR_OK)
        goto fail;
    if (number_compiles(m, err) != DR_OK) goto fail;
    if (load_output(m) != DR_OK) goto nomem;
    return m;
nomem:
    dr_error(err, DR_ERR_NOMEM, "%s: out of memory", dr_trace_path(t));
fail:
    if (err && err->code == DR_ERR_SQL) {
        /* A file that opened but whose rows do not make sense is a bad trace. */
        err->code = DR_ERR_CORRUPT;
    }
    dr_model_free(m);
    return NULL;
}

void dr_model_free(DrModel *m) {
    if (!m) return;
    for (long i = 0; i < m->ncompiles; i++) {
        DrCompile *c = &m->compiles[i];
        for (int k = 0; k < DR_CAT__N; k++) dr_vec_free(&c->items[k]);
        dr_vec_free(&c->graph_code);
        dr_vec_free(&c->failed_cids);
        dr_vec_free(&c->failure_reasons);
    }
    for (long i = 0; i < m->nframes; i++) free(m->frames[i].comp);
    free(m->compiles);
    free(m->by_rank);
    free(m->frames);
    dr_vec_free(&m->config_start);
    dr_map_free(&m->frame_map);
    dr_map_free(&m->code_map);
    dr_map_free(&m->compile_map);
    dr_map_free(&m->file_map);
    dr_map_free(&m->mask_map);
    dr_vec_free(&m->masked);
    dr_arena_free(&m->arena);
    free(m);
}

void dr_model_counts(const DrModel *m, DrModelCounts *out) {
    memset(out, 0, sizeof *out);
    out->frames = m->nframes;
    out->compiles = m->ncompiles;
    for (long i = 0; i < m->ncompiles; i++) {
        const DrCompile *c = &m->compiles[i];
        out->guards += c->items[DR_CAT_GUARDS].n;
        out->guard_failures += c->items[DR_CAT_GUARD_FAILURES].n + c->cross_thread_failures;
        out->graph_breaks += c->items[DR_CAT_GRAPH_BREAKS].n;
        out->graphs += c->items[DR_CAT_GRAPHS].n;
        out->errors += c->items[DR_CAT_ERRORS].n;
    }
}

char *dr_model_source_line(DrModel *m, const char *rel, long line) {
    if (!rel || line <= 0) return NULL;
    long blob = dr_map_get(&m->file_map, rel);
    if (blob <= 0) return NULL;
    void *raw = NULL;
    size_t len = 0;
    if (dr_trace_read_blob(m->trace, blob, 64u << 20, &raw, &len, NULL) != DR_OK) return NULL;
    const char *p = raw, *end = (const char *)raw + len;
    for (long l = 1; l < line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    char *out = NULL;
    if (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        if (n > 300) n = 300;
        out = dr_arena_strndup(&m->arena, p, n);
    }
    free(raw);
    return out;
}
