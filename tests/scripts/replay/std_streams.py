"""contextlib.redirect_stdout/redirect_stderr of the standard streams and
contextlib.suppress around a graph break (PyTorch's
test_ctx_manager.test_contextlib_suppress): the resume functions hold the
context object, which holds sys.stderr or sys.stdout; under pytest those
are its capture's own objects."""
import contextlib
import sys

import torch


def make(name):
    def fn(t):
        y = t.sin()
        if name == "suppress":
            ctx = contextlib.suppress(ValueError)
        elif name == "stdout":
            ctx = contextlib.redirect_stdout(sys.stderr)
        else:
            ctx = contextlib.redirect_stderr(sys.stdout)
        with ctx:
            y += t.cos()
        return y.tan()

    return fn


for name in ("suppress", "stdout", "stderr"):
    print(name, torch.compile(make(name), backend="eager")(torch.ones(2)))
