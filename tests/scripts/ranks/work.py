# One test's work, as a pytest run records it: a compiled function called
# twice with one shape, and with --recompile a third time with another.
import sys

import torch


@torch.compile(backend="eager")
def f(x):
    return x * 2 + 1


f(torch.ones(4))
f(torch.ones(4))
if "--recompile" in sys.argv:
    f(torch.ones(7))
