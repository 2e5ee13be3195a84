/* cmd_view.c -- `dynrec view`: browse a trace in the terminal. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "../viewer/show.h"
#include "../viewer/view.h"

static const char usage[] =
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

typedef struct {
    DrViewOptions view;
    const char *screen;
} ViewArgs;

static const DrOpt opts[] = {
    {"--follow", DR_OPT_FLAG, offsetof(ViewArgs, view.follow), NULL, 0, 0},
    {"--screen", DR_OPT_STR, offsetof(ViewArgs, screen), "a name", 0, 0},
    {"--diff", DR_OPT_STR, offsetof(ViewArgs, view.diff), "a trace", 0, 0},
    /* Hidden: the first screen as text, for tests and bench/view_bench.sh. */
    {"--dump-first-screen", DR_OPT_FLAG, offsetof(ViewArgs, view.dump_first_screen), NULL, 0, 0},
    {NULL, 0, 0, NULL, 0, 0},
};

static int view_main(const DrCommand *self, int argc, char **argv) {
    ViewArgs v = {0};
    DrViewOptions *o = &v.view;
    const DrArgSpec spec = {.opts = opts, .min_operands = 1, .max_operands = 1};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &v, &a);
    if (rc) return DR_CLI_EXIT(rc);
    if (v.screen && (o->screen = dr_view_screen_parse(v.screen)) < 0)
        return dr_cli_usage(self, "unknown screen '%s' (see dynrec view --help)", v.screen);
    DrError err = {0};
    DrTrace *t = dr_view_open(a.operand[0], o->follow, 10000, &err);
    if (!t) return dr_cli_fail(self, &err, DR_EX_DATAERR);
    int sig = 0;
    if (!o->dump_first_screen && !isatty(STDOUT_FILENO)) {
        /* Not a terminal: the summary `dynrec show` prints. */
        DrShowOptions so = {.top = 10};
        rc = dr_show(t, &so, stdout, &err);
    } else {
        if (o->dump_first_screen) {
            const char *c = getenv("COLUMNS"), *l = getenv("LINES");
            o->dump_cols = c ? atoi(c) : 0;
            o->dump_rows = l ? atoi(l) : 0;
        }
        rc = dr_view(t, o, &sig, &err);
    }
    dr_trace_free(t);
    /* DR_ERR_ARG: this terminal cannot be driven. */
    if (rc != DR_OK) return dr_cli_fail(self, &err, rc == DR_ERR_ARG ? DR_EX_FAIL : DR_EX_DATAERR);
    if (sig) return 128 + sig;
    return dr_cli_flush();
}
const DrCommand dr_cmd_view = {"view", "browse a trace in the terminal, guard failures first",
                               usage, view_main};
