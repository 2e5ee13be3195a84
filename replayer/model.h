/* model.h -- the in-memory decisions of one trace (model.c), shared by the
 * comparison (compare.c).  Callers outside replayer/ use compare.h only. */
#ifndef DR_MODEL_H
#define DR_MODEL_H

#include <stdint.h>

#include "compare.h"
#include "../common/util.h"

/* One compile of a frame, with its decisions as canonical (masked) lines
 * per category; guards and guard failures are sorted (compared as sets),
 * the rest keep their recorded order. */
typedef struct {
    char *cid;    /* the compile id as stored ("0/1", "2:0/1" after resets) */
    long epoch;   /* resets before it (schema/ident.h) */
    long frame;   /* index into DrModel.frames */
    char *group;  /* "" or the thread name when several threads compiled the frame */
    long ordinal; /* position among the frame's compiles of the same group */
    char *label;  /* epoch, group and ordinal: "#1", "Thread-2 (worker) #0", "epoch 1 #0" */
    int64_t seq, first_seq;
    long rank;     /* position in the trace's order of compiles */
    int has_event; /* a compile event was recorded (else only its parts) */
    int64_t thread;
    char *thread_name;
    char *display; /* the compile event's display_name, or NULL */
    char *outcome, *reason;
    long attempts, graphs, recompile;
    long cross_thread_failures; /* guard failures against another thread's entry */
    DrStrVec items[DR_CAT__N];
    DrStrVec graph_code;                   /* masked FX code, one per graphs item */
    DrStrVec failed_cids, failure_reasons; /* raw, resolved into items */
} DrCompile;

typedef struct {
    char *file; /* relative to the run's root (see COMPARE.md) */
    char *qualname;
    char *display;     /* the name a person recognises (its compiles' display name), or NULL */
    int multi_display; /* its compiles have several (one code for several modules) */
    long firstlineno;
    long callbacks, cache_hits, ncompiles_counted;
    long *comp, ncomp; /* its compiles, in order */
    long first_rank;   /* rank of its first compile, -1 when none */
    int64_t first_thread;
    int multi_thread;
} DrFrame;

struct DrModel {
    DrTrace *trace;
    DrArena arena;
    char *path, *cwd, *root, *script, *script_rel, *module;
    char *torch_version, *python_version, *exit_status, *exit_signal;
    int complete;
    DrFrame *frames;
    long nframes, frames_cap;
    DrCompile *compiles;
    long ncompiles, compiles_cap;
    long *by_rank;         /* compile indexes in rank order */
    DrStrVec config_start; /* "name = value", sorted */
    char *output[2];       /* stdout, stderr as kept (masked); NULL when not recorded */
    long output_bytes[2];  /* bytes written in all */
    long output_kept[2];   /* bytes of it the trace kept (output[] before masking) */
    DrMap frame_map, code_map, compile_map, file_map;
    DrMap mask_map; /* raw text -> index into masked */
    DrStrVec masked;
};

/* s masked by dr_mask (schema/mask.c) with the run's root and cwd, copied
 * into a; at most limit bytes of s are read (0: all).  NULL when out of
 * memory. */
char *dr_model_mask(const DrModel *m, DrArena *a, const char *s, size_t limit);
/* A file name as compared: relative to the run's root or cwd, or with its
 * prefix replaced as by dr_mask_path.  NULL when out of memory. */
char *dr_model_relname(const DrModel *m, DrArena *a, const char *path);
/* The name of a frame in what a reader prints: its display name (a
 * decorator's or torch's wrapper named by the model it runs and the
 * user's call, recorder/dynamo.py frame_display), else its qualname.
 * Frames are matched by qualname, never by this. */
const char *dr_frame_name(const DrFrame *f);
/* The same for one compile: its own display name (the module compiled
 * through torch's wrapper at that compile), else its frame's name. */
const char *dr_compile_name(const DrModel *m, const DrCompile *c);
/* Line `line` of the stored source of file rel (a relname), or NULL. */
char *dr_model_source_line(DrModel *m, const char *rel, long line);

#endif
