/* hook.c -- the PEP 523 frame function that counts evaluations per code object.
 *
 * Hot path: read the frame's code object, find its slot in an open-addressed
 * table keyed by pointer, bump a counter, call _PyEval_EvalFrameDefault.
 * Counters are relaxed atomics written only by the GIL holder (plain load
 * and store, no locked instruction) so the writer thread may read them
 * without the GIL.  A new code object (rare) takes the mutex, may grow the
 * table, copies the object's names to C strings for the writer, and keeps a
 * strong reference so the pointer cannot be reused by another object while
 * it is a key.  If anything fails there, counting turns itself off for the
 * rest of the run and the failure is reported through dr_hook_failed(). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#else
#define Py_BUILD_CORE
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"

#if PY_VERSION_HEX < 0x030A0000 || PY_VERSION_HEX >= 0x030E0000
#error "dynrec's frame hook supports CPython 3.10 to 3.13 (see DESIGN.md, hook points)"
#endif

/* What the frame function is given, its code object, and whether the
 * evaluation starts the frame (a call) or continues it (a generator or
 * coroutine resumed).  Each version's own frame initialisation says what a
 * fresh frame looks like:
 *   3.10  PyFrameObject, f_code, f_lasti == -1          (frameobject.c)
 *   3.11  _PyInterpreterFrame, f_code, prev_instr == code - 1   (pycore_frame.h)
 *   3.12  as 3.11
 *   3.13  _PyInterpreterFrame, f_executable (a code object, or None for a
 *         shim frame, which is passed on uncounted), instr_ptr == code */
#if PY_VERSION_HEX < 0x030B0000
typedef PyFrameObject DrFrame;
#define DR_FRAME_CODE(f) ((f)->f_code)
#define DR_FRAME_IS_CALL(f, co) ((f)->f_lasti < 0)
#elif PY_VERSION_HEX < 0x030D0000
typedef _PyInterpreterFrame DrFrame;
#define DR_FRAME_CODE(f) ((f)->f_code)
#define DR_FRAME_IS_CALL(f, co) ((f)->prev_instr == _PyCode_CODE(co) - 1)
#else
typedef _PyInterpreterFrame DrFrame;
#define DR_FRAME_CODE(f)                                                                           \
    (PyCode_Check((f)->f_executable) ? (PyCodeObject *)(f)->f_executable : NULL)
#define DR_FRAME_IS_CALL(f, co) ((f)->instr_ptr == _PyCode_CODE(co))
#endif

typedef struct {
    PyCodeObject *code; /* NULL: empty slot */
    uint32_t entry;
    _Atomic uint64_t calls;
    _Atomic uint64_t resumes;
} Slot;

typedef struct {
    char *filename;
    char *qualname;
    int firstlineno;
    uint32_t slot; /* where the entry's counters live now */
} Entry;

static struct {
    Slot *slots;
    size_t mask; /* capacity - 1; capacity is a power of two */
    size_t used;
    Entry *entries;
    size_t nentries, entries_cap;
    pthread_mutex_t lock;
    int counting;
    int failed;
    int released;
} H = {.lock = PTHREAD_MUTEX_INITIALIZER};

static inline size_t slot_of(const void *p, size_t mask) {
    /* Code objects are 16-byte aligned; Fibonacci hashing spreads the rest. */
    return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask;
}

/* A forked child is not recorded: it stops counting, and its copy of the
 * lock, which the parent's writer thread may have held at fork time, is
 * made usable again. */
static void hook_atfork_child(void) {
    pthread_mutex_init(&H.lock, NULL);
    H.counting = 0;
    H.released = 1;
}

int dr_hook_init(void) {
    static int atfork_done;
    if (!atfork_done && pthread_atfork(NULL, NULL, hook_atfork_child) == 0) atfork_done = 1;
    size_t cap = 4096;
    H.slots = calloc(cap, sizeof *H.slots);
    H.entries_cap = 1024;
    H.entries = calloc(H.entries_cap, sizeof *H.entries);
    if (!H.slots || !H.entries) {
        free(H.slots);
        free(H.entries);
        H.slots = NULL;
        H.entries = NULL;
        return -1;
    }
    H.mask = cap - 1;
    H.used = H.nentries = 0;
    H.failed = H.released = 0; /* a new session (in process) starts afresh */
    H.counting = 1;
    return 0;
}

/* Copies a str to a malloc'd UTF-8 C string; NULL on failure (no error set). */
static char *utf8_copy(PyObject *s) {
    if (!s || !PyUnicode_Check(s)) return strdup("?");
    Py_ssize_t n = 0;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (!u) { /* lone surrogates */
        PyErr_Clear();
        PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
        if (!b) {
            PyErr_Clear();
            return strdup("?");
        }
        char *r = strdup(PyBytes_AS_STRING(b));
        Py_DECREF(b);
        return r;
    }
    char *r = malloc((size_t)n + 1);
    if (r) memcpy(r, u, (size_t)n + 1);
    return r;
}

static int grow_locked(void) {
    size_t ncap = (H.mask + 1) * 2;
    Slot *n = calloc(ncap, sizeof *n);
    if (!n) return -1;
    for (size_t i = 0; i <= H.mask; i++) {
        Slot *s = &H.slots[i];
        if (!s->code) continue;
        size_t j = slot_of(s->code, ncap - 1);
        while (n[j].code) j = (j + 1) & (ncap - 1);
        n[j].code = s->code;
        n[j].entry = s->entry;
        atomic_store_explicit(&n[j].calls, atomic_load_explicit(&s->calls, memory_order_relaxed),
                              memory_order_relaxed);
        atomic_store_explicit(&n[j].resumes,
                              atomic_load_explicit(&s->resumes, memory_order_relaxed),
                              memory_order_relaxed);
        H.entries[s->entry].slot = (uint32_t)j;
    }
    free(H.slots);
    H.slots = n;
    H.mask = ncap - 1;
    return 0;
}

/* Rare path: the first evaluation of a code object.  Returns its slot, or
 * NULL after turning counting off.  GIL held; a pending exception (a
 * generator being thrown into) is preserved. */
static Slot *insert(PyCodeObject *co) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    char *fn = utf8_copy(co->co_filename);
#if PY_VERSION_HEX >= 0x030B0000
    char *qn = utf8_copy(co->co_qualname);
#else
    char *qn = utf8_copy(co->co_name); /* 3.10 code objects carry no qualname */
#endif
    Slot *s = NULL;
    pthread_mutex_lock(&H.lock);
    if (!fn || !qn) goto fail;
    if ((H.used + 1) * 2 > H.mask + 1 && grow_locked() != 0) goto fail;
    if (H.nentries == H.entries_cap) {
        size_t ncap = H.entries_cap * 2;
        Entry *ne = realloc(H.entries, ncap * sizeof *ne);
        if (!ne) goto fail;
        H.entries = ne;
        H.entries_cap = ncap;
    }
    size_t j = slot_of(co, H.mask);
    while (H.slots[j].code) j = (j + 1) & H.mask;
    s = &H.slots[j];
    Py_INCREF(co);
    s->code = co;
    s->entry = (uint32_t)H.nentries;
    H.entries[H.nentries++] = (Entry){fn, qn, co->co_firstlineno, (uint32_t)j};
    H.used++;
    pthread_mutex_unlock(&H.lock);
    PyErr_Restore(et, ev, tb);
    return s;
fail:
    H.counting = 0;
    H.failed = 1;
    pthread_mutex_unlock(&H.lock);
    free(fn);
    free(qn);
    PyErr_Restore(et, ev, tb);
    return NULL;
}

/* Depth of Dynamo callbacks this thread is inside (dr_hook_pause). */
static _Thread_local unsigned paused;

static inline void bump(Slot *s, DrFrame *f, PyCodeObject *co) {
    _Atomic uint64_t *c = DR_FRAME_IS_CALL(f, co) ? &s->calls : &s->resumes;
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* The first evaluation of a code object, out of line: the hook itself then
 * makes no call but its tail call, and saves no register. */
static __attribute__((noinline)) PyObject *eval_new_code(PyThreadState *ts, DrFrame *f,
                                                         int throwflag, PyCodeObject *co) {
    Slot *s = insert(co);
    if (s) bump(s, f, co);
    return _PyEval_EvalFrameDefault(ts, f, throwflag);
}

static PyObject *dr_eval_frame(PyThreadState *ts, DrFrame *f, int throwflag) {
    PyCodeObject *co;
    if (__builtin_expect(H.counting && !paused, 1) && (co = DR_FRAME_CODE(f)) != NULL) {
        size_t j = slot_of(co, H.mask);
        Slot *s;
        for (;;) {
            s = &H.slots[j];
            if (s->code == co) break;
            if (!s->code) return eval_new_code(ts, f, throwflag, co);
            j = (j + 1) & H.mask;
        }
        bump(s, f, co);
    }
    return _PyEval_EvalFrameDefault(ts, f, throwflag);
}

long dr_hook_code_index(PyCodeObject *co) {
    if (!H.slots || H.released || H.failed) return -1;
    size_t j = slot_of(co, H.mask);
    for (;; j = (j + 1) & H.mask) {
        Slot *s = &H.slots[j];
        if (s->code == co) return (long)s->entry;
        if (!s->code) break;
    }
    Slot *s = insert(co);
    return s ? (long)s->entry : -1;
}

int dr_hook_install(void) {
    PyInterpreterState *in = PyInterpreterState_Get();
    _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(in);
    if (cur != _PyEval_EvalFrameDefault) return 0; /* ours already, or someone else's */
    _PyInterpreterState_SetEvalFrameFunc(in, dr_eval_frame);
    return 1;
}

void dr_hook_uninstall(void) {
    PyInterpreterState *in = PyInterpreterState_Get();
    if (_PyInterpreterState_GetEvalFrameFunc(in) == dr_eval_frame)
        _PyInterpreterState_SetEvalFrameFunc(in, _PyEval_EvalFrameDefault);
}

int dr_hook_is_installed(void) {
    return _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get()) == dr_eval_frame;
}

void dr_hook_pause(int on) {
    if (on) paused++;
    else if (paused) paused--;
}

void dr_hook_set_counting(int on) { H.counting = on && !H.failed && !H.released && H.slots; }
int dr_hook_failed(void) { return H.failed; }

void dr_hook_release(void) {
    H.counting = 0;
    H.released = 1;
    pthread_mutex_lock(&H.lock);
    for (size_t i = 0; H.slots && i <= H.mask; i++) Py_CLEAR(H.slots[i].code);
    pthread_mutex_unlock(&H.lock);
}

long dr_hook_snapshot(DrCodeFn fn, void *ud) {
    pthread_mutex_lock(&H.lock);
    size_t n = H.nentries;
    for (size_t i = 0; i < n; i++) {
        Entry *e = &H.entries[i];
        Slot *s = &H.slots[e->slot];
        DrCodeInfo info = {
            .index = (uint32_t)i,
            .filename = e->filename,
            .qualname = e->qualname,
            .firstlineno = e->firstlineno,
            .calls = atomic_load_explicit(&s->calls, memory_order_relaxed),
            .resumes = atomic_load_explicit(&s->resumes, memory_order_relaxed),
        };
        fn(ud, &info);
    }
    pthread_mutex_unlock(&H.lock);
    return (long)n;
}

void dr_hook_free(void) {
    pthread_mutex_lock(&H.lock);
    for (size_t i = 0; i < H.nentries; i++) {
        free(H.entries[i].filename);
        free(H.entries[i].qualname);
    }
    free(H.entries);
    free(H.slots);
    H.entries = NULL;
    H.slots = NULL;
    H.nentries = H.used = 0;
    H.counting = 0;
    pthread_mutex_unlock(&H.lock);
}
