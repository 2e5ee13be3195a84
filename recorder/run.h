/* run.h -- `dynrec run`: run a Python script as `python` would, recording it. */
#ifndef DR_RUN_H
#define DR_RUN_H

#include <stdint.h>

#include "../schema/error.h"

typedef struct DrRunOptions {
    const char *trace_path; /* -o; NULL picks a fresh name in the cwd */
    int quiet;              /* -q: no closing line on stderr */
    int all_frames;         /* --all-frames: count every frame of the run */
    int is_module;          /* -m: target is a module name */
    const char *target;     /* script path or module name */
    int argc;               /* the script's own arguments */
    char **argv;
    int cmd_argc; /* dynrec's whole command line, for the trace */
    char **cmd_argv;
    const char *rerun_of; /* --rerun-of: a trace whose seeds and start config to use */
    int nset;             /* --set NAME=VALUE overrides of the Dynamo config */
    char **set;
    int64_t capture_values; /* --capture-values: tensor data kept per tensor, bytes (-1: 4096) */
    const char *replay_of;  /* --replay-of: replay trace T's captured frames, not a script */
    const char *replay_backend; /* --replay-backend: recorded (NULL), eager or a name */
    const char *replay_frame;   /* --replay-frame: only frames of this qualname */
    const char *replay_compile; /* --replay-compile: that frame's compiles up to this id */
    const char *trace_label;    /* --trace-label: the name of the --replay-of/--rerun-of
                                 * trace for meta (the trace itself is a private copy) */
    const char *sandboxed;      /* --sandboxed MODE: confined by bwrap; load the seccomp
                                 * filter of that mode first (replayer/sandbox.h) */
} DrRunOptions;

/* Runs the script and returns its exit status, as `python` would (a
 * SystemExit ends the process inside, with the trace closed).  When dynrec
 * itself fails, it prints nothing: err (not NULL) says why, for the command
 * line to print, and the return is the command's exit status (cli/exit.h):
 * 2 (a bad script path, --rerun-of or --replay-of trace, --sandboxed mode),
 * 77 (the sandbox's filter cannot be loaded), 73 (the trace cannot be
 * created), 1 (Python failed to start; the trace records that status). */
int dr_run(const DrRunOptions *o, DrError *err);

/* 1 when an environment variable of this name (NAME or NAME=VALUE) is one
 * a trace records because it can change a run (TORCH*, PYTHON*, ...). */
int dr_run_is_recorded_env(const char *name);

/* The python of $VIRTUAL_ENV, else of the venv dynrec was built for, as a
 * malloc'd path; NULL when neither exists. */
char *dr_run_choose_python(void);

/* Versions of the embedded Python, for --version. */
const char *dr_run_python_version(void);

#ifdef Py_PYTHON_H
/* safe(text) -> str: the terminal sanitizer (schema/text.h) as a METH_O
 * function, in _dynrec and in repro's _dynrec_repro.  Ownership: returns a
 * new reference, or NULL with an exception set (TypeError, MemoryError). */
PyObject *dr_run_py_safe(PyObject *self, PyObject *text);
/* qualname(code) for the same two modules: co_qualname, or co_name on 3.10. */
PyObject *dr_run_py_qualname(PyObject *self, PyObject *code);
/* A dr_trace_query row callback for both modules' query functions: each row
 * as a tuple of str/None (text decoded with "replace"), appended to the list
 * ud (borrowed).  Returns nonzero with a Python exception set. */
int dr_run_py_query_row(void *ud, int n, const char *const *names, const char *const *v);
#endif

#endif
