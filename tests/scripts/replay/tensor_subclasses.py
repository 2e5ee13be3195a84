"""Tensors of the program's own subclasses of torch.Tensor with a
__torch_function__ (PyTorch's test_modules: TensorProxy, defined inside a
function), as arguments, one requiring grad, across a graph break, and one
that is not a leaf."""
import torch
import torch.nn.functional as F


def make_subclass():
    class TensorProxy(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs)

    return TensorProxy


class Scaled(torch.Tensor):
    pass


def foo(x, y):
    x = F.sigmoid(x)
    x = x.sigmoid()
    torch._dynamo.graph_break()
    return x * y


def bar(s):
    return s * 2 + 1


TensorProxy = make_subclass()
x = torch.randn(3).as_subclass(TensorProxy)
y = torch.Tensor._make_subclass(TensorProxy, torch.ones(3), True)
out = torch.compile(foo, backend="eager")(x, y)
print(type(out).__name__, tuple(out.shape))
s = torch.Tensor._make_subclass(Scaled, torch.ones(2), True) * 3  # not a leaf
print(type(torch.compile(bar, backend="eager")(s)).__name__)


# A C method descriptor as a value (what a __torch_function__ is handed as
# func): by its class, torch._C.TensorBase.
def apply(f, t):
    return f(t, 1)


print(torch.compile(apply, backend="eager")(torch.Tensor.add, torch.ones(2)))


# A C attribute of a class (a getset descriptor) and its __get__ bound to it
# (a method-wrapper), as values.
def get(g, x):
    torch.sin(x)
    return g.__get__(x)


def call(g, x):
    return g(x)


print(torch.compile(get, fullgraph=True, backend="eager")(torch.Tensor.shape, torch.ones(2, 2)))
print(torch.compile(call, backend="eager")(torch.Tensor.shape.__get__, torch.ones(2, 2)))


# A subclass of Parameter with an attribute of its own and a
# __torch_function__ (a quantized weight: diffusers' GGUFParameter,
# bitsandbytes' Params4bit), as a module's parameter the forward reads.
class QuantParameter(torch.nn.Parameter):
    def __new__(cls, data, requires_grad=False, quant_type=None):
        self = torch.Tensor._make_subclass(cls, data, requires_grad)
        self.quant_type = quant_type
        return self

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


class Quantized(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = QuantParameter(torch.randn(3, 3), quant_type="q8")

    def forward(self, x):
        if self.w.quant_type == "q8":
            x = x * 2
        return x @ self.w


print(torch.compile(Quantized(), backend="eager")(torch.ones(2, 3)).shape)
