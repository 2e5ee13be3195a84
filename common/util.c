/* util.c -- the small containers shared by the replayer, the CLI and pack
 * (see util.h). */
#define _GNU_SOURCE 1
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct DrArenaChunk {
    DrArenaChunk *next;
    size_t used, cap;
    char data[];
};

char *dr_arena_strndup(DrArena *a, const char *s, size_t n) {
    DrArenaChunk *c = a->head;
    if (!c || c->cap - c->used < n + 1) {
        size_t cap = n + 1 > 65536 ? n + 1 : 65536;
        DrArenaChunk *nc = malloc(sizeof *nc + cap);
        if (!nc) return NULL;
        nc->used = 0;
        nc->cap = cap;
        /* A big string gets a chunk of its own behind the current one, so
         * the current chunk's free space is not wasted. */
        if (c && cap > 65536) {
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            a->head = nc;
        }
        c = nc;
    }
    char *p = c->data + c->used;
    if (n) memcpy(p, s, n);
    p[n] = 0;
    c->used += n + 1;
    return p;
}

char *dr_arena_strdup(DrArena *a, const char *s) {
    if (!s) s = "";
    return dr_arena_strndup(a, s, strlen(s));
}

void dr_arena_free(DrArena *a) {
    for (DrArenaChunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    a->head = NULL;
}

int dr_vec_push(DrStrVec *v, char *s) {
    if (!s) return -1;
    if (v->n == v->cap) {
        long ncap = v->cap ? v->cap * 2 : 8;
        char **nv = realloc(v->v, (size_t)ncap * sizeof *nv);
        if (!nv) return -1;
        v->v = nv;
        v->cap = ncap;
    }
    v->v[v->n++] = s;
    return 0;
}

void dr_vec_free(DrStrVec *v) {
    free(v->v);
    v->v = NULL;
    v->n = v->cap = 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void dr_vec_sort(DrStrVec *v) {
    if (v->n > 1) qsort(v->v, (size_t)v->n, sizeof *v->v, cmp_str);
}

uint64_t dr_hash64(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

long dr_map_get(const DrMap *m, const char *key) {
    if (!m->cap) return -1;
    size_t j = dr_hash64(key, strlen(key)) & (m->cap - 1);
    for (; m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (strcmp(m->keys[j], key) == 0) return m->vals[j];
    return -1;
}

static int map_grow(DrMap *m) {
    size_t ncap = m->cap ? m->cap * 2 : 64;
    char **nk = calloc(ncap, sizeof *nk);
    long *nv = calloc(ncap, sizeof *nv);
    if (!nk || !nv) {
        free(nk);
        free(nv);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = dr_hash64(m->keys[i], strlen(m->keys[i])) & (ncap - 1);
        while (nk[j]) j = (j + 1) & (ncap - 1);
        nk[j] = m->keys[i];
        nv[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
    return 0;
}

int dr_map_put(DrMap *m, const char *key, long val) {
    if ((m->n + 1) * 2 > m->cap && map_grow(m) != 0) return -1;
    size_t j = dr_hash64(key, strlen(key)) & (m->cap - 1);
    for (; m->keys[j]; j = (j + 1) & (m->cap - 1)) {
        if (strcmp(m->keys[j], key) == 0) {
            m->vals[j] = val;
            return 0;
        }
    }
    char *k = dr_arena_strdup(&m->arena, key);
    if (!k) return -1;
    m->keys[j] = k;
    m->vals[j] = val;
    m->n++;
    return 0;
}

void dr_map_free(DrMap *m) {
    free(m->keys);
    free(m->vals);
    dr_arena_free(&m->arena);
    memset(m, 0, sizeof *m);
}

void dr_buf_add(DrBuf *b, const char *s, size_t n) {
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap < b->len + n + 1) ncap *= 2;
        char *ns = realloc(b->s, ncap);
        if (!ns) {
            b->failed = 1;
            return;
        }
        b->s = ns;
        b->cap = ncap;
    }
    if (n) memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void dr_buf_puts(DrBuf *b, const char *s) { dr_buf_add(b, s ? s : "", strlen(s ? s : "")); }

void dr_buf_printf(DrBuf *b, const char *fmt, ...) {
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        dr_buf_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    dr_buf_add(b, big, (size_t)n);
    free(big);
}

void dr_buf_free(DrBuf *b) {
    free(b->s);
    memset(b, 0, sizeof *b);
}

char *dr_path_normalize(DrArena *a, const char *base, const char *path) {
    DrBuf in = {0};
    if (path[0] != '/' && base) {
        dr_buf_puts(&in, base);
        dr_buf_puts(&in, "/");
    }
    dr_buf_puts(&in, path);
    if (in.failed) return NULL;
    size_t n = in.len, w = 0;
    char *s = in.s;
    char *out = malloc(n + 2);
    if (!out) {
        dr_buf_free(&in);
        return NULL;
    }
    for (size_t i = 0; i < n;) {
        while (i < n && s[i] == '/') i++;
        size_t j = i;
        while (j < n && s[j] != '/') j++;
        size_t len = j - i;
        if (len == 0 || (len == 1 && s[i] == '.')) {
            /* nothing */
        } else if (len == 2 && s[i] == '.' && s[i + 1] == '.') {
            while (w > 0 && out[w - 1] != '/') w--;
            if (w > 0) w--;
        } else {
            out[w++] = '/';
            memcpy(out + w, s + i, len);
            w += len;
        }
        i = j;
    }
    if (w == 0) out[w++] = '/';
    char *res = dr_arena_strndup(a, out, w);
    free(out);
    dr_buf_free(&in);
    return res;
}
