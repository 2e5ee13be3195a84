/* replay.c -- `dynrec replay`: Dynamo's tracing of every captured frame,
 * re-executed from the trace alone in a child (`dynrec run --replay-of`,
 * replayer/replay.py), then compared with the recording.
 *
 * Every read is of one validated snapshot of the trace in a private
 * directory, never the user's file again.  The child is confined by
 * bubblewrap where it can be (sandbox.c); unconfined, the stored
 * definitions run only when they are this disk's own files, or with
 * --trust.  What replay shares with rerun is in child.c. */
#define _GNU_SOURCE 1
#include "replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../recorder/run.h"
#include "../schema/ident.h"
#include "../schema/json.h"
#include "child.h"

/* The comparison's key of a frame of m ("file\x1fqualname\x1fline", file
 * relative to m's root) from the absolute file name a replay recorded;
 * *rel gets the relative name.  NULL when out of memory. */
static char *frame_key(DrChild *r, DrModel *m, const char *file, const char *qual, const char *line,
                       char **rel) {
    *rel = dr_model_relname(m, &r->arena, file);
    if (!*rel) return NULL;
    char key[8192];
    return dr_arena_strdup(&r->arena, dr_frame_key(key, sizeof key, *rel, qual, atol(line)));
}

/* The frames the replay left out: keys, for the comparison, of the frame
 * in one epoch ("key\x1eN"; the key alone: every epoch), and one name and
 * reason per frame (its first), for the report. */
typedef struct {
    DrChild *r;
    DrModel *m;
    DrStrVec keys, reasons, names;
    DrMap frames; /* frame key -> 1, once named */
} Skips;

static int skip_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Skips *s = ud;
    char *rel, *key;
    if (n < 5 || !v[0] || !v[1] || !v[2] || !(key = frame_key(s->r, s->m, v[0], v[1], v[2], &rel)))
        return 0;
    char *ekey = v[4] ? dr_skip_key(&s->r->arena, key, atol(v[4])) : key;
    if (!ekey) return 0;
    dr_vec_push(&s->keys, ekey);
    if (dr_map_get(&s->frames, key) >= 0) return 0;
    dr_map_put(&s->frames, key, 1);
    dr_vec_push(&s->reasons, dr_arena_strdup(&s->r->arena, v[3] ? v[3] : "?"));
    char name[700];
    snprintf(name, sizeof name, "%.300s (%.300s:%ld)", v[1], rel, atol(v[2]));
    dr_vec_push(&s->names, dr_arena_strdup(&s->r->arena, name));
    return 0;
}

/* Frame keys of a that --frame / --compile did not choose: every frame of
 * a whose key is not among the replay's chosen ones (meta replay.frames). */
typedef struct {
    DrChild *r;
    DrModel *m;
    DrMap chosen;
    long max_captures;
} Chosen;

static int chosen_row(void *ud, int n, const char *const *names, const char *const *v) {
    (void)names;
    Chosen *c = ud;
    char *rel, *key;
    if (n < 4 || !v[0] || !v[1] || !v[2] || !(key = frame_key(c->r, c->m, v[0], v[1], v[2], &rel)))
        return 0;
    dr_map_put(&c->chosen, key, 1);
    long k = v[3] ? atol(v[3]) : 0;
    if (k > c->max_captures) c->max_captures = k;
    return 0;
}

/* Sources must be on disk at their recorded paths with their recorded text
 * for a replay without --trust; the first that is not is named in *why. */
static int sources_on_disk(DrChild *r, DrChildFiles *f, char *why, size_t whylen) {
    if (f->path.n == 0) {
        /* Nothing to check is not a check passed: the frames would be
         * library functions named by the trace. */
        snprintf(why, whylen, "the trace stores no sources to check against this disk");
        return 0;
    }
    for (long i = 0; i < f->path.n; i++) {
        char *abs = dr_path_normalize(&r->arena, r->cwd, f->path.v[i]);
        size_t curlen = 0, oldlen = 0;
        char *cur = abs ? dr_child_read_file(abs, &curlen) : NULL;
        if (!cur) {
            snprintf(why, whylen, "%s is not on disk",
                     dr_child_safe(r, abs ? abs : f->path.v[i], 300));
            return 0;
        }
        void *old = NULL;
        int same = dr_trace_read_blob(r->t, atoll(f->blob.v[i]), 64u << 20, &old, &oldlen, NULL) ==
                       DR_OK &&
                   oldlen == curlen && memcmp(old, cur, curlen) == 0;
        free(old);
        free(cur);
        if (!same) {
            snprintf(why, whylen, "%s differs from the copy in the trace",
                     dr_child_safe(r, abs, 300));
            return 0;
        }
    }
    return 1;
}

/* Runs `dynrec run -q -o out --replay-of copy --trace-label trace ...`,
 * confined by sb unless it is NULL; returns its wait status, or -1. */
static int run_replay_child(DrChild *r, const DrReplayOptions *o, const DrSandbox *sb,
                            const char *out, const char *copy, const char *trace, DrStrVec *env) {
    DrStrVec argv = {0};
    const char *fixed[] = {"dynrec", "run",           "-q", "-o", out, "--replay-of",
                           copy,     "--trace-label", trace};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) dr_vec_push(&argv, (char *)fixed[i]);
    dr_child_push_sandbox_and_sets(&argv, sb, o->nset, o->set);
    const char *opt[3][2] = {{"--replay-backend", o->backend},
                             {"--replay-frame", o->frame},
                             {"--replay-compile", o->compile}};
    for (int i = 0; i < 3; i++)
        if (opt[i][1]) {
            dr_vec_push(&argv, (char *)opt[i][0]);
            dr_vec_push(&argv, (char *)opt[i][1]);
        }
    int st = dr_child_spawn(r, sb, "replay", o->self, &argv, env, NULL, 1);
    dr_vec_free(&argv);
    return st;
}

int dr_replay(const DrReplayOptions *o, FILE *out, FILE *msgs, DrError *error) {
    DrChild R = {.msgs = msgs}, *r = &R;
    DrChildFiles files = {0};
    DrStrVec env = {0};
    Skips sk = {0};
    Chosen ch = {0};
    DrTrace *nt = NULL;
    DrModel *ma = NULL, *mb = NULL;
    DrDiff *d = NULL;
    int rc = 1;
    DrError err = {0};
    char *new_torch = NULL, *notes = NULL, *cache_hits = NULL;
    DrSandbox sb = {0};
    char sandbox_desc[500] = "none", in_dir[4200];
    char *python = dr_run_choose_python();

    if ((rc = dr_child_load_recording(o->trace, &r->t, &ma, error)) != 0) goto done;
    rc = 1;
    /* One validated snapshot: from here on every read, the checks below
     * and the child's, is of a private copy made after the trace was
     * validated, never the user's file again (which could change under
     * us, or read differently through a view). */
    char copy[4096], out_dir[4096];
    if (dr_child_tmpdir(r, "replay", error) != 0) goto done;
    snprintf(copy, sizeof copy, "%s/in", r->tmpdir);
    snprintf(out_dir, sizeof out_dir, "%s/out", r->tmpdir);
    if (mkdir(copy, 0700) != 0 || mkdir(out_dir, 0700) != 0) {
        dr_error(error, DR_ERR_IO, "cannot make %s: %s", copy, strerror(errno));
        goto done;
    }
    snprintf(copy, sizeof copy, "%s/in/trace.db", r->tmpdir);
    if (dr_trace_snapshot(r->t, copy, &err) != DR_OK) {
        *error = err;
        rc = DR_EX_DATAERR;
        goto done;
    }
    dr_model_free(ma);
    ma = NULL;
    dr_trace_free(r->t);
    r->t = NULL;
    if ((rc = dr_child_load_recording(copy, &r->t, &ma, error)) != 0) goto done;
    rc = 1;
    r->cwd = ma->cwd ? ma->cwd : "/";
    r->python_version = ma->python_version;
    r->torch_version = ma->torch_version;
    char *ncap = NULL;
    dr_trace_query_text(r->t, "SELECT count(*) FROM v_captures", &ncap, NULL);
    long ncaptures = ncap ? atol(ncap) : 0;
    free(ncap);
    ncap = NULL;
    if (ncaptures == 0) {
        if (dr_trace_schema_version(r->t) < 2)
            dr_error(error, DR_ERR_ARG,
                     "%s predates input capture (written by schema %d; "
                     "dynrec 0.3.0 captures frame inputs): record it again to replay it",
                     o->trace, dr_trace_schema_version(r->t));
        else if (dr_trace_get_meta(r->t, "hook.capture", &ncap, NULL) == DR_OK && ncap &&
                 strcmp(ncap, "active") != 0)
            dr_error(error, DR_ERR_ARG,
                     "%s holds no captured frames: the capture was "
                     "switched off in that run (%s; see its recorder_error events)",
                     o->trace, dr_child_safe(r, ncap, 100));
        else
            dr_error(error, DR_ERR_ARG,
                     "%s holds no captured frames: Dynamo compiled "
                     "nothing in that run",
                     o->trace);
        free(ncap);
        rc = DR_EX_NOINPUT;
        goto done;
    }
    /* After the captures: a trace no dynrec can replay says so first. */
    if (dr_child_other_python("replay", o->trace, r->python_version, error)) {
        rc = DR_EX_UNAVAILABLE;
        goto done;
    }
    if (dr_child_load_files(r, &files, &err) != DR_OK) {
        *error = err;
        rc = DR_EX_DATAERR;
        goto done;
    }
    /* Confined, the stored definitions run whoever wrote the trace;
     * unconfined, only when they are this disk's own files (or --trust). */
    char why[700], sbx_why[400] = "";
    char *bwrap = NULL;
    if (o->no_sandbox) snprintf(sbx_why, sizeof sbx_why, "--no-sandbox");
    else bwrap = dr_sandbox_probe(sbx_why, sizeof sbx_why);
    if (bwrap) {
        /* inductor runs the C++ compiler: exec stays allowed for it (on the
         * sandbox's read-only binaries, with no network and no $HOME). */
        char *ind = NULL;
        if (!o->backend)
            dr_trace_query_text(r->t,
                                "SELECT count(*) FROM v_ev WHERE kind = 'capture' AND "
                                "json_valid(data) AND json_extract(data, '$.backend.name') = "
                                "'inductor'",
                                &ind, NULL);
        int exec = o->backend ? strcmp(o->backend, "inductor") == 0 : ind && atol(ind) > 0;
        free(ind);
        DrSandboxMode mode = exec ? DR_SBX_INDUCTOR : DR_SBX_REPLAY;
        snprintf(sandbox_desc, sizeof sandbox_desc, "%s", dr_sandbox_mode_desc(mode));
        sb = (DrSandbox){.bwrap = dr_arena_strdup(&r->arena, bwrap),
                         .self = o->self,
                         .python = python,
                         .in_dir = NULL,
                         .out_dir = out_dir,
                         .pythonpath = dr_sandbox_pythonpath(&r->arena),
                         .mode = mode};
        free(bwrap);
    } else {
        snprintf(sandbox_desc, sizeof sandbox_desc, "none (%s)", sbx_why);
    }
    if (!sb.bwrap && !o->trust && !sources_on_disk(r, &files, why, sizeof why)) {
        if (o->no_sandbox)
            dr_error(error, DR_ERR_ARG,
                     "%s; nothing was run. Unconfined (--no-sandbox), "
                     "replay runs the definitions (imports, def, class) of the sources "
                     "stored in %s only when they are this disk's own; if you trust "
                     "where the file came from, add --trust",
                     why, o->trace);
        else
            dr_error(error, DR_ERR_ARG,
                     "%s, and the replay cannot be confined here: %s; "
                     "nothing was run. If you trust where %s came from, add --trust "
                     "to replay it unconfined",
                     why, sbx_why, o->trace);
        rc = DR_EX_NOPERM;
        goto done;
    }
    if (o->nset && (rc = dr_child_check_sets(o->nset, o->set, msgs)) != 0) goto done;
    const char *outp = o->out ? o->out : dr_child_default_out(r, o->trace, "replay");
    char *newpath = outp ? dr_child_absolute(r, outp) : NULL;
    char *tracepath = dr_child_absolute(r, o->trace);
    if (!newpath || !tracepath) {
        dr_error(error, DR_ERR_IO, "cannot name the new trace; give one with -o");
        goto done;
    }
    int erc = dr_child_replay_env(r, &env, sb.bwrap != NULL, o->trust, &err);
    if (erc != DR_OK) {
        *error = err;
        rc = DR_EX_DATAERR;
        goto done;
    }
    char child_out[4200];
    if (sb.bwrap) {
        /* The copy's folder is mounted read-only, the output's read-write. */
        snprintf(in_dir, sizeof in_dir, "%s/in", r->tmpdir);
        sb.in_dir = in_dir;
        snprintf(child_out, sizeof child_out, "%s/replay.db", out_dir);
    } else {
        snprintf(child_out, sizeof child_out, "%s", newpath);
    }
    int st = run_replay_child(r, o, sb.bwrap ? &sb : NULL, child_out, copy, tracepath, &env);
    /* Whatever the child wrote is the user's, however it ended. */
    if (sb.bwrap && access(child_out, F_OK) == 0 &&
        dr_child_move_out(child_out, newpath, msgs) != 0)
        goto done;
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127) {
        dr_error(error, DR_ERR_IO, "the replay did not finish%s",
                 st != -1 && WIFSIGNALED(st) ? " (killed by a signal)" : "");
        goto done;
    }
    if (WEXITSTATUS(st) == DR_EX_DATAERR || WEXITSTATUS(st) == DR_EX_USAGE) {
        rc = WEXITSTATUS(st); /* the child said why */
        goto done;
    }
    if (WEXITSTATUS(st) != 0) {
        dr_error(error, DR_ERR_IO, "the replay failed (exit status %d); its trace is %s",
                 WEXITSTATUS(st), newpath);
        goto done;
    }
    if ((rc = dr_child_load_result("replay", newpath, &nt, &mb, error)) != 0) goto done;
    rc = 1;
    sk.r = r;
    sk.m = ma;
    dr_trace_query(nt,
                   "SELECT json_extract(data, '$.filename'), json_extract(data, '$.qualname'),"
                   " json_extract(data, '$.firstlineno'), text, json_extract(data, '$.epoch')"
                   " FROM v_ev WHERE kind = 'replay_skip' ORDER BY seq",
                   skip_row, &sk, NULL);
    DrCompareOptions co = {.label_a = o->trace,
                           .label_b = newpath,
                           .replay = 1,
                           .ignore = o->ignore | (1u << DR_CAT_EXIT) | (1u << DR_CAT_OUTPUT)};
    DrStrVec skip_all = {0};
    for (long i = 0; i < sk.keys.n; i++) dr_vec_push(&skip_all, sk.keys.v[i]);
    if (o->frame || o->compile) {
        ch.r = r;
        ch.m = ma;
        dr_trace_query(nt,
                       "SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),"
                       " json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]')"
                       " FROM meta m, json_each(m.value) j WHERE m.key = 'replay.frames'"
                       " AND json_valid(m.value)",
                       chosen_row, &ch, NULL);
        char key[8192];
        for (long f = 0; f < ma->nframes; f++) {
            const DrFrame *fr = &ma->frames[f];
            dr_frame_key(key, sizeof key, fr->file, fr->qualname, fr->firstlineno);
            if (dr_map_get(&ch.chosen, key) < 0)
                dr_vec_push(&skip_all, dr_arena_strdup(&r->arena, key));
        }
        if (o->compile) co.max_compiles = ch.max_captures > 0 ? ch.max_captures : 1;
    }
    /* The config keys the replay refused to set are not compared. */
    char *unset_json = NULL;
    DrStrVec unset = {0};
    dr_trace_query_text(nt,
                        "SELECT value FROM meta WHERE key = 'replay.config_skipped' AND "
                        "json_valid(value)",
                        &unset_json, NULL);
    if (unset_json && dr_child_parse_strings(&r->arena, unset_json, &unset) == 0) {
        co.config_unset = (const char *const *)unset.v;
        co.nconfig_unset = unset.n;
    }
    free(unset_json);
    /* Nothing compiled (every frame skipped): Dynamo never started, so the
     * replay has no config to compare. */
    if (mb->ncompiles == 0) co.ignore |= 1u << DR_CAT_CONFIG;
    co.skip_frames = (const char *const *)skip_all.v;
    co.nskip = skip_all.n;
    d = dr_compare(ma, mb, &co, &err);
    dr_vec_free(&unset);
    if (!d) {
        *error = err;
        dr_vec_free(&skip_all);
        goto done;
    }
    long reproduced = 0, total = 0, skipped_compiles = 0;
    dr_diff_reproduced(d, &reproduced, &total);
    /* The recorded compiles of the frames not replayable: the count beside
     * the reproduced ones says how much of the trace was left out. */
    for (long f = 0; f < ma->nframes; f++) {
        char key[8192];
        const DrFrame *fr = &ma->frames[f];
        dr_frame_key(key, sizeof key, fr->file, fr->qualname, fr->firstlineno);
        DrCompareOptions left = {.skip_frames = (const char *const *)sk.keys.v, .nskip = sk.keys.n};
        for (long c = 0; c < fr->ncomp; c++)
            skipped_compiles += dr_compile_left_out(&left, key, ma->compiles[fr->comp[c]].epoch);
    }
    dr_trace_get_meta(nt, "torch_version", &new_torch, NULL);
    /* The recorded compiles inductor's caches served (FX graph, AOTAutograd):
     * a replay's empty cache compiles them afresh. */
    dr_trace_query_text(r->t,
                        "SELECT group_concat(compile_id, ', ') FROM (SELECT DISTINCT compile_id"
                        " FROM v_ev WHERE kind = 'trace' AND text IN ("
                        "'artifact:fx_graph_cache_hit', 'artifact:aotautograd_cache_hit')"
                        " AND compile_id IS NOT NULL ORDER BY compile_id)",
                        &cache_hits, NULL);
    dr_trace_query_text(nt,
                        "SELECT value FROM meta WHERE key = 'replay.notes' AND "
                        "json_valid(value)",
                        &notes, NULL);
    DrStrVec note_lines = {0};
    if (notes) {
        DrStrVec tmp = {0};
        if (dr_child_parse_strings(&r->arena, notes, &tmp) == 0)
            for (long i = 0; i < tmp.n; i++) dr_vec_push(&note_lines, tmp.v[i]);
        dr_vec_free(&tmp);
    }
    if (o->json) {
        fputs("{\n  \"replay\": {\"of\": ", out);
        dr_json_string(out, o->trace);
        fputs(", \"trace\": ", out);
        dr_json_string(out, newpath);
        fputs(", \"recorded_torch\": ", out);
        dr_json_string(out, r->torch_version);
        fputs(", \"torch\": ", out);
        dr_json_string(out, new_torch);
        fputs(", \"sandbox\": ", out);
        dr_json_string(out, sandbox_desc);
        fprintf(out,
                ", \"reproduced\": %ld, \"compared\": %ld, \"not_replayable_compiles\": %ld, "
                "\"nothing_replayed\": %s, \"not_replayable\": [",
                reproduced, total, skipped_compiles, total == 0 && sk.names.n ? "true" : "false");
        for (long i = 0; i < sk.names.n; i++) {
            fputs(i ? ", {\"frame\": " : "{\"frame\": ", out);
            dr_json_string(out, sk.names.v[i]);
            fputs(", \"reason\": ", out);
            dr_json_string(out, sk.reasons.v[i]);
            fputc('}', out);
        }
        fputs("], \"notes\": [", out);
        for (long i = 0; i < note_lines.n; i++) {
            if (i) fputs(", ", out);
            dr_json_string(out, note_lines.v[i]);
        }
        fputs("], \"env_left_out\": ", out);
        dr_json_string(out, r->env_left_out);
        fputs(", \"inductor_cache_hits\": ", out);
        dr_json_string(out, cache_hits);
        fputs("},\n  ", out);
        dr_diff_print_json_fields(d, out);
        fputs("\n}\n", out);
    } else {
        fprintf(out, "replay of %s -> %s\n", o->trace, newpath);
        fprintf(out, "  sandbox: %s\n", sandbox_desc);
        if (r->torch_version && new_torch && strcmp(r->torch_version, new_torch) != 0)
            fprintf(out, "  recorded on torch %s, replayed on %s\n",
                    dr_child_safe(r, r->torch_version, 100), dr_child_safe(r, new_torch, 100));
        if (o->backend) fprintf(out, "  --backend %s\n", o->backend);
        for (int i = 0; i < o->nset; i++) fprintf(out, "  --set %s\n", o->set[i]);
        for (long i = 0; i < note_lines.n; i++)
            fprintf(out, "  note: %s\n", dr_child_safe(r, note_lines.v[i], 400));
        fprintf(out, "  reproduced %ld/%ld compile%s", reproduced, total, total == 1 ? "" : "s");
        if (sk.names.n) {
            fprintf(out, "; %ld frame%s not replayable (%ld recorded compile%s):", sk.names.n,
                    sk.names.n == 1 ? "" : "s", skipped_compiles, skipped_compiles == 1 ? "" : "s");
            for (long i = 0; i < sk.names.n; i++)
                fprintf(out, "\n    %s: %s", dr_child_safe(r, sk.names.v[i], 0),
                        dr_child_safe(r, sk.reasons.v[i], 400));
        }
        fputc('\n', out);
        if (total == 0 && sk.names.n) /* Not "identical": nothing was compared. */
            fputs("nothing was replayed: no captured compile could be rebuilt here\n", out);
        else dr_diff_print(d, out, 0);
        /* (and where nothing was replayed: a left-out PYTHONPATH can be why) */
        dr_child_print_env_note(r, out, dr_diff_identical(d) && !(total == 0 && sk.names.n));
        if (cache_hits && !dr_diff_identical(d))
            fprintf(out,
                    "  note: inductor's caches served compile%s %s in the recording; the replay "
                    "compiled afresh (an empty cache), and the guards inductor's lowering adds "
                    "can differ: record with TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 to compare "
                    "like with like\n",
                    strchr(cache_hits, ',') ? "s" : "", dr_child_safe(r, cache_hits, 200));
        if (total) {
            fputs("per compile:\n", out);
            dr_diff_print_compiles(d, out, 200);
        }
    }
    dr_vec_free(&note_lines);
    dr_vec_free(&skip_all);
    rc = !dr_diff_identical(d) ? 1 : sk.names.n ? DR_EX_PARTIAL : 0;
    if (fflush(out) != 0) rc = 1;
done:
    free(new_torch);
    free(notes);
    free(cache_hits);
    dr_map_free(&ch.chosen);
    dr_vec_free(&sk.keys);
    dr_map_free(&sk.frames);
    dr_vec_free(&sk.reasons);
    dr_vec_free(&sk.names);
    dr_diff_free(d);
    dr_model_free(mb);
    dr_model_free(ma);
    dr_trace_free(nt);
    dr_child_free_files(&files);
    dr_vec_free(&env);
    dr_trace_free(r->t);
    dr_child_rmtree(r->tmpdir);
    free(python);
    dr_arena_free(&r->arena);
    return rc;
}
