"""A torch.Generator passed to a compiled frame (rebuilt with its device and
state), beside numpy values (numpy_values.py)."""
import torch


def f(x, g):
    return x + torch.rand(3, generator=g)


g = torch.Generator().manual_seed(7)
cf = torch.compile(f, backend="eager")
cf(torch.ones(3), g)
cf(torch.ones(3, 2)[:, 0], g)
print("done")
