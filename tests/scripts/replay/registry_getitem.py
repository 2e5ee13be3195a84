"""replay scenario: a registry like transformers' ACT2FN (registry_mod.py),
read by a compiled function through its module and given as an argument:
the recording never calls its __getitem__ (the count the program prints is
python's) and the replay puts back the classes it holds, not objects; and
a class attribute of the program the guards read, set while it runs."""

import torch

import registry_mod


class Flags:
    scale = 1


@torch.compile(backend="eager")
def through_module(x):
    return registry_mod.ACTS["plus"](x) * Flags.scale


@torch.compile(backend="eager")
def through_argument(x, acts):
    return acts["ident"](x) - 1


print(through_module(torch.ones(2)).tolist())
Flags.scale = 3
print(through_module(torch.ones(2)).tolist())
print(through_argument(torch.ones(2), registry_mod.ACTS).tolist())
print("made", registry_mod.Instantiator.made)
