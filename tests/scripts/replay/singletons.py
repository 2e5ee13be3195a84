"""Module-level singletons a frame reads: a logger from logging.getLogger
(a global of the frame's module) and torch's wrap higher-order op (an
attribute of its own class's module); a member of a C++ enum torch binds
(SDPBackend.MATH, in a closure's list)."""
import logging

import torch
from torch._higher_order_ops.wrap import wrap

log = logging.getLogger("singletons")


def inner(x):
    return x.sin()


def f(x, sink):
    # Identity guards on both: the replay must rebuild the same objects.
    if sink is log:
        return wrap(inner, x) + 1
    return wrap(inner, x) - 1


cf = torch.compile(f, backend="eager")
cf(torch.ones(3), log)
cf(torch.ones(3), logging.getLogger("other"))
cf(torch.ones(4, 2), log)  # a recompile (shape): the rebuilt objects pass the other guards


def attention():
    wanted = [torch.nn.attention.SDPBackend.MATH]

    def g(x):
        with torch.nn.attention.sdpa_kernel(wanted):
            return torch.nn.functional.scaled_dot_product_attention(x, x, x)

    torch.compile(g, backend="eager", fullgraph=True)(torch.randn(2, 2, 2, 2))


attention()
print("done")
