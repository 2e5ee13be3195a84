/* pycompat.h -- CPython internals dynrec reads, one accessor per version
 * difference (pycompat.c). */
#ifndef DR_PYCOMPAT_H
#define DR_PYCOMPAT_H

/* Whether the program ended with an uncaught KeyboardInterrupt (Py_RunMain
 * then re-raises SIGINT).  Read at exit, GIL not needed. */
int dr_py_unhandled_keyboard_interrupt(void);

#endif
