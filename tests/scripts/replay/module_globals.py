"""A module of the program that a compiled function reads an attribute of
(never a function of it: Dynamo traces none of its code, so nothing else
stores its source)."""
import torch

import helper_consts


@torch.compile(backend="eager")
def fn(x):
    return x * helper_consts.SCALE


print(fn(torch.ones(2)))
helper_consts.SCALE = 4.0
print(fn(torch.ones(2)))
