/* cmd_run.c -- `dynrec run`: run a Python script as python would, recording a trace. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "../recorder/run.h"

static const char usage[] =
    "usage: dynrec run [options] script.py [args...]\n"
    "       dynrec run [options] -m module [args...]\n"
    "\n"
    "Runs the script exactly as `python script.py args...` would (same sys.argv,\n"
    "__main__, sys.path[0], output and exit status) with the Python of $VIRTUAL_ENV,\n"
    "or of the virtualenv dynrec was built for, and records a trace.\n"
    "\n"
    "options:\n"
    "  -o PATH        write the trace to PATH, replacing an earlier file there\n"
    "                 (default: <script>-<date>-<time>.db in the current directory,\n"
    "                 never replacing an existing file)\n"
    "  -q             do not print the trace's path to stderr at the end\n"
    "  --all-frames   count the evaluations of every Python frame of the run\n"
    "                 (default: only frames run while Dynamo is active, which\n"
    "                 costs nothing when torch.compile is not in use)\n"
    "  --rerun-of T   use trace T's hash seed, `random` and NumPy seeds and Dynamo\n"
    "                 config at start (what `dynrec rerun` does), and name T in meta\n"
    "  --set N=V      with --rerun-of: set torch._dynamo.config.N (inductor.N for\n"
    "                 torch._inductor.config) to the Python literal V, over the\n"
    "                 script's own setting\n"
    "  --capture-values SIZE\n"
    "                 keep the data of tensors up to SIZE bytes (K and M suffixes)\n"
    "                 in the frame inputs captured at each compile for `dynrec\n"
    "                 replay` (default 4K; 0 keeps shapes and strides only)\n"
    "  --replay-of T  what `dynrec replay` runs: hand trace T's captured frames to\n"
    "                 Dynamo instead of running a script (with --replay-backend,\n"
    "                 --replay-frame, --replay-compile)\n"
    "  --trace-label NAME  the name of the --replay-of or --rerun-of trace in\n"
    "                 meta (replay and rerun give their private copy of it)\n"
    "  --sandboxed MODE  bubblewrap confines this run (replay, inductor, rerun):\n"
    "                 load that mode's seccomp filter before anything else\n"
    "  -h, --help     show this help\n"
    "\n"
    "exit status: the script's own; 2 for a usage error or a missing script;\n"
    "73 when the trace cannot be created.\n";

static const DrOpt opts[] = {
    {"-o", DR_OPT_STR, offsetof(DrRunOptions, trace_path), "a path", 0, 0},
    {"-q", DR_OPT_FLAG, offsetof(DrRunOptions, quiet), NULL, 0, 0},
    {"--all-frames", DR_OPT_FLAG, offsetof(DrRunOptions, all_frames), NULL, 0, 0},
    {"--rerun-of", DR_OPT_STR, offsetof(DrRunOptions, rerun_of), "a trace", 0, 0},
    {"--set", DR_OPT_SET, 0, NULL, 0, 0},
    {"--capture-values", DR_OPT_SIZE, offsetof(DrRunOptions, capture_values), "a size", 0, 0},
    {"-m", DR_OPT_MODULE, offsetof(DrRunOptions, target), "a module name", 0, 0},
    /* Internal: how rerun and replay start the recording they compare. */
    {"--replay-of", DR_OPT_STR, offsetof(DrRunOptions, replay_of), "a value", 0, 0},
    {"--replay-backend", DR_OPT_STR, offsetof(DrRunOptions, replay_backend), "a value", 0, 0},
    {"--replay-frame", DR_OPT_STR, offsetof(DrRunOptions, replay_frame), "a value", 0, 0},
    {"--replay-compile", DR_OPT_STR, offsetof(DrRunOptions, replay_compile), "a value", 0, 0},
    {"--trace-label", DR_OPT_STR, offsetof(DrRunOptions, trace_label), "a value", 0, 0},
    {"--sandboxed", DR_OPT_STR, offsetof(DrRunOptions, sandboxed), "a value", 0, 0},
    {NULL, 0, 0, NULL, 0, 0},
};

/* dr_run's status: the script's own, or dynrec's failure, said here. */
static int run(const DrCommand *self, const DrRunOptions *o) {
    DrError err = {0};
    int status = dr_run(o, &err);
    if (err.msg[0]) dr_cli_fail(self, &err, status);
    return status;
}

static int run_main(const DrCommand *self, int argc, char **argv) {
    DrRunOptions o = {.capture_values = -1, .cmd_argc = argc + 2, .cmd_argv = argv - 2};
    const DrArgSpec spec = {
        .opts = opts, .max_operands = 1, .operands_end = 1, .missing = "no script given"};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    o.set = a.set;
    o.nset = a.nset;
    o.is_module = a.module;
    if (o.replay_of) {
        if (a.module || a.noperands)
            return dr_cli_usage(self, "--replay-of runs no script (extra argument %s)",
                                a.module ? o.target : a.operand[0]);
        o.target = "";
        o.argc = 0;
        o.argv = argv + argc;
        return run(self, &o);
    }
    if (!a.module) {
        if (!a.noperands) return dr_cli_usage(self, "no script given");
        o.target = a.operand[0];
    }
    o.argc = argc - a.rest;
    o.argv = argv + a.rest;
    return run(self, &o);
}
const DrCommand dr_cmd_run = {"run", "run a Python script as `python` would and record a trace",
                              usage, run_main};
