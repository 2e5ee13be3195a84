/* text.c -- the one terminal sanitizer (see text.h for the rule).
 *
 * One loop, safe_run, decides what each character becomes; dr_safe
 * collects its pieces in a buffer (the viewer, messages built before they
 * are printed), dr_text_safe writes them to a stream (show, report, diff,
 * sql, rerun).  Widths come from wcwidth in the caller's locale; a process
 * that never chose a UTF-8 locale (the CLI commands) gets C.UTF-8's, so a
 * printable accented name passes there too instead of being escaped. */
#define _GNU_SOURCE 1
#include "text.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

int dr_text_utf8 = 1;

long dr_utf8_decode(const unsigned char *s, size_t n, size_t *len) {
    unsigned c = s[0];
    size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (k == 0 || k > n) return -1;
    long cp = k == 1   ? (long)c
              : k == 2 ? (long)(c & 0x1f)
              : k == 3 ? (long)(c & 0x0f)
                       : (long)(c & 0x07);
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return -1;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const long min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
    *len = k;
    return cp;
}

/* Characters that reorder or hide text (Trojan Source), C1 controls and
 * the Unicode line breaks, which JSON readers and terminals treat apart. */
int dr_text_is_hidden(long cp) {
    return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f || cp == 0x061c ||
           cp == 0x2028 || cp == 0x2029;
}

/* Columns of a code point: -1 unprintable, 0 combining or zero-width.
 * Not thread-safe on its first call outside a UTF-8 locale (the C.UTF-8
 * locale object is made once); the CLI and the GIL-holding Python binding
 * are single-threaded there. */
static int cp_width(long cp) {
    int w = wcwidth((wchar_t)cp);
    if (w >= 0 || MB_CUR_MAX > 1) return w;
    static locale_t u8;
    static int tried;
    if (!tried) {
        tried = 1;
        u8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    }
    if (!u8) return 1; /* no width table: the explicit rules above still escape */
    locale_t old = uselocale(u8);
    w = wcwidth((wchar_t)cp);
    uselocale(old);
    return w;
}

typedef void (*Sink)(void *ud, const char *p, size_t n);

/* Feeds the safe form of s[0..n) (stopping at a NUL) to put. */
static void safe_run(const char *str, size_t n, int max_cols, int stop_at_nl, Sink put, void *ud) {
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    char esc[16];
    int col = 0;
    for (size_t i = 0; i < n && s[i];) {
        unsigned c = s[i];
        if (c == '\n' && stop_at_nl) {
            if (i + 1 < n && s[i + 1]) put(ud, " ...", 4);
            break;
        }
        const char *piece = esc;
        size_t plen, adv = 1;
        int cols;
        if (c == '\t') {
            int sp = 4 - col % 4;
            piece = "    ";
            plen = (size_t)sp;
            cols = sp;
        } else if (c < 0x20 || c == 0x7f) {
            esc[0] = '^', esc[1] = (char)(c ^ 0x40), esc[2] = 0;
            plen = 2, cols = 2;
        } else if (c < 0x80) {
            piece = (const char *)s + i;
            plen = 1, cols = 1;
        } else {
            size_t len = 0;
            long cp = dr_utf8_decode(s + i, n - i, &len);
            int w = cp >= 0 && !dr_text_is_hidden(cp) && dr_text_utf8 ? cp_width(cp) : -1;
            if (cp < 0) {
                snprintf(esc, sizeof esc, "\\x%02x", c);
                plen = strlen(esc), cols = (int)plen;
            } else if (w <= 0) {
                snprintf(esc, sizeof esc, cp > 0xffff ? "\\U%08lx" : "\\u%04lx", cp);
                adv = len;
                plen = strlen(esc), cols = (int)plen;
            } else {
                piece = (const char *)s + i;
                adv = plen = len;
                cols = w;
            }
        }
        if (max_cols > 0 && col + cols > max_cols - 3) {
            put(ud, "...", 3);
            break;
        }
        put(ud, piece, plen);
        col += cols;
        i += adv;
    }
}

typedef struct {
    char *s;
    size_t n, cap;
} Buf;

static void buf_put(void *ud, const char *p, size_t n) {
    Buf *b = ud;
    if (!b->s) return; /* out of memory earlier */
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap * 2 + n;
        char *s = realloc(b->s, cap);
        if (!s) return; /* the text is shorter, never unsafe */
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, p, n);
    b->n += n;
    b->s[b->n] = 0;
}

char *dr_safe(const char *s, size_t n, int max_cols, int stop_at_nl) {
    Buf b = {malloc(64), 0, 64};
    if (!b.s) return NULL;
    b.s[0] = 0;
    safe_run(s, n, max_cols, stop_at_nl, buf_put, &b);
    return b.s;
}

static void file_put(void *ud, const char *p, size_t n) { fwrite(p, 1, n, ud); }

void dr_text_safe_n(FILE *f, const char *s, size_t n) {
    if (s) safe_run(s, n, 0, 0, file_put, f);
}

void dr_text_safe(FILE *f, const char *s) {
    if (s) safe_run(s, strlen(s), 0, 0, file_put, f);
}
