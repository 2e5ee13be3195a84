/* output.c -- keeps what the program writes to fds 1 and 2 (see output.h).
 *
 * The program's stdout and stderr stay exactly what they are (a terminal
 * stays a terminal, buffering is Python's own): dynrec defines write(2)
 * itself, and the dynamic linker binds every call of write() from
 * libpython and from extension modules to the executable's definition,
 * which calls the C library's write and, for fds 1 and 2, copies what was
 * written into a preallocated buffer.  The copy never blocks and never
 * allocates: a write that finds the buffer in use (another thread, or a
 * signal handler such as faulthandler's) is not kept and the output is
 * marked incomplete.  Children the program starts write with their own
 * copies of the library and are not kept. */
#define _GNU_SOURCE 1
#include "output.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
    atomic_flag busy;
    char *buf;
    size_t len;
    uint64_t total;
    int incomplete;
} Stream;

static Stream streams[2] = {{.busy = ATOMIC_FLAG_INIT}, {.busy = ATOMIC_FLAG_INIT}};
static atomic_int keeping;
static ssize_t (*real_write)(int, const void *, size_t);

static void keep(Stream *s, const void *data, size_t n) {
    if (atomic_flag_test_and_set_explicit(&s->busy, memory_order_acquire)) {
        s->incomplete = 1;
        return;
    }
    s->total += n;
    size_t room = DR_OUTPUT_CAP - s->len;
    if (n > room) n = room;
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    atomic_flag_clear_explicit(&s->busy, memory_order_release);
}

ssize_t write(int fd, const void *data, size_t n) {
    ssize_t r = real_write ? real_write(fd, data, n) : syscall(SYS_write, fd, data, n);
    if (r > 0 && (fd == 1 || fd == 2) && atomic_load_explicit(&keeping, memory_order_relaxed))
        keep(&streams[fd - 1], data, (size_t)r);
    return r;
}

int dr_output_start(void) {
    real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    for (int i = 0; i < 2; i++) {
        /* Pages are only touched as output arrives. */
        if (!streams[i].buf && !(streams[i].buf = malloc(DR_OUTPUT_CAP))) {
            dr_output_free();
            return -1;
        }
    }
    atomic_store(&keeping, 1);
    return 0;
}

/* Waits (briefly) for a write that started before keeping stopped to
 * finish its copy; 1 when s is now held. */
static int hold(Stream *s) {
    for (int i = 0; i < 1000000; i++)
        if (!atomic_flag_test_and_set_explicit(&s->busy, memory_order_acquire)) return 1;
    return 0;
}

int dr_output_take(int fd, const char **data, size_t *len, uint64_t *total, int *complete) {
    atomic_store(&keeping, 0);
    if ((fd != 1 && fd != 2) || !streams[fd - 1].buf) return -1;
    Stream *s = &streams[fd - 1];
    int held = hold(s);
    *data = s->buf;
    *len = s->len;
    *total = s->total;
    *complete = !s->incomplete && held;
    if (held) atomic_flag_clear(&s->busy);
    return 0;
}

void dr_output_free(void) {
    atomic_store(&keeping, 0);
    for (int i = 0; i < 2; i++) {
        if (!hold(&streams[i])) continue; /* still being written: left to the exit */
        free(streams[i].buf);
        streams[i].buf = NULL;
        streams[i].len = 0;
        atomic_flag_clear(&streams[i].busy);
    }
}
