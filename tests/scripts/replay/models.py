"""A model class in its own file, imported by uses_models.py."""

import torch

HIDDEN = 8


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(4, HIDDEN)
        self.down = torch.nn.Linear(HIDDEN, 2)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x)))


def make():
    torch.manual_seed(1)
    return Mlp()


print("models.py imported")  # main-program code: never run by a replay
