/* compare.c -- compares two models and writes the report (see compare.h).
 *
 * Matching: frames by their key (file relative to the root, qualname,
 * firstlineno), compiles within a matched frame by label (group + ordinal).
 * Each difference becomes one divergence with a rank (the compile's place
 * in its trace's order) so that the report can name the first one; the
 * rules are written down once in replayer/COMPARE.md. */
#define _GNU_SOURCE 1
#include "compare.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/json.h"
#include "../schema/text.h"
#include "model.h"
#include "../schema/ident.h"

static const char *const cat_names[DR_CAT__N] = {
    [DR_CAT_FRAMES] = "frames",
    [DR_CAT_COMPILES] = "compiles",
    [DR_CAT_GUARDS] = "guards",
    [DR_CAT_GUARD_FAILURES] = "guard_failures",
    [DR_CAT_GRAPH_BREAKS] = "graph_breaks",
    [DR_CAT_GRAPHS] = "graphs",
    [DR_CAT_SPECULATION] = "speculation",
    [DR_CAT_SIDE_EFFECTS] = "side_effects",
    [DR_CAT_ERRORS] = "errors",
    [DR_CAT_CONFIG] = "config",
    [DR_CAT_EXIT] = "exit_status",
    [DR_CAT_OUTPUT] = "output",
};

const char *dr_category_name(int cat) {
    return cat >= 0 && cat < DR_CAT__N ? cat_names[cat] : NULL;
}

int dr_category_parse(const char *name) {
    for (int i = 0; i < DR_CAT__N; i++)
        if (strcmp(cat_names[i], name) == 0) return i;
    if (strcmp(name, "exit") == 0) return DR_CAT_EXIT;
    return -1;
}

/* Ranks past every compile: frame-level, config and exit divergences come
 * after the compile decisions of the same position. */
#define RANK_LATE 0x3fffffffL

typedef struct {
    int cat;
    long rank;
    long fa, fb;           /* frame index in a / b, or -1 */
    long ca, cb;           /* compile index in a / b, or -1 */
    char *what;            /* one line */
    char *side_a, *side_b; /* what each side has at the first difference */
    DrStrVec minus, plus;  /* lines only in a / only in b */
    long line;             /* a source line of the frame's file, 0 for none */
    char *line_file;       /* the file of that line (a relname) */
    long order;            /* when it was found: the tie-break of the sort */
} Div;

struct DrDiff {
    const DrModel *a, *b;
    DrCompareOptions o;
    Div *divs;
    long ndivs, cap;
    long per_cat[DR_CAT__N], plus[DR_CAT__N], minus[DR_CAT__N];
    long skipped_cross_thread;
    long compared_a; /* compiles of a that were compared */
    /* Across torch versions: the keys of the config at start that only a
     * (drift_a) or only b (drift_b) has, sorted, and both in one map; they
     * are named in a note and not compared (see COMPARE.md). */
    DrStrVec drift_a, drift_b;
    /* The keys of a config group that one side's dynrec did not record yet
     * (LATER_GROUPS) and only the other side has: in drift too, said in
     * their own note. */
    DrStrVec older_a, older_b;
    /* Keys of the GLOBAL_STATE guard's object (torch's global state) that
     * only one torch version has (2.15's cuda_matmul_precision), sorted
     * and unique: left out of the guard when the versions differ. */
    DrStrVec gs_drift;
    DrMap gs_drift_map;
    int versions_differ; /* the two torch versions are known and differ */
    DrStrVec unset;      /* o.config_unset keys, in drift too (value 2) */
    DrMap drift;
    DrArena arena;
    int failed;
};

static Div *add_div(DrDiff *d, int cat, long rank) {
    if (d->ndivs == d->cap) {
        long ncap = d->cap ? d->cap * 2 : 32;
        Div *nd = realloc(d->divs, (size_t)ncap * sizeof *nd);
        if (!nd) {
            d->failed = 1;
            return NULL;
        }
        d->divs = nd;
        d->cap = ncap;
    }
    Div *v = &d->divs[d->ndivs++];
    memset(v, 0, sizeof *v);
    v->cat = cat;
    v->rank = rank;
    v->order = d->ndivs - 1;
    v->fa = v->fb = v->ca = v->cb = -1;
    d->per_cat[cat]++;
    return v;
}

static char *fmt(DrDiff *d, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *fmt(DrDiff *d, const char *f, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    char *s = dr_arena_strdup(&d->arena, buf);
    if (!s) d->failed = 1;
    return s;
}

/* Lines of a and b (sorted) that the other lacks, as multisets. */
static void multiset_diff(DrDiff *d, Div *v, const DrStrVec *a, const DrStrVec *b) {
    DrStrVec sa = {0}, sb = {0};
    for (long i = 0; i < a->n; i++) d->failed |= dr_vec_push(&sa, a->v[i]) != 0;
    for (long i = 0; i < b->n; i++) d->failed |= dr_vec_push(&sb, b->v[i]) != 0;
    dr_vec_sort(&sa);
    dr_vec_sort(&sb);
    long i = 0, j = 0;
    while (i < sa.n || j < sb.n) {
        int c = i >= sa.n ? 1 : j >= sb.n ? -1 : strcmp(sa.v[i], sb.v[j]);
        if (c == 0) {
            i++;
            j++;
        } else if (c < 0) {
            d->failed |= dr_vec_push(&v->minus, sa.v[i++]) != 0;
        } else {
            d->failed |= dr_vec_push(&v->plus, sb.v[j++]) != 0;
        }
    }
    d->minus[v->cat] += v->minus.n;
    d->plus[v->cat] += v->plus.n;
    dr_vec_free(&sa);
    dr_vec_free(&sb);
}

static int vec_equal(const DrStrVec *a, const DrStrVec *b) {
    if (a->n != b->n) return 0;
    for (long i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0) return 0;
    return 1;
}

static const char *const cat_nouns[DR_CAT__N] = {
    [DR_CAT_GUARDS] = "guard set",
    [DR_CAT_GUARD_FAILURES] = "guard failures",
    [DR_CAT_GRAPH_BREAKS] = "graph breaks",
    [DR_CAT_GRAPHS] = "graphs",
    [DR_CAT_SPECULATION] = "speculation",
    [DR_CAT_SIDE_EFFECTS] = "side effects",
    [DR_CAT_ERRORS] = "errors",
    [DR_CAT_CONFIG] = "config changes",
};

/* Guessing a source line for a divergence: a graph break's, else a guard's
 * user location ("file.py:15 in fn"), else the frame's first line. */
static void line_from(DrDiff *d, Div *v, const DrStrVec *lines, const char *frame_file) {
    for (long i = 0; i < lines->n; i++) {
        const char *s = lines->v[i];
        const char *at = v->cat == DR_CAT_GRAPH_BREAKS ? strstr(s, " at ") : NULL;
        if (!at) continue;
        at += 4;
        const char *colon = strchr(at, ':');
        if (!colon) continue;
        long ln = strtol(colon + 1, NULL, 10);
        if (ln > 0) {
            v->line = ln;
            v->line_file = dr_arena_strndup(&d->arena, at, (size_t)(colon - at));
            return;
        }
    }
    (void)frame_file;
}

/* ---- across torch versions ---------------------------------------------------- */

/* The name of a config line "name = value" (config_row in model.c) into
 * buf. */
static const char *config_key(const char *line, char *buf, size_t size) {
    const char *eq = strstr(line, " = ");
    int n = eq ? (int)(eq - line) : (int)strlen(line);
    snprintf(buf, size, "%.*s", n, line);
    return buf;
}

/* Config groups dynrec began to record after its first traces, by the
 * prefix of their keys: the ShapeEnv's (torch.fx.experimental._config,
 * "fx.NAME", from 0.7.4) and torch.compiler.config's dynamic and unbacked
 * sources ("compiler.NAME", from 0.7.5).  A trace without a key of one was
 * written by an older dynrec, which did not look, not by a run without
 * that config. */
static const char *const LATER_GROUPS[] = {"fx.", "compiler."};

/* Whether any line of v has a key that starts with prefix. */
static int has_group(const DrStrVec *v, const char *prefix) {
    for (long i = 0; i < v->n; i++)
        if (strncmp(v->v[i], prefix, strlen(prefix)) == 0) return 1;
    return 0;
}

/* The later group (LATER_GROUPS) that key belongs to and that only the
 * other side recorded, or -1. */
static int older_group(const int has[][2], int side, const char *key) {
    for (size_t g = 0; g < sizeof LATER_GROUPS / sizeof *LATER_GROUPS; g++)
        if (strncmp(key, LATER_GROUPS[g], strlen(LATER_GROUPS[g])) == 0 && has[g][side] &&
            !has[g][!side])
            return (int)g;
    return -1;
}

/* A config key that only one side's config at start has, and so is not a
 * decision: on two torch versions, one renamed, added or removed between
 * them (2.13's _shapes_spec is 2.14's _dynamic_shapes_spec); in a group
 * the other side's (older) dynrec did not record (LATER_GROUPS).  Fills
 * d->drift_a, d->drift_b, d->older_a, d->older_b and d->drift; nothing
 * when a side has no config at start (then the whole config differs, as
 * before). */
static void find_config_drift(DrDiff *d) {
    const DrModel *A = d->a, *B = d->b;
    if (!A->config_start.n || !B->config_start.n) return;
    const DrStrVec *lines[2] = {&A->config_start, &B->config_start};
    int has[sizeof LATER_GROUPS / sizeof *LATER_GROUPS][2], any_older = 0;
    for (size_t g = 0; g < sizeof LATER_GROUPS / sizeof *LATER_GROUPS; g++) {
        for (int s = 0; s < 2; s++) has[g][s] = has_group(lines[s], LATER_GROUPS[g]);
        any_older |= has[g][0] != has[g][1];
    }
    if (!d->versions_differ && !any_older) return;
    DrMap keys[2] = {{0}, {0}};
    DrStrVec *only[2] = {&d->drift_a, &d->drift_b}, *older[2] = {&d->older_a, &d->older_b};
    char key[1024];
    for (int s = 0; s < 2; s++)
        for (long i = 0; i < lines[s]->n; i++)
            d->failed |= dr_map_put(&keys[s], config_key(lines[s]->v[i], key, sizeof key), 1) != 0;
    for (int s = 0; s < 2; s++)
        for (long i = 0; i < lines[s]->n; i++) {
            config_key(lines[s]->v[i], key, sizeof key);
            if (dr_map_get(&keys[!s], key) >= 0 || dr_map_get(&d->drift, key) >= 0) continue;
            DrStrVec *to = older_group(has, s, key) >= 0 ? older[s]
                           : d->versions_differ          ? only[s]
                                                         : NULL;
            if (!to) continue;
            char *k = dr_arena_strdup(&d->arena, key);
            if (!k || dr_vec_push(to, k) != 0 || dr_map_put(&d->drift, k, s) != 0) d->failed = 1;
        }
    dr_map_free(&keys[0]);
    dr_map_free(&keys[1]);
}

/* The lines of v (config at start) whose key both versions have, into out
 * (borrowed). */
static void config_without_drift(DrDiff *d, const DrStrVec *v, DrStrVec *out) {
    char key[1024];
    for (long i = 0; i < v->n; i++)
        if (dr_map_get(&d->drift, config_key(v->v[i], key, sizeof key)) < 0)
            d->failed |= dr_vec_push(out, v->v[i]) != 0;
}

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* Past the JSON string that starts at p (a '"'), or NULL. */
static const char *skip_string(const char *p) {
    for (p++; *p; p++) {
        if (*p == '\\') {
            if (!*++p) return NULL;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* The end of the JSON value at p (a string, or anything up to the ',' or
 * '}' that ends it outside brackets), or NULL. */
static const char *skip_value(const char *p) {
    if (*p == '"') return skip_string(p);
    int depth = 0;
    for (; *p; p++) {
        if (*p == '"') {
            if (!(p = skip_string(p))) return NULL;
            p--;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (depth-- == 0) return p;
        } else if (*p == ',' && depth == 0) {
            return p;
        }
    }
    return NULL;
}

#define GS_PREFIX "GLOBAL_STATE: ___check_global_state() against {"

/* Calls fn(key, start, end, arg) for each "key": value of the flat JSON
 * object at p ('{'), start..end the whole member, its trailing blanks left
 * out; 0, or -1 when p is not such an object. */
static int each_member(const char *p, void (*fn)(const char *, const char *, const char *, void *),
                       void *arg) {
    char key[1024];
    p = skip_ws(p);
    if (*p != '{') return -1;
    for (p = skip_ws(p + 1); *p != '}';) {
        const char *k = p, *ke = *p == '"' ? skip_string(p) : NULL;
        if (!ke || *(p = skip_ws(ke)) != ':') return -1;
        p = skip_ws(p + 1);
        const char *ve = skip_value(p), *end = ve;
        if (!ve || ve == p) return -1;
        while (end > p && (end[-1] == ' ' || end[-1] == '\n')) end--;
        snprintf(key, sizeof key, "%.*s", (int)(ke - k - 2), k + 1);
        fn(key, k, end, arg);
        p = skip_ws(ve);
        if (*p == ',') p = skip_ws(p + 1);
        else if (*p != '}') return -1;
    }
    return *skip_ws(p + 1) ? -1 : 0;
}

/* An object rewritten without the members drop() names. */
typedef struct {
    int (*drop)(void *arg, const char *key);
    void *arg;
    const char *sep; /* between the members kept */
    DrBuf b;
    long kept, dropped;
} Without;

static void keep_member(const char *key, const char *s, const char *e, void *arg) {
    Without *w = arg;
    if (w->drop(w->arg, key)) {
        w->dropped++;
        return;
    }
    if (w->kept++) dr_buf_puts(&w->b, w->sep);
    dr_buf_add(&w->b, s, (size_t)(e - s));
}

/* The flat JSON object at obj (after prefix, which starts with pre bytes
 * of s) without the members drop() names, in d's arena: s itself when it
 * drops none or does not parse (then it is compared whole); "" when none
 * is left. */
static const char *object_without(DrDiff *d, const char *s, size_t pre, const char *sep,
                                  int (*drop)(void *, const char *), void *arg) {
    Without w = {drop, arg, sep, {0}, 0, 0};
    dr_buf_add(&w.b, s, pre);
    dr_buf_puts(&w.b, "{");
    const char *r = s;
    if (each_member(s + pre, keep_member, &w) == 0 && w.dropped) {
        dr_buf_puts(&w.b, "}");
        r = !w.kept ? "" : w.b.failed ? NULL : dr_arena_strdup(&d->arena, w.b.s);
        if (!r) d->failed = 1, r = s;
    }
    dr_buf_free(&w.b);
    return r;
}

static int is_drift_key(void *d, const char *key) {
    return dr_map_get(&((DrDiff *)d)->drift, key) >= 0;
}

/* A compile's config change (the JSON object of the settings that changed,
 * '{"name": "value", ...}', as recorded) without its drift keys: s itself
 * when it has none or is not such an object (then it is compared whole),
 * NULL when nothing is left. */
static const char *config_change_without_drift(DrDiff *d, const char *s) {
    const char *r = object_without(d, s, (size_t)(skip_ws(s) - s), ", ", is_drift_key, d);
    return *r ? r : NULL;
}

/* The index of v's GLOBAL_STATE guard, or -1. */
static long global_state_index(const DrStrVec *v) {
    for (long i = 0; i < v->n; i++)
        if (strncmp(v->v[i], GS_PREFIX, sizeof GS_PREFIX - 1) == 0) return i;
    return -1;
}

static void put_key(const char *key, const char *s, const char *e, void *m) {
    (void)s, (void)e;
    dr_map_put(m, key, 1);
}

/* A global-state key the other side lacks: left out, and listed once in
 * d->gs_drift. */
typedef struct {
    DrDiff *d;
    const DrMap *other;
} GsDrop;

static int gs_one_side(void *arg, const char *key) {
    GsDrop *g = arg;
    if (dr_map_get(g->other, key) >= 0) return 0;
    if (dr_map_get(&g->d->gs_drift_map, key) < 0) {
        char *c = dr_arena_strdup(&g->d->arena, key);
        if (!c || dr_vec_push(&g->d->gs_drift, c) != 0 ||
            dr_map_put(&g->d->gs_drift_map, key, 1) != 0)
            g->d->failed = 1;
    }
    return 1;
}

/* Two traces of two torch versions: the guards of a compile on each side
 * with the GLOBAL_STATE guard's members that only one side's has left out
 * (a key torch added or removed), into ox and oy (borrowed strings, or the
 * arena's), sorted.  Nothing changes when a side has no such guard or it
 * does not parse: it is compared whole. */
static void global_state_without_drift(DrDiff *d, const DrStrVec *x, const DrStrVec *y,
                                       DrStrVec *ox, DrStrVec *oy) {
    const size_t pre = sizeof GS_PREFIX - 2; /* up to the '{' */
    long at[2] = {global_state_index(x), global_state_index(y)};
    const DrStrVec *in[2] = {x, y};
    DrStrVec *out[2] = {ox, oy};
    const char *gs[2] = {NULL, NULL};
    DrMap keys[2] = {{0}, {0}};
    if (at[0] >= 0 && at[1] >= 0 && each_member(x->v[at[0]] + pre, put_key, &keys[0]) == 0 &&
        each_member(y->v[at[1]] + pre, put_key, &keys[1]) == 0)
        for (int s = 0; s < 2; s++) {
            GsDrop g = {d, &keys[!s]};
            gs[s] = object_without(d, in[s]->v[at[s]], pre, ",", gs_one_side, &g);
            if (!*gs[s]) gs[s] = NULL; /* nothing shared: compared whole */
        }
    dr_map_free(&keys[0]);
    dr_map_free(&keys[1]);
    for (int s = 0; s < 2; s++) {
        for (long i = 0; i < in[s]->n; i++)
            d->failed |=
                dr_vec_push(out[s], (char *)(gs[s] && i == at[s] ? gs[s] : in[s]->v[i])) != 0;
        dr_vec_sort(out[s]);
    }
    dr_vec_sort(&d->gs_drift);
}

/* A compile's config changes without the drift keys, into out. */
static void config_changes_without_drift(DrDiff *d, const DrStrVec *v, DrStrVec *out) {
    for (long i = 0; i < v->n; i++) {
        const char *s = config_change_without_drift(d, v->v[i]);
        if (s) d->failed |= dr_vec_push(out, (char *)s) != 0;
    }
}

/* A replay's graphs, compared without their backend: the replay chooses
 * its backend (--backend, or eager where the recorded one cannot be made),
 * and Dynamo's graph does not depend on it.  Keeps "nodes=N code=H". */
static void graphs_without_backend(DrDiff *d, const DrStrVec *v, DrStrVec *out) {
    for (long i = 0; i < v->n; i++) {
        const char *p = strstr(v->v[i], " nodes=");
        d->failed |= dr_vec_push(out, (char *)(p ? p + 1 : v->v[i])) != 0;
    }
}

static void compare_compile(DrDiff *d, long fa, long fb, long ca, long cb) {
    const DrModel *A = d->a, *B = d->b;
    const DrCompile *x = &A->compiles[ca], *y = &B->compiles[cb];
    const DrFrame *f = &A->frames[fa];
    unsigned ign = d->o.ignore;
    int multi = A->frames[fa].multi_thread || B->frames[fb].multi_thread;
    if (!(ign & (1u << DR_CAT_COMPILES))) {
        char sa[600], sb[600];
        /* A compile known only from its parts (no compile event) has no
         * outcome or reason. */
        const char *xr = x->reason ? x->reason : "", *yr = y->reason ? y->reason : "";
        snprintf(
            sa, sizeof sa, "%s, %ld attempt%s, %ld graph%s%s%s%s", x->outcome ? x->outcome : "?",
            x->attempts, x->attempts == 1 ? "" : "s", x->graphs, x->graphs == 1 ? "" : "s",
            multi ? "" : (x->recompile ? ", recompile" : ", first compile"), *xr ? ": " : "", xr);
        snprintf(
            sb, sizeof sb, "%s, %ld attempt%s, %ld graph%s%s%s%s", y->outcome ? y->outcome : "?",
            y->attempts, y->attempts == 1 ? "" : "s", y->graphs, y->graphs == 1 ? "" : "s",
            multi ? "" : (y->recompile ? ", recompile" : ", first compile"), *yr ? ": " : "", yr);
        if (strcmp(sa, sb) != 0) {
            Div *v = add_div(d, DR_CAT_COMPILES, x->rank);
            if (!v) return;
            v->fa = fa, v->fb = fb, v->ca = ca, v->cb = cb;
            v->what = fmt(d, "compile %s of %s differs", x->label, dr_compile_name(A, x));
            v->side_a = fmt(d, "%s", sa);
            v->side_b = fmt(d, "%s", sb);
        }
    }
    DrStrVec cx = {0}, cy = {0}; /* config changes without drift keys */
    DrStrVec gx = {0}, gy = {0}; /* a replay's graphs without backends */
    DrStrVec sx = {0}, sy = {0}; /* guards without global state drift keys */
    for (int cat = DR_CAT_GUARDS; cat <= DR_CAT_CONFIG; cat++) {
        if (ign & (1u << cat)) continue;
        const DrStrVec *xa = &x->items[cat], *yb = &y->items[cat];
        if (cat == DR_CAT_CONFIG && d->drift.n) {
            config_changes_without_drift(d, xa, &cx);
            config_changes_without_drift(d, yb, &cy);
            xa = &cx, yb = &cy;
        }
        if (cat == DR_CAT_GUARDS && d->versions_differ) {
            global_state_without_drift(d, xa, yb, &sx, &sy);
            xa = &sx, yb = &sy;
        }
        if (cat == DR_CAT_GRAPHS && d->o.replay) {
            graphs_without_backend(d, xa, &gx);
            graphs_without_backend(d, yb, &gy);
            xa = &gx, yb = &gy;
        }
        if (vec_equal(xa, yb)) continue;
        Div *v = add_div(d, cat, x->rank);
        if (!v) break;
        v->fa = fa, v->fb = fb, v->ca = ca, v->cb = cb;
        multiset_diff(d, v, xa, yb);
        long i = 0;
        while (i < xa->n && i < yb->n && strcmp(xa->v[i], yb->v[i]) == 0) i++;
        if (cat == DR_CAT_GUARDS || cat == DR_CAT_GUARD_FAILURES) {
            v->what =
                fmt(d, "%s of compile %s of %s differs: %ld removed, %ld added", cat_nouns[cat],
                    x->label, dr_compile_name(d->a, x), v->minus.n, v->plus.n);
        } else if (!v->minus.n && !v->plus.n) {
            v->what = fmt(d, "%s of compile %s of %s: the same, in another order", cat_nouns[cat],
                          x->label, dr_compile_name(d->a, x));
        } else {
            v->what = fmt(d, "%s of compile %s of %s differ: %ld vs %ld", cat_nouns[cat], x->label,
                          dr_compile_name(d->a, x), xa->n, yb->n);
        }
        v->side_a = i < xa->n ? xa->v[i] : fmt(d, "(no more %s)", cat_nouns[cat]);
        v->side_b = i < yb->n ? yb->v[i] : fmt(d, "(no more %s)", cat_nouns[cat]);
        if ((cat == DR_CAT_GUARDS || cat == DR_CAT_GUARD_FAILURES) && (v->minus.n || v->plus.n)) {
            /* A set: the first line only in a, and the first only in b
             * (not two lines that merely sort to the same place). */
            v->side_a = v->minus.n ? v->minus.v[0] : fmt(d, "(none only in a)");
            v->side_b = v->plus.n ? v->plus.v[0] : fmt(d, "(none only in b)");
        }
        if (cat == DR_CAT_GRAPHS && i < xa->n && i < yb->n && i < x->graph_code.n &&
            i < y->graph_code.n) {
            /* Name the first line where the two graphs' code differs. */
            const char *p = x->graph_code.v[i], *q = y->graph_code.v[i];
            long ln = 1;
            while (*p && *p == *q) {
                if (*p == '\n') ln++;
                p++, q++;
            }
            while (p > x->graph_code.v[i] && p[-1] != '\n') p--, q--;
            v->side_a = fmt(d, "%s; code line %ld: %.200s", xa->v[i], ln, p);
            v->side_b = fmt(d, "%s; code line %ld: %.200s", yb->v[i], ln, q);
            if (v->side_a) v->side_a[strcspn(v->side_a, "\n")] = 0;
            if (v->side_b) v->side_b[strcspn(v->side_b, "\n")] = 0;
        }
        line_from(d, v, v->minus.n ? &v->minus : &v->plus, f->file);
    }
    dr_vec_free(&cx);
    dr_vec_free(&cy);
    dr_vec_free(&gx);
    dr_vec_free(&gy);
    dr_vec_free(&sx);
    dr_vec_free(&sy);
    d->skipped_cross_thread += x->cross_thread_failures + y->cross_thread_failures;
}

/* 1 when guard g is among the guards of some compile of frame f of m. */
static int guard_in_frame(const DrModel *m, long f, const char *g) {
    if (f < 0) return 0;
    for (long k = 0; k < m->frames[f].ncomp; k++) {
        const DrStrVec *v = &m->compiles[m->frames[f].comp[k]].items[DR_CAT_GUARDS];
        for (long i = 0; i < v->n; i++)
            if (strcmp(v->v[i], g) == 0) return 1;
    }
    return 0;
}

/* A compile present on one side only: its guards that no compile of the
 * same frame on the other side has (other_f, -1 for none), and its breaks. */
static void lone_compile(DrDiff *d, const DrModel *m, long fi, long ci, int in_b,
                         const DrModel *other, long other_f) {
    const DrCompile *c = &m->compiles[ci];
    Div *v = add_div(d, DR_CAT_COMPILES, c->rank);
    if (!v) return;
    if (in_b) v->fb = fi, v->cb = ci;
    else v->fa = fi, v->ca = ci;
    v->what = fmt(d, "compile %s of %s only in %s (%s, %ld guard%s)", c->label,
                  dr_compile_name(m, c), in_b ? "b" : "a", c->outcome ? c->outcome : "?",
                  c->items[DR_CAT_GUARDS].n, c->items[DR_CAT_GUARDS].n == 1 ? "" : "s");
    char *desc = fmt(d, "compile %s: %s", c->cid, c->outcome ? c->outcome : "?");
    if (in_b) v->side_b = desc, v->side_a = fmt(d, "(no such compile)");
    else v->side_a = desc, v->side_b = fmt(d, "(no such compile)");
    DrStrVec *dst = in_b ? &v->plus : &v->minus;
    for (long k = 0; k < c->items[DR_CAT_GUARDS].n; k++)
        if (!guard_in_frame(other, other_f, c->items[DR_CAT_GUARDS].v[k]))
            d->failed |= dr_vec_push(dst, c->items[DR_CAT_GUARDS].v[k]) != 0;
    for (long k = 0; k < c->items[DR_CAT_GRAPH_BREAKS].n; k++)
        d->failed |= dr_vec_push(dst, c->items[DR_CAT_GRAPH_BREAKS].v[k]) != 0;
    (in_b ? d->plus : d->minus)[DR_CAT_COMPILES]++;
}

/* A frame on one side only is one divergence (frames); what its compiles
 * hold still counts as only-in-a or only-in-b in every other category, so
 * the summary never calls a category the same when it is not. */
static void count_lone_frame(DrDiff *d, const DrModel *m, const long *comps, long n, long *side) {
    for (long k = 0; k < n; k++) {
        const DrCompile *c = &m->compiles[comps[k]];
        if (!(d->o.ignore & (1u << DR_CAT_COMPILES))) side[DR_CAT_COMPILES]++;
        for (int cat = DR_CAT_GUARDS; cat <= DR_CAT_CONFIG; cat++)
            if (!(d->o.ignore & (1u << cat))) side[cat] += c->items[cat].n;
    }
}

/* The label c is matched by: its own, except in a frame one thread
 * compiled when the other side's frame was compiled by several (mine 0,
 * other 1): then the label it would have had there, its thread's name
 * (traces without names: the first thread) and ordinal, as number_compiles
 * in model.c writes them.  NULL only when out of memory. */
static const char *match_label(DrDiff *d, const DrCompile *c, int mine, int other) {
    if (mine || !other) return c->label;
    char ep[40] = "";
    if (c->epoch) snprintf(ep, sizeof ep, "epoch %ld ", c->epoch);
    return fmt(d, "%s%.300s #%ld", ep, c->thread_name ? c->thread_name : "thread 1", c->ordinal);
}

/* The frame keyed key is left out in every epoch. */
static int skipped_frame(const DrDiff *d, const char *key) {
    for (long i = 0; i < d->o.nskip; i++)
        if (strcmp(d->o.skip_frames[i], key) == 0) return 1;
    return 0;
}

char *dr_skip_key(DrArena *a, const char *key, long epoch) {
    char ep[32];
    int el = snprintf(ep, sizeof ep, "\x1e%ld", epoch);
    size_t kl = strlen(key);
    char *k = malloc(kl + (size_t)el + 1);
    if (!k) return NULL;
    memcpy(k, key, kl);
    memcpy(k + kl, ep, (size_t)el + 1);
    char *out = dr_arena_strndup(a, k, kl + (size_t)el);
    free(k);
    return out;
}

int dr_compile_left_out(const DrCompareOptions *o, const char *key, long epoch) {
    size_t n = strlen(key);
    char ep[32];
    snprintf(ep, sizeof ep, "\x1e%ld", epoch);
    for (long i = 0; i < o->nskip; i++) {
        const char *s = o->skip_frames[i];
        if (strncmp(s, key, n) == 0 && (s[n] == '\0' || strcmp(s + n, ep) == 0)) return 1;
    }
    return 0;
}

static int skipped_compile(const DrDiff *d, const char *key, long epoch) {
    return dr_compile_left_out(&d->o, key, epoch);
}

/* How many of a frame's compiles are compared, before the epochs left
 * out. */
static long ncompared(const DrDiff *d, const DrFrame *f) {
    return d->o.max_compiles > 0 && f->ncomp > d->o.max_compiles ? d->o.max_compiles : f->ncomp;
}

/* The compiles of m's frame f (keyed key) that are compared, into out (room
 * for f->ncomp): the first ncompared, less those of the epochs left out.
 * Their number. */
static long compared_of(const DrDiff *d, const DrModel *m, const DrFrame *f, const char *key,
                        long *out) {
    long n = 0;
    for (long k = 0; k < ncompared(d, f); k++)
        if (!d->o.nskip || !skipped_compile(d, key, m->compiles[f->comp[k]].epoch))
            out[n++] = f->comp[k];
    return n;
}

/* Frame fa of a against fb of b (-1: none), through the compiles of each
 * that are compared (ka, kb). */
static void compare_frame(DrDiff *d, long fa, long fb, const long *ka, long nfa, const long *kb,
                          long nfb) {
    const DrModel *A = d->a, *B = d->b;
    unsigned ign = d->o.ignore;
    const DrFrame *f = &A->frames[fa];
    d->compared_a += nfa;
    if (fb < 0) {
        if (ign & (1u << DR_CAT_FRAMES)) return;
        Div *v = add_div(d, DR_CAT_FRAMES, f->first_rank >= 0 ? f->first_rank : RANK_LATE);
        if (!v) return;
        v->fa = fa;
        v->what = fmt(d, "frame %s (%s:%ld) only in a: %ld callbacks, %ld compiles",
                      dr_frame_name(f), f->file, f->firstlineno, f->callbacks, f->ncomp);
        d->minus[DR_CAT_FRAMES]++;
        count_lone_frame(d, A, ka, nfa, d->minus);
        return;
    }
    const DrFrame *g = &B->frames[fb];
    /* A frame Dynamo never compiled is compared by presence: how often
     * its callback ran before Dynamo marked it skipped depends on thread
     * timing. */
    int counted = f->ncomp || g->ncomp;
    if (!(ign & (1u << DR_CAT_FRAMES)) && counted &&
        (d->o.replay ? nfa != nfb
                     : (f->callbacks != g->callbacks || f->cache_hits != g->cache_hits ||
                        f->ncomp != g->ncomp))) {
        Div *v = add_div(d, DR_CAT_FRAMES, RANK_LATE);
        if (!v) return;
        v->fa = fa, v->fb = fb;
        v->what =
            fmt(d, "frame %s (%s:%ld): counts differ", dr_frame_name(f), f->file, f->firstlineno);
        v->side_a = fmt(d, "%ld callbacks, %ld cache hits, %ld compiles", f->callbacks,
                        f->cache_hits, f->ncomp);
        v->side_b = fmt(d, "%ld callbacks, %ld cache hits, %ld compiles", g->callbacks,
                        g->cache_hits, g->ncomp);
    }
    /* Compiles by label (unique within a frame), through a map of each
     * side's labels so that a frame with thousands of compiles stays
     * linear. */
    DrMap la = {0}, lb = {0};
    int ma = f->multi_thread, mb = g->multi_thread;
    const char *lab;
    for (long k = 0; k < nfa; k++)
        if ((lab = match_label(d, &A->compiles[ka[k]], ma, mb)))
            d->failed |= dr_map_put(&la, lab, ka[k]) != 0;
    for (long j = 0; j < nfb; j++)
        if ((lab = match_label(d, &B->compiles[kb[j]], mb, ma)))
            d->failed |= dr_map_put(&lb, lab, kb[j]) != 0;
    for (long k = 0; k < nfa; k++) {
        long ca = ka[k];
        lab = match_label(d, &A->compiles[ca], ma, mb);
        long cb = lab ? dr_map_get(&lb, lab) : -1;
        if (cb < 0) {
            if (!(ign & (1u << DR_CAT_COMPILES))) lone_compile(d, A, fa, ca, 0, B, fb);
        } else {
            compare_compile(d, fa, fb, ca, cb);
        }
    }
    for (long j = 0; j < nfb; j++) {
        long cb = kb[j];
        lab = match_label(d, &B->compiles[cb], mb, ma);
        if (lab && dr_map_get(&la, lab) < 0 && !(ign & (1u << DR_CAT_COMPILES)))
            lone_compile(d, B, fb, cb, 1, A, fa);
    }
    dr_map_free(&la);
    dr_map_free(&lb);
}

static void compare_frames(DrDiff *d) {
    const DrModel *A = d->a, *B = d->b;
    unsigned ign = d->o.ignore;
    char key[8192];
    for (long fa = 0; fa < A->nframes; fa++) {
        const DrFrame *f = &A->frames[fa];
        dr_frame_key(key, sizeof key, f->file, f->qualname, f->firstlineno);
        long fb = dr_map_get(&B->frame_map, key);
        if (skipped_frame(d, key)) continue;
        if (d->o.replay && f->ncomp == 0 && (fb < 0 || B->frames[fb].ncomp == 0)) continue;
        const DrFrame *g = fb >= 0 ? &B->frames[fb] : NULL;
        long *ka = malloc(((size_t)f->ncomp + 1) * sizeof *ka);
        long *kb = malloc(((size_t)(g ? g->ncomp : 0) + 1) * sizeof *kb);
        if (!ka || !kb) {
            free(ka);
            free(kb);
            d->failed = 1;
            return;
        }
        long nfa = compared_of(d, A, f, key, ka), nfb = g ? compared_of(d, B, g, key, kb) : 0;
        /* Every compile it had in the epochs compared was left out. */
        if (nfa == 0 && nfb == 0 && (f->ncomp || (g && g->ncomp))) {
            free(ka);
            free(kb);
            continue;
        }
        compare_frame(d, fa, fb, ka, nfa, kb, nfb);
        free(ka);
        free(kb);
        if (d->failed) return;
    }
    if (ign & (1u << DR_CAT_FRAMES)) return;
    for (long fb = 0; fb < B->nframes; fb++) {
        const DrFrame *g = &B->frames[fb];
        dr_frame_key(key, sizeof key, g->file, g->qualname, g->firstlineno);
        if (dr_map_get(&A->frame_map, key) >= 0 || skipped_frame(d, key)) continue;
        if (d->o.replay && g->ncomp == 0) continue;
        long *kb = malloc(((size_t)g->ncomp + 1) * sizeof *kb);
        if (!kb) {
            d->failed = 1;
            return;
        }
        long nfb = compared_of(d, B, g, key, kb);
        if (nfb == 0 && g->ncomp) {
            free(kb);
            continue;
        }
        Div *v = add_div(d, DR_CAT_FRAMES, g->first_rank >= 0 ? g->first_rank : RANK_LATE);
        if (v) {
            v->fb = fb;
            v->what = fmt(d, "frame %s (%s:%ld) only in b: %ld callbacks, %ld compiles",
                          dr_frame_name(g), g->file, g->firstlineno, g->callbacks, g->ncomp);
            d->plus[DR_CAT_FRAMES]++;
            count_lone_frame(d, B, kb, nfb, d->plus);
        }
        free(kb);
        if (!v) return;
    }
}

/* The program's stdout and stderr, where both traces kept them: masked
 * text, line by line, and the total size where a side kept only part of
 * it (when both kept all, the sizes differ only by what masking hides:
 * "in 9.67s" against "in 13.11s"). */
static void compare_output(DrDiff *d) {
    static const char *const names[2] = {"stdout", "stderr"};
    for (int i = 0; i < 2; i++) {
        const char *x = d->a->output[i], *y = d->b->output[i];
        if (!x || !y) continue;
        long bx = d->a->output_bytes[i], by = d->b->output_bytes[i];
        int whole = d->a->output_kept[i] == bx && d->b->output_kept[i] == by;
        if (strcmp(x, y) == 0 && (bx == by || whole)) continue;
        Div *v = add_div(d, DR_CAT_OUTPUT, RANK_LATE + 3 + i);
        if (!v) return;
        long line = 1;
        const char *p = x, *q = y;
        while (*p && *p == *q) {
            if (*p == '\n') line++;
            p++, q++;
        }
        while (p > x && p[-1] != '\n') p--, q--;
        v->what = fmt(d, "the program's %s differs from line %ld (%ld vs %ld bytes)", names[i],
                      line, bx, by);
        v->side_a = fmt(d, "%ld: %.*s", line, (int)strcspn(p, "\n"), p);
        v->side_b = fmt(d, "%ld: %.*s", line, (int)strcspn(q, "\n"), q);
    }
}

static const char *status_text(DrDiff *d, const DrModel *m) {
    if (m->exit_signal && strcmp(m->exit_signal, "0") != 0)
        return fmt(d, "killed by signal %s", m->exit_signal);
    if (!m->exit_status) return m->complete ? "unknown" : "unknown (the trace is incomplete)";
    return fmt(d, "exit status %s", m->exit_status);
}

static int cmp_div(const void *p, const void *q) {
    const Div *a = p, *b = q;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->cat != b->cat) return a->cat < b->cat ? -1 : 1;
    /* qsort need not be stable: found first stays first, on every libc. */
    return a->order < b->order ? -1 : a->order > b->order;
}

DrDiff *dr_compare(const DrModel *a, const DrModel *b, const DrCompareOptions *o, DrError *err) {
    DrDiff *d = calloc(1, sizeof *d);
    if (!d) {
        dr_error(err, DR_ERR_NOMEM, "out of memory comparing traces");
        return NULL;
    }
    d->a = a;
    d->b = b;
    if (o) d->o = *o;
    if (!d->o.label_a) d->o.label_a = a->path;
    if (!d->o.label_b) d->o.label_b = b->path;
    DrStrVec start_a = {0}, start_b = {0}; /* the config at start without drift keys */
    d->versions_differ =
        a->torch_version && b->torch_version && strcmp(a->torch_version, b->torch_version) != 0;
    if (!(d->o.ignore & (1u << DR_CAT_CONFIG))) find_config_drift(d);
    for (long i = 0; i < d->o.nconfig_unset; i++) {
        const char *k = d->o.config_unset[i];
        if (!k || dr_map_get(&d->drift, k) >= 0) continue;
        char *c = dr_arena_strdup(&d->arena, k);
        if (!c || dr_vec_push(&d->unset, c) != 0 || dr_map_put(&d->drift, c, 2) != 0) d->failed = 1;
    }
    config_without_drift(d, &a->config_start, &start_a);
    config_without_drift(d, &b->config_start, &start_b);
    compare_frames(d);
    if (!(d->o.ignore & (1u << DR_CAT_CONFIG)) && !vec_equal(&start_a, &start_b)) {
        Div *v = add_div(d, DR_CAT_CONFIG, RANK_LATE + 1);
        if (v) {
            multiset_diff(d, v, &start_a, &start_b);
            v->what = fmt(d, "Dynamo config at start differs: %ld settings",
                          v->minus.n > v->plus.n ? v->minus.n : v->plus.n);
        }
    }
    if (!(d->o.ignore & (1u << DR_CAT_EXIT))) {
        const char *sa = status_text(d, a), *sb = status_text(d, b);
        if (sa && sb && strcmp(sa, sb) != 0) {
            Div *v = add_div(d, DR_CAT_EXIT, RANK_LATE + 2);
            if (v) {
                v->what = fmt(d, "the program ended differently");
                v->side_a = (char *)sa;
                v->side_b = (char *)sb;
            }
        }
    }
    dr_vec_free(&start_a);
    dr_vec_free(&start_b);
    if (!(d->o.ignore & (1u << DR_CAT_OUTPUT))) compare_output(d);
    if (d->ndivs > 1) qsort(d->divs, (size_t)d->ndivs, sizeof *d->divs, cmp_div);
    if (d->failed) {
        dr_diff_free(d);
        dr_error(err, DR_ERR_NOMEM, "out of memory comparing traces");
        return NULL;
    }
    return d;
}

void dr_diff_free(DrDiff *d) {
    if (!d) return;
    for (long i = 0; i < d->ndivs; i++) {
        dr_vec_free(&d->divs[i].minus);
        dr_vec_free(&d->divs[i].plus);
    }
    free(d->divs);
    dr_vec_free(&d->drift_a);
    dr_vec_free(&d->drift_b);
    dr_vec_free(&d->older_a);
    dr_vec_free(&d->older_b);
    dr_vec_free(&d->gs_drift);
    dr_map_free(&d->gs_drift_map);
    dr_vec_free(&d->unset);
    dr_map_free(&d->drift);
    dr_arena_free(&d->arena);
    free(d);
}

int dr_diff_identical(const DrDiff *d) { return d->ndivs == 0; }

/* 1 for each compile of a with a divergence (calloc'd; NULL when out of
 * memory). */
static char *diverged_mask(const DrDiff *d) {
    char *hit = calloc((size_t)d->a->ncompiles + 1, 1);
    if (!hit) return NULL;
    for (long i = 0; i < d->ndivs; i++) {
        const Div *v = &d->divs[i];
        if (v->ca >= 0) {
            hit[v->ca] = 1;
        } else if (v->fa >= 0 && v->fb < 0) {
            const DrFrame *f = &d->a->frames[v->fa];
            char key[8192];
            dr_frame_key(key, sizeof key, f->file, f->qualname, f->firstlineno);
            for (long k = 0; k < ncompared(d, f); k++)
                if (!skipped_compile(d, key, d->a->compiles[f->comp[k]].epoch)) hit[f->comp[k]] = 1;
        }
    }
    return hit;
}

/* 1 for each compile of a that was compared (calloc'd, or NULL). */
static char *compared_mask(const DrDiff *d) {
    const DrModel *A = d->a;
    char *cmp = calloc((size_t)A->ncompiles + 1, 1);
    if (!cmp) return NULL;
    char key[8192];
    for (long fa = 0; fa < A->nframes; fa++) {
        const DrFrame *f = &A->frames[fa];
        dr_frame_key(key, sizeof key, f->file, f->qualname, f->firstlineno);
        if (skipped_frame(d, key)) continue;
        for (long k = 0; k < ncompared(d, f); k++)
            if (!skipped_compile(d, key, A->compiles[f->comp[k]].epoch)) cmp[f->comp[k]] = 1;
    }
    return cmp;
}

void dr_diff_reproduced(const DrDiff *d, long *reproduced, long *total) {
    *total = d->compared_a;
    *reproduced = d->compared_a;
    if (!d->ndivs || !d->a->ncompiles) return;
    char *hit = diverged_mask(d);
    if (!hit) {
        *reproduced = -1;
        return;
    }
    for (long c = 0; c < d->a->ncompiles; c++) *reproduced -= hit[c];
    if (*reproduced < 0) *reproduced = 0;
    free(hit);
}

/* Items of a compile's category whose canonical line starts with prefix. */
static long count_prefixed(const DrStrVec *v, const char *prefix) {
    long n = 0;
    for (long i = 0; i < v->n; i++) n += strncmp(v->v[i], prefix, strlen(prefix)) == 0;
    return n;
}

int dr_diff_print_compiles(const DrDiff *d, FILE *out, long max) {
    const DrModel *A = d->a;
    char *hit = diverged_mask(d), *cmp = compared_mask(d);
    if (!hit || !cmp) {
        free(hit);
        free(cmp);
        return -1;
    }
    long shown = 0, total = 0;
    for (long r = 0; r < A->ncompiles; r++) total += cmp[A->by_rank[r]];
    for (long r = 0; r < A->ncompiles && shown < max; r++) {
        long ci = A->by_rank[r];
        if (!cmp[ci]) continue;
        const DrCompile *c = &A->compiles[ci];
        const DrStrVec *it = c->items;
        fprintf(out, "    %-10s ", hit[ci] ? "DIVERGED" : "reproduced");
        dr_text_safe(out, c->cid ? c->cid : "?");
        fputc(' ', out);
        dr_text_safe(out, dr_compile_name(A, c));
        fputs(": ", out);
        dr_text_safe(out, c->outcome ? c->outcome : "?");
        fprintf(out,
                ", %ld guards, %ld guard failures, %ld graph breaks, %ld graphs, "
                "%ld speculation steps, side effects %ld applied %ld dropped, %ld errors\n",
                it[DR_CAT_GUARDS].n, it[DR_CAT_GUARD_FAILURES].n, it[DR_CAT_GRAPH_BREAKS].n,
                it[DR_CAT_GRAPHS].n, it[DR_CAT_SPECULATION].n,
                count_prefixed(&it[DR_CAT_SIDE_EFFECTS], "applied"),
                count_prefixed(&it[DR_CAT_SIDE_EFFECTS], "dropped"), it[DR_CAT_ERRORS].n);
        shown++;
    }
    if (shown < total) fprintf(out, "    ... and %ld more\n", total - shown);
    free(hit);
    free(cmp);
    return ferror(out) ? -1 : 0;
}
long dr_diff_count(const DrDiff *d, int cat) {
    return cat >= 0 && cat < DR_CAT__N ? d->per_cat[cat] : 0;
}

/* ---- the report -------------------------------------------------------------- */

static const DrCompile *div_compile(const DrDiff *d, const Div *v, int side_b) {
    long ci = side_b ? v->cb : v->ca;
    const DrModel *m = side_b ? d->b : d->a;
    return ci >= 0 ? &m->compiles[ci] : NULL;
}

static const DrFrame *div_frame(const DrDiff *d, const Div *v, int *side_b) {
    *side_b = v->fa < 0;
    if (v->fa >= 0) return &d->a->frames[v->fa];
    if (v->fb >= 0) return &d->b->frames[v->fb];
    return NULL;
}

/* The source line for a divergence, from the stored sources of a (or b). */
static char *div_source(const DrDiff *d, const Div *v, const char **file, long *line) {
    int sb;
    const DrFrame *f = div_frame(d, v, &sb);
    if (!f) return NULL;
    *file = v->line_file ? v->line_file : f->file;
    *line = v->line ? v->line : f->firstlineno;
    DrModel *m = (DrModel *)(sb ? d->b : d->a);
    char *s = dr_model_source_line(m, *file, *line);
    if (!s && !sb) s = dr_model_source_line((DrModel *)d->b, *file, *line);
    return s;
}

/* The --context compiles before divergence v: ranks [from, to) of *m (a's
 * order, or b's for a compile only in b).  0 when there are none. */
static int context_range(const DrDiff *d, const Div *v, const DrModel **m, long *from, long *to) {
    if (d->o.context <= 0 || (v->ca < 0 && v->cb < 0)) return 0;
    *m = v->ca >= 0 ? d->a : d->b;
    *to = div_compile(d, v, v->ca < 0)->rank;
    *from = *to > d->o.context ? *to - d->o.context : 0;
    return 1;
}

static void print_lines(FILE *out, const char *prefix, const DrStrVec *v, long max) {
    for (long i = 0; i < v->n && i < max; i++) {
        fputs(prefix, out);
        dr_text_safe(out, v->v[i]);
        fputc('\n', out);
    }
    if (v->n > max)
        fprintf(out, "%.*s... and %ld more\n", (int)strlen(prefix) - 2, prefix, v->n - max);
}

/* What m holds; of a in a replay, or where frames or compiles were left
 * out, only the compiles compared and their frames (a replay's "identical"
 * is about the compiles it made). */
static void print_counts(FILE *out, const DrDiff *d, const DrModel *m) {
    DrModelCounts c;
    char *cmp =
        m == d->a && (d->o.replay || d->o.nskip || d->o.max_compiles > 0) ? compared_mask(d) : NULL;
    dr_model_counts(m, &c);
    if (cmp) {
        memset(&c, 0, sizeof c);
        for (long fi = 0; fi < m->nframes; fi++) {
            const DrFrame *f = &m->frames[fi];
            int any = 0;
            for (long k = 0; k < f->ncomp; k++) {
                const DrCompile *x = &m->compiles[f->comp[k]];
                if (!cmp[f->comp[k]]) continue;
                any = 1;
                c.compiles++;
                c.guards += x->items[DR_CAT_GUARDS].n;
                c.graph_breaks += x->items[DR_CAT_GRAPH_BREAKS].n;
                c.errors += x->items[DR_CAT_ERRORS].n;
            }
            c.frames += any;
        }
        free(cmp);
    }
    fprintf(out, "%ld frame%s, %ld compile%s, %ld guard%s, %ld graph break%s, %ld error%s",
            c.frames, c.frames == 1 ? "" : "s", c.compiles, c.compiles == 1 ? "" : "s", c.guards,
            c.guards == 1 ? "" : "s", c.graph_breaks, c.graph_breaks == 1 ? "" : "s", c.errors,
            c.errors == 1 ? "" : "s");
}

/* Appends ", "-separated keys (at most max, then how many more) to b. */
static void put_keys(DrBuf *b, const DrStrVec *keys, long max) {
    for (long i = 0; i < keys->n && i < max; i++) {
        if (i) dr_buf_puts(b, ", ");
        dr_buf_puts(b, keys->v[i]);
    }
    if (keys->n > max) dr_buf_printf(b, ", ... and %ld more", keys->n - max);
}

/* The report's notes: what was not compared, and why; one line each, in
 * the arena *a.  Returns 0, or -1 when out of memory. */
static int diff_notes(const DrDiff *d, DrArena *a, DrStrVec *out) {
    const DrModel *m[2] = {d->a, d->b};
    const char *lab[2] = {d->o.label_a, d->o.label_b};
    const DrStrVec *only[2] = {&d->drift_a, &d->drift_b};
    DrBuf b = {0};
    int failed = 0;
#define NOTE()                                                                                     \
    do {                                                                                           \
        char *s_ = b.failed ? NULL : dr_arena_strdup(a, b.s);                                      \
        failed |= !s_ || dr_vec_push(out, s_) != 0;                                                \
        dr_buf_free(&b);                                                                           \
    } while (0)
    for (int i = 0; i < 2; i++)
        if (!m[i]->complete) {
            dr_buf_printf(&b, "%s is incomplete (the recording was cut short)", lab[i]);
            NOTE();
        }
    const char *ta = d->a->torch_version, *tb = d->b->torch_version;
    if (ta && tb && strcmp(ta, tb) != 0) {
        dr_buf_printf(&b, "torch %.100s in a, torch %.100s in b", ta, tb);
        NOTE();
    }
    if (d->gs_drift.n) {
        dr_buf_puts(&b, "global state keys of one torch version only, not compared: ");
        for (long i = 0; i < d->gs_drift.n && i < 20; i++)
            dr_buf_printf(&b, "%s%.100s", i ? ", " : "", d->gs_drift.v[i]);
        NOTE();
    }
    if (d->o.ignore) {
        dr_buf_puts(&b, "not compared:");
        for (int cat = 0, k = 0; cat < DR_CAT__N; cat++)
            if (d->o.ignore & (1u << cat))
                dr_buf_printf(&b, "%s %s", k++ ? "," : "", cat_names[cat]);
        NOTE();
    }
    for (int i = 0; i < 2; i++)
        if (only[i]->n) {
            dr_buf_printf(&b,
                          "%ld Dynamo config key%s only in %c (torch %.100s), renamed, added "
                          "or removed between the versions, not compared: ",
                          only[i]->n, only[i]->n == 1 ? "" : "s", "ab"[i], m[i] -> torch_version);
            put_keys(&b, only[i], 20);
            NOTE();
        }
    const DrStrVec *older[2] = {&d->older_a, &d->older_b};
    for (int i = 0; i < 2; i++)
        if (older[i]->n) {
            dr_buf_printf(&b,
                          "%ld config key%s only in %c, which the dynrec that wrote %c did not "
                          "record yet (the ShapeEnv's fx.*), not compared: ",
                          older[i]->n, older[i]->n == 1 ? "" : "s", "ab"[i], "ab"[!i]);
            put_keys(&b, older[i], 20);
            NOTE();
        }
    if (d->skipped_cross_thread) {
        dr_buf_printf(&b,
                      "%ld guard failure%s against another thread's cache entry not compared "
                      "(they depend on thread timing)",
                      d->skipped_cross_thread, d->skipped_cross_thread == 1 ? "" : "s");
        NOTE();
    }
#undef NOTE
    return failed ? -1 : 0;
}

static void print_notes(const DrDiff *d, FILE *out) {
    DrArena a = {0};
    DrStrVec v = {0};
    if (diff_notes(d, &a, &v) != 0) fputs("note: out of memory writing the notes\n", out);
    for (long i = 0; i < v.n; i++) {
        fputs("note: ", out);
        dr_text_safe(out, v.v[i]);
        fputc('\n', out);
    }
    dr_vec_free(&v);
    dr_arena_free(&a);
}

static void print_compile_line(FILE *out, const DrModel *m, const DrCompile *c) {
    const DrFrame *f = &m->frames[c->frame];
    fputs("    ", out);
    dr_text_safe(out, c->cid);
    fputs(" ", out);
    dr_text_safe(out, dr_compile_name(m, c));
    fputs(" (", out);
    dr_text_safe(out, f->file);
    fprintf(out, ":%ld): ", f->firstlineno);
    dr_text_safe(out, c->outcome ? c->outcome : "?");
    fprintf(out, ", %ld guards, %ld graphs, %ld breaks\n", c->items[DR_CAT_GUARDS].n,
            c->items[DR_CAT_GRAPHS].n, c->items[DR_CAT_GRAPH_BREAKS].n);
}

static void print_text(const DrDiff *d, FILE *out) {
    if (d->ndivs == 0) {
        fputs("identical: ", out);
        print_counts(out, d, d->a);
        fputs("\n", out);
        print_notes(d, out);
        return;
    }
    const Div *v = &d->divs[0];
    fprintf(out, "different: first divergence in %s\n", cat_names[v->cat]);
    fputs("  ", out);
    dr_text_safe(out, v->what);
    fputc('\n', out);
    int sb;
    const DrFrame *f = div_frame(d, v, &sb);
    if (f) {
        const DrCompile *ca = div_compile(d, v, 0), *cb = div_compile(d, v, 1);
        fputs("  frame:   ", out);
        dr_text_safe(out, dr_frame_name(f));
        if (f->display) {
            fputs(" (", out);
            dr_text_safe(out, f->qualname);
            fputc(')', out);
        }
        fputs(" at ", out);
        dr_text_safe(out, f->file);
        fprintf(out, ":%ld\n", f->firstlineno);
        if (ca || cb) {
            fputs("  compile: ", out);
            dr_text_safe(out, ca ? ca->cid : "-");
            fputs(" in a, ", out);
            dr_text_safe(out, cb ? cb->cid : "-");
            fputs(" in b\n", out);
        }
        const char *file = NULL;
        long line = 0;
        char *src = div_source(d, v, &file, &line);
        if (src) {
            fputs("  source:  ", out);
            dr_text_safe(out, file);
            fprintf(out, ":%ld: ", line);
            dr_text_safe(out, src);
            fputc('\n', out);
        }
    }
    if (v->side_a || v->side_b) {
        fputs("  a: ", out);
        dr_text_safe(out, v->side_a ? v->side_a : "-");
        fputs("\n  b: ", out);
        dr_text_safe(out, v->side_b ? v->side_b : "-");
        fputc('\n', out);
    }
    if (v->minus.n || v->plus.n) {
        const char *what = v->cat == DR_CAT_GUARDS ? "guards" : "lines";
        if (v->minus.n) fprintf(out, "  %s only in a:\n", what);
        print_lines(out, "    - ", &v->minus, 20);
        if (v->plus.n) fprintf(out, "  %s only in b:\n", what);
        print_lines(out, "    + ", &v->plus, 20);
    }
    const DrModel *cm;
    long from, to;
    if (context_range(d, v, &cm, &from, &to) && from < to) {
        fputs("  before it:\n", out);
        for (long r = from; r < to; r++) print_compile_line(out, cm, &cm->compiles[cm->by_rank[r]]);
    }
    /* Compiles on one side only, with their new guards: "which compiles
     * did this change add, and on what". */
    long lone = 0;
    for (long i = 1; i < d->ndivs && lone < 5; i++) {
        const Div *w = &d->divs[i];
        if (w->cat != DR_CAT_COMPILES || (w->ca >= 0 && w->cb >= 0)) continue;
        if (!lone++) fputs("compiles on one side only:\n", out);
        fputs("  ", out);
        dr_text_safe(out, w->what);
        fputc('\n', out);
        print_lines(out, w->cb >= 0 ? "    + " : "    - ", w->cb >= 0 ? &w->plus : &w->minus, 10);
    }
    fputs("summary:\n", out);
    for (int cat = 0; cat < DR_CAT__N; cat++) {
        if (d->o.ignore & (1u << cat)) {
            fprintf(out, "  %-15s ignored\n", cat_names[cat]);
            continue;
        }
        long drift = cat == DR_CAT_CONFIG ? d->drift_a.n + d->drift_b.n : 0;
        long older = cat == DR_CAT_CONFIG ? d->older_a.n + d->older_b.n : 0;
        if (!d->per_cat[cat] && !d->minus[cat] && !d->plus[cat]) {
            fprintf(out, "  %-15s same", cat_names[cat]);
            if (drift)
                fprintf(out, " (%ld key%s of one torch version only, not compared)", drift,
                        drift == 1 ? "" : "s");
            if (older)
                fprintf(out, " (%ld key%s an older dynrec did not record, not compared)", older,
                        older == 1 ? "" : "s");
            if (cat == DR_CAT_CONFIG && d->unset.n)
                fprintf(out, " (%ld key%s the replay does not set, not compared)", d->unset.n,
                        d->unset.n == 1 ? "" : "s");
            fputc('\n', out);
            continue;
        }
        if (d->per_cat[cat])
            fprintf(out, "  %-15s %ld difference%s", cat_names[cat], d->per_cat[cat],
                    d->per_cat[cat] == 1 ? "" : "s");
        else /* only through frames present on one side */
            fprintf(out, "  %-15s differs in frames on one side only", cat_names[cat]);
        if (d->minus[cat] || d->plus[cat])
            fprintf(out, " (%ld only in a, %ld only in b)", d->minus[cat], d->plus[cat]);
        fputc('\n', out);
        long shown = 0;
        for (long i = 0; i < d->ndivs && shown < 5; i++)
            if (d->divs[i].cat == cat) {
                fputs("    ", out);
                dr_text_safe(out, d->divs[i].what);
                fputc('\n', out);
                shown++;
            }
        if (d->per_cat[cat] > shown)
            fprintf(out, "    ... and %ld more\n", d->per_cat[cat] - shown);
    }
    fputs("a: ", out);
    dr_text_safe(out, d->o.label_a);
    fputs(": ", out);
    print_counts(out, d, d->a);
    fputs("\nb: ", out);
    dr_text_safe(out, d->o.label_b);
    fputs(": ", out);
    print_counts(out, d, d->b);
    fputc('\n', out);
    print_notes(d, out);
}

static void json_vec(FILE *out, const DrStrVec *v, long max) {
    fputc('[', out);
    for (long i = 0; i < v->n && i < max; i++) {
        if (i) fputs(", ", out);
        dr_json_string(out, v->v[i]);
    }
    fputc(']', out);
}

static void json_div(const DrDiff *d, FILE *out, const Div *v, int full) {
    fputs("{\"category\": ", out);
    dr_json_string(out, cat_names[v->cat]);
    fputs(", \"what\": ", out);
    dr_json_string(out, v->what);
    int sb;
    const DrFrame *f = div_frame(d, v, &sb);
    if (f) {
        fputs(", \"frame\": {\"file\": ", out);
        dr_json_string(out, f->file);
        fputs(", \"qualname\": ", out);
        dr_json_string(out, f->qualname);
        fputs(", \"display_name\": ", out);
        dr_json_string(out, dr_frame_name(f));
        fprintf(out, ", \"firstlineno\": %ld}", f->firstlineno);
    }
    const DrCompile *ca = div_compile(d, v, 0), *cb = div_compile(d, v, 1);
    fputs(", \"compile_a\": ", out);
    dr_json_string(out, ca ? ca->cid : NULL);
    fputs(", \"compile_b\": ", out);
    dr_json_string(out, cb ? cb->cid : NULL);
    fputs(", \"a\": ", out);
    dr_json_string(out, v->side_a);
    fputs(", \"b\": ", out);
    dr_json_string(out, v->side_b);
    fputs(", \"only_in_a\": ", out);
    json_vec(out, &v->minus, full ? 1000 : 50);
    fputs(", \"only_in_b\": ", out);
    json_vec(out, &v->plus, full ? 1000 : 50);
    if (full) {
        const char *file = NULL;
        long line = 0;
        char *src = div_source(d, v, &file, &line);
        fputs(", \"source\": ", out);
        if (file) {
            fputs("{\"file\": ", out);
            dr_json_string(out, file);
            fprintf(out, ", \"line\": %ld, \"text\": ", line);
            dr_json_string(out, src);
            fputc('}', out);
        } else {
            fputs("null", out);
        }
        fputs(", \"context\": [", out);
        const DrModel *cm;
        long from, to;
        if (context_range(d, v, &cm, &from, &to))
            for (long r = from; r < to; r++) {
                const DrCompile *c = &cm->compiles[cm->by_rank[r]];
                if (r > from) fputs(", ", out);
                fputs("{\"compile\": ", out);
                dr_json_string(out, c->cid);
                fputs(", \"qualname\": ", out);
                dr_json_string(out, cm->frames[c->frame].qualname);
                fputs(", \"outcome\": ", out);
                dr_json_string(out, c->outcome);
                fputc('}', out);
            }
        fputc(']', out);
    }
    fputc('}', out);
}

static void json_counts(FILE *out, const DrModel *m) {
    DrModelCounts c;
    dr_model_counts(m, &c);
    fprintf(out,
            "{\"frames\": %ld, \"compiles\": %ld, \"guards\": %ld, \"guard_failures\": %ld, "
            "\"graph_breaks\": %ld, \"graphs\": %ld, \"errors\": %ld}",
            c.frames, c.compiles, c.guards, c.guard_failures, c.graph_breaks, c.graphs, c.errors);
}

static void json_side(FILE *out, const char *label, const DrModel *m) {
    fputs("{\"path\": ", out);
    dr_json_string(out, label);
    fputs(", \"torch_version\": ", out);
    dr_json_string(out, m->torch_version);
    fputs(", \"python_version\": ", out);
    dr_json_string(out, m->python_version);
    fprintf(out, ", \"complete\": %s, \"counts\": ", m->complete ? "true" : "false");
    json_counts(out, m);
    fputc('}', out);
}

int dr_diff_print_json_fields(const DrDiff *d, FILE *out) {
    fprintf(out, "\"identical\": %s,\n  \"a\": ", d->ndivs ? "false" : "true");
    json_side(out, d->o.label_a, d->a);
    fputs(",\n  \"b\": ", out);
    json_side(out, d->o.label_b, d->b);
    fputs(",\n  \"ignored\": [", out);
    for (int cat = 0, k = 0; cat < DR_CAT__N; cat++)
        if (d->o.ignore & (1u << cat)) {
            if (k++) fputs(", ", out);
            dr_json_string(out, cat_names[cat]);
        }
    fprintf(out, "],\n  \"cross_thread_failures_not_compared\": %ld", d->skipped_cross_thread);
    fputs(",\n  \"config_keys_not_compared\": {\"only_in_a\": ", out);
    json_vec(out, &d->drift_a, 100000);
    fputs(", \"only_in_b\": ", out);
    json_vec(out, &d->drift_b, 100000);
    fputs(", \"not_set_by_replay\": ", out);
    json_vec(out, &d->unset, 100000);
    fputs(", \"not_recorded_by_a\": ", out);
    json_vec(out, &d->older_b, 100000);
    fputs(", \"not_recorded_by_b\": ", out);
    json_vec(out, &d->older_a, 100000);
    fputs("},\n  \"global_state_keys_not_compared\": ", out);
    json_vec(out, &d->gs_drift, 100000);
    fputs(",\n  \"notes\": ", out);
    DrArena na = {0};
    DrStrVec notes = {0};
    int nfailed = diff_notes(d, &na, &notes);
    json_vec(out, &notes, notes.n);
    dr_vec_free(&notes);
    dr_arena_free(&na);
    fputs(",\n  \"first_divergence\": ", out);
    if (d->ndivs) json_div(d, out, &d->divs[0], 1);
    else fputs("null", out);
    fputs(",\n  \"summary\": {", out);
    for (int cat = 0; cat < DR_CAT__N; cat++) {
        fprintf(out, "%s\n    ", cat ? "," : "");
        dr_json_string(out, cat_names[cat]);
        fprintf(out,
                ": {\"compared\": %s, \"differences\": %ld, \"only_in_a\": %ld, "
                "\"only_in_b\": %ld}",
                d->o.ignore & (1u << cat) ? "false" : "true", d->per_cat[cat], d->minus[cat],
                d->plus[cat]);
    }
    fputs("\n  },\n  \"divergences\": [", out);
    for (long i = 0; i < d->ndivs && i < 10000; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        json_div(d, out, &d->divs[i], 0);
    }
    fputs(d->ndivs ? "\n  ]" : "]", out);
    return ferror(out) || nfailed ? -1 : 0;
}

int dr_diff_print(const DrDiff *d, FILE *out, int json) {
    if (json) {
        fputs("{\n  ", out);
        dr_diff_print_json_fields(d, out);
        fputs("\n}\n", out);
    } else {
        print_text(d, out);
    }
    return ferror(out) ? -1 : 0;
}

/* ---- the first divergence, for one-line reports --------------------------------- */

int dr_diff_first(const DrDiff *d, DrDivergence *out) {
    memset(out, 0, sizeof *out);
    if (!d->ndivs) return 0;
    const Div *v = &d->divs[0];
    int sb;
    const DrFrame *f = div_frame(d, v, &sb);
    const DrCompile *ca = div_compile(d, v, 0), *cb = div_compile(d, v, 1);
    out->category = cat_names[v->cat];
    out->what = v->what;
    if (f) {
        out->qualname = f->qualname;
        out->file = f->file;
        out->firstlineno = f->firstlineno;
    }
    out->compile_a = ca ? ca->cid : NULL;
    out->compile_b = cb ? cb->cid : NULL;
    out->side_a = v->side_a;
    out->side_b = v->side_b;
    return 1;
}

int dr_diff_print_first_json(const DrDiff *d, FILE *out) {
    if (d->ndivs) json_div(d, out, &d->divs[0], 0);
    else fputs("null", out);
    return ferror(out) ? -1 : 0;
}

/* ---- collectives ---------------------------------------------------------------- */

/* The collectives of torch.distributed, as prefixes of the called name
 * ("all_reduce" covers all_reduce_inplace and all_reduce_coalesced). */
static const char *const collective_names[] = {
    "all_reduce", "all_gather",        "reduce_scatter", "all_to_all",     "broadcast", "reduce",
    "gather",     "scatter",           "barrier",        "send",           "recv",      "isend",
    "irecv",      "batch_isend_irecv", "wait_tensor",    "permute_tensor",
};

static int ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int is_collective_name(const char *s, size_t n) {
    for (size_t i = 0; i < sizeof collective_names / sizeof *collective_names; i++) {
        size_t k = strlen(collective_names[i]);
        if (n >= k && memcmp(s, collective_names[i], k) == 0 && (n == k || s[k] == '_')) return 1;
    }
    return 0;
}

/* The collective called at p (a "torch." before end) into op: the end of
 * the called name, or NULL when p calls none (or its name does not fit). */
static const char *collective_at(const char *p, const char *end, char *op, size_t size) {
    enum { MAXC = 8 };
    const char *comp[MAXC];
    size_t len[MAXC];
    int n = 0;
    const char *q = p;
    for (;;) {
        const char *s = q;
        while (q < end && ident_char(*q)) q++;
        if (q == s || n == MAXC) return NULL;
        comp[n] = s;
        len[n++] = (size_t)(q - s);
        if (q < end && *q == '.') q++;
        else break;
    }
    const char *r = q;
    while (r < end && *r == ' ') r++;
    if (r == end || *r != '(') return NULL;
    const char *name;
    size_t nl;
    if (n >= 4 && len[1] == 3 && memcmp(comp[1], "ops", 3) == 0 &&
        memmem(comp[2], len[2], "c10d", 4)) {
        name = comp[3], nl = len[3]; /* torch.ops._c10d_functional.all_reduce[.default]( */
    } else if (n >= 3 && len[1] == 11 && memcmp(comp[1], "distributed", 11) == 0 &&
               is_collective_name(comp[n - 1], len[n - 1])) {
        name = comp[n - 1], nl = len[n - 1]; /* torch.distributed.all_reduce( */
    } else {
        return NULL;
    }
    if (nl >= size) return NULL;
    memcpy(op, name, nl);
    op[nl] = 0;
    return q;
}

long dr_model_collectives(const DrModel *m, int (*fn)(void *arg, const char *op, const char *cid),
                          void *arg) {
    long found = 0;
    char op[128];
    for (long r = 0; r < m->ncompiles; r++) {
        const DrCompile *c = &m->compiles[m->by_rank[r]];
        for (long g = 0; g < c->graph_code.n; g++) {
            for (const char *line = c->graph_code.v[g]; line && *line;) {
                const char *eol = line + strcspn(line, "\n"), *s = line;
                while (s < eol && (*s == ' ' || *s == '\t')) s++;
                for (const char *p = s; s < eol && *s != '#' && p < eol;) {
                    p = memmem(p, (size_t)(eol - p), "torch.", 6);
                    if (!p) break;
                    const char *next = p == s || (!ident_char(p[-1]) && p[-1] != '.')
                                           ? collective_at(p, eol, op, sizeof op)
                                           : NULL;
                    if (!next) {
                        p += 6;
                        continue;
                    }
                    found++;
                    if (fn && fn(arg, op, c->cid)) return -1;
                    p = next;
                }
                line = *eol ? eol + 1 : eol;
            }
        }
    }
    return found;
}
