/* mask.h -- the one masking of a trace's volatile text (see mask.c). */
#ifndef DR_MASK_H
#define DR_MASK_H

#include <stddef.h>

/* The run's machine-specific directories, replaced by "<root>" in paths;
 * either may be NULL (the recorder masks without them). */
typedef struct {
    const char *root, *cwd;
} DrMaskCtx;

/* The n bytes of s (NUL bytes included; s NULL: "") with their volatile
 * parts masked by the rules of replayer/COMPARE.md ("Canonical text"):
 * addresses, object ids, times, pids, torch log prefixes, object reprs and
 * path prefixes.  ctx NULL is an empty context.  Returns a malloc'd,
 * NUL-terminated text that the caller frees, its length in *out_len when
 * out_len is not NULL; NULL when out of memory. */
char *dr_mask(const DrMaskCtx *ctx, const char *s, size_t n, size_t *out_len);

/* The path s[0..n) as one token, its machine-specific prefix replaced:
 * ctx's root or cwd by "<root>", a site-packages directory by "<site>",
 * the standard library by "<stdlib>", a temp directory by "<tmp>"; other
 * paths unchanged.  Ownership and errors as dr_mask. */
char *dr_mask_path(const DrMaskCtx *ctx, const char *s, size_t n, size_t *out_len);

#endif
