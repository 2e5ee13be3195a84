/* test_codec.c -- Criterion tests for the blob codec (schema/codec.c).
 *
 * Round-trips cover the raw/zstd threshold, large compressible text,
 * incompressible bytes and dictionary blobs; the rest feeds the decoder
 * hand-made and damaged blobs (bad varints, unknown codecs, lying lengths,
 * flipped and truncated zstd frames) and checks that each is refused with
 * DR_ERR_BLOB instead of crashing, over-allocating or returning a buffer of
 * the wrong size.  Run it under -fsanitize=address,undefined as well: a
 * decoder that allocated a declared 1 PiB, or read past a truncated frame,
 * aborts there. */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zdict.h>
#include <zstd.h>

#include "../schema/codec.h"
#include "unit_util.h"

/* xorshift64: reproducible "random" data without touching rand(). */
static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void fill_random(uint8_t *p, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(rng_next(&seed) >> 24);
}

/* Encodes, peeks and decodes src; checks the codec chosen and the data. */
static void round_trip(const void *src, size_t len, const DrDict *dict, int level, int want_codec) {
    void *blob = NULL, *dec = NULL;
    size_t blen = 0, dlen = 0;
    int codec = -1;
    uint64_t rawlen = 0;
    uint32_t id = 99;
    DrError err = {0};

    cr_assert_eq(dr_codec_encode(src, len, dict, level, &blob, &blen, &err), DR_OK, "encode: %s",
                 err.msg);
    cr_assert_not_null(blob);
    cr_assert_eq(dr_codec_peek(blob, blen, &codec, &rawlen, &id, &err), DR_OK, "peek: %s", err.msg);
    cr_assert_eq(codec, want_codec, "len %zu stored with codec %d", len, codec);
    cr_assert_eq(rawlen, len);
    cr_assert_eq(id, codec == DR_CODEC_ZSTD_DICT ? dr_dict_id(dict) : 0);
    cr_assert_eq(dr_codec_decode(blob, blen, dict, 0, &dec, &dlen, &err), DR_OK, "decode: %s",
                 err.msg);
    cr_assert_eq(dlen, len);
    cr_assert(len == 0 || memcmp(dec, src, len) == 0, "data differs");
    cr_assert_eq(((char *)dec)[len], '\0', "no NUL after the data");
    free(blob);
    free(dec);
}

/* Decodes blob and requires DR_ERR_BLOB with a message and no output. */
static void expect_blob_error(const void *blob, size_t len, const DrDict *dict, size_t max_len) {
    void *dec = (void *)1;
    size_t dlen = 0;
    DrError err = {0};
    int rc = dr_codec_decode(blob, len, dict, max_len, &dec, &dlen, &err);
    cr_assert_eq(rc, DR_ERR_BLOB, "want DR_ERR_BLOB, got %d (%s)", rc, err.msg);
    cr_assert_null(dec);
    cr_assert_eq(err.code, DR_ERR_BLOB);
    cr_assert_neq(err.msg[0], '\0');
    cr_assert_null(strchr(err.msg, '\n'), "message is not one line");
}

/* Writes a blob header (codec byte, varint length[, varint id]) into p. */
static size_t put_header(uint8_t *p, int codec, uint64_t len, uint32_t id) {
    size_t n = 0;
    p[n++] = (uint8_t)codec;
    do {
        p[n++] = (uint8_t)((len & 0x7f) | (len >= 0x80 ? 0x80 : 0));
        len >>= 7;
    } while (len);
    if (codec == DR_CODEC_ZSTD_DICT) {
        do {
            p[n++] = (uint8_t)((id & 0x7f) | (id >= 0x80 ? 0x80 : 0));
            id >>= 7;
        } while (id);
    }
    return n;
}

/* A zstd-coded blob of compressible text; *hdr is where the frame starts. */
static uint8_t *zstd_blob(size_t textlen, const DrDict *dict, size_t *blen, size_t *hdr) {
    char *text = ut_python_text(textlen, 42);
    void *blob = NULL;
    int codec;
    uint64_t rawlen;
    uint32_t id;
    cr_assert_eq(dr_codec_encode(text, textlen, dict, 0, &blob, blen, NULL), DR_OK);
    cr_assert_eq(dr_codec_peek(blob, *blen, &codec, &rawlen, &id, NULL), DR_OK);
    cr_assert_eq(codec, dict ? DR_CODEC_ZSTD_DICT : DR_CODEC_ZSTD);
    *hdr = put_header((uint8_t[32]){0}, codec, rawlen, id);
    free(text);
    return blob;
}

/* Trains a dictionary on generated "FX graph" snippets seeded by seed; when
 * bytes is not NULL, also returns a malloc'd copy of the dictionary. */
static DrDict *train_dict(uint64_t seed, uint32_t id, unsigned *zstd_id, void **bytes,
                          size_t *nbytes) {
    enum { NSAMPLES = 2000, DICTCAP = 8 * 1024 };
    static const char *ops[] = {"add", "mul",     "relu", "matmul",
                                "cat", "sigmoid", "view", "permute"};
    size_t *sizes = malloc(NSAMPLES * sizeof *sizes);
    char *samples = malloc((size_t)NSAMPLES * 512), *p = samples;
    void *dict = malloc(DICTCAP);
    DrError err = {0};
    cr_assert(sizes && samples && dict);
    for (int i = 0; i < NSAMPLES; i++) {
        char *start = p;
        int nops = 2 + (int)(rng_next(&seed) % 5);
        p += sprintf(p, "def forward(self, l_x_ : torch.Tensor):\n");
        for (int k = 0; k < nops; k++) {
            uint64_t r = rng_next(&seed);
            p += sprintf(p, "    v%d = torch.%s(l_x_, %u);  l_x_ = None\n", k, ops[r % 8],
                         (unsigned)(r >> 33) % 1000);
        }
        p += sprintf(p, "    return (v%d,)\n", nops - 1);
        sizes[i] = (size_t)(p - start);
    }
    size_t dlen = ZDICT_trainFromBuffer(dict, DICTCAP, samples, sizes, NSAMPLES);
    cr_assert(!ZDICT_isError(dlen), "training: %s", ZDICT_getErrorName(dlen));
    *zstd_id = ZDICT_getDictID(dict, dlen);
    DrDict *d = dr_dict_create(dict, dlen, id, &err);
    cr_assert_not_null(d, "dr_dict_create: %s", err.msg);
    if (bytes) {
        *bytes = malloc(dlen);
        memcpy(*bytes, dict, dlen);
        *nbytes = dlen;
    }
    free(sizes);
    free(samples);
    free(dict);
    return d;
}

Test(codec, round_trip_empty) {
    round_trip("", 0, NULL, 0, DR_CODEC_RAW);
    round_trip(NULL, 0, NULL, 0, DR_CODEC_RAW);
}

Test(codec, round_trip_one_byte) {
    round_trip("x", 1, NULL, 0, DR_CODEC_RAW);
    round_trip("\0", 1, NULL, 0, DR_CODEC_RAW);
}

Test(codec, threshold_63_raw_64_zstd) {
    char buf[64];
    memset(buf, 'a', sizeof buf);
    round_trip(buf, 63, NULL, 0, DR_CODEC_RAW);
    round_trip(buf, 64, NULL, 0, DR_CODEC_ZSTD);
}

Test(codec, large_compressible_text) {
    size_t n = 6u << 20;
    char *text = ut_python_text(n, 42);
    void *blob = NULL;
    size_t blen = 0;
    round_trip(text, n, NULL, 0, DR_CODEC_ZSTD);
    round_trip(text, n, NULL, 19, DR_CODEC_ZSTD);
    round_trip(text, n, NULL, -5, DR_CODEC_ZSTD);
    cr_assert_eq(dr_codec_encode(text, n, NULL, 0, &blob, &blen, NULL), DR_OK);
    cr_assert_lt(blen, n / 10, "6 MiB of text compressed to %zu bytes", blen);
    free(blob);
    free(text);
}

Test(codec, incompressible_stored_raw) {
    static const size_t sizes[] = {64, 127, 128, 4096, 16384, 1u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i], blen = 0;
        uint8_t *buf = malloc(n);
        void *blob = NULL;
        cr_assert_not_null(buf);
        fill_random(buf, n, 7 + i);
        round_trip(buf, n, NULL, 0, DR_CODEC_RAW);
        cr_assert_eq(dr_codec_encode(buf, n, NULL, 0, &blob, &blen, NULL), DR_OK);
        cr_assert_eq(blen, put_header((uint8_t[32]){0}, 0, n, 0) + n,
                     "raw blob of %zu bytes has %zu", n, blen);
        free(blob);
        free(buf);
    }
}

Test(codec, bad_arguments) {
    void *blob = (void *)1;
    size_t blen;
    DrError err = {0};
    cr_assert_eq(dr_codec_encode(NULL, 5, NULL, 0, &blob, &blen, &err), DR_ERR_ARG);
    cr_assert_null(blob);
    cr_assert_eq(dr_codec_encode("abc", 3, NULL, ZSTD_maxCLevel() + 1, &blob, &blen, &err),
                 DR_ERR_ARG);
    cr_assert_eq(dr_codec_encode("abc", 3, NULL, 0, NULL, &blen, &err), DR_ERR_ARG);
    cr_assert_null(dr_dict_create(NULL, 0, 1, &err));
    cr_assert_eq(err.code, DR_ERR_ARG);
    dr_dict_free(NULL);
}

Test(codec, dictionary_round_trip) {
    unsigned zid;
    DrDict *d = train_dict(1, 7, &zid, NULL, NULL);
    const char *snippet = "def forward(self, l_x_ : torch.Tensor):\n"
                          "    v0 = torch.relu(l_x_, 12);  l_x_ = None\n"
                          "    v1 = torch.matmul(l_x_, 345);  l_x_ = None\n"
                          "    return (v1,)\n";
    void *plain = NULL, *withdict = NULL;
    size_t plen, dlen;
    cr_assert_eq(dr_dict_id(d), 7);
    round_trip(snippet, strlen(snippet), d, 0, DR_CODEC_ZSTD_DICT);
    round_trip(snippet, strlen(snippet), d, 19, DR_CODEC_ZSTD_DICT);
    cr_assert_eq(dr_codec_encode(snippet, strlen(snippet), NULL, 0, &plain, &plen, NULL), DR_OK);
    cr_assert_eq(dr_codec_encode(snippet, strlen(snippet), d, 0, &withdict, &dlen, NULL), DR_OK);
    cr_assert_lt(dlen, plen, "dict blob %zu bytes, plain %zu", dlen, plen);
    free(plain);
    free(withdict);
    dr_dict_free(d);
}

Test(codec, dictionary_missing_or_wrong) {
    unsigned zid1, zid2;
    void *bytes;
    size_t nbytes, blen, hdr;
    DrDict *d1 = train_dict(1, 7, &zid1, &bytes, &nbytes);
    DrDict *d2 = train_dict(2, 8, &zid2, NULL, NULL);    /* other id and content */
    DrDict *d3 = train_dict(2, 7, &zid2, NULL, NULL);    /* same id, other content */
    DrDict *d4 = dr_dict_create(bytes, nbytes, 8, NULL); /* same content */
    uint8_t *blob = zstd_blob(1000, d1, &blen, &hdr);
    cr_assert_neq(zid1, zid2, "the two trained dictionaries are identical");
    expect_blob_error(blob, blen, NULL, 0);
    expect_blob_error(blob, blen, d2, 0);
    expect_blob_error(blob, blen, d3, 0); /* zstd's own dictID check */
    cr_assert_not_null(d4);
    expect_blob_error(blob, blen, d4, 0); /* only the blob header tells */

    /* A dictionary frame relabelled as plain zstd must not decode either. */
    uint8_t *plain = malloc(blen);
    size_t n = put_header(plain, DR_CODEC_ZSTD, 1000, 0);
    memcpy(plain + n, blob + hdr, blen - hdr);
    expect_blob_error(plain, n + blen - hdr, NULL, 0);
    expect_blob_error(plain, n + blen - hdr, d1, 0);
    free(plain);
    free(blob);
    dr_dict_free(d1);
    dr_dict_free(d2);
    dr_dict_free(d3);
    dr_dict_free(d4);
    free(bytes);
}

Test(codec, truncated_header) {
    static const uint8_t only_codec[] = {DR_CODEC_ZSTD};
    static const uint8_t cut_varint[] = {DR_CODEC_RAW, 0x80};
    static const uint8_t cut_dict_id[] = {DR_CODEC_ZSTD_DICT, 0x05, 0xff};
    static const uint8_t no_dict_id[] = {DR_CODEC_ZSTD_DICT, 0x05};
    int codec;
    uint64_t rawlen;
    uint32_t id;
    expect_blob_error("", 0, NULL, 0);
    expect_blob_error(NULL, 0, NULL, 0);
    expect_blob_error(only_codec, sizeof only_codec, NULL, 0);
    expect_blob_error(cut_varint, sizeof cut_varint, NULL, 0);
    expect_blob_error(cut_dict_id, sizeof cut_dict_id, NULL, 0);
    expect_blob_error(no_dict_id, sizeof no_dict_id, NULL, 0);
    cr_assert_eq(dr_codec_peek(cut_varint, sizeof cut_varint, &codec, &rawlen, &id, NULL),
                 DR_ERR_BLOB);
}

Test(codec, varint_limits) {
    /* 11 bytes, a 10th byte carrying more than bit 63, a non-minimal zero. */
    static const uint8_t eleven[] = {0,    0x80, 0x80, 0x80, 0x80, 0x80,
                                     0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    static const uint8_t overflow[] = {0,    0xff, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 0x02};
    static const uint8_t nonminimal[] = {0, 0x81, 0x00, 'x'};
    static const uint8_t max64[] = {0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t big_dict_id[] = {2, 0x40, 0xff, 0xff, 0xff, 0xff, 0x10};
    int codec;
    uint64_t rawlen = 0;
    uint32_t id;
    expect_blob_error(eleven, sizeof eleven, NULL, 0);
    expect_blob_error(overflow, sizeof overflow, NULL, 0);
    cr_assert_eq(dr_codec_peek(overflow, sizeof overflow, &codec, &rawlen, &id, NULL), DR_ERR_BLOB);
    expect_blob_error(nonminimal, sizeof nonminimal, NULL, 0);
    expect_blob_error(big_dict_id, sizeof big_dict_id, NULL, 0);
    cr_assert_eq(dr_codec_peek(big_dict_id, sizeof big_dict_id, &codec, &rawlen, &id, NULL),
                 DR_ERR_BLOB);
    /* The largest 10-byte varint is well formed; decoding refuses the size. */
    cr_assert_eq(dr_codec_peek(max64, sizeof max64, &codec, &rawlen, &id, NULL), DR_OK);
    cr_assert_eq(rawlen, UINT64_MAX);
    expect_blob_error(max64, sizeof max64, NULL, 0);
}

Test(codec, unknown_codec_byte) {
    uint8_t blob[8];
    int codec;
    for (int c = 3; c < 256; c += 36) {
        size_t n = put_header(blob, DR_CODEC_RAW, 2, 0);
        blob[0] = (uint8_t)c;
        blob[n] = 'h';
        blob[n + 1] = 'i';
        expect_blob_error(blob, n + 2, NULL, 0);
        cr_assert_eq(dr_codec_peek(blob, n + 2, &codec, NULL, NULL, NULL), DR_ERR_BLOB);
    }
}

Test(codec, declared_length_over_limit) {
    /* A raw blob that really holds its 1000 bytes, but over a 999 limit. */
    uint8_t raw[1100];
    size_t n = put_header(raw, DR_CODEC_RAW, 1000, 0);
    memset(raw + n, 'z', 1000);
    expect_blob_error(raw, n + 1000, NULL, 999);
    void *dec = NULL;
    size_t dlen;
    cr_assert_eq(dr_codec_decode(raw, n + 1000, NULL, 1000, &dec, &dlen, NULL), DR_OK);
    free(dec);

    /* Declared 1 PiB in a tiny blob: refused before any allocation (ASan
     * aborts on a malloc that large; without it malloc fails -> NOMEM). */
    uint8_t huge[32];
    n = put_header(huge, DR_CODEC_RAW, (uint64_t)1 << 50, 0);
    expect_blob_error(huge, n + 4, NULL, 0);
    expect_blob_error(huge, n + 4, NULL, SIZE_MAX);

    /* A zstd frame that agrees with the lie: content size 2^40 in its header
     * (magic, descriptor: single segment + 8-byte size, size, empty block). */
    uint8_t frame[32];
    n = put_header(frame, DR_CODEC_ZSTD, (uint64_t)1 << 40, 0);
    static const uint8_t fh[] = {0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0};
    memcpy(frame + n, fh, sizeof fh);
    cr_assert_eq(ZSTD_getFrameContentSize(frame + n, sizeof fh), (unsigned long long)1 << 40);
    expect_blob_error(frame, n + sizeof fh, NULL, 0);

    /* A real 1000-byte frame under a header declaring 1 PiB, with no limit:
     * the frame's own content size must expose the lie before malloc. */
    size_t blen, hdr;
    uint8_t *blob = zstd_blob(1000, NULL, &blen, &hdr);
    uint8_t *liar = malloc(blen + 16);
    n = put_header(liar, DR_CODEC_ZSTD, (uint64_t)1 << 50, 0);
    memcpy(liar + n, blob + hdr, blen - hdr);
    expect_blob_error(liar, n + blen - hdr, NULL, SIZE_MAX);
    free(liar);
    free(blob);
}

Test(codec, declared_length_disagrees) {
    size_t blen, hdr;
    uint8_t *blob = zstd_blob(1000, NULL, &blen, &hdr);
    /* 1000 is 0xe8 0x07; 999 and 1001 have the same varint width. */
    cr_assert_eq(blob[1], 0xe8);
    blob[1] = 0xe7;
    expect_blob_error(blob, blen, NULL, 0);
    blob[1] = 0xe9;
    expect_blob_error(blob, blen, NULL, 0);
    free(blob);

    /* Raw blobs: fewer or more bytes than declared. */
    uint8_t raw[16];
    size_t n = put_header(raw, DR_CODEC_RAW, 5, 0);
    memcpy(raw + n, "abcdef", 6);
    expect_blob_error(raw, n + 4, NULL, 0);
    expect_blob_error(raw, n + 6, NULL, 0);

    /* A frame without a content size is refused: its size is unchecked. */
    char *text = ut_python_text(1000, 42);
    uint8_t out[2048];
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    cr_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0)));
    n = put_header(out, DR_CODEC_ZSTD, 1000, 0);
    size_t c = ZSTD_compress2(cctx, out + n, sizeof out - n, text, 1000);
    cr_assert(!ZSTD_isError(c));
    cr_assert_eq(ZSTD_getFrameContentSize(out + n, c), ZSTD_CONTENTSIZE_UNKNOWN);
    expect_blob_error(out, n + c, NULL, 0);
    DrError err = {0};
    void *dec;
    size_t dlen;
    cr_assert_eq(dr_codec_decode(out, n + c, NULL, 0, &dec, &dlen, &err), DR_ERR_BLOB);
    cr_assert_not_null(strstr(err.msg, "content size"), "message: %s", err.msg);
    ZSTD_freeCCtx(cctx);
    free(text);
}

Test(codec, flipped_payload_bytes) {
    size_t blen, hdr, detected = 0;
    uint8_t *blob = zstd_blob(20000, NULL, &blen, &hdr);
    char *text = ut_python_text(20000, 42); /* what the blob holds */
    /* Frame magic, descriptor and the first block header are structural: a
     * flip there must be caught. */
    for (size_t i = hdr; i < hdr + 4; i++) {
        blob[i] ^= 0xff;
        expect_blob_error(blob, blen, NULL, 0);
        blob[i] ^= 0xff;
    }
    /* Frames carry a content checksum: a flip anywhere in the frame must be
     * refused, never decoded into different bytes of the same length. */
    for (size_t i = hdr; i < blen; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            void *dec = NULL;
            size_t dlen = 0;
            DrError err = {0};
            blob[i] ^= (uint8_t)(1u << bit);
            int rc = dr_codec_decode(blob, blen, NULL, 0, &dec, &dlen, &err);
            blob[i] ^= (uint8_t)(1u << bit);
            if (rc == DR_OK) { /* a slack bit in an entropy table: same output */
                cr_assert_eq(dlen, 20000);
                cr_assert_eq(memcmp(dec, text, dlen), 0,
                             "flip of bit %d at %zu decoded"
                             " into different bytes",
                             bit, i);
                free(dec);
                continue;
            }
            cr_assert_eq(rc, DR_ERR_BLOB, "flip at %zu: %s", i, err.msg);
            cr_assert_null(dec);
            detected++;
        }
    }
    cr_assert_gt(detected, (blen - hdr) * 3 * 9 / 10, "only %zu flips detected", detected);
    free(text);
    free(blob);
}

Test(codec, truncated_payload) {
    size_t blen, hdr;
    uint8_t *blob = zstd_blob(20000, NULL, &blen, &hdr);
    for (size_t cut = 0; cut < blen; cut++) {
        /* A copy of exactly cut bytes, so ASan sees any read past the end. */
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, blob, cut);
        expect_blob_error(copy, cut, NULL, 0);
        free(copy);
    }
    /* Bytes after the one frame are refused too: garbage, and a skippable
     * frame (magic 0x184D2A50, 4-byte size, data) that zstd would accept. */
    static const uint8_t skippable[] = {0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'};
    uint8_t *longer = malloc(blen + sizeof skippable);
    memcpy(longer, blob, blen);
    memcpy(longer + blen, "xyz", 3);
    expect_blob_error(longer, blen + 3, NULL, 0);
    memcpy(longer + blen, skippable, sizeof skippable);
    cr_assert_eq(
        ZSTD_decompress((char[20001]){0}, 20001, longer + hdr, blen - hdr + sizeof skippable),
        20000, "zstd itself should accept the skippable frame");
    expect_blob_error(longer, blen + sizeof skippable, NULL, 0);
    free(longer);
    free(blob);
}

/* A real decompression bomb: 1 GiB of zeros compressed (streamed, so the
 * test itself never holds the GiB) into a few tens of KB, under an honest
 * header.  Refused from the sizes alone, before any allocation. */
Test(codec, decompression_bomb_is_refused) {
    const size_t total = (size_t)1 << 30, chunk = 1 << 20;
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    cr_assert_not_null(cc);
    cr_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)));
    cr_assert(!ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cc, total)));
    uint8_t *zeros = calloc(1, chunk);
    size_t cap = 1 << 20, used = 0;
    uint8_t *frame = malloc(cap);
    cr_assert(zeros && frame);
    for (size_t done = 0; done < total; done += chunk) {
        ZSTD_inBuffer in = {zeros, chunk, 0};
        ZSTD_EndDirective end = done + chunk == total ? ZSTD_e_end : ZSTD_e_continue;
        size_t left;
        do {
            ZSTD_outBuffer o = {frame + used, cap - used, 0};
            left = ZSTD_compressStream2(cc, &o, &in, end);
            cr_assert(!ZSTD_isError(left), "%s", ZSTD_getErrorName(left));
            used += o.pos;
            cr_assert_lt(used, cap, "the bomb is bigger than a bomb");
        } while (end == ZSTD_e_end ? left != 0 : in.pos < in.size);
    }
    ZSTD_freeCCtx(cc);
    free(zeros);
    cr_assert_lt(used, 64 << 10, "1 GiB of zeros took %zu bytes", used);
    uint8_t *blob = malloc(used + 16);
    size_t n = put_header(blob, DR_CODEC_ZSTD, total, 0);
    memcpy(blob + n, frame, used);
    free(frame);
    expect_blob_error(blob, n + used, NULL, 0);
    void *dec = (void *)1;
    size_t dlen = 0;
    DrError err = {0};
    dr_codec_decode(blob, n + used, NULL, 0, &dec, &dlen, &err);
    cr_assert_not_null(strstr(err.msg, "decompression bomb"), "%s", err.msg);
    free(blob);
}
