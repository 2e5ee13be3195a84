/* cmd_diff.c -- `dynrec diff`: compare Dynamo's decisions in two traces. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "../replayer/compare.h"
#include "../replayer/model.h"

static const char usage[] =
    "usage: dynrec diff [options] a.db b.db\n"
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
    "options:\n"
    "  --json            print the same as one JSON object\n"
    "  --ignore LIST     categories not to compare, comma-separated: frames,\n"
    "                    compiles, guards, guard_failures, graph_breaks, graphs,\n"
    "                    speculation, side_effects, errors, config, exit_status,\n"
    "                    output (what the program wrote to stdout and stderr)\n"
    "  --context N       show the N compiles before the first divergence\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 identical; 1 different; 2 for a usage error; 65 when a file is\n"
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

/* Opens a trace and reads its decisions, or says why not. */
static DrModel *load_model(const DrCommand *self, const char *path, DrTrace **t) {
    DrError err = {0};
    *t = dr_trace_open(path, &err);
    DrModel *m = *t ? dr_model_load(*t, &err) : NULL;
    if (!m) {
        dr_cli_fail(self, &err, DR_EX_DATAERR);
        dr_trace_free(*t);
        *t = NULL;
    }
    return m;
}

static int diff_main(const DrCommand *self, int argc, char **argv) {
    DiffArgs o = {0};
    const DrArgSpec spec = {.opts = opts, .min_operands = 2, .max_operands = 2,
                            .missing = "give two traces to compare",
                            .extra = "two traces, not more (extra argument %s)"};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    o.cmp.ignore = a.ignore;
    DrTrace *ta = NULL, *tb = NULL;
    DrModel *ma = load_model(self, a.operand[0], &ta);
    DrModel *mb = ma ? load_model(self, a.operand[1], &tb) : NULL;
    rc = DR_EX_DATAERR;
    if (ma && mb) {
        DrError err = {0};
        o.cmp.label_a = a.operand[0];
        o.cmp.label_b = a.operand[1];
        DrDiff *d = dr_compare(ma, mb, &o.cmp, &err);
        if (!d) {
            /* The comparison itself failed: never 1, which says "different". */
            rc = dr_cli_fail(self, &err, err.code == DR_ERR_NOMEM ? DR_EX_SOFTWARE
                                                                   : DR_EX_DATAERR);
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
const DrCommand dr_cmd_diff = {"diff", "compare Dynamo's decisions in two traces (exit 0 same, 1 different)", usage, diff_main};
