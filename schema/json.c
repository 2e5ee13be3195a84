/* json.c -- quoting untrusted text as JSON strings (see json.h). */
#define _GNU_SOURCE
#include "json.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s) {
    unsigned c = s[0];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (n == 2 && c < 0xC2) return 0;                         /* overlong */
    if (n == 3 && c == 0xE0 && s[1] < 0xA0) return 0;         /* overlong */
    if (n == 3 && c == 0xED && s[1] >= 0xA0) return 0;        /* surrogate */
    if (n == 4 && (c > 0xF4 || (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)))
        return 0;
    return n;
}

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
            size_t n = utf8_len(s);
            if (n == 0) {
                fputs("\\ufffd", f);
                s++;
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

void dr_text_safe(FILE *f, const char *s) {
    if (!s) return;
    for (; *s; s++) fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}
