/* test_writer.c -- Criterion tests for the recorder's buffer and writer
 * thread (recorder/writer.c), against a real trace file.
 *
 * The recorder is driven as the runner drives it: dr_rec_start on a fresh
 * trace, producers appending from several threads, dr_rec_finish at the end.
 * Frame counts come from a fake snapshot function standing in for the PEP 523
 * hook (hook.c needs Python).  What landed is read back through the public
 * reader API and the v_* views.  Waits are bounded polls, or one sleep of a
 * few flush periods where the point is that no one asked for a flush. */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"
#include "../recorder/hook.h"
#include "../recorder/writer.h"
#include "unit_util.h"

static char writer_dir[64]; /* mkdtemp template below */
static char writer_path[96];

static void writer_setup(void) {
    snprintf(writer_dir, sizeof writer_dir, "/tmp/dynrec-test-writer-XXXXXX");
    cr_assert_not_null(mkdtemp(writer_dir), "mkdtemp failed");
    snprintf(writer_path, sizeof writer_path, "%s/run.db", writer_dir);
}

static void writer_teardown(void) {
    DIR *d = opendir(writer_dir);
    if (!d) return;
    struct dirent *e;
    char p[PATH_MAX + 256];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", writer_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(writer_dir);
}

TestSuite(writer, .init = writer_setup, .fini = writer_teardown);

static DrRecorder *writer_start(DrSnapshotFn snapshot) {
    DrError err = {0};
    DrTrace *t = dr_trace_create(writer_path, 0, &err);
    cr_assert_not_null(t, "create: %s", err.msg);
    DrRecorder *r = dr_rec_start(t, snapshot, &err);
    cr_assert_not_null(r, "dr_rec_start: %s", err.msg);
    return r;
}

static void writer_finish_ok(DrRecorder *r, int status, int sig) {
    DrError err = {0};
    cr_assert_eq(dr_rec_finish(r, status, sig, &err), DR_OK, "dr_rec_finish: %s", err.msg);
}

static DrTrace *writer_open(void) {
    DrError err = {0};
    DrTrace *t = dr_trace_open(writer_path, &err);
    cr_assert_not_null(t, "open: %s", err.msg);
    return t;
}

static void writer_sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ---- many producers ----------------------------------------------------- */

enum { WRITER_NTHREADS = 4, WRITER_PER_THREAD = 10000 };

typedef struct {
    DrRecorder *rec;
    int64_t id;
} WriterProducer;

static void *writer_produce(void *arg) {
    WriterProducer *p = arg;
    char text[32];
    for (int i = 0; i < WRITER_PER_THREAD; i++) {
        /* A few distinct texts, so interning is exercised too. */
        int n = snprintf(text, sizeof text, "t%lld-%d", (long long)p->id, i % 7);
        dr_rec_event(p->rec, p->id, "callback", i, text, (size_t)n, NULL, 0);
    }
    return NULL;
}

typedef struct {
    long long rows, bad_order, bad_time, bad_thread;
    long long next[WRITER_NTHREADS];
    long long first_t[WRITER_NTHREADS], last_t[WRITER_NTHREADS];
} WriterOrder;

static int writer_check_order(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    WriterOrder *o = ud;
    o->rows++;
    if (n != 4 || !v[0] || !v[1] || !v[2] || !v[3]) {
        o->bad_thread++;
        return 0;
    }
    long long th = strtoll(v[0], NULL, 10), num = strtoll(v[1], NULL, 10);
    long long t_ns = strtoll(v[2], NULL, 10);
    if (th < 1 || th > WRITER_NTHREADS) {
        o->bad_thread++;
        return 0;
    }
    char want[32];
    snprintf(want, sizeof want, "t%lld-%lld", th, num % 7);
    if (strcmp(v[3], want) != 0) o->bad_thread++;
    if (num != o->next[th - 1]) o->bad_order++;
    if (t_ns < o->last_t[th - 1]) o->bad_time++;
    if (num == 0) o->first_t[th - 1] = t_ns;
    o->next[th - 1] = num + 1;
    o->last_t[th - 1] = t_ns;
    return 0;
}

Test(writer, four_threads_all_events_in_order) {
    DrRecorder *r = writer_start(NULL);
    pthread_t th[WRITER_NTHREADS];
    WriterProducer p[WRITER_NTHREADS];
    for (int i = 0; i < WRITER_NTHREADS; i++) {
        p[i] = (WriterProducer){r, i + 1};
        cr_assert_eq(pthread_create(&th[i], NULL, writer_produce, &p[i]), 0);
    }
    for (int i = 0; i < WRITER_NTHREADS; i++) pthread_join(th[i], NULL);
    writer_finish_ok(r, 3, 0);

    DrTrace *t = writer_open();
    cr_assert_eq(dr_trace_is_complete(t), 1);
    ut_expect_meta(t, "exit_status", "3");
    ut_expect_meta(t, "exit_signal", NULL);
    cr_assert_eq(ut_q1_int(t, "SELECT count(*) FROM v_events"),
                 WRITER_NTHREADS * WRITER_PER_THREAD);
    WriterOrder o = {0};
    for (int i = 0; i < WRITER_NTHREADS; i++) o.last_t[i] = -1;
    DrError err = {0};
    cr_assert_eq(dr_trace_query(t, "SELECT thread, num, t_ns, text FROM v_events ORDER BY seq",
                                writer_check_order, &o, &err),
                 DR_OK, "%s", err.msg);
    cr_assert_eq(o.rows, WRITER_NTHREADS * WRITER_PER_THREAD);
    cr_assert_eq(o.bad_thread, 0, "%lld events with a wrong thread or text", o.bad_thread);
    cr_assert_eq(o.bad_order, 0, "%lld events out of order within their thread", o.bad_order);
    cr_assert_eq(o.bad_time, 0, "%lld events with t_ns going backwards", o.bad_time);
    for (int i = 0; i < WRITER_NTHREADS; i++) {
        cr_assert_eq(o.next[i], WRITER_PER_THREAD, "thread %d ends at %lld", i + 1, o.next[i]);
        cr_assert_gt(o.last_t[i], o.first_t[i], "thread %d: time did not advance", i + 1);
    }
    dr_trace_free(t);
}

/* ---- frame counts from a snapshot --------------------------------------- */

enum { WRITER_NCODES = 3 };

static pthread_mutex_t writer_snap_lock = PTHREAD_MUTEX_INITIALIZER;
static DrCodeInfo writer_codes[WRITER_NCODES];
static int writer_snap_calls;

static long writer_snapshot(DrCodeVisit fn, void *ud) {
    pthread_mutex_lock(&writer_snap_lock);
    for (int i = 0; i < WRITER_NCODES; i++) fn(ud, &writer_codes[i]);
    writer_snap_calls++;
    pthread_mutex_unlock(&writer_snap_lock);
    return WRITER_NCODES;
}

static void writer_set_counts(const uint64_t calls[WRITER_NCODES],
                              const uint64_t resumes[WRITER_NCODES]) {
    static const char *const quals[WRITER_NCODES] = {"Net.forward", "Net.helper", "gen"};
    pthread_mutex_lock(&writer_snap_lock);
    for (int i = 0; i < WRITER_NCODES; i++)
        writer_codes[i] = (DrCodeInfo){.index = (uint32_t)i,
                                       .filename = "model.py",
                                       .qualname = quals[i],
                                       .firstlineno = 10 * (i + 1),
                                       .calls = calls[i],
                                       .resumes = resumes[i]};
    pthread_mutex_unlock(&writer_snap_lock);
}

static int writer_snap_count(void) {
    pthread_mutex_lock(&writer_snap_lock);
    int n = writer_snap_calls;
    pthread_mutex_unlock(&writer_snap_lock);
    return n;
}

/* Polls a separate reader until sql yields want, for at most 3 s. */
static void writer_wait_for(const char *sql, const char *want) {
    char *last = NULL;
    for (int i = 0; i < 150; i++) {
        DrError err = {0};
        DrTrace *t = dr_trace_open(writer_path, &err);
        if (t) {
            char *v = ut_q1_try(t, sql);
            dr_trace_free(t);
            free(last);
            last = v;
            if (last && strcmp(last, want) == 0) {
                free(last);
                return;
            }
        }
        writer_sleep_ms(20);
    }
    cr_assert_fail("%s: waited for %s, last saw %s", sql, want, last ? last : "(nothing)");
}

Test(writer, snapshot_counts_end_up_in_v_frame_counts) {
    static const uint64_t calls1[] = {1, 2, 0}, resumes1[] = {0, 0, 4};
    static const uint64_t calls2[] = {50, 2, 1}, resumes2[] = {0, 0, 9};
    writer_set_counts(calls1, resumes1);
    DrRecorder *r = writer_start(writer_snapshot);
    dr_rec_event(r, 1, "start", 0, NULL, 0, NULL, 0);
    /* The writer thread publishes the first counts on its own. */
    writer_wait_for("SELECT group_concat(calls || '/' || resumes, ' ') FROM"
                    " (SELECT * FROM v_frame_counts ORDER BY firstlineno)",
                    "1/0 2/0 0/4");
    int seen = writer_snap_count();
    writer_set_counts(calls2, resumes2);
    writer_finish_ok(r, 0, 0);
    cr_assert_gt(writer_snap_count(), seen, "no snapshot after the counts changed");

    DrTrace *t = writer_open();
    cr_assert_eq(dr_trace_is_complete(t), 1);
    cr_assert_eq(ut_q1_int(t, "SELECT count(*) FROM v_frame_counts"), WRITER_NCODES);
    cr_assert_eq(ut_q1_int(t, "SELECT count(*) FROM code_objects"), WRITER_NCODES,
                 "a code object was recorded twice");
    ut_expect_q1(t, "SELECT calls FROM v_frame_counts WHERE qualname = 'Net.forward'", "50");
    ut_expect_q1(t, "SELECT calls FROM v_frame_counts WHERE qualname = 'Net.helper'", "2");
    ut_expect_q1(t, "SELECT calls FROM v_frame_counts WHERE qualname = 'gen'", "1");
    ut_expect_q1(t, "SELECT resumes FROM v_frame_counts WHERE qualname = 'gen'", "9");
    ut_expect_q1(t, "SELECT firstlineno FROM v_frame_counts WHERE qualname = 'gen'", "30");
    ut_expect_q1(t, "SELECT filename FROM v_frame_counts WHERE qualname = 'gen'", "model.py");
    dr_trace_free(t);
}

/* ---- periodic flush ----------------------------------------------------- */

Test(writer, periodic_flush_visible_before_finish) {
    DrRecorder *r = writer_start(NULL);
    for (int i = 0; i < 50; i++) dr_rec_event(r, 1, "callback", i, "tick", 4, NULL, 0);
    /* Nobody asks for a flush: the thread must do it within DR_FLUSH_MS. */
    writer_sleep_ms(3 * DR_FLUSH_MS);
    DrTrace *t = writer_open();
    cr_assert_eq(ut_q1_int(t, "SELECT count(*) FROM v_events"), 50);
    cr_assert_eq(dr_trace_is_complete(t), 0, "complete before dr_rec_finish");
    dr_trace_free(t);

    dr_rec_event(r, 1, "callback", 50, "tock", 4, NULL, 0);
    writer_finish_ok(r, 0, 0);
    t = writer_open();
    cr_assert_eq(dr_trace_is_complete(t), 1);
    cr_assert_eq(ut_q1_int(t, "SELECT count(*) FROM v_events"), 51);
    ut_expect_q1(t, "SELECT text FROM v_events WHERE num = 50", "tock");
    dr_trace_free(t);
}

/* ---- meta, files, payloads ---------------------------------------------- */

Test(writer, meta_and_files_land_in_the_trace) {
    static const char script[] = "import torch\n\n@torch.compile\ndef f(x):\n    return x * 2\n";
    char tb[300];
    memset(tb, 'E', sizeof tb);
    DrRecorder *r = writer_start(NULL);
    dr_rec_meta(r, "argv", "[\"demo.py\", \"--fast\"]");
    dr_rec_meta(r, "cwd", "/home/u");
    dr_rec_meta(r, "argv", "[\"demo.py\"]"); /* a later value replaces */
    dr_rec_file(r, "/home/u/demo.py", "script", script, sizeof script - 1);
    dr_rec_file(r, "/home/u/empty.py", "source", NULL, 0);
    dr_rec_event(r, 2, "exception", 1, "ValueError", 10, tb, sizeof tb);
    dr_rec_event(r, 2, "partial", 2, "abcdef", 3, NULL, 0); /* text_len, not strlen */
    dr_rec_meta(r, "no_value", NULL);
    writer_finish_ok(r, 0, 0);

    DrTrace *t = writer_open();
    DrError err = {0};
    ut_expect_meta(t, "argv", "[\"demo.py\"]");
    ut_expect_meta(t, "cwd", "/home/u");
    ut_expect_meta(t, "exit_status", "0");
    char *end = NULL;
    cr_assert_eq(dr_trace_get_meta(t, "end_time", &end, &err), DR_OK, "%s", err.msg);
    cr_assert_not_null(end, "end_time missing");
    free(end);
    cr_assert_gt(ut_q1_int(t, "SELECT value FROM meta WHERE key = 'duration_ns'"), 0);

    cr_assert_eq(ut_q1_int(t, "SELECT count(*) FROM v_files"), 2);
    ut_expect_q1(t, "SELECT role FROM v_files WHERE path = '/home/u/demo.py'", "script");
    ut_expect_q1(t, "SELECT size FROM v_files WHERE path = '/home/u/empty.py'", "0");
    long long bid = ut_q1_int(t, "SELECT blob_id FROM v_files WHERE role = 'script'");
    void *out = NULL;
    size_t len = 0;
    cr_assert_eq(dr_trace_read_blob(t, bid, 0, &out, &len, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(len, sizeof script - 1);
    cr_assert_str_eq(out, script);
    free(out);

    ut_expect_meta(t, "no_value", "");
    ut_expect_q1(t, "SELECT text FROM v_events WHERE kind = 'partial'", "abc");
    ut_expect_q1(t, "SELECT text FROM v_events WHERE kind = 'exception'", "ValueError");
    bid = ut_q1_int(t, "SELECT blob_id FROM v_events WHERE kind = 'exception'");
    cr_assert_eq(dr_trace_read_blob(t, bid, 0, &out, &len, &err), DR_OK, "%s", err.msg);
    cr_assert_eq(len, sizeof tb);
    cr_assert(memcmp(out, tb, sizeof tb) == 0);
    free(out);
    dr_trace_free(t);
}

Test(writer, exit_signal_is_recorded) {
    DrRecorder *r = writer_start(NULL);
    dr_rec_event(r, 1, "start", 0, NULL, 0, NULL, 0);
    writer_finish_ok(r, 128 + 9, 9);
    DrTrace *t = writer_open();
    ut_expect_meta(t, "exit_signal", "9");
    ut_expect_meta(t, "exit_status", "137");
    cr_assert_eq(dr_trace_is_complete(t), 1);
    dr_trace_free(t);
}
