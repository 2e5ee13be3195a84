/* dict_bench.c -- does a trained zstd dictionary stored in a trace pay off?
 *
 * dynrec stores each source text and each FX graph's code as its own blob
 * (schema/codec.h), so zstd never sees more than one payload at a time and
 * small blobs compress poorly.  A dictionary trained on earlier payloads and
 * stored once in the trace could fix that, at the cost of its own size.  This
 * program measures that trade on real files: it splits the files given on the
 * command line into a training half and a test half (alternating, so both
 * halves see every directory), trains 16 KiB and 64 KiB dictionaries with
 * ZDICT_trainFromBuffer, encodes every test payload separately with
 * dr_codec_encode (level 3, raw fallback and header included, i.e. the bytes
 * a trace would really hold) with and without the dictionary, checks that
 * each blob decodes back, and prints the totals and the break-even number of
 * blobs: how many a trace must hold before the dictionary plus the
 * dictionary-coded blobs take less room than the plain blobs.  It does this
 * twice: for whole files (source texts) and for 2 KiB pieces of them (a
 * stand-in for short FX graph code).
 *
 *   dict_bench $(find torch/_dynamo torch/fx -name '*.py' | sort | head -200)
 */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zdict.h>

#include "../schema/codec.h"

#define CHUNK 2048

typedef struct {
    const uint8_t *p;
    size_t n;
} Piece;

typedef struct {
    Piece *v;
    size_t n, cap;
    size_t bytes;
} Set;

typedef struct {
    size_t total;     /* encoded bytes of all blobs */
    size_t raw_blobs; /* blobs the codec chose to store raw */
    double enc_s, dec_s;
} Result;

static void die(const char *what, const char *detail) {
    fprintf(stderr, "dict_bench: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void set_add(Set *s, const uint8_t *p, size_t n) {
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) die("out of memory", NULL);
    }
    s->v[s->n++] = (Piece){p, n};
    s->bytes += n;
}

/* Adds p[0..n) to s in CHUNK-byte pieces (the last one shorter). */
static void set_add_chunks(Set *s, const uint8_t *p, size_t n) {
    for (size_t off = 0; off < n; off += CHUNK)
        set_add(s, p + off, n - off < CHUNK ? n - off : CHUNK);
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n)
        die("cannot read", path);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Encodes every piece of s separately (with dict when not NULL), decodes it
 * back and compares; returns the totals. */
static Result encode_all(const Set *s, const DrDict *dict) {
    Result r = {0};
    DrError err = {0};
    for (size_t i = 0; i < s->n; i++) {
        void *blob, *back;
        size_t blen, blen2;
        int codec;
        double t0 = now();
        if (dr_codec_encode(s->v[i].p, s->v[i].n, dict, 0, &blob, &blen, &err) != DR_OK)
            die("encode failed", err.msg);
        double t1 = now();
        if (dr_codec_decode(blob, blen, dict, 0, &back, &blen2, &err) != DR_OK)
            die("decode failed", err.msg);
        r.dec_s += now() - t1;
        r.enc_s += t1 - t0;
        if (blen2 != s->v[i].n || memcmp(back, s->v[i].p, blen2) != 0)
            die("round trip changed the data", NULL);
        if (dr_codec_peek(blob, blen, &codec, NULL, NULL, &err) != DR_OK)
            die("peek failed", err.msg);
        r.raw_blobs += codec == DR_CODEC_RAW;
        r.total += blen;
        free(blob);
        free(back);
    }
    return r;
}

/* Trains a dictionary of at most cap bytes on the pieces of s (empty ones
 * left out); returns its size, or 0 with a message when training fails. */
static size_t train(const Set *s, void *dict, size_t cap) {
    uint8_t *samples = malloc(s->bytes ? s->bytes : 1);
    size_t *sizes = malloc((s->n ? s->n : 1) * sizeof *sizes), pos = 0;
    unsigned ns = 0;
    if (!samples || !sizes) die("out of memory", NULL);
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].n == 0) continue;
        memcpy(samples + pos, s->v[i].p, s->v[i].n);
        pos += s->v[i].n;
        sizes[ns++] = s->v[i].n;
    }
    size_t n = ZDICT_trainFromBuffer(dict, cap, samples, sizes, ns);
    free(samples);
    free(sizes);
    if (ZDICT_isError(n)) {
        printf("  training a %zu KiB dictionary failed: %s\n", cap / 1024, ZDICT_getErrorName(n));
        return 0;
    }
    return n;
}

static void print_row(const char *name, size_t dict_stored, size_t dict_raw, const Result *r,
                      const Set *test, const Result *plain) {
    double mb = test->bytes / 1e6;
    printf("  %-14s %10zu %10zu %9.2f%% %7zu %8.0f %8.0f\n", name, dict_stored, r->total,
           100.0 * r->total / (test->bytes ? test->bytes : 1), r->raw_blobs,
           r->enc_s > 0 ? mb / r->enc_s : 0, r->dec_s > 0 ? mb / r->dec_s : 0);
    if (!plain) return;
    /* The dictionary pays off once n * saving_per_blob > dictionary size. */
    double saving = ((double)plain->total - (double)r->total) / test->n;
    if (saving <= 0)
        printf("  %-14s break-even: never (the dictionary saves nothing per "
               "blob)\n",
               "");
    else
        printf("  %-14s saves %.1f bytes/blob; break-even after %.0f blobs "
               "(%.0f if the dictionary is stored raw); this test set nets "
               "%+lld bytes\n",
               "", saving, (double)(size_t)(dict_stored / saving) + 1,
               (double)(size_t)(dict_raw / saving) + 1,
               (long long)plain->total - (long long)(dict_stored + r->total));
}

/* Runs one comparison: plain zstd, then a 16 KiB and a 64 KiB dictionary. */
static void run(const char *title, const Set *training, const Set *test) {
    static const size_t caps[] = {16 * 1024, 64 * 1024};
    printf("\n== %s\n", title);
    printf("  training: %zu payloads, %zu bytes; test: %zu payloads, %zu "
           "bytes (mean %.0f)\n",
           training->n, training->bytes, test->n, test->bytes,
           test->n ? (double)test->bytes / test->n : 0.0);
    printf("  %-14s %10s %10s %10s %7s %8s %8s\n", "codec", "dict", "blobs", "of raw", "raw",
           "enc MB/s", "dec MB/s");
    Result plain = encode_all(test, NULL);
    print_row("zstd -3", 0, 0, &plain, test, NULL);
    for (size_t k = 0; k < sizeof caps / sizeof *caps; k++) {
        void *buf = malloc(caps[k]), *stored;
        size_t n = train(training, buf, caps[k]), stored_len;
        char name[32];
        DrError err = {0};
        if (!buf) die("out of memory", NULL);
        if (n == 0) {
            free(buf);
            continue;
        }
        DrDict *d = dr_dict_create(buf, n, 1, &err);
        if (!d) die("dr_dict_create", err.msg);
        /* The trace would store the dictionary as a blob of its own. */
        if (dr_codec_encode(buf, n, NULL, 0, &stored, &stored_len, &err))
            die("encoding the dictionary", err.msg);
        Result r = encode_all(test, d);
        snprintf(name, sizeof name, "+dict %zuK", caps[k] / 1024);
        print_row(name, stored_len, n, &r, test, &plain);
        printf("  %-14s (dictionary: %zu bytes trained, %zu stored)\n", "", n, stored_len);
        dr_dict_free(d);
        free(stored);
        free(buf);
    }
}

int main(int argc, char **argv) {
    Set files_train = {0}, files_test = {0}, chunks_train = {0}, chunks_test = {0};
    uint8_t **data;
    if (argc < 3) {
        fprintf(stderr, "usage: dict_bench FILE FILE...\n"
                        "  (alternate files train the dictionary; the others "
                        "are the test set)\n");
        return 2;
    }
    data = calloc((size_t)argc, sizeof *data);
    if (!data) die("out of memory", NULL);
    for (int i = 1; i < argc; i++) {
        size_t n;
        data[i] = read_file(argv[i], &n);
        if (i % 2) {
            set_add(&files_train, data[i], n);
            set_add_chunks(&chunks_train, data[i], n);
        } else {
            set_add(&files_test, data[i], n);
            set_add_chunks(&chunks_test, data[i], n);
        }
    }
    printf("dict_bench: %d files; blob sizes include the dynrec header; "
           "\"dict\" is the dictionary as stored (itself zstd-coded); "
           "\"raw\" counts blobs stored uncompressed\n",
           argc - 1);
    run("whole files (source texts)", &files_train, &files_test);
    run("2 KiB pieces (stand-in for FX graph code)", &chunks_train, &chunks_test);
    for (int i = 1; i < argc; i++) free(data[i]);
    free(data);
    free(files_train.v);
    free(files_test.v);
    free(chunks_train.v);
    free(chunks_test.v);
    return 0;
}
