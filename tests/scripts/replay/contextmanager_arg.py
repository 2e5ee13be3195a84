"""A @contextmanager object passed to a compiled function, not yet entered
(as PyTorch's test_ctx_manager passes them): its generator is made again by
calling the generator function with the recorded arguments, which runs none
of its body."""
import contextlib

import torch


def run():
    def h(x):
        return x.cos()

    @contextlib.contextmanager
    def whoo(x, scale=1.0):
        try:
            yield h(x) * scale + 1
        finally:
            pass

    def fn(x, ctx):
        y = ctx.__enter__()
        ctx.__exit__(None, None, None)
        return x + y

    x = torch.tensor([1.0])
    print(torch.compile(fn, backend="eager")(x, whoo(x, scale=2.0)))


run()
