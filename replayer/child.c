/* child.c -- what `dynrec rerun` (rerun.c) and `dynrec replay` (replay.c)
 * share to run the recorded program again in a child process: the run
 * facts read from the recording, its stored sources, the child's
 * environment (rerun's rule and replay's allow-list), the --set check,
 * spawning the child (confined by bubblewrap or not, with SIGINT handled
 * as `time` does) and loading the recording and the child's trace for the
 * comparison (see child.h). */
#define _GNU_SOURCE 1
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../recorder/run.h"
#include "../schema/text.h"

extern char **environ;

char *dr_child_meta(DrChild *r, const char *key) {
    char *v = NULL;
    if (dr_trace_get_meta(r->t, key, &v, NULL) != DR_OK || !v) return NULL;
    char *s = dr_arena_strdup(&r->arena, v);
    free(v);
    return s;
}

/* s through the terminal sanitizer (schema/text.c), cut to max_cols
 * columns (0: whole), in r's arena; "?" when out of memory.  Every string
 * of the trace or of a stored source that is printed goes through it. */
const char *dr_child_safe(DrChild *r, const char *s, int max_cols) {
    char *t = dr_safe(s, s ? strlen(s) : 0, max_cols, 0);
    char *a = t ? dr_arena_strdup(&r->arena, t) : NULL;
    free(t);
    return a ? a : "?";
}

/* ---- argv from meta: a JSON array of strings ------------------------------ */

static int hexval(int c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static void put_utf8(DrBuf *b, unsigned cp) {
    char u[4];
    size_t n;
    if (cp < 0x80) u[0] = (char)cp, n = 1;
    else if (cp < 0x800) u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
        u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
    else
        u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f)),
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
    dr_buf_add(b, u, n);
}

/* Parses ["a", "b\n", ...] into out; -1 when it is not such an array.  A
 * string with a NUL is refused (it cannot be an argument). */
int dr_child_parse_strings(DrArena *a, const char *s, DrStrVec *out) {
    const char *p = s;
    while (*p == ' ') p++;
    if (*p++ != '[') return -1;
    for (;;) {
        while (*p == ' ' || *p == '\n') p++;
        if (*p == ']') return p[1] == 0 ? 0 : -1;
        if (out->n && *p++ != ',') return -1;
        while (*p == ' ' || *p == '\n') p++;
        if (*p++ != '"') return -1;
        DrBuf b = {0};
        while (*p && *p != '"') {
            if (*p != '\\') {
                dr_buf_add(&b, p++, 1);
                continue;
            }
            p++;
            char c = *p++;
            const char *esc = strchr("\"\\/bfnrt", c);
            if (c == 'u') {
                unsigned cp = 0;
                for (int i = 0; i < 4; i++) {
                    int h = hexval((unsigned char)*p);
                    if (h < 0) return dr_buf_free(&b), -1;
                    cp = cp << 4 | (unsigned)h;
                    p++;
                }
                if (cp >= 0xd800 && cp < 0xdc00 && p[0] == '\\' && p[1] == 'u') {
                    unsigned lo = 0;
                    for (int i = 2; i < 6; i++) {
                        int h = hexval((unsigned char)p[i]);
                        if (h < 0) return dr_buf_free(&b), -1;
                        lo = lo << 4 | (unsigned)h;
                    }
                    if (lo >= 0xdc00 && lo < 0xe000) {
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                        p += 6;
                    }
                }
                if (cp == 0) return dr_buf_free(&b), -1;
                put_utf8(&b, cp);
            } else if (esc && c) {
                static const char repl[] = "\"\\/\b\f\n\r\t";
                char ch = repl[esc - "\"\\/bfnrt"];
                dr_buf_add(&b, &ch, 1);
            } else {
                return dr_buf_free(&b), -1;
            }
        }
        if (*p++ != '"' || b.failed) return dr_buf_free(&b), -1;
        int rc = dr_vec_push(out, dr_arena_strdup(a, b.s ? b.s : ""));
        dr_buf_free(&b);
        if (rc != 0 || out->n > 100000) return -1;
    }
}

/* ---- files --------------------------------------------------------------- */

/* A stored source's path comes from the trace: only a regular file, and
 * no more than a source could be (the largest the recorder stores). */
#define SOURCE_MAX (64u << 20)

char *dr_child_read_file(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > (off_t)SOURCE_MAX) {
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return NULL;
    }
    DrBuf b = {0};
    char chunk[65536];
    size_t n;
    while (b.len <= SOURCE_MAX && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        dr_buf_add(&b, chunk, n);
    int bad = ferror(f) || b.failed || b.len > SOURCE_MAX;
    fclose(f);
    if (bad) {
        dr_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.s ? b.s : calloc(1, 1);
}

/* ---- the stored sources ---------------------------------------------------- */

static int file_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    DrChildFiles *f = ud;
    if (n < 3 || !v[0] || !v[1] || !v[2]) return 0;
    dr_vec_push(&f->path, dr_arena_strdup(&f->r->arena, v[0]));
    dr_vec_push(&f->role, dr_arena_strdup(&f->r->arena, v[1]));
    dr_vec_push(&f->blob, dr_arena_strdup(&f->r->arena, v[2]));
    return 0;
}

int dr_child_load_files(DrChild *r, DrChildFiles *f, DrError *err) {
    f->r = r;
    return dr_trace_query(r->t,
                          "SELECT path, role, blob_id FROM v_files"
                          " WHERE role IN ('script', 'main', 'source') ORDER BY rowid",
                          file_row, f, err);
}

void dr_child_free_files(DrChildFiles *f) {
    dr_vec_free(&f->path);
    dr_vec_free(&f->role);
    dr_vec_free(&f->blob);
}

int dr_child_tmpdir(DrChild *r, const char *what, DrError *err) {
    const char *base = getenv("TMPDIR");
    char *tmpl = NULL;
    if (asprintf(&tmpl, "%s/dynrec-%s-XXXXXX", base && *base == '/' ? base : "/tmp", what) < 0)
        return -1;
    if (!mkdtemp(tmpl)) {
        dr_error(err, DR_ERR_IO, "cannot make a temporary directory %s: %s", tmpl, strerror(errno));
        free(tmpl);
        return -1;
    }
    r->tmpdir = dr_arena_strdup(&r->arena, tmpl);
    free(tmpl);
    return r->tmpdir ? 0 : -1;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void dr_child_rmtree(const char *dir) {
    if (dir && *dir) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Puts a NULL after the last element (not counted), for exec. */
static int dr_child_terminate(DrStrVec *v) {
    if (dr_vec_push(v, "") != 0) return -1;
    v->v[--v->n] = NULL;
    return 0;
}

/* ---- the environment of the re-run --------------------------------------- */

/* Variables that stay the caller's: which Python and torch to use, the
 * loader's settings, dynrec's own. */
static int keep_callers(const char *name) {
    return strncmp(name, "VIRTUAL_ENV", 11) == 0 || strncmp(name, "LD_", 3) == 0 ||
           strncmp(name, "DYNREC", 6) == 0;
}

typedef struct {
    DrChild *r;
    DrStrVec *env;
} EnvCtx;

/* Adds NAME=VALUE (kept in r's arena) to env. */
static void dr_child_push_env(DrChild *r, DrStrVec *env, const char *name, const char *value) {
    DrBuf b = {0};
    dr_buf_printf(&b, "%s=%s", name, value);
    if (!b.failed) dr_vec_push(env, dr_arena_strdup(&r->arena, b.s));
    dr_buf_free(&b);
}

static int env_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    EnvCtx *c = ud;
    if (n < 2 || !v[0] || !v[1] || !*v[0] || strchr(v[0], '=') || keep_callers(v[0]) ||
        !dr_run_is_recorded_env(v[0]))
        return 0;
    dr_child_push_env(c->r, c->env, v[0], v[1]);
    return 0;
}

int dr_child_rerun_env(DrChild *r, DrStrVec *env, DrError *err) {
    for (char **e = environ; *e; e++)
        if (!dr_run_is_recorded_env(*e) || keep_callers(*e)) dr_vec_push(env, *e);
    EnvCtx c = {r, env};
    int rc = dr_trace_query(r->t,
                            "SELECT substr(key, 5), value FROM meta WHERE key LIKE 'env.%'"
                            " ORDER BY key",
                            env_row, &c, err);
    return dr_child_terminate(env) == 0 ? rc : DR_ERR_NOMEM;
}

/* The environment of a replay: the caller's, minus what the recording
 * set, plus the recorded variables that can change Dynamo's decisions and
 * can neither name a path nor make Python import or run something (a
 * recorded PYTHONWARNINGS imports a module, TORCH_LOGS_OUT appends to any
 * file, TORCHINDUCTOR_CACHE_DIR makes directories).  The rule is an
 * allow-list: a name of torch's or a thread library's, no path-like word
 * in it, and a short plain value. */
static int replay_env_ok(const char *name, const char *value) {
    static const char *const prefixes[] = {"TORCH", "PYTORCH", "OMP_", "MKL_", "KMP_", "OPENBLAS_"};
    static const char *const words[] = {
        "DIR",    "PATH",   "FILE",   "OUT",  "CACHE", "TRACE",    "HOME",   "ROOT",   "LIB",
        "LOAD",   "CMD",    "EXE",    "CXX",  "CC",    "COMPILER", "PLUGIN", "SCRIPT", "HOOK",
        "MODULE", "IMPORT", "PREFIX", "SOCK", "ADDR",  "HOST",     "PORT",   "URL"};
    size_t n = strlen(name), vn = strlen(value);
    if (n == 0 || n > 64 || vn > 256) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= '0' && name[i] <= '9') ||
              name[i] == '_'))
            return 0;
    for (size_t i = 0; i < vn; i++) {
        unsigned char c = (unsigned char)value[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              strchr("_.,:+=- ", c)))
            return 0;
    }
    /* Python's own that neither import nor name a file. */
    if (strcmp(name, "PYTHONHASHSEED") == 0 || strcmp(name, "PYTHONDONTWRITEBYTECODE") == 0 ||
        strcmp(name, "PYTHONUNBUFFERED") == 0 || strcmp(name, "PYTHONUTF8") == 0)
        return 1;
    int known = 0;
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) known = 1;
    if (!known) return 0;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(name, words[i])) return 0;
    return 1;
}

typedef struct {
    DrChild *r;
    DrStrVec *env;
    long left_out;
    DrBuf names; /* the first few left out, when their names are plain */
} ReplayEnvCtx;

static int replay_env_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    ReplayEnvCtx *c = ud;
    if (n < 2 || !v[0] || !v[1]) return 0;
    if (keep_callers(v[0])) return 0; /* the caller's own (VIRTUAL_ENV, DYNREC_*) */
    if (!replay_env_ok(v[0], v[1])) {
        if (c->left_out++ < 6) {
            int plain = *v[0] && strlen(v[0]) <= 64;
            for (const char *p = v[0]; *p; p++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) plain = 0;
            dr_buf_printf(&c->names, "%s%s", c->names.len ? ", " : "",
                          c->left_out > 5 ? "..."
                          : plain         ? v[0]
                                          : "(a name with odd bytes)");
        }
        return 0;
    }
    dr_child_push_env(c->r, c->env, v[0], v[1]);
    return 0;
}

/* The caller's variables a replay keeps: which venv, the loader's and the
 * sanitizers' settings, dynrec's own, the locale and the terminal; with
 * confined, PATH and HOME are the sandbox's, not the caller's. */
static int replay_keeps(const char *e, int confined) {
    static const char *const keep[] = {"VIRTUAL_ENV=",
                                       "LD_LIBRARY_PATH=",
                                       "LD_PRELOAD=",
                                       "ASAN_OPTIONS=",
                                       "UBSAN_OPTIONS=",
                                       "LSAN_OPTIONS=",
                                       "DYNREC",
                                       "LANG=",
                                       "LC_",
                                       "TERM=",
                                       "NO_COLOR=",
                                       "TZ=",
                                       "COLUMNS=",
                                       "LINES="};
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
        if (strncmp(e, keep[i], strlen(keep[i])) == 0) return 1;
    if (!confined && (strncmp(e, "PATH=", 5) == 0 || strncmp(e, "HOME=", 5) == 0 ||
                      strncmp(e, "TMPDIR=", 7) == 0 || strncmp(e, "USER=", 5) == 0 ||
                      strncmp(e, "LOGNAME=", 8) == 0))
        return 1;
    return 0;
}

int dr_child_replay_env(DrChild *r, DrStrVec *env, int confined, int trust, DrError *err) {
    for (char **e = environ; *e; e++)
        if (replay_keeps(*e, confined)) dr_vec_push(env, *e);
    if (confined) {
        dr_vec_push(env, "PATH=/usr/bin:/bin");
        dr_vec_push(env, "HOME=/tmp");
        dr_vec_push(env, "USER=replay");
        dr_vec_push(env, "DYNREC_REPLAY_SANDBOXED=1");
    }
    if (trust) dr_vec_push(env, "DYNREC_REPLAY_TRUST=1");
    /* The caller's PYTHONPATH, its absolute folders only (mounted in the
     * sandbox too): a library installed outside the venv imports. */
    const char *pp = dr_sandbox_pythonpath(&r->arena);
    if (pp) dr_child_push_env(r, env, "PYTHONPATH", pp);
    ReplayEnvCtx c = {r, env, 0, {0}};
    int rc = dr_trace_query(r->t,
                            "SELECT substr(key, 5), value FROM meta WHERE key LIKE 'env.%'"
                            " ORDER BY key",
                            replay_env_row, &c, err);
    if (rc == DR_OK && c.names.len && !c.names.failed)
        r->env_left_out = dr_arena_strdup(&r->arena, c.names.s);
    dr_buf_free(&c.names);
    return dr_child_terminate(env) == 0 ? rc : DR_ERR_NOMEM;
}

void dr_child_print_env_note(DrChild *r, FILE *out, int identical) {
    if (identical || !r->env_left_out) return;
    fprintf(out,
            "  note: recorded environment left out (it could name a path or make Python "
            "import): %s\n",
            r->env_left_out);
    /* (names joined by ", ": PYTHONPATH as a whole one) */
    const char *p = strstr(r->env_left_out, "PYTHONPATH");
    if (p && (p == r->env_left_out || p[-1] == ' ') && (p[10] == 0 || p[10] == ','))
        fputs("  note: a PYTHONPATH set for the replay is used (its absolute folders, mounted "
              "read-only): set one where the recorded program's packages are here\n",
              out);
}

void dr_child_push_sandbox_and_sets(DrStrVec *argv, const DrSandbox *sb, int nset,
                                    char *const *set) {
    if (sb) {
        dr_vec_push(argv, "--sandboxed");
        dr_vec_push(argv, (char *)dr_sandbox_mode_name(sb->mode));
    }
    for (int i = 0; i < nset; i++) {
        dr_vec_push(argv, "--set");
        dr_vec_push(argv, set[i]);
    }
}

/* ---- --set, checked by the venv's Python before anything runs ------------- */

static const char CHECK_SET_PY[] =
    "import ast, difflib, sys\n"
    "import torch._dynamo.config as d\n"
    "import torch._inductor.config as i\n"
    "import torch.fx.experimental._config as fx\n"
    "bad = 0\n"
    "for arg in sys.argv[1:]:\n"
    "    name, _, text = arg.partition('=')\n"
    "    pre = name.partition('.')[0] + '.' if name.startswith(('inductor.', 'fx.')) else ''\n"
    "    mod = {'inductor.': i, 'fx.': fx}.get(pre, d)\n"
    "    short = name[len(pre):]\n"
    "    names = sorted(mod.get_config_copy())\n"
    "    if short not in names:\n"
    "        close = difflib.get_close_matches(short, names, 5)\n"
    "        print('unknown config %s%s' % (name, '; did you mean: ' + ', '.join(pre + c for c "
    "in close) if close else ''))\n"
    "        bad = 1\n"
    "        continue\n"
    "    try:\n"
    "        ast.literal_eval(text)\n"
    "    except Exception:\n"
    "        print('%s: %r is not a Python literal (a string needs quotes: %s=\"\\'text\\'\")'"
    " % (name, text, name))\n"
    "        bad = 1\n"
    "sys.exit(bad)\n";

int dr_child_check_sets(int nset, char *const *set, FILE *msgs) {
    char *python = dr_run_choose_python();
    if (!python) {
        fprintf(msgs, "dynrec rerun: no virtualenv Python to check --set with; set "
                      "VIRTUAL_ENV\n");
        return DR_EX_USAGE;
    }
    char **argv = calloc((size_t)nset + 4, sizeof *argv);
    if (!argv) return 1;
    argv[0] = python;
    argv[1] = "-c";
    argv[2] = (char *)CHECK_SET_PY;
    for (int i = 0; i < nset; i++) argv[3 + i] = set[i];
    int pipefd[2];
    if (pipe(pipefd) != 0) return free(argv), 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        close(pipefd[1]);
        execv(python, argv);
        _exit(127);
    }
    close(pipefd[1]);
    DrBuf out = {0};
    char chunk[4096];
    ssize_t n;
    while ((n = read(pipefd[0], chunk, sizeof chunk)) > 0) dr_buf_add(&out, chunk, (size_t)n);
    close(pipefd[0]);
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    int rc = 0;
    if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (out.s && *out.s) {
            for (char *line = strtok(out.s, "\n"); line; line = strtok(NULL, "\n"))
                fprintf(msgs, "dynrec rerun: --set %s\n", line);
        } else {
            fprintf(msgs,
                    "dynrec rerun: cannot check --set with %s (it failed to import "
                    "torch)\n",
                    python);
        }
        rc = DR_EX_USAGE;
    }
    dr_buf_free(&out);
    free(argv);
    free(python);
    return rc;
}

/* ---- running ---------------------------------------------------------------- */

static int python_minor(const char *v, int *maj, int *min) {
    return v && sscanf(v, "%d.%d", maj, min) == 2 ? 0 : -1;
}

int dr_child_other_python(const char *verb, const char *trace, const char *recorded, DrError *err) {
    int rmaj, rmin, maj, min;
    if (python_minor(recorded, &rmaj, &rmin) != 0 ||
        python_minor(dr_run_python_version(), &maj, &min) != 0 || (rmaj == maj && rmin == min))
        return 0;
    dr_error(err, DR_ERR_ARG,
             "%s was recorded with Python %d.%d; this dynrec runs Python "
             "%d.%d: %s it with a dynrec built for Python %d.%d",
             trace, rmaj, rmin, maj, min, verb, rmaj, rmin);
    return 1;
}

char *dr_child_default_out(DrChild *r, const char *trace, const char *what) {
    const char *base = strrchr(trace, '/');
    base = base ? base + 1 : trace;
    size_t stem = strlen(base);
    if (stem > 3 && strcmp(base + stem - 3, ".db") == 0) stem -= 3;
    if (stem > 200) stem = 200;
    for (int i = 1; i < 10000; i++) {
        char buf[300];
        if (i == 1) snprintf(buf, sizeof buf, "%.*s-%s.db", (int)stem, base, what);
        else snprintf(buf, sizeof buf, "%.*s-%s-%d.db", (int)stem, base, what, i);
        if (access(buf, F_OK) != 0) return dr_arena_strdup(&r->arena, buf);
    }
    return NULL;
}

char *dr_child_absolute(DrChild *r, const char *path) {
    char here[4096];
    if (!getcwd(here, sizeof here)) return NULL;
    return dr_path_normalize(&r->arena, here, path);
}
/* Runs self with argv (NULL-terminated) and env in cwd (NULL: this one),
 * its stdout sent to stderr when to_stderr (a report owns stdout), and
 * waits for it; returns its wait status, or -1.  Like `time`, an interrupt
 * is the child's to handle.  what names the command in messages. */
static int spawn_wait(const char *what, const char *self, char *const *argv, char *const *env,
                      const char *cwd, int to_stderr) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (cwd && chdir(cwd) != 0) {
            fprintf(stderr, "dynrec %s: cannot enter %s: %s\n", what, cwd, strerror(errno));
            _exit(127);
        }
        if (to_stderr) dup2(2, 1);
        signal(SIGINT, SIG_DFL);
        execve(self, argv, env);
        fprintf(stderr, "dynrec %s: cannot run %s: %s\n", what, self, strerror(errno));
        _exit(127);
    }
    if (pid < 0) return -1;
    void (*old)(int) = signal(SIGINT, SIG_IGN);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            st = -1;
            break;
        }
    signal(SIGINT, old);
    return st;
}

/* The pid a confined replay runs as, for the SIGINT handler. */
static volatile sig_atomic_t confined_pid;

static void on_interrupt(int sig) {
    (void)sig;
    if (confined_pid > 0) kill((pid_t)confined_pid, SIGKILL);
}

/* spawn_wait for a confined child: exe is bwrap, argv its command line.
 * The resource limits are set in the child before bwrap runs.  bwrap
 * starts a new session (the terminal cannot be typed into from inside), so
 * an interrupt does not reach the child: the parent kills bwrap instead,
 * and --die-with-parent takes the rest down. */
static int spawn_confined(const char *exe, char *const *argv, char *const *env, int to_stderr) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (to_stderr) dup2(2, 1);
        signal(SIGINT, SIG_DFL);
        dr_sandbox_limits();
        execve(exe, argv, env);
        fprintf(stderr, "dynrec: cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    if (pid < 0) return -1;
    confined_pid = pid;
    struct sigaction sa = {0}, old;
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            st = -1;
            break;
        }
    sigaction(SIGINT, &old, NULL);
    confined_pid = 0;
    return st;
}

int dr_child_spawn(DrChild *r, const DrSandbox *sb, const char *what, const char *self,
                   DrStrVec *argv, DrStrVec *env, const char *cwd, int to_stderr) {
    int st = -1;
    if (dr_child_terminate(argv) != 0) return -1;
    if (sb) {
        DrStrVec bw = {0};
        if (dr_sandbox_argv(&r->arena, sb, argv->v, &bw) == 0 && dr_child_terminate(&bw) == 0)
            st = spawn_confined(sb->bwrap, bw.v, env->v, to_stderr);
        dr_vec_free(&bw);
    } else {
        st = spawn_wait(what, self, argv->v, env->v, cwd, to_stderr);
    }
    return st;
}

int dr_child_load_recording(const char *path, DrTrace **t, DrModel **m, DrError *err) {
    *t = dr_trace_open(path, err);
    if (*t) *m = dr_model_load(*t, err);
    return *t && *m ? 0 : DR_EX_DATAERR;
}

int dr_child_load_result(const char *run, const char *path, DrTrace **nt, DrModel **mb,
                         DrError *err) {
    DrError e = {0};
    *nt = dr_trace_open(path, &e);
    if (!*nt) {
        dr_error(err, e.code, "the %s left no readable trace: %s", run, e.msg);
        return DR_EX_DATAERR;
    }
    if (!(*mb = dr_model_load(*nt, err))) return DR_EX_DATAERR;
    return 0;
}

/* The message says "replay" for rerun too, as it always has. */
int dr_child_move_out(const char *from, const char *to, FILE *msgs) {
    if (rename(from, to) == 0) return 0;
    if (errno != EXDEV) {
        fprintf(msgs, "dynrec replay: cannot write %s: %s\n", to, strerror(errno));
        return -1;
    }
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int outfd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int ok = in >= 0 && outfd >= 0;
    char buf[65536];
    ssize_t n = 0;
    while (ok && (n = read(in, buf, sizeof buf)) > 0) {
        ok = write(outfd, buf, (size_t)n) == n;
    }
    if (n < 0) ok = 0;
    if (in >= 0) close(in);
    if (outfd >= 0 && close(outfd) != 0) ok = 0;
    if (!ok) {
        fprintf(msgs, "dynrec replay: cannot write %s: %s\n", to, strerror(errno));
        unlink(to);
        return -1;
    }
    return 0;
}
