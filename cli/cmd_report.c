/* cmd_report.c -- `dynrec report`: a Markdown report of a trace. */
#define _GNU_SOURCE 1
#include <stddef.h>

#include "cli.h"
#include "../viewer/report.h"

static const char usage[] =
    "usage: dynrec report [--top N] trace.db\n"
    "\n"
    "Prints Markdown to paste into a GitHub issue: the versions (torch, Python,\n"
    "dynrec, platform), what was run, a summary (compiles, recompiles, graph breaks,\n"
    "errors, suppressed errors), the recompiles with their failing guards for the\n"
    "N most-recompiled frames, the graph breaks with reasons and locations, the\n"
    "errors with the first lines of their tracebacks, the guards of the\n"
    "most-recompiled frame (folded in <details>) and how to reproduce with dynrec.\n"
    "Text from the trace is escaped: it cannot inject HTML or Markdown.\n"
    "\n"
    "options:\n"
    "  --top N        list the recompiles of N frames (default 5)\n"
    "  -h, --help     show this help\n"
    "\n"
    "exit status: 0; 2 for a usage error; 65 when the file is missing, not a\n"
    "dynrec trace, too new for this dynrec, or corrupt.\n";

static const DrOpt opts[] = {
    {"--top", DR_OPT_INT, offsetof(DrReportOptions, top), "a number", 1, 100000},
    {NULL, 0, 0, NULL, 0, 0},
};

static int report_main(const DrCommand *self, int argc, char **argv) {
    DrReportOptions o = {.top = 5};
    const DrArgSpec spec = {.opts = opts, .min_operands = 1, .max_operands = 1};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    DrTrace *t = dr_cli_open(self, a.operand[0]);
    if (!t) return DR_EX_DATAERR;
    DrError err = {0};
    rc = dr_report(t, &o, stdout, &err);
    dr_trace_free(t);
    if (rc != DR_OK) return dr_cli_fail(self, &err, DR_EX_DATAERR);
    return dr_cli_flush();
}
const DrCommand dr_cmd_report = {"report", "print a Markdown report of a trace for a GitHub issue",
                                 usage, report_main};
