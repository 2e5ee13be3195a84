"""One fx GraphModule built node by node (a parameter, torch.matmul,
operator.getitem with slices, a method with a keyword argument), compiled
itself and called on two shapes: a compile and a recompile."""
import operator

import torch

torch.manual_seed(0)
graph = torch.fx.Graph()
x = graph.placeholder("x")
w = graph.get_attr("weight")
mm = graph.call_function(torch.matmul, (x, w))
item = graph.call_function(operator.getitem, (mm, (slice(None), slice(0, 2))))
graph.output(graph.call_method("add", (item, 1.0), {"alpha": 2}))
root = torch.nn.Module()
root.weight = torch.nn.Parameter(torch.randn(3, 3))
gm = torch.fx.GraphModule(root, graph, "Built")
compiled = torch.compile(gm, backend="eager")
print(tuple(compiled(torch.randn(4, 3)).shape))
print(tuple(compiled(torch.randn(6, 3)).shape))
