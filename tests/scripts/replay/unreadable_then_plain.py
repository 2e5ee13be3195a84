"""A compile with an argument whose state cannot be read (reading its
__dict__ raises), then plain compiles: the first is named not replayable
with why, and the capture of the others goes on."""
import torch


class Fragile:
    def __init__(self):
        self.v = 1

    @property
    def __dict__(self):
        raise RuntimeError("no state to read")


def inner(x, obj):
    return x.sin().sum()


def plain(x):
    return x.cos() + 1


print(torch.compile(inner, backend="eager")(torch.randn(3), Fragile()).shape)
torch.compile(plain, backend="eager")(torch.randn(3))
torch.compile(plain, backend="eager")(torch.randn(3, 2))
print("done")
