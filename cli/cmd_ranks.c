/* cmd_ranks.c -- `dynrec ranks`: the per-rank traces of one torchrun job.
 *
 * Each rank is compared with rank 0 (the lowest rank given, when rank 0 is
 * not) by the comparison engine (replayer/compare.h, the rules of
 * replayer/COMPARE.md), one rank at a time, so that a job of many ranks
 * holds two models at once; then the collectives each rank's graphs call
 * are set side by side, since a rank that compiled another graph calls
 * other collectives and the job hangs there.  A trace's rank is its meta
 * dist.rank, else the N of a file name ending in -rankN.db.
 *
 *   dynrec ranks traces/              every *.db in traces/
 *   dynrec ranks t-rank0.db t-rank1.db */
#define _GNU_SOURCE 1
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../schema/json.h"
#include "../schema/text.h"

static const char usage[] =
    "usage: dynrec ranks [options] DIR\n"
    "       dynrec ranks [options] T0.db T1.db ...\n"
    "\n"
    "Compares the traces of the ranks of one torchrun job: what Dynamo decided\n"
    "on each rank against rank 0, by the rules of `dynrec diff`, and the order of\n"
    "the collectives (all_reduce, all_gather_into_tensor, wait_tensor, ...) that\n"
    "each rank's graphs call.  DIR means every *.db file in it (links and other\n"
    "files are left out).  A trace's rank is its meta dist.rank, which `dynrec run`\n"
    "records under torchrun, else the N of a name ending in -rankN.db.\n"
    "Prints one line per rank, `rank N: same as rank 0` or `rank N: differs from\n"
    "rank 0: ...` with the report of `dynrec diff` below it, the collectives of\n"
    "each rank and where they first differ, then the first rank divergence: the\n"
    "lowest rank that differs, its frame and compile, and both sides.  The\n"
    "program's output is not compared (each rank prints its own).\n"
    "\n"
    "options:\n"
    "  --json            print the same as one JSON object\n"
    "  --ignore LIST     categories not to compare, as for `dynrec diff`; with\n"
    "                    graphs, the collectives are not compared either\n"
    "  --context N       show the N compiles before each rank's first divergence\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 when every rank agrees with rank 0; 1 when one differs; 2 for\n"
    "a usage error (two traces of one rank, a trace without a rank, fewer than\n"
    "two traces); 65 when a file is missing, not a dynrec trace, too new or\n"
    "corrupt.\n";

typedef struct {
    DrCompareOptions cmp;
    int json;
} RanksArgs;

static const DrOpt opts[] = {
    {"--json", DR_OPT_FLAG, offsetof(RanksArgs, json), NULL, 0, 0},
    {"--ignore", DR_OPT_IGNORE, 0, NULL, 0, 0},
    {"--context", DR_OPT_INT, offsetof(RanksArgs, cmp.context), "a number", 0, 100000},
    {NULL, 0, 0, NULL, 0, 0},
};

/* One trace of the job.  Strings are in the job's arena, but report and
 * first_json, which are malloc'd. */
typedef struct {
    const char *path;
    long rank;
    int from_meta;                    /* the rank is its meta dist.rank */
    const char *world_size, *backend; /* meta dist.world_size, dist.backend, or NULL */
    int differs;
    DrDivergence first; /* copied out of the diff */
    char *report;       /* the engine's report: text, or JSON fields */
    char *first_json;   /* the first divergence as JSON, or "null" */
    DrStrVec ops, cids; /* the collectives and their compiles */
    long coll_at;       /* where ops first differ from the base's, or -1 */
} Rank;

typedef struct {
    const DrCommand *cmd;
    DrArena a;
    Rank *r;
    long n;
    int compare_collectives;
    DrStrVec notes;
} Job;

static int nomem(const DrCommand *cmd) {
    fprintf(stderr, "dynrec %s: out of memory\n", cmd->name);
    return DR_EX_SOFTWARE;
}

/* A rank number: only digits, at most 8 of them; -1 otherwise. */
static long parse_rank(const char *s, size_t n) {
    if (n == 0 || n > 8) return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* The N of a file name ending in "-rankN.db", or -1. */
static long rank_of_name(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n < 9 || strcmp(base + n - 3, ".db") != 0) return -1;
    const char *end = base + n - 3, *p = end;
    while (p > base && p[-1] >= '0' && p[-1] <= '9') p--;
    if (p == end || p - base < 5 || strncmp(p - 5, "-rank", 5) != 0) return -1;
    return parse_rank(p, (size_t)(end - p));
}

/* Reads r's rank and its job's meta; 0, or the exit status after the
 * message. */
static int identify(Job *j, Rank *r) {
    DrTrace *t = dr_cli_open(j->cmd, r->path);
    if (!t) return DR_EX_DATAERR;
    static const char *const keys[3] = {"dist.rank", "dist.world_size", "dist.backend"};
    char *m[3] = {NULL, NULL, NULL};
    DrError err = {0};
    int rc = DR_EX_OK;
    for (int i = 0; i < 3 && !rc; i++)
        if (dr_trace_get_meta(t, keys[i], &m[i], &err) != DR_OK)
            rc = dr_cli_fail(j->cmd, &err, DR_EX_DATAERR);
    if (!rc && m[0]) {
        r->from_meta = 1;
        r->rank = parse_rank(m[0], strlen(m[0]));
        if (r->rank < 0) {
            fprintf(stderr, "dynrec ranks: %s: its meta dist.rank (%s) is not a rank number\n",
                    dr_cli_safe(&j->a, r->path), dr_cli_safe(&j->a, m[0]));
            rc = DR_EX_DATAERR;
        }
    } else if (!rc && (r->rank = rank_of_name(r->path)) < 0) {
        rc = dr_cli_usage(j->cmd,
                          "%s has no rank: no meta dist.rank, and its name does not end "
                          "in -rankN.db",
                          dr_cli_safe(&j->a, r->path));
    }
    if (!rc) {
        r->world_size = m[1] ? dr_arena_strdup(&j->a, m[1]) : NULL;
        r->backend = m[2] ? dr_arena_strdup(&j->a, m[2]) : NULL;
        if ((m[1] && !r->world_size) || (m[2] && !r->backend)) rc = nomem(j->cmd);
    }
    for (int i = 0; i < 3; i++) free(m[i]);
    dr_trace_free(t);
    return rc;
}

static int by_rank(const void *p, const void *q) {
    const Rank *a = p, *b = q;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return strcmp(a->path, b->path);
}

typedef struct {
    DrArena *a;
    Rank *r;
} CollCtx;

static int add_collective(void *arg, const char *op, const char *cid) {
    CollCtx *c = arg;
    char *o = dr_arena_strdup(c->a, op), *id = dr_arena_strdup(c->a, cid);
    return !o || !id || dr_vec_push(&c->r->ops, o) != 0 || dr_vec_push(&c->r->cids, id) != 0;
}

/* The collectives of m into r; 0, or -1 when out of memory. */
static int collectives(Job *j, const DrModel *m, Rank *r) {
    CollCtx c = {&j->a, r};
    return dr_model_collectives(m, add_collective, &c) < 0 ? -1 : 0;
}

/* The engine's report (what == 0 text, 1 the JSON fields, 2 the first
 * divergence as JSON), malloc'd; NULL when out of memory. */
static char *capture(const DrDiff *d, int what) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    int rc = what == 2   ? dr_diff_print_first_json(d, f)
             : what == 1 ? dr_diff_print_json_fields(d, f)
                         : dr_diff_print(d, f, 0);
    if (fclose(f) != 0 || rc != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static const char *dup_or_null(DrArena *a, const char *s, int *failed) {
    if (!s) return NULL;
    char *c = dr_arena_strdup(a, s);
    *failed |= !c;
    return c;
}

/* "rank N (path)", the engine's name for a side. */
static const char *side_label(Job *j, const Rank *r) {
    DrBuf b = {0};
    dr_buf_printf(&b, "rank %ld (%s)", r->rank, r->path);
    char *s = b.failed ? NULL : dr_arena_strdup(&j->a, b.s);
    dr_buf_free(&b);
    return s;
}

/* Compares rank r with the base; 0, or the exit status after the message. */
static int compare_rank(Job *j, const Rank *base, const DrModel *mbase, Rank *r,
                        const RanksArgs *o) {
    DrTrace *t = NULL;
    DrModel *m = dr_cli_load_model(j->cmd, r->path, &t);
    if (!m) return DR_EX_DATAERR;
    DrCompareOptions cmp = o->cmp;
    cmp.label_a = side_label(j, base);
    cmp.label_b = side_label(j, r);
    DrError err = {0};
    DrDiff *d = cmp.label_a && cmp.label_b ? dr_compare(mbase, m, &cmp, &err) : NULL;
    int rc = DR_EX_OK;
    if (!cmp.label_a || !cmp.label_b) {
        rc = nomem(j->cmd);
    } else if (!d) {
        /* The comparison itself failed: never 1, which says "different". */
        rc = dr_cli_fail(j->cmd, &err, err.code == DR_ERR_NOMEM ? DR_EX_SOFTWARE : DR_EX_DATAERR);
    } else {
        DrDivergence f;
        r->differs = dr_diff_first(d, &f);
        int failed = 0;
        r->first = f;
        r->first.category = dup_or_null(&j->a, f.category, &failed);
        r->first.what = dup_or_null(&j->a, f.what, &failed);
        r->first.qualname = dup_or_null(&j->a, f.qualname, &failed);
        r->first.file = dup_or_null(&j->a, f.file, &failed);
        r->first.compile_a = dup_or_null(&j->a, f.compile_a, &failed);
        r->first.compile_b = dup_or_null(&j->a, f.compile_b, &failed);
        r->first.side_a = dup_or_null(&j->a, f.side_a, &failed);
        r->first.side_b = dup_or_null(&j->a, f.side_b, &failed);
        r->report = capture(d, o->json);
        r->first_json = capture(d, 2);
        if (failed || !r->report || !r->first_json ||
            (j->compare_collectives && collectives(j, m, r) != 0))
            rc = nomem(j->cmd);
    }
    dr_diff_free(d);
    dr_model_free(m);
    dr_trace_free(t);
    return rc;
}

/* The first place where r's collectives differ from the base's, or -1. */
static long collectives_differ(const Rank *base, const Rank *r) {
    long i = 0;
    while (i < base->ops.n && i < r->ops.n && strcmp(base->ops.v[i], r->ops.v[i]) == 0) i++;
    return i == base->ops.n && i == r->ops.n ? -1 : i;
}

static void note(Job *j, int *failed, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(Job *j, int *failed, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *s = dr_arena_strdup(&j->a, buf);
    *failed |= !s || dr_vec_push(&j->notes, s) != 0;
}

/* What the report says besides the comparisons: ranks missing from the
 * job, and world sizes or backends that do not agree.  0, or -1 when out of
 * memory. */
static int job_notes(Job *j) {
    int failed = 0;
    const Rank *base = &j->r[0];
    if (base->rank != 0)
        note(j, &failed, "no trace of rank 0: every rank is compared with rank %ld", base->rank);
    long world = base->world_size ? parse_rank(base->world_size, strlen(base->world_size)) : -1;
    long last = j->r[j->n - 1].rank, expect = world > last ? world : last + 1;
    if (expect - j->n > 0) {
        DrBuf b = {0};
        long shown = 0;
        for (long want = 0, i = 0; want < expect && shown < 10; want++) {
            while (i < j->n && j->r[i].rank < want) i++;
            if (i < j->n && j->r[i].rank == want) continue;
            dr_buf_printf(&b, "%s%ld", shown++ ? ", " : "", want);
        }
        if (expect - j->n > shown) dr_buf_printf(&b, ", ... and %ld more", expect - j->n - shown);
        if (world > last)
            note(j, &failed, "%ld traces of a world of %ld ranks: no trace of rank %s", j->n, world,
                 b.failed ? "?" : b.s);
        else
            note(j, &failed, "%ld traces of ranks 0 to %ld: no trace of rank %s", j->n, last,
                 b.failed ? "?" : b.s);
        failed |= b.failed;
        dr_buf_free(&b);
    }
    for (long i = 1; i < j->n; i++) {
        const Rank *r = &j->r[i];
        if (r->world_size && base->world_size && strcmp(r->world_size, base->world_size) != 0)
            note(j, &failed, "rank %ld has world size %.40s, rank %ld has %.40s", r->rank,
                 r->world_size, base->rank, base->world_size);
        if (r->backend && base->backend && strcmp(r->backend, base->backend) != 0)
            note(j, &failed, "rank %ld has backend %.40s, rank %ld has %.40s", r->rank, r->backend,
                 base->rank, base->backend);
    }
    return failed ? -1 : 0;
}

/* The rank whose collectives differ earliest from the base's (the one the
 * job waits on first), or NULL. */
static const Rank *first_collective_difference(const Job *j) {
    const Rank *best = NULL;
    for (long i = 1; i < j->n; i++)
        if (j->r[i].coll_at >= 0 && (!best || j->r[i].coll_at < best->coll_at)) best = &j->r[i];
    return best;
}

static const Rank *first_differing(const Job *j) {
    for (long i = 1; i < j->n; i++)
        if (j->r[i].differs) return &j->r[i];
    return NULL;
}

/* Writes s, already the engine's safe output, with each line indented. */
static void put_indented(FILE *out, const char *s, const char *indent) {
    while (*s) {
        size_t n = strcspn(s, "\n");
        fputs(indent, out);
        fwrite(s, 1, n, out);
        fputc('\n', out);
        s += n + (s[n] == '\n');
    }
}

static void put_ops(FILE *out, const Rank *r, long max) {
    for (long i = 0; i < r->ops.n && i < max; i++) {
        if (i) fputs(", ", out);
        dr_text_safe(out, r->ops.v[i]);
    }
    if (r->ops.n > max) fprintf(out, ", ... and %ld more", r->ops.n - max);
    if (!r->ops.n) fputs("none", out);
}

/* "all_reduce (compile 0/1)" or "none", for the collective at i of r. */
static void put_op_at(FILE *out, const Rank *r, long i) {
    if (i >= r->ops.n) {
        fprintf(out, "no collective #%ld", i + 1);
        return;
    }
    dr_text_safe(out, r->ops.v[i]);
    fputs(" (compile ", out);
    dr_text_safe(out, r->cids.v[i]);
    fputc(')', out);
}

static void print_text(const Job *j, FILE *out) {
    const Rank *base = &j->r[0];
    fprintf(out, "ranks: %ld traces", j->n);
    if (base->world_size) {
        fputs(", world size ", out);
        dr_text_safe(out, base->world_size);
    }
    if (base->backend) {
        fputs(", backend ", out);
        dr_text_safe(out, base->backend);
    }
    fprintf(out, "; each compared with rank %ld (", base->rank);
    dr_text_safe(out, base->path);
    fputs(")\n", out);
    long ndiff = 0;
    for (long i = 1; i < j->n; i++) {
        const Rank *r = &j->r[i];
        if (!r->differs) {
            fprintf(out, "rank %ld: same as rank %ld\n", r->rank, base->rank);
            continue;
        }
        ndiff++;
        fprintf(out, "rank %ld: differs from rank %ld: ", r->rank, base->rank);
        dr_text_safe(out, r->first.what);
        fputc('\n', out);
        put_indented(out, r->report, "    ");
    }
    long total = 0;
    for (long i = 0; i < j->n; i++) total += j->r[i].ops.n;
    if (!j->compare_collectives) {
        fputs("collectives: not compared (--ignore graphs)\n", out);
    } else if (!total) {
        fputs("collectives: no collectives in the graphs\n", out);
    } else {
        fputs("collectives in the graphs, in compile order:\n", out);
        for (long i = 0; i < j->n; i++) {
            fprintf(out, "  rank %ld: ", j->r[i].rank);
            put_ops(out, &j->r[i], 50);
            fputc('\n', out);
        }
        const Rank *c = first_collective_difference(j);
        if (!c) {
            fputs("  the same on every rank\n", out);
        } else {
            fprintf(out, "  first difference: collective #%ld: rank %ld has ", c->coll_at + 1,
                    base->rank);
            put_op_at(out, base, c->coll_at);
            fprintf(out, ", rank %ld has ", c->rank);
            put_op_at(out, c, c->coll_at);
            fputc('\n', out);
        }
    }
    const Rank *f = first_differing(j);
    if (f) {
        const DrDivergence *v = &f->first;
        fprintf(out, "first rank divergence: rank %ld differs from rank %ld in %s: ", f->rank,
                base->rank, v->category);
        dr_text_safe(out, v->what);
        fputc('\n', out);
        if (v->qualname) {
            fputs("  frame:   ", out);
            dr_text_safe(out, v->qualname);
            fputs(" at ", out);
            dr_text_safe(out, v->file);
            fprintf(out, ":%ld\n", v->firstlineno);
        }
        if (v->compile_a || v->compile_b) {
            fputs("  compile: ", out);
            dr_text_safe(out, v->compile_a ? v->compile_a : "-");
            fprintf(out, " in rank %ld, ", base->rank);
            dr_text_safe(out, v->compile_b ? v->compile_b : "-");
            fprintf(out, " in rank %ld\n", f->rank);
        }
        if (v->side_a || v->side_b) {
            fprintf(out, "  rank %ld (a): ", base->rank);
            dr_text_safe(out, v->side_a ? v->side_a : "-");
            fprintf(out, "\n  rank %ld (b): ", f->rank);
            dr_text_safe(out, v->side_b ? v->side_b : "-");
            fputc('\n', out);
        }
    }
    for (long i = 0; i < j->notes.n; i++) {
        fputs("note: ", out);
        dr_text_safe(out, j->notes.v[i]);
        fputc('\n', out);
    }
    if (ndiff) fprintf(out, "%ld of %ld ranks differ from rank %ld\n", ndiff, j->n - 1, base->rank);
    else
        fprintf(out, "all %ld ranks agree with rank %ld%s\n", j->n, base->rank,
                first_collective_difference(j) ? ", but for their collectives" : "");
}

static void json_ops(FILE *out, const DrStrVec *v) {
    fputc('[', out);
    for (long i = 0; i < v->n; i++) {
        if (i) fputs(", ", out);
        dr_json_string(out, v->v[i]);
    }
    fputc(']', out);
}

static void print_json(const Job *j, int identical, FILE *out) {
    const Rank *base = &j->r[0];
    fprintf(out, "{\n  \"identical\": %s,\n  \"base_rank\": %ld,\n  \"world_size\": ",
            identical ? "true" : "false", base->rank);
    dr_json_string(out, base->world_size);
    fputs(",\n  \"backend\": ", out);
    dr_json_string(out, base->backend);
    fputs(",\n  \"ranks\": [", out);
    for (long i = 0; i < j->n; i++) {
        const Rank *r = &j->r[i];
        fprintf(out, "%s\n    {\"rank\": %ld, \"path\": ", i ? "," : "", r->rank);
        dr_json_string(out, r->path);
        fprintf(out, ", \"rank_from\": \"%s\", \"world_size\": ", r->from_meta ? "meta" : "name");
        dr_json_string(out, r->world_size);
        fputs(", \"backend\": ", out);
        dr_json_string(out, r->backend);
        fprintf(out, ", \"same\": %s, \"collectives\": ", r->differs ? "false" : "true");
        json_ops(out, &r->ops);
        fputs(", \"collective_compiles\": ", out);
        json_ops(out, &r->cids);
        fputs(", \"first_divergence\": ", out);
        fputs(i ? r->first_json : "null", out);
        fputs(", \"diff\": ", out);
        if (i) {
            fputs("{", out);
            fputs(r->report, out);
            fputs("}", out);
        } else {
            fputs("null", out);
        }
        fputc('}', out);
    }
    fprintf(out, "\n  ],\n  \"collectives\": {\"compared\": %s, \"same\": ",
            j->compare_collectives ? "true" : "false");
    const Rank *c = first_collective_difference(j);
    fputs(c ? "false" : "true", out);
    fputs(", \"first_difference\": ", out);
    if (c) {
        long at = c->coll_at;
        fprintf(out, "{\"rank\": %ld, \"index\": %ld, \"base\": ", c->rank, at);
        dr_json_string(out, at < base->ops.n ? base->ops.v[at] : NULL);
        fputs(", \"base_compile\": ", out);
        dr_json_string(out, at < base->cids.n ? base->cids.v[at] : NULL);
        fputs(", \"other\": ", out);
        dr_json_string(out, at < c->ops.n ? c->ops.v[at] : NULL);
        fputs(", \"other_compile\": ", out);
        dr_json_string(out, at < c->cids.n ? c->cids.v[at] : NULL);
        fputc('}', out);
    } else {
        fputs("null", out);
    }
    fputs("},\n  \"first_rank_divergence\": ", out);
    const Rank *f = first_differing(j);
    if (f) {
        fprintf(out, "{\"rank\": %ld, \"divergence\": ", f->rank);
        fputs(f->first_json, out);
        fputc('}', out);
    } else {
        fputs("null", out);
    }
    fputs(",\n  \"notes\": ", out);
    json_ops(out, &j->notes);
    fputs("\n}\n", out);
}

/* The traces named on the command line, or DIR's: into j.  0, or the exit
 * status after the message. */
static int gather(Job *j, const DrArgs *a, DrStrVec *paths) {
    if (a->noperands == 1 && dr_cli_is_dir(a->operands[0])) {
        const char *dir = a->operands[0];
        DrStrVec names = {0};
        DrError err = {0};
        int rc = DR_EX_OK;
        if (dr_cli_list_traces(dir, &j->a, &names, &err) != DR_OK) {
            rc = dr_cli_fail(j->cmd, &err,
                             err.code == DR_ERR_NOMEM ? DR_EX_SOFTWARE : DR_EX_DATAERR);
        } else if (!names.n) {
            rc = dr_cli_usage(j->cmd, "%s holds no *.db trace", dr_cli_safe(&j->a, dir));
        }
        size_t dl = strlen(dir);
        for (long i = 0; i < names.n && !rc; i++) {
            DrBuf b = {0};
            dr_buf_printf(&b, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", names.v[i]);
            char *p = b.failed ? NULL : dr_arena_strdup(&j->a, b.s);
            dr_buf_free(&b);
            if (!p || dr_vec_push(paths, p) != 0) rc = nomem(j->cmd);
        }
        dr_vec_free(&names);
        return rc;
    }
    for (int i = 0; i < a->noperands; i++) {
        if (dr_cli_is_dir(a->operands[i]))
            return dr_cli_usage(j->cmd, "%s is a directory: give one directory, or traces",
                                dr_cli_safe(&j->a, a->operands[i]));
        if (dr_vec_push(paths, a->operands[i]) != 0) return nomem(j->cmd);
    }
    return DR_EX_OK;
}

static int ranks_main(const DrCommand *self, int argc, char **argv) {
    RanksArgs o = {0};
    const DrArgSpec spec = {.opts = opts,
                            .min_operands = 1,
                            .max_operands = -1,
                            .missing = "give the directory of a job's traces, or its traces"};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    /* Each rank prints its own: the output is never the same. */
    o.cmp.ignore = a.ignore | (1u << DR_CAT_OUTPUT);
    Job j = {.cmd = self, .compare_collectives = !(o.cmp.ignore & (1u << DR_CAT_GRAPHS))};
    DrStrVec paths = {0};
    DrTrace *tb = NULL;
    DrModel *mb = NULL;
    int identical = 1;
    if ((rc = gather(&j, &a, &paths))) goto done;
    j.r = calloc((size_t)paths.n, sizeof *j.r);
    if (!j.r) {
        rc = nomem(self);
        goto done;
    }
    for (long i = 0; i < paths.n; i++) {
        j.r[j.n].path = paths.v[i];
        j.r[j.n].coll_at = -1;
        j.n++;
        if ((rc = identify(&j, &j.r[i]))) goto done;
    }
    if (j.n < 2) {
        rc = dr_cli_usage(self, "one trace (%s, rank %ld): nothing to compare it with",
                          dr_cli_safe(&j.a, j.r[0].path), j.r[0].rank);
        goto done;
    }
    qsort(j.r, (size_t)j.n, sizeof *j.r, by_rank);
    for (long i = 1; i < j.n; i++)
        if (j.r[i].rank == j.r[i - 1].rank) {
            rc = dr_cli_usage(self, "%s and %s are both rank %ld",
                              dr_cli_safe(&j.a, j.r[i - 1].path), dr_cli_safe(&j.a, j.r[i].path),
                              j.r[i].rank);
            goto done;
        }
    if (!(mb = dr_cli_load_model(self, j.r[0].path, &tb))) {
        rc = DR_EX_DATAERR;
        goto done;
    }
    if (j.compare_collectives && collectives(&j, mb, &j.r[0]) != 0) {
        rc = nomem(self);
        goto done;
    }
    for (long i = 1; i < j.n; i++) {
        if ((rc = compare_rank(&j, &j.r[0], mb, &j.r[i], &o))) goto done;
        if (j.compare_collectives) j.r[i].coll_at = collectives_differ(&j.r[0], &j.r[i]);
        identical &= !j.r[i].differs && j.r[i].coll_at < 0;
    }
    if (job_notes(&j) != 0) {
        rc = nomem(self);
        goto done;
    }
    if (o.json) print_json(&j, identical, stdout);
    else print_text(&j, stdout);
    rc = identical ? DR_EX_OK : DR_EX_FAIL;
    if (fflush(stdout) != 0 || ferror(stdout)) rc = DR_EX_CANTCREAT;
done:
    dr_model_free(mb);
    dr_trace_free(tb);
    for (long i = 0; i < j.n; i++) {
        free(j.r[i].report);
        free(j.r[i].first_json);
        dr_vec_free(&j.r[i].ops);
        dr_vec_free(&j.r[i].cids);
    }
    free(j.r);
    dr_vec_free(&j.notes);
    dr_vec_free(&paths);
    dr_arena_free(&j.a);
    return rc;
}
const DrCommand dr_cmd_ranks = {
    "ranks", "compare the per-rank traces of one torchrun job (exit 0 same, 1 different)", usage,
    ranks_main};
