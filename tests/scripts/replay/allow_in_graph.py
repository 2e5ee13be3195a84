"""A nested function marked with torch._dynamo.allow_in_graph, which Dynamo
puts in the graph as a call instead of tracing it (its registry holds the
function by id: the replay marks the function it makes), and a class
defined in a function marked so (an autograd.Function whose forward has a
graph break: in the graph as a call, not traced)."""
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


def run_class():
    @torch._dynamo.allow_in_graph
    class AllowInGraphFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            torch._dynamo.graph_break()
            ctx.x0 = x.size(0)
            return x * 2

        @staticmethod
        def backward(ctx, grad_out):
            return grad_out * ctx.x0

    def fn(x):
        return AllowInGraphFunc.apply(x)

    print(torch.compile(fn, backend="eager", fullgraph=True)(torch.ones(2, requires_grad=True)))


run()
run_class()
