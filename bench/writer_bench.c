/* writer_bench.c -- what one small event costs the recorder, in time and on disk.
 *
 * A synthetic stream of N (default 10^6) small events: 8 kinds, 100 distinct
 * short texts, a counter.  Measures
 *   A. the producer's cost per event (dr_rec_event: the buffered append the
 *      recorded program pays) and the end-to-end time until the writer
 *      thread has committed everything and closed the trace;
 *   B. the trace writer alone (dr_trace_add_event in transactions of 10^4);
 * and the bytes per event of each resulting file.  Usage:
 *   writer_bench [N] [dir] */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../recorder/writer.h"
#include "../schema/trace.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long file_size(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
}

static const char *kinds[8] = {"callback",    "compile",     "guard",       "guard_failure",
                               "graph_break", "side_effect", "speculation", "error"};

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    char texts[100][48];
    for (int i = 0; i < 100; i++)
        snprintf(texts[i], sizeof texts[i], "L['x'].size()[0] == %d  # model.py:%d", i * 8, i);
    char pa[4096], pb[4096];
    snprintf(pa, sizeof pa, "%s/writer_bench_a.db", dir);
    snprintf(pb, sizeof pb, "%s/writer_bench_b.db", dir);
    DrError err = {0};

    /* A: through the recorder's buffer and writer thread. */
    DrTrace *t = dr_trace_create(pa, 1, &err);
    if (!t) return fprintf(stderr, "writer_bench: %s\n", err.msg), 1;
    DrRecorder *r = dr_rec_start(t, NULL, &err);
    if (!r) return fprintf(stderr, "writer_bench: %s\n", err.msg), 1;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        const char *txt = texts[i % 100];
        dr_rec_event(r, 1, kinds[i % 8], i, txt, strlen(txt), NULL, 0);
    }
    double t1 = now();
    if (dr_rec_finish(r, 0, 0, &err) != DR_OK)
        return fprintf(stderr, "writer_bench: %s\n", err.msg), 1;
    double t2 = now();

    /* B: the trace writer alone. */
    t = dr_trace_create(pb, 1, &err);
    if (!t) return fprintf(stderr, "writer_bench: %s\n", err.msg), 1;
    double t3 = now();
    for (long i = 0; i < n; i++) {
        if (i % 10000 == 0 && (dr_trace_commit(t, &err) || dr_trace_begin(t, &err)))
            return fprintf(stderr, "writer_bench: %s\n", err.msg), 1;
        DrEvent ev = {
            .t_ns = i, .thread = 1, .kind = kinds[i % 8], .num = i, .text = texts[i % 100]};
        if (dr_trace_add_event(t, &ev, &err) < 0)
            return fprintf(stderr, "writer_bench: %s\n", err.msg), 1;
    }
    if (dr_trace_close(t, 1, &err) != DR_OK)
        return fprintf(stderr, "writer_bench: %s\n", err.msg), 1;
    double t4 = now();

    printf("writer_bench: %ld small events (8 kinds, 100 distinct texts)\n", n);
    printf("  A producer append (dr_rec_event)     %7.1f ns/event\n", (t1 - t0) / n * 1e9);
    printf("  A append + write + close, end to end %7.1f ns/event  (%.3f s)\n", (t2 - t0) / n * 1e9,
           t2 - t0);
    printf("  B trace writer alone, batches of 1e4 %7.1f ns/event  (%.3f s)\n", (t4 - t3) / n * 1e9,
           t4 - t3);
    printf("  on disk: A %.1f bytes/event (%lld bytes), B %.1f bytes/event\n",
           (double)file_size(pa) / n, file_size(pa), (double)file_size(pb) / n);
    unlink(pa);
    unlink(pb);
    return 0;
}
