"""type() of a tensor inside a compiled frame: Dynamo installs torch as a
global named by its object id (G['_<id>_c0'].Tensor), which differs from
run to run."""
import torch


def f(x):
    if str(type(x)) == "<class 'torch.Tensor'>":
        return x + 1
    return x - 1


cf = torch.compile(f, backend="eager")
print(cf(torch.ones(2)))
print(cf(torch.ones(3)))
