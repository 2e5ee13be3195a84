/* pack.c -- `dynrec pack` (see pack.h).
 *
 * Three copies: the input is opened as every reader opens it (checked,
 * read-only, with its WAL) and what to redact is gathered through its views;
 * VACUUM INTO makes a private working copy, stripped to dynrec's own tables
 * (dr_trace_strip_copy: no view, trigger or foreign table of the input's
 * reaches the pack) and edited in place with
 * secure_delete on; a second VACUUM INTO writes the pack, so that no page
 * of the working copy -- and nothing un-redacted -- reaches it.  Payloads
 * are decoded and re-encoded with the trace's own dictionary; a payload
 * that cannot be decoded, or binary data (marshalled code, tensor data)
 * holding a redacted string, is replaced by a short note saying so. */
#define _GNU_SOURCE 1
#include "pack.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../common/util.h"
#include "codec.h"
#include "ident.h"
#include "trace.h"

/* One replacement: every occurrence of from (between non-name characters
 * when word is set) becomes to. */
typedef struct {
    char *from, *to;
    size_t flen;
    int word;
    const char *what; /* its class in pack_log */
    long hits;
} Rule;

typedef struct {
    char *base; /* a source file's base name */
    int *lines; /* line numbers Dynamo traced in a file of that name */
    size_t n, cap;
} Traced;

typedef struct {
    char *text;
    size_t len;
} LibSource;

typedef struct {
    const DrPackOptions *o;
    DrError *err;
    DrTrace *t;  /* the input */
    sqlite3 *db; /* the working copy */
    DrDict *dict;
    Rule *rules;
    size_t nrules, rcap;
    long constants;   /* string constants found in guards */
    DrMap code_names; /* names of the trace's classes and functions: code, kept */
    LibSource *lib;   /* library sources: their literals are kept */
    DrMap lib_dirs;   /* the package directories read into lib */
    DrMap site_dirs;  /* the site-packages directories of the trace's code */
    size_t nlib, libcap;
    Traced *traced;
    size_t ntraced, tcap;
    long blanked, blanked_files, removed_binary, env_values;
    int64_t dropped_bytes;
    long dropped;
} Pack;

static int oom(Pack *p) {
    return dr_error(p->err, DR_ERR_NOMEM, "out of memory packing %s", p->o->in);
}

static int sql_fail(Pack *p, const char *what) {
    return dr_error(p->err, DR_ERR_SQL, "%s: %s: %s", p->o->out, what, sqlite3_errmsg(p->db));
}

/* ---- rules ------------------------------------------------------------- */

static int add_rule(Pack *p, const char *from, size_t flen, const char *to, int word,
                    const char *what) {
    if (flen == 0) return DR_OK;
    for (size_t i = 0; i < p->nrules; i++)
        if (p->rules[i].flen == flen && memcmp(p->rules[i].from, from, flen) == 0) return DR_OK;
    if (p->nrules == p->rcap) {
        size_t ncap = p->rcap ? p->rcap * 2 : 16;
        Rule *n = realloc(p->rules, ncap * sizeof *n);
        if (!n) return oom(p);
        p->rules = n;
        p->rcap = ncap;
    }
    Rule *r = &p->rules[p->nrules];
    *r = (Rule){
        .from = strndup(from, flen), .to = strdup(to), .flen = flen, .word = word, .what = what};
    if (!r->from || !r->to) {
        free(r->from);
        free(r->to);
        return oom(p);
    }
    p->nrules++;
    return DR_OK;
}

/* Longest first (a home directory before the user name inside it), then by
 * text: the same rules apply in the same order on every run. */
static int rule_cmp(const void *a, const void *b) {
    const Rule *x = a, *y = b;
    if (x->flen != y->flen) return x->flen > y->flen ? -1 : 1;
    return memcmp(x->from, y->from, x->flen);
}

static int is_name_char(int c) { return isalnum(c) || c == '_' || c == '-' || c == '.'; }

/* Applies every rule to s[0..n); returns a malloc'd result and its length
 * in *outlen when something changed, NULL (with *outlen 0) when not or out
 * of memory (*oom set). */
static char *apply_rules(Pack *p, const char *s, size_t n, size_t *outlen, int *nomem) {
    char *cur = NULL;
    size_t curlen = n;
    const char *src = s;
    *outlen = 0;
    for (size_t i = 0; i < p->nrules; i++) {
        Rule *r = &p->rules[i];
        if (r->flen > curlen || !memmem(src, curlen, r->from, r->flen)) continue;
        DrBuf b = {0};
        const char *q = src, *end = src + curlen;
        long hits = 0;
        while (q < end) {
            const char *m = memmem(q, (size_t)(end - q), r->from, r->flen);
            if (!m) break;
            int ok = !r->word || ((m == src || !is_name_char((unsigned char)m[-1])) &&
                                  (m + r->flen == end || !is_name_char((unsigned char)m[r->flen])));
            dr_buf_add(&b, q, (size_t)(m - q));
            if (ok) {
                dr_buf_puts(&b, r->to);
                hits++;
            } else {
                dr_buf_add(&b, m, r->flen);
            }
            q = m + r->flen;
        }
        dr_buf_add(&b, q, (size_t)(end - q));
        if (b.failed) {
            dr_buf_free(&b);
            free(cur);
            *nomem = 1;
            return NULL;
        }
        if (!hits) {
            dr_buf_free(&b);
            continue;
        }
        r->hits += hits;
        free(cur);
        cur = b.s;
        curlen = b.len;
        src = cur;
    }
    if (cur) *outlen = curlen;
    return cur;
}

/* ---- what to redact, from the input's views ---------------------------- */

void dr_pack_str_token(const char *s, size_t len, char *buf) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a: the same string, the same token */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    snprintf(buf, 13, "<str:%06x>", (unsigned)(h >> 40));
}

/* Each dotted part of a qualname of the trace's code objects or of a class
 * or function its captures refer to ("BertModel", "Outer", "Inner"): a
 * guard may compare a class's __name__ with it, and the replay finds the
 * class by it. */
static int code_name_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Pack *p = ud;
    if (n < 1 || !v[0]) return 0;
    for (const char *s = v[0]; *s;) {
        const char *e = strchr(s, '.');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char part[256];
        if (len >= 3 && len < sizeof part) {
            memcpy(part, s, len);
            part[len] = 0;
            if (dr_map_put(&p->code_names, part, 1) < 0) return 1;
        }
        s += len + (e != NULL);
    }
    return 0;
}

/* Whether the literal lit (quotes included, n bytes) is code, not data: a
 * name of the trace's classes or functions, a class as str() writes it
 * ("<class 'm.BertModel'>"), or a string the installed libraries' own
 * sources hold ('sdpa', 'past_key_values': what a library branches on,
 * never the user's). */
static int is_code(Pack *p, const char *lit, size_t n) {
    char name[256];
    if (n < 2 || n - 2 >= sizeof name) return 0;
    memcpy(name, lit + 1, n - 2);
    name[n - 2] = 0;
    const char *last = name;
    size_t nl = strlen(name);
    if (nl > 10 && strncmp(name, "<class '", 8) == 0 && strcmp(name + nl - 2, "'>") == 0) {
        name[nl - 2] = 0;
        last = strrchr(name, '.') ? strrchr(name, '.') + 1 : name + 8;
    }
    if (dr_map_get(&p->code_names, last) >= 0) return 1;
    /* In either quotes: the guard writes repr()'s, the source its own. */
    char q[260];
    for (int k = 0; k < 2; k++) {
        q[0] = q[n - 1] = k ? '"' : '\'';
        memcpy(q + 1, lit + 1, n - 2);
        for (size_t i = 0; i < p->nlib; i++)
            if (memmem(p->lib[i].text, p->lib[i].len, q, n)) return 1;
    }
    return 0;
}

/* The sources of the installed packages the trace's code came from, read
 * from this disk for is_code: every .py file of each package directory
 * (site-packages/NAME/) one of the trace's library code objects is in,
 * the literals they hold stay.  Bounded: files over 4 MiB are skipped, and
 * reading stops at 512 MiB in all. */
static Pack *lib_pack; /* nftw has no user data */
static int64_t lib_bytes;

static int lib_file(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)ftw;
    Pack *p = lib_pack;
    size_t len = strlen(path);
    if (flag != FTW_F || len < 4 || strcmp(path + len - 3, ".py") != 0 || st->st_size > (4 << 20))
        return 0;
    if (lib_bytes + st->st_size > ((int64_t)512 << 20)) return 1;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char *text = malloc((size_t)st->st_size + 1);
    size_t got = text ? fread(text, 1, (size_t)st->st_size, f) : 0;
    fclose(f);
    if (!text) return 2;
    if (p->nlib == p->libcap) {
        size_t cap = p->libcap ? p->libcap * 2 : 256;
        LibSource *nl = realloc(p->lib, cap * sizeof *nl);
        if (!nl) {
            free(text);
            return 2;
        }
        p->lib = nl;
        p->libcap = cap;
    }
    p->lib[p->nlib].text = text;
    p->lib[p->nlib++].len = got;
    lib_bytes += (int64_t)got;
    return 0;
}

/* Whether s[0..n) is a package's name: an identifier, never "." or ".."
 * (a trace's file names and module names are a stranger's). */
static int package_name(const char *s, size_t n) {
    if (n == 0 || n > 200 || isdigit((unsigned char)s[0])) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-') return 0;
    return 1;
}

/* Reads the package directory dir (once); 1 when out of memory. */
static int read_lib_dir(Pack *p, const char *dir) {
    if (dr_map_get(&p->lib_dirs, dir) >= 0) return 0;
    if (dr_map_put(&p->lib_dirs, dir, 1) < 0) return 1;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    lib_pack = p;
    return nftw(dir, lib_file, 16, FTW_PHYS) == 2;
}

/* A code object's file: its package directory, and the site-packages
 * directory it is in (kept for module_dir_row). */
static int lib_source_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Pack *p = ud;
    if (n < 1 || !v[0] || v[0][0] != '/') return 0;
    static const char *const sites[] = {"/site-packages/", "/dist-packages/"};
    for (int k = 0; k < 2; k++) {
        const char *s = strstr(v[0], sites[k]);
        const char *pkg = s ? s + strlen(sites[k]) : NULL;
        const char *slash = pkg ? strchr(pkg, '/') : NULL;
        if (!slash || slash - v[0] >= PATH_MAX || !package_name(pkg, (size_t)(slash - pkg)) ||
            strstr(v[0], "/../"))
            continue;
        char dir[PATH_MAX];
        memcpy(dir, v[0], (size_t)(pkg - v[0]));
        dir[pkg - v[0]] = 0;
        if (dr_map_get(&p->site_dirs, dir) < 0 && dr_map_put(&p->site_dirs, dir, 1) < 0) return 1;
        memcpy(dir, v[0], (size_t)(slash - v[0]));
        dir[slash - v[0]] = 0;
        return read_lib_dir(p, dir);
    }
    return 0;
}

/* A module a capture names (a class's, a function's): its top-level
 * package in each site-packages directory seen. */
static int module_dir_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Pack *p = ud;
    if (n < 1 || !v[0]) return 0;
    size_t top = strcspn(v[0], ".");
    if (!package_name(v[0], top)) return 0;
    for (size_t i = 0; i < p->site_dirs.cap; i++) {
        const char *site = p->site_dirs.keys[i];
        if (!site || strlen(site) + top >= PATH_MAX) continue;
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s%.*s", site, (int)top, v[0]);
        if (read_lib_dir(p, dir)) return 1;
    }
    return 0;
}

/* The string literals a guard or a guard failure compares against
 * (`== 'x'`, `!= "x"`, and each element of `in ('a', 'b')`): values of the
 * user's data.  Subscripts (L['x']), attribute names and the names of the
 * trace's classes and functions (`__name__ == 'BertModel'`) are code, not
 * data, and stay: a capture names the class by them. */
static int constants_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Pack *p = ud;
    if (n < 1 || !v[0]) return 0;
    const char *s = v[0];
    for (const char *q = s; *q; q++) {
        int cmp = (q[0] == '=' || q[0] == '!') && q[1] == '=' && q[2] == ' ';
        int in = strncmp(q, " in (", 5) == 0;
        if (!cmp && !in) continue;
        const char *lit = q + (cmp ? 3 : 5);
        for (;;) {
            char quote = *lit;
            if (quote != '\'' && quote != '"') break;
            const char *e = lit + 1;
            while (*e && *e != quote) e += (*e == '\\' && e[1]) ? 2 : 1;
            if (!*e) break;
            size_t len = (size_t)(e - lit - 1);
            /* One or two characters hide nothing (a submodule key '0'). */
            if (len >= 3 && strncmp(lit + 1, "<str:", 5) != 0 && !is_code(p, lit, len + 2)) {
                char tok[13], from[4096], to[32];
                if (len + 4 < sizeof from) {
                    dr_pack_str_token(lit + 1, len, tok);
                    size_t before = p->nrules;
                    /* 'x', "x", and \"x\" inside JSON text (a stack's code line). */
                    static const char *const quotes[] = {"'", "\"", "\\\""};
                    for (int k = 0; k < 3; k++) {
                        int w = snprintf(from, sizeof from, "%s%.*s%s", quotes[k], (int)len,
                                         lit + 1, quotes[k]);
                        snprintf(to, sizeof to, "%s%s%s", quotes[k], tok, quotes[k]);
                        if (w > 0 && (size_t)w < sizeof from &&
                            add_rule(p, from, (size_t)w, to, 0, "string constants") != DR_OK)
                            return 1;
                    }
                    if (p->nrules > before) p->constants++;
                }
            }
            lit = e + 1;
            if (!in || strncmp(lit, ", ", 2) != 0) break;
            lit += 2;
        }
    }
    return 0;
}

/* Home directories and user names seen in the trace's paths, and the
 * packing user's own. */
static int paths_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Pack *p = ud;
    if (n < 1 || !v[0]) return 0;
    static const char *const homes[] = {"/home/", "/Users/"};
    for (const char *q = v[0]; *q; q++) {
        if (strncmp(q, "/root", 5) == 0 && (q[5] == '/' || q[5] == 0 || q[5] == '"') &&
            (q == v[0] || !is_name_char((unsigned char)q[-1]))) {
            if (add_rule(p, "/root", 5, "~", 0, "paths") != DR_OK ||
                add_rule(p, "root", 4, "<user>", 1, "user names") != DR_OK)
                return 1;
        }
        for (size_t h = 0; h < 2; h++) {
            size_t hl = strlen(homes[h]);
            if (strncmp(q, homes[h], hl) != 0) continue;
            const char *u = q + hl, *e = u;
            while (*e && *e != '/' && *e != '"' && *e != '\'' && !isspace((unsigned char)*e)) e++;
            if (e - u < 2) continue;
            if (add_rule(p, q, (size_t)(e - q), "~", 0, "paths") != DR_OK ||
                add_rule(p, u, (size_t)(e - u), "<user>", 1, "user names") != DR_OK)
                return 1;
        }
    }
    return 0;
}

static int env_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Pack *p = ud;
    if (n < 2 || !v[0] || !v[1]) return 0;
    if (strcmp(v[1], "<redacted>") != 0) p->env_values++;
    /* Long values elsewhere too (a token in a path, a directory in argv). */
    size_t len = strlen(v[1]);
    if (len >= 6 && strcmp(v[1], "<redacted>") != 0) {
        char to[300];
        snprintf(to, sizeof to, "<env:%.200s>", v[0] + 4);
        return add_rule(p, v[1], len, to, 0, "env values") != DR_OK;
    }
    return 0;
}

static int gather_redactions(Pack *p) {
    DrTrace *t = p->t;
    const char *home = getenv("HOME");
    if (home && strlen(home) > 1 && add_rule(p, home, strlen(home), "~", 0, "paths") != DR_OK)
        return p->err->code;
    const char *users[3] = {getenv("USER"), getenv("LOGNAME"), NULL};
    struct passwd *pw = getpwuid(getuid());
    if (pw) users[2] = pw->pw_name;
    for (int i = 0; i < 3; i++)
        if (users[i] && strlen(users[i]) >= 2 &&
            add_rule(p, users[i], strlen(users[i]), "<user>", 1, "user names") != DR_OK)
            return p->err->code;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0 && strlen(host) >= 3 &&
        add_rule(p, host, strlen(host), "<host>", 1, "host name") != DR_OK)
        return p->err->code;
    static const char *const path_sql[] = {
        "SELECT value FROM meta WHERE key IN ('cwd', 'python_executable', 'script', 'command',"
        " 'argv', 'rerun_of', 'replay_of') OR key LIKE 'env.%'",
        "SELECT DISTINCT path FROM v_files", "SELECT DISTINCT filename FROM v_code"};
    for (size_t i = 0; i < sizeof path_sql / sizeof *path_sql; i++)
        if (dr_trace_query(t, path_sql[i], paths_row, p, p->err) != DR_OK) return p->err->code;
    static const char *const code_sql[] = {
        "SELECT DISTINCT qualname FROM v_code",
        "SELECT DISTINCT coalesce(json_extract(value, '$.class.qualname'),"
        " json_extract(value, '$.qualname')) FROM v_values WHERE json_valid(value)"
        " AND json_type(value) = 'object'"};
    lib_bytes = 0;
    if (dr_trace_query(t, "SELECT DISTINCT filename FROM v_code", lib_source_row, p, p->err) !=
        DR_OK)
        return p->err->code;
    if (dr_trace_query(t,
                       "SELECT DISTINCT coalesce(json_extract(value, '$.class.module'),"
                       " json_extract(value, '$.module')) FROM v_values WHERE json_valid(value)"
                       " AND json_type(value) = 'object'",
                       module_dir_row, p, p->err) != DR_OK) {
        if (p->err->code == DR_ERR_NOMEM) return p->err->code;
        p->err->code = DR_OK; /* a trace of before captures */
        p->err->msg[0] = 0;
    }
    for (size_t i = 0; i < sizeof code_sql / sizeof *code_sql; i++)
        if (dr_trace_query(t, code_sql[i], code_name_row, p, p->err) != DR_OK) {
            if (p->err->code == DR_ERR_NOMEM) return p->err->code;
            /* A trace of before captures (no v_values): no names from there. */
            p->err->code = DR_OK;
            p->err->msg[0] = 0;
        }
    if (dr_trace_query(t, "SELECT key, value FROM meta WHERE key LIKE 'env.%' ORDER BY key",
                       env_row, p, p->err) != DR_OK ||
        dr_trace_query(t,
                       "SELECT text FROM v_ev WHERE kind IN ('guard', 'guard_failure')"
                       " AND text IS NOT NULL ORDER BY seq",
                       constants_row, p, p->err) != DR_OK)
        return p->err->code;
    if (p->nrules) qsort(p->rules, p->nrules, sizeof *p->rules, rule_cmp);
    return DR_OK;
}

/* ---- lines Dynamo traced (--redact-source) ----------------------------- */

static Traced *traced_for(Pack *p, const char *base, size_t blen, int create) {
    for (size_t i = 0; i < p->ntraced; i++)
        if (strlen(p->traced[i].base) == blen && memcmp(p->traced[i].base, base, blen) == 0)
            return &p->traced[i];
    if (!create) return NULL;
    if (p->ntraced == p->tcap) {
        size_t ncap = p->tcap ? p->tcap * 2 : 8;
        Traced *n = realloc(p->traced, ncap * sizeof *n);
        if (!n) return NULL;
        p->traced = n;
        p->tcap = ncap;
    }
    Traced *tr = &p->traced[p->ntraced];
    *tr = (Traced){.base = strndup(base, blen)};
    if (!tr->base) return NULL;
    p->ntraced++;
    return tr;
}

static int note_line(Pack *p, const char *base, size_t blen, long line) {
    if (line <= 0 || line > 10000000) return DR_OK;
    Traced *tr = traced_for(p, base, blen, 1);
    if (!tr) return oom(p);
    if (tr->n == tr->cap) {
        size_t ncap = tr->cap ? tr->cap * 2 : 32;
        int *n = realloc(tr->lines, ncap * sizeof *n);
        if (!n) return oom(p);
        tr->lines = n;
        tr->cap = ncap;
    }
    tr->lines[tr->n++] = (int)line;
    return DR_OK;
}

/* Every "name.py:LINE" and `name.py", line LINE` in a text: the user
 * locations of guards, graph breaks' stacks, tracebacks and the FX code's
 * "# File: path:line" comments all say so. */
static int scan_lines(Pack *p, const char *s, size_t n) {
    const char *end = s + n;
    for (const char *q = s; (q = memmem(q, (size_t)(end - q), ".py", 3)); q += 3) {
        const char *b = q;
        while (b > s && is_name_char((unsigned char)b[-1])) b--;
        const char *a = q + 3;
        if (a < end && *a == ':') a++;
        else if (end - a > 8 && memcmp(a, "\", line ", 8) == 0) a += 8;
        else continue;
        if (a >= end || !isdigit((unsigned char)*a)) continue;
        long line = strtol(a, NULL, 10);
        if (note_line(p, b, (size_t)(q + 3 - b), line) != DR_OK) return p->err->code;
    }
    return DR_OK;
}

static int lines_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Pack *p = ud;
    return n >= 1 && v[0] && scan_lines(p, v[0], strlen(v[0])) != DR_OK;
}

static int code_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Pack *p = ud;
    if (n < 2 || !v[0] || !v[1]) return 0;
    const char *base = strrchr(v[0], '/');
    base = base ? base + 1 : v[0];
    return note_line(p, base, strlen(base), atol(v[1])) != DR_OK;
}

static int payload_lines_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Pack *p = ud;
    if (n < 1 || !v[0]) return 0;
    void *data = NULL;
    size_t len = 0;
    DrError e = {0};
    if (dr_trace_read_blob(p->t, atoll(v[0]), 0, &data, &len, &e) != DR_OK) return 0;
    int rc = scan_lines(p, data, len);
    free(data);
    return rc != DR_OK;
}

static int gather_traced_lines(Pack *p) {
    DrTrace *t = p->t;
    if (dr_trace_query(t, "SELECT text FROM strings", lines_row, p, p->err) != DR_OK ||
        dr_trace_query(t, "SELECT filename, firstlineno FROM v_code", code_row, p, p->err) !=
            DR_OK ||
        dr_trace_query(t,
                       "SELECT blob_id FROM v_ev WHERE blob_id IS NOT NULL AND kind IN"
                       " ('trace', 'graph', 'error', 'exception')",
                       payload_lines_row, p, p->err) != DR_OK)
        return p->err->code ? p->err->code : DR_ERR_NOMEM;
    return DR_OK;
}

/* ---- the working copy -------------------------------------------------- */

static int exec_sql(Pack *p, const char *sql) {
    char *msg = NULL;
    int rc = sqlite3_exec(p->db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        dr_error(p->err, rc == SQLITE_FULL ? DR_ERR_FULL : DR_ERR_SQL, "%s: %s", p->o->out,
                 msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        return p->err->code;
    }
    return DR_OK;
}

static int load_dict(Pack *p) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(p->db, "SELECT id, data FROM dicts ORDER BY id LIMIT 1", -1, &st,
                           NULL) != SQLITE_OK)
        return sql_fail(p, "reading the dictionary");
    int rc = DR_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        DrError e = {0};
        if (!(p->dict = dr_dict_from_row(sqlite3_column_int64(st, 0), sqlite3_column_blob(st, 1),
                                         (size_t)sqlite3_column_bytes(st, 1), &e)))
            rc = dr_error(p->err, DR_ERR_BLOB, "%s: %s", p->o->in, e.msg);
    }
    sqlite3_finalize(st);
    return rc;
}

static int put_blob(Pack *p, int64_t id, const void *data, size_t len, int use_dict) {
    void *enc = NULL;
    size_t enclen = 0;
    if (dr_codec_encode(data, len, use_dict ? p->dict : NULL, 0, &enc, &enclen, p->err) != DR_OK)
        return p->err->code;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(p->db, "UPDATE blobs SET data = ?1 WHERE id = ?2", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_blob(st, 1, enc, (int)enclen, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 2, id);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    free(enc);
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? DR_OK : sql_fail(p, "rewriting a payload");
}

static int note(Pack *p, const char *what, const char *detail, int64_t n) {
    if (exec_sql(p, "CREATE TABLE IF NOT EXISTS pack_log(what TEXT NOT NULL,"
                    " detail TEXT NOT NULL, n INTEGER NOT NULL)") != DR_OK)
        return p->err->code;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(p->db, "INSERT INTO pack_log(what, detail, n) VALUES(?1, ?2, ?3)", -1,
                           &st, NULL) != SQLITE_OK)
        return sql_fail(p, "writing pack_log");
    sqlite3_bind_text(st, 1, what, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, detail, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, n);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? DR_OK : sql_fail(p, "writing pack_log");
}

/* Rewrites the text column of every row of a table through the rules. */
static int redact_column(Pack *p, const char *table, const char *key, const char *key2,
                         const char *col, const char *where) {
    char sel[256], upd[256];
    snprintf(sel, sizeof sel, "SELECT %s, %s, %s FROM %s%s%s", col, key, key2 ? key2 : "NULL",
             table, where ? " WHERE " : "", where ? where : "");
    snprintf(upd, sizeof upd, "UPDATE %s SET %s = ?1 WHERE %s = ?2%s%s%s", table, col, key,
             key2 ? " AND " : "", key2 ? key2 : "", key2 ? " = ?3" : "");
    sqlite3_stmt *s = NULL, *u = NULL;
    if (sqlite3_prepare_v2(p->db, sel, -1, &s, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(p->db, upd, -1, &u, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return sql_fail(p, "redacting");
    }
    int rc = DR_OK, step;
    while (rc == DR_OK && (step = sqlite3_step(s)) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        if (!v) continue;
        size_t n = (size_t)sqlite3_column_bytes(s, 0), outlen = 0;
        int nomem = 0;
        char *r = apply_rules(p, v, n, &outlen, &nomem);
        if (nomem) rc = oom(p);
        if (!r) continue;
        sqlite3_bind_text(u, 1, r, (int)outlen, SQLITE_TRANSIENT);
        sqlite3_bind_value(u, 2, sqlite3_column_value(s, 1));
        if (key2) sqlite3_bind_value(u, 3, sqlite3_column_value(s, 2));
        if (sqlite3_step(u) != SQLITE_DONE) rc = sql_fail(p, "redacting");
        sqlite3_reset(u);
        free(r);
    }
    sqlite3_finalize(s);
    sqlite3_finalize(u);
    return rc;
}

static int blank_untraced(Pack *p, int64_t id, const char *path, char *text, size_t *len) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    Traced *tr = traced_for(p, base, strlen(base), 0);
    long line = 1, blanked = 0;
    size_t w = 0;
    for (size_t r = 0; r < *len;) {
        size_t e = r;
        while (e < *len && text[e] != '\n') e++;
        int keep = 0;
        for (size_t i = 0; tr && i < tr->n && !keep; i++) keep = tr->lines[i] == line;
        if (keep) {
            memmove(text + w, text + r, e - r);
            w += e - r;
        } else if (e > r) {
            blanked++;
        }
        if (e < *len) text[w++] = '\n';
        r = e + 1;
        line++;
    }
    (void)id;
    *len = w;
    p->blanked += blanked;
    if (blanked) p->blanked_files++;
    return DR_OK;
}

/* Each payload: text is decoded, rewritten and re-encoded; binary data
 * (marshalled code, tensor data) holding a redacted string, or a payload
 * that does not decode, is replaced by a note. */
static int redact_blobs(Pack *p) {
    static const char sql[] = "SELECT b.id, b.data,"
                              " EXISTS(SELECT 1 FROM value_nodes v WHERE v.blob_id = b.id) OR"
                              " EXISTS(SELECT 1 FROM events e JOIN strings k ON k.id = e.kind_id"
                              "   WHERE e.blob_id = b.id AND k.text = 'capture') AS binary,"
                              " (SELECT s.text FROM files f JOIN strings r ON r.id = f.role_id"
                              "   JOIN strings s ON s.id = f.path_id WHERE f.blob_id = b.id"
                              "   AND r.text IN ('script', 'main', 'source')) AS source_path"
                              " FROM blobs b ORDER BY b.id";
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(p->db, sql, -1, &s, NULL) != SQLITE_OK)
        return sql_fail(p, "reading payloads");
    int rc = DR_OK, step;
    while (rc == DR_OK && (step = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        const void *blob = sqlite3_column_blob(s, 1);
        size_t blen = (size_t)sqlite3_column_bytes(s, 1);
        int binary = sqlite3_column_int(s, 2);
        const char *src = (const char *)sqlite3_column_text(s, 3);
        char *srcpath = src ? strdup(src) : NULL;
        void *raw = NULL;
        size_t len = 0;
        DrError e = {0};
        if (!blob || dr_codec_decode(blob, blen, p->dict, 0, &raw, &len, &e) != DR_OK) {
            if (p->o->redact) {
                static const char gone[] = "(removed by dynrec pack: this payload did not decode)";
                rc = put_blob(p, id, gone, sizeof gone - 1, 0);
                if (rc == DR_OK) rc = note(p, "removed", "a payload that did not decode", 1);
            }
            free(srcpath);
            continue;
        }
        if (binary) {
            int holds = 0;
            for (size_t i = 0; p->o->redact && i < p->nrules && !holds; i++)
                holds = memmem(raw, len, p->rules[i].from, p->rules[i].flen) != NULL;
            if (holds) {
                static const char gone[] =
                    "(removed by dynrec pack --redact: binary data holding a redacted string)";
                rc = put_blob(p, id, gone, sizeof gone - 1, 0);
                p->removed_binary++;
            }
        } else {
            int changed = 0;
            if (p->o->redact_source && srcpath) {
                size_t before = len;
                blank_untraced(p, id, srcpath, raw, &len);
                changed = len != before;
            }
            size_t outlen = 0;
            int nomem = 0;
            char *r = p->o->redact ? apply_rules(p, raw, len, &outlen, &nomem) : NULL;
            if (nomem) rc = oom(p);
            if (rc == DR_OK && (r || changed)) {
                rc = put_blob(p, id, r ? r : raw, r ? outlen : len, 1);
                if (rc == DR_OK && srcpath) {
                    sqlite3_stmt *u = NULL;
                    if (sqlite3_prepare_v2(p->db, "UPDATE files SET size = ?1 WHERE blob_id = ?2",
                                           -1, &u, NULL) == SQLITE_OK) {
                        sqlite3_bind_int64(u, 1, (int64_t)(r ? outlen : len));
                        sqlite3_bind_int64(u, 2, id);
                        if (sqlite3_step(u) != SQLITE_DONE) rc = sql_fail(p, "files");
                    } else {
                        rc = sql_fail(p, "files");
                    }
                    sqlite3_finalize(u);
                }
            }
            free(r);
        }
        free(raw);
        free(srcpath);
    }
    sqlite3_finalize(s);
    return rc;
}

/* pack_log rows for this run, then meta pack.redacted / pack.dropped summed
 * over every run (a pack packed again adds nothing and changes nothing). */
static int write_log(Pack *p) {
    static const char *const classes[] = {"paths", "user names", "host name", "env values",
                                          "string constants"};
    int added = 0;
    for (size_t c = 0; c < sizeof classes / sizeof *classes; c++) {
        long hits = 0;
        for (size_t i = 0; i < p->nrules; i++)
            if (strcmp(p->rules[i].what, classes[c]) == 0) hits += p->rules[i].hits;
        if (c == 3) hits += p->env_values;
        if (!hits) continue;
        char detail[128];
        if (c == 4)
            snprintf(detail, sizeof detail,
                     "%ld string constants compared in guards (%ld "
                     "occurrences)",
                     p->constants, hits);
        else snprintf(detail, sizeof detail, "%ld occurrences", hits);
        if (note(p, classes[c], detail, c == 4 ? p->constants : hits) != DR_OK) return p->err->code;
        added = 1;
    }
    if (p->blanked) {
        char detail[128];
        snprintf(detail, sizeof detail, "%ld lines Dynamo did not trace, in %ld files", p->blanked,
                 p->blanked_files);
        if (note(p, "source lines", detail, p->blanked) != DR_OK) return p->err->code;
        added = 1;
    }
    if (p->removed_binary) {
        if (note(p, "binary payloads", "marshalled code or data holding a redacted string",
                 p->removed_binary) != DR_OK)
            return p->err->code;
        added = 1;
    }
    if (!added) return DR_OK;
    return exec_sql(
        p, "INSERT OR REPLACE INTO meta(key, value) SELECT 'pack.redacted', group_concat("
           "CASE what WHEN 'string constants' THEN n || ' string constants' "
           "WHEN 'source lines' THEN n || ' source lines' ELSE what END, ', ') FROM "
           "(SELECT what, sum(n) AS n, min(rowid) AS r FROM pack_log WHERE what != 'dropped' "
           "GROUP BY what ORDER BY r)");
}

/* ---- --max-size -------------------------------------------------------- */

static int64_t file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

static int vacuum_to(Pack *p, const char *path) {
    unlink(path);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(p->db, "VACUUM INTO ?1", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(p->db);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK)
        return dr_error(p->err, rc == SQLITE_FULL ? DR_ERR_FULL : DR_ERR_IO,
                        "%s: cannot write the pack: %s", path, sqlite3_errmsg(p->db));
    return DR_OK;
}

/* Drops payloads, largest first within each class, until about `need`
 * bytes are gone: structured-trace payloads (summarised by the events
 * themselves), then the FX code of graphs, then captured tensor data.
 * Returns DR_OK, or DR_ERR_ARG when nothing is left to drop. */
static int drop_payloads(Pack *p, int64_t need) {
    static const char *const classes[][2] = {
        {"structured-trace payload",
         "SELECT b.id, length(b.data), e.text FROM blobs b JOIN (SELECT ev.blob_id,"
         " coalesce(t.text, '') || ' of ' || coalesce(c.text, '-') AS text FROM events ev"
         " JOIN strings k ON k.id = ev.kind_id LEFT JOIN strings t ON t.id = ev.text_id"
         " LEFT JOIN strings c ON c.id = ev.compile_id WHERE k.text = 'trace') e"
         " ON e.blob_id = b.id WHERE length(b.data) > 96 ORDER BY length(b.data) DESC, b.id"},
        {"FX code of graph",
         "SELECT b.id, length(b.data), coalesce(c.text, '-') FROM blobs b JOIN events ev"
         " ON ev.blob_id = b.id JOIN strings k ON k.id = ev.kind_id LEFT JOIN strings c"
         " ON c.id = ev.compile_id WHERE k.text = 'graph' AND length(b.data) > 96"
         " ORDER BY length(b.data) DESC, b.id"},
        {"captured tensor data",
         "SELECT b.id, length(b.data), 'capture ' || v.capture || ' node ' || v.node"
         " FROM blobs b JOIN value_nodes v ON v.blob_id = b.id WHERE length(b.data) > 96"
         " ORDER BY length(b.data) DESC, b.id"},
    };
    int64_t gone = 0;
    for (size_t c = 0; c < 3 && gone < need; c++) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(p->db, classes[c][1], -1, &s, NULL) != SQLITE_OK)
            return sql_fail(p, "choosing payloads to drop");
        /* Collect first: the statement reads the table being updated. */
        struct Drop {
            int64_t id, len;
            char *what;
        } *d = NULL;
        size_t nd = 0, cap = 0;
        int64_t planned = gone;
        while (planned < need && sqlite3_step(s) == SQLITE_ROW) {
            if (nd == cap) {
                cap = cap ? cap * 2 : 64;
                struct Drop *n = realloc(d, cap * sizeof *n);
                if (!n) break;
                d = n;
            }
            const char *w = (const char *)sqlite3_column_text(s, 2);
            d[nd] = (struct Drop){sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
                                  strdup(w ? w : "")};
            planned += d[nd].len;
            nd++;
        }
        sqlite3_finalize(s);
        int rc = DR_OK;
        for (size_t i = 0; i < nd; i++) {
            char gone_text[160], detail[400];
            snprintf(gone_text, sizeof gone_text, "(dropped by dynrec pack --max-size: %lld bytes)",
                     (long long)d[i].len);
            snprintf(detail, sizeof detail, "%s %.300s (%lld bytes)", classes[c][0],
                     d[i].what ? d[i].what : "", (long long)d[i].len);
            if (rc == DR_OK) rc = put_blob(p, d[i].id, gone_text, strlen(gone_text), 0);
            if (rc == DR_OK) rc = note(p, "dropped", detail, d[i].len);
            gone += d[i].len;
            p->dropped++;
            p->dropped_bytes += d[i].len;
            free(d[i].what);
        }
        free(d);
        if (rc != DR_OK) return rc;
    }
    if (gone == 0) return DR_ERR_ARG;
    return exec_sql(p, "INSERT OR REPLACE INTO meta(key, value) SELECT 'pack.dropped',"
                       " count(*) || ' payloads (' || sum(n) || ' bytes): pack_log lists them'"
                       " FROM pack_log WHERE what = 'dropped'");
}

/* ---- the command ------------------------------------------------------- */

static void free_pack(Pack *p) {
    for (size_t i = 0; i < p->nrules; i++) {
        free(p->rules[i].from);
        free(p->rules[i].to);
    }
    free(p->rules);
    for (size_t i = 0; i < p->ntraced; i++) {
        free(p->traced[i].base);
        free(p->traced[i].lines);
    }
    free(p->traced);
    dr_map_free(&p->code_names);
    dr_map_free(&p->lib_dirs);
    dr_map_free(&p->site_dirs);
    for (size_t i = 0; i < p->nlib; i++) free(p->lib[i].text);
    free(p->lib);
    dr_dict_free(p->dict);
    if (p->db) sqlite3_close_v2(p->db);
    dr_trace_free(p->t);
}

static char *path_with(const char *path, const char *suffix) {
    char *s = NULL;
    return asprintf(&s, "%s%s", path, suffix) < 0 ? NULL : s;
}

int dr_pack(const DrPackOptions *o, FILE *msg, DrError *err) {
    Pack p = {.o = o, .err = err};
    char *work = path_with(o->out, ".pack-work"), *part = path_with(o->out, ".pack-part");
    int rc = DR_OK;
    if (!work || !part) {
        rc = dr_error(err, DR_ERR_NOMEM, "out of memory");
        goto done;
    }
    char rin[PATH_MAX], rout[PATH_MAX];
    if (realpath(o->in, rin) && realpath(o->out, rout) && strcmp(rin, rout) == 0) {
        rc = dr_error(err, DR_ERR_ARG, "%s: the pack would replace its own input; give another -o",
                      o->out);
        goto done;
    }
    if (!(p.t = dr_trace_open(o->in, err))) {
        rc = err->code;
        goto done;
    }
    if (o->redact && (rc = gather_redactions(&p)) != DR_OK) goto done;
    if (o->redact_source && (rc = gather_traced_lines(&p)) != DR_OK) goto done;
    unlink(work);
    if ((rc = dr_trace_copy_to(p.t, work, err)) != DR_OK) goto done;
    if (sqlite3_open_v2(work, &p.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        rc = dr_error(err, DR_ERR_IO, "%s: cannot open the working copy: %s", work,
                      p.db ? sqlite3_errmsg(p.db) : "out of memory");
        goto done;
    }
    sqlite3_db_config(p.db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(p.db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(p.db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    /* Only the checked tables go on: the input's views, triggers, indexes of
     * its own and foreign tables are dropped (today's views are written in
     * their place), so a pack never carries what the input's author made. */
    if ((rc = exec_sql(&p, "PRAGMA journal_mode=MEMORY; PRAGMA secure_delete=ON;")) != DR_OK ||
        (rc = dr_trace_strip_copy(p.db, work, dr_trace_schema_version(p.t), err)) != DR_OK)
        goto done;
    if ((rc = exec_sql(&p, "BEGIN;")) != DR_OK || (rc = load_dict(&p)) != DR_OK) goto done;
    if (o->redact) {
        if ((rc = redact_column(&p, "strings", "id", NULL, "text", NULL)) != DR_OK ||
            (rc = exec_sql(&p, "UPDATE meta SET value = '<redacted>' WHERE key LIKE 'env.%'"
                               " AND value != '<redacted>'")) != DR_OK ||
            (rc = redact_column(&p, "meta", "key", NULL, "value", "key NOT LIKE 'env.%'")) !=
                DR_OK ||
            (rc = redact_column(&p, "value_nodes", "capture", "node", "value", NULL)) != DR_OK)
            goto done;
    }
    if ((o->redact || o->redact_source) && (rc = redact_blobs(&p)) != DR_OK) goto done;
    if ((rc = write_log(&p)) != DR_OK || (rc = exec_sql(&p, "COMMIT")) != DR_OK) goto done;
    for (int round = 0;; round++) {
        if ((rc = vacuum_to(&p, part)) != DR_OK) goto done;
        int64_t size = file_size(part);
        if (!o->max_size || size <= o->max_size) break;
        if ((rc = exec_sql(&p, "BEGIN")) != DR_OK) goto done;
        /* Page overhead: ask for a little more than the excess. */
        rc = drop_payloads(&p, size - o->max_size + (size - o->max_size) / 8 + 4096);
        if (rc == DR_ERR_ARG || round > 20) {
            unlink(part);
            rc = dr_error(err, DR_ERR_ARG,
                          "%s: the trace's essential rows alone take %lld bytes, more than "
                          "--max-size %lld; nothing written (raise --max-size)",
                          o->in, (long long)size, (long long)o->max_size);
            goto done;
        }
        if (rc != DR_OK || (rc = exec_sql(&p, "COMMIT")) != DR_OK) goto done;
    }
    /* VACUUM INTO counts each copy in the schema cookie (header offset
     * 40): a fixed value keeps a pack of a pack byte-identical. */
    int fd = open(part, O_WRONLY | O_CLOEXEC);
    static const unsigned char cookie[4] = {0, 0, 0, 1};
    if (fd < 0 || pwrite(fd, cookie, 4, 40) != 4 || close(fd) != 0) {
        rc = dr_error(err, DR_ERR_IO, "%s: cannot write the pack: %s", part, strerror(errno));
        goto done;
    }
    if (rename(part, o->out) != 0) {
        rc = dr_error(err, DR_ERR_IO, "%s: cannot write the pack: %s", o->out, strerror(errno));
        goto done;
    }
    if (msg) {
        char *red = NULL;
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(p.db, "SELECT value FROM meta WHERE key = 'pack.redacted'", -1, &st,
                               NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            red = strdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        fprintf(msg, "dynrec: packed %s into %s (%lld bytes, from %lld)", o->in, o->out,
                (long long)file_size(o->out), (long long)file_size(o->in));
        if (red) fprintf(msg, "; redacted: %s", red);
        if (p.dropped)
            fprintf(msg, "; dropped %ld payloads (%lld bytes) to fit --max-size", p.dropped,
                    (long long)p.dropped_bytes);
        fputc('\n', msg);
        free(red);
    }
done:
    free_pack(&p);
    if (work) unlink(work);
    if (part) unlink(part);
    free(work);
    free(part);
    return rc;
}
