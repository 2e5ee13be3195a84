"""Compiles inside torch.func transforms: vmap (with a recompile on other
in_dims), grad, functionalize, grad's nesting around a compiled call, and
vmap over grad, and grad over a global that requires grad.  Dynamo guards on the transform stack and traces the
tensors wrapped at its levels: the replay enters the same transforms and
wraps the tensors again."""
import torch
from torch._functorch.eager_transforms import grad_increment_nesting


def fn(x, y):
    return (x * y).sin() + 1


c = torch.compile(fn, backend="eager")
print(tuple(torch.vmap(c)(torch.ones(3, 5), torch.ones(3, 5)).shape))
print(tuple(torch.vmap(c, in_dims=(0, None))(torch.ones(3, 5), torch.ones(5)).shape))


def g(x):
    return (x.cos() * 2).sum()


cg = torch.compile(g, backend="eager")
print(torch.func.grad(cg)(torch.ones(4)).tolist())
print(tuple(torch.vmap(torch.func.grad(cg))(torch.ones(2, 4)).shape))


def h(x):
    y = x.view(-1)
    y.add_(1)
    return x * 2


print(torch.func.functionalize(torch.compile(h, backend="eager"))(torch.ones(2, 2)).tolist())
with grad_increment_nesting():
    print(torch._C._functorch.get_unwrapped(c(torch.ones(2), torch.ones(2))).tolist())

# A tensor that requires grad, made outside the transform and read inside
# it: the replay makes it outside the transforms too.
W = torch.full((3,), 0.5, requires_grad=True)


def k(x):
    return (x * W).sin().sum()


print(torch.func.grad(torch.compile(k, backend="eager"))(torch.ones(3)).tolist())
