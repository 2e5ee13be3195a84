"""replay scenario: traceable wrapper tensor subclasses (a __torch_dispatch__
subclass whose data lives in inner tensors) as frame inputs: torch's own
TwoTensor, and one the program defines whose __tensor_flatten__ context holds
a scale; a recompile on a new inner dtype, one that requires grad, one
marked dynamic, a view of one; a module whose weight is a parameter of
that subclass with an extra_repr bound as a partial (as torchao's quantize_
leaves a Linear); jagged nested tensors (views of their values, two sharing
offsets, then new offsets: a recompile; one made under inference_mode);
one marked dynamic compiled by an aot_autograd() backend with a compiler of
the program's (AOTAutograd's tracing guards the inner sizes)."""
import functools
import types

import torch
import torch.utils._pytree as pytree
from torch._dynamo.backends.common import aot_autograd
from torch.testing._internal.two_tensor import TwoTensor


class ScaledTensor(torch.Tensor):
    @staticmethod
    def __new__(cls, data, scale):
        return torch.Tensor._make_wrapper_subclass(
            cls, data.shape, strides=data.stride(), dtype=data.dtype, device=data.device,
            requires_grad=data.requires_grad)

    def __init__(self, data, scale):
        self.data_ = data
        self.scale = scale

    def __repr__(self):
        return "ScaledTensor(%r, %r)" % (self.data_, self.scale)

    def __tensor_flatten__(self):
        return ["data_"], {"scale": self.scale}

    @staticmethod
    def __tensor_unflatten__(inner, ctx, outer_size, outer_stride):
        return ScaledTensor(inner["data_"], ctx["scale"])

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs=None):
        scale = next(a.scale for a in pytree.tree_leaves(args) if isinstance(a, ScaledTensor))
        args, kwargs = pytree.tree_map_only(ScaledTensor, lambda t: t.data_ * t.scale,
                                            (args, kwargs or {}))
        out = func(*args, **kwargs)
        return pytree.tree_map_only(torch.Tensor, lambda t: ScaledTensor(t / scale, scale),
                                    out)


def f(x, y):
    return (x * 2 + y).sin()


cf = torch.compile(f, backend="eager")
print(type(cf(TwoTensor(torch.randn(4), torch.randn(4)), torch.ones(4))).__name__)
print(type(cf(TwoTensor(torch.randn(4).double(), torch.randn(4).double()),
              torch.ones(4).double())).__name__)
g = TwoTensor(torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True))
out = torch.compile(f, backend="aot_eager")(g, torch.ones(3))
out.sum().backward()
print(g.grad is not None)
s = ScaledTensor(torch.randn(5), 3.0)
print(type(torch.compile(f, backend="aot_eager")(s, torch.ones(5))).__name__)
d = TwoTensor(torch.randn(6, 2), torch.randn(6, 2))
torch._dynamo.mark_dynamic(d, 0)
print(torch.compile(lambda t: t.cos() * t.shape[0], backend="aot_eager")(d).shape)


def _extra_repr(module, original_extra_repr=None):
    return "scaled, " + original_extra_repr()


lin = torch.nn.Linear(4, 3)
lin.weight = torch.nn.Parameter(ScaledTensor(lin.weight.detach(), 0.5), requires_grad=False)
lin.extra_repr = types.MethodType(
    functools.partial(_extra_repr, original_extra_repr=lin.extra_repr), lin)
with torch.no_grad():
    print(tuple(torch.compile(lin, backend="aot_eager")(torch.ones(2, 4)).shape))

t = TwoTensor(torch.randn(4, 3), torch.randn(4, 3))
print(tuple(torch.compile(lambda v: v * 2, backend="aot_eager")(t[1:]).shape))


def binary(nt1, nt2):
    return nt1 + nt2 * 2


offsets = torch.tensor([0, 2, 5])
nt1 = torch.nested.nested_tensor_from_jagged(torch.randn(5, 4), offsets)
nt2 = torch.nested.nested_tensor_from_jagged(torch.randn(5, 4), offsets)
cb = torch.compile(binary, backend="aot_eager")
print(cb(nt1, nt2).dim())
nt3 = torch.nested.nested_tensor([torch.randn(3, 4), torch.randn(1, 4)], layout=torch.jagged)
print(cb(nt3, nt3).dim())
with torch.inference_mode():
    nt5 = torch.nested.nested_tensor([torch.randn(2, 4), torch.randn(3, 4)], layout=torch.jagged)
print(torch.compile(lambda n: n * 2, backend="eager")(nt5).is_nested)


def fw(gm, example_inputs):
    return gm.forward


a = torch.ones(3, 4, requires_grad=True)
tt = TwoTensor(a, a.clone())
torch._dynamo.mark_dynamic(tt, 1)
aot = aot_autograd(fw_compiler=fw)
print(tuple(torch.compile(lambda t: t.clone().view(-1), backend=aot)(tt).shape))


def sine(x):
    return x.sin()


# Views of jagged nested tensors, compiled with dynamic shapes (Dynamo's
# fakification makes them again from their base, by their view ops): one
# over the dense tensor its values are a view of, a leaf view made under
# no_grad then made to require grad, a view of such a leaf view of a base
# that does not require grad, a view of a nested tensor of its own.  Each is
# compiled twice, a reset between: the second time its values hold the
# dynamic dims the first compile's run propagated to them.
ragged = torch.tensor([0, 2, 5, 9])
x = torch.nested.nested_tensor_from_jagged(torch.randn(9, 3, requires_grad=True).clone(), ragged)
y = torch.nested.nested_tensor_from_jagged(torch.randn(9, 3), ragged)
with torch.no_grad():
    leaf = x.unsqueeze(-1)
    leaf.requires_grad_(True)
    leaf_of_y = y.unsqueeze(-1)
leaf_of_y.requires_grad_(True)
for view in (x.unsqueeze(-1), leaf, leaf_of_y.unsqueeze(-1), x.clone().unsqueeze(-1)):
    for _ in range(2):
        torch._dynamo.reset()
        print(tuple(torch.compile(sine, backend="aot_eager", dynamic=True)(view).values().shape))
