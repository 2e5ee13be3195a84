/* sqlfuncs.c -- dynrec_text(blob_id) and dynrec_json(blob_id): a trace's
 * payloads as SQL values.
 *
 *   SELECT compile_id, dynrec_text(code_blob) FROM v_graphs;
 *   SELECT json_extract(dynrec_json(blob_id), '$.name') FROM v_ev WHERE kind = 'trace';
 *
 * The same file is compiled into dynrec (`dynrec sql`) and, with
 * DR_SQLITE_EXTENSION defined, into the loadable extension
 * build/dynrec_sqlite.so, whose entry point sqlite3_dynrecsqlite_init is
 * the name SQLite derives from the file name, so `.load build/dynrec_sqlite`
 * works in the stock sqlite3 shell.  Blobs are untrusted: each is read with
 * its own statement from main.blobs, decoded by the codec with a size cap
 * (DR_SQL_TEXT_MAX: a decompression bomb or a lying header is an SQL error
 * naming the blob, nothing is allocated for it), and the zstd dictionary is
 * read once per connection from main.dicts.  A missing blob id is an error,
 * a NULL id gives NULL. */
#define _GNU_SOURCE 1
#ifdef DR_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#else
#include <sqlite3.h>
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/codec.h"
#include "../schema/ident.h"
#include "sqlfuncs.h"

/* JSON's subtype in SQLite's json1: a value so marked is taken as JSON, not
 * as a string, by json_extract, json_object and friends. */
#define JSON_SUBTYPE 74

/* Per connection: the dictionary, loaded on first use. */
typedef struct {
    DrDict *dict;
    int dict_loaded;
} FuncState;

static void state_free(void *p) {
    FuncState *s = p;
    if (!s) return;
    dr_dict_free(s->dict);
    free(s);
}

/* Loads the trace's first dictionary (id > 0); DR_OK when there is none. */
static int load_dict(sqlite3 *db, FuncState *s, DrError *err) {
    if (s->dict_loaded) return DR_OK;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT id, data FROM main.dicts ORDER BY id LIMIT 1", -1, &st,
                                NULL);
    if (rc != SQLITE_OK)
        return dr_error(err, DR_ERR_SQL,
                        "cannot read the dictionaries (%s): is this a dynrec "
                        "trace?",
                        sqlite3_errmsg(db));
    int status = DR_OK;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (!(s->dict = dr_dict_from_row(sqlite3_column_int64(st, 0), sqlite3_column_blob(st, 1),
                                         (size_t)sqlite3_column_bytes(st, 1), err)))
            status = err->code;
    } else if (rc != SQLITE_DONE) {
        status = dr_error(err, DR_ERR_SQL, "cannot read the dictionaries (%s)", sqlite3_errmsg(db));
    }
    rc = sqlite3_finalize(st);
    if (status == DR_OK && rc != SQLITE_OK)
        status = dr_error(err, DR_ERR_SQL, "cannot read the dictionaries (%s)", sqlite3_errmsg(db));
    if (status == DR_OK) s->dict_loaded = 1;
    return status;
}

/* Decodes blob id into a malloc'd NUL-terminated buffer (*out, *len).  On
 * error err names the blob and *out is NULL. */
static int read_blob(sqlite3 *db, FuncState *s, int64_t id, void **out, size_t *len, DrError *err) {
    *out = NULL;
    *len = 0;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT data FROM main.blobs WHERE id = ?1", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return dr_error(err, DR_ERR_SQL, "cannot read blobs (%s): is this a dynrec trace?",
                        sqlite3_errmsg(db));
    int status = DR_OK;
    if ((rc = sqlite3_bind_int64(st, 1, id)) != SQLITE_OK) {
        status = dr_error(err, DR_ERR_SQL, "blob %lld: %s", (long long)id, sqlite3_errstr(rc));
    } else if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const void *data = sqlite3_column_blob(st, 0);
        size_t n = (size_t)sqlite3_column_bytes(st, 0);
        int codec = 0;
        uint64_t raw = 0;
        uint32_t did = 0;
        DrError e2 = {0};
        if (!data) {
            status = dr_error(err, DR_ERR_BLOB, "blob %lld is empty", (long long)id);
        } else {
            if (dr_codec_peek(data, n, &codec, &raw, &did, &e2) == DR_OK &&
                codec == DR_CODEC_ZSTD_DICT)
                status = load_dict(db, s, err);
            if (status == DR_OK &&
                dr_codec_decode(data, n, s->dict, DR_SQL_TEXT_MAX, out, len, &e2) != DR_OK)
                status = dr_error(err, DR_ERR_BLOB, "blob %lld is unreadable (%s)", (long long)id,
                                  e2.msg);
        }
    } else if (rc == SQLITE_DONE) {
        status = dr_error(err, DR_ERR_BLOB, "blob %lld does not exist", (long long)id);
    } else {
        status = dr_error(err, DR_ERR_SQL, "blob %lld: %s", (long long)id, sqlite3_errmsg(db));
    }
    rc = sqlite3_finalize(st);
    if (status == DR_OK && rc != SQLITE_OK)
        status = dr_error(err, DR_ERR_SQL, "blob %lld: %s", (long long)id, sqlite3_errmsg(db));
    if (status != DR_OK) {
        free(*out);
        *out = NULL;
        *len = 0;
    }
    return status;
}

/* Reads the blob named by argv[0] for fn; NULL with the SQL result set
 * (NULL or an error) when there is nothing to return. */
static void *blob_arg(sqlite3_context *ctx, const char *fn, sqlite3_value *arg, size_t *len) {
    int type = sqlite3_value_type(arg);
    if (type == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return NULL;
    }
    if (type != SQLITE_INTEGER) {
        char *m = sqlite3_mprintf("%s: the argument must be a blob id (an integer such as "
                                  "v_graphs.code_blob)",
                                  fn);
        sqlite3_result_error(ctx, m ? m : fn, -1);
        sqlite3_free(m);
        return NULL;
    }
    DrError err = {0};
    void *data = NULL;
    if (read_blob(sqlite3_context_db_handle(ctx), sqlite3_user_data(ctx), sqlite3_value_int64(arg),
                  &data, len, &err) != DR_OK) {
        char *m = sqlite3_mprintf("%s: %s", fn, err.msg);
        sqlite3_result_error(ctx, m ? m : err.msg, -1);
        sqlite3_free(m);
        if (err.code == DR_ERR_NOMEM) sqlite3_result_error_nomem(ctx);
        return NULL;
    }
    if (*len > INT32_MAX) { /* not reached with DR_SQL_TEXT_MAX, but SQLite takes an int */
        free(data);
        sqlite3_result_error_toobig(ctx);
        return NULL;
    }
    return data;
}

/* dynrec_text(blob_id): the payload as text. */
static void fn_text(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    size_t len = 0;
    void *data = blob_arg(ctx, "dynrec_text", argv[0], &len);
    if (data) sqlite3_result_text(ctx, data, (int)len, free);
}

/* dynrec_json(blob_id): the payload as JSON (an error when it is not).
 * Structured-trace blobs whose first line is their metadata (see
 * SCHEMA.md, metadata_in_blob) are valid only line by line: use
 * dynrec_text and substr for those. */
static void fn_json(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    size_t len = 0;
    void *data = blob_arg(ctx, "dynrec_json", argv[0], &len);
    if (!data) return;
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT json_valid(?1)", -1, &st, NULL);
    int valid = 0;
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, data, (int)len, SQLITE_STATIC);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        valid = sqlite3_column_int(st, 0);
        rc = SQLITE_OK;
    }
    int frc = sqlite3_finalize(st);
    if (rc == SQLITE_OK) rc = frc;
    if (rc != SQLITE_OK) {
        free(data);
        char *m = sqlite3_mprintf("dynrec_json: cannot check the JSON (%s)", sqlite3_errmsg(db));
        sqlite3_result_error(ctx, m ? m : "dynrec_json: cannot check the JSON", -1);
        sqlite3_free(m);
        return;
    }
    if (!valid) {
        free(data);
        char *m = sqlite3_mprintf("dynrec_json: blob %lld is not JSON (read it with dynrec_text)",
                                  (long long)sqlite3_value_int64(argv[0]));
        sqlite3_result_error(ctx, m ? m : "dynrec_json: the blob is not JSON", -1);
        sqlite3_free(m);
        return;
    }
    sqlite3_result_text(ctx, data, (int)len, free);
    sqlite3_result_subtype(ctx, JSON_SUBTYPE);
}

/* dynrec_is_library(filename [, dir ...]): 1 when the code of filename is
 * library code, 0 when it is the user's (ident.h, the one rule); each dir
 * (NULL skipped) is a directory that is library too. */
static void fn_is_library(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    const char *dirs[8];
    if (argc < 1 || argc > 1 + (int)(sizeof dirs / sizeof *dirs)) {
        sqlite3_result_error(ctx, "dynrec_is_library(filename [, dir ...]): 1 to 9 arguments", -1);
        return;
    }
    const char *f = (const char *)sqlite3_value_text(argv[0]);
    for (int i = 1; i < argc; i++) dirs[i - 1] = (const char *)sqlite3_value_text(argv[i]);
    sqlite3_result_int(ctx, dr_is_library(f, dirs, (size_t)(argc - 1)));
}

int dr_sqlfuncs_register(sqlite3 *db) {
    int rc0 =
        sqlite3_create_function_v2(db, "dynrec_is_library", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                   NULL, fn_is_library, NULL, NULL, NULL);
    if (rc0 != SQLITE_OK) return rc0;
    FuncState *s = calloc(1, sizeof *s);
    if (!s) return SQLITE_NOMEM;
    /* One state shared by both functions: the destructor runs once, with
     * the last one (dynrec_json is registered second and owns it). */
    int rc =
        sqlite3_create_function_v2(db, "dynrec_text", 1, SQLITE_UTF8, s, fn_text, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        state_free(s);
        return rc;
    }
    /* On failure SQLite calls the destructor itself. */
    return sqlite3_create_function_v2(db, "dynrec_json", 1, SQLITE_UTF8, s, fn_json, NULL, NULL,
                                      state_free);
}

#ifdef DR_SQLITE_EXTENSION
/* The entry point `.load build/dynrec_sqlite` looks for. */
__attribute__((visibility("default"))) int
sqlite3_dynrecsqlite_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
    SQLITE_EXTENSION_INIT2(pApi);
    int rc = dr_sqlfuncs_register(db);
    if (rc != SQLITE_OK && pzErrMsg)
        *pzErrMsg =
            sqlite3_mprintf("dynrec_sqlite: cannot register functions: %s", sqlite3_errstr(rc));
    return rc;
}
#endif
