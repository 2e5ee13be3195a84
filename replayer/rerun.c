/* rerun.c -- `dynrec rerun`: the recorded program, again, under its
 * recorded conditions; then the comparison engine on the two traces.
 *
 * The re-run is `dynrec run --rerun-of TRACE` in a child process (the
 * runner in recorder/ is reused, not copied; and Python's exit ends only
 * the child), started in the recorded cwd with the recorded argv and the
 * recorded environment variables (those a trace records: TORCH*, PYTHON*,
 * ...), except VIRTUAL_ENV, LD_* and DYNREC*, which stay the caller's so a
 * re-run can use another torch.  The child takes the hash seed, the seeds
 * of `random` and NumPy and the Dynamo config at start from the trace.
 *
 * --from-trace runs the sources stored in the trace instead: they are laid
 * out in a private temporary directory (mode 0700, files created with
 * O_EXCL|O_NOFOLLOW), relative to the directory that holds both the
 * recorded cwd and the script; a stored name with a ".." component is
 * refused, and files outside that directory are left out.  That executes
 * code that came in a file, so it needs --trust. */
#define _GNU_SOURCE 1
#include "rerun.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../recorder/run.h"
#include "../schema/text.h"
#include "../schema/trace.h"
#include "model.h"
#include "sandbox.h"
#include "../schema/ident.h"
#include "../schema/sign.h"
#include "../common/util.h"

extern char **environ;

typedef struct {
    DrArena arena;
    DrTrace *t;
    char *cwd, *script, *module, *python_version, *torch_version, *exit_status;
    DrStrVec args;       /* the script's own arguments */
    char *tmpdir;        /* --from-trace layout, or a fresh cwd; removed at the end */
    char *run_cwd, *run_target;
    DrStrVec notes;      /* said before running and again in the report */
    DrStrVec changed;    /* "file (N lines)" of sources that differ from the recording */
    long left_out;       /* stored files outside the laid-out directory */
} Rerun;

static char *meta(Rerun *r, const char *key) {
    char *v = NULL;
    if (dr_trace_get_meta(r->t, key, &v, NULL) != DR_OK || !v) return NULL;
    char *s = dr_arena_strdup(&r->arena, v);
    free(v);
    return s;
}

/* s through the terminal sanitizer (schema/text.c), cut to max_cols
 * columns (0: whole), in r's arena; "?" when out of memory.  Every string
 * of the trace or of a stored source that is printed goes through it. */
static const char *safe(Rerun *r, const char *s, int max_cols) {
    char *t = dr_safe(s, s ? strlen(s) : 0, max_cols, 0);
    char *a = t ? dr_arena_strdup(&r->arena, t) : NULL;
    free(t);
    return a ? a : "?";
}

static void note(Rerun *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(Rerun *r, const char *fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    const char *line = safe(r, buf, 0);
    dr_vec_push(&r->notes, (char *)line);
    fprintf(stderr, "dynrec rerun: %s\n", line);
}

/* ---- argv from meta: a JSON array of strings ------------------------------ */

static int hexval(int c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
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
static int parse_string_array(DrArena *a, const char *s, DrStrVec *out) {
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

static char *read_file(const char *path, size_t *len) {
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

/* Splits text into lines (pointers into a copy owned by the arena). */
static void lines_of(DrArena *a, const char *text, size_t len, DrStrVec *out) {
    char *copy = dr_arena_strndup(a, text, len);
    if (!copy) return;
    for (char *p = copy; *p || p == copy;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        dr_vec_push(out, p);
        if (!nl) break;
        p = nl + 1;
        if (!*p) break;
    }
}

/* Which lines changed between the recorded text and the one on disk: a
 * longest-common-subsequence diff for files of up to 3000 lines, printed
 * as "-N: old" / "+N: new" (at most `max` lines). */
static long line_diff(Rerun *r, const char *name, const char *old, size_t oldlen,
                      const char *cur, size_t curlen, int max) {
    DrStrVec a = {0}, b = {0};
    lines_of(&r->arena, old, oldlen, &a);
    lines_of(&r->arena, cur, curlen, &b);
    long n = a.n, m = b.n, changed = 0, shown = 0;
    if (n > 3000 || m > 3000) {
        fprintf(stderr, "  (%s is too long to show its changed lines)\n", safe(r, name, 0));
        dr_vec_free(&a);
        dr_vec_free(&b);
        return 1;
    }
    unsigned short *L = calloc((size_t)(n + 1) * (size_t)(m + 1), sizeof *L);
    if (!L) {
        dr_vec_free(&a);
        dr_vec_free(&b);
        return 1;
    }
#define AT(i, j) L[(size_t)(i) * (size_t)(m + 1) + (size_t)(j)]
    for (long i = n - 1; i >= 0; i--)
        for (long j = m - 1; j >= 0; j--)
            AT(i, j) = strcmp(a.v[i], b.v[j]) == 0 ? AT(i + 1, j + 1) + 1
                       : AT(i + 1, j) >= AT(i, j + 1) ? AT(i + 1, j)
                                                      : AT(i, j + 1);
    long i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && strcmp(a.v[i], b.v[j]) == 0) {
            i++, j++;
        } else if (i < n && (j == m || AT(i + 1, j) >= AT(i, j + 1))) {
            if (shown++ < max) fprintf(stderr, "  -%ld: %s\n", i + 1, safe(r, a.v[i], 200));
            i++, changed++;
        } else {
            if (shown++ < max) fprintf(stderr, "  +%ld: %s\n", j + 1, safe(r, b.v[j], 200));
            j++, changed++;
        }
    }
#undef AT
    if (shown > max) fprintf(stderr, "  ... and %ld more changed lines\n", shown - max);
    free(L);
    dr_vec_free(&a);
    dr_vec_free(&b);
    return changed;
}

typedef struct {
    Rerun *r;
    DrStrVec path, role, blob;
} Files;

static int file_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Files *f = ud;
    if (n < 3 || !v[0] || !v[1] || !v[2]) return 0;
    dr_vec_push(&f->path, dr_arena_strdup(&f->r->arena, v[0]));
    dr_vec_push(&f->role, dr_arena_strdup(&f->r->arena, v[1]));
    dr_vec_push(&f->blob, dr_arena_strdup(&f->r->arena, v[2]));
    return 0;
}

static int load_files(Rerun *r, Files *f, DrError *err) {
    f->r = r;
    return dr_trace_query(r->t, "SELECT path, role, blob_id FROM v_files"
                          " WHERE role IN ('script', 'main', 'source') ORDER BY rowid", file_row,
                          f, err);
}

static void free_files(Files *f) {
    dr_vec_free(&f->path);
    dr_vec_free(&f->role);
    dr_vec_free(&f->blob);
}

/* Compares each stored source with the file at its recorded path; says
 * which changed (and, for the script, which lines). */
static void check_sources(Rerun *r, Files *f) {
    for (long i = 0; i < f->path.n; i++) {
        char *abs = dr_path_normalize(&r->arena, r->cwd, f->path.v[i]);
        if (!abs) continue;
        size_t curlen = 0, oldlen = 0;
        char *cur = read_file(abs, &curlen);
        if (!cur) continue; /* gone: the run will say so if it matters */
        void *old = NULL;
        if (dr_trace_read_blob(r->t, atoll(f->blob.v[i]), 64u << 20, &old, &oldlen, NULL) ==
                DR_OK &&
            (oldlen != curlen || memcmp(old, cur, curlen) != 0)) {
            int script = strcmp(f->role.v[i], "source") != 0;
            note(r, "%s changed since it was recorded%s", f->path.v[i],
                 script ? "; its changed lines:" : "");
            long nl = script ? line_diff(r, f->path.v[i], old, oldlen, cur, curlen, 20) : 0;
            char buf[600];
            if (script)
                snprintf(buf, sizeof buf, "%.500s (%ld line%s)", f->path.v[i], nl,
                         nl == 1 ? "" : "s");
            else
                snprintf(buf, sizeof buf, "%.500s", f->path.v[i]);
            dr_vec_push(&r->changed, dr_arena_strdup(&r->arena, buf));
        }
        free(old);
        free(cur);
    }
}

static int mkdirs(char *path) {
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        int rc = mkdir(path, 0700);
        *p = '/';
        if (rc != 0 && errno != EEXIST) return -1;
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

static int has_dotdot(const char *s) {
    for (const char *p = s; (p = strstr(p, "..")); p += 2)
        if ((p == s || p[-1] == '/') && (p[2] == 0 || p[2] == '/')) return 1;
    return 0;
}

/* --from-trace: writes the stored sources under r->tmpdir and sets
 * run_cwd and run_target.  Returns 0, or an exit status after saying why. */
static int lay_out(Rerun *r, Files *f) {
    if (!r->cwd || r->cwd[0] != '/') {
        fprintf(stderr, "dynrec rerun: %s records no absolute working directory; cannot lay "
                        "out its sources\n", dr_trace_path(r->t));
        return DR_EX_DATAERR;
    }
    for (long i = 0; i < f->path.n; i++)
        if (has_dotdot(f->path.v[i]) || strchr(f->path.v[i], '\n')) {
            fprintf(stderr, "dynrec rerun: refusing %s: its stored file name '%s' would "
                            "escape the temporary directory\n",
                    dr_trace_path(r->t), safe(r, f->path.v[i], 300));
            return DR_EX_DATAERR;
        }
    if (r->script && has_dotdot(r->script)) {
        fprintf(stderr, "dynrec rerun: refusing %s: its script name '%s' would escape the "
                        "temporary directory\n", dr_trace_path(r->t), safe(r, r->script, 300));
        return DR_EX_DATAERR;
    }
    /* The directory holding both the cwd and the script. */
    char *cwd = dr_path_normalize(&r->arena, NULL, r->cwd);
    char *root = cwd ? dr_arena_strdup(&r->arena, cwd) : NULL;
    if (!root) return 1;
    if (r->script) {
        char *sabs = dr_path_normalize(&r->arena, cwd, r->script);
        if (!sabs) return 1;
        for (;;) {
            size_t rl = strlen(root);
            if (rl == 1 || (strncmp(sabs, root, rl) == 0 && sabs[rl] == '/')) break;
            char *slash = strrchr(root, '/');
            if (slash == root) slash[1] = 0;
            else *slash = 0;
        }
    }
    size_t rl = strlen(root) == 1 ? 0 : strlen(root);
    long written = 0;
    for (long i = 0; i < f->path.n; i++) {
        char *abs = dr_path_normalize(&r->arena, cwd, f->path.v[i]);
        if (!abs) return 1;
        if (strncmp(abs, root, rl) != 0 || abs[rl] != '/') {
            r->left_out++;
            continue;
        }
        char *dest = NULL;
        if (asprintf(&dest, "%s%s", r->tmpdir, abs + rl) < 0) return 1;
        char *slash = strrchr(dest, '/');
        *slash = 0;
        int ok = mkdirs(dest) == 0;
        *slash = '/';
        void *data = NULL;
        size_t len = 0;
        DrError err = {0};
        if (ok && dr_trace_read_blob(r->t, atoll(f->blob.v[i]), 64u << 20, &data, &len, &err) !=
                      DR_OK) {
            fprintf(stderr, "dynrec rerun: %s\n", err.msg);
            ok = 0;
        }
        int fd = ok ? open(dest, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
        if (fd < 0 && ok && errno == EEXIST) { /* stored twice: the first one stands */
            free(data);
            free(dest);
            continue;
        }
        ok = fd >= 0 && write(fd, data, len) == (ssize_t)len;
        if (fd >= 0 && close(fd) != 0) ok = 0;
        free(data);
        if (!ok) {
            fprintf(stderr, "dynrec rerun: cannot write %s: %s\n", safe(r, dest, 0),
                    strerror(errno));
            free(dest);
            return 1;
        }
        free(dest);
        written++;
    }
    char *rcwd = NULL;
    if (asprintf(&rcwd, "%s%s", r->tmpdir, cwd + rl) < 0) return 1;
    r->run_cwd = dr_arena_strdup(&r->arena, rcwd);
    int mk = mkdirs(rcwd);
    free(rcwd);
    if (mk != 0 || !r->run_cwd) return 1;
    r->run_target = r->module;
    if (r->script) {
        /* Always the laid-out copy: an absolute recorded path would name
         * the file on disk, not the one the trace stores. */
        char *sabs = dr_path_normalize(&r->arena, cwd, r->script), *copy = NULL;
        if (!sabs || asprintf(&copy, "%s%s", r->tmpdir, sabs + rl) < 0) return 1;
        r->run_target = dr_arena_strdup(&r->arena, copy);
        free(copy);
        struct stat sb;
        if (!r->run_target || stat(r->run_target, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            fprintf(stderr, "dynrec rerun: %s does not store its script %s; nothing to run "
                            "from the trace\n", dr_trace_path(r->t), safe(r, r->script, 300));
            return DR_EX_DATAERR;
        }
    }
    note(r, "running the %ld file%s stored in the trace from %s%s", written,
         written == 1 ? "" : "s", r->tmpdir,
         r->left_out ? " (files outside the script's directory left out)" : "");
    return 0;
}

/* A private (0700) directory for this re-run in r->tmpdir, removed at the
 * end; 0, or -1 after saying why. */
static int make_tmpdir(Rerun *r, const char *what) {
    const char *base = getenv("TMPDIR");
    char *tmpl = NULL;
    if (asprintf(&tmpl, "%s/dynrec-%s-XXXXXX", base && *base == '/' ? base : "/tmp", what) < 0)
        return -1;
    if (!mkdtemp(tmpl)) {
        fprintf(stderr, "dynrec %s: cannot make a temporary directory %s: %s\n", what, tmpl,
                strerror(errno));
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

/* Puts a NULL after the last element (not counted), for exec. */
static int terminate(DrStrVec *v) {
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
    Rerun *r;
    DrStrVec *env;
} EnvCtx;

/* Adds NAME=VALUE (kept in r's arena) to env. */
static void push_env(Rerun *r, DrStrVec *env, const char *name, const char *value) {
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
    push_env(c->r, c->env, v[0], v[1]);
    return 0;
}

static int build_env(Rerun *r, DrStrVec *env, DrError *err) {
    for (char **e = environ; *e; e++)
        if (!dr_run_is_recorded_env(*e) || keep_callers(*e)) dr_vec_push(env, *e);
    EnvCtx c = {r, env};
    int rc = dr_trace_query(r->t,
                            "SELECT substr(key, 5), value FROM meta WHERE key LIKE 'env.%'"
                            " ORDER BY key", env_row, &c, err);
    return terminate(env) == 0 ? rc : DR_ERR_NOMEM;
}

/* The environment of a replay: the caller's, minus what the recording
 * set, plus the recorded variables that can change Dynamo's decisions and
 * can neither name a path nor make Python import or run something (a
 * recorded PYTHONWARNINGS imports a module, TORCH_LOGS_OUT appends to any
 * file, TORCHINDUCTOR_CACHE_DIR makes directories).  The rule is an
 * allow-list: a name of torch's or a thread library's, no path-like word
 * in it, and a short plain value. */
static int replay_env_ok(const char *name, const char *value) {
    static const char *const prefixes[] = {"TORCH", "PYTORCH", "OMP_", "MKL_", "KMP_",
                                           "OPENBLAS_"};
    static const char *const words[] = {"DIR", "PATH", "FILE", "OUT", "CACHE", "TRACE", "HOME",
                                        "ROOT", "LIB", "LOAD", "CMD", "EXE", "CXX", "CC",
                                        "COMPILER", "PLUGIN", "SCRIPT", "HOOK", "MODULE",
                                        "IMPORT", "PREFIX", "SOCK", "ADDR", "HOST", "PORT",
                                        "URL"};
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
    Rerun *r;
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
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
                    plain = 0;
            dr_buf_printf(&c->names, "%s%s", c->names.len ? ", " : "",
                          c->left_out > 5 ? "..." : plain ? v[0] : "(a name with odd bytes)");
        }
        return 0;
    }
    push_env(c->r, c->env, v[0], v[1]);
    return 0;
}

/* The caller's variables a replay keeps: which venv, the loader's and the
 * sanitizers' settings, dynrec's own, the locale and the terminal; with
 * confined, PATH and HOME are the sandbox's, not the caller's. */
static int replay_keeps(const char *e, int confined) {
    static const char *const keep[] = {"VIRTUAL_ENV=", "LD_LIBRARY_PATH=", "LD_PRELOAD=",
                                       "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=",
                                       "DYNREC", "LANG=", "LC_", "TERM=", "NO_COLOR=", "TZ=",
                                       "COLUMNS=", "LINES="};
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
        if (strncmp(e, keep[i], strlen(keep[i])) == 0) return 1;
    if (!confined && (strncmp(e, "PATH=", 5) == 0 || strncmp(e, "HOME=", 5) == 0 ||
                      strncmp(e, "TMPDIR=", 7) == 0 || strncmp(e, "USER=", 5) == 0 ||
                      strncmp(e, "LOGNAME=", 8) == 0))
        return 1;
    return 0;
}

static int replay_env(Rerun *r, DrStrVec *env, int confined, int trust, DrBuf *left_out,
                      DrError *err) {
    for (char **e = environ; *e; e++)
        if (replay_keeps(*e, confined)) dr_vec_push(env, *e);
    if (confined) {
        dr_vec_push(env, "PATH=/usr/bin:/bin");
        dr_vec_push(env, "HOME=/tmp");
        dr_vec_push(env, "USER=replay");
        dr_vec_push(env, "DYNREC_REPLAY_SANDBOXED=1");
    }
    if (trust) dr_vec_push(env, "DYNREC_REPLAY_TRUST=1");
    ReplayEnvCtx c = {r, env, 0, {0}};
    int rc = dr_trace_query(r->t,
                            "SELECT substr(key, 5), value FROM meta WHERE key LIKE 'env.%'"
                            " ORDER BY key", replay_env_row, &c, err);
    *left_out = c.names;
    return terminate(env) == 0 ? rc : DR_ERR_NOMEM;
}

/* ---- --set, checked by the venv's Python before anything runs ------------- */

static const char CHECK_SET_PY[] =
    "import ast, difflib, sys\n"
    "import torch._dynamo.config as d\n"
    "import torch._inductor.config as i\n"
    "bad = 0\n"
    "for arg in sys.argv[1:]:\n"
    "    name, _, text = arg.partition('=')\n"
    "    ind = name.startswith('inductor.')\n"
    "    mod, short, pre = (i, name[9:], 'inductor.') if ind else (d, name, '')\n"
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

static int check_sets(const DrRerunOptions *o) {
    char *python = dr_run_choose_python();
    if (!python) {
        fprintf(stderr, "dynrec rerun: no virtualenv Python to check --set with; set "
                        "VIRTUAL_ENV\n");
        return DR_EX_USAGE;
    }
    char **argv = calloc((size_t)o->nset + 4, sizeof *argv);
    if (!argv) return 1;
    argv[0] = python;
    argv[1] = "-c";
    argv[2] = (char *)CHECK_SET_PY;
    for (int i = 0; i < o->nset; i++) argv[3 + i] = o->set[i];
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
                fprintf(stderr, "dynrec rerun: --set %s\n", line);
        } else {
            fprintf(stderr, "dynrec rerun: cannot check --set with %s (it failed to import "
                            "torch)\n", python);
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

/* A trace recorded with another Python minor version than this dynrec
 * embeds (marshalled code and bytecode are per minor version): says so for
 * `dynrec CMD` and returns 1; 0 when the versions agree or are unknown. */
static int other_python(const char *cmd, const char *verb, const char *trace,
                        const char *recorded) {
    int rmaj, rmin, maj, min;
    if (python_minor(recorded, &rmaj, &rmin) != 0 ||
        python_minor(dr_run_python_version(), &maj, &min) != 0 || (rmaj == maj && rmin == min))
        return 0;
    fprintf(stderr, "dynrec %s: %s was recorded with Python %d.%d; this dynrec runs Python "
                    "%d.%d: %s it with a dynrec built for Python %d.%d\n",
            cmd, trace, rmaj, rmin, maj, min, verb, rmaj, rmin);
    return 1;
}

static char *default_out(Rerun *r, const char *trace) {
    const char *base = strrchr(trace, '/');
    base = base ? base + 1 : trace;
    size_t stem = strlen(base);
    if (stem > 3 && strcmp(base + stem - 3, ".db") == 0) stem -= 3;
    for (int i = 1; i < 10000; i++) {
        char buf[4200];
        if (i == 1) snprintf(buf, sizeof buf, "%.*s-rerun.db", (int)(stem > 200 ? 200 : stem), base);
        else snprintf(buf, sizeof buf, "%.*s-rerun-%d.db", (int)(stem > 200 ? 200 : stem), base, i);
        if (access(buf, F_OK) != 0) return dr_arena_strdup(&r->arena, buf);
    }
    return NULL;
}

static char *absolute(Rerun *r, const char *path) {
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

/* Opens the recording and loads its decisions (a file that cannot be
 * compared is refused before anything runs); says why not and returns 65. */
static int load_recording(const char *what, const char *path, DrTrace **t, DrModel **m) {
    DrError err = {0};
    *t = dr_trace_open(path, &err);
    if (*t) *m = dr_model_load(*t, &err);
    if (!*t || !*m) {
        fprintf(stderr, "dynrec %s: %s\n", what, err.msg);
        return DR_EX_DATAERR;
    }
    return 0;
}

/* Opens the trace a child wrote and loads its decisions; says why not
 * (what: "rerun", "replay"; run: "re-run", "replay") and returns 65. */
static int load_result(const char *what, const char *run, const char *path, DrTrace **nt,
                       DrModel **mb) {
    DrError err = {0};
    *nt = dr_trace_open(path, &err);
    if (!*nt) {
        fprintf(stderr, "dynrec %s: the %s left no readable trace: %s\n", what, run, err.msg);
        return DR_EX_DATAERR;
    }
    if (!(*mb = dr_model_load(*nt, &err))) {
        fprintf(stderr, "dynrec %s: %s\n", what, err.msg);
        return DR_EX_DATAERR;
    }
    return 0;
}

/* Runs `dynrec run -q -o out --rerun-of trace [--set ...] target args` in
 * run_cwd with env; returns its wait status, or -1. */
static int move_out(const char *from, const char *to);

static int run_child(Rerun *r, const DrRerunOptions *o, const DrSandbox *sb, const char *out,
                     const char *trace, const char *label, DrStrVec *env) {
    DrStrVec argv = {0};
    dr_vec_push(&argv, "dynrec");
    dr_vec_push(&argv, "run");
    dr_vec_push(&argv, "-q");
    dr_vec_push(&argv, "-o");
    dr_vec_push(&argv, (char *)out);
    dr_vec_push(&argv, "--rerun-of");
    dr_vec_push(&argv, (char *)trace);
    dr_vec_push(&argv, "--trace-label");
    dr_vec_push(&argv, (char *)label);
    if (sb) {
        dr_vec_push(&argv, "--sandboxed");
        dr_vec_push(&argv, (char *)dr_sandbox_mode_name(sb->mode));
    }
    for (int i = 0; i < o->nset; i++) {
        dr_vec_push(&argv, "--set");
        dr_vec_push(&argv, o->set[i]);
    }
    if (r->module) dr_vec_push(&argv, "-m");
    else dr_vec_push(&argv, "--");
    dr_vec_push(&argv, r->run_target);
    for (long i = 0; i < r->args.n; i++) dr_vec_push(&argv, r->args.v[i]);
    if (terminate(&argv) != 0) {
        dr_vec_free(&argv);
        return -1;
    }
    /* With --json the report owns stdout: the program writes to stderr. */
    int st = -1;
    if (sb) {
        DrStrVec bw = {0};
        if (dr_sandbox_argv(&r->arena, sb, argv.v, &bw) == 0 && terminate(&bw) == 0)
            st = spawn_confined(sb->bwrap, bw.v, env->v, o->json);
        dr_vec_free(&bw);
    } else {
        st = spawn_wait("rerun", o->self, argv.v, env->v, r->run_cwd, o->json);
    }
    dr_vec_free(&argv);
    return st;
}

static void report_header(Rerun *r, FILE *out, const char *trace, const char *newpath,
                          const DrRerunOptions *o, const char *new_torch, int st,
                          const DrDiff *d) {
    fputs("rerun of ", out);
    fputs(trace, out);
    fputs(" -> ", out);
    fputs(newpath, out);
    fputc('\n', out);
    if (r->torch_version && new_torch && strcmp(r->torch_version, new_torch) != 0)
        fprintf(out, "  recorded on torch %s, re-run on %s\n", safe(r, r->torch_version, 100),
                safe(r, new_torch, 100));
    for (int i = 0; i < o->nset; i++) fprintf(out, "  --set %s\n", o->set[i]);
    for (long i = 0; i < r->notes.n; i++) fprintf(out, "  %s\n", r->notes.v[i]);
    if (WIFEXITED(st))
        fprintf(out, "  the program exited with %d (recorded: %s)\n", WEXITSTATUS(st),
                safe(r, r->exit_status ? r->exit_status : "?", 40));
    else if (WIFSIGNALED(st))
        fprintf(out, "  the program was killed by signal %d\n", WTERMSIG(st));
    if (dr_diff_count(d, DR_CAT_OUTPUT))
        fputs("  the program's own output differs from the recording's (see output below)\n", out);
    fputs("  not made deterministic: wall-clock reads, thread timing, files or network the "
          "program reads\n", out);
}

static void json_header(Rerun *r, FILE *out, const char *trace, const char *newpath,
                        const DrRerunOptions *o, const char *new_torch, int st);

int dr_rerun(const DrRerunOptions *o) {
    Rerun R = {0}, *r = &R;
    Files files = {0};
    DrStrVec env = {0};
    DrTrace *nt = NULL;
    DrModel *ma = NULL, *mb = NULL;
    DrDiff *d = NULL;
    int rc = 1;
    DrError err = {0};
    char sbx_dir[4096] = ""; /* a confined re-run's snapshot and output */
    char *python = NULL;

    /* The recording's decisions are read first; the run facts come with them. */
    if ((rc = load_recording("rerun", o->trace, &r->t, &ma)) != 0) goto done;
    rc = 1;
    r->cwd = ma->cwd;
    r->script = ma->script;
    r->module = ma->module;
    r->python_version = ma->python_version;
    r->torch_version = ma->torch_version;
    r->exit_status = ma->exit_status;
    char *argv_json = meta(r, "argv");
    if ((!r->script && !r->module) || !r->cwd || !argv_json ||
        parse_string_array(&r->arena, argv_json, &r->args) != 0) {
        fprintf(stderr, "dynrec rerun: %s does not record a command to re-run (script, cwd and "
                        "argv in meta); record one with 'dynrec run'\n", o->trace);
        rc = DR_EX_DATAERR;
        goto done;
    }
    if (other_python("rerun", "re-run", o->trace, r->python_version)) {
        rc = DR_EX_UNAVAILABLE;
        goto done;
    }
    /* dynrec.record/start in a running program (recorder/inproc.c): the
     * trace holds part of a run, a re-run would record all of it. */
    char *by = meta(r, "recorded_by");
    if (by && strcmp(by, "in-process") == 0) {
        fprintf(stderr, "dynrec rerun: %s was recorded in process (dynrec.record): it holds part "
                        "of a run, and a re-run records the whole program; nothing was run. "
                        "Replay its compiles with 'dynrec replay %s', or run the program again "
                        "and compare the two traces with 'dynrec diff'\n", o->trace, o->trace);
        rc = DR_EX_USAGE;
        goto done;
    }
    if (o->from_trace && !o->trust) {
        fprintf(stderr, "dynrec rerun: --from-trace runs the code stored in %s; nothing was run. "
                        "If you trust where the file came from, add --trust\n", o->trace);
        rc = DR_EX_NOPERM;
        goto done;
    }
    /* A re-run executes the recorded command line and environment, which
     * whoever wrote the file chose (`-m timeit -s CODE` runs CODE): only a
     * trace this user recorded here runs without --trust (sign.h). */
    DrSigState sig = dr_trace_signature(r->t);
    if (sig != DR_SIG_OWN && !o->trust) {
        fprintf(stderr, "dynrec rerun: %s was not recorded by you here (%s): a re-run executes "
                        "its recorded command line and environment; nothing was run. If you "
                        "trust where the file came from, add --trust\n", o->trace,
                dr_sig_text(sig));
        rc = DR_EX_NOPERM;
        goto done;
    }
    /* Confined: what came in the trace (--from-trace), or a stranger's
     * command line.  Where bubblewrap cannot confine it here, --trust (which
     * both need) runs it unconfined, said so. */
    int foreign = sig != DR_SIG_OWN;
    DrSandbox box = {0};
    char sbx_why[400] = "", copy[4200] = "", child_out[4200] = "";
    const char *run_of = NULL;
    if ((o->from_trace || foreign) && !o->no_sandbox) {
        char *bwrap = dr_sandbox_probe(sbx_why, sizeof sbx_why);
        if (bwrap) {
            box.bwrap = dr_arena_strdup(&r->arena, bwrap);
            free(bwrap);
        } else {
            note(r, "running unconfined (--trust): the re-run cannot be confined here: %s",
                 sbx_why);
        }
    }
    if (box.bwrap) {
        /* One validated snapshot, as replay makes: the child reads it. */
        const char *base = getenv("TMPDIR");
        snprintf(sbx_dir, sizeof sbx_dir, "%s/dynrec-sandbox-XXXXXX",
                 base && *base == '/' ? base : "/tmp");
        if (!mkdtemp(sbx_dir)) {
            fprintf(stderr, "dynrec rerun: cannot make a temporary directory %s: %s\n", sbx_dir,
                    strerror(errno));
            sbx_dir[0] = 0;
            goto done;
        }
        snprintf(copy, sizeof copy, "%s/in", sbx_dir);
        snprintf(child_out, sizeof child_out, "%s/out", sbx_dir);
        if (mkdir(copy, 0700) != 0 || mkdir(child_out, 0700) != 0) goto done;
        box.in_dir = dr_arena_strdup(&r->arena, copy);
        box.out_dir = dr_arena_strdup(&r->arena, child_out);
        snprintf(copy, sizeof copy, "%s/in/trace.db", sbx_dir);
        snprintf(child_out, sizeof child_out, "%s/out/rerun.db", sbx_dir);
        if (dr_trace_snapshot(r->t, copy, &err) != DR_OK) {
            fprintf(stderr, "dynrec rerun: %s\n", err.msg);
            rc = DR_EX_DATAERR;
            goto done;
        }
        run_of = copy;
        note(r, "sandbox: %s", dr_sandbox_mode_desc(DR_SBX_RERUN));
        box.self = o->self;
        box.mode = DR_SBX_RERUN;
        box.python = python = dr_run_choose_python();
    }
    if (o->nset && (rc = check_sets(o)) != 0) goto done;
    if (load_files(r, &files, &err) != DR_OK) {
        fprintf(stderr, "dynrec rerun: %s\n", err.msg);
        rc = DR_EX_DATAERR;
        goto done;
    }
    const char *outp = o->out ? o->out : default_out(r, o->trace);
    char *newpath = outp ? absolute(r, outp) : NULL;
    char *tracepath = absolute(r, o->trace);
    if (!newpath || !tracepath) {
        fprintf(stderr, "dynrec rerun: cannot name the new trace; give one with -o\n");
        goto done;
    }
    if (o->from_trace) {
        if (make_tmpdir(r, "rerun") != 0) goto done;
        if ((rc = lay_out(r, &files)) != 0) goto done;
    } else {
        struct stat sb;
        r->run_target = r->module ? r->module : r->script;
        if (stat(r->cwd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            r->run_cwd = r->cwd;
        } else {
            if (make_tmpdir(r, "rerun") != 0) goto done;
            r->run_cwd = r->tmpdir;
            note(r, "the recorded directory %s is gone; running in %s", r->cwd, r->tmpdir);
        }
        if (r->script) {
            char *abs = dr_path_normalize(&r->arena, r->cwd, r->script);
            if (!abs || access(abs, R_OK) != 0) {
                fprintf(stderr, "dynrec rerun: the recorded script %s is not there (%s); to run "
                                "the copy stored in the trace, use --from-trace --trust\n",
                        safe(r, abs ? abs : r->script, 0), strerror(errno));
                rc = DR_EX_NOINPUT;
                goto done;
            }
            if (r->run_cwd != r->cwd) r->run_target = abs;
        }
        check_sources(r, &files);
    }
    /* A stranger's recorded environment passes the replay's allow-list
     * only (no paths, nothing that makes Python import). */
    DrBuf left = {0};
    int erc = foreign ? replay_env(r, &env, box.bwrap != NULL, 0, &left, &err)
                      : build_env(r, &env, &err);
    if (erc == DR_OK && left.len)
        fprintf(stderr, "dynrec rerun: recorded environment left out (it could name a path or "
                        "make Python import): %s\n", left.s);
    dr_buf_free(&left);
    if (erc != DR_OK) {
        fprintf(stderr, "dynrec rerun: %s\n", err.msg);
        rc = DR_EX_DATAERR;
        goto done;
    }
    if (box.bwrap) {
        /* The laid-out sources are the run's, writable; a stranger's
         * recorded folder on this disk is read-only, with the script's. */
        box.run_dir = o->from_trace ? r->tmpdir : r->run_cwd;
        box.run_dir_rw = o->from_trace || r->run_cwd == r->tmpdir;
        box.cwd = r->run_cwd;
        if (r->script && r->run_target && r->run_target[0] == '/') {
            char *dir = dr_arena_strdup(&r->arena, r->run_target);
            char *slash = dir ? strrchr(dir, '/') : NULL;
            if (slash && slash != dir) *slash = 0;
            box.also_ro = dir;
        }
    }
    int st = run_child(r, o, box.bwrap ? &box : NULL, box.bwrap ? child_out : newpath,
                       run_of ? run_of : tracepath, tracepath, &env);
    if (st == -1 || (WIFEXITED(st) && WEXITSTATUS(st) == 127)) {
        fprintf(stderr, "dynrec rerun: the re-run could not start\n");
        rc = 1;
        goto done;
    }
    if (box.bwrap && (access(child_out, F_OK) != 0 || move_out(child_out, newpath) != 0)) {
        fprintf(stderr, "dynrec rerun: the confined re-run left no trace%s\n",
                WIFSIGNALED(st) ? " (killed by a signal)" : "");
        rc = 1;
        goto done;
    }
    if ((rc = load_result("rerun", "re-run", newpath, &nt, &mb)) != 0) goto done;
    rc = 1;
    DrCompareOptions co = {.label_a = o->trace, .label_b = newpath, .ignore = o->ignore};
    if (!(d = dr_compare(ma, mb, &co, &err))) {
        fprintf(stderr, "dynrec rerun: %s\n", err.msg);
        goto done;
    }
    char *new_torch = NULL;
    dr_trace_get_meta(nt, "torch_version", &new_torch, NULL);
    if (o->json) {
        fputs("{\n  ", stdout);
        json_header(r, stdout, o->trace, newpath, o, new_torch, st);
        dr_diff_print_json_fields(d, stdout);
        fputs("\n}\n", stdout);
    } else {
        report_header(r, stdout, o->trace, newpath, o, new_torch, st, d);
        dr_diff_print(d, stdout, 0);
    }
    free(new_torch);
    rc = dr_diff_identical(d) ? 0 : 1;
    if (fflush(stdout) != 0) rc = 1;
done:
    if (r->tmpdir) nftw(r->tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (sbx_dir[0]) nftw(sbx_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(python);
    dr_diff_free(d);
    dr_model_free(mb);
    dr_model_free(ma);
    dr_trace_free(nt);
    free_files(&files);
    dr_vec_free(&env);
    dr_vec_free(&r->args);
    dr_vec_free(&r->notes);
    dr_vec_free(&r->changed);
    dr_trace_free(r->t);
    dr_arena_free(&r->arena);
    return rc;
}

#include "../schema/json.h"

static void json_header(Rerun *r, FILE *out, const char *trace, const char *newpath,
                        const DrRerunOptions *o, const char *new_torch, int st) {
    fputs("\"rerun\": {\"of\": ", out);
    dr_json_string(out, trace);
    fputs(", \"trace\": ", out);
    dr_json_string(out, newpath);
    fputs(", \"recorded_torch\": ", out);
    dr_json_string(out, r->torch_version);
    fputs(", \"torch\": ", out);
    dr_json_string(out, new_torch);
    fputs(", \"set\": [", out);
    for (int i = 0; i < o->nset; i++) {
        if (i) fputs(", ", out);
        dr_json_string(out, o->set[i]);
    }
    fputs("], \"changed_sources\": [", out);
    for (long i = 0; i < r->changed.n; i++) {
        if (i) fputs(", ", out);
        dr_json_string(out, r->changed.v[i]);
    }
    fputs("], \"notes\": [", out);
    for (long i = 0; i < r->notes.n; i++) {
        if (i) fputs(", ", out);
        dr_json_string(out, r->notes.v[i]);
    }
    fprintf(out, "], \"exit_status\": %d, \"recorded_exit_status\": ",
            WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    dr_json_string(out, r->exit_status);
    fputs("},\n  ", out);
}

/* ---- dynrec replay -------------------------------------------------------------- */

/* The comparison's key of a frame of m ("file\x1fqualname\x1fline", file
 * relative to m's root) from the absolute file name a replay recorded;
 * *rel gets the relative name.  NULL when out of memory. */
static char *frame_key(Rerun *r, DrModel *m, const char *file, const char *qual,
                       const char *line, char **rel) {
    *rel = dr_model_relname(m, &r->arena, file);
    if (!*rel) return NULL;
    char key[8192];
    return dr_arena_strdup(&r->arena, dr_frame_key(key, sizeof key, *rel, qual, atol(line)));
}

typedef struct {
    Rerun *r;
    DrModel *m;
    DrStrVec keys, reasons, names;
} Skips;

static int skip_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Skips *s = ud;
    char *rel, *key;
    if (n < 4 || !v[0] || !v[1] || !v[2] || !(key = frame_key(s->r, s->m, v[0], v[1], v[2], &rel)))
        return 0;
    dr_vec_push(&s->keys, key);
    dr_vec_push(&s->reasons, dr_arena_strdup(&s->r->arena, v[3] ? v[3] : "?"));
    char name[700];
    snprintf(name, sizeof name, "%.300s (%.300s:%ld)", v[1], rel, atol(v[2]));
    dr_vec_push(&s->names, dr_arena_strdup(&s->r->arena, name));
    return 0;
}

/* Frame keys of a that --frame / --compile did not choose: every frame of
 * a whose key is not among the replay's chosen ones (meta replay.frames). */
typedef struct {
    Rerun *r;
    DrModel *m;
    DrMap chosen;
    long max_captures;
} Chosen;

static int chosen_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Chosen *c = ud;
    char *rel, *key;
    if (n < 4 || !v[0] || !v[1] || !v[2] || !(key = frame_key(c->r, c->m, v[0], v[1], v[2], &rel)))
        return 0;
    dr_map_put(&c->chosen, key, 1);
    long k = v[3] ? atol(v[3]) : 0;
    if (k > c->max_captures) c->max_captures = k;
    return 0;
}

/* Sources must be on disk at their recorded paths with their recorded text
 * for a replay without --trust; the first that is not is named in *why. */
static int sources_on_disk(Rerun *r, Files *f, char *why, size_t whylen) {
    if (f->path.n == 0) {
        /* Nothing to check is not a check passed: the frames would be
         * library functions named by the trace. */
        snprintf(why, whylen, "the trace stores no sources to check against this disk");
        return 0;
    }
    for (long i = 0; i < f->path.n; i++) {
        char *abs = dr_path_normalize(&r->arena, r->cwd, f->path.v[i]);
        size_t curlen = 0, oldlen = 0;
        char *cur = abs ? read_file(abs, &curlen) : NULL;
        if (!cur) {
            snprintf(why, whylen, "%s is not on disk", safe(r, abs ? abs : f->path.v[i], 300));
            return 0;
        }
        void *old = NULL;
        int same = dr_trace_read_blob(r->t, atoll(f->blob.v[i]), 64u << 20, &old, &oldlen,
                                      NULL) == DR_OK &&
                   oldlen == curlen && memcmp(old, cur, curlen) == 0;
        free(old);
        free(cur);
        if (!same) {
            snprintf(why, whylen, "%s differs from the copy in the trace", safe(r, abs, 300));
            return 0;
        }
    }
    return 1;
}

static char *replay_out(Rerun *r, const char *trace) {
    const char *base = strrchr(trace, '/');
    base = base ? base + 1 : trace;
    size_t stem = strlen(base);
    if (stem > 3 && strcmp(base + stem - 3, ".db") == 0) stem -= 3;
    if (stem > 200) stem = 200;
    for (int i = 1; i < 10000; i++) {
        char buf[300];
        if (i == 1) snprintf(buf, sizeof buf, "%.*s-replay.db", (int)stem, base);
        else snprintf(buf, sizeof buf, "%.*s-replay-%d.db", (int)stem, base, i);
        if (access(buf, F_OK) != 0) return dr_arena_strdup(&r->arena, buf);
    }
    return NULL;
}

/* Runs `dynrec run -q -o out --replay-of copy --trace-label trace ...`,
 * confined by sb unless it is NULL; returns its wait status, or -1. */
static int run_replay_child(Rerun *r, const DrReplayOptions *o, const DrSandbox *sb,
                            const char *out, const char *copy, const char *trace, DrStrVec *env) {
    DrStrVec argv = {0};
    const char *fixed[] = {"dynrec", "run", "-q", "-o", out, "--replay-of", copy,
                           "--trace-label", trace};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) dr_vec_push(&argv, (char *)fixed[i]);
    if (sb) {
        dr_vec_push(&argv, "--sandboxed");
        dr_vec_push(&argv, (char *)dr_sandbox_mode_name(sb->mode));
    }
    for (int i = 0; i < o->nset; i++) {
        dr_vec_push(&argv, "--set");
        dr_vec_push(&argv, o->set[i]);
    }
    const char *opt[3][2] = {{"--replay-backend", o->backend},
                             {"--replay-frame", o->frame},
                             {"--replay-compile", o->compile}};
    for (int i = 0; i < 3; i++)
        if (opt[i][1]) {
            dr_vec_push(&argv, (char *)opt[i][0]);
            dr_vec_push(&argv, (char *)opt[i][1]);
        }
    if (terminate(&argv) != 0) {
        dr_vec_free(&argv);
        return -1;
    }
    int st = -1;
    if (sb) {
        DrStrVec bw = {0};
        if (dr_sandbox_argv(&r->arena, sb, argv.v, &bw) == 0 && terminate(&bw) == 0)
            st = spawn_confined(sb->bwrap, bw.v, env->v, 1);
        dr_vec_free(&bw);
    } else {
        st = spawn_wait("replay", o->self, argv.v, env->v, NULL, 1);
    }
    dr_vec_free(&argv);
    return st;
}

/* Moves the confined child's trace (out_dir/replay.db) to where the user
 * asked for it; 0, or -1 after saying why. */
static int move_out(const char *from, const char *to) {
    if (rename(from, to) == 0) return 0;
    if (errno != EXDEV) {
        fprintf(stderr, "dynrec replay: cannot write %s: %s\n", to, strerror(errno));
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
        fprintf(stderr, "dynrec replay: cannot write %s: %s\n", to, strerror(errno));
        unlink(to);
        return -1;
    }
    return 0;
}

int dr_replay(const DrReplayOptions *o) {
    Rerun R = {0}, *r = &R;
    Files files = {0};
    DrStrVec env = {0};
    Skips sk = {0};
    Chosen ch = {0};
    DrTrace *nt = NULL;
    DrModel *ma = NULL, *mb = NULL;
    DrDiff *d = NULL;
    int rc = 1;
    DrError err = {0};
    char *new_torch = NULL, *notes = NULL;
    DrSandbox sb = {0};
    char sandbox_desc[500] = "none", in_dir[4200];
    char *python = dr_run_choose_python();

    if ((rc = load_recording("replay", o->trace, &r->t, &ma)) != 0) goto done;
    rc = 1;
    /* One validated snapshot: from here on every read, the checks below
     * and the child's, is of a private copy made after the trace was
     * validated, never the user's file again (which could change under
     * us, or read differently through a view). */
    char copy[4096], out_dir[4096];
    if (make_tmpdir(r, "replay") != 0) goto done;
    snprintf(copy, sizeof copy, "%s/in", r->tmpdir);
    snprintf(out_dir, sizeof out_dir, "%s/out", r->tmpdir);
    if (mkdir(copy, 0700) != 0 || mkdir(out_dir, 0700) != 0) {
        fprintf(stderr, "dynrec replay: cannot make %s: %s\n", copy, strerror(errno));
        goto done;
    }
    snprintf(copy, sizeof copy, "%s/in/trace.db", r->tmpdir);
    if (dr_trace_snapshot(r->t, copy, &err) != DR_OK) {
        fprintf(stderr, "dynrec replay: %s\n", err.msg);
        rc = DR_EX_DATAERR;
        goto done;
    }
    dr_model_free(ma);
    ma = NULL;
    dr_trace_free(r->t);
    r->t = NULL;
    if ((rc = load_recording("replay", copy, &r->t, &ma)) != 0) goto done;
    rc = 1;
    r->cwd = ma->cwd ? ma->cwd : "/";
    r->python_version = ma->python_version;
    r->torch_version = ma->torch_version;
    char *ncap = NULL;
    dr_trace_query_text(r->t, "SELECT count(*) FROM v_captures", &ncap, NULL);
    long ncaptures = ncap ? atol(ncap) : 0;
    free(ncap);
    ncap = NULL;
    if (ncaptures == 0) {
        if (dr_trace_schema_version(r->t) < 2)
            fprintf(stderr, "dynrec replay: %s predates input capture (written by schema %d; "
                            "dynrec 0.3.0 captures frame inputs): record it again to replay it\n",
                    o->trace, dr_trace_schema_version(r->t));
        else if (dr_trace_get_meta(r->t, "hook.capture", &ncap, NULL) == DR_OK && ncap &&
                 strcmp(ncap, "active") != 0)
            fprintf(stderr, "dynrec replay: %s holds no captured frames: the capture was "
                            "switched off in that run (%s; see its recorder_error events)\n",
                    o->trace, safe(r, ncap, 100));
        else
            fprintf(stderr, "dynrec replay: %s holds no captured frames: Dynamo compiled "
                            "nothing in that run\n", o->trace);
        free(ncap);
        rc = DR_EX_NOINPUT;
        goto done;
    }
    /* After the captures: a trace no dynrec can replay says so first. */
    if (other_python("replay", "replay", o->trace, r->python_version)) {
        rc = DR_EX_UNAVAILABLE;
        goto done;
    }
    if (load_files(r, &files, &err) != DR_OK) {
        fprintf(stderr, "dynrec replay: %s\n", err.msg);
        rc = DR_EX_DATAERR;
        goto done;
    }
    /* Confined, the stored definitions run whoever wrote the trace;
     * unconfined, only when they are this disk's own files (or --trust). */
    char why[700], sbx_why[400] = "";
    char *bwrap = NULL;
    if (o->no_sandbox) snprintf(sbx_why, sizeof sbx_why, "--no-sandbox");
    else bwrap = dr_sandbox_probe(sbx_why, sizeof sbx_why);
    if (bwrap) {
        /* inductor runs the C++ compiler: exec stays allowed for it (on the
         * sandbox's read-only binaries, with no network and no $HOME). */
        char *ind = NULL;
        if (!o->backend)
            dr_trace_query_text(r->t, "SELECT count(*) FROM v_ev WHERE kind = 'capture' AND "
                                "json_valid(data) AND json_extract(data, '$.backend.name') = "
                                "'inductor'", &ind, NULL);
        int exec = o->backend ? strcmp(o->backend, "inductor") == 0 : ind && atol(ind) > 0;
        free(ind);
        DrSandboxMode mode = exec ? DR_SBX_INDUCTOR : DR_SBX_REPLAY;
        snprintf(sandbox_desc, sizeof sandbox_desc, "%s", dr_sandbox_mode_desc(mode));
        sb = (DrSandbox){.bwrap = dr_arena_strdup(&r->arena, bwrap), .self = o->self,
                         .python = python, .in_dir = NULL, .out_dir = out_dir, .mode = mode};
        free(bwrap);
    } else {
        snprintf(sandbox_desc, sizeof sandbox_desc, "none (%s)", sbx_why);
    }
    if (!sb.bwrap && !o->trust && !sources_on_disk(r, &files, why, sizeof why)) {
        if (o->no_sandbox)
            fprintf(stderr, "dynrec replay: %s; nothing was run. Unconfined (--no-sandbox), "
                            "replay runs the definitions (imports, def, class) of the sources "
                            "stored in %s only when they are this disk's own; if you trust "
                            "where the file came from, add --trust\n", why, o->trace);
        else
            fprintf(stderr, "dynrec replay: %s, and the replay cannot be confined here: %s; "
                            "nothing was run. If you trust where %s came from, add --trust "
                            "to replay it unconfined\n", why, sbx_why, o->trace);
        rc = DR_EX_NOPERM;
        goto done;
    }
    if (o->nset) {
        DrRerunOptions ro = {.nset = o->nset, .set = o->set};
        if ((rc = check_sets(&ro)) != 0) goto done;
    }
    const char *outp = o->out ? o->out : replay_out(r, o->trace);
    char *newpath = outp ? absolute(r, outp) : NULL;
    char *tracepath = absolute(r, o->trace);
    if (!newpath || !tracepath) {
        fprintf(stderr, "dynrec replay: cannot name the new trace; give one with -o\n");
        goto done;
    }
    DrBuf left = {0};
    int erc = replay_env(r, &env, sb.bwrap != NULL, o->trust, &left, &err);
    if (erc == DR_OK && left.len)
        fprintf(stderr, "dynrec replay: recorded environment left out (it could name a path or "
                        "make Python import): %s\n", left.s);
    dr_buf_free(&left);
    if (erc != DR_OK) {
        fprintf(stderr, "dynrec replay: %s\n", err.msg);
        rc = DR_EX_DATAERR;
        goto done;
    }
    char child_out[4200];
    if (sb.bwrap) {
        /* The copy's folder is mounted read-only, the output's read-write. */
        snprintf(in_dir, sizeof in_dir, "%s/in", r->tmpdir);
        sb.in_dir = in_dir;
        snprintf(child_out, sizeof child_out, "%s/replay.db", out_dir);
    } else {
        snprintf(child_out, sizeof child_out, "%s", newpath);
    }
    int st = run_replay_child(r, o, sb.bwrap ? &sb : NULL, child_out, copy, tracepath, &env);
    /* Whatever the child wrote is the user's, however it ended. */
    if (sb.bwrap && access(child_out, F_OK) == 0 && move_out(child_out, newpath) != 0) goto done;
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127) {
        fprintf(stderr, "dynrec replay: the replay did not finish%s\n",
                st != -1 && WIFSIGNALED(st) ? " (killed by a signal)" : "");
        goto done;
    }
    if (WEXITSTATUS(st) == DR_EX_DATAERR || WEXITSTATUS(st) == DR_EX_USAGE) {
        rc = WEXITSTATUS(st); /* the child said why */
        goto done;
    }
    if (WEXITSTATUS(st) != 0) {
        fprintf(stderr, "dynrec replay: the replay failed (exit status %d); its trace is %s\n",
                WEXITSTATUS(st), newpath);
        goto done;
    }
    if ((rc = load_result("replay", "replay", newpath, &nt, &mb)) != 0) goto done;
    rc = 1;
    sk.r = r;
    sk.m = ma;
    dr_trace_query(nt, "SELECT json_extract(data, '$.filename'), json_extract(data, '$.qualname'),"
                   " json_extract(data, '$.firstlineno'), text FROM v_ev"
                   " WHERE kind = 'replay_skip' ORDER BY seq", skip_row, &sk, NULL);
    DrCompareOptions co = {.label_a = o->trace, .label_b = newpath, .replay = 1,
                           .ignore = o->ignore | (1u << DR_CAT_EXIT) | (1u << DR_CAT_OUTPUT)};
    DrStrVec skip_all = {0};
    for (long i = 0; i < sk.keys.n; i++) dr_vec_push(&skip_all, sk.keys.v[i]);
    if (o->frame || o->compile) {
        ch.r = r;
        ch.m = ma;
        dr_trace_query(nt, "SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),"
                       " json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]')"
                       " FROM meta m, json_each(m.value) j WHERE m.key = 'replay.frames'"
                       " AND json_valid(m.value)", chosen_row, &ch, NULL);
        char key[8192];
        for (long f = 0; f < ma->nframes; f++) {
            const DrFrame *fr = &ma->frames[f];
            dr_frame_key(key, sizeof key, fr->file, fr->qualname, fr->firstlineno);
            if (dr_map_get(&ch.chosen, key) < 0)
                dr_vec_push(&skip_all, dr_arena_strdup(&r->arena, key));
        }
        if (o->compile) co.max_compiles = ch.max_captures > 0 ? ch.max_captures : 1;
    }
    /* The config keys the replay refused to set are not compared. */
    char *unset_json = NULL;
    DrStrVec unset = {0};
    dr_trace_query_text(nt, "SELECT value FROM meta WHERE key = 'replay.config_skipped' AND "
                        "json_valid(value)", &unset_json, NULL);
    if (unset_json && parse_string_array(&r->arena, unset_json, &unset) == 0) {
        co.config_unset = (const char *const *)unset.v;
        co.nconfig_unset = unset.n;
    }
    free(unset_json);
    /* Nothing compiled (every frame skipped): Dynamo never started, so the
     * replay has no config to compare. */
    if (mb->ncompiles == 0) co.ignore |= 1u << DR_CAT_CONFIG;
    co.skip_frames = (const char *const *)skip_all.v;
    co.nskip = skip_all.n;
    d = dr_compare(ma, mb, &co, &err);
    dr_vec_free(&unset);
    if (!d) {
        fprintf(stderr, "dynrec replay: %s\n", err.msg);
        dr_vec_free(&skip_all);
        goto done;
    }
    long reproduced = 0, total = 0;
    dr_diff_reproduced(d, &reproduced, &total);
    dr_trace_get_meta(nt, "torch_version", &new_torch, NULL);
    dr_trace_query_text(nt, "SELECT value FROM meta WHERE key = 'replay.notes' AND "
                        "json_valid(value)", &notes, NULL);
    DrStrVec note_lines = {0};
    if (notes) {
        DrStrVec tmp = {0};
        if (parse_string_array(&r->arena, notes, &tmp) == 0)
            for (long i = 0; i < tmp.n; i++) dr_vec_push(&note_lines, tmp.v[i]);
        dr_vec_free(&tmp);
    }
    FILE *out = stdout;
    if (o->json) {
        fputs("{\n  \"replay\": {\"of\": ", out);
        dr_json_string(out, o->trace);
        fputs(", \"trace\": ", out);
        dr_json_string(out, newpath);
        fputs(", \"recorded_torch\": ", out);
        dr_json_string(out, r->torch_version);
        fputs(", \"torch\": ", out);
        dr_json_string(out, new_torch);
        fputs(", \"sandbox\": ", out);
        dr_json_string(out, sandbox_desc);
        fprintf(out, ", \"reproduced\": %ld, \"compared\": %ld, \"not_replayable\": [", reproduced,
                total);
        for (long i = 0; i < sk.names.n; i++) {
            fputs(i ? ", {\"frame\": " : "{\"frame\": ", out);
            dr_json_string(out, sk.names.v[i]);
            fputs(", \"reason\": ", out);
            dr_json_string(out, sk.reasons.v[i]);
            fputc('}', out);
        }
        fputs("], \"notes\": [", out);
        for (long i = 0; i < note_lines.n; i++) {
            if (i) fputs(", ", out);
            dr_json_string(out, note_lines.v[i]);
        }
        fputs("]},\n  ", out);
        dr_diff_print_json_fields(d, out);
        fputs("\n}\n", out);
    } else {
        fprintf(out, "replay of %s -> %s\n", o->trace, newpath);
        fprintf(out, "  sandbox: %s\n", sandbox_desc);
        if (r->torch_version && new_torch && strcmp(r->torch_version, new_torch) != 0)
            fprintf(out, "  recorded on torch %s, replayed on %s\n", safe(r, r->torch_version, 100),
                    safe(r, new_torch, 100));
        if (o->backend) fprintf(out, "  --backend %s\n", o->backend);
        for (int i = 0; i < o->nset; i++) fprintf(out, "  --set %s\n", o->set[i]);
        for (long i = 0; i < note_lines.n; i++)
            fprintf(out, "  note: %s\n", safe(r, note_lines.v[i], 400));
        fprintf(out, "  reproduced %ld/%ld compile%s", reproduced, total, total == 1 ? "" : "s");
        if (sk.names.n) {
            fprintf(out, "; %ld frame%s not replayable:", sk.names.n, sk.names.n == 1 ? "" : "s");
            for (long i = 0; i < sk.names.n; i++)
                fprintf(out, "\n    %s: %s", safe(r, sk.names.v[i], 0),
                        safe(r, sk.reasons.v[i], 400));
        }
        fputc('\n', out);
        if (total == 0 && sk.names.n)
            /* Not "identical": nothing was compared. */
            fputs("nothing was replayed: no captured compile could be rebuilt here\n", out);
        else
            dr_diff_print(d, out, 0);
        if (total) {
            fputs("per compile:\n", out);
            dr_diff_print_compiles(d, out, 200);
        }
    }
    dr_vec_free(&note_lines);
    dr_vec_free(&skip_all);
    rc = !dr_diff_identical(d) ? 1 : sk.names.n ? DR_EX_PARTIAL : 0;
    if (fflush(stdout) != 0) rc = 1;
done:
    free(new_torch);
    free(notes);
    dr_map_free(&ch.chosen);
    dr_vec_free(&sk.keys);
    dr_vec_free(&sk.reasons);
    dr_vec_free(&sk.names);
    dr_diff_free(d);
    dr_model_free(mb);
    dr_model_free(ma);
    dr_trace_free(nt);
    free_files(&files);
    dr_vec_free(&env);
    dr_trace_free(r->t);
    if (r->tmpdir) nftw(r->tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(python);
    dr_arena_free(&r->arena);
    return rc;
}
