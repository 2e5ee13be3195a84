"""Backend objects, as PyTorch's own tests pass them: Dynamo's cache entries
belong to the backend object that made them, so a second CompileCounter on
the same function compiles it again (a recompile, the first object's entry
failing), and one that wraps another backend object calls that object."""
import torch
from torch._dynamo.testing import CompileCounterWithBackend, EagerAndRecordGraphs


def f(x):
    return x.cos() + 1


first = CompileCounterWithBackend("eager")
second = CompileCounterWithBackend("eager")
torch.compile(f, backend=first)(torch.randn(3))
torch.compile(f, backend=first)(torch.randn(3))
torch.compile(f, backend=second)(torch.randn(3))
graphs = EagerAndRecordGraphs()
third = CompileCounterWithBackend(graphs)
torch.compile(f, backend=third)(torch.randn(3))
print(first.frame_count, second.frame_count, third.frame_count, len(graphs.graphs))
