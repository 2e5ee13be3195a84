/* test_ident.c -- Criterion tests for how a trace names compiles and frames
 * and tells the user's code from library code (schema/ident.c): tables of
 * input -> expected answer, one row per rule of ident.h. */
#include <criterion/criterion.h>
#include <string.h>

#include "../schema/ident.h"

Test(ident, compile_epoch) {
    static const struct {
        const char *cid;
        long epoch;
        const char *dynamo;
    } rows[] = {
        {"0/1", 0, "0/1"},
        {"2:0/1", 2, "0/1"},
        {"12:3/0_1", 12, "3/0_1"},
        {NULL, 0, ""},
        {"", 0, ""},
        {"x:0/1", 0, "x:0/1"}, /* no number */
        {":0/1", 0, ":0/1"},
        {"2-0/1", 0, "2-0/1"},                   /* no colon */
        {"1234567890:0/0", 0, "1234567890:0/0"}, /* too long to be an epoch */
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const char *id = NULL;
        cr_expect_eq(dr_compile_epoch(rows[i].cid, &id), rows[i].epoch, "epoch of %s",
                     rows[i].cid ? rows[i].cid : "NULL");
        cr_expect_str_eq(id, rows[i].dynamo, "Dynamo's id in %s",
                         rows[i].cid ? rows[i].cid : "NULL");
        cr_expect_eq(dr_compile_epoch(rows[i].cid, NULL), rows[i].epoch);
    }
}

Test(ident, frame_key) {
    char buf[64];
    cr_assert_str_eq(dr_frame_key(buf, sizeof buf, "m.py", "f.<locals>.g", 3), "m.py\x1f"
                                                                               "f.<locals>.g\x1f"
                                                                               "3");
    cr_assert_str_eq(dr_frame_key(buf, sizeof buf, NULL, NULL, 0), "\x1f\x1f"
                                                                   "0");
    /* Two frames that differ only in their first line are two frames. */
    char other[64];
    cr_assert_str_neq(dr_frame_key(buf, sizeof buf, "m.py", "f", 3),
                      dr_frame_key(other, sizeof other, "m.py", "f", 30));
    /* Cut, never overrun, when the buffer is short. */
    char small[6];
    cr_assert_str_eq(dr_frame_key(small, sizeof small, "abcdef", "g", 1), "abcde");
}

Test(ident, is_library) {
    static const char *const dirs[] = {"/src/pytorch/torch/", NULL, "/opt/py/lib64/python3.11/"};
    static const struct {
        const char *file;
        int with_dirs, library;
    } rows[] = {
        {NULL, 0, 1},
        {"<string>", 0, 1},
        {"<frozen importlib._bootstrap>", 0, 1},
        {"/v/lib/python3.11/site-packages/transformers/modeling_utils.py", 0, 1},
        {"/usr/lib/python3/dist-packages/numpy/core.py", 0, 1},
        {"/usr/lib/python3.11/contextlib.py", 0, 1},
        {"/tmp/torchinductor_u/ab/cabc.py", 0, 1},
        {"/home/u/proj/train.py", 0, 0},
        {"train.py", 0, 0},
        {"/home/u/site-packages-notes/x.py", 0, 0}, /* not a site-packages directory */
        /* torch from a source checkout, and a standard library under lib64:
         * library only when the caller names their directories. */
        {"/src/pytorch/torch/_dynamo/eval_frame.py", 0, 0},
        {"/src/pytorch/torch/_dynamo/eval_frame.py", 1, 1},
        {"/opt/py/lib64/python3.11/os.py", 1, 1},
        {"/src/pytorch/test/dynamo/test_misc.py", 1, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        cr_expect_eq(dr_is_library(rows[i].file, rows[i].with_dirs ? dirs : NULL,
                                   rows[i].with_dirs ? sizeof dirs / sizeof *dirs : 0),
                     rows[i].library, "%s", rows[i].file ? rows[i].file : "NULL");
}
