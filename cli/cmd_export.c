/* cmd_export.c -- `dynrec export`: a trace for other viewers. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "../viewer/export.h"

static const char usage[] =
    "usage: dynrec export --format perfetto [-o trace.json] trace.db [trace.db ...]\n"
    "       dynrec export --format torch-trace -o DIR trace.db\n"
    "\n"
    "Writes a trace in a format other viewers read.  Nothing in the trace is run.\n"
    "\n"
    "  perfetto     Chrome trace-event JSON for ui.perfetto.dev or chrome://tracing:\n"
    "               per thread, each compile a slice with its tracing attempts and\n"
    "               backend compiles nested; graph breaks, guard failures and\n"
    "               errors as instant events (their text in args); counters of\n"
    "               cache entries per frame and of cache hits (the total per frame,\n"
    "               at the end of the run).  -o - or no -o: stdout.  Several\n"
    "               traces (the ranks of a torchrun job) make one timeline, a\n"
    "               process per trace named by its rank, on one clock.\n"
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

typedef struct {
    const char *format, *out;
} ExportOptions;

static const DrOpt opts[] = {
    {"--format", DR_OPT_STR, offsetof(ExportOptions, format), "a format (perfetto or torch-trace)",
     0, 0},
    {"-o", DR_OPT_STR, offsetof(ExportOptions, out), "a path", 0, 0},
    {NULL, 0, 0, NULL, 0, 0},
};

/* Opens FILE for writing (- or NULL: stdout). */
static FILE *open_out(const char *out, int *to_stdout) {
    *to_stdout = !out || strcmp(out, "-") == 0;
    FILE *f = *to_stdout ? stdout : fopen(out, "w");
    if (!f)
        fprintf(stderr, "dynrec export: %s: cannot create the file: %s\n", out, strerror(errno));
    return f;
}

/* perfetto over several traces: one timeline, a process per trace. */
static int export_many(const DrCommand *self, const DrArgs *a, const char *out) {
    DrTrace **t = calloc((size_t)a->noperands, sizeof *t);
    if (!t) return dr_cli_usage(self, "out of memory");
    int rc = DR_OK, n = 0;
    for (; n < a->noperands; n++)
        if (!(t[n] = dr_cli_open(self, a->operands[n]))) break;
    int status = DR_EX_OK;
    if (n < a->noperands) {
        status = DR_EX_DATAERR;
    } else {
        int to_stdout;
        FILE *f = open_out(out, &to_stdout);
        if (!f) {
            status = DR_EX_CANTCREAT;
        } else {
            DrError err = {0};
            rc = dr_export_perfetto_many(t, (size_t)n, f, &err);
            if ((to_stdout ? fflush(f) : fclose(f)) != 0 && rc == DR_OK)
                rc = dr_error(&err, DR_ERR_IO, "%s: writing failed: %s", to_stdout ? "stdout" : out,
                              strerror(errno));
            if (rc != DR_OK && !to_stdout) unlink(out);
            if (rc != DR_OK)
                status = dr_cli_fail(self, &err,
                                     rc == DR_ERR_IO || rc == DR_ERR_FULL ? DR_EX_CANTCREAT
                                                                          : DR_EX_DATAERR);
        }
    }
    for (int i = 0; i < n; i++) dr_trace_free(t[i]);
    free(t);
    return status;
}

static int export_main(const DrCommand *self, int argc, char **argv) {
    ExportOptions o = {0};
    const DrArgSpec spec = {.opts = opts, .min_operands = 1, .max_operands = -1};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &o, &a);
    if (rc) return DR_CLI_EXIT(rc);
    const char *path = a.operand[0], *out = o.out;
    if (!o.format) return dr_cli_usage(self, "give --format perfetto or --format torch-trace");
    int perfetto = strcmp(o.format, "perfetto") == 0;
    if (!perfetto && strcmp(o.format, "torch-trace") != 0)
        return dr_cli_usage(self, "unknown format '%s': perfetto or torch-trace", o.format);
    if (!perfetto && !out) return dr_cli_usage(self, "--format torch-trace needs -o DIR");
    if (!perfetto && a.noperands > 1)
        return dr_cli_usage(self, "--format torch-trace takes one trace");
    if (perfetto && a.noperands > 1) return export_many(self, &a, out);
    DrTrace *t = dr_cli_open(self, path);
    if (!t) return DR_EX_DATAERR;
    DrError err = {0};
    if (perfetto) {
        int to_stdout;
        FILE *f = open_out(out, &to_stdout);
        if (!f) {
            dr_trace_free(t);
            return DR_EX_CANTCREAT;
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
                fprintf(stderr,
                        "dynrec export: %ld structured-trace records of %s were "
                        "malformed and left out\n",
                        skipped, path);
            fprintf(stderr, "wrote %s\n", log);
        }
        free(log);
    }
    dr_trace_free(t);
    if (rc != DR_OK)
        return dr_cli_fail(self, &err,
                           rc == DR_ERR_IO || rc == DR_ERR_FULL ? DR_EX_CANTCREAT : DR_EX_DATAERR);
    return DR_EX_OK;
}
const DrCommand dr_cmd_export = {"export",
                                 "write a trace for other viewers: Perfetto, tlparse (TORCH_TRACE)",
                                 usage, export_main};
