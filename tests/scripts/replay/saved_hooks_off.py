"""A compile inside `with torch.autograd.graph.disable_saved_tensors_hooks`
(state a compile's graph depends on): the function disables them again with
its own message, and its graph restores the outer message on exit."""
import torch


def fn(z):
    @torch.autograd.graph.disable_saved_tensors_hooks("This is not supported")
    def f(x, y):
        return x + y

    return f(torch.ones(1), torch.zeros(1)) + z


with torch.autograd.graph.disable_saved_tensors_hooks("Previously disabled message"):
    print(torch.compile(fn, backend="eager", fullgraph=True)(torch.randn(())).shape)
