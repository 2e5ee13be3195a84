/* cli.h -- the command line: exit statuses, a row of the command table, and
 * the one option parser every command uses.
 *
 * A command is one file in cli/ that defines a DrCommand (its name, the
 * line `dynrec --help` shows, its --help text and its handler) and one row
 * in the table in dynrec.c.  Its options are a table of DrOpt rows that
 * dr_cli_parse() reads: -h/--help, "unknown option", "needs a value", number
 * ranges, sizes, --set and --ignore are handled there, the same way for
 * every command.  Only this layer prints the modules' DrError messages. */
#ifndef DR_CLI_H
#define DR_CLI_H

#include <stddef.h>

#include "exit.h"
#include "../replayer/compare.h"
#include "../common/util.h"
#include "../schema/error.h"
#include "../schema/trace.h"

/* The exit status of a module's DrStatus when the command gives it no
 * meaning of its own: 0, 2 (a bad argument), 70 (out of memory), 73 (a
 * file could not be written, the disk is full) or 65 (the trace). */
int dr_cli_exit_of(int status);

typedef enum {
    DR_OPT_FLAG,   /* int at off set to 1 */
    DR_OPT_STR,    /* const char * at off: a non-empty value */
    DR_OPT_INT,    /* int at off: a number from min to max */
    DR_OPT_SIZE,   /* int64_t at off: bytes, "4096", "4K", "1M", from min to 1G */
    DR_OPT_SET,    /* NAME=VALUE, collected in DrArgs.set */
    DR_OPT_IGNORE, /* a list of comparison categories, ORed into DrArgs.ignore */
    DR_OPT_MODULE, /* run -m: const char * at off, and the options end there */
} DrOptKind;

typedef struct DrOpt {
    const char *name; /* "-o", "--top"; "--name=value" is accepted too */
    DrOptKind kind;
    size_t off;       /* offsetof() the field in the command's options struct */
    const char *need; /* what the value is, for "-o needs a path" */
    long min, max;    /* DR_OPT_INT and DR_OPT_SIZE */
} DrOpt;

typedef struct DrArgSpec {
    const DrOpt *opts;              /* ends with a row whose name is NULL */
    int min_operands, max_operands; /* max_operands -1: any number (DrArgs.operands) */
    const char *missing;            /* too few operands; default "no trace given" */
    const char *extra;              /* too many ("%s" the first extra); default
                                     * "one trace at a time (extra argument %s)" */
    int operands_end;               /* the first operand ends the options (run: the
                                     * rest are the script's arguments) */
    int dash_operands;              /* after the first operand, an argument starting
                                     * with '-' that is no option is an operand (sql:
                                     * a query) */
} DrArgSpec;

#define DR_CLI_MAX_SET 64

typedef struct DrArgs {
    const char *operand[2];
    int noperands;
    /* Every operand, in order, when max_operands is -1 (ranks: the traces
     * of a job): argv itself, with the operands moved to its front. */
    char **operands;
    int rest;                  /* operands_end: argv index after the first operand */
    int module;                /* DR_OPT_MODULE was given */
    char *set[DR_CLI_MAX_SET]; /* --set NAME=VALUE, in order */
    int nset;
    unsigned ignore; /* --ignore categories (1 << DrCategory) */
} DrArgs;

typedef struct DrCommand DrCommand;
struct DrCommand {
    const char *name;    /* "show" */
    const char *summary; /* its line in `dynrec --help` */
    const char *usage;   /* `dynrec show --help` */
    /* argv: the arguments after the command's name; argv[-2] and argv[-1]
     * are the program and the command (run records the whole line). */
    int (*main)(const DrCommand *self, int argc, char **argv);
};

/* Parses argv by spec into opts (the command's options struct) and a.
 * Returns 0 when the command goes on; DR_CLI_HELP after printing the usage
 * for -h/--help; DR_EX_USAGE after the one-line error and the "Try" line on
 * stderr.  Callers: `if ((rc = dr_cli_parse(...))) return DR_CLI_EXIT(rc);` */
int dr_cli_parse(const DrCommand *cmd, const DrArgSpec *spec, int argc, char **argv, void *opts,
                 DrArgs *a);
#define DR_CLI_HELP (-1) /* dr_cli_parse: the help was printed; exit 0 */
#define DR_CLI_EXIT(rc) ((rc) == DR_CLI_HELP ? DR_EX_OK : (rc))

/* "dynrec CMD: MESSAGE\nTry 'dynrec CMD --help'." on stderr; returns 2. */
int dr_cli_usage(const DrCommand *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "dynrec CMD: err->msg" on stderr; returns status. */
int dr_cli_fail(const DrCommand *cmd, const DrError *err, int status);

/* The one trace of a command, opened, or NULL after "dynrec CMD: why" (the
 * caller exits DR_EX_DATAERR). */
DrTrace *dr_cli_open(const DrCommand *cmd, const char *path);

/* Flushes stdout: 0, or 1 when the output could not be written. */
int dr_cli_flush(void);

/* ---- directories of traces (traces.c) ----------------------------------- */

/* 1 when path names a directory (a link to one counts: the user named
 * it). */
int dr_cli_is_dir(const char *path);

/* The traces of a directory (`dynrec ranks DIR`, `dynrec diff DIR DIR`):
 * the names of the regular files directly in dir whose name ends in
 * ".db", sorted; links and other files are left out.  The names are
 * copied into a, the vector is the caller's to dr_vec_free.  Returns DR_OK,
 * or DR_ERR_IO / DR_ERR_NOMEM with err filled. */
int dr_cli_list_traces(const char *dir, DrArena *a, DrStrVec *names, DrError *err);

/* A trace opened and its decisions read (replayer/compare.h), or NULL
 * after "dynrec CMD: why" (the caller exits DR_EX_DATAERR).  *t is the
 * open trace the model reads from; free the model, then the trace. */
DrModel *dr_cli_load_model(const DrCommand *cmd, const char *path, DrTrace **t);

/* A copy of untrusted text (a file name from a directory, a trace's
 * meta) that is safe in a message on stderr, at most 200 columns, in a;
 * "?" when out of memory. */
const char *dr_cli_safe(DrArena *a, const char *s);

#endif
