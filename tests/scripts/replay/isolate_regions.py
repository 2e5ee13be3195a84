"""torch.compile(..., isolate_recompiles=True), as PyTorch's own
recompile tests use it: each call has cache entries of its own, so two
regions on one function each compile it first (never a recompile of the
other's entry), and a region recompiles against its own entries only."""
import torch

torch._dynamo.config.automatic_dynamic_shapes = False


def f(x):
    return x.sin()


a = torch.compile(f, backend="eager", dynamic=False, isolate_recompiles=True)
b = torch.compile(f, backend="eager", dynamic=False, isolate_recompiles=True)
a(torch.randn(3))
b(torch.randn(4))
a(torch.randn(5))
print("done")
