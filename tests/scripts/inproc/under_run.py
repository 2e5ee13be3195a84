"""dynrec.record under `dynrec run`: the run records everything already."""
import torch

import dynrec


@torch.compile(backend="eager")
def f(x):
    return x + 1


with dynrec.record("inner.db") as path:
    f(torch.ones(2))
print("inner", path, dynrec.recording())
