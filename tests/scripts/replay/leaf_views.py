"""replay scenario: a view of a tensor that does not require grad, made a
leaf that does (h = x[:, None]; h.requires_grad = True, as Wav2Vec2's
feature encoder does), given to a compiled function."""

import torch


@torch.compile(backend="eager")
def f(h):
    return (h * 2).sum()


x = torch.randn(2, 8)
v = x[:, None]
v.requires_grad = True
f(v).backward()
print(v.grad.shape, v._is_view(), v.is_leaf)
