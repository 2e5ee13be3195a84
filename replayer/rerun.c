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
 * code that came in a file, so it needs --trust.
 *
 * What rerun shares with replay (the child, its environment, loading the
 * traces) is in child.c. */
#define _GNU_SOURCE 1
#include "rerun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../recorder/run.h"
#include "../schema/json.h"
#include "../schema/sign.h"
#include "child.h"

static void note(DrChild *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(DrChild *r, const char *fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    const char *line = dr_child_safe(r, buf, 0);
    dr_vec_push(&r->notes, (char *)line);
    fprintf(r->msgs, "dynrec rerun: %s\n", line);
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
static long line_diff(DrChild *r, const char *name, const char *old, size_t oldlen, const char *cur,
                      size_t curlen, int max) {
    DrStrVec a = {0}, b = {0};
    lines_of(&r->arena, old, oldlen, &a);
    lines_of(&r->arena, cur, curlen, &b);
    long n = a.n, m = b.n, changed = 0, shown = 0;
    if (n > 3000 || m > 3000) {
        fprintf(r->msgs, "  (%s is too long to show its changed lines)\n",
                dr_child_safe(r, name, 0));
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
            AT(i, j) = strcmp(a.v[i], b.v[j]) == 0    ? AT(i + 1, j + 1) + 1
                       : AT(i + 1, j) >= AT(i, j + 1) ? AT(i + 1, j)
                                                      : AT(i, j + 1);
    long i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && strcmp(a.v[i], b.v[j]) == 0) {
            i++, j++;
        } else if (i < n && (j == m || AT(i + 1, j) >= AT(i, j + 1))) {
            if (shown++ < max)
                fprintf(r->msgs, "  -%ld: %s\n", i + 1, dr_child_safe(r, a.v[i], 200));
            i++, changed++;
        } else {
            if (shown++ < max)
                fprintf(r->msgs, "  +%ld: %s\n", j + 1, dr_child_safe(r, b.v[j], 200));
            j++, changed++;
        }
    }
#undef AT
    if (shown > max) fprintf(r->msgs, "  ... and %ld more changed lines\n", shown - max);
    free(L);
    dr_vec_free(&a);
    dr_vec_free(&b);
    return changed;
}

/* Compares each stored source with the file at its recorded path; says
 * which changed (and, for the script, which lines). */
static void check_sources(DrChild *r, DrChildFiles *f) {
    for (long i = 0; i < f->path.n; i++) {
        char *abs = dr_path_normalize(&r->arena, r->cwd, f->path.v[i]);
        if (!abs) continue;
        size_t curlen = 0, oldlen = 0;
        char *cur = dr_child_read_file(abs, &curlen);
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
            else snprintf(buf, sizeof buf, "%.500s", f->path.v[i]);
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
 * run_cwd and run_target.  Returns 0, or an exit status with error filled
 * (empty when out of memory). */
static int lay_out(DrChild *r, DrChildFiles *f, DrError *error) {
    if (!r->cwd || r->cwd[0] != '/') {
        dr_error(error, DR_ERR_CORRUPT,
                 "%s records no absolute working directory; cannot lay "
                 "out its sources",
                 dr_trace_path(r->t));
        return DR_EX_DATAERR;
    }
    for (long i = 0; i < f->path.n; i++)
        if (has_dotdot(f->path.v[i]) || strchr(f->path.v[i], '\n')) {
            dr_error(error, DR_ERR_CORRUPT,
                     "refusing %s: its stored file name '%s' would "
                     "escape the temporary directory",
                     dr_trace_path(r->t), dr_child_safe(r, f->path.v[i], 300));
            return DR_EX_DATAERR;
        }
    if (r->script && has_dotdot(r->script)) {
        dr_error(error, DR_ERR_CORRUPT,
                 "refusing %s: its script name '%s' would escape the "
                 "temporary directory",
                 dr_trace_path(r->t), dr_child_safe(r, r->script, 300));
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
        if (ok &&
            dr_trace_read_blob(r->t, atoll(f->blob.v[i]), 64u << 20, &data, &len, &err) != DR_OK) {
            fprintf(r->msgs, "dynrec rerun: %s\n", err.msg);
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
            dr_error(error, DR_ERR_IO, "cannot write %s: %s", dr_child_safe(r, dest, 0),
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
            dr_error(error, DR_ERR_CORRUPT,
                     "%s does not store its script %s; nothing to run "
                     "from the trace",
                     dr_trace_path(r->t), dr_child_safe(r, r->script, 300));
            return DR_EX_DATAERR;
        }
    }
    note(r, "running the %ld file%s stored in the trace from %s%s", written,
         written == 1 ? "" : "s", r->tmpdir,
         r->left_out ? " (files outside the script's directory left out)" : "");
    return 0;
}

/* Runs `dynrec run -q -o out --rerun-of trace [--set ...] target args` in
 * run_cwd with env; returns its wait status, or -1. */
static int run_child(DrChild *r, const DrRerunOptions *o, const DrSandbox *sb, const char *out,
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
    dr_child_push_sandbox_and_sets(&argv, sb, o->nset, o->set);
    if (r->module) dr_vec_push(&argv, "-m");
    else dr_vec_push(&argv, "--");
    dr_vec_push(&argv, r->run_target);
    for (long i = 0; i < r->args.n; i++) dr_vec_push(&argv, r->args.v[i]);
    /* With --json the report owns stdout: the program writes to stderr. */
    int st = dr_child_spawn(r, sb, "rerun", o->self, &argv, env, r->run_cwd, o->json);
    dr_vec_free(&argv);
    return st;
}

static void report_header(DrChild *r, FILE *out, const char *trace, const char *newpath,
                          const DrRerunOptions *o, const char *new_torch, int st, const DrDiff *d) {
    fputs("rerun of ", out);
    fputs(trace, out);
    fputs(" -> ", out);
    fputs(newpath, out);
    fputc('\n', out);
    if (r->torch_version && new_torch && strcmp(r->torch_version, new_torch) != 0)
        fprintf(out, "  recorded on torch %s, re-run on %s\n",
                dr_child_safe(r, r->torch_version, 100), dr_child_safe(r, new_torch, 100));
    for (int i = 0; i < o->nset; i++) fprintf(out, "  --set %s\n", o->set[i]);
    for (long i = 0; i < r->notes.n; i++) fprintf(out, "  %s\n", r->notes.v[i]);
    if (WIFEXITED(st))
        fprintf(out, "  the program exited with %d (recorded: %s)\n", WEXITSTATUS(st),
                dr_child_safe(r, r->exit_status ? r->exit_status : "?", 40));
    else if (WIFSIGNALED(st)) fprintf(out, "  the program was killed by signal %d\n", WTERMSIG(st));
    if (dr_diff_count(d, DR_CAT_OUTPUT))
        fputs("  the program's own output differs from the recording's (see output below)\n", out);
    fputs("  not made deterministic: wall-clock reads, thread timing, files or network the "
          "program reads\n",
          out);
}

static void json_header(DrChild *r, FILE *out, const char *trace, const char *newpath,
                        const DrRerunOptions *o, const char *new_torch, int st);

int dr_rerun(const DrRerunOptions *o, FILE *out, FILE *msgs, DrError *error) {
    DrChild R = {.msgs = msgs}, *r = &R;
    DrChildFiles files = {0};
    DrStrVec env = {0};
    DrTrace *nt = NULL;
    DrModel *ma = NULL, *mb = NULL;
    DrDiff *d = NULL;
    int rc = 1;
    DrError err = {0};
    char sbx_dir[4096] = ""; /* a confined re-run's snapshot and output */
    char *python = NULL;

    /* The recording's decisions are read first; the run facts come with them. */
    if ((rc = dr_child_load_recording(o->trace, &r->t, &ma, error)) != 0) goto done;
    rc = 1;
    r->cwd = ma->cwd;
    r->script = ma->script;
    r->module = ma->module;
    r->python_version = ma->python_version;
    r->torch_version = ma->torch_version;
    r->exit_status = ma->exit_status;
    char *argv_json = dr_child_meta(r, "argv");
    if ((!r->script && !r->module) || !r->cwd || !argv_json ||
        dr_child_parse_strings(&r->arena, argv_json, &r->args) != 0) {
        dr_error(error, DR_ERR_CORRUPT,
                 "%s does not record a command to re-run (script, cwd and "
                 "argv in meta); record one with 'dynrec run'",
                 o->trace);
        rc = DR_EX_DATAERR;
        goto done;
    }
    if (dr_child_other_python("re-run", o->trace, r->python_version, error)) {
        rc = DR_EX_UNAVAILABLE;
        goto done;
    }
    /* dynrec.record/start in a running program (recorder/inproc.c): the
     * trace holds part of a run, a re-run would record all of it. */
    char *by = dr_child_meta(r, "recorded_by");
    if (by && strcmp(by, "in-process") == 0) {
        dr_error(error, DR_ERR_ARG,
                 "%s was recorded in process (dynrec.record): it holds part "
                 "of a run, and a re-run records the whole program; nothing was run. "
                 "Replay its compiles with 'dynrec replay %s', or run the program again "
                 "and compare the two traces with 'dynrec diff'",
                 o->trace, o->trace);
        rc = DR_EX_USAGE;
        goto done;
    }
    if (o->from_trace && !o->trust) {
        dr_error(error, DR_ERR_ARG,
                 "--from-trace runs the code stored in %s; nothing was run. "
                 "If you trust where the file came from, add --trust",
                 o->trace);
        rc = DR_EX_NOPERM;
        goto done;
    }
    /* A re-run executes the recorded command line and environment, which
     * whoever wrote the file chose (`-m timeit -s CODE` runs CODE): only a
     * trace this user recorded here runs without --trust (sign.h). */
    DrSigState sig = dr_trace_signature(r->t);
    if (sig != DR_SIG_OWN && !o->trust) {
        dr_error(error, DR_ERR_ARG,
                 "%s was not recorded by you here (%s): a re-run executes "
                 "its recorded command line and environment; nothing was run. If you "
                 "trust where the file came from, add --trust",
                 o->trace, dr_sig_text(sig));
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
            dr_error(error, DR_ERR_IO, "cannot make a temporary directory %s: %s", sbx_dir,
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
            *error = err;
            rc = DR_EX_DATAERR;
            goto done;
        }
        run_of = copy;
        note(r, "sandbox: %s", dr_sandbox_mode_desc(DR_SBX_RERUN));
        box.self = o->self;
        box.mode = DR_SBX_RERUN;
        box.python = python = dr_run_choose_python();
    }
    if (o->nset && (rc = dr_child_check_sets(o->nset, o->set, msgs)) != 0) goto done;
    if (dr_child_load_files(r, &files, &err) != DR_OK) {
        *error = err;
        rc = DR_EX_DATAERR;
        goto done;
    }
    const char *outp = o->out ? o->out : dr_child_default_out(r, o->trace, "rerun");
    char *newpath = outp ? dr_child_absolute(r, outp) : NULL;
    char *tracepath = dr_child_absolute(r, o->trace);
    if (!newpath || !tracepath) {
        dr_error(error, DR_ERR_IO, "cannot name the new trace; give one with -o");
        goto done;
    }
    if (o->from_trace) {
        if (dr_child_tmpdir(r, "rerun", error) != 0) goto done;
        if ((rc = lay_out(r, &files, error)) != 0) goto done;
    } else {
        struct stat sb;
        r->run_target = r->module ? r->module : r->script;
        if (stat(r->cwd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            r->run_cwd = r->cwd;
        } else {
            if (dr_child_tmpdir(r, "rerun", error) != 0) goto done;
            r->run_cwd = r->tmpdir;
            note(r, "the recorded directory %s is gone; running in %s", r->cwd, r->tmpdir);
        }
        if (r->script) {
            char *abs = dr_path_normalize(&r->arena, r->cwd, r->script);
            if (!abs || access(abs, R_OK) != 0) {
                dr_error(error, DR_ERR_ARG,
                         "the recorded script %s is not there (%s); to run "
                         "the copy stored in the trace, use --from-trace --trust",
                         dr_child_safe(r, abs ? abs : r->script, 0), strerror(errno));
                rc = DR_EX_NOINPUT;
                goto done;
            }
            if (r->run_cwd != r->cwd) r->run_target = abs;
        }
        check_sources(r, &files);
    }
    /* A stranger's recorded environment passes the replay's allow-list
     * only (no paths, nothing that makes Python import). */
    int erc = foreign ? dr_child_replay_env(r, &env, box.bwrap != NULL, 0, &err)
                      : dr_child_rerun_env(r, &env, &err);
    if (erc != DR_OK) {
        *error = err;
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
        dr_error(error, DR_ERR_IO, "the re-run could not start");
        rc = 1;
        goto done;
    }
    if (box.bwrap &&
        (access(child_out, F_OK) != 0 || dr_child_move_out(child_out, newpath, msgs) != 0)) {
        dr_error(error, DR_ERR_IO, "the confined re-run left no trace%s",
                 WIFSIGNALED(st) ? " (killed by a signal)" : "");
        rc = 1;
        goto done;
    }
    if ((rc = dr_child_load_result("re-run", newpath, &nt, &mb, error)) != 0) goto done;
    rc = 1;
    DrCompareOptions co = {.label_a = o->trace, .label_b = newpath, .ignore = o->ignore};
    if (!(d = dr_compare(ma, mb, &co, &err))) {
        *error = err;
        goto done;
    }
    char *new_torch = NULL;
    dr_trace_get_meta(nt, "torch_version", &new_torch, NULL);
    if (o->json) {
        fputs("{\n  ", out);
        json_header(r, out, o->trace, newpath, o, new_torch, st);
        dr_diff_print_json_fields(d, out);
        fputs("\n}\n", out);
    } else {
        report_header(r, out, o->trace, newpath, o, new_torch, st, d);
        dr_diff_print(d, out, 0);
        dr_child_print_env_note(r, out, dr_diff_identical(d));
    }
    free(new_torch);
    rc = dr_diff_identical(d) ? 0 : 1;
    if (fflush(out) != 0) rc = 1;
done:
    dr_child_rmtree(r->tmpdir);
    dr_child_rmtree(sbx_dir);
    free(python);
    dr_diff_free(d);
    dr_model_free(mb);
    dr_model_free(ma);
    dr_trace_free(nt);
    dr_child_free_files(&files);
    dr_vec_free(&env);
    dr_vec_free(&r->args);
    dr_vec_free(&r->notes);
    dr_vec_free(&r->changed);
    dr_trace_free(r->t);
    dr_arena_free(&r->arena);
    return rc;
}

static void json_header(DrChild *r, FILE *out, const char *trace, const char *newpath,
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
    fputs("], \"env_left_out\": ", out);
    dr_json_string(out, r->env_left_out);
    fprintf(out, ", \"exit_status\": %d, \"recorded_exit_status\": ",
            WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    dr_json_string(out, r->exit_status);
    fputs("},\n  ", out);
}
