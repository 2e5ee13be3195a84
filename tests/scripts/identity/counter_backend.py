"""torch._dynamo.testing.CompileCounter, the backend of PyTorch's own tests:
its repr holds the object's address."""
import torch
from torch._dynamo.testing import CompileCounter


def f(x, n):
    return x * n + 1


cnt = CompileCounter()
cf = torch.compile(f, backend=cnt)
for n in (2, 3):
    cf(torch.ones(3), n)
print("frames", cnt.frame_count, "ops", cnt.op_count)
