/* ident.c -- compile epochs, frame keys and library code (ident.h): the
 * one place that parses a stored compile id, builds a frame key and tells
 * the user's code from the rest. */
#include "ident.h"

#include <stdio.h>
#include <string.h>

long dr_compile_epoch(const char *cid, const char **dynamo_id) {
    if (dynamo_id) *dynamo_id = cid ? cid : "";
    if (!cid) return 0;
    long epoch = 0;
    const char *p = cid;
    while (*p >= '0' && *p <= '9' && p - cid < 9) epoch = epoch * 10 + (*p++ - '0');
    if (p == cid || *p != ':') return 0;
    if (dynamo_id) *dynamo_id = p + 1;
    return epoch;
}

char *dr_frame_key(char *buf, size_t n, const char *file, const char *qualname, long line) {
    snprintf(buf, n, "%s\x1f%s\x1f%ld", file ? file : "", qualname ? qualname : "", line);
    return buf;
}

int dr_is_library(const char *f, const char *const *dirs, size_t n) {
    if (!f || f[0] == '<') return 1;
    if (strstr(f, "/site-packages/") || strstr(f, "/dist-packages/") ||
        strstr(f, "/lib/python3.") || strstr(f, "/torchinductor_"))
        return 1;
    for (size_t i = 0; i < n; i++)
        if (dirs[i] && dirs[i][0] && strncmp(f, dirs[i], strlen(dirs[i])) == 0) return 1;
    return 0;
}
