#define _GNU_SOURCE 1
/* test_dist.c -- torchrun: every rank of a real torch.distributed job (gloo,
 * on the CPU) recorded by `dynrec run`, each into its own trace named by its
 * rank, and the ranks compared by `dynrec ranks`. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

TestSuite(dist, .init = e2e_setup, .fini = e2e_teardown, .timeout = 400);

static const char *torchrun(void) {
    const char *t = e2e_fmt("%s/bin/torchrun", e2e_venv);
    if (access(t, X_OK) != 0) cr_skip_test("no torchrun in %s", e2e_venv);
    return t;
}

/* The trace of rank r in the test's directory: exactly one name ends in
 * -rankR.db.  Checks its dist.* meta. */
static DrTrace *rank_trace(int r, int world) {
    int n = 0;
    char *names = e2e_list(e2e_fmt("-rank%d.db", r), &n);
    cr_assert_eq(n, 1, "one trace of rank %d: %s", r, names);
    names[strcspn(names, "\n")] = 0;
    cr_assert(strncmp(names, "train-", 6) == 0, "named after the script: %s", names);
    DrTrace *t = e2e_open(e2e_path(names));
    cr_assert_str_eq(e2e_meta(t, "dist.rank"), e2e_fmt("%d", r));
    cr_assert_str_eq(e2e_meta(t, "dist.local_rank"), e2e_fmt("%d", r));
    cr_assert_str_eq(e2e_meta(t, "dist.world_size"), e2e_fmt("%d", world));
    cr_assert_str_eq(e2e_meta(t, "dist.backend"), "gloo");
    cr_assert_str_eq(e2e_meta(t, "exit_status"), "0");
    return t;
}

/* torchrun --standalone --nproc-per-node N --no-python dynrec run -o . train.py [diverge] */
static E2eProc *run_job(int nproc, const char *mode) {
    e2e_copy_script("dist/train.py");
    const char *argv[] = {torchrun(),
                          "--standalone",
                          e2e_fmt("--nproc-per-node=%d", nproc),
                          "--no-python",
                          e2e_bin,
                          "run",
                          "-o",
                          ".",
                          "dist/train.py",
                          mode,
                          NULL};
    E2eProc *p = e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, "torchrun");
    for (int r = 0; r < nproc; r++)
        /* ones(4) * 2, summed over the ranks by the compiled all_reduce, + 1 */
        cr_assert(strstr(p->out.data, e2e_fmt("rank %d sum %d.0\n", r, 4 * (2 * nproc + 1))),
                  "rank %d ran: %s", r, p->out.data);
    return p;
}

static E2eProc *ranks(const char *json) {
    const char *argv[] = {e2e_bin, "ranks", ".", json, NULL};
    return e2e_run_in(argv, NULL, E2E_TIMEOUT_MS);
}

Test(dist, two_ranks_that_agree) {
    run_job(2, NULL);
    for (int r = 0; r < 2; r++) {
        DrTrace *t = rank_trace(r, 2);
        cr_assert_str_eq(e2e_sql_lines(t, NULL, "SELECT qualname FROM v_compiles ORDER BY seq"),
                         "step\nlocal\n");
        e2e_close(t);
    }
    E2eProc *p = ranks(NULL);
    e2e_assert_exit(p, 0, "dynrec ranks");
    cr_assert(strstr(p->out.data, "rank 1: same as rank 0"), "%s", p->out.data);
    cr_assert(strstr(p->out.data, "rank 0: all_reduce, wait_tensor"), "%s", p->out.data);

    /* One Perfetto timeline, a process per rank, on the wall clock. */
    int n = 0;
    char *names = e2e_list("-rank1.db", &n), *names0 = e2e_list("-rank0.db", &n);
    names[strcspn(names, "\n")] = 0;
    names0[strcspn(names0, "\n")] = 0;
    E2eProc *x = e2e_run((const char *[]){e2e_bin, "export", "--format", "perfetto", "-o",
                                          "job.json", names, names0, NULL});
    e2e_assert_exit(x, 0, "export of two ranks");
    char *json = e2e_slurp(e2e_path("job.json"), NULL);
    cr_assert(json && strstr(json, "\"clock\": \"wall clock (start_unix_ns)\""), "%.300s", json);
    char *r0 = strstr(json, "\"name\": \"rank 0: "), *r1 = strstr(json, "\"name\": \"rank 1: ");
    cr_assert(r0 && r1 && r0 < r1, "a process per rank, in rank order: %.600s", json);
    cr_assert(strstr(json, "compile 0/0 step"), "the compiles are on the timeline");
}

Test(dist, four_ranks_one_recompiles_and_is_named) {
    run_job(4, "diverge");
    for (int r = 0; r < 4; r++) {
        DrTrace *t = rank_trace(r, 4);
        cr_assert_eq(e2e_sql_int(t, "SELECT count(*) FROM v_compiles WHERE recompile"),
                     r == 1 ? 1 : 0, "rank %d", r);
        e2e_close(t);
    }
    E2eProc *p = ranks(NULL);
    e2e_assert_exit(p, 1, "dynrec ranks");
    const char *o = p->out.data;
    cr_assert(strstr(o, "rank 2: same as rank 0") && strstr(o, "rank 3: same as rank 0"), "%s", o);
    cr_assert(strstr(o, "first rank divergence: rank 1 differs from rank 0"), "%s", o);
    cr_assert(strstr(o, "compile #1 of local"), "the compile is named: %s", o);
    E2eProc *j = ranks("--json");
    e2e_assert_exit(j, 1, "dynrec ranks --json");
    cr_assert(j->out.data[0] == '{', "%s", j->out.data);
}

Test(dist, python_m_torch_distributed_run_with_m_dynrec) {
    const char *pkg = getenv("DYNREC_PKG");
    if (!pkg || !*pkg) cr_skip_test("DYNREC_PKG must name the build's package directory");
    torchrun();
    e2e_copy_script("dist/train.py");
    const char *argv[] = {"/usr/bin/env",
                          e2e_fmt("PYTHONPATH=%s", pkg),
                          e2e_python,
                          "-m",
                          "torch.distributed.run",
                          "--standalone",
                          "--nproc-per-node=2",
                          "-m",
                          "dynrec",
                          "run",
                          "-q",
                          "-o",
                          ".",
                          "dist/train.py",
                          NULL};
    E2eProc *p = e2e_run_in(argv, NULL, E2E_TORCH_TIMEOUT_MS);
    e2e_assert_exit(p, 0, "python -m torch.distributed.run -m dynrec run");
    for (int r = 0; r < 2; r++) e2e_close(rank_trace(r, 2));
    e2e_assert_exit(ranks(NULL), 0, "dynrec ranks");
}
