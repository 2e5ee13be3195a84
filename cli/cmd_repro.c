/* cmd_repro.c -- `dynrec repro`: one recorded frame as a standalone script. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "../replayer/repro.h"

static const char usage[] =
    "usage: dynrec repro [--frame QUALNAME | --compile ID] [-o repro.py] trace.db\n"
    "\n"
    "Writes a standalone Python script, for a PyTorch issue, that needs only torch\n"
    "(not dynrec, not the recorded program) and re-creates one recorded frame's\n"
    "situation: it rebuilds the inputs captured at each of the frame's compiles\n"
    "(tensors with their recorded data when small, else seeded random data of the\n"
    "same dtype, shape and strides, with the same dynamic marks), defines the\n"
    "functions and classes the frame needs from the sources stored in the trace\n"
    "(definitions only), sets the recorded Dynamo config and calls torch.compile\n"
    "with the recorded backend on those inputs in recorded order, then prints what\n"
    "Dynamo did (compiles, recompiles with their failing guards, graph breaks)\n"
    "next to what was recorded.  Nothing from the trace is run while writing it;\n"
    "read the script's definitions (the recorded program's code) before running it.\n"
    "\n"
    "options:\n"
    "  -o PATH            write the script to PATH (default: stdout)\n"
    "  --frame QUALNAME   that frame (default: the frame with the most compiles)\n"
    "  --compile ID       the frame of compile ID (\"0/2\"), up to that compile\n"
    "  -h, --help         show this help\n"
    "\n"
    "exit status: 0 written; 3 written, but some values could not be rebuilt (they\n"
    "are None there, with a comment, and listed on stderr); 2 for a usage error or\n"
    "an unknown frame or compile (the captured ones are listed); 65 when the trace\n"
    "is unreadable or its captured values are malformed; 66 when it holds no\n"
    "captured frames (recorded before dynrec 0.3.0); 73 when the script cannot be\n"
    "written.\n";

static const DrOpt opts[] = {
    {"-o", DR_OPT_STR, offsetof(DrReproOptions, out), "a path", 0, 0},
    {"--frame", DR_OPT_STR, offsetof(DrReproOptions, frame), "a frame name", 0, 0},
    {"--compile", DR_OPT_STR, offsetof(DrReproOptions, compile), "a compile id", 0, 0},
    {NULL, 0, 0, NULL, 0, 0},
};

static int repro_main(const DrCommand *self, int argc, char **argv) {
    DrReproOptions o = {0};
    const DrArgSpec spec = {.opts = opts, .min_operands = 1, .max_operands = 1};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    o.trace = a.operand[0];
    if (o.frame && o.compile) return dr_cli_usage(self, "--frame or --compile, not both");
    DrError err = {0};
    rc = dr_repro(&o, stdout, stderr, &err);
    if (rc != DR_EX_OK && err.msg[0]) dr_cli_fail(self, &err, rc);
    return rc;
}
const DrCommand dr_cmd_repro = {
    "repro", "write one recorded frame as a standalone script that needs only torch", usage,
    repro_main};
