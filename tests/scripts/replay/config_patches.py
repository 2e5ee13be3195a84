"""replay scenario: torch._dynamo.patch_dynamo_config and dont_skip_tracing
as decorators: the wrappers' closures hold the config patch, which changes
what Dynamo does while it traces the function (.item() in the graph)."""

import torch


@torch._dynamo.patch_dynamo_config(capture_scalar_outputs=True)
def item_of(x):
    return x.sum().item()


@torch.compile(backend="eager")
def outer(x):
    return x + item_of(x)


@torch._dynamo.dont_skip_tracing
def traced(x):
    return x * 2


print(outer(torch.ones(3)).tolist())
print(torch.compile(traced, backend="eager")(torch.ones(3)).tolist())
