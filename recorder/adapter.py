"""dynrec's Python side, run inside the recorded interpreter before the script.

Compiled into the dynrec binary and executed in the namespace of the built-in
_dynrec module, so nothing here lands in the script's __main__.  It must not
change the program: it imports nothing that is not already built in, finds
no module the import system would not find itself (for the three modules it
watches it asks the same finders, in the same order, and hands the module
its own loader), and every hook catches its own errors and records them
instead.

What it does now:
- seeds Python's `random` and NumPy's global generator right after each is
  imported, with seeds the recorder chose (or, under `dynrec rerun`, the
  recorded ones): _dynrec.seeds; a script that seeds itself is unaffected;
- right after torch._dynamo.config is imported, records the config in force
  at start (a `config` event `start`), and under `dynrec rerun` first
  restores the recorded one and applies `--set` overrides (_dynrec.rerun);
- notices the first import of torch._dynamo and, before Dynamo binds it,
  wraps torch._C._dynamo.eval_frame.set_eval_frame so that dynrec's C frame
  hook sits under Dynamo's frame function exactly while Dynamo is active;
- right after torch._dynamo is imported, wraps its reset_frame_count, which
  torch._dynamo.reset() calls: an event per reset, and the epoch that
  compile ids are stored with;
- at exit (registered first, so it runs last), hands the torch version and
  the main module's file to the recorder, which then stops counting.
"""

import sys

import _dynrec


def _record_error(where, exc):
    try:
        text = "%s: %s: %s" % (where, type(exc).__name__, exc)
        _dynrec.event("recorder_error", None, None, None, 0, text, None, None,
                      "recorder_error " + where)
    except Exception:
        pass


_wrapped_set_eval_frame = None


def _patch_set_eval_frame():
    global _wrapped_set_eval_frame
    if _wrapped_set_eval_frame is not None:
        _dynrec.meta("hook.set_eval_frame", "active")
        return
    mod = sys.modules.get("torch._C._dynamo.eval_frame")
    orig = getattr(mod, "set_eval_frame", None) if mod is not None else None
    if orig is None:
        _dynrec.meta("hook.set_eval_frame", "missing: torch._C._dynamo.eval_frame.set_eval_frame")
        return
    wrapped = _wrapped_set_eval_frame = _dynrec.wrap_set_eval_frame(orig)
    mod.set_eval_frame = wrapped
    if "torch._dynamo" in sys.modules:
        # In process, after Dynamo was imported: its modules bound the
        # original by name (`from ... import set_eval_frame`, and aliases
        # such as eval_frame._maybe_set_eval_frame).  Each binding of it in
        # a torch module is replaced, whatever the name, on every version.
        for name, module in list(sys.modules.items()):
            if not name.startswith("torch") or module is None:
                continue
            try:
                names = [k for k, v in vars(module).items() if v is orig]
            except TypeError:
                continue
            for k in names:
                setattr(module, k, wrapped)
    _dynrec.meta("hook.set_eval_frame", "active")


class _HookedLoader:
    """Runs a module with its own loader, then after(module).  The loader's
    exec_module is called through _dynrec.around (around.c): no frame of
    dynrec's is in the traceback of an import that fails."""

    def __init__(self, loader, name, after):
        self.loader, self.name, self.after = loader, name, after
        self.exec_module = _dynrec.around(loader.exec_module, self._before, self._after)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def _before(self, module):
        # The module sees its own loader, never this wrapper.
        module.__loader__ = self.loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.loader
        return module

    def _after(self, module, result, exc):
        if exc is not None:
            return
        try:
            self.after(sys.modules.get(self.name, module))
        except Exception as exc:
            _record_error("after importing " + self.name, exc)

    def __getattr__(self, attr):
        return getattr(self.loader, attr)


class _ImportWatch:
    """A meta path finder that finds nothing itself.  For the modules named
    in `after` it asks the other finders and wraps the loader so that
    after[name](module) runs once the module has executed; torch._dynamo
    is only noticed (set_eval_frame must be wrapped before Dynamo binds it)."""

    def __init__(self):
        self.after = {}
        self.dynamo = True

    def find_spec(self, name, path=None, target=None):
        if name == "torch._dynamo" and self.dynamo:
            self.dynamo = False
            try:
                _patch_set_eval_frame()
            except Exception as exc:
                _record_error("patching set_eval_frame", exc)
        after = self.after.pop(name, None)
        if not self.after and not self.dynamo:
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
        if after is None:
            return None
        try:
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
            else:
                return None
            if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            spec.loader = _HookedLoader(spec.loader, name, after)
            return spec
        except Exception as exc:
            _record_error("watching the import of " + name, exc)
            return None


def _seeder(which):
    def seed(module):
        n = _dynrec.seeds.get(which)
        if n is not None:
            module.seed(n)

    return seed


def config_repr(v):
    """repr, with a set's elements sorted (their order follows the hash seed)."""
    if isinstance(v, (set, frozenset)) and v:
        try:
            inner = ", ".join(sorted(repr(x) for x in v))
        except Exception:
            return repr(v)
        return ("{%s}" if isinstance(v, set) else "frozenset({%s})") % inner
    return repr(v)


def apply_overrides(prefix, module):
    """Sets the `--set` overrides of dynrec rerun that belong to module
    (prefix "" for torch._dynamo.config, "inductor." for torch._inductor.config,
    "fx." for torch.fx.experimental._config)."""
    rerun = getattr(_dynrec, "rerun", None)
    if not rerun or module is None:
        return
    import ast

    for name, text in rerun.get("overrides", ()):
        if name.startswith(prefix) and (prefix or "." not in name):
            setattr(module, name[len(prefix):], ast.literal_eval(text))


def config_snapshot():
    """The recorded configs now, {name: config_repr(value)} (value_kinds.py
    names them)."""
    _dynrec.load_embedded("value_kinds")
    return _dynrec.value_kinds.config_snapshot(sys.modules, config_repr)


def _dynamo_config_loaded(cfg):
    """The config in force at start: under dynrec rerun the recorded one is
    restored first (values that exist here and are Python literals)."""
    import json

    rerun = getattr(_dynrec, "rerun", None)
    if rerun and rerun.get("config_start"):
        import ast

        restored, kept = [], []
        now = config_snapshot()
        for name, text in sorted(json.loads(rerun["config_start"]).items()):
            # Paths (debug_dir_root, ...) follow the directory a run is in.
            if name not in now or now[name] == text or text[:2] in ("'/", '"/'):
                continue
            try:
                module, attr = _dynrec.value_kinds.config_of(name)
                setattr(sys.modules[module], attr, ast.literal_eval(text))
                restored.append(name)
            except Exception:
                kept.append(name)
        _dynrec.meta("rerun.config_restored", ", ".join(restored))
        if kept:
            _dynrec.meta("rerun.config_not_restored", ", ".join(kept))
    snap = config_snapshot()
    global config_start_snapshot  # what capture.py compares a compile's config with
    config_start_snapshot = snap
    _dynrec.event("config", None, None, None, len(snap), "start",
                  json.dumps(snap, sort_keys=True), None, "config start")
    apply_overrides("", cfg)


# torch._dynamo.reset() restarts Dynamo's compile ids: each reset begins a
# new epoch, and the recorder stores a compile id with its epoch
# (compile_key in dynamo.py; SCHEMA.md, "Compile identity").  Counted from
# the import of torch._dynamo, before any compile, so that a replay (which
# resets before its first compile too) counts the same.
reset_epoch = 0
_reset_hooked = False


def _dynamo_loaded(dynamo):
    """torch._dynamo.reset() (torch.compiler.reset() calls it) calls the
    reset_frame_count of its module, however the caller reached reset: one
    reset event per reset, at its place in the stream."""
    orig = getattr(dynamo, "reset_frame_count", None)
    if orig is None:
        _dynrec.meta("hook.reset", "missing: torch._dynamo.reset_frame_count")
        return

    def after(state, result, exc):
        if exc is not None:
            return
        global reset_epoch
        try:
            reset_epoch += 1
            _dynrec.event("reset", None, None, None, reset_epoch, "torch._dynamo.reset", None,
                          None, "reset %d" % reset_epoch)
        except Exception as exc:
            _record_error("reset", exc)

    # around.c: no frame of dynrec's on the stack while the original runs.
    dynamo.reset_frame_count = _dynrec.around(orig, None, after)
    global _reset_hooked
    _reset_hooked = True
    _dynrec.meta("hook.reset", "active")


def _finish():
    try:
        states = getattr(getattr(_dynrec, "dynamo", None), "write_hook_states", None)
        if states is not None:  # dynamo.py, once loaded
            states()
    except Exception as exc:
        _record_error("hook states", exc)
    try:
        torch = sys.modules.get("torch")
        version = getattr(torch, "__version__", None) if torch is not None else None
        main = sys.modules.get("__main__")
        main_file = getattr(main, "__file__", None)
        _dynrec.finish(
            str(version) if version is not None else None,
            main_file if isinstance(main_file, str) else None,
        )
    except Exception as exc:
        _record_error("finishing", exc)


_in_process = bool(getattr(_dynrec, "in_process", 0))


def _before_start():
    """In process: how much Dynamo did before the session began (never
    invented as events; compile ids go on from Dynamo's own count)."""
    torch = sys.modules.get("torch")
    _dynrec.meta("inprocess.torch_imported", "1" if torch is not None else "0")
    cf = sys.modules.get("torch._dynamo.convert_frame")
    counter = getattr(cf, "FRAME_COMPILE_COUNTER", None) if cf is not None else None
    try:
        n = sum(counter.values()) if counter is not None else 0 if cf is None else None
    except Exception:
        n = None
    _dynrec.meta("inprocess.compiles_before", "unknown" if n is None else str(n))


def begin():
    """A later session of this process (in process): the per-trace records
    that the first session made as the modules loaded.  Compile ids are
    stored with the epoch counted from this session's start: the first
    torch._dynamo.reset() in it begins epoch 1, as in a replay."""
    global reset_epoch
    reset_epoch = 0
    try:
        _before_start()
        if "torch._dynamo" in sys.modules:
            _patch_set_eval_frame()
        cfg = sys.modules.get("torch._dynamo.config")
        if cfg is not None:
            _dynamo_config_loaded(cfg)
        dynamo = sys.modules.get("torch._dynamo")
        if dynamo is not None:
            _dynrec.meta("hook.reset", "active" if _reset_hooked else "missing")
        # dynamo.py's begin_session() runs as Dynamo next turns on (session.c).
    except Exception as exc:
        _record_error("starting a session", exc)


def install():
    watch = _ImportWatch()
    if _in_process:
        _before_start()
    if "torch._dynamo" in sys.modules:
        watch.dynamo = False
        _patch_set_eval_frame()
    for name, after in (("random", _seeder("random")), ("numpy.random", _seeder("numpy")),
                        ("torch._dynamo.config", _dynamo_config_loaded),
                        ("torch._dynamo", _dynamo_loaded)):
        module = sys.modules.get(name)
        if module is None:
            watch.after[name] = after
        else:
            try:
                after(module)
            except Exception as exc:
                _record_error("after importing " + name, exc)
    if watch.after or watch.dynamo:
        sys.meta_path.insert(0, watch)
    if not _in_process:  # in process, dynrec.stop() (or its atexit) ends a session
        import atexit

        atexit.register(_finish)
    if sys.version_info >= (3, 12):
        # 3.12 warns at os.fork when the process has more than one OS
        # thread; dynrec's writer is stopped for the fork (run.c).
        import os

        os.register_at_fork(before=_dynrec.fork_before, after_in_parent=_dynrec.fork_parent)
