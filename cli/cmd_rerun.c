/* cmd_rerun.c -- `dynrec rerun`: run a recorded program again under its recorded conditions. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "../replayer/rerun.h"

static const char usage[] =
    "usage: dynrec rerun [options] trace.db\n"
    "\n"
    "Runs the recorded program again under the recorded conditions (argv, cwd, the\n"
    "recorded TORCH*/PYTHON*/... environment variables, the hash seed, the seeds of\n"
    "`random` and NumPy, the Dynamo config at start), records it into a new trace,\n"
    "and compares the two as `dynrec diff` does.  VIRTUAL_ENV stays yours, so\n"
    "`VIRTUAL_ENV=/other/venv dynrec rerun t.db` re-runs on another torch.  By\n"
    "default the script at its recorded path runs: when it changed since the\n"
    "recording, the changed lines are shown first.  Not made deterministic:\n"
    "wall-clock reads, thread timing, files or network the program reads.\n"
    "\n"
    "options:\n"
    "  -o PATH          the new trace (default <trace>-rerun.db here; -o replaces)\n"
    "  --set NAME=VAL   set torch._dynamo.config.NAME (inductor.NAME for\n"
    "                   torch._inductor.config, fx.NAME for the ShapeEnv's\n"
    "                   torch.fx.experimental._config) to the Python literal VAL\n"
    "                   for the re-run, over the script's own setting; repeatable\n"
    "  --from-trace     run the sources stored in the trace, laid out in a private\n"
    "                   temporary directory, instead of the files on disk\n"
    "  --trust          run a trace you did not record here (a re-run executes\n"
    "                   its recorded command line and environment; your own\n"
    "                   traces are signed and need no --trust), and allow\n"
    "                   --from-trace to run code that came in the trace; both\n"
    "                   run confined by bubblewrap and seccomp where it can (no\n"
    "                   network, read-only but the run's folder, no $HOME)\n"
    "  --no-sandbox     run those unconfined\n"
    "  --json           print the report as one JSON object (the program's own\n"
    "                   output then goes to stderr)\n"
    "  --ignore LIST    categories not to compare, comma-separated, as for\n"
    "                   `dynrec diff` (frames, guards, output, ...)\n"
    "  -h, --help       show this help\n"
    "\n"
    "exit status: 0 identical; 1 different; 2 for a usage error or a bad --set;\n"
    "65 when the trace is unreadable or a stored file name escapes; 66 when the\n"
    "recorded script is gone (use --from-trace --trust); 69 when the trace was\n"
    "recorded with another Python minor version; 77 for a trace not recorded by\n"
    "you here, or --from-trace, without --trust.\n";

static const DrOpt opts[] = {
    {"-o", DR_OPT_STR, offsetof(DrRerunOptions, out), "a path", 0, 0},
    {"--set", DR_OPT_SET, 0, NULL, 0, 0},
    {"--from-trace", DR_OPT_FLAG, offsetof(DrRerunOptions, from_trace), NULL, 0, 0},
    {"--no-sandbox", DR_OPT_FLAG, offsetof(DrRerunOptions, no_sandbox), NULL, 0, 0},
    {"--trust", DR_OPT_FLAG, offsetof(DrRerunOptions, trust), NULL, 0, 0},
    {"--json", DR_OPT_FLAG, offsetof(DrRerunOptions, json), NULL, 0, 0},
    {"--ignore", DR_OPT_IGNORE, 0, NULL, 0, 0},
    {NULL, 0, 0, NULL, 0, 0},
};

static int rerun_main(const DrCommand *self, int argc, char **argv) {
    DrRerunOptions o = {.self = "/proc/self/exe"};
    const DrArgSpec spec = {.opts = opts, .min_operands = 1, .max_operands = 1};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    o.trace = a.operand[0];
    o.set = a.set;
    o.nset = a.nset;
    o.ignore = a.ignore;
    DrError err = {0};
    rc = dr_rerun(&o, stdout, stderr, &err);
    if (rc != DR_EX_OK && err.msg[0]) dr_cli_fail(self, &err, rc);
    return rc;
}
const DrCommand dr_cmd_rerun = {
    "rerun", "run a recorded program again under its recorded conditions, compare", usage,
    rerun_main};
