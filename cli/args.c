/* args.c -- the one option parser, and the messages and exit statuses every
 * command shares (cli.h). */
#define _GNU_SOURCE 1
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../replayer/compare.h"

int dr_cli_exit_of(int status) {
    switch (status) {
    case DR_OK: return DR_EX_OK;
    case DR_ERR_ARG: return DR_EX_USAGE;
    case DR_ERR_NOMEM: return DR_EX_SOFTWARE;
    case DR_ERR_IO:
    case DR_ERR_FULL: return DR_EX_CANTCREAT;
    default: return DR_EX_DATAERR; /* the trace: missing, not one, too new, corrupt */
    }
}

int dr_cli_usage(const DrCommand *cmd, const char *fmt, ...) {
    const char *name = cmd ? cmd->name : NULL;
    fprintf(stderr, "dynrec%s%s: ", name ? " " : "", name ? name : "");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'dynrec %s%s--help'.\n", name ? name : "", name ? " " : "");
    return DR_EX_USAGE;
}

int dr_cli_fail(const DrCommand *cmd, const DrError *err, int status) {
    fprintf(stderr, "dynrec %s: %s\n", cmd->name, err->msg[0] ? err->msg : dr_strerror(err->code));
    return status;
}

DrTrace *dr_cli_open(const DrCommand *cmd, const char *path) {
    DrError err = {0};
    DrTrace *t = dr_trace_open(path, &err);
    if (!t) dr_cli_fail(cmd, &err, DR_EX_DATAERR);
    return t;
}

int dr_cli_flush(void) { return fflush(stdout) == 0 ? DR_EX_OK : DR_EX_FAIL; }

/* "4096", "4K", "1M" -> bytes; -1 when not a size of at most 1G. */
static int64_t parse_size(const char *s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0) return -1;
    long long mul = 1;
    if (*end == 'K' || *end == 'k') mul = 1024, end++;
    else if (*end == 'M' || *end == 'm') mul = 1024 * 1024, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end || v > (1ll << 30) / mul) return -1;
    return (int64_t)(v * mul);
}

/* "guards,graph_breaks" -> a category mask; -1 with *bad the unknown name. */
static long parse_ignore(const char *list, char *bad, size_t badlen) {
    unsigned mask = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), p);
        int cat = n ? dr_category_parse(name) : -1;
        if (cat < 0) {
            snprintf(bad, badlen, "%s", name);
            return -1;
        }
        mask |= 1u << cat;
        p += n;
        if (*p == ',') p++;
    }
    return (long)mask;
}

static const DrOpt *find_opt(const DrOpt *opts, const char *arg, const char **inline_value) {
    *inline_value = NULL;
    for (const DrOpt *o = opts; o && o->name; o++) {
        size_t n = strlen(o->name);
        if (strncmp(arg, o->name, n) != 0) continue;
        if (arg[n] == 0) return o;
        if (arg[n] == '=' && o->kind != DR_OPT_FLAG && arg[1] == '-') {
            *inline_value = arg + n + 1;
            return o;
        }
    }
    return NULL;
}

/* One option's value into opts / a; 0, or the usage error's status. */
static int take_value(const DrCommand *cmd, const DrOpt *o, const char *v, void *opts, DrArgs *a) {
    char *field = (char *)opts + o->off;
    switch (o->kind) {
    case DR_OPT_FLAG: *(int *)field = 1; return 0;
    case DR_OPT_STR:
    case DR_OPT_MODULE:
        if (!v || !v[0]) return dr_cli_usage(cmd, "%s needs %s", o->name, o->need);
        *(const char **)field = v;
        return 0;
    case DR_OPT_INT: {
        char *end;
        long n = v ? strtol(v, &end, 10) : 0;
        if (!v || !v[0] || *end || n < o->min || n > o->max)
            return dr_cli_usage(cmd, "%s needs %s from %ld to %ld%s%s", o->name, o->need, o->min,
                                o->max, v ? ", not " : "", v ? v : "");
        *(int *)field = (int)n;
        return 0;
    }
    case DR_OPT_SIZE: {
        int64_t n = v ? parse_size(v) : -1;
        if (n < o->min)
            return dr_cli_usage(cmd, "%s needs %s such as 500K or 2M (at most 1G)%s%s", o->name,
                                o->need, v ? ", not " : "", v ? v : "");
        *(int64_t *)field = n;
        return 0;
    }
    case DR_OPT_SET:
        if (!v || !strchr(v, '=') || v[0] == '=')
            return dr_cli_usage(cmd, "--set needs NAME=VALUE");
        if (a->nset == DR_CLI_MAX_SET)
            return dr_cli_usage(cmd, "too many --set options (at most %d)", DR_CLI_MAX_SET);
        a->set[a->nset++] = (char *)v;
        return 0;
    case DR_OPT_IGNORE: {
        char bad[64] = "";
        long m = v ? parse_ignore(v, bad, sizeof bad) : -1;
        if (!v) return dr_cli_usage(cmd, "--ignore needs a list of categories");
        if (m < 0)
            return dr_cli_usage(cmd,
                                "unknown category '%s' for --ignore (one of frames, "
                                "compiles, guards, guard_failures, graph_breaks, graphs, "
                                "speculation, side_effects, errors, config, exit_status, "
                                "output)",
                                bad);
        a->ignore |= (unsigned)m;
        return 0;
    }
    }
    return dr_cli_usage(cmd, "%s: no such kind of option", o->name);
}

int dr_cli_parse(const DrCommand *cmd, const DrArgSpec *spec, int argc, char **argv, void *opts,
                 DrArgs *a) {
    memset(a, 0, sizeof *a);
    a->rest = argc;
    int dashdash = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        int is_opt = !dashdash && arg[0] == '-' && arg[1];
        if (is_opt && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)) {
            fputs(cmd->usage, stdout);
            return DR_CLI_HELP;
        }
        if (is_opt && strcmp(arg, "--") == 0) {
            dashdash = 1;
            continue;
        }
        const char *inl = NULL;
        const DrOpt *o = is_opt ? find_opt(spec->opts, arg, &inl) : NULL;
        if (is_opt && !o && !(spec->dash_operands && a->noperands > 0))
            return dr_cli_usage(cmd, "unknown option %s", arg);
        if (o) {
            const char *v = inl;
            if (o->kind != DR_OPT_FLAG && !v) v = ++i < argc ? argv[i] : NULL;
            int rc = take_value(cmd, o, v, opts, a);
            if (rc) return rc;
            if (o->kind == DR_OPT_MODULE) {
                a->module = 1;
                a->rest = i + 1;
                break;
            }
            continue;
        }
        if (a->noperands == spec->max_operands)
            return dr_cli_usage(
                cmd, spec->extra ? spec->extra : "one trace at a time (extra argument %s)", arg);
        if (spec->max_operands < 0) {
            /* The options before it were read already: their slots of argv
             * are free (their values are pointers into the strings). */
            argv[a->noperands] = argv[i];
            a->operands = argv;
        }
        if (a->noperands < 2) a->operand[a->noperands] = arg;
        a->noperands++;
        if (spec->operands_end) {
            a->rest = i + 1;
            break;
        }
    }
    if (a->noperands < spec->min_operands && !a->module)
        return dr_cli_usage(cmd, "%s", spec->missing ? spec->missing : "no trace given");
    return 0;
}
