#define _GNU_SOURCE 1
/* test_ranks.c -- end-to-end tests of `dynrec ranks` (the per-rank traces of
 * one torchrun job) and `dynrec diff DIR DIR` (two test runs, test by test).
 *
 * Real torch, the real binary, no torchrun: each rank is its own
 * `RANK=N WORLD_SIZE=W dynrec run` of scripts/ranks/train.py, whose fake
 * process group lets a compiled all_reduce trace as it does under torchrun.
 * The JSON reports are checked through SQLite's json functions. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2e_util.h"

TestSuite(ranks, .init = e2e_setup, .fini = e2e_teardown, .timeout = 300);
TestSuite(diff_dirs, .init = e2e_setup, .fini = e2e_teardown, .timeout = 300);

/* `env... dynrec run -q -o TRACE SCRIPT ARGS` started through the shell in
 * the test's directory; e2e_wait (or record_all) ends it. */
static E2eProc *start_record(const char *env, const char *trace, const char *script_args) {
    return e2e_spawn((const char *[]){"/bin/sh", "-c",
                                      e2e_fmt("%s exec '%s' run -q -o '%s' %s >/dev/null", env,
                                              e2e_bin, e2e_path(trace), script_args),
                                      NULL},
                     NULL);
}

/* Waits for recordings started together; each must exit 0. */
static void record_all(E2eProc **p, int n) {
    for (int i = 0; i < n; i++) {
        e2e_wait(p[i], E2E_TORCH_TIMEOUT_MS);
        e2e_assert_exit(p[i], 0, e2e_fmt("recording %d: %s", i, p[i]->err.data));
    }
}

/* Records ranks 0..n-1 of a world of n with `-o DIR/train.db`, which the
 * recorder names DIR/train-rankN.db; the rank diverge (-1: none)
 * recompiles. */
static void record_job(const char *dir, int n, int diverge) {
    e2e_copy_script("ranks/train.py");
    mkdir(e2e_path(dir), 0755);
    E2eProc *p[8];
    for (int r = 0; r < n; r++)
        p[r] = start_record(e2e_fmt("RANK=%d WORLD_SIZE=%d DIVERGE_RANK=%d", r, n, diverge),
                            e2e_fmt("%s/train.db", dir), "ranks/train.py");
    record_all(p, n);
    for (int r = 0; r < n; r++) {
        struct stat st;
        cr_assert_eq(stat(e2e_path(e2e_fmt("%s/train-rank%d.db", dir, r)), &st), 0,
                     "no %s/train-rank%d.db", dir, r);
    }
}

static E2eProc *dynrec(const char *const *args) {
    const char *argv[16] = {e2e_bin};
    for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = args[i];
    return e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
}

static void assert_has(const E2eProc *p, const char *want) {
    cr_assert_not_null(strstr(p->out.data, want), "no '%s' in:\n%s\nstderr:\n%s", want, p->out.data,
                       p->err.data);
}

/* json_extract(json, path) as text ("NULL" for null or absent; true is
 * "1"), after asserting that json is valid JSON. */
static char *json_at(const char *json, const char *path) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    cr_assert_eq(
        sqlite3_prepare_v2(db, "SELECT json_valid(?1), json_extract(?1, ?2)", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_eq(sqlite3_column_int(st, 0), 1, "not JSON:\n%s", json);
    const unsigned char *v = sqlite3_column_text(st, 1);
    char *out = e2e_fmt("%s", v ? (const char *)v : "NULL");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

static void assert_json(const char *json, const char *path, const char *want) {
    cr_assert_str_eq(json_at(json, path), want, "%s in:\n%s", path, json);
}

/* A copy of trace from (in the test's directory) as to, with sql run on
 * it. */
static void edited_copy(const char *from, const char *to, const char *sql) {
    size_t len = 0;
    char *data = e2e_slurp(e2e_path(from), &len);
    cr_assert_not_null(data, "%s is missing", from);
    e2e_write_file(e2e_path(to), data, len);
    sqlite3 *db = NULL;
    char *msg = NULL;
    cr_assert_eq(sqlite3_open(e2e_path(to), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", to, msg);
    cr_assert_eq(sqlite3_close(db), SQLITE_OK);
}

/* Ranks that did the same work agree, from a directory or from files in
 * any order; a directory's other files and links are not traces; the meta
 * dist.rank wins over the file name; two traces of one rank, a trace
 * without a rank and a single trace are usage errors. */
Test(ranks, ranks_that_did_the_same_work_agree) {
    record_job("job", 2, -1);
    e2e_write_file(e2e_path("job/notes.txt"), "not a trace\n", 12);
    cr_assert_eq(symlink("train-rank0.db", e2e_path("job/link-rank7.db")), 0);
    E2eProc *p = dynrec((const char *[]){"ranks", "job", NULL});
    e2e_assert_exit(p, 0, e2e_fmt("ranks job:\n%s%s", p->out.data, p->err.data));
    assert_has(p, "ranks: 2 traces");
    assert_has(p, "rank 1: same as rank 0\n");
    assert_has(p, "  rank 0: all_reduce, wait_tensor\n  rank 1: all_reduce, wait_tensor\n");
    assert_has(p, "  the same on every rank\n");
    assert_has(p, "all 2 ranks agree with rank 0\n");
    cr_assert_null(strstr(p->out.data, "rank 7"), "a link was read as a trace:\n%s", p->out.data);
    cr_assert_null(strstr(p->out.data, "first rank divergence"), "%s", p->out.data);

    E2eProc *j = dynrec((const char *[]){"ranks", "--json", "job", NULL});
    e2e_assert_exit(j, 0, "ranks --json job");
    assert_json(j->out.data, "$.identical", "1");
    assert_json(j->out.data, "$.base_rank", "0");
    assert_json(j->out.data, "$.ranks[1].rank", "1");
    assert_json(j->out.data, "$.ranks[1].same", "1");
    assert_json(j->out.data, "$.ranks[1].rank_from", "meta");
    assert_json(j->out.data, "$.world_size", "2");
    assert_json(j->out.data, "$.ranks[1].diff.identical", "1");
    assert_json(j->out.data, "$.ranks[0].collectives[0]", "all_reduce");
    assert_json(j->out.data, "$.ranks[2]", "NULL");
    assert_json(j->out.data, "$.collectives.same", "1");
    assert_json(j->out.data, "$.first_rank_divergence", "NULL");

    /* Files in any order are sorted by rank. */
    E2eProc *f =
        dynrec((const char *[]){"ranks", "job/train-rank1.db", "job/train-rank0.db", NULL});
    e2e_assert_exit(f, 0, e2e_fmt("ranks FILES:\n%s%s", f->out.data, f->err.data));
    assert_has(f, "each compared with rank 0 (job/train-rank0.db)");

    /* Without the meta dist.rank, the name says the rank. */
    mkdir(e2e_path("old"), 0755);
    edited_copy("job/train-rank0.db", "old/t-rank0.db",
                "DELETE FROM meta WHERE key LIKE 'dist.%';");
    edited_copy("job/train-rank1.db", "old/t-rank1.db",
                "DELETE FROM meta WHERE key LIKE 'dist.%';");
    E2eProc *o = dynrec((const char *[]){"ranks", "--json", "old", NULL});
    e2e_assert_exit(o, 0, e2e_fmt("ranks old:\n%s%s", o->out.data, o->err.data));
    assert_json(o->out.data, "$.ranks[1].rank", "1");
    assert_json(o->out.data, "$.ranks[1].rank_from", "name");
    /* The meta dist.rank wins over the name. */
    edited_copy("job/train-rank1.db", "renamed-rank5.db", "SELECT 1;");
    E2eProc *m =
        dynrec((const char *[]){"ranks", "--json", "job/train-rank0.db", "renamed-rank5.db", NULL});
    e2e_assert_exit(m, 0, e2e_fmt("ranks with meta:\n%s%s", m->out.data, m->err.data));
    assert_json(m->out.data, "$.ranks[1].rank", "1");
    assert_json(m->out.data, "$.ranks[1].rank_from", "meta");

    /* Two traces of rank 1: both named. */
    edited_copy("job/train-rank1.db", "copy-rank1.db", "SELECT 1;");
    E2eProc *dup = dynrec((const char *[]){"ranks", "job/train-rank1.db", "copy-rank1.db",
                                           "job/train-rank0.db", NULL});
    e2e_assert_exit(dup, 2, "two traces of one rank");
    cr_assert_not_null(
        strstr(dup->err.data, "copy-rank1.db and job/train-rank1.db are both rank 1"), "%s",
        dup->err.data);
    cr_assert_str_eq(dup->out.data, "");

    /* A trace with neither a meta dist.rank nor a -rankN name. */
    e2e_copy_script("exit_with.py");
    E2eProc *plain = start_record("", "plain.db", "exit_with.py 0");
    record_all(&plain, 1);
    E2eProc *nr = dynrec((const char *[]){"ranks", "plain.db", "job/train-rank0.db", NULL});
    e2e_assert_exit(nr, 2, "a trace without a rank");
    cr_assert_not_null(strstr(nr->err.data, "dynrec ranks: plain.db has no rank"), "%s",
                       nr->err.data);

    /* One trace: nothing to compare. */
    E2eProc *one = dynrec((const char *[]){"ranks", "job/train-rank0.db", NULL});
    e2e_assert_exit(one, 2, "one trace");
    cr_assert_not_null(strstr(one->err.data, "nothing to compare"), "%s", one->err.data);
    /* A directory among traces; a directory without traces. */
    E2eProc *mix = dynrec((const char *[]){"ranks", "job", "job/train-rank0.db", NULL});
    e2e_assert_exit(mix, 2, "a directory among traces");
    mkdir(e2e_path("empty"), 0755);
    E2eProc *empty = dynrec((const char *[]){"ranks", "empty", NULL});
    e2e_assert_exit(empty, 2, "an empty directory");
    cr_assert_not_null(strstr(empty->err.data, "empty holds no *.db trace"), "%s", empty->err.data);
}

/* SQL that replaces the code of the first graph of a trace with code, as
 * a raw blob (schema/codec.h: codec byte 0, the length as a LEB128 varint,
 * the bytes). */
static char *set_graph_code(const char *code) {
    size_t n = strlen(code);
    char *hex = e2e_fmt("00%02zx%s", n < 128 ? n : (n & 0x7f) | 0x80,
                        n < 128 ? "" : e2e_fmt("%02zx", n >> 7));
    cr_assert_lt(n, (size_t)16384);
    char *quoted = sqlite3_mprintf("%Q", code);
    cr_assert_not_null(quoted);
    char *sql = e2e_fmt("UPDATE blobs SET data = X'%s' || CAST(%s AS BLOB) WHERE id ="
                        " (SELECT blob_id FROM v_ev WHERE kind = 'graph' ORDER BY seq LIMIT 1);",
                        hex, quoted);
    sqlite3_free(quoted);
    return sql;
}

/* The collectives are the calls of c10d operators and of torch.distributed's
 * collectives in the graph code, in order; comment lines, other operators
 * and other torch.distributed functions are not. */
Test(ranks, collectives_are_read_from_the_graph_code) {
    record_job("job", 2, -1);
    mkdir(e2e_path("ed"), 0755);
    edited_copy("job/train-rank0.db", "ed/t-rank0.db", "SELECT 1;");
    edited_copy("job/train-rank1.db", "ed/t-rank1.db",
                set_graph_code("def forward(self, L_x_ : torch.Tensor):\n"
                               "    # File: t.py:3 in f, code: torch.distributed.broadcast(x, 0)\n"
                               "    n = torch.distributed.get_rank()\n"
                               "    a = torch.distributed.all_reduce(L_x_)\n"
                               "    b = torch.ops._c10d_functional.all_gather_into_tensor.default("
                               "a, 2, '0');  a = None\n"
                               "    c = torch.ops.aten.add.Tensor(b, 1)\n"
                               "    d = torch.ops.c10d.allreduce_.default([c])\n"
                               "    return (torch.ops._c10d_functional.wait_tensor(d),)\n"));
    E2eProc *p = dynrec((const char *[]){"ranks", "ed", NULL});
    e2e_assert_exit(p, 1, e2e_fmt("ranks ed:\n%s%s", p->out.data, p->err.data));
    assert_has(p, "rank 1: differs from rank 0: graphs of compile #0 of step differ");
    assert_has(p, "  rank 1: all_reduce, all_gather_into_tensor, allreduce_, wait_tensor\n");
    assert_has(p, "  first difference: collective #2: rank 0 has wait_tensor (compile 0/0), "
                  "rank 1 has all_gather_into_tensor (compile 0/0)\n");
    /* --ignore graphs leaves the collectives out too. */
    E2eProc *ig = dynrec((const char *[]){"ranks", "--ignore", "graphs", "ed", NULL});
    e2e_assert_exit(ig, 0, e2e_fmt("ranks --ignore graphs:\n%s%s", ig->out.data, ig->err.data));
    assert_has(ig, "collectives: not compared (--ignore graphs)\n");
}

/* Rank 2 of 3 calls the compiled step with a second shape: it alone
 * recompiles, and so calls its collectives twice.  The report names rank
 * 2, its compile, both sides, and where the collectives part. */
Test(ranks, a_recompile_on_one_rank_is_the_first_rank_divergence) {
    record_job("job", 3, 2);
    E2eProc *p = dynrec((const char *[]){"ranks", "job", NULL});
    e2e_assert_exit(p, 1, e2e_fmt("ranks job:\n%s%s", p->out.data, p->err.data));
    assert_has(p, "rank 1: same as rank 0\n");
    assert_has(p, "rank 2: differs from rank 0: compile #1 of step only in b");
    /* The engine's report, indented under the rank. */
    assert_has(p, "    different: first divergence in compiles\n");
    assert_has(p, "    b: rank 2 (job/train-rank2.db): ");
    assert_has(p, "  rank 2: all_reduce, wait_tensor, all_reduce, wait_tensor\n");
    assert_has(p, "  first difference: collective #3: rank 0 has no collective #3, rank 2 has "
                  "all_reduce (compile 0/1)\n");
    assert_has(p, "first rank divergence: rank 2 differs from rank 0 in compiles: compile #1 of "
                  "step only in b");
    assert_has(p, "  frame:   step at train.py:");
    assert_has(p, "  compile: - in rank 0, 0/1 in rank 2\n");
    assert_has(p, "  rank 0 (a): (no such compile)\n");
    assert_has(p, "1 of 2 ranks differ from rank 0\n");

    E2eProc *j = dynrec((const char *[]){"ranks", "--json", "job", NULL});
    e2e_assert_exit(j, 1, "ranks --json job");
    assert_json(j->out.data, "$.identical", "0");
    assert_json(j->out.data, "$.ranks[1].same", "1");
    assert_json(j->out.data, "$.ranks[2].same", "0");
    assert_json(j->out.data, "$.ranks[2].first_divergence.category", "compiles");
    assert_json(j->out.data, "$.ranks[2].first_divergence.compile_b", "0/1");
    assert_json(j->out.data, "$.ranks[2].diff.identical", "0");
    assert_json(j->out.data, "$.first_rank_divergence.rank", "2");
    assert_json(j->out.data, "$.first_rank_divergence.divergence.frame.qualname", "step");
    assert_json(j->out.data, "$.collectives.first_difference.rank", "2");
    assert_json(j->out.data, "$.collectives.first_difference.index", "2");
    assert_json(j->out.data, "$.collectives.first_difference.other", "all_reduce");
    assert_json(j->out.data, "$.collectives.first_difference.base", "NULL");
    assert_json(j->out.data, "$.ranks[2].collective_compiles[3]", "0/1");

    /* Ranks 0 and 1 alone agree. */
    E2eProc *two =
        dynrec((const char *[]){"ranks", "job/train-rank0.db", "job/train-rank1.db", NULL});
    e2e_assert_exit(two, 0, e2e_fmt("ranks 0 and 1:\n%s", two->out.data));
    /* Without rank 0, the lowest rank given is the base, and a note says so. */
    E2eProc *nob =
        dynrec((const char *[]){"ranks", "job/train-rank1.db", "job/train-rank2.db", NULL});
    e2e_assert_exit(nob, 1, "ranks 1 and 2");
    assert_has(nob, "rank 2: differs from rank 1: ");
    assert_has(nob, "note: no trace of rank 0: every rank is compared with rank 1\n");
}

/* Two test runs, one trace per test: a test whose trace changed is named
 * (by its meta test.nodeid), one on one side only too; --ignore applies to
 * every pair; two runs of the same tests diff identical. */
Test(diff_dirs, a_changed_test_and_a_test_on_one_side_are_named) {
    e2e_copy_script("ranks/work.py");
    mkdir(e2e_path("base"), 0755);
    mkdir(e2e_path("new"), 0755);
    E2eProc *p[4] = {
        start_record("", "base/test_one.db", "ranks/work.py"),
        start_record("", "base/test_two.db", "ranks/work.py"),
        start_record("", "new/test_one.db", "ranks/work.py"),
        start_record("", "new/test_two.db", "ranks/work.py --recompile"),
    };
    record_all(p, 4);
    edited_copy("new/test_two.db", "new/test_two.db.tmp",
                "INSERT OR REPLACE INTO meta(key, value) VALUES('test.nodeid',"
                " 'tests/test_m.py::test_two');");
    cr_assert_eq(rename(e2e_path("new/test_two.db.tmp"), e2e_path("new/test_two.db")), 0);

    E2eProc *d = dynrec((const char *[]){"diff", "base", "new", NULL});
    e2e_assert_exit(d, 1, e2e_fmt("diff base new:\n%s%s", d->out.data, d->err.data));
    assert_has(d, "changed: tests/test_m.py::test_two: compile #1 of f only in b");
    cr_assert_null(strstr(d->out.data, "test_one"), "an unchanged test is listed:\n%s",
                   d->out.data);
    assert_has(d, "2 tests compared, 1 changed\n");
    assert_has(d, "dynrec diff base/test_two.db new/test_two.db\n");

    /* diff's options apply to every pair. */
    E2eProc *ig =
        dynrec((const char *[]){"diff", "--ignore", "frames,compiles", "base", "new", NULL});
    e2e_assert_exit(ig, 0, e2e_fmt("diff --ignore:\n%s%s", ig->out.data, ig->err.data));
    assert_has(ig, "2 tests compared, 0 changed\n");

    /* A test on one side only. */
    edited_copy("base/test_one.db", "base/test_gone.db", "SELECT 1;");
    E2eProc *g = dynrec((const char *[]){"diff", "base", "new", NULL});
    e2e_assert_exit(g, 1, "diff with a test only in base");
    assert_has(g, "only in base: test_gone.db\n");
    assert_has(g, "2 tests compared, 1 changed, 1 only in the baseline, 0 only in the new\n");

    E2eProc *j = dynrec((const char *[]){"diff", "--json", "base", "new", NULL});
    e2e_assert_exit(j, 1, "diff --json base new");
    assert_json(j->out.data, "$.identical", "0");
    assert_json(j->out.data, "$.compared", "2");
    assert_json(j->out.data, "$.changed", "1");
    assert_json(j->out.data, "$.tests[0].file", "test_gone.db");
    assert_json(j->out.data, "$.tests[0].status", "only_in_baseline");
    assert_json(j->out.data, "$.tests[1].status", "same");
    assert_json(j->out.data, "$.tests[2].name", "tests/test_m.py::test_two");
    assert_json(j->out.data, "$.tests[2].status", "changed");
    assert_json(j->out.data, "$.tests[2].first_divergence.category", "compiles");

    /* Two recordings of the same test: identical. */
    mkdir(e2e_path("a1"), 0755);
    mkdir(e2e_path("b1"), 0755);
    edited_copy("base/test_one.db", "a1/test_one.db", "SELECT 1;");
    edited_copy("new/test_one.db", "b1/test_one.db", "SELECT 1;");
    E2eProc *same = dynrec((const char *[]){"diff", "a1", "b1", NULL});
    e2e_assert_exit(same, 0, e2e_fmt("diff a1 b1:\n%s%s", same->out.data, same->err.data));
    cr_assert_str_eq(same->out.data, "1 test compared, 0 changed\n");

    /* A directory against a trace is a usage error. */
    E2eProc *mix = dynrec((const char *[]){"diff", "a1", "b1/test_one.db", NULL});
    e2e_assert_exit(mix, 2, "diff DIR FILE");
    cr_assert_not_null(strstr(mix->err.data, "a1 is a directory and b1/test_one.db is not"), "%s",
                       mix->err.data);
}
