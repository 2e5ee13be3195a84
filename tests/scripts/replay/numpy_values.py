"""numpy scalars and arrays passed to a compiled frame: Dynamo specializes
on a numpy scalar's value (a recompile when it changes) and traces an array
as a tensor; numpy dtypes and finfo/iinfo objects as arguments (a dtype's
change recompiles)."""
import numpy as np
import torch


def f(x, s, a):
    return x * s, a + 1


cf = torch.compile(f, backend="eager")
a = np.arange(6, dtype=np.float32).reshape(2, 3)
cf(torch.ones(3), np.int64(3), a)
cf(torch.ones(3), np.int64(4), a)
cf(torch.ones(3), np.float16(0.5), a)


def g(a, dt, info):
    return a + np.finfo(dt).max + info.max


cg = torch.compile(g, backend="eager")
cg(torch.zeros(2), np.dtype(np.float16), np.iinfo(np.int8))
cg(torch.zeros(2), np.ones(1, dtype=np.float32).dtype, np.finfo(np.float64))
print("done")
