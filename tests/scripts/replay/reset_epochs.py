"""replay scenario: a frame whose first compile cannot be replayed (an argument
of a type the capture does not support, a lock), then torch._dynamo.reset():
the compiles of that frame after the reset are first compiles again, and
replay."""

import threading

import torch


@torch.compile(backend="eager")
def f(x, extra):
    return x + 1 if extra is None else x - 1


print(f(torch.ones(2), threading.Lock()).tolist())
torch._dynamo.reset()
print(f(torch.ones(2), None).tolist())
print(f(torch.ones(3), None).tolist())
