"""random.Random objects passed to a compiled function (Random itself, a
subclass, an instance attribute beside the state), C methods bound to
objects (a Random's random, a list's append), and a graph break inside
a call (comptime.graph_break, a method of torch's): the resume function of
the outer frame is handed the continuation Dynamo made for the inner one, a
function value whose code Dynamo made."""
import random

import torch


class MyRandom(random.Random):
    pass


def fn(x, rng):
    return x + rng.randint(1, 9) + rng.random()


def draw_and_push(x, draw, push):
    push(x)
    return x + draw()


def make_outer():
    from torch._dynamo.comptime import comptime

    def outer(x):
        shape = x.size()
        comptime.graph_break()
        return x + torch.ones(shape)

    return outer


if __name__ == "__main__":
    cfn = torch.compile(fn, backend="eager")
    cfn(torch.randn(3), random.Random(12))
    r = MyRandom(5)
    r.label = "mine"
    cfn(torch.randn(3), r)
    # Dynamo's own tests run with nested graph breaks (torch/_dynamo/test_case.py).
    torch._dynamo.config.nested_graph_breaks = True
    torch.compile(make_outer(), backend="eager")(torch.randn(4))
    # C methods bound to objects: a Random's random, a list's append.
    items = []
    torch.compile(draw_and_push, backend="eager")(torch.randn(2), random.Random(3).random,
                                                  items.append)
    print("done")
