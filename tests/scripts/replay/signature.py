# An inspect.Signature handed to a compiled function: its parameters are a
# mappingproxy over an OrderedDict.
import inspect

import torch


def target(a, b=2, *, c=3):
    return a


@torch.compile(backend="eager")
def bind(sig, x):
    ba = sig.bind(x, 5)
    ba.apply_defaults()
    return ba.arguments["a"] * ba.arguments["b"]


print(bind(inspect.signature(target), torch.ones(2)))
