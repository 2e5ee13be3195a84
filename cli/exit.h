/* exit.h -- the exit statuses of every dynrec command, in one list.  The
 * engines whose result is itself a status (run: the script's own; rerun,
 * replay: identical or not; repro) return these names with a DrError for
 * the command line to print (cli.h); the other engines return a DrStatus
 * that dr_cli_exit_of maps here.  The --help texts say which a command
 * returns. */
#ifndef DR_EXIT_H
#define DR_EXIT_H

/* Exit statuses of every command (sysexits.h where one fits).  What 1 means
 * is the command's own: a difference (diff, rerun, replay), a pack that does
 * not fit, a query or terminal that failed. */
#define DR_EX_OK 0
#define DR_EX_FAIL 1
#define DR_EX_USAGE 2
#define DR_EX_PARTIAL 3      /* done, but some frames or values were left out */
#define DR_EX_DATAERR 65     /* the trace is unreadable, or a stored name escapes */
#define DR_EX_NOINPUT 66     /* the recorded script, or the captured frames, are gone */
#define DR_EX_UNAVAILABLE 69 /* recorded with another Python minor version */
#define DR_EX_SOFTWARE 70    /* a bug in dynrec */
#define DR_EX_CANTCREAT 73   /* an output cannot be created or written */
#define DR_EX_NOPERM 77      /* would run the trace's code without --trust */

#endif
