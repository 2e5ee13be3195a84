"""Inductor's freezing setting, which Dynamo reads while it traces: with it
on and grad off, a module's buffers are constants of the graph, guarded by
id, and a new buffer recompiles (PyTorch's test_modules,
test_mark_static_with_freezing); with it off again, a buffer is an input of
the graph."""
import torch


class Scale(torch.nn.Module):
    def __init__(self, buf):
        super().__init__()
        self.buf = torch.nn.Buffer(buf)

    def forward(self, x):
        return self.buf * x


def keep(gm, example_inputs):
    return gm


@torch.compile(backend=keep)
def frozen(x, mod):
    return mod(x)


@torch.compile(backend=keep)
def thawed(x, mod):
    return mod(x) + 1


def main():
    inp = torch.ones(2)
    mod = Scale(torch.ones(2, 2))
    with torch.no_grad(), torch._inductor.config.patch("freezing", True):
        print(frozen(inp, mod))
        mod.buf = torch.rand_like(mod.buf)
        print(frozen(inp, mod).shape)
    with torch.no_grad():
        print(thawed(inp, mod).shape)
        mod.buf = torch.rand_like(mod.buf)
        print(thawed(inp, mod).shape)


main()
