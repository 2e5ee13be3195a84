/* json.h -- JSON string output for the recorder (argv in meta) and the viewer.
 * Untrusted bytes go in; valid JSON comes out (invalid UTF-8 becomes U+FFFD). */
#ifndef DR_JSON_H
#define DR_JSON_H

#include <stdio.h>

/* Writes s as a quoted JSON string to f; NULL is written as null. */
void dr_json_string(FILE *f, const char *s);

/* Writes untrusted text for a terminal: control characters are shown as
 * '?', so a hostile trace cannot drive the terminal.  NULL writes nothing. */
void dr_text_safe(FILE *f, const char *s);

/* Same into a malloc'd buffer; NULL when out of memory. */
char *dr_json_quote(const char *s);

#endif
