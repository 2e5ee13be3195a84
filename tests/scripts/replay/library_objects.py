import torch

lib = torch.library.Library("dynrec_lib", "DEF")
lib.define("scale2(Tensor x, float s) -> Tensor")
lib.define("plus(Tensor x) -> Tensor", tags=(torch.Tag.pt2_compliant_tag,))


def scale2_kernel(x, s):
    return x * s


lib.impl("scale2", scale2_kernel, "CPU")
lib.impl("plus", torch.sin, "CompositeImplicitAutograd")


@torch.library.register_fake("dynrec_lib::scale2", lib=lib)
def _(x, s):
    return torch.empty_like(x)


frag = torch.library.Library("dynrec_lib", "FRAGMENT")
torch.library.define("dynrec_lib::shift", "(Tensor x) -> Tensor", lib=frag)


@torch.library.impl("dynrec_lib::shift", "CompositeImplicitAutograd", lib=frag)
def shift(x):
    return x + 1


@torch.compile(backend="eager", fullgraph=True)
def f(x):
    return torch.ops.dynrec_lib.scale2(x, 2.0) + torch.ops.dynrec_lib.plus(x) + torch.ops.dynrec_lib.shift(x)


print(f(torch.ones(3)))
print(f(torch.ones(4)))
