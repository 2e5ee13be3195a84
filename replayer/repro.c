/* repro.c -- `dynrec repro`: one recorded frame as a standalone script.
 *
 * The script is written by replayer/repro.py, with repro_values.py and
 * definitions.py (compiled into the binary, the modules _dynrec_repro.NAME:
 * ../recorder/embed.h), which run in an interpreter embedded here: isolated (no environment
 * variables, no user site, no site-packages), so it imports neither torch
 * nor anything of the user's, and it reads the trace only through the two
 * functions of the built-in module _dynrec_repro below.  The trace is
 * opened read-only by schema/trace.c, which checks it is a trace first: a
 * junk file is refused naming it, before Python starts. */
#define _GNU_SOURCE 1
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "repro.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../recorder/run.h"
#include "../schema/trace.h"
#include "../recorder/embed.h"

static DrTrace *g_trace; /* the trace the generator reads */

/* query(sql) -> list of tuples.  Ownership: returns a new reference. */
static PyObject *m_query(PyObject *self, PyObject *sql) {
    (void)self;
    const char *q = PyUnicode_Check(sql) ? PyUnicode_AsUTF8(sql) : NULL;
    if (!q) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "query needs a str");
        return NULL;
    }
    PyObject *rows = PyList_New(0);
    if (!rows) return NULL;
    DrError err = {0};
    int rc = dr_trace_query(g_trace, q, dr_run_py_query_row, rows, &err);
    if (PyErr_Occurred()) {
        Py_DECREF(rows);
        return NULL;
    }
    if (rc != DR_OK) {
        Py_DECREF(rows);
        PyErr_SetString(PyExc_OSError, err.msg);
        return NULL;
    }
    return rows;
}

/* blob(id, max_len) -> bytes.  Ownership: returns a new reference. */
static PyObject *m_blob(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "blob(id, max_len) takes 2 arguments");
        return NULL;
    }
    long long id = PyLong_AsLongLong(args[0]);
    long long max = PyLong_AsLongLong(args[1]);
    if (PyErr_Occurred()) return NULL;
    if (id <= 0 || max <= 0) {
        PyErr_SetString(PyExc_OSError, "no such blob");
        return NULL;
    }
    void *buf = NULL;
    size_t len = 0;
    DrError err = {0};
    if (dr_trace_read_blob(g_trace, id, (size_t)max, &buf, &len, &err) != DR_OK) {
        PyErr_SetString(PyExc_OSError, err.msg);
        return NULL;
    }
    PyObject *o = PyBytes_FromStringAndSize(buf, (Py_ssize_t)len);
    free(buf);
    return o;
}

static PyMethodDef repro_methods[] = {
    {"query", m_query, METH_O, "query(sql): rows of a query on the trace, as tuples of str/None"},
    {"blob", (PyCFunction)(void (*)(void))m_blob, METH_FASTCALL,
     "blob(id, max_len): a blob of the trace, decoded; OSError when bad or too long"},
    {"safe", dr_run_py_safe, METH_O, "safe(text): text made safe to print on a terminal"},
    {"qualname", dr_run_py_qualname, METH_O, "qualname(code): co_qualname, or co_name on 3.10"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef repro_module = {PyModuleDef_HEAD_INIT,
                                          "_dynrec_repro",
                                          "dynrec repro's access to the trace.",
                                          -1,
                                          repro_methods,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL};

/* Ownership: returns a new reference (the module), as inittab wants. */
static PyObject *init_repro_module(void) { return PyModule_Create(&repro_module); }

/* Writes len bytes to path (or out when path is NULL); 0 or -1 with err
 * filled. */
static int write_script(const char *path, FILE *out, const char *text, size_t len, DrError *err) {
    FILE *f = path ? fopen(path, "w") : out;
    if (!f) {
        dr_error(err, DR_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    int bad = fwrite(text, 1, len, f) != len;
    bad |= path ? fclose(f) != 0 : fflush(f) != 0;
    if (bad) {
        dr_error(err, DR_ERR_IO, "cannot write %s: %s", path ? path : "<stdout>", strerror(errno));
        return -1;
    }
    return 0;
}

/* Runs the generator's main(opts).  Returns the exit status; on success
 * *text is a malloc'd copy of the script.  A Python error (a bug in the
 * generator) is written to msgs, its traceback to Python's sys.stderr, and
 * returns DR_EX_SOFTWARE. */
static int run_generator(const DrReproOptions *o, FILE *msgs, char **text, size_t *len,
                         DrError *err) {
    int status = DR_EX_SOFTWARE;
    PyObject *mod = NULL, *res = NULL, *opts = NULL, *ret = NULL;
    static const char *const parts[] = {"value_kinds", "recorded", "definitions", "repro_values",
                                        "repro"};
    PyObject *parent = PyImport_ImportModule("_dynrec_repro");
    if (!parent) goto error;
    int loaded = dr_embed_modules(parent, parts, sizeof parts / sizeof *parts);
    mod = loaded == 0 ? PyObject_GetAttrString(parent, "repro") : NULL;
    Py_DECREF(parent);
    if (!mod) goto error;
    opts =
        Py_BuildValue("{s:s,s:z,s:z}", "trace", o->trace, "frame", o->frame, "compile", o->compile);
    if (!opts) goto error;
    PyObject *fn = PyDict_GetItemString(PyModule_GetDict(mod), "main"); /* borrowed */
    if (!fn) {
        PyErr_SetString(PyExc_RuntimeError, "repro.py has no main");
        goto error;
    }
    ret = PyObject_CallOneArg(fn, opts);
    if (!ret) goto error;
    int st;
    PyObject *script;
    const char *why;
    if (!PyArg_ParseTuple(ret, "iOz", &st, &script, &why)) goto error;
    /* A listing of many frames can outgrow a DrError: said here whole. */
    if (why && strlen(why) < sizeof err->msg)
        dr_error(err, st == DR_EX_USAGE ? DR_ERR_ARG : DR_ERR_CORRUPT, "%s", why);
    else if (why) fprintf(msgs, "dynrec repro: %s\n", why);
    if (script != Py_None) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(script, &n);
        if (!s) goto error;
        *text = malloc((size_t)n + 1);
        if (!*text) {
            PyErr_NoMemory();
            goto error;
        }
        memcpy(*text, s, (size_t)n + 1);
        *len = (size_t)n;
    }
    status = st;
    goto out;
error:
    fprintf(msgs, "dynrec repro: internal error in the generator (a bug in dynrec):\n");
    fflush(msgs);
    PyErr_Print();
out:
    Py_XDECREF(ret);
    Py_XDECREF(opts);
    Py_XDECREF(res);
    Py_XDECREF(mod);
    return status;
}

int dr_repro(const DrReproOptions *o, FILE *out, FILE *msgs, DrError *err) {
    g_trace = dr_trace_open(o->trace, err);
    if (!g_trace) return DR_EX_DATAERR;
    char *python = dr_run_choose_python();
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.site_import = 0;
    config.install_signal_handlers = 0;
    config.write_bytecode = 0;
    PyStatus st = PyStatus_Ok();
    if (python) st = PyConfig_SetBytesString(&config, &config.executable, python);
    if (!PyStatus_Exception(st) && PyImport_AppendInittab("_dynrec_repro", init_repro_module) < 0)
        st = PyStatus_NoMemory();
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    free(python);
    if (PyStatus_Exception(st)) {
        dr_error(err, DR_ERR_ARG, "Python failed to start: %s%s%s", st.func ? st.func : "",
                 st.func ? ": " : "", st.err_msg ? st.err_msg : "");
        dr_trace_free(g_trace);
        g_trace = NULL;
        return DR_EX_SOFTWARE;
    }
    char *text = NULL;
    size_t len = 0;
    int status = run_generator(o, msgs, &text, &len, err);
    if (Py_FinalizeEx() < 0 && status == 0) status = DR_EX_SOFTWARE;
    if (text && write_script(o->out, out, text, len, err) != 0) status = DR_EX_CANTCREAT;
    else if (text && o->out) fprintf(msgs, "dynrec repro: %s\n", o->out);
    free(text);
    dr_trace_free(g_trace);
    g_trace = NULL;
    return status;
}
