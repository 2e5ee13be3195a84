/* pack.h -- `dynrec pack`: a trace made into a bug-report attachment.
 *
 * The pack is itself a trace (same application id and schema, so every
 * command opens it), compacted into one file without a WAL.  --redact
 * replaces home directories, user and host names, the values of recorded
 * environment variables and the string constants guards compare against;
 * --redact-source blanks the lines of stored sources Dynamo did not trace;
 * --max-size drops the largest droppable payloads until the file fits.  What
 * was removed is listed in the table pack_log and summed up in meta
 * (pack.redacted, pack.dropped).  The same input and options give the same
 * bytes, and packing a pack again changes nothing. */
#ifndef DR_PACK_H
#define DR_PACK_H

#include <stdint.h>
#include <stdio.h>

#include "../schema/error.h"

typedef struct DrPackOptions {
    const char *in, *out;
    int redact;        /* --redact */
    int redact_source; /* --redact-source */
    int64_t max_size;  /* --max-size in bytes, 0: no cap */
} DrPackOptions;

/* Writes the pack; a line saying what was done goes to msg (may be NULL).
 * Returns DR_OK, or an error: DR_ERR_ARG when the essential rows alone
 * exceed --max-size (nothing is written then), the reader's codes for a bad
 * input, DR_ERR_IO/DR_ERR_FULL when the output cannot be written. */
int dr_pack(const DrPackOptions *o, FILE *msg, DrError *err);

/* The stable short name of a redacted string constant: "<str:" + 6 hex
 * digits of its hash + ">" (buf holds at least 13 bytes). */
void dr_pack_str_token(const char *s, size_t len, char *buf);

#endif
