"""functools.partial objects and a collections.defaultdict as a frame's
arguments and globals, the patterns of PyTorch's test_functions: partials
of a user function, of a torch function with keywords, of an nn.Module
and of lambdas (one in a module-level statement); a partial with an
attribute; a defaultdict whose factory Dynamo calls."""
import collections
import functools

import torch


def multiply(x, y):
    return x * y


class SmallNN(torch.nn.Module):
    def forward(self, x, y):
        return x + y


clip01 = functools.partial(torch.clip, min=0.0, max=1.0)


def subtracting(b):
    return functools.partial(lambda a, b: a - b, b=b)


def fn(f0, f1, x):
    return clip01(f0(x) * f1(x))


x = torch.randn(2, 2)
cf = torch.compile(fn, backend="eager")
print(cf(functools.partial(multiply, y=3), functools.partial(multiply, y=2), x).shape)
# A recompile: another keyword value is another guard.
print(cf(functools.partial(multiply, y=4), functools.partial(multiply, y=2), x).shape)
p = functools.partial(SmallNN(), y=torch.ones(2, 2))
p.note = "tagged"
print(cf(p, subtracting(1.0), x).shape)
# A lambda of a module-level statement: found in the stored source too.
print(cf(functools.partial(lambda a, k: a + k, k=2.0), subtracting(1.0), x).shape)

dd = collections.defaultdict(list)


def g(x):
    dd["a"].append(x + 1)
    return len(dd["b"]) + x


print(torch.compile(g, backend="eager")(x).shape, sorted(dd))
