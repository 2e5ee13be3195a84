"""replay scenario: a bare object() sentinel a function makes, compared by
identity in a compiled function after a graph break (the resume function
gets it too)."""

import torch


def make():
    return object()


@torch.compile(backend="eager")
def pick(x, default, marker):
    y = x + 1
    torch._dynamo.graph_break()
    if default is marker:
        return y * 2
    return y


m = make()
print(pick(torch.ones(2), m, m).tolist())
