/* test_model.c -- unit tests of the comparison model (replayer/model.c) and
 * the comparison (replayer/compare.c), on traces made here, without torch.
 *
 * Each trace is written with the trace store's own writer (schema/trace.h,
 * as the recorder's writer thread calls it) from a few lines of a small
 * script, one event a line (see build() for the verbs), so that a row of a
 * table reads as what Dynamo did.  The tables check the frame key and the
 * compile label (how a frame and a compile are named across traces:
 * relative files, library prefixes, resume functions, recompiles, resets,
 * threads), the masked lines the model compares, and, for pairs of traces,
 * the first divergence dr_compare reports (category, what, compile ids,
 * both sides), one row per rule of replayer/COMPARE.md; then a replay's
 * "reproduced N/M" and a rank's collectives. */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../replayer/model.h"
#include "../schema/ident.h"
#include "../schema/json.h"
#include "trace.h"

static char model_dir[64];

static void model_setup(void) {
    snprintf(model_dir, sizeof model_dir, "/tmp/dynrec-test-model-XXXXXX");
    cr_assert_not_null(mkdtemp(model_dir), "mkdtemp failed");
}

static void model_teardown(void) {
    DIR *d = opendir(model_dir);
    if (!d) return;
    struct dirent *e;
    char p[PATH_MAX + 256];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", model_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(model_dir);
}

TestSuite(model, .init = model_setup, .fini = model_teardown);

/* ---- traces from a script ---------------------------------------------------- */

/* A loaded trace: the model borrows the open trace. */
typedef struct {
    DrTrace *t;
    DrModel *m;
} Loaded;

static void loaded_free(Loaded *l) {
    dr_model_free(l->m);
    dr_trace_free(l->t);
}

/* Splits line at '|' into at most max fields (in place); "\\n" in a field
 * becomes a newline, a field "-" becomes NULL.  Returns how many. */
static int fields(char *line, char **f, int max) {
    int n = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *bar = strchr(p, '|');
        if (!bar) break;
        *bar = 0;
        p = bar + 1;
    }
    for (int i = 0; i < n; i++) {
        char *w = f[i];
        for (char *r = f[i]; *r; r++) {
            if (r[0] == '\\' && r[1] == 'n') *w++ = '\n', r++;
            else *w++ = *r;
        }
        *w = 0;
        if (strcmp(f[i], "-") == 0) f[i] = NULL;
    }
    return n;
}

static const char *field(char **f, int n, int i, const char *dflt) {
    return i < n && f[i] ? f[i] : dflt;
}

/* Writes the trace of script to name in the test's directory and loads it.
 * One event a line, fields split by '|', "-" for none:
 *   meta|KEY|VALUE                     (defaults: cwd /home/a/proj, script m.py,
 *                                       torch_version 2.14.1, exit_status 0)
 *   code|N|FILE|QUALNAME|LINE          code object N (0..15)
 *   cb|N                               a callback of code N
 *   compile|N|CID|RECOMPILE[|OUTCOME|GRAPHS|THREAD|THREAD_NAME|REASON]
 *                                      N "-": no code; THREAD_NAME "-": none
 *   guard|CID|TEXT
 *   gf|N|CID|FAILED_CID|REASON         a guard failure
 *   gb|N|CID|TYPE|FILE|LINE|REASON     a graph break
 *   graph|CID|BACKEND|NODES|CODE
 *   err|CID|EXC_TYPE|SUPPRESSED|MESSAGE
 *   spec|CID|ACTION|DETAIL             speculation
 *   se|CID|STATUS|DESCRIPTION          a side effect
 *   cfg|CID|JSON                       CID "-": the config at start
 *   out|stdout|TEXT|BYTES              the program's output as kept
 * An event's time is taken from its line number (never compared); its
 * thread is 1 unless THREAD is given. */
static Loaded build(const char *name, const char *script) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", model_dir, name);
    DrError err = {0};
    DrTrace *t = dr_trace_create(path, 1, &err);
    cr_assert_not_null(t, "create %s: %s", path, err.msg);
    cr_assert_eq(dr_trace_begin(t, &err), DR_OK, "%s", err.msg);
    static const char *const defaults[][2] = {{"cwd", "/home/a/proj"},
                                              {"script", "m.py"},
                                              {"torch_version", "2.14.1"},
                                              {"exit_status", "0"}};
    for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
        cr_assert_eq(dr_trace_set_meta(t, defaults[i][0], defaults[i][1], &err), DR_OK, "%s",
                     err.msg);
    int64_t code[16] = {0};
    char *copy = strdup(script), *save = NULL;
    cr_assert_not_null(copy);
    long lineno = 0;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        char *f[12];
        int n = fields(line, f, 12);
        const char *verb = f[0] ? f[0] : "";
        DrEvent ev = {.t_ns = lineno * 1000 + (long)strlen(name), .thread = 1};
        int64_t seq = 1;
        char data[1024];
        int ci = n > 1 && f[1] ? atoi(f[1]) & 15 : -1;
        if (strcmp(verb, "meta") == 0) {
            cr_assert_eq(dr_trace_set_meta(t, f[1], field(f, n, 2, ""), &err), DR_OK, "%s",
                         err.msg);
        } else if (strcmp(verb, "code") == 0) {
            code[ci] = dr_trace_add_code(t, f[2], f[3], atol(f[4]), &err);
            cr_assert_gt(code[ci], 0, "%s", err.msg);
        } else if (strcmp(verb, "cb") == 0) {
            ev.kind = "callback";
            ev.code_id = code[ci];
            ev.data = "{\"outcome\": \"compiled\"}";
            seq = dr_trace_add_event(t, &ev, &err);
        } else if (strcmp(verb, "compile") == 0) {
            const char *tname = field(f, n, 7, "MainThread");
            snprintf(data, sizeof data,
                     "{\"attempts\": 1, \"graphs\": %s, \"outcome\": \"%s\","
                     " \"recompile\": %s%s%s%s}",
                     field(f, n, 5, "1"), field(f, n, 4, "compiled"), field(f, n, 3, "0"),
                     n > 7 && !f[7] ? "" : ", \"thread_name\": \"", n > 7 && !f[7] ? "" : tname,
                     n > 7 && !f[7] ? "" : "\"");
            ev.kind = "compile";
            ev.code_id = ci >= 0 ? code[ci] : 0;
            ev.compile_id = f[2];
            ev.num = atol(field(f, n, 5, "1"));
            ev.text = field(f, n, 8, NULL);
            ev.data = data;
            if (n > 6 && f[6]) ev.thread = atol(f[6]);
            seq = dr_trace_add_event(t, &ev, &err);
        } else if (strcmp(verb, "guard") == 0) {
            ev.kind = "guard";
            ev.compile_id = f[1];
            ev.guard = 1;
            ev.text = f[2];
            seq = dr_trace_add_event(t, &ev, &err);
        } else if (strcmp(verb, "gf") == 0) {
            snprintf(data, sizeof data, "{\"failed_compile_id\": \"%s\"}", f[3]);
            ev.kind = "guard_failure";
            ev.code_id = code[ci];
            ev.compile_id = f[2];
            ev.text = f[4];
            ev.data = data;
            seq = dr_trace_add_event(t, &ev, &err);
        } else if (strcmp(verb, "gb") == 0) {
            snprintf(data, sizeof data, "{\"filename\": \"%s\"%s%s%s}", f[4],
                     f[3] ? ", \"type\": \"" : "", f[3] ? f[3] : "", f[3] ? "\"" : "");
            ev.kind = "graph_break";
            ev.code_id = code[ci];
            ev.compile_id = f[2];
            ev.num = atol(f[5]);
            ev.text = f[6];
            ev.data = data;
            seq = dr_trace_add_event(t, &ev, &err);
        } else if (strcmp(verb, "graph") == 0) {
            char *backend = dr_json_quote(f[2]);
            snprintf(data, sizeof data, "{\"backend\": %s}", backend);
            free(backend);
            ev.kind = "graph";
            ev.compile_id = f[1];
            ev.num = atol(f[3]);
            ev.text = f[2];
            ev.data = data;
            ev.payload = f[4];
            ev.payload_len = strlen(f[4]);
            seq = dr_trace_add_event(t, &ev, &err);
        } else if (strcmp(verb, "err") == 0) {
            snprintf(data, sizeof data, "{\"exc_type\": \"%s\"}", f[2]);
            ev.kind = "error";
            ev.compile_id = f[1];
            ev.num = atol(f[3]);
            ev.text = f[4];
            ev.data = data;
            seq = dr_trace_add_event(t, &ev, &err);
        } else if (strcmp(verb, "spec") == 0 || strcmp(verb, "se") == 0) {
            int spec = verb[0] == 's' && verb[1] == 'p';
            snprintf(data, sizeof data, "{\"%s\": \"%s\"}", spec ? "action" : "status", f[2]);
            ev.kind = spec ? "speculation" : "side_effect";
            ev.compile_id = f[1];
            ev.text = f[3];
            ev.data = data;
            seq = dr_trace_add_event(t, &ev, &err);
        } else if (strcmp(verb, "cfg") == 0) {
            ev.kind = "config";
            ev.compile_id = f[1];
            ev.text = f[1] ? NULL : "initial";
            ev.data = f[2];
            seq = dr_trace_add_event(t, &ev, &err);
        } else if (strcmp(verb, "out") == 0) {
            char p[16], key[40];
            snprintf(p, sizeof p, "<%s>", f[1]);
            cr_assert_eq(dr_trace_add_file(t, p, f[1], f[2], strlen(f[2]), &err), DR_OK, "%s",
                         err.msg);
            snprintf(key, sizeof key, "output.%s_bytes", f[1]);
            cr_assert_eq(dr_trace_set_meta(t, key, f[3], &err), DR_OK, "%s", err.msg);
        } else {
            cr_assert_fail("%s line %ld: unknown verb %s", name, lineno, verb);
        }
        cr_assert_gt(seq, 0, "%s line %ld: %s", name, lineno, err.msg);
    }
    free(copy);
    cr_assert_eq(dr_trace_commit(t, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(dr_trace_close(t, 1, &err), DR_OK, "%s", err.msg);
    Loaded l = {dr_trace_open(path, &err), NULL};
    cr_assert_not_null(l.t, "open %s: %s", path, err.msg);
    l.m = dr_model_load(l.t, &err);
    cr_assert_not_null(l.m, "load %s: %s", path, err.msg);
    return l;
}

static const DrCompile *compile_of(const DrModel *m, const char *cid) {
    long i = dr_map_get(&m->compile_map, cid);
    cr_assert_geq(i, 0, "no compile %s", cid);
    return &m->compiles[i];
}

static char *frame_key_of(const DrModel *m, long fi, char *buf, size_t n) {
    const DrFrame *f = &m->frames[fi];
    return dr_frame_key(buf, n, f->file, f->qualname, f->firstlineno);
}

/* ---- frames and compiles: their names across traces ------------------------- */

/* A frame is its file relative to the run's root (the script's directory,
 * else the cwd), its qualname and first line (COMPARE.md, "Matching"). */
Test(model, frame_key_is_file_under_the_root_qualname_and_line) {
    static const struct {
        const char *meta, *file, *qualname;
        long line;
        const char *want;
    } rows[] = {
        {"", "/home/a/proj/m.py", "f", 10,
         "m.py\x1f"
         "f\x1f"
         "10"},
        /* the root is the script's directory, not the cwd */
        {"meta|cwd|/home/a\nmeta|script|proj/m.py\n", "/home/a/proj/lib/u.py", "M.forward", 3,
         "lib/u.py\x1fM.forward\x1f"
         "3"},
        /* a relative file name is the cwd's; ".." resolved */
        {"", "m.py", "f", 10,
         "m.py\x1f"
         "f\x1f"
         "10"},
        {"", "/home/a/proj/sub/../m.py", "f", 10,
         "m.py\x1f"
         "f\x1f"
         "10"},
        /* a run of a module (no script): relative to the cwd */
        {"meta|script|\nmeta|module|pkg.main\n", "/home/a/proj/pkg/main.py", "main", 1,
         "pkg/main.py\x1fmain\x1f"
         "1"},
        /* library directories first, even under the root */
        {"", "/home/a/proj/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py",
         "Module._call_impl", 1740,
         "<site>/torch/nn/modules/module.py\x1fModule._call_impl\x1f"
         "1740"},
        {"", "/usr/lib/python3.11/contextlib.py", "contextmanager", 260,
         "<stdlib>/contextlib.py\x1f"
         "contextmanager\x1f"
         "260"},
        /* a pseudo-file is kept; a file elsewhere stays absolute */
        {"", "<string>", "<module>", 1,
         "<string>\x1f<module>\x1f"
         "1"},
        {"", "/opt/other/x.py", "g", 2,
         "/opt/other/x.py\x1fg\x1f"
         "2"},
        /* a resume function is a frame of its own, by its name and line */
        {"", "/home/a/proj/m.py", "torch_dynamo_resume_in_f_at_12", 12,
         "m.py\x1ftorch_dynamo_resume_in_f_at_12\x1f"
         "12"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        char script[1024], name[32], key[1024];
        snprintf(script, sizeof script, "%scode|0|%s|%s|%ld\ncb|0\n", rows[r].meta, rows[r].file,
                 rows[r].qualname, rows[r].line);
        snprintf(name, sizeof name, "key%zu.db", r);
        Loaded l = build(name, script);
        cr_assert_eq(l.m->nframes, 1, "row %zu", r);
        cr_expect_str_eq(frame_key_of(l.m, 0, key, sizeof key), rows[r].want, "row %zu: %s", r,
                         rows[r].file);
        cr_expect_eq(dr_map_get(&l.m->frame_map, rows[r].want), 0, "row %zu: not in the map", r);
        cr_expect_eq(l.m->frames[0].callbacks, 1, "row %zu", r);
        loaded_free(&l);
    }
}

/* The compile label: the n-th compile of its frame (in the order compiles
 * finished), within its epoch, per thread name when several threads
 * compiled the frame.  Compile ids as such name nothing. */
Test(model, compile_label_is_epoch_thread_and_ordinal_in_the_frame) {
    Loaded l = build("labels.db", "code|0|/home/a/proj/m.py|f|10\n"
                                  "code|1|/home/a/proj/m.py|torch_dynamo_resume_in_f_at_12|12\n"
                                  /* the other branch's resume function: one name, one line */
                                  "code|2|/home/a/proj/m.py|torch_dynamo_resume_in_f_at_12|12\n"
                                  "code|3|/home/a/proj/m.py|g|20\n"
                                  "code|4|/home/a/proj/m.py|h|30\n"
                                  "cb|0\ncb|1\ncb|2\ncb|3\ncb|4\n"
                                  "compile|0|0/0|0\n"
                                  "compile|1|1/0|0\n"
                                  /* 0/1 starts (its guard) before 2/0 ends and ends after it:
                                   * compiles are in the order they finished */
                                  "guard|0/1|TYPE_MATCH: x\n"
                                  "compile|2|2/0|0\n"
                                  "compile|0|0/1|1\n"
                                  /* torch._dynamo.reset(): a first compile again */
                                  "compile|0|1:0/0|0\n"
                                  "compile|0|1:0/1|1\n"
                                  "compile|0|2:0/0|0\n"
                                  /* two threads, by name */
                                  "compile|3|3/0|0|compiled|1|7|Thread-1 (w)\n"
                                  "compile|3|3/1|0|compiled|1|8|Thread-2 (w)\n"
                                  "compile|3|3/2|1|compiled|1|7|Thread-1 (w)\n"
                                  /* two threads without names: by first appearance */
                                  "compile|4|4/0|0|compiled|1|9|-\n"
                                  "compile|4|4/1|0|compiled|1|5|-\n"
                                  "compile|4|4/2|1|compiled|1|5|-\n"
                                  /* no code object */
                                  "compile|-|9/0|0\n"
                                  "compile|-|9/1|1\n");
    static const struct {
        const char *cid, *label, *qualname, *group;
        long ordinal, epoch, frame_compiles;
        int has_event;
    } rows[] = {
        {"0/0", "#0", "f", "", 0, 0, 5, 1},
        {"0/1", "#1", "f", "", 1, 0, 5, 1},
        {"1:0/0", "epoch 1 #0", "f", "", 0, 1, 5, 1},
        {"1:0/1", "epoch 1 #1", "f", "", 1, 1, 5, 1},
        {"2:0/0", "epoch 2 #0", "f", "", 0, 2, 5, 1},
        {"1/0", "#0", "torch_dynamo_resume_in_f_at_12", "", 0, 0, 2, 1},
        {"2/0", "#1", "torch_dynamo_resume_in_f_at_12", "", 1, 0, 2, 1},
        {"3/0", "Thread-1 (w) #0", "g", "Thread-1 (w)", 0, 0, 3, 1},
        {"3/1", "Thread-2 (w) #0", "g", "Thread-2 (w)", 0, 0, 3, 1},
        {"3/2", "Thread-1 (w) #1", "g", "Thread-1 (w)", 1, 0, 3, 1},
        {"4/0", "thread 1 #0", "h", "thread 1", 0, 0, 3, 1},
        {"4/1", "thread 2 #0", "h", "thread 2", 0, 0, 3, 1},
        {"4/2", "thread 2 #1", "h", "thread 2", 1, 0, 3, 1},
        {"9/0", "#0", "<outside any frame>", "", 0, 0, 2, 1},
        {"9/1", "#1", "<outside any frame>", "", 1, 0, 2, 1},
    };
    /* four frames with code (the two resume functions are one) and the
     * frame of the compiles outside any */
    cr_assert_eq(l.m->nframes, 5);
    cr_assert_eq(l.m->ncompiles, (long)(sizeof rows / sizeof *rows));
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        const DrCompile *c = compile_of(l.m, rows[r].cid);
        const DrFrame *f = &l.m->frames[c->frame];
        cr_expect_str_eq(c->label, rows[r].label, "%s: label %s", rows[r].cid, c->label);
        cr_expect_str_eq(f->qualname, rows[r].qualname, "%s: frame %s", rows[r].cid, f->qualname);
        cr_expect_str_eq(c->group, rows[r].group, "%s: group %s", rows[r].cid, c->group);
        cr_expect_eq(c->ordinal, rows[r].ordinal, "%s: ordinal %ld", rows[r].cid, c->ordinal);
        cr_expect_eq(c->epoch, rows[r].epoch, "%s: epoch %ld", rows[r].cid, c->epoch);
        cr_expect_eq(f->ncomp, rows[r].frame_compiles, "%s: %ld compiles", rows[r].cid, f->ncomp);
        cr_expect_eq(c->has_event, rows[r].has_event, "%s: has_event %d", rows[r].cid,
                     c->has_event);
    }
    /* the resume functions' callbacks are summed into their one frame */
    cr_expect_eq(compile_of(l.m, "1/0")->frame, compile_of(l.m, "2/0")->frame);
    cr_expect_eq(l.m->frames[compile_of(l.m, "1/0")->frame].callbacks, 2);
    cr_expect(l.m->frames[compile_of(l.m, "3/0")->frame].multi_thread);
    cr_expect(!l.m->frames[compile_of(l.m, "0/0")->frame].multi_thread);
    /* trace order: by the compile's own event, else its first part */
    cr_expect_lt(compile_of(l.m, "1/0")->rank, compile_of(l.m, "0/1")->rank);
    cr_expect_lt(compile_of(l.m, "2/0")->rank, compile_of(l.m, "0/1")->rank);
    cr_expect_eq(l.m->by_rank[0], dr_map_get(&l.m->compile_map, "0/0"));
    loaded_free(&l);
}

/* A compile known only from its parts (a trace cut short before its
 * compile event): outside any frame, with no outcome, and compared. */
Test(model, a_compile_without_its_event_is_kept_and_compared) {
    Loaded a =
        build("parts_a.db", "code|0|/home/a/proj/m.py|f|10\ncb|0\nguard|0/0|TYPE_MATCH: x\n");
    Loaded b =
        build("parts_b.db", "code|0|/home/a/proj/m.py|f|10\ncb|0\nguard|0/0|TYPE_MATCH: y\n");
    cr_assert_eq(a.m->ncompiles, 1);
    const DrCompile *c = compile_of(a.m, "0/0");
    cr_expect_eq(c->has_event, 0);
    cr_expect_null(c->outcome);
    cr_expect_str_eq(c->label, "#0");
    cr_expect_str_eq(a.m->frames[c->frame].qualname, "<outside any frame>");
    cr_expect_eq(a.m->frames[c->frame].ncomp, 1);
    DrDiff *d = dr_compare(a.m, b.m, NULL, NULL);
    cr_assert_not_null(d);
    DrDivergence first;
    cr_assert_eq(dr_diff_first(d, &first), 1);
    cr_expect_str_eq(first.category, "guards");
    cr_expect_str_eq(first.what,
                     "guard set of compile #0 of <outside any frame> differs: 1 removed, 1 added");
    dr_diff_free(d);
    d = dr_compare(a.m, a.m, NULL, NULL);
    cr_assert_not_null(d);
    cr_expect(dr_diff_identical(d));
    dr_diff_free(d);
    loaded_free(&b);
    loaded_free(&a);
}

/* ---- the lines compared ------------------------------------------------------- */

#define GRAPH_CODE "def forward(self, x):\\n    add = x + 1\\n    return (add,)\\n"

/* Every compared text is masked once, when the trace is read (COMPARE.md,
 * "Canonical text"); a category's lines are formatted here, so that
 * comparing is string equality.  Guards and guard failures are sets
 * (sorted); the rest keep their order. */
Test(model, compared_lines_are_masked_and_formatted_once) {
    Loaded l = build(
        "lines.db",
        "code|0|/home/a/proj/m.py|f|10\ncb|0\ncb|0\n"
        "cfg|-|{\"cache_size_limit\": 8, \"b_set\": \"{'z', 'a'}\","
        " \"debug_dir_root\": \"/home/a/proj/x\","
        " \"when\": \"frozenset({'q', 'p'})\"}\n"
        "guard|0/0|TENSOR_MATCH: check_tensor(L['x'], Tensor, size=[3], stride=[1])\n"
        "guard|0/0|ID_MATCH: ___check_obj_id(L['self'], 140200980950336)\n"
        "guard|0/0|GLOBAL_ID: G['_140200980950336_c0'].Tensor at 0x7f3a2b1c0d00\n"
        "gb|0|0/0|Unsupported|/home/a/proj/m.py|12|call to print\\nfrom user code:\\n  m.py:12\n"
        "gb|0|0/0|-|/home/a/proj/.venv/lib/python3.11/site-packages/torch/x.py|5|took 0.25 s\n"
        "graph|0/0|<torch._dynamo.testing.CompileCounter object at 0x7f12ab34cd50>|3|" GRAPH_CODE
        "\n"
        "graph|0/0|inductor|2|# at 0x7f00aa\\ndef forward(self):\\n    pass\\n\n"
        "err|0/0|RuntimeError|1|boom at 0x7f00\\nsecond line\n"
        "err|0/0|TypeError|0|bad pid 12\n"
        "spec|0/0|restart|reason pid=31337\n"
        "se|0/0|applied|x.append at 0x12\n"
        "compile|0|0/0|0\n"
        "cfg|0/1|{\"cache_size_limit\": 16}\n"
        "gf|0|0/1|0/0|0/0: tensor 'L['x']' size mismatch at index 0. expected 3, actual 4\n"
        "gf|0|0/1|0/0|0/0: ___check_obj_id(L['self'], 140200980950999)\n"
        "compile|0|0/1|1|skipped|0|1|MainThread|skipping: in 0.5ms\\nsecond\n"
        "gf|0|1:0/1|1:0/0|0/0: tensor 'L['x']' dtype mismatch\n"
        "compile|0|1:0/0|0\n"
        "compile|0|1:0/1|1\n"
        "out|stdout|took 0.25 s\\nat /home/a/proj/m.py\\n|40\n");
    static const struct {
        const char *cid;
        int cat;
        long i;
        const char *want;
    } rows[] = {
        /* guards: a set, sorted */
        {"0/0", DR_CAT_GUARDS, 0, "GLOBAL_ID: G['_#_c#'].Tensor at 0x?"},
        {"0/0", DR_CAT_GUARDS, 1, "ID_MATCH: ___check_obj_id(L['self'], #)"},
        {"0/0", DR_CAT_GUARDS, 2,
         "TENSOR_MATCH: check_tensor(L['x'], Tensor, size=[3], stride=[1])"},
        /* graph breaks: type, file relative to the root, line, the first line of the reason */
        {"0/0", DR_CAT_GRAPH_BREAKS, 0, "Unsupported at m.py:12: call to print"},
        {"0/0", DR_CAT_GRAPH_BREAKS, 1, "? at <site>/torch/x.py:5: took <time>"},
        /* errors: type, suppressed or raised, the first line of the message */
        {"0/0", DR_CAT_ERRORS, 0, "RuntimeError (suppressed): boom at 0x?"},
        {"0/0", DR_CAT_ERRORS, 1, "TypeError (raised): bad pid=?"},
        {"0/0", DR_CAT_SPECULATION, 0, "restart: reason pid=?"},
        {"0/0", DR_CAT_SIDE_EFFECTS, 0, "applied: x.append at 0x?"},
        {"0/1", DR_CAT_CONFIG, 0, "{\"cache_size_limit\": 16}"},
        /* guard failures: by the failed entry's label, its id dropped from the reason */
        {"0/1", DR_CAT_GUARD_FAILURES, 0, "entry #0: ___check_obj_id(L['self'], #)"},
        {"0/1", DR_CAT_GUARD_FAILURES, 1,
         "entry #0: tensor 'L['x']' size mismatch at index 0. expected 3, actual 4"},
        /* after a reset the reason names Dynamo's id without the epoch */
        {"1:0/1", DR_CAT_GUARD_FAILURES, 0, "entry epoch 1 #0: tensor 'L['x']' dtype mismatch"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        const DrCompile *c = compile_of(l.m, rows[r].cid);
        const DrStrVec *v = &c->items[rows[r].cat];
        cr_assert_lt(rows[r].i, v->n, "row %zu: %s has %ld %s", r, rows[r].cid, v->n,
                     dr_category_name(rows[r].cat));
        cr_expect_str_eq(v->v[rows[r].i], rows[r].want, "row %zu", r);
    }
    const DrCompile *c0 = compile_of(l.m, "0/0"), *c1 = compile_of(l.m, "0/1");
    cr_expect_eq(c0->items[DR_CAT_GUARDS].n, 3);
    cr_expect_eq(c0->items[DR_CAT_GRAPH_BREAKS].n, 2);
    /* graphs: the backend (an object by its class), nodes, the masked code's hash */
    cr_assert_eq(c0->items[DR_CAT_GRAPHS].n, 2);
    const char *code0 = "def forward(self, x):\n    add = x + 1\n    return (add,)\n";
    char want[256];
    snprintf(want, sizeof want, "CompileCounter nodes=3 code=%016llx",
             (unsigned long long)dr_hash64(code0, strlen(code0)));
    cr_expect_str_eq(c0->items[DR_CAT_GRAPHS].v[0], want);
    cr_expect_str_eq(c0->graph_code.v[0], code0);
    const char *code1 = "# at 0x?\ndef forward(self):\n    pass\n";
    snprintf(want, sizeof want, "inductor nodes=2 code=%016llx",
             (unsigned long long)dr_hash64(code1, strlen(code1)));
    cr_expect_str_eq(c0->items[DR_CAT_GRAPHS].v[1], want);
    cr_expect_str_eq(c0->graph_code.v[1], code1);
    /* the compile itself: outcome, the first line of its reason, masked */
    cr_expect_str_eq(c0->outcome, "compiled");
    cr_expect_str_eq(c0->reason, "");
    cr_expect_str_eq(c1->outcome, "skipped");
    cr_expect_str_eq(c1->reason, "skipping: in <time>");
    cr_expect_eq(c1->recompile, 1);
    cr_expect_eq(c1->graphs, 0);
    /* the config at start: key by key, sorted, sets sorted, debug_dir_root left out */
    cr_assert_eq(l.m->config_start.n, 3);
    cr_expect_str_eq(l.m->config_start.v[0], "b_set = {'a', 'z'}");
    cr_expect_str_eq(l.m->config_start.v[1], "cache_size_limit = 8");
    cr_expect_str_eq(l.m->config_start.v[2], "when = frozenset({'p', 'q'})");
    /* the output as kept, masked with the run's root */
    cr_assert_not_null(l.m->output[0]);
    cr_expect_str_eq(l.m->output[0], "took <time>\nat <root>/m.py\n");
    cr_expect_eq(l.m->output_bytes[0], 40);
    cr_expect_eq(l.m->output_kept[0], (long)strlen("took 0.25 s\nat /home/a/proj/m.py\n"));
    cr_expect_null(l.m->output[1], "no stderr was recorded");
    DrModelCounts n;
    dr_model_counts(l.m, &n);
    cr_expect_eq(n.frames, 1);
    cr_expect_eq(n.compiles, 4);
    cr_expect_eq(n.guards, 3);
    cr_expect_eq(n.guard_failures, 3);
    cr_expect_eq(n.graph_breaks, 2);
    cr_expect_eq(n.graphs, 2);
    cr_expect_eq(n.errors, 2);
    loaded_free(&l);
}

/* ---- comparing two traces -------------------------------------------------- */

/* Trace a of most rows: frame f, called twice, compiled once with two
 * guards, a graph break and a graph. */
#define F_CODE "code|0|/home/a/proj/m.py|f|10\ncb|0\ncb|0\n"
#define G_TENSOR3 "guard|0/0|TENSOR_MATCH: check_tensor(L['x'], Tensor, size=[3], stride=[1])\n"
#define G_TENSOR4 "guard|0/0|TENSOR_MATCH: check_tensor(L['x'], Tensor, size=[4], stride=[1])\n"
#define G_ID "guard|0/0|ID_MATCH: ___check_obj_id(L['self'], 140200980950336)\n"
#define GB_PRINT "gb|0|0/0|Unsupported|/home/a/proj/m.py|12|call to print\\nfrom user code: a\n"
#define GRAPH "graph|0/0|eager|3|" GRAPH_CODE "\n"
#define C0 "compile|0|0/0|0\n"
#define BASE F_CODE G_TENSOR3 G_ID GB_PRINT GRAPH C0
/* a recompile of f after a call with another shape */
#define RECOMPILE_REASON(actual)                                                                   \
    "cb|0\ngf|0|0/1|0/0|0/0: tensor 'L['x']' size mismatch at index 0. expected 3, actual " actual \
    "\nguard|0/1|TENSOR_MATCH: check_tensor(L['x'], Tensor, size=[4], stride=[1])\n"               \
    "compile|0|0/1|1\n"
#define RECOMPILE RECOMPILE_REASON("4")
#define G_CODE "code|1|/home/a/proj/m.py|g|20\n"
/* f compiled by two threads, in the order given */
#define THREADS(g1, t1, n1, g2, t2, n2)                                                            \
    F_CODE "guard|0/0|TYPE_MATCH: " g1 "\ncompile|0|0/0|0|compiled|1|" t1 "|" n1 "\n"              \
           "guard|0/1|TYPE_MATCH: " g2 "\ncompile|0|0/1|1|compiled|1|" t2 "|" n2 "\n"
#define CFG(json) "cfg|-|" json "\n"
#define GLOBAL_STATE(json) "guard|0/0|GLOBAL_STATE: ___check_global_state() against " json "\n"

typedef struct {
    const char *rule, *a, *b;
    DrCompareOptions o;
    const char *cat;             /* the first divergence's category; NULL: identical */
    long count;                  /* divergences in cat */
    long total;                  /* divergences in all (0: count) */
    const char *what;            /* the first divergence's line, exactly (NULL: see also) */
    const char *ca, *cb;         /* its compile ids (NULL: none) */
    const char *side_a, *side_b; /* found in what each side has there */
    const char *also;            /* found in the JSON report */
} CompareRow;

static const CompareRow compare_rows[] = {
    {"the same trace", BASE, BASE, .cat = NULL},
    {"another directory, other object ids, thread ids and times, a later line of a reason", BASE,
     "meta|cwd|/srv/b/run\ncode|0|/srv/b/run/m.py|f|10\ncb|0\ncb|0\n"
     "guard|0/0|ID_MATCH: ___check_obj_id(L['self'], 139911112222333)\n" G_TENSOR3
     "gb|0|0/0|Unsupported|/srv/b/run/m.py|12|call to print\\nfrom somewhere else\n" GRAPH
     "compile|0|0/0|0|compiled|1|77\n",
     .cat = NULL},
    {"guards are a set: another order is the same", BASE, F_CODE G_ID G_TENSOR3 GB_PRINT GRAPH C0,
     .cat = NULL},
    {"one extra recompile", BASE, BASE RECOMPILE, .cat = "compiles", .count = 1, .total = 2,
     .what = "compile #1 of f only in b (compiled, 1 guard)", .cb = "0/1",
     .side_a = "(no such compile)", .side_b = "compile 0/1: compiled",
     .also = "frame f (m.py:10): counts differ"},
    {"one recompile fewer", BASE RECOMPILE, BASE, .cat = "compiles", .count = 1, .total = 2,
     .what = "compile #1 of f only in a (compiled, 1 guard)", .ca = "0/1",
     .side_a = "compile 0/1: compiled", .side_b = "(no such compile)"},
    {"a different guard set", BASE, F_CODE G_TENSOR4 G_ID GB_PRINT GRAPH C0, .cat = "guards",
     .count = 1, .what = "guard set of compile #0 of f differs: 1 removed, 1 added", .ca = "0/0",
     .cb = "0/0", .side_a = "size=[3]", .side_b = "size=[4]"},
    {"a guard fewer", BASE, F_CODE G_TENSOR3 GB_PRINT GRAPH C0, .cat = "guards", .count = 1,
     .what = "guard set of compile #0 of f differs: 1 removed, 0 added", .ca = "0/0", .cb = "0/0",
     .side_a = "ID_MATCH: ___check_obj_id(L['self'], #)", .side_b = "(none only in b)"},
    {"a different graph break reason", BASE,
     F_CODE G_TENSOR3 G_ID "gb|0|0/0|Unsupported|/home/a/proj/m.py|12|call to input\n" GRAPH C0,
     .cat = "graph_breaks", .count = 1, .what = "graph breaks of compile #0 of f differ: 1 vs 1",
     .ca = "0/0", .cb = "0/0", .side_a = "Unsupported at m.py:12: call to print",
     .side_b = "Unsupported at m.py:12: call to input"},
    {"a graph break on another line", BASE,
     F_CODE G_TENSOR3 G_ID "gb|0|0/0|Unsupported|/home/a/proj/m.py|13|call to print\n" GRAPH C0,
     .cat = "graph_breaks", .count = 1, .what = "graph breaks of compile #0 of f differ: 1 vs 1",
     .ca = "0/0", .cb = "0/0", .side_b = "Unsupported at m.py:13: call to print"},
    {"a graph break only in a", BASE, F_CODE G_TENSOR3 G_ID GRAPH C0, .cat = "graph_breaks",
     .count = 1, .what = "graph breaks of compile #0 of f differ: 1 vs 0", .ca = "0/0", .cb = "0/0",
     .side_a = "call to print", .side_b = "(no more graph breaks)"},
    {"a different graph", BASE,
     F_CODE G_TENSOR3 G_ID GB_PRINT
     "graph|0/0|eager|3|def forward(self, x):\\n    add = x + 2\\n    return (add,)\\n\n" C0,
     .cat = "graphs", .count = 1, .what = "graphs of compile #0 of f differ: 1 vs 1", .ca = "0/0",
     .cb = "0/0", .side_a = "; code line 2:     add = x + 1",
     .side_b = "; code line 2:     add = x + 2"},
    {"graphs differing in an address only are the same",
     F_CODE "graph|0/0|eager|1|# 0x7f0011\\npass\\n\n" C0,
     F_CODE "graph|0/0|eager|1|# 0x7f0022\\npass\\n\n" C0, .cat = NULL},
    {"a backend object is named by its class",
     F_CODE "graph|0/0|<torch._dynamo.testing.CompileCounter object at 0x7f12ab34cd50>|3|x\n" C0,
     F_CODE "graph|0/0|CompileCounter|3|x\n" C0, .cat = NULL},
    {"another backend", BASE,
     F_CODE G_TENSOR3 G_ID GB_PRINT "graph|0/0|inductor|3|" GRAPH_CODE "\n" C0, .cat = "graphs",
     .count = 1, .what = "graphs of compile #0 of f differ: 1 vs 1", .side_a = "eager nodes=3",
     .side_b = "inductor nodes=3"},
    {"compile ids are not compared: compiles by their place", BASE RECOMPILE,
     "code|0|/home/a/proj/m.py|f|10\ncb|0\ncb|0\n"
     "guard|4/0|TENSOR_MATCH: check_tensor(L['x'], Tensor, size=[3], stride=[1])\n"
     "guard|4/0|ID_MATCH: ___check_obj_id(L['self'], 140200980950336)\n"
     "gb|0|4/0|Unsupported|/home/a/proj/m.py|12|call to print\n"
     "graph|4/0|eager|3|" GRAPH_CODE "\ncompile|0|4/0|0\n"
     "cb|0\ngf|0|4/1|4/0|4/0: tensor 'L['x']' size mismatch at index 0. expected 3, actual 4\n"
     "guard|4/1|TENSOR_MATCH: check_tensor(L['x'], Tensor, size=[4], stride=[1])\n"
     "compile|0|4/1|1\n",
     .cat = NULL},
    {"another guard failure", BASE RECOMPILE, BASE RECOMPILE_REASON("5"), .cat = "guard_failures",
     .count = 1, .what = "guard failures of compile #1 of f differs: 1 removed, 1 added",
     .ca = "0/1", .cb = "0/1",
     .side_a = "entry #0: tensor 'L['x']' size mismatch at index 0. expected 3, actual 4",
     .side_b = "actual 5"},
    {"after a reset: matched by epoch and ordinal, not by id", BASE "cb|0\ncompile|0|1:0/0|0\n",
     BASE "cb|0\ncompile|0|1:7/0|0\n", .cat = NULL},
    {"a reset is not a recompile", BASE "cb|0\ncompile|0|1:0/0|0\n", BASE "cb|0\ncompile|0|0/1|1\n",
     .cat = "compiles", .count = 2, .also = "compile epoch 1 #0 of f only in a"},
    {"threads: compiles by thread name, another interleaving is the same",
     THREADS("a", "7", "Thread-1 (w)", "b", "8", "Thread-2 (w)"),
     THREADS("b", "3", "Thread-2 (w)", "a", "4", "Thread-1 (w)"), .cat = NULL},
    {"threads: another thread's guard set differs",
     THREADS("a", "7", "Thread-1 (w)", "b", "8", "Thread-2 (w)"),
     THREADS("b", "3", "Thread-2 (w)", "c", "4", "Thread-1 (w)"), .cat = "guards", .count = 1,
     .what = "guard set of compile Thread-1 (w) #0 of f differs: 1 removed, 1 added", .ca = "0/0",
     .cb = "0/1", .side_a = "TYPE_MATCH: a", .side_b = "TYPE_MATCH: c"},
    {"a guard failure against another thread's entry is counted, not compared",
     THREADS("a", "7", "Thread-1 (w)", "b", "8", "Thread-2 (w)") "gf|0|0/1|0/0|0/0: reason one\n",
     THREADS("a", "7", "Thread-1 (w)", "b", "8", "Thread-2 (w)") "gf|0|0/1|0/0|0/0: reason two\n",
     .cat = NULL},
    {"threads: one side's frame compiled by one thread is matched by its thread's name",
     F_CODE "guard|0/0|TYPE_MATCH: a\ncompile|0|0/0|0|compiled|1|7|MainThread\n",
     F_CODE "guard|0/0|TYPE_MATCH: a\ncompile|0|0/0|0|compiled|1|7|MainThread\n"
            "guard|0/1|TYPE_MATCH: b\ncompile|0|0/1|1|compiled|1|8|Thread-1 (w)\n",
     .cat = "compiles", .count = 1, .total = 2,
     .what = "compile Thread-1 (w) #0 of f only in b (compiled, 1 guard)", .cb = "0/1",
     .side_a = "(no such compile)", .side_b = "compile 0/1: compiled"},
    {"a frame Dynamo never compiled: callbacks not compared", BASE G_CODE "cb|1\n",
     BASE G_CODE "cb|1\ncb|1\ncb|1\n", .cat = NULL},
    {"a compiled frame's callbacks differ", BASE, BASE "cb|0\n", .cat = "frames", .count = 1,
     .what = "frame f (m.py:10): counts differ", .side_a = "2 callbacks, 0 cache hits, 1 compiles",
     .side_b = "3 callbacks, 0 cache hits, 1 compiles"},
    {"a frame only in b", BASE, BASE G_CODE "cb|1\n", .cat = "frames", .count = 1,
     .what = "frame g (m.py:20) only in b: 1 callbacks, 0 compiles"},
    {"a resume function only in b", BASE,
     BASE "code|2|/home/a/proj/m.py|torch_dynamo_resume_in_f_at_12|12\ncb|2\n"
          "guard|1/0|TYPE_MATCH: r\ncompile|2|1/0|0\n",
     .cat = "frames", .count = 1,
     .what = "frame torch_dynamo_resume_in_f_at_12 (m.py:12) only in b: 1 callbacks, 1 compiles"},
    {"the exit status", BASE, BASE "meta|exit_status|1\n", .cat = "exit_status", .count = 1,
     .what = "the program ended differently", .side_a = "exit status 0", .side_b = "exit status 1"},
    {"a signal", BASE, BASE "meta|exit_signal|9\n", .cat = "exit_status", .count = 1,
     .what = "the program ended differently", .side_b = "killed by signal 9"},
    {"the config at start", BASE CFG("{\"cache_size_limit\": 8}"),
     BASE CFG("{\"cache_size_limit\": 16}"), .cat = "config", .count = 1,
     .what = "Dynamo config at start differs: 1 settings"},
    {"the config at start: a set's order and debug_dir_root are not decisions",
     BASE CFG("{\"s\": \"{'a', 'b'}\", \"debug_dir_root\": \"/home/a/proj/x\"}"),
     BASE CFG("{\"s\": \"{'b', 'a'}\", \"debug_dir_root\": \"/srv/b/y\"}"), .cat = NULL},
    {"a config key of one torch version is a note",
     BASE "meta|torch_version|2.13.0\n" CFG("{\"a\": 1, \"_shapes_spec\": null}"),
     BASE CFG("{\"a\": 1, \"_dynamic_shapes_spec\": null}"), .also = "_shapes_spec"},
    {"a config key on one side of the same torch version",
     BASE CFG("{\"a\": 1, \"_shapes_spec\": null}"),
     BASE CFG("{\"a\": 1, \"_dynamic_shapes_spec\": null}"), .cat = "config", .count = 1,
     .what = "Dynamo config at start differs: 1 settings"},
    {"a compile's config change", BASE "cfg|0/0|{\"x\": 1}\n", BASE "cfg|0/0|{\"x\": 2}\n",
     .cat = "config", .count = 1, .what = "config changes of compile #0 of f differ: 1 vs 1",
     .side_a = "{\"x\": 1}", .side_b = "{\"x\": 2}"},
    {"an error suppressed or raised", BASE "err|0/0|RuntimeError|1|boom\n",
     BASE "err|0/0|RuntimeError|0|boom\n", .cat = "errors", .count = 1,
     .what = "errors of compile #0 of f differ: 1 vs 1",
     .side_a = "RuntimeError (suppressed): boom", .side_b = "RuntimeError (raised): boom"},
    {"a compile's outcome and reason", F_CODE "compile|0|0/0|0|skipped|0|1|MainThread|skip: a\n",
     F_CODE "compile|0|0/0|0|skipped|0|1|MainThread|skip: b\\nsecond line\n", .cat = "compiles",
     .count = 1, .what = "compile #0 of f differs", .ca = "0/0", .cb = "0/0",
     .side_a = "skipped, 1 attempt, 0 graphs, first compile: skip: a",
     .side_b = "skipped, 1 attempt, 0 graphs, first compile: skip: b"},
    {"speculation in another order", BASE "spec|0/0|restart|one\nspec|0/0|rollback|two\n",
     BASE "spec|0/0|rollback|two\nspec|0/0|restart|one\n", .cat = "speculation", .count = 1,
     .what = "speculation of compile #0 of f: the same, in another order", .side_a = "restart: one",
     .side_b = "rollback: two"},
    {"a side effect dropped", BASE "se|0/0|applied|x.append\n", BASE "se|0/0|dropped|x.append\n",
     .cat = "side_effects", .count = 1, .what = "side effects of compile #0 of f differ: 1 vs 1",
     .side_a = "applied: x.append", .side_b = "dropped: x.append"},
    {"--ignore guards", BASE, F_CODE G_TENSOR4 G_ID GB_PRINT GRAPH C0,
     .o = {.ignore = 1u << DR_CAT_GUARDS}},
    {"replay: callbacks and frames never compiled are not compared", BASE G_CODE "cb|1\n",
     BASE "cb|0\ncb|0\n", .o = {.replay = 1}},
    {"replay: the backend is the replay's", BASE,
     F_CODE G_TENSOR3 G_ID GB_PRINT "graph|0/0|inductor|3|" GRAPH_CODE "\n" C0, .o = {.replay = 1}},
    {"replay: a compile fewer", BASE RECOMPILE, BASE, .o = {.replay = 1}, .cat = "compiles",
     .count = 1, .total = 2, .what = "compile #1 of f only in a (compiled, 1 guard)",
     .also = "counts differ"},
    {"--compile: only the first compiles", BASE RECOMPILE, BASE RECOMPILE_REASON("5"),
     .o = {.max_compiles = 1}},
    {"output differing in times only", BASE "out|stdout|done in 1.5s\\n|13\n",
     BASE "out|stdout|done in 12.25s\\n|15\n", .cat = NULL},
    {"output is compared only where both traces kept it", BASE "out|stdout|one\\n|4\n", BASE,
     .cat = NULL},
    {"a frame left out by key", BASE, BASE G_CODE "cb|1\n",
     .o = {.skip_frames = (const char *const[]){"m.py\x1fg\x1f"
                                                "20"},
           .nskip = 1},
     .cat = NULL},
    {"config keys a replay does not set are not compared",
     BASE CFG("{\"a\": 1, \"log_compilation_metrics\": true}"),
     BASE CFG("{\"a\": 1, \"log_compilation_metrics\": false}"),
     .o = {.config_unset = (const char *const[]){"log_compilation_metrics"}, .nconfig_unset = 1},
     .cat = NULL, .also = "\"not_set_by_replay\": [\"log_compilation_metrics\"]"},
    {"a global-state key of one torch version is left out of the guard",
     F_CODE GLOBAL_STATE("{\"grad_enabled\": true}") C0 "meta|torch_version|2.14.1\n",
     F_CODE GLOBAL_STATE("{\"cuda_matmul_precision\": \"high\", \"grad_enabled\": true}") C0
     "meta|torch_version|2.15.0\n",
     .cat = NULL, .also = "\"global_state_keys_not_compared\": [\"cuda_matmul_precision\"]"},
    {"a global-state key on one side of the same torch version",
     F_CODE GLOBAL_STATE("{\"grad_enabled\": true}") C0,
     F_CODE GLOBAL_STATE("{\"cuda_matmul_precision\": \"high\", \"grad_enabled\": true}") C0,
     .cat = "guards", .count = 1,
     .what = "guard set of compile #0 of f differs: 1 removed, 1 added",
     .side_b = "\"cuda_matmul_precision\": \"high\""},
    {"a changed global-state value across torch versions is still a difference",
     F_CODE GLOBAL_STATE("{\"grad_enabled\": true}") C0 "meta|torch_version|2.14.1\n",
     F_CODE GLOBAL_STATE("{\"cuda_matmul_precision\": \"high\", \"grad_enabled\": false}") C0
     "meta|torch_version|2.15.0\n",
     .cat = "guards", .count = 1, .side_a = "\"grad_enabled\": true",
     .side_b = "\"grad_enabled\": false"},
    {"output", BASE "out|stdout|one\\ntwo\\n|8\n", BASE "out|stdout|one\\nthree\\n|10\n",
     .cat = "output", .count = 1,
     .what = "the program's stdout differs from line 2 (8 vs 10 bytes)", .side_a = "2: two",
     .side_b = "2: three"},
};

static char *report_of(const DrDiff *d, int json) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(dr_diff_print(d, f, json), 0);
    cr_assert_eq(fclose(f), 0);
    return buf;
}

static void expect_side(const char *got, const char *want, size_t r, const char *side) {
    if (!want) return;
    cr_expect(got && strstr(got, want), "row %zu (%s): side %s is \"%s\", want \"%s\" in it", r,
              compare_rows[r].rule, side, got ? got : "(null)", want);
}

/* One row per rule of COMPARE.md: what counts as the same decision, and the
 * exact first difference reported when it is not. */
Test(model, compare_reports_the_first_divergence_by_the_rules) {
    for (size_t r = 0; r < sizeof compare_rows / sizeof *compare_rows; r++) {
        const CompareRow *row = &compare_rows[r];
        char na[32], nb[32];
        snprintf(na, sizeof na, "a%zu.db", r);
        snprintf(nb, sizeof nb, "b%zu.db", r);
        Loaded a = build(na, row->a), b = build(nb, row->b);
        DrError err = {0};
        DrDiff *d = dr_compare(a.m, b.m, &row->o, &err);
        cr_assert_not_null(d, "row %zu: %s", r, err.msg);
        DrDivergence first;
        int differs = dr_diff_first(d, &first);
        long total = 0;
        for (int cat = 0; cat < DR_CAT__N; cat++) total += dr_diff_count(d, cat);
        char *json = report_of(d, 1), *text = report_of(d, 0);
        if (!row->cat) {
            cr_expect(dr_diff_identical(d), "row %zu (%s): differs: %s", r, row->rule, text);
            cr_expect_eq(differs, 0, "row %zu", r);
            cr_expect_eq(total, 0, "row %zu", r);
            cr_expect(strstr(json, "\"identical\": true"), "row %zu", r);
        } else {
            cr_expect(!dr_diff_identical(d), "row %zu (%s): identical", r, row->rule);
            cr_assert_eq(differs, 1, "row %zu (%s)", r, row->rule);
            cr_expect_str_eq(first.category, row->cat, "row %zu (%s): %s", r, row->rule,
                             first.what);
            cr_expect_eq(dr_diff_count(d, dr_category_parse(row->cat)), row->count, "row %zu (%s)",
                         r, row->rule);
            cr_expect_eq(total, row->total ? row->total : row->count, "row %zu (%s): %s", r,
                         row->rule, json);
            if (row->what) {
                cr_expect_str_eq(first.what, row->what, "row %zu (%s)", r, row->rule);
                cr_expect(strstr(text, row->what), "row %zu: the report lacks its line: %s", r,
                          text);
            }
            if (row->ca || row->cb) {
                cr_expect(row->ca ? first.compile_a && strcmp(first.compile_a, row->ca) == 0
                                  : !first.compile_a,
                          "row %zu (%s): compile_a %s", r, row->rule,
                          first.compile_a ? first.compile_a : "(none)");
                cr_expect(row->cb ? first.compile_b && strcmp(first.compile_b, row->cb) == 0
                                  : !first.compile_b,
                          "row %zu (%s): compile_b %s", r, row->rule,
                          first.compile_b ? first.compile_b : "(none)");
            }
            expect_side(first.side_a, row->side_a, r, "a");
            expect_side(first.side_b, row->side_b, r, "b");
        }
        if (row->also)
            cr_expect(strstr(json, row->also), "row %zu (%s): \"%s\" not in %s", r, row->rule,
                      row->also, json);
        free(json);
        free(text);
        dr_diff_free(d);
        loaded_free(&b);
        loaded_free(&a);
    }
}

/* "reproduced N/M compiles" (COMPARE.md, "Replay mode"): the compared
 * compiles of a with no divergence, and the line per compile. */
Test(model, reproduced_counts_the_compiles_of_a_without_a_divergence) {
    Loaded a = build("rep_a.db", BASE RECOMPILE "compile|-|9/0|0\n");
    Loaded b = build("rep_b.db", BASE "compile|-|9/0|0|skipped|0\n");
    DrCompareOptions o = {.replay = 1};
    DrDiff *d = dr_compare(a.m, b.m, &o, NULL);
    cr_assert_not_null(d);
    long reproduced = -2, total = -2;
    dr_diff_reproduced(d, &reproduced, &total);
    cr_expect_eq(total, 3);
    cr_expect_eq(reproduced, 1, "0/1 is only in a, 9/0 differs");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(dr_diff_print_compiles(d, f, 2), 0);
    cr_assert_eq(fclose(f), 0);
    cr_expect_str_eq(buf,
                     "    reproduced 0/0 f: compiled, 2 guards, 0 guard failures, 1 graph breaks,"
                     " 1 graphs, 0 speculation steps, side effects 0 applied 0 dropped, 0 errors\n"
                     "    DIVERGED   0/1 f: compiled, 1 guards, 1 guard failures, 0 graph breaks,"
                     " 0 graphs, 0 speculation steps, side effects 0 applied 0 dropped, 0 errors\n"
                     "    ... and 1 more\n");
    free(buf);
    dr_diff_free(d);
    d = dr_compare(a.m, a.m, &o, NULL);
    cr_assert_not_null(d);
    dr_diff_reproduced(d, &reproduced, &total);
    cr_expect(reproduced == 3 && total == 3, "%ld/%ld", reproduced, total);
    dr_diff_free(d);
    loaded_free(&b);
    loaded_free(&a);
}

typedef struct {
    char seen[512];
    int stop_after;
    int calls;
} Collected;

static int collect_op(void *arg, const char *op, const char *cid) {
    Collected *c = arg;
    size_t n = strlen(c->seen);
    snprintf(c->seen + n, sizeof c->seen - n, "%s%s@%s", n ? " " : "", op, cid);
    return ++c->calls == c->stop_after;
}

/* The collectives of a rank (COMPARE.md, "Ranks of one job"): calls of a
 * c10d operator or of a torch.distributed collective in the graphs' code,
 * in the order of compiles, comment lines and other names left out. */
Test(model, collectives_are_the_c10d_and_distributed_calls_in_compile_order) {
    Loaded l =
        build("coll.db", F_CODE
              "graph|0/0|eager|9|def forward(self, x):\\n"
              "    all_reduce = torch.ops._c10d_functional.all_reduce.default(x, 'sum', '0')\\n"
              "    wait = torch.ops._c10d_functional.wait_tensor.default(all_reduce)\\n"
              "    # torch.distributed.broadcast(x, 0) in a comment line\\n"
              "    y = torch.distributed.broadcast(x, 0)\\n"
              "    z = torch.add(x, 1); v = torch.distributed.get_rank()\\n"
              "    w = mytorch.distributed.all_reduce(x)\\n"
              "    return torch.distributed.all_reduce_coalesced([x])\\n\n"
              "graph|0/1|eager|2|def forward(self):\\n    torch.distributed.barrier()\\n\n"
              "compile|0|0/1|0\n" C0);
    Collected c = {.stop_after = -1};
    cr_expect_eq(dr_model_collectives(l.m, collect_op, &c), 5);
    cr_expect_str_eq(c.seen, "barrier@0/1 all_reduce@0/0 wait_tensor@0/0 broadcast@0/0"
                             " all_reduce_coalesced@0/0");
    Collected stop = {.stop_after = 2};
    cr_expect_eq(dr_model_collectives(l.m, collect_op, &stop), -1);
    cr_expect_str_eq(stop.seen, "barrier@0/1 all_reduce@0/0");
    cr_expect_eq(dr_model_collectives(l.m, NULL, NULL), 5);
    loaded_free(&l);
}
