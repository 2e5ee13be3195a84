/* train_dict.c -- trains the zstd dictionary dynrec stores in every trace.
 *
 *   build/train_dict OUT.dict trace.db...
 *
 * Reads every blob of the given traces (recordings of examples/ and bench/
 * workloads: structured-trace payloads, FX graph code, guard trees, sources)
 * and writes a 16 KiB dictionary trained on them.  tools/train_dict.sh makes
 * those traces and runs this; the result is schema/default.dict. */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/codec.h"
#include "../schema/trace.h"

typedef struct {
    DrTrace *t;
    char *buf;
    size_t len, cap;
    size_t *sizes;
    unsigned n, ncap;
} Corpus;

static int add_blob(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Corpus *c = ud;
    if (n < 1 || !v[0]) return 0;
    void *data = NULL;
    size_t len = 0;
    DrError e = {0};
    if (dr_trace_read_blob(c->t, atoll(v[0]), 0, &data, &len, &e) != DR_OK) {
        fprintf(stderr, "train_dict: skipping a blob: %s\n", e.msg);
        return 0;
    }
    if (len > 128 * 1024) len = 128 * 1024; /* samples: the start of large payloads */
    if (c->len + len > c->cap) {
        c->cap = (c->len + len) * 2;
        c->buf = realloc(c->buf, c->cap);
    }
    if (c->n == c->ncap) {
        c->ncap = c->ncap ? c->ncap * 2 : 1024;
        c->sizes = realloc(c->sizes, c->ncap * sizeof *c->sizes);
    }
    if (!c->buf || !c->sizes) {
        fprintf(stderr, "train_dict: out of memory\n");
        exit(1);
    }
    memcpy(c->buf + c->len, data, len);
    c->len += len;
    c->sizes[c->n++] = len;
    free(data);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: train_dict OUT.dict trace.db...\n");
        return 2;
    }
    Corpus c = {0};
    for (int i = 2; i < argc; i++) {
        DrError e = {0};
        if (!(c.t = dr_trace_open(argv[i], &e))) {
            fprintf(stderr, "train_dict: %s\n", e.msg);
            return 65;
        }
        if (dr_trace_query(c.t, "SELECT id FROM blobs", add_blob, &c, &e) != DR_OK) {
            fprintf(stderr, "train_dict: %s\n", e.msg);
            return 65;
        }
        dr_trace_free(c.t);
    }
    void *dict = NULL;
    size_t dlen = 0;
    DrError e = {0};
    if (dr_dict_train(c.buf, c.sizes, c.n, 16 * 1024, &dict, &dlen, &e) != DR_OK) {
        fprintf(stderr, "train_dict: %s\n", e.msg);
        return 1;
    }
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(dict, 1, dlen, f) != dlen || fclose(f) != 0) {
        fprintf(stderr, "train_dict: cannot write %s\n", argv[1]);
        return 1;
    }
    printf("train_dict: %u samples, %zu bytes -> %s (%zu bytes)\n", c.n, c.len, argv[1], dlen);
    free(dict);
    free(c.buf);
    free(c.sizes);
    return 0;
}
