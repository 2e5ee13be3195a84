/* output.h -- what the recorded program writes to its standard output and
 * standard error, kept (the first DR_OUTPUT_CAP bytes of each) so that a
 * re-run can say whether the program's own output changed. */
#ifndef DR_OUTPUT_H
#define DR_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#define DR_OUTPUT_CAP (1u << 20)

/* Starts keeping what is written to fds 1 and 2 through write(2).
 * Returns 0, or -1 when the buffers cannot be had (nothing is kept then). */
int dr_output_start(void);

/* Stops keeping output.  For fd 1 or 2, *data (valid until dr_output_free)
 * and *len get the kept bytes, *total the bytes written in all, *complete 0
 * when some write could not be kept (another was being kept at that
 * instant, e.g. from a signal handler).  Returns -1 when nothing was kept. */
int dr_output_take(int fd, const char **data, size_t *len, uint64_t *total, int *complete);

void dr_output_free(void);

#endif
