/* e2e_util.h -- shared machinery of the end-to-end tests (see e2e_util.c).
 *
 * A test file declares its suite with the shared fixture:
 *
 *   TestSuite(mysuite, .init = e2e_setup, .fini = e2e_teardown, .timeout = 240);
 *
 *   Test(mysuite, something) {
 *       e2e_copy_script("argv_info.py");               -- from tests/scripts/
 *       E2eProc *dr = e2e_same_as_python((const char *[]){"argv_info.py", NULL},
 *                                        NULL, E2E_TIMEOUT_MS);
 *       DrTrace *t = e2e_open(e2e_path("T.db"));
 *       cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_frames"), 0);
 *   }
 *
 * Environment (read by e2e_setup):
 *   DYNREC_BIN       the dynrec binary under test (tests skip when unset)
 *   DYNREC_PYTHON    the python it should behave like (tests skip when unset)
 *   DYNREC_ASAN=1    the binary is an ASan build: children get detect_leaks=0
 *   DYNREC_SCRIPTS   tests/scripts (default: next to this source file)
 *   DYNREC_EXAMPLES  examples/ (default: ../examples from this source file)
 *
 * Ownership: every char * and E2eProc * returned here belongs to the test
 * and is freed by e2e_teardown; traces opened with e2e_open/e2e_try_open
 * are closed by e2e_close or, failing that, by the fixture.  Every failure
 * is a Criterion assertion, so none of these return an error. */
#ifndef DR_E2E_UTIL_H
#define DR_E2E_UTIL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../schema/trace.h"

/* Deadlines for one child: plain scripts, and those that import torch
 * (a few seconds each normally, much more under ASan). */
#define E2E_TIMEOUT_MS 30000
#define E2E_TORCH_TIMEOUT_MS 180000

typedef struct {
    char *data; /* NUL-terminated */
    size_t len, cap;
} E2eBuf;

/* One child process and what it wrote. */
typedef struct {
    pid_t pid;
    int fd_in, fd_out, fd_err; /* -1 once closed */
    const char *in;            /* stdin text still to write, or NULL */
    size_t in_len, in_off;
    E2eBuf out, err;
    int status; /* wait status, valid once reaped */
    int reaped;
} E2eProc;

extern char e2e_dir[PATH_MAX];      /* this test's working directory */
extern char e2e_scripts[PATH_MAX];  /* tests/scripts, absolute */
extern char e2e_examples[PATH_MAX]; /* examples/, absolute; "" when missing */
extern const char *e2e_bin, *e2e_python, *e2e_venv;

/* The minor version of DYNREC_PYTHON (10 for 3.10), asked of it once.  On
 * 3.10 code objects have no qualname: frames go by their plain name. */
int e2e_python_minor(void);
extern int e2e_asan;

/* ---- fixture ------------------------------------------------------------ */

/* Reads the environment, skips the test when DYNREC_BIN or DYNREC_PYTHON is
 * unset, and makes the test's temp directory.  e2e_teardown kills children
 * still running, closes traces, frees what the test owned and removes the
 * directory. */
void e2e_setup(void);
void e2e_teardown(void);

/* ---- memory and time ----------------------------------------------------- */

/* Takes ownership of p (freed after the test); returns p. */
void *e2e_own(void *p);
/* printf into a string owned by the test. */
__attribute__((format(printf, 1, 2))) char *e2e_fmt(const char *fmt, ...);
int64_t e2e_now_ms(void);
void e2e_sleep_ms(int ms);

/* ---- files --------------------------------------------------------------- */

/* Absolute path of name inside the test's directory. */
char *e2e_path(const char *name);
/* A whole file, NUL-terminated (*len gets its size when len is not NULL);
 * NULL when it cannot be read. */
char *e2e_slurp(const char *path, size_t *len);
void e2e_write_file(const char *path, const char *data, size_t len);
/* Copies tests/scripts/<name>, or examples/<name>, into the test's
 * directory under the same relative name. */
void e2e_copy_script(const char *name);
void e2e_copy_example(const char *name);
/* Absolute path of examples/<name> (which need not exist). */
char *e2e_example_path(const char *name);
/* Names in the test's directory ending in suffix, sorted, one a line;
 * *count gets how many. */
char *e2e_list(const char *suffix, int *count);

/* ---- child processes ----------------------------------------------------- */

/* Starts argv[0] (a path) in the test's directory with stdin fed from
 * in_text (NULL: /dev/null), stdout and stderr captured.  Children get
 * VIRTUAL_ENV of DYNREC_PYTHON's venv and, under ASan, ASAN_OPTIONS. */
E2eProc *e2e_spawn(const char *const *argv, const char *in_text);
/* Moves data between the test and the child until want (when not NULL)
 * appears in its stdout (returns 1), both its output pipes are at end of
 * file (0), or the deadline (e2e_now_ms() time) passes (-1). */
int e2e_pump(E2eProc *p, int64_t deadline, const char *want);
/* Waits for the child to end, collecting all its output; one still
 * running after timeout_ms is killed and the test fails. */
void e2e_wait(E2eProc *p, int timeout_ms);
/* Runs argv to the end: with stdin and a deadline, or with neither
 * (E2E_TIMEOUT_MS). */
E2eProc *e2e_run_in(const char *const *argv, const char *in_text, int timeout_ms);
E2eProc *e2e_run(const char *const *argv);
/* A wait status as text ("exit 3", "signal 9"), for messages. */
char *e2e_status_text(int st);
void e2e_assert_exit(const E2eProc *p, int code, const char *what);

/* ---- comparing with plain python ----------------------------------------- */

/* `python args...` and `dynrec run -q -o trace args...` (args ends with
 * NULL), run to the end in the test's directory. */
E2eProc *e2e_run_python(const char *const *args, const char *in_text, int timeout_ms);
E2eProc *e2e_record(const char *trace, const char *const *args, const char *in_text,
                    int timeout_ms);
/* Asserts that two runs ended alike and wrote the same stdout and stderr
 * (e2e_assert_same), or the same stdout (e2e_assert_same_stdout). */
void e2e_assert_same(const E2eProc *py, const E2eProc *dr, const char *what);
void e2e_assert_same_stdout(const E2eProc *py, const E2eProc *dr, const char *what);
/* Runs python and `dynrec run -q -o T.db` on args with the same stdin,
 * asserts they behave identically (both exiting, not killed), and returns
 * the dynrec run. */
E2eProc *e2e_same_as_python(const char *const *args, const char *in_text, int timeout_ms);

/* ---- traces -------------------------------------------------------------- */

/* Opens a trace, or returns NULL with err filled. */
DrTrace *e2e_try_open(const char *path, DrError *err);
/* Opens a trace the test must be able to read. */
DrTrace *e2e_open(const char *path);
void e2e_close(DrTrace *t);
/* meta[key], or NULL when absent. */
char *e2e_meta(DrTrace *t, const char *key);
/* The first column of the first row of a query, or NULL when there is no
 * row or it is SQL NULL.  fmt is an sqlite3_mprintf format (%Q quotes a
 * string literal), which the compiler cannot check. */
char *e2e_sql(DrTrace *t, const char *fmt, ...);
/* The same as a number; the test fails when there is no value. */
long long e2e_sql_int(DrTrace *t, const char *sql);
/* The first column of every row, each followed by '\n' (SQL NULL as
 * "NULL"); *count (when not NULL) gets the number of rows. */
char *e2e_sql_lines(DrTrace *t, int *count, const char *fmt, ...);
/* Evaluations of the code object qualname in a file named script (the
 * recorded filename is the path CPython gives, relative or absolute). */
long long e2e_calls(DrTrace *t, const char *script, const char *qualname);
/* Opens trace (in the test's directory) and checks what every finished
 * `dynrec run` trace holds: complete, the exit status, argv (a JSON array
 * equal to argv_json), the script (with its exact source in v_files) or
 * module when not NULL. */
DrTrace *e2e_check_trace(const char *trace, int exit_status, const char *argv_json,
                         const char *script, const char *module);

#endif
