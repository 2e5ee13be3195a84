"""view_patterns.py -- one recompile of each kind the viewer has a hint for (tests/test_view.c).

by_int: an int argument (EQUALS_MATCH on n); by_global: a global read by
the function (G['SCALE']); Mode.forward: a module's training flag; by_grad:
grad mode (GLOBAL_STATE); limit: a size that changes eleven times, past the
recompile limit (8).  Automatic dynamic shapes are off, so sizes and ints
are specialised every time.
"""
import torch
import torch._dynamo

torch._dynamo.config.automatic_dynamic_shapes = False

SCALE = 2.0


@torch.compile(backend="eager")
def by_int(x, n):
    return x * n  # INT_GUARD


@torch.compile(backend="eager")
def by_global(x):
    return x * SCALE  # GLOBAL_GUARD


class Mode(torch.nn.Module):
    def forward(self, x):
        if self.training:  # TRAINING_GUARD
            return x + 1
        return x - 1


@torch.compile(backend="eager")
def by_grad(x):
    return x * 3


@torch.compile(backend="eager")
def limit(x):
    return x + 1


def main():
    x = torch.ones(3)
    for n in (1, 2):
        by_int(x, n)
    global SCALE
    for s in (2.0, 3.0):
        SCALE = s
        by_global(x)
    m = torch.compile(Mode(), backend="eager")
    m.train()
    m(x)
    m.eval()
    m(x)
    by_grad(x)
    with torch.no_grad():
        by_grad(x)
    for k in range(1, 12):
        limit(torch.ones(k))
    print("done")


main()
