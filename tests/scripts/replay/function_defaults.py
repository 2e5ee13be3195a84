"""Functions of the program whose defaults change while it runs, as
PyTorch's test_functions does it: a default tensor a compiled call mutates,
and __defaults__ / __kwdefaults__ replaced by unittest.mock.patch.object.
Dynamo guards the defaults, so each change is a recompile."""
from unittest.mock import patch

import torch


def with_default_tensor(x=torch.zeros(2, 2), *, kw_x=torch.zeros(1, 2)):
    x.add_(1)
    kw_x.add_(1)
    return x, kw_x


def scale(t, factor=2.0):
    return t * factor


@torch.compile(backend="eager")
def fn(t):
    x, kw_x = with_default_tensor()
    return scale(t) + x.sum() + kw_x.sum()


t = torch.ones(3)
print(fn(t))
print(fn(t))
with patch.object(with_default_tensor, "__defaults__", (torch.ones(3, 4),)):
    print(fn(t))
with patch.object(with_default_tensor, "__kwdefaults__", {"kw_x": torch.ones(5)}):
    print(fn(t))
with patch.object(scale, "__defaults__", (3.0,)):
    print(fn(t))
