"""namedtuple classes made inside a function, which no module binds: one
under another name (SdpaShape = namedtuple("Sdpa_Shape", ...), as PyTorch's
test_functions makes it) reached through a closure, its instances in a
functools.partial across a graph break, and one with defaults passed as an
argument; a second call with another class of the same name recompiles."""
import functools
from collections import namedtuple

import torch


def shapes():
    SdpaShape = namedtuple("Sdpa_Shape", ["batch", "heads", "seq"])

    @torch.compile(backend="eager")
    def func(x):
        make = functools.partial(torch.ones, SdpaShape(2, 3, 4))
        y = make() + x
        torch._dynamo.graph_break()
        return y * SdpaShape(1, 1, 4).seq

    return func


print(shapes()(torch.ones(4)).shape)


def point_class():
    return namedtuple("Point", ["x", "y", "scale"], defaults=[2])


@torch.compile(backend="eager")
def scaled(p, t):
    return t * p.scale + p.x


P = point_class()
print(scaled(P(1.0, 2.0), torch.ones(2)))
print(scaled(P(3.0, 2.0, 5), torch.ones(2)))
# Another class of the same name: a guard on the type fails.
print(scaled(point_class()(1.0, 2.0), torch.ones(2)))
