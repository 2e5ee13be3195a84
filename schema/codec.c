/* codec.c -- encoding and decoding the self-describing blobs of codec.h.
 *
 * A blob is a codec byte, the decoded length and (for dictionary blobs) the
 * dictionary id as LEB128 varints, then the payload: the raw bytes or exactly
 * one zstd frame.  The writer stores short or incompressible input raw so a
 * blob is never larger than its input plus the header.  The reader trusts
 * nothing: varints must be minimal and at most 10 bytes, the declared length
 * is checked against the caller's limit before anything is allocated, a zstd
 * frame must declare the same content size and decode to exactly that many
 * bytes, and a dictionary blob is only decoded with the dictionary whose id
 * it names.  Every libzstd call is checked; nothing here prints or exits, and
 * no state is shared between calls, so threads may use one DrDict at once. */
#define _GNU_SOURCE 1
#include "codec.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>
#include <zdict.h>

#define VARINT_MAX 10                     /* bytes of a 64-bit LEB128 */
#define HEADER_MAX (1 + 2 * VARINT_MAX)   /* codec, length, dict id */
#define DEFAULT_LEVEL ZSTD_CLEVEL_DEFAULT /* level 0 means this (3) */

struct DrDict {
    uint32_t id;
    void *bytes; /* own copy, for ZSTD_compress_usingDict at other levels */
    size_t len;
    ZSTD_CDict *cdict; /* digested at DEFAULT_LEVEL: the common case */
    ZSTD_DDict *ddict;
};

/* Appends v as LEB128 to p; returns the number of bytes written (1..10). */
static size_t varint_put(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* The number of bytes varint_put writes for v. */
static size_t varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Reads one LEB128 varint from p[*pos..len) into *v and advances *pos.
 * Returns 0, or -1 when it is truncated, longer than 10 bytes, overflows 64
 * bits or is not minimal (a last byte of 0 after a continuation byte): a
 * writer never produces those, so they mean corruption. */
static int varint_get(const uint8_t *p, size_t len, size_t *pos, uint64_t *v) {
    uint64_t r = 0;
    for (size_t i = 0; i < VARINT_MAX; i++) {
        if (*pos + i >= len) return -1;
        uint8_t b = p[*pos + i];
        if (i == VARINT_MAX - 1 && b > 1) return -1; /* the 10th byte holds only bit 63 */
        r |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (b == 0 && i > 0) return -1;
            *pos += i + 1;
            *v = r;
            return 0;
        }
    }
    return -1;
}

/* Parses the header of blob; on success *hdrlen is where the payload starts.
 * Returns DR_OK or DR_ERR_BLOB (err filled). */
static int parse_header(const uint8_t *p, size_t len, int *codec, uint64_t *rawlen,
                        uint32_t *dict_id, size_t *hdrlen, DrError *err) {
    size_t pos = 1;
    uint64_t id = 0;
    if (len < 1) return dr_error(err, DR_ERR_BLOB, "empty blob: no codec byte");
    if (p[0] != DR_CODEC_RAW && p[0] != DR_CODEC_ZSTD && p[0] != DR_CODEC_ZSTD_DICT)
        return dr_error(err, DR_ERR_BLOB,
                        "unknown codec %u (this dynrec knows 0..%d): "
                        "written by a newer dynrec, or corrupt",
                        p[0], DR_CODEC_ZSTD_DICT);
    if (varint_get(p, len, &pos, rawlen) != 0)
        return dr_error(err, DR_ERR_BLOB, "blob length field is truncated or malformed");
    if (p[0] == DR_CODEC_ZSTD_DICT) {
        if (varint_get(p, len, &pos, &id) != 0)
            return dr_error(err, DR_ERR_BLOB, "blob dictionary id is truncated or malformed");
        if (id > UINT32_MAX)
            return dr_error(err, DR_ERR_BLOB, "blob dictionary id %llu is out of range",
                            (unsigned long long)id);
    }
    *codec = p[0];
    *dict_id = (uint32_t)id;
    *hdrlen = pos;
    return DR_OK;
}

DrDict *dr_dict_create(const void *dict, size_t len, uint32_t id, DrError *err) {
    DrDict *d;
    if (!dict || len == 0) {
        dr_error(err, DR_ERR_ARG, "dictionary %u is empty", id);
        return NULL;
    }
    d = calloc(1, sizeof *d);
    if (!d || !(d->bytes = malloc(len))) {
        dr_error(err, DR_ERR_NOMEM, "out of memory loading dictionary %u", id);
        goto err;
    }
    memcpy(d->bytes, dict, len);
    d->len = len;
    d->id = id;
    /* Both return NULL for a malformed dictionary as well as for lack of
     * memory; the former is by far the likelier for bytes read from a trace. */
    d->cdict = ZSTD_createCDict(dict, len, DEFAULT_LEVEL);
    d->ddict = ZSTD_createDDict(dict, len);
    if (!d->cdict || !d->ddict) {
        dr_error(err, DR_ERR_BLOB, "dictionary %u (%zu bytes) is not a valid zstd dictionary", id,
                 len);
        goto err;
    }
    return d;
err:
    dr_dict_free(d);
    return NULL;
}

void dr_dict_free(DrDict *d) {
    if (!d) return;
    ZSTD_freeCDict(d->cdict);
    ZSTD_freeDDict(d->ddict);
    free(d->bytes);
    free(d);
}

uint32_t dr_dict_id(const DrDict *d) { return d ? d->id : 0; }

int dr_dict_train(const void *samples, const size_t *sizes, unsigned n, size_t capacity, void **out,
                  size_t *outlen, DrError *err) {
    *out = NULL;
    void *buf = malloc(capacity);
    if (!buf) return dr_error(err, DR_ERR_NOMEM, "out of memory training a dictionary");
    size_t got = ZDICT_trainFromBuffer(buf, capacity, samples, sizes, n);
    if (ZDICT_isError(got)) {
        free(buf);
        return dr_error(err, DR_ERR_ARG, "zstd could not train a dictionary: %s",
                        ZDICT_getErrorName(got));
    }
    *out = buf;
    *outlen = got;
    return DR_OK;
}

int dr_codec_encode(const void *src, size_t len, const DrDict *dict, int level, void **out,
                    size_t *outlen, DrError *err) {
    uint8_t *buf = NULL, *shrunk;
    ZSTD_CCtx *cctx = NULL;
    size_t bound, hdr, rawhdr, csize;
    int rc = DR_OK;

    if (out) *out = NULL;
    if (!out || !outlen || (!src && len > 0))
        return dr_error(err, DR_ERR_ARG, "dr_codec_encode: NULL argument");
    if (level == 0) level = DEFAULT_LEVEL;
    if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel())
        return dr_error(err, DR_ERR_ARG, "zstd level %d is outside %d..%d", level, ZSTD_minCLevel(),
                        ZSTD_maxCLevel());

    if (len >= DR_CODEC_MIN_COMPRESS) {
        bound = ZSTD_compressBound(len);
        if (ZSTD_isError(bound) || bound == 0 || bound > SIZE_MAX - HEADER_MAX)
            return dr_error(err, DR_ERR_ARG, "payload of %zu bytes is too large to compress", len);
        buf = malloc(HEADER_MAX + bound);
        cctx = ZSTD_createCCtx();
        if (!buf || !cctx) {
            rc = dr_error(err, DR_ERR_NOMEM, "out of memory compressing %zu bytes", len);
            goto done;
        }
        buf[0] = dict ? DR_CODEC_ZSTD_DICT : DR_CODEC_ZSTD;
        hdr = 1 + varint_put(buf + 1, len);
        if (dict) hdr += varint_put(buf + hdr, dict->id);
        /* The frame carries a content checksum (4 bytes), so a flipped bit
         * in a stored blob is reported instead of decoded into wrong text. */
        csize = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
        if (!ZSTD_isError(csize)) csize = ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
        if (!ZSTD_isError(csize) && dict && level == DEFAULT_LEVEL)
            csize = ZSTD_CCtx_refCDict(cctx, dict->cdict);
        else if (!ZSTD_isError(csize) && dict)
            csize = ZSTD_CCtx_loadDictionary(cctx, dict->bytes, dict->len);
        if (!ZSTD_isError(csize)) csize = ZSTD_compress2(cctx, buf + hdr, bound, src, len);
        if (ZSTD_isError(csize)) {
            rc = dr_error(err,
                          ZSTD_getErrorCode(csize) == ZSTD_error_memory_allocation ? DR_ERR_NOMEM
                                                                                   : DR_ERR_ARG,
                          "zstd compression failed: %s", ZSTD_getErrorName(csize));
            goto done;
        }
        rawhdr = 1 + varint_len(len);
        if (hdr + csize < rawhdr + len) {
            *outlen = hdr + csize;
            shrunk = realloc(buf, *outlen); /* may fail: keep the big one */
            *out = shrunk ? shrunk : buf;
            buf = NULL;
            goto done;
        }
        free(buf); /* incompressible: fall through to raw storage */
        buf = NULL;
    }

    if (len > SIZE_MAX - HEADER_MAX)
        return dr_error(err, DR_ERR_ARG, "payload of %zu bytes is too large", len);
    buf = malloc(HEADER_MAX + len);
    if (!buf) {
        rc = dr_error(err, DR_ERR_NOMEM, "out of memory storing %zu bytes", len);
        goto done;
    }
    buf[0] = DR_CODEC_RAW;
    hdr = 1 + varint_put(buf + 1, len);
    if (len > 0) memcpy(buf + hdr, src, len);
    *outlen = hdr + len;
    *out = buf;
    buf = NULL;
done:
    ZSTD_freeCCtx(cctx);
    free(buf);
    return rc;
}

int dr_codec_peek(const void *blob, size_t len, int *codec, uint64_t *rawlen, uint32_t *dict_id,
                  DrError *err) {
    int c = 0;
    uint64_t n = 0;
    uint32_t id = 0;
    size_t hdr = 0;
    if (!blob && len > 0) return dr_error(err, DR_ERR_ARG, "dr_codec_peek: NULL blob");
    if (parse_header(blob, len, &c, &n, &id, &hdr, err) != DR_OK) return DR_ERR_BLOB;
    if (codec) *codec = c;
    if (rawlen) *rawlen = n;
    if (dict_id) *dict_id = id;
    return DR_OK;
}

int dr_codec_decode(const void *blob, size_t len, const DrDict *dict, size_t max_len, void **out,
                    size_t *outlen, DrError *err) {
    const uint8_t *p = blob, *payload;
    uint8_t *buf = NULL;
    ZSTD_DCtx *dctx = NULL;
    int codec = 0, rc = DR_OK;
    uint64_t rawlen = 0;
    uint32_t id = 0;
    size_t hdr = 0, plen, n;
    unsigned long long fcs;

    if (out) *out = NULL;
    if (!out || !outlen || (!blob && len > 0))
        return dr_error(err, DR_ERR_ARG, "dr_codec_decode: NULL argument");
    if (max_len == 0) max_len = DR_CODEC_MAX_DEFAULT;
    if (max_len > SIZE_MAX - 1) max_len = SIZE_MAX - 1; /* room for the NUL */
    if (parse_header(p, len, &codec, &rawlen, &id, &hdr, err) != DR_OK) return DR_ERR_BLOB;
    if (rawlen > max_len)
        return dr_error(err, DR_ERR_BLOB, "blob declares %llu bytes, more than the limit of %zu",
                        (unsigned long long)rawlen, max_len);
    payload = p + hdr;
    plen = len - hdr;

    if (codec == DR_CODEC_RAW) {
        if (plen != rawlen)
            return dr_error(err, DR_ERR_BLOB, "raw blob declares %llu bytes but holds %zu",
                            (unsigned long long)rawlen, plen);
    } else {
        if (codec == DR_CODEC_ZSTD_DICT && !dict)
            return dr_error(err, DR_ERR_BLOB, "blob needs zstd dictionary %u, none was given", id);
        if (codec == DR_CODEC_ZSTD_DICT && dict->id != id)
            return dr_error(err, DR_ERR_BLOB, "blob needs zstd dictionary %u, got dictionary %u",
                            id, dict->id);
        fcs = ZSTD_getFrameContentSize(payload, plen);
        if (fcs == ZSTD_CONTENTSIZE_ERROR)
            return dr_error(err, DR_ERR_BLOB, "blob payload is not a valid zstd frame");
        if (fcs == ZSTD_CONTENTSIZE_UNKNOWN)
            return dr_error(err, DR_ERR_BLOB, "zstd frame does not record its content size");
        if (fcs != rawlen)
            return dr_error(err, DR_ERR_BLOB, "blob declares %llu bytes but its zstd frame %llu",
                            (unsigned long long)rawlen, fcs);
        n = ZSTD_findFrameCompressedSize(payload, plen);
        if (ZSTD_isError(n))
            return dr_error(err, DR_ERR_BLOB, "zstd frame is truncated: %s", ZSTD_getErrorName(n));
        if (n != plen)
            return dr_error(err, DR_ERR_BLOB, "%zu stray bytes after the zstd frame", plen - n);
        /* A decompression bomb: a few KB that inflate to a GiB, or a few
         * bytes to many MiB.  What dynrec stores (code, logs, guards)
         * shrinks 5 to 50 times, never a thousand; refused at any size
         * above the floor (codec.h), before anything is allocated. */
        if (rawlen > DR_CODEC_BOMB_MIN && (rawlen - 1) / DR_CODEC_BOMB_RATIO >= plen)
            return dr_error(err, DR_ERR_BLOB,
                            "blob declares %llu bytes from %zu compressed, more than "
                            "%d times: refused as a decompression bomb",
                            (unsigned long long)rawlen, plen, DR_CODEC_BOMB_RATIO);
    }

    buf = malloc((size_t)rawlen + 1);
    if (!buf)
        return dr_error(err, DR_ERR_NOMEM, "out of memory decoding a blob of %llu bytes",
                        (unsigned long long)rawlen);
    if (codec == DR_CODEC_RAW) {
        if (rawlen > 0) memcpy(buf, payload, (size_t)rawlen);
    } else {
        dctx = ZSTD_createDCtx();
        if (!dctx) {
            rc = dr_error(err, DR_ERR_NOMEM,
                          "out of memory creating a zstd "
                          "decompression context");
            goto done;
        }
        if (codec == DR_CODEC_ZSTD)
            n = ZSTD_decompressDCtx(dctx, buf, (size_t)rawlen, payload, plen);
        else n = ZSTD_decompress_usingDDict(dctx, buf, (size_t)rawlen, payload, plen, dict->ddict);
        if (ZSTD_isError(n)) {
            rc = dr_error(err, DR_ERR_BLOB, "zstd frame does not decode: %s", ZSTD_getErrorName(n));
            goto done;
        }
        if (n != rawlen) {
            rc = dr_error(err, DR_ERR_BLOB, "blob declares %llu bytes but decodes to %zu",
                          (unsigned long long)rawlen, n);
            goto done;
        }
    }
    buf[rawlen] = '\0';
    *out = buf;
    *outlen = (size_t)rawlen;
    buf = NULL;
done:
    ZSTD_freeDCtx(dctx);
    free(buf);
    return rc;
}

DrDict *dr_dict_from_row(int64_t id, const void *data, size_t len, DrError *err) {
    void *raw = NULL;
    size_t rawlen = 0;
    DrError e = {0};
    DrDict *d = NULL;
    if (id <= 0 || id > UINT32_MAX || !data) dr_error(&e, DR_ERR_BLOB, "bad id");
    else if (dr_codec_decode(data, len, NULL, 1 << 20, &raw, &rawlen, &e) == DR_OK)
        d = dr_dict_create(raw, rawlen, (uint32_t)id, &e);
    free(raw);
    if (!d) dr_error(err, DR_ERR_BLOB, "the stored zstd dictionary is unusable (%s)", e.msg);
    return d;
}
