"""A lambda an installed library made at its module level (torch's pytree
registration of torch.Size) as an argument: its code is found in the
library's own file, compiled and never run, not taken from the trace."""
import torch
import torch.fx.experimental.proxy_tensor  # noqa: F401  (registers the lambdas)
import torch.utils._pytree as pytree


@torch.compile(backend="eager")
def fn(x, flatten):
    return x * len(flatten(x.shape)[0])


print(fn(torch.ones(2, 3), pytree.SUPPORTED_NODES[torch.Size].flatten_fn))
