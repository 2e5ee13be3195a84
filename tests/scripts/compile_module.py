"""Compiles torch's own callables: an nn.Sequential (three sizes: a
recompile), an nn.Linear and torch.sin.  Dynamo compiles one wrapper of
torch's (wrap_inline.<locals>.inner) for all of them."""
import torch
import torch.nn as nn

seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
cm = torch.compile(seq, backend="eager")
for n in (3, 4, 5):
    cm(torch.randn(n, 4))
cl = torch.compile(nn.Linear(4, 4), backend="eager")
cl(torch.randn(2, 4))
cs = torch.compile(torch.sin, backend="eager")
print(cs(torch.zeros(3)).tolist())
