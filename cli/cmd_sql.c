/* cmd_sql.c -- `dynrec sql`: one read-only SQL query on a trace. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <unistd.h>

#include "cli.h"
#include "../sql/sql.h"

static const char usage[] =
    "usage: dynrec sql [--json|--csv] trace.db \"SELECT ...\"\n"
    "\n"
    "Runs one SQL statement on a trace opened read-only (statements that would\n"
    "write, ATTACH and pragmas that set a value are refused) and prints its rows.\n"
    "The views are documented in schema/SCHEMA.md (v_compiles, v_guards,\n"
    "v_guard_failures, v_graph_breaks, v_errors, v_graphs, v_events, ...).  Two\n"
    "functions read payloads (blob ids such as v_graphs.code_blob):\n"
    "  dynrec_text(blob_id)   the decoded text (at most 64 MiB)\n"
    "  dynrec_json(blob_id)   the same, checked to be JSON, for json_extract\n"
    "The same functions load into the sqlite3 shell:\n"
    "  sqlite3 trace.db -cmd '.load build/dynrec_sqlite' \"SELECT ...\"\n"
    "\n"
    "options:\n"
    "  --json         print a JSON array of objects (one per row)\n"
    "  --csv          print CSV (RFC 4180) with a header row\n"
    "  -h, --help     show this help\n"
    "\n"
    "Default output is aligned columns (one column: the values as they are); on a\n"
    "terminal, control characters from the trace are shown escaped (ESC as ^[,\n"
    "bidi and C1 controls as \\uXXXX, bytes that are not UTF-8 as \\xNN).\n"
    "\n"
    "exit status: 0; 1 for an SQL error (a missing blob, a syntax error); 2 for a\n"
    "usage error or a statement that is refused; 65 when the file is missing, not a\n"
    "dynrec trace, too new for this dynrec, or corrupt.\n";

/* The format flags, before they become DrSqlOptions.format. */
typedef struct {
    int json, csv;
} SqlFlags;

static const DrOpt opts[] = {
    {"--json", DR_OPT_FLAG, offsetof(SqlFlags, json), NULL, 0, 0},
    {"--csv", DR_OPT_FLAG, offsetof(SqlFlags, csv), NULL, 0, 0},
    {NULL, 0, 0, NULL, 0, 0},
};

static int sql_main(const DrCommand *self, int argc, char **argv) {
    SqlFlags f = {0};
    const DrArgSpec spec = {
        .opts = opts,
        .min_operands = 2,
        .max_operands = 2,
        .dash_operands = 1,
        .missing = "give a trace and a query, e.g. dynrec sql t.db \"SELECT * FROM v_compiles\"",
        .extra = "one trace and one query (extra argument %s); quote the query"};
    DrArgs a;
    int rc = dr_cli_parse(self, &spec, argc, argv, &f, &a);
    if (rc) return DR_CLI_EXIT(rc);
    DrSqlOptions o = {.format = f.csv ? DR_SQL_CSV : f.json ? DR_SQL_JSON : DR_SQL_TEXT};
    o.terminal = isatty(STDOUT_FILENO);
    DrTrace *t = dr_cli_open(self, a.operand[0]);
    if (!t) return DR_EX_DATAERR;
    DrError err = {0};
    rc = dr_sql_run(t, a.operand[1], &o, stdout, &err);
    dr_trace_free(t);
    /* A refused query is a usage error; one that failed, 1. */
    if (rc != DR_OK)
        return dr_cli_fail(self, &err,
                           rc == DR_ERR_ARG                        ? DR_EX_USAGE
                           : rc == DR_ERR_SQL || rc == DR_ERR_BLOB ? DR_EX_FAIL
                                                                   : DR_EX_DATAERR);
    return dr_cli_flush();
}
const DrCommand dr_cmd_sql = {
    "sql", "run one read-only SQL query on a trace, with dynrec_text(blob_id)", usage, sql_main};
