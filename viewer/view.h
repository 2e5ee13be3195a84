/* view.h -- `dynrec view`: the full-screen terminal viewer of one trace.
 *
 * The viewer only reads: nothing from the trace runs, every string is
 * sanitised before it reaches the terminal, blobs are decoded with a size
 * cap, and each screen asks SQLite for the page it shows, never for every
 * row of the trace. */
#ifndef DR_VIEW_H
#define DR_VIEW_H

#include "../schema/trace.h"

typedef struct DrViewOptions {
    int follow;               /* --follow: poll for rows a running `dynrec run` adds */
    int screen;               /* the first screen: a DR_VIEW_* index (0: recompiles) */
    int dump_first_screen;    /* test hook: print the first screen as text, no curses */
    int dump_cols, dump_rows; /* its size (0: 100 x 30) */
    const char *diff;         /* --diff B: the diff screen compares this trace with B
                               * (without it: with the trace a rerun or replay re-ran) */
} DrViewOptions;

/* The screens, in Tab order; dr_view_screen_name gives their names. */
enum {
    DR_VIEW_RECOMPILES,
    DR_VIEW_FRAMES,
    DR_VIEW_COMPILES,
    DR_VIEW_BREAKS,
    DR_VIEW_ERRORS,
    DR_VIEW_GRAPHS,
    DR_VIEW_SPECULATION,
    DR_VIEW_DIFF,
    DR_VIEW__N
};

/* The index of a screen name ("recompiles", "frames", ...), or -1. */
int dr_view_screen_parse(const char *name);
const char *dr_view_screen_name(int screen);

/* Opens path for viewing.  With follow, a trace that `dynrec run` has only
 * just created (an empty file, no schema yet) is waited for up to
 * wait_ms.  Returns NULL with err filled as dr_trace_open does. */
DrTrace *dr_view_open(const char *path, int follow, int wait_ms, DrError *err);

/* Runs the viewer on the terminal until the user quits.  Returns DR_OK, or
 * the error (err filled) that ended it, such as a corrupt trace met by a
 * query; the terminal is restored in every case.  *exit_signal gets the
 * signal (SIGINT, SIGTERM) that ended it, or 0. */
int dr_view(DrTrace *t, const DrViewOptions *o, int *exit_signal, DrError *err);

#endif
