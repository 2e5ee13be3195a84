import numpy as np
import torch


@torch.compile(fullgraph=True, backend="eager")
def same(x):
    return x


def rows(x):
    return [r for r in x]


same(np.broadcast_to(np.arange(3), (2, 3)))  # strides (0, 1), read-only
torch.compile(rows, backend="eager")(np.arange(3)[:, None])  # strides (1, 0)
same(np.arange(6).reshape(2, 3).T)  # a transpose
