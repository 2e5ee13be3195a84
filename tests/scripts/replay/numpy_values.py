"""numpy scalars and arrays passed to a compiled frame: Dynamo specializes
on a numpy scalar's value (a recompile when it changes) and traces an array
as a tensor."""
import numpy as np
import torch


def f(x, s, a):
    return x * s, a + 1


cf = torch.compile(f, backend="eager")
a = np.arange(6, dtype=np.float32).reshape(2, 3)
cf(torch.ones(3), np.int64(3), a)
cf(torch.ones(3), np.int64(4), a)
cf(torch.ones(3), np.float16(0.5), a)
print("done")
