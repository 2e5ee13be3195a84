"""dynrec: record and replay PyTorch Dynamo (torch.compile).

Two ways to record:

- ``dynrec run script.py`` (or ``python -m dynrec run script.py``) records a
  whole run; the tool is one C binary shipped inside this package
  (``dynrec/_bin``, see :func:`binary`).
- In the running interpreter, with the recorder loaded as an extension
  module (``dynrec._dynrec``)::

      import dynrec
      with dynrec.record("t.db"):
          model(x)

  or ``dynrec.start("t.db")`` ... ``dynrec.stop()``.  The trace is the one
  ``dynrec run`` writes, for the code run inside; every command reads it.

Under ``dynrec run`` the whole run is recorded already: :func:`start`,
:func:`stop` and :func:`record` then do nothing.
"""
from __future__ import annotations

import atexit
import os
import sys
from types import ModuleType, TracebackType
from typing import Optional, Tuple, Type, Union

__all__ = ["binary", "record", "recording", "start", "stop", "RecordingError"]

PathLike = Union[str, "os.PathLike[str]"]


class RecordingError(RuntimeError):
    """dynrec cannot record here (a session is running, or the recorder is
    not built for this interpreter)."""


def binary() -> str:
    """The path of the dynrec binary this package carries."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "dynrec")


_atexit_registered = False


def _recorder() -> Optional[ModuleType]:
    """The in-process recorder, or None under `dynrec run` (whose built-in
    _dynrec records the whole process already)."""
    mod = sys.modules.get("_dynrec")
    if mod is not None and not getattr(mod, "in_process", 0):
        return None
    try:
        from dynrec import _dynrec as ext
    except ImportError as exc:
        raise RecordingError(
            "dynrec: the in-process recorder is not built for this Python (%s): "
            "reinstall dynrec with this interpreter (pip install --force-reinstall dynrec)"
            % exc) from None
    sys.modules.setdefault("_dynrec", ext)
    return ext


def _main() -> Tuple[Optional[str], bool]:
    """The main script, or (in a notebook kernel, `python -m`) the main
    module's name: what the trace names as the program (meta script or
    module), for `dynrec replay` and `repro`."""
    main = sys.modules.get("__main__")
    f = getattr(main, "__file__", None)
    if isinstance(f, str) and os.path.isfile(f) and not getattr(main, "__spec__", None):
        return os.path.abspath(f), False
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", None)
    if isinstance(name, str) and name:
        return name, True
    if isinstance(f, str) and os.path.isfile(f):
        return os.path.abspath(f), False
    return "__main__", True  # IPython's user namespace: its cells are the sources


def start(path: Optional[PathLike] = None, *, quiet: bool = True,
          capture_values: int = 4096, overwrite: bool = True) -> Optional[str]:
    """Begin recording Dynamo into the trace at ``path``.

    Args:
        path: the trace file to write.  ``None`` picks a fresh
            ``<script>-YYYYmmdd-HHMMSS.db`` in the current directory; a
            directory gets that name inside it.  In a torchrun job of more
            than one rank the name gets ``-rankN`` before ``.db``.
        quiet: when False, ``stop()`` prints "dynrec: trace written to ..."
            on stderr, as ``dynrec run`` does.
        capture_values: bytes of tensor data kept per captured tensor
            (``dynrec run --capture-values``); 0 keeps metadata only.
        overwrite: replace an existing file at ``path`` (False: raise
            OSError instead).

    Returns:
        The trace's path, or None under ``dynrec run`` (already recording).

    Raises:
        RecordingError: a session is recording already, or the recorder is
            not built for this interpreter.
        OSError: the trace cannot be created.

    What Dynamo compiled before ``start`` stays out of the trace; its meta
    says how many compiles there were (``inprocess.compiles_before``).
    """
    global _atexit_registered
    rec = _recorder()
    if rec is None:
        return None
    if rec.recording() is not None:
        raise RecordingError("dynrec is recording already (to %s); call dynrec.stop() first"
                             % rec.recording())
    if not isinstance(capture_values, int) or capture_values < 0:
        raise ValueError("capture_values must be an int >= 0")
    main, is_module = _main()
    argv = [str(a) for a in sys.argv[1:]]
    command = [str(a) for a in getattr(sys, "orig_argv", sys.argv)]
    trace = rec.start(None if path is None else os.fspath(path), main, argv, command,
                      sys.executable or None, bool(quiet), capture_values, bool(overwrite),
                      is_module)
    if not _atexit_registered:
        atexit.register(_stop_at_exit)
        _atexit_registered = True
    return str(trace)


def stop(exit_status: int = 0) -> Optional[str]:
    """End the recording and close the trace.

    Args:
        exit_status: stored as the run's exit status (``record()`` passes 1
            when its block raised).

    Returns:
        The closed trace's path, or None when nothing was recording.
    """
    rec = _recorder()
    if rec is None:
        return None
    path = rec.recording()
    if path is None:
        return None
    rec.stop(int(exit_status))
    return str(path)


def recording() -> Optional[str]:
    """The path of the trace being written now, or None."""
    mod = sys.modules.get("_dynrec")
    if mod is None or not getattr(mod, "in_process", 0):
        return None
    path = mod.recording()
    return None if path is None else str(path)


def _stop_at_exit() -> None:
    try:
        stop(0)
    except Exception:
        pass


class record:
    """``with dynrec.record("t.db") as path:`` records the block.

    Args:
        path: the trace file to write; ``None`` picks a fresh
            ``<script>-YYYYmmdd-HHMMSS.db`` in the current directory, and a
            directory gets that name inside it (``-rankN`` added in a
            torchrun job of more than one rank).
        quiet: when False, prints "dynrec: trace written to ..." on stderr
            when the block ends.
        capture_values: bytes of tensor data kept per captured tensor
            (``dynrec run --capture-values``); 0 keeps metadata only.
        overwrite: replace an existing file at ``path`` (False: OSError).

    ``as`` gives the trace's path (None under ``dynrec run``, which records
    the whole run already).  The trace is closed when the block ends, with
    exit status 1 if the block raised; the exception goes on unchanged.
    Raises RecordingError when a recording is running already, OSError when
    the trace cannot be created.
    """

    def __init__(self, path: Optional[PathLike] = None, *, quiet: bool = True,
                 capture_values: int = 4096, overwrite: bool = True) -> None:
        self.path = path
        self.quiet = quiet
        self.capture_values = capture_values
        self.overwrite = overwrite
        self.trace: Optional[str] = None

    def __enter__(self) -> Optional[str]:
        self.trace = start(self.path, quiet=self.quiet, capture_values=self.capture_values,
                           overwrite=self.overwrite)
        return self.trace

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if self.trace is not None:
            stop(1 if exc_type is not None else 0)
