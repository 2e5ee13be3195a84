"""compile_heavy.py -- many small compiles: the Dynamo-capture benchmark's workload (a).

Several small models and functions compiled with the eager backend, inputs
of changing shapes (recompiles, then automatic dynamic shapes) and graph
breaks.  Prints one deterministic line."""

import torch
import torch.nn as nn

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.a = nn.Linear(n, 2 * n)
        self.b = nn.Linear(2 * n, n)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def with_break(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos() + 1


def branchy(x, k):
    if k % 2:
        return x * k
    return x - k


total = 0.0
for n in (4, 8, 16):
    m = torch.compile(MLP(n), backend="eager")
    for size in (2, 3, 5, 7):
        total += float(m(torch.randn(size, n)).sum().detach())
wb = torch.compile(with_break, backend="eager")
br = torch.compile(branchy, backend="eager")
for size in (3, 4, 6, 9):
    total += float(wb(torch.randn(size)).sum())
    for k in range(4):
        total += float(br(torch.randn(size), k).sum())
print(f"compile_heavy total {total:.3f}")
