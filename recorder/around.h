/* around.h -- _dynrec.around: a wrapper whose call of the wrapped function
 * leaves no Python frame of dynrec's on the stack or in a traceback. */
#ifndef DR_AROUND_H
#define DR_AROUND_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Adds the type `around` to the module mod.  Returns 0, or -1 with a
 * Python exception set.  Ownership: mod is borrowed. */
int dr_around_add(PyObject *mod);

#endif
