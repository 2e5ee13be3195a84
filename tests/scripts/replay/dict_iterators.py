"""replay scenario: a dict's iterators part way through on a resume
function's stack (a graph break inside a dict comprehension, as
transformers' output capturing has: its `.0` is a dict_keyiterator), and
a values and a keys iterator given to a compiled function."""

import torch


def probe(k):
    torch._dynamo.graph_break()
    return k * 2


@torch.compile(backend="eager")
def comprehension(x, d):
    return x + sum({k: probe(v) for k, v in d.items()}.values())


@torch.compile(backend="eager")
def rest(x, it):
    return x * sum(it)


d = {"a": 1, "b": 2, "c": 3}
print(comprehension(torch.ones(2), d).tolist())
it = iter(d.values())
next(it)
print(rest(torch.ones(2), it).tolist())
keys = iter({1: "a", 2: "b", 3: "c"})
next(keys)
print(rest(torch.ones(2), keys).tolist())
