#define _GNU_SOURCE
/* test_e2e.c -- end-to-end tests: the real dynrec binary on real scripts.
 *
 * Each test gets a fresh mkdtemp directory, copies the scripts it needs
 * from tests/scripts/ into it and runs children there: `dynrec run` next to
 * the same command under plain python, comparing stdout, stderr and the wait
 * status byte for byte, then reading the trace through the reader API
 * (dr_trace_open, SQL on the v_* views).  Signals are sent the way a user
 * or a job control system would, and plain python is put through the same
 * to learn what "the same" means instead of assuming it.
 *
 *   DYNREC_BIN     the dynrec binary under test (tests skip when unset)
 *   DYNREC_PYTHON  the python it should behave like (tests skip when unset)
 *   DYNREC_ASAN=1  the binary is an AddressSanitizer build: children get
 *                  ASAN_OPTIONS=detect_leaks=0, since CPython and torch
 *                  keep their memory at exit
 *
 * Children get VIRTUAL_ENV set to DYNREC_PYTHON's virtualenv so that dynrec
 * picks the same interpreter the comparison runs.  Everything a test
 * allocates is registered and freed by the fixture, so the file is clean
 * under LeakSanitizer too. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../schema/trace.h"

/* Deadlines for one child: plain scripts, and those that import torch
 * (about 1 s each normally, much more under ASan). */
#define E2E_TIMEOUT_MS 30000
#define E2E_TORCH_TIMEOUT_MS 180000

/* ---- per-test state, freed by the fixture ------------------------------ */

typedef struct {
    char *data; /* NUL-terminated */
    size_t len, cap;
} E2eBuf;

/* One child process and what it wrote. */
typedef struct {
    pid_t pid;
    int fd_in, fd_out, fd_err; /* -1 once closed */
    const char *in;            /* stdin text still to write, or NULL */
    size_t in_len, in_off;
    E2eBuf out, err;
    int status; /* wait status, valid once reaped */
    int reaped;
} E2eProc;

static char e2e_dir[PATH_MAX];      /* this test's working directory */
static char e2e_scripts[PATH_MAX];  /* tests/scripts, absolute */
static const char *e2e_bin, *e2e_python, *e2e_venv;
static int e2e_asan;
static char e2e_asan_options[1024]; /* ASAN_OPTIONS for children, built here */

#define E2E_MAX_PROCS 32
#define E2E_MAX_OWNED 512
static E2eProc *e2e_procs[E2E_MAX_PROCS];
static int e2e_nprocs;
static void *e2e_owned[E2E_MAX_OWNED];
static int e2e_nowned;
#define E2E_MAX_TRACES 8
static DrTrace *e2e_traces[E2E_MAX_TRACES]; /* open, closed by e2e_close */

/* Takes ownership of p (freed after the test); returns p. */
static void *e2e_own(void *p) {
    cr_assert_lt(e2e_nowned, E2E_MAX_OWNED, "e2e: too many allocations in one test");
    e2e_owned[e2e_nowned++] = p;
    return p;
}

/* printf into a string owned by the test. */
__attribute__((format(printf, 1, 2))) static char *e2e_fmt(const char *fmt, ...) {
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    cr_assert_geq(n, 0, "e2e: out of memory");
    return e2e_own(s);
}

static int64_t e2e_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void e2e_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int e2e_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* Where this file's scripts/ directory is: $DYNREC_SCRIPTS, else next to
 * this source file (as compiled, relative to the directory the tests run
 * in, which is the repository root for `make check`). */
static void e2e_find_scripts(void) {
    const char *env = getenv("DYNREC_SCRIPTS");
    char want[PATH_MAX];
    if (env && *env) {
        snprintf(want, sizeof want, "%s", env);
    } else {
        snprintf(want, sizeof want, "%s", __FILE__);
        char *slash = strrchr(want, '/');
        if (slash)
            snprintf(slash + 1, sizeof want - (size_t)(slash + 1 - want), "scripts");
        else
            snprintf(want, sizeof want, "scripts");
    }
    if (!realpath(want, e2e_scripts)) e2e_scripts[0] = 0;
}

/* The virtualenv of DYNREC_PYTHON (the directory above bin/ holding
 * pyvenv.cfg), or NULL when it is not in one. */
static const char *e2e_find_venv(const char *python) {
    static char venv[PATH_MAX];
    snprintf(venv, sizeof venv, "%s", python);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(venv, '/');
        if (!slash) return NULL;
        *slash = 0;
    }
    char cfg[PATH_MAX + 16];
    snprintf(cfg, sizeof cfg, "%s/pyvenv.cfg", venv);
    return access(cfg, R_OK) == 0 ? venv : NULL;
}

/* path made absolute against the current directory, symlinks kept (a
 * venv's bin/python is a symlink that must stay one); children run in
 * another directory. */
static const char *e2e_absolute(const char *path, char *buf, size_t size) {
    char cwd[PATH_MAX];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd)) return path;
    snprintf(buf, size, "%s/%s", cwd, path);
    return buf;
}

static void e2e_setup(void) {
    static char bin[2 * PATH_MAX], python[2 * PATH_MAX];
    e2e_bin = getenv("DYNREC_BIN");
    e2e_python = getenv("DYNREC_PYTHON");
    const char *asan = getenv("DYNREC_ASAN");
    e2e_asan = asan && strcmp(asan, "1") == 0;
    if (!e2e_bin || !*e2e_bin || !e2e_python || !*e2e_python)
        cr_skip_test("DYNREC_BIN and DYNREC_PYTHON must name the binary and python to test");
    e2e_bin = e2e_absolute(e2e_bin, bin, sizeof bin);
    e2e_python = e2e_absolute(e2e_python, python, sizeof python);
    /* Later ASan options win: keep the caller's, switch leak checking off. */
    const char *prev = getenv("ASAN_OPTIONS");
    snprintf(e2e_asan_options, sizeof e2e_asan_options, "%s%sdetect_leaks=0",
             prev ? prev : "", prev && *prev ? ":" : "");
    e2e_venv = e2e_find_venv(e2e_python);
    e2e_find_scripts();
    cr_assert(e2e_scripts[0], "e2e: cannot find tests/scripts (set DYNREC_SCRIPTS)");
    /* A child that exits without reading its stdin must not kill the test. */
    signal(SIGPIPE, SIG_IGN);
    const char *tmp = getenv("TMPDIR");
    snprintf(e2e_dir, sizeof e2e_dir, "%s/dynrec-e2e-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert_not_null(mkdtemp(e2e_dir), "e2e: mkdtemp %s: %s", e2e_dir, strerror(errno));
}

static void e2e_proc_close_fds(E2eProc *p) {
    int *fds[] = {&p->fd_in, &p->fd_out, &p->fd_err};
    for (int i = 0; i < 3; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
}

static void e2e_teardown(void) {
    for (int i = 0; i < e2e_nprocs; i++) {
        E2eProc *p = e2e_procs[i];
        if (!p->reaped) { /* a test that failed half-way leaves no children */
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &p->status, 0);
        }
        e2e_proc_close_fds(p);
        free(p->out.data);
        free(p->err.data);
        free(p);
    }
    e2e_nprocs = 0;
    for (int i = 0; i < E2E_MAX_TRACES; i++) {
        dr_trace_free(e2e_traces[i]);
        e2e_traces[i] = NULL;
    }
    for (int i = 0; i < e2e_nowned; i++) free(e2e_owned[i]);
    e2e_nowned = 0;
    if (e2e_dir[0]) nftw(e2e_dir, e2e_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    e2e_dir[0] = 0;
}

TestSuite(e2e, .init = e2e_setup, .fini = e2e_teardown, .timeout = 240);

/* ---- files ------------------------------------------------------------- */

/* Absolute path of name inside the test's directory (owned). */
static char *e2e_path(const char *name) { return e2e_fmt("%s/%s", e2e_dir, name); }

/* Reads a whole file (owned, NUL-terminated); NULL when it cannot be read. */
static char *e2e_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    E2eBuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        char *nb = realloc(b.data, b.len + n + 1);
        cr_assert_not_null(nb);
        b.data = nb;
        memcpy(b.data + b.len, chunk, n);
        b.len += n;
    }
    fclose(f);
    if (!b.data) b.data = calloc(1, 1);
    b.data[b.len] = 0;
    if (len) *len = b.len;
    return e2e_own(b.data);
}

static void e2e_write_file(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "e2e: cannot create %s: %s", path, strerror(errno));
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* Copies tests/scripts/<name> into the test's directory under the same
 * relative name (creating one level of subdirectory, as for pkg/mod.py). */
static void e2e_copy_script(const char *name) {
    size_t len = 0;
    char *src = e2e_slurp(e2e_fmt("%s/%s", e2e_scripts, name), &len);
    cr_assert_not_null(src, "e2e: cannot read %s/%s", e2e_scripts, name);
    const char *slash = strrchr(name, '/');
    if (slash) {
        char *sub = e2e_fmt("%s/%.*s", e2e_dir, (int)(slash - name), name);
        cr_assert(mkdir(sub, 0755) == 0 || errno == EEXIST, "e2e: mkdir %s", sub);
    }
    e2e_write_file(e2e_path(name), src, len);
}

/* Names in the test's directory ending in suffix, in one owned string,
 * sorted and separated by '\n'; *count gets how many. */
static char *e2e_list(const char *suffix, int *count) {
    struct dirent **ents = NULL;
    int n = scandir(e2e_dir, &ents, NULL, alphasort);
    cr_assert_geq(n, 0, "e2e: scandir %s", e2e_dir);
    E2eBuf b = {0};
    int found = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        size_t nl = strlen(nm), sl = strlen(suffix);
        if (nl >= sl && strcmp(nm + nl - sl, suffix) == 0) {
            char *nb = realloc(b.data, b.len + nl + 2);
            cr_assert_not_null(nb);
            b.data = nb;
            memcpy(b.data + b.len, nm, nl);
            b.len += nl;
            b.data[b.len++] = '\n';
            found++;
        }
        free(ents[i]);
    }
    free(ents);
    if (!b.data) b.data = calloc(1, 1);
    else b.data[b.len] = 0;
    *count = found;
    return e2e_own(b.data);
}

/* ---- child processes --------------------------------------------------- */

static void e2e_buf_add(E2eBuf *b, const char *p, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        char *nb = realloc(b->data, cap);
        cr_assert_not_null(nb);
        b->data = nb;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

/* Starts argv[0] (a path) in the test's directory with stdin fed from
 * in_text (NULL: /dev/null), stdout and stderr captured.  Signals the
 * child should see are put back to their defaults, as a shell would. */
static E2eProc *e2e_spawn(const char *const *argv, const char *in_text) {
    cr_assert_lt(e2e_nprocs, E2E_MAX_PROCS, "e2e: too many children in one test");
    int pin[2] = {-1, -1}, pout[2], perr[2];
    if (in_text) cr_assert_eq(pipe2(pin, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(pout, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(perr, O_CLOEXEC), 0);
    E2eProc *p = calloc(1, sizeof *p);
    cr_assert_not_null(p);
    p->fd_in = p->fd_out = p->fd_err = -1;
    e2e_procs[e2e_nprocs++] = p;
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "e2e: fork: %s", strerror(errno));
    if (pid == 0) {
        int in_fd = in_text ? pin[0] : open("/dev/null", O_RDONLY);
        if (in_fd < 0 || dup2(in_fd, 0) < 0 || dup2(pout[1], 1) < 0 || dup2(perr[1], 2) < 0)
            _exit(126);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int sigs[] = {SIGINT, SIGTERM, SIGPIPE, SIGQUIT, SIGHUP, SIGCHLD};
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], SIG_DFL);
        if (chdir(e2e_dir) != 0) _exit(126);
        if (e2e_asan) setenv("ASAN_OPTIONS", e2e_asan_options, 1);
        if (e2e_venv) setenv("VIRTUAL_ENV", e2e_venv, 1);
        execv(argv[0], (char *const *)argv);
        dprintf(2, "e2e: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    p->pid = pid;
    if (in_text) {
        close(pin[0]);
        p->fd_in = pin[1];
        fcntl(p->fd_in, F_SETFL, O_NONBLOCK);
        p->in = in_text;
        p->in_len = strlen(in_text);
        if (p->in_len == 0) {
            close(p->fd_in);
            p->fd_in = -1;
        }
    }
    close(pout[1]);
    close(perr[1]);
    p->fd_out = pout[0];
    p->fd_err = perr[0];
    e2e_buf_add(&p->out, "", 0);
    e2e_buf_add(&p->err, "", 0);
    return p;
}

/* Moves data between the test and the child until want (when not NULL)
 * appears in its stdout (returns 1), both its output pipes are at end of
 * file (0), or the deadline passes (-1). */
static int e2e_pump(E2eProc *p, int64_t deadline, const char *want) {
    for (;;) {
        if (want && strstr(p->out.data, want)) return 1;
        if (p->fd_out < 0 && p->fd_err < 0) return 0;
        int64_t left = deadline - e2e_now_ms();
        if (left <= 0) return -1;
        struct pollfd fds[3];
        int *which[3];
        int n = 0;
        if (p->fd_in >= 0) {
            fds[n] = (struct pollfd){.fd = p->fd_in, .events = POLLOUT};
            which[n++] = &p->fd_in;
        }
        if (p->fd_out >= 0) {
            fds[n] = (struct pollfd){.fd = p->fd_out, .events = POLLIN};
            which[n++] = &p->fd_out;
        }
        if (p->fd_err >= 0) {
            fds[n] = (struct pollfd){.fd = p->fd_err, .events = POLLIN};
            which[n++] = &p->fd_err;
        }
        int r = poll(fds, (nfds_t)n, left > 100 ? 100 : (int)left);
        if (r < 0 && errno != EINTR) cr_assert_fail("e2e: poll: %s", strerror(errno));
        if (r <= 0) continue;
        for (int i = 0; i < n; i++) {
            if (!fds[i].revents) continue;
            int *fd = which[i];
            if (fd == &p->fd_in) {
                ssize_t w = write(*fd, p->in + p->in_off, p->in_len - p->in_off);
                if (w > 0) p->in_off += (size_t)w;
                if ((w < 0 && errno != EAGAIN && errno != EINTR) || p->in_off == p->in_len) {
                    close(*fd); /* EOF for the child; EPIPE when it did not read */
                    *fd = -1;
                }
                continue;
            }
            char chunk[65536];
            ssize_t got = read(*fd, chunk, sizeof chunk);
            if (got > 0) {
                e2e_buf_add(fd == &p->fd_out ? &p->out : &p->err, chunk, (size_t)got);
            } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(*fd);
                *fd = -1;
            }
        }
    }
}

/* Waits for the child to end, collecting all its output; a child still
 * running after timeout_ms is killed and the test fails.  Output pipes
 * that a process the child left behind keeps open are given up on one
 * second after the child itself has ended. */
static void e2e_wait(E2eProc *p, int timeout_ms) {
    int64_t deadline = e2e_now_ms() + timeout_ms, ended = 0;
    for (;;) {
        int64_t now = e2e_now_ms();
        int64_t slice = now + 100 < deadline ? now + 100 : deadline;
        int r = e2e_pump(p, slice, NULL);
        if (!p->reaped && waitpid(p->pid, &p->status, WNOHANG) == p->pid) {
            p->reaped = 1;
            ended = e2e_now_ms();
        }
        if (r == 0 && p->reaped) break;
        if (p->reaped && e2e_now_ms() - ended > 1000) break;
        if (r == 0) e2e_sleep_ms(5); /* pipes closed, child not yet gone */
        if (e2e_now_ms() >= deadline) {
            if (!p->reaped) {
                kill(p->pid, SIGKILL);
                waitpid(p->pid, &p->status, 0);
                p->reaped = 1;
            }
            cr_assert_fail("e2e: child %d did not finish within %d ms\nstdout:\n%s\n"
                           "stderr:\n%s",
                           (int)p->pid, timeout_ms, p->out.data, p->err.data);
        }
    }
    e2e_proc_close_fds(p);
}

/* Runs argv to the end (see e2e_spawn, e2e_wait). */
static E2eProc *e2e_run_in(const char *const *argv, const char *in_text, int timeout_ms) {
    E2eProc *p = e2e_spawn(argv, in_text);
    e2e_wait(p, timeout_ms);
    return p;
}

static E2eProc *e2e_run(const char *const *argv) {
    return e2e_run_in(argv, NULL, E2E_TIMEOUT_MS);
}

/* The wait status as text, for messages and comparisons. */
static char *e2e_status_text(int st) {
    if (WIFEXITED(st)) return e2e_fmt("exit %d", WEXITSTATUS(st));
    if (WIFSIGNALED(st))
        return e2e_fmt("signal %d%s", WTERMSIG(st), WCOREDUMP(st) ? " (core)" : "");
    return e2e_fmt("wait status 0x%x", st);
}

static void e2e_assert_exit(const E2eProc *p, int code, const char *what) {
    cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == code,
              "%s: wanted exit %d, got %s\nstdout:\n%s\nstderr:\n%s", what, code,
              e2e_status_text(p->status), p->out.data, p->err.data);
}

/* Asserts that two runs wrote the same stdout and stderr and ended alike. */
static void e2e_assert_same(const E2eProc *py, const E2eProc *dr, const char *what) {
    cr_assert_eq(py->status, dr->status, "%s: python ended with %s, dynrec run with %s\n"
                 "dynrec stderr:\n%s", what, e2e_status_text(py->status),
                 e2e_status_text(dr->status), dr->err.data);
    cr_assert(py->out.len == dr->out.len && memcmp(py->out.data, dr->out.data, py->out.len) == 0,
              "%s: stdout differs\npython:\n%s\ndynrec run:\n%s", what, py->out.data,
              dr->out.data);
    cr_assert(py->err.len == dr->err.len && memcmp(py->err.data, dr->err.data, py->err.len) == 0,
              "%s: stderr differs\npython:\n%s\ndynrec run:\n%s", what, py->err.data,
              dr->err.data);
}

/* ---- traces ------------------------------------------------------------ */

/* Opens a trace, or returns NULL with err filled; close it with e2e_close
 * (the fixture closes what a failing test left open). */
static DrTrace *e2e_try_open(const char *path, DrError *err) {
    DrTrace *t = dr_trace_open(path, err);
    if (!t) return NULL;
    for (int i = 0; i < E2E_MAX_TRACES; i++)
        if (!e2e_traces[i]) {
            e2e_traces[i] = t;
            return t;
        }
    dr_trace_free(t);
    cr_assert_fail("e2e: too many open traces");
    return NULL;
}

/* Opens a trace the test must be able to read. */
static DrTrace *e2e_open(const char *path) {
    DrError err = {0};
    DrTrace *t = e2e_try_open(path, &err);
    cr_assert_not_null(t, "e2e: cannot open trace %s: %s", path, err.msg);
    return t;
}

static void e2e_close(DrTrace *t) {
    for (int i = 0; i < E2E_MAX_TRACES; i++)
        if (e2e_traces[i] == t) e2e_traces[i] = NULL;
    dr_trace_free(t);
}

/* meta[key] (owned) or NULL when absent. */
static char *e2e_meta(DrTrace *t, const char *key) {
    DrError err = {0};
    char *v = NULL;
    cr_assert_eq(dr_trace_get_meta(t, key, &v, &err), DR_OK, "e2e: meta %s: %s", key, err.msg);
    return v ? e2e_own(v) : NULL;
}

static int e2e_first_cell(void *ud, int ncols, const char *const *names,
                          const char *const *values) {
    (void)names;
    char **out = ud;
    if (ncols > 0 && values[0]) *out = strdup(values[0]);
    return 1; /* first row only */
}

/* The first column of the first row of sql (owned), or NULL when there is
 * no row or it is SQL NULL.  fmt is an sqlite3_mprintf format (%Q quotes
 * a string literal), which the compiler cannot check. */
static char *e2e_sql(DrTrace *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *sql = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    cr_assert_not_null(sql);
    char *cell = NULL;
    DrError err = {0};
    int rc = dr_trace_query(t, sql, e2e_first_cell, &cell, &err);
    cr_assert_eq(rc, DR_OK, "e2e: query failed: %s\n%s", err.msg, sql);
    sqlite3_free(sql);
    return cell ? e2e_own(cell) : NULL;
}

static long long e2e_sql_int(DrTrace *t, const char *sql) {
    char *v = e2e_sql(t, "%s", sql);
    cr_assert_not_null(v, "e2e: no value from %s", sql);
    return atoll(v);
}

/* Evaluations of the code object qualname in a file named script (the
 * recorded filename is the path CPython gives, relative or absolute). */
static long long e2e_calls(DrTrace *t, const char *script, const char *qualname) {
    char *v = e2e_sql(t,
                      "SELECT coalesce(sum(calls), 0) FROM v_frame_counts"
                      " WHERE (filename = %Q OR filename LIKE '%%/' || %Q) AND qualname = %Q",
                      script, script, qualname);
    return v ? atoll(v) : 0;
}

/* The checks every finished `dynrec run` trace passes: it opens, is
 * complete, records the exit status, argv (a JSON array equal to
 * argv_json), the script or module, and the script's source in v_files. */
static DrTrace *e2e_check_trace(const char *trace, int exit_status, const char *argv_json,
                                const char *script, const char *module) {
    DrTrace *t = e2e_open(e2e_path(trace));
    cr_assert_eq(dr_trace_is_complete(t), 1, "%s: trace not complete", trace);
    char *st = e2e_meta(t, "exit_status");
    cr_assert_not_null(st, "%s: no exit_status", trace);
    cr_assert_eq(atoi(st), exit_status, "%s: exit_status %s, wanted %d", trace, st, exit_status);
    char *same = e2e_sql(t, "SELECT json(value) = json(%Q) FROM meta WHERE key = 'argv'",
                         argv_json);
    cr_assert(same && strcmp(same, "1") == 0, "%s: meta argv is %s, wanted %s", trace,
              e2e_meta(t, "argv"), argv_json);
    if (script) {
        char *s = e2e_meta(t, "script");
        cr_assert(s && strcmp(s, script) == 0, "%s: meta script %s, wanted %s", trace, s, script);
        /* The recorded source is the file's exact bytes. */
        char *blob = e2e_sql(t, "SELECT blob_id FROM v_files WHERE role = 'script' AND path = %Q",
                             script);
        cr_assert_not_null(blob, "%s: no v_files row with role 'script' for %s", trace, script);
        void *data = NULL;
        size_t len = 0;
        DrError err = {0};
        cr_assert_eq(dr_trace_read_blob(t, atoll(blob), 0, &data, &len, &err), DR_OK,
                     "%s: script blob: %s", trace, err.msg);
        e2e_own(data);
        size_t flen = 0;
        char *file = e2e_slurp(e2e_path(script), &flen);
        cr_assert(file && flen == len && memcmp(file, data, len) == 0,
                  "%s: recorded source of %s differs from the file", trace, script);
    }
    if (module) {
        char *m = e2e_meta(t, "module");
        cr_assert(m && strcmp(m, module) == 0, "%s: meta module %s, wanted %s", trace, m, module);
    }
    return t;
}

/* ---- 1, 2: the same as plain python ------------------------------------ */

/* Runs `python <args>` and `dynrec run -q -o T.db <args>` in the same
 * directory with the same stdin, asserts they behave identically (both
 * exiting, not killed), and returns the dynrec run. */
static E2eProc *e2e_same_as_python(const char *const *args, const char *in_text,
                                   int timeout_ms) {
    const char *pyv[32], *drv[32];
    int n = 0;
    while (args[n]) n++;
    cr_assert_lt(n, 26);
    pyv[0] = e2e_python;
    drv[0] = e2e_bin;
    drv[1] = "run";
    drv[2] = "-q";
    drv[3] = "-o";
    drv[4] = "T.db";
    for (int i = 0; i <= n; i++) {
        pyv[1 + i] = args[i];
        drv[5 + i] = args[i];
    }
    E2eProc *py = e2e_run_in(pyv, in_text, timeout_ms);
    E2eProc *dr = e2e_run_in(drv, in_text, timeout_ms);
    e2e_assert_same(py, dr, args[0]);
    cr_assert(WIFEXITED(dr->status), "%s: ended with %s", args[0], e2e_status_text(dr->status));
    return dr;
}

Test(e2e, argv_name_path_and_file_match_python) {
    e2e_copy_script("argv_info.py");
    /* Options of dynrec's own after the script belong to the script; a
     * non-ASCII argument ("héllo" in UTF-8) is decoded as python does. */
    const char *args[] = {"argv_info.py", "-q", "--all-frames", "a b", "-o", "h\xc3\xa9llo",
                          NULL};
    E2eProc *dr = e2e_same_as_python(args, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "argv_info.py");
    char *want = e2e_fmt("argv ['argv_info.py', '-q', '--all-frames', 'a b', '-o', "
                         "'h\xc3\xa9llo']\nname __main__\npath0 %s\nfile %s/argv_info.py\n",
                         e2e_dir, e2e_dir);
    cr_assert_str_eq(dr->out.data, want);
    e2e_close(e2e_check_trace("T.db", 0,
                              "[\"-q\", \"--all-frames\", \"a b\", \"-o\", \"h\xc3\xa9llo\"]",
                              "argv_info.py", NULL));
}

Test(e2e, sys_exit_zero_matches_python) {
    e2e_copy_script("exit_with.py");
    E2eProc *dr = e2e_same_as_python((const char *[]){"exit_with.py", "0", NULL}, NULL,
                                     E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "sys.exit(0)");
    cr_assert_str_eq(dr->out.data, "exiting with 0\n");
    e2e_close(e2e_check_trace("T.db", 0, "[\"0\"]", "exit_with.py", NULL));
}

Test(e2e, sys_exit_seven_matches_python) {
    e2e_copy_script("exit_with.py");
    E2eProc *dr = e2e_same_as_python((const char *[]){"exit_with.py", "7", NULL}, NULL,
                                     E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 7, "sys.exit(7)");
    e2e_close(e2e_check_trace("T.db", 7, "[\"7\"]", "exit_with.py", NULL));
}

/* The shell sees sys.exit(256) as status 0 (only the low 8 bits survive);
 * the trace must record the status the run really ended with. */
Test(e2e, sys_exit_256_records_the_status_the_parent_sees) {
    e2e_copy_script("exit_with.py");
    E2eProc *dr = e2e_same_as_python((const char *[]){"exit_with.py", "256", NULL}, NULL,
                                     E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "sys.exit(256)");
    e2e_close(e2e_check_trace("T.db", 0, "[\"256\"]", "exit_with.py", NULL));
}

Test(e2e, sys_exit_message_matches_python) {
    e2e_copy_script("exit_with.py");
    E2eProc *dr = e2e_same_as_python(
        (const char *[]){"exit_with.py", "giving up: no input", NULL}, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 1, "sys.exit(message)");
    cr_assert_str_eq(dr->err.data, "giving up: no input\n");
    e2e_close(e2e_check_trace("T.db", 1, "[\"giving up: no input\"]", "exit_with.py", NULL));
}

Test(e2e, uncaught_exception_traceback_matches_python) {
    e2e_copy_script("uncaught.py");
    E2eProc *dr = e2e_same_as_python((const char *[]){"uncaught.py", NULL}, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 1, "uncaught exception");
    cr_assert_not_null(strstr(dr->err.data, "Traceback (most recent call last):"));
    cr_assert_not_null(strstr(dr->err.data, "ValueError: invalid literal for int()"));
    cr_assert_not_null(strstr(dr->err.data, "RuntimeError: cannot parse 'not a number'"));
    e2e_close(e2e_check_trace("T.db", 1, "[]", "uncaught.py", NULL));
}

Test(e2e, stdin_lines_match_python) {
    e2e_copy_script("stdin_lines.py");
    const char *in = "first line\nsecond\n\nlast without newline";
    E2eProc *dr = e2e_same_as_python((const char *[]){"stdin_lines.py", NULL}, in,
                                     E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "stdin_lines.py");
    cr_assert_str_eq(dr->out.data, "1: FIRST LINE\n2: SECOND\n3: \n4: LAST WITHOUT NEWLINE\n");
    cr_assert_str_eq(dr->err.data, "lines: 4\n");
    e2e_close(e2e_check_trace("T.db", 0, "[]", "stdin_lines.py", NULL));
}

Test(e2e, module_in_package_matches_python) {
    e2e_copy_script("pkg/__init__.py");
    e2e_copy_script("pkg/mod.py");
    E2eProc *dr = e2e_same_as_python((const char *[]){"-m", "pkg.mod", "a", "b", NULL}, NULL,
                                     E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "-m pkg.mod");
    char *want = e2e_fmt("argv ['%s/pkg/mod.py', 'a', 'b']\nname __main__\nspec pkg.mod\n"
                         "path0 %s\n",
                         e2e_dir, e2e_dir);
    cr_assert_str_eq(dr->out.data, want);
    DrTrace *t = e2e_check_trace("T.db", 0, "[\"a\", \"b\"]", NULL, "pkg.mod");
    /* A module's source is recorded at the end, under role 'main'. */
    char *path = e2e_sql(t, "SELECT path FROM v_files WHERE role = 'main'");
    cr_assert(path && strcmp(path, e2e_fmt("%s/pkg/mod.py", e2e_dir)) == 0,
              "no 'main' file for -m pkg.mod (got %s)", path);
    e2e_close(t);
}

Test(e2e, missing_module_matches_python) {
    E2eProc *dr = e2e_same_as_python((const char *[]){"-m", "no_such_module_e2e", NULL}, NULL,
                                     E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 1, "-m no_such_module_e2e");
    cr_assert_not_null(strstr(dr->err.data, "No module named no_such_module_e2e"));
    e2e_close(e2e_check_trace("T.db", 1, "[]", NULL, "no_such_module_e2e"));
}

/* `python DIR` runs DIR/__main__.py; so must `dynrec run DIR`. */
Test(e2e, directory_with_main_matches_python) {
    e2e_copy_script("app/__main__.py");
    E2eProc *dr = e2e_same_as_python((const char *[]){"app", "x", NULL}, NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "app/__main__.py");
    cr_assert_str_eq(dr->out.data, "argv ['app', 'x']\nname __main__\n");
    DrTrace *t = e2e_check_trace("T.db", 0, "[\"x\"]", NULL, NULL);
    char *s = e2e_meta(t, "script");
    cr_assert(s && strcmp(s, "app") == 0, "meta script %s", s);
    e2e_close(t);
}

/* A child made by os.fork() ends with sys.exit, running the C exit handlers
 * it inherited: it must neither end nor damage its parent's recording. */
Test(e2e, forked_child_leaves_the_parent_recording_alone) {
    e2e_copy_script("fork_child.py");
    E2eProc *py = e2e_run((const char *[]){e2e_python, "fork_child.py", NULL});
    E2eProc *dr = e2e_run((const char *[]){e2e_bin, "run", "-q", "--all-frames", "-o", "T.db",
                                           "fork_child.py", NULL});
    e2e_assert_same(py, dr, "fork_child.py");
    e2e_assert_exit(dr, 0, "fork_child.py");
    cr_assert_str_eq(dr->out.data, "child\nparent saw 3\n100000\n");
    DrTrace *t = e2e_check_trace("T.db", 0, "[]", "fork_child.py", NULL);
    char *pid = e2e_meta(t, "pid");
    cr_assert(pid && atoll(pid) == (long long)dr->pid, "meta pid %s, dynrec was %d", pid,
              (int)dr->pid);
    cr_assert_eq(e2e_calls(t, "fork_child.py", "work"), 100000);
    e2e_close(t);
}

/* ---- 3: torch ---------------------------------------------------------- */

Test(e2e, torch_compile_eager_matches_python_and_is_counted) {
    e2e_copy_script("torch_compile.py");
    E2eProc *dr = e2e_same_as_python((const char *[]){"torch_compile.py", NULL}, NULL,
                                     E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(dr, 0, "torch_compile.py");
    cr_assert(strncmp(dr->out.data, "torch 2.13.0", 12) == 0, "stdout:\n%s", dr->out.data);
    DrTrace *t = e2e_check_trace("T.db", 0, "[]", "torch_compile.py", NULL);
    char *tv = e2e_meta(t, "torch_version");
    cr_assert(tv && strncmp(tv, "2.13.0", 6) == 0, "torch_version %s", tv);
    char *hook = e2e_meta(t, "hook.set_eval_frame");
    cr_assert(hook && strcmp(hook, "active") == 0, "hook.set_eval_frame %s", hook);
    char *installs = e2e_meta(t, "hook.installs");
    cr_assert(installs && atoll(installs) > 0, "hook.installs %s", installs);
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM v_frame_counts"), 0,
                 "no frames counted while Dynamo was active");
    /* The compiled function's own frames reached the hook under Dynamo. */
    cr_assert_gt(e2e_calls(t, "torch_compile.py", "f"), 0, "f was not counted");
    e2e_close(t);
}

/* ---- 4: frame counts without torch ------------------------------------- */

Test(e2e, no_frames_counted_without_dynamo) {
    e2e_copy_script("count_calls.py");
    E2eProc *dr = e2e_run((const char *[]){e2e_bin, "run", "-q", "-o", "T.db", "count_calls.py",
                                           NULL});
    e2e_assert_exit(dr, 0, "count_calls.py");
    cr_assert_str_eq(dr->out.data, "100000\n");
    DrTrace *t = e2e_check_trace("T.db", 0, "[]", "count_calls.py", NULL);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_frame_counts"), 0,
                 "frames were counted although Dynamo never ran");
    char *mode = e2e_meta(t, "hook.frame");
    cr_assert(mode && strcmp(mode, "while-dynamo") == 0, "hook.frame %s", mode);
    e2e_close(t);
}

Test(e2e, all_frames_counts_every_call) {
    e2e_copy_script("count_calls.py");
    E2eProc *dr = e2e_run((const char *[]){e2e_bin, "run", "-q", "--all-frames", "-o", "T.db",
                                           "count_calls.py", NULL});
    e2e_assert_exit(dr, 0, "count_calls.py --all-frames");
    cr_assert_str_eq(dr->out.data, "100000\n");
    DrTrace *t = e2e_check_trace("T.db", 0, "[]", "count_calls.py", NULL);
    cr_assert_eq(e2e_calls(t, "count_calls.py", "tick"), 100000);
    cr_assert_eq(e2e_calls(t, "count_calls.py", "<module>"), 1);
    char *mode = e2e_meta(t, "hook.frame");
    cr_assert(mode && strcmp(mode, "all-frames") == 0, "hook.frame %s", mode);
    e2e_close(t);
}

/* ---- 5, 6, 7: signals -------------------------------------------------- */

Test(e2e, sigkill_leaves_an_incomplete_but_readable_trace) {
    e2e_copy_script("spin.py");
    E2eProc *dr = e2e_spawn((const char *[]){e2e_bin, "run", "-q", "--all-frames", "-o", "T.db",
                                             "spin.py", NULL},
                            NULL);
    char *trace = e2e_path("T.db");
    long long seen = 0;
    DrError err = {0};
    int64_t deadline = e2e_now_ms() + 10000;
    while (seen <= 0 && e2e_now_ms() < deadline) {
        e2e_sleep_ms(100);
        pid_t w = waitpid(dr->pid, &dr->status, WNOHANG);
        if (w == dr->pid) dr->reaped = 1;
        cr_assert_eq(w, 0, "dynrec ended early: %s\nstderr:\n%s", e2e_status_text(dr->status),
                     dr->err.data);
        DrTrace *t = e2e_try_open(trace, &err);
        if (!t) continue; /* not created yet, or caught mid-write: err says */
        cr_assert_eq(dr_trace_is_complete(t), 0, "a running trace claims to be complete");
        seen = e2e_calls(t, "spin.py", "spin_once");
        e2e_close(t);
    }
    cr_assert_gt(seen, 0, "spin_once never showed up in the live trace within 10 s (%s)",
                 err.msg[0] ? err.msg : "it opened");
    cr_assert_eq(kill(dr->pid, SIGKILL), 0);
    e2e_wait(dr, E2E_TIMEOUT_MS);
    cr_assert(WIFSIGNALED(dr->status) && WTERMSIG(dr->status) == SIGKILL, "ended with %s",
              e2e_status_text(dr->status));
    DrTrace *t = e2e_open(trace);
    cr_assert_eq(dr_trace_is_complete(t), 0, "a killed run's trace claims to be complete");
    long long after = e2e_calls(t, "spin.py", "spin_once");
    cr_assert_geq(after, seen, "count went from %lld to %lld", seen, after);
    cr_assert_null(e2e_meta(t, "exit_status"));
    e2e_close(t);
    /* show reads it and says it was cut short. */
    E2eProc *show = e2e_run((const char *[]){e2e_bin, "show", "T.db", NULL});
    e2e_assert_exit(show, 0, "dynrec show on a killed run's trace");
    cr_assert_not_null(strcasestr(show->out.data, "incomplete"), "show:\n%s", show->out.data);
    cr_assert_not_null(strstr(show->out.data, "spin_once"), "show:\n%s", show->out.data);
}

/* Waits until pid's main thread is blocked (state S in /proc/pid/stat).
 * After "ready" the only place the script blocks is time.sleep, so a
 * KeyboardInterrupt then always comes from the same line: sent a moment
 * earlier, it could come out of print() in one run and not the other. */
static void e2e_wait_blocked(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int64_t deadline = e2e_now_ms() + 10000;
    while (e2e_now_ms() < deadline) {
        FILE *f = fopen(path, "r");
        if (!f) return; /* no /proc: rely on the time it took to get here */
        char line[1024];
        char *got = fgets(line, sizeof line, f);
        fclose(f);
        const char *close_paren = got ? strrchr(line, ')') : NULL;
        if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'S') return;
        e2e_sleep_ms(2);
    }
    cr_assert_fail("e2e: process %d never went to sleep", (int)pid);
}

/* Starts argv, waits for "ready" on its stdout and for the script to sleep,
 * sends sig, and waits for the process to end. */
static E2eProc *e2e_signal_after_ready(const char *const *argv, int sig) {
    E2eProc *p = e2e_spawn(argv, NULL);
    int r = e2e_pump(p, e2e_now_ms() + E2E_TIMEOUT_MS, "ready\n");
    cr_assert_eq(r, 1, "%s never said ready\nstdout:\n%s\nstderr:\n%s", argv[0], p->out.data,
                 p->err.data);
    e2e_wait_blocked(p->pid);
    cr_assert_eq(kill(p->pid, sig), 0);
    e2e_wait(p, E2E_TIMEOUT_MS);
    return p;
}

Test(e2e, sigterm_kills_like_python_and_completes_the_trace) {
    e2e_copy_script("ready_sleep.py");
    E2eProc *py = e2e_signal_after_ready((const char *[]){e2e_python, "ready_sleep.py", NULL},
                                         SIGTERM);
    E2eProc *dr = e2e_signal_after_ready(
        (const char *[]){e2e_bin, "run", "-q", "-o", "T.db", "ready_sleep.py", NULL}, SIGTERM);
    cr_assert(WIFSIGNALED(py->status) && WTERMSIG(py->status) == SIGTERM, "python: %s",
              e2e_status_text(py->status));
    cr_assert(WIFSIGNALED(dr->status) && WTERMSIG(dr->status) == SIGTERM,
              "dynrec run: %s\nstderr:\n%s", e2e_status_text(dr->status), dr->err.data);
    e2e_assert_same(py, dr, "ready_sleep.py + SIGTERM");
    DrTrace *t = e2e_open(e2e_path("T.db"));
    cr_assert_eq(dr_trace_is_complete(t), 1, "trace of a SIGTERMed run is not complete");
    char *sig = e2e_meta(t, "exit_signal");
    cr_assert(sig && atoi(sig) == SIGTERM, "exit_signal %s", sig);
    e2e_close(t);
}

Test(e2e, sigint_raises_keyboardinterrupt_like_python) {
    e2e_copy_script("ready_sleep.py");
    E2eProc *py = e2e_signal_after_ready((const char *[]){e2e_python, "ready_sleep.py", NULL},
                                         SIGINT);
    E2eProc *dr = e2e_signal_after_ready(
        (const char *[]){e2e_bin, "run", "-q", "-o", "T.db", "ready_sleep.py", NULL}, SIGINT);
    /* What python does: a KeyboardInterrupt traceback, then death by SIGINT. */
    cr_assert(WIFSIGNALED(py->status) && WTERMSIG(py->status) == SIGINT, "python: %s",
              e2e_status_text(py->status));
    cr_assert_not_null(strstr(py->err.data, "KeyboardInterrupt"), "python stderr:\n%s",
                       py->err.data);
    e2e_assert_same(py, dr, "ready_sleep.py + SIGINT");
    DrTrace *t = e2e_open(e2e_path("T.db"));
    cr_assert_eq(dr_trace_is_complete(t), 1, "trace of a SIGINTed run is not complete");
    char *sig = e2e_meta(t, "exit_signal");
    cr_assert(sig && atoi(sig) == SIGINT, "exit_signal %s", sig);
    e2e_close(t);
}

/* ---- 8: trace names ---------------------------------------------------- */

/* The file named by dynrec's "trace written to X" line (owned). */
static char *e2e_written_to(const E2eProc *p) {
    const char *tag = "dynrec: trace written to ";
    const char *at = strstr(p->err.data, tag);
    cr_assert_not_null(at, "no '%s' on stderr:\n%s", tag, p->err.data);
    at += strlen(tag);
    const char *nl = strchr(at, '\n');
    cr_assert_not_null(nl);
    return e2e_fmt("%.*s", (int)(nl - at), at);
}

Test(e2e, default_trace_names_never_replace_each_other) {
    e2e_copy_script("argv_info.py");
    const char *argv[] = {e2e_bin, "run", "argv_info.py", NULL};
    E2eProc *a = e2e_run(argv);
    E2eProc *b = e2e_run(argv);
    e2e_assert_exit(a, 0, "first run");
    e2e_assert_exit(b, 0, "second run");
    char *na = e2e_written_to(a), *nb = e2e_written_to(b);
    cr_assert_str_neq(na, nb, "both runs wrote %s", na);
    /* The message is the whole of what dynrec adds to stderr. */
    cr_assert_str_eq(a->err.data, e2e_fmt("dynrec: trace written to %s\n", na));
    int n = 0;
    char *dbs = e2e_list(".db", &n);
    cr_assert_eq(n, 2, "wanted two traces, found:\n%s", dbs);
    cr_assert_not_null(strstr(dbs, na));
    cr_assert_not_null(strstr(dbs, nb));
    cr_assert(strncmp(na, "argv_info-", 10) == 0, "default name %s", na);
    int side = 0;
    e2e_list("-wal", &side);
    cr_assert_eq(side, 0, "a finished trace left its -wal file");
    e2e_close(e2e_check_trace(na, 0, "[]", "argv_info.py", NULL));
    e2e_close(e2e_check_trace(nb, 0, "[]", "argv_info.py", NULL));

    /* -q: the same run, silent, still writes a third trace. */
    E2eProc *q = e2e_run((const char *[]){e2e_bin, "run", "-q", "argv_info.py", NULL});
    e2e_assert_exit(q, 0, "quiet run");
    cr_assert_str_eq(q->err.data, "", "-q still printed:\n%s", q->err.data);
    cr_assert_str_eq(q->out.data, a->out.data);
    e2e_list(".db", &n);
    cr_assert_eq(n, 3);
}

Test(e2e, output_option_replaces_an_existing_file) {
    e2e_copy_script("argv_info.py");
    const char junk[] = "not a trace, to be replaced\n";
    e2e_write_file(e2e_path("existing.db"), junk, sizeof junk - 1);
    E2eProc *p = e2e_run((const char *[]){e2e_bin, "run", "-o", "existing.db", "argv_info.py",
                                          "new", NULL});
    e2e_assert_exit(p, 0, "run -o existing.db");
    cr_assert_str_eq(p->err.data, "dynrec: trace written to existing.db\n");
    e2e_close(e2e_check_trace("existing.db", 0, "[\"new\"]", "argv_info.py", NULL));
    /* And an earlier trace there is replaced, not appended to. */
    p = e2e_run((const char *[]){e2e_bin, "run", "-q", "-o", "existing.db", "argv_info.py",
                                 "newer", NULL});
    e2e_assert_exit(p, 0, "second run -o existing.db");
    e2e_close(e2e_check_trace("existing.db", 0, "[\"newer\"]", "argv_info.py", NULL));
    int n = 0;
    e2e_list(".db", &n);
    cr_assert_eq(n, 1);
}

/* ---- 9: dynrec show ---------------------------------------------------- */

Test(e2e, show_summarises_a_good_trace) {
    e2e_copy_script("count_calls.py");
    E2eProc *r = e2e_run((const char *[]){e2e_bin, "run", "-q", "--all-frames", "-o", "T.db",
                                          "count_calls.py", NULL});
    e2e_assert_exit(r, 0, "count_calls.py");
    E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", "T.db", NULL});
    e2e_assert_exit(s, 0, "dynrec show");
    cr_assert_not_null(strstr(s->out.data, "complete"), "show:\n%s", s->out.data);
    cr_assert_null(strcasestr(s->out.data, "incomplete"), "show:\n%s", s->out.data);
    cr_assert_not_null(strstr(s->out.data, "count_calls.py"), "show:\n%s", s->out.data);
    cr_assert_not_null(strstr(s->out.data, "tick"), "top code objects lack tick:\n%s",
                       s->out.data);
    cr_assert_str_eq(s->err.data, "");

    E2eProc *j = e2e_run((const char *[]){e2e_bin, "show", "--json", "T.db", NULL});
    e2e_assert_exit(j, 0, "dynrec show --json");
    cr_assert_not_null(strstr(j->out.data, "\"complete\": true"), "json:\n%s", j->out.data);
    E2eProc *parse = e2e_run_in(
        (const char *[]){e2e_python, "-c",
                         "import json,sys; d = json.load(sys.stdin); "
                         "assert d['complete'] is True, d; "
                         "assert any(c['qualname'] == 'tick' and c['calls'] == 100000 "
                         "for c in d['top_code']), d['top_code']",
                         NULL},
        j->out.data, E2E_TIMEOUT_MS);
    e2e_assert_exit(parse, 0, "show --json output through json.load");
}

/* `dynrec show file` must exit 65 with one stderr line naming the file. */
static void e2e_assert_bad_trace(const char *name, const char *what) {
    E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", name, NULL});
    e2e_assert_exit(s, 65, what);
    cr_assert_str_eq(s->out.data, "", "%s: stdout:\n%s", what, s->out.data);
    size_t len = strlen(s->err.data);
    cr_assert(len > 1 && s->err.data[len - 1] == '\n' && !memchr(s->err.data, '\n', len - 1),
              "%s: wanted one stderr line, got:\n%s", what, s->err.data);
    cr_assert_not_null(strstr(s->err.data, name), "%s: message does not name %s:\n%s", what,
                       name, s->err.data);
}

Test(e2e, show_refuses_bad_files_with_65) {
    e2e_assert_bad_trace("missing.db", "a missing file");

    const char text[] = "this is a text file, not a trace\n";
    e2e_write_file(e2e_path("text.db"), text, sizeof text - 1);
    e2e_assert_bad_trace("text.db", "a text file");

    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(e2e_path("plain.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);", NULL,
                              NULL, NULL),
                 SQLITE_OK);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    e2e_assert_bad_trace("plain.db", "a plain sqlite database");

    e2e_write_file(e2e_path("empty.db"), "", 0);
    e2e_assert_bad_trace("empty.db", "an empty file");
    cr_assert_eq(mkdir(e2e_path("dir.db"), 0755), 0);
    e2e_assert_bad_trace("dir.db", "a directory");

    e2e_copy_script("argv_info.py");
    E2eProc *r = e2e_run((const char *[]){e2e_bin, "run", "-q", "-o", "half.db", "argv_info.py",
                                          NULL});
    e2e_assert_exit(r, 0, "argv_info.py");
    size_t len = 0;
    char *good = e2e_slurp(e2e_path("half.db"), &len);
    cr_assert_not_null(good);
    e2e_write_file(e2e_path("new.db"), good, len);
    cr_assert_eq(sqlite3_open(e2e_path("new.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
    e2e_assert_bad_trace("new.db", "a trace of a newer schema");

    struct stat st;
    cr_assert_eq(stat(e2e_path("half.db"), &st), 0);
    cr_assert_gt(st.st_size, 4096, "the trace is too small to cut in half meaningfully");
    cr_assert_eq(truncate(e2e_path("half.db"), st.st_size / 2), 0);
    e2e_assert_bad_trace("half.db", "a trace truncated to half");
}

/* ---- 10: the command line ---------------------------------------------- */

Test(e2e, help_goes_to_stdout_with_status_0) {
    const char *const cmds[][4] = {{"--help"}, {"-h"}, {"run", "--help"}, {"show", "--help"}};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        const char *argv[5] = {e2e_bin, cmds[i][0], cmds[i][1], NULL, NULL};
        E2eProc *p = e2e_run(argv);
        e2e_assert_exit(p, 0, cmds[i][0]);
        cr_assert_not_null(strstr(p->out.data, "usage: dynrec"), "%s %s:\n%s", cmds[i][0],
                           cmds[i][1] ? cmds[i][1] : "", p->out.data);
        cr_assert_str_eq(p->err.data, "");
    }
}

Test(e2e, version_names_every_component) {
    E2eProc *p = e2e_run((const char *[]){e2e_bin, "--version", NULL});
    e2e_assert_exit(p, 0, "--version");
    const char *want[] = {"dynrec ", "Python ", "SQLite ", "zstd "};
    for (size_t i = 0; i < 4; i++) {
        const char *at = strstr(p->out.data, want[i]);
        cr_assert(at && (at == p->out.data || at[-1] == '\n'), "no line starting '%s':\n%s",
                  want[i], p->out.data);
    }
}

Test(e2e, usage_errors_exit_2_on_stderr) {
    e2e_copy_script("argv_info.py");
    const char *const cases[][4] = {
        {"frobnicate"},                         /* unknown command */
        {"--frobnicate"},                       /* unknown top-level option */
        {"run", "--frobnicate", "argv_info.py"}, /* unknown run option */
        {"run", "-o"},                          /* -o without a path */
        {"run"},                                /* no script */
        {"show", "--frobnicate", "T.db"},       /* unknown show option */
        {"show"},                               /* no trace */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[6] = {e2e_bin, cases[i][0], cases[i][1], cases[i][2], NULL, NULL};
        E2eProc *p = e2e_run(argv);
        char *what = e2e_fmt("dynrec %s %s %s", cases[i][0], cases[i][1] ? cases[i][1] : "",
                             cases[i][2] ? cases[i][2] : "");
        e2e_assert_exit(p, 2, what);
        cr_assert_str_eq(p->out.data, "", "%s: stdout:\n%s", what, p->out.data);
        cr_assert_neq(p->err.len, 0, "%s: no message on stderr", what);
    }
    E2eProc *none = e2e_run((const char *[]){e2e_bin, NULL});
    e2e_assert_exit(none, 2, "dynrec without arguments");
    cr_assert_not_null(strstr(none->err.data, "usage:"));
    int n = 0;
    e2e_list(".db", &n);
    cr_assert_eq(n, 0, "a usage error left a trace behind");
}

Test(e2e, missing_script_exits_2_naming_it) {
    E2eProc *p = e2e_run((const char *[]){e2e_bin, "run", "-o", "T.db", "no_such_script.py",
                                          "arg", NULL});
    e2e_assert_exit(p, 2, "run no_such_script.py");
    cr_assert_not_null(strstr(p->err.data, "no_such_script.py"), "stderr:\n%s", p->err.data);
    cr_assert_str_eq(p->out.data, "");
    cr_assert_neq(access(e2e_path("T.db"), F_OK), 0, "a missing script left a trace behind");
}
