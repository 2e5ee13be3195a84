/* cmd_replay.c -- `dynrec replay`: re-execute Dynamo's tracing of every recorded frame. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "../replayer/replay.h"

static const char usage[] =
    "usage: dynrec replay [options] trace.db\n"
    "\n"
    "Re-executes Dynamo's tracing of every compile in the trace, from the trace\n"
    "alone: the inputs each compiled frame started with were captured by `dynrec\n"
    "run` (tensors as metadata plus small data, Python values, modules, functions\n"
    "by reference).  A fresh interpreter restores the recorded Dynamo config,\n"
    "rebuilds the user's functions and classes from the sources in the trace\n"
    "(definitions only: imports, def, class, constants; never the main program),\n"
    "rebuilds each frame's inputs and hands the frames to Dynamo in recorded\n"
    "order, so recompiles, guard failures, automatic dynamic shapes and the\n"
    "recompile limit come out as they did.  Only tracing runs: the compiled code\n"
    "never runs on the rebuilt inputs.  The replay is recorded into a new trace\n"
    "and compared with the recording as `dynrec diff` does (callbacks, cache\n"
    "hits, exit status and output are not compared).\n"
    "\n"
    "options:\n"
    "  -o PATH            the replay's trace (default <trace>-replay.db here)\n"
    "  --frame QUALNAME   only that frame (and its own resume functions): its qualname\n"
    "                     (T.test_x.<locals>.fn), its last part, or FILE:QUALNAME\n"
    "  --compile ID       only the frame of compile ID (\"0/2\"), up to that compile\n"
    "  --backend B        recorded (default: the recorded backend when it is one of\n"
    "                     torch's or a function in the trace's sources), eager, or\n"
    "                     any registered backend name\n"
    "  --set NAME=VAL     set torch._dynamo.config.NAME (inductor.NAME, fx.NAME for\n"
    "                     torch.fx.experimental._config) to the Python literal VAL\n"
    "                     for the replay (what-if); repeatable\n"
    "  --no-sandbox       run the replay unconfined (by default bubblewrap and a\n"
    "                     seccomp filter confine it: no network, a read-only view of\n"
    "                     the interpreter, the venv and the trace, no $HOME, a private\n"
    "                     /tmp, no exec; the output trace is the one thing written)\n"
    "  --trust            use code stored compiled in the trace (lambdas the sources\n"
    "                     lack) and import what the values name; the replay stays\n"
    "                     confined.  Unconfined (--no-sandbox, or no bubblewrap\n"
    "                     here), it also lets a replay run when the trace's sources\n"
    "                     are not on disk at their recorded paths with their text\n"
    "  --json             print the report as one JSON object\n"
    "  --ignore LIST      categories not to compare, comma-separated, as for\n"
    "                     `dynrec diff` (guards, graphs, config, ...; exit_status\n"
    "                     and output are never compared here)\n"
    "  -h, --help         show this help\n"
    "\n"
    "Set DYNREC_REPLAY_MAX_BYTES to allow tensors over 1 GiB.\n"
    "\n"
    "exit status: 0 every compile reproduced; 1 a divergence; 3 identical but some\n"
    "frames could not be replayed (listed with why); 2 for a usage error; 65 when\n"
    "the trace is unreadable or its captured values are malformed; 66 when it\n"
    "holds no captured frames (recorded before dynrec 0.3.0); 69 when it was\n"
    "recorded with another Python minor version; 77 when the replay cannot be\n"
    "confined, its sources are not on disk as recorded and --trust was not given\n"
    "(nothing is run).\n";

static const DrOpt opts[] = {
    {"-o", DR_OPT_STR, offsetof(DrReplayOptions, out), "a path", 0, 0},
    {"--frame", DR_OPT_STR, offsetof(DrReplayOptions, frame), "a frame name", 0, 0},
    {"--compile", DR_OPT_STR, offsetof(DrReplayOptions, compile), "a compile id", 0, 0},
    {"--backend", DR_OPT_STR, offsetof(DrReplayOptions, backend), "a backend name", 0, 0},
    {"--set", DR_OPT_SET, 0, NULL, 0, 0},
    {"--trust", DR_OPT_FLAG, offsetof(DrReplayOptions, trust), NULL, 0, 0},
    {"--no-sandbox", DR_OPT_FLAG, offsetof(DrReplayOptions, no_sandbox), NULL, 0, 0},
    {"--json", DR_OPT_FLAG, offsetof(DrReplayOptions, json), NULL, 0, 0},
    {"--ignore", DR_OPT_IGNORE, 0, NULL, 0, 0},
    {NULL, 0, 0, NULL, 0, 0},
};

static int replay_main(const DrCommand *self, int argc, char **argv) {
    DrReplayOptions o = {.self = "/proc/self/exe"};
    const DrArgSpec spec = {.opts = opts, .min_operands = 1, .max_operands = 1};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    o.trace = a.operand[0];
    o.set = a.set;
    o.nset = a.nset;
    o.ignore = a.ignore;
    if (o.backend && strcmp(o.backend, "recorded") == 0) o.backend = NULL;
    DrError err = {0};
    rc = dr_replay(&o, stdout, stderr, &err);
    if (rc != DR_EX_OK && err.msg[0]) dr_cli_fail(self, &err, rc);
    return rc;
}
const DrCommand dr_cmd_replay = {
    "replay",
    "re-execute Dynamo's tracing of every recorded frame from the trace\n"
    "         alone (no script, no data), compare",
    usage, replay_main};
