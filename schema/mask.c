/* mask.c -- the one masking of a trace's volatile text.
 *
 * Two recordings of the same program differ in addresses, object ids,
 * times, pids, temp and install directories; masking replaces those parts
 * so that comparing is string equality.  The recorder masks with it as it
 * writes the `key` column (through _dynrec.mask, so v_canonical agrees with
 * the replayer), and the comparison engine (replayer/model.c) masks every
 * text it reads.  The rules are listed in replayer/COMPARE.md; this file
 * is their only implementation.  For example
 *
 *   ___check_obj_id(G['_140200980950336_c0'], 9404416)
 *       -> ___check_obj_id(G['_#_c#'], #)
 *   V1201 09:38:42.123456 12345 torch/_dynamo/guards.py:2997] [0/1] took 0.25 s
 *       -> <log>] [0/1] took <time>
 *
 * One pass over the text, token by token: a token is masked or copied
 * whole, so "s15" or "x2" never has its digits taken for a number.
 * Masking a masked text changes nothing (tests/test_mask.c checks it on
 * every row; only contrived joins such as "pid:1.py/a.py" break it). */
#define _GNU_SOURCE 1
#include "mask.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A growable output text; `failed` sticks on out of memory. */
typedef struct {
    char *s;
    size_t len, cap;
    int failed;
} Out;

static void put(Out *o, const char *s, size_t n) {
    if (o->failed) return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 64;
        while (cap < o->len + n + 1) cap *= 2;
        char *p = realloc(o->s, cap);
        if (!p) {
            o->failed = 1;
            return;
        }
        o->s = p;
        o->cap = cap;
    }
    memcpy(o->s + o->len, s, n);
    o->len += n;
    o->s[o->len] = 0;
}

static void put_str(Out *o, const char *s) { put(o, s, strlen(s)); }

/* The text built, or NULL (and nothing kept) when out of memory. */
static char *finish(Out *o, size_t *out_len) {
    if (!o->failed && !o->s) put(o, "", 0);
    if (o->failed) {
        free(o->s);
        return NULL;
    }
    if (out_len) *out_len = o->len;
    return o->s;
}

static int is_word(int c) { return isalnum(c) || c == '_'; }
static int path_end(int c) {
    return c == 0 || isspace(c) || c == '\'' || c == '"' || c == ')' || c == '(' || c == ',' ||
           c == ']' || c == '[' || c == '>' || c == '<' || c == '=';
}
static size_t digits(const char *s, size_t i, size_t n) {
    while (i < n && isdigit((unsigned char)s[i])) i++;
    return i;
}

static void mask_path(const DrMaskCtx *ctx, Out *o, const char *s, size_t n) {
    const char *sp = memmem(s, n, "/site-packages/", 15);
    if (!sp) sp = memmem(s, n, "/dist-packages/", 15);
    if (sp) {
        put_str(o, "<site>");
        put(o, sp + 14, n - (size_t)(sp + 14 - s));
        return;
    }
    const char *lp = memmem(s, n, "/lib/python3.", 13);
    if (lp) {
        const char *slash = memchr(lp + 13, '/', n - (size_t)(lp + 13 - s));
        if (slash) {
            put_str(o, "<stdlib>");
            put(o, slash, n - (size_t)(slash - s));
            return;
        }
    }
    /* The root after the library directories: a virtualenv often lives
     * inside the project. */
    const char *roots[2] = {ctx ? ctx->root : NULL, ctx ? ctx->cwd : NULL};
    for (int i = 0; i < 2; i++) {
        size_t rl = roots[i] ? strlen(roots[i]) : 0;
        if (rl > 1 && n > rl && strncmp(s, roots[i], rl) == 0 && s[rl] == '/') {
            put_str(o, "<root>");
            put(o, s + rl, n - rl);
            return;
        }
    }
    /* A temp path names nothing the other run can have. */
    static const char *const tmps[] = {"/tmp/", "/var/tmp/", "/dev/shm/"};
    for (size_t i = 0; i < sizeof tmps / sizeof *tmps; i++) {
        if (n > strlen(tmps[i]) && strncmp(s, tmps[i], strlen(tmps[i])) == 0) {
            put_str(o, "<tmp>");
            return;
        }
    }
    put(o, s, n);
}

char *dr_mask_path(const DrMaskCtx *ctx, const char *s, size_t n, size_t *out_len) {
    Out o = {0};
    mask_path(ctx, &o, s ? s : "", s ? n : 0);
    return finish(&o, out_len);
}

/* The end of a token at s[i] made of path characters that contains a '/'
 * and ends in ".py", or i when there is none. */
static size_t rel_py_path(const char *s, size_t i, size_t n) {
    size_t j = i;
    int slash = 0;
    while (j < n && (is_word((unsigned char)s[j]) || s[j] == '/' || s[j] == '.' || s[j] == '-')) {
        slash |= s[j] == '/';
        j++;
    }
    return slash && j - i > 3 && strncmp(s + j - 3, ".py", 3) == 0 ? j : i;
}

/* The end of torch's log prefix at line start s[i] (TorchLogsFormatter in
 * torch/_logging/_internal.py: "[rank0]:" when distributed, then
 * "V1201 09:38:42.123456 12345 torch/_dynamo/guards.py:2997]"), or i when
 * there is none.  *rank_end: the end of the "[rankN]:" kept. */
static size_t log_prefix(const char *s, size_t i, size_t n, size_t *rank_end) {
    size_t k = i;
    if (n - k > 5 && memcmp(s + k, "[rank", 5) == 0) {
        size_t d = digits(s, k + 5, n);
        if (d > k + 5 && d + 1 < n && s[d] == ']' && s[d + 1] == ':') k = d + 2;
    }
    *rank_end = k;
    /* Level (V, I, W, E, C), then "%m%d %H:%M:%S.%06d pid ". */
    static const char shape[] = "L9999 99:99:99.999999 ";
    if (n - k < sizeof shape - 1) return i;
    for (size_t p = 0; p < sizeof shape - 1; p++) {
        unsigned char c = (unsigned char)s[k + p];
        if (shape[p] == 'L'   ? !c || !strchr("VIWEC", c)
            : shape[p] == '9' ? !isdigit(c)
                              : c != (unsigned char)shape[p])
            return i;
    }
    k += sizeof shape - 1;
    size_t d = digits(s, k, n);
    if (d == k || d >= n || s[d] != ' ') return i;
    /* "file:line]": the file is one path token. */
    size_t e = d + 1;
    while (e < n && !path_end((unsigned char)s[e])) e++;
    if (e >= n || s[e] != ']') return i;
    size_t l = e;
    while (l > d + 1 && isdigit((unsigned char)s[l - 1])) l--;
    if (l == e || l <= d + 2 || s[l - 1] != ':') return i;
    return e + 1;
}

/* The end of the bracketed call arguments that open at s[i] (its '('):
 * the index of the matching ')', with *comma the last ',' at their own
 * depth (0 when none); n when they do not close on this line. */
static size_t call_end(const char *s, size_t i, size_t n, size_t *comma) {
    size_t k;
    int depth = 0;
    char quote = 0;
    *comma = 0;
    for (k = i; k < n; k++) {
        char c = s[k];
        if (quote) {
            if (c == '\\') k++;
            else if (c == quote) quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (--depth == 0) return k;
        } else if (c == ',' && depth == 1) {
            *comma = k;
        } else if (c == '\n') {
            return n;
        }
    }
    return n;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The items of s[from..end), separated by commas at their own depth,
 * each masked, sorted, written to o joined by ", "; 0 (nothing written)
 * when out of memory or, with no_colon, when an item holds a ':' at its
 * depth (a dict's, not a set's, items). */
static int sorted_items(const DrMaskCtx *ctx, Out *o, const char *s, size_t from, size_t end,
                        int no_colon) {
    size_t cap = 16, count = 0;
    char **items = malloc(cap * sizeof *items);
    if (!items) return 0;
    int ok = 1, depth = 0;
    char quote = 0;
    for (size_t p = from; p <= end && ok; p++) {
        char c = p < end ? s[p] : ',';
        if (quote) {
            if (c == '\\') p++;
            else if (c == quote) quote = 0;
            continue;
        }
        if (c == '\'' || c == '"') quote = c;
        else if (c == '(' || c == '[' || c == '{') depth++;
        else if (c == ')' || c == ']' || c == '}') depth--;
        else if (c == ':' && depth == 0 && no_colon) ok = 0;
        else if (c == ',' && depth == 0) {
            size_t a = from;
            while (a < p && s[a] == ' ') a++;
            if (count == cap) {
                char **more = cap < 4096 ? realloc(items, 2 * cap * sizeof *items) : NULL;
                if (!more) {
                    ok = 0;
                    break;
                }
                items = more;
                cap *= 2;
            }
            items[count] = dr_mask(ctx, s + a, p - a, NULL);
            if (!items[count]) ok = 0;
            else count++;
            from = p + 1;
        }
    }
    if (ok) {
        qsort(items, count, sizeof *items, cmp_str);
        for (size_t m = 0; m < count; m++) {
            if (m) put_str(o, ", ");
            put_str(o, items[m]);
        }
    }
    for (size_t m = 0; m < count; m++) free(items[m]);
    free(items);
    return ok;
}

/* open, the items of s[from..end) sorted (sorted_items), close, into o;
 * 0 (nothing written) when sorted_items refuses them or out of memory. */
static int put_sorted(const DrMaskCtx *ctx, Out *o, const char *s, size_t from, size_t end,
                      int no_colon, const char *open, const char *close) {
    Out items = {0};
    int ok = sorted_items(ctx, &items, s, from, end, no_colon) && !items.failed;
    if (ok) {
        put_str(o, open);
        put(o, items.s ? items.s : "", items.len);
        put_str(o, close);
    }
    free(items.s);
    return ok;
}

/* `frozenset({a, b, c})` whose '(' is at s[i]: its items masked and in
 * sorted order, into o; the index after its ')', or 0 (nothing written)
 * when s[i] does not start one on this line.  A frozenset's repr lists its
 * items in hash order, and the hash of a function or a class is its
 * address: the same set prints in another order in another process
 * (Dynamo's EQUALS_MATCH on torch.utils._pytree.BUILTIN_TYPES). */
static size_t frozenset_items(const DrMaskCtx *ctx, Out *o, const char *s, size_t i, size_t n) {
    size_t comma, k = call_end(s, i, n, &comma);
    if (i + 1 >= n || s[i + 1] != '{' || k >= n || s[k - 1] != '}' || k < i + 3) return 0;
    return put_sorted(ctx, o, s, i + 2, k - 1, 0, "frozenset({", "})") ? k + 1 : 0;
}

/* A set display `{a, b, c}` whose '{' is at s[i], compared with "== "
 * (Dynamo's EQUALS_MATCH on a set): its items masked and sorted, as a
 * frozenset's; the index after its '}', or 0 (nothing written) when it is
 * not one on this line (a dict, or empty).  A set of strings lists them in
 * the order of their hashes, which PYTHONHASHSEED's randomness makes new
 * every run. */
static size_t set_items(const DrMaskCtx *ctx, Out *o, const char *s, size_t i, size_t n) {
    size_t comma, k = call_end(s, i, n, &comma);
    if (i < 3 || memcmp(s + i - 3, "== ", 3) != 0 || k >= n || k < i + 2) return 0;
    return put_sorted(ctx, o, s, i + 1, k, 1, "{", "}") ? k + 1 : 0;
}

/* Where `___check_obj_id(...)` at s[i] (its '(') ends with a decimal id
 * argument, that argument's [*at, *end); 0 when it does not. */
static int check_obj_id_arg(const char *s, size_t i, size_t n, size_t *at, size_t *end) {
    size_t comma, k = call_end(s, i, n, &comma);
    if (k >= n || !comma) return 0;
    size_t a = comma + 1;
    while (a < k && s[a] == ' ') a++;
    size_t d = digits(s, a, k);
    if (d == a) return 0;
    size_t e = d;
    while (e < k && s[e] == ' ') e++;
    if (e != k) return 0;
    *at = a;
    *end = d;
    return 1;
}

/* Where `___dict_version(...)` at s[i] (its '(') is compared with a number
 * (`___dict_version(G['x'].__dict__) == 843944`), that number's [*at,
 * *end); 0 when it is not.  Dict versions come from a process-wide
 * counter that every dict change moves, so the number is any run's own. */
static int dict_version_arg(const char *s, size_t i, size_t n, size_t *at, size_t *end) {
    size_t comma, k = call_end(s, i, n, &comma);
    if (k >= n) return 0;
    size_t a = k + 1;
    while (a < n && s[a] == ' ') a++;
    if (a + 2 > n || s[a] != '=' || s[a + 1] != '=') return 0;
    a += 2;
    while (a < n && s[a] == ' ') a++;
    size_t d = digits(s, a, n);
    if (d == a || (d < n && is_word((unsigned char)s[d]))) return 0;
    *at = a;
    *end = d;
    return 1;
}

/* How many of the first n bytes of s are c. */
static size_t strspn_n(const char *s, size_t n, char c) {
    size_t k = 0;
    while (k < n && s[k] == c) k++;
    return k;
}

/* The end of a time at the number s[i..j) ("0.25 s", "12.5ms", "12ms"), or
 * i when it is not one. */
static size_t time_end(const char *s, size_t i, size_t j, size_t n) {
    size_t u = j;
    int decimal = j + 1 < n && s[j] == '.' && isdigit((unsigned char)s[j + 1]);
    if (decimal) {
        u = digits(s, j + 1, n);
        if (u < n && s[u] == ' ') u++;
    }
    size_t ul = u + 1 < n && (s[u] == 'm' || s[u] == 'u') && s[u + 1] == 's' ? 2
                : u < n && s[u] == 's'                                       ? 1
                                                                             : 0;
    /* Not before a '/': "<time>" would start a path there ("2s/tmp/x"). */
    if (!ul || (u + ul < n && (is_word((unsigned char)s[u + ul]) || s[u + ul] == '/'))) return i;
    return u + ul;
}

char *dr_mask(const DrMaskCtx *ctx, const char *s, size_t n, size_t *out_len) {
    Out o = {0};
    if (!s) n = 0;
    size_t id_at = SIZE_MAX, id_end = 0, j;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        int boundary = i == 0 || !is_word((unsigned char)s[i - 1]);
        size_t rank_end;
        if (i == id_at) {
            /* The object id checked by ___check_obj_id, or the dict
             * version ___dict_version is compared with, however short. */
            put_str(&o, "#");
            i = id_end;
        } else if ((i == 0 || s[i - 1] == '\n') && (j = log_prefix(s, i, n, &rank_end)) > i) {
            /* Torch's log prefix in program output: date, time, pid and
             * file:line change from run to run; the message is kept. */
            put(&o, s + i, rank_end - i);
            put_str(&o, "<log>]");
            i = j;
        } else if (c == '<' && n - i > 16 && memcmp(s + i, "<eval_with_key>.", 16) == 0 &&
                   digits(s, i + 16, n) > i + 16) {
            /* The file name torch.fx gives a GraphModule's generated code:
             * its number is a process-wide counter every GraphModule made
             * before moves (Dynamo makes one per compile). */
            put_str(&o, "<eval_with_key>.#");
            i = digits(s, i + 16, n);
        } else if (c == '/' && (i == 0 || path_end((unsigned char)s[i - 1]) || s[i - 1] == ':')) {
            /* An absolute path: its machine-specific prefix replaced. */
            j = i;
            while (j < n && !path_end((unsigned char)s[j]) && s[j] != ':') j++;
            mask_path(ctx, &o, s + i, j - i);
            i = j;
        } else if (boundary && (is_word(c) || c == '.') && (j = rel_py_path(s, i, n)) > i) {
            /* A relative or left-truncated path to a Python file (Dynamo cuts
             * long user locations from the left): only its name is compared. */
            const char *slash = s + i;
            for (size_t k = i; k < j; k++)
                if (s[k] == '/') slash = s + k;
            put_str(&o, ".../");
            put(&o, slash + 1, (size_t)(s + j - slash - 1));
            i = j;
        } else if (c == '{' && (j = set_items(ctx, &o, s, i, n)) > 0) {
            i = j;
        } else if (c == '0' && boundary && i + 2 < n && (s[i + 1] == 'x' || s[i + 1] == 'X') &&
                   isxdigit((unsigned char)s[i + 2])) {
            /* An address. */
            j = i + 2;
            while (j < n && isxdigit((unsigned char)s[j])) j++;
            put_str(&o, "0x?");
            i = j;
        } else if (c == ' ' && i > 0 && s[i - 1] != '\n' && s[i - 1] != ' ' && i + 1 < n &&
                   s[i + 1] == ' ' && (j = i + strspn_n(s + i, n - i, ' ')) < n && s[j] == '#') {
            /* Spaces that align a trailing comment ("x == 'a'      # if x"):
             * Dynamo pads its guards to the longest of the entry, so their
             * number follows the other guards' lengths.  Two, as in
             * "code  # comment"; an indentation (at a line start) stays. */
            put_str(&o, "  ");
            i = j;
        } else if (c == ' ' && n - i > 6 && memcmp(s + i, " at 0x", 6) == 0 &&
                   isxdigit((unsigned char)s[i + 6])) {
            /* "<X object at 0x7f..>", "<function f at 0x..>": an object
             * repr is compared by its class or qualname alone. */
            j = i + 6;
            while (j < n && isxdigit((unsigned char)s[j])) j++;
            if (j < n && s[j] == '>') {
                i = j;
            } else {
                put(&o, s + i, 1);
                i++;
            }
        } else if (isdigit(c) && boundary) {
            j = digits(s, i, n);
            size_t t = time_end(s, i, j, n);
            if (t > i) {
                /* A time: never a decision. */
                put_str(&o, "<time>");
                i = t;
                continue;
            }
            /* Object ids and addresses printed in decimal. */
            if (j - i >= 9 && (j >= n || !is_word((unsigned char)s[j]))) put_str(&o, "#");
            else put(&o, s + i, j - i);
            i = j;
        } else if (is_word(c)) {
            /* A whole word (its digits included: "s15", "x2"): the next
             * token is checked at its own start. */
            j = i + 1;
            while (j < n && is_word((unsigned char)s[j])) j++;
            size_t p = j + 1 < n && s[j] && strchr(" =:", s[j]) ? digits(s, j + 1, n) : j;
            if (j - i == 3 && memcmp(s + i, "pid", 3) == 0 && p > j + 1 &&
                (p >= n || !is_word((unsigned char)s[p]))) {
                /* A process id ("pid 1234", "pid=1234"): new every run. */
                put_str(&o, "pid=?");
                i = p;
                continue;
            }
            if (j - i == 9 && memcmp(s + i, "frozenset", 9) == 0 && j < n && s[j] == '(') {
                size_t after = frozenset_items(ctx, &o, s, j, n);
                if (after) {
                    i = after;
                    continue;
                }
            }
            if (j - i == 15 && memcmp(s + i, "___check_obj_id", 15) == 0 && j < n && s[j] == '(' &&
                (id_at == SIZE_MAX || id_at < i))
                check_obj_id_arg(s, j, n, &id_at, &id_end);
            if (j - i == 15 && memcmp(s + i, "___dict_version", 15) == 0 && j < n && s[j] == '(' &&
                (id_at == SIZE_MAX || id_at < i))
                dict_version_arg(s, j, n, &id_at, &id_end);
            /* Names Dynamo makes with its process-wide counter (unique_id:
             * "__builtins_dict___38", "__resume_at_30_2", "__compiled_fn_5_"
             * and a uuid): the counter moves with every compile before, so
             * the last "_<digits>" of a word that starts with "__" is
             * masked, and a compiled function's uuid with it. */
            if (j - i > 3 && s[i] == '_' && s[i + 1] == '_') {
                static const char cfn[] = "__compiled_fn_";
                size_t e = j;
                if (j - i > sizeof cfn - 1 && memcmp(s + i, cfn, sizeof cfn - 1) == 0 &&
                    digits(s, i + sizeof cfn - 1, j) > i + sizeof cfn - 1) {
                    put_str(&o, "__compiled_fn_#");
                    i = j;
                    continue;
                }
                while (e > i && isdigit((unsigned char)s[e - 1])) e--;
                if (e < j && e - i > 2 && s[e - 1] == '_') {
                    put(&o, s + i, e - i);
                    put_str(&o, "#");
                    i = j;
                    continue;
                }
            }
            /* Dynamo names the globals it installs by object id and the
             * number of output graphs the process made before
             * ("_140200980950336_c0", output_graph.install_global_by_id):
             * a run of 9+ digits after '_' inside a word, up to a '_' or
             * the word's end, is an id; a "_c<digits>" right after it is
             * that count, which moves with every compile before (an
             * in-process recording starts late): "_#_c#".  The same for a
             * text masked before that rule ("_#_c0"). */
            if (i >= 2 && s[i - 1] == '#' && s[i - 2] == '_' && j - i > 2 && s[i] == '_' &&
                s[i + 1] == 'c' && digits(s, i + 2, j) == j) {
                put_str(&o, "_c#");
                i = j;
                continue;
            }
            size_t k = i, from = i;
            while (k < j) {
                size_t d = s[k] == '_' ? digits(s, k + 1, j) : k + 1;
                if (s[k] == '_' && d - (k + 1) >= 9 && (d == j || s[d] == '_')) {
                    put(&o, s + from, k + 1 - from);
                    put_str(&o, "#");
                    from = d;
                    size_t ce =
                        d + 2 < j && s[d] == '_' && s[d + 1] == 'c' ? digits(s, d + 2, j) : d;
                    if (ce > d + 2 && (ce == j || s[ce] == '_')) {
                        put_str(&o, "_c#");
                        from = d = ce;
                    }
                }
                k = d > k + 1 ? d : k + 1;
            }
            put(&o, s + from, j - from);
            i = j;
        } else {
            put(&o, s + i, 1);
            i++;
        }
    }
    return finish(&o, out_len);
}
