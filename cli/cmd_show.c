/* cmd_show.c -- `dynrec show`: a summary of a trace. */
#define _GNU_SOURCE 1
#include <stddef.h>

#include "cli.h"
#include "../viewer/show.h"

static const char usage[] =
    "usage: dynrec show [options] trace.db\n"
    "\n"
    "Prints a summary of a trace: the run (command, versions, duration, exit\n"
    "status, complete or cut short), what Dynamo decided (guard failures first),\n"
    "the script's own code objects with the most evaluations (Dynamo's compiled\n"
    "code named by its compile: `compiled 0/1 of f`), and the number of events\n"
    "of each kind.  Nothing in the trace is executed.\n"
    "\n"
    "options:\n"
    "  --json            print the same as one JSON object\n"
    "  --top N           list N of the script's code objects (default 10)\n"
    "  --top-library N   also list the N code objects with the most evaluations\n"
    "                    anywhere, standard library and site-packages included\n"
    "  -h, --help     show this help\n"
    "\n"
    "exit status: 0; 2 for a usage error; 65 when the file is missing, not a\n"
    "dynrec trace, too new for this dynrec, or corrupt.\n";

static const DrOpt opts[] = {
    {"--json", DR_OPT_FLAG, offsetof(DrShowOptions, json), NULL, 0, 0},
    {"--top", DR_OPT_INT, offsetof(DrShowOptions, top), "a number", 1, 100000},
    {"--top-library", DR_OPT_INT, offsetof(DrShowOptions, top_library), "a number", 1, 100000},
    {NULL, 0, 0, NULL, 0, 0},
};

static int show_main(const DrCommand *self, int argc, char **argv) {
    DrShowOptions o = {.json = 0, .top = 10};
    const DrArgSpec spec = {.opts = opts, .min_operands = 1, .max_operands = 1};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    DrTrace *t = dr_cli_open(self, a.operand[0]);
    if (!t) return DR_EX_DATAERR;
    DrError err = {0};
    rc = dr_show(t, &o, stdout, &err);
    dr_trace_free(t);
    if (rc != DR_OK) return dr_cli_fail(self, &err, DR_EX_DATAERR);
    return dr_cli_flush();
}
const DrCommand dr_cmd_show = {"show", "print a summary of a trace (--json for scripts)", usage,
                               show_main};
