/* run.c -- `dynrec run`: embed CPython, run the script as `python` would, record.
 *
 * The interpreter is configured the way the `python` of the chosen virtual
 * environment configures itself (PyConfig_InitPythonConfig reads the same
 * environment variables; the venv's python is the executable, so its
 * pyvenv.cfg and site-packages apply), then Py_RunMain runs the script or
 * module: sys.argv, sys.path[0], __main__, tracebacks and SystemExit are
 * CPython's own code, not an imitation.  Before the script starts, the
 * built-in _dynrec module runs the Python adapter (adapter.py).
 *
 * The trace is closed after Py_RunMain returns, with the exit status; when
 * an uncaught KeyboardInterrupt makes CPython kill itself with SIGINT after
 * finalizing, a Py_AtExit callback closes it first.  SIGTERM is handled by
 * the writer thread (writer.c). */
#define _GNU_SOURCE 1
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "run.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cli/exit.h"
#include "../schema/trace.h"
#include "../replayer/sandbox.h"
#include "default_dict.h"
#include "hook.h"
#include "output.h"
#include "pycompat.h"
#include "session.h"
#include "writer.h"

/* `dynrec replay`'s driver: replayer/replay.py and what it imports
 * (definitions.py, value_kinds.py, recorded.py), built as modules of
 * _dynrec (embed.h); its run() is the replay's exit status. */
static const char replay_bootstrap[] =
    "import sys, _dynrec\n"
    "_dynrec.load_embedded('value_kinds', 'recorded', 'definitions', 'replay')\n"
    "status = _dynrec.replay.run()\n"
    "import atexit\n"
    "atexit._run_exitfuncs()\n"
    "sys.stdout.flush()\n"
    "sys.stderr.flush()\n"
    "_dynrec.replay_exit(status)\n";

#ifndef DR_DEFAULT_VENV
#define DR_DEFAULT_VENV ""
#endif

const char *dr_run_python_version(void) { return Py_GetVersion(); }

/* Stores what the program wrote to stdout and stderr (files "<stdout>",
 * "<stderr>"; meta output.NAME_bytes and output.NAME_complete). */
static void store_output(DrRecorder *rec) {
    static const char *const names[2] = {"stdout", "stderr"};
    for (int fd = 1; fd <= 2; fd++) {
        const char *data;
        size_t len;
        uint64_t total;
        int complete;
        if (dr_output_take(fd, &data, &len, &total, &complete) != 0) continue;
        char path[16], key[40], num[32];
        snprintf(path, sizeof path, "<%s>", names[fd - 1]);
        dr_rec_file(rec, path, names[fd - 1], data, len);
        snprintf(key, sizeof key, "output.%s_bytes", names[fd - 1]);
        snprintf(num, sizeof num, "%llu", (unsigned long long)total);
        dr_rec_meta(rec, key, num);
        snprintf(key, sizeof key, "output.%s_complete", names[fd - 1]);
        dr_rec_meta(rec, key, complete && total == len ? "1" : "0");
    }
}

/* The end of the run: its output, then the session's end (session.c). */
static void finish_run(int status, int sig) {
    if (dr_session.rec) store_output(dr_session.rec);
    dr_session_finish(status, sig);
}

/* _dynrec.replay_exit(status): the end of a replay's driver, after its
 * exit functions ran and its output was flushed: the trace is finished and
 * the process ends without Python's finalization.  Tearing down torch
 * after a compile takes about as long as a small compile (a second for a
 * BERT), and nothing of a replay's is left in it to run. */
static void finish_run(int status, int sig);
static PyObject *m_replay_exit(PyObject *self, PyObject *arg) {
    (void)self;
    long status = PyLong_AsLong(arg);
    if (status == -1 && PyErr_Occurred()) return NULL;
    finish_run((int)status, 0);
    fflush(NULL);
    _exit((int)(status & 0xff));
}

static PyMethodDef replay_methods[] = {
    {"replay_exit", m_replay_exit, METH_O, "replay_exit(status): ends a replay's driver."},
    {NULL, NULL, 0, NULL}};

/* _dynrec, with replay_exit for a replay's driver. */
static PyObject *replay_module(void) {
    PyObject *mod = dr_session_module();
    if (mod && PyModule_AddFunctions(mod, replay_methods) < 0) Py_CLEAR(mod);
    return mod;
}

static void at_python_exit(void) {
    if (dr_py_unhandled_keyboard_interrupt()) finish_run(128 + SIGINT, SIGINT);
}

/* SystemExit ends the process inside Py_RunMain (Py_Exit calls exit), so
 * the status reaches dynrec only here. */
static void at_process_exit(int status, void *arg) {
    (void)arg;
    finish_run(status, 0);
}

/* The deferred part of starting: runs on the writer thread while Python
 * initializes.  The default dictionary: Dynamo's structured-trace payloads,
 * guard trees and graph code are small templated texts that it shrinks by a
 * third beyond plain zstd (schema/SCHEMA.md).  Then the meta every trace
 * starts with (session.c) and what only `dynrec run` knows: what a replay
 * or re-run is of, how it was confined, its --set overrides. */
static int setup_trace(DrTrace *t, void *ud, DrError *err) {
    const DrStartInfo *si = ud;
    const DrRunOptions *o = si->o;
    int rc = dr_trace_use_dict(t, dr_default_dict, sizeof dr_default_dict, err);
    if (rc == DR_OK) rc = dr_trace_begin(t, err);
    if (rc == DR_OK) rc = dr_session_start_meta(t, si, err);
    const char *of = o->trace_label ? o->trace_label : o->rerun_of;
    if (rc == DR_OK && o->replay_of) rc = dr_trace_set_meta(t, "replay_of", of, err);
    else if (rc == DR_OK && o->rerun_of) rc = dr_trace_set_meta(t, "rerun_of", of, err);
    if (rc == DR_OK && o->rerun_of)
        rc = dr_trace_set_meta(t, "sandbox", dr_sandbox_mode_desc(dr_sandbox_mode_of(o->sandboxed)),
                               err);
    for (int i = 0; rc == DR_OK && i < o->nset; i++) {
        const char *eq = strchr(o->set[i], '=');
        char key[300];
        if (!eq) continue;
        snprintf(key, sizeof key, "set.%.*s", (int)(eq - o->set[i] < 250 ? eq - o->set[i] : 250),
                 o->set[i]);
        rc = dr_trace_set_meta(t, key, eq + 1, err);
    }
    if (rc == DR_OK) rc = dr_trace_commit(t, err);
    return rc;
}

/* The environment a pip-installed binary lives in: for
 * PREFIX/lib/pythonX.Y/site-packages/dynrec/_bin/dynrec, a malloc'd PREFIX
 * when PREFIX/bin/python is there (a venv, or a Python's own prefix);
 * NULL for a binary anywhere else (the Makefile's build/dynrec). */
static char *installed_prefix(void) {
    char *exe = realpath("/proc/self/exe", NULL);
    if (!exe) return NULL;
    static const char tail[] = "/site-packages/dynrec/_bin/dynrec";
    size_t n = strlen(exe), nt = sizeof tail - 1;
    char *lib = NULL;
    if (n > nt && strcmp(exe + n - nt, tail) == 0) {
        exe[n - nt] = 0; /* PREFIX/lib/pythonX.Y */
        char *slash = strrchr(exe, '/');
        if (slash && strncmp(slash, "/python", 7) == 0 && slash - exe >= 4 &&
            strncmp(slash - 4, "/lib", 4) == 0) {
            slash[-4] = 0;
            lib = exe;
        }
    }
    if (!lib) free(exe);
    return lib;
}

/* The python whose environment the script runs in: $VIRTUAL_ENV, else the
 * environment a pip-installed dynrec is installed in, else the venv dynrec
 * was built for, else the interpreter it links. */
char *dr_run_choose_python(void) {
    char *prefix = installed_prefix();
    const char *venvs[] = {getenv("VIRTUAL_ENV"), prefix, DR_DEFAULT_VENV};
    for (size_t i = 0; i < 3; i++) {
        if (!venvs[i] || !*venvs[i]) continue;
        char *p = NULL;
        if (asprintf(&p, "%s/bin/python", venvs[i]) < 0) break;
        if (access(p, X_OK) == 0) {
            free(prefix);
            return p;
        }
        free(p);
    }
    free(prefix);
    return NULL;
}

static int append_args(PyWideStringList *list, int n, char *const *v) {
    for (int i = 0; i < n; i++) {
        wchar_t *w = Py_DecodeLocale(v[i], NULL);
        if (!w) return -1;
        PyStatus st = PyWideStringList_Append(list, w);
        PyMem_RawFree(w);
        if (PyStatus_Exception(st)) return -1;
    }
    return 0;
}

/* A seed in [1, 2^32). */
static unsigned long pick_seed(void) {
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) rnd = (uint32_t)time(NULL) ^ getpid();
    return rnd ? rnd : 1;
}

/* A recorded seed: a decimal number below 2^32, or 0 for none. */
static unsigned long seed_value(const char *s) {
    if (!s || !*s) return 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    return *end || v >= (1ull << 32) ? 0 : (unsigned long)v;
}

/* --rerun-of: the recorded hash seed, `random` and NumPy seeds (0 where a
 * trace has none) and the config at start (dr_session.config_start).  Returns 0, or
 * -1 with error filled when the trace cannot be used. */
static int read_rerun_of(const char *trace, unsigned long seeds[3], DrError *error) {
    static const char *const keys[3] = {"hash_seed", "seed.random", "seed.numpy"};
    DrError err = {0};
    DrTrace *t = dr_trace_open(trace, &err);
    if (!t) {
        dr_error(error, err.code, "--rerun-of: %s", err.msg);
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        char *v = NULL;
        if (dr_trace_get_meta(t, keys[i], &v, &err) == DR_OK) seeds[i] = seed_value(v);
        free(v);
    }
    char *cfg = NULL;
    DrError e2 = {0};
    if (dr_trace_query_text(t,
                            "SELECT data FROM v_ev WHERE kind = 'config' AND text = 'start'"
                            " AND json_valid(data) ORDER BY seq LIMIT 1",
                            &cfg, &e2) == DR_OK)
        dr_session.config_start = cfg;
    dr_trace_free(t);
    return 0;
}

int dr_run(const DrRunOptions *o, DrError *error) {
    static DrRunOptions opts; /* lives until the on_exit handler has run */
    opts = *o;
    char *src = NULL, *path = NULL, *python = NULL;
    size_t srclen = 0;
    int status = 2;
    DrError err = {0};

    struct stat sb;
    if (opts.sandboxed) {
        /* Confined by bwrap: the filter goes on before anything reads the
         * trace, and holds for every thread started later. */
        char why[200];
        DrSandboxMode mode = dr_sandbox_mode_of(opts.sandboxed);
        if (mode == DR_SBX_NONE) {
            dr_error(error, DR_ERR_ARG, "--sandboxed: unknown mode %s", opts.sandboxed);
            return DR_EX_USAGE;
        }
        if (dr_sandbox_lockdown(mode, why, sizeof why) != 0) {
            dr_error(error, DR_ERR_ARG, "--sandboxed: %s", why);
            return DR_EX_NOPERM;
        }
    }
    if (opts.replay_of) {
        /* A replay runs the driver (replayer/replay.py), not the script: the
         * trace's seeds and start config as in a re-run, and its script's
         * name in meta so the two traces compare. */
        opts.rerun_of = opts.replay_of;
        DrError e = {0};
        dr_session.source = dr_trace_open(opts.replay_of, &e);
        char *script = NULL, *module = NULL;
        if (dr_session.source) {
            dr_trace_get_meta(dr_session.source, "script", &script, NULL);
            if (!script) dr_trace_get_meta(dr_session.source, "module", &module, NULL);
        }
        if (!dr_session.source || (!script && !module)) {
            dr_error(error, dr_session.source ? DR_ERR_CORRUPT : e.code, "--replay-of: %s",
                     dr_session.source ? "the trace names no script" : e.msg);
            free(script);
            free(module);
            dr_trace_free(dr_session.source);
            dr_session.source = NULL;
            return DR_EX_USAGE;
        }
        static char *replay_target; /* lives as long as opts */
        free(replay_target);
        replay_target = script ? script : module;
        if (script) free(module);
        char *cwd = NULL;
        if (script && script[0] != '/' &&
            dr_trace_get_meta(dr_session.source, "cwd", &cwd, NULL) == DR_OK && cwd &&
            cwd[0] == '/') {
            /* As recorded, relative to the recorded cwd: the comparison
             * names files relative to the script's directory. */
            char *abs = NULL;
            if (asprintf(&abs, "%s/%s", cwd, script) >= 0) {
                free(replay_target);
                replay_target = abs;
            }
        }
        free(cwd);
        opts.target = replay_target;
        opts.is_module = script == NULL;
    } else if (!opts.is_module && stat(opts.target, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        /* A directory with __main__.py: CPython runs it; its source is
         * stored at exit as the main module's file. */
    } else if (!opts.is_module) {
        src = dr_session_slurp(opts.target, &srclen);
        if (!src) {
            dr_error(error, DR_ERR_ARG, "cannot open script %s: %s", opts.target, strerror(errno));
            return DR_EX_USAGE;
        }
    }
    /* A re-run or replay writes where its caller said, whatever the rank. */
    path = opts.rerun_of || opts.replay_of ? strdup(opts.trace_path)
                                           : dr_session_trace_path(opts.trace_path, opts.target);
    if (!path) { /* path stays allocated: the exit handlers name the trace */
        dr_error(error, DR_ERR_IO,
                 "cannot pick a trace name in the current directory; "
                 "give one with -o");
        free(src);
        return DR_EX_CANTCREAT;
    }
    opts.trace_path = path;
    dr_session.opts = &opts;

    /* Seeds: the hash seed (the user's PYTHONHASHSEED, or one chosen here
     * and given to CPython through PyConfig) and seeds for `random` and
     * NumPy, so a rerun can use the same; --rerun-of takes the recorded ones. */
    unsigned long recorded[3] = {0, 0, 0};
    if (opts.rerun_of && read_rerun_of(opts.rerun_of, recorded, error) != 0) {
        free(path);
        free(src);
        return DR_EX_USAGE;
    }
    const char *env_seed = getenv("PYTHONHASHSEED");
    unsigned long seed = 0;
    static char seed_text[32]; /* read by the writer thread */
    if (env_seed && *env_seed) {
        snprintf(seed_text, sizeof seed_text, "%s", env_seed);
    } else {
        seed = recorded[0] ? recorded[0] : pick_seed();
        snprintf(seed_text, sizeof seed_text, "%lu", seed);
    }
    dr_session.seeds[0] = recorded[1] ? recorded[1] : pick_seed();
    dr_session.seeds[1] = recorded[2] ? recorded[2] : pick_seed();
    python = dr_run_choose_python();

    /* Only the checks that can fail at once happen here; the writer thread
     * makes the file a trace while Python starts. */
    if (dr_trace_reserve(path, o->trace_path != NULL, &err) != DR_OK) {
        *error = err;
        status = DR_EX_CANTCREAT;
        goto out;
    }
    if (dr_hook_init() != 0) {
        dr_error(error, DR_ERR_NOMEM, "out of memory");
        status = DR_EX_CANTCREAT;
        goto out;
    }
    static DrStartInfo si; /* read by the writer thread until the trace is closed */
    si = (DrStartInfo){.o = &opts,
                       .python = python ? python : "",
                       .seed = seed_text,
                       .seeded = 1,
                       .src = src,
                       .srclen = srclen,
                       .seeds = {dr_session.seeds[0], dr_session.seeds[1]}};
    dr_session_start_info(&si);
    dr_session.rec = dr_rec_start_deferred(path, setup_trace, &si, dr_hook_snapshot, &err);
    if (!dr_session.rec) {
        *error = err;
        status = DR_EX_CANTCREAT;
        goto out;
    }
    dr_rec_keep_library(dr_session.rec, opts.all_frames);
    dr_rec_handle_sigterm(dr_session.rec);
    pthread_atfork(NULL, NULL, dr_session_atfork_child);

    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0;
    if (!(env_seed && *env_seed)) {
        config.use_hash_seed = 1;
        config.hash_seed = seed;
    }
    PyStatus st = PyStatus_Ok();
    if (python) st = PyConfig_SetBytesString(&config, &config.executable, python);
    if (!PyStatus_Exception(st) && opts.replay_of)
        st = PyConfig_SetBytesString(&config, &config.run_command, replay_bootstrap);
    else if (!PyStatus_Exception(st))
        st = PyConfig_SetBytesString(
            &config, opts.is_module ? &config.run_module : &config.run_filename, opts.target);
    char *argv0 = opts.is_module ? "-m" : (char *)opts.target;
    if (!PyStatus_Exception(st) && (append_args(&config.argv, 1, &argv0) < 0 ||
                                    append_args(&config.argv, opts.argc, opts.argv) < 0))
        st = PyStatus_NoMemory();
    if (!PyStatus_Exception(st)) {
        char *orig[3] = {python ? python : "python", opts.is_module ? "-m" : NULL,
                         (char *)opts.target};
        if (append_args(&config.orig_argv, 1, &orig[0]) < 0 ||
            (opts.is_module && append_args(&config.orig_argv, 1, &orig[1]) < 0) ||
            append_args(&config.orig_argv, 1, &orig[2]) < 0 ||
            append_args(&config.orig_argv, opts.argc, opts.argv) < 0)
            st = PyStatus_NoMemory();
    }
    if (!PyStatus_Exception(st) &&
        PyImport_AppendInittab("_dynrec", opts.replay_of ? replay_module : dr_session_module) < 0)
        st = PyStatus_NoMemory();
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
        if (PyStatus_IsExit(st)) {
            status = st.exitcode;
        } else {
            dr_error(error, DR_ERR_ARG, "Python failed to start: %s%s%s", st.func ? st.func : "",
                     st.func ? ": " : "", st.err_msg ? st.err_msg : "");
            status = 1;
        }
        finish_run(status, 0);
        goto out;
    }
    Py_AtExit(at_python_exit);
    on_exit(at_process_exit, NULL);
    dr_session_run_adapter();
    if (opts.all_frames) dr_hook_install();
    /* A benchmark knob: the hook installed but only forwarding frames, to
     * measure what any frame-evaluation function costs by itself. */
    if (getenv("DYNREC_BENCH_NOCOUNT")) dr_hook_set_counting(0);
    if (dr_output_start() != 0)
        dr_rec_event(dr_session.rec, (int64_t)PyThread_get_thread_ident(), "recorder_error", 0,
                     "output: out of memory; the program's output is not kept", 55, NULL, 0);
    status = Py_RunMain();
    finish_run(status, 0);
out:
    dr_output_free();
    dr_hook_free();
    free(dr_session.config_start);
    dr_session.config_start = NULL;
    dr_trace_free(dr_session.source);
    dr_session.source = NULL;
    free(src);
    free(python);
    return status;
}
