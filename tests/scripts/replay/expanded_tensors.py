# Expanded tensors as inputs (a stride of 0 over a dimension of more than
# one, as a sum's backward hands its grad_output): one element per
# expanded dimension holds the data.
import torch


@torch.compile(backend="eager")
def f(x, g, h):
    return x.sum() + g * h


g = torch.arange(3.0).expand(4, 3)
h = torch.tensor([[2.0], [3.0]]).expand(2, 5)[:, None, :2]
print(f(torch.ones(3), g, torch.ones(1).expand(4, 3)))
print(f(torch.ones(3), torch.ones(2, 1, 2), h))
