/* child.h -- internal to replayer/: what rerun.c and replay.c share to run
 * the recorded program again in a child (`dynrec run --rerun-of` or
 * `--replay-of`) and compare its trace with the recording.
 *
 * Every string a DrChild holds lives in its arena.  A failure that ends
 * the command fills a DrError the command line prints ("dynrec CMD: msg");
 * the few functions that write notes say so and take the FILE* they write
 * to.  Only a spawned child writes to the process's own stderr. */
#ifndef DR_REPLAYER_CHILD_H
#define DR_REPLAYER_CHILD_H

#include <stddef.h>
#include <stdio.h>

#include "../cli/exit.h"
#include "../common/util.h"
#include "../schema/error.h"
#include "../schema/trace.h"
#include "model.h"
#include "sandbox.h"

/* One re-run or replay: the recording, its run facts, and what the parent
 * made for the child. */
typedef struct {
    DrArena arena;
    FILE *msgs; /* the command's notes (stderr) */
    DrTrace *t;
    char *cwd, *script, *module, *python_version, *torch_version, *exit_status;
    DrStrVec args; /* the script's own arguments */
    char *tmpdir;  /* --from-trace layout, or a fresh cwd; removed at the end */
    char *run_cwd, *run_target;
    DrStrVec notes;   /* said before running and again in the report */
    DrStrVec changed; /* "file (N lines)" of sources that differ from the recording */
    long left_out;    /* stored files outside the laid-out directory */
    /* The recorded environment variables a replay (or a stranger's
     * re-run) left out, "A, B, ..." (NULL: none): said only beside a
     * difference, which one of them may explain, and in --json. */
    char *env_left_out;
} DrChild;

/* The value of meta key in r's arena, or NULL. */
char *dr_child_meta(DrChild *r, const char *key);

/* s through the terminal sanitizer (schema/text.c), cut to max_cols
 * columns (0: whole), in r's arena; "?" when out of memory.  Every string
 * of the trace or of a stored source that is printed goes through it. */
const char *dr_child_safe(DrChild *r, const char *s, int max_cols);

/* Parses ["a", "b\n", ...] (meta argv, replay.notes) into out, the strings
 * in a; -1 when it is not such an array or a string holds a NUL. */
int dr_child_parse_strings(DrArena *a, const char *s, DrStrVec *out);

/* The bytes of a regular file of at most a source's size (64 MiB), NUL
 * terminated, the caller's to free; NULL when it is not one. */
char *dr_child_read_file(const char *path, size_t *len);

/* The sources the recording stores (v_files: script, main, source). */
typedef struct {
    DrChild *r;
    DrStrVec path, role, blob;
} DrChildFiles;
int dr_child_load_files(DrChild *r, DrChildFiles *f, DrError *err);
void dr_child_free_files(DrChildFiles *f);

/* A private (0700) directory $TMPDIR/dynrec-WHAT-XXXXXX in r->tmpdir,
 * removed at the end; 0, or -1 with err filled. */
int dr_child_tmpdir(DrChild *r, const char *what, DrError *err);

/* Removes dir and everything under it (links are not followed). */
void dr_child_rmtree(const char *dir);

/* The environment of a re-run of this user's own trace: the caller's,
 * with the recorded variables the trace holds (VIRTUAL_ENV, LD_* and
 * DYNREC* stay the caller's); NULL-terminated, strings in r's arena. */
int dr_child_rerun_env(DrChild *r, DrStrVec *env, DrError *err);

/* The environment of a replay (and of a re-run of a stranger's trace): an
 * allow-list of the recorded variables; confined, PATH and HOME are the
 * sandbox's.  The names left out go to r->env_left_out. */
int dr_child_replay_env(DrChild *r, DrStrVec *env, int confined, int trust, DrError *err);

/* "  note: recorded environment left out ...: NAMES" on out when the
 * comparison found a difference and the replay left variables out. */
void dr_child_print_env_note(DrChild *r, FILE *out, int identical);

/* The child's `--sandboxed MODE` (sb not NULL) and `--set NAME=VALUE`
 * arguments, the same for a re-run and a replay. */
void dr_child_push_sandbox_and_sets(DrStrVec *argv, const DrSandbox *sb, int nset,
                                    char *const *set);

/* Checks each --set NAME=VALUE with the venv's Python (a known config
 * name, a Python literal) before anything runs; 0, or DR_EX_USAGE after
 * writing one line per bad setting to msgs ("dynrec rerun: --set ...",
 * for replay too, as it always has). */
int dr_child_check_sets(int nset, char *const *set, FILE *msgs);

/* A trace recorded with another Python minor version than this dynrec
 * embeds (marshalled code and bytecode are per minor version): returns 1
 * with err filled (verb: "re-run", "replay"); 0 when the versions agree or
 * are unknown. */
int dr_child_other_python(const char *verb, const char *trace, const char *recorded, DrError *err);

/* "<stem>-WHAT.db" in this directory, or -2, -3, ... when taken; in r's
 * arena, NULL when none is free. */
char *dr_child_default_out(DrChild *r, const char *trace, const char *what);

/* path made absolute against this directory, in r's arena. */
char *dr_child_absolute(DrChild *r, const char *path);

/* Runs argv (terminated here) with env: under sb's bubblewrap when sb is
 * not NULL, else self in cwd (NULL: this one); its stdout goes to stderr
 * when to_stderr (a report owns stdout).  Waits for it and returns its
 * wait status, or -1.  what names the command in the child's messages. */
int dr_child_spawn(DrChild *r, const DrSandbox *sb, const char *what, const char *self,
                   DrStrVec *argv, DrStrVec *env, const char *cwd, int to_stderr);

/* Opens the recording and loads its decisions (a file that cannot be
 * compared is refused before anything runs); 0, or DR_EX_DATAERR with err
 * filled. */
int dr_child_load_recording(const char *path, DrTrace **t, DrModel **m, DrError *err);

/* Opens the trace a child wrote and loads its decisions (run: "re-run",
 * "replay"); 0, or DR_EX_DATAERR with err filled. */
int dr_child_load_result(const char *run, const char *path, DrTrace **nt, DrModel **mb,
                         DrError *err);

/* Moves the confined child's trace to where the user asked for it
 * (copying across file systems); 0, or -1 after saying why on msgs. */
int dr_child_move_out(const char *from, const char *to, FILE *msgs);

#endif
