"""A program whose trace holds what a bug report must not leak: it lives
under a home directory, runs with a token in a recorded environment
variable, and its compiled function compares a string argument against a
private constant (a guard on that constant, and a recompile whose guard
failure names it)."""
import os

import torch


@torch.compile(backend="eager")
def step(x, mode):
    if mode == "swordfish-42":
        return x * 2
    return x - 1


print(step(torch.ones(3), "swordfish-42").tolist())
print(step(torch.ones(3), "other-mode-99").tolist())
print(os.path.basename(__file__))
# untraced-marker: this line is never traced by Dynamo
