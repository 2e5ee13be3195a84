/* json.h -- JSON string output for the recorder (argv in meta) and the viewer.
 * Untrusted bytes go in; valid JSON comes out (invalid UTF-8 becomes U+FFFD)
 * with no raw control character: text for a terminal is text.h's job. */
#ifndef DR_JSON_H
#define DR_JSON_H

#include <stdio.h>

/* Writes s as a quoted JSON string to f; NULL is written as null.  C0, C1
 * and bidi controls and U+2028/2029 are escaped as \uXXXX; other valid
 * UTF-8 is kept as it is. */
void dr_json_string(FILE *f, const char *s);

/* Same into a malloc'd buffer; NULL when out of memory. */
char *dr_json_quote(const char *s);

#endif
