/* ident.c -- compile epochs and frame keys (ident.h): the one place that
 * parses a stored compile id and builds a frame key. */
#include "ident.h"

#include <stdio.h>

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
