/* error.h -- status codes and the error struct shared by dynrec's modules.
 *
 * Library code returns one of these codes and fills an optional DrError with
 * a message that names the file and says what to do; only the CLI prints. */
#ifndef DR_ERROR_H
#define DR_ERROR_H

typedef enum {
    DR_OK = 0,
    DR_ERR_ARG,        /* bad argument from the caller */
    DR_ERR_NOMEM,      /* out of memory */
    DR_ERR_IO,         /* could not create, write or read a file */
    DR_ERR_MISSING,    /* the trace file does not exist */
    DR_ERR_NOT_SQLITE, /* the file is not an SQLite database */
    DR_ERR_NOT_TRACE,  /* SQLite, but not a dynrec trace */
    DR_ERR_TOO_NEW,    /* written by a newer schema than this dynrec reads */
    DR_ERR_CORRUPT,    /* truncated or corrupt database */
    DR_ERR_BLOB,       /* one blob is corrupt or oversized (that item only) */
    DR_ERR_SQL,        /* any other SQLite failure */
    DR_ERR_FULL,       /* the disk (or the file system's quota) is full */
    DR_ERR_WAL_KEPT,   /* closed complete, but its last pages stay in PATH-wal */
    /* Adding a code: update dr_strerror in error.c. */
} DrStatus;

typedef struct DrError {
    int code;       /* a DrStatus */
    char msg[1024]; /* one line, no trailing newline */
} DrError;

/* Fills err (when not NULL) with code and a printf-style message; returns
 * code so callers can write `return dr_error(err, DR_ERR_IO, ...)`. */
int dr_error(DrError *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A short name for a status code ("corrupt", "too new", ...). */
const char *dr_strerror(int code);

#endif
