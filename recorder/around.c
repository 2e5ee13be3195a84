/* around.c -- _dynrec.around(orig, before, after): how the adapter wraps Dynamo.
 *
 * A wrapper written in Python is a frame of its own while the wrapped
 * function runs: it shows in the tracebacks of every exception that passes
 * through it (as "<dynrec dynamo adapter>:284 ... ???" under pytest), and in
 * every stack that torch captures, which shifts the frames torch skips by
 * count (log_dynamo_start's CapturedTraceback.extract(skip=...)) and so
 * changes its structured trace.  Recording must not change the program, so
 * the call of the original happens here, in C, which adds no frame:
 *
 *     state = before(*args, **kwargs)      # None: no after for this call
 *     result = orig(*args, **kwargs)
 *     after(state, result, None)           # or after(state, None, exc)
 *     return result                        # or the same exception, as is
 *
 * before and after run (and return) before and after the call, so neither is
 * on the stack while the original runs.  An Exception they raise is cleared:
 * the adapter records its own failures (dynamo.py's Guarded); anything else
 * (KeyboardInterrupt from a Ctrl-C that landed in them, SystemExit) is the
 * program's and goes on as it would have.  An around object
 * is a method descriptor like a function, so it can replace a method on a
 * class (CatchErrorsWrapper.__call__) and get the instance as first argument.
 *
 * before and after run with the cyclic collector held (pycompat.h): what
 * they allocate does not move the program's collections; with held=True
 * orig too (torch's trace_structured, which builds its records only
 * because dynrec listens).  held(fn, *args) is the same for the adapter's
 * other entry points (the structured-trace handler). */
#include "around.h"

#include <stddef.h>

#include "pycompat.h"

typedef struct {
    PyObject_HEAD PyObject *orig, *before, *after; /* before and after may be Py_None */
    PyObject *dict; /* __dict__, for attributes such as __wrapped__ */
    int held;       /* orig itself runs with the collector held */
} Around;

/* fn(*args, **kwargs) with the collector held.  Ownership: a new reference,
 * or NULL with fn's exception. */
static PyObject *call_held(PyObject *fn, PyObject *args, PyObject *kwargs) {
    DrGcHold gc;
    dr_py_gc_hold(&gc);
    PyObject *r = PyObject_Call(fn, args, kwargs);
    dr_py_gc_release(&gc);
    return r;
}

static PyObject *around_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    Around *a = (Around *)self;
    PyObject *state = Py_NewRef(Py_None);
    int call_after = a->after != Py_None;
    if (a->before != Py_None) {
        Py_DECREF(state);
        state = call_held(a->before, args, kwargs);
        if (!state) {
            if (!PyErr_ExceptionMatches(PyExc_Exception)) return NULL;
            PyErr_Clear();
        }
        if (!state || state == Py_None) call_after = 0;
    }
    PyObject *res =
        a->held ? call_held(a->orig, args, kwargs) : PyObject_Call(a->orig, args, kwargs);
    if (call_after) {
        PyObject *et = NULL, *ev = NULL, *tb = NULL;
        if (!res) {
            PyErr_Fetch(&et, &ev, &tb);
            PyErr_NormalizeException(&et, &ev, &tb);
            if (ev && tb) PyException_SetTraceback(ev, tb);
        }
        DrGcHold gc;
        dr_py_gc_hold(&gc);
        PyObject *r = PyObject_CallFunctionObjArgs(a->after, state, res ? res : Py_None,
                                                   ev ? ev : Py_None, NULL);
        dr_py_gc_release(&gc);
        if (!r && !PyErr_ExceptionMatches(PyExc_Exception)) {
            /* An interrupt in the adapter: the program's, over the result. */
            Py_XDECREF(et), Py_XDECREF(ev), Py_XDECREF(tb);
            Py_XDECREF(res);
            Py_XDECREF(state);
            return NULL;
        }
        if (!r) PyErr_Clear();
        Py_XDECREF(r);
        if (!res) PyErr_Restore(et, ev, tb);
    }
    Py_XDECREF(state);
    return res;
}

/* Bound like a function: through an instance, a method of it. */
static PyObject *around_get(PyObject *self, PyObject *obj, PyObject *type) {
    (void)type;
    if (!obj || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static int around_traverse(PyObject *self, visitproc visit, void *arg) {
    Around *a = (Around *)self;
    Py_VISIT(a->orig);
    Py_VISIT(a->before);
    Py_VISIT(a->after);
    Py_VISIT(a->dict);
    return 0;
}

static int around_clear(PyObject *self) {
    Around *a = (Around *)self;
    Py_CLEAR(a->orig);
    Py_CLEAR(a->before);
    Py_CLEAR(a->after);
    Py_CLEAR(a->dict);
    return 0;
}

static void around_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    around_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *around_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"orig", "before", "after", "held", NULL};
    PyObject *orig, *before = Py_None, *after = Py_None;
    int held = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOp:around", kw, &orig, &before, &after,
                                     &held))
        return NULL;
    if (!PyCallable_Check(orig) || (before != Py_None && !PyCallable_Check(before)) ||
        (after != Py_None && !PyCallable_Check(after))) {
        PyErr_SetString(PyExc_TypeError, "around(orig, before, after) takes callables or None");
        return NULL;
    }
    Around *a = (Around *)type->tp_alloc(type, 0);
    if (!a) return NULL;
    a->orig = Py_NewRef(orig);
    a->before = Py_NewRef(before);
    a->after = Py_NewRef(after);
    a->held = held;
    a->dict = PyDict_New();
    if (!a->dict || PyDict_SetItemString(a->dict, "__wrapped__", orig) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return (PyObject *)a;
}

PyDoc_STRVAR(around_doc,
             "around(orig, before=None, after=None, held=False): calls orig with no frame of "
             "its own; before(*args, **kwargs) first (None: no after), then "
             "after(state, result, exc); held: orig too runs with the collector held.");

static PyTypeObject around_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_dynrec.around",
    .tp_basicsize = sizeof(Around),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = around_doc,
    .tp_new = around_new,
    .tp_call = around_call,
    .tp_descr_get = around_get,
    .tp_traverse = around_traverse,
    .tp_clear = around_clear,
    .tp_dealloc = around_dealloc,
    .tp_dictoffset = offsetof(Around, dict),
};

/* held(fn, *args): fn(*args) with the collector held.  Ownership: a new
 * reference, or NULL with fn's exception. */
static PyObject *m_held(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "held(fn, *args) takes a callable");
        return NULL;
    }
    DrGcHold gc;
    dr_py_gc_hold(&gc);
    PyObject *r = PyObject_Vectorcall(args[0], args + 1, (size_t)(nargs - 1), NULL);
    dr_py_gc_release(&gc);
    return r;
}

static PyMethodDef held_def = {"held", (PyCFunction)(void (*)(void))m_held, METH_FASTCALL,
                               "held(fn, *args): fn(*args) with the cyclic collector held."};

int dr_around_add(PyObject *mod) {
    PyObject *held = PyCFunction_NewEx(&held_def, NULL, NULL);
    if (!held || PyModule_AddObject(mod, "held", held) < 0) {
        Py_XDECREF(held);
        return -1;
    }
    if (PyType_Ready(&around_type) < 0) return -1;
    Py_INCREF(&around_type);
    if (PyModule_AddObject(mod, "around", (PyObject *)&around_type) < 0) {
        Py_DECREF(&around_type);
        return -1;
    }
    return 0;
}
