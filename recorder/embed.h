/* embed.h -- dynrec's Python sources, compiled into the binary, as modules.
 *
 * The Python parts of dynrec (the .py files of recorder/ and replayer/) are not files
 * on the user's machine: the Makefile turns each into a C string and into
 * its code, compiled and marshalled by the Python dynrec is built for
 * (tools/embed_py.py: build/embedded_py.h, the table dr_embedded[]), and
 * this builds modules from them, the way CPython's frozen modules are built
 * from its own bytecode (the text is compiled instead on another Python).
 * Each source is compiled under the name "<dynrec DIR/FILE.py>",
 * so a traceback through it names the real file and line.  The modules are
 * PARENT.NAME (in sys.modules and as attributes of PARENT, whose package
 * they are), so the sources import one another the usual way:
 * `from .dynamo import emit`, `from . import capture`.  No finder is put on
 * sys.meta_path: inside a recorded program nothing may change how the
 * program's own imports are found. */
#ifndef DR_EMBED_H
#define DR_EMBED_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Runs the embedded source NAME ("adapter", "definitions", ...) in the dict
 * ns (borrowed).  Returns 0, or -1 with a Python exception set. */
int dr_embed_exec(const char *name, PyObject *ns);

/* Creates the modules PARENT.NAME for the n names (parent is borrowed and
 * must be in sys.modules under its __name__), all of them first, empty, so
 * that a module may import one later in the list; then runs each source in
 * order.  One made by an earlier call (a module both the recorder and the
 * replay driver import) is that one, not run again.  A source that raises
 * stops the rest; the modules stay, as far as they got.  Returns 0, or -1 with a Python exception
 * set. */
int dr_embed_modules(PyObject *parent, const char *const *names, size_t n);

/* _dynrec.load_embedded(*names): dr_embed_modules on the module self, for
 * the replay driver's bootstrap.  A METH_FASTCALL function. */
PyObject *dr_embed_load_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
