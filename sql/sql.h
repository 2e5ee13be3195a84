/* sql.h -- `dynrec sql`: one read-only query on a trace, with dynrec_text
 * and dynrec_json, as aligned text, JSON or CSV. */
#ifndef DR_SQL_H
#define DR_SQL_H

#include <stdio.h>

#include "../schema/trace.h"

typedef enum { DR_SQL_TEXT, DR_SQL_JSON, DR_SQL_CSV } DrSqlFormat;

typedef struct DrSqlOptions {
    DrSqlFormat format;
    int terminal; /* output to a terminal: control characters from the trace become ? */
} DrSqlOptions;

/* Runs query (exactly one statement, which must not write) on the open
 * trace t and writes its rows to out.  Returns DR_OK; DR_ERR_ARG for a
 * query that is not one statement or that writes (err says which);
 * DR_ERR_SQL for an SQL error (err holds SQLite's message); DR_ERR_CORRUPT,
 * DR_ERR_NOMEM or DR_ERR_IO as the trace reader does.  Nothing is written
 * to out on an error before the first row; text output is buffered whole
 * (to align columns), JSON and CSV are streamed. */
int dr_sql_run(DrTrace *t, const char *query, const DrSqlOptions *o, FILE *out, DrError *err);

#endif
