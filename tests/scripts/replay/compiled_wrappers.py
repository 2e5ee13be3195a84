"""torch.compile's wrappers reached through the user's objects: compiled
modules in a plain list and a compiled function in an attribute, called from
a compiled frame (Dynamo traces through them).  The second length
recompiles the frame."""
import torch


class Block(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = torch.nn.Linear(n, n)

    def forward(self, x):
        return torch.relu(self.lin(x))


def scale(x):
    return x * 2


class Holder:
    def __init__(self):
        self.mods = [torch.compile(Block(4), backend="eager"),
                     torch.compile(Block(4), backend="eager")]
        self.post = torch.compile(scale, backend="eager", dynamic=False)


@torch.compile(backend="eager")
def run(h, x):
    for m in h.mods:
        x = m(x)
    return h.post(x)


torch.manual_seed(0)
h = Holder()
for n in (2, 3):
    print(n, tuple(run(h, torch.ones(n, 4)).shape))
