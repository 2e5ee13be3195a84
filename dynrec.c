/* dynrec.c -- the command line: the table of subcommands.
 *
 * Each command lives in cli/cmd_NAME.c (its help, its options, its
 * handler); cli/args.c is the one option parser.  Help goes to stdout with
 * status 0; usage errors go to stderr with status 2; a bad trace file is
 * status 65; `run` returns the script's own status (cli/cli.h lists them). */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* The commands, one file each (cli/cmd_NAME.c). */
extern const DrCommand dr_cmd_run, dr_cmd_show, dr_cmd_view, dr_cmd_diff, dr_cmd_ranks,
    dr_cmd_rerun, dr_cmd_replay, dr_cmd_sql, dr_cmd_export, dr_cmd_report, dr_cmd_pack,
    dr_cmd_repro, dr_cmd_version;

/* In the order `dynrec --help` lists them. */
static const DrCommand *const commands[] = {
    &dr_cmd_run,    &dr_cmd_show, &dr_cmd_view,   &dr_cmd_diff,   &dr_cmd_ranks, &dr_cmd_rerun,
    &dr_cmd_replay, &dr_cmd_sql,  &dr_cmd_export, &dr_cmd_report, &dr_cmd_pack,  &dr_cmd_repro,
};

static void usage(FILE *f) {
    fputs("usage: dynrec <command> [options] [args]\n"
          "\n"
          "Record what PyTorch Dynamo (torch.compile) does while a script runs, into one\n"
          "compressed SQLite trace file.\n"
          "\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-6s %s\n", commands[i]->name, commands[i]->summary);
    fputs("\n"
          "options:\n"
          "  -h, --help     show this help; `dynrec <command> --help` for a command\n"
          "  --version      print the versions of dynrec, Python, SQLite and zstd\n"
          "\n"
          "A trace is an ordinary SQLite file: `sqlite3 trace.db .tables` reads it too.\n",
          f);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return DR_EX_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return DR_EX_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0)
        return dr_cmd_version.main(&dr_cmd_version, argc - 2, argv + 2);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(name, commands[i]->name) == 0)
            return commands[i]->main(commands[i], argc - 2, argv + 2);
    return dr_cli_usage(NULL, "unknown command '%s'", name);
}
