/* pycompat.h -- CPython internals dynrec reads, one accessor per version
 * difference (pycompat.c). */
#ifndef DR_PYCOMPAT_H
#define DR_PYCOMPAT_H

/* Whether the program ended with an uncaught KeyboardInterrupt (Py_RunMain
 * then re-raises SIGINT).  Read at exit, GIL not needed. */
int dr_py_unhandled_keyboard_interrupt(void);

/* The collector's clock while dynrec's own Python work runs (pycompat.c):
 * hold turns collection off and notes the allocation count, release puts
 * both back.  Pairs nest (an inner hold finds collection off already).
 * GIL held. */
typedef struct {
    int count;        /* gc.get_count()[0] at hold */
    int enabled;      /* whether collection was on */
    Py_ssize_t young; /* _keep: the youngest generation's size at hold */
} DrGcHold;
void dr_py_gc_hold(DrGcHold *h);
void dr_py_gc_release(const DrGcHold *h);
/* The same around work whose objects dynrec keeps for the whole run
 * (loading the adapter): they do not count toward a full collection. */
void dr_py_gc_hold_keep(DrGcHold *h);
void dr_py_gc_release_keep(const DrGcHold *h);

#endif
