/* pycompat.c -- what dynrec reads of CPython's internal state, per version.
 *
 * A translation unit of its own: from 3.12 the state it reads is declared
 * in internal headers (from 3.12 for the signal state, on every version
 * for the collector's), which must see Py_BUILD_CORE before Python.h does.
 * The rest of dynrec uses the public and cpython/ API only (the frame
 * hook's version differences live beside its hot path in hook.c). */
#include <patchlevel.h> /* PY_VERSION_HEX, before Python.h decides the build */

#define Py_BUILD_CORE
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <internal/pycore_interp.h>
#if PY_VERSION_HEX >= 0x030C0000
#include <internal/pycore_runtime.h>
#endif

#include "pycompat.h"

/* Set by CPython when the script died of an uncaught KeyboardInterrupt
 * (Py_RunMain then re-raises SIGINT after finalizing): a global up to 3.11,
 * a field of the runtime state from 3.12 (Include/internal/pycore_signal.h). */
#if PY_VERSION_HEX < 0x030C0000
extern int _Py_UnhandledKeyboardInterrupt;
int dr_py_unhandled_keyboard_interrupt(void) { return _Py_UnhandledKeyboardInterrupt; }
#else
int dr_py_unhandled_keyboard_interrupt(void) {
    return _PyRuntime.signals.unhandled_keyboard_interrupt;
}
#endif

/* The cyclic collector runs when the allocations of tracked objects, net of
 * deallocations, pass a threshold (gc.get_count()[0]); its full collections
 * when enough objects have survived two.  The recorder's own Python work
 * (building an event, a value tree) allocates, and on a program poised
 * near a threshold that shifts every later collection, and can add a full
 * one: 140 ms on a process holding torch and a model (bench/gc_clock.sh).
 * So while dynrec's hooks run, collection is off and the youngest
 * generation's count is put back afterwards: the program's collections
 * come when they would have without dynrec.  The count is a field of the
 * interpreter's collector state, Include/internal/pycore_gc.h, the same
 * from 3.10 to 3.13 (3.14 replaces it: support stops there).  Collection
 * is off for the interpreter, not the thread: where the held work lets the
 * GIL go (reading a source file), another thread sees gc.isenabled()
 * False for that moment, and what it allocates then is not counted. */
void dr_py_gc_hold(DrGcHold *h) {
    PyInterpreterState *is = PyInterpreterState_Get();
    h->count = is->gc.generations[0].count;
    h->enabled = PyGC_Disable();
}

void dr_py_gc_release(const DrGcHold *h) {
    PyInterpreterState *is = PyInterpreterState_Get();
    is->gc.generations[0].count = h->count;
    if (h->enabled) PyGC_Enable();
}

static Py_ssize_t young_objects(PyInterpreterState *is) {
    PyGC_Head *head = is->gc.generation0, *g;
    Py_ssize_t n = 0;
    for (g = _PyGCHead_NEXT(head); g != head; g = _PyGCHead_NEXT(g)) n++;
    return n;
}

/* Loading the adapter makes the objects dynrec keeps for the whole run
 * (its modules' functions and classes, the hooks: ~600).  A full
 * collection comes when the survivors moved to the oldest generation since
 * the last one pass a quarter of it (long_lived_pending); dynrec's own are
 * taken out of that count here, before the collections that will move
 * them there add them in (a full collection first resets the count
 * anyway).  They are counted while collection is off, so none has left
 * the youngest generation yet. */
void dr_py_gc_hold_keep(DrGcHold *h) {
    dr_py_gc_hold(h);
    h->young = young_objects(PyInterpreterState_Get());
}

void dr_py_gc_release_keep(const DrGcHold *h) {
    PyInterpreterState *is = PyInterpreterState_Get();
    Py_ssize_t kept = young_objects(is) - h->young;
    if (kept > 0) is->gc.long_lived_pending -= kept;
    dr_py_gc_release(h);
}
