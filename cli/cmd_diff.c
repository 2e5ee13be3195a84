/* cmd_diff.c -- `dynrec diff`: compare Dynamo's decisions in two traces, or
 * in two directories of traces test by test (the pytest plugin writes one
 * trace per test, DIR/<nodeid>.db), through the one engine
 * (replayer/compare.h). */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../replayer/compare.h"
#include "../schema/json.h"
#include "../schema/text.h"

static const char usage[] =
    "usage: dynrec diff [options] a.db b.db\n"
    "       dynrec diff [options] BASELINE_DIR NEW_DIR\n"
    "\n"
    "Compares what Dynamo decided in two traces: per frame the callbacks, cache\n"
    "hits and compiles; per compile its outcome and attempts, guard set, guard\n"
    "failures, graph breaks, backend graphs, speculation steps, side effects and\n"
    "errors; then the Dynamo config, the exit status and the program's output.\n"
    "Timings, addresses and ids are never compared; frames are matched by file\n"
    "(relative to the script's directory), qualname and first line, compiles by\n"
    "their order in the frame.\n"
    "Prints `identical: ...` or the first divergence, with both sides and the\n"
    "source line, then a summary per category.  Nothing in the traces is executed.\n"
    "\n"
    "With two directories (the traces of two test runs, one *.db per test), the\n"
    "traces are matched by file name and compared pair by pair with the same\n"
    "options: one line per test that changed (`changed: NAME: ...`, the name its\n"
    "meta test.nodeid gives, else the file's), `only in DIR: NAME` for a test on\n"
    "one side, and `N tests compared, K changed`.\n"
    "\n"
    "options:\n"
    "  --json            print the same as one JSON object\n"
    "  --ignore LIST     categories not to compare, comma-separated: frames,\n"
    "                    compiles, guards, guard_failures, graph_breaks, graphs,\n"
    "                    speculation, side_effects, errors, config, exit_status,\n"
    "                    output (what the program wrote to stdout and stderr)\n"
    "  --context N       show the N compiles before the first divergence\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 identical; 1 different (with directories: a test changed or on\n"
    "one side only); 2 for a usage error; 65 when a file is\n"
    "missing, not a dynrec trace, too new for this dynrec, or corrupt.\n";

typedef struct {
    DrCompareOptions cmp;
    int json;
} DiffArgs;

static const DrOpt opts[] = {
    {"--json", DR_OPT_FLAG, offsetof(DiffArgs, json), NULL, 0, 0},
    {"--ignore", DR_OPT_IGNORE, 0, NULL, 0, 0},
    {"--context", DR_OPT_INT, offsetof(DiffArgs, cmp.context), "a number", 0, 100000},
    {NULL, 0, 0, NULL, 0, 0},
};

/* One test of diff DIR DIR: its file in either directory (NULL where
 * absent), the name to show, and what changed. */
typedef struct {
    const char *file;
    const char *name; /* meta test.nodeid (the new side's first), else file */
    int in_a, in_b;
    int changed;
    DrDivergence first; /* copied into the arena */
    char *first_json;   /* malloc'd */
} DirTest;

static const char *dup_or_null(DrArena *a, const char *s, int *failed) {
    if (!s) return NULL;
    char *c = dr_arena_strdup(a, s);
    *failed |= !c;
    return c;
}

static char *join(DrArena *a, const char *dir, const char *name) {
    size_t n = strlen(dir);
    DrBuf b = {0};
    dr_buf_printf(&b, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
    char *s = b.failed ? NULL : dr_arena_strdup(a, b.s);
    dr_buf_free(&b);
    return s;
}

/* The test's meta test.nodeid into *name (the arena's), when the trace has
 * one.  0, or the exit status after the message. */
static int read_nodeid(const DrCommand *self, DrArena *a, DrTrace *t, const char **name) {
    char *id = NULL;
    DrError err = {0};
    if (dr_trace_get_meta(t, "test.nodeid", &id, &err) != DR_OK)
        return dr_cli_fail(self, &err, DR_EX_DATAERR);
    int rc = DR_EX_OK;
    if (id && *id && !(*name = dr_arena_strdup(a, id))) rc = DR_EX_SOFTWARE;
    free(id);
    return rc;
}

/* Compares one test's two traces, or reads the name of a test on one
 * side only.  0, or the exit status after the message. */
static int diff_test(const DrCommand *self, DrArena *ar, const char *da, const char *db, DirTest *x,
                     const DrCompareOptions *cmp0) {
    char *pa = x->in_a ? join(ar, da, x->file) : NULL, *pb = x->in_b ? join(ar, db, x->file) : NULL;
    if ((x->in_a && !pa) || (x->in_b && !pb)) return DR_EX_SOFTWARE;
    if (!x->in_a || !x->in_b) {
        DrTrace *t = dr_cli_open(self, pa ? pa : pb);
        if (!t) return DR_EX_DATAERR;
        int rc = read_nodeid(self, ar, t, &x->name);
        dr_trace_free(t);
        return rc;
    }
    DrTrace *ta = NULL, *tb = NULL;
    DrModel *ma = dr_cli_load_model(self, pa, &ta);
    DrModel *mb = ma ? dr_cli_load_model(self, pb, &tb) : NULL;
    int rc = ma && mb ? read_nodeid(self, ar, ta, &x->name) : DR_EX_DATAERR;
    if (!rc) rc = read_nodeid(self, ar, tb, &x->name);
    DrDiff *d = NULL;
    if (!rc) {
        DrCompareOptions cmp = *cmp0;
        cmp.label_a = pa;
        cmp.label_b = pb;
        DrError err = {0};
        if (!(d = dr_compare(ma, mb, &cmp, &err)))
            rc = dr_cli_fail(self, &err, err.code == DR_ERR_NOMEM ? DR_EX_SOFTWARE : DR_EX_DATAERR);
    }
    if (d) {
        DrDivergence f;
        x->changed = dr_diff_first(d, &f);
        int failed = 0;
        x->first = f;
        x->first.category = dup_or_null(ar, f.category, &failed);
        x->first.what = dup_or_null(ar, f.what, &failed);
        x->first.qualname = dup_or_null(ar, f.qualname, &failed);
        x->first.file = dup_or_null(ar, f.file, &failed);
        x->first.compile_a = dup_or_null(ar, f.compile_a, &failed);
        x->first.compile_b = dup_or_null(ar, f.compile_b, &failed);
        x->first.side_a = dup_or_null(ar, f.side_a, &failed);
        x->first.side_b = dup_or_null(ar, f.side_b, &failed);
        size_t len = 0;
        FILE *mem = open_memstream(&x->first_json, &len);
        if (!mem || dr_diff_print_first_json(d, mem) != 0) failed = 1;
        if (mem && fclose(mem) != 0) failed = 1;
        if (failed || !x->first_json) rc = DR_EX_SOFTWARE;
    }
    dr_diff_free(d);
    dr_model_free(mb);
    dr_model_free(ma);
    dr_trace_free(tb);
    dr_trace_free(ta);
    return rc;
}

static void print_dirs_text(FILE *out, const char *da, const char *db, const DirTest *t, long n) {
    long compared = 0, changed = 0, only_a = 0, only_b = 0;
    const DirTest *example = NULL;
    for (long i = 0; i < n; i++) {
        const DirTest *x = &t[i];
        if (!x->in_a || !x->in_b) {
            fputs("only in ", out);
            dr_text_safe(out, x->in_a ? da : db);
            fputs(": ", out);
            dr_text_safe(out, x->name);
            fputc('\n', out);
            if (x->in_a) only_a++;
            else only_b++;
            continue;
        }
        compared++;
        if (!x->changed) continue;
        changed++;
        if (!example) example = x;
        fputs("changed: ", out);
        dr_text_safe(out, x->name);
        fputs(": ", out);
        dr_text_safe(out, x->first.what);
        fputc('\n', out);
    }
    fprintf(out, "%ld test%s compared, %ld changed", compared, compared == 1 ? "" : "s", changed);
    if (only_a || only_b)
        fprintf(out, ", %ld only in the baseline, %ld only in the new", only_a, only_b);
    fputc('\n', out);
    if (example) {
        fputs("for a test's whole report: dynrec diff ", out);
        dr_text_safe(out, da);
        fputc('/', out);
        dr_text_safe(out, example->file);
        fputc(' ', out);
        dr_text_safe(out, db);
        fputc('/', out);
        dr_text_safe(out, example->file);
        fputc('\n', out);
    }
}

static void print_dirs_json(FILE *out, const char *da, const char *db, const DirTest *t, long n,
                            int identical) {
    long compared = 0, changed = 0;
    for (long i = 0; i < n; i++) {
        compared += t[i].in_a && t[i].in_b;
        changed += t[i].changed;
    }
    fprintf(out, "{\n  \"identical\": %s,\n  \"baseline\": ", identical ? "true" : "false");
    dr_json_string(out, da);
    fputs(",\n  \"new\": ", out);
    dr_json_string(out, db);
    fprintf(out, ",\n  \"compared\": %ld,\n  \"changed\": %ld,\n  \"tests\": [", compared, changed);
    for (long i = 0; i < n; i++) {
        const DirTest *x = &t[i];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
        dr_json_string(out, x->name);
        fputs(", \"file\": ", out);
        dr_json_string(out, x->file);
        fprintf(out, ", \"status\": \"%s\", \"first_divergence\": ",
                !x->in_b     ? "only_in_baseline"
                : !x->in_a   ? "only_in_new"
                : x->changed ? "changed"
                             : "same");
        fputs(x->first_json ? x->first_json : "null", out);
        fputc('}', out);
    }
    fputs(n ? "\n  ]\n}\n" : "]\n}\n", out);
}

/* diff DIR DIR: the traces of two test runs, matched by file name. */
static int diff_dirs(const DrCommand *self, const char *da, const char *db, const DiffArgs *o) {
    DrArena ar = {0};
    DrStrVec na = {0}, nb = {0};
    DirTest *t = NULL;
    long n = 0;
    DrError err = {0};
    int rc = DR_EX_OK;
    if (dr_cli_list_traces(da, &ar, &na, &err) != DR_OK ||
        dr_cli_list_traces(db, &ar, &nb, &err) != DR_OK) {
        rc = dr_cli_fail(self, &err, err.code == DR_ERR_NOMEM ? DR_EX_SOFTWARE : DR_EX_DATAERR);
        goto done;
    }
    t = calloc((size_t)(na.n + nb.n) + 1, sizeof *t);
    if (!t) {
        rc = DR_EX_SOFTWARE;
        goto done;
    }
    for (long i = 0, k = 0; i < na.n || k < nb.n;) {
        int c = i == na.n ? 1 : k == nb.n ? -1 : strcmp(na.v[i], nb.v[k]);
        DirTest *x = &t[n++];
        x->file = c <= 0 ? na.v[i] : nb.v[k];
        x->name = x->file;
        x->in_a = c <= 0;
        x->in_b = c >= 0;
        i += c <= 0;
        k += c >= 0;
    }
    int identical = 1;
    for (long i = 0; i < n && !rc; i++) {
        rc = diff_test(self, &ar, da, db, &t[i], &o->cmp);
        identical &= t[i].in_a && t[i].in_b && !t[i].changed;
    }
    if (rc == DR_EX_SOFTWARE) fprintf(stderr, "dynrec %s: out of memory\n", self->name);
    if (!rc) {
        if (o->json) print_dirs_json(stdout, da, db, t, n, identical);
        else print_dirs_text(stdout, da, db, t, n);
        rc = identical ? DR_EX_OK : DR_EX_FAIL;
        if (fflush(stdout) != 0 || ferror(stdout)) rc = DR_EX_CANTCREAT;
    }
done:
    for (long i = 0; i < n; i++) free(t[i].first_json);
    free(t);
    dr_vec_free(&na);
    dr_vec_free(&nb);
    dr_arena_free(&ar);
    return rc;
}

static int diff_main(const DrCommand *self, int argc, char **argv) {
    DiffArgs o = {0};
    const DrArgSpec spec = {.opts = opts,
                            .min_operands = 2,
                            .max_operands = 2,
                            .missing = "give two traces to compare",
                            .extra = "two traces, not more (extra argument %s)"};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    o.cmp.ignore = a.ignore;
    int dir_a = dr_cli_is_dir(a.operand[0]), dir_b = dr_cli_is_dir(a.operand[1]);
    if (dir_a && dir_b) return diff_dirs(self, a.operand[0], a.operand[1], &o);
    if (dir_a || dir_b)
        return dr_cli_usage(self,
                            "%s is a directory and %s is not: give two traces, or two "
                            "directories of traces",
                            a.operand[dir_a ? 0 : 1], a.operand[dir_a ? 1 : 0]);
    DrTrace *ta = NULL, *tb = NULL;
    DrModel *ma = dr_cli_load_model(self, a.operand[0], &ta);
    DrModel *mb = ma ? dr_cli_load_model(self, a.operand[1], &tb) : NULL;
    rc = DR_EX_DATAERR;
    if (ma && mb) {
        DrError err = {0};
        o.cmp.label_a = a.operand[0];
        o.cmp.label_b = a.operand[1];
        DrDiff *d = dr_compare(ma, mb, &o.cmp, &err);
        if (!d) {
            /* The comparison itself failed: never 1, which says "different". */
            rc = dr_cli_fail(self, &err, err.code == DR_ERR_NOMEM ? DR_EX_SOFTWARE : DR_EX_DATAERR);
        } else {
            dr_diff_print(d, stdout, o.json);
            rc = dr_diff_identical(d) ? DR_EX_OK : DR_EX_FAIL;
            dr_diff_free(d);
            if (fflush(stdout) != 0) rc = DR_EX_CANTCREAT;
        }
    }
    dr_model_free(mb);
    dr_model_free(ma);
    dr_trace_free(tb);
    dr_trace_free(ta);
    return rc;
}
const DrCommand dr_cmd_diff = {
    "diff", "compare Dynamo's decisions in two traces (exit 0 same, 1 different)", usage,
    diff_main};
