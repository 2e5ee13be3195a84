/* cmd_pack.c -- `dynrec pack`: a trace as a bug-report attachment. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "../schema/pack.h"

static const char usage[] =
    "usage: dynrec pack [options] trace.db -o bug.dynrec\n"
    "\n"
    "Writes one self-contained, compacted copy of a trace to attach to a bug\n"
    "report.  It is a trace: every dynrec command opens it, and `dynrec replay`\n"
    "replays it when the captured frames and sources are kept.  The same input\n"
    "and options give the same bytes; packing a pack again changes nothing.\n"
    "\n"
    "options:\n"
    "  -o PATH          where to write the pack (replaced if it exists)\n"
    "  --redact         replace home directories (~), user and host names\n"
    "                   (<user>, <host>), the values of recorded environment\n"
    "                   variables (names kept) and the string constants guards\n"
    "                   compare against (a stable hash such as '<str:3f9a1c>',\n"
    "                   the same in every pack, so redacted traces still diff)\n"
    "  --redact-source  blank the lines of stored source files that Dynamo did\n"
    "                   not trace (line numbers kept)\n"
    "  --max-size SIZE  drop the largest droppable payloads (structured-trace\n"
    "                   payloads, then FX code of graphs, then captured tensor\n"
    "                   data) until the pack fits in SIZE bytes (K and M suffixes)\n"
    "  -q               do not print what was done\n"
    "  -h, --help       show this help\n"
    "\n"
    "What was removed is listed in the pack (table pack_log; `dynrec show` says\n"
    "\"redacted: paths, env values, 3 string constants\").\n"
    "\n"
    "exit status: 0 written; 1 when the essential rows alone exceed --max-size\n"
    "(nothing written); 2 for a usage error; 65 for an unreadable trace; 73 when\n"
    "the pack cannot be written.\n";

typedef struct {
    DrPackOptions pack;
    int quiet;
} PackArgs;

static const DrOpt opts[] = {
    {"-o", DR_OPT_STR, offsetof(PackArgs, pack.out), "a path", 0, 0},
    {"--redact", DR_OPT_FLAG, offsetof(PackArgs, pack.redact), NULL, 0, 0},
    {"--redact-source", DR_OPT_FLAG, offsetof(PackArgs, pack.redact_source), NULL, 0, 0},
    {"--max-size", DR_OPT_SIZE, offsetof(PackArgs, pack.max_size), "a size", 1, 0},
    {"-q", DR_OPT_FLAG, offsetof(PackArgs, quiet), NULL, 0, 0},
    {NULL, 0, 0, NULL, 0, 0},
};

static int pack_main(const DrCommand *self, int argc, char **argv) {
    PackArgs o = {0};
    const DrArgSpec spec = {.opts = opts, .min_operands = 1, .max_operands = 1};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    o.pack.in = a.operand[0];
    if (!o.pack.out) return dr_cli_usage(self, "no output given: -o bug.dynrec");
    DrError err = {0};
    rc = dr_pack(&o.pack, o.quiet ? NULL : stderr, &err);
    if (rc == DR_OK) return DR_EX_OK;
    /* DR_ERR_ARG: the essential rows alone exceed --max-size. */
    return dr_cli_fail(self, &err, rc == DR_ERR_ARG ? DR_EX_FAIL : dr_cli_exit_of(rc));
}
const DrCommand dr_cmd_pack = {
    "pack", "make a trace a bug-report attachment: compacted, redacted, capped", usage, pack_main};
