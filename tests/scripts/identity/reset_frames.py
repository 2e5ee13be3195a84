import torch


def f(x):
    return x.sin() + 1


def g(x, n):
    return x.cos() * n


cf = torch.compile(f, backend="eager")
cg = torch.compile(g, backend="eager")
for round in range(2):
    cf(torch.randn(3))
    cg(torch.randn(3), 2)
    cg(torch.randn(3), 3)   # recompile: n is a constant
    torch._dynamo.reset()
cf(torch.randn(3))
print("done")
