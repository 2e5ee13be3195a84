/* session.h -- one recording in this process: the trace being written, the
 * _dynrec module the Python adapter calls, and how a trace starts and ends.
 *
 * Two programs start a session, and share everything here:
 *   - `dynrec run` (run.c) embeds CPython and adds _dynrec as a built-in
 *     module; one session, for the whole run;
 *   - `import dynrec` (inproc.c) loads the same module as an extension into
 *     a running interpreter; dynrec.start()/stop() make one session each,
 *     one after another, in a process that may have compiled already.
 *
 * Threads: everything here runs with the GIL held, except that the writer
 * thread reads the DrStartInfo it was given until the trace is closed. */
#ifndef DR_SESSION_H
#define DR_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"
#include "writer.h"

typedef struct DrSession {
    DrRecorder *rec; /* NULL while nothing is recorded */
    const DrRunOptions *opts;
    long hook_installs;
    int finished;             /* the adapter's finish() ran: counting stopped */
    int in_process;           /* started by dynrec.start(), not by `dynrec run` */
    int dynamo_begin_pending; /* in process, dynamo.py loaded by an earlier session:
                               * its begin_session() runs as Dynamo next turns on */
    unsigned long seeds[2];   /* for _dynrec.seeds (dynrec run only) */
    char *config_start;       /* --rerun-of: the recorded config at start (JSON) */
    DrTrace *source;          /* --replay-of: the trace being replayed, read-only */
} DrSession;

extern DrSession dr_session;

/* What the writer thread puts into a new trace first; filled before the
 * session starts (the program may chdir later), read by the writer. */
typedef struct DrStartInfo {
    const DrRunOptions *o;
    const char *python, *seed, *src;
    size_t srclen;
    char cwd[4096], now[64];
    int64_t start_unix_ns;  /* CLOCK_REALTIME when the session starts */
    unsigned long seeds[2]; /* Python's random, NumPy's global generator */
    int seeded;             /* 0: the recorder seeded neither (in process) */
} DrStartInfo;

/* Fills the clock and cwd fields of si. */
void dr_session_start_info(DrStartInfo *si);

/* The meta and files every trace starts with (command, argv, script, cwd,
 * versions, seeds, recorded environment, the dist.* keys of a torchrun
 * rank, the script's text).  Inside the caller's transaction.  Returns
 * DR_OK or an error with err filled. */
int dr_session_start_meta(DrTrace *t, const DrStartInfo *si, DrError *err);

/* The trace's path: given (-o, or dynrec.start's path) or, when NULL, a
 * fresh "<stem>-YYYYmmdd-HHMMSS.db" in the cwd for target.  In a process
 * of a torchrun job of more than one rank (WORLD_SIZE > 1, RANK set) the
 * name gets "-rankN" before its ".db", so ranks never write one file; a
 * given path that is a directory gets the default name inside.  A malloc'd
 * path, or NULL when out of memory or no free name is found. */
char *dr_session_trace_path(const char *given, const char *target);

/* The rank of this process in a torchrun job (RANK, when WORLD_SIZE > 1),
 * or -1. */
long dr_session_rank(void);

#ifdef Py_PYTHON_H
/* A new _dynrec module object (the built-in's init function, and the
 * extension's).  Ownership: a new reference, or NULL with an exception. */
PyObject *dr_session_module(void);
#endif

/* Sets _dynrec's per-session attributes and runs adapter.py in its
 * namespace (once per process; a later session runs only its begin()).
 * A failure is recorded, never shown: the program must run as it would. */
void dr_session_run_adapter(void);

/* Ends the session: the exit status and signal, the closed trace; a line
 * on stderr unless quiet (run.c stores the program's output first).  Returns DR_OK
 * or the recorder's error (printed). */
int dr_session_finish(int status, int sig);

/* os.fork child: records nothing, never closes the parent's trace. */
void dr_session_atfork_child(void);

/* Reads a whole file into a malloc'd, NUL-terminated buffer; NULL with
 * errno set on error. */
char *dr_session_slurp(const char *path, size_t *len);

#endif
