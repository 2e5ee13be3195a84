#define _GNU_SOURCE 1
/* test_pack.c -- `dynrec pack`: a trace made into a bug-report attachment.
 *
 * A real program is recorded from a home directory with a token in a
 * recorded environment variable and a private string its guards compare
 * against; the pack's bytes, and every payload decoded, are searched for
 * each of them.  Packing is checked to be deterministic and idempotent,
 * --max-size to be honoured, and the pack to open in every reader. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2e_util.h"

TestSuite(pack, .init = e2e_setup, .fini = e2e_teardown, .timeout = 300);

static const char *const secrets[] = {"dynrecuser7", "tok-5d1e9a7c40", "swordfish-42",
                                      "other-mode-99"};

static E2eProc *dynrec(const char *const *args) {
    const char *argv[16] = {e2e_bin};
    for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = args[i];
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* Records tests/scripts/secret_app.py from home/dynrecuser7/proj with HOME,
 * USER and a TORCH_ variable (recorded in meta) set as a user's would be. */
static void record_secret(const char *trace) {
    char *home = e2e_path("home/dynrecuser7");
    char *proj = e2e_fmt("%s/proj", home);
    E2eProc *m = e2e_run((const char *[]){"/bin/mkdir", "-p", proj, NULL});
    e2e_assert_exit(m, 0, "mkdir");
    size_t len = 0;
    char *src = e2e_slurp(e2e_fmt("%s/secret_app.py", e2e_scripts), &len);
    cr_assert_not_null(src);
    e2e_write_file(e2e_fmt("%s/secret_app.py", proj), src, len);
    E2eProc *p = e2e_run_in(
        (const char *[]){"/usr/bin/env", e2e_fmt("HOME=%s", home), "USER=dynrecuser7",
                         "LOGNAME=dynrecuser7", "TORCH_BUG_TOKEN=tok-5d1e9a7c40", "/bin/sh", "-c",
                         e2e_fmt("cd '%s' && exec '%s' run -q -o '%s' secret_app.py", proj, e2e_bin,
                                 e2e_path(trace)),
                         NULL},
        NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, "recording secret_app.py");
    cr_assert_not_null(strstr(p->out.data, "[2.0, 2.0, 2.0]"), "%s", p->out.data);
}

static E2eProc *pack_as_user(const char *const *args) {
    const char *argv[20] = {"/usr/bin/env", e2e_fmt("HOME=%s", e2e_path("home/dynrecuser7")),
                            "USER=dynrecuser7", e2e_bin, "pack"};
    for (int i = 0; args[i] && i < 14; i++) argv[i + 5] = args[i];
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* Every payload of a trace, decoded, through `dynrec sql`. */
static char *all_payloads(const char *trace) {
    E2eProc *p = dynrec(
        (const char *[]){"sql", trace, "SELECT dynrec_text(id) FROM blobs ORDER BY id", NULL});
    e2e_assert_exit(p, 0, e2e_fmt("dynrec sql on %s: %s", trace, p->err.data));
    return p->out.data;
}

static int contains(const char *hay, size_t n, const char *needle) {
    return memmem(hay, n, needle, strlen(needle)) != NULL;
}

Test(pack, redact_leaves_no_home_user_env_value_or_constant) {
    record_secret("t.db");
    /* The recording holds every secret (else the test proves nothing). */
    char *raw = all_payloads("t.db");
    size_t tlen = 0;
    char *tbytes = e2e_slurp(e2e_path("t.db"), &tlen);
    for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
        cr_assert(contains(tbytes, tlen, secrets[i]) || strstr(raw, secrets[i]),
                  "the recording lacks '%s'", secrets[i]);

    E2eProc *p = pack_as_user((const char *[]){"--redact", "t.db", "-o", "bug.dynrec", NULL});
    e2e_assert_exit(p, 0, e2e_fmt("dynrec pack --redact: %s", p->err.data));
    /* The user name occurs only inside the home directory here. */
    cr_assert_not_null(strstr(p->err.data, "redacted: paths, env values, 2 string constants"), "%s",
                       p->err.data);
    size_t len = 0;
    char *bytes = e2e_slurp(e2e_path("bug.dynrec"), &len);
    char *decoded = all_payloads("bug.dynrec");
    E2eProc *dump =
        e2e_run_in((const char *[]){"/usr/bin/sqlite3", e2e_path("bug.dynrec"), ".dump", NULL},
                   NULL, E2E_TIMEOUT_MS);
    e2e_assert_exit(dump, 0, "sqlite3 .dump");
    const char *home = e2e_path("home/dynrecuser7");
    for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++) {
        cr_assert(!contains(bytes, len, secrets[i]), "'%s' left in the pack's bytes", secrets[i]);
        cr_assert_null(strstr(decoded, secrets[i]), "'%s' left in a payload", secrets[i]);
        cr_assert_null(strstr(dump->out.data, secrets[i]), "'%s' left in a table", secrets[i]);
    }
    cr_assert(!contains(bytes, len, home) && !strstr(decoded, home));
    cr_assert_eq(access(e2e_path("bug.dynrec-wal"), F_OK), -1, "the pack has a WAL");

    /* Said, not silent: show, the log table, and the stable tokens. */
    E2eProc *s = dynrec((const char *[]){"show", "bug.dynrec", NULL});
    e2e_assert_exit(s, 0, "show on the pack");
    cr_assert_not_null(strstr(s->out.data, "redacted     paths, env values, 2 string constants"),
                       "%s", s->out.data);
    DrTrace *t = e2e_open(e2e_path("bug.dynrec"));
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM pack_log WHERE what = 'string constants'"),
                 1);
    cr_assert_str_eq(e2e_meta(t, "env.TORCH_BUG_TOKEN"), "<redacted>");
    char *g = e2e_sql(t, "SELECT guard FROM v_guards WHERE guard LIKE 'EQUALS_MATCH%%<str:%%'");
    cr_assert(g && strstr(g, "== '<str:"), "%s", g ? g : "(no redacted guard)");
    char *cwd = e2e_meta(t, "cwd");
    cr_assert(cwd && strcmp(cwd, "~/proj") == 0, "cwd %s", cwd ? cwd : "(none)");
    e2e_close(t);

    /* Every reader opens it; the replay still runs: the sources are kept. */
    E2eProc *r = dynrec((const char *[]){"report", "bug.dynrec", NULL});
    e2e_assert_exit(r, 0, "report on the pack");
}

Test(pack, redacted_packs_of_two_runs_still_diff_identical) {
    record_secret("a.db");
    record_secret("b.db");
    for (int i = 0; i < 2; i++) {
        E2eProc *p = pack_as_user((const char *[]){"-q", "--redact", i ? "b.db" : "a.db", "-o",
                                                   i ? "b.dynrec" : "a.dynrec", NULL});
        e2e_assert_exit(p, 0, p->err.data);
    }
    E2eProc *d = dynrec((const char *[]){"diff", "a.dynrec", "b.dynrec", NULL});
    e2e_assert_exit(d, 0, e2e_fmt("diff of two redacted packs: %s", d->out.data));
    cr_assert(strncmp(d->out.data, "identical:", 10) == 0, "%s", d->out.data);
}

/* A redacted pack still replays compile for compile: the string constants
 * it replaces change how Dynamo pads the guards' comments, which masking
 * ignores (COMPARE.md), and the recompiles on a string's value still fail
 * the same guards. */
Test(pack, redacted_pack_replays_every_compile) {
    e2e_copy_script("repro/values.py");
    E2eProc *r = dynrec((const char *[]){"run", "-q", "-o", "t.db", "repro/values.py", NULL});
    e2e_assert_exit(r, 0, r->err.data);
    E2eProc *p = dynrec((const char *[]){"pack", "-q", "--redact", "t.db", "-o", "v.dynrec", NULL});
    e2e_assert_exit(p, 0, p->err.data);
    mkdir(e2e_path("elsewhere"), 0755);
    E2eProc *rp = e2e_run_in((const char *[]){"/bin/sh", "-c",
                                              e2e_fmt("cd '%s' && exec '%s' replay ../v.dynrec",
                                                      e2e_path("elsewhere"), e2e_bin),
                                              NULL},
                             NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(rp, 0,
                    e2e_fmt("replay of the redacted pack: %s%s", rp->out.data, rp->err.data));
    const char *at = strstr(rp->out.data, "reproduced ");
    int got = 0, all = 0;
    cr_assert(at && sscanf(at, "reproduced %d/%d compiles", &got, &all) == 2, "%s", rp->out.data);
    cr_assert_geq(all, 3, "%s", rp->out.data);
    cr_assert_eq(got, all, "%s", rp->out.data);
}

Test(pack, deterministic_idempotent_and_redact_source_keeps_traced_lines) {
    record_secret("t.db");
    const char *opts[][6] = {{"-q", "--redact", "--redact-source", "t.db", "-o", "p1.dynrec"},
                             {"-q", "--redact", "--redact-source", "t.db", "-o", "p2.dynrec"},
                             {"-q", "--redact", "--redact-source", "p1.dynrec", "-o", "p3.dynrec"}};
    for (int i = 0; i < 3; i++) {
        E2eProc *p = pack_as_user((const char *[]){opts[i][0], opts[i][1], opts[i][2], opts[i][3],
                                                   opts[i][4], opts[i][5], NULL});
        e2e_assert_exit(p, 0, p->err.data);
    }
    size_t l1 = 0, l2 = 0, l3 = 0;
    char *b1 = e2e_slurp(e2e_path("p1.dynrec"), &l1), *b2 = e2e_slurp(e2e_path("p2.dynrec"), &l2),
         *b3 = e2e_slurp(e2e_path("p3.dynrec"), &l3);
    cr_assert(l1 == l2 && memcmp(b1, b2, l1) == 0, "two packs of one trace differ");
    cr_assert(l1 == l3 && memcmp(b1, b3, l1) == 0, "a pack of the pack differs");

    /* The source: the traced function's lines kept, the untraced blanked,
     * line numbers kept. */
    E2eProc *q = dynrec((const char *[]){"sql", "p1.dynrec",
                                         "SELECT dynrec_text(blob_id) FROM v_files"
                                         " WHERE role = 'script'",
                                         NULL});
    e2e_assert_exit(q, 0, q->err.data);
    cr_assert_null(strstr(q->out.data, "untraced-marker"), "%s", q->out.data);
    cr_assert_not_null(strstr(q->out.data, "    return x - 1"), "%s", q->out.data);
    int lines = 0;
    for (const char *c = q->out.data; *c; c++) lines += *c == '\n';
    cr_assert_geq(lines, 21, "line numbers lost:\n%s", q->out.data);
    E2eProc *s = dynrec((const char *[]){"show", "p1.dynrec", NULL});
    cr_assert_not_null(strstr(s->out.data, " source lines"), "%s", s->out.data);
}

Test(pack, max_size_drops_largest_payloads_or_fails_cleanly) {
    e2e_copy_example("graph_breaks.py");
    E2eProc *r =
        e2e_record("t.db", (const char *[]){"graph_breaks.py", NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(r, 0, "graph_breaks.py");
    E2eProc *full = dynrec((const char *[]){"pack", "-q", "t.db", "-o", "full.dynrec", NULL});
    e2e_assert_exit(full, 0, full->err.data);
    struct stat sb;
    cr_assert_eq(stat(e2e_path("full.dynrec"), &sb), 0);
    long cap = (long)sb.st_size - 8 * 1024;
    char capb[32];
    snprintf(capb, sizeof capb, "%ld", cap);
    E2eProc *p =
        dynrec((const char *[]){"pack", "--max-size", capb, "t.db", "-o", "small.dynrec", NULL});
    e2e_assert_exit(p, 0, p->err.data);
    cr_assert_not_null(strstr(p->err.data, "to fit --max-size"), "%s", p->err.data);
    cr_assert_eq(stat(e2e_path("small.dynrec"), &sb), 0);
    cr_assert_leq((long)sb.st_size, cap, "%ld > %ld", (long)sb.st_size, cap);
    DrTrace *o = e2e_open(e2e_path("t.db"));
    long long compiles = e2e_sql_int(o, "SELECT count(*) FROM v_compiles"),
              guards = e2e_sql_int(o, "SELECT count(*) FROM v_guards");
    e2e_close(o);
    DrTrace *t = e2e_open(e2e_path("small.dynrec"));
    cr_assert_gt(e2e_sql_int(t, "SELECT count(*) FROM pack_log WHERE what = 'dropped'"), 0);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles"), compiles);
    cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_guards"), guards);
    e2e_close(t);
    E2eProc *d = dynrec((const char *[]){"diff", "t.db", "small.dynrec", NULL});
    e2e_assert_exit(d, 0, e2e_fmt("the decisions are all kept: %s", d->out.data));
    E2eProc *s = dynrec((const char *[]){"show", "small.dynrec", NULL});
    cr_assert_not_null(strstr(s->out.data, "dropped      "), "%s", s->out.data);

    E2eProc *tiny =
        dynrec((const char *[]){"pack", "--max-size", "8K", "t.db", "-o", "x.dynrec", NULL});
    e2e_assert_exit(tiny, 1, "an impossible cap");
    cr_assert_not_null(strstr(tiny->err.data, "essential rows alone"), "%s", tiny->err.data);
    cr_assert_eq(access(e2e_path("x.dynrec"), F_OK), -1, "a pack over the cap was written");
}

Test(pack, bad_input_and_usage) {
    e2e_write_file(e2e_path("junk.db"), "not a trace at all, just text\n", 30);
    E2eProc *j = dynrec((const char *[]){"pack", "junk.db", "-o", "o.dynrec", NULL});
    e2e_assert_exit(j, 65, "pack of a junk file");
    cr_assert_not_null(strstr(j->err.data, "junk.db"), "%s", j->err.data);
    cr_assert_eq(access(e2e_path("o.dynrec"), F_OK), -1);
    E2eProc *u = dynrec((const char *[]){"pack", "junk.db", NULL});
    e2e_assert_exit(u, 2, "pack without -o");
    E2eProc *h = dynrec((const char *[]){"pack", "--help", NULL});
    e2e_assert_exit(h, 0, "pack --help");
    cr_assert_not_null(strstr(h->out.data, "--redact-source"));
}
