"""A compiled function given a set of strings: Dynamo guards it with
EQUALS_MATCH on the set, whose text lists the strings in the order of
their hashes, which PYTHONHASHSEED changes from run to run."""

import torch


@torch.compile(backend="eager")
def fn(x, names):
    return x + len(names) if "b" in names else x


print(fn(torch.ones(2), {"alpha", "b", "gamma", "delta", "epsilon"}).tolist())
print(fn(torch.ones(2), {"alpha", "b", "zeta"}).tolist())
