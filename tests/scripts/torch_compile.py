# Imports torch and runs a tiny function through torch.compile with the
# eager backend a few times (compiled once, then served from the cache).
import torch

print("torch", torch.__version__)


def f(x):
    return torch.sin(x) * 2 + 1


cf = torch.compile(f, backend="eager")
for i in range(3):
    print(i, cf(torch.arange(4, dtype=torch.float32) + i).tolist())
