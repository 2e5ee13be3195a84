/* hook.h -- dynrec's PEP 523 frame-evaluation function and its counters.
 *
 * The hook counts evaluations per code object at C speed: one pointer-hash
 * lookup and one counter increment per frame, no allocation, no Python call.
 * It is installed only while something needs it (while Dynamo's own frame
 * function is active, or for the whole run with --all-frames); Dynamo saves
 * the function it finds installed and forwards the frames it does not
 * intercept, and the compiled code it runs from its cache, to it.
 *
 * Threads: the hook and every function here except dr_hook_snapshot run with
 * the GIL held.  dr_hook_snapshot is called by the trace writer thread
 * without the GIL; a mutex orders it against table growth. */
#ifndef DR_HOOK_H
#define DR_HOOK_H

#include <stddef.h>
#include <stdint.h>

/* What the writer learns about one code object.  filename and qualname are
 * C copies made when the code object was first seen; they stay valid until
 * dr_hook_free. */
typedef struct DrCodeInfo {
    uint32_t index; /* stable entry index, 0.. */
    const char *filename;
    const char *qualname;
    int firstlineno;
    uint64_t calls;   /* fresh evaluations of the code object */
    uint64_t resumes; /* re-entries of a suspended generator/coroutine frame */
} DrCodeInfo;

/* Allocates the table.  Returns 0, or -1 when out of memory. */
int dr_hook_init(void);

/* Installs the hook as the interpreter's frame-evaluation function if no
 * frame function is installed; returns 1 when it installed it now, 0 when
 * it was installed already or another function is in place. */
int dr_hook_install(void);
/* Removes the hook if it is the installed function. */
void dr_hook_uninstall(void);
/* 1 when the hook is the interpreter's current frame function. */
int dr_hook_is_installed(void);
/* Turns counting on or off; when off the hook only forwards frames. */
void dr_hook_set_counting(int on);
/* on: this thread enters Dynamo's frame callback (a cache miss: its
 * compile, the backend it calls); 0: leaves it.  The frames run inside,
 * Dynamo's own tracing, are not the program's and are not counted:
 * Dynamo forwards each of them to the hook, and counting them cost its
 * compiles several percent.  Nests; per thread. */
void dr_hook_pause(int on);
/* 1 when the hook disabled itself after an internal failure. */
int dr_hook_failed(void);

/* The stable entry index of a code object in the table, adding it (with
 * zero counts) if it was never run under the hook; -1 once counting has been
 * released or after a failure.  GIL held.  (PyCodeObject is opaque here.) */
struct PyCodeObject;
long dr_hook_code_index(struct PyCodeObject *co);

/* Drops the references the table holds to code objects (GIL held, before
 * the interpreter finalizes).  Counting stops; counts and names remain for
 * the last snapshot. */
void dr_hook_release(void);

/* Calls fn for every code object seen so far, in entry order, with its
 * current counts; the caller keeps what it already wrote and skips
 * unchanged entries.  Safe without the GIL (fn must not take it).  Returns
 * the number of entries. */
typedef void (*DrCodeFn)(void *ud, const DrCodeInfo *info);
long dr_hook_snapshot(DrCodeFn fn, void *ud);

/* Frees everything (after the interpreter is gone). */
void dr_hook_free(void);

#endif
