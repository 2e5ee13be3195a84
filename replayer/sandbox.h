/* sandbox.h -- the confinement of a process that runs code derived from a
 * trace (the replay child).
 *
 * Two layers, both the field's own tools rather than a home-made jail:
 *   - bubblewrap (bwrap) builds the namespaces and the mounts: no network,
 *     a read-only view of only the interpreter, the venv, the dynrec binary
 *     and the validated copy of the trace, a private /tmp, no $HOME, and one
 *     writable folder for the output trace;
 *   - a seccomp filter (libseccomp), loaded by the child itself once it
 *     runs (bwrap would have to exec the child after loading it), denies
 *     execve and the calls that reach outside the namespaces.
 * Resource limits (memory, CPU time, file size) are set before bwrap runs
 * and hold for everything under it. */
#ifndef DR_SANDBOX_H
#define DR_SANDBOX_H

#include <stddef.h>

#include "../common/util.h"

/* How a child is confined: what its seccomp filter allows, and what show
 * and the reports print for it (meta `sandbox`).  The child is told the
 * mode by name (`dynrec run --sandboxed NAME`). */
typedef enum {
    DR_SBX_NONE,     /* not confined */
    DR_SBX_REPLAY,   /* a replay: no exec */
    DR_SBX_INDUCTOR, /* a replay with inductor, which runs the C++ compiler */
    DR_SBX_RERUN,    /* a re-run of a program: exec allowed, its folder writable */
} DrSandboxMode;
#define DR_SANDBOX_DESC "bubblewrap+seccomp (no network, read-only, no exec)"

/* The mode's name for --sandboxed, its description, and the mode of a
 * name (DR_SBX_NONE for an unknown one). */
const char *dr_sandbox_mode_name(DrSandboxMode m);
const char *dr_sandbox_mode_desc(DrSandboxMode m);
DrSandboxMode dr_sandbox_mode_of(const char *name);

typedef struct {
    const char *bwrap;      /* the bwrap binary (dr_sandbox_probe) */
    const char *self;       /* the dynrec binary to run inside */
    const char *python;     /* the venv's python (its venv and interpreter are mounted) */
    const char *in_dir;     /* mounted read-only: the validated copy of the trace */
    const char *out_dir;    /* mounted read-write: where the child writes its trace */
    const char *run_dir;    /* NULL, or a re-run's folder: mounted */
    int run_dir_rw;         /* run_dir writable (a private layout of stored sources) */
    const char *also_ro;    /* NULL, or one more folder mounted read-only (the script's) */
    const char *cwd;        /* the child's working directory (default run_dir, else /tmp) */
    const char *pythonpath; /* NULL, or dr_sandbox_pythonpath(): each folder mounted read-only */
    DrSandboxMode mode;
} DrSandbox;

/* Whether bubblewrap can confine a child on this machine: finds bwrap and
 * runs it once.  Returns the malloc'd path of bwrap, or NULL with why[]
 * saying what is missing and how to get it. */
char *dr_sandbox_probe(char *why, size_t whylen);

/* The caller's PYTHONPATH (libraries installed outside the venv, a
 * checkout of one), its absolute paths of existing folders only, as
 * their real paths joined by ':' (kept in a); NULL when none.  A relative
 * entry would name a folder of the replay's working directory, which can
 * be the trace's: never kept. */
const char *dr_sandbox_pythonpath(DrArena *a);

/* Appends to argv the bwrap command line that runs `self args...` (args
 * being the child's own argv from its argv[1]) confined as above. Strings
 * are kept in a.  Returns 0, or -1 when out of memory. */
int dr_sandbox_argv(DrArena *a, const DrSandbox *sb, char *const *args, DrStrVec *argv);

/* Sets the resource limits of the confined process tree; for the forked
 * child, before it execs bwrap.  Async-signal-safe. */
void dr_sandbox_limits(void);

/* Loads the seccomp filter into this process (all its threads): execve and
 * execveat fail with EPERM (unless allow_exec: inductor runs g++, on the
 * read-only binaries of the sandbox), and so do the calls that would reach
 * outside the namespaces (ptrace, mount, namespaces, keyrings, bpf, ...).
 * Returns 0, or -1 with why[] filled. */
int dr_sandbox_lockdown(DrSandboxMode mode, char *why, size_t whylen);

#endif
