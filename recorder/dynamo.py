"""dynrec's Dynamo adapter: records what torch.compile decides, as events.

Compiled into the dynrec binary and loaded as the module _dynrec.dynamo the
first time Dynamo installs its frame function (by then torch._dynamo is
fully imported), with its two parts dynamo_spec.py (higher-order-op
speculation and side effects) and capture.py (a frame's inputs, for
replay): recorder/embed.h.  Then the recorder calls install().  Every hook is a
_dynrec.around wrapper (around.c): it calls the original from C, so no frame
of dynrec's shows in a traceback or a stack torch captures, returns its result
unchanged and lets its exceptions pass as they are; the
recording part (its before and after) is guarded so that a failure is recorded as a recorder_error
and switches that hook off, never reaching the user's program.

Events (kind: what, the view that reads it):
  callback      one call of Dynamo's Python frame callback (v_frames)
  cache_entry   links a compiled code object to the frame it belongs to
  compile       one compile of a frame, with outcome and attempts (v_compiles)
  guard         one guard of a compiled cache entry (v_guards)
  guard_failure why a cache entry's guards failed on a recompile (v_guard_failures)
  graph_break   a graph break with its reason and user stack (v_graph_breaks)
  speculation   attempt checkpoints, restarts, rollbacks, branch merges (v_speculation)
  side_effect   side effects applied or dropped (v_side_effects)
  error         an exception inside Dynamo, suppressed or raised (v_errors)
  graph         a graph handed to the backend (v_graphs)
  config        the Dynamo config at start, and its changes at compiles
  capture       the inputs of a frame about to be compiled (capture.py), for replay
  trace         each record of Dynamo's structured trace (torch.__trace)
  reset         torch._dynamo.reset(): a new epoch of compile ids begins
"""

import hashlib
import json
import linecache
import logging
import os
import re
import sys
import threading
import traceback
import types
import weakref

import torch
import torch._dynamo
import torch._dynamo.convert_frame as _cf
import torch._dynamo.guards as _guards_mod
import torch._dynamo.output_graph as _og
import torch._guards
from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list

import _dynrec

# The two other parts of the adapter, filled right after this one (embed.c).
from . import capture as _capture
from . import dynamo_spec as _spec

_event = _dynrec.event
_mask = _dynrec.mask
_qualname = _dynrec.qualname  # co_qualname, co_name on 3.10
code_digest = _dynrec.code_digest  # capture.py records it, replay.py matches it
_guard = _dynrec.guard
_now = _dynrec.now_ns
_is_library = _dynrec.is_library
_tls = threading.local()
_hooks = {}
# Every wrapper below is _dynrec.around(orig, before, after) (around.c): the
# original is called from C, so no frame of dynrec's is on the stack or in a
# traceback while it runs.  before(*args, **kwargs) returns the state that
# after(state, result, exc) gets, or None for no after.
_around = _dynrec.around
_hook_pause = _dynrec.hook_pause
# held(fn, *args): fn with the collector held, as around's before and after.
_held = _dynrec.held
# The script's own text is already stored (role "script") by the runner.
_stored_files = {os.path.realpath(sys.argv[0])} if sys.argv and sys.argv[0] else set()
# id -> compiled code object, weakly: a strong reference here would keep
# Dynamo's compiled code alive until this module's namespace is cleared, late in
# finalization, after torch's modules; the weakref callbacks Dynamo put on
# that code (CleanupManager) would then run against cleared globals and
# print "Exception ignored" where plain python prints nothing.
_linked_codes = weakref.WeakValueDictionary()
_torch_dir = os.path.dirname(os.path.realpath(torch.__file__)) + os.sep
_stdlib_dir = os.path.dirname(os.path.realpath(os.__file__)) + os.sep
_library_dirs = (_torch_dir, _stdlib_dir)


# ---- canonical keys --------------------------------------------------------

def mask(text):
    """The text with its volatile parts masked: schema/mask.c, the one masking
    that the readers apply too (without a root or cwd here)."""
    return _mask(text) if text else ""


# ---- emitting --------------------------------------------------------------


def compile_key(cid):
    """A compile id as stored: Dynamo's id ("0/1"), prefixed "E:" after the
    E-th torch._dynamo.reset() (reset_epoch, counted by adapter.py): compile
    ids restart at each reset, keys do not.  None stays None.  SCHEMA.md,
    "Compile identity"."""
    epoch = _dynrec.reset_epoch  # counted by adapter.py
    if cid is None or not epoch:
        return cid
    return "%d:%s" % (epoch, cid)


def compile_id_now():
    """Dynamo's current compile id as text ("0/1"), or None."""
    cid = torch._guards.CompileContext.current_compile_id()
    return str(cid) if cid is not None else None


def attempt_now():
    tid = torch._guards.CompileContext.current_trace_id()
    return tid.attempt if tid is not None else 0


# json.dumps(obj, default=repr, sort_keys=True), with one encoder for the
# run instead of one built per call (a record of the structured trace
# writes its metadata with it).
_dumps = json.JSONEncoder(default=repr, sort_keys=True).encode


def emit(kind, *, code=None, code2=None, cid=None, num=0, text=None, data=None,
         payload=None, key=None, data_json=None):
    """key False: no stored key (the reader derives it, see v_canonical);
    data_json: data already written as JSON (sorted keys), instead of data."""
    if data is not None:
        data_json = _dumps(data)
    _event(kind, code, code2, compile_key(cid), int(num), text, data_json, payload,
           None if key is False else key if key is not None else kind)


def record_error(where, exc):
    try:
        emit("recorder_error", text="%s: %s: %s" % (where, type(exc).__name__, exc),
             payload=traceback.format_exc(), key="recorder_error " + where)
    except Exception:
        pass


def _inductor_dir():
    """Inductor's cache directory, where its generated code lives, as
    torch._inductor.runtime.cache_dir_utils.cache_dir() finds it (without
    calling it: it creates the directory and sets the environment)."""
    d = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if d:
        return os.path.realpath(d) + os.sep
    return None


def is_library(filename):
    """torch (wherever it is installed), the standard library, installed
    packages and generated code (inductor's, in its cache directory:
    /tmp/torchinductor_<user> by default): the one rule, schema/ident.h."""
    if not filename or filename.startswith("<"):
        return True
    lib = _library_names.get(filename)
    if lib is None:
        lib = _library_names[filename] = _is_library(
            os.path.realpath(filename), (_torch_dir, _stdlib_dir, _inductor_dir()))
    return lib


# File name -> is_library, and the names store_source has handled with a
# file on disk: realpath costs a stat per path component, and Dynamo and
# its stacks name the same few files hundreds of times in a run.
_library_names = {}
_source_names = set()


def _callable_name(obj):
    if isinstance(obj, torch.nn.Module):
        return type(obj).__name__
    if isinstance(obj, types.BuiltinFunctionType):
        mod = getattr(obj, "__module__", None)
        return "%s.%s" % (mod, obj.__name__) if isinstance(mod, str) else obj.__name__
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return name if isinstance(name, str) else type(obj).__name__


def frame_display(code, f_locals, closure):
    """(display_name, user_location) of a frame about to be compiled, for
    torch's own frames: compiling a module or a builtin compiles torch's
    wrapper (wrap_inline.<locals>.inner), so name it by what it wraps (a
    module's class, a function) and where the user's code called it."""
    if not is_library(code.co_filename):
        return None, None
    # The model it runs: the module a method or a decorator's wrapper
    # (transformers' can_return_tuple, deprecate_kwarg) is called on, as
    # `self` or as the wrapper's first *args; else the function it wraps.
    loc = f_locals if isinstance(f_locals, dict) else {}
    target = loc.get("self")
    args = loc.get("args")
    if not isinstance(target, torch.nn.Module) and isinstance(args, tuple) and args and (
            isinstance(args[0], torch.nn.Module)):
        target = args[0]
    if not isinstance(target, torch.nn.Module):
        target = None
        for name in ("fn", "func"):
            if closure and name in code.co_freevars:
                try:
                    target = closure[code.co_freevars.index(name)].cell_contents
                    break
                except (ValueError, IndexError):
                    target = None
    if target is None:
        target = loc.get("fn", loc.get("self"))
    what = _callable_name(target) if target is not None else _qualname(code)
    f = sys._getframe(1)
    while f is not None and is_library(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return what, None
    line = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
    if line:
        what = "%s via %s" % (what, line if len(line) <= 60 else line[:57] + "...")
    return what, "%s:%d" % (f.f_code.co_filename, f.f_lineno)


def store_source(filename):
    """Stores the text of a user file Dynamo traced, once.  Code with no file
    on disk (an IPython or Jupyter cell, exec'd text that registered itself
    with linecache) is stored as linecache has it, under its own name."""
    if not filename or filename in _source_names:
        return
    if filename.startswith(_library_dirs):
        # Already under torch's or the standard library's real directory:
        # library code by the one rule (schema/ident.h), never stored.
        _source_names.add(filename)
        return
    if filename.startswith("<") or not os.path.exists(filename):
        if filename in _stored_files:
            return
        _stored_files.add(filename)
        lines = linecache.cache.get(filename)
        if lines and len(lines) >= 3 and isinstance(lines[2], list):
            text = "".join(lines[2])
            _dynrec.file(filename, "source", text.encode("utf-8", "surrogateescape"))
        return
    _source_names.add(filename)
    filename = os.path.realpath(filename)
    if filename in _stored_files or is_library(filename):
        return
    _stored_files.add(filename)
    try:
        with open(filename, "rb") as f:
            _dynrec.file(filename, "source", f.read())
    except OSError:
        pass


# ---- hooking ---------------------------------------------------------------


def hook(name, owner, attr, make):
    """Replaces owner.attr by make(original); records in meta whether it worked."""
    orig = getattr(owner, attr, None)
    if orig is None:
        _hooks[name] = "missing"
        return
    try:
        setattr(owner, attr, make(orig))
        _hooks[name] = "active"
    except Exception as exc:
        _hooks[name] = "failed: %s" % exc


# Fault injection for the tests: DYNREC_FAULT_HOOK=NAME makes that hook's
# recording fail, to show that a failure is recorded and switches it off.
_fault_hook = os.environ.get("DYNREC_FAULT_HOOK")


class Guarded:
    """Runs a recording function; on its first failure records it and stops."""

    def __init__(self, name):
        self.name = name
        self.on = True

    def __call__(self, fn, *args):
        if not self.on:
            return None
        try:
            if self.name == _fault_hook:
                raise RuntimeError("fault injected by DYNREC_FAULT_HOOK")
            return fn(*args)
        except Exception as exc:
            self.on = False
            _hooks[self.name] = "disabled after an error"
            record_error(self.name, exc)
            return None


# ---- 1. the Python frame callback -----------------------------------------

_cb_guard = Guarded("callback")


def _outcome(result):
    if result is None:
        return "skipped"
    if getattr(result, "guarded_code", None) is not None:
        return "compiled"
    strategy = getattr(result, "frame_exec_strategy", None)
    action = getattr(getattr(strategy, "cur_action", None), "name", "")
    if action == "RUN_ONLY":
        return "run_only"
    return "skipped"


def _record_callback(code, before, result, exc, t0, pending):
    outcome = "error" if exc is not None else _outcome(result)
    dur = _now() - t0
    data = {"outcome": outcome, "cache_entries_before": before, "duration_ns": dur}
    skip = getattr(result, "skip_reason", None) if result is not None else None
    if skip:
        data["skip_reason"] = skip
    emit("callback", code=code, num=before, text=skip, data=data,
         key="callback %s %s %s" % (_qualname(code), outcome, mask(skip or "")))
    # Errors seen inside the compile: suppressed unless one escaped here (as
    # itself, or as the cause of what escaped; else the last one did).
    raised = None
    if exc is not None and pending:
        chain = {id(exc), id(exc.__cause__), id(exc.__context__)}
        raised = next((e for _, e, _ in pending if id(e) in chain), pending[-1][1])
    for cid, e, tb in pending:
        suppressed = 0 if e is raised else 1
        emit("error", cid=cid, num=suppressed, text=str(e)[:4000],
             data={"exc_type": type(e).__name__, "module": type(e).__module__},
             payload=tb,
             key="error %s %s %d %s" % (cid, type(e).__name__, suppressed,
                                        mask(str(e).split("\n", 1)[0])))
    store_source(code.co_filename)
    if outcome == "compiled":
        # The cache entry is made by Dynamo's C code after the callback
        # returns; its compiled code is the guarded code returned here.
        gc = result.guarded_code
        ccode = getattr(gc, "code", None)
        if ccode is not None and _linked_codes.get(id(ccode)) is not ccode:
            _linked_codes[id(ccode)] = ccode  # by identity, while it lives
            gcid = getattr(gc, "compile_id", None)
            ecid = str(gcid) if gcid is not None else None
            emit("cache_entry", code=code, code2=ccode, cid=ecid,
                 key="cache_entry %s" % ecid)


def _wrap_callback(orig):
    def before(self, frame, cache_entry, frame_state, *args, **kwargs):
        if not _cb_guard.on:
            return None
        code = frame.f_code
        before = 0
        try:
            before = len(_debug_get_cache_entry_list(code))
            # torch._logging.set_logs() may clear the trace logger's handlers.
            if _trace_handler is not None and _trace_handler.on and (
                    _trace_handler not in _trace_log.handlers):
                attach_trace_handler()
        except Exception:
            pass
        outer = getattr(_tls, "pending", None)
        _tls.pending = pending = []
        # Dynamo's tracing runs its frames through the frame hook: not
        # counted (hook.h, dr_hook_pause), until after().
        _hook_pause(True)
        return code, before, outer, pending, _now()

    def after(state, result, exc):
        _hook_pause(False)
        code, before, outer, pending, t0 = state
        if exc is not None and hasattr(exc, "dynrec_result"):
            # The replay's stop of Dynamo's eager fallback (replay.py,
            # _NotRun): the callback's outcome is the result it carries.
            result, exc = exc.dynrec_result, None
        _tls.pending = outer
        _cb_guard(_record_callback, code, before, result, exc, t0, pending)

    return _around(orig, before, after)


# ---- 2. compiles -----------------------------------------------------------

_compile_guard = Guarded("compile")


def _record_compile(code, cid, cache_entries, result, exc, t0):
    recompile = 1 if cache_entries else 0
    st = getattr(_tls, "compiles", {}).pop(cid, {})
    graphs = st.get("graphs", 0)
    if exc is not None:
        outcome = "error"
    elif getattr(result, "guarded_code", None) is not None:
        outcome = "compiled"
    else:
        outcome = "skipped"
    reason = None
    if exc is not None:
        reason = "%s: %s" % (type(exc).__name__, str(exc).split("\n", 1)[0])
        pending = getattr(_tls, "pending", None)
        if pending is not None:
            pending.append((cid, exc, "".join(traceback.format_exception(exc))))
    elif outcome == "skipped":
        reason = getattr(result, "skip_reason", None)
    data = {"outcome": outcome, "graphs": graphs, "recompile": recompile,
            "attempts": st.get("attempts", 1), "duration_ns": _now() - t0,
            # Thread names are stable across runs where idents are not: the
            # comparison matches the compiles of a frame per thread name.
            "thread_name": threading.current_thread().name}
    name, where = st.get("display") or (None, None)
    if name:
        data["display_name"] = name
    if where:
        data["user_location"] = where
    emit("compile", code=code, cid=cid, num=graphs, text=reason, data=data,
         key="compile %s %s %s graphs=%d recompile=%d attempts=%d" % (
             cid, _qualname(code), outcome, graphs, recompile, data["attempts"]))
    config_changes(cid, st.get("config"))


_name_guard = Guarded("frame_name")


_dist_unseen = True


def _dist_meta():
    """meta dist.backend: the process group's backend, the first time a
    compile (or the end of the session) finds one."""
    global _dist_unseen
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            _dynrec.meta("dist.backend", str(dist.get_backend()))
            _dist_unseen = False
    except Exception as exc:
        _dist_unseen = False
        record_error("dist.backend", exc)


def _wrap_compile(orig):
    def before(code, *args, **kwargs):
        if not _compile_guard.on:
            return None
        if _overrides:
            _apply_overrides()
        cid = kwargs.get("compile_id")
        cid = str(cid) if cid is not None else None
        cache_entries = kwargs.get("cache_entries", args[10] if len(args) > 10 else None)
        # The config this compile runs under: one snapshot, for the capture
        # and for the config event after it (Dynamo's own patches are undone
        # by then).
        config = _config_now()
        if _capture._cap_guard.on and len(args) >= 6:
            # dynrec replay: the frame's inputs, before tracing changes anything.
            export = args[6] if len(args) > 6 else kwargs.get("export")
            hooks = args[8] if len(args) > 8 else kwargs.get("hooks")
            _capture._cap_guard(_capture.capture_frame, code, args[0], args[1], args[3], args[4],
                                args[5], export, cid, config, hooks)
        if _dist_unseen:
            _dist_meta()
        t0 = _now()
        st = {"graphs": 0, "attempts": 0, "config": config}
        if len(args) >= 4:
            st["display"] = _name_guard(frame_display, code, args[1], args[3])
        _tls.__dict__.setdefault("compiles", {})[cid] = st
        return code, cid, cache_entries, t0

    def after(state, result, exc):
        code, cid, cache_entries, t0 = state
        st = getattr(_tls, "compiles", {}).get(cid) or {}
        if st.get("output") is not None and not st.get("state") and _capture._cap_guard.on and (
                getattr(result, "guarded_code", None) is None):
            # A compile that failed or was skipped after a graph break builds
            # no guards: the module state the guards of its tracing read
            # (a registry the wrapper it failed in reads), for the replay.
            _capture._cap_guard(_capture.capture_module_state, code, st["output"])
        st.pop("output", None)
        _compile_guard(_record_compile, code, cid, cache_entries, result, exc, t0)

    return _around(orig, before, after)


def compile_state():
    """The per-compile counters of the compile running on this thread."""
    cid = compile_id_now()
    return getattr(_tls, "compiles", {}).get(cid), cid


# ---- 3. guard failures -----------------------------------------------------

_gf_guard = Guarded("guard_failure")


def _record_guard_failure(reason, failed_cid):
    if not reason:
        return
    cid = compile_id_now()
    failed = str(failed_cid) if failed_cid is not None else None
    code = getattr(_tls, "reason_code", None)
    data = {"failed_compile_id": compile_key(failed)}
    name, where = getattr(_tls, "compiles", {}).get(cid, {}).get("display") or (None, None)
    if name:
        data["display_name"] = name
    if where:
        data["user_location"] = where
    emit("guard_failure", code=code, cid=cid, text=reason, data=data,
         key="guard_failure %s %s %s" % (cid, failed, mask(reason)))


def _wrap_get_guard_fail_reason(orig):
    def before(guard_manager, code, f_locals, compile_id, *args, **kwargs):
        return (compile_id,)

    def after(state, reason, exc):
        if exc is None and _gf_guard.on:
            _gf_guard(_record_guard_failure, reason, state[0])

    return _around(orig, before, after)


def _wrap_recompilation_reasons(orig):
    def before(cache_entries, frame, *args, **kwargs):
        _tls.reason_code = getattr(frame, "f_code", None)
        return True

    def after(state, result, exc):
        _tls.reason_code = None

    return _around(orig, before, after)


# ---- 4. graph breaks -------------------------------------------------------

_gb_guard = Guarded("graph_break")


def _record_graph_break(tx, reason, exc):
    stack = getattr(exc, "real_stack", None)
    if stack is None:
        stack = torch._guards.TracingContext.extract_stack()
    frames = ["%s:%s in %s" % (fs.filename, fs.lineno, fs.name) for fs in stack or []]
    lineno = stack[-1].lineno if stack else getattr(tx, "lineno", 0)
    filename = stack[-1].filename if stack else None
    for fs in stack or []:
        store_source(fs.filename)
    gb_type = getattr(exc, "gb_type", None) or type(exc).__name__
    cid = compile_id_now()
    code = getattr(tx, "f_code", None)
    st = getattr(_tls, "compiles", {}).get(cid)
    if st is not None:
        # (for the module state its guards read, should the compile fail)
        st["output"] = getattr(tx, "output", None)
    emit("graph_break", code=code, cid=cid, num=lineno or 0, text=reason,
         data={"type": gb_type, "user_stack": frames, "filename": filename,
               "attempt": attempt_now()},
         key="graph_break %s %s:%s %s %s" % (cid, os.path.basename(filename or "?"),
                                             lineno, gb_type, mask(reason.split("\n", 1)[0])))


def _wrap_log_graph_break(orig):
    def before(self, code_options, reason, exc, *args, **kwargs):
        if _gb_guard.on and not getattr(exc, "logged", False):
            _gb_guard(_record_graph_break, self, reason, exc)

    return _around(orig, before)


# ---- 5. backend calls ------------------------------------------------------

_graph_guard = Guarded("backend")


def _input_meta(x):
    if isinstance(x, torch.Tensor):
        return {"shape": [str(s) for s in x.shape], "stride": [str(s) for s in x.stride()],
                "dtype": str(x.dtype), "device": str(x.device),
                "requires_grad": bool(x.requires_grad)}
    if isinstance(x, torch.SymInt):
        return {"symint": str(x)}
    return {"type": type(x).__name__}


def _backend_name(og):
    fn = getattr(og, "compiler_fn", None)
    seen = 0
    while fn is not None and seen < 10:
        named = getattr(fn, "compiler_name", None)  # torch.compile's wrappers
        if isinstance(named, str):
            return named
        inner = getattr(fn, "_torchdynamo_orig_backend", None) or getattr(
            fn, "compiler_fn", None)
        if inner is None or inner is fn:
            break
        fn = inner
        seen += 1
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return name


def _graph_inputs(gm, example_inputs):
    """Input metadata from the placeholders' fake values, whose sizes are
    symbolic expressions under dynamic shapes; else from the real inputs."""
    vals = [n.meta.get("example_value", n.meta.get("val"))
            for n in gm.graph.nodes if n.op == "placeholder"]
    if vals and all(v is not None for v in vals):
        return [_input_meta(v) for v in vals]
    return [_input_meta(x) for x in example_inputs]


def _record_graph(og, gm, example_inputs, t0, exc):
    cid = compile_id_now()
    nodes = len(gm.graph.nodes)
    backend = _backend_name(og)
    st, _ = compile_state()
    if st is not None and exc is None:
        st["graphs"] = st.get("graphs", 0) + 1
    emit("graph", cid=cid, num=nodes, text=backend,
         data={"backend": backend, "inputs": _graph_inputs(gm, example_inputs),
               "duration_ns": _now() - t0, "failed": exc is not None},
         payload=gm.code,
         key="graph %s %s nodes=%d" % (cid, backend, nodes))


def _wrap_call_user_compiler(orig):
    def before(self, gm, example_inputs, *args, **kwargs):
        if not _graph_guard.on:
            return None
        return self, gm, example_inputs, _now()

    def after(state, out, exc):
        self, gm, example_inputs, t0 = state
        _graph_guard(_record_graph, self, gm, example_inputs, t0, exc)

    return _around(orig, before, after)


# ---- 6. speculation: tracing attempts, restarts, rollbacks ---------------------

_spec_guard = Guarded("speculation")


def speculation(action, detail, data=None, cid=None):
    """Records one speculation step; the key leaves out volatile detail."""
    cid = cid or compile_id_now()
    d = {"action": action, "attempt": attempt_now()}
    if data:
        d.update(data)
    emit("speculation", cid=cid, text=detail, data=d,
         key="speculation %s %s %s" % (cid, action, mask(detail or "")))


def _record_attempt_start():
    st, cid = compile_state()
    if st is not None:
        st["attempts"] = st.get("attempts", 0) + 1
    speculation("checkpoint", "attempt %d starts" % attempt_now(), {"scope": "attempt"}, cid)


def _record_restart(exc):
    reason = getattr(exc, "restart_reason", None) or type(exc).__name__
    speculation("restart", reason, {"scope": "attempt", "exc_type": type(exc).__name__})


def _wrap_transform_code_object(orig):
    def before(code, transformations, *args, **kwargs):
        if _spec_guard.on:
            _spec_guard(_record_attempt_start)
        return True

    def after(state, result, exc):
        if isinstance(exc, torch._dynamo.exc.RestartAnalysis) and _spec_guard.on:
            _spec_guard(_record_restart, exc)

    return _around(orig, before, after)


def _record_rollback(entry):
    reason = getattr(getattr(entry, "reason", None), "reason", None) or "speculation failed"
    inst = getattr(entry, "inst", None)
    opname = getattr(inst, "opname", "?")
    filename = getattr(entry, "filename", "?")
    lineno = getattr(entry, "lineno", 0)
    speculation("rollback", "at %s:%s (%s): %s" % (os.path.basename(filename), lineno, opname,
                                                   reason),
                {"scope": "attempt", "instruction": opname, "filename": filename,
                 "lineno": lineno, "offset": getattr(entry, "instruction_pointer", None),
                 "reason": reason})


def _wrap_fail_and_restart(orig):
    def before(self, *args, **kwargs):
        if _spec_guard.on:
            _spec_guard(_record_rollback, self)

    return _around(orig, before)


# ---- 7. config ---------------------------------------------------------------

_config_last = {}


def _config_snapshot():
    return _dynrec.config_snapshot()  # adapter.py


def _config_now():
    """The config snapshot now, or None if it cannot be taken."""
    try:
        return _config_snapshot()
    except Exception:
        return None


def config_changes(cid, now):
    """A config event for what changed since the last one (now: the
    snapshot the compile cid ran under, None: not taken)."""
    global _config_last
    if now is None:
        return
    changed = {k: v for k, v in now.items() if _config_last.get(k) != v}
    if changed:
        emit("config", cid=cid, num=len(changed), data=changed,
             text="changed: " + ", ".join(sorted(changed))[:2000],
             key="config %s %s" % (cid, " ".join("%s=%s" % kv for kv in sorted(changed.items()))))
        _config_last = now


def config_seen():
    """The config now is what the next compile's changes count from: the
    config a replay set for a recorded compile it could not replay (so the
    changes of the compiles after it are the recorded ones)."""
    global _config_last
    now = _config_now()
    if now is not None:
        _config_last = now


# ---- 8. the structured trace (torch.__trace) ---------------------------------

_GUARD_LINE = re.compile(r"^((?:\| )*)\+- ([A-Za-z_]+): (.*)$")
_SOURCE = re.compile(r"source=(.*?), accessed_by=")


def guards_from_tree(text):
    """(guard, source, user_location) for each leaf of Dynamo's guard tree text."""
    out = []
    sources = {}
    for line in text.splitlines():
        m = _GUARD_LINE.match(line)
        if not m:
            continue
        depth = len(m.group(1)) // 2
        kind, rest = m.group(2), m.group(3)
        if kind.endswith("GuardManager"):
            sm = _SOURCE.search(rest)
            sources[depth] = sm.group(1) if sm else None
            continue
        parts = rest.split("  # ")
        expr = parts[0].strip()
        loc = parts[-1].strip() if len(parts) >= 3 else None
        out.append(("%s: %s" % (kind, expr), sources.get(depth - 1), loc))
    return out


def _guards_from_trace(cid, payload):
    code = getattr(_tls, "guard_code", None)
    ckey = compile_key(cid)  # one for all of the compile's guards
    for guard, source, loc in guards_from_tree(payload):
        masked = mask(guard)
        # The key only where masking changed the text: v_canonical derives
        # the others ("guard CID TEXT"), a third of a trace's strings.
        # Stored as templates: the text (and the masked text, where masking
        # changed it) with chr(1) for the source, which v_ev puts back.  A
        # model's guards are few shapes over many long sources.
        text, text_t, key, masked_t = guard, None, None, None
        if source and source in guard and "\x01" not in guard:
            text, text_t = None, guard.replace(source, "\x01")
        if masked != guard:
            if source and source in masked and "\x01" not in masked:
                masked_t = masked.replace(source, "\x01")
            else:
                key = "guard %s %s" % (ckey, masked)
        _guard(code, ckey, text, text_t, source, loc, key, masked_t)
    if code is not None:
        store_source(code.co_filename)


class TraceHandler(logging.Handler):
    """Receives every structured-trace record Dynamo emits."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.on = True
        self.version = None  # None: not yet; True: the torch_version artifact is in

    def emit(self, record):
        if self.on:
            _held(self._emit, record)

    def _emit(self, record):
        self._record(record)
        if self.version is None:
            self._torch_version()
            self.version = True

    def _torch_version(self):
        """TORCH_TRACE's file holds, after its first record, the
        torch_version artifact its handler logs (torch/_logging/_internal.py,
        _log_torch_version): the same record, for this trace only."""
        try:
            internal = sys.modules.get("torch._logging._internal")
            if internal is None or not hasattr(internal, "_log_torch_version"):
                return  # a torch that logs none
            from torch._environment import is_fbcode
            from torch._utils_internal import get_torch_source_version

            payload = json.dumps({"pytorch_version": torch.__version__,
                                  "commit": get_torch_source_version(),
                                  "oss": not is_fbcode()}, indent=0)
            md = {"artifact": {"name": "torch_version", "encoding": "json"},
                  "has_payload": hashlib.md5(payload.encode("utf-8"),
                                             usedforsecurity=False).hexdigest()}
            self._record(types.SimpleNamespace(metadata=md, payload=payload))
        except Exception as exc:
            record_error("structured trace: torch_version", exc)

    def _record(self, record):
        try:
            md = getattr(record, "metadata", None)
            if not isinstance(md, dict) or not md:
                return
            payload = getattr(record, "payload", None)
            name = next(iter(md))
            body = md[name]
            if (self.version and name == "artifact" and isinstance(body, dict)
                    and body.get("name") == "torch_version"):
                return  # TORCH_TRACE's own handler logging it too: in already
            if name == "str" and isinstance(body, (list, tuple)) and len(body) == 2:
                # Dynamo interns every file name of its user stacks: the
                # files it traced, inlined functions' included.
                if isinstance(body[0], str):
                    store_source(body[0])
            if name == "artifact" and isinstance(body, dict):
                name = "artifact:%s" % body.get("name")
            cid = None
            if md.get("frame_id") is not None:
                cid = "%s/%s" % (md.get("frame_id"), md.get("frame_compile_id"))
            elif md.get("compiled_autograd_id") is not None:
                cid = "!%s" % md.get("compiled_autograd_id")
            if name == "dynamo_cpp_guards_str" and payload:
                _guards_from_trace(cid, payload)
            # Large metadata (compilation_metrics carries ~40 KB) goes into the
            # compressed blob, as its first line, instead of the strings table.
            mdj = _dumps(md)
            if len(mdj) > 128:
                payload = mdj + "\n" + (payload or "")
                mdj = _dumps({"metadata_in_blob": True, "name": name})
            emit("trace", cid=cid, num=md.get("attempt", 0) or 0, text=name,
                 data_json=mdj, payload=payload,
                 key="trace %s %s" % (name, cid))
        except Exception as exc:
            self.on = False
            _hooks["structured_trace"] = "disabled after an error"
            record_error("structured trace", exc)


_trace_handler = None
_trace_log = logging.getLogger("torch.__trace")


def attach_trace_handler():
    """(Re)attaches the handler: torch._logging.set_logs() clears handlers."""
    global _trace_handler
    log = logging.getLogger("torch.__trace")
    if _trace_handler is None:
        _trace_handler = TraceHandler()
    if _trace_handler not in log.handlers:
        log.setLevel(logging.DEBUG)
        log.propagate = False
        # First in the list: torch's LazyTraceHandler removes itself from
        # the list while the first record is handed round when TORCH_TRACE is
        # unset, and a handler after it misses that record (the "dynamo"
        # begin event of the first compile).
        # logging's module lock, which addHandler takes (3.10 to 3.13).
        lock = getattr(logging, "_lock", None)
        if lock is None:
            log.addHandler(_trace_handler)
        else:
            with lock:
                log.handlers.insert(0, _trace_handler)


def hold_structured_trace():
    """torch builds each structured-trace record (its metadata, a graph's
    text, a stack) only when the torch.__trace logger has a handler: with
    dynrec's attached, that is the recorder's work done inside torch's
    trace_structured.  It runs with the collector held (around.c), so its
    allocations do not bring the program's collections forward: a full
    collection on a process holding a model costs ~140 ms, and on a
    program near that threshold the records alone added one
    (bench/gc_clock.sh).  Set in torch._logging, where modules imported
    later bind it, and in every loaded torch module that bound it already."""
    internal = sys.modules.get("torch._logging._internal")
    orig = getattr(internal, "trace_structured", None)
    if orig is None:
        _hooks["trace_structured"] = "missing: torch._logging._internal.trace_structured"
        return
    if isinstance(orig, _around):
        return
    held = _around(orig, None, None, held=True)
    internal.trace_structured = held
    for name, module in list(sys.modules.items()):
        if (module is not None and name.startswith("torch")
                and _capture.module_attr(module, "trace_structured") is orig):
            module.trace_structured = held
    _hooks["trace_structured"] = "active"


def _wrap_guard_code(orig):
    """CheckFunctionManager.__init__: tells the guard events their frame."""

    def before(self, f_code, *args, **kwargs):
        prev = getattr(_tls, "guard_code", None)
        _tls.guard_code = f_code
        return (prev, f_code, args[0] if args else kwargs.get("output_graph"))

    def after(state, result, exc):
        _tls.guard_code = state[0]
        if exc is None and state[2] is not None and _capture._cap_guard.on:
            # dynrec replay: the other modules' state these guards read.
            _capture._cap_guard(_capture.capture_module_state, state[1], state[2])
            st = getattr(_tls, "compiles", {}).get(compile_id_now())
            if st is not None:
                st["state"] = True

    return _around(orig, before, after)


# ---- installing ----------------------------------------------------------------


_overrides = bool((getattr(_dynrec, "rerun", None) or {}).get("overrides"))


def _apply_overrides():
    """dynrec rerun --set: the overrides win over the script's own settings,
    so they are set again when Dynamo starts and before each compile."""
    try:
        _dynrec.apply_overrides("", torch._dynamo.config)  # adapter.py
        _dynrec.apply_overrides("fx.", sys.modules.get("torch.fx.experimental._config"))
        if any(n.startswith("inductor.") for n, _ in _dynrec.rerun["overrides"]):
            __import__("torch._inductor.config")
            _dynrec.apply_overrides("inductor.", sys.modules["torch._inductor.config"])
    except Exception as exc:
        record_error("--set overrides", exc)


def install():
    if _overrides:
        _apply_overrides()
    try:
        global _config_last
        _config_last = _config_snapshot()
        emit("config", num=len(_config_last), data=_config_last, text="initial",
             key="config initial")
    except Exception as exc:
        record_error("config snapshot", exc)
    hook("callback", _cf.CatchErrorsWrapper, "__call__", _wrap_callback)
    hook("compile", _cf, "_compile", _wrap_compile)
    hook("get_guard_fail_reason", _guards_mod, "get_guard_fail_reason",
         _wrap_get_guard_fail_reason)
    hook("recompilation_reasons", _cf, "get_and_maybe_log_recompilation_reasons",
         _wrap_recompilation_reasons)
    import torch._dynamo.symbolic_convert as _sc

    hook("log_graph_break", _sc.InstructionTranslatorBase, "log_graph_break",
         _wrap_log_graph_break)
    hook("call_user_compiler", _og.OutputGraph, "call_user_compiler",
         _wrap_call_user_compiler)
    hook("guard_code", _guards_mod.CheckFunctionManager, "__init__", _wrap_guard_code)
    hook("transform_code_object", _cf, "transform_code_object", _wrap_transform_code_object)
    hook("fail_and_restart_analysis", _sc.SpeculationEntry, "fail_and_restart_analysis",
         _wrap_fail_and_restart)
    try:
        hold_structured_trace()
    except Exception as exc:
        _hooks["trace_structured"] = "failed: %s" % exc
    try:
        attach_trace_handler()
        _hooks["structured_trace"] = "active"
    except Exception as exc:
        _hooks["structured_trace"] = "failed: %s" % exc
    try:
        _spec.install_speculation()
    except Exception as exc:
        record_error("speculation hooks", exc)
    write_hook_states()


def begin_session():
    """A later session of an in-process recording (dynrec.start): what the
    first one recorded as this file loaded, for the new trace."""
    global _stored_files, _config_last, _dist_unseen
    _dist_unseen = True
    _stored_files = {os.path.realpath(sys.argv[0])} if sys.argv and sys.argv[0] else set()
    _source_names.clear()
    _capture.begin_session()
    try:
        _config_last = _config_snapshot()
        emit("config", num=len(_config_last), data=_config_last, text="initial",
             key="config initial")
    except Exception as exc:
        record_error("config snapshot", exc)
    write_hook_states()


def write_hook_states():
    """meta hook.NAME = active / missing / disabled after an error; written at
    install and again at exit, so a hook that switched itself off shows.
    (And dist.backend, if no compile saw the process group.)"""
    if _dist_unseen:
        _dist_meta()
    for name, state in sorted(_hooks.items()):
        _dynrec.meta("hook." + name, state)
