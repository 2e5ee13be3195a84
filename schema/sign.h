/* sign.h -- "recorded here by you": an HMAC over what a trace would make a
 * re-run or a replay execute, under a key only this user can read.
 *
 * The model is Jupyter's notebook trust: `dynrec run` signs the trace it
 * writes; `rerun` runs the recorded command line of a trace whose
 * signature checks, and needs --trust for any other (a trace from a
 * stranger names the command line, the environment and the sources).
 *
 * The key: 32 random bytes in $XDG_DATA_HOME/dynrec/key (else
 * ~/.local/share/dynrec/key), created 0600 on first use; a key file that
 * is not a regular file of this user's, readable by them only, is not
 * used.  What is signed (SCHEMA.md "Signature"): the command line, cwd,
 * interpreter, seeds and recorded environment in meta, every stored
 * source (path, role, stored bytes), every capture (its event and value
 * nodes with their blobs) and the compression dictionaries.  meta
 * `signature` holds "v1:" and the hex HMAC-SHA256. */
#ifndef DR_SIGN_H
#define DR_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "trace.h"

typedef enum {
    DR_SIG_OWN,      /* signed with this user's key, and unchanged since */
    DR_SIG_FOREIGN,  /* signed, but not by this key, or changed since */
    DR_SIG_UNSIGNED, /* no signature (another recorder, or dynrec before 0.6) */
    DR_SIG_NOKEY,    /* signed, and this user has no usable key to check it */
} DrSigState;

/* Signs the trace being written (inside the caller's transaction): sets
 * meta `signature`.  Creates the key on first use.  Where there is no
 * usable key and none can be made (no writable data directory), the trace
 * stays unsigned and DR_OK is returned: a recording never fails for it. */
int dr_trace_sign(DrTrace *t, DrError *err);

/* The folder of this user's key ($XDG_DATA_HOME/dynrec, else
 * $HOME/.local/share/dynrec), written to out; 0, or -1 when there is none
 * (no absolute $XDG_DATA_HOME or $HOME) or it does not fit. */
int dr_sign_key_dir(char *out, size_t n);

/* Checks a trace's signature against this user's key. */
DrSigState dr_trace_signature(DrTrace *t);

/* What show prints for a state: "recorded here by you", "foreign", ... */
const char *dr_sig_text(DrSigState s);

/* SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104), for the signature and
 * its tests. */
typedef struct {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t n;
} DrSha256;
void dr_sha256_init(DrSha256 *s);
void dr_sha256_add(DrSha256 *s, const void *data, size_t n);
void dr_sha256_done(DrSha256 *s, uint8_t out[32]);
void dr_hmac_sha256(const uint8_t *key, size_t keylen, const uint8_t *msg, size_t n,
                    uint8_t out[32]);

#endif
