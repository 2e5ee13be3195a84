/* unit_util.c -- query helpers for the unit tests (see unit_util.h). */
#define _GNU_SOURCE 1
#include "unit_util.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ut_python_text(size_t n, uint64_t seed) {
    static const char *lines[] = {
        "def forward(self, x: torch.Tensor) -> torch.Tensor:\n",
        "    y = torch.nn.functional.relu(self.linear%u(x))\n",
        "    return torch.cat([y, x], dim=%u)\n",
        "class Block%u(torch.nn.Module):\n",
        "    @torch.compile(backend=\"inductor\")\n",
        "    for i in range(%u):\n        x = x + i\n",
    };
    char *s = malloc(n + 128);
    cr_assert_not_null(s);
    if (!seed) seed = 1;
    size_t pos = 0;
    while (pos < n) {
        seed ^= seed << 13; /* xorshift64 */
        seed ^= seed >> 7;
        seed ^= seed << 17;
        pos += (size_t)sprintf(s + pos, lines[seed % 6], (unsigned)(seed >> 40) % 50);
    }
    s[n] = '\0';
    return s;
}

typedef struct {
    int rows;
    char *first;
} Rows;

static int collect(void *ud, int n, const char *const *names, const char *const *values) {
    (void)names;
    Rows *r = ud;
    if (r->rows++ == 0 && n > 0 && values[0]) r->first = strdup(values[0]);
    return 0;
}

static Rows run(DrTrace *t, const char *sql) {
    Rows r = {0};
    DrError err = {0};
    cr_assert_eq(dr_trace_query(t, sql, collect, &r, &err), DR_OK, "%s: %s", sql, err.msg);
    return r;
}

int ut_count_rows(DrTrace *t, const char *sql) {
    Rows r = run(t, sql);
    free(r.first);
    return r.rows;
}

char *ut_q1(DrTrace *t, const char *sql) { return run(t, sql).first; }

char *ut_q1_try(DrTrace *t, const char *sql) {
    Rows r = {0};
    if (dr_trace_query(t, sql, collect, &r, NULL) != DR_OK) {
        free(r.first);
        return NULL;
    }
    return r.first;
}

long long ut_q1_int(DrTrace *t, const char *sql) {
    char *s = ut_q1(t, sql);
    cr_assert_not_null(s, "no value from %s", sql);
    long long v = strtoll(s, NULL, 10);
    free(s);
    return v;
}

void ut_expect_q1(DrTrace *t, const char *sql, const char *want) {
    char *s = ut_q1(t, sql);
    cr_assert_not_null(s, "no value from %s", sql);
    cr_assert_str_eq(s, want, "%s", sql);
    free(s);
}

void ut_expect_meta(DrTrace *t, const char *key, const char *want) {
    char *v = NULL;
    DrError err = {0};
    cr_assert_eq(dr_trace_get_meta(t, key, &v, &err), DR_OK, "%s", err.msg);
    if (!want) {
        cr_assert_null(v, "meta %s should be absent, is %s", key, v);
        return;
    }
    cr_assert_not_null(v, "meta %s is missing", key);
    cr_assert_str_eq(v, want, "meta %s", key);
    free(v);
}
