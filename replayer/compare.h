/* compare.h -- the comparison engine: Dynamo's decisions in two traces.
 *
 * One engine for every command that compares (diff, rerun, and later replay
 * and the viewer's diff screen).  It reads a trace only through schema/,
 * keeps its decisions in memory (DrModel), and compares two models by the
 * rules in replayer/COMPARE.md: frames matched by (file relative to the
 * run's root, qualname, firstlineno), compiles by order within a frame (per
 * thread name when several threads compiled it), and per compile the guard
 * set, guard failures, graph breaks, graphs, speculation steps, side
 * effects, errors and config changes; then the exit status and the config
 * at start.  Timings, addresses, object ids and thread ids are never
 * compared.
 *
 *   DrModel *a = dr_model_load(ta, &err), *b = dr_model_load(tb, &err);
 *   DrDiff *d = dr_compare(a, b, &opts, &err);
 *   dr_diff_print(d, stdout, 0);          -- or 1 for JSON
 *   int same = dr_diff_identical(d);
 *   dr_diff_free(d); dr_model_free(b); dr_model_free(a);
 *
 * Everything read from a trace is untrusted: text is masked and copied,
 * numbers are parsed with bounds, and output goes through the same
 * sanitising as `dynrec show`.  Nothing here executes anything. */
#ifndef DR_COMPARE_H
#define DR_COMPARE_H

#include <stdio.h>

#include "../common/util.h"
#include "../schema/error.h"
#include "../schema/trace.h"

/* The categories compared.  Adding one: add its name to cat_names[] in
 * compare.c and its rule to replayer/COMPARE.md. */
typedef enum {
    DR_CAT_FRAMES,         /* frames present, callbacks, cache hits, compiles per frame */
    DR_CAT_COMPILES,       /* compiles present; outcome, attempts, graphs, recompile */
    DR_CAT_GUARDS,         /* each cache entry's guard set */
    DR_CAT_GUARD_FAILURES, /* which older entry failed on a recompile, and why */
    DR_CAT_GRAPH_BREAKS,   /* type, location, reason */
    DR_CAT_GRAPHS,         /* backend, node count, canonical FX code */
    DR_CAT_SPECULATION,    /* checkpoints, restarts, rollbacks, merges */
    DR_CAT_SIDE_EFFECTS,   /* applied and dropped */
    DR_CAT_ERRORS,         /* type, masked message, suppressed or raised */
    DR_CAT_CONFIG,         /* Dynamo config at start and its changes */
    DR_CAT_EXIT,           /* the program's exit status */
    DR_CAT_OUTPUT,         /* what the program wrote to stdout and stderr (masked) */
    DR_CAT__N
} DrCategory;

/* "guards", "graph_breaks", ...; NULL for an unknown number. */
const char *dr_category_name(int cat);
/* The category named name, or -1. */
int dr_category_parse(const char *name);

typedef struct DrModel DrModel;
typedef struct DrDiff DrDiff;

/* Reads the decisions of an open trace.  Returns NULL with err filled
 * (DR_ERR_CORRUPT, DR_ERR_NOMEM, ...).  The trace must stay open while the
 * model is used (sources are read from it when a report needs a line). */
DrModel *dr_model_load(DrTrace *t, DrError *err);
void dr_model_free(DrModel *m);

/* How much a model holds, for "identical: 3 frames, 7 compiles, ...". */
typedef struct {
    long frames, compiles, guards, guard_failures, graph_breaks, graphs, errors;
} DrModelCounts;
void dr_model_counts(const DrModel *m, DrModelCounts *out);

typedef struct {
    unsigned ignore;               /* bit (1u << DR_CAT_x) set: category not compared */
    int context;                   /* decisions shown before the first divergence */
    const char *label_a, *label_b; /* how the report names the two sides */
    /* b replays a (dynrec replay): only frames Dynamo compiled are compared,
     * and their compiles, not callbacks or cache hits (a replay hands Dynamo
     * the compiles only). */
    int replay;
    /* Frames left out: "file\x1fqualname\x1fline" (dr_frame_key) in every
     * epoch, that key + "\x1e" + N in epoch N only (the compiles after the
     * Nth torch._dynamo.reset()). */
    const char *const *skip_frames;
    long nskip;
    long max_compiles; /* > 0: compare only the first N compiles of each frame */
    /* Config keys b (a replay) does not set from the trace (not decisions,
     * or unsafe to set): not compared, and named in a note. */
    const char *const *config_unset;
    long nconfig_unset;
} DrCompareOptions;

/* The skip_frames entry of the frame keyed key (dr_frame_key) in epoch
 * `epoch` only, in a's arena; NULL when out of memory. */
char *dr_skip_key(DrArena *a, const char *key, long epoch);
/* 1 when o leaves out the compiles of epoch `epoch` of the frame keyed key. */
int dr_compile_left_out(const DrCompareOptions *o, const char *key, long epoch);

/* Compares two models.  Returns NULL only when out of memory. */
DrDiff *dr_compare(const DrModel *a, const DrModel *b, const DrCompareOptions *o, DrError *err);
void dr_diff_free(DrDiff *d);

/* 1 when no compared category differs. */
int dr_diff_identical(const DrDiff *d);
/* Of the compiles of a that were compared (*total), how many have no
 * divergence (*reproduced; -1 when out of memory). */
void dr_diff_reproduced(const DrDiff *d, long *reproduced, long *total);
/* One line per compared compile of a, in trace order (at most max): whether
 * it was reproduced, its outcome and how many guards, guard failures, graph
 * breaks, graphs, speculation steps, side effects (applied, dropped) and
 * errors it has.  Returns 0, or -1 on a write error or out of memory. */
int dr_diff_print_compiles(const DrDiff *d, FILE *out, long max);
/* Number of divergences in category cat. */
long dr_diff_count(const DrDiff *d, int cat);

/* Writes the report: for people (one line when identical; else the first
 * divergence with both sides, its frame and compile, the source line and,
 * for guards, the added and removed ones, then a summary per category,
 * then the notes: what was not compared and why, such as the config keys
 * that only one of two torch versions has) or, with json, the same as one
 * JSON object (`notes`, `config_keys_not_compared`).  Returns 0, or -1 on a
 * write error or out of memory. */
int dr_diff_print(const DrDiff *d, FILE *out, int json);

/* The first divergence of a report, for commands that name it in a line
 * of their own (`dynrec ranks`, `dynrec diff DIR DIR`).  The strings are
 * borrowed from the diff and its models and are trace text: print them
 * with dr_text_safe or dr_json_string. */
typedef struct {
    const char *category;        /* "guards", "compiles", ... */
    const char *what;            /* one line, as the report's first */
    const char *qualname, *file; /* its frame; NULL when not a frame's */
    long firstlineno;
    const char *compile_a, *compile_b; /* compile ids; NULL on a side without one */
    const char *side_a, *side_b;       /* what each side has there; NULL for nothing */
} DrDivergence;

/* Fills *out with d's first divergence (the one dr_diff_print shows
 * first): 1, or 0 with *out zeroed when d is identical. */
int dr_diff_first(const DrDiff *d, DrDivergence *out);

/* Writes d's first divergence as the JSON object of the report's
 * `first_divergence` (or null when identical).  Returns 0, or -1 on a
 * write error. */
int dr_diff_print_first_json(const DrDiff *d, FILE *out);

/* The collective operations that m's graphs call, in the trace's order of
 * compiles, then graph and code order: fn(arg, op, cid) for each, op the
 * operation's plain name ("all_reduce", "wait_tensor") and cid the
 * compile's id.  A collective is a call of an operator of a c10d
 * namespace (torch.ops._c10d_functional.all_reduce) or of a collective of
 * torch.distributed (torch.distributed.all_reduce); comment lines are not
 * read.  Stops when fn returns non-zero.  Returns how many were found, or
 * -1 when fn stopped it. */
long dr_model_collectives(const DrModel *m, int (*fn)(void *arg, const char *op, const char *cid),
                          void *arg);

/* The JSON report's fields without the surrounding braces (`"identical":
 * ..., "a": ..., ...`), for callers such as rerun that add fields of their
 * own to the same object.  Returns 0, or -1 on a write error. */
int dr_diff_print_json_fields(const DrDiff *d, FILE *out);

#endif
