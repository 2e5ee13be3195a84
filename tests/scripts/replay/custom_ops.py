import torch


@torch.library.custom_op("dynrec_test::scale", mutates_args=())
def scale(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k


@scale.register_fake
def _(x, k):
    return torch.empty_like(x)


@torch.compile(backend="eager", fullgraph=True)
def f(x):
    return scale(x, 3.0) + torch.ops.dynrec_test.scale(x, 2.0)


print(f(torch.ones(3)))
print(f(torch.ones(4)))
