#define _GNU_SOURCE 1
/* e2e_util.c -- what the end-to-end tests share: children, files, traces.
 *
 * The end-to-end test files (test_e2e.c, test_dynamo.c) run the real dynrec
 * binary and plain python as children in a fresh mkdtemp directory per
 * test, compare what they wrote and how they ended, and read the traces
 * through the reader API.  This file holds the machinery; e2e_util.h says
 * what each function does.  Everything is for Criterion tests: failures
 * are cr_assert failures, and everything a test allocates is registered
 * with e2e_own and freed by e2e_teardown, so a test that fails half-way
 * leaks nothing and leaves no child running. */
#include "e2e_util.h"
#include "mask.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- per-test state, freed by the fixture ------------------------------ */

char e2e_dir[PATH_MAX];
char e2e_scripts[PATH_MAX];
char e2e_examples[PATH_MAX];
const char *e2e_bin, *e2e_python, *e2e_venv;
int e2e_asan;
static char e2e_asan_options[1024]; /* ASAN_OPTIONS for children, built here */

#define E2E_MAX_PROCS 32
#define E2E_MAX_OWNED 2048
static E2eProc *e2e_procs[E2E_MAX_PROCS];
static int e2e_nprocs;
static void *e2e_owned[E2E_MAX_OWNED];
static int e2e_nowned;
#define E2E_MAX_TRACES 8
static DrTrace *e2e_traces[E2E_MAX_TRACES]; /* open, closed by e2e_close */

/* Takes ownership of p (freed after the test); returns p. */
void *e2e_own(void *p) {
    cr_assert_lt(e2e_nowned, E2E_MAX_OWNED, "e2e: too many allocations in one test");
    e2e_owned[e2e_nowned++] = p;
    return p;
}

/* printf into a string owned by the test. */
char *e2e_fmt(const char *fmt, ...) {
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    cr_assert_geq(n, 0, "e2e: out of memory");
    return e2e_own(s);
}

int64_t e2e_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void e2e_sleep_ms(int ms) {
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

/* Finds a directory of the repository into out (absolute, "" when it does
 * not exist): $env when set, else rel taken from the directory of this
 * source file as compiled (relative to the directory the tests run in,
 * which is the repository root for `make check`). */
static void e2e_find_dir(const char *env, const char *rel, char *out) {
    const char *val = getenv(env);
    char want[PATH_MAX];
    if (val && *val) {
        snprintf(want, sizeof want, "%s", val);
    } else {
        snprintf(want, sizeof want, "%s", __FILE__);
        char *slash = strrchr(want, '/');
        if (slash) snprintf(slash + 1, sizeof want - (size_t)(slash + 1 - want), "%s", rel);
        else snprintf(want, sizeof want, "%s", rel);
    }
    if (!realpath(want, out)) out[0] = 0;
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

void e2e_setup(void) {
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
    snprintf(e2e_asan_options, sizeof e2e_asan_options, "%s%sdetect_leaks=0", prev ? prev : "",
             prev && *prev ? ":" : "");
    e2e_venv = e2e_find_venv(e2e_python);
    e2e_find_dir("DYNREC_SCRIPTS", "scripts", e2e_scripts);
    cr_assert(e2e_scripts[0], "e2e: cannot find tests/scripts (set DYNREC_SCRIPTS)");
    e2e_find_dir("DYNREC_EXAMPLES", "../examples", e2e_examples);
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

void e2e_teardown(void) {
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

/* ---- files ------------------------------------------------------------- */

/* Absolute path of name inside the test's directory (owned). */
char *e2e_path(const char *name) { return e2e_fmt("%s/%s", e2e_dir, name); }

/* Reads a whole file (owned, NUL-terminated); NULL when it cannot be read. */
char *e2e_slurp(const char *path, size_t *len) {
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

void e2e_write_file(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "e2e: cannot create %s: %s", path, strerror(errno));
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* Copies dir/name into the test's directory under the same relative name
 * (creating one level of subdirectory, as for pkg/mod.py). */
static void e2e_copy_from(const char *dir, const char *name) {
    size_t len = 0;
    char *src = e2e_slurp(e2e_fmt("%s/%s", dir, name), &len);
    cr_assert_not_null(src, "e2e: cannot read %s/%s", dir, name);
    const char *slash = strrchr(name, '/');
    if (slash) {
        char *sub = e2e_fmt("%s/%.*s", e2e_dir, (int)(slash - name), name);
        cr_assert(mkdir(sub, 0755) == 0 || errno == EEXIST, "e2e: mkdir %s", sub);
    }
    e2e_write_file(e2e_path(name), src, len);
}

void e2e_copy_script(const char *name) { e2e_copy_from(e2e_scripts, name); }

char *e2e_example_path(const char *name) {
    cr_assert(e2e_examples[0], "e2e: cannot find examples/ (set DYNREC_EXAMPLES)");
    return e2e_fmt("%s/%s", e2e_examples, name);
}

void e2e_copy_example(const char *name) {
    cr_assert(e2e_examples[0], "e2e: cannot find examples/ (set DYNREC_EXAMPLES)");
    e2e_copy_from(e2e_examples, name);
}

/* Names in the test's directory ending in suffix, in one owned string,
 * sorted and separated by '\n'; *count gets how many. */
char *e2e_list(const char *suffix, int *count) {
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
E2eProc *e2e_spawn(const char *const *argv, const char *in_text) {
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
int e2e_pump(E2eProc *p, int64_t deadline, const char *want) {
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
void e2e_wait(E2eProc *p, int timeout_ms) {
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

int e2e_python_minor(void) {
    static int minor = -1;
    if (minor < 0) {
        E2eProc *p = e2e_run(
            (const char *[]){e2e_python, "-c", "import sys; print(sys.version_info[1])", NULL});
        e2e_assert_exit(p, 0, "python's version");
        minor = atoi(p->out.data);
    }
    return minor;
}

/* Runs argv to the end (see e2e_spawn, e2e_wait). */
E2eProc *e2e_run_in(const char *const *argv, const char *in_text, int timeout_ms) {
    E2eProc *p = e2e_spawn(argv, in_text);
    e2e_wait(p, timeout_ms);
    return p;
}

E2eProc *e2e_run(const char *const *argv) { return e2e_run_in(argv, NULL, E2E_TIMEOUT_MS); }

/* The wait status as text, for messages and comparisons. */
char *e2e_status_text(int st) {
    if (WIFEXITED(st)) return e2e_fmt("exit %d", WEXITSTATUS(st));
    if (WIFSIGNALED(st))
        return e2e_fmt("signal %d%s", WTERMSIG(st), WCOREDUMP(st) ? " (core)" : "");
    return e2e_fmt("wait status 0x%x", st);
}

void e2e_assert_exit(const E2eProc *p, int code, const char *what) {
    cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == code,
              "%s: wanted exit %d, got %s\nstdout:\n%s\nstderr:\n%s", what, code,
              e2e_status_text(p->status), p->out.data, p->err.data);
}

/* Asserts that two runs ended alike and wrote the same stdout. */
void e2e_assert_same_stdout(const E2eProc *py, const E2eProc *dr, const char *what) {
    cr_assert_eq(py->status, dr->status,
                 "%s: python ended with %s, dynrec run with %s\n"
                 "dynrec stderr:\n%s",
                 what, e2e_status_text(py->status), e2e_status_text(dr->status), dr->err.data);
    cr_assert(py->out.len == dr->out.len && memcmp(py->out.data, dr->out.data, py->out.len) == 0,
              "%s: stdout differs\npython:\n%s\ndynrec run:\n%s", what, py->out.data, dr->out.data);
}

/* ... and the same stderr too: byte for byte, or else after the one
 * masking of times, pids and addresses (schema/mask.c), so that torch's log
 * lines (`W1201 15:54:51.094000 27206 torch/...`) of two runs compare. */
void e2e_assert_same(const E2eProc *py, const E2eProc *dr, const char *what) {
    e2e_assert_same_stdout(py, dr, what);
    if (py->err.len == dr->err.len && memcmp(py->err.data, dr->err.data, py->err.len) == 0) return;
    size_t na = 0, nb = 0;
    char *a = e2e_own(dr_mask(NULL, py->err.data, py->err.len, &na));
    char *b = e2e_own(dr_mask(NULL, dr->err.data, dr->err.len, &nb));
    cr_assert(a && b && na == nb && memcmp(a, b, na) == 0,
              "%s: stderr differs\npython:\n%s\ndynrec run:\n%s", what, py->err.data, dr->err.data);
}

/* ---- traces ------------------------------------------------------------ */

/* Opens a trace, or returns NULL with err filled; close it with e2e_close
 * (the fixture closes what a failing test left open). */
DrTrace *e2e_try_open(const char *path, DrError *err) {
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
DrTrace *e2e_open(const char *path) {
    DrError err = {0};
    DrTrace *t = e2e_try_open(path, &err);
    cr_assert_not_null(t, "e2e: cannot open trace %s: %s", path, err.msg);
    return t;
}

void e2e_close(DrTrace *t) {
    for (int i = 0; i < E2E_MAX_TRACES; i++)
        if (e2e_traces[i] == t) e2e_traces[i] = NULL;
    dr_trace_free(t);
}

/* meta[key] (owned) or NULL when absent. */
char *e2e_meta(DrTrace *t, const char *key) {
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
char *e2e_sql(DrTrace *t, const char *fmt, ...) {
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

long long e2e_sql_int(DrTrace *t, const char *sql) {
    char *v = e2e_sql(t, "%s", sql);
    cr_assert_not_null(v, "e2e: no value from %s", sql);
    return atoll(v);
}

static int e2e_add_line(void *ud, int ncols, const char *const *names, const char *const *values) {
    (void)names;
    E2eBuf *b = ud;
    const char *v = ncols > 0 && values[0] ? values[0] : "NULL";
    e2e_buf_add(b, v, strlen(v));
    e2e_buf_add(b, "\n", 1);
    return 0;
}

char *e2e_sql_lines(DrTrace *t, int *count, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *sql = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    cr_assert_not_null(sql);
    E2eBuf b = {0};
    e2e_buf_add(&b, "", 0);
    DrError err = {0};
    int rc = dr_trace_query(t, sql, e2e_add_line, &b, &err);
    e2e_own(b.data);
    cr_assert_eq(rc, DR_OK, "e2e: query failed: %s\n%s", err.msg, sql);
    sqlite3_free(sql);
    if (count) {
        *count = 0;
        for (const char *c = b.data; *c; c++) *count += *c == '\n';
    }
    return b.data;
}

/* Evaluations of the code object qualname in a file named script (the
 * recorded filename is the path CPython gives, relative or absolute). */
long long e2e_calls(DrTrace *t, const char *script, const char *qualname) {
    char *v = e2e_sql(t,
                      "SELECT coalesce(sum(calls), 0) FROM v_frame_counts"
                      " WHERE (filename = %Q OR filename LIKE '%%/' || %Q) AND qualname = %Q",
                      script, script, qualname);
    return v ? atoll(v) : 0;
}

/* The checks every finished `dynrec run` trace passes: it opens, is
 * complete, records the exit status, argv (a JSON array equal to
 * argv_json), the script or module, and the script's source in v_files. */
DrTrace *e2e_check_trace(const char *trace, int exit_status, const char *argv_json,
                         const char *script, const char *module) {
    DrTrace *t = e2e_open(e2e_path(trace));
    cr_assert_eq(dr_trace_is_complete(t), 1, "%s: trace not complete", trace);
    char *st = e2e_meta(t, "exit_status");
    cr_assert_not_null(st, "%s: no exit_status", trace);
    cr_assert_eq(atoi(st), exit_status, "%s: exit_status %s, wanted %d", trace, st, exit_status);
    char *same =
        e2e_sql(t, "SELECT json(value) = json(%Q) FROM meta WHERE key = 'argv'", argv_json);
    cr_assert(same && strcmp(same, "1") == 0, "%s: meta argv is %s, wanted %s", trace,
              e2e_meta(t, "argv"), argv_json);
    if (script) {
        char *s = e2e_meta(t, "script");
        cr_assert(s && strcmp(s, script) == 0, "%s: meta script %s, wanted %s", trace, s, script);
        /* The recorded source is the file's exact bytes. */
        char *blob =
            e2e_sql(t, "SELECT blob_id FROM v_files WHERE role = 'script' AND path = %Q", script);
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

/* ---- comparing with plain python -------------------------------------- */

/* prefix (np entries) followed by args up to its NULL, NULL-terminated, in
 * an owned array. */
static const char **e2e_argv(const char *const *prefix, int np, const char *const *args) {
    int n = 0;
    while (args[n]) n++;
    const char **argv = e2e_own(calloc((size_t)(np + n + 1), sizeof *argv));
    cr_assert_not_null(argv);
    for (int i = 0; i < np; i++) argv[i] = prefix[i];
    for (int i = 0; i < n; i++) argv[np + i] = args[i];
    return argv;
}

E2eProc *e2e_run_python(const char *const *args, const char *in_text, int timeout_ms) {
    const char *prefix[] = {e2e_python};
    return e2e_run_in(e2e_argv(prefix, 1, args), in_text, timeout_ms);
}

E2eProc *e2e_record(const char *trace, const char *const *args, const char *in_text,
                    int timeout_ms) {
    const char *prefix[] = {e2e_bin, "run", "-q", "-o", trace};
    return e2e_run_in(e2e_argv(prefix, 5, args), in_text, timeout_ms);
}

E2eProc *e2e_same_as_python(const char *const *args, const char *in_text, int timeout_ms) {
    E2eProc *py = e2e_run_python(args, in_text, timeout_ms);
    E2eProc *dr = e2e_record("T.db", args, in_text, timeout_ms);
    e2e_assert_same(py, dr, args[0]);
    cr_assert(WIFEXITED(dr->status), "%s: ended with %s", args[0], e2e_status_text(dr->status));
    return dr;
}
