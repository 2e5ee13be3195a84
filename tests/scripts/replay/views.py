"""Tensor views as inputs: views of tensors that require grad (made with
grad mode on, so in-place ops on them are allowed), a detached view, slices
and transposes of one base, and torch's map over each, whose tracing writes
into its inputs' views; then map called outside a compile (pytree's
_LEAF_SPEC in a closure); a view of a tensor that is not a leaf."""
import torch
from functorch.experimental import control_flow


def inner(x):
    return x.sin(), x.cos() + 1, x.sin().view(-1)


base = torch.randn(4, 4)
inputs = [
    torch.randn(3, 4, 5, requires_grad=True).permute((2, 0, 1)),
    torch.randn(3, 4, 5, requires_grad=True).narrow(1, 1, 2),
    torch.randn(3, 4, 5, requires_grad=True).detach(),
    base.T,
    base[1::3, 1::2].T,
]
for x in inputs:
    out = torch.compile(control_flow.map, backend="eager", fullgraph=True)(inner, x)
    print(tuple(out[0].shape), out[0].requires_grad)


def f(x):
    return (x * 2).sum()


a = torch.randn(4, 4, requires_grad=True)
print(torch.compile(f, backend="eager")(a.T[1:]).requires_grad)


# map called outside a compile compiles its own run_flattened_map, whose
# closure holds pytree's spec singleton _LEAF_SPEC: Dynamo guards it once,
# through the closure, when the replay's is the same object.
def g(x, y):
    def body(x, y):
        return torch.sin(x + y)

    return control_flow.map(body, x, y.size(0))


x, y = torch.randn(3, 1), torch.randn(3, 1)
print(torch.allclose(torch.compile(g, backend="eager", fullgraph=True)(x, y), g(x, y)))


# Views of a tensor that requires grad and is not a leaf (a matmul's
# output), with that tensor as an argument too (PyTorch's
# test_modules.test_backward_hooks): the base is made with grad mode on.
def h(a, b):
    return (a.relu() * b).sum()


m = torch.randn(20, 10) @ torch.randn(10, 10, requires_grad=True)
print(torch.compile(h, backend="eager")(m.view(20, 10), m).requires_grad)
