"""A frame Dynamo gives up on (skip_frame after a graph break): the recording
runs it eagerly, and the function it calls compiles as a frame of its own.
The replay must trace it only: running it would call inner() on the rebuilt
inputs and compile it a second time, outside its own capture."""
import torch

def inner(x):
    return x * 2 + 1

@torch.compile(backend="eager")
def outer(x):
    print("outer ran eagerly")
    torch._dynamo.skip_frame("skip this frame")
    return inner(x) - 1

print(outer(torch.ones(3)).sum().item())
