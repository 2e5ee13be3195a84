/* cmd_version.c -- `dynrec --version`: the versions of dynrec, the Python it
 * embeds, SQLite and zstd, and the Python and torch a `run` would use. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "../recorder/run.h"
#include "../schema/text.h"

static const char usage[] =
    "usage: dynrec --version\n"
    "\n"
    "Prints the versions of dynrec (and the trace schema it writes), the Python\n"
    "it embeds, SQLite and zstd; then the python a `dynrec run` would use and\n"
    "the torch installed there.\n";

/* The torch that `python` imports, asked of that python without importing
 * torch (its package metadata): "2.13.0+cpu", or NULL when it has none.
 * The python's own stderr is discarded; the environment is the user's. */
static char *torch_version_of(const char *python) {
    int fds[2];
    if (pipe(fds) != 0) return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *const args[] = {(char *)python, "-c",
                          "import importlib.metadata as m\n"
                          "try: print(m.version('torch'))\n"
                          "except m.PackageNotFoundError: pass",
                          NULL};
    extern char **environ;
    pid_t pid;
    int rc = posix_spawn(&pid, python, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    char buf[128];
    size_t n = 0;
    if (rc == 0) {
        ssize_t got;
        while (n < sizeof buf - 1 && (got = read(fds[0], buf + n, sizeof buf - 1 - n)) != 0) {
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) break;
            n += (size_t)got;
        }
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
    }
    close(fds[0]);
    buf[n] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    return rc == 0 && buf[0] ? dr_safe(buf, strlen(buf), 0, 0) : NULL;
}

/* dynrec --version: this build, the Python it embeds, the interpreter a
 * `run` would use ($VIRTUAL_ENV or the build's venv) and its torch. */
static int version_main(const DrCommand *self, int argc, char **argv) {
    (void)self, (void)argc, (void)argv;
    printf("dynrec %s (trace schema %d)\nPython %s\nSQLite %s\nzstd %s\n", DR_VERSION,
           DR_SCHEMA_VERSION, dr_run_python_version(), dr_trace_sqlite_version(),
           dr_trace_zstd_version());
    char *python = dr_run_choose_python();
    if (!python) {
        printf("python: none found (set VIRTUAL_ENV to a venv with torch)\n");
        return 0;
    }
    char *torch = torch_version_of(python);
    char *spath = dr_safe(python, strlen(python), 0, 0);
    printf("python: %s\ntorch %s\n", spath ? spath : "?", torch ? torch : "not installed there");
    free(spath);
    free(torch);
    free(python);
    return 0;
}

const DrCommand dr_cmd_version = {
    "--version", "print the versions of dynrec, Python, SQLite and zstd", usage, version_main};
