/* text.h -- the one terminal sanitizer: untrusted text (a trace's strings,
 * paths, messages) made safe to show on a terminal.
 *
 * Every command that prints text it did not write itself goes through
 * dr_safe / dr_text_safe (C) or _dynrec.safe (Python, recorder/run.c): a
 * trace cannot move the cursor, clear the screen, set the clipboard (OSC
 * 52), reorder what is shown (bidi controls) or smuggle a C1 control.
 *
 * The rule, per character: printable ASCII and valid, printable,
 * non-reordering UTF-8 pass; ESC and the other C0 controls and DEL show as
 * ^X (ESC as ^[); C1 controls, bidi controls, zero-width and other
 * non-printing characters as \uXXXX; a byte that is not UTF-8 as \xNN; a
 * tab as spaces to the next multiple of 4 columns.  With dr_text_utf8 0
 * every non-ASCII character shows as \uXXXX. */
#ifndef DR_TEXT_H
#define DR_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* 1 (the default) when the terminal takes UTF-8; the viewer sets it from
 * the locale.  0: all non-ASCII is escaped. */
extern int dr_text_utf8;

/* A printable copy of the first n bytes of s (or up to a NUL), malloc'd;
 * NULL only when out of memory.  s NULL is "".  Cut with "..." so it takes
 * at most max_cols columns (0: no limit).  A newline shows as ^J, or with
 * stop_at_nl ends the text (" ..." marks that more followed). */
char *dr_safe(const char *s, size_t n, int max_cols, int stop_at_nl);

/* Writes s (NUL-terminated; NULL writes nothing) to f by the same rule,
 * uncut, a newline as ^J. */
void dr_text_safe(FILE *f, const char *s);
/* The same for n bytes of s (stops early at a NUL). */
void dr_text_safe_n(FILE *f, const char *s, size_t n);

/* The code point of the valid UTF-8 sequence at s (n bytes left; no
 * overlong forms, surrogates or values past U+10FFFF), with its length in
 * *len; -1 when there is none. */
long dr_utf8_decode(const unsigned char *s, size_t n, size_t *len);

/* 1 for code points that no output of dynrec carries raw, JSON included:
 * C1 controls, bidi controls (Trojan Source) and the line and paragraph
 * separators U+2028/U+2029. */
int dr_text_is_hidden(long cp);

#endif
