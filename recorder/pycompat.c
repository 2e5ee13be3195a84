/* pycompat.c -- what dynrec reads of CPython's internal state, per version.
 *
 * A translation unit of its own: from 3.12 the state it reads is declared
 * in internal headers, which must see Py_BUILD_CORE before Python.h does.
 * The rest of dynrec uses the public and cpython/ API only (the frame
 * hook's version differences live beside its hot path in hook.c). */
#include <patchlevel.h> /* PY_VERSION_HEX, before Python.h decides the build */

#if PY_VERSION_HEX >= 0x030C0000
#define Py_BUILD_CORE
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>
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
