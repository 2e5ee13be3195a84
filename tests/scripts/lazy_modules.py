"""lazy_modules.py -- modules with a module-level __getattr__ (PEP 562) are
never asked for a name by the recorder.

torch.utils.mkldnn builds TorchScript classes (and warns) when asked for a
name it lacks; transformers' lazy modules import a model.  Two such modules
are made here before torch is imported: one named like a torch module, one
that a function passed to a compiled function claims as its __module__.
Each records what it was asked for; the list printed at the end is the
program's own lookups only, under python and under dynrec run alike."""

import sys
import types

asked = []


def lazy(name):
    m = types.ModuleType(name)

    def __getattr__(attr):
        if not attr.startswith("__"):
            asked.append((name, attr))
        raise AttributeError(attr)

    m.__getattr__ = __getattr__
    sys.modules[name] = m
    return m


lazy("torchlazy_ext")
lazy("lazyutil")

import torch  # noqa: E402


def scale(x):
    return x * 2


scale.__module__ = "lazyutil"
scale.__qualname__ = "scale_by_two"


@torch.compile(backend="eager")
def f(x, fn):
    return fn(x) + 1


print(f(torch.ones(3), scale).tolist())
print(f(torch.ones(3, 2), scale).shape)
print("lazy module lookups:", asked)
