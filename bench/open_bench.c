/* open_bench.c -- how long opening a large trace and `dynrec show` take.
 *
 *   build/open_bench TRACE [RUNS]
 *
 * Times dr_trace_open alone and dr_trace_open + dr_show (to /dev/null),
 * RUNS times each (default 5), and prints the medians.  `make bench` runs
 * it on the 1M-event trace writer_bench writes (bench/out/writer_bench_a.db). */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../schema/trace.h"
#include "../viewer/show.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 2) return fprintf(stderr, "usage: open_bench TRACE [RUNS]\n"), 2;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 100) runs = 5;
    double open_t[100], show_t[100];
    FILE *devnull = fopen("/dev/null", "w");
    if (!devnull) return 1;
    long long events = 0;
    for (int i = 0; i < runs; i++) {
        DrError err = {0};
        double t0 = now();
        DrTrace *t = dr_trace_open(argv[1], &err);
        double t1 = now();
        if (!t) return fprintf(stderr, "open_bench: %s\n", err.msg), 1;
        dr_trace_free(t);
        double t2 = now();
        t = dr_trace_open(argv[1], &err);
        DrShowOptions o = {0};
        int rc = t ? dr_show(t, &o, devnull, &err) : err.code;
        double t3 = now();
        if (rc != DR_OK) return fprintf(stderr, "open_bench: %s\n", err.msg), 1;
        if (i == 0) {
            char *n = NULL;
            dr_trace_query_text(t, "SELECT count(*) FROM events", &n, &err);
            events = n ? atoll(n) : 0;
            free(n);
        }
        dr_trace_free(t);
        open_t[i] = t1 - t0;
        show_t[i] = t3 - t2;
    }
    qsort(open_t, (size_t)runs, sizeof *open_t, cmp);
    qsort(show_t, (size_t)runs, sizeof *show_t, cmp);
    printf("open_bench: %s, %lld events, medians of %d runs\n", argv[1], events, runs);
    printf("  open           %.3f s\n", open_t[runs / 2]);
    printf("  open + show    %.3f s\n", show_t[runs / 2]);
    fclose(devnull);
    return 0;
}
