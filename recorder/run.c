/* run.c -- `dynrec run`: embed CPython, run the script as `python` would, record.
 *
 * The interpreter is configured the way the `python` of the chosen virtual
 * environment configures itself (PyConfig_InitPythonConfig reads the same
 * environment variables; the venv's python is the executable, so its
 * pyvenv.cfg and site-packages apply), then Py_RunMain runs the script or
 * module: sys.argv, sys.path[0], __main__, tracebacks and SystemExit are
 * CPython's own code, not an imitation.  Before the script starts, the
 * built-in _dynrec module runs the Python adapter (adapter.py).
 *
 * The trace is closed after Py_RunMain returns, with the exit status; when
 * an uncaught KeyboardInterrupt makes CPython kill itself with SIGINT after
 * finalizing, a Py_AtExit callback closes it first.  SIGTERM is handled by
 * the writer thread (writer.c). */
#define _GNU_SOURCE 1
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "run.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cli/exit.h"
#include "../schema/json.h"
#include "../schema/mask.h"
#include "../schema/sign.h"
#include "../schema/text.h"
#include "../schema/trace.h"
#include "../replayer/sandbox.h"
#include "adapter_py.h"
#include "around.h"
#include "capture_py.h"
#include "default_dict.h"
#include "dynamo_py.h"
#include "dynamo_spec_py.h"
#include "hook.h"
#include "output.h"
#include "replay_py.h"
#include "pycompat.h"
#include "writer.h"

#ifndef DR_DEFAULT_VENV
#define DR_DEFAULT_VENV ""
#endif


static struct {
    DrRecorder *rec;
    const DrRunOptions *opts;
    long hook_installs;
    int finished;
    unsigned long seeds[2];  /* for _dynrec.seeds */
    char *config_start;      /* --rerun-of: the recorded config at start (JSON) */
    DrTrace *source;         /* --replay-of: the trace being replayed, read-only */
} R;

const char *dr_run_python_version(void) { return Py_GetVersion(); }

static int64_t thread_id(void) { return (int64_t)PyThread_get_thread_ident(); }

/* Reads a whole file into a malloc'd buffer; NULL with errno set on error. */
static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* ---- the _dynrec module ------------------------------------------------ */

/* Borrowed str/bytes/None -> pointer and length; 0 on success, -1 with a
 * TypeError set. */
static int text_arg(PyObject *o, const char **s, Py_ssize_t *n, const char *what) {
    if (o == Py_None) {
        *s = NULL;
        *n = 0;
        return 0;
    }
    if (PyUnicode_Check(o)) return (*s = PyUnicode_AsUTF8AndSize(o, n)) ? 0 : -1;
    if (PyBytes_Check(o)) {
        char *p;
        if (PyBytes_AsStringAndSize(o, &p, n) < 0) return -1;
        *s = p;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "_dynrec: %s must be str, bytes or None", what);
    return -1;
}

/* A code object or None -> hook entry index (-1 for None); -2 with a
 * TypeError set for anything else. */
static long code_arg(PyObject *o) {
    if (o == Py_None) return -1;
    if (!PyCode_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "_dynrec: code must be a code object or None");
        return -2;
    }
    return dr_hook_code_index((PyCodeObject *)o);
}

PyDoc_STRVAR(event_doc,
             "event(kind, code, code2, compile_id, num, text, data, payload, key):\n"
             "append one event to the trace.  code/code2: code objects or None;\n"
             "compile_id, text, data (JSON), key: str or None; payload: str, bytes or None.");
static PyObject *m_event(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "event() takes 9 arguments");
        return NULL;
    }
    DrRecEvent ev = {.thread = thread_id()};
    const char *cid;
    Py_ssize_t klen, clen, tlen, dlen, plen, ylen;
    if (text_arg(args[0], &ev.kind, &klen, "kind") < 0) return NULL;
    if (!ev.kind) {
        PyErr_SetString(PyExc_TypeError, "event kind must be a str");
        return NULL;
    }
    if ((ev.code = code_arg(args[1])) == -2 || (ev.code2 = code_arg(args[2])) == -2) return NULL;
    if (text_arg(args[3], &cid, &clen, "compile_id") < 0) return NULL;
    ev.compile_id = cid;
    long long num = PyLong_AsLongLong(args[4]);
    if (num == -1 && PyErr_Occurred()) return NULL;
    ev.num = num;
    const char *payload;
    if (text_arg(args[5], &ev.text, &tlen, "text") < 0 ||
        text_arg(args[6], &ev.data, &dlen, "data") < 0 ||
        text_arg(args[7], &payload, &plen, "payload") < 0 ||
        text_arg(args[8], &ev.key, &ylen, "key") < 0)
        return NULL;
    ev.text_len = (size_t)tlen;
    ev.data_len = (size_t)dlen;
    ev.key_len = (size_t)ylen;
    ev.payload = payload;
    ev.payload_len = (size_t)plen;
    dr_rec_event_full(R.rec, &ev);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(guard_doc,
             "guard(code, compile_id, text, text_template, source, user_location, key,\n"
             "masked_template): append one guard event.  Either text or text_template\n"
             "(the text with chr(1) for the source), and key, masked_template (the\n"
             "masked text so written) or neither; all str or None.");
static PyObject *m_guard(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "guard() takes 8 arguments");
        return NULL;
    }
    DrRecEvent ev = {.thread = thread_id(), .kind = "guard", .code2 = -1, .guard = 1};
    Py_ssize_t n, tlen, ylen;
    if ((ev.code = code_arg(args[0])) == -2) return NULL;
    if (text_arg(args[1], &ev.compile_id, &n, "compile_id") < 0 ||
        text_arg(args[2], &ev.text, &tlen, "text") < 0 ||
        text_arg(args[3], &ev.guard_text, &n, "text_template") < 0 ||
        text_arg(args[4], &ev.guard_source, &n, "source") < 0 ||
        text_arg(args[5], &ev.guard_location, &n, "user_location") < 0 ||
        text_arg(args[6], &ev.key, &ylen, "key") < 0 ||
        text_arg(args[7], &ev.guard_masked, &n, "masked_template") < 0)
        return NULL;
    ev.text_len = (size_t)tlen;
    ev.key_len = (size_t)ylen;
    dr_rec_event_full(R.rec, &ev);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(values_doc,
             "values(capture, rows): store a captured value tree; rows are tuples\n"
             "(node, kind, type, value_json, data) with data bytes or None.");
static PyObject *m_values(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "values(capture, rows) takes an int and a list");
        return NULL;
    }
    long long capture = PyLong_AsLongLong(args[0]);
    if (capture == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(args[1]);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(args[1], i); /* borrowed */
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != 5) {
            PyErr_SetString(PyExc_TypeError, "values: each row is a 5-tuple");
            return NULL;
        }
        long long node = PyLong_AsLongLong(PyTuple_GET_ITEM(row, 0));
        if (node == -1 && PyErr_Occurred()) return NULL;
        const char *kind, *type, *value, *data;
        Py_ssize_t kl, tl, vl, dl;
        if (text_arg(PyTuple_GET_ITEM(row, 1), &kind, &kl, "kind") < 0 ||
            text_arg(PyTuple_GET_ITEM(row, 2), &type, &tl, "type") < 0 ||
            text_arg(PyTuple_GET_ITEM(row, 3), &value, &vl, "value") < 0 ||
            text_arg(PyTuple_GET_ITEM(row, 4), &data, &dl, "data") < 0)
            return NULL;
        if (!kind || !type) {
            PyErr_SetString(PyExc_TypeError, "values: kind and type must be str");
            return NULL;
        }
        dr_rec_value(R.rec, capture, node, kind, type, value, value ? (size_t)vl : 0, data,
                     data ? (size_t)dl : 0);
    }
    Py_RETURN_NONE;
}

/* Row callback of m_source_query: each row as a tuple of str/None. */
static int query_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    PyObject *tup = PyTuple_New(n);
    if (!tup) return 1;
    for (int i = 0; i < n; i++) {
        PyObject *o = v[i] ? PyUnicode_DecodeUTF8(v[i], (Py_ssize_t)strlen(v[i]), "replace")
                           : Py_NewRef(Py_None);
        if (!o) {
            Py_DECREF(tup);
            return 1;
        }
        PyTuple_SET_ITEM(tup, i, o);
    }
    int rc = PyList_Append(ud, tup);
    Py_DECREF(tup);
    return rc < 0;
}

PyDoc_STRVAR(source_query_doc,
             "source_query(sql): the rows of a query on the trace being replayed, as\n"
             "tuples of str or None.");
static PyObject *m_source_query(PyObject *self, PyObject *sql) {
    (void)self;
    if (!R.source) {
        PyErr_SetString(PyExc_RuntimeError, "no trace is being replayed");
        return NULL;
    }
    const char *q = PyUnicode_Check(sql) ? PyUnicode_AsUTF8(sql) : NULL;
    if (!q) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "source_query needs a str");
        return NULL;
    }
    PyObject *rows = PyList_New(0);
    if (!rows) return NULL;
    DrError err = {0};
    int rc = dr_trace_query(R.source, q, query_row, rows, &err);
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

PyDoc_STRVAR(source_blob_doc,
             "source_blob(id, max_len): a blob of the trace being replayed, decoded, as\n"
             "bytes; OSError for a bad blob or one longer than max_len.");
static PyObject *m_source_blob(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "source_blob(id, max_len) takes 2 arguments");
        return NULL;
    }
    long long id = PyLong_AsLongLong(args[0]);
    long long max = PyLong_AsLongLong(args[1]);
    if (PyErr_Occurred()) return NULL;
    if (!R.source || id <= 0 || max <= 0) {
        PyErr_SetString(PyExc_ValueError, "source_blob: no such blob");
        return NULL;
    }
    void *buf = NULL;
    size_t len = 0;
    DrError err = {0};
    if (dr_trace_read_blob(R.source, id, (size_t)max, &buf, &len, &err) != DR_OK) {
        PyErr_SetString(PyExc_OSError, err.msg);
        return NULL;
    }
    PyObject *o = PyBytes_FromStringAndSize(buf, (Py_ssize_t)len);
    free(buf);
    return o;
}

PyDoc_STRVAR(file_doc, "file(path, role, data): store a file's text in the trace.");
static PyObject *m_file(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    const char *path, *role, *data;
    Py_ssize_t n1, n2, n3;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "file(path, role, data) takes 3 arguments");
        return NULL;
    }
    if (text_arg(args[0], &path, &n1, "path") < 0 || text_arg(args[1], &role, &n2, "role") < 0 ||
        text_arg(args[2], &data, &n3, "data") < 0)
        return NULL;
    if (path && role) dr_rec_file(R.rec, path, role, data ? data : "", (size_t)n3);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(now_doc, "now_ns(): the recorder's clock, ns since the start of the run.");
static PyObject *m_now(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    return PyLong_FromLongLong(R.rec ? dr_rec_now(R.rec) : 0);
}

PyDoc_STRVAR(meta_doc, "meta(key, value): set a meta entry of the trace.");
static PyObject *m_meta(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    const char *k, *v;
    Py_ssize_t kl, vl;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "meta(key, value) takes 2 arguments");
        return NULL;
    }
    if (text_arg(args[0], &k, &kl, "key") < 0 || text_arg(args[1], &v, &vl, "value") < 0)
        return NULL;
    if (k) dr_rec_meta(R.rec, k, v);
    Py_RETURN_NONE;
}

/* The wrapper around Dynamo's set_eval_frame; self is the original.  It puts
 * dynrec's hook in place just before Dynamo installs its frame function (so
 * Dynamo saves it and forwards frames to it) and takes it out once Dynamo
 * has restored it.  With --all-frames the hook stays put. */
/* Records the pending Python exception as a recorder_error event (and in
 * meta[meta_key] when given) and clears it: the program never sees it. */
static void record_python_error(const char *where, const char *meta_key) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyObject *str = ev ? PyObject_Str(ev) : NULL;
    const char *msg = str ? PyUnicode_AsUTF8(str) : NULL;
    char line[512];
    snprintf(line, sizeof line, "%s: %s", where, msg ? msg : "unknown error");
    PyErr_Clear();
    dr_rec_event(R.rec, thread_id(), "recorder_error", 0, line, strlen(line), NULL, 0);
    if (meta_key) dr_rec_meta(R.rec, meta_key, line);
    Py_XDECREF(str);
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
}

/* Runs dynamo.py in _dynrec's namespace, once, the first time Dynamo is
 * enabled (torch._dynamo is fully imported by then).  A failure is recorded
 * as a recorder_error; the program never sees it. */
static void load_dynamo_adapter(void) {
    /* 0: not loaded, 1: a thread is loading it, 2: done.  Running Python
     * code may hand the GIL to another thread that enables Dynamo: that one
     * waits here until the hooks are in, or its first compile would go
     * unrecorded. */
    static int state;
    static unsigned long loader;
    if (state == 2 || R.finished || !R.rec) return;
    if (state == 1) {
        if (loader == PyThread_get_thread_ident()) return; /* re-entered while loading */
        while (state == 1) {
            Py_BEGIN_ALLOW_THREADS
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            Py_END_ALLOW_THREADS
        }
        return;
    }
    state = 1;
    loader = PyThread_get_thread_ident();
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    static const struct {
        const char *src, *name;
        int start;
    } parts[] = {{dr_dynamo_py, "<dynrec dynamo adapter>", Py_file_input},
                 {dr_dynamo_spec_py, "<dynrec dynamo adapter: speculation>", Py_file_input},
                 {dr_capture_py, "<dynrec dynamo adapter: capture>", Py_file_input},
                 {"install()", "<dynrec dynamo adapter: install>", Py_eval_input}};
    PyObject *mod = PyImport_ImportModule("_dynrec");
    PyObject *code = NULL, *res = mod ? Py_NewRef(Py_None) : NULL;
    for (size_t i = 0; res && i < sizeof parts / sizeof *parts; i++) {
        Py_CLEAR(res);
        code = Py_CompileString(parts[i].src, parts[i].name, parts[i].start);
        res = code ? PyEval_EvalCode(code, PyModule_GetDict(mod), PyModule_GetDict(mod)) : NULL;
        if (res) Py_CLEAR(code);
    }
    if (!res) record_python_error("dynamo adapter", "hook.dynamo_adapter");
    Py_XDECREF(res);
    Py_XDECREF(code);
    Py_XDECREF(mod);
    PyErr_Restore(et, ev, tb);
    state = 2;
}

static PyObject *wrapped_set_eval_frame(PyObject *orig, PyObject *const *args,
                                        Py_ssize_t nargs) {
    int enabling = nargs >= 1 && args[0] != Py_None;
    if (enabling) load_dynamo_adapter();
    int manage = !R.opts->all_frames && !R.finished;
    if (enabling && manage && dr_hook_install()) R.hook_installs++;
    PyObject *res = PyObject_Vectorcall(orig, args, (size_t)nargs, NULL);
    if (!enabling && manage) dr_hook_uninstall();
    return res;
}

static PyMethodDef wrapped_def = {
    "set_eval_frame", (PyCFunction)(void (*)(void))wrapped_set_eval_frame, METH_FASTCALL,
    "Dynamo's set_eval_frame, wrapped by dynrec to keep its frame hook under Dynamo's."};

PyDoc_STRVAR(wrap_doc, "wrap_set_eval_frame(f): f wrapped so dynrec's hook follows Dynamo's.");
static PyObject *m_wrap(PyObject *self, PyObject *orig) {
    (void)self;
    if (!PyCallable_Check(orig)) {
        PyErr_SetString(PyExc_TypeError, "wrap_set_eval_frame needs a callable");
        return NULL;
    }
    return PyCFunction_NewEx(&wrapped_def, orig, NULL);
}

PyDoc_STRVAR(finish_doc, "finish(torch_version, main_file): end of the script; stop counting.");
static PyObject *m_finish(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    const char *tv = NULL, *mf = NULL;
    Py_ssize_t n;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "finish(torch_version, main_file) takes 2 arguments");
        return NULL;
    }
    if (text_arg(args[0], &tv, &n, "torch_version") < 0 ||
        text_arg(args[1], &mf, &n, "main_file") < 0)
        return NULL;
    if (R.finished) Py_RETURN_NONE;
    R.finished = 1;
    if (tv) dr_rec_meta(R.rec, "torch_version", tv);
    if (mf && (R.opts->is_module || strcmp(mf, R.opts->target) != 0)) {
        size_t len = 0;
        char *src = slurp(mf, &len);
        if (src) dr_rec_file(R.rec, mf, "main", src, len);
        free(src);
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", R.hook_installs);
    dr_rec_meta(R.rec, "hook.installs", buf);
    if (dr_hook_failed())
        dr_rec_event(R.rec, thread_id(), "recorder_error", 0,
                     "frame hook: out of memory; counting stopped", 43, NULL, 0);
    dr_hook_release();
    dr_hook_uninstall();
    Py_RETURN_NONE;
}

PyDoc_STRVAR(mask_doc, "mask(text): text with its volatile parts masked (schema/mask.c).");
/* Ownership: text is borrowed; returns a new reference.  Raises only
 * TypeError for a non-str; where masking cannot run (out of memory, a
 * lone surrogate that has no UTF-8) the text is returned unmasked. */
static PyObject *m_mask(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 1 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "mask(text) takes one str");
        return NULL;
    }
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(args[0], &n);
    size_t len;
    char *masked = s ? dr_mask(NULL, s, (size_t)n, &len) : NULL;
    PyObject *res = masked ? PyUnicode_DecodeUTF8(masked, (Py_ssize_t)len, NULL) : NULL;
    free(masked);
    if (!res) {
        PyErr_Clear();
        res = Py_NewRef(args[0]);
    }
    return res;
}

PyDoc_STRVAR(safe_doc, "safe(text): text made safe to print on a terminal (schema/text.c).");
/* The terminal sanitizer for the Python that dynrec runs (the replay
 * driver here, the repro generator through repro.c's table).
 * Ownership: text is borrowed; returns a new reference, or NULL with
 * TypeError for a non-str or MemoryError.  A lone surrogate (no UTF-8)
 * is encoded with surrogateescape, so it shows escaped as \xNN. */
PyObject *dr_run_py_safe(PyObject *self, PyObject *text) {
    (void)self;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "safe(text) takes one str");
        return NULL;
    }
    PyObject *bytes = PyUnicode_AsEncodedString(text, "utf-8", "surrogateescape");
    if (!bytes) {
        /* a surrogate that even surrogateescape refuses: show it replaced */
        PyErr_Clear();
        bytes = PyUnicode_AsEncodedString(text, "utf-8", "replace");
        if (!bytes) return NULL;
    }
    char *safe = dr_safe(PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes), 0, 0);
    Py_DECREF(bytes);
    if (!safe) return PyErr_NoMemory();
    PyObject *res = PyUnicode_DecodeUTF8(safe, (Py_ssize_t)strlen(safe), "replace");
    free(safe);
    return res;
}

PyDoc_STRVAR(qualname_doc, "qualname(code): a code object's qualified name (its plain name on 3.10).");
/* The one name a code object goes by in a trace, on every Python: 3.10's
 * code objects have no co_qualname, and Dynamo names them by co_name.
 * Ownership: code is borrowed; returns a new reference, or NULL with
 * TypeError for what is not a code object. */
PyObject *dr_run_py_qualname(PyObject *self, PyObject *code) {
    (void)self;
    if (!PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "qualname(code) takes a code object");
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030B0000
    return Py_NewRef(((PyCodeObject *)code)->co_qualname);
#else
    return Py_NewRef(((PyCodeObject *)code)->co_name);
#endif
}

/* os.register_at_fork hooks (adapter.py, on 3.12 and newer): CPython
 * warns of a fork in a process with more than one OS thread, counting them
 * as os.fork returns, after the after_in_parent hooks.  The writer thread
 * is stopped before the fork and a new one started from a pending call,
 * which runs once os.fork has returned. */
static int resume_writer(void *arg) {
    (void)arg;
    if (R.rec) dr_rec_resume(R.rec);
    return 0;
}

PyDoc_STRVAR(fork_before_doc, "fork_before(): stop the trace writer thread for a fork.");
static PyObject *m_fork_before(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    if (R.rec) dr_rec_pause(R.rec);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(fork_parent_doc, "fork_parent(): start the trace writer again once os.fork returns.");
static PyObject *m_fork_parent(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    if (R.rec && Py_AddPendingCall(resume_writer, NULL) != 0) dr_rec_resume(R.rec);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(code_digest_doc,
             "code_digest(code): the first 16 hex digits of SHA-256 of code.co_code.");
/* What tells two resume functions of one name and line apart (the branches
 * of a data-dependent jump): the recorder stores it in a resume function's
 * capture, the replay picks the rebuilt resume function that has it.
 * Ownership: code is borrowed; returns a new str, or NULL with an error. */
static PyObject *m_code_digest(PyObject *self, PyObject *code) {
    (void)self;
    if (!PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "code_digest(code) takes a code object");
        return NULL;
    }
    PyObject *bytes = PyObject_GetAttrString(code, "co_code");
    if (!bytes) return NULL;
    if (!PyBytes_Check(bytes)) {
        Py_DECREF(bytes);
        PyErr_SetString(PyExc_TypeError, "co_code is not bytes");
        return NULL;
    }
    DrSha256 s;
    uint8_t out[32];
    dr_sha256_init(&s);
    dr_sha256_add(&s, PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes));
    dr_sha256_done(&s, out);
    Py_DECREF(bytes);
    char hex[17];
    for (int i = 0; i < 8; i++) snprintf(hex + 2 * i, 3, "%02x", out[i]);
    return PyUnicode_FromStringAndSize(hex, 16);
}

PyDoc_STRVAR(installed_doc, "hook_installed(): whether dynrec's frame hook is installed now.");
static PyObject *m_hook_installed(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    return PyBool_FromLong(dr_hook_is_installed());
}

static PyMethodDef dynrec_methods[] = {
    {"event", (PyCFunction)(void (*)(void))m_event, METH_FASTCALL, event_doc},
    {"guard", (PyCFunction)(void (*)(void))m_guard, METH_FASTCALL, guard_doc},
    {"meta", (PyCFunction)(void (*)(void))m_meta, METH_FASTCALL, meta_doc},
    {"file", (PyCFunction)(void (*)(void))m_file, METH_FASTCALL, file_doc},
    {"values", (PyCFunction)(void (*)(void))m_values, METH_FASTCALL, values_doc},
    {"source_query", m_source_query, METH_O, source_query_doc},
    {"source_blob", (PyCFunction)(void (*)(void))m_source_blob, METH_FASTCALL, source_blob_doc},
    {"now_ns", m_now, METH_NOARGS, now_doc},
    {"wrap_set_eval_frame", m_wrap, METH_O, wrap_doc},
    {"finish", (PyCFunction)(void (*)(void))m_finish, METH_FASTCALL, finish_doc},
    {"hook_installed", m_hook_installed, METH_NOARGS, installed_doc},
    {"mask", (PyCFunction)(void (*)(void))m_mask, METH_FASTCALL, mask_doc},
    {"safe", dr_run_py_safe, METH_O, safe_doc},
    {"qualname", dr_run_py_qualname, METH_O, qualname_doc},
    {"fork_before", m_fork_before, METH_NOARGS, fork_before_doc},
    {"code_digest", m_code_digest, METH_O, code_digest_doc},
    {"fork_parent", m_fork_parent, METH_NOARGS, fork_parent_doc},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef dynrec_module = {
    PyModuleDef_HEAD_INIT, "_dynrec", "dynrec's recorder, built into the dynrec binary.", -1,
    dynrec_methods, NULL, NULL, NULL, NULL};

static PyObject *init_dynrec_module(void) {
    PyObject *mod = PyModule_Create(&dynrec_module);
    if (mod && dr_around_add(mod) < 0) Py_CLEAR(mod);
    return mod;
}

/* _dynrec.seeds = {"random": n, "numpy": m} and, under --rerun-of,
 * _dynrec.rerun = {"of": path, "config_start": json or None,
 * "overrides": [(name, value), ...]}; else _dynrec.rerun = None.
 * Returns 0, or -1 with a Python exception set. */
static int set_run_attrs(PyObject *mod) {
    const DrRunOptions *o = R.opts;
    PyObject *seeds = Py_BuildValue("{s:k,s:k}", "random", R.seeds[0], "numpy", R.seeds[1]);
    if (!seeds) return -1;
    int rc = PyObject_SetAttrString(mod, "seeds", seeds);
    Py_DECREF(seeds);
    if (rc < 0) return -1;
    PyObject *cv = PyLong_FromLongLong(o->capture_values >= 0 ? o->capture_values : 4096);
    if (!cv) return -1;
    rc = PyObject_SetAttrString(mod, "capture_values", cv);
    Py_DECREF(cv);
    if (rc < 0) return -1;
    PyObject *replay = o->replay_of
                           ? Py_BuildValue("{s:s,s:s,s:z,s:z,s:z}", "of", o->replay_of, "name",
                                           o->trace_label ? o->trace_label : o->replay_of,
                                           "backend", o->replay_backend, "frame",
                                           o->replay_frame, "compile", o->replay_compile)
                           : Py_NewRef(Py_None);
    if (!replay) return -1;
    rc = PyObject_SetAttrString(mod, "replay", replay);
    Py_DECREF(replay);
    if (rc < 0) return -1;
    if (!o->rerun_of) return PyObject_SetAttrString(mod, "rerun", Py_None);
    PyObject *over = PyList_New(0);
    if (!over) return -1;
    for (int i = 0; i < o->nset; i++) {
        const char *eq = strchr(o->set[i], '=');
        if (!eq) continue;
        PyObject *item = Py_BuildValue("(s#s)", o->set[i], (Py_ssize_t)(eq - o->set[i]), eq + 1);
        if (!item || PyList_Append(over, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(over);
            return -1;
        }
        Py_DECREF(item);
    }
    PyObject *rerun = Py_BuildValue("{s:s,s:z,s:N}", "of", o->rerun_of, "config_start",
                                    R.config_start, "overrides", over);
    if (!rerun) return -1;
    rc = PyObject_SetAttrString(mod, "rerun", rerun);
    Py_DECREF(rerun);
    return rc;
}

/* Runs adapter.py in _dynrec's namespace.  A failure is recorded, never
 * shown: the script must run as it would without dynrec. */
static void run_adapter(void) {
    PyObject *mod = NULL, *code = NULL, *res = NULL;
    mod = PyImport_ImportModule("_dynrec");
    if (!mod) goto error;
    if (set_run_attrs(mod) < 0) goto error;
    PyObject *dict = PyModule_GetDict(mod); /* borrowed */
    if (PyDict_SetItemString(dict, "__builtins__", PyEval_GetBuiltins()) < 0) goto error;
    code = Py_CompileString(dr_adapter_py, "<dynrec adapter>", Py_file_input);
    if (!code) goto error;
    res = PyEval_EvalCode(code, dict, dict);
    if (!res) goto error;
    goto done;
error:
    record_python_error("adapter", NULL);
done:
    Py_XDECREF(res);
    Py_XDECREF(code);
    Py_XDECREF(mod);
}

/* ---- start and end ----------------------------------------------------- */

/* Stores what the program wrote to stdout and stderr (files "<stdout>",
 * "<stderr>"; meta output.NAME_bytes and output.NAME_complete). */
static void store_output(DrRecorder *rec) {
    static const char *const names[2] = {"stdout", "stderr"};
    for (int fd = 1; fd <= 2; fd++) {
        const char *data;
        size_t len;
        uint64_t total;
        int complete;
        if (dr_output_take(fd, &data, &len, &total, &complete) != 0) continue;
        char path[16], key[40], num[32];
        snprintf(path, sizeof path, "<%s>", names[fd - 1]);
        dr_rec_file(rec, path, names[fd - 1], data, len);
        snprintf(key, sizeof key, "output.%s_bytes", names[fd - 1]);
        snprintf(num, sizeof num, "%llu", (unsigned long long)total);
        dr_rec_meta(rec, key, num);
        snprintf(key, sizeof key, "output.%s_complete", names[fd - 1]);
        dr_rec_meta(rec, key, complete && total == len ? "1" : "0");
    }
}

static void finish_recording(int status, int sig) {
    status &= 0xff; /* what the parent sees: sys.exit(256) is 0, -1 is 255 */
    DrRecorder *rec = R.rec;
    R.rec = NULL;
    if (!rec) return;
    store_output(rec);
    DrError err = {0};
    const char *path = R.opts->trace_path;
    int rc = dr_rec_finish(rec, status, sig, &err);
    if (rc == DR_ERR_WAL_KEPT)
        fprintf(stderr, "dynrec: %s\n", err.msg);
    else if (rc != DR_OK)
        fprintf(stderr, "dynrec: the trace %s is incomplete: %s\n", path, err.msg);
    else if (!R.opts->quiet)
        fprintf(stderr, "dynrec: trace written to %s\n", path);
}

static void at_python_exit(void) {
    if (dr_py_unhandled_keyboard_interrupt()) finish_recording(128 + SIGINT, SIGINT);
}

/* SystemExit ends the process inside Py_RunMain (Py_Exit calls exit), so
 * the status reaches dynrec only here. */
static void at_process_exit(int status, void *arg) {
    (void)arg;
    finish_recording(status, 0);
}

/* A child made by os.fork() runs on without a writer thread and shares the
 * parent's trace file: it records nothing and never closes the trace. */
static void run_atfork_child(void) { R.rec = NULL; }

int dr_run_is_recorded_env(const char *name) {
    static const char *const prefixes[] = {"TORCH", "PYTORCH", "PYTHON", "CUDA", "OMP_",
                                           "MKL_", "KMP_", "OPENBLAS", "NCCL_", "TRITON",
                                           "VIRTUAL_ENV", "LD_PRELOAD", "LD_LIBRARY_PATH",
                                           "DYNREC"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return 1;
    return 0;
}

extern char **environ;

/* A JSON array of strings. */
static char *json_array(int n, char *const *v) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        dr_json_string(f, v[i]);
    }
    fputc(']', f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* What the writer thread puts into a new trace first; filled by the main
 * thread before Python starts (the script may chdir), read by the writer. */
typedef struct {
    const DrRunOptions *o;
    const char *python, *seed, *src;
    size_t srclen;
    char cwd[4096], now[64];
    unsigned long seeds[2]; /* Python's random, NumPy's global generator */
} StartInfo;

static int write_start_meta(DrTrace *t, const DrRunOptions *o, const char *python,
                            const char *seed, const unsigned long *si_seeds, const char *src,
                            size_t srclen, const char *cwd, const char *now, DrError *err) {
    char *argv_json = json_array(o->argc, o->argv);
    char *cmd_json = json_array(o->cmd_argc, o->cmd_argv);
    int rc = dr_trace_begin(t, err);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "command", cmd_json ? cmd_json : "[]", err);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "argv", argv_json ? argv_json : "[]", err);
    if (rc == DR_OK)
        rc = dr_trace_set_meta(t, o->is_module ? "module" : "script", o->target, err);
    /* A replay of a module run (-m pytest) names its files as the
     * recording did, relative to the recorded cwd: that cwd is the replay's
     * root too, wherever the replay runs. */
    char *rec_cwd = NULL;
    if (o->replay_of && o->is_module && R.source &&
        dr_trace_get_meta(R.source, "cwd", &rec_cwd, NULL) == DR_OK && rec_cwd &&
        rec_cwd[0] == '/')
        cwd = rec_cwd;
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "cwd", cwd, err);
    free(rec_cwd);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "start_time", now, err);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "python_version", Py_GetVersion(), err);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "python_executable", python, err);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "hash_seed", seed, err);
    if (rc == DR_OK) rc = dr_trace_set_meta_int(t, "pid", getpid(), err);
    if (rc == DR_OK)
        rc = dr_trace_set_meta(t, "hook.frame", o->all_frames ? "all-frames" : "while-dynamo",
                               err);
    char num[32];
    snprintf(num, sizeof num, "%lu", si_seeds[0]);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "seed.random", num, err);
    snprintf(num, sizeof num, "%lu", si_seeds[1]);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "seed.numpy", num, err);
    /* What a replay or re-run is of, and how it was confined. */
    const char *of = o->trace_label ? o->trace_label : o->rerun_of;
    if (rc == DR_OK && o->replay_of) rc = dr_trace_set_meta(t, "replay_of", of, err);
    else if (rc == DR_OK && o->rerun_of) rc = dr_trace_set_meta(t, "rerun_of", of, err);
    if (rc == DR_OK && o->rerun_of)
        rc = dr_trace_set_meta(t, "sandbox",
                               dr_sandbox_mode_desc(dr_sandbox_mode_of(o->sandboxed)), err);
    for (int i = 0; rc == DR_OK && i < o->nset; i++) {
        const char *eq = strchr(o->set[i], '=');
        char key[300];
        if (!eq) continue;
        snprintf(key, sizeof key, "set.%.*s", (int)(eq - o->set[i] < 250 ? eq - o->set[i] : 250),
                 o->set[i]);
        rc = dr_trace_set_meta(t, key, eq + 1, err);
    }
    for (char **e = environ; rc == DR_OK && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || !dr_run_is_recorded_env(*e)) continue;
        char key[256];
        snprintf(key, sizeof key, "env.%.*s", (int)(eq - *e), *e);
        rc = dr_trace_set_meta(t, key, eq + 1, err);
    }
    if (rc == DR_OK && src) rc = dr_trace_add_file(t, o->target, "script", src, srclen, err);
    if (rc == DR_OK) rc = dr_trace_commit(t, err);
    free(argv_json);
    free(cmd_json);
    return rc;
}

/* The deferred part of starting: runs on the writer thread while Python
 * initializes.  The default dictionary: Dynamo's structured-trace payloads,
 * guard trees and graph code are small templated texts that it shrinks by a
 * third beyond plain zstd (schema/SCHEMA.md). */
static int setup_trace(DrTrace *t, void *ud, DrError *err) {
    const StartInfo *si = ud;
    int rc = dr_trace_use_dict(t, dr_default_dict, sizeof dr_default_dict, err);
    if (rc == DR_OK)
        rc = write_start_meta(t, si->o, si->python, si->seed, si->seeds, si->src,
                              si->srclen, si->cwd, si->now, err);
    return rc;
}

/* Picks "<stem>-YYYYmmdd-HHMMSS.db" in the cwd, adding -2, -3, ... rather
 * than replacing an earlier trace. */
static char *default_trace_path(const char *target) {
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    size_t stem = strlen(base);
    if (stem > 3 && strcmp(base + stem - 3, ".py") == 0) stem -= 3;
    if (stem > 64) stem = 64;
    char ts[32];
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", localtime(&now));
    for (int i = 1; i < 10000; i++) {
        char *p = NULL;
        int n = i == 1 ? asprintf(&p, "%.*s-%s.db", (int)stem, base, ts)
                       : asprintf(&p, "%.*s-%s-%d.db", (int)stem, base, ts, i);
        if (n < 0) return NULL;
        if (access(p, F_OK) != 0) return p;
        free(p);
    }
    return NULL;
}

/* The environment a pip-installed binary lives in: for
 * PREFIX/lib/pythonX.Y/site-packages/dynrec/_bin/dynrec, a malloc'd PREFIX
 * when PREFIX/bin/python is there (a venv, or a Python's own prefix);
 * NULL for a binary anywhere else (the Makefile's build/dynrec). */
static char *installed_prefix(void) {
    char *exe = realpath("/proc/self/exe", NULL);
    if (!exe) return NULL;
    static const char tail[] = "/site-packages/dynrec/_bin/dynrec";
    size_t n = strlen(exe), nt = sizeof tail - 1;
    char *lib = NULL;
    if (n > nt && strcmp(exe + n - nt, tail) == 0) {
        exe[n - nt] = 0; /* PREFIX/lib/pythonX.Y */
        char *slash = strrchr(exe, '/');
        if (slash && strncmp(slash, "/python", 7) == 0 && slash - exe >= 4 &&
            strncmp(slash - 4, "/lib", 4) == 0) {
            slash[-4] = 0;
            lib = exe;
        }
    }
    if (!lib) free(exe);
    return lib;
}

/* The python whose environment the script runs in: $VIRTUAL_ENV, else the
 * environment a pip-installed dynrec is installed in, else the venv dynrec
 * was built for, else the interpreter it links. */
char *dr_run_choose_python(void) {
    char *prefix = installed_prefix();
    const char *venvs[] = {getenv("VIRTUAL_ENV"), prefix, DR_DEFAULT_VENV};
    for (size_t i = 0; i < 3; i++) {
        if (!venvs[i] || !*venvs[i]) continue;
        char *p = NULL;
        if (asprintf(&p, "%s/bin/python", venvs[i]) < 0) break;
        if (access(p, X_OK) == 0) {
            free(prefix);
            return p;
        }
        free(p);
    }
    free(prefix);
    return NULL;
}

static int append_args(PyWideStringList *list, int n, char *const *v) {
    for (int i = 0; i < n; i++) {
        wchar_t *w = Py_DecodeLocale(v[i], NULL);
        if (!w) return -1;
        PyStatus st = PyWideStringList_Append(list, w);
        PyMem_RawFree(w);
        if (PyStatus_Exception(st)) return -1;
    }
    return 0;
}

/* A seed in [1, 2^32). */
static unsigned long pick_seed(void) {
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) rnd = (uint32_t)time(NULL) ^ getpid();
    return rnd ? rnd : 1;
}

/* A recorded seed: a decimal number below 2^32, or 0 for none. */
static unsigned long seed_value(const char *s) {
    if (!s || !*s) return 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    return *end || v >= (1ull << 32) ? 0 : (unsigned long)v;
}

/* --rerun-of: the recorded hash seed, `random` and NumPy seeds (0 where a
 * trace has none) and the config at start (R.config_start).  Returns 0, or
 * -1 after printing why the trace cannot be used. */
static int read_rerun_of(const char *trace, unsigned long seeds[3]) {
    static const char *const keys[3] = {"hash_seed", "seed.random", "seed.numpy"};
    DrError err = {0};
    DrTrace *t = dr_trace_open(trace, &err);
    if (!t) {
        fprintf(stderr, "dynrec run: --rerun-of: %s\n", err.msg);
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        char *v = NULL;
        if (dr_trace_get_meta(t, keys[i], &v, &err) == DR_OK) seeds[i] = seed_value(v);
        free(v);
    }
    char *cfg = NULL;
    DrError e2 = {0};
    if (dr_trace_query_text(t,
                            "SELECT data FROM v_ev WHERE kind = 'config' AND text = 'start'"
                            " AND json_valid(data) ORDER BY seq LIMIT 1",
                            &cfg, &e2) == DR_OK)
        R.config_start = cfg;
    dr_trace_free(t);
    return 0;
}

int dr_run(const DrRunOptions *o) {
    static DrRunOptions opts; /* lives until the on_exit handler has run */
    opts = *o;
    char *src = NULL, *path = NULL, *python = NULL;
    size_t srclen = 0;
    int status = 2;
    DrError err = {0};

    struct stat sb;
    if (opts.sandboxed) {
        /* Confined by bwrap: the filter goes on before anything reads the
         * trace, and holds for every thread started later. */
        char why[200];
        DrSandboxMode mode = dr_sandbox_mode_of(opts.sandboxed);
        if (mode == DR_SBX_NONE) {
            fprintf(stderr, "dynrec run: --sandboxed: unknown mode %s\n", opts.sandboxed);
            return DR_EX_USAGE;
        }
        if (dr_sandbox_lockdown(mode, why, sizeof why) != 0) {
            fprintf(stderr, "dynrec run: --sandboxed: %s\n", why);
            return 77;
        }
    }
    if (opts.replay_of) {
        /* A replay runs the driver (replayer/replay.py), not the script: the
         * trace's seeds and start config as in a re-run, and its script's
         * name in meta so the two traces compare. */
        opts.rerun_of = opts.replay_of;
        DrError e = {0};
        R.source = dr_trace_open(opts.replay_of, &e);
        char *script = NULL, *module = NULL;
        if (R.source) {
            dr_trace_get_meta(R.source, "script", &script, NULL);
            if (!script) dr_trace_get_meta(R.source, "module", &module, NULL);
        }
        if (!R.source || (!script && !module)) {
            fprintf(stderr, "dynrec run: --replay-of: %s\n",
                    R.source ? "the trace names no script" : e.msg);
            free(script);
            free(module);
            dr_trace_free(R.source);
            R.source = NULL;
            return DR_EX_USAGE;
        }
        static char *replay_target; /* lives as long as opts */
        free(replay_target);
        replay_target = script ? script : module;
        if (script) free(module);
        char *cwd = NULL;
        if (script && script[0] != '/' && dr_trace_get_meta(R.source, "cwd", &cwd, NULL) == DR_OK &&
            cwd && cwd[0] == '/') {
            /* As recorded, relative to the recorded cwd: the comparison
             * names files relative to the script's directory. */
            char *abs = NULL;
            if (asprintf(&abs, "%s/%s", cwd, script) >= 0) {
                free(replay_target);
                replay_target = abs;
            }
        }
        free(cwd);
        opts.target = replay_target;
        opts.is_module = script == NULL;
    } else if (!opts.is_module && stat(opts.target, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        /* A directory with __main__.py: CPython runs it; its source is
         * stored at exit as the main module's file. */
    } else if (!opts.is_module) {
        src = slurp(opts.target, &srclen);
        if (!src) {
            fprintf(stderr, "dynrec run: cannot open script %s: %s\n", opts.target,
                    strerror(errno));
            return DR_EX_USAGE;
        }
    }
    path = opts.trace_path ? strdup(opts.trace_path) : default_trace_path(opts.target);
    if (!path) { /* path stays allocated: the exit handlers name the trace */
        fprintf(stderr, "dynrec run: cannot pick a trace name in the current directory; "
                        "give one with -o\n");
        free(src);
        return DR_EX_CANTCREAT;
    }
    opts.trace_path = path;
    R.opts = &opts;

    /* Seeds: the hash seed (the user's PYTHONHASHSEED, or one chosen here
     * and given to CPython through PyConfig) and seeds for `random` and
     * NumPy, so a rerun can use the same; --rerun-of takes the recorded ones. */
    unsigned long recorded[3] = {0, 0, 0};
    if (opts.rerun_of && read_rerun_of(opts.rerun_of, recorded) != 0) {
        free(path);
        free(src);
        return DR_EX_USAGE;
    }
    const char *env_seed = getenv("PYTHONHASHSEED");
    unsigned long seed = 0;
    static char seed_text[32]; /* read by the writer thread */
    if (env_seed && *env_seed) {
        snprintf(seed_text, sizeof seed_text, "%s", env_seed);
    } else {
        seed = recorded[0] ? recorded[0] : pick_seed();
        snprintf(seed_text, sizeof seed_text, "%lu", seed);
    }
    R.seeds[0] = recorded[1] ? recorded[1] : pick_seed();
    R.seeds[1] = recorded[2] ? recorded[2] : pick_seed();
    python = dr_run_choose_python();

    /* Only the checks that can fail at once happen here; the writer thread
     * makes the file a trace while Python starts. */
    if (dr_trace_reserve(path, o->trace_path != NULL, &err) != DR_OK) {
        fprintf(stderr, "dynrec run: %s\n", err.msg);
        status = 73;
        goto out;
    }
    if (dr_hook_init() != 0) {
        fprintf(stderr, "dynrec run: out of memory\n");
        status = 73;
        goto out;
    }
    static StartInfo si; /* read by the writer thread until the trace is closed */
    si = (StartInfo){.o = &opts, .python = python ? python : "", .seed = seed_text,
                     .src = src, .srclen = srclen, .seeds = {R.seeds[0], R.seeds[1]}};
    if (!getcwd(si.cwd, sizeof si.cwd)) strcpy(si.cwd, "?");
    time_t tnow = time(NULL);
    strftime(si.now, sizeof si.now, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tnow));
    R.rec = dr_rec_start_deferred(path, setup_trace, &si, dr_hook_snapshot, &err);
    if (!R.rec) {
        fprintf(stderr, "dynrec run: %s\n", err.msg);
        status = 73;
        goto out;
    }
    dr_rec_keep_library(R.rec, opts.all_frames);
    dr_rec_handle_sigterm(R.rec);
    pthread_atfork(NULL, NULL, run_atfork_child);

    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0;
    if (!(env_seed && *env_seed)) {
        config.use_hash_seed = 1;
        config.hash_seed = seed;
    }
    PyStatus st = PyStatus_Ok();
    if (python) st = PyConfig_SetBytesString(&config, &config.executable, python);
    if (!PyStatus_Exception(st) && opts.replay_of)
        st = PyConfig_SetBytesString(&config, &config.run_command, dr_replay_py);
    else if (!PyStatus_Exception(st)) st = PyConfig_SetBytesString(
        &config, opts.is_module ? &config.run_module : &config.run_filename, opts.target);
    char *argv0 = opts.is_module ? "-m" : (char *)opts.target;
    if (!PyStatus_Exception(st) && (append_args(&config.argv, 1, &argv0) < 0 ||
                                     append_args(&config.argv, opts.argc, opts.argv) < 0))
        st = PyStatus_NoMemory();
    if (!PyStatus_Exception(st)) {
        char *orig[3] = {python ? python : "python", opts.is_module ? "-m" : NULL,
                         (char *)opts.target};
        if (append_args(&config.orig_argv, 1, &orig[0]) < 0 ||
            (opts.is_module && append_args(&config.orig_argv, 1, &orig[1]) < 0) ||
            append_args(&config.orig_argv, 1, &orig[2]) < 0 ||
            append_args(&config.orig_argv, opts.argc, opts.argv) < 0)
            st = PyStatus_NoMemory();
    }
    if (!PyStatus_Exception(st) && PyImport_AppendInittab("_dynrec", init_dynrec_module) < 0)
        st = PyStatus_NoMemory();
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
        if (PyStatus_IsExit(st)) {
            status = st.exitcode;
        } else {
            fprintf(stderr, "dynrec run: Python failed to start: %s%s%s\n",
                    st.func ? st.func : "", st.func ? ": " : "", st.err_msg ? st.err_msg : "");
            status = 1;
        }
        finish_recording(status, 0);
        goto out;
    }
    Py_AtExit(at_python_exit);
    on_exit(at_process_exit, NULL);
    run_adapter();
    if (opts.all_frames) dr_hook_install();
    /* A benchmark knob: the hook installed but only forwarding frames, to
     * measure what any frame-evaluation function costs by itself. */
    if (getenv("DYNREC_BENCH_NOCOUNT")) dr_hook_set_counting(0);
    if (dr_output_start() != 0)
        dr_rec_event(R.rec, thread_id(), "recorder_error", 0,
                     "output: out of memory; the program's output is not kept", 55, NULL, 0);
    status = Py_RunMain();
    finish_recording(status, 0);
out:
    dr_output_free();
    dr_hook_free();
    free(R.config_start);
    R.config_start = NULL;
    dr_trace_free(R.source);
    R.source = NULL;
    free(src);
    free(python);
    return status;
}
