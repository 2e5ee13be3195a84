/* writer.c -- buffered records and the thread that writes them to the trace.
 *
 * Two arenas: producers append to the active one under `lock` (a memcpy, no
 * malloc in the steady state: an arena only grows); the writer thread swaps
 * them and writes the full one outside the lock.  The thread wakes on a pipe
 * (commands from the runner and the SIGTERM handler, which may only write(2))
 * or every DR_FLUSH_MS.  A write error stops all further writing; it is kept
 * and reported once by dr_rec_finish, and the user's program goes on. */
#define _GNU_SOURCE 1
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../schema/ident.h"
#include "../schema/sign.h"
#include "hook.h"

enum { REC_EVENT = 1, REC_META, REC_FILE, REC_VALUE, REC_GUARD };
#define NO_TEXT UINT32_MAX
enum { F_TEXT_TEMPLATE = 1, F_MASKED_TEMPLATE = 2 };

/* The strings of a record: an event uses all of them, meta the first two
 * (key, value), a file the first two (path, role), a value node the kind,
 * its type (in S_TEXT) and its JSON value (in S_DATA), a guard event its
 * source in S_KIND (the kind is "guard"), its user location in S_DATA, and
 * in S_TEXT and S_KEY the templates of text and masked text where flags
 * has F_TEXT_TEMPLATE and F_MASKED_TEMPLATE. */
enum { S_KIND, S_TEXT, S_COMPILE, S_DATA, S_KEY, S__N };

/* One buffered record; its strings (each NUL-terminated, so the writer uses
 * them in place) and then its payload follow it in the arena. */
typedef struct {
    uint32_t type;
    uint32_t has_payload;
    uint32_t len[S__N]; /* NO_TEXT: absent */
    uint32_t flags;
    uint64_t plen;
    int64_t t_ns, thread, num;
    int64_t code, code2; /* hook entry indexes, -1: none */
} RecHdr;

typedef struct {
    char *buf;
    size_t len, cap;
} Arena;

/* What the writer already wrote about one code object.  Library code
 * (the standard library, site-packages, frozen and generated code) run
 * while Dynamo compiles is thousands of code objects that say little: it is
 * written only when an event refers to it, or with --all-frames; until then
 * only its names (owned by the frame hook) and counts are kept here. */
typedef struct {
    int64_t id;
    uint64_t calls, resumes;
    const char *filename, *qualname;
    int firstlineno;
    int lib;
} CodeRow;

typedef struct {
    DrCodeInfo info;
    int is_new;
} CodeChange;

enum { ST_RUNNING, ST_CLOSING, ST_CLOSED };

struct DrRecorder {
    DrTrace *trace;
    char *path;      /* deferred start: the reserved file to make a trace of */
    DrSetupFn setup; /* ... and what to write into it first */
    void *setup_ud;
    DrSnapshotFn snapshot;
    pthread_t thread;
    int thread_started;
    int paused; /* dr_rec_pause: no writer thread until dr_rec_resume */
    int pipe_r, pipe_w;
    pthread_mutex_t lock;
    Arena active, spare;
    int dropped; /* records lost to out-of-memory */
    struct timespec t0;
    _Atomic int state;
    int failed;
    DrError fail;
    int64_t fail_ns; /* when the first write failed */
    int reserve_fd;  /* disk space held back for the last words, or -1 */
    long flushes;
    int keep_library;              /* --all-frames: write every code object */
    uint64_t lib_codes, lib_calls; /* library code objects not written, their calls */
    /* writer thread only */
    CodeRow *codes;
    size_t ncodes;
    CodeChange *changes;
    size_t nchanges, changes_cap;
    int oom;
};

static DrRecorder *sigterm_rec;
static DrRecorder *start(DrTrace *t, const char *path, DrSetupFn setup, void *ud,
                         DrSnapshotFn snapshot, DrError *err);

int64_t dr_rec_now(const DrRecorder *r) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)(ts.tv_sec - r->t0.tv_sec) * 1000000000 + (ts.tv_nsec - r->t0.tv_nsec);
}

static void append(DrRecorder *r, RecHdr *h, const char *const str[S__N], const void *p) {
    size_t need = sizeof *h + (p ? h->plen : 0);
    for (int i = 0; i < S__N; i++) {
        if (!str[i]) {
            h->len[i] = NO_TEXT;
            continue;
        }
        if (h->len[i] >= NO_TEXT) h->len[i] = NO_TEXT - 1;
        need += h->len[i] + 1;
    }
    need = (need + 7) & ~(size_t)7;
    h->has_payload = p != NULL;
    if (!p) h->plen = 0;
    h->t_ns = dr_rec_now(r);
    pthread_mutex_lock(&r->lock);
    Arena *a = &r->active;
    if (a->len + need > a->cap) {
        size_t ncap = a->cap ? a->cap : 1 << 16;
        while (ncap < a->len + need) ncap *= 2;
        char *nb = realloc(a->buf, ncap);
        if (!nb) {
            r->dropped++;
            pthread_mutex_unlock(&r->lock);
            return;
        }
        a->buf = nb;
        a->cap = ncap;
    }
    char *w = a->buf + a->len;
    memcpy(w, h, sizeof *h);
    w += sizeof *h;
    for (int i = 0; i < S__N; i++) {
        if (h->len[i] == NO_TEXT) continue;
        memcpy(w, str[i], h->len[i]);
        w[h->len[i]] = 0;
        w += h->len[i] + 1;
    }
    if (p) memcpy(w, p, h->plen);
    a->len += need;
    pthread_mutex_unlock(&r->lock);
}

void dr_rec_event(DrRecorder *r, int64_t thread, const char *kind, int64_t num, const char *text,
                  size_t text_len, const void *payload, size_t payload_len) {
    DrRecEvent ev = {.thread = thread,
                     .kind = kind,
                     .num = num,
                     .text = text,
                     .text_len = text_len,
                     .payload = payload,
                     .payload_len = payload_len,
                     .code = -1,
                     .code2 = -1};
    dr_rec_event_full(r, &ev);
}

void dr_rec_event_full(DrRecorder *r, const DrRecEvent *ev) {
    if (!r) return;
    RecHdr h = {.type = REC_EVENT,
                .len = {(uint32_t)strlen(ev->kind), (uint32_t)ev->text_len,
                        ev->compile_id ? (uint32_t)strlen(ev->compile_id) : 0,
                        (uint32_t)ev->data_len, (uint32_t)ev->key_len},
                .plen = ev->payload_len,
                .thread = ev->thread,
                .num = ev->num,
                .code = ev->code,
                .code2 = ev->code2};
    const char *str[S__N] = {ev->kind, ev->text, ev->compile_id, ev->data, ev->key};
    if (ev->guard) {
        h.type = REC_GUARD;
        h.len[S_KIND] = ev->guard_source ? (uint32_t)strlen(ev->guard_source) : 0;
        h.len[S_DATA] = ev->guard_location ? (uint32_t)strlen(ev->guard_location) : 0;
        str[S_KIND] = ev->guard_source;
        str[S_DATA] = ev->guard_location;
        if (ev->guard_text) {
            h.flags |= F_TEXT_TEMPLATE;
            h.len[S_TEXT] = (uint32_t)strlen(ev->guard_text);
            str[S_TEXT] = ev->guard_text;
        }
        if (ev->guard_masked) {
            h.flags |= F_MASKED_TEMPLATE;
            h.len[S_KEY] = (uint32_t)strlen(ev->guard_masked);
            str[S_KEY] = ev->guard_masked;
        }
    }
    append(r, &h, str, ev->payload);
}

void dr_rec_meta(DrRecorder *r, const char *key, const char *value) {
    if (!r) return;
    RecHdr h = {.type = REC_META,
                .len = {(uint32_t)strlen(key), value ? (uint32_t)strlen(value) : 0},
                .code = -1,
                .code2 = -1};
    const char *str[S__N] = {key, value ? value : ""};
    append(r, &h, str, NULL);
}

void dr_rec_file(DrRecorder *r, const char *path, const char *role, const void *data, size_t len) {
    if (!r) return;
    RecHdr h = {.type = REC_FILE,
                .len = {(uint32_t)strlen(path), (uint32_t)strlen(role)},
                .plen = len,
                .code = -1,
                .code2 = -1};
    const char *str[S__N] = {path, role};
    append(r, &h, str, data ? data : "");
}

void dr_rec_value(DrRecorder *r, int64_t capture, int64_t node, const char *kind, const char *type,
                  const char *value, size_t value_len, const void *data, size_t data_len) {
    if (!r) return;
    RecHdr h = {.type = REC_VALUE,
                .len = {(uint32_t)strlen(kind), (uint32_t)strlen(type), 0, (uint32_t)value_len},
                .plen = data_len,
                .num = capture,
                .code = -1,
                .code2 = node};
    const char *str[S__N] = {kind, type, NULL, value, NULL};
    append(r, &h, str, data);
}

/* Disk space held back, next to the trace, for saying why recording
 * stopped when the disk fills: an unnamed file (O_TMPFILE, so nothing is
 * left behind by a crash) of RESERVE bytes, closed -- freeing them -- just
 * before the writer records the failure in meta.  Best effort: no reserve
 * when the file system cannot make one. */
#define RESERVE (64 * 1024)
static int reserve_space(const char *trace_path) {
    char *dir = strdup(trace_path);
    if (!dir) return -1;
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) slash[1] = 0;
    else *slash = 0;
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    free(dir);
    if (fd < 0) return -1;
    if (posix_fallocate(fd, 0, RESERVE) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void release_reserve(DrRecorder *r) {
    if (r->reserve_fd >= 0) close(r->reserve_fd);
    r->reserve_fd = -1;
}

static void fail(DrRecorder *r, const DrError *e) {
    if (r->failed) return;
    r->failed = 1;
    r->fail = *e;
    r->fail_ns = dr_rec_now(r);
}

/* Test knob: DYNREC_FAULT_WRITE=N makes the Nth write of buffered records
 * (flushes with something to write) fail as a full disk would, to show that the program goes on and
 * what was committed before stays readable. */
static long fault_write_at(void) {
    static long at = -1;
    if (at < 0) {
        const char *v = getenv("DYNREC_FAULT_WRITE");
        at = v && *v ? atol(v) : 0;
    }
    return at;
}

/* Splits a record into its strings and payload; returns its padded size. */
static size_t record_parts(const RecHdr *h, const char *str[S__N], const char **payload) {
    const char *w = (const char *)(h + 1);
    for (int i = 0; i < S__N; i++) {
        str[i] = h->len[i] == NO_TEXT ? NULL : w;
        if (str[i]) w += h->len[i] + 1;
    }
    *payload = w;
    size_t sz = (size_t)(w - (const char *)h) + (h->has_payload ? h->plen : 0);
    return (sz + 7) & ~(size_t)7;
}

/* The trace's code_objects id for a hook entry index (-1: none, 0 when the
 * entry is not known yet: the event then has no code).  Library code an
 * event names is written now. */
static int64_t code_id_of(DrRecorder *r, int64_t idx) {
    if (idx < 0 || (size_t)idx >= r->ncodes) return 0;
    CodeRow *row = &r->codes[idx];
    if (!row->id && row->lib) {
        DrError e = {0};
        int64_t id =
            dr_trace_add_code(r->trace, row->filename, row->qualname, row->firstlineno, &e);
        if (id > 0 && dr_trace_set_frame_count(r->trace, id, (int64_t)row->calls,
                                               (int64_t)row->resumes, &e) == DR_OK) {
            row->id = id;
            row->lib = 0;
            r->lib_codes--;
            r->lib_calls -= row->calls;
        }
    }
    return row->id;
}

void dr_rec_keep_library(DrRecorder *r, int keep) {
    if (r) r->keep_library = keep;
}

static int write_record(DrRecorder *r, const RecHdr *h, const char *const str[S__N], const char *p,
                        DrError *e) {
    if (h->type == REC_META) return dr_trace_set_meta(r->trace, str[S_KIND], str[S_TEXT], e);
    if (h->type == REC_FILE)
        return dr_trace_add_file(r->trace, str[S_KIND], str[S_TEXT], p, h->plen, e);
    if (h->type == REC_VALUE)
        return dr_trace_add_value(r->trace, h->num, h->code2, str[S_KIND], str[S_TEXT], str[S_DATA],
                                  h->has_payload ? p : NULL, h->plen, e);
    int guard = h->type == REC_GUARD;
    int tt = guard && (h->flags & F_TEXT_TEMPLATE), mt = guard && (h->flags & F_MASKED_TEMPLATE);
    DrEvent ev = {.t_ns = h->t_ns,
                  .thread = h->thread,
                  .kind = guard ? "guard" : str[S_KIND],
                  .code_id = code_id_of(r, h->code),
                  .code2_id = code_id_of(r, h->code2),
                  .compile_id = str[S_COMPILE],
                  .num = h->num,
                  .text = tt ? NULL : str[S_TEXT],
                  .data = guard ? NULL : str[S_DATA],
                  .key = mt ? NULL : str[S_KEY],
                  .payload = h->has_payload ? p : NULL,
                  .payload_len = h->plen,
                  .guard = guard,
                  .guard_source = guard ? str[S_KIND] : NULL,
                  .guard_location = guard ? str[S_DATA] : NULL,
                  .guard_text = tt ? str[S_TEXT] : NULL,
                  .guard_masked = mt ? str[S_KEY] : NULL};
    return dr_trace_add_event(r->trace, &ev, e) > 0 ? DR_OK : (e->code ? e->code : DR_ERR_SQL);
}

/* Snapshot visitor: runs under the hook's mutex, so it only copies. */
static void note_code(void *ud, const DrCodeInfo *info) {
    DrRecorder *r = ud;
    int is_new =
        info->index >= r->ncodes || (r->codes[info->index].id == 0 && !r->codes[info->index].lib);
    if (!is_new && r->codes[info->index].calls == info->calls &&
        r->codes[info->index].resumes == info->resumes)
        return;
    if (r->nchanges == r->changes_cap) {
        size_t ncap = r->changes_cap ? r->changes_cap * 2 : 256;
        CodeChange *n = realloc(r->changes, ncap * sizeof *n);
        if (!n) {
            r->oom = 1;
            return;
        }
        r->changes = n;
        r->changes_cap = ncap;
    }
    r->changes[r->nchanges++] = (CodeChange){*info, is_new};
}

static int write_counts(DrRecorder *r, DrError *e) {
    if (!r->snapshot) return DR_OK;
    r->nchanges = 0;
    r->snapshot(note_code, r);
    if (r->oom) return dr_error(e, DR_ERR_NOMEM, "out of memory reading frame counts");
    for (size_t i = 0; i < r->nchanges; i++) {
        const DrCodeInfo *c = &r->changes[i].info;
        if (c->index >= r->ncodes) {
            size_t ncap = r->ncodes ? r->ncodes : 1024;
            while (ncap <= c->index) ncap *= 2;
            CodeRow *n = realloc(r->codes, ncap * sizeof *n);
            if (!n) return dr_error(e, DR_ERR_NOMEM, "out of memory writing frame counts");
            memset(n + r->ncodes, 0, (ncap - r->ncodes) * sizeof *n);
            r->codes = n;
            r->ncodes = ncap;
        }
        CodeRow *row = &r->codes[c->index];
        if (!row->id && (row->lib || (!r->keep_library && dr_is_library(c->filename, NULL, 0)))) {
            if (!row->lib) {
                row->lib = 1;
                row->filename = c->filename;
                row->qualname = c->qualname;
                row->firstlineno = c->firstlineno;
                r->lib_codes++;
            }
            r->lib_calls += c->calls - row->calls;
            row->calls = c->calls;
            row->resumes = c->resumes;
            continue;
        }
        if (!row->id) {
            row->id = dr_trace_add_code(r->trace, c->filename, c->qualname, c->firstlineno, e);
            if (row->id < 0) {
                row->id = 0;
                return e->code;
            }
        }
        int rc =
            dr_trace_set_frame_count(r->trace, row->id, (int64_t)c->calls, (int64_t)c->resumes, e);
        if (rc != DR_OK) return rc;
        row->calls = c->calls;
        row->resumes = c->resumes;
    }
    return DR_OK;
}

/* Writes everything buffered so far in one transaction (writer thread, or
 * the runner once the thread is gone). */
static void flush(DrRecorder *r) {
    pthread_mutex_lock(&r->lock);
    Arena full = r->active;
    r->active = r->spare;
    r->active.len = 0;
    int dropped = r->dropped;
    r->dropped = 0;
    pthread_mutex_unlock(&r->lock);
    if (!r->failed) {
        DrError e = {0};
        /* Counts first: that writes the code objects the events refer to. */
        int rc = dr_trace_begin(r->trace, &e);
        if (rc == DR_OK && full.len && ++r->flushes == fault_write_at())
            rc = dr_error(&e, DR_ERR_FULL, "%s: the disk is full (injected by DYNREC_FAULT_WRITE)",
                          dr_trace_path(r->trace));
        if (rc == DR_OK) rc = write_counts(r, &e);
        for (size_t off = 0; rc == DR_OK && off < full.len;) {
            const RecHdr *h = (const RecHdr *)(full.buf + off);
            const char *str[S__N], *payload;
            off += record_parts(h, str, &payload);
            rc = write_record(r, h, str, payload, &e);
        }
        if (rc == DR_OK && dropped)
            rc = dr_trace_set_meta_int(r->trace, "records_dropped", dropped, &e);
        if (rc == DR_OK) rc = dr_trace_commit(r->trace, &e);
        if (rc != DR_OK) fail(r, &e);
    }
    full.len = 0;
    r->spare = full;
}

static void close_trace(DrRecorder *r, int exit_status, int exit_signal) {
    DrError e = {0};
    char buf[64];
    time_t now = time(NULL);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    if (!r->failed) {
        int rc = dr_trace_begin(r->trace, &e);
        if (rc == DR_OK) rc = dr_trace_set_meta(r->trace, "end_time", buf, &e);
        if (rc == DR_OK && !r->keep_library) {
            char lib[96];
            snprintf(lib, sizeof lib, "%llu code objects, %llu calls",
                     (unsigned long long)r->lib_codes, (unsigned long long)r->lib_calls);
            rc = dr_trace_set_meta(r->trace, "frames.library_not_kept", lib, &e);
        }
        if (rc == DR_OK) rc = dr_trace_set_meta_int(r->trace, "duration_ns", dr_rec_now(r), &e);
        if (rc == DR_OK) rc = dr_trace_set_meta_int(r->trace, "exit_status", exit_status, &e);
        if (rc == DR_OK && exit_signal)
            rc = dr_trace_set_meta_int(r->trace, "exit_signal", exit_signal, &e);
        /* Last, over everything a re-run or replay would use (sign.h).  A
         * trace that cannot be signed stays unsigned: recording goes on. */
        if (rc == DR_OK) {
            DrError se = {0};
            dr_trace_sign(r->trace, &se);
        }
        if (rc == DR_OK) rc = dr_trace_commit(r->trace, &e);
        if (rc != DR_OK) fail(r, &e);
    }
    if (r->failed) {
        /* Say in meta why recording stopped, when the disk takes it (a full
         * one may not; readers then say when the last event was). */
        char why[400];
        snprintf(why, sizeof why, "%.3f s: %.300s", (double)r->fail_ns / 1e9,
                 r->fail.code == DR_ERR_FULL ? "the disk was full" : r->fail.msg);
        DrError e2 = {0};
        release_reserve(r);
        dr_trace_rollback(r->trace);
        if (dr_trace_begin(r->trace, &e2) == DR_OK &&
            dr_trace_set_meta(r->trace, "stopped", why, &e2) == DR_OK)
            dr_trace_commit(r->trace, &e2);
        else dr_trace_rollback(r->trace);
    }
    /* The space held back goes to the close: folding the WAL into the
     * file is the last write, and the one that grows the file most. */
    release_reserve(r);
    if (dr_trace_close(r->trace, !r->failed, &e) != DR_OK) fail(r, &e);
    r->trace = NULL;
    atomic_store(&r->state, ST_CLOSED);
}

static void *writer_main(void *arg) {
    DrRecorder *r = arg;
    /* Signals are for the program's threads, never this one. */
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    if (!r->trace && r->path) {
        DrError e = {0};
        if (!(r->trace = dr_trace_create_reserved(r->path, &e))) fail(r, &e);
        else if (r->setup && r->setup(r->trace, r->setup_ud, &e) != DR_OK) fail(r, &e);
        else r->reserve_fd = reserve_space(r->path);
    }
    for (;;) {
        struct pollfd p = {.fd = r->pipe_r, .events = POLLIN};
        char cmd = 0, c;
        if (poll(&p, 1, DR_FLUSH_MS) > 0) {
            while (read(r->pipe_r, &c, 1) == 1) {
                if (c == 'S' || c == 'T') cmd = c;
            }
        }
        flush(r);
        if (cmd == 'S') return NULL;
        if (cmd == 'T') {
            int expect = ST_RUNNING;
            if (!atomic_compare_exchange_strong(&r->state, &expect, ST_CLOSING)) continue;
            close_trace(r, 128 + SIGTERM, SIGTERM);
            signal(SIGTERM, SIG_DFL);
            kill(getpid(), SIGTERM);
            return NULL;
        }
    }
}

static void on_sigterm(int sig) {
    (void)sig;
    int saved = errno;
    if (sigterm_rec) {
        ssize_t n = write(sigterm_rec->pipe_w, "T", 1);
        (void)n;
    }
    errno = saved;
}

/* A forked child must not end its parent's recording: SIGTERM gets its
 * default action back (the pipe is shared with the parent's writer). */
static void writer_atfork_child(void) {
    if (sigterm_rec) {
        signal(SIGTERM, SIG_DFL);
        sigterm_rec = NULL;
    }
}

int dr_rec_handle_sigterm(DrRecorder *r) {
    static int atfork_done;
    if (!atfork_done && pthread_atfork(NULL, NULL, writer_atfork_child) == 0) atfork_done = 1;
    sigterm_rec = r;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigterm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    return sigaction(SIGTERM, &sa, NULL);
}

DrRecorder *dr_rec_start(DrTrace *t, DrSnapshotFn snapshot, DrError *err) {
    return start(t, NULL, NULL, NULL, snapshot, err);
}

DrRecorder *dr_rec_start_deferred(const char *path, DrSetupFn setup, void *ud,
                                  DrSnapshotFn snapshot, DrError *err) {
    return start(NULL, path, setup, ud, snapshot, err);
}

static DrRecorder *start(DrTrace *t, const char *path, DrSetupFn setup, void *ud,
                         DrSnapshotFn snapshot, DrError *err) {
    DrRecorder *r = calloc(1, sizeof *r);
    if (!r || (path && !(r->path = strdup(path)))) {
        dr_error(err, DR_ERR_NOMEM, "out of memory starting the recorder");
        dr_trace_free(t);
        free(r);
        return NULL;
    }
    r->trace = t;
    r->reserve_fd = -1;
    r->setup = setup;
    r->setup_ud = ud;
    r->snapshot = snapshot;
    pthread_mutex_init(&r->lock, NULL);
    clock_gettime(CLOCK_MONOTONIC, &r->t0);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        dr_error(err, DR_ERR_IO, "cannot start the trace writer: %s", strerror(errno));
        goto fail;
    }
    r->pipe_r = fds[0];
    r->pipe_w = fds[1];
    if (pthread_create(&r->thread, NULL, writer_main, r) != 0) {
        dr_error(err, DR_ERR_IO, "cannot start the trace writer thread");
        goto fail;
    }
    r->thread_started = 1;
    return r;
fail:
    if (r->pipe_r) close(r->pipe_r);
    if (r->pipe_w) close(r->pipe_w);
    dr_trace_free(r->trace);
    pthread_mutex_destroy(&r->lock);
    free(r->path);
    free(r);
    return NULL;
}

int dr_rec_pause(DrRecorder *r) {
    if (!r || !r->thread_started || atomic_load(&r->state) != ST_RUNNING) return 0;
    ssize_t n = write(r->pipe_w, "S", 1);
    (void)n;
    pthread_join(r->thread, NULL);
    r->thread_started = 0;
    r->paused = 1;
    return 1;
}

void dr_rec_resume(DrRecorder *r) {
    if (!r || !r->paused) return;
    r->paused = 0;
    if (pthread_create(&r->thread, NULL, writer_main, r) == 0) {
        r->thread_started = 1;
        return;
    }
    DrError e = {0};
    dr_error(&e, DR_ERR_IO, "cannot restart the trace writer thread after a fork");
    fail(r, &e);
}

int dr_rec_finish(DrRecorder *r, int exit_status, int exit_signal, DrError *err) {
    if (!r) return DR_OK;
    int expect = ST_RUNNING;
    if (!atomic_compare_exchange_strong(&r->state, &expect, ST_CLOSING))
        return DR_OK; /* the SIGTERM path owns the trace and ends the process */
    if (sigterm_rec == r) {
        signal(SIGTERM, SIG_DFL);
        sigterm_rec = NULL;
    }
    if (r->thread_started) {
        ssize_t n = write(r->pipe_w, "S", 1);
        (void)n;
        pthread_join(r->thread, NULL);
    }
    flush(r); /* anything appended while the thread was stopping */
    close_trace(r, exit_status, exit_signal);
    int rc = DR_OK;
    if (r->failed) {
        if (err) *err = r->fail;
        rc = r->fail.code ? r->fail.code : DR_ERR_IO;
    }
    release_reserve(r);
    close(r->pipe_r);
    close(r->pipe_w);
    free(r->active.buf);
    free(r->spare.buf);
    free(r->codes);
    free(r->changes);
    pthread_mutex_destroy(&r->lock);
    free(r->path);
    free(r);
    return rc;
}
