/* sign.c -- the trace signature (sign.h): SHA-256, HMAC, the per-user key
 * and the digest of what a trace would make dynrec execute. */
#define _GNU_SOURCE 1
#include "sign.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- SHA-256 ---------------------------------------------------------------- */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(DrSha256 *s, const uint8_t *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5],
             g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 =
            h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
    s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

void dr_sha256_init(DrSha256 *s) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->len = 0;
    s->n = 0;
}

void dr_sha256_add(DrSha256 *s, const void *data, size_t n) {
    const uint8_t *p = data;
    s->len += n;
    while (n) {
        size_t k = 64 - s->n < n ? 64 - s->n : n;
        memcpy(s->buf + s->n, p, k);
        s->n += k, p += k, n -= k;
        if (s->n == 64) {
            sha_block(s, s->buf);
            s->n = 0;
        }
    }
}

void dr_sha256_done(DrSha256 *s, uint8_t out[32]) {
    uint64_t bits = s->len * 8;
    uint8_t pad = 0x80, zero = 0;
    dr_sha256_add(s, &pad, 1);
    while (s->n != 56) dr_sha256_add(s, &zero, 1);
    uint8_t l[8];
    for (int i = 0; i < 8; i++) l[i] = (uint8_t)(bits >> (56 - 8 * i));
    dr_sha256_add(s, l, 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

/* HMAC over a message given as a running hash: the inner hash is started
 * by hmac_begin and finished by hmac_end. */
static void hmac_begin(DrSha256 *inner, const uint8_t *key, size_t keylen, uint8_t k0[64]) {
    memset(k0, 0, 64);
    if (keylen > 64) {
        DrSha256 s;
        dr_sha256_init(&s);
        dr_sha256_add(&s, key, keylen);
        dr_sha256_done(&s, k0);
    } else {
        memcpy(k0, key, keylen);
    }
    uint8_t ipad[64];
    for (int i = 0; i < 64; i++) ipad[i] = k0[i] ^ 0x36;
    dr_sha256_init(inner);
    dr_sha256_add(inner, ipad, 64);
}

static void hmac_end(DrSha256 *inner, const uint8_t k0[64], uint8_t out[32]) {
    uint8_t ih[32], opad[64];
    dr_sha256_done(inner, ih);
    for (int i = 0; i < 64; i++) opad[i] = k0[i] ^ 0x5c;
    DrSha256 o;
    dr_sha256_init(&o);
    dr_sha256_add(&o, opad, 64);
    dr_sha256_add(&o, ih, 32);
    dr_sha256_done(&o, out);
}

void dr_hmac_sha256(const uint8_t *key, size_t keylen, const uint8_t *msg, size_t n,
                    uint8_t out[32]) {
    DrSha256 s;
    uint8_t k0[64];
    hmac_begin(&s, key, keylen, k0);
    dr_sha256_add(&s, msg, n);
    hmac_end(&s, k0, out);
}

/* ---- the key ------------------------------------------------------------------ */

#define KEY_LEN 32

int dr_sign_key_dir(char *out, size_t n) {
    const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    int k;
    if (x && x[0] == '/') k = snprintf(out, n, "%s/dynrec", x);
    else if (home && home[0] == '/') k = snprintf(out, n, "%s/.local/share/dynrec", home);
    else return -1;
    return k > 0 && (size_t)k < n ? 0 : -1;
}

/* mkdir -p of dir, the last component 0700. */
static int make_dirs(const char *dir) {
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
            *s = '/';
        }
    return mkdir(p, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

/* Reads the key (create: makes one when there is none).  1 with key[]
 * filled, 0 when there is no usable key. */
static int load_key(uint8_t key[KEY_LEN], int create) {
    char dir[4000], path[4100];
    if (dr_sign_key_dir(dir, sizeof dir) != 0) return 0;
    snprintf(path, sizeof path, "%s/key", dir);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
        uint8_t fresh[KEY_LEN];
        if (make_dirs(dir) != 0 || getrandom(fresh, sizeof fresh, 0) != (ssize_t)sizeof fresh)
            return 0;
        /* Written under a private name and linked into place: two runs
         * starting at once agree on one key. */
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s/key.%ld", dir, (long)getpid());
        int w = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (w < 0) return 0;
        int ok = write(w, fresh, sizeof fresh) == (ssize_t)sizeof fresh && fsync(w) == 0;
        ok = close(w) == 0 && ok;
        if (ok && link(tmp, path) != 0 && errno != EEXIST) ok = 0;
        unlink(tmp);
        if (!ok) return 0;
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) return 0;
    struct stat sb;
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
             (sb.st_mode & 077) == 0 && sb.st_size == KEY_LEN && read(fd, key, KEY_LEN) == KEY_LEN;
    close(fd);
    return ok;
}

/* ---- the digest ----------------------------------------------------------------- */

/* What a re-run executes (meta), what a replay rebuilds and runs (sources,
 * captures, value nodes) and what decodes their blobs (dictionaries).
 * Tables a version lacks are skipped (value_nodes came with version 2). */
static const char *const SIGNED[] = {
    "SELECT key, value FROM meta WHERE key IN ('argv', 'command', 'script', 'module', 'cwd',"
    " 'python_executable', 'hash_seed', 'seed.random', 'seed.numpy', 'rerun_of', 'replay_of')"
    " OR key LIKE 'env.%' ORDER BY key",
    "SELECT id, data FROM dicts ORDER BY id",
    "SELECT p.text, r.text, f.size, b.data FROM files f LEFT JOIN strings p ON p.id = f.path_id"
    " LEFT JOIN strings r ON r.id = f.role_id LEFT JOIN blobs b ON b.id = f.blob_id"
    " ORDER BY f.id",
    "SELECT e.seq, e.num, c.text, d.text, b.data FROM events e"
    " LEFT JOIN strings c ON c.id = e.compile_id LEFT JOIN strings d ON d.id = e.data_id"
    " LEFT JOIN blobs b ON b.id = e.blob_id"
    " WHERE e.kind_id = (SELECT id FROM strings WHERE text = 'capture') ORDER BY e.seq",
    "SELECT v.capture, v.node, k.text, y.text, v.value, b.data FROM value_nodes v"
    " LEFT JOIN strings k ON k.id = v.kind_id LEFT JOIN strings y ON y.id = v.type_id"
    " LEFT JOIN blobs b ON b.id = v.blob_id ORDER BY v.capture, v.node",
};

static void add_len(DrSha256 *s, uint8_t tag, uint64_t n) {
    uint8_t b[9] = {tag};
    for (int i = 0; i < 8; i++) b[1 + i] = (uint8_t)(n >> (56 - 8 * i));
    dr_sha256_add(s, b, sizeof b);
}

/* Feeds every signed row into s: each value as its type, its length and
 * its bytes, so no two row sets feed the same bytes.  0, or -1. */
static int digest(sqlite3 *db, DrSha256 *s) {
    static const char tag[] = "dynrec signature v1";
    dr_sha256_add(s, tag, sizeof tag);
    for (size_t q = 0; q < sizeof SIGNED / sizeof *SIGNED; q++) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(db, SIGNED[q], -1, &st, NULL);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(st);
            /* A table this version lacks; anything else is a failure. */
            if (strstr(sqlite3_errmsg(db), "no such table")) {
                add_len(s, 'T', q);
                continue;
            }
            return -1;
        }
        add_len(s, 'Q', q);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int nc = sqlite3_column_count(st);
            add_len(s, 'R', (uint64_t)nc);
            for (int c = 0; c < nc; c++) {
                int ty = sqlite3_column_type(st, c);
                if (ty == SQLITE_NULL) {
                    add_len(s, 'N', 0);
                } else if (ty == SQLITE_INTEGER) {
                    add_len(s, 'I', (uint64_t)sqlite3_column_int64(st, c));
                } else {
                    const void *p = ty == SQLITE_BLOB ? sqlite3_column_blob(st, c)
                                                      : (const void *)sqlite3_column_text(st, c);
                    uint64_t n = (uint64_t)sqlite3_column_bytes(st, c);
                    add_len(s, ty == SQLITE_BLOB ? 'B' : 'S', n);
                    if (p && n) dr_sha256_add(s, p, (size_t)n);
                }
            }
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return -1;
    }
    return 0;
}

static void hex(const uint8_t *b, size_t n, char *out) {
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) out[2 * i] = d[b[i] >> 4], out[2 * i + 1] = d[b[i] & 15];
    out[2 * n] = 0;
}

static int compute(DrTrace *t, const uint8_t key[KEY_LEN], char out[3 + 65]) {
    DrSha256 s;
    uint8_t k0[64], mac[32];
    hmac_begin(&s, key, KEY_LEN, k0);
    if (digest(dr_trace_sqlite(t), &s) != 0) return -1;
    hmac_end(&s, k0, mac);
    memcpy(out, "v1:", 3);
    hex(mac, sizeof mac, out + 3);
    return 0;
}

int dr_trace_sign(DrTrace *t, DrError *err) {
    uint8_t key[KEY_LEN];
    if (!load_key(key, 1)) return DR_OK;
    char sig[3 + 65];
    int rc = compute(t, key, sig);
    memset(key, 0, sizeof key);
    if (rc != 0)
        return dr_error(err, DR_ERR_SQL, "%s: cannot sign the trace: %s", dr_trace_path(t),
                        sqlite3_errmsg(dr_trace_sqlite(t)));
    return dr_trace_set_meta(t, "signature", sig, err);
}

DrSigState dr_trace_signature(DrTrace *t) {
    char *stored = NULL;
    if (dr_trace_get_meta(t, "signature", &stored, NULL) != DR_OK || !stored) {
        free(stored);
        return DR_SIG_UNSIGNED;
    }
    uint8_t key[KEY_LEN];
    DrSigState st = DR_SIG_NOKEY;
    if (load_key(key, 0)) {
        char sig[3 + 65];
        st = DR_SIG_FOREIGN;
        if (compute(t, key, sig) == 0 && strlen(stored) == strlen(sig)) {
            /* Constant time: the comparison says nothing of where it fails. */
            unsigned char diff = 0;
            for (size_t i = 0; sig[i]; i++) diff |= (unsigned char)(sig[i] ^ stored[i]);
            if (!diff) st = DR_SIG_OWN;
        }
        memset(key, 0, sizeof key);
    }
    free(stored);
    return st;
}

const char *dr_sig_text(DrSigState s) {
    switch (s) {
    case DR_SIG_OWN: return "recorded here by you";
    case DR_SIG_FOREIGN: return "foreign (not signed by your key, or changed since)";
    case DR_SIG_UNSIGNED: return "foreign (unsigned)";
    case DR_SIG_NOKEY: return "foreign (you have no dynrec key to check it)";
    }
    return "foreign";
}
