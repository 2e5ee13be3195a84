/* test_cli.c -- the command line, table-driven: every command of the table
 * in dynrec.c answers --help, an unknown option, a missing operand, an
 * option without its value and an unreadable trace the same way (the one
 * parser and the one set of exit statuses, cli/).  A new command gets a row
 * here. */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <unistd.h>

#include "e2e_util.h"

TestSuite(cli, .init = e2e_setup, .fini = e2e_teardown, .timeout = 240);

typedef struct {
    const char *name;
    const char *value_opt;    /* an option that takes a value */
    const char *bad_trace[4]; /* arguments naming a trace that does not exist */
} CliRow;

static const CliRow rows[] = {
    {"run", "-o", {NULL}},
    {"show", "--top", {"no_such.db"}},
    {"view", "--screen", {"no_such.db"}},
    {"diff", "--context", {"no_such.db", "no_such_either.db"}},
    {"ranks", "--context", {"no_such.db", "no_such_either.db"}},
    {"rerun", "-o", {"no_such.db"}},
    {"replay", "--frame", {"no_such.db"}},
    {"sql", NULL, {"no_such.db", "SELECT 1"}},
    {"export", "--format", {"--format", "perfetto", "no_such.db"}},
    {"report", "--top", {"no_such.db"}},
    {"pack", "--max-size", {"-o", "out.dynrec", "no_such.db"}},
    {"repro", "--compile", {"no_such.db"}},
};

static E2eProc *cli(const char *name, const char *const *args) {
    const char *argv[8] = {e2e_bin, name};
    for (int i = 0; args[i] && i < 5; i++) argv[2 + i] = args[i];
    return e2e_run(argv);
}

static void assert_usage_error(const E2eProc *p, const char *name, const char *what,
                               const char *says) {
    e2e_assert_exit(p, 2, e2e_fmt("dynrec %s %s", name, what));
    cr_assert_str_eq(p->out.data, "", "dynrec %s %s: stdout:\n%s", name, what, p->out.data);
    cr_assert_not_null(strstr(p->err.data, e2e_fmt("dynrec %s: %s", name, says)),
                       "dynrec %s %s: stderr:\n%s", name, what, p->err.data);
    cr_assert_not_null(strstr(p->err.data, e2e_fmt("Try 'dynrec %s --help'.", name)),
                       "dynrec %s %s: stderr:\n%s", name, what, p->err.data);
}

/* One command's row: help, then each usage error, then a missing trace. */
static void check_row(const char *name) {
    const CliRow *r = NULL;
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (strcmp(rows[i].name, name) == 0) r = &rows[i];
    cr_assert_not_null(r, "no row for %s", name);
    E2eProc *top = e2e_run((const char *[]){e2e_bin, "--help", NULL});
    e2e_assert_exit(top, 0, "dynrec --help");
    cr_assert_not_null(strstr(top->out.data, e2e_fmt("\n  %-6s ", r->name)),
                       "dynrec --help does not list %s:\n%s", r->name, top->out.data);
    for (int h = 0; h < 2; h++) {
        E2eProc *p = cli(r->name, (const char *[]){h ? "-h" : "--help", NULL});
        e2e_assert_exit(p, 0, e2e_fmt("dynrec %s --help", r->name));
        cr_assert_eq(
            strncmp(p->out.data, e2e_fmt("usage: dynrec %s ", r->name), strlen(r->name) + 14), 0,
            "dynrec %s --help:\n%s", r->name, p->out.data);
        cr_assert_str_eq(p->err.data, "");
    }
    /* Help wins wherever it stands (but after run's script, whose
     * arguments the rest are). */
    if (strcmp(r->name, "run") != 0) {
        E2eProc *late = cli(r->name, (const char *[]){"x.db", "--help", NULL});
        e2e_assert_exit(late, 0, e2e_fmt("dynrec %s x.db --help", r->name));
    }
    assert_usage_error(cli(r->name, (const char *[]){"--frobnicate", "x.db", NULL}), r->name,
                       "--frobnicate", "unknown option --frobnicate");
    E2eProc *none = cli(r->name, (const char *[]){NULL});
    e2e_assert_exit(none, 2, e2e_fmt("dynrec %s without operands", r->name));
    cr_assert_not_null(strstr(none->err.data, e2e_fmt("Try 'dynrec %s --help'.", r->name)), "%s",
                       none->err.data);
    if (r->value_opt)
        assert_usage_error(cli(r->name, (const char *[]){r->value_opt, NULL}), r->name,
                           r->value_opt, e2e_fmt("%s needs ", r->value_opt));
    if (r->bad_trace[0]) {
        E2eProc *bad = cli(r->name, r->bad_trace);
        e2e_assert_exit(bad, 65, e2e_fmt("dynrec %s on a missing trace", r->name));
        cr_assert_not_null(strstr(bad->err.data, e2e_fmt("dynrec %s: ", r->name)), "%s",
                           bad->err.data);
        cr_assert_not_null(strstr(bad->err.data, "no_such.db"), "%s", bad->err.data);
    }
}

Test(cli, run) { check_row("run"); }
Test(cli, show) { check_row("show"); }
Test(cli, view) { check_row("view"); }
Test(cli, diff) { check_row("diff"); }
Test(cli, ranks) { check_row("ranks"); }
Test(cli, rerun) { check_row("rerun"); }
Test(cli, replay) { check_row("replay"); }
Test(cli, sql) { check_row("sql"); }
Test(cli, export) { check_row("export"); }
Test(cli, report) { check_row("report"); }
Test(cli, pack) { check_row("pack"); }
Test(cli, repro) { check_row("repro"); }

Test(cli, values_inline_ranges_and_sizes) {
    /* --name=value is the same as --name value, for every command. */
    E2eProc *p =
        e2e_run((const char *[]){e2e_bin, "export", "--format=perfetto", "no_such.db", NULL});
    e2e_assert_exit(p, 65, "export --format=perfetto");
    assert_usage_error(e2e_run((const char *[]){e2e_bin, "show", "--top=0", "x.db", NULL}), "show",
                       "--top=0", "--top needs a number from 1 to 100000, not 0");
    assert_usage_error(
        e2e_run((const char *[]){e2e_bin, "diff", "--context", "-1", "a", "b", NULL}), "diff",
        "--context -1", "--context needs a number from 0 to 100000");
    assert_usage_error(
        e2e_run((const char *[]){e2e_bin, "pack", "--max-size", "2G", "-o", "o", "x.db", NULL}),
        "pack", "--max-size 2G", "--max-size needs a size");
    assert_usage_error(
        e2e_run((const char *[]){e2e_bin, "replay", "--ignore", "guards,nope", "x.db", NULL}),
        "replay", "--ignore", "unknown category 'nope' for --ignore");
    assert_usage_error(e2e_run((const char *[]){e2e_bin, "rerun", "--set", "=1", "x.db", NULL}),
                       "rerun", "--set =1", "--set needs NAME=VALUE");
    assert_usage_error(e2e_run((const char *[]){e2e_bin, "show", "a.db", "b.db", NULL}), "show",
                       "a.db b.db", "one trace at a time (extra argument b.db)");
    /* A flag takes no value. */
    assert_usage_error(e2e_run((const char *[]){e2e_bin, "show", "--json=1", "x.db", NULL}), "show",
                       "--json=1", "unknown option --json=1");
    /* sql: after the trace, a query that starts with '-' is the query. */
    E2eProc *q = e2e_run((const char *[]){e2e_bin, "sql", "no_such.db", "-- a comment", NULL});
    e2e_assert_exit(q, 65, "sql with a query starting with --");
    E2eProc *u = e2e_run((const char *[]){e2e_bin, "frobnicate", NULL});
    e2e_assert_exit(u, 2, "an unknown command");
    cr_assert_not_null(strstr(u->err.data, "dynrec: unknown command 'frobnicate'\n"
                                           "Try 'dynrec --help'."),
                       "%s", u->err.data);
}

/* `dynrec --help` lists the command table; each of its commands has a row
 * above (and so its tests). */
Test(cli, every_listed_command_has_a_row) {
    E2eProc *top = e2e_run((const char *[]){e2e_bin, "--help", NULL});
    e2e_assert_exit(top, 0, "dynrec --help");
    const char *p = strstr(top->out.data, "commands:\n");
    cr_assert_not_null(p, "%s", top->out.data);
    const char *end = strstr(p, "\n\n");
    size_t listed = 0;
    for (p = strchr(p, '\n') + 1; p && p < end; p = strchr(p, '\n') + 1) {
        char name[16] = "";
        if (p[2] != ' ' && sscanf(p, " %15s", name) == 1) {
            int found = 0;
            for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
                found |= strcmp(rows[i].name, name) == 0;
            cr_assert(found, "dynrec %s has no row in tests/test_cli.c", name);
            listed++;
        }
    }
    cr_assert_eq(listed, sizeof rows / sizeof *rows, "%s", top->out.data);
}

/* Several traces at once (ranks, export of a job): a junk file among them
 * is named with the clean error, nothing is written. */
Test(cli, a_junk_file_among_several_traces) {
    e2e_write_file(e2e_path("j-rank0.db"), "junk", 4);
    e2e_write_file(e2e_path("j-rank1.db"), "not a trace either", 18);
    E2eProc *r = e2e_run((const char *[]){e2e_bin, "ranks", "j-rank0.db", "j-rank1.db", NULL});
    e2e_assert_exit(r, 65, "ranks of junk");
    cr_assert(strstr(r->err.data, "j-rank0.db: not an SQLite file, so not a dynrec trace"), "%s",
              r->err.data);
    E2eProc *x = e2e_run((const char *[]){e2e_bin, "export", "--format", "perfetto", "-o",
                                          "job.json", "j-rank0.db", "j-rank1.db", NULL});
    e2e_assert_exit(x, 65, "export of junk");
    cr_assert(strstr(x->err.data, "not an SQLite file"), "%s", x->err.data);
    cr_assert(access(e2e_path("job.json"), F_OK) != 0, "no output file");
}

/* Traces written by older dynrec (no start_unix_ns, no dist.rank) export
 * together, each on its own clock, said so. */
Test(cli, export_of_several_old_traces) {
    if (!*e2e_examples) cr_skip_test("no examples/ next to the tests");
    const char *v1 = e2e_fmt("%s/../tests/data/v1-shape_recompiles.db", e2e_examples);
    const char *v2 = e2e_fmt("%s/../tests/data/v2-shape_recompiles.db", e2e_examples);
    E2eProc *x = e2e_run((const char *[]){e2e_bin, "export", "--format", "perfetto", "-o",
                                          "old.json", v1, v2, NULL});
    e2e_assert_exit(x, 0, "export of v1 and v2 traces");
    char *json = e2e_slurp(e2e_path("old.json"), NULL);
    cr_assert(json && strstr(json, "\"clock\": \"each trace from its own start\""), "%.300s", json);
    cr_assert(strstr(json, "compile 0/1"), "the old traces' compiles are there");
}
