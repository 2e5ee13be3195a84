"""replay scenario: torch.return_types struct sequences (values, indices of
x.max(dim), x.topk(k)) held across a graph break and given to a compiled
function, and a collections.deque with a maxlen given to one."""

import collections

import torch


@torch.compile(backend="eager")
def best(x):
    result = x.max(dim=1)
    torch._dynamo.graph_break()
    return result.values + result.indices


@torch.compile(backend="eager")
def use(top, x):
    return x * top.values.sum() + top.indices.sum()


@torch.compile(backend="eager")
def window(q, x):
    q.append(x)
    return sum(q) * len(q)


x = torch.arange(12.0).reshape(3, 4)
print(best(x).tolist())
print(use(x[0].topk(2), x).tolist())
q = collections.deque([torch.ones(2), torch.ones(2)], maxlen=3)
print(window(q, torch.ones(2)).tolist(), len(q))
