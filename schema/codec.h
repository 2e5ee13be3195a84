/* codec.h -- the blob codec of the dynrec trace format.
 *
 * Every large payload in a trace (script sources, tracebacks, FX graph code)
 * is stored as one self-describing blob:
 *
 *   byte 0        codec: DR_CODEC_RAW (0), DR_CODEC_ZSTD (1), DR_CODEC_ZSTD_DICT (2)
 *   varint        raw (decoded) length in bytes, LEB128, at most 10 bytes
 *   varint        dictionary id (only for DR_CODEC_ZSTD_DICT)
 *   payload       the raw bytes, or one zstd frame
 *
 * The header lets the format grow (a new codec number) and lets a reader
 * refuse an oversized or lying blob before it allocates anything.  A reader
 * treats every blob as untrusted input: declared lengths are checked against
 * a caller-given limit and against the zstd frame header, and the decoded
 * size must match the declared one exactly.
 *
 * This module never prints and never exits; errors are returned as DR_ERR_*
 * codes with a message in the optional DrError. */
#ifndef DR_CODEC_H
#define DR_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum {
    DR_CODEC_RAW = 0,
    DR_CODEC_ZSTD = 1,
    DR_CODEC_ZSTD_DICT = 2,
    /* Adding a codec: bump DR_SCHEMA_VERSION only if old readers would
     * misread it (they will: they refuse unknown codec bytes per item). */
};

/* Payloads shorter than this are stored raw: a zstd frame header costs more
 * than it saves. */
#define DR_CODEC_MIN_COMPRESS 64

/* Default cap on the decoded size of one blob a reader accepts (1 GiB). */
#define DR_CODEC_MAX_DEFAULT ((size_t)1 << 30)
/* A compressed blob may decode to at most max(DR_CODEC_BOMB_MIN,
 * DR_CODEC_BOMB_RATIO times its compressed payload) bytes; more is refused
 * as a decompression bomb before anything is allocated, whatever max_len
 * allows.  What dynrec stores shrinks at most about 30 times (the blobs of
 * tests/data and of recordings of examples/: Python source, FX code, guard
 * and structured-trace text, with the trained dictionary); the floor lets
 * short, very repetitive payloads through (the first MiB of a program's
 * output printing one line, a small tensor of zeros). */
#define DR_CODEC_BOMB_MIN ((uint64_t)1 << 20)
#define DR_CODEC_BOMB_RATIO 1000

typedef struct DrDict DrDict; /* a zstd dictionary prepared for both directions */

/* Prepares a dictionary from raw dictionary bytes (as ZDICT_trainFromBuffer
 * produces) with the given id.  Returns NULL on error (err filled).  The
 * caller owns the result and frees it with dr_dict_free. */
DrDict *dr_dict_create(const void *dict, size_t len, uint32_t id, DrError *err);

/* The dictionary of a trace's `dicts` row (id, data: itself a coded blob
 * of at most 1 MiB): checks the id, decodes and prepares it.  NULL on error
 * (err filled: "the stored zstd dictionary is unusable (why)"). */
DrDict *dr_dict_from_row(int64_t id, const void *data, size_t len, DrError *err);
void dr_dict_free(DrDict *d); /* accepts NULL */
uint32_t dr_dict_id(const DrDict *d);

/* Trains a dictionary of at most capacity bytes on n samples laid end to
 * end in samples (sizes[i] bytes each), as zstd's ZDICT_trainFromBuffer
 * does.  Returns DR_OK with a malloc'd *out of *outlen bytes, or an error
 * (too few or too uniform samples give DR_ERR_ARG). */
int dr_dict_train(const void *samples, const size_t *sizes, unsigned n, size_t capacity, void **out,
                  size_t *outlen, DrError *err);

/* Encodes src[0..len) into a newly malloc'd blob (*out, *outlen), choosing
 * raw storage for short or incompressible input, zstd (with dict when dict is
 * not NULL) otherwise.  level is a zstd level (0 = default 3).  Returns DR_OK,
 * or an error code with *out left NULL.  The caller frees *out. */
int dr_codec_encode(const void *src, size_t len, const DrDict *dict, int level, void **out,
                    size_t *outlen, DrError *err);

/* Reads the header of a blob without decoding: its codec, declared raw length
 * and dictionary id (0 when none).  Returns DR_OK or DR_ERR_BLOB. */
int dr_codec_peek(const void *blob, size_t len, int *codec, uint64_t *rawlen, uint32_t *dict_id,
                  DrError *err);

/* Decodes a blob into a newly malloc'd buffer of exactly the declared length
 * (plus one NUL byte after it, not counted in *outlen, so text can be used as
 * a C string).  Fails with DR_ERR_BLOB on a bad header, an unknown codec, a
 * declared length above max_len (0 means DR_CODEC_MAX_DEFAULT), a dictionary
 * blob when dict is NULL or has another id, a zstd error, or a decoded size
 * that differs from the declared one.  The caller frees *out. */
int dr_codec_decode(const void *blob, size_t len, const DrDict *dict, size_t max_len, void **out,
                    size_t *outlen, DrError *err);

#endif
