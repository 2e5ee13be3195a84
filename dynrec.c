/* dynrec.c -- the command line: one table of subcommands and their help.
 *
 * Help goes to stdout with status 0; usage errors go to stderr with status
 * 2; a bad trace file is status 65; `run` returns the script's own status.
 * Only this layer prints messages from the modules' DrError. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder/run.h"
#include "replayer/compare.h"
#include "replayer/repro.h"
#include "replayer/rerun.h"
#include "schema/text.h"
#include "schema/trace.h"
#include "viewer/export.h"
#include "viewer/report.h"
#include "viewer/pack.h"
#include "viewer/show.h"
#include "viewer/sql.h"
#include "viewer/view.h"

#define EX_USAGE_ 2
#define EX_DATAERR_ 65

static const char usage_main[] =
    "usage: dynrec <command> [options] [args]\n"
    "\n"
    "Record what PyTorch Dynamo (torch.compile) does while a script runs, into one\n"
    "compressed SQLite trace file.\n"
    "\n"
    "commands:\n"
    "  run    run a Python script as `python` would and record a trace\n"
    "  show   print a summary of a trace (--json for scripts)\n"
    "  view   browse a trace in the terminal, guard failures first\n"
    "  diff   compare Dynamo's decisions in two traces (exit 0 same, 1 different)\n"
    "  rerun  run a recorded program again under its recorded conditions, compare\n"
    "  replay re-execute Dynamo's tracing of every recorded frame from the trace\n"
    "         alone (no script, no data), compare\n"
    "  sql    run one read-only SQL query on a trace, with dynrec_text(blob_id)\n"
    "  export write a trace for other viewers: Perfetto, tlparse (TORCH_TRACE)\n"
    "  report print a Markdown report of a trace for a GitHub issue\n"
    "  pack   make a trace a bug-report attachment: compacted, redacted, capped\n"
    "  repro  write one recorded frame as a standalone script that needs only torch\n"
    "\n"
    "options:\n"
    "  -h, --help     show this help; `dynrec <command> --help` for a command\n"
    "  --version      print the versions of dynrec, Python, SQLite and zstd\n"
    "\n"
    "A trace is an ordinary SQLite file: `sqlite3 trace.db .tables` reads it too.\n";

static const char usage_run[] =
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

static const char usage_show[] =
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

static const char usage_diff[] =
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

static const char usage_rerun[] =
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
    "                   torch._inductor.config) to the Python literal VAL for the\n"
    "                   re-run, over the script's own setting; repeatable\n"
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

static const char usage_replay[] =
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
    "  --set NAME=VAL     set torch._dynamo.config.NAME (inductor.NAME) to the\n"
    "                     Python literal VAL for the replay (what-if); repeatable\n"
    "  --no-sandbox       run the replay unconfined (by default bubblewrap and a\n"
    "                     seccomp filter confine it: no network, a read-only view of\n"
    "                     the interpreter, the venv and the trace, no $HOME, a private\n"
    "                     /tmp, no exec; the output trace is the one thing written)\n"
    "  --trust            use code stored compiled in the trace (lambdas the sources\n"
    "                     lack); unconfined (--no-sandbox, or no bubblewrap here),\n"
    "                     also replay when the trace's sources are not on disk at\n"
    "                     their recorded paths with their recorded text\n"
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

static const char usage_sql[] =
    "usage: dynrec sql [--json|--csv] trace.db \"SELECT ...\"\n"
    "\n"
    "Runs one SQL statement on a trace opened read-only (statements that would\n"
    "write, ATTACH and pragmas that set a value are refused) and prints its rows.\n"
    "The views are documented in schema/SCHEMA.md (v_compiles, v_guards,\n"
    "v_guard_failures, v_graph_breaks, v_errors, v_graphs, v_events, ...).  Two\n"
    "functions read payloads (blob ids such as v_graphs.code_blob):\n"
    "  dynrec_text(blob_id)   the decoded text (at most 64 MiB)\n"
    "  dynrec_json(blob_id)   the same, checked to be JSON, for json_extract\n"
    "The same functions load into the sqlite3 shell:\n"
    "  sqlite3 trace.db -cmd '.load build/dynrec_sqlite' \"SELECT ...\"\n"
    "\n"
    "options:\n"
    "  --json         print a JSON array of objects (one per row)\n"
    "  --csv          print CSV (RFC 4180) with a header row\n"
    "  -h, --help     show this help\n"
    "\n"
    "Default output is aligned columns (one column: the values as they are); on a\n"
    "terminal, control characters from the trace are shown escaped (ESC as ^[,\n"
    "bidi and C1 controls as \\uXXXX, bytes that are not UTF-8 as \\xNN).\n"
    "\n"
    "exit status: 0; 1 for an SQL error (a missing blob, a syntax error); 2 for a\n"
    "usage error or a statement that is refused; 65 when the file is missing, not a\n"
    "dynrec trace, too new for this dynrec, or corrupt.\n";

static const char usage_export[] =
    "usage: dynrec export --format perfetto [-o trace.json] trace.db\n"
    "       dynrec export --format torch-trace -o DIR trace.db\n"
    "\n"
    "Writes a trace in a format other viewers read.  Nothing in the trace is run.\n"
    "\n"
    "  perfetto     Chrome trace-event JSON for ui.perfetto.dev or chrome://tracing:\n"
    "               per thread, each compile a slice with its tracing attempts and\n"
    "               backend compiles nested; graph breaks, guard failures and\n"
    "               errors as instant events (their text in args); counters of\n"
    "               cache entries per frame and of cache hits (the total per frame,\n"
    "               at the end of the run).  -o - or no -o: stdout.\n"
    "  torch-trace  Dynamo's structured trace as TORCH_TRACE would have written it,\n"
    "               as DIR/dedicated_log_torch_trace_<trace>.log, for tlparse:\n"
    "               `tlparse DIR/dedicated_log_torch_trace_<trace>.log`.  The time of\n"
    "               each line is the recorded start (to the second) plus the\n"
    "               event's time; the logging call's file and line are not\n"
    "               recorded (dynrec_export.py:SEQ stands in).\n"
    "\n"
    "options:\n"
    "  --format F     perfetto or torch-trace\n"
    "  -o PATH        the output file (perfetto) or directory (torch-trace)\n"
    "  -h, --help     show this help\n"
    "\n"
    "exit status: 0; 2 for a usage error; 65 when the file is missing, not a dynrec\n"
    "trace, too new for this dynrec, or corrupt; 73 when the output cannot be written.\n";

static const char usage_report[] =
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

static const char usage_view[] =
    "usage: dynrec view [options] trace.db\n"
    "\n"
    "Browses a trace full-screen: recompiles first (which guard failed, on which\n"
    "value, where in your code the guard comes from, how the value changed across\n"
    "the frame's compiles, and what to do), then frames, compiles, graph breaks,\n"
    "errors, graphs and speculation.  Press ? for the keys, q to quit.  Nothing in\n"
    "the trace is executed, and no text from it reaches the terminal unescaped.\n"
    "When standard output is not a terminal it prints what `dynrec show` prints.\n"
    "\n"
    "options:\n"
    "  --follow          open a trace `dynrec run` is still writing and show new\n"
    "                    compiles and guard failures as they are written\n"
    "  --screen NAME     start on recompiles (default), frames, compiles, breaks,\n"
    "                    errors, graphs, speculation or diff\n"
    "  --diff B.db       the diff screen lists where B differs from this trace (the\n"
    "                    comparison engine of `dynrec diff`), first divergence\n"
    "                    first; a trace written by `dynrec rerun` or `replay` is\n"
    "                    compared with the trace it re-ran without --diff\n"
    "  -h, --help        show this help\n"
    "\n"
    "Colour is used on colour terminals unless NO_COLOR is set; outside a UTF-8\n"
    "locale everything is shown in ASCII.\n"
    "\n"
    "exit status: 0; 1 when the terminal cannot be driven (an unknown TERM); 2 for\n"
    "a usage error; 65 when the file is missing, not a dynrec trace, too new for\n"
    "this dynrec, or corrupt; 128 + N when signal N (SIGINT, SIGTERM) ended it.\n";
static const char usage_repro[] =
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

static int is_help(const char *a) { return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0; }

static int usage_error(const char *cmd, const char *fmt, const char *arg) {
    fprintf(stderr, "dynrec%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'dynrec %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
    return EX_USAGE_;
}

/* "4096", "4K", "1M" -> bytes; -1 when not a size. */
static long parse_size(const char *s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0) return -1;
    long long mul = 1;
    if (*end == 'K' || *end == 'k') mul = 1024, end++;
    else if (*end == 'M' || *end == 'm') mul = 1024 * 1024, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end || v > (1ll << 30) / mul) return -1;
    return (long)(v * mul);
}

static int cmd_run(int argc, char **argv, int full_argc, char **full_argv) {
    DrRunOptions o = {.capture_values = -1};
    static char *set[64];
    o.set = set;
    o.cmd_argc = full_argc;
    o.cmd_argv = full_argv;
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_run, stdout);
            return 0;
        } else if (strcmp(a, "-o") == 0) {
            if (++i >= argc) return usage_error("run", "-o needs a path%s", "");
            o.trace_path = argv[i];
        } else if (strcmp(a, "-q") == 0) {
            o.quiet = 1;
        } else if (strcmp(a, "--all-frames") == 0) {
            o.all_frames = 1;
        } else if (strcmp(a, "--rerun-of") == 0) {
            if (++i >= argc) return usage_error("run", "--rerun-of needs a trace%s", "");
            o.rerun_of = argv[i];
        } else if (strcmp(a, "--set") == 0) {
            if (++i >= argc || !strchr(argv[i], '='))
                return usage_error("run", "--set needs NAME=VALUE%s", "");
            if (o.nset == (int)(sizeof set / sizeof *set))
                return usage_error("run", "too many --set options%s", "");
            set[o.nset++] = argv[i];
        } else if (strcmp(a, "--capture-values") == 0) {
            if (++i >= argc || (o.capture_values = parse_size(argv[i])) < 0)
                return usage_error("run", "--capture-values needs a size such as 4K or 1M (at "
                                          "most 1G)%s", "");
        } else if (strcmp(a, "--replay-of") == 0 || strcmp(a, "--replay-backend") == 0 ||
                   strcmp(a, "--replay-frame") == 0 || strcmp(a, "--replay-compile") == 0 ||
                   strcmp(a, "--trace-label") == 0 || strcmp(a, "--sandboxed") == 0) {
            if (++i >= argc) return usage_error("run", "%s needs a value", a);
            const char **dst = strcmp(a, "--replay-of") == 0        ? &o.replay_of
                               : strcmp(a, "--replay-backend") == 0 ? &o.replay_backend
                               : strcmp(a, "--replay-frame") == 0   ? &o.replay_frame
                               : strcmp(a, "--trace-label") == 0    ? &o.trace_label
                               : strcmp(a, "--sandboxed") == 0      ? &o.sandboxed
                                                                    : &o.replay_compile;
            *dst = argv[i];
        } else if (strcmp(a, "-m") == 0) {
            if (++i >= argc) return usage_error("run", "-m needs a module name%s", "");
            o.is_module = 1;
            o.target = argv[i++];
            break;
        } else if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("run", "unknown option %s", a);
        } else {
            break;
        }
    }
    if (o.replay_of) {
        if (o.target || i < argc)
            return usage_error("run", "--replay-of runs no script (extra argument %s)",
                               o.target ? o.target : argv[i]);
        o.target = "";
        o.argc = 0;
        o.argv = argv + i;
        return dr_run(&o);
    }
    if (!o.target) {
        if (i >= argc) return usage_error("run", "no script given%s", "");
        o.target = argv[i++];
    }
    o.argc = argc - i;
    o.argv = argv + i;
    return dr_run(&o);
}

static int cmd_show(int argc, char **argv) {
    DrShowOptions o = {.json = 0, .top = 10};
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_show, stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--top") == 0 || strcmp(a, "--top-library") == 0) {
            char *end;
            if (++i >= argc) return usage_error("show", "%s needs a number", a);
            long n = strtol(argv[i], &end, 10);
            if (*end || n <= 0 || n > 100000)
                return usage_error("show", "--top and --top-library need a positive number, "
                                           "not %s", argv[i]);
            if (a[5]) o.top_library = (int)n;
            else o.top = (int)n;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("show", "unknown option %s", a);
        } else if (path) {
            return usage_error("show", "one trace at a time (extra argument %s)", a);
        } else {
            path = a;
        }
    }
    if (!path) return usage_error("show", "no trace given%s", "");
    DrError err = {0};
    DrTrace *t = dr_trace_open(path, &err);
    if (!t) {
        fprintf(stderr, "dynrec show: %s\n", err.msg);
        return EX_DATAERR_;
    }
    int rc = dr_show(t, &o, stdout, &err);
    dr_trace_free(t);
    if (rc != DR_OK) {
        fprintf(stderr, "dynrec show: %s\n", err.msg);
        return EX_DATAERR_;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

static int cmd_sql(int argc, char **argv) {
    DrSqlOptions o = {.format = DR_SQL_TEXT};
    const char *args[2] = {NULL, NULL};
    int n = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_sql, stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            o.format = DR_SQL_JSON;
        } else if (strcmp(a, "--csv") == 0) {
            o.format = DR_SQL_CSV;
        } else if (strcmp(a, "--") == 0 && i + 1 < argc && n < 2) {
            args[n++] = argv[++i];
        } else if (a[0] == '-' && a[1] && n < 1) {
            return usage_error("sql", "unknown option %s", a);
        } else if (n == 2) {
            return usage_error("sql", "one trace and one query (extra argument %s); quote the "
                                      "query", a);
        } else {
            args[n++] = a;
        }
    }
    if (n < 2) return usage_error("sql", "give a trace and a query, e.g. dynrec sql t.db "
                                         "\"SELECT * FROM v_compiles\"%s", "");
    o.terminal = isatty(STDOUT_FILENO);
    DrError err = {0};
    DrTrace *t = dr_trace_open(args[0], &err);
    if (!t) {
        fprintf(stderr, "dynrec sql: %s\n", err.msg);
        return EX_DATAERR_;
    }
    int rc = dr_sql_run(t, args[1], &o, stdout, &err);
    dr_trace_free(t);
    if (rc != DR_OK) {
        fprintf(stderr, "dynrec sql: %s\n", err.msg);
        return rc == DR_ERR_ARG ? EX_USAGE_ : rc == DR_ERR_SQL || rc == DR_ERR_BLOB ? 1
                                                                                  : EX_DATAERR_;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

static int cmd_export(int argc, char **argv) {
    const char *format = NULL, *out = NULL, *path = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_export, stdout);
            return 0;
        } else if (strcmp(a, "--format") == 0 || strcmp(a, "-o") == 0) {
            if (++i >= argc || !argv[i][0]) return usage_error("export", "%s needs a value", a);
            if (a[1] == 'o') out = argv[i];
            else format = argv[i];
        } else if (strncmp(a, "--format=", 9) == 0) {
            format = a + 9;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("export", "unknown option %s", a);
        } else if (path) {
            return usage_error("export", "one trace at a time (extra argument %s)", a);
        } else {
            path = a;
        }
    }
    if (!path) return usage_error("export", "no trace given%s", "");
    if (!format) return usage_error("export", "give --format perfetto or --format torch-trace%s", "");
    int perfetto = strcmp(format, "perfetto") == 0;
    if (!perfetto && strcmp(format, "torch-trace") != 0)
        return usage_error("export", "unknown format '%s': perfetto or torch-trace", format);
    if (!perfetto && !out)
        return usage_error("export", "--format torch-trace needs -o DIR%s", "");
    DrError err = {0};
    DrTrace *t = dr_trace_open(path, &err);
    if (!t) {
        fprintf(stderr, "dynrec export: %s\n", err.msg);
        return EX_DATAERR_;
    }
    int rc;
    if (perfetto) {
        int to_stdout = !out || strcmp(out, "-") == 0;
        FILE *f = to_stdout ? stdout : fopen(out, "w");
        if (!f) {
            fprintf(stderr, "dynrec export: %s: cannot create the file: %s\n", out,
                    strerror(errno));
            dr_trace_free(t);
            return 73;
        }
        rc = dr_export_perfetto(t, f, &err);
        if ((to_stdout ? fflush(f) : fclose(f)) != 0 && rc == DR_OK)
            rc = dr_error(&err, DR_ERR_IO, "%s: writing failed: %s", to_stdout ? "stdout" : out,
                          strerror(errno));
        if (rc != DR_OK && !to_stdout) unlink(out); /* no partial file */
    } else {
        char *log = NULL;
        long skipped = 0;
        rc = dr_export_torch_trace(t, out, &log, &skipped, &err);
        if (rc == DR_OK) {
            if (skipped)
                fprintf(stderr, "dynrec export: %ld structured-trace records of %s were "
                                "malformed and left out\n", skipped, path);
            fprintf(stderr, "wrote %s\n", log);
        }
        free(log);
    }
    dr_trace_free(t);
    if (rc != DR_OK) {
        fprintf(stderr, "dynrec export: %s\n", err.msg);
        return rc == DR_ERR_IO || rc == DR_ERR_FULL ? 73 : EX_DATAERR_;
    }
    return 0;
}

static int cmd_report(int argc, char **argv) {
    DrReportOptions o = {.top = 5};
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_report, stdout);
            return 0;
        } else if (strcmp(a, "--top") == 0) {
            char *end;
            if (++i >= argc) return usage_error("report", "--top needs a number%s", "");
            long n = strtol(argv[i], &end, 10);
            if (*end || n <= 0 || n > 100000)
                return usage_error("report", "--top needs a positive number, not %s", argv[i]);
            o.top = (int)n;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("report", "unknown option %s", a);
        } else if (path) {
            return usage_error("report", "one trace at a time (extra argument %s)", a);
        } else {
            path = a;
        }
    }
    if (!path) return usage_error("report", "no trace given%s", "");
    DrError err = {0};
    DrTrace *t = dr_trace_open(path, &err);
    if (!t) {
        fprintf(stderr, "dynrec report: %s\n", err.msg);
        return EX_DATAERR_;
    }
    int rc = dr_report(t, &o, stdout, &err);
    dr_trace_free(t);
    if (rc != DR_OK) {
        fprintf(stderr, "dynrec report: %s\n", err.msg);
        return EX_DATAERR_;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

static const char usage_pack[] =
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

static int cmd_pack(int argc, char **argv) {
    DrPackOptions o = {0};
    int quiet = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_pack, stdout);
            return 0;
        } else if (strcmp(a, "-o") == 0) {
            if (++i >= argc) return usage_error("pack", "-o needs a path%s", "");
            o.out = argv[i];
        } else if (strcmp(a, "--redact") == 0) {
            o.redact = 1;
        } else if (strcmp(a, "--redact-source") == 0) {
            o.redact_source = 1;
        } else if (strcmp(a, "--max-size") == 0) {
            long n;
            if (++i >= argc || (n = parse_size(argv[i])) <= 0)
                return usage_error("pack", "--max-size needs a size such as 500K or 2M%s", "");
            o.max_size = n;
        } else if (strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("pack", "unknown option %s", a);
        } else if (o.in) {
            return usage_error("pack", "one trace at a time (extra argument %s)", a);
        } else {
            o.in = a;
        }
    }
    if (!o.in) return usage_error("pack", "no trace given%s", "");
    if (!o.out) return usage_error("pack", "no output given: -o bug.dynrec%s", "");
    DrError err = {0};
    int rc = dr_pack(&o, quiet ? NULL : stderr, &err);
    if (rc == DR_OK) return 0;
    fprintf(stderr, "dynrec pack: %s\n", err.msg);
    if (rc == DR_ERR_ARG) return 1;
    if (rc == DR_ERR_IO || rc == DR_ERR_FULL) return 73;
    return EX_DATAERR_;
}

/* Parses "guards,graph_breaks" into a category bit mask; -1 on an unknown
 * name (reported by the caller). */
static long parse_ignore(const char *list, const char **bad) {
    static char name[64];
    unsigned mask = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), p);
        int cat = n ? dr_category_parse(name) : -1;
        if (cat < 0) {
            *bad = name;
            return -1;
        }
        mask |= 1u << cat;
        p += n;
        if (*p == ',') p++;
    }
    return (long)mask;
}

/* `--ignore LIST` of diff, rerun and replay (argv[*i] is "--ignore"):
 * consumes the list and ORs its categories into *mask.  Returns 0, or the
 * exit status of the usage error it printed. */
static int opt_ignore(const char *cmd, int argc, char **argv, int *i, unsigned *mask) {
    const char *bad = NULL;
    if (++*i >= argc) return usage_error(cmd, "--ignore needs a list of categories%s", "");
    long m = parse_ignore(argv[*i], &bad);
    if (m < 0)
        return usage_error(cmd,
                           "unknown category '%s' for --ignore (one of frames, compiles, "
                           "guards, guard_failures, graph_breaks, graphs, speculation, "
                           "side_effects, errors, config, exit_status, output)",
                           bad);
    *mask |= (unsigned)m;
    return 0;
}

/* Opens a trace and reads its decisions; prints the clean error. */
static DrModel *load_model(const char *cmd, const char *path, DrTrace **t) {
    DrError err = {0};
    *t = dr_trace_open(path, &err);
    DrModel *m = *t ? dr_model_load(*t, &err) : NULL;
    if (!m) {
        fprintf(stderr, "dynrec %s: %s\n", cmd, err.msg);
        dr_trace_free(*t);
        *t = NULL;
    }
    return m;
}

static int cmd_view(int argc, char **argv) {
    DrViewOptions o = {0};
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_view, stdout);
            return 0;
        } else if (strcmp(a, "--follow") == 0) {
            o.follow = 1;
        } else if (strcmp(a, "--screen") == 0) {
            if (++i >= argc) return usage_error("view", "--screen needs a name%s", "");
            if ((o.screen = dr_view_screen_parse(argv[i])) < 0)
                return usage_error("view", "unknown screen '%s' (see dynrec view --help)",
                                   argv[i]);
        } else if (strcmp(a, "--diff") == 0) {
            if (++i >= argc) return usage_error("view", "--diff needs a trace%s", "");
            o.diff = argv[i];
        } else if (strcmp(a, "--dump-first-screen") == 0) {
            /* Hidden: the first screen as text, for tests and bench/view_bench.sh. */
            o.dump_first_screen = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("view", "unknown option %s", a);
        } else if (path) {
            return usage_error("view", "one trace at a time (extra argument %s)", a);
        } else {
            path = a;
        }
    }
    if (!path) return usage_error("view", "no trace given%s", "");
    DrError err = {0};
    DrTrace *t = dr_view_open(path, o.follow, 10000, &err);
    if (!t) {
        fprintf(stderr, "dynrec view: %s\n", err.msg);
        return EX_DATAERR_;
    }
    int rc, sig = 0;
    if (!o.dump_first_screen && !isatty(STDOUT_FILENO)) {
        /* Not a terminal: the summary `dynrec show` prints. */
        DrShowOptions so = {.top = 10};
        rc = dr_show(t, &so, stdout, &err);
    } else {
        if (o.dump_first_screen) {
            const char *c = getenv("COLUMNS"), *l = getenv("LINES");
            o.dump_cols = c ? atoi(c) : 0;
            o.dump_rows = l ? atoi(l) : 0;
        }
        rc = dr_view(t, &o, &sig, &err);
    }
    dr_trace_free(t);
    if (rc != DR_OK) {
        fprintf(stderr, "dynrec view: %s\n", err.msg);
        return rc == DR_ERR_ARG ? 1 : EX_DATAERR_;
    }
    if (sig) return 128 + sig;
    return fflush(stdout) == 0 ? 0 : 1;
}

static int cmd_diff(int argc, char **argv) {
    DrCompareOptions o = {0};
    int json = 0;
    const char *paths[2] = {NULL, NULL};
    int np = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_diff, stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--ignore") == 0) {
            int rc = opt_ignore("diff", argc, argv, &i, &o.ignore);
            if (rc) return rc;
        } else if (strcmp(a, "--context") == 0) {
            char *end;
            if (++i >= argc) return usage_error("diff", "--context needs a number%s", "");
            long n = strtol(argv[i], &end, 10);
            if (*end || n < 0 || n > 100000)
                return usage_error("diff", "--context needs a number >= 0, not %s", argv[i]);
            o.context = (int)n;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("diff", "unknown option %s", a);
        } else if (np == 2) {
            return usage_error("diff", "two traces, not more (extra argument %s)", a);
        } else {
            paths[np++] = a;
        }
    }
    if (np < 2) return usage_error("diff", "give two traces to compare%s", "");
    DrTrace *ta = NULL, *tb = NULL;
    DrModel *ma = load_model("diff", paths[0], &ta);
    DrModel *mb = ma ? load_model("diff", paths[1], &tb) : NULL;
    int rc = EX_DATAERR_;
    if (ma && mb) {
        DrError err = {0};
        o.label_a = paths[0];
        o.label_b = paths[1];
        DrDiff *d = dr_compare(ma, mb, &o, &err);
        if (!d) {
            fprintf(stderr, "dynrec diff: %s\n", err.msg);
            rc = 1;
        } else {
            dr_diff_print(d, stdout, json);
            rc = dr_diff_identical(d) ? 0 : 1;
            dr_diff_free(d);
            if (fflush(stdout) != 0) rc = EX_USAGE_;
        }
    }
    dr_model_free(mb);
    dr_model_free(ma);
    dr_trace_free(tb);
    dr_trace_free(ta);
    return rc;
}

static int cmd_rerun(int argc, char **argv) {
    static char *set[64];
    DrRerunOptions o = {.set = set, .self = "/proc/self/exe"};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_rerun, stdout);
            return 0;
        } else if (strcmp(a, "-o") == 0) {
            if (++i >= argc) return usage_error("rerun", "-o needs a path%s", "");
            o.out = argv[i];
        } else if (strcmp(a, "--set") == 0) {
            if (++i >= argc || !strchr(argv[i], '=') || argv[i][0] == '=')
                return usage_error("rerun", "--set needs NAME=VALUE%s", "");
            if (o.nset == (int)(sizeof set / sizeof *set))
                return usage_error("rerun", "too many --set options%s", "");
            set[o.nset++] = argv[i];
        } else if (strcmp(a, "--from-trace") == 0) {
            o.from_trace = 1;
        } else if (strcmp(a, "--no-sandbox") == 0) {
            o.no_sandbox = 1;
        } else if (strcmp(a, "--trust") == 0) {
            o.trust = 1;
        } else if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--ignore") == 0) {
            int rc = opt_ignore("rerun", argc, argv, &i, &o.ignore);
            if (rc) return rc;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("rerun", "unknown option %s", a);
        } else if (o.trace) {
            return usage_error("rerun", "one trace at a time (extra argument %s)", a);
        } else {
            o.trace = a;
        }
    }
    if (!o.trace) return usage_error("rerun", "no trace given%s", "");
    return dr_rerun(&o);
}

static int cmd_replay(int argc, char **argv) {
    static char *set[64];
    DrReplayOptions o = {.set = set, .self = "/proc/self/exe"};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_replay, stdout);
            return 0;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--frame") == 0 ||
                   strcmp(a, "--compile") == 0 || strcmp(a, "--backend") == 0) {
            if (++i >= argc || !argv[i][0]) return usage_error("replay", "%s needs a value", a);
            const char **dst = a[1] == 'o' ? &o.out : a[2] == 'f' ? &o.frame
                               : a[2] == 'c' ? &o.compile : &o.backend;
            *dst = argv[i];
        } else if (strcmp(a, "--set") == 0) {
            if (++i >= argc || !strchr(argv[i], '=') || argv[i][0] == '=')
                return usage_error("replay", "--set needs NAME=VALUE%s", "");
            if (o.nset == (int)(sizeof set / sizeof *set))
                return usage_error("replay", "too many --set options%s", "");
            set[o.nset++] = argv[i];
        } else if (strcmp(a, "--trust") == 0) {
            o.trust = 1;
        } else if (strcmp(a, "--no-sandbox") == 0) {
            o.no_sandbox = 1;
        } else if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--ignore") == 0) {
            int rc = opt_ignore("replay", argc, argv, &i, &o.ignore);
            if (rc) return rc;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("replay", "unknown option %s", a);
        } else if (o.trace) {
            return usage_error("replay", "one trace at a time (extra argument %s)", a);
        } else {
            o.trace = a;
        }
    }
    if (!o.trace) return usage_error("replay", "no trace given%s", "");
    if (o.backend && strcmp(o.backend, "recorded") == 0) o.backend = NULL;
    return dr_replay(&o);
}

static int cmd_repro(int argc, char **argv) {
    DrReproOptions o = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(usage_repro, stdout);
            return 0;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--frame") == 0 ||
                   strcmp(a, "--compile") == 0) {
            if (++i >= argc || !argv[i][0]) return usage_error("repro", "%s needs a value", a);
            const char **dst = a[1] == 'o' ? &o.out : a[2] == 'f' ? &o.frame : &o.compile;
            *dst = argv[i];
        } else if (a[0] == '-' && a[1]) {
            return usage_error("repro", "unknown option %s", a);
        } else if (o.trace) {
            return usage_error("repro", "one trace at a time (extra argument %s)", a);
        } else {
            o.trace = a;
        }
    }
    if (!o.trace) return usage_error("repro", "no trace given%s", "");
    if (o.frame && o.compile) return usage_error("repro", "--frame or --compile, not both%s", "");
    return dr_repro(&o);
}

/* The torch that `python` imports, asked of that python without importing
 * torch (its package metadata): "2.13.0+cpu", or NULL when it has none.
 * The python's own stderr is discarded; the environment is the user's. */
static char *torch_version_of(const char *python) {
    int fds[2];
    if (pipe(fds) != 0) return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *const args[] = {(char *)python, "-c",
                          "import importlib.metadata as m\n"
                          "try: print(m.version('torch'))\n"
                          "except m.PackageNotFoundError: pass",
                          NULL};
    extern char **environ;
    pid_t pid;
    int rc = posix_spawn(&pid, python, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    char buf[128];
    size_t n = 0;
    if (rc == 0) {
        ssize_t got;
        while (n < sizeof buf - 1 && (got = read(fds[0], buf + n, sizeof buf - 1 - n)) != 0) {
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) break;
            n += (size_t)got;
        }
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    }
    close(fds[0]);
    buf[n] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    return rc == 0 && buf[0] ? dr_safe(buf, strlen(buf), 0, 0) : NULL;
}

/* dynrec --version: this build, the Python it embeds, the interpreter a
 * `run` would use ($VIRTUAL_ENV or the build's venv) and its torch. */
static int cmd_version(void) {
    printf("dynrec %s (trace schema %d)\nPython %s\nSQLite %s\nzstd %s\n", DR_VERSION,
           DR_SCHEMA_VERSION, dr_run_python_version(), dr_trace_sqlite_version(),
           dr_trace_zstd_version());
    char *python = dr_run_choose_python();
    if (!python) {
        printf("python: none found (set VIRTUAL_ENV to a venv with torch)\n");
        return 0;
    }
    char *torch = torch_version_of(python);
    char *spath = dr_safe(python, strlen(python), 0, 0);
    printf("python: %s\ntorch %s\n", spath ? spath : "?", torch ? torch : "not installed there");
    free(spath);
    free(torch);
    free(python);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EX_USAGE_;
    }
    const char *cmd = argv[1];
    if (is_help(cmd) || strcmp(cmd, "help") == 0) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) return cmd_version();
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2, argc, argv);
    if (strcmp(cmd, "show") == 0) return cmd_show(argc - 2, argv + 2);
    if (strcmp(cmd, "view") == 0) return cmd_view(argc - 2, argv + 2);
    if (strcmp(cmd, "diff") == 0) return cmd_diff(argc - 2, argv + 2);
    if (strcmp(cmd, "rerun") == 0) return cmd_rerun(argc - 2, argv + 2);
    if (strcmp(cmd, "replay") == 0) return cmd_replay(argc - 2, argv + 2);
    if (strcmp(cmd, "sql") == 0) return cmd_sql(argc - 2, argv + 2);
    if (strcmp(cmd, "export") == 0) return cmd_export(argc - 2, argv + 2);
    if (strcmp(cmd, "report") == 0) return cmd_report(argc - 2, argv + 2);
    if (strcmp(cmd, "pack") == 0) return cmd_pack(argc - 2, argv + 2);
    if (strcmp(cmd, "repro") == 0) return cmd_repro(argc - 2, argv + 2);
    return usage_error(NULL, "unknown command '%s'", cmd);
}
