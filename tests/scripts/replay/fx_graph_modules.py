"""fx GraphModules compiled as PyTorch's own tests and compiler engineers
compile them: make_fx's (aten operators, pytree inputs, lifted
parameters), symbolic_trace's (submodules, methods, keyword arguments) and
one built node by node, const folding's; the first and the hand-built one
recompile on a new shape."""
import torch
from torch.fx.experimental.proxy_tensor import make_fx

torch.manual_seed(0)


def f(x, y):
    return torch.sin(x) + y * 2, x[0]


gm = make_fx(f)(torch.randn(3), torch.randn(3))
cf = torch.compile(gm, backend="eager")
cf(torch.randn(3), torch.randn(3))
cf(torch.randn(5), torch.randn(5))  # recompiles: the same GraphModule


def g(inputs):
    a, b = inputs["a"], inputs["b"]
    return [a.cos() @ b, a.sum(dim=0, keepdim=True)]


pt = make_fx(g)({"a": torch.randn(2, 2), "b": torch.randn(2, 2)})
torch.compile(pt, backend="eager")({"a": torch.randn(2, 2), "b": torch.randn(2, 2)})


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.register_buffer("scale", torch.tensor([0.5, 1.0, 2.0]))

    def forward(self, x):
        h = self.lin(x).relu()
        return torch.clamp(h * self.scale, min=0.1).transpose(0, 1).sum(dim=-1)


st = torch.fx.symbolic_trace(Net())
torch.compile(st, backend="eager")(torch.randn(2, 4))

# one built node by node, compiled on two shapes (its own script, which
# repro's test uses alone)
import fx_one_graph_module  # noqa: E402, F401

# const folding's GraphModule (torch.func.linearize makes one), holding the
# folded subgraph as a GraphModule of its own.
from torch.fx.experimental.const_fold import split_const_subgraphs  # noqa: E402


class Folded(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3))

    def forward(self, x):
        return x * (self.w + 1).cos()


folded = split_const_subgraphs(Folded())
print(tuple(torch.compile(folded, backend="eager")(torch.randn(3)).shape))
