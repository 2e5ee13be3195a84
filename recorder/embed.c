/* embed.c -- modules from the Python sources compiled into the binary (embed.h). */
#include "embed.h"

#include <marshal.h>
#include <string.h>

typedef struct {
    const char *name, *filename, *source;
    const unsigned char *code; /* marshalled for DR_EMBED_PY_VERSION */
    size_t code_len;
} DrEmbedded;

#include "embedded_py.h"

static const DrEmbedded *find(const char *name) {
    for (size_t i = 0; i < sizeof dr_embedded / sizeof *dr_embedded; i++)
        if (strcmp(dr_embedded[i].name, name) == 0) return &dr_embedded[i];
    PyErr_Format(PyExc_ImportError, "dynrec has no embedded module %s", name);
    return NULL;
}

int dr_embed_exec(const char *name, PyObject *ns) {
    const DrEmbedded *e = find(name);
    if (!e) return -1;
    if (!PyDict_GetItemString(ns, "__builtins__") &&
        PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) < 0)
        return -1;
    PyObject *code = NULL;
#if (PY_VERSION_HEX >> 16) == DR_EMBED_PY_VERSION
    code = PyMarshal_ReadObjectFromString((const char *)e->code, (Py_ssize_t)e->code_len);
    if (code && !PyCode_Check(code)) Py_CLEAR(code);
    if (!code) PyErr_Clear(); /* the text is there */
#endif
    if (!code) code = Py_CompileString(e->source, e->filename, Py_file_input);
    if (!code) return -1;
    PyObject *res = PyEval_EvalCode(code, ns, ns);
    Py_DECREF(code);
    if (!res) return -1;
    Py_DECREF(res);
    return 0;
}

/* The module PARENT.NAME: *fresh is 1 for a new one, registered, and 0 for
 * the one an earlier call made (sys.modules has it).  A new reference, or
 * NULL. */
static PyObject *get_module(PyObject *parent, PyObject *pname, const char *name, int *fresh) {
    PyObject *full = PyUnicode_FromFormat("%U.%s", pname, name);
    if (!full) return NULL;
    PyObject *modules = PyImport_GetModuleDict();           /* borrowed */
    PyObject *mod = PyDict_GetItemWithError(modules, full); /* borrowed */
    if (mod || PyErr_Occurred()) {
        Py_DECREF(full);
        *fresh = 0;
        return Py_XNewRef(mod);
    }
    *fresh = 1;
    if (PyObject_HasAttrString(parent, name)) { /* a function of _dynrec's, say */
        PyErr_Format(PyExc_ImportError, "the embedded module %U would replace %U.%s", full, pname,
                     name);
        Py_DECREF(full);
        return NULL;
    }
    mod = PyModule_NewObject(full);
    int bad = !mod || PyObject_SetAttrString(mod, "__package__", pname) < 0 ||
              PyDict_SetItem(modules, full, mod) < 0 ||
              PyObject_SetAttrString(parent, name, mod) < 0;
    Py_DECREF(full);
    if (bad) Py_CLEAR(mod);
    return mod;
}

int dr_embed_modules(PyObject *parent, const char *const *names, size_t n) {
    PyObject *pname = PyModule_GetNameObject(parent);
    if (!pname) return -1;
    PyObject *mods[16] = {0};
    int fresh[16] = {0}, rc = -1;
    if (n > sizeof mods / sizeof *mods) {
        PyErr_SetString(PyExc_ValueError, "too many embedded modules at once");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (!find(names[i])) goto out;
        if (!(mods[i] = get_module(parent, pname, names[i], &fresh[i]))) goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (fresh[i] && dr_embed_exec(names[i], PyModule_GetDict(mods[i])) < 0) goto out;
    rc = 0;
out:
    for (size_t i = 0; i < n; i++) Py_XDECREF(mods[i]);
    Py_DECREF(pname);
    return rc;
}

PyObject *dr_embed_load_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const char *names[16];
    if (nargs < 1 || nargs > (Py_ssize_t)(sizeof names / sizeof *names)) {
        PyErr_SetString(PyExc_TypeError, "load_embedded(name, ...): 1 to 16 names");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        if (!(names[i] = PyUnicode_AsUTF8(args[i]))) return NULL;
    if (dr_embed_modules(self, names, (size_t)nargs) < 0) return NULL;
    Py_RETURN_NONE;
}
