/* unit_util.h -- query helpers shared by the unit tests of the trace store
 * and the writer.  Each asserts (Criterion) that the query itself works. */
#ifndef DR_UNIT_UTIL_H
#define DR_UNIT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "../schema/trace.h"

/* Python-like text of exactly n bytes (malloc'd, NUL-terminated), the same
 * for the same seed: compresses well, but not trivially. */
char *ut_python_text(size_t n, uint64_t seed);

/* The number of rows sql returns. */
int ut_count_rows(DrTrace *t, const char *sql);
/* The first value of the first row, malloc'd; NULL when no row or SQL NULL. */
char *ut_q1(DrTrace *t, const char *sql);
/* ut_q1 without the assertion: NULL also when the query fails (polling). */
char *ut_q1_try(DrTrace *t, const char *sql);
/* The same as ut_q1, as an integer; the test fails when there is no value. */
long long ut_q1_int(DrTrace *t, const char *sql);
/* Asserts that the first value of sql is want. */
void ut_expect_q1(DrTrace *t, const char *sql, const char *want);
/* Asserts that meta[key] is want (absent when want is NULL). */
void ut_expect_meta(DrTrace *t, const char *key, const char *want);

#endif
