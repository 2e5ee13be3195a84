/* session.c -- one recording: the _dynrec module, the adapter, the start
 * meta and the end of a trace (session.h).  Shared by `dynrec run` (run.c)
 * and the in-process recorder (inproc.c). */
#define _GNU_SOURCE 1
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "session.h"
#include "pycompat.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../schema/ident.h"
#include "../schema/json.h"
#include "../schema/mask.h"
#include "../schema/sign.h"
#include "../schema/text.h"
#include "../schema/trace.h"
#include "around.h"
#include "embed.h"
#include "hook.h"

DrSession dr_session;

static int64_t thread_id(void) { return (int64_t)PyThread_get_thread_ident(); }

/* Reads a whole file into a malloc'd buffer; NULL with errno set on error. */
char *dr_session_slurp(const char *path, size_t *len) {
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
    dr_rec_event_full(dr_session.rec, &ev);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(guard_doc, "guard(code, compile_id, text, text_template, source, user_location, key,\n"
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
    dr_rec_event_full(dr_session.rec, &ev);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(values_doc, "values(capture, rows): store a captured value tree; rows are tuples\n"
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
        dr_rec_value(dr_session.rec, capture, node, kind, type, value, value ? (size_t)vl : 0, data,
                     data ? (size_t)dl : 0);
    }
    Py_RETURN_NONE;
}

int dr_run_py_query_row(void *ud, int n, const char *const *names, const char *const *v) {
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
    if (!dr_session.source) {
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
    int rc = dr_trace_query(dr_session.source, q, dr_run_py_query_row, rows, &err);
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
    if (!dr_session.source || id <= 0 || max <= 0) {
        PyErr_SetString(PyExc_ValueError, "source_blob: no such blob");
        return NULL;
    }
    void *buf = NULL;
    size_t len = 0;
    DrError err = {0};
    if (dr_trace_read_blob(dr_session.source, id, (size_t)max, &buf, &len, &err) != DR_OK) {
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
    if (path && role) dr_rec_file(dr_session.rec, path, role, data ? data : "", (size_t)n3);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(now_doc, "now_ns(): the recorder's clock, ns since the start of the run.");
static PyObject *m_now(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    return PyLong_FromLongLong(dr_session.rec ? dr_rec_now(dr_session.rec) : 0);
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
    if (k) dr_rec_meta(dr_session.rec, k, v);
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
    dr_rec_event(dr_session.rec, thread_id(), "recorder_error", 0, line, strlen(line), NULL, 0);
    if (meta_key) dr_rec_meta(dr_session.rec, meta_key, line);
    Py_XDECREF(str);
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
}

/* Loads dynamo.py and its parts as _dynrec.dynamo, ... (embed.h) and runs
 * its install(), once, the first time Dynamo is
 * enabled (torch._dynamo is fully imported by then).  A failure is recorded
 * as a recorder_error; the program never sees it. */
static void load_dynamo_adapter(void) {
    /* 0: not loaded, 1: a thread is loading it, 2: done.  Running Python
     * code may hand the GIL to another thread that enables Dynamo: that one
     * waits here until the hooks are in, or its first compile would go
     * unrecorded. */
    static int state;
    static unsigned long loader;
    if (state == 2 && dr_session.dynamo_begin_pending && dr_session.rec && !dr_session.finished) {
        /* A later in-process session: dynamo.py's begin_session() takes the
         * config snapshot and hook states where install() took them for the
         * first, as Dynamo turns on. */
        dr_session.dynamo_begin_pending = 0;
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyObject *mod = PyImport_ImportModule("_dynrec");
        PyObject *dynamo = mod ? PyObject_GetAttrString(mod, "dynamo") : NULL;
        PyObject *res = dynamo ? PyObject_CallMethod(dynamo, "begin_session", NULL) : NULL;
        if (!res) record_python_error("dynamo adapter: a new session", NULL);
        Py_XDECREF(res);
        Py_XDECREF(dynamo);
        Py_XDECREF(mod);
        PyErr_Restore(et, ev, tb);
        return;
    }
    if (state == 2 || dr_session.finished || !dr_session.rec) return;
    if (state == 1) {
        if (loader == PyThread_get_thread_ident()) return; /* re-entered while loading */
        while (state == 1) {
            Py_BEGIN_ALLOW_THREADS struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            Py_END_ALLOW_THREADS
        }
        return;
    }
    state = 1;
    loader = PyThread_get_thread_ident();
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    /* dynamo.py, then the parts it calls into (embed.h), then its install(). */
    static const char *const parts[] = {"value_kinds", "dynamo", "dynamo_spec", "capture"};
    DrGcHold gc;
    dr_py_gc_hold_keep(&gc);
    PyObject *mod = PyImport_ImportModule("_dynrec"), *dynamo = NULL, *res = NULL;
    if (mod && dr_embed_modules(mod, parts, sizeof parts / sizeof *parts) == 0 &&
        (dynamo = PyObject_GetAttrString(mod, "dynamo")))
        res = PyObject_CallMethod(dynamo, "install", NULL);
    if (!res) record_python_error("dynamo adapter", "hook.dynamo_adapter");
    dr_py_gc_release_keep(&gc);
    Py_XDECREF(res);
    Py_XDECREF(dynamo);
    Py_XDECREF(mod);
    PyErr_Restore(et, ev, tb);
    state = 2;
    dr_session.dynamo_begin_pending = 0; /* install() did what begin_session does */
}

static PyObject *wrapped_set_eval_frame(PyObject *orig, PyObject *const *args, Py_ssize_t nargs) {
    int enabling = nargs >= 1 && args[0] != Py_None;
    if (enabling) load_dynamo_adapter();
    int manage = !dr_session.opts->all_frames && !dr_session.finished;
    if (enabling && manage && dr_hook_install()) dr_session.hook_installs++;
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
    if (dr_session.finished) Py_RETURN_NONE;
    dr_session.finished = 1;
    if (tv) dr_rec_meta(dr_session.rec, "torch_version", tv);
    if (mf && (dr_session.opts->is_module || !dr_session.opts->target ||
               strcmp(mf, dr_session.opts->target) != 0)) {
        size_t len = 0;
        char *src = dr_session_slurp(mf, &len);
        if (src) dr_rec_file(dr_session.rec, mf, "main", src, len);
        free(src);
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", dr_session.hook_installs);
    dr_rec_meta(dr_session.rec, "hook.installs", buf);
    if (dr_hook_failed())
        dr_rec_event(dr_session.rec, thread_id(), "recorder_error", 0,
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

PyDoc_STRVAR(qualname_doc,
             "qualname(code): a code object's qualified name (its plain name on 3.10).");
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
    if (dr_session.rec) dr_rec_resume(dr_session.rec);
    return 0;
}

PyDoc_STRVAR(fork_before_doc, "fork_before(): stop the trace writer thread for a fork.");
static PyObject *m_fork_before(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    if (dr_session.rec) dr_rec_pause(dr_session.rec);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(fork_parent_doc, "fork_parent(): start the trace writer again once os.fork returns.");
static PyObject *m_fork_parent(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    if (dr_session.rec && Py_AddPendingCall(resume_writer, NULL) != 0)
        dr_rec_resume(dr_session.rec);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(code_digest_doc,
             "code_digest(code): the first 16 hex digits of SHA-256 of code.co_code.");
/* What tells two resume functions of one name and line apart (the branches
 * of a data-dependent jump): the recorder stores it in a resume function's
 * capture, the replay picks the rebuilt resume function that has it.
 * Ownership: code is borrowed; returns a new str, or NULL with an error. */
PyDoc_STRVAR(is_library_doc,
             "is_library(path, dirs): whether code of path (a real path) is library code,\n"
             "not the user's; dirs: directories (ending in '/', or None) that are library\n"
             "too.  The one rule of schema/ident.h.");
static PyObject *m_is_library(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    const char *dirs[8];
    if (nargs != 2 || !PyUnicode_Check(args[0]) || !PyTuple_Check(args[1]) ||
        PyTuple_GET_SIZE(args[1]) > (Py_ssize_t)(sizeof dirs / sizeof *dirs)) {
        PyErr_SetString(PyExc_TypeError, "is_library(path, dirs): a str and a tuple of str");
        return NULL;
    }
    const char *path = PyUnicode_AsUTF8(args[0]);
    if (!path) return NULL;
    size_t n = (size_t)PyTuple_GET_SIZE(args[1]);
    for (size_t i = 0; i < n; i++) {
        PyObject *d = PyTuple_GET_ITEM(args[1], (Py_ssize_t)i); /* borrowed */
        dirs[i] = d == Py_None ? NULL : PyUnicode_AsUTF8(d);
        if (d != Py_None && !dirs[i]) return NULL;
    }
    return PyBool_FromLong(dr_is_library(path, dirs, n));
}

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

PyDoc_STRVAR(pause_doc, "hook_pause(on): this thread enters (True) or leaves (False) Dynamo's"
                        " callback, whose frames the hook does not count.");
static PyObject *m_hook_pause(PyObject *self, PyObject *on) {
    (void)self;
    int v = PyObject_IsTrue(on);
    if (v < 0) return NULL;
    dr_hook_pause(v);
    Py_RETURN_NONE;
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
    {"hook_pause", m_hook_pause, METH_O, pause_doc},
    {"mask", (PyCFunction)(void (*)(void))m_mask, METH_FASTCALL, mask_doc},
    {"safe", dr_run_py_safe, METH_O, safe_doc},
    {"qualname", dr_run_py_qualname, METH_O, qualname_doc},
    {"fork_before", m_fork_before, METH_NOARGS, fork_before_doc},
    {"code_digest", m_code_digest, METH_O, code_digest_doc},
    {"fork_parent", m_fork_parent, METH_NOARGS, fork_parent_doc},
    {"is_library", (PyCFunction)(void (*)(void))m_is_library, METH_FASTCALL, is_library_doc},
    {"load_embedded", (PyCFunction)(void (*)(void))dr_embed_load_py, METH_FASTCALL,
     "load_embedded(name, ...): dynrec's own Python modules _dynrec.NAME (embed.h)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef dynrec_module = {PyModuleDef_HEAD_INIT,
                                           "_dynrec",
                                           "dynrec's recorder, built into the dynrec binary.",
                                           -1,
                                           dynrec_methods,
                                           NULL,
                                           NULL,
                                           NULL,
                                           NULL};

PyObject *dr_session_module(void) {
    PyObject *mod = PyModule_Create(&dynrec_module);
    if (mod && dr_around_add(mod) < 0) Py_CLEAR(mod);
    return mod;
}

/* _dynrec.seeds = {"random": n, "numpy": m} and, under --rerun-of,
 * _dynrec.rerun = {"of": path, "config_start": json or None,
 * "overrides": [(name, value), ...]}; else _dynrec.rerun = None.
 * Returns 0, or -1 with a Python exception set. */
static int set_run_attrs(PyObject *mod) {
    const DrRunOptions *o = dr_session.opts;
    PyObject *seeds =
        Py_BuildValue("{s:k,s:k}", "random", dr_session.seeds[0], "numpy", dr_session.seeds[1]);
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
                                           "backend", o->replay_backend, "frame", o->replay_frame,
                                           "compile", o->replay_compile)
                           : Py_NewRef(Py_None);
    if (!replay) return -1;
    rc = PyObject_SetAttrString(mod, "replay_options", replay);
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
                                    dr_session.config_start, "overrides", over);
    if (!rerun) return -1;
    rc = PyObject_SetAttrString(mod, "rerun", rerun);
    Py_DECREF(rerun);
    return rc;
}

/* Runs adapter.py in _dynrec's namespace the first time, and its begin()
 * for each later session of the process.  A failure is recorded, never
 * shown: the script must run as it would without dynrec. */
void dr_session_run_adapter(void) {
    static int ran;
    PyObject *mod = NULL, *res = NULL;
    mod = PyImport_ImportModule("_dynrec");
    if (!mod) goto error;
    if (set_run_attrs(mod) < 0) goto error;
    if (ran) {
        res = PyObject_CallMethod(mod, "begin", NULL);
        if (!res) goto error;
        goto done;
    }
    ran = 1;
    DrGcHold gc;
    dr_py_gc_hold_keep(&gc);
    if (dr_embed_exec("adapter", PyModule_GetDict(mod)) == 0)
        res = PyObject_CallMethod(mod, "install", NULL); /* adapter.py's entry point */
    dr_py_gc_release_keep(&gc);
    if (!res) goto error;
    goto done;
error:
    record_python_error("adapter", NULL);
done:
    Py_XDECREF(res);
    Py_XDECREF(mod);
}

/* ---- start and end ----------------------------------------------------- */

int dr_session_finish(int status, int sig) {
    status &= 0xff; /* what the parent sees: sys.exit(256) is 0, -1 is 255 */
    DrRecorder *rec = dr_session.rec;
    dr_session.rec = NULL;
    if (!rec) return DR_OK;
    DrError err = {0};
    const char *path = dr_session.opts->trace_path;
    int rc = dr_rec_finish(rec, status, sig, &err);
    if (rc == DR_ERR_WAL_KEPT) fprintf(stderr, "dynrec: %s\n", err.msg);
    else if (rc != DR_OK)
        fprintf(stderr, "dynrec: the trace %s is incomplete: %s\n", path, err.msg);
    else if (!dr_session.opts->quiet) fprintf(stderr, "dynrec: trace written to %s\n", path);
    return rc;
}

void dr_session_atfork_child(void) { dr_session.rec = NULL; }

int dr_run_is_recorded_env(const char *name) {
    static const char *const prefixes[] = {
        "TORCH",       "PYTORCH",    "PYTHON",          "CUDA",  "OMP_",
        "MKL_",        "KMP_",       "OPENBLAS",        "NCCL_", "TRITON",
        "VIRTUAL_ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYNREC"};
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

void dr_session_start_info(DrStartInfo *si) {
    struct timespec ts;
    si->start_unix_ns =
        clock_gettime(CLOCK_REALTIME, &ts) == 0 ? (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec : 0;
    if (!getcwd(si->cwd, sizeof si->cwd)) strcpy(si->cwd, "?");
    time_t tnow = time(NULL);
    strftime(si->now, sizeof si->now, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tnow));
}

/* A decimal environment variable in [0, LONG_MAX), or -1. */
static long env_number(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) return -1;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    return *end || errno || n < 0 || n == LONG_MAX ? -1 : n;
}

long dr_session_rank(void) {
    long world = env_number("WORLD_SIZE");
    return world > 1 ? env_number("RANK") : -1;
}

int dr_session_start_meta(DrTrace *t, const DrStartInfo *si, DrError *err) {
    const DrRunOptions *o = si->o;
    const char *cwd = si->cwd;
    char *argv_json = json_array(o->argc, o->argv);
    char *cmd_json = json_array(o->cmd_argc, o->cmd_argv);
    int rc = dr_trace_set_meta(t, "command", cmd_json ? cmd_json : "[]", err);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "argv", argv_json ? argv_json : "[]", err);
    if (rc == DR_OK && o->target)
        rc = dr_trace_set_meta(t, o->is_module ? "module" : "script", o->target, err);
    /* A replay names its files as the recording did, relative to the
     * recorded cwd, wherever it runs (confined, its cwd is the sandbox's
     * /tmp): a module run's (-m pytest) root is that cwd too, and a file
     * outside a script's directory (a package on PYTHONPATH) is named
     * relative to it, or as a temporary file, as recorded. */
    char *rec_cwd = NULL;
    if (o->replay_of && dr_session.source &&
        dr_trace_get_meta(dr_session.source, "cwd", &rec_cwd, NULL) == DR_OK && rec_cwd &&
        rec_cwd[0] == '/')
        cwd = rec_cwd;
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "cwd", cwd, err);
    free(rec_cwd);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "start_time", si->now, err);
    /* The wall clock at the recorder's time 0, in ns: what puts the traces
     * of a job's ranks on one timeline (export --format perfetto). */
    if (rc == DR_OK && si->start_unix_ns > 0)
        rc = dr_trace_set_meta_int(t, "start_unix_ns", si->start_unix_ns, err);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "python_version", Py_GetVersion(), err);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "python_executable", si->python, err);
    if (rc == DR_OK) rc = dr_trace_set_meta(t, "hash_seed", si->seed, err);
    if (rc == DR_OK) rc = dr_trace_set_meta_int(t, "pid", getpid(), err);
    if (rc == DR_OK)
        rc = dr_trace_set_meta(t, "hook.frame", o->all_frames ? "all-frames" : "while-dynamo", err);
    char num[32];
    if (si->seeded) {
        snprintf(num, sizeof num, "%lu", si->seeds[0]);
        if (rc == DR_OK) rc = dr_trace_set_meta(t, "seed.random", num, err);
        snprintf(num, sizeof num, "%lu", si->seeds[1]);
        if (rc == DR_OK) rc = dr_trace_set_meta(t, "seed.numpy", num, err);
    }
    /* A rank of a torchrun (torch.distributed) job: what `dynrec ranks`
     * orders the traces by.  dist.backend is written by the adapter once
     * a process group exists. */
    static const char *const dist[][2] = {{"RANK", "dist.rank"},
                                          {"LOCAL_RANK", "dist.local_rank"},
                                          {"WORLD_SIZE", "dist.world_size"}};
    for (size_t i = 0; rc == DR_OK && i < sizeof dist / sizeof *dist; i++) {
        long n = env_number(dist[i][0]);
        if (n >= 0) rc = dr_trace_set_meta_int(t, dist[i][1], n, err);
    }
    for (char **e = environ; rc == DR_OK && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || !dr_run_is_recorded_env(*e)) continue;
        char key[256];
        snprintf(key, sizeof key, "env.%.*s", (int)(eq - *e), *e);
        rc = dr_trace_set_meta(t, key, eq + 1, err);
    }
    if (rc == DR_OK && si->src)
        rc = dr_trace_add_file(t, o->target, "script", si->src, si->srclen, err);
    free(argv_json);
    free(cmd_json);
    return rc;
}

/* path with "-rankN" before its ".db" (or at its end). */
static char *with_rank(const char *path, long rank) {
    size_t n = strlen(path);
    int ext = n > 3 && strcmp(path + n - 3, ".db") == 0;
    char *p = NULL;
    if (asprintf(&p, "%.*s-rank%ld%s", (int)(ext ? n - 3 : n), path, rank, ext ? ".db" : "") < 0)
        return NULL;
    return p;
}

/* "<stem>-YYYYmmdd-HHMMSS[-rankN].db" in dir (NULL: the cwd), adding -2,
 * -3, ... rather than replacing an earlier trace. */
static char *default_trace_path(const char *dir, const char *target, long rank) {
    const char *base = target ? strrchr(target, '/') : NULL;
    base = base ? base + 1 : target && *target ? target : "dynrec";
    size_t stem = strlen(base);
    if (stem > 3 && strcmp(base + stem - 3, ".py") == 0) stem -= 3;
    if (stem > 64) stem = 64;
    char ts[32], rk[32] = "";
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", localtime(&now));
    if (rank >= 0) snprintf(rk, sizeof rk, "-rank%ld", rank);
    const char *sep = dir && *dir && dir[strlen(dir) - 1] != '/' ? "/" : "";
    for (int i = 1; i < 10000; i++) {
        char *p = NULL;
        int n = i == 1
                    ? asprintf(&p, "%s%s%.*s-%s%s.db", dir ? dir : "", sep, (int)stem, base, ts, rk)
                    : asprintf(&p, "%s%s%.*s-%s-%d%s.db", dir ? dir : "", sep, (int)stem, base, ts,
                               i, rk);
        if (n < 0) return NULL;
        if (access(p, F_OK) != 0) return p;
        free(p);
    }
    return NULL;
}

char *dr_session_trace_path(const char *given, const char *target) {
    long rank = dr_session_rank();
    struct stat sb;
    if (!given) return default_trace_path(NULL, target, rank);
    if (stat(given, &sb) == 0 && S_ISDIR(sb.st_mode))
        return default_trace_path(given, target, rank);
    return rank >= 0 ? with_rank(given, rank) : strdup(given);
}
