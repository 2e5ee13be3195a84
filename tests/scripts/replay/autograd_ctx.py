# torch.autograd.Functions as tests define them.  First one whose forward
# has a graph break: Dynamo falls back to eager for apply, and compiles
# forward (and its resume function) on their own, with the Function's ctx
# as an argument, after forward set an attribute on it and saved a tensor.
import enum
import functools

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


def aliased():
    # A Function defined in a function, called through `mult2 = Mult.apply`
    # (a method binding torch's Function.apply, a classmethod, to the
    # class), whose forward reads a function of the enclosing scope: Dynamo
    # traces the Function only when the bound method's function is the very
    # one the class holds.
    def mult1(x):
        return x.prod(dim=-1)

    class Mult(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = mult1(x)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return (grad_output * y)[:, None] / x

    mult2 = Mult.apply

    @torch.compile(backend="eager")
    def g(x):
        return mult2(x) + 1

    return g(torch.ones(2, 4, requires_grad=True))


print(aliased())


def wrapped():
    # A Function whose forward a decorator the enclosing function defines
    # wraps (functools.wraps): Dynamo traces the wrapper, whose cell holds
    # forward.
    def my_decorator(f):
        @functools.wraps(f)
        def wrapper(ctx, input, factor=1):
            return f(ctx, input, factor)

        return wrapper

    class MySin(torch.autograd.Function):
        @staticmethod
        @my_decorator
        def forward(ctx, input, multiplier=1):
            ctx.save_for_backward(input)
            ctx.factor = multiplier
            return multiplier * torch.sin(input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * ctx.factor * torch.cos(input), None

    def fn(x):
        return MySin.apply(x, factor=6)

    return torch.compile(fn, backend="eager", fullgraph=True)(torch.ones(2, requires_grad=True))


print(wrapped())


def enum_arg():
    # A member of an Enum defined beside the Function, as an argument and
    # in a cell of forward: one object (the enum's own machinery, which its
    # class statement makes, is not captured).
    class SomeEnum(enum.Enum):
        A = 0
        B = 1

    class Foo(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, e):
            if e is SomeEnum.A:
                return x.sin()
            return x.cos()

        @staticmethod
        def backward(ctx, g):
            return g

    @torch.compile(backend="eager", fullgraph=True)
    def f(x, e):
        return Foo.apply(x, e)

    return f(torch.ones(2, requires_grad=True), SomeEnum.A)


print(enum_arg())
