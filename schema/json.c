/* json.c -- quoting untrusted text as JSON strings (see json.h).
 *
 * JSON is printed to terminals too (`show --json`, `replay --json`): besides
 * what JSON requires, C1 controls, bidi controls and U+2028/2029 are
 * written as \uXXXX (dr_text_is_hidden, text.c), so a reader gets the same
 * string and a terminal no control. */
#define _GNU_SOURCE 1
#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "text.h"

void dr_json_string(FILE *f, const char *str) {
    if (!str) {
        fputs("null", f);
        return;
    }
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (*s) {
        unsigned c = *s;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            s++;
        } else if (c == '\n') {
            fputs("\\n", f), s++;
        } else if (c == '\t') {
            fputs("\\t", f), s++;
        } else if (c == '\r') {
            fputs("\\r", f), s++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c), s++;
        } else {
            size_t n = 0;
            long cp = dr_utf8_decode(s, strnlen((const char *)s, 4), &n);
            if (cp < 0) {
                fputs("\\ufffd", f);
                s++;
            } else if (dr_text_is_hidden(cp)) {
                fprintf(f, "\\u%04lx", cp);
                s += n;
            } else {
                fwrite(s, 1, n, f);
                s += n;
            }
        }
    }
    fputc('"', f);
}

char *dr_json_quote(const char *s) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    dr_json_string(f, s);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
