# A torch.autograd.Function whose forward has a graph break: Dynamo falls
# back to eager for apply, and compiles forward (and its resume function)
# on their own, with the Function's ctx as an argument, after forward set
# an attribute on it and saved a tensor.
import torch


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo, scale=2.0):
        ctx.scale = scale
        result = foo * scale
        ctx.save_for_backward(result)
        torch._dynamo.graph_break()
        ctx.extra = ctx.scale + 1
        return result + foo

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * ctx.scale, None


@torch.compile(backend="eager")
def f(x):
    return Double.apply(x, 3.0)


x = torch.ones(3, requires_grad=True)
f(x).sum().backward()
print(x.grad)
