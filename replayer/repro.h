/* repro.h -- `dynrec repro`: one recorded frame as a standalone Python script
 * that needs only torch (replayer/repro.py writes it). */
#ifndef DR_REPRO_H
#define DR_REPRO_H

typedef struct {
    const char *trace;   /* the recording */
    const char *out;     /* -o: the script to write; NULL writes it to stdout */
    const char *frame;   /* --frame QUALNAME (NULL: the frame with the most compiles) */
    const char *compile; /* --compile ID: that compile's frame, up to that compile */
} DrReproOptions;

/* Exit codes of dr_repro besides 0 and 2 (usage, an unknown frame or compile). */
#define DR_REPRO_EX_PARTIAL 3   /* written, but some values could not be rebuilt */
#define DR_REPRO_EX_DATAERR 65  /* not a readable trace, or a malformed value tree */
#define DR_REPRO_EX_NOINPUT 66  /* the trace holds no captured frames */
#define DR_REPRO_EX_CANTCREAT 73 /* the script cannot be written */
#define DR_REPRO_EX_SOFTWARE 70 /* the generator failed (a bug in dynrec) */

/* Writes the repro; prints its notes and errors to stderr.  Returns the
 * exit status for the command. */
int dr_repro(const DrReproOptions *o);

#endif
