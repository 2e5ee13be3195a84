/* test_mask.c -- Criterion tests for the one masking (schema/mask.c).
 *
 * A table of input -> expected output, one row per rule of
 * replayer/COMPARE.md ("Canonical text") and one per text that must stay
 * as it is; every row is also checked to be a fixed point (masking a
 * masked text changes nothing: the readers mask the recorder's keys
 * again). */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/mask.h"

static const DrMaskCtx ctx = {"/home/u/proj", "/home/u/cwd"};

static const struct {
    const char *in, *want;
} rows[] = {
    /* the spaces that align a trailing comment; an indentation stays */
    {"mode == 'a'          # if mode == \"a\":", "mode == 'a'  # if mode == \"a\":"},
    {"x  # y", "x  # y"},
    {"f(x) # one space", "f(x) # one space"},
    {"    # File: the model, line 3", "    # File: the model, line 3"},
    {"a = 1\n        # c", "a = 1\n        # c"},
    {"a    b", "a    b"},
    /* paths */
    {"at /home/u/proj/m.py:3", "at <root>/m.py:3"},
    {"'/home/u/cwd/data/x.txt'", "'<root>/data/x.txt'"},
    {"/home/u/project/m.py", "/home/u/project/m.py"}, /* not under the root */
    {"/home/u/proj/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py",
     "<site>/torch/nn/modules/module.py"},
    {"/usr/lib/python3/dist-packages/numpy/core.py", "<site>/numpy/core.py"},
    {"File \"/usr/lib/python3.11/contextlib.py\", line 81",
     "File \"<stdlib>/contextlib.py\", line 81"},
    {"saved to /tmp/tmpab12_x/out.db.", "saved to <tmp>"},
    {"(/var/tmp/q/r, /dev/shm/s)", "(<tmp>, <tmp>)"},
    {"in f at examples/deep/user.py:12", "in f at .../user.py:12"},
    {"...ers/long/name/model.py:40", ".../model.py:40"},
    /* addresses, ids, times */
    {"<built-in function x at 0x7f3a2b1c0d00", "<built-in function x at 0x?"},
    {"id(L['m']) == 140200980950336", "id(L['m']) == #"},
    {"took 0.25 s, then 12.5ms and 3us", "took <time>, then <time> and <time>"},
    {"12ms elapsed, 7s", "<time> elapsed, <time>"},
    /* Dynamo's installed globals, named by object id */
    {"G['_140200980950336_c0'].Tensor", "G['_#_c#'].Tensor"},
    /* the output-graph count after the id, and a key masked before that rule */
    {"G['_140200980950336_c12'].Tensor is G['_#_c2'].Tensor",
     "G['_#_c#'].Tensor is G['_#_c#'].Tensor"},
    {"_140200980950336_c3_x", "_#_c#_x"},
    {"___as_tensor_140200980950336", "___as_tensor_#"},
    /* names made with Dynamo's process-wide counter */
    {"G['__builtins_dict___38']['int']", "G['__builtins_dict___#']['int']"},
    {"__resume_at_30_2(x)", "__resume_at_30_#(x)"},
    {"__compiled_fn_5_1a2b3c4d_0e0f_4a1b_8c2d_334455667788(a)", "__compiled_fn_#(a)"},
    {"__init__ and __x and __y_", "__init__ and __x and __y_"},
    /* ___check_obj_id's id argument, however short */
    {"___check_obj_id(G['_140200980950336_c0'], 140200980950336)",
     "___check_obj_id(G['_#_c#'], #)"},
    {"ID_MATCH: ___check_obj_id(L['self'].f, 9404416)",
     "ID_MATCH: ___check_obj_id(L['self'].f, #)"},
    {"___check_obj_id(L['a'][(1, 2)], 77) and x", "___check_obj_id(L['a'][(1, 2)], #) and x"},
    /* the counter in the file name torch.fx gives generated code, and the
     * path inside it; a bare "<eval_with_key>" or one without digits stays */
    {"<eval_with_key>.12 from /opt/venv/lib/python3.11/site-packages/torch/fx/x.py:5 in f",
     "<eval_with_key>.# from <site>/torch/fx/x.py:5 in f"},
    {"x  # <eval_with_key>.3:4 in forward", "x  # <eval_with_key>.#:4 in forward"},
    {"<eval_with_key>.x <eval_with_key>", "<eval_with_key>.x <eval_with_key>"},
    /* a frozenset's items, in hash order (a class's or function's hash is
     * its address): sorted, each masked; a comma inside a string stays */
    {"EQUALS_MATCH: B == frozenset({<function namedtuple>, <class 'list'>, <class 'collections.deque'>})",
     "EQUALS_MATCH: B == frozenset({<class 'collections.deque'>, <class 'list'>, <function namedtuple>})"},
    {"frozenset({2, 'a, b', (1, 0x7f00aa)}) and frozenset() and frozenset({1})",
     "frozenset({'a, b', (1, 0x?), 2}) and frozenset() and frozenset({1})"},
    /* a set display compared with "== ", in the order of its items' hashes
     * (a string's changes every run): sorted as a frozenset's; a dict
     * display, one not after "== ", and an empty one stay */
    {"EQUALS_MATCH: L['s'] == {3.3, 1j, 'PyTorch', nan}  # x",
     "EQUALS_MATCH: L['s'] == {'PyTorch', 1j, 3.3, nan}  # x"},
    {"L['s'] == {'b', ('a, }', 2)} and L['d'] == {'b': 1, 'a': 2} and {'b', 'a'} == {}",
     "L['s'] == {'b', ('a, }', 2)} and L['d'] == {'b': 1, 'a': 2} and {'b', 'a'} == {}"},
    /* the number ___dict_version is compared with, a process-wide counter */
    {"DICT_VERSION: ___dict_version(__import__('torch').utils._pytree.SUPPORTED_NODES) == 843944",
     "DICT_VERSION: ___dict_version(__import__('torch').utils._pytree.SUPPORTED_NODES) == #"},
    {"___dict_version(G['d'][(1, ')')]) == 7 and y",
     "___dict_version(G['d'][(1, ')')]) == # and y"},
    {"___dict_version(G['d']) == 7x", "___dict_version(G['d']) == 7x"},
    /* object reprs */
    {"backend=<torch._dynamo.testing.CompileCounter object at 0x7f12ab34cd50>",
     "backend=<torch._dynamo.testing.CompileCounter object>"},
    {"<function f.<locals>.g at 0x7f00aa>", "<function f.<locals>.g>"},
    {"<bound method M.forward of <m.M object at 0x7ffe01>>",
     "<bound method M.forward of <m.M object>>"},
    /* torch's log prefix */
    {"V1201 09:38:42.123456 12345 torch/_dynamo/guards.py:2997] [0/1] GUARDS:",
     "<log>] [0/1] GUARDS:"},
    {"out\n[rank0]:W1201 09:38:42.123000 12345 site-packages/torch/_dynamo/convert_frame.py:1000] "
     "[0/8] torch._dynamo hit config.recompile_limit (8)\n",
     "out\n[rank0]:<log>] [0/8] torch._dynamo hit config.recompile_limit (8)\n"},
    {"I1201 00:00:01.000001 7 /abs/path/torch/_dynamo/eval_frame.py:5] [__graph_breaks] x",
     "<log>] [__graph_breaks] x"},
    /* pids */
    {"worker pid=31337 exited; pid 12 and pid:4", "worker pid=? exited; pid=? and pid=?"},
    /* must not change */
    {"s15", "s15"},
    {"x2 + s0*s1", "x2 + s0*s1"},
    {"L['x'].size()[0] == 3", "L['x'].size()[0] == 3"},
    {"TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU), torch.float32, "
     "device=None, requires_grad=False, size=[3, 4], stride=[4, 1])",
     "TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU), torch.float32, "
     "device=None, requires_grad=False, size=[3, 4], stride=[4, 1])"},
    {"12345678 and _12345678_c0", "12345678 and _12345678_c0"},
    {"___check_type_id(L['x'], 9404416)", "___check_type_id(L['x'], 9404416)"},
    {"rapid 3, mypid=4", "rapid 3, mypid=4"},
    {"V1201 not a log line", "V1201 not a log line"},
    {"x at 0x12 y", "x at 0x? y"},
    {"", ""},
};

Test(mask, table) {
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        size_t len;
        char *got = dr_mask(&ctx, rows[r].in, strlen(rows[r].in), &len);
        cr_assert_not_null(got);
        cr_expect_str_eq(got, rows[r].want, "row %zu: %s", r, rows[r].in);
        cr_expect_eq(len, strlen(got), "row %zu", r);
        char *again = dr_mask(&ctx, got, len, NULL);
        cr_assert_not_null(again);
        cr_expect_str_eq(again, got, "row %zu masked twice", r);
        free(again);
        free(got);
    }
}

Test(mask, empty_context_keeps_root_paths) {
    char *got = dr_mask(NULL, "/home/u/proj/m.py and /tmp/x", 28, NULL);
    cr_assert_str_eq(got, "/home/u/proj/m.py and <tmp>");
    free(got);
}

Test(mask, length_bounds_and_nul_bytes) {
    char *got = dr_mask(&ctx, "0x1f\0pid=9 tail", 10, NULL);
    cr_assert_eq(memcmp(got, "0x?\0pid=?", 10), 0);
    free(got);
    got = dr_mask(&ctx, "140200980950336", 4, NULL); /* only 4 bytes read */
    cr_assert_str_eq(got, "1402");
    free(got);
    got = dr_mask(&ctx, NULL, 5, NULL);
    cr_assert_str_eq(got, "");
    free(got);
}

Test(mask, path_as_one_token) {
    char *got = dr_mask_path(&ctx, "/home/u/proj/a b/c.py", 21, NULL);
    cr_assert_str_eq(got, "<root>/a b/c.py");
    free(got);
    got = dr_mask_path(&ctx, "/home/u/proj/.venv/lib/python3.11/os.py", 39, NULL);
    cr_assert_str_eq(got, "<stdlib>/os.py");
    free(got);
}
