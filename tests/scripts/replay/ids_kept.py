import torch


class Holder(torch.nn.Module):
    def forward(self, x):
        return x + 1


def fn(m, x):
    if id(m) % 1 == 0:  # Dynamo guards m by its id
        return m(x) * 2
    return x


def test_held():
    opt = torch.compile(fn, backend="eager")
    x = torch.ones(2)
    m1, m2 = Holder(), Holder()
    opt(m1, x)
    opt(m2, x)


def test_dropped():
    opt = torch.compile(fn, backend="eager")
    x = torch.ones(2)
    opt(Holder(), x)
    opt(Holder(), x)


test_held()
torch._dynamo.reset()
test_dropped()
