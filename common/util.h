/* util.h -- small containers shared by the replayer, the CLI and pack: a
 * string arena, string vectors, a string-keyed hash map and a growable text
 * buffer.
 *
 * None of them prints or exits; every allocation failure is reported to the
 * caller (NULL or -1) and the containers stay valid to free. */
#ifndef DR_COMMON_UTIL_H
#define DR_COMMON_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Bump allocator for strings that live as long as their owner. */
typedef struct DrArenaChunk DrArenaChunk;
typedef struct {
    DrArenaChunk *head;
} DrArena;
/* A copy of n bytes of s plus a NUL, or NULL when out of memory. */
char *dr_arena_strndup(DrArena *a, const char *s, size_t n);
char *dr_arena_strdup(DrArena *a, const char *s); /* NULL s gives "" */
void dr_arena_free(DrArena *a);

/* A vector of borrowed strings (owned by an arena). */
typedef struct {
    char **v;
    long n, cap;
} DrStrVec;
int dr_vec_push(DrStrVec *v, char *s); /* 0, or -1 when out of memory */
void dr_vec_free(DrStrVec *v);
void dr_vec_sort(DrStrVec *v);

/* Open-addressing map from string keys (copied into the map's arena) to
 * long values. */
typedef struct {
    char **keys;
    long *vals;
    size_t cap, n;
    DrArena arena;
} DrMap;
/* The value stored for key, or -1. */
long dr_map_get(const DrMap *m, const char *key);
/* Sets key to val; 0, or -1 when out of memory. */
int dr_map_put(DrMap *m, const char *key, long val);
void dr_map_free(DrMap *m);

/* A growable NUL-terminated text buffer; `failed` sticks on out of memory. */
typedef struct {
    char *s;
    size_t len, cap;
    int failed;
} DrBuf;
void dr_buf_add(DrBuf *b, const char *s, size_t n);
void dr_buf_puts(DrBuf *b, const char *s);
void dr_buf_printf(DrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dr_buf_free(DrBuf *b);

/* path made absolute against base (when relative) and lexically
 * normalised: "." and ".." resolved, repeated slashes dropped; ".." never
 * climbs above "/".  NULL when out of memory. */
char *dr_path_normalize(DrArena *a, const char *base, const char *path);

uint64_t dr_hash64(const char *s, size_t n);

#endif
