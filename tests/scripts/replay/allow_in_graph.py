"""A nested function marked with torch._dynamo.allow_in_graph, which Dynamo
puts in the graph as a call instead of tracing it (its registry holds the
function by id: the replay marks the function it makes)."""
import torch


def run():
    seen = []

    @torch._dynamo.allow_in_graph
    def check(x):
        seen.append(x.shape)
        return x

    def f(x):
        return check(x * 2) + 1

    print(torch.compile(f, backend="eager", fullgraph=True)(torch.ones(3)), len(seen))


run()
