/* error.c -- filling DrError and naming status codes. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int dr_error(DrError *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

const char *dr_strerror(int code) {
    switch (code) {
    case DR_OK: return "ok";
    case DR_ERR_ARG: return "bad argument";
    case DR_ERR_NOMEM: return "out of memory";
    case DR_ERR_IO: return "i/o error";
    case DR_ERR_MISSING: return "missing file";
    case DR_ERR_NOT_SQLITE: return "not an SQLite file";
    case DR_ERR_NOT_TRACE: return "not a dynrec trace";
    case DR_ERR_TOO_NEW: return "written by a newer dynrec";
    case DR_ERR_CORRUPT: return "truncated or corrupt";
    case DR_ERR_BLOB: return "corrupt blob";
    case DR_ERR_SQL: return "sqlite error";
    case DR_ERR_FULL: return "disk full";
    case DR_ERR_WAL_KEPT: return "complete, last pages in the -wal file";
    }
    return "unknown error";
}
