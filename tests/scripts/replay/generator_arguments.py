# Generators not started handed to compiled functions: a module's parameters()
# (a method of torch.nn.Module), a generator function of the script with
# *args, a keyword-only argument and **kwargs, and one of a function defined
# inside a function, with a free variable.
import torch


def scale(params, f):
    return [p * f for p in params]


def count(n, *rest, start=0, **kw):
    yield from range(start, n)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    def forward(self, x, params=None):
        n = sum(1 for _ in params) if params is not None else 0
        return self.lin(x) * n


def total(xs, it):
    return sum(xs) + sum(it)


net = Net()
print(torch.compile(net, backend="eager")(torch.ones(3), net.parameters()))
print(torch.compile(scale, backend="eager")(net.parameters(), 2.0)[0].shape)
print(torch.compile(total, backend="eager")(torch.ones(2), count(4, 1, 2, start=1, z=3)))


def nested():
    k = 3

    def whoo(x, *rest, scale=2):
        yield x.sin() * scale * k
        yield x.cos()

    def fn(t, ctx):
        return t + next(ctx)

    t = torch.ones(2)
    return torch.compile(fn, backend="eager")(t, whoo(t, 1, scale=3))


print(nested())
