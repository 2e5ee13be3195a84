import torch


@torch.library.custom_op("dynrec_test::scale", mutates_args=())
def scale(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k


@scale.register_fake
def _(x, k):
    return torch.empty_like(x)


torch.library.define("dynrec_test::twice", "(Tensor x) -> Tensor",
                     tags=(torch.Tag.pt2_compliant_tag,))


@torch.library.impl("dynrec_test::twice", "CompositeExplicitAutograd")
def _twice(x):
    return x * 2


@torch.library.register_fake("dynrec_test::twice")
def _twice_fake(x):
    return torch.empty_like(x)


@torch.compile(backend="eager", fullgraph=True)
def f(x):
    return scale(x, 3.0) + torch.ops.dynrec_test.scale(x, 2.0) + torch.ops.dynrec_test.twice(x)


print(f(torch.ones(3)))
print(f(torch.ones(4)))
