"""torch.compile(..., recompile_limit=2), as PyTorch's recompile tests pass
it: Dynamo patches config.recompile_limit around each of the region's
compiles, so the third shape hits the limit (an error, then eager) and the
config changes at the first compile, not at the start."""
import torch


def f(x):
    return x.sin()


c = torch.compile(f, backend="eager", dynamic=False, recompile_limit=2)
for i in range(4):
    c(torch.randn(i + 1))
print("done")
