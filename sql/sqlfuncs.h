/* sqlfuncs.h -- SQL functions that read a trace's payloads: dynrec_text(blob_id)
 * and dynrec_json(blob_id), and dynrec_is_library(filename), for `dynrec sql` and the loadable
 * SQLite extension build/dynrec_sqlite.so (`.load build/dynrec_sqlite` in sqlite3). */
#ifndef DR_SQLFUNCS_H
#define DR_SQLFUNCS_H

#include <sqlite3.h>

/* A decoded payload larger than this is refused with an SQL error naming
 * the blob (the codec refuses it before allocating). */
#define DR_SQL_TEXT_MAX ((size_t)64 << 20)

/* Registers dynrec_text and dynrec_json on db (they read the tables
 * main.blobs and main.dicts of that connection) and dynrec_is_library
 * (filename [, dir ...]), ../schema/ident.h's rule of library code.
 * Returns an SQLite code. */
int dr_sqlfuncs_register(sqlite3 *db);

#endif
