"""A compile inside torch.func.grad, whose tensor argument is grad's
wrapper (a tensor without storage, whose data cannot be read), then plain
compiles: the first is named not replayable, and the capture of the others
goes on."""
import torch


def inner(x):
    return x.sin().sum()


def plain(x):
    return x.cos() + 1


g = torch.func.grad(torch.compile(inner, backend="eager"))
print(g(torch.randn(3)).shape)
torch.compile(plain, backend="eager")(torch.randn(3))
torch.compile(plain, backend="eager")(torch.randn(3, 2))
print("done")
