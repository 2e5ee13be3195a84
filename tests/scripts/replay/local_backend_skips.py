"""replay scenario: a backend function defined inside a function (as a
test defines one), closing over a counter it updates, that raises
SkipFrame: Dynamo skips the frame's code, so the second call compiles
nothing.  The replay calls that function itself, made from the stored
source with its cell, not an eager stand-in (which compiled the frame)."""
import torch


def fn(x, n):
    if n == 0:
        return x + 1
    return x + 2


def run():
    calls = 0

    def backend(gm, example_inputs):
        nonlocal calls
        calls += 1
        raise torch._dynamo.exc.SkipFrame("backend skip")

    opt = torch.compile(fn, backend=backend, dynamic=False)
    x = torch.ones(2)
    return opt(x, 0).tolist(), opt(x, 1).tolist(), calls


print(run())
