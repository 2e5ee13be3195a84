"""dynrec's Python side, run inside the recorded interpreter before the script.

Compiled into the dynrec binary and executed in the namespace of the built-in
_dynrec module, so nothing here lands in the script's __main__.  It must not
change the program: it imports nothing that is not already built in, finds no
modules, and every hook catches its own errors and records them instead.

What it does now:
- notices the first import of torch._dynamo and, before Dynamo binds it,
  wraps torch._C._dynamo.eval_frame.set_eval_frame so that dynrec's C frame
  hook sits under Dynamo's frame function exactly while Dynamo is active;
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


def _patch_set_eval_frame():
    mod = sys.modules.get("torch._C._dynamo.eval_frame")
    orig = getattr(mod, "set_eval_frame", None) if mod is not None else None
    if orig is None:
        _dynrec.meta("hook.set_eval_frame", "missing: torch._C._dynamo.eval_frame.set_eval_frame")
        return
    mod.set_eval_frame = _dynrec.wrap_set_eval_frame(orig)
    _dynrec.meta("hook.set_eval_frame", "active")


class _DynamoWatch:
    """A meta path finder that finds nothing: it only notices torch._dynamo."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch._dynamo":
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            try:
                _patch_set_eval_frame()
            except Exception as exc:
                _record_error("patching set_eval_frame", exc)
        return None


def _finish():
    try:
        states = globals().get("write_hook_states")  # from dynamo.py, once loaded
        if states is not None:
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


def _install():
    if "torch._dynamo" in sys.modules:
        _patch_set_eval_frame()
    else:
        sys.meta_path.insert(0, _DynamoWatch())
    import atexit

    atexit.register(_finish)


_install()
