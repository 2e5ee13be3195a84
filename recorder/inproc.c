/* inproc.c -- the recorder as an extension module, for a running interpreter.
 *
 * `import dynrec` loads this as dynrec._dynrec: the _dynrec module of
 * session.c (the one `dynrec run` builds in) plus start() and stop(), which
 * python/dynrec/__init__.py wraps as dynrec.start/stop/record.  One session
 * at a time; any number, one after another, in one process (the pytest
 * plugin records each test).
 *
 * What differs from `dynrec run`, because the program is not ours to start:
 *   - nothing is seeded (the program's random state is its own), and the
 *     hash seed is whatever the interpreter got (meta hash_seed "unknown"
 *     unless PYTHONHASHSEED is set);
 *   - the program's stdout and stderr are not kept (output.c works by being
 *     the executable's write(2));
 *   - SIGTERM is the program's: a session ended by a signal keeps what the
 *     writer committed (every DR_FLUSH_MS) and is marked incomplete;
 *   - what Dynamo did before start() is not invented: meta
 *     inprocess.torch_imported and inprocess.compiles_before say how much
 *     there was (adapter.py), and compile ids go on from Dynamo's count. */
#define _GNU_SOURCE 1
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../schema/trace.h"
#include "default_dict.h"
#include "hook.h"
#include "session.h"

/* The session's options and start info live until the next start(): the
 * writer thread reads them until the trace is closed. */
static struct {
    DrRunOptions opts;
    DrStartInfo si;
    char *path, *target, *python, *src;
    char **argv, **cmd;
    int argc, ncmd;
} S;

static void free_strings(char **v, int n) {
    for (int i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

static void clear_previous(void) {
    free(S.path);
    free(S.target);
    free(S.python);
    free(S.src);
    free_strings(S.argv, S.argc);
    free_strings(S.cmd, S.ncmd);
    memset(&S, 0, sizeof S);
}

/* A list of str -> malloc'd C strings.  Returns 0, or -1 with an exception. */
static int strings_of(PyObject *list, char ***out, int *n) {
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "start: argv and command must be lists of str");
        return -1;
    }
    Py_ssize_t len = PyList_GET_SIZE(list);
    if (len > 100000) len = 100000;
    char **v = calloc((size_t)len + 1, sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *s = PyList_GET_ITEM(list, i); /* borrowed */
        const char *u = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
        if (!u) PyErr_Clear();
        v[i] = strdup(u ? u : "?");
        if (!v[i]) {
            free_strings(v, (int)i);
            PyErr_NoMemory();
            return -1;
        }
    }
    *out = v;
    *n = (int)len;
    return 0;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* The deferred part of starting, on the writer thread (run.c's twin). */
static int setup_trace(DrTrace *t, void *ud, DrError *err) {
    const DrStartInfo *si = ud;
    int rc = dr_trace_use_dict(t, dr_default_dict, sizeof dr_default_dict, err);
    if (rc == DR_OK) rc = dr_trace_begin(t, err);
    if (rc == DR_OK) rc = dr_session_start_meta(t, si, err);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "recorded_by", "in-process", err);
    if (rc == DR_OK) rc = dr_trace_commit(t, err);
    return rc;
}

static void atfork_child(void) { dr_session_atfork_child(); }

PyDoc_STRVAR(start_doc,
             "start(path, target, argv, command, python, quiet, capture_values, replace,\n"
             "is_module) -> str: begin a session writing the trace at path (None: a\n"
             "fresh name for target in the cwd); target is the main script, or with\n"
             "is_module the main module's name (a notebook kernel's).  Returns the\n"
             "trace's path.  RuntimeError while a session records; OSError when the\n"
             "trace cannot be created.");
static PyObject *m_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "start() takes 9 arguments");
        return NULL;
    }
    if (dr_session.rec) {
        PyErr_Format(PyExc_RuntimeError, "dynrec is recording already (to %s); stop() first",
                     S.path ? S.path : "?");
        return NULL;
    }
    const char *path = NULL, *target = NULL, *python = NULL;
    if ((args[0] != Py_None && !(path = PyUnicode_AsUTF8(args[0]))) ||
        (args[1] != Py_None && !(target = PyUnicode_AsUTF8(args[1]))) ||
        (args[4] != Py_None && !(python = PyUnicode_AsUTF8(args[4]))))
        return NULL;
    int quiet = PyObject_IsTrue(args[5]);
    long long cv = PyLong_AsLongLong(args[6]);
    int replace = PyObject_IsTrue(args[7]);
    int is_module = PyObject_IsTrue(args[8]);
    if (quiet < 0 || replace < 0 || is_module < 0 || (cv == -1 && PyErr_Occurred())) return NULL;

    clear_previous();
    if (strings_of(args[2], &S.argv, &S.argc) < 0 || strings_of(args[3], &S.cmd, &S.ncmd) < 0)
        goto fail;
    S.target = dup_or_null(target);
    S.python = strdup(python ? python : "");
    S.path = dr_session_trace_path(path, target);
    if ((target && !S.target) || !S.python || !S.path) {
        PyErr_NoMemory();
        goto fail;
    }
    struct stat sb;
    size_t srclen = 0;
    if (S.target && !is_module && stat(S.target, &sb) == 0 && S_ISREG(sb.st_mode))
        S.src = dr_session_slurp(S.target, &srclen);
    S.opts = (DrRunOptions){.trace_path = S.path,
                            .quiet = quiet,
                            .target = S.target,
                            .is_module = is_module,
                            .argc = S.argc,
                            .argv = S.argv,
                            .cmd_argc = S.ncmd,
                            .cmd_argv = S.cmd,
                            .capture_values = cv};
    DrError err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = dr_trace_reserve(S.path, replace, &err);
    Py_END_ALLOW_THREADS if (rc != DR_OK) {
        PyErr_SetString(PyExc_OSError, err.msg);
        goto fail;
    }
    if (dr_hook_init() != 0) {
        PyErr_NoMemory();
        goto fail;
    }
    const char *env_seed = getenv("PYTHONHASHSEED");
    S.si = (DrStartInfo){.o = &S.opts,
                         .python = S.python,
                         .seed = env_seed && *env_seed ? env_seed : "unknown",
                         .src = S.src,
                         .srclen = S.src ? srclen : 0};
    dr_session_start_info(&S.si);
    dr_session.rec = dr_rec_start_deferred(S.path, setup_trace, &S.si, dr_hook_snapshot, &err);
    if (!dr_session.rec) {
        dr_hook_free();
        PyErr_SetString(PyExc_OSError, err.msg);
        goto fail;
    }
    static int atfork_done;
    if (!atfork_done && pthread_atfork(NULL, NULL, atfork_child) == 0) atfork_done = 1;
    dr_rec_keep_library(dr_session.rec, 0);
    dr_session.opts = &S.opts;
    dr_session.finished = 0;
    dr_session.hook_installs = 0;
    dr_session.in_process = 1;
    dr_session.dynamo_begin_pending = 1; /* no-op until dynamo.py is loaded */
    dr_session_run_adapter();
    return PyUnicode_FromString(S.path);
fail:
    clear_previous();
    return NULL;
}

PyDoc_STRVAR(stop_doc,
             "stop(status) -> bool: end the session with that exit status (0 for a block\n"
             "that returned, 1 for one that raised); False when none was recording.\n"
             "OSError when the trace could not be written whole (what was committed\n"
             "stays readable).");
static PyObject *m_stop(PyObject *self, PyObject *arg) {
    long status = PyLong_AsLong(arg);
    if (status == -1 && PyErr_Occurred()) return NULL;
    if (!dr_session.rec) Py_RETURN_FALSE;
    /* The adapter's end of the session: hook states, the torch version,
     * counting stopped and the frame hook taken out (m_finish). */
    PyObject *res = PyObject_CallMethod(self, "_finish", NULL);
    if (!res) PyErr_Clear(); /* _finish records its own errors */
    Py_XDECREF(res);
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = dr_session_finish((int)status, 0);
    Py_END_ALLOW_THREADS dr_hook_free();
    if (rc != DR_OK && rc != DR_ERR_WAL_KEPT) {
        PyErr_Format(PyExc_OSError, "dynrec: the trace %s is incomplete", S.path);
        return NULL;
    }
    Py_RETURN_TRUE;
}

PyDoc_STRVAR(recording_doc, "recording() -> str | None: the trace being written now.");
static PyObject *m_recording(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    if (!dr_session.rec) Py_RETURN_NONE;
    return PyUnicode_FromString(S.path);
}

static PyMethodDef inproc_methods[] = {
    {"start", (PyCFunction)(void (*)(void))m_start, METH_FASTCALL, start_doc},
    {"stop", m_stop, METH_O, stop_doc},
    {"recording", m_recording, METH_NOARGS, recording_doc},
    {NULL, NULL, 0, NULL}};

PyMODINIT_FUNC PyInit__dynrec(void);
PyMODINIT_FUNC PyInit__dynrec(void) {
    PyObject *mod = dr_session_module();
    if (!mod) return NULL;
    if (PyModule_AddFunctions(mod, inproc_methods) < 0 ||
        PyModule_AddIntConstant(mod, "in_process", 1) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
